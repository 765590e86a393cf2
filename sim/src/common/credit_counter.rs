//! Golden model of `credit_counter`: the credits of one downstream buffer.
//!
//! The count starts at `max` (the buffer is empty), goes down by one on
//! `consume` (a flit sent) and up by one on `ret` (a credit returned). Both
//! in one cycle cancel: the count is unchanged and that is never an error,
//! even at 0 or `max` (the returned credit pays for the flit sent). A
//! `consume` alone at 0 or a `ret` alone at `max` would leave 0..=max: the
//! count saturates instead of wrapping and the sticky `error` is set; only
//! `reset` (synchronous, back to `max` credits) clears it. `available` is
//! `count >= 1`, `enough` is `count >= need` (e.g. one maximum packet for
//! virtual cut-through). The flags are functions of the registered count,
//! so they change the cycle after the `consume`/`ret` that moves it.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Largest supported buffer size in flits.
pub const MAX_CREDITS: u32 = 1024;

/// Parameters of one credit counter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CreditCounterParams {
    /// Downstream buffer size in flits (credits at reset), 1..=1024.
    pub max: u32,
    /// Credits a consumer needs before it may start (1..=max).
    pub need: u32,
}

impl Default for CreditCounterParams {
    /// A 32-flit buffer, one credit to start.
    fn default() -> Self {
        CreditCounterParams { max: 32, need: 1 }
    }
}

impl CreditCounterParams {
    /// Check every rule; the error names the key, the value and the rule.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_CREDITS).contains(&self.max) {
            bail!(
                "credit_counter.max = {}: must be 1..={MAX_CREDITS} flits",
                self.max
            );
        }
        if !(1..=self.max).contains(&self.need) {
            bail!(
                "credit_counter.need = {}: must be 1..=max ({})",
                self.need,
                self.max
            );
        }
        Ok(())
    }

    /// Bits of the `count` port: enough to hold `max`.
    pub fn count_bits(&self) -> u32 {
        32 - self.max.leading_zeros()
    }
}

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreditCounterInputs {
    /// Synchronous reset: back to `max` credits, error cleared.
    pub reset: bool,
    /// A flit was sent: one credit fewer.
    pub consume: bool,
    /// A credit came back: one more.
    pub ret: bool,
}

/// Outputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreditCounterOutputs {
    /// Credits held.
    pub count: u32,
    /// `count >= 1`.
    pub available: bool,
    /// `count >= need`.
    pub enough: bool,
    /// Sticky: a consume at 0 or a ret at max happened since reset.
    pub error: bool,
}

/// Cycle-level credit counter.
#[derive(Clone, Debug)]
pub struct CreditCounter {
    max: u32,
    need: u32,
    count: u32,
    error: bool,
}

impl CreditCounter {
    /// A counter at power-on (`max` credits, no error). `p` must be valid.
    pub fn new(p: &CreditCounterParams) -> Result<Self> {
        p.validate()?;
        Ok(CreditCounter {
            max: p.max,
            need: p.need,
            count: p.max,
            error: false,
        })
    }

    /// Back to power-on.
    pub fn power_on(&mut self) {
        self.count = self.max;
        self.error = false;
    }

    /// Credits held.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Outputs during the current cycle (state only; no combinational path).
    #[inline]
    pub fn outputs(&self, _i: &CreditCounterInputs) -> CreditCounterOutputs {
        CreditCounterOutputs {
            count: self.count,
            available: self.count >= 1,
            enough: self.count >= self.need,
            error: self.error,
        }
    }

    /// The clock edge.
    #[inline]
    pub fn tick(&mut self, i: &CreditCounterInputs) {
        if i.reset {
            self.power_on();
            return;
        }
        match (i.consume, i.ret) {
            (true, false) if self.count == 0 => self.error = true,
            (true, false) => self.count -= 1,
            (false, true) if self.count == self.max => self.error = true,
            (false, true) => self.count += 1,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn p(max: u32, need: u32) -> CreditCounterParams {
        CreditCounterParams { max, need }
    }

    #[test]
    fn params_are_checked() {
        assert!(p(1, 1).validate().is_ok());
        assert!(p(1024, 1024).validate().is_ok());
        let e = p(0, 1).validate().unwrap_err().to_string();
        assert!(e.contains("credit_counter.max") && e.contains('0'));
        assert!(p(1025, 1).validate().is_err());
        let e = p(40, 41).validate().unwrap_err().to_string();
        assert!(e.contains("credit_counter.need") && e.contains("41") && e.contains("40"));
        assert!(p(40, 0).validate().is_err());
        let bits: Vec<u32> = [1, 2, 3, 4, 40, 64, 255, 256, 1024]
            .iter()
            .map(|&m| p(m, 1).count_bits())
            .collect();
        assert_eq!(bits, vec![1, 2, 2, 3, 6, 7, 8, 9, 11]);
    }

    #[test]
    fn saturates_and_flags_errors() {
        let mut c = CreditCounter::new(&p(2, 2)).unwrap();
        let idle = CreditCounterInputs::default();
        let consume = CreditCounterInputs {
            consume: true,
            ..idle
        };
        let ret = CreditCounterInputs { ret: true, ..idle };
        let both = CreditCounterInputs {
            consume: true,
            ret: true,
            ..idle
        };
        let o = c.outputs(&idle);
        assert_eq!(
            (o.count, o.available, o.enough, o.error),
            (2, true, true, false)
        );
        c.tick(&both);
        assert_eq!(c.outputs(&idle).count, 2);
        c.tick(&consume);
        let o = c.outputs(&idle);
        assert_eq!((o.count, o.available, o.enough), (1, true, false));
        c.tick(&consume);
        c.tick(&both);
        let o = c.outputs(&idle);
        assert_eq!((o.count, o.available, o.error), (0, false, false));
        c.tick(&consume);
        let o = c.outputs(&idle);
        assert_eq!((o.count, o.error), (0, true), "saturates at 0");
        c.tick(&ret);
        c.tick(&ret);
        c.tick(&ret);
        let o = c.outputs(&idle);
        assert_eq!((o.count, o.error), (2, true), "saturates at max, stays set");
        c.tick(&CreditCounterInputs {
            reset: true,
            consume: true,
            ..idle
        });
        let o = c.outputs(&idle);
        assert_eq!((o.count, o.error), (2, false));
    }

    /// Against a reference that counts in i64 and clamps.
    #[test]
    fn matches_a_clamping_reference() {
        for (max, need) in [(1, 1), (2, 1), (40, 18), (1024, 17)] {
            let mut c = CreditCounter::new(&p(max, need)).unwrap();
            let mut rng = Rng::new(max as u64);
            let (mut n, mut err) = (max as i64, false);
            let (mut hit0, mut hitmax) = (0, 0);
            for cycle in 0..200_000u32 {
                let bias = if (cycle / (3 * max + 10)) % 2 == 0 {
                    0.7
                } else {
                    0.3
                };
                let i = CreditCounterInputs {
                    reset: rng.chance(0.0002),
                    consume: rng.chance(bias),
                    ret: rng.chance(1.0 - bias),
                };
                let o = c.outputs(&i);
                assert_eq!(o.count as i64, n);
                assert_eq!(o.available, n >= 1);
                assert_eq!(o.enough, n >= need as i64);
                assert_eq!(o.error, err);
                hit0 += (n == 0) as u32;
                hitmax += (n == max as i64) as u32;
                c.tick(&i);
                if i.reset {
                    n = max as i64;
                    err = false;
                } else {
                    let m = n - i.consume as i64 + i.ret as i64;
                    err |= !(0..=max as i64).contains(&m);
                    n = m.clamp(0, max as i64);
                }
            }
            assert!(hit0 > 100 && hitmax > 100, "max={max}: {hit0} {hitmax}");
        }
    }
}
