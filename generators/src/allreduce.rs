//! `exanet simulate` with `traffic.pattern = "allreduce"`: the `[allreduce]`
//! workload over the simulated network (golden NIs with the allreduce
//! engine as endpoints, the same golden routers and framed links as any
//! other run; see `exanet_sim::network::collective`), the hardware engine
//! beside a software allreduce from RDMA writes, and the report.
//!
//! Latency of one collective: cycles from the common start (every rank
//! posts at the same cycle, after its software overhead) to the last rank's
//! completion; min / mean / max over `allreduce.repetitions`, in cycles and
//! µs at `clock.pl_mhz`. Throughput of a collective: vector bytes / mean
//! latency. Reduction: `1 - hardware mean / software mean`, in %.

use crate::config::Config;
use crate::params::{rule, Params};
use anyhow::Result;
use exanet_sim::allreduce::reduce_alu::{ReduceDtype, ReduceOp};
use exanet_sim::allreduce::schedule::CommBox;
use exanet_sim::network::collective::{run_allreduce, ArMode, ArParams, MAX_VECTOR_BYTES};
use exanet_sim::network::NetworkParams;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The checked `[allreduce]` keys.
#[derive(Clone, Debug, PartialEq)]
pub struct ArSpec {
    /// Run the hardware engine / the software baseline.
    pub hardware: bool,
    pub software: bool,
    /// The workload on the configured box (mode Hardware; the runner sets it per run).
    pub params: ArParams,
    /// The boxes to run: the ladder of 2, 4, ... ranks (`allreduce.scaling`), then the box.
    pub boxes: Vec<CommBox>,
    /// Vector bytes.
    pub bytes: usize,
}

/// Check the `[allreduce]` keys (errors name the key).
pub fn spec_of(c: &Config, params: &Params) -> Result<ArSpec> {
    let a = &c.allreduce;
    let (hardware, software) = match a.mode.as_str() {
        "hardware" => (true, false),
        "software" => (false, true),
        "both" => (true, true),
        other => {
            return Err(rule(
                "allreduce.mode",
                format!("{other:?}"),
                "must be \"hardware\", \"software\" or \"both\"",
            ))
        }
    };
    let op = ReduceOp::ALL
        .into_iter()
        .find(|o| o.name() == a.op)
        .ok_or_else(|| {
            rule(
                "allreduce.op",
                format!("{:?}", a.op),
                "must be one of sum, min, max, band, bor, bxor",
            )
        })?;
    let dtype = ReduceDtype::ALL
        .into_iter()
        .find(|d| d.name() == a.dtype)
        .ok_or_else(|| {
            rule(
                "allreduce.dtype",
                format!("{:?}", a.dtype),
                "must be one of i32, u32, i64, u64, f32, f64",
            )
        })?;
    if !dtype.supports(op) {
        return Err(rule(
            "allreduce.op",
            format!("{:?}", a.op),
            format!("is not defined on allreduce.dtype = {:?}", a.dtype),
        ));
    }
    let esize = dtype.bits() / 8;
    let max = MAX_VECTOR_BYTES / esize;
    if a.count == 0 || a.count as usize > max {
        return Err(rule(
            "allreduce.count",
            a.count,
            format!(
                "must be 1..={max} elements ({MAX_VECTOR_BYTES} bytes of {})",
                a.dtype
            ),
        ));
    }
    let topo = &params.router.topology;
    let dims = topo.dims;
    let three = |key: &str, v: &[u32]| -> Result<[usize; 3]> {
        if v.len() == 3 {
            Ok([v[0] as usize, v[1] as usize, v[2] as usize])
        } else {
            Err(rule(
                key,
                format!("{v:?}"),
                "must be three numbers (x, y, z)",
            ))
        }
    };
    let origin = three("allreduce.origin", &a.origin)?;
    let mut extent = three("allreduce.extent", &a.extent)?;
    for d in 0..3 {
        if origin[d] >= dims[d] {
            return Err(rule(
                "allreduce.origin",
                format!("{:?}", a.origin),
                format!("each must be below topology.dims = {dims:?}"),
            ));
        }
        if extent[d] > dims[d] {
            return Err(rule(
                "allreduce.extent",
                format!("{:?}", a.extent),
                format!("each must be 0 (whole dimension) ..= topology.dims = {dims:?}"),
            ));
        }
        if extent[d] == 0 {
            extent[d] = dims[d];
        }
    }
    let comm = CommBox { origin, extent };
    comm.validate(dims).map_err(|e| {
        rule(
            "allreduce.extent",
            format!("{:?}", a.extent),
            format!("{e:#}"),
        )
    })?;
    if a.repetitions == 0 {
        return Err(rule("allreduce.repetitions", 0, "must be >= 1"));
    }
    for (key, v) in [
        ("allreduce.sw_overhead_us", a.sw_overhead_us),
        (
            "allreduce.sw_reduce_ns_per_element",
            a.sw_reduce_ns_per_element,
        ),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(rule(key, v, "must be a number >= 0"));
        }
    }
    if !(0.0..=1.0).contains(&a.background_rate) {
        return Err(rule(
            "allreduce.background_rate",
            a.background_rate,
            "must be 0..=1 flits/terminal/cycle",
        ));
    }
    if a.max_cycles == 0 {
        return Err(rule("allreduce.max_cycles", 0, "must be >= 1"));
    }
    if topo.local_ports != 1 {
        return Err(rule(
            "topology.local_ports",
            topo.local_ports,
            "the allreduce workload needs 1 (one NI per router)",
        ));
    }
    if params.packet.flit_bits != 128 {
        return Err(rule(
            "packet.flit_bits",
            params.packet.flit_bits,
            "the allreduce workload needs 128 (the NI's packet word)",
        ));
    }
    if params.router.classes != 2 {
        return Err(rule(
            "router.classes",
            params.router.classes,
            "the allreduce workload needs 2 (the NI's request and response classes)",
        ));
    }
    if !exanet_sim::ni::params::MAX_PAYLOAD_CHOICES
        .contains(&(params.packet.max_payload_bytes as usize))
    {
        return Err(rule(
            "packet.max_payload_bytes",
            params.packet.max_payload_bytes,
            format!(
                "the allreduce workload's NI takes one of {:?}",
                exanet_sim::ni::params::MAX_PAYLOAD_CHOICES
            ),
        ));
    }
    let mhz = params.clock.pl_mhz;
    let ns = params.clock.period_ns;
    let mut boxes = Vec::new();
    if a.scaling {
        let mut e = [1usize; 3];
        for d in 0..3 {
            while e[d] * 2 <= extent[d] {
                e[d] *= 2;
                boxes.push(CommBox { origin, extent: e });
            }
            e[d] = extent[d];
        }
    }
    if boxes.last() != Some(&comm) {
        boxes.push(comm);
    }
    Ok(ArSpec {
        hardware,
        software,
        params: ArParams {
            mode: ArMode::Hardware,
            op,
            dtype,
            count: a.count as usize,
            comm,
            repetitions: a.repetitions as usize,
            threshold: a.threshold as usize,
            ni_tx_cycles: u64::from(a.ni_tx_cycles),
            ni_rx_cycles: u64::from(a.ni_rx_cycles),
            mem_cycles: u64::from(a.mem_latency_cycles),
            step_cycles: u64::from(a.step_cycles),
            tx_ahead: c.ni.tx_ahead as usize,
            host_cycles: (a.sw_overhead_us * mhz - 1e-9).ceil().max(0.0) as u64,
            reduce_cycles_per_element: a.sw_reduce_ns_per_element / ns,
            max_cycles: a.max_cycles,
            seed: c.sim.seed,
        },
        boxes,
        bytes: a.count as usize * esize,
    })
}

/// Latency over the repetitions of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ArLatency {
    pub min_cycles: u64,
    pub mean_cycles: f64,
    pub max_cycles: u64,
    pub min_us: f64,
    pub mean_us: f64,
    pub max_us: f64,
    /// Mean cycles to the first rank done.
    pub first_done_mean_cycles: f64,
    /// Vector bytes / mean latency, Gb/s.
    pub throughput_gbps: f64,
    /// Per repetition, cycles.
    pub per_repetition: Vec<u64>,
    /// NI packets carried (all repetitions).
    pub packets: u64,
    /// Wall-clock seconds and router ticks executed (not deterministic / speed).
    pub wall_s: f64,
    pub router_ticks: u64,
    pub cycles: u64,
}

/// One box: hardware and software side by side.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ArRow {
    pub ranks: usize,
    pub origin: [usize; 3],
    pub extent: [usize; 3],
    pub hardware: Option<ArLatency>,
    pub software: Option<ArLatency>,
    /// 1 - hardware mean / software mean, %.
    pub reduction_pct: Option<f64>,
}

/// The allreduce workload's result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ArResult {
    pub name: String,
    pub dims: [usize; 3],
    pub op: String,
    pub dtype: String,
    pub count: usize,
    pub bytes: usize,
    pub threshold: usize,
    pub repetitions: usize,
    pub clock_mhz: f64,
    pub ni_tx_cycles: u64,
    pub ni_rx_cycles: u64,
    /// The engine's combining: memory latency and sequencer cycles per step.
    pub mem_latency_cycles: u64,
    pub step_cycles: u64,
    pub tx_ahead: usize,
    pub sw_overhead_cycles: u64,
    pub sw_reduce_cycles_per_element: f64,
    pub background_rate: f64,
    pub link_model: String,
    pub rows: Vec<ArRow>,
    /// Ranks whose results were compared with the reference, and what differed.
    pub checked: usize,
    pub errors: Vec<String>,
    /// Every result bit-exact, no failed collective, background traffic clean.
    pub clean: bool,
}

/// Run every box of `spec` in hardware and/or software on the network `net`.
pub fn run(c: &Config, params: &Params, net: &NetworkParams, spec: &ArSpec) -> Result<ArResult> {
    let mhz = params.clock.pl_mhz;
    let p = &spec.params;
    let mut out = ArResult {
        name: c.name.clone(),
        dims: params.router.topology.dims,
        op: p.op.name().into(),
        dtype: p.dtype.name().into(),
        count: p.count,
        bytes: spec.bytes,
        threshold: p.threshold,
        repetitions: p.repetitions,
        clock_mhz: mhz,
        ni_tx_cycles: p.ni_tx_cycles,
        ni_rx_cycles: p.ni_rx_cycles,
        mem_latency_cycles: p.mem_cycles,
        step_cycles: p.step_cycles,
        tx_ahead: p.tx_ahead,
        sw_overhead_cycles: p.host_cycles,
        sw_reduce_cycles_per_element: p.reduce_cycles_per_element,
        background_rate: c.allreduce.background_rate,
        link_model: c.link.model.clone(),
        clean: true,
        ..Default::default()
    };
    for b in &spec.boxes {
        let mut row = ArRow {
            ranks: b.ranks(),
            origin: b.origin,
            extent: b.extent,
            ..Default::default()
        };
        for (on, mode) in [
            (spec.hardware, ArMode::Hardware),
            (spec.software, ArMode::Software),
        ] {
            if !on {
                continue;
            }
            let ap = ArParams {
                mode,
                comm: *b,
                ..p.clone()
            };
            let r = run_allreduce(net, &ap)?;
            out.checked += r.checked;
            if !r.clean() {
                out.clean = false;
                for e in r.errors.iter().chain(&r.background_errors) {
                    if out.errors.len() < 20 {
                        out.errors
                            .push(format!("{mode:?}, {} ranks: {e}", b.ranks()));
                    }
                }
            }
            let n = r.latency.len() as f64;
            let mean = r.latency.iter().sum::<u64>() as f64 / n;
            let min = *r.latency.iter().min().expect("repetitions >= 1");
            let max = *r.latency.iter().max().expect("repetitions >= 1");
            let lat = ArLatency {
                min_cycles: min,
                mean_cycles: mean,
                max_cycles: max,
                min_us: min as f64 / mhz,
                mean_us: mean / mhz,
                max_us: max as f64 / mhz,
                first_done_mean_cycles: r.first_done.iter().sum::<u64>() as f64 / n,
                throughput_gbps: spec.bytes as f64 * 8.0 / (mean / mhz * 1000.0),
                per_repetition: r.latency.clone(),
                packets: r.packets,
                wall_s: r.wall_s,
                router_ticks: r.router_ticks,
                cycles: r.cycles,
            };
            match mode {
                ArMode::Hardware => row.hardware = Some(lat),
                ArMode::Software => row.software = Some(lat),
            }
        }
        if let (Some(h), Some(s)) = (&row.hardware, &row.software) {
            row.reduction_pct = Some(100.0 * (1.0 - h.mean_cycles / s.mean_cycles));
        }
        out.rows.push(row);
    }
    Ok(out)
}

/// The text report.
pub fn text(r: &ArResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "allreduce {} {} x {} ({} B) on {}, {} repetitions, threshold {} B, {} links, clock {} MHz",
        r.op,
        r.dtype,
        r.count,
        r.bytes,
        r.dims.map(|d| d.to_string()).join("x"),
        r.repetitions,
        r.threshold,
        r.link_model,
        r.clock_mhz
    );
    let _ = writeln!(
        s,
        "NI timing assumed: {} cycles emission -> injection, {} cycles arrival -> NI, {} packets ahead; \
         engine: {}-cycle memory, {} cycles per step; \
         software: {} cycles ({:.2} us) per message, {:.3} cycles per element reduced{}",
        r.ni_tx_cycles,
        r.ni_rx_cycles,
        r.tx_ahead,
        r.mem_latency_cycles,
        r.step_cycles,
        r.sw_overhead_cycles,
        r.sw_overhead_cycles as f64 / r.clock_mhz,
        r.sw_reduce_cycles_per_element,
        if r.background_rate > 0.0 {
            format!("; background {} flits/terminal/cycle", r.background_rate)
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        s,
        "{:>6} {:>9} | {:>26} {:>9} {:>8} | {:>26} {:>9} | {:>9}",
        "ranks",
        "box",
        "hardware min/mean/max cyc",
        "mean us",
        "Gb/s",
        "software min/mean/max cyc",
        "mean us",
        "reduction"
    );
    let cell = |l: &Option<ArLatency>| match l {
        Some(l) => (
            format!("{}/{:.0}/{}", l.min_cycles, l.mean_cycles, l.max_cycles),
            format!("{:.3}", l.mean_us),
            format!("{:.3}", l.throughput_gbps),
        ),
        None => ("-".into(), "-".into(), "-".into()),
    };
    for row in &r.rows {
        let (hc, hu, hg) = cell(&row.hardware);
        let (sc, su, _) = cell(&row.software);
        let red = row
            .reduction_pct
            .map_or("-".to_string(), |p| format!("{p:.1} %"));
        let _ = writeln!(
            s,
            "{:>6} {:>9} | {hc:>26} {hu:>9} {hg:>8} | {sc:>26} {su:>9} | {red:>9}",
            row.ranks,
            row.extent.map(|d| d.to_string()).join("x"),
        );
    }
    let (wall, ticks): (f64, u64) = r
        .rows
        .iter()
        .flat_map(|x| x.hardware.iter().chain(&x.software))
        .fold((0.0, 0), |(w, t), l| (w + l.wall_s, t + l.router_ticks));
    let _ = writeln!(
        s,
        "checked {} rank results bit for bit against the reference: {}; {:.2} s wall, {} router ticks",
        r.checked,
        if r.clean { "all equal" } else { "ERRORS" },
        wall,
        ticks
    );
    for e in &r.errors {
        let _ = writeln!(s, "  error: {e}");
    }
    s
}
