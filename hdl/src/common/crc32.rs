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
//! (`^(x & mask)` per output bit), no per-bit steps.
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
//! The block is one generated module (rust-hdl `Verilog::Custom`; `update`
//! is the same function for rust-hdl's simulator): the register and one
//! `always @(*)` in dependency order, each unshift stage a `case` whose
//! arms apply one matrix (a mux of candidates in hardware; the simulator
//! evaluates only the selected one). Why not rust-hdl glue around XOR
//! leaves: rust-hdl puts each module's logic in one `always @(*)`, so a
//! parent feeding a leaf and reading it back is a loop to Verilator
//! (UNOPTFLAT). That version ran at 0.3–0.9 M cycles/s (the loop is
//! re-settled several times per evaluation), and two variants of it — a
//! leaf whose `always @(*)` fed `assign`s feeding another `always @(*)`
//! (width 64), and an all-`assign` leaf (width 256) — were mis-simulated by
//! Verilator 5.006 inside the loop, while iverilog and Verilator on the
//! leaf alone were right. As one module there is no loop.
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

/// The CRC-32 block for `W`-bit flits; `B` is the width of `bytes`
/// (`log2(W/8) + 1`). One generated module (see the module doc for why).
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
    _state_rows: Vec<Vec<u16>>,
    _data_rows: Vec<Vec<u16>>,
    _lo_rows: Vec<Vec<Vec<u16>>>,
    _hi_rows: Vec<Vec<Vec<u16>>>,
    _l: usize,
    // rust-hdl simulation state: the register and this cycle's output.
    _crc_q: u32,
    _crc_now: u32,
}

impl<const W: usize, const B: usize> Crc32<W, B> {
    /// Build the tables; `W = 8·n`, `n = 2^(B-1) >= 2` (checked).
    pub fn new() -> Result<Self> {
        let n = W / 8;
        if W != 8 * n || n < 2 || !n.is_power_of_two() || 1usize << (B - 1) != n {
            bail!("Crc32<{W}, {B}>: W must be 8·2^i (i >= 1) and B = log2(W/8) + 1");
        }
        let l = (B - 1).div_ceil(2);
        let state =
            XorMatrix::<32, 32>::from_columns(|j, _| crc32_update(1 << j, &vec![0u8; n]) as u128)?;
        let data = XorMatrix::<W, 32>::from_columns(|i, _| {
            let mut msg = vec![0u8; n];
            msg[i / 8] = 1 << (i % 8);
            crc32_update(0, &msg) as u128
        })?;
        Ok(Crc32 {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            valid: Default::default(),
            data: Default::default(),
            bytes: Default::default(),
            crc: Default::default(),
            _state_rows: state._rows,
            _data_rows: data._rows,
            _lo_rows: (1..1 << l).map(unshift_rows).collect::<Result<_>>()?,
            _hi_rows: (1..n >> l)
                .map(|j| unshift_rows(j << l))
                .collect::<Result<_>>()?,
            _l: l,
            _crc_q: 0,
            _crc_now: 0,
        })
    }
}

impl<const W: usize, const B: usize> Logic for Crc32<W, B> {
    fn update(&mut self) {
        // `pos_edge` is true in one settle iteration, before this cycle's
        // inputs change: the register takes last cycle's output.
        if self.clock.pos_edge() {
            self._crc_q = if self.reset.val() { 0 } else { self._crc_now };
        }
        let n = W / 8;
        let base = if self.start.val() { !0 } else { !self._crc_q };
        let next = if self.valid.val() {
            let k = self.bytes.val().index();
            let k = if k == 0 || k > n { n } else { k };
            let mut msg = [0u8; 64];
            for (i, b) in msg.iter_mut().enumerate().take(k) {
                *b = self.data.val().get_bits::<8>(8 * i).index() as u8;
            }
            crc32_update(base, &msg[..k])
        } else {
            base
        };
        self._crc_now = !next;
        self.crc.next = (self._crc_now as u64).into();
    }

    fn connect(&mut self) {
        self.crc.connect();
    }

    fn hdl(&self) -> Verilog {
        // One `always @(*)` with blocking assignments in dependency order,
        // the shape rust-hdl gives every module, so the block also simulates
        // correctly when a rust-hdl parent instantiates it (see module doc).
        let n = W / 8;
        let l = self._l;
        let mut d =
            String::from("// Generated at elaboration from the CRC-32 tables (see crc32.rs).\n");
        d.push_str(
            "// The register holds the finished CRC: 0 = no bytes, so its\n\
             // power-on value is its reset value.\n\
             reg [31:0] crc_q;\n\
             initial crc_q = 32'h0;\n\
             always @(posedge clock) crc_q <= reset ? 32'h0 : crc;\n\
             reg [31:0] base;\nreg [31:0] packet;\n",
        );
        let _ = writeln!(
            d,
            "reg in_range;\nreg [{}:0] m;\nreg [{}:0] byte_valid;\nreg [{}:0] masked;\n\
             reg [31:0] full;\nreg [31:0] lo_out;",
            B - 1,
            n - 1,
            W - 1
        );
        let mut s = String::from(
            "always @(*) begin\n    // The running register: init at a start, else the inverse of the CRC.\n\
             \x20   base = start ? 32'hffffffff : ~crc_q;\n",
        );
        let _ = writeln!(
            s,
            "    // m = zero bytes to undo: W/8 - bytes, or 0 for a full flit.\n\
             \x20   in_range = (bytes != {B}'d0) && (bytes <= {B}'d{n});\n\
             \x20   m = in_range ? ({B}'d{n} - bytes) : {B}'d0;\n\
             \x20   // Bytes 0..W/8-m are valid; the rest are zeroed.\n\
             \x20   byte_valid = {{{n}{{1'b1}}}} >> m;\n\
             \x20   masked = data & {{{expand}}};\n\
             \x20   // full = A^n·base ^ B·masked: the register after all W/8 bytes.",
            expand = (0..n)
                .rev()
                .map(|i| format!("{{8{{byte_valid[{i}]}}}}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for o in 0..32 {
            let _ = writeln!(
                s,
                "    full[{o}] = {} ^ {};",
                xor_of("base", 32, &self._state_rows[o]),
                xor_of("masked", W, &self._data_rows[o])
            );
        }
        // Each stage: a case over m's field whose arms apply one matrix
        // (same mux of candidates in hardware; the simulator evaluates only
        // the selected matrix).
        let stage = |s: &mut String,
                     out: &str,
                     field: &str,
                     input: &str,
                     tables: &[Vec<Vec<u16>>],
                     dflt: &str| {
            let _ = writeln!(s, "    case ({field})");
            for (j, rows) in tables.iter().enumerate() {
                let _ = writeln!(s, "        {}: begin", j + 1);
                for (o, row) in rows.iter().enumerate() {
                    let _ = writeln!(s, "            {out}[{o}] = {};", xor_of(input, 32, row));
                }
                s.push_str("        end\n");
            }
            let _ = writeln!(s, "        default: {out} = {dflt};\n    endcase");
        };
        s.push_str("    // Undo the low field of m: lo_out = A^-lo·full.\n");
        stage(
            &mut s,
            "lo_out",
            &format!("m[{}:0]", l - 1),
            "full",
            &self._lo_rows,
            "full",
        );
        let _ = writeln!(
            s,
            "    // Undo the high field: packet = A^-(hi·2^{l})·lo_out."
        );
        stage(
            &mut s,
            "packet",
            &format!("m[{}:{l}]", B - 1),
            "lo_out",
            &self._hi_rows,
            "lo_out",
        );
        s.push_str("    crc = ~(valid ? packet : base);\nend\n");
        Verilog::Custom(d + &s)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;
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
            let core = Crc32::<W, B>::new().unwrap();
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
