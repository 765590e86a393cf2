//! Co-simulation bench of `async_fifo`: two clocks, RTL vs
//! `exanet_sim::common::async_fifo`, checked at every edge of either clock.
//!
//! # Clocks
//! Times are integer picoseconds. The write clock starts at 6,400 ps
//! (156.25 MHz, the PL clock); the read clock's period is drawn from a
//! regime that changes every few thousand edges:
//! - *near-synchronous*: the same period ± a few ps, so the phase slides
//!   slowly through every alignment, coincident edges included;
//! - *locked*: exactly the same period and a random fixed phase (0 = every
//!   edge coincident);
//! - *fast reader* / *fast writer*: 1.5× to 4× apart;
//! - *wandering*: any ratio in 0.3..3.
//!
//! Within a regime both periods drift by a bounded random walk of a few ps
//! per edge, so the two clocks never keep a fixed relation for long. Each
//! clock falls half a period after it rises.
//!
//! # One event (a "cycle" of this bench)
//! The next rising edge of either clock, or of both when they coincide:
//! 1. clocks due to fall are set low; the rising domains draw their inputs
//!    (push/din, pop, reset) and write them to the RTL; `eval`;
//! 2. every output of **both** domains is compared with the golden model;
//! 3. the rising clocks go high, `eval`; the golden model takes the same edge.
//!
//! # Stimulus
//! Phases of random length per domain: fill, drain, balanced, bursts, idle;
//! half of them obey the flags, half push while full and pop while empty
//! (overflow and underflow). Rare reset windows, a few periods of the slower
//! clock long, assert both domains' resets (the rule the block documents).
//!
//! # Scoreboard
//! Independent of the golden model: the words taken by the writer must come
//! out of the reader in order, none lost or duplicated (a reset window
//! discards what was in flight). A golden model with the RTL's bug would
//! still fail here.

use super::BlockInfo;
use crate::cosim::{cmp, Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::{bail, Result};
use exanet_hdl::common::async_fifo::{emit_async_fifo, SUPPORTED_WIDTHS};
use exanet_hdl::emit::Emitted;
use exanet_sim::common::async_fifo::{
    AsyncFifo, AsyncFifoOutputs, AsyncFifoParams, ReadInputs, WriteInputs,
};
use exanet_sim::point;
use exanet_sim::rng::Rng;
use std::collections::VecDeque;

/// Registry entry for `exanet cosim async_fifo`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "async_fifo",
        about: "two-clock FIFO (Gray pointers, ASYNC_REG synchronizers); two drifting clocks",
        matrix,
        point,
    }
}

/// Default matrix: the PHY crossing, the smallest and the largest FIFO,
/// longer synchronizers.
fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(
        vec![
            "width=65,depth=16,sync_stages=2",
            "width=8,depth=4,sync_stages=2",
            "width=32,depth=8,sync_stages=3",
            "width=128,depth=64,sync_stages=4",
            "width=64,depth=1024,sync_stages=2",
        ],
        point,
    )
}

/// Parse `width=..,depth=..,sync_stages=..` (defaults 65, 16, 2).
fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(AsyncFifoBench::new(point::parse(text)?)?))
}

/// How often a run reached each corner (the tests assert them all).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AsyncFifoCoverage {
    /// Write edges seen with `full` high.
    pub full_edges: u64,
    /// Read edges seen with `empty` high after a word had been stored.
    pub empty_edges: u64,
    /// Events where both clocks rose together.
    pub coincident_edges: u64,
    /// Words that crossed (pops taken).
    pub words: u64,
    /// Pushes dropped while full.
    pub overflows: u64,
    /// Pops ignored while empty.
    pub underflows: u64,
    /// Reset windows.
    pub resets: u64,
    /// Regimes of the clock relation run.
    pub regimes: u64,
}

#[derive(Clone)]
struct Ports {
    wr_clock: Port,
    rd_clock: Port,
    wr_reset: Port,
    push: Port,
    din: Port,
    full: Port,
    overflow: Port,
    wr_count: Port,
    rd_reset: Port,
    pop: Port,
    dout: Port,
    empty: Port,
    underflow: Port,
    rd_count: Port,
}

/// One domain's traffic phase.
#[derive(Clone, Copy, Debug, Default)]
struct Phase {
    /// Probability of a push (write side) or pop (read side) as a threshold
    /// of a 16-bit draw.
    thr: u32,
    obey: bool,
    left: u64,
}

/// The clocks: next rise and fall of each, current periods, their bounds.
#[derive(Clone, Copy, Debug, Default)]
struct Clocks {
    next: [u64; 2],
    fall: [u64; 2],
    high: [bool; 2],
    period: [u64; 2],
    lo: [u64; 2],
    hi: [u64; 2],
    regime_left: u64,
}

/// PL clock period (156.25 MHz) in ps.
const BASE_PS: u64 = 6_400;

/// The `async_fifo` bench at one parameter point.
pub struct AsyncFifoBench {
    params: AsyncFifoParams,
    /// The golden model's parameters (differ from `params` only in tests).
    golden_params: AsyncFifoParams,
    golden: AsyncFifo,
    mask: u128,
    ports: Option<Ports>,
    clocks: Clocks,
    /// This event: write edge, read edge, the time in ps.
    edge: (bool, bool, u64),
    wr_in: WriteInputs,
    rd_in: ReadInputs,
    expected: AsyncFifoOutputs,
    phases: [Phase; 2],
    /// End of the current reset window (ps), if any.
    reset_until: Option<u64>,
    reset_thr: u64,
    sent: VecDeque<u128>,
    next_word: u128,
    scoreboard_error: Option<String>,
    filled: bool,
    cov: AsyncFifoCoverage,
}

impl AsyncFifoBench {
    /// A bench whose RTL and golden model share `params`.
    pub fn new(params: AsyncFifoParams) -> Result<Self> {
        Self::with_golden(params.clone(), params)
    }

    /// A bench comparing the RTL of `rtl` with a golden model built with
    /// `golden` (different only to show the bench catches a mismatch).
    pub fn with_golden(rtl: AsyncFifoParams, golden: AsyncFifoParams) -> Result<Self> {
        rtl.validate()?;
        if !SUPPORTED_WIDTHS.contains(&rtl.width) {
            bail!(
                "async_fifo.width = {}: not supported; supported widths: {SUPPORTED_WIDTHS:?}",
                rtl.width
            );
        }
        Ok(AsyncFifoBench {
            golden: AsyncFifo::new(&golden)?,
            golden_params: golden,
            mask: if rtl.width == 128 {
                u128::MAX
            } else {
                (1u128 << rtl.width) - 1
            },
            // About one reset window per 8k edges: rare enough that even
            // the deepest FIFO fills and drains between two.
            reset_thr: u64::MAX / 8_000,
            params: rtl,
            ports: None,
            clocks: Clocks::default(),
            edge: (false, false, 0),
            wr_in: WriteInputs::default(),
            rd_in: ReadInputs::default(),
            expected: AsyncFifoOutputs::default(),
            phases: [Phase::default(); 2],
            reset_until: None,
            sent: VecDeque::new(),
            next_word: 0,
            scoreboard_error: None,
            filled: false,
            cov: AsyncFifoCoverage::default(),
        })
    }

    /// Corners reached since the last [`Bench::reset`].
    pub fn coverage(&self) -> AsyncFifoCoverage {
        self.cov
    }

    /// A new relation between the two clocks.
    fn new_regime(&mut self, rng: &mut Rng) {
        let c = &mut self.clocks;
        let w = BASE_PS;
        let (r, phase) = match rng.below(5) {
            0 => (w + rng.below(9) - 4, None),
            // Locked: in phase half the time (every edge coincident).
            1 => (w, Some(if rng.chance(0.5) { 0 } else { rng.below(w) })),
            2 => (w * 2 / (3 + rng.below(6)), None), // fast reader: 1.5x..4x
            3 => (w * (3 + rng.below(6)) / 2, None), // fast writer
            _ => (w * (3 + rng.below(28)) / 10, None),
        };
        let r = r.max(1_000);
        c.period = [w, r];
        c.lo = [w - w / 20, r - r / 20];
        c.hi = [w + w / 20, r + r / 20];
        if let Some(ph) = phase {
            // Locked: same period, no drift, a fixed offset.
            c.lo = [w, w];
            c.hi = [w, w];
            c.next[1] = c.next[0] + ph;
            c.fall[1] = c.next[1].saturating_sub(w / 2).max(c.fall[1]);
        }
        c.regime_left = 2_000 + rng.below(6_000);
        self.cov.regimes += 1;
    }

    fn new_phase(rng: &mut Rng, depth: u32) -> Phase {
        const P: [f64; 6] = [0.9, 0.15, 0.5, 0.97, 0.05, 0.7];
        Phase {
            thr: (P[rng.below(P.len() as u64) as usize] * 65536.0) as u32,
            obey: rng.chance(0.5),
            left: 1 + rng.below(4 * depth as u64 + 64),
        }
    }

    /// Advance the clocks to the next rising edge(s).
    fn next_event(&mut self, rng: &mut Rng) {
        if self.clocks.regime_left == 0 {
            self.new_regime(rng);
        }
        self.clocks.regime_left -= 1;
        let c = &mut self.clocks;
        let t = c.next[0].min(c.next[1]);
        let rise = [c.next[0] == t, c.next[1] == t];
        for (k, _) in rise.iter().enumerate().filter(|(_, &r)| r) {
            // Bounded random walk of the period, then the next edges.
            if c.lo[k] < c.hi[k] {
                let step = rng.below(7) as i64 - 3;
                c.period[k] = ((c.period[k] as i64 + step) as u64).clamp(c.lo[k], c.hi[k]);
            }
            c.fall[k] = t + c.period[k] / 2;
            c.next[k] = t + c.period[k];
        }
        self.edge = (rise[0], rise[1], t);
    }
}

impl Bench for AsyncFifoBench {
    fn block(&self) -> &str {
        "async_fifo"
    }

    fn point(&self) -> String {
        point::to_text(&self.params)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_async_fifo(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let w = self.params.width;
        let c = self.params.pointer_bits();
        self.ports = Some(Ports {
            wr_clock: sim.port_w("wr_clock", 1)?,
            rd_clock: sim.port_w("rd_clock", 1)?,
            wr_reset: sim.port_w("wr_reset", 1)?,
            push: sim.port_w("push", 1)?,
            din: sim.port_w("din", w)?,
            full: sim.port_w("full", 1)?,
            overflow: sim.port_w("overflow", 1)?,
            wr_count: sim.port_w("wr_count", c)?,
            rd_reset: sim.port_w("rd_reset", 1)?,
            pop: sim.port_w("pop", 1)?,
            dout: sim.port_w("dout", w)?,
            empty: sim.port_w("empty", 1)?,
            underflow: sim.port_w("underflow", 1)?,
            rd_count: sim.port_w("rd_count", c)?,
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.golden = AsyncFifo::new(&self.golden_params).expect("validated");
        self.clocks = Clocks {
            next: [BASE_PS, BASE_PS],
            ..Clocks::default()
        };
        self.edge = (false, false, 0);
        self.wr_in = WriteInputs::default();
        self.rd_in = ReadInputs::default();
        self.phases = [Phase::default(); 2];
        self.reset_until = None;
        self.sent.clear();
        self.next_word = 0;
        self.scoreboard_error = None;
        self.filled = false;
        self.cov = AsyncFifoCoverage::default();
    }

    fn drive(&mut self, rng: &mut Rng, _cycle: u64) {
        self.next_event(rng);
        let (wr, rd, t) = self.edge;
        let now = self.golden.outputs();
        self.expected = now;
        // A reset window starts at this event, or goes on.
        if self.reset_until.is_none() && rng.next_u64() < self.reset_thr {
            let slow = self.clocks.period[0].max(self.clocks.period[1]);
            self.reset_until = Some(t + 3 * slow + rng.below(4 * slow));
            self.cov.resets += 1;
            self.sent.clear();
        }
        let in_reset = match self.reset_until {
            Some(end) if t <= end => true,
            Some(_) => {
                self.reset_until = None;
                false
            }
            None => false,
        };
        let ports = self.ports.as_ref().expect("bind before drive");
        let rise = [wr, rd];
        for k in 0..2 {
            // A rising clock fell half a period ago (its `fall` already
            // holds the next one); the other falls if its time has come.
            if self.clocks.high[k] && (rise[k] || self.clocks.fall[k] <= t) {
                self.clocks.high[k] = false;
                [&ports.wr_clock, &ports.rd_clock][k].set(0);
            }
        }
        if wr {
            if self.phases[0].left == 0 {
                self.phases[0] = Self::new_phase(rng, self.params.depth);
            }
            self.phases[0].left -= 1;
            let c = rng.next_u64();
            let mut push = ((c & 0xffff) as u32) < self.phases[0].thr;
            if self.phases[0].obey {
                push &= !now.full;
            }
            // Words numbered in order, high bits random: the scoreboard
            // sees order, the RTL sees every data bit move.
            let din = ((rng.next_u64() as u128) << 64 | (c >> 16) as u128) << 20
                | (self.next_word & 0xf_ffff);
            self.wr_in = WriteInputs {
                reset: in_reset,
                push,
                din: din & self.mask,
            };
            ports.wr_reset.set(in_reset as u64);
            ports.push.set(push as u64);
            ports.din.set_u128(din & self.mask);
            let c = &mut self.cov;
            c.full_edges += now.full as u64;
            c.overflows += (push && now.full && !in_reset) as u64;
        }
        if rd {
            if self.phases[1].left == 0 {
                self.phases[1] = Self::new_phase(rng, self.params.depth);
            }
            self.phases[1].left -= 1;
            let mut pop = ((rng.next_u64() & 0xffff) as u32) < self.phases[1].thr;
            if self.phases[1].obey {
                pop &= !now.empty;
            }
            self.rd_in = ReadInputs {
                reset: in_reset,
                pop,
            };
            ports.rd_reset.set(in_reset as u64);
            ports.pop.set(pop as u64);
            self.filled |= !now.empty;
            let c = &mut self.cov;
            c.empty_edges += (now.empty && self.filled) as u64;
            c.underflows += (pop && now.empty && !in_reset) as u64;
        }
        self.cov.coincident_edges += (wr && rd) as u64;
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        if let Some(e) = self.scoreboard_error.take() {
            return Some(Mismatch {
                cycle,
                port: "scoreboard".to_string(),
                expected: "words in push order".to_string(),
                actual: e,
            });
        }
        let o = &self.expected;
        let p = self.ports.as_ref().expect("bind before check");
        cmp(cycle, "full", o.full as u64, p.full.get())
            .or_else(|| cmp(cycle, "overflow", o.overflow as u64, p.overflow.get()))
            .or_else(|| cmp(cycle, "wr_count", o.wr_count as u64, p.wr_count.get()))
            .or_else(|| cmp(cycle, "empty", o.empty as u64, p.empty.get()))
            .or_else(|| cmp(cycle, "underflow", o.underflow as u64, p.underflow.get()))
            .or_else(|| cmp(cycle, "rd_count", o.rd_count as u64, p.rd_count.get()))
            .or_else(|| cmp(cycle, "dout", o.dout, p.dout.get_u128()))
    }

    fn advance(&mut self) {
        let (wr, rd, _) = self.edge;
        let head = self.expected.dout;
        let (pushed, popped) = self
            .golden
            .edge(wr.then_some(&self.wr_in), rd.then_some(&self.rd_in));
        if popped {
            self.cov.words += 1;
            match self.sent.pop_front() {
                Some(w) if w == head => {}
                other => {
                    self.scoreboard_error = Some(format!(
                        "popped {head:#x}, expected {}",
                        other.map_or("nothing (no word in flight)".to_string(), |w| format!(
                            "{w:#x}"
                        ))
                    ))
                }
            }
        }
        if pushed {
            self.sent.push_back(self.wr_in.din);
            self.next_word += 1;
        }
    }

    /// The two-clock loop: one iteration per rising edge of either clock
    /// (both when they coincide). Trace times are 2 × ps: inputs at 2t,
    /// the rising edge at 2t + 1.
    fn run_cycles(
        &mut self,
        sim: &mut Sim,
        rng: &mut Rng,
        cycles: u64,
        tracing: bool,
    ) -> Result<(u64, Option<Mismatch>)> {
        let ports = self.ports.clone().expect("bind before run");
        ports.wr_clock.set(0);
        ports.rd_clock.set(0);
        sim.eval();
        for cycle in 0..cycles {
            self.drive(rng, cycle);
            sim.eval();
            let (wr, rd, t) = self.edge;
            if tracing {
                sim.trace_dump(2 * t);
            }
            if let Some(m) = self.check(cycle) {
                return Ok((cycle + 1, Some(m)));
            }
            if wr {
                ports.wr_clock.set(1);
                self.clocks.high[0] = true;
            }
            if rd {
                ports.rd_clock.set(1);
                self.clocks.high[1] = true;
            }
            sim.eval();
            if tracing {
                sim.trace_dump(2 * t + 1);
            }
            self.advance();
        }
        Ok((cycles, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_with_defaults_and_reject_bad_keys_and_values() {
        let b = point("depth=32").unwrap();
        assert_eq!(b.point(), "width=65,depth=32,sync_stages=2");
        assert_eq!(b.block(), "async_fifo");
        let e = point("deep=32").err().unwrap().to_string();
        assert!(e.contains("deep") && e.contains("depth"), "{e}");
        let e = point("width=33").err().unwrap().to_string();
        assert!(e.contains("async_fifo.width = 33"), "{e}");
        let e = point("sync_stages=1").err().unwrap().to_string();
        assert!(e.contains("async_fifo.sync_stages = 1"), "{e}");
        for b in matrix() {
            assert_eq!(point(&b.point()).unwrap().point(), b.point());
        }
    }
}
