//! `input_vc`: one input virtual channel of the router: its flit buffer, its
//! state (`Idle`, `Active(out port, out VC)`, `Dropping`), the VC choice of
//! the packet at its front and the request it makes this cycle.
//!
//! Purpose: the per-VC half of the router's input unit, exactly as in the
//! golden model (`exanet_sim::router`, module doc, step 1 and the edge).
//!
//! Ports:
//! - `clock`; `reset` (synchronous: buffer emptied, state `Idle`);
//! - `push`, `din` (W b), `din_side` (11 b): write a flit (the input unit
//!   only pushes when the buffer is not full) and its sideband word: head
//!   (bit [`SIDE_HEAD`]), tail ([`SIDE_TAIL`]), and for a head its route as
//!   `route_compute` names it (`rsel` at [`SIDE_RSEL`], `bad` at
//!   [`SIDE_BAD`]), computed by the input unit as the flit arrives;
//!   `din_check`: the header this flit completes passes the SECDED check (see
//!   `input_unit`);
//! - `pop`: the front flit leaves (forwarded or dropped) at this edge;
//! - `has_credit`, `can_start` (M b, the router's status layout
//!   `top::status_bit`): bit `SV*port + vc` tells whether output VC (port, vc)
//!   has a credit, resp. is free with `max_packet_flits` credits (`SV` the
//!   VCs per link rounded up to a power of two);
//! - `req_fwd`: forward request to `ovc` (port 7:4, VC 3:0); a head asks
//!   for the lowest-numbered VC of its route's set (decoded here from the
//!   stored `rsel` and this VC's class: the golden model's route mask) that
//!   may start a packet, as the golden model;
//! - `req_drop`: drop request (a bad packet or the rest of one); `new_drop`:
//!   this drop starts a bad packet (counted by the input unit);
//! - `front` (W b), `front_head`, `front_tail`: the flit at the front;
//! - `full`: `buffer_flits` flits are held (a pushed flit would be discarded).
//!
//! Latency: requests are combinational from registered state; a pushed flit
//! can request in the next cycle (2 cycles header-in to header-out).
//!
//! Storage: three `FifoMem` LUTRAM leaves (data, the sideband word, the
//! header check bit) of `2^A >= buffer_flits` slots; occupancy never exceeds
//! `buffer_flits`. The route rides in the sideband word because one route
//! compute per input port (at write time) is far smaller than one per VC
//! (at the buffer's front), and the 11-bit word fills the LUTRAM cell the
//! head/tail bits took alone (a RAM32M16 holds 14 bits).
//!
//! Parameters: `W` flit data bits; `A` buffer address bits; `C = A + 1`
//! count bits; at run time `buffer_flits`, whether a header takes two flits
//! (64-bit flits), `vc_select` and this VC's class (to decode `rsel`).

use super::route_compute::{VSET_ALL, VSET_UPPER};
use crate::common::fifo::FifoMem;
use exanet_sim::router::{RouterParams, VcSelect};
use rust_hdl::prelude::*;

/// Sideband word bits: the flit is a head.
pub const SIDE_HEAD: usize = 0;
/// The flit is a tail.
pub const SIDE_TAIL: usize = 1;
/// First of the 8 bits of the head's `rsel` (`route_compute`).
pub const SIDE_RSEL: usize = 2;
/// The head's `bad` (`route_compute`).
pub const SIDE_BAD: usize = 10;
/// Sideband word width.
pub const SIDE_BITS: usize = 11;
// The offsets `InputVc::update` reads the sideband word at.
const _: () = assert!(
    SIDE_HEAD == 0 && SIDE_TAIL == 1 && SIDE_RSEL == 2 && SIDE_BAD == 10 && SIDE_BITS == 11
);

/// VC state encoding.
const IDLE: u64 = 0;
const ACTIVE: u64 = 1;
const DROPPING: u64 = 2;

/// One input VC: buffer, state, route, request.
#[derive(LogicBlock)]
pub struct InputVc<const W: usize, const A: usize, const C: usize, const M: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// Write `din` at the tail of the buffer.
    pub push: Signal<In, bool>,
    /// Flit data to write.
    pub din: Signal<In, Bits<W>>,
    /// Its sideband word (head, tail, route; `SIDE_*`).
    pub din_side: Signal<In, Bits<SIDE_BITS>>,
    /// The header the written flit completes passes its check.
    pub din_check: Signal<In, bool>,
    /// The front flit leaves at this edge.
    pub pop: Signal<In, bool>,
    /// Per output VC (bit `SV*port + vc`): credits > 0.
    pub has_credit: Signal<In, Bits<M>>,
    /// Per output VC: not busy and credits >= `max_packet_flits`.
    pub can_start: Signal<In, Bits<M>>,
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
    side: FifoMem<SIDE_BITS, A>,
    /// The header check result, stored with the flit that completes a header.
    checks: FifoMem<1, A>,
    /// The front head's route, as stored: port (7:4) and VC set (3:0).
    rsel: Signal<Local, Bits<8>>,
    front_bad: Signal<Local, bool>,
    /// The set of output VCs the front head may take (bit `w`).
    vmask: Signal<Local, Bits<16>>,
    vset: Signal<Local, Bits<4>>,
    /// `vc_select = free`.
    free: Constant<bool>,
    /// This VC's class: all its VCs, the lower half, the upper half.
    class_all: Constant<Bits<16>>,
    class_lo: Constant<Bits<16>>,
    class_hi: Constant<Bits<16>>,
    vset_all: Constant<Bits<4>>,
    vset_upper: Constant<Bits<4>>,
    /// The route's output port's first bit in the status vectors (`SV*port`).
    start_base: Signal<Local, Bits<8>>,
    /// `can_start` from that bit on (bits 15:0 read).
    start_unused_above_16: Signal<Local, Bits<M>>,
    /// Bit w set when (route's port, w) may start a packet.
    start: Signal<Local, Bits<16>>,
    /// The active packet's output VC's bit in the status vectors.
    credit_index: Signal<Local, Bits<8>>,
    /// `has_credit` from that bit on (bit 0 read).
    credit_unused_above_1: Signal<Local, Bits<M>>,
    /// `4 - log2 SV`: a port field (bits 7:4) shifted right by it is `SV*port`.
    status_shift: Constant<Bits<8>>,
    /// The VCs of a link (bits `0..N`).
    all_vcs: Constant<Bits<16>>,
    cand: Signal<Local, Bits<16>>,
    lowest: Signal<Local, Bits<16>>,
    pick: Signal<Local, Bits<8>>,
    /// What an idle head asks for: the route's port and the picked VC.
    head_ovc: Signal<Local, Bits<8>>,
    head_ok: Signal<Local, bool>,
    vc_num8: Vec<Constant<Bits<8>>>,
    port_field: Constant<Bits<8>>,
    /// The route's VC in bits 3:0.
    vc_field: Constant<Bits<8>>,
    one16: Constant<Bits<16>>,
    rd: DFF<Bits<A>>,
    wr: DFF<Bits<A>>,
    count: DFF<Bits<C>>,
    state: DFF<Bits<2>>,
    active_ovc: DFF<Bits<8>>,
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
    check_pass: Constant<Bits<1>>,
    check_fail: Constant<Bits<1>>,
}

impl<const W: usize, const A: usize, const C: usize, const M: usize> InputVc<W, A, C, M> {
    /// Input VC `in_vc` of a port (params valid; `2^A >= buffer_flits`, `C = A + 1`).
    pub fn new(p: &RouterParams, in_vc: usize) -> Self {
        assert!(C == A + 1 && p.buffer_flits <= 1 << A && W == p.flit_bits);
        let vpc = p.vcs_per_class;
        let base = in_vc / vpc * vpc;
        let lower = p.lower_vcs();
        let range = |lo: usize, hi: usize| Constant::new(bits((lo..hi).fold(0, |m, v| m | 1 << v)));
        InputVc {
            clock: Default::default(),
            reset: Default::default(),
            push: Default::default(),
            din: Default::default(),
            din_side: Default::default(),
            din_check: Default::default(),
            pop: Default::default(),
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
            side: Default::default(),
            checks: Default::default(),
            rsel: Default::default(),
            front_bad: Default::default(),
            vmask: Default::default(),
            vset: Default::default(),
            free: Constant::new(p.vc_select == VcSelect::Free),
            class_all: range(base, base + vpc),
            class_lo: range(base, base + lower),
            class_hi: range(base + lower, base + vpc),
            vset_all: Constant::new(bits(VSET_ALL)),
            vset_upper: Constant::new(bits(VSET_UPPER)),
            start_base: Default::default(),
            start_unused_above_16: Default::default(),
            start: Default::default(),
            credit_index: Default::default(),
            credit_unused_above_1: Default::default(),
            status_shift: Constant::new(bits(4 - super::top::vc_stride(p).trailing_zeros() as u64)),
            all_vcs: range(0, p.num_vcs()),
            cand: Default::default(),
            lowest: Default::default(),
            pick: Default::default(),
            head_ovc: Default::default(),
            head_ok: Default::default(),
            vc_num8: (0..16).map(|v| Constant::new(bits(v))).collect(),
            port_field: Constant::new(bits(0xf0)),
            vc_field: Constant::new(bits(0x0f)),
            one16: Constant::new(bits(1)),
            rd: Default::default(),
            wr: Default::default(),
            count: Default::default(),
            state: Default::default(),
            active_ovc: Default::default(),
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
            check_pass: Constant::new(bits(1)),
            check_fail: Constant::new(bits(0)),
        }
    }
}

impl<const W: usize, const A: usize, const C: usize, const M: usize> Logic for InputVc<W, A, C, M> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rd, wr, count, state, active_ovc);
        // Buffer storage.
        self.data.clock.next = self.clock.val();
        self.data.write_enable.next = self.push.val();
        self.data.write_address.next = self.wr.q.val();
        self.data.write_data.next = self.din.val();
        self.data.read_address.next = self.rd.q.val();
        self.side.clock.next = self.clock.val();
        self.side.write_enable.next = self.push.val();
        self.side.write_address.next = self.wr.q.val();
        self.side.write_data.next = self.din_side.val();
        self.side.read_address.next = self.rd.q.val();
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
        // (literal offsets: rust-hdl emits a constant's name, not its value;
        // a compile-time assert pins them to the `SIDE_*` constants)
        self.head.next = self.side.read_data.val().get_bit(0);
        self.tail.next = self.side.read_data.val().get_bit(1);
        self.rsel.next = self.side.read_data.val().get_bits::<8>(2);
        self.front_bad.next = self.side.read_data.val().get_bit(10);
        self.front.next = self.data.read_data.val();
        self.front_head.next = self.head.val();
        self.front_tail.next = self.tail.val();
        // The front head's VC set (meaningful when it is a head): with
        // `flow` the one VC stored, with `free` a half or all of this class.
        self.vset.next = self.rsel.val().get_bits::<4>(0);
        if !self.free.val() {
            self.vmask.next = self.one16.val() << self.vset.val();
        } else if self.vset.val() == self.vset_all.val() {
            self.vmask.next = self.class_all.val();
        } else if self.vset.val() == self.vset_upper.val() {
            self.vmask.next = self.class_hi.val();
        } else {
            self.vmask.next = self.class_lo.val();
        }
        // The VC an idle head asks for: the lowest of its route's set that may
        // start a packet (`x & -x` isolates it); with `vc_select = flow` the
        // set is the one per-flow VC.
        self.start_base.next = (self.rsel.val() & self.port_field.val()) >> self.status_shift.val();
        self.start_unused_above_16.next = self.can_start.val() >> self.start_base.val();
        self.start.next = self.start_unused_above_16.val().get_bits::<16>(0) & self.all_vcs.val();
        self.cand.next = self.start.val() & self.vmask.val();
        self.lowest.next = self.cand.val() & (!self.cand.val() + self.one16.val());
        self.pick.next = self.zero8.val();
        for v in 0..16 {
            if self.lowest.val().get_bit(v) {
                self.pick.next = self.vc_num8[v].val();
            }
        }
        self.head_ok.next = self.cand.val().any();
        // With `flow` the set is the one VC `vset`: the same result without
        // the decode, the lowest-bit isolate (a carry chain) and the encode,
        // which synthesis cannot see are trivial (about 10 LUTs per VC).
        if !self.free.val() {
            self.head_ok.next = self.start.val().get_bit(self.vset.val().index());
            self.pick.next = self.rsel.val() & self.vc_field.val();
        }
        self.head_ovc.next = (self.rsel.val() & self.port_field.val()) | self.pick.val();
        // Request, from registered state only.
        self.credit_index.next = ((self.active_ovc.q.val() & self.port_field.val())
            >> self.status_shift.val())
            | (self.active_ovc.q.val() & self.vc_field.val());
        self.credit_unused_above_1.next = self.has_credit.val() >> self.credit_index.val();
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
                self.req_fwd.next = self.credit_unused_above_1.val().get_bit(0);
            } else if self.state.q.val() == self.st_dropping.val() {
                self.req_drop.next = true;
            } else if self.malformed.val() {
                self.req_drop.next = true;
                self.new_drop.next = true;
            } else if !self.header_incomplete.val() {
                if self.front_bad.val() | !self.header_ok.val() {
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
