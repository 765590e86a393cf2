//! Co-simulation bench of `router`: RTL vs `exanet_sim::router::Router`.
//!
//! Stimulus and scoreboard come from the golden model's own test bench,
//! `exanet_sim::router::harness::RouterHarness`: per input port an upstream
//! source that sends random packets (random destinations, sizes, classes,
//! a few bad ones: destination or fpga out of range, orphan body flits,
//! truncated 64-bit headers) only with credits, per output port a sink that
//! returns credits with random delays (backpressure). The same inputs go to
//! the RTL and the golden model every cycle, and every output is compared
//! every cycle: per port `out_valid` (and, when valid, data, head, tail, vc),
//! `credit_out_valid` (and vc), and the `dropped_packets`, `flit_errors` and
//! `credit_errors` counters. The harness's scoreboard (every good packet
//! delivered once, intact, on the reference route, in order, no overflow)
//! is checked too; a scoreboard error is reported as port `scoreboard`.
//!
//! On top of the harness's traffic the bench injects rare protocol errors
//! the harness never makes: flits on a VC number `>= N` or into a full
//! buffer, and credits on a VC number `>= N` (all discarded and counted).
//!
//! Reset pulses (about one per 5k cycles): the RTL's synchronous reset and a
//! fresh golden model and harness, each phase with its own load (packet
//! start rate, bubbles, credit return rate). The RTL starts from its
//! power-on state, which is the golden model's initial state.
//!
//! Router positions: the first phase runs at the point's node; each later
//! one at another node (the RTL takes its coordinates as inputs, so one
//! build serves every node): the corners, the wrap positions and their
//! neighbours, the middle of each ring (per dimension the coordinates 0,
//! 1, k/2 and k−1), so dateline links, mesh edges, odd coordinate sums and
//! every ring distance from several places are exercised.
//!
//! Destinations: the good packets of each (input port, input VC) walk
//! through every destination offset (`(dest − here) mod k` per dimension,
//! and each fpga), continuing over phases; [`RouterCoverage`] counts the
//! (input port, input VC, offset) combinations reached.

use super::BlockInfo;
use crate::cosim::{Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::{bail, Context, Result};
use exanet_hdl::emit::Emitted;
use exanet_hdl::router::{emit_router, single_file};
use exanet_sim::point;
use exanet_sim::rng::Rng;
use exanet_sim::router::harness::{HarnessOptions, RouterHarness};
use exanet_sim::router::{Flit, Router, RouterInputs, RouterOutputs, RouterParams, RouterPoint};
use exanet_sim::topology::MAX_PORTS;

/// Registry entry for `exanet cosim router`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "router",
        about:
            "virtual-channel router (DOR, dateline VCs, credits, VCT, class-priority RR allocation)",
        matrix,
        point,
    }
}

/// The default matrix: mesh and torus (and mixed), 1 and 2 classes, 2 and 3
/// VCs per class, 64/128/256-bit flits, 1..4 local ports, several routing
/// orders, the router at a node where datelines and mesh edges matter, and
/// every `router.allocator` (iSLIP with 1, 2 and 3 rounds).
pub fn matrix_points() -> Vec<&'static str> {
    vec![
        // The default ExaNeSt router at the corner x=7, y=3, z=0 of the 8x4x4
        // torus: its x+, y+ and z- links are datelines (entry dateline, parity ties).
        "dims=8x4x4,wrap=ttt,local_ports=1,dim_order=zyx,classes=2,vcs_per_class=2,buffer_flits=32,flit_bits=128,max_packet_flits=18,node=31",
        // Minimal: 4x4 mesh, one class, any free VC of the class; iSLIP, 2 rounds.
        // 3-bit drop and error counters (they wrap in the run).
        "dims=4x4x1,wrap=mmm,local_ports=1,dim_order=zyx,classes=1,vcs_per_class=2,buffer_flits=32,flit_bits=128,max_packet_flits=18,vc_select=free,allocator=islip,alloc_iterations=2,counter_bits=3,node=5",
        // 64-bit flits (two-flit headers), 3 VCs of one class on a torus; the
        // wrap dateline, ties to +, and a free VC in the lower half (2 VCs);
        // the wavefront allocator.
        "dims=4x4x4,wrap=ttt,local_ports=2,dim_order=xyz,classes=1,vcs_per_class=3,buffer_flits=40,flit_bits=64,max_packet_flits=36,dateline=wrap,tie_break=plus,vc_select=free,allocator=wavefront,node=63",
        // 256-bit flits, 2 classes x 3 VCs, 3D mesh; iSLIP, 3 rounds (class
        // priority in grant and accept).
        // 32-bit counters (the width before `router.counter_bits`).
        "dims=4x3x2,wrap=mmm,local_ports=2,dim_order=yzx,classes=2,vcs_per_class=3,buffer_flits=16,flit_bits=256,max_packet_flits=10,allocator=islip,alloc_iterations=3,counter_bits=32,node=13",
        // The default router's rules and sizes on odd and non-power-of-two
        // rings (6, 3, 2), at a corner (x=5, y=2, z=0; odd coordinate sum).
        "dims=6x3x2,wrap=ttt,local_ports=1,dim_order=zyx,classes=2,vcs_per_class=2,buffer_flits=32,flit_bits=128,max_packet_flits=18,node=17",
        // Odd torus rings (3 VCs split 2 + 1), 2 classes, 128-bit flits, free
        // VCs; iSLIP, one round.
        "dims=3x5x1,wrap=ttm,local_ports=3,dim_order=zyx,classes=2,vcs_per_class=3,buffer_flits=24,flit_bits=128,max_packet_flits=18,vc_select=free,allocator=islip,alloc_iterations=1,node=14",
        // A 16-node ring (4-bit wrap) and a mesh dimension, 64-bit flits, 4 local ports.
        "dims=16x1x3,wrap=ttm,local_ports=4,dim_order=xzy,classes=2,vcs_per_class=2,buffer_flits=64,flit_bits=64,max_packet_flits=36,node=15",
        // 256-bit flits on a torus, one class of 2 VCs; the wrap dateline, ties to +.
        "dims=2x2x4,wrap=ttt,local_ports=1,dim_order=zyx,classes=1,vcs_per_class=2,buffer_flits=12,flit_bits=256,max_packet_flits=10,dateline=wrap,tie_break=plus,node=0",
        // 4 VCs per class on an 8x4 torus (the BookSim2 reference's VC count),
        // free VCs in each half of 2, 2 classes; wavefront with 2 classes.
        "dims=8x4x1,wrap=ttm,local_ports=1,dim_order=zyx,classes=2,vcs_per_class=4,buffer_flits=32,flit_bits=128,max_packet_flits=18,vc_select=free,allocator=wavefront,node=12",
    ]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(matrix_points(), point)
}

fn point(text: &str) -> Result<Box<dyn Bench>> {
    let (p, node) = parse_point(text)?;
    Ok(Box::new(RouterBench::new(p, node)?))
}

/// Parse a point: [`RouterPoint`]'s keys through [`exanet_sim::point`]
/// (`dims=AxBxC`, `wrap=` one of `t`/`m` per dimension, `dim_order=zyx`,
/// `node=` node index, the others integers). Defaults are the default
/// router (8x4x4 torus, node 0).
pub fn parse_point(text: &str) -> Result<(RouterParams, usize)> {
    let RouterPoint { router: p, node } = point::parse(text)?;
    check_params(&p)?;
    if node >= p.topology.num_nodes() {
        bail!(
            "point key `node` = {node}: must be below the {} nodes of {:?}",
            p.topology.num_nodes(),
            p.topology.dims
        );
    }
    Ok((p, node))
}

/// The rules a router point obeys: the model's, and the RTL's limits (a
/// point is always built as RTL).
pub fn check_params(p: &RouterParams) -> Result<()> {
    p.validate()?;
    exanet_hdl::limits::check_router(p)
}

/// The point text of `(p, node)`, parsable by [`parse_point`].
pub fn point_text(p: &RouterParams, node: usize) -> String {
    point::to_text(&RouterPoint {
        router: p.clone(),
        node,
    })
}

/// The largest of a router's drop and error counts.
fn max_count(c: &exanet_sim::router::RouterCounters) -> u64 {
    c.dropped_packets
        .iter()
        .chain(&c.flit_errors)
        .chain(&c.credit_errors)
        .copied()
        .max()
        .unwrap_or(0)
}

/// What a run exercised; the integration test asserts on it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouterCoverage {
    /// Flits that left the router, per output port.
    pub flits_out: [u64; MAX_PORTS],
    /// Good packets injected and delivered (summed over harness phases).
    pub injected: u64,
    pub delivered: u64,
    /// Bad packets the harness injected.
    pub bad_injected: u64,
    /// Bad packets the router counted as dropped.
    pub dropped: u64,
    /// Protocol errors the bench injected (flits, credits).
    pub flit_errors_injected: u64,
    pub credit_errors_injected: u64,
    /// Reset pulses.
    pub resets: u64,
    /// The largest drop or error count the golden model reached on one
    /// port between resets (above `2^counter_bits`: the RTL's counter wrapped).
    pub max_counter: u64,
    /// Cycles with every output port sending.
    pub all_outputs_busy: u64,
    /// (input port, input VC, destination offset) combinations a good
    /// packet reached, and how many there are.
    pub combos_hit: usize,
    pub combos_total: usize,
    /// Nodes the router ran at (one per phase), in order.
    pub nodes: Vec<usize>,
}

/// One router port's flit and credit signals: flits in, credits out, flits
/// out, credits in. The router names them `{signal}_{port}`, the network
/// top names a terminal's `n{node}_l{local}_{signal}`.
#[derive(Clone)]
pub(crate) struct FlitPorts {
    pub in_valid: Port,
    pub in_data: Port,
    pub in_head: Port,
    pub in_tail: Port,
    pub in_vc: Port,
    pub credit_out_valid: Port,
    pub credit_out_vc: Port,
    pub out_valid: Port,
    pub out_data: Port,
    pub out_head: Port,
    pub out_tail: Port,
    pub out_vc: Port,
    pub credit_in_valid: Port,
    pub credit_in_vc: Port,
}

impl FlitPorts {
    /// Bind the signals of one port: `name(signal)` is the port name of
    /// `signal` (`in_valid`, `in_data`, …); the data is `flit_bits` wide.
    /// An error names a missing or mis-sized port.
    pub(crate) fn bind(
        sim: &Sim,
        flit_bits: u32,
        name: impl Fn(&str) -> String,
    ) -> Result<FlitPorts> {
        let p = |sig: &str, width: u32| sim.port_w(&name(sig), width);
        Ok(FlitPorts {
            in_valid: p("in_valid", 1)?,
            in_data: p("in_data", flit_bits)?,
            in_head: p("in_head", 1)?,
            in_tail: p("in_tail", 1)?,
            in_vc: p("in_vc", 4)?,
            credit_out_valid: p("credit_out_valid", 1)?,
            credit_out_vc: p("credit_out_vc", 4)?,
            out_valid: p("out_valid", 1)?,
            out_data: p("out_data", flit_bits)?,
            out_head: p("out_head", 1)?,
            out_tail: p("out_tail", 1)?,
            out_vc: p("out_vc", 4)?,
            credit_in_valid: p("credit_in_valid", 1)?,
            credit_in_vc: p("credit_in_vc", 4)?,
        })
    }
}

/// One router port: its flits and credits, and its error counters.
#[derive(Clone)]
struct PortSet {
    io: FlitPorts,
    dropped_packets: Port,
    flit_errors: Port,
    credit_errors: Port,
}

/// Load levels of a harness phase: (start, bubble, drain).
const LOADS: [(f64, f64, f64); 5] = [
    (0.05, 0.1, 0.7),
    (0.2, 0.0, 1.0),
    (0.2, 0.0, 0.3),
    (0.01, 0.3, 0.9),
    (0.1, 0.05, 0.5),
];
/// Fraction of bad packets.
const BAD: f64 = 0.03;
/// Chance per cycle of a reset pulse (which also moves the router).
const RESET_CHANCE: f64 = 1.0 / 5_000.0;
/// Chance per port and cycle of an injected protocol error (when possible).
const ERROR_CHANCE: f64 = 1.0 / 3_000.0;

/// The `router` bench at one parameter point.
pub struct RouterBench {
    params: RouterParams,
    node: usize,
    /// The golden model's parameters and node (differ only in fault tests).
    golden_params: RouterParams,
    golden_node: usize,
    golden: Router,
    harness: Option<RouterHarness>,
    ports: Vec<PortSet>,
    reset_port: Option<Port>,
    /// `node_x`, `node_y`, `node_z`.
    node_ports: Option<[Port; 3]>,
    /// The node of this phase (RTL and golden model), and the positions
    /// later phases draw from (empty: the node stays, as when the golden
    /// model sits elsewhere on purpose).
    cur_node: usize,
    positions: Vec<usize>,
    /// The destination walks' positions, carried over phases.
    cover_from: Vec<u32>,
    /// Per (port, VC, offset): reached in an earlier phase.
    covered: Vec<bool>,
    inputs: RouterInputs,
    outs: RouterOutputs,
    reset_now: bool,
    phase: u64,
    cov: RouterCoverage,
    /// Scoreboard errors seen (checked once per cycle).
    scoreboard_errors: usize,
}

impl RouterBench {
    /// A bench of router `node` of `params` (validated; the RTL must support it).
    pub fn new(params: RouterParams, node: usize) -> Result<Self> {
        Self::with_golden(params.clone(), node, params, node)
    }

    /// A bench whose golden model has other parameters or sits at another
    /// node than the RTL: only for showing that the bench catches a wrong model.
    pub fn with_golden(
        params: RouterParams,
        node: usize,
        golden_params: RouterParams,
        golden_node: usize,
    ) -> Result<Self> {
        params.validate()?;
        let golden = Router::new(&golden_params, golden_node).context("golden router")?;
        anyhow::ensure!(
            node < params.topology.num_nodes(),
            "router node {node}: must be below {} nodes",
            params.topology.num_nodes()
        );
        let positions = if node == golden_node && params.topology == golden_params.topology {
            positions(&params)
        } else {
            Vec::new()
        };
        Ok(RouterBench {
            params,
            node,
            golden_params,
            golden_node,
            golden,
            harness: None,
            ports: Vec::new(),
            reset_port: None,
            node_ports: None,
            cur_node: golden_node,
            positions,
            cover_from: Vec::new(),
            covered: Vec::new(),
            inputs: RouterInputs::default(),
            outs: RouterOutputs::default(),
            reset_now: false,
            phase: 0,
            cov: RouterCoverage::default(),
            scoreboard_errors: 0,
        })
    }

    /// What the run since the last [`Bench::reset`] exercised (the current
    /// harness phase's counts included).
    pub fn coverage(&self) -> RouterCoverage {
        let mut c = self.cov.clone();
        let mut covered = self.covered.clone();
        if let Some(h) = &self.harness {
            let r = h.report();
            c.injected += r.injected;
            c.delivered += r.delivered;
            c.bad_injected += r.bad_injected.iter().sum::<u64>();
            merge(&mut covered, h.covered());
        }
        c.dropped += self.golden.counters().dropped_packets.iter().sum::<u64>();
        c.max_counter = c.max_counter.max(max_count(self.golden.counters()));
        let p = &self.golden_params;
        let per_vc = p.topology.num_nodes() * p.topology.local_ports;
        c.combos_total = p.num_ports() * p.num_vcs() * per_vc;
        c.combos_hit = (0..p.num_ports() * exanet_sim::router::params::MAX_VCS)
            .filter(|slot| slot % exanet_sim::router::params::MAX_VCS < p.num_vcs())
            .map(|slot| {
                covered
                    .iter()
                    .skip(slot * per_vc)
                    .take(per_vc)
                    .filter(|&&b| b)
                    .count()
            })
            .sum();
        c
    }

    /// Move the RTL (its coordinate inputs) and the golden model to `node`.
    fn move_to(&mut self, node: usize) {
        self.cur_node = node;
        if let Some([x, y, z]) = &self.node_ports {
            let c = self.params.topology.coords(node);
            x.set(c[0] as u64);
            y.set(c[1] as u64);
            z.set(c[2] as u64);
        }
    }

    fn new_harness(&mut self, rng: &mut Rng) {
        let (start, bubble, drain) = LOADS[(self.phase % LOADS.len() as u64) as usize];
        self.phase += 1;
        let opt = HarnessOptions {
            start,
            bubble,
            drain,
            bad: BAD,
            cover: true,
            cover_from: self.cover_from.clone(),
            ..Default::default()
        };
        self.harness = Some(RouterHarness::new(
            &self.golden_params,
            self.cur_node,
            opt,
            rng.next_u64(),
        ));
        self.cov.nodes.push(self.cur_node);
    }

    /// Fold the finished phase's counts into the coverage and restart.
    fn end_phase(&mut self) {
        if let Some(h) = self.harness.take() {
            let r = h.report();
            self.cov.injected += r.injected;
            self.cov.delivered += r.delivered;
            self.cov.bad_injected += r.bad_injected.iter().sum::<u64>();
            merge(&mut self.covered, h.covered());
            self.cover_from = h.cover_next();
        }
        self.cov.dropped += self.golden.counters().dropped_packets.iter().sum::<u64>();
        self.cov.max_counter = self.cov.max_counter.max(max_count(self.golden.counters()));
        self.golden = Router::new(&self.golden_params, self.cur_node).expect("validated");
        self.scoreboard_errors = 0;
    }

    /// Add rare protocol errors the harness never makes; all are discarded
    /// by the router without touching its state, so the harness is unaffected.
    fn inject_errors(&mut self, rng: &mut Rng) {
        let n = self.golden_params.num_vcs();
        let depth = self.golden_params.buffer_flits;
        for p in 0..self.params.num_ports() {
            if self.inputs.flit_valid >> p & 1 == 0 && rng.chance(ERROR_CHANCE) {
                let vc = if n < 16 && rng.chance(0.5) {
                    Some((n + rng.below((16 - n) as u64) as usize) as u8)
                } else {
                    (0..n)
                        .find(|&v| self.golden.buffered(p, v) == depth)
                        .map(|v| v as u8)
                };
                if let Some(vc) = vc {
                    let mut f = Flit {
                        vc,
                        head: rng.chance(0.5),
                        tail: rng.chance(0.5),
                        ..Default::default()
                    };
                    for w in 0..self.params.flit_words() {
                        f.data[w] = rng.next_u64();
                    }
                    self.inputs.set_flit(p, f);
                    self.cov.flit_errors_injected += 1;
                }
            }
            if n < 16 && self.inputs.credit_valid >> p & 1 == 0 && rng.chance(ERROR_CHANCE) {
                let vc = (n + rng.below((16 - n) as u64) as usize) as u8;
                self.inputs.set_credit(p, vc);
                self.cov.credit_errors_injected += 1;
            }
        }
    }

    fn write_inputs(&self) {
        for (p, ps) in self.ports.iter().enumerate() {
            let valid = self.inputs.flit_valid >> p & 1 == 1;
            ps.io.in_valid.set(valid as u64);
            if valid {
                let f = &self.inputs.flit[p];
                write_data(&ps.io.in_data, &f.data);
                ps.io.in_head.set(f.head as u64);
                ps.io.in_tail.set(f.tail as u64);
                ps.io.in_vc.set(f.vc as u64);
            }
            let cvalid = self.inputs.credit_valid >> p & 1 == 1;
            ps.io.credit_in_valid.set(cvalid as u64);
            if cvalid {
                ps.io.credit_in_vc.set(self.inputs.credit_vc[p] as u64);
            }
        }
    }
}

/// OR `phase` into `acc` (grown to its length).
fn merge(acc: &mut Vec<bool>, phase: &[bool]) {
    if acc.len() < phase.len() {
        acc.resize(phase.len(), false);
    }
    for (a, &b) in acc.iter_mut().zip(phase) {
        *a |= b;
    }
}

/// The nodes later phases run at: per dimension the coordinates 0, 1,
/// k/2 and k−1 (corners, wrap links and their neighbours, the middle of a
/// ring; odd and even coordinate sums), every combination.
pub fn positions(p: &RouterParams) -> Vec<usize> {
    let t = &p.topology;
    let coords = |k: usize| {
        let mut v = vec![0, 1.min(k - 1), k / 2, k - 1];
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut out = Vec::new();
    for &z in &coords(t.dims[2]) {
        for &y in &coords(t.dims[1]) {
            for &x in &coords(t.dims[0]) {
                out.push(t.node_at([x, y, z]));
            }
        }
    }
    out
}

/// Write a flit's data (up to 256 bits as four 64-bit words, least
/// significant first) to a port of any width.
pub(crate) fn write_data(port: &Port, data: &[u64; 4]) {
    match port.width() {
        64 => port.set(data[0]),
        128 => port.set_u128((data[1] as u128) << 64 | data[0] as u128),
        _ => {
            let mut w = [0u32; 8];
            for (i, x) in w.iter_mut().enumerate() {
                *x = (data[i / 2] >> (32 * (i % 2))) as u32;
            }
            port.set_words(&w);
        }
    }
}

/// Read a flit's data from a port of any width (as [`write_data`] writes it).
pub(crate) fn read_data(port: &Port) -> [u64; 4] {
    let mut w = [0u32; 8];
    let n = port.words();
    port.get_words(&mut w[..n]);
    let mut d = [0u64; 4];
    for (i, x) in d.iter_mut().enumerate() {
        *x = w[2 * i] as u64 | (w[2 * i + 1] as u64) << 32;
    }
    d
}

/// The first `words` 64-bit words of flit data as one hex number.
pub(crate) fn hex_words(d: &[u64; 4], words: usize) -> String {
    let mut s = String::from("0x");
    for w in d[..words].iter().rev() {
        s.push_str(&format!("{w:016x}"));
    }
    s
}

impl Bench for RouterBench {
    fn block(&self) -> &str {
        "router"
    }

    fn point(&self) -> String {
        point_text(&self.params, self.node)
    }

    /// The router as one source file (see `exanet_hdl::router::top::single_file`):
    /// hundreds of file arguments overflow the command line the `verilator`
    /// wrapper script hands to `/bin/sh` (128 KiB per argument) beyond ~40 VCs.
    fn emit(&self) -> Result<Emitted> {
        let e = emit_router(&self.params)?;
        Ok(Emitted {
            modules: vec![(e.top.clone(), single_file(&e))],
            top: e.top,
        })
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let w = self.params.flit_bits as u32;
        let port = |name: &str, p: usize, width: u32| sim.port_w(&format!("{name}_{p}"), width);
        self.ports = (0..self.params.num_ports())
            .map(|p| -> Result<PortSet> {
                Ok(PortSet {
                    io: FlitPorts::bind(sim, w, |sig| format!("{sig}_{p}"))?,
                    dropped_packets: port("dropped_packets", p, 32)?,
                    flit_errors: port("flit_errors", p, 32)?,
                    credit_errors: port("credit_errors", p, 32)?,
                })
            })
            .collect::<Result<_>>()?;
        self.reset_port = Some(sim.port_w("reset", 1)?);
        self.node_ports = Some([
            sim.port_w("node_x", 4)?,
            sim.port_w("node_y", 4)?,
            sim.port_w("node_z", 4)?,
        ]);
        // The RTL sits at the point's node (the golden model at its own
        // only in the fault tests).
        let node = self.node;
        self.move_to(node);
        self.cur_node = self.golden_node;
        Ok(())
    }

    fn reset(&mut self) {
        let node = self.node;
        self.move_to(node);
        self.cur_node = self.golden_node;
        self.cover_from = Vec::new();
        self.covered = Vec::new();
        self.golden = Router::new(&self.golden_params, self.golden_node).expect("validated");
        self.harness = None;
        self.inputs = RouterInputs::default();
        self.reset_now = false;
        self.phase = 0;
        self.cov = RouterCoverage::default();
        self.scoreboard_errors = 0;
    }

    fn drive(&mut self, rng: &mut Rng, cycle: u64) {
        if self.harness.is_none() {
            self.new_harness(rng);
        }
        self.reset_now = cycle > 0 && rng.chance(RESET_CHANCE);
        if self.reset_now {
            self.inputs.clear();
            // The next phase runs elsewhere: the coordinates change with the
            // reset pulse, before any packet of the new phase.
            if !self.positions.is_empty() {
                let next = self.positions[rng.below(self.positions.len() as u64) as usize];
                self.move_to(next);
            }
        } else {
            let h = self.harness.as_mut().expect("created above");
            let i = h.drive();
            self.inputs.flit = i.flit;
            self.inputs.flit_valid = i.flit_valid;
            self.inputs.credit_vc = i.credit_vc;
            self.inputs.credit_valid = i.credit_valid;
            self.inject_errors(rng);
        }
        self.reset_port
            .as_ref()
            .expect("bind before drive")
            .set(self.reset_now as u64);
        self.write_inputs();
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let words = self.params.flit_words();
        let mut busy = 0;
        for (p, ps) in self.ports.iter().enumerate() {
            let want = self.golden.out_flit(p);
            let valid = ps.io.out_valid.get() == 1;
            if valid != want.is_some() {
                return Some(Mismatch::hex(
                    cycle,
                    &format!("out_valid_{p}"),
                    want.is_some() as u64,
                    valid as u64,
                ));
            }
            if let Some(f) = want {
                busy += 1;
                self.cov.flits_out[p] += 1;
                let d = read_data(&ps.io.out_data);
                if d[..words] != f.data[..words] {
                    return Some(Mismatch {
                        cycle,
                        port: format!("out_data_{p}"),
                        expected: hex_words(&f.data, words),
                        actual: hex_words(&d, words),
                    });
                }
                let got = (
                    ps.io.out_head.get(),
                    ps.io.out_tail.get(),
                    ps.io.out_vc.get(),
                );
                if got.0 != f.head as u64 {
                    return Some(Mismatch::hex(
                        cycle,
                        &format!("out_head_{p}"),
                        f.head as u64,
                        got.0,
                    ));
                }
                if got.1 != f.tail as u64 {
                    return Some(Mismatch::hex(
                        cycle,
                        &format!("out_tail_{p}"),
                        f.tail as u64,
                        got.1,
                    ));
                }
                if got.2 != f.vc as u64 {
                    return Some(Mismatch::hex(
                        cycle,
                        &format!("out_vc_{p}"),
                        f.vc as u64,
                        got.2,
                    ));
                }
            }
            let want = self.golden.credit_out(p);
            let cvalid = ps.io.credit_out_valid.get() == 1;
            if cvalid != want.is_some() {
                return Some(Mismatch::hex(
                    cycle,
                    &format!("credit_out_valid_{p}"),
                    want.is_some() as u64,
                    cvalid as u64,
                ));
            }
            if let Some(vc) = want {
                let got = ps.io.credit_out_vc.get();
                if got != vc as u64 {
                    return Some(Mismatch::hex(
                        cycle,
                        &format!("credit_out_vc_{p}"),
                        vc as u64,
                        got,
                    ));
                }
            }
            let c = self.golden.counters();
            let counters = [
                ("dropped_packets", &ps.dropped_packets, c.dropped_packets[p]),
                ("flit_errors", &ps.flit_errors, c.flit_errors[p]),
                ("credit_errors", &ps.credit_errors, c.credit_errors[p]),
            ];
            for (name, port, want) in counters {
                let got = port.get();
                // (the RTL's counters wrap at `router.counter_bits`)
                let want = self.params.counter_value(want);
                if got != want {
                    return Some(Mismatch::hex(cycle, &format!("{name}_{p}"), want, got));
                }
            }
        }
        if busy == self.ports.len() {
            self.cov.all_outputs_busy += 1;
        }
        if let Some(h) = &self.harness {
            let errors = &h.report().errors;
            if errors.len() > self.scoreboard_errors {
                self.scoreboard_errors = errors.len();
                return Some(Mismatch {
                    cycle,
                    port: "scoreboard".into(),
                    expected: "no scoreboard error".into(),
                    actual: errors[0].clone(),
                });
            }
        }
        if !self.reset_now {
            for p in 0..self.ports.len() {
                self.outs.flit[p] = self.golden.out_flit(p).copied();
                self.outs.credit[p] = self.golden.credit_out(p);
            }
        }
        None
    }

    fn advance(&mut self) {
        if self.reset_now {
            self.cov.resets += 1;
            self.end_phase();
        } else {
            self.golden.tick(&self.inputs);
            if let Some(h) = self.harness.as_mut() {
                h.advance(&self.outs);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_round_trip_and_reject_bad_keys_and_values() {
        for t in matrix_points() {
            // The printed text names every key (the rules at their defaults
            // too), and reads back to the same point.
            let (p, node) = parse_point(t).unwrap();
            let text = point_text(&p, node);
            assert_eq!(parse_point(&text).unwrap(), (p, node), "{t}");
            let b = point(t).unwrap();
            assert_eq!(b.point(), text);
        }
        let (p, node) = parse_point("").unwrap();
        assert_eq!((p, node), (RouterParams::default(), 0));
        let e = parse_point("vcs=3").unwrap_err().to_string();
        assert!(e.contains("`vcs`") && e.contains("vcs_per_class"), "{e}");
        let e = parse_point("dims=4x4").unwrap_err().to_string();
        assert!(e.contains("`dims`"), "{e}");
        let e = parse_point("wrap=tt").unwrap_err().to_string();
        assert!(e.contains("`wrap`"), "{e}");
        let e = parse_point("classes=3").unwrap_err().to_string();
        assert!(e.contains("router.classes = 3"), "{e}");
        let e = parse_point("dims=2x2x1,node=4").unwrap_err().to_string();
        assert!(e.contains("`node` = 4"), "{e}");
        let e = parse_point("flit_bits=x").unwrap_err().to_string();
        assert!(e.contains("`flit_bits`"), "{e}");
    }

    #[test]
    fn positions_take_corners_wraps_and_middles() {
        let (p, _) = parse_point("dims=6x3x2,wrap=ttt").unwrap();
        let t = &p.topology;
        let ns = positions(&p);
        // x in {0, 1, 3, 5}, y in {0, 1, 2}, z in {0, 1}
        assert_eq!(ns.len(), 4 * 3 * 2);
        for c in [[0, 0, 0], [5, 2, 1], [3, 1, 0], [1, 0, 1]] {
            assert!(ns.contains(&t.node_at(c)), "{c:?}");
        }
        assert!(!ns.contains(&t.node_at([2, 0, 0])));
        let (p1, _) = parse_point("dims=2x1x1,wrap=tmm").unwrap();
        assert_eq!(positions(&p1), vec![0, 1]);
    }

    #[test]
    fn the_matrix_spans_the_required_range() {
        let ps: Vec<RouterParams> = matrix_points()
            .iter()
            .map(|t| parse_point(t).unwrap().0)
            .collect();
        assert!(ps.len() >= 6);
        assert!(ps.contains(&RouterParams::default()));
        for f in [64, 128, 256] {
            assert!(ps.iter().any(|p| p.flit_bits == f), "flit_bits {f}");
        }
        for c in [1, 2] {
            assert!(ps.iter().any(|p| p.classes == c), "classes {c}");
        }
        for v in [2, 3] {
            assert!(ps.iter().any(|p| p.vcs_per_class == v), "vcs_per_class {v}");
        }
        assert!(ps.iter().any(|p| p.topology.wrap.iter().all(|&w| !w)));
        assert!(ps.iter().any(|p| p.topology.wrap.iter().all(|&w| w)));
    }
}
