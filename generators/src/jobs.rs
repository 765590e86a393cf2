//! `exanet simulate` with `traffic.pattern = "jobs"`: the `[jobs]` batch
//! study ([`exanet_sim::jobs`]): a queue of jobs with communication
//! profiles, placed by a policy onto free live routers, aborted and
//! re-queued when a node under them fails or a dead link cuts one of their
//! paths; the report gives the batch completion time and the aborted-run
//! ratio.
//!
//! Every key is an ordinary config key (sweepable, `-P`-settable); the
//! rules live in [`spec_of`] and fail naming the key. The link rate and
//! latency come from `[link]`, the router's cycles from `[clock]` and the
//! flit width, the routes from `[topology]` and `[router]`, the allreduce
//! schedule's threshold from `allreduce.threshold`, the seed from
//! `sim.seed`.

use crate::config::Config;
use crate::params::{rule, Params};
use anyhow::Result;
use exanet_sim::jobs::batch::{Outcome, TooManyFailures, MAX_FAILURES};
use exanet_sim::jobs::placement::PlacementPolicy;
use exanet_sim::jobs::route::Timing;
use exanet_sim::jobs::{
    run_batch, BatchParams, BatchReport, Fabric, FailureModel, JobSpec, Profile,
};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The profiles `jobs.profile` accepts.
pub const PROFILES: [&str; 5] = ["halo", "dataflow", "allreduce", "mixed", "file"];

/// Largest batch.
pub const MAX_JOBS: u32 = 100_000;

/// Most local-search moves per placement (`jobs.search_iterations`).
pub const MAX_SEARCH: u32 = 10_000_000;

/// Most aborts of one job (`jobs.max_attempts`).
pub const MAX_ATTEMPTS: u32 = 1000;

/// Router cycles per hop at zero load (2, 3 with 64-bit flits; see `simulate`).
fn router_cycles(flit_bits: u32) -> f64 {
    if flit_bits == 64 {
        3.0
    } else {
        2.0
    }
}

/// The checked `[jobs]` keys.
#[derive(Clone, Debug)]
pub struct JobsSpec {
    /// The torus, its routes, dead links and timing.
    pub fabric: Fabric,
    /// The batch, in queue order.
    pub jobs: Vec<JobSpec>,
    /// Node failures.
    pub failures: FailureModel,
    /// Policy, search budget, attempts, seed.
    pub batch: BatchParams,
    /// The profile file read, if any.
    pub profile_file: Option<PathBuf>,
    /// The node MTBF file read, if any.
    pub mtbf_file: Option<PathBuf>,
}

fn resolve(base: Option<&Path>, file: &str) -> PathBuf {
    match base {
        Some(d) if Path::new(file).is_relative() => d.join(file),
        _ => PathBuf::from(file),
    }
}

/// Check the `[jobs]` keys of `c` (errors name the key); `profile_dir` and
/// `mtbf_dir` resolve relative `jobs.profile_file` / `jobs.node_mtbf_file`.
pub fn spec_of(
    c: &Config,
    params: &Params,
    profile_dir: Option<&Path>,
    mtbf_dir: Option<&Path>,
) -> Result<JobsSpec> {
    let j = &c.jobs;
    let nodes = params.router.topology.num_nodes();
    let policy = PlacementPolicy::by_name(&j.placement).map_err(|_| {
        rule(
            "jobs.placement",
            format!("{:?}", j.placement),
            format!("must be one of {}", PlacementPolicy::NAMES.join(", ")),
        )
    })?;
    if !(1..=MAX_JOBS).contains(&j.count) {
        return Err(rule(
            "jobs.count",
            j.count,
            format!("must be 1..={MAX_JOBS}"),
        ));
    }
    if j.iterations == 0 {
        return Err(rule("jobs.iterations", 0, "must be >= 1"));
    }
    if !(j.compute_us >= 0.0 && j.compute_us.is_finite()) {
        return Err(rule(
            "jobs.compute_us",
            j.compute_us,
            "must be a finite number >= 0",
        ));
    }
    if j.bytes == 0 || j.bytes > 1 << 40 {
        return Err(rule("jobs.bytes", j.bytes, "must be 1..=2^40"));
    }
    if !(j.failure_weight >= 0.0 && j.failure_weight.is_finite()) {
        return Err(rule(
            "jobs.failure_weight",
            j.failure_weight,
            "must be a finite number >= 0",
        ));
    }
    let backfill = match j.queue.as_str() {
        "fcfs" => false,
        "backfill" => true,
        _ => {
            return Err(rule(
                "jobs.queue",
                format!("{:?}", j.queue),
                "must be one of fcfs, backfill",
            ))
        }
    };
    if !(1..=MAX_ATTEMPTS).contains(&j.max_attempts) {
        return Err(rule(
            "jobs.max_attempts",
            j.max_attempts,
            format!("must be 1..={MAX_ATTEMPTS}"),
        ));
    }
    if j.search_iterations > MAX_SEARCH {
        return Err(rule(
            "jobs.search_iterations",
            j.search_iterations,
            format!("must be 0..={MAX_SEARCH}"),
        ));
    }
    if !(j.repair_s >= 0.0 && j.repair_s.is_finite()) {
        return Err(rule(
            "jobs.repair_s",
            j.repair_s,
            "must be a finite number >= 0",
        ));
    }
    let s_to_ns = |s: f64| if s == 0.0 { f64::INFINITY } else { s * 1e9 };
    if !(j.node_mtbf_s >= 0.0 && j.node_mtbf_s.is_finite()) {
        return Err(rule(
            "jobs.node_mtbf_s",
            j.node_mtbf_s,
            "must be a finite number >= 0 (0 = never fails)",
        ));
    }
    if !(j.link_mtbf_s >= 0.0 && j.link_mtbf_s.is_finite()) {
        return Err(rule(
            "jobs.link_mtbf_s",
            j.link_mtbf_s,
            "must be a finite number >= 0 (0 = never fails)",
        ));
    }
    let mut mtbf_ns = vec![s_to_ns(j.node_mtbf_s); nodes];
    let mut mtbf_file = None;
    if !j.node_mtbf_file.is_empty() {
        let path = resolve(mtbf_dir, &j.node_mtbf_file);
        mtbf_file = Some(path.clone());
        let text = std::fs::read_to_string(&path).map_err(|e| {
            rule(
                "jobs.node_mtbf_file",
                format!("{:?}", j.node_mtbf_file),
                format!("cannot read {}: {e}", path.display()),
            )
        })?;
        for (node, s) in parse_mtbf(&text, &path.display().to_string(), nodes).map_err(|e| {
            rule(
                "jobs.node_mtbf_file",
                format!("{:?}", j.node_mtbf_file),
                format!("{e:#}"),
            )
        })? {
            mtbf_ns[node] = s_to_ns(s);
        }
    }
    // The fabric: golden routes, rates from [link] / [clock] / [packet].
    let flit_bytes = u64::from(c.packet.flit_bits / 8);
    let period = params.clock.period_ns;
    let (link_bytes_per_ns, frame_words_per_flit) = link_rate(c, params)?;
    let timing = Timing {
        link_bytes_per_ns,
        frame_words_per_flit,
        flit_bytes,
        cycle_ns: period,
        ni_bytes_per_ns: flit_bytes as f64 / period,
        hop_ns: router_cycles(c.packet.flit_bits) * period
            + params.link.latency_cycles as f64 * period,
        base_ns: router_cycles(c.packet.flit_bits) * period,
        max_payload: u64::from(params.packet.max_payload_bytes),
        packet_overhead: 2 * u64::from(params.packet.header_flits) * flit_bytes,
    };
    let mut fabric = Fabric::new(params.router.clone(), timing);
    for d in &j.dead_links {
        fabric.kill_link(d).map_err(|e| {
            rule(
                "jobs.dead_links",
                format!("{:?}", j.dead_links),
                format!("{e:#}"),
            )
        })?;
    }
    // The profiles.
    let mut profile_file = None;
    let threshold = u64::from(c.allreduce.threshold);
    let jobs: Vec<JobSpec> = if j.profile == "file" {
        if j.profile_file.is_empty() {
            return Err(rule(
                "jobs.profile_file",
                "\"\"",
                "profile = \"file\" needs a CSV or JSON profile file",
            ));
        }
        let path = resolve(profile_dir, &j.profile_file);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            rule(
                "jobs.profile_file",
                format!("{:?}", j.profile_file),
                format!("cannot read {}: {e}", path.display()),
            )
        })?;
        let p = Profile::parse(&text, &path.display().to_string()).map_err(|e| {
            rule(
                "jobs.profile_file",
                format!("{:?}", j.profile_file),
                format!("{e:#}"),
            )
        })?;
        if p.ranks > nodes {
            return Err(rule(
                "jobs.profile_file",
                format!("{:?}", j.profile_file),
                format!("{} ranks on a machine of {nodes} nodes", p.ranks),
            ));
        }
        profile_file = Some(path);
        (0..j.count)
            .map(|_| JobSpec {
                profile: p.clone(),
                iterations: u64::from(j.iterations),
                compute_ns: j.compute_us * 1e3,
            })
            .collect()
    } else {
        if !PROFILES.contains(&j.profile.as_str()) {
            return Err(rule(
                "jobs.profile",
                format!("{:?}", j.profile),
                format!("must be one of {}", PROFILES.join(", ")),
            ));
        }
        if j.ranks.is_empty() || j.ranks.iter().any(|&r| r < 2 || r as usize > nodes) {
            return Err(rule(
                "jobs.ranks",
                format!("{:?}", j.ranks),
                format!(
                    "must be a non-empty list of rank counts 2..={nodes} (the machine's nodes)"
                ),
            ));
        }
        (0..j.count as usize)
            .map(|i| {
                let ranks = j.ranks[i % j.ranks.len()] as usize;
                let kind = if j.profile == "mixed" {
                    ["halo", "dataflow", "allreduce"][i % 3]
                } else {
                    j.profile.as_str()
                };
                let profile = match kind {
                    "halo" => Profile::halo3d(ranks, j.bytes),
                    "dataflow" => {
                        Profile::dataflow(ranks, j.bytes, c.sim.seed.wrapping_add(i as u64))
                    }
                    _ => Profile::allreduce(ranks, j.bytes, threshold),
                }
                .map_err(|e| rule("jobs.ranks", format!("{:?}", j.ranks), format!("{e:#}")))?;
                Ok(JobSpec {
                    profile,
                    iterations: u64::from(j.iterations),
                    compute_ns: j.compute_us * 1e3,
                })
            })
            .collect::<Result<_>>()?
    };
    Ok(JobsSpec {
        fabric,
        jobs,
        failures: FailureModel {
            mtbf_ns,
            repair_ns: j.repair_s * 1e9,
            link_mtbf_ns: s_to_ns(j.link_mtbf_s),
        },
        batch: BatchParams {
            policy,
            failure_weight: j.failure_weight,
            search_iterations: u64::from(j.search_iterations),
            max_attempts: j.max_attempts,
            contention: j.contention,
            backfill,
            max_failures: MAX_FAILURES,
            seed: c.sim.seed,
        },
        profile_file,
        mtbf_file,
    })
}

/// The data rate of a link in the flow model, bytes per ns: what the
/// simulator's links carry. Framed links: the PHY's words per cycle, less
/// one trailer word per frame (a frame closes at `frame_flits` or at its
/// third packet tail, so full packets make frames of `min(frame_flits, 3 ×
/// max_packet_flits)` flits). Ideal wires: one flit per cycle. With it,
/// the PHY words per flit (0 for ideal wires: no store-and-forward).
fn link_rate(c: &Config, params: &Params) -> Result<(f64, f64)> {
    let period = params.clock.period_ns;
    let r = &params.router;
    let Some(f) = crate::params::framed_links(c, r, &params.link, c.sim.seed, &mut Vec::new())?
    else {
        return Ok((f64::from(c.packet.flit_bits / 8) / period, 0.0));
    };
    let w = f.link.words_per_flit() as f64;
    let flits = f.link.frame_flits.min(3 * r.max_packet_flits) as f64;
    Ok((
        f.words_per_cycle * 8.0 / period * (flits * w) / (flits * w + 1.0),
        w,
    ))
}

/// `node,mtbf_s` lines (`#` comments, an optional `node,mtbf_s` header);
/// errors name the file, line and field.
pub fn parse_mtbf(text: &str, shown: &str, nodes: usize) -> Result<Vec<(usize, f64)>> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let body = raw.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let f: Vec<&str> = body.split(',').map(str::trim).collect();
        if f == ["node", "mtbf_s"] {
            continue;
        }
        if f.len() != 2 {
            anyhow::bail!(
                "{shown}:{line}: expected 2 fields `node,mtbf_s`, found {}",
                f.len()
            );
        }
        let node: usize = f[0].parse().map_err(|_| {
            anyhow::anyhow!(
                "{shown}:{line}: field `node`: {:?} is not a node index",
                f[0]
            )
        })?;
        if node >= nodes {
            anyhow::bail!("{shown}:{line}: field `node`: {node} is not below {nodes} nodes");
        }
        let s: f64 = f[1]
            .parse()
            .ok()
            .filter(|s: &f64| *s >= 0.0 && s.is_finite())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{shown}:{line}: field `mtbf_s`: {:?} is not a number >= 0",
                    f[1]
                )
            })?;
        out.push((node, s));
    }
    Ok(out)
}

/// The report of a batch study.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobsResult {
    pub name: String,
    pub dims: [u32; 3],
    /// `jobs.profile` (a file: its path).
    pub profile: String,
    pub placement: String,
    /// `jobs.queue`: fcfs or backfill (absent in results written before it:
    /// fcfs).
    #[serde(default = "fcfs")]
    pub queue: String,
    pub seed: u64,
    pub jobs: usize,
    pub completed: usize,
    pub given_up: usize,
    pub runs: usize,
    pub aborted_node: usize,
    pub aborted_link: usize,
    /// Aborted runs / runs started.
    pub aborted_ratio: f64,
    /// Batch completion time, s.
    pub completion_s: f64,
    /// Mean bytes x hops per iteration over all runs.
    pub mean_bytes_hops: f64,
    /// Mean duration of the completed runs, s (what placement changes
    /// directly; the batch time also depends on how the jobs pack).
    pub mean_run_s: f64,
    pub node_failures: usize,
    pub link_failures: usize,
    /// Wall time of the study, s.
    pub wall_s: f64,
    /// Every run: job, start and end (s), outcome.
    pub runs_log: Vec<RunRow>,
}

fn fcfs() -> String {
    "fcfs".into()
}

/// One run of the log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub job: usize,
    pub ranks: usize,
    pub start_s: f64,
    pub end_s: f64,
    pub outcome: String,
}

/// Run the study.
pub fn run(c: &Config, s: &JobsSpec) -> Result<JobsResult> {
    let t0 = std::time::Instant::now();
    // Failures far more frequent than the batch is long come from the
    // MTBF keys: a usage error (exit 2), like a bad key.
    let r: BatchReport = run_batch(&s.fabric, &s.jobs, &s.failures, &s.batch).map_err(|e| {
        if e.is::<TooManyFailures>() {
            crate::error::usage(format!("{e:#}"))
        } else {
            e
        }
    })?;
    let profile = match &s.profile_file {
        Some(p) => p.display().to_string(),
        None => c.jobs.profile.clone(),
    };
    let d = &c.topology.dims;
    Ok(JobsResult {
        name: c.name.clone(),
        dims: [d[0], d[1], d[2]],
        profile,
        placement: r.policy.clone(),
        queue: c.jobs.queue.clone(),
        seed: c.sim.seed,
        jobs: r.jobs,
        completed: r.completed,
        given_up: r.given_up,
        runs: r.runs,
        aborted_node: r.aborted_node,
        aborted_link: r.aborted_link,
        aborted_ratio: r.aborted_ratio,
        completion_s: r.completion_ns * 1e-9,
        mean_bytes_hops: r.mean_bytes_hops,
        mean_run_s: {
            let done: Vec<f64> = r
                .log
                .iter()
                .filter(|x| x.outcome == Outcome::Completed)
                .map(|x| (x.end_ns - x.start_ns) * 1e-9)
                .collect();
            if done.is_empty() {
                0.0
            } else {
                done.iter().sum::<f64>() / done.len() as f64
            }
        },
        node_failures: r.node_failures.len(),
        link_failures: r.link_failures.len(),
        wall_s: t0.elapsed().as_secs_f64(),
        runs_log: r
            .log
            .iter()
            .map(|x| RunRow {
                job: x.job,
                ranks: x.nodes.len(),
                start_s: x.start_ns * 1e-9,
                end_s: x.end_ns * 1e-9,
                outcome: match &x.outcome {
                    Outcome::Completed => "completed".into(),
                    Outcome::NodeFailed { node } => format!("node {node} failed"),
                    Outcome::DeadLink => "dead link".into(),
                    Outcome::LinkFailed { link } => format!("link {link} failed"),
                },
            })
            .collect(),
    })
}

/// One job of a validation run ([`validate`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValidatedJob {
    pub job: usize,
    pub profile: String,
    pub ranks: usize,
    pub nodes: Vec<usize>,
    /// Flow model: one iteration, µs (sharing links with the other jobs
    /// when `jobs.contention` is on) ...
    pub flow_us: f64,
    /// ... and alone on the machine.
    pub flow_alone_us: f64,
    /// Cycle level: mean iteration, µs.
    pub cycle_us: f64,
    /// (flow − cycle) / cycle, %.
    pub error_pct: f64,
    /// Cycle level: each phase of the first iteration, µs, beside the
    /// flow model's.
    pub phases_cycle_us: Vec<f64>,
    pub phases_flow_us: Vec<f64>,
    /// Packets the job sent in the cycle-level run.
    pub packets: u64,
}

/// The report of `exanet simulate --validate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValidateResult {
    pub name: String,
    pub dims: [u32; 3],
    pub placement: String,
    pub link_model: String,
    pub iterations: u64,
    /// `jobs.contention`.
    pub contention: bool,
    pub jobs: Vec<ValidatedJob>,
    /// Largest |error_pct| over the jobs.
    pub max_abs_error_pct: f64,
    /// Cycles the network simulator ran, and its wall time, s.
    pub cycles: u64,
    pub wall_s: f64,
}

/// Largest cycle count of a validation run.
pub const MAX_VALIDATE_CYCLES: u64 = 200_000_000;

/// The flow model against the cycle-level network: the jobs at the head of
/// the queue that fit on the machine together are placed by the policy (as
/// the batch would at time 0, no failures) and run `jobs.iterations`
/// iterations both through the flow model and, packet by packet, through
/// the golden network of `net` ([`exanet_sim::jobs::replay`]).
pub fn validate(
    c: &Config,
    s: &JobsSpec,
    net: &exanet_sim::network::NetworkParams,
    period_ns: f64,
) -> Result<ValidateResult> {
    use exanet_sim::jobs::placement::{place, Placement};
    use exanet_sim::jobs::replay::{replay, ReplayJob};
    use exanet_sim::jobs::sharing::{shared_iteration_ns, JobLoad};
    let t0 = std::time::Instant::now();
    let f = &s.fabric;
    let n = f.nodes();
    let mut free = vec![true; n];
    let risk = vec![0.0; n];
    let mut rng = exanet_sim::rng::Rng::new(s.batch.seed ^ 0x91AC_E000);
    let mut placed: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, j) in s.jobs.iter().enumerate() {
        let ctx = Placement {
            free: &free,
            risk: &risk,
            failure_weight: s.batch.failure_weight,
            search_iterations: s.batch.search_iterations,
        };
        let Some(nodes) = place(s.batch.policy, &j.profile, f, &ctx, &mut rng) else {
            break;
        };
        for &x in &nodes {
            free[x] = false;
        }
        placed.push((i, nodes));
    }
    let compute_cycles = (c.jobs.compute_us * 1e3 / period_ns).round() as u64;
    let iterations = u64::from(c.jobs.iterations);
    let rj: Vec<ReplayJob> = placed
        .iter()
        .map(|(i, nodes)| ReplayJob {
            profile: &s.jobs[*i].profile,
            nodes,
            iterations,
            compute_cycles,
        })
        .collect();
    let out = replay(net, &rj, MAX_VALIDATE_CYCLES)?;
    let compute_ns = compute_cycles as f64 * period_ns;
    let loads: Vec<JobLoad> = placed
        .iter()
        .map(|(i, nodes)| JobLoad::of(f, &s.jobs[*i].profile, compute_ns, nodes))
        .collect();
    let alone: Vec<f64> = loads.iter().map(|l| l.alone_ns(f)).collect();
    let flow: Vec<f64> = if s.batch.contention {
        shared_iteration_ns(f, &loads.iter().collect::<Vec<_>>())
    } else {
        alone.clone()
    };
    let mut cycles = 0;
    let jobs: Vec<ValidatedJob> = placed
        .iter()
        .zip(&out)
        .enumerate()
        .map(|(k, ((i, nodes), r))| {
            let spec = &s.jobs[*i];
            let phases_flow: Vec<f64> = spec
                .profile
                .phases
                .iter()
                .map(|ph| f.phase_ns(ph, nodes) * 1e-3)
                .collect();
            let flow_us = flow[k] * 1e-3;
            let cycle_us = r.mean_iteration_cycles() * period_ns * 1e-3;
            cycles = cycles.max(r.iteration_cycles.iter().sum::<u64>());
            ValidatedJob {
                job: *i,
                profile: spec.profile.name.clone(),
                ranks: spec.profile.ranks,
                nodes: nodes.clone(),
                flow_us,
                flow_alone_us: alone[k] * 1e-3,
                cycle_us,
                error_pct: 100.0 * (flow_us - cycle_us) / cycle_us,
                phases_cycle_us: r
                    .first_phase_cycles
                    .iter()
                    .map(|&x| x as f64 * period_ns * 1e-3)
                    .collect(),
                phases_flow_us: phases_flow,
                packets: r.packets,
            }
        })
        .collect();
    let d = &c.topology.dims;
    Ok(ValidateResult {
        name: c.name.clone(),
        dims: [d[0], d[1], d[2]],
        placement: s.batch.policy.name().into(),
        link_model: c.link.model.clone(),
        iterations,
        contention: s.batch.contention,
        max_abs_error_pct: jobs.iter().map(|j| j.error_pct.abs()).fold(0.0, f64::max),
        jobs,
        cycles,
        wall_s: t0.elapsed().as_secs_f64(),
    })
}

/// The one-screen report of [`validate`].
pub fn validate_text(r: &ValidateResult) -> String {
    let mut s = String::new();
    let [x, y, z] = r.dims;
    let _ = writeln!(
        s,
        "{}: flow model vs cycle-level network on {x}x{y}x{z} ({} links), placement {}, {} iterations, contention {}",
        r.name, r.link_model, r.placement, r.iterations, r.contention
    );
    for j in &r.jobs {
        let _ = writeln!(
            s,
            "  job {} {} ({} ranks, {} packets): iteration flow {:.3} us (alone {:.3}), cycle level {:.3} us, error {:+.1} %",
            j.job, j.profile, j.ranks, j.packets, j.flow_us, j.flow_alone_us, j.cycle_us, j.error_pct
        );
        let ph: Vec<String> = j
            .phases_flow_us
            .iter()
            .zip(&j.phases_cycle_us)
            .map(|(f, c)| format!("{f:.3}/{c:.3}"))
            .collect();
        let _ = writeln!(s, "    phases (flow/cycle, us): {}", ph.join(" "));
    }
    let _ = writeln!(
        s,
        "  max |error| {:.1} %; {} cycles simulated in {:.2} s",
        r.max_abs_error_pct, r.cycles, r.wall_s
    );
    s
}

/// The one-screen report.
pub fn text(r: &JobsResult) -> String {
    let mut s = String::new();
    let [x, y, z] = r.dims;
    let _ = writeln!(
        s,
        "{}: job batch on {x}x{y}x{z}, profile {}, placement {}, queue {}, seed {}",
        r.name, r.profile, r.placement, r.queue, r.seed
    );
    let _ = writeln!(
        s,
        "  jobs                {} ({} completed, {} given up)",
        r.jobs, r.completed, r.given_up
    );
    let _ = writeln!(s, "  batch completion    {:.6} s", r.completion_s);
    let _ = writeln!(
        s,
        "  runs                {} ({} aborted by node failures, {} by dead or failing links; aborted ratio {:.4})",
        r.runs, r.aborted_node, r.aborted_link, r.aborted_ratio
    );
    let _ = writeln!(
        s,
        "  mean job run time   {:.6} s (completed runs)",
        r.mean_run_s
    );
    let _ = writeln!(s, "  node failures       {}", r.node_failures);
    let _ = writeln!(s, "  cable failures      {}", r.link_failures);
    let _ = writeln!(
        s,
        "  mean bytes x hops   {:.4e} per iteration",
        r.mean_bytes_hops
    );
    let _ = writeln!(s, "  wall time           {:.2} s", r.wall_s);
    let _ = writeln!(s, "  model: flow level on the golden routes (per phase: busiest link / NI / serial NI / packet, plus the path latency; jobs share links with jobs.contention), see README \"Job studies\"");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mtbf_file_errors_name_line_and_field() {
        let ok = parse_mtbf("node,mtbf_s\n# fragile\n3, 100\n5,0.5\n", "m.csv", 8).unwrap();
        assert_eq!(ok, vec![(3, 100.0), (5, 0.5)]);
        let e = |t: &str| format!("{:#}", parse_mtbf(t, "m.csv", 8).unwrap_err());
        assert_eq!(e("9,1\n"), "m.csv:1: field `node`: 9 is not below 8 nodes");
        assert_eq!(
            e("1,1\n2,-1\n"),
            "m.csv:2: field `mtbf_s`: \"-1\" is not a number >= 0"
        );
        assert_eq!(
            e("a,1\n"),
            "m.csv:1: field `node`: \"a\" is not a node index"
        );
        assert_eq!(
            e("1\n"),
            "m.csv:1: expected 2 fields `node,mtbf_s`, found 1"
        );
    }
}
