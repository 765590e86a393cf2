//! `route_compute`: the routing function of one input port, compiled into logic.
//!
//! Purpose: from the destination coordinates in a head flit, this router's
//! coordinates, the (fixed) input port of the instance and the input VC the
//! flit arrives on, name the output port and the one output VC the packet
//! takes, or flag it bad. The
//! rules are those of `exanet_sim::router::route_compute` (the contract):
//! dimension order, the shorter way round a torus ring (ties by
//! `router.tie_break`: `+`, or by the destination coordinate's parity),
//! towards the destination on a mesh, ejection on local port `fpga`; the VC
//! half of the packet's class by `router.dateline` (from the wrap link on, or
//! chosen on entering the dimension by whether the path crosses the wrap
//! link); the per-flow VC `lo + (x + y + z + fpga) mod (hi - lo)` and the set
//! of VCs the head may take (that VC, or with `router.vc_select = free` the
//! whole half).
//!
//! Ports:
//! - `node_x`, `node_y`, `node_z` (4 b each): this router's coordinates
//!   (inputs, so one module serves every node; held constant by the network);
//! - `dest` (14 b): header bits 42:29, the destination's x (13:10), y (9:6),
//!   z (5:2) and fpga (1:0);
//! - `in_vc` (4 b): the input VC (its class and dateline half; `< N`);
//! - `rsel` (8 b): the route in the form the input buffer stores it: output
//!   port in bits 7:4, and in bits 3:0 the set of output VCs the head may
//!   take: with `vc_select = flow` the one per-flow VC, with `free` a code
//!   (`VSET_*`: the whole class, its upper or its lower half) that
//!   `input_vc` decodes with its own class;
//! - `bad`: a destination coordinate is outside `dims`, or the packet is for
//!   this router and `fpga >= local_ports`.
//!
//! Latency: combinational (0 cycles). The routing function is pure (header,
//! router coordinates, input port and VC), so the input unit computes it
//! once per port as a head is written and stores the result with the flit.
//!
//! Parameters (fixed at elaboration, emitted as constants that synthesis
//! folds): the topology (ring sizes, torus/mesh, port numbering), the
//! dimension order, VCs per class, the three routing rules, the instance's
//! input port (whether a packet continues in a dimension); per input VC a
//! table of its class and half.
//!
//! Only 4- and 8-bit arithmetic: the torus distance `(t - h) mod k` is taken
//! mod 16 (`t - h`, plus `k` when `t < h`), which is exact for `k <= 16`; the
//! 8-bit VC selector `x + y + z + fpga` is three adds of the fields widened
//! bit by bit (rust-hdl has no width extension that lints clean), and its
//! remainder mod a VC range of n is `sel & (n - 1)` when n is a power of two
//! (the default's ranges of 2 and 1), a restoring division otherwise. (A
//! chain of 14 conditional adds and three restoring divisions, the earlier
//! form, mapped to ~300 LUTs per input port: synthesis cannot see that
//! `x mod 1` is 0 through a division chain.)

use exanet_sim::router::{Dateline, RouterParams, TieBreak, VcSelect};
use exanet_sim::topology::PortKind;
use rust_hdl::prelude::*;

/// Routing order positions: index 0 is the *last* dimension corrected, 2 the
/// first, so that later loop iterations (higher priority) override.
const POSITIONS: usize = 3;
/// Restoring-division steps for `sel mod n` with `sel < 64`.
const MOD_STEPS: usize = 6;

/// Stored VC-set codes (`rsel` bits 3:0) with `vc_select = free`: the
/// lower half of the input VC's class (also the whole class when it is not
/// split), the whole class, the upper half.
pub const VSET_LOWER: u64 = 0;
/// The whole class (a mesh dimension, an unsplit class, ejection).
pub const VSET_ALL: u64 = 1;
/// The upper half (dateline).
pub const VSET_UPPER: u64 = 2;

/// Route compute for input port `in_port` (any of its VCs).
#[derive(LogicBlock)]
pub struct RouteCompute {
    /// This router's x coordinate.
    pub node_x: Signal<In, Bits<4>>,
    /// This router's y coordinate.
    pub node_y: Signal<In, Bits<4>>,
    /// This router's z coordinate.
    pub node_z: Signal<In, Bits<4>>,
    /// Destination x, y, z, fpga (header bits 42:29).
    pub dest: Signal<In, Bits<14>>,
    /// Input VC.
    pub in_vc: Signal<In, Bits<4>>,
    /// The packet cannot be routed: drop it.
    pub bad: Signal<Out, bool>,
    /// Output port (7:4) and the VC set in stored form (3:0).
    pub rsel: Signal<Out, Bits<8>>,
    /// Per input VC (run time): its class's first VC, first upper VC,
    /// whether it is an upper one.
    class_base: Signal<Local, Bits<8>>,
    upper_base: Signal<Local, Bits<8>>,
    in_upper: Signal<Local, bool>,
    /// Stored VC-set codes (`free`) per routing-order position.
    code: Vec<Signal<Local, Bits<8>>>,
    tx: Signal<Local, Bits<4>>,
    ty: Signal<Local, Bits<4>>,
    tz: Signal<Local, Bits<4>>,
    fpga: Signal<Local, Bits<2>>,
    /// `x + y + z + fpga`, bit by bit; element 14 is the sum.
    /// The destination's x, y, z and fpga widened to 8 bits (wiring: each a
    /// chain of ORs of constant bits), and their sum `x + y + z + fpga`.
    xw: Vec<Signal<Local, Bits<8>>>,
    yw: Vec<Signal<Local, Bits<8>>>,
    zw: Vec<Signal<Local, Bits<8>>>,
    fw: Vec<Signal<Local, Bits<8>>>,
    sel: Signal<Local, Bits<8>>,
    /// Ejection port `local_base + fpga` in bits 7:4; element 2 is the result.
    eject_port: Vec<Signal<Local, Bits<8>>>,
    /// `sel mod vcs_per_class` (restoring chain; element 6 is the result).
    mod_all: Vec<Signal<Local, Bits<8>>>,
    /// `sel mod lower_vcs`.
    mod_lo: Vec<Signal<Local, Bits<8>>>,
    /// `sel mod (vcs_per_class - lower_vcs)`.
    mod_hi: Vec<Signal<Local, Bits<8>>>,
    /// `sel mod n` for the three VC ranges: `sel & (n - 1)` when n is a
    /// power of two (the restoring division, whose result synthesis cannot
    /// see is a mask or, for n = 1, a constant 0, is then unused and
    /// removed), else the division's remainder.
    rem_all: Signal<Local, Bits<8>>,
    rem_lo: Signal<Local, Bits<8>>,
    rem_hi: Signal<Local, Bits<8>>,
    t: Vec<Signal<Local, Bits<4>>>,
    h: Vec<Signal<Local, Bits<4>>>,
    fwd: Vec<Signal<Local, Bits<4>>>,
    differs: Vec<Signal<Local, bool>>,
    plus: Vec<Signal<Local, bool>>,
    dateline: Vec<Signal<Local, bool>>,
    upper: Vec<Signal<Local, bool>>,
    port8: Vec<Signal<Local, Bits<8>>>,
    vc8: Vec<Signal<Local, Bits<8>>>,
    /// The path in this dimension crosses the wrap link.
    crosses: Vec<Signal<Local, bool>>,
    eject_vc: Signal<Local, Bits<8>>,
    any_differs: Signal<Local, bool>,
    out_of_range: Signal<Local, bool>,
    /// Weight of each `dest` bit in the selector sum.
    /// Bit i of an 8-bit word (i < 4).
    bit8: Vec<Constant<Bits<8>>>,
    pow2_all: Constant<bool>,
    pow2_lo: Constant<bool>,
    pow2_hi: Constant<bool>,
    /// `n - 1` of each range (the remainder's mask when n is a power of two).
    low_all: Constant<Bits<8>>,
    low_lo: Constant<Bits<8>>,
    low_hi: Constant<Bits<8>>,
    /// `16 << i`: weight of fpga bit i in the ejection port field.
    fpga_weight: Vec<Constant<Bits<8>>>,
    // Divisor multiples `n << (5 - j)` (255 where above any selector value).
    step_all: Vec<Constant<Bits<8>>>,
    step_lo: Vec<Constant<Bits<8>>>,
    step_hi: Vec<Constant<Bits<8>>>,
    // Per routing-order position.
    pos_is_x: Vec<Constant<bool>>,
    pos_is_y: Vec<Constant<bool>>,
    pos_torus: Vec<Constant<bool>>,
    pos_split: Vec<Constant<bool>>,
    /// A split torus dimension the input port is on (the packet continues in it).
    pos_continuing: Vec<Constant<bool>>,
    /// `dateline = entry` and the packet enters this dimension here.
    pos_entering: Vec<Constant<bool>>,
    /// `tie_break = parity` on a ring of even size.
    pos_tie_parity: Vec<Constant<bool>>,
    /// `dateline = wrap`.
    wrap_rule: Constant<bool>,
    /// `vc_select = free`.
    free: Constant<bool>,
    vc_num: Vec<Constant<Bits<4>>>,
    vc_class_base: Vec<Constant<Bits<8>>>,
    vc_upper_base: Vec<Constant<Bits<8>>>,
    vc_is_upper: Vec<Constant<bool>>,
    code_all: Constant<Bits<8>>,
    code_lo: Constant<Bits<8>>,
    code_hi: Constant<Bits<8>>,
    pos_k: Vec<Constant<Bits<4>>>,
    pos_half: Vec<Constant<Bits<4>>>,
    pos_kmax: Vec<Constant<Bits<4>>>,
    pos_plus_port: Vec<Constant<Bits<8>>>,
    pos_minus_port: Vec<Constant<Bits<8>>>,
    // Bit c set when coordinate value c is outside the dimension (a table,
    // not a comparison, which would be constant for a ring of 16).
    outside_x: Constant<Bits<16>>,
    outside_y: Constant<Bits<16>>,
    outside_z: Constant<Bits<16>>,
    /// Bit f set when fpga value f names no local port.
    fpga_outside: Constant<Bits<4>>,
    local_base: Constant<Bits<8>>,
    zero4: Constant<Bits<4>>,
    zero8: Constant<Bits<8>>,
    /// VCs per link.
    _vcs: usize,
}

fn steps(n: usize) -> Vec<Constant<Bits<8>>> {
    (0..MOD_STEPS)
        .map(|j| {
            let c = n << (MOD_STEPS - 1 - j);
            Constant::new(bits(if c < 64 { c as u64 } else { 255 }))
        })
        .collect()
}

/// Bits `k..n` set: the values at or above `k` of an `n`-value field.
fn outside(k: usize, n: usize) -> u64 {
    (k..n).fold(0, |m, v| m | 1 << v)
}

fn locals<T: Synth>(n: usize) -> Vec<Signal<Local, T>> {
    (0..n).map(|_| Default::default()).collect()
}

impl RouteCompute {
    /// The routing function of input port `in_port` (params valid).
    pub fn new(p: &RouterParams, in_port: usize) -> Self {
        let t = &p.topology;
        let vpc = p.vcs_per_class;
        let lower = p.lower_vcs();
        let in_dim = match t.port_kind(in_port) {
            PortKind::Dir { dim, .. } => Some(dim),
            PortKind::Local(_) => None,
        };
        // Position r = 0 is the last dimension in `dim_order`.
        let dims: Vec<usize> = (0..POSITIONS)
            .map(|r| p.dim_order[POSITIONS - 1 - r])
            .collect();
        let torus = |d: usize| t.is_torus_dim(d);
        let split = |d: usize| torus(d) && lower != vpc;
        let port8 =
            |d: usize, plus: bool| -> u64 { (t.dir_port(d, plus).unwrap_or(0) as u64) << 4 };
        let c4 = |v: usize| Constant::new(bits::<4>(v as u64));
        let entry = p.dateline == Dateline::Entry;
        let n = p.num_vcs();
        let base = |v: usize| v / vpc * vpc;
        RouteCompute {
            node_x: Default::default(),
            node_y: Default::default(),
            node_z: Default::default(),
            dest: Default::default(),
            in_vc: Default::default(),
            bad: Default::default(),
            rsel: Default::default(),
            class_base: Default::default(),
            upper_base: Default::default(),
            in_upper: Default::default(),
            code: locals(POSITIONS),
            tx: Default::default(),
            ty: Default::default(),
            tz: Default::default(),
            fpga: Default::default(),
            xw: locals(5),
            yw: locals(5),
            zw: locals(5),
            fw: locals(3),
            sel: Default::default(),
            eject_port: locals(3),
            mod_all: locals(MOD_STEPS + 1),
            mod_lo: locals(MOD_STEPS + 1),
            mod_hi: locals(MOD_STEPS + 1),
            rem_all: Default::default(),
            rem_lo: Default::default(),
            rem_hi: Default::default(),
            t: locals(POSITIONS),
            h: locals(POSITIONS),
            fwd: locals(POSITIONS),
            differs: locals(POSITIONS),
            plus: locals(POSITIONS),
            dateline: locals(POSITIONS),
            upper: locals(POSITIONS),
            port8: locals(POSITIONS),
            vc8: locals(POSITIONS),
            crosses: locals(POSITIONS),
            eject_vc: Default::default(),
            any_differs: Default::default(),
            out_of_range: Default::default(),
            bit8: (0..4).map(|i| Constant::new(bits(1 << i))).collect(),
            pow2_all: Constant::new(vpc.is_power_of_two()),
            pow2_lo: Constant::new(lower.is_power_of_two()),
            pow2_hi: Constant::new((vpc - lower).max(1).is_power_of_two()),
            low_all: Constant::new(bits(vpc as u64 - 1)),
            low_lo: Constant::new(bits(lower.max(1) as u64 - 1)),
            low_hi: Constant::new(bits((vpc - lower).max(1) as u64 - 1)),
            fpga_weight: (0..2).map(|i| Constant::new(bits(16 << i))).collect(),
            step_all: steps(vpc),
            step_lo: steps(lower),
            step_hi: steps((vpc - lower).max(1)),
            pos_is_x: dims.iter().map(|&d| Constant::new(d == 0)).collect(),
            pos_is_y: dims.iter().map(|&d| Constant::new(d == 1)).collect(),
            pos_torus: dims.iter().map(|&d| Constant::new(torus(d))).collect(),
            pos_split: dims.iter().map(|&d| Constant::new(split(d))).collect(),
            pos_continuing: dims
                .iter()
                .map(|&d| Constant::new(split(d) && in_dim == Some(d)))
                .collect(),
            pos_entering: dims
                .iter()
                .map(|&d| Constant::new(entry && split(d) && in_dim != Some(d)))
                .collect(),
            pos_tie_parity: dims
                .iter()
                .map(|&d| {
                    Constant::new(p.tie_break == TieBreak::Parity && t.dims[d].is_multiple_of(2))
                })
                .collect(),
            wrap_rule: Constant::new(!entry),
            free: Constant::new(p.vc_select == VcSelect::Free),
            vc_num: (0..n).map(c4).collect(),
            vc_class_base: (0..n)
                .map(|v| Constant::new(bits(base(v) as u64)))
                .collect(),
            vc_upper_base: (0..n)
                .map(|v| Constant::new(bits((base(v) + lower) as u64)))
                .collect(),
            vc_is_upper: (0..n).map(|v| Constant::new(v % vpc >= lower)).collect(),
            code_all: Constant::new(bits(VSET_ALL)),
            code_lo: Constant::new(bits(VSET_LOWER)),
            code_hi: Constant::new(bits(VSET_UPPER)),
            pos_k: dims.iter().map(|&d| c4(t.dims[d] % 16)).collect(),
            pos_half: dims.iter().map(|&d| c4(t.dims[d] / 2)).collect(),
            pos_kmax: dims.iter().map(|&d| c4(t.dims[d] - 1)).collect(),
            pos_plus_port: dims
                .iter()
                .map(|&d| Constant::new(bits(port8(d, true))))
                .collect(),
            pos_minus_port: dims
                .iter()
                .map(|&d| Constant::new(bits(port8(d, false))))
                .collect(),
            outside_x: Constant::new(bits(outside(t.dims[0], 16))),
            outside_y: Constant::new(bits(outside(t.dims[1], 16))),
            outside_z: Constant::new(bits(outside(t.dims[2], 16))),
            fpga_outside: Constant::new(bits(outside(t.local_ports, 4))),
            local_base: Constant::new(bits((t.num_dir_ports() as u64) << 4)),
            zero4: Constant::new(bits(0)),
            zero8: Constant::new(bits(0)),
            _vcs: n,
        }
    }
}

impl Logic for RouteCompute {
    #[hdl_gen]
    fn update(&mut self) {
        // The input VC's class and half, from per-VC tables.
        self.class_base.next = self.zero8.val();
        self.upper_base.next = self.zero8.val();
        self.in_upper.next = false;
        for v in 0..self._vcs {
            if self.in_vc.val() == self.vc_num[v].val() {
                self.class_base.next = self.vc_class_base[v].val();
                self.upper_base.next = self.vc_upper_base[v].val();
                self.in_upper.next = self.vc_is_upper[v].val();
            }
        }
        self.tx.next = self.dest.val().get_bits::<4>(10);
        self.ty.next = self.dest.val().get_bits::<4>(6);
        self.tz.next = self.dest.val().get_bits::<4>(2);
        self.fpga.next = self.dest.val().get_bits::<2>(0);
        // sel = x + y + z + fpga: each field widened to 8 bits, then three adds.
        self.xw[0].next = self.zero8.val();
        self.yw[0].next = self.zero8.val();
        self.zw[0].next = self.zero8.val();
        self.fw[0].next = self.zero8.val();
        for i in 0..4 {
            if self.tx.val().get_bit(i) {
                self.xw[i + 1].next = self.xw[i].val() | self.bit8[i].val();
            } else {
                self.xw[i + 1].next = self.xw[i].val();
            }
            if self.ty.val().get_bit(i) {
                self.yw[i + 1].next = self.yw[i].val() | self.bit8[i].val();
            } else {
                self.yw[i + 1].next = self.yw[i].val();
            }
            if self.tz.val().get_bit(i) {
                self.zw[i + 1].next = self.zw[i].val() | self.bit8[i].val();
            } else {
                self.zw[i + 1].next = self.zw[i].val();
            }
        }
        for i in 0..2 {
            if self.fpga.val().get_bit(i) {
                self.fw[i + 1].next = self.fw[i].val() | self.bit8[i].val();
            } else {
                self.fw[i + 1].next = self.fw[i].val();
            }
        }
        self.sel.next = self.xw[4].val() + self.yw[4].val() + self.zw[4].val() + self.fw[2].val();
        self.eject_port[0].next = self.local_base.val();
        for i in 0..2 {
            if self.dest.val().get_bit(i) {
                self.eject_port[i + 1].next = self.eject_port[i].val() + self.fpga_weight[i].val();
            } else {
                self.eject_port[i + 1].next = self.eject_port[i].val();
            }
        }
        // sel mod n for the three VC ranges, by restoring division.
        self.mod_all[0].next = self.sel.val();
        self.mod_lo[0].next = self.sel.val();
        self.mod_hi[0].next = self.sel.val();
        for j in 0..6 {
            if self.mod_all[j].val() >= self.step_all[j].val() {
                self.mod_all[j + 1].next = self.mod_all[j].val() - self.step_all[j].val();
            } else {
                self.mod_all[j + 1].next = self.mod_all[j].val();
            }
            if self.mod_lo[j].val() >= self.step_lo[j].val() {
                self.mod_lo[j + 1].next = self.mod_lo[j].val() - self.step_lo[j].val();
            } else {
                self.mod_lo[j + 1].next = self.mod_lo[j].val();
            }
            if self.mod_hi[j].val() >= self.step_hi[j].val() {
                self.mod_hi[j + 1].next = self.mod_hi[j].val() - self.step_hi[j].val();
            } else {
                self.mod_hi[j + 1].next = self.mod_hi[j].val();
            }
        }
        if self.pow2_all.val() {
            self.rem_all.next = self.sel.val() & self.low_all.val();
        } else {
            self.rem_all.next = self.mod_all[6].val();
        }
        if self.pow2_lo.val() {
            self.rem_lo.next = self.sel.val() & self.low_lo.val();
        } else {
            self.rem_lo.next = self.mod_lo[6].val();
        }
        if self.pow2_hi.val() {
            self.rem_hi.next = self.sel.val() & self.low_hi.val();
        } else {
            self.rem_hi.next = self.mod_hi[6].val();
        }
        self.out_of_range.next = self.outside_x.val().get_bit(self.tx.val().index())
            | self.outside_y.val().get_bit(self.ty.val().index())
            | self.outside_z.val().get_bit(self.tz.val().index());
        // Ejection (every coordinate matches): local port `fpga`, whole class.
        self.eject_vc.next = self.class_base.val() + self.rem_all.val();
        if self.free.val() {
            self.rsel.next = self.eject_port[2].val() | self.code_all.val();
        } else {
            self.rsel.next = self.eject_port[2].val() | self.eject_vc.val();
        }
        // Per routing-order position, lowest priority first: a later
        // (higher-priority) dimension that differs overrides.
        for r in 0..3 {
            if self.pos_is_x[r].val() {
                self.t[r].next = self.tx.val();
                self.h[r].next = self.node_x.val();
            } else if self.pos_is_y[r].val() {
                self.t[r].next = self.ty.val();
                self.h[r].next = self.node_y.val();
            } else {
                self.t[r].next = self.tz.val();
                self.h[r].next = self.node_z.val();
            }
            self.differs[r].next = self.t[r].val() != self.h[r].val();
            if self.t[r].val() >= self.h[r].val() {
                self.fwd[r].next = self.t[r].val() - self.h[r].val();
            } else {
                self.fwd[r].next = self.t[r].val() - self.h[r].val() + self.pos_k[r].val();
            }
            if self.pos_torus[r].val() {
                // a tie (2 fwd = k) goes - with parity ties and an odd destination
                // (`<=` and `==`: a `< half` would be constant for a ring of 1)
                self.plus[r].next = (self.fwd[r].val() <= self.pos_half[r].val())
                    & !((self.fwd[r].val() == self.pos_half[r].val())
                        & self.pos_tie_parity[r].val()
                        & self.t[r].val().get_bit(0));
            } else {
                self.plus[r].next = self.t[r].val() > self.h[r].val();
            }
            if self.plus[r].val() {
                self.crosses[r].next = self.t[r].val() < self.h[r].val();
                self.port8[r].next = self.pos_plus_port[r].val();
                self.dateline[r].next =
                    self.pos_torus[r].val() & (self.h[r].val() == self.pos_kmax[r].val());
            } else {
                self.crosses[r].next = self.t[r].val() > self.h[r].val();
                self.port8[r].next = self.pos_minus_port[r].val();
                self.dateline[r].next =
                    self.pos_torus[r].val() & (self.h[r].val() == self.zero4.val());
            }
            self.upper[r].next = (self.pos_continuing[r].val() & self.in_upper.val())
                | (self.wrap_rule.val() & self.dateline[r].val())
                | (self.pos_entering[r].val() & self.crosses[r].val());
            if self.pos_split[r].val() {
                if self.upper[r].val() {
                    self.vc8[r].next = self.upper_base.val() + self.rem_hi.val();
                } else {
                    self.vc8[r].next = self.class_base.val() + self.rem_lo.val();
                }
            } else {
                self.vc8[r].next = self.class_base.val() + self.rem_all.val();
            }
            if !self.pos_split[r].val() {
                self.code[r].next = self.code_all.val();
            } else if self.upper[r].val() {
                self.code[r].next = self.code_hi.val();
            } else {
                self.code[r].next = self.code_lo.val();
            }
            if self.differs[r].val() {
                if self.free.val() {
                    self.rsel.next = self.port8[r].val() | self.code[r].val();
                } else {
                    self.rsel.next = self.port8[r].val() | self.vc8[r].val();
                }
            }
        }
        self.any_differs.next =
            self.differs[0].val() | self.differs[1].val() | self.differs[2].val();
        self.bad.next = self.out_of_range.val()
            | (!self.any_differs.val() & self.fpga_outside.val().get_bit(self.fpga.val().index()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::emit;
    use exanet_sim::router::route_compute::RouteCompute as Golden;
    use exanet_sim::router::Coords;
    use exanet_sim::topology::Topology;

    fn params(dims: [usize; 3], wrap: [bool; 3], vpc: usize, order: [usize; 3]) -> RouterParams {
        RouterParams {
            topology: Topology::new(dims, wrap, 3).unwrap(),
            vcs_per_class: vpc,
            dim_order: order,
            ..Default::default()
        }
    }

    /// `p` with the rules before the entry dateline and parity ties, and free VC choice.
    fn old_rules_free(p: RouterParams) -> RouterParams {
        RouterParams {
            dateline: Dateline::Wrap,
            tie_break: TieBreak::Plus,
            vc_select: VcSelect::Free,
            ..p
        }
    }

    /// The VC set `rsel` bits 3:0 stand for at input VC `in_vc` (as `input_vc` decodes it).
    fn stored_set(p: &RouterParams, in_vc: usize, code: u64) -> u64 {
        let base = in_vc / p.vcs_per_class * p.vcs_per_class;
        let range = |lo: usize, hi: usize| (lo..hi).fold(0, |m, v| m | 1 << v);
        match (p.vc_select, code) {
            (VcSelect::Flow, vc) => 1 << vc,
            (VcSelect::Free, VSET_ALL) => range(base, base + p.vcs_per_class),
            (VcSelect::Free, VSET_UPPER) => range(base + p.lower_vcs(), base + p.vcs_per_class),
            (VcSelect::Free, VSET_LOWER) => range(base, base + p.lower_vcs()),
            (_, c) => panic!("unknown stored set code {c}"),
        }
    }

    /// rust-hdl's own simulator runs `update()` against the golden routing
    /// function for every destination (in and out of range) at several nodes.
    #[test]
    fn rust_update_matches_the_golden_route_compute() {
        for p in [
            params([8, 4, 4], [true; 3], 2, [2, 1, 0]),
            params([5, 3, 1], [true, false, false], 3, [0, 1, 2]),
            params([16, 2, 3], [true, true, false], 4, [1, 0, 2]),
            old_rules_free(params([8, 4, 4], [true; 3], 4, [2, 1, 0])),
            old_rules_free(params([6, 3, 1], [true, true, false], 3, [0, 1, 2])),
            RouterParams {
                vc_select: VcSelect::Free,
                ..params([8, 4, 6], [true; 3], 4, [1, 2, 0])
            },
        ] {
            let t = p.topology.clone();
            for (in_port, in_vc) in [
                (0, 0),
                (1, 1),
                (t.num_ports() - 1, p.num_vcs() - 1),
                (2, 3 % p.num_vcs()),
            ] {
                let mut uut = RouteCompute::new(&p, in_port);
                uut.connect_all();
                uut.in_vc.next = bits(in_vc as u64);
                for node in [0, t.num_nodes() / 2, t.num_nodes() - 1] {
                    let golden = Golden::new(&p, node);
                    let c = t.coords(node);
                    uut.node_x.next = bits(c[0] as u64);
                    uut.node_y.next = bits(c[1] as u64);
                    uut.node_z.next = bits(c[2] as u64);
                    for x in (0..=8).chain([15]) {
                        for y in 0..5 {
                            for z in [0, 1, 2, 15] {
                                for fpga in 0..4u8 {
                                    let d = Coords { x, y, z, fpga };
                                    uut.dest.next = bits((d.pack() >> 8) as u64);
                                    assert!(simulate(&mut uut, 10));
                                    let want = golden.compute(d, in_port, in_vc);
                                    let got_bad = uut.bad.val();
                                    assert_eq!(
                                        got_bad,
                                        want.is_err(),
                                        "{d:?} at {c:?} port {in_port} vc {in_vc}"
                                    );
                                    if let Ok(r) = want {
                                        let s = uut.rsel.val().to_u64();
                                        assert_eq!(
                                            s >> 4,
                                            r.port as u64,
                                            "{d:?} at {c:?} port {in_port} vc {in_vc}"
                                        );
                                        if p.vc_select == VcSelect::Flow {
                                            assert_eq!(s & 15, r.vc as u64, "{d:?} at {c:?}");
                                        }
                                        assert_eq!(
                                            stored_set(&p, in_vc, s & 15),
                                            r.mask as u64,
                                            "rsel set {s:#x}: {d:?} at {c:?} port {in_port} vc {in_vc}"
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn emits_lint_clean_verilog() {
        let p = params([8, 4, 4], [true; 3], 2, [2, 1, 0]);
        let mut uut = RouteCompute::new(&p, 1);
        let e = emit(&mut uut, "exanet_router_route_compute_test").unwrap();
        crate::emit::assert_lint_clean(&e);
    }
}
