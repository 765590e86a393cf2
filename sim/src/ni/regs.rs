//! AXI4-Lite register map: offsets, page decoding, access rules.
//!
//! 32-bit registers, byte addresses, 4 KiB pages (so an OS can map one page
//! into one process):
//!
//! | page | base | who |
//! |---|---|---|
//! | node | 0x0000 | privileged only (AxPROT\[0\] = 1) |
//! | completion queue | 0x1000 | any |
//! | mailbox | 0x2000 | any |
//! | channel `c` | 0x3000 + 0x1000·c | any (the process owning channel `c`) |
//!
//! The offsets of every register are the constants below; `ni/mod.rs`
//! documents what each does.

use super::errors::RejectReason;
use super::params::NiParams;
use crate::packet::coords::Field;

/// Page size.
pub const PAGE: u32 = 0x1000;
/// Node (privileged) page.
pub const NODE_PAGE: u32 = 0x0000;
/// Completion-queue page.
pub const CQ_PAGE: u32 = 0x1000;
/// Mailbox page.
pub const MB_PAGE: u32 = 0x2000;
/// First channel page.
pub const CH_PAGE0: u32 = 0x3000;

/// Base address of channel `c`'s page.
pub const fn ch_page(c: usize) -> u32 {
    CH_PAGE0 + PAGE * c as u32
}

// ---- node page (privileged) ----
/// RO identification.
pub const ID: u32 = 0x000;
/// Value of [`ID`]: "NI", version 1.
pub const ID_VALUE: u32 = 0x4E49_0001;
/// RO channels\[7:0\] windows\[15:8\] (max_payload/16)\[23:16\] (mailbox_msg/16)\[31:24\].
pub const PARAMS0: u32 = 0x004;
/// RO mailbox_depth\[15:0\] cq_depth\[31:16\].
pub const PARAMS1: u32 = 0x008;
/// RO desc_queue_depth\[15:0\] errq_depth\[31:16\].
pub const PARAMS2: u32 = 0x00C;
/// RO pkt_slots\[7:0\] resp_queue_depth\[15:8\] read_queue_depth\[23:16\] poison_depth\[31:24\].
pub const PARAMS3: u32 = 0x010;
/// RO addr_bits\[7:0\].
pub const PARAMS4: u32 = 0x014;
/// RO this node's coordinates\[21:0\].
pub const COORDS: u32 = 0x020;
/// RW bit 0 TX_ENABLE (reset 1).
pub const CONTROL: u32 = 0x024;
/// STATUS: sticky bits 0..3 (write 1 to clear), live bits 8..10 (RO).
pub const STATUS: u32 = 0x028;
/// RW PDID\[15:0\], bit 16 OPEN (accept every PDID). Reset 0.
pub const MBOX_CTRL: u32 = 0x02C;
/// RW interrupt enable: a mask over [`STATUS`]'s bits ([`IRQ_ENABLE_MASK`]);
/// the NI's `irq` output is high while `STATUS & IRQ_ENABLE` is not zero
/// (level). Reset 0.
pub const IRQ_ENABLE: u32 = 0x030;
/// First counter (RO, 32-bit wrapping), counter `i` at `CNT_BASE + 4i`.
pub const CNT_BASE: u32 = 0x040;
/// Rejections by reason, reason code `r` at `REJ_BASE + 4r` (RO).
pub const REJ_BASE: u32 = 0x080;
/// RO error-queue entries.
pub const ERRQ_COUNT: u32 = 0x0C0;
/// RO head entry words W0..W4 at `ERRQ_W0 + 4k`.
pub const ERRQ_W0: u32 = 0x0C4;
/// W pop the error-queue head.
pub const ERRQ_POP: u32 = 0x0D8;
/// RW channel `c`'s PDID at `CH_PDID_BASE + 4c` (\[15:0\], reset 0).
pub const CH_PDID_BASE: u32 = 0x100;
/// Window `w` registers at `WIN_BASE + WIN_STRIDE·w`.
pub const WIN_BASE: u32 = 0x200;
/// Bytes between windows.
pub const WIN_STRIDE: u32 = 0x20;
/// Window: base\[31:0\].
pub const WIN_BASE_LO: u32 = 0x00;
/// Window: base\[41:32\] in \[9:0\].
pub const WIN_BASE_HI: u32 = 0x04;
/// Window: size\[31:0\].
pub const WIN_SIZE_LO: u32 = 0x08;
/// Window: size\[42:32\] in \[10:0\].
pub const WIN_SIZE_HI: u32 = 0x0C;
/// Window: PDID\[15:0\], bit 31 ENABLE.
pub const WIN_CTRL: u32 = 0x10;

// ---- allreduce engine (node page; mapped only when ni.ar_communicators > 0) ----
/// RW vector bytes above which the reduce-scatter + allgather schedule runs (reset 4096).
pub const AR_THRESHOLD: u32 = 0x400;
/// RW cycles without progress before a collective completes TIMEOUT (reset 0 = never).
pub const AR_TIMEOUT: u32 = 0x404;
/// First allreduce counter (RO, 32-bit wrapping), counter `i` at `AR_CNT_BASE + 4i`:
/// 0 FRAGS_SENT, 1 FRAGS_RECEIVED, 2 COMPLETIONS.
pub const AR_CNT_BASE: u32 = 0x410;
/// Allreduce counters.
pub const AR_CNT_COUNT: usize = 3;
/// AR_CNT index of FRAGS_SENT.
pub const AR_CNT_FRAGS_SENT: usize = 0;
/// AR_CNT index of FRAGS_RECEIVED.
pub const AR_CNT_FRAGS_RECEIVED: usize = 1;
/// AR_CNT index of COMPLETIONS.
pub const AR_CNT_COMPLETIONS: usize = 2;
/// Fragments rejected by engine reason `r` (`allreduce::engine::FragReject`) at `AR_REJ_BASE + 4r` (RO).
pub const AR_REJ_BASE: u32 = 0x440;
/// Communicator slot `k` registers at `AR_COMM_BASE + AR_COMM_STRIDE·k`.
pub const AR_COMM_BASE: u32 = 0x500;
/// Bytes between communicator slots.
pub const AR_COMM_STRIDE: u32 = 0x20;
/// Slot: origin x\[3:0\] y\[7:4\] z\[11:8\].
pub const AR_ORIGIN: u32 = 0x00;
/// Slot: extent x\[4:0\] y\[12:8\] z\[20:16\] (1..=16 each).
pub const AR_EXTENT: u32 = 0x04;
/// Slot: this node's rank\[11:0\].
pub const AR_RANK: u32 = 0x08;
/// Slot: PDID\[15:0\], bit 31 ENABLE.
pub const AR_CTRL: u32 = 0x0C;
/// Slot: scratch base\[31:0\].
pub const AR_SCRATCH_LO: u32 = 0x10;
/// Slot: scratch base\[41:32\] in \[9:0\].
pub const AR_SCRATCH_HI: u32 = 0x14;
/// Slot: scratch bytes (two banks).
pub const AR_SCRATCH_SIZE: u32 = 0x18;

/// Every communicator slot register, in [`CommField`] order (its offset / 4):
/// the one list the RTL generators and benches walk.
pub const AR_COMM_FIELDS: [u32; 7] = [
    AR_ORIGIN,
    AR_EXTENT,
    AR_RANK,
    AR_CTRL,
    AR_SCRATCH_LO,
    AR_SCRATCH_HI,
    AR_SCRATCH_SIZE,
];

/// Communicator slot register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommField {
    /// AR_ORIGIN.
    Origin,
    /// AR_EXTENT.
    Extent,
    /// AR_RANK.
    Rank,
    /// AR_CTRL.
    Ctrl,
    /// AR_SCRATCH_LO.
    ScratchLo,
    /// AR_SCRATCH_HI.
    ScratchHi,
    /// AR_SCRATCH_SIZE.
    ScratchSize,
}

/// Address of communicator slot `k`'s register `field` (one of the `AR_*` slot offsets).
pub const fn ar_comm_reg(k: usize, field: u32) -> u32 {
    AR_COMM_BASE + AR_COMM_STRIDE * k as u32 + field
}

// ---- register bit fields ----
/// CONTROL bit 0: TX_ENABLE.
pub const CONTROL_TX_ENABLE: Field = Field {
    name: "tx_enable",
    offset: 0,
    width: 1,
};
/// MBOX_CTRL \[15:0\]: the mailbox's PDID.
pub const MBOX_CTRL_PDID: Field = Field {
    name: "pdid",
    offset: 0,
    width: 16,
};
/// MBOX_CTRL bit 16: OPEN (accept every PDID).
pub const MBOX_CTRL_OPEN: Field = Field {
    name: "open",
    offset: 16,
    width: 1,
};
/// CH_PDID \[15:0\]: a channel's PDID.
pub const CH_PDID_BITS: Field = Field {
    name: "pdid",
    offset: 0,
    width: 16,
};
/// WIN_BASE_HI \[9:0\]: base\[41:32\].
pub const WIN_BASE_HI_BITS: Field = Field {
    name: "base_hi",
    offset: 0,
    width: 10,
};
/// WIN_SIZE_HI \[10:0\]: size\[42:32\].
pub const WIN_SIZE_HI_BITS: Field = Field {
    name: "size_hi",
    offset: 0,
    width: 11,
};
/// WIN_CTRL \[15:0\]: the window's PDID.
pub const WIN_CTRL_PDID: Field = Field {
    name: "pdid",
    offset: 0,
    width: 16,
};
/// WIN_CTRL bit 31: ENABLE.
pub const WIN_CTRL_ENABLE: Field = Field {
    name: "enable",
    offset: 31,
    width: 1,
};
/// CH_STATUS \[15:0\]: free descriptor slots.
pub const CH_STATUS_DESC_FREE: Field = Field {
    name: "desc_free",
    offset: 0,
    width: 16,
};
/// CH_STATUS \[23:16\]: free message slots.
pub const CH_STATUS_PKT_FREE: Field = Field {
    name: "pkt_free",
    offset: 16,
    width: 8,
};
/// CH_STATUS bit 24: RDMA_BUSY (descriptors queued).
pub const CH_STATUS_RDMA_BUSY: Field = Field {
    name: "rdma_busy",
    offset: 24,
    width: 1,
};
/// CH_STATUS bit 25: PKT_PENDING (messages queued or unacknowledged).
pub const CH_STATUS_PKT_PENDING: Field = Field {
    name: "pkt_pending",
    offset: 25,
    width: 1,
};
/// DESC_LADDR_HI / DESC_RADDR_HI \[9:0\]: address\[41:32\].
pub const DESC_ADDR_HI_BITS: Field = Field {
    name: "addr_hi",
    offset: 0,
    width: 10,
};
/// PKT_SEND \[8:0\]: the message length in bytes.
pub const PKT_SEND_LEN: Field = Field {
    name: "len",
    offset: 0,
    width: 9,
};

/// STATUS bit 0 (sticky): a packet was rejected.
pub const ST_RX_ERROR: u32 = 1 << 0;
/// STATUS bit 1 (sticky): the error queue overflowed.
pub const ST_ERRQ_OVERFLOW: u32 = 1 << 1;
/// STATUS bit 2 (sticky): TRACK_LOST, see `completion::TransferTracker`.
pub const ST_TRACK_LOST: u32 = 1 << 2;
/// STATUS bit 3 (sticky): a single-bit header error was corrected.
pub const ST_HDR_CORRECTED: u32 = 1 << 3;
/// STATUS bit 4 (sticky): an AXI4 read beat or write response of the
/// NI's master answered SLVERR or DECERR (counted in RD_SLVERR ..
/// WR_DECERR).
pub const ST_AXI_ERROR: u32 = 1 << 4;
/// STATUS sticky bits (W1C).
pub const ST_STICKY: u32 = 0x1F;
/// STATUS bit 8 (live): completion queue not empty.
pub const ST_CQ_NONEMPTY: u32 = 1 << 8;
/// STATUS bit 9 (live): mailbox not empty.
pub const ST_MB_NONEMPTY: u32 = 1 << 9;
/// STATUS bit 10 (live): error queue not empty.
pub const ST_ERRQ_NONEMPTY: u32 = 1 << 10;

/// The bits of [`IRQ_ENABLE`] that exist: one per STATUS bit (sticky and
/// live); the others read 0.
pub const IRQ_ENABLE_MASK: u32 = ST_STICKY | ST_CQ_NONEMPTY | ST_MB_NONEMPTY | ST_ERRQ_NONEMPTY;

/// Counter indices (`CNT_BASE + 4 * index`).
pub mod cnt {
    /// Packets emitted.
    pub const TX_PACKETS: usize = 0;
    /// Packets consumed by the receive path (good or rejected).
    pub const RX_PACKETS: usize = 1;
    /// Packets rejected.
    pub const RX_REJECTED: usize = 2;
    /// Headers with a corrected single-bit error (accepted).
    pub const HDR_CORRECTED: usize = 3;
    /// Mailbox messages refused because the mailbox was full (nack sent).
    pub const MB_FULL_NACKS: usize = 4;
    /// Messages this node re-queued after a nack.
    pub const MB_RETRIES: usize = 5;
    /// Messages this node dropped after a final nack (reported per channel).
    pub const MB_DENIED: usize = 6;
    /// Payload bytes written to memory by accepted data packets.
    pub const RX_DATA_BYTES: usize = 7;
    /// Payload bytes (header size) of every emitted packet.
    pub const TX_PAYLOAD_BYTES: usize = 8;
    /// Read requests refused because the read queue was full (Nack
    /// `NACK_READ_BUSY` sent).
    pub const RD_BUSY_NACKS: usize = 9;
    /// Class-0 packets whose payload read (AXI4 master) had a SLVERR beat
    /// (counted when the packet's tail leaves; its payload CRC is
    /// inverted, see `rdma_tx`).
    pub const RD_SLVERR: usize = 10;
    /// Class-0 packets whose payload read had a DECERR beat.
    pub const RD_DECERR: usize = 11;
    /// Receive writes (one per accepted data packet) whose B was SLVERR.
    pub const WR_SLVERR: usize = 12;
    /// Receive writes whose B was DECERR.
    pub const WR_DECERR: usize = 13;
    /// Number of counters.
    pub const COUNT: usize = 14;
}

// ---- completion-queue page ----
/// RO entries queued.
pub const CQ_COUNT: u32 = 0x000;
/// RO head entry words W0..W2 at `CQ_W0 + 4k` (zero when empty).
pub const CQ_W0: u32 = 0x004;
/// W pop the head entry.
pub const CQ_POP: u32 = 0x010;

// ---- mailbox page ----
/// RO messages queued.
pub const MB_COUNT: u32 = 0x000;
/// RO head message length in bytes.
pub const MB_LEN: u32 = 0x004;
/// RO head message source coordinates.
pub const MB_SRC: u32 = 0x008;
/// RO head message PDID.
pub const MB_PDID: u32 = 0x00C;
/// W pop the head message.
pub const MB_POP: u32 = 0x010;
/// RO head message bytes, word `i` at `MB_DATA + 4i` (little-endian).
pub const MB_DATA: u32 = 0x100;

// ---- channel page ----
/// RO desc free slots\[15:0\], pkt free slots\[23:16\], bit 24 RDMA_BUSY, bit 25 PKT_PENDING.
pub const CH_STATUS: u32 = 0x000;
/// RO this channel's PDID (a write is refused: CH_ERR = PDID_WRITE).
pub const CH_PDID: u32 = 0x004;
/// RW last error code\[7:0\]; any write clears it.
pub const CH_ERR: u32 = 0x008;
/// RW descriptor staging: local address\[31:0\].
pub const DESC_LADDR_LO: u32 = 0x010;
/// RW local address\[41:32\] in \[9:0\].
pub const DESC_LADDR_HI: u32 = 0x014;
/// RW remote address\[31:0\].
pub const DESC_RADDR_LO: u32 = 0x018;
/// RW remote address\[41:32\] in \[9:0\].
pub const DESC_RADDR_HI: u32 = 0x01C;
/// RW length in bytes (1..=2^32-1).
pub const DESC_LEN: u32 = 0x020;
/// RW destination coordinates\[21:0\].
pub const DESC_DEST: u32 = 0x024;
/// RW op\[1:0\] (0 write, 1 read), notify\[4\], txid\[29:16\].
pub const DESC_CTRL: u32 = 0x028;
/// W queue the staged descriptor.
pub const DOORBELL: u32 = 0x02C;
/// RW packetizer destination coordinates\[21:0\].
pub const PKT_DEST: u32 = 0x040;
/// W send the first `data[8:0]` bytes of the packetizer window to PKT_DEST.
pub const PKT_SEND: u32 = 0x044;
/// RW packetizer window, word `i` at `PKT_DATA + 4i` (little-endian).
pub const PKT_DATA: u32 = 0x100;

/// AXI4-Lite response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxilResp {
    /// OKAY.
    Okay,
    /// SLVERR: the access had no effect (reads return 0).
    SlvErr,
}

/// AxPROT\[0\] of an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prot {
    /// Unprivileged (user process).
    User,
    /// Privileged (kernel).
    Privileged,
}

/// Channel error codes (CH_ERR), latched by the refused access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ChError {
    /// DOORBELL with the descriptor queue full.
    QueueFull = 1,
    /// DOORBELL with length 0.
    BadLen = 2,
    /// DOORBELL with local + len > 2^addr_bits or remote + len > 2^42.
    BadAddr = 3,
    /// DOORBELL with an op code other than write (0) or read (1).
    BadOp = 4,
    /// PKT_SEND with no free message slot.
    PktFull = 5,
    /// PKT_SEND with length 0 or above mailbox_msg_bytes.
    PktBadLen = 6,
    /// A message was refused for good by its destination and dropped.
    MsgDenied = 7,
    /// A write to CH_PDID.
    PdidWrite = 8,
}

/// Window register field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WinField {
    /// base\[31:0\].
    BaseLo,
    /// base\[41:32\].
    BaseHi,
    /// size\[31:0\].
    SizeLo,
    /// size\[42:32\].
    SizeHi,
    /// PDID and enable.
    Ctrl,
}

/// Descriptor staging field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DescField {
    /// DESC_LADDR_LO.
    LaddrLo,
    /// DESC_LADDR_HI.
    LaddrHi,
    /// DESC_RADDR_LO.
    RaddrLo,
    /// DESC_RADDR_HI.
    RaddrHi,
    /// DESC_LEN.
    Len,
    /// DESC_DEST.
    Dest,
    /// DESC_CTRL.
    Ctrl,
}

impl DescField {
    /// Every field, in register order (`decode` is the inverse of
    /// [`DescField::offset`]; its unit test holds the two together).
    pub const ALL: [DescField; 7] = [
        DescField::LaddrLo,
        DescField::LaddrHi,
        DescField::RaddrLo,
        DescField::RaddrHi,
        DescField::Len,
        DescField::Dest,
        DescField::Ctrl,
    ];

    /// The field's register offset in a channel page.
    pub const fn offset(self) -> u32 {
        match self {
            DescField::LaddrLo => DESC_LADDR_LO,
            DescField::LaddrHi => DESC_LADDR_HI,
            DescField::RaddrLo => DESC_RADDR_LO,
            DescField::RaddrHi => DESC_RADDR_HI,
            DescField::Len => DESC_LEN,
            DescField::Dest => DESC_DEST,
            DescField::Ctrl => DESC_CTRL,
        }
    }
}

/// A decoded register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reg {
    /// ID.
    Id,
    /// PARAMS0..4.
    Params(u8),
    /// COORDS.
    Coords,
    /// CONTROL.
    Control,
    /// STATUS.
    Status,
    /// MBOX_CTRL.
    MboxCtrl,
    /// IRQ_ENABLE.
    IrqEnable,
    /// Counter index.
    Counter(usize),
    /// Rejections with reason code.
    Rej(u8),
    /// ERRQ_COUNT.
    ErrqCount,
    /// ERRQ_Wk.
    ErrqWord(usize),
    /// ERRQ_POP.
    ErrqPop,
    /// Privileged CH_PDID of a channel.
    ChPdidPriv(usize),
    /// Window register.
    Win(usize, WinField),
    /// CQ_COUNT.
    CqCount,
    /// CQ_Wk.
    CqWord(usize),
    /// CQ_POP.
    CqPop,
    /// MB_COUNT.
    MbCount,
    /// MB_LEN.
    MbLen,
    /// MB_SRC.
    MbSrc,
    /// MB_PDID.
    MbPdid,
    /// MB_POP.
    MbPop,
    /// MB_DATA word.
    MbData(usize),
    /// Channel CH_STATUS.
    ChStatus(usize),
    /// Channel CH_PDID (user view, read-only).
    ChPdid(usize),
    /// Channel CH_ERR.
    ChErr(usize),
    /// Channel descriptor staging field.
    Desc(usize, DescField),
    /// Channel DOORBELL.
    Doorbell(usize),
    /// Channel PKT_DEST.
    PktDest(usize),
    /// Channel PKT_SEND.
    PktSend(usize),
    /// Channel PKT_DATA word.
    PktData(usize, usize),
    /// AR_THRESHOLD.
    ArThreshold,
    /// AR_TIMEOUT.
    ArTimeout,
    /// Allreduce counter index.
    ArCounter(usize),
    /// Fragments rejected by engine reason.
    ArRej(usize),
    /// Communicator slot register.
    ArComm(usize, CommField),
    /// TRACE_CTRL ([`super::trace`]).
    TraceCtrl,
    /// TRACE_DEPTH.
    TraceDepth,
    /// TRACE_COUNT.
    TraceCount,
    /// TRACE_DROPS.
    TraceDrops,
    /// TRACE_IDX.
    TraceIdx,
    /// TRACE_LO.
    TraceLo,
    /// TRACE_HI.
    TraceHi,
}

impl Reg {
    /// Only privileged accesses reach it.
    pub fn privileged(&self) -> bool {
        matches!(
            self,
            Reg::Id
                | Reg::Params(_)
                | Reg::Coords
                | Reg::Control
                | Reg::Status
                | Reg::MboxCtrl
                | Reg::IrqEnable
                | Reg::Counter(_)
                | Reg::Rej(_)
                | Reg::ErrqCount
                | Reg::ErrqWord(_)
                | Reg::ErrqPop
                | Reg::ChPdidPriv(_)
                | Reg::Win(..)
                | Reg::ArThreshold
                | Reg::ArTimeout
                | Reg::ArCounter(_)
                | Reg::ArRej(_)
                | Reg::ArComm(..)
                | Reg::TraceCtrl
                | Reg::TraceDepth
                | Reg::TraceCount
                | Reg::TraceDrops
                | Reg::TraceIdx
                | Reg::TraceLo
                | Reg::TraceHi
        )
    }
}

/// The register at `addr`, or `None` (unaligned or unmapped: SLVERR).
pub fn decode(addr: u32, p: &NiParams) -> Option<Reg> {
    if addr & 3 != 0 {
        return None;
    }
    let page = addr / PAGE;
    let off = addr % PAGE;
    let msg_words = (p.mailbox_msg_bytes / 4) as u32;
    match page {
        0 => decode_node(off, p),
        1 => match off {
            CQ_COUNT => Some(Reg::CqCount),
            o if (CQ_W0..CQ_W0 + 12).contains(&o) => Some(Reg::CqWord(((o - CQ_W0) / 4) as usize)),
            CQ_POP => Some(Reg::CqPop),
            _ => None,
        },
        2 => match off {
            MB_COUNT => Some(Reg::MbCount),
            MB_LEN => Some(Reg::MbLen),
            MB_SRC => Some(Reg::MbSrc),
            MB_PDID => Some(Reg::MbPdid),
            MB_POP => Some(Reg::MbPop),
            o if (MB_DATA..MB_DATA + 4 * msg_words).contains(&o) => {
                Some(Reg::MbData(((o - MB_DATA) / 4) as usize))
            }
            _ => None,
        },
        _ => {
            let c = (page - 3) as usize;
            if c >= p.channels {
                return None;
            }
            let f = |d| Some(Reg::Desc(c, d));
            match off {
                CH_STATUS => Some(Reg::ChStatus(c)),
                CH_PDID => Some(Reg::ChPdid(c)),
                CH_ERR => Some(Reg::ChErr(c)),
                DESC_LADDR_LO => f(DescField::LaddrLo),
                DESC_LADDR_HI => f(DescField::LaddrHi),
                DESC_RADDR_LO => f(DescField::RaddrLo),
                DESC_RADDR_HI => f(DescField::RaddrHi),
                DESC_LEN => f(DescField::Len),
                DESC_DEST => f(DescField::Dest),
                DESC_CTRL => f(DescField::Ctrl),
                DOORBELL => Some(Reg::Doorbell(c)),
                PKT_DEST => Some(Reg::PktDest(c)),
                PKT_SEND => Some(Reg::PktSend(c)),
                o if (PKT_DATA..PKT_DATA + 4 * msg_words).contains(&o) => {
                    Some(Reg::PktData(c, ((o - PKT_DATA) / 4) as usize))
                }
                _ => None,
            }
        }
    }
}

fn decode_node(off: u32, p: &NiParams) -> Option<Reg> {
    Some(match off {
        ID => Reg::Id,
        PARAMS0 | PARAMS1 | PARAMS2 | PARAMS3 | PARAMS4 => Reg::Params(((off - PARAMS0) / 4) as u8),
        COORDS => Reg::Coords,
        CONTROL => Reg::Control,
        STATUS => Reg::Status,
        MBOX_CTRL => Reg::MboxCtrl,
        IRQ_ENABLE => Reg::IrqEnable,
        o if (CNT_BASE..CNT_BASE + 4 * cnt::COUNT as u32).contains(&o) => {
            Reg::Counter(((o - CNT_BASE) / 4) as usize)
        }
        o if (REJ_BASE + 4..=REJ_BASE + 4 * RejectReason::MAX_CODE as u32).contains(&o) => {
            Reg::Rej(((o - REJ_BASE) / 4) as u8)
        }
        ERRQ_COUNT => Reg::ErrqCount,
        o if (ERRQ_W0..ERRQ_W0 + 20).contains(&o) => Reg::ErrqWord(((o - ERRQ_W0) / 4) as usize),
        ERRQ_POP => Reg::ErrqPop,
        o if (CH_PDID_BASE..CH_PDID_BASE + 4 * p.channels as u32).contains(&o) => {
            Reg::ChPdidPriv(((o - CH_PDID_BASE) / 4) as usize)
        }
        o if (WIN_BASE..WIN_BASE + WIN_STRIDE * p.windows as u32).contains(&o) => {
            let w = ((o - WIN_BASE) / WIN_STRIDE) as usize;
            let f = match (o - WIN_BASE) % WIN_STRIDE {
                WIN_BASE_LO => WinField::BaseLo,
                WIN_BASE_HI => WinField::BaseHi,
                WIN_SIZE_LO => WinField::SizeLo,
                WIN_SIZE_HI => WinField::SizeHi,
                WIN_CTRL => WinField::Ctrl,
                _ => return None,
            };
            Reg::Win(w, f)
        }
        o if p.trace_depth > 0 && super::trace::Trace::is_reg(o) => {
            use super::trace as t;
            match o {
                t::TRACE_CTRL => Reg::TraceCtrl,
                t::TRACE_DEPTH => Reg::TraceDepth,
                t::TRACE_COUNT => Reg::TraceCount,
                t::TRACE_DROPS => Reg::TraceDrops,
                t::TRACE_IDX => Reg::TraceIdx,
                t::TRACE_LO => Reg::TraceLo,
                _ => Reg::TraceHi,
            }
        }
        _ if p.ar_communicators == 0 => return None,
        AR_THRESHOLD => Reg::ArThreshold,
        AR_TIMEOUT => Reg::ArTimeout,
        o if (AR_CNT_BASE..AR_CNT_BASE + 4 * AR_CNT_COUNT as u32).contains(&o) => {
            Reg::ArCounter(((o - AR_CNT_BASE) / 4) as usize)
        }
        o if (AR_REJ_BASE..AR_REJ_BASE + 4 * crate::allreduce::engine::FRAG_REJECTS as u32)
            .contains(&o) =>
        {
            Reg::ArRej(((o - AR_REJ_BASE) / 4) as usize)
        }
        o if (AR_COMM_BASE..AR_COMM_BASE + AR_COMM_STRIDE * p.ar_communicators as u32)
            .contains(&o) =>
        {
            let k = ((o - AR_COMM_BASE) / AR_COMM_STRIDE) as usize;
            let f = match (o - AR_COMM_BASE) % AR_COMM_STRIDE {
                AR_ORIGIN => CommField::Origin,
                AR_EXTENT => CommField::Extent,
                AR_RANK => CommField::Rank,
                AR_CTRL => CommField::Ctrl,
                AR_SCRATCH_LO => CommField::ScratchLo,
                AR_SCRATCH_HI => CommField::ScratchHi,
                AR_SCRATCH_SIZE => CommField::ScratchSize,
                _ => return None,
            };
            Reg::ArComm(k, f)
        }
        _ => return None,
    })
}

/// Address of window `w`'s register `field` (one of the `WIN_*` offsets).
pub const fn win_reg(w: usize, field: u32) -> u32 {
    WIN_BASE + WIN_STRIDE * w as u32 + field
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_covers_the_map_and_nothing_else() {
        let p = NiParams {
            channels: 2,
            windows: 3,
            ..Default::default()
        };
        assert_eq!(decode(ID, &p), Some(Reg::Id));
        for (i, d) in DescField::ALL.into_iter().enumerate() {
            assert_eq!(d.offset(), DESC_LADDR_LO + 4 * i as u32);
            assert_eq!(decode(ch_page(1) + d.offset(), &p), Some(Reg::Desc(1, d)));
        }
        assert_eq!(decode(PARAMS4, &p), Some(Reg::Params(4)));
        assert_eq!(decode(CNT_BASE + 4 * 9, &p), Some(Reg::Counter(9)));
        // The AXI4 error counters (RD/WR SLVERR/DECERR) are the last four.
        assert_eq!(cnt::COUNT, 14);
        assert_eq!(decode(CNT_BASE + 4 * 13, &p), Some(Reg::Counter(13)));
        assert_eq!(decode(CNT_BASE + 4 * 14, &p), None);
        assert_eq!(decode(REJ_BASE, &p), None, "no reason 0");
        assert_eq!(decode(REJ_BASE + 40, &p), Some(Reg::Rej(10)));
        assert_eq!(decode(REJ_BASE + 44, &p), Some(Reg::Rej(11)), "WRONG_CLASS");
        assert_eq!(decode(REJ_BASE + 48, &p), None, "READ_BUSY is no reason");
        assert_eq!(decode(ERRQ_W0 + 16, &p), Some(Reg::ErrqWord(4)));
        assert_eq!(decode(CH_PDID_BASE + 4, &p), Some(Reg::ChPdidPriv(1)));
        assert_eq!(decode(CH_PDID_BASE + 8, &p), None);
        assert_eq!(
            decode(win_reg(2, WIN_CTRL), &p),
            Some(Reg::Win(2, WinField::Ctrl))
        );
        assert_eq!(decode(win_reg(2, 0x14), &p), None);
        assert_eq!(decode(win_reg(3, 0), &p), None);
        assert_eq!(decode(CQ_PAGE + CQ_W0 + 8, &p), Some(Reg::CqWord(2)));
        assert_eq!(decode(MB_PAGE + MB_DATA + 60, &p), Some(Reg::MbData(15)));
        assert_eq!(decode(MB_PAGE + MB_DATA + 64, &p), None);
        assert_eq!(decode(ch_page(1) + DOORBELL, &p), Some(Reg::Doorbell(1)));
        assert_eq!(
            decode(ch_page(1) + PKT_DATA + 4, &p),
            Some(Reg::PktData(1, 1))
        );
        assert_eq!(decode(ch_page(2), &p), None);
        assert_eq!(decode(ch_page(0) + 2, &p), None, "unaligned");
        assert_eq!(decode(AR_THRESHOLD, &p), None, "no engine: unmapped");
        assert_eq!(decode(ar_comm_reg(0, AR_CTRL), &p), None);
        let q = NiParams {
            ar_communicators: 2,
            ..p.clone()
        };
        assert_eq!(decode(AR_TIMEOUT, &q), Some(Reg::ArTimeout));
        assert_eq!(decode(AR_CNT_BASE + 8, &q), Some(Reg::ArCounter(2)));
        assert_eq!(decode(AR_CNT_BASE + 12, &q), None);
        assert_eq!(decode(AR_REJ_BASE + 36, &q), Some(Reg::ArRej(9)));
        assert_eq!(decode(AR_REJ_BASE + 40, &q), None);
        assert_eq!(
            decode(ar_comm_reg(1, AR_SCRATCH_SIZE), &q),
            Some(Reg::ArComm(1, CommField::ScratchSize))
        );
        assert_eq!(decode(ar_comm_reg(1, 0x1C), &q), None);
        assert_eq!(decode(ar_comm_reg(2, AR_ORIGIN), &q), None);
        assert!(Reg::ArComm(0, CommField::Ctrl).privileged());
        assert!(Reg::Win(0, WinField::Ctrl).privileged());
        assert!(!Reg::ChPdid(0).privileged());
        assert!(!Reg::CqPop.privileged());
    }
}
