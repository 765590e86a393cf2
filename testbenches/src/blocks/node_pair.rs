//! Co-simulation bench of `node-pair`: network interfaces joined by RTL
//! routers (`exanet_hdl::node_pair`: one NI per router of an `A x B x C`
//! network, default two nodes) against one golden NI
//! (`exanet_sim::ni::Ni`) per node, transaction by transaction.
//!
//! The network between the NIs is the cycle-true RTL (routers, links, the
//! ejection adapters); the golden NIs exchange the same packets at
//! transaction level: what golden node `s` emits towards node `d` is queued
//! per flow and message class `(s, d, class)` (class 1: the control
//! responses the NI's response lane sends on `resp_vc`; class 0: the rest,
//! on `vc`), and every packet the RTL delivers into NI `d` must be the head
//! of its flow in the class of the VC it arrives on (bit-exact: nothing
//! lost, duplicated, reordered within its class or damaged; a response may
//! pass a request); golden `d` then receives it at the RTL's `rx_commit`
//! (`receive_packet_on` the class `rx_class`: the oldest packet delivered
//! on a VC of that class, so a class-1 packet may be decided before an
//! older class-0 one; the NI timing contract, `exanet_hdl::ni` module doc), lands each of its memory
//! writes at the write's B handshake (completions and notify responses are
//! posted then) and learns that a packet has left at its tail flit
//! (explicit events, `exanet_sim::ni` module doc).
//!
//! Agents per node, all random (seeded):
//! - **Software** (AXI4-Lite master, one access at a time, as a core doing
//!   uncached loads and stores): privileged set-up (receive window 0 = the
//!   node's landing area with the job's PDID, every channel's PDID, mailbox
//!   open, TX_ENABLE); then RDMA writes from the node's source regions to
//!   another node's landing area (lengths 1 B .. 16 KiB, any alignment,
//!   multi-packet, notify on or off, any channel; a doorbell refused when
//!   the queue is full is compared like any access), RDMA reads of another
//!   node's first source region (its window 1) into the node's landing
//!   area (1 B .. 8 KiB, notify on or off: READ_DONE here, NOTIFY at the
//!   server; a read the server refused because its read queue was full,
//!   READ_DONE / REMOTE_DENIED with reason READ_BUSY, is posted again
//!   until it is served), packetizer sends
//!   (4 .. `mailbox_msg_bytes` bytes, a unique id in the first word), and
//!   consumption of the completion queue (CQ_W0; when non-empty CQ_W1,
//!   CQ_W2, CQ_POP) and of the mailbox (MB_LEN; when non-empty MB_SRC,
//!   MB_DATA\[..\], MB_POP). In the second of every three traffic phases one node's
//!   software leaves its completion queue alone (up to 8000 cycles, or
//!   until its receive path has been Busy 500 cycles): the queue fills,
//!   packets wait in the network.
//! - **Memory** (AXI4 slave, read and write): random AR/AW/W backpressure,
//!   random read latency and beat gaps, random B latency; a sparse memory
//!   holding the same bytes as the golden model's.
//!
//! Checks (the first failure stops the run, with cycle, signal, expected
//! and actual): every AXI4-Lite response and read value against the golden
//! model's; at `rsp_pick` the golden model has a response
//! (`emit_response`), at `tx_pick` a request (`emit_request`), and every
//! flit the NI sends equals the oldest packet picked for its VC (data,
//! head, tail; requests on `vc`, responses on `resp_vc`, each packet
//! whole on its VC, the two VCs possibly interleaved); AR shape and
//! ARUSER = PDID;
//! every delivered packet is the head of its flow and class, all its flits
//! on one VC; at `rx_commit` the golden
//! outcome is Accepted or Refused (mailbox full, or a read request with
//! the read queue full; the bench sends nothing
//! that must be rejected), at `rx_busy` Busy; the golden memory writes
//! appear on AXI4 as one burst each with exactly the strobed bytes; every
//! completion and mailbox message software reads was expected (a doorbell
//! or send the golden model accepted, with matching kind, peer, txid, PDID,
//! source and bytes) and is seen exactly once; no router drops a packet or
//! counts an error; the ejection adapters count no protocol error; a
//! watchdog fails a run in which nothing moves (no flit, no decision, no
//! accepted AXI4-Lite write: polling reads and refused doorbells do not
//! count) for [`WATCHDOG`] cycles.
//!
//! Phases: set-up, a **latency measurement** (node 0 alone: isolated 64 B
//! RDMA writes and 16 B packetizer sends to node 1, see [`PairFigures`]),
//! then traffic phases of random length and load, each ending with a
//! **drain** (no new transfers, software consumes until every expected
//! completion and message is seen and both sides are idle), after which
//! every node's memory must equal its golden model's byte for byte, and no
//! flow may hold a packet. The first of every three traffic phases
//! instead ends with a **reset pulse in the middle of its traffic**
//! (packets in the routers, AXI4 bursts open): every golden model and
//! agent starts afresh from the RTL's memory, nothing is expected any
//! more, and the run goes on from the set-up (the next drain then checks
//! that the reset left nothing behind).

use super::ni::agents::{
    check_picks, Access, AxiReadSlave, AxiWriteSlave, AxilMaster, NiPorts, Report, TxFlits,
};
use super::{check_keys, kv_u64, parse_kv, BlockInfo};
use crate::cosim::{Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::{bail, Result};
use exanet_hdl::emit::Emitted;
use exanet_hdl::ni::NiRtlParams;
use exanet_hdl::node_pair::{emit_node_pair, instanced_modules, NodePairParams};
use exanet_sim::ni::rdma_rx::NACK_READ_BUSY;
use exanet_sim::ni::{regs, AxilResp, Ni, Packet, Prot, RxOutcome, SparseMemory};
use exanet_sim::packet::coords::Coords;
use exanet_sim::packet::footer::Footer;
use exanet_sim::packet::header::{Header, PacketType};
use exanet_sim::rng::Rng;
use exanet_sim::router::RouterParams;
use exanet_sim::topology::Topology;
use std::collections::{HashMap, VecDeque};

const KEYS: &[&str] = &[
    "dims",
    "link_latency",
    "channels",
    "desc_queue_depth",
    "pkt_slots",
    "mailbox_msg_bytes",
    "max_payload_bytes",
    "mailbox_depth",
    "cq_depth",
    "resp_queue_depth",
    "read_queue_depth",
];

/// Cycles with work pending and nothing moving before the run fails.
pub const WATCHDOG: u64 = 20_000;
/// Longest drain, cycles.
const DRAIN_MAX: u64 = 300_000;
/// Source and landing region size.
const REGION: u64 = 64 * 1024;
/// Bytes at the top of each landing region no transfer targets.
const GUARD: u64 = 256;
/// Source regions per node.
const SOURCES: [u64; 3] = [0x1000_0000, 0x2345_0000, 0x7FFF_0000];
/// Landing region of every node.
const LAND: u64 = 0x8000_0000;
/// Isolated latency samples of each kind.
const SAMPLES: usize = 4;

/// Registry entry for `exanet cosim node-pair`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "node-pair",
        about: "NIs joined by RTL routers (default 2 nodes): RDMA writes, packetizer, completions, mailbox vs golden NIs",
        matrix,
        point,
    }
}

/// The default matrix.
pub fn matrix_points() -> Vec<&'static str> {
    // Two nodes, the default NI and router; a small mailbox and completion
    // queue so mailbox-full nacks, retries and Busy occur.
    // Four nodes on a 2x2 torus (two-hop paths, several senders per
    // mailbox), longer links, 128-byte packets and small queues (a 1-job
    // read queue: mutual reads are refused READ_BUSY and re-posted).
    vec![
        "dims=2x1x1,link_latency=1,channels=4,desc_queue_depth=8,pkt_slots=4,mailbox_msg_bytes=64,max_payload_bytes=256,mailbox_depth=4,cq_depth=8,resp_queue_depth=8,read_queue_depth=4",
        "dims=2x2x1,link_latency=4,channels=2,desc_queue_depth=4,pkt_slots=2,mailbox_msg_bytes=32,max_payload_bytes=128,mailbox_depth=2,cq_depth=4,resp_queue_depth=4,read_queue_depth=1",
    ]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    matrix_points()
        .into_iter()
        .map(|t| point(t).expect("matrix point is valid"))
        .collect()
}

fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(NodePairBench::new(parse_point(text)?)?))
}

/// Parse a point (`key=value,...`; missing keys take the defaults).
pub fn parse_point(text: &str) -> Result<NodePairParams> {
    let kv = parse_kv(text)?;
    check_keys(&kv, KEYS)?;
    let d = NodePairParams::default();
    let dims = match kv.iter().rev().find(|(k, _)| k == "dims") {
        None => d.router.topology.dims,
        Some((_, v)) => {
            let parts: Vec<&str> = v.split('x').collect();
            let n: Vec<usize> = parts.iter().filter_map(|s| s.parse().ok()).collect();
            if parts.len() != 3 || n.len() != 3 {
                bail!("point key `dims`: `{v}` is not AxBxC");
            }
            [n[0], n[1], n[2]]
        }
    };
    if dims.iter().product::<usize>() < 2 {
        bail!("point key `dims`: {dims:?} has fewer than two nodes");
    }
    let int = |k: &str, def: usize| -> Result<usize> { Ok(kv_u64(&kv, k, def as u64)? as usize) };
    let router = RouterParams {
        topology: Topology::new(dims, dims.map(|k| k > 1), 1)?,
        ..d.router.clone()
    };
    let ni = NiRtlParams {
        ni: exanet_sim::ni::NiParams {
            channels: int("channels", d.ni.ni.channels)?,
            desc_queue_depth: int("desc_queue_depth", d.ni.ni.desc_queue_depth)?,
            pkt_slots: int("pkt_slots", d.ni.ni.pkt_slots)?,
            mailbox_msg_bytes: int("mailbox_msg_bytes", d.ni.ni.mailbox_msg_bytes)?,
            max_payload_bytes: int("max_payload_bytes", d.ni.ni.max_payload_bytes)?,
            mailbox_depth: int("mailbox_depth", d.ni.ni.mailbox_depth)?,
            cq_depth: int("cq_depth", d.ni.ni.cq_depth)?,
            resp_queue_depth: int("resp_queue_depth", d.ni.ni.resp_queue_depth)?,
            read_queue_depth: int("read_queue_depth", d.ni.ni.read_queue_depth)?,
            ..d.ni.ni.clone()
        },
        buffer_flits: router.buffer_flits,
        // Requests on the first VC of class 0, responses on the first of
        // class 1.
        vc: 0,
        resp_vc: router.vcs_per_class,
        vcs_per_class: router.vcs_per_class,
        tx_ahead: d.ni.tx_ahead,
    };
    let p = NodePairParams {
        ni,
        router,
        link_latency: int("link_latency", d.link_latency)?,
    };
    p.validate()?;
    if p.ni.ni.addr_bits < 32 {
        bail!("node-pair: ni.addr_bits must be >= 32 (the bench's regions)");
    }
    Ok(p)
}

/// The point text of `p`.
pub fn point_text(p: &NodePairParams) -> String {
    let d = p.router.topology.dims;
    let n = &p.ni.ni;
    format!(
        "dims={}x{}x{},link_latency={},channels={},desc_queue_depth={},pkt_slots={},mailbox_msg_bytes={},max_payload_bytes={},mailbox_depth={},cq_depth={},resp_queue_depth={},read_queue_depth={}",
        d[0], d[1], d[2], p.link_latency, n.channels, n.desc_queue_depth, n.pkt_slots,
        n.mailbox_msg_bytes, n.max_payload_bytes, n.mailbox_depth, n.cq_depth, n.resp_queue_depth,
        n.read_queue_depth
    )
}

/// A deliberate error in the golden side, to show the checks catch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// None: the real comparison.
    None,
    /// The golden model of node 1 gets another PDID in its window 0 than
    /// the RTL (its data packets are rejected by the golden model only).
    GoldenWindowPdid,
    /// One byte of node 1's golden memory (in the landing region's guard,
    /// which no transfer writes) differs from the RTL's memory.
    GoldenMemByte,
}

/// What a run exercised; the integration test asserts on it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodePairCoverage {
    /// Doorbells accepted (RDMA writes), of those more than one packet, and bytes.
    pub rdma_writes: u64,
    pub multi_packet: u64,
    pub rdma_bytes: u64,
    /// Packetizer sends accepted.
    pub sends: u64,
    /// Doorbells and sends refused (SLVERR: queue or slots full).
    pub refused: u64,
    /// RDMA reads accepted (doorbells), and bytes asked for.
    pub rdma_reads: u64,
    pub read_bytes: u64,
    /// Packets compared at the NIs' outputs, by type: RdmaWrite, Mailbox,
    /// MailboxAck, MailboxNack, RdmaCompletion, RdmaReadReq, RdmaReadResp.
    pub tx_packets: [u64; 7],
    /// Flits compared (out of the NIs), packets delivered and checked
    /// against their flow.
    pub flits: u64,
    pub delivered: u64,
    /// Golden outcomes at `rx_commit`: accepted, refused (mailbox full),
    /// read requests refused (read queue full: Nack READ_BUSY).
    pub accepted: u64,
    pub refused_full: u64,
    pub refused_reads: u64,
    /// READ_DONE / REMOTE_DENIED / READ_BUSY completions software read
    /// (each read then posted again), and reads posted again (doorbell
    /// accepted).
    pub read_busy_seen: u64,
    pub read_reposts: u64,
    /// Class-1 packets decided while a class-0 packet delivered earlier
    /// awaited its decision (the class-0 one Busy, or not yet decided).
    pub class1_first: u64,
    /// Cycles some NI reported `rx_busy`; golden `Busy` confirmations;
    /// periods in which one node's software left its completion queue
    /// alone (so that it fills up).
    pub busy_cycles: u64,
    pub busy_checks: u64,
    pub cq_holds: u64,
    /// AXI4 write bursts compared.
    pub axi_writes: u64,
    /// Completions read and matched: WRITE_IN, READ_DONE, NOTIFY; mailbox
    /// messages read and matched.
    pub write_in: u64,
    pub read_done: u64,
    pub notify: u64,
    pub messages: u64,
    /// Drains completed (each with the byte-for-byte memory comparison).
    pub drains: u64,
    /// Reset pulses in the middle of traffic (packets in flight, AXI
    /// bursts open); the run goes on from the set-up. Drains completed
    /// after one (memories compared after the reset).
    pub mid_resets: u64,
    pub drains_after_reset: u64,
}

/// Latency figures measured in the bench (cycles).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairFigures {
    /// Isolated 64 B RDMA writes node 0 -> node 1: DOORBELL accepted on
    /// node 0 (cycle t0) to the WRITE_IN completion visible on node 1 (the
    /// cycle after the B response of its write, when CQ_COUNT reads
    /// non-zero): `t1 - t0`.
    pub write_64b: Vec<u64>,
    /// Isolated 16 B packetizer sends node 0 -> node 1: PKT_SEND accepted
    /// on node 0 to MB_COUNT non-zero on node 1 (the cycle after its
    /// `rx_commit` of the message).
    pub pkt_16b: Vec<u64>,
    /// Under load, every transfer: (sum, count, max) for last-packet
    /// completions of RDMA writes (any length) and mailbox messages.
    pub write_load: (u64, u64, u64),
    pub pkt_load: (u64, u64, u64),
}

impl PairFigures {
    /// One line.
    pub fn summary(&self) -> String {
        let s = |v: &[u64]| {
            if v.is_empty() {
                "n/a".to_string()
            } else {
                format!(
                    "min {} mean {:.1} max {} (n={})",
                    v.iter().min().unwrap_or(&0),
                    v.iter().sum::<u64>() as f64 / v.len() as f64,
                    v.iter().max().unwrap_or(&0),
                    v.len()
                )
            }
        };
        let l = |x: (u64, u64, u64)| {
            if x.1 == 0 {
                "n/a".to_string()
            } else {
                format!(
                    "mean {:.1} max {} (n={})",
                    x.0 as f64 / x.1 as f64,
                    x.2,
                    x.1
                )
            }
        };
        format!(
            "latency, cycles: 64 B RDMA write doorbell->completion (1 hop) {}; packetizer 16 B send->MB_COUNT {}; under load: write {}, packetizer {}",
            s(&self.write_64b),
            s(&self.pkt_16b),
            l(self.write_load),
            l(self.pkt_load)
        )
    }
}

/// Add sample `d` to a (sum, count, max) accumulator.
fn record(acc: &mut (u64, u64, u64), d: u64) {
    acc.0 += d;
    acc.1 += 1;
    acc.2 = acc.2.max(d);
}

#[derive(Clone, Debug)]
enum Meta {
    None,
    Doorbell {
        dest: usize,
        txid: u16,
        notify: bool,
        len: u64,
    },
    Send {
        dest: usize,
        id: u32,
        bytes: Vec<u8>,
    },
    /// An RDMA read's doorbell; `repost`: a read its server refused
    /// (read queue full), posted again (its completions are expected
    /// already).
    Read {
        desc: ReadDesc,
        repost: bool,
    },
}

/// An RDMA read of `len` bytes of `server`'s memory at `src` into the
/// requester's at `dst`, on `channel`.
#[derive(Clone, Copy, Debug)]
struct ReadDesc {
    server: usize,
    channel: usize,
    src: u64,
    dst: u64,
    len: u64,
    notify: bool,
    txid: u16,
}

/// A software access.
type Op = Access<Meta>;

/// A node's ports: its NI's (`n{i}_…`, flits out `n{i}_tx_*`), the
/// flits delivered to it, and the error counters.
#[derive(Clone)]
struct NodePorts {
    ni: NiPorts,
    rx_valid: Port,
    rx_data: Port,
    rx_head: Port,
    rx_tail: Port,
    rx_vc: Port,
    /// Error counters that must stay 0: name, port.
    errors: Vec<(String, Port)>,
}

/// One node: golden NI, memory, software and memory agents.
struct Node {
    me: Coords,
    golden: Ni,
    mem: SparseMemory,
    p: Option<NodePorts>,
    sw: VecDeque<Op>,
    axil: AxilMaster<Meta>,
    rd: AxiReadSlave,
    wr: AxiWriteSlave,
    tx: TxFlits,
    /// The packet being delivered: its flits so far, its head's VC.
    rx_words: Vec<u128>,
    rx_vc: Option<u64>,
    /// Delivered packets awaiting their decision, per class of their VC.
    arrived: [VecDeque<Packet>; 2],
    golden_dirty: bool,
    /// The class whose Busy packet the golden model confirmed last.
    busy_checked: Option<usize>,
    /// RDMA reads accepted (doorbell) whose READ_DONE is outstanding, by
    /// txid; reads refused by their server (read queue full), to post
    /// again.
    reads: HashMap<u16, ReadDesc>,
    repost: VecDeque<ReadDesc>,
    cq_words: Vec<u32>,
    mb: Option<(u32, u32, Vec<u8>)>,
    txid_next: u16,
    msg_next: u32,
    /// Golden writes not yet landed (B), oldest first: for the last packet
    /// of a measured RDMA write, its doorbell cycle and whether isolated.
    landing: VecDeque<Option<(u64, bool)>>,
    /// Software leaves the completion queue alone (polls only the mailbox).
    hold_cq: bool,
}

impl Node {
    fn new(params: &NodePairParams, me: Coords, index: usize, fault: Fault) -> Result<Node> {
        let mut rng = Rng::new(0x9A1B + index as u64);
        let mut mem = SparseMemory::new();
        for &b in &SOURCES {
            let mut buf = vec![0u8; REGION as usize];
            for chunk in buf.chunks_mut(8) {
                chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
            }
            mem.write(b, &buf);
        }
        let mut golden = Ni::new(&params.ni.ni, me)?;
        let mut gmem = mem.clone();
        if fault == Fault::GoldenMemByte && index == 1 {
            gmem.write(LAND + REGION - 1, &[0x5A]);
        }
        *golden.mem_mut() = gmem;
        golden.set_write_log(true);
        golden.set_explicit_events(true);
        Ok(Node {
            me,
            golden,
            mem,
            p: None,
            sw: VecDeque::new(),
            axil: AxilMaster::new(),
            rd: AxiReadSlave::new(),
            wr: AxiWriteSlave::new(),
            tx: TxFlits::new(params.ni.vc as u64, params.ni.resp_vc as u64),
            rx_words: Vec::new(),
            rx_vc: None,
            arrived: Default::default(),
            golden_dirty: true,
            busy_checked: None,
            reads: HashMap::new(),
            repost: VecDeque::new(),
            cq_words: Vec::new(),
            mb: None,
            txid_next: 1,
            msg_next: 1,
            landing: VecDeque::new(),
            hold_cq: false,
        })
    }

    /// After a reset pulse in the middle of a run: a fresh golden model
    /// and agents; the memory as the RTL's memory holds it now (a write the
    /// golden model made at a decision may not have reached AXI4 before
    /// the reset), with `fault`'s byte again.
    fn after_reset(&mut self, params: &NodePairParams, index: usize, fault: Fault) -> Result<()> {
        let mut fresh = Node::new(params, self.me, index, fault)?;
        let mut gmem = self.mem.clone();
        if fault == Fault::GoldenMemByte && index == 1 {
            gmem.write(LAND + REGION - 1, &[0x5A]);
        }
        *fresh.golden.mem_mut() = gmem;
        fresh.mem = std::mem::take(&mut self.mem);
        fresh.p = self.p.take();
        fresh.txid_next = self.txid_next;
        fresh.msg_next = self.msg_next;
        *self = fresh;
        Ok(())
    }

    fn sw_idle(&self) -> bool {
        self.sw.is_empty() && self.axil.idle()
    }

    fn idle(&self) -> bool {
        self.sw_idle()
            && self.rd.idle()
            && self.wr.idle()
            && self.tx.idle()
            && self.rx_words.is_empty()
            && self.arrived.iter().all(|q| q.is_empty())
            && self.repost.is_empty()
            && !self.golden.has_packet()
            && self.p.as_ref().is_some_and(|p| p.ni.tx_busy.get() == 0)
    }

    fn write(&mut self, addr: u32, data: u32, prot: bool, meta: Meta) {
        self.sw.push_back(Op::Write {
            addr,
            data,
            prot,
            meta,
        });
    }

    fn poll(&mut self) {
        if !self.hold_cq {
            self.sw.push_back(Op::Read {
                addr: regs::CQ_PAGE + regs::CQ_W0,
                prot: false,
            });
        }
        self.sw.push_back(Op::Read {
            addr: regs::MB_PAGE + regs::MB_LEN,
            prot: false,
        });
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Setup,
    Measure,
    Traffic,
    Drain,
}

/// An AXI4-Lite write that moves the system on when accepted: a doorbell,
/// a packetizer send, or a completion / mailbox / error-queue pop.
fn moves(addr: u32) -> bool {
    let in_channel = addr >= regs::CH_PAGE0;
    let off = addr % regs::PAGE;
    (in_channel && (off == regs::DOORBELL || off == regs::PKT_SEND))
        || addr == regs::CQ_PAGE + regs::CQ_POP
        || addr == regs::MB_PAGE + regs::MB_POP
        || addr == regs::ERRQ_POP
}

/// The node-pair bench at one parameter point.
pub struct NodePairBench {
    params: NodePairParams,
    fault: Fault,
    nodes: Vec<Node>,
    index: HashMap<u32, usize>,
    pdid: u16,
    /// Packets in flight per flow and class: (source, destination,
    /// class) -> words, oldest first (the network keeps each class's
    /// packets of a flow in order; a response may pass a request).
    flows: HashMap<(usize, usize, usize), VecDeque<Vec<u128>>>,
    /// Expected completions: (node, W0, W1, W2) -> count.
    exp_cq: HashMap<(usize, u32, u32, u32), u32>,
    /// Expected mailbox messages: (node, id) -> (source coordinates, bytes).
    exp_mb: HashMap<(usize, u32), (u32, Vec<u8>)>,
    /// Doorbell accept cycle per (dest, src bits, txid), and whether isolated.
    t_door: HashMap<(usize, u32, u16), (u64, bool)>,
    /// Send accept cycle per message id, and whether isolated.
    t_send: HashMap<u32, (u64, bool)>,
    phase: Phase,
    phase_start: u64,
    phase_len: u64,
    load: f64,
    samples: usize,
    cycle: u64,
    reset_now: bool,
    reset_port: Option<Port>,
    setup_done: bool,
    last_progress: u64,
    cov: NodePairCoverage,
    fig: PairFigures,
    /// Traffic phases started.
    traffic_phases: u64,
    /// A reset pulse due in this traffic phase, at this cycle.
    reset_at: Option<u64>,
    /// A node's completion queue left alone until this cycle (or until it
    /// was Busy for a while): node, end, Busy cycles seen.
    hold: Option<(usize, u64, u64)>,
}

impl NodePairBench {
    /// A bench of `params` (validated).
    pub fn new(params: NodePairParams) -> Result<Self> {
        Self::with_fault(params, Fault::None)
    }

    /// A bench whose golden side carries `fault` (for the negative tests).
    pub fn with_fault(params: NodePairParams, fault: Fault) -> Result<Self> {
        params.validate()?;
        let t = &params.router.topology;
        let mut nodes = Vec::new();
        let mut index = HashMap::new();
        for n in 0..t.num_nodes() {
            let c = t.coords(n);
            let me = Coords::new(c[0] as u8, c[1] as u8, c[2] as u8, 0)?;
            index.insert(me.to_bits(), n);
            nodes.push(Node::new(&params, me, n, fault)?);
        }
        Ok(NodePairBench {
            params,
            fault,
            nodes,
            index,
            pdid: 0,
            flows: HashMap::new(),
            exp_cq: HashMap::new(),
            exp_mb: HashMap::new(),
            t_door: HashMap::new(),
            t_send: HashMap::new(),
            phase: Phase::Setup,
            phase_start: 0,
            phase_len: 0,
            load: 0.3,
            samples: 0,
            cycle: 0,
            reset_now: true,
            reset_port: None,
            setup_done: false,
            last_progress: 0,
            cov: NodePairCoverage::default(),
            fig: PairFigures::default(),
            traffic_phases: 0,
            reset_at: None,
            hold: None,
        })
    }

    /// What the run exercised.
    pub fn coverage(&self) -> NodePairCoverage {
        self.cov.clone()
    }

    /// The latency figures measured.
    pub fn figures(&self) -> PairFigures {
        self.fig.clone()
    }

    fn setup(&mut self, rng: &mut Rng) {
        self.pdid = 1 + rng.below(0xFFFE) as u16;
        let pdid = self.pdid as u32;
        let channels = self.params.ni.ni.channels;
        for node in &mut self.nodes {
            let w = |f| regs::win_reg(0, f);
            node.write(w(regs::WIN_BASE_LO), LAND as u32, true, Meta::None);
            node.write(w(regs::WIN_BASE_HI), (LAND >> 32) as u32, true, Meta::None);
            node.write(w(regs::WIN_SIZE_LO), REGION as u32, true, Meta::None);
            node.write(w(regs::WIN_SIZE_HI), 0, true, Meta::None);
            node.write(w(regs::WIN_CTRL), pdid | 1 << 31, true, Meta::None);
            // Window 1: the first source region, which RDMA reads from
            // other nodes read.
            let w1 = |f| regs::win_reg(1, f);
            node.write(w1(regs::WIN_BASE_LO), SOURCES[0] as u32, true, Meta::None);
            node.write(
                w1(regs::WIN_BASE_HI),
                (SOURCES[0] >> 32) as u32,
                true,
                Meta::None,
            );
            node.write(w1(regs::WIN_SIZE_LO), REGION as u32, true, Meta::None);
            node.write(w1(regs::WIN_SIZE_HI), 0, true, Meta::None);
            node.write(w1(regs::WIN_CTRL), pdid | 1 << 31, true, Meta::None);
            for c in 0..channels {
                node.write(regs::CH_PDID_BASE + 4 * c as u32, pdid, true, Meta::None);
            }
            node.write(regs::MBOX_CTRL, 1 << 16, true, Meta::None);
            node.write(regs::CONTROL, 1, true, Meta::None);
        }
    }

    /// Queue an RDMA write from node `n` to `dest`.
    fn rdma_write(&mut self, rng: &mut Rng, n: usize, dest: usize, len: u64, align: Option<u64>) {
        let c = rng.below(self.params.ni.ni.channels as u64) as usize;
        let src = SOURCES[rng.below(SOURCES.len() as u64) as usize] + rng.below(REGION - len + 1);
        let max_off = REGION - GUARD - len;
        let off = match align {
            Some(a) => rng.below(max_off / a + 1) * a,
            None => rng.below(max_off + 1),
        };
        let dst = LAND + off;
        let notify = align.is_none() && rng.chance(0.5);
        let node = &mut self.nodes[n];
        let txid = node.txid_next;
        node.txid_next = if txid == 0x3FFF { 1 } else { txid + 1 };
        let page = regs::ch_page(c);
        let dest_bits = self.nodes[dest].me.to_bits();
        let node = &mut self.nodes[n];
        for (off, v) in [
            (regs::DESC_LADDR_LO, src as u32),
            (regs::DESC_LADDR_HI, (src >> 32) as u32),
            (regs::DESC_RADDR_LO, dst as u32),
            (regs::DESC_RADDR_HI, (dst >> 32) as u32),
            (regs::DESC_LEN, len as u32),
            (regs::DESC_DEST, dest_bits),
            (regs::DESC_CTRL, (notify as u32) << 4 | (txid as u32) << 16),
        ] {
            node.write(page + off, v, false, Meta::None);
        }
        node.write(
            page + regs::DOORBELL,
            1,
            false,
            Meta::Doorbell {
                dest,
                txid,
                notify,
                len,
            },
        );
    }

    /// Queue an RDMA read by node `n` of `len` bytes of `server`'s first
    /// source region into `n`'s landing region.
    fn rdma_read(&mut self, rng: &mut Rng, n: usize, server: usize, len: u64) {
        let channel = rng.below(self.params.ni.ni.channels as u64) as usize;
        let src = SOURCES[0] + rng.below(REGION - len + 1);
        let dst = LAND + rng.below(REGION - GUARD - len + 1);
        let notify = rng.chance(0.5);
        let node = &mut self.nodes[n];
        let txid = node.txid_next;
        node.txid_next = if txid == 0x3FFF { 1 } else { txid + 1 };
        let desc = ReadDesc {
            server,
            channel,
            src,
            dst,
            len,
            notify,
            txid,
        };
        self.post_read(n, desc, false);
    }

    /// Queue the descriptor writes and doorbell of read `d` by node `n`
    /// (`repost`: the server refused it before, its completions are
    /// expected already).
    fn post_read(&mut self, n: usize, d: ReadDesc, repost: bool) {
        let server_bits = self.nodes[d.server].me.to_bits();
        let node = &mut self.nodes[n];
        let page = regs::ch_page(d.channel);
        for (off, v) in [
            (regs::DESC_LADDR_LO, d.dst as u32),
            (regs::DESC_LADDR_HI, (d.dst >> 32) as u32),
            (regs::DESC_RADDR_LO, d.src as u32),
            (regs::DESC_RADDR_HI, (d.src >> 32) as u32),
            (regs::DESC_LEN, d.len as u32),
            (regs::DESC_DEST, server_bits),
            (
                regs::DESC_CTRL,
                1 | (d.notify as u32) << 4 | (d.txid as u32) << 16,
            ),
        ] {
            node.write(page + off, v, false, Meta::None);
        }
        node.write(
            page + regs::DOORBELL,
            1,
            false,
            Meta::Read { desc: d, repost },
        );
    }

    /// Queue a packetizer send of `len` bytes from node `n` to `dest`.
    fn send(&mut self, rng: &mut Rng, n: usize, dest: usize, len: usize) {
        let c = rng.below(self.params.ni.ni.channels as u64) as usize;
        let page = regs::ch_page(c);
        let dest_bits = self.nodes[dest].me.to_bits();
        let node = &mut self.nodes[n];
        let id = (n as u32 + 1) << 24 | node.msg_next;
        node.msg_next = (node.msg_next + 1) & 0xFF_FFFF;
        let mut bytes = id.to_le_bytes().to_vec();
        while bytes.len() < len.div_ceil(4) * 4 {
            bytes.extend_from_slice(&(rng.next_u64() as u32).to_le_bytes());
        }
        for (i, w) in bytes.chunks(4).enumerate() {
            let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            node.write(page + regs::PKT_DATA + 4 * i as u32, v, false, Meta::None);
        }
        bytes.truncate(len);
        node.write(page + regs::PKT_DEST, dest_bits, false, Meta::None);
        node.write(
            page + regs::PKT_SEND,
            len as u32,
            false,
            Meta::Send { dest, id, bytes },
        );
    }

    fn other(&self, rng: &mut Rng, n: usize) -> usize {
        let k = self.nodes.len() as u64;
        (n + 1 + rng.below(k - 1) as usize) % self.nodes.len()
    }

    /// Software of node `n` has nothing queued: give it work (first a
    /// read its server refused, posted again, then a poll: software keeps
    /// consuming completions while a doorbell is refused, else the
    /// completion queue it leaves full could hold back the very packets
    /// that would free the descriptor queue).
    fn generate(&mut self, rng: &mut Rng, n: usize) {
        if matches!(self.phase, Phase::Traffic | Phase::Drain) {
            if let Some(d) = self.nodes[n].repost.pop_front() {
                self.post_read(n, d, true);
                self.nodes[n].poll();
                return;
            }
        }
        match self.phase {
            Phase::Setup => {}
            Phase::Measure => {
                // Node 0 alone: one isolated transfer at a time to node 1;
                // node 1 consumes once its completion or message landed.
                let waiting = !self.exp_cq.is_empty() || !self.exp_mb.is_empty();
                if n == 0 && !waiting && self.t_door.is_empty() && self.t_send.is_empty() {
                    if self.samples < 2 * SAMPLES {
                        if self.samples.is_multiple_of(2) {
                            self.rdma_write(rng, 0, 1, 64, Some(64));
                        } else {
                            self.send(rng, 0, 1, 16);
                        }
                        self.samples += 1;
                    } else {
                        self.start_traffic(rng);
                    }
                } else if n == 1 && waiting && self.t_door.is_empty() && self.t_send.is_empty() {
                    self.nodes[1].poll();
                }
            }
            Phase::Traffic => {
                if !rng.chance(self.load) {
                    return;
                }
                let dest = self.other(rng, n);
                match rng.below(100) {
                    0..=34 => {
                        let len = match rng.below(20) {
                            0..=9 => 1 + rng.below(256),
                            10..=14 => 257 + rng.below(1792),
                            15..=17 => 2049 + rng.below(6144),
                            _ => 8193 + rng.below(8192),
                        };
                        self.rdma_write(rng, n, dest, len, None);
                    }
                    35..=59 => {
                        let m = self.params.ni.ni.mailbox_msg_bytes as u64;
                        let len = 4 + rng.below(m - 3) as usize;
                        self.send(rng, n, dest, len);
                    }
                    60..=69 if self.params.ni.ni.windows > 1 => {
                        let len = match rng.below(4) {
                            0..=1 => 1 + rng.below(256),
                            2 => 257 + rng.below(1792),
                            _ => 2049 + rng.below(6144),
                        };
                        self.rdma_read(rng, n, dest, len);
                    }
                    _ => self.nodes[n].poll(),
                }
            }
            Phase::Drain => self.nodes[n].poll(),
        }
    }

    fn start_traffic(&mut self, rng: &mut Rng) {
        self.phase = Phase::Traffic;
        self.phase_start = self.cycle;
        self.phase_len = 2_000 + rng.below(20_000);
        self.load = [0.02, 0.1, 0.3, 0.6][rng.below(4) as usize];
        // The first of every three phases ends early with a reset pulse in
        // the middle of its traffic. In the second, one node's software
        // leaves its completion queue alone for a while: the queue fills,
        // and the receive path goes Busy (the network holds its packets).
        let k = self.traffic_phases;
        self.traffic_phases += 1;
        if k % 3 == 1 {
            let n = rng.below(self.nodes.len() as u64) as usize;
            self.nodes[n].hold_cq = true;
            self.hold = Some((n, self.cycle + 8_000, 0));
            self.load = self.load.max(0.3);
            self.phase_len = self.phase_len.min(10_000);
            self.cov.cq_holds += 1;
        }
        self.reset_at = k
            .is_multiple_of(3)
            .then(|| self.cycle + (self.phase_len / 2).min(3_000));
    }

    /// The end of a hold: software of that node consumes again.
    fn end_hold(&mut self) {
        if let Some((n, _, _)) = self.hold.take() {
            self.nodes[n].hold_cq = false;
        }
    }

    /// A reset pulse now, in the middle of traffic: every node's golden
    /// model and agents start afresh from the RTL's memory, nothing is
    /// expected any more, and the run goes on from the set-up.
    fn mid_reset(&mut self) -> Result<()> {
        self.end_hold();
        self.reset_at = None;
        for (i, n) in self.nodes.iter_mut().enumerate() {
            n.after_reset(&self.params, i, self.fault)?;
        }
        self.flows.clear();
        self.exp_cq.clear();
        self.exp_mb.clear();
        self.t_door.clear();
        self.t_send.clear();
        self.phase = Phase::Setup;
        self.setup_done = false;
        self.reset_now = true;
        self.cov.mid_resets += 1;
        Ok(())
    }

    /// Every node idle, nothing expected, no flow holding a packet.
    fn drained(&self) -> bool {
        self.exp_cq.is_empty()
            && self.exp_mb.is_empty()
            && self.flows.values().all(|q| q.is_empty())
            && self.nodes.iter().all(|n| n.idle())
    }

    /// The end of a drain: every memory equals its golden model's.
    fn compare_memories(&mut self, cycle: u64) -> Option<Mismatch> {
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(a) = n.mem.first_difference(n.golden.mem()) {
                return Some(Mismatch::hex(
                    cycle,
                    &format!("n{i} memory byte 0x{a:x} (after drain)"),
                    n.golden.mem().read(a, 1)[0],
                    n.mem.read(a, 1)[0],
                ));
            }
        }
        None
    }

    /// Checks of node `i` this cycle.
    fn check_node(&mut self, i: usize, cycle: u64) -> Result<(), Mismatch> {
        let prefix = format!("n{i}_");
        let rep = Report {
            cycle,
            prefix: &prefix,
        };
        let bad = |port: &str, e: String, a: String| rep.bad(port, e, a);
        let p = self.nodes[i].p.clone().expect("bound");
        for (name, q) in &p.errors {
            if q.get() != 0 {
                return bad(name, "0".into(), format!("{}", q.get()));
            }
        }
        let vcs = self.params.ni.vcs_per_class as u64;
        let fault = self.fault;
        // 1. A read accepted.
        let node = &mut self.nodes[i];
        let wr_fire = node.axil.accept_read(&p.ni, &mut node.golden, rep)?;
        // 2. Picks: a response (class 1, the response lane), then a request
        // (class 0).
        let picks = check_picks(&p.ni, &mut node.golden, rep)?;
        for (class, pk) in [(1, picks.response), (0, picks.request)] {
            let Some(pk) = pk else { continue };
            let node = &mut self.nodes[i];
            node.golden_dirty = true;
            let h = Header::from_bits(pk.header_word()).expect("golden header");
            let k = match h.ptype() {
                PacketType::RdmaWrite => 0,
                PacketType::Mailbox => 1,
                PacketType::MailboxAck => 2,
                PacketType::MailboxNack => 3,
                PacketType::RdmaReadReq => 5,
                PacketType::RdmaReadResp => 6,
                _ => 4,
            };
            self.cov.tx_packets[k] += 1;
            let Some(&d) = self.index.get(&h.dest().to_bits()) else {
                return bad(
                    ["tx_pick", "rsp_pick"][class],
                    "a packet to a node of the network".into(),
                    format!("destination {:?}", h.dest()),
                );
            };
            self.flows
                .entry((i, d, class))
                .or_default()
                .push_back(pk.words.clone());
            node.tx.picked(class, pk, h.pdid());
        }
        // 3. Delivery and commit.
        if p.rx_valid.get() == 1 {
            self.last_progress = cycle;
            let node = &mut self.nodes[i];
            node.rx_words.push(p.rx_data.get_u128());
            let k = node.rx_words.len();
            if (p.rx_head.get() == 1) != (k == 1) {
                return bad(
                    "rx_head",
                    format!("{}", k == 1),
                    format!("{}", p.rx_head.get()),
                );
            }
            // Every flit of a packet on its head's VC, of one of the two
            // classes.
            let v = p.rx_vc.get();
            let head_vc = *node.rx_vc.get_or_insert(v);
            if v != head_vc || v >= 2 * vcs {
                return bad(
                    &format!("rx_vc (flit {} of a packet)", k - 1),
                    format!("{head_vc}, below {}", 2 * vcs),
                    format!("{v}"),
                );
            }
            if p.rx_tail.get() == 1 {
                let class = (head_vc / vcs) as usize;
                node.rx_vc = None;
                let words = std::mem::take(&mut node.rx_words);
                let src = Footer::from_bits(*words.last().expect("tail"))
                    .ok()
                    .and_then(|f| self.index.get(&f.src().to_bits()).copied());
                let Some(s) = src else {
                    return bad(
                        "rx_data (footer)",
                        "a known source".into(),
                        format!("0x{:032x}", words[words.len() - 1]),
                    );
                };
                let flow = self.flows.entry((s, i, class)).or_default();
                match flow.front() {
                    Some(e) if *e == words => {
                        flow.pop_front();
                    }
                    e => {
                        let show = |w: Option<&Vec<u128>>| match w {
                            None => "no packet in flight".to_string(),
                            Some(w) => format!("{} flits, header 0x{:032x}", w.len(), w[0]),
                        };
                        return bad(
                            &format!("rx_data (packet from n{s}, class {class})"),
                            show(e),
                            show(Some(&words)),
                        );
                    }
                }
                self.cov.delivered += 1;
                self.nodes[i].arrived[class].push_back(Packet { words });
            }
        }
        // The class of the packet decided (or found Busy): of the VC it
        // arrived on; each class's packets are decided in arrival order.
        let class = p.ni.rx_class.get() as usize;
        if p.ni.rx_commit.get() == 1 {
            self.last_progress = cycle;
            let node = &mut self.nodes[i];
            let Some(pkt) = node.arrived[class].pop_front() else {
                return bad(
                    &format!("rx_commit (rx_class {class})"),
                    format!("0 (no class-{class} packet delivered)"),
                    "1".into(),
                );
            };
            if class == 1 && !node.arrived[0].is_empty() {
                self.cov.class1_first += 1;
            }
            let outcome = node.golden.receive_packet_on(&pkt, class);
            node.golden_dirty = true;
            let mut fig_t = None;
            let h = Header::from_bits(pkt.header_word()).expect("delivered intact");
            let f = Footer::from_bits(pkt.footer_word()).expect("delivered intact");
            match outcome {
                RxOutcome::Accepted => {
                    self.cov.accepted += 1;
                    // A message is readable from the next cycle; a write's
                    // completion from the cycle after its B (see below).
                    let t1 = cycle + 1;
                    match h.ptype() {
                        PacketType::RdmaWrite if f.last() => {
                            fig_t = self.t_door.remove(&(i, f.src().to_bits(), f.txid()));
                        }
                        PacketType::Mailbox => {
                            let id = pkt.words[1] as u32;
                            if let Some((t0, iso)) = self.t_send.remove(&id) {
                                record(&mut self.fig.pkt_load, t1 - t0);
                                if iso {
                                    self.fig.pkt_16b.push(t1 - t0);
                                }
                            }
                        }
                        _ => {}
                    }
                }
                // A read request finding the read queue full (answered
                // Nack READ_BUSY: the requester posts it again).
                RxOutcome::Refused if h.ptype() == PacketType::RdmaReadReq => {
                    self.cov.refused_reads += 1
                }
                // A message finding the mailbox full (MailboxNack: resent).
                RxOutcome::Refused => self.cov.refused_full += 1,
                other => {
                    return bad(
                        "rx_commit",
                        "golden outcome Accepted or Refused (every packet sent is valid)".into(),
                        format!("golden outcome {other:?}"),
                    )
                }
            }
            let writes = node.golden.take_writes();
            for _ in &writes {
                node.landing.push_back(fig_t.take());
            }
            node.wr.expect(writes, h.pdid());
        } else if p.ni.rx_busy.get() == 1 {
            self.cov.busy_cycles += 1;
            let node = &mut self.nodes[i];
            let Some(pkt) = node.arrived[class].front() else {
                return bad(
                    &format!("rx_busy (rx_class {class})"),
                    format!("0 (no class-{class} packet delivered)"),
                    "1".into(),
                );
            };
            if node.golden_dirty || node.busy_checked != Some(class) {
                node.golden_dirty = false;
                node.busy_checked = Some(class);
                self.cov.busy_checks += 1;
                let o = node.golden.receive_packet_on(pkt, class);
                if o != RxOutcome::Busy {
                    return bad(
                        &format!("rx_busy (rx_class {class})"),
                        format!("0 (golden outcome {o:?})"),
                        "1".into(),
                    );
                }
            }
            if let Some((n, _, busy)) = &mut self.hold {
                *busy += (*n == i) as u64;
            }
        }
        // AXI4 write slave; a B: the golden write lands (its completion
        // and notify response are posted now, visible from the next cycle).
        let node = &mut self.nodes[i];
        let ev = node.wr.check(&p.ni, rep, cycle, &mut node.mem)?;
        if ev.written.is_some() {
            self.cov.axi_writes += 1;
        }
        if ev.landed {
            if let Err(e) = node.golden.write_landed() {
                return bad("m_bvalid && m_bready", format!("no B ({e})"), "B".into());
            }
            node.golden_dirty = true;
            if let Some(Some((t0, iso))) = node.landing.pop_front() {
                let d = cycle + 1 - t0;
                record(&mut self.fig.write_load, d);
                if iso {
                    self.fig.write_64b.push(d);
                }
            }
        }
        // 4. A write accepted.
        if wr_fire {
            let (addr, data, prot, meta) = node.axil.take_write(rep)?;
            let pr = if prot { Prot::Privileged } else { Prot::User };
            let gdata = if fault == Fault::GoldenWindowPdid
                && i == 1
                && addr == regs::win_reg(0, regs::WIN_CTRL)
            {
                data ^ 1
            } else {
                data
            };
            let r = node.golden.axil_write_prot(addr, gdata, pr);
            node.golden_dirty = true;
            node.axil.wrote(addr, r);
            let me = node.me.to_bits();
            if r != AxilResp::Okay && !matches!(meta, Meta::None) {
                self.cov.refused += 1;
            }
            let pdid = self.pdid as u32;
            match meta {
                Meta::Doorbell {
                    dest,
                    txid,
                    notify,
                    len,
                } if r == AxilResp::Okay => {
                    self.cov.rdma_writes += 1;
                    self.cov.rdma_bytes += len;
                    let pm = self.params.ni.ni.max_payload_bytes as u64;
                    self.cov.multi_packet += (len > pm) as u64;
                    let peer = self.nodes[dest].me.to_bits();
                    *self
                        .exp_cq
                        .entry((dest, 1 | (txid as u32) << 16, me, pdid))
                        .or_default() += 1;
                    if notify {
                        *self
                            .exp_cq
                            .entry((i, 3 | (txid as u32) << 16, peer, pdid))
                            .or_default() += 1;
                    }
                    self.t_door
                        .insert((dest, me, txid), (cycle, self.phase == Phase::Measure));
                }
                Meta::Read { desc, repost } if r == AxilResp::Okay => {
                    let ReadDesc {
                        server,
                        txid,
                        notify,
                        len,
                        ..
                    } = desc;
                    if repost {
                        self.cov.read_reposts += 1;
                    } else {
                        self.cov.rdma_reads += 1;
                        self.cov.read_bytes += len;
                        let server_bits = self.nodes[server].me.to_bits();
                        *self
                            .exp_cq
                            .entry((i, 2 | (txid as u32) << 16, server_bits, pdid))
                            .or_default() += 1;
                        if notify {
                            *self
                                .exp_cq
                                .entry((server, 3 | (txid as u32) << 16, me, pdid))
                                .or_default() += 1;
                        }
                    }
                    self.nodes[i].reads.insert(txid, desc);
                }
                // A refused read posted again found the queue full: again
                // later (its completions are still expected).
                Meta::Read { desc, repost: true } => self.nodes[i].repost.push_back(desc),
                Meta::Send { dest, id, bytes } if r == AxilResp::Okay => {
                    self.cov.sends += 1;
                    self.exp_mb.insert((dest, id), (me, bytes));
                    self.t_send
                        .insert(id, (cycle, self.phase == Phase::Measure));
                }
                _ => {}
            }
        }
        // 5. AXI4-Lite responses.
        let node = &mut self.nodes[i];
        // Progress for the watchdog: an accepted doorbell, send or pop; not
        // a read, a refused write or a descriptor word (software polls and
        // retries refused doorbells all the time, also in a deadlock).
        if let Some((addr, AxilResp::Okay)) = node.axil.response_b(&p.ni, rep)? {
            if moves(addr) {
                self.last_progress = cycle;
            }
        }
        if let Some((addr, v, _)) = node.axil.response_r(&p.ni, rep)? {
            if let Some(m) = self.consume(i, addr, v, cycle) {
                return Err(m);
            }
        }
        // 6. AXI4 read: AR checks, R beats.
        let node = &mut self.nodes[i];
        let lim = 1u64 << self.params.ni.ni.addr_bits;
        let pdid = node.tx.pdid();
        node.rd.check(&p.ni, rep, cycle, lim, pdid)?;
        // 7. Flits out.
        if p.ni.out_valid.get() == 1 {
            self.last_progress = cycle;
            self.cov.flits += 1;
            if let Some(words) = node.tx.flit(&p.ni, rep)? {
                // Its tail has left: a message may be acknowledged now.
                node.golden.packet_left(&Packet { words });
                node.golden_dirty = true;
            }
        }
        Ok(())
    }

    /// Software consumption: a completion-queue or mailbox read returned `v`.
    fn consume(&mut self, i: usize, addr: u32, v: u32, cycle: u64) -> Option<Mismatch> {
        let node = &mut self.nodes[i];
        let rd = |a: u32| Op::Read {
            addr: a,
            prot: false,
        };
        let wr = |a: u32| Op::Write {
            addr: a,
            data: 1,
            prot: false,
            meta: Meta::None,
        };
        let cq = regs::CQ_PAGE;
        let mbp = regs::MB_PAGE;
        if addr == cq + regs::CQ_W0 {
            if v != 0 {
                node.cq_words = vec![v];
                node.sw.push_front(wr(cq + regs::CQ_POP));
                node.sw.push_front(rd(cq + regs::CQ_W0 + 8));
                node.sw.push_front(rd(cq + regs::CQ_W0 + 4));
            }
        } else if addr == cq + regs::CQ_W0 + 4 {
            node.cq_words.push(v);
        } else if addr == cq + regs::CQ_W0 + 8 {
            node.cq_words.push(v);
            let w = std::mem::take(&mut node.cq_words);
            // READ_DONE, REMOTE_DENIED, reason READ_BUSY: the server's read
            // queue was full; the read (still expected to complete) is
            // posted again.
            let txid = (w[0] >> 16 & 0x3FFF) as u16;
            if w[0] & 0xFFFF == 2 | 3 << 4 | (NACK_READ_BUSY as u32 & 0xF) << 8 {
                let ok = (i, 2 | (txid as u32) << 16, w[1], w[2]);
                let server = node.reads.get(&txid).map(|d| d.server);
                let server = server.map(|k| self.nodes[k].me.to_bits());
                if !self.exp_cq.contains_key(&ok) || server != Some(w[1]) {
                    return Some(Mismatch {
                        cycle,
                        port: format!("n{i} completion read (CQ_W0..W2)"),
                        expected: "READ_BUSY only for an outstanding read of this node".into(),
                        actual: format!("{:08x?}", w),
                    });
                }
                let node = &mut self.nodes[i];
                let d = node.reads.remove(&txid).expect("an outstanding read");
                node.repost.push_back(d);
                self.cov.read_busy_seen += 1;
                return None;
            }
            let key = (i, w[0], w[1], w[2]);
            match self.exp_cq.get_mut(&key) {
                Some(c) => {
                    *c -= 1;
                    if *c == 0 {
                        self.exp_cq.remove(&key);
                    }
                    match w[0] & 15 {
                        1 => self.cov.write_in += 1,
                        2 => {
                            self.cov.read_done += 1;
                            self.nodes[i].reads.remove(&txid);
                        }
                        _ => self.cov.notify += 1,
                    }
                }
                None => {
                    return Some(Mismatch {
                        cycle,
                        port: format!("n{i} completion read (CQ_W0..W2)"),
                        expected: "an outstanding completion, each seen once".into(),
                        actual: format!("{:08x?} (unexpected or duplicate)", w),
                    })
                }
            }
        } else if addr == mbp + regs::MB_LEN {
            if v != 0 {
                node.mb = Some((v, 0, Vec::new()));
                node.sw.push_front(wr(mbp + regs::MB_POP));
                for k in (0..v.div_ceil(4)).rev() {
                    node.sw.push_front(rd(mbp + regs::MB_DATA + 4 * k));
                }
                node.sw.push_front(rd(mbp + regs::MB_SRC));
            }
        } else if addr == mbp + regs::MB_SRC {
            if let Some(m) = &mut node.mb {
                m.1 = v;
            }
        } else if addr >= mbp + regs::MB_DATA {
            let (len, src, mut bytes) = node.mb.take()?;
            bytes.extend_from_slice(&v.to_le_bytes());
            if bytes.len() < len as usize {
                node.mb = Some((len, src, bytes));
                return None;
            }
            bytes.truncate(len as usize);
            let id = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
            match self.exp_mb.remove(&(i, id)) {
                Some((s, b)) if s == src && b == bytes => self.cov.messages += 1,
                e => {
                    return Some(Mismatch {
                        cycle,
                        port: format!("n{i} mailbox message read (MB_SRC, MB_DATA)"),
                        expected: match e {
                            Some((s, b)) => format!("src 0x{s:06x} bytes {b:02x?}"),
                            None => "an outstanding message, each seen once".into(),
                        },
                        actual: format!("src 0x{src:06x} bytes {bytes:02x?}"),
                    })
                }
            }
        }
        None
    }
}

impl Bench for NodePairBench {
    fn block(&self) -> &str {
        "node-pair"
    }

    fn point(&self) -> String {
        point_text(&self.params)
    }

    fn emit(&self) -> Result<Emitted> {
        let e = emit_node_pair(&self.params)?;
        let mut config = String::from("`verilator_config\n");
        for m in instanced_modules(&self.params) {
            config.push_str(&format!("no_inline -module \"{m}\"\n"));
        }
        config.push_str("`verilog\n");
        let mut text = config;
        text.push_str(&exanet_hdl::router::single_file(&e));
        Ok(Emitted {
            modules: vec![(e.top.clone(), text)],
            top: e.top,
        })
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let nports = self.params.router.num_ports();
        for (n, node) in self.nodes.iter_mut().enumerate() {
            let p = |s: &str, w: u32| sim.port_w(&format!("n{n}_{s}"), w);
            let mut errors = vec![("eject_errors".to_string(), p("eject_errors", 32)?)];
            for c in ["dropped_packets", "flit_errors", "credit_errors"] {
                for q in 0..nports {
                    let name = format!("{c}_{q}");
                    errors.push((name.clone(), p(&name, 32)?));
                }
            }
            node.p = Some(NodePorts {
                ni: NiPorts::bind(sim, &format!("n{n}_"), "tx")?,
                rx_valid: p("rx_valid", 1)?,
                rx_data: p("rx_data", 128)?,
                rx_head: p("rx_head", 1)?,
                rx_tail: p("rx_tail", 1)?,
                rx_vc: p("rx_vc", 4)?,
                errors,
            });
        }
        self.reset_port = Some(sim.port_w("reset", 1)?);
        Ok(())
    }

    fn reset(&mut self) {
        let ports: Vec<Option<NodePorts>> = self.nodes.iter().map(|n| n.p.clone()).collect();
        let mut fresh =
            Self::with_fault(self.params.clone(), self.fault).expect("validated at construction");
        for (n, p) in fresh.nodes.iter_mut().zip(ports) {
            n.p = p;
        }
        fresh.reset_port = self.reset_port;
        *self = fresh;
    }

    fn drive(&mut self, rng: &mut Rng, cycle: u64) {
        self.cycle = cycle;
        if self.reset_at.is_some_and(|t| cycle >= t) && self.phase == Phase::Traffic {
            self.mid_reset().expect("validated at construction");
        }
        if let Some((_, end, busy)) = self.hold {
            if cycle >= end || busy >= 500 || self.phase != Phase::Traffic {
                self.end_hold();
            }
        }
        let reset = self.reset_now;
        self.reset_port
            .expect("bind() before running")
            .set(reset as u64);
        if !reset && !self.setup_done {
            self.setup_done = true;
            self.setup(rng);
        }
        // Phase changes.
        match self.phase {
            Phase::Setup if self.setup_done && self.nodes.iter().all(|n| n.sw_idle()) => {
                self.phase = Phase::Measure;
            }
            Phase::Traffic if cycle > self.phase_start + self.phase_len => {
                self.phase = Phase::Drain;
                self.phase_start = cycle;
            }
            _ => {}
        }
        for n in 0..self.nodes.len() {
            if !reset && self.nodes[n].sw.is_empty() && self.nodes[n].sw_idle() {
                self.generate(rng, n);
            }
            let node = &mut self.nodes[n];
            let p = node.p.clone().expect("bind() before running");
            if reset {
                node.axil.drive_reset(&p.ni);
                node.rd.drive_reset(&p.ni);
                node.wr.drive_reset(&p.ni);
                continue;
            }
            // Software: one access at a time.
            if node.axil.idle() {
                if let Some(op) = node.sw.pop_front() {
                    node.axil.start(op);
                }
            }
            node.axil.drive(&p.ni, rng);
            // Memory read.
            node.rd.drive(&p.ni, rng, cycle, &node.mem);
            // Memory write.
            node.wr.drive(&p.ni, rng, cycle);
        }
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        if self.reset_now {
            self.last_progress = cycle;
            return None;
        }
        for i in 0..self.nodes.len() {
            if let Err(m) = self.check_node(i, cycle) {
                return Some(m);
            }
        }
        if self.phase == Phase::Drain {
            if self.drained() {
                if let Some(m) = self.compare_memories(cycle) {
                    return Some(m);
                }
                self.cov.drains += 1;
                self.cov.drains_after_reset += (self.cov.mid_resets > 0) as u64;
                let mut rng = Rng::new(cycle ^ 0xD2A1);
                self.start_traffic(&mut rng);
            } else if cycle > self.phase_start + DRAIN_MAX {
                return Some(Mismatch {
                    cycle,
                    port: "drain".into(),
                    expected: format!("every node idle within {DRAIN_MAX} cycles"),
                    actual: format!(
                        "{} completions and {} messages outstanding",
                        self.exp_cq.values().sum::<u32>(),
                        self.exp_mb.len()
                    ),
                });
            }
        }
        let pending = !self.drained() || self.nodes.iter().any(|n| !n.sw.is_empty());
        if !pending {
            self.last_progress = cycle;
        } else if cycle > self.last_progress + WATCHDOG {
            return Some(Mismatch {
                cycle,
                port: "watchdog".into(),
                expected: format!(
                    "a flit, a decision or an accepted AXI4-Lite write within {WATCHDOG} cycles"
                ),
                actual: format!(
                    "none ({} completions, {} messages outstanding; flows {:?})",
                    self.exp_cq.values().sum::<u32>(),
                    self.exp_mb.len(),
                    self.flows
                        .iter()
                        .map(|(k, q)| (*k, q.len()))
                        .collect::<Vec<_>>()
                ),
            });
        }
        None
    }

    fn advance(&mut self) {
        self.reset_now = false;
    }
}
