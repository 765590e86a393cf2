//! Rank placement: which free, live router each rank of a job runs on.
//!
//! * `linear`: the lowest-numbered free nodes, rank order (Slurm's default
//!   block allocation: node index `x + X (y + Y z)`, x fastest).
//! * `random`: free nodes drawn at random from the seed.
//! * `topology`: minimise the job's bytes × hops, `Σ_pairs bytes(a, b) ·
//!   hops(π(a), π(b))` over one iteration. Greedy, then local search:
//!   the first rank (the one with the most bytes) goes to the free node
//!   closest to all other free nodes (of up to 64 evenly spread
//!   candidates); then, repeatedly, the unplaced rank with the most bytes
//!   to placed ranks goes to the free node of least added cost (ties: the
//!   node nearest the first one, then the lowest index). Local search then
//!   tries `search_iterations` random moves (swap two ranks, or move a rank
//!   to an unused free node) and keeps each one that lowers the cost.
//! * `failure`: the same search on a cost that also prices failures (our
//!   formulation, in the spirit of CPTF):
//!   `J(π) = Σ_pairs bytes · (hops + D · dead(π(a), π(b)))
//!          + λ · B · Σ_ranks p(π(r))`,
//!   where `dead` is 1 when the dimension-order path either way crosses a
//!   dead link (`D` = [`DEAD_LINK_HOPS`], so any placement that avoids dead
//!   links wins when one exists), `p(n)` is the probability that node `n`
//!   fails during the job's expected run time (`1 − exp(−T / MTBF_n)`),
//!   `B` the job's bytes per iteration and `λ` = `failure_weight`: a
//!   certain failure of one node is priced as λ extra hops for every byte
//!   the job moves (the whole job is lost with it, whatever its rank's
//!   share of the traffic).
//!
//! Every policy returns a one-to-one map onto nodes marked free (free nodes
//! are live: failed nodes are never free), or `None` when there are too
//! few.

use super::profile::Profile;
use super::route::Fabric;
use crate::rng::Rng;
use anyhow::{bail, Result};

/// Hops a byte is charged for crossing a dead link in the failure-aware cost.
pub const DEAD_LINK_HOPS: f64 = 1.0e4;

/// A placement policy (`jobs.placement`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlacementPolicy {
    /// Lowest-numbered free nodes.
    Linear,
    /// Random free nodes.
    Random,
    /// Least bytes × hops.
    Topology,
    /// Least bytes × hops + dead-link and failure-risk cost.
    Failure,
}

impl PlacementPolicy {
    /// Names, as the config key takes them.
    pub const NAMES: [&'static str; 4] = ["linear", "random", "topology", "failure"];

    /// The policy called `name`.
    pub fn by_name(name: &str) -> Result<Self> {
        Ok(match name {
            "linear" => PlacementPolicy::Linear,
            "random" => PlacementPolicy::Random,
            "topology" => PlacementPolicy::Topology,
            "failure" => PlacementPolicy::Failure,
            other => bail!("{other:?} is none of {}", Self::NAMES.join(", ")),
        })
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// What a placement needs besides the profile and the fabric.
#[derive(Clone, Debug)]
pub struct Placement<'a> {
    /// Free (and live) nodes.
    pub free: &'a [bool],
    /// Per node, the probability that it fails during the job (read by `failure`).
    pub risk: &'a [f64],
    /// λ of the failure-aware cost.
    pub failure_weight: f64,
    /// Local-search moves tried.
    pub search_iterations: u64,
}

/// The job's traffic as a weighted graph over ranks.
struct Graph {
    adj: Vec<Vec<(usize, f64)>>,
    total: f64,
}

impl Graph {
    fn of(p: &Profile) -> Graph {
        let mut adj = vec![Vec::new(); p.ranks];
        let mut total = 0.0;
        for ((a, b), bytes) in p.pair_bytes() {
            adj[a].push((b, bytes as f64));
            adj[b].push((a, bytes as f64));
            total += bytes as f64;
        }
        Graph { adj, total }
    }
}

/// The cost the search minimises.
struct Cost<'a> {
    fabric: &'a Fabric,
    risk: Option<(&'a [f64], f64)>,
}

impl Cost<'_> {
    fn pair(&self, a: usize, b: usize) -> f64 {
        let h = self.fabric.hops(a, b) as f64;
        if self.risk.is_some() && (self.fabric.path_is_dead(a, b) || self.fabric.path_is_dead(b, a))
        {
            h + DEAD_LINK_HOPS
        } else {
            h
        }
    }

    fn node(&self, n: usize) -> f64 {
        self.risk.map_or(0.0, |(p, w)| p[n] * w)
    }

    /// Cost of rank `r` on node `n`, against the ranks already in `at`.
    fn of_rank(&self, g: &Graph, at: &[Option<usize>], r: usize, n: usize) -> f64 {
        let mut c = self.node(n);
        for &(s, bytes) in &g.adj[r] {
            if let Some(m) = at[s] {
                c += bytes * self.pair(n, m);
            }
        }
        c
    }
}

/// Bytes × hops of one iteration of `p` with ranks on `nodes`.
pub fn bytes_hops(p: &Profile, fabric: &Fabric, nodes: &[usize]) -> f64 {
    p.pair_bytes()
        .into_iter()
        .map(|((a, b), bytes)| bytes as f64 * fabric.hops(nodes[a], nodes[b]) as f64)
        .sum()
}

/// Place `p` under `policy`; `None` when fewer than `p.ranks` nodes are free.
pub fn place(
    policy: PlacementPolicy,
    p: &Profile,
    fabric: &Fabric,
    ctx: &Placement,
    rng: &mut Rng,
) -> Option<Vec<usize>> {
    let free: Vec<usize> = (0..ctx.free.len()).filter(|&n| ctx.free[n]).collect();
    if free.len() < p.ranks {
        return None;
    }
    match policy {
        PlacementPolicy::Linear => Some(free[..p.ranks].to_vec()),
        PlacementPolicy::Random => {
            let mut f = free;
            for i in 0..p.ranks {
                let j = i + rng.below((f.len() - i) as u64) as usize;
                f.swap(i, j);
            }
            f.truncate(p.ranks);
            Some(f)
        }
        PlacementPolicy::Topology | PlacementPolicy::Failure => {
            let g = Graph::of(p);
            let risk = (policy == PlacementPolicy::Failure)
                .then_some((ctx.risk, ctx.failure_weight * g.total));
            let cost = Cost { fabric, risk };
            let mut at = greedy(&g, &cost, &free);
            local_search(&g, &cost, &free, &mut at, ctx.search_iterations, rng);
            Some(at)
        }
    }
}

fn greedy(g: &Graph, cost: &Cost, free: &[usize]) -> Vec<usize> {
    let n = g.adj.len();
    let f = cost.fabric;
    // Centre: of up to 64 spread candidates, the free node nearest all others
    // (plus its own risk, so the failure-aware search starts on a safe node).
    let stride = free.len().div_ceil(64).max(1);
    let centre = free
        .iter()
        .step_by(stride)
        .map(|&c| {
            let spread: usize = free.iter().map(|&o| f.hops(c, o)).sum();
            (spread as f64 + cost.node(c), c)
        })
        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
        .map(|(_, c)| c)
        .expect("at least one free node");
    let mut at: Vec<Option<usize>> = vec![None; n];
    let mut used = vec![false; f.nodes()];
    let mut pull = vec![0.0f64; n];
    let weight: Vec<f64> = g.adj.iter().map(|a| a.iter().map(|x| x.1).sum()).collect();
    for step in 0..n {
        // The unplaced rank most tied to placed ranks (then the heaviest).
        let r = (0..n)
            .filter(|&r| at[r].is_none())
            .max_by(|&a, &b| {
                pull[a]
                    .total_cmp(&pull[b])
                    .then(weight[a].total_cmp(&weight[b]))
                    .then(b.cmp(&a))
            })
            .expect("an unplaced rank remains");
        let node = if step == 0 {
            centre
        } else {
            free.iter()
                .filter(|&&c| !used[c])
                .map(|&c| (cost.of_rank(g, &at, r, c), f.hops(c, centre), c))
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)))
                .map(|x| x.2)
                .expect("enough free nodes")
        };
        at[r] = Some(node);
        used[node] = true;
        for &(s, bytes) in &g.adj[r] {
            pull[s] += bytes;
        }
    }
    at.into_iter()
        .map(|x| x.expect("every rank placed"))
        .collect()
}

fn local_search(
    g: &Graph,
    cost: &Cost,
    free: &[usize],
    at: &mut [usize],
    iters: u64,
    rng: &mut Rng,
) {
    let n = at.len();
    let mut owner: std::collections::HashMap<usize, usize> =
        at.iter().enumerate().map(|(r, &node)| (node, r)).collect();
    let rank_cost = |at: &[usize], r: usize, node: usize, skip: Option<usize>| -> f64 {
        let mut c = cost.node(node);
        for &(s, bytes) in &g.adj[r] {
            if Some(s) != skip {
                c += bytes * cost.pair(node, at[s]);
            }
        }
        c
    };
    for _ in 0..iters {
        let r = rng.below(n as u64) as usize;
        let target = free[rng.below(free.len() as u64) as usize];
        let from = at[r];
        if target == from {
            continue;
        }
        match owner.get(&target).copied() {
            None => {
                let delta = rank_cost(at, r, target, None) - rank_cost(at, r, from, None);
                if delta < -1e-9 {
                    at[r] = target;
                    owner.remove(&from);
                    owner.insert(target, r);
                }
            }
            Some(s) => {
                // Swap r and s; their mutual pair keeps its distance.
                let before = rank_cost(at, r, from, Some(s)) + rank_cost(at, s, target, Some(r));
                let after = rank_cost(at, r, target, Some(s)) + rank_cost(at, s, from, Some(r));
                if after - before < -1e-9 {
                    at[r] = target;
                    at[s] = from;
                    owner.insert(target, r);
                    owner.insert(from, s);
                }
            }
        }
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

    fn valid(at: &[usize], free: &[bool], ranks: usize) {
        assert_eq!(at.len(), ranks);
        let mut seen = std::collections::HashSet::new();
        for &n in at {
            assert!(free[n], "node {n} is not free");
            assert!(seen.insert(n), "node {n} twice");
        }
    }

    fn ctx<'a>(free: &'a [bool], risk: &'a [f64]) -> Placement<'a> {
        Placement {
            free,
            risk,
            failure_weight: 10.0,
            search_iterations: 20_000,
        }
    }

    #[test]
    fn every_policy_is_a_one_to_one_map_onto_free_nodes() {
        let f = fabric();
        let mut rng = Rng::new(3);
        // a fragmented machine: every third node busy or down
        let free: Vec<bool> = (0..128).map(|n| n % 3 != 1).collect();
        let risk = vec![0.01; 128];
        for p in [
            Profile::halo3d(27, 1000).unwrap(),
            Profile::dataflow(40, 1000, 1).unwrap(),
            Profile::allreduce(85, 64, 4096).unwrap(),
        ] {
            for name in PlacementPolicy::NAMES {
                let pol = PlacementPolicy::by_name(name).unwrap();
                let at = place(pol, &p, &f, &ctx(&free, &risk), &mut rng).unwrap();
                valid(&at, &free, p.ranks);
            }
        }
        let p = Profile::halo3d(86, 1).unwrap();
        assert!(place(
            PlacementPolicy::Topology,
            &p,
            &f,
            &ctx(&free, &risk),
            &mut rng
        )
        .is_none());
        assert_eq!(
            PlacementPolicy::by_name("slurm").unwrap_err().to_string(),
            "\"slurm\" is none of linear, random, topology, failure"
        );
    }

    #[test]
    fn topology_aware_beats_linear_on_bytes_hops() {
        let f = fabric();
        let free = vec![true; 128];
        let risk = vec![0.0; 128];
        for p in [
            Profile::halo3d(64, 1000).unwrap(),
            Profile::halo3d(32, 1000).unwrap(),
            Profile::dataflow(64, 1000, 1).unwrap(),
        ] {
            let lin = place(
                PlacementPolicy::Linear,
                &p,
                &f,
                &ctx(&free, &risk),
                &mut Rng::new(1),
            )
            .unwrap();
            let top = place(
                PlacementPolicy::Topology,
                &p,
                &f,
                &ctx(&free, &risk),
                &mut Rng::new(1),
            )
            .unwrap();
            let (bl, bt) = (bytes_hops(&p, &f, &lin), bytes_hops(&p, &f, &top));
            assert!(bt < 0.9 * bl, "{}: topology {bt} vs linear {bl}", p.name);
        }
    }

    #[test]
    fn failure_aware_avoids_risky_nodes_and_dead_links() {
        let mut f = fabric();
        let free = vec![true; 128];
        // the low half of the machine is risky
        let risk: Vec<f64> = (0..128).map(|n| if n < 64 { 0.5 } else { 0.0 }).collect();
        let p = Profile::halo3d(32, 1000).unwrap();
        let at = place(
            PlacementPolicy::Failure,
            &p,
            &f,
            &ctx(&free, &risk),
            &mut Rng::new(1),
        )
        .unwrap();
        assert!(at.iter().all(|&n| n >= 64), "{at:?}");
        // a dead link in the middle of where topology-aware would go
        let top = place(
            PlacementPolicy::Topology,
            &p,
            &f,
            &ctx(&free, &vec![0.0; 128]),
            &mut Rng::new(1),
        )
        .unwrap();
        let hit = p
            .pair_bytes()
            .keys()
            .map(|&(a, b)| f.path(top[a], top[b]))
            .find(|path| !path.is_empty())
            .unwrap()[0];
        let t = f.router.topology.clone();
        f.kill_link(&format!("{}:{}", hit.node, t.port_name(hit.port)))
            .unwrap();
        let zero = vec![0.0; 128];
        let at = place(
            PlacementPolicy::Failure,
            &p,
            &f,
            &ctx(&free, &zero),
            &mut Rng::new(1),
        )
        .unwrap();
        for &(a, b) in p.pair_bytes().keys() {
            assert!(!f.path_is_dead(at[a], at[b]) && !f.path_is_dead(at[b], at[a]));
        }
    }
}
