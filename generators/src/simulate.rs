//! `exanet simulate`: a whole torus of golden router models
//! ([`exanet_sim::network`]) driven by the config's `[traffic]` and `[sim]`
//! sections, and the report an architect reads.
//!
//! The traffic keys are ordinary config keys, so `-P traffic.rate=0.3` and a
//! sweep over `traffic.pattern` use the same syntax as any hardware key.
//! Their rules live in [`setup`] and fail with a [`exanet_hdl::limits::RuleError`] naming the key,
//! which [`crate::config::Loaded::elaborate_sim`] locates in the file or `-P`
//! flag that set it.
//!
//! Units: load in flits per terminal (NI port) per cycle, and in Gb/s per
//! terminal at the configured clock and flit width (`flits x flit_bits x
//! pl_mhz / 1000`); latency in cycles and in ns at the configured clock.
//!
//! Zero-load latency (see `exanet_sim::network`): a packet of F flits over H
//! router-to-router hops takes `R (H + 1) + L H + (F - 1)` cycles, R = 2
//! cycles per router (3 with 64-bit flits), L = `link.latency_ns` in cycles.

use crate::config::Config;
use crate::config::Origin;
use crate::error::usage;
use crate::params::{rule, Params, Target};
use anyhow::{Context, Result};
use exanet_sim::network::{ClassReport, Network, NetworkParams, Workload};
use exanet_sim::router::VcSelect;
use exanet_sim::traffic::{parse_trace, PacketSizes, Pattern, TraceEvent};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The destination patterns `traffic.pattern` accepts.
pub const PATTERNS: [&str; 11] = [
    "uniform",
    "transpose",
    "bit_complement",
    "bit_reverse",
    "tornado",
    "neighbour",
    "hotspot",
    "trace",
    "allreduce",
    "jobs",
    "qos",
];

/// A run is *saturated* when it accepts less than this share of what was offered
/// (or leaves tagged packets undelivered, or deadlocks).
pub const SATURATION_ACCEPTED_SHARE: f64 = 0.95;

/// ... or refuses more than this share of its packets at full source queues.
pub const SATURATION_REFUSED_SHARE: f64 = 0.01;

/// The saturation rule in words, as reports print it.
pub const SATURATION_RULE: &str = "below saturation = accepted >= 95 % of offered, <= 1 % of \
     packets refused at full source queues, every tagged packet delivered, no deadlock";

/// Everything one simulation needs.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The effective config.
    pub config: Config,
    /// Its elaboration (for simulation: dimensions up to 32).
    pub params: Params,
    /// The simulator's parameters.
    pub net: NetworkParams,
    /// The trace file read, if any (resolved path).
    pub trace: Option<PathBuf>,
    /// The allreduce workload (`traffic.pattern = "allreduce"`); `net`'s
    /// synthetic workload is then its background traffic.
    pub allreduce: Option<crate::allreduce::ArSpec>,
    /// The job-batch study (`traffic.pattern = "jobs"`); `net` is then
    /// unused by it.
    pub jobs: Option<crate::jobs::JobsSpec>,
}

impl crate::config::Loaded {
    /// Elaborate the config for the network simulator (dimensions up to 32)
    /// and check its `[traffic]` and `[sim]` keys; errors located as in
    /// [`crate::config::Loaded::elaborate`]. A relative `traffic.trace` is resolved against
    /// the directory of the config file that set it.
    pub fn elaborate_sim(&self) -> Result<Setup> {
        let params = crate::params::elaborate_for(&self.config, Target::Simulation)
            .map_err(|e| self.locate(e))?;
        // Packet sizes nobody set follow the largest payload: a config that
        // lowers packet.max_payload_bytes need not lower them too.
        let mut config = self.config.clone();
        let max = config.packet.max_payload_bytes;
        let t = &mut config.traffic;
        for (key, v) in [
            ("traffic.bytes", &mut t.bytes),
            ("traffic.small_bytes", &mut t.small_bytes),
            ("traffic.large_bytes", &mut t.large_bytes),
        ] {
            if *v > max && self.origin(key) == Origin::Default {
                *v = max;
            }
        }
        let q = &mut config.qos;
        for (key, v) in [
            ("qos.storage_bytes", &mut q.storage_bytes),
            ("qos.mpi_bytes", &mut q.mpi_bytes),
        ] {
            if *v > max && self.origin(key) == Origin::Default {
                *v = max;
            }
        }
        let dir_of = |key: &str| match self.origin(key) {
            Origin::File { path, .. } => Path::new(&path).parent().map(Path::to_path_buf),
            _ => None,
        };
        let dir = dir_of("traffic.trace");
        let mut s = setup(&config, params, dir.as_deref()).map_err(|e| self.locate(e))?;
        if config.traffic.pattern == "jobs" {
            let spec = crate::jobs::spec_of(
                &config,
                &s.params,
                dir_of("jobs.profile_file").as_deref(),
                dir_of("jobs.node_mtbf_file").as_deref(),
            )
            .map_err(|e| self.locate(e))?;
            s.jobs = Some(spec);
        }
        Ok(s)
    }
}

/// Check the `[traffic]` and `[sim]` keys of `c` and build the simulator's
/// parameters; `base_dir` resolves a relative `traffic.trace`.
///
/// Phases: the rate and class mix; the packet sizes; the destination
/// pattern (or the trace file it names); the workload; the timing keys.
pub fn setup(c: &Config, params: Params, base_dir: Option<&Path>) -> Result<Setup> {
    let t = &c.traffic;
    let terminals = params.router.topology.num_nodes() * params.router.topology.local_ports;
    fraction("traffic.rate", t.rate)?;
    fraction("traffic.class1_fraction", t.class1_fraction)?;
    if t.class1_fraction > 0.0 && params.router.classes < 2 {
        return Err(rule(
            "traffic.class1_fraction",
            t.class1_fraction,
            "needs router.classes = 2",
        ));
    }
    let sizes = sizes_of(t, params.packet.max_payload_bytes)?;
    // The workload, the trace file it came from, and the allreduce spec.
    let (workload, trace, allreduce) = match t.pattern.as_str() {
        "allreduce" => (
            Workload::Synthetic {
                pattern: Pattern::Uniform,
                rate: c.allreduce.background_rate,
                sizes,
                class1_fraction: 0.0,
            },
            None,
            Some(crate::allreduce::spec_of(c, &params)?),
        ),
        "qos" => (qos_of(c, &params)?, None, None),
        // The [jobs] keys are checked by `elaborate_sim` (they name files
        // relative to the config); the network parameters stay checked.
        "jobs" => (
            Workload::Synthetic {
                pattern: Pattern::Uniform,
                rate: 0.0,
                sizes,
                class1_fraction: 0.0,
            },
            None,
            None,
        ),
        _ => {
            let (pattern, trace) = pattern_of(t, &params, base_dir)?;
            let workload = match &trace {
                Some(path) => Workload::Trace {
                    events: trace_of(t, path, terminals, params.clock.period_ns)?,
                },
                None => Workload::Synthetic {
                    pattern,
                    rate: t.rate,
                    sizes,
                    class1_fraction: t.class1_fraction,
                },
            };
            (workload, trace, None)
        }
    };
    let net = network_of(c, &params, workload)?;
    Ok(Setup {
        config: c.clone(),
        params,
        net,
        trace,
        allreduce,
        jobs: None,
    })
}

/// The `[qos]` keys as the QoS-mix workload (errors name the key).
fn qos_of(c: &Config, params: &Params) -> Result<Workload> {
    let q = &c.qos;
    if params.router.classes < 2 {
        return Err(rule(
            "traffic.pattern",
            "\"qos\"",
            "needs router.classes = 2",
        ));
    }
    fraction("qos.storage_rate", q.storage_rate)?;
    fraction("qos.mpi_rate", q.mpi_rate)?;
    let max = params.packet.max_payload_bytes;
    for (key, b) in [
        ("qos.storage_bytes", q.storage_bytes),
        ("qos.mpi_bytes", q.mpi_bytes),
    ] {
        if b > max {
            return Err(rule(
                key,
                b,
                format!("must be 0..={max} (packet.max_payload_bytes)"),
            ));
        }
    }
    if q.storage_class > 1 {
        return Err(rule("qos.storage_class", q.storage_class, "must be 0 or 1"));
    }
    let n = params.router.topology.num_nodes();
    let storage_pattern = if q.storage_nodes.is_empty() {
        Pattern::Uniform
    } else {
        if q.storage_nodes.iter().any(|&x| x as usize >= n) {
            return Err(rule(
                "qos.storage_nodes",
                format!("{:?}", q.storage_nodes),
                format!("must be node indices below {n}"),
            ));
        }
        Pattern::Hotspot {
            fraction: 1.0,
            nodes: q.storage_nodes.iter().map(|&x| x as usize).collect(),
        }
    };
    let storage_class = q.storage_class as usize;
    Ok(Workload::QosMix {
        storage: exanet_sim::network::Stream {
            pattern: storage_pattern,
            rate: q.storage_rate,
            bytes: q.storage_bytes as usize,
            class: storage_class,
        },
        mpi: exanet_sim::network::Stream {
            pattern: Pattern::Uniform,
            rate: q.mpi_rate,
            bytes: q.mpi_bytes as usize,
            class: 1 - storage_class,
        },
    })
}

/// `key` holds a share: 0..=1.
fn fraction(key: &str, v: f64) -> Result<()> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(rule(key, v, "must be 0..=1"))
    }
}

/// `traffic.sizes` and the payload sizes it uses, each at most
/// `packet.max_payload_bytes`.
fn sizes_of(t: &crate::config::Traffic, max_payload: u32) -> Result<PacketSizes> {
    let payload = |key: &str, b: u32| -> Result<usize> {
        if b <= max_payload {
            Ok(b as usize)
        } else {
            Err(rule(
                key,
                b,
                format!("must be 0..={max_payload} (packet.max_payload_bytes)"),
            ))
        }
    };
    match t.sizes.as_str() {
        "fixed" => Ok(PacketSizes::Fixed {
            bytes: payload("traffic.bytes", t.bytes)?,
        }),
        "bimodal" => {
            fraction("traffic.large_fraction", t.large_fraction)?;
            Ok(PacketSizes::Bimodal {
                small: payload("traffic.small_bytes", t.small_bytes)?,
                large: payload("traffic.large_bytes", t.large_bytes)?,
                large_fraction: t.large_fraction,
            })
        }
        other => Err(rule(
            "traffic.sizes",
            format!("{other:?}"),
            "must be \"fixed\" or \"bimodal\"",
        )),
    }
}

/// `traffic.pattern` with the keys it uses; for `"trace"`, the trace file
/// (resolved against `base_dir` when relative) instead of a pattern.
fn pattern_of(
    t: &crate::config::Traffic,
    params: &Params,
    base_dir: Option<&Path>,
) -> Result<(Pattern, Option<PathBuf>)> {
    let topo = &params.router.topology;
    let terminals = topo.num_nodes() * topo.local_ports;
    let pow2 = |name: &str, pattern: Pattern| -> Result<(Pattern, Option<PathBuf>)> {
        if terminals.is_power_of_two() {
            Ok((pattern, None))
        } else {
            Err(rule(
                "traffic.pattern",
                format!("{name:?}"),
                format!("needs a power-of-two number of terminals; this network has {terminals}"),
            ))
        }
    };
    match t.pattern.as_str() {
        "uniform" => Ok((Pattern::Uniform, None)),
        "transpose" => pow2("transpose", Pattern::Transpose),
        "bit_complement" => pow2("bit_complement", Pattern::BitComplement),
        "bit_reverse" => pow2("bit_reverse", Pattern::BitReverse),
        "tornado" => Ok((Pattern::Tornado, None)),
        "neighbour" => Ok((Pattern::Neighbour, None)),
        "allreduce" => allreduce_is_no_pattern(),
        "hotspot" => {
            fraction("traffic.hotspot_fraction", t.hotspot_fraction)?;
            let n = topo.num_nodes();
            if t.hotspot_nodes.is_empty() || t.hotspot_nodes.iter().any(|&x| x as usize >= n) {
                return Err(rule(
                    "traffic.hotspot_nodes",
                    format!("{:?}", t.hotspot_nodes),
                    format!("must be a non-empty list of node indices below {n}"),
                ));
            }
            let pattern = Pattern::Hotspot {
                fraction: t.hotspot_fraction,
                nodes: t.hotspot_nodes.iter().map(|&x| x as usize).collect(),
            };
            Ok((pattern, None))
        }
        "trace" => {
            if t.trace.is_empty() {
                return Err(rule(
                    "traffic.trace",
                    "\"\"",
                    "pattern = \"trace\" needs a trace CSV file",
                ));
            }
            let path = match base_dir {
                Some(d) if Path::new(&t.trace).is_relative() => d.join(&t.trace),
                _ => PathBuf::from(&t.trace),
            };
            Ok((Pattern::Uniform, Some(path)))
        }
        other => Err(rule(
            "traffic.pattern",
            format!("{other:?}"),
            format!("must be one of {}", PATTERNS.join(", ")),
        )),
    }
}

/// `setup` handles `"allreduce"` before the destination patterns.
fn allreduce_is_no_pattern() -> Result<(Pattern, Option<PathBuf>)> {
    Err(rule(
        "traffic.pattern",
        "\"allreduce\"",
        "selects the [allreduce] workload, not a destination pattern",
    ))
}

/// The events of the trace file at `path`, in `traffic.trace_unit`.
fn trace_of(
    t: &crate::config::Traffic,
    path: &Path,
    terminals: usize,
    ns_per_cycle: f64,
) -> Result<Vec<TraceEvent>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        rule(
            "traffic.trace",
            format!("{:?}", t.trace),
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    let shown = path.display().to_string();
    match t.trace_unit.as_str() {
        "cycles" => parse_trace(&text, terminals, &shown),
        "ns" => parse_trace_ns(&text, terminals, &shown, ns_per_cycle),
        other => {
            return Err(rule(
                "traffic.trace_unit",
                format!("{other:?}"),
                "must be \"cycles\" or \"ns\"",
            ))
        }
    }
    .map_err(|e| rule("traffic.trace", format!("{:?}", t.trace), format!("{e:#}")))
}

/// The simulator's parameters: `[sim]`'s windows and watchdog, the link
/// latency in cycles, the workload.
fn network_of(c: &Config, params: &Params, workload: Workload) -> Result<NetworkParams> {
    let s = &c.sim;
    if s.measure == 0 {
        return Err(rule("sim.measure", 0, "must be >= 1 cycle"));
    }
    let link_latency = params.link.latency_cycles as usize;
    if link_latency > exanet_sim::network::params::MAX_LINK_LATENCY {
        return Err(rule(
            "link.latency_ns",
            params.link.latency_ns,
            format!(
                "is {link_latency} cycles; the simulator allows up to {}",
                exanet_sim::network::params::MAX_LINK_LATENCY
            ),
        ));
    }
    if s.watchdog > 0 && s.watchdog <= link_latency as u64 + 2 {
        return Err(rule(
            "sim.watchdog",
            s.watchdog,
            format!("must exceed the link latency ({link_latency} cycles) + 2, or be 0 (off)"),
        ));
    }
    // Each PHY direction's error pattern is derived from the run's seed.
    let links =
        crate::params::framed_links(c, &params.router, &params.link, s.seed, &mut Vec::new())?;
    let net = NetworkParams {
        router: params.router.clone(),
        link_latency,
        links,
        workload,
        warmup: s.warmup,
        window: s.measure,
        drain_max: s.drain,
        watchdog: s.watchdog,
        // A free VC choice reorders flows by design; delivery stays checked.
        order_check: params.router.vc_select == VcSelect::Flow,
        source_queue_limit: s.source_queue as usize,
        // Elaboration already ran the same channel-dependency check.
        check_deadlock: false,
        seed: s.seed,
    };
    net.validate()
        .map_err(|e| crate::error::usage(format!("simulator rejects this config: {e:#}")))?;
    Ok(net)
}

/// A trace whose first column is time in ns: converted to cycles
/// (`floor(ns / period)`), then parsed as a cycle trace.
fn parse_trace_ns(
    text: &str,
    terminals: usize,
    what: &str,
    ns_per_cycle: f64,
) -> Result<Vec<TraceEvent>> {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        let Some((time, rest)) = trimmed.split_once(',') else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        if trimmed.starts_with('#') {
            out.push('\n');
            continue;
        }
        match time.trim().parse::<f64>() {
            Ok(ns) if ns >= 0.0 && ns.is_finite() => {
                let _ = writeln!(out, "{},{rest}", (ns / ns_per_cycle + 1e-9).floor() as u64);
            }
            Ok(ns) => anyhow::bail!("{what}:{}: time {ns} ns must be >= 0", i + 1),
            // a header line (parse_trace skips it) or a malformed line (it reports it)
            Err(_) => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    parse_trace(&out, terminals, what)
}

/// A latency summary in cycles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cycles {
    pub avg: f64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

/// The same summary in ns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Nanos {
    pub avg: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

/// Figures of one class (or all classes) over the measurement window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// `None` for all classes together.
    pub class: Option<usize>,
    /// Offered load: flits of packets created in the window per terminal per cycle.
    pub offered_flits: f64,
    /// Accepted load: flits received in the window per terminal per cycle.
    pub accepted_flits: f64,
    /// Offered load in Gb/s per terminal at the configured clock and flit width.
    pub offered_gbps: f64,
    /// Accepted load in Gb/s per terminal.
    pub accepted_gbps: f64,
    /// Tagged packets delivered.
    pub packets: u64,
    /// Packets refused at a full source queue in the window.
    pub refused: u64,
    /// Packet latency, creation to tail received (includes source queueing).
    pub latency_cycles: Cycles,
    /// The same in ns.
    pub latency_ns: Nanos,
    /// Network latency, head injected to tail received, cycles.
    pub network_latency_cycles: Cycles,
    /// Average router-to-router hops.
    pub hops: f64,
}

/// The result of one simulation (deterministic for a config and seed, except
/// the two timing fields).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimResult {
    pub name: String,
    pub dims: [u32; 3],
    pub wrap: [bool; 3],
    pub terminals: usize,
    /// `traffic.pattern` (a trace: `trace`).
    pub pattern: String,
    /// Configured offered load, flits/terminal/cycle (synthetic traffic).
    pub rate: f64,
    pub flit_bits: u32,
    pub clock_mhz: f64,
    /// Cycles per router (2, or 3 with 64-bit flits) and per link.
    pub router_cycles: u32,
    pub link_latency_cycles: u32,
    /// Mean flits per packet of the traffic's size distribution.
    pub mean_packet_flits: f64,
    pub seed: u64,
    pub warmup: u64,
    pub measure: u64,
    /// Cycle at which the run stopped (after the drain).
    pub cycles: u64,
    /// All classes together.
    pub total: Figures,
    /// One entry per class.
    pub per_class: Vec<Figures>,
    /// Zero-load latency of the measured mix, cycles: `R (h + 1) + L h + (f - 1)`
    /// with h the average hops and f the mean packet flits.
    pub zero_load_cycles: f64,
    /// Tagged packets not delivered by the end of the drain.
    pub unfinished: u64,
    /// The watchdog's report, if it fired.
    pub deadlock: Option<String>,
    pub error_count: u64,
    pub errors: Vec<String>,
    pub dropped: u64,
    /// Accepted < 95 % of offered, or unfinished packets, or a deadlock.
    pub saturated: bool,
    /// No deadlock, scoreboard error, drop or unfinished packet.
    pub clean: bool,
    pub notes: Vec<String>,
    /// The framed links' figures (`None` with `link.model = "ideal"`).
    #[serde(default)]
    pub links: Option<LinkFigures>,
    /// Wall-clock seconds of the run (not deterministic).
    pub wall_s: f64,
    /// Router-cycles per wall-clock second (not deterministic).
    pub router_cycles_per_s: f64,
    /// The job-batch study's figures (`traffic.pattern = "jobs"`; its run
    /// log left out), else `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<crate::jobs::JobsResult>,
}

/// What the framed links did: occupancy in the measurement window, counters
/// over the whole run (summed over every link end).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkFigures {
    /// Link directions (two per cable).
    pub directions: usize,
    /// The links' data rate (`link.gbps`, at most 64 b per cycle), Gb/s.
    pub line_gbps: f64,
    /// Flits per cycle one direction passed to its router: mean over directions.
    pub flits_mean: f64,
    /// The same for the busiest direction.
    pub flits_max: f64,
    /// Goodput (flit bits delivered to the routers) per direction, Gb/s: mean.
    pub goodput_gbps_mean: f64,
    /// Goodput of the busiest direction, Gb/s.
    pub goodput_gbps_max: f64,
    /// PHY words sent per cycle (data, trailers, control, replays): mean and busiest.
    pub words_mean: f64,
    pub words_max: f64,
    /// Frames sent and accepted.
    pub frames_sent: u64,
    pub frames_received: u64,
    /// Frames dropped for a bad CRC / length / sideband, and control words with a bad CRC.
    pub crc_errors: u64,
    pub ctrl_crc_errors: u64,
    /// Replays (nack, timeout, link back up), of which by timeout.
    pub retransmissions: u64,
    pub timeouts: u64,
    /// Up → down transitions (each end counts its own).
    pub link_downs: u64,
    /// Cycles some link was not up.
    pub not_up_cycles: u64,
    /// Line bit errors and bursts the PHY models injected.
    pub bit_errors: u64,
    pub bursts: u64,
}

fn figures(c: &ClassReport, gbps_per_flit: f64, ns: f64) -> Figures {
    let l = &c.latency;
    Figures {
        class: c.class,
        offered_flits: c.offered,
        accepted_flits: c.accepted,
        offered_gbps: c.offered * gbps_per_flit,
        accepted_gbps: c.accepted * gbps_per_flit,
        packets: c.packets,
        refused: c.refused,
        latency_cycles: Cycles {
            avg: l.avg,
            p50: l.p50,
            p99: l.p99,
            max: l.max,
        },
        latency_ns: Nanos {
            avg: l.avg * ns,
            p50: l.p50 as f64 * ns,
            p99: l.p99 as f64 * ns,
            max: l.max as f64 * ns,
        },
        network_latency_cycles: Cycles {
            avg: c.network_latency.avg,
            p50: c.network_latency.p50,
            p99: c.network_latency.p99,
            max: c.network_latency.max,
        },
        hops: c.hops,
    }
}

/// Run the allreduce workload of `s` (`traffic.pattern = "allreduce"`).
pub fn run_allreduce(s: &Setup) -> Result<crate::allreduce::ArResult> {
    let spec = s.allreduce.as_ref().ok_or_else(|| {
        rule(
            "traffic.pattern",
            format!("{:?}", s.config.traffic.pattern),
            "the allreduce workload needs traffic.pattern = \"allreduce\"",
        )
    })?;
    crate::allreduce::run(&s.config, &s.params, &s.net, spec)
}

/// Run one simulation.
pub fn run(s: &Setup) -> Result<SimResult> {
    if s.allreduce.is_some() {
        return Err(rule(
            "traffic.pattern",
            "\"allreduce\"",
            "is a workload of `exanet simulate` alone (run_allreduce), not of this runner",
        ));
    }
    if let Some(spec) = &s.jobs {
        // A sweep point of the batch study: its figures, no network run.
        let mut j = crate::jobs::run(&s.config, spec)?;
        j.runs_log.clear();
        let d = &s.config.topology.dims;
        let w = &s.config.topology.wrap;
        return Ok(SimResult {
            name: s.config.name.clone(),
            dims: [d[0], d[1], d[2]],
            wrap: [w[0], w[1], w[2]],
            terminals: s.params.router.topology.num_nodes() * s.params.router.topology.local_ports,
            pattern: "jobs".into(),
            flit_bits: s.config.packet.flit_bits,
            clock_mhz: s.config.clock.pl_mhz,
            seed: s.config.sim.seed,
            clean: j.given_up == 0,
            wall_s: j.wall_s,
            jobs: Some(j),
            ..SimResult::default()
        });
    }
    let start = Instant::now();
    let mut net = Network::new(&s.net).context("building the network")?;
    let r = net.run();
    let wall_s = start.elapsed().as_secs_f64();
    let p = &s.params;
    let rp = &s.net.router;
    let gbps_per_flit = f64::from(p.packet.flit_bits) * p.clock.pl_mhz / 1000.0;
    let ns = p.clock.period_ns;
    let router_cycles = if p.packet.flit_bits == 64 { 3 } else { 2 };
    let (pattern, rate, mean_packet_flits) = match &s.net.workload {
        Workload::Synthetic { rate, sizes, .. } => (
            s.config.traffic.pattern.clone(),
            *rate,
            sizes.mean_flits(|b| rp.packet_flits(b)),
        ),
        Workload::Trace { events } => {
            let n = events.len().max(1) as f64;
            let flits: usize = events
                .iter()
                .map(|e| {
                    let max = s.net.max_payload();
                    let full = e.bytes / max.max(1);
                    let rest = e.bytes % max.max(1);
                    full * rp.packet_flits(max) + usize::from(rest > 0) * rp.packet_flits(rest)
                })
                .sum();
            ("trace".to_string(), 0.0, flits as f64 / n)
        }
        Workload::QosMix { storage, mpi } => {
            // mean flits per packet of the mix: streams weighted by packet rate
            let (fs, fm) = (
                rp.packet_flits(storage.bytes) as f64,
                rp.packet_flits(mpi.bytes) as f64,
            );
            let (ps, pm) = (storage.rate / fs, mpi.rate / fm);
            let mean = if ps + pm > 0.0 {
                (storage.rate + mpi.rate) / (ps + pm)
            } else {
                fs
            };
            ("qos".to_string(), storage.rate + mpi.rate, mean)
        }
    };
    let total = figures(&r.total, gbps_per_flit, ns);
    let h = total.hops;
    let link = p.link.latency_cycles;
    let zero_load_cycles = if total.packets == 0 {
        0.0
    } else {
        f64::from(router_cycles) * (h + 1.0) + f64::from(link) * h + (mean_packet_flits - 1.0)
    };
    let mut notes: Vec<String> = p
        .notes
        .iter()
        .filter(|n| exanet_hdl::limits::is_simulation_only(n))
        .cloned()
        .collect();
    let links = r.links.as_ref().map(|l| {
        let line_gbps = l.words_per_cycle * 64.0 * p.clock.pl_mhz / 1000.0;
        let c = &l.counters;
        LinkFigures {
            directions: l.directions,
            line_gbps,
            flits_mean: l.flits_mean,
            flits_max: l.flits_max,
            goodput_gbps_mean: l.flits_mean * gbps_per_flit,
            goodput_gbps_max: l.flits_max * gbps_per_flit,
            words_mean: l.words_mean,
            words_max: l.words_max,
            frames_sent: c.frames_sent,
            frames_received: c.frames_received,
            crc_errors: c.crc_errors,
            ctrl_crc_errors: c.ctrl_crc_errors,
            retransmissions: c.retransmissions,
            timeouts: c.timeouts,
            link_downs: c.link_downs,
            not_up_cycles: l.not_up_cycles,
            bit_errors: l.bit_errors,
            bursts: l.bursts,
        }
    });
    if links.is_none() && p.link.cycles_per_flit > 1.0 + 1e-9 {
        notes.push(format!(
            "links move one flit per cycle in the simulator ({:.2} Gb/s at {} MHz x {}-bit flits); \
             link.gbps = {} would carry at most {:.2} flits/cycle per link, which is not modelled",
            gbps_per_flit, p.clock.pl_mhz, p.packet.flit_bits, p.link.gbps,
            1.0 / p.link.cycles_per_flit
        ));
    }
    let deadlock = r.deadlock.as_ref().map(|d| {
        let first: Vec<String> = d
            .blocked
            .iter()
            .take(4)
            .map(|b| format!("{:?} {} vc {} ({} flits)", b.router, b.input, b.vc, b.flits))
            .collect();
        format!(
            "no flit moved for {} cycles at cycle {} with {} flits in the network; blocked: {}",
            d.stalled_for,
            d.cycle,
            d.flits_in_network,
            first.join(", ")
        )
    });
    if pattern == "trace" && total.packets == 0 && total.refused == 0 {
        let sim = &s.config.sim;
        return Err(usage(format!(
            "traffic.trace = {:?}: no message of the trace falls in the measurement window \
             (cycles {}..{}: sim.warmup = {}, sim.measure = {}), so there is nothing to report; \
             lower sim.warmup or raise sim.measure",
            s.config.traffic.trace,
            sim.warmup,
            sim.warmup + sim.measure,
            sim.warmup,
            sim.measure
        )));
    }
    let refused_share = total.refused as f64 / (total.packets + total.refused).max(1) as f64;
    let saturated = total.accepted_flits < SATURATION_ACCEPTED_SHARE * total.offered_flits
        || refused_share > SATURATION_REFUSED_SHARE
        || r.unfinished > 0
        || r.deadlock.is_some();
    Ok(SimResult {
        name: s.config.name.clone(),
        dims: p.topology.dims,
        wrap: p.topology.wrap,
        terminals: r.terminals,
        pattern,
        rate,
        flit_bits: p.packet.flit_bits,
        clock_mhz: p.clock.pl_mhz,
        router_cycles,
        link_latency_cycles: link,
        mean_packet_flits,
        seed: s.net.seed,
        warmup: r.warmup,
        measure: r.window,
        cycles: r.cycles,
        per_class: r
            .per_class
            .iter()
            .map(|c| figures(c, gbps_per_flit, ns))
            .collect(),
        total,
        zero_load_cycles,
        unfinished: r.unfinished,
        deadlock,
        error_count: r.error_count,
        errors: r.errors.clone(),
        dropped: r.dropped,
        saturated,
        clean: r.clean(),
        notes,
        links,
        wall_s,
        router_cycles_per_s: r.router_cycles_per_s,
        jobs: None,
    })
}

/// The human-readable report.
pub fn text(r: &SimResult) -> String {
    let mut o = String::new();
    let shape: Vec<String> = r.dims.iter().map(|d| d.to_string()).collect();
    let kind = match (r.wrap.iter().all(|&w| w), r.wrap.iter().any(|&w| w)) {
        (true, _) => "torus",
        (false, true) => "torus/mesh",
        (false, false) => "mesh",
    };
    let _ = writeln!(
        o,
        "exanet simulate: {} — {} {kind}, {} terminals, {}-bit flits at {} MHz",
        r.name,
        shape.join("x"),
        r.terminals,
        r.flit_bits,
        r.clock_mhz
    );
    let traffic = if r.pattern == "trace" {
        "trace replay".to_string()
    } else {
        format!("{} at {:.4} flits/terminal/cycle", r.pattern, r.rate)
    };
    let _ = writeln!(
        o,
        "traffic: {traffic}, {:.2} flits/packet on average; seed {}",
        r.mean_packet_flits, r.seed
    );
    let _ = writeln!(
        o,
        "method: warm-up {} cycles, measurement {} cycles, drained by cycle {}; \
         {:.2} s ({:.2} M router-cycles/s)",
        r.warmup,
        r.measure,
        r.cycles,
        r.wall_s,
        r.router_cycles_per_s / 1e6
    );
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{:<7} {:>17} {:>17} {:>8} {:>7} | {:>8} {:>6} {:>6} {:>6} | {:>9} {:>9} {:>9} | {:>5}",
        "class",
        "offered",
        "accepted",
        "packets",
        "refused",
        "lat avg",
        "p50",
        "p99",
        "max",
        "avg ns",
        "p99 ns",
        "max ns",
        "hops"
    );
    let mut rows = vec![("all".to_string(), &r.total)];
    // per class when more than one class carried traffic
    let used: Vec<&Figures> = r
        .per_class
        .iter()
        .filter(|c| c.offered_flits > 0.0 || c.packets > 0)
        .collect();
    if used.len() > 1 {
        for c in used {
            rows.push((format!("class {}", c.class.unwrap_or(0)), c));
        }
    }
    for (name, f) in rows {
        let _ = writeln!(
            o,
            "{:<7} {:>7.4} ({:>5.2} G) {:>7.4} ({:>5.2} G) {:>8} {:>7} | {:>8.1} {:>6} {:>6} {:>6} | {:>9.1} {:>9.1} {:>9.1} | {:>5.2}",
            name,
            f.offered_flits,
            f.offered_gbps,
            f.accepted_flits,
            f.accepted_gbps,
            f.packets,
            f.refused,
            f.latency_cycles.avg,
            f.latency_cycles.p50,
            f.latency_cycles.p99,
            f.latency_cycles.max,
            f.latency_ns.avg,
            f.latency_ns.p99,
            f.latency_ns.max,
            f.hops
        );
    }
    let _ = writeln!(
        o,
        "load: flits per terminal per cycle (G = Gb/s per terminal); latency: cycles from \
         packet creation to tail delivered (ns at {} MHz)",
        r.clock_mhz
    );
    let _ = writeln!(
        o,
        "zero-load latency of this mix over ideal wires: {:.1} cycles = {} x ({:.2} hops + 1) + {} x {:.2} hops + {:.2} - 1; \
         network latency (head injected to tail) avg {:.1} cycles",
        r.zero_load_cycles,
        r.router_cycles,
        r.total.hops,
        r.link_latency_cycles,
        r.total.hops,
        r.mean_packet_flits,
        r.total.network_latency_cycles.avg
    );
    if let Some(l) = &r.links {
        let pct = |g: f64| 100.0 * g / l.line_gbps.max(1e-12);
        let _ = writeln!(
            o,
            "links (framed, {} directions at {:.2} Gb/s): goodput per direction avg {:.2} Gb/s ({:.1} % of line), \
             busiest {:.2} Gb/s ({:.1} %); {:.3} flits/cycle avg, {:.3} busiest; lane {:.1} % busy avg (data, trailers, control, replays)",
            l.directions,
            l.line_gbps,
            l.goodput_gbps_mean,
            pct(l.goodput_gbps_mean),
            l.goodput_gbps_max,
            pct(l.goodput_gbps_max),
            l.flits_mean,
            l.flits_max,
            100.0 * l.words_mean,
        );
        let _ = writeln!(
            o,
            "link events (whole run): {} frames sent, {} accepted, {} CRC errors (+{} control), \
             {} retransmissions ({} by timeout), {} link-downs, {} cycles with a link not up; \
             PHY: {} bit errors, {} bursts",
            l.frames_sent,
            l.frames_received,
            l.crc_errors,
            l.ctrl_crc_errors,
            l.retransmissions,
            l.timeouts,
            l.link_downs,
            l.not_up_cycles,
            l.bit_errors,
            l.bursts
        );
    } else {
        let _ = writeln!(
            o,
            "links: ideal wires (link.model = \"ideal\"): one flit per cycle, error-free, {} cycles each way",
            r.link_latency_cycles
        );
    }
    let t = &r.total;
    let refused_pct = 100.0 * t.refused as f64 / (t.packets + t.refused).max(1) as f64;
    let measured = format!(
        "accepted {:.1} % of offered, {refused_pct:.1} % of packets refused",
        100.0 * t.accepted_flits / t.offered_flits.max(1e-12)
    );
    let state = if r.saturated {
        format!("SATURATED ({measured}; {SATURATION_RULE})")
    } else {
        format!("below saturation ({measured}; {SATURATION_RULE})")
    };
    let _ = writeln!(o, "state: {state}");
    if r.unfinished > 0 {
        let _ = writeln!(
            o,
            "unfinished: {} tagged packets not delivered within sim.drain",
            r.unfinished
        );
    }
    if let Some(d) = &r.deadlock {
        let _ = writeln!(o, "DEADLOCK: {d}");
    }
    if r.error_count > 0 {
        let _ = writeln!(o, "SCOREBOARD ERRORS: {}", r.error_count);
        for e in &r.errors {
            let _ = writeln!(o, "  {e}");
        }
    }
    if r.dropped > 0 {
        let _ = writeln!(o, "dropped by routers: {}", r.dropped);
    }
    for n in &r.notes {
        let _ = writeln!(o, "note: {n}");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{elaborate_for, Target};

    fn setup_with(f: impl FnOnce(&mut Config)) -> Result<Setup> {
        let mut c = Config::default();
        f(&mut c);
        let p = elaborate_for(&c, Target::Simulation)?;
        setup(&c, p, None)
    }

    fn key_of(r: Result<Setup>) -> String {
        r.unwrap_err()
            .downcast::<crate::params::RuleError>()
            .unwrap()
            .key
    }

    #[test]
    fn traffic_rules_name_the_key() {
        assert_eq!(
            key_of(setup_with(|c| c.traffic.pattern = "random".into())),
            "traffic.pattern"
        );
        assert_eq!(key_of(setup_with(|c| c.traffic.rate = 1.5)), "traffic.rate");
        assert_eq!(
            key_of(setup_with(|c| c.traffic.bytes = 300)),
            "traffic.bytes"
        );
        assert_eq!(
            key_of(setup_with(|c| {
                c.traffic.sizes = "bimodal".into();
                c.traffic.large_bytes = 512;
            })),
            "traffic.large_bytes"
        );
        assert_eq!(
            key_of(setup_with(|c| c.traffic.sizes = "zipf".into())),
            "traffic.sizes"
        );
        assert_eq!(
            key_of(setup_with(|c| {
                c.traffic.pattern = "hotspot".into();
                c.traffic.hotspot_nodes = vec![128];
            })),
            "traffic.hotspot_nodes"
        );
        assert_eq!(
            key_of(setup_with(|c| {
                c.topology.dims = vec![3, 4, 4];
                c.traffic.pattern = "transpose".into();
            })),
            "traffic.pattern"
        );
        assert_eq!(
            key_of(setup_with(|c| c.traffic.pattern = "trace".into())),
            "traffic.trace"
        );
        assert_eq!(key_of(setup_with(|c| c.sim.watchdog = 10)), "sim.watchdog");
        assert_eq!(key_of(setup_with(|c| c.sim.measure = 0)), "sim.measure");
        assert_eq!(
            key_of(setup_with(|c| {
                c.router.classes = 1;
                c.traffic.class1_fraction = 0.5;
            })),
            "traffic.class1_fraction"
        );
    }

    #[test]
    fn ns_traces_become_cycles() {
        // 6.4 ns per cycle at 156.25 MHz
        let ev =
            parse_trace_ns("time_ns,src,dst,bytes\n0,0,1,8\n64.0,1,2,8\n", 4, "t", 6.4).unwrap();
        assert_eq!((ev[0].cycle, ev[1].cycle), (0, 10));
        let e = parse_trace_ns("1,0,9,8\n", 4, "t.csv", 6.4).unwrap_err();
        assert!(format!("{e:#}").contains("t.csv:1"), "{e:#}");
    }

    #[test]
    fn default_setup_matches_the_config() {
        let s = setup_with(|_| {}).unwrap();
        assert_eq!(s.net.link_latency, 16);
        assert_eq!(s.net.window, 10_000);
        assert_eq!(s.net.source_queue_limit, 16);
        assert!(matches!(
            s.net.workload,
            Workload::Synthetic {
                pattern: Pattern::Uniform,
                ..
            }
        ));
    }
}
