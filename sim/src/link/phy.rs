//! PHY model `phy`: one direction of a serial link (serdes + cable) at the
//! Aurora 64B/66B user interface, one 64-bit word per PL cycle.
//!
//! - **Latency**: a word sent in cycle `t` is received in cycle
//!   `t + latency_cycles` (`link.latency_ns` at `clock.pl_mhz`, rounded up).
//! - **Bit errors**: independent errors at `ber` on every bit of the 66-bit
//!   code word of each word sent (2 sync-header bits, 64 scrambled payload
//!   bits). One flipped sync bit makes an invalid header: the block is
//!   dropped (Aurora counts a soft error). Both flipped turn data into
//!   control or back. A payload error is multiplied by the self-synchronous
//!   descrambler (x^58 + x^39 + 1): payload bit `p` of the serial stream
//!   flips output bits `p`, `p + 39` and `p + 58`, the last two possibly in
//!   the next word.
//! - **Bursts**: with probability `burst_rate` per word, `burst_bits`
//!   consecutive payload bits from a random position are replaced by
//!   random bits.
//! - **Clock compensation**: `ready` is low for `cc_len` cycles every
//!   `cc_period` cycles (0 = never), as Aurora's TX does for CC blocks.
//! - **Down/up**: a [`PhySchedule`] of intervals during which the lane is
//!   down for both directions; words in flight are lost.
//!
//! Deterministic from `seed`: the same seed gives the same error pattern,
//! so a golden model and an RTL fed through two copies see the same errors.

use super::PhyWord;
use crate::rng::Rng;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Parameters of one PHY direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PhyParams {
    /// One-way latency in cycles, >= 1.
    pub latency_cycles: usize,
    /// Bit error rate on the line, 0..1e-2.
    pub ber: f64,
    /// Probability per word that an error burst starts.
    pub burst_rate: f64,
    /// Length of a burst in payload bits, 1..=64.
    pub burst_bits: u32,
    /// Cycles between clock-compensation gaps (0 = none).
    pub cc_period: u64,
    /// Cycles of each gap.
    pub cc_len: u64,
    /// Seed of the error pattern.
    pub seed: u64,
}

impl Default for PhyParams {
    /// 16 cycles, error-free, no CC gaps.
    fn default() -> Self {
        PhyParams {
            latency_cycles: 16,
            ber: 0.0,
            burst_rate: 0.0,
            burst_bits: 16,
            cc_period: 0,
            cc_len: 3,
            seed: 1,
        }
    }
}

impl PhyParams {
    /// Reject values outside the model's range, naming the key.
    pub fn validate(&self) -> Result<()> {
        if self.latency_cycles == 0 || self.latency_cycles > 1 << 20 {
            bail!(
                "link.latency_cycles = {}: must be 1..=1048576",
                self.latency_cycles
            );
        }
        if !(0.0..=1e-2).contains(&self.ber) {
            bail!("link.ber = {}: must be 0..=1e-2", self.ber);
        }
        if !(0.0..=1.0).contains(&self.burst_rate) {
            bail!("link.burst_rate = {}: must be 0..=1", self.burst_rate);
        }
        if !(1..=64).contains(&self.burst_bits) {
            bail!("link.burst_bits = {}: must be 1..=64", self.burst_bits);
        }
        if self.cc_period != 0 && self.cc_len >= self.cc_period {
            bail!(
                "link.cc_len = {}: must be below cc_period ({})",
                self.cc_len,
                self.cc_period
            );
        }
        Ok(())
    }
}

/// Intervals `[down, up)` of cycles during which a cable is down.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PhySchedule {
    /// Sorted, non-overlapping `(down_at, up_at)`; `u64::MAX` = never up.
    pub down: Vec<(u64, u64)>,
}

impl PhySchedule {
    /// The lane is up in `cycle`.
    pub fn up(&self, cycle: u64) -> bool {
        // Sorted and non-overlapping: the last interval starting at or
        // before `cycle` is the only one that can hold it.
        let i = self.down.partition_point(|&(d, _)| d <= cycle);
        i == 0 || cycle >= self.down[i - 1].1
    }
}

/// Counters of one PHY direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhyCounters {
    /// Words sent.
    pub words: u64,
    /// Line bit errors injected (independent ones).
    pub bit_errors: u64,
    /// Bursts injected.
    pub bursts: u64,
    /// Words dropped for an invalid sync header.
    pub dropped: u64,
    /// Words lost because the lane went down with them in flight.
    pub lost_down: u64,
}

/// One PHY direction.
#[derive(Clone, Debug)]
pub struct Phy {
    p: PhyParams,
    rng: Rng,
    pipe: Vec<Option<PhyWord>>,
    at: usize,
    /// Line bits until the next independent error.
    gap: u64,
    /// Descrambler flips owed to the next word.
    carry: u64,
    counters: PhyCounters,
}

impl Phy {
    /// A PHY with an empty cable.
    pub fn new(p: &PhyParams) -> Result<Self> {
        p.validate()?;
        let mut phy = Phy {
            rng: Rng::new(p.seed),
            pipe: vec![None; p.latency_cycles],
            at: 0,
            gap: 0,
            carry: 0,
            counters: PhyCounters::default(),
            p: p.clone(),
        };
        phy.gap = phy.draw_gap();
        Ok(phy)
    }

    /// Counters so far.
    pub fn counters(&self) -> PhyCounters {
        self.counters
    }

    /// No word in flight: stepping it with no word and the lane up only
    /// moves its delay line. For a simulator that skips idle links.
    pub fn empty(&self) -> bool {
        self.pipe.iter().all(|w| w.is_none())
    }

    /// Advance `cycles` steps with no word and the lane up, at once (the
    /// PHY must be [`Phy::empty`]).
    pub fn skip(&mut self, cycles: u64) {
        debug_assert!(self.empty());
        self.at = ((self.at as u64 + cycles) % self.pipe.len() as u64) as usize;
    }

    /// The TX side may send in `cycle` (low in clock-compensation gaps).
    pub fn ready(&self, cycle: u64) -> bool {
        self.p.cc_period == 0 || cycle % self.p.cc_period >= self.p.cc_len
    }

    fn draw_gap(&mut self) -> u64 {
        if self.p.ber <= 0.0 {
            return u64::MAX;
        }
        // Geometric: bits before the next error.
        let u = 1.0 - (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (u.ln() / (1.0 - self.p.ber).ln())
            .floor()
            .min(u64::MAX as f64 / 2.0) as u64
    }

    /// The word that crosses the line: errors applied, `None` if dropped.
    fn corrupt(&mut self, w: PhyWord) -> Option<PhyWord> {
        let mut data = w.data ^ self.carry;
        self.carry = 0;
        let mut sync_flips = 0;
        while self.gap < 66 {
            let bit = self.gap as u32;
            self.counters.bit_errors += 1;
            if bit < 2 {
                sync_flips += 1;
            } else {
                let p = bit - 2;
                for q in [p, p + 39, p + 58] {
                    if q < 64 {
                        data ^= 1 << q;
                    } else {
                        self.carry ^= 1 << (q - 64);
                    }
                }
            }
            let next = self.draw_gap();
            self.gap = self.gap.saturating_add(1).saturating_add(next);
        }
        self.gap -= 66;
        if self.p.burst_rate > 0.0 && self.rng.chance(self.p.burst_rate) {
            self.counters.bursts += 1;
            let len = self.p.burst_bits;
            let start = self.rng.below(65 - len as u64) as u32;
            let mask = if len == 64 {
                !0
            } else {
                ((1u64 << len) - 1) << start
            };
            data ^= self.rng.next_u64() & mask;
        }
        match sync_flips {
            1 => {
                self.counters.dropped += 1;
                None
            }
            2 => Some(PhyWord {
                data,
                ctrl: !w.ctrl,
            }),
            _ => Some(PhyWord { data, ctrl: w.ctrl }),
        }
    }

    /// One cycle: `sent` enters the cable (if `up`), the word sent
    /// `latency_cycles` ago comes out. A down lane empties the cable.
    pub fn step(&mut self, sent: Option<PhyWord>, up: bool) -> Option<PhyWord> {
        if !up {
            for w in self.pipe.iter_mut() {
                self.counters.lost_down += w.take().is_some() as u64;
            }
            self.carry = 0;
            return None;
        }
        let out = self.pipe[self.at].take();
        self.pipe[self.at] = match sent {
            Some(w) => {
                self.counters.words += 1;
                self.corrupt(w)
            }
            None => None,
        };
        self.at = (self.at + 1) % self.pipe.len();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(i: u64) -> PhyWord {
        PhyWord {
            data: i.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ctrl: i.is_multiple_of(5),
        }
    }

    #[test]
    fn error_free_phy_delays_by_latency() {
        let mut phy = Phy::new(&PhyParams {
            latency_cycles: 7,
            ..Default::default()
        })
        .unwrap();
        for t in 0..100u64 {
            let out = phy.step(Some(word(t)), true);
            if t < 7 {
                assert_eq!(out, None);
            } else {
                assert_eq!(out, Some(word(t - 7)), "cycle {t}");
            }
        }
    }

    /// Measured error counts match the BER within a few sigma, the same
    /// seed gives the same pattern, and a payload error flips three bits.
    #[test]
    fn ber_is_respected_and_deterministic() {
        let p = PhyParams {
            latency_cycles: 1,
            ber: 1e-4,
            seed: 77,
            ..Default::default()
        };
        let run = |p: &PhyParams| {
            let mut phy = Phy::new(p).unwrap();
            let mut outs = Vec::new();
            for t in 0..200_000u64 {
                outs.push(phy.step(Some(word(t)), true));
            }
            (phy.counters(), outs)
        };
        let (c, a) = run(&p);
        let (_, b) = run(&p);
        assert_eq!(a, b, "same seed, same pattern");
        let expect = 200_000.0 * 66.0 * 1e-4;
        let got = c.bit_errors as f64;
        assert!(
            (got - expect).abs() < 5.0 * expect.sqrt(),
            "{got} vs {expect}"
        );
        // Most errors hit the payload, and the descrambler's x^58 tap
        // spills most of them into the next word: about 1.9 bad words each.
        let bad = a
            .iter()
            .skip(1)
            .enumerate()
            .filter(|(t, o)| o.is_none_or(|w| w != word(*t as u64)))
            .count() as f64;
        assert!(bad > 1.5 * expect && bad < 2.2 * expect, "{bad}");
        assert!(c.dropped > 0, "sync-header errors drop words");
        let (_, other) = run(&PhyParams { seed: 78, ..p });
        assert_ne!(a, other);
    }

    #[test]
    fn descrambler_multiplies_a_payload_error() {
        // Force an error at payload bit 10 of the first word.
        let mut phy = Phy::new(&PhyParams {
            latency_cycles: 1,
            ..Default::default()
        })
        .unwrap();
        phy.gap = 12;
        phy.step(Some(PhyWord::default()), true);
        let w = phy.step(Some(PhyWord::default()), true).unwrap();
        assert_eq!(w.data, 1 << 10 | 1 << 49);
        let w2 = phy.step(None, true);
        assert_eq!(
            w2.unwrap().data,
            1 << 4,
            "the x^58 tap lands in the next word"
        );
    }

    #[test]
    fn down_loses_words_in_flight_and_cc_gaps() {
        let mut phy = Phy::new(&PhyParams {
            latency_cycles: 4,
            cc_period: 10,
            cc_len: 2,
            ..Default::default()
        })
        .unwrap();
        for t in 0..3 {
            phy.step(Some(word(t)), true);
        }
        assert_eq!(phy.step(None, false), None);
        assert_eq!(phy.counters().lost_down, 3);
        for _ in 0..4 {
            assert_eq!(phy.step(None, true), None);
        }
        let ready: Vec<bool> = (0..12).map(|t| phy.ready(t)).collect();
        assert_eq!(ready.iter().filter(|r| !**r).count(), 4);
        let s = PhySchedule { down: vec![(5, 9)] };
        assert!(s.up(4) && !s.up(5) && !s.up(8) && s.up(9));
    }

    #[test]
    fn bad_params_are_named() {
        for (p, want) in [
            (
                PhyParams {
                    latency_cycles: 0,
                    ..Default::default()
                },
                "link.latency_cycles = 0",
            ),
            (
                PhyParams {
                    ber: 0.5,
                    ..Default::default()
                },
                "link.ber = 0.5",
            ),
            (
                PhyParams {
                    burst_bits: 65,
                    ..Default::default()
                },
                "link.burst_bits = 65",
            ),
            (
                PhyParams {
                    cc_period: 3,
                    cc_len: 3,
                    ..Default::default()
                },
                "link.cc_len = 3",
            ),
        ] {
            let e = Phy::new(&p).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }
}
