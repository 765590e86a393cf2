//! Footer flit (128 bits).
//!
//! Layout, MSB first (ARCHITECTURE.md "Packet format"):
//!
//! | bits | field | meaning |
//! |---|---|---|
//! | \[127:96\] | `payload_crc` | CRC-32 of the payload bytes ([`crate::common::crc32`]) |
//! | \[95:88\] | `crc8` | CRC-8 of bits \[87:0\], see below |
//! | \[87:76\] | `user` | user bits |
//! | \[75:61\] | `ttl` | time to live |
//! | \[60:47\] | `seq` | sequence number |
//! | \[46\] | `notify` | raise a completion at the destination |
//! | \[45\] | `last` | last packet of a transfer |
//! | \[44\] | `first` | first packet of a transfer |
//! | \[43:36\] | `flags` | flags |
//! | \[35:14\] | `src` | source [`Coords`] |
//! | \[13:0\] | `txid` | transaction id |
//!
//! Footer CRC-8: CRC-8/I-432-1 (the ITU-T I.432.1 / ATM HEC CRC: polynomial
//! x^8 + x^2 + x + 1 = 0x07, init 0x00, not reflected, final xor 0x55;
//! check value 0xA1 for "123456789") over bits \[87:0\] read as 11 bytes,
//! most significant first (byte 0 = bits \[87:80\]), each byte MSB first.
//!
//! Coverage is the 88 control bits, not the payload CRC: a corrupted
//! payload CRC already fails the payload check, and leaving it out keeps the
//! codeword at 96 bits, where 0x07 has Hamming distance 4 (every 1-, 2- and
//! 3-bit error detected; shown exhaustively in the tests). Over all 120
//! other bits no 8-bit CRC reaches distance 4 (0x07 has it only up to 119
//! data bits). The 0x55 final xor makes an all-zero footer invalid.

use super::coords::{Coords, Field};
use anyhow::{anyhow, Result};
use std::fmt;

/// Footer width.
pub const FOOTER_BITS: u32 = 128;
/// Bits covered by the footer CRC-8 (\[87:0\]).
pub const FOOTER_CRC8_COVERED_BITS: u32 = 88;
/// CRC-8 polynomial (x^8 + x^2 + x + 1, normal form).
pub const CRC8_POLY: u8 = 0x07;
/// CRC-8 initial register.
pub const CRC8_INIT: u8 = 0x00;
/// CRC-8 final xor.
pub const CRC8_XOROUT: u8 = 0x55;

/// Payload CRC-32, bits \[127:96\].
pub const PAYLOAD_CRC: Field = Field {
    name: "payload_crc",
    offset: 96,
    width: 32,
};
/// Footer CRC-8, bits \[95:88\].
pub const CRC8: Field = Field {
    name: "crc8",
    offset: 88,
    width: 8,
};
/// User bits, \[87:76\].
pub const USER: Field = Field {
    name: "user",
    offset: 76,
    width: 12,
};
/// Time to live, \[75:61\].
pub const TTL: Field = Field {
    name: "ttl",
    offset: 61,
    width: 15,
};
/// Sequence number, \[60:47\].
pub const SEQ: Field = Field {
    name: "seq",
    offset: 47,
    width: 14,
};
/// Notify, \[46\].
pub const NOTIFY: Field = Field {
    name: "notify",
    offset: 46,
    width: 1,
};
/// Last, \[45\].
pub const LAST: Field = Field {
    name: "last",
    offset: 45,
    width: 1,
};
/// First, \[44\].
pub const FIRST: Field = Field {
    name: "first",
    offset: 44,
    width: 1,
};
/// Flags, \[43:36\].
pub const FLAGS: Field = Field {
    name: "flags",
    offset: 36,
    width: 8,
};
/// Source coordinates, \[35:14\].
pub const SRC: Field = Field {
    name: "src",
    offset: 14,
    width: 22,
};
/// Transaction id, \[13:0\].
pub const TXID: Field = Field {
    name: "txid",
    offset: 0,
    width: 14,
};
/// Every field, MSB first.
pub const FIELDS: [Field; 11] = [
    PAYLOAD_CRC,
    CRC8,
    USER,
    TTL,
    SEQ,
    NOTIFY,
    LAST,
    FIRST,
    FLAGS,
    SRC,
    TXID,
];

/// CRC-8/I-432-1 of `bytes`.
pub fn crc8(bytes: &[u8]) -> u8 {
    let mut c = CRC8_INIT;
    for &b in bytes {
        c ^= b;
        for _ in 0..8 {
            c = if c & 0x80 != 0 {
                (c << 1) ^ CRC8_POLY
            } else {
                c << 1
            };
        }
    }
    c ^ CRC8_XOROUT
}

/// The footer CRC-8 of `word` (over bits \[87:0\]; other bits ignored).
pub fn footer_crc8(word: u128) -> u8 {
    let mut bytes = [0u8; 11];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = (word >> (80 - 8 * i)) as u8;
    }
    crc8(&bytes)
}

/// Why a footer word was rejected. Carried inside `anyhow::Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FooterError {
    /// The CRC-8 field does not match bits \[87:0\].
    Crc8Mismatch {
        /// CRC-8 computed from the received bits.
        expected: u8,
        /// CRC-8 field received.
        actual: u8,
    },
}

impl fmt::Display for FooterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FooterError::Crc8Mismatch { expected, actual } => write!(
                f,
                "footer field `crc8` = 0x{actual:02x}, but bits [87:0] give 0x{expected:02x}"
            ),
        }
    }
}

impl std::error::Error for FooterError {}

/// A decoded footer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Footer {
    payload_crc: u32,
    user: u16,
    ttl: u16,
    seq: u16,
    notify: bool,
    last: bool,
    first: bool,
    flags: u8,
    src: Coords,
    txid: u16,
}

impl Footer {
    /// A footer from `src`, every other field zero.
    pub fn new(src: Coords) -> Self {
        Footer {
            src,
            ..Default::default()
        }
    }

    setter!(
        /// Payload CRC-32.
        set_payload_crc, payload_crc, payload_crc, u32, PAYLOAD_CRC);
    setter!(
        /// User bits.
        set_user, user, user, u16, USER);
    setter!(
        /// Time to live.
        set_ttl, ttl, ttl, u16, TTL);
    setter!(
        /// Sequence number.
        set_seq, seq, seq, u16, SEQ);
    setter!(
        /// Flags.
        set_flags, flags, flags, u8, FLAGS);
    setter!(
        /// Transaction id.
        set_txid, txid, txid, u16, TXID);

    /// Notify bit.
    pub fn notify(&self) -> bool {
        self.notify
    }
    /// Set the notify bit.
    pub fn set_notify(&mut self, v: bool) -> &mut Self {
        self.notify = v;
        self
    }
    /// Last packet of a transfer.
    pub fn last(&self) -> bool {
        self.last
    }
    /// Set the last bit.
    pub fn set_last(&mut self, v: bool) -> &mut Self {
        self.last = v;
        self
    }
    /// First packet of a transfer.
    pub fn first(&self) -> bool {
        self.first
    }
    /// Set the first bit.
    pub fn set_first(&mut self, v: bool) -> &mut Self {
        self.first = v;
        self
    }
    /// Source coordinates.
    pub fn src(&self) -> Coords {
        self.src
    }
    /// Set the source.
    pub fn set_src(&mut self, c: Coords) -> &mut Self {
        self.src = c;
        self
    }

    /// The 128-bit footer word with its CRC-8.
    pub fn to_bits(&self) -> u128 {
        let mut w = 0u128;
        w = PAYLOAD_CRC.put(w, self.payload_crc as u64);
        w = USER.put(w, self.user as u64);
        w = TTL.put(w, self.ttl as u64);
        w = SEQ.put(w, self.seq as u64);
        w = NOTIFY.put(w, self.notify as u64);
        w = LAST.put(w, self.last as u64);
        w = FIRST.put(w, self.first as u64);
        w = FLAGS.put(w, self.flags as u64);
        w = SRC.put(w, self.src.to_bits() as u64);
        w = TXID.put(w, self.txid as u64);
        CRC8.put(w, footer_crc8(w) as u64)
    }

    /// Decode a footer word; a CRC-8 mismatch is a [`FooterError`].
    pub fn from_bits(word: u128) -> Result<Footer> {
        let expected = footer_crc8(word);
        let actual = CRC8.get(word) as u8;
        if expected != actual {
            return Err(anyhow!(FooterError::Crc8Mismatch { expected, actual }));
        }
        Ok(Footer {
            payload_crc: PAYLOAD_CRC.get(word) as u32,
            user: USER.get(word) as u16,
            ttl: TTL.get(word) as u16,
            seq: SEQ.get(word) as u16,
            notify: NOTIFY.get(word) == 1,
            last: LAST.get(word) == 1,
            first: FIRST.get(word) == 1,
            flags: FLAGS.get(word) as u8,
            src: Coords::from_bits(SRC.get(word) as u32)?,
            txid: TXID.get(word) as u16,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::coords::check_tiling;

    #[test]
    fn fields_tile_the_word() {
        check_tiling(&FIELDS, FOOTER_BITS).unwrap();
    }

    #[test]
    fn crc8_is_i432_1() {
        assert_eq!(crc8(b"123456789"), 0xA1);
        assert_eq!(crc8(&[]), 0x55);
        // All-zero footer is not a valid footer.
        assert!(Footer::from_bits(0).is_err());
    }

    /// Every 1-, 2- and 3-bit error in the 96 covered bits (88 data + 8
    /// CRC) is detected: Hamming distance 4.
    #[test]
    fn crc8_detects_every_error_of_up_to_three_bits() {
        let mut f = Footer::new(Coords::new(3, 2, 1, 0).unwrap());
        f.set_seq(77).unwrap().set_txid(5).unwrap();
        let w = f.to_bits();
        let bits: Vec<u32> = (0..96).collect(); // bits 0..88 data, 88..96 crc8
        let flip = |w: u128, b: &[u32]| b.iter().fold(w, |w, &i| w ^ (1u128 << i));
        for a in 0..bits.len() {
            assert!(Footer::from_bits(flip(w, &[bits[a]])).is_err());
            for b in a + 1..bits.len() {
                assert!(Footer::from_bits(flip(w, &[bits[a], bits[b]])).is_err());
                for c in b + 1..bits.len() {
                    let e = flip(w, &[bits[a], bits[b], bits[c]]);
                    assert_ne!(footer_crc8(e), CRC8.get(e) as u8, "{a} {b} {c}");
                }
            }
        }
    }
}
