//! Completions: the completion queue software reads, and the table that
//! remembers transfers a rejected packet damaged, so that a transfer never
//! completes "OK" when one of its packets did not land.

use super::errors::RejectReason;
use crate::packet::coords::{Coords, Field};
use std::collections::VecDeque;

// ---- register words of an entry ([`CqEntry::words`]) ----
/// CQ_W0 \[3:0\]: the kind ([`CqKind`]).
pub const CQ_W0_KIND: Field = Field {
    name: "kind",
    offset: 0,
    width: 4,
};
/// CQ_W0 \[7:4\]: the status ([`CqStatus`]).
pub const CQ_W0_STATUS: Field = Field {
    name: "status",
    offset: 4,
    width: 4,
};
/// CQ_W0 \[11:8\]: the server's reject reason of a `RemoteDenied` read.
pub const CQ_W0_REASON: Field = Field {
    name: "reason",
    offset: 8,
    width: 4,
};
/// CQ_W0 \[29:16\]: the transaction id.
pub const CQ_W0_TXID: Field = Field {
    name: "txid",
    offset: 16,
    width: 14,
};
/// CQ_W1 \[21:0\]: the peer's coordinates.
pub const CQ_W1_PEER: Field = Field {
    name: "peer",
    offset: 0,
    width: 22,
};
/// CQ_W2 \[15:0\]: the PDID.
pub const CQ_W2_PDID: Field = Field {
    name: "pdid",
    offset: 0,
    width: 16,
};

/// What a completion reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum CqKind {
    /// The last byte of an RDMA write from `peer` landed in this node.
    WriteIn = 1,
    /// The last byte of an RDMA read this node asked `peer` for landed here
    /// (or `peer` refused the read: status `RemoteDenied`).
    ReadDone = 2,
    /// `peer` reports that data this node sent (a write, or the data of a
    /// read it served) has landed there (the transfer had `notify` set).
    Notify = 3,
    /// An allreduce this node posted ended (status `Ok`, or `Failed` with
    /// the engine's status code in `reason`; peer = this node).
    Allreduce = 4,
}

impl CqKind {
    /// Kind of a code.
    pub fn from_code(c: u8) -> Option<Self> {
        [
            CqKind::WriteIn,
            CqKind::ReadDone,
            CqKind::Notify,
            CqKind::Allreduce,
        ]
        .into_iter()
        .find(|k| *k as u8 == c)
    }
}

/// Outcome of a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum CqStatus {
    /// Every byte landed.
    Ok = 0,
    /// Some packet of the transfer was rejected (its bytes did not land).
    PacketRejected = 1,
    /// The NI lost track of damaged transfers (TRACK_LOST was set): the
    /// transfer may be incomplete.
    Untracked = 2,
    /// The serving node refused an RDMA read (`reason` says why).
    RemoteDenied = 3,
    /// An allreduce failed (`reason` = `allreduce::engine::ArStatus` code).
    Failed = 4,
    /// The memory write of the packet that completes the transfer was
    /// answered SLVERR or DECERR on AXI4 (B): its bytes may not have
    /// landed.
    MemError = 5,
}

impl CqStatus {
    /// Status of a code.
    pub fn from_code(c: u8) -> Option<Self> {
        [
            CqStatus::Ok,
            CqStatus::PacketRejected,
            CqStatus::Untracked,
            CqStatus::RemoteDenied,
            CqStatus::Failed,
            CqStatus::MemError,
        ]
        .into_iter()
        .find(|k| *k as u8 == c)
    }
}

/// One completion-queue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CqEntry {
    /// What completed.
    pub kind: CqKind,
    /// How.
    pub status: CqStatus,
    /// For `RemoteDenied`, the server's reject reason code; else 0.
    pub reason: u8,
    /// Transaction id of the transfer (from its descriptor).
    pub txid: u16,
    /// The other node of the transfer.
    pub peer: Coords,
    /// PDID the transfer ran under.
    pub pdid: u16,
}

impl CqEntry {
    /// Register words CQ_W0..W2: W0 = kind\[3:0\], status\[7:4\], reason\[11:8\],
    /// txid\[29:16\]; W1 = peer coordinates\[21:0\]; W2 = pdid\[15:0\].
    pub fn words(&self) -> [u32; 3] {
        [
            self.kind as u32
                | (self.status as u32) << 4
                | (self.reason as u32 & 0xF) << 8
                | (self.txid as u32) << 16,
            self.peer.to_bits(),
            self.pdid as u32,
        ]
    }

    /// Decode CQ_W0..W2; `None` for codes that name no kind or status.
    pub fn from_words(w: [u32; 3]) -> Option<CqEntry> {
        Some(CqEntry {
            kind: CqKind::from_code((w[0] & 0xF) as u8)?,
            status: CqStatus::from_code((w[0] >> 4 & 0xF) as u8)?,
            reason: (w[0] >> 8 & 0xF) as u8,
            txid: (w[0] >> 16 & 0x3FFF) as u16,
            peer: Coords::from_bits(w[1] & 0x3F_FFFF).ok()?,
            pdid: w[2] as u16,
        })
    }

    /// A `RemoteDenied` read completion.
    pub fn denied(txid: u16, peer: Coords, pdid: u16, reason: RejectReason) -> CqEntry {
        CqEntry::denied_code(txid, peer, pdid, reason.code())
    }
    /// A read refused with Nack flags `code` (a reject reason, or
    /// [`super::rdma_rx::NACK_READ_BUSY`]).
    pub fn denied_code(txid: u16, peer: Coords, pdid: u16, code: u8) -> CqEntry {
        CqEntry {
            kind: CqKind::ReadDone,
            status: CqStatus::RemoteDenied,
            reason: code,
            txid,
            peer,
            pdid,
        }
    }
}

/// Bounded completion FIFO. The receive path never posts into a full
/// queue: a packet that would need an entry waits (`RxOutcome::Busy`).
#[derive(Clone, Debug)]
pub struct CompletionQueue {
    depth: usize,
    q: VecDeque<CqEntry>,
}

impl CompletionQueue {
    /// Empty queue of `depth` entries.
    pub fn new(depth: usize) -> Self {
        CompletionQueue {
            depth,
            q: VecDeque::with_capacity(depth),
        }
    }
    /// Room for one more entry.
    pub fn has_room(&self) -> bool {
        self.q.len() < self.depth
    }
    /// Post `e` (caller checked `has_room`).
    pub fn push(&mut self, e: CqEntry) {
        debug_assert!(self.has_room());
        self.q.push_back(e);
    }
    /// Oldest entry.
    pub fn head(&self) -> Option<&CqEntry> {
        self.q.front()
    }
    /// Remove the oldest entry.
    pub fn pop(&mut self) -> Option<CqEntry> {
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

/// Damaged-transfer table ("poison" table), keyed by (source, txid).
///
/// Rules (see the module contract in `ni/mod.rs`):
/// - a rejected packet with a trustworthy footer and `last = 0` marks its
///   (src, txid) damaged; when the key is already present nothing changes;
///   when the table is full, `track_lost` is set instead;
/// - a rejected packet with `last = 1` (and a trustworthy footer) removes
///   its key (the transfer is over and will not complete);
/// - an accepted packet with `first = 1` removes its key before anything
///   else (a new transfer reusing the id starts clean);
/// - an accepted packet with `last = 1` removes its key; the completion's
///   status is `PacketRejected` if the key was present, else `Untracked`
///   if `track_lost` is set, else `Ok`;
/// - a rejected packet whose footer is untrustworthy sets `track_lost`.
///
/// Entries are placed in the lowest free slot (the RTL's CAM order).
#[derive(Clone, Debug)]
pub struct TransferTracker {
    slots: Vec<Option<(Coords, u16)>>,
    /// Sticky TRACK_LOST: cleared only by software (STATUS W1C).
    pub track_lost: bool,
}

impl TransferTracker {
    /// Empty table of `depth` entries.
    pub fn new(depth: usize) -> Self {
        TransferTracker {
            slots: vec![None; depth],
            track_lost: false,
        }
    }

    fn find(&self, key: (Coords, u16)) -> Option<usize> {
        self.slots.iter().position(|s| *s == Some(key))
    }

    /// Mark (src, txid) damaged.
    pub fn poison(&mut self, src: Coords, txid: u16) {
        let key = (src, txid);
        if self.find(key).is_some() {
            return;
        }
        match self.slots.iter().position(|s| s.is_none()) {
            Some(i) => self.slots[i] = Some(key),
            None => self.track_lost = true,
        }
    }

    /// Forget (src, txid); `true` when it was marked.
    pub fn clear(&mut self, src: Coords, txid: u16) -> bool {
        match self.find((src, txid)) {
            Some(i) => {
                self.slots[i] = None;
                true
            }
            None => false,
        }
    }

    /// Status of a transfer whose last packet was accepted (clears its key).
    pub fn finish(&mut self, src: Coords, txid: u16) -> CqStatus {
        if self.clear(src, txid) {
            CqStatus::PacketRejected
        } else if self.track_lost {
            CqStatus::Untracked
        } else {
            CqStatus::Ok
        }
    }

    /// Marked transfers.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Nothing marked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_words_round_trip() {
        let e = CqEntry {
            kind: CqKind::Notify,
            status: CqStatus::PacketRejected,
            reason: 0,
            txid: 0x3FFF,
            peer: Coords::new(15, 0, 7, 3).unwrap(),
            pdid: 0xFFFF,
        };
        assert_eq!(CqEntry::from_words(e.words()), Some(e));
        let d = CqEntry::denied(5, Coords::default(), 1, RejectReason::Window);
        assert_eq!(d.words()[0], 2 | 3 << 4 | 7 << 8 | 5 << 16);
        assert_eq!(CqEntry::from_words([0, 0, 0]), None);
    }

    #[test]
    fn tracker_rules() {
        let a = Coords::new(1, 0, 0, 0).unwrap();
        let b = Coords::new(2, 0, 0, 0).unwrap();
        let mut t = TransferTracker::new(2);
        assert_eq!(t.finish(a, 1), CqStatus::Ok);
        t.poison(a, 1);
        t.poison(a, 1);
        assert_eq!(t.len(), 1);
        assert_eq!(t.finish(b, 1), CqStatus::Ok, "other source");
        assert_eq!(t.finish(a, 1), CqStatus::PacketRejected);
        assert_eq!(t.finish(a, 1), CqStatus::Ok, "cleared by finish");
        t.poison(a, 1);
        t.poison(a, 2);
        assert!(!t.track_lost);
        t.poison(b, 3);
        assert!(t.track_lost, "full table loses track");
        assert_eq!(t.finish(b, 3), CqStatus::Untracked);
        assert_eq!(t.finish(a, 2), CqStatus::PacketRejected);
        t.poison(b, 4);
        assert_eq!(t.slots[1], Some((b, 4)), "lowest free slot");
    }
}
