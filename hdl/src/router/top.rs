//! `router`: the virtual-channel router top: input units, output units and
//! the crossbar between them, cycle-exact with the golden model
//! `exanet_sim::router::Router` (its module doc is the contract).
//!
//! Ports (top module `exanet_router_<suffix>`, see [`router_top_name`]);
//! `<p>` is the port number of `exanet_sim::topology` (x+, x-, y+, y-, z+, z-
//! for each dimension of size > 1, then the local ports):
//! - `clock`; `reset` (synchronous; the power-on state equals the reset state);
//! - `node_x`, `node_y`, `node_z` (4 b): this router's coordinates, held
//!   constant by the network (one module serves every node);
//! - `in_valid_<p>`, `in_data_<p>` (W b), `in_head_<p>`, `in_tail_<p>`,
//!   `in_vc_<p>` (4 b): flit from upstream;
//! - `credit_out_valid_<p>`, `credit_out_vc_<p>` (4 b): registered credit to
//!   upstream, one per flit that left input `<p>`'s buffers;
//! - `out_valid_<p>`, `out_data_<p>`, `out_head_<p>`, `out_tail_<p>`,
//!   `out_vc_<p>`: registered flit to downstream;
//! - `credit_in_valid_<p>`, `credit_in_vc_<p>`: credit from downstream;
//! - `dropped_packets_<p>`, `flit_errors_<p>` (per input port) and
//!   `credit_errors_<p>` (per output port): 32-bit ports of counters
//!   `router.counter_bits` wide (default 16) that wrap modulo
//!   `2^counter_bits`; the bits above are 0.
//!
//! Latency: 2 cycles from a head on `in_*` to it on `out_*` at zero load
//! (3 from the first header flit with 64-bit flits); then one flit per cycle
//! per port. A credit for a flit leaving a buffer at the edge ending cycle t
//! is on `credit_out_*` during t+1.
//!
//! Structure: per input port an `input_unit` (VC buffers, route compute,
//! VC state, input arbitration), per output port an `output_unit` (output
//! arbitration, credits, busy bits, output register). The router ORs the
//! input units' request vectors (bit `SP*out + in`, [`request_bit`]) and the
//! output units' status vectors (bit `SV*out + vc`, [`status_bit`]) and
//! grants (bit `in`), and muxes the granted input's flit into each output
//! unit (the crossbar). `SP` and `SV` are the ports and the VCs per link
//! rounded up to a power of two, and the vectors are `M` = [`matrix_bits`]
//! wide: 64 when both layouts fit (the default point: 56 and 28 bits live),
//! else 256, so that Verilator keeps them in one machine word where it can.
//! Ports and VCs are indexed with 4-bit fields, so at most 16 of each.
//!
//! Parameters ([`RouterParams`]): topology (ports, ring sizes, torus/mesh),
//! `dim_order`, `classes`, `vcs_per_class`, `buffer_flits` (buffers take the
//! next power of two of slots), `flit_bits` (64, 128, 256), `max_packet_flits`,
//! and the routing rules `dateline`, `tie_break`, `vc_select` (compiled into
//! each input unit's `route_compute` and each input VC's VC pick).

use super::input_unit::{tree_leaves, tree_selects, InputUnit};
use super::output_unit::OutputUnit;
use super::switch_alloc::SwitchAlloc;
use crate::emit::{emit, Emitted};
use anyhow::{bail, Result};
use exanet_sim::router::{Allocator, RouterParams};
use rust_hdl::prelude::*;

/// The router top.
#[derive(LogicBlock)]
pub struct Router<const W: usize, const A: usize, const C: usize, const M: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// This router's x coordinate.
    pub node_x: Signal<In, Bits<4>>,
    /// This router's y coordinate.
    pub node_y: Signal<In, Bits<4>>,
    /// This router's z coordinate.
    pub node_z: Signal<In, Bits<4>>,
    /// Per port: a flit arrives.
    pub in_valid: Vec<Signal<In, bool>>,
    /// Per port: its data.
    pub in_data: Vec<Signal<In, Bits<W>>>,
    /// Per port: it is a head.
    pub in_head: Vec<Signal<In, bool>>,
    /// Per port: it is a tail.
    pub in_tail: Vec<Signal<In, bool>>,
    /// Per port: its VC.
    pub in_vc: Vec<Signal<In, Bits<4>>>,
    /// Per port: a credit goes upstream.
    pub credit_out_valid: Vec<Signal<Out, bool>>,
    /// Per port: its VC.
    pub credit_out_vc: Vec<Signal<Out, Bits<4>>>,
    /// Per port: a flit leaves.
    pub out_valid: Vec<Signal<Out, bool>>,
    /// Per port: its data.
    pub out_data: Vec<Signal<Out, Bits<W>>>,
    /// Per port: it is a head.
    pub out_head: Vec<Signal<Out, bool>>,
    /// Per port: it is a tail.
    pub out_tail: Vec<Signal<Out, bool>>,
    /// Per port: its VC.
    pub out_vc: Vec<Signal<Out, Bits<4>>>,
    /// Per port: a credit arrives from downstream.
    pub credit_in_valid: Vec<Signal<In, bool>>,
    /// Per port: its VC.
    pub credit_in_vc: Vec<Signal<In, Bits<4>>>,
    /// Per input port: bad packets dropped.
    pub dropped_packets: Vec<Signal<Out, Bits<32>>>,
    /// Per input port: flits discarded on arrival.
    pub flit_errors: Vec<Signal<Out, Bits<32>>>,
    /// Per output port: credits ignored.
    pub credit_errors: Vec<Signal<Out, Bits<32>>>,
    inputs: Vec<InputUnit<W, A, C, M>>,
    outputs: Vec<OutputUnit<W, A, C, M>>,
    /// The matching switch allocator (`islip`, `wavefront`); none when separable.
    alloc: Vec<SwitchAlloc<M>>,
    /// `SP * port`: the port's row in the allocator's `match_rows`.
    row_base: Vec<Constant<Bits<8>>>,
    /// Matching allocators, per input port: `match_rows` shifted to its row
    /// (bits 15:0; the name tells Verilator's lint the rest is unused).
    row_unused_above_16: Vec<Signal<Local, Bits<M>>>,
    /// Prefix chains over the ports; element P is the OR of all.
    requests: Vec<Signal<Local, Bits<M>>>,
    requests1: Vec<Signal<Local, Bits<M>>>,
    credit_rows: Vec<Signal<Local, Bits<M>>>,
    start_rows: Vec<Signal<Local, Bits<M>>>,
    grants: Vec<Signal<Local, Bits<16>>>,
    /// Crossbar data path, per output `o` a binary mux tree on its
    /// `grant_index` at `xbar[o * T ..]` (`T = 2L - 1` elements, laid out as
    /// `InputUnit::front_tree`: leaves the input ports' flits, the last one repeated from P on).
    /// A tree maps to ~2 LUTs a bit for 7 ports; the one-hot if-chain it
    /// replaces took ~4.
    xbar: Vec<Signal<Local, Bits<W>>>,
    /// The granted input's head, tail and output VC through trees of the
    /// same layout on the same index (not a compare-per-port chain).
    xhead: Vec<Signal<Local, bool>>,
    xtail: Vec<Signal<Local, bool>>,
    xvc: Vec<Signal<Local, Bits<4>>>,
    /// Per inner node: the `grant_index` bit choosing between its children.
    xbar_sel: Vec<Constant<Bits<4>>>,
    zero_m: Constant<Bits<M>>,
    zero16: Constant<Bits<16>>,
    _ports: usize,
    /// Crossbar tree: leaves (`L`), inner nodes, elements per output (`T`).
    _leaves: usize,
    _inner: usize,
    _tree: usize,
    /// 1 with a matching allocator, else 0.
    _matching: usize,
}

fn signals<D: Direction, T: Synth>(n: usize) -> Vec<Signal<D, T>> {
    (0..n).map(|_| Default::default()).collect()
}

impl<const W: usize, const A: usize, const C: usize, const M: usize> Router<W, A, C, M> {
    /// The router of parameters `p` (valid; `W = flit_bits`, `2^A >= buffer_flits`, `C = A + 1`,
    /// `M = matrix_bits(p)`); an error only when the switch allocator's template fails to render.
    pub fn new(p: &RouterParams) -> Result<Self> {
        assert_eq!(M, matrix_bits(p));
        let n = p.num_ports();
        let alloc = match p.allocator {
            Allocator::Separable => Vec::new(),
            _ => vec![SwitchAlloc::new(p)?],
        };
        let matching = alloc.len();
        Ok(Router {
            clock: Default::default(),
            reset: Default::default(),
            node_x: Default::default(),
            node_y: Default::default(),
            node_z: Default::default(),
            in_valid: signals(n),
            in_data: signals(n),
            in_head: signals(n),
            in_tail: signals(n),
            in_vc: signals(n),
            credit_out_valid: signals(n),
            credit_out_vc: signals(n),
            out_valid: signals(n),
            out_data: signals(n),
            out_head: signals(n),
            out_tail: signals(n),
            out_vc: signals(n),
            credit_in_valid: signals(n),
            credit_in_vc: signals(n),
            dropped_packets: signals(n),
            flit_errors: signals(n),
            credit_errors: signals(n),
            inputs: (0..n).map(|i| InputUnit::new(p, i)).collect(),
            outputs: (0..n).map(|o| OutputUnit::new(p, o)).collect(),
            requests: signals(n + 1),
            requests1: signals(n + 1),
            credit_rows: signals(n + 1),
            start_rows: signals(n + 1),
            grants: signals(n + 1),
            zero_m: Constant::new(bits(0)),
            zero16: Constant::new(bits(0)),
            _ports: n,
            _leaves: tree_leaves(n),
            _inner: tree_leaves(n) - 1,
            _tree: 2 * tree_leaves(n) - 1,
            xbar: signals(n * (2 * tree_leaves(n) - 1)),
            xhead: signals(n * (2 * tree_leaves(n) - 1)),
            xtail: signals(n * (2 * tree_leaves(n) - 1)),
            xvc: signals(n * (2 * tree_leaves(n) - 1)),
            xbar_sel: tree_selects(tree_leaves(n))
                .into_iter()
                .map(|b| Constant::new(bits(b)))
                .collect(),
            _matching: alloc.len(),
            alloc,
            row_base: (0..n * matching)
                .map(|i| Constant::new(bits(request_bit(p, i, 0) as u64)))
                .collect(),
            row_unused_above_16: signals(n * matching),
        })
    }
}

impl<const W: usize, const A: usize, const C: usize, const M: usize> Logic for Router<W, A, C, M> {
    #[hdl_gen]
    fn update(&mut self) {
        // Gather: requests (bit SP*out + in), output VC status (bit SV*out + vc), grants (bit in).
        self.requests[0].next = self.zero_m.val();
        self.requests1[0].next = self.zero_m.val();
        self.credit_rows[0].next = self.zero_m.val();
        self.start_rows[0].next = self.zero_m.val();
        self.grants[0].next = self.zero16.val();
        for p in 0..self._ports {
            self.requests[p + 1].next = self.requests[p].val() | self.inputs[p].req_mat.val();
            self.requests1[p + 1].next = self.requests1[p].val() | self.inputs[p].req_mat1.val();
            self.credit_rows[p + 1].next =
                self.credit_rows[p].val() | self.outputs[p].has_credit.val();
            self.start_rows[p + 1].next =
                self.start_rows[p].val() | self.outputs[p].can_start.val();
            self.grants[p + 1].next = self.grants[p].val() | self.outputs[p].grant.val();
        }
        // The matching switch allocator, from every input's requests.
        for a in 0..self._matching {
            self.alloc[a].clock.next = self.clock.val();
            self.alloc[a].reset.next = self.reset.val();
            for k in self._ports..(self._ports + 1) {
                self.alloc[a].req.next = self.requests[k].val();
                self.alloc[a].req1.next = self.requests1[k].val();
            }
        }
        for p in 0..self._ports {
            self.inputs[p].clock.next = self.clock.val();
            self.inputs[p].reset.next = self.reset.val();
            self.inputs[p].in_valid.next = self.in_valid[p].val();
            self.inputs[p].in_data.next = self.in_data[p].val();
            self.inputs[p].in_head.next = self.in_head[p].val();
            self.inputs[p].in_tail.next = self.in_tail[p].val();
            self.inputs[p].in_vc.next = self.in_vc[p].val();
            self.inputs[p].node_x.next = self.node_x.val();
            self.inputs[p].node_y.next = self.node_y.val();
            self.inputs[p].node_z.next = self.node_z.val();
            for k in self._ports..(self._ports + 1) {
                self.inputs[p].has_credit.next = self.credit_rows[k].val();
                self.inputs[p].can_start.next = self.start_rows[k].val();
                self.inputs[p].grants.next = self.grants[k].val();
            }
            // Matching allocators: the outputs matched to this input (its row).
            for a in 0..self._matching {
                self.row_unused_above_16[p].next =
                    self.alloc[a].match_rows.val() >> self.row_base[p].val();
                self.inputs[p].grants.next = self.row_unused_above_16[p].val().get_bits::<16>(0);
            }
            self.credit_out_valid[p].next = self.inputs[p].credit_out_valid.val();
            self.credit_out_vc[p].next = self.inputs[p].credit_out_vc.val();
            self.dropped_packets[p].next = self.inputs[p].dropped_packets.val();
            self.flit_errors[p].next = self.inputs[p].flit_errors.val();
        }
        for o in 0..self._ports {
            self.outputs[o].clock.next = self.clock.val();
            self.outputs[o].reset.next = self.reset.val();
            for k in self._ports..(self._ports + 1) {
                self.outputs[o].req_mat.next = self.requests[k].val();
                self.outputs[o].req_mat1.next = self.requests1[k].val();
            }
            // Matching allocators: the match, one input per output.
            for a in 0..self._matching {
                self.outputs[o].req_mat.next = self.alloc[a].grant_mat.val();
                self.outputs[o].req_mat1.next = self.zero_m.val();
            }
            self.outputs[o].credit_in_valid.next = self.credit_in_valid[o].val();
            self.outputs[o].credit_in_vc.next = self.credit_in_vc[o].val();
            // Crossbar: the granted input's flit, head, tail and output VC
            // (with no grant, some input's: the output unit sends only on a grant).
            for t in self._tree..(self._tree + 1) {
                for l in self._leaves..(self._leaves + 1) {
                    for p in 0..self._ports {
                        self.xbar[o * t + p].next = self.inputs[p].flit.val();
                        self.xhead[o * t + p].next = self.inputs[p].head.val();
                        self.xtail[o * t + p].next = self.inputs[p].tail.val();
                        self.xvc[o * t + p].next = self.inputs[p].out_vc.val();
                    }
                    // Leaves past the last port repeat its values: no grant
                    // index selects them (a constant would be an unused
                    // parameter where the port count is a power of two).
                    for last in (self._ports - 1)..self._ports {
                        for p in self._ports..self._leaves {
                            self.xbar[o * t + p].next = self.inputs[last].flit.val();
                            self.xhead[o * t + p].next = self.inputs[last].head.val();
                            self.xtail[o * t + p].next = self.inputs[last].tail.val();
                            self.xvc[o * t + p].next = self.inputs[last].out_vc.val();
                        }
                    }
                    for j in 0..self._inner {
                        if (self.outputs[o].grant_index.val() & self.xbar_sel[j].val()).any() {
                            self.xbar[o * t + l + j].next = self.xbar[o * t + 2 * j + 1].val();
                            self.xhead[o * t + l + j].next = self.xhead[o * t + 2 * j + 1].val();
                            self.xtail[o * t + l + j].next = self.xtail[o * t + 2 * j + 1].val();
                            self.xvc[o * t + l + j].next = self.xvc[o * t + 2 * j + 1].val();
                        } else {
                            self.xbar[o * t + l + j].next = self.xbar[o * t + 2 * j].val();
                            self.xhead[o * t + l + j].next = self.xhead[o * t + 2 * j].val();
                            self.xtail[o * t + l + j].next = self.xtail[o * t + 2 * j].val();
                            self.xvc[o * t + l + j].next = self.xvc[o * t + 2 * j].val();
                        }
                    }
                    self.outputs[o].xin_data.next = self.xbar[o * t + t - 1].val();
                    self.outputs[o].xin_head.next = self.xhead[o * t + t - 1].val();
                    self.outputs[o].xin_tail.next = self.xtail[o * t + t - 1].val();
                    self.outputs[o].xin_vc.next = self.xvc[o * t + t - 1].val();
                }
            }
            self.out_valid[o].next = self.outputs[o].out_valid.val();
            self.out_data[o].next = self.outputs[o].out_data.val();
            self.out_head[o].next = self.outputs[o].out_head.val();
            self.out_tail[o].next = self.outputs[o].out_tail.val();
            self.out_vc[o].next = self.outputs[o].out_vc.val();
            self.credit_errors[o].next = self.outputs[o].credit_errors.val();
        }
    }
}

/// Top module name of a parameter point, e.g.
/// `exanet_router_x8t_y4t_z4t_l1_zyx_c2v2_b32_f128_m18_entry_parity_flow`
/// (`t` torus, `m` mesh; then `router.dateline`, `router.tie_break`,
/// `router.vc_select`, then [`allocator_tag`], then `_k<bits>` when
/// `router.counter_bits` is not the default 16).
pub fn router_top_name(p: &RouterParams) -> String {
    let t = &p.topology;
    let dim = |d: usize| format!("{}{}", t.dims[d], if t.wrap[d] { 't' } else { 'm' });
    let order: String = p.dim_order.iter().map(|&d| ['x', 'y', 'z'][d]).collect();
    format!(
        "exanet_router_x{}_y{}_z{}_l{}_{}_c{}v{}_b{}_f{}_m{}_{}_{}_{}{}{}",
        dim(0),
        dim(1),
        dim(2),
        t.local_ports,
        order,
        p.classes,
        p.vcs_per_class,
        p.buffer_flits,
        p.flit_bits,
        p.max_packet_flits,
        p.dateline.name(),
        p.tie_break.name(),
        p.vc_select.name(),
        allocator_tag(p),
        counter_tag(p),
    )
}

/// The counter width in a module name: empty for the default 16 bits, else
/// `_k<bits>` (`_k32`: the width of releases before `router.counter_bits`).
pub fn counter_tag(p: &RouterParams) -> String {
    if p.counter_bits == RouterParams::default().counter_bits {
        String::new()
    } else {
        format!("_k{}", p.counter_bits)
    }
}

/// The allocator in a module name: empty for `separable` (the names of
/// earlier releases), `_islip2` (with its iterations) or `_wavefront`.
pub fn allocator_tag(p: &RouterParams) -> String {
    match p.allocator {
        Allocator::Separable => String::new(),
        Allocator::Islip => format!("_islip{}", p.alloc_iterations),
        Allocator::Wavefront => "_wavefront".to_string(),
    }
}

/// Buffer address bits: the smallest `A` with `2^A >= buffer_flits` (at least 1).
pub fn buffer_address_bits(buffer_flits: usize) -> usize {
    buffer_flits.next_power_of_two().trailing_zeros().max(1) as usize
}

/// Most ports and VCs per link the 4-bit port and VC fields index.
pub const MAX_FIELD: usize = 16;

/// Bits per output port in the request vectors (`SP`): the ports rounded up
/// to a power of two.
pub fn port_stride(p: &RouterParams) -> usize {
    p.num_ports().next_power_of_two()
}

/// Bits per output port in the status vectors (`SV`): the VCs per link
/// rounded up to a power of two.
pub fn vc_stride(p: &RouterParams) -> usize {
    p.num_vcs().next_power_of_two()
}

/// The bit of "input `inp` requests output `out`" in the request vectors
/// (`req_mat`, the matching allocator's `req` and `grant_mat`; its
/// `match_rows` has `out` and `inp` swapped).
pub fn request_bit(p: &RouterParams, out: usize, inp: usize) -> usize {
    port_stride(p) * out + inp
}

/// The bit of output VC (`port`, `vc`) in the status vectors (`has_credit`, `can_start`).
pub fn status_bit(p: &RouterParams, port: usize, vc: usize) -> usize {
    vc_stride(p) * port + vc
}

/// Width `M` of the request and status vectors: 64 when both layouts fit
/// (one machine word in Verilator's model), else 256 (16 ports of 16).
pub fn matrix_bits(p: &RouterParams) -> usize {
    let ports = p.num_ports();
    if port_stride(p) * ports <= 64 && vc_stride(p) * ports <= 64 {
        64
    } else {
        256
    }
}

fn build<const W: usize, const A: usize, const C: usize, const M: usize>(
    p: &RouterParams,
) -> Result<Emitted> {
    let mut uut = Router::<W, A, C, M>::new(p)?;
    let mut e = emit(&mut uut, &router_top_name(p))?;
    for (_, text) in e.modules.iter_mut() {
        *text = isolate_child_inputs(text);
    }
    Ok(e)
}

/// The whole design as one Verilog source, top module first, for building a
/// simulation model: routers have hundreds of modules (rust-hdl emits one per
/// instance), and one file argument per module overflows the command line
/// the `verilator` wrapper script hands to `/bin/sh` for the larger routers.
/// (Lint wants one file per module, named like it: use a `-f` file list.)
pub fn single_file(e: &Emitted) -> String {
    let mut s = String::new();
    for (_, text) in e.modules.iter().filter(|(n, _)| *n == e.top) {
        s.push_str(text);
        s.push('\n');
    }
    for (_, text) in e.modules.iter().filter(|(n, _)| *n != e.top) {
        s.push_str(text);
        s.push('\n');
    }
    s
}

/// Verilator hint against false combinational loops (a simulation-speed
/// matter only; other tools read it as a comment).
pub const ISOLATE: &str = "/*verilator isolate_assignments*/";

/// Mark every child-input register of every module `isolate_assignments`.
///
/// rust-hdl emits each module's logic as one `always @(*)`, so a parent that
/// reads a child's output (an arbiter's grant) and drives another of its
/// inputs (the arbiter's `accept`) forms a loop at block granularity, and
/// Verilator re-evaluates the whole block until it settles. The child
/// inputs are the `reg`s of the "Stub signals" section; isolating their
/// assignments into their own blocks removes most of those loops (about 40 %
/// faster co-simulation of the default router).
pub fn isolate_child_inputs(module: &str) -> String {
    let mut out = String::with_capacity(module.len() + 4096);
    let mut stub = false;
    for line in module.lines() {
        let t = line.trim();
        if t == "// Stub signals" {
            stub = true;
        } else if t.is_empty() || t.starts_with("//") {
            stub = false;
        }
        match line.strip_suffix(';') {
            Some(decl) if stub && t.starts_with("reg ") => {
                out.push_str(decl);
                out.push(' ');
                out.push_str(ISOLATE);
                out.push(';');
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// Buffer address bits with a compiled instance (each costs compile time for
/// every flit width): buffers of 9..=256 flits.
pub const SUPPORTED_BUFFER_ADDRESS_BITS: std::ops::RangeInclusive<usize> = 4..=8;

macro_rules! by_matrix {
    ($w:literal, $a:literal, $c:literal, $p:expr) => {
        if matrix_bits($p) == 64 {
            build::<$w, $a, $c, 64>($p)
        } else {
            build::<$w, $a, $c, 256>($p)
        }
    };
}

macro_rules! by_depth {
    ($w:literal, $p:expr) => {
        match buffer_address_bits($p.buffer_flits) {
            4 => by_matrix!($w, 4, 5, $p),
            5 => by_matrix!($w, 5, 6, $p),
            6 => by_matrix!($w, 6, 7, $p),
            7 => by_matrix!($w, 7, 8, $p),
            8 => by_matrix!($w, 8, 9, $p),
            _ => bail!(
                "router.buffer_flits = {}: not supported by the RTL; supported: 9..=256 (buffers of 16, 32, 64, 128 or 256 slots)",
                $p.buffer_flits
            ),
        }
    };
}

/// Validate `p` and emit its router as Verilog (once per parameter set:
/// [`crate::emit::memoized`]; `generate` needs it for its own top and inside
/// the node, benches for a network or a node next to a router).
pub fn emit_router(p: &RouterParams) -> Result<Emitted> {
    crate::emit::memoized("router", &format!("{p:?}"), || emit_router_uncached(p))
}

fn emit_router_uncached(p: &RouterParams) -> Result<Emitted> {
    p.validate()?;
    crate::limits::check_router(p)?;
    if p.num_ports() > MAX_FIELD {
        bail!(
            "router ports = {}: the RTL indexes at most {MAX_FIELD} ports",
            p.num_ports()
        );
    }
    if p.num_vcs() > MAX_FIELD {
        bail!(
            "router VCs = {} (classes x vcs_per_class): the RTL indexes at most {MAX_FIELD}",
            p.num_vcs()
        );
    }
    match p.flit_bits {
        64 => by_depth!(64, p),
        128 => by_depth!(128, p),
        256 => by_depth!(256, p),
        w => bail!("packet.flit_bits = {w}: not supported; supported: 64, 128, 256"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;
    use exanet_sim::topology::Topology;

    #[allow(clippy::too_many_arguments)]
    fn point(
        dims: [usize; 3],
        wrap: [bool; 3],
        local: usize,
        classes: usize,
        vpc: usize,
        flit: usize,
        buffer: usize,
    ) -> RouterParams {
        let hf = if flit == 64 { 2 } else { 1 };
        RouterParams {
            topology: Topology::new(dims, wrap, local).unwrap(),
            classes,
            vcs_per_class: vpc,
            flit_bits: flit,
            buffer_flits: buffer,
            max_packet_flits: 2 * hf + 256 * 8 / flit,
            ..Default::default()
        }
    }

    /// Mesh and torus, 1 and 2 classes, 2 and 3 VCs, every flit width, up
    /// to the largest router (6 + 4 ports, 2 x 3 VCs): lint clean, ports named
    /// as documented, no `$`.
    #[test]
    fn emits_lint_clean_verilog_across_the_range() {
        for p in [
            point([4, 4, 1], [false; 3], 1, 1, 2, 128, 32),
            RouterParams::default(),
            point([4, 4, 4], [true; 3], 2, 1, 3, 64, 40),
            point([4, 3, 2], [false; 3], 4, 2, 3, 256, 16),
            point([16, 1, 3], [true, true, false], 3, 2, 8, 64, 64),
        ] {
            let e = emit_router(&p).unwrap();
            assert_eq!(e.top, router_top_name(&p));
            let top = &e.modules.last().unwrap().1;
            assert!(!e.text().contains('$'));
            let w = p.flit_bits;
            for port in 0..p.num_ports() {
                for (name, width) in [
                    ("in_valid", 1),
                    ("in_data", w),
                    ("in_vc", 4),
                    ("out_valid", 1),
                    ("out_data", w),
                    ("out_head", 1),
                    ("out_tail", 1),
                    ("out_vc", 4),
                    ("credit_in_vc", 4),
                    ("credit_out_valid", 1),
                    ("dropped_packets", 32),
                    ("credit_errors", 32),
                ] {
                    let decl = if width == 1 {
                        format!(" {name}_{port};")
                    } else {
                        format!("[{}:0] {name}_{port};", width - 1)
                    };
                    assert!(top.contains(&decl), "{} lacks `{decl}`", e.top);
                }
            }
            assert!(!top.contains(&format!("in_valid_{};", p.num_ports())));
            assert_lint_clean(&e);
        }
    }

    /// The matching allocators: lint clean at the default point and on a
    /// small mesh, one `switch_alloc` module, named in the top module.
    #[test]
    fn matching_allocators_emit_lint_clean_verilog() {
        for (p, tag) in [
            (
                RouterParams {
                    allocator: Allocator::Islip,
                    alloc_iterations: 2,
                    ..Default::default()
                },
                "_flow_islip2",
            ),
            (
                RouterParams {
                    allocator: Allocator::Wavefront,
                    ..Default::default()
                },
                "_flow_wavefront",
            ),
            (
                RouterParams {
                    allocator: Allocator::Islip,
                    alloc_iterations: 4,
                    ..point([4, 4, 1], [false; 3], 1, 1, 2, 128, 32)
                },
                "_flow_islip4",
            ),
        ] {
            let e = emit_router(&p).unwrap();
            assert!(e.top.ends_with(tag), "{}", e.top);
            let allocs: Vec<&str> = e
                .modules
                .iter()
                .map(|(n, _)| n.as_str())
                .filter(|n| n.ends_with("_alloc_0"))
                .collect();
            assert_eq!(allocs.len(), 1, "{allocs:?}");
            assert_lint_clean(&e);
        }
        let e = emit_router(&RouterParams::default()).unwrap();
        assert!(!e.modules.iter().any(|(n, _)| n.ends_with("_alloc_0")));
    }

    #[test]
    fn the_default_router_name_and_structure() {
        let p = RouterParams::default();
        assert_eq!(
            router_top_name(&p),
            "exanet_router_x8t_y4t_z4t_l1_zyx_c2v2_b32_f128_m18_entry_parity_flow"
        );
        let e = emit_router(&p).unwrap();
        // 7 input units of 4 VCs with LUTRAM, one route compute per input unit.
        let names: Vec<&str> = e.modules.iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.iter().any(|n| n.ends_with("_inputs_6_route")));
        assert!(names.iter().any(|n| n.ends_with("_inputs_6_vcs_3_side")));
        assert!(!names.iter().any(|n| n.ends_with("_vcs_3_route")));
        assert!(!names.iter().any(|n| n.contains("_inputs_7")));
        assert!(!names.iter().any(|n| n.contains("_vcs_4")));
        assert!(e.text().contains("ram_style = \"distributed\""));
        // Child inputs (e.g. the output arbiter's accept) are isolated; ports are not.
        let out0 = &e
            .modules
            .iter()
            .find(|(n, _)| n.ends_with("_outputs_0"))
            .unwrap()
            .1;
        assert!(
            out0.contains(&format!("reg  arb_accept {ISOLATE};")),
            "{out0}"
        );
        assert!(!out0.contains(&format!("output reg  out_valid {ISOLATE}")));
        assert!(!out0.contains(&format!("send {ISOLATE}")));
    }

    #[test]
    fn unsupported_parameters_are_errors_naming_key_and_rule() {
        let p = RouterParams {
            buffer_flits: 300,
            ..Default::default()
        };
        let e = emit_router(&p).unwrap_err().to_string();
        assert!(
            e.contains("router.buffer_flits = 300") && e.contains("9..=256"),
            "{e}"
        );
        let p = RouterParams {
            topology: Topology::new([20, 1, 1], [true; 3], 1).unwrap(),
            ..Default::default()
        };
        let e = emit_router(&p).unwrap_err().to_string();
        assert!(e.contains("topology.dims[0]") && e.contains("20"), "{e}");
        let p = RouterParams {
            classes: 2,
            vcs_per_class: 8,
            buffer_flits: 32,
            ..Default::default()
        };
        emit_router(&p).unwrap();
        let p = RouterParams {
            flit_bits: 96,
            ..Default::default()
        };
        let e = emit_router(&p).unwrap_err().to_string();
        assert!(e.contains("packet.flit_bits = 96"), "{e}");
    }
}
