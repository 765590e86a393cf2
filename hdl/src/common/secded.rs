//! `secded`: extended Hamming SECDED encoder and decoder.
//!
//! Purpose: protects the 112 routed bits of every header (and is reusable
//! for other words: 32 and 64 bits are supported too). The code is defined
//! in `exanet_sim::common::secded` (positional Hamming, shortened, plus an
//! overall parity bit: `r + 1` check bits, 7 for 32 data bits, 8 for 64
//! and 112).
//!
//! Blocks:
//! - [`SecdedEncoder`] (combinational): `data[D]` → `check[C]`, one XOR tree
//!   per check bit.
//! - [`SecdedDecoder`] (combinational): `data[D]`, `check[C]` →
//!   `corrected[D]`, `single_err` (one bit was flipped; a flipped data bit
//!   is corrected), `double_err` (uncorrectable: two flipped bits, or an odd
//!   count whose syndrome names no position). Not `single`/`double`:
//!   `double` is a C++ keyword, which Verilator's lint rejects.
//!   Structure: `syn = E·data ⊕ check` (the encoder's matrix); the received overall parity is `^syn`; data
//!   bit `i` is flipped when `syn` equals its pattern (position `pos_i`,
//!   top bit `1 ⊕ parity(pos_i)`), a one-hot decode of `D` comparators.
//!   Depth: the XOR trees, one (r+1)-bit compare, the correcting XOR.
//! - [`Secded`], the co-simulation top: both side by side, outputs
//!   registered.
//!
//! Ports of the top (`exanet_secded_d<data_bits>`):
//! - `clock`
//! - `enc_data[D]` → `enc_check[C]`
//! - `dec_data[D]`, `dec_check[C]` → `corrected[D]`, `single_err`, `double_err`
//!
//! Latency of the top: 1 cycle (every output registered; power-on value 0).
//! The encoder and decoder blocks themselves are combinational (0 cycles).
//! No reset: the top holds no control state, only a pipeline register.
//!
//! Parameters ([`SecdedParams`]):
//! - `data_bits`: protected bits; supported 32, 64, 112.

use super::crc32::XorMatrix;
use crate::emit::{emit, Emitted};
use anyhow::{bail, Result};
use exanet_sim::common::secded::SecdedCode;
pub use exanet_sim::common::secded::SecdedParams;
use rust_hdl::prelude::*;
use std::fmt::Write as _;

/// Data widths with a compiled instance.
pub const SUPPORTED_DATA_BITS: &[usize] = &[32, 64, 112];

/// A one-hot decoder computed at elaboration: output `o` is 1 when the
/// input equals `patterns[o]`. The Verilog is a generated leaf of `O`
/// comparators (`y[o] = (x == 8'h93);`).
#[derive(LogicBlock)]
pub struct MatchDecoder<const I: usize, const O: usize> {
    /// Input.
    pub x: Signal<In, Bits<I>>,
    /// `y[o] = (x == patterns[o])`.
    pub y: Signal<Out, Bits<O>>,
    _patterns: Vec<u128>,
}

impl<const I: usize, const O: usize> MatchDecoder<I, O> {
    /// A decoder from its patterns (one per output; each must fit in `I` bits).
    pub fn new(patterns: Vec<u128>) -> Result<Self> {
        if patterns.len() != O || I > 128 {
            bail!("MatchDecoder<{I}, {O}>: {} patterns", patterns.len());
        }
        if let Some(p) = patterns.iter().find(|&&p| I < 128 && p >> I != 0) {
            bail!("MatchDecoder<{I}, {O}>: pattern 0x{p:x} does not fit in {I} bits");
        }
        Ok(MatchDecoder {
            x: Default::default(),
            y: Default::default(),
            _patterns: patterns,
        })
    }
}

impl<const I: usize, const O: usize> Logic for MatchDecoder<I, O> {
    fn update(&mut self) {
        let x = self.x.val().to_u128();
        let mut y = Bits::<O>::default();
        for (o, &p) in self._patterns.iter().enumerate() {
            y = y.replace_bit(o, x == p);
        }
        self.y.next = y;
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    fn hdl(&self) -> Verilog {
        let mut s = String::from(
            "// One-hot decoder generated at elaboration: one comparator per output bit.\n\
             always @(*) begin\n",
        );
        for (o, p) in self._patterns.iter().enumerate() {
            let _ = writeln!(s, "    y[{o}] = (x == {I}'h{p:x});");
        }
        s.push_str("end\n");
        Verilog::Custom(s)
    }
}

/// The encoder matrix of `code` (check bit `j` = row `j`).
fn encoder_matrix<const D: usize, const C: usize>(code: &SecdedCode) -> Result<XorMatrix<D, C>> {
    XorMatrix::from_columns(|i, _| code.encode(1u128 << i) as u128)
}

fn code_for<const D: usize, const C: usize>() -> Result<SecdedCode> {
    let code = SecdedCode::new(&SecdedParams { data_bits: D })?;
    if code.check_bits() != C {
        bail!(
            "secded for {D} data bits needs {} check bits, not {C}",
            code.check_bits()
        );
    }
    Ok(code)
}

/// Combinational SECDED encoder: `check = E·data`.
#[derive(LogicBlock)]
pub struct SecdedEncoder<const D: usize, const C: usize> {
    /// Data to protect.
    pub data: Signal<In, Bits<D>>,
    /// Its check bits.
    pub check: Signal<Out, Bits<C>>,
    matrix: XorMatrix<D, C>,
}

impl<const D: usize, const C: usize> SecdedEncoder<D, C> {
    /// The encoder for `D` data bits (`C` must be its check-bit count).
    pub fn new() -> Result<Self> {
        Ok(SecdedEncoder {
            data: Default::default(),
            check: Default::default(),
            matrix: encoder_matrix(&code_for::<D, C>()?)?,
        })
    }
}

impl<const D: usize, const C: usize> Logic for SecdedEncoder<D, C> {
    #[hdl_gen]
    fn update(&mut self) {
        self.matrix.x.next = self.data.val();
        self.check.next = self.matrix.y.val();
    }
}

/// Combinational SECDED decoder.
#[derive(LogicBlock)]
pub struct SecdedDecoder<const D: usize, const C: usize> {
    /// Received data.
    pub data: Signal<In, Bits<D>>,
    /// Received check bits.
    pub check: Signal<In, Bits<C>>,
    /// Data with a single error corrected (as received otherwise).
    pub corrected: Signal<Out, Bits<D>>,
    /// A single error was found (and corrected if in the data).
    pub single_err: Signal<Out, bool>,
    /// An uncorrectable error was found.
    pub double_err: Signal<Out, bool>,
    matrix: XorMatrix<D, C>,
    flip: MatchDecoder<C, D>,
    syn: Signal<Local, Bits<C>>,
    hamming: Signal<Local, Bits<C>>,
    odd: Signal<Local, bool>,
    named: Signal<Local, bool>,
    // Typed constants: untyped literals become 32-bit and trip WIDTH lint.
    hamming_mask: Constant<Bits<C>>,
    last_position: Constant<Bits<C>>,
    zero: Constant<Bits<C>>,
}

impl<const D: usize, const C: usize> SecdedDecoder<D, C> {
    /// The decoder for `D` data bits (`C` must be its check-bit count).
    pub fn new() -> Result<Self> {
        let code = code_for::<D, C>()?;
        let r = code.hamming_bits();
        let patterns = (0..D)
            .map(|i| {
                let pos = code.position(i) as u128;
                ((1 ^ (pos.count_ones() as u128 & 1)) << r) | pos
            })
            .collect();
        Ok(SecdedDecoder {
            data: Default::default(),
            check: Default::default(),
            corrected: Default::default(),
            single_err: Default::default(),
            double_err: Default::default(),
            matrix: encoder_matrix(&code)?,
            flip: MatchDecoder::new(patterns)?,
            syn: Default::default(),
            hamming: Default::default(),
            odd: Default::default(),
            named: Default::default(),
            hamming_mask: Constant::new(bits((1u64 << r) - 1)),
            last_position: Constant::new(bits(code.last_position() as u64)),
            zero: Constant::new(bits(0)),
        })
    }
}

impl<const D: usize, const C: usize> Logic for SecdedDecoder<D, C> {
    #[hdl_gen]
    fn update(&mut self) {
        self.matrix.x.next = self.data.val();
        self.syn.next = self.matrix.y.val() ^ self.check.val();
        // Parity of every received bit; the Hamming syndrome; does it name
        // a position of the (shortened) code?
        self.odd.next = self.syn.val().xor();
        self.hamming.next = self.syn.val() & self.hamming_mask.val();
        self.named.next = self.hamming.val() <= self.last_position.val();
        self.flip.x.next = self.syn.val();
        self.corrected.next = self.data.val() ^ self.flip.y.val();
        self.single_err.next = self.odd.val() & self.named.val();
        self.double_err.next = (!self.odd.val() & (self.hamming.val() != self.zero.val()))
            | (self.odd.val() & !self.named.val());
    }
}

/// The co-simulation top: encoder and decoder, outputs registered.
#[derive(LogicBlock)]
pub struct Secded<const D: usize, const C: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Data to encode.
    pub enc_data: Signal<In, Bits<D>>,
    /// Check bits of last cycle's `enc_data`.
    pub enc_check: Signal<Out, Bits<C>>,
    /// Received data.
    pub dec_data: Signal<In, Bits<D>>,
    /// Received check bits.
    pub dec_check: Signal<In, Bits<C>>,
    /// Last cycle's `dec_data`, corrected.
    pub corrected: Signal<Out, Bits<D>>,
    /// Last cycle's word had a single error.
    pub single_err: Signal<Out, bool>,
    /// Last cycle's word had an uncorrectable error.
    pub double_err: Signal<Out, bool>,
    encoder: SecdedEncoder<D, C>,
    decoder: SecdedDecoder<D, C>,
    enc_q: DFF<Bits<C>>,
    corrected_q: DFF<Bits<D>>,
    single_q: DFF<bool>,
    double_q: DFF<bool>,
}

impl<const D: usize, const C: usize> Secded<D, C> {
    /// The top for `D` data bits (`C` must be its check-bit count).
    pub fn new() -> Result<Self> {
        Ok(Secded {
            clock: Default::default(),
            enc_data: Default::default(),
            enc_check: Default::default(),
            dec_data: Default::default(),
            dec_check: Default::default(),
            corrected: Default::default(),
            single_err: Default::default(),
            double_err: Default::default(),
            encoder: SecdedEncoder::new()?,
            decoder: SecdedDecoder::new()?,
            enc_q: Default::default(),
            corrected_q: Default::default(),
            single_q: Default::default(),
            double_q: Default::default(),
        })
    }
}

impl<const D: usize, const C: usize> Logic for Secded<D, C> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, enc_q, corrected_q, single_q, double_q);
        self.encoder.data.next = self.enc_data.val();
        self.enc_q.d.next = self.encoder.check.val();
        self.decoder.data.next = self.dec_data.val();
        self.decoder.check.next = self.dec_check.val();
        self.corrected_q.d.next = self.decoder.corrected.val();
        self.single_q.d.next = self.decoder.single_err.val();
        self.double_q.d.next = self.decoder.double_err.val();
        self.enc_check.next = self.enc_q.q.val();
        self.corrected.next = self.corrected_q.q.val();
        self.single_err.next = self.single_q.q.val();
        self.double_err.next = self.double_q.q.val();
    }
}

/// Top module name of a parameter point.
pub fn secded_top_name(p: &SecdedParams) -> String {
    format!("exanet_secded_d{}", p.data_bits)
}

fn build<const D: usize, const C: usize>(p: &SecdedParams) -> Result<Emitted> {
    let mut uut = Secded::<D, C>::new()?;
    emit(&mut uut, &secded_top_name(p))
}

/// Validate `p` and emit its SECDED top as Verilog.
pub fn emit_secded(p: &SecdedParams) -> Result<Emitted> {
    p.validate()?;
    match p.data_bits {
        32 => build::<32, 7>(p),
        64 => build::<64, 8>(p),
        112 => build::<112, 8>(p),
        d => bail!(
            "secded.data_bits = {d}: not supported by the RTL; supported: {SUPPORTED_DATA_BITS:?}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;
    use exanet_sim::common::secded::{CodeBit, EccStatus};

    #[test]
    fn emits_lint_clean_verilog_for_every_width() {
        for &d in SUPPORTED_DATA_BITS {
            let p = SecdedParams { data_bits: d };
            let e = emit_secded(&p).unwrap();
            assert_eq!(e.top, format!("exanet_secded_d{d}"));
            let top = &e.modules.last().unwrap().1;
            let c = p.check_bits();
            for (port, w) in [
                ("enc_data", d),
                ("enc_check", c),
                ("dec_data", d),
                ("dec_check", c),
                ("corrected", d),
            ] {
                assert!(top.contains(&format!("[{}:0] {port};", w - 1)), "{port}");
            }
            for port in ["clock", "single_err", "double_err"] {
                assert!(top.contains(&format!(" {port};")), "{port}");
            }
            assert!(!e.text().contains('$'));
            assert_lint_clean(&e);
        }
    }

    #[test]
    fn unsupported_width_names_key_and_supported_values() {
        let e = emit_secded(&SecdedParams { data_bits: 48 })
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("secded.data_bits") && e.contains("48") && e.contains("112"),
            "{e}"
        );
        let e = emit_secded(&SecdedParams { data_bits: 200 })
            .unwrap_err()
            .to_string();
        assert!(e.contains("secded.data_bits") && e.contains("200"), "{e}");
        assert!(SecdedEncoder::<32, 8>::new().is_err());
        assert!(MatchDecoder::<4, 1>::new(vec![16]).is_err());
    }

    /// Run the decoder's tables the way the RTL does, in Rust, against the
    /// golden decoder for every single error and a sweep of double errors.
    #[test]
    fn tables_agree_with_the_golden_decoder() {
        fn run<const D: usize, const C: usize>() {
            let code = code_for::<D, C>().unwrap();
            let dec = SecdedDecoder::<D, C>::new().unwrap();
            let rtl = |d: u128, c: u16| -> (u128, bool, bool) {
                let mut syn = c as u128;
                for (j, row) in dec.matrix.rows().iter().enumerate() {
                    let b = row.iter().fold(0, |b, &i| b ^ (d >> i & 1));
                    syn ^= b << j;
                }
                let odd = syn.count_ones() & 1 == 1;
                let ham = syn & dec.hamming_mask.val().to_u128();
                let named = ham <= dec.last_position.val().to_u128();
                let mut fixed = d;
                for (i, &p) in dec.flip._patterns.iter().enumerate() {
                    if syn == p {
                        fixed ^= 1 << i;
                    }
                }
                (fixed, odd && named, (!odd && ham != 0) || (odd && !named))
            };
            let d = 0x1234_5678_9ABC_DEF0_1357_9BDF_u128 & ((1u128 << D) - 1);
            let c = code.encode(d);
            let n = D + C;
            let flip = |q: usize, (d, c): (u128, u16)| {
                if q < D {
                    (d ^ 1 << q, c)
                } else {
                    (d, c ^ 1 << (q - D))
                }
            };
            for a in 0..n {
                let (ed, ec) = flip(a, (d, c));
                let g = code.decode(ed, ec);
                assert_eq!(
                    rtl(ed, ec),
                    (g.data, g.single(), g.double()),
                    "{D}: bit {a}"
                );
                assert!(matches!(g.status, EccStatus::Corrected(_)));
                for b in a + 1..n {
                    let (ed, ec) = flip(b, (ed, ec));
                    let g = code.decode(ed, ec);
                    assert_eq!(rtl(ed, ec), (g.data, false, true), "{D}: bits {a},{b}");
                }
            }
            let g = code.decode(d ^ 1, c);
            assert_eq!(g.status, EccStatus::Corrected(CodeBit::Data(0)));
        }
        run::<32, 7>();
        run::<64, 8>();
        run::<112, 8>();
    }
}
