//! Why a received packet is rejected, and the error queue that reports it.

use crate::packet::coords::{Coords, Field};
use crate::packet::footer::Footer;
use crate::packet::header::{Header, PacketType};
use std::collections::VecDeque;

// ---- register words of an entry ([`ErrorEntry::words`]) ----
/// ERRQ_W0 \[3:0\]: the reject reason code.
pub const ERRQ_W0_REASON: Field = Field {
    name: "reason",
    offset: 0,
    width: 4,
};
/// ERRQ_W0 \[4\]: the header fields are valid.
pub const ERRQ_W0_HEADER_OK: Field = Field {
    name: "header_ok",
    offset: 4,
    width: 1,
};
/// ERRQ_W0 \[5\]: the footer fields are valid.
pub const ERRQ_W0_FOOTER_OK: Field = Field {
    name: "footer_ok",
    offset: 5,
    width: 1,
};
/// ERRQ_W0 \[12:8\]: the packet type code.
pub const ERRQ_W0_PTYPE: Field = Field {
    name: "ptype",
    offset: 8,
    width: 5,
};
/// ERRQ_W0 \[29:16\]: the transaction id.
pub const ERRQ_W0_TXID: Field = Field {
    name: "txid",
    offset: 16,
    width: 14,
};
/// ERRQ_W1 \[21:0\]: the source coordinates.
pub const ERRQ_W1_SRC: Field = Field {
    name: "src",
    offset: 0,
    width: 22,
};
/// ERRQ_W2 \[15:0\]: the PDID.
pub const ERRQ_W2_PDID: Field = Field {
    name: "pdid",
    offset: 0,
    width: 16,
};
/// ERRQ_W2 \[29:16\]: the size.
pub const ERRQ_W2_SIZE: Field = Field {
    name: "size",
    offset: 16,
    width: 14,
};
/// ERRQ_W3 \[31:0\]: vaddr\[31:0\].
pub const ERRQ_W3_VADDR_LO: Field = Field {
    name: "vaddr_lo",
    offset: 0,
    width: 32,
};
/// ERRQ_W4 \[9:0\]: vaddr\[41:32\].
pub const ERRQ_W4_VADDR_HI: Field = Field {
    name: "vaddr_hi",
    offset: 0,
    width: 10,
};

/// Reason a received packet was rejected, in the order the receive path
/// checks them (the first failing check names the packet's reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum RejectReason {
    /// Header SECDED found an uncorrectable error.
    HeaderEcc = 1,
    /// Header type code names no packet type.
    HeaderType = 2,
    /// Footer CRC-8 mismatch.
    FooterCrc = 3,
    /// Sizes, word count, flags or fields inconsistent with the type.
    Format = 4,
    /// Header destination is not this node.
    Misrouted = 5,
    /// Payload CRC-32 mismatch.
    PayloadCrc = 6,
    /// No enabled window holds the whole address range.
    Window = 7,
    /// A window holds the range but none with the packet's PDID (or the
    /// mailbox's PDID differs).
    Pdid = 8,
    /// An acknowledgement for no message this node is waiting on.
    Stale = 9,
    /// A type this NI does not handle (allreduce fragment, generic ack).
    Unsupported = 10,
    /// The packet arrived on a VC of the other message class than its
    /// type's ([`PacketType::class`]).
    WrongClass = 11,
}

impl RejectReason {
    /// Every reason, in code order.
    pub const ALL: [RejectReason; 11] = [
        RejectReason::HeaderEcc,
        RejectReason::HeaderType,
        RejectReason::FooterCrc,
        RejectReason::Format,
        RejectReason::Misrouted,
        RejectReason::PayloadCrc,
        RejectReason::Window,
        RejectReason::Pdid,
        RejectReason::Stale,
        RejectReason::Unsupported,
        RejectReason::WrongClass,
    ];
    /// Codes are 1..=MAX_CODE.
    pub const MAX_CODE: u8 = 11;

    /// The 4-bit code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The reason of a code, if any.
    pub fn from_code(c: u8) -> Option<Self> {
        Self::ALL.iter().copied().find(|r| r.code() == c)
    }
}

/// One error-queue entry: what the NI could trust of a rejected packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorEntry {
    /// Why it was rejected.
    pub reason: RejectReason,
    /// The decoded header, when its ECC and type were good.
    pub header: Option<Header>,
    /// The decoded footer, when its CRC-8 was good.
    pub footer: Option<Footer>,
}

impl ErrorEntry {
    /// The five register words ERRQ_W0..W4:
    /// - W0: reason\[3:0\], header_ok\[4\], footer_ok\[5\], ptype\[12:8\], txid\[29:16\];
    /// - W1: source coordinates\[21:0\];
    /// - W2: pdid\[15:0\], size\[29:16\];
    /// - W3: vaddr\[31:0\]; W4: vaddr\[41:32\].
    ///
    /// Fields from an untrusted header or footer read as zero.
    pub fn words(&self) -> [u32; 5] {
        let mut w = [0u32; 5];
        w[0] = self.reason.code() as u32;
        if let Some(h) = &self.header {
            w[0] |= 1 << 4 | (h.ptype().code() as u32) << 8;
            w[2] = h.pdid() as u32 | (h.size() as u32) << 16;
            w[3] = h.vaddr() as u32;
            w[4] = (h.vaddr() >> 32) as u32;
        }
        if let Some(f) = &self.footer {
            w[0] |= 1 << 5 | (f.txid() as u32) << 16;
            w[1] = f.src().to_bits();
        }
        w
    }
}

/// Decoded ERRQ words (for software and tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorWords {
    /// Reason (None for an unknown code).
    pub reason: Option<RejectReason>,
    /// Header fields valid.
    pub header_ok: bool,
    /// Footer fields valid.
    pub footer_ok: bool,
    /// Packet type code.
    pub ptype: Option<PacketType>,
    /// Transaction id.
    pub txid: u16,
    /// Source.
    pub src: Coords,
    /// PDID.
    pub pdid: u16,
    /// Size.
    pub size: u16,
    /// Destination address.
    pub vaddr: u64,
}

impl ErrorWords {
    /// Decode the five ERRQ words.
    pub fn from_words(w: [u32; 5]) -> ErrorWords {
        let header_ok = w[0] >> 4 & 1 == 1;
        ErrorWords {
            reason: RejectReason::from_code((w[0] & 0xF) as u8),
            header_ok,
            footer_ok: w[0] >> 5 & 1 == 1,
            ptype: if header_ok {
                PacketType::from_code((w[0] >> 8 & 0x1F) as u8).ok()
            } else {
                None
            },
            txid: (w[0] >> 16 & 0x3FFF) as u16,
            src: Coords::from_bits(w[1] & 0x3F_FFFF).unwrap_or_default(),
            pdid: w[2] as u16,
            size: (w[2] >> 16 & 0x3FFF) as u16,
            vaddr: (w[4] as u64 & 0x3FF) << 32 | w[3] as u64,
        }
    }
}

/// Bounded FIFO of error entries. A rejection that finds it full is still
/// counted, and sets the sticky overflow flag instead of queueing.
#[derive(Clone, Debug)]
pub struct ErrorQueue {
    depth: usize,
    q: VecDeque<ErrorEntry>,
    /// Sticky: an entry was lost because the queue was full.
    pub overflow: bool,
}

impl ErrorQueue {
    /// An empty queue of `depth` entries.
    pub fn new(depth: usize) -> Self {
        ErrorQueue {
            depth,
            q: VecDeque::with_capacity(depth),
            overflow: false,
        }
    }

    /// Queue `e`, or set `overflow` when full.
    pub fn push(&mut self, e: ErrorEntry) {
        if self.q.len() < self.depth {
            self.q.push_back(e);
        } else {
            self.overflow = true;
        }
    }

    /// The oldest entry.
    pub fn head(&self) -> Option<&ErrorEntry> {
        self.q.front()
    }

    /// Drop the oldest entry.
    pub fn pop(&mut self) -> Option<ErrorEntry> {
        self.q.pop_front()
    }

    /// Entries queued.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_overflow_is_sticky() {
        let mut h = Header::new(PacketType::RdmaWrite, Coords::new(1, 1, 1, 1).unwrap());
        h.set_vaddr(0x3_1234_5678 | 1 << 41)
            .unwrap()
            .set_size(200)
            .unwrap()
            .set_pdid(0xBEEF)
            .unwrap();
        let mut f = Footer::new(Coords::new(5, 6, 7, 2).unwrap());
        f.set_txid(0x2ABC).unwrap();
        let e = ErrorEntry {
            reason: RejectReason::Pdid,
            header: Some(h),
            footer: Some(f),
        };
        let d = ErrorWords::from_words(e.words());
        assert_eq!(d.reason, Some(RejectReason::Pdid));
        assert!(d.header_ok && d.footer_ok);
        assert_eq!(d.ptype, Some(PacketType::RdmaWrite));
        assert_eq!(
            (d.txid, d.src, d.pdid, d.size, d.vaddr),
            (0x2ABC, f.src(), 0xBEEF, 200, h.vaddr())
        );
        let bare = ErrorEntry {
            reason: RejectReason::HeaderEcc,
            header: None,
            footer: None,
        };
        assert_eq!(bare.words(), [1, 0, 0, 0, 0]);

        let mut q = ErrorQueue::new(2);
        q.push(e);
        q.push(bare);
        assert!(!q.overflow);
        q.push(bare);
        assert!(q.overflow);
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop(), Some(e));
    }

    #[test]
    fn codes_are_dense_and_unique() {
        for (i, r) in RejectReason::ALL.iter().enumerate() {
            assert_eq!(r.code() as usize, i + 1);
            assert_eq!(RejectReason::from_code(r.code()), Some(*r));
        }
        assert_eq!(RejectReason::from_code(0), None);
        assert_eq!(RejectReason::from_code(RejectReason::MAX_CODE + 1), None);
    }
}
