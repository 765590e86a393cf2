//! `ni`: the network interface RTL, cycle-level, checked transaction by
//! transaction against the golden model `exanet_sim::ni` (its module doc is
//! the contract: register map, packets, emission order).
//!
//! # What it does
//! The **transmit side** — the AXI4-Lite register file (every
//! register of the map except the read-serve engine's), per-channel
//! descriptor queues with doorbell checks, the RDMA write engine (AXI4
//! read bursts issued up to `tx_ahead` packets ahead of
//! sending, realignment into a payload FIFO, aligned segmentation), RDMA
//! read request
//! packets, the packetizer (message slots, send queue), and the
//! **response queue** (MailboxAck / MailboxNack, RdmaCompletion, Nack;
//! `resp_queue_depth` entries, sent by the response lane on `resp_vc`,
//! whatever TX_ENABLE; see "Message classes"). The **receive path** ([`rdma_rx`]): flit input with
//! credits, every golden check in order (with `Stale` for
//! acknowledgements), the reject path (RX_PACKETS, RX_REJECTED, REJ\[r\],
//! HDR_CORRECTED, the error queue ERRQ_COUNT / ERRQ_W0..W4 / ERRQ_POP), the
//! AXI4 write of accepted RdmaWrite / RdmaReadResp packets
//! (RX_DATA_BYTES); **completions** (page 0x1000: CQ_COUNT, CQ_W0..W2,
//! CQ_POP; WRITE_IN / READ_DONE for data with `last = 1`, NOTIFY for
//! RdmaCompletion, READ_DONE / REMOTE_DENIED for Nack), the
//! **damaged-transfer table** (`poison_depth` entries, TRACK_LOST),
//! **STATUS** (sticky bits W1C, live bits); the **mailbox** (page 0x2000:
//! MB_COUNT, MB_LEN, MB_SRC, MB_PDID, MB_DATA\[i\], MB_POP;
//! MB_FULL_NACKS, MB_RETRIES, MB_DENIED), every message answered MailboxAck
//! or MailboxNack (full, or the reject reason); received MailboxAck /
//! MailboxNack free or re-queue the packetizer slot (CH_ERR = MSG_DENIED on
//! a final nack); rejected Mailbox / RdmaReadReq packets answered with
//! MailboxNack / Nack; **read service**: a received RdmaReadReq is checked
//! against the windows over `[vaddr, vaddr + len)` (WINDOW / PDID, Nack
//! when refused), queued in the read queue (`read_queue_depth` jobs,
//! LUTRAM), and served by the read-serve engine (emission priority 2:
//! every RdmaReadResp packet of the head job before the next, whatever
//! TX_ENABLE; payload read over the AXI4 read master with ARUSER = the
//! request's PDID, segmented like a write; a request finding the read
//! queue full is answered Nack(READ_BUSY = 12), RD_BUSY_NACKS); and
//! **`Busy`** (a packet whose completion-queue or response-queue entry has
//! no room waits in its receive ring).
//!
//! # Structure
//! One rust-hdl block ([`top::Ni`], top module `exanet_ni_<suffix>`)
//! whose body is Verilog generated at elaboration from the parameters (as
//! `common::crc32`), assembled from one generator per sub-block file:
//! [`axil_regs`] (AXI4-Lite slave, register file, descriptor queues),
//! [`packetizer`] (windows, message slots, send queues), [`rdma_tx`]
//! (scheduler, segmentation, read-ahead, payload datapath, flit output and
//! credits), [`axi_master`] (AR channel), [`rdma_rx`] (receive path). Each
//! generator renders one askama template of Verilog, `hdl/templates/ni/<sub-block>.v`
//! (configured by `hdl/askama.toml`: whitespace kept, no escaping), from the
//! derived sizes ([`top::Keys`]) and its own fields; the shared text
//! helpers (queues, packed records, register words) are in [`vgen`].
//! Every number the RTL shares with the golden model — packet types,
//! reject reasons, response flags, completion and channel error codes,
//! register offsets and bit fields — reaches the templates from the golden
//! definitions ([`codes`]), and the queue entries are laid out from the
//! golden field widths ([`records`]); the test
//! `codes::tests::codes_come_only_from_fields` fails on a literal code in a
//! template. Children are rust-hdl blocks: `HeaderPack`
//! (SECDED), `FooterPack` (CRC-8) and `Crc32` (payload CRC). Why generated
//! Verilog and not rust-hdl glue between sub-blocks: rust-hdl emits one
//! `always @(*)` per module, and the sub-blocks here exchange many signals
//! in both directions in the same cycle (a doorbell's queue-full check
//! against the scheduler's pop, the scheduler's pick against the register
//! file); as separate rust-hdl modules that is the parent↔child pattern
//! Verilator 5.006 can mis-simulate (TOOLING.md). Generated, each piece of
//! logic is its own `always` block in dependency order, and every child
//! input is driven from registers (or register-file reads) only.
//!
//! The block's rust-hdl `update` is empty: this block is simulated with
//! Verilator only (the golden model is the Rust behaviour; rust-hdl's own
//! simulator is not used for it).
//!
//! # Ports
//! - `clock`; `reset` (synchronous; required once after power-on);
//! - `node[22]`: this node's coordinates (held constant);
//! - AXI4-Lite slave (32-bit data, 20-bit byte address, `*prot` = AxPROT\[0\]):
//!   `s_awvalid s_awready s_awaddr s_awprot s_wvalid s_wready s_wdata
//!   s_bvalid s_bready s_bresp s_arvalid s_arready s_araddr s_arprot
//!   s_rvalid s_rready s_rdata s_rresp`. Write strobes are assumed all ones
//!   (no `wstrb`), as in the golden model. AW and W are taken together.
//! - AXI4 master read (128-bit data, one ID, in-order): `m_arvalid
//!   m_arready m_araddr[42] m_arlen[8] m_arsize[3] (=4) m_arburst[2]
//!   (=INCR) m_aruser[16] (= the transfer's PDID: the channel's for an RDMA
//!   write, the request's for a read response) m_rvalid m_rready
//!   m_rdata[128] m_rresp[2]` (no RLAST: the NI counts the beats of
//!   the bursts it asked for; RLAST is not checked against that count).
//!   Up to `tx_ahead` packets' bursts (at most
//!   two each) are outstanding; RREADY goes low while the payload FIFO is
//!   full. `m_araddr` bits at and above `addr_bits` are 0; no
//!   burst crosses a 4 KiB boundary.
//! - Flit output to a router local port: `out_valid out_data[128] out_head
//!   out_tail out_vc[4]` (registered), `credit_in_valid credit_in_vc[4]`.
//!   Class-0 packets leave on VC `vc`, responses on VC `resp_vc`; the NI
//!   starts with `buffer_flits` credits on each, sends a flit only with a
//!   credit of its VC (a response starts with two) and ignores credits for
//!   other VCs. A response's two flits may come between two flits of a
//!   class-0 packet (the VCs interleave on the link; each VC's packets are
//!   whole and in order).
//! - `tx_pick`: this cycle the scheduler chooses the next class-0 packet
//!   (the golden model's `emit_request` instant); `tx_busy`: the scheduler
//!   cannot pick this cycle (it picks in every cycle without `tx_busy` in
//!   which the golden model has a class-0 packet); `rsp_pick`: this cycle
//!   the response lane takes the response queue's head (the golden model's
//!   `emit_response`). Observability for co-simulation and debug.
//! - Flit input from a router local port: `in_valid in_data[128] in_head
//!   in_tail in_vc[4]`; `credit_out_valid credit_out_vc[4]` return one
//!   receive-buffer credit per cycle. A flit on VC `v` belongs to class
//!   `v / vcs_per_class` and goes into that class's ring: class 0
//!   [`rx_buffer_flits`] flits (at least two largest packets), class 1
//!   [`rx_class1_flits`] (one largest packet), powers of two. The sender
//!   keeps one credit pool per class, starting with the ring's size, and
//!   starts a packet on a class only when its pool holds
//!   [`rx_packet_flits`] `= 2 + P/16` credits (virtual cut-through). A
//!   packet is the flits after the previous tail (packets never
//!   interleave). Credits return in arrival order within a ring (class 1
//!   first when both have some), one per flit, on the flit's VC, once its
//!   packet is decided (a written packet: once its last W beat is taken).
//! - `rx_class`: the class of the packet decided (`rx_commit`) or found
//!   Busy (`rx_busy`) this cycle.
//! - `irq` (level, registered): high in cycle t + 1 when STATUS & IRQ_ENABLE
//!   was not zero in cycle t (golden `Ni::irq`); to the PS's `pl_ps_irq0` in
//!   the node. The benches check it the cycle after every register read
//!   against the golden model's `irq()` at that read.
//! - AXI4 master write (128-bit, one ID, in order): `m_awvalid m_awready
//!   m_awaddr[42] m_awlen[8] m_awsize[3] (=4) m_awburst[2] (=INCR)
//!   m_awuser[16] (= the packet's PDID) m_wvalid m_wready m_wdata[128]
//!   m_wstrb[16] m_wlast m_bvalid m_bready m_bresp[2]`.
//!   One burst per accepted data packet, strobes exactly its bytes; AW
//!   before W; bursts back to back, up to 8 without their B; each B posts
//!   its packet's completion and notify response (timing contract below).
//! - `rx_commit`: this cycle the receive path decides a packet (the golden
//!   model's `receive_packet` instant); `rx_busy`: this cycle it holds a
//!   checked packet it cannot take because a queue it needs is full (the
//!   golden model's `Busy` outcome, which changes nothing).
//!
//! # Timing contract (what the bench relies on)
//! - The slave handles one transaction at a time: a write (AW and W
//!   together) or a read is accepted in a cycle when no response is
//!   pending, the scheduler is not picking, and it is not loading; a write
//!   is not accepted either in a cycle with `rx_commit`. Its effect is
//!   committed at the end of the accepting cycle; the response is valid
//!   from the next cycle. A read returns the state at the start of the
//!   accepting cycle.
//! - `tx_pick` in cycle t: the packet chosen is the golden model's
//!   `emit_packet()` applied to the state at the start of t (every write
//!   accepted before t included, none after). The pick's effects (queue
//!   pops, slot states, counters, round-robin pointer) are visible to
//!   transactions accepted from t+2 on (none is accepted in t or t+1).
//! - Per packet: header flit no earlier than t+2, then payload flits,
//!   then the footer; packets leave in pick order, one at a time. Picks run
//!   ahead of sending (read-ahead, `tx_ahead` packets): the
//!   next pick comes as soon as every AXI4 read of the previous one has
//!   been issued, so a packet may be picked up to `tx_ahead - 1` packets
//!   before its header leaves (a message only when nothing is queued to
//!   send). Payload bytes are read from memory after the pick, possibly
//!   while earlier packets are still leaving (software must not change a
//!   source buffer before the transfer completes, as in the golden model).
//! - `rsp_pick` in cycle t: the golden model's `emit_response` applied to
//!   the state at the start of t, before everything else of t; no
//!   AXI4-Lite transaction is accepted in t. Its header is on `out_*` at
//!   t+1, its footer at t+2 (class-0 flits wait). It starts whenever the
//!   lane is idle, the response queue non-empty and two `resp_vc` credits
//!   free.
//! - `rx_commit` (or `rx_busy`) in cycle t: the decision is the golden
//!   model's `receive_packet_on(pkt, rx_class)` applied to the state at the
//!   start of t, after `rsp_pick` and a read accepted in t, where `pkt` is
//!   the oldest undecided packet of class `rx_class`. It never coincides with `tx_pick` or the
//!   cycle after (the pick's queue and slot effects land first) nor with an
//!   accepted write. Its counter, queue (completion, mailbox, response,
//!   error), slot and STATUS effects are visible from t+1 on (a response
//!   it queues can be picked at t+1); its memory write follows on AXI4.
//!   `rx_busy` repeats every cycle until the packet can be taken.
//! - Except: an accepted data packet's completion (`last = 1`) and
//!   RdmaCompletion response (notify) are posted in the cycle tB of its
//!   write's B handshake (`m_bvalid && m_bready`), the golden model's
//!   `write_landed` (explicit events), after a read accepted or a pick in
//!   tB and before a write accepted in tB (a CQ_POP in tB pops it when the
//!   queue was empty). Visible from tB+1 (the response can be picked at
//!   tB+1): software never sees a completion before the data are in
//!   memory. The room for both is checked at `rx_commit` (`Busy`, counting
//!   the entries of writes still landing) and held until tB. No
//!   `rx_commit` falls in a cycle whose B posts something.
//! - A packetizer message is *being sent* from its LOAD until the cycle tT
//!   its tail flit is on `out_*`: a MailboxAck / MailboxNack naming its
//!   slot decided at or before tT is `Stale` (rejected, counted; the slot
//!   is not freed or re-queued). The golden model's `packet_left` at tT,
//!   after the decision of tT.
//!
//! # AXI4 error responses (golden "AXI4 error responses")
//! - RRESP SLVERR / DECERR (RRESP\[1\]) on a payload beat: the realigner
//!   zeroes the beat's data and carries its kind {DECERR, SLVERR} with
//!   every payload word it makes (2 bits beside each payload FIFO word);
//!   the sender ORs the kinds of the packet's words and, if any, inverts
//!   the payload CRC in the footer (the header has already left: the
//!   packet is *stomped*, so the receiver rejects it PAYLOAD_CRC and
//!   never takes its data as good). In the cycle its tail flit is on
//!   `out_*` (the golden `packet_left`) RD_SLVERR / RD_DECERR += 1 and
//!   sticky STATUS.AXI_ERROR is set. No timing changes.
//! - BRESP SLVERR / DECERR on a data packet's write: at the B (the golden
//!   `write_landed_resp`), WR_SLVERR or WR_DECERR += 1, STATUS.AXI_ERROR,
//!   and the completion / RdmaCompletion it posts carry MEM_ERROR (5).
//!   A received RdmaCompletion with flags MEM_ERROR is accepted (NOTIFY
//!   with that status).
//! - Not covered: the allreduce engine's copy reads and its writes.
//!
//! # Message classes (deadlock freedom)
//! Responses (RdmaCompletion, Nack, MailboxAck / MailboxNack: class 1)
//! travel on the router's class 1, requests and data (RdmaWrite,
//! RdmaReadReq, Mailbox, RdmaReadResp: class 0) on class 0. Consuming a
//! class-1 packet never needs sending anything (it waits at most for room
//! in the completion queue, i.e. for software); a class-0 packet may wait
//! for room in the response queue, which drains through class 1, or in
//! the completion queue; a read request never waits for the read queue
//! (Nack READ_BUSY instead). On the way out the response lane has its own
//! credits and goes first, also between the flits of a class-0 packet
//! stalled for credits; on the way in class 1 has
//! its own ring and is decided first, and a Busy class-0 packet yields to
//! it. So no cycle of waits runs through the network: with one class, A's
//! receive path could wait for room in A's response queue, which drains
//! through the network to B, whose receive path waits for B's. A packet
//! on a VC of the other class than its type's is rejected (WRONG_CLASS,
//! reason 11), without a response.
//!
//! # Parameters
//! [`NiRtlParams`]: the golden model's `NiParams`, plus `buffer_flits`
//! (credits of the router's local input VCs), `vc` (class-0 VC),
//! `resp_vc` (class-1 VC), `vcs_per_class` (the router's) and
//! `tx_ahead` (transmit read-ahead in packets, config key `ni.tx_ahead`,
//! a power of two in [`rdma_tx::TX_AHEAD_RANGE`]; RTL only, see
//! [`rdma_tx`]).

pub mod allreduce;
pub mod axi_master;
pub mod axil_regs;
pub mod codes;
pub mod geometry;
pub mod packetizer;
pub mod rdma_rx;
pub mod rdma_tx;
pub mod records;
pub mod top;
pub mod trace;
pub mod vgen;

pub use geometry::{rx_buffer_flits, rx_class1_flits, rx_packet_flits, Geometry, NiRtlParams};
pub use top::{emit_ni, ni_top_name, Ni};
