//! Deadlock check: the channel-dependency graph (CDG) of a topology, its
//! dimension-order routing and its VC scheme must be acyclic.
//!
//! A channel is (router, output network port, VC). There is an edge c1 -> c2
//! when some packet can hold c1 while it waits for c2, i.e. when some
//! (source, destination) route uses c1 and then c2 on consecutive hops. The
//! edges are collected by walking routes with the router's own
//! [`RouteCompute`], so the check and the hardware cannot disagree. An edge
//! goes to every VC of the eligible set that route compute returns (a
//! superset of the VC actually chosen), so an acyclic graph proves freedom
//! from deadlock for any choice within the set. Local (injection and
//! ejection) channels cannot be on a cycle (network interfaces always sink
//! packets) and are left out.
//!
//! Speed: under dimension-order routing two consecutive hops lie in at most
//! two dimensions, and the route compute of a router does not look at a
//! coordinate that is already corrected. So all pairs whose source and
//! destination differ in at most two dimensions d, e are walked in the plane
//! where the third coordinate is 0, and the edges found are replicated to
//! every value of the third coordinate (the eligible VC sets do not depend on
//! it). A 16x16x16 torus takes well under a second.

use crate::router::header_fields::Coords;
use crate::router::{RouteCompute, RouterParams};
use crate::topology::Topology;
use anyhow::{bail, Result};
use std::collections::HashSet;
use std::fmt;

/// One channel of the dependency graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Channel {
    /// Router coordinates `[x, y, z]`.
    pub coords: [usize; 3],
    /// Output port number and name (`x+`).
    pub port: usize,
    pub port_name: String,
    /// VC on the link.
    pub vc: usize,
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.coords;
        write!(f, "({x},{y},{z}) {} vc{}", self.port_name, self.vc)
    }
}

/// `Ok` if the CDG of `p` is acyclic, else an error naming one cycle.
pub fn check(p: &RouterParams) -> Result<()> {
    p.validate()?;
    let Some(cycle) = find_cycle(p) else {
        return Ok(());
    };
    let path: Vec<String> = cycle.iter().map(|c| c.to_string()).collect();
    let hint = if (0..3).any(|d| p.topology.is_torus_dim(d)) && p.vcs_per_class < 2 {
        format!(
            "; router.vcs_per_class = {}: a torus dimension needs >= 2 VCs per class (dateline)",
            p.vcs_per_class
        )
    } else {
        String::new()
    };
    bail!(
        "routing can deadlock: cyclic channel dependency through {} channels: {} -> back to {}{hint}",
        cycle.len(),
        path.join(" -> "),
        path[0]
    )
}

/// Channel index layout: `(node * dir_ports + port) * vcs + vc`.
struct Layout {
    dir_ports: usize,
    vcs: usize,
}

impl Layout {
    fn index(&self, node: usize, port: usize, vc: usize) -> u32 {
        ((node * self.dir_ports + port) * self.vcs + vc) as u32
    }
}

/// A cycle of the CDG of `p` (params must be valid), or `None` if it is acyclic.
pub fn find_cycle(p: &RouterParams) -> Option<Vec<Channel>> {
    let t = &p.topology;
    let lay = Layout {
        dir_ports: t.num_dir_ports(),
        vcs: p.num_vcs(),
    };
    if lay.dir_ports == 0 {
        return None;
    }
    let n_chan = t.num_nodes() * lay.dir_ports * lay.vcs;
    let rcs: Vec<RouteCompute> = (0..t.num_nodes())
        .map(|n| RouteCompute::new(p, n))
        .collect();
    let mut edges: Vec<u64> = Vec::new();
    for (d, e, f) in [(0, 1, 2), (0, 2, 1), (1, 2, 0)] {
        let mut hop_pairs: HashSet<u64> = HashSet::new();
        walk_plane(p, &rcs, d, e, &mut hop_pairs);
        for &key in &hop_pairs {
            let u = (key >> 32) as usize;
            let (p1, lo1, hi1) = (
                (key >> 24 & 0xff) as usize,
                (key >> 20 & 15) as usize,
                (key >> 16 & 15) as usize + 1,
            );
            let (p2, lo2, hi2) = (
                (key >> 8 & 0xff) as usize,
                (key >> 4 & 15) as usize,
                (key & 15) as usize + 1,
            );
            for fv in 0..t.dims[f] {
                let mut c = t.coords(u);
                c[f] = fv;
                let u2 = t.node_at(c);
                let (v2, _) = t.neighbour(u2, p1).expect("walked link exists");
                for a in lo1..hi1 {
                    for b in lo2..hi2 {
                        let from = lay.index(u2, p1, a) as u64;
                        let to = lay.index(v2, p2, b) as u64;
                        edges.push(from << 32 | to);
                    }
                }
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    let cycle = cycle_in(n_chan, &edges)?;
    Some(
        cycle
            .into_iter()
            .map(|ci| {
                let ci = ci as usize;
                let vc = ci % lay.vcs;
                let port = ci / lay.vcs % lay.dir_ports;
                let node = ci / lay.vcs / lay.dir_ports;
                Channel {
                    coords: t.coords(node),
                    port,
                    port_name: t.port_name(port),
                    vc,
                }
            })
            .collect(),
    )
}

/// Walk every route between nodes of the plane of dims `d`, `e` (third
/// coordinate 0), for every class, and record consecutive hop pairs as keys
/// `node << 32 | port1 << 24 | lo1 << 20 | (hi1-1) << 16 | port2 << 8 | lo2 << 4 | (hi2-1)`.
fn walk_plane(p: &RouterParams, rcs: &[RouteCompute], d: usize, e: usize, out: &mut HashSet<u64>) {
    let t: &Topology = &p.topology;
    let plane: Vec<usize> = (0..t.num_nodes())
        .filter(|&n| {
            let c = t.coords(n);
            (0..3).all(|i| i == d || i == e || c[i] == 0)
        })
        .collect();
    let local = t.local_port(0);
    for class in 0..p.classes {
        for &src in &plane {
            for &dst in &plane {
                let c = t.coords(dst);
                let dest = Coords {
                    x: c[0] as u8,
                    y: c[1] as u8,
                    z: c[2] as u8,
                    fpga: 0,
                };
                let (mut u, mut in_port, mut in_vc) = (src, local, class * p.vcs_per_class);
                let mut prev: Option<(usize, u64)> = None;
                loop {
                    let r = rcs[u]
                        .compute(dest, in_port, in_vc)
                        .expect("in-range destination");
                    let port = r.port as usize;
                    if port >= t.num_dir_ports() {
                        break;
                    }
                    let hop = (port as u64) << 8 | (r.vc_lo as u64) << 4 | (r.vc_hi as u64 - 1);
                    if let Some((pu, phop)) = prev {
                        out.insert((pu as u64) << 32 | phop << 16 | hop);
                    }
                    prev = Some((u, hop));
                    let (v, back) = t.neighbour(u, port).expect("routes use connected ports");
                    u = v;
                    in_port = back;
                    in_vc = r.vc as usize;
                }
            }
        }
    }
}

/// A cycle in the graph with `n` vertices and sorted edges `from << 32 | to`, by iterative DFS.
fn cycle_in(n: usize, edges: &[u64]) -> Option<Vec<u32>> {
    let mut start = vec![0u32; n + 1];
    for &e in edges {
        start[(e >> 32) as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let target = |i: usize| (edges[i] & 0xffff_ffff) as u32;
    // 0 = unvisited, 1 = on the DFS stack, 2 = done
    let mut colour = vec![0u8; n];
    let mut stack: Vec<(u32, u32)> = Vec::new();
    for root in 0..n {
        if colour[root] != 0 || start[root] == start[root + 1] {
            continue;
        }
        colour[root] = 1;
        stack.push((root as u32, start[root]));
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if *next == start[v as usize + 1] {
                colour[v as usize] = 2;
                stack.pop();
                continue;
            }
            let w = target(*next as usize);
            *next += 1;
            match colour[w as usize] {
                0 => {
                    colour[w as usize] = 1;
                    stack.push((w, start[w as usize]));
                }
                1 => {
                    let at = stack
                        .iter()
                        .position(|&(x, _)| x == w)
                        .expect("grey is on the stack");
                    return Some(stack[at..].iter().map(|&(x, _)| x).collect());
                }
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(dims: [usize; 3], wrap: [bool; 3], vpc: usize) -> RouterParams {
        RouterParams {
            topology: Topology::new(dims, wrap, 1).unwrap(),
            vcs_per_class: vpc,
            ..Default::default()
        }
    }

    #[test]
    fn default_passes_and_one_vc_torus_is_rejected_with_a_cycle() {
        check(&RouterParams::default()).unwrap();
        let p = params([8, 4, 4], [true; 3], 1);
        let e = check(&p).unwrap_err().to_string();
        assert!(e.contains("cyclic channel dependency"), "{e}");
        assert!(e.contains("router.vcs_per_class = 1"), "{e}");
        // the named cycle is a real cycle: consecutive channels are linked
        let cyc = find_cycle(&p).unwrap();
        let t = &p.topology;
        for i in 0..cyc.len() {
            let (a, b) = (&cyc[i], &cyc[(i + 1) % cyc.len()]);
            let (next, _) = t.neighbour(t.node_at(a.coords), a.port).unwrap();
            assert_eq!(t.coords(next), b.coords, "{a} -> {b}");
        }
    }

    #[test]
    fn mesh_with_one_vc_passes_and_mixed_torus_needs_two() {
        check(&params([4, 4, 4], [false; 3], 1)).unwrap();
        check(&params([4, 3, 2], [false, true, true], 2)).unwrap();
        check(&params([4, 3, 2], [false, false, true], 3)).unwrap();
        // a 4-ring with one VC and ties to +: 2-hop routes chain all the way round
        let mut plus_ties = params([4, 1, 1], [true, false, false], 1);
        plus_ties.tie_break = crate::router::TieBreak::Plus;
        assert_eq!(find_cycle(&plus_ties).unwrap().len(), 4);
        // a 3-ring: every shortest route is one hop, so no dependency at all
        assert!(find_cycle(&params([3, 1, 1], [true, false, false], 1)).is_none());
        // a 2-ring never continues in the dimension: no cycle even with one VC
        assert!(find_cycle(&params([2, 2, 1], [true, true, false], 1)).is_none());
        // every dim order passes with the dateline scheme
        for order in [[0, 1, 2], [1, 0, 2], [2, 0, 1]] {
            let mut p = params([4, 4, 4], [true; 3], 2);
            p.dim_order = order;
            check(&p).unwrap();
        }
    }

    #[test]
    fn cycle_finder_on_small_graphs() {
        assert_eq!(cycle_in(3, &[1, 1 << 32 | 2]), None);
        let c = cycle_in(3, &[1, 1 << 32 | 2, 2 << 32]).unwrap();
        assert_eq!(c, vec![0, 1, 2]);
    }

    /// Every dateline and tie rule is acyclic with 2 VCs per class on rings
    /// of every size up to 9 (odd, even, a ring of 2), and cyclic with 1.
    #[test]
    fn every_dateline_and_tie_rule_is_checked() {
        use crate::router::{Dateline, TieBreak, VcSelect};
        for dateline in [Dateline::Wrap, Dateline::Entry] {
            for tie_break in [TieBreak::Plus, TieBreak::Parity] {
                for k in 2..=9 {
                    let mut p = params([k, 3, 4], [true; 3], 2);
                    (p.dateline, p.tie_break) = (dateline, tie_break);
                    p.vc_select = VcSelect::Free;
                    assert!(find_cycle(&p).is_none(), "{dateline:?} {tie_break:?} k={k}");
                    p.vcs_per_class = 3;
                    assert!(find_cycle(&p).is_none(), "{dateline:?} {tie_break:?} k={k}");
                    // one VC on a single ring: a cycle once 2-hop routes chain
                    // all the way round (a ring of 4 only with every tie going +)
                    let mut r = params([k, 1, 1], [true; 3], 1);
                    (r.dateline, r.tie_break) = (dateline, tie_break);
                    assert_eq!(
                        find_cycle(&r).is_some(),
                        k >= 5 || (k == 4 && tie_break == TieBreak::Plus),
                        "{dateline:?} {tie_break:?} k={k}"
                    );
                }
            }
        }
    }
}
