//! Co-simulation bench of `fp_add`: RTL vs `exanet_sim::allreduce::fp_add`,
//! whose reference is Rust's native `f32`/`f64` addition (NaN canonical).
//!
//! Stimulus: every cycle draws one operand class (one in four fully random
//! bit patterns, the rest directed):
//! - random finite operands with nearby exponents (alignment, carries);
//! - every exponent difference, walked in order (`0..=max` over the
//!   cycles, each side of the swap);
//! - zeros of both signs against zeros, subnormals and normals;
//! - the subnormal/normal boundary (largest subnormal, smallest normal and
//!   their neighbours) against itself and random subnormals;
//! - overflow: large operands of one sign whose sum exceeds the largest
//!   finite number;
//! - infinities and NaNs (random payloads, quiet and signaling), Inf − Inf;
//! - total cancellation (`x + -x`) and near cancellation (one ulp apart);
//! - round-half-even ties: `b` aligned so the bits shifted out of `a`'s
//!   last place are exactly one half, both signs;
//! - massive cancellation: opposite signs, exponent difference 0..=2; and
//!   every cancellation depth (b = −a moved k ulps toward zero, k of every
//!   bit length up to the significand's + 2).
//!
//! `in_valid` is set nine cycles in ten; rare reset pulses clear the
//! pipeline. `out_valid` is compared every cycle, `sum` whenever valid.

use super::BlockInfo;
use crate::cosim::{cmp, Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_hdl::allreduce::fp_add::emit_fp_add;
use exanet_hdl::emit::Emitted;
use exanet_sim::allreduce::fp_add::{FpAdd, FpAddInputs, FpAddParams, FpFormat};
use exanet_sim::point;
use exanet_sim::rng::Rng;

/// Registry entry for `exanet cosim fp_add`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "fp_add",
        about: "IEEE 754 binary32/binary64 adder, pipelined, against native Rust addition",
        matrix,
        point,
    }
}

/// Default matrix: binary32 and binary64.
fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(vec!["width=32", "width=64"], point)
}

/// Parse `width=..` (default 64).
fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(FpAddBench::new(point::parse(text)?)?))
}

/// A deliberately wrong golden model, to show the bench catches a mismatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FpAddFault {
    /// Subnormal results flushed to a zero of the same sign.
    FlushSubnormals,
    /// NaN results with the sign bit set (x86's default NaN) instead of
    /// the canonical positive quiet NaN.
    NegativeNan,
}

/// Operand classes the stimulus draws from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Random,
    Near,
    ExpWalk,
    Zeros,
    Boundary,
    Overflow,
    Special,
    Cancel,
    Tie,
    Massive,
}

/// How often a run reached each case; the integration test asserts each was.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FpAddCoverage {
    /// Operand pairs of each directed class (in the order of the module doc:
    /// near, walk, zeros, boundary, overflow, special, cancel, tie, massive).
    pub classes: [u64; 9],
    /// Fully random operand pairs.
    pub random: u64,
    /// Exponent differences `|ea - eb|` (effective exponents, 0..=max)
    /// not yet seen.
    pub exp_diffs_missing: usize,
    /// Subnormal results.
    pub subnormal_results: u64,
    /// Infinite results of finite operands (overflow).
    pub overflows: u64,
    /// NaN results.
    pub nan_results: u64,
    /// Zero results of nonzero operands (total cancellation).
    pub cancellations: u64,
    /// −0 results.
    pub negative_zeros: u64,
    /// Reset pulses.
    pub resets: u64,
}

#[derive(Clone)]
struct Ports {
    reset: Port,
    in_valid: Port,
    a: Port,
    b: Port,
    out_valid: Port,
    sum: Port,
}

/// The `fp_add` bench at one parameter point.
pub struct FpAddBench {
    params: FpAddParams,
    f: FpFormat,
    golden: FpAdd,
    fault: Option<FpAddFault>,
    ports: Option<Ports>,
    inputs: FpAddInputs,
    walk: u64,
    seen_diff: Vec<bool>,
    cov: FpAddCoverage,
}

impl FpAddBench {
    /// A bench whose RTL and golden model share `params`.
    pub fn new(params: FpAddParams) -> Result<Self> {
        Self::with_fault(params, None)
    }

    /// A bench whose golden model is wrong in the way `fault` says.
    pub fn with_fault(params: FpAddParams, fault: Option<FpAddFault>) -> Result<Self> {
        let f = params.format()?;
        let golden = FpAdd::new(&params)?;
        let max_exp = (1usize << f.exp_bits) - 2;
        Ok(FpAddBench {
            params,
            f,
            golden,
            fault,
            ports: None,
            inputs: FpAddInputs::default(),
            walk: 0,
            seen_diff: vec![false; max_exp],
            cov: FpAddCoverage::default(),
        })
    }

    /// Cases reached since the last [`Bench::reset`].
    pub fn coverage(&self) -> FpAddCoverage {
        let mut c = self.cov.clone();
        c.exp_diffs_missing = self.seen_diff.iter().filter(|s| !**s).count();
        c
    }

    fn sign_bit(&self) -> u64 {
        1 << (self.f.width - 1)
    }

    fn exp_max(&self) -> u64 {
        (1 << self.f.exp_bits) - 1
    }

    fn frac_mask(&self) -> u64 {
        (1 << self.f.frac_bits) - 1
    }

    /// `sign | exp | frac`.
    fn pack(&self, sign: bool, exp: u64, frac: u64) -> u64 {
        (if sign { self.sign_bit() } else { 0 })
            | (exp & self.exp_max()) << self.f.frac_bits
            | (frac & self.frac_mask())
    }

    fn exp_of(&self, x: u64) -> u64 {
        (x >> self.f.frac_bits) & self.exp_max()
    }

    fn is_nan(&self, x: u64) -> bool {
        self.exp_of(x) == self.exp_max() && x & self.frac_mask() != 0
    }

    fn is_inf(&self, x: u64) -> bool {
        self.exp_of(x) == self.exp_max() && x & self.frac_mask() == 0
    }

    fn finite(&self, exp: u64, rng: &mut Rng) -> u64 {
        self.pack(rng.chance(0.5), exp, rng.next_u64())
    }

    /// A random finite exponent (0 = subnormal) in `1..max` mostly.
    fn any_exp(&self, rng: &mut Rng) -> u64 {
        rng.below(self.exp_max())
    }

    fn draw(&mut self, rng: &mut Rng) -> (Class, u64, u64) {
        let emax = self.exp_max();
        let m = self.f.frac_bits as u64;
        match rng.below(16) {
            0..=3 => {
                let mask = self.f.mask();
                (Class::Random, rng.next_u64() & mask, rng.next_u64() & mask)
            }
            4..=5 => {
                let ea = self.any_exp(rng);
                let d = rng.below(m + 6);
                let eb = ea.saturating_sub(d);
                (Class::Near, self.finite(ea, rng), self.finite(eb, rng))
            }
            6 => {
                // Effective exponents: 0 and 1 are both 1, so walk d over
                // 0..=emax-2 with the smaller exponent from 1.
                let span = emax - 1;
                let d = self.walk % span;
                self.walk += 1;
                let lo = 1 + rng.below(span - d);
                let (mut a, mut b) = (self.finite(lo + d, rng), self.finite(lo, rng));
                if lo == 1 && rng.chance(0.5) {
                    b = self.finite(0, rng);
                }
                if rng.chance(0.5) {
                    std::mem::swap(&mut a, &mut b);
                }
                (Class::ExpWalk, a, b)
            }
            7 => {
                let z = self.pack(rng.chance(0.5), 0, 0);
                let other = match rng.below(4) {
                    0 => self.pack(rng.chance(0.5), 0, 0),
                    1 => self.finite(0, rng),
                    2 => z ^ self.sign_bit(),
                    _ => self.finite(self.any_exp(rng), rng),
                };
                let (a, b) = if rng.chance(0.5) {
                    (z, other)
                } else {
                    (other, z)
                };
                (Class::Zeros, a, b)
            }
            8 => {
                let fm = self.frac_mask();
                let table = [
                    self.pack(false, 0, fm),     // largest subnormal
                    self.pack(false, 0, fm - 1), // its neighbour
                    self.pack(false, 1, 0),      // smallest normal
                    self.pack(false, 1, 1),      // its neighbour
                    self.pack(false, 0, 1),      // smallest subnormal
                    self.pack(false, 2, 0),      // twice the smallest normal
                ];
                let s = self.sign_bit();
                let pick = |rng: &mut Rng| {
                    table[rng.below(table.len() as u64) as usize]
                        | if rng.chance(0.5) { s } else { 0 }
                };
                let a = pick(rng);
                let b = if rng.chance(0.5) {
                    pick(rng)
                } else {
                    self.finite(rng.below(3), rng)
                };
                (Class::Boundary, a, b)
            }
            9 => {
                let sign = rng.chance(0.5);
                let a = self.pack(sign, emax - 1 - rng.below(2), rng.next_u64());
                let b = self.pack(sign, emax - 1 - rng.below(2), rng.next_u64());
                (Class::Overflow, a, b)
            }
            10 => {
                let special = |rng: &mut Rng| match rng.below(3) {
                    0 => self.pack(rng.chance(0.5), emax, 0),
                    // Quiet or signaling NaN, random payload (never zero).
                    1 => self.pack(rng.chance(0.5), emax, rng.next_u64() | 1 << rng.below(m)),
                    _ => self.finite(self.any_exp(rng), rng),
                };
                let a = if rng.chance(0.5) {
                    self.pack(rng.chance(0.5), emax, 0)
                } else {
                    special(rng)
                };
                let b = special(rng);
                (Class::Special, a, b)
            }
            11 => {
                let a = self.finite(self.any_exp(rng), rng);
                let b = match rng.below(3) {
                    0 | 1 => a ^ self.sign_bit(),
                    // One ulp apart (the frac wraps into the exponent: still finite).
                    _ => (a ^ self.sign_bit()).wrapping_add(1) & self.f.mask(),
                };
                (Class::Cancel, a, b)
            }
            12..=13 => {
                // b's bits below a's last place are exactly one half of it.
                let ea = 1 + rng.below(emax - 1);
                let a = self.finite(ea, rng);
                let d = 1 + rng.below(m + 1).min(ea.saturating_sub(1));
                let eb = ea - d;
                let sig = if eb == 0 {
                    rng.next_u64() & self.frac_mask()
                } else {
                    rng.next_u64() & self.frac_mask() | 1 << m
                };
                // Low d bits of b's significand: 1 then zeros.
                let sig = (sig & !((1u64 << d) - 1)) | 1 << (d - 1);
                let b = (sig & self.frac_mask())
                    | if sig >> m & 1 == 1 || eb > 0 {
                        eb.max(1) << m
                    } else {
                        0
                    }
                    | if rng.chance(0.5) { self.sign_bit() } else { 0 };
                (Class::Tie, a, b)
            }
            _ if rng.chance(0.5) => {
                // Every cancellation depth: b is a's negation moved k ulps
                // toward zero (bit patterns of one sign are monotonic), k
                // with a random bit length 1..=m+2, so the exact difference
                // (Sterbenz) has its leading one at every position of the
                // normalising shift, across an exponent step too.
                let a = self.finite(1 + rng.below(emax - 1), rng);
                let mag = a & (self.sign_bit() - 1);
                let len = 1 + rng.below(m + 2);
                let k = (1u64 << (len - 1)) | rng.next_u64() & ((1u64 << (len - 1)) - 1);
                let b = mag.saturating_sub(k) | (!a & self.sign_bit());
                (Class::Massive, a, b)
            }
            _ => {
                let ea = self.any_exp(rng);
                let eb = ea.saturating_sub(rng.below(3));
                let a = self.pack(false, ea, rng.next_u64());
                let b = self.pack(true, eb, rng.next_u64());
                let (a, b) = if rng.chance(0.5) {
                    (a ^ self.sign_bit(), b ^ self.sign_bit())
                } else {
                    (a, b)
                };
                (Class::Massive, a, b)
            }
        }
    }

    /// Result-side coverage of one operand pair.
    fn tally(&mut self, a: u64, b: u64) {
        let s = self.golden.add(a, b);
        let finite_ops = !self.is_nan(a) && !self.is_nan(b) && !self.is_inf(a) && !self.is_inf(b);
        let zero_mag = |x: u64| x & (self.sign_bit() - 1) == 0;
        let subnormal = self.exp_of(s) == 0 && !zero_mag(s);
        let overflow = self.is_inf(s) && finite_ops;
        let nan = self.is_nan(s);
        let cancel = zero_mag(s) && !zero_mag(a) && !zero_mag(b);
        let neg_zero = s == self.sign_bit();
        let d = self.exp_of(a).max(1).abs_diff(self.exp_of(b).max(1)) as usize;
        let c = &mut self.cov;
        c.subnormal_results += subnormal as u64;
        c.overflows += overflow as u64;
        c.nan_results += nan as u64;
        c.cancellations += cancel as u64;
        c.negative_zeros += neg_zero as u64;
        if finite_ops && d < self.seen_diff.len() {
            self.seen_diff[d] = true;
        }
    }

    /// The golden model's `sum`, wrong if a fault is set.
    fn expected_sum(&self, s: u64) -> u64 {
        match self.fault {
            Some(FpAddFault::FlushSubnormals) if (s >> self.f.frac_bits) & self.exp_max() == 0 => {
                s & self.sign_bit()
            }
            Some(FpAddFault::NegativeNan) if self.is_nan(s) => s | self.sign_bit(),
            _ => s,
        }
    }
}

impl Bench for FpAddBench {
    fn block(&self) -> &str {
        "fp_add"
    }

    fn point(&self) -> String {
        point::to_text(&self.params)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_fp_add(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let w = self.params.width as u32;
        self.ports = Some(Ports {
            reset: sim.port_w("reset", 1)?,
            in_valid: sim.port_w("in_valid", 1)?,
            a: sim.port_w("a", w)?,
            b: sim.port_w("b", w)?,
            out_valid: sim.port_w("out_valid", 1)?,
            sum: sim.port_w("sum", w)?,
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.golden.reset();
        self.inputs = FpAddInputs::default();
        self.walk = 0;
        self.seen_diff.iter_mut().for_each(|s| *s = false);
        self.cov = FpAddCoverage::default();
    }

    #[inline]
    fn drive(&mut self, rng: &mut Rng, _cycle: u64) {
        let reset = rng.chance(1.0 / 5000.0);
        let in_valid = rng.chance(0.9);
        let (class, a, b) = self.draw(rng);
        match class {
            Class::Random => self.cov.random += 1,
            c => self.cov.classes[c as usize - 1] += 1,
        }
        self.cov.resets += reset as u64;
        self.tally(a, b);
        self.inputs = FpAddInputs {
            reset,
            in_valid,
            a,
            b,
        };
        let p = self.ports.as_ref().expect("bind before drive");
        p.reset.set(reset as u64);
        p.in_valid.set(in_valid as u64);
        p.a.set(a);
        p.b.set(b);
    }

    #[inline]
    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let o = self.golden.outputs();
        let p = self.ports.as_ref().expect("bind before check");
        cmp(cycle, "out_valid", o.out_valid as u64, p.out_valid.get()).or_else(|| {
            if o.out_valid {
                cmp(cycle, "sum", self.expected_sum(o.sum), p.sum.get())
            } else {
                None
            }
        })
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
        let b = point("width=32").unwrap();
        assert_eq!(b.point(), "width=32");
        assert_eq!(b.block(), "fp_add");
        assert_eq!(point("").unwrap().point(), "width=64");
        let e = point("widht=64").err().unwrap().to_string();
        assert!(e.contains("widht") && e.contains("width"), "{e}");
        let e = point("width=16").err().unwrap().to_string();
        assert!(e.contains("fp_add.width") && e.contains("16"), "{e}");
        for b in matrix() {
            assert_eq!(point(&b.point()).unwrap().point(), b.point());
        }
    }

    /// The tie class really builds ties: `b`'s bits below `a`'s last place
    /// are one half of it, so the exact sum lies midway (checked in f64
    /// for binary32, where the exact sum is representable).
    #[test]
    fn tie_class_draws_exact_ties() {
        let mut b = FpAddBench::new(FpAddParams { width: 32 }).unwrap();
        let mut rng = Rng::new(5);
        let mut ties = 0;
        for _ in 0..20_000 {
            let (c, x, y) = b.draw(&mut rng);
            if c != Class::Tie {
                continue;
            }
            let (xf, yf) = (f32::from_bits(x as u32), f32::from_bits(y as u32));
            let exact = xf as f64 + yf as f64;
            let r = (xf + yf) as f64;
            let other = if r.abs() < exact.abs() {
                f32::from_bits(((xf + yf).to_bits()) + 1) as f64
            } else {
                f32::from_bits(((xf + yf).to_bits()).wrapping_sub(1)) as f64
            };
            if (exact - r).abs() == (exact - other).abs() && exact != r {
                ties += 1;
            }
        }
        assert!(ties > 500, "only {ties} exact ties");
    }
}
