//! `exanet reproduce`: the ExaNeSt prototype's published figures
//! ([`PROTOTYPE`], from `shared/design/REFERENCE.md`) beside what our RTL
//! does under the same assumptions.
//!
//! Latency and bandwidth come from RTL co-simulation of whole node tops
//! joined by their link layers and golden PHYs (`exanet_tb::blocks::node`,
//! every check of that bench on): node 0 sends isolated RDMA writes
//! (`MeasurePlan`); a transfer's hardware latency runs from its DOORBELL
//! accepted at node 0 to the WRITE_IN completion readable at the
//! destination (the cycle after the B of its last memory write), in node
//! 0's PL cycles, converted to ns at `clock.pl_mhz`. The one-way latency
//! adds the software overhead `allreduce.sw_overhead_us` (the prototype's
//! NI + user-space library share, 0.47 µs). 1 hop: 2 node tops (2x1x1);
//! 5 hops: a 10x1x1 ring, node 0 to node 5 (the node bench has no mesh; a
//! ring of 10 is the smallest whose farthest node is 5 hops away). The
//! breakdown of the 64 B transfers is taken from head-flit timestamps at
//! every router boundary (the bench's [`HeadStamp`]s). Goodput: one
//! isolated write per size, bytes / (completion − doorbell). Allreduce and
//! resources: see [`Row`]s built by `table`.

use crate::config::Loaded;
use crate::error::usage;
use crate::synth::{zu9eg, SynthResult};
use anyhow::{Context, Result};
use exanet_tb::blocks::node::{parse_point, HeadStamp, NodeBench, NodePoint};
use exanet_tb::blocks::node_pair::{MeasurePlan, PlanSample};
use exanet_tb::cosim::{run, CosimOptions};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// The prototype's figures (`shared/design/REFERENCE.md`: "The ExaNeSt
/// Prototype", FORTH-ICS TR-488, arXiv 2307.09371, DOI 10.1145/3715152).
pub struct Prototype {
    /// One-way user-level latency, 1 hop, µs.
    pub latency_1hop_us: f64,
    /// … 5 hops, µs.
    pub latency_5hop_us: f64,
    /// Of the 1-hop latency: NI + user-space library, µs.
    pub sw_share_us: f64,
    /// Single-hop bandwidth, % of link capacity (large transfers).
    pub bandwidth_pct: f64,
    /// Link rate, Gb/s.
    pub link_gbps: f64,
    /// Allreduce accelerator: latency reduction against software, % ("up to").
    pub allreduce_reduction_pct: f64,
}

/// The values of `shared/design/REFERENCE.md`.
pub const PROTOTYPE: Prototype = Prototype {
    latency_1hop_us: 1.3,
    latency_5hop_us: 2.55,
    sw_share_us: 0.47,
    bandwidth_pct: 82.0,
    link_gbps: 10.0,
    allreduce_reduction_pct: 88.0,
};

impl Prototype {
    /// Per extra hop, µs (derived: (5-hop − 1-hop) / 4).
    pub fn per_hop_us(&self) -> f64 {
        (self.latency_5hop_us - self.latency_1hop_us) / 4.0
    }
}

/// What a run measures.
#[derive(Clone, Debug)]
pub struct Options {
    /// Fewer sizes and samples (the test suite's run).
    pub quick: bool,
    /// The node's resources from `exanet synth --block node` (composed),
    /// or why there are none.
    pub resources: std::result::Result<SynthResult, String>,
    /// Verilator build cache and the folder for waveforms of failures.
    pub cosim: CosimOptions,
}

/// The assumptions, each a config key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Assumptions {
    pub pl_mhz: f64,
    pub link_gbps: f64,
    pub link_latency_ns: f64,
    pub ber: f64,
    pub sw_overhead_us: f64,
    pub mem_latency_ns: f64,
    /// Derived: PL and user clock periods (ps), PHY latency (user
    /// cycles), memory latency (PL cycles).
    pub pl_ps: u64,
    pub user_ps: u64,
    pub phy_cycles: usize,
    pub mem_cycles: u64,
}

impl Assumptions {
    /// From the config; errors name the key and value.
    pub fn of(l: &Loaded) -> Result<Self> {
        let c = &l.config;
        let check = |key: &str, v: f64, lo: f64, hi: f64| -> Result<()> {
            if !(v.is_finite() && v >= lo && v <= hi) {
                return Err(usage(format!(
                    "{}: key `{key}` = {v}: exanet reproduce needs {lo} ..= {hi}",
                    l.origin(key)
                )));
            }
            Ok(())
        };
        check("clock.pl_mhz", c.clock.pl_mhz, 10.0, 1000.0)?;
        check("link.gbps", c.link.gbps, 1.0, 100.0)?;
        check("link.latency_ns", c.link.latency_ns, 1.0, 10_000.0)?;
        check("link.ber", c.link.ber, 0.0, 1e-4)?;
        check(
            "allreduce.sw_overhead_us",
            c.allreduce.sw_overhead_us,
            0.0,
            1000.0,
        )?;
        check(
            "reproduce.mem_latency_ns",
            c.reproduce.mem_latency_ns,
            0.0,
            10_000.0,
        )?;
        let pl_ps = (1e6 / c.clock.pl_mhz).round() as u64;
        // One 64-bit PHY word per user cycle at the link's rate.
        let user_ps = (64e3 / c.link.gbps).round() as u64;
        let phy_cycles = ((c.link.latency_ns * 1000.0 / user_ps as f64).round() as usize).max(1);
        let mem_cycles = (c.reproduce.mem_latency_ns * c.clock.pl_mhz / 1000.0 - 1e-9)
            .ceil()
            .max(0.0) as u64;
        Ok(Assumptions {
            pl_mhz: c.clock.pl_mhz,
            link_gbps: c.link.gbps,
            link_latency_ns: c.link.latency_ns,
            ber: c.link.ber,
            sw_overhead_us: c.allreduce.sw_overhead_us,
            mem_latency_ns: c.reproduce.mem_latency_ns,
            pl_ps,
            user_ps,
            phy_cycles,
            mem_cycles,
        })
    }

    /// ns of `cycles` PL cycles at `clock.pl_mhz`.
    pub fn ns(&self, cycles: f64) -> f64 {
        cycles * 1000.0 / self.pl_mhz
    }

    /// The lines printed with the table: (key, value, meaning).
    pub fn lines(&self) -> Vec<(String, String, String)> {
        vec![
            (
                "clock.pl_mhz".into(),
                format!("{}", self.pl_mhz),
                format!("PL clock of every node ({} ps); cycles → ns", self.pl_ps),
            ),
            (
                "link.gbps".into(),
                format!("{}", self.link_gbps),
                format!(
                    "link rate: one 64-bit PHY word per {} ps user cycle",
                    self.user_ps
                ),
            ),
            (
                "link.latency_ns".into(),
                format!("{}", self.link_latency_ns),
                format!(
                    "PHY + cable one way: {} user cycles in the golden PHY",
                    self.phy_cycles
                ),
            ),
            (
                "link.ber".into(),
                format!("{}", self.ber),
                "bit error rate of every PHY direction".into(),
            ),
            (
                "allreduce.sw_overhead_us".into(),
                format!("{}", self.sw_overhead_us),
                "software (NI + user library) per message, added to the hardware latency".into(),
            ),
            (
                "reproduce.mem_latency_ns".into(),
                format!("{}", self.mem_latency_ns),
                format!(
                    "memory behind each NI: {} PL cycles AR → first beat, last W → B",
                    self.mem_cycles
                ),
            ),
        ]
    }
}

/// Where the cycles of the 64 B transfers go (means, PL cycles).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// Doorbell → head flit into the source router.
    pub ni_tx: f64,
    /// Head flit in → out, summed over every router on the path.
    pub router_hops: f64,
    /// Router out → next router in, minus the PHY: `link_tx` framing, the
    /// two clock crossings, `link_rx`.
    pub link_layer: f64,
    /// The golden PHY's latency (from `link.latency_ns`), in PL cycles,
    /// per hop times hops: a model's figure, not a measurement.
    pub phy: f64,
    /// Head flit out of the destination router (ejection) → `rx_commit` of
    /// the last packet.
    pub ni_rx: f64,
    /// `rx_commit` → the B of the memory write (the memory's latency and
    /// the AXI4 burst).
    pub memory_write: f64,
    /// B → WRITE_IN completion readable.
    pub completion: f64,
}

impl Breakdown {
    /// Every part with its name.
    pub fn parts(&self) -> [(&'static str, f64); 7] {
        [
            ("NI TX", self.ni_tx),
            ("router hops", self.router_hops),
            ("link layer", self.link_layer),
            ("PHY (model)", self.phy),
            ("NI RX", self.ni_rx),
            ("memory write", self.memory_write),
            ("completion", self.completion),
        ]
    }

    /// The sum (the hardware latency).
    pub fn total(&self) -> f64 {
        self.parts().iter().map(|p| p.1).sum()
    }
}

/// One latency run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyRun {
    /// The node bench's point (`dims=…`) and the destination node.
    pub point: String,
    pub dest: usize,
    /// Hops the head flits took (routers passed − 1, from the timestamps).
    pub hops: usize,
    /// Hardware latency of each 64 B sample, PL cycles.
    pub samples: Vec<u64>,
    /// Their mean, cycles and ns; the one-way latency with the software
    /// overhead, µs.
    pub mean_cycles: f64,
    pub hw_ns: f64,
    pub one_way_us: f64,
    pub breakdown: Breakdown,
    /// PL cycles of node 0 until the last transfer's completion, and wall
    /// seconds of the run (with its Verilator build when not cached).
    pub cycles: u64,
    pub wall_s: f64,
}

/// One goodput point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GoodputPoint {
    pub bytes: u64,
    /// Doorbell → completion, PL cycles.
    pub cycles: u64,
    pub gbps: f64,
    /// Of `link.gbps`.
    pub pct_of_link: f64,
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub quantity: String,
    pub unit: String,
    pub prototype: Option<f64>,
    /// The prototype's figure as text (with "up to", "n/p").
    pub prototype_text: String,
    pub exanet: Option<f64>,
    /// exanet / prototype.
    pub ratio: Option<f64>,
    /// How ours was obtained, or (no number) which block or tool is
    /// missing and why.
    pub how: String,
    /// Set when there is no number: what is missing.
    pub missing: Option<String>,
}

/// Everything a run found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub quick: bool,
    pub assumptions: Assumptions,
    pub rows: Vec<Row>,
    pub one_hop: LatencyRun,
    pub five_hop: LatencyRun,
    /// (5-hop − 1-hop) / 4, µs.
    pub per_hop_us: f64,
    pub goodput: Vec<GoodputPoint>,
    /// The allreduce row's run (golden network simulator), or why it did
    /// not run.
    pub allreduce: std::result::Result<AllreduceRun, String>,
    /// Where the latency goal (1 hop ≤ 1.0 µs, per hop ≤ 0.25 µs) is
    /// missed, the part that dominates.
    pub notes: Vec<String>,
}

/// The allreduce row: the config's whole machine as one communicator, an
/// 8 B vector (one f64, sum), the NI's engine beside software recursive
/// doubling from RDMA writes, in the golden network simulator (golden NIs
/// with the engine, golden routers and framed links; the NI timing keys
/// `allreduce.ni_tx_cycles` / `ni_rx_cycles`, the engine's combining cost
/// `allreduce.mem_latency_cycles` / `step_cycles`, calibrated against the
/// RTL engine). The same run as
/// `exanet simulate -P traffic.pattern=allreduce` on the default config.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AllreduceRun {
    pub ranks: usize,
    pub dims: [usize; 3],
    pub bytes: usize,
    pub repetitions: usize,
    /// Mean latency of a collective, µs: the engine, and software.
    pub hardware_us: f64,
    pub software_us: f64,
    /// 1 − hardware / software, %.
    pub reduction_pct: f64,
    /// Recursive-doubling steps (log2 of the ranks, rounded up).
    pub steps: u32,
    pub ni_tx_cycles: u64,
    pub ni_rx_cycles: u64,
    /// The engine's combining cost: memory latency and sequencer cycles
    /// per step (`allreduce.mem_latency_cycles`, `step_cycles`).
    pub mem_latency_cycles: u64,
    pub step_cycles: u64,
    pub sw_overhead_us: f64,
}

/// Goal of issue 15: hardware allreduce ≥ 90 % faster than software at
/// 128 ranks for 8 B.
pub const GOAL_ALLREDUCE_PCT: f64 = 90.0;

/// Run the allreduce row's collective (see [`AllreduceRun`]).
pub fn allreduce_run(l: &Loaded) -> Result<AllreduceRun> {
    let mut l = l.clone();
    let c = &mut l.config;
    c.traffic.pattern = "allreduce".into();
    c.allreduce.mode = "both".into();
    c.allreduce.op = "sum".into();
    c.allreduce.dtype = "f64".into();
    c.allreduce.count = 1;
    c.allreduce.origin = vec![0; 3];
    c.allreduce.extent = vec![0; 3];
    c.allreduce.scaling = false;
    c.allreduce.background_rate = 0.0;
    let setup = l.elaborate_sim()?;
    let r = crate::simulate::run_allreduce(&setup)?;
    if !r.clean {
        anyhow::bail!(
            "the golden allreduce run was not clean: {}",
            r.errors.join("; ")
        );
    }
    let row = r
        .rows
        .last()
        .context("the allreduce run measured no communicator")?;
    let (Some(h), Some(sw), Some(pct)) = (&row.hardware, &row.software, row.reduction_pct) else {
        anyhow::bail!("the allreduce run lacks the hardware or the software side");
    };
    Ok(AllreduceRun {
        ranks: row.ranks,
        dims: r.dims,
        bytes: r.bytes,
        repetitions: r.repetitions,
        hardware_us: h.mean_us,
        software_us: sw.mean_us,
        reduction_pct: pct,
        steps: row.ranks.next_power_of_two().trailing_zeros(),
        ni_tx_cycles: r.ni_tx_cycles,
        ni_rx_cycles: r.ni_rx_cycles,
        mem_latency_cycles: r.mem_latency_cycles,
        step_cycles: r.step_cycles,
        sw_overhead_us: l.config.allreduce.sw_overhead_us,
    })
}

/// Goals of issue 18, side by side.
pub const GOAL_1HOP_US: f64 = 1.0;
pub const GOAL_PER_HOP_US: f64 = 0.25;
pub const GOAL_BANDWIDTH_PCT: f64 = 85.0;

/// Sizes of the goodput curve.
pub fn goodput_sizes(quick: bool) -> Vec<u64> {
    if quick {
        vec![256, 4096, 16384]
    } else {
        (0..8).map(|k| 64u64 << (2 * k)).collect() // 64 B … 1 MiB
    }
}

/// 64 B latency samples per run.
pub fn latency_samples(quick: bool) -> usize {
    if quick {
        2
    } else {
        4
    }
}

/// One co-simulation of `point`, measuring `plan`; returns the bench.
fn measure(
    a: &Assumptions,
    point: &NodePoint,
    plan: MeasurePlan,
    opts: &CosimOptions,
) -> Result<(NodeBench, u64, f64)> {
    let mut bench = NodeBench::measuring(point.clone(), plan, a.pl_ps, a.user_ps, a.mem_cycles)?;
    let t0 = std::time::Instant::now();
    let r =
        run(&mut bench, opts).with_context(|| format!("node co-simulation [{}]", point.text()))?;
    if let Some(m) = r.first {
        anyhow::bail!(
            "node co-simulation [{}]: RTL and golden model differ: {m}{}",
            point.text(),
            r.waveform
                .map(|w| format!(" (waveform {})", w.display()))
                .unwrap_or_default()
        );
    }
    if !bench.plan_done() {
        anyhow::bail!(
            "node co-simulation [{}]: the measurement did not finish in {} PL cycles ({} of its transfers done)",
            point.text(),
            opts.cycles,
            bench.plan_samples().len()
        );
    }
    Ok((bench, r.cycles, t0.elapsed().as_secs_f64()))
}

/// The point of a chain of `nodes` in a ring.
fn point_of(a: &Assumptions, nodes: usize) -> Result<NodePoint> {
    parse_point(&format!(
        "dims={nodes}x1x1,phy_latency={},cc_period=0,ber={}",
        a.phy_cycles, a.ber
    ))
}

/// The breakdown of `s` from `stamps` (head flits of node 0's transfer to
/// `dest`, the only packets in the network), and the hops.
fn breakdown_of(
    a: &Assumptions,
    s: &PlanSample,
    stamps: &[HeadStamp],
) -> Result<(Breakdown, usize)> {
    let w: Vec<&HeadStamp> = stamps
        .iter()
        .filter(|h| h.cycle >= s.doorbell && h.cycle <= s.visible)
        .collect();
    // Per node on the path, in order of arrival: its first head in and out.
    let mut path: Vec<(usize, u64, u64)> = Vec::new();
    for h in &w {
        if h.into_router && !path.iter().any(|p| p.0 == h.node) {
            let out = w
                .iter()
                .find(|o| o.node == h.node && !o.into_router && o.cycle >= h.cycle)
                .with_context(|| format!("node {}: a head flit went in and never out", h.node))?;
            path.push((h.node, h.cycle, out.cycle));
        }
    }
    let first = path
        .first()
        .context("no head flit seen in the measured window")?;
    let last = path.last().context("no head flit seen")?;
    if first.0 != 0 {
        anyhow::bail!(
            "the first router passed is node {}, not the source",
            first.0
        );
    }
    let hops = path.len() - 1;
    let router: u64 = path.iter().map(|p| p.2 - p.1).sum();
    let links: u64 = path.windows(2).map(|p| p[1].1 - p[0].2).sum();
    let phy = hops as f64 * a.phy_cycles as f64 * a.user_ps as f64 / a.pl_ps as f64;
    Ok((
        Breakdown {
            ni_tx: (first.1 - s.doorbell) as f64,
            router_hops: router as f64,
            link_layer: links as f64 - phy,
            phy,
            ni_rx: (s.last_commit as f64 - last.2 as f64),
            memory_write: (s.landed - s.last_commit) as f64,
            completion: (s.visible - s.landed) as f64,
        },
        hops,
    ))
}

/// Mean of breakdowns.
fn mean_breakdown(v: &[Breakdown]) -> Breakdown {
    let n = v.len().max(1) as f64;
    let s = |f: fn(&Breakdown) -> f64| v.iter().map(f).sum::<f64>() / n;
    Breakdown {
        ni_tx: s(|b| b.ni_tx),
        router_hops: s(|b| b.router_hops),
        link_layer: s(|b| b.link_layer),
        phy: s(|b| b.phy),
        ni_rx: s(|b| b.ni_rx),
        memory_write: s(|b| b.memory_write),
        completion: s(|b| b.completion),
    }
}

/// A latency run of `nodes` in a ring, node 0 to `dest`, plus `extra`
/// sizes (one sample each, for the goodput curve).
fn latency_run(
    a: &Assumptions,
    nodes: usize,
    dest: usize,
    quick: bool,
    extra: &[u64],
    opts: &CosimOptions,
) -> Result<(LatencyRun, Vec<PlanSample>)> {
    let point = point_of(a, nodes)?;
    let k = latency_samples(quick);
    let mut sizes = vec![64; k];
    sizes.extend_from_slice(extra);
    let plan = MeasurePlan {
        dest,
        sizes,
        samples: 1,
    };
    let (bench, _, wall_s) = measure(a, &point, plan, opts)?;
    let all = bench.plan_samples().to_vec();
    let cycles = all.last().map_or(0, |s| s.visible);
    let mut bds = Vec::new();
    let mut hops = Vec::new();
    for s in &all[..k] {
        let (b, h) = breakdown_of(a, s, bench.head_stamps())?;
        bds.push(b);
        hops.push(h);
    }
    if hops.iter().any(|&h| h != hops[0]) {
        anyhow::bail!(
            "[{}]: the 64 B samples took different hop counts {hops:?}",
            point.text()
        );
    }
    let samples: Vec<u64> = all[..k].iter().map(|s| s.visible - s.doorbell).collect();
    let mean_cycles = samples.iter().sum::<u64>() as f64 / k as f64;
    let hw_ns = a.ns(mean_cycles);
    Ok((
        LatencyRun {
            point: point.text(),
            dest,
            hops: hops[0],
            samples,
            mean_cycles,
            hw_ns,
            one_way_us: hw_ns / 1000.0 + a.sw_overhead_us,
            breakdown: mean_breakdown(&bds),
            cycles,
            wall_s,
        },
        all[k..].to_vec(),
    ))
}

/// Run the measurements; `step(what)` reports progress (4 steps).
pub fn reproduce(l: &Loaded, o: &Options, mut step: impl FnMut(&str)) -> Result<Report> {
    let a = Assumptions::of(l)?;
    let sizes = goodput_sizes(o.quick);
    // Enough PL cycles for the largest transfer at a tenth of the link rate.
    let biggest = sizes.iter().sum::<u64>() as f64;
    let budget = 200_000 + (biggest * 8.0 / (a.link_gbps * 0.1) * a.pl_mhz / 1000.0) as u64;
    let mut opts = o.cosim.clone();
    opts.cycles = budget;
    step("1 hop: 2 node tops (2x1x1), 64 B latency and the goodput sizes");
    let (one_hop, bw) = latency_run(&a, 2, 1, o.quick, &sizes, &opts)?;
    step("5 hops: 10 node tops in a ring (10x1x1), node 0 to node 5");
    opts.cycles = 200_000;
    let (five_hop, _) = latency_run(&a, 10, 5, o.quick, &[], &opts)?;
    step("table");
    let goodput: Vec<GoodputPoint> = bw
        .iter()
        .map(|s| {
            let cycles = s.visible - s.doorbell;
            let gbps = s.bytes as f64 * 8.0 / a.ns(cycles as f64);
            GoodputPoint {
                bytes: s.bytes,
                cycles,
                gbps,
                pct_of_link: 100.0 * gbps / a.link_gbps,
            }
        })
        .collect();
    step("allreduce: golden network, the NI's engine vs software, whole machine, 8 B");
    let allreduce = allreduce_run(l).map_err(|e| format!("{e:#}"));
    let per_hop_us = (five_hop.one_way_us - one_hop.one_way_us) / 4.0;
    let rows = table(
        &a,
        &one_hop,
        &five_hop,
        per_hop_us,
        &goodput,
        &allreduce,
        &o.resources,
    );
    let mut notes = Vec::new();
    let dominant = |b: &Breakdown| {
        let mut p = b.parts().to_vec();
        p.sort_by(|x, y| y.1.total_cmp(&x.1));
        format!(
            "{} ({:.0} of {:.0} cycles), then {} ({:.0})",
            p[0].0,
            p[0].1,
            b.total(),
            p[1].0,
            p[1].1
        )
    };
    if one_hop.one_way_us > GOAL_1HOP_US {
        notes.push(format!(
            "1-hop goal (≤ {GOAL_1HOP_US} µs) missed: {:.3} µs, of which {:.3} µs software; the hardware's cycles go mostly to {}",
            one_hop.one_way_us,
            a.sw_overhead_us,
            dominant(&one_hop.breakdown)
        ));
    }
    if per_hop_us > GOAL_PER_HOP_US {
        let d = |f: fn(&Breakdown) -> f64| (f(&five_hop.breakdown) - f(&one_hop.breakdown)) / 4.0;
        notes.push(format!(
            "per-hop goal (≤ {GOAL_PER_HOP_US} µs) missed: {:.3} µs; per extra hop: router {:.1}, link layer {:.1}, PHY {:.1} cycles",
            per_hop_us,
            d(|b| b.router_hops),
            d(|b| b.link_layer),
            d(|b| b.phy)
        ));
    }
    if let Some(best) = goodput.iter().map(|g| g.pct_of_link).reduce(f64::max) {
        if best < GOAL_BANDWIDTH_PCT {
            notes.push(format!(
                "bandwidth goal (≥ {GOAL_BANDWIDTH_PCT} %) missed: {best:.1} % at the largest size measured"
            ));
        }
    }
    if let Ok(ar) = &allreduce {
        if ar.reduction_pct < GOAL_ALLREDUCE_PCT {
            // Software pays its overhead per message at every step, the
            // engine once per collective plus its combining per step, and
            // both the same network path per step: the reduction is below
            // (steps − 1) × overhead / software time, below 1 − 1/steps
            // however fast the network.
            let bound = 100.0 * (1.0 - 1.0 / f64::from(ar.steps.max(1)));
            notes.push(format!(
                "allreduce goal (≥ {GOAL_ALLREDUCE_PCT} % at {} ranks, 8 B) missed: {:.1} %; software pays {} µs per message at each of the {} steps, \
                 the engine once per collective but its combining at every step (three memory round trips per chunk), and both the same network path per step ({:.3} µs per step in hardware), \
                 so the reduction cannot pass about 1 − 1/steps = {bound:.1} % even over a zero-latency network (the software's per-element reduction cost aside)",
                ar.ranks,
                ar.reduction_pct,
                ar.sw_overhead_us,
                ar.steps,
                ar.hardware_us / f64::from(ar.steps.max(1)),
            ));
        }
    }
    Ok(Report {
        quick: o.quick,
        assumptions: a,
        rows,
        one_hop,
        five_hop,
        per_hop_us,
        goodput,
        allreduce,
        notes,
    })
}

/// The table's rows.
fn table(
    a: &Assumptions,
    one: &LatencyRun,
    five: &LatencyRun,
    per_hop_us: f64,
    goodput: &[GoodputPoint],
    allreduce: &std::result::Result<AllreduceRun, String>,
    resources: &std::result::Result<SynthResult, String>,
) -> Vec<Row> {
    let p = &PROTOTYPE;
    let row = |q: &str,
               unit: &str,
               proto: Option<f64>,
               ptext: String,
               ours: Option<f64>,
               how: String,
               missing: Option<String>| Row {
        quantity: q.into(),
        unit: unit.into(),
        prototype: proto,
        prototype_text: ptext,
        exanet: ours,
        ratio: match (ours, proto) {
            (Some(o), Some(p)) if p != 0.0 => Some(o / p),
            _ => None,
        },
        how,
        missing,
    };
    let lat_how = |r: &LatencyRun| {
        format!(
            "RTL co-simulation, node tops [{}], node 0 → node {} ({} hop(s)): 64 B RDMA write, doorbell → WRITE_IN completion readable, mean of {} = {:.1} cycles = {:.0} ns, + {} µs software overhead",
            r.point,
            r.dest,
            r.hops,
            r.samples.len(),
            r.mean_cycles,
            r.hw_ns,
            a.sw_overhead_us
        )
    };
    let mut rows = vec![
        row(
            "one-way latency, 1 hop",
            "µs",
            Some(p.latency_1hop_us),
            format!("{}", p.latency_1hop_us),
            Some(one.one_way_us),
            lat_how(one),
            None,
        ),
        row(
            "one-way latency, 5 hops",
            "µs",
            Some(p.latency_5hop_us),
            format!("{}", p.latency_5hop_us),
            Some(five.one_way_us),
            lat_how(five),
            None,
        ),
        row(
            "per extra hop",
            "µs",
            Some(p.per_hop_us()),
            format!("{:.4} (derived)", p.per_hop_us()),
            Some(per_hop_us),
            "(5-hop − 1-hop) / 4 of the two rows above".into(),
            None,
        ),
    ];
    let best = goodput
        .iter()
        .max_by(|x, y| x.pct_of_link.total_cmp(&y.pct_of_link));
    rows.push(match best {
        Some(g) => row(
            "single-hop bandwidth",
            "% of link",
            Some(p.bandwidth_pct),
            format!("{}", p.bandwidth_pct),
            Some(g.pct_of_link),
            format!(
                "RTL co-simulation [{}]: RDMA write goodput at {} B = {:.2} Gb/s of {} Gb/s (best of {} sizes, isolated transfers, doorbell → completion)",
                one.point,
                g.bytes,
                g.gbps,
                a.link_gbps,
                goodput.len()
            ),
            None,
        ),
        None => row(
            "single-hop bandwidth",
            "% of link",
            Some(p.bandwidth_pct),
            format!("{}", p.bandwidth_pct),
            None,
            "no goodput size measured".into(),
            Some("goodput sizes".into()),
        ),
    });
    rows.push(match allreduce {
        Ok(ar) => row(
            "allreduce latency reduction vs software",
            "%",
            Some(p.allreduce_reduction_pct),
            format!("up to {}", p.allreduce_reduction_pct),
            Some(ar.reduction_pct),
            format!(
                "golden network simulator (`exanet simulate -P traffic.pattern=allreduce`): {} ranks ({}x{}x{}, the whole machine), {} B f64 sum, mean of {}: \
                 the NI's engine {:.3} µs against software recursive doubling from RDMA writes {:.3} µs ({} µs per message); \
                 NI timing {} / {} cycles (`allreduce.ni_tx_cycles` / `ni_rx_cycles`), the engine's combining {}-cycle memory, {} cycles per step \
                 (`allreduce.mem_latency_cycles` / `step_cycles`), calibrated against the RTL engine within 10 % at 2-8 ranks, 8 B to 64 KiB (BENCHMARKS.md, \"Allreduce: overlapped combining in the RTL engine\")",
                ar.ranks,
                ar.dims[0],
                ar.dims[1],
                ar.dims[2],
                ar.bytes,
                ar.repetitions,
                ar.hardware_us,
                ar.software_us,
                ar.sw_overhead_us,
                ar.ni_tx_cycles,
                ar.ni_rx_cycles,
                ar.mem_latency_cycles,
                ar.step_cycles
            ),
            None,
        ),
        Err(why) => row(
            "allreduce latency reduction vs software",
            "%",
            Some(p.allreduce_reduction_pct),
            format!("up to {}", p.allreduce_reduction_pct),
            None,
            why.clone(),
            Some("golden allreduce run".into()),
        ),
    });
    rows.push(match resources {
        Ok(r) => row(
            "node resources (LUTs of a ZU9EG)",
            "% LUT",
            None,
            "not published".into(),
            Some(100.0 * r.lut as f64 / zu9eg::LUTS as f64),
            format!(
                "`exanet synth --block node` ({}, {}): {} LUT, {} FF, {:.1} BRAM36, {} DSP",
                r.top, r.yosys, r.lut, r.ff, r.bram36, r.dsp
            ),
            None,
        ),
        Err(why) => row(
            "node resources (LUTs of a ZU9EG)",
            "% LUT",
            None,
            "not published".into(),
            None,
            why.clone(),
            Some("node synthesis".into()),
        ),
    });
    rows
}

fn num(v: Option<f64>) -> String {
    match v {
        None => "—".into(),
        Some(x) if x.abs() >= 100.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.3}"),
    }
}

/// `reproduce.md`.
pub fn markdown(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# exanet reproduce{}\n\nThe ExaNeSt prototype's published figures (shared/design/REFERENCE.md: FORTH-ICS TR-488, arXiv 2307.09371) beside our RTL's.\n",
        if r.quick { " (--quick)" } else { "" }
    );
    s.push_str("| quantity | unit | prototype | exanet | ratio | how ours was obtained |\n|---|---|---|---|---|---|\n");
    for row in &r.rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            row.quantity,
            row.unit,
            row.prototype_text,
            num(row.exanet),
            row.ratio.map_or("—".into(), |x| format!("{x:.2}")),
            row.how.replace('|', "/")
        );
    }
    s.push_str("\n## Assumptions\n\n| key | value | meaning |\n|---|---|---|\n");
    for (k, v, m) in r.assumptions.lines() {
        let _ = writeln!(s, "| `{k}` | {v} | {m} |");
    }
    s.push_str("\n## Where the cycles go (64 B RDMA write, mean, PL cycles)\n\n| part | 1 hop | 5 hops |\n|---|---|---|\n");
    for ((name, a), (_, b)) in r
        .one_hop
        .breakdown
        .parts()
        .iter()
        .zip(r.five_hop.breakdown.parts())
    {
        let _ = writeln!(s, "| {name} | {a:.1} | {b:.1} |");
    }
    let _ = writeln!(
        s,
        "| **total (hardware)** | {:.1} | {:.1} |\n\nFrom head-flit timestamps at every router boundary (router hops: in → out of each router; link layer: out of one router → into the next, minus the PHY model's configured latency); NI RX: ejection → `rx_commit`; memory write: `rx_commit` → B; completion: B → readable.\n",
        r.one_hop.breakdown.total(),
        r.five_hop.breakdown.total()
    );
    s.push_str("## Goodput vs message size (1 hop)\n\n| bytes | cycles | Gb/s | % of link |\n|---|---|---|---|\n");
    for g in &r.goodput {
        let _ = writeln!(
            s,
            "| {} | {} | {:.3} | {:.1} |",
            g.bytes, g.cycles, g.gbps, g.pct_of_link
        );
    }
    if !r.notes.is_empty() {
        s.push_str("\n## Goals missed\n\n");
        for n in &r.notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

/// The goodput chart.
pub fn goodput_svg(r: &Report) -> String {
    let pts: Vec<(f64, f64)> = r.goodput.iter().map(|g| (g.bytes as f64, g.gbps)).collect();
    crate::plot::xy_chart(
        "RDMA write goodput vs message size, 1 hop",
        &format!(
            "RTL co-simulation of 2 node tops, isolated writes, doorbell → completion; link {} Gb/s",
            r.assumptions.link_gbps
        ),
        ("message size (bytes)", "goodput (Gb/s)"),
        true,
        &[("exanet RTL".to_string(), pts)],
        Some((r.assumptions.link_gbps, "link capacity")),
    )
}

/// The latency breakdown chart: cumulative cycles per part, both runs.
pub fn breakdown_svg(r: &Report) -> String {
    let curve = |b: &Breakdown, label: &str| {
        let mut acc = 0.0;
        let mut pts = vec![(1.0, 0.0)];
        for (i, (_, v)) in b.parts().iter().enumerate() {
            acc += v;
            pts.push(((i + 2) as f64, acc));
        }
        (label.to_string(), pts)
    };
    crate::plot::xy_chart(
        "64 B RDMA write: cumulative hardware latency by part",
        "x: 1 start, 2 NI TX, 3 router hops, 4 link layer, 5 PHY, 6 NI RX, 7 memory write, 8 completion",
        ("part (see subtitle)", "cumulative PL cycles"),
        false,
        &[
            curve(&r.one_hop.breakdown, "1 hop"),
            curve(&r.five_hop.breakdown, "5 hops"),
        ],
        None,
    )
}

fn html_esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `index.html`: the table, assumptions and plots (the sweep report's style).
pub fn index_html(r: &Report) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>exanet reproduce</title>\n<style>\n\
         body {{ font-family: sans-serif; margin: 2em; color: #222; }}\n\
         table {{ border-collapse: collapse; font-size: 13px; }}\n\
         th, td {{ border: 1px solid #ccc; padding: 3px 6px; text-align: right; }}\n\
         th {{ background: #f0f0f0; }}\n\
         td.l, th.l {{ text-align: left; }}\n\
         img {{ max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0; }}\n\
         </style>\n</head>\n<body>\n<h1>exanet reproduce{}</h1>\n\
         <p>The ExaNeSt prototype's published figures beside our RTL's. Data: \
         <a href=\"reproduce.json\">reproduce.json</a>, <a href=\"reproduce.md\">reproduce.md</a>.</p>\n",
        if r.quick { " (--quick)" } else { "" }
    );
    h.push_str("<table>\n<tr><th class=\"l\">quantity</th><th>unit</th><th>prototype</th><th>exanet</th><th>ratio</th><th class=\"l\">how ours was obtained</th></tr>\n");
    for row in &r.rows {
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            html_esc(&row.quantity),
            html_esc(&row.unit),
            html_esc(&row.prototype_text),
            num(row.exanet),
            row.ratio.map_or("—".into(), |x| format!("{x:.2}")),
            html_esc(&row.how)
        );
    }
    h.push_str("</table>\n<h2>Assumptions</h2>\n<table>\n<tr><th class=\"l\">key</th><th>value</th><th class=\"l\">meaning</th></tr>\n");
    for (k, v, m) in r.assumptions.lines() {
        let _ = writeln!(
            h,
            "<tr><td class=\"l\"><code>{}</code></td><td>{}</td><td class=\"l\">{}</td></tr>",
            html_esc(&k),
            html_esc(&v),
            html_esc(&m)
        );
    }
    h.push_str("</table>\n");
    for n in &r.notes {
        let _ = writeln!(h, "<p><strong>Goal missed:</strong> {}</p>", html_esc(n));
    }
    h.push_str("<p><img src=\"goodput.svg\" alt=\"goodput.svg\"></p>\n<p><img src=\"breakdown.svg\" alt=\"breakdown.svg\"></p>\n</body>\n</html>\n");
    h
}

/// The one-screen terminal summary.
pub fn summary(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<42} {:>10} {:>10} {:>7}",
        "quantity", "prototype", "exanet", "ratio"
    );
    for row in &r.rows {
        let _ = writeln!(
            s,
            "{:<42} {:>10} {:>10} {:>7}",
            format!("{} ({})", row.quantity, row.unit),
            row.prototype
                .map_or(row.prototype_text.clone(), |p| format!("{p:.4}")
                    .trim_end_matches('0')
                    .trim_end_matches('.')
                    .to_string()),
            num(row.exanet),
            row.ratio.map_or("—".into(), |x| format!("{x:.2}"))
        );
        if let Some(m) = &row.missing {
            let _ = writeln!(s, "    missing: {m}");
        }
    }
    let a = &r.assumptions;
    let _ = writeln!(
        s,
        "assumptions: clock.pl_mhz={} link.gbps={} link.latency_ns={} link.ber={} allreduce.sw_overhead_us={} reproduce.mem_latency_ns={}",
        a.pl_mhz, a.link_gbps, a.link_latency_ns, a.ber, a.sw_overhead_us, a.mem_latency_ns
    );
    for n in &r.notes {
        let _ = writeln!(s, "goal missed: {n}");
    }
    s
}

/// Every output file: (name, bytes).
pub fn outputs(r: &Report) -> Result<Vec<(String, Vec<u8>)>> {
    Ok(vec![
        ("reproduce.md".into(), markdown(r).into_bytes()),
        (
            "reproduce.json".into(),
            (serde_json::to_string_pretty(r)? + "\n").into_bytes(),
        ),
        ("goodput.svg".into(), goodput_svg(r).into_bytes()),
        ("breakdown.svg".into(), breakdown_svg(r).into_bytes()),
        ("index.html".into(), index_html(r).into_bytes()),
    ])
}

/// The files a run writes.
pub const FILES: [&str; 5] = [
    "reproduce.md",
    "reproduce.json",
    "goodput.svg",
    "breakdown.svg",
    "index.html",
];

/// Before the long runs: `dir` must be exanet's to write (the same check
/// the final write makes, so a refusal comes first, not after the runs).
pub fn check_out(dir: &Path, force: bool) -> Result<()> {
    let mut out = crate::outdir::OutDir::claim(dir, "exanet reproduce", force)?;
    let writes: Vec<(String, Vec<u8>)> =
        FILES.iter().map(|f| (f.to_string(), Vec::new())).collect();
    out.prepare(&writes, &[])?;
    if let Some(b) = out.backup_dir() {
        eprintln!("moved files in the way to {}", b.display());
    }
    Ok(())
}

/// Write the outputs into `dir` under the output-folder rules (refuses
/// foreign files unless `force`).
pub fn write(dir: &Path, r: &Report, force: bool) -> Result<Vec<std::path::PathBuf>> {
    let writes = outputs(r)?;
    let mut out = crate::outdir::OutDir::claim(dir, "exanet reproduce", force)?;
    out.write_all(&writes)?;
    if let Some(b) = out.backup_dir() {
        eprintln!("moved files in the way to {}", b.display());
    }
    let files = writes.iter().map(|(rel, _)| out.path(rel)).collect();
    out.commit()?;
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(hops: usize, cycles: u64) -> LatencyRun {
        let a = Assumptions::of(&crate::config::load(None, &[]).unwrap()).unwrap();
        let hw_ns = a.ns(cycles as f64);
        LatencyRun {
            point: format!("dims={}x1x1", 2 * hops),
            dest: hops,
            hops,
            samples: vec![cycles; 2],
            mean_cycles: cycles as f64,
            hw_ns,
            one_way_us: hw_ns / 1000.0 + a.sw_overhead_us,
            breakdown: Breakdown::default(),
            cycles: 1000,
            wall_s: 1.0,
        }
    }

    /// The rows from made-up runs: ratios, the per-hop rule, rows without
    /// a number naming what is missing, and the Markdown showing the
    /// JSON's numbers.
    #[test]
    fn rows_follow_the_runs_and_name_what_is_missing() {
        let a = Assumptions::of(&crate::config::load(None, &[]).unwrap()).unwrap();
        assert_eq!(
            (a.pl_ps, a.user_ps, a.phy_cycles, a.mem_cycles),
            (6400, 6400, 16, 16)
        );
        let (one, five) = (run(1, 80), run(5, 176));
        let per_hop = (five.one_way_us - one.one_way_us) / 4.0;
        let g = vec![GoodputPoint {
            bytes: 4096,
            cycles: 700,
            gbps: 7.3,
            pct_of_link: 73.0,
        }];
        let rows = table(
            &a,
            &one,
            &five,
            per_hop,
            &g,
            &Err("no golden run".into()),
            &Err("no yosys".into()),
        );
        assert_eq!(rows.len(), 6);
        assert!((rows[0].exanet.unwrap() - (0.512 + 0.47)).abs() < 1e-9);
        assert!((rows[0].ratio.unwrap() - rows[0].exanet.unwrap() / 1.3).abs() < 1e-12);
        assert!((rows[2].exanet.unwrap() - 96.0 * 6.4 / 4000.0).abs() < 1e-9);
        assert!((rows[2].prototype.unwrap() - 0.3125).abs() < 1e-12);
        assert_eq!(rows[3].exanet, Some(73.0));
        for r in &rows[4..] {
            assert!(
                r.exanet.is_none() && r.ratio.is_none() && r.missing.is_some(),
                "{r:?}"
            );
        }
        assert!(rows[5].how.contains("no yosys"));
        let rep = Report {
            quick: true,
            assumptions: a,
            rows,
            one_hop: one,
            five_hop: five,
            per_hop_us: per_hop,
            goodput: g,
            allreduce: Err("no golden run".into()),
            notes: vec![],
        };
        let md = markdown(&rep);
        for r in &rep.rows {
            let line = md
                .lines()
                .find(|l| l.starts_with(&format!("| {} |", r.quantity)))
                .unwrap();
            assert!(line.contains(&format!("| {} |", num(r.exanet))), "{line}");
        }
        let svg = goodput_svg(&rep);
        assert!(svg.contains("<polyline") && svg.contains("link capacity"));
        assert!(index_html(&rep).contains("goodput.svg"));
    }

    #[test]
    fn allreduce_row_is_the_golden_whole_machine_collective() {
        let l = crate::config::load(None, &[]).unwrap();
        let ar = allreduce_run(&l).unwrap();
        assert_eq!(
            (ar.ranks, ar.dims, ar.bytes, ar.steps),
            (128, [8, 4, 4], 8, 7)
        );
        assert!(ar.hardware_us > 0.0 && ar.software_us > 0.0, "{ar:?}");
        let pct = 100.0 * (1.0 - ar.hardware_us / ar.software_us);
        assert!((ar.reduction_pct - pct).abs() < 1e-9, "{ar:?}");
        // Software pays its overhead (74 cycles) at each of the 7 steps and
        // reduces its element (1 cycle); the engine pays the overhead once,
        // its sequencer (4 cycles) before each step and at the end, and
        // combines one 8-byte chunk per step (both reads in flight, the
        // ALU, the write and its B: 2 (15 + 1) + 4 + 6 + 4 = 46 cycles at
        // the default 15-cycle memory, `ar_copy.v`'s overlapped stages);
        // both pay the same network path per step.
        assert_eq!((ar.mem_latency_cycles, ar.step_cycles), (15, 4));
        let want = 6.0 * 74.0 + 7.0 - 8.0 * 4.0 - 7.0 * 46.0;
        let got = (ar.software_us - ar.hardware_us) * 156.25;
        assert!(
            (got - want).abs() <= 8.0,
            "{got} cycles, model {want}: {ar:?}"
        );
        assert!(ar.reduction_pct < 100.0 * (1.0 - 1.0 / 7.0), "{ar:?}");
    }

    #[test]
    fn bad_assumptions_name_the_key() {
        let l = crate::config::load(None, &["clock.pl_mhz=5.5".to_string()]).unwrap();
        let e = Assumptions::of(&l).unwrap_err().to_string();
        assert!(e.contains("clock.pl_mhz") && e.contains("5.5"), "{e}");
    }
}
