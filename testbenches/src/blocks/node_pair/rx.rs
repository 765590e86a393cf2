//! The receive side of a node of the `node-pair` bench: every packet the
//! RTL delivers must be the head of its flow in the class of its VC; its
//! decision (`rx_commit`, `rx_busy`) against the golden model's; the golden
//! memory writes on AXI4, landing at their B (latency figures).

use super::coverage::record;
use super::node::NodePorts;
use super::NodePairBench;
use crate::blocks::ni::agents::Report;
use crate::cosim::Mismatch;
use exanet_sim::ni::errors::ErrorEntry;
use exanet_sim::ni::{regs, Packet, RxOutcome};
use exanet_sim::packet::footer::Footer;
use exanet_sim::packet::header::{Header, PacketType};

/// A mismatch: `what` (`rx_commit` or `rx_busy`) with no packet delivered
/// on a VC of `class`.
fn none_delivered<T>(rep: Report, what: &str, class: usize) -> Result<T, Mismatch> {
    rep.bad(
        &format!("{what} (rx_class {class})"),
        format!("0 (no class-{class} packet delivered)"),
        "1".into(),
    )
}

impl NodePairBench {
    /// The receive side of node `i` this cycle: a flit delivered (3.), the
    /// decision, the AXI4 writes and their B.
    pub(super) fn check_rx(
        &mut self,
        i: usize,
        p: &NodePorts,
        rep: Report,
    ) -> Result<(), Mismatch> {
        if p.rx_valid.get() == 1 {
            self.rx_flit(i, p, rep)?;
        }
        self.check_rx_decision(i, p, rep)?;
        self.check_rx_writes(i, p, rep)
    }

    /// A flit delivered to node `i`: `rx_head` on the first flit only,
    /// every flit on its head's VC, of one of the two classes; at the tail
    /// the packet is checked against its flow.
    fn rx_flit(&mut self, i: usize, p: &NodePorts, rep: Report) -> Result<(), Mismatch> {
        let vcs = self.params.ni.vcs_per_class as u64;
        self.last_progress = rep.cycle;
        let node = &mut self.nodes[i];
        node.rx_words.push(p.rx_data.get_u128());
        let k = node.rx_words.len();
        if (p.rx_head.get() == 1) != (k == 1) {
            return rep.bad(
                "rx_head",
                format!("{}", k == 1),
                format!("{}", p.rx_head.get()),
            );
        }
        // Every flit of a packet on its head's VC, of one of the two
        // classes.
        let v = p.rx_vc.get();
        let head_vc = *node.rx_vc.get_or_insert(v);
        if v != head_vc || v >= 2 * vcs {
            return rep.bad(
                &format!("rx_vc (flit {} of a packet)", k - 1),
                format!("{head_vc}, below {}", 2 * vcs),
                format!("{v}"),
            );
        }
        if p.rx_tail.get() == 1 {
            let class = (head_vc / vcs) as usize;
            node.rx_vc = None;
            let words = std::mem::take(&mut node.rx_words);
            self.rx_delivered(i, class, words, rep)?;
        }
        Ok(())
    }

    /// A packet delivered whole to node `i` on a VC of `class`: from a
    /// known source, the head of that flow's class (bit-exact); it then
    /// awaits its decision.
    fn rx_delivered(
        &mut self,
        i: usize,
        class: usize,
        words: Vec<u128>,
        rep: Report,
    ) -> Result<(), Mismatch> {
        let src = Footer::from_bits(*words.last().expect("tail"))
            .ok()
            .and_then(|f| self.index.get(&f.src().to_bits()).copied());
        let Some(s) = src else {
            return rep.bad(
                "rx_data (footer)",
                "a known source".into(),
                format!("0x{:032x}", words[words.len() - 1]),
            );
        };
        let flow = self.flows.entry((s, i, class)).or_default();
        match flow.front() {
            Some(e) if *e == words => {
                flow.pop_front();
            }
            e => {
                let show = |w: Option<&Vec<u128>>| match w {
                    None => "no packet in flight".to_string(),
                    Some(w) => format!("{} flits, header 0x{:032x}", w.len(), w[0]),
                };
                return rep.bad(
                    &format!("rx_data (packet from n{s}, class {class})"),
                    show(e),
                    show(Some(&words)),
                );
            }
        }
        self.cov.delivered += 1;
        self.nodes[i].arrived[class].push_back(Packet { words });
        Ok(())
    }

    /// Node `i`'s decision this cycle, for the class `rx_class` of the VC
    /// the packet arrived on (each class's packets are decided in arrival
    /// order): committed or found Busy.
    fn check_rx_decision(&mut self, i: usize, p: &NodePorts, rep: Report) -> Result<(), Mismatch> {
        // The class of the packet decided (or found Busy): of the VC it
        // arrived on; each class's packets are decided in arrival order.
        let class = p.ni.rx_class.get() as usize;
        if p.ni.rx_commit.get() == 1 {
            self.rx_commit(i, class, rep)
        } else if p.ni.rx_busy.get() == 1 {
            self.rx_busy(i, class, rep)
        } else {
            Ok(())
        }
    }

    /// `rx_commit`: golden `i` receives the oldest packet delivered on a VC
    /// of `class` (Accepted or Refused; Rejected, for its reason, only a
    /// packet software sent to be rejected); its memory writes are then
    /// due on AXI4.
    fn rx_commit(&mut self, i: usize, class: usize, rep: Report) -> Result<(), Mismatch> {
        self.last_progress = rep.cycle;
        let node = &mut self.nodes[i];
        let Some(pkt) = node.arrived[class].pop_front() else {
            return none_delivered(rep, "rx_commit", class);
        };
        if class == 1 && !node.arrived[0].is_empty() {
            self.cov.class1_first += 1;
        }
        let errq_before = node.golden.axil_read_priv(regs::ERRQ_COUNT);
        let outcome = node.golden.receive_packet_on(&pkt, class);
        node.golden_dirty = true;
        // A rejection that found the error queue full is counted, its
        // entry lost (STATUS.ERRQ_OVERFLOW).
        let errq_lost = node.golden.axil_read_priv(regs::ERRQ_COUNT) == errq_before;
        let h = Header::from_bits(pkt.header_word()).expect("delivered intact");
        let mut fig_t = self.count_outcome(i, &pkt, &h, (outcome, errq_lost), rep)?;
        let node = &mut self.nodes[i];
        let mut writes = node.golden.take_writes();
        if h.ptype() == PacketType::AllreduceFragment {
            // Accepted: its write to scratch first (through the receive
            // write burst, its B posting nothing), then the writes of the
            // steps it made ready (combined or stored at once).
            if outcome == RxOutcome::Accepted && !writes.is_empty() {
                let steps = writes.split_off(1);
                self.cov.ar_frags_accepted += 1;
                self.cov.ar_scratch_bursts += node.wr.expect_fragment(writes, h.pdid()) as u64;
                let n = node.wr.expect_engine(steps, self.pdid);
                self.cov.ar_engine_bursts += n as u64;
            }
            return Ok(());
        }
        for _ in &writes {
            node.landing.push_back(fig_t.take());
        }
        node.wr.expect(writes, h.pdid());
        Ok(())
    }

    /// The golden outcome of a packet committed at node `i`, counted; a
    /// message's latency is measured now (readable from the next cycle).
    /// Returns, for the last packet of a measured RDMA write, its doorbell
    /// cycle and whether isolated (its write's B ends the measurement).
    fn count_outcome(
        &mut self,
        i: usize,
        pkt: &Packet,
        h: &Header,
        (outcome, errq_lost): (RxOutcome, bool),
        rep: Report,
    ) -> Result<Option<(u64, bool)>, Mismatch> {
        let mut fig_t = None;
        let f = Footer::from_bits(pkt.footer_word()).expect("delivered intact");
        match outcome {
            RxOutcome::Accepted => {
                self.cov.accepted += 1;
                // A message is readable from the next cycle; a write's
                // completion from the cycle after its B (see below).
                let t1 = rep.cycle + 1;
                match h.ptype() {
                    PacketType::RdmaWrite if f.last() => {
                        fig_t = self.t_door.remove(&(i, f.src().to_bits(), f.txid()));
                        if fig_t.is_some_and(|(_, iso)| iso) {
                            self.plan_commit(rep.cycle);
                        }
                    }
                    PacketType::Mailbox => {
                        let id = pkt.words[1] as u32;
                        if let Some((t0, iso)) = self.t_send.remove(&id) {
                            record(&mut self.fig.pkt_load, t1 - t0);
                            if iso {
                                self.fig.pkt_16b.push(t1 - t0);
                            }
                        }
                    }
                    _ => {}
                }
            }
            // A read request finding the read queue full (answered
            // Nack READ_BUSY: the requester posts it again).
            RxOutcome::Refused if h.ptype() == PacketType::RdmaReadReq => {
                self.cov.refused_reads += 1
            }
            // A message finding the mailbox full (MailboxNack: resent).
            RxOutcome::Refused => self.cov.refused_full += 1,
            // Rejected: only a packet software sent to be rejected, for
            // its reason; its error-queue entry is due.
            RxOutcome::Rejected(why) => {
                let key = (i, f.src().to_bits(), f.txid());
                match self.exp_reject.remove(&key) {
                    Some(r) if r == why => {}
                    r => return rep.bad(
                        "rx_commit",
                        match r {
                            Some(r) => format!("golden outcome Rejected({r:?})"),
                            None => {
                                "golden outcome Accepted or Refused (a packet sent to be accepted)"
                                    .into()
                            }
                        },
                        format!("golden outcome {outcome:?}"),
                    ),
                }
                self.cov.rejected += 1;
                if errq_lost {
                    self.cov.errq_lost += 1;
                } else {
                    let e = ErrorEntry {
                        reason: why,
                        header: Some(*h),
                        footer: Some(f),
                    };
                    self.nodes[i].errq_due.push_back(e.words());
                }
            }
            RxOutcome::Busy => {
                return rep.bad(
                    "rx_commit",
                    "golden outcome Accepted, Refused or Rejected".into(),
                    "golden outcome Busy".into(),
                )
            }
        }
        Ok(fig_t)
    }

    /// `rx_busy`: golden `i` must be Busy for the oldest packet delivered
    /// on a VC of `class` (asked again whenever its state changed since,
    /// or another class was Busy); Busy cycles end a completion-queue hold
    /// early.
    fn rx_busy(&mut self, i: usize, class: usize, rep: Report) -> Result<(), Mismatch> {
        self.cov.busy_cycles += 1;
        let node = &mut self.nodes[i];
        let Some(pkt) = node.arrived[class].front() else {
            return none_delivered(rep, "rx_busy", class);
        };
        if node.golden_dirty || node.busy_checked != Some(class) {
            node.golden_dirty = false;
            node.busy_checked = Some(class);
            self.cov.busy_checks += 1;
            let o = node.golden.receive_packet_on(pkt, class);
            if o != RxOutcome::Busy {
                return rep.bad(
                    &format!("rx_busy (rx_class {class})"),
                    format!("0 (golden outcome {o:?})"),
                    "1".into(),
                );
            }
        }
        if let Some((n, _, busy)) = &mut self.hold {
            *busy += (*n == i) as u64;
        }
        Ok(())
    }

    /// Node `i`'s AXI4 write slave; a B: the golden write lands (its
    /// completion and notify response are posted now, visible from the
    /// next cycle), ending a measured write's latency.
    fn check_rx_writes(&mut self, i: usize, p: &NodePorts, rep: Report) -> Result<(), Mismatch> {
        let node = &mut self.nodes[i];
        let ev = node.wr.check(&p.ni, rep, rep.cycle, &mut node.mem)?;
        if ev.written.is_some() {
            self.cov.axi_writes += 1;
            // Progress for the watchdog: a large collective's combining
            // step writes for a long while with no flit and no decision.
            self.last_progress = rep.cycle;
        }
        if ev.engine_landed {
            self.ar_measure_b(i, rep.cycle);
        }
        let node = &mut self.nodes[i];
        if ev.landed {
            if let Err(e) = node.golden.write_landed() {
                return rep.bad("m_bvalid && m_bready", format!("no B ({e})"), "B".into());
            }
            node.golden_dirty = true;
            if let Some(Some((t0, iso))) = node.landing.pop_front() {
                let d = rep.cycle + 1 - t0;
                record(&mut self.fig.write_load, d);
                if iso {
                    self.fig.write_64b.push(d);
                    self.plan_landed(rep.cycle);
                }
            }
        }
        Ok(())
    }
}
