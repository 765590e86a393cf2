//! Cycle-level replay of job profiles through the golden network simulator
//! ([`crate::network`]): the check of the flow-level time model of
//! [`crate::jobs`].
//!
//! Every job runs its profile on its nodes (rank `r` on terminal
//! `nodes[r] × local_ports`, the router's first NI port) with the same
//! dependencies as the flow model: an iteration starts with its compute
//! time (no traffic), then phase by phase, and a phase's messages are all
//! queued at their source NIs in the cycle the phase starts (each one cut
//! into packets of at most the largest payload, in class 0, in message
//! order), and the next phase starts in the cycle after the tail of the
//! phase's last packet reached its destination NI. The packets cross the
//! golden routers and links of the config (framed links with their
//! framing, credits and PHY rate, or ideal wires), so jobs running at the
//! same time share links as they do on the machine, cycle by cycle.
//!
//! Framed links train before the jobs start (cycle 0 is the first one
//! with every link up).
//!
//! The scoreboard checks every packet (delivered once, intact, to the right
//! terminal); a scoreboard error, a deadlock or a run past `max_cycles`
//! fails the replay naming it.

use super::profile::Profile;
use crate::network::{Network, NetworkParams, Workload};
use crate::traffic::{PacketSizes, Pattern};
use anyhow::{bail, Context, Result};
use std::collections::HashMap;

/// One job of a replay.
#[derive(Clone, Copy, Debug)]
pub struct ReplayJob<'a> {
    /// Its profile.
    pub profile: &'a Profile,
    /// Rank `r` runs on router `nodes[r]`.
    pub nodes: &'a [usize],
    /// Iterations to run.
    pub iterations: u64,
    /// Compute cycles at the start of every iteration.
    pub compute_cycles: u64,
}

/// What one job did in a replay.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayedJob {
    /// Cycles of each iteration (compute + phases).
    pub iteration_cycles: Vec<u64>,
    /// Cycles of each phase of the first iteration.
    pub first_phase_cycles: Vec<u64>,
    /// Packets it sent.
    pub packets: u64,
}

impl ReplayedJob {
    /// Mean iteration, cycles.
    pub fn mean_iteration_cycles(&self) -> f64 {
        self.iteration_cycles.iter().sum::<u64>() as f64 / self.iteration_cycles.len().max(1) as f64
    }
}

/// Where a job is in its profile.
struct State {
    iteration: u64,
    phase: usize,
    /// Packets of the current phase not yet delivered.
    outstanding: u64,
    /// Cycle the current iteration started.
    iter_start: u64,
    /// Cycle the current phase started (or starts, after the compute).
    phase_start: u64,
    /// Whether the current phase's messages are queued.
    sent: bool,
    done: bool,
}

/// Replay `jobs` together, all starting at cycle 0, on the network of
/// `net` (its workload is replaced: the jobs are the only traffic; source
/// queues are unbounded, as an NI's descriptor queue holds a whole
/// message). Fails past `max_cycles`, on a deadlock or a scoreboard error.
pub fn replay(
    net: &NetworkParams,
    jobs: &[ReplayJob],
    max_cycles: u64,
) -> Result<Vec<ReplayedJob>> {
    let mut p = net.clone();
    p.workload = Workload::Synthetic {
        pattern: Pattern::Uniform,
        rate: 0.0,
        sizes: PacketSizes::default(),
        class1_fraction: 0.0,
    };
    p.source_queue_limit = 0;
    let mut n = Network::new(&p).context("building the network of the replay")?;
    n.record_deliveries(true);
    // Framed links train first: the jobs start once every link end is up
    // (cycle numbers below count from there).
    let mut warm = 0u64;
    while n
        .link_ends()
        .iter()
        .any(|e| e.rx.outputs().status.state != crate::link::LinkState::Up)
    {
        if warm >= max_cycles {
            bail!("replay: the links are not up after {max_cycles} cycles");
        }
        n.step();
        warm += 1;
    }
    let locals = p.router.topology.local_ports;
    let nodes = p.router.topology.num_nodes();
    let max_payload = p.max_payload() as u64;
    let mut used = vec![usize::MAX; nodes];
    for (j, job) in jobs.iter().enumerate() {
        if job.nodes.len() != job.profile.ranks {
            bail!(
                "replay: job {j} ({}) has {} ranks on {} nodes",
                job.profile.name,
                job.profile.ranks,
                job.nodes.len()
            );
        }
        for &x in job.nodes {
            if x >= nodes {
                bail!("replay: job {j} on node {x}, the network has {nodes}");
            }
            if used[x] != usize::MAX {
                bail!("replay: node {x} holds ranks of jobs {} and {j}", used[x]);
            }
            used[x] = j;
        }
    }
    let mut st: Vec<State> = jobs
        .iter()
        .map(|j| State {
            iteration: 0,
            phase: 0,
            outstanding: 0,
            iter_start: 0,
            phase_start: j.compute_cycles,
            sent: false,
            done: j.iterations == 0,
        })
        .collect();
    let mut out: Vec<ReplayedJob> = jobs
        .iter()
        .map(|_| ReplayedJob {
            iteration_cycles: Vec::new(),
            first_phase_cycles: Vec::new(),
            packets: 0,
        })
        .collect();
    let mut owner: HashMap<u64, usize> = HashMap::new();
    loop {
        let t = n.cycle() - warm;
        // Start the phases due now; a phase with no messages ends at once.
        for (j, job) in jobs.iter().enumerate() {
            let s = &mut st[j];
            while !s.done && !s.sent && s.phase_start <= t {
                let phases = &job.profile.phases;
                if s.phase < phases.len() {
                    for m in &phases[s.phase] {
                        let (a, b) = (job.nodes[m.src] * locals, job.nodes[m.dst] * locals);
                        let mut left = m.bytes;
                        while left > 0 {
                            let chunk = left.min(max_payload);
                            left -= chunk;
                            let id = n
                                .send(a, b, chunk as usize, 0)
                                .context("replay: source queue refused a packet")?;
                            owner.insert(id, j);
                            s.outstanding += 1;
                            out[j].packets += 1;
                        }
                    }
                }
                s.sent = true;
                if s.outstanding == 0 {
                    finish_phase(s, &mut out[j], job, t);
                }
            }
        }
        if st.iter().all(|s| s.done) {
            break;
        }
        if t >= max_cycles {
            let left: Vec<String> = st
                .iter()
                .enumerate()
                .filter(|(_, s)| !s.done)
                .map(|(j, s)| {
                    format!(
                        "job {j} at iteration {} phase {} ({} packets outstanding)",
                        s.iteration, s.phase, s.outstanding
                    )
                })
                .collect();
            bail!(
                "replay: not done after {max_cycles} cycles: {}",
                left.join("; ")
            );
        }
        n.step();
        if let Some(d) = n.deadlock() {
            bail!(
                "replay: deadlock at cycle {}: no flit moved for {} cycles with {} flits in the network",
                d.cycle,
                d.stalled_for,
                d.flits_in_network
            );
        }
        let (errs, count) = n.errors();
        if count > 0 {
            bail!("replay: {count} scoreboard errors, first: {}", errs[0]);
        }
        // The cycle the tails were consumed in is the one just stepped.
        let done_at = n.cycle() - warm - 1;
        for id in n.take_delivered() {
            let Some(j) = owner.remove(&id) else {
                bail!("replay: packet {id} delivered that no job sent");
            };
            let s = &mut st[j];
            s.outstanding -= 1;
            if s.outstanding == 0 {
                finish_phase(s, &mut out[j], &jobs[j], done_at + 1);
            }
        }
    }
    Ok(out)
}

/// The current phase of `s` ended; the next one starts at cycle `t`.
fn finish_phase(s: &mut State, out: &mut ReplayedJob, job: &ReplayJob, t: u64) {
    if s.iteration == 0 {
        out.first_phase_cycles.push(t - s.phase_start);
    }
    s.phase += 1;
    s.sent = false;
    s.phase_start = t;
    if s.phase >= job.profile.phases.len().max(1) {
        out.iteration_cycles.push(t - s.iter_start);
        s.iteration += 1;
        s.phase = 0;
        s.iter_start = t;
        s.phase_start = t + job.compute_cycles;
        if s.iteration == job.iterations {
            s.done = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::profile::Message;
    use crate::router::RouterParams;
    use crate::topology::Topology;

    fn net(dims: [usize; 3]) -> NetworkParams {
        NetworkParams {
            router: RouterParams {
                topology: Topology::new(dims, [true; 3], 1).unwrap(),
                ..RouterParams::default()
            },
            link_latency: 2,
            ..NetworkParams::default()
        }
    }

    #[test]
    fn one_packet_takes_the_zero_load_latency_and_iterations_chain() {
        // One 256 B packet (18 flits) over 1 hop: T0 = R (H + 1) + L H + F - 1 = 4 + 2 + 17.
        let p = Profile {
            name: "one".into(),
            ranks: 2,
            phases: vec![vec![Message {
                src: 0,
                dst: 1,
                bytes: 256,
            }]],
        };
        let nodes = [0, 1];
        let job = ReplayJob {
            profile: &p,
            nodes: &nodes,
            iterations: 3,
            compute_cycles: 10,
        };
        let r = replay(&net([4, 1, 1]), &[job], 10_000).unwrap();
        assert_eq!(r[0].packets, 3);
        assert_eq!(r[0].first_phase_cycles, vec![23 + 1]);
        assert_eq!(r[0].iteration_cycles, vec![34, 34, 34]);
    }

    #[test]
    fn bad_jobs_are_refused_naming_the_job() {
        let p = Profile::halo3d(4, 64).unwrap();
        let nodes = [0, 1, 2, 2];
        let job = ReplayJob {
            profile: &p,
            nodes: &nodes,
            iterations: 1,
            compute_cycles: 0,
        };
        let e = format!("{:#}", replay(&net([4, 1, 1]), &[job], 1000).unwrap_err());
        assert!(e.contains("node 2 holds ranks of jobs 0 and 0"), "{e}");
        let e = format!(
            "{:#}",
            replay(
                &net([4, 1, 1]),
                &[ReplayJob {
                    nodes: &nodes[..3],
                    ..job
                }],
                1000
            )
            .unwrap_err()
        );
        assert!(e.contains("job 0 (halo3d) has 4 ranks on 3 nodes"), "{e}");
        let nodes = [0, 1, 2, 3];
        let e = format!(
            "{:#}",
            replay(
                &net([4, 1, 1]),
                &[ReplayJob {
                    nodes: &nodes,
                    ..job
                }],
                5
            )
            .unwrap_err()
        );
        assert!(
            e.contains("not done after 5 cycles: job 0 at iteration 0 phase 0"),
            "{e}"
        );
    }
}
