//! Allreduce collectives on the `node-pair` bench (NIs with the engine,
//! `ar_communicators > 0`): communicator set-up, the collectives software
//! posts on every member rank, and the check of each result.
//!
//! **Communicators** (privileged registers, at every set-up, PDID = the
//! job's, one scratch area of [`SCRATCH_BYTES`] per slot): slot 0 the whole
//! torus; slot 1 a plane or a row of it (`AxBx1` at the last z, `Ax1x1`
//! at the last y, or two nodes across the x wrap); slot 2 a box whose
//! origin is the last node in x and y (it wraps round the torus): two
//! nodes in x on a torus with a z dimension, else up to 2x2x1; slot 3 a
//! box of one rank, the node itself (its collectives are the engine's
//! copy). That is 8, 4, 2 and 1 ranks on a 2x2x2 torus, 6, 3, 4 and 1 on
//! a 3x2x1 torus.
//! AR_THRESHOLD is drawn at each set-up (128 or 1024 bytes: vectors above
//! it run reduce-scatter + allgather), AR_TIMEOUT is large (no collective
//! of this bench may end otherwise than OK) and the golden clock moves one
//! cycle per cycle, so a timeout would be seen on both sides alike.
//!
//! **Collectives**: one global list, in creation order. A node's software
//! creates one (op, dtype, count from 1 element to [`MAX_VECTOR`] bytes,
//! over one to many packets, a communicator it is a member of, each rank's
//! source at a random element-aligned place of one of its source regions)
//! and posts its own part; every other member posts its part when its
//! software next runs (before any other work, in traffic and drain
//! phases), in list order. Every node thus posts its collectives in one
//! global order, so no two nodes wait for each other's later collective.
//! A node holds at most [`MAX_OUTSTANDING`] collectives posted and not yet
//! completed (completion read); each writes one of [`DST_SLOTS`]
//! destination slots in turn, so a slot is written again only after its
//! result was checked. A DOORBELL the NI refuses is posted again first.
//!
//! **Checks**, beside every per-cycle check of the bench (each fragment
//! flit by flit in its flow, every engine memory write burst by burst:
//! the fragments' scratch writes, the combining and storing steps, the
//! copies): each member's ALLREDUCE completion is expected once with
//! status OK (W0 = kind 4 and the txid, W1 = the node, W2 = the PDID);
//! when software reads it, the destination vector in the RTL's memory must
//! equal, byte for byte, the result computed from every rank's source
//! vector without any schedule (`exanet_sim::allreduce::schedule::reference`,
//! the combining tree every rank must follow); at each drain every memory
//! (destinations and scratch included) equals the golden model's.

use super::node::Meta;
use super::{NodePairBench, REGION, SOURCES};
use crate::cosim::Mismatch;
use exanet_sim::allreduce::reduce_alu::{ReduceDtype, ReduceOp};
use exanet_sim::allreduce::schedule::{reference, CommBox};
use exanet_sim::ni::descriptor::{AR_DEST_COMM, AR_DEST_DTYPE, AR_DEST_OP, OP_ALLREDUCE};
use exanet_sim::ni::regs::{self, ar_comm_reg};
use exanet_sim::rng::Rng;
use std::collections::{HashMap, VecDeque};

/// Communicator slots the set-up enables (at most the NI's).
pub(super) const SLOTS: usize = 4;
/// The slot of a box of one rank (the node itself).
const SELF_SLOT: usize = 3;
/// Scratch area of slot `k`: `SCRATCH + k * SCRATCH_BYTES`.
const SCRATCH: u64 = 0xA000_0000;
/// Scratch bytes per slot (two banks).
const SCRATCH_BYTES: u64 = 1 << 20;
/// Destination slots: `AR_DST + j * REGION`.
const AR_DST: u64 = 0x9000_0000;
const DST_SLOTS: usize = 8;
/// Collectives a node may have posted and not completed.
const MAX_OUTSTANDING: usize = 3;
/// Largest vector of the random collectives, bytes.
pub(super) const MAX_VECTOR: u64 = 4096;
/// AR_TIMEOUT: far beyond any wait of this bench.
const TIMEOUT: u32 = 1 << 24;
/// Share of a traffic turn that creates a collective (when the node may).
const AR_SHARE: f64 = 0.15;

/// One node's part in a collective: what its DOORBELL posts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ArPost {
    /// Index in the global list.
    pub(crate) coll: usize,
    pub(super) rank: usize,
    pub(super) channel: usize,
    pub(super) dst: u64,
    pub(super) txid: u16,
}

/// A collective of the global list.
#[derive(Clone, Debug)]
pub(super) struct Coll {
    pub(super) comm: usize,
    pub(super) op: ReduceOp,
    pub(super) dtype: ReduceDtype,
    pub(super) count: u32,
    /// Member nodes in rank order, and each rank's source address.
    pub(super) members: Vec<usize>,
    pub(super) srcs: Vec<u64>,
    /// The result every rank must hold (computed at the first completion).
    result: Option<Vec<u8>>,
    /// Completions read.
    pub(super) done: usize,
}

impl Coll {
    fn bytes(&self) -> u64 {
        self.count as u64 * (self.dtype.bits() / 8) as u64
    }
}

/// The bench's allreduce state (since the last set-up).
#[derive(Clone, Debug, Default)]
pub(super) struct ArState {
    pub(super) colls: Vec<Coll>,
    /// Per node: the next list index it has not considered yet.
    cursor: Vec<usize>,
    /// Per node: collectives posted (DOORBELL accepted) and not completed.
    outstanding: Vec<usize>,
    /// Posted parts by (node, txid).
    posted: HashMap<(usize, u16), ArPost>,
    /// Per node: a part whose DOORBELL was refused, to post again.
    repost: Vec<VecDeque<ArPost>>,
    /// Per node: a part queued to software, DOORBELL not answered yet.
    in_flight: Vec<bool>,
    /// Per node: the next destination slot.
    dst_next: Vec<usize>,
    /// AR_THRESHOLD of this set-up.
    pub(super) threshold: u64,
}

impl ArState {
    fn reset(&mut self, nodes: usize) {
        let dst_next = std::mem::take(&mut self.dst_next);
        *self = ArState {
            cursor: vec![0; nodes],
            outstanding: vec![0; nodes],
            repost: vec![VecDeque::new(); nodes],
            in_flight: vec![false; nodes],
            dst_next: if dst_next.len() == nodes {
                dst_next
            } else {
                vec![0; nodes]
            },
            ..ArState::default()
        };
    }
}

/// Slot `k`'s box on a torus of `dims`, for the node at `me` (only slot 3
/// depends on it).
fn comm_box(k: usize, dims: [usize; 3], me: [usize; 3]) -> CommBox {
    let [x, y, z] = dims;
    match k {
        0 => CommBox::whole(dims),
        1 if z > 1 => CommBox {
            origin: [0, 0, z - 1],
            extent: [x, y, 1],
        },
        1 if y > 1 => CommBox {
            origin: [0, y - 1, 0],
            extent: [x, 1, 1],
        },
        1 => CommBox {
            origin: [x - 1, 0, 0],
            extent: [2.min(x), 1, 1],
        },
        2 if z > 1 => CommBox {
            origin: [x - 1, y - 1, 0],
            extent: [2.min(x), 1, 1],
        },
        2 => CommBox {
            origin: [x - 1, y - 1, 0],
            extent: [2.min(x), 2.min(y), 1],
        },
        _ => CommBox {
            origin: me,
            extent: [1, 1, 1],
        },
    }
}

impl NodePairBench {
    /// The NIs carry the allreduce engine.
    pub(super) fn ar_on(&self) -> bool {
        self.params.ni.ni.ar_communicators > 0
    }

    fn dims(&self) -> [usize; 3] {
        self.params.router.topology.dims
    }

    fn coords(&self, n: usize) -> [usize; 3] {
        let c = self.nodes[n].me;
        [c.x() as usize, c.y() as usize, c.z() as usize]
    }

    /// Slots enabled.
    fn slots(&self) -> usize {
        self.params.ni.ni.ar_communicators.min(SLOTS)
    }

    /// Node `n`'s rank in slot `k`, if a member.
    fn rank_in(&self, k: usize, n: usize) -> Option<usize> {
        let me = self.coords(n);
        comm_box(k, self.dims(), me).rank_of(me, self.dims())
    }

    /// The members of slot `k` as seen from node `n` (rank order).
    fn members(&self, k: usize, n: usize) -> Vec<usize> {
        let b = comm_box(k, self.dims(), self.coords(n));
        (0..b.ranks())
            .map(|r| {
                let c = b.coords_of(r, self.dims());
                (0..self.nodes.len())
                    .find(|&m| self.coords(m) == c)
                    .expect("a box of the torus")
            })
            .collect()
    }

    /// Privileged set-up of every node's communicator slots, AR_THRESHOLD
    /// and AR_TIMEOUT (after the channel PDIDs); the allreduce state
    /// starts afresh.
    pub(super) fn ar_setup(&mut self, rng: &mut Rng) {
        self.ar.reset(self.nodes.len());
        if !self.ar_on() {
            return;
        }
        // (A measurement: the register's reset value, as `exanet simulate`.)
        self.ar.threshold = if self.ar_meas.plan.is_some() {
            4096
        } else {
            [128, 1024][rng.below(2) as usize]
        };
        let pdid = self.pdid as u32;
        for n in 0..self.nodes.len() {
            for k in 0..self.slots() {
                let me = self.coords(n);
                let b = comm_box(k, self.dims(), me);
                let rank = b.rank_of(me, self.dims()).unwrap_or(0) as u32;
                let o = b.origin;
                let e = b.extent;
                let scratch = SCRATCH + k as u64 * SCRATCH_BYTES;
                let w = |f| ar_comm_reg(k, f);
                let node = &mut self.nodes[n];
                for (a, v) in [
                    (w(regs::AR_ORIGIN), (o[0] | o[1] << 4 | o[2] << 8) as u32),
                    (w(regs::AR_EXTENT), (e[0] | e[1] << 8 | e[2] << 16) as u32),
                    (w(regs::AR_RANK), rank),
                    (w(regs::AR_SCRATCH_LO), scratch as u32),
                    (w(regs::AR_SCRATCH_HI), (scratch >> 32) as u32),
                    (w(regs::AR_SCRATCH_SIZE), SCRATCH_BYTES as u32),
                    (w(regs::AR_CTRL), pdid | 1 << 31),
                ] {
                    node.write(a, v, true, Meta::None);
                }
            }
            let t = self.ar.threshold as u32;
            let node = &mut self.nodes[n];
            node.write(regs::AR_THRESHOLD, t, true, Meta::None);
            node.write(regs::AR_TIMEOUT, TIMEOUT, true, Meta::None);
        }
    }

    /// Node `n`'s next part to post: one refused before, else the next
    /// collective of the list it is a member of (the cursor moves past
    /// the others).
    fn ar_next(&mut self, n: usize) -> Option<(usize, Option<ArPost>)> {
        if let Some(p) = self.ar.repost[n].front() {
            return Some((p.coll, Some(*p)));
        }
        while self.ar.cursor[n] < self.ar.colls.len() {
            let j = self.ar.cursor[n];
            if self.ar.colls[j].members.contains(&n) {
                return Some((j, None));
            }
            self.ar.cursor[n] += 1;
        }
        None
    }

    /// Software of node `n`, traffic or drain phase: post its next part of
    /// a collective when it has one (and room), or (in traffic, at times)
    /// create a collective. Returns whether it queued something.
    pub(super) fn ar_turn(&mut self, rng: &mut Rng, n: usize, create: bool) -> bool {
        if !self.ar_on() || self.ar.in_flight[n] || self.ar.outstanding[n] >= MAX_OUTSTANDING {
            return false;
        }
        if let Some((j, again)) = self.ar_next(n) {
            match again {
                Some(p) => {
                    self.ar.repost[n].pop_front();
                    self.ar_doorbell(n, p);
                }
                None => {
                    self.ar.cursor[n] = j + 1;
                    self.ar_post(rng, n, j);
                }
            }
            return true;
        }
        if create && rng.chance(AR_SHARE) {
            let j = self.ar_create(rng, n);
            self.ar.cursor[n] = j + 1;
            self.ar_post(rng, n, j);
            return true;
        }
        false
    }

    /// A new collective created by node `n` (a member): its communicator,
    /// op, dtype, count and every rank's source. Returns its index.
    fn ar_create(&mut self, rng: &mut Rng, n: usize) -> usize {
        let mine: Vec<usize> = (0..self.slots())
            .filter(|&k| self.rank_in(k, n).is_some())
            .collect();
        // Half on the whole torus.
        let comm = if rng.chance(0.5) {
            0
        } else {
            mine[rng.below(mine.len() as u64) as usize]
        };
        let (op, dtype) = loop {
            let o = ReduceOp::ALL[rng.below(ReduceOp::ALL.len() as u64) as usize];
            let t = ReduceDtype::ALL[rng.below(ReduceDtype::ALL.len() as u64) as usize];
            if t.supports(o) {
                break (o, t);
            }
        };
        let esize = (dtype.bits() / 8) as u64;
        let p = self.params.ni.ni.max_payload_bytes as u64;
        let bytes = match rng.below(20) {
            0..=3 => esize,
            4..=10 => esize * (1 + rng.below(p / esize)),
            11..=17 => p + esize * (1 + rng.below(3 * p / esize)),
            _ => esize * (1 + rng.below(MAX_VECTOR / esize)),
        };
        let count = (bytes / esize) as u32;
        let members = if comm == SELF_SLOT {
            vec![n]
        } else {
            self.members(comm, n)
        };
        let srcs = members
            .iter()
            .map(|_| {
                let r = SOURCES[rng.below(SOURCES.len() as u64) as usize];
                r + esize * rng.below((REGION - bytes) / esize + 1)
            })
            .collect();
        self.ar.colls.push(Coll {
            comm,
            op,
            dtype,
            count,
            members,
            srcs,
            result: None,
            done: 0,
        });
        self.cov.ar_collectives += 1;
        self.ar.colls.len() - 1
    }

    /// Queue node `n`'s part of collective `j`: a fresh txid, the next
    /// destination slot, a random channel.
    fn ar_post(&mut self, rng: &mut Rng, n: usize, j: usize) {
        let rank = self.ar.colls[j]
            .members
            .iter()
            .position(|&m| m == n)
            .expect("a member");
        let channel = rng.below(self.params.ni.ni.channels as u64) as usize;
        let slot = self.ar.dst_next[n];
        self.ar.dst_next[n] = (slot + 1) % DST_SLOTS;
        let bytes = self.ar.colls[j].bytes();
        let esize = (self.ar.colls[j].dtype.bits() / 8) as u64;
        let dst = AR_DST + slot as u64 * REGION + esize * rng.below((REGION - bytes) / esize + 1);
        let node = &mut self.nodes[n];
        let txid = node.txid_next;
        node.txid_next = if txid == 0x3FFF { 1 } else { txid + 1 };
        self.ar_doorbell(
            n,
            ArPost {
                coll: j,
                rank,
                channel,
                dst,
                txid,
            },
        );
    }

    /// Queue the descriptor writes and DOORBELL of part `p` on node `n`.
    fn ar_doorbell(&mut self, n: usize, p: ArPost) {
        let c = &self.ar.colls[p.coll];
        let src = c.srcs[p.rank];
        let comm = c.comm as u32;
        let dest = comm << AR_DEST_COMM.offset
            | (c.op.code() as u32) << AR_DEST_OP.offset
            | (c.dtype.code() as u32) << AR_DEST_DTYPE.offset;
        let count = c.count;
        let page = regs::ch_page(p.channel);
        let node = &mut self.nodes[n];
        for (off, v) in [
            (regs::DESC_LADDR_LO, src as u32),
            (regs::DESC_LADDR_HI, (src >> 32) as u32),
            (regs::DESC_RADDR_LO, p.dst as u32),
            (regs::DESC_RADDR_HI, (p.dst >> 32) as u32),
            (regs::DESC_LEN, count),
            (regs::DESC_DEST, dest),
            (regs::DESC_CTRL, OP_ALLREDUCE | (p.txid as u32) << 16),
        ] {
            node.write(page + off, v, false, Meta::None);
        }
        node.write(page + regs::DOORBELL, 1, false, Meta::Allreduce { post: p });
        self.ar.in_flight[n] = true;
    }

    /// Parts posted and not completed, on every node.
    pub(super) fn ar_outstanding(&self) -> u64 {
        self.ar.posted.len() as u64
    }

    /// Node `i`'s allreduce DOORBELL was answered `ok`: its completion
    /// (status OK) is due once, or the part is posted again.
    pub(super) fn ar_doorbell_answered(&mut self, i: usize, p: ArPost, ok: bool) {
        self.ar.in_flight[i] = false;
        if !ok {
            self.cov.ar_refused += 1;
            self.ar.repost[i].push_back(p);
            return;
        }
        let me = self.nodes[i].me.to_bits();
        let pdid = self.pdid as u32;
        self.expect_completion((i, 4 | (p.txid as u32) << 16, me, pdid));
        self.ar_measure_doorbell(p.coll, self.cycle);
        self.ar.posted.insert((i, p.txid), p);
        self.ar.outstanding[i] += 1;
        self.cov.ar_posted += 1;
    }

    /// Node `i` read its ALLREDUCE completion `txid` (expected, status
    /// OK): the destination in the RTL's memory must hold the reference
    /// result, byte for byte.
    pub(super) fn ar_completed(&mut self, i: usize, txid: u16, cycle: u64) -> Option<Mismatch> {
        let p = self.ar.posted.remove(&(i, txid))?;
        self.ar.outstanding[i] -= 1;
        let want = self.ar_result(p.coll);
        let got = self.nodes[i].mem.read(p.dst, want.len());
        let c = &mut self.ar.colls[p.coll];
        c.done += 1;
        let ranks = c.members.len();
        let (op, dtype, count, comm) = (c.op, c.dtype, c.count, c.comm);
        if let Some(k) = (0..want.len()).find(|&k| want[k] != got[k]) {
            let es = dtype.bits() / 8;
            let e = k / es;
            let show = |v: &[u8]| format!("{:02x?}", &v[e * es..e * es + es]);
            return Some(Mismatch {
                cycle,
                port: format!(
                    "n{i} allreduce result (collective {}, {} {} x{count}, comm {comm} of {ranks} ranks, rank {}, element {e} at 0x{:x})",
                    p.coll,
                    op.name(),
                    dtype.name(),
                    p.rank,
                    p.dst + (e * es) as u64
                ),
                expected: show(&want),
                actual: show(&got),
            });
        }
        let cov = &mut self.cov;
        cov.ar_checked += 1;
        cov.ar_bytes_checked += want.len() as u64;
        if c.done == ranks {
            cov.ar_done += 1;
            *cov.ar_by_ranks.entry(ranks).or_default() += 1;
            cov.ar_by_op[op.code() as usize] += 1;
            cov.ar_by_dtype[dtype.code() as usize] += 1;
            let b = count as u64 * es64(dtype);
            let pm = self.params.ni.ni.max_payload_bytes as u64;
            cov.ar_one_element += (count == 1) as u64;
            cov.ar_multi_packet += (b > pm) as u64;
            cov.ar_large_schedule += (ranks > 1 && b > self.ar.threshold) as u64;
        }
        None
    }

    /// Collective `j`'s result from every rank's source vector (in the
    /// RTL's memory; source regions are never written).
    fn ar_result(&mut self, j: usize) -> Vec<u8> {
        if let Some(r) = &self.ar.colls[j].result {
            return r.clone();
        }
        let c = &self.ar.colls[j];
        let es = c.dtype.bits() / 8;
        let bytes = c.bytes() as usize;
        let inputs: Vec<Vec<u64>> = c
            .members
            .iter()
            .zip(&c.srcs)
            .map(|(&m, &s)| {
                self.nodes[m]
                    .mem
                    .read(s, bytes)
                    .chunks(es)
                    .map(|e| {
                        let mut w = [0u8; 8];
                        w[..es].copy_from_slice(e);
                        u64::from_le_bytes(w)
                    })
                    .collect()
            })
            .collect();
        let out = reference(c.op, c.dtype, &inputs).expect("a valid op and dtype");
        let mut r: Vec<u8> = out
            .iter()
            .flat_map(|v| v.to_le_bytes()[..es].to_vec())
            .collect();
        if self.fault == super::Fault::ArReference {
            r[0] ^= 1;
        }
        self.ar.colls[j].result = Some(r.clone());
        r
    }
}

fn es64(d: ReduceDtype) -> u64 {
    (d.bits() / 8) as u64
}

/// An allreduce latency measurement on the bench (after the set-up, no
/// other traffic): for each (communicator slot, vector bytes) in turn,
/// `samples` collectives (f64 sum), one at a time: every member's software
/// writes its descriptor at the same cycle; the next starts once every
/// member's completion was read and every node is idle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArLatencyPlan {
    pub items: Vec<(usize, u64)>,
    pub samples: usize,
}

/// One measured collective.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArLatencySample {
    /// Communicator slot, its ranks, vector bytes.
    pub comm: usize,
    pub ranks: usize,
    pub bytes: u64,
    /// The first member's DOORBELL accepted (AXI4-Lite write handshake).
    pub first_doorbell: u64,
    /// The last member's DOORBELL accepted.
    pub last_doorbell: u64,
    /// The last member's completion in its queue: the cycle after the B
    /// of its last destination write (the RTL posts it then).
    pub last_done: u64,
}

impl ArLatencySample {
    /// Cycles from the first DOORBELL to the last completion.
    pub fn cycles(&self) -> u64 {
        self.last_done - self.first_doorbell
    }
}

/// The measurement's progress.
#[derive(Clone, Debug, Default)]
pub(super) struct ArMeasure {
    pub(super) plan: Option<ArLatencyPlan>,
    next: usize,
    cur: Option<(usize, ArLatencySample)>,
    /// Per node: the cycle of its engine's last write B.
    last_b: Vec<u64>,
    pub(super) log: Vec<ArLatencySample>,
}

impl NodePairBench {
    /// The same bench measuring allreduce latency per `plan` (after the
    /// set-up; the default latency samples and the random traffic do not
    /// run).
    pub fn with_ar_latency(mut self, plan: ArLatencyPlan) -> anyhow::Result<Self> {
        if !self.ar_on() {
            anyhow::bail!("allreduce latency: the point has ar_communicators = 0 (no engine)");
        }
        for &(k, b) in &plan.items {
            if k >= self.slots() || b == 0 || b % 8 != 0 || b > SCRATCH_BYTES / 4 {
                anyhow::bail!(
                    "allreduce latency: item (slot {k}, {b} bytes): the slot must be below {} and the bytes a multiple of 8 in 8..={}",
                    self.slots(),
                    SCRATCH_BYTES / 4
                );
            }
        }
        self.ar_meas.plan = Some(plan);
        Ok(self)
    }

    /// The measured collectives so far.
    pub fn ar_latency(&self) -> &[ArLatencySample] {
        &self.ar_meas.log
    }

    /// Every collective of the plan measured.
    pub fn ar_latency_done(&self) -> bool {
        self.ar_meas.plan.as_ref().is_some_and(|p| {
            self.ar_meas.log.len() == p.items.len() * p.samples && self.ar_meas.cur.is_none()
        })
    }

    /// The measurement phase's software (called once per cycle, before
    /// any node's): start the next collective once all is quiet; members
    /// poll for their completion.
    pub(super) fn ar_measure_turn(&mut self, rng: &mut Rng) {
        let Some(plan) = self.ar_meas.plan.clone() else {
            return;
        };
        if self.ar_meas.last_b.len() != self.nodes.len() {
            self.ar_meas.last_b = vec![0; self.nodes.len()];
        }
        if let Some((j, s)) = &mut self.ar_meas.cur {
            let c = &self.ar.colls[*j];
            if c.done == c.members.len() {
                s.last_done = c
                    .members
                    .iter()
                    .map(|&m| self.ar_meas.last_b[m] + 1)
                    .max()
                    .unwrap_or(0);
                self.ar_meas.log.push(s.clone());
                self.ar_meas.cur = None;
            } else {
                for &m in &c.members.clone() {
                    if self.ar.outstanding[m] > 0 && self.nodes[m].sw_idle() {
                        self.nodes[m].poll();
                    }
                }
                return;
            }
        }
        let k = self.ar_meas.next;
        if k >= plan.items.len() * plan.samples
            || !self.exp_cq.is_empty()
            || !self.nodes.iter().all(|n| n.idle())
        {
            return;
        }
        self.ar_meas.next += 1;
        let (comm, bytes) = plan.items[k / plan.samples];
        let owner = (0..self.nodes.len())
            .find(|&n| self.rank_in(comm, n).is_some())
            .expect("every slot has a member");
        let members = if comm == SELF_SLOT {
            vec![owner]
        } else {
            self.members(comm, owner)
        };
        let dtype = ReduceDtype::F64;
        let srcs = members
            .iter()
            .map(|_| SOURCES[0] + 8 * rng.below((REGION - bytes) / 8 + 1))
            .collect();
        self.ar.colls.push(Coll {
            comm,
            op: ReduceOp::Sum,
            dtype,
            count: (bytes / 8) as u32,
            members: members.clone(),
            srcs,
            result: None,
            done: 0,
        });
        let j = self.ar.colls.len() - 1;
        for &m in &members {
            self.ar.cursor[m] = j + 1;
            self.ar_post(rng, m, j);
        }
        let s = ArLatencySample {
            comm,
            ranks: members.len(),
            bytes,
            first_doorbell: u64::MAX,
            ..Default::default()
        };
        self.ar_meas.cur = Some((j, s));
    }

    /// A DOORBELL of the measured collective accepted at `cycle`.
    pub(super) fn ar_measure_doorbell(&mut self, coll: usize, cycle: u64) {
        if let Some((j, s)) = &mut self.ar_meas.cur {
            if *j == coll {
                s.first_doorbell = s.first_doorbell.min(cycle);
                s.last_doorbell = s.last_doorbell.max(cycle);
            }
        }
    }

    /// Node `i`'s engine had a write's B at `cycle`.
    pub(super) fn ar_measure_b(&mut self, i: usize, cycle: u64) {
        if let Some(b) = self.ar_meas.last_b.get_mut(i) {
            *b = cycle;
        }
    }
}

/// Run `bench` (with an [`ArLatencyPlan`]) until its plan is measured, at
/// most `max_cycles`, every check on: the samples, or the first mismatch
/// (or the plan unfinished) as the error.
pub fn measure_ar_latency(
    bench: &mut NodePairBench,
    opts: &crate::cosim::CosimOptions,
    max_cycles: u64,
) -> anyhow::Result<Vec<ArLatencySample>> {
    use crate::cosim::Bench;
    let mut sim = crate::cosim::load(bench, opts, false)?;
    bench.bind(&sim)?;
    bench.reset();
    let mut rng = Rng::new(opts.seed);
    let clock = sim.port("clock")?;
    clock.set(0);
    sim.eval();
    let mut cycle = 0;
    while cycle < max_cycles && !bench.ar_latency_done() {
        clock.set(0);
        bench.drive(&mut rng, cycle);
        sim.eval();
        if let Some(m) = bench.check(cycle) {
            anyhow::bail!("allreduce latency run: mismatch {m}");
        }
        clock.set(1);
        sim.eval();
        bench.advance();
        cycle += 1;
    }
    if !bench.ar_latency_done() {
        anyhow::bail!(
            "allreduce latency run: {} of the plan's collectives measured in {max_cycles} cycles",
            bench.ar_latency().len()
        );
    }
    Ok(bench.ar_latency().to_vec())
}
