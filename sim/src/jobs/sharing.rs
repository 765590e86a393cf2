//! Jobs that run at the same time share links: the flow model's iteration
//! time of each running job given the others' link loads.
//!
//! # Model (fair share with duty cycles)
//! A job `j` alone has an iteration time `T_j` and puts `B_j(l)` wire bytes
//! per iteration on directed link `l`, so it keeps `l` busy a share
//! `u_j(l) = min(1, B_j(l) / (R · T_j))` of the time (`R` the link rate).
//! While job `i` sends its phase's `L_i(l)` bytes over `l`, the others
//! take their duty share of the link on average, and round-robin
//! arbitration between packets never leaves `i` less than an even share
//! among the jobs that use `l` (`n_l` of them, `i` included), so `i` gets
//!
//! `s_i(l) = max(1 − Σ_{j≠i} u_j(l), 1 / n_l)`
//!
//! of the link, and the link term of its phase is
//! `max_l L_i(l) / (R · s_i(l))` (the NI, serialization and pipeline
//! terms of [`Fabric::phase_ns`] are its own: jobs do not share nodes). Slower jobs use links less, so the `T_j` are a
//! fixed point, found by damped iteration from the times alone. Two jobs
//! that saturate the same link (no compute) each get half of it; a job that
//! is busy on it 20 % of the time slows the other by 1 / 0.8.
//!
//! Why not a phase-by-phase overlap: the jobs' phases drift against each
//! other (different iteration times, compute), so over the many iterations
//! of a run the overlap a phase meets is the others' average duty; the
//! cycle-level check (`exanet simulate --validate` with two jobs) measures
//! what this leaves out.

use super::profile::Profile;
use super::route::{Fabric, LinkId};
use std::collections::HashMap;

/// One phase's own demands.
#[derive(Clone, Debug, Default)]
struct PhaseLoad {
    /// Wire bytes per directed link.
    links: Vec<(LinkId, u64)>,
    /// Its NI and serialization terms, ns (the part no other job changes) ...
    own_ns: f64,
    /// ... and its pipeline latency, added.
    pipeline_ns: f64,
}

/// A job's loads on its placement (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct JobLoad {
    phases: Vec<PhaseLoad>,
    /// Wire bytes per iteration per directed link.
    per_iteration: HashMap<LinkId, u64>,
    compute_ns: f64,
}

impl JobLoad {
    /// The loads of `p` with ranks on `nodes`.
    pub fn of(fabric: &Fabric, p: &Profile, compute_ns: f64, nodes: &[usize]) -> JobLoad {
        let mut per_iteration: HashMap<LinkId, u64> = HashMap::new();
        let phases = p
            .phases
            .iter()
            .map(|ph| {
                let d = fabric.phase_demand(ph, nodes);
                let mut links: Vec<(LinkId, u64)> = d.links.into_iter().collect();
                links.sort_unstable();
                for &(l, w) in &links {
                    *per_iteration.entry(l).or_insert(0) += w;
                }
                PhaseLoad {
                    links,
                    own_ns: d.own_ns,
                    pipeline_ns: d.pipeline_ns,
                }
            })
            .collect();
        JobLoad {
            phases,
            per_iteration,
            compute_ns,
        }
    }

    /// Iteration time, ns, when on each link `l` this job gets the share
    /// `share(l)` of the link rate.
    fn iteration_ns(&self, link_bytes_per_ns: f64, share: impl Fn(LinkId) -> f64) -> f64 {
        self.compute_ns
            + self
                .phases
                .iter()
                .map(|ph| {
                    let link = ph
                        .links
                        .iter()
                        .map(|&(l, w)| w as f64 / (link_bytes_per_ns * share(l)))
                        .fold(0.0, f64::max);
                    link.max(ph.own_ns) + ph.pipeline_ns
                })
                .sum::<f64>()
    }

    /// Iteration time alone on the machine, ns.
    pub fn alone_ns(&self, fabric: &Fabric) -> f64 {
        self.iteration_ns(fabric.timing.link_bytes_per_ns, |_| 1.0)
    }
}

/// Rounds of the fixed-point iteration at most.
const ROUNDS: usize = 50;

/// Iteration time of each of `jobs`, running at the same time, ns.
pub fn shared_iteration_ns(fabric: &Fabric, jobs: &[&JobLoad]) -> Vec<f64> {
    let rate = fabric.timing.link_bytes_per_ns;
    let mut t: Vec<f64> = jobs.iter().map(|j| j.alone_ns(fabric)).collect();
    if jobs.len() < 2 {
        return t;
    }
    // Which jobs use each link: only links two jobs share matter.
    let mut users: HashMap<LinkId, Vec<usize>> = HashMap::new();
    for (i, j) in jobs.iter().enumerate() {
        for &l in j.per_iteration.keys() {
            users.entry(l).or_default().push(i);
        }
    }
    users.retain(|_, v| v.len() > 1);
    if users.is_empty() {
        return t;
    }
    for _ in 0..ROUNDS {
        let duty = |j: usize, l: LinkId, t: &[f64]| -> f64 {
            let b = jobs[j].per_iteration.get(&l).copied().unwrap_or(0) as f64;
            if t[j] > 0.0 {
                (b / (rate * t[j])).min(1.0)
            } else {
                1.0
            }
        };
        let next: Vec<f64> = (0..jobs.len())
            .map(|i| {
                jobs[i].iteration_ns(rate, |l| match users.get(&l) {
                    None => 1.0,
                    Some(us) => {
                        let others: f64 = us
                            .iter()
                            .filter(|&&j| j != i)
                            .map(|&j| duty(j, l, &t))
                            .sum();
                        (1.0 - others).max(1.0 / us.len() as f64)
                    }
                })
            })
            .collect();
        let mut change = 0.0f64;
        for (a, b) in t.iter_mut().zip(next) {
            let new = 0.5 * (*a + b);
            change = change.max((new - *a).abs() / a.max(1e-9));
            *a = new;
        }
        if change < 1e-6 {
            break;
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::profile::Message;
    use crate::jobs::route::tests::timing;
    use crate::router::RouterParams;

    fn line(bytes: u64) -> Profile {
        Profile {
            name: "pair".into(),
            ranks: 2,
            phases: vec![vec![Message {
                src: 0,
                dst: 1,
                bytes,
            }]],
        }
    }

    #[test]
    fn alone_matches_the_phase_model() {
        let f = Fabric::new(RouterParams::default(), timing());
        let p = Profile::halo3d(16, 25_600).unwrap();
        let nodes: Vec<usize> = (0..16).map(|i| i * 5 % 128).collect();
        let alone = JobLoad::of(&f, &p, 1000.0, &nodes).alone_ns(&f);
        let want = 1000.0
            + p.phases
                .iter()
                .map(|ph| f.phase_ns(ph, &nodes))
                .sum::<f64>();
        assert!((alone - want).abs() < 1e-6, "{alone} vs {want}");
    }

    #[test]
    fn jobs_sharing_a_link_slow_down_and_disjoint_ones_do_not() {
        let f = Fabric::new(RouterParams::default(), timing());
        // 0 -> 2 and 1 -> 3 share links 1 -> 2 (x+); 0 -> 1 and 2 -> 3 share none.
        let p = line(256_000);
        let a = JobLoad::of(&f, &p, 0.0, &[0, 2]);
        let b = JobLoad::of(&f, &p, 0.0, &[1, 3]);
        let alone = a.alone_ns(&f);
        let t = shared_iteration_ns(&f, &[&a, &b]);
        // both saturate the link: each gets half
        for x in &t {
            assert!((x / alone - 2.0).abs() < 0.01, "{x} vs alone {alone}");
        }
        let c = JobLoad::of(&f, &p, 0.0, &[0, 1]);
        let d = JobLoad::of(&f, &p, 0.0, &[2, 3]);
        let t = shared_iteration_ns(&f, &[&c, &d]);
        assert_eq!(t, vec![c.alone_ns(&f), d.alone_ns(&f)]);
        // a job busy on the link 1/5 of its time slows the other by about 1 / 0.8
        let comm = a.alone_ns(&f);
        let e = JobLoad::of(&f, &p, 4.0 * comm, &[1, 3]);
        let t = shared_iteration_ns(&f, &[&a, &e]);
        assert!(
            t[0] > 1.15 * comm && t[0] < 1.3 * comm,
            "{} vs {comm}",
            t[0]
        );
        assert!(t[1] > 5.0 * comm, "the busy job slows too");
    }
}
