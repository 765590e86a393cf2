//! Golden model of `fp_add`: a pipelined IEEE 754 binary32 or binary64
//! adder.
//!
//! The reference is Rust's native `f32`/`f64` addition (round to nearest,
//! ties to even; subnormals kept, no flush to zero), with one rule added so
//! results are bit-exact and deterministic: any NaN result is the
//! canonical quiet NaN ([`canonical_nan`]: sign 0, exponent all ones,
//! only the top fraction bit set), whatever the operands' NaN payloads.
//!
//! Cycle behaviour (what the RTL does): operands presented with `in_valid`
//! in cycle `t` come out with `out_valid` in cycle `t + FP_ADD_LATENCY`
//! (one result per cycle, no stall). `sum` is defined only while
//! `out_valid`; `reset` clears the valid pipeline.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Cycles from operands to result (the RTL's pipeline registers; why six
/// is in the `fp_add` block doc of `exanet-hdl`).
pub const FP_ADD_LATENCY: usize = 6;
/// Operand widths (bits) the block supports: binary32 and binary64.
pub const FP_ADD_WIDTHS: [usize; 2] = [32, 64];

/// Exponent and fraction field widths of an IEEE 754 binary format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FpFormat {
    /// Total bits (32 or 64).
    pub width: usize,
    /// Exponent field bits.
    pub exp_bits: usize,
    /// Fraction field bits (the significand without its hidden bit).
    pub frac_bits: usize,
}

/// binary32.
pub const BINARY32: FpFormat = FpFormat {
    width: 32,
    exp_bits: 8,
    frac_bits: 23,
};
/// binary64.
pub const BINARY64: FpFormat = FpFormat {
    width: 64,
    exp_bits: 11,
    frac_bits: 52,
};

impl FpFormat {
    /// The format of `width` bits, if supported.
    pub fn of_width(width: usize) -> Option<FpFormat> {
        match width {
            32 => Some(BINARY32),
            64 => Some(BINARY64),
            _ => None,
        }
    }

    /// The canonical quiet NaN of this format.
    pub fn canonical_nan(&self) -> u64 {
        canonical_nan(self.width)
    }

    /// Mask of the format's bits.
    pub fn mask(&self) -> u64 {
        if self.width == 64 {
            !0
        } else {
            (1u64 << self.width) - 1
        }
    }
}

/// The canonical quiet NaN of a `width`-bit format (32 or 64):
/// `0x7FC0_0000` or `0x7FF8_0000_0000_0000`.
pub fn canonical_nan(width: usize) -> u64 {
    if width == 32 {
        0x7FC0_0000
    } else {
        0x7FF8_0000_0000_0000
    }
}

/// `a + b` in binary32 by Rust's native addition, NaN canonical.
#[inline]
pub fn add_f32(a: u32, b: u32) -> u32 {
    let s = f32::from_bits(a) + f32::from_bits(b);
    if s.is_nan() {
        canonical_nan(32) as u32
    } else {
        s.to_bits()
    }
}

/// `a + b` in binary64 by Rust's native addition, NaN canonical.
#[inline]
pub fn add_f64(a: u64, b: u64) -> u64 {
    let s = f64::from_bits(a) + f64::from_bits(b);
    if s.is_nan() {
        canonical_nan(64)
    } else {
        s.to_bits()
    }
}

/// Parameters of `fp_add`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FpAddParams {
    /// Operand width in bits: 32 (binary32) or 64 (binary64).
    pub width: usize,
}

impl Default for FpAddParams {
    /// binary64.
    fn default() -> Self {
        FpAddParams { width: 64 }
    }
}

impl FpAddParams {
    /// Reject unsupported widths, naming the key, the value and the rule.
    pub fn validate(&self) -> Result<()> {
        if !FP_ADD_WIDTHS.contains(&self.width) {
            bail!(
                "fp_add.width = {}: must be one of {:?} (binary32 or binary64)",
                self.width,
                FP_ADD_WIDTHS
            );
        }
        Ok(())
    }

    /// The IEEE format of this point (after [`FpAddParams::validate`]).
    pub fn format(&self) -> Result<FpFormat> {
        self.validate()?;
        Ok(FpFormat::of_width(self.width).expect("validated width"))
    }
}

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FpAddInputs {
    /// Synchronous reset of the valid pipeline.
    pub reset: bool,
    /// `a` and `b` hold operands.
    pub in_valid: bool,
    /// Operand (low `width` bits).
    pub a: u64,
    /// Operand (low `width` bits).
    pub b: u64,
}

/// Outputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FpAddOutputs {
    /// `sum` holds the result of operands presented `FP_ADD_LATENCY` cycles ago.
    pub out_valid: bool,
    /// `a + b` (defined while `out_valid`).
    pub sum: u64,
}

/// Cycle-level model of `fp_add`: a delay line of native sums.
#[derive(Clone, Debug)]
pub struct FpAdd {
    format: FpFormat,
    /// Results in flight; slot `head` leaves next.
    line: [FpAddOutputs; FP_ADD_LATENCY],
    head: usize,
}

impl FpAdd {
    /// A model at power-on (nothing valid in flight).
    pub fn new(params: &FpAddParams) -> Result<Self> {
        Ok(FpAdd {
            format: params.format()?,
            line: [FpAddOutputs::default(); FP_ADD_LATENCY],
            head: 0,
        })
    }

    /// Back to power-on.
    pub fn reset(&mut self) {
        self.line = [FpAddOutputs::default(); FP_ADD_LATENCY];
        self.head = 0;
    }

    /// `a + b` in this model's format (operands' high bits ignored).
    #[inline]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        if self.format.width == 32 {
            add_f32(a as u32, b as u32) as u64
        } else {
            add_f64(a, b)
        }
    }

    /// Outputs during this cycle (before the edge).
    #[inline]
    pub fn outputs(&self) -> FpAddOutputs {
        self.line[self.head]
    }

    /// The clock edge.
    #[inline]
    pub fn tick(&mut self, i: &FpAddInputs) {
        self.line[self.head] = FpAddOutputs {
            out_valid: i.in_valid,
            sum: self.add(i.a, i.b),
        };
        self.head = (self.head + 1) % FP_ADD_LATENCY;
        if i.reset {
            for s in self.line.iter_mut() {
                s.out_valid = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_nans_are_quiet_and_positive() {
        assert_eq!(canonical_nan(32), 0x7FC0_0000);
        assert_eq!(canonical_nan(64), 0x7FF8_0000_0000_0000);
        assert!(f32::from_bits(0x7FC0_0000).is_nan());
        // Inf - Inf and NaN payloads all give the canonical NaN.
        assert_eq!(add_f32(0x7F80_0000, 0xFF80_0000), 0x7FC0_0000);
        assert_eq!(add_f32(0xFFC1_2345, 0x3F80_0000), 0x7FC0_0000);
        assert_eq!(add_f64(0xFFF0_0000_0000_0001, 0), 0x7FF8_0000_0000_0000);
    }

    #[test]
    fn native_addition_keeps_subnormals_and_signed_zeros() {
        // Smallest subnormal plus itself: exact, not flushed.
        assert_eq!(add_f32(1, 1), 2);
        assert_eq!(add_f64(1, 1), 2);
        // -0 + -0 = -0; +0 + -0 = +0; x + -x = +0.
        assert_eq!(add_f32(0x8000_0000, 0x8000_0000), 0x8000_0000);
        assert_eq!(add_f32(0, 0x8000_0000), 0);
        assert_eq!(add_f32(0x3F80_0000, 0xBF80_0000), 0);
        // Round half to even: 1 + 2^-24 ties to 1, (1 + 2^-23) + 2^-24 to 1 + 2^-22.
        assert_eq!(add_f32(0x3F80_0000, 0x3380_0000), 0x3F80_0000);
        assert_eq!(add_f32(0x3F80_0001, 0x3380_0000), 0x3F80_0002);
        // Overflow to Inf.
        assert_eq!(add_f32(0x7F7F_FFFF, 0x7F7F_FFFF), 0x7F80_0000);
    }

    #[test]
    fn params_are_checked() {
        assert!(FpAddParams { width: 32 }.validate().is_ok());
        assert_eq!(FpAddParams::default().format().unwrap(), BINARY64);
        let e = FpAddParams { width: 16 }
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("fp_add.width") && e.contains("16"), "{e}");
        assert!(FpAdd::new(&FpAddParams { width: 128 }).is_err());
    }

    #[test]
    fn results_leave_after_the_latency_and_reset_clears_valid() {
        let mut m = FpAdd::new(&FpAddParams { width: 32 }).unwrap();
        let one = 1.0f32.to_bits() as u64;
        m.tick(&FpAddInputs {
            in_valid: true,
            a: one,
            b: one,
            ..Default::default()
        });
        for _ in 1..FP_ADD_LATENCY {
            assert!(!m.outputs().out_valid);
            m.tick(&FpAddInputs::default());
        }
        assert_eq!(
            m.outputs(),
            FpAddOutputs {
                out_valid: true,
                sum: 2.0f32.to_bits() as u64
            }
        );
        m.tick(&FpAddInputs {
            in_valid: true,
            ..Default::default()
        });
        m.tick(&FpAddInputs {
            reset: true,
            ..Default::default()
        });
        for _ in 0..FP_ADD_LATENCY {
            assert!(!m.outputs().out_valid);
            m.tick(&FpAddInputs::default());
        }
    }
}
