//! Co-simulation bench of `network`: a generated top of `A x B x C` RTL
//! routers (`exanet_hdl::router::network`) against the golden network
//! simulator itself, `exanet_sim::network::Network` (golden routers, links
//! of `link_latency` cycles, endpoints, scoreboard, watchdog).
//!
//! Every cycle the golden network steps first; its endpoints' decisions are
//! what the RTL's local ports get: the flit each endpoint injects goes on
//! that node's `in_*`, and the credit it returns for the flit it consumes on
//! `credit_in_*`. Then every terminal's RTL outputs are compared with what
//! the golden network showed its endpoint that cycle: the ejected flit
//! (`out_valid`, and when valid data, head, tail, vc) and the router's credit
//! (`credit_out_valid`, vc). Every router's `dropped_packets`,
//! `flit_errors` and `credit_errors` counters on every port are compared
//! every cycle too. The first difference stops the run.
//!
//! Since the RTL's ejected traffic equals the golden endpoints' every cycle,
//! the golden scoreboard (every packet delivered exactly once, intact, to its
//! terminal, in order within its (source, destination, class) flow) and
//! watchdog judge the RTL; a scoreboard error or a deadlock is reported as
//! port `scoreboard` or `watchdog`.
//!
//! Traffic comes in phases: random load per phase (from light to beyond
//! saturation, sources capped at [`SOURCE_QUEUE`] packets per class), random
//! destinations (any terminal, itself included), payload sizes (0 to the
//! largest) and classes, and about 2 % bad packets (a flipped header bit, a
//! destination outside the network, an `fpga` above the local ports) that a
//! router must drop and count. Then a drain until the network is empty,
//! checked: nothing live, every bad packet dropped. Every third drain ends
//! with a reset pulse (the RTL's synchronous reset, a fresh golden network).

use super::router::{check_params, hex_words, read_data, write_data, FlitPorts};
use super::BlockInfo;
use crate::cosim::{Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::{bail, Context, Result};
use exanet_hdl::emit::Emitted;
use exanet_hdl::router::network::MAX_LINK_LATENCY;
use exanet_hdl::router::{emit_network, single_file};
use exanet_sim::network::{HeaderFault, LocalIo, Network, NetworkParams, Workload};
use exanet_sim::point;
use exanet_sim::rng::Rng;
use exanet_sim::router::{Coords, RouterParams};
use exanet_sim::topology::Topology;
use serde::{Deserialize, Serialize};

/// Default network size (the router's default is the 128-node machine).
pub const DEFAULT_DIMS: [usize; 3] = [4, 2, 2];
/// Default link latency in cycles each way.
pub const DEFAULT_LINK_LATENCY: usize = 1;
/// Source queue limit per class, packets: bounds the backlog (and the drain)
/// of the phases beyond saturation.
pub const SOURCE_QUEUE: usize = 8;
/// Fraction of bad packets.
const BAD: f64 = 0.02;
/// Offered loads (flits per terminal per cycle) of the traffic phases, in turn.
const LOADS: [f64; 6] = [0.05, 0.3, 1.0, 0.15, 0.6, 0.02];
/// Traffic phase length, cycles: uniform in this range.
const PHASE_CYCLES: (u64, u64) = (2_000, 8_000);
/// Longest drain before the bench reports the network stuck.
const DRAIN_MAX: u64 = 50_000;
/// Golden watchdog: cycles with flits in the network and none moving.
const WATCHDOG: u64 = 3_000;
/// Reset pulse after every this many drains.
const RESET_EVERY: u64 = 3;

/// Registry entry for `exanet cosim network`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "network",
        about: "A x B x C RTL routers wired as a torus/mesh vs the golden network simulator",
        matrix,
        point,
    }
}

/// The default matrix: the CI torus, a mesh with two local ports and 64-bit
/// flits on direct links, a mixed torus/mesh with 256-bit flits and longer links.
pub fn matrix_points() -> Vec<String> {
    vec![
        "dims=4x2x2,link_latency=1".into(),
        "dims=3x2x1,wrap=mmm,local_ports=2,classes=1,vcs_per_class=2,buffer_flits=20,flit_bits=64,max_packet_flits=20,link_latency=0".into(),
        "dims=3x2x2,wrap=tmt,classes=2,vcs_per_class=2,buffer_flits=16,flit_bits=256,max_packet_flits=10,link_latency=2".into(),
    ]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    matrix_points()
        .into_iter()
        .map(|t| point(&t).expect("matrix point is valid"))
        .collect()
}

fn point(text: &str) -> Result<Box<dyn Bench>> {
    let (p, lat) = parse_point(text)?;
    Ok(Box::new(NetworkBench::new(p, lat)?))
}

/// The parameter point of `exanet cosim network`: the routers (without
/// the router bench's `node`) and the links.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkPoint {
    /// Every router of the network (and through it the topology).
    pub router: RouterParams,
    /// Register stages per link direction, 0..=[`MAX_LINK_LATENCY`].
    pub link_latency: usize,
}

impl Default for NetworkPoint {
    /// The default router on a [`DEFAULT_DIMS`] torus, [`DEFAULT_LINK_LATENCY`] links.
    fn default() -> Self {
        NetworkPoint {
            router: RouterParams {
                topology: Topology {
                    dims: DEFAULT_DIMS,
                    ..Default::default()
                },
                ..Default::default()
            },
            link_latency: DEFAULT_LINK_LATENCY,
        }
    }
}

/// Parse a point: [`NetworkPoint`]'s keys, the router's as in
/// [`super::router::parse_point`] (`dims` default [`DEFAULT_DIMS`]) and
/// `link_latency` (default [`DEFAULT_LINK_LATENCY`]).
pub fn parse_point(text: &str) -> Result<(RouterParams, usize)> {
    let NetworkPoint {
        router,
        link_latency,
    } = point::parse(text)?;
    if link_latency > MAX_LINK_LATENCY {
        bail!("point key `link_latency` = {link_latency}: must be 0..={MAX_LINK_LATENCY}");
    }
    check_params(&router)?;
    Ok((router, link_latency))
}

/// The point text of `(p, link_latency)`, parsable by [`parse_point`].
pub fn point_text(p: &RouterParams, link_latency: usize) -> String {
    point::to_text(&NetworkPoint {
        router: p.clone(),
        link_latency,
    })
}

/// What a run exercised (the scoreboard figures of `exanet cosim network`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetworkCoverage {
    /// Good packets created (accepted by their source queue) and delivered.
    pub sent: u64,
    pub delivered: u64,
    /// Packets refused at a full source queue.
    pub refused: u64,
    /// Bad packets sent, and bad packets the routers dropped.
    pub bad_sent: u64,
    pub dropped: u64,
    /// Flits ejected at terminals.
    pub flits_ejected: u64,
    /// Traffic phases whose drain completed and checked clean.
    pub drains: u64,
    /// Reset pulses.
    pub resets: u64,
    /// Longest drain, cycles.
    pub longest_drain: u64,
    /// Cycles in which at least half the terminals ejected a flit (a load indicator).
    pub busy_cycles: u64,
}

impl NetworkCoverage {
    /// One line of scoreboard figures.
    pub fn summary(&self) -> String {
        format!(
            "scoreboard: sent={} delivered={} in_flight={} refused={} bad_sent={} dropped={} flits_ejected={} drains={} resets={} longest_drain={}",
            self.sent,
            self.delivered,
            self.sent.saturating_sub(self.delivered),
            self.refused,
            self.bad_sent,
            self.dropped,
            self.flits_ejected,
            self.drains,
            self.resets,
            self.longest_drain
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Sending at `LOADS[load]` for `left` more cycles.
    Traffic { load: usize, left: u64 },
    /// No new packets; waiting `since` cycles so far for the network to empty.
    Drain { since: u64 },
    /// This cycle is a reset pulse.
    Reset,
}

/// The `network` bench at one parameter point.
pub struct NetworkBench {
    params: RouterParams,
    link_latency: usize,
    /// The golden network's link latency (differs only in fault tests).
    golden_link_latency: usize,
    net: Option<Network>,
    phase: Phase,
    phases: u64,
    locals: Vec<FlitPorts>,
    /// Per (node, port): dropped_packets, flit_errors, credit_errors.
    counters: Vec<[Port; 3]>,
    reset_port: Option<Port>,
    /// A mismatch found while driving (counters), reported by the next check.
    pending: Option<Mismatch>,
    /// This cycle is a reset pulse.
    reset_now: bool,
    /// Figures of the golden networks replaced by resets.
    folded: NetworkCoverage,
    /// Figures of the current golden network kept by the bench.
    cur: NetworkCoverage,
    seen_errors: u64,
}

impl NetworkBench {
    /// A bench of the network of `params` routers with `link_latency`-cycle links.
    pub fn new(params: RouterParams, link_latency: usize) -> Result<Self> {
        Self::with_golden_link_latency(params, link_latency, link_latency)
    }

    /// A bench whose golden network has other link latencies than the RTL:
    /// only for showing that the bench catches a wrong model.
    pub fn with_golden_link_latency(
        params: RouterParams,
        link_latency: usize,
        golden_link_latency: usize,
    ) -> Result<Self> {
        params.validate()?;
        if link_latency > MAX_LINK_LATENCY {
            bail!("network.link_latency = {link_latency}: must be 0..={MAX_LINK_LATENCY}");
        }
        let b = NetworkBench {
            params,
            link_latency,
            golden_link_latency,
            net: None,
            phase: Phase::Reset,
            phases: 0,
            locals: Vec::new(),
            counters: Vec::new(),
            reset_port: None,
            pending: None,
            reset_now: false,
            folded: NetworkCoverage::default(),
            cur: NetworkCoverage::default(),
            seen_errors: 0,
        };
        // Fail now, naming the problem, rather than at the first cycle.
        b.golden(0).context("golden network")?;
        Ok(b)
    }

    /// The router parameters.
    pub fn params(&self) -> &RouterParams {
        &self.params
    }

    fn golden(&self, seed: u64) -> Result<Network> {
        let p = NetworkParams {
            router: self.params.clone(),
            link_latency: self.golden_link_latency,
            // The RTL routers are joined directly: the golden network's
            // links are the ideal wire too.
            links: None,
            // The bench creates every packet itself (Network::send / send_bad).
            workload: Workload::Trace { events: Vec::new() },
            warmup: 0,
            window: 1 << 50,
            drain_max: 0,
            watchdog: WATCHDOG,
            order_check: true,
            source_queue_limit: SOURCE_QUEUE,
            check_deadlock: true,
            seed,
        };
        let mut n = Network::new(&p)?;
        n.record_local_io(true);
        Ok(n)
    }

    /// What the run since the last [`Bench::reset`] exercised.
    pub fn coverage(&self) -> NetworkCoverage {
        let mut c = self.folded.clone();
        let cur = self.current();
        c.sent += cur.sent;
        c.delivered += cur.delivered;
        c.refused += cur.refused;
        c.bad_sent += cur.bad_sent;
        c.dropped += cur.dropped;
        c.flits_ejected += cur.flits_ejected;
        c
    }

    /// The current golden network's figures (delivered and dropped from it).
    fn current(&self) -> NetworkCoverage {
        let mut c = self.cur.clone();
        if let Some(n) = &self.net {
            c.delivered = n.delivered();
            c.dropped = n
                .routers()
                .iter()
                .map(|r| r.counters().dropped_packets.iter().sum::<u64>())
                .sum();
        }
        c
    }

    fn fold(&mut self) {
        let cur = self.current();
        let f = &mut self.folded;
        f.sent += cur.sent;
        f.delivered += cur.delivered;
        f.refused += cur.refused;
        f.bad_sent += cur.bad_sent;
        f.dropped += cur.dropped;
        f.flits_ejected += cur.flits_ejected;
        self.cur = NetworkCoverage::default();
        self.net = None;
        self.seen_errors = 0;
    }

    fn terminals(&self) -> usize {
        self.params.topology.num_nodes() * self.params.topology.local_ports
    }

    /// Name of terminal `term`'s top port `sig`, with its router's coordinates.
    fn port_name(&self, term: usize, sig: &str) -> String {
        let t = &self.params.topology;
        let n = term / t.local_ports;
        let c = t.coords(n);
        format!(
            "n{n}_l{}_{sig} (router {n} at x={},y={},z={})",
            term % t.local_ports,
            c[0],
            c[1],
            c[2]
        )
    }

    /// New packets of this cycle: each terminal starts one with the
    /// probability that offers `load` flits per cycle.
    fn traffic(&mut self, rng: &mut Rng, load: f64) {
        let p = &self.params;
        let t = &p.topology;
        let terms = self.terminals();
        let hf = p.header_flits();
        let max_payload = (p.max_packet_flits - 2 * hf) * p.flit_bits / 8;
        let mean_flits = (2 * hf) as f64 + (p.max_packet_flits - 2 * hf) as f64 / 2.0;
        let chance = (load / mean_flits).min(1.0);
        let net = self.net.as_mut().expect("built in drive");
        for src in 0..terms {
            if !rng.chance(chance) {
                continue;
            }
            let dst = rng.below(terms as u64) as usize;
            let bytes = rng.below(max_payload as u64 + 1) as usize;
            let class = usize::from(p.classes == 2 && rng.chance(0.3));
            if rng.chance(BAD) {
                let fault = match rng.below(3) {
                    1 if t.dims.iter().any(|&k| k < 16) => {
                        let dims: Vec<usize> = (0..3).filter(|&d| t.dims[d] < 16).collect();
                        let d = dims[rng.below(dims.len() as u64) as usize];
                        let mut c = [0u8; 3];
                        for (i, x) in c.iter_mut().enumerate() {
                            *x = rng.below(t.dims[i] as u64) as u8;
                        }
                        c[d] = (t.dims[d] + rng.below((16 - t.dims[d]) as u64) as usize) as u8;
                        HeaderFault::Dest(Coords {
                            x: c[0],
                            y: c[1],
                            z: c[2],
                            fpga: rng.below(t.local_ports as u64) as u8,
                        })
                    }
                    2 if t.local_ports < 4 => {
                        let n = t.coords(rng.below(t.num_nodes() as u64) as usize);
                        HeaderFault::Dest(Coords {
                            x: n[0] as u8,
                            y: n[1] as u8,
                            z: n[2] as u8,
                            fpga: (t.local_ports + rng.below((4 - t.local_ports) as u64) as usize)
                                as u8,
                        })
                    }
                    // one flip among the protected bits and the check byte
                    _ => HeaderFault::FlipBit(rng.below(120) as u32),
                };
                if net.send_bad(src, dst, bytes, class, fault).is_some() {
                    self.cur.bad_sent += 1;
                } else {
                    self.cur.refused += 1;
                }
            } else if net.send(src, dst, bytes, class).is_some() {
                self.cur.sent += 1;
            } else {
                self.cur.refused += 1;
            }
        }
    }

    fn compare_counters(&self, cycle: u64) -> Option<Mismatch> {
        let net = self.net.as_ref()?;
        let ports = self.params.num_ports();
        for (i, c) in self.counters.iter().enumerate() {
            let (node, port) = (i / ports, i % ports);
            let g = net.routers()[node].counters();
            let want = [
                g.dropped_packets[port],
                g.flit_errors[port],
                g.credit_errors[port],
            ];
            for (k, name) in ["dropped_packets", "flit_errors", "credit_errors"]
                .iter()
                .enumerate()
            {
                let (w, got) = (want[k] & 0xffff_ffff, c[k].get());
                if w != got {
                    let at = self.params.topology.coords(node);
                    return Some(Mismatch::hex(
                        cycle,
                        &format!(
                            "n{node}_{name}_{port} (router {node} at x={},y={},z={}, port {})",
                            at[0],
                            at[1],
                            at[2],
                            self.params.topology.port_name(port)
                        ),
                        w,
                        got,
                    ));
                }
            }
        }
        None
    }

    fn write_inputs(&self, io: &[LocalIo]) {
        for (lp, io) in self.locals.iter().zip(io) {
            lp.in_valid.set(io.to_router.is_some() as u64);
            if let Some(f) = &io.to_router {
                write_data(&lp.in_data, &f.data);
                lp.in_head.set(f.head as u64);
                lp.in_tail.set(f.tail as u64);
                lp.in_vc.set(f.vc as u64);
            }
            // immediate credit return for the flit consumed this cycle
            lp.credit_in_valid.set(io.from_router.is_some() as u64);
            if let Some(f) = &io.from_router {
                lp.credit_in_vc.set(f.vc as u64);
            }
        }
    }

    fn idle_inputs(&self) {
        for lp in &self.locals {
            lp.in_valid.set(0);
            lp.credit_in_valid.set(0);
        }
    }

    /// Terminal `term`'s RTL outputs against what the golden network showed it.
    fn compare_local(&self, cycle: u64, term: usize, io: &LocalIo) -> Option<Mismatch> {
        let lp = &self.locals[term];
        let words = self.params.flit_words();
        let valid = lp.out_valid.get() == 1;
        let want = io.from_router.as_ref();
        if valid != want.is_some() {
            return Some(Mismatch::hex(
                cycle,
                &self.port_name(term, "out_valid"),
                want.is_some() as u64,
                valid as u64,
            ));
        }
        if let Some(f) = want {
            let d = read_data(&lp.out_data);
            if d[..words] != f.data[..words] {
                return Some(Mismatch {
                    cycle,
                    port: self.port_name(term, "out_data"),
                    expected: hex_words(&f.data, words),
                    actual: hex_words(&d, words),
                });
            }
            for (name, port, w) in [
                ("out_head", &lp.out_head, f.head as u64),
                ("out_tail", &lp.out_tail, f.tail as u64),
                ("out_vc", &lp.out_vc, f.vc as u64),
            ] {
                let got = port.get();
                if got != w {
                    return Some(Mismatch::hex(cycle, &self.port_name(term, name), w, got));
                }
            }
        }
        let cvalid = lp.credit_out_valid.get() == 1;
        if cvalid != io.credit_from_router.is_some() {
            return Some(Mismatch::hex(
                cycle,
                &self.port_name(term, "credit_out_valid"),
                io.credit_from_router.is_some() as u64,
                cvalid as u64,
            ));
        }
        if let Some(vc) = io.credit_from_router {
            let got = lp.credit_out_vc.get();
            if got != vc as u64 {
                return Some(Mismatch::hex(
                    cycle,
                    &self.port_name(term, "credit_out_vc"),
                    vc as u64,
                    got,
                ));
            }
        }
        None
    }

    /// Scoreboard and watchdog of the golden network, and the phase's progress.
    fn check_network(&mut self, cycle: u64) -> Option<Mismatch> {
        let net = self.net.as_ref().expect("stepped");
        let (errors, count) = net.errors();
        if count > self.seen_errors {
            self.seen_errors = count;
            return Some(Mismatch {
                cycle,
                port: "scoreboard".into(),
                expected: "no scoreboard error".into(),
                actual: errors.first().cloned().unwrap_or_default(),
            });
        }
        if let Some(d) = net.deadlock() {
            let blocked: Vec<String> = d
                .blocked
                .iter()
                .take(8)
                .map(|b| {
                    format!(
                        "router {:?} in {} vc {} ({} flits) wants {:?}",
                        b.router, b.input, b.vc, b.flits, b.wants
                    )
                })
                .collect();
            return Some(Mismatch {
                cycle,
                port: "watchdog".into(),
                expected: "flits moving".into(),
                actual: format!(
                    "deadlock: {} flits stalled for {} cycles; blocked: {}",
                    d.flits_in_network,
                    d.stalled_for,
                    blocked.join("; ")
                ),
            });
        }
        match self.phase {
            Phase::Traffic { load, left } => {
                self.phase = if left > 1 {
                    Phase::Traffic {
                        load,
                        left: left - 1,
                    }
                } else {
                    Phase::Drain { since: 0 }
                };
            }
            Phase::Drain { since } if net.quiet() => {
                let cur = self.current();
                let live = net.packets_live();
                if live != 0 || cur.delivered != cur.sent || cur.dropped != cur.bad_sent {
                    return Some(Mismatch {
                        cycle,
                        port: "scoreboard".into(),
                        expected: format!(
                            "after the drain: 0 packets live, {} delivered, {} bad dropped",
                            cur.sent, cur.bad_sent
                        ),
                        actual: format!(
                            "{live} live, {} delivered, {} dropped",
                            cur.delivered, cur.dropped
                        ),
                    });
                }
                self.folded.drains += 1;
                self.folded.longest_drain = self.folded.longest_drain.max(since);
                self.phase = if self.folded.drains.is_multiple_of(RESET_EVERY) {
                    Phase::Reset
                } else {
                    Phase::Traffic { load: 0, left: 0 } // chosen in drive
                };
            }
            Phase::Drain { since } => {
                if since >= DRAIN_MAX {
                    return Some(Mismatch {
                        cycle,
                        port: "scoreboard".into(),
                        expected: format!("the network empty within {DRAIN_MAX} cycles"),
                        actual: format!(
                            "{} packets live, {} flits in the network",
                            net.packets_live(),
                            net.flits_in_network()
                        ),
                    });
                }
                self.phase = Phase::Drain { since: since + 1 };
            }
            Phase::Reset => {}
        }
        None
    }
}

/// A terminal's expected outputs during a reset pulse: nothing.
const IDLE: LocalIo = LocalIo {
    to_router: None,
    from_router: None,
    credit_from_router: None,
};

impl Bench for NetworkBench {
    fn block(&self) -> &str {
        "network"
    }

    fn point(&self) -> String {
        point_text(&self.params, self.link_latency)
    }

    /// The network as one source file: the top, then the router's modules,
    /// with a Verilator configuration that makes the A x B x C routers share
    /// one router's C++ code: the router module is not inlined, and its
    /// input ports are kept as variables (`public`), because Verilator
    /// otherwise substitutes each instance's drivers (link registers,
    /// constant coordinates) into its copy of the router's logic. Without
    /// it, the 4x2x2 network verilates to 58 MB of C++ (over 15 minutes of
    /// compiling on 2 cores); with it, to 9 MB.
    fn emit(&self) -> Result<Emitted> {
        let e = emit_network(&self.params, self.link_latency)?;
        let top_text = e.modules.last().expect("top").1.clone();
        let router = Emitted {
            top: e.modules[e.modules.len() - 2].0.clone(),
            modules: e.modules[..e.modules.len() - 1].to_vec(),
        };
        let r = &router.top;
        let config = format!(
            "`verilator_config\n\
             no_inline -module \"{r}\"\n\
             public -module \"{r}\" -var \"*in_*\"\n\
             public -module \"{r}\" -var \"node_*\"\n\
             `verilog\n"
        );
        Ok(Emitted {
            modules: vec![(
                e.top.clone(),
                format!("{config}{top_text}\n{}", single_file(&router)),
            )],
            top: e.top,
        })
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let t = &self.params.topology;
        let w = self.params.flit_bits as u32;
        let mut locals = Vec::new();
        for n in 0..t.num_nodes() {
            for j in 0..t.local_ports {
                locals.push(FlitPorts::bind(sim, w, |sig| format!("n{n}_l{j}_{sig}"))?);
            }
        }
        let mut counters = Vec::new();
        for n in 0..t.num_nodes() {
            for q in 0..t.num_ports() {
                let c = |name: &str| sim.port_w(&format!("n{n}_{name}_{q}"), 32);
                counters.push([
                    c("dropped_packets")?,
                    c("flit_errors")?,
                    c("credit_errors")?,
                ]);
            }
        }
        self.locals = locals;
        self.counters = counters;
        let reset = sim.port_w("reset", 1)?;
        reset.set(0);
        self.reset_port = Some(reset);
        Ok(())
    }

    fn reset(&mut self) {
        self.net = None;
        self.phase = Phase::Reset;
        self.phases = 0;
        self.pending = None;
        self.reset_now = false;
        self.folded = NetworkCoverage::default();
        self.cur = NetworkCoverage::default();
        self.seen_errors = 0;
    }

    fn drive(&mut self, rng: &mut Rng, cycle: u64) {
        let reset = self.reset_port.expect("bind before drive");
        if self.net.is_none() {
            // power-on or after a reset pulse: a fresh golden network
            self.net = Some(self.golden(rng.next_u64()).expect("validated in new"));
            self.phase = Phase::Traffic { load: 0, left: 0 };
        }
        if let Phase::Traffic { left: 0, .. } = self.phase {
            let load = (self.phases % LOADS.len() as u64) as usize;
            self.phases += 1;
            let left = PHASE_CYCLES.0 + rng.below(PHASE_CYCLES.1 - PHASE_CYCLES.0 + 1);
            self.phase = Phase::Traffic { load, left };
        }
        if self.pending.is_none() {
            self.pending = self.compare_counters(cycle);
        }
        if self.phase == Phase::Reset {
            reset.set(1);
            self.reset_now = true;
            self.idle_inputs();
            return;
        }
        reset.set(0);
        if let Phase::Traffic { load, .. } = self.phase {
            self.traffic(rng, LOADS[load]);
        }
        let net = self.net.as_mut().expect("built above");
        net.step();
        self.write_inputs(self.net.as_ref().expect("built").local_io());
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        if let Some(m) = self.pending.take() {
            return Some(m);
        }
        let net = self.net.as_ref().expect("built in drive");
        let io: &[LocalIo] = if self.reset_now { &[] } else { net.local_io() };
        let mut ejected = 0;
        for term in 0..self.locals.len() {
            let e = io.get(term).unwrap_or(&IDLE);
            if let Some(m) = self.compare_local(cycle, term, e) {
                return Some(m);
            }
            ejected += e.from_router.is_some() as u64;
        }
        self.cur.flits_ejected += ejected;
        if 2 * ejected >= self.locals.len() as u64 {
            self.folded.busy_cycles += 1;
        }
        if self.reset_now {
            return None;
        }
        self.check_network(cycle)
    }

    fn advance(&mut self) {
        if self.reset_now {
            self.reset_now = false;
            self.folded.resets += 1;
            self.fold();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_round_trip_and_reject_bad_keys_and_values() {
        for t in matrix_points() {
            let (p, lat) = parse_point(&t).unwrap();
            let text = point_text(&p, lat);
            assert_eq!(parse_point(&text).unwrap(), (p, lat));
            assert_eq!(point(&t).unwrap().point(), text);
        }
        let (p, lat) = parse_point("").unwrap();
        assert_eq!(p.topology.dims, [4, 2, 2]);
        assert_eq!(lat, DEFAULT_LINK_LATENCY);
        let e = parse_point("node=3").unwrap_err().to_string();
        assert!(e.contains("`node`") && e.contains("link_latency"), "{e}");
        let e = parse_point("link_latency=99").unwrap_err().to_string();
        assert!(e.contains("`link_latency` = 99"), "{e}");
        let e = parse_point("dims=4x2").unwrap_err().to_string();
        assert!(e.contains("`dims`"), "{e}");
        // (ties to +: with parity ties a 1-VC ring of 4 has no cycle)
        let e = point("dims=4x2x2,vcs_per_class=1,tie_break=plus")
            .err()
            .unwrap();
        let e = format!("{e:#}");
        assert!(e.contains("golden network") && e.contains("cycl"), "{e}");
    }
}
