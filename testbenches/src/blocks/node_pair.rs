//! Co-simulation bench of `node-pair`: network interfaces joined by RTL
//! routers (`exanet_hdl::node_pair`: one NI per router of an `A x B x C`
//! network, default two nodes) against one golden NI
//! (`exanet_sim::ni::Ni`) per node, transaction by transaction.
//!
//! The network between the NIs is the cycle-true RTL (routers, links, the
//! ejection adapters); the golden NIs exchange the same packets at
//! transaction level: what golden node `s` emits towards node `d` is queued
//! per flow `(s, d)`, and every packet the RTL delivers into NI `d` must be
//! the head of its flow (bit-exact: nothing lost, duplicated, reordered or
//! damaged); golden `d` then receives it at the RTL's `rx_commit` (the NI
//! timing contract, `exanet_hdl::ni` module doc).
//!
//! Agents per node, all random (seeded):
//! - **Software** (AXI4-Lite master, one access at a time, as a core doing
//!   uncached loads and stores): privileged set-up (receive window 0 = the
//!   node's landing area with the job's PDID, every channel's PDID, mailbox
//!   open, TX_ENABLE); then RDMA writes from the node's source regions to
//!   another node's landing area (lengths 1 B .. 16 KiB, any alignment,
//!   multi-packet, notify on or off, any channel; a doorbell refused when
//!   the queue is full is compared like any access), packetizer sends
//!   (4 .. `mailbox_msg_bytes` bytes, a unique id in the first word), and
//!   consumption of the completion queue (CQ_W0; when non-empty CQ_W1,
//!   CQ_W2, CQ_POP) and of the mailbox (MB_LEN; when non-empty MB_SRC,
//!   MB_DATA\[..\], MB_POP).
//! - **Memory** (AXI4 slave, read and write): random AR/AW/W backpressure,
//!   random read latency and beat gaps, random B latency; a sparse memory
//!   holding the same bytes as the golden model's.
//!
//! Checks (the first failure stops the run, with cycle, signal, expected
//! and actual): every AXI4-Lite response and read value against the golden
//! model's; at `tx_pick` the golden model has a packet, and every flit the
//! NI sends equals it (data, head, tail, VC); AR shape and ARUSER = PDID;
//! every delivered packet is the head of its flow; at `rx_commit` the golden
//! outcome is Accepted or Refused (mailbox full; the bench sends nothing
//! that must be rejected), at `rx_busy` Busy; the golden memory writes
//! appear on AXI4 as one burst each with exactly the strobed bytes; every
//! completion and mailbox message software reads was expected (a doorbell
//! or send the golden model accepted, with matching kind, peer, txid, PDID,
//! source and bytes) and is seen exactly once; no router drops a packet or
//! counts an error; the ejection adapters count no protocol error; a
//! watchdog fails a run in which nothing moves for [`WATCHDOG`] cycles.
//!
//! Phases: set-up, a **latency measurement** (node 0 alone: isolated 64 B
//! RDMA writes and 16 B packetizer sends to node 1, see [`PairFigures`]),
//! then traffic phases of random length and load, each ending with a
//! **drain** (no new transfers, software consumes until every expected
//! completion and message is seen and both sides are idle), after which
//! every node's memory must equal its golden model's byte for byte, and no
//! flow may hold a packet.

use super::{check_keys, kv_u64, parse_kv, BlockInfo};
use crate::cosim::{Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::{bail, Result};
use exanet_hdl::emit::Emitted;
use exanet_hdl::ni::NiRtlParams;
use exanet_hdl::node_pair::{emit_node_pair, instanced_modules, NodePairParams};
use exanet_sim::ni::memory::MemWrite;
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
    vec!["dims=2x1x1,link_latency=1,channels=4,desc_queue_depth=8,pkt_slots=4,mailbox_msg_bytes=64,max_payload_bytes=256,mailbox_depth=4,cq_depth=8,resp_queue_depth=8"]
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
            ..d.ni.ni.clone()
        },
        buffer_flits: router.buffer_flits,
        vc: 0,
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
        "dims={}x{}x{},link_latency={},channels={},desc_queue_depth={},pkt_slots={},mailbox_msg_bytes={},max_payload_bytes={},mailbox_depth={},cq_depth={},resp_queue_depth={}",
        d[0], d[1], d[2], p.link_latency, n.channels, n.desc_queue_depth, n.pkt_slots,
        n.mailbox_msg_bytes, n.max_payload_bytes, n.mailbox_depth, n.cq_depth, n.resp_queue_depth
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
    /// Packets compared at the NIs' outputs, by type: RdmaWrite, Mailbox,
    /// MailboxAck, MailboxNack, RdmaCompletion.
    pub tx_packets: [u64; 5],
    /// Flits compared (out of the NIs), packets delivered and checked
    /// against their flow.
    pub flits: u64,
    pub delivered: u64,
    /// Golden outcomes at `rx_commit`: accepted, refused (mailbox full).
    pub accepted: u64,
    pub refused_full: u64,
    /// Cycles some NI reported `rx_busy`.
    pub busy_cycles: u64,
    /// AXI4 write bursts compared.
    pub axi_writes: u64,
    /// Completions read and matched: WRITE_IN, NOTIFY; mailbox messages read and matched.
    pub write_in: u64,
    pub notify: u64,
    pub messages: u64,
    /// Drains completed (each with the byte-for-byte memory comparison).
    pub drains: u64,
}

/// Latency figures measured in the bench (cycles).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairFigures {
    /// Isolated 64 B RDMA writes node 0 -> node 1: DOORBELL accepted on
    /// node 0 (cycle t0) to the WRITE_IN completion visible on node 1 (the
    /// cycle after its `rx_commit`, when CQ_COUNT reads non-zero): `t1 - t0`.
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
}

#[derive(Clone, Debug)]
enum Op {
    Write {
        addr: u32,
        data: u32,
        prot: bool,
        meta: Meta,
    },
    Read {
        addr: u32,
    },
}

#[derive(Clone)]
struct NodePorts {
    awvalid: Port,
    awready: Port,
    awaddr: Port,
    awprot: Port,
    wvalid: Port,
    wready: Port,
    wdata: Port,
    bvalid: Port,
    bready: Port,
    bresp: Port,
    arvalid: Port,
    arready: Port,
    araddr: Port,
    arprot: Port,
    rvalid: Port,
    rready: Port,
    rdata: Port,
    rresp: Port,
    m_arvalid: Port,
    m_arready: Port,
    m_araddr: Port,
    m_arlen: Port,
    m_arsize: Port,
    m_arburst: Port,
    m_aruser: Port,
    m_rvalid: Port,
    m_rready: Port,
    m_rdata: Port,
    m_awvalid: Port,
    m_awready: Port,
    m_awaddr: Port,
    m_awlen: Port,
    m_awsize: Port,
    m_awburst: Port,
    m_awuser: Port,
    m_wvalid: Port,
    m_wready: Port,
    m_wdata: Port,
    m_wstrb: Port,
    m_wlast: Port,
    m_bvalid: Port,
    m_bready: Port,
    m_bresp: Port,
    tx_pick: Port,
    tx_busy: Port,
    rx_commit: Port,
    rx_busy: Port,
    tx_valid: Port,
    tx_data: Port,
    tx_head: Port,
    tx_tail: Port,
    tx_vc: Port,
    rx_valid: Port,
    rx_data: Port,
    rx_head: Port,
    rx_tail: Port,
    /// Error counters that must stay 0: name, port.
    errors: Vec<(String, Port)>,
}

struct Burst {
    addr: u64,
    beats: u32,
    done: u32,
    ready_at: u64,
}

/// One node: golden NI, memory, software and memory agents.
struct Node {
    me: Coords,
    golden: Ni,
    mem: SparseMemory,
    p: Option<NodePorts>,
    sw: VecDeque<Op>,
    cur: Option<Op>,
    presented: bool,
    pend_b: VecDeque<(u32, AxilResp)>,
    pend_r: VecDeque<(u32, u32, AxilResp)>,
    bready: bool,
    rready: bool,
    arready: bool,
    bursts: VecDeque<Burst>,
    r_presented: bool,
    exp_w: VecDeque<(MemWrite, u16)>,
    aw: VecDeque<(u64, u32)>,
    beats: Vec<(u128, u16)>,
    awready: bool,
    wready: bool,
    b_owed: VecDeque<u64>,
    b_now: bool,
    expect: VecDeque<(Vec<u128>, u16)>,
    flit_idx: usize,
    rx_words: Vec<u128>,
    arrived: VecDeque<Packet>,
    golden_dirty: bool,
    cq_words: Vec<u32>,
    mb: Option<(u32, u32, Vec<u8>)>,
    txid_next: u16,
    msg_next: u32,
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
        Ok(Node {
            me,
            golden,
            mem,
            p: None,
            sw: VecDeque::new(),
            cur: None,
            presented: false,
            pend_b: VecDeque::new(),
            pend_r: VecDeque::new(),
            bready: false,
            rready: false,
            arready: false,
            bursts: VecDeque::new(),
            r_presented: false,
            exp_w: VecDeque::new(),
            aw: VecDeque::new(),
            beats: Vec::new(),
            awready: false,
            wready: false,
            b_owed: VecDeque::new(),
            b_now: false,
            expect: VecDeque::new(),
            flit_idx: 0,
            rx_words: Vec::new(),
            arrived: VecDeque::new(),
            golden_dirty: true,
            cq_words: Vec::new(),
            mb: None,
            txid_next: 1,
            msg_next: 1,
        })
    }

    fn sw_idle(&self) -> bool {
        self.sw.is_empty() && self.cur.is_none() && self.pend_b.is_empty() && self.pend_r.is_empty()
    }

    fn idle(&self) -> bool {
        self.sw_idle()
            && self.bursts.is_empty()
            && self.exp_w.is_empty()
            && self.aw.is_empty()
            && self.b_owed.is_empty()
            && self.expect.is_empty()
            && self.rx_words.is_empty()
            && self.arrived.is_empty()
            && !self.golden.has_packet()
            && self.p.as_ref().is_some_and(|p| p.tx_busy.get() == 0)
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
        self.sw.push_back(Op::Read {
            addr: regs::CQ_PAGE + regs::CQ_W0,
        });
        self.sw.push_back(Op::Read {
            addr: regs::MB_PAGE + regs::MB_LEN,
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

/// The node-pair bench at one parameter point.
pub struct NodePairBench {
    params: NodePairParams,
    fault: Fault,
    nodes: Vec<Node>,
    index: HashMap<u32, usize>,
    pdid: u16,
    flows: HashMap<(usize, usize), VecDeque<Vec<u128>>>,
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

    /// Software of node `n` has nothing queued: give it work.
    fn generate(&mut self, rng: &mut Rng, n: usize) {
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
    fn check_node(&mut self, i: usize, cycle: u64) -> Option<Mismatch> {
        let bad = |port: &str, e: String, a: String| {
            Some(Mismatch {
                cycle,
                port: format!("n{i}_{port}"),
                expected: e,
                actual: a,
            })
        };
        let p = self.nodes[i].p.clone().expect("bound");
        for (name, q) in &p.errors {
            if q.get() != 0 {
                return bad(name, "0".into(), format!("{}", q.get()));
            }
        }
        let vc = self.params.ni.vc as u64;
        let fault = self.fault;
        // 1. A read accepted.
        let presented = self.nodes[i].cur.is_some() && self.nodes[i].presented;
        let rd_fire = p.arready.get() == 1;
        let wr_fire = p.awready.get() == 1;
        if p.wready.get() != p.awready.get() {
            return bad(
                "s_wready",
                format!("{}", p.awready.get()),
                format!("{}", p.wready.get()),
            );
        }
        if (rd_fire || wr_fire) && !presented {
            return bad(
                "s_arready/s_awready",
                "0 (nothing presented)".into(),
                "1".into(),
            );
        }
        if rd_fire {
            let node = &mut self.nodes[i];
            match node.cur.take() {
                Some(Op::Read { addr }) => {
                    let (v, r) = node.golden.axil_read_prot(addr, Prot::User);
                    node.pend_r.push_back((addr, v, r));
                }
                other => {
                    return bad(
                        "s_arready",
                        "0 (a write is presented)".into(),
                        format!("1 ({other:?})"),
                    )
                }
            }
        }
        // 2. Pick.
        let busy = p.tx_busy.get() == 1;
        if p.tx_pick.get() == 1 {
            if busy {
                return bad("tx_pick", "0 (engine busy)".into(), "1".into());
            }
            let node = &mut self.nodes[i];
            node.golden_dirty = true;
            let Some(pk) = node.golden.emit_packet() else {
                return bad("tx_pick", "0 (golden has no packet)".into(), "1".into());
            };
            let h = Header::from_bits(pk.header_word()).expect("golden header");
            let k = match h.ptype() {
                PacketType::RdmaWrite => 0,
                PacketType::Mailbox => 1,
                PacketType::MailboxAck => 2,
                PacketType::MailboxNack => 3,
                _ => 4,
            };
            self.cov.tx_packets[k] += 1;
            let Some(&d) = self.index.get(&h.dest().to_bits()) else {
                return bad(
                    "tx_pick",
                    "a packet to a node of the network".into(),
                    format!("destination {:?}", h.dest()),
                );
            };
            self.flows
                .entry((i, d))
                .or_default()
                .push_back(pk.words.clone());
            node.expect.push_back((pk.words, h.pdid()));
        } else if !busy && self.nodes[i].golden.has_packet() {
            return bad("tx_pick", "1 (golden has a packet)".into(), "0".into());
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
            if p.rx_tail.get() == 1 {
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
                let flow = self.flows.entry((s, i)).or_default();
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
                            &format!("rx_data (packet from n{s})"),
                            show(e),
                            show(Some(&words)),
                        );
                    }
                }
                self.cov.delivered += 1;
                self.nodes[i].arrived.push_back(Packet { words });
            }
        }
        if p.rx_commit.get() == 1 {
            self.last_progress = cycle;
            let node = &mut self.nodes[i];
            let Some(pkt) = node.arrived.pop_front() else {
                return bad("rx_commit", "0 (no packet delivered)".into(), "1".into());
            };
            let outcome = node.golden.receive_packet(&pkt);
            node.golden_dirty = true;
            let h = Header::from_bits(pkt.header_word()).expect("delivered intact");
            let f = Footer::from_bits(pkt.footer_word()).expect("delivered intact");
            match outcome {
                RxOutcome::Accepted => {
                    self.cov.accepted += 1;
                    let t1 = cycle + 1;
                    let rec = |acc: &mut (u64, u64, u64), d: u64| {
                        acc.0 += d;
                        acc.1 += 1;
                        acc.2 = acc.2.max(d);
                    };
                    match h.ptype() {
                        PacketType::RdmaWrite if f.last() => {
                            if let Some((t0, iso)) =
                                self.t_door.remove(&(i, f.src().to_bits(), f.txid()))
                            {
                                rec(&mut self.fig.write_load, t1 - t0);
                                if iso {
                                    self.fig.write_64b.push(t1 - t0);
                                }
                            }
                        }
                        PacketType::Mailbox => {
                            let id = pkt.words[1] as u32;
                            if let Some((t0, iso)) = self.t_send.remove(&id) {
                                rec(&mut self.fig.pkt_load, t1 - t0);
                                if iso {
                                    self.fig.pkt_16b.push(t1 - t0);
                                }
                            }
                        }
                        _ => {}
                    }
                }
                RxOutcome::Refused => self.cov.refused_full += 1,
                other => {
                    return bad(
                        "rx_commit",
                        "golden outcome Accepted or Refused (every packet sent is valid)".into(),
                        format!("golden outcome {other:?}"),
                    )
                }
            }
            let pdid = h.pdid();
            for w in node.golden.take_writes() {
                node.exp_w.push_back((w, pdid));
            }
        } else if p.rx_busy.get() == 1 {
            self.cov.busy_cycles += 1;
            let node = &mut self.nodes[i];
            let Some(pkt) = node.arrived.front() else {
                return bad("rx_busy", "0 (no packet delivered)".into(), "1".into());
            };
            if node.golden_dirty {
                node.golden_dirty = false;
                let o = node.golden.receive_packet(pkt);
                if o != RxOutcome::Busy {
                    return bad("rx_busy", format!("0 (golden outcome {o:?})"), "1".into());
                }
            }
        }
        // AXI4 write slave.
        let node = &mut self.nodes[i];
        if p.m_awvalid.get() == 1 && node.awready {
            let addr = p.m_awaddr.get();
            let beats = p.m_awlen.get() as u32 + 1;
            let Some((w, pdid)) = node.exp_w.get(node.aw.len()) else {
                return bad(
                    "m_awvalid",
                    "0 (the golden model wrote nothing)".into(),
                    format!("1 (0x{addr:x})"),
                );
            };
            let exp_beats = (w.addr % 16 + w.data.len() as u64).div_ceil(16);
            if addr != w.addr & !15
                || beats as u64 != exp_beats
                || p.m_awsize.get() != 4
                || p.m_awburst.get() != 1
                || (addr % 4096) + 16 * beats as u64 > 4096
            {
                return bad(
                    "m_awaddr/len/size/burst",
                    format!("0x{:x}/{}/4/1", w.addr & !15, exp_beats - 1),
                    format!(
                        "0x{addr:x}/{}/{}/{}",
                        beats - 1,
                        p.m_awsize.get(),
                        p.m_awburst.get()
                    ),
                );
            }
            if p.m_awuser.get() != *pdid as u64 {
                return bad(
                    "m_awuser",
                    format!("0x{pdid:x}"),
                    format!("0x{:x}", p.m_awuser.get()),
                );
            }
            node.aw.push_back((addr, beats));
        }
        if p.m_wvalid.get() == 1 && node.wready {
            let Some(&(addr, beats)) = node.aw.front() else {
                return bad("m_wvalid", "0 (no AW accepted)".into(), "1".into());
            };
            node.beats
                .push((p.m_wdata.get_u128(), p.m_wstrb.get() as u16));
            let k = node.beats.len() as u32;
            if (p.m_wlast.get() == 1) != (k == beats) {
                return bad(
                    &format!("m_wlast (beat {} of {beats})", k - 1),
                    format!("{}", k == beats),
                    format!("{}", p.m_wlast.get() == 1),
                );
            }
            if k == beats {
                let (w, _) = node.exp_w.pop_front().expect("AW matched a write");
                node.aw.pop_front();
                let mut got = Vec::new();
                let mut first = None;
                for (j, (d, st)) in node.beats.drain(..).enumerate() {
                    for (b, byte) in d.to_le_bytes().iter().enumerate() {
                        if st >> b & 1 == 1 {
                            let a = addr + 16 * j as u64 + b as u64;
                            let f0 = *first.get_or_insert(a);
                            if a != f0 + got.len() as u64 {
                                return bad(
                                    "m_wstrb",
                                    "contiguous strobes".into(),
                                    format!("a gap before 0x{a:x}"),
                                );
                            }
                            got.push(*byte);
                        }
                    }
                }
                if first != Some(w.addr) || got != w.data {
                    return bad(
                        "m_wdata/m_wstrb",
                        format!("{} bytes at 0x{:x}: {:02x?}", w.data.len(), w.addr, w.data),
                        format!(
                            "{} bytes at 0x{:x}: {:02x?}",
                            got.len(),
                            first.unwrap_or(0),
                            got
                        ),
                    );
                }
                node.mem.write(w.addr, &got);
                self.cov.axi_writes += 1;
                node.b_owed.push_back(cycle + 1 + rng_lat(cycle) / 2);
            }
        }
        if node.b_now && p.m_bready.get() == 1 {
            node.b_owed.pop_front();
            node.b_now = false;
        }
        // 4. A write accepted.
        if wr_fire {
            match node.cur.take() {
                Some(Op::Write {
                    addr,
                    data,
                    prot,
                    meta,
                }) => {
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
                    node.pend_b.push_back((addr, r));
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
                        Meta::Send { dest, id, bytes } if r == AxilResp::Okay => {
                            self.cov.sends += 1;
                            self.exp_mb.insert((dest, id), (me, bytes));
                            self.t_send
                                .insert(id, (cycle, self.phase == Phase::Measure));
                        }
                        _ => {}
                    }
                }
                other => {
                    return bad(
                        "s_awready",
                        "0 (a read is presented)".into(),
                        format!("1 ({other:?})"),
                    )
                }
            }
        }
        // 5. AXI4-Lite responses.
        let node = &mut self.nodes[i];
        let code = |r: AxilResp| if r == AxilResp::Okay { 0 } else { 2 };
        if p.bvalid.get() == 1 && node.bready {
            self.last_progress = cycle;
            let Some((addr, r)) = node.pend_b.pop_front() else {
                return bad("s_bvalid", "0".into(), "1".into());
            };
            if p.bresp.get() != code(r) {
                return bad(
                    &format!("s_bresp (write 0x{addr:05x})"),
                    format!("{}", code(r)),
                    format!("{}", p.bresp.get()),
                );
            }
        }
        if p.rvalid.get() == 1 && node.rready {
            self.last_progress = cycle;
            let Some((addr, v, r)) = node.pend_r.pop_front() else {
                return bad("s_rvalid", "0".into(), "1".into());
            };
            if p.rresp.get() != code(r) || p.rdata.get() != v as u64 {
                return bad(
                    &format!("s_rresp/s_rdata (read 0x{addr:05x})"),
                    format!("{}/0x{v:08x}", code(r)),
                    format!("{}/0x{:08x}", p.rresp.get(), p.rdata.get()),
                );
            }
            if let Some(m) = self.consume(i, addr, v, cycle) {
                return Some(m);
            }
        }
        // 6. AXI4 read: AR checks, R beats.
        let node = &mut self.nodes[i];
        if p.m_arvalid.get() == 1 && node.arready {
            let addr = p.m_araddr.get();
            let beats = p.m_arlen.get() as u32 + 1;
            let lim = 1u64 << self.params.ni.ni.addr_bits;
            let pdid = node.expect.back().map_or(0, |e| e.1);
            if !addr.is_multiple_of(16)
                || addr >= lim
                || (addr % 4096) + 16 * beats as u64 > 4096
                || p.m_arsize.get() != 4
                || p.m_arburst.get() != 1
            {
                return bad(
                    "m_araddr/len/size/burst",
                    "16-byte aligned, below 2^addr_bits, within 4 KiB, size 4, INCR".into(),
                    format!(
                        "0x{addr:x}/{}/{}/{}",
                        beats - 1,
                        p.m_arsize.get(),
                        p.m_arburst.get()
                    ),
                );
            }
            if p.m_aruser.get() != pdid as u64 {
                return bad(
                    "m_aruser",
                    format!("0x{pdid:x}"),
                    format!("0x{:x}", p.m_aruser.get()),
                );
            }
            node.bursts.push_back(Burst {
                addr,
                beats,
                done: 0,
                ready_at: cycle + 1 + rng_lat(cycle),
            });
        }
        if node.r_presented && p.m_rready.get() == 1 {
            let b = node.bursts.front_mut().expect("presented beat has a burst");
            b.done += 1;
            if b.done == b.beats {
                node.bursts.pop_front();
            }
            node.r_presented = false;
        }
        // 7. Flits out.
        if p.tx_valid.get() == 1 {
            self.last_progress = cycle;
            self.cov.flits += 1;
            let Some((words, _)) = node.expect.front() else {
                return bad("tx_valid", "0 (no packet picked)".into(), "1".into());
            };
            let k = node.flit_idx;
            let n = words.len();
            let data = p.tx_data.get_u128();
            if data != words[k] {
                return bad(
                    &format!("tx_data (flit {k} of {n})"),
                    format!("0x{:032x}", words[k]),
                    format!("0x{data:032x}"),
                );
            }
            let (h, t, v) = (p.tx_head.get() == 1, p.tx_tail.get() == 1, p.tx_vc.get());
            if h != (k == 0) || t != (k + 1 == n) || v != vc {
                return bad(
                    &format!("tx_head/tail/vc (flit {k} of {n})"),
                    format!("{}/{}/{vc}", k == 0, k + 1 == n),
                    format!("{h}/{t}/{v}"),
                );
            }
            if k + 1 == n {
                node.expect.pop_front();
                node.flit_idx = 0;
            } else {
                node.flit_idx += 1;
            }
        }
        None
    }

    /// Software consumption: a completion-queue or mailbox read returned `v`.
    fn consume(&mut self, i: usize, addr: u32, v: u32, cycle: u64) -> Option<Mismatch> {
        let node = &mut self.nodes[i];
        let rd = |a: u32| Op::Read { addr: a };
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
            let key = (i, w[0], w[1], w[2]);
            match self.exp_cq.get_mut(&key) {
                Some(c) => {
                    *c -= 1;
                    if *c == 0 {
                        self.exp_cq.remove(&key);
                    }
                    match w[0] & 15 {
                        1 => self.cov.write_in += 1,
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
                awvalid: p("s_awvalid", 1)?,
                awready: p("s_awready", 1)?,
                awaddr: p("s_awaddr", 20)?,
                awprot: p("s_awprot", 1)?,
                wvalid: p("s_wvalid", 1)?,
                wready: p("s_wready", 1)?,
                wdata: p("s_wdata", 32)?,
                bvalid: p("s_bvalid", 1)?,
                bready: p("s_bready", 1)?,
                bresp: p("s_bresp", 2)?,
                arvalid: p("s_arvalid", 1)?,
                arready: p("s_arready", 1)?,
                araddr: p("s_araddr", 20)?,
                arprot: p("s_arprot", 1)?,
                rvalid: p("s_rvalid", 1)?,
                rready: p("s_rready", 1)?,
                rdata: p("s_rdata", 32)?,
                rresp: p("s_rresp", 2)?,
                m_arvalid: p("m_arvalid", 1)?,
                m_arready: p("m_arready", 1)?,
                m_araddr: p("m_araddr", 42)?,
                m_arlen: p("m_arlen", 8)?,
                m_arsize: p("m_arsize", 3)?,
                m_arburst: p("m_arburst", 2)?,
                m_aruser: p("m_aruser", 16)?,
                m_rvalid: p("m_rvalid", 1)?,
                m_rready: p("m_rready", 1)?,
                m_rdata: p("m_rdata", 128)?,
                m_awvalid: p("m_awvalid", 1)?,
                m_awready: p("m_awready", 1)?,
                m_awaddr: p("m_awaddr", 42)?,
                m_awlen: p("m_awlen", 8)?,
                m_awsize: p("m_awsize", 3)?,
                m_awburst: p("m_awburst", 2)?,
                m_awuser: p("m_awuser", 16)?,
                m_wvalid: p("m_wvalid", 1)?,
                m_wready: p("m_wready", 1)?,
                m_wdata: p("m_wdata", 128)?,
                m_wstrb: p("m_wstrb", 16)?,
                m_wlast: p("m_wlast", 1)?,
                m_bvalid: p("m_bvalid", 1)?,
                m_bready: p("m_bready", 1)?,
                m_bresp: p("m_bresp", 2)?,
                tx_pick: p("tx_pick", 1)?,
                tx_busy: p("tx_busy", 1)?,
                rx_commit: p("rx_commit", 1)?,
                rx_busy: p("rx_busy", 1)?,
                tx_valid: p("tx_valid", 1)?,
                tx_data: p("tx_data", 128)?,
                tx_head: p("tx_head", 1)?,
                tx_tail: p("tx_tail", 1)?,
                tx_vc: p("tx_vc", 4)?,
                rx_valid: p("rx_valid", 1)?,
                rx_data: p("rx_data", 128)?,
                rx_head: p("rx_head", 1)?,
                rx_tail: p("rx_tail", 1)?,
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
                for q in [
                    p.awvalid,
                    p.wvalid,
                    p.arvalid,
                    p.m_rvalid,
                    p.m_bvalid,
                    p.m_arready,
                    p.m_awready,
                    p.m_wready,
                    p.bready,
                    p.rready,
                ] {
                    q.set(0);
                }
                continue;
            }
            // Software: one access at a time.
            if node.cur.is_none() && node.pend_b.is_empty() && node.pend_r.is_empty() {
                if let Some(op) = node.sw.pop_front() {
                    node.cur = Some(op);
                    node.presented = false;
                }
            }
            p.awvalid.set(0);
            p.wvalid.set(0);
            p.arvalid.set(0);
            if let Some(op) = &node.cur {
                if !node.presented && rng.chance(0.7) {
                    node.presented = true;
                }
                if node.presented {
                    match op {
                        Op::Write {
                            addr, data, prot, ..
                        } => {
                            p.awvalid.set(1);
                            p.wvalid.set(1);
                            p.awaddr.set(*addr as u64);
                            p.wdata.set(*data as u64);
                            p.awprot.set(*prot as u64);
                        }
                        Op::Read { addr } => {
                            p.arvalid.set(1);
                            p.araddr.set(*addr as u64);
                            p.arprot.set(0);
                        }
                    }
                }
            }
            node.bready = rng.chance(0.7);
            node.rready = rng.chance(0.7);
            p.bready.set(node.bready as u64);
            p.rready.set(node.rready as u64);
            // Memory read.
            node.arready = rng.chance(0.6);
            p.m_arready.set(node.arready as u64);
            if !node.r_presented {
                if let Some(b) = node.bursts.front() {
                    if cycle >= b.ready_at && rng.chance(0.8) {
                        node.r_presented = true;
                    }
                }
            }
            if node.r_presented {
                let b = node.bursts.front().expect("presented beat has a burst");
                let mut bytes = [0u8; 16];
                node.mem.read_into(b.addr + 16 * b.done as u64, &mut bytes);
                p.m_rdata.set_u128(u128::from_le_bytes(bytes));
                p.m_rvalid.set(1);
            } else {
                p.m_rvalid.set(0);
                p.m_rdata.set_u128(rng.next_u128());
            }
            // Memory write.
            node.awready = rng.chance(0.6);
            node.wready = rng.chance(0.7);
            p.m_awready.set(node.awready as u64);
            p.m_wready.set(node.wready as u64);
            if !node.b_now && node.b_owed.front().is_some_and(|&t| cycle >= t) && rng.chance(0.8) {
                node.b_now = true;
            }
            p.m_bvalid.set(node.b_now as u64);
            p.m_bresp.set(0);
        }
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        if self.reset_now {
            self.last_progress = cycle;
            return None;
        }
        for i in 0..self.nodes.len() {
            if let Some(m) = self.check_node(i, cycle) {
                return Some(m);
            }
        }
        if self.phase == Phase::Drain {
            if self.drained() {
                if let Some(m) = self.compare_memories(cycle) {
                    return Some(m);
                }
                self.cov.drains += 1;
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
                expected: format!("a flit, commit or AXI4-Lite response within {WATCHDOG} cycles"),
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

/// Memory latency of a burst accepted in `cycle` (0..=23, deterministic).
fn rng_lat(cycle: u64) -> u64 {
    let x = cycle.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (x >> 59) % 24
}
