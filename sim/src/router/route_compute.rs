//! Route compute: dimension-order routing and the dateline VC rule, a pure
//! function of (this router, destination, input port, input VC).
//!
//! * Dimensions are corrected in `dim_order` (default Z, Y, X); the first
//!   dimension whose coordinate differs from the destination's is taken.
//! * On a torus ring of size k the direction is the shorter way round; with
//!   `d = (dest - here) mod k`, `+` when `2d < k`, `-` when `2d > k`. A tie
//!   (`2d = k`) goes `+` with `tie_break = plus`; with `parity` it goes `+`
//!   when the destination coordinate is even, else `-` (each source's tie
//!   flow is fixed, and the two ring directions share the tie traffic).
//!   On a mesh dimension the direction is towards the destination.
//! * When every coordinate matches, the packet is ejected on local port
//!   `dest.fpga` (a bad packet when `fpga >= local_ports`).
//! * Eligible output VCs, within the packet's class `c` (VCs `c*V .. c*V+V`):
//!   - torus dimension, a *lower half* `c*V + [0, V - V/2)` and an *upper half*
//!     `c*V + [V - V/2, V)`. A packet continuing in the dimension (it arrived on
//!     a port of the same dimension) keeps the half it arrived in. Entering the
//!     dimension (from another dimension or a local port) it takes
//!     - `dateline = wrap`: the lower half, and the upper half from the wrap
//!       link on (the wrap link itself and every hop after it);
//!     - `dateline = entry`: the upper half iff its path in this dimension
//!       will cross the wrap link (`+` with `dest < here`, `-` with
//!       `dest > here`), else the lower half; it stays there for the dimension
//!       (lower-half packets never use the wrap link, and an upper-half path
//!       never spans the whole ring, so neither half closes a cycle).
//!
//!     With V = 1 the upper half is empty and the whole class is used (the
//!     deadlock check rejects that);
//!   - mesh dimension and ejection: the whole class.
//! * VCs the head may take within the eligible set `[lo, hi)` (`RouteOut::mask`):
//!   - `vc_select = flow`: only `lo + (x + y + z + fpga) mod (hi - lo)` of the
//!     destination. Every packet of a (source, destination, class) flow
//!     therefore takes the same VC at every hop, which keeps flows in order
//!     (a free choice among several VCs would let a later packet overtake an
//!     earlier blocked one). With 2 VCs per class on a torus each half has one
//!     VC, so the choice is forced anyway;
//!   - `vc_select = free`: every VC of `[lo, hi)`; the router takes the
//!     lowest-numbered one that is free with room for a whole packet.
//!
//! `RouteOut::vc` is the per-flow VC in both cases (what the deadlock walk
//! follows; the half is all that later hops read of it).

use super::header_fields::Coords;
use super::params::{Dateline, RouterParams, TieBreak, VcSelect};
use crate::topology::{PortKind, MAX_PORTS};
use anyhow::Result;

/// Why a packet is not forwarded (it is dropped and counted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BadPacket {
    /// The header check (SECDED) failed.
    HeaderCheck,
    /// A destination coordinate is outside the configured dimensions.
    DestOutOfRange,
    /// The destination fpga field names a local port the router does not have.
    FpgaOutOfRange,
    /// 64-bit flits: the head flit is also the tail, so the header is incomplete.
    TruncatedHeader,
    /// A non-head flit at the front of an idle input VC.
    Orphan,
}

/// Where a packet goes: output port, the per-flow VC, the eligible VC range
/// `[vc_lo, vc_hi)` and the VCs the head may take (bit `w`: VC `w`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RouteOut {
    pub port: u8,
    pub vc: u8,
    pub vc_lo: u8,
    pub vc_hi: u8,
    pub mask: u16,
}

const NONE: u8 = u8::MAX;

/// The routing function compiled for one router (fixed tables, no allocation).
#[derive(Clone, Debug)]
pub struct RouteCompute {
    here: [u8; 3],
    dims: [u8; 3],
    wrap: [bool; 3],
    order: [usize; 3],
    /// `[dim][0 = plus, 1 = minus]` -> port.
    dir_port: [[u8; 2]; 3],
    /// Dimension of each port, `NONE` for local ports.
    port_dim: [u8; MAX_PORTS],
    /// The link leaving this router through the port is a dateline link.
    dateline: [bool; MAX_PORTS],
    local_base: u8,
    local_ports: u8,
    vpc: u8,
    lower: u8,
    dateline_rule: Dateline,
    tie_parity: bool,
    free: bool,
}

impl RouteCompute {
    /// The routing function of router `node` (params must be valid).
    pub fn new(p: &RouterParams, node: usize) -> Self {
        let t = &p.topology;
        let c = t.coords(node);
        let mut rc = RouteCompute {
            here: [c[0] as u8, c[1] as u8, c[2] as u8],
            dims: [t.dims[0] as u8, t.dims[1] as u8, t.dims[2] as u8],
            wrap: t.wrap,
            order: p.dim_order,
            dir_port: [[NONE; 2]; 3],
            port_dim: [NONE; MAX_PORTS],
            dateline: [false; MAX_PORTS],
            local_base: t.num_dir_ports() as u8,
            local_ports: t.local_ports as u8,
            vpc: p.vcs_per_class as u8,
            lower: p.lower_vcs() as u8,
            dateline_rule: p.dateline,
            tie_parity: p.tie_break == TieBreak::Parity,
            free: p.vc_select == VcSelect::Free,
        };
        for port in 0..t.num_ports() {
            if let PortKind::Dir { dim, plus } = t.port_kind(port) {
                rc.dir_port[dim][usize::from(!plus)] = port as u8;
                rc.port_dim[port] = dim as u8;
                rc.dateline[port] = t.is_dateline(node, port);
            }
        }
        rc
    }

    /// Route a packet for `dest` that arrived on `in_port`, VC `in_vc`.
    #[inline]
    pub fn compute(
        &self,
        dest: Coords,
        in_port: usize,
        in_vc: usize,
    ) -> Result<RouteOut, BadPacket> {
        let d = dest.xyz();
        if d[0] >= self.dims[0] as usize
            || d[1] >= self.dims[1] as usize
            || d[2] >= self.dims[2] as usize
        {
            return Err(BadPacket::DestOutOfRange);
        }
        let sel = (dest.x + dest.y + dest.z + dest.fpga) as u32;
        let class_base = (in_vc as u8 / self.vpc) * self.vpc;
        for &dim in &self.order {
            let (h, t) = (self.here[dim], d[dim] as u8);
            if h == t {
                continue;
            }
            let k = self.dims[dim];
            let plus = if self.wrap[dim] {
                let fwd = (t + k - h) % k;
                2 * fwd < k || (2 * fwd == k && !(self.tie_parity && t & 1 == 1))
            } else {
                t > h
            };
            let port = self.dir_port[dim][usize::from(!plus)];
            let (lo, hi) = if !self.wrap[dim] || self.lower == self.vpc {
                (0, self.vpc)
            } else {
                let continuing = self.port_dim[in_port] == dim as u8;
                let in_upper = in_vc as u8 - class_base >= self.lower;
                let upper = match self.dateline_rule {
                    Dateline::Wrap => (continuing && in_upper) || self.dateline[port as usize],
                    Dateline::Entry if continuing => in_upper,
                    Dateline::Entry => {
                        if plus {
                            t < h
                        } else {
                            t > h
                        }
                    }
                };
                if upper {
                    (self.lower, self.vpc)
                } else {
                    (0, self.lower)
                }
            };
            return Ok(self.pick(class_base, lo, hi, sel, port));
        }
        if dest.fpga >= self.local_ports {
            return Err(BadPacket::FpgaOutOfRange);
        }
        Ok(self.pick(class_base, 0, self.vpc, sel, self.local_base + dest.fpga))
    }

    #[inline]
    fn pick(&self, base: u8, lo: u8, hi: u8, sel: u32, port: u8) -> RouteOut {
        let n = (hi - lo) as u32;
        let vc = base + lo + (sel % n) as u8;
        let mask = if self.free {
            ((1u16 << n) - 1) << (base + lo)
        } else {
            1 << vc
        };
        RouteOut {
            port,
            vc,
            vc_lo: base + lo,
            vc_hi: base + hi,
            mask,
        }
    }
}

/// The VC a network interface injects a packet of `class` for `dest` on:
/// `class * V + (x + y + z + fpga) mod V`, fixed per flow (keeps flows in order).
pub fn injection_vc(p: &RouterParams, class: usize, dest: Coords) -> u8 {
    let sel = (dest.x + dest.y + dest.z + dest.fpga) as usize;
    (class * p.vcs_per_class + sel % p.vcs_per_class) as u8
}

pub use crate::topology::{parse_dim_order, DIM_ORDER_RULE};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Topology;

    /// The rules before the entry dateline and parity ties: `wrap`, `plus`, `flow`.
    fn params(dims: [usize; 3], wrap: [bool; 3], vpc: usize) -> RouterParams {
        RouterParams {
            topology: Topology::new(dims, wrap, 2).unwrap(),
            vcs_per_class: vpc,
            dateline: Dateline::Wrap,
            tie_break: TieBreak::Plus,
            ..Default::default()
        }
    }

    fn c(x: u8, y: u8, z: u8, fpga: u8) -> Coords {
        Coords { x, y, z, fpga }
    }

    #[test]
    fn zyx_order_shortest_way_ties_plus() {
        let p = params([8, 4, 4], [true; 3], 2);
        let t = &p.topology;
        let l0 = t.local_port(0);
        let rc = RouteCompute::new(&p, t.node_at([0, 0, 0]));
        // z first
        let r = rc.compute(c(3, 3, 1, 0), l0, 0).unwrap();
        assert_eq!(r.port as usize, t.dir_port(2, true).unwrap());
        // then y, going - the short way (0 -> 3 in a ring of 4)
        let r = rc.compute(c(3, 3, 0, 0), l0, 0).unwrap();
        assert_eq!(r.port as usize, t.dir_port(1, false).unwrap());
        // tie (distance 4 in a ring of 8) goes +
        let r = rc.compute(c(4, 0, 0, 0), l0, 0).unwrap();
        assert_eq!(r.port as usize, t.dir_port(0, true).unwrap());
        // 5 in a ring of 8 is 3 the other way
        let r = rc.compute(c(5, 0, 0, 0), l0, 0).unwrap();
        assert_eq!(r.port as usize, t.dir_port(0, false).unwrap());
        // eject to the fpga's local port
        let r = rc.compute(c(0, 0, 0, 1), l0, 0).unwrap();
        assert_eq!(r.port as usize, t.local_port(1));
        assert_eq!(
            rc.compute(c(0, 0, 0, 2), l0, 0),
            Err(BadPacket::FpgaOutOfRange)
        );
        assert_eq!(
            rc.compute(c(8, 0, 0, 0), l0, 0),
            Err(BadPacket::DestOutOfRange)
        );
        assert_eq!(
            rc.compute(c(0, 4, 0, 0), l0, 0),
            Err(BadPacket::DestOutOfRange)
        );
    }

    #[test]
    fn other_order_and_mesh_direction() {
        let mut p = params([4, 4, 1], [false, true, false], 2);
        p.dim_order = parse_dim_order("xyz").unwrap();
        assert_eq!(p.dim_order, [0, 1, 2]);
        let t = p.topology.clone();
        let rc = RouteCompute::new(&p, t.node_at([3, 0, 0]));
        let r = rc.compute(c(0, 2, 0, 0), t.local_port(0), 1).unwrap();
        // x first, mesh: towards 0 even though the wrap would be shorter; whole class 0 range
        assert_eq!(r.port as usize, t.dir_port(0, false).unwrap());
        assert_eq!((r.vc_lo, r.vc_hi), (0, 2));
        assert!(parse_dim_order("xxz").is_err());
        assert!(parse_dim_order("xy").is_err());
    }

    #[test]
    fn dateline_vc_rule() {
        let p = params([4, 4, 4], [true; 3], 2);
        let t = p.topology.clone();
        let xp = t.dir_port(0, true).unwrap();
        let xm = t.dir_port(0, false).unwrap();
        let yp = t.dir_port(1, true).unwrap();
        let l0 = t.local_port(0);
        // at x=3 going + to x=1: the next link is the dateline -> upper half (class 1: VC 3)
        let rc = RouteCompute::new(&p, t.node_at([3, 0, 0]));
        let r = rc.compute(c(0, 0, 0, 0), l0, 2).unwrap();
        assert_eq!((r.port as usize, r.vc_lo, r.vc_hi, r.vc), (xp, 3, 4, 3));
        // at x=0 having arrived on x- (from x=3) in the upper half, continuing + : stays upper
        let rc0 = RouteCompute::new(&p, t.node_at([0, 0, 0]));
        let r = rc0.compute(c(1, 0, 0, 0), xm, 1).unwrap();
        assert_eq!((r.port as usize, r.vc_lo, r.vc_hi), (xp, 1, 2));
        // same but arrived in the lower half: lower
        let r = rc0.compute(c(1, 0, 0, 0), xm, 0).unwrap();
        assert_eq!((r.vc_lo, r.vc_hi), (0, 1));
        // turning into y from an upper z VC restarts in the lower half
        let zm = t.dir_port(2, false).unwrap();
        let r = rc0.compute(c(0, 1, 0, 0), zm, 1).unwrap();
        assert_eq!((r.port as usize, r.vc_lo, r.vc_hi), (yp, 0, 1));
        // V = 1: the whole class
        let p1 = params([4, 4, 4], [true; 3], 1);
        let rc1 = RouteCompute::new(&p1, t.node_at([3, 0, 0]));
        let r = rc1.compute(c(0, 0, 0, 0), l0, 1).unwrap();
        assert_eq!((r.vc_lo, r.vc_hi, r.vc), (1, 2, 1));
    }

    #[test]
    fn vc_choice_is_fixed_per_destination_and_inside_the_set() {
        let p = params([4, 4, 1], [false, false, false], 3);
        let t = p.topology.clone();
        let rc = RouteCompute::new(&p, 0);
        for x in 0..4 {
            for y in 0..4 {
                let d = c(x, y, 0, 1);
                for in_vc in 3..6 {
                    let Ok(r) = rc.compute(d, t.local_port(0), in_vc) else {
                        panic!()
                    };
                    assert_eq!((r.vc_lo, r.vc_hi), (3, 6));
                    assert_eq!(r.vc, 3 + (x + y + 1) % 3);
                }
                assert_eq!(injection_vc(&p, 1, d), 3 + (x + y + 1) % 3);
            }
        }
    }

    #[test]
    fn parity_ties_split_each_ring_evenly_and_odd_rings_have_none() {
        let p = RouterParams {
            topology: Topology::new([8, 4, 6], [true; 3], 1).unwrap(),
            ..Default::default()
        };
        assert_eq!(p.tie_break, TieBreak::Parity);
        let t = p.topology.clone();
        let l0 = t.local_port(0);
        for (dim, k) in [(0usize, 8u8), (1, 4), (2, 6)] {
            let mut plus = 0;
            for h in 0..k {
                let mut here = [0, 0, 0];
                here[dim] = h as usize;
                let rc = RouteCompute::new(&p, t.node_at(here));
                let mut d = [0u8; 3];
                d[dim] = (h + k / 2) % k;
                let r = rc.compute(c(d[0], d[1], d[2], 0), l0, 0).unwrap();
                let went_plus = r.port as usize == t.dir_port(dim, true).unwrap();
                assert_eq!(went_plus, d[dim] % 2 == 0, "dim {dim} h {h}");
                plus += usize::from(went_plus);
            }
            assert_eq!(plus, k as usize / 2, "dim {dim}");
        }
        // a ring of 5: 2 hops + and 3 hops - never tie; the rule does not apply
        let p5 = RouterParams {
            topology: Topology::new([5, 1, 1], [true; 3], 1).unwrap(),
            ..Default::default()
        };
        let rc = RouteCompute::new(&p5, 0);
        let l0 = p5.topology.local_port(0);
        let xp = p5.topology.dir_port(0, true).unwrap();
        assert_eq!(rc.compute(c(2, 0, 0, 0), l0, 0).unwrap().port as usize, xp);
        assert_ne!(rc.compute(c(3, 0, 0, 0), l0, 0).unwrap().port as usize, xp);
    }

    #[test]
    fn entry_dateline_picks_the_half_once_per_dimension() {
        let p = RouterParams {
            topology: Topology::new([8, 4, 4], [true; 3], 1).unwrap(),
            vcs_per_class: 4,
            classes: 1,
            tie_break: TieBreak::Plus,
            ..Default::default()
        };
        assert_eq!(p.dateline, Dateline::Entry);
        let t = p.topology.clone();
        let (xp, xm, l0) = (
            t.dir_port(0, true).unwrap(),
            t.dir_port(0, false).unwrap(),
            t.local_port(0),
        );
        let zm = t.dir_port(2, false).unwrap();
        let at = |x| RouteCompute::new(&p, t.node_at([x, 0, 0]));
        // 6 -> 1 goes + across the wrap: the upper half from the first hop
        let r = at(6).compute(c(1, 0, 0, 0), l0, 0).unwrap();
        assert_eq!((r.port as usize, r.vc_lo, r.vc_hi), (xp, 2, 4));
        // 2 -> 5 goes + without the wrap: lower, also from another dimension
        let r = at(2).compute(c(5, 0, 0, 0), zm, 3).unwrap();
        assert_eq!((r.port as usize, r.vc_lo, r.vc_hi), (xp, 0, 2));
        // 1 -> 6 goes - across the wrap: upper
        let r = at(1).compute(c(6, 0, 0, 0), l0, 0).unwrap();
        assert_eq!((r.port as usize, r.vc_lo, r.vc_hi), (xm, 2, 4));
        // continuing keeps the half it arrived in, even on the wrap link
        let r = at(7).compute(c(1, 0, 0, 0), xm, 3).unwrap();
        assert_eq!((r.port as usize, r.vc_lo, r.vc_hi), (xp, 2, 4));
        let r = at(7).compute(c(1, 0, 0, 0), xm, 1).unwrap();
        assert_eq!((r.port as usize, r.vc_lo, r.vc_hi), (xp, 0, 2));
        // the wrap rule on the same packets: lower until the wrap link
        let w = RouterParams {
            dateline: Dateline::Wrap,
            ..p.clone()
        };
        let rw = RouteCompute::new(&w, t.node_at([6, 0, 0]));
        let r = rw.compute(c(1, 0, 0, 0), l0, 0).unwrap();
        assert_eq!((r.vc_lo, r.vc_hi), (0, 2));
        let rw = RouteCompute::new(&w, t.node_at([7, 0, 0]));
        let r = rw.compute(c(1, 0, 0, 0), xm, 1).unwrap();
        assert_eq!((r.vc_lo, r.vc_hi), (2, 4));
    }

    #[test]
    fn free_vc_select_offers_the_whole_half_flow_one_vc() {
        let mut p = RouterParams {
            topology: Topology::new([8, 4, 4], [true; 3], 1).unwrap(),
            vcs_per_class: 4,
            vc_select: VcSelect::Free,
            ..Default::default()
        };
        let t = p.topology.clone();
        let l0 = t.local_port(0);
        let rc = RouteCompute::new(&p, t.node_at([6, 0, 0]));
        // class 1 (VCs 4..8), upper half 6..8
        let r = rc.compute(c(1, 0, 0, 0), l0, 5).unwrap();
        assert_eq!((r.vc_lo, r.vc_hi, r.mask), (6, 8, 0b1100_0000));
        // ejection: the whole class
        let rc0 = RouteCompute::new(&p, 0);
        let r = rc0.compute(c(0, 0, 0, 0), l0, 5).unwrap();
        assert_eq!(r.mask, 0xf0);
        p.vc_select = VcSelect::Flow;
        let rc = RouteCompute::new(&p, t.node_at([6, 0, 0]));
        let r = rc.compute(c(1, 0, 0, 0), l0, 5).unwrap();
        assert_eq!(r.mask, 1 << r.vc);
        assert!((6..8).contains(&r.vc));
    }
}
