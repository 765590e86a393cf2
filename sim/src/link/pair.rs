//! A whole link: two ends (`link_tx` + `link_rx` each), a PHY each way,
//! router-like sources and sinks on both sides, and a scoreboard that
//! checks every flit arrives exactly once, in order per VC, intact.
//!
//! The sources behave like a router output port: packets of a VC are
//! sent whole (no interleaving on a VC), flits of different VCs interleave,
//! and a flit is sent only with a credit of `link_tx`'s buffer. The sinks
//! behave like a router input port that drains each VC's buffer with a
//! given probability per cycle, returning a credit per flit (and, when
//! asked, now and then a stray credit for a flit never received).

use super::link_rx::{LinkRx, RxInputs};
use super::link_tx::{LinkTx, TxInputs, TxOutputs};
use super::phy::{Phy, PhyCounters, PhyParams, PhySchedule};
use super::Control;
use super::{LinkCounters, LinkParams, LinkState};
use crate::rng::Rng;
use crate::router::flit::Flit;
use anyhow::{bail, Result};
use std::collections::VecDeque;

/// Traffic and sink behaviour of a [`LinkPair`].
#[derive(Clone, Debug, PartialEq)]
pub struct PairOptions {
    /// Offered flits per cycle at each sending end (a flit per cycle is
    /// twice a 10 Gb/s link's rate at 128 bits).
    pub rate: f64,
    /// Packet lengths in flits, drawn uniformly from this range.
    pub min_flits: usize,
    /// Longest packet in flits.
    pub max_flits: usize,
    /// Both ends send (otherwise only end 0).
    pub both_ways: bool,
    /// Probability per cycle and VC that a sink frees a flit.
    pub drain: f64,
    /// Probability that a flit's head and tail bits are replaced by random
    /// ones (a malformed stream from a broken router: the link must carry
    /// it exactly all the same).
    pub malformed: f64,
    /// The sinks return at most one credit per cycle (round robin over the
    /// VCs with a freed flit), as a router input port does and as the RTL
    /// `link_rx` takes them; otherwise one per VC per cycle.
    pub one_credit: bool,
    /// Probability per cycle that a sink returning no credit returns one
    /// for a flit it never got (a broken router: a VC it holds no flit of,
    /// whose credits are all back at `link_rx`, which must ignore it and
    /// count it in `bad_acks`). Only with `one_credit`.
    pub stray_credit: f64,
    /// Seed of the traffic.
    pub seed: u64,
}

impl Default for PairOptions {
    fn default() -> Self {
        PairOptions {
            rate: 0.3,
            min_flits: 1,
            max_flits: 18,
            both_ways: true,
            drain: 1.0,
            malformed: 0.0,
            one_credit: false,
            stray_credit: 0.0,
            seed: 1,
        }
    }
}

/// What the scoreboard saw for one direction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DirectionReport {
    /// Flits sent by the source.
    pub sent: u64,
    /// Flits delivered, checked against the sent ones.
    pub delivered: u64,
    /// Flits delivered that were not the next expected one on their VC
    /// (lost, duplicated, reordered or corrupted).
    pub errors: u64,
    /// First error, for the message.
    pub first_error: Option<String>,
    /// Payload flits (neither head nor tail) delivered.
    pub payload_flits: u64,
    /// Sum of flit latencies (source send → sink), cycles.
    pub latency_sum: u64,
    /// Largest flit latency.
    pub latency_max: u64,
}

struct Source {
    pending: Vec<VecDeque<Flit>>,
    credits: Vec<usize>,
    counter: Vec<u64>,
    rr: usize,
}

struct Sink {
    held: Vec<usize>,
    rr: usize,
}

/// The PHY parameters of direction `from` → the other end in a pair built
/// with `phy`: `phy` itself for 0 → 1, its seed + 1 for 1 → 0 (a bench
/// that runs its own copy of the PHYs beside a pair builds them with this).
pub fn direction_params(phy: &PhyParams, from: usize) -> PhyParams {
    PhyParams {
        seed: phy.seed.wrapping_add(from as u64),
        ..phy.clone()
    }
}

/// Two link ends joined by two PHYs.
pub struct LinkPair {
    p: LinkParams,
    o: PairOptions,
    tx: [LinkTx; 2],
    rx: [LinkRx; 2],
    phy: [Phy; 2],
    sched: PhySchedule,
    src: [Source; 2],
    sink: [Sink; 2],
    /// Expected flits per direction (sender end) and VC, with send cycle.
    expect: [Vec<VecDeque<(Flit, u64)>>; 2],
    report: [DirectionReport; 2],
    rng: Rng,
    cycle: u64,
    inject: bool,
    /// Inputs each end's `link_tx` and `link_rx` got in the last cycle.
    last: [(TxInputs, RxInputs); 2],
}

fn fill(end: usize, vc: usize, n: u64, words: usize) -> [u64; 4] {
    let mut d = [0u64; 4];
    d[0] = (end as u64) << 60 | (vc as u64) << 52 | n;
    let d0 = d[0];
    for (w, x) in d.iter_mut().enumerate().take(words).skip(1) {
        *x = d0
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(w as u32 * 13)
            ^ w as u64;
    }
    d
}

impl LinkPair {
    /// A link with PHY `phy` (its seed is used for direction 0→1, seed + 1
    /// for 1→0), lane schedule `sched`, and traffic `o`.
    pub fn new(
        p: &LinkParams,
        phy: &PhyParams,
        sched: PhySchedule,
        o: PairOptions,
    ) -> Result<Self> {
        if o.min_flits == 0 || o.min_flits > o.max_flits {
            bail!(
                "link traffic: packet lengths {}..={} flits must be a non-empty range from 1",
                o.min_flits,
                o.max_flits
            );
        }
        for (key, v) in [
            ("rate", o.rate),
            ("drain", o.drain),
            ("malformed", o.malformed),
            ("stray_credit", o.stray_credit),
        ] {
            if !(0.0..=1.0).contains(&v) {
                bail!("link traffic: {key} = {v}: must be 0..=1");
            }
        }
        let phy2 = direction_params(phy, 1);
        let src = || Source {
            pending: vec![VecDeque::new(); p.vcs],
            credits: vec![p.tx_buffer_flits; p.vcs],
            counter: vec![0; p.vcs],
            rr: 0,
        };
        let sink = || Sink {
            held: vec![0; p.vcs],
            rr: 0,
        };
        Ok(LinkPair {
            tx: [LinkTx::new(p)?, LinkTx::new(p)?],
            rx: [LinkRx::new(p)?, LinkRx::new(p)?],
            phy: [Phy::new(phy)?, Phy::new(&phy2)?],
            sched,
            src: [src(), src()],
            sink: [sink(), sink()],
            expect: [vec![VecDeque::new(); p.vcs], vec![VecDeque::new(); p.vcs]],
            report: Default::default(),
            rng: Rng::new(o.seed),
            cycle: 0,
            inject: true,
            last: Default::default(),
            o,
            p: p.clone(),
        })
    }

    /// Cycles run.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Scoreboard of direction `from` → the other end.
    pub fn report(&self, from: usize) -> &DirectionReport {
        &self.report[from]
    }

    /// Counters of end `e` (its TX and RX halves summed).
    pub fn counters(&self, e: usize) -> LinkCounters {
        self.tx[e].counters().merged(self.rx[e].counters())
    }

    /// PHY counters of direction `from` → the other end.
    pub fn phy_counters(&self, from: usize) -> PhyCounters {
        self.phy[from].counters()
    }

    /// The inputs end `e`'s `link_tx` and `link_rx` got in the last
    /// [`step`](Self::step) (what a bench drives an RTL end with).
    pub fn last_inputs(&self, e: usize) -> (TxInputs, RxInputs) {
        self.last[e]
    }

    /// Link state of end `e`.
    pub fn state(&self, e: usize) -> LinkState {
        self.rx[e].outputs().status.state
    }

    /// The link ends, for benches that drive one side themselves.
    pub fn end(&self, e: usize) -> (&LinkTx, &LinkRx) {
        (&self.tx[e], &self.rx[e])
    }

    /// Stop creating packets (those started still finish).
    pub fn stop_injection(&mut self) {
        self.inject = false;
    }

    /// Change the offered load (`PairOptions::rate`) from this cycle on:
    /// benches run phases of light and heavy traffic on one pair.
    pub fn set_rate(&mut self, rate: f64) {
        self.o.rate = rate;
    }

    /// Every sent flit delivered and nothing left in flight.
    pub fn quiet(&self) -> bool {
        (0..2).all(|e| {
            self.src[e].pending.iter().all(|q| q.is_empty())
                && self.expect[e].iter().all(|q| q.is_empty())
                && self.tx[e].idle()
        })
    }

    /// Run `cycles`, then stop injection and run until quiet (at most
    /// `drain` more cycles); `true` if it went quiet.
    pub fn run(&mut self, cycles: u64, drain: u64) -> bool {
        for _ in 0..cycles {
            self.step();
        }
        self.stop_injection();
        for _ in 0..drain {
            if self.quiet() {
                return true;
            }
            self.step();
        }
        self.quiet()
    }

    /// One clock cycle of the whole link.
    pub fn step(&mut self) {
        self.step_hooked(None, None);
    }

    /// One clock cycle in which end 0's `link_tx` outputs are `tx0` (an RTL
    /// beside the golden model) rather than the golden model's: they go on
    /// the wire and back to the source; and in which `forge`, when end 0's
    /// `link_rx` decoded no control word, is given to end 0's `link_tx` as
    /// one (bad input from the status side). The golden `link_tx` of end 0
    /// still ticks. Returns the inputs end 0's `link_tx` got.
    pub fn step_hooked(&mut self, tx0: Option<TxOutputs>, forge: Option<Control>) -> TxInputs {
        let t = self.cycle;
        let mut tx0_inputs = TxInputs::default();
        let up = self.sched.up(t);
        let wpf = self.p.words_per_flit();
        // Words on the wire this cycle, and what arrives.
        let mut arrive = [None, None];
        let mut ready = [false, false];
        for e in 0..2 {
            ready[e] = self.phy[e].ready(t);
            let out = match (e, tx0) {
                (0, Some(o)) => o,
                _ => *self.tx[e].outputs(),
            };
            let sent = if ready[e] { out.word } else { None };
            arrive[1 - e] = self.phy[e].step(sent, up);
        }
        for e in 0..2 {
            // Sink at end e: receive rx[e]'s flit, check it, drain.
            let mut credit = 0u32;
            if let Some(f) = self.rx[e].outputs().flit {
                let from = 1 - e;
                let r = &mut self.report[from];
                r.delivered += 1;
                let vc = f.vc as usize;
                match self.expect[from].get_mut(vc).and_then(|q| q.pop_front()) {
                    Some((want, at)) if want == f => {
                        let lat = t - at;
                        r.latency_sum += lat;
                        r.latency_max = r.latency_max.max(lat);
                        r.payload_flits += (!f.head && !f.tail) as u64;
                    }
                    other => {
                        r.errors += 1;
                        if r.first_error.is_none() {
                            r.first_error = Some(format!(
                                "cycle {t}, end {from}→{e}, vc {vc}: got {f:?}, expected {other:?}"
                            ));
                        }
                    }
                }
                if vc < self.p.vcs {
                    self.sink[e].held[vc] += 1;
                }
            }
            let n = self.p.vcs;
            if self.o.one_credit {
                let k = &mut self.sink[e];
                let free = (0..n).map(|i| (k.rr + i) % n).find(|&v| k.held[v] > 0);
                if let Some(v) = free {
                    if self.rng.chance(self.o.drain) {
                        k.held[v] -= 1;
                        k.rr = (v + 1) % n;
                        credit = 1 << v;
                    }
                }
                if credit == 0 && self.o.stray_credit > 0.0 && self.rng.chance(self.o.stray_credit)
                {
                    let v = self.rng.below(n as u64) as usize;
                    if self.sink[e].held[v] == 0 {
                        credit = 1 << v;
                    }
                }
            } else {
                for v in 0..n {
                    if self.sink[e].held[v] > 0 && self.rng.chance(self.o.drain) {
                        self.sink[e].held[v] -= 1;
                        credit |= 1 << v;
                    }
                }
            }
            // Source at end e: credits back from tx[e], a new packet, one flit.
            let s = &mut self.src[e];
            let credit_back = match (e, tx0) {
                (0, Some(o)) => o.credit,
                _ => self.tx[e].outputs().credit,
            };
            if let Some(v) = credit_back {
                s.credits[v as usize] += 1;
            }
            let sending = e == 0 || self.o.both_ways;
            let mean = (self.o.min_flits + self.o.max_flits) as f64 / 2.0;
            if self.inject && sending && self.rng.chance(self.o.rate / mean) {
                let vc = self.rng.below(self.p.vcs as u64) as usize;
                let span = (self.o.max_flits - self.o.min_flits + 1) as u64;
                let len = self.o.min_flits + self.rng.below(span) as usize;
                for k in 0..len {
                    let n = s.counter[vc];
                    s.counter[vc] += 1;
                    let (mut head, mut tail) = (k == 0, k + 1 == len);
                    if self.o.malformed > 0.0 && self.rng.chance(self.o.malformed) {
                        (head, tail) = (self.rng.chance(0.5), self.rng.chance(0.5));
                    }
                    s.pending[vc].push_back(Flit {
                        data: fill(e, vc, n, wpf),
                        head,
                        tail,
                        vc: vc as u8,
                    });
                }
            }
            let n = self.p.vcs;
            let pick = (0..n)
                .map(|k| (s.rr + k) % n)
                .find(|&v| s.credits[v] > 0 && !s.pending[v].is_empty());
            let flit = pick.map(|v| {
                s.rr = (v + 1) % n;
                s.credits[v] -= 1;
                let f = s.pending[v].pop_front().expect("pending flit");
                self.expect[e][v].push_back((f, t));
                self.report[e].sent += 1;
                f
            });
            let mut status = self.rx[e].outputs().status;
            if e == 0 && status.peer_ctrl.is_none() {
                status.peer_ctrl = forge;
            }
            let ti = TxInputs {
                flit,
                ready: ready[e],
                rx: status,
            };
            if e == 0 {
                tx0_inputs = ti;
            }
            let ri = RxInputs {
                word: arrive[e],
                lane_up: up,
                router_credit: credit,
            };
            self.last[e] = (ti, ri);
            self.tx[e].tick(&ti);
            self.rx[e].tick(&ri);
        }
        self.cycle += 1;
        tx0_inputs
    }
}
