//! `reduce_alu`: the allreduce engine's combining step, lane-wise over one
//! flit per cycle.
//!
//! Purpose: combines a received fragment's flit with the local flit:
//! sum / min / max / band / bor / bxor on i32, u32, i64, u64 and sum / min
//! / max on f32, f64, `width / 32` or `width / 64` lanes (4 or 2 on a
//! 128-bit flit). Integer sum wraps; float sum is `fp_add` (round to
//! nearest even, subnormals kept); float min/max are IEEE 754-2019
//! `minimum`/`maximum` (NaN propagates, −0 < +0); every NaN result is the
//! canonical quiet NaN. Codes and semantics: golden model
//! `exanet_sim::allreduce::reduce_alu`; illegal codes (undefined, or a
//! bitwise op on a float type) give `y = 0` with `bad` set.
//!
//! Ports (top module `exanet_reduce_alu_w<width>`):
//! - `clock`; `reset` (synchronous: clears the valid pipeline only)
//! - `in_valid`, `op[3]`, `dtype[3]`, `a[width]`, `b[width]`: a flit pair
//! - `out_valid`, `y[width]`, `bad`: the result of the pair presented
//!   [`REDUCE_ALU_LATENCY`] cycles earlier; one flit per cycle, no stall.
//!
//! Latency: 6 cycles for every operation ([`REDUCE_ALU_LATENCY`] = the
//! `fp_add` latency): the float sum goes through the adders' six stages;
//! everything else is computed in the first cycle (a 64-bit add, or a
//! 64-bit key compare and a 2:1 mux — one carry chain plus ~3 LUT levels,
//! comfortably inside 6.4 ns at 156.25 MHz) and delayed five more cycles
//! (`width + 3` bits per stage, mapped to SRL shift registers) so results
//! stay in order whatever the mix of operations.
//!
//! Structure: `width / 32` binary32 and `width / 64` binary64 `fp_add`
//! children (rust-hdl blocks, fed every flit), and one generated module
//! body rendered from `hdl/templates/allreduce/reduce_alu.v` with every op
//! and dtype code ([`ReduceOp`], [`ReduceDtype`]) and every float field
//! position and NaN taken from the golden model; `codes_come_only_from_fields`
//! checks that no code is written as a literal. Min/max use one unsigned
//! compare per lane of an order key (unsigned: the value; signed: sign bit
//! flipped; float: negatives inverted), so one comparator serves all
//! types of its lane width.
//!
//! DSP slices: none. The widest adds (64-bit integer sums, the adders'
//! 57/63-bit carry chains) are fabric carry chains; DSP48E2 slices (48-bit
//! adders, 27×18 multipliers) would fit no operation here without
//! splitting it, and no operation multiplies.
//!
//! Parameters ([`ReduceAluParams`]):
//! - `width`: flit width in bits; 64, 128 or 256.

use super::fp_add::FpAdd;
use crate::emit::{emit, Emitted};
use anyhow::{bail, Context, Result};
use askama::Template;
use exanet_sim::allreduce::fp_add::{FpFormat, BINARY32, BINARY64};
pub use exanet_sim::allreduce::reduce_alu::ReduceAluParams;
use exanet_sim::allreduce::reduce_alu::{
    ReduceAlu as GoldenReduceAlu, ReduceAluInputs, ReduceDtype, ReduceOp, REDUCE_ALU_LATENCY,
    REDUCE_ALU_WIDTHS, REDUCE_DTYPE_BITS, REDUCE_OP_BITS,
};
use rust_hdl::prelude::*;

/// The op and dtype codes as Verilog literals, from the golden model.
/// *Marked* codes render as `«name»` (the drift test looks for them).
struct Codes {
    sum: String,
    min: String,
    max: String,
    band: String,
    bor: String,
    bxor: String,
    i32: String,
    u32: String,
    i64: String,
    u64: String,
    f32: String,
    f64: String,
}

impl Codes {
    fn new(marked: bool) -> Codes {
        let op = |o: ReduceOp| {
            if marked {
                format!("«{}»", o.name())
            } else {
                format!("{REDUCE_OP_BITS}'d{}", o.code())
            }
        };
        let dt = |d: ReduceDtype| {
            if marked {
                format!("«{}»", d.name())
            } else {
                format!("{REDUCE_DTYPE_BITS}'d{}", d.code())
            }
        };
        Codes {
            sum: op(ReduceOp::Sum),
            min: op(ReduceOp::Min),
            max: op(ReduceOp::Max),
            band: op(ReduceOp::Band),
            bor: op(ReduceOp::Bor),
            bxor: op(ReduceOp::Bxor),
            i32: dt(ReduceDtype::I32),
            u32: dt(ReduceDtype::U32),
            i64: dt(ReduceDtype::I64),
            u64: dt(ReduceDtype::U64),
            f32: dt(ReduceDtype::F32),
            f64: dt(ReduceDtype::F64),
        }
    }
}

/// Field positions and constants of a float format, for the template.
struct FormatKeys {
    exp_hi: usize,
    exp_lo: usize,
    frac_hi: usize,
    e_ones: String,
    frac_zero: String,
    nan: String,
}

impl FormatKeys {
    fn new(f: &FpFormat) -> FormatKeys {
        FormatKeys {
            exp_hi: f.width - 2,
            exp_lo: f.frac_bits,
            frac_hi: f.frac_bits - 1,
            e_ones: format!("{}'h{:X}", f.exp_bits, (1u64 << f.exp_bits) - 1),
            frac_zero: format!("{}'d0", f.frac_bits),
            nan: format!("{}'h{:X}", f.width, f.canonical_nan()),
        }
    }
}

/// One lane of the template.
struct Lane {
    /// Lane index within its width.
    i: usize,
    /// Lane bits (32 or 64).
    bits: usize,
    /// Signal prefix (`l32_0`).
    n: String,
    /// Adder child (`add32$0`).
    add: String,
    hi: usize,
    lo: usize,
    /// The lane's unsigned type is selected (`is_u32`).
    is_u: &'static str,
    /// The lane's float type is selected (`is_f32`).
    is_f: &'static str,
    f: FormatKeys,
}

/// `templates/allreduce/reduce_alu.v`.
#[derive(Template)]
#[template(path = "allreduce/reduce_alu.v")]
struct ReduceAluVerilog {
    c: Codes,
    w: usize,
    lanes: Vec<Lane>,
    /// `l64_1_r, l64_0_r` (most significant lane first).
    r64: String,
    r32: String,
    /// The adders' sums, most significant lane first.
    s64: String,
    s32: String,
    /// AND of the adders' `out_valid`.
    valids: String,
    latency: usize,
}

/// The Verilog body of the ALU for `width`-bit flits (codes marked for the
/// drift test when `marked`).
fn reduce_alu_body(width: usize, marked: bool) -> Result<String> {
    let mut lanes = Vec::new();
    for bits in [32, 64] {
        for i in 0..width / bits {
            lanes.push(Lane {
                i,
                bits,
                n: format!("l{bits}_{i}"),
                add: format!("add{bits}${i}"),
                hi: bits * i + bits - 1,
                lo: bits * i,
                is_u: if bits == 32 { "is_u32" } else { "is_u64" },
                is_f: if bits == 32 { "is_f32" } else { "is_f64" },
                f: FormatKeys::new(if bits == 32 { &BINARY32 } else { &BINARY64 }),
            });
        }
    }
    let list = |bits: usize, f: &dyn Fn(&Lane) -> String| {
        lanes
            .iter()
            .rev()
            .filter(|l| l.bits == bits)
            .map(f)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let t = ReduceAluVerilog {
        c: Codes::new(marked),
        w: width,
        r64: list(64, &|l| format!("{}_r", l.n)),
        r32: list(32, &|l| format!("{}_r", l.n)),
        s64: list(64, &|l| format!("{}$sum", l.add)),
        s32: list(32, &|l| format!("{}$sum", l.add)),
        valids: lanes
            .iter()
            .map(|l| format!("{}$out_valid", l.add))
            .collect::<Vec<_>>()
            .join(" && "),
        lanes,
        latency: REDUCE_ALU_LATENCY,
    };
    t.render()
        .context("rendering the template templates/allreduce/reduce_alu.v")
}

/// The ALU for `W`-bit flits.
#[derive(LogicBlock)]
pub struct ReduceAlu<const W: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset of the valid pipeline.
    pub reset: Signal<In, bool>,
    /// `op`, `dtype`, `a`, `b` hold a flit pair.
    pub in_valid: Signal<In, bool>,
    /// Operation code (`ReduceOp`).
    pub op: Signal<In, Bits<3>>,
    /// Type code (`ReduceDtype`).
    pub dtype: Signal<In, Bits<3>>,
    /// Flit.
    pub a: Signal<In, Bits<W>>,
    /// Flit.
    pub b: Signal<In, Bits<W>>,
    /// `y`, `bad` belong to the pair presented `REDUCE_ALU_LATENCY` cycles ago.
    pub out_valid: Signal<Out, bool>,
    /// Lane-wise result.
    pub y: Signal<Out, Bits<W>>,
    /// The codes were illegal (`y` is zero).
    pub bad: Signal<Out, bool>,
    add32: Vec<FpAdd<32>>,
    add64: Vec<FpAdd<64>>,
    _body: String,
    // rust-hdl simulation: the golden model and the inputs of this cycle.
    _model: GoldenReduceAlu,
    _inputs: ReduceAluInputs,
}

impl<const W: usize> ReduceAlu<W> {
    /// The ALU; `W` must be one of [`REDUCE_ALU_WIDTHS`].
    pub fn new() -> Result<Self> {
        let p = ReduceAluParams { width: W };
        p.validate()?;
        if REDUCE_OP_BITS != 3 || REDUCE_DTYPE_BITS != 3 {
            bail!(
                "reduce_alu: the golden codes are {REDUCE_OP_BITS}/{REDUCE_DTYPE_BITS} bits, \
                 the ports 3/3"
            );
        }
        Ok(ReduceAlu {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            op: Default::default(),
            dtype: Default::default(),
            a: Default::default(),
            b: Default::default(),
            out_valid: Default::default(),
            y: Default::default(),
            bad: Default::default(),
            add32: (0..W / 32).map(|_| FpAdd::new()).collect::<Result<_>>()?,
            add64: (0..W / 64).map(|_| FpAdd::new()).collect::<Result<_>>()?,
            _body: reduce_alu_body(W, false)?,
            _model: GoldenReduceAlu::new(&p)?,
            _inputs: ReduceAluInputs::default(),
        })
    }
}

impl<const W: usize> Logic for ReduceAlu<W> {
    fn update(&mut self) {
        // `pos_edge` is true in one settle iteration, before this cycle's
        // inputs change: the model takes last cycle's inputs.
        if self.clock.pos_edge() {
            self._model.tick(&self._inputs);
        }
        let mut a = [0u64; 4];
        let mut b = [0u64; 4];
        for k in 0..W / 64 {
            a[k] = self.a.val().get_bits::<64>(64 * k).to_u64();
            b[k] = self.b.val().get_bits::<64>(64 * k).to_u64();
        }
        self._inputs = ReduceAluInputs {
            reset: self.reset.val(),
            in_valid: self.in_valid.val(),
            op: self.op.val().to_u64(),
            dtype: self.dtype.val().to_u64(),
            a,
            b,
        };
        let o = self._model.outputs();
        let mut y = Bits::<W>::default();
        for (k, w) in o.y.iter().enumerate().take(W / 64) {
            for i in 0..64 {
                y = y.replace_bit(64 * k + i, w >> i & 1 == 1);
            }
        }
        self.out_valid.next = o.out_valid;
        self.y.next = y;
        self.bad.next = o.bad;
    }

    fn connect(&mut self) {
        self.out_valid.connect();
        self.y.connect();
        self.bad.connect();
        for c in self.add32.iter_mut() {
            connect_adder(&mut c.clock, &mut c.reset, &mut c.in_valid);
            c.a.connect();
            c.b.connect();
        }
        for c in self.add64.iter_mut() {
            connect_adder(&mut c.clock, &mut c.reset, &mut c.in_valid);
            c.a.connect();
            c.b.connect();
        }
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(self._body.clone())
    }
}

/// Connect an adder child's control inputs (driven by the body).
fn connect_adder(
    clock: &mut Signal<In, Clock>,
    reset: &mut Signal<In, bool>,
    in_valid: &mut Signal<In, bool>,
) {
    clock.connect();
    reset.connect();
    in_valid.connect();
}

/// Top module name of a parameter point.
pub fn reduce_alu_top_name(p: &ReduceAluParams) -> String {
    format!("exanet_reduce_alu_w{}", p.width)
}

/// Validate `p` and emit its ALU as Verilog.
pub fn emit_reduce_alu(p: &ReduceAluParams) -> Result<Emitted> {
    p.validate()?;
    let top = reduce_alu_top_name(p);
    match p.width {
        64 => emit(&mut ReduceAlu::<64>::new()?, &top),
        128 => emit(&mut ReduceAlu::<128>::new()?, &top),
        256 => emit(&mut ReduceAlu::<256>::new()?, &top),
        w => {
            bail!("reduce_alu.width = {w}: not supported; supported widths: {REDUCE_ALU_WIDTHS:?}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    #[test]
    fn emits_lint_clean_verilog_for_every_width() {
        for width in REDUCE_ALU_WIDTHS {
            let p = ReduceAluParams { width };
            let e = emit_reduce_alu(&p).unwrap();
            assert_eq!(e.top, format!("exanet_reduce_alu_w{width}"));
            let top = &e.modules.last().unwrap().1;
            for port in [
                "clock",
                "reset",
                "in_valid",
                "op",
                "dtype",
                "a",
                "b",
                "out_valid",
                "y",
                "bad",
            ] {
                assert!(top.contains(&format!(" {port};")), "{} lacks {port}", e.top);
            }
            assert!(top.contains(&format!("[{}:0] y;", width - 1)));
            // One adder per lane of each float width.
            let adders = e.modules.iter().filter(|(n, _)| n.contains("_add")).count();
            assert_eq!(
                adders,
                width / 32 + width / 64,
                "{:?}",
                e.modules.iter().map(|m| &m.0).collect::<Vec<_>>()
            );
            assert!(!e.text().contains('$'));
            assert_lint_clean(&e);
        }
    }

    /// Every op and dtype code reaches the Verilog from the golden model's
    /// definitions: rendered with marked codes, each mark appears and no
    /// comparison of `op` or `dtype` with a literal is left.
    #[test]
    fn codes_come_only_from_fields() {
        let v = reduce_alu_body(128, true).unwrap();
        for o in ReduceOp::ALL {
            assert!(v.contains(&format!("op == «{}»", o.name())), "{}", o.name());
        }
        for d in ReduceDtype::ALL {
            assert!(
                v.contains(&format!("dtype == «{}»", d.name())),
                "{}",
                d.name()
            );
        }
        let literal = |s: &str| {
            v.match_indices(s)
                .any(|(i, _)| v[i + s.len()..].starts_with(|c: char| c.is_ascii_digit()))
        };
        assert!(!literal("op == ") && !literal("dtype == "), "{v}");
        // The float fields too: exponent slices and NaNs from the formats.
        let plain = reduce_alu_body(128, false).unwrap();
        assert!(plain.contains("l32_3_a[30:23] == 8'hFF"), "{plain}");
        assert!(plain.contains("l64_1_a[62:52] == 11'h7FF"));
        assert!(plain.contains("32'h7FC00000") && plain.contains("64'h7FF8000000000000"));
        assert!(plain.contains("op == 3'd5") && plain.contains("dtype == 3'd4"));
    }

    #[test]
    fn unsupported_width_names_key_and_value() {
        let e = emit_reduce_alu(&ReduceAluParams { width: 32 })
            .unwrap_err()
            .to_string();
        assert!(e.contains("reduce_alu.width") && e.contains("32"), "{e}");
    }
}
