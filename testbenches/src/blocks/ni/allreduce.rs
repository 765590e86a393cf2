//! The `ni` bench's allreduce stimulus (an NI with the engine,
//! `ni.ar_communicators > 0`): communicator set-up, malformed and good
//! allreduce descriptors, the engine's registers read and written.
//!
//! What the RTL runs (see `exanet_hdl::ni::allreduce`): the check, a
//! single rank's copy (compared burst by burst with the golden engine's
//! writes, check.rs: AR / AW / W / B, AxUSER = the descriptor's PDID), and
//! of a collective of two ranks or more its fragments (each compared flit
//! by flit with the golden engine's `emit` at its pick), its partners'
//! fragments (played by the receive agent from the golden
//! `partner_fragments`, random bytes), its combining and storing steps
//! (the golden writes at the event that made a step ready, compared burst
//! by burst: every result byte), its OK completion, or its TIMEOUT
//! (the golden clock moves one cycle per cycle: check.rs), completions on
//! the AXI4-Lite reads; and the fragments the receive agent sends in (one
//! packet in four, `NiBench::ar_fragment`), each decided as the golden
//! engine's `accept` (error entries, AR_REJ, AR_CNT on the reads) and, when
//! accepted, written to scratch burst by burst (check.rs). Every software action that rings a DOORBELL is
//! first played on a copy of the golden NI, and dropped when an allreduce
//! DOORBELL in it would start a collective that was not generated as a
//! good one; one that queues behind a running collective stays (the
//! RTL's descriptor queue, checked when it starts). The malformed descriptors are so one way each (count 0,
//! count over the maximum, more scratch than the slot has, a bitwise op on
//! a float type, an undefined op or dtype, a misaligned or out-of-range
//! address, an unknown or disabled communicator, one of another PDID, one
//! this node is not a member of); the good ones (with
//! [`NiBench::set_ar_copies`]) copy up to 768 bytes between random
//! element-aligned places of the source regions on the single-rank slot
//! (4 KiB pages crossed, source and destination overlapping at times), or
//! start a collective of up to 3 P bytes on slot 0, a box of 2..=32 ranks
//! holding this node at a random rank; AR_TIMEOUT is mostly short (1..=3
//! cycles at times: the timeout falls during the check), at times 0 or
//! any 32-bit value. The copy is the safety net for what random register
//! writes change.

use super::{NiBench, Op, REGION};
use exanet_sim::allreduce::engine::{FRAG_USER_DTYPE, FRAG_USER_OP, MAX_COMMUNICATORS};
use exanet_sim::allreduce::reduce_alu::{ReduceDtype, ReduceOp};
use exanet_sim::ni::completion::{CqKind, CQ_W0_KIND, CQ_W0_REASON};
use exanet_sim::ni::descriptor::{
    AR_DEST_COMM, AR_DEST_DTYPE, AR_DEST_OP, CTRL_OP, CTRL_TXID, OP_ALLREDUCE,
};
use exanet_sim::ni::regs::{self, ar_comm_reg, Prot};
use exanet_sim::ni::Packet;
use exanet_sim::packet::footer::Footer;
use exanet_sim::packet::header::{Header, PacketType};
use exanet_sim::rng::Rng;
use std::collections::VecDeque;

/// Communicator slots the set-up enables: 0 a member slot with the first
/// channel's PDID and a small scratch area, 1 a slot this node is not a
/// member of, 2 a member slot of a PDID no channel has, 3 (with four
/// slots or more) a box of one rank, this node, with the first channel's
/// PDID: its descriptors run (the golden engine copies source to
/// destination at the DOORBELL, the RTL over AXI4).
const SLOTS_SET: usize = 4;

impl NiBench {
    /// Slots the set-up enables: the single-rank one only with good
    /// descriptors in the stimulus.
    fn slots_set(&self) -> usize {
        if self.ar_copies {
            SLOTS_SET
        } else {
            ONE_RANK_SLOT
        }
    }
}

/// The single-rank slot.
const ONE_RANK_SLOT: usize = 3;

/// Largest vector a single-rank descriptor copies: the copy holds the
/// NI's receive decisions (about 70 cycles per 256-byte chunk with this
/// bench's memory latencies), and a packet waiting through a few copies
/// in a row must still be decided within the bench's 2000-cycle bound.
const COPY_MAX_BYTES: u64 = 768;

impl NiBench {
    /// The engine is in this NI.
    pub(super) fn has_engine(&self) -> bool {
        self.params.ni.ar_communicators > 0
    }

    /// Privileged set-up of the communicator slots (after the channel
    /// PDIDs `pdids`): each slot disabled first (an enabled slot refuses
    /// its other fields), then its fields, then AR_CTRL with ENABLE.
    pub(super) fn ar_setup(&mut self, rng: &mut Rng, pdids: &[u32]) {
        let n = self.params.ni.clone();
        let d = n.torus_dims;
        let me = [
            self.me.x() as usize,
            self.me.y() as usize,
            self.me.z() as usize,
        ];
        let ext = [2.min(d[0]), 2.min(d[1]), 1];
        // This node at the box's origin: rank 0.
        let origin = (me[0] | me[1] << 4 | me[2] << 8) as u32;
        let extent = (ext[0] | ext[1] << 8 | ext[2] << 16) as u32;
        // Slot 0 (with good descriptors in the stimulus, its collectives
        // run): a box of 2..=32 ranks (1..=4 per dimension in x and y,
        // 1..=2 in z, non-powers of two among them) holding this node at
        // a random rank, so its partners lie around it, across the torus
        // wrap (a 4-ring of y taken whole).
        let (origin0, extent0, rank0) = if self.ar_copies {
            let mut e = [
                1 + rng.below(4.min(d[0]) as u64) as usize,
                1 + rng.below(4.min(d[1]) as u64) as usize,
                1 + rng.below(2.min(d[2]) as u64) as usize,
            ];
            if e[0] * e[1] * e[2] == 1 {
                e[0] = 2.min(d[0]);
                e[1] = if e[0] == 1 { 2.min(d[1]) } else { 1 };
            }
            let rank = rng.below((e[0] * e[1] * e[2]) as u64) as usize;
            let digit = [rank % e[0], rank / e[0] % e[1], rank / (e[0] * e[1])];
            let o: Vec<usize> = (0..3).map(|k| (me[k] + d[k] - digit[k]) % d[k]).collect();
            (
                (o[0] | o[1] << 4 | o[2] << 8) as u32,
                (e[0] | e[1] << 8 | e[2] << 16) as u32,
                rank as u32,
            )
        } else {
            (origin, extent, 0)
        };
        for k in 0..n.ar_communicators.min(self.slots_set()) {
            let extent = if k == ONE_RANK_SLOT {
                1 | 1 << 8 | 1 << 16
            } else {
                extent
            };
            let (origin, extent) = if k == 0 {
                (origin0, extent0)
            } else {
                (origin, extent)
            };
            let (rank, pdid) = match k {
                0 => (rank0, pdids[0]),
                ONE_RANK_SLOT => (0, pdids[0]),
                1 => (
                    1 + rng.below((ext[0] * ext[1] - 1) as u64) as u32,
                    pdids[1 % pdids.len()],
                ),
                _ => (0, !pdids[0] & 0xFFFF),
            };
            let w = |f| ar_comm_reg(k, f);
            self.priv_write(w(regs::AR_CTRL), 0);
            self.priv_write(w(regs::AR_ORIGIN), origin);
            self.priv_write(w(regs::AR_EXTENT), extent);
            self.priv_write(w(regs::AR_RANK), rank);
            self.priv_write(w(regs::AR_SCRATCH_LO), (self.rx.land + (1 << 20)) as u32);
            self.priv_write(w(regs::AR_SCRATCH_HI), 0);
            // (Slot 0's collectives mostly fit: 1 MiB three times in four.)
            let sizes = if k == 0 && self.ar_copies {
                [4096, 1 << 20, 1 << 20, 1 << 20]
            } else {
                [64, 4096, 1 << 20, 64]
            };
            self.priv_write(
                w(regs::AR_SCRATCH_SIZE),
                sizes[rng.below(if k == 0 && self.ar_copies { 4 } else { 3 }) as usize],
            );
            self.priv_write(w(regs::AR_CTRL), pdid | 1 << 31);
        }
        self.priv_write(regs::AR_THRESHOLD, [64, 4096][rng.below(2) as usize]);
        self.priv_write(regs::AR_TIMEOUT, timeout(rng));
    }

    /// Make slot `k` enabled with the PDID of a channel, and return that
    /// channel's page: the channel whose PDID the slot has, else the slot
    /// re-enabled with channel `c`'s (random configuration writes move
    /// both). Read from the golden model: software's queue is empty here.
    fn ar_channel_for(&mut self, k: usize, c: usize) -> u32 {
        let g = &self.golden;
        let ctrl = g
            .axil_read_prot(ar_comm_reg(k, regs::AR_CTRL), Prot::Privileged)
            .0;
        let pdid = |c: usize| {
            g.axil_read_prot(regs::CH_PDID_BASE + 4 * c as u32, Prot::Privileged)
                .0
                & 0xFFFF
        };
        if ctrl >> 31 == 1 {
            if let Some(c) = (0..self.params.ni.channels).find(|&c| pdid(c) == ctrl & 0xFFFF) {
                return regs::ch_page(c);
            }
        }
        let v = pdid(c);
        self.priv_write(ar_comm_reg(k, regs::AR_CTRL), v | 1 << 31);
        regs::ch_page(c)
    }

    /// One malformed allreduce descriptor, mostly on a channel whose PDID
    /// its communicator has (so that the later checks are reached), else
    /// on channel page `page`.
    pub(super) fn ar_descriptor(&mut self, rng: &mut Rng, page: u32) {
        let n = self.params.ni.clone();
        let c = rng.below(n.channels as u64) as usize;
        let lim = 1u64 << n.addr_bits;
        let ops = ReduceOp::ALL;
        let types = ReduceDtype::ALL;
        let mut op = ops[rng.below(ops.len() as u64) as usize];
        let mut dtype = types[rng.below(types.len() as u64) as usize];
        while !dtype.supports(op) {
            op = ops[rng.below(ops.len() as u64) as usize];
            dtype = types[rng.below(types.len() as u64) as usize];
        }
        let (mut opc, mut dtc) = (op.code() as u32, dtype.code() as u32);
        let mut esize = dtype.bits() as u64 / 8;
        let mut count = 1 + rng.below(64) as u32;
        let region = self.regions[rng.below(self.regions.len() as u64) as usize];
        let mut src = region + esize * rng.below(256);
        let mut dst = region + esize * rng.below(256);
        let mut comm = 0u32;
        let one = self.ar_copies && n.ar_communicators > ONE_RANK_SLOT;
        let case = rng.below(if one { 20 } else { 10 });
        let page = match case {
            0..=6 => self.ar_channel_for(0, c),
            8 if n.ar_communicators > 1 => self.ar_channel_for(1, c),
            14.. => self.ar_channel_for(0, c),
            10.. => self.ar_channel_for(ONE_RANK_SLOT, c),
            _ => page,
        };
        match case {
            0 => count = 0,
            1 => count = (n.ar_max_vector_bytes as u64 / esize + 1 + rng.below(100)) as u32,
            // More scratch than slot 0 may have (64 bytes .. 1 MiB).
            2 => count = (n.ar_max_vector_bytes as u64 / esize) as u32,
            3 => {
                // A bitwise op on a float type, or an undefined code.
                let f = types.iter().filter(|t| t.is_float()).collect::<Vec<_>>();
                let b = ops.iter().filter(|o| o.is_bitwise()).collect::<Vec<_>>();
                if rng.chance(0.7) && !f.is_empty() && !b.is_empty() {
                    opc = b[rng.below(b.len() as u64) as usize].code() as u32;
                    dtc = f[rng.below(f.len() as u64) as usize].code() as u32;
                } else if rng.chance(0.5) {
                    opc = 6 + rng.below(2) as u32;
                } else {
                    dtc = 6 + rng.below(2) as u32;
                }
            }
            4 if esize > 1 => src += 1 + rng.below(esize - 1),
            5 if esize > 1 => dst += 1 + rng.below(esize - 1),
            6 => {
                let a = lim - esize * count as u64 + esize * (1 + rng.below(4));
                if rng.chance(0.5) {
                    src = a
                } else {
                    dst = a
                }
            }
            7 => {
                let set = self.slots_set();
                comm = (set as u32 + rng.below((MAX_COMMUNICATORS - set) as u64) as u32).min(15)
            }
            8 => comm = 1,
            9 => comm = 2,
            14.. => {
                // A good descriptor on slot 0, a collective of two ranks
                // or more: up to 3 P of bytes, so a step sends up to 3
                // fragments (and with a large vector's schedule, some
                // steps send nothing). Its partners answer through the
                // receive agent (`partner_fragment`), most of the time
                // fast enough; else it times out. Four in ten are float
                // sums (`fp_add` in the NI's `reduce_alu`).
                if rng.chance(0.4) {
                    let f = if rng.chance(0.5) {
                        ReduceDtype::F32
                    } else {
                        ReduceDtype::F64
                    };
                    (opc, dtc) = (ReduceOp::Sum.code() as u32, f.code() as u32);
                    esize = f.bits() as u64 / 8;
                }
                let p = n.max_payload_bytes as u64;
                count = (1 + rng.below(3 * p / esize)) as u32;
                src = region + esize * rng.below((REGION - esize * count as u64) / esize + 1);
                self.ar_collective = true;
                self.cov.ar_good_descriptors += 1;
            }
            _ => {
                // A good descriptor on the single-rank slot: up to
                // COPY_MAX_BYTES,
                // anywhere in a region (chunks cross 4 KiB pages; source
                // and destination alignments differ), at times the same
                // region overlapping.
                comm = ONE_RANK_SLOT as u32;
                let bytes = esize * (1 + rng.below(COPY_MAX_BYTES / esize));
                count = (bytes / esize) as u32;
                // Anywhere in region `r`, or (one time in three) across
                // one of its 4 KiB page boundaries.
                let at = |rng: &mut Rng, r: u64| {
                    if rng.chance(0.33) {
                        let page = r + 4096 * (1 + rng.below(REGION / 4096 - 2));
                        page - esize * (1 + rng.below(bytes / esize))
                    } else {
                        r + esize * rng.below((REGION - bytes) / esize + 1)
                    }
                };
                src = at(rng, region);
                let r2 = self.regions[rng.below(self.regions.len() as u64) as usize];
                dst = if rng.chance(0.3) {
                    at(rng, region)
                } else {
                    at(rng, r2)
                };
                self.cov.ar_good_descriptors += 1;
            }
        }
        let dest = (comm << AR_DEST_COMM.offset)
            | (opc << AR_DEST_OP.offset)
            | (dtc << AR_DEST_DTYPE.offset)
            | (rng.bits(12) as u32) << 10;
        let ctrl = OP_ALLREDUCE | (rng.bits(CTRL_TXID.width) as u32) << CTRL_TXID.offset;
        for (off, v) in [
            (regs::DESC_LADDR_LO, src as u32),
            (regs::DESC_LADDR_HI, (src >> 32) as u32),
            (regs::DESC_RADDR_LO, dst as u32),
            (regs::DESC_RADDR_HI, (dst >> 32) as u32),
            (regs::DESC_LEN, count),
            (regs::DESC_DEST, dest),
            (regs::DESC_CTRL, ctrl),
        ] {
            self.user_write(page + off, v);
        }
        self.user_write(page + regs::DOORBELL, rng.next_u64() as u32);
        self.cov.ar_descriptors += 1;
    }

    /// A read of one of the engine's registers (some unmapped: the word
    /// after a slot's last field, a slot past the last).
    pub(super) fn ar_register_read(&mut self, rng: &mut Rng) {
        let n = &self.params.ni;
        let addr = match rng.below(4) {
            0 => [regs::AR_THRESHOLD, regs::AR_TIMEOUT][rng.below(2) as usize],
            1 => regs::AR_CNT_BASE + 4 * rng.below(regs::AR_CNT_COUNT as u64 + 1) as u32,
            2 => regs::AR_REJ_BASE + 4 * rng.below(11) as u32,
            _ => ar_comm_reg(
                rng.below(n.ar_communicators as u64 + 1) as usize,
                4 * rng.below(regs::AR_COMM_FIELDS.len() as u64 + 1) as u32,
            ),
        };
        self.sw.push_back(Op::Read {
            addr,
            prot: rng.chance(0.9),
        });
    }

    /// A privileged write to one of the engine's registers: the threshold,
    /// the timeout, a counter (refused), a slot field (refused while the
    /// slot is enabled), or a slot's AR_CTRL (disable, or enable again).
    pub(super) fn ar_config(&mut self, rng: &mut Rng) {
        let n = &self.params.ni;
        let k = rng.below(n.ar_communicators as u64) as usize;
        let (addr, v) = match rng.below(6) {
            0 => (
                regs::AR_THRESHOLD,
                [0, 64, 4096, rng.bits(20) as u32][rng.below(4) as usize],
            ),
            1 => (regs::AR_TIMEOUT, timeout(rng)),
            2 => (
                regs::AR_CNT_BASE + 4 * rng.below(3) as u32,
                rng.bits(32) as u32,
            ),
            3 => (
                ar_comm_reg(k, regs::AR_COMM_FIELDS[rng.below(7) as usize]),
                rng.bits(32) as u32,
            ),
            _ => (
                ar_comm_reg(k, regs::AR_CTRL),
                rng.bits(16) as u32 | (rng.below(2) as u32) << 31,
            ),
        };
        self.priv_write(addr, v);
    }

    /// Keep out collectives not meant: play the software queue on a copy
    /// of the golden NI; drop the whole action when an allreduce DOORBELL
    /// in it would start a collective not meant to (a malformed
    /// descriptor that random configuration made good). DOORBELLs that
    /// queue behind a running collective stay (counted in
    /// `ar_queued`), whatever they start later.
    pub(super) fn ar_filter(&mut self) {
        let meant = std::mem::take(&mut self.ar_collective);
        if !self.has_engine()
            || !self.sw.iter().any(|op| {
                matches!(op, Op::Write { addr, .. } if *addr >= regs::ch_page(0) && addr % regs::PAGE == regs::DOORBELL)
            })
        {
            return;
        }
        let mut g = self.golden.clone();
        let before = g.engine().map_or(0, |e| e.counters().completions);
        let running = |g: &exanet_sim::ni::Ni| g.engine().is_some_and(|e| !e.idle());
        let mut started = false;
        for op in &self.sw {
            let Op::Write { addr, data, prot } = *op else {
                continue;
            };
            let page = addr - addr % regs::PAGE;
            let ar_db = addr >= regs::ch_page(0)
                && addr % regs::PAGE == regs::DOORBELL
                && CTRL_OP
                    .get(g.axil_read_prot(page + regs::DESC_CTRL, Prot::Privileged).0 as u128)
                    == OP_ALLREDUCE as u64;
            let was = running(&g);
            let queued = |g: &exanet_sim::ni::Ni| g.engine().map_or(0, |e| e.queued());
            let q0 = queued(&g);
            let pr = if prot { Prot::Privileged } else { Prot::User };
            g.axil_write_prot(addr, data, pr);
            let queued_now = ar_db && queued(&g) > q0;
            // Queued on slot 0 only: a queued descriptor's writes (a box
            // of one rank's copy, should slot 0 have become one) come at
            // a later event or time step, where the bench expects them
            // with slot 0's PDID (the check requires the descriptor's).
            let comm = AR_DEST_COMM
                .get(g.axil_read_prot(page + regs::DESC_DEST, Prot::Privileged).0 as u128);
            if (queued_now && comm != 0) || (running(&g) && !was && !meant) {
                self.sw.clear();
                self.cov.ar_kept_out += 1;
                return;
            }
            self.cov.ar_queued += queued_now as u64;
            started |= running(&g) && !was;
        }
        self.cov.ar_collectives += started as u64;
        // The statuses the action's descriptors will complete with: the
        // copy's newest allreduce completions (its CQ drained).
        let new = g.engine().map_or(0, |e| e.counters().completions) - before;
        if new == 0 {
            return;
        }
        let mut codes = Vec::new();
        while g
            .axil_read_prot(regs::CQ_PAGE + regs::CQ_COUNT, Prot::User)
            .0
            != 0
        {
            let w0 = g.axil_read_prot(regs::CQ_PAGE + regs::CQ_W0, Prot::User).0 as u128;
            if CQ_W0_KIND.get(w0) == CqKind::Allreduce as u64 {
                codes.push(CQ_W0_REASON.get(w0) as usize);
            }
            g.axil_write_prot(regs::CQ_PAGE + regs::CQ_POP, 0, Prot::User);
        }
        for &c in codes.iter().rev().take(new as usize) {
            self.cov.ar_status[c & 7] += 1;
        }
    }
}

/// An AR_TIMEOUT value: mostly short (a collective of this bench, which
/// has no partner, ends TIMEOUT within the phase; 1..=3 cycles fall
/// during the RTL's check or first step), else 0 (never) or any.
fn timeout(rng: &mut Rng) -> u32 {
    match rng.below(8) {
        0 => 0,
        1 => rng.bits(32) as u32,
        2 => 1 + rng.below(3) as u32,
        _ => 1 + rng.below(1500) as u32,
    }
}

/// Share of the receive agent's packets (general mode, NI with an engine)
/// that are allreduce fragments.
const FRAG_SHARE: f64 = 0.25;

impl NiBench {
    /// An allreduce fragment for the receive path (general mode, NI with
    /// an engine), instead of a packet of [`NiBench::rx_packet`] one time
    /// in four: `None` otherwise.
    pub(super) fn maybe_ar_fragment(&mut self, rng: &mut Rng) -> Option<(Vec<u128>, usize)> {
        (self.has_engine() && rng.chance(FRAG_SHARE)).then(|| self.ar_fragment(rng))
    }

    /// An AllreduceFragment to this node, well formed for one of the
    /// enabled slots (its PDID, the sequence number it is on or the next,
    /// a source in its box, a step below the limit, inside half its
    /// scratch area, the step's next fragment index) or forged in one way:
    /// another PDID, a stale or future sequence number, a source outside
    /// the box or on another board, a step past the limit, past the bank,
    /// a duplicate or a gap in the fragment indices, a source other than
    /// the step's earlier fragments', size 0, a communicator not enabled.
    /// A source coordinate is at times given past the torus (the golden
    /// `rank_of` takes it modulo the torus). Slot 0's fragments never
    /// close a step (`last` = 0): its collectives run, and a closed step
    /// would be combined, which the RTL does not do yet; the other slots'
    /// close steps freely (no collective runs on them: the stimulus keeps
    /// those out). Each is compared as every received packet is:
    /// decision, error entry, AR_CNT / AR_REJ, the scratch write burst by
    /// burst (split at a 4 KiB page) with AWUSER = its PDID.
    fn ar_fragment(&mut self, rng: &mut Rng) -> (Vec<u128>, usize) {
        if let Some(words) = self.partner_fragment(rng) {
            return (words, 0);
        }
        let n = self.params.ni.clone();
        let d = n.torus_dims;
        let e = self.golden.engine().expect("an NI with the engine");
        let limit = e.step_limit();
        let k = if rng.chance(0.05) {
            (n.ar_communicators
                + rng.below((MAX_COMMUNICATORS - n.ar_communicators) as u64 + 1) as usize)
                .min(MAX_COMMUNICATORS - 1)
        } else {
            rng.below(n.ar_communicators as u64) as usize
        };
        // With collectives that run (good descriptors on slot 0), its
        // partners' fragments are the only ones it gets (a random one
        // would break their order: Gap, Mixed, a step closed early).
        let k = if k == 0 && self.ar_copies && n.ar_communicators > 1 {
            1 + rng.below(n.ar_communicators as u64 - 1) as usize
        } else {
            k
        };
        let seq = e.slot_seq(k).unwrap_or(0);
        let reg = |f| {
            if k < n.ar_communicators {
                self.golden
                    .axil_read_prot(ar_comm_reg(k, f), Prot::Privileged)
                    .0
            } else {
                0
            }
        };
        let (ctrl, origin, extent, ssize) = (
            reg(regs::AR_CTRL),
            reg(regs::AR_ORIGIN),
            reg(regs::AR_EXTENT),
            reg(regs::AR_SCRATCH_SIZE) as u64,
        );
        let o = [origin & 15, origin >> 4 & 15, origin >> 8 & 15].map(|v| v as usize);
        let ex = [extent & 31, extent >> 8 & 31, extent >> 16 & 31].map(|v| (v as usize).max(1));
        let mut pdid = ctrl as u16;
        let mut txid = if rng.chance(0.6) {
            seq
        } else {
            (seq + 1) & 0x3FFF
        };
        let case = rng.below(20);
        // The source: a member of the box (its offsets), this board.
        let mut off = [0, 1, 2].map(|i| rng.below(ex[i].min(d[i]) as u64) as usize);
        let mut board = (self.me.fpga(), self.me.reserved());
        if case == 3 {
            match (0..3).find(|&i| ex[i] < d[i]) {
                Some(i) if rng.chance(0.7) => {
                    off[i] = ex[i] + rng.below((d[i] - ex[i]) as u64) as usize
                }
                _ if rng.chance(0.5) => board.0 ^= 1 + rng.below(3) as u8,
                _ => board.1 ^= 1 + rng.bits(7) as u8,
            }
        }
        let mut src = self.me;
        for i in 0..3 {
            let mut c = (o[i] + off[i]) % d[i];
            // At times the same place named past the torus.
            if c + d[i] < 16 && rng.chance(0.1) {
                c += d[i];
            }
            match i {
                0 => src.set_x(c as u8),
                1 => src.set_y(c as u8),
                _ => src.set_z(c as u8),
            }
            .expect("4-bit coordinates");
        }
        src.set_fpga(board.0 & 3).expect("2-bit fpga");
        src.set_reserved(board.1).expect("8-bit reserved");
        let mut step = rng.below(limit.min(4) as u64) as usize;
        let p = n.max_payload_bytes as u64;
        let mut size = 1 + rng.below(p);
        let half = ssize / 2;
        let mut vaddr = if half >= size {
            // Mostly near a 4 KiB page of the bank (crossing it at times).
            if rng.chance(0.4) && half > 4096 + p {
                4096 * (1 + rng.below((half - p) / 4096)) - rng.below(p)
            } else {
                rng.below(half - size + 1)
            }
        } else {
            0
        };
        match case {
            0 => pdid ^= 1 + rng.bits(15) as u16,
            1 => txid = (seq + 2 + rng.below(0x3FFE) as u16) & 0x3FFF,
            4 => step = limit + rng.below((256 - limit) as u64) as usize,
            5 => vaddr = half.saturating_sub(size) + 1 + rng.below(64),
            7 => size = 0,
            _ => {}
        }
        let (next, _closed) = e.step_rx(k, txid, step).unwrap_or((0, false));
        let index = match case {
            6 if next > 0 => rng.below(next as u64) as u16,
            8 => next + 1 + rng.below(3) as u16,
            // A source other than the step's first fragment's (Mixed when
            // it has one).
            _ => next,
        };
        if case == 9 {
            let c = (src.x() as usize + 1) % d[0];
            src.set_x(c as u8).expect("4-bit x");
        }
        let last = k != 0 && rng.chance(0.4);
        let user = k as u16 | (rng.bits(8) as u16) << 4;
        let mut h = Header::new(PacketType::AllreduceFragment, self.me);
        h.set_pdid(pdid)
            .expect("16-bit PDID")
            .set_vaddr(vaddr & ((1 << 42) - 1))
            .expect("42-bit vaddr");
        let mut f = Footer::new(src);
        f.set_txid(txid)
            .expect("14-bit txid")
            .set_flags(step as u8)
            .expect("8-bit flags")
            .set_seq(index & 0x3FFF)
            .expect("14-bit seq")
            .set_user(user)
            .expect("12-bit user");
        f.set_first(index == 0).set_last(last);
        let payload: Vec<u8> = (0..size).map(|_| rng.bits(8) as u8).collect();
        self.cov.ar_frags_sent_in += 1;
        (Packet::build(h, f, &payload).words, 0)
    }
}

/// The partners of slot 0's running collective, as the receive agent plays
/// them: their fragments not yet sent in, in order (golden
/// `Engine::partner_fragments`), and the collective's op and dtype codes.
pub(super) struct Partner {
    /// Communicator and sequence number of the collective.
    pub key: (u8, u16),
    frags: VecDeque<(Header, Footer)>,
    pub op: usize,
    pub dtype: usize,
    /// Counted among the collectives that ended OK.
    pub counted: bool,
}

/// Share of the receive agent's fragments (with collectives running on
/// slot 0) that are its partners' next fragment.
const PARTNER_SHARE: f64 = 0.8;

impl NiBench {
    /// The next fragment of a partner of slot 0's running collective
    /// (random payload bytes of the golden size: any bit pattern, NaNs
    /// and subnormals among the floats'), most of the time while one has
    /// fragments left; `None` otherwise.
    fn partner_fragment(&mut self, rng: &mut Rng) -> Option<Vec<u128>> {
        if !self.ar_copies {
            return None;
        }
        let e = self.golden.engine()?;
        let key = e.running().filter(|k| k.0 == 0)?;
        if self.ar_partner.as_ref().is_none_or(|p| p.key != key) {
            let frags: VecDeque<(Header, Footer)> = e.partner_fragments().into();
            let user = frags.front().map_or(0, |(_, f)| f.user() as u64);
            self.ar_partner = Some(Partner {
                key,
                frags,
                op: FRAG_USER_OP.get(user as u128) as usize,
                dtype: FRAG_USER_DTYPE.get(user as u128) as usize,
                counted: false,
            });
        }
        if !rng.chance(PARTNER_SHARE) {
            return None;
        }
        let (h, f) = self.ar_partner.as_mut()?.frags.pop_front()?;
        let payload: Vec<u8> = (0..h.size()).map(|_| rng.bits(8) as u8).collect();
        self.cov.ar_frags_sent_in += 1;
        self.cov.ar_partner_frags += 1;
        Some(Packet::build(h, f, &payload).words)
    }
}
