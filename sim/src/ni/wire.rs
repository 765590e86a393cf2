//! A packet as the NI sends and receives it: a sequence of 128-bit words
//! (header, `ceil(size / 16)` payload words, footer).
//!
//! Payload byte `i` of the packet is byte `i % 16` of payload word `i / 16`,
//! and byte `j` of a word is its bits `[8j+7:8j]` (little-endian, as the
//! `crc32` block reads a flit). Bytes of the last payload word beyond `size`
//! are zero when the NI sends them and ignored when it receives them. The
//! footer's `payload_crc` is [`crc32`] of exactly the `size` payload bytes
//! (0 for an empty payload).

use crate::common::crc32::crc32;
use crate::packet::footer::Footer;
use crate::packet::header::Header;
use crate::router::Flit;

/// Bytes per packet word.
pub const WORD_BYTES: usize = 16;

/// One packet: `words[0]` is the header, the last word the footer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Packet {
    /// Header, payload words, footer.
    pub words: Vec<u128>,
}

/// Payload words holding `bytes` bytes.
pub fn payload_words(bytes: usize) -> usize {
    bytes.div_ceil(WORD_BYTES)
}

impl Packet {
    /// The packet carrying `payload` with `header` and `footer`; sets the
    /// header's `size` to the payload length and the footer's `payload_crc`.
    /// The payload is at most 256 bytes (the NI's callers guarantee it).
    pub fn build(mut header: Header, mut footer: Footer, payload: &[u8]) -> Packet {
        header
            .set_size(payload.len() as u16)
            .expect("an NI payload (<= 256 B) fits the 14-bit size field");
        footer
            .set_payload_crc(crc32(payload))
            .expect("a CRC-32 fits its 32-bit field");
        let mut words = Vec::with_capacity(2 + payload_words(payload.len()));
        words.push(header.to_bits());
        for chunk in payload.chunks(WORD_BYTES) {
            let mut b = [0u8; WORD_BYTES];
            b[..chunk.len()].copy_from_slice(chunk);
            words.push(u128::from_le_bytes(b));
        }
        words.push(footer.to_bits());
        Packet { words }
    }

    /// As [`Packet::build`], but with the footer's `payload_crc` inverted
    /// (`!crc32(payload)`, "stomped"): the NI sends a packet this way when
    /// some AXI4 beat of its payload read answered SLVERR or DECERR, so
    /// that no receiver takes its payload as good (it fails the payload
    /// CRC-32 check: `PAYLOAD_CRC`).
    pub fn build_stomped(header: Header, mut footer: Footer, payload: &[u8]) -> Packet {
        let mut p = Packet::build(header, footer, payload);
        let last = p.words.len() - 1;
        footer
            .set_payload_crc(!crc32(payload))
            .expect("a CRC-32 fits its 32-bit field");
        p.words[last] = footer.to_bits();
        p
    }

    /// The header word (0 for an empty packet).
    pub fn header_word(&self) -> u128 {
        self.words.first().copied().unwrap_or(0)
    }

    /// The footer word (0 for a packet of fewer than two words).
    pub fn footer_word(&self) -> u128 {
        if self.words.len() < 2 {
            0
        } else {
            self.words[self.words.len() - 1]
        }
    }

    /// The payload words (between header and footer).
    pub fn payload(&self) -> &[u128] {
        if self.words.len() < 2 {
            &[]
        } else {
            &self.words[1..self.words.len() - 1]
        }
    }

    /// The first `size` payload bytes (zero-filled if the packet is shorter).
    pub fn payload_bytes(&self, size: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(size);
        for w in self.payload() {
            v.extend_from_slice(&w.to_le_bytes());
        }
        v.resize(size, 0);
        v
    }

    /// Length in words (flits), header and footer included.
    pub fn len_words(&self) -> usize {
        self.words.len()
    }

    /// The packet as 128-bit router flits on virtual channel `vc`: word `i`
    /// in `data[0..2]` (low 64 bits first), `head` on the first, `tail` on
    /// the last.
    pub fn to_flits(&self, vc: u8) -> Vec<Flit> {
        let n = self.words.len();
        self.words
            .iter()
            .enumerate()
            .map(|(i, &w)| Flit {
                data: [w as u64, (w >> 64) as u64, 0, 0],
                head: i == 0,
                tail: i + 1 == n,
                vc,
            })
            .collect()
    }

    /// The packet carried by 128-bit `flits` (sideband ignored).
    pub fn from_flits(flits: &[Flit]) -> Packet {
        Packet {
            words: flits.iter().map(|f| f.low128()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::coords::Coords;
    use crate::packet::header::PacketType;

    #[test]
    fn layout_crc_and_padding() {
        let payload: Vec<u8> = (0..37u8).collect();
        let h = Header::new(PacketType::RdmaWrite, Coords::new(1, 2, 3, 0).unwrap());
        let f = Footer::new(Coords::default());
        let p = Packet::build(h, f, &payload);
        assert_eq!(p.len_words(), 2 + 3);
        assert_eq!(p.payload()[0] & 0xFF, 0);
        assert_eq!((p.payload()[0] >> 8) & 0xFF, 1);
        assert_eq!((p.payload()[2] >> 32) & 0xFF, 36);
        assert_eq!(p.payload()[2] >> 40, 0, "padding is zero");
        assert_eq!(p.payload_bytes(37), payload);
        let hd = Header::from_bits(p.header_word()).unwrap();
        assert_eq!(hd.size(), 37);
        let fd = Footer::from_bits(p.footer_word()).unwrap();
        assert_eq!(fd.payload_crc(), crc32fast::hash(&payload));
        let flits = p.to_flits(3);
        assert_eq!(flits.len(), 5);
        assert!(flits[0].head && !flits[0].tail && flits[4].tail && !flits[4].head);
        assert!(flits.iter().all(|f| f.vc == 3 && f.data[2] == 0));
        assert_eq!(Packet::from_flits(&flits), p);
        let empty = Packet::build(h, f, &[]);
        assert_eq!(empty.len_words(), 2);
        assert_eq!(
            Footer::from_bits(empty.footer_word())
                .unwrap()
                .payload_crc(),
            0
        );
    }
}
