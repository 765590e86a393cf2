//! Co-simulation bench of `ni` (transmit side with the response queue and
//! the read-serve engine; receive path: checks, reject path, data writes,
//! completions, the damaged-transfer table, STATUS, mailbox,
//! acknowledgements, read requests, `Busy`): RTL vs `exanet_sim::ni::Ni`,
//! transaction by transaction.
//!
//! Agents, all random (seeded):
//! - **Software** (AXI4-Lite master): at each phase start, privileged
//!   set-up (channel PDIDs, windows, MBOX_CTRL, CONTROL); then random mixes
//!   of RDMA write and read descriptors (staging writes + DOORBELL; lengths
//!   0..20000, any alignment, a few refused: bad op, length 0, address
//!   beyond the limit, queue full), packetizer sends (window words,
//!   PKT_DEST, PKT_SEND with good and bad lengths, slots running out),
//!   TX_ENABLE toggles, PDID and MBOX_CTRL changes, reads of every
//!   register (STATUS, counters, error queue, CQ and mailbox pages
//!   included), consumption of the head completion (CQ_W0..W2, CQ_POP,
//!   STATUS read and W1C) or message (MB_COUNT/LEN/SRC/PDID, MB_DATA, MB_POP),
//!   error-queue pops, and bad accesses (user access to page 0, user write
//!   to CH_PDID, writes to read-only CQ / mailbox registers, unaligned,
//!   unmapped). When the receive path stays `Busy`, software pops the
//!   completion queue and the mailbox. Valid/ready delays are random on
//!   every channel.
//! - **Memory** (AXI4 slave): accepts AR with random backpressure, returns
//!   each burst after a random latency with random gaps between beats,
//!   from a sparse memory holding the same bytes as the golden model's.
//! - **Router port**: returns credits after random delays, on the request
//!   VC `vc` and the response VC `resp_vc` (and stray credits on other
//!   VCs, which the NI must ignore).
//! - **Receive agent** (a router local output): sends packets into the NI
//!   (flits with random gaps, one packet at a time; one credit pool per
//!   message class, the size of that class's receive ring; a packet of
//!   class `c` starts only with credits for a largest packet in pool `c`,
//!   virtual cut-through; a random VC of the class of its type, VC `v`
//!   being of class `v / vcs_per_class`; a few damaged ones on a VC of the
//!   other class, rejected WrongClass): RdmaWrite / RdmaReadResp into the landing
//!   area's first half (window 0; `first`, `last`, `notify` random; (src,
//!   txid) mostly from a small pool so damaged transfers complete as
//!   PACKET_REJECTED), RdmaReadReq asking for 1..12·P bytes of the landing
//!   area's second half (random bytes no packet writes, so the RTL's
//!   delayed memory reads see the golden model's bytes; refused ones: a
//!   forged PDID, outside window 0, running past its end or past
//!   `2^addr_bits`, malformed payload or flags),
//!   Mailbox messages from four senders (mostly with the MBOX_CTRL PDID),
//!   MailboxAck / MailboxNack (full, payload CRC, other reasons) for the
//!   NI's own messages seen leaving (after their tail flit) (and stale ones: wrong source, PDID or
//!   slot; and, for every second message picked, a forged one sent as soon
//!   as the port is free while the message is still being sent, which is
//!   `Stale` when decided before its tail leaves),
//!   RdmaCompletion and Nack packets; each good or damaged one way —
//!   forged PDID, outside the window, beyond `2^addr_bits`, crossing a P
//!   boundary, misrouted, size 0, Ack type, unknown type, payload bit flip,
//!   single (corrected) and double header errors, footer bit flip, a word
//!   dropped or added, header only. The memory's AXI4 write slave has
//!   random AW/W backpressure and B latency. When a completion's write is
//!   on its way, software often polls CQ_COUNT / CQ_W0.
//! - **Many-to-one burst** ([`NiBench::set_mailbox_burst`]): instead, only
//!   mailbox messages from several senders (two in flight each, each
//!   message resent when answered MailboxNack), software reading each
//!   message's id and popping it, slowly; delivery is counted in
//!   [`NiCoverage`].
//!
//! Checks (the first failure stops the run): every AXI4-Lite response
//! (OKAY/SLVERR and read data) against the golden model's for the same
//! access in the same order; at `rsp_pick` the golden model must have a
//! response (`emit_response`), at `tx_pick` a request (`emit_request`),
//! and when the RTL's engine is idle and not picking it must have no
//! request; every flit against the golden packet's words (data, head,
//! tail), per VC: requests on `vc` in their pick order, responses on
//! `resp_vc` in theirs, no packet's flits interleaved with another's of its VC (a
//! response may come between two flits of a class-0 packet); no
//! flit without a credit of its VC; every
//! AR: 16-byte aligned, INCR, size 16, no 4 KiB crossing, address below
//! `2^addr_bits`, ARUSER = the packet's PDID. At `rx_commit` the golden
//! model receives (`receive_packet_on`, class `rx_class`) the oldest
//! packet sent on a VC of class `rx_class` (it must be consumed, not
//! Busy); at `rx_busy` it must answer `Busy` for that packet (asked again
//! whenever its state changed since); its memory writes (`take_writes`) must then appear on
//! AXI4 in order, one burst each: AW aligned, length, size 16, INCR,
//! AWUSER = the packet's PDID, no 4 KiB crossing; the strobed bytes
//! exactly the written range and data. Any AW with no golden write pending
//! (e.g. from a rejected packet) fails. At each B handshake the golden
//! model's oldest write lands (`write_landed`: the completion and notify
//! response are posted then, so a CQ read or a pick that shows one before
//! the B is a mismatch); at each tail flit out the packet has left
//! (`packet_left`; explicit events, see `exanet_sim::ni`). Credits return
//! on the packet's VC, as many as its flits, none unowed, each class's in
//! the order of its decisions. Order of golden calls within a cycle: read
//! accepted, response picked, request picked, receive, write landed, write
//! accepted, packet left.
//!
//! Phases end with a drain (no new accesses or packets until both sides
//! are idle; meanwhile the receive agent acknowledges every message of the
//! NI still awaiting an acknowledgement); every second phase ends with a
//! reset pulse, the others go on with the same state.

pub(crate) mod agents;

use super::{check_keys, kv_u64, parse_kv, BlockInfo};
use crate::cosim::{Bench, Mismatch};
use crate::verilator::{Port, Sim};
use agents::{
    check_picks, Access, AxiReadSlave, AxiWriteSlave, AxilMaster, NiPorts, Report, TxFlits,
};
use anyhow::Result;
use exanet_hdl::emit::Emitted;
use exanet_hdl::ni::{emit_ni, rx_buffer_flits, rx_class1_flits, rx_packet_flits, NiRtlParams};
use exanet_sim::ni::rdma_rx::NACK_READ_BUSY;
use exanet_sim::ni::rdma_tx::ReadRequest;
use exanet_sim::ni::{
    regs, AxilResp, Ni, NiParams, Packet, Prot, RejectReason, RxOutcome, SparseMemory,
};
use exanet_sim::packet::coords::Coords;
use exanet_sim::packet::footer::Footer;
use exanet_sim::packet::header::{header_ecc, Header, PacketType};
use exanet_sim::rng::Rng;
use std::collections::VecDeque;

const KEYS: &[&str] = &[
    "channels",
    "desc_queue_depth",
    "pkt_slots",
    "mailbox_msg_bytes",
    "max_payload_bytes",
    "addr_bits",
    "windows",
    "errq_depth",
    "mailbox_depth",
    "cq_depth",
    "resp_queue_depth",
    "read_queue_depth",
    "poison_depth",
    "buffer_flits",
    "vc",
    "resp_vc",
    "vcs_per_class",
    "tx_ahead",
];

/// Registry entry for `exanet cosim ni`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "ni",
        about:
            "network interface: transmit side, read service; receive path: checks, rejects, error queue, data writes, completions, mailbox, acks, read requests, responses",
        matrix,
        point,
    }
}

/// The default matrix.
pub fn matrix_points() -> Vec<&'static str> {
    vec![
        // The default NI: 4 channels, 256-byte packets, 64-byte messages, 2 VCs per class.
        "channels=4,desc_queue_depth=16,pkt_slots=4,mailbox_msg_bytes=64,max_payload_bytes=256,addr_bits=40,windows=8,errq_depth=16,mailbox_depth=16,cq_depth=64,resp_queue_depth=8,read_queue_depth=4,poison_depth=4,buffer_flits=32,vc=0,resp_vc=2,vcs_per_class=2",
        // Small and odd: 3 channels, short queues, 64-byte packets, 32-bit addresses, few credits,
        // 3-entry error queue, mailbox and response queue, 2 read jobs, 5 completions, 3 damaged transfers
        // (queues wrap at non-powers of two and fill up: Busy, mailbox-full nacks, reads refused);
        // 3 VCs per class, requests on the last class-0 VC, responses on the last class-1 VC.
        "channels=3,desc_queue_depth=3,pkt_slots=2,mailbox_msg_bytes=32,max_payload_bytes=64,addr_bits=32,windows=2,errq_depth=3,mailbox_depth=3,cq_depth=5,resp_queue_depth=3,read_queue_depth=2,poison_depth=3,buffer_flits=6,vc=2,resp_vc=5,vcs_per_class=3",
        // One channel, 16-byte packets and messages, 42-bit addresses, 3 credits, every queue
        // one entry deep; one VC per class.
        "channels=1,desc_queue_depth=2,pkt_slots=1,mailbox_msg_bytes=16,max_payload_bytes=16,addr_bits=42,windows=1,errq_depth=1,mailbox_depth=1,cq_depth=1,resp_queue_depth=1,read_queue_depth=1,poison_depth=1,buffer_flits=3,vc=0,resp_vc=1,vcs_per_class=1",
    ]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    matrix_points()
        .into_iter()
        .map(|t| point(t).expect("matrix point is valid"))
        .collect()
}

fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(NiBench::new(parse_point(text)?)?))
}

/// Parse a point (`key=value,...`; missing keys take the defaults).
pub fn parse_point(text: &str) -> Result<NiRtlParams> {
    let kv = parse_kv(text)?;
    check_keys(&kv, KEYS)?;
    let d = NiRtlParams::default();
    let int = |k: &str, def: usize| -> Result<usize> { Ok(kv_u64(&kv, k, def as u64)? as usize) };
    let p = NiRtlParams {
        ni: NiParams {
            channels: int("channels", d.ni.channels)?,
            desc_queue_depth: int("desc_queue_depth", d.ni.desc_queue_depth)?,
            pkt_slots: int("pkt_slots", d.ni.pkt_slots)?,
            mailbox_msg_bytes: int("mailbox_msg_bytes", d.ni.mailbox_msg_bytes)?,
            max_payload_bytes: int("max_payload_bytes", d.ni.max_payload_bytes)?,
            addr_bits: int("addr_bits", d.ni.addr_bits as usize)? as u32,
            windows: int("windows", d.ni.windows)?,
            errq_depth: int("errq_depth", d.ni.errq_depth)?,
            mailbox_depth: int("mailbox_depth", d.ni.mailbox_depth)?,
            cq_depth: int("cq_depth", d.ni.cq_depth)?,
            resp_queue_depth: int("resp_queue_depth", d.ni.resp_queue_depth)?,
            read_queue_depth: int("read_queue_depth", d.ni.read_queue_depth)?,
            poison_depth: int("poison_depth", d.ni.poison_depth)?,
        },
        buffer_flits: int("buffer_flits", d.buffer_flits)?,
        vc: int("vc", d.vc)?,
        resp_vc: int("resp_vc", d.resp_vc)?,
        vcs_per_class: int("vcs_per_class", d.vcs_per_class)?,
        tx_ahead: int("tx_ahead", d.tx_ahead)?,
    };
    exanet_hdl::ni::Geometry::new(&p)?;
    Ok(p)
}

/// The point text of `p`.
pub fn point_text(p: &NiRtlParams) -> String {
    let n = &p.ni;
    format!(
        "channels={},desc_queue_depth={},pkt_slots={},mailbox_msg_bytes={},max_payload_bytes={},addr_bits={},windows={},errq_depth={},mailbox_depth={},cq_depth={},resp_queue_depth={},read_queue_depth={},poison_depth={},buffer_flits={},vc={},resp_vc={},vcs_per_class={},tx_ahead={}",
        n.channels, n.desc_queue_depth, n.pkt_slots, n.mailbox_msg_bytes, n.max_payload_bytes,
        n.addr_bits, n.windows, n.errq_depth, n.mailbox_depth, n.cq_depth, n.resp_queue_depth,
        n.read_queue_depth, n.poison_depth, p.buffer_flits, p.vc, p.resp_vc, p.vcs_per_class,
        p.tx_ahead
    )
}

/// What a run exercised; the integration test asserts on it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NiCoverage {
    /// Packets compared, by type: RDMA write, read request, mailbox.
    pub writes: u64,
    pub read_reqs: u64,
    pub messages: u64,
    /// Flits compared.
    pub flits: u64,
    /// AR bursts, and packets read as two bursts (4 KiB crossing).
    pub bursts: u64,
    pub split_reads: u64,
    /// AXI4-Lite writes and reads compared; of those answered SLVERR.
    pub axil_writes: u64,
    pub axil_reads: u64,
    pub slverr: u64,
    /// Doorbells and sends refused (SLVERR).
    pub refused_doorbells: u64,
    pub refused_sends: u64,
    /// Reset pulses.
    pub resets: u64,
    /// Cycles the flit output was stalled by credits (request VC); cycles
    /// the response VC had no credit left.
    pub credit_stalls: u64,
    pub resp_credit_out: u64,
    /// Packets injected into the receive path and decided.
    pub rx_packets: u64,
    /// Of those: accepted; accepted after a corrected header error.
    pub rx_accepted: u64,
    pub rx_corrected: u64,
    /// Rejected, by reason code (index 1..=`RejectReason::MAX_CODE`;
    /// WrongClass among them).
    pub rx_rejected: [u64; RejectReason::MAX_CODE as usize + 1],
    /// Packets decided per class of their arrival VC (0, 1); of the
    /// class-1 decisions, those made while an older class-0 packet was
    /// undecided (out of arrival order), and those made while a class-0
    /// packet found Busy was waiting (it yielded).
    pub rx_by_class: [u64; 2],
    pub class1_overtakes: u64,
    pub class1_past_busy: u64,
    /// Packets the agent sent on a VC of the other class than their type's.
    pub wrong_class_sent: u64,
    /// AXI4 write bursts compared against the golden writes, and bytes.
    pub rx_writes: u64,
    pub rx_write_bytes: u64,
    /// ERRQ_W* reads compared with a non-zero value; ERRQ pops accepted.
    pub errq_words: u64,
    pub errq_pops: u64,
    /// Responses the NI emitted (compared flit by flit, on `resp_vc`):
    /// MailboxAck, MailboxNack, RdmaCompletion, Nack; of the Nacks, those
    /// refusing a read because the read queue was full (NACK_READ_BUSY).
    pub resp_acks: u64,
    pub resp_mb_nacks: u64,
    pub resp_completions: u64,
    pub resp_read_nacks: u64,
    pub resp_read_busy: u64,
    /// RdmaReadResp packets the read-serve engine emitted (compared flit
    /// by flit), and read requests accepted (each a read job).
    pub read_resps: u64,
    pub read_jobs: u64,
    /// Read requests decided (accepted, refused or rejected), and those
    /// refused because the read queue was full (outcome Refused, answered
    /// Nack READ_BUSY; a read request is never Busy for the read queue).
    pub read_reqs_in: u64,
    pub read_refused: u64,
    /// Accepted data packets (each must be one AXI4 write burst), and of
    /// those with `last = 1` (a completion posted).
    pub rx_data: u64,
    pub rx_completions: u64,
    /// Mailbox messages received: queued; refused because the mailbox was full.
    pub mb_queued: u64,
    pub mb_refused: u64,
    /// Acknowledgements of the NI's own messages accepted: delivered
    /// (slot freed), retried (queued again), denied.
    pub acks_delivered: u64,
    pub acks_retried: u64,
    pub acks_denied: u64,
    /// RdmaCompletion and Nack packets accepted (NOTIFY / REMOTE_DENIED entries).
    pub notify_in: u64,
    pub nack_in: u64,
    /// Cycles the receive path reported Busy; golden `Busy` confirmations.
    pub busy_cycles: u64,
    pub busy_checks: u64,
    /// Completion statuses seen, by code: entries read (CQ_W0 != 0) and
    /// RdmaCompletion responses; CQ pops of an entry.
    pub cq_status: [u64; 4],
    pub cq_pops: u64,
    /// MB_DATA words read non-zero; MB pops of a message.
    pub mb_words: u64,
    pub mb_pops: u64,
    /// STATUS reads with a sticky bit set; STATUS W1C writes.
    pub status_sticky: u64,
    pub status_clears: u64,
    /// Phases that ended without a reset pulse.
    pub phases_no_reset: u64,
    /// B responses taken (each the golden model's `write_landed`); reads
    /// of CQ_COUNT, CQ_W0 or STATUS accepted while a completion's write was
    /// still landing (the completion must not be visible yet).
    pub landed: u64,
    pub cq_reads_landing: u64,
    /// Acknowledgements sent while the message they name was still being
    /// sent (tail not out): decided `Stale`, the slot untouched.
    pub acks_while_sending: u64,
    /// Many-to-one burst ([`NiBench::set_mailbox_burst`]): messages created
    /// by the senders, delivered to software (read and popped), answered
    /// MailboxNack (full), delivered twice (must stay 0), answered with
    /// anything else (must stay 0).
    pub burst_created: u64,
    pub burst_delivered: u64,
    pub burst_nacks: u64,
    pub burst_dups: u64,
    pub burst_other: u64,
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Write { addr: u32, data: u32, prot: bool },
    Read { addr: u32, prot: bool },
    Wait(u32),
}

/// The NI's ports: the ones the shared agents drive, and the router
/// port's (credits in, flits in, credits out) and the reset.
#[derive(Clone, Copy)]
struct Ports {
    ni: NiPorts,
    reset: Port,
    credit_in_valid: Port,
    credit_in_vc: Port,
    in_valid: Port,
    in_data: Port,
    in_head: Port,
    in_tail: Port,
    in_vc: Port,
    credit_out_valid: Port,
    credit_out_vc: Port,
}

/// Memory regions the software's sources lie in (filled with random bytes).
const REGION: u64 = 64 * 1024;

/// The `ni` bench at one parameter point.
pub struct NiBench {
    params: NiRtlParams,
    golden_params: NiParams,
    me: Coords,
    golden: Ni,
    /// The memory the RTL's AXI master reads (same bytes as the golden's).
    mem: SparseMemory,
    regions: Vec<u64>,
    ports: Option<Ports>,
    // Software.
    sw: VecDeque<Op>,
    axil: AxilMaster<()>,
    wait: u32,
    tx_off: bool,
    // Memory.
    mem_r: AxiReadSlave,
    // Flits: the packets picked; the flits the router holds (credits
    // used) on `vc` and `resp_vc`; the lane (0 `vc`, 1 `resp_vc`) a credit
    // is returned to this cycle.
    tx: TxFlits,
    held: [usize; 2],
    credit_now: Option<usize>,
    // Phases.
    cycle_in_phase: u64,
    phase_len: u64,
    draining: bool,
    reset_now: bool,
    load: f64,
    idle_run: u64,
    cov: NiCoverage,
    rx: Rx,
    /// Inject only packets the receive path must reject, and leave the
    /// windows as set up (for the zero-bytes-written test).
    only_bad: bool,
    /// Many-to-one mailbox burst mode.
    burst: Option<MbBurst>,
    /// The golden model changed since the last `Busy` confirmation.
    golden_dirty: bool,
    /// Phases ended (every second ends with a reset pulse).
    phases: u64,
}

/// A remote node sending mailbox messages in the burst mode: messages in
/// flight (txid, id, bytes) and messages nacked, to send again.
struct Sender {
    at: Coords,
    inflight: Vec<(u16, u32, Vec<u8>)>,
    retry: VecDeque<(u32, Vec<u8>)>,
}

/// Many-to-one burst: several senders, each with up to two messages in
/// flight, into the NI's mailbox; software reads and pops slowly.
struct MbBurst {
    senders: Vec<Sender>,
    /// Messages to create in all.
    limit: u64,
    /// PDID of every message (MBOX_CTRL is set to it).
    pdid: u16,
    /// A consume read (MB_DATA\[0\]) is outstanding.
    reading: bool,
    /// Message ids software has read and popped.
    delivered: std::collections::HashSet<u32>,
}

/// A packet sent into the NI, awaiting its decision: the packet, its VC,
/// its number in the order of arrival (tails).
struct SentPacket {
    pkt: Packet,
    vc: u8,
    seq: u64,
}

/// The receive agent: a router local port sending flits into the NI, and
/// the memory's AXI4 write slave.
struct Rx {
    /// Landing area: window 0 covers `[land, land + REGION)`; the next
    /// REGION is outside it. Neither overlaps a source region.
    land: u64,
    /// PDID window 0 is set up with.
    pdid: u16,
    /// VCs per message class: VC `v` is of class `v / vcs`.
    vcs: usize,
    /// Per class: credits of the NI's receive ring (its size, and what the
    /// agent holds); a packet starts on a class only with `pkt` (its
    /// largest packet) of that class's credits (virtual cut-through).
    buffer: [usize; 2],
    pkt: usize,
    credits: [usize; 2],
    /// Packet made, waiting for credits of its class: words, VC.
    next: Option<(Vec<u128>, u8)>,
    /// Packet being sent: words, next flit, VC.
    sending: Option<(Vec<u128>, usize, u8)>,
    /// A flit is on `in_*` this cycle.
    flit_now: bool,
    /// Per class of the arrival VC: sent, awaiting `rx_commit`, oldest first.
    sent: [VecDeque<SentPacket>; 2],
    /// Packets sent whole so far (numbers their arrival order).
    arrivals: u64,
    /// A class-0 packet found Busy is still undecided.
    busy0: bool,
    /// The class whose Busy packet the golden model confirmed last (asked
    /// again when another class is Busy, or the golden model changed).
    busy_checked: Option<usize>,
    /// Per class: committed, credits owed: VC, flits.
    owed: [VecDeque<(u8, usize)>; 2],
    /// The memory's AXI4 write slave (times counted in the phase).
    wr: AxiWriteSlave,
    wait_commit: u64,
    load: f64,
    /// The NI's messages (emitted, not yet acknowledged) the agent may
    /// answer: destination, PDID, txid.
    outstanding: Vec<(Coords, u16, u16)>,
    /// (src, txid) pool of data packets: repeats exercise the
    /// damaged-transfer table.
    keys: Vec<(Coords, u16)>,
    /// Mailbox senders of the general mode.
    senders: Vec<Coords>,
    /// Consecutive cycles the receive path was Busy.
    busy_run: u64,
    /// Read requests still to send back to back.
    read_storm: u64,
    /// Golden writes not yet landed (B), oldest first: whether each posts
    /// a completion when it lands.
    landing: VecDeque<bool>,
    /// A completion's write was decided: software may poll CQ_COUNT.
    poll_landing: bool,
    /// The NI's messages picked whose tail has not left: destination,
    /// PDID, txid.
    sending_msgs: Vec<(Coords, u16, u16)>,
    /// A message just picked, to acknowledge at once (while it is sent),
    /// when `early_go` (every second message picked: `early_coin`).
    early: Option<(Coords, u16, u16)>,
    early_go: bool,
    early_coin: bool,
}

impl Rx {
    fn new(land: u64, vcs: usize, buffer: [usize; 2], pkt: usize) -> Rx {
        let c = |x: u32| Coords::from_bits(x).expect("22-bit coordinates");
        Rx {
            outstanding: Vec::new(),
            keys: (0..6)
                .map(|k| (c(0x1_0203 + 0x111 * (k / 3)), 40 + (k % 3) as u16))
                .collect(),
            senders: (0..4).map(|k| c(0x2_0A01 + 0x1010 * k)).collect(),
            busy_run: 0,
            read_storm: 0,
            landing: VecDeque::new(),
            poll_landing: false,
            sending_msgs: Vec::new(),
            early: None,
            early_go: false,
            early_coin: false,
            land,
            pdid: 0,
            vcs,
            buffer,
            pkt,
            credits: buffer,
            next: None,
            sending: None,
            flit_now: false,
            sent: Default::default(),
            arrivals: 0,
            busy0: false,
            busy_checked: None,
            owed: Default::default(),
            wr: AxiWriteSlave::new(),
            wait_commit: 0,
            load: 0.05,
        }
    }

    fn idle(&self) -> bool {
        self.next.is_none()
            && self.sending.is_none()
            && self.sent.iter().all(|q| q.is_empty())
            && self.owed.iter().all(|q| q.is_empty())
            && self.wr.idle()
            && self.credits == self.buffer
            && self.outstanding.is_empty()
    }

    /// No packet awaits its decision.
    fn none_sent(&self) -> bool {
        self.sent.iter().all(|q| q.is_empty())
    }

    /// Whether a packet of `class` may start (no packet being sent, the
    /// class's pool holds a largest packet).
    fn may_start(&self, class: usize) -> bool {
        self.sending.is_none() && self.credits[class] >= self.pkt
    }

    /// A random VC of `class`.
    fn vc_of(&self, class: usize, rng: &mut Rng) -> u8 {
        (class * self.vcs + rng.below(self.vcs as u64) as usize) as u8
    }

    /// The class of VC `vc`.
    fn class_of(&self, vc: u64) -> usize {
        vc as usize / self.vcs
    }
}

/// A REGION-aligned base with two free REGIONs (no source region there).
fn landing_base(regions: &[u64], lim: u64) -> u64 {
    (1..lim / REGION - 2)
        .map(|k| k * REGION)
        .find(|&b| {
            regions
                .iter()
                .all(|&r| r + REGION <= b || r >= b + 2 * REGION)
        })
        .expect("the address space has room for the landing area")
}

fn fill(mem: &mut SparseMemory, base: u64, rng: &mut Rng) {
    let mut buf = vec![0u8; REGION as usize];
    for chunk in buf.chunks_mut(8) {
        let v = rng.next_u64().to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
    mem.write(base, &buf);
}

impl NiBench {
    /// A bench of `params` (validated; the RTL must support it).
    pub fn new(params: NiRtlParams) -> Result<Self> {
        let g = params.ni.clone();
        Self::with_golden(params, g)
    }

    /// A bench whose golden model has other parameters than the RTL: only
    /// for showing that the bench catches a wrong model.
    pub fn with_golden(params: NiRtlParams, golden_params: NiParams) -> Result<Self> {
        exanet_hdl::ni::Geometry::new(&params)?;
        let me = Coords::new(3, 1, 2, 1)?;
        let mut rng = Rng::new(0xE1A5);
        let lim = 1u64 << params.ni.addr_bits;
        let mut regions: Vec<u64> = (0..3)
            .map(|_| rng.below(lim / REGION - 2) * REGION)
            .collect();
        regions.push(lim - REGION);
        let mut mem = SparseMemory::new();
        for &b in &regions {
            fill(&mut mem, b, &mut rng);
        }
        // The landing area holds random bytes too: read requests are
        // served from its second half, which no data packet writes.
        let land = landing_base(&regions, lim);
        fill(&mut mem, land, &mut rng);
        let mut golden = Ni::new(&golden_params, me)?;
        *golden.mem_mut() = mem.clone();
        golden.set_write_log(true);
        golden.set_explicit_events(true);
        let params_p = params.ni.max_payload_bytes;
        let tx = TxFlits::new(params.vc as u64, params.resp_vc as u64);
        let vcs = params.vcs_per_class;
        Ok(NiBench {
            params,
            golden_params,
            me,
            golden,
            mem,
            regions,
            ports: None,
            sw: VecDeque::new(),
            axil: AxilMaster::new(),
            wait: 0,
            tx_off: false,
            mem_r: AxiReadSlave::new(),
            tx,
            held: [0; 2],
            credit_now: None,
            cycle_in_phase: 0,
            phase_len: 0,
            draining: false,
            reset_now: false,
            load: 0.5,
            idle_run: 0,
            cov: NiCoverage::default(),
            rx: Rx::new(
                land,
                vcs,
                [rx_buffer_flits(params_p), rx_class1_flits(params_p)],
                rx_packet_flits(params_p),
            ),
            only_bad: false,
            burst: None,
            golden_dirty: true,
            phases: 0,
        })
    }

    /// Inject only packets the receive path must reject, and never move
    /// the landing window (the zero-bytes-written test).
    pub fn set_only_bad(&mut self, on: bool) {
        self.only_bad = on;
    }

    /// Many-to-one mailbox burst: `senders` remote nodes (1..=8), each with
    /// up to two messages in flight, send `limit` messages in all into the
    /// mailbox (resending each one nacked because the mailbox was full);
    /// software only reads the mailbox and pops it, slowly; one phase, no
    /// reset after power-on. Delivery counts are in [`NiCoverage`].
    pub fn set_mailbox_burst(&mut self, senders: usize, limit: u64) {
        let senders = (0..senders.clamp(1, 8) as u32)
            .map(|k| Sender {
                at: Coords::from_bits(0x0_1101 + 0x2_0100 * k).expect("22-bit coordinates"),
                inflight: Vec::new(),
                retry: VecDeque::new(),
            })
            .collect();
        self.burst = Some(MbBurst {
            senders,
            limit,
            pdid: 0,
            reading: false,
            delivered: Default::default(),
        });
    }

    /// The landing area `[base, base + 2 * REGION)` the receive agent's
    /// packets aim at, and the bytes there in the RTL's memory and the
    /// golden model's.
    pub fn landing_bytes(&self) -> (Vec<u8>, Vec<u8>) {
        let n = 2 * REGION as usize;
        (
            self.mem.read(self.rx.land, n),
            self.golden.mem().read(self.rx.land, n),
        )
    }

    /// What the run since the last [`Bench::reset`] exercised.
    pub fn coverage(&self) -> NiCoverage {
        self.cov.clone()
    }

    fn ports(&self) -> Ports {
        self.ports.expect("bind() before running")
    }

    /// Privileged set-up at the start of a phase.
    fn setup(&mut self, rng: &mut Rng) {
        let n = self.params.ni.clone();
        // Window 0: the landing area, for the receive agent's packets.
        self.rx.pdid = rng.bits(16) as u16;
        let land = self.rx.land;
        self.priv_write(regs::win_reg(0, regs::WIN_BASE_LO), land as u32);
        self.priv_write(regs::win_reg(0, regs::WIN_BASE_HI), (land >> 32) as u32);
        self.priv_write(regs::win_reg(0, regs::WIN_SIZE_LO), REGION as u32);
        self.priv_write(regs::win_reg(0, regs::WIN_SIZE_HI), 0);
        self.priv_write(
            regs::win_reg(0, regs::WIN_CTRL),
            self.rx.pdid as u32 | 1 << 31,
        );
        for c in 0..n.channels {
            self.priv_write(regs::CH_PDID_BASE + 4 * c as u32, rng.bits(16) as u32);
        }
        for _ in 0..2 * (!self.only_bad && n.windows > 1) as usize {
            let w = 1 + rng.below(n.windows as u64 - 1) as usize;
            let f = [
                regs::WIN_BASE_LO,
                regs::WIN_BASE_HI,
                regs::WIN_SIZE_LO,
                regs::WIN_SIZE_HI,
                regs::WIN_CTRL,
            ][rng.below(5) as usize];
            self.priv_write(regs::win_reg(w, f), rng.next_u64() as u32);
        }
        // The mailbox: mostly one PDID (the general mode's senders use it),
        // sometimes open; the burst's PDID exactly.
        let mb = match &mut self.burst {
            Some(b) => {
                b.pdid = rng.bits(16) as u16;
                b.pdid as u32
            }
            None => rng.next_u64() as u32 & if rng.chance(0.7) { 0xFFFF } else { !0 },
        };
        self.priv_write(regs::MBOX_CTRL, mb);
        self.priv_write(regs::CONTROL, 1);
    }

    /// A packet for the receive path (general mode), good or damaged in one
    /// way: an RdmaWrite / RdmaReadResp into the landing area (`last` and
    /// `first` random, (src, txid) often from a small pool), a mailbox
    /// message from one of a few senders, an acknowledgement of one of the
    /// NI's messages (MailboxAck, MailboxNack "full", "payload CRC" or
    /// another reason, or a stale one), or an RdmaCompletion / Nack.
    /// Damage: forged PDID, outside the window, beyond `2^addr_bits`,
    /// crossing a P boundary, misrouted, size 0, Ack type, unknown type,
    /// payload bit flip, single (corrected) and double header errors,
    /// footer bit flip, a word dropped or added, header only, sent on a VC
    /// of the other message class (WrongClass). While draining: only a
    /// clean MailboxAck of an outstanding message. Returns the words and
    /// the message class of the VC to send them on (the class of the
    /// header's type, but for WrongClass).
    fn rx_packet(&mut self, rng: &mut Rng) -> (Vec<u128>, usize) {
        let pm = self.params.ni.max_payload_bytes as u64;
        let lim = 1u64 << self.params.ni.addr_bits;
        // 0 data, 1 mailbox, 2 ack / nack of an NI message, 3 completion /
        // read nack, 4 read request.
        let storm = !self.only_bad && !self.draining && self.rx.read_storm > 0;
        let class = if self.only_bad {
            if rng.chance(0.25) {
                4
            } else {
                0
            }
        } else if self.draining {
            2
        } else if self.rx.read_storm > 0 {
            // Read requests back to back: the read queue fills (refused).
            self.rx.read_storm -= 1;
            4
        } else {
            match rng.below(100) {
                0..=44 => 0,
                45..=61 => 1,
                62..=76 => 2,
                77..=88 => 3,
                _ => 4,
            }
        };
        let kind = if self.only_bad {
            let bad = [5, 15, 23, 27, 31, 35, 38, 40, 64, 72, 80, 86, 87, 92];
            let k = bad[rng.below(bad.len() as u64) as usize];
            if k == 23 && self.params.ni.addr_bits == 42 {
                5
            } else {
                k
            }
        } else if self.draining {
            0
        } else if rng.chance(if class == 0 { 0.5 } else { 0.3 }) {
            5 + rng.below(92)
        } else {
            0
        };
        let mut size = 1 + rng.below(pm);
        let mut off = rng.below(pm - size + 1);
        // Data packets land in the first half of the landing area.
        let block = rng.below(REGION / 2 / pm);
        let mut base = self.rx.land + block * pm;
        let mut dest = self.me;
        let mut flags = 0u8;
        let (mut ptype, mut pdid, src, txid) = match class {
            0 => {
                let t = if rng.chance(0.7) {
                    PacketType::RdmaWrite
                } else {
                    PacketType::RdmaReadResp
                };
                let (s, x) = if rng.chance(0.8) {
                    self.rx.keys[rng.below(self.rx.keys.len() as u64) as usize]
                } else {
                    (
                        Coords::from_bits(rng.bits(14) as u32).expect("14-bit coordinates"),
                        rng.bits(14) as u16,
                    )
                };
                (t, self.rx.pdid, s, x)
            }
            1 => {
                let mb = self.golden.axil_read_priv(regs::MBOX_CTRL);
                let pdid = if rng.chance(0.8) {
                    mb as u16
                } else {
                    rng.bits(16) as u16
                };
                size = match rng.below(20) {
                    0 => self.params.ni.mailbox_msg_bytes as u64 + 1 + rng.below(16),
                    _ => 1 + rng.below(self.params.ni.mailbox_msg_bytes as u64),
                }
                .min(pm);
                let s = self.rx.senders[rng.below(self.rx.senders.len() as u64) as usize];
                (PacketType::Mailbox, pdid, s, rng.bits(14) as u16)
            }
            2 => {
                size = 0;
                let n = &self.params.ni;
                let slots = (n.channels * n.pkt_slots) as u64;
                let (mut s, mut pd, mut tx) = match self.rx.outstanding.len() {
                    0 => (
                        Coords::from_bits(rng.bits(22) as u32).expect("22-bit coordinates"),
                        rng.bits(16) as u16,
                        rng.below(slots + 2) as u16,
                    ),
                    k => self.rx.outstanding[rng.below(k as u64) as usize],
                };
                let t = if self.draining || rng.chance(0.5) {
                    PacketType::MailboxAck
                } else {
                    flags = match rng.below(10) {
                        0..=3 => 0, // full: retry
                        4..=5 => 6, // payload CRC: retry
                        _ => [1, 2, 3, 4, 5, 7, 8, 9, 10][rng.below(9) as usize],
                    };
                    PacketType::MailboxNack
                };
                if !self.draining && rng.chance(0.15) {
                    // Stale: another source, PDID or slot.
                    match rng.below(3) {
                        0 => {
                            s = Coords::from_bits(s.to_bits() ^ 1 << rng.below(22))
                                .expect("22-bit coordinates")
                        }
                        1 => pd ^= 1 + rng.below(0xFFFF) as u16,
                        _ => tx = rng.below(slots + 2) as u16,
                    }
                }
                (t, pd, s, tx)
            }
            4 => {
                size = 16;
                let s = if rng.chance(0.5) {
                    self.rx.keys[rng.below(self.rx.keys.len() as u64) as usize].0
                } else {
                    Coords::from_bits(rng.bits(22) as u32).expect("22-bit coordinates")
                };
                (
                    PacketType::RdmaReadReq,
                    self.rx.pdid,
                    s,
                    rng.bits(14) as u16,
                )
            }
            _ => {
                size = 0;
                let t = if rng.chance(0.5) {
                    flags = if rng.chance(0.05) {
                        3 + rng.below(5) as u8
                    } else {
                        rng.below(3) as u8
                    };
                    PacketType::RdmaCompletion
                } else {
                    // A reject reason or READ_BUSY; rarely no valid code.
                    flags = if rng.chance(0.05) {
                        [0, NACK_READ_BUSY + 1, 15][rng.below(3) as usize]
                    } else {
                        1 + rng.below(NACK_READ_BUSY as u64) as u8
                    };
                    PacketType::Nack
                };
                (
                    t,
                    rng.bits(16) as u16,
                    Coords::from_bits(rng.bits(22) as u32).expect("22-bit coordinates"),
                    rng.bits(14) as u16,
                )
            }
        };
        // A read request: the bytes asked for, in the second half of the
        // landing area (no data packet writes there: the bytes the RTL
        // reads are the golden model's whatever the timing).
        // (Up to 12 packets: long reads take the link from the channels.)
        // (A storm's reads are long: the engine is slow to drain them.)
        let rd_len = match rng.below(100) {
            _ if storm => 3 * pm + 1 + rng.below(9 * pm),
            0..=59 => 1 + rng.below(64),
            60..=94 => 1 + rng.below(3 * pm),
            _ => 1 + rng.below(12 * pm),
        };
        let mut rd_addr = self.rx.land + REGION / 2 + rng.below(REGION / 2 - rd_len + 1);
        let mut rd_req = ReadRequest {
            land: rng.bits(42).min((1 << 42) - rd_len),
            len: rd_len as u32,
        };
        if rng.chance(0.3) {
            rd_req.land &= !0xFFF;
        }
        let is_rd = class == 4;
        if is_rd && !self.only_bad && self.rx.read_storm == 0 && rng.chance(0.15) {
            // More than the read queue holds: the last ones are refused
            // (Nack READ_BUSY) unless the engine serves fast enough.
            self.rx.read_storm = self.params.ni.read_queue_depth as u64 + 1 + rng.below(4);
        }
        match kind {
            5..=14 if class <= 1 || is_rd => pdid ^= 1 + rng.below(0xFFFF) as u16, // forged PDID
            15..=22 if class == 0 => base += REGION, // outside window 0
            15..=22 if is_rd => rd_addr += REGION / 2 + rng.below(REGION / 4), // outside window 0
            23..=26 if class == 0 && self.params.ni.addr_bits < 42 => base = lim + block * pm, // beyond 2^addr_bits
            23..=26 if is_rd && self.params.ni.addr_bits < 42 => {
                // ends beyond 2^addr_bits
                rd_addr = lim - rng.below(rd_len.min(REGION / 4));
            }
            27..=30 if is_rd => {
                // runs past the end of window 0
                let a = 1 + rng.below(256);
                rd_addr = self.rx.land + REGION - a;
                rd_req.len = (a + 1 + rng.below(256)) as u32;
            }
            27..=30 if class == 0 && pm > 1 => {
                // crosses a P boundary
                size = 2 + rng.below(pm - 1);
                off = pm - 1;
            }
            31..=34 => {
                dest = Coords::from_bits(self.me.to_bits() ^ (1 << rng.below(14)))
                    .expect("22-bit coordinates")
            }
            35..=37 => ptype = PacketType::Ack,
            38..=39 if class <= 1 || is_rd => size = 0,
            _ => {}
        }
        if ptype == PacketType::Ack {
            size = 0;
        }
        let vaddr = match class {
            0 => base + off,
            4 => rd_addr,
            _ => 0,
        };
        let mut h = Header::new(ptype, dest);
        h.set_vaddr(vaddr & ((1 << 42) - 1))
            .expect("42-bit address")
            .set_pdid(pdid)
            .expect("16-bit PDID");
        let mut f = Footer::new(src);
        if class == 0 {
            f.set_first(rng.chance(0.3))
                .set_last(rng.chance(0.5))
                .set_notify(rng.chance(0.5));
            f.set_seq(rng.bits(14) as u16).expect("14-bit seq");
        } else {
            f.set_first(true).set_last(true);
        }
        if is_rd {
            f.set_notify(rng.chance(0.5));
        }
        f.set_txid(txid).expect("14-bit txid");
        f.set_flags(flags).expect("8-bit flags");
        let mut payload: Vec<u8> = (0..size).map(|_| rng.bits(8) as u8).collect();
        if is_rd && size == 16 {
            payload = rd_req.to_payload().to_vec();
            if kind == 0 && rng.chance(0.1) {
                // A malformed request (FORMAT): length 0, a reserved byte
                // set, landing end beyond 2^42, or not a single packet.
                match rng.below(4) {
                    0 => payload[8..12].fill(0),
                    1 => payload[12 + rng.below(4) as usize] = 1 + rng.bits(7) as u8,
                    2 => {
                        let land = (1u64 << 42) - rng.below(rd_req.len as u64);
                        payload[..8].copy_from_slice(&land.to_le_bytes());
                    }
                    _ => {
                        match rng.below(3) {
                            0 => f.set_first(false),
                            1 => f.set_last(false),
                            _ => f.set_seq(1 + rng.below(100) as u16).expect("14-bit seq"),
                        };
                    }
                }
            }
        }
        let mut words = Packet::build(h, f, &payload).words;
        let n = words.len();
        match kind {
            40..=51 if size > 0 => {
                // payload bit flip inside the size bytes
                let b = rng.below(size);
                words[1 + b as usize / 16] ^= 1u128 << (8 * (b % 16) + rng.below(8));
            }
            52..=63 => words[0] ^= 1u128 << rng.below(128), // single header error
            64..=71 => {
                let a = rng.below(120);
                let b = (a + 1 + rng.below(119)) % 120;
                words[0] ^= 1u128 << a | 1u128 << b; // double error (body + check bits)
            }
            72..=79 => words[n - 1] ^= 1u128 << rng.below(128), // footer bit flip
            80..=83 if n > 1 => {
                words.remove(1 + rng.below(n as u64 - 1) as usize);
            }
            84..=85 if n < self.rx.pkt => words.insert(1, rng.next_u128()),
            86 => words.truncate(1),
            87..=91 => {
                // a type code no packet has, with a valid ECC
                let unknown = [0x00u128, 0x05, 0x0F, 0x16, 0x1F][rng.below(5) as usize];
                let body = (words[0] & !(0x1F << 43) | unknown << 43) & ((1 << 112) - 1);
                words[0] = body | (header_ecc(body) as u128) << 112;
            }
            _ => {}
        }
        // The class of the header's type; a few damaged ones on the other
        // class's VCs (rejected WrongClass when nothing else is wrong).
        let mclass = ptype.class();
        if (92..=96).contains(&kind) {
            self.cov.wrong_class_sent += 1;
            (words, 1 - mclass)
        } else {
            (words, mclass)
        }
    }

    /// A MailboxAck or MailboxNack (full, or a final reason) naming the
    /// NI's message `key` (destination, PDID, txid), as its destination
    /// would send it.
    fn early_ack(&self, rng: &mut Rng, key: (Coords, u16, u16)) -> Vec<u128> {
        let (ptype, flags) = match rng.below(4) {
            0 | 1 => (PacketType::MailboxAck, 0),
            2 => (PacketType::MailboxNack, 0),
            _ => (PacketType::MailboxNack, 1 + rng.below(10) as u8),
        };
        let mut h = Header::new(ptype, self.me);
        h.set_pdid(key.1).expect("16-bit PDID");
        let mut f = Footer::new(key.0);
        f.set_first(true).set_last(true);
        f.set_txid(key.2).expect("14-bit txid");
        f.set_flags(flags).expect("8-bit flags");
        Packet::build(h, f, &[]).words
    }

    /// The next message of the many-to-one burst, if a sender has one to
    /// send (a nacked message again, or a new one) and a free txid.
    fn burst_packet(&mut self, rng: &mut Rng) -> Option<Vec<u128>> {
        let me = self.me;
        let msg_bytes = self.params.ni.mailbox_msg_bytes as u64;
        let created = self.cov.burst_created;
        let b = self.burst.as_mut()?;
        let k = rng.below(b.senders.len() as u64) as usize;
        let pdid = b.pdid;
        let room = created < b.limit;
        let sd = &mut b.senders[k];
        if sd.inflight.len() >= 2 {
            return None;
        }
        let (id, data) = match sd.retry.pop_front() {
            Some(m) => m,
            None if room => {
                // Word 0 names the message: a non-zero id, unique in the run.
                let id = 0x5A00_0000 | (k as u32) << 16 | created as u32;
                let len = 4 + rng.below(msg_bytes - 3);
                let mut data: Vec<u8> = (0..len).map(|_| rng.bits(8) as u8).collect();
                data[..4].copy_from_slice(&id.to_le_bytes());
                self.cov.burst_created += 1;
                (id, data)
            }
            None => return None,
        };
        let txid = if sd.inflight.iter().any(|m| m.0 == 0) {
            1
        } else {
            0
        };
        let mut h = Header::new(PacketType::Mailbox, me);
        h.set_pdid(pdid).expect("16-bit PDID");
        let mut f = Footer::new(sd.at);
        f.set_first(true).set_last(true);
        f.set_txid(txid).expect("14-bit txid");
        let words = Packet::build(h, f, &data).words;
        sd.inflight.push((txid, id, data));
        Some(words)
    }

    /// The NI answered a burst message (a MailboxAck or MailboxNack it emits).
    fn burst_answer(&mut self, pk: &Packet, h: &Header) {
        let Some(b) = self.burst.as_mut() else {
            return;
        };
        let f = Footer::from_bits(pk.footer_word()).expect("golden footer");
        let Some(sd) = b.senders.iter_mut().find(|s| s.at == h.dest()) else {
            self.cov.burst_other += 1;
            return;
        };
        let Some(i) = sd.inflight.iter().position(|m| m.0 == f.txid()) else {
            self.cov.burst_other += 1;
            return;
        };
        let (_, id, data) = sd.inflight.remove(i);
        match (h.ptype(), f.flags()) {
            (PacketType::MailboxAck, _) => {}
            (PacketType::MailboxNack, 0) => {
                self.cov.burst_nacks += 1;
                sd.retry.push_back((id, data));
            }
            _ => self.cov.burst_other += 1,
        }
    }

    fn priv_write(&mut self, addr: u32, data: u32) {
        self.sw.push_back(Op::Write {
            addr,
            data,
            prot: true,
        });
    }

    fn user_write(&mut self, addr: u32, data: u32) {
        self.sw.push_back(Op::Write {
            addr,
            data,
            prot: false,
        });
    }

    /// One random software action.
    fn generate(&mut self, rng: &mut Rng) {
        if let Some(b) = &mut self.burst {
            // Burst mode: read the head message's first word (its id); the
            // pop follows only when a message was there (see `check`).
            if !b.reading && rng.chance(0.5) {
                b.reading = true;
                self.sw.push_back(Op::Read {
                    addr: regs::MB_PAGE + regs::MB_DATA,
                    prot: false,
                });
            } else {
                self.sw.push_back(Op::Wait(20 + rng.below(100) as u32));
            }
            return;
        }
        if self.only_bad && rng.chance(0.2) {
            // The driver handles the head error entry: reads it, pops it.
            for k in 0..5 {
                self.sw.push_back(Op::Read {
                    addr: regs::ERRQ_W0 + 4 * k,
                    prot: true,
                });
            }
            self.priv_write(regs::ERRQ_POP, 0);
            return;
        }
        let n = self.params.ni.clone();
        let c = rng.below(n.channels as u64) as usize;
        let page = regs::ch_page(c);
        let r = rng.below(100);
        let mw = n.mailbox_msg_bytes as u64 / 4;
        if r < 36 {
            self.descriptor(rng, page);
        } else if (66..72).contains(&r) {
            // Software consumes the head completion or message, then pops.
            let user = |addr| Op::Read { addr, prot: false };
            if rng.chance(0.5) {
                for k in 0..3 {
                    self.sw.push_back(user(regs::CQ_PAGE + regs::CQ_W0 + 4 * k));
                }
                self.user_write(regs::CQ_PAGE + regs::CQ_POP, rng.next_u64() as u32);
                if rng.chance(0.3) {
                    // The driver reads STATUS and clears what it saw.
                    self.sw.push_back(Op::Read {
                        addr: regs::STATUS,
                        prot: true,
                    });
                    self.priv_write(regs::STATUS, rng.next_u64() as u32 & regs::ST_STICKY);
                }
            } else {
                for a in [regs::MB_COUNT, regs::MB_LEN, regs::MB_SRC, regs::MB_PDID] {
                    if rng.chance(0.6) {
                        self.sw.push_back(user(regs::MB_PAGE + a));
                    }
                }
                for i in 0..rng.below(mw + 1) as u32 {
                    self.sw
                        .push_back(user(regs::MB_PAGE + regs::MB_DATA + 4 * i));
                }
                self.user_write(regs::MB_PAGE + regs::MB_POP, rng.next_u64() as u32);
            }
        } else if r < 48 {
            // Packetizer send.
            let words = n.mailbox_msg_bytes / 4;
            for _ in 0..rng.below(words as u64 + 1) {
                let i = rng.below(words as u64) as u32;
                self.user_write(page + regs::PKT_DATA + 4 * i, rng.next_u64() as u32);
            }
            if rng.chance(0.7) {
                self.user_write(page + regs::PKT_DEST, rng.next_u64() as u32);
            }
            let len = match rng.below(20) {
                0 => 0,
                1 => n.mailbox_msg_bytes as u64 + 1 + rng.below(300),
                _ => 1 + rng.below(n.mailbox_msg_bytes as u64),
            };
            self.user_write(
                page + regs::PKT_SEND,
                len as u32 | (rng.bits(23) as u32) << 9,
            );
        } else if r < 66 {
            // Reads of implemented registers.
            let prot = rng.chance(0.3);
            let addr = match rng.below(14) {
                7 | 8 | 13 => regs::ERRQ_COUNT + 4 * rng.below(6) as u32, // ERRQ_COUNT, W0..W4
                10 => regs::CQ_PAGE + 4 * rng.below(6) as u32, // CQ_COUNT, W0..W2, POP, unmapped
                11 => {
                    regs::MB_PAGE
                        + match rng.below(3) {
                            0 => 4 * rng.below(6) as u32, // MB_COUNT..MB_POP, unmapped
                            _ => regs::MB_DATA + 4 * rng.below(mw + 1) as u32, // last: unmapped
                        }
                }
                12 => [
                    regs::STATUS,
                    regs::STATUS,
                    regs::STATUS,
                    regs::CNT_BASE + 4 * regs::cnt::MB_FULL_NACKS as u32,
                    regs::CNT_BASE + 4 * regs::cnt::MB_RETRIES as u32,
                    regs::CNT_BASE + 4 * regs::cnt::MB_DENIED as u32,
                    regs::CNT_BASE + 4 * regs::cnt::RD_BUSY_NACKS as u32,
                    regs::REJ_BASE + 4 * RejectReason::WrongClass.code() as u32,
                ][rng.below(8) as usize],
                0 => page + regs::CH_STATUS,
                1 => page + 4 * rng.below(11) as u32, // 0x00..0x28
                2 => page + regs::PKT_DATA + 4 * rng.below(n.mailbox_msg_bytes as u64 / 4) as u32,
                3 => page + [regs::PKT_DEST, regs::PKT_SEND, regs::DOORBELL][rng.below(3) as usize],
                4 => [
                    regs::ID,
                    regs::PARAMS0,
                    regs::PARAMS1,
                    regs::PARAMS2,
                    regs::PARAMS3,
                    regs::PARAMS4,
                    regs::COORDS,
                    regs::CONTROL,
                    regs::MBOX_CTRL,
                    regs::CNT_BASE + 4 * regs::cnt::TX_PACKETS as u32,
                    regs::CNT_BASE + 4 * regs::cnt::TX_PAYLOAD_BYTES as u32,
                    regs::CNT_BASE + 4 * regs::cnt::RX_PACKETS as u32,
                    regs::CNT_BASE + 4 * regs::cnt::RX_REJECTED as u32,
                    regs::CNT_BASE + 4 * regs::cnt::HDR_CORRECTED as u32,
                    regs::CNT_BASE + 4 * regs::cnt::RX_DATA_BYTES as u32,
                    regs::REJ_BASE + 4 * (1 + rng.below(RejectReason::MAX_CODE as u64) as u32),
                    regs::REJ_BASE + 4 * (1 + rng.below(RejectReason::MAX_CODE as u64) as u32),
                    regs::ERRQ_COUNT,
                    regs::ERRQ_W0 + 4 * rng.below(5) as u32,
                    regs::ERRQ_W0 + 4 * rng.below(5) as u32,
                    regs::ERRQ_W0 + 4 * rng.below(5) as u32,
                    regs::ERRQ_POP,
                ][rng.below(22) as usize],
                5 => regs::CH_PDID_BASE + 4 * rng.below(n.channels as u64) as u32,
                6 => regs::win_reg(
                    rng.below(n.windows as u64) as usize,
                    4 * rng.below(5) as u32,
                ),
                _ => self.bad_addr(rng),
            };
            self.sw.push_back(Op::Read {
                addr,
                prot: prot || rng.chance(0.5),
            });
        } else if r < 78 {
            // Privileged configuration.
            match rng.below(4) {
                0 => self.priv_write(regs::CH_PDID_BASE + 4 * c as u32, rng.bits(16) as u32),
                1 if !self.only_bad => {
                    // Window 0 (the landing area) only changes PDID or
                    // enable, and is usually restored.
                    let w = rng.below(n.windows as u64) as usize;
                    if w == 0 {
                        let ctrl = if rng.chance(0.7) {
                            self.rx.pdid as u32 | 1 << 31
                        } else {
                            rng.next_u64() as u32
                        };
                        self.priv_write(regs::win_reg(0, regs::WIN_CTRL), ctrl)
                    } else {
                        self.priv_write(
                            regs::win_reg(w, 4 * rng.below(5) as u32),
                            rng.next_u64() as u32,
                        )
                    }
                }
                1 | 2 if rng.chance(0.5) => {
                    // Software drains the error queue.
                    for _ in 0..1 + rng.below(4) {
                        self.priv_write(regs::ERRQ_POP, rng.next_u64() as u32)
                    }
                }
                1 | 2 if rng.chance(0.5) => {
                    // STATUS: write-one-to-clear some sticky bits.
                    self.priv_write(regs::STATUS, rng.next_u64() as u32)
                }
                1 | 2 => {
                    let v = rng.next_u64() as u32 & if rng.chance(0.7) { 0xFFFF } else { !0 };
                    self.priv_write(regs::MBOX_CTRL, v)
                }
                _ => {
                    // TX_ENABLE off for a while, then on again.
                    if !self.tx_off && rng.chance(0.3) {
                        self.priv_write(regs::CONTROL, 0);
                        self.tx_off = true;
                    } else {
                        self.priv_write(regs::CONTROL, 1 | (rng.next_u64() as u32 & !1));
                        self.tx_off = false;
                    }
                }
            }
        } else if r < 86 {
            // Bad or refused accesses.
            let v = rng.next_u64() as u32;
            match rng.below(5) {
                0 => self.user_write(page + regs::CH_PDID, v),
                1 => self.user_write(page + regs::CH_ERR, v),
                2 => self.user_write(page + regs::CH_STATUS, v),
                3 if rng.chance(0.3) => {
                    // Read-only or unmapped registers of the CQ and mailbox pages.
                    let a = [regs::CQ_PAGE, regs::MB_PAGE][rng.below(2) as usize]
                        + [0x000, 0x004, 0x008, 0x00C, 0x014, 0x100][rng.below(6) as usize];
                    self.user_write(a, v)
                }
                3 => self.user_write(4 * rng.below(0x100) as u32, v), // user to page 0
                _ => {
                    let a = self.bad_addr(rng);
                    self.sw.push_back(Op::Write {
                        addr: a,
                        data: v,
                        prot: rng.chance(0.5),
                    })
                }
            }
        } else {
            self.sw.push_back(Op::Wait(1 + rng.below(200) as u32));
        }
    }

    /// An address no register answers (in both models), or an unaligned one.
    fn bad_addr(&self, rng: &mut Rng) -> u32 {
        let n = &self.params.ni;
        match rng.below(4) {
            0 => {
                regs::ch_page(n.channels)
                    + 4 * rng.below(1024) as u32
                    + (rng.below(0xFF - 3 - n.channels as u64) as u32) * regs::PAGE
            }
            1 => {
                regs::ch_page(rng.below(n.channels as u64) as usize)
                    + [
                        0x00C,
                        0x030,
                        0x048,
                        0x0FC,
                        0x100 + n.mailbox_msg_bytes as u32,
                        0xFFC,
                    ][rng.below(6) as usize]
            }
            2 => [
                0x018,
                0x030,
                0x0E0,
                0x100 + 4 * n.channels as u32,
                0x200 + 0x20 * n.windows as u32,
                0x214,
                0xFFC,
            ][rng.below(7) as usize],
            _ => (rng.bits(20) as u32 & !3) | (1 + rng.below(3) as u32),
        }
    }

    fn descriptor(&mut self, rng: &mut Rng, page: u32) {
        let n = &self.params.ni;
        let lim = 1u64 << n.addr_bits;
        // Long transfers: up to 80 packets at small packet sizes (so that
        // one transfer does not hold the only channel for most of a phase).
        let long = 80 * n.max_payload_bytes as u64;
        let len: u64 = match rng.below(100) {
            0..=44 => 1 + rng.below(64),
            45..=79 => 1 + rng.below(700),
            80..=94 => 1 + rng.below(5000.min(long)),
            95..=97 => 1 + rng.below(20000.min(long)),
            _ => 0,
        };
        let base = self.regions[rng.below(self.regions.len() as u64) as usize];
        let mut laddr = base + rng.below(REGION - 20000);
        if rng.chance(0.03) {
            laddr = lim - len.max(1) + rng.below(3); // may run past the limit
        }
        let mut raddr = rng.bits(42);
        if rng.chance(0.3) {
            raddr &= !0xFFF; // page-aligned landing
        }
        if rng.chance(0.03) {
            raddr = (1u64 << 42) - len.max(1) + rng.below(3);
        }
        let op = match rng.below(100) {
            0..=74 => 0,
            75..=96 => 1,
            _ => 2 + rng.below(2) as u32,
        };
        let ctrl = op
            | (rng.below(2) as u32) << 4
            | (rng.bits(14) as u32) << 16
            | (rng.next_u64() as u32 & 0xC000_FFE0);
        let writes = [
            (regs::DESC_LADDR_LO, laddr as u32),
            (regs::DESC_LADDR_HI, (laddr >> 32) as u32),
            (regs::DESC_RADDR_LO, raddr as u32),
            (
                regs::DESC_RADDR_HI,
                (raddr >> 32) as u32 | (rng.bits(22) as u32) << 10,
            ),
            (regs::DESC_LEN, len as u32),
            (regs::DESC_DEST, rng.next_u64() as u32),
            (regs::DESC_CTRL, ctrl),
        ];
        for (off, v) in writes {
            if rng.chance(0.9) {
                self.user_write(page + off, v);
            }
        }
        self.user_write(page + regs::DOORBELL, rng.next_u64() as u32);
    }

    /// A new phase: length, loads, privileged set-up.
    fn start_phase(&mut self) {
        self.draining = false;
        self.cycle_in_phase = 0;
        let mut rng = Rng::new(
            (self.cov.resets + 16 * self.cov.phases_no_reset).wrapping_mul(0x9E37_79B9)
                ^ self.cov.flits,
        );
        self.phase_len = if self.burst.is_some() {
            u64::MAX
        } else {
            1000 + rng.below(8000)
        };
        self.load = [0.9, 0.5, 0.2, 0.05][rng.below(4) as usize];
        self.tx_off = false;
        self.rx.load = if self.only_bad {
            0.6
        } else if self.burst.is_some() {
            0.5
        } else {
            [0.5, 0.2, 0.05][rng.below(3) as usize]
        };
        self.setup(&mut rng);
    }

    fn idle(&self) -> bool {
        self.sw.is_empty()
            && self.axil.idle()
            && self.tx.idle()
            && self.mem_r.idle()
            && self.held == [0; 2]
            && !self.golden.has_packet()
            && self.rx.idle()
    }

    /// The checks of one cycle (see the module doc); the first failure is
    /// the `Err`.
    fn check_cycle(&mut self, cycle: u64) -> Result<(), Mismatch> {
        let p = self.ports();
        if self.reset_now {
            return Ok(());
        }
        let rep = Report { cycle, prefix: "" };
        let bad = |port: &str, e: String, a: String| rep.bad(port, e, a);
        // 1. A read accepted: the golden read of the same state.
        if p.ni.arready.get() == 1 && self.rx.landing.iter().any(|&c| c) {
            if let Some(Access::Read { addr, .. }) = self.axil.current() {
                let cq = regs::CQ_PAGE;
                if [cq + regs::CQ_COUNT, cq + regs::CQ_W0, regs::STATUS].contains(addr) {
                    self.cov.cq_reads_landing += 1;
                }
            }
        }
        let wr_fire = self.axil.accept_read(&p.ni, &mut self.golden, rep)?;
        // 2. Picks: a response (the response lane), then a request.
        let busy = p.ni.tx_busy.get() == 1;
        let picks = check_picks(&p.ni, &mut self.golden, rep)?;
        for (class, pk) in [(1, picks.response), (0, picks.request)] {
            let Some(pk) = pk else { continue };
            self.golden_dirty = true;
            let h = Header::from_bits(pk.header_word()).expect("golden header");
            let f = Footer::from_bits(pk.footer_word()).expect("golden footer");
            match h.ptype() {
                PacketType::RdmaWrite => self.cov.writes += 1,
                PacketType::RdmaReadReq => self.cov.read_reqs += 1,
                // (The receive agent may acknowledge it once its tail
                // flit has left: see the flit checks; or at once, a forged
                // ack while it is being sent, which must be Stale.)
                PacketType::Mailbox => {
                    self.cov.messages += 1;
                    let key = (h.dest(), h.pdid(), f.txid());
                    self.rx.sending_msgs.push(key);
                    if !self.draining && self.burst.is_none() && !self.only_bad {
                        self.rx.early = Some(key);
                        self.rx.early_go = self.rx.early_coin;
                        self.rx.early_coin = !self.rx.early_coin;
                    }
                }
                PacketType::MailboxAck => self.cov.resp_acks += 1,
                PacketType::MailboxNack => self.cov.resp_mb_nacks += 1,
                PacketType::RdmaCompletion => {
                    self.cov.resp_completions += 1;
                    self.cov.cq_status[f.flags() as usize & 3] += 1;
                }
                PacketType::RdmaReadResp => self.cov.read_resps += 1,
                _ => {
                    self.cov.resp_read_nacks += 1;
                    self.cov.resp_read_busy += (f.flags() == NACK_READ_BUSY) as u64;
                }
            }
            if matches!(h.ptype(), PacketType::MailboxAck | PacketType::MailboxNack) {
                self.burst_answer(&pk, &h);
            }
            self.tx.picked(class, pk, h.pdid());
        }
        // 3. A packet decided by the receive path: the golden receives it.
        // The class of the packet decided (or found Busy): of its arrival VC.
        let class = p.ni.rx_class.get() as usize;
        if p.ni.rx_commit.get() == 1 {
            let Some(SentPacket { pkt, vc, seq }) = self.rx.sent[class].pop_front() else {
                return bad(
                    &format!("rx_commit (rx_class {class})"),
                    format!("0 (no packet sent on a class-{class} VC)"),
                    "1".into(),
                );
            };
            self.cov.rx_by_class[class] += 1;
            if class == 1 {
                // Decided out of arrival order: an older class-0 packet
                // waits (complete), perhaps found Busy.
                if self.rx.sent[0].front().is_some_and(|o| o.seq < seq) {
                    self.cov.class1_overtakes += 1;
                }
                self.cov.class1_past_busy += self.rx.busy0 as u64;
            } else {
                self.rx.busy0 = false;
            }
            let before = *self.golden.counters();
            let outcome = self.golden.receive_packet_on(&pkt, class);
            // An acknowledgement of a message still being sent (on a VC of
            // its class): Stale.
            if let (Ok((h, _)), Ok(f)) = (
                Header::decode(pkt.header_word()),
                Footer::from_bits(pkt.footer_word()),
            ) {
                let key = (f.src(), h.pdid(), f.txid());
                if matches!(h.ptype(), PacketType::MailboxAck | PacketType::MailboxNack)
                    && h.ptype().class() == class
                    && h.dest() == self.me
                    && self.rx.sending_msgs.contains(&key)
                {
                    self.cov.acks_while_sending += 1;
                    if outcome != RxOutcome::Rejected(exanet_sim::ni::RejectReason::Stale) {
                        return bad(
                            "rx_commit",
                            "golden Stale (an ack of a message still being sent)".into(),
                            format!("golden outcome {outcome:?}"),
                        );
                    }
                }
            }
            let read_req = Header::decode(pkt.header_word())
                .is_ok_and(|(h, _)| h.ptype() == PacketType::RdmaReadReq);
            self.cov.read_reqs_in += read_req as u64;
            self.golden_dirty = true;
            self.rx.busy_run = 0;
            self.cov.rx_packets += 1;
            match outcome {
                RxOutcome::Accepted => {
                    self.cov.rx_accepted += 1;
                    let after = self.golden.counters();
                    if after.hdr_corrected != before.hdr_corrected {
                        self.cov.rx_corrected += 1;
                    }
                    // (The header may carry a corrected error: decode it.)
                    let h = Header::decode(pkt.header_word()).expect("accepted").0;
                    let f = Footer::from_bits(pkt.footer_word()).expect("accepted");
                    match h.ptype() {
                        PacketType::RdmaWrite | PacketType::RdmaReadResp => {
                            self.cov.rx_data += 1;
                            self.cov.rx_completions += f.last() as u64;
                        }
                        PacketType::Mailbox => self.cov.mb_queued += 1,
                        PacketType::RdmaCompletion => self.cov.notify_in += 1,
                        PacketType::Nack => self.cov.nack_in += 1,
                        PacketType::RdmaReadReq => self.cov.read_jobs += 1,
                        _ => {
                            if after.mb_retries != before.mb_retries {
                                self.cov.acks_retried += 1;
                            } else if after.mb_denied != before.mb_denied {
                                self.cov.acks_denied += 1;
                            } else {
                                self.cov.acks_delivered += 1;
                            }
                            let key = (f.src(), h.pdid(), f.txid());
                            self.rx.outstanding.retain(|&o| o != key);
                        }
                    }
                }
                // A message with the mailbox full, or a read request with
                // the read queue full: a nack is sent.
                RxOutcome::Refused if read_req => self.cov.read_refused += 1,
                RxOutcome::Refused => self.cov.mb_refused += 1,
                RxOutcome::Rejected(r) => self.cov.rx_rejected[r.code() as usize] += 1,
                RxOutcome::Busy => {
                    return bad(
                        "rx_commit",
                        "0 (golden: Busy, a queue the packet needs is full)".into(),
                        "1".into(),
                    )
                }
            }

            let pdid = Header::from_bits(pkt.header_word()).map_or(0, |h| h.pdid());
            let writes = self.golden.take_writes();
            // An accepted data packet: one write; with last = 1 it posts a
            // completion when it lands.
            let posts = outcome == RxOutcome::Accepted
                && Footer::from_bits(pkt.footer_word()).is_ok_and(|f| f.last());
            for _ in &writes {
                self.rx.landing.push_back(posts);
                self.rx.poll_landing |= posts;
            }
            self.rx.wr.expect(writes, pdid);
            self.rx.owed[class].push_back((vc, pkt.words.len()));
            self.rx.wait_commit = 0;
        } else if p.ni.rx_busy.get() == 1 {
            // Busy: the golden model must refuse the packet too (no effect).
            let Some(sp) = self.rx.sent[class].front() else {
                return bad(
                    &format!("rx_busy (rx_class {class})"),
                    format!("0 (no packet sent on a class-{class} VC)"),
                    "1".into(),
                );
            };
            self.cov.busy_cycles += 1;
            self.rx.busy_run += 1;
            self.rx.busy0 |= class == 0;
            if self.golden_dirty || self.rx.busy_checked != Some(class) {
                let outcome = self.golden.receive_packet_on(&sp.pkt, class);
                self.cov.busy_checks += 1;
                self.golden_dirty = false;
                self.rx.busy_checked = Some(class);
                if outcome != RxOutcome::Busy {
                    return bad(
                        &format!("rx_busy (rx_class {class})"),
                        format!("0 (golden outcome {outcome:?})"),
                        "1".into(),
                    );
                }
            }
        } else if !self.rx.none_sent() {
            self.rx.wait_commit += 1;
            if self.rx.wait_commit > 2000 {
                return bad(
                    "rx_commit",
                    "a decision within 2000 cycles of the tail".into(),
                    "none".into(),
                );
            }
        }
        if p.credit_out_valid.get() == 1 {
            // A word freed in ring `c` (the class of its VC): the next
            // credit that class owes, in the order of its decisions.
            let cvc = p.credit_out_vc.get();
            let c = self.rx.class_of(cvc);
            if c > 1 {
                return bad(
                    "credit_out_vc",
                    format!("a VC below {}", 2 * self.rx.vcs),
                    format!("{cvc}"),
                );
            }
            let Some((vc, n)) = self.rx.owed[c].front_mut() else {
                return bad(
                    &format!("credit_out_valid (VC {cvc}, class {c})"),
                    "0 (no credit owed)".into(),
                    "1".into(),
                );
            };
            if cvc != *vc as u64 {
                return bad("credit_out_vc", format!("{vc}"), format!("{cvc}"));
            }
            *n -= 1;
            if *n == 0 {
                self.rx.owed[c].pop_front();
            }
            self.rx.credits[c] += 1;
        }
        // AXI4 write: one burst per golden write, strobes exactly its bytes;
        // its B: the golden write lands (completion and notify posted now,
        // visible from the next cycle, as in the RTL).
        let ev = self
            .rx
            .wr
            .check(&p.ni, rep, self.cycle_in_phase, &mut self.mem)?;
        if let Some(n) = ev.written {
            self.cov.rx_writes += 1;
            self.cov.rx_write_bytes += n as u64;
        }
        if ev.landed {
            if let Err(e) = self.golden.write_landed() {
                return bad("m_bvalid && m_bready", format!("no B ({e})"), "B".into());
            }
            self.rx.landing.pop_front();
            self.golden_dirty = true;
            self.cov.landed += 1;
        }
        // 4. A write accepted.
        if wr_fire {
            let (addr, data, prot, ()) = self.axil.take_write(rep)?;
            let pr = if prot { Prot::Privileged } else { Prot::User };
            let cq_n = self.golden.axil_read(regs::CQ_PAGE + regs::CQ_COUNT);
            let mb_n = self.golden.axil_read(regs::MB_PAGE + regs::MB_COUNT);
            let r = self.golden.axil_write_prot(addr, data, pr);
            self.golden_dirty = true;
            if r == AxilResp::Okay {
                if addr == regs::CQ_PAGE + regs::CQ_POP && cq_n > 0 {
                    self.cov.cq_pops += 1;
                }
                if addr == regs::MB_PAGE + regs::MB_POP && mb_n > 0 {
                    self.cov.mb_pops += 1;
                }
                if addr == regs::STATUS && data & regs::ST_STICKY != 0 {
                    self.cov.status_clears += 1;
                }
            }
            if r == AxilResp::SlvErr {
                let off = addr % regs::PAGE;
                if addr >= regs::CH_PAGE0 && off == regs::DOORBELL {
                    self.cov.refused_doorbells += 1;
                }
                if addr >= regs::CH_PAGE0 && off == regs::PKT_SEND {
                    self.cov.refused_sends += 1;
                }
            }
            if addr == regs::ERRQ_POP && prot && r == AxilResp::Okay {
                self.cov.errq_pops += 1;
            }
            self.axil.wrote(addr, r);
        }
        // 5. Responses.
        if let Some((_, r)) = self.axil.response_b(&p.ni, rep)? {
            self.cov.axil_writes += 1;
            self.cov.slverr += (r == AxilResp::SlvErr) as u64;
        }
        if let Some((addr, v, r)) = self.axil.response_r(&p.ni, rep)? {
            self.cov.axil_reads += 1;
            self.cov.slverr += (r == AxilResp::SlvErr) as u64;
            if (regs::ERRQ_W0..regs::ERRQ_POP).contains(&addr) && v != 0 {
                self.cov.errq_words += 1;
            }
            if addr == regs::CQ_PAGE + regs::CQ_W0 && v != 0 {
                self.cov.cq_status[(v >> 4 & 3) as usize] += 1;
            }
            if (regs::MB_PAGE + regs::MB_DATA..regs::MB_PAGE + 0x200).contains(&addr) && v != 0 {
                self.cov.mb_words += 1;
            }
            if addr == regs::STATUS && r == AxilResp::Okay && v & regs::ST_STICKY != 0 {
                self.cov.status_sticky += 1;
            }
            if let Some(b) = &mut self.burst {
                if addr == regs::MB_PAGE + regs::MB_DATA {
                    // A message's id read (RTL = golden): software takes it
                    // and pops it; only this software pops, so the head
                    // stays until then.
                    b.reading = false;
                    if v != 0 {
                        if b.delivered.insert(v) {
                            self.cov.burst_delivered += 1;
                        } else {
                            self.cov.burst_dups += 1;
                        }
                        let user = |a| Op::Read {
                            addr: regs::MB_PAGE + a,
                            prot: false,
                        };
                        self.sw.push_front(Op::Write {
                            addr: regs::MB_PAGE + regs::MB_POP,
                            data: v,
                            prot: false,
                        });
                        self.sw.push_front(user(regs::MB_LEN));
                        self.sw.push_front(user(regs::MB_SRC));
                    }
                }
            }
        }
        // 6. AXI4 master: AR checks, R beats.
        let lim = 1u64 << self.params.ni.addr_bits;
        let pdid = self.tx.pdid();
        if let Some(split) = self
            .mem_r
            .check(&p.ni, rep, self.cycle_in_phase, lim, pdid)?
        {
            self.cov.bursts += 1;
            self.cov.split_reads += split as u64;
        }
        // 7. Flits: each on `vc` (lane 0) or `resp_vc` (lane 1), with a
        // credit of its VC.
        if let Some(l) = self.credit_now {
            self.held[l] -= 1;
        }
        let nb = self.params.buffer_flits;
        if p.ni.out_valid.get() == 1 {
            let v = p.ni.out_vc.get();
            let lane = (v == self.params.resp_vc as u64) as usize;
            if (lane == 1 || v == self.params.vc as u64) && self.held[lane] >= nb {
                return bad(
                    &format!("out_valid (VC {v})"),
                    "0 (no credit)".into(),
                    "1".into(),
                );
            }
            let left = self.tx.flit(&p.ni, rep)?;
            self.held[lane] += 1;
            self.cov.flits += 1;
            if let Some(words) = left {
                // A message's tail has left: the receive agent may
                // acknowledge it from now on (no receiver answers a packet
                // before its tail).
                let last = words[words.len() - 1];
                if let (Ok(h), Ok(f)) = (Header::from_bits(words[0]), Footer::from_bits(last)) {
                    if h.ptype() == PacketType::Mailbox {
                        let key = (h.dest(), h.pdid(), f.txid());
                        self.rx.outstanding.push(key);
                        if let Some(i) = self.rx.sending_msgs.iter().position(|&k| k == key) {
                            self.rx.sending_msgs.remove(i);
                        }
                        self.golden_dirty = true;
                    }
                }
                self.golden.packet_left(&Packet { words });
            }
        } else if busy && self.held[0] >= nb {
            self.cov.credit_stalls += 1;
        }
        self.cov.resp_credit_out += (self.held[1] >= nb) as u64;
        // Liveness: something must move within a bounded time.
        if busy || self.golden.has_packet() {
            self.idle_run += 1;
            if p.ni.out_valid.get() == 1 {
                self.idle_run = 0;
            }
            if self.idle_run > 5000 {
                return bad(
                    "out_valid",
                    "a flit within 5000 cycles".into(),
                    "none".into(),
                );
            }
        } else {
            self.idle_run = 0;
        }
        Ok(())
    }
}

impl Bench for NiBench {
    fn block(&self) -> &str {
        "ni"
    }

    fn point(&self) -> String {
        point_text(&self.params)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_ni(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let p = |n: &str, w: u32| sim.port_w(n, w);
        self.ports = Some(Ports {
            ni: NiPorts::bind(sim, "", "out")?,
            reset: p("reset", 1)?,
            credit_in_valid: p("credit_in_valid", 1)?,
            credit_in_vc: p("credit_in_vc", 4)?,
            in_valid: p("in_valid", 1)?,
            in_data: p("in_data", 128)?,
            in_head: p("in_head", 1)?,
            in_tail: p("in_tail", 1)?,
            in_vc: p("in_vc", 4)?,
            credit_out_valid: p("credit_out_valid", 1)?,
            credit_out_vc: p("credit_out_vc", 4)?,
        });
        p("node", 22)?.set(self.me.to_bits() as u64);
        Ok(())
    }

    fn reset(&mut self) {
        let mem = self.mem.clone();
        let mut fresh = Self::with_golden(self.params.clone(), self.golden_params.clone())
            .expect("validated at construction");
        fresh.ports = self.ports;
        fresh.only_bad = self.only_bad;
        if let Some(b) = &self.burst {
            fresh.set_mailbox_burst(b.senders.len(), b.limit);
        }
        fresh.mem = mem.clone();
        *fresh.golden.mem_mut() = mem;
        *self = fresh;
        self.reset_now = true; // power-on: reset in the first cycle
    }

    fn drive(&mut self, rng: &mut Rng, _cycle: u64) {
        let p = self.ports();
        self.cycle_in_phase += 1;
        if !self.reset_now && self.draining && self.idle() {
            // Every second drained phase ends with a reset pulse; the others
            // go on with the same state (acknowledgements free the slots).
            self.phases += 1;
            if self.phases.is_multiple_of(2) {
                self.reset_now = true;
            } else {
                self.cov.phases_no_reset += 1;
                self.start_phase();
            }
        }
        if self.reset_now {
            p.reset.set(1);
            p.credit_in_valid.set(0);
            p.in_valid.set(0);
            self.axil.drive_reset(&p.ni);
            self.mem_r.drive_reset(&p.ni);
            self.rx.wr.drive_reset(&p.ni);
            self.rx.flit_now = false;
            self.credit_now = None;
            return;
        }
        p.reset.set(0);
        // A completion's write is on its way: software polls the queue
        // (the entry must not be visible before the write's B).
        if std::mem::take(&mut self.rx.poll_landing) && self.sw.is_empty() && rng.chance(0.5) {
            let a = [regs::CQ_COUNT, regs::CQ_W0][rng.below(2) as usize];
            self.sw.push_back(Op::Read {
                addr: regs::CQ_PAGE + a,
                prot: false,
            });
        }
        // Software.
        if self.axil.free() && self.wait == 0 {
            if self.sw.is_empty() && self.burst.is_none() && self.rx.busy_run > 100 {
                // The receive path waits for a queue: software pops.
                self.rx.busy_run = 0;
                self.user_write(regs::CQ_PAGE + regs::CQ_POP, 0);
                self.user_write(regs::MB_PAGE + regs::MB_POP, 0);
            } else if self.sw.is_empty() && !self.draining {
                if self.cycle_in_phase > self.phase_len {
                    self.draining = true;
                } else if rng.chance(self.load) {
                    self.generate(rng);
                }
            }
            match self.sw.pop_front() {
                Some(Op::Wait(n)) => self.wait = n,
                Some(Op::Write { addr, data, prot }) => self.axil.start(Access::Write {
                    addr,
                    data,
                    prot,
                    meta: (),
                }),
                Some(Op::Read { addr, prot }) => self.axil.start(Access::Read { addr, prot }),
                None => {}
            }
        }
        if self.wait > 0 {
            self.wait -= 1;
        }
        self.axil.drive(&p.ni, rng);
        // Memory.
        self.mem_r.drive(&p.ni, rng, self.cycle_in_phase, &self.mem);
        // Receive agent: flits into the NI (a packet starts only with the
        // credits of a largest packet), and the memory's write slave.
        if let Some(key) = self.rx.early {
            // Half the messages picked: a forged acknowledgement of it, sent
            // as soon as the port is free (no other packet starts
            // meanwhile) while the message is still being sent; it may be
            // decided before its tail leaves (Stale), or after.
            if !self.rx.sending_msgs.contains(&key) || !std::mem::take(&mut self.rx.early_go) {
                self.rx.early = None;
            } else if self.rx.may_start(1) {
                // (Before a packet waiting for class-0 credits: the port
                // is free.)
                self.rx.early = None;
                let words = self.early_ack(rng, key);
                let vc = self.rx.vc_of(1, rng);
                self.rx.sending = Some((words, 0, vc));
            } else {
                self.rx.early_go = true;
            }
        }
        if self.rx.early.is_none()
            && self.rx.sending.is_none()
            && self.rx.next.is_none()
            && rng.chance(self.rx.load)
        {
            // While draining: only acknowledgements of the NI's messages,
            // one at a time, until none is outstanding.
            let made = if self.burst.is_some() {
                // After the set-up (MBOX_CTRL) has been written.
                if self.cycle_in_phase > 200 {
                    self.burst_packet(rng).map(|w| (w, 0))
                } else {
                    None
                }
            } else if !self.draining || (!self.rx.outstanding.is_empty() && self.rx.none_sent()) {
                Some(self.rx_packet(rng))
            } else {
                None
            };
            if let Some((words, class)) = made {
                let vc = self.rx.vc_of(class, rng);
                self.rx.next = Some((words, vc));
            }
        }
        // The next packet starts once its class's pool holds a largest
        // packet.
        if let Some((_, vc)) = &self.rx.next {
            if self.rx.may_start(self.rx.class_of(*vc as u64)) {
                let (words, vc) = self.rx.next.take().expect("next");
                self.rx.sending = Some((words, 0, vc));
            }
        }
        self.rx.flit_now = false;
        p.in_valid.set(0);
        p.in_data.set_u128(rng.next_u128());
        if let Some((words, i, vc)) = &mut self.rx.sending {
            let c = *vc as usize / self.rx.vcs;
            if self.rx.credits[c] > 0 && rng.chance(0.8) {
                p.in_valid.set(1);
                p.in_data.set_u128(words[*i]);
                p.in_head.set((*i == 0) as u64);
                p.in_tail.set((*i + 1 == words.len()) as u64);
                p.in_vc.set(*vc as u64);
                self.rx.flit_now = true;
                self.rx.credits[c] -= 1;
                *i += 1;
                if *i == words.len() {
                    let (words, _, vc) = self.rx.sending.take().expect("sending");
                    let seq = self.rx.arrivals;
                    self.rx.arrivals += 1;
                    self.rx.sent[c].push_back(SentPacket {
                        pkt: Packet { words },
                        vc,
                        seq,
                    });
                }
            }
        }
        self.rx.wr.drive(&p.ni, rng, self.cycle_in_phase);
        // Credits back from the router, on `vc` or `resp_vc` (a lane
        // holding flits, at random), and stray ones on other VCs.
        let vcs = [self.params.vc as u64, self.params.resp_vc as u64];
        let lane = match self.held.map(|h| h > 0) {
            [true, true] => Some(rng.below(2) as usize),
            [true, false] => Some(0),
            [false, true] => Some(1),
            [false, false] => None,
        };
        self.credit_now = lane.filter(|_| rng.chance(0.35));
        if let Some(l) = self.credit_now {
            p.credit_in_valid.set(1);
            p.credit_in_vc.set(vcs[l]);
        } else if rng.chance(0.02) {
            let others: Vec<u64> = (0..16).filter(|v| !vcs.contains(v)).collect();
            p.credit_in_valid.set(1);
            p.credit_in_vc
                .set(others[rng.below(others.len() as u64) as usize]);
        } else {
            p.credit_in_valid.set(0);
        }
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        self.check_cycle(cycle).err()
    }

    fn advance(&mut self) {
        if self.reset_now {
            // The reset cycle: a new phase with a fresh golden model.
            self.reset_now = false;
            let mem = self.mem.clone();
            let mut g = Ni::new(&self.golden_params, self.me).expect("validated");
            *g.mem_mut() = mem;
            g.set_write_log(true);
            g.set_explicit_events(true);
            self.golden = g;
            self.golden_dirty = true;
            self.rx.outstanding.clear();
            self.rx.landing.clear();
            self.rx.sending_msgs.clear();
            self.rx.early = None;
            self.cov.resets += 1;
            self.start_phase();
        }
    }
}
