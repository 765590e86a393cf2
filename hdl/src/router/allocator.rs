//! `allocator`: the class-priority round-robin arbiter of the router's
//! separable allocator, used once per input port (over its VCs) and once per
//! output port (over the input ports).
//!
//! Purpose: among up to 16 requesters, grant one: the class-1 (high
//! priority) requesters if any, else the class-0 ones; within the class,
//! round-robin from that class's own pointer. Built on two instances of the
//! common `arbiter` (one per class, each keeping its pointer as a mask).
//!
//! Ports:
//! - `clock`; `reset` (synchronous: both pointers back to requester 0);
//! - `req0`, `req1` (16 b): class-0 and class-1 requests (a requester is in
//!   at most one);
//! - `accept`: the grant is used; the granted class's pointer moves past the
//!   winner at the clock edge (the other class's pointer stays);
//! - `grant` (16 b, one-hot), `grant_index` (4 b), `grant_valid`: combinational.
//!
//! Latency: grants are combinational (0 cycles); `accept` acts at the edge.
//!
//! Equivalence with the golden model (`exanet_sim::router::allocator`): a
//! pointer `ptr` there grants the first requester at or after `ptr`; here
//! the mask holds the positions after the last winner, which is the same
//! set as "at or after `winner + 1`", and an empty masked set falls back to
//! the lowest requester, which is the wrap to 0.
//!
//! Parameters: none (16 requesters; unused requesters are tied to 0 and
//! fold away in synthesis).

use crate::common::arbiter::Arbiter;
use rust_hdl::prelude::*;

/// Two-class strict-priority round-robin arbiter over 16 requesters.
#[derive(LogicBlock, Default)]
pub struct ClassArbiter {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// Class-0 requests.
    pub req0: Signal<In, Bits<16>>,
    /// Class-1 (high-priority) requests.
    pub req1: Signal<In, Bits<16>>,
    /// The grant is used: advance the granted class's pointer.
    pub accept: Signal<In, bool>,
    /// One-hot grant.
    pub grant: Signal<Out, Bits<16>>,
    /// Index of the granted requester.
    pub grant_index: Signal<Out, Bits<4>>,
    /// Some requester is granted.
    pub grant_valid: Signal<Out, bool>,
    low: Arbiter<16, 4>,
    high: Arbiter<16, 4>,
    use_high: Signal<Local, bool>,
}

impl Logic for ClassArbiter {
    #[hdl_gen]
    fn update(&mut self) {
        self.low.clock.next = self.clock.val();
        self.high.clock.next = self.clock.val();
        self.low.reset.next = self.reset.val();
        self.high.reset.next = self.reset.val();
        self.low.req.next = self.req0.val();
        self.high.req.next = self.req1.val();
        self.use_high.next = self.req1.val().any();
        self.low.accept.next = self.accept.val() & !self.use_high.val();
        self.high.accept.next = self.accept.val() & self.use_high.val();
        if self.use_high.val() {
            self.grant.next = self.high.grant.val();
            self.grant_index.next = self.high.grant_index.val();
        } else {
            self.grant.next = self.low.grant.val();
            self.grant_index.next = self.low.grant_index.val();
        }
        self.grant_valid.next = self.high.grant_valid.val() | self.low.grant_valid.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::emit;
    use exanet_sim::rng::Rng;
    use exanet_sim::router::allocator::{pick_class, rr_next, rr_pick};

    /// rust-hdl's simulator against the golden model's allocator functions,
    /// with `n` requesters of which the upper `n - split` are class 1.
    #[test]
    fn rust_update_matches_the_golden_allocator() {
        let mut uut = ClassArbiter::default();
        uut.connect_all();
        let mut rng = Rng::new(9);
        let n = 11usize;
        let mut ptr = [0u8; 2];
        for cycle in 0..4000 {
            let req = (rng.bits(n as u32) & rng.bits(n as u32)) as u32;
            let class1 = rng.bits(n as u32) as u32;
            let masks = [req & !class1, req & class1];
            let accept = rng.chance(0.7);
            uut.clock.next = false.into();
            uut.reset.next = false;
            uut.req0.next = bits(masks[0] as u64);
            uut.req1.next = bits(masks[1] as u64);
            uut.accept.next = accept;
            assert!(simulate(&mut uut, 100));
            match pick_class(masks) {
                None => assert!(!uut.grant_valid.val(), "cycle {cycle}"),
                Some(c) => {
                    let w = rr_pick(masks[c], ptr[c]);
                    assert!(uut.grant_valid.val());
                    assert_eq!(uut.grant_index.val().to_u64() as usize, w, "cycle {cycle}");
                    assert_eq!(uut.grant.val().to_u64(), 1 << w);
                    if accept {
                        ptr[c] = rr_next(w, n);
                    }
                }
            }
            uut.clock.next = true.into();
            assert!(simulate(&mut uut, 100));
        }
    }

    #[test]
    fn emits_lint_clean_verilog() {
        let mut uut = ClassArbiter::default();
        let e = emit(&mut uut, "exanet_router_class_arbiter_test").unwrap();
        crate::emit::assert_lint_clean(&e);
    }
}
