//! Header fields the router reads, by the bit offsets of ARCHITECTURE.md's
//! "Packet format" (128-bit header, MSB first):
//!
//! | field | bits | | field | bits |
//! |---|---|---|---|---|
//! | ecc | 127:112 | | size | 61:48 |
//! | fpga offset | 111:110 | | packet type | 47:43 |
//! | path | 109:107 | | destination coordinates | 42:21 |
//! | reserved | 106:104 | | PDID | 20:5 |
//! | destination virtual address | 103:62 | | vc | 4:0 |
//!
//! Coordinates (22 b, MSB first): x 4 · y 4 · z 4 · fpga 2 · reserved 8, so in the
//! header x = 42:39, y = 38:35, z = 34:31, fpga = 30:29.
//!
//! Simulation-only extension for networks with a dimension above 16 (e.g.
//! 32x32x32): coordinates are 5 bits wide and bit 4 of x, y, z sits in the
//! top three reserved bits (coordinate bits 7, 6, 5; header bits 28, 27, 26).
//! Routers of networks up to 16 per dimension (all hardware) ignore those
//! bits, exactly as the reserved bits they are.
//!
//! This is the only place the router and the simulator read the layout
//! from; the offsets come from [`crate::packet::header`]'s field table.
//!
//! Header check ([`header_ecc_ok`]): the ecc field's low byte is the SECDED
//! code of bits 111:0 ([`crate::packet::header::header_ecc`], ecc\[15:8\]
//! reserved and ignored). The router does not correct: a header whose check
//! byte differs from the recomputed one (any detected error, single or
//! double) is bad and the packet is dropped and counted. Correcting would put
//! a syndrome decoder and a correction mux between the buffer read and route
//! compute in the allocation cycle; links carry their own CRC and
//! retransmission, so a header error at a router is a rare upset. A router
//! can be given another check with `Router::set_header_check`.

/// A header check: `true` when the header is acceptable (SECDED reports no error).
pub type HeaderCheck = fn(u128) -> bool;

/// Least significant bit of each header field (from `crate::packet::header`).
pub mod lsb {
    use crate::packet::header as h;
    pub const ECC: u32 = h::ECC.offset;
    pub const FPGA_OFFSET: u32 = h::FPGA_OFFSET.offset;
    pub const PATH: u32 = h::PATH.offset;
    pub const DVA: u32 = h::VADDR.offset;
    pub const SIZE: u32 = h::SIZE.offset;
    pub const PTYPE: u32 = h::PTYPE.offset;
    pub const DEST: u32 = h::DEST.offset;
    pub const PDID: u32 = h::PDID.offset;
    pub const VC: u32 = h::VC.offset;
}

/// Destination (or source) coordinates of a packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Coords {
    pub x: u8,
    pub y: u8,
    pub z: u8,
    /// FPGA within the board: the local (ejection) port at the destination router.
    pub fpga: u8,
}

impl Coords {
    /// The 22-bit field (coordinates below 16 leave the reserved bits zero).
    pub fn pack(&self) -> u32 {
        let (x, y, z) = (self.x as u32, self.y as u32, self.z as u32);
        (x & 15) << 18
            | (y & 15) << 14
            | (z & 15) << 10
            | (self.fpga as u32 & 3) << 8
            | (x >> 4 & 1) << 7
            | (y >> 4 & 1) << 6
            | (z >> 4 & 1) << 5
    }

    /// From a 22-bit field with 4-bit coordinates (the reserved bits ignored).
    pub fn unpack(v: u32) -> Self {
        Coords {
            x: (v >> 18 & 15) as u8,
            y: (v >> 14 & 15) as u8,
            z: (v >> 10 & 15) as u8,
            fpga: (v >> 8 & 3) as u8,
        }
    }

    /// From a 22-bit field with 5-bit coordinates (simulation of dimensions above 16).
    pub fn unpack_wide(v: u32) -> Self {
        let mut c = Coords::unpack(v);
        c.x |= ((v >> 7 & 1) << 4) as u8;
        c.y |= ((v >> 6 & 1) << 4) as u8;
        c.z |= ((v >> 5 & 1) << 4) as u8;
        c
    }

    /// `[x, y, z]` as array indices.
    pub fn xyz(&self) -> [usize; 3] {
        [self.x as usize, self.y as usize, self.z as usize]
    }
}

#[inline]
fn field(h: u128, lsb: u32, bits: u32) -> u64 {
    ((h >> lsb) & ((1u128 << bits) - 1)) as u64
}

/// Destination coordinates of header `h` (4-bit coordinates).
#[inline]
pub fn dest(h: u128) -> Coords {
    Coords::unpack(field(h, lsb::DEST, 22) as u32)
}

/// Destination coordinates of header `h` with 5-bit coordinates (simulation only).
#[inline]
pub fn dest_wide(h: u128) -> Coords {
    Coords::unpack_wide(field(h, lsb::DEST, 22) as u32)
}

/// Destination virtual address (42 bits) of header `h`.
#[inline]
pub fn dva(h: u128) -> u64 {
    field(h, lsb::DVA, 42)
}

/// Size in bytes (14 bits) of header `h`.
#[inline]
pub fn size(h: u128) -> u64 {
    field(h, lsb::SIZE, 14)
}

/// The header fields the router and the network simulator use; the others are zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeaderFields {
    pub dest: Coords,
    /// Destination virtual address, 42 bits.
    pub dva: u64,
    /// Payload size in bytes, 14 bits.
    pub size: u16,
    /// Packet type, 5 bits.
    pub ptype: u8,
    /// Protection domain, 16 bits.
    pub pdid: u16,
    /// VC field, 5 bits (the router does not read it: the class travels in the flit sideband).
    pub vc: u8,
}

impl HeaderFields {
    /// The 128-bit header with a valid ecc field.
    pub fn pack(&self) -> u128 {
        let h = ((self.dva & ((1 << 42) - 1)) as u128) << lsb::DVA
            | ((self.size & 0x3fff) as u128) << lsb::SIZE
            | ((self.ptype & 31) as u128) << lsb::PTYPE
            | (self.dest.pack() as u128) << lsb::DEST
            | (self.pdid as u128) << lsb::PDID
            | ((self.vc & 31) as u128) << lsb::VC;
        seal_header(h)
    }
}

/// Fill in the ecc field of `h` (bits 127:112) from the other 112 bits.
pub fn seal_header(h: u128) -> u128 {
    use crate::packet::header::{header_ecc, ECC};
    ECC.put(h, header_ecc(h) as u64)
}

/// The default header check: the SECDED check byte matches bits 111:0 (no error detected).
pub fn header_ecc_ok(h: u128) -> bool {
    use crate::packet::header::{header_ecc, ECC, HEADER_CHECK_BITS};
    let mask = (1u16 << HEADER_CHECK_BITS) - 1;
    (ECC.get(h) as u16 & mask) == header_ecc(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_sit_at_the_documented_bits() {
        let c = Coords {
            x: 0xa,
            y: 0x5,
            z: 0xc,
            fpga: 2,
        };
        let h = HeaderFields {
            dest: c,
            dva: 1,
            size: 0x3fff,
            ptype: 0,
            pdid: 0,
            vc: 0,
        }
        .pack();
        assert_eq!(h >> 39 & 15, 0xa);
        assert_eq!(h >> 35 & 15, 0x5);
        assert_eq!(h >> 31 & 15, 0xc);
        assert_eq!(h >> 29 & 3, 2);
        assert_eq!(h >> 62 & 1, 1);
        assert_eq!(h >> 48 & 0x3fff, 0x3fff);
        assert_eq!(dest(h), c);
        assert_eq!(dva(h), 1);
        assert_eq!(size(h), 0x3fff);
        assert_eq!(Coords::unpack(c.pack()), c);
        let w = Coords {
            x: 31,
            y: 16,
            z: 5,
            fpga: 1,
        };
        assert_eq!(Coords::unpack_wide(w.pack()), w);
        assert_eq!(
            Coords::unpack(w.pack()),
            Coords {
                x: 15,
                y: 0,
                z: 5,
                fpga: 1
            }
        );
    }
}
