//! The software of the `node-pair` bench's nodes: the privileged set-up,
//! RDMA writes and reads, packetizer sends, accesses to be rejected,
//! polls, by phase (the latency measurement, traffic, drain); and the
//! phase changes: receiver stalls, traffic phases, completion-queue holds,
//! the reset pulse in the middle of traffic.

use super::node::{Meta, ReadDesc, NO_WINDOW, PDID_WINDOW, PDID_WINDOW_BASE};
use super::{NodePairBench, Phase, GUARD, LAND, REGION, SOURCES};
use anyhow::Result;
use exanet_sim::ni::{regs, trace, RejectReason};
use exanet_sim::packet::coords::Coords;
use exanet_sim::rng::Rng;

/// Receiver-stall episodes at the start of traffic (two nodes or more, no
/// allreduce): node 0 stalled, then node 1 ([`Stall`]).
pub(super) const STALLS: usize = 2;

/// Cycles of a receiver-stall episode (then a drain).
const STALL_CYCLES: u64 = 2_500;

/// A receiver-stall episode: node `r`'s software leaves its completion
/// queue alone for [`STALL_CYCLES`] (not ended by Busy, unlike the hold
/// of a traffic phase), while node `s` sends it one-packet RDMA writes of
/// 192 and 256 bytes in turn (14 and 18 flits, one channel, so in that
/// order on the wire) and `r` sends `s` 16-byte writes with notify. Once
/// `r`'s queue is full both of its receive classes are Busy: the writes
/// of `s` (class 0) fill every buffer on their path to `r` (14 + 18 = 32
/// flits of a VC buffer, all it holds, as a VC is started only with 18
/// credits free), and the NOTIFY responses of `s` (class 1) queue in the
/// class-1 buffers up to `r`'s ejection port (BENCHMARKS.md, session 42).
#[derive(Clone, Copy, Debug)]
pub(super) struct Stall {
    r: usize,
    pub(super) s: usize,
    end: u64,
    /// Writes of `s` accepted (doorbell) in this episode: the next one is
    /// 192 bytes when even, 256 when odd.
    pub(super) sent: u64,
}

impl NodePairBench {
    /// Privileged set-up of every node: after a reset pulse in the middle
    /// of a run, first the read-back of the registers it must have cleared
    /// ([`super::node::Node::reset_readback`]); windows 0 (landing) and 1
    /// (the first source region), the others filled but disabled, channel
    /// PDIDs, mailbox open, TX_ENABLE.
    pub(super) fn setup(&mut self, rng: &mut Rng) {
        self.pdid = 1 + rng.below(0xFFFE) as u16;
        let pdid = self.pdid as u32;
        let channels = self.params.ni.ni.channels;
        let land_size = self.land_size();
        let readback = self.cov.mid_resets > 0;
        for node in &mut self.nodes {
            if readback {
                self.cov.reset_readbacks += node.reset_readback(&self.params.ni.ni);
            }
            node.fill_windows(&self.params.ni.ni, pdid);
            let w = |f| regs::win_reg(0, f);
            node.write(w(regs::WIN_BASE_LO), LAND as u32, true, Meta::None);
            node.write(w(regs::WIN_BASE_HI), (LAND >> 32) as u32, true, Meta::None);
            node.write(w(regs::WIN_SIZE_LO), land_size as u32, true, Meta::None);
            node.write(w(regs::WIN_SIZE_HI), 0, true, Meta::None);
            node.write(w(regs::WIN_CTRL), pdid | 1 << 31, true, Meta::None);
            // Window 1: the first source region, which RDMA reads from
            // other nodes read.
            let w1 = |f| regs::win_reg(1, f);
            node.write(w1(regs::WIN_BASE_LO), SOURCES[0] as u32, true, Meta::None);
            node.write(
                w1(regs::WIN_BASE_HI),
                (SOURCES[0] >> 32) as u32,
                true,
                Meta::None,
            );
            node.write(w1(regs::WIN_SIZE_LO), REGION as u32, true, Meta::None);
            node.write(w1(regs::WIN_SIZE_HI), 0, true, Meta::None);
            node.write(w1(regs::WIN_CTRL), pdid | 1 << 31, true, Meta::None);
            for c in 0..channels {
                node.write(regs::CH_PDID_BASE + 4 * c as u32, pdid, true, Meta::None);
            }
            node.write(regs::MBOX_CTRL, 1 << 16, true, Meta::None);
            // The interrupt of a waiting completion or message, as a driver
            // that sleeps on it would set it.
            let irq = regs::ST_CQ_NONEMPTY | regs::ST_MB_NONEMPTY;
            node.write(regs::IRQ_ENABLE, irq, true, Meta::None);
            node.write(regs::CONTROL, 1, true, Meta::None);
            if self.params.ni.ni.trace_depth > 0 {
                node.write(trace::TRACE_CTRL, 1, true, Meta::None);
            }
        }
        self.ar_setup(rng);
    }

    /// Queue an RDMA write from node `n` to `dest`.
    fn rdma_write(&mut self, rng: &mut Rng, n: usize, dest: usize, len: u64, align: Option<u64>) {
        let c = rng.below(self.params.ni.ni.channels as u64) as usize;
        let src = SOURCES[rng.below(SOURCES.len() as u64) as usize] + rng.below(REGION - len + 1);
        let max_off = REGION - GUARD - len;
        let off = match align {
            Some(a) => rng.below(max_off / a + 1) * a,
            None => rng.below(max_off + 1),
        };
        let dst = LAND + off;
        let notify = align.is_none() && rng.chance(0.5);
        self.doorbell_write(n, c, dest, (src, dst, len), notify);
    }

    /// Stage on node `n`'s channel `c` the RDMA write of `len` bytes from
    /// `src` to `dst` at node `dest` (NOTIFY when `notify`) and ring its
    /// DOORBELL; its answer and completions are expected (`Meta::Doorbell`).
    pub(super) fn doorbell_write(
        &mut self,
        n: usize,
        c: usize,
        dest: usize,
        (src, dst, len): (u64, u64, u64),
        notify: bool,
    ) {
        let to = self.nodes[dest].me;
        let node = &mut self.nodes[n];
        let (page, txid) = node.write_descriptor(c, (src, dst, len), to, notify);
        node.write(
            page + regs::DOORBELL,
            1,
            false,
            Meta::Doorbell {
                dest,
                txid,
                notify,
                len,
            },
        );
    }

    /// An fpga number no router answers for, at random (`local_ports..4`
    /// of the 2-bit field), if any.
    fn absent_fpga(&self, rng: &mut Rng) -> Option<u8> {
        let l = self.params.router.topology.local_ports as u64;
        (l < 4).then(|| (l + rng.below(4 - l)) as u8)
    }

    /// The node whose router drops a packet for `dest`: one with `dest`'s
    /// coordinates and an fpga its router has no local port for.
    pub(super) fn absent_endpoint_of(&self, dest: Coords) -> Option<usize> {
        if (dest.fpga() as usize) < self.params.router.topology.local_ports {
            return None;
        }
        let c = Coords::new(dest.x(), dest.y(), dest.z(), 0).ok()?;
        self.index.get(&c.to_bits()).copied()
    }

    /// Queue an RDMA write from node `n` (1..=64 bytes, one packet, no
    /// notify) to an absent endpoint of node `d`'s coordinates: the NI
    /// sends it like any, `d`'s router drops it (counted there); no
    /// completion anywhere. Nothing if every fpga has a local port.
    fn absent_write(&mut self, rng: &mut Rng, n: usize, d: usize) {
        let Some(fpga) = self.absent_fpga(rng) else {
            return;
        };
        let me = self.nodes[d].me;
        let Ok(dest) = Coords::new(me.x(), me.y(), me.z(), fpga) else {
            return;
        };
        let len = 1 + rng.below(64);
        let c = rng.below(self.params.ni.ni.channels as u64) as usize;
        let src = SOURCES[rng.below(SOURCES.len() as u64) as usize] + rng.below(REGION - len + 1);
        let dst = LAND + rng.below(REGION - GUARD - len + 1);
        let node = &mut self.nodes[n];
        let (page, _) = node.write_descriptor(c, (src, dst, len), dest, false);
        node.write(page + regs::DOORBELL, 1, false, Meta::Absent);
    }

    /// Queue an access of node `n` that `d`'s NI must reject (2 % of
    /// traffic actions): a one-packet RDMA write or an RDMA read of
    /// 1..=min(64, P) bytes inside one aligned P-byte block (P =
    /// `max_payload_bytes`: a write is cut at each P boundary of its
    /// destination), at an address of `d` in the window
    /// the set-up enabled with another PDID (reason `Pdid`) or in no window
    /// (`Window`). Nothing while `d` has as many rejections outstanding as
    /// its error queue holds (an entry lost to an overflow is not
    /// compared).
    ///
    /// The first of these in a run (and then 1 in 10) starts an overflow
    /// burst instead: `n` sends `d` errq_depth + 2 of them in a row, `d`'s
    /// software reads no error-queue entry until every one was decided
    /// (the last two lost, STATUS.ERRQ_OVERFLOW set), then STATUS and a
    /// write clearing that bit.
    fn reject_access(&mut self, rng: &mut Rng, n: usize, d: usize) {
        let ni = &self.params.ni.ni;
        let due = self.exp_reject.keys().filter(|k| k.0 == d).count();
        let in_burst = self.burst.is_some_and(|b| b.0 == n && b.1 == d);
        if !in_burst {
            let quiet = due + self.nodes[d].errq_due.len() == 0;
            if self.burst.is_none() && quiet && (self.cov.errq_bursts == 0 || rng.chance(0.1)) {
                self.burst = Some((n, d, ni.errq_depth + 2));
                self.nodes[d].hold_errq = true;
                self.cov.errq_bursts += 1;
            } else if due + self.nodes[d].errq_due.len() >= ni.errq_depth
                || self.burst.is_some_and(|b| b.1 == d)
            {
                self.nodes[n].poll();
                return;
            }
        }
        let (base, reason) = if ni.windows > PDID_WINDOW && rng.chance(0.5) {
            (PDID_WINDOW_BASE, RejectReason::Pdid)
        } else {
            (NO_WINDOW, RejectReason::Window)
        };
        // Within one aligned max_payload_bytes block: one packet (a write
        // is cut at every P boundary of the destination address).
        let blk = ni.max_payload_bytes as u64;
        let len = 1 + rng.below(blk.min(64));
        let remote = base + blk * rng.below(REGION / blk) + rng.below(blk - len + 1);
        let c = rng.below(ni.channels as u64) as usize;
        let local = LAND + rng.below(REGION - GUARD - len + 1);
        if rng.chance(0.5) {
            let to = self.nodes[d].me;
            let node = &mut self.nodes[n];
            let src = SOURCES[0] + (local - LAND);
            let (page, txid) = node.write_descriptor(c, (src, remote, len), to, false);
            let meta = Meta::Reject {
                dest: d,
                txid,
                reason,
                read: false,
            };
            node.write(page + regs::DOORBELL, 1, false, meta);
        } else {
            let node = &mut self.nodes[n];
            let txid = node.txid_next;
            node.txid_next = if txid == 0x3FFF { 1 } else { txid + 1 };
            let desc = ReadDesc {
                server: d,
                channel: c,
                src: remote,
                dst: local,
                len,
                notify: false,
                txid,
            };
            let meta = Meta::Reject {
                dest: d,
                txid,
                reason,
                read: true,
            };
            self.stage_read(n, &desc, meta);
        }
    }

    /// Queue an RDMA read by node `n` of `len` bytes of `server`'s first
    /// source region into `n`'s landing region.
    fn rdma_read(&mut self, rng: &mut Rng, n: usize, server: usize, len: u64) {
        let channel = rng.below(self.params.ni.ni.channels as u64) as usize;
        let src = SOURCES[0] + rng.below(REGION - len + 1);
        let dst = LAND + rng.below(REGION - GUARD - len + 1);
        let notify = rng.chance(0.5);
        let node = &mut self.nodes[n];
        let txid = node.txid_next;
        node.txid_next = if txid == 0x3FFF { 1 } else { txid + 1 };
        let desc = ReadDesc {
            server,
            channel,
            src,
            dst,
            len,
            notify,
            txid,
        };
        self.post_read(n, desc, false);
    }

    /// Queue the descriptor writes and doorbell of read `d` by node `n`
    /// (`repost`: the server refused it before, its completions are
    /// expected already).
    fn post_read(&mut self, n: usize, d: ReadDesc, repost: bool) {
        self.stage_read(n, &d, Meta::Read { desc: d, repost });
    }

    /// Queue the descriptor writes of read `d` by node `n`, and its
    /// doorbell with `meta`.
    fn stage_read(&mut self, n: usize, d: &ReadDesc, meta: Meta) {
        let server_bits = self.nodes[d.server].me.to_bits();
        let node = &mut self.nodes[n];
        let page = regs::ch_page(d.channel);
        for (off, v) in [
            (regs::DESC_LADDR_LO, d.dst as u32),
            (regs::DESC_LADDR_HI, (d.dst >> 32) as u32),
            (regs::DESC_RADDR_LO, d.src as u32),
            (regs::DESC_RADDR_HI, (d.src >> 32) as u32),
            (regs::DESC_LEN, d.len as u32),
            (regs::DESC_DEST, server_bits),
            (
                regs::DESC_CTRL,
                1 | (d.notify as u32) << 4 | (d.txid as u32) << 16,
            ),
        ] {
            node.write(page + off, v, false, Meta::None);
        }
        node.write(page + regs::DOORBELL, 1, false, meta);
    }

    /// Queue a packetizer send of `len` bytes from node `n` to `dest`.
    fn send(&mut self, rng: &mut Rng, n: usize, dest: usize, len: usize) {
        let c = rng.below(self.params.ni.ni.channels as u64) as usize;
        let page = regs::ch_page(c);
        let dest_bits = self.nodes[dest].me.to_bits();
        let node = &mut self.nodes[n];
        let id = (n as u32 + 1) << 24 | node.msg_next;
        node.msg_next = (node.msg_next + 1) & 0xFF_FFFF;
        let mut bytes = id.to_le_bytes().to_vec();
        while bytes.len() < len.div_ceil(4) * 4 {
            bytes.extend_from_slice(&(rng.next_u64() as u32).to_le_bytes());
        }
        for (i, w) in bytes.chunks(4).enumerate() {
            let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            node.write(page + regs::PKT_DATA + 4 * i as u32, v, false, Meta::None);
        }
        bytes.truncate(len);
        node.write(page + regs::PKT_DEST, dest_bits, false, Meta::None);
        node.write(
            page + regs::PKT_SEND,
            len as u32,
            false,
            Meta::Send { dest, id, bytes },
        );
    }

    /// A node other than `n`, at random.
    fn other(&self, rng: &mut Rng, n: usize) -> usize {
        let k = self.nodes.len() as u64;
        (n + 1 + rng.below(k - 1) as usize) % self.nodes.len()
    }

    /// Software of node `n` has nothing queued: give it work (first a
    /// read its server refused, posted again, then a poll: software keeps
    /// consuming completions while a doorbell is refused, else the
    /// completion queue it leaves full could hold back the very packets
    /// that would free the descriptor queue).
    pub(super) fn generate(&mut self, rng: &mut Rng, n: usize) {
        if matches!(self.phase, Phase::Traffic | Phase::Drain) {
            if let Some(d) = self.nodes[n].repost.pop_front() {
                self.post_read(n, d, true);
                self.nodes[n].poll();
                return;
            }
            // Its part of a collective other members may wait for (or,
            // in traffic, at times a new collective).
            let create = self.ar_on() && self.phase == Phase::Traffic && rng.chance(self.load);
            if self.ar_turn(rng, n, create) {
                self.nodes[n].poll();
                return;
            }
        }
        match self.phase {
            Phase::Setup => {}
            Phase::Measure if self.plan.plan.is_some() => self.generate_plan(n),
            // (The allreduce measurement's software runs once per cycle.)
            Phase::Measure if self.ar_meas.plan.is_some() => {}
            Phase::Measure => {
                // Node 0 alone: one isolated transfer at a time to node 1;
                // node 1 consumes once its completion or message landed.
                let waiting = !self.exp_cq.is_empty() || !self.exp_mb.is_empty();
                if n == 0 && !waiting && self.t_door.is_empty() && self.t_send.is_empty() {
                    if self.samples < 2 * self.latency_samples {
                        if self.samples.is_multiple_of(2) {
                            self.rdma_write(rng, 0, 1, 64, Some(64));
                        } else {
                            self.send(rng, 0, 1, 16);
                        }
                        self.samples += 1;
                    } else {
                        self.start_traffic(rng);
                    }
                } else if n == 1 && waiting && self.t_door.is_empty() && self.t_send.is_empty() {
                    self.nodes[1].poll();
                }
            }
            Phase::Traffic if self.stall.is_some() => self.stall_action(rng, n),
            Phase::Traffic if self.burst.is_some_and(|b| b.0 == n && b.2 > 0) => {
                let d = self.burst.map_or(0, |b| b.1);
                self.reject_access(rng, n, d);
            }
            Phase::Traffic => {
                if !rng.chance(self.load) {
                    return;
                }
                let dest = self.other(rng, n);
                match rng.below(100) {
                    0..=34 => {
                        let len = match rng.below(20) {
                            0..=9 => 1 + rng.below(256),
                            10..=14 => 257 + rng.below(1792),
                            15..=17 => 2049 + rng.below(6144),
                            _ => 8193 + rng.below(8192),
                        };
                        self.rdma_write(rng, n, dest, len, None);
                    }
                    35..=59 => {
                        let m = self.params.ni.ni.mailbox_msg_bytes as u64;
                        let len = 4 + rng.below(m - 3) as usize;
                        self.send(rng, n, dest, len);
                    }
                    70..=71 => self.absent_write(rng, n, dest),
                    72..=73 => self.reject_access(rng, n, dest),
                    60..=69 if self.params.ni.ni.windows > 1 => {
                        let len = match rng.below(4) {
                            0..=1 => 1 + rng.below(256),
                            2 => 257 + rng.below(1792),
                            _ => 2049 + rng.below(6144),
                        };
                        self.rdma_read(rng, n, dest, len);
                    }
                    _ => self.nodes[n].poll(),
                }
            }
            Phase::Drain => self.nodes[n].drain_poll(&self.params.ni.ni),
        }
    }

    /// A traffic phase: length, load; the first of every three ends with a
    /// reset pulse, in the second one node holds its completion queue.
    pub(super) fn start_traffic(&mut self, rng: &mut Rng) {
        if self.stalls_left > 0 && self.nodes.len() >= 2 {
            self.start_stall();
            return;
        }
        self.phase = Phase::Traffic;
        self.phase_start = self.cycle;
        self.phase_len = 2_000 + rng.below(20_000);
        self.phase_len = self.phase_len.min(self.phase_cap);
        self.load = [0.02, 0.1, 0.3, 0.6][rng.below(4) as usize];
        // The first of every three phases ends early with a reset pulse in
        // the middle of its traffic. In the second, one node's software
        // leaves its completion queue alone for a while: the queue fills,
        // and the receive path goes Busy (the network holds its packets).
        let k = self.traffic_phases;
        self.traffic_phases += 1;
        if k % 3 == 1 {
            let n = rng.below(self.nodes.len() as u64) as usize;
            self.nodes[n].hold_cq = true;
            self.hold = Some((n, self.cycle + 8_000, 0));
            self.load = self.load.max(0.3);
            self.phase_len = self.phase_len.min(10_000);
            self.cov.cq_holds += 1;
        }
        self.reset_at = (self.mid_resets && k.is_multiple_of(3))
            .then(|| self.cycle + (self.phase_len / 2).min(3_000));
    }

    /// A receiver-stall episode ([`Stall`]) as a traffic phase: node 0
    /// stalled first, then node 1.
    fn start_stall(&mut self) {
        let k = STALLS - self.stalls_left;
        self.stalls_left -= 1;
        let r = k % 2;
        let s = 1 - r;
        self.phase = Phase::Traffic;
        self.phase_start = self.cycle;
        self.phase_len = STALL_CYCLES;
        self.nodes[r].hold_cq = true;
        self.stall = Some(Stall {
            r,
            s,
            end: self.cycle + STALL_CYCLES,
            sent: 0,
        });
        self.cov.stalls += 1;
    }

    /// Every cycle: the packets in flight to a stalled node (coverage
    /// peaks); the episode's end with its traffic phase.
    pub(super) fn stall_turn_global(&mut self) {
        let Some(st) = self.stall else { return };
        let inflight = |c| {
            self.flows
                .get(&(st.s, st.r, c))
                .map_or(0, |q| q.len() as u64)
        };
        let (c0, c1) = (inflight(0), inflight(1));
        self.cov.stall_class0_peak = self.cov.stall_class0_peak.max(c0);
        self.cov.stall_class1_peak = self.cov.stall_class1_peak.max(c1);
        if self.cycle >= st.end || self.phase != Phase::Traffic {
            self.nodes[st.r].hold_cq = false;
            self.stall = None;
        }
    }

    /// Every cycle: an overflow burst's end, once its rejections were all
    /// accepted and decided (or its traffic phase ended): the receiver's
    /// software reads STATUS (ERRQ_OVERFLOW), clears that bit and reads its
    /// error queue again.
    pub(super) fn burst_turn_global(&mut self) {
        let Some((_, d, left)) = self.burst else {
            return;
        };
        let undecided = self.exp_reject.keys().any(|k| k.0 == d);
        if (left == 0 || self.phase != Phase::Traffic) && !undecided {
            self.burst = None;
            let node = &mut self.nodes[d];
            node.hold_errq = false;
            node.sw.push_back(super::node::Op::Read {
                addr: regs::STATUS,
                prot: true,
            });
            node.write(regs::STATUS, regs::ST_ERRQ_OVERFLOW, true, Meta::None);
            node.sw.push_back(super::node::Op::Read {
                addr: regs::STATUS,
                prot: true,
            });
        }
    }

    /// Node `n`'s software in a receiver-stall episode: the sender's
    /// 192- and 256-byte writes in turn, the stalled node's 16-byte
    /// writes with notify; each followed by a poll (the stalled node's
    /// leaves the completion queue alone).
    fn stall_action(&mut self, rng: &mut Rng, n: usize) {
        let Some(st) = self.stall else { return };
        let channels = self.params.ni.ni.channels;
        if n == st.s && rng.chance(0.8) {
            let len = if st.sent.is_multiple_of(2) { 192 } else { 256 };
            self.aligned_write(rng, n, st.r, len, 0, false);
        } else if n == st.r && rng.chance(0.8) {
            self.aligned_write(rng, n, st.s, 16, 1 % channels, true);
        }
        self.nodes[n].poll();
    }

    /// Queue an RDMA write of `len` bytes (at most 256) from node `n` to
    /// `dest` on channel `c`, both addresses 256-byte aligned (one packet
    /// when `len <= max_payload_bytes`).
    fn aligned_write(
        &mut self,
        rng: &mut Rng,
        n: usize,
        dest: usize,
        len: u64,
        c: usize,
        notify: bool,
    ) {
        let src = SOURCES[1] + 256 * rng.below(REGION / 256);
        let dst = LAND + 256 * rng.below((REGION - GUARD) / 256);
        self.doorbell_write(n, c, dest, (src, dst, len), notify);
    }

    /// The end of a hold: software of that node consumes again.
    pub(super) fn end_hold(&mut self) {
        if let Some((n, _, _)) = self.hold.take() {
            self.nodes[n].hold_cq = false;
        }
    }

    /// A reset pulse now, in the middle of traffic: every node's golden
    /// model and agents start afresh from the RTL's memory, nothing is
    /// expected any more, and the run goes on from the set-up.
    pub(super) fn mid_reset(&mut self) -> Result<()> {
        self.end_hold();
        self.reset_at = None;
        for (i, n) in self.nodes.iter_mut().enumerate() {
            n.after_reset(&self.params, i, self.fault)?;
        }
        self.flows.clear();
        self.cov.ar_lost += self.ar_outstanding();
        self.ar = Default::default();
        self.exp_cq.clear();
        self.exp_reject.clear();
        self.burst = None;
        self.exp_mb.clear();
        self.t_door.clear();
        self.t_send.clear();
        self.phase = Phase::Setup;
        self.setup_done = false;
        self.reset_now = true;
        self.cov.mid_resets += 1;
        Ok(())
    }
}
