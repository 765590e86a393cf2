//! Golden model of the whole node top (`exanet_hdl::node`, module
//! `exanet_node`): the golden NI ([`crate::ni::Ni`], transaction level,
//! as every NI bench drives it), the **router** ([`Router`], cycle-true) and
//! one [`NodeLinkEnd`] per network port of the router (cycle-true in both
//! clock domains), joined as the RTL joins them, plus the PL reset
//! synchronizer (`rst` → `pl_rst`).
//!
//! # Stepping
//! [`GoldenNode::edge`] is one instant at which the PL clock, some link's
//! user clock, or several of them rise; every register samples what the
//! outputs showed before the instant (as [`NodeLinkEnd::edge`] does).
//!
//! # Wiring (PL domain), as `hdl/templates/node/node.v` joins the blocks
//! - router output on network port `i` → link end `i`'s `link_tx`, during
//!   the same cycle; `link_tx`'s credit → the router's credit input on port
//!   `i`;
//! - link end `i`'s `link_rx` flit → router input `i` (on the router's input
//!   the cycle after `link_rx` registered it); the router's credit out on
//!   input port `i` (one VC) → `link_rx`'s `router_credit` (bit `vc`);
//! - the router's **local port** (port `num_dir_ports`) is the NI side: the
//!   flits the NI sends and the credits the ejection adapter returns go in
//!   through [`NodePlInputs`]; the flits the router ejects and the credits it
//!   returns to the NI come out in [`NodeOutputs`]. The NI and the ejection
//!   adapter are compared per transaction (the golden NI has no clock), so
//!   the bench drives this side from what the RTL NI and adapter do and
//!   checks them against the golden NI ([`GoldenNode::ni_mut`]).
//! - `pl_rst` resets the router and every link end's PL side; each link's
//!   user side takes `rst` through its own synchronizer.
//! - the node's AXI4-Lite slave goes through the golden `axil_split`
//!   ([`AxilSplit`], [`super::axil_split_params`]): `m0` (below
//!   [`super::LINK_STATUS_BASE`]) is the NI, whose responses the bench
//!   gives in [`NodePlInputs::axil`] (`m[0]`, from the RTL NI; the golden
//!   NI checks them per transaction); `m1` is the golden `link_status`
//!   ([`LinkStatus`]) of every link of the node, which samples, in the
//!   cycle it takes a read, each link's `link_rx` state and its
//!   `link_tx` + `link_rx` counters as they were before the edge (what the
//!   RTL's counter registers show). Both reset with `pl_rst`.

use super::{LinkEndOutputs, NodeLinkEnd, PlInputs, UserInputs};
use crate::common::async_fifo::{AsyncFifoParams, ResetSync};
use crate::common::axil_split::{AxilSplit, AxilSplitInputs, AxilSplitOutputs, MasterInputs};
use crate::link::status::{self, LinkSample, LinkStatus, Reg, StatusInputs};
use crate::link::{LinkCounters, LinkParams, LinkState};
use crate::ni::{Ni, NiParams};
use crate::packet::coords::Coords;
use crate::router::flit::Flit;
use crate::router::model::{Router, RouterCounters, RouterInputs};
use crate::router::params::RouterParams;
use anyhow::{bail, Context, Result};

/// What the golden node is built from (the node top's parameters).
#[derive(Clone, Debug)]
pub struct GoldenNodeParams {
    /// The router (its topology names the node's network ports).
    pub router: RouterParams,
    /// The link layer of every network port.
    pub link: LinkParams,
    /// The PHY-word crossings (`width` = [`super::PHY_FIFO_WIDTH`]).
    pub cdc: AsyncFifoParams,
    /// Flops of every reset / channel_up synchronizer.
    pub reset_stages: u32,
    /// The NI.
    pub ni: NiParams,
}

/// PL-domain inputs of the node at a PL clock edge.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodePlInputs {
    /// The node's `rst` (the PS reset), before its PL synchronizer.
    pub rst: bool,
    /// The flit the NI drives into the router's local input.
    pub local_flit: Option<Flit>,
    /// The credit (VC) the ejection adapter returns to the router's local output.
    pub local_credit: Option<u8>,
    /// The node's AXI4-Lite slave inputs (`s_*`, from software) and the
    /// NI's responses on `axil_split`'s `m0` (`m[0]`); `m[1]` and `reset`
    /// are ignored (the golden `link_status` and `pl_rst` drive them).
    pub axil: AxilSplitInputs,
}

/// A read the golden `link_status` took: its address (relative to
/// [`super::LINK_STATUS_BASE`]) and what it sampled, so a bench can check
/// the value software gets against the link ends' own counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusRead {
    /// Byte address inside the status page.
    pub addr: u32,
    /// PL cycle (of this node) of the read's AR handshake.
    pub cycle: u64,
    /// Per link: `link_rx`'s state, `link_tx`'s and `link_rx`'s counters,
    /// and the RX crossing's overflow counter as the PL domain sees it.
    pub links: Vec<(LinkState, LinkCounters, LinkCounters, u32)>,
}

/// What the node shows between edges (functions of its registers).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeOutputs {
    /// The synchronized PL reset.
    pub pl_rst: bool,
    /// The router's flit on its local output (into the ejection adapter).
    pub local_flit: Option<Flit>,
    /// The router's credit (VC) to the NI for its local input.
    pub local_credit: Option<u8>,
    /// Per network port: the link end.
    pub links: Vec<LinkEndOutputs>,
    /// `axil_split`'s outputs: the node's AXI4-Lite slave (`s_*`), the
    /// NI's inputs (`m[0]`), `link_status`'s inputs (`m[1]`).
    pub axil: AxilSplitOutputs,
}

/// The golden node.
#[derive(Clone, Debug)]
pub struct GoldenNode {
    p: GoldenNodeParams,
    node: usize,
    ni: Ni,
    router: Router,
    links: Vec<NodeLinkEnd>,
    pl_rst: ResetSync,
    pl_cycles: u64,
    split: AxilSplit,
    status: LinkStatus,
    /// The last read `status` took.
    status_read: Option<StatusRead>,
    /// Decode mutations for negative tests: register indices swapped,
    /// link indices swapped.
    status_swap: Option<(usize, usize)>,
    status_link_swap: Option<(usize, usize)>,
    /// The link ends' outputs before the instant being stepped (one buffer,
    /// refilled at every edge: `edge` is on a co-simulation's hot path).
    before: Vec<LinkEndOutputs>,
}

impl GoldenNode {
    /// The node at index `node` of `p.router.topology`, at power-on.
    pub fn new(p: &GoldenNodeParams, node: usize) -> Result<Self> {
        let topo = &p.router.topology;
        if topo.local_ports != 1 {
            bail!(
                "node: router.topology.local_ports = {}: the node top has one NI (1 local port)",
                topo.local_ports
            );
        }
        if p.link.vcs != p.router.num_vcs() {
            bail!(
                "node: link.vcs = {} but the router has {} VCs per port",
                p.link.vcs,
                p.router.num_vcs()
            );
        }
        let router = Router::new(&p.router, node).context("node: router")?;
        let links = (0..topo.num_dir_ports())
            .map(|i| {
                NodeLinkEnd::new(&p.link, &p.cdc, p.reset_stages)
                    .with_context(|| format!("node: link end {i}"))
            })
            .collect::<Result<Vec<_>>>()?;
        let [x, y, z] = topo.coords(node);
        let me = Coords::new(x as u8, y as u8, z as u8, 0).context("node: coordinates")?;
        let ni = Ni::new(&p.ni, me).context("node: NI")?;
        Ok(GoldenNode {
            p: p.clone(),
            node,
            ni,
            router,
            links,
            pl_rst: ResetSync::new(p.reset_stages).context("node: PL reset synchronizer")?,
            pl_cycles: 0,
            split: AxilSplit::new(&super::axil_split_params()).context("node: axil_split")?,
            status: LinkStatus::new(topo.num_dir_ports()).context("node: link_status")?,
            status_read: None,
            status_swap: None,
            status_link_swap: None,
            before: Vec::with_capacity(topo.num_dir_ports()),
        })
    }

    /// The router's local port (the NI's).
    pub fn local_port(&self) -> usize {
        self.links.len()
    }

    /// Network ports (one link end each).
    pub fn num_links(&self) -> usize {
        self.links.len()
    }

    /// Every output now.
    pub fn outputs(&self) -> NodeOutputs {
        let l = self.local_port();
        NodeOutputs {
            pl_rst: self.pl_rst.output(),
            local_flit: self.router.out_flit(l).copied(),
            local_credit: self.router.credit_out(l),
            links: self.links.iter().map(NodeLinkEnd::outputs).collect(),
            axil: self.split.outputs(),
        }
    }

    /// `axil_split`'s outputs now (the node's AXI4-Lite slave, the NI's
    /// and `link_status`'s inputs).
    pub fn axil_outputs(&self) -> AxilSplitOutputs {
        self.split.outputs()
    }

    /// The last read the golden `link_status` took (see [`StatusRead`]).
    pub fn last_status_read(&self) -> Option<&StatusRead> {
        self.status_read.as_ref()
    }

    /// For a bench's negative test only: the golden `link_status` answers
    /// register `a` of a link with register `b`'s value and `b` with `a`'s
    /// (a decode mutation the comparison with the RTL must catch).
    pub fn mutate_status_decode(&mut self, a: Reg, b: Reg) {
        let at = |r: Reg| status::REGS.iter().position(|&x| x == r).unwrap_or(0);
        self.status_swap = Some((at(a), at(b)));
    }

    /// For a bench's negative test only: the golden `link_status` answers
    /// for link `b` when asked for link `a` and the reverse (an address
    /// decode mutation).
    pub fn mutate_status_link(&mut self, a: usize, b: usize) {
        self.status_link_swap = Some((a, b));
    }

    /// The address the golden `link_status` decodes for `m1`'s `addr`
    /// (with the mutations' swaps, if any).
    fn status_addr(&self, addr: u64) -> u32 {
        let a = addr as u32;
        let swap = |v: usize, s: Option<(usize, usize)>| match s {
            Some((x, y)) if v == x => y,
            Some((x, y)) if v == y => x,
            _ => v,
        };
        let per = status::REGS_PER_LINK;
        let (w, b) = (a as usize / 4, a % 4);
        let (l, r) = (w / per, w % per);
        let (l, r) = (swap(l, self.status_link_swap), swap(r, self.status_swap));
        ((l * per + r) * 4) as u32 + b
    }

    /// The golden NI (driven per transaction by the bench).
    pub fn ni(&self) -> &Ni {
        &self.ni
    }

    /// The golden NI, mutable.
    pub fn ni_mut(&mut self) -> &mut Ni {
        &mut self.ni
    }

    /// The router model (counters, buffers).
    pub fn router(&self) -> &Router {
        &self.router
    }

    /// The router's drop and error counters.
    pub fn router_counters(&self) -> &RouterCounters {
        self.router.counters()
    }

    /// Link end `i` (its `link_tx`, `link_rx`, counters).
    pub fn link(&self, i: usize) -> &NodeLinkEnd {
        &self.links[i]
    }

    /// The synchronized PL reset (`pl_rst`) now.
    pub fn pl_rst(&self) -> bool {
        self.pl_rst.output()
    }

    /// PL clock edges so far.
    pub fn pl_cycles(&self) -> u64 {
        self.pl_cycles
    }

    /// One instant: the PL clock rises when `pl` is `Some`; user clock `i`
    /// rises when `user[i]` is `Some` (`user` has one entry per network
    /// port). `channel_up[i]` is link `i`'s transceiver `channel_up` (read
    /// at PL edges).
    pub fn edge(
        &mut self,
        pl: Option<&NodePlInputs>,
        user: &[Option<UserInputs>],
        channel_up: &[bool],
    ) -> Result<()> {
        let n = self.links.len();
        if user.len() != n || channel_up.len() != n {
            bail!(
                "node {}: {} user-clock inputs and {} channel_up for {n} network ports",
                self.node,
                user.len(),
                channel_up.len()
            );
        }
        let reset = self.pl_rst.output();
        // The AXI4-Lite side (PL domain) first: link_status samples the link
        // ends as they are before this instant.
        if let Some(inp) = pl {
            self.axil_edge(reset, &inp.axil);
        }
        let mut before = std::mem::take(&mut self.before);
        before.clear();
        before.extend(self.links.iter().map(NodeLinkEnd::outputs));
        let r_out = self.router.outputs();
        for (i, end) in self.links.iter_mut().enumerate() {
            let pi = pl.map(|_| PlInputs {
                reset,
                flit: r_out.flit[i],
                router_credit: r_out.credit[i].map_or(0, |v| 1u32 << v),
                channel_up: channel_up[i],
            });
            end.edge(pi.as_ref(), user[i].as_ref())
                .with_context(|| format!("node {}: link end {i}", self.node))?;
        }
        if let Some(inp) = pl {
            if reset {
                self.router = Router::new(&self.p.router, self.node)?;
            } else {
                let mut ri = RouterInputs::default();
                for (i, b) in before.iter().enumerate() {
                    if let Some(f) = b.rx.flit {
                        ri.set_flit(i, f);
                    }
                    if let Some(vc) = b.credit {
                        ri.set_credit(i, vc);
                    }
                }
                let l = self.local_port();
                if let Some(f) = inp.local_flit {
                    ri.set_flit(l, f);
                }
                if let Some(vc) = inp.local_credit {
                    ri.set_credit(l, vc);
                }
                self.router.tick(&ri);
            }
            self.pl_rst.edge(inp.rst);
            self.pl_cycles += 1;
        }
        self.before = before;
        Ok(())
    }

    /// `axil_split` and `link_status` at a PL edge (`reset`: `pl_rst`).
    fn axil_edge(&mut self, reset: bool, inp: &AxilSplitInputs) {
        let m1 = self.split.outputs().m[1];
        let mut si = StatusInputs {
            arvalid: m1.arvalid,
            araddr: self.status_addr(m1.araddr),
            rready: m1.rready,
            awvalid: m1.awvalid,
            wvalid: m1.wvalid,
            bready: m1.bready,
            links: Vec::new(),
        };
        let so = self.status.outputs(&si);
        let taken = !reset && so.arready && si.arvalid;
        if taken {
            let sampled: Vec<_> = self
                .links
                .iter()
                .map(|e| {
                    let o = e.outputs();
                    (
                        o.rx.status.state,
                        *e.link_tx().counters(),
                        *e.link_rx().counters(),
                        o.rx_overflows_pl,
                    )
                })
                .collect();
            si.links = sampled
                .iter()
                .map(|(s, t, r, ov)| LinkSample {
                    state: *s,
                    counters: t.merged(r),
                    rx_overflows: *ov,
                })
                .collect();
            self.status_read = Some(StatusRead {
                addr: m1.araddr as u32,
                cycle: self.pl_cycles,
                links: sampled,
            });
        }
        let mut ai = *inp;
        ai.reset = reset;
        ai.m[1] = MasterInputs {
            awready: so.awready,
            wready: so.wready,
            bresp: so.bresp as u32,
            bvalid: so.bvalid,
            arready: so.arready,
            rdata: so.rdata,
            rresp: so.rresp as u32,
            rvalid: so.rvalid,
        };
        if reset {
            self.status = LinkStatus::new(self.links.len()).expect("sized at construction");
        } else {
            self.status.tick(&si);
        }
        self.split.tick(&ai);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::phy::{Phy, PhyParams};
    use crate::router::header_fields::{Coords as Dest, HeaderFields};
    use crate::router::route_compute::injection_vc;
    use crate::topology::Topology;

    fn params() -> GoldenNodeParams {
        let router = RouterParams {
            topology: Topology::new([2, 1, 1], [true, true, true], 1).unwrap(),
            ..Default::default()
        };
        GoldenNodeParams {
            link: LinkParams::sized(128, router.num_vcs(), 1, router.buffer_flits),
            router,
            cdc: AsyncFifoParams::default(),
            reset_stages: 2,
            ni: NiParams::default(),
        }
    }

    /// A packet of `len` flits from node `src` to node `dst` (128-bit flits,
    /// a valid header, payload words naming the packet and the flit).
    fn packet(p: &RouterParams, dst: usize, id: u64, len: usize) -> Vec<Flit> {
        let [x, y, z] = p.topology.coords(dst);
        let dest = Dest {
            x: x as u8,
            y: y as u8,
            z: z as u8,
            fpga: 0,
        };
        let h = HeaderFields {
            dest,
            dva: id,
            size: (16 * (len - 1)) as u16,
            ..Default::default()
        }
        .pack();
        let vc = injection_vc(p, (id % 2) as usize, dest);
        (0..len)
            .map(|i| Flit {
                data: if i == 0 {
                    [h as u64, (h >> 64) as u64, 0, 0]
                } else {
                    [id << 8 | i as u64, !id, 0, 0]
                },
                head: i == 0,
                tail: i == len - 1,
                vc,
            })
            .collect()
    }

    /// What a run delivered: per node, the packets its router ejected (in
    /// order), and the packets sent to it per VC.
    struct Run {
        sent: [Vec<Vec<Flit>>; 2],
        got: [Vec<Vec<Flit>>; 2],
        nodes: Vec<GoldenNode>,
    }

    /// Two nodes of a 2x1x1 torus (two cables between them: x+ of each to
    /// x- of the other), PL clocks of 6400 and 6390 ps, one user clock of
    /// `user_ps` on every transceiver; each node sends `per_node` packets
    /// of 1..=5 flits to the other (credit-limited at its local input) and
    /// its ejection side returns a credit one cycle after each flit. `rst`
    /// is held for the first `reset_cycles` PL cycles of node 0.
    fn run(user_ps: u64, per_node: usize, reset_cycles: u64) -> Run {
        let p = params();
        let topo = p.router.topology.clone();
        let mut nodes = vec![
            GoldenNode::new(&p, 0).unwrap(),
            GoldenNode::new(&p, 1).unwrap(),
        ];
        let ports = topo.num_dir_ports();
        // One PHY direction per (sending node, port).
        let mut phys: Vec<Phy> = (0..2 * ports)
            .map(|d| {
                Phy::new(&PhyParams {
                    latency_cycles: 2 + d,
                    cc_period: if d == 0 { 97 } else { 0 },
                    ..Default::default()
                })
                .unwrap()
            })
            .collect();
        let pl_ps = [6400u64, 6390];
        let mut next = [pl_ps[0], pl_ps[1], user_ps];
        let mut user_cycle = 0u64;
        let mut credits = [[p.router.buffer_flits; 4]; 2];
        let mut queue: [Vec<Flit>; 2] = Default::default();
        let mut sent: [Vec<Vec<Flit>>; 2] = Default::default();
        let mut got: [Vec<Vec<Flit>>; 2] = Default::default();
        let mut partial: [Vec<Flit>; 2] = Default::default();
        let mut eject_credit: [Option<u8>; 2] = [None, None];
        let mut id = 0u64;
        let mut k = 0u64;
        while (got[0].len() < per_node || got[1].len() < per_node) && k < 400_000 {
            k += 1;
            let t = *next.iter().min().unwrap();
            let pl_edge = [next[0] == t, next[1] == t];
            let user_edge = next[2] == t;
            let rst = nodes[0].pl_cycles() < reset_cycles;
            let mut user_in = vec![vec![None; ports]; 2];
            if user_edge {
                let mut arrived = vec![vec![None; ports]; 2];
                let mut ready = vec![vec![false; ports]; 2];
                for (n, rdy) in ready.iter_mut().enumerate() {
                    for (i, r) in rdy.iter_mut().enumerate() {
                        let d = n * ports + i;
                        *r = phys[d].ready(user_cycle);
                        let shown = nodes[n].outputs().links[i].tx_word;
                        let (m, q) = topo.neighbour(n, i).unwrap();
                        arrived[m][q] = phys[d].step(if *r { shown } else { None }, true);
                    }
                }
                for ((u, r), a) in user_in.iter_mut().zip(&ready).zip(&arrived) {
                    for ((u, &tx_ready), &rx_word) in u.iter_mut().zip(r).zip(a) {
                        *u = Some(UserInputs {
                            rst,
                            tx_ready,
                            rx_word,
                        });
                    }
                }
            }
            for n in 0..2 {
                let pl = pl_edge[n].then(|| {
                    let o = nodes[n].outputs();
                    let mut i = NodePlInputs {
                        rst,
                        local_credit: eject_credit[n].take(),
                        ..Default::default()
                    };
                    if let Some(vc) = o.local_credit {
                        credits[n][vc as usize] += 1;
                    }
                    if let Some(f) = o.local_flit {
                        partial[n].push(f);
                        if f.tail {
                            got[n].push(std::mem::take(&mut partial[n]));
                        }
                        eject_credit[n] = Some(f.vc);
                    }
                    if queue[n].is_empty() && sent[n].len() < per_node && !o.pl_rst {
                        let pk = packet(&p.router, 1 - n, id, 1 + (id % 5) as usize);
                        id += 1;
                        sent[n].push(pk.clone());
                        queue[n] = pk;
                        queue[n].reverse();
                    }
                    if let Some(&f) = queue[n].last() {
                        if !o.pl_rst && credits[n][f.vc as usize] > 0 {
                            credits[n][f.vc as usize] -= 1;
                            i.local_flit = queue[n].pop();
                        }
                    }
                    i
                });
                let up = vec![user_cycle > 10; ports];
                nodes[n].edge(pl.as_ref(), &user_in[n], &up).unwrap();
                if pl_edge[n] {
                    next[n] += pl_ps[n];
                }
            }
            if user_edge {
                user_cycle += 1;
                next[2] += user_ps;
            }
        }
        Run { sent, got, nodes }
    }

    #[test]
    fn packets_cross_between_two_nodes_whole_and_in_order() {
        let r = run(6500, 60, 6);
        for n in 0..2 {
            let m = 1 - n;
            assert_eq!(r.got[m].len(), 60, "packets node {n} -> node {m}");
            for vc in 0..4u8 {
                let a: Vec<_> = r.sent[n].iter().filter(|p| p[0].vc == vc).collect();
                // One destination per source: a class's packets share one
                // injection VC and one route, so they arrive in order on
                // the VC the one hop gives them.
                let b: Vec<_> = r.got[m]
                    .iter()
                    .filter(|p| a.first().is_some_and(|q| q[0].vc == p[0].vc))
                    .collect();
                if !a.is_empty() {
                    let strip = |v: &Vec<&Vec<Flit>>| -> Vec<Vec<[u64; 4]>> {
                        v.iter()
                            .map(|p| p.iter().map(|f| f.data).collect())
                            .collect()
                    };
                    assert_eq!(
                        strip(&a),
                        strip(&b),
                        "node {n} -> {m}, VC {vc}: in order, unchanged"
                    );
                }
            }
            let c = r.nodes[n].router_counters();
            assert_eq!(c, &RouterCounters::default(), "node {n}: router counters");
            for i in 0..r.nodes[n].num_links() {
                let o = r.nodes[n].outputs().links[i];
                assert_eq!(o.rx_overflows, 0, "node {n} link {i}: rx_overflows");
                assert!(o.lane_up, "node {n} link {i}: lane up");
            }
        }
    }

    #[test]
    fn nothing_moves_while_rst_is_held() {
        let r = run(6500, 1, u64::MAX);
        assert!(r.got.iter().all(|g| g.is_empty()));
        assert!(r.sent.iter().all(|s| s.is_empty()));
        assert!(r.nodes.iter().all(|n| n.outputs().pl_rst));
    }

    #[test]
    fn bad_parameters_and_inputs_are_named() {
        let mut p = params();
        p.router.topology = Topology::new([2, 1, 1], [true, true, true], 2).unwrap();
        let e = GoldenNode::new(&p, 0).unwrap_err().to_string();
        assert!(e.contains("local_ports = 2"), "{e}");
        let mut p = params();
        p.link.vcs = 2;
        let e = GoldenNode::new(&p, 0).unwrap_err().to_string();
        assert!(e.contains("link.vcs = 2"), "{e}");
        let mut n = GoldenNode::new(&params(), 1).unwrap();
        let e = n.edge(None, &[], &[]).unwrap_err().to_string();
        assert!(e.contains("2 network ports"), "{e}");
    }
}
