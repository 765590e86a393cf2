//! `credit_counter`: credits of one downstream buffer (credit-based flow
//! control, one per output VC).
//!
//! Ports (top module `exanet_credit_counter_m<max>_n<need>`):
//! - `clock`; `reset` (synchronous: back to `max` credits, error cleared)
//! - `consume`: a flit was sent (-1)
//! - `ret`: a credit came back (+1); `consume` and `ret` together cancel,
//!   never an error
//! - `count[bits(max)]`: credits held (`max` at power-on and after reset)
//! - `available`: `count >= 1`
//! - `enough`: `count >= need` (e.g. a whole maximum packet under virtual
//!   cut-through)
//! - `error`: sticky; a `consume` alone at 0 or a `ret` alone at `max`. The
//!   count saturates, it never wraps. Cleared only by `reset`.
//!
//! Latency: all outputs are registered state; they change one cycle after
//! the `consume`/`ret`/`reset` that moves them.
//!
//! The golden model is `exanet_sim::common::credit_counter`.
//!
//! Parameters ([`CreditCounterParams`]):
//! - `max`: buffer size in flits, 1..=1024 (every value is supported)
//! - `need`: credits a consumer needs before starting, 1..=max

use crate::emit::{emit, Emitted};
use anyhow::{bail, Result};
pub use exanet_sim::common::credit_counter::CreditCounterParams;
use rust_hdl::prelude::*;

/// Credit counter with a `C`-bit count.
#[derive(LogicBlock)]
pub struct CreditCounter<const C: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// A flit was sent.
    pub consume: Signal<In, bool>,
    /// A credit came back.
    pub ret: Signal<In, bool>,
    /// Credits held.
    pub count: Signal<Out, Bits<C>>,
    /// At least one credit.
    pub available: Signal<Out, bool>,
    /// At least `need` credits.
    pub enough: Signal<Out, bool>,
    /// Sticky saturation error.
    pub error: Signal<Out, bool>,
    /// Power-on value is `max`.
    credits: DFFWithInit<Bits<C>>,
    err: DFF<bool>,
    at_zero: Signal<Local, bool>,
    at_max: Signal<Local, bool>,
    count_zero: Constant<Bits<C>>,
    count_one: Constant<Bits<C>>,
    count_max: Constant<Bits<C>>,
    count_need: Constant<Bits<C>>,
}

impl<const C: usize> CreditCounter<C> {
    /// A counter of `max` credits whose `enough` needs `need`. `max` must
    /// fit in `C` bits and `need` be in 1..=max (checked by
    /// [`emit_credit_counter`]).
    pub fn new(max: u32, need: u32) -> Self {
        assert!((max as u64) < (1u64 << C) && (1..=max).contains(&need));
        CreditCounter {
            clock: Default::default(),
            reset: Default::default(),
            consume: Default::default(),
            ret: Default::default(),
            count: Default::default(),
            available: Default::default(),
            enough: Default::default(),
            error: Default::default(),
            credits: DFFWithInit::new(bits(max as u64)),
            err: Default::default(),
            at_zero: Default::default(),
            at_max: Default::default(),
            count_zero: Constant::new(bits(0)),
            count_one: Constant::new(bits(1)),
            count_max: Constant::new(bits(max as u64)),
            count_need: Constant::new(bits(need as u64)),
        }
    }
}

impl<const C: usize> Logic for CreditCounter<C> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, credits, err);
        self.at_zero.next = self.credits.q.val() == self.count_zero.val();
        self.at_max.next = self.credits.q.val() == self.count_max.val();
        if self.consume.val() & !self.ret.val() {
            if self.at_zero.val() {
                self.err.d.next = true;
            } else {
                self.credits.d.next = self.credits.q.val() - self.count_one.val();
            }
        }
        if self.ret.val() & !self.consume.val() {
            if self.at_max.val() {
                self.err.d.next = true;
            } else {
                self.credits.d.next = self.credits.q.val() + self.count_one.val();
            }
        }
        if self.reset.val() {
            self.credits.d.next = self.count_max.val();
            self.err.d.next = false;
        }
        self.count.next = self.credits.q.val();
        self.available.next = !self.at_zero.val();
        self.enough.next = self.credits.q.val() >= self.count_need.val();
        self.error.next = self.err.q.val();
    }
}

/// Top module name of a parameter point.
pub fn credit_counter_top_name(p: &CreditCounterParams) -> String {
    format!("exanet_credit_counter_m{}_n{}", p.max, p.need)
}

fn build<const C: usize>(p: &CreditCounterParams) -> Result<Emitted> {
    let mut uut = CreditCounter::<C>::new(p.max, p.need);
    emit(&mut uut, &credit_counter_top_name(p))
}

/// Validate `p` and emit its credit counter as Verilog. Every `max` in
/// 1..=1024 is supported: only the count width is a compile-time constant.
pub fn emit_credit_counter(p: &CreditCounterParams) -> Result<Emitted> {
    p.validate()?;
    match p.count_bits() {
        1 => build::<1>(p),
        2 => build::<2>(p),
        3 => build::<3>(p),
        4 => build::<4>(p),
        5 => build::<5>(p),
        6 => build::<6>(p),
        7 => build::<7>(p),
        8 => build::<8>(p),
        9 => build::<9>(p),
        10 => build::<10>(p),
        11 => build::<11>(p),
        b => bail!(
            "credit_counter.max = {}: needs a {b}-bit count; supported: 1..=1024",
            p.max
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    fn p(max: u32, need: u32) -> CreditCounterParams {
        CreditCounterParams { max, need }
    }

    #[test]
    fn emits_lint_clean_verilog_across_the_range() {
        for q in [
            p(1, 1),
            p(2, 2),
            p(4, 1),
            p(16, 9),
            p(40, 18),
            p(64, 64),
            p(256, 18),
            p(1024, 1000),
        ] {
            let e = emit_credit_counter(&q).unwrap();
            assert_eq!(e.top, credit_counter_top_name(&q));
            let top = &e.modules.last().unwrap().1;
            let b = q.count_bits();
            if b > 1 {
                assert!(top.contains(&format!("[{}:0] count;", b - 1)), "{top}");
            }
            for port in ["reset", "consume", "ret", "available", "enough", "error"] {
                assert!(top.contains(&format!(" {port};")), "{} lacks {port}", e.top);
            }
            assert_lint_clean(&e);
        }
    }

    #[test]
    fn bad_parameters_are_errors_naming_key_value_and_rule() {
        let e = emit_credit_counter(&p(0, 1)).unwrap_err().to_string();
        assert!(e.contains("credit_counter.max") && e.contains('0'), "{e}");
        let e = emit_credit_counter(&p(1025, 1)).unwrap_err().to_string();
        assert!(
            e.contains("credit_counter.max") && e.contains("1025"),
            "{e}"
        );
        let e = emit_credit_counter(&p(40, 41)).unwrap_err().to_string();
        assert!(e.contains("credit_counter.need") && e.contains("41"), "{e}");
    }

    /// rust-hdl's simulator runs `update()` against the golden model.
    #[test]
    fn rust_update_matches_the_golden_model() {
        use exanet_sim::common::credit_counter::{CreditCounter as Golden, CreditCounterInputs};
        use exanet_sim::rng::Rng;
        let q = p(5, 3);
        let mut uut = CreditCounter::<3>::new(q.max, q.need);
        uut.connect_all();
        let mut gold = Golden::new(&q).unwrap();
        let mut rng = Rng::new(9);
        let mut saw_error = false;
        for cycle in 0..3000 {
            let bias = if (cycle / 20) % 2 == 0 { 0.7 } else { 0.3 };
            let i = CreditCounterInputs {
                reset: rng.chance(0.005),
                consume: rng.chance(bias),
                ret: rng.chance(1.0 - bias),
            };
            uut.clock.next = false.into();
            uut.reset.next = i.reset;
            uut.consume.next = i.consume;
            uut.ret.next = i.ret;
            assert!(simulate(&mut uut, 100));
            let o = gold.outputs(&i);
            let got = (
                uut.count.val().to_u64() as u32,
                uut.available.val(),
                uut.enough.val(),
                uut.error.val(),
            );
            assert_eq!(
                got,
                (o.count, o.available, o.enough, o.error),
                "cycle {cycle}"
            );
            saw_error |= o.error;
            uut.clock.next = true.into();
            assert!(simulate(&mut uut, 100));
            gold.tick(&i);
        }
        assert!(saw_error);
    }
}
