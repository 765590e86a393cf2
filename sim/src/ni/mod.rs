//! Golden model of the network interface (`ni`): transaction level, AXI
//! timing abstracted, with a sparse memory model.
//!
//! This doc is the contract the NI RTL must match transaction for
//! transaction: the same packets (bit-exact, in the same order), the same
//! memory writes, the same completions, mailbox entries, error entries,
//! counters and register values.
//!
//! # API
//! [`Ni::new`]`(params, me)`; software side [`Ni::axil_write`] /
//! [`Ni::axil_read`] (unprivileged), [`Ni::axil_write_priv`] /
//! [`Ni::axil_read_priv`], or `*_prot` with an explicit AxPROT\[0\];
//! network side [`Ni::emit_packet`] (next packet out, or `None`; or per
//! message class [`Ni::emit_response`] (class 1) and [`Ni::emit_request`]
//! (class 0)) and [`Ni::receive_packet`] / [`Ni::receive_packet_on`] (a
//! packet on its type's class / on a given arrival class; returns
//! [`RxOutcome`]); [`Ni::mem`] /
//! [`Ni::mem_mut`] (backdoor), [`Ni::counters`], [`Ni::take_writes`] (memory
//! write log); [`Packet::to_flits`] / [`Packet::from_flits`] convert to and
//! from 128-bit router flits. Cycle-level benches turn on
//! [`Ni::set_explicit_events`] and report [`Ni::write_landed`] (a data
//! packet's memory write completed) and [`Ni::packet_left`] (a packet's
//! tail flit sent); see "Explicit events" below. [`driver`] holds the register sequences software uses;
//! [`fabric`] an in-order network stub joining several NIs.
//!
//! # Parameters ([`NiParams`])
//! `channels` 1..=16 · `desc_queue_depth` 1..=1024 · `pkt_slots` 1..=64 ·
//! `mailbox_depth` 1..=4096 ·
//! `mailbox_msg_bytes` multiple of 16 in 16..=max_payload (default 64) ·
//! `cq_depth` 1..=4096 · `resp_queue_depth` 1..=255 · `read_queue_depth`
//! 1..=255 · `errq_depth` 1..=4096 · `poison_depth` 1..=64 · `windows`
//! 1..=16 · `max_payload_bytes` 16/32/64/128/256 · `addr_bits` 32..=42.
//!
//! Packetizer limit: 64 B by default — one Cortex-A53 cache line, the
//! natural unit a core fills with stores; a mailbox entry costs
//! `mailbox_msg_bytes` of RAM per slot, so a larger default would multiply
//! the mailbox RAM while larger messages are better served by RDMA
//! (zero-copy). Up to one full packet (256 B) is allowed as a parameter.
//!
//! # Register map (AXI4-Lite, 32-bit data, byte addresses; [`regs`])
//! Four kinds of 4 KiB page. Page 0 answers only privileged accesses
//! (AxPROT\[0\] = 1); the others answer any. An unmapped or unaligned
//! address, an unprivileged access to page 0, or a write to a read-only
//! register gives SLVERR with no effect (reads return 0). A read of a
//! write-only register returns 0 (OKAY). Reads never have side effects;
//! queues are popped by explicit POP writes (any data).
//!
//! Node page 0x0000 (privileged):
//! | off | name | access | meaning |
//! |---|---|---|---|
//! | 0x000 | ID | RO | 0x4E490001 |
//! | 0x004 | PARAMS0 | RO | channels\[7:0\] windows\[15:8\] max_payload/16\[23:16\] mailbox_msg/16\[31:24\] |
//! | 0x008 | PARAMS1 | RO | mailbox_depth\[15:0\] cq_depth\[31:16\] |
//! | 0x00C | PARAMS2 | RO | desc_queue_depth\[15:0\] errq_depth\[31:16\] |
//! | 0x010 | PARAMS3 | RO | pkt_slots\[7:0\] resp_queue_depth\[15:8\] read_queue_depth\[23:16\] poison_depth\[31:24\] |
//! | 0x014 | PARAMS4 | RO | addr_bits\[7:0\] |
//! | 0x020 | COORDS | RO | this node\[21:0\] |
//! | 0x024 | CONTROL | RW | bit 0 TX_ENABLE (reset 1): 0 stops channel (request) traffic; responses and read service continue |
//! | 0x028 | STATUS | R/W1C | sticky: 0 RX_ERROR, 1 ERRQ_OVERFLOW, 2 TRACK_LOST, 3 HDR_CORRECTED, 4 AXI_ERROR; live (RO): 8 CQ_NONEMPTY, 9 MB_NONEMPTY, 10 ERRQ_NONEMPTY |
//! | 0x02C | MBOX_CTRL | RW | PDID\[15:0\], bit 16 OPEN (accept any PDID); reset 0 |
//! | 0x030 | IRQ_ENABLE | RW | one enable per STATUS bit (bits 0–4, 8–10; the others read 0); the `irq` output is high while STATUS & IRQ_ENABLE ≠ 0 (level, registered: one cycle after the state); reset 0 |
//! | 0x040+4i | counters | RO | i = 0 TX_PACKETS, 1 RX_PACKETS, 2 RX_REJECTED, 3 HDR_CORRECTED, 4 MB_FULL_NACKS, 5 MB_RETRIES, 6 MB_DENIED, 7 RX_DATA_BYTES, 8 TX_PAYLOAD_BYTES, 9 RD_BUSY_NACKS, 10 RD_SLVERR, 11 RD_DECERR, 12 WR_SLVERR, 13 WR_DECERR (32-bit wrapping; see "AXI4 error responses") |
//! | 0x080+4r | REJ\[r\] | RO | rejections with reason code r = 1..=11 |
//! | 0x0C0 | ERRQ_COUNT | RO | error entries queued |
//! | 0x0C4..0x0D4 | ERRQ_W0..W4 | RO | head entry (0 when empty), see [`errors::ErrorEntry::words`] |
//! | 0x0D8 | ERRQ_POP | W | pop |
//! | 0x100+4c | CH_PDID\[c\] | RW | channel c's PDID\[15:0\], reset 0 |
//! | 0x200+0x20w | WIN\[w\] | RW | +0 BASE_LO, +4 BASE_HI\[9:0\], +8 SIZE_LO, +0xC SIZE_HI\[10:0\], +0x10 CTRL: PDID\[15:0\], bit 31 ENABLE; reset 0 (disabled) |
//!
//! Completion-queue page 0x1000: 0x000 CQ_COUNT (RO), 0x004..0x00C
//! CQ_W0..W2 (RO, head entry, 0 when empty: W0 = kind\[3:0\] status\[7:4\]
//! reason\[11:8\] txid\[29:16\], W1 = peer coordinates, W2 = PDID), 0x010
//! CQ_POP (W).
//!
//! Mailbox page 0x2000: 0x000 MB_COUNT, 0x004 MB_LEN (bytes), 0x008 MB_SRC,
//! 0x00C MB_PDID (RO, head message, 0 when empty), 0x010 MB_POP (W),
//! 0x100 + 4i MB_DATA\[i\] (RO, i < mailbox_msg_bytes/4, bytes 4i..4i+3
//! little-endian, bytes past MB_LEN read 0).
//!
//! Channel page 0x3000 + 0x1000·c:
//! | off | name | access | meaning |
//! |---|---|---|---|
//! | 0x000 | CH_STATUS | RO | free descriptor slots\[15:0\], free message slots\[23:16\], bit 24 RDMA_BUSY (descriptors queued), bit 25 PKT_PENDING (messages queued or unacknowledged) |
//! | 0x004 | CH_PDID | RO | the channel's PDID; a write is SLVERR and latches CH_ERR = PDID_WRITE — a user channel cannot change its PDID |
//! | 0x008 | CH_ERR | RW | last error code; any write clears it |
//! | 0x010..0x028 | DESC_* | RW | staging: LADDR_LO, LADDR_HI\[9:0\], RADDR_LO, RADDR_HI\[9:0\], LEN (1..=2^32-1), DEST\[21:0\], CTRL = op\[1:0\] (0 write, 1 read) notify\[4\] txid\[29:16\]; other bits read 0 |
//! | 0x02C | DOORBELL | W | queue the staged descriptor; SLVERR + CH_ERR when refused |
//! | 0x040 | PKT_DEST | RW | message destination\[21:0\] |
//! | 0x044 | PKT_SEND | W | send window bytes 0..len, len = data\[8:0\]; SLVERR + CH_ERR when refused |
//! | 0x100+4i | PKT_DATA\[i\] | RW | packetizer window, i < mailbox_msg_bytes/4, little-endian |
//!
//! CH_ERR codes ([`regs::ChError`]), checked in this order — DOORBELL: 1
//! QUEUE_FULL, 4 BAD_OP, 2 BAD_LEN (0), 3 BAD_ADDR (local + len > 2^addr_bits
//! or remote + len > 2^42); PKT_SEND: 6 PKT_BAD_LEN (0 or > mailbox_msg_bytes),
//! 5 PKT_FULL (no free slot); asynchronous: 7 MSG_DENIED (a message was
//! refused for good); 8 PDID_WRITE. AXI4-Lite write strobes are assumed all
//! ones.
//!
//! Reset: every queue empty, counters 0, TX_ENABLE 1, all other registers
//! 0 (windows disabled, PDIDs 0, MBOX_CTRL 0, staging, PKT_DEST and
//! packetizer windows 0), round-robin pointer at channel 0.
//!
//! # Codes
//! - Reject reasons ([`RejectReason`], ERRQ W0\[3:0\], REJ\[r\], Nack
//!   flags): 1 HEADER_ECC, 2 HEADER_TYPE, 3 FOOTER_CRC, 4 FORMAT,
//!   5 MISROUTED, 6 PAYLOAD_CRC, 7 WINDOW, 8 PDID, 9 STALE, 10 UNSUPPORTED,
//!   11 WRONG_CLASS. Nack flags may also be 12 READ_BUSY
//!   ([`rdma_rx::NACK_READ_BUSY`] = the largest reason code + 1: a read
//!   request refused because the read queue was full; not an error).
//! - Message classes ([`crate::packet::header::PacketType::class`]):
//!   class 1 = the control responses RdmaCompletion, Ack, Nack, MailboxAck,
//!   MailboxNack; class 0 = everything else (RdmaWrite, RdmaReadReq,
//!   Mailbox, RdmaReadResp). The network keeps the classes on separate VCs
//!   (class of VC v = v / vcs_per_class); a packet on the other class's VC
//!   is rejected WRONG_CLASS.
//! - Completion kinds ([`CqKind`]): 1 WRITE_IN (an RDMA write landed here),
//!   2 READ_DONE (a read this node asked for landed here, or was refused),
//!   3 NOTIFY (data this node sent — a write, or the data of a read it
//!   served — landed at the peer, whose transfer had notify set).
//! - Completion status ([`CqStatus`]): 0 OK, 1 PACKET_REJECTED, 2 UNTRACKED,
//!   3 REMOTE_DENIED, 4 FAILED (allreduce), 5 MEM_ERROR (the last packet's
//!   memory write was answered SLVERR / DECERR).
//!
//! # Packets ([`wire`], `crate::packet`)
//! Header, `ceil(size/16)` payload words (payload byte i = byte i%16 of word
//! i/16, little-endian; padding 0), footer. Every packet the NI emits has
//! `fpga_offset = path = reserved = vc = 0`, `user = ttl = 0`,
//! `src` = this node, `payload_crc` = CRC-32 of the payload (0 when empty),
//! header ECC and footer CRC-8 computed by `crate::packet`. Types and their
//! fields (dest = header destination; other fields 0):
//! - RdmaWrite / RdmaReadResp: vaddr = landing address, size 1..=P, PDID of
//!   the transfer, seq/first/last/notify/txid per segmentation below.
//! - RdmaReadReq: vaddr = address read at the server, PDID of the channel,
//!   16-byte payload (landing address u64 LE, length u32 LE, 4 zero bytes),
//!   first = last = 1, notify and txid from the descriptor.
//! - Mailbox: size = message length, PDID of the channel, first = last = 1,
//!   txid = NI-wide message slot `channel·pkt_slots + slot`.
//! - RdmaCompletion: to the data's source, PDID and txid of the transfer,
//!   flags = completion status (0 OK, 1 PACKET_REJECTED, 2 UNTRACKED,
//!   5 MEM_ERROR).
//! - Nack (read refused): to the requester, PDID and txid of the request,
//!   flags = reject reason code, or 12 READ_BUSY (read queue full).
//! - MailboxAck / MailboxNack: to the sender, PDID and txid of the message,
//!   MailboxNack flags = 0 (mailbox full) or the reject reason code.
//!
//! # Segmentation ([`rdma_tx`])
//! Aligned to the landing address with P = max_payload_bytes: packet k
//! carries `min(P - a_k mod P, remaining)` bytes for landing address a_k;
//! first packet up to the next P boundary, middle packets full and aligned,
//! last the rest; `seq = k mod 2^14`. Justification in [`rdma_tx`]: the
//! receiver never splits a burst at 4 KiB and checks one range per packet.
//! Payload bytes are read from memory when the packet is emitted (software
//! must not modify a source buffer until the transfer completes).
//!
//! # Emission order ([`Ni::emit_packet`])
//! Each call returns one whole packet; sources are never interleaved within
//! a packet. Priority, highest first:
//! 1. the response queue (MailboxAck/Nack, RdmaCompletion, Nack), FIFO in
//!    the order the received packets that caused them were consumed;
//! 2. the read-serve engine: accepted read requests FIFO, one at a time,
//!    every RdmaReadResp packet of the head request before the next;
//! 3. if TX_ENABLE: channels round-robin — starting at the channel after
//!    the one that sent last (channel 0 after reset), the first channel with
//!    a packet sends one packet; within a channel, a queued packetizer
//!    message (FIFO of sends and retries) before the next packet of the
//!    head descriptor (every packet of a write in turn; a read sends its
//!    single request packet). A descriptor's slot frees when its last packet
//!    is emitted.
//!
//! Item 1 is class 1 ([`Ni::emit_response`]: the RTL's response lane,
//! sending on its own VC independently of class 0), items 2 and 3 class 0
//! ([`Ni::emit_request`]); [`Ni::emit_packet`] is the response, else the
//! request.
//!
//! # Receive path ([`rdma_rx`], [`Ni::receive_packet_on`])
//! Store-and-forward: the whole packet is checked before any effect. Checks
//! in the order listed in [`rdma_rx`] (ECC, type, footer CRC-8, word count,
//! destination, arrival class, payload CRC-32, type rules, protection,
//! staleness); the first failure is the reject reason ([`RejectReason`]).
//! Then, before consuming, the resources the packet needs are checked; if
//! one is full the outcome is `Busy` and nothing changes (the network keeps
//! the packet): a completion entry (data packet with last = 1,
//! RdmaCompletion, Nack), a response-queue slot (data last with notify,
//! every Mailbox message, an RdmaReadReq finding the read queue full, a
//! rejected Mailbox or RdmaReadReq with trusted header and footer). A read
//! request never waits for the read queue, so a class-0 packet waits only
//! for the response queue (drained by class 1) and the completion queue
//! (software), a class-1 packet only for the completion queue: with the
//! classes on separate VCs, no protocol deadlock. The network is assumed
//! to deliver packets of one source to one destination in one class in
//! order (see [`fabric`]).
//!
//! Every consumed packet counts in RX_PACKETS, and in HDR_CORRECTED (sticky
//! HDR_CORRECTED too) when its header had a corrected single-bit error.
//!
//! Accepted packets:
//! - RdmaWrite / RdmaReadResp: payload written at vaddr (one memory write of
//!   `size` bytes), RX_DATA_BYTES += size. If first: forget (src, txid) in
//!   the damaged-transfer table. If last: post a completion (WRITE_IN for a
//!   write, READ_DONE for a read response; peer = src, txid, PDID) whose
//!   status is PACKET_REJECTED when (src, txid) was marked damaged (the mark
//!   is removed), else UNTRACKED when TRACK_LOST is set, else OK; and if
//!   notify: queue an RdmaCompletion to src with that status. The status
//!   is decided when the packet is consumed; the completion and the
//!   RdmaCompletion are posted when the write has **landed** (at once in
//!   the transaction model; at [`Ni::write_landed`] with explicit events),
//!   so software never sees a completion, nor the source a notify, before
//!   the last byte is in memory.
//! - RdmaReadReq: queue a read-serve job: RdmaReadResp packets from
//!   [vaddr, +len) here to the requester's landing address, PDID and txid of
//!   the request, notify copied, segmented as above. Read queue full ->
//!   send Nack(12 READ_BUSY), RD_BUSY_NACKS += 1, outcome `Refused` (not an
//!   error; software may post the read again).
//! - Mailbox: mailbox has room -> queue (src, PDID, bytes) and send
//!   MailboxAck; full -> send MailboxNack(0), MB_FULL_NACKS += 1, outcome
//!   `Refused` (not an error).
//! - RdmaCompletion: post NOTIFY (peer = src, status = flags).
//! - Nack: post READ_DONE with status REMOTE_DENIED, reason = flags.
//! - MailboxAck/MailboxNack: txid names channel `txid / pkt_slots`, slot
//!   `txid % pkt_slots`; must await an ack from src with that PDID (else
//!   rejected `Stale`; so is one naming a message whose packet has not left
//!   whole, see "Explicit events"). Ack frees the slot; Nack(0 full) or
//!   Nack(PAYLOAD_CRC) re-queues the same message at the tail of the
//!   channel's message FIFO (MB_RETRIES += 1); any other Nack frees the slot,
//!   MB_DENIED += 1, CH_ERR = MSG_DENIED.
//!
//! Rejected packets write nothing and post no completion. Each: RX_REJECTED
//! and REJ\[reason\] += 1, sticky RX_ERROR, an error entry (or sticky
//! ERRQ_OVERFLOW when the error queue is full); damaged-transfer table: an
//! untrusted footer sets TRACK_LOST; a trusted footer with last = 0 marks
//! (src, txid) damaged (lowest free slot; TRACK_LOST when full); a trusted
//! footer with last = 1 and a trusted data-type header forgets (src, txid).
//! A rejected Mailbox (trusted header and footer, not MISROUTED or
//! WRONG_CLASS) is answered MailboxNack (flags = reason), a rejected
//! RdmaReadReq likewise Nack (flags = reason); nothing else is answered. A Nack is not matched against
//! outstanding reads (the requester keeps no read state): any valid Nack
//! posts a READ_DONE / REMOTE_DENIED entry.
//!
//! # Explicit events ([`Ni::set_explicit_events`])
//! The model is transaction-level: by default a data packet's bytes land
//! when it is consumed and an emitted packet has left whole. A cycle-level
//! caller (the RTL co-simulation benches) turns explicit events on and
//! reports the two instants the RTL makes visible:
//! - [`Ni::write_landed`] at each accepted data packet's AXI4 write
//!   response (B), oldest first: its completion and RdmaCompletion (if
//!   any) are posted then. Their completion-queue and response-queue slots
//!   are held from the decision on: the `Busy` check counts them, so
//!   nothing else can take them in between.
//! - [`Ni::packet_left`] at each packet's tail flit: until then, an
//!   acknowledgement naming a packetizer message being sent is `Stale`
//!   (rejected, counted, reported; the slot is neither freed nor
//!   re-queued while its bytes are still being read out).
//!
//! # AXI4 error responses ([`memory`]'s fault map)
//! The NI's AXI4 master never takes an error response as success:
//! - **Reads** (RDMA write and read-response payloads): a beat answered
//!   SLVERR or DECERR carries no data; its bytes are sent as zero, and the
//!   packet is sent with its footer's payload CRC inverted ("stomped",
//!   [`wire::Packet::build_stomped`]), so that every receiver rejects it
//!   (`PAYLOAD_CRC`: its bytes never land; a middle packet marks the
//!   transfer damaged, so the receiver's completion, and the notify the
//!   source gets, say PACKET_REJECTED). The header has left before the
//!   data arrive, so the packet cannot be withdrawn; stomping is what a
//!   cut-through sender does. When the packet's tail has left
//!   ([`Ni::packet_left`]; at once without explicit events) RD_SLVERR
//!   and/or RD_DECERR += 1 (one per packet and kind) and sticky
//!   STATUS.AXI_ERROR is set (it raises `irq` when enabled).
//! - **Writes** (accepted data packets): a B answered SLVERR or DECERR
//!   ([`Ni::write_landed_resp`]; the memory's fault map without explicit
//!   events) counts WR_SLVERR or WR_DECERR, sets STATUS.AXI_ERROR, and
//!   what that write posts says MEM_ERROR (5): the completion's status and
//!   the RdmaCompletion's flags. Left: the error of a non-last packet's
//!   write is not carried to its transfer's completion (counted and in
//!   STATUS only).
//! - The allreduce engine's own reads and writes are not covered yet.
//!
//! # Protection ([`protection`])
//! Windows and PDIDs are set only through page 0. A data packet needs one
//! enabled window holding all of [vaddr, vaddr + size) with its PDID (and
//! the range below 2^addr_bits); a read request likewise for
//! [vaddr, vaddr + len); reason PDID when an enabled window holds the range
//! with another PDID, else WINDOW. Mailbox messages need MBOX_CTRL.OPEN or
//! PDID = MBOX_CTRL.PDID. The NI's own memory reads (RDMA sources) are not
//! checked here: the AXI4 master presents the PDID on AxUSER for the
//! system's SMMU.
//!
//! # Left to the RTL / open
//! Cycle timing and AXI burst shapes (the model logs one write per packet);
//! a timeout for a packetizer message whose packet or acknowledgement was
//! destroyed by an uncorrectable header error (today it stays pending,
//! visible in CH_STATUS); per-channel completion queues.

pub mod channel;
pub mod completion;
pub mod counters;
pub mod descriptor;
pub mod driver;
pub mod errors;
pub mod fabric;
pub mod mailbox;
pub mod memory;
#[allow(clippy::module_inception)]
pub mod ni;
pub mod packetizer;
pub mod params;
pub mod protection;
pub mod rdma_rx;
pub mod rdma_tx;
pub mod regs;
pub mod trace;
pub mod wire;

pub use completion::{CqEntry, CqKind, CqStatus};
pub use descriptor::{Descriptor, Op};
pub use errors::RejectReason;
pub use memory::SparseMemory;
pub use ni::{Ni, RxOutcome};
pub use params::NiParams;
pub use regs::{AxilResp, Prot};
pub use wire::Packet;
