//! `crc32`: CRC-32 (IEEE 802.3) over one flit per cycle.
//!
//! Purpose: the payload CRC of the footer, computed by the NI as payload
//! flits stream past (and checked the same way on receipt).
//!
//! CRC: reflected, polynomial 0xEDB88320, init 0xFFFFFFFF, final xor
//! 0xFFFFFFFF (Ethernet, zlib). Byte order of a flit: byte `i` is
//! `data[8i+7:8i]`; bytes enter the CRC in increasing `i`, each LSB first.
//! A partial flit keeps its valid bytes in bytes `0..bytes`.
//!
//! Ports (top module `exanet_crc32_w<width>`):
//! - `clock`; `reset` (synchronous: the CRC register returns to "no bytes")
//! - `start`: this cycle begins a new packet (its flit, if `valid`, is the first)
//! - `valid`, `data[width]`: a flit
//! - `bytes[log2(width/8)+1]`: valid bytes of the flit, 1..=width/8; higher
//!   bytes are ignored. 0 or a value above width/8 counts as a full flit.
//! - `crc[32]`: finished CRC (final xor applied) of every byte of the packet
//!   so far, *including* this cycle's flit when `valid`.
//!
//! Latency: 0 — `crc` is combinational from the inputs and the register, so
//! it is the packet's CRC in the cycle its last flit is presented (the
//! footer can follow in the next cycle). `start` without `valid` shows 0,
//! the CRC of no bytes.
//!
//! Structure: the CRC register update is linear over GF(2), so it is
//! computed at elaboration as XOR matrices ([`XorMatrix`], a generated leaf
//! whose Verilog is one XOR tree per output bit) and the RTL has no per-bit
//! steps:
//! 1. bytes at and above `bytes` are zeroed (a mask chosen by `bytes`);
//! 2. `full = A^n·base ⊕ B·data` — the register after all `n = width/8`
//!    bytes (the zeroed tail included);
//! 3. feeding a zero byte is the invertible map `A`, so the register after
//!    only the `k` valid bytes is `A^-m·full` with `m = n-k`. `m` is split
//!    into a low and a high field (`m = hi + lo`, `lo < 2^l`,
//!    `l = ceil(log2(n)/2)`) and undone in two stages, each a small mux over
//!    precomputed matrices (`A^-lo`, then `A^-hi`): 4, 6 and 10 matrices of
//!    32×32 for n = 8, 16, 32 instead of n-1, and two XOR levels deep.
//!
//! The register holds the finished CRC (`0` = no bytes), so its power-on
//! value 0 equals its reset value.
//!
//! Parameters ([`Crc32Params`]):
//! - `width`: flit width in bits; supported 64, 128, 256.

use crate::emit::{emit, Emitted};
use anyhow::{bail, Result};
pub use exanet_sim::common::crc32::Crc32Params;
use exanet_sim::common::crc32::{crc32_unzero_byte, crc32_update, CRC32_WIDTHS};
use rust_hdl::prelude::*;
use std::fmt::Write as _;

/// A GF(2) linear map `y = M·x (⊕ c)` computed at elaboration: output bit
/// `o` is the XOR of the input bits listed in row `o`, inverted where `c`
/// is set. The Verilog is a generated leaf with one XOR tree per output bit
/// (`y[o] = x[3] ^ x[17] ^ …;`); `update` computes the same for rust-hdl's
/// own simulator. Every input bit must feed some output (an unused input
/// would be a lint warning and is usually a table bug).
#[derive(LogicBlock)]
pub struct XorMatrix<const I: usize, const O: usize> {
    /// Input vector.
    pub x: Signal<In, Bits<I>>,
    /// `M·x ⊕ c`.
    pub y: Signal<Out, Bits<O>>,
    _rows: Vec<Vec<u16>>,
    _invert: Vec<bool>,
}

impl<const I: usize, const O: usize> XorMatrix<I, O> {
    /// A map from its rows (input indices of each output bit) and the
    /// outputs to invert. Errors name the bad row or the unused input.
    pub fn new(rows: Vec<Vec<u16>>, invert: Vec<bool>) -> Result<Self> {
        if rows.len() != O || invert.len() != O {
            bail!(
                "XorMatrix<{I}, {O}>: {} rows and {} invert flags, expected {O}",
                rows.len(),
                invert.len()
            );
        }
        let mut used = vec![false; I];
        for (o, row) in rows.iter().enumerate() {
            for &i in row {
                let Some(u) = used.get_mut(i as usize) else {
                    bail!("XorMatrix<{I}, {O}>: row {o} names input {i}, beyond {I} inputs");
                };
                *u = true;
            }
        }
        if let Some(i) = used.iter().position(|u| !u) {
            bail!("XorMatrix<{I}, {O}>: input bit {i} feeds no output");
        }
        Ok(XorMatrix {
            x: Default::default(),
            y: Default::default(),
            _rows: rows,
            _invert: invert,
        })
    }

    /// A linear map from its columns: `column(i)` is the output (bit `o`
    /// set = output `o`) of input unit vector `i`. Outputs beyond 128 are
    /// taken from `column` calls with `chunk` > 0 (bits `128·chunk ..`).
    pub fn from_columns(column: impl Fn(usize, usize) -> u128) -> Result<Self> {
        let mut rows = vec![Vec::new(); O];
        for i in 0..I {
            for chunk in 0..O.div_ceil(128) {
                let c = column(i, chunk);
                for b in 0..128.min(O - 128 * chunk) {
                    if c >> b & 1 == 1 {
                        rows[128 * chunk + b].push(i as u16);
                    }
                }
            }
        }
        Self::new(rows, vec![false; O])
    }

    /// The same map plus a constant: output `o` is inverted where bit `o`
    /// of `constant` is set (an affine map, e.g. a CRC with init/xorout).
    pub fn with_constant(mut self, constant: u128) -> Self {
        for (o, inv) in self._invert.iter_mut().enumerate().take(128) {
            *inv = constant >> o & 1 == 1;
        }
        self
    }

    /// The rows (input indices of each output bit).
    pub fn rows(&self) -> &[Vec<u16>] {
        &self._rows
    }
}

impl<const I: usize, const O: usize> Logic for XorMatrix<I, O> {
    fn update(&mut self) {
        let x = self.x.val();
        let mut y = Bits::<O>::default();
        for (o, row) in self._rows.iter().enumerate() {
            let mut b = self._invert[o];
            for &i in row {
                b ^= x.get_bit(i as usize);
            }
            y = y.replace_bit(o, b);
        }
        self.y.next = y;
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    fn hdl(&self) -> Verilog {
        let mut s = String::from(
            "// GF(2) linear map generated at elaboration: one XOR tree per output bit.\n\
             always @(*) begin\n",
        );
        for (o, row) in self._rows.iter().enumerate() {
            let inv = self._invert[o];
            let _ = write!(s, "    y[{o}] = ");
            if row.is_empty() {
                s.push_str(if inv { "1'b1;\n" } else { "1'b0;\n" });
                continue;
            }
            if inv {
                s.push_str("~(");
            }
            for (k, i) in row.iter().enumerate() {
                if k > 0 {
                    s.push_str(if k % 16 == 0 { "\n        ^ " } else { " ^ " });
                }
                let _ = write!(s, "x[{i}]");
            }
            s.push_str(if inv { ");\n" } else { ";\n" });
        }
        s.push_str("end\n");
        Verilog::Custom(s)
    }
}

/// A `W`-bit constant with bits `0..n` set.
fn low_ones<const W: usize>(n: usize) -> Bits<W> {
    (0..n).fold(Bits::<W>::default(), |b, i| b.replace_bit(i, true))
}

/// The map `A^-m` (undo `m` zero bytes) as an [`XorMatrix`].
fn unshift_matrix(m: usize) -> Result<XorMatrix<32, 32>> {
    XorMatrix::from_columns(|j, _| (0..m).fold(1u32 << j, |s, _| crc32_unzero_byte(s)) as u128)
}

/// The CRC-32 block for `W`-bit flits; `B` is the width of `bytes`
/// (`log2(W/8) + 1`).
#[derive(LogicBlock)]
pub struct Crc32<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// This cycle begins a new packet.
    pub start: Signal<In, bool>,
    /// `data` holds a flit.
    pub valid: Signal<In, bool>,
    /// Flit; byte `i` is `data[8i+7:8i]`.
    pub data: Signal<In, Bits<W>>,
    /// Valid bytes in the flit (0 or above W/8: a full flit).
    pub bytes: Signal<In, Bits<B>>,
    /// CRC of the packet so far, including this cycle's flit.
    pub crc: Signal<Out, Bits<32>>,
    state_map: XorMatrix<32, 32>,
    data_map: XorMatrix<W, 32>,
    // Undo `m = W/8 - bytes` zero bytes in two stages, `m = hi + lo`:
    // `lo_map[j-1]` = A^-j for the low bits of m, `hi_map[j-1]` = A^-(j·2^l).
    lo_map: Vec<XorMatrix<32, 32>>,
    hi_map: Vec<XorMatrix<32, 32>>,
    crc_q: DFF<Bits<32>>,
    byte_mask: Signal<Local, Bits<W>>,
    m: Signal<Local, Bits<B>>,
    base: Signal<Local, Bits<32>>,
    full: Signal<Local, Bits<32>>,
    lo_out: Signal<Local, Bits<32>>,
    packet: Signal<Local, Bits<32>>,
    next: Signal<Local, Bits<32>>,
    // Typed constants: untyped literals become 32-bit and trip WIDTH lint.
    ones32: Constant<Bits<32>>,
    zero32: Constant<Bits<32>>,
    all_bytes: Constant<Bits<W>>,
    flit_bytes: Constant<Bits<B>>,
    zero_b: Constant<Bits<B>>,
    lo_mask: Constant<Bits<B>>,
    hi_mask: Constant<Bits<B>>,
    // For a partial flit of k bytes (1 <= k < W/8), at index k-1: k and the
    // mask of bytes 0..k.
    k_value: Vec<Constant<Bits<B>>>,
    k_mask: Vec<Constant<Bits<W>>>,
    // `lo_value[j-1]` = j, `hi_value[j-1]` = j·2^l: the values of m's fields.
    lo_value: Vec<Constant<Bits<B>>>,
    hi_value: Vec<Constant<Bits<B>>>,
    _n: usize,
    _lo: usize,
    _hi: usize,
}

impl<const W: usize, const B: usize> Crc32<W, B> {
    /// Build the block; `W` must be a multiple of 8 of at least 16 bits
    /// and `B = log2(W/8) + 1` (checked).
    pub fn new() -> Result<Self> {
        let n = W / 8;
        if W % 8 != 0 || n < 2 || !n.is_power_of_two() || 1usize << (B - 1) != n {
            bail!("Crc32<{W}, {B}>: W must be 8·2^i (i >= 1) and B = log2(W/8) + 1");
        }
        let log_n = B - 1;
        let l = log_n.div_ceil(2);
        let (lo, hi) = (1usize << l, n >> l);
        let state_map =
            XorMatrix::from_columns(|j, _| crc32_update(1 << j, &vec![0u8; n]) as u128)?;
        let data_map = XorMatrix::from_columns(|i, _| {
            let mut msg = vec![0u8; n];
            msg[i / 8] = 1 << (i % 8);
            crc32_update(0, &msg) as u128
        })?;
        let lo_map = (1..lo).map(unshift_matrix).collect::<Result<_>>()?;
        let hi_map = (1..hi)
            .map(|j| unshift_matrix(j << l))
            .collect::<Result<_>>()?;
        let c = |v: usize| Constant::new(bits::<B>(v as u64));
        Ok(Crc32 {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            valid: Default::default(),
            data: Default::default(),
            bytes: Default::default(),
            crc: Default::default(),
            state_map,
            data_map,
            lo_map,
            hi_map,
            crc_q: Default::default(),
            byte_mask: Default::default(),
            m: Default::default(),
            base: Default::default(),
            full: Default::default(),
            lo_out: Default::default(),
            packet: Default::default(),
            next: Default::default(),
            ones32: Constant::new(bits(0xFFFF_FFFF)),
            zero32: Constant::new(bits(0)),
            all_bytes: Constant::new(Bits::<W>::mask()),
            flit_bytes: c(n),
            zero_b: c(0),
            lo_mask: c(lo - 1),
            hi_mask: c((n - 1) & !(lo - 1)),
            k_value: (1..n).map(c).collect(),
            k_mask: (1..n)
                .map(|k| Constant::new(low_ones::<W>(8 * k)))
                .collect(),
            lo_value: (1..lo).map(c).collect(),
            hi_value: (1..hi).map(|j| c(j << l)).collect(),
            _n: n,
            _lo: lo,
            _hi: hi,
        })
    }
}

impl<const W: usize, const B: usize> Logic for Crc32<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, crc_q);
        // The register holds the finished CRC; the running value is its inverse.
        if self.start.val() {
            self.base.next = self.ones32.val();
        } else {
            self.base.next = !self.crc_q.q.val();
        }
        // Zero the bytes at and above `bytes`; m = zero bytes to undo.
        self.byte_mask.next = self.all_bytes.val();
        for k in 1..self._n {
            if self.bytes.val() == self.k_value[k - 1].val() {
                self.byte_mask.next = self.k_mask[k - 1].val();
            }
        }
        self.m.next = self.flit_bytes.val() - self.bytes.val();
        if (self.bytes.val() == self.zero_b.val()) | (self.bytes.val() > self.flit_bytes.val()) {
            self.m.next = self.zero_b.val();
        }
        self.state_map.x.next = self.base.val();
        self.data_map.x.next = self.data.val() & self.byte_mask.val();
        self.full.next = self.state_map.y.val() ^ self.data_map.y.val();
        self.lo_out.next = self.full.val();
        for j in 1..self._lo {
            self.lo_map[j - 1].x.next = self.full.val();
            if (self.m.val() & self.lo_mask.val()) == self.lo_value[j - 1].val() {
                self.lo_out.next = self.lo_map[j - 1].y.val();
            }
        }
        self.packet.next = self.lo_out.val();
        for j in 1..self._hi {
            self.hi_map[j - 1].x.next = self.lo_out.val();
            if (self.m.val() & self.hi_mask.val()) == self.hi_value[j - 1].val() {
                self.packet.next = self.hi_map[j - 1].y.val();
            }
        }
        if self.valid.val() {
            self.next.next = self.packet.val();
        } else {
            self.next.next = self.base.val();
        }
        self.crc.next = !self.next.val();
        if self.reset.val() {
            self.crc_q.d.next = self.zero32.val();
        } else {
            self.crc_q.d.next = !self.next.val();
        }
    }
}

/// Top module name of a parameter point.
pub fn crc32_top_name(p: &Crc32Params) -> String {
    format!("exanet_crc32_w{}", p.width)
}

fn build<const W: usize, const B: usize>(p: &Crc32Params) -> Result<Emitted> {
    let mut uut = Crc32::<W, B>::new()?;
    emit(&mut uut, &crc32_top_name(p))
}

/// Validate `p` and emit its CRC-32 block as Verilog.
pub fn emit_crc32(p: &Crc32Params) -> Result<Emitted> {
    p.validate()?;
    match p.width {
        64 => build::<64, 4>(p),
        128 => build::<128, 5>(p),
        256 => build::<256, 6>(p),
        w => bail!("crc32.width = {w}: not supported; supported widths: {CRC32_WIDTHS:?}"),
    }
}

/// Test support shared by this project's common and packet blocks: lint an
/// emitted design with `verilator --lint-only -Wall` and the waivers.
#[cfg(test)]
pub(crate) mod lint {
    use crate::emit::{Emitted, LINT_WAIVERS, LINT_WAIVERS_FILE};
    use std::process::Command;

    /// Assert the design lints clean, or print why the lint was skipped.
    pub(crate) fn assert_lint_clean(e: &Emitted) {
        if Command::new("verilator").arg("--version").output().is_err() {
            println!(
                "ignored: verilator not installed; lint of {} skipped",
                e.top
            );
            return;
        }
        let dir = std::env::temp_dir().join(format!(
            "exanet-lint-{}-{}-{:?}",
            e.top,
            std::process::id(),
            std::thread::current().id()
        ));
        let files = e.write_dir(&dir).expect("writing RTL");
        let vlt = dir.join(LINT_WAIVERS_FILE);
        std::fs::write(&vlt, LINT_WAIVERS).unwrap();
        let out = Command::new("verilator")
            .args(["--lint-only", "-Wall", "--top-module", &e.top])
            .arg(&vlt)
            .args(&files)
            .output()
            .expect("running verilator");
        let _ = std::fs::remove_dir_all(&dir);
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        let clean = out.status.success() && !text.contains("%Warning") && !text.contains("%Error");
        assert!(clean, "verilator lint of {} failed:\n{text}", e.top);
    }
}

#[cfg(test)]
mod tests {
    use super::lint::assert_lint_clean;
    use super::*;
    use exanet_sim::common::crc32::crc32;

    #[test]
    fn emits_lint_clean_verilog_for_every_width() {
        for width in CRC32_WIDTHS {
            let p = Crc32Params { width };
            let e = emit_crc32(&p).unwrap();
            assert_eq!(e.top, format!("exanet_crc32_w{width}"));
            let top = &e.modules.last().unwrap().1;
            for port in ["clock", "reset", "start", "valid", "data", "bytes", "crc"] {
                assert!(top.contains(&format!(" {port};")), "{} lacks {port}", e.top);
            }
            assert!(top.contains(&format!("[{}:0] data;", width - 1)));
            assert!(top.contains(&format!("[{}:0] bytes;", p.bytes_port_bits() - 1)));
            assert!(!e.text().contains('$'));
            assert_lint_clean(&e);
        }
    }

    #[test]
    fn unsupported_width_names_key_and_supported_values() {
        let e = emit_crc32(&Crc32Params { width: 32 })
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("crc32.width") && e.contains("32") && e.contains("256"),
            "{e}"
        );
    }

    #[test]
    fn xor_matrix_checks_its_table() {
        assert!(XorMatrix::<2, 1>::new(vec![vec![0]], vec![false]).is_err());
        assert!(XorMatrix::<2, 1>::new(vec![vec![0, 2]], vec![false]).is_err());
        assert!(XorMatrix::<2, 2>::new(vec![vec![0]], vec![false]).is_err());
        let m = XorMatrix::<2, 2>::new(vec![vec![0, 1], vec![]], vec![false, true]).unwrap();
        let v = match m.hdl() {
            Verilog::Custom(s) => s,
            _ => unreachable!(),
        };
        assert!(
            v.contains("y[0] = x[0] ^ x[1];") && v.contains("y[1] = 1'b1;"),
            "{v}"
        );
    }

    /// Evaluate the generated matrices in Rust the way the RTL combines them
    /// and compare with the reference CRC for every partial length at every
    /// width: checks the tables (and the zero-byte inverse) independently of
    /// Verilator.
    #[test]
    fn matrices_reproduce_the_crc_for_every_byte_count() {
        fn apply<const I: usize>(m: &XorMatrix<I, 32>, x: u128) -> u32 {
            m.rows().iter().enumerate().fold(0, |acc, (o, r)| {
                let b = r.iter().fold(0, |b, &i| b ^ (x >> i & 1)) as u32;
                acc | b << o
            })
        }
        fn check<const W: usize, const B: usize>() {
            let uut = Crc32::<W, B>::new().unwrap();
            let n = W / 8;
            let (lo, hi) = (uut._lo, uut._hi);
            assert_eq!(lo * hi, n);
            assert_eq!(uut.lo_map.len() + uut.hi_map.len(), lo + hi - 2);
            let msg: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(37) ^ 0x5A).collect();
            for k in 1..=n {
                let mut base = 0xFFFF_FFFFu32;
                let mut full = apply(&uut.state_map, base as u128);
                // The data map takes up to 256 bits: apply it per 128-bit half.
                let mut data = [0u128; 2];
                for (i, &b) in msg[..k].iter().enumerate() {
                    data[i / 16] |= (b as u128) << (8 * (i % 16));
                }
                for (o, r) in uut.data_map.rows().iter().enumerate() {
                    let b = r
                        .iter()
                        .fold(0, |b, &i| b ^ (data[i as usize / 128] >> (i % 128) & 1));
                    full ^= (b as u32) << o;
                }
                let m = n - k;
                let (ml, mh) = (m % lo, m / lo);
                let s1 = if ml == 0 {
                    full
                } else {
                    apply(&uut.lo_map[ml - 1], full as u128)
                };
                let s2 = if mh == 0 {
                    s1
                } else {
                    apply(&uut.hi_map[mh - 1], s1 as u128)
                };
                base = s2;
                assert_eq!(!base, crc32(&msg[..k]), "width {W} k = {k}");
            }
        }
        check::<64, 4>();
        check::<128, 5>();
        check::<256, 6>();
    }
}
