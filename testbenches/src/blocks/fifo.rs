//! Co-simulation bench of `fifo`: RTL vs `exanet_sim::common::fifo`.
//!
//! Stimulus comes in phases of random length (up to ~3x the depth) with
//! their own push/pop probabilities: filling, draining, balanced, both at
//! once, nearly idle, so the FIFO reaches full and empty again and again.
//! Half the phases obey the flags (no push when full, no pop when empty,
//! as a well-behaved user), half ignore them, which exercises overflow,
//! underflow and push+pop while full. Rare reset pulses clear the error
//! flags so they can be set again. Every output is compared every cycle,
//! `dout` included (also while empty: the model defines that value).

use super::BlockInfo;
use crate::cosim::{Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::{bail, Result};
use exanet_hdl::common::fifo::{emit_fifo, SUPPORTED_WIDTHS};
use exanet_hdl::emit::Emitted;
use exanet_sim::common::fifo::{Fifo, FifoInputs, FifoOutputs, FifoParams};
use exanet_sim::point;
use exanet_sim::rng::Rng;

/// A word of up to 160 bits, least significant 32-bit word first (the
/// Verilator layout of a wide port).
pub type Word = [u32; 5];

/// Registry entry for `exanet cosim fifo`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "fifo",
        about: "synchronous first-word-fall-through FIFO (LUTRAM)",
        matrix,
        point,
    }
}

fn p(width: u32, depth: u32, almost_full: u32) -> FifoParams {
    FifoParams {
        width,
        depth,
        almost_full,
    }
}

/// Default matrix: narrow to wide, shallowest to deepest.
fn matrix() -> Vec<Box<dyn Bench>> {
    [
        p(8, 2, 1),
        p(16, 4, 4),
        p(32, 16, 12),
        p(64, 64, 48),
        p(133, 1024, 1000),
    ]
    .into_iter()
    .map(|q| Box::new(FifoBench::new(q).expect("matrix point is valid")) as Box<dyn Bench>)
    .collect()
}

/// Parse `width=..,depth=..,almost_full=..` (defaults 32, 16, 3/4 of depth).
fn point(text: &str) -> Result<Box<dyn Bench>> {
    // `almost_full` defaults from the depth given: parse once for the
    // depth, then again over a base whose `almost_full` follows it.
    let q: FifoParams = point::parse(text)?;
    let base = FifoParams {
        almost_full: (q.depth / 4 * 3).max(1),
        ..q
    };
    Ok(Box::new(FifoBench::new(point::from_text(text, &base)?)?))
}

/// How often a run reached each corner; the integration test asserts every
/// one was reached, so a bench that never fills the FIFO cannot pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FifoCoverage {
    /// Cycles the FIFO was full.
    pub full_cycles: u64,
    /// Cycles the FIFO was empty after having held a word.
    pub empty_cycles: u64,
    /// Cycles with push and pop while full.
    pub push_pop_full: u64,
    /// Cycles with push and pop while empty.
    pub push_pop_empty: u64,
    /// Pushes while full without pop (dropped).
    pub overflows: u64,
    /// Pops while empty (ignored).
    pub underflows: u64,
    /// Reset pulses.
    pub resets: u64,
}

#[derive(Clone)]
struct Ports {
    reset: Port,
    push: Port,
    din: Port,
    pop: Port,
    dout: Port,
    empty: Port,
    full: Port,
    almost_full: Port,
    count: Port,
    overflow: Port,
    underflow: Port,
}

/// The `fifo` bench at one parameter point.
pub struct FifoBench {
    params: FifoParams,
    golden: Fifo<Word>,
    words: usize,
    word_mask: Word,
    ports: Option<Ports>,
    inputs: FifoInputs<Word>,
    expected: FifoOutputs<Word>,
    phase_left: u64,
    /// Push and pop probabilities as thresholds of a 16-bit draw (0..=65536).
    push_thr: u32,
    pop_thr: u32,
    /// Reset probability as a threshold of a 32-bit draw.
    reset_thr: u64,
    obey: bool,
    cov: FifoCoverage,
    filled: bool,
}

impl FifoBench {
    /// A bench whose RTL and golden model share `params`.
    pub fn new(params: FifoParams) -> Result<Self> {
        Self::with_golden(params.clone(), params)
    }

    /// A bench comparing the RTL of `rtl` against a golden model built
    /// with `golden` (differing only to show the bench catches a mismatch).
    pub fn with_golden(rtl: FifoParams, golden: FifoParams) -> Result<Self> {
        rtl.validate()?;
        if !SUPPORTED_WIDTHS.contains(&rtl.width) {
            bail!(
                "fifo.width = {}: not supported; supported widths: {SUPPORTED_WIDTHS:?}",
                rtl.width
            );
        }
        if rtl.width > 32 * 5 {
            bail!(
                "fifo.width = {}: the bench handles up to 160 bits",
                rtl.width
            );
        }
        let words = rtl.width.div_ceil(32) as usize;
        let mut word_mask: Word = [0; 5];
        for (k, m) in word_mask.iter_mut().enumerate() {
            let bits = rtl.width.saturating_sub(32 * k as u32).min(32);
            *m = if bits == 32 {
                u32::MAX
            } else {
                (1u32 << bits) - 1
            };
        }
        Ok(FifoBench {
            golden: Fifo::new(&golden)?,
            words,
            word_mask,
            // Rare: deep FIFOs need long stretches without reset to fill.
            reset_thr: (4_294_967_296.0 / (2048.0 + 8.0 * rtl.depth as f64)) as u64,
            params: rtl,
            ports: None,
            inputs: FifoInputs::default(),
            expected: FifoOutputs::default(),
            phase_left: 0,
            push_thr: 1 << 15,
            pop_thr: 1 << 15,
            obey: false,
            cov: FifoCoverage::default(),
            filled: false,
        })
    }

    /// Corners reached since the last [`Bench::reset`].
    pub fn coverage(&self) -> FifoCoverage {
        self.cov
    }

    fn new_phase(&mut self, rng: &mut Rng) {
        const PHASES: [(f64, f64); 6] = [
            (0.9, 0.15),  // fill
            (0.15, 0.9),  // drain
            (0.5, 0.5),   // balanced
            (0.95, 0.95), // streaming
            (0.1, 0.1),   // nearly idle
            (1.0, 0.0),   // push only
        ];
        let (a, b) = PHASES[rng.below(PHASES.len() as u64) as usize];
        self.push_thr = (a * 65536.0) as u32;
        self.pop_thr = (b * 65536.0) as u32;
        self.obey = rng.chance(0.5);
        self.phase_left = 1 + rng.below(3 * self.params.depth as u64 + 32);
    }

    fn word_hex(w: &Word, words: usize) -> String {
        let mut s = String::from("0x");
        for x in w[..words].iter().rev() {
            s.push_str(&format!("{x:08x}"));
        }
        s
    }
}

impl Bench for FifoBench {
    fn block(&self) -> &str {
        "fifo"
    }

    fn point(&self) -> String {
        point::to_text(&self.params)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_fifo(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let w = self.params.width;
        let c = self.params.count_bits();
        self.ports = Some(Ports {
            reset: sim.port_w("reset", 1)?,
            push: sim.port_w("push", 1)?,
            din: sim.port_w("din", w)?,
            pop: sim.port_w("pop", 1)?,
            dout: sim.port_w("dout", w)?,
            empty: sim.port_w("empty", 1)?,
            full: sim.port_w("full", 1)?,
            almost_full: sim.port_w("almost_full", 1)?,
            count: sim.port_w("count", c)?,
            overflow: sim.port_w("overflow", 1)?,
            underflow: sim.port_w("underflow", 1)?,
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.golden.power_on();
        self.inputs = FifoInputs::default();
        self.phase_left = 0;
        self.cov = FifoCoverage::default();
        self.filled = false;
    }

    #[inline]
    fn drive(&mut self, rng: &mut Rng, _cycle: u64) {
        if self.phase_left == 0 {
            self.new_phase(rng);
        }
        self.phase_left -= 1;
        let now = self.golden.outputs(&self.inputs);
        // Two draws per cycle: one for the controls (16-bit push and pop
        // draws, a 32-bit reset draw against integer thresholds), one for
        // the data, spread over 160 bits by odd-constant multiplies (the
        // data only needs to vary, not to be independent across words).
        let c = rng.next_u64();
        let mut push = ((c & 0xffff) as u32) < self.push_thr;
        let mut pop = (((c >> 16) & 0xffff) as u32) < self.pop_thr;
        if self.obey {
            push &= !now.full;
            pop &= !now.empty;
        }
        let reset = (c >> 32) < self.reset_thr;
        let r0 = rng.next_u64();
        let r1 = r0.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
        let raw: Word = [
            r0 as u32,
            (r0 >> 32) as u32,
            r1 as u32,
            (r1 >> 32) as u32,
            (r0 ^ r1).rotate_left(17) as u32,
        ];
        let din: Word = std::array::from_fn(|k| raw[k] & self.word_mask[k]);
        self.inputs = FifoInputs {
            reset,
            push,
            din,
            pop,
        };
        self.expected = now;
        let ports = self.ports.as_ref().expect("bind before drive");
        ports.reset.set(reset as u64);
        ports.push.set(push as u64);
        ports.pop.set(pop as u64);
        ports.din.set_words(&din[..self.words]);
        // Coverage of this cycle's corner.
        let c = &mut self.cov;
        c.full_cycles += now.full as u64;
        self.filled |= !now.empty;
        c.empty_cycles += (now.empty && self.filled) as u64;
        c.push_pop_full += (push && pop && now.full) as u64;
        c.push_pop_empty += (push && pop && now.empty) as u64;
        c.overflows += (push && !pop && now.full && !reset) as u64;
        c.underflows += (pop && now.empty && !reset) as u64;
        c.resets += reset as u64;
    }

    #[inline]
    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        // The outputs depend on state only, so `drive`'s are this cycle's.
        let o = &self.expected;
        let p = self.ports.as_ref().expect("bind before check");
        // Fast path: all narrow outputs packed into one word, one compare.
        let pack = |e: u64, f: u64, a: u64, v: u64, u: u64, c: u64| {
            e | f << 1 | a << 2 | v << 3 | u << 4 | c << 5
        };
        let got = pack(
            p.empty.get(),
            p.full.get(),
            p.almost_full.get(),
            p.overflow.get(),
            p.underflow.get(),
            p.count.get(),
        );
        let want = pack(
            o.empty as u64,
            o.full as u64,
            o.almost_full as u64,
            o.overflow as u64,
            o.underflow as u64,
            o.count as u64,
        );
        if got != want {
            const NAMES: [&str; 5] = ["empty", "full", "almost_full", "overflow", "underflow"];
            for (bit, name) in NAMES.iter().enumerate() {
                let (g, w) = ((got >> bit) & 1, (want >> bit) & 1);
                if g != w {
                    return Some(Mismatch::hex(cycle, name, w, g));
                }
            }
            return Some(Mismatch::hex(cycle, "count", want >> 5, got >> 5));
        }
        let mut dout: Word = [0; 5];
        p.dout.get_words(&mut dout[..self.words]);
        // Whole-array compare: both are zero above the width.
        if dout != o.dout {
            return Some(Mismatch {
                cycle,
                port: "dout".to_string(),
                expected: Self::word_hex(&o.dout, self.words),
                actual: Self::word_hex(&dout, self.words),
            });
        }
        None
    }

    #[inline]
    fn advance(&mut self) {
        self.golden.tick(&self.inputs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_with_defaults_and_reject_bad_keys_and_values() {
        let b = point("width=64, depth=32").unwrap();
        assert_eq!(b.point(), "width=64,depth=32,almost_full=24");
        assert_eq!(b.block(), "fifo");
        let e = point("width=64,deep=32").err().unwrap().to_string();
        assert!(e.contains("deep") && e.contains("depth"), "{e}");
        let e = point("width=33").err().unwrap().to_string();
        assert!(e.contains("fifo.width") && e.contains("33"), "{e}");
        let e = point("depth=12").err().unwrap().to_string();
        assert!(e.contains("fifo.depth") && e.contains("12"), "{e}");
        let e = point("depth=99999999999").err().unwrap().to_string();
        assert!(e.contains("depth"), "{e}");
        for b in matrix() {
            let again = point(&b.point()).unwrap();
            assert_eq!(again.point(), b.point());
        }
        assert!(matrix().len() >= 3);
    }
}
