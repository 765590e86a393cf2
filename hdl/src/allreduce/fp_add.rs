//! `fp_add`: pipelined IEEE 754 binary32 / binary64 adder.
//!
//! Purpose: the floating-point `sum` of the allreduce reduction datapath
//! (`reduce_alu` has four binary32 and two binary64 instances, one per
//! lane of a 128-bit flit).
//!
//! Arithmetic: round to nearest, ties to even; ±0, ±Inf, NaN and
//! subnormals exact (no flush to zero); any NaN result is the canonical
//! quiet NaN of [`exanet_sim::allreduce::fp_add::canonical_nan`]. The
//! reference is Rust's native addition (golden model
//! `exanet_sim::allreduce::fp_add`), checked bit for bit by `exanet cosim
//! fp_add`.
//!
//! Ports (top module `exanet_fp_add_w<width>`):
//! - `clock`; `reset` (synchronous: clears the valid pipeline only)
//! - `in_valid`, `a[width]`, `b[width]`: operands
//! - `out_valid`, `sum[width]`: `a + b` of the operands presented
//!   [`FP_ADD_LATENCY`] cycles earlier; one result per cycle, no stall.
//!   `sum` is defined only while `out_valid`.
//!
//! Latency: 6 cycles ([`FP_ADD_LATENCY`], defined by the golden model and
//! checked against the template's stage count). Why six at 156.25 MHz
//! (6.4 ns; about 0.5–0.7 ns per LUT level plus routing on a -2 ZU9EG,
//! so at most ~5–6 LUT levels or one carry chain plus 2–3 levels per
//! stage), binary64 being the long case:
//! 1. unpack, 63-bit magnitude compare (carry chain), operand swap (1 LUT
//!    level), 11-bit exponent difference, special cases;
//! 2. alignment: 55-position right shift (3 levels of 4:1 muxes) and the
//!    sticky OR of the bits shifted out (2–3 levels);
//! 3. 57-bit add/subtract (one carry chain, 8 CARRY8);
//! 4. leading-zero count of 57 bits (priority encoder, ~4 levels) and the
//!    shift clamp at the smallest normal exponent (a 11-bit compare);
//! 5. normalizing left shift (3 levels), exponent adjust, guard/sticky and
//!    the round-to-even decision;
//! 6. round increment (a 63-bit carry chain into the exponent, which also
//!    turns the largest finite number into Inf) and the special/zero/
//!    overflow result select.
//!
//! Merging stages 3 and 4 (carry chain then priority encoder) or 2 and 3
//! (shift then carry chain) would put ~8–9 levels in one cycle, too many
//! for 6.4 ns without placement effort; binary32 uses the same six stages
//! so both formats have one latency in `reduce_alu`.
//!
//! DSP slices: none. Every adder is a fabric carry chain (at most 63 bits),
//! the shifters are muxes; a DSP48E2's 48-bit adder would need two slices
//! per 57-bit add and add its own pipeline registers.
//!
//! Structure: one generated module (rust-hdl `Verilog::Custom`) rendered
//! from the askama template `hdl/templates/allreduce/fp_add.v`, with every
//! width and the canonical NaN taken from the golden model's
//! [`FpFormat`]. Why not rust-hdl `update` code: the datapath is six
//! register stages of width-generic arithmetic (variable shifts with
//! sticky, a leading-zero count, slices at format-dependent offsets);
//! rust-hdl cannot index with expressions of its const generic (TOOLING.md)
//! and puts a module's logic in one `always @(*)`, so the same logic as
//! readable Verilog is shorter and lints clean by construction. `update`
//! runs the golden model for rust-hdl's own simulator; Verilator is the
//! source of truth.
//!
//! Parameters ([`FpAddParams`]):
//! - `width`: 32 (binary32) or 64 (binary64).

use crate::emit::{emit, Emitted};
use anyhow::{bail, ensure, Context, Result};
use askama::Template;
pub use exanet_sim::allreduce::fp_add::FpAddParams;
use exanet_sim::allreduce::fp_add::{
    FpAdd as GoldenFpAdd, FpAddInputs, FpFormat, FP_ADD_LATENCY, FP_ADD_WIDTHS,
};
use rust_hdl::prelude::*;

/// Register stages of `templates/allreduce/fp_add.v` (`s1_` … `s5_`, `s6_sum`).
pub const TEMPLATE_STAGES: usize = 6;

/// The clock the six stages are laid out for (the module doc's logic-level
/// budget: 6.4 ns). Generation notes a faster `clock.pl_mhz`.
pub const FP_ADD_TARGET_MHZ: f64 = 156.25;

/// A note for a config whose `clock.pl_mhz` is above [`FP_ADD_TARGET_MHZ`]:
/// the pipeline was not laid out for it (timing to be checked in Vivado).
pub fn clock_note(pl_mhz: f64) -> Option<String> {
    (pl_mhz > FP_ADD_TARGET_MHZ).then(|| {
        format!(
            "clock.pl_mhz = {pl_mhz}: the {TEMPLATE_STAGES}-stage floating-point adder is laid out \
             for {FP_ADD_TARGET_MHZ} MHz ({:.2} ns per stage); check its timing in Vivado",
            1000.0 / FP_ADD_TARGET_MHZ
        )
    })
}

/// `templates/allreduce/fp_add.v`.
#[derive(Template)]
#[template(path = "allreduce/fp_add.v")]
struct FpAddVerilog {
    /// Operand bits.
    w: usize,
    /// Exponent field bits.
    e: usize,
    /// Fraction field bits.
    m: usize,
    /// Significand bits with the hidden bit (`m + 1`).
    p: usize,
    /// Aligned significand bits before the sticky bit (`p + 2`: guard, round).
    t: usize,
    /// Add/subtract width (`p + 4`: carry, significand, guard, round, sticky).
    n: usize,
    /// Bits of the alignment shift amount (holds `t`).
    sw: usize,
    /// Bits of the leading-zero count (holds `n`).
    lzw: usize,
    /// `{e}'h…`: the all-ones exponent (Inf/NaN).
    e_ones: String,
    /// `{w}'h…`: the canonical quiet NaN.
    nan: String,
    /// Zero padding of the leading-zero count to the exponent's width.
    pad_lz: String,
    /// Zero padding of the shift amount to the exponent's width.
    pad_sh: String,
    /// Pipeline depth (the golden model's).
    latency: usize,
}

/// Bits needed to hold the value `v`.
fn bits_for(v: usize) -> usize {
    (usize::BITS - v.leading_zeros()) as usize
}

impl FpAddVerilog {
    fn new(f: &FpFormat) -> Result<Self> {
        ensure!(
            FP_ADD_LATENCY == TEMPLATE_STAGES,
            "fp_add: the golden model's FP_ADD_LATENCY = {FP_ADD_LATENCY} but the template \
             has {TEMPLATE_STAGES} register stages"
        );
        let (w, e, m) = (f.width, f.exp_bits, f.frac_bits);
        ensure!(
            1 + e + m == w,
            "fp_add: format of {w} bits has {e} + {m} + 1 field bits"
        );
        let p = m + 1;
        let t = p + 2;
        let n = p + 4;
        let (sw, lzw) = (bits_for(t), bits_for(n));
        ensure!(
            lzw < e && t < (1 << e) - 1,
            "fp_add: {w}-bit format too narrow in exponent for its significand"
        );
        let pad = format!("{}'d0, ", e - lzw);
        Ok(FpAddVerilog {
            w,
            e,
            m,
            p,
            t,
            n,
            sw,
            lzw,
            e_ones: format!("{e}'h{:X}", (1u64 << e) - 1),
            nan: format!("{w}'h{:X}", f.canonical_nan()),
            pad_lz: pad.clone(),
            pad_sh: pad,
            latency: FP_ADD_LATENCY,
        })
    }
}

/// The Verilog body of the adder for format `f`.
pub fn fp_add_body(f: &FpFormat) -> Result<String> {
    FpAddVerilog::new(f)?
        .render()
        .context("rendering the template templates/allreduce/fp_add.v")
}

/// The adder for `W`-bit operands (32 or 64).
#[derive(LogicBlock)]
pub struct FpAdd<const W: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset of the valid pipeline.
    pub reset: Signal<In, bool>,
    /// `a`, `b` hold operands.
    pub in_valid: Signal<In, bool>,
    /// Operand.
    pub a: Signal<In, Bits<W>>,
    /// Operand.
    pub b: Signal<In, Bits<W>>,
    /// `sum` is the result of operands presented `FP_ADD_LATENCY` cycles ago.
    pub out_valid: Signal<Out, bool>,
    /// `a + b`.
    pub sum: Signal<Out, Bits<W>>,
    _body: String,
    // rust-hdl simulation: the golden model and the inputs of this cycle.
    _model: GoldenFpAdd,
    _inputs: FpAddInputs,
}

impl<const W: usize> FpAdd<W> {
    /// The adder; `W` must be 32 or 64.
    pub fn new() -> Result<Self> {
        let p = FpAddParams { width: W };
        let f = p.format()?;
        Ok(FpAdd {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            a: Default::default(),
            b: Default::default(),
            out_valid: Default::default(),
            sum: Default::default(),
            _body: fp_add_body(&f)?,
            _model: GoldenFpAdd::new(&p)?,
            _inputs: FpAddInputs::default(),
        })
    }
}

impl<const W: usize> Logic for FpAdd<W> {
    fn update(&mut self) {
        // `pos_edge` is true in one settle iteration, before this cycle's
        // inputs change: the model takes last cycle's inputs.
        if self.clock.pos_edge() {
            self._model.tick(&self._inputs);
        }
        self._inputs = FpAddInputs {
            reset: self.reset.val(),
            in_valid: self.in_valid.val(),
            a: self.a.val().to_u64(),
            b: self.b.val().to_u64(),
        };
        let o = self._model.outputs();
        self.out_valid.next = o.out_valid;
        self.sum.next = o.sum.to_bits();
    }

    fn connect(&mut self) {
        self.out_valid.connect();
        self.sum.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(self._body.clone())
    }
}

/// Top module name of a parameter point.
pub fn fp_add_top_name(p: &FpAddParams) -> String {
    format!("exanet_fp_add_w{}", p.width)
}

/// Validate `p` and emit its adder as Verilog.
pub fn emit_fp_add(p: &FpAddParams) -> Result<Emitted> {
    p.validate()?;
    match p.width {
        32 => emit(&mut FpAdd::<32>::new()?, &fp_add_top_name(p)),
        64 => emit(&mut FpAdd::<64>::new()?, &fp_add_top_name(p)),
        w => bail!("fp_add.width = {w}: not supported; supported widths: {FP_ADD_WIDTHS:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;
    use exanet_sim::allreduce::fp_add::{BINARY32, BINARY64};

    #[test]
    fn emits_lint_clean_verilog_for_both_formats() {
        for width in FP_ADD_WIDTHS {
            let p = FpAddParams { width };
            let e = emit_fp_add(&p).unwrap();
            assert_eq!(e.top, format!("exanet_fp_add_w{width}"));
            let top = &e.modules.last().unwrap().1;
            for port in ["clock", "reset", "in_valid", "a", "b", "out_valid", "sum"] {
                assert!(top.contains(&format!(" {port};")), "{} lacks {port}", e.top);
            }
            assert!(top.contains(&format!("[{}:0] sum;", width - 1)));
            assert!(!e.text().contains('$'));
            assert_lint_clean(&e);
        }
    }

    /// The widths and constants in the Verilog come from the golden
    /// model's formats: the canonical NaN, the exponent's all-ones value
    /// and the fraction field's position.
    #[test]
    fn verilog_takes_its_layout_from_the_golden_formats() {
        let v32 = fp_add_body(&BINARY32).unwrap();
        assert!(v32.contains("32'h7FC00000"), "{v32}");
        assert!(v32.contains("a_exp = a[30:23]"));
        assert!(v32.contains("8'hFF"));
        let v64 = fp_add_body(&BINARY64).unwrap();
        assert!(v64.contains("64'h7FF8000000000000"));
        assert!(v64.contains("a_exp = a[62:52]"));
        assert!(v64.contains("11'h7FF"));
        assert!(v64.contains(&format!("reg  [{}:0] vld;", FP_ADD_LATENCY - 1)));
        // One clocked block per stage: the template really has the
        // golden model's latency in register stages.
        for v in [&v32, &v64] {
            assert_eq!(v.matches("always @(posedge clock)").count(), FP_ADD_LATENCY);
        }
        let bad = FpFormat {
            width: 32,
            exp_bits: 8,
            frac_bits: 22,
        };
        assert!(fp_add_body(&bad).is_err());
    }

    #[test]
    fn a_clock_above_the_target_is_noted() {
        assert_eq!(clock_note(156.25), None);
        assert_eq!(clock_note(100.0), None);
        let n = clock_note(250.0).unwrap();
        assert!(
            n.contains("clock.pl_mhz = 250") && n.contains("156.25"),
            "{n}"
        );
    }

    #[test]
    fn unsupported_width_names_key_and_value() {
        let e = emit_fp_add(&FpAddParams { width: 16 })
            .unwrap_err()
            .to_string();
        assert!(e.contains("fp_add.width") && e.contains("16"), "{e}");
    }
}
