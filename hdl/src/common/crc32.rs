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
//! computed at elaboration as XOR matrices and the RTL is XOR trees
//! (`^(x & mask)` per output bit), no per-bit steps. The datapath is one
//! generated leaf, [`Crc32Core`]; the rust-hdl block around it holds the
//! register, `start`, `valid` and `reset`.
//! 1. bytes at and above `bytes` are zeroed (a thermometer mask from `bytes`);
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

/// The map `A^-m` (undo `m` zero bytes) as rows over a 32-bit input.
fn unshift_rows(m: usize) -> Result<Vec<Vec<u16>>> {
    let x = XorMatrix::<32, 32>::from_columns(|j, _| {
        (0..m).fold(1u32 << j, |s, _| crc32_unzero_byte(s)) as u128
    })?;
    Ok(x._rows)
}

/// `^(x & W'h…)`: the XOR of the bits of `x` listed in `row`.
fn xor_of(x: &str, width: usize, row: &[u16]) -> String {
    if row.is_empty() {
        return "1'b0".to_string();
    }
    let mut nibbles = vec![0u8; width.div_ceil(4)];
    for &i in row {
        nibbles[i as usize / 4] |= 1 << (i % 4);
    }
    let hex: String = nibbles
        .iter()
        .rev()
        .map(|n| char::from_digit(*n as u32, 16).expect("nibble"))
        .collect();
    format!("^({x} & {width}'h{hex})")
}

/// The combinational CRC datapath, one generated leaf: `packet` = the CRC
/// register after the `bytes` valid bytes of `data`, starting from `base`
/// (no init, no final xor). One module, so the simulator evaluates it in
/// one pass (split over several leaves, every parent↔leaf crossing costs
/// Verilator another settle iteration of the whole design).
#[derive(LogicBlock)]
pub struct Crc32Core<const W: usize, const B: usize> {
    /// Register before this flit.
    pub base: Signal<In, Bits<32>>,
    /// Flit.
    pub data: Signal<In, Bits<W>>,
    /// Valid bytes (0 or above W/8: all).
    pub bytes: Signal<In, Bits<B>>,
    /// Register after the valid bytes.
    pub packet: Signal<Out, Bits<32>>,
    _state_rows: Vec<Vec<u16>>,
    _data_rows: Vec<Vec<u16>>,
    _lo_rows: Vec<Vec<Vec<u16>>>,
    _hi_rows: Vec<Vec<Vec<u16>>>,
    _l: usize,
}

impl<const W: usize, const B: usize> Crc32Core<W, B> {
    /// Build the tables; `W = 8·n`, `n = 2^(B-1) >= 2` (checked).
    pub fn new() -> Result<Self> {
        let n = W / 8;
        if W != 8 * n || n < 2 || !n.is_power_of_two() || 1usize << (B - 1) != n {
            bail!("Crc32Core<{W}, {B}>: W must be 8·2^i (i >= 1) and B = log2(W/8) + 1");
        }
        let l = (B - 1).div_ceil(2);
        let state =
            XorMatrix::<32, 32>::from_columns(|j, _| crc32_update(1 << j, &vec![0u8; n]) as u128)?;
        let data = XorMatrix::<W, 32>::from_columns(|i, _| {
            let mut msg = vec![0u8; n];
            msg[i / 8] = 1 << (i % 8);
            crc32_update(0, &msg) as u128
        })?;
        Ok(Crc32Core {
            base: Default::default(),
            data: Default::default(),
            bytes: Default::default(),
            packet: Default::default(),
            _state_rows: state._rows,
            _data_rows: data._rows,
            _lo_rows: (1..1 << l).map(unshift_rows).collect::<Result<_>>()?,
            _hi_rows: (1..n >> l)
                .map(|j| unshift_rows(j << l))
                .collect::<Result<_>>()?,
            _l: l,
        })
    }
}

impl<const W: usize, const B: usize> Logic for Crc32Core<W, B> {
    fn update(&mut self) {
        let n = W / 8;
        let k = self.bytes.val().index();
        let k = if k == 0 || k > n { n } else { k };
        let mut msg = [0u8; 64];
        for (i, b) in msg.iter_mut().enumerate().take(k) {
            *b = self.data.val().get_bits::<8>(8 * i).index() as u8;
        }
        let base = self.base.val().index() as u32;
        self.packet.next = (crc32_update(base, &msg[..k]) as u64).into();
    }

    fn connect(&mut self) {
        self.packet.connect();
    }

    fn hdl(&self) -> Verilog {
        let n = W / 8;
        let l = self._l;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "// Generated at elaboration from the CRC-32 tables (see crc32.rs).\n\
             // m = zero bytes to undo: W/8 - bytes, or 0 for a full flit.\n\
             wire in_range = (bytes != {B}'d0) && (bytes <= {B}'d{n});\n\
             wire [{bm}:0] m = in_range ? ({B}'d{n} - bytes) : {B}'d0;\n\
             // Bytes 0..W/8-m are valid; the rest are zeroed.\n\
             wire [{nm}:0] byte_valid = {{{n}{{1'b1}}}} >> m;\n\
             wire [{wm}:0] masked = data & {{{expand}}};",
            bm = B - 1,
            nm = n - 1,
            wm = W - 1,
            expand = (0..n)
                .rev()
                .map(|i| format!("{{8{{byte_valid[{i}]}}}}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        s.push_str(
            "// full = A^n·base ^ B·masked: the register after all W/8 bytes.\nwire [31:0] full;\n",
        );
        for o in 0..32 {
            let _ = writeln!(
                s,
                "assign full[{o}] = {} ^ {};",
                xor_of("base", 32, &self._state_rows[o]),
                xor_of("masked", W, &self._data_rows[o])
            );
        }
        let stage = |s: &mut String, name: &str, input: &str, tables: &[Vec<Vec<u16>>]| {
            for (j, rows) in tables.iter().enumerate() {
                let _ = writeln!(s, "wire [31:0] {name}_{};", j + 1);
                for (o, row) in rows.iter().enumerate() {
                    let _ = writeln!(
                        s,
                        "assign {name}_{}[{o}] = {};",
                        j + 1,
                        xor_of(input, 32, row)
                    );
                }
            }
        };
        // Selections are continuous assignments, not `always @(*)` + case:
        // Verilator 5.006 mis-orders an always block feeding assigns feeding
        // another always block when the module sits in a parent<->child
        // UNOPTFLAT loop (found by this block's co-simulation; iverilog and
        // the leaf alone are right).
        let select = |s: &mut String,
                      out: &str,
                      field: &str,
                      bits: usize,
                      cands: &str,
                      n: usize,
                      dflt: &str| {
            let _ = write!(s, "wire [31:0] {out} =");
            for j in 1..n {
                let _ = write!(s, "\n    ({field} == {bits}'d{j}) ? {cands}_{j} :");
            }
            let _ = writeln!(s, "\n    {dflt};");
        };
        s.push_str("// lo_j = A^-j·full: undo the low field of m.\n");
        stage(&mut s, "lo", "full", &self._lo_rows);
        select(
            &mut s,
            "lo_out",
            &format!("m[{}:0]", l - 1),
            l,
            "lo",
            1 << l,
            "full",
        );
        let _ = writeln!(
            s,
            "// hi_j = A^-(j·2^{l})·lo_out: undo the high field of m."
        );
        stage(&mut s, "hi", "lo_out", &self._hi_rows);
        select(
            &mut s,
            "hi_out",
            &format!("m[{}:{l}]", B - 1),
            B - l,
            "hi",
            n >> l,
            "lo_out",
        );
        s.push_str("always @(*) packet = hi_out;\n");
        Verilog::Custom(s)
    }
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
    core: Crc32Core<W, B>,
    crc_q: DFF<Bits<32>>,
    base: Signal<Local, Bits<32>>,
    next: Signal<Local, Bits<32>>,
    // Typed constants: untyped literals become 32-bit and trip WIDTH lint.
    ones32: Constant<Bits<32>>,
    zero32: Constant<Bits<32>>,
}

impl<const W: usize, const B: usize> Crc32<W, B> {
    /// Build the block; `W = 8·n`, `n = 2^(B-1) >= 2` (checked).
    pub fn new() -> Result<Self> {
        Ok(Crc32 {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            valid: Default::default(),
            data: Default::default(),
            bytes: Default::default(),
            crc: Default::default(),
            core: Crc32Core::new()?,
            crc_q: Default::default(),
            base: Default::default(),
            next: Default::default(),
            ones32: Constant::new(bits(0xFFFF_FFFF)),
            zero32: Constant::new(bits(0)),
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
        self.core.base.next = self.base.val();
        self.core.data.next = self.data.val();
        self.core.bytes.next = self.bytes.val();
        if self.valid.val() {
            self.next.next = self.core.packet.val();
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

    /// Evaluate the generated tables in Rust the way the core's Verilog
    /// combines them and compare with the reference CRC for every partial
    /// length at every width: checks the tables (and the zero-byte inverse)
    /// independently of Verilator.
    #[test]
    fn tables_reproduce_the_crc_for_every_byte_count() {
        fn apply(rows: &[Vec<u16>], x: &[u128]) -> u32 {
            rows.iter().enumerate().fold(0, |acc, (o, r)| {
                let b = r
                    .iter()
                    .fold(0, |b, &i| b ^ (x[i as usize / 128] >> (i % 128) & 1));
                acc | (b as u32) << o
            })
        }
        fn check<const W: usize, const B: usize>() {
            let core = Crc32Core::<W, B>::new().unwrap();
            let n = W / 8;
            let lo = 1 << core._l;
            assert_eq!(core._lo_rows.len() + 1, lo);
            assert_eq!((core._hi_rows.len() + 1) * lo, n);
            let msg: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(37) ^ 0x5A).collect();
            for k in 1..=n {
                let mut data = [0u128; 2];
                for (i, &b) in msg[..k].iter().enumerate() {
                    data[i / 16] |= (b as u128) << (8 * (i % 16));
                }
                let full =
                    apply(&core._state_rows, &[0xFFFF_FFFF]) ^ apply(&core._data_rows, &data);
                let m = n - k;
                let (ml, mh) = (m % lo, m / lo);
                let s1 = if ml == 0 {
                    full
                } else {
                    apply(&core._lo_rows[ml - 1], &[full as u128])
                };
                let s2 = if mh == 0 {
                    s1
                } else {
                    apply(&core._hi_rows[mh - 1], &[s1 as u128])
                };
                assert_eq!(!s2, crc32(&msg[..k]), "width {W} k = {k}");
            }
        }
        check::<64, 4>();
        check::<128, 5>();
        check::<256, 6>();
    }
}
