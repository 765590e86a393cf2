//! RDMA transmit: segmentation of a transfer into packets, the stream that
//! emits them, and the RDMA read request packet.
//!
//! Segmentation (writes and read responses alike) follows the *landing*
//! address `A` (where the bytes go) with `P = max_payload_bytes`: packet `k`
//! starts at landing address `a_k` (`a_0 = A`) and carries
//! `n_k = min(P - a_k mod P, remaining)` bytes. So the first packet runs up
//! to the next `P` boundary, every middle packet is a full aligned `P`
//! block, the last one carries the rest. Why the landing side: every
//! packet's bytes lie in one aligned `P` block of the receiver's memory,
//! hence inside one 4 KiB page — the receiver (the latency-critical side,
//! writing straight to memory) never splits an AXI burst at a 4 KiB
//! boundary and checks each packet against a window with one comparison
//! pair; a transfer with `A` aligned uses the fewest packets. The sender's
//! reads are unaligned in general and may cross a page: its AXI master
//! splits reads there, which costs nothing on the wire.
//!
//! Packet `k` of a transfer: `vaddr = a_k`, `size = n_k`, payload = local
//! bytes `[S + (a_k - A), +n_k)` read from memory when the packet is emitted,
//! `seq = k mod 2^14`, `first = (k == 0)`, `last = (remaining == 0 after
//! it)`, `notify` and `txid` from the descriptor (or read request), `src` =
//! this node, PDID = the channel's (or request's) PDID; other header and
//! footer fields 0.

use super::memory::{AxiErrKinds, SparseMemory};
use super::wire::Packet;
use crate::packet::coords::{Coords, Field};
use crate::packet::footer::Footer;
use crate::packet::header::{Header, PacketType};

/// Bytes of packet `k` starting at landing address `a` with `remaining` bytes left.
pub fn segment_len(a: u64, remaining: u64, max_payload: usize) -> usize {
    let p = max_payload as u64;
    (p - a % p).min(remaining) as usize
}

/// Segments `(offset, landing address, bytes)` of a transfer of `len` bytes to `land`.
pub fn segments(land: u64, len: u64, max_payload: usize) -> Vec<(u64, u64, usize)> {
    let mut v = Vec::new();
    let mut off = 0;
    while off < len {
        let n = segment_len(land + off, len - off, max_payload);
        v.push((off, land + off, n));
        off += n as u64;
    }
    v
}

/// Packets of a transfer: `ceil((land mod P + len) / P)`.
pub fn packet_count(land: u64, len: u64, max_payload: usize) -> u64 {
    let p = max_payload as u64;
    (land % p + len).div_ceil(p)
}

/// A transfer being segmented.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxStream {
    /// `RdmaWrite` or `RdmaReadResp`.
    pub ptype: PacketType,
    /// Landing node.
    pub dest: Coords,
    /// PDID carried by every packet.
    pub pdid: u16,
    /// Transaction id.
    pub txid: u16,
    /// Notify flag.
    pub notify: bool,
    /// Next local (source) address.
    pub src_addr: u64,
    /// Next landing address.
    pub land_addr: u64,
    /// Bytes not yet emitted.
    pub remaining: u64,
    /// Packets emitted so far.
    pub emitted: u64,
}

impl TxStream {
    /// Every packet has been emitted.
    pub fn done(&self) -> bool {
        self.remaining == 0
    }

    /// Emit the next packet from `me`, reading its payload from `mem` now.
    /// Call only while `!done()`.
    pub fn next_packet(&mut self, mem: &SparseMemory, me: Coords, max_payload: usize) -> Packet {
        self.next_packet_checked(mem, me, max_payload).0
    }

    /// As [`TxStream::next_packet`], through the AXI4 read master: the
    /// bytes of a beat answered SLVERR / DECERR read as zero, and a
    /// packet with such a beat is sent with its payload CRC inverted
    /// ([`Packet::build_stomped`]); returns the error kinds of its beats.
    pub fn next_packet_checked(
        &mut self,
        mem: &SparseMemory,
        me: Coords,
        max_payload: usize,
    ) -> (Packet, AxiErrKinds) {
        let n = segment_len(self.land_addr, self.remaining, max_payload);
        let mut buf = [0u8; 256];
        let err = mem.read_checked_into(self.src_addr, &mut buf[..n]);
        let mut h = Header::new(self.ptype, self.dest);
        h.set_vaddr(self.land_addr)
            .expect("descriptor checked: landing end <= 2^42")
            .set_pdid(self.pdid)
            .expect("16-bit PDID");
        let mut f = Footer::new(me);
        f.set_seq((self.emitted & 0x3FFF) as u16)
            .expect("masked")
            .set_txid(self.txid)
            .expect("14-bit txid");
        f.set_first(self.emitted == 0)
            .set_last(self.remaining == n as u64)
            .set_notify(self.notify);
        self.src_addr += n as u64;
        self.land_addr += n as u64;
        self.remaining -= n as u64;
        self.emitted += 1;
        if err == 0 {
            (Packet::build(h, f, &buf[..n]), 0)
        } else {
            (Packet::build_stomped(h, f, &buf[..n]), err)
        }
    }
}

/// Payload of an RDMA read request (16 bytes): bytes 0..8 the requester's
/// landing address (little-endian, < 2^42), bytes 8..12 the length
/// (little-endian, >= 1), bytes 12..16 zero. The header's `vaddr` is the
/// address read at the serving node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadRequest {
    /// Where the data lands at the requester.
    pub land: u64,
    /// Bytes.
    pub len: u32,
}

/// Size of a read request payload.
pub const READ_REQ_BYTES: usize = 16;
/// Read request payload word (bytes little-endian, byte 0 in bits \[7:0\]) \[63:0\]: the landing address.
pub const READ_REQ_LAND: Field = Field {
    name: "land",
    offset: 0,
    width: 64,
};
/// Read request payload word \[95:64\]: the length; bits \[127:96\] are zero.
pub const READ_REQ_LEN: Field = Field {
    name: "len",
    offset: 64,
    width: 32,
};

impl ReadRequest {
    /// The 16 payload bytes.
    pub fn to_payload(&self) -> [u8; READ_REQ_BYTES] {
        let mut b = [0u8; READ_REQ_BYTES];
        b[..8].copy_from_slice(&self.land.to_le_bytes());
        b[8..12].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    /// Parse a payload; `None` when malformed (wrong size, reserved bytes
    /// set, zero length, landing end beyond 2^42).
    pub fn from_payload(b: &[u8]) -> Option<ReadRequest> {
        if b.len() != READ_REQ_BYTES || b[12..].iter().any(|&x| x != 0) {
            return None;
        }
        let land = u64::from_le_bytes(b[..8].try_into().ok()?);
        let len = u32::from_le_bytes(b[8..12].try_into().ok()?);
        if len == 0 || land + len as u64 > 1 << 42 {
            return None;
        }
        Some(ReadRequest { land, len })
    }
}

/// The read request packet of a read descriptor: to `dest`, `vaddr` =
/// remote (source) address, PDID of the channel, `first = last = 1`,
/// `seq = 0`, `notify` and `txid` from the descriptor.
pub fn read_request_packet(
    me: Coords,
    dest: Coords,
    raddr: u64,
    req: ReadRequest,
    pdid: u16,
    txid: u16,
    notify: bool,
) -> Packet {
    let mut h = Header::new(PacketType::RdmaReadReq, dest);
    h.set_vaddr(raddr)
        .expect("descriptor checked: remote end <= 2^42")
        .set_pdid(pdid)
        .expect("16-bit PDID");
    let mut f = Footer::new(me);
    f.set_txid(txid).expect("14-bit txid");
    f.set_first(true).set_last(true).set_notify(notify);
    Packet::build(h, f, &req.to_payload())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Segments tile the transfer, none crosses a P boundary, all but the
    /// first and last are full, and the count matches the formula.
    #[test]
    fn segmentation_properties() {
        let mut rng = Rng::new(5);
        for &p in &[16usize, 64, 256] {
            for _ in 0..3000 {
                let land = (rng.bits(42) & !0x0FFF_FFFF) | rng.bits(12);
                let span = if rng.chance(0.5) { 600 } else { 5000 };
                let len = 1 + rng.below(span);
                let s = segments(land, len, p);
                assert_eq!(s.len() as u64, packet_count(land, len, p));
                let mut next = 0;
                for (k, &(off, a, n)) in s.iter().enumerate() {
                    assert_eq!(off, next);
                    assert_eq!(a, land + off);
                    assert!(n >= 1 && n <= p);
                    assert_eq!(
                        a / p as u64,
                        (a + n as u64 - 1) / p as u64,
                        "crosses boundary"
                    );
                    if k > 0 && k + 1 < s.len() {
                        assert_eq!((n, a % p as u64), (p, 0));
                    }
                    next += n as u64;
                }
                assert_eq!(next, len);
            }
        }
        assert_eq!(
            segments(0x1F0, 0x30, 256),
            vec![(0, 0x1F0, 0x10), (0x10, 0x200, 0x20)]
        );
        assert_eq!(packet_count(0, 1 << 20, 256), 4096);
        assert_eq!(packet_count(1, 1 << 20, 256), 4097);
    }

    #[test]
    fn stream_emits_fields_and_data() {
        let mut mem = SparseMemory::new();
        let data: Vec<u8> = (0..600u32).map(|i| (i * 7) as u8).collect();
        mem.write(0x5003, &data);
        let me = Coords::new(1, 0, 0, 0).unwrap();
        let dest = Coords::new(0, 1, 0, 0).unwrap();
        let mut s = TxStream {
            ptype: PacketType::RdmaWrite,
            dest,
            pdid: 9,
            txid: 77,
            notify: true,
            src_addr: 0x5003,
            land_addr: 0x80F0,
            remaining: 600,
            emitted: 0,
        };
        let mut got = Vec::new();
        let mut k = 0;
        while !s.done() {
            let pk = s.next_packet(&mem, me, 256);
            let h = Header::from_bits(pk.header_word()).unwrap();
            let f = Footer::from_bits(pk.footer_word()).unwrap();
            assert_eq!(
                (h.ptype(), h.dest(), h.pdid()),
                (PacketType::RdmaWrite, dest, 9)
            );
            assert_eq!((f.src(), f.txid(), f.notify(), f.seq()), (me, 77, true, k));
            assert_eq!(f.first(), k == 0);
            assert_eq!(h.vaddr(), 0x80F0 + got.len() as u64);
            let b = pk.payload_bytes(h.size() as usize);
            assert_eq!(f.payload_crc(), crc32fast::hash(&b));
            got.extend_from_slice(&b);
            assert_eq!(f.last(), got.len() == 600);
            k += 1;
        }
        assert_eq!(k, 4, "0x10 + 256 + 256 + 0x48");
        assert_eq!(got, data);
    }

    #[test]
    fn read_request_payload() {
        let r = ReadRequest {
            land: 0x3FF_FFFF_FF00,
            len: 0x100,
        };
        assert_eq!(ReadRequest::from_payload(&r.to_payload()), Some(r));
        let mut b = r.to_payload();
        b[15] = 1;
        assert_eq!(ReadRequest::from_payload(&b), None);
        let over = ReadRequest { len: 0x101, ..r };
        assert_eq!(ReadRequest::from_payload(&over.to_payload()), None);
        let zero = ReadRequest { len: 0, ..r };
        assert_eq!(ReadRequest::from_payload(&zero.to_payload()), None);
        assert_eq!(ReadRequest::from_payload(&[0; 15]), None);
    }
}
