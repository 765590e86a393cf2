//! Golden model of `crc32`: CRC-32 (IEEE 802.3) over one flit per cycle.
//!
//! The CRC is the Ethernet/zlib one: reflected, polynomial 0xEDB88320,
//! register initialised to 0xFFFFFFFF, result inverted (xor 0xFFFFFFFF).
//!
//! Byte order of a flit: byte `i` is bits `[8i+7:8i]` of the data word
//! (little-endian, as AXI4-Stream), bytes are fed to the CRC in increasing
//! `i`, and each byte least significant bit first (the reflected CRC's usual
//! order). A partial flit holds its `bytes` valid bytes in bytes `0..bytes`;
//! higher bytes are ignored. `bytes` outside `1..=width/8` counts as a full
//! flit (the RTL does the same, so every input has a defined result).
//!
//! Cycle behaviour (what the RTL does):
//! - `base = start ? 0xFFFFFFFF : acc` (`start` begins a new packet; the flit
//!   of this cycle, if `valid`, is its first);
//! - `next = valid ? update(base, flit bytes) : base`;
//! - output `crc = !next` in the same cycle (latency 0: the CRC includes the
//!   flit on this cycle), and `acc <= reset ? 0xFFFFFFFF : next` at the edge.
//!
//! `start` without `valid` therefore empties the packet (crc = 0x00000000,
//! the CRC of no bytes).

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Reflected polynomial of CRC-32 (IEEE 802.3).
pub const CRC32_POLY: u32 = 0xEDB8_8320;
/// Register value at the start of a packet.
pub const CRC32_INIT: u32 = 0xFFFF_FFFF;
/// Final xor applied to the register to give the CRC.
pub const CRC32_XOROUT: u32 = 0xFFFF_FFFF;
/// Flit widths (bits) the block supports.
pub const CRC32_WIDTHS: [usize; 3] = [64, 128, 256];
/// Largest flit, in 64-bit words (the model's data holds this many).
pub const CRC32_MAX_WORDS: usize = 4;

const fn make_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ CRC32_POLY
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static TABLE: [u32; 256] = make_table();

/// Advance the CRC register (no init, no final xor) over `bytes`.
/// Linear over GF(2) in `(state, bytes)`: the RTL's XOR matrices are built from it.
#[inline]
pub fn crc32_update(mut state: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        state = TABLE[((state ^ b as u32) & 0xFF) as usize] ^ (state >> 8);
    }
    state
}

/// CRC-32 of a whole message (init and final xor applied).
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32_update(CRC32_INIT, bytes) ^ CRC32_XOROUT
}

/// Register after one zero byte: the map `A` with `update(s, [0]) = A s`.
#[inline]
pub fn crc32_zero_byte(state: u32) -> u32 {
    crc32_update(state, &[0])
}

/// Inverse of [`crc32_zero_byte`]: `crc32_zero_byte(crc32_unzero_byte(s)) == s`.
///
/// One reflected bit step is `s' = (s >> 1) ^ (s & 1 ? P : 0)`; since bit 31
/// of `s >> 1` is 0 and bit 31 of `P` is 1, bit 31 of `s'` says whether `P`
/// was added, which makes the step invertible.
pub fn crc32_unzero_byte(mut state: u32) -> u32 {
    for _ in 0..8 {
        state = if state & 0x8000_0000 != 0 {
            ((state ^ CRC32_POLY) << 1) | 1
        } else {
            state << 1
        };
    }
    state
}

/// Parameters of `crc32`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Crc32Params {
    /// Flit width in bits: 64, 128 or 256.
    pub width: usize,
}

impl Default for Crc32Params {
    /// 128-bit flits.
    fn default() -> Self {
        Crc32Params { width: 128 }
    }
}

impl Crc32Params {
    /// Reject unsupported widths, naming the key, the value and the rule.
    pub fn validate(&self) -> Result<()> {
        if !CRC32_WIDTHS.contains(&self.width) {
            bail!(
                "crc32.width = {}: must be one of {:?} (bits per flit)",
                self.width,
                CRC32_WIDTHS
            );
        }
        Ok(())
    }

    /// Bytes per flit (`width / 8`).
    pub fn flit_bytes(&self) -> usize {
        self.width / 8
    }

    /// Width of the `bytes` port: enough bits for the value `width / 8`.
    pub fn bytes_port_bits(&self) -> u32 {
        usize::BITS - self.flit_bytes().leading_zeros()
    }
}

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Crc32Inputs {
    /// Synchronous reset: the register returns to 0xFFFFFFFF at the edge.
    pub reset: bool,
    /// This cycle begins a new packet.
    pub start: bool,
    /// `data` holds a flit.
    pub valid: bool,
    /// Flit, 64-bit words least significant first (only `width` bits used).
    pub data: [u64; CRC32_MAX_WORDS],
    /// Valid bytes of the flit (1..=width/8; other values mean a full flit).
    pub bytes: u32,
}

/// Outputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Crc32Outputs {
    /// CRC of the packet so far, including this cycle's flit when `valid`.
    pub crc: u32,
}

/// Cycle-level model of the `crc32` block.
#[derive(Clone, Debug)]
pub struct Crc32 {
    flit_bytes: usize,
    acc: u32,
}

impl Crc32 {
    /// A model at power-on (register = 0xFFFFFFFF).
    pub fn new(params: &Crc32Params) -> Result<Self> {
        params.validate()?;
        Ok(Crc32 {
            flit_bytes: params.flit_bytes(),
            acc: CRC32_INIT,
        })
    }

    /// Back to power-on.
    pub fn reset(&mut self) {
        self.acc = CRC32_INIT;
    }

    /// Bytes of a flit that count, given the `bytes` input.
    #[inline]
    pub fn valid_bytes(&self, bytes: u32) -> usize {
        if bytes == 0 || bytes as usize > self.flit_bytes {
            self.flit_bytes
        } else {
            bytes as usize
        }
    }

    #[inline]
    fn next(&self, i: &Crc32Inputs) -> u32 {
        let base = if i.start { CRC32_INIT } else { self.acc };
        if !i.valid {
            return base;
        }
        let n = self.valid_bytes(i.bytes);
        let mut buf = [0u8; 8 * CRC32_MAX_WORDS];
        for (w, chunk) in i.data.iter().zip(buf.chunks_exact_mut(8)) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        crc32_update(base, &buf[..n])
    }

    /// Outputs during this cycle (before the edge).
    #[inline]
    pub fn outputs(&self, i: &Crc32Inputs) -> Crc32Outputs {
        Crc32Outputs {
            crc: self.next(i) ^ CRC32_XOROUT,
        }
    }

    /// The clock edge.
    #[inline]
    pub fn tick(&mut self, i: &Crc32Inputs) {
        self.acc = if i.reset { CRC32_INIT } else { self.next(i) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Bit-at-a-time CRC-32, straight from the definition.
    fn bitwise(bytes: &[u8]) -> u32 {
        let mut c = 0xFFFF_FFFFu32;
        for &b in bytes {
            c ^= b as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0xEDB8_8320
                } else {
                    c >> 1
                };
            }
        }
        !c
    }

    #[test]
    fn check_value_and_references() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        let mut rng = Rng::new(3);
        for len in 0..300 {
            let v: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            assert_eq!(crc32(&v), bitwise(&v));
            assert_eq!(crc32(&v), crc32fast::hash(&v), "len {len}");
        }
    }

    #[test]
    fn unzero_inverts_zero_byte() {
        let mut rng = Rng::new(9);
        for _ in 0..10_000 {
            let s = rng.next_u64() as u32;
            assert_eq!(crc32_zero_byte(crc32_unzero_byte(s)), s);
            assert_eq!(crc32_unzero_byte(crc32_zero_byte(s)), s);
        }
    }

    #[test]
    fn params_are_checked() {
        for w in CRC32_WIDTHS {
            assert!(Crc32Params { width: w }.validate().is_ok());
        }
        let e = Crc32Params { width: 96 }
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("crc32.width") && e.contains("96"), "{e}");
        assert_eq!(Crc32Params { width: 64 }.bytes_port_bits(), 4);
        assert_eq!(Crc32Params { width: 128 }.bytes_port_bits(), 5);
        assert_eq!(Crc32Params { width: 256 }.bytes_port_bits(), 6);
        assert!(Crc32::new(&Crc32Params { width: 8 }).is_err());
    }

    /// Random byte streams of random lengths, chopped into flits (the last
    /// one partial), fed through the cycle model with idle cycles between
    /// flits, compared with crc32fast at every flit.
    #[test]
    fn flit_stream_matches_crc32fast() {
        let mut rng = Rng::new(42);
        for width in CRC32_WIDTHS {
            let p = Crc32Params { width };
            let n = p.flit_bytes();
            let mut m = Crc32::new(&p).unwrap();
            for _ in 0..400 {
                let len = 1 + rng.below(5 * n as u64) as usize;
                let msg: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                let mut first = true;
                for (k, chunk) in msg.chunks(n).enumerate() {
                    while rng.chance(0.3) {
                        let idle = Crc32Inputs {
                            data: [rng.next_u64(); 4],
                            bytes: rng.next_u64() as u32,
                            ..Default::default()
                        };
                        m.tick(&idle);
                    }
                    let mut data = [0u64; 4];
                    for (i, &b) in chunk.iter().enumerate() {
                        data[i / 8] |= (b as u64) << (8 * (i % 8));
                    }
                    // Garbage above the valid bytes must be ignored.
                    if chunk.len() < n {
                        for i in chunk.len()..n {
                            data[i / 8] |= (rng.next_u64() & 0xFF) << (8 * (i % 8));
                        }
                    }
                    let inp = Crc32Inputs {
                        reset: false,
                        start: first,
                        valid: true,
                        data,
                        bytes: if chunk.len() == n && rng.chance(0.5) {
                            0 // out of range: counts as a full flit
                        } else {
                            chunk.len() as u32
                        },
                    };
                    first = false;
                    let end = (k * n + chunk.len()).min(len);
                    assert_eq!(
                        m.outputs(&inp).crc,
                        crc32fast::hash(&msg[..end]),
                        "width {width} len {len} flit {k}"
                    );
                    m.tick(&inp);
                }
                // Idle cycle: the output holds the finished CRC.
                let idle = Crc32Inputs::default();
                assert_eq!(m.outputs(&idle).crc, crc32fast::hash(&msg));
            }
        }
    }

    #[test]
    fn start_without_valid_empties_and_reset_restarts() {
        let p = Crc32Params { width: 64 };
        let mut m = Crc32::new(&p).unwrap();
        let flit = Crc32Inputs {
            start: true,
            valid: true,
            data: [0x0706_0504_0302_0100, 0, 0, 0],
            bytes: 8,
            ..Default::default()
        };
        m.tick(&flit);
        let start_only = Crc32Inputs {
            start: true,
            ..Default::default()
        };
        assert_eq!(m.outputs(&start_only).crc, 0);
        m.tick(&Crc32Inputs {
            reset: true,
            ..Default::default()
        });
        assert_eq!(m.outputs(&Crc32Inputs::default()).crc, 0);
        // Continuing after reset without start is a packet from the init value.
        let cont = Crc32Inputs {
            start: false,
            ..flit
        };
        assert_eq!(m.outputs(&cont).crc, crc32(&[0, 1, 2, 3, 4, 5, 6, 7]));
    }
}
