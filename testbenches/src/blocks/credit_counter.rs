//! Co-simulation bench of `credit_counter`: RTL vs
//! `exanet_sim::common::credit_counter`.
//!
//! Stimulus comes in phases of random length (up to ~3x `max`) with their
//! own consume/ret probabilities (spending, returning, balanced, both,
//! idle), so the count reaches 0 and `max` again and again. Half the phases
//! obey the count (no consume at 0, no ret at `max`, as a correct link
//! does), half ignore it, which exercises saturation and the sticky error.
//! Rare reset pulses clear the error so it can be set again. Every output
//! is compared every cycle.

use super::BlockInfo;
use crate::cosim::{Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_hdl::common::credit_counter::emit_credit_counter;
use exanet_hdl::emit::Emitted;
use exanet_sim::common::credit_counter::{CreditCounter, CreditCounterInputs, CreditCounterParams};
use exanet_sim::point;
use exanet_sim::rng::Rng;

/// Registry entry for `exanet cosim credit_counter`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "credit_counter",
        about: "credit counter of one downstream buffer (saturating, sticky error)",
        matrix,
        point,
    }
}

fn p(max: u32, need: u32) -> CreditCounterParams {
    CreditCounterParams { max, need }
}

/// Default matrix: a 1-flit buffer, small powers of two, the reference
/// router's 40-flit buffer with an 18-flit maximum packet, and 1024.
fn matrix() -> Vec<Box<dyn Bench>> {
    [p(1, 1), p(2, 2), p(16, 5), p(40, 18), p(1024, 1000)]
        .into_iter()
        .map(|q| {
            Box::new(CreditCounterBench::new(q).expect("matrix point is valid")) as Box<dyn Bench>
        })
        .collect()
}

/// Parse `max=..,need=..` (defaults 32 and 1).
fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(CreditCounterBench::new(point::parse(text)?)?))
}

/// What a run exercised; the integration test asserts on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreditCounterCoverage {
    /// Cycles at 0 credits.
    pub zero_cycles: u64,
    /// Cycles at `max` credits after having been below.
    pub max_cycles: u64,
    /// Consume alone at 0 (saturation low).
    pub underruns: u64,
    /// Ret alone at `max` (saturation high).
    pub overruns: u64,
    /// Consume and ret together at 0 or `max`.
    pub cancels_at_bounds: u64,
    /// Cycles where `enough` rose from low.
    pub enough_rises: u64,
    /// Reset pulses.
    pub resets: u64,
}

#[derive(Clone)]
struct Ports {
    reset: Port,
    consume: Port,
    ret: Port,
    count: Port,
    available: Port,
    enough: Port,
    error: Port,
}

/// The `credit_counter` bench at one parameter point.
pub struct CreditCounterBench {
    params: CreditCounterParams,
    golden: CreditCounter,
    ports: Option<Ports>,
    inputs: CreditCounterInputs,
    reset_chance: f64,
    phase_left: u64,
    p_consume: f64,
    p_ret: f64,
    obey: bool,
    was_enough: bool,
    spent: bool,
    cov: CreditCounterCoverage,
}

impl CreditCounterBench {
    /// A bench whose RTL and golden model share `params`.
    pub fn new(params: CreditCounterParams) -> Result<Self> {
        Self::with_golden(params.clone(), params)
    }

    /// A bench comparing the RTL of `rtl` against a golden model built
    /// with `golden` (differing only to show the bench catches a mismatch).
    pub fn with_golden(rtl: CreditCounterParams, golden: CreditCounterParams) -> Result<Self> {
        rtl.validate()?;
        Ok(CreditCounterBench {
            golden: CreditCounter::new(&golden)?,
            reset_chance: 1.0 / (2048.0 + 8.0 * rtl.max as f64),
            params: rtl,
            ports: None,
            inputs: CreditCounterInputs::default(),
            phase_left: 0,
            p_consume: 0.5,
            p_ret: 0.5,
            obey: false,
            was_enough: true,
            spent: false,
            cov: CreditCounterCoverage::default(),
        })
    }

    /// What the run since the last [`Bench::reset`] exercised.
    pub fn coverage(&self) -> CreditCounterCoverage {
        self.cov
    }

    fn new_phase(&mut self, rng: &mut Rng) {
        const PHASES: [(f64, f64); 5] = [
            (0.85, 0.15), // spending
            (0.15, 0.85), // returning
            (0.5, 0.5),   // balanced
            (0.9, 0.9),   // both, mostly cancelling
            (0.05, 0.05), // idle
        ];
        let (c, r) = PHASES[rng.below(PHASES.len() as u64) as usize];
        self.p_consume = c;
        self.p_ret = r;
        self.obey = rng.chance(0.5);
        self.phase_left = 1 + rng.below(3 * self.params.max as u64 + 32);
    }
}

impl Bench for CreditCounterBench {
    fn block(&self) -> &str {
        "credit_counter"
    }

    fn point(&self) -> String {
        point::to_text(&self.params)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_credit_counter(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        self.ports = Some(Ports {
            reset: sim.port_w("reset", 1)?,
            consume: sim.port_w("consume", 1)?,
            ret: sim.port_w("ret", 1)?,
            count: sim.port_w("count", self.params.count_bits())?,
            available: sim.port_w("available", 1)?,
            enough: sim.port_w("enough", 1)?,
            error: sim.port_w("error", 1)?,
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.golden.power_on();
        self.inputs = CreditCounterInputs::default();
        self.phase_left = 0;
        self.was_enough = true;
        self.spent = false;
        self.cov = CreditCounterCoverage::default();
    }

    #[inline]
    fn drive(&mut self, rng: &mut Rng, _cycle: u64) {
        if self.phase_left == 0 {
            self.new_phase(rng);
        }
        self.phase_left -= 1;
        let n = self.golden.count();
        let max = self.params.max;
        let mut consume = rng.chance(self.p_consume);
        let mut ret = rng.chance(self.p_ret);
        if self.obey {
            consume &= n > 0;
            ret &= n < max;
        }
        let reset = rng.chance(self.reset_chance);
        self.inputs = CreditCounterInputs {
            reset,
            consume,
            ret,
        };
        let p = self.ports.as_ref().expect("bind before drive");
        p.reset.set(reset as u64);
        p.consume.set(consume as u64);
        p.ret.set(ret as u64);
        let c = &mut self.cov;
        c.zero_cycles += (n == 0) as u64;
        self.spent |= n < max;
        c.max_cycles += (n == max && self.spent) as u64;
        c.underruns += (consume && !ret && n == 0 && !reset) as u64;
        c.overruns += (ret && !consume && n == max && !reset) as u64;
        c.cancels_at_bounds += (consume && ret && (n == 0 || n == max)) as u64;
        let enough = n >= self.params.need;
        c.enough_rises += (enough && !self.was_enough) as u64;
        self.was_enough = enough;
        c.resets += reset as u64;
    }

    #[inline]
    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let o = self.golden.outputs(&self.inputs);
        let p = self.ports.as_ref().expect("bind before check");
        let got = p.count.get();
        if got != o.count as u64 {
            return Some(Mismatch::hex(cycle, "count", o.count as u64, got));
        }
        for (name, want, port) in [
            ("available", o.available, &p.available),
            ("enough", o.enough, &p.enough),
            ("error", o.error, &p.error),
        ] {
            let got = port.get();
            if got != want as u64 {
                return Some(Mismatch::hex(cycle, name, want as u64, got));
            }
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
    fn points_parse_and_reject_bad_keys_and_values() {
        assert_eq!(point("max=40,need=18").unwrap().point(), "max=40,need=18");
        assert_eq!(point("").unwrap().point(), "max=32,need=1");
        let e = point("max=40,needs=3").err().unwrap().to_string();
        assert!(e.contains("needs") && e.contains("need"), "{e}");
        let e = point("max=40,need=41").err().unwrap().to_string();
        assert!(e.contains("credit_counter.need") && e.contains("41"), "{e}");
        let e = point("max=0").err().unwrap().to_string();
        assert!(e.contains("credit_counter.max"), "{e}");
        assert!(matrix().len() >= 3);
        for b in matrix() {
            assert_eq!(point(&b.point()).unwrap().point(), b.point());
        }
    }
}
