//! The numbers the NI RTL shares with the golden model, taken from its
//! definitions and handed to the templates as fields: packet types
//! ([`PacketType`]), reject reasons ([`RejectReason`]), response flags
//! (`NACK_READ_BUSY`, `NACK_FULL`, `ACK_FLAGS`), completion kinds and status
//! ([`CqKind`], [`CqStatus`]), channel error codes ([`ChError`]), register
//! offsets and register bit fields (`exanet_sim::ni::regs`, the
//! descriptor's DESC_CTRL fields, the read request's payload fields). No
//! template writes one of them as a literal; the test
//! `codes_come_only_from_fields` checks that.
//!
//! Where the RTL's logic relies on a property of the codes (reasons dense
//! from 1, READ_BUSY just above them, the control responses one range of
//! type codes, register blocks aligned for bit-slice decoding), [`Codes::new`]
//! checks it and fails naming the definition, so a change of the golden
//! model that the RTL cannot follow stops generation instead of emitting
//! wrong hardware.

use super::geometry::Geometry;
use super::vgen::Bits;
use anyhow::{bail, ensure, Result};
use exanet_sim::allreduce::engine::FRAG_REJECTS;
use exanet_sim::ni::completion::{CqKind, CqStatus, CQ_W0_REASON};
use exanet_sim::ni::descriptor::{
    AR_DEST_COMM, AR_DEST_DTYPE, AR_DEST_OP, CTRL_MASK, CTRL_NOTIFY, CTRL_OP, CTRL_TXID,
    OP_ALLREDUCE,
};
use exanet_sim::ni::errors::RejectReason;
use exanet_sim::ni::packetizer::{ACK_FLAGS, NACK_FULL};
use exanet_sim::ni::rdma_rx::NACK_READ_BUSY;
use exanet_sim::ni::rdma_tx::{READ_REQ_BYTES, READ_REQ_LAND, READ_REQ_LEN};
use exanet_sim::ni::regs::{
    self, cnt, ChError, AR_CNT_COMPLETIONS, AR_CNT_FRAGS_RECEIVED, AR_CNT_FRAGS_SENT,
};
use exanet_sim::ni::Ni as GoldenNi;
use exanet_sim::packet::coords::{Coords, Field};
use exanet_sim::packet::footer::FLAGS;
use exanet_sim::packet::header::{PacketType, PTYPE, SIZE, VADDR};
use std::fmt;

/// Bits of IRQ_ENABLE the RTL keeps: up to the highest bit of
/// `IRQ_ENABLE_MASK` (= the highest STATUS bit).
const IRQ_BITS: usize = (32 - regs::IRQ_ENABLE_MASK.leading_zeros()) as usize;

/// A sized Verilog literal of a golden number. `{{ x }}` is decimal
/// (`4'd11`), `x.h()` hex padded to the width (`5'h13`, `12'h02C`),
/// `x.hg()` hex in groups of four (`32'h3FFF_0013`), `x.b()` binary
/// (`3'b001`). A *marked* literal renders as `«name»` in every form: the
/// drift test renders the templates with marked codes and looks for
/// literals left over.
#[derive(Clone, Copy, Debug)]
pub struct Lit {
    /// Bits.
    pub width: usize,
    /// Value.
    pub value: u64,
    name: &'static str,
    marked: bool,
}

impl Lit {
    pub fn new(width: usize, value: u64, name: &'static str, marked: bool) -> Lit {
        assert!(
            width >= 64 || value < 1 << width,
            "{name} = {value} does not fit {width} bits"
        );
        Lit {
            width,
            value,
            name,
            marked,
        }
    }

    fn mark(&self) -> Option<String> {
        self.marked.then(|| format!("«{}»", self.name))
    }

    /// Hex, zero-padded to the width: `5'h13`.
    pub fn h(&self) -> String {
        self.mark().unwrap_or_else(|| {
            format!(
                "{}'h{:0d$X}",
                self.width,
                self.value,
                d = self.width.div_ceil(4)
            )
        })
    }

    /// Hex in groups of four digits, not padded: `32'h3FFF_0013`.
    pub fn hg(&self) -> String {
        self.mark().unwrap_or_else(|| {
            let digits = format!("{:X}", self.value);
            let mut s = String::new();
            for (i, c) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i) % 4 == 0 {
                    s.push('_');
                }
                s.push(c);
            }
            format!("{}'h{s}", self.width)
        })
    }

    /// Binary, zero-padded to the width: `3'b001`.
    pub fn b(&self) -> String {
        self.mark()
            .unwrap_or_else(|| format!("{}'b{:0w$b}", self.width, self.value, w = self.width))
    }
}

impl fmt::Display for Lit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.mark() {
            Some(m) => f.write_str(&m),
            None => write!(f, "{}'d{}", self.width, self.value),
        }
    }
}

/// Packet type codes (`ptype`, [`PTYPE`] bits).
#[derive(Clone, Debug)]
pub struct Ptypes {
    pub rdma_write: Lit,
    pub rdma_read_req: Lit,
    pub mailbox: Lit,
    pub allreduce_fragment: Lit,
    pub rdma_read_resp: Lit,
    pub rdma_completion: Lit,
    pub ack: Lit,
    pub nack: Lit,
    pub mailbox_ack: Lit,
    pub mailbox_nack: Lit,
    /// The lowest and highest code of a class-1 type ([`PacketType::class`]):
    /// the RTL tests the class as this range.
    pub class1_lo: Lit,
    pub class1_hi: Lit,
}

/// Reject reason codes ([`RejectReason`]) as the RTL's 4-bit reason.
#[derive(Clone, Debug)]
pub struct Reasons {
    pub header_ecc: Lit,
    pub header_type: Lit,
    pub footer_crc: Lit,
    pub format: Lit,
    pub misrouted: Lit,
    pub payload_crc: Lit,
    pub window: Lit,
    pub pdid: Lit,
    pub stale: Lit,
    pub unsupported: Lit,
    pub wrong_class: Lit,
}

/// Footer `flags` values ([`FLAGS`] bits) of the responses.
#[derive(Clone, Debug)]
pub struct Flags {
    /// Nack: the read queue was full (`NACK_READ_BUSY`).
    pub read_busy: Lit,
    /// MailboxNack: the mailbox was full, retry (`NACK_FULL`).
    pub full: Lit,
    /// MailboxAck (`ACK_FLAGS`).
    pub ack: Lit,
    /// The largest reject reason ([`RejectReason::MAX_CODE`]).
    pub max_reason: Lit,
    /// MailboxNack PAYLOAD_CRC: the sender retries.
    pub payload_crc: Lit,
    /// The largest status an RdmaCompletion carries
    /// ([`CqStatus::Untracked`]).
    pub completion_max: Lit,
    /// The other status an RdmaCompletion may carry
    /// ([`CqStatus::MemError`]).
    pub mem_error: Lit,
}

/// Completion kinds and status, as the RTL's [`CQ_CODE_BITS`] entry fields.
#[derive(Clone, Debug)]
pub struct Cq {
    pub write_in: Lit,
    pub read_done: Lit,
    pub notify: Lit,
    pub allreduce: Lit,
    pub failed: Lit,
    pub ok: Lit,
    pub packet_rejected: Lit,
    pub untracked: Lit,
    pub remote_denied: Lit,
    pub mem_error: Lit,
}

/// Channel error codes ([`ChError`]): the doorbell / PKT_SEND checks as
/// 4-bit results, the others as 8-bit CH_ERR values.
#[derive(Clone, Debug)]
pub struct ChErrs {
    pub queue_full: Lit,
    pub bad_len: Lit,
    pub bad_addr: Lit,
    pub bad_op: Lit,
    pub pkt_full: Lit,
    pub pkt_bad_len: Lit,
    pub msg_denied: Lit,
    pub pdid_write: Lit,
}

/// Register pages (8-bit page numbers) and offsets (12-bit, 6-bit or
/// 5-bit as the decode compares them), from `exanet_sim::ni::regs`.
#[derive(Clone, Debug)]
pub struct Regs {
    pub node_page: Lit,
    pub cq_page: Lit,
    pub mb_page: Lit,
    pub ch_page0: Lit,
    // node page
    pub id: Lit,
    /// ID's value, as the golden model reads it.
    pub id_value: Lit,
    /// PARAMS0..4.
    pub params: [Lit; 5],
    /// PARAMS0..4's values for these parameters, as the golden model
    /// reads them.
    pub params_value: [Lit; 5],
    pub coords: Lit,
    pub control: Lit,
    pub status: Lit,
    pub mbox_ctrl: Lit,
    pub irq_enable: Lit,
    pub tx_packets: Lit,
    pub rx_packets: Lit,
    pub rx_rejected: Lit,
    pub hdr_corrected: Lit,
    pub mb_full_nacks: Lit,
    pub mb_retries: Lit,
    pub mb_denied: Lit,
    pub rx_data_bytes: Lit,
    pub tx_payload_bytes: Lit,
    /// The AXI4 error counters.
    pub rd_slverr: Lit,
    pub rd_decerr: Lit,
    pub wr_slverr: Lit,
    pub wr_decerr: Lit,
    pub rd_busy_nacks: Lit,
    /// REJ\[1\] and REJ\[MAX_CODE\].
    pub rej_first: Lit,
    pub rej_last: Lit,
    /// The offset bits that index REJ\[r\].
    pub rej_index: Bits,
    pub errq_count: Lit,
    /// ERRQ_W0..W4.
    pub errq_w: [Lit; 5],
    pub errq_pop: Lit,
    /// CH_PDID\[c\] of the node page: the first and the first past the
    /// last channel.
    pub ch_pdid_base: Lit,
    pub ch_pdid_end: Lit,
    /// Window registers: the offset bits above the windows, their value
    /// (`WIN_BASE`), the bits indexing the window, the bits of the field.
    pub win_region_bits: Bits,
    pub win_region: Lit,
    pub win_index_bits: Bits,
    pub win_field_bits: Bits,
    pub win_base_lo: Lit,
    pub win_base_hi: Lit,
    pub win_size_lo: Lit,
    pub win_size_hi: Lit,
    pub win_ctrl: Lit,
    // completion-queue page
    pub cq_count: Lit,
    /// CQ_W0..W2.
    pub cq_w: [Lit; 3],
    pub cq_pop: Lit,
    // mailbox page
    pub mb_count: Lit,
    pub mb_len: Lit,
    pub mb_src: Lit,
    pub mb_pdid: Lit,
    pub mb_pop: Lit,
    pub mb_data: Lit,
    pub mb_data_end: Lit,
    // channel page
    pub ch_status: Lit,
    pub ch_pdid: Lit,
    pub ch_err: Lit,
    /// DESC_LADDR_LO .. DESC_CTRL, as 12-bit offsets.
    pub desc: [Lit; 7],
    /// DESC_LADDR_LO .. DESC_DEST as 6-bit offsets (the staging write's
    /// `case`, DESC_CTRL its default).
    pub desc6: [Lit; 6],
    pub doorbell: Lit,
    pub pkt_dest: Lit,
    pub pkt_send: Lit,
    pub pkt_data: Lit,
    pub pkt_data_end: Lit,
}

/// Register bit fields, as slices of the written data (`s_wdata{{ b.x }}`)
/// or of the registers that mirror them.
#[derive(Clone, Debug)]
pub struct RegBits {
    pub tx_enable: Bits,
    /// STATUS sticky bits (W1C).
    pub st_rx_error: Bits,
    pub st_errq_overflow: Bits,
    pub st_track_lost: Bits,
    pub st_hdr_corrected: Bits,
    pub st_axi_error: Bits,
    /// MBOX_CTRL: PDID, OPEN, and both (the `mbox_q` register).
    pub mbox_pdid: Bits,
    pub mbox_open: Bits,
    pub mbox_ctrl: Bits,
    /// IRQ_ENABLE: the bits that exist (up to the highest STATUS bit) and
    /// the mask of those that do something (`IRQ_ENABLE_MASK`).
    pub irq_enable: Bits,
    pub irq_mask: Lit,
    pub ch_pdid: Bits,
    pub win_base_hi: Bits,
    pub win_size_hi: Bits,
    pub win_pdid: Bits,
    pub win_enable: Bits,
    /// DESC_*_HI, DESC_DEST / PKT_DEST (coordinates).
    pub addr_hi: Bits,
    pub coords: Bits,
    /// DESC_CTRL: op, its bit that makes it neither write (0) nor read (1),
    /// the bit telling a read, notify, txid.
    pub ctrl_op: Bits,
    pub ctrl_bad_op: Bits,
    pub ctrl_read: Bits,
    pub ctrl_notify: Bits,
    pub ctrl_txid: Bits,
    /// DESC_CTRL bits no field uses (for the unused-bits sink).
    pub ctrl_unused: Vec<Bits>,
    /// DESC_CTRL's kept bits (`CTRL_MASK`).
    pub ctrl_mask: Lit,
    /// PKT_SEND: the length.
    pub pkt_len: Bits,
    /// Read request payload word: the landing address, the length, the
    /// zero bits above.
    pub rr_land: Bits,
    pub rr_len: Bits,
    pub rr_zero: Bits,
}

/// Sizes from the golden packet format.
#[derive(Clone, Debug)]
pub struct Sizes {
    /// A read request's payload bytes ([`READ_REQ_BYTES`]) as the
    /// transmit side's 9-bit packet size.
    pub read_req: Lit,
    /// The same, as a 14-bit header `size`.
    pub read_req_size: Lit,
    /// `2^42` ([`VADDR`] bits): the end of the address space, as 43- and
    /// 65-bit sums compare it.
    pub vaddr_end43: Lit,
    /// The same, 65 bits.
    pub vaddr_end65: Lit,
}

/// Every golden number the NI templates use.
#[derive(Clone, Debug)]
pub struct Codes {
    /// Packet types.
    pub pt: Ptypes,
    /// Reject reasons.
    pub rej: Reasons,
    /// Response flags.
    pub fl: Flags,
    /// Completion kinds and status.
    pub cq: Cq,
    /// Channel error codes.
    pub ch: ChErrs,
    /// Register pages and offsets.
    pub reg: Regs,
    /// Register bit fields.
    pub bits: RegBits,
    /// Packet sizes.
    pub size: Sizes,
    /// The allreduce engine's descriptor fields and registers.
    pub ar: ArCodes,
}

/// The allreduce engine's numbers: the descriptor layout (DESC_CTRL op,
/// DESC_DEST fields) and the counter registers (node page).
#[derive(Clone, Debug)]
pub struct ArCodes {
    /// DESC_CTRL op code of an allreduce descriptor (the `ctrl_op` width).
    pub op_allreduce: Lit,
    /// DESC_DEST fields: communicator, op, dtype.
    pub comm: Bits,
    pub op: Bits,
    pub dtype: Bits,
    /// AR_CNT\[0..AR_CNT_COUNT\] and AR_REJ\[0..FRAG_REJECTS\]: first
    /// offset and one past the last, 12-bit.
    pub cnt_first: Lit,
    pub cnt_end: Lit,
    pub rej_first: Lit,
    pub rej_end: Lit,
    /// AR_CNT index of COMPLETIONS.
    pub cnt_completions: Lit,
    /// AR_CNT index of FRAGS_SENT.
    pub cnt_frags_sent: Lit,
    /// AR_CNT index of FRAGS_RECEIVED.
    pub cnt_frags_received: Lit,
}

/// Bits of the RTL's reject reason (ERRQ W0, the REJ\[r\] index).
pub const REASON_BITS: usize = CQ_W0_REASON.width as usize;

/// Bits of the RTL's completion kind and status entry fields.
pub const CQ_CODE_BITS: usize = 3;

/// The name of a packet type in the templates (every variant: a new
/// packet type does not compile until the RTL handles it).
fn ptype_name(t: PacketType) -> &'static str {
    match t {
        PacketType::RdmaWrite => "pt.rdma_write",
        PacketType::RdmaReadReq => "pt.rdma_read_req",
        PacketType::Mailbox => "pt.mailbox",
        PacketType::AllreduceFragment => "pt.allreduce_fragment",
        PacketType::RdmaReadResp => "pt.rdma_read_resp",
        PacketType::RdmaCompletion => "pt.rdma_completion",
        PacketType::Ack => "pt.ack",
        PacketType::Nack => "pt.nack",
        PacketType::MailboxAck => "pt.mailbox_ack",
        PacketType::MailboxNack => "pt.mailbox_nack",
    }
}

/// The name of a reject reason in the templates (every variant).
fn reason_name(r: RejectReason) -> &'static str {
    match r {
        RejectReason::HeaderEcc => "rej.header_ecc",
        RejectReason::HeaderType => "rej.header_type",
        RejectReason::FooterCrc => "rej.footer_crc",
        RejectReason::Format => "rej.format",
        RejectReason::Misrouted => "rej.misrouted",
        RejectReason::PayloadCrc => "rej.payload_crc",
        RejectReason::Window => "rej.window",
        RejectReason::Pdid => "rej.pdid",
        RejectReason::Stale => "rej.stale",
        RejectReason::Unsupported => "rej.unsupported",
        RejectReason::WrongClass => "rej.wrong_class",
    }
}

/// The name of a channel error in the templates (every variant).
fn ch_name(e: ChError) -> &'static str {
    match e {
        ChError::QueueFull => "ch.queue_full",
        ChError::BadLen => "ch.bad_len",
        ChError::BadAddr => "ch.bad_addr",
        ChError::BadOp => "ch.bad_op",
        ChError::PktFull => "ch.pkt_full",
        ChError::PktBadLen => "ch.pkt_bad_len",
        ChError::MsgDenied => "ch.msg_denied",
        ChError::PdidWrite => "ch.pdid_write",
    }
}

/// `f` as a slice.
fn bits(f: Field, marked: bool) -> Bits {
    Bits::new(f.offset as usize, f.width as usize, f.name, marked)
}

/// The one-bit slice of a one-bit register mask (`1 << n`).
fn bit_of(mask: u32, name: &'static str, marked: bool) -> Bits {
    assert!(mask.is_power_of_two(), "{name}: not one bit");
    Bits::new(mask.trailing_zeros() as usize, 1, name, marked)
}

/// `lo` and `hi` as one slice, failing unless `hi` starts where `lo` ends.
fn span(lo: Field, hi: Field, name: &'static str, marked: bool) -> Result<Bits> {
    ensure!(
        hi.offset == lo.offset + lo.width,
        "NI RTL: {name}: the golden fields `{}` and `{}` are not adjacent",
        lo.name,
        hi.name
    );
    Ok(Bits::new(
        lo.offset as usize,
        (lo.width + hi.width) as usize,
        name,
        marked,
    ))
}

impl Codes {
    /// The golden numbers for the NI of `g`; `marked` renders every one as
    /// its name (the drift test). Fails when a golden definition no longer
    /// has a property the RTL relies on, naming it.
    pub fn new(g: &Geometry, marked: bool) -> Result<Codes> {
        let lit = |w: usize, v: u64, name| Lit::new(w, v, name, marked);
        let ptw = PTYPE.width as usize;
        let pt = |t: PacketType| lit(ptw, t.code() as u64, ptype_name(t));
        // The RTL tests "class 1" as one range of codes.
        let c1: Vec<u8> = PacketType::ALL
            .iter()
            .filter(|t| t.class() == 1)
            .map(|t| t.code())
            .collect();
        let (lo, hi) = (*c1.iter().min().unwrap(), *c1.iter().max().unwrap());
        if let Some(t) = PacketType::ALL
            .iter()
            .find(|t| (lo..=hi).contains(&t.code()) && t.class() != 1)
        {
            bail!(
                "NI RTL: the class-1 packet types are tested as the codes {lo:#x}..={hi:#x}, but {t:?} ({:#x}) is class 0 (PacketType::class)",
                t.code()
            );
        }
        // Reasons: dense from 1 (REJ[r], the Nack and MailboxNack flag
        // checks), 4 bits.
        for (i, r) in RejectReason::ALL.iter().enumerate() {
            ensure!(
                r.code() as usize == i + 1,
                "NI RTL: reject reasons must be 1..=MAX_CODE in order; {r:?} is {}",
                r.code()
            );
        }
        let max = RejectReason::MAX_CODE;
        ensure!(
            (max as usize) < 1 << REASON_BITS && max as usize == RejectReason::ALL.len(),
            "NI RTL: RejectReason::MAX_CODE = {max} must be the number of reasons and fit {REASON_BITS} bits"
        );
        // Nack flags are valid as 1..=READ_BUSY, MailboxNack flags as
        // 0..=MAX_CODE; one assignment gives MailboxAck and the full
        // MailboxNack their flags.
        ensure!(
            NACK_READ_BUSY == max + 1,
            "NI RTL: NACK_READ_BUSY = {NACK_READ_BUSY} must be RejectReason::MAX_CODE + 1 (the Nack flags check is `1..=READ_BUSY`)"
        );
        ensure!(
            NACK_FULL == 0 && ACK_FLAGS == NACK_FULL,
            "NI RTL: NACK_FULL = {NACK_FULL} and ACK_FLAGS = {ACK_FLAGS} must both be 0 (the MailboxNack flags check is `0..=MAX_CODE`; the mailbox answers both with one flags value)"
        );
        let rej = |r: RejectReason| lit(REASON_BITS, r.code() as u64, reason_name(r));
        let flw = FLAGS.width as usize;
        let cqk = |k: CqKind, name| lit(CQ_CODE_BITS, k as u64, name);
        let cqs = |s: CqStatus, name| lit(CQ_CODE_BITS, s as u64, name);
        ensure!(
            (CqStatus::MemError as usize) < 1 << CQ_CODE_BITS
                && (CqKind::Allreduce as usize) < 1 << CQ_CODE_BITS,
            "NI RTL: completion kinds and status must fit {CQ_CODE_BITS} bits"
        );
        // The doorbell and PKT_SEND results are 4 bits, CH_ERR 8.
        let ch4 = |e: ChError| lit(4, e as u64, ch_name(e));
        let ch8 = |e: ChError| lit(8, e as u64, ch_name(e));

        // Register decode by bit slices: 4 KiB pages (address [19:12]),
        // REJ[r] indexed by offset bits [5:2], windows by [8:5] when the
        // stride is 0x20, aligned blocks for CH_PDID, PKT_DATA and MB_DATA.
        ensure!(
            regs::PAGE == 0x1000,
            "NI RTL: regs::PAGE = {:#x}: the decode takes the page from address bits [19:12]",
            regs::PAGE
        );
        ensure!(
            regs::REJ_BASE.is_multiple_of(4 << REASON_BITS),
            "NI RTL: regs::REJ_BASE = {:#x} must be a multiple of {:#x} (REJ[r] is indexed by offset bits)",
            regs::REJ_BASE,
            4 << REASON_BITS
        );
        let ws = regs::WIN_STRIDE;
        let wlsb = ws.trailing_zeros() as usize;
        ensure!(
            ws.is_power_of_two() && regs::WIN_BASE.is_multiple_of(16 * ws) && regs::WIN_CTRL < ws,
            "NI RTL: regs::WIN_STRIDE = {ws:#x} must be a power of two above every window field and regs::WIN_BASE = {:#x} a multiple of 16 strides (windows are decoded by offset bits)",
            regs::WIN_BASE
        );
        for (name, base, bytes) in [
            ("CH_PDID_BASE", regs::CH_PDID_BASE, 4 * 16),
            ("PKT_DATA", regs::PKT_DATA, 256),
            ("MB_DATA", regs::MB_DATA, 256),
        ] {
            ensure!(
                base.is_multiple_of(bytes),
                "NI RTL: regs::{name} = {base:#x} must be a multiple of {bytes:#x} (its words are indexed by offset bits)"
            );
        }
        let desc = [
            (regs::DESC_LADDR_LO, "DESC_LADDR_LO"),
            (regs::DESC_LADDR_HI, "DESC_LADDR_HI"),
            (regs::DESC_RADDR_LO, "DESC_RADDR_LO"),
            (regs::DESC_RADDR_HI, "DESC_RADDR_HI"),
            (regs::DESC_LEN, "DESC_LEN"),
            (regs::DESC_DEST, "DESC_DEST"),
            (regs::DESC_CTRL, "DESC_CTRL"),
        ];
        ensure!(
            desc.iter().all(|d| d.0 < 64),
            "NI RTL: the DESC_* offsets must be below 0x40 (the staging write decodes offset bits [5:0])"
        );
        let o = |off: u32, name| lit(12, off as u64, name);
        let page = |base: u32, name| lit(8, (base / regs::PAGE) as u64, name);
        let counter = |i: usize, name| o(regs::CNT_BASE + 4 * i as u32, name);
        let wf = |off: u32, name| lit(wlsb, off as u64, name);
        let n = &g.p.ni;

        // ID and PARAMS0..4 as the golden model reads them.
        let golden = GoldenNi::new(n, Coords::default())?;
        let rd = |a: u32| golden.axil_read_priv(a) as u64;
        let par = |i: usize, name| lit(32, rd(regs::PARAMS0 + 4 * i as u32), name);

        // DESC_CTRL: op is 0 (write) or 1 (read); a set bit above bit 0 of
        // the op is BAD_OP.
        ensure!(
            CTRL_OP.width == 2,
            "NI RTL: DESC_CTRL op is 2 bits (write 0, read 1, bad op when bit 1 is set)"
        );
        let fields = [CTRL_OP, CTRL_NOTIFY, CTRL_TXID];
        let mask = fields.iter().fold(0u32, |m, f| m | f.mask() as u32);
        ensure!(
            mask == CTRL_MASK,
            "NI RTL: DESC_CTRL fields {fields:?} do not make CTRL_MASK = {CTRL_MASK:#x}"
        );
        // The bits no field holds, top down, as slices.
        let mut ctrl_unused = Vec::new();
        let mut b = 32usize;
        while b > 0 {
            if mask >> (b - 1) & 1 == 1 {
                b -= 1;
                continue;
            }
            let hi = b;
            while b > 0 && mask >> (b - 1) & 1 == 0 {
                b -= 1;
            }
            ctrl_unused.push(Bits::new(b, hi - b, "ctrl_unused", marked));
        }
        let rr_top = (READ_REQ_LEN.offset + READ_REQ_LEN.width) as usize;
        ensure!(
            READ_REQ_LAND.offset == 0
                && READ_REQ_LEN.offset == READ_REQ_LAND.width
                && rr_top < 8 * READ_REQ_BYTES,
            "NI RTL: a read request's payload word is {{zero, len, land}} from bit 0"
        );

        Ok(Codes {
            pt: Ptypes {
                rdma_write: pt(PacketType::RdmaWrite),
                rdma_read_req: pt(PacketType::RdmaReadReq),
                mailbox: pt(PacketType::Mailbox),
                allreduce_fragment: pt(PacketType::AllreduceFragment),
                rdma_read_resp: pt(PacketType::RdmaReadResp),
                rdma_completion: pt(PacketType::RdmaCompletion),
                ack: pt(PacketType::Ack),
                nack: pt(PacketType::Nack),
                mailbox_ack: pt(PacketType::MailboxAck),
                mailbox_nack: pt(PacketType::MailboxNack),
                class1_lo: lit(ptw, lo as u64, "pt.class1_lo"),
                class1_hi: lit(ptw, hi as u64, "pt.class1_hi"),
            },
            rej: Reasons {
                header_ecc: rej(RejectReason::HeaderEcc),
                header_type: rej(RejectReason::HeaderType),
                footer_crc: rej(RejectReason::FooterCrc),
                format: rej(RejectReason::Format),
                misrouted: rej(RejectReason::Misrouted),
                payload_crc: rej(RejectReason::PayloadCrc),
                window: rej(RejectReason::Window),
                pdid: rej(RejectReason::Pdid),
                stale: rej(RejectReason::Stale),
                unsupported: rej(RejectReason::Unsupported),
                wrong_class: rej(RejectReason::WrongClass),
            },
            fl: Flags {
                read_busy: lit(flw, NACK_READ_BUSY as u64, "fl.read_busy"),
                full: lit(flw, NACK_FULL as u64, "fl.full"),
                ack: lit(flw, ACK_FLAGS as u64, "fl.ack"),
                max_reason: lit(flw, max as u64, "fl.max_reason"),
                payload_crc: lit(
                    flw,
                    RejectReason::PayloadCrc.code() as u64,
                    "fl.payload_crc",
                ),
                completion_max: lit(flw, CqStatus::Untracked as u64, "fl.completion_max"),
                mem_error: lit(flw, CqStatus::MemError as u64, "fl.mem_error"),
            },
            cq: Cq {
                write_in: cqk(CqKind::WriteIn, "cq.write_in"),
                read_done: cqk(CqKind::ReadDone, "cq.read_done"),
                notify: cqk(CqKind::Notify, "cq.notify"),
                allreduce: cqk(CqKind::Allreduce, "cq.allreduce"),
                failed: cqs(CqStatus::Failed, "cq.failed"),
                ok: cqs(CqStatus::Ok, "cq.ok"),
                packet_rejected: cqs(CqStatus::PacketRejected, "cq.packet_rejected"),
                untracked: cqs(CqStatus::Untracked, "cq.untracked"),
                remote_denied: cqs(CqStatus::RemoteDenied, "cq.remote_denied"),
                mem_error: cqs(CqStatus::MemError, "cq.mem_error"),
            },
            ch: ChErrs {
                queue_full: ch4(ChError::QueueFull),
                bad_len: ch4(ChError::BadLen),
                bad_addr: ch4(ChError::BadAddr),
                bad_op: ch4(ChError::BadOp),
                pkt_full: ch4(ChError::PktFull),
                pkt_bad_len: ch4(ChError::PktBadLen),
                msg_denied: ch8(ChError::MsgDenied),
                pdid_write: ch8(ChError::PdidWrite),
            },
            reg: Regs {
                node_page: page(regs::NODE_PAGE, "reg.node_page"),
                cq_page: page(regs::CQ_PAGE, "reg.cq_page"),
                mb_page: page(regs::MB_PAGE, "reg.mb_page"),
                ch_page0: page(regs::CH_PAGE0, "reg.ch_page0"),
                id: o(regs::ID, "reg.id"),
                id_value: lit(32, rd(regs::ID), "reg.id_value"),
                params: [
                    o(regs::PARAMS0, "reg.params0"),
                    o(regs::PARAMS1, "reg.params1"),
                    o(regs::PARAMS2, "reg.params2"),
                    o(regs::PARAMS3, "reg.params3"),
                    o(regs::PARAMS4, "reg.params4"),
                ],
                params_value: [
                    par(0, "reg.params0_value"),
                    par(1, "reg.params1_value"),
                    par(2, "reg.params2_value"),
                    par(3, "reg.params3_value"),
                    par(4, "reg.params4_value"),
                ],
                coords: o(regs::COORDS, "reg.coords"),
                control: o(regs::CONTROL, "reg.control"),
                status: o(regs::STATUS, "reg.status"),
                mbox_ctrl: o(regs::MBOX_CTRL, "reg.mbox_ctrl"),
                irq_enable: o(regs::IRQ_ENABLE, "reg.irq_enable"),
                tx_packets: counter(cnt::TX_PACKETS, "reg.tx_packets"),
                rx_packets: counter(cnt::RX_PACKETS, "reg.rx_packets"),
                rx_rejected: counter(cnt::RX_REJECTED, "reg.rx_rejected"),
                hdr_corrected: counter(cnt::HDR_CORRECTED, "reg.hdr_corrected"),
                mb_full_nacks: counter(cnt::MB_FULL_NACKS, "reg.mb_full_nacks"),
                mb_retries: counter(cnt::MB_RETRIES, "reg.mb_retries"),
                mb_denied: counter(cnt::MB_DENIED, "reg.mb_denied"),
                rx_data_bytes: counter(cnt::RX_DATA_BYTES, "reg.rx_data_bytes"),
                tx_payload_bytes: counter(cnt::TX_PAYLOAD_BYTES, "reg.tx_payload_bytes"),
                rd_busy_nacks: counter(cnt::RD_BUSY_NACKS, "reg.rd_busy_nacks"),
                rd_slverr: counter(cnt::RD_SLVERR, "reg.rd_slverr"),
                rd_decerr: counter(cnt::RD_DECERR, "reg.rd_decerr"),
                wr_slverr: counter(cnt::WR_SLVERR, "reg.wr_slverr"),
                wr_decerr: counter(cnt::WR_DECERR, "reg.wr_decerr"),
                rej_first: o(regs::REJ_BASE + 4, "reg.rej_first"),
                rej_last: o(regs::REJ_BASE + 4 * max as u32, "reg.rej_last"),
                rej_index: Bits::new(2, REASON_BITS, "reg.rej_index", marked),
                errq_count: o(regs::ERRQ_COUNT, "reg.errq_count"),
                errq_w: [
                    o(regs::ERRQ_W0, "reg.errq_w0"),
                    o(regs::ERRQ_W0 + 4, "reg.errq_w1"),
                    o(regs::ERRQ_W0 + 8, "reg.errq_w2"),
                    o(regs::ERRQ_W0 + 12, "reg.errq_w3"),
                    o(regs::ERRQ_W0 + 16, "reg.errq_w4"),
                ],
                errq_pop: o(regs::ERRQ_POP, "reg.errq_pop"),
                ch_pdid_base: o(regs::CH_PDID_BASE, "reg.ch_pdid_base"),
                ch_pdid_end: o(
                    regs::CH_PDID_BASE + 4 * n.channels as u32,
                    "reg.ch_pdid_end",
                ),
                win_region_bits: Bits::new(
                    wlsb + 4,
                    12 - (wlsb + 4),
                    "reg.win_region_bits",
                    marked,
                ),
                win_region: lit(
                    12 - (wlsb + 4),
                    (regs::WIN_BASE >> (wlsb + 4)) as u64,
                    "reg.win_region",
                ),
                win_index_bits: Bits::new(wlsb, 4, "reg.win_index_bits", marked),
                win_field_bits: Bits::new(0, wlsb, "reg.win_field_bits", marked),
                win_base_lo: wf(regs::WIN_BASE_LO, "reg.win_base_lo"),
                win_base_hi: wf(regs::WIN_BASE_HI, "reg.win_base_hi"),
                win_size_lo: wf(regs::WIN_SIZE_LO, "reg.win_size_lo"),
                win_size_hi: wf(regs::WIN_SIZE_HI, "reg.win_size_hi"),
                win_ctrl: wf(regs::WIN_CTRL, "reg.win_ctrl"),
                cq_count: o(regs::CQ_COUNT, "reg.cq_count"),
                cq_w: [
                    o(regs::CQ_W0, "reg.cq_w0"),
                    o(regs::CQ_W0 + 4, "reg.cq_w1"),
                    o(regs::CQ_W0 + 8, "reg.cq_w2"),
                ],
                cq_pop: o(regs::CQ_POP, "reg.cq_pop"),
                mb_count: o(regs::MB_COUNT, "reg.mb_count"),
                mb_len: o(regs::MB_LEN, "reg.mb_len"),
                mb_src: o(regs::MB_SRC, "reg.mb_src"),
                mb_pdid: o(regs::MB_PDID, "reg.mb_pdid"),
                mb_pop: o(regs::MB_POP, "reg.mb_pop"),
                mb_data: o(regs::MB_DATA, "reg.mb_data"),
                mb_data_end: o(regs::MB_DATA + 4 * g.mw as u32, "reg.mb_data_end"),
                ch_status: o(regs::CH_STATUS, "reg.ch_status"),
                ch_pdid: o(regs::CH_PDID, "reg.ch_pdid"),
                ch_err: o(regs::CH_ERR, "reg.ch_err"),
                desc: desc.map(|(off, name)| o(off, name)),
                desc6: [0, 1, 2, 3, 4, 5].map(|i| lit(6, desc[i].0 as u64, desc[i].1)),
                doorbell: o(regs::DOORBELL, "reg.doorbell"),
                pkt_dest: o(regs::PKT_DEST, "reg.pkt_dest"),
                pkt_send: o(regs::PKT_SEND, "reg.pkt_send"),
                pkt_data: o(regs::PKT_DATA, "reg.pkt_data"),
                pkt_data_end: o(regs::PKT_DATA + 4 * g.mw as u32, "reg.pkt_data_end"),
            },
            bits: RegBits {
                tx_enable: bits(regs::CONTROL_TX_ENABLE, marked),
                st_rx_error: bit_of(regs::ST_RX_ERROR, "st_rx_error", marked),
                st_errq_overflow: bit_of(regs::ST_ERRQ_OVERFLOW, "st_errq_overflow", marked),
                st_track_lost: bit_of(regs::ST_TRACK_LOST, "st_track_lost", marked),
                st_hdr_corrected: bit_of(regs::ST_HDR_CORRECTED, "st_hdr_corrected", marked),
                st_axi_error: bit_of(regs::ST_AXI_ERROR, "st_axi_error", marked),
                mbox_pdid: bits(regs::MBOX_CTRL_PDID, marked),
                mbox_open: bits(regs::MBOX_CTRL_OPEN, marked),
                mbox_ctrl: span(
                    regs::MBOX_CTRL_PDID,
                    regs::MBOX_CTRL_OPEN,
                    "mbox_ctrl",
                    marked,
                )?,
                irq_enable: Bits::new(0, IRQ_BITS, "irq_enable", marked),
                irq_mask: lit(IRQ_BITS, regs::IRQ_ENABLE_MASK as u64, "irq_mask"),
                ch_pdid: bits(regs::CH_PDID_BITS, marked),
                win_base_hi: bits(regs::WIN_BASE_HI_BITS, marked),
                win_size_hi: bits(regs::WIN_SIZE_HI_BITS, marked),
                win_pdid: bits(regs::WIN_CTRL_PDID, marked),
                win_enable: bits(regs::WIN_CTRL_ENABLE, marked),
                addr_hi: bits(regs::DESC_ADDR_HI_BITS, marked),
                coords: Bits::new(
                    0,
                    exanet_sim::packet::coords::COORDS_BITS as usize,
                    "coords",
                    marked,
                ),
                ctrl_op: bits(CTRL_OP, marked),
                ctrl_bad_op: Bits::new(CTRL_OP.offset as usize + 1, 1, "ctrl_bad_op", marked),
                ctrl_read: Bits::new(CTRL_OP.offset as usize, 1, "ctrl_read", marked),
                ctrl_notify: bits(CTRL_NOTIFY, marked),
                ctrl_txid: bits(CTRL_TXID, marked),
                ctrl_unused,
                ctrl_mask: lit(32, CTRL_MASK as u64, "ctrl_mask"),
                pkt_len: bits(regs::PKT_SEND_LEN, marked),
                rr_land: bits(READ_REQ_LAND, marked),
                rr_len: bits(READ_REQ_LEN, marked),
                rr_zero: Bits::new(rr_top, 8 * READ_REQ_BYTES - rr_top, "rr_zero", marked),
            },
            ar: ArCodes {
                op_allreduce: lit(
                    CTRL_OP.width as usize,
                    OP_ALLREDUCE as u64,
                    "ar.op_allreduce",
                ),
                comm: bits(AR_DEST_COMM, marked),
                op: bits(AR_DEST_OP, marked),
                dtype: bits(AR_DEST_DTYPE, marked),
                cnt_first: lit(12, regs::AR_CNT_BASE as u64, "ar.cnt_first"),
                cnt_end: lit(
                    12,
                    (regs::AR_CNT_BASE + 4 * regs::AR_CNT_COUNT as u32) as u64,
                    "ar.cnt_end",
                ),
                rej_first: lit(12, regs::AR_REJ_BASE as u64, "ar.rej_first"),
                rej_end: lit(
                    12,
                    (regs::AR_REJ_BASE + 4 * FRAG_REJECTS as u32) as u64,
                    "ar.rej_end",
                ),
                cnt_completions: lit(2, AR_CNT_COMPLETIONS as u64, "ar.cnt_completions"),
                cnt_frags_sent: lit(2, AR_CNT_FRAGS_SENT as u64, "ar.cnt_frags_sent"),
                cnt_frags_received: lit(2, AR_CNT_FRAGS_RECEIVED as u64, "ar.cnt_frags_received"),
            },
            size: Sizes {
                read_req: lit(9, READ_REQ_BYTES as u64, "size.read_req"),
                read_req_size: lit(
                    SIZE.width as usize,
                    READ_REQ_BYTES as u64,
                    "size.read_req_size",
                ),
                vaddr_end43: lit(43, 1 << VADDR.width, "size.vaddr_end43"),
                vaddr_end65: lit(65, 1 << VADDR.width, "size.vaddr_end65"),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ni::top::{body, NiRtlParams};
    use exanet_sim::ni::completion::{CqEntry, CQ_W0_KIND, CQ_W0_STATUS, CQ_W0_TXID};
    use exanet_sim::ni::completion::{CQ_W1_PEER, CQ_W2_PDID};
    use exanet_sim::ni::descriptor::{Descriptor, Op};
    use exanet_sim::ni::driver;
    use exanet_sim::ni::errors::{self as eq, ErrorEntry};
    use exanet_sim::ni::rdma_tx::ReadRequest;
    use exanet_sim::ni::NiParams;
    use exanet_sim::packet::footer::Footer;
    use exanet_sim::packet::header::Header;

    /// Sized literals `W'dV`, `W'hV`, `W'bV` of `text`: (width, value).
    fn literals(text: &str) -> Vec<(usize, u64)> {
        let b = text.as_bytes();
        let mut out = Vec::new();
        for (i, _) in text.match_indices('\'') {
            let mut s = i;
            while s > 0 && b[s - 1].is_ascii_digit() {
                s -= 1;
            }
            let (Some(&radix), true) = (b.get(i + 1), s < i) else {
                continue;
            };
            let radix = match radix {
                b'd' => 10,
                b'h' => 16,
                b'b' => 2,
                _ => continue,
            };
            let digits: String = text[i + 2..]
                .chars()
                .take_while(|c| c.is_ascii_hexdigit() || *c == '_')
                .filter(|c| *c != '_')
                .collect();
            if let (Ok(w), Ok(v)) = (text[s..i].parse(), u64::from_str_radix(&digits, radix)) {
                out.push((w, v));
            }
        }
        out
    }

    /// The identifiers of `line`.
    fn idents(line: &str) -> Vec<&str> {
        line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
            .filter(|s| !s.is_empty())
            .collect()
    }

    /// Where a golden number is used: the signals it is assigned to or
    /// compared with (a line naming one, or a label of a `case` on one),
    /// the widths it is written at, and its values (`None`: any value).
    struct Context {
        what: &'static str,
        signals: &'static [&'static str],
        widths: &'static [usize],
        values: Option<Vec<u64>>,
    }

    fn contexts() -> Vec<Context> {
        let ptypes = PacketType::ALL.iter().map(|t| t.code() as u64).collect();
        let reasons: Vec<u64> = RejectReason::ALL.iter().map(|r| r.code() as u64).collect();
        let mut flags = reasons.clone();
        flags.extend([NACK_READ_BUSY, NACK_FULL, ACK_FLAGS].map(u64::from));
        flags.extend([CqStatus::PacketRejected, CqStatus::Untracked].map(|s| s as u64));
        let cq = [CqKind::WriteIn, CqKind::ReadDone, CqKind::Notify]
            .map(|k| k as u64)
            .into_iter()
            .chain(
                [
                    CqStatus::PacketRejected,
                    CqStatus::Untracked,
                    CqStatus::RemoteDenied,
                ]
                .map(|s| s as u64),
            )
            .collect();
        let ch = (1..=8).collect();
        let pages = [
            regs::NODE_PAGE,
            regs::CQ_PAGE,
            regs::MB_PAGE,
            regs::CH_PAGE0,
        ]
        .map(|p| (p / regs::PAGE) as u64)
        .to_vec();
        vec![
            Context {
                what: "packet type",
                signals: &["x_pt", "x_rq_pt", "e_ptype"],
                widths: &[PTYPE.width as usize],
                values: Some(ptypes),
            },
            Context {
                what: "reject reason",
                signals: &["x_reason"],
                widths: &[REASON_BITS],
                values: Some(reasons),
            },
            Context {
                what: "response flags",
                signals: &["footer_unpack$flags", "x_rq_fl", "rsp_ftr$flags"],
                widths: &[FLAGS.width as usize],
                values: Some(flags),
            },
            Context {
                what: "completion kind / status",
                signals: &["x_st", "x_cq_kind", "x_cq_st"],
                widths: &[CQ_CODE_BITS],
                values: Some(cq),
            },
            Context {
                what: "channel error",
                signals: &["db_code", "ps_code", "ch_err"],
                widths: &[4, 8],
                values: Some(ch),
            },
            Context {
                what: "register offset",
                signals: &["w_off", "r_off"],
                widths: &[12, 6, 5, 3],
                values: None,
            },
            Context {
                what: "register page",
                signals: &["w_page", "r_page"],
                widths: &[8],
                values: Some(pages),
            },
        ]
    }

    /// Vectors whose every bit slice is a golden field or a record field.
    const SLICED: [&str; 11] = [
        "s_wdata[",
        "mbox_q[",
        "st_ctrl[w_ch][",
        "x_p1[",
        "dq_rd[",
        "rd_e[",
        "cq_rd[",
        "eq_rd[",
        "rq_rd[",
        "lq_rd[",
        "mb_hm[",
    ];

    /// Every golden number written as a literal in `text` (a body rendered
    /// with marked codes, where every number from a field is `«name»`):
    /// `(line number, what, line)`.
    fn leftovers(text: &str) -> Vec<(usize, String, String)> {
        let ctx = contexts();
        let mut found = Vec::new();
        // The signal of the `case` being inside of, if any.
        let mut case_on: Vec<String> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let t = line.trim();
            if let Some(rest) = t.strip_prefix("case (") {
                case_on.push(rest.to_string());
            }
            if t.starts_with("endcase") {
                case_on.pop();
            }
            // A case label: the text before `:` when it is only literals.
            let label = t
                .split_once(':')
                .map(|(l, _)| l)
                .filter(|l| !l.contains('=') && !l.contains('(') && !l.contains('['));
            let ids = idents(line);
            for c in &ctx {
                let named = c.signals.iter().any(|s| ids.contains(s));
                let in_case = case_on
                    .last()
                    .is_some_and(|s| c.signals.iter().any(|sig| idents(s).contains(sig)));
                let mut check = Vec::new();
                if named {
                    check.extend(literals(line));
                }
                if let (true, Some(l)) = (in_case, label) {
                    check.extend(literals(l));
                }
                for (w, v) in check {
                    let is_code = c.values.as_ref().is_none_or(|vs| vs.contains(&v) && v != 0);
                    if c.widths.contains(&w) && is_code {
                        found.push((n + 1, format!("{} {w}'d{v}", c.what), line.to_string()));
                    }
                }
            }
            for v in SLICED {
                for (i, _) in line.match_indices(v) {
                    if line[i + v.len()..].starts_with(|c: char| c.is_ascii_digit()) {
                        found.push((n + 1, format!("literal slice {v}…]"), line.to_string()));
                    }
                }
            }
        }
        found
    }

    fn scan_point() -> NiRtlParams {
        // Parameters whose own numbers fall in no code context: 5 channels
        // (index literals 3 bits wide, no page number), 256-byte payloads
        // (ring indices 7 bits wide).
        let mut p = NiRtlParams::default();
        p.ni.channels = 5;
        // With the allreduce engine's first stage, so its template is
        // scanned too.
        p.ni.ar_communicators = 3;
        p
    }

    /// The drift test: with every golden number rendered as its name, no
    /// literal of a packet type, reject reason, flags value, completion
    /// code, channel error, register page or offset is left where such a
    /// code is used, and no literal slice of a register or record field.
    /// A template that writes one of them as a number fails here.
    #[test]
    fn codes_come_only_from_fields() {
        let g = Geometry::new(&scan_point()).unwrap();
        assert!(g.ar);
        let marked = body(&g, true).unwrap();
        let left = leftovers(&marked);
        assert!(
            left.is_empty(),
            "golden numbers written as literals in the NI templates:\n{}",
            left.iter()
                .map(|(n, what, l)| format!("  line {n}: {what}: {}", l.trim()))
                .collect::<Vec<_>>()
                .join("\n")
        );
        // The scan looks at what it should: the marks are there …
        for m in [
            "«rej.wrong_class»",
            "«fl.read_busy»",
            "«pt.nack»",
            "«reg.status»",
            "[«txid»]",
        ] {
            assert!(marked.contains(m), "no `{m}` in the marked body");
        }
        // … and the real body has the numbers in their place, so a code
        // written as a literal would be caught.
        let real = body(&g, false).unwrap();
        assert!(leftovers(&real).len() > 100);
        for bad in [
            "        else if (x_tcls != rx_cls) x_reason = 4'd11;",
            "        x_rq_fl = 8'd12;",
            "        5'h13: x_fmt = 1'b0;",
            "    x_cq_st = 3'd3;",
            "                if (w_off == 12'h028) begin a_status = 1'b1; end",
            "            if (s_wdata[2]) trk_lost <= 1'b0;",
            "    rsp_hdr$ptype = rq_rd[4:0];",
        ] {
            let text = format!("always @(*) begin\n    case (x_pt)\n{bad}\n    endcase\nend\n");
            assert_eq!(leftovers(&text).len(), 1, "not caught: {bad}");
        }
    }

    /// The rendering is the real one with each mark replaced by its value:
    /// the fields are the only difference between the two bodies.
    #[test]
    fn marked_and_real_bodies_differ_only_at_fields() {
        let g = Geometry::new(&scan_point()).unwrap();
        let (m, r) = (body(&g, true).unwrap(), body(&g, false).unwrap());
        let (ml, rl): (Vec<_>, Vec<_>) = (m.lines().collect(), r.lines().collect());
        assert_eq!(ml.len(), rl.len());
        let differ = ml.iter().zip(&rl).filter(|(a, b)| a != b).count();
        for (a, b) in ml.iter().zip(&rl) {
            if a != b {
                assert!(a.contains('«'), "`{a}` differs from `{b}` without a field");
            }
        }
        assert!(differ > 150, "only {differ} lines take golden numbers");
    }

    #[test]
    fn literal_forms() {
        let l = Lit::new(5, 0x13, "pt.nack", false);
        assert_eq!(
            (l.to_string(), l.h(), l.b()),
            ("5'd19".into(), "5'h13".into(), "5'b10011".into())
        );
        assert_eq!(Lit::new(12, 0x2C, "x", false).h(), "12'h02C");
        assert_eq!(Lit::new(32, 0x3FFF_0013, "x", false).hg(), "32'h3FFF_0013");
        assert_eq!(Lit::new(65, 1 << 42, "x", false).hg(), "65'h400_0000_0000");
        let m = Lit::new(5, 0x13, "pt.nack", true);
        assert_eq!(
            (m.to_string(), m.h()),
            ("«pt.nack»".into(), "«pt.nack»".into())
        );
    }

    // ---- the golden definitions added for the RTL agree with the golden
    // model's behaviour ----

    fn field(w: u32, f: Field) -> u64 {
        f.get(w as u128)
    }

    #[test]
    fn cq_and_errq_word_fields_match_the_golden_words() {
        let peer = Coords::new(15, 3, 9, 2).unwrap();
        let e = CqEntry {
            kind: CqKind::Notify,
            status: CqStatus::RemoteDenied,
            reason: 11,
            txid: 0x2ABC,
            peer,
            pdid: 0xBEEF,
        };
        let w = e.words();
        assert_eq!(field(w[0], CQ_W0_KIND), CqKind::Notify as u64);
        assert_eq!(field(w[0], CQ_W0_STATUS), CqStatus::RemoteDenied as u64);
        assert_eq!(field(w[0], CQ_W0_REASON), 11);
        assert_eq!(field(w[0], CQ_W0_TXID), 0x2ABC);
        assert_eq!(field(w[1], CQ_W1_PEER), peer.to_bits() as u64);
        assert_eq!(field(w[2], CQ_W2_PDID), 0xBEEF);
        let fields = [CQ_W0_KIND, CQ_W0_STATUS, CQ_W0_REASON, CQ_W0_TXID];
        let all = CqEntry {
            reason: 0xF,
            txid: 0x3FFF,
            ..e
        };
        let mask = fields.iter().fold(0, |m, f| m | f.mask() as u32);
        assert_eq!(all.words()[0] & !mask, 0, "CQ_W0 bits outside the fields");

        let mut h = Header::new(PacketType::MailboxNack, peer);
        h.set_vaddr(0x3_8765_4321 | 1 << 41)
            .unwrap()
            .set_size(0x2A5)
            .unwrap()
            .set_pdid(0x1234)
            .unwrap();
        let mut f = Footer::new(peer);
        f.set_txid(0x1555).unwrap();
        let e = ErrorEntry {
            reason: RejectReason::WrongClass,
            header: Some(h),
            footer: Some(f),
        };
        let w = e.words();
        assert_eq!(field(w[0], eq::ERRQ_W0_REASON), 11);
        assert_eq!(field(w[0], eq::ERRQ_W0_HEADER_OK), 1);
        assert_eq!(field(w[0], eq::ERRQ_W0_FOOTER_OK), 1);
        assert_eq!(
            field(w[0], eq::ERRQ_W0_PTYPE),
            PacketType::MailboxNack.code() as u64
        );
        assert_eq!(field(w[0], eq::ERRQ_W0_TXID), 0x1555);
        assert_eq!(field(w[1], eq::ERRQ_W1_SRC), peer.to_bits() as u64);
        assert_eq!(field(w[2], eq::ERRQ_W2_PDID), 0x1234);
        assert_eq!(field(w[2], eq::ERRQ_W2_SIZE), 0x2A5);
        let vaddr = field(w[3], eq::ERRQ_W3_VADDR_LO) | field(w[4], eq::ERRQ_W4_VADDR_HI) << 32;
        assert_eq!(vaddr, h.vaddr());
    }

    #[test]
    fn register_fields_match_the_golden_registers() {
        let p = NiParams::default();
        let me = Coords::new(1, 2, 3, 0).unwrap();
        let mut ni = GoldenNi::new(&p, me).unwrap();
        let all = u32::MAX;
        let rw = |ni: &mut GoldenNi, a: u32| {
            ni.axil_write_priv(a, all);
            ni.axil_read_priv(a)
        };
        let m = |fs: &[Field]| fs.iter().fold(0, |m, f| m | f.mask() as u32);
        assert_eq!(rw(&mut ni, regs::CONTROL), m(&[regs::CONTROL_TX_ENABLE]));
        assert_eq!(
            rw(&mut ni, regs::MBOX_CTRL),
            m(&[regs::MBOX_CTRL_PDID, regs::MBOX_CTRL_OPEN])
        );
        assert_eq!(rw(&mut ni, regs::CH_PDID_BASE), m(&[regs::CH_PDID_BITS]));
        for (f, bits) in [
            (regs::WIN_BASE_HI, regs::WIN_BASE_HI_BITS),
            (regs::WIN_SIZE_HI, regs::WIN_SIZE_HI_BITS),
        ] {
            assert_eq!(rw(&mut ni, regs::win_reg(0, f)), m(&[bits]));
        }
        assert_eq!(
            rw(&mut ni, regs::win_reg(0, regs::WIN_CTRL)),
            m(&[regs::WIN_CTRL_PDID, regs::WIN_CTRL_ENABLE])
        );
        // MBOX_CTRL.OPEN and the PDID field as the receive path reads them.
        driver::set_mailbox(&mut ni, 0x00A5, false).unwrap();
        assert_eq!(
            field(ni.axil_read_priv(regs::MBOX_CTRL), regs::MBOX_CTRL_PDID),
            0xA5
        );
        let page = regs::ch_page(1);
        for f in [regs::DESC_LADDR_HI, regs::DESC_RADDR_HI] {
            ni.axil_write(page + f, all);
            assert_eq!(ni.axil_read(page + f), m(&[regs::DESC_ADDR_HI_BITS]));
        }
        ni.axil_write(page + regs::DESC_CTRL, all);
        assert_eq!(
            ni.axil_read(page + regs::DESC_CTRL),
            m(&[CTRL_OP, CTRL_NOTIFY, CTRL_TXID])
        );
        // CH_STATUS of a fresh channel, then with a queued descriptor and a
        // pending message (TX disabled so both stay).
        let st = |ni: &GoldenNi| ni.axil_read(page + regs::CH_STATUS);
        let s = st(&ni);
        assert_eq!(
            field(s, regs::CH_STATUS_DESC_FREE),
            p.desc_queue_depth as u64
        );
        assert_eq!(field(s, regs::CH_STATUS_PKT_FREE), p.pkt_slots as u64);
        assert_eq!(
            field(s, regs::CH_STATUS_RDMA_BUSY) | field(s, regs::CH_STATUS_PKT_PENDING),
            0
        );
        ni.axil_write_priv(regs::CONTROL, 0);
        let d = Descriptor {
            op: Op::Read,
            laddr: 0x1000,
            raddr: 0x2000,
            len: 64,
            dest: me,
            notify: true,
            txid: 0x1234,
        };
        assert_eq!(driver::post(&mut ni, 1, &d), exanet_sim::ni::AxilResp::Okay);
        assert_eq!(
            driver::send_message(&mut ni, 1, me, &[7; 21]),
            exanet_sim::ni::AxilResp::Okay
        );
        let s = st(&ni);
        assert_eq!(
            field(s, regs::CH_STATUS_DESC_FREE),
            p.desc_queue_depth as u64 - 1
        );
        assert_eq!(field(s, regs::CH_STATUS_PKT_FREE), p.pkt_slots as u64 - 1);
        assert_eq!(field(s, regs::CH_STATUS_RDMA_BUSY), 1);
        assert_eq!(field(s, regs::CH_STATUS_PKT_PENDING), 1);
        // DESC_CTRL as the descriptor's staging writes fill it.
        let ctrl = d
            .staging_writes()
            .iter()
            .find(|(f, _)| *f == regs::DescField::Ctrl)
            .unwrap()
            .1;
        assert_eq!(field(ctrl, CTRL_OP), 1);
        assert_eq!(field(ctrl, CTRL_NOTIFY), 1);
        assert_eq!(field(ctrl, CTRL_TXID), 0x1234);
        // PKT_SEND's length field: the message leaves with 21 bytes.
        ni.axil_write_priv(regs::CONTROL, 1);
        let pkts: Vec<_> = std::iter::from_fn(|| ni.emit_packet()).collect();
        let msg = pkts
            .iter()
            .find(|p| PTYPE.get(p.header_word()) == PacketType::Mailbox.code() as u64)
            .unwrap();
        assert_eq!(SIZE.get(msg.header_word()), 21);
        assert!(field(512 + 21, regs::PKT_SEND_LEN) == 21 && regs::PKT_SEND_LEN.width == 9);
    }

    #[test]
    fn read_request_fields_and_ack_flags_match_the_golden_packets() {
        let r = ReadRequest {
            land: 0x3FF_1234_5678,
            len: 0x8765_4321,
        };
        let w = u128::from_le_bytes(r.to_payload());
        assert_eq!(READ_REQ_LAND.get(w), r.land);
        assert_eq!(READ_REQ_LEN.get(w), r.len as u64);
        assert_eq!(w >> (READ_REQ_LEN.offset + READ_REQ_LEN.width), 0);

        // A message from a to b: b's MailboxAck carries ACK_FLAGS.
        let p = NiParams::default();
        let (ca, cb) = (
            Coords::new(1, 0, 0, 0).unwrap(),
            Coords::new(2, 0, 0, 0).unwrap(),
        );
        let mut a = GoldenNi::new(&p, ca).unwrap();
        let mut b = GoldenNi::new(&p, cb).unwrap();
        driver::set_mailbox(&mut b, 0, true).unwrap();
        driver::send_message(&mut a, 0, cb, &[1, 2, 3]);
        let msg = a.emit_packet().unwrap();
        b.receive_packet(&msg);
        let ack = b.emit_packet().unwrap();
        assert_eq!(
            PTYPE.get(ack.header_word()),
            PacketType::MailboxAck.code() as u64
        );
        assert_eq!(FLAGS.get(ack.footer_word()), ACK_FLAGS as u64);
    }

    /// Every generated point's golden numbers pass the checks.
    #[test]
    fn default_codes_are_consistent() {
        let c = Codes::new(&Geometry::new(&NiRtlParams::default()).unwrap(), false).unwrap();
        assert_eq!(c.rej.wrong_class.value, 11);
        assert_eq!(c.fl.read_busy.value, 12);
        assert_eq!((c.pt.class1_lo.value, c.pt.class1_hi.value), (0x11, 0x15));
        assert_eq!(c.bits.ctrl_unused.len(), 3);
    }
}
