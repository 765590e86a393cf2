//! Allreduce over the timed network: golden NIs ([`crate::ni::Ni`], with
//! the allreduce engine) as the network's endpoints, their packets carried
//! as raw packets ([`Network::send_raw`]) through the same golden routers
//! and framed links as any synthetic traffic, which may run beside them.
//!
//! Two ways to reduce, on the same NIs and network:
//! - [`ArMode::Hardware`]: every rank posts one allreduce descriptor
//!   through its registers ([`driver::post_allreduce`]); the engine's
//!   fragments are the network's packets; a rank is done when its
//!   Allreduce completion is in its completion queue.
//! - [`ArMode::Software`]: the same schedule ([`schedule::steps`], the
//!   same algorithm choice by `threshold`) built from point-to-point RDMA
//!   writes posted on a user channel; a rank learns that its partner's
//!   data landed from its WriteIn completion, and reduces in software.
//!
//! # Timing assumed at the NI (the golden NI itself is untimed)
//! - A packet the NI emits at cycle t is queued for injection at
//!   `t + ni_tx_cycles` (descriptor fetch / memory read pipeline); at most
//!   `tx_ahead` packets of one NI are between emission and injection (the
//!   NI's transmit read-ahead, `ni.tx_ahead`); the endpoint injects one
//!   flit per cycle.
//! - A packet whose tail the endpoint consumed at cycle t is offered to the
//!   NI at `t + ni_rx_cycles` (receive pipeline and memory write). An NI
//!   that answers Busy is offered the same packet again each cycle.
//! - Host software: `host_cycles` (the per-message software overhead,
//!   library + NI doorbell share) before each message it posts: once per
//!   collective in hardware mode (the one descriptor), once per RDMA write
//!   in software mode; software also spends `reduce_cycles_per_element`
//!   per received element it combines (storing steps cost nothing: the
//!   RDMA write landed where the result belongs).
//!
//! - The engine's own work (hardware mode), which the golden NI does at
//!   once, at the event that makes a step ready: see "Combining cost"
//!   below.
//!
//! `ni_tx_cycles`, `ni_rx_cycles` and the software costs are parameters;
//! the combining cost is derived from the RTL engine's state machines.
//!
//! # Combining cost (hardware mode)
//! The RTL engine (`hdl/src/ni/allreduce.rs`, `templates/ni/ar_copy.v`,
//! `ar_send.v`) holds the NI (no receive decision, no fragment picked, no
//! completion) while it combines or stores a step's received bytes, one
//! `max_payload_bytes` chunk at a time, and while its step sequencer
//! presents the next step. This wrapper charges the same: after each call
//! into a golden NI it reads how many steps the engine did
//! ([`crate::allreduce::engine::Engine::running_step`]) and holds that NI
//! for their cost; the golden NI itself stays untimed (the co-simulations
//! compare it transaction by transaction with the RTL, untouched).
//! With `L` = `mem_cycles` (the memory's latency: AR to the first R beat
//! and last W beat to B, each `L + 1` cycles in the RTL benches'
//! fixed-latency memory), `b` = the chunk's 16-byte beats and
//! `A` = [`REDUCE_ALU_LATENCY`], a step's chunks cost what the three
//! overlapped stages of `ar_copy.v` take (session 39: two banks per
//! buffer and four chunk records; see `hdl/src/ni/allreduce.rs`,
//! "Combining", *Schedule*), followed cycle by cycle in
//! [`step_data_cycles`]:
//! - the read half issues a chunk's ARs (the received bytes, then for a
//!   combining step the partial, back to back) as soon as the previous
//!   chunk's are out and one of the four chunk records is free (a record
//!   is free when its bank is), and takes its beats from `L + 1` cycles
//!   after its first AR, one a cycle (`2 b` combining, `b` storing), after
//!   the previous chunk's beats and once the chunk two before has left
//!   the bank (combining: the ALU fed its `b` flits; storing: the write
//!   sent its last W beat; free the cycle after);
//! - the ALU stage takes a chunk whose beats are in once it has handed
//!   the previous chunk on (the same cycle): `b` flits, the last result
//!   `A` cycles later, handed to the write half once idle;
//! - the write half: AW 1, `b` W beats; the B `L + 1` after the last W
//!   beat, and the step ends two cycles after the last B (taken, then
//!   the machine idle). B responses are not awaited between chunks (the
//!   RTL's `cp_safe`: the steps' read ranges here are the scratch bank
//!   and the source or destination, never overlapping the destination
//!   other than exactly).
//!
//! In steady state a combining chunk costs `max(2 b, b + A + 1, b + 2)`
//! cycles (the read channel's beats: 16 for 128 bytes) and a storing
//! chunk `b + 2` (the write's AW and W beats), whatever `L` up to what
//! four chunk records cover (the next chunks' reads are out while the
//! current beats arrive; storing `L + 1 <= 2 b + 6`, combining
//! `L + 1 <= 5 b - 1`: 22 and 39 at 128-byte chunks); the last chunk
//! of a step adds its ALU pass, write and B: a step of one chunk costs
//! `2 (L + 1) + 4 b + A + 4` combining and `2 (L + 1) + 2 b + 3` storing.
//! (Session 38, one bank per buffer: `(L + 1) + 2 b + 1` per combining
//! chunk and `(L + 1) + b + 1` per storing chunk; before session 38 each
//! chunk waited for the previous chunk's B and read the partial after
//! the received bytes: `3 (L + 1) + 4 b + A + 5` per combining chunk and
//! `2 (L + 1) + 2 b + 3` per storing chunk.)
//!
//! and each step adds `step_cycles` (the sequencer's handshakes: the
//! DOORBELL's check before the first step, then after each step the
//! next step presented, or the collective's end noticed). Fragments are
//! picked again, and the completion is seen, when the hold ends.
//!
//! # Method
//! Each repetition: new random inputs (seeded), every rank starts at the
//! same cycle t0; the repetition's latency is the cycle the last rank is
//! done minus t0. The network and every NI then drain before the next one.
//! Every rank's result is compared bit for bit with
//! [`schedule::reference`]. Synthetic background traffic, if the network's
//! workload has a rate, flows throughout and is checked by the scoreboard.

use super::params::NetworkParams;
use super::sim::Network;
use crate::allreduce::reduce_alu::{ReduceDtype, ReduceOp, REDUCE_ALU_LATENCY};
use crate::allreduce::schedule::{self, Algorithm, CommBox, Step};
use crate::ni::driver::{self, Allreduce};
use crate::ni::wire::Packet;
use crate::ni::{CqKind, CqStatus, Descriptor, Ni, NiParams, Op, RxOutcome};
use crate::packet::coords::Coords;
use crate::rng::Rng;
use anyhow::{bail, Context, Result};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

/// How the ranks reduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArMode {
    /// The NI's allreduce engine.
    Hardware,
    /// Software over RDMA writes.
    Software,
}

/// One allreduce workload.
#[derive(Clone, Debug, PartialEq)]
pub struct ArParams {
    pub mode: ArMode,
    pub op: ReduceOp,
    pub dtype: ReduceDtype,
    /// Elements per vector.
    pub count: usize,
    /// The communicator.
    pub comm: CommBox,
    pub repetitions: usize,
    /// AR_THRESHOLD: vectors above it (bytes) use reduce-scatter + allgather.
    pub threshold: usize,
    pub ni_tx_cycles: u64,
    pub ni_rx_cycles: u64,
    /// Packets of one NI between emission and injection, at most.
    pub tx_ahead: usize,
    /// Hardware mode: the memory latency the engine's combining sees,
    /// cycles (see the module doc, "Combining cost").
    pub mem_cycles: u64,
    /// Hardware mode: the step sequencer's cycles per step (see the
    /// module doc).
    pub step_cycles: u64,
    /// Software overhead per message posted, cycles.
    pub host_cycles: u64,
    /// Software reduction cost per element combined, cycles.
    pub reduce_cycles_per_element: f64,
    /// Longest repetition before the run is reported stuck, cycles.
    pub max_cycles: u64,
    pub seed: u64,
}

/// What a run measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArReport {
    pub ranks: usize,
    /// Per repetition: cycles from the common start to the last rank done.
    pub latency: Vec<u64>,
    /// Per repetition: cycles to the first rank done.
    pub first_done: Vec<u64>,
    /// Rank results compared with the reference (ranks x repetitions).
    pub checked: usize,
    /// Results that differ, and collectives that failed (first 20).
    pub errors: Vec<String>,
    pub error_count: usize,
    /// NI packets carried (fragments, writes, responses).
    pub packets: u64,
    /// Flits of those packets.
    pub flits: u64,
    /// Synthetic background packets delivered, and the scoreboard's errors.
    pub background_delivered: u64,
    pub background_errors: Vec<String>,
    /// Cycles simulated and wall-clock seconds.
    pub cycles: u64,
    pub wall_s: f64,
    /// Router ticks executed (idle routers are skipped).
    pub router_ticks: u64,
}

impl ArReport {
    /// No wrong result, failed collective or background error.
    pub fn clean(&self) -> bool {
        self.error_count == 0 && self.background_errors.is_empty()
    }
}

/// Cycles from a step's first AR to the RTL data path idle again, for
/// chunks of `beats` 16-byte beats, combining (`combine`) or storing, at
/// memory latency `l` (AR to first R beat and last W beat to B, `l + 1`
/// each) and ALU latency `a`: the three stages of `ar_copy.v` followed
/// chunk by chunk (the module doc, "Combining cost"). Every time below is
/// the cycle an event happens, the step's first AR in cycle 0.
pub fn step_data_cycles(
    beats: impl IntoIterator<Item = u64>,
    combine: bool,
    l: u64,
    a: u64,
) -> u64 {
    let l1 = l + 1;
    let ars = if combine { 2 } else { 1 };
    // The next chunk's first AR at the earliest (the previous chunk's ARs
    // out); the R channel's next beat; when the ALU stage takes a chunk;
    // when the write half is idle; when each chunk record (chunk j in
    // record j mod 4) and each bank (j mod 2) is free again.
    let (mut ar_next, mut r_next, mut alu_free, mut cw_idle) = (0u64, 0u64, 0u64, 0u64);
    let mut rec_free = [0u64; 4];
    let mut bank_free = [0u64; 2];
    let mut end = 0;
    for (k, b) in beats.into_iter().enumerate() {
        let ar = ar_next.max(rec_free[k % 4]);
        ar_next = ar + ars;
        let reads = if combine { 2 * b } else { b };
        let first = (ar + l1).max(r_next).max(bank_free[k % 2]);
        // The cycle that sees every beat in.
        let seen = first + reads;
        r_next = seen;
        // The cycle the chunk goes to the write half (hand), through the
        // ALU stage for a combining chunk, and the cycle its bank (and
        // record) is free again: after the ALU's last flit, or the
        // write's last W beat.
        let (hand, freed) = if combine {
            let start = seen.max(alu_free);
            let h = (start + 1 + b + a).max(cw_idle);
            alu_free = h;
            (h, start + b + 1)
        } else {
            let h = seen.max(cw_idle);
            (h, h + b + 2)
        };
        rec_free[k % 4] = freed;
        bank_free[k % 2] = freed;
        // AW at hand + 1, W beats hand + 2 ..= hand + b + 1, the B
        // `l + 1` later, taken; the machine idle two cycles after.
        cw_idle = hand + b + 2;
        end = end.max(hand + b + 1 + l1 + 2);
    }
    end
}

const SRC: u64 = 0x0100_0000;
const DST: u64 = 0x0200_0000;
const SW_SEND: u64 = 0x1000_0000;
const SW_RECV: u64 = 0x2000_0000;
const SCRATCH: u64 = 0x4000_0000;
const AR_PDID: u16 = 0x11;
const SW_PDID: u16 = 0x22;
/// Largest vector, bytes (the memory layout's spacing).
pub const MAX_VECTOR_BYTES: usize = 1 << 20;

/// Where a hardware rank's engine is, as this wrapper has charged it.
#[derive(Clone, Debug, Default)]
struct HwRank {
    /// The rank's plan (the engine's: same ranks, count and algorithm).
    plan: Vec<Step>,
    /// Steps charged.
    at: usize,
    /// A collective is running (posted, its end not charged yet).
    active: bool,
    /// The NI is held (the engine combines or presents a step) before
    /// this cycle.
    held_until: u64,
}

/// Where a software rank is.
#[derive(Clone, Debug, Default)]
struct SwRank {
    steps: Vec<Step>,
    next: usize,
    partial: Vec<u64>,
    /// The current step's send is posted (or it sends nothing).
    posted: bool,
    /// Per step index: its data landed (this repetition).
    landed: Vec<bool>,
    /// The current step's combine is scheduled.
    reducing: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// Hardware: post the descriptor. Software: post the current step's write.
    Post,
    /// Software: the current step's received data is combined.
    Reduced,
}

struct Run<'a> {
    p: &'a ArParams,
    net: Network,
    nis: Vec<Ni>,
    /// Per rank: its terminal.
    term: Vec<usize>,
    /// Per terminal: its rank (usize::MAX: none).
    rank_of_term: Vec<usize>,
    coords: Vec<Coords>,
    /// Packets emitted, waiting for injection: (cycle, rank, class, packet).
    txq: VecDeque<(u64, usize, usize, Packet)>,
    tx_pending: Vec<usize>,
    /// Packets arrived, waiting to be offered: (cycle, rank, class, packet).
    rxq: VecDeque<(u64, usize, usize, Packet)>,
    pending: Vec<VecDeque<(usize, Packet)>>,
    hot: Vec<usize>,
    is_hot: Vec<bool>,
    events: BinaryHeap<Reverse<(u64, usize, Ev)>>,
    done: Vec<Option<u64>>,
    sw: Vec<SwRank>,
    hw: Vec<HwRank>,
    rep: usize,
    report: ArReport,
    esize: usize,
    /// Software: bytes between the per-step send / receive buffers.
    stride: u64,
}

/// Run the workload on a network built from `net` (its synthetic workload,
/// if any, is the background traffic). Errors for a bad parameter mix,
/// naming the parameter; wrong results are in the report.
pub fn run_allreduce(net: &NetworkParams, p: &ArParams) -> Result<ArReport> {
    let start = Instant::now();
    let topo = net.router.topology.clone();
    if topo.local_ports != 1 {
        bail!(
            "allreduce workload: topology.local_ports = {}, needs 1 (one NI per router)",
            topo.local_ports
        );
    }
    if net.router.flit_bits != 128 {
        bail!(
            "allreduce workload: packet.flit_bits = {}, needs 128 (the NI's packet words)",
            net.router.flit_bits
        );
    }
    if net.router.classes != 2 {
        bail!("allreduce workload: router.classes = 1, the NI needs 2");
    }
    p.comm
        .validate(topo.dims)
        .context("allreduce.origin / allreduce.extent")?;
    let esize = p.dtype.bits() / 8;
    if !p.dtype.supports(p.op) {
        bail!(
            "allreduce.op = {:?} is not defined on allreduce.dtype = {:?}",
            p.op.name(),
            p.dtype.name()
        );
    }
    if p.count == 0 || p.count * esize > MAX_VECTOR_BYTES {
        bail!(
            "allreduce.count = {}: must be 1..={} elements of {} ({} bytes at most)",
            p.count,
            MAX_VECTOR_BYTES / esize,
            p.dtype.name(),
            MAX_VECTOR_BYTES
        );
    }
    if p.repetitions == 0 {
        bail!("allreduce.repetitions = 0: must be >= 1");
    }
    if p.tx_ahead == 0 {
        bail!("ni.tx_ahead = 0: must be >= 1");
    }
    let max_payload = net.max_payload().min(256);
    if !crate::ni::params::MAX_PAYLOAD_CHOICES.contains(&max_payload) {
        bail!(
            "allreduce workload: packet.max_payload_bytes = {max_payload}, the NI takes one of {:?}",
            crate::ni::params::MAX_PAYLOAD_CHOICES
        );
    }
    let ranks = p.comm.ranks();
    let vec_bytes = (p.count * esize) as u64;
    let k = schedule::pow2_floor(ranks).trailing_zeros() as u64;
    let scratch_bytes = (2 * (k + 2) * vec_bytes).div_ceil(4096) * 4096;
    let nip = NiParams {
        channels: 2,
        max_payload_bytes: max_payload,
        mailbox_msg_bytes: 64.min(max_payload),
        ar_communicators: 1,
        ar_max_vector_bytes: MAX_VECTOR_BYTES,
        torus_dims: topo.dims,
        cq_depth: 64,
        ..Default::default()
    };
    let mut nis = Vec::with_capacity(ranks);
    let mut term = Vec::with_capacity(ranks);
    let mut coords = Vec::with_capacity(ranks);
    let mut rank_of_term = vec![usize::MAX; topo.num_nodes()];
    let max_steps = schedule::step_count(ranks, Algorithm::ReduceScatterAllgather);
    // Software buffers: one vector per step index, back to back (16-byte aligned).
    let stride = vec_bytes.next_multiple_of(16);
    for r in 0..ranks {
        let c = p.comm.coords_of(r, topo.dims);
        let node = topo.node_at(c);
        let me = Coords::new(c[0] as u8, c[1] as u8, c[2] as u8, 0)?;
        let mut ni = Ni::new(&nip, me)?;
        driver::set_channel_pdid(&mut ni, 0, AR_PDID)?;
        driver::set_channel_pdid(&mut ni, 1, SW_PDID)?;
        driver::set_window(&mut ni, 0, SW_RECV, max_steps as u64 * stride, SW_PDID)?;
        driver::set_communicator(
            &mut ni,
            0,
            &p.comm,
            r,
            AR_PDID,
            SCRATCH,
            scratch_bytes as u32,
        )?;
        set_reg(&mut ni, crate::ni::regs::AR_THRESHOLD, p.threshold as u32)?;
        nis.push(ni);
        term.push(node);
        coords.push(me);
        rank_of_term[node] = r;
    }
    let mut run = Run {
        p,
        net: Network::new(net)?,
        nis,
        term,
        rank_of_term,
        coords,
        txq: VecDeque::new(),
        tx_pending: vec![0; ranks],
        rxq: VecDeque::new(),
        pending: vec![VecDeque::new(); ranks],
        hot: Vec::new(),
        is_hot: vec![false; ranks],
        events: BinaryHeap::new(),
        done: vec![None; ranks],
        sw: vec![SwRank::default(); ranks],
        hw: vec![HwRank::default(); ranks],
        rep: 0,
        report: ArReport {
            ranks,
            ..Default::default()
        },
        esize,
        stride,
    };
    let mut rng = Rng::new(p.seed);
    for rep in 0..p.repetitions {
        run.rep = rep;
        run.repetition(&mut rng)?;
    }
    run.net.stop_traffic();
    let drained = run.net.drain_all(1_000_000);
    let (errs, n) = run.net.errors();
    run.report.background_errors = errs.to_vec();
    if n > 20 {
        run.report
            .background_errors
            .push(format!("... {n} scoreboard errors in all"));
    }
    if !drained {
        run.report
            .background_errors
            .push("background traffic did not drain".into());
    }
    if let Some(d) = run.net.deadlock() {
        run.report
            .background_errors
            .push(format!("deadlock at cycle {}", d.cycle));
    }
    run.report.background_delivered = run.net.delivered();
    run.report.cycles = run.net.cycle();
    run.report.router_ticks = run.net.router_ticks();
    run.report.wall_s = start.elapsed().as_secs_f64();
    Ok(run.report)
}

fn set_reg(ni: &mut Ni, addr: u32, v: u32) -> Result<()> {
    if ni.axil_write_priv(addr, v) != crate::ni::AxilResp::Okay {
        bail!("NI register 0x{addr:05x} refused the value {v}");
    }
    Ok(())
}

/// Random elements with zeros and all-ones mixed in.
fn random_elems(rng: &mut Rng, n: usize, dtype: ReduceDtype) -> Vec<u64> {
    let mask = if dtype.bits() == 32 { 0xFFFF_FFFF } else { !0 };
    (0..n)
        .map(|_| match rng.below(16) {
            0 => 0,
            1 => mask,
            _ => rng.next_u64() & mask,
        })
        .collect()
}

fn to_bytes(v: &[u64], esize: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * esize);
    for x in v {
        out.extend_from_slice(&x.to_le_bytes()[..esize]);
    }
    out
}

fn from_bytes(b: &[u8], esize: usize) -> Vec<u64> {
    b.chunks(esize)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

impl Run<'_> {
    fn error(&mut self, msg: String) {
        self.report.error_count += 1;
        if self.report.errors.len() < 20 {
            self.report.errors.push(msg);
        }
    }

    fn heat(&mut self, r: usize) {
        if !self.is_hot[r] {
            self.is_hot[r] = true;
            self.hot.push(r);
        }
    }

    fn repetition(&mut self, rng: &mut Rng) -> Result<()> {
        let p = self.p;
        let ranks = self.nis.len();
        let inputs: Vec<Vec<u64>> = (0..ranks)
            .map(|_| random_elems(rng, p.count, p.dtype))
            .collect();
        let want = schedule::reference(p.op, p.dtype, &inputs)?;
        let t0 = self.net.cycle();
        self.done.fill(None);
        let algo = Algorithm::for_size(p.count * self.esize, p.threshold);
        for (r, input) in inputs.iter().enumerate() {
            match p.mode {
                ArMode::Hardware => {
                    let b = to_bytes(input, self.esize);
                    self.nis[r].mem_mut().write(SRC, &b);
                    self.hw[r] = HwRank {
                        plan: schedule::steps(ranks, r, p.count, algo),
                        ..Default::default()
                    };
                }
                ArMode::Software => {
                    self.sw[r] = SwRank {
                        steps: schedule::steps(ranks, r, p.count, algo),
                        next: 0,
                        partial: input.clone(),
                        posted: false,
                        landed: vec![false; schedule::step_count(ranks, algo)],
                        reducing: false,
                    };
                }
            }
        }
        match p.mode {
            ArMode::Hardware => {
                for r in 0..ranks {
                    self.events.push(Reverse((t0 + p.host_cycles, r, Ev::Post)));
                }
            }
            ArMode::Software => {
                for r in 0..ranks {
                    self.begin_step(r, t0);
                }
            }
        }
        let limit = t0 + p.max_cycles;
        while self.done.iter().any(Option::is_none) {
            let t = self.net.cycle();
            if t >= limit {
                let stuck: Vec<usize> = (0..ranks).filter(|&r| self.done[r].is_none()).collect();
                let engine = self.nis[stuck[0]].engine().map(|e| *e.counters());
                bail!(
                    "allreduce repetition {}: ranks {:?}{} not done after {} cycles \
                     (allreduce.max_cycles); rank {}'s engine: {engine:?}",
                    self.rep,
                    &stuck[..stuck.len().min(8)],
                    if stuck.len() > 8 { " ..." } else { "" },
                    p.max_cycles,
                    stuck[0]
                );
            }
            if let Some(d) = self.net.deadlock() {
                bail!(
                    "allreduce repetition {}: network deadlock at cycle {}",
                    self.rep,
                    d.cycle
                );
            }
            self.cycle(t)?;
        }
        // drain: every NI idle, nothing in flight
        while !self.hot.is_empty() || !self.txq.is_empty() || !self.rxq.is_empty() {
            let t = self.net.cycle();
            if t >= limit + p.max_cycles {
                bail!("allreduce repetition {}: NIs did not go idle", self.rep);
            }
            self.cycle(t)?;
        }
        let done: Vec<u64> = self
            .done
            .iter()
            .map(|d| d.expect("all done") - t0)
            .collect();
        self.report.latency.push(*done.iter().max().expect("ranks"));
        self.report
            .first_done
            .push(*done.iter().min().expect("ranks"));
        for r in 0..ranks {
            let got = match p.mode {
                ArMode::Hardware => from_bytes(
                    &self.nis[r].mem().read(DST, p.count * self.esize),
                    self.esize,
                ),
                ArMode::Software => self.sw[r].partial.clone(),
            };
            self.report.checked += 1;
            if got != want {
                let i = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
                self.error(format!(
                    "repetition {}: rank {r} element {i} = {:#x}, reference {:#x}",
                    self.rep, got[i], want[i]
                ));
            }
        }
        Ok(())
    }

    /// Software rank `r` starts its current step (or is done) at `t`.
    fn begin_step(&mut self, r: usize, t: u64) {
        let s = &mut self.sw[r];
        let Some(step) = s.steps.get(s.next) else {
            self.done[r] = Some(t);
            return;
        };
        s.posted = step.send.is_empty();
        s.reducing = false;
        if !s.posted {
            let data = to_bytes(&s.partial[step.send.clone()], self.esize);
            let at = SW_SEND + step.index as u64 * self.stride;
            self.nis[r].mem_mut().write(at, &data);
            self.events
                .push(Reverse((t + self.p.host_cycles, r, Ev::Post)));
        } else {
            self.try_progress(r, t);
        }
    }

    /// Software rank `r`: its step's send is posted; reduce when the
    /// partner's data has landed.
    fn try_progress(&mut self, r: usize, t: u64) {
        let s = &mut self.sw[r];
        let step = &s.steps[s.next];
        if !s.posted || s.reducing {
            return;
        }
        if step.recv.is_empty() {
            s.next += 1;
            self.begin_step(r, t);
            return;
        }
        if !s.landed[step.index] {
            return;
        }
        s.reducing = true;
        let cost = if step.combine {
            (step.recv.len() as f64 * self.p.reduce_cycles_per_element).ceil() as u64
        } else {
            0
        };
        self.events.push(Reverse((t + cost, r, Ev::Reduced)));
    }

    /// Software rank `r`'s current step's data is combined (or stored).
    fn reduced(&mut self, r: usize, t: u64) {
        let esize = self.esize;
        let (op, dtype) = (self.p.op, self.p.dtype);
        let s = &mut self.sw[r];
        let step = s.steps[s.next].clone();
        let at = SW_RECV + step.index as u64 * self.stride + (step.recv.start * esize) as u64;
        let got = from_bytes(&self.nis[r].mem().read(at, step.recv.len() * esize), esize);
        let mine = &mut s.partial[step.recv.clone()];
        if step.combine {
            let c = schedule::combine(op, dtype, mine, &got);
            mine.copy_from_slice(&c);
        } else {
            mine.copy_from_slice(&got);
        }
        s.next += 1;
        self.begin_step(r, t);
    }

    /// Rank `r` posts at `t`: the descriptor, or the current step's write.
    fn post(&mut self, r: usize) -> Result<()> {
        let p = self.p;
        let resp = match p.mode {
            ArMode::Hardware => driver::post_allreduce(
                &mut self.nis[r],
                0,
                &Allreduce {
                    op: p.op.code() as u32,
                    dtype: p.dtype.code() as u32,
                    count: p.count as u32,
                    src: SRC,
                    dst: DST,
                    comm: 0,
                    txid: (self.rep & 0x3FFF) as u16,
                },
            ),
            ArMode::Software => {
                let s = &self.sw[r];
                let step = &s.steps[s.next];
                let partner = self.coords[step.partner];
                let bytes = step.send.len() * self.esize;
                let d = Descriptor {
                    op: Op::Write,
                    laddr: SW_SEND + step.index as u64 * self.stride,
                    raddr: SW_RECV
                        + step.index as u64 * self.stride
                        + (step.send.start * self.esize) as u64,
                    len: bytes as u32,
                    dest: partner,
                    notify: false,
                    txid: self.sw_txid(step.index),
                };
                driver::post(&mut self.nis[r], 1, &d)
            }
        };
        if resp != crate::ni::AxilResp::Okay {
            bail!("rank {r}: the NI refused a descriptor ({resp:?})");
        }
        if p.mode == ArMode::Hardware {
            let t = self.net.cycle();
            let h = &mut self.hw[r];
            h.active = true;
            h.at = 0;
            // The DOORBELL's check and the first step's presentation.
            h.held_until = h.held_until.max(t) + p.step_cycles;
            self.charge(r, t);
        }
        self.heat(r);
        Ok(())
    }

    /// Cycles to combine or store `bytes` in chunks of the NI's largest
    /// payload (the module doc, "Combining cost").
    fn data_cycles(&self, bytes: usize, combine: bool) -> u64 {
        let p = self.nis[0].params().max_payload_bytes;
        let beats = (0..bytes.div_ceil(p)).map(|i| (bytes - i * p).min(p).div_ceil(16) as u64);
        step_data_cycles(beats, combine, self.p.mem_cycles, REDUCE_ALU_LATENCY as u64)
    }

    /// After a call into rank `r`'s NI at `t`: charge the steps its engine
    /// did since the last look (and the collective's end) by holding the
    /// NI. True when it is held now.
    fn charge(&mut self, r: usize, t: u64) -> bool {
        if !self.hw[r].active {
            return self.hw[r].held_until > t;
        }
        let plan_len = self.hw[r].plan.len();
        let now_at = match self.nis[r].engine().and_then(|e| e.running_step()) {
            Some(at) => at.min(plan_len),
            // Finished: every step and the end.
            None => plan_len + 1,
        };
        let from = self.hw[r].at;
        if now_at > from {
            let mut cost = 0;
            for i in from..now_at.min(plan_len) {
                let s = &self.hw[r].plan[i];
                cost += self.p.step_cycles;
                if !s.recv.is_empty() {
                    cost += self.data_cycles(s.recv.len() * self.esize, s.combine);
                }
            }
            if now_at > plan_len && plan_len == 0 {
                // A single rank copies its source to its destination.
                cost += self.data_cycles(self.p.count * self.esize, false);
            }
            let h = &mut self.hw[r];
            h.at = now_at;
            h.active = now_at <= plan_len;
            h.held_until = h.held_until.max(t) + cost;
        }
        self.hw[r].held_until > t
    }

    fn sw_txid(&self, index: usize) -> u16 {
        (((self.rep & 0xFF) << 6) | index) as u16
    }

    /// One cycle: events due, packets due at the NIs, the NIs' work, then
    /// the network.
    fn cycle(&mut self, t: u64) -> Result<()> {
        while let Some(&Reverse((at, r, ev))) = self.events.peek() {
            if at > t {
                break;
            }
            self.events.pop();
            match ev {
                Ev::Post => {
                    self.post(r)?;
                    if self.p.mode == ArMode::Software {
                        self.sw[r].posted = true;
                        self.try_progress(r, t);
                    }
                }
                Ev::Reduced => self.reduced(r, t),
            }
        }
        while self.rxq.front().is_some_and(|e| e.0 <= t) {
            let (_, r, class, pkt) = self.rxq.pop_front().expect("front");
            self.pending[r].push_back((class, pkt));
            self.heat(r);
        }
        while self.txq.front().is_some_and(|e| e.0 <= t) {
            let (_, r, class, pkt) = self.txq.pop_front().expect("front");
            self.tx_pending[r] -= 1;
            let dest = crate::packet::header::DEST.get(pkt.header_word()) as u32;
            let dims = self.net.topology().dims;
            let dst = Coords::from_bits(dest)
                .ok()
                .map(|c| [c.x() as usize, c.y() as usize, c.z() as usize])
                .filter(|c| (0..3).all(|d| c[d] < dims[d]))
                .map(|c| self.net.topology().node_at(c));
            let Some(dst) = dst else {
                self.error(format!("rank {r} sent a packet to no node: {dest:#x}"));
                continue;
            };
            self.report.packets += 1;
            self.report.flits += pkt.len_words() as u64;
            self.net
                .send_raw(self.term[r], dst, pkt.to_flits(0), class)?;
        }
        let hot = std::mem::take(&mut self.hot);
        let mut keep = Vec::with_capacity(hot.len());
        for r in hot {
            self.work(r, t);
            let busy = self.nis[r].has_packet()
                || !self.pending[r].is_empty()
                || self.hw[r].held_until > t;
            if busy {
                keep.push(r);
            } else {
                self.is_hot[r] = false;
            }
        }
        keep.append(&mut self.hot);
        self.hot = keep;
        self.net.step();
        for a in self.net.take_arrivals() {
            let r = self.rank_of_term[a.term];
            if r == usize::MAX {
                self.error(format!(
                    "an NI packet reached terminal {}, which has no rank",
                    a.term
                ));
                continue;
            }
            let class = a.vc as usize / self.net.vcs_per_class();
            self.rxq.push_back((
                a.cycle + self.p.ni_rx_cycles,
                r,
                class,
                Packet::from_flits(&a.flits),
            ));
        }
        Ok(())
    }

    /// Rank `r` at `t`: offer the packets due, take completions, emit.
    /// While the engine holds the NI (hardware mode, "Combining cost"),
    /// nothing is offered, emitted or taken.
    fn work(&mut self, r: usize, t: u64) {
        if self.hw[r].held_until > t {
            return;
        }
        while let Some((class, pkt)) = self.pending[r].front() {
            match self.nis[r].receive_packet_on(pkt, *class) {
                RxOutcome::Busy => break,
                RxOutcome::Rejected(why) => {
                    let msg = format!("rank {r}: the NI rejected a packet ({why:?})");
                    self.error(msg);
                }
                RxOutcome::Accepted | RxOutcome::Refused => {}
            }
            self.pending[r].pop_front();
            if self.charge(r, t) {
                return;
            }
        }
        while self.hw[r].held_until <= t
            && self.tx_pending[r]
                + self.net.queued_at(self.term[r], 0)
                + self.net.queued_at(self.term[r], 1)
                < self.p.tx_ahead
        {
            let (class, pkt) = match self.nis[r].emit_response() {
                Some(p) => (1, p),
                None => match self.nis[r].emit_request() {
                    Some(p) => (0, p),
                    None => break,
                },
            };
            self.tx_pending[r] += 1;
            self.txq.push_back((t + self.p.ni_tx_cycles, r, class, pkt));
            self.charge(r, t);
        }
        if self.hw[r].held_until > t {
            return;
        }
        // after emitting too: a collective whose last step only sends completes then
        while let Some(e) = driver::pop_completion(&mut self.nis[r]) {
            match (self.p.mode, e.kind) {
                (ArMode::Hardware, CqKind::Allreduce) => {
                    if e.status != CqStatus::Ok {
                        self.error(format!(
                            "repetition {}: rank {r}'s allreduce failed, status {:?} reason {}",
                            self.rep, e.status, e.reason
                        ));
                    }
                    self.done[r] = Some(t);
                }
                (ArMode::Software, CqKind::WriteIn) => {
                    let index = (e.txid & 0x3F) as usize;
                    if e.txid >> 6 != (self.rep & 0xFF) as u16 || e.status != CqStatus::Ok {
                        self.error(format!("rank {r}: unexpected write completion {e:?}"));
                        continue;
                    }
                    self.sw[r].landed[index] = true;
                    self.try_progress(r, t);
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::step_data_cycles;

    /// The stage model against the RTL's closed forms (the module doc,
    /// "Combining cost"): one chunk, and the steady state a chunk adds,
    /// at L = 15, A = 6, 128-byte chunks (8 beats), bound by the read
    /// channel (combining) or the write (storing), not by L.
    #[test]
    fn step_cost_follows_the_overlapped_stages() {
        let (l, a) = (15, 6);
        assert_eq!(step_data_cycles([8], true, l, a), 2 * 16 + 4 * 8 + 6 + 4);
        assert_eq!(step_data_cycles([8], false, l, a), 2 * 16 + 2 * 8 + 3);
        // Steady state: the read channel's 2 b beats per combining chunk,
        // the write's b + 2 cycles per storing chunk, for L up to what
        // four chunk records hide (storing: L + 1 <= 2 b + 6).
        for l in [2, 15, 21] {
            let one = step_data_cycles([8], true, l, a);
            assert_eq!(
                step_data_cycles([8; 5], true, l, a),
                one + 4 * (2 * 8),
                "L = {l}"
            );
            let one = step_data_cycles([8], false, l, a);
            assert_eq!(
                step_data_cycles([8; 5], false, l, a),
                one + 4 * (8 + 2),
                "L = {l}"
            );
        }
        // A longer memory round trip than the records cover shows again.
        let s = step_data_cycles([8; 60], false, 40, a) - step_data_cycles([8; 20], false, 40, a);
        assert!(s > 40 * (8 + 2), "{s}");
        let c = step_data_cycles([8; 60], true, 40, a) - step_data_cycles([8; 20], true, 40, a);
        assert!(c > 40 * (2 * 8), "{c}");
        // A slower ALU (A = 12) bounds combining: b + A + 1 per chunk.
        let one = step_data_cycles([8], true, l, 12);
        assert_eq!(
            step_data_cycles([8; 5], true, l, 12),
            one + 4 * (8 + 12 + 1)
        );
        // Small chunks (2 beats) at L = 15: four records keep two chunks'
        // reads ahead of the banks, but not a round trip's worth of them,
        // so the memory shows again: more than the beats per chunk.
        let c = step_data_cycles([2; 9], true, l, a) - step_data_cycles([2; 8], true, l, a);
        assert!(c > 2 * 2 + 1, "{c}");
        assert_eq!(step_data_cycles([0u64; 0], true, l, a), 0);
    }
}
