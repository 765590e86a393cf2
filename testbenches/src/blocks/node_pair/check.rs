//! The checks of one cycle of the `node-pair` bench (see the module doc of
//! [`super`]): per node, phase by phase in the order of the golden calls
//! (read accepted, picks, delivery and decision, write landed, write
//! accepted, responses, memory reads, flits out); then the end of a drain
//! and the watchdog. The first failure stops the run.

use super::node::{Meta, NodePorts, ReadDesc};
use super::{Fault, NodePairBench, Phase, DRAIN_MAX, WATCHDOG};
use crate::blocks::ni::agents::{check_picks, Report};
use crate::cosim::Mismatch;
use exanet_sim::ni::{regs, AxilResp, CqEntry, Packet, Prot};
use exanet_sim::packet::header::{Header, PacketType};
use exanet_sim::rng::Rng;

/// An AXI4-Lite write that moves the system on when accepted: a doorbell,
/// a packetizer send, or a completion / mailbox / error-queue pop.
fn moves(addr: u32) -> bool {
    let in_channel = addr >= regs::CH_PAGE0;
    let off = addr % regs::PAGE;
    (in_channel && (off == regs::DOORBELL || off == regs::PKT_SEND))
        || addr == regs::CQ_PAGE + regs::CQ_POP
        || addr == regs::MB_PAGE + regs::MB_POP
        || addr == regs::ERRQ_POP
}

/// The routers' and ejection adapters' error counters must stay 0, but
/// for the packets software sent to an absent endpoint of this node's
/// router (`drops_due`): its `dropped_packets` (summed over the ports)
/// never exceed those, and equal them once drained
/// ([`NodePairBench::drained`]).
fn check_error_counters(p: &NodePorts, drops_due: u64, rep: Report) -> Result<(), Mismatch> {
    for (name, q) in &p.errors {
        if q.get() != 0 {
            return rep.bad(name, "0".into(), format!("{}", q.get()));
        }
    }
    let dropped = p.dropped();
    if dropped > drops_due {
        return rep.bad(
            "dropped_packets (all ports)",
            format!("at most {drops_due} (packets sent to an absent endpoint here)"),
            format!("{dropped}"),
        );
    }
    Ok(())
}

impl NodePairBench {
    /// The checks of one cycle (see the module doc): every node's; at the
    /// end of a drain the memories; the watchdog.
    pub(super) fn check_cycle(&mut self, cycle: u64) -> Option<Mismatch> {
        if self.reset_now {
            self.last_progress = cycle;
            self.trace_t0 = cycle + 1;
            return None;
        }
        for i in 0..self.nodes.len() {
            if let Err(m) = self.check_node(i, cycle) {
                return Some(m);
            }
        }
        if self.phase == Phase::Drain {
            if let Some(m) = self.check_drain(cycle) {
                return Some(m);
            }
        }
        self.check_watchdog(cycle)
    }

    /// Checks of node `i` at its clock edge `cycle` (none in reset).
    pub(crate) fn check_one_node(&mut self, i: usize, cycle: u64) -> Option<Mismatch> {
        if self.reset_now {
            self.trace_t0 = cycle + 1;
            return None;
        }
        self.check_node(i, cycle).err()
    }

    /// The checks of the whole bench at `cycle`, after every node's: the end
    /// of a drain (the memories), the watchdog.
    pub(crate) fn check_global(&mut self, cycle: u64) -> Option<Mismatch> {
        if self.reset_now {
            self.last_progress = cycle;
            return None;
        }
        if self.phase == Phase::Drain {
            if let Some(m) = self.check_drain(cycle) {
                return Some(m);
            }
        }
        self.check_watchdog(cycle)
    }

    /// Checks of node `i` this cycle.
    fn check_node(&mut self, i: usize, cycle: u64) -> Result<(), Mismatch> {
        let prefix = format!("n{i}_");
        let rep = Report {
            cycle,
            prefix: &prefix,
        };
        let p = self.nodes[i].p.clone().expect("bound");
        // The trace time of the golden events (cycles since the reset).
        let t = cycle.saturating_sub(self.trace_t0);
        self.nodes[i].golden.set_cycle(t);
        check_error_counters(&p, self.nodes[i].drops_due, rep)?;
        // 1. A read accepted.
        let node = &mut self.nodes[i];
        let wr_fire = node.axil.accept_read(&p.ni, &mut node.golden, rep)?;
        // 2. Picks: a response (class 1, the response lane), then a request
        // (class 0).
        self.check_tx_picks(i, &p, rep)?;
        // 3. Delivery and commit; the writes landing.
        self.check_rx(i, &p, rep)?;
        // 4. A write accepted.
        if wr_fire {
            self.write_accepted(i, rep)?;
        }
        // 5. AXI4-Lite responses.
        self.check_responses(i, &p, rep)?;
        // 6. AXI4 read: AR checks, R beats.
        self.check_mem_reads(i, &p, rep)?;
        // 7. Flits out.
        self.check_flits(i, &p, rep)?;
        // 8. Time: the golden engine's clock moves one cycle (a collective
        // timing out, or a descriptor it lets start, writes now).
        if self.ar_on() {
            self.nodes[i].golden.advance_time(1);
            self.expect_engine_writes(i);
        }
        Ok(())
    }

    /// The golden engine's memory writes since the last event of node `i`
    /// (a step combined or stored when a fragment was picked, a
    /// DOORBELL's copy or step, a descriptor started): due on AXI4 in this
    /// order, after the writes before them, with the job's PDID (every
    /// communicator's), their B responses posting nothing.
    fn expect_engine_writes(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        let writes = node.golden.take_writes();
        if !writes.is_empty() {
            node.golden_dirty = true;
            self.cov.ar_engine_bursts += node.wr.expect_engine(writes, self.pdid) as u64;
        }
    }

    /// `rsp_pick` and `tx_pick` of node `i` against its golden model; each
    /// packet picked is counted by type, queued on its flow (to a node of
    /// the network) and class, and expected flit by flit on its VC.
    fn check_tx_picks(&mut self, i: usize, p: &NodePorts, rep: Report) -> Result<(), Mismatch> {
        let node = &mut self.nodes[i];
        let picks = check_picks(&p.ni, &mut node.golden, rep)?;
        // The pick of a step's last fragment, its receive closed: the
        // golden engine combined (or stored) the step at once.
        self.expect_engine_writes(i);
        for (class, pk) in [(1, picks.response), (0, picks.request)] {
            let Some(pk) = pk else { continue };
            self.nodes[i].golden_dirty = true;
            let h = Header::from_bits(pk.header_word()).expect("golden header");
            let k = match h.ptype() {
                PacketType::RdmaWrite => 0,
                PacketType::Mailbox => 1,
                PacketType::MailboxAck => 2,
                PacketType::MailboxNack => 3,
                PacketType::RdmaReadReq => 5,
                PacketType::RdmaReadResp => 6,
                PacketType::AllreduceFragment => 7,
                _ => 4,
            };
            match self.cov.tx_packets.get_mut(k) {
                Some(c) => *c += 1,
                None => self.cov.ar_fragments += 1,
            }
            if let Some(d) = self.absent_endpoint_of(h.dest()) {
                // For an endpoint no node answers for: node `d`'s router
                // (of those coordinates) drops it (no flow, no decision).
                self.nodes[d].drops_due += 1;
                self.cov.absent_packets += 1;
                self.nodes[i].tx.picked(class, pk, h.pdid());
                continue;
            }
            let Some(&d) = self.index.get(&h.dest().to_bits()) else {
                return rep.bad(
                    ["tx_pick", "rsp_pick"][class],
                    "a packet to a node of the network".into(),
                    format!("destination {:?}", h.dest()),
                );
            };
            self.flows
                .entry((i, d, class))
                .or_default()
                .push_back(pk.words.clone());
            self.nodes[i].tx.picked(class, pk, h.pdid());
        }
        Ok(())
    }

    /// The AXI4-Lite write node `i` accepted this cycle: its golden model
    /// performs it (with the fault's window PDID on node 1); a doorbell or
    /// send refused is counted, one accepted sets up what must follow.
    fn write_accepted(&mut self, i: usize, rep: Report) -> Result<(), Mismatch> {
        let fault = self.fault;
        let node = &mut self.nodes[i];
        let (addr, data, prot, meta) = node.axil.take_write(rep)?;
        let pr = if prot { Prot::Privileged } else { Prot::User };
        let gdata = if fault == Fault::GoldenWindowPdid
            && i == 1
            && addr == regs::win_reg(0, regs::WIN_CTRL)
        {
            data ^ 1
        } else {
            data
        };
        let r = node.golden.axil_write_prot(addr, gdata, pr);
        node.golden_dirty = true;
        node.axil.wrote(addr, r);
        // An allreduce DOORBELL: a single rank's copy, or a step already
        // ready, written at once by the golden engine.
        self.expect_engine_writes(i);
        if r != AxilResp::Okay && !matches!(meta, Meta::None) {
            self.cov.refused += 1;
        }
        self.expect_transfer(i, meta, r, rep.cycle);
        Ok(())
    }

    /// What an accepted doorbell or send of node `i` (answered `r`) makes
    /// due: the completions and messages software must read (each once),
    /// the read's completion awaited, the latency start; a refused re-post
    /// of a read is posted again later.
    fn expect_transfer(&mut self, i: usize, meta: Meta, r: AxilResp, cycle: u64) {
        let me = self.nodes[i].me.to_bits();
        let pdid = self.pdid as u32;
        match meta {
            Meta::Doorbell {
                dest,
                txid,
                notify,
                len,
            } if r == AxilResp::Okay => {
                if let Some(st) = self.stall.as_mut().filter(|st| st.s == i) {
                    st.sent += 1;
                }
                self.cov.rdma_writes += 1;
                self.cov.rdma_bytes += len;
                let pm = self.params.ni.ni.max_payload_bytes as u64;
                self.cov.multi_packet += (len > pm) as u64;
                let peer = self.nodes[dest].me.to_bits();
                self.expect_completion((dest, 1 | (txid as u32) << 16, me, pdid));
                if notify {
                    self.expect_completion((i, 3 | (txid as u32) << 16, peer, pdid));
                }
                self.t_door
                    .insert((dest, me, txid), (cycle, self.phase == Phase::Measure));
                self.plan_doorbell(len, cycle);
            }
            Meta::Read { desc, repost } if r == AxilResp::Okay => {
                let ReadDesc {
                    server,
                    txid,
                    notify,
                    len,
                    ..
                } = desc;
                if repost {
                    self.cov.read_reposts += 1;
                } else {
                    self.cov.rdma_reads += 1;
                    self.cov.read_bytes += len;
                    let server_bits = self.nodes[server].me.to_bits();
                    self.expect_completion((i, 2 | (txid as u32) << 16, server_bits, pdid));
                    if notify {
                        self.expect_completion((server, 3 | (txid as u32) << 16, me, pdid));
                    }
                }
                self.nodes[i].reads.insert(txid, desc);
            }
            // A refused read posted again found the queue full: again
            // later (its completions are still expected).
            Meta::Read { desc, repost: true } => self.nodes[i].repost.push_back(desc),
            Meta::Allreduce { post } => self.ar_doorbell_answered(i, post, r == AxilResp::Okay),
            Meta::Absent if r == AxilResp::Okay => self.cov.absent_writes += 1,
            // An access `dest` must reject: its reason there; a read's
            // Nack posts READ_DONE / REMOTE_DENIED with that reason here.
            Meta::Reject {
                dest,
                txid,
                reason,
                read,
            } if r == AxilResp::Okay => {
                self.exp_reject.insert((dest, me, txid), reason);
                if let Some((_, _, k)) = self.burst.as_mut().filter(|b| b.0 == i) {
                    *k = k.saturating_sub(1);
                }
                if read {
                    self.cov.reject_reads += 1;
                    let server = self.nodes[dest].me;
                    let w = CqEntry::denied(txid, server, self.pdid, reason).words();
                    self.expect_completion((i, w[0], w[1], w[2]));
                } else {
                    self.cov.reject_writes += 1;
                }
            }
            Meta::Send { dest, id, bytes } if r == AxilResp::Okay => {
                self.cov.sends += 1;
                self.exp_mb.insert((dest, id), (me, bytes));
                self.t_send
                    .insert(id, (cycle, self.phase == Phase::Measure));
            }
            _ => {}
        }
    }

    /// One more completion `(node, W0, W1, W2)` software must read.
    pub(super) fn expect_completion(&mut self, key: (usize, u32, u32, u32)) {
        *self.exp_cq.entry(key).or_default() += 1;
    }

    /// AXI4-Lite B and R responses of node `i` against its golden model's;
    /// an accepted write that moves the system on is progress; a read
    /// returns what software consumes.
    fn check_responses(&mut self, i: usize, p: &NodePorts, rep: Report) -> Result<(), Mismatch> {
        let node = &mut self.nodes[i];
        // Progress for the watchdog: an accepted doorbell, send or pop; not
        // a read, a refused write or a descriptor word (software polls and
        // retries refused doorbells all the time, also in a deadlock).
        if let Some((addr, AxilResp::Okay)) = node.axil.response_b(&p.ni, rep)? {
            if moves(addr) {
                self.last_progress = rep.cycle;
            }
        }
        if let Some((addr, v, _)) = node.axil.response_r(&p.ni, rep)? {
            if let Some(m) = self.consume(i, addr, v, rep.cycle) {
                return Err(m);
            }
        }
        Ok(())
    }

    /// Node `i`'s AXI4 reads: AR checks (ARUSER the PDID of the packet
    /// being read), R beats.
    fn check_mem_reads(&mut self, i: usize, p: &NodePorts, rep: Report) -> Result<(), Mismatch> {
        let node = &mut self.nodes[i];
        let lim = 1u64 << self.params.ni.ni.addr_bits;
        // The PDID of the class-0 packet picked last (its payload is being
        // read), else the job's: the engine's reads for its steps carry
        // the communicator's, which is the job's.
        let pdid = match node.tx.pdid() {
            0 => self.pdid,
            q => q,
        };
        node.rd.check(&p.ni, rep, rep.cycle, lim, pdid)?;
        Ok(())
    }

    /// A flit out of node `i`: the next of the oldest packet picked for its
    /// VC; at its tail the packet has left (a message may be acknowledged
    /// now).
    fn check_flits(&mut self, i: usize, p: &NodePorts, rep: Report) -> Result<(), Mismatch> {
        if p.ni.out_valid.get() == 1 {
            let node = &mut self.nodes[i];
            self.last_progress = rep.cycle;
            self.cov.flits += 1;
            if let Some(words) = node.tx.flit(&p.ni, rep)? {
                // Its tail has left: a message may be acknowledged now.
                node.golden.packet_left(&Packet { words });
                node.golden_dirty = true;
            }
        }
        Ok(())
    }

    /// Every node idle, nothing expected, no flow holding a packet. On
    /// allreduce points (six or eight nodes, whose polling software is
    /// rarely idle on all of them in one cycle) software may be polling;
    /// the other points keep the strict rule, so their seeds replay the
    /// runs they always did.
    fn drained(&self) -> bool {
        let ar = self.ar_on();
        self.exp_cq.is_empty()
            && self.exp_mb.is_empty()
            && self.exp_reject.is_empty()
            && self.nodes.iter().all(|n| n.errq_due.is_empty())
            && self.flows.values().all(|q| q.is_empty())
            && self
                .nodes
                .iter()
                .all(|n| n.p.as_ref().is_none_or(|p| p.dropped() == n.drops_due))
            && self
                .nodes
                .iter()
                .all(|n| if ar { n.quiet() } else { n.idle() })
    }

    /// The drain: once drained, every memory equals its golden model's and
    /// traffic starts again; it must not take longer than [`DRAIN_MAX`].
    fn check_drain(&mut self, cycle: u64) -> Option<Mismatch> {
        if self.drained() {
            if let Some(m) = self.compare_memories(cycle) {
                return Some(m);
            }
            self.cov.drains += 1;
            self.cov.drains_after_reset += (self.cov.mid_resets > 0) as u64;
            let mut rng = Rng::new(cycle ^ 0xD2A1);
            self.start_traffic(&mut rng);
        } else if cycle > self.phase_start + DRAIN_MAX {
            return Some(Mismatch {
                cycle,
                port: "drain".into(),
                expected: format!("every node idle within {DRAIN_MAX} cycles"),
                actual: format!(
                    "{} completions and {} messages outstanding; packets dropped / sent to an absent endpoint per node {:?}",
                    self.exp_cq.values().sum::<u32>(),
                    self.exp_mb.len(),
                    self.nodes
                        .iter()
                        .map(|n| (n.p.as_ref().map_or(0, |p| p.dropped()), n.drops_due))
                        .collect::<Vec<_>>()
                ),
            });
        }
        None
    }

    /// The end of a drain: every memory equals its golden model's.
    fn compare_memories(&mut self, cycle: u64) -> Option<Mismatch> {
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(a) = n.mem.first_difference(n.golden.mem()) {
                return Some(Mismatch::hex(
                    cycle,
                    &format!("n{i} memory byte 0x{a:x} (after drain)"),
                    n.golden.mem().read(a, 1)[0],
                    n.mem.read(a, 1)[0],
                ));
            }
        }
        None
    }

    /// The watchdog: with work pending, something must move (a flit, a
    /// decision, an accepted write that moves the system on, a memory
    /// write burst) within
    /// [`WATCHDOG`] cycles.
    fn check_watchdog(&mut self, cycle: u64) -> Option<Mismatch> {
        let pending = !self.drained() || self.nodes.iter().any(|n| !n.sw.is_empty());
        if !pending {
            self.last_progress = cycle;
        } else if cycle > self.last_progress + WATCHDOG {
            return Some(Mismatch {
                cycle,
                port: "watchdog".into(),
                expected: format!(
                    "a flit, a decision, an accepted AXI4-Lite write or a memory write within {WATCHDOG} cycles"
                ),
                actual: format!(
                    "none ({} completions, {} messages outstanding; flows {:?})",
                    self.exp_cq.values().sum::<u32>(),
                    self.exp_mb.len(),
                    self.flows
                        .iter()
                        .map(|(k, q)| (*k, q.len()))
                        .collect::<Vec<_>>()
                ),
            });
        }
        None
    }
}
