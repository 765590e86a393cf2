//! Golden model of `reduce_alu`: the allreduce engine's combining step, one
//! flit of elements per cycle.
//!
//! The operation and data type are the codes defined here ([`ReduceOp`],
//! [`ReduceDtype`]); the RTL takes every code from these definitions. A
//! flit of `width` bits holds `width / 32` lanes of a 32-bit type or
//! `width / 64` of a 64-bit type, lane `i` in bits `[w·i + w-1 : w·i]`.
//!
//! Per lane, with Rust's native operations as the reference:
//! - `Sum`: integers wrap (`wrapping_add`); floats are native `f32`/`f64`
//!   addition (round to nearest even, subnormals kept);
//! - `Min`/`Max`: integers as signed or unsigned; floats follow IEEE
//!   754-2019 `minimum`/`maximum`: a NaN operand gives NaN, and −0 < +0;
//! - `Band`/`Bor`/`Bxor`: integer types only.
//!
//! Any NaN result is the canonical quiet NaN (as `fp_add`). A code that is
//! not defined, or a bitwise op on a float type, is *illegal*: the result
//! is all zeros with `bad` set (the engine rejects such descriptors before
//! they reach the datapath; the ALU still gives a defined output).
//!
//! Cycle behaviour: operands presented with `in_valid` in cycle `t` come
//! out with `out_valid` in cycle `t + REDUCE_ALU_LATENCY`, one flit per
//! cycle, every op with the same latency (so results stay in order).
//! `y` and `bad` are defined only while `out_valid`; `reset` clears the
//! valid pipeline.

use super::fp_add::{add_f32, add_f64, canonical_nan, FP_ADD_LATENCY};
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Cycles from operands to result: the float sum's (`fp_add`); the other
/// operations are computed in the first cycle and delayed to match.
pub const REDUCE_ALU_LATENCY: usize = FP_ADD_LATENCY;
/// Flit widths (bits) the block supports.
pub const REDUCE_ALU_WIDTHS: [usize; 3] = [64, 128, 256];
/// Bits of the `op` code.
pub const REDUCE_OP_BITS: usize = 3;
/// Bits of the `dtype` code.
pub const REDUCE_DTYPE_BITS: usize = 3;

/// A reduction operation, with its code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Sum (integers wrap).
    Sum = 0,
    /// Minimum.
    Min = 1,
    /// Maximum.
    Max = 2,
    /// Bitwise and (integers only).
    Band = 3,
    /// Bitwise or (integers only).
    Bor = 4,
    /// Bitwise exclusive or (integers only).
    Bxor = 5,
}

impl ReduceOp {
    /// Every operation, in code order.
    pub const ALL: [ReduceOp; 6] = [
        ReduceOp::Sum,
        ReduceOp::Min,
        ReduceOp::Max,
        ReduceOp::Band,
        ReduceOp::Bor,
        ReduceOp::Bxor,
    ];

    /// Its code on the `op` port and in descriptors.
    pub fn code(self) -> u64 {
        self as u64
    }

    /// The operation of `code`, if defined.
    pub fn from_code(code: u64) -> Option<ReduceOp> {
        Self::ALL.into_iter().find(|o| o.code() == code)
    }

    /// Lower-case name (`sum`, `band`, …).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::Band => "band",
            ReduceOp::Bor => "bor",
            ReduceOp::Bxor => "bxor",
        }
    }

    /// A bitwise operation (defined on integer types only).
    pub fn is_bitwise(self) -> bool {
        matches!(self, ReduceOp::Band | ReduceOp::Bor | ReduceOp::Bxor)
    }
}

/// An element type, with its code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceDtype {
    /// Signed 32-bit integer.
    I32 = 0,
    /// Unsigned 32-bit integer.
    U32 = 1,
    /// Signed 64-bit integer.
    I64 = 2,
    /// Unsigned 64-bit integer.
    U64 = 3,
    /// IEEE 754 binary32.
    F32 = 4,
    /// IEEE 754 binary64.
    F64 = 5,
}

impl ReduceDtype {
    /// Every type, in code order.
    pub const ALL: [ReduceDtype; 6] = [
        ReduceDtype::I32,
        ReduceDtype::U32,
        ReduceDtype::I64,
        ReduceDtype::U64,
        ReduceDtype::F32,
        ReduceDtype::F64,
    ];

    /// Its code on the `dtype` port and in descriptors.
    pub fn code(self) -> u64 {
        self as u64
    }

    /// The type of `code`, if defined.
    pub fn from_code(code: u64) -> Option<ReduceDtype> {
        Self::ALL.into_iter().find(|d| d.code() == code)
    }

    /// Lower-case name (`i32`, `f64`, …).
    pub fn name(self) -> &'static str {
        match self {
            ReduceDtype::I32 => "i32",
            ReduceDtype::U32 => "u32",
            ReduceDtype::I64 => "i64",
            ReduceDtype::U64 => "u64",
            ReduceDtype::F32 => "f32",
            ReduceDtype::F64 => "f64",
        }
    }

    /// Bits per element (32 or 64).
    pub fn bits(self) -> usize {
        match self {
            ReduceDtype::I32 | ReduceDtype::U32 | ReduceDtype::F32 => 32,
            _ => 64,
        }
    }

    /// A floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, ReduceDtype::F32 | ReduceDtype::F64)
    }

    /// Whether `op` is defined on this type.
    pub fn supports(self, op: ReduceOp) -> bool {
        !(self.is_float() && op.is_bitwise())
    }
}

/// IEEE 754-2019 `minimum` (`max == false`) or `maximum` of two floats
/// given as `f64` (both operands of one format): NaN if either is NaN,
/// −0 below +0, otherwise the smaller (larger) value. `None` stands for
/// NaN (the caller writes its canonical NaN).
fn ieee_min_max(a: f64, b: f64, max: bool) -> Option<bool> {
    if a.is_nan() || b.is_nan() {
        return None;
    }
    // Some(true): the result is `a`.
    Some(if a == b {
        // Equal values differ only for zeros: minimum is -0, maximum +0.
        a.is_sign_negative() != max
    } else {
        (a < b) != max
    })
}

/// `op` of one lane of `dtype` (operands in the low `dtype.bits()` bits).
pub fn reduce_lane(op: ReduceOp, dtype: ReduceDtype, a: u64, b: u64) -> u64 {
    use ReduceDtype::*;
    use ReduceOp::*;
    let mask = if dtype.bits() == 32 { 0xFFFF_FFFF } else { !0 };
    let (a, b) = (a & mask, b & mask);
    let pick = |a_wins: bool| if a_wins { a } else { b };
    match (op, dtype) {
        (Band, _) => a & b,
        (Bor, _) => a | b,
        (Bxor, _) => a ^ b,
        (Sum, I32 | U32) => (a as u32).wrapping_add(b as u32) as u64,
        (Sum, I64 | U64) => a.wrapping_add(b),
        (Sum, F32) => add_f32(a as u32, b as u32) as u64,
        (Sum, F64) => add_f64(a, b),
        (Min, I32) => ((a as u32 as i32).min(b as u32 as i32)) as u32 as u64,
        (Max, I32) => ((a as u32 as i32).max(b as u32 as i32)) as u32 as u64,
        (Min, U32 | U64) => a.min(b),
        (Max, U32 | U64) => a.max(b),
        (Min, I64) => (a as i64).min(b as i64) as u64,
        (Max, I64) => (a as i64).max(b as i64) as u64,
        (Min | Max, F32) => {
            let (x, y) = (
                f32::from_bits(a as u32) as f64,
                f32::from_bits(b as u32) as f64,
            );
            ieee_min_max(x, y, op == Max).map_or(canonical_nan(32), pick)
        }
        (Min | Max, F64) => {
            let (x, y) = (f64::from_bits(a), f64::from_bits(b));
            ieee_min_max(x, y, op == Max).map_or(canonical_nan(64), pick)
        }
    }
}

/// One flit: `(y, bad)` for the codes `op` and `dtype` over `width`-bit
/// flits `a`, `b` (lanes as in the module doc). Illegal codes give
/// `(0, true)`.
pub fn reduce_flit(
    op: u64,
    dtype: u64,
    width: usize,
    a: [u64; 4],
    b: [u64; 4],
) -> ([u64; 4], bool) {
    let (Some(o), Some(d)) = (ReduceOp::from_code(op), ReduceDtype::from_code(dtype)) else {
        return ([0; 4], true);
    };
    if !d.supports(o) {
        return ([0; 4], true);
    }
    let mut y = [0u64; 4];
    for w in 0..width / 64 {
        y[w] = if d.bits() == 64 {
            reduce_lane(o, d, a[w], b[w])
        } else {
            let lo = reduce_lane(o, d, a[w], b[w]);
            let hi = reduce_lane(o, d, a[w] >> 32, b[w] >> 32);
            hi << 32 | lo
        };
    }
    (y, false)
}

/// Parameters of `reduce_alu`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReduceAluParams {
    /// Flit width in bits: 64, 128 or 256.
    pub width: usize,
}

impl Default for ReduceAluParams {
    /// 128-bit flits.
    fn default() -> Self {
        ReduceAluParams { width: 128 }
    }
}

impl ReduceAluParams {
    /// Reject unsupported widths, naming the key, the value and the rule.
    pub fn validate(&self) -> Result<()> {
        if !REDUCE_ALU_WIDTHS.contains(&self.width) {
            bail!(
                "reduce_alu.width = {}: must be one of {:?} (bits per flit)",
                self.width,
                REDUCE_ALU_WIDTHS
            );
        }
        Ok(())
    }
}

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReduceAluInputs {
    /// Synchronous reset of the valid pipeline.
    pub reset: bool,
    /// `a`, `b`, `op`, `dtype` hold a flit to combine.
    pub in_valid: bool,
    /// Operation code ([`ReduceOp::code`]; other values are illegal).
    pub op: u64,
    /// Type code ([`ReduceDtype::code`]; other values are illegal).
    pub dtype: u64,
    /// Flit, 64-bit words least significant first (`width` bits used).
    pub a: [u64; 4],
    /// Flit.
    pub b: [u64; 4],
}

/// Outputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReduceAluOutputs {
    /// `y` and `bad` belong to the flit presented `REDUCE_ALU_LATENCY` cycles ago.
    pub out_valid: bool,
    /// Lane-wise result (zero when `bad`).
    pub y: [u64; 4],
    /// The op/dtype codes were illegal.
    pub bad: bool,
}

/// Cycle-level model of `reduce_alu`: a delay line of [`reduce_flit`] results.
#[derive(Clone, Debug)]
pub struct ReduceAlu {
    width: usize,
    line: [ReduceAluOutputs; REDUCE_ALU_LATENCY],
    head: usize,
}

impl ReduceAlu {
    /// A model at power-on (nothing valid in flight).
    pub fn new(params: &ReduceAluParams) -> Result<Self> {
        params.validate()?;
        Ok(ReduceAlu {
            width: params.width,
            line: [ReduceAluOutputs::default(); REDUCE_ALU_LATENCY],
            head: 0,
        })
    }

    /// Back to power-on.
    pub fn reset(&mut self) {
        self.line = [ReduceAluOutputs::default(); REDUCE_ALU_LATENCY];
        self.head = 0;
    }

    /// Outputs during this cycle (before the edge).
    #[inline]
    pub fn outputs(&self) -> ReduceAluOutputs {
        self.line[self.head]
    }

    /// The clock edge.
    #[inline]
    pub fn tick(&mut self, i: &ReduceAluInputs) {
        let (y, bad) = reduce_flit(i.op, i.dtype, self.width, i.a, i.b);
        self.line[self.head] = ReduceAluOutputs {
            out_valid: i.in_valid,
            y,
            bad,
        };
        self.head = (self.head + 1) % REDUCE_ALU_LATENCY;
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
    use ReduceDtype::*;
    use ReduceOp::*;

    fn f32b(x: f32) -> u64 {
        x.to_bits() as u64
    }

    #[test]
    fn codes_are_dense_unique_and_fit_their_ports() {
        for (i, o) in ReduceOp::ALL.iter().enumerate() {
            assert_eq!(o.code(), i as u64);
            assert_eq!(ReduceOp::from_code(o.code()), Some(*o));
            assert!(o.code() < 1 << REDUCE_OP_BITS);
        }
        for (i, d) in ReduceDtype::ALL.iter().enumerate() {
            assert_eq!(d.code(), i as u64);
            assert_eq!(ReduceDtype::from_code(d.code()), Some(*d));
            assert!(d.code() < 1 << REDUCE_DTYPE_BITS);
        }
        assert_eq!(ReduceOp::from_code(6), None);
        assert_eq!(ReduceDtype::from_code(7), None);
    }

    #[test]
    fn integer_lanes_wrap_and_order_by_signedness() {
        assert_eq!(reduce_lane(Sum, U32, 0xFFFF_FFFF, 2), 1);
        assert_eq!(reduce_lane(Sum, I64, i64::MAX as u64, 1), i64::MIN as u64);
        assert_eq!(reduce_lane(Min, I32, 0xFFFF_FFFF, 1), 0xFFFF_FFFF);
        assert_eq!(reduce_lane(Min, U32, 0xFFFF_FFFF, 1), 1);
        assert_eq!(reduce_lane(Max, I64, !0, 5), 5);
        assert_eq!(reduce_lane(Max, U64, !0, 5), !0);
        assert_eq!(reduce_lane(Bxor, U64, 0b1100, 0b1010), 0b0110);
    }

    #[test]
    fn float_min_max_follow_ieee_minimum_maximum() {
        let (nz, pz) = (f32b(-0.0), f32b(0.0));
        assert_eq!(reduce_lane(Min, F32, pz, nz), nz);
        assert_eq!(reduce_lane(Min, F32, nz, pz), nz);
        assert_eq!(reduce_lane(Max, F32, nz, pz), pz);
        assert_eq!(reduce_lane(Max, F32, f32b(-1.0), f32b(-2.0)), f32b(-1.0));
        assert_eq!(
            reduce_lane(Min, F32, f32b(f32::NEG_INFINITY), f32b(1.0)),
            f32b(f32::NEG_INFINITY)
        );
        // NaN propagates (canonical), unlike f32::min.
        assert_eq!(reduce_lane(Min, F32, 0x7FA0_0001, f32b(1.0)), 0x7FC0_0000);
        assert_eq!(
            reduce_lane(Max, F64, 1.0f64.to_bits(), 0xFFF8_0000_0000_0001),
            canonical_nan(64)
        );
        // Subnormals compare by value.
        assert_eq!(reduce_lane(Max, F64, 1, 2), 2);
        assert_eq!(reduce_lane(Sum, F32, f32b(1.5), f32b(2.25)), f32b(3.75));
    }

    #[test]
    fn flits_hold_lanes_and_illegal_codes_give_bad() {
        let a = [0x0000_0002_0000_0001, 0x0000_0004_0000_0003, 0, 0];
        let b = [0x0000_0020_0000_0010, 0x0000_0040_0000_0030, 0, 0];
        let (y, bad) = reduce_flit(Sum.code(), U32.code(), 128, a, b);
        assert!(!bad);
        assert_eq!(y, [0x0000_0022_0000_0011, 0x0000_0044_0000_0033, 0, 0]);
        let (y, bad) = reduce_flit(Band.code(), F32.code(), 128, a, b);
        assert!(bad && y == [0; 4]);
        assert!(reduce_flit(6, 0, 128, a, b).1);
        assert!(reduce_flit(0, 6, 128, a, b).1);
        // 64-bit flits: one 64-bit lane or two 32-bit lanes; words above untouched.
        let (y, _) = reduce_flit(Sum.code(), U64.code(), 64, a, b);
        assert_eq!(y, [0x0000_0022_0000_0011, 0, 0, 0]);
    }

    #[test]
    fn params_are_checked_and_results_leave_after_the_latency() {
        let e = ReduceAluParams { width: 96 }
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("reduce_alu.width") && e.contains("96"), "{e}");
        let mut m = ReduceAlu::new(&ReduceAluParams::default()).unwrap();
        m.tick(&ReduceAluInputs {
            in_valid: true,
            op: Max.code(),
            dtype: I32.code(),
            a: [7, 0, 0, 0],
            b: [9, 0, 0, 0],
            ..Default::default()
        });
        for _ in 1..REDUCE_ALU_LATENCY {
            assert!(!m.outputs().out_valid);
            m.tick(&ReduceAluInputs::default());
        }
        let o = m.outputs();
        assert!(o.out_valid && !o.bad);
        assert_eq!(o.y, [9, 0, 0, 0]);
    }
}
