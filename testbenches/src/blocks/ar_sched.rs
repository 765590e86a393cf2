//! Co-simulation bench of `ar_sched`, the allreduce engine's step
//! sequencer: RTL vs the golden schedule (`exanet_sim::allreduce::schedule::steps`)
//! and receive layout (`engine::layout_of`, `engine::scratch_needed`),
//! step by step (a transaction: a step taken with `valid && next`).
//!
//! Stimulus: lists started with a random rank count (small and
//! non-power-of-two counts such as 3, 5, 6, 7, 12 often; any count up to
//! `max_ranks`; powers of two), a random rank, an element count (tiny,
//! medium, zero, full 32-bit range, near 2^32) and either schedule;
//! one start in sixteen is illegal (P = 0, P over `max_ranks`, rank ≥ P).
//! `next` is drawn each cycle; a list is sometimes abandoned by a new
//! start, and rare reset pulses abandon it too.
//!
//! Checked: every step taken equals the golden list's next step (index,
//! phase, partner, send and receive ranges, combine, this rank's layout
//! offset, and — when it sends — the partner's layout offset of that step,
//! from the partner's own golden list); `done` only after the last golden
//! step, with `total` = the golden scratch need and `bad` as the golden
//! checks say; `valid` and `done` never together, nothing presented with
//! no list; and no hang: a step or `done` within `max_ranks`'s K + 6
//! cycles of the previous one being taken.

use super::BlockInfo;
use crate::cosim::{cmp, Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_hdl::allreduce::ar_sched::{emit_ar_sched, ArSchedParams};
use exanet_hdl::emit::Emitted;
use exanet_sim::allreduce::engine::{layout_of, scratch_needed};
use exanet_sim::allreduce::schedule::{pow2_floor, steps, Algorithm, CommBox, Step};
use exanet_sim::point;
use exanet_sim::rng::Rng;

/// Registry entry for `exanet cosim ar_sched`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "ar_sched",
        about: "allreduce step sequencer: schedule and scratch layout vs the golden schedule",
        matrix,
        point,
    }
}

/// Default matrix: a tiny machine, the 8×4×4 machine, the largest torus.
fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(
        vec!["max_ranks=6", "max_ranks=128", "max_ranks=4096"],
        point,
    )
}

/// Parse `max_ranks=..` (default 128).
fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(ArSchedBench::new(point::parse(text)?)?))
}

/// One expected step.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Expect {
    index: u64,
    phase: u64,
    partner: u64,
    send: (u64, u64),
    recv: (u64, u64),
    combine: bool,
    my_off: u64,
    /// `None` when the step sends nothing.
    their_off: Option<u64>,
}

/// The list the golden model gives for a start.
#[derive(Clone, Debug)]
struct Job {
    steps: Vec<Expect>,
    pos: usize,
    bad: bool,
    total: u64,
    done_seen: bool,
    /// Cycles since the last step was taken (or the start).
    waiting: u64,
    rsag: bool,
    ranks: u64,
    /// The box's extents driven on `ex`, `ey` (and implied z) when the
    /// rank count factors into extents of 1..=16: `partner_dig` is then
    /// checked at every step.
    boxed: Option<[usize; 3]>,
}

/// How often a run reached each case; the integration test asserts each was.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArSchedCoverage {
    /// Lists completed with recursive doubling.
    pub rd_lists: u64,
    /// Lists completed with reduce-scatter + allgather.
    pub rsag_lists: u64,
    /// Lists completed of a rank count that is not a power of two.
    pub non_pow2_lists: u64,
    /// Pre, reduce, gather, post steps taken.
    pub phases: [u64; 4],
    /// Illegal starts answered `bad`.
    pub bad_starts: u64,
    /// Lists abandoned by a start or a reset.
    pub abandoned: u64,
    /// Steps whose partner digits were checked (a boxed list), and of
    /// those, steps of a box with x extent 1 (the digits start at y or z)
    /// and pre / post steps (the distance is Q, not 2^level).
    pub dig_steps: u64,
    pub dig_steps_x1: u64,
    pub dig_steps_q: u64,
}

#[derive(Clone)]
struct Ports {
    reset: Port,
    start: Port,
    ranks: Port,
    rank: Port,
    count: Port,
    rsag: Port,
    next: Port,
    ex: Port,
    ey: Port,
    rdig: Port,
    qdig: Port,
    partner_dig: Port,
    valid: Port,
    done: Port,
    bad: Port,
    index: Port,
    phase: Port,
    partner_rank: Port,
    send_lo: Port,
    send_hi: Port,
    recv_lo: Port,
    recv_hi: Port,
    combine: Port,
    my_off: Port,
    their_off: Port,
    total: Port,
}

/// The `ar_sched` bench at one parameter point.
pub struct ArSchedBench {
    params: ArSchedParams,
    ports: Option<Ports>,
    job: Option<Job>,
    pending: Option<Job>,
    reset_now: bool,
    start_now: bool,
    next_now: bool,
    hang_limit: u64,
    cov: ArSchedCoverage,
}

/// The golden steps of rank `rank` of `p` for `n` elements, each with
/// this rank's layout offset of its receive range and, when it sends, the
/// partner's layout offset of the same step (in elements).
pub(crate) fn golden_steps(
    p: usize,
    rank: usize,
    n: usize,
    algo: Algorithm,
) -> Vec<(Step, u64, Option<u64>)> {
    let plan = steps(p, rank, n, algo);
    let layout = layout_of(&plan, 1);
    plan.into_iter()
        .zip(layout)
        .map(|(s, off)| {
            let their_off = (!s.send.is_empty()).then(|| {
                let theirs = steps(p, s.partner, n, algo);
                let at = theirs
                    .iter()
                    .position(|t| t.index == s.index)
                    .expect("partners share every step");
                layout_of(&theirs, 1)[at]
            });
            (s, off, their_off)
        })
        .collect()
}

/// The golden list of rank `rank` of `p` for `n` elements.
fn golden(p: usize, rank: usize, n: usize, algo: Algorithm) -> (Vec<Expect>, u64) {
    let list = golden_steps(p, rank, n, algo)
        .into_iter()
        .map(|(s, off, their_off)| Expect {
            index: s.index as u64,
            phase: s.phase as u64,
            partner: s.partner as u64,
            send: (s.send.start as u64, s.send.end as u64),
            recv: (s.recv.start as u64, s.recv.end as u64),
            combine: s.combine,
            my_off: off,
            their_off,
        })
        .collect();
    (list, scratch_needed(p, rank, n, 1, algo))
}

/// A box of `p` ranks with extents of 1..=16 (x fastest), when `p` has
/// one: chosen by `pick` among all such factorisations, so lists of one
/// rank count see several shapes (x extent 1 among them) without a draw
/// of the stimulus's random stream.
fn box_of(p: u64, pick: u64) -> Option<[usize; 3]> {
    let p = p as usize;
    let mut shapes = Vec::new();
    for ex in 1..=16 {
        for ey in 1..=16 {
            if p.is_multiple_of(ex * ey) && p / (ex * ey) <= 16 {
                shapes.push([ex, ey, p / (ex * ey)]);
            }
        }
    }
    (!shapes.is_empty()).then(|| shapes[pick as usize % shapes.len()])
}

/// A rank's digits in the box `e` as the sequencer takes and gives them:
/// `{z, y, x}`, 4 bits each (the golden `CommBox::coords_of` of a box at
/// the origin of a torus of its own size).
fn digits(rank: usize, e: [usize; 3]) -> u64 {
    let c = CommBox {
        origin: [0; 3],
        extent: e,
    }
    .coords_of(rank, e);
    (c[2] << 8 | c[1] << 4 | c[0]) as u64
}

impl ArSchedBench {
    /// A bench for `params`.
    pub fn new(params: ArSchedParams) -> Result<Self> {
        params.validate()?;
        let hang_limit = params.kmax() as u64 + 6;
        Ok(ArSchedBench {
            params,
            ports: None,
            job: None,
            pending: None,
            reset_now: false,
            start_now: false,
            next_now: false,
            hang_limit,
            cov: ArSchedCoverage::default(),
        })
    }

    /// Cases reached since the last [`Bench::reset`].
    pub fn coverage(&self) -> ArSchedCoverage {
        self.cov.clone()
    }

    /// Draw a start: (ranks, rank, count, rsag).
    fn draw(&self, rng: &mut Rng) -> (u64, u64, u64, bool) {
        let max = self.params.max_ranks as u64;
        let rsag = rng.chance(0.5);
        let count = match rng.below(10) {
            0..=2 => 1 + rng.below(16),
            3..=5 => 1 + rng.below(5000),
            6..=7 => rng.bits(32),
            8 => 0,
            _ => u32::MAX as u64 - rng.below(16),
        };
        if rng.below(16) == 0 {
            return match rng.below(3) {
                0 => (0, 0, count, rsag),
                1 => {
                    let p = 1 + rng.below(max.min(4095));
                    (p, p + rng.below(4096 - p), count, rsag)
                }
                _ => (max + 1 + rng.below(8191 - max), 0, count, rsag),
            };
        }
        let p = match rng.below(5) {
            0 | 1 => {
                let small = [1u64, 2, 3, 4, 5, 6, 7, 8, 12];
                let fit: Vec<u64> = small.into_iter().filter(|&s| s <= max).collect();
                fit[rng.below(fit.len() as u64) as usize]
            }
            2 | 3 => 1 + rng.below(max),
            _ => 1 << rng.below(self.params.kmax() as u64 + 1),
        };
        (p, rng.below(p), count, rsag)
    }
}

impl Bench for ArSchedBench {
    fn block(&self) -> &str {
        "ar_sched"
    }

    fn point(&self) -> String {
        point::to_text(&self.params)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_ar_sched(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        self.ports = Some(Ports {
            reset: sim.port_w("reset", 1)?,
            start: sim.port_w("start", 1)?,
            ranks: sim.port_w("ranks", 13)?,
            rank: sim.port_w("rank", 12)?,
            count: sim.port_w("count", 32)?,
            rsag: sim.port_w("rsag", 1)?,
            next: sim.port_w("next", 1)?,
            ex: sim.port_w("ex", 5)?,
            ey: sim.port_w("ey", 5)?,
            rdig: sim.port_w("rdig", 12)?,
            qdig: sim.port_w("qdig", 12)?,
            partner_dig: sim.port_w("partner_dig", 12)?,
            valid: sim.port_w("valid", 1)?,
            done: sim.port_w("done", 1)?,
            bad: sim.port_w("bad", 1)?,
            index: sim.port_w("index", 8)?,
            phase: sim.port_w("phase", 2)?,
            partner_rank: sim.port_w("partner_rank", 12)?,
            send_lo: sim.port_w("send_lo", 32)?,
            send_hi: sim.port_w("send_hi", 32)?,
            recv_lo: sim.port_w("recv_lo", 32)?,
            recv_hi: sim.port_w("recv_hi", 32)?,
            combine: sim.port_w("combine", 1)?,
            my_off: sim.port_w("my_off", 36)?,
            their_off: sim.port_w("their_off", 36)?,
            total: sim.port_w("total", 36)?,
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.job = None;
        self.pending = None;
        self.reset_now = false;
        self.start_now = false;
        self.next_now = false;
        self.cov = ArSchedCoverage::default();
    }

    fn drive(&mut self, rng: &mut Rng, cycle: u64) {
        let ports = self.ports.clone().expect("bound");
        self.reset_now = cycle == 0 || rng.below(20_000) == 0;
        let finished = self.job.as_ref().is_none_or(|j| j.done_seen);
        self.start_now = !self.reset_now
            && if finished {
                rng.chance(0.3)
            } else {
                rng.below(3000) == 0
            };
        self.next_now = rng.chance(0.6);
        ports.reset.set(self.reset_now as u64);
        ports.start.set(self.start_now as u64);
        ports.next.set(self.next_now as u64);
        if self.start_now {
            let (p, rank, n, rsag) = self.draw(rng);
            let max = self.params.max_ranks as u64;
            let bad = p == 0 || p > max || rank >= p;
            let (steps, total) = if bad {
                (Vec::new(), 0)
            } else {
                let algo = if rsag {
                    Algorithm::ReduceScatterAllgather
                } else {
                    Algorithm::RecursiveDoubling
                };
                golden(p as usize, rank as usize, n as usize, algo)
            };
            ports.ranks.set(p);
            ports.rank.set(rank);
            ports.count.set(n);
            ports.rsag.set(rsag as u64);
            let boxed = if bad {
                None
            } else {
                box_of(p, p * 7 + rank * 13 + n)
            };
            if let Some(e) = boxed {
                ports.ex.set(e[0] as u64);
                ports.ey.set(e[1] as u64);
                ports.rdig.set(digits(rank as usize, e));
                ports.qdig.set(digits(pow2_floor(p as usize), e));
            }
            self.pending = Some(Job {
                steps,
                pos: 0,
                bad,
                total,
                done_seen: false,
                waiting: 0,
                rsag,
                ranks: p,
                boxed,
            });
        }
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let p = self.ports.as_ref().expect("bound");
        let (valid, done) = (p.valid.get() == 1, p.done.get() == 1);
        if valid && done {
            return Some(Mismatch::hex(cycle, "valid&done", 0u64, 1u64));
        }
        // A start or a reset this cycle abandons the list (a step presented
        // now is not taken).
        if self.reset_now || self.start_now {
            return None;
        }
        let Some(job) = self.job.as_mut() else {
            if valid || done {
                return Some(Mismatch {
                    cycle,
                    port: "valid/done".into(),
                    expected: "nothing before the first start".into(),
                    actual: format!("valid={valid} done={done}"),
                });
            }
            return None;
        };
        if done {
            if job.done_seen {
                return None;
            }
            if job.pos != job.steps.len() {
                return Some(Mismatch {
                    cycle,
                    port: "done".into(),
                    expected: format!("{} steps", job.steps.len()),
                    actual: format!("done after {}", job.pos),
                });
            }
            if let Some(m) = cmp(cycle, "bad", job.bad as u64, p.bad.get()) {
                return Some(m);
            }
            if !job.bad {
                if let Some(m) = cmp(cycle, "total", job.total, p.total.get()) {
                    return Some(m);
                }
            }
            job.done_seen = true;
            let c = &mut self.cov;
            if job.bad {
                c.bad_starts += 1;
            } else {
                if job.rsag {
                    c.rsag_lists += 1;
                } else {
                    c.rd_lists += 1;
                }
                if !job.ranks.is_power_of_two() {
                    c.non_pow2_lists += 1;
                }
            }
            return None;
        }
        if !valid {
            job.waiting += 1;
            if job.waiting > self.hang_limit {
                return Some(Mismatch {
                    cycle,
                    port: "valid".into(),
                    expected: format!(
                        "step {} of {} (or done) within {} cycles",
                        job.pos,
                        job.steps.len(),
                        self.hang_limit
                    ),
                    actual: "nothing: a hang".into(),
                });
            }
            return None;
        }
        job.waiting = 0;
        if !self.next_now {
            return None;
        }
        let Some(e) = job.steps.get(job.pos).cloned() else {
            return Some(Mismatch {
                cycle,
                port: "valid".into(),
                expected: format!("done after {} steps", job.steps.len()),
                actual: "one more step".into(),
            });
        };
        let port = |name: &str| format!("{name} (step {} of {})", job.pos, job.steps.len());
        let pairs = [
            ("index", e.index, p.index.get()),
            ("phase", e.phase, p.phase.get()),
            ("partner_rank", e.partner, p.partner_rank.get()),
            ("send_lo", e.send.0, p.send_lo.get()),
            ("send_hi", e.send.1, p.send_hi.get()),
            ("recv_lo", e.recv.0, p.recv_lo.get()),
            ("recv_hi", e.recv.1, p.recv_hi.get()),
            ("combine", e.combine as u64, p.combine.get()),
            ("my_off", e.my_off, p.my_off.get()),
        ];
        for (name, want, got) in pairs {
            if let Some(m) = cmp(cycle, &port(name), want, got) {
                return Some(m);
            }
        }
        if let Some(t) = e.their_off {
            if let Some(m) = cmp(cycle, &port("their_off"), t, p.their_off.get()) {
                return Some(m);
            }
        }
        if let Some(b) = job.boxed {
            let want = digits(e.partner as usize, b);
            if let Some(m) = cmp(cycle, &port("partner_dig"), want, p.partner_dig.get()) {
                return Some(m);
            }
            self.cov.dig_steps += 1;
            self.cov.dig_steps_x1 += (b[0] == 1) as u64;
            self.cov.dig_steps_q += (e.phase == 0 || e.phase == 3) as u64;
        }
        self.cov.phases[e.phase as usize] += 1;
        job.pos += 1;
        None
    }

    fn advance(&mut self) {
        if self.reset_now {
            if self.job.as_ref().is_some_and(|j| !j.done_seen) {
                self.cov.abandoned += 1;
            }
            self.job = None;
        }
        if self.start_now {
            if self.job.as_ref().is_some_and(|j| !j.done_seen) {
                self.cov.abandoned += 1;
            }
            self.job = self.pending.take();
        }
    }
}
