//! `output_unit`: one output port of the router: output arbitration among the
//! input ports, the credit counter and busy bit of each output VC, and the
//! output register.
//!
//! Purpose: step 3 and the output half of step 4 of the golden model's cycle
//! (`exanet_sim::router`, module doc).
//!
//! Ports:
//! - `clock`; `reset` (synchronous: every VC free with full credits);
//! - `req_mat`, `req_mat1` (M b): every input port's forward request as bit
//!   `SP*out_port + in_port` (all / class 1; `top::request_bit`); this port
//!   uses its `SP` bits
//!   (with a matching allocator, `router.allocator = "islip"` or
//!   `"wavefront"`: the match, one input per output, and no class 1);
//! - `grant` (16 b, one-hot), `grant_index` (4 b): the input port granted this
//!   cycle (combinational);
//! - `xin_data` (W b), `xin_head`, `xin_tail`, `xin_vc` (4 b): the granted
//!   input's flit and output VC, through the router's crossbar;
//! - `credit_in_valid`, `credit_in_vc` (4 b): a credit from downstream; ignored
//!   and counted in `credit_errors` when the VC is `>= N` or its counter would
//!   exceed `buffer_flits`;
//! - `has_credit`, `can_start` (M b): this port's bits at `SV*port + v`
//!   (`top::status_bit`): VC v has a credit; VC v is free and has
//!   `max_packet_flits` credits;
//! - `out_valid`, `out_data`, `out_head`, `out_tail`, `out_vc`: registered flit
//!   (valid for exactly one cycle per send);
//! - `credit_errors` (32 b): counter of `router.counter_bits` bits, wrapping
//!   modulo `2^counter_bits` (the bits above are 0).
//!
//! Credits are kept as *used* slots (`buffer_flits - credits`), so the
//! power-on value 0 of every register is the golden model's initial state
//! (full credits) with or without a reset.
//!
//! Latency: a grant in cycle t is on `out_*` during t+1; a credit arriving
//! in cycle t is usable in t+1; a send and a credit on one VC in the same
//! cycle leave the counter unchanged.
//!
//! Parameters: `W`, `A`, `C` as in `input_vc`; at run time the port number,
//! `N`, `buffer_flits` and `max_packet_flits`.

use super::allocator::ClassArbiter;
use exanet_sim::router::{Allocator, RouterParams};
use rust_hdl::prelude::*;

/// One output port: arbitration, credits, busy bits, output register.
#[derive(LogicBlock)]
pub struct OutputUnit<const W: usize, const A: usize, const C: usize, const M: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// Forward requests of every input (bit `SP*out_port + in_port`).
    pub req_mat: Signal<In, Bits<M>>,
    /// The class-1 subset.
    pub req_mat1: Signal<In, Bits<M>>,
    /// Granted flit data (crossbar).
    pub xin_data: Signal<In, Bits<W>>,
    /// Granted flit is a head.
    pub xin_head: Signal<In, bool>,
    /// Granted flit is a tail.
    pub xin_tail: Signal<In, bool>,
    /// Output VC of the granted flit.
    pub xin_vc: Signal<In, Bits<4>>,
    /// A credit arrives from downstream.
    pub credit_in_valid: Signal<In, bool>,
    /// Its VC.
    pub credit_in_vc: Signal<In, Bits<4>>,
    /// One-hot granted input port.
    pub grant: Signal<Out, Bits<16>>,
    /// Index of the granted input port.
    pub grant_index: Signal<Out, Bits<4>>,
    /// VCs of this port with a credit (at bits `SV*port + vc`).
    pub has_credit: Signal<Out, Bits<M>>,
    /// VCs of this port a head may take.
    pub can_start: Signal<Out, Bits<M>>,
    /// A flit leaves this cycle.
    pub out_valid: Signal<Out, bool>,
    /// Its data.
    pub out_data: Signal<Out, Bits<W>>,
    /// It is a head.
    pub out_head: Signal<Out, bool>,
    /// It is a tail.
    pub out_tail: Signal<Out, bool>,
    /// Its VC.
    pub out_vc: Signal<Out, Bits<4>>,
    /// Credits ignored.
    pub credit_errors: Signal<Out, Bits<32>>,
    arb: ClassArbiter,
    used: Vec<DFF<Bits<C>>>,
    busy: DFF<Bits<16>>,
    valid_reg: DFF<bool>,
    data_reg: DFF<Bits<W>>,
    head_reg: DFF<bool>,
    tail_reg: DFF<bool>,
    vc_reg: DFF<Bits<4>>,
    errors: DFF<Bits<32>>,
    /// The request vectors from this port's first bit on (bits 15:0 read).
    req_unused_above_16: Signal<Local, Bits<M>>,
    req1_unused_above_16: Signal<Local, Bits<M>>,
    send: Signal<Local, bool>,
    send_vc: Signal<Local, Bits<16>>,
    dec: Vec<Signal<Local, bool>>,
    ret: Vec<Signal<Local, bool>>,
    saturated: Signal<Local, bool>,
    credit_error: Signal<Local, bool>,
    credit_row: Vec<Signal<Local, Bits<M>>>,
    start_row: Vec<Signal<Local, Bits<M>>>,
    /// Bit `SP*port` of the request vectors: this port's first.
    request_base: Constant<Bits<8>>,
    /// The input ports (bits `0..P`).
    in_ports: Constant<Bits<16>>,
    row_bit: Vec<Constant<Bits<M>>>,
    vc_num: Vec<Constant<Bits<4>>>,
    /// Bit v set for VC numbers `v >= N`.
    vc_invalid: Constant<Bits<16>>,
    depth: Constant<Bits<C>>,
    start_limit: Constant<Bits<C>>,
    zero_c: Constant<Bits<C>>,
    one_c: Constant<Bits<C>>,
    one16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    zero_m: Constant<Bits<M>>,
    zero32: Constant<Bits<32>>,
    one32: Constant<Bits<32>>,
    /// The counter's `router.counter_bits` low bits.
    counter_mask: Constant<Bits<32>>,
    _vcs: usize,
    /// 1 with `router.allocator = "separable"`, else 0.
    _separable: usize,
    /// 1 with a matching allocator (`islip`, `wavefront`), else 0.
    _matching: usize,
}

impl<const W: usize, const A: usize, const C: usize, const M: usize> OutputUnit<W, A, C, M> {
    /// Output port `port` of a router with parameters `p` (valid).
    pub fn new(p: &RouterParams, port: usize) -> Self {
        assert!(C == A + 1 && p.buffer_flits <= 1 << A && W == p.flit_bits);
        let n = p.num_vcs();
        let ports = p.num_ports();
        let matching = usize::from(p.allocator != Allocator::Separable);
        OutputUnit {
            clock: Default::default(),
            reset: Default::default(),
            req_mat: Default::default(),
            req_mat1: Default::default(),
            xin_data: Default::default(),
            xin_head: Default::default(),
            xin_tail: Default::default(),
            xin_vc: Default::default(),
            credit_in_valid: Default::default(),
            credit_in_vc: Default::default(),
            grant: Default::default(),
            grant_index: Default::default(),
            has_credit: Default::default(),
            can_start: Default::default(),
            out_valid: Default::default(),
            out_data: Default::default(),
            out_head: Default::default(),
            out_tail: Default::default(),
            out_vc: Default::default(),
            credit_errors: Default::default(),
            arb: Default::default(),
            used: (0..n).map(|_| Default::default()).collect(),
            busy: Default::default(),
            valid_reg: Default::default(),
            data_reg: Default::default(),
            head_reg: Default::default(),
            tail_reg: Default::default(),
            vc_reg: Default::default(),
            errors: Default::default(),
            req_unused_above_16: Default::default(),
            req1_unused_above_16: Default::default(),
            send: Default::default(),
            send_vc: Default::default(),
            dec: (0..n).map(|_| Default::default()).collect(),
            ret: (0..n).map(|_| Default::default()).collect(),
            saturated: Default::default(),
            credit_error: Default::default(),
            credit_row: (0..=n).map(|_| Default::default()).collect(),
            start_row: (0..=n).map(|_| Default::default()).collect(),
            request_base: Constant::new(bits(super::top::request_bit(p, port, 0) as u64)),
            in_ports: Constant::new(bits((1 << ports) - 1)),
            row_bit: (0..n)
                .map(|v| Constant::new(bits::<M>(1) << super::top::status_bit(p, port, v) as u64))
                .collect(),
            vc_num: (0..n).map(|v| Constant::new(bits(v as u64))).collect(),
            vc_invalid: Constant::new(bits((n..16).fold(0, |m, v| m | 1 << v))),
            depth: Constant::new(bits(p.buffer_flits as u64)),
            start_limit: Constant::new(bits((p.buffer_flits - p.max_packet_flits) as u64)),
            zero_c: Constant::new(bits(0)),
            one_c: Constant::new(bits(1)),
            one16: Constant::new(bits(1)),
            zero16: Constant::new(bits(0)),
            zero_m: Constant::new(bits(0)),
            zero32: Constant::new(bits(0)),
            one32: Constant::new(bits(1)),
            counter_mask: Constant::new(bits(p.counter_mask())),
            _vcs: n,
            _separable: 1 - matching,
            _matching: matching,
        }
    }
}

impl<const W: usize, const A: usize, const C: usize, const M: usize> Logic
    for OutputUnit<W, A, C, M>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy, valid_reg, data_reg, head_reg, tail_reg, vc_reg, errors);
        for v in 0..self._vcs {
            self.used[v].clock.next = self.clock.val();
            self.used[v].d.next = self.used[v].q.val();
        }
        // Output arbitration among the input ports that request this port.
        self.arb.clock.next = self.clock.val();
        self.arb.reset.next = self.reset.val();
        self.req_unused_above_16.next = self.req_mat.val() >> self.request_base.val();
        self.req1_unused_above_16.next = self.req_mat1.val() >> self.request_base.val();
        self.arb.req1.next =
            self.req1_unused_above_16.val().get_bits::<16>(0) & self.in_ports.val();
        self.arb.req0.next = self.req_unused_above_16.val().get_bits::<16>(0)
            & !self.req1_unused_above_16.val().get_bits::<16>(0)
            & self.in_ports.val();
        self.send.next = self.arb.grant_valid.val();
        for _s in 0..self._separable {
            self.arb.accept.next = self.send.val();
        }
        // Matching allocators: the router's switch allocator already matched
        // this port, `req_mat` holds only that input, and the pointer stays.
        for _m in 0..self._matching {
            self.arb.accept.next = false;
        }
        self.grant.next = self.arb.grant.val();
        self.grant_index.next = self.arb.grant_index.val();
        // Credits: a send uses one, a credit from downstream frees one.
        self.send_vc.next = self.one16.val() << self.xin_vc.val();
        self.saturated.next = false;
        for v in 0..self._vcs {
            self.dec[v].next = self.send.val() & (self.xin_vc.val() == self.vc_num[v].val());
            // Accepted unless the counter, after this cycle's send, is full.
            self.ret[v].next = self.credit_in_valid.val()
                & (self.credit_in_vc.val() == self.vc_num[v].val())
                & ((self.used[v].q.val() != self.zero_c.val()) | self.dec[v].val());
            if self.credit_in_valid.val()
                & (self.credit_in_vc.val() == self.vc_num[v].val())
                & !self.ret[v].val()
            {
                self.saturated.next = true;
            }
            if self.dec[v].val() & !self.ret[v].val() {
                self.used[v].d.next = self.used[v].q.val() + self.one_c.val();
            }
            if self.ret[v].val() & !self.dec[v].val() {
                self.used[v].d.next = self.used[v].q.val() - self.one_c.val();
            }
        }
        self.credit_error.next = self.credit_in_valid.val()
            & (self
                .vc_invalid
                .val()
                .get_bit(self.credit_in_vc.val().index())
                | self.saturated.val());
        if self.credit_error.val() {
            self.errors.d.next = (self.errors.q.val() + self.one32.val()) & self.counter_mask.val();
        }
        // A head holds the VC until its tail.
        if self.send.val() {
            if self.xin_head.val() & !self.xin_tail.val() {
                self.busy.d.next = self.busy.q.val() | self.send_vc.val();
            } else if self.xin_tail.val() {
                self.busy.d.next = self.busy.q.val() & !self.send_vc.val();
            }
        }
        // Output register: valid for one cycle per send.
        self.valid_reg.d.next = self.send.val();
        if self.send.val() {
            self.data_reg.d.next = self.xin_data.val();
            self.head_reg.d.next = self.xin_head.val();
            self.tail_reg.d.next = self.xin_tail.val();
            self.vc_reg.d.next = self.xin_vc.val();
        }
        if self.reset.val() {
            for v in 0..self._vcs {
                self.used[v].d.next = self.zero_c.val();
            }
            self.busy.d.next = self.zero16.val();
            self.valid_reg.d.next = false;
            self.errors.d.next = self.zero32.val();
        }
        // Status of this port's VCs for the input VCs' requests.
        self.credit_row[0].next = self.zero_m.val();
        self.start_row[0].next = self.zero_m.val();
        for v in 0..self._vcs {
            if self.used[v].q.val() != self.depth.val() {
                self.credit_row[v + 1].next = self.credit_row[v].val() | self.row_bit[v].val();
            } else {
                self.credit_row[v + 1].next = self.credit_row[v].val();
            }
            if !self.busy.q.val().get_bit(v) & (self.used[v].q.val() <= self.start_limit.val()) {
                self.start_row[v + 1].next = self.start_row[v].val() | self.row_bit[v].val();
            } else {
                self.start_row[v + 1].next = self.start_row[v].val();
            }
        }
        for k in self._vcs..(self._vcs + 1) {
            self.has_credit.next = self.credit_row[k].val();
            self.can_start.next = self.start_row[k].val();
        }
        self.out_valid.next = self.valid_reg.q.val();
        self.out_data.next = self.data_reg.q.val();
        self.out_head.next = self.head_reg.q.val();
        self.out_tail.next = self.tail_reg.q.val();
        self.out_vc.next = self.vc_reg.q.val();
        self.credit_errors.next = self.errors.q.val();
    }
}
