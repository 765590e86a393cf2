//! A batch of jobs on a machine whose nodes fail: an event-driven run.
//!
//! * The queue is first come, first served: the job at its head is placed
//!   by the policy as soon as enough nodes are free and live; jobs behind it
//!   wait, unless `backfill` (EASY): then when the head cannot start, its
//!   reservation is the earliest running-job end by which enough nodes are
//!   free, and a later job starts now if it is expected to end by then
//!   (its iterations on a compact block, timed alone: what a user's time
//!   request would say) or fits in the nodes left over at it.
//! * A placed job runs `iterations × (compute + Σ phases)` ns (phase times
//!   from [`Fabric::phase_ns`] on its placement). With `contention`, the
//!   running jobs share links ([`super::sharing`]): whenever a job starts
//!   or ends, every running job's progress so far is kept (iterations
//!   done at its old pace) and the rest of it is re-timed at the pace the
//!   new set of running jobs leaves it.
//! * Node failures: each node fails as a Poisson process of mean
//!   `mtbf_ns[n]` (drawn from a generator of its own, seeded by the run's
//!   seed and the node, so the failure times do not depend on the policy);
//!   a failed node is down for `repair_ns`, then live again. A failure
//!   aborts the job running on the node (its work is lost: no
//!   checkpoints), frees its other nodes, and puts it back at the head of
//!   the queue.
//! * Dead links: dimension-order routing cannot route around them, so a
//!   job placed with a message path over a dead link aborts after its
//!   first iteration (the time its first receive times out) and is
//!   re-queued the same way.
//! * Link failures: each cable (both directions) fails as a Poisson process
//!   of mean `link_mtbf_ns` (its own generator, as for nodes) and is down
//!   for `repair_ns`; a failure aborts every running job with a message
//!   path over the cable, and while it is down the cable is a dead link.
//! * A job aborted `max_attempts` times is given up (reported, never
//!   counted as completed).
//! * More than `max_failures` node and cable failures in one batch is an
//!   error (MTBFs far below the batch's length), not a run without end.
//!
//! Every run is recorded with its outcome, so a test can check that no
//! run completed over a node failure.

use super::placement::{bytes_hops, place, Placement, PlacementPolicy};
use super::profile::Profile;
use super::route::Fabric;
use super::sharing::{shared_iteration_ns, JobLoad};
use crate::rng::Rng;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Node and cable failures a batch of `exanet simulate` may simulate
/// before it is refused (`BatchParams::max_failures`).
pub const MAX_FAILURES: usize = 2_000_000;

/// The error of a batch refused after `max_failures` failures (the caller
/// can tell it from a model error: it comes from the MTBFs asked for).
#[derive(Clone, Debug, PartialEq)]
pub struct TooManyFailures(pub String);

impl std::fmt::Display for TooManyFailures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TooManyFailures {}

/// One job of the batch.
#[derive(Clone, Debug, PartialEq)]
pub struct JobSpec {
    /// Its communication profile (and rank count).
    pub profile: Profile,
    /// Iterations to run.
    pub iterations: u64,
    /// Compute time per iteration, ns.
    pub compute_ns: f64,
}

/// Node failures and repairs.
#[derive(Clone, Debug, PartialEq)]
pub struct FailureModel {
    /// Mean time between failures of each node, ns (infinite = never fails).
    pub mtbf_ns: Vec<f64>,
    /// Time a failed node or cable stays down, ns.
    pub repair_ns: f64,
    /// Mean time between failures of each cable, ns (infinite = never fails).
    pub link_mtbf_ns: f64,
}

/// How the batch is run.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchParams {
    /// Placement policy.
    pub policy: PlacementPolicy,
    /// λ of the failure-aware cost.
    pub failure_weight: f64,
    /// Local-search moves per placement.
    pub search_iterations: u64,
    /// Aborts after which a job is given up.
    pub max_attempts: u32,
    /// Running jobs share links ([`super::sharing`]); false = every job
    /// timed as if alone.
    pub contention: bool,
    /// EASY backfill: when the head job cannot start, later jobs start if
    /// they are expected (on a compact block, alone) to end by the head's
    /// reservation or fit in the nodes left over at it; false = first come,
    /// first served.
    pub backfill: bool,
    /// Node and cable failures the batch may simulate before it is refused
    /// ([`MAX_FAILURES`] in `exanet simulate`).
    pub max_failures: usize,
    /// Seed of the failures and of random placement.
    pub seed: u64,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// All iterations done.
    Completed,
    /// Node `node` failed under it.
    NodeFailed { node: usize },
    /// A message path crossed a dead link.
    DeadLink,
    /// Cable `link` (`"node:port"`) failed under it.
    LinkFailed { link: String },
}

/// One placement of one job, start to end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Job index in the batch.
    pub job: usize,
    /// Ranks' nodes.
    pub nodes: Vec<usize>,
    /// Start, ns.
    pub start_ns: f64,
    /// End (completion or abort), ns.
    pub end_ns: f64,
    /// Bytes × hops of one iteration on this placement.
    pub bytes_hops: f64,
    /// How it ended.
    pub outcome: Outcome,
}

/// What a batch did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchReport {
    /// Policy name.
    pub policy: String,
    /// Jobs in the batch.
    pub jobs: usize,
    /// Jobs that completed.
    pub completed: usize,
    /// Jobs given up after `max_attempts` aborts.
    pub given_up: usize,
    /// Runs started (placements).
    pub runs: usize,
    /// Runs aborted by a node failure.
    pub aborted_node: usize,
    /// Runs aborted by a dead or failing link.
    pub aborted_link: usize,
    /// Aborted runs / runs started.
    pub aborted_ratio: f64,
    /// Time the last job completed or was given up, ns.
    pub completion_ns: f64,
    /// Mean bytes × hops per iteration over all runs.
    pub mean_bytes_hops: f64,
    /// Node failures during the batch (time ns, node).
    pub node_failures: Vec<(f64, usize)>,
    /// Cable failures during the batch (time ns, cable `"node:port"`).
    pub link_failures: Vec<(f64, String)>,
    /// Every run.
    pub log: Vec<Run>,
}

/// Duration of one iteration of `p` on `nodes`, ns.
pub fn iteration_ns(fabric: &Fabric, p: &Profile, compute_ns: f64, nodes: &[usize]) -> f64 {
    compute_ns
        + p.phases
            .iter()
            .map(|ph| fabric.phase_ns(ph, nodes))
            .sum::<f64>()
}

fn exp_sample(rng: &mut Rng, mean: f64) -> f64 {
    if !mean.is_finite() {
        return f64::INFINITY;
    }
    let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    -mean * u.ln()
}

/// Run the batch `jobs` (in queue order) on `fabric`.
pub fn run_batch(
    fabric: &Fabric,
    jobs: &[JobSpec],
    fm: &FailureModel,
    bp: &BatchParams,
) -> Result<BatchReport> {
    // Cables fail and come back during the batch: a copy of the fabric holds that.
    let mut fab = fabric.clone();
    let fabric = &mut fab;
    let n = fabric.nodes();
    if fm.mtbf_ns.len() != n {
        bail!("failure model: {} MTBFs for {n} nodes", fm.mtbf_ns.len());
    }
    for (i, j) in jobs.iter().enumerate() {
        if j.profile.ranks > n {
            bail!(
                "job {i} ({}): {} ranks on a machine of {n} nodes",
                j.profile.name,
                j.profile.ranks
            );
        }
    }
    if bp.max_attempts == 0 {
        bail!("max_attempts must be >= 1");
    }
    // Each node's failures from its own generator: the same for every policy.
    let mut node_rng: Vec<Rng> = (0..n)
        .map(|i| {
            Rng::new(bp.seed ^ (0xFA11_0000_0000 + i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        })
        .collect();
    let mut next_fail: Vec<f64> = (0..n)
        .map(|i| exp_sample(&mut node_rng[i], fm.mtbf_ns[i]))
        .collect();
    let mut down_until = vec![0.0f64; n];
    // Cables: the same, from generators of their own. Cables dead from the
    // start (`dead_links`) never fail or come back.
    let cables = fabric.cables();
    let mut cable_rng: Vec<Rng> = (0..cables.len())
        .map(|i| {
            Rng::new(bp.seed ^ (0xCAB1_0000_0000 + i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        })
        .collect();
    let static_dead: Vec<bool> = cables.iter().map(|&c| fabric.is_dead(c)).collect();
    let mut cable_fail: Vec<f64> = (0..cables.len())
        .map(|i| {
            if static_dead[i] {
                f64::INFINITY
            } else {
                exp_sample(&mut cable_rng[i], fm.link_mtbf_ns)
            }
        })
        .collect();
    let mut cable_up_at = vec![0.0f64; cables.len()];
    let mut link_failures: Vec<(f64, String)> = Vec::new();
    let mut busy: Vec<Option<usize>> = vec![None; n];
    let mut place_rng = Rng::new(bp.seed ^ 0x91AC_E000);
    // Expected run time on a compact block (for the failure-aware risk).
    let ideal: Vec<f64> = jobs
        .iter()
        .map(|j| {
            let nodes: Vec<usize> = (0..j.profile.ranks).collect();
            j.iterations as f64 * iteration_ns(fabric, &j.profile, j.compute_ns, &nodes)
        })
        .collect();

    struct Live {
        job: usize,
        end: f64,
        run: usize,
        dead_link: bool,
        /// Its link loads, iterations still to run, their pace (ns per
        /// iteration) and the time that pace was set.
        load: JobLoad,
        remaining: f64,
        iter_ns: f64,
        since: f64,
        /// Directed links of its message paths.
        links: std::collections::HashSet<super::route::LinkId>,
    }
    let mut queue: VecDeque<usize> = (0..jobs.len()).collect();
    let mut running: Vec<Live> = Vec::new();
    let mut attempts = vec![0u32; jobs.len()];
    let mut log: Vec<Run> = Vec::new();
    let mut failures = Vec::new();
    let (mut completed, mut given_up) = (0usize, 0usize);
    let mut t = 0.0f64;
    // Whether the running set changed since the jobs were last timed.
    let mut changed = false;
    loop {
        // Start jobs from the head of the queue while they fit; with
        // backfill, then later jobs that do not delay the head (EASY).
        let mut k = 0usize;
        let mut shadow: Option<(f64, usize)> = None;
        while k < queue.len() {
            let j = queue[k];
            let free: Vec<bool> = (0..n)
                .map(|i| busy[i].is_none() && down_until[i] <= t)
                .collect();
            let spec = &jobs[j];
            if let Some((ts, extra)) = shadow {
                // Backfill only a job expected to end by the head's
                // reservation, or one that fits in the nodes left over then.
                // Expected: its iterations on a compact block, alone (what
                // a user's time request would say; no placement needed).
                if t + ideal[j] > ts && spec.profile.ranks > extra {
                    k += 1;
                    continue;
                }
            }
            let risk: Vec<f64> = fm
                .mtbf_ns
                .iter()
                .map(|&m| {
                    if m.is_finite() {
                        1.0 - (-ideal[j] / m).exp()
                    } else {
                        0.0
                    }
                })
                .collect();
            let ctx = Placement {
                free: &free,
                risk: &risk,
                failure_weight: bp.failure_weight,
                search_iterations: bp.search_iterations,
            };
            let placed =
                place(bp.policy, &spec.profile, fabric, &ctx, &mut place_rng).map(|nodes| {
                    let load = JobLoad::of(fabric, &spec.profile, spec.compute_ns, &nodes);
                    (nodes, load)
                });
            let Some((nodes, load)) = placed else {
                if k == 0 && bp.backfill {
                    // The head's reservation: the earliest end of running
                    // jobs by which enough nodes are free, and the nodes
                    // left over then.
                    let mut have = free.iter().filter(|&&x| x).count();
                    let mut ends: Vec<(f64, usize)> = running
                        .iter()
                        .map(|r| (r.end, log[r.run].nodes.len()))
                        .collect();
                    ends.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let need = spec.profile.ranks;
                    let mut at = (f64::INFINITY, 0);
                    for (e, ranks) in ends {
                        have += ranks;
                        if have >= need {
                            at = (e, have - need);
                            break;
                        }
                    }
                    shadow = Some(at);
                    k = 1;
                    continue;
                }
                if k == 0 {
                    break;
                }
                k += 1;
                continue;
            };
            let iter = load.alone_ns(fabric);
            if let Some((ts, extra)) = shadow.as_mut() {
                if t + ideal[j] > *ts {
                    // Runs past the reservation: uses nodes left over at it.
                    *extra -= nodes.len();
                }
            }
            queue.remove(k);
            let dead_link = fabric.any_dead()
                && spec
                    .profile
                    .phases
                    .iter()
                    .flatten()
                    .any(|m| fabric.path_is_dead(nodes[m.src], nodes[m.dst]));
            let end = if dead_link {
                t + iter
            } else {
                t + spec.iterations as f64 * iter
            };
            for &x in &nodes {
                busy[x] = Some(j);
            }
            let links = if fm.link_mtbf_ns.is_finite() {
                spec.profile
                    .phases
                    .iter()
                    .flatten()
                    .flat_map(|m| fabric.path(nodes[m.src], nodes[m.dst]))
                    .collect()
            } else {
                Default::default()
            };
            running.push(Live {
                job: j,
                end,
                run: log.len(),
                dead_link,
                links,
                load,
                remaining: if dead_link {
                    1.0
                } else {
                    spec.iterations as f64
                },
                iter_ns: iter,
                since: t,
            });
            changed = true;
            log.push(Run {
                job: j,
                bytes_hops: bytes_hops(&spec.profile, fabric, &nodes),
                nodes,
                start_ns: t,
                end_ns: end,
                outcome: Outcome::Completed,
            });
        }
        if changed && bp.contention {
            // Keep what each running job did at its old pace, time the rest
            // at the pace the running set leaves it.
            let loads: Vec<&JobLoad> = running.iter().map(|r| &r.load).collect();
            let pace = shared_iteration_ns(fabric, &loads);
            for (r, p) in running.iter_mut().zip(pace) {
                if r.iter_ns > 0.0 {
                    r.remaining = (r.remaining - (t - r.since) / r.iter_ns).max(0.0);
                }
                r.since = t;
                r.iter_ns = p;
                r.end = t + r.remaining * p;
                log[r.run].end_ns = r.end;
            }
        }
        changed = false;
        if queue.is_empty() && running.is_empty() {
            break;
        }
        // The next event: a run ending, a node failing, or a node coming back.
        let end = running
            .iter()
            .enumerate()
            .map(|(i, r)| (r.end, i))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let fail = (0..n)
            .map(|i| (next_fail[i], i))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let cable = (0..cables.len())
            .map(|i| (cable_fail[i], i))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let repair = (0..n)
            .filter(|&i| down_until[i] > t)
            .map(|i| down_until[i])
            .chain(cable_up_at.iter().copied().filter(|&u| u > t))
            .min_by(f64::total_cmp);
        let te = end.map_or(f64::INFINITY, |e| e.0);
        let tf = fail.map_or(f64::INFINITY, |f| f.0);
        let tc = cable.map_or(f64::INFINITY, |c| c.0);
        let tr = repair.unwrap_or(f64::INFINITY);
        if te.is_infinite() && tf.is_infinite() && tc.is_infinite() && tr.is_infinite() {
            bail!("batch stuck at {t} ns: {} jobs queued, none can be placed and no node will come back", queue.len());
        }
        if failures.len() + link_failures.len() >= bp.max_failures && tf.min(tc) < te.min(tr) {
            return Err(TooManyFailures(format!(
                "more than {} node and cable failures by {:.6} s with {} jobs still to run: \
                 the node or cable MTBF (jobs.node_mtbf_s, jobs.node_mtbf_file, jobs.link_mtbf_s) \
                 is far below the batch's length",
                bp.max_failures,
                t * 1e-9,
                queue.len() + running.len()
            ))
            .into());
        }
        if te <= tf && te <= tc && te <= tr {
            let i = end.expect("finite").1;
            let r = running.swap_remove(i);
            changed = true;
            t = r.end;
            let rec = &mut log[r.run];
            free_nodes(&rec.nodes, &mut busy);
            if r.dead_link {
                rec.outcome = Outcome::DeadLink;
                requeue(
                    r.job,
                    &mut attempts,
                    bp.max_attempts,
                    &mut queue,
                    &mut given_up,
                );
            } else {
                completed += 1;
            }
        } else if tf <= tc && tf <= tr {
            let node = fail.expect("finite").1;
            t = tf;
            failures.push((t, node));
            down_until[node] = t + fm.repair_ns;
            next_fail[node] = t + fm.repair_ns + exp_sample(&mut node_rng[node], fm.mtbf_ns[node]);
            if let Some(j) = busy[node] {
                let i = running
                    .iter()
                    .position(|r| r.job == j)
                    .expect("a busy node's job is running");
                let r = running.swap_remove(i);
                changed = true;
                let rec = &mut log[r.run];
                rec.end_ns = t;
                rec.outcome = Outcome::NodeFailed { node };
                free_nodes(&rec.nodes, &mut busy);
                requeue(
                    r.job,
                    &mut attempts,
                    bp.max_attempts,
                    &mut queue,
                    &mut given_up,
                );
            }
        } else if tc <= tr {
            let i = cable.expect("finite").1;
            t = tc;
            let c = cables[i];
            let back = fabric.reverse(c);
            let name = fabric.link_name(c);
            fabric.set_cable(c, true);
            cable_up_at[i] = t + fm.repair_ns;
            cable_fail[i] = t + fm.repair_ns + exp_sample(&mut cable_rng[i], fm.link_mtbf_ns);
            link_failures.push((t, name.clone()));
            let mut k = 0;
            while k < running.len() {
                if running[k].links.contains(&c) || running[k].links.contains(&back) {
                    let r = running.swap_remove(k);
                    changed = true;
                    let rec = &mut log[r.run];
                    rec.end_ns = t;
                    rec.outcome = Outcome::LinkFailed { link: name.clone() };
                    free_nodes(&rec.nodes, &mut busy);
                    requeue(
                        r.job,
                        &mut attempts,
                        bp.max_attempts,
                        &mut queue,
                        &mut given_up,
                    );
                } else {
                    k += 1;
                }
            }
        } else {
            t = tr;
        }
        // Cables whose repair is done are alive again.
        for i in 0..cables.len() {
            if !static_dead[i] && cable_up_at[i] <= t && fabric.is_dead(cables[i]) {
                fabric.set_cable(cables[i], false);
            }
        }
    }
    let aborted_node = log
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::NodeFailed { .. }))
        .count();
    let aborted_link = log
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::DeadLink | Outcome::LinkFailed { .. }))
        .count();
    Ok(BatchReport {
        policy: bp.policy.name().into(),
        jobs: jobs.len(),
        completed,
        given_up,
        runs: log.len(),
        aborted_node,
        aborted_link,
        aborted_ratio: if log.is_empty() {
            0.0
        } else {
            (aborted_node + aborted_link) as f64 / log.len() as f64
        },
        completion_ns: t,
        mean_bytes_hops: if log.is_empty() {
            0.0
        } else {
            log.iter().map(|r| r.bytes_hops).sum::<f64>() / log.len() as f64
        },
        node_failures: failures,
        link_failures,
        log,
    })
}

/// The nodes of a run that ended (completed or aborted) are free again.
fn free_nodes(nodes: &[usize], busy: &mut [Option<usize>]) {
    for &x in nodes {
        busy[x] = None;
    }
}

/// Put an aborted `job` back at the head of the queue, or give it up after
/// `max` attempts.
fn requeue(
    job: usize,
    attempts: &mut [u32],
    max: u32,
    queue: &mut VecDeque<usize>,
    given_up: &mut usize,
) {
    attempts[job] += 1;
    if attempts[job] < max {
        queue.push_front(job);
    } else {
        *given_up += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::router::RouterParams;

    fn fabric() -> Fabric {
        Fabric::new(
            RouterParams::default(),
            super::super::route::tests::timing(),
        )
    }

    fn batch(count: usize) -> Vec<JobSpec> {
        (0..count)
            .map(|i| JobSpec {
                profile: match i % 3 {
                    0 => Profile::halo3d(32, 100_000).unwrap(),
                    1 => Profile::dataflow(24, 100_000, i as u64).unwrap(),
                    _ => Profile::allreduce(16, 8192, 4096).unwrap(),
                },
                iterations: 100,
                compute_ns: 50_000.0,
            })
            .collect()
    }

    fn params(policy: PlacementPolicy, seed: u64) -> BatchParams {
        BatchParams {
            policy,
            failure_weight: 10.0,
            search_iterations: 2000,
            max_attempts: 50,
            contention: true,
            backfill: false,
            max_failures: MAX_FAILURES,
            seed,
        }
    }

    /// No run completes over a failure of one of its nodes; every abort
    /// is followed by a new run of the same job (or the job is given up);
    /// every job completes exactly once otherwise.
    fn check_invariants(r: &BatchReport, jobs: usize, max_attempts: u32) {
        for run in &r.log {
            let hit = r
                .node_failures
                .iter()
                .find(|&&(tf, n)| run.nodes.contains(&n) && tf >= run.start_ns && tf < run.end_ns);
            match &run.outcome {
                Outcome::Completed => {
                    assert!(hit.is_none(), "run {run:?} completed over failure {hit:?}")
                }
                Outcome::NodeFailed { node } => {
                    assert!(r.node_failures.contains(&(run.end_ns, *node)));
                    assert!(run.nodes.contains(node));
                }
                Outcome::DeadLink | Outcome::LinkFailed { .. } => {}
            }
        }
        for j in 0..jobs {
            let runs: Vec<&Run> = r.log.iter().filter(|x| x.job == j).collect();
            let done = runs
                .iter()
                .filter(|x| x.outcome == Outcome::Completed)
                .count();
            assert!(done <= 1);
            if done == 1 {
                assert_eq!(
                    runs.last().unwrap().outcome,
                    Outcome::Completed,
                    "job {j}: a run after completion"
                );
            } else {
                assert_eq!(
                    runs.len(),
                    max_attempts as usize,
                    "job {j} neither completed nor given up"
                );
            }
            for w in runs.windows(2) {
                assert!(w[1].start_ns >= w[0].end_ns, "job {j} ran twice at once");
            }
        }
        assert_eq!(r.completed + r.given_up, jobs);
    }

    #[test]
    fn failed_nodes_abort_and_requeue_their_jobs() {
        let f = fabric();
        let jobs = batch(12);
        // a run is ~100 x (50 us + phases): up to ~50 ms; a node fails about once per 10 s
        let fm = FailureModel {
            mtbf_ns: vec![1.0e10; 128],
            repair_ns: 1.0e6,
            link_mtbf_ns: f64::INFINITY,
        };
        for pol in PlacementPolicy::NAMES {
            let r = run_batch(
                &f,
                &jobs,
                &fm,
                &params(PlacementPolicy::by_name(pol).unwrap(), 5),
            )
            .unwrap();
            assert!(r.aborted_node > 0, "{pol}: the study should see aborts");
            assert_eq!(r.completed, 12, "{pol}");
            check_invariants(&r, 12, 50);
            for run in &r.log {
                assert_eq!(run.nodes.len(), jobs[run.job].profile.ranks);
            }
            // same seed, same batch
            assert_eq!(
                r,
                run_batch(
                    &f,
                    &jobs,
                    &fm,
                    &params(PlacementPolicy::by_name(pol).unwrap(), 5)
                )
                .unwrap()
            );
        }
        // a job whose node always fails is given up, never completed
        let mut mtbf = vec![f64::INFINITY; 128];
        mtbf[0] = 1.0e3;
        let one = vec![JobSpec {
            profile: Profile::halo3d(128, 1000).unwrap(),
            iterations: 10,
            compute_ns: 1.0e6,
        }];
        let fm = FailureModel {
            mtbf_ns: mtbf,
            repair_ns: 10.0,
            link_mtbf_ns: f64::INFINITY,
        };
        let r = run_batch(&f, &one, &fm, &params(PlacementPolicy::Linear, 1)).unwrap();
        assert_eq!(
            (r.completed, r.given_up, r.runs, r.aborted_node),
            (0, 1, 50, 50)
        );
        check_invariants(&r, 1, 50);
    }

    #[test]
    fn dead_links_abort_jobs_unless_placed_around_them() {
        let mut f = fabric();
        f.kill_link("0:x+").unwrap();
        let job = vec![JobSpec {
            profile: Profile::halo3d(8, 10_000).unwrap(),
            iterations: 10,
            compute_ns: 1000.0,
        }];
        let fm = FailureModel {
            mtbf_ns: vec![f64::INFINITY; 128],
            repair_ns: 0.0,
            link_mtbf_ns: f64::INFINITY,
        };
        let mut p = params(PlacementPolicy::Linear, 1);
        p.max_attempts = 3;
        let r = run_batch(&f, &job, &fm, &p).unwrap();
        assert_eq!((r.completed, r.given_up, r.aborted_link), (0, 1, 3));
        check_invariants(&r, 1, 3);
        p.policy = PlacementPolicy::Failure;
        let r = run_batch(&f, &job, &fm, &p).unwrap();
        assert_eq!((r.completed, r.aborted_link), (1, 0));
    }

    #[test]
    fn failing_cables_abort_the_jobs_whose_paths_use_them() {
        let f = fabric();
        let jobs = batch(12);
        // cables fail about once per 5 s each (384 cables: one every ~13 ms)
        let fm = FailureModel {
            mtbf_ns: vec![f64::INFINITY; 128],
            repair_ns: 1.0e6,
            link_mtbf_ns: 5.0e9,
        };
        let r = run_batch(&f, &jobs, &fm, &params(PlacementPolicy::Topology, 3)).unwrap();
        assert!(
            r.aborted_link > 0 && r.aborted_node == 0,
            "{} {}",
            r.aborted_link,
            r.aborted_node
        );
        check_invariants(&r, 12, 50);
        for run in &r.log {
            let paths: std::collections::HashSet<String> = jobs[run.job]
                .profile
                .phases
                .iter()
                .flatten()
                .flat_map(|m| f.path(run.nodes[m.src], run.nodes[m.dst]))
                .flat_map(|l| [f.link_name(l), f.link_name(f.reverse(l))])
                .collect();
            let hit = r
                .link_failures
                .iter()
                .find(|(tf, c)| paths.contains(c) && *tf >= run.start_ns && *tf < run.end_ns);
            match &run.outcome {
                Outcome::Completed => assert!(hit.is_none(), "{run:?} completed over {hit:?}"),
                Outcome::LinkFailed { link } => {
                    assert!(paths.contains(link), "{link} is not on the job's paths");
                    assert!(r.link_failures.contains(&(run.end_ns, link.clone())));
                }
                // placed while a cable on its paths was down for repair
                Outcome::DeadLink => {}
                o => panic!("unexpected {o:?}"),
            }
        }
        assert_eq!(
            r,
            run_batch(&f, &jobs, &fm, &params(PlacementPolicy::Topology, 3)).unwrap()
        );
    }

    #[test]
    fn failure_aware_beats_linear_when_some_nodes_are_fragile() {
        let f = fabric();
        let jobs = batch(12);
        // the first 32 nodes (where linear placement starts) fail often
        let mtbf: Vec<f64> = (0..128)
            .map(|n| if n < 32 { 2.0e7 } else { 2.0e10 })
            .collect();
        let fm = FailureModel {
            mtbf_ns: mtbf,
            repair_ns: 1.0e6,
            link_mtbf_ns: f64::INFINITY,
        };
        // Fewer aborts with link sharing on or off; the batch time is
        // compared with jobs timed alone: the placements ignore the links
        // of jobs already running, and with sharing on this batch comes out
        // 0.5 % longer than linear's (BENCHMARKS.md "Job studies").
        for contention in [true, false] {
            let bp = |p| BatchParams {
                contention,
                ..params(p, 9)
            };
            let lin = run_batch(&f, &jobs, &fm, &bp(PlacementPolicy::Linear)).unwrap();
            let fa = run_batch(&f, &jobs, &fm, &bp(PlacementPolicy::Failure)).unwrap();
            check_invariants(&lin, 12, 50);
            check_invariants(&fa, 12, 50);
            assert!(
                fa.aborted_ratio < lin.aborted_ratio,
                "contention {contention}: failure-aware {} vs linear {}",
                fa.aborted_ratio,
                lin.aborted_ratio
            );
        }
        let bp = |p| BatchParams {
            contention: false,
            ..params(p, 9)
        };
        let lin = run_batch(&f, &jobs, &fm, &bp(PlacementPolicy::Linear)).unwrap();
        let fa = run_batch(&f, &jobs, &fm, &bp(PlacementPolicy::Failure)).unwrap();
        assert!(
            fa.completion_ns < lin.completion_ns,
            "failure-aware {} vs linear {}",
            fa.completion_ns,
            lin.completion_ns
        );
    }

    /// Two 64-rank halos at once: in linear blocks (separate z halves) they
    /// share no link and the contention term changes nothing; placed at
    /// random they share links and both run longer than timed alone.
    #[test]
    fn running_jobs_sharing_links_take_longer() {
        let f = fabric();
        let jobs: Vec<JobSpec> = (0..2)
            .map(|_| JobSpec {
                profile: Profile::halo3d(64, 65_536).unwrap(),
                iterations: 10,
                compute_ns: 0.0,
            })
            .collect();
        let fm = FailureModel {
            mtbf_ns: vec![f64::INFINITY; 128],
            repair_ns: 0.0,
            link_mtbf_ns: f64::INFINITY,
        };
        let run = |policy, contention| {
            let bp = BatchParams {
                contention,
                ..params(policy, 3)
            };
            let r = run_batch(&f, &jobs, &fm, &bp).unwrap();
            assert_eq!(r.completed, 2);
            r.log
                .iter()
                .map(|x| (x.start_ns, x.end_ns))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            run(PlacementPolicy::Linear, true),
            run(PlacementPolicy::Linear, false)
        );
        let (on, off) = (
            run(PlacementPolicy::Random, true),
            run(PlacementPolicy::Random, false),
        );
        for (a, b) in on.iter().zip(&off) {
            assert_eq!(a.0, 0.0, "both start at once");
            assert!(a.1 > 1.02 * b.1, "shared {a:?} vs alone {b:?}");
        }
    }

    /// EASY backfill: a 100-rank job (the head) waits behind a 64-rank one
    /// on 128 nodes, so 28 nodes are left over at its reservation. Behind
    /// it: a long 40-rank job (would run past the reservation on more than
    /// 28 nodes: waits), a short 40-rank job (ends by the reservation:
    /// starts at once) and a long 16-rank job (fits in the 28: starts at
    /// once). FCFS starts none of them before the head; the head never
    /// starts later than under FCFS; the jobs end sooner on average. Timed without
    /// link sharing, so only the queue differs (with sharing, backfilled
    /// jobs can slow the running ones: the estimate is timed alone).
    #[test]
    fn backfill_starts_short_jobs_without_delaying_the_head() {
        let f = fabric();
        let job = |ranks, iterations| JobSpec {
            profile: Profile::halo3d(ranks, 4096).unwrap(),
            iterations,
            compute_ns: 1.0e5,
        };
        let jobs = vec![
            job(64, 100),
            job(100, 100),
            job(40, 1000),
            job(40, 10),
            job(16, 1000),
        ];
        let fm = FailureModel {
            mtbf_ns: vec![f64::INFINITY; 128],
            repair_ns: 0.0,
            link_mtbf_ns: f64::INFINITY,
        };
        let run = |backfill| {
            let bp = BatchParams {
                backfill,
                contention: false,
                ..params(PlacementPolicy::Linear, 1)
            };
            run_batch(&f, &jobs, &fm, &bp).unwrap()
        };
        let (fcfs, easy) = (run(false), run(true));
        let start = |r: &BatchReport, j: usize| r.log.iter().find(|x| x.job == j).unwrap().start_ns;
        for j in 2..5 {
            assert!(
                start(&fcfs, j) >= start(&fcfs, 1) && start(&fcfs, 1) > 0.0,
                "FCFS: job {j} waits for the head"
            );
        }
        assert!(start(&easy, 2) >= start(&easy, 1), "would delay the head");
        assert_eq!(start(&easy, 3), 0.0, "ends by the reservation");
        assert_eq!(start(&easy, 4), 0.0, "fits in the nodes left over");
        assert!(
            start(&easy, 1) <= start(&fcfs, 1),
            "the head is not delayed"
        );
        // the long 40-rank job ends the batch either way; the others end sooner
        let ends = |r: &BatchReport| r.log.iter().map(|x| x.end_ns).sum::<f64>();
        assert!(ends(&easy) < ends(&fcfs));
        assert!(easy.completion_ns <= fcfs.completion_ns);
        assert_eq!((easy.completed, fcfs.completed), (5, 5));
        // no node holds two running jobs
        for a in &easy.log {
            for b in &easy.log {
                if a.job < b.job && a.start_ns < b.end_ns && b.start_ns < a.end_ns {
                    assert!(a.nodes.iter().all(|x| !b.nodes.contains(x)), "{a:?} {b:?}");
                }
            }
        }
    }

    /// A node failing far more often than the batch is long (and used by
    /// no job, so nothing stops it) is refused after `max_failures`
    /// failures, naming the keys, instead of running without end.
    #[test]
    fn endless_failures_are_refused_naming_the_keys() {
        let f = fabric();
        let mut mtbf_ns = vec![f64::INFINITY; 128];
        mtbf_ns[127] = 1.0;
        let fm = FailureModel {
            mtbf_ns,
            repair_ns: 0.0,
            link_mtbf_ns: f64::INFINITY,
        };
        let jobs = vec![JobSpec {
            profile: Profile::halo3d(16, 4096).unwrap(),
            iterations: 100,
            compute_ns: 1.0e5,
        }];
        let bp = BatchParams {
            max_failures: 1000,
            ..params(PlacementPolicy::Linear, 1)
        };
        let e = run_batch(&f, &jobs, &fm, &bp).unwrap_err();
        assert!(e.is::<TooManyFailures>());
        let e = format!("{e:#}");
        assert!(
            e.starts_with("more than 1000 node and cable failures by "),
            "{e}"
        );
        assert!(e.contains("with 1 jobs still to run"), "{e}");
        assert!(
            e.contains("jobs.node_mtbf_s, jobs.node_mtbf_file, jobs.link_mtbf_s"),
            "{e}"
        );
        // the same batch with a sane MTBF completes
        let fm = FailureModel {
            mtbf_ns: vec![f64::INFINITY; 128],
            ..fm
        };
        assert_eq!(run_batch(&f, &jobs, &fm, &bp).unwrap().completed, 1);
    }
}
