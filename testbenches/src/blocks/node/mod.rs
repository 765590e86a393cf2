//! Co-simulation bench of `node`: the whole node top `exanet_node` (NI +
//! ejection adapter + router + per network port `link_tx`/`link_rx` and the
//! two `async_fifo` crossings to the transceiver's user clock), one
//! instance per node of an `A x B x C` torus (`exanet_hdl::node::emit_node_bench`),
//! against one golden node per instance ([`exanet_sim::node::GoldenNode`]:
//! router, link ends, crossings, synchronizers) and the node-pair bench's
//! golden NIs, agents and scoreboard ([`crate::blocks::node_pair`]).
//!
//! # Clocks (integer picoseconds, event-driven)
//! Every node's PL clock (`n<n>_clk`, near 6,100 ps) and every cable's
//! transceiver user clock (near 6,206 ps, Aurora 64B/66B at 10.3125 Gb/s)
//! has its own period, each on a bounded random walk of a few ps per edge
//! ([`DRIFT_PS`] within ±[`WANDER_PS`] of its base), so the phases of all
//! clocks slide through every alignment, coincident edges included. Both
//! ends of a cable share its user clock (the golden PHY is single-clock;
//! on the board the transceivers' ppm difference is what the core's
//! clock-compensation gaps absorb, modelled here by the PHY's CC gaps on
//! `tx_tready`). One event of the bench is the next rising edge of any
//! clock (or of several at once):
//! 1. the rising domains' inputs are written: `n<n>_rst` (held for
//!    [`RESET_CYCLES`] PL cycles of each node), the cable's PHY words
//!    (`link<i>_tx_tready`, `link<i>_rx_t*`, `link<i>_channel_up` up after
//!    [`CHANNEL_UP_AFTER`] user cycles), the NIs' AXI4-Lite software and
//!    AXI4 memory agents; every clock low; `eval`;
//! 2. checks (below) of every rising domain;
//! 3. the rising clocks go high, `eval`; every golden node takes the same
//!    instant ([`GoldenNode::edge`]).
//!
//! # PHY
//! One golden PHY ([`exanet_sim::link::phy`]) per cable direction, stepped
//! on the cable's user clock: latency `phy_latency` user cycles, bit errors
//! at `ber`, clock-compensation gaps on `tx_tready` every `cc_period`
//! cycles. It takes the word the golden link end shows (equal to the RTL's,
//! checked at the same edge) and delivers the same word to the RTL's and
//! the golden far end, so no RTL end ever receives a word its RTL peer did
//! not send.
//!
//! # Checks (the first difference stops the run, naming node, signal, PL
//! cycle of node 0 and time)
//! - at every user-clock edge of a cable, both ends' PHY word out
//!   (`link<i>_tx_tvalid`, and when valid `_tdata`, `_tctrl`);
//! - at every PL edge of node `n`, against its golden node: `pl_rst`; the
//!   router's local output into the ejection adapter (`ej_*`) and its
//!   credits to the NI (`ni_credit_in_*`); every router port's
//!   `dropped_packets`, `flit_errors`, `credit_errors`; per link the lane
//!   state (`l<i>_lane_down`), `link_rx`'s status bus (`l<i>_st_*`: state,
//!   heard, peer valid, ack sequence, nack and urgent counts, freed
//!   credits), the 16 link counters and the RX crossing's overflow counter;
//! - the NI per transaction, as `node-pair` checks it (the golden NI has no
//!   clock): every AXI4-Lite response, AXI4 burst and flit the NI sends
//!   against the golden NI; every packet the ejection adapter delivers is
//!   the head of its flow (bit-exact: nothing lost, duplicated, reordered
//!   or damaged), every completion and message read once; at the end of
//!   every drain each node's memory byte for byte against its golden
//!   NI's; a watchdog. The NI's flits into the router and the adapter's
//!   credits are what the golden router takes.
//!
//! - at every PL edge of node `n`, `axil_split` against the golden node's
//!   (the same decode: below `0xF000` the NI, from `0xF000` on the golden
//!   `link_status`): every output of the node's AXI4-Lite slave
//!   (`s_axil_*`, so every register value read back) and every signal it
//!   drives into the NI (`obs_ni_s_*`); the golden split takes the RTL
//!   NI's responses, and the golden NI performs each access when the RTL
//!   NI takes it (behind the split).
//! - the link status over AXI4-Lite: [`STATUS_FIRST`] PL cycles after the
//!   start, every [`STATUS_EVERY`] cycles and once near the end of the run,
//!   node-pair software lends each node's AXI4-Lite port (between its
//!   accesses) to a status reader that reads every register of every link
//!   (`0xF000 + 64·l + 4·r`: state and fifteen counters) and one address
//!   past the last link (SLVERR). Each value read is also checked against
//!   the golden link end's counter ports it names (summed;
//!   `exanet_hdl::link::link_status::counter_source`, values by
//!   `counter_values`, the RX crossing's overflows as the golden PL
//!   domain sees them) as sampled when `link_status` took the read.
//!
//! Traffic: the node-pair software unchanged (RDMA writes and reads,
//! packetizer messages, completion and mailbox consumption with a STATUS
//! read every 8th poll of a drain, a completion queue held for a while) in
//! phases of at most [`PHASE_CAP`] cycles with drains. Its reset pulses in
//! the middle of traffic are whole-node resets here: the bench holds every
//! node's `rst` for [`RESET_CYCLES`] of that node's PL cycles from its next
//! edge (through the node's synchronizers, routers and link ends reset
//! too, golden and RTL alike), as it does at the start; software then
//! reads every register it configures back (reset values, against the
//! fresh golden NIs) before its set-up.

mod ports;

use crate::blocks::node_pair::{self, MeasurePlan, NodePairBench, NodePairCoverage, PlanSample};
use crate::blocks::BlockInfo;
use crate::cosim::{Bench, Mismatch};
use crate::verilator::Sim;
use anyhow::{bail, Context, Result};
use exanet_hdl::emit::Emitted;
use exanet_hdl::link::link_status::{counter_source, CounterPort};
use exanet_hdl::node::{emit_node_bench, node_straps, NodeParams, NODE_CORE};
use exanet_hdl::node_ports::{node_ports, Dir};
use exanet_hdl::router::network::{counter_values, RX_COUNTERS, TX_COUNTERS};
use exanet_sim::common::async_fifo::AsyncFifoParams;
use exanet_sim::common::axil_split::{AxilSplitInputs, MasterInputs};
use exanet_sim::link::phy::{Phy, PhyParams};
use exanet_sim::link::status::{self as lstatus, Reg};
use exanet_sim::link::{LinkCounters, LinkParams, LinkState, PhyWord};
use exanet_sim::node::LINK_STATUS_BASE;
use exanet_sim::node::{GoldenNode, NodePlInputs, UserInputs};
use exanet_sim::point;
use exanet_sim::rng::Rng;
use exanet_sim::router::flit::Flit;
use exanet_sim::topology::dims_text;
use ports::{AxilPorts, FlitPorts, NodeRtl};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Longest traffic phase, PL cycles of node 0 (drains, and the memory
/// comparisons that end them, come often even in a short run).
pub const PHASE_CAP: u64 = 5_000;
/// PL cycles each node's `rst` is held at the start.
pub const RESET_CYCLES: u64 = 8;
/// User cycles of a cable before its transceivers raise `channel_up`.
pub const CHANNEL_UP_AFTER: u64 = 12;
/// PL cycle (of node 0) of the first link-status sweep.
pub const STATUS_FIRST: u64 = 3_000;
/// PL cycles between link-status sweeps.
pub const STATUS_EVERY: u64 = 12_000;
/// PL cycles before the end of a run of the last sweep.
pub const STATUS_LAST: u64 = 1_500;
/// Base PL clock period, ps (node `n`: plus `PL_STEP_PS · n`).
const PL_PS: u64 = 6_100;
const PL_STEP_PS: u64 = 29;
/// Base user clock period, ps (cable `c`: plus `USER_STEP_PS · c`).
const USER_PS: u64 = 6_206;
const USER_STEP_PS: u64 = 17;
/// Largest change of a period per edge, ps.
pub const DRIFT_PS: u64 = 2;
/// Largest distance of a period from its base, ps.
pub const WANDER_PS: u64 = 60;
/// The NI's parameters (node-pair's first matrix point, with the node's
/// dims): small queues, so the mailbox and completion queue fill.
const NI_KEYS: &str = "channels=4,desc_queue_depth=8,pkt_slots=4,mailbox_msg_bytes=64,max_payload_bytes=256,mailbox_depth=4,cq_depth=8,resp_queue_depth=8,read_queue_depth=4";

/// Registry entry for `exanet cosim node`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "node",
        about: "whole node tops (NI + router + links + clock crossings) joined by golden PHYs, drifting PL and user clocks, vs golden nodes and NIs",
        matrix,
        point,
    }
}

/// The default matrix: two nodes (2x1x1), then four (2x2x1).
pub fn matrix_points() -> Vec<&'static str> {
    vec![
        "dims=2x1x1,phy_latency=4,cc_period=97,ber=0",
        "dims=2x2x1,phy_latency=6,cc_period=200,ber=0",
    ]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(matrix_points(), point)
}

fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(NodeBench::new(parse_point(text)?)?))
}

/// One parameter point of the bench.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NodePoint {
    /// Torus size (every dimension of size > 1 wraps).
    #[serde(with = "dims_text")]
    pub dims: [usize; 3],
    /// PHY latency each way, user cycles.
    pub phy_latency: usize,
    /// User cycles between clock-compensation gaps on `tx_tready` (0: none).
    pub cc_period: u64,
    /// Bit error rate on every PHY direction.
    pub ber: f64,
}

impl Default for NodePoint {
    fn default() -> Self {
        NodePoint {
            dims: [2, 1, 1],
            phy_latency: 4,
            cc_period: 97,
            ber: 0.0,
        }
    }
}

/// Parse `dims=AxBxC,phy_latency=..,cc_period=..,ber=..`; errors name the
/// key and the value.
pub fn parse_point(text: &str) -> Result<NodePoint> {
    let p: NodePoint = point::parse(text)?;
    p.phy()?.validate().context("node point")?;
    Ok(p)
}

impl NodePoint {
    /// The point as text.
    pub fn text(&self) -> String {
        point::to_text(self)
    }

    /// The golden PHY of every direction (its seed set per direction).
    fn phy(&self) -> Result<PhyParams> {
        let d = PhyParams::default();
        Ok(PhyParams {
            latency_cycles: self.phy_latency,
            ber: self.ber,
            cc_period: self.cc_period,
            cc_len: if self.cc_period == 0 {
                0
            } else {
                d.cc_len.max(1)
            },
            ..d
        })
    }

    /// The node top's parameters: the node-pair NI, the router of `dims`,
    /// links sized for the PHY's latency plus the two crossings.
    pub fn node_params(&self) -> Result<NodeParams> {
        let d = self.dims;
        let pair = node_pair::parse_point(&format!(
            "dims={}x{}x{},link_latency=0,{NI_KEYS}",
            d[0], d[1], d[2]
        ))?;
        let r = &pair.router;
        // Round trip in PL cycles: PHY both ways plus each crossing's
        // synchronizer latency, twice.
        let latency = self.phy_latency + 8;
        let p = NodeParams {
            ni: pair.ni.clone(),
            router: pair.router.clone(),
            link: LinkParams::sized(r.flit_bits, r.num_vcs(), latency, r.buffer_flits),
            cdc: AsyncFifoParams::default(),
            reset_stages: 2,
        };
        p.validate()?;
        Ok(p)
    }
}

/// A deliberate error in the golden side, to show the checks catch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// None: the real comparison.
    None,
    /// The golden node 1 receives its 300th PHY word on link 0 with bit 0
    /// flipped (the RTL gets the word the PHY delivered).
    GoldenRxBit,
    /// One byte of node 1's golden memory differs from the RTL's memory
    /// (node-pair's [`node_pair::Fault::GoldenMemByte`]).
    GoldenMemByte,
    /// Every golden node's `link_status` answers `frames_sent` with
    /// `crc_errors` and the reverse (a register-order mutation).
    GoldenStatusOrder,
    /// Every golden node's `link_status` answers for link 1 when asked for
    /// link 0 (an address mutation).
    GoldenStatusLink,
}

/// The status reader of one node: link-status reads over the node's
/// AXI4-Lite port while node-pair software lends it.
#[derive(Clone, Debug, Default)]
struct StatusReader {
    /// Offsets (in the status page) still to read in this sweep.
    todo: VecDeque<u32>,
    /// Presented, not yet accepted.
    cur: Option<u32>,
    /// Accepted, awaiting the response.
    wait: Option<u32>,
    lent: bool,
    /// Next sweep (index into the bench's sweep starts).
    next: usize,
}

/// One clock: next rise, period, base period; whether it drifts.
#[derive(Clone, Copy, Debug)]
struct Clock {
    next: u64,
    period: u64,
    base: u64,
    drift: bool,
}

impl Clock {
    fn new(base: u64) -> Self {
        Clock {
            next: base,
            period: base,
            base,
            drift: true,
        }
    }

    /// A clock of exactly `period` ps (a measurement's nominal clock).
    fn fixed(period: u64) -> Self {
        Clock {
            drift: false,
            ..Clock::new(period)
        }
    }

    /// After a rise at `t`: the next, with the period drifted.
    fn rose(&mut self, t: u64, rng: &mut Rng) {
        if !self.drift {
            self.next = t + self.period;
            return;
        }
        let step = rng.below(2 * DRIFT_PS + 1);
        let p = (self.period + step).saturating_sub(DRIFT_PS);
        self.period = p.clamp(self.base - WANDER_PS, self.base + WANDER_PS);
        self.next = t + self.period;
    }
}

/// One cable: its two ends `(node, link)`, a PHY per direction (`phy[0]`
/// from `ends[0]` to `ends[1]`), its user clock.
struct Cable {
    ends: [(usize, usize); 2],
    phy: [Phy; 2],
    clock: Clock,
    cycles: u64,
}

/// What a run exercised.
#[derive(Clone, Debug, Default)]
pub struct NodeCoverage {
    /// Events (instants with one or more rising edges).
    pub events: u64,
    /// Events at which a PL clock and a user clock rose together.
    pub coincident: u64,
    /// PHY words carried (all directions).
    pub phy_words: u64,
    /// Link frames received (all link ends, golden = RTL).
    pub frames: u64,
    /// Retransmissions (all link ends).
    pub retransmissions: u64,
    /// CRC errors detected (all link ends).
    pub crc_errors: u64,
    /// Link-status registers read over AXI4-Lite (all nodes).
    pub status_reads: u64,
    /// Link-status sweeps completed (every register of every link of one node).
    pub status_sweeps: u64,
    /// Largest `crc_errors` read back over AXI4-Lite.
    pub status_crc_errors: u64,
    /// Largest `retransmissions` read back over AXI4-Lite.
    pub status_retransmissions: u64,
    /// Largest `rx_overflows` (the RX clock crossing) read back over AXI4-Lite.
    pub status_rx_overflows: u64,
    /// The NI side (node-pair's coverage).
    pub pair: NodePairCoverage,
}

/// The node bench at one point.
pub struct NodeBench {
    point: NodePoint,
    params: NodeParams,
    fault: Fault,
    pair: NodePairBench,
    golden: Vec<GoldenNode>,
    cables: Vec<Cable>,
    pl: Vec<Clock>,
    pl_cycles: Vec<u64>,
    rtl: Vec<NodeRtl>,
    /// This event: PL clocks rising, cables' clocks rising, its time.
    pl_rise: Vec<bool>,
    cable_rise: Vec<bool>,
    time: u64,
    rst: Vec<bool>,
    /// Node `n`'s PL cycle from which its `rst` is low.
    rst_end: Vec<u64>,
    /// A mid-run reset pulse asked for by node-pair software, not yet
    /// started on node `n` (it starts at `n`'s next PL edge).
    rst_due: Vec<bool>,
    /// The golden link counters' sums before the last mid-run reset.
    links_before: LinkCounters,
    channel_up: Vec<Vec<bool>>,
    user_in: Vec<Vec<Option<UserInputs>>>,
    pl_in: Vec<NodePlInputs>,
    /// Words golden node 1 received on link 0 (for [`Fault::GoldenRxBit`]).
    fault_words: u64,
    in_reset: bool,
    cov: NodeCoverage,
    status: Vec<StatusReader>,
    /// PL cycles (of node 0) at which status sweeps start.
    sweeps: Vec<u64>,
    /// A measurement (`exanet reproduce`): head-flit timestamps are taken
    /// and the run ends once the plan is done.
    measuring: bool,
    stamps: Vec<HeadStamp>,
    /// Base periods, ps: every node's PL clock, every cable's user clock
    /// (`None`: the bench's own spread of periods).
    clocks: Option<(u64, u64)>,
}

/// A head flit passing a router boundary of a node, seen at the node's PL
/// edge (the golden router's view, equal to the RTL's: see the checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadStamp {
    /// Node index.
    pub node: usize,
    /// Router port (the local port is the last).
    pub port: usize,
    /// `true`: into the router (from the NI or a link's `link_rx`);
    /// `false`: out of it (to a `link_tx`, or the ejection adapter).
    pub into_router: bool,
    /// The bench's cycle (node 0's PL cycles) and the time, ps.
    pub cycle: u64,
    pub ps: u64,
}

impl NodeBench {
    /// A bench of `point`.
    pub fn new(point: NodePoint) -> Result<Self> {
        Self::with_fault(point, Fault::None)
    }

    /// A bench whose golden side carries `fault` (for the negative tests).
    pub fn with_fault(point: NodePoint, fault: Fault) -> Result<Self> {
        let params = point.node_params()?;
        let pair_params = node_pair::parse_point(&format!(
            "dims={}x{}x{},link_latency=0,{NI_KEYS}",
            point.dims[0], point.dims[1], point.dims[2]
        ))?;
        let pf = match fault {
            Fault::GoldenMemByte => node_pair::Fault::GoldenMemByte,
            _ => node_pair::Fault::None,
        };
        let pair = NodePairBench::with_fault(pair_params, pf)?.with_phase_cap(PHASE_CAP);
        let gp = params.golden()?;
        let t = &params.router.topology;
        let n = t.num_nodes();
        let mut golden = (0..n)
            .map(|i| GoldenNode::new(&gp, i).with_context(|| format!("golden node {i}")))
            .collect::<Result<Vec<_>>>()?;
        for g in &mut golden {
            match fault {
                Fault::GoldenStatusOrder => g.mutate_status_decode(Reg::FramesSent, Reg::CrcErrors),
                Fault::GoldenStatusLink => g.mutate_status_link(0, 1),
                _ => {}
            }
        }
        let links = params.links();
        let phy = point.phy()?;
        let mut cables = Vec::new();
        for a in 0..n {
            for i in 0..links {
                let Some((b, j)) = t.neighbour(a, i) else {
                    bail!("node {a} port {i}: no neighbour (every dimension is a torus)");
                };
                if (a, i) < (b, j) {
                    let c = cables.len() as u64;
                    let mk = |d: u64| {
                        Phy::new(&PhyParams {
                            seed: 0x5EED_0000 + 2 * c + d,
                            ..phy.clone()
                        })
                    };
                    cables.push(Cable {
                        ends: [(a, i), (b, j)],
                        phy: [mk(0)?, mk(1)?],
                        clock: Clock::new(USER_PS + USER_STEP_PS * c),
                        cycles: 0,
                    });
                }
            }
        }
        Ok(NodeBench {
            point,
            fault,
            pair,
            golden,
            pl: (0..n)
                .map(|i| Clock::new(PL_PS + PL_STEP_PS * i as u64))
                .collect(),
            pl_cycles: vec![0; n],
            rtl: Vec::new(),
            pl_rise: vec![false; n],
            cable_rise: vec![false; cables.len()],
            cables,
            time: 0,
            rst: vec![true; n],
            rst_end: vec![RESET_CYCLES; n],
            rst_due: vec![false; n],
            links_before: LinkCounters::default(),
            channel_up: vec![vec![false; links]; n],
            user_in: vec![vec![None; links]; n],
            pl_in: vec![NodePlInputs::default(); n],
            fault_words: 0,
            in_reset: true,
            cov: NodeCoverage::default(),
            status: vec![StatusReader::default(); n],
            sweeps: Vec::new(),
            measuring: false,
            stamps: Vec::new(),
            clocks: None,
            params,
        })
    }

    /// A bench measuring `plan` (node-pair's [`MeasurePlan`]: isolated RDMA
    /// writes from node 0) with every PL clock at exactly `pl_ps` and every
    /// user clock at exactly `user_ps` (nominal clocks, no drift: with
    /// drift, a user clock running faster than the PL clock for a while
    /// would overflow the RX crossing in a long stream), memory at the fixed
    /// `mem_latency` PL cycles; the run ends when the plan is done. Every
    /// check stays on.
    pub fn measuring(
        point: NodePoint,
        plan: MeasurePlan,
        pl_ps: u64,
        user_ps: u64,
        mem_latency: u64,
    ) -> Result<Self> {
        for (what, ps) in [("PL", pl_ps), ("user", user_ps)] {
            if ps == 0 {
                bail!("node bench: {what} clock period {ps} ps: must be above 0");
            }
        }
        let mut b = Self::new(point)?;
        b.pair = std::mem::replace(
            &mut b.pair,
            NodePairBench::new(node_pair::parse_point("dims=2x1x1")?)?,
        )
        .with_plan(plan)?
        .with_fixed_memory(mem_latency);
        b.measuring = true;
        b.clocks = Some((pl_ps, user_ps));
        b.apply_clocks();
        Ok(b)
    }

    fn apply_clocks(&mut self) {
        if let Some((pl, user)) = self.clocks {
            for c in &mut self.pl {
                *c = Clock::fixed(pl);
            }
            for c in &mut self.cables {
                c.clock = Clock::fixed(user);
            }
        }
    }

    /// The transfers a measurement took (see [`NodeBench::measuring`]).
    pub fn plan_samples(&self) -> &[PlanSample] {
        self.pair.plan_samples()
    }

    /// Whether the measurement's plan is done.
    pub fn plan_done(&self) -> bool {
        self.pair.plan_done()
    }

    /// Head flits at every router boundary during a measurement, in time
    /// order.
    pub fn head_stamps(&self) -> &[HeadStamp] {
        &self.stamps
    }

    /// A measurement's timestamps of node `n`'s router at this edge.
    fn stamp(&mut self, n: usize) {
        let g = &self.golden[n];
        let (cycle, ps) = (self.cycle(), self.time);
        let mut add = |port, into_router, f: Option<&Flit>| {
            if f.is_some_and(|f| f.head) {
                self.stamps.push(HeadStamp {
                    node: n,
                    port,
                    into_router,
                    cycle,
                    ps,
                });
            }
        };
        for i in 0..g.num_links() {
            add(i, true, g.link(i).outputs().rx.flit.as_ref());
        }
        let l = g.local_port();
        add(l, true, self.pl_in[n].local_flit.as_ref());
        for p in 0..=l {
            add(p, false, g.router().out_flit(p));
        }
    }

    /// What the run exercised.
    pub fn coverage(&self) -> NodeCoverage {
        let mut c = self.cov.clone();
        c.pair = self.pair.coverage();
        let l = self.links_before.merged(&self.link_totals());
        c.frames = l.frames_received;
        c.retransmissions = l.retransmissions;
        c.crc_errors = l.crc_errors;
        c
    }

    /// Every golden link end's counters, summed (since the last reset).
    fn link_totals(&self) -> LinkCounters {
        let mut l = LinkCounters::default();
        for g in &self.golden {
            for i in 0..g.num_links() {
                l = l
                    .merged(g.link(i).link_tx().counters())
                    .merged(g.link(i).link_rx().counters());
            }
        }
        l
    }

    /// The PL cycle of node 0 (the bench's cycle count).
    fn cycle(&self) -> u64 {
        self.pl_cycles[0]
    }

    /// A mismatch on node `n`'s signal `sig`, with where and when.
    fn bad(&self, n: usize, sig: &str, want: u64, got: u64) -> Mismatch {
        Mismatch::hex(
            self.cycle(),
            &format!(
                "n{n}_{sig} (node {n} PL cycle {}, t={} ps)",
                self.pl_cycles[n], self.time
            ),
            want,
            got,
        )
    }

    /// Node `n`'s PL-domain signals against its golden node (before the edge).
    fn check_pl(&self, n: usize) -> Option<Mismatch> {
        let g = &self.golden[n];
        let r = &self.rtl[n];
        let pl_rst = r.pl_rst.get();
        let gr = g.pl_rst() as u64;
        if pl_rst != gr {
            return Some(self.bad(n, "obs_pl_rst", gr, pl_rst));
        }
        let l = g.local_port();
        let router = g.router();
        if let Some(m) = self.check_flit(n, "obs_ej", &r.ej, router.out_flit(l)) {
            return Some(m);
        }
        let cr = router.credit_out(l);
        let (v, vc) = (r.ni_credit_in.valid.get(), r.ni_credit_in.vc.get());
        if v != cr.is_some() as u64 {
            return Some(self.bad(n, "obs_ni_credit_in_valid", cr.is_some() as u64, v));
        }
        if let Some(c) = cr {
            if vc != c as u64 {
                return Some(self.bad(n, "obs_ni_credit_in_vc", c as u64, vc));
            }
        }
        let c = router.counters();
        for (q, ports) in r.router.iter().enumerate() {
            let want = [c.dropped_packets[q], c.flit_errors[q], c.credit_errors[q]];
            for ((name, w), p) in ["dropped_packets", "flit_errors", "credit_errors"]
                .iter()
                .zip(want)
                .zip(ports)
            {
                let (w, got) = (self.params.router.counter_value(w), p.get());
                if w != got {
                    return Some(self.bad(n, &format!("obs_unused_{name}_{q}"), w, got));
                }
            }
        }
        for (i, lp) in r.links.iter().enumerate() {
            let e = g.link(i);
            let o = e.outputs();
            let down = lp.lane_down.get();
            if down != !o.lane_up as u64 {
                return Some(self.bad(n, &format!("obs_l{i}_lane_down"), !o.lane_up as u64, down));
            }
            let s = &o.rx.status;
            let state = match s.state {
                LinkState::Down => 0,
                LinkState::Training => 1,
                LinkState::Up => 2,
            };
            let freed = (0..self.params.link.vcs)
                .map(|v| (s.freed[v] as u64) << (8 * v))
                .fold(0, |a, b| a | b);
            let want = [
                state,
                s.heard as u64,
                s.peer_ctrl.is_some() as u64,
                s.ack_seq as u64,
                s.nack_count as u64,
                s.urgent as u64,
                freed,
            ];
            for ((f, _), (w, p)) in ports::STATUS_FIELDS.iter().zip(want.iter().zip(&lp.status)) {
                if *w != p.get() {
                    return Some(self.bad(n, &format!("obs_l{i}_st_{f}"), *w, p.get()));
                }
            }
            let (tx, rx) = exanet_hdl::router::network::counter_values(
                e.link_tx().counters(),
                e.link_rx().counters(),
            );
            use exanet_hdl::router::network::{RX_COUNTERS, TX_COUNTERS};
            for (side, want, ports, names) in [
                ("tx", &tx[..], &lp.tx_counters, &TX_COUNTERS[..]),
                ("rx", &rx[..], &lp.rx_counters, &RX_COUNTERS[..]),
            ] {
                for ((w, p), name) in want.iter().zip(ports).zip(names) {
                    let (w, got) = (w & 0xffff_ffff, p.get());
                    if w != got {
                        return Some(self.bad(
                            n,
                            &format!("obs_unused_l{i}_{side}_{name}"),
                            w,
                            got,
                        ));
                    }
                }
            }
            let ov = lp.rx_overflows.get();
            if ov != o.rx_overflows as u64 {
                return Some(self.bad(
                    n,
                    &format!("obs_rx_overflows_{i}"),
                    o.rx_overflows as u64,
                    ov,
                ));
            }
        }
        None
    }

    /// Node `n`'s `axil_split` against the golden node's: every output of
    /// the node's AXI4-Lite slave and every signal into the NI.
    fn check_axil(&self, n: usize) -> Option<Mismatch> {
        let o = self.golden[n].axil_outputs();
        let r = &self.rtl[n];
        let (s, q, m) = (&r.s_axil, &r.ni_s, &o.m[0]);
        let b = |v: bool| v as u64;
        let want: [(&AxilPorts, &str, u64, crate::verilator::Port); 19] = [
            (s, "awready", b(o.s_awready), s.awready),
            (s, "wready", b(o.s_wready), s.wready),
            (s, "bvalid", b(o.s_bvalid), s.bvalid),
            (s, "bresp", o.s_bresp as u64, s.bresp),
            (s, "arready", b(o.s_arready), s.arready),
            (s, "rvalid", b(o.s_rvalid), s.rvalid),
            (s, "rresp", o.s_rresp as u64, s.rresp),
            (s, "rdata", o.s_rdata as u64, s.rdata),
            (q, "awaddr", m.awaddr, q.awaddr),
            (q, "awprot", m.awprot as u64, q.awprot),
            (q, "awvalid", b(m.awvalid), q.awvalid),
            (q, "wdata", m.wdata as u64, q.wdata),
            (q, "wstrb", m.wstrb as u64, q.wstrb),
            (q, "wvalid", b(m.wvalid), q.wvalid),
            (q, "bready", b(m.bready), q.bready),
            (q, "araddr", m.araddr, q.araddr),
            (q, "arprot", m.arprot as u64, q.arprot),
            (q, "arvalid", b(m.arvalid), q.arvalid),
            (q, "rready", b(m.rready), q.rready),
        ];
        for (ports, name, w, p) in want {
            let got = p.get();
            if got != w {
                return Some(self.bad(n, &format!("{}{name}", ports.name), w, got));
            }
        }
        None
    }

    /// Node `n`'s status reader this cycle (clock low, after node-pair's
    /// agents): a sweep starts when due; the port is borrowed between
    /// software accesses; one read at a time is presented.
    fn drive_status(&mut self, n: usize) {
        let cycle = self.cycle();
        let links = self.params.links();
        let st = &mut self.status[n];
        if st.todo.is_empty() && st.cur.is_none() && st.wait.is_none() {
            if st.next < self.sweeps.len() && cycle >= self.sweeps[st.next] {
                st.next += 1;
                // Every register of every link, then one past the last (SLVERR).
                st.todo = (0..=(links * lstatus::REGS_PER_LINK) as u32)
                    .map(|r| 4 * r)
                    .collect();
            } else {
                if st.lent {
                    st.lent = self.pair.lend_axil(n, false);
                }
                return;
            }
        }
        if !st.lent {
            st.lent = self.pair.lend_axil(n, true);
            if !st.lent {
                return;
            }
        }
        if st.cur.is_none() && st.wait.is_none() {
            st.cur = st.todo.pop_front();
        }
        let p = &self.rtl[n].s_axil;
        p.awvalid.set(0);
        p.wvalid.set(0);
        p.bready.set(0);
        p.arvalid.set(st.cur.is_some() as u64);
        p.araddr.set(LINK_STATUS_BASE + st.cur.unwrap_or(0) as u64);
        p.arprot.set(0);
        p.rready.set(1);
    }

    /// Node `n`'s status reader at a PL edge: its read accepted, or its
    /// response: checked against the golden link end's counter port the
    /// register names, as `link_status` sampled it.
    fn check_status(&mut self, n: usize) -> Option<Mismatch> {
        if !self.status[n].lent {
            return None;
        }
        let s = self.rtl[n].s_axil.clone();
        let st = &mut self.status[n];
        if st.cur.is_some() && s.arvalid.get() == 1 && s.arready.get() == 1 {
            st.wait = st.cur.take();
            return None;
        }
        let off = st.wait?;
        if s.rvalid.get() != 1 {
            return None;
        }
        st.wait = None;
        if st.todo.is_empty() {
            self.cov.status_sweeps += 1;
        }
        self.cov.status_reads += 1;
        let links = self.params.links();
        let at = LINK_STATUS_BASE + off as u64;
        let Some(sample) = self.golden[n].last_status_read().cloned() else {
            return Some(self.bad(n, &format!("obs_ls_arvalid (read 0x{at:04x})"), 1, 0));
        };
        if sample.addr != off {
            return Some(self.bad(
                n,
                &format!("obs_ls_araddr (read 0x{at:04x})"),
                off as u64,
                sample.addr as u64,
            ));
        }
        let (want, resp, what) = match lstatus::decode(off, links) {
            None => (0, lstatus::RESP_SLVERR, "past the last link".to_string()),
            Some((l, reg)) => {
                let (state, tx, rx, ovf) = &sample.links[l];
                let v = if reg == Reg::State {
                    *state as u64
                } else {
                    let ports = match counter_source(reg) {
                        Ok(x) => x,
                        Err(e) => {
                            return Some(Mismatch {
                                cycle: self.cycle(),
                                port: format!("n{n}_s_axil_rdata (read 0x{at:04x})"),
                                expected: "a register with a counter port".into(),
                                actual: format!("{e:#}"),
                            })
                        }
                    };
                    let (tv, rv) = counter_values(tx, rx);
                    let pos = |names: &[&str], name: &str| names.iter().position(|&c| c == name);
                    ports
                        .iter()
                        .map(|p| match p {
                            CounterPort::Tx(name) => pos(&TX_COUNTERS, name).map_or(0, |k| tv[k]),
                            CounterPort::Rx(name) => pos(&RX_COUNTERS, name).map_or(0, |k| rv[k]),
                            CounterPort::Crossing => *ovf as u64,
                        })
                        .sum::<u64>()
                } & 0xffff_ffff;
                match reg {
                    Reg::CrcErrors => {
                        self.cov.status_crc_errors = self.cov.status_crc_errors.max(v)
                    }
                    Reg::Retransmissions => {
                        self.cov.status_retransmissions = self.cov.status_retransmissions.max(v)
                    }
                    Reg::RxOverflows => {
                        self.cov.status_rx_overflows = self.cov.status_rx_overflows.max(v)
                    }
                    _ => {}
                }
                (v, lstatus::RESP_OKAY, format!("link {l} {}", reg.name()))
            }
        };
        for (sig, w, got) in [
            ("rresp", resp as u64, s.rresp.get()),
            ("rdata", want, s.rdata.get()),
        ] {
            if w != got {
                return Some(self.bad(
                    n,
                    &format!("s_axil_{sig} (read 0x{at:04x}: {what})"),
                    w,
                    got,
                ));
            }
        }
        None
    }

    /// A flit interface of node `n` against the golden flit.
    fn check_flit(
        &self,
        n: usize,
        name: &str,
        p: &FlitPorts,
        want: Option<&Flit>,
    ) -> Option<Mismatch> {
        let v = p.valid.get();
        if v != want.is_some() as u64 {
            return Some(self.bad(n, &format!("{name}_valid"), want.is_some() as u64, v));
        }
        let f = want?;
        let d = p.data.get_u128();
        let wd = f.data[0] as u128 | (f.data[1] as u128) << 64;
        if d != wd {
            return Some(Mismatch {
                cycle: self.cycle(),
                port: format!(
                    "n{n}_{name}_data (node {n} PL cycle {}, t={} ps)",
                    self.pl_cycles[n], self.time
                ),
                expected: format!("0x{wd:032x}"),
                actual: format!("0x{d:032x}"),
            });
        }
        for (s, w, got) in [
            ("head", f.head as u64, p.head.get()),
            ("tail", f.tail as u64, p.tail.get()),
            ("vc", f.vc as u64, p.vc.get()),
        ] {
            if w != got {
                return Some(self.bad(n, &format!("{name}_{s}"), w, got));
            }
        }
        None
    }

    /// Both ends' PHY words out of cable `c` (user-clock domain).
    fn check_cable(&self, c: usize) -> Option<Mismatch> {
        for &(n, i) in &self.cables[c].ends {
            let want = self.golden[n].link(i).outputs().tx_word;
            let lp = &self.rtl[n].links[i];
            let v = lp.tx_tvalid.get();
            let at = |s: &str| {
                format!(
                    "n{n}_link{i}_{s} (node {n}, user cycle {} of its cable, t={} ps)",
                    self.cables[c].cycles, self.time
                )
            };
            if v != want.is_some() as u64 {
                return Some(Mismatch::hex(
                    self.cycle(),
                    &at("tx_tvalid"),
                    want.is_some() as u64,
                    v,
                ));
            }
            if let Some(w) = want {
                for (s, wv, got) in [
                    ("tx_tdata", w.data, lp.tx_tdata.get()),
                    ("tx_ctrl", w.ctrl as u64, lp.tx_ctrl.get()),
                ] {
                    if wv != got {
                        return Some(Mismatch::hex(self.cycle(), &at(s), wv, got));
                    }
                }
            }
        }
        None
    }

    /// Cable `c`'s user edge: each direction's PHY takes what its sending
    /// end shows when ready and delivers a word to the far end; the RTL's
    /// inputs and the golden nodes' user inputs of this edge.
    fn drive_cable(&mut self, c: usize) {
        let cable = &mut self.cables[c];
        let cyc = cable.cycles;
        let up = cyc >= CHANNEL_UP_AFTER;
        let mut ready = [false; 2];
        let mut arrived: [Option<PhyWord>; 2] = [None, None];
        for d in 0..2 {
            let (n, i) = cable.ends[d];
            ready[d] = cable.phy[d].ready(cyc);
            let shown = self.golden[n].link(i).outputs().tx_word;
            arrived[1 - d] = cable.phy[d].step(if ready[d] { shown } else { None }, true);
        }
        for e in 0..2 {
            let (n, i) = cable.ends[e];
            let lp = &self.rtl[n].links[i];
            lp.tx_tready.set(ready[e] as u64);
            lp.channel_up.set(up as u64);
            let w = arrived[e];
            lp.rx_tvalid.set(w.is_some() as u64);
            lp.rx_tdata.set(w.map_or(0, |w| w.data));
            lp.rx_ctrl.set(w.is_some_and(|w| w.ctrl) as u64);
            let mut gw = w;
            if w.is_some() {
                self.cov.phy_words += 1;
                if self.fault == Fault::GoldenRxBit && (n, i) == (1, 0) {
                    self.fault_words += 1;
                    if self.fault_words == 300 {
                        gw = w.map(|w| PhyWord {
                            data: w.data ^ 1,
                            ..w
                        });
                    }
                }
            }
            self.channel_up[n][i] = up;
            self.user_in[n][i] = Some(UserInputs {
                rst: self.rst[n],
                tx_ready: ready[e],
                rx_word: gw,
            });
        }
    }
}

/// The AXI4-Lite inputs the golden `axil_split` takes at this edge: the
/// node's slave inputs as driven, the RTL NI's responses on `m0`.
fn axil_inputs(r: &NodeRtl) -> AxilSplitInputs {
    let (s, m) = (&r.s_axil, &r.ni_s);
    let b = |p: &crate::verilator::Port| p.get() == 1;
    AxilSplitInputs {
        reset: false,
        s_awaddr: s.awaddr.get(),
        s_awprot: s.awprot.get() as u32,
        s_awvalid: b(&s.awvalid),
        s_wdata: s.wdata.get() as u32,
        s_wstrb: s.wstrb.get() as u32,
        s_wvalid: b(&s.wvalid),
        s_bready: b(&s.bready),
        s_araddr: s.araddr.get(),
        s_arprot: s.arprot.get() as u32,
        s_arvalid: b(&s.arvalid),
        s_rready: b(&s.rready),
        m: [
            MasterInputs {
                awready: b(&m.awready),
                wready: b(&m.wready),
                bresp: m.bresp.get() as u32,
                bvalid: b(&m.bvalid),
                arready: b(&m.arready),
                rdata: m.rdata.get() as u32,
                rresp: m.rresp.get() as u32,
                rvalid: b(&m.rvalid),
            },
            MasterInputs::default(),
        ],
    }
}

/// PL cycles (of node 0) at which link-status sweeps start in a run of
/// `cycles`: [`STATUS_FIRST`], every [`STATUS_EVERY`] after, and
/// [`STATUS_LAST`] before the end.
pub fn sweep_starts(cycles: u64) -> Vec<u64> {
    let last = cycles.saturating_sub(STATUS_LAST);
    let mut v: Vec<u64> = (0..)
        .map(|k| STATUS_FIRST + k * STATUS_EVERY)
        .take_while(|&c| c < last)
        .collect();
    if last > STATUS_FIRST {
        v.push(last);
    }
    v
}

/// Read a flit interface.
fn read_flit(p: &FlitPorts) -> Option<Flit> {
    (p.valid.get() == 1).then(|| {
        let d = p.data.get_u128();
        Flit {
            data: [d as u64, (d >> 64) as u64, 0, 0],
            head: p.head.get() == 1,
            tail: p.tail.get() == 1,
            vc: p.vc.get() as u8,
        }
    })
}

impl Bench for NodeBench {
    fn block(&self) -> &str {
        "node"
    }

    fn point(&self) -> String {
        self.point.text()
    }

    /// The node tops: one `exanet_node_core` per node, its coordinates on
    /// its straps (not parameters, which Verilator would specialise: one
    /// copy of the node per instance). Verilator hints so the C++ holds
    /// the node's logic once whatever the number of nodes (`BENCHMARKS.md`,
    /// "Node co-simulation builds"): the core out of line (`no_inline`:
    /// Verilator inlines a module whose own body is small, and the core's
    /// is mostly instances), and its inputs `public`, so Verilator neither
    /// folds the constant straps into the logic nor replaces an input by
    /// the bench top's signal (either makes each instance's code differ,
    /// so it is emitted once per node).
    fn emit(&self) -> Result<Emitted> {
        let e = emit_node_bench(&self.params)?;
        let mut text = format!("`verilator_config\nno_inline -module \"{NODE_CORE}\"\n");
        let inputs = node_ports(self.params.links() as u32)
            .into_iter()
            .filter(|q| q.dir == Dir::In)
            .map(|q| q.name)
            .chain(node_straps().into_iter().map(|s| s.0));
        for name in inputs {
            text.push_str(&format!("public -module \"{NODE_CORE}\" -var \"{name}\"\n"));
        }
        text.push_str("`verilog\n");
        text.push_str(&exanet_hdl::router::single_file(&e));
        Ok(Emitted {
            modules: vec![(e.top.clone(), text)],
            top: e.top,
        })
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let nports = self.params.router.topology.num_ports();
        let vcs = self.params.link.vcs;
        self.rtl = (0..self.golden.len())
            .map(|n| NodeRtl::bind(sim, n, self.params.links(), nports, vcs))
            .collect::<Result<_>>()?;
        self.pair
            .bind_nodes(self.rtl.iter().map(|r| r.ni.clone()).collect());
        Ok(())
    }

    fn reset(&mut self) {
        let rtl = std::mem::take(&mut self.rtl);
        let mut fresh =
            Self::with_fault(self.point.clone(), self.fault).expect("validated at construction");
        // A measurement keeps its plan, memory timing and clocks.
        if self.measuring {
            let mut pair = std::mem::replace(&mut self.pair, fresh.pair);
            pair.reset();
            fresh.pair = pair;
        }
        fresh.measuring = self.measuring;
        fresh.clocks = self.clocks;
        fresh.apply_clocks();
        fresh
            .pair
            .bind_nodes(rtl.iter().map(|r| r.ni.clone()).collect());
        fresh.rtl = rtl;
        *self = fresh;
    }

    /// One event: the next rising edge(s); the rising domains' inputs.
    fn drive(&mut self, rng: &mut Rng, _event: u64) {
        let t = self
            .pl
            .iter()
            .map(|c| c.next)
            .chain(self.cables.iter().map(|c| c.clock.next))
            .min()
            .expect("clocks");
        self.time = t;
        for (n, c) in self.pl.iter_mut().enumerate() {
            self.pl_rise[n] = c.next == t;
            if c.next == t {
                c.rose(t, rng);
            }
        }
        for (k, c) in self.cables.iter_mut().enumerate() {
            self.cable_rise[k] = c.clock.next == t;
            if c.clock.next == t {
                c.clock.rose(t, rng);
            }
        }
        let any_pl = self.pl_rise.iter().any(|&r| r);
        if any_pl && self.cable_rise.iter().any(|&r| r) {
            self.cov.coincident += 1;
        }
        self.cov.events += 1;
        for r in &self.rtl {
            r.clk.set(0);
            for l in &r.links {
                l.user_clk.set(0);
            }
        }
        // PL resets first: a user clock rising at the same instant samples
        // the new `rst`.
        for n in 0..self.rst.len() {
            if self.pl_rise[n] {
                if std::mem::take(&mut self.rst_due[n]) {
                    self.rst_end[n] = self.pl_cycles[n] + RESET_CYCLES;
                }
                self.rst[n] = self.pl_cycles[n] < self.rst_end[n];
                self.rtl[n].rst.set(self.rst[n] as u64);
            }
        }
        for u in self.user_in.iter_mut().flat_map(|v| v.iter_mut()) {
            *u = None;
        }
        for c in 0..self.cables.len() {
            if self.cable_rise[c] {
                self.drive_cable(c);
            }
        }
        if any_pl {
            if self.in_reset
                && !self.rst.iter().any(|&r| r)
                && !self.rst_due.iter().any(|&r| r)
                && self.golden.iter().all(|g| !g.pl_rst())
            {
                self.in_reset = false;
            }
            self.pair.set_in_reset(self.in_reset);
            let cycle = self.cycle();
            if self.pair.drive_global(rng, cycle) && !self.in_reset {
                // Node-pair software's reset pulse in the middle of
                // traffic: every node's `rst` from its next PL edge, for
                // RESET_CYCLES of its cycles; the NIs idle and unchecked
                // until every `pl_rst` is low again.
                self.in_reset = true;
                self.rst_due.fill(true);
                // (The counters restart at 0: the coverage keeps their sum.)
                self.links_before = self.links_before.merged(&self.link_totals());
                // A link-status sweep cut short (its read lost in the
                // reset) starts again after it.
                for st in &mut self.status {
                    if !st.todo.is_empty() || st.cur.is_some() || st.wait.is_some() {
                        st.next -= 1;
                    }
                    *st = StatusReader {
                        next: st.next,
                        ..StatusReader::default()
                    };
                }
            }
            for n in 0..self.golden.len() {
                if self.pl_rise[n] {
                    self.pair.drive_node(n, rng, cycle);
                    if !self.in_reset {
                        self.drive_status(n);
                    }
                }
            }
        }
    }

    /// The rising domains' outputs against the golden side.
    fn check(&mut self, _event: u64) -> Option<Mismatch> {
        for c in 0..self.cables.len() {
            if self.cable_rise[c] {
                if let Some(m) = self.check_cable(c) {
                    return Some(m);
                }
            }
        }
        let cycle = self.cycle();
        let mut any = false;
        for n in 0..self.golden.len() {
            if !self.pl_rise[n] {
                continue;
            }
            any = true;
            if let Some(m) = self.check_pl(n) {
                return Some(m);
            }
            if let Some(m) = self.check_axil(n) {
                return Some(m);
            }
            if let Some(m) = self.check_status(n) {
                return Some(m);
            }
            if let Some(mut m) = self.pair.check_one_node(n, cycle) {
                m.port = format!(
                    "{} (node {n} PL cycle {}, t={} ps)",
                    m.port, self.pl_cycles[n], self.time
                );
                return Some(m);
            }
            // What the golden router takes at this edge: the RTL NI's flit
            // (checked per transaction above) and the adapter's credit.
            let r = &self.rtl[n];
            self.pl_in[n] = NodePlInputs {
                rst: self.rst[n],
                local_flit: read_flit(&r.ni_out),
                local_credit: (r.ej_credit.valid.get() == 1).then(|| r.ej_credit.vc.get() as u8),
                axil: axil_inputs(r),
            };
            if self.measuring {
                self.stamp(n);
            }
        }
        if any {
            if let Some(m) = self.pair.check_global(cycle) {
                return Some(m);
            }
        }
        None
    }

    /// The golden nodes take the instant.
    fn advance(&mut self) {
        for n in 0..self.golden.len() {
            let pl = self.pl_rise[n].then_some(&self.pl_in[n]);
            if pl.is_none() && self.user_in[n].iter().all(|u| u.is_none()) {
                continue;
            }
            if let Err(e) = self.golden[n].edge(pl, &self.user_in[n], &self.channel_up[n]) {
                panic!("golden node {n}: {e:#} (inputs sized at construction)");
            }
            if self.pl_rise[n] {
                self.pl_cycles[n] += 1;
            }
        }
        for (c, r) in self.cables.iter_mut().zip(&self.cable_rise) {
            if *r {
                c.cycles += 1;
            }
        }
    }

    /// Events until node 0 has run `cycles` PL cycles.
    fn run_cycles(
        &mut self,
        sim: &mut Sim,
        rng: &mut Rng,
        cycles: u64,
        tracing: bool,
    ) -> Result<(u64, Option<Mismatch>)> {
        self.sweeps = sweep_starts(cycles);
        for r in &self.rtl {
            r.clk.set(0);
            r.rst.set(1);
            for l in &r.links {
                l.user_clk.set(0);
            }
        }
        sim.eval();
        let mut event = 0u64;
        while self.cycle() < cycles && !(self.measuring && self.pair.plan_done()) {
            self.drive(rng, event);
            sim.eval();
            if tracing {
                sim.trace_dump(2 * self.time);
            }
            if let Some(m) = self.check(event) {
                return Ok((self.cycle() + 1, Some(m)));
            }
            for (n, r) in self.rtl.iter().enumerate() {
                if self.pl_rise[n] {
                    r.clk.set(1);
                }
            }
            for (c, cable) in self.cables.iter().enumerate() {
                if self.cable_rise[c] {
                    for &(n, i) in &cable.ends {
                        self.rtl[n].links[i].user_clk.set(1);
                    }
                }
            }
            sim.eval();
            if tracing {
                sim.trace_dump(2 * self.time + 1);
            }
            self.advance();
            event += 1;
        }
        Ok((cycles, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_round_trip_and_name_bad_keys_and_values() {
        for t in matrix_points() {
            assert_eq!(parse_point(t).unwrap().text(), t);
        }
        let e = parse_point("colour=3").unwrap_err().to_string();
        assert!(e.contains("colour"), "{e}");
        let e = format!("{:#}", parse_point("phy_latency=0").unwrap_err());
        assert!(e.contains("latency"), "{e}");
        let e = format!("{:#}", parse_point("ber=0.5").unwrap_err());
        assert!(e.contains("ber"), "{e}");
        let p = parse_point("dims=1x1x1").unwrap();
        let e = format!("{:#}", p.node_params().unwrap_err());
        assert!(e.contains("dims"), "{e}");
    }

    #[test]
    fn a_two_by_two_torus_has_four_cables_per_dimension_pair() {
        let b = NodeBench::new(parse_point(matrix_points()[1]).unwrap()).unwrap();
        // 4 nodes x 4 ports / 2 ends per cable.
        assert_eq!(b.cables.len(), 8);
        let b = NodeBench::new(parse_point(matrix_points()[0]).unwrap()).unwrap();
        assert_eq!(b.cables.len(), 2);
    }
}
