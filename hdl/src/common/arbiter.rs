//! `arbiter`: round-robin arbiter for `n` requesters.
//!
//! Purpose: the building block of the router's separable VC and switch
//! allocators and of every shared-resource mux in the NI.
//!
//! Ports (top module `exanet_arbiter_n<n>`):
//! - `clock`; `reset` (synchronous: priority back to requester 0)
//! - `req[n]`: one bit per requester
//! - `accept`: the current grant is taken; the priority pointer moves to
//!   just after the granted requester at the clock edge
//! - `grant[n]`: one-hot, combinational from `req` and the pointer; zero
//!   when nobody requests
//! - `grant_valid`: some requester is granted (`|req`)
//! - `grant_index[clog2(n)]`: index of the granted requester (0 when none)
//!
//! Latency: `grant*` are combinational (0 cycles) from `req`; `accept`
//! affects the next cycle's grant.
//!
//! Implementation: vector arithmetic only. The pointer is kept as a mask of
//! the positions at or after it; `req & mask` is searched first and `req`
//! as a fallback, each by lowest-set-bit isolation `x & (~x + 1)`. On
//! `accept` the mask becomes `~(g | (g - 1))`: the positions after the grant
//! `g` (all zero after the last requester, which the fallback turns into
//! "start at 0"). The index is packed by a prefix chain over its bits.
//!
//! The golden model is `exanet_sim::common::arbiter`.
//!
//! Parameters ([`ArbiterParams`]):
//! - `n`: number of requesters, 2..=16 (every value is supported)

use crate::emit::{emit, Emitted};
use anyhow::{bail, Result};
pub use exanet_sim::common::arbiter::ArbiterParams;
use rust_hdl::prelude::*;

/// Requester counts with a compiled instance: every value in 2..=16.
pub const SUPPORTED_N: std::ops::RangeInclusive<u32> = 2..=16;

/// Round-robin arbiter over `N` requesters with a `K = clog2(N)`-bit index.
#[derive(LogicBlock)]
pub struct Arbiter<const N: usize, const K: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// Requests.
    pub req: Signal<In, Bits<N>>,
    /// The grant is taken: advance the pointer.
    pub accept: Signal<In, bool>,
    /// One-hot grant.
    pub grant: Signal<Out, Bits<N>>,
    /// Some requester is granted.
    pub grant_valid: Signal<Out, bool>,
    /// Index of the granted requester.
    pub grant_index: Signal<Out, Bits<K>>,
    /// Positions at or after the priority pointer.
    mask: DFF<Bits<N>>,
    masked: Signal<Local, Bits<N>>,
    pick_masked: Signal<Local, Bits<N>>,
    pick_any: Signal<Local, Bits<N>>,
    chosen: Signal<Local, Bits<N>>,
    /// `index_acc[b]`: index bits below `b`; `index_acc[K]` is the index.
    index_acc: Vec<Signal<Local, Bits<K>>>,
    /// Requesters whose index has bit `b` set.
    index_pattern: Vec<Constant<Bits<N>>>,
    /// `1 << b`.
    index_bit: Vec<Constant<Bits<K>>>,
    zero_n: Constant<Bits<N>>,
    one_n: Constant<Bits<N>>,
    zero_k: Constant<Bits<K>>,
}

impl<const N: usize, const K: usize> Default for Arbiter<N, K> {
    fn default() -> Self {
        assert!(N >= 2 && K >= 1 && (1usize << K) >= N && (1usize << (K - 1)) < N);
        Arbiter {
            clock: Default::default(),
            reset: Default::default(),
            req: Default::default(),
            accept: Default::default(),
            grant: Default::default(),
            grant_valid: Default::default(),
            grant_index: Default::default(),
            mask: Default::default(),
            masked: Default::default(),
            pick_masked: Default::default(),
            pick_any: Default::default(),
            chosen: Default::default(),
            index_acc: (0..=K).map(|_| Default::default()).collect(),
            index_pattern: (0..K)
                .map(|b| {
                    let pat = (0..N)
                        .filter(|i| (i >> b) & 1 == 1)
                        .fold(0u64, |acc, i| acc | 1 << i);
                    Constant::new(bits(pat))
                })
                .collect(),
            index_bit: (0..K).map(|b| Constant::new(bits(1 << b))).collect(),
            zero_n: Constant::new(bits(0)),
            one_n: Constant::new(bits(1)),
            zero_k: Constant::new(bits(0)),
        }
    }
}

impl<const N: usize, const K: usize> Logic for Arbiter<N, K> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, mask);
        self.masked.next = self.req.val() & self.mask.q.val();
        self.pick_masked.next = self.masked.val() & (!self.masked.val() + self.one_n.val());
        self.pick_any.next = self.req.val() & (!self.req.val() + self.one_n.val());
        if self.masked.val().any() {
            self.chosen.next = self.pick_masked.val();
        } else {
            self.chosen.next = self.pick_any.val();
        }
        self.index_acc[0].next = self.zero_k.val();
        for b in 0..K {
            if (self.chosen.val() & self.index_pattern[b].val()).any() {
                self.index_acc[b + 1].next = self.index_acc[b].val() | self.index_bit[b].val();
            } else {
                self.index_acc[b + 1].next = self.index_acc[b].val();
            }
        }
        if self.accept.val() & self.req.val().any() {
            self.mask.d.next = !(self.chosen.val() | (self.chosen.val() - self.one_n.val()));
        }
        if self.reset.val() {
            self.mask.d.next = self.zero_n.val();
        }
        self.grant.next = self.chosen.val();
        self.grant_valid.next = self.req.val().any();
        // One-trip loop: an index cannot name the const generic directly
        // (the generator evaluates index text with loop variables only).
        for k in K..(K + 1) {
            self.grant_index.next = self.index_acc[k].val();
        }
    }
}

/// Top module name of a parameter point.
pub fn arbiter_top_name(p: &ArbiterParams) -> String {
    format!("exanet_arbiter_n{}", p.n)
}

fn build<const N: usize, const K: usize>(p: &ArbiterParams) -> Result<Emitted> {
    let mut uut = Arbiter::<N, K>::default();
    emit(&mut uut, &arbiter_top_name(p))
}

/// Validate `p` and emit its arbiter as Verilog.
pub fn emit_arbiter(p: &ArbiterParams) -> Result<Emitted> {
    p.validate()?;
    match p.n {
        2 => build::<2, 1>(p),
        3 => build::<3, 2>(p),
        4 => build::<4, 2>(p),
        5 => build::<5, 3>(p),
        6 => build::<6, 3>(p),
        7 => build::<7, 3>(p),
        8 => build::<8, 3>(p),
        9 => build::<9, 4>(p),
        10 => build::<10, 4>(p),
        11 => build::<11, 4>(p),
        12 => build::<12, 4>(p),
        13 => build::<13, 4>(p),
        14 => build::<14, 4>(p),
        15 => build::<15, 4>(p),
        16 => build::<16, 4>(p),
        n => bail!("arbiter.n = {n}: not supported; supported: {SUPPORTED_N:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    #[test]
    fn emits_lint_clean_verilog_for_every_n() {
        for n in SUPPORTED_N {
            let q = ArbiterParams { n };
            let e = emit_arbiter(&q).unwrap();
            assert_eq!(e.top, format!("exanet_arbiter_n{n}"));
            let top = &e.modules.last().unwrap().1;
            let k = q.index_bits();
            assert!(top.contains(&format!("[{}:0] req;", n - 1)), "{top}");
            assert!(top.contains(&format!("[{}:0] grant;", n - 1)), "{top}");
            if k > 1 {
                assert!(
                    top.contains(&format!("[{}:0] grant_index;", k - 1)),
                    "{top}"
                );
            }
            // Vector arithmetic, no per-bit replace loops.
            assert!(!top.contains("<< ("), "{top}");
            assert_lint_clean(&e);
        }
    }

    #[test]
    fn bad_n_is_an_error_naming_key_and_rule() {
        for n in [0, 1, 17] {
            let e = emit_arbiter(&ArbiterParams { n }).unwrap_err().to_string();
            assert!(e.contains("arbiter.n") && e.contains(&n.to_string()), "{e}");
        }
    }

    /// rust-hdl's simulator runs `update()` against the golden model.
    #[test]
    fn rust_update_matches_the_golden_model() {
        use exanet_sim::common::arbiter::{Arbiter as Golden, ArbiterInputs};
        use exanet_sim::rng::Rng;
        let q = ArbiterParams { n: 5 };
        let mut uut = Arbiter::<5, 3>::default();
        uut.connect_all();
        let mut gold = Golden::new(&q).unwrap();
        let mut rng = Rng::new(3);
        for cycle in 0..3000 {
            let i = ArbiterInputs {
                reset: rng.chance(0.01),
                req: (rng.bits(5) & rng.bits(5)) as u32,
                accept: rng.chance(0.6),
            };
            uut.clock.next = false.into();
            uut.reset.next = i.reset;
            uut.req.next = bits(i.req as u64);
            uut.accept.next = i.accept;
            assert!(simulate(&mut uut, 100));
            let o = gold.outputs(&i);
            let got = (
                uut.grant.val().to_u64() as u32,
                uut.grant_valid.val(),
                uut.grant_index.val().to_u64() as u32,
            );
            assert_eq!(
                got,
                (o.grant, o.grant_valid, o.grant_index),
                "cycle {cycle}"
            );
            uut.clock.next = true.into();
            assert!(simulate(&mut uut, 100));
            gold.tick(&i);
        }
    }
}
