//! `input_unit`: one input port of the router: its VCs (`input_vc`), the
//! route compute of arriving heads, the input arbitration among the VCs,
//! the credit returned upstream and the port's drop and error counters.
//!
//! Purpose: steps 2 and the input half of step 4 of the golden model's cycle
//! (`exanet_sim::router`, module doc): among the VCs that request, those of
//! class 1 if any, else class 0, round-robin per class; the chosen request
//! goes to the output arbiters (a forward) or is granted at once (a drop).
//!
//! Ports:
//! - `clock`; `reset` (synchronous);
//! - `in_valid`, `in_data` (W b), `in_head`, `in_tail`, `in_vc` (4 b): the
//!   flit arriving from upstream; discarded and counted in `flit_errors` when
//!   `in_vc >= N` or that VC's buffer holds `buffer_flits` flits;
//! - `node_x`, `node_y`, `node_z` (to route compute); `has_credit`,
//!   `can_start` (M b, to the VCs; bit `SV*port + vc`, `top::status_bit`);
//! - `grants` (16 b): bit p set when some output arbiter granted input port p;
//! - `req_mat`, `req_mat1` (M b): the forward request of this port, as bit
//!   `SP*out_port + this_port` (all requests / class-1 requests; `SP` the
//!   ports rounded up to a power of two, `top::request_bit`), so the router
//!   ORs every port's vector and each output slices its `SP` bits;
//! - `flit` (W b), `head`, `tail`, `out_vc` (4 b): the chosen VC's front flit
//!   and its output VC (to the crossbar);
//! - `credit_out_valid`, `credit_out_vc` (4 b): registered, one credit upstream
//!   for each flit that left a buffer at the previous edge;
//! - `dropped_packets`, `flit_errors` (32 b): counters of `router.counter_bits`
//!   bits wrapping modulo `2^counter_bits` (the bits above are 0, so
//!   synthesis keeps only `counter_bits` flip-flops and adder bits each).
//!
//! Header check: the header's SECDED check byte (bits 119:112) must match
//! the code over bits 111:0 exactly (any error, even a correctable one, makes
//! the packet bad and dropped), as `exanet_sim::router::header_fields::
//! header_ecc_ok`. It is computed once per port as a flit arrives (eight
//! XOR trees, masks derived from the model's `header_ecc`) and stored with
//! the flit: with 128/256-bit flits on the head itself; with 64-bit flits the
//! head's partial syndrome waits in a per-VC register and the result is
//! stored with the next flit of that VC (the header's second half).
//!
//! Route compute: one `route_compute` per port routes the arriving flit (as
//! a head, on its VC) and its result is stored with the flit in the VC's
//! sideband word (`input_vc`). The routing function is pure (header, router
//! coordinates, input port and VC), so this equals routing the head at the
//! buffer's front, as the golden model does, with one instance instead of
//! one per VC.
//!
//! Latency: requests combinational from registered state; the credit for a
//! flit leaving at the edge ending cycle t is on `credit_out_*` during t+1.
//!
//! Parameters: `W`, `A`, `C` as in `input_vc`; at run time the port number,
//! the number of VCs `N` and VCs per class (which VCs are class 1).

use super::allocator::ClassArbiter;
use super::input_vc::{InputVc, SIDE_BAD, SIDE_BITS, SIDE_HEAD, SIDE_RSEL, SIDE_TAIL};
use super::route_compute::RouteCompute;
use exanet_sim::router::{Allocator, RouterParams};
use rust_hdl::prelude::*;

/// One input port: VCs, input arbitration, credit return, counters.
#[derive(LogicBlock)]
pub struct InputUnit<const W: usize, const A: usize, const C: usize, const M: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// A flit arrives.
    pub in_valid: Signal<In, bool>,
    /// Its data.
    pub in_data: Signal<In, Bits<W>>,
    /// It is a head.
    pub in_head: Signal<In, bool>,
    /// It is a tail.
    pub in_tail: Signal<In, bool>,
    /// Its VC.
    pub in_vc: Signal<In, Bits<4>>,
    /// This router's x coordinate.
    pub node_x: Signal<In, Bits<4>>,
    /// This router's y coordinate.
    pub node_y: Signal<In, Bits<4>>,
    /// This router's z coordinate.
    pub node_z: Signal<In, Bits<4>>,
    /// Output VCs with a credit (bit `SV*port + vc`).
    pub has_credit: Signal<In, Bits<M>>,
    /// Output VCs a head may take.
    pub can_start: Signal<In, Bits<M>>,
    /// Separable allocator: the input ports granted by some output (bit
    /// `in_port`). Matching allocators: the output this port is matched to
    /// (bit `out_port`).
    pub grants: Signal<In, Bits<16>>,
    /// Forward request, bit `SP*out_port + in_port`.
    pub req_mat: Signal<Out, Bits<M>>,
    /// The same when the request is class 1.
    pub req_mat1: Signal<Out, Bits<M>>,
    /// The chosen VC's front flit data.
    pub flit: Signal<Out, Bits<W>>,
    /// It is a head.
    pub head: Signal<Out, bool>,
    /// It is a tail.
    pub tail: Signal<Out, bool>,
    /// Its output VC.
    pub out_vc: Signal<Out, Bits<4>>,
    /// A credit goes upstream this cycle.
    pub credit_out_valid: Signal<Out, bool>,
    /// Its VC.
    pub credit_out_vc: Signal<Out, Bits<4>>,
    /// Bad packets dropped.
    pub dropped_packets: Signal<Out, Bits<32>>,
    /// Flits discarded on arrival.
    pub flit_errors: Signal<Out, Bits<32>>,
    vcs: Vec<InputVc<W, A, C, M>>,
    /// The granted VC's front flit: a binary mux tree on the arbiter's
    /// `grant_index` (a one-hot if-chain maps to ~4 LUTs a bit, this to 1 for
    /// 4 VCs). Elements `0..L` are the leaves (VC fronts, zero from N on),
    /// `L + j` inner node j (children `2j`, `2j + 1`), the last the root.
    front_tree: Vec<Signal<Local, Bits<W>>>,
    /// Per inner node: the `grant_index` bit choosing between its children.
    tree_sel: Vec<Constant<Bits<4>>>,
    /// The granted VC's request fields through trees of the same shape on
    /// the same index (a one-hot if-chain on `grant` is a priority chain).
    fwd_tree: Vec<Signal<Local, bool>>,
    new_drop_tree: Vec<Signal<Local, bool>>,
    ovc_tree: Vec<Signal<Local, Bits<8>>>,
    head_tree: Vec<Signal<Local, bool>>,
    tail_tree: Vec<Signal<Local, bool>>,
    route: RouteCompute,
    /// The arriving flit's sideband word: head/tail, then bad, then a
    /// prefix chain over the route's `rsel` bits; element 9 is the word.
    side_in: Vec<Signal<Local, Bits<SIDE_BITS>>>,
    side_head: Constant<Bits<SIDE_BITS>>,
    side_tail: Constant<Bits<SIDE_BITS>>,
    side_bad: Constant<Bits<SIDE_BITS>>,
    side_rsel: Vec<Constant<Bits<SIDE_BITS>>>,
    zero_side: Constant<Bits<SIDE_BITS>>,
    arb: ClassArbiter,
    credit_valid: DFF<bool>,
    credit_vc: DFF<Bits<4>>,
    dropped: DFF<Bits<32>>,
    errors: DFF<Bits<32>>,
    /// Prefix chain of the VCs' requests; element N is the request vector.
    requests: Vec<Signal<Local, Bits<16>>>,
    /// Matching allocators, prefix chains over the VCs: drop requests, forward
    /// requests to the matched output, and every forward request as bit
    /// `SP*out_port + this_port` (all, class 1).
    drops: Vec<Signal<Local, Bits<16>>>,
    hits: Vec<Signal<Local, Bits<16>>>,
    rows: Vec<Signal<Local, Bits<M>>>,
    rows1: Vec<Signal<Local, Bits<M>>>,
    /// (one per matching allocator: none when separable, so lint sees no unused signal)
    drop_mode: Vec<Signal<Local, bool>>,
    chosen_fwd: Signal<Local, bool>,
    chosen_new_drop: Signal<Local, bool>,
    chosen_ovc: Signal<Local, Bits<8>>,
    fwd: Signal<Local, bool>,
    drop: Signal<Local, bool>,
    granted: Signal<Local, bool>,
    do_pop: Signal<Local, bool>,
    target_full: Signal<Local, bool>,
    flit_error: Signal<Local, bool>,
    /// Syndrome chain over the arriving flit as (the first half of) a header.
    syndrome_first: Vec<Signal<Local, Bits<8>>>,
    /// 64-bit flits only: syndrome chain over the flit as a header's second half.
    syndrome_second: Vec<Signal<Local, Bits<8>>>,
    /// The arriving flit completes a header that passes the check.
    check_in: Signal<Local, bool>,
    /// 64-bit flits only, per VC: a head arrived, its second half is next.
    expect_second: Vec<DFF<bool>>,
    /// 64-bit flits only, per VC: the syndrome of that head's first half.
    partial: Vec<DFF<Bits<8>>>,
    mask_first: Vec<Constant<Bits<W>>>,
    mask_second: Vec<Constant<Bits<W>>>,
    syndrome_bit: Vec<Constant<Bits<8>>>,
    vc_num: Vec<Constant<Bits<4>>>,
    vc_bit: Vec<Constant<Bits<16>>>,
    class1_vcs: Constant<Bits<16>>,
    port_num: Constant<Bits<4>>,
    port_num8: Constant<Bits<8>>,
    /// Bit v set for VC numbers `v >= N` (a table: a comparison is constant when N = 16).
    vc_invalid: Constant<Bits<16>>,
    port_field: Constant<Bits<8>>,
    /// `4 - log2 SP`: a port field (bits 7:4) shifted right by it is `SP*port`.
    request_shift: Constant<Bits<8>>,
    one_m: Constant<Bits<M>>,
    zero_m: Constant<Bits<M>>,
    zero16: Constant<Bits<16>>,
    zero8: Constant<Bits<8>>,
    zero4: Constant<Bits<4>>,
    zero32: Constant<Bits<32>>,
    one32: Constant<Bits<32>>,
    /// The counters' `router.counter_bits` low bits.
    counter_mask: Constant<Bits<32>>,
    _vcs: usize,
    /// Leaves of `front_tree` (`L`, a power of two >= N and >= 2), inner nodes, root.
    _leaves: usize,
    _inner: usize,
    _root: usize,
    /// 1 when a header fits one flit (128/256 bits), else 0.
    _single: usize,
    /// 1 when a header takes two flits (64 bits), else 0.
    _double: usize,
    /// VCs with a partial syndrome register (N with 64-bit flits, else 0).
    _partials: usize,
    /// 1 with `router.allocator = "separable"`, else 0.
    _separable: usize,
    /// 1 with a matching allocator (`islip`, `wavefront`), else 0.
    _matching: usize,
}

/// Check masks over the 120 header bits: `mask[j]` bit i set when header bit
/// i enters check bit j (the code is linear, so probe it with unit vectors);
/// the received check bit j itself (header bit 112 + j) is in the mask too,
/// so a header passes when every masked parity is 0.
pub fn header_check_masks() -> [u128; 8] {
    use exanet_sim::packet::header::{header_ecc, HEADER_PROTECTED_BITS};
    let mut m = [0u128; 8];
    for i in 0..HEADER_PROTECTED_BITS {
        let c = header_ecc(1u128 << i);
        for (j, mj) in m.iter_mut().enumerate() {
            if c >> j & 1 == 1 {
                *mj |= 1 << i;
            }
        }
    }
    for (j, mj) in m.iter_mut().enumerate() {
        *mj |= 1 << (HEADER_PROTECTED_BITS as usize + j);
    }
    m
}

/// Leaves of a binary mux tree over `n` inputs: a power of two, at least 2.
pub fn tree_leaves(n: usize) -> usize {
    n.next_power_of_two().max(2)
}

/// Per inner node of a mux tree of `leaves` leaves, bottom level first (the
/// layout of `InputUnit::front_tree`): the one-hot select bit (index bit) it
/// decides on.
pub fn tree_selects(leaves: usize) -> Vec<u64> {
    let mut v = Vec::new();
    let mut width = leaves / 2;
    let mut bit = 0;
    while width >= 1 {
        v.extend(std::iter::repeat_n(1u64 << bit, width));
        bit += 1;
        width /= 2;
    }
    v
}

fn wide<const W: usize>(v: u128) -> Bits<W> {
    let lo: Bits<W> = bits(v as u64);
    let hi: Bits<W> = bits((v >> 64) as u64);
    if W > 64 {
        lo | (hi << 64u64)
    } else {
        lo
    }
}

impl<const W: usize, const A: usize, const C: usize, const M: usize> InputUnit<W, A, C, M> {
    /// Input port `port` of a router with parameters `p` (valid).
    pub fn new(p: &RouterParams, port: usize) -> Self {
        let n = p.num_vcs();
        let class1 = (p.vcs_per_class..n).fold(0u64, |m, v| m | 1 << v);
        let double = usize::from(p.header_flits() == 2);
        let masks = header_check_masks();
        let matching = usize::from(p.allocator != Allocator::Separable);
        InputUnit {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_data: Default::default(),
            in_head: Default::default(),
            in_tail: Default::default(),
            in_vc: Default::default(),
            node_x: Default::default(),
            node_y: Default::default(),
            node_z: Default::default(),
            has_credit: Default::default(),
            can_start: Default::default(),
            grants: Default::default(),
            req_mat: Default::default(),
            req_mat1: Default::default(),
            flit: Default::default(),
            head: Default::default(),
            tail: Default::default(),
            out_vc: Default::default(),
            credit_out_valid: Default::default(),
            credit_out_vc: Default::default(),
            dropped_packets: Default::default(),
            flit_errors: Default::default(),
            vcs: (0..n).map(|v| InputVc::new(p, v)).collect(),
            front_tree: (0..2 * tree_leaves(n) - 1)
                .map(|_| Default::default())
                .collect(),
            fwd_tree: (0..2 * tree_leaves(n) - 1)
                .map(|_| Default::default())
                .collect(),
            new_drop_tree: (0..2 * tree_leaves(n) - 1)
                .map(|_| Default::default())
                .collect(),
            ovc_tree: (0..2 * tree_leaves(n) - 1)
                .map(|_| Default::default())
                .collect(),
            head_tree: (0..2 * tree_leaves(n) - 1)
                .map(|_| Default::default())
                .collect(),
            tail_tree: (0..2 * tree_leaves(n) - 1)
                .map(|_| Default::default())
                .collect(),
            tree_sel: tree_selects(tree_leaves(n))
                .into_iter()
                .map(|b| Constant::new(bits(b)))
                .collect(),
            route: RouteCompute::new(p, port),
            side_in: (0..10).map(|_| Default::default()).collect(),
            side_head: Constant::new(bits(1 << SIDE_HEAD)),
            side_tail: Constant::new(bits(1 << SIDE_TAIL)),
            side_bad: Constant::new(bits(1 << SIDE_BAD)),
            side_rsel: (0..8)
                .map(|i| Constant::new(bits(1 << (SIDE_RSEL + i))))
                .collect(),
            zero_side: Constant::new(bits(0)),
            arb: Default::default(),
            credit_valid: Default::default(),
            credit_vc: Default::default(),
            dropped: Default::default(),
            errors: Default::default(),
            requests: (0..(n + 1) * (1 - matching))
                .map(|_| Default::default())
                .collect(),
            drops: (0..(n + 1) * matching)
                .map(|_| Default::default())
                .collect(),
            hits: (0..(n + 1) * matching)
                .map(|_| Default::default())
                .collect(),
            rows: (0..(n + 1) * matching)
                .map(|_| Default::default())
                .collect(),
            rows1: (0..(n + 1) * matching)
                .map(|_| Default::default())
                .collect(),
            drop_mode: (0..matching).map(|_| Default::default()).collect(),
            chosen_fwd: Default::default(),
            chosen_new_drop: Default::default(),
            chosen_ovc: Default::default(),
            fwd: Default::default(),
            drop: Default::default(),
            granted: Default::default(),
            do_pop: Default::default(),
            target_full: Default::default(),
            flit_error: Default::default(),
            syndrome_first: (0..=8).map(|_| Default::default()).collect(),
            syndrome_second: (0..9 * double).map(|_| Default::default()).collect(),
            check_in: Default::default(),
            expect_second: (0..n * double).map(|_| Default::default()).collect(),
            partial: (0..n * double).map(|_| Default::default()).collect(),
            mask_first: masks
                .iter()
                .map(|&m| Constant::new(wide(if double == 1 { m & u64::MAX as u128 } else { m })))
                .collect(),
            mask_second: masks[..8 * double]
                .iter()
                .map(|&m| Constant::new(wide(m >> 64)))
                .collect(),
            syndrome_bit: (0..8).map(|j| Constant::new(bits(1 << j))).collect(),
            vc_num: (0..n).map(|v| Constant::new(bits(v as u64))).collect(),
            vc_bit: (0..n).map(|v| Constant::new(bits(1 << v))).collect(),
            class1_vcs: Constant::new(bits(class1)),
            port_num: Constant::new(bits(port as u64)),
            port_num8: Constant::new(bits(port as u64)),
            vc_invalid: Constant::new(bits((n..16).fold(0, |m, v| m | 1 << v))),
            port_field: Constant::new(bits(0xf0)),
            request_shift: Constant::new(bits(
                4 - super::top::port_stride(p).trailing_zeros() as u64,
            )),
            one_m: Constant::new(bits(1)),
            zero_m: Constant::new(bits(0)),
            zero16: Constant::new(bits(0)),
            zero8: Constant::new(bits(0)),
            zero4: Constant::new(bits(0)),
            zero32: Constant::new(bits(0)),
            one32: Constant::new(bits(1)),
            counter_mask: Constant::new(bits(p.counter_mask())),
            _vcs: n,
            _leaves: tree_leaves(n),
            _inner: tree_leaves(n) - 1,
            _root: 2 * tree_leaves(n) - 2,
            _single: 1 - double,
            _double: double,
            _partials: n * double,
            _separable: 1 - matching,
            _matching: matching,
        }
    }
}

impl<const W: usize, const A: usize, const C: usize, const M: usize> Logic
    for InputUnit<W, A, C, M>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, credit_valid, credit_vc, dropped, errors);
        self.arb.clock.next = self.clock.val();
        self.arb.reset.next = self.reset.val();
        // Requests of the VCs, class 1 separated for strict priority.
        for _s in 0..self._separable {
            self.requests[0].next = self.zero16.val();
            for v in 0..self._vcs {
                if self.vcs[v].req_fwd.val() | self.vcs[v].req_drop.val() {
                    self.requests[v + 1].next = self.requests[v].val() | self.vc_bit[v].val();
                } else {
                    self.requests[v + 1].next = self.requests[v].val();
                }
            }
            for k in self._vcs..(self._vcs + 1) {
                self.arb.req1.next = self.requests[k].val() & self.class1_vcs.val();
                self.arb.req0.next = self.requests[k].val() & !self.class1_vcs.val();
            }
        }
        // Matching allocators: a drop if any VC asks for one, else every
        // forward request to the allocator, and after the match the VCs that
        // want the matched output (class 1 first, round-robin).
        for m in 0..self._matching {
            self.drop_mode[m].next = false;
            self.drops[0].next = self.zero16.val();
            self.hits[0].next = self.zero16.val();
            self.rows[0].next = self.zero_m.val();
            self.rows1[0].next = self.zero_m.val();
            for v in 0..self._vcs {
                if self.vcs[v].req_drop.val() {
                    self.drops[v + 1].next = self.drops[v].val() | self.vc_bit[v].val();
                } else {
                    self.drops[v + 1].next = self.drops[v].val();
                }
                if self.vcs[v].req_fwd.val()
                    & self
                        .grants
                        .val()
                        .get_bit(self.vcs[v].ovc.val().get_bits::<4>(4).index())
                {
                    self.hits[v + 1].next = self.hits[v].val() | self.vc_bit[v].val();
                } else {
                    self.hits[v + 1].next = self.hits[v].val();
                }
                if self.vcs[v].req_fwd.val() {
                    self.rows[v + 1].next = self.rows[v].val()
                        | (self.one_m.val()
                            << (((self.vcs[v].ovc.val() & self.port_field.val())
                                >> self.request_shift.val())
                                | self.port_num8.val()));
                } else {
                    self.rows[v + 1].next = self.rows[v].val();
                }
                if self.vcs[v].req_fwd.val() & self.class1_vcs.val().get_bit(v) {
                    self.rows1[v + 1].next = self.rows1[v].val()
                        | (self.one_m.val()
                            << (((self.vcs[v].ovc.val() & self.port_field.val())
                                >> self.request_shift.val())
                                | self.port_num8.val()));
                } else {
                    self.rows1[v + 1].next = self.rows1[v].val();
                }
            }
            for k in self._vcs..(self._vcs + 1) {
                self.drop_mode[m].next = self.drops[k].val().any();
                if self.drop_mode[m].val() {
                    self.arb.req1.next = self.drops[k].val() & self.class1_vcs.val();
                    self.arb.req0.next = self.drops[k].val() & !self.class1_vcs.val();
                } else {
                    self.arb.req1.next = self.hits[k].val() & self.class1_vcs.val();
                    self.arb.req0.next = self.hits[k].val() & !self.class1_vcs.val();
                }
            }
        }
        // The chosen VC's request and front flit: mux trees on the grant
        // index (a VC is granted whenever they are used; with none, some
        // VC's values, which nothing reads: `fwd`/`drop` need `grant_valid`).
        for v in 0..self._vcs {
            self.front_tree[v].next = self.vcs[v].front.val();
            self.fwd_tree[v].next = self.vcs[v].req_fwd.val();
            self.new_drop_tree[v].next = self.vcs[v].new_drop.val();
            self.ovc_tree[v].next = self.vcs[v].ovc.val();
            self.head_tree[v].next = self.vcs[v].front_head.val();
            self.tail_tree[v].next = self.vcs[v].front_tail.val();
        }
        // Leaves past the last VC repeat its values: the grant index never
        // selects them (a constant here would be an unused parameter where
        // the VC count is a power of two).
        for last in (self._vcs - 1)..self._vcs {
            for v in self._vcs..self._leaves {
                self.front_tree[v].next = self.vcs[last].front.val();
                self.fwd_tree[v].next = self.vcs[last].req_fwd.val();
                self.new_drop_tree[v].next = self.vcs[last].new_drop.val();
                self.ovc_tree[v].next = self.vcs[last].ovc.val();
                self.head_tree[v].next = self.vcs[last].front_head.val();
                self.tail_tree[v].next = self.vcs[last].front_tail.val();
            }
        }
        for l in self._leaves..(self._leaves + 1) {
            for j in 0..self._inner {
                if (self.arb.grant_index.val() & self.tree_sel[j].val()).any() {
                    self.front_tree[l + j].next = self.front_tree[2 * j + 1].val();
                    self.fwd_tree[l + j].next = self.fwd_tree[2 * j + 1].val();
                    self.new_drop_tree[l + j].next = self.new_drop_tree[2 * j + 1].val();
                    self.ovc_tree[l + j].next = self.ovc_tree[2 * j + 1].val();
                    self.head_tree[l + j].next = self.head_tree[2 * j + 1].val();
                    self.tail_tree[l + j].next = self.tail_tree[2 * j + 1].val();
                } else {
                    self.front_tree[l + j].next = self.front_tree[2 * j].val();
                    self.fwd_tree[l + j].next = self.fwd_tree[2 * j].val();
                    self.new_drop_tree[l + j].next = self.new_drop_tree[2 * j].val();
                    self.ovc_tree[l + j].next = self.ovc_tree[2 * j].val();
                    self.head_tree[l + j].next = self.head_tree[2 * j].val();
                    self.tail_tree[l + j].next = self.tail_tree[2 * j].val();
                }
            }
        }
        for r in self._root..(self._root + 1) {
            self.flit.next = self.front_tree[r].val();
            self.chosen_fwd.next = self.fwd_tree[r].val();
            self.chosen_new_drop.next = self.new_drop_tree[r].val();
            self.chosen_ovc.next = self.ovc_tree[r].val();
            self.head.next = self.head_tree[r].val();
            self.tail.next = self.tail_tree[r].val();
        }
        self.out_vc.next = self.chosen_ovc.val().get_bits::<4>(0);
        self.fwd.next = self.arb.grant_valid.val() & self.chosen_fwd.val();
        for _m in 0..self._matching {
            // (the same: `grant` is one-hot exactly when `grant_valid`)
            self.fwd.next = self.arb.grant.val().any() & self.chosen_fwd.val();
        }
        self.drop.next = self.arb.grant_valid.val() & !self.chosen_fwd.val();
        self.req_mat.next = self.zero_m.val();
        self.req_mat1.next = self.zero_m.val();
        for m in 0..self._matching {
            for k in self._vcs..(self._vcs + 1) {
                if !self.drop_mode[m].val() {
                    self.req_mat.next = self.rows[k].val();
                    self.req_mat1.next = self.rows1[k].val();
                }
            }
        }
        for _s in 0..self._separable {
            if self.fwd.val() {
                self.req_mat.next = self.one_m.val()
                    << (((self.chosen_ovc.val() & self.port_field.val())
                        >> self.request_shift.val())
                        | self.port_num8.val());
                if (self.arb.grant.val() & self.class1_vcs.val()).any() {
                    self.req_mat1.next = self.one_m.val()
                        << (((self.chosen_ovc.val() & self.port_field.val())
                            >> self.request_shift.val())
                            | self.port_num8.val());
                }
            }
        }
        // A drop is always granted; a forward when its output granted this port.
        self.granted.next = self.grants.val().get_bit(self.port_num.val().index());
        for _m in 0..self._matching {
            // the chosen VC's output is the matched one (a forward is chosen
            // only among the VCs that want it)
            self.granted.next = self
                .grants
                .val()
                .get_bit(self.chosen_ovc.val().get_bits::<4>(4).index());
        }
        self.do_pop.next = self.drop.val() | (self.fwd.val() & self.granted.val());
        self.arb.accept.next = self.do_pop.val();
        // Arriving flit: into its VC's buffer unless the VC is out of range or full.
        self.target_full.next = false;
        for v in 0..self._vcs {
            if (self.in_vc.val() == self.vc_num[v].val()) & self.vcs[v].full.val() {
                self.target_full.next = true;
            }
        }
        self.flit_error.next = self.in_valid.val()
            & (self.vc_invalid.val().get_bit(self.in_vc.val().index()) | self.target_full.val());
        // Header check of the arriving flit.
        self.syndrome_first[0].next = self.zero8.val();
        for j in 0..8 {
            if (self.in_data.val() & self.mask_first[j].val()).xor() {
                self.syndrome_first[j + 1].next =
                    self.syndrome_first[j].val() | self.syndrome_bit[j].val();
            } else {
                self.syndrome_first[j + 1].next = self.syndrome_first[j].val();
            }
        }
        self.check_in.next = false;
        for _k in 0..self._single {
            self.check_in.next = self.syndrome_first[8].val() == self.zero8.val();
        }
        for _k in 0..self._double {
            self.syndrome_second[0].next = self.zero8.val();
            for j in 0..8 {
                if (self.in_data.val() & self.mask_second[j].val()).xor() {
                    self.syndrome_second[j + 1].next =
                        self.syndrome_second[j].val() | self.syndrome_bit[j].val();
                } else {
                    self.syndrome_second[j + 1].next = self.syndrome_second[j].val();
                }
            }
        }
        for v in 0..self._partials {
            self.expect_second[v].clock.next = self.clock.val();
            self.partial[v].clock.next = self.clock.val();
            self.expect_second[v].d.next = self.expect_second[v].q.val();
            self.partial[v].d.next = self.partial[v].q.val();
            if self.in_vc.val() == self.vc_num[v].val() {
                self.check_in.next = self.expect_second[v].q.val()
                    & ((self.partial[v].q.val() ^ self.syndrome_second[8].val())
                        == self.zero8.val());
                if self.in_valid.val() & !self.flit_error.val() {
                    self.expect_second[v].d.next = self.in_head.val() & !self.in_tail.val();
                    self.partial[v].d.next = self.syndrome_first[8].val();
                }
            }
            if self.reset.val() {
                self.expect_second[v].d.next = false;
            }
        }
        // Route of the arriving flit as a head, stored with it.
        self.route.dest.next = self.in_data.val().get_bits::<14>(29);
        self.route.in_vc.next = self.in_vc.val();
        self.route.node_x.next = self.node_x.val();
        self.route.node_y.next = self.node_y.val();
        self.route.node_z.next = self.node_z.val();
        if self.in_head.val() & self.in_tail.val() {
            self.side_in[0].next = self.side_head.val() | self.side_tail.val();
        } else if self.in_head.val() {
            self.side_in[0].next = self.side_head.val();
        } else if self.in_tail.val() {
            self.side_in[0].next = self.side_tail.val();
        } else {
            self.side_in[0].next = self.zero_side.val();
        }
        if self.route.bad.val() {
            self.side_in[1].next = self.side_in[0].val() | self.side_bad.val();
        } else {
            self.side_in[1].next = self.side_in[0].val();
        }
        for i in 0..8 {
            if self.route.rsel.val().get_bit(i) {
                self.side_in[i + 2].next = self.side_in[i + 1].val() | self.side_rsel[i].val();
            } else {
                self.side_in[i + 2].next = self.side_in[i + 1].val();
            }
        }
        for v in 0..self._vcs {
            self.vcs[v].clock.next = self.clock.val();
            self.vcs[v].reset.next = self.reset.val();
            self.vcs[v].push.next = self.in_valid.val()
                & (self.in_vc.val() == self.vc_num[v].val())
                & !self.vcs[v].full.val();
            self.vcs[v].din.next = self.in_data.val();
            self.vcs[v].din_side.next = self.side_in[9].val();
            self.vcs[v].din_check.next = self.check_in.val();
            self.vcs[v].pop.next = self.do_pop.val() & self.arb.grant.val().get_bit(v);
            self.vcs[v].has_credit.next = self.has_credit.val();
            self.vcs[v].can_start.next = self.can_start.val();
        }
        // The edge: credit upstream for the flit leaving, counters.
        self.credit_valid.d.next = self.do_pop.val();
        if self.do_pop.val() {
            self.credit_vc.d.next = self.arb.grant_index.val();
        }
        if self.drop.val() & self.chosen_new_drop.val() {
            self.dropped.d.next =
                (self.dropped.q.val() + self.one32.val()) & self.counter_mask.val();
        }
        if self.flit_error.val() {
            self.errors.d.next = (self.errors.q.val() + self.one32.val()) & self.counter_mask.val();
        }
        if self.reset.val() {
            self.credit_valid.d.next = false;
            self.credit_vc.d.next = self.zero4.val();
            self.dropped.d.next = self.zero32.val();
            self.errors.d.next = self.zero32.val();
        }
        self.credit_out_valid.next = self.credit_valid.q.val();
        self.credit_out_vc.next = self.credit_vc.q.val();
        self.dropped_packets.next = self.dropped.q.val();
        self.flit_errors.next = self.errors.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use exanet_sim::rng::Rng;
    use exanet_sim::router::header_fields::{header_ecc_ok, seal_header};

    /// The masked parities are all 0 exactly when the model's check passes.
    #[test]
    fn header_check_masks_agree_with_the_model() {
        let m = header_check_masks();
        let pass = |h: u128| m.iter().all(|&mj| (h & mj).count_ones().is_multiple_of(2));
        let mut rng = Rng::new(4);
        for _ in 0..20_000 {
            let h = seal_header(rng.next_u128());
            assert!(header_ecc_ok(h) && pass(h));
            let flips = 1 + rng.below(3);
            let mut g = h;
            for _ in 0..flips {
                g ^= 1u128 << rng.below(128);
            }
            assert_eq!(pass(g), header_ecc_ok(g), "{h:032x} -> {g:032x}");
        }
        // the reserved ecc byte is not checked
        assert!(pass(seal_header(5) ^ 1u128 << 127));
    }
}
