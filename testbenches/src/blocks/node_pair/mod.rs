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
//! - **Software** (AXI4-Lite master, one access at a time, as a core
//!   doing uncached loads and stores): privileged set-up (receive window 0
//!   = the node's landing area with the job's PDID, every channel's PDID,
//!   mailbox open, TX_ENABLE); then RDMA writes from the node's source
//!   regions to another node's landing area (lengths 1 B .. 16 KiB, any
//!   alignment, multi-packet, notify on or off, any channel; a doorbell
//!   refused when the queue is full is compared like any access), RDMA
//!   reads of another node's first source region (its window 1) into the
//!   node's landing area (1 B .. 8 KiB, notify on or off: READ_DONE here,
//!   NOTIFY at the server; a read the server refused because its read queue
//!   was full, READ_DONE / REMOTE_DENIED with reason READ_BUSY, is posted
//!   again until it is served), packetizer sends (4 .. `mailbox_msg_bytes`
//!   bytes, a unique id in the first word), and consumption of the
//!   completion queue (CQ_W0; when non-empty CQ_W1, CQ_W2, CQ_POP) and of
//!   the mailbox (MB_LEN; when non-empty MB_SRC, MB_DATA\[..\], MB_POP), in
//!   drains also STATUS every 8th poll (its `irq` compared at the NI's next
//!   clock edge, as after every read), and now and then (2 % of traffic
//!   actions) a one-packet RDMA write to an absent endpoint: another node's
//!   coordinates with an fpga its router has no local port for (nothing
//!   completes; that router drops the packet), and as often an access the destination's NI must reject: a one-packet RDMA write
//!   or an RDMA read to an address in no window (`Window`) or in the
//!   window the set-up enabled with another PDID (`Pdid`); while a
//!   rejected packet's entry is due, polls read ERRQ_COUNT and, when
//!   non-empty, ERRQ_W0..W4 and ERRQ_POP (privileged). After a reset pulse software
//!   first reads back every register it configures (reset values); the
//!   set-up also fills the windows it does not use (disabled), so a
//!   register the reset missed shows. In the second of every three traffic
//!   phases one node's software leaves its completion queue alone (up to
//!   8000 cycles, or until its receive path has been Busy 500 cycles): the
//!   queue fills, packets wait in the network. Traffic starts (two nodes
//!   or more, no allreduce) with two **receiver stalls**
//!   (`software::Stall`, 2,500 cycles each, then a drain): node 0, then
//!   node 1, leaves its completion queue alone while the other sends it
//!   one-packet writes of 14 and 18 flits in turn and it sends the other
//!   16-byte writes with notify, so that both of its receive classes go
//!   Busy and every VC buffer on the way to it fills (32 flits of a
//!   class-0 VC; the class-1 NOTIFY responses up to its ejection port).
//! - **Memory** (AXI4 slave, read and write): random AR/AW/W backpressure,
//!   random read latency and beat gaps, random B latency; a sparse memory
//!   holding the same bytes as the golden model's.
//!
//! Checks (the first failure stops the run, with cycle, signal, expected
//! and actual): every AXI4-Lite response and read value against the golden
//! model's; at `rsp_pick` the golden model has a response
//! (`emit_response`), at `tx_pick` a request (`emit_request`), and every
//! flit the NI sends equals the oldest packet picked for its VC (data,
//! head, tail; requests on `vc`, responses on `resp_vc`, each packet whole
//! on its VC, the two VCs possibly interleaved); AR shape and ARUSER =
//! PDID; every delivered packet is the head of its flow and class, all its
//! flits on one VC; at `rx_commit` the golden outcome is Accepted or
//! Refused (mailbox full, or a read request with the read queue full), or
//! Rejected for its reason if software sent the packet to be rejected (its
//! error-queue entry then due: the five words software reads must be that
//! entry, oldest first; a rejected read's READ_DONE / REMOTE_DENIED with
//! the reason is an expected completion), at `rx_busy` Busy; the
//! golden memory writes appear on AXI4 as one burst each with exactly the
//! strobed bytes; every completion and mailbox message software reads was
//! expected (a doorbell or send the golden model accepted, with matching
//! kind, peer, txid, PDID, source and bytes) and is seen exactly once; no
//! router counts an error or drops a packet, but for those to an absent
//! endpoint: each router's `dropped_packets` (over its ports) never exceeds
//! the packets sent to an absent endpoint of its coordinates, and equals it
//! at every drain's end; the ejection adapters count no protocol error; a
//! watchdog fails a run in which nothing moves (no flit, no decision, no
//! accepted AXI4-Lite write, no memory write: polling reads and refused
//! doorbells do not count) for [`WATCHDOG`] cycles.
//!
//! **Allreduce** (a point with `ar_communicators > 0`: every NI carries
//! the engine, its torus the network's): communicators set by the
//! privileged registers at every set-up, random collectives posted on
//! every member rank in one global order while the traffic above flows,
//! each rank's result checked against the reference, every completion
//! once with status OK; fragments, scratch writes and steps' writes
//! checked as every packet and write is (see the `allreduce` module's doc).
//! [`measure_ar_latency`] measures collectives one at a time on a quiet
//! bench instead.
//!
//! Phases: set-up, a **latency measurement** (node 0 alone: isolated 64 B
//! RDMA writes and 16 B packetizer sends to node 1, see [`PairFigures`]),
//! then traffic phases of random length and load, each ending with a
//! **drain** (no new transfers but the members' parts of collectives
//! already created, software consumes until every expected completion and
//! message is seen and every node is idle, its software at most polling),
//! after which
//! every node's memory must equal its golden model's byte for byte, and no
//! flow may hold a packet. The first of every three traffic phases
//! instead ends with a **reset pulse in the middle of its traffic**
//! (packets in the routers, AXI4 bursts open): every golden model and
//! agent starts afresh from the RTL's memory, nothing is expected any
//! more, and the run goes on from the set-up (the next drain then checks
//! that the reset left nothing behind).

mod allreduce;
mod check;
mod consume;
mod coverage;
mod node;
mod plan;
mod points;
mod rx;
mod software;

pub use allreduce::{measure_ar_latency, ArLatencyPlan, ArLatencySample};
pub use coverage::{NodePairCoverage, PairFigures};
pub use plan::{MeasurePlan, PlanSample, MAX_PLAN_BYTES};
pub use points::{allreduce_points, info, matrix_points, parse_point, point_text};

use crate::blocks::ni::agents::NiPorts;
use crate::cosim::{Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_hdl::emit::Emitted;
use exanet_hdl::node_pair::{emit_node_pair, instanced_modules, NodePairParams};
use exanet_sim::ni::RejectReason;
use exanet_sim::packet::coords::Coords;
use exanet_sim::rng::Rng;
use node::Node;
pub(crate) use node::NodePorts;
use std::collections::{HashMap, VecDeque};

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
    /// The reference result of every allreduce has its first byte
    /// flipped (the result check must catch it at the first completion).
    ArReference,
}

/// The bench's phase: set-up, the latency measurement, traffic, drain.
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
    /// Packets in flight per flow and class: (source, destination,
    /// class) -> words, oldest first (the network keeps each class's
    /// packets of a flow in order; a response may pass a request).
    flows: HashMap<(usize, usize, usize), VecDeque<Vec<u128>>>,
    /// Expected completions: (node, W0, W1, W2) -> count.
    exp_cq: HashMap<(usize, u32, u32, u32), u32>,
    /// Packets sent to be rejected, not yet decided: (receiving node,
    /// source coordinates, txid) -> the reason its NI must give.
    exp_reject: HashMap<(usize, u32, u16), RejectReason>,
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
    /// The first cycle after the last reset: trace time 0.
    trace_t0: u64,
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
    /// Receiver-stall episodes still to run (at the start of traffic), and
    /// the one running.
    stalls_left: usize,
    stall: Option<software::Stall>,
    /// An error-queue overflow burst: (sender, receiver, rejections still
    /// to be accepted).
    burst: Option<(usize, usize, usize)>,
    /// Reset pulses in the middle of traffic (off where the bench drives
    /// the reset itself: `exanet cosim node`).
    mid_resets: bool,
    /// Longest traffic phase, cycles (a short run still reaches drains).
    phase_cap: u64,
    /// A directed measurement instead of random traffic.
    plan: plan::PlanState,
    /// Every node's memory with this fixed latency, always ready (a
    /// measurement), instead of random timing.
    mem_latency: Option<u64>,
    /// Allreduce collectives (NIs with the engine).
    ar: allreduce::ArState,
    /// Isolated latency samples of each kind in the measurement phase.
    latency_samples: usize,
    /// An allreduce latency measurement instead of the latency samples
    /// and the random traffic.
    ar_meas: allreduce::ArMeasure,
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
        // Not on allreduce points (their traffic is the collectives').
        let stalls_left = if params.ni.ni.ar_communicators == 0 {
            software::STALLS
        } else {
            0
        };
        Ok(NodePairBench {
            params,
            fault,
            nodes,
            index,
            pdid: 0,
            flows: HashMap::new(),
            exp_cq: HashMap::new(),
            exp_reject: HashMap::new(),
            exp_mb: HashMap::new(),
            t_door: HashMap::new(),
            t_send: HashMap::new(),
            phase: Phase::Setup,
            phase_start: 0,
            phase_len: 0,
            load: 0.3,
            samples: 0,
            cycle: 0,
            trace_t0: 0,
            reset_now: true,
            reset_port: None,
            setup_done: false,
            last_progress: 0,
            cov: NodePairCoverage::default(),
            fig: PairFigures::default(),
            traffic_phases: 0,
            reset_at: None,
            hold: None,
            stalls_left,
            stall: None,
            burst: None,
            mid_resets: true,
            phase_cap: u64::MAX,
            plan: plan::PlanState::default(),
            mem_latency: None,
            ar: allreduce::ArState::default(),
            latency_samples: SAMPLES,
            ar_meas: allreduce::ArMeasure::default(),
        })
    }

    /// The same bench without reset pulses in the middle of traffic (the
    /// first of every three traffic phases runs to its end).
    pub fn without_mid_resets(mut self) -> Self {
        self.mid_resets = false;
        self
    }

    /// The same bench with traffic phases of at most `cap` cycles.
    pub fn with_phase_cap(mut self, cap: u64) -> Self {
        self.phase_cap = cap;
        self
    }

    /// The same bench with `k` isolated latency samples of each kind
    /// (default `SAMPLES`; 0: traffic starts after the set-up).
    pub fn with_latency_samples(mut self, k: usize) -> Self {
        self.latency_samples = k;
        self
    }

    /// The same bench with every node's memory at a fixed `latency`
    /// (cycles from a read burst's AR to its first beat, and from a write
    /// burst's last beat to its B), always ready: no random stall in a
    /// measurement.
    pub fn with_fixed_memory(mut self, latency: u64) -> Self {
        self.mem_latency = Some(latency);
        self.apply_memory();
        self
    }

    fn apply_memory(&mut self) {
        if let Some(l) = self.mem_latency {
            for n in &mut self.nodes {
                n.rd =
                    std::mem::replace(&mut n.rd, node::AxiReadSlave::new()).with_fixed_latency(l);
                n.wr =
                    std::mem::replace(&mut n.wr, node::AxiWriteSlave::new()).with_fixed_latency(l);
            }
        }
    }

    /// Give every node its ports (a bench whose top is not the node pair's,
    /// `exanet cosim node`); that bench drives the reset itself
    /// ([`NodePairBench::set_in_reset`]).
    pub(crate) fn bind_nodes(&mut self, ports: Vec<NodePorts>) {
        for (node, p) in self.nodes.iter_mut().zip(ports) {
            node.p = Some(p);
        }
        self.reset_port = None;
    }

    /// Whether the NIs are held in reset now (agents idle, no checks).
    pub(crate) fn set_in_reset(&mut self, reset: bool) {
        self.reset_now = reset;
    }

    /// The phases and the software set-up of `cycle` (before any node's
    /// [`NodePairBench::drive_node`]); drives the reset port when the bench
    /// has one. Returns whether the NIs are in reset.
    pub(crate) fn drive_global(&mut self, rng: &mut Rng, cycle: u64) -> bool {
        self.cycle = cycle;
        if self.reset_at.is_some_and(|t| cycle >= t) && self.phase == Phase::Traffic {
            self.mid_reset().expect("validated at construction");
        }
        if let Some((_, end, busy)) = self.hold {
            if cycle >= end || busy >= 500 || self.phase != Phase::Traffic {
                self.end_hold();
            }
        }
        self.stall_turn_global();
        self.burst_turn_global();
        let reset = self.reset_now;
        if let Some(port) = &self.reset_port {
            port.set(reset as u64);
        }
        if !reset && !self.setup_done {
            self.setup_done = true;
            self.setup(rng);
        }
        if self.phase == Phase::Measure && self.ar_meas.plan.is_some() && !reset {
            self.ar_measure_turn(rng);
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
        reset
    }

    /// Node `n`'s agents this cycle: new software accesses, AXI4-Lite
    /// master, memory read and write slaves (idle in reset).
    pub(crate) fn drive_node(&mut self, n: usize, rng: &mut Rng, cycle: u64) {
        let reset = self.reset_now;
        if !reset && self.nodes[n].sw.is_empty() && self.nodes[n].sw_idle() {
            self.generate(rng, n);
        }
        let node = &mut self.nodes[n];
        let p = node.p.clone().expect("bind() before running");
        if reset {
            node.axil.drive_reset(&p.ni);
            node.rd.drive_reset(&p.ni);
            node.wr.drive_reset(&p.ni);
            return;
        }
        // Software: one access at a time (none while the port is lent).
        if node.axil.idle() && !node.axil.lent() {
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

    /// Lend node `n`'s AXI4-Lite port to another master (`true`: granted
    /// only while node `n`'s software has no access in flight) or take it
    /// back (`false`); returns whether it is lent now. While lent, node
    /// `n`'s software neither drives nor checks the port.
    pub fn lend_axil(&mut self, n: usize, on: bool) -> bool {
        self.nodes[n].axil.lend(on)
    }

    /// What the run exercised.
    pub fn coverage(&self) -> NodePairCoverage {
        self.cov.clone()
    }

    /// What the bench still waits for (a drain's end): completions and
    /// messages due, packets in flight, and per node what is not idle.
    pub fn pending(&self) -> String {
        let mut out = format!(
            "phase {:?}; {} completions and {} messages due; {} packets in flight",
            self.phase,
            self.exp_cq.values().sum::<u32>(),
            self.exp_mb.len(),
            self.flows.values().map(|q| q.len()).sum::<usize>()
        );
        for (i, n) in self.nodes.iter().enumerate() {
            if !n.idle() {
                out.push_str(&format!("; n{i}: {}", n.busy_with()));
            }
        }
        out
    }

    /// The latency figures measured.
    pub fn figures(&self) -> PairFigures {
        self.fig.clone()
    }

    /// The event trace rings of the nodes' golden NIs (enabled at set-up;
    /// each the RTL's ring, as `exanet cosim ni` checks), as a dump for
    /// `exanet trace decode` ([`exanet_sim::ni::trace::dump_text`]): node
    /// `n` is section `n<n>`, times count from the last reset.
    pub fn trace_dump(&self) -> String {
        let sections: Vec<(String, Vec<u64>)> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(n, node)| (format!("n{n}"), node.golden.trace().events()))
            .collect();
        exanet_sim::ni::trace::dump_text(&sections)
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
            for c in ["flit_errors", "credit_errors"] {
                for q in 0..nports {
                    let name = format!("{c}_{q}");
                    errors.push((name.clone(), p(&name, 32)?));
                }
            }
            let dropped = (0..nports)
                .map(|q| p(&format!("dropped_packets_{q}"), 32))
                .collect::<Result<_>>()?;
            node.p = Some(NodePorts {
                ni: NiPorts::bind(sim, &format!("n{n}_"), "tx")?,
                rx_valid: p("rx_valid", 1)?,
                rx_data: p("rx_data", 128)?,
                rx_head: p("rx_head", 1)?,
                rx_tail: p("rx_tail", 1)?,
                rx_vc: p("rx_vc", 4)?,
                errors,
                dropped,
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
        fresh.reset_port = self.reset_port.take();
        fresh.plan.plan = self.plan.plan.take();
        fresh.mem_latency = self.mem_latency;
        fresh.mid_resets = self.mid_resets;
        fresh.phase_cap = self.phase_cap;
        fresh.latency_samples = self.latency_samples;
        fresh.ar_meas.plan = self.ar_meas.plan.take();
        fresh.apply_memory();
        *self = fresh;
    }

    fn drive(&mut self, rng: &mut Rng, cycle: u64) {
        self.drive_global(rng, cycle);
        for n in 0..self.nodes.len() {
            self.drive_node(n, rng, cycle);
        }
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        self.check_cycle(cycle)
    }

    fn advance(&mut self) {
        self.reset_now = false;
    }
}
