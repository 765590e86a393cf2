//! `input_vc`: one input virtual channel of the router: its flit buffer, its
//! state (`Idle`, `Active(out port, out VC)`, `Dropping`), the route of the
//! packet at its front and the request it makes this cycle.
//!
//! Purpose: the per-VC half of the router's input unit, exactly as in the
//! golden model (`exanet_sim::router`, module doc, step 1 and the edge).
//!
//! Ports:
//! - `clock`; `reset` (synchronous: buffer emptied, state `Idle`);
//! - `push`, `din` (W b), `din_head`, `din_tail`: write a flit (the input unit
//!   only pushes when the buffer is not full); `din_check`: the header this
//!   flit completes passes the SECDED check (see `input_unit`);
//! - `pop`: the front flit leaves (forwarded or dropped) at this edge;
//! - `node_x`, `node_y`, `node_z`: this router's coordinates (to route compute);
//! - `has_credit`, `can_start` (256 b): bit `16*port + vc` tells whether output
//!   VC (port, vc) has a credit, resp. is free with `max_packet_flits` credits;
//! - `req_fwd`: forward request to `ovc` (port 7:4, VC 3:0); a head asks
//!   for the lowest-numbered VC of its route's set (`route_compute`'s
//!   `vmask`) that may start a packet, as the golden model;
//! - `req_drop`: drop request (a bad packet or the rest of one); `new_drop`:
//!   this drop starts a bad packet (counted by the input unit);
//! - `front` (W b), `front_head`, `front_tail`: the flit at the front;
//! - `full`: `buffer_flits` flits are held (a pushed flit would be discarded).
//!
//! Latency: requests are combinational from registered state; a pushed flit
//! can request in the next cycle (2 cycles header-in to header-out).
//!
//! Storage: two `FifoMem` LUTRAM leaves (data, and the head/tail bits) of
//! `2^A >= buffer_flits` slots; occupancy never exceeds `buffer_flits`.
//!
//! Parameters: `W` flit data bits; `A` buffer address bits; `C = A + 1`
//! count bits; at run time `buffer_flits`, whether a header takes two flits
//! (64-bit flits), and the route compute of this (input port, VC).

use super::route_compute::RouteCompute;
use crate::common::fifo::FifoMem;
use exanet_sim::router::RouterParams;
use rust_hdl::prelude::*;

/// VC state encoding.
const IDLE: u64 = 0;
const ACTIVE: u64 = 1;
const DROPPING: u64 = 2;

/// One input VC: buffer, state, route, request.
#[derive(LogicBlock)]
pub struct InputVc<const W: usize, const A: usize, const C: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// Write `din` at the tail of the buffer.
    pub push: Signal<In, bool>,
    /// Flit data to write.
    pub din: Signal<In, Bits<W>>,
    /// The written flit is a head.
    pub din_head: Signal<In, bool>,
    /// The written flit is a tail.
    pub din_tail: Signal<In, bool>,
    /// The header the written flit completes passes its check.
    pub din_check: Signal<In, bool>,
    /// The front flit leaves at this edge.
    pub pop: Signal<In, bool>,
    /// This router's x coordinate.
    pub node_x: Signal<In, Bits<4>>,
    /// This router's y coordinate.
    pub node_y: Signal<In, Bits<4>>,
    /// This router's z coordinate.
    pub node_z: Signal<In, Bits<4>>,
    /// Per output VC (bit `16*port + vc`): credits > 0.
    pub has_credit: Signal<In, Bits<256>>,
    /// Per output VC: not busy and credits >= `max_packet_flits`.
    pub can_start: Signal<In, Bits<256>>,
    /// Forward request to output VC `ovc`.
    pub req_fwd: Signal<Out, bool>,
    /// Drop request.
    pub req_drop: Signal<Out, bool>,
    /// The drop request starts a bad packet.
    pub new_drop: Signal<Out, bool>,
    /// Target output port (7:4) and VC (3:0).
    pub ovc: Signal<Out, Bits<8>>,
    /// Front flit data.
    pub front: Signal<Out, Bits<W>>,
    /// Front flit is a head.
    pub front_head: Signal<Out, bool>,
    /// Front flit is a tail.
    pub front_tail: Signal<Out, bool>,
    /// The buffer holds `buffer_flits` flits.
    pub full: Signal<Out, bool>,
    data: FifoMem<W, A>,
    meta: FifoMem<2, A>,
    /// The header check result, stored with the flit that completes a header.
    checks: FifoMem<1, A>,
    route: RouteCompute,
    /// The route's output port in bits 7:4.
    start_port: Signal<Local, Bits<8>>,
    /// Per VC w: the `can_start` bit of (route's port, w).
    start_index: Vec<Signal<Local, Bits<8>>>,
    /// Prefix chain: bit w set when (route's port, w) may start a packet;
    /// element N is the whole vector.
    start: Vec<Signal<Local, Bits<16>>>,
    cand: Signal<Local, Bits<16>>,
    lowest: Signal<Local, Bits<16>>,
    pick: Signal<Local, Bits<8>>,
    /// What an idle head asks for: the route's port and the picked VC.
    head_ovc: Signal<Local, Bits<8>>,
    head_ok: Signal<Local, bool>,
    vc_num8: Vec<Constant<Bits<8>>>,
    vc_bit16: Vec<Constant<Bits<16>>>,
    port_field: Constant<Bits<8>>,
    one16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    /// VCs per link.
    _vcs: usize,
    rd: DFF<Bits<A>>,
    wr: DFF<Bits<A>>,
    count: DFF<Bits<C>>,
    state: DFF<Bits<2>>,
    active_ovc: DFF<Bits<8>>,
    meta_in: Signal<Local, Bits<2>>,
    head: Signal<Local, bool>,
    tail: Signal<Local, bool>,
    nonempty: Signal<Local, bool>,
    header_incomplete: Signal<Local, bool>,
    malformed: Signal<Local, bool>,
    header_ok: Signal<Local, bool>,
    check_in: Signal<Local, Bits<1>>,
    two_flit_header: Constant<bool>,
    depth: Constant<Bits<C>>,
    two_c: Constant<Bits<C>>,
    zero_c: Constant<Bits<C>>,
    one_c: Constant<Bits<C>>,
    zero_a: Constant<Bits<A>>,
    one_a: Constant<Bits<A>>,
    zero8: Constant<Bits<8>>,
    st_idle: Constant<Bits<2>>,
    st_active: Constant<Bits<2>>,
    st_dropping: Constant<Bits<2>>,
    meta_head: Constant<Bits<2>>,
    meta_tail: Constant<Bits<2>>,
    meta_both: Constant<Bits<2>>,
    meta_none: Constant<Bits<2>>,
    check_pass: Constant<Bits<1>>,
    check_fail: Constant<Bits<1>>,
}

impl<const W: usize, const A: usize, const C: usize> InputVc<W, A, C> {
    /// VC `in_vc` of input port `in_port` (params valid; `2^A >= buffer_flits`, `C = A + 1`).
    pub fn new(p: &RouterParams, in_port: usize, in_vc: usize) -> Self {
        assert!(C == A + 1 && p.buffer_flits <= 1 << A && W == p.flit_bits);
        InputVc {
            clock: Default::default(),
            reset: Default::default(),
            push: Default::default(),
            din: Default::default(),
            din_head: Default::default(),
            din_tail: Default::default(),
            din_check: Default::default(),
            pop: Default::default(),
            node_x: Default::default(),
            node_y: Default::default(),
            node_z: Default::default(),
            has_credit: Default::default(),
            can_start: Default::default(),
            req_fwd: Default::default(),
            req_drop: Default::default(),
            new_drop: Default::default(),
            ovc: Default::default(),
            front: Default::default(),
            front_head: Default::default(),
            front_tail: Default::default(),
            full: Default::default(),
            data: Default::default(),
            meta: Default::default(),
            checks: Default::default(),
            route: RouteCompute::new(p, in_port, in_vc),
            start_port: Default::default(),
            start_index: (0..p.num_vcs()).map(|_| Default::default()).collect(),
            start: (0..=p.num_vcs()).map(|_| Default::default()).collect(),
            cand: Default::default(),
            lowest: Default::default(),
            pick: Default::default(),
            head_ovc: Default::default(),
            head_ok: Default::default(),
            vc_num8: (0..16).map(|v| Constant::new(bits(v))).collect(),
            vc_bit16: (0..p.num_vcs())
                .map(|v| Constant::new(bits(1 << v)))
                .collect(),
            port_field: Constant::new(bits(0xf0)),
            one16: Constant::new(bits(1)),
            zero16: Constant::new(bits(0)),
            _vcs: p.num_vcs(),
            rd: Default::default(),
            wr: Default::default(),
            count: Default::default(),
            state: Default::default(),
            active_ovc: Default::default(),
            meta_in: Default::default(),
            head: Default::default(),
            tail: Default::default(),
            nonempty: Default::default(),
            header_incomplete: Default::default(),
            malformed: Default::default(),
            header_ok: Default::default(),
            check_in: Default::default(),
            two_flit_header: Constant::new(p.header_flits() == 2),
            depth: Constant::new(bits(p.buffer_flits as u64)),
            two_c: Constant::new(bits(2)),
            zero_c: Constant::new(bits(0)),
            one_c: Constant::new(bits(1)),
            zero_a: Constant::new(bits(0)),
            one_a: Constant::new(bits(1)),
            zero8: Constant::new(bits(0)),
            st_idle: Constant::new(bits(IDLE)),
            st_active: Constant::new(bits(ACTIVE)),
            st_dropping: Constant::new(bits(DROPPING)),
            meta_head: Constant::new(bits(1)),
            meta_tail: Constant::new(bits(2)),
            meta_both: Constant::new(bits(3)),
            meta_none: Constant::new(bits(0)),
            check_pass: Constant::new(bits(1)),
            check_fail: Constant::new(bits(0)),
        }
    }
}

impl<const W: usize, const A: usize, const C: usize> Logic for InputVc<W, A, C> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rd, wr, count, state, active_ovc);
        // Buffer storage.
        if self.din_head.val() & self.din_tail.val() {
            self.meta_in.next = self.meta_both.val();
        } else if self.din_head.val() {
            self.meta_in.next = self.meta_head.val();
        } else if self.din_tail.val() {
            self.meta_in.next = self.meta_tail.val();
        } else {
            self.meta_in.next = self.meta_none.val();
        }
        self.data.clock.next = self.clock.val();
        self.data.write_enable.next = self.push.val();
        self.data.write_address.next = self.wr.q.val();
        self.data.write_data.next = self.din.val();
        self.data.read_address.next = self.rd.q.val();
        self.meta.clock.next = self.clock.val();
        self.meta.write_enable.next = self.push.val();
        self.meta.write_address.next = self.wr.q.val();
        self.meta.write_data.next = self.meta_in.val();
        self.meta.read_address.next = self.rd.q.val();
        if self.din_check.val() {
            self.check_in.next = self.check_pass.val();
        } else {
            self.check_in.next = self.check_fail.val();
        }
        self.checks.clock.next = self.clock.val();
        self.checks.write_enable.next = self.push.val();
        self.checks.write_address.next = self.wr.q.val();
        self.checks.write_data.next = self.check_in.val();
        // The check sits with the header's last flit: the second with 64-bit flits.
        if self.two_flit_header.val() {
            self.checks.read_address.next = self.rd.q.val() + self.one_a.val();
        } else {
            self.checks.read_address.next = self.rd.q.val();
        }
        self.header_ok.next = self.checks.read_data.val().any();
        self.head.next = self.meta.read_data.val().get_bit(0);
        self.tail.next = self.meta.read_data.val().get_bit(1);
        self.front.next = self.data.read_data.val();
        self.front_head.next = self.head.val();
        self.front_tail.next = self.tail.val();
        // Route of the front flit (meaningful when it is a head).
        self.route.dest.next = self.data.read_data.val().get_bits::<14>(29);
        self.route.node_x.next = self.node_x.val();
        self.route.node_y.next = self.node_y.val();
        self.route.node_z.next = self.node_z.val();
        // The VC an idle head asks for: the lowest of its route's set that may
        // start a packet (`x & -x` isolates it); with `vc_select = flow` the
        // set is the one per-flow VC.
        self.start_port.next = self.route.ovc.val() & self.port_field.val();
        self.start[0].next = self.zero16.val();
        for w in 0..self._vcs {
            self.start_index[w].next = self.start_port.val() | self.vc_num8[w].val();
            if self
                .can_start
                .val()
                .get_bit(self.start_index[w].val().index())
            {
                self.start[w + 1].next = self.start[w].val() | self.vc_bit16[w].val();
            } else {
                self.start[w + 1].next = self.start[w].val();
            }
        }
        for k in self._vcs..(self._vcs + 1) {
            self.cand.next = self.start[k].val() & self.route.vmask.val();
        }
        self.lowest.next = self.cand.val() & (!self.cand.val() + self.one16.val());
        self.pick.next = self.zero8.val();
        for v in 0..16 {
            if self.lowest.val().get_bit(v) {
                self.pick.next = self.vc_num8[v].val();
            }
        }
        self.head_ovc.next = (self.route.ovc.val() & self.port_field.val()) | self.pick.val();
        self.head_ok.next = self.cand.val().any();
        // Request, from registered state only.
        self.nonempty.next = self.count.q.val() != self.zero_c.val();
        self.header_incomplete.next =
            self.two_flit_header.val() & (self.count.q.val() < self.two_c.val());
        // Orphan body flit, or a 64-bit head that is also a tail (truncated header).
        self.malformed.next = !self.head.val() | (self.two_flit_header.val() & self.tail.val());
        self.req_fwd.next = false;
        self.req_drop.next = false;
        self.new_drop.next = false;
        self.ovc.next = self.head_ovc.val();
        if self.nonempty.val() {
            if self.state.q.val() == self.st_active.val() {
                self.ovc.next = self.active_ovc.q.val();
                self.req_fwd.next = self
                    .has_credit
                    .val()
                    .get_bit(self.active_ovc.q.val().index());
            } else if self.state.q.val() == self.st_dropping.val() {
                self.req_drop.next = true;
            } else if self.malformed.val() {
                self.req_drop.next = true;
                self.new_drop.next = true;
            } else if !self.header_incomplete.val() {
                if self.route.bad.val() | !self.header_ok.val() {
                    self.req_drop.next = true;
                    self.new_drop.next = true;
                } else {
                    self.req_fwd.next = self.head_ok.val();
                }
            }
        }
        // The edge.
        if self.push.val() {
            self.wr.d.next = self.wr.q.val() + self.one_a.val();
        }
        if self.pop.val() {
            self.rd.d.next = self.rd.q.val() + self.one_a.val();
        }
        if self.push.val() & !self.pop.val() {
            self.count.d.next = self.count.q.val() + self.one_c.val();
        }
        if self.pop.val() & !self.push.val() {
            self.count.d.next = self.count.q.val() - self.one_c.val();
        }
        if self.pop.val() {
            if self.state.q.val() == self.st_idle.val() {
                // A head leaves: a multi-flit packet holds the VC until its tail.
                if !self.tail.val() {
                    if self.req_fwd.val() {
                        self.state.d.next = self.st_active.val();
                        self.active_ovc.d.next = self.head_ovc.val();
                    } else {
                        self.state.d.next = self.st_dropping.val();
                    }
                }
            } else if self.tail.val() {
                self.state.d.next = self.st_idle.val();
            }
        }
        if self.reset.val() {
            self.rd.d.next = self.zero_a.val();
            self.wr.d.next = self.zero_a.val();
            self.count.d.next = self.zero_c.val();
            self.state.d.next = self.st_idle.val();
            self.active_ovc.d.next = self.zero8.val();
        }
        self.full.next = self.count.q.val() == self.depth.val();
    }
}
