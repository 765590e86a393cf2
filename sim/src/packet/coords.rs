//! Node coordinates (22 bits) and the bit-field description shared by every
//! packet format.
//!
//! Layout, MSB first: x 4 · y 4 · z 4 · fpga-in-board 2 · reserved 8, i.e.
//! x = \[21:18\], y = \[17:14\], z = \[13:10\], fpga = \[9:8\], reserved = \[7:0\].
//! Reserved bits are carried unchanged (sent as zero by exanet itself).

use anyhow::{bail, Result};

/// One bit field of a packed word: `width` bits starting at bit `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Name used in errors and as the RTL port name.
    pub name: &'static str,
    /// Least significant bit.
    pub offset: u32,
    /// Width in bits (1..=64).
    pub width: u32,
}

impl Field {
    /// Largest value the field holds.
    #[inline]
    pub const fn max(&self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }

    /// The field's bits within the word.
    #[inline]
    pub const fn mask(&self) -> u128 {
        (self.max() as u128) << self.offset
    }

    /// Extract the field from `word`.
    #[inline]
    pub const fn get(&self, word: u128) -> u64 {
        ((word >> self.offset) as u64) & self.max()
    }

    /// `word` with the field set to `v` (`v` must fit: see [`Field::check`]).
    #[inline]
    pub const fn put(&self, word: u128, v: u64) -> u128 {
        (word & !self.mask()) | (((v & self.max()) as u128) << self.offset)
    }

    /// Error naming the field if `v` does not fit in it.
    pub fn check(&self, v: u64) -> Result<()> {
        if v > self.max() {
            bail!(
                "field `{}` = {v} (0x{v:x}) does not fit in {} bits (max {})",
                self.name,
                self.width,
                self.max()
            );
        }
        Ok(())
    }
}

/// Check that `fields` tile bits `0..total` exactly, each once.
pub fn check_tiling(fields: &[Field], total: u32) -> Result<()> {
    let mut covered = 0u128;
    for f in fields {
        if f.width == 0 || f.width > 64 || f.offset + f.width > total {
            bail!(
                "field `{}` {}+{} is out of range",
                f.name,
                f.offset,
                f.width
            );
        }
        if covered & f.mask() != 0 {
            bail!("field `{}` overlaps another field", f.name);
        }
        covered |= f.mask();
    }
    let all = if total == 128 {
        u128::MAX
    } else {
        (1u128 << total) - 1
    };
    if covered != all {
        bail!("fields leave bits 0x{:x} uncovered", all & !covered);
    }
    Ok(())
}

/// Total width of coordinates.
pub const COORDS_BITS: u32 = 22;
/// x, bits \[21:18\].
pub const X: Field = Field {
    name: "x",
    offset: 18,
    width: 4,
};
/// y, bits \[17:14\].
pub const Y: Field = Field {
    name: "y",
    offset: 14,
    width: 4,
};
/// z, bits \[13:10\].
pub const Z: Field = Field {
    name: "z",
    offset: 10,
    width: 4,
};
/// FPGA within the board (QFDB), bits \[9:8\].
pub const FPGA: Field = Field {
    name: "fpga",
    offset: 8,
    width: 2,
};
/// Reserved, bits \[7:0\].
pub const RESERVED: Field = Field {
    name: "reserved",
    offset: 0,
    width: 8,
};
/// Every field, MSB first.
pub const FIELDS: [Field; 5] = [X, Y, Z, FPGA, RESERVED];

/// Coordinates of one FPGA in the torus. Ordered by (x, y, z, fpga, reserved).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Coords {
    x: u8,
    y: u8,
    z: u8,
    fpga: u8,
    reserved: u8,
}

impl Coords {
    /// Coordinates `(x, y, z)` of a board and `fpga` within it; errors name
    /// the field that does not fit.
    pub fn new(x: u8, y: u8, z: u8, fpga: u8) -> Result<Self> {
        let mut c = Coords::default();
        c.set_x(x)?.set_y(y)?.set_z(z)?.set_fpga(fpga)?;
        Ok(c)
    }

    /// x.
    pub fn x(&self) -> u8 {
        self.x
    }
    /// y.
    pub fn y(&self) -> u8 {
        self.y
    }
    /// z.
    pub fn z(&self) -> u8 {
        self.z
    }
    /// FPGA within the board.
    pub fn fpga(&self) -> u8 {
        self.fpga
    }
    /// Reserved bits.
    pub fn reserved(&self) -> u8 {
        self.reserved
    }

    /// Set x (0..=15).
    pub fn set_x(&mut self, v: u8) -> Result<&mut Self> {
        X.check(v as u64)?;
        self.x = v;
        Ok(self)
    }
    /// Set y (0..=15).
    pub fn set_y(&mut self, v: u8) -> Result<&mut Self> {
        Y.check(v as u64)?;
        self.y = v;
        Ok(self)
    }
    /// Set z (0..=15).
    pub fn set_z(&mut self, v: u8) -> Result<&mut Self> {
        Z.check(v as u64)?;
        self.z = v;
        Ok(self)
    }
    /// Set the FPGA within the board (0..=3).
    pub fn set_fpga(&mut self, v: u8) -> Result<&mut Self> {
        FPGA.check(v as u64)?;
        self.fpga = v;
        Ok(self)
    }
    /// Set the reserved bits (any 8-bit value).
    pub fn set_reserved(&mut self, v: u8) -> Result<&mut Self> {
        RESERVED.check(v as u64)?;
        self.reserved = v;
        Ok(self)
    }

    /// The 22-bit packed form.
    pub fn to_bits(&self) -> u32 {
        let mut w = 0u128;
        w = X.put(w, self.x as u64);
        w = Y.put(w, self.y as u64);
        w = Z.put(w, self.z as u64);
        w = FPGA.put(w, self.fpga as u64);
        w = RESERVED.put(w, self.reserved as u64);
        w as u32
    }

    /// Unpack 22 bits; bits above 22 are an error.
    pub fn from_bits(bits: u32) -> Result<Self> {
        if bits >> COORDS_BITS != 0 {
            bail!(
                "coordinates 0x{bits:x} have bits set above bit {}",
                COORDS_BITS - 1
            );
        }
        let w = bits as u128;
        Ok(Coords {
            x: X.get(w) as u8,
            y: Y.get(w) as u8,
            z: Z.get(w) as u8,
            fpga: FPGA.get(w) as u8,
            reserved: RESERVED.get(w) as u8,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn fields_tile_and_land_where_specified() {
        check_tiling(&FIELDS, COORDS_BITS).unwrap();
        let mut c = Coords::default();
        c.set_x(15).unwrap();
        assert_eq!(c.to_bits(), 0b1111 << 18);
        let mut c = Coords::default();
        c.set_fpga(3).unwrap();
        assert_eq!(c.to_bits(), 0b11 << 8);
        let mut c = Coords::default();
        c.set_reserved(0xFF).unwrap();
        assert_eq!(c.to_bits(), 0xFF);
    }

    #[test]
    fn setters_reject_out_of_range_naming_the_field() {
        let e = Coords::new(16, 0, 0, 0).unwrap_err().to_string();
        assert!(e.contains("`x`") && e.contains("16"), "{e}");
        let e = Coords::new(0, 0, 0, 4).unwrap_err().to_string();
        assert!(e.contains("`fpga`"), "{e}");
        assert!(Coords::from_bits(1 << 22).is_err());
    }

    #[test]
    fn round_trip() {
        let mut rng = Rng::new(1);
        for _ in 0..10_000 {
            let b = rng.bits(22) as u32;
            assert_eq!(Coords::from_bits(b).unwrap().to_bits(), b);
        }
    }
}
