//! The NI model's top: register access, packet emission order, receive path.
//! The rules are written out in the `ni` module doc (`ni/mod.rs`).

use super::channel::Channel;
use super::completion::{CompletionQueue, CqEntry, CqKind, CqStatus, TransferTracker};
use super::counters::Counters;
use super::descriptor::{self, AR_DEST_COMM, AR_DEST_DTYPE, AR_DEST_OP, CTRL_TXID};
use super::errors::{ErrorEntry, ErrorQueue, RejectReason};
use super::mailbox::{Mailbox, MailboxEntry};
use super::memory::{err_kind, AxiErrKinds, MemWrite, SparseMemory, ERR_DECERR, ERR_SLVERR};
use super::packetizer::{AckOutcome, NACK_FULL};
use super::params::NiParams;
use super::protection::Window;
use super::rdma_rx::{check, response_packet, Accepted, Rejected, RxContext, NACK_READ_BUSY};
use super::rdma_tx::TxStream;
use super::regs::{self, AxilResp, ChError, CommField, DescField, Prot, Reg, WinField};
use super::trace::{self, EventCode, Trace};
use super::wire::Packet;
use crate::allreduce::engine::{
    ArDescriptor, ArStatus, Communicator, Engine, FragReject, FRAG_REJECTS,
};
use crate::allreduce::schedule::CommBox;
use crate::packet::coords::{Coords, Field};
use crate::packet::footer::{self, Footer};
use crate::packet::header::{self, Header, PacketType};
use anyhow::{Context, Result};
use std::collections::VecDeque;

/// What the receive path did with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxOutcome {
    /// Consumed and acted on.
    Accepted,
    /// Refused for now, a nack sent: a mailbox message with the mailbox
    /// full, or a read request with the read queue full.
    Refused,
    /// Consumed and rejected: nothing written, counted, reported.
    Rejected(RejectReason),
    /// Not consumed: a resource it needs (completion queue, response queue)
    /// is full. Nothing changed; offer it again later.
    Busy,
}

/// The network interface model.
#[derive(Clone, Debug)]
pub struct Ni {
    p: NiParams,
    me: Coords,
    mem: SparseMemory,
    log_writes: bool,
    writes: Vec<MemWrite>,
    channels: Vec<Channel>,
    rr: usize,
    tx_enable: bool,
    rx_error: bool,
    hdr_corrected: bool,
    /// Sticky STATUS.AXI_ERROR.
    axi_error: bool,
    /// Emitted class-0 packets whose payload read had an error beat, not
    /// yet left (explicit events): counted at [`Ni::packet_left`].
    leaving_errs: VecDeque<(Packet, AxiErrKinds)>,
    mbox_ctrl: u32,
    /// IRQ_ENABLE.
    irq_enable: u32,
    windows: Vec<Window>,
    resp: VecDeque<Packet>,
    reads: VecDeque<TxStream>,
    cq: CompletionQueue,
    tracker: TransferTracker,
    mailbox: Mailbox,
    errq: ErrorQueue,
    counters: Counters,
    /// The caller reports when a data write lands and when a packet's
    /// tail leaves ([`Ni::set_explicit_events`]).
    explicit: bool,
    /// Accepted data packets whose memory write has not landed yet, oldest
    /// first: what each posts when it lands.
    landing: VecDeque<Landing>,
    /// The allreduce engine (`ar_communicators > 0`).
    engine: Option<Engine>,
    /// Communicator slot registers as written (AR_ORIGIN .. AR_SCRATCH_SIZE).
    ar_regs: Vec<[u32; 7]>,
    /// The event trace ring ([`super::trace`]).
    trace: Trace,
    /// The completion the packet being received posted (for the trace).
    rx_cq: Option<CqEntry>,
}

/// What an accepted data packet posts when its memory write has landed:
/// the completion (last packet of a transfer) and the RdmaCompletion
/// response (notify). Their queue slots are reserved from the decision on.
#[derive(Clone, Debug, Default)]
struct Landing {
    cq: Option<CqEntry>,
    resp: Option<Packet>,
}

/// Resources an accepted or rejected packet needs before it may be consumed.
#[derive(Clone, Copy, Debug, Default)]
struct Needs {
    resp: bool,
    cq: bool,
    read: bool,
}

impl Ni {
    /// An NI at `me` with empty memory, every register at its reset value.
    pub fn new(params: &NiParams, me: Coords) -> Result<Ni> {
        params.validate().context("NI parameters")?;
        let p = params.clone();
        let channels = (0..p.channels)
            .map(|c| {
                Channel::new(
                    p.desc_queue_depth,
                    p.mailbox_msg_bytes,
                    p.pkt_slots,
                    (c * p.pkt_slots) as u16,
                )
            })
            .collect();
        Ok(Ni {
            me,
            mem: SparseMemory::new(),
            log_writes: false,
            writes: Vec::new(),
            channels,
            rr: 0,
            tx_enable: true,
            rx_error: false,
            hdr_corrected: false,
            axi_error: false,
            leaving_errs: VecDeque::new(),
            mbox_ctrl: 0,
            irq_enable: 0,
            windows: vec![Window::default(); p.windows],
            resp: VecDeque::with_capacity(p.resp_queue_depth),
            reads: VecDeque::with_capacity(p.read_queue_depth),
            cq: CompletionQueue::new(p.cq_depth),
            tracker: TransferTracker::new(p.poison_depth),
            mailbox: Mailbox::new(p.mailbox_depth),
            errq: ErrorQueue::new(p.errq_depth),
            counters: Counters::default(),
            explicit: false,
            landing: VecDeque::new(),
            engine: match p.engine() {
                Some(ep) => Some(Engine::new(&ep, me).context("allreduce engine")?),
                None => None,
            },
            ar_regs: vec![[0; 7]; p.ar_communicators],
            trace: Trace::new(p.trace_depth),
            rx_cq: None,
            p,
        })
    }

    // ------------------------------------------------------------ accessors

    /// Parameters.
    pub fn params(&self) -> &NiParams {
        &self.p
    }
    /// This node's coordinates.
    pub fn me(&self) -> Coords {
        self.me
    }
    /// Memory (test backdoor: the NI's own accesses go through it too).
    pub fn mem(&self) -> &SparseMemory {
        &self.mem
    }
    /// Memory, writable (test backdoor, e.g. to fill source buffers).
    pub fn mem_mut(&mut self) -> &mut SparseMemory {
        &mut self.mem
    }
    /// Counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    /// The event trace ([`super::trace`]).
    pub fn trace(&self) -> &Trace {
        &self.trace
    }
    /// The current cycle, counted from the end of the last reset: the
    /// time stamp of the trace events recorded from now on (a cycle-level
    /// bench sets it every cycle before its golden calls).
    pub fn set_cycle(&mut self, cycle: u64) {
        self.trace.set_now(cycle);
    }
    /// Record every memory write the receive path makes (see [`Ni::take_writes`]).
    pub fn set_write_log(&mut self, on: bool) {
        self.log_writes = on;
    }
    /// Memory writes since the last call (one per accepted data packet, in order).
    pub fn take_writes(&mut self) -> Vec<MemWrite> {
        std::mem::take(&mut self.writes)
    }
    /// Explicit events (off by default). Off, the model is a transaction
    /// model: an accepted data packet's bytes land at once (its completion
    /// and RdmaCompletion response are posted by [`Ni::receive_packet`]),
    /// and an emitted packet has left whole. On, the caller (a cycle-level
    /// bench) reports two instants the model cannot know:
    /// - [`Ni::write_landed`]: the memory write of the oldest accepted data
    ///   packet still in flight has landed (the RTL: its AXI4 B response).
    ///   Only then are its completion and response posted: software never
    ///   sees a completion before the data are in memory. Their queue slots
    ///   are reserved at the decision (the `Busy` check counts them).
    /// - [`Ni::packet_left`]: a packet's tail flit has left. Until a
    ///   packetizer message has left, an acknowledgement naming its slot is
    ///   `Stale` (no receiver answers a packet before its tail; the slot
    ///   must not be freed or re-queued while it is being read out).
    ///
    /// The memory bytes ([`Ni::mem`]) change at `receive_packet` either
    /// way; only what software can observe of a transfer's end waits.
    ///
    /// Turning it off posts every write still in flight and forgets the
    /// packets still leaving.
    pub fn set_explicit_events(&mut self, on: bool) {
        self.explicit = on;
        if !on {
            while let Some(l) = self.landing.pop_front() {
                self.post(&l);
            }
            while let Some((_, k)) = self.leaving_errs.pop_front() {
                self.read_error(k);
            }
            for c in &mut self.channels {
                for slot in 0..self.p.pkt_slots {
                    c.pkt.set_leaving(slot, false);
                }
            }
        }
    }
    /// Accepted data packets whose write has not landed
    /// ([`Ni::set_explicit_events`]; always 0 when off).
    pub fn writes_in_flight(&self) -> usize {
        self.landing.len()
    }
    /// The memory write of the oldest accepted data packet in flight has
    /// landed: post its completion and RdmaCompletion response, if any
    /// (see [`Ni::set_explicit_events`]). Returns the completion posted;
    /// an error when no write is in flight.
    pub fn write_landed(&mut self) -> Result<Option<CqEntry>> {
        self.write_landed_resp(0)
    }

    /// As [`Ni::write_landed`], the write's AXI4 B response being `resp`.
    /// SLVERR (2) or DECERR (3): WR_SLVERR / WR_DECERR += 1, sticky
    /// STATUS.AXI_ERROR, and what it posts says so: the completion's
    /// status and the RdmaCompletion's flags are MEM_ERROR
    /// ([`CqStatus::MemError`]). A non-last packet's error is not carried
    /// to its transfer's completion (counter and STATUS only).
    pub fn write_landed_resp(&mut self, resp: u8) -> Result<Option<CqEntry>> {
        let mut l = self
            .landing
            .pop_front()
            .context("write_landed: no accepted data packet's write is in flight")?;
        self.write_error(&mut l, resp);
        let txid = match (&l.cq, &l.resp) {
            (Some(e), _) => e.txid,
            (None, Some(r)) => footer_field(r, &footer::TXID) as u16,
            (None, None) => 0,
        };
        let posts = l.cq.is_some() as u8 | (l.resp.is_some() as u8) << 1;
        self.trace.record(EventCode::WriteLanded, 0, txid, 0, posts);
        self.post(&l);
        if let Some(e) = &l.cq {
            self.trace_cq(e);
        }
        Ok(l.cq)
    }
    /// The tail flit of `pkt` (a packet this NI emitted) has left (see
    /// [`Ni::set_explicit_events`]): a packetizer message's slot may now
    /// be acknowledged. Other packets change nothing.
    pub fn packet_left(&mut self, pkt: &Packet) {
        if self.leaving_errs.front().is_some_and(|(p, _)| p == pkt) {
            let (_, k) = self.leaving_errs.pop_front().expect("front checked");
            self.read_error(k);
        }
        let pt = header_field(pkt, &header::PTYPE) as u8;
        let class = PacketType::from_code(pt).map_or(0, |t| t.class());
        self.trace.record(
            EventCode::PktOut,
            class,
            footer_field(pkt, &footer::TXID) as u16,
            pt,
            footer_field(pkt, &footer::FLAGS) as u8,
        );
        if let Some(ch) = self.message_slot(pkt) {
            self.channels[ch.0].pkt.set_leaving(ch.1, false);
        }
    }
    /// Channel and slot of a packetizer message `pkt` from this node.
    fn message_slot(&self, pkt: &Packet) -> Option<(usize, usize)> {
        let h = Header::from_bits(pkt.header_word()).ok()?;
        let f = Footer::from_bits(pkt.footer_word()).ok()?;
        if h.ptype() != PacketType::Mailbox || f.src() != self.me {
            return None;
        }
        let t = f.txid() as usize;
        let ch = t / self.p.pkt_slots;
        (ch < self.channels.len()).then_some((ch, t % self.p.pkt_slots))
    }
    /// A packet whose payload read had error beats of kinds `k` has left:
    /// RD_SLVERR / RD_DECERR, sticky STATUS.AXI_ERROR.
    fn read_error(&mut self, k: AxiErrKinds) {
        if k & ERR_SLVERR != 0 {
            self.counters.rd_slverr += 1;
        }
        if k & ERR_DECERR != 0 {
            self.counters.rd_decerr += 1;
        }
        self.axi_error |= k != 0;
    }

    /// A data write's B was `resp`: an error counts, sets STATUS.AXI_ERROR
    /// and turns what `l` posts into MEM_ERROR.
    fn write_error(&mut self, l: &mut Landing, resp: u8) {
        let k = err_kind(resp);
        if k == 0 {
            return;
        }
        if k & ERR_SLVERR != 0 {
            self.counters.wr_slverr += 1;
        } else {
            self.counters.wr_decerr += 1;
        }
        self.axi_error = true;
        if let Some(e) = &mut l.cq {
            e.status = CqStatus::MemError;
        }
        if let Some(r) = &mut l.resp {
            let h = Header::from_bits(r.header_word()).expect("an NI-built response");
            let mut f = Footer::from_bits(r.footer_word()).expect("an NI-built response");
            f.set_flags(CqStatus::MemError as u8)
                .expect("an 8-bit flags code");
            *r = Packet::build(h, f, &[]);
        }
    }

    fn post(&mut self, l: &Landing) {
        if let Some(e) = l.cq {
            self.cq.push(e);
        }
        if let Some(r) = &l.resp {
            self.resp.push_back(r.clone());
        }
    }
    /// Some packet is ready to emit.
    pub fn has_packet(&self) -> bool {
        self.has_response() || self.has_request()
    }
    /// A class-1 packet is ready ([`Ni::emit_response`] would return one).
    pub fn has_response(&self) -> bool {
        !self.resp.is_empty()
    }
    /// A class-0 packet is ready ([`Ni::emit_request`] would return one):
    /// a read response being served, or, when TX_ENABLE, a channel's packet.
    pub fn has_request(&self) -> bool {
        let engine = self.engine.as_ref().is_some_and(Engine::has_fragment);
        !self.reads.is_empty()
            || (self.tx_enable && (engine || self.channels.iter().any(|c| c.ready())))
    }
    /// Nothing queued to send, no write landing and no message awaiting an
    /// acknowledgement.
    pub fn quiescent(&self) -> bool {
        !self.has_packet()
            && self.engine.as_ref().is_none_or(Engine::idle)
            && self.landing.is_empty()
            && self
                .channels
                .iter()
                .all(|c| !c.pkt.pending() && c.queued() == 0)
    }
    /// Transfers currently marked damaged.
    pub fn damaged_transfers(&self) -> usize {
        self.tracker.len()
    }

    // ------------------------------------------------------------ AXI4-Lite

    /// Unprivileged (user) write.
    pub fn axil_write(&mut self, addr: u32, data: u32) -> AxilResp {
        self.axil_write_prot(addr, data, Prot::User)
    }
    /// Privileged write.
    pub fn axil_write_priv(&mut self, addr: u32, data: u32) -> AxilResp {
        self.axil_write_prot(addr, data, Prot::Privileged)
    }
    /// Unprivileged (user) read; SLVERR reads as 0.
    pub fn axil_read(&self, addr: u32) -> u32 {
        self.axil_read_prot(addr, Prot::User).0
    }
    /// Privileged read.
    pub fn axil_read_priv(&self, addr: u32) -> u32 {
        self.axil_read_prot(addr, Prot::Privileged).0
    }

    fn reg(&self, addr: u32, prot: Prot) -> Option<Reg> {
        regs::decode(addr, &self.p).filter(|r| prot == Prot::Privileged || !r.privileged())
    }

    /// Read with explicit AxPROT\[0\]. Reads have no side effects.
    pub fn axil_read_prot(&self, addr: u32, prot: Prot) -> (u32, AxilResp) {
        let Some(r) = self.reg(addr, prot) else {
            return (0, AxilResp::SlvErr);
        };
        let p = &self.p;
        let v = match r {
            Reg::Id => regs::ID_VALUE,
            Reg::Params(0) => {
                (p.channels
                    | p.windows << 8
                    | (p.max_payload_bytes / 16) << 16
                    | (p.mailbox_msg_bytes / 16) << 24) as u32
            }
            Reg::Params(1) => (p.mailbox_depth | p.cq_depth << 16) as u32,
            Reg::Params(2) => (p.desc_queue_depth | p.errq_depth << 16) as u32,
            Reg::Params(3) => {
                (p.pkt_slots
                    | p.resp_queue_depth << 8
                    | p.read_queue_depth << 16
                    | p.poison_depth << 24) as u32
            }
            Reg::Params(_) => p.addr_bits,
            Reg::Coords => self.me.to_bits(),
            Reg::Control => self.tx_enable as u32,
            Reg::Status => self.status(),
            Reg::MboxCtrl => self.mbox_ctrl,
            Reg::IrqEnable => self.irq_enable,
            Reg::Counter(i) => self.counters.get(i) as u32,
            Reg::Rej(c) => self.counters.rejected_by[c as usize] as u32,
            Reg::ErrqCount => self.errq.len() as u32,
            Reg::ErrqWord(k) => self.errq.head().map_or(0, |e| e.words()[k]),
            Reg::ChPdidPriv(c) | Reg::ChPdid(c) => self.channels[c].pdid as u32,
            Reg::Win(w, f) => {
                let w = &self.windows[w];
                match f {
                    WinField::BaseLo => w.base as u32,
                    WinField::BaseHi => (w.base >> 32) as u32,
                    WinField::SizeLo => w.size as u32,
                    WinField::SizeHi => (w.size >> 32) as u32,
                    WinField::Ctrl => w.pdid as u32 | (w.enabled as u32) << 31,
                }
            }
            Reg::CqCount => self.cq.len() as u32,
            Reg::CqWord(k) => self.cq.head().map_or(0, |e| e.words()[k]),
            Reg::MbCount => self.mailbox.len() as u32,
            Reg::MbLen => self.mailbox.head().map_or(0, |e| e.data.len() as u32),
            Reg::MbSrc => self.mailbox.head().map_or(0, |e| e.src.to_bits()),
            Reg::MbPdid => self.mailbox.head().map_or(0, |e| e.pdid as u32),
            Reg::MbData(i) => self.mailbox.data_word(i),
            Reg::ChStatus(c) => self.channels[c].status(),
            Reg::ChErr(c) => self.channels[c].err as u32,
            Reg::Desc(c, f) => self.channels[c].staging.read(f),
            Reg::PktDest(c) => self.channels[c].pkt_dest,
            Reg::PktData(c, i) => {
                let w = &self.channels[c].pkt_window;
                u32::from_le_bytes(w[4 * i..4 * i + 4].try_into().expect("4 bytes"))
            }
            Reg::ErrqPop | Reg::CqPop | Reg::MbPop | Reg::Doorbell(_) | Reg::PktSend(_) => 0,
            Reg::ArThreshold => self.engine.as_ref().map_or(0, |e| e.threshold() as u32),
            Reg::ArTimeout => self.engine.as_ref().map_or(0, |e| e.timeout() as u32),
            Reg::ArCounter(i) => self.engine.as_ref().map_or(0, |e| {
                let c = e.counters();
                match i {
                    regs::AR_CNT_FRAGS_SENT => c.fragments_sent as u32,
                    regs::AR_CNT_FRAGS_RECEIVED => c.fragments_received as u32,
                    _ => c.completions as u32,
                }
            }),
            Reg::ArRej(r) => self
                .engine
                .as_ref()
                .map_or(0, |e| e.counters().rejected[r] as u32),
            Reg::ArComm(k, f) => self.ar_regs[k][f as usize],
            Reg::TraceCtrl => self.trace.read(trace::TRACE_CTRL),
            Reg::TraceDepth => self.trace.read(trace::TRACE_DEPTH),
            Reg::TraceCount => self.trace.read(trace::TRACE_COUNT),
            Reg::TraceDrops => self.trace.read(trace::TRACE_DROPS),
            Reg::TraceIdx => self.trace.read(trace::TRACE_IDX),
            Reg::TraceLo => self.trace.read(trace::TRACE_LO),
            Reg::TraceHi => self.trace.read(trace::TRACE_HI),
        };
        (v, AxilResp::Okay)
    }

    /// The `irq` output: some STATUS bit that IRQ_ENABLE enables is set
    /// (level: it stays high until software pops the queue or clears the
    /// sticky bit, or disables it).
    pub fn irq(&self) -> bool {
        self.status() & self.irq_enable != 0
    }

    fn status(&self) -> u32 {
        let bit = |on: bool, b: u32| if on { b } else { 0 };
        bit(self.rx_error, regs::ST_RX_ERROR)
            | bit(self.errq.overflow, regs::ST_ERRQ_OVERFLOW)
            | bit(self.tracker.track_lost, regs::ST_TRACK_LOST)
            | bit(self.hdr_corrected, regs::ST_HDR_CORRECTED)
            | bit(self.axi_error, regs::ST_AXI_ERROR)
            | bit(!self.cq.is_empty(), regs::ST_CQ_NONEMPTY)
            | bit(!self.mailbox.is_empty(), regs::ST_MB_NONEMPTY)
            | bit(!self.errq.is_empty(), regs::ST_ERRQ_NONEMPTY)
    }

    /// Write with explicit AxPROT\[0\]. SLVERR means no effect (except the
    /// channel error code the refusal latches).
    pub fn axil_write_prot(&mut self, addr: u32, v: u32, prot: Prot) -> AxilResp {
        let Some(r) = self.reg(addr, prot) else {
            return AxilResp::SlvErr;
        };
        let ok = |b: bool| if b { AxilResp::Okay } else { AxilResp::SlvErr };
        match r {
            Reg::Control => self.tx_enable = v & 1 == 1,
            Reg::Status => {
                if v & regs::ST_RX_ERROR != 0 {
                    self.rx_error = false;
                }
                if v & regs::ST_ERRQ_OVERFLOW != 0 {
                    self.errq.overflow = false;
                }
                if v & regs::ST_TRACK_LOST != 0 {
                    self.tracker.track_lost = false;
                }
                if v & regs::ST_HDR_CORRECTED != 0 {
                    self.hdr_corrected = false;
                }
                if v & regs::ST_AXI_ERROR != 0 {
                    self.axi_error = false;
                }
            }
            Reg::MboxCtrl => self.mbox_ctrl = v & 0x1_FFFF,
            Reg::IrqEnable => self.irq_enable = v & regs::IRQ_ENABLE_MASK,
            Reg::ErrqPop => {
                self.errq.pop();
            }
            Reg::ChPdidPriv(c) => self.channels[c].pdid = v as u16,
            Reg::Win(w, f) => {
                let w = &mut self.windows[w];
                match f {
                    WinField::BaseLo => w.base = w.base & !0xFFFF_FFFF | v as u64,
                    WinField::BaseHi => w.base = w.base & 0xFFFF_FFFF | (v as u64 & 0x3FF) << 32,
                    WinField::SizeLo => w.size = w.size & !0xFFFF_FFFF | v as u64,
                    WinField::SizeHi => w.size = w.size & 0xFFFF_FFFF | (v as u64 & 0x7FF) << 32,
                    WinField::Ctrl => {
                        w.pdid = v as u16;
                        w.enabled = v >> 31 == 1;
                    }
                }
            }
            Reg::CqPop => {
                self.cq.pop();
                self.ar_drain();
            }
            Reg::MbPop => {
                if let Some((_, txid)) = self.mailbox.pop() {
                    let t = PacketType::Mailbox;
                    self.trace
                        .record(EventCode::MboxPop, t.class(), txid, t.code(), 0);
                }
            }
            Reg::ChPdid(c) => {
                self.channels[c].err = ChError::PdidWrite as u8;
                return AxilResp::SlvErr;
            }
            Reg::ChErr(c) => self.channels[c].err = 0,
            Reg::Desc(c, f) => self.channels[c].staging.write(f, v),
            Reg::Doorbell(c) if self.allreduce_staged(c) => return self.ar_doorbell(c),
            Reg::Doorbell(c) => {
                let bits = self.p.addr_bits;
                let ctrl = self.channels[c].staging.read(DescField::Ctrl);
                let r = self.channels[c].doorbell(bits);
                let code = if r.is_ok() { 0 } else { self.channels[c].err };
                self.trace.record(
                    EventCode::Doorbell,
                    c,
                    descriptor::CTRL_TXID.get(ctrl as u128) as u16,
                    descriptor::CTRL_OP.get(ctrl as u128) as u8,
                    code,
                );
                return ok(r.is_ok());
            }
            Reg::ArThreshold => {
                if let Some(e) = self.engine.as_mut() {
                    e.set_threshold(v as usize);
                }
            }
            Reg::ArTimeout => {
                if let Some(e) = self.engine.as_mut() {
                    e.set_timeout(v as u64);
                }
            }
            Reg::ArComm(k, f) => return ok(self.ar_comm_write(k, f, v)),
            Reg::ArCounter(_) | Reg::ArRej(_) => return AxilResp::SlvErr,
            Reg::TraceCtrl => {
                self.trace.write(trace::TRACE_CTRL, v);
            }
            Reg::TraceIdx => {
                self.trace.write(trace::TRACE_IDX, v);
            }
            Reg::TraceDepth | Reg::TraceCount | Reg::TraceDrops | Reg::TraceLo | Reg::TraceHi => {
                return AxilResp::SlvErr
            }
            Reg::PktDest(c) => self.channels[c].pkt_dest = v & 0x3F_FFFF,
            Reg::PktSend(c) => return ok(self.channels[c].pkt_send(v & 0x1FF).is_ok()),
            Reg::PktData(c, i) => {
                self.channels[c].pkt_window[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes())
            }
            Reg::Id
            | Reg::Params(_)
            | Reg::Coords
            | Reg::Counter(_)
            | Reg::Rej(_)
            | Reg::ErrqCount
            | Reg::ErrqWord(_)
            | Reg::CqCount
            | Reg::CqWord(_)
            | Reg::MbCount
            | Reg::MbLen
            | Reg::MbSrc
            | Reg::MbPdid
            | Reg::MbData(_)
            | Reg::ChStatus(_) => return AxilResp::SlvErr,
        }
        AxilResp::Okay
    }

    // ------------------------------------------------------------ transmit

    /// The next packet to the network, by the emission order rule:
    /// responses first (FIFO), then the read-serve engine (one request at a
    /// time, FIFO), then, when TX_ENABLE, the channels round-robin: the
    /// next of [`Ni::emit_response`], else of [`Ni::emit_request`].
    pub fn emit_packet(&mut self) -> Option<Packet> {
        self.emit_response().or_else(|| self.emit_request())
    }

    /// The next class-1 packet (a control response, FIFO): what the RTL's
    /// response lane sends, independently of the class-0 packets.
    pub fn emit_response(&mut self) -> Option<Packet> {
        let pkt = self.resp.pop_front()?;
        Some(self.emitted(pkt))
    }

    /// The next class-0 packet: the read-serve engine's (one request at a
    /// time, FIFO), else, when TX_ENABLE, the allreduce engine's next
    /// fragment, else the channels' round-robin.
    pub fn emit_request(&mut self) -> Option<Packet> {
        let fragment = match self.engine.as_mut() {
            Some(e) if self.reads.is_empty() && self.tx_enable => {
                let f = e.emit(&mut self.mem);
                self.ar_drain();
                f
            }
            _ => None,
        };
        let (pkt, err) = if let Some(s) = self.reads.front_mut() {
            let p = s.next_packet_checked(&self.mem, self.me, self.p.max_payload_bytes);
            if s.done() {
                self.reads.pop_front();
            }
            p
        } else if let Some(f) = fragment {
            (f, 0)
        } else if self.tx_enable {
            let n = self.channels.len();
            let c = (0..n)
                .map(|i| (self.rr + i) % n)
                .find(|&c| self.channels[c].ready())?;
            self.rr = (c + 1) % n;
            self.channels[c]
                .next_packet_checked(&self.mem, self.me, self.p.max_payload_bytes)
                .expect("a ready channel has a packet")
        } else {
            return None;
        };
        if err != 0 {
            // Counted when its tail leaves (at once without explicit events).
            if self.explicit {
                self.leaving_errs.push_back((pkt.clone(), err));
            } else {
                self.read_error(err);
            }
        }
        Some(self.emitted(pkt))
    }

    /// Count an emitted packet; a packetizer message is leaving.
    fn emitted(&mut self, pkt: Packet) -> Packet {
        self.counters.tx_packets += 1;
        self.counters.tx_payload_bytes +=
            Header::from_bits(pkt.header_word()).map_or(0, |h| h.size() as u64);
        if self.explicit {
            if let Some((ch, slot)) = self.message_slot(&pkt) {
                self.channels[ch].pkt.set_leaving(slot, true);
            }
        }
        pkt
    }

    // ------------------------------------------------------------ receive

    /// Offer a packet from the network, as arriving on its type's message
    /// class ([`PacketType::class`]; class 0 when the header does not
    /// decode): [`Ni::receive_packet_on`] for a network that keeps the
    /// classes apart by type, as the fabric stub and the routers do.
    pub fn receive_packet(&mut self, pkt: &Packet) -> RxOutcome {
        let class = Header::decode(pkt.header_word()).map_or(0, |(h, _)| h.ptype().class());
        self.receive_packet_on(pkt, class)
    }

    /// Offer a packet from the network that arrived on a VC of message
    /// class `class` (`vc / vcs_per_class`). A packet whose type belongs to
    /// the other class is rejected `WrongClass` (checked right after the
    /// destination; no response is sent).
    pub fn receive_packet_on(&mut self, pkt: &Packet, class: usize) -> RxOutcome {
        let checked = {
            let ctx = RxContext {
                me: self.me,
                max_payload: self.p.max_payload_bytes,
                mailbox_msg_bytes: self.p.mailbox_msg_bytes,
                addr_bits: self.p.addr_bits,
                windows: &self.windows,
                mailbox_open: self.mbox_ctrl >> 16 & 1 == 1,
                mailbox_pdid: self.mbox_ctrl as u16,
                arrival_class: class,
                allreduce: self.engine.is_some(),
            };
            check(pkt, &ctx)
        };
        let needs = match &checked.result {
            Ok(a) => needs_of(a),
            Err(r) => Needs {
                resp: rejection_response_type(r).is_some(),
                ..Needs::default()
            },
        };
        // Entries of writes still landing hold their slots. A read request
        // finding the read queue full is answered Nack(READ_BUSY) instead
        // of waiting (no class-0 packet waits for the read queue).
        let cq_held = self.landing.iter().filter(|l| l.cq.is_some()).count();
        let resp_held = self.landing.iter().filter(|l| l.resp.is_some()).count();
        let read_full = needs.read && self.reads.len() >= self.p.read_queue_depth;
        if ((needs.resp || read_full) && self.resp.len() + resp_held >= self.p.resp_queue_depth)
            || (needs.cq && self.cq.len() + cq_held >= self.p.cq_depth)
        {
            return RxOutcome::Busy;
        }
        self.counters.rx_packets += 1;
        if checked.corrected {
            self.counters.hdr_corrected += 1;
            self.hdr_corrected = true;
        }
        self.rx_cq = None;
        let ptype = checked
            .result
            .as_ref()
            .map_or(0, |a| a.header().ptype().code());
        let outcome = match checked.result {
            Ok(a) => self.accept(a),
            Err(r) => Err(r),
        };
        let o = match outcome {
            Ok(o) => {
                self.trace.record(
                    EventCode::PktIn,
                    class,
                    footer_field(pkt, &footer::TXID) as u16,
                    ptype,
                    footer_field(pkt, &footer::FLAGS) as u8,
                );
                o
            }
            Err(r) => {
                self.trace.record(
                    EventCode::Reject,
                    class,
                    r.footer.map_or(0, |f| f.txid()),
                    r.header.map_or(0, |h| h.ptype().code()),
                    r.reason.code(),
                );
                self.reject(r);
                RxOutcome::Rejected(r.reason)
            }
        };
        if let Some(e) = self.rx_cq.take() {
            self.trace_cq(&e);
        }
        o
    }

    fn accept(&mut self, a: Accepted) -> Result<RxOutcome, Rejected> {
        match a {
            Accepted::Data {
                header,
                footer,
                payload,
            } => {
                self.mem.write(header.vaddr(), &payload);
                if self.log_writes {
                    self.writes.push(MemWrite {
                        addr: header.vaddr(),
                        data: payload.clone(),
                    });
                }
                self.counters.rx_data_bytes += payload.len() as u64;
                let (src, txid) = (footer.src(), footer.txid());
                if footer.first() {
                    self.tracker.clear(src, txid);
                }
                // The status is decided now; the entries are posted when
                // the write has landed (at once unless explicit events).
                let mut l = Landing::default();
                if footer.last() {
                    let status = self.tracker.finish(src, txid);
                    let kind = if header.ptype() == PacketType::RdmaWrite {
                        CqKind::WriteIn
                    } else {
                        CqKind::ReadDone
                    };
                    l.cq = Some(CqEntry {
                        kind,
                        status,
                        reason: 0,
                        txid,
                        peer: src,
                        pdid: header.pdid(),
                    });
                    if footer.notify() {
                        l.resp = Some(response_packet(
                            PacketType::RdmaCompletion,
                            self.me,
                            src,
                            header.pdid(),
                            txid,
                            status as u8,
                        ));
                    }
                }
                if self.explicit {
                    self.landing.push_back(l);
                } else {
                    let resp = self.mem.write_resp(header.vaddr(), payload.len());
                    self.write_error(&mut l, resp);
                    self.post(&l);
                }
                Ok(RxOutcome::Accepted)
            }
            Accepted::ReadReq {
                header,
                footer,
                req,
            } => {
                if self.reads.len() >= self.p.read_queue_depth {
                    self.counters.rd_busy_nacks += 1;
                    self.resp.push_back(response_packet(
                        PacketType::Nack,
                        self.me,
                        footer.src(),
                        header.pdid(),
                        footer.txid(),
                        NACK_READ_BUSY,
                    ));
                    return Ok(RxOutcome::Refused);
                }
                self.reads.push_back(TxStream {
                    ptype: PacketType::RdmaReadResp,
                    dest: footer.src(),
                    pdid: header.pdid(),
                    txid: footer.txid(),
                    notify: footer.notify(),
                    src_addr: header.vaddr(),
                    land_addr: req.land,
                    remaining: req.len as u64,
                    emitted: 0,
                });
                Ok(RxOutcome::Accepted)
            }
            Accepted::Mailbox {
                header,
                footer,
                payload,
            } => {
                let full = !self.mailbox.has_room();
                let (t, flags) = if full {
                    self.counters.mb_full_nacks += 1;
                    (PacketType::MailboxNack, NACK_FULL)
                } else {
                    self.mailbox.push(
                        MailboxEntry {
                            src: footer.src(),
                            pdid: header.pdid(),
                            data: payload,
                        },
                        footer.txid(),
                    );
                    (PacketType::MailboxAck, 0)
                };
                self.resp.push_back(response_packet(
                    t,
                    self.me,
                    footer.src(),
                    header.pdid(),
                    footer.txid(),
                    flags,
                ));
                Ok(if full {
                    RxOutcome::Refused
                } else {
                    RxOutcome::Accepted
                })
            }
            Accepted::Response { header, footer } => self.response(header, footer),
            Accepted::Fragment {
                header,
                footer,
                payload,
            } => {
                let e = self.engine.as_mut().expect("checked: the NI has an engine");
                let r = e.receive_decoded(&header, &footer, &payload, &mut self.mem);
                self.ar_drain();
                match r {
                    Ok(()) => Ok(RxOutcome::Accepted),
                    Err(why) => Err(Rejected {
                        reason: fragment_reason(why),
                        header: Some(header),
                        footer: Some(footer),
                    }),
                }
            }
        }
    }

    fn response(&mut self, header: Header, footer: Footer) -> Result<RxOutcome, Rejected> {
        let (src, txid, flags) = (footer.src(), footer.txid(), footer.flags());
        match header.ptype() {
            PacketType::RdmaCompletion => {
                let e = CqEntry {
                    kind: CqKind::Notify,
                    status: CqStatus::from_code(flags).expect("checked: status code"),
                    reason: 0,
                    txid,
                    peer: src,
                    pdid: header.pdid(),
                };
                self.cq.push(e);
                self.rx_cq = Some(e);
            }
            PacketType::Nack => {
                let e = CqEntry::denied_code(txid, src, header.pdid(), flags);
                self.cq.push(e);
                self.rx_cq = Some(e);
            }
            _ => {
                let nack = (header.ptype() == PacketType::MailboxNack).then_some(flags);
                let (ch, slot) = (
                    txid as usize / self.p.pkt_slots,
                    txid as usize % self.p.pkt_slots,
                );
                let outcome = match self.channels.get_mut(ch) {
                    Some(c) => c.pkt.acknowledge(slot, src, header.pdid(), nack),
                    None => Err(RejectReason::Stale),
                };
                match outcome {
                    Ok(AckOutcome::Delivered) => {}
                    Ok(AckOutcome::Retried) => self.counters.mb_retries += 1,
                    Ok(AckOutcome::Denied) => {
                        self.counters.mb_denied += 1;
                        self.channels[ch].err = ChError::MsgDenied as u8;
                    }
                    Err(reason) => {
                        return Err(Rejected {
                            reason,
                            header: Some(header),
                            footer: Some(footer),
                        })
                    }
                }
            }
        }
        Ok(RxOutcome::Accepted)
    }

    /// Trace a completion posted.
    fn trace_cq(&mut self, e: &CqEntry) {
        self.trace
            .record(EventCode::CqPosted, 0, e.txid, e.kind as u8, e.status as u8);
    }

    fn reject(&mut self, r: Rejected) {
        self.counters.rx_rejected += 1;
        self.counters.rejected_by[r.reason.code() as usize] += 1;
        self.rx_error = true;
        self.errq.push(ErrorEntry {
            reason: r.reason,
            header: r.header,
            footer: r.footer,
        });
        let fragment = r
            .header
            .is_some_and(|h| h.ptype() == PacketType::AllreduceFragment);
        match &r.footer {
            // A fragment's txid is a collective number, not a transfer's.
            _ if fragment => {}
            None => self.tracker.track_lost = true,
            Some(f) if !f.last() => self.tracker.poison(f.src(), f.txid()),
            Some(f) => {
                if r.header.is_some_and(|h| is_data(h.ptype())) {
                    self.tracker.clear(f.src(), f.txid());
                }
            }
        }
        if let (Some(t), Some(h), Some(f)) = (rejection_response_type(&r), r.header, r.footer) {
            self.resp.push_back(response_packet(
                t,
                self.me,
                f.src(),
                h.pdid(),
                f.txid(),
                r.reason.code(),
            ));
        }
    }
}

/// The NI reject reason a fragment the engine refused is reported with
/// (the engine's own reason is counted in AR_REJ).
pub fn fragment_reason(why: FragReject) -> RejectReason {
    match why {
        FragReject::Format => RejectReason::Format,
        FragReject::Comm => RejectReason::Unsupported,
        FragReject::Pdid | FragReject::Source | FragReject::Mixed => RejectReason::Pdid,
        FragReject::Stale | FragReject::Duplicate | FragReject::Gap => RejectReason::Stale,
        FragReject::Step | FragReject::Range => RejectReason::Window,
    }
}

const _: () = assert!(FRAG_REJECTS == 10, "fragment_reason maps every FragReject");

impl Ni {
    /// The staged descriptor of channel `c` is an allreduce (op 2) and
    /// this NI has an engine.
    fn allreduce_staged(&self, c: usize) -> bool {
        self.engine.is_some()
            && self.channels[c].staging.read(DescField::Ctrl) & 3 == super::descriptor::OP_ALLREDUCE
    }

    /// DOORBELL of an allreduce descriptor: LADDR = source, RADDR =
    /// destination, LEN = element count, DEST = communicator\[3:0\]
    /// op\[6:4\] dtype\[9:7\], CTRL txid; checked by the engine when it
    /// starts (a bad one completes with its status). Refused only when the
    /// engine's queue is full (QUEUE_FULL).
    fn ar_doorbell(&mut self, c: usize) -> AxilResp {
        let ch = &self.channels[c];
        let st = &ch.staging;
        let addr = |lo, hi| st.read(lo) as u64 | (st.read(hi) as u64) << 32;
        let dest = st.read(DescField::Dest);
        let d = ArDescriptor {
            op: AR_DEST_OP.get(dest as u128),
            dtype: AR_DEST_DTYPE.get(dest as u128),
            count: st.read(DescField::Len),
            src: addr(DescField::LaddrLo, DescField::LaddrHi),
            dst: addr(DescField::RaddrLo, DescField::RaddrHi),
            comm: AR_DEST_COMM.get(dest as u128) as u8,
            txid: CTRL_TXID.get(st.read(DescField::Ctrl) as u128) as u16,
            pdid: ch.pdid,
        };
        let e = self.engine.as_mut().expect("allreduce_staged");
        if e.post(d).is_err() {
            self.channels[c].err = ChError::QueueFull as u8;
            return AxilResp::SlvErr;
        }
        e.advance(0, &mut self.mem);
        self.ar_drain();
        AxilResp::Okay
    }

    /// A write to communicator slot `k`'s register `f`. Fields other than
    /// AR_CTRL are refused while the slot is enabled; AR_CTRL with ENABLE
    /// checks the slot (box inside the torus, rank inside the box, scratch
    /// inside memory) and refuses it, leaving the slot disabled; AR_CTRL
    /// without ENABLE disables it (refused while a collective runs on it).
    fn ar_comm_write(&mut self, k: usize, f: CommField, v: u32) -> bool {
        let regs = &mut self.ar_regs[k];
        let enabled = regs[CommField::Ctrl as usize] >> 31 == 1;
        if f != CommField::Ctrl {
            if enabled {
                return false;
            }
            regs[f as usize] = match f {
                CommField::Origin => v & 0xFFF,
                CommField::Extent => v & 0x1F_1F1F,
                CommField::Rank => v & 0xFFF,
                CommField::ScratchHi => v & 0x3FF,
                _ => v,
            };
            return true;
        }
        let r = *regs;
        let e = self.engine.as_mut().expect("decoded only with an engine");
        let slot = (v >> 31 == 1).then(|| {
            let o = r[CommField::Origin as usize] as usize;
            let x = r[CommField::Extent as usize] as usize;
            Communicator {
                comm_box: CommBox {
                    origin: [o & 0xF, o >> 4 & 0xF, o >> 8 & 0xF],
                    extent: [x & 0x1F, x >> 8 & 0x1F, x >> 16 & 0x1F],
                },
                rank: r[CommField::Rank as usize] as usize,
                pdid: v as u16,
                scratch: r[CommField::ScratchLo as usize] as u64
                    | (r[CommField::ScratchHi as usize] as u64) << 32,
                scratch_bytes: r[CommField::ScratchSize as usize] as u64,
            }
        });
        if e.set_communicator(k, slot).is_err() {
            return false;
        }
        self.ar_regs[k][CommField::Ctrl as usize] = v & (0xFFFF | 1 << 31);
        true
    }

    /// Move the engine's completions into the completion queue while it
    /// has room (slots held by landing writes count), and its memory
    /// writes into the write log.
    fn ar_drain(&mut self) {
        let Some(e) = self.engine.as_mut() else {
            return;
        };
        let writes = e.take_writes();
        if self.log_writes {
            self.writes.extend(writes);
        }
        let held = self.landing.iter().filter(|l| l.cq.is_some()).count();
        while self.cq.len() + held < self.p.cq_depth {
            let Some(c) = e.pop_completion() else {
                break;
            };
            let ok = c.status == ArStatus::Ok;
            self.cq.push(CqEntry {
                kind: CqKind::Allreduce,
                status: if ok { CqStatus::Ok } else { CqStatus::Failed },
                reason: c.status as u8,
                txid: c.txid,
                peer: self.me,
                pdid: c.pdid,
            });
        }
    }

    /// Move time on by `cycles` (the allreduce engine's timeout counts
    /// them; nothing else in the model is timed).
    pub fn advance_time(&mut self, cycles: u64) {
        if let Some(e) = self.engine.as_mut() {
            e.advance(cycles, &mut self.mem);
            self.ar_drain();
        }
    }

    /// The allreduce engine, if any (counters, state).
    pub fn engine(&self) -> Option<&Engine> {
        self.engine.as_ref()
    }
}

fn is_data(t: PacketType) -> bool {
    matches!(t, PacketType::RdmaWrite | PacketType::RdmaReadResp)
}

/// A rejected mailbox message is answered with MailboxNack, a rejected read
/// request with Nack (flags = reason), when header and footer are trusted,
/// the packet was meant for this node (an answer from a node that is not
/// the destination would be stale at the sender) and it came on its own
/// message class (one on the other class's VC is forged or misdirected: it
/// is reported, like a misrouted one, and not answered).
fn rejection_response_type(r: &Rejected) -> Option<PacketType> {
    if matches!(r.reason, RejectReason::Misrouted | RejectReason::WrongClass) {
        return None;
    }
    match (r.header?.ptype(), r.footer?) {
        (PacketType::Mailbox, _) => Some(PacketType::MailboxNack),
        (PacketType::RdmaReadReq, _) => Some(PacketType::Nack),
        _ => None,
    }
}

fn needs_of(a: &Accepted) -> Needs {
    match a {
        Accepted::Data { footer, .. } => Needs {
            cq: footer.last(),
            resp: footer.last() && footer.notify(),
            read: false,
        },
        Accepted::ReadReq { .. } => Needs {
            read: true,
            ..Needs::default()
        },
        Accepted::Mailbox { .. } => Needs {
            resp: true,
            ..Needs::default()
        },
        // A fragment needs nothing: the engine's completions wait in the
        // engine until the completion queue has room.
        Accepted::Fragment { .. } => Needs::default(),
        Accepted::Response { header, .. } => Needs {
            cq: matches!(
                header.ptype(),
                PacketType::RdmaCompletion | PacketType::Nack
            ),
            ..Needs::default()
        },
    }
}

/// A field of `pkt`'s header word, raw.
fn header_field(pkt: &Packet, f: &Field) -> u64 {
    f.get(pkt.header_word())
}

/// A field of `pkt`'s footer word, raw.
fn footer_field(pkt: &Packet, f: &Field) -> u64 {
    f.get(pkt.footer_word())
}
