//! The fabric a job runs on: the torus, the golden route compute of every
//! router (so a message's path is exactly the one the routers take), dead
//! links, and the flow-level timing of a phase (see [`crate::jobs`]).

use super::profile::Message;
use crate::router::header_fields::Coords;
use crate::router::route_compute::RouteCompute;
use crate::router::RouterParams;
use crate::topology::PortKind;
use anyhow::{bail, Result};
use std::collections::HashMap;

/// A directed router-to-router link: the one leaving `node` through `port`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId {
    /// Router the link leaves.
    pub node: usize,
    /// Its direction port (see [`crate::topology`]).
    pub port: usize,
}

/// Rates and latencies of the flow-level time model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// Link data rate, bytes per ns (`link.gbps / 8`).
    pub link_bytes_per_ns: f64,
    /// NI injection / ejection rate, bytes per ns (one flit per cycle).
    pub ni_bytes_per_ns: f64,
    /// Zero-load latency per hop, ns (router cycles + link latency).
    pub hop_ns: f64,
    /// Latency of injection and ejection, ns (one router traversal).
    pub base_ns: f64,
    /// Largest payload of one packet, bytes.
    pub max_payload: u64,
    /// Header + footer bytes of one packet on the wire.
    pub packet_overhead: u64,
    /// Bytes of one flit.
    pub flit_bytes: u64,
    /// One router cycle, ns.
    pub cycle_ns: f64,
    /// Framed links: PHY words per flit (a link receiver passes a frame on
    /// only after its trailer's CRC, so a packet pays its frame's words and
    /// the trailer at every hop); 0 = ideal wires (cut-through).
    pub frame_words_per_flit: f64,
}

impl Timing {
    /// Bytes on the wire for a message of `bytes` payload.
    pub fn wire_bytes(&self, bytes: u64) -> u64 {
        bytes + bytes.div_ceil(self.max_payload) * self.packet_overhead
    }

    /// Flits of the first packet of a message of `bytes` payload.
    pub fn first_packet_flits(&self, bytes: u64) -> u64 {
        bytes.min(self.max_payload).div_ceil(self.flit_bytes)
            + self.packet_overhead / self.flit_bytes
    }

    /// Zero-load latency of a message's first packet over `hops` hops, ns,
    /// as two parts: the pipeline (`base + hops × hop`, paid once per
    /// phase on top of its bandwidth terms) and the packet's serialization
    /// (its flits after the head, and on framed links its frame's words +
    /// trailer + one register at every hop: a term of the phase's maximum).
    pub fn latency_parts_ns(&self, hops: usize, bytes: u64) -> (f64, f64) {
        let flits = self.first_packet_flits(bytes) as f64;
        let per_hop = if self.frame_words_per_flit > 0.0 {
            flits * self.frame_words_per_flit + 2.0
        } else {
            0.0
        };
        (
            self.base_ns + hops as f64 * self.hop_ns,
            (flits - 1.0 + hops as f64 * per_hop) * self.cycle_ns,
        )
    }
}

/// What one phase of a job asks of the fabric ([`Fabric::phase_demand`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseDemand {
    /// Wire bytes per directed link.
    pub links: HashMap<LinkId, u64>,
    /// The NI, serial-NI and packet serialization terms, ns (the phase
    /// lasts the longest of them and of the link term ...).
    pub own_ns: f64,
    /// ... plus the longest path's pipeline latency, ns.
    pub pipeline_ns: f64,
}

/// The torus, its routing and its dead links.
#[derive(Clone, Debug)]
pub struct Fabric {
    /// The routers (topology, routing order, tie break).
    pub router: RouterParams,
    /// Flow-level rates and latencies.
    pub timing: Timing,
    routes: Vec<RouteCompute>,
    dead: Vec<bool>,
    /// Dead directed links (both directions of a cable count).
    dead_count: usize,
    ports: usize,
}

impl Fabric {
    /// The fabric of `router` (a validated router) with `timing`.
    pub fn new(router: RouterParams, timing: Timing) -> Fabric {
        let t = &router.topology;
        let routes = (0..t.num_nodes())
            .map(|n| RouteCompute::new(&router, n))
            .collect();
        let ports = t.num_dir_ports();
        Fabric {
            dead: vec![false; t.num_nodes() * ports],
            dead_count: 0,
            routes,
            ports,
            router,
            timing,
        }
    }

    /// Number of routers.
    pub fn nodes(&self) -> usize {
        self.routes.len()
    }

    /// Parse a dead link `"node:port"` (port `x+`, `x-`, `y+`, `y-`, `z+`,
    /// `z-`) and mark both directions of the cable dead.
    pub fn kill_link(&mut self, text: &str) -> Result<LinkId> {
        let t = &self.router.topology;
        let Some((n, p)) = text.split_once(':') else {
            bail!("{text:?}: expected node:port such as \"5:x+\"");
        };
        let node: usize = n
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("{text:?}: node {n:?} is not a node index"))?;
        if node >= t.num_nodes() {
            bail!("{text:?}: node {node} is not below {} nodes", t.num_nodes());
        }
        let port = (0..t.num_dir_ports())
            .find(|&q| t.port_name(q) == p.trim())
            .ok_or_else(|| {
                let names: Vec<String> = (0..t.num_dir_ports()).map(|q| t.port_name(q)).collect();
                anyhow::anyhow!("{text:?}: port {p:?} is none of {}", names.join(", "))
            })?;
        if t.neighbour(node, port).is_none() {
            bail!("{text:?}: port {p} of node {node} has no link (mesh boundary)");
        }
        let l = LinkId { node, port };
        self.set_cable(l, true);
        Ok(l)
    }

    /// Whether the directed link is dead.
    pub fn is_dead(&self, l: LinkId) -> bool {
        self.dead[l.node * self.ports + l.port]
    }

    /// Whether any link is dead.
    pub fn any_dead(&self) -> bool {
        self.dead_count > 0
    }

    /// The other direction of the cable of `l`.
    pub fn reverse(&self, l: LinkId) -> LinkId {
        let (node, port) = self
            .router
            .topology
            .neighbour(l.node, l.port)
            .expect("a link id names a connected port");
        LinkId { node, port }
    }

    /// Every cable once, named by its `+` direction.
    pub fn cables(&self) -> Vec<LinkId> {
        let t = &self.router.topology;
        let mut out = Vec::new();
        for node in 0..t.num_nodes() {
            for port in 0..t.num_dir_ports() {
                if let PortKind::Dir { plus: true, .. } = t.port_kind(port) {
                    if t.neighbour(node, port).is_some() {
                        out.push(LinkId { node, port });
                    }
                }
            }
        }
        out
    }

    /// Mark both directions of the cable of `l` dead or alive.
    pub fn set_cable(&mut self, l: LinkId, dead: bool) {
        for d in [l, self.reverse(l)] {
            let i = d.node * self.ports + d.port;
            if self.dead[i] != dead {
                self.dead[i] = dead;
                if dead {
                    self.dead_count += 1;
                } else {
                    self.dead_count -= 1;
                }
            }
        }
    }

    /// `"node:port"` of a link.
    pub fn link_name(&self, l: LinkId) -> String {
        format!("{}:{}", l.node, self.router.topology.port_name(l.port))
    }

    /// The directed links from router `src` to router `dst`, hop by hop
    /// through the golden route compute.
    pub fn path(&self, src: usize, dst: usize) -> Vec<LinkId> {
        let t = &self.router.topology;
        let c = t.coords(dst);
        let dest = Coords {
            x: c[0] as u8,
            y: c[1] as u8,
            z: c[2] as u8,
            fpga: 0,
        };
        let mut out = Vec::new();
        let (mut node, mut in_port, mut in_vc) = (src, t.local_port(0), 0usize);
        loop {
            let r = self.routes[node]
                .compute(dest, in_port, in_vc)
                .expect("a destination inside the torus always routes");
            let port = r.port as usize;
            if let PortKind::Local(_) = t.port_kind(port) {
                return out;
            }
            out.push(LinkId { node, port });
            let (next, back) = t
                .neighbour(node, port)
                .expect("routing uses connected ports");
            node = next;
            in_port = back;
            in_vc = r.vc as usize;
        }
    }

    /// Whether the path from `src` to `dst` crosses a dead link.
    pub fn path_is_dead(&self, src: usize, dst: usize) -> bool {
        self.any_dead() && self.path(src, dst).into_iter().any(|l| self.is_dead(l))
    }

    /// Hops from router `src` to router `dst`.
    pub fn hops(&self, src: usize, dst: usize) -> usize {
        self.router.topology.hops(src, dst)
    }

    /// What one phase asks of the fabric with ranks on `nodes`: wire bytes
    /// per directed link, and the terms no other job changes (NIs, latency).
    pub fn phase_demand(&self, phase: &[Message], nodes: &[usize]) -> PhaseDemand {
        let tm = &self.timing;
        let mut links: HashMap<LinkId, u64> = HashMap::new();
        let mut inj: HashMap<usize, u64> = HashMap::new();
        let mut ej: HashMap<usize, u64> = HashMap::new();
        let (mut pipeline, mut packet) = (0.0f64, 0.0f64);
        let mut paths = Vec::with_capacity(phase.len());
        for m in phase {
            let (a, b) = (nodes[m.src], nodes[m.dst]);
            let w = tm.wire_bytes(m.bytes);
            *inj.entry(a).or_insert(0) += w;
            *ej.entry(b).or_insert(0) += w;
            let path = self.path(a, b);
            let (p, s) = tm.latency_parts_ns(path.len(), m.bytes);
            pipeline = pipeline.max(p);
            packet = packet.max(s);
            for &l in &path {
                *links.entry(l).or_insert(0) += w;
            }
            paths.push((a, w, path));
        }
        let most = |m: &HashMap<usize, u64>| m.values().copied().max().unwrap_or(0) as f64;
        let ni = most(&inj).max(most(&ej)) / tm.ni_bytes_per_ns;
        // An NI sends its messages one after the other (one FIFO per
        // class), each no faster than a link.
        let mut serial: HashMap<usize, u64> = HashMap::new();
        for (a, w, path) in &paths {
            if !path.is_empty() {
                *serial.entry(*a).or_insert(0) += w;
            }
        }
        let serial = most(&serial) / tm.ni_bytes_per_ns.min(tm.link_bytes_per_ns);
        PhaseDemand {
            links,
            own_ns: ni.max(serial).max(packet),
            pipeline_ns: pipeline,
        }
    }

    /// Duration of one phase, ns, with ranks on `nodes` (flow level: the
    /// longest of the busiest link, the busiest NI, the busiest NI's
    /// messages one after the other at the link rate, and a packet's
    /// serialization, plus the longest path's pipeline latency).
    pub fn phase_ns(&self, phase: &[Message], nodes: &[usize]) -> f64 {
        let d = self.phase_demand(phase, nodes);
        let link =
            d.links.values().copied().max().unwrap_or(0) as f64 / self.timing.link_bytes_per_ns;
        link.max(d.own_ns) + d.pipeline_ns
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn timing() -> Timing {
        Timing {
            link_bytes_per_ns: 1.25,
            ni_bytes_per_ns: 2.5,
            hop_ns: 112.8,
            base_ns: 12.8,
            max_payload: 256,
            packet_overhead: 32,
            flit_bytes: 16,
            cycle_ns: 6.4,
            frame_words_per_flit: 0.0,
        }
    }

    #[test]
    fn paths_follow_dimension_order_and_match_hop_counts() {
        let f = Fabric::new(RouterParams::default(), timing());
        let t = &f.router.topology;
        for (a, b) in [(0, 127), (5, 77), (3, 3), (0, 4), (100, 1)] {
            let p = f.path(a, b);
            assert_eq!(p.len(), t.hops(a, b), "{a} -> {b}");
            // consecutive links chain, the last one reaches b
            let mut at = a;
            for l in &p {
                assert_eq!(l.node, at);
                at = t.neighbour(at, l.port).unwrap().0;
            }
            assert_eq!(at, b);
        }
        // zyx: z is corrected first
        let p = f.path(0, t.node_at([1, 1, 1]));
        let names: Vec<String> = p.iter().map(|l| t.port_name(l.port)).collect();
        assert_eq!(names, ["z+", "y+", "x+"]);
    }

    #[test]
    fn dead_links_kill_both_directions_and_only_paths_through_them() {
        let mut f = Fabric::new(RouterParams::default(), timing());
        f.kill_link("0:x+").unwrap();
        assert!(f.path_is_dead(0, 1));
        assert!(f.path_is_dead(1, 0));
        assert!(!f.path_is_dead(0, 7)); // x- way round
        assert!(!f.path_is_dead(0, 8)); // y only
        let e = |s: &str| format!("{:#}", f.clone().kill_link(s).unwrap_err());
        assert!(
            e("0:w+").contains("port \"w+\" is none of x+, x-, y+, y-, z+, z-"),
            "{}",
            e("0:w+")
        );
        assert!(e("128:x+").contains("node 128 is not below 128 nodes"));
        assert!(e("x+").contains("expected node:port"));
        // cables: 3 per node on the 8x4x4 torus; bringing one back clears it
        let cables = f.cables();
        assert_eq!(cables.len(), 3 * 128);
        f.set_cable(LinkId { node: 0, port: 0 }, false);
        assert!(!f.any_dead() && !f.path_is_dead(0, 1));
        assert_eq!(f.link_name(f.reverse(LinkId { node: 0, port: 0 })), "1:x-");
    }

    #[test]
    fn phase_time_is_the_bottleneck() {
        let f = Fabric::new(RouterParams::default(), timing());
        let m = |src, dst, bytes| Message { src, dst, bytes };
        // two 25.6 kB messages over the same link 1 -> 2: 2 x 28800 wire bytes
        // at 1.25 B/ns, plus the pipeline of the 2-hop path
        let ns = f.phase_ns(&[m(0, 2, 25_600), m(1, 2, 25_600)], &[0, 1, 2]);
        assert!(
            (ns - (2.0 * 28_800.0 / 1.25 + 12.8 + 2.0 * 112.8)).abs() < 1e-6,
            "{ns}"
        );
        // a tiny message (3 flits, 40 wire bytes): the pipeline + its bytes at the link rate
        let ns = f.phase_ns(&[m(0, 1, 8)], &[0, 4]);
        assert!(
            (ns - (12.8 + 4.0 * 112.8 + 40.0 / 1.25)).abs() < 1e-6,
            "{ns}"
        );
        // framed links: 3 flits x 2 words + trailer + register at each hop
        let mut g = f.clone();
        g.timing.frame_words_per_flit = 2.0;
        let ns = g.phase_ns(&[m(0, 1, 8)], &[0, 4]);
        assert!(
            (ns - (12.8 + 4.0 * 112.8 + (2.0 + 4.0 * 8.0) * 6.4)).abs() < 1e-6,
            "{ns}"
        );
        // one NI, two messages over different links: one after the other at the link rate
        let ns = f.phase_ns(&[m(0, 1, 25_600), m(0, 2, 25_600)], &[1, 0, 2]);
        assert!(
            (ns - (2.0 * 28_800.0 / 1.25 + 12.8 + 112.8)).abs() < 1e-6,
            "{ns}"
        );
    }
}
