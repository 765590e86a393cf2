//! Golden model of the allreduce engine inside the NI: transaction level,
//! like the NI's own model ([`crate::ni`]), with the same packet format and
//! the same sparse memory.
//!
//! This doc is the contract the engine's RTL (the NI's, `hdl/src/ni/allreduce.rs`)
//! matches fragment for fragment and write for write. The golden NI
//! ([`crate::ni::Ni`]) owns an [`Engine`] when its parameters give it
//! communicators, and drives it from its register file (communicator
//! registers, allreduce descriptors and their DOORBELL), its receive path
//! (fragments accepted), its scheduler (fragments picked) and its time;
//! the engine's completions enter the NI's completion queue. The tests
//! here drive an [`Engine`] directly (descriptors, communicator settings,
//! packets in and out, time).
//!
//! # Communicators (privileged registers)
//! Up to `communicators` slots, each: an axis-aligned box of the torus
//! ([`CommBox`]: origin and extent per dimension), this node's rank in it,
//! the PDID every fragment carries, a scratch area (base, bytes) in this
//! node's memory, and an enable bit. A slot also holds the engine's state
//! for it: the number of the next collective (`seq`, 14 bits, wrapping)
//! and two banks of receive bookkeeping, one per parity of `seq`.
//!
//! # Descriptor (user channel) and completion
//! [`ArDescriptor`]: reduction op and dtype codes (those of `reduce_alu`),
//! element count, source and destination addresses, communicator id,
//! transaction id. Descriptors queue (`queue_depth`) and run one at a time,
//! in order. Each ends with exactly one [`ArCompletion`] (txid,
//! communicator, [`ArStatus`]). A descriptor is checked when it starts, in
//! the order of [`ArStatus`]'s codes; a failing one completes at once with
//! that code, sends nothing, writes nothing and leaves `seq` unchanged.
//!
//! # Schedule
//! [`super::schedule`]: recursive doubling for vectors of at most
//! `threshold` bytes (a register), else reduce-scatter + allgather; pre/post
//! steps for a rank count that is not a power of two. Every rank ends with
//! the bits of [`super::schedule::reference`].
//!
//! # Fragments (packet type AllreduceFragment, class 0)
//! A step's send range is cut into fragments of at most
//! `max_payload_bytes` (a multiple of 8, so elements never straddle two):
//! - header: dest = the partner's coordinates, PDID = the communicator's,
//!   vaddr = where the bytes land in the **receiver's** scratch bank
//!   (bank-relative; the sender computes the receiver's layout, so a
//!   receiver can store a fragment that arrives before its own descriptor),
//!   size = payload bytes;
//! - footer: txid = the collective's `seq`, flags = step index, seq =
//!   fragment index within the step (0, 1, …), first = index 0, last = the
//!   step's last fragment, user = communicator id\[3:0\] · op\[6:4\] ·
//!   dtype\[9:7\].
//!
//! A step with nothing to send sends nothing (the partner expects nothing).
//!
//! Scratch layout: bank `seq & 1` starts at `scratch + (seq & 1) ·
//! scratch_bytes / 2`; in it the receive ranges of a rank's steps follow
//! each other in step order, each element at its index's place within its
//! range. The descriptor needs `scratch_bytes / 2 ≥` its total receive
//! bytes ([`scratch_needed`]): `(K + 1) · n · size` at most for recursive
//! doubling, under `2 · n · size` for the large schedule.
//!
//! # Receiving a fragment ([`Engine::receive`])
//! Checks in order, the first failing one rejects (counted per
//! [`FragReject`], nothing written): communicator id enabled; PDID equals
//! the communicator's; txid is the `seq` this node is on for that
//! communicator or the next one (a partner can be at most one collective
//! ahead; anything else is stale); the source is in the box (with
//! this node's fpga and reserved coordinate bits); the step index
//! is below the communicator's step limit; vaddr + size inside the bank;
//! the fragment index equals the step's next index (lower: duplicate,
//! higher: gap); the source equals the first fragment's of that step. An
//! accepted fragment is written to scratch at once (one memory write),
//! the step's next index and byte count advance, and `last` closes it.
//! Fragments are never refused for lack of room, so they cannot block the
//! network: the engine has no protocol deadlock with other traffic.
//!
//! # Progress
//! A step is done when all its fragments have been emitted and its receive
//! is closed (or empty). Then, if it receives, its bytes are checked
//! (closed by the expected partner, with the expected size, op and dtype;
//! otherwise the collective ends PROTOCOL) and used: combined into the
//! partial (read from the source vector before this rank's first combining
//! step, from the destination after) and written to the destination, one
//! write per `max_payload_bytes` chunk, chunk after chunk (a chunk's reads
//! come after the previous chunk's write: the RTL holds one chunk, never
//! the vector, so where the destination overlaps the source or the
//! scratch bank a later chunk reads what an earlier one wrote, as here);
//! or, for a storing step, copied to the destination the same way. After the last step the collective
//! completes OK (a single rank copies source to destination first); its
//! bank is cleared and `seq` advances.
//!
//! # Timeout
//! [`Engine::advance`] moves time on. A running collective with no progress
//! (no fragment accepted for it, no step done) for `timeout` cycles (a
//! register; 0 = never) completes TIMEOUT: its bank is cleared and `seq`
//! advances, so the communicator works for the next collective; late
//! fragments of the abandoned one are then stale.

use super::reduce_alu::{ReduceDtype, ReduceOp};
use super::schedule::{step_count, steps, Algorithm, CommBox, Step, DIMS};
use crate::ni::memory::{MemWrite, SparseMemory};
use crate::ni::wire::Packet;
use crate::packet::coords::{Coords, Field};
use crate::packet::footer::Footer;
use crate::packet::header::{Header, PacketType};
use anyhow::{bail, Result};
use std::collections::VecDeque;

/// Bits of the collective sequence number (the footer's txid field).
pub const SEQ_BITS: u32 = 14;
/// Most communicator slots (4-bit id in the footer's user field).
pub const MAX_COMMUNICATORS: usize = 16;
/// A fragment's footer user field: the communicator id (bits \[3:0\]).
pub const FRAG_USER_COMM: Field = Field {
    name: "frag_comm",
    offset: 0,
    width: 4,
};
/// A fragment's footer user field: the `reduce_alu` op code (bits \[6:4\]).
pub const FRAG_USER_OP: Field = Field {
    name: "frag_op",
    offset: 4,
    width: 3,
};
/// A fragment's footer user field: the `reduce_alu` dtype code (bits \[9:7\]).
pub const FRAG_USER_DTYPE: Field = Field {
    name: "frag_dtype",
    offset: 7,
    width: 3,
};

/// Engine parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineParams {
    /// Communicator slots, 1..=16.
    pub communicators: usize,
    /// Descriptors queued, 1..=64.
    pub queue_depth: usize,
    /// Fragment payload bytes: 16..=256, a multiple of 16.
    pub max_payload_bytes: usize,
    /// Largest vector in bytes.
    pub max_vector_bytes: usize,
    /// Address bits of the memory.
    pub addr_bits: u32,
    /// Torus dimensions.
    pub dims: [usize; DIMS],
}

impl Default for EngineParams {
    fn default() -> Self {
        EngineParams {
            communicators: 4,
            queue_depth: 8,
            max_payload_bytes: 256,
            max_vector_bytes: 1 << 20,
            addr_bits: 40,
            dims: [8, 4, 4],
        }
    }
}

impl EngineParams {
    /// Reject illegal values, naming the key.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_COMMUNICATORS).contains(&self.communicators) {
            bail!(
                "allreduce.communicators = {}: must be 1..=16",
                self.communicators
            );
        }
        if !(1..=64).contains(&self.queue_depth) {
            bail!(
                "allreduce.queue_depth = {}: must be 1..=64",
                self.queue_depth
            );
        }
        if !(16..=256).contains(&self.max_payload_bytes)
            || !self.max_payload_bytes.is_multiple_of(16)
        {
            bail!(
                "packet.max_payload_bytes = {}: the engine needs 16..=256, a multiple of 16",
                self.max_payload_bytes
            );
        }
        if self.max_vector_bytes < 8 || self.max_vector_bytes > 1 << 30 {
            bail!(
                "allreduce.max_vector_bytes = {}: must be 8..=2^30",
                self.max_vector_bytes
            );
        }
        if self.dims.iter().any(|&d| d == 0 || d > 16) {
            bail!(
                "topology.dims = {:?}: the engine takes 1..=16 per dimension",
                self.dims
            );
        }
        Ok(())
    }

    /// Step indices a communicator of the whole torus can use.
    pub fn step_limit(&self) -> usize {
        let p: usize = self.dims.iter().product();
        step_count(p, Algorithm::ReduceScatterAllgather)
    }
}

/// A communicator slot as software sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Communicator {
    /// The box of ranks.
    pub comm_box: CommBox,
    /// This node's rank in it.
    pub rank: usize,
    /// PDID of its fragments.
    pub pdid: u16,
    /// Scratch area base address.
    pub scratch: u64,
    /// Scratch area bytes (two banks).
    pub scratch_bytes: u64,
}

/// An allreduce descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArDescriptor {
    /// `reduce_alu` op code.
    pub op: u64,
    /// `reduce_alu` dtype code.
    pub dtype: u64,
    /// Elements.
    pub count: u32,
    /// Source vector address.
    pub src: u64,
    /// Destination vector address.
    pub dst: u64,
    /// Communicator slot.
    pub comm: u8,
    /// Transaction id (14 bits), reported in the completion.
    pub txid: u16,
    /// PDID of the channel that posted it: must be the communicator's.
    pub pdid: u16,
}

/// Completion status (codes as the RTL will post them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArStatus {
    /// The result is in memory.
    Ok = 0,
    /// Unknown or disabled communicator, or one of another PDID than the
    /// posting channel's.
    BadComm = 1,
    /// This node is not at its rank's place in the box.
    NotMember = 2,
    /// Unknown op or dtype, or a bitwise op on a float type.
    BadType = 3,
    /// Count 0, or a vector over the maximum or the scratch area.
    BadCount = 4,
    /// An address not aligned to the element size, or past the memory.
    BadAddr = 5,
    /// A partner sent data that does not fit the schedule.
    Protocol = 6,
    /// No progress for `timeout` cycles.
    Timeout = 7,
}

/// One completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArCompletion {
    /// The descriptor's txid.
    pub txid: u16,
    /// Its communicator.
    pub comm: u8,
    /// How it ended.
    pub status: ArStatus,
    /// The descriptor's PDID.
    pub pdid: u16,
}

/// Why a fragment was rejected (checked in this order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FragReject {
    /// Not an allreduce fragment, or undecodable.
    Format = 0,
    /// Communicator id unknown or disabled.
    Comm = 1,
    /// PDID differs from the communicator's.
    Pdid = 2,
    /// Collective sequence number neither the current nor the next.
    Stale = 3,
    /// Source not in the box.
    Source = 4,
    /// Step index over the limit.
    Step = 5,
    /// Lands outside the scratch bank.
    Range = 6,
    /// Fragment index already received.
    Duplicate = 7,
    /// Fragment index ahead of the next expected.
    Gap = 8,
    /// A different source than the step's earlier fragments.
    Mixed = 9,
}

/// Rejection reasons, for counting.
pub const FRAG_REJECTS: usize = 10;

/// Receive bookkeeping of one step of one bank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct StepRx {
    next_index: u16,
    bytes: u64,
    closed: bool,
    src: Option<usize>,
    op_dtype: u16,
}

#[derive(Clone, Debug)]
struct Slot {
    comm: Communicator,
    seq: u16,
    banks: [Vec<StepRx>; 2],
}

/// The collective in progress.
#[derive(Clone, Debug)]
struct Running {
    d: ArDescriptor,
    op: ReduceOp,
    dtype: ReduceDtype,
    plan: Vec<Step>,
    /// The schedule chosen at the start (the partners' layouts follow it,
    /// whatever AR_THRESHOLD becomes while the collective runs).
    algo: Algorithm,
    /// Scratch offset of each step's receive range (bank-relative).
    layout: Vec<u64>,
    /// Current step in `plan`.
    at: usize,
    /// Fragments of the current step emitted.
    sent: usize,
    /// The partial result is in the destination (a combining step ran).
    in_dst: bool,
    last_progress: u64,
}

/// Counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineCounters {
    /// Collectives completed (any status).
    pub completions: u64,
    /// Fragments sent.
    pub fragments_sent: u64,
    /// Fragments accepted.
    pub fragments_received: u64,
    /// Fragments rejected, by [`FragReject`] code.
    pub rejected: [u64; FRAG_REJECTS],
}

/// The allreduce engine of one node.
#[derive(Clone, Debug)]
pub struct Engine {
    p: EngineParams,
    me: [usize; DIMS],
    me_coords: Coords,
    slots: Vec<Option<Slot>>,
    queue: VecDeque<ArDescriptor>,
    running: Option<Running>,
    done: VecDeque<ArCompletion>,
    threshold: usize,
    timeout: u64,
    now: u64,
    counters: EngineCounters,
    /// Every memory write, in order, until taken.
    writes: Vec<MemWrite>,
}

/// Bank-relative receive offsets of a plan (see the module doc).
pub fn layout_of(plan: &[Step], esize: usize) -> Vec<u64> {
    let mut off = 0u64;
    plan.iter()
        .map(|s| {
            let o = off;
            off += (s.recv.len() * esize) as u64;
            o
        })
        .collect()
}

/// Bytes of one scratch bank a rank needs for `n` elements of `esize` bytes.
pub fn scratch_needed(p: usize, rank: usize, n: usize, esize: usize, algo: Algorithm) -> u64 {
    steps(p, rank, n, algo)
        .iter()
        .map(|s| (s.recv.len() * esize) as u64)
        .sum()
}

fn coords_to_usize(c: Coords) -> [usize; DIMS] {
    [c.x() as usize, c.y() as usize, c.z() as usize]
}

impl Engine {
    /// An engine at reset for the node at `me`: no communicator, threshold
    /// 4 KiB, timeout 0 (never).
    pub fn new(p: &EngineParams, me: Coords) -> Result<Self> {
        p.validate()?;
        let m = coords_to_usize(me);
        if (0..DIMS).any(|d| m[d] >= p.dims[d]) {
            bail!("node {m:?} is outside the torus {:?}", p.dims);
        }
        Ok(Engine {
            p: p.clone(),
            me: m,
            me_coords: me,
            slots: vec![None; p.communicators],
            queue: VecDeque::new(),
            running: None,
            done: VecDeque::new(),
            threshold: 4096,
            timeout: 0,
            now: 0,
            counters: EngineCounters::default(),
            writes: Vec::new(),
        })
    }

    /// Counters.
    pub fn counters(&self) -> &EngineCounters {
        &self.counters
    }

    /// Set the size threshold (bytes) above which the large schedule runs.
    pub fn set_threshold(&mut self, bytes: usize) {
        self.threshold = bytes;
    }

    /// Set the no-progress timeout in cycles (0 = never).
    pub fn set_timeout(&mut self, cycles: u64) {
        self.timeout = cycles;
    }

    /// Set (`Some`) or disable (`None`) communicator slot `id`. Setting a
    /// slot resets its sequence number and bookkeeping. Illegal settings
    /// are refused, naming the field.
    pub fn set_communicator(&mut self, id: usize, c: Option<Communicator>) -> Result<()> {
        if id >= self.slots.len() {
            bail!(
                "communicator {id}: this engine has {} slots",
                self.slots.len()
            );
        }
        if self
            .running
            .as_ref()
            .is_some_and(|r| r.d.comm as usize == id)
        {
            bail!("communicator {id}: a collective is running on it");
        }
        self.slots[id] = match c {
            None => None,
            Some(c) => {
                c.comm_box.validate(self.p.dims)?;
                if c.rank >= c.comm_box.ranks() {
                    bail!(
                        "communicator {id}: rank {} is not below its {} ranks",
                        c.rank,
                        c.comm_box.ranks()
                    );
                }
                let end = c.scratch.checked_add(c.scratch_bytes);
                if end.is_none_or(|e| e > 1u64 << self.p.addr_bits) {
                    bail!(
                        "communicator {id}: scratch {:#x} + {} bytes is past the {}-bit memory",
                        c.scratch,
                        c.scratch_bytes,
                        self.p.addr_bits
                    );
                }
                let limit = self.p.step_limit();
                Some(Slot {
                    comm: c,
                    seq: 0,
                    banks: [
                        vec![StepRx::default(); limit],
                        vec![StepRx::default(); limit],
                    ],
                })
            }
        };
        Ok(())
    }

    /// The memory writes made since the last call, oldest first.
    pub fn take_writes(&mut self) -> Vec<MemWrite> {
        std::mem::take(&mut self.writes)
    }

    /// Write `data` at `addr` and log it.
    fn write(&mut self, mem: &mut SparseMemory, addr: u64, data: Vec<u8>) {
        mem.write(addr, &data);
        self.writes.push(MemWrite { addr, data });
    }

    /// Threshold register (bytes).
    pub fn threshold(&self) -> usize {
        self.threshold
    }

    /// Timeout register (cycles).
    pub fn timeout(&self) -> u64 {
        self.timeout
    }

    /// Queue a descriptor; `Err` when the queue is full (software retries):
    /// queued descriptors plus completions not yet popped are fewer than
    /// `queue_depth` when one is accepted. The running collective's
    /// completion comes on top, so up to `queue_depth + 1` completions can
    /// wait (one ending while the completion queue is full, then each
    /// queued descriptor failing its check at once): the RTL sizes its
    /// waiting-completion FIFO so.
    pub fn post(&mut self, d: ArDescriptor) -> std::result::Result<(), ArDescriptor> {
        if self.queue.len() + self.done.len() >= self.p.queue_depth {
            return Err(d);
        }
        self.queue.push_back(d);
        Ok(())
    }

    /// Next completion, oldest first.
    pub fn pop_completion(&mut self) -> Option<ArCompletion> {
        self.done.pop_front()
    }

    /// A fragment is ready to send ([`Engine::emit`] would return one).
    pub fn has_fragment(&self) -> bool {
        self.running.as_ref().is_some_and(|r| {
            r.plan
                .get(r.at)
                .is_some_and(|s| r.sent < self.fragments_of(s))
        })
    }

    /// Cycles of [`Engine::advance`] until the running collective times
    /// out if nothing progresses (`None`: none runs, or timeout 0).
    pub fn cycles_to_timeout(&self) -> Option<u64> {
        let r = self.running.as_ref()?;
        (self.timeout > 0).then(|| {
            self.timeout
                .saturating_sub(self.now - r.last_progress)
                .max(1)
        })
    }

    /// The sequence number slot `id` is on (`None`: disabled or no such
    /// slot).
    pub fn slot_seq(&self, id: usize) -> Option<u16> {
        self.slots.get(id)?.as_ref().map(|s| s.seq)
    }

    /// The receive record of step `step` in the bank of sequence number
    /// `seq` of slot `id`: the next fragment index it takes, and whether it
    /// is closed (`None`: disabled or no such slot or step).
    pub fn step_rx(&self, id: usize, seq: u16, step: usize) -> Option<(u16, bool)> {
        let s = self.slots.get(id)?.as_ref()?;
        let r = s.banks[(seq & 1) as usize].get(step)?;
        Some((r.next_index, r.closed))
    }

    /// The step limit of this engine's torus ([`EngineParams::step_limit`]).
    pub fn step_limit(&self) -> usize {
        self.p.step_limit()
    }

    /// Completions waiting to be popped.
    pub fn completions_waiting(&self) -> usize {
        self.done.len()
    }

    /// Descriptors queued, not started yet.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Nothing queued or running.
    pub fn idle(&self) -> bool {
        self.queue.is_empty() && self.running.is_none()
    }

    /// The check of a descriptor at its start.
    fn check(&self, d: &ArDescriptor) -> std::result::Result<Running, ArStatus> {
        let slot = self
            .slots
            .get(d.comm as usize)
            .and_then(Option::as_ref)
            .filter(|s| s.comm.pdid == d.pdid)
            .ok_or(ArStatus::BadComm)?;
        let c = &slot.comm;
        if c.comm_box.coords_of(c.rank, self.p.dims) != self.me {
            return Err(ArStatus::NotMember);
        }
        let (op, dtype) = match (ReduceOp::from_code(d.op), ReduceDtype::from_code(d.dtype)) {
            (Some(o), Some(t)) if t.supports(o) => (o, t),
            _ => return Err(ArStatus::BadType),
        };
        let esize = dtype.bits() / 8;
        let n = d.count as usize;
        let bytes = n * esize;
        if n == 0 || bytes > self.p.max_vector_bytes {
            return Err(ArStatus::BadCount);
        }
        let p = c.comm_box.ranks();
        let algo = Algorithm::for_size(bytes, self.threshold);
        if scratch_needed(p, c.rank, n, esize, algo) > c.scratch_bytes / 2 {
            return Err(ArStatus::BadCount);
        }
        let top = 1u64 << self.p.addr_bits;
        let bad = |a: u64| {
            !a.is_multiple_of(esize as u64) || a.checked_add(bytes as u64).is_none_or(|e| e > top)
        };
        if bad(d.src) || bad(d.dst) {
            return Err(ArStatus::BadAddr);
        }
        let plan = steps(p, c.rank, n, algo);
        let layout = layout_of(&plan, esize);
        Ok(Running {
            d: *d,
            op,
            dtype,
            plan,
            algo,
            layout,
            at: 0,
            sent: 0,
            in_dst: false,
            last_progress: self.now,
        })
    }

    fn finish(&mut self, status: ArStatus) {
        let Some(r) = self.running.take() else {
            return;
        };
        if let Some(slot) = self.slots[r.d.comm as usize].as_mut() {
            let b = (slot.seq & 1) as usize;
            slot.banks[b]
                .iter_mut()
                .for_each(|s| *s = StepRx::default());
            slot.seq = (slot.seq + 1) & ((1 << SEQ_BITS) - 1);
        }
        self.done.push_back(ArCompletion {
            txid: r.d.txid,
            comm: r.d.comm,
            status,
            pdid: r.d.pdid,
        });
        self.counters.completions += 1;
    }

    /// Start queued descriptors and finish every step that can finish.
    fn progress(&mut self, mem: &mut SparseMemory) {
        loop {
            if self.running.is_none() {
                let Some(d) = self.queue.pop_front() else {
                    return;
                };
                match self.check(&d) {
                    Ok(r) => self.running = Some(r),
                    Err(status) => {
                        self.done.push_back(ArCompletion {
                            txid: d.txid,
                            comm: d.comm,
                            status,
                            pdid: d.pdid,
                        });
                        self.counters.completions += 1;
                        continue;
                    }
                }
            }
            match self.step_ready() {
                Some(Ok(())) => self.do_step(mem),
                Some(Err(status)) => self.finish(status),
                None => return,
            }
        }
    }

    /// `Some(Ok)` when the current step (or the end) can be done, `Some(Err)`
    /// when its received data breaks the schedule, `None` when waiting.
    fn step_ready(&self) -> Option<std::result::Result<(), ArStatus>> {
        let r = self.running.as_ref()?;
        let Some(s) = r.plan.get(r.at) else {
            return Some(Ok(()));
        };
        if r.sent < self.fragments_of(s) {
            return None;
        }
        if s.recv.is_empty() {
            return Some(Ok(()));
        }
        let slot = self.slots[r.d.comm as usize].as_ref()?;
        let rx = slot.banks[(slot.seq & 1) as usize][s.index];
        if !rx.closed {
            return None;
        }
        let esize = r.dtype.bits() / 8;
        let ok = rx.src == Some(s.partner)
            && rx.bytes == (s.recv.len() * esize) as u64
            && rx.op_dtype == op_dtype_bits(r.d.op, r.d.dtype);
        Some(if ok { Ok(()) } else { Err(ArStatus::Protocol) })
    }

    fn fragments_of(&self, s: &Step) -> usize {
        let esize = self.running.as_ref().map_or(8, |r| r.dtype.bits() / 8);
        (s.send.len() * esize).div_ceil(self.p.max_payload_bytes)
    }

    /// Use the current step's received data (or finish the collective).
    fn do_step(&mut self, mem: &mut SparseMemory) {
        let chunk = self.p.max_payload_bytes;
        let r = self.running.as_mut().expect("a running collective");
        let esize = r.dtype.bits() / 8;
        let Some(s) = r.plan.get(r.at).cloned() else {
            if r.plan.is_empty() {
                let (src, dst) = (r.d.src, r.d.dst);
                let n = r.d.count as usize * esize;
                let mut off = 0;
                while off < n {
                    let len = chunk.min(n - off);
                    let v = mem.read(src + off as u64, len);
                    self.write(mem, dst + off as u64, v);
                    off += len;
                }
            }
            self.finish(ArStatus::Ok);
            return;
        };
        if !s.recv.is_empty() {
            let slot = self.slots[r.d.comm as usize].as_ref().expect("enabled");
            let c = slot.comm;
            let bank = c.scratch + (slot.seq & 1) as u64 * (c.scratch_bytes / 2);
            let base = bank + r.layout[r.at];
            let total = s.recv.len() * esize;
            let start = (s.recv.start * esize) as u64;
            let partial = if r.in_dst { r.d.dst } else { r.d.src };
            let (op, dtype, dst) = (r.op, r.dtype, r.d.dst);
            if s.combine {
                r.in_dst = true;
            }
            // Chunk by chunk: each chunk's reads see the earlier chunks'
            // writes (the RTL holds one chunk, not the vector).
            let mut off = 0;
            while off < total {
                let len = chunk.min(total - off);
                let got = mem.read(base + off as u64, len);
                let y = if s.combine {
                    let mine = mem.read(partial + start + off as u64, len);
                    combine_bytes(op, dtype, &mine, &got)
                } else {
                    got
                };
                self.write(mem, dst + start + off as u64, y);
                off += len;
            }
        }
        let r = self.running.as_mut().expect("a running collective");
        r.at += 1;
        r.sent = 0;
        r.last_progress = self.now;
    }

    /// Move time on by `cycles`; a stalled collective times out.
    pub fn advance(&mut self, cycles: u64, mem: &mut SparseMemory) {
        self.now += cycles;
        self.progress(mem);
        if let Some(r) = &self.running {
            if self.timeout > 0 && self.now - r.last_progress >= self.timeout {
                self.finish(ArStatus::Timeout);
                self.progress(mem);
            }
        }
    }

    /// The next fragment to send, if any (payload read from memory now).
    pub fn emit(&mut self, mem: &mut SparseMemory) -> Option<Packet> {
        self.progress(mem);
        let r = self.running.as_ref()?;
        let s = r.plan.get(r.at)?;
        let total = self.fragments_of(s);
        if r.sent >= total {
            return None;
        }
        let slot = self.slots[r.d.comm as usize].as_ref()?;
        let c = slot.comm;
        let esize = r.dtype.bits() / 8;
        let chunk = self.p.max_payload_bytes;
        let bytes = s.send.len() * esize;
        let off = r.sent * chunk;
        let len = chunk.min(bytes - off);
        let from = if r.in_dst { r.d.dst } else { r.d.src };
        let payload = mem.read(from + (s.send.start * esize + off) as u64, len);
        // Where it lands at the partner: its plan's layout for this step.
        let p = c.comm_box.ranks();
        let theirs = steps(p, s.partner, r.d.count as usize, r.algo);
        let their_layout = layout_of(&theirs, esize);
        let at = theirs
            .iter()
            .position(|t| t.index == s.index)
            .expect("partners share every step (schedule tests)");
        let vaddr = their_layout[at] + off as u64;
        let dest = c.comm_box.coords_of(s.partner, self.p.dims);
        let mut dc = self.me_coords;
        dc.set_x(dest[0] as u8).ok()?;
        dc.set_y(dest[1] as u8).ok()?;
        dc.set_z(dest[2] as u8).ok()?;
        let mut h = Header::new(PacketType::AllreduceFragment, dc);
        h.set_pdid(c.pdid).ok()?;
        h.set_vaddr(vaddr).ok()?;
        let mut f = Footer::new(self.me_coords);
        f.set_txid(slot.seq).ok()?;
        f.set_flags(s.index as u8).ok()?;
        f.set_seq(r.sent as u16).ok()?;
        f.set_first(r.sent == 0);
        f.set_last(r.sent + 1 == total);
        f.set_user(
            FRAG_USER_COMM.put(0, r.d.comm as u64) as u16 | op_dtype_bits(r.d.op, r.d.dtype),
        )
        .ok()?;
        let pkt = Packet::build(h, f, &payload);
        let r = self.running.as_mut()?;
        r.sent += 1;
        r.last_progress = self.now;
        self.counters.fragments_sent += 1;
        self.progress(mem);
        Some(pkt)
    }

    /// The fragments this rank's partners send it for the running
    /// collective, every step with a receive range in step order, each
    /// step's in fragment order, as header and footer (the payload's
    /// size in the header; a bench adds the bytes): what the partners'
    /// [`Engine::emit`] gives (this rank's layout, the slot's sequence
    /// number, PDID, communicator, op and dtype; the source's fpga and
    /// reserved bits this node's). Empty when nothing runs.
    pub fn partner_fragments(&self) -> Vec<(Header, Footer)> {
        let Some(r) = self.running.as_ref() else {
            return Vec::new();
        };
        let Some(slot) = self.slots[r.d.comm as usize].as_ref() else {
            return Vec::new();
        };
        let c = slot.comm;
        let esize = r.dtype.bits() / 8;
        let chunk = self.p.max_payload_bytes;
        let mut out = Vec::new();
        for (at, s) in r.plan.iter().enumerate() {
            let bytes = s.recv.len() * esize;
            let n = bytes.div_ceil(chunk);
            let pc = c.comm_box.coords_of(s.partner, self.p.dims);
            let mut src = self.me_coords;
            let placed = src.set_x(pc[0] as u8).is_ok()
                && src.set_y(pc[1] as u8).is_ok()
                && src.set_z(pc[2] as u8).is_ok();
            if !placed {
                continue;
            }
            for j in 0..n {
                let len = chunk.min(bytes - j * chunk);
                let mut h = Header::new(PacketType::AllreduceFragment, self.me_coords);
                let mut f = Footer::new(src);
                let ok = h.set_pdid(c.pdid).is_ok()
                    && h.set_vaddr(r.layout[at] + (j * chunk) as u64).is_ok()
                    && h.set_size(len as u16).is_ok()
                    && f.set_txid(slot.seq).is_ok()
                    && f.set_flags(s.index as u8).is_ok()
                    && f.set_seq(j as u16).is_ok()
                    && f.set_user(
                        FRAG_USER_COMM.put(0, r.d.comm as u64) as u16
                            | op_dtype_bits(r.d.op, r.d.dtype),
                    )
                    .is_ok();
                if !ok {
                    continue;
                }
                f.set_first(j == 0);
                f.set_last(j + 1 == n);
                out.push((h, f));
            }
        }
        out
    }

    /// The running collective's current step: its position in the rank's
    /// plan ([`super::schedule::steps`]), the plan's length once every
    /// step is done (`None`: none runs). Read-only: a timed wrapper (the
    /// network simulator's [`crate::network::collective`]) charges the
    /// steps done between two looks.
    pub fn running_step(&self) -> Option<usize> {
        self.running.as_ref().map(|r| r.at)
    }

    /// The communicator and sequence number of the running collective.
    pub fn running(&self) -> Option<(u8, u16)> {
        let r = self.running.as_ref()?;
        let slot = self.slots[r.d.comm as usize].as_ref()?;
        Some((r.d.comm, slot.seq))
    }

    /// Take a fragment from the network (already checked by the NI's
    /// receive path: ECC, CRCs, destination, class).
    pub fn receive(
        &mut self,
        pkt: &Packet,
        mem: &mut SparseMemory,
    ) -> std::result::Result<(), FragReject> {
        let (Ok(h), Ok(f)) = (
            Header::from_bits(pkt.header_word()),
            Footer::from_bits(pkt.footer_word()),
        ) else {
            self.counters.rejected[FragReject::Format as usize] += 1;
            return Err(FragReject::Format);
        };
        let payload = pkt.payload_bytes(h.size() as usize);
        self.receive_decoded(&h, &f, &payload, mem)
    }

    /// [`Engine::receive`] of a decoded fragment (the NI's receive path
    /// hands over the corrected header).
    pub fn receive_decoded(
        &mut self,
        h: &Header,
        f: &Footer,
        payload: &[u8],
        mem: &mut SparseMemory,
    ) -> std::result::Result<(), FragReject> {
        let res = self.accept(h, f, payload, mem);
        match res {
            Ok(()) => self.counters.fragments_received += 1,
            Err(why) => self.counters.rejected[why as usize] += 1,
        }
        self.progress(mem);
        res
    }

    fn accept(
        &mut self,
        h: &Header,
        f: &Footer,
        payload: &[u8],
        mem: &mut SparseMemory,
    ) -> std::result::Result<(), FragReject> {
        if h.ptype() != PacketType::AllreduceFragment {
            return Err(FragReject::Format);
        }
        let comm = FRAG_USER_COMM.get(f.user() as u128) as usize;
        let limit = self.p.step_limit();
        let dims = self.p.dims;
        let (me_fpga, me_reserved) = (self.me_coords.fpga(), self.me_coords.reserved());
        let running_here = self
            .running
            .as_ref()
            .is_some_and(|r| r.d.comm as usize == comm);
        let slot = self
            .slots
            .get_mut(comm)
            .and_then(Option::as_mut)
            .ok_or(FragReject::Comm)?;
        if h.pdid() != slot.comm.pdid {
            return Err(FragReject::Pdid);
        }
        let seq = f.txid();
        let next = (slot.seq + 1) & ((1 << SEQ_BITS) - 1);
        if seq != slot.seq && seq != next {
            return Err(FragReject::Stale);
        }
        let src = coords_to_usize(f.src());
        let same_board = f.src().fpga() == me_fpga && f.src().reserved() == me_reserved;
        let Some(src_rank) = slot.comm.comm_box.rank_of(src, dims).filter(|_| same_board) else {
            return Err(FragReject::Source);
        };
        let step = f.flags() as usize;
        if step >= limit {
            return Err(FragReject::Step);
        }
        let size = h.size() as u64;
        if payload.len() as u64 != size {
            return Err(FragReject::Format);
        }
        let half = slot.comm.scratch_bytes / 2;
        if h.vaddr().checked_add(size).is_none_or(|e| e > half) {
            return Err(FragReject::Range);
        }
        let bank = (seq & 1) as usize;
        let rx = &mut slot.banks[bank][step];
        let index = f.seq();
        if index < rx.next_index || rx.closed {
            return Err(FragReject::Duplicate);
        }
        if index > rx.next_index {
            return Err(FragReject::Gap);
        }
        if rx.src.is_some_and(|s| s != src_rank) {
            return Err(FragReject::Mixed);
        }
        rx.src = Some(src_rank);
        rx.op_dtype = f.user() & !(FRAG_USER_COMM.max() as u16);
        rx.next_index += 1;
        rx.bytes += size;
        rx.closed = f.last();
        let addr = slot.comm.scratch + bank as u64 * half + h.vaddr();
        let current = seq == slot.seq;
        self.write(mem, addr, payload.to_vec());
        if running_here && current {
            if let Some(r) = self.running.as_mut() {
                r.last_progress = self.now;
            }
        }
        Ok(())
    }
}

/// The footer's op and dtype bits ([`FRAG_USER_OP`], [`FRAG_USER_DTYPE`]).
fn op_dtype_bits(op: u64, dtype: u64) -> u16 {
    (FRAG_USER_OP.put(0, op) | FRAG_USER_DTYPE.put(0, dtype)) as u16
}

/// `a ⊕ b` over little-endian byte vectors of `dtype` elements.
fn combine_bytes(op: ReduceOp, dtype: ReduceDtype, a: &[u8], b: &[u8]) -> Vec<u8> {
    let esize = dtype.bits() / 8;
    let mut out = Vec::with_capacity(a.len());
    for (x, y) in a.chunks(esize).zip(b.chunks(esize)) {
        let mut xa = [0u8; 8];
        let mut ya = [0u8; 8];
        xa[..esize].copy_from_slice(x);
        ya[..esize].copy_from_slice(y);
        let v = super::reduce_alu::reduce_lane(
            op,
            dtype,
            u64::from_le_bytes(xa),
            u64::from_le_bytes(ya),
        );
        out.extend_from_slice(&v.to_le_bytes()[..esize]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::allreduce::schedule::reference;
    use crate::rng::Rng;
    use std::collections::HashMap;

    const SRC: u64 = 0x10_0000;
    const DST: u64 = 0x20_0000;
    const SCRATCH: u64 = 0x40_0000;
    const SCRATCH_BYTES: u64 = 4 << 20;

    /// Nodes of a torus, each an engine and a memory, joined by in-order
    /// per-(source, destination) queues delivered in random order.
    struct Net {
        p: EngineParams,
        nodes: Vec<(Engine, SparseMemory)>,
        wire: HashMap<(usize, usize), VecDeque<Packet>>,
        rng: Rng,
        /// Fragments rejected on the way: (from, to, reason).
        rejected: Vec<(usize, usize, FragReject)>,
        /// PDID of each communicator id.
        pdids: HashMap<u8, u16>,
        /// Every fragment delivered: (to, packet).
        delivered: Vec<(usize, Packet)>,
    }

    fn index_of(dims: [usize; 3], c: [usize; 3]) -> usize {
        c[0] + dims[0] * (c[1] + dims[1] * c[2])
    }

    impl Net {
        fn new(dims: [usize; 3], seed: u64) -> Net {
            let p = EngineParams {
                dims,
                max_payload_bytes: 64,
                ..Default::default()
            };
            let mut nodes = Vec::new();
            for z in 0..dims[2] {
                for y in 0..dims[1] {
                    for x in 0..dims[0] {
                        let c = Coords::new(x as u8, y as u8, z as u8, 0).unwrap();
                        nodes.push((Engine::new(&p, c).unwrap(), SparseMemory::new()));
                    }
                }
            }
            Net {
                p,
                nodes,
                wire: HashMap::new(),
                rng: Rng::new(seed),
                rejected: Vec::new(),
                pdids: HashMap::new(),
                delivered: Vec::new(),
            }
        }

        fn set_comm(&mut self, id: usize, b: CommBox, pdid: u16) -> Vec<usize> {
            self.pdids.insert(id as u8, pdid);
            let dims = self.p.dims;
            let members: Vec<usize> = (0..b.ranks())
                .map(|r| index_of(dims, b.coords_of(r, dims)))
                .collect();
            for (r, &n) in members.iter().enumerate() {
                self.nodes[n]
                    .0
                    .set_communicator(
                        id,
                        Some(Communicator {
                            comm_box: b,
                            rank: r,
                            pdid,
                            scratch: SCRATCH,
                            scratch_bytes: SCRATCH_BYTES,
                        }),
                    )
                    .unwrap();
            }
            members
        }

        /// Run until nothing moves; returns the packets each node received.
        fn run(&mut self) {
            for _ in 0..1_000_000 {
                let mut moved = false;
                for i in 0..self.nodes.len() {
                    let (e, m) = &mut self.nodes[i];
                    // A few fragments per node per round, in random amounts.
                    for _ in 0..self.rng.below(3) {
                        if let Some(pkt) = e.emit(m) {
                            let h = Header::from_bits(pkt.header_word()).unwrap();
                            let d = index_of(self.p.dims, coords_to_usize(h.dest()));
                            self.wire.entry((i, d)).or_default().push_back(pkt);
                            moved = true;
                        }
                    }
                }
                let mut keys: Vec<_> = self.wire.keys().copied().collect();
                keys.sort();
                for k in keys {
                    if self.rng.chance(0.5) {
                        if let Some(pkt) = self.wire.get_mut(&k).unwrap().pop_front() {
                            self.delivered.push((k.1, pkt.clone()));
                            let (e, m) = &mut self.nodes[k.1];
                            if let Err(why) = e.receive(&pkt, m) {
                                self.rejected.push((k.0, k.1, why));
                            }
                            moved = true;
                        }
                    }
                }
                for (e, m) in &mut self.nodes {
                    e.advance(1, m);
                }
                if !moved && self.wire.values().all(VecDeque::is_empty) {
                    let mut again = false;
                    for (e, m) in &mut self.nodes {
                        if let Some(pkt) = e.emit(m) {
                            let h = Header::from_bits(pkt.header_word()).unwrap();
                            let d = index_of(self.p.dims, coords_to_usize(h.dest()));
                            let s = index_of(self.p.dims, e.me);
                            self.wire.entry((s, d)).or_default().push_back(pkt);
                            again = true;
                        }
                    }
                    if !again {
                        return;
                    }
                }
            }
            panic!("the network never went quiet");
        }
    }

    fn write_vec(m: &mut SparseMemory, addr: u64, v: &[u64], esize: usize) {
        let bytes: Vec<u8> = v
            .iter()
            .flat_map(|x| x.to_le_bytes()[..esize].to_vec())
            .collect();
        m.write(addr, &bytes);
    }

    fn read_vec(m: &SparseMemory, addr: u64, n: usize, esize: usize) -> Vec<u64> {
        m.read(addr, n * esize)
            .chunks(esize)
            .map(|c| {
                let mut a = [0u8; 8];
                a[..esize].copy_from_slice(c);
                u64::from_le_bytes(a)
            })
            .collect()
    }

    fn random_vec(rng: &mut Rng, n: usize, dtype: ReduceDtype) -> Vec<u64> {
        let mask = if dtype.bits() == 32 { 0xFFFF_FFFF } else { !0 };
        (0..n)
            .map(|_| match rng.below(12) {
                0 => 0,
                1 => mask,
                _ => rng.next_u64() & mask,
            })
            .collect()
    }

    /// One collective on `members` (all post); checks every rank's bits.
    fn one_collective(
        net: &mut Net,
        members: &[usize],
        comm: u8,
        op: ReduceOp,
        dtype: ReduceDtype,
        n: usize,
        txid: u16,
    ) {
        let esize = dtype.bits() / 8;
        let inputs: Vec<Vec<u64>> = members
            .iter()
            .map(|_| random_vec(&mut net.rng, n, dtype))
            .collect();
        let want = reference(op, dtype, &inputs).unwrap();
        for (r, &node) in members.iter().enumerate() {
            let (e, m) = &mut net.nodes[node];
            write_vec(m, SRC, &inputs[r], esize);
            e.post(ArDescriptor {
                op: op.code(),
                dtype: dtype.code(),
                count: n as u32,
                src: SRC,
                dst: DST,
                comm,
                txid,
                pdid: net.pdids[&comm],
            })
            .unwrap();
        }
        net.rejected.clear();
        net.run();
        assert_eq!(
            net.rejected,
            vec![],
            "no fragment of a clean run is rejected"
        );
        for (r, &node) in members.iter().enumerate() {
            let (e, m) = &mut net.nodes[node];
            let c = e.pop_completion();
            assert_eq!(
                c,
                Some(ArCompletion {
                    txid,
                    comm,
                    status: ArStatus::Ok,
                    pdid: net.pdids[&comm],
                }),
                "rank {r} (node {node}), {} {} n={n}",
                op.name(),
                dtype.name()
            );
            assert_eq!(e.pop_completion(), None, "one completion per collective");
            assert_eq!(
                read_vec(m, DST, n, esize),
                want,
                "rank {r}, {} {} n={n}",
                op.name(),
                dtype.name()
            );
            assert_eq!(read_vec(m, SRC, n, esize), inputs[r], "source untouched");
        }
    }

    #[test]
    fn random_collectives_give_every_rank_the_reference_bits() {
        let mut net = Net::new([4, 2, 2], 3);
        let whole = net.set_comm(0, CommBox::whole([4, 2, 2]), 7);
        let three = net.set_comm(
            1,
            CommBox {
                origin: [3, 1, 0],
                extent: [3, 1, 1],
            },
            9,
        );
        let six = net.set_comm(
            2,
            CommBox {
                origin: [1, 0, 1],
                extent: [3, 2, 1],
            },
            9,
        );
        let mut txid = 0;
        for (comm, members) in [(0u8, &whole), (1, &three), (2, &six)] {
            for threshold in [4096, 16] {
                for (i, &(op, dtype)) in [
                    (ReduceOp::Sum, ReduceDtype::F64),
                    (ReduceOp::Sum, ReduceDtype::F32),
                    (ReduceOp::Min, ReduceDtype::F32),
                    (ReduceOp::Max, ReduceDtype::I64),
                    (ReduceOp::Bxor, ReduceDtype::U32),
                    (ReduceOp::Sum, ReduceDtype::I32),
                ]
                .iter()
                .enumerate()
                {
                    for &node in members.iter() {
                        net.nodes[node].0.set_threshold(threshold);
                    }
                    let n = [1, 3, 40, 257][(i + txid as usize) % 4];
                    one_collective(&mut net, members, comm, op, dtype, n, txid);
                    txid += 1;
                }
            }
        }
    }

    /// A combining step reads and writes chunk after chunk: with the
    /// destination one chunk (64 bytes) above the source, the second
    /// chunk's partial is the first chunk's result (the RTL's order: it
    /// holds one chunk, not the vector).
    #[test]
    fn a_combining_step_reads_what_its_earlier_chunk_wrote() {
        let mut net = Net::new([2, 1, 1], 19);
        let members = net.set_comm(0, CommBox::whole([2, 1, 1]), 3);
        let n = 32; // 128 bytes of u32: two chunks of 64
        let inputs: Vec<Vec<u64>> = (0..2)
            .map(|r| (0..n as u64).map(|i| 1000 * (r + 1) + i).collect())
            .collect();
        for (r, &node) in members.iter().enumerate() {
            let (e, m) = &mut net.nodes[node];
            write_vec(m, SRC, &inputs[r], 4);
            e.post(ArDescriptor {
                op: ReduceOp::Sum.code(),
                dtype: ReduceDtype::U32.code(),
                count: n as u32,
                src: SRC,
                dst: SRC + 64,
                comm: 0,
                txid: 1,
                pdid: 3,
            })
            .unwrap();
        }
        net.run();
        for (r, &node) in members.iter().enumerate() {
            let (e, m) = &mut net.nodes[node];
            assert_eq!(e.pop_completion().unwrap().status, ArStatus::Ok);
            let (a, b) = (&inputs[r], &inputs[1 - r]);
            let want: Vec<u64> = (0..n)
                .map(|i| {
                    if i < 16 {
                        a[i] + b[i]
                    } else {
                        a[i - 16] + b[i - 16] + b[i]
                    }
                })
                .collect();
            assert_eq!(read_vec(m, SRC + 64, n, 4), want, "rank {r}");
        }
    }

    /// `partner_fragments` lists exactly the fragments the partners send
    /// each rank (header, footer but the payload CRC), on a box of six
    /// ranks (pre/post steps) with both schedules.
    #[test]
    fn partner_fragments_are_what_the_partners_send() {
        let mut net = Net::new([3, 2, 1], 23);
        let members = net.set_comm(0, CommBox::whole([3, 2, 1]), 6);
        for (txid, threshold) in [(1u16, 4096), (2, 16)] {
            let mut want = Vec::new();
            for &node in &members {
                let (e, m) = &mut net.nodes[node];
                e.set_threshold(threshold);
                write_vec(m, SRC, &[7; 40], 4);
                e.post(ArDescriptor {
                    op: ReduceOp::Sum.code(),
                    dtype: ReduceDtype::U32.code(),
                    count: 40,
                    src: SRC,
                    dst: DST,
                    comm: 0,
                    txid,
                    pdid: 6,
                })
                .unwrap();
                e.progress(m);
                assert!(e.running().is_some());
                for (h, f) in e.partner_fragments() {
                    want.push((node, h.to_bits(), f.to_bits()));
                }
            }
            net.delivered.clear();
            net.run();
            let mut got: Vec<_> = net
                .delivered
                .iter()
                .map(|(to, pkt)| {
                    let mut f = Footer::from_bits(pkt.footer_word()).unwrap();
                    f.set_payload_crc(0).unwrap();
                    (*to, pkt.header_word(), f.to_bits())
                })
                .collect();
            want.sort();
            got.sort();
            assert!(!want.is_empty());
            assert_eq!(want, got, "threshold {threshold}");
            for &node in &members {
                assert_eq!(
                    net.nodes[node].0.pop_completion().unwrap().status,
                    ArStatus::Ok
                );
            }
        }
    }

    #[test]
    fn bad_descriptors_complete_with_their_code_and_write_nothing() {
        let mut net = Net::new([2, 2, 1], 5);
        net.set_comm(0, CommBox::whole([2, 2, 1]), 1);
        // Communicator 1 names a box this node (0,0,0) is in, at the wrong rank.
        net.nodes[0]
            .0
            .set_communicator(
                1,
                Some(Communicator {
                    comm_box: CommBox::whole([2, 2, 1]),
                    rank: 3,
                    pdid: 1,
                    scratch: SCRATCH,
                    scratch_bytes: 64,
                }),
            )
            .unwrap();
        let good = ArDescriptor {
            op: ReduceOp::Sum.code(),
            dtype: ReduceDtype::F32.code(),
            count: 4,
            src: SRC,
            dst: DST,
            comm: 0,
            txid: 1,
            pdid: 1,
        };
        let cases = [
            (ArDescriptor { pdid: 2, ..good }, ArStatus::BadComm),
            (ArDescriptor { comm: 3, ..good }, ArStatus::BadComm),
            (ArDescriptor { comm: 9, ..good }, ArStatus::BadComm),
            (ArDescriptor { comm: 1, ..good }, ArStatus::NotMember),
            (
                ArDescriptor {
                    op: ReduceOp::Band.code(),
                    ..good
                },
                ArStatus::BadType,
            ),
            (ArDescriptor { op: 7, ..good }, ArStatus::BadType),
            (ArDescriptor { dtype: 7, ..good }, ArStatus::BadType),
            (ArDescriptor { count: 0, ..good }, ArStatus::BadCount),
            (
                ArDescriptor {
                    count: 1 << 19,
                    ..good
                },
                ArStatus::BadCount,
            ),
            (
                ArDescriptor {
                    src: SRC + 2,
                    ..good
                },
                ArStatus::BadAddr,
            ),
            (
                ArDescriptor {
                    dst: (1 << 40) - 8,
                    ..good
                },
                ArStatus::BadAddr,
            ),
        ];
        let (e, m) = &mut net.nodes[0];
        m.write(SRC, &[0xAB; 64]);
        let before = m.clone();
        for (i, (d, status)) in cases.iter().enumerate() {
            let d = ArDescriptor {
                txid: i as u16,
                ..*d
            };
            e.post(d).unwrap();
            assert_eq!(e.emit(m), None, "case {i}: nothing sent");
            assert_eq!(
                e.pop_completion(),
                Some(ArCompletion {
                    txid: i as u16,
                    comm: d.comm,
                    status: *status,
                    pdid: d.pdid,
                }),
                "case {i}"
            );
            assert!(e.idle());
        }
        assert_eq!(m.first_difference(&before), None, "nothing written");
        // Scratch too small for the vector: BadCount, on the small communicator.
        let mut small = net.nodes[1].0.clone();
        let mut mem = SparseMemory::new();
        small
            .set_communicator(
                1,
                Some(Communicator {
                    comm_box: CommBox::whole([2, 2, 1]),
                    rank: 1,
                    pdid: 1,
                    scratch: SCRATCH,
                    scratch_bytes: 16,
                }),
            )
            .unwrap();
        small.post(ArDescriptor { comm: 1, ..good }).unwrap();
        small.advance(1, &mut mem);
        assert_eq!(small.pop_completion().unwrap().status, ArStatus::BadCount);
    }

    /// A valid fragment from node `from` of the running collective, then forged variants.
    #[test]
    fn forged_fragments_are_rejected_counted_and_change_nothing() {
        let mut net = Net::new([2, 1, 1], 11);
        let members = net.set_comm(0, CommBox::whole([2, 1, 1]), 5);
        let esize = 4;
        let x0 = vec![1u64, 2, 3, 4];
        let x1 = vec![10u64, 20, 30, 40];
        let d = ArDescriptor {
            op: ReduceOp::Sum.code(),
            dtype: ReduceDtype::U32.code(),
            count: 4,
            src: SRC,
            dst: DST,
            comm: 0,
            txid: 3,
            pdid: 5,
        };
        for (node, x) in [(members[0], &x0), (members[1], &x1)] {
            let (e, m) = &mut net.nodes[node];
            write_vec(m, SRC, x, esize);
            e.post(d).unwrap();
        }
        let (e1, m1) = &mut net.nodes[1];
        let genuine = e1.emit(m1).unwrap();
        let h = Header::from_bits(genuine.header_word()).unwrap();
        let f = Footer::from_bits(genuine.footer_word()).unwrap();
        let payload = genuine.payload_bytes(h.size() as usize);
        let forge = |hf: &dyn Fn(&mut Header, &mut Footer)| {
            let (mut h2, mut f2) = (h, f);
            hf(&mut h2, &mut f2);
            Packet::build(h2, f2, &payload)
        };
        let other_fpga = Coords::new(1, 0, 0, 1).unwrap();
        let cases: Vec<(Packet, FragReject)> = vec![
            (
                forge(&|_, f| {
                    f.set_user(f.user() | 3).unwrap();
                }),
                FragReject::Comm,
            ),
            (
                forge(&|h, _| {
                    h.set_pdid(6).unwrap();
                }),
                FragReject::Pdid,
            ),
            (
                forge(&|_, f| {
                    f.set_txid(2).unwrap();
                }),
                FragReject::Stale,
            ),
            (
                forge(&|_, f| {
                    f.set_src(other_fpga);
                }),
                FragReject::Source,
            ),
            (
                forge(&|_, f| {
                    f.set_flags(200).unwrap();
                }),
                FragReject::Step,
            ),
            (
                forge(&|h, _| {
                    h.set_vaddr(SCRATCH_BYTES).unwrap();
                }),
                FragReject::Range,
            ),
            (
                forge(&|_, f| {
                    f.set_seq(1).unwrap();
                }),
                FragReject::Gap,
            ),
        ];
        let (e0, m0) = &mut net.nodes[0];
        for (i, (pkt, why)) in cases.iter().enumerate() {
            assert_eq!(e0.receive(pkt, m0), Err(*why), "case {i}");
        }
        assert_eq!(e0.receive(&genuine, m0), Ok(()));
        assert_eq!(e0.receive(&genuine, m0), Err(FragReject::Duplicate));
        let c = e0.counters();
        assert_eq!(c.fragments_received, 1);
        assert_eq!(c.rejected.iter().sum::<u64>(), cases.len() as u64 + 1);
        // Node 0's own fragment goes out; both finish with the right sum.
        net.run();
        for &node in &members {
            let (e, m) = &mut net.nodes[node];
            assert_eq!(e.pop_completion().unwrap().status, ArStatus::Ok);
            assert_eq!(read_vec(m, DST, 4, esize), vec![11, 22, 33, 44]);
        }
    }

    #[test]
    fn a_rank_that_never_joins_times_the_others_out_and_the_next_collective_works() {
        let mut net = Net::new([4, 1, 1], 13);
        let members = net.set_comm(0, CommBox::whole([4, 1, 1]), 2);
        for (e, _) in &mut net.nodes {
            e.set_timeout(500);
        }
        let d = ArDescriptor {
            op: ReduceOp::Max.code(),
            dtype: ReduceDtype::I32.code(),
            count: 8,
            src: SRC,
            dst: DST,
            comm: 0,
            txid: 1,
            pdid: 2,
        };
        // Rank 3 stays away.
        for &node in &members[..3] {
            let (e, m) = &mut net.nodes[node];
            m.write(DST, &[0x5A; 32]);
            e.post(d).unwrap();
        }
        net.run();
        for _ in 0..600 {
            for (e, m) in &mut net.nodes {
                e.advance(1, m);
            }
        }
        for &node in &members[..3] {
            let (e, _) = &mut net.nodes[node];
            assert_eq!(e.pop_completion().unwrap().status, ArStatus::Timeout);
            assert!(e.idle());
        }
        // Rank 3 joins late. Everything it needs arrived before the others
        // gave up (rank 2's and rank 1's fragments wait in its scratch), so
        // it completes with the full result; what it sends is stale for
        // ranks 1 and 2, which have moved on.
        net.nodes[members[3]].0.post(d).unwrap();
        net.run();
        for _ in 0..600 {
            for (e, m) in &mut net.nodes {
                e.advance(1, m);
            }
        }
        let (e3, m3) = &mut net.nodes[members[3]];
        assert_eq!(e3.pop_completion().unwrap().status, ArStatus::Ok);
        assert_eq!(
            read_vec(m3, DST, 8, 4),
            vec![0; 8],
            "max of four zero vectors"
        );
        for r in [1, 2] {
            let c = net.nodes[members[r]].0.counters();
            assert!(c.rejected[FragReject::Stale as usize] > 0, "rank {r}");
        }
        // Everyone on collective 1 now: it completes with the right bits.
        one_collective(
            &mut net,
            &members,
            0,
            ReduceOp::Sum,
            ReduceDtype::F32,
            33,
            2,
        );
    }

    /// The bound the NI RTL sizes its waiting-completion FIFO to
    /// (`ar_queue_depth + 1`): with a queue of one, a collective that ends
    /// while nothing pops and the descriptor queued behind it, failing its
    /// check at once, leave two completions waiting, and DOORBELLs are
    /// refused meanwhile.
    #[test]
    fn completions_waiting_can_exceed_the_queue_depth_by_one() {
        let mut net = Net::new([2, 1, 1], 21);
        let p = EngineParams {
            queue_depth: 1,
            ..net.p.clone()
        };
        net.nodes[0].0 = Engine::new(&p, Coords::new(0, 0, 0, 0).unwrap()).unwrap();
        let members = net.set_comm(0, CommBox::whole([2, 1, 1]), 2);
        assert_eq!(members, vec![0, 1]);
        let d = ArDescriptor {
            op: ReduceOp::Sum.code(),
            dtype: ReduceDtype::I32.code(),
            count: 8,
            src: SRC,
            dst: DST,
            comm: 0,
            txid: 1,
            pdid: 2,
        };
        let bad = ArDescriptor {
            comm: 9,
            txid: 2,
            ..d
        };
        for &n in &members {
            let (e, m) = &mut net.nodes[n];
            e.post(d).unwrap();
            e.advance(0, m);
        }
        // Node 0: the collective runs, one more fits the queue, then none.
        let (e0, _) = &mut net.nodes[0];
        assert!(e0.post(bad).is_ok());
        assert!(e0.post(ArDescriptor { txid: 3, ..bad }).is_err());
        net.run();
        let (e0, _) = &mut net.nodes[0];
        assert!(e0.idle());
        assert!(e0.post(ArDescriptor { txid: 4, ..bad }).is_err());
        let first = e0.pop_completion().unwrap();
        let second = e0.pop_completion().unwrap();
        assert_eq!((first.txid, first.status), (1, ArStatus::Ok));
        assert_eq!((second.txid, second.status), (2, ArStatus::BadComm));
        assert!(e0.pop_completion().is_none());
    }

    #[test]
    fn a_partner_one_collective_ahead_is_buffered_not_refused() {
        let mut net = Net::new([2, 1, 1], 17);
        let members = net.set_comm(0, CommBox::whole([2, 1, 1]), 4);
        let mk = |txid: u16, n: u32| ArDescriptor {
            op: ReduceOp::Sum.code(),
            dtype: ReduceDtype::U64.code(),
            count: n,
            src: SRC,
            dst: DST,
            comm: 0,
            txid,
            pdid: 4,
        };
        // Node 1 posts two collectives, node 0 only the first.
        {
            let (e, m) = &mut net.nodes[members[1]];
            write_vec(m, SRC, &[5; 20], 8);
            e.post(mk(1, 20)).unwrap();
            e.post(mk(2, 20)).unwrap();
        }
        {
            let (e, m) = &mut net.nodes[members[0]];
            write_vec(m, SRC, &[7; 20], 8);
            e.post(mk(1, 20)).unwrap();
        }
        net.run();
        assert_eq!(
            net.nodes[members[0]].0.pop_completion().unwrap().status,
            ArStatus::Ok
        );
        assert_eq!(
            net.nodes[members[1]].0.pop_completion().unwrap().status,
            ArStatus::Ok
        );
        // Node 1's second collective has sent its fragments; node 0 holds them.
        assert_eq!(
            net.nodes[members[0]].0.counters().rejected,
            [0; FRAG_REJECTS]
        );
        {
            let (e, m) = &mut net.nodes[members[0]];
            write_vec(m, SRC, &[1; 20], 8);
            e.post(mk(2, 20)).unwrap();
        }
        net.run();
        for &node in &members {
            let (e, m) = &mut net.nodes[node];
            assert_eq!(e.pop_completion().unwrap().status, ArStatus::Ok);
            assert_eq!(read_vec(m, DST, 20, 8), vec![6; 20]);
        }
    }
}
