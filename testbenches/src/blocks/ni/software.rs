//! The software agent of the `ni` bench (AXI4-Lite master): the
//! privileged set-up at each phase start, then one random action at a
//! time: RDMA descriptors, packetizer sends, consumption of the head
//! completion or message, register reads, privileged configuration, and
//! bad or refused accesses.

use super::{NiBench, Op, REGION};
use exanet_sim::ni::{regs, trace, RejectReason};
use exanet_sim::rng::Rng;

impl NiBench {
    /// Privileged set-up at the start of a phase.
    pub(super) fn setup(&mut self, rng: &mut Rng) {
        let n = self.params.ni.clone();
        // Window 0: the landing area, for the receive agent's packets.
        self.rx.pdid = rng.bits(16) as u16;
        let land = self.rx.land;
        self.priv_write(regs::win_reg(0, regs::WIN_BASE_LO), land as u32);
        self.priv_write(regs::win_reg(0, regs::WIN_BASE_HI), (land >> 32) as u32);
        self.priv_write(regs::win_reg(0, regs::WIN_SIZE_LO), REGION as u32);
        self.priv_write(regs::win_reg(0, regs::WIN_SIZE_HI), 0);
        self.priv_write(
            regs::win_reg(0, regs::WIN_CTRL),
            self.rx.pdid as u32 | 1 << 31,
        );
        let mut pdids = Vec::new();
        for c in 0..n.channels {
            pdids.push(rng.bits(16) as u32);
            self.priv_write(regs::CH_PDID_BASE + 4 * c as u32, pdids[c]);
        }
        if self.has_engine() {
            self.ar_setup(rng, &pdids);
        }
        for _ in 0..2 * (!self.only_bad && n.windows > 1) as usize {
            let w = 1 + rng.below(n.windows as u64 - 1) as usize;
            let f = [
                regs::WIN_BASE_LO,
                regs::WIN_BASE_HI,
                regs::WIN_SIZE_LO,
                regs::WIN_SIZE_HI,
                regs::WIN_CTRL,
            ][rng.below(5) as usize];
            self.priv_write(regs::win_reg(w, f), rng.next_u64() as u32);
        }
        // The mailbox: mostly one PDID (the general mode's senders use it),
        // sometimes open; the burst's PDID exactly.
        let mb = match &mut self.burst {
            Some(b) => {
                b.pdid = rng.bits(16) as u16;
                b.pdid as u32
            }
            None => rng.next_u64() as u32 & if rng.chance(0.7) { 0xFFFF } else { !0 },
        };
        self.priv_write(regs::MBOX_CTRL, mb);
        // The interrupt: from any STATUS bit, mostly the queues'.
        let irq = if rng.chance(0.5) {
            regs::ST_CQ_NONEMPTY | regs::ST_MB_NONEMPTY
        } else {
            rng.next_u64() as u32
        };
        self.priv_write(regs::IRQ_ENABLE, self.irq_enable.unwrap_or(irq));
        self.priv_write(regs::CONTROL, 1);
        // The event trace: mostly on, sometimes cleared first, sometimes off.
        if n.trace_depth > 0 {
            let ctrl = [1, 1, 3, 0][rng.below(4) as usize];
            self.cov.trace_off_phases += (ctrl == 0) as u64;
            self.priv_write(trace::TRACE_CTRL, ctrl);
        }
    }

    /// At the end of a drained phase that ends with a reset pulse: random
    /// values into the registers [`NiBench::queue_reset_readback`] reads
    /// that software can write (every channel's staged descriptor,
    /// PKT_DEST and packetizer window words; every window but window 0,
    /// which the set-up writes, each enabled), so each holds a non-zero
    /// value when the reset comes. No DOORBELL or PKT_SEND: nothing starts.
    pub(super) fn queue_reset_fill(&mut self, rng: &mut Rng) {
        let n = self.params.ni.clone();
        for c in 0..n.channels {
            let page = regs::ch_page(c);
            for a in (regs::DESC_LADDR_LO..=regs::DESC_CTRL).step_by(4) {
                self.user_write(page + a, rng.next_u64() as u32);
            }
            self.user_write(page + regs::PKT_DEST, rng.next_u64() as u32);
            for i in 0..n.mailbox_msg_bytes as u32 / 4 {
                self.user_write(page + regs::PKT_DATA + 4 * i, rng.next_u64() as u32);
            }
        }
        for w in 1..n.windows {
            for f in [
                regs::WIN_BASE_LO,
                regs::WIN_BASE_HI,
                regs::WIN_SIZE_LO,
                regs::WIN_SIZE_HI,
                regs::WIN_CTRL,
            ] {
                // WIN_CTRL with ENABLE set: every window's enable must be
                // cleared by the reset.
                let en = if f == regs::WIN_CTRL {
                    1 << regs::WIN_CTRL_ENABLE.offset
                } else {
                    0
                };
                self.priv_write(regs::win_reg(w, f), rng.next_u64() as u32 | en);
            }
        }
    }

    /// Right after a reset pulse in the middle of a run (before the
    /// phase's set-up), read back the state software configures: every
    /// channel page's registers (CH_STATUS, CH_PDID, CH_ERR, the staged
    /// descriptor, PKT_DEST, every packetizer window word), the channel
    /// PDIDs, every window's five registers, CONTROL, MBOX_CTRL,
    /// IRQ_ENABLE, TRACE_CTRL and, with the engine, its thresholds and
    /// every communicator slot's fields. Each read is compared with the
    /// golden model's (a fresh model: reset values), so state the reset
    /// missed shows while it still holds what the last phase wrote.
    pub(super) fn queue_reset_readback(&mut self) {
        let n = self.params.ni.clone();
        let mut addrs = Vec::new();
        for c in 0..n.channels {
            let page = regs::ch_page(c);
            addrs.extend([regs::CH_STATUS, regs::CH_PDID, regs::CH_ERR].map(|a| page + a));
            addrs.extend(
                (regs::DESC_LADDR_LO..=regs::DESC_CTRL)
                    .step_by(4)
                    .map(|a| page + a),
            );
            addrs.push(page + regs::PKT_DEST);
            addrs
                .extend((0..n.mailbox_msg_bytes as u32 / 4).map(|i| page + regs::PKT_DATA + 4 * i));
            addrs.push(regs::CH_PDID_BASE + 4 * c as u32);
        }
        for w in 0..n.windows {
            addrs.extend(
                [
                    regs::WIN_BASE_LO,
                    regs::WIN_BASE_HI,
                    regs::WIN_SIZE_LO,
                    regs::WIN_SIZE_HI,
                    regs::WIN_CTRL,
                ]
                .map(|f| regs::win_reg(w, f)),
            );
        }
        addrs.extend([regs::CONTROL, regs::MBOX_CTRL, regs::IRQ_ENABLE]);
        if n.trace_depth > 0 {
            addrs.push(trace::TRACE_CTRL);
        }
        if self.has_engine() {
            addrs.extend([regs::AR_THRESHOLD, regs::AR_TIMEOUT]);
            for k in 0..n.ar_communicators {
                addrs.extend(regs::AR_COMM_FIELDS.map(|f| regs::ar_comm_reg(k, f)));
            }
        }
        self.cov.reset_readbacks += addrs.len() as u64;
        for a in addrs {
            self.priv_read(a);
        }
    }

    /// Read the trace registers and every entry the ring holds, oldest
    /// first (each read is compared with the golden model's).
    pub(super) fn queue_trace_readout(&mut self) {
        let t = self.golden.trace();
        let (count, depth) = (t.read(trace::TRACE_COUNT), t.depth() as u32);
        let wrapped = t.read(trace::TRACE_CTRL) & 1 << trace::CTRL_WRAPPED.offset != 0;
        let events = t.events();
        self.cov.trace_wrapped += wrapped as u64;
        for r in [
            trace::TRACE_CTRL,
            trace::TRACE_DEPTH,
            trace::TRACE_COUNT,
            trace::TRACE_DROPS,
        ] {
            self.priv_read(r);
        }
        let n = events.len() as u32;
        for k in 0..n {
            let idx = count.wrapping_sub(n).wrapping_add(k) % depth;
            self.priv_write(trace::TRACE_IDX, idx);
            self.priv_read(trace::TRACE_IDX);
            self.priv_read(trace::TRACE_LO);
            self.priv_read(trace::TRACE_HI);
        }
    }

    /// Mid-traffic: four ring entries and a trace register read (compared
    /// like any read), sometimes TRACE_CTRL written (on, off, cleared).
    fn trace_peek(&mut self, rng: &mut Rng) {
        // Only entries written since the reset (the RTL's RAM keeps older
        // ones through a reset; the golden model's reads 0 there).
        let filled = self.golden.trace().filled() as u64;
        if filled > 0 {
            let at = rng.below(filled);
            for k in 0..4 {
                self.priv_write(trace::TRACE_IDX, ((at + k) % filled) as u32);
                self.priv_read(trace::TRACE_LO);
                self.priv_read(trace::TRACE_HI);
            }
        }
        let reg = [
            trace::TRACE_COUNT,
            trace::TRACE_DROPS,
            trace::TRACE_CTRL,
            trace::TRACE_DEPTH,
        ][rng.below(4) as usize];
        self.priv_read(reg);
        if rng.chance(0.1) {
            let ctrl = [1, 3, 0][rng.below(3) as usize];
            self.priv_write(trace::TRACE_CTRL, ctrl);
        }
    }

    /// Queue a privileged read.
    pub(super) fn priv_read(&mut self, addr: u32) {
        self.sw.push_back(Op::Read { addr, prot: true });
    }

    /// Queue a privileged write.
    pub(super) fn priv_write(&mut self, addr: u32, data: u32) {
        self.sw.push_back(Op::Write {
            addr,
            data,
            prot: true,
        });
    }

    /// Queue a user write.
    pub(super) fn user_write(&mut self, addr: u32, data: u32) {
        self.sw.push_back(Op::Write {
            addr,
            data,
            prot: false,
        });
    }

    /// One random software action (with an allreduce engine, none that
    /// would start a collective: see [`NiBench::ar_filter`]).
    pub(super) fn generate(&mut self, rng: &mut Rng) {
        if self.has_engine() && rng.chance(0.25) {
            let c = rng.below(self.params.ni.channels as u64) as usize;
            match rng.below(4) {
                0 | 1 => self.ar_descriptor(rng, regs::ch_page(c)),
                2 => self.ar_register_read(rng),
                _ => self.ar_config(rng),
            }
        } else {
            self.action(rng);
        }
        self.ar_filter();
    }

    fn action(&mut self, rng: &mut Rng) {
        if self.burst.is_some() {
            self.burst_software(rng);
            return;
        }
        if self.only_bad && rng.chance(0.2) {
            self.handle_error_entry();
            return;
        }
        let c = rng.below(self.params.ni.channels as u64) as usize;
        let page = regs::ch_page(c);
        let r = rng.below(100);
        if r < 36 {
            self.descriptor(rng, page);
        } else if (66..72).contains(&r) {
            self.consume_head(rng);
        } else if r < 48 {
            self.packetizer_send(rng, page);
        } else if r < 66 {
            self.register_read(rng, page);
        } else if r < 78 {
            self.privileged_config(rng, c);
        } else if r < 86 {
            self.bad_access(rng, page);
        } else if r < 89 && self.params.ni.trace_depth > 0 {
            self.trace_peek(rng);
        } else {
            self.sw.push_back(Op::Wait(1 + rng.below(200) as u32));
        }
    }

    /// The driver handles the head error entry: reads it, pops it.
    fn handle_error_entry(&mut self) {
        for k in 0..5 {
            self.sw.push_back(Op::Read {
                addr: regs::ERRQ_W0 + 4 * k,
                prot: true,
            });
        }
        self.priv_write(regs::ERRQ_POP, 0);
    }

    /// Software consumes the head completion or message, then pops.
    fn consume_head(&mut self, rng: &mut Rng) {
        let mw = self.params.ni.mailbox_msg_bytes as u64 / 4;
        let user = |addr| Op::Read { addr, prot: false };
        if rng.chance(0.5) {
            for k in 0..3 {
                self.sw.push_back(user(regs::CQ_PAGE + regs::CQ_W0 + 4 * k));
            }
            self.user_write(regs::CQ_PAGE + regs::CQ_POP, rng.next_u64() as u32);
            if rng.chance(0.3) {
                // The driver reads STATUS and clears what it saw.
                self.sw.push_back(Op::Read {
                    addr: regs::STATUS,
                    prot: true,
                });
                self.priv_write(regs::STATUS, rng.next_u64() as u32 & regs::ST_STICKY);
            }
        } else {
            for a in [regs::MB_COUNT, regs::MB_LEN, regs::MB_SRC, regs::MB_PDID] {
                if rng.chance(0.6) {
                    self.sw.push_back(user(regs::MB_PAGE + a));
                }
            }
            for i in 0..rng.below(mw + 1) as u32 {
                self.sw
                    .push_back(user(regs::MB_PAGE + regs::MB_DATA + 4 * i));
            }
            self.user_write(regs::MB_PAGE + regs::MB_POP, rng.next_u64() as u32);
        }
    }

    /// A packetizer send on the channel at `page`: window words, PKT_DEST,
    /// PKT_SEND with a good or bad length.
    fn packetizer_send(&mut self, rng: &mut Rng, page: u32) {
        let n = self.params.ni.clone();
        let words = n.mailbox_msg_bytes / 4;
        for _ in 0..rng.below(words as u64 + 1) {
            let i = rng.below(words as u64) as u32;
            self.user_write(page + regs::PKT_DATA + 4 * i, rng.next_u64() as u32);
        }
        if rng.chance(0.7) {
            self.user_write(page + regs::PKT_DEST, rng.next_u64() as u32);
        }
        let len = match rng.below(20) {
            0 => 0,
            1 => n.mailbox_msg_bytes as u64 + 1 + rng.below(300),
            _ => 1 + rng.below(n.mailbox_msg_bytes as u64),
        };
        self.user_write(
            page + regs::PKT_SEND,
            len as u32 | (rng.bits(23) as u32) << 9,
        );
    }

    /// A read of an implemented register (of the channel at `page`, or
    /// global), or of a bad address.
    fn register_read(&mut self, rng: &mut Rng, page: u32) {
        let n = self.params.ni.clone();
        let mw = n.mailbox_msg_bytes as u64 / 4;
        let prot = rng.chance(0.3);
        let addr = match rng.below(14) {
            7 | 8 | 13 => regs::ERRQ_COUNT + 4 * rng.below(6) as u32, // ERRQ_COUNT, W0..W4
            10 => regs::CQ_PAGE + 4 * rng.below(6) as u32, // CQ_COUNT, W0..W2, POP, unmapped
            11 => {
                regs::MB_PAGE
                    + match rng.below(3) {
                        0 => 4 * rng.below(6) as u32, // MB_COUNT..MB_POP, unmapped
                        _ => regs::MB_DATA + 4 * rng.below(mw + 1) as u32, // last: unmapped
                    }
            }
            12 => [
                regs::STATUS,
                regs::STATUS,
                regs::STATUS,
                regs::CNT_BASE + 4 * regs::cnt::MB_FULL_NACKS as u32,
                regs::CNT_BASE + 4 * regs::cnt::MB_RETRIES as u32,
                regs::CNT_BASE + 4 * regs::cnt::MB_DENIED as u32,
                regs::CNT_BASE + 4 * regs::cnt::RD_BUSY_NACKS as u32,
                regs::REJ_BASE + 4 * RejectReason::WrongClass.code() as u32,
            ][rng.below(8) as usize],
            0 => page + regs::CH_STATUS,
            1 => page + 4 * rng.below(11) as u32, // 0x00..0x28
            2 => page + regs::PKT_DATA + 4 * rng.below(n.mailbox_msg_bytes as u64 / 4) as u32,
            3 => page + [regs::PKT_DEST, regs::PKT_SEND, regs::DOORBELL][rng.below(3) as usize],
            4 => [
                regs::ID,
                regs::PARAMS0,
                regs::PARAMS1,
                regs::PARAMS2,
                regs::PARAMS3,
                regs::PARAMS4,
                regs::COORDS,
                regs::CONTROL,
                regs::MBOX_CTRL,
                regs::IRQ_ENABLE,
                regs::CNT_BASE + 4 * regs::cnt::TX_PACKETS as u32,
                regs::CNT_BASE + 4 * regs::cnt::TX_PAYLOAD_BYTES as u32,
                regs::CNT_BASE + 4 * regs::cnt::RX_PACKETS as u32,
                regs::CNT_BASE + 4 * regs::cnt::RX_REJECTED as u32,
                regs::CNT_BASE + 4 * regs::cnt::HDR_CORRECTED as u32,
                regs::CNT_BASE + 4 * regs::cnt::RX_DATA_BYTES as u32,
                regs::REJ_BASE + 4 * (1 + rng.below(RejectReason::MAX_CODE as u64) as u32),
                regs::REJ_BASE + 4 * (1 + rng.below(RejectReason::MAX_CODE as u64) as u32),
                regs::ERRQ_COUNT,
                regs::ERRQ_W0 + 4 * rng.below(5) as u32,
                regs::ERRQ_W0 + 4 * rng.below(5) as u32,
                regs::ERRQ_W0 + 4 * rng.below(5) as u32,
                regs::ERRQ_POP,
            ][rng.below(23) as usize],
            5 => regs::CH_PDID_BASE + 4 * rng.below(n.channels as u64) as u32,
            6 => regs::win_reg(
                rng.below(n.windows as u64) as usize,
                4 * rng.below(5) as u32,
            ),
            _ => self.bad_addr(rng),
        };
        // With AXI4 error injection, the error counters take the place of
        // MB_RETRIES, MB_DENIED and RD_BUSY_NACKS reads in turn (no extra
        // draw: the stimulus of a seed is the same with injection off).
        let cnt = |i: usize| regs::CNT_BASE + 4 * i as u32;
        let swapped = [
            regs::cnt::MB_RETRIES,
            regs::cnt::MB_DENIED,
            regs::cnt::RD_BUSY_NACKS,
        ];
        let addr = if self.axi_faults.is_some() && swapped.iter().any(|&i| addr == cnt(i)) {
            self.axi_cnt_turn = (self.axi_cnt_turn + 1) % 4;
            cnt(regs::cnt::RD_SLVERR + self.axi_cnt_turn)
        } else {
            addr
        };
        self.sw.push_back(Op::Read {
            addr,
            prot: prot || rng.chance(0.5),
        });
    }

    /// Privileged configuration: channel `c`'s PDID, a window, error-queue
    /// pops, STATUS clears, MBOX_CTRL, TX_ENABLE toggles.
    fn privileged_config(&mut self, rng: &mut Rng, c: usize) {
        let n = self.params.ni.clone();
        match rng.below(4) {
            0 => self.priv_write(regs::CH_PDID_BASE + 4 * c as u32, rng.bits(16) as u32),
            1 if !self.only_bad => {
                // Window 0 (the landing area) only changes PDID or
                // enable, and is usually restored.
                let w = rng.below(n.windows as u64) as usize;
                if w == 0 {
                    let ctrl = if rng.chance(0.7) {
                        self.rx.pdid as u32 | 1 << 31
                    } else {
                        rng.next_u64() as u32
                    };
                    self.priv_write(regs::win_reg(0, regs::WIN_CTRL), ctrl)
                } else {
                    self.priv_write(
                        regs::win_reg(w, 4 * rng.below(5) as u32),
                        rng.next_u64() as u32,
                    )
                }
            }
            1 | 2 if rng.chance(0.5) => {
                // Software drains the error queue.
                for _ in 0..1 + rng.below(4) {
                    self.priv_write(regs::ERRQ_POP, rng.next_u64() as u32)
                }
            }
            1 | 2 if rng.chance(0.5) => {
                // STATUS: write-one-to-clear some sticky bits; or which of
                // its bits raise the interrupt (the sticky ones alone, the
                // error queue's, the completions', or any).
                if rng.chance(0.4) {
                    let irq = [
                        regs::ST_STICKY,
                        regs::ST_ERRQ_NONEMPTY | regs::ST_RX_ERROR,
                        regs::ST_CQ_NONEMPTY,
                        rng.next_u64() as u32,
                    ][rng.below(4) as usize];
                    self.priv_write(regs::IRQ_ENABLE, self.irq_enable.unwrap_or(irq))
                } else {
                    self.priv_write(regs::STATUS, rng.next_u64() as u32)
                }
            }
            1 | 2 => {
                let v = rng.next_u64() as u32 & if rng.chance(0.7) { 0xFFFF } else { !0 };
                self.priv_write(regs::MBOX_CTRL, v)
            }
            _ => {
                // TX_ENABLE off for a while, then on again.
                if !self.tx_off && rng.chance(0.3) {
                    self.priv_write(regs::CONTROL, 0);
                    self.tx_off = true;
                } else {
                    self.priv_write(regs::CONTROL, 1 | (rng.next_u64() as u32 & !1));
                    self.tx_off = false;
                }
            }
        }
    }

    /// A bad or refused access: user writes to privileged or read-only
    /// registers (of the channel at `page`, the CQ and mailbox pages, page
    /// 0), or an access to a bad address.
    fn bad_access(&mut self, rng: &mut Rng, page: u32) {
        let v = rng.next_u64() as u32;
        match rng.below(5) {
            0 => self.user_write(page + regs::CH_PDID, v),
            1 => self.user_write(page + regs::CH_ERR, v),
            2 => self.user_write(page + regs::CH_STATUS, v),
            3 if rng.chance(0.3) => {
                // Read-only or unmapped registers of the CQ and mailbox pages.
                let a = [regs::CQ_PAGE, regs::MB_PAGE][rng.below(2) as usize]
                    + [0x000, 0x004, 0x008, 0x00C, 0x014, 0x100][rng.below(6) as usize];
                self.user_write(a, v)
            }
            3 => self.user_write(4 * rng.below(0x100) as u32, v), // user to page 0
            _ => {
                let a = self.bad_addr(rng);
                self.sw.push_back(Op::Write {
                    addr: a,
                    data: v,
                    prot: rng.chance(0.5),
                })
            }
        }
    }

    /// An address no register answers (in both models), or an unaligned one.
    fn bad_addr(&self, rng: &mut Rng) -> u32 {
        let n = &self.params.ni;
        match rng.below(4) {
            0 => {
                regs::ch_page(n.channels)
                    + 4 * rng.below(1024) as u32
                    + (rng.below(0xFF - 3 - n.channels as u64) as u32) * regs::PAGE
            }
            1 => {
                regs::ch_page(rng.below(n.channels as u64) as usize)
                    + [
                        0x00C,
                        0x030,
                        0x048,
                        0x0FC,
                        0x100 + n.mailbox_msg_bytes as u32,
                        0xFFC,
                    ][rng.below(6) as usize]
            }
            2 => [
                0x018,
                0x030,
                0x0E0,
                0x100 + 4 * n.channels as u32,
                0x200 + 0x20 * n.windows as u32,
                0x214,
                0xFFC,
            ][rng.below(7) as usize],
            _ => (rng.bits(20) as u32 & !3) | (1 + rng.below(3) as u32),
        }
    }

    /// An RDMA descriptor (write or read; some refused: bad op, length 0,
    /// address beyond the limit, queue full) on the channel at `page`, and
    /// its DOORBELL.
    fn descriptor(&mut self, rng: &mut Rng, page: u32) {
        let n = &self.params.ni;
        let lim = 1u64 << n.addr_bits;
        // Long transfers: up to 80 packets at small packet sizes (so that
        // one transfer does not hold the only channel for most of a phase).
        let long = 80 * n.max_payload_bytes as u64;
        let len: u64 = match rng.below(100) {
            0..=44 => 1 + rng.below(64),
            45..=79 => 1 + rng.below(700),
            80..=94 => 1 + rng.below(5000.min(long)),
            95..=97 => 1 + rng.below(20000.min(long)),
            _ => 0,
        };
        let base = self.regions[rng.below(self.regions.len() as u64) as usize];
        let mut laddr = base + rng.below(REGION - 20000);
        if rng.chance(0.03) {
            laddr = lim - len.max(1) + rng.below(3); // may run past the limit
        }
        let mut raddr = rng.bits(42);
        if rng.chance(0.3) {
            raddr &= !0xFFF; // page-aligned landing
        }
        if rng.chance(0.03) {
            raddr = (1u64 << 42) - len.max(1) + rng.below(3);
        }
        let op = match rng.below(100) {
            0..=74 => 0,
            75..=96 => 1,
            _ => 2 + rng.below(2) as u32,
        };
        let ctrl = op
            | (rng.below(2) as u32) << 4
            | (rng.bits(14) as u32) << 16
            | (rng.next_u64() as u32 & 0xC000_FFE0);
        let writes = [
            (regs::DESC_LADDR_LO, laddr as u32),
            (regs::DESC_LADDR_HI, (laddr >> 32) as u32),
            (regs::DESC_RADDR_LO, raddr as u32),
            (
                regs::DESC_RADDR_HI,
                (raddr >> 32) as u32 | (rng.bits(22) as u32) << 10,
            ),
            (regs::DESC_LEN, len as u32),
            (regs::DESC_DEST, rng.next_u64() as u32),
            (regs::DESC_CTRL, ctrl),
        ];
        for (off, v) in writes {
            if rng.chance(0.9) {
                self.user_write(page + off, v);
            }
        }
        self.user_write(page + regs::DOORBELL, rng.next_u64() as u32);
    }
}
