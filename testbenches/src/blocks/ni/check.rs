//! The checks of one cycle of the `ni` bench (see the module doc of
//! [`super`]), phase by phase in the order of the golden calls: read
//! accepted, response picked, request picked, receive, write landed, write
//! accepted, packet left. The first failure stops the run.

use super::agents::{check_picks, Access, Report};
use super::rx::SentPacket;
use super::{NiBench, Ports};
use crate::cosim::Mismatch;
use exanet_sim::ni::counters::Counters;
use exanet_sim::ni::rdma_rx::NACK_READ_BUSY;
use exanet_sim::ni::{regs, trace, AxilResp, Packet, Prot, RejectReason, RxOutcome};
use exanet_sim::packet::footer::Footer;
use exanet_sim::packet::header::{Header, PacketType};

impl NiBench {
    /// The checks of one cycle (see the module doc); the first failure is
    /// the `Err`.
    pub(super) fn check_cycle(&mut self, cycle: u64) -> Result<(), Mismatch> {
        // Moved out and back (no per-cycle clone of the port handles).
        let p = self.ports.take().expect("bind() before running");
        let r = self.check_cycle_on(&p, cycle);
        self.ports.get_or_insert(p);
        r
    }

    /// [`Self::check_cycle`] on the bound ports `p`.
    fn check_cycle_on(&mut self, p: &Ports, cycle: u64) -> Result<(), Mismatch> {
        if self.reset_now {
            return Ok(());
        }
        let rep = Report { cycle, prefix: "" };
        // 0. The trace time of the golden events of this cycle.
        self.golden.set_cycle(self.trace_t);
        // 1. A read accepted: the golden read of the same state.
        self.count_cq_read_landing(p);
        let wr_fire = self.axil.accept_read(&p.ni, &mut self.golden, rep)?;
        // 2. Picks: a response (the response lane), then a request.
        let busy = p.ni.tx_busy.get() == 1;
        self.check_tx_picks(p, rep)?;
        // 3. A packet decided by the receive path: the golden receives it.
        self.check_rx_decision(p, rep)?;
        self.check_credit_out(p, rep)?;
        self.check_rx_writes(p, rep)?;
        // 4. A write accepted.
        if wr_fire {
            self.write_accepted(rep)?;
        }
        // 5. Responses.
        self.check_axil_responses(p, rep)?;
        // 6. AXI4 master: AR checks, R beats.
        self.check_mem_reads(p, rep)?;
        // 7. Flits: each on `vc` (lane 0) or `resp_vc` (lane 1), with a
        // credit of its VC.
        self.check_flits(p, rep, busy)?;
        self.check_liveness(p, rep, busy)?;
        // 8. Time: the golden engine's clock moves one cycle (a stalled
        // collective times out here, its completion in the CQ from the
        // next cycle, as the RTL's).
        self.advance_golden_time();
        Ok(())
    }

    /// One cycle of the golden model's time (`Ni::advance_time`); a
    /// collective that ends now (TIMEOUT) is counted.
    fn advance_golden_time(&mut self) {
        let done = |g: &exanet_sim::ni::Ni| g.engine().map_or(0, |e| e.counters().completions);
        let before = done(&self.golden);
        self.golden.advance_time(1);
        // A queued descriptor started when a collective timed out: its
        // writes (a box of one rank's copy) are due on AXI4 now.
        let writes = self.golden.take_writes();
        self.expect_step_writes(writes);
        let ended = done(&self.golden) - before;
        if ended > 0 {
            self.cov.ar_timeouts += ended;
            self.cov.ar_status[exanet_sim::allreduce::engine::ArStatus::Timeout as usize] += ended;
            self.golden_dirty = true;
        }
    }

    /// Coverage: a read of CQ_COUNT, CQ_W0 or STATUS accepted while a
    /// completion's write is still landing (the completion must not be
    /// visible yet).
    fn count_cq_read_landing(&mut self, p: &Ports) {
        if p.ni.arready.get() == 1 && self.rx.landing.iter().any(|&c| c) {
            if let Some(Access::Read { addr, .. }) = self.axil.current() {
                let cq = regs::CQ_PAGE;
                if [cq + regs::CQ_COUNT, cq + regs::CQ_W0, regs::STATUS].contains(addr) {
                    self.cov.cq_reads_landing += 1;
                }
            }
        }
    }

    /// `rsp_pick` and `tx_pick` against the golden model; each packet
    /// picked is counted, answers a burst message if it is an
    /// acknowledgement, and is expected flit by flit on its class's VC.
    fn check_tx_picks(&mut self, p: &Ports, rep: Report) -> Result<(), Mismatch> {
        let picks = check_picks(&p.ni, &mut self.golden, rep)?;
        // The pick of a step's last fragment, its receive closed: the
        // golden engine combined (or stored) the step at once.
        let writes = self.golden.take_writes();
        self.expect_step_writes(writes);
        for (class, pk) in [(1, picks.response), (0, picks.request)] {
            let Some(pk) = pk else { continue };
            self.golden_dirty = true;
            let h = Header::from_bits(pk.header_word()).expect("golden header");
            let f = Footer::from_bits(pk.footer_word()).expect("golden footer");
            self.count_pick(&h, &f);
            if matches!(h.ptype(), PacketType::MailboxAck | PacketType::MailboxNack) {
                self.burst_answer(&pk, &h);
            }
            self.tx.picked(class, pk, h.pdid());
        }
        Ok(())
    }

    /// Coverage of a packet picked, by type. A message picked is being
    /// sent; every second one (general mode) is acknowledged at once by a
    /// forged ack, which must be Stale if decided before its tail leaves.
    fn count_pick(&mut self, h: &Header, f: &Footer) {
        match h.ptype() {
            PacketType::RdmaWrite => self.cov.writes += 1,
            PacketType::RdmaReadReq => self.cov.read_reqs += 1,
            // (The receive agent may acknowledge it once its tail
            // flit has left: see the flit checks; or at once, a forged
            // ack while it is being sent, which must be Stale.)
            PacketType::Mailbox => {
                self.cov.messages += 1;
                let key = (h.dest(), h.pdid(), f.txid());
                self.rx.sending_msgs.push(key);
                if !self.draining && self.burst.is_none() && !self.only_bad {
                    self.rx.early = Some(key);
                    self.rx.early_go = self.rx.early_coin;
                    self.rx.early_coin = !self.rx.early_coin;
                }
            }
            PacketType::MailboxAck => self.cov.resp_acks += 1,
            PacketType::MailboxNack => self.cov.resp_mb_nacks += 1,
            PacketType::RdmaCompletion => {
                self.cov.resp_completions += 1;
                self.cov.cq_status[f.flags() as usize & 3] += 1;
            }
            PacketType::RdmaReadResp => self.cov.read_resps += 1,
            PacketType::AllreduceFragment => self.cov.ar_fragments += 1,
            _ => {
                self.cov.resp_read_nacks += 1;
                self.cov.resp_read_busy += (f.flags() == NACK_READ_BUSY) as u64;
            }
        }
    }

    /// The receive path's decision this cycle, for the class `rx_class`
    /// of the packet's arrival VC: committed, found Busy, or (with a
    /// packet waiting) none yet, which must come within 2000 cycles.
    fn check_rx_decision(&mut self, p: &Ports, rep: Report) -> Result<(), Mismatch> {
        // The class of the packet decided (or found Busy): of its arrival VC.
        let class = p.ni.rx_class.get() as usize;
        if p.ni.rx_commit.get() == 1 {
            self.rx_commit(class, rep)?;
        } else if p.ni.rx_busy.get() == 1 {
            self.rx_busy(class, rep)?;
        } else if !self.rx.none_sent() {
            self.rx.wait_commit += 1;
            if self.rx.wait_commit > 2000 {
                let n = &p.ni;
                return rep.bad(
                    "rx_commit",
                    "a decision within 2000 cycles of the tail".into(),
                    format!(
                        "none (s_awvalid {} (0x{:x}) s_arvalid {} tx_busy {} m_arvalid {} m_rvalid/m_rready {}/{} \
                         m_awvalid {} m_wvalid {} m_bvalid/m_bready {}/{}; allreduce copy due {:?}, \
                         writes expected {})",
                        n.awvalid.get(),
                        n.awaddr.get(),
                        n.arvalid.get(),
                        n.tx_busy.get(),
                        n.m_arvalid.get(),
                        n.m_rvalid.get(),
                        n.m_rready.get(),
                        n.m_awvalid.get(),
                        n.m_wvalid.get(),
                        n.m_bvalid.get(),
                        n.m_bready.get(),
                        self.ar_copy,
                        !self.rx.wr.idle(),
                    ),
                );
            }
        }
        Ok(())
    }

    /// `rx_commit`: the golden model receives the oldest packet sent on a
    /// VC of `class` (it must be consumed, not Busy); the outcome is
    /// counted, the golden writes expected on AXI4, the credits owed.
    fn rx_commit(&mut self, class: usize, rep: Report) -> Result<(), Mismatch> {
        let Some(SentPacket { pkt, vc, seq }) = self.rx.sent[class].pop_front() else {
            return rep.bad(
                &format!("rx_commit (rx_class {class})"),
                format!("0 (no packet sent on a class-{class} VC)"),
                "1".into(),
            );
        };
        self.count_class_order(class, seq);
        let before = *self.golden.counters();
        let ar_before = self.golden.engine().map(|e| *e.counters());
        let outcome = self.golden.receive_packet_on(&pkt, class);
        self.count_fragment(&pkt, ar_before);
        self.check_ack_while_sending(&pkt, class, outcome, rep)?;
        let read_req = Header::decode(pkt.header_word())
            .is_ok_and(|(h, _)| h.ptype() == PacketType::RdmaReadReq);
        self.cov.read_reqs_in += read_req as u64;
        self.golden_dirty = true;
        self.rx.busy_run = 0;
        self.cov.rx_packets += 1;
        match outcome {
            RxOutcome::Accepted => self.count_accepted(&pkt, &before),
            // A message with the mailbox full, or a read request with
            // the read queue full: a nack is sent.
            RxOutcome::Refused if read_req => self.cov.read_refused += 1,
            RxOutcome::Refused => self.cov.mb_refused += 1,
            RxOutcome::Rejected(r) => self.cov.rx_rejected[r.code() as usize] += 1,
            RxOutcome::Busy => {
                return rep.bad(
                    "rx_commit",
                    "0 (golden: Busy, a queue the packet needs is full)".into(),
                    "1".into(),
                )
            }
        }
        self.expect_rx_writes(&pkt, outcome, class, vc);
        Ok(())
    }

    /// Coverage of an allreduce fragment decided: accepted (closing a
    /// step or not) or rejected by the engine, by reason (its counters
    /// `before` the decision and now).
    fn count_fragment(
        &mut self,
        pkt: &Packet,
        before: Option<exanet_sim::allreduce::engine::EngineCounters>,
    ) {
        let (Some(b), Some(e)) = (before, self.golden.engine()) else {
            return;
        };
        let a = *e.counters();
        if a.fragments_received > b.fragments_received {
            self.cov.ar_frags_accepted += 1;
            self.cov.ar_frags_closing +=
                Footer::from_bits(pkt.footer_word()).is_ok_and(|f| f.last()) as u64;
        }
        for (r, (x, y)) in a.rejected.iter().zip(b.rejected).enumerate() {
            self.cov.ar_frag_rejected[r] += x - y;
        }
    }

    /// Coverage of the decision order: decisions per class; a class-1
    /// packet decided out of arrival order (an older class-0 packet waits,
    /// complete, perhaps found Busy).
    fn count_class_order(&mut self, class: usize, seq: u64) {
        self.cov.rx_by_class[class] += 1;
        if class == 1 {
            if self.rx.sent[0].front().is_some_and(|o| o.seq < seq) {
                self.cov.class1_overtakes += 1;
            }
            self.cov.class1_past_busy += self.rx.busy0 as u64;
        } else {
            self.rx.busy0 = false;
        }
    }

    /// An acknowledgement of a message still being sent (on a VC of its
    /// class): the golden outcome must be Stale.
    fn check_ack_while_sending(
        &mut self,
        pkt: &Packet,
        class: usize,
        outcome: RxOutcome,
        rep: Report,
    ) -> Result<(), Mismatch> {
        if let (Ok((h, _)), Ok(f)) = (
            Header::decode(pkt.header_word()),
            Footer::from_bits(pkt.footer_word()),
        ) {
            let key = (f.src(), h.pdid(), f.txid());
            if matches!(h.ptype(), PacketType::MailboxAck | PacketType::MailboxNack)
                && h.ptype().class() == class
                && h.dest() == self.me
                && self.rx.sending_msgs.contains(&key)
            {
                self.cov.acks_while_sending += 1;
                if outcome != RxOutcome::Rejected(RejectReason::Stale) {
                    return rep.bad(
                        "rx_commit",
                        "golden Stale (an ack of a message still being sent)".into(),
                        format!("golden outcome {outcome:?}"),
                    );
                }
            }
        }
        Ok(())
    }

    /// Coverage of an accepted packet, by type (and whether its header
    /// error was corrected: the golden counters `before` it and now); an
    /// acknowledgement of one of the NI's messages delivered, retried or
    /// denied, and no longer outstanding.
    fn count_accepted(&mut self, pkt: &Packet, before: &Counters) {
        self.cov.rx_accepted += 1;
        let after = self.golden.counters();
        if after.hdr_corrected != before.hdr_corrected {
            self.cov.rx_corrected += 1;
        }
        // (The header may carry a corrected error: decode it.)
        let h = Header::decode(pkt.header_word()).expect("accepted").0;
        let f = Footer::from_bits(pkt.footer_word()).expect("accepted");
        match h.ptype() {
            PacketType::RdmaWrite | PacketType::RdmaReadResp => {
                self.cov.rx_data += 1;
                self.cov.rx_completions += f.last() as u64;
            }
            PacketType::Mailbox => self.cov.mb_queued += 1,
            PacketType::RdmaCompletion => self.cov.notify_in += 1,
            PacketType::Nack => self.cov.nack_in += 1,
            PacketType::RdmaReadReq => self.cov.read_jobs += 1,
            _ => {
                if after.mb_retries != before.mb_retries {
                    self.cov.acks_retried += 1;
                } else if after.mb_denied != before.mb_denied {
                    self.cov.acks_denied += 1;
                } else {
                    self.cov.acks_delivered += 1;
                }
                let key = (f.src(), h.pdid(), f.txid());
                self.rx.outstanding.retain(|&o| o != key);
            }
        }
    }

    /// The golden model's memory writes for the packet just decided: due
    /// on AXI4 in order (AWUSER = its PDID), each posting a completion
    /// when it lands if the packet was an accepted data packet with
    /// `last = 1`; the packet's credits owed on its VC `vc` of `class`.
    fn expect_rx_writes(&mut self, pkt: &Packet, outcome: RxOutcome, class: usize, vc: u8) {
        let pdid = Header::from_bits(pkt.header_word()).map_or(0, |h| h.pdid());
        let writes = self.golden.take_writes();
        // An accepted allreduce fragment: the engine's write to scratch,
        // through the receive write burst (split at a 4 KiB page), its B
        // posting nothing.
        if Header::decode(pkt.header_word())
            .is_ok_and(|(h, _)| h.ptype() == PacketType::AllreduceFragment)
        {
            // Accepted: its scratch write first, then the writes of the
            // steps it made ready (combined or stored at once).
            let mut writes = writes;
            let steps = if outcome == RxOutcome::Accepted && !writes.is_empty() {
                writes.split_off(1)
            } else {
                std::mem::take(&mut writes)
            };
            self.cov.ar_frag_bursts += self.rx.wr.expect_fragment(writes, pdid) as u64;
            self.expect_step_writes(steps);
            self.rx.owed[class].push_back((vc, pkt.words.len()));
            self.rx.wait_commit = 0;
            return;
        }
        // An accepted data packet: one write; with last = 1 it posts a
        // completion when it lands.
        let posts = outcome == RxOutcome::Accepted
            && Footer::from_bits(pkt.footer_word()).is_ok_and(|f| f.last());
        for _ in &writes {
            self.rx.landing.push_back(posts);
            self.rx.poll_landing |= posts;
        }
        self.rx.wr.expect(writes, pdid);
        self.rx.owed[class].push_back((vc, pkt.words.len()));
        self.rx.wait_commit = 0;
    }

    /// The golden engine's writes of the steps an event made ready (a
    /// fragment picked or accepted): due on AXI4 after the writes before
    /// them, from the engine's copy machine, with slot 0's PDID (the
    /// collectives of this bench run there); the collective is marked as
    /// combining.
    fn expect_step_writes(&mut self, writes: Vec<exanet_sim::ni::memory::MemWrite>) {
        if writes.is_empty() {
            return;
        }
        let pdid = (self
            .golden
            .axil_read_prot(regs::ar_comm_reg(0, regs::AR_CTRL), Prot::Privileged)
            .0
            & 0xFFFF) as u16;
        self.cov.ar_steps_done += 1;
        let n = self.rx.wr.expect_engine(writes, pdid);
        self.cov.ar_step_bursts += n as u64;
        let due = self.ar_copy.map_or(0, |(_, d)| d);
        self.ar_copy = Some((pdid, due + n));
        self.ar_step = true;
        // The collective ended OK at this event: counted by op and dtype.
        let seq_now = self.golden.engine().and_then(|e| e.slot_seq(0));
        let ended = self.golden.engine().is_some_and(|e| e.running().is_none());
        let ended =
            |pt: &super::allreduce::Partner| ended && seq_now == Some((pt.key.1 + 1) & 0x3FFF);
        if let Some(pt) = self
            .ar_partner
            .as_mut()
            .filter(|pt| ended(pt) && !pt.counted)
        {
            pt.counted = true;
            self.cov.ar_combined_ok += 1;
            let t = self.golden.engine().map_or(0, |e| e.timeout()) as u32;
            self.ar_ok_at = Some((self.cycle_in_phase, t));
            self.cov.ar_combined_op[pt.op & 7] += 1;
            self.cov.ar_combined_dtype[pt.dtype & 7] += 1;
            let float = exanet_sim::allreduce::reduce_alu::ReduceDtype::from_code(pt.dtype as u64)
                .is_some_and(|d| d.is_float());
            self.cov.ar_combined_fsum += (pt.op == 0 && float) as u64;
        }
    }

    /// `rx_busy`: the golden model must refuse the oldest packet of
    /// `class` too (Busy, no effect); asked again whenever its state
    /// changed since, or another class was Busy.
    fn rx_busy(&mut self, class: usize, rep: Report) -> Result<(), Mismatch> {
        let Some(sp) = self.rx.sent[class].front() else {
            return rep.bad(
                &format!("rx_busy (rx_class {class})"),
                format!("0 (no packet sent on a class-{class} VC)"),
                "1".into(),
            );
        };
        self.cov.busy_cycles += 1;
        self.rx.busy_run += 1;
        self.rx.busy0 |= class == 0;
        if self.golden_dirty || self.rx.busy_checked != Some(class) {
            let outcome = self.golden.receive_packet_on(&sp.pkt, class);
            self.cov.busy_checks += 1;
            self.golden_dirty = false;
            self.rx.busy_checked = Some(class);
            if outcome != RxOutcome::Busy {
                return rep.bad(
                    &format!("rx_busy (rx_class {class})"),
                    format!("0 (golden outcome {outcome:?})"),
                    "1".into(),
                );
            }
        }
        Ok(())
    }

    /// A credit out: a word freed in ring `c` (the class of its VC), the
    /// next credit that class owes, in the order of its decisions.
    fn check_credit_out(&mut self, p: &Ports, rep: Report) -> Result<(), Mismatch> {
        if p.credit_out_valid.get() != 1 {
            return Ok(());
        }
        let cvc = p.credit_out_vc.get();
        let c = self.rx.class_of(cvc);
        if c > 1 {
            return rep.bad(
                "credit_out_vc",
                format!("a VC below {}", 2 * self.rx.vcs),
                format!("{cvc}"),
            );
        }
        let Some((vc, n)) = self.rx.owed[c].front_mut() else {
            return rep.bad(
                &format!("credit_out_valid (VC {cvc}, class {c})"),
                "0 (no credit owed)".into(),
                "1".into(),
            );
        };
        if cvc != *vc as u64 {
            return rep.bad("credit_out_vc", format!("{vc}"), format!("{cvc}"));
        }
        *n -= 1;
        if *n == 0 {
            self.rx.owed[c].pop_front();
        }
        self.rx.credits[c] += 1;
        Ok(())
    }

    /// AXI4 write: one burst per golden write, strobes exactly its bytes;
    /// its B: the golden write lands (completion and notify posted now,
    /// visible from the next cycle, as in the RTL).
    fn check_rx_writes(&mut self, p: &Ports, rep: Report) -> Result<(), Mismatch> {
        let ev = self
            .rx
            .wr
            .check(&p.ni, rep, self.cycle_in_phase, &mut self.mem)?;
        if let Some(n) = ev.written {
            self.cov.rx_writes += 1;
            self.cov.rx_write_bytes += n as u64;
        }
        if ev.engine_landed {
            let Some((_, due)) = self.ar_copy.as_mut() else {
                return rep.bad(
                    "m_bvalid && m_bready",
                    "no B (no allreduce copy)".into(),
                    "B".into(),
                );
            };
            *due -= 1;
            if *due == 0 {
                self.ar_copy = None;
                self.ar_step = false;
                // The RTL wrote the last step of a collective the golden
                // model ended OK, T or more cycles after that event: the
                // timeout fell while the RTL wrote it, and OK still won.
                if let Some((at, t)) = self.ar_ok_at.take() {
                    self.cov.ar_ok_past_timeout +=
                        (t > 0 && self.cycle_in_phase.saturating_sub(at) >= t as u64) as u64;
                }
            }
        }
        if ev.landed {
            if ev.bresp >= 2 {
                self.cov.axi_b_errors += 1;
            }
            if let Err(e) = self.golden.write_landed_resp(ev.bresp) {
                return rep.bad("m_bvalid && m_bready", format!("no B ({e})"), "B".into());
            }
            self.rx.landing.pop_front();
            self.golden_dirty = true;
            self.cov.landed += 1;
        }
        Ok(())
    }

    /// The AXI4-Lite write accepted this cycle: the golden model performs
    /// it; coverage of pops, STATUS clears and refused doorbells / sends.
    fn write_accepted(&mut self, rep: Report) -> Result<(), Mismatch> {
        let (addr, data, prot, ()) = self.axil.take_write(rep)?;
        let pr = if prot { Prot::Privileged } else { Prot::User };
        let cq_n = self.golden.axil_read(regs::CQ_PAGE + regs::CQ_COUNT);
        let mb_n = self.golden.axil_read(regs::MB_PAGE + regs::MB_COUNT);
        let r = self.golden.axil_write_prot(addr, data, pr);
        self.golden_dirty = true;
        // An allreduce DOORBELL: the engine's memory writes (a single
        // rank's copy) are due on AXI4 now, with the descriptor's PDID.
        let writes = self.golden.take_writes();
        if !writes.is_empty() {
            let ch = (addr - regs::CH_PAGE0) / regs::PAGE;
            let pdid = self
                .golden
                .axil_read_prot(regs::CH_PDID_BASE + 4 * ch, Prot::Privileged)
                .0 as u16;
            self.cov.ar_copies += 1;
            self.cov.ar_copy_bytes += writes.iter().map(|w| w.data.len() as u64).sum::<u64>();
            self.cov.ar_copy_chunks += writes.len() as u64;
            let n = self.rx.wr.expect_engine(writes, pdid);
            self.cov.ar_copy_bursts += n as u64;
            let due = self.ar_copy.map_or(0, |(_, d)| d);
            self.ar_copy = Some((pdid, due + n));
        }
        if r == AxilResp::Okay {
            if addr == regs::CQ_PAGE + regs::CQ_POP && cq_n > 0 {
                self.cov.cq_pops += 1;
            }
            if addr == regs::MB_PAGE + regs::MB_POP && mb_n > 0 {
                self.cov.mb_pops += 1;
            }
            if addr == regs::STATUS && data & regs::ST_STICKY != 0 {
                self.cov.status_clears += 1;
            }
        }
        if r == AxilResp::SlvErr {
            let off = addr % regs::PAGE;
            if addr >= regs::CH_PAGE0 && off == regs::DOORBELL {
                self.cov.refused_doorbells += 1;
            }
            if addr >= regs::CH_PAGE0 && off == regs::PKT_SEND {
                self.cov.refused_sends += 1;
            }
        }
        if addr == regs::ERRQ_POP && prot && r == AxilResp::Okay {
            self.cov.errq_pops += 1;
        }
        self.axil.wrote(addr, r);
        Ok(())
    }

    /// AXI4-Lite B and R responses against the golden model's; coverage
    /// of what was read; in the burst mode, software's next step.
    fn check_axil_responses(&mut self, p: &Ports, rep: Report) -> Result<(), Mismatch> {
        if let Some((_, r)) = self.axil.response_b(&p.ni, rep)? {
            self.cov.axil_writes += 1;
            self.cov.slverr += (r == AxilResp::SlvErr) as u64;
        }
        if let Some((addr, v, r)) = self.axil.response_r(&p.ni, rep)? {
            self.cov.axil_reads += 1;
            self.cov.slverr += (r == AxilResp::SlvErr) as u64;
            if (regs::ERRQ_W0..regs::ERRQ_POP).contains(&addr) && v != 0 {
                self.cov.errq_words += 1;
            }
            if addr == regs::CQ_PAGE + regs::CQ_W0 && v != 0 {
                self.cov.cq_status[(v >> 4 & 3) as usize] += 1;
            }
            if (regs::MB_PAGE + regs::MB_DATA..regs::MB_PAGE + 0x200).contains(&addr) && v != 0 {
                self.cov.mb_words += 1;
            }
            if addr == regs::STATUS && r == AxilResp::Okay && v & regs::ST_STICKY != 0 {
                self.cov.status_sticky += 1;
            }
            // A trace entry compared: counted by event code.
            if addr == trace::TRACE_HI && r == AxilResp::Okay {
                let code = trace::CODE.get((v as u128) << 32) as usize;
                self.cov.trace_events[code] += 1;
            }
            self.burst_read(addr, v);
        }
        Ok(())
    }

    /// The AXI4 master's reads: AR checks (ARUSER the PDID of the packet
    /// being read), R beats.
    fn check_mem_reads(&mut self, p: &Ports, rep: Report) -> Result<(), Mismatch> {
        let lim = 1u64 << self.params.ni.addr_bits;
        // The allreduce copy reads with its PDID (it runs alone on AXI4).
        // A collective's step starts on AXI4 once the transmit reads of
        // the packets picked before it are done: while one is due, a read
        // has its PDID or the last picked packet's.
        let pdid = match self.ar_copy {
            Some((q, _)) if !self.ar_step || p.ni.m_aruser.get() == q as u64 => q,
            _ => self.tx.pdid(),
        };
        if let Some(split) = self
            .mem_r
            .check(&p.ni, rep, self.cycle_in_phase, lim, pdid)?
        {
            self.cov.bursts += 1;
            self.cov.split_reads += split as u64;
        }
        Ok(())
    }

    /// Flits out: each on `vc` (lane 0) or `resp_vc` (lane 1) with a credit
    /// of its VC, the next of the oldest packet picked for its VC; at a
    /// tail the packet has left. Coverage of credit stalls (`busy`: the
    /// engine is sending).
    fn check_flits(&mut self, p: &Ports, rep: Report, busy: bool) -> Result<(), Mismatch> {
        if let Some(l) = self.credit_now {
            self.held[l] -= 1;
        }
        let nb = self.params.buffer_flits;
        if p.ni.out_valid.get() == 1 {
            let v = p.ni.out_vc.get();
            let lane = (v == self.params.resp_vc as u64) as usize;
            if (lane == 1 || v == self.params.vc as u64) && self.held[lane] >= nb {
                return rep.bad(
                    &format!("out_valid (VC {v})"),
                    "0 (no credit)".into(),
                    "1".into(),
                );
            }
            let left = self.tx.flit(&p.ni, rep)?;
            self.held[lane] += 1;
            self.cov.flits += 1;
            if let Some(words) = left {
                self.message_left(&words);
                self.golden.packet_left(&Packet { words });
            }
        } else if busy && self.held[0] >= nb {
            self.cov.credit_stalls += 1;
        }
        self.cov.resp_credit_out += (self.held[1] >= nb) as u64;
        Ok(())
    }

    /// A packet's tail has left: if it is a message, the receive agent may
    /// acknowledge it from now on (no receiver answers a packet before its
    /// tail).
    fn message_left(&mut self, words: &[u128]) {
        let last = words[words.len() - 1];
        if let (Ok(h), Ok(f)) = (Header::from_bits(words[0]), Footer::from_bits(last)) {
            if h.ptype() == PacketType::Mailbox {
                let key = (h.dest(), h.pdid(), f.txid());
                self.rx.outstanding.push(key);
                if let Some(i) = self.rx.sending_msgs.iter().position(|&k| k == key) {
                    self.rx.sending_msgs.remove(i);
                }
                self.golden_dirty = true;
            }
        }
    }

    /// Liveness: while the engine is busy or the golden model holds a
    /// packet, a flit must leave within 5000 cycles.
    fn check_liveness(&mut self, p: &Ports, rep: Report, busy: bool) -> Result<(), Mismatch> {
        if busy || self.golden.has_packet() {
            self.idle_run += 1;
            if p.ni.out_valid.get() == 1 {
                self.idle_run = 0;
            }
            if self.idle_run > 5000 {
                return rep.bad(
                    "out_valid",
                    "a flit within 5000 cycles".into(),
                    "none".into(),
                );
            }
        } else {
            self.idle_run = 0;
        }
        Ok(())
    }
}
