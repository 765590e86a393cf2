//! Golden model of `fifo`: a synchronous first-word-fall-through FIFO.
//!
//! Cycle behaviour (the RTL in `exanet_hdl::common::fifo` must match it bit
//! for bit, which the co-simulation bench checks every cycle):
//!
//! - `dout` shows the word at the read pointer combinationally. While the
//!   FIFO is not empty that is the head word; while it is empty it is the
//!   stale slot at the read pointer, which is also the next slot to be
//!   written (the word pushed `depth` pushes earlier, or zero after
//!   power-on). It is deterministic, so the bench compares it every cycle.
//! - A push is accepted when the FIFO is not full, or when it is full and a
//!   pop happens in the same cycle (the popped slot takes the new word). A
//!   push that is not accepted is dropped and sets the sticky `overflow`.
//! - A pop is taken when the FIFO is not empty; a pop while empty is ignored
//!   and sets the sticky `underflow` (also when a push arrives in the same
//!   cycle: the word is not visible yet, so there is nothing to pop).
//! - A pushed word is visible at `dout` the cycle after the push.
//! - `reset` (synchronous) empties the FIFO and clears both error flags; a
//!   push or pop during reset is ignored and writes nothing. Storage keeps
//!   its contents across reset (it is LUTRAM without a reset).
//! - `almost_full` is `count >= almost_full` (the parameter).

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Largest supported word width in bits (a 128-bit flit plus sideband fits).
pub const MAX_WIDTH: u32 = 256;
/// Largest supported depth.
pub const MAX_DEPTH: u32 = 1024;

/// Parameters of one FIFO.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FifoParams {
    /// Word width in bits.
    pub width: u32,
    /// Number of words; a power of two, 2..=1024.
    pub depth: u32,
    /// `almost_full` is high when the count is at least this (1..=depth).
    pub almost_full: u32,
}

impl Default for FifoParams {
    /// 32 bits x 16 words, almost full at 3/4.
    fn default() -> Self {
        FifoParams {
            width: 32,
            depth: 16,
            almost_full: 12,
        }
    }
}

impl FifoParams {
    /// Check every rule; the error names the key, the value and the rule.
    pub fn validate(&self) -> Result<()> {
        if self.width == 0 || self.width > MAX_WIDTH {
            bail!("fifo.width = {}: must be 1..={MAX_WIDTH} bits", self.width);
        }
        if !(2..=MAX_DEPTH).contains(&self.depth) || !self.depth.is_power_of_two() {
            bail!(
                "fifo.depth = {}: must be a power of two in 2..={MAX_DEPTH}",
                self.depth
            );
        }
        if self.almost_full == 0 || self.almost_full > self.depth {
            bail!(
                "fifo.almost_full = {}: must be 1..=depth ({})",
                self.almost_full,
                self.depth
            );
        }
        Ok(())
    }

    /// Bits of the `count` port: log2(depth) + 1.
    pub fn count_bits(&self) -> u32 {
        self.depth.trailing_zeros() + 1
    }
}

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FifoInputs<T> {
    /// Synchronous reset.
    pub reset: bool,
    /// Write `din` at the tail.
    pub push: bool,
    /// Word to write.
    pub din: T,
    /// Remove the head word.
    pub pop: bool,
}

/// Outputs of one cycle (what the RTL shows before the clock edge).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FifoOutputs<T> {
    /// Slot at the read pointer (the head word when not empty).
    pub dout: T,
    /// No word stored.
    pub empty: bool,
    /// `depth` words stored.
    pub full: bool,
    /// `count >= almost_full`.
    pub almost_full: bool,
    /// Words stored.
    pub count: u32,
    /// Sticky: a push was dropped because the FIFO was full.
    pub overflow: bool,
    /// Sticky: a pop was ignored because the FIFO was empty.
    pub underflow: bool,
}

/// Cycle-level FIFO model over words of type `T` (any `Copy` value: a
/// `u64`, a `[u32; 5]` for wide flits, a flit struct in the network model).
#[derive(Clone, Debug)]
pub struct Fifo<T> {
    mem: Vec<T>,
    rd: usize,
    wr: usize,
    count: usize,
    almost_full: usize,
    overflow: bool,
    underflow: bool,
}

impl<T: Copy + Default> Fifo<T> {
    /// A FIFO at power-on (empty, storage zero). `p` must be valid.
    pub fn new(p: &FifoParams) -> Result<Self> {
        p.validate()?;
        Ok(Fifo {
            mem: vec![T::default(); p.depth as usize],
            rd: 0,
            wr: 0,
            count: 0,
            almost_full: p.almost_full as usize,
            overflow: false,
            underflow: false,
        })
    }

    /// Back to power-on: empty, flags clear, storage zero.
    pub fn power_on(&mut self) {
        self.mem.iter_mut().for_each(|w| *w = T::default());
        self.rd = 0;
        self.wr = 0;
        self.count = 0;
        self.overflow = false;
        self.underflow = false;
    }

    /// Number of slots.
    #[inline]
    pub fn depth(&self) -> usize {
        self.mem.len()
    }

    /// Words stored.
    #[inline]
    pub fn len(&self) -> usize {
        self.count
    }

    /// No word stored.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The head word, if any.
    #[inline]
    pub fn front(&self) -> Option<T> {
        (self.count > 0).then(|| self.mem[self.rd])
    }

    /// Outputs during the current cycle. They depend on state only (the FIFO
    /// has no combinational input-to-output path); `_i` is taken for the
    /// uniform model API.
    #[inline]
    pub fn outputs(&self, _i: &FifoInputs<T>) -> FifoOutputs<T> {
        FifoOutputs {
            dout: self.mem[self.rd],
            empty: self.count == 0,
            full: self.count == self.mem.len(),
            almost_full: self.count >= self.almost_full,
            count: self.count as u32,
            overflow: self.overflow,
            underflow: self.underflow,
        }
    }

    /// The clock edge.
    #[inline]
    pub fn tick(&mut self, i: &FifoInputs<T>) {
        if i.reset {
            self.rd = 0;
            self.wr = 0;
            self.count = 0;
            self.overflow = false;
            self.underflow = false;
            return;
        }
        let mask = self.mem.len() - 1;
        let do_pop = i.pop && self.count > 0;
        let do_push = i.push && (self.count < self.mem.len() || do_pop);
        // Branch-free (the co-simulation drives push and pop at random, so
        // branches on them mispredict): the slot is always rewritten, with
        // its old word when nothing is pushed.
        let slot = &mut self.mem[self.wr];
        *slot = if do_push { i.din } else { *slot };
        self.wr = (self.wr + do_push as usize) & mask;
        self.rd = (self.rd + do_pop as usize) & mask;
        self.count = self.count + do_push as usize - do_pop as usize;
        self.overflow |= i.push && !do_push;
        self.underflow |= i.pop && !do_pop;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::collections::VecDeque;

    fn p(width: u32, depth: u32, almost_full: u32) -> FifoParams {
        FifoParams {
            width,
            depth,
            almost_full,
        }
    }

    #[test]
    fn params_are_checked_with_key_value_and_rule() {
        assert!(p(32, 16, 12).validate().is_ok());
        assert!(p(133, 1024, 1024).validate().is_ok());
        let e = p(32, 12, 4).validate().unwrap_err().to_string();
        assert!(e.contains("fifo.depth") && e.contains("12") && e.contains("power of two"));
        let e = p(32, 2048, 4).validate().unwrap_err().to_string();
        assert!(e.contains("fifo.depth"), "{e}");
        let e = p(0, 16, 4).validate().unwrap_err().to_string();
        assert!(e.contains("fifo.width") && e.contains('0'));
        let e = p(8, 16, 17).validate().unwrap_err().to_string();
        assert!(e.contains("fifo.almost_full") && e.contains("17"));
        assert!(p(8, 16, 0).validate().is_err());
        assert!(p(8, 1, 1).validate().is_err());
        assert_eq!(p(8, 16, 1).count_bits(), 5);
        assert_eq!(p(8, 2, 1).count_bits(), 2);
    }

    #[test]
    fn first_word_falls_through_one_cycle_after_push() {
        let mut f = Fifo::<u32>::new(&p(32, 4, 3)).unwrap();
        let push = |v| FifoInputs {
            push: true,
            din: v,
            ..Default::default()
        };
        let idle = FifoInputs::default();
        assert!(f.outputs(&push(7)).empty, "not visible in the push cycle");
        f.tick(&push(7));
        let o = f.outputs(&idle);
        assert!(!o.empty);
        assert_eq!((o.dout, o.count), (7, 1));
    }

    #[test]
    fn full_push_with_pop_is_accepted_and_errors_are_sticky() {
        let mut f = Fifo::<u32>::new(&p(32, 2, 2)).unwrap();
        for v in [1, 2] {
            f.tick(&FifoInputs {
                push: true,
                din: v,
                ..Default::default()
            });
        }
        let o = f.outputs(&FifoInputs::default());
        assert!(o.full && o.almost_full && !o.overflow);
        // Push + pop while full: 1 leaves, 3 enters, no overflow.
        f.tick(&FifoInputs {
            push: true,
            pop: true,
            din: 3,
            ..Default::default()
        });
        let o = f.outputs(&FifoInputs::default());
        assert_eq!((o.dout, o.count, o.overflow), (2, 2, false));
        // Push while full without pop: dropped, overflow.
        f.tick(&FifoInputs {
            push: true,
            din: 9,
            ..Default::default()
        });
        let o = f.outputs(&FifoInputs::default());
        assert_eq!((o.dout, o.count, o.overflow), (2, 2, true));
        for _ in 0..3 {
            f.tick(&FifoInputs {
                pop: true,
                ..Default::default()
            });
        }
        let o = f.outputs(&FifoInputs::default());
        assert!(o.empty && o.overflow && o.underflow);
        // Empty: dout shows the stale slot at the read pointer, the word
        // pushed `depth` pushes before the next one (2, not the last popped 3).
        assert_eq!(o.dout, 2);
        f.tick(&FifoInputs {
            reset: true,
            push: true,
            ..Default::default()
        });
        let o = f.outputs(&FifoInputs::default());
        assert!(o.empty && !o.overflow && !o.underflow && o.count == 0);
    }

    /// Against an independent VecDeque reference over random traffic.
    #[test]
    fn matches_a_vecdeque_reference() {
        for (depth, af) in [(2, 1), (4, 3), (16, 12), (64, 64)] {
            let mut f = Fifo::<u64>::new(&p(64, depth, af)).unwrap();
            let mut q: VecDeque<u64> = VecDeque::new();
            let (mut ovf, mut unf) = (false, false);
            let mut rng = Rng::new(depth as u64);
            let (mut saw_full, mut saw_empty_after_full) = (0, 0);
            for cycle in 0..50_000u32 {
                let bias = if (cycle / 200) % 2 == 0 { 0.8 } else { 0.2 };
                let i = FifoInputs {
                    reset: rng.chance(0.001),
                    push: rng.chance(bias),
                    pop: rng.chance(1.0 - bias),
                    din: rng.next_u64(),
                };
                let o = f.outputs(&i);
                assert_eq!(o.count as usize, q.len());
                assert_eq!(o.empty, q.is_empty());
                assert_eq!(o.full, q.len() == depth as usize);
                assert_eq!(o.almost_full, q.len() >= af as usize);
                assert_eq!((o.overflow, o.underflow), (ovf, unf));
                if let Some(&h) = q.front() {
                    assert_eq!(o.dout, h);
                }
                if o.full {
                    saw_full += 1;
                }
                if o.empty && saw_full > 0 {
                    saw_empty_after_full += 1;
                }
                f.tick(&i);
                if i.reset {
                    q.clear();
                    ovf = false;
                    unf = false;
                    continue;
                }
                let popped = if i.pop { q.pop_front() } else { None };
                unf |= i.pop && popped.is_none();
                if i.push {
                    if q.len() < depth as usize {
                        q.push_back(i.din);
                    } else {
                        ovf = true;
                    }
                }
            }
            assert!(saw_full > 100 && saw_empty_after_full > 100);
        }
    }
}
