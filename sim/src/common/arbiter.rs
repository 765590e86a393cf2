//! Golden model of `arbiter`: a round-robin arbiter for `n` requesters.
//!
//! The grant is combinational: the first requester at or after the priority
//! pointer, going round from `n - 1` to 0. When `accept` is high and a grant
//! is shown, the pointer moves to just after the granted requester, so the
//! next search starts there. `accept` without any request is ignored. A
//! synchronous `reset` returns the pointer to 0. With every requester
//! requesting, the grants visit all `n` in turn; a requester that keeps
//! requesting waits at most `n - 1` accepted grants of others.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Largest supported number of requesters.
pub const MAX_N: u32 = 16;

/// Parameters of one arbiter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ArbiterParams {
    /// Number of requesters, 2..=16.
    pub n: u32,
}

impl Default for ArbiterParams {
    /// Four requesters.
    fn default() -> Self {
        ArbiterParams { n: 4 }
    }
}

impl ArbiterParams {
    /// Check every rule; the error names the key, the value and the rule.
    pub fn validate(&self) -> Result<()> {
        if !(2..=MAX_N).contains(&self.n) {
            bail!("arbiter.n = {}: must be 2..={MAX_N} requesters", self.n);
        }
        Ok(())
    }

    /// Bits of the `grant_index` port: ceil(log2(n)).
    pub fn index_bits(&self) -> u32 {
        crate::bits::index_bits(self.n as usize)
    }
}

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArbiterInputs {
    /// Synchronous reset (pointer to 0).
    pub reset: bool,
    /// One bit per requester.
    pub req: u32,
    /// The current grant is taken: advance the pointer past it.
    pub accept: bool,
}

/// Outputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArbiterOutputs {
    /// One-hot grant, zero when nobody requests.
    pub grant: u32,
    /// Some requester is granted.
    pub grant_valid: bool,
    /// Index of the granted requester (0 when none).
    pub grant_index: u32,
}

/// Cycle-level round-robin arbiter.
#[derive(Clone, Debug)]
pub struct Arbiter {
    n: u32,
    /// Where the search starts: 0..n.
    ptr: u32,
}

impl Arbiter {
    /// An arbiter at power-on (pointer 0). `p` must be valid.
    pub fn new(p: &ArbiterParams) -> Result<Self> {
        p.validate()?;
        Ok(Arbiter { n: p.n, ptr: 0 })
    }

    /// Back to power-on.
    pub fn power_on(&mut self) {
        self.ptr = 0;
    }

    /// The priority pointer (first requester searched).
    pub fn pointer(&self) -> u32 {
        self.ptr
    }

    /// Granted index for `req`, searching from the pointer round the ring.
    #[inline]
    fn pick(&self, req: u32) -> Option<u32> {
        let req = req & ((1u32 << self.n) - 1);
        if req == 0 {
            return None;
        }
        // Rotate so the pointer is bit 0, take the lowest set bit, rotate back.
        let rot = ((req >> self.ptr) | (req << (self.n - self.ptr))) & ((1u32 << self.n) - 1);
        let i = rot.trailing_zeros() + self.ptr;
        Some(if i >= self.n { i - self.n } else { i })
    }

    /// Outputs during the current cycle (combinational in `req`).
    #[inline]
    pub fn outputs(&self, i: &ArbiterInputs) -> ArbiterOutputs {
        match self.pick(i.req) {
            None => ArbiterOutputs::default(),
            Some(g) => ArbiterOutputs {
                grant: 1 << g,
                grant_valid: true,
                grant_index: g,
            },
        }
    }

    /// The clock edge.
    #[inline]
    pub fn tick(&mut self, i: &ArbiterInputs) {
        if i.reset {
            self.ptr = 0;
        } else if i.accept {
            if let Some(g) = self.pick(i.req) {
                self.ptr = if g + 1 == self.n { 0 } else { g + 1 };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Independent reference: walk the ring one position at a time.
    fn slow_pick(n: u32, ptr: u32, req: u32) -> Option<u32> {
        (0..n).map(|k| (ptr + k) % n).find(|&i| req >> i & 1 == 1)
    }

    #[test]
    fn params_are_checked() {
        assert!(ArbiterParams { n: 2 }.validate().is_ok());
        assert!(ArbiterParams { n: 16 }.validate().is_ok());
        let e = ArbiterParams { n: 1 }.validate().unwrap_err().to_string();
        assert!(e.contains("arbiter.n") && e.contains('1') && e.contains("2..=16"));
        assert!(ArbiterParams { n: 17 }.validate().is_err());
        let bits: Vec<u32> = [2, 3, 4, 5, 7, 8, 9, 11, 16]
            .iter()
            .map(|&n| ArbiterParams { n }.index_bits())
            .collect();
        assert_eq!(bits, vec![1, 2, 2, 3, 3, 3, 4, 4, 4]);
    }

    #[test]
    fn matches_the_ring_walk_reference() {
        for n in 2..=16 {
            let mut a = Arbiter::new(&ArbiterParams { n }).unwrap();
            let mut ptr = 0;
            let mut rng = Rng::new(n as u64);
            for _ in 0..20_000 {
                let i = ArbiterInputs {
                    reset: rng.chance(0.001),
                    req: rng.bits(n) as u32 & rng.bits(n) as u32,
                    accept: rng.chance(0.7),
                };
                let o = a.outputs(&i);
                let g = slow_pick(n, ptr, i.req);
                assert_eq!(o.grant_valid, g.is_some());
                assert_eq!(o.grant, g.map_or(0, |g| 1 << g));
                assert_eq!(o.grant_index, g.unwrap_or(0));
                a.tick(&i);
                if i.reset {
                    ptr = 0;
                } else if let (true, Some(g)) = (i.accept, g) {
                    ptr = (g + 1) % n;
                }
                assert_eq!(a.pointer(), ptr);
            }
        }
    }

    /// All requesting: every requester is granted within n accepted grants.
    #[test]
    fn all_requesting_is_served_in_turn() {
        for n in [2, 3, 4, 5, 7, 8, 11, 16] {
            let mut a = Arbiter::new(&ArbiterParams { n }).unwrap();
            let i = ArbiterInputs {
                req: (1 << n) - 1,
                accept: true,
                reset: false,
            };
            let mut seq = Vec::new();
            for _ in 0..(10 * n) {
                seq.push(a.outputs(&i).grant_index);
                a.tick(&i);
            }
            for w in seq.windows(n as usize) {
                let mut seen: Vec<u32> = w.to_vec();
                seen.sort();
                assert_eq!(seen, (0..n).collect::<Vec<_>>(), "n={n}: {w:?}");
            }
            assert_eq!(&seq[..n as usize], (0..n).collect::<Vec<_>>().as_slice());
        }
    }

    /// Random requests: a requester that keeps requesting waits at most n-1
    /// accepted grants of others.
    #[test]
    fn bounded_wait_under_random_requests() {
        for n in [2, 3, 5, 7, 11, 16] {
            let mut a = Arbiter::new(&ArbiterParams { n }).unwrap();
            let mut rng = Rng::new(100 + n as u64);
            // others[i]: accepted grants of others since i began waiting.
            let mut others = vec![0u32; n as usize];
            let mut waiting = 0u32;
            let mut worst = 0;
            for _ in 0..100_000 {
                // Waiting requesters keep requesting; others come and go.
                let req = waiting | (rng.bits(n) as u32 & rng.bits(n) as u32);
                let i = ArbiterInputs {
                    req,
                    accept: rng.chance(0.5),
                    reset: false,
                };
                let o = a.outputs(&i);
                if i.accept && o.grant_valid {
                    let g = o.grant_index;
                    for r in 0..n {
                        if r != g && (req >> r) & 1 == 1 {
                            others[r as usize] += 1;
                            worst = worst.max(others[r as usize]);
                        }
                    }
                    others[g as usize] = 0;
                    waiting = req & !(1 << g);
                } else {
                    waiting = req;
                }
                a.tick(&i);
            }
            assert!(worst < n, "n={n}: waited {worst} grants");
            assert_eq!(worst, n - 1, "n={n}: the bound is reached");
        }
    }
}
