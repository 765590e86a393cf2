//! Co-simulation bench of `reduce_alu`: RTL vs
//! `exanet_sim::allreduce::reduce_alu` (Rust's native integer and float
//! operations, IEEE 754-2019 minimum/maximum).
//!
//! Stimulus: every cycle a random legal (op, dtype) pair nine times in ten,
//! otherwise an illegal one (a bitwise op on a float type, or an undefined
//! op or dtype code). Each lane of `a` and `b` is drawn for the type:
//! integers random, at their extremes (0, ±1, MIN, MAX) or equal on both
//! sides; floats as random bit patterns, zeros of both signs, infinities,
//! NaNs (random payloads), subnormals, equal values or one value against
//! its negation. `in_valid` is set nine cycles in ten; rare reset pulses
//! clear the pipeline. `out_valid` is compared every cycle, `y` and `bad`
//! whenever valid.

use super::BlockInfo;
use crate::cosim::{cmp, Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_hdl::allreduce::reduce_alu::emit_reduce_alu;
use exanet_hdl::emit::Emitted;
use exanet_sim::allreduce::reduce_alu::{
    ReduceAlu, ReduceAluInputs, ReduceAluParams, ReduceDtype, ReduceOp,
};
use exanet_sim::point;
use exanet_sim::rng::Rng;

/// Registry entry for `exanet cosim reduce_alu`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "reduce_alu",
        about: "allreduce combine: sum/min/max/and/or/xor on i32..f64 lanes of one flit per cycle",
        matrix,
        point,
    }
}

/// Default matrix: every supported flit width.
fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(vec!["width=64", "width=128", "width=256"], point)
}

/// Parse `width=..` (default 128).
fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(ReduceAluBench::new(point::parse(text)?)?))
}

/// A deliberately wrong golden model, to show the bench catches a mismatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceAluFault {
    /// The golden model orders signed integers as unsigned.
    SignedAsUnsigned,
    /// The golden model takes a bitwise op on a float type as legal (on
    /// the bit patterns).
    BitwiseFloatsLegal,
}

/// Number of legal (op, dtype) pairs: six ops on four integer types,
/// three on two float types.
pub const LEGAL_PAIRS: usize = 30;

/// How often a run reached each case; the integration test asserts each was.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReduceAluCoverage {
    /// Valid flits of each legal (op, dtype) pair, index `6·dtype + op`
    /// over the legal ones in code order ([`LEGAL_PAIRS`] entries).
    pub pairs: Vec<u64>,
    /// Flits with a bitwise op on a float type.
    pub bitwise_float: u64,
    /// Flits with an undefined op or dtype code.
    pub undefined_codes: u64,
    /// Float min/max lanes with a NaN operand.
    pub nan_min_max: u64,
    /// Float min/max lanes of +0 against −0.
    pub signed_zero_min_max: u64,
    /// Integer sum lanes that wrapped.
    pub wrapped_sums: u64,
    /// Min/max lanes with equal operands.
    pub equal_lanes: u64,
    /// Reset pulses.
    pub resets: u64,
}

#[derive(Clone)]
struct Ports {
    reset: Port,
    in_valid: Port,
    op: Port,
    dtype: Port,
    a: Port,
    b: Port,
    out_valid: Port,
    y: Port,
    bad: Port,
}

/// The `reduce_alu` bench at one parameter point.
pub struct ReduceAluBench {
    params: ReduceAluParams,
    golden: ReduceAlu,
    fault: Option<ReduceAluFault>,
    ports: Option<Ports>,
    inputs: ReduceAluInputs,
    golden_inputs: ReduceAluInputs,
    legal: Vec<(ReduceOp, ReduceDtype)>,
    cov: ReduceAluCoverage,
}

impl ReduceAluBench {
    /// A bench whose RTL and golden model share `params`.
    pub fn new(params: ReduceAluParams) -> Result<Self> {
        Self::with_fault(params, None)
    }

    /// A bench whose golden model is wrong in the way `fault` says.
    pub fn with_fault(params: ReduceAluParams, fault: Option<ReduceAluFault>) -> Result<Self> {
        let golden = ReduceAlu::new(&params)?;
        let legal: Vec<_> = ReduceDtype::ALL
            .into_iter()
            .flat_map(|d| ReduceOp::ALL.into_iter().map(move |o| (o, d)))
            .filter(|(o, d)| d.supports(*o))
            .collect();
        assert_eq!(legal.len(), LEGAL_PAIRS);
        Ok(ReduceAluBench {
            params,
            golden,
            fault,
            ports: None,
            inputs: ReduceAluInputs::default(),
            golden_inputs: ReduceAluInputs::default(),
            legal,
            cov: ReduceAluCoverage {
                pairs: vec![0; LEGAL_PAIRS],
                ..Default::default()
            },
        })
    }

    /// Cases reached since the last [`Bench::reset`].
    pub fn coverage(&self) -> ReduceAluCoverage {
        self.cov.clone()
    }

    /// One pair of lanes of `d`.
    fn lanes(rng: &mut Rng, d: ReduceDtype) -> (u64, u64) {
        let bits = d.bits();
        let mask = if bits == 32 { 0xFFFF_FFFF } else { !0u64 };
        let sign = 1u64 << (bits - 1);
        let r = |rng: &mut Rng| rng.next_u64() & mask;
        let special = |rng: &mut Rng| -> u64 {
            if d.is_float() {
                let (e, m) = if bits == 32 { (8, 23) } else { (11, 52) };
                let ones = ((1u64 << e) - 1) << m;
                let s = if rng.chance(0.5) { sign } else { 0 };
                match rng.below(5) {
                    0 => s,                                                                // ±0
                    1 => s | ones,                                                         // ±Inf
                    2 => s | ones | (rng.next_u64() & ((1 << m) - 1)) | 1 << rng.below(m), // NaN
                    3 => s | (rng.next_u64() & ((1 << m) - 1)), // subnormal
                    _ => r(rng),
                }
            } else {
                [0, 1, mask, sign, sign - 1, 2][rng.below(6) as usize]
            }
        };
        match rng.below(8) {
            0..=2 => (r(rng), r(rng)),
            3..=4 => (special(rng), special(rng)),
            5 => (special(rng), r(rng)),
            6 => {
                let x = if rng.chance(0.5) {
                    special(rng)
                } else {
                    r(rng)
                };
                (x, x)
            }
            _ if d.is_float() && rng.chance(0.5) => {
                // Every cancellation depth: b is a's negation moved k ulps
                // toward zero, k of a random bit length up to the
                // significand's + 2 (as the fp_add bench's massive class).
                let m = if bits == 32 { 23 } else { 52 };
                let a = r(rng);
                let len = 1 + rng.below(m + 2);
                let k = (1u64 << (len - 1)) | rng.next_u64() & ((1u64 << (len - 1)) - 1);
                let b = (a & (sign - 1)).saturating_sub(k) | (!a & sign);
                (a, b)
            }
            _ => {
                let x = if rng.chance(0.5) {
                    special(rng)
                } else {
                    r(rng)
                };
                (x, x ^ sign)
            }
        }
    }

    fn tally_lane(&mut self, o: ReduceOp, d: ReduceDtype, a: u64, b: u64) {
        let bits = d.bits();
        let mask = if bits == 32 { 0xFFFF_FFFF } else { !0u64 };
        let c = &mut self.cov;
        let min_max = matches!(o, ReduceOp::Min | ReduceOp::Max);
        if min_max && a == b {
            c.equal_lanes += 1;
        }
        if o == ReduceOp::Sum && !d.is_float() && (a as u128 + b as u128) > mask as u128 {
            c.wrapped_sums += 1;
        }
        if min_max && d.is_float() {
            let (is_nan, is_zero) = if bits == 32 {
                let f = |x: u64| f32::from_bits(x as u32);
                (f(a).is_nan() || f(b).is_nan(), f(a) == 0.0 && f(b) == 0.0)
            } else {
                let f = f64::from_bits;
                (f(a).is_nan() || f(b).is_nan(), f(a) == 0.0 && f(b) == 0.0)
            };
            c.nan_min_max += is_nan as u64;
            c.signed_zero_min_max += (is_zero && a != b) as u64;
        }
    }
}

impl Bench for ReduceAluBench {
    fn block(&self) -> &str {
        "reduce_alu"
    }

    fn point(&self) -> String {
        point::to_text(&self.params)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_reduce_alu(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let w = self.params.width as u32;
        self.ports = Some(Ports {
            reset: sim.port_w("reset", 1)?,
            in_valid: sim.port_w("in_valid", 1)?,
            op: sim.port_w("op", 3)?,
            dtype: sim.port_w("dtype", 3)?,
            a: sim.port_w("a", w)?,
            b: sim.port_w("b", w)?,
            out_valid: sim.port_w("out_valid", 1)?,
            y: sim.port_w("y", w)?,
            bad: sim.port_w("bad", 1)?,
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.golden.reset();
        self.inputs = ReduceAluInputs::default();
        self.golden_inputs = ReduceAluInputs::default();
        self.cov = ReduceAluCoverage {
            pairs: vec![0; LEGAL_PAIRS],
            ..Default::default()
        };
    }

    #[inline]
    fn drive(&mut self, rng: &mut Rng, _cycle: u64) {
        let reset = rng.chance(1.0 / 5000.0);
        let in_valid = rng.chance(0.9);
        let words = self.params.width / 64;
        let (op, dtype, lane_type) = if rng.chance(0.9) {
            let k = rng.below(LEGAL_PAIRS as u64) as usize;
            let (o, d) = self.legal[k];
            if in_valid {
                self.cov.pairs[k] += 1;
            }
            (o.code(), d.code(), d)
        } else if rng.chance(0.5) {
            let d = if rng.chance(0.5) {
                ReduceDtype::F32
            } else {
                ReduceDtype::F64
            };
            let o = [ReduceOp::Band, ReduceOp::Bor, ReduceOp::Bxor][rng.below(3) as usize];
            self.cov.bitwise_float += in_valid as u64;
            (o.code(), d.code(), d)
        } else {
            let (op, dtype) = if rng.chance(0.5) {
                (6 + rng.below(2), rng.below(8))
            } else {
                (rng.below(8), 6 + rng.below(2))
            };
            self.cov.undefined_codes += in_valid as u64;
            (op, dtype, ReduceDtype::U64)
        };
        let mut a = [0u64; 4];
        let mut b = [0u64; 4];
        for k in 0..words {
            if lane_type.bits() == 64 {
                (a[k], b[k]) = Self::lanes(rng, lane_type);
            } else {
                let (a0, b0) = Self::lanes(rng, lane_type);
                let (a1, b1) = Self::lanes(rng, lane_type);
                a[k] = a1 << 32 | a0;
                b[k] = b1 << 32 | b0;
            }
        }
        if in_valid {
            if let (Some(o), Some(d)) = (ReduceOp::from_code(op), ReduceDtype::from_code(dtype)) {
                if d.supports(o) {
                    for k in 0..words {
                        if d.bits() == 64 {
                            self.tally_lane(o, d, a[k], b[k]);
                        } else {
                            self.tally_lane(o, d, a[k] & 0xFFFF_FFFF, b[k] & 0xFFFF_FFFF);
                            self.tally_lane(o, d, a[k] >> 32, b[k] >> 32);
                        }
                    }
                }
            }
        }
        self.cov.resets += reset as u64;
        self.inputs = ReduceAluInputs {
            reset,
            in_valid,
            op,
            dtype,
            a,
            b,
        };
        self.golden_inputs = self.inputs;
        match self.fault {
            Some(ReduceAluFault::SignedAsUnsigned) => {
                use ReduceDtype::*;
                if dtype == I32.code() {
                    self.golden_inputs.dtype = U32.code();
                } else if dtype == I64.code() {
                    self.golden_inputs.dtype = U64.code();
                }
            }
            Some(ReduceAluFault::BitwiseFloatsLegal) => {
                use ReduceDtype::*;
                let bitwise = ReduceOp::from_code(op).is_some_and(|o| o.is_bitwise());
                if bitwise && dtype == F32.code() {
                    self.golden_inputs.dtype = U32.code();
                } else if bitwise && dtype == F64.code() {
                    self.golden_inputs.dtype = U64.code();
                }
            }
            None => {}
        }
        let mut wa = [0u32; 8];
        let mut wb = [0u32; 8];
        for k in 0..words {
            wa[2 * k] = a[k] as u32;
            wa[2 * k + 1] = (a[k] >> 32) as u32;
            wb[2 * k] = b[k] as u32;
            wb[2 * k + 1] = (b[k] >> 32) as u32;
        }
        let p = self.ports.as_ref().expect("bind before drive");
        p.reset.set(reset as u64);
        p.in_valid.set(in_valid as u64);
        p.op.set(op);
        p.dtype.set(dtype);
        p.a.set_words(&wa[..2 * words]);
        p.b.set_words(&wb[..2 * words]);
    }

    #[inline]
    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let o = self.golden.outputs();
        let p = self.ports.as_ref().expect("bind before check");
        if let Some(m) = cmp(cycle, "out_valid", o.out_valid as u64, p.out_valid.get()) {
            return Some(m);
        }
        if !o.out_valid {
            return None;
        }
        if let Some(m) = cmp(cycle, "bad", o.bad as u64, p.bad.get()) {
            return Some(m);
        }
        let words = self.params.width / 64;
        let mut got = [0u32; 8];
        p.y.get_words(&mut got[..2 * words]);
        let mut want = [0u32; 8];
        for k in 0..words {
            want[2 * k] = o.y[k] as u32;
            want[2 * k + 1] = (o.y[k] >> 32) as u32;
        }
        if got != want {
            return Some(Mismatch::words(
                cycle,
                "y",
                &want[..2 * words],
                &got[..2 * words],
            ));
        }
        None
    }

    #[inline]
    fn advance(&mut self) {
        self.golden.tick(&self.golden_inputs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_and_reject_bad_keys_and_values() {
        let b = point("width=256").unwrap();
        assert_eq!(b.point(), "width=256");
        assert_eq!(b.block(), "reduce_alu");
        assert_eq!(point("").unwrap().point(), "width=128");
        let e = point("widht=64").err().unwrap().to_string();
        assert!(e.contains("widht") && e.contains("width"), "{e}");
        let e = point("width=96").err().unwrap().to_string();
        assert!(e.contains("reduce_alu.width") && e.contains("96"), "{e}");
        for b in matrix() {
            assert_eq!(point(&b.point()).unwrap().point(), b.point());
        }
    }
}
