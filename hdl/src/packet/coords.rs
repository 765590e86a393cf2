//! `coords_pack` / `coords_unpack`: node coordinates (22 bits) ↔ fields.
//!
//! Layout (`exanet_sim::packet::coords`, MSB first): x 4 · y 4 · z 4 ·
//! fpga 2 · reserved 8. Both blocks are combinational (latency 0).
//!
//! Ports:
//! - [`CoordsPack`] (`exanet_coords_pack`): `x[4]`, `y[4]`, `z[4]`,
//!   `fpga[2]`, `reserved[8]` → `coords[22]`
//! - [`CoordsUnpack`] (`exanet_coords_unpack`): `coords[22]` → the fields
//!
//! No parameters: the widths are the format's, pinned to the golden
//! model's field table by compile-time assertions below.
//!
//! Packing is a generated leaf (`coords = {x, y, z, fpga, reserved};`):
//! rust-hdl can only widen a value with `bit_cast`, which emits
//! `(v & 22'h…)` and trips Verilator's WIDTH lint. Unpacking is plain
//! rust-hdl: `get_bits` at offsets held in typed constants.

use crate::emit::{emit, Emitted};
use anyhow::Result;
use exanet_sim::packet::coords::{Field, FPGA, RESERVED, X, Y, Z};
use rust_hdl::prelude::*;

// The Bits<N> widths below are the field table's; a change there must fail here.
const _: () = assert!(X.width == 4 && Y.width == 4 && Z.width == 4);
const _: () = assert!(FPGA.width == 2 && RESERVED.width == 8);
const _: () = assert!(X.offset == 18 && RESERVED.offset == 0);

/// `Bits<N>` from the low `N` bits of `v` (for the Rust side of leaves).
pub(crate) fn bits_of<const N: usize>(v: u128) -> Bits<N> {
    (0..N.min(128)).fold(Bits::<N>::default(), |b, i| {
        b.replace_bit(i, v >> i & 1 == 1)
    })
}

/// Verilog of a packing leaf: `out` is the concatenation of `parts`, MSB first.
pub(crate) fn concat_verilog(out: &str, parts: &[&str]) -> Verilog {
    Verilog::Custom(format!(
        "// Packing generated from the field table, MSB first.\n\
         always @(*) {out} = {{{}}};\n",
        parts.join(", ")
    ))
}

/// A typed offset constant for slicing a field out of a `2^B`-bit word.
pub(crate) fn offset<const B: usize>(f: &Field) -> Constant<Bits<B>> {
    Constant::new(bits(f.offset as u64))
}

/// Coordinates from fields.
#[derive(LogicBlock, Default)]
pub struct CoordsPack {
    /// x.
    pub x: Signal<In, Bits<4>>,
    /// y.
    pub y: Signal<In, Bits<4>>,
    /// z.
    pub z: Signal<In, Bits<4>>,
    /// FPGA within the board.
    pub fpga: Signal<In, Bits<2>>,
    /// Reserved bits.
    pub reserved: Signal<In, Bits<8>>,
    /// Packed coordinates.
    pub coords: Signal<Out, Bits<22>>,
}

impl Logic for CoordsPack {
    fn update(&mut self) {
        let mut w = 0u128;
        w = X.put(w, self.x.val().to_u64());
        w = Y.put(w, self.y.val().to_u64());
        w = Z.put(w, self.z.val().to_u64());
        w = FPGA.put(w, self.fpga.val().to_u64());
        w = RESERVED.put(w, self.reserved.val().to_u64());
        self.coords.next = bits_of(w);
    }

    fn connect(&mut self) {
        self.coords.connect();
    }

    fn hdl(&self) -> Verilog {
        concat_verilog("coords", &["x", "y", "z", "fpga", "reserved"])
    }
}

/// Fields from coordinates.
#[derive(LogicBlock)]
pub struct CoordsUnpack {
    /// Packed coordinates.
    pub coords: Signal<In, Bits<22>>,
    /// x.
    pub x: Signal<Out, Bits<4>>,
    /// y.
    pub y: Signal<Out, Bits<4>>,
    /// z.
    pub z: Signal<Out, Bits<4>>,
    /// FPGA within the board.
    pub fpga: Signal<Out, Bits<2>>,
    /// Reserved bits.
    pub reserved: Signal<Out, Bits<8>>,
    // Field offsets: 5 bits index a 22-bit word without WIDTH warnings.
    off_x: Constant<Bits<5>>,
    off_y: Constant<Bits<5>>,
    off_z: Constant<Bits<5>>,
    off_fpga: Constant<Bits<5>>,
    off_reserved: Constant<Bits<5>>,
}

impl Default for CoordsUnpack {
    fn default() -> Self {
        CoordsUnpack {
            coords: Default::default(),
            x: Default::default(),
            y: Default::default(),
            z: Default::default(),
            fpga: Default::default(),
            reserved: Default::default(),
            off_x: offset(&X),
            off_y: offset(&Y),
            off_z: offset(&Z),
            off_fpga: offset(&FPGA),
            off_reserved: offset(&RESERVED),
        }
    }
}

impl Logic for CoordsUnpack {
    #[hdl_gen]
    fn update(&mut self) {
        self.x.next = self.coords.val().get_bits::<4>(self.off_x.val().index());
        self.y.next = self.coords.val().get_bits::<4>(self.off_y.val().index());
        self.z.next = self.coords.val().get_bits::<4>(self.off_z.val().index());
        self.fpga.next = self.coords.val().get_bits::<2>(self.off_fpga.val().index());
        self.reserved.next = self
            .coords
            .val()
            .get_bits::<8>(self.off_reserved.val().index());
    }
}

/// Emit [`CoordsPack`] as `exanet_coords_pack`.
pub fn emit_coords_pack() -> Result<Emitted> {
    emit(&mut CoordsPack::default(), "exanet_coords_pack")
}

/// Emit [`CoordsUnpack`] as `exanet_coords_unpack`.
pub fn emit_coords_unpack() -> Result<Emitted> {
    emit(&mut CoordsUnpack::default(), "exanet_coords_unpack")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    #[test]
    fn emits_lint_clean_verilog() {
        let p = emit_coords_pack().unwrap();
        assert!(p.text().contains("coords = {x, y, z, fpga, reserved};"));
        assert_lint_clean(&p);
        let u = emit_coords_unpack().unwrap();
        assert!(
            u.text().contains("x = coords[(off_x)+:(4)];"),
            "{}",
            u.text()
        );
        assert_lint_clean(&u);
    }
}
