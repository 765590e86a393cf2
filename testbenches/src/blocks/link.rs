//! Co-simulation bench `link`: **both ends of one cable in RTL** — per end
//! an RTL `link_tx` and an RTL `link_rx` (one Verilated top,
//! `exanet_hdl::link::link_pair`, holding the four blocks as `exanet
//! generate` emits them, each end's status bus wired inside) — with the
//! golden PHY model (`exanet_sim::link::phy`: bit errors on the 66-bit code
//! words at `ber`, bursts, clock-compensation gaps, scheduled link down/up,
//! deterministic from the seed) between them in both directions, against
//! the golden `exanet_sim::link::pair::LinkPair` run alongside.
//!
//! One model rather than four: the lockstep loop clocks one model, so both
//! ends share the clock edge exactly as on the board, and a failure's
//! waveform shows both ends. The PHY stays in Rust: the bench runs its own
//! copy of each direction's PHY (same parameters and seed as the pair's,
//! `pair::direction_params`) on the RTL's words, so the RTL ends talk to
//! each other only through the PHY, never through the golden model.
//!
//! Stimulus: the pair's router-like sources (random packets on random VCs,
//! sent under the credits of `link_tx`'s buffers, sometimes malformed
//! sideband) and sinks (random drain, one credit per cycle, now and then a
//! stray credit for a flit never received, which `link_rx` must ignore
//! and count in `bad_acks`); the RTL gets
//! exactly the inputs the golden ends got. Every cycle every RTL output of
//! both ends is compared with the golden: the PHY word (valid, data,
//! ctrl), the credit to the router, the flit to the router (valid, data,
//! head, tail, VC), the link state, and every counter of both halves
//! (32-bit). The first difference stops the run naming the port, which
//! carries the end (`e1_phy_tx_data`), and the cycle. A scoreboard on the
//! RTL's flits checks every flit arrives exactly once, in order per VC,
//! intact, across link-down events (port `scoreboard e0->e1`); the pair's
//! own scoreboard checks the golden (`golden scoreboard`).
//!
//! Points: the link's shape (`flit_bits`, `vcs`, `latency_cycles`,
//! `frame_flits`, `router_credits`), `ber`, `bursts` (error bursts of 16
//! bits at 1e-5 per word), `downs` (link down/up intervals from the seed,
//! the first after 2,000–22,000 cycles, then every 5,000–45,000 up to
//! cycle 2^25), `never_up` (the PHY never comes
//! up), `inject_cycles` (stop creating packets after this many cycles, 0 =
//! never; a run longer than it drains, and [`LinkBench::coverage`] then
//! shows whether everything sent was delivered; the sources' queues are
//! unbounded, so a run drains only if the offered `rate_pct` is below what
//! the link and the sinks' `drain_pct` carry).

use super::BlockInfo;
use crate::cosim::{Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::{bail, Result};
use exanet_hdl::emit::Emitted;
use exanet_hdl::link::link_pair::emit_link_pair;
use exanet_hdl::link::link_tx::check_rtl_params;
use exanet_sim::link::pair::{direction_params, LinkPair, PairOptions};
use exanet_sim::link::phy::{Phy, PhyParams, PhySchedule};
use exanet_sim::link::{LinkCounters, LinkParams, LinkState, PhyWord};
use exanet_sim::point;
use exanet_sim::rng::Rng;
use exanet_sim::router::flit::Flit;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Probability per cycle that a sink returning no credit returns a stray
/// one (`PairOptions::stray_credit`): a few dozen per 30,000 cycles, each
/// ignored and counted by `link_rx` (`bad_acks`).
const STRAY_CREDIT: f64 = 0.002;

/// Registry entry for `exanet cosim link`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "link",
        about: "both ends of a cable: RTL link_tx + link_rx each, golden PHY between, vs the golden link",
        matrix,
        point,
    }
}

/// Default matrix: the default link at BER 0, 1e-5 and 1e-4 with link
/// drops, other widths and VC counts, short frames, bursts, and a PHY that
/// never comes up.
pub fn matrix_points() -> Vec<&'static str> {
    vec![
        "flit_bits=128,vcs=4,ber=0",
        "flit_bits=128,vcs=4,ber=0.00001",
        "flit_bits=128,vcs=4,latency_cycles=4,ber=0.0001,bursts=true",
        "flit_bits=64,vcs=1,latency_cycles=2,frame_flits=3,ber=0.00003",
        "flit_bits=256,vcs=8,latency_cycles=4,frame_flits=63,ber=0.00001",
        "flit_bits=128,vcs=2,never_up=true",
    ]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(matrix_points(), point)
}

fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(LinkBench::new(point::parse(text)?)?))
}

/// One bench point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkPoint {
    /// Flit width: 64, 128, 256.
    pub flit_bits: usize,
    /// VCs, 1..=8.
    pub vcs: usize,
    /// One-way PHY latency in cycles.
    pub latency_cycles: usize,
    /// Most flits per frame (0: derived from the flit width).
    pub frame_flits: usize,
    /// Router buffer per VC.
    pub router_credits: usize,
    /// Bit error rate on both PHY directions (text, e.g. `1e-5`).
    pub ber: String,
    /// Error bursts (16 bits, 1e-5 per word).
    pub bursts: bool,
    /// Scheduled link down/up intervals.
    pub downs: bool,
    /// The PHY never comes up.
    pub never_up: bool,
    /// Stop creating packets after this many cycles (0 = never).
    pub inject_cycles: u64,
    /// Offered flits per cycle at each end, in percent (0 = drawn from the
    /// seed: 30, 60 or 100 %; a 10 Gb/s link carries about 43 % at 128 b).
    pub rate_pct: u32,
    /// Probability per cycle that a sink frees a flit, in percent (0 =
    /// drawn from the seed: 30, 90 or 100 %).
    pub drain_pct: u32,
}

impl Default for LinkPoint {
    fn default() -> Self {
        LinkPoint {
            flit_bits: 128,
            vcs: 4,
            latency_cycles: 16,
            frame_flits: 0,
            router_credits: 32,
            ber: "0.00001".into(),
            bursts: false,
            downs: true,
            never_up: false,
            inject_cycles: 0,
            rate_pct: 0,
            drain_pct: 0,
        }
    }
}

impl LinkPoint {
    /// The link parameters (as `LinkParams::sized`), checked for the RTL.
    pub fn link_params(&self) -> Result<LinkParams> {
        if !(1..=exanet_sim::link::MAX_VCS).contains(&self.vcs) {
            bail!("link.vcs = {}: must be 1..=8", self.vcs);
        }
        if ![64, 128, 256].contains(&self.flit_bits) {
            bail!(
                "link.flit_bits = {}: must be 64, 128 or 256",
                self.flit_bits
            );
        }
        for (key, v) in [("rate_pct", self.rate_pct), ("drain_pct", self.drain_pct)] {
            if v > 100 {
                bail!("link.{key} = {v}: must be 0..=100 (0 = from the seed)");
            }
        }
        if self.latency_cycles == 0 {
            bail!("link.latency_cycles = 0: must be at least 1");
        }
        let p = if self.frame_flits == 0 {
            LinkParams::sized(
                self.flit_bits,
                self.vcs,
                self.latency_cycles,
                self.router_credits,
            )
        } else {
            LinkParams::sized_frames(
                self.flit_bits,
                self.vcs,
                self.latency_cycles,
                self.router_credits,
                self.frame_flits,
            )
        };
        p.validate()?;
        check_rtl_params(&p)?;
        Ok(p)
    }

    /// The BER as a number.
    pub fn ber(&self) -> Result<f64> {
        let b: f64 = self
            .ber
            .parse()
            .map_err(|_| anyhow::anyhow!("link.ber = {}: not a number", self.ber))?;
        if !(0.0..=1e-2).contains(&b) {
            bail!("link.ber = {}: must be 0..=1e-2", self.ber);
        }
        Ok(b)
    }
}

/// What a run exercised and what the RTL scoreboard saw; tests assert on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkCoverage {
    /// Flits the routers gave the RTL `link_tx`s (both directions).
    pub sent: u64,
    /// Flits the RTL `link_rx`s delivered, each checked.
    pub delivered: u64,
    /// Delivered flits that were not the next expected on their VC (lost,
    /// duplicated, reordered or corrupted); a run stops at the first.
    pub errors: u64,
    /// Sent flits not delivered yet (in flight when the run stopped).
    pub in_flight: u64,
    /// Credits the RTL `link_tx`s returned to their routers.
    pub credits: u64,
    /// Frames sent, both ends (RTL counters).
    pub frames: u64,
    /// Frames dropped for a bad CRC, both ends.
    pub crc_errors: u64,
    /// Replays started, both ends.
    pub retransmissions: u64,
    /// Replays by timeout, both ends.
    pub timeouts: u64,
    /// Bad acks and stray router credits (`link_rx`: a credit for a flit
    /// never passed on, from the sinks' `stray_credit`), both ends.
    pub bad_acks: u64,
    /// Up → down transitions, both ends.
    pub link_downs: u64,
    /// Words the PHYs dropped or corrupted (bit errors + bursts + sync drops).
    pub phy_errors: u64,
    /// Cycles in which end 0's state was Down / Training / Up.
    pub state_cycles: [u64; 3],
    /// Cycles run.
    pub cycles: u64,
}

#[derive(Clone)]
struct EndPorts {
    in_valid: Port,
    in_data: Port,
    in_head: Port,
    in_tail: Port,
    in_vc: Port,
    phy_tx_ready: Port,
    phy_rx_valid: Port,
    phy_rx_ctrl: Port,
    phy_rx_data: Port,
    phy_lane_up: Port,
    credit_in_valid: Port,
    credit_in_vc: Port,
    credit_out_valid: Port,
    credit_out_vc: Port,
    phy_tx_valid: Port,
    phy_tx_data: Port,
    phy_tx_ctrl: Port,
    out_valid: Port,
    out_data: Port,
    out_head: Port,
    out_tail: Port,
    out_vc: Port,
    state: Port,
    tx_cnt: Vec<(&'static str, Port)>,
    rx_cnt: Vec<(&'static str, Port)>,
}

/// Golden outputs of one end in one cycle.
#[derive(Clone, Copy, Debug, Default)]
struct EndExpect {
    word: Option<PhyWord>,
    credit: Option<u8>,
    flit: Option<Flit>,
    state: LinkState,
    tx: LinkCounters,
    rx: LinkCounters,
}

/// The `link` bench at one parameter point.
pub struct LinkBench {
    pt: LinkPoint,
    params: LinkParams,
    ber: f64,
    reset_port: Option<Port>,
    ports: Vec<EndPorts>,
    pair: Option<LinkPair>,
    /// The RTL's PHYs, direction `from` → other end.
    phys: Vec<Phy>,
    sched: PhySchedule,
    expected: [EndExpect; 2],
    /// Flits sent to the RTL by end `from`, per VC, not yet delivered.
    expect: [Vec<VecDeque<Flit>>; 2],
    pending: Option<Mismatch>,
    cov: LinkCoverage,
    last_state: [LinkState; 2],
    words: usize,
}

impl LinkBench {
    /// A bench at point `pt`.
    pub fn new(pt: LinkPoint) -> Result<Self> {
        let params = pt.link_params()?;
        let ber = pt.ber()?;
        Ok(LinkBench {
            words: params.words_per_flit(),
            pt,
            params,
            ber,
            reset_port: None,
            ports: Vec::new(),
            pair: None,
            phys: Vec::new(),
            sched: PhySchedule::default(),
            expected: Default::default(),
            expect: Default::default(),
            pending: None,
            cov: LinkCoverage::default(),
            last_state: [LinkState::Down; 2],
        })
    }

    /// The link parameters.
    pub fn params(&self) -> &LinkParams {
        &self.params
    }

    /// What the run since the last reset exercised.
    pub fn coverage(&self) -> LinkCoverage {
        let mut c = self.cov;
        c.in_flight = self
            .expect
            .iter()
            .flat_map(|d| d.iter())
            .map(|q| q.len() as u64)
            .sum();
        c
    }

    /// Link state of end `e` as the RTL showed it in the last cycle.
    pub fn rtl_state(&self, e: usize) -> LinkState {
        self.last_state[e]
    }

    fn build(&mut self, rng: &mut Rng) -> Result<()> {
        let p = &self.params;
        let mut down = Vec::new();
        if self.pt.never_up {
            down.push((0, u64::MAX));
        } else if self.pt.downs {
            let mut t = 2_000 + rng.below(20_000);
            while t < 1 << 25 {
                let len = match rng.below(4) {
                    0 => 1 + rng.below(8),
                    1 => 20 + rng.below(200),
                    _ => 200 + rng.below(3_000),
                };
                down.push((t, t + len));
                t += len + 5_000 + rng.below(40_000);
            }
        }
        let phy = PhyParams {
            latency_cycles: p.latency_cycles.max(1),
            ber: self.ber,
            burst_rate: if self.pt.bursts { 1e-5 } else { 0.0 },
            burst_bits: 16,
            cc_period: 40 + rng.below(400),
            cc_len: 1 + rng.below(4),
            seed: rng.next_u64(),
        };
        let rate = [0.3, 0.6, 1.0][rng.below(3) as usize];
        let max_flits = [3, 18, 40][rng.below(3) as usize];
        let drain = [0.3, 0.9, 1.0][rng.below(3) as usize];
        let pct = |v: u32, drawn: f64| if v == 0 { drawn } else { v as f64 / 100.0 };
        let o = PairOptions {
            rate: pct(self.pt.rate_pct, rate),
            min_flits: 1,
            max_flits,
            both_ways: true,
            drain: pct(self.pt.drain_pct, drain),
            malformed: [0.0, 0.0, 0.02][rng.below(3) as usize],
            one_credit: true,
            stray_credit: STRAY_CREDIT,
            seed: rng.next_u64(),
        };
        self.sched = PhySchedule { down };
        self.phys = vec![
            Phy::new(&direction_params(&phy, 0))?,
            Phy::new(&direction_params(&phy, 1))?,
        ];
        self.pair = Some(LinkPair::new(p, &phy, self.sched.clone(), o)?);
        self.expect = [vec![VecDeque::new(); p.vcs], vec![VecDeque::new(); p.vcs]];
        Ok(())
    }

    fn fail(&mut self, m: Mismatch) {
        if self.pending.is_none() {
            self.pending = Some(m);
        }
    }

    fn read_flit(&self, e: usize) -> Option<Flit> {
        let p = &self.ports[e];
        if p.out_valid.get() != 1 {
            return None;
        }
        let mut w = [0u32; 8];
        p.out_data.get_words(&mut w[..2 * self.words]);
        let mut data = [0u64; 4];
        for (i, d) in data.iter_mut().enumerate().take(self.words) {
            *d = w[2 * i] as u64 | (w[2 * i + 1] as u64) << 32;
        }
        Some(Flit {
            data,
            head: p.out_head.get() == 1,
            tail: p.out_tail.get() == 1,
            vc: p.out_vc.get() as u8,
        })
    }

    fn check_end(&self, cycle: u64, e: usize) -> Option<Mismatch> {
        let p = &self.ports[e];
        let x = &self.expected[e];
        // Formats the port name only on a difference (this runs every cycle).
        let c = |name: &str, want: u64, got: u64| {
            (want != got).then(|| Mismatch::hex(cycle, &format!("e{e}_{name}"), want, got))
        };
        let w = x.word.unwrap_or_default();
        c(
            "phy_tx_valid",
            x.word.is_some() as u64,
            p.phy_tx_valid.get(),
        )
        .or_else(|| {
            x.word?;
            c("phy_tx_data", w.data, p.phy_tx_data.get())
                .or_else(|| c("phy_tx_ctrl", w.ctrl as u64, p.phy_tx_ctrl.get()))
        })
        .or_else(|| {
            c(
                "credit_out_valid",
                x.credit.is_some() as u64,
                p.credit_out_valid.get(),
            )
        })
        .or_else(|| {
            let v = x.credit?;
            c("credit_out_vc", v as u64, p.credit_out_vc.get())
        })
        .or_else(|| c("out_valid", x.flit.is_some() as u64, p.out_valid.get()))
        .or_else(|| {
            let f = x.flit?;
            let g = self.read_flit(e)?;
            if f.data != g.data {
                return Some(Mismatch {
                    cycle,
                    port: format!("e{e}_out_data"),
                    expected: format!("{:x?}", &f.data[..self.words]),
                    actual: format!("{:x?}", &g.data[..self.words]),
                });
            }
            c("out_head", f.head as u64, g.head as u64)
                .or_else(|| c("out_tail", f.tail as u64, g.tail as u64))
                .or_else(|| c("out_vc", f.vc as u64, g.vc as u64))
        })
        .or_else(|| c("state", x.state as u64, p.state.get()))
        .or_else(|| {
            p.tx_cnt.iter().find_map(|(n, port)| {
                let want = super::link_tx::counter(&x.tx, n) & 0xFFFF_FFFF;
                let got = port.get();
                (want != got).then(|| Mismatch::hex(cycle, &format!("e{e}_tx_{n}"), want, got))
            })
        })
        .or_else(|| {
            p.rx_cnt.iter().find_map(|(n, port)| {
                let want = super::link_rx::counter(&x.rx, n) & 0xFFFF_FFFF;
                let got = port.get();
                (want != got).then(|| Mismatch::hex(cycle, &format!("e{e}_rx_{n}"), want, got))
            })
        })
    }
}

impl Bench for LinkBench {
    fn block(&self) -> &str {
        "link"
    }

    fn point(&self) -> String {
        point::to_text(&self.pt)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_link_pair(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let w = self.params.flit_bits as u32;
        self.reset_port = Some(sim.port_w("reset", 1)?);
        self.ports = (0..2)
            .map(|e| {
                let q = |s: &str, bits: u32| sim.port_w(&format!("e{e}_{s}"), bits);
                Ok(EndPorts {
                    in_valid: q("in_valid", 1)?,
                    in_data: q("in_data", w)?,
                    in_head: q("in_head", 1)?,
                    in_tail: q("in_tail", 1)?,
                    in_vc: q("in_vc", 4)?,
                    phy_tx_ready: q("phy_tx_ready", 1)?,
                    phy_rx_valid: q("phy_rx_valid", 1)?,
                    phy_rx_ctrl: q("phy_rx_ctrl", 1)?,
                    phy_rx_data: q("phy_rx_data", 64)?,
                    phy_lane_up: q("phy_lane_up", 1)?,
                    credit_in_valid: q("credit_in_valid", 1)?,
                    credit_in_vc: q("credit_in_vc", 4)?,
                    credit_out_valid: q("credit_out_valid", 1)?,
                    credit_out_vc: q("credit_out_vc", 4)?,
                    phy_tx_valid: q("phy_tx_valid", 1)?,
                    phy_tx_data: q("phy_tx_data", 64)?,
                    phy_tx_ctrl: q("phy_tx_ctrl", 1)?,
                    out_valid: q("out_valid", 1)?,
                    out_data: q("out_data", w)?,
                    out_head: q("out_head", 1)?,
                    out_tail: q("out_tail", 1)?,
                    out_vc: q("out_vc", 4)?,
                    state: q("state", 2)?,
                    tx_cnt: super::link_tx::TX_COUNTERS
                        .iter()
                        .map(|&c| Ok((c, q(&format!("tx_{c}"), 32)?)))
                        .collect::<Result<Vec<_>>>()?,
                    rx_cnt: super::link_rx::COUNTERS
                        .iter()
                        .map(|&c| Ok((c, q(&format!("rx_{c}"), 32)?)))
                        .collect::<Result<Vec<_>>>()?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(())
    }

    fn reset(&mut self) {
        self.pair = None;
        self.phys.clear();
        self.expected = Default::default();
        self.expect = Default::default();
        self.pending = None;
        self.cov = LinkCoverage::default();
        self.last_state = [LinkState::Down; 2];
    }

    fn drive(&mut self, rng: &mut Rng, cycle: u64) {
        if self.pair.is_none() {
            self.build(rng).expect("a validated point builds");
        }
        if self.pt.inject_cycles > 0 && cycle == self.pt.inject_cycles {
            self.pair.as_mut().expect("built").stop_injection();
        }
        // The golden outputs of this cycle (registered, before the tick).
        let pair = self.pair.as_ref().expect("built");
        for e in 0..2 {
            let (tx, rx) = pair.end(e);
            self.expected[e] = EndExpect {
                word: tx.outputs().word,
                credit: tx.outputs().credit,
                flit: rx.outputs().flit,
                state: rx.outputs().status.state,
                tx: *tx.counters(),
                rx: *rx.counters(),
            };
        }
        // The RTL's words go through the RTL's PHYs.
        let t = pair.cycle();
        let up = self.sched.up(t);
        let mut arrive = [None, None];
        for e in 0..2 {
            let p = &self.ports[e];
            let word = (p.phy_tx_valid.get() == 1).then(|| PhyWord {
                data: p.phy_tx_data.get(),
                ctrl: p.phy_tx_ctrl.get() == 1,
            });
            let ready = self.phys[e].ready(t);
            arrive[1 - e] = self.phys[e].step(if ready { word } else { None }, up);
        }
        // Scoreboard of the RTL's flits and the RTL's credits.
        for e in 0..2 {
            if self.ports[e].credit_out_valid.get() == 1 {
                self.cov.credits += 1;
            }
            let state = match self.ports[e].state.get() {
                0 => LinkState::Down,
                1 => LinkState::Training,
                _ => LinkState::Up,
            };
            self.last_state[e] = state;
            if e == 0 {
                self.cov.state_cycles[state as usize] += 1;
            }
            if let Some(f) = self.read_flit(e) {
                let from = 1 - e;
                self.cov.delivered += 1;
                let want = self.expect[from]
                    .get_mut(f.vc as usize)
                    .and_then(|q| q.pop_front());
                if want != Some(f) {
                    self.cov.errors += 1;
                    self.fail(Mismatch {
                        cycle,
                        port: format!("scoreboard e{from}->e{e}"),
                        expected: format!("every flit once, in order, intact: {want:x?}"),
                        actual: format!("{f:x?}"),
                    });
                }
            }
        }
        let pair = self.pair.as_mut().expect("built");
        pair.step();
        for from in 0..2 {
            let first = self
                .pair
                .as_ref()
                .expect("built")
                .report(from)
                .first_error
                .clone();
            if let Some(err) = first {
                self.fail(Mismatch {
                    cycle,
                    port: "golden scoreboard".into(),
                    expected: "every flit once, in order, intact".into(),
                    actual: err,
                });
            }
        }
        // This cycle's inputs to the RTL: what the golden ends got, but the
        // words of the RTL's own PHYs.
        let pair = self.pair.as_ref().expect("built");
        let reset = self.reset_port.as_ref().expect("bind before drive");
        reset.set(0);
        for (e, p) in self.ports.iter().enumerate() {
            let (ti, ri) = pair.last_inputs(e);
            let f = ti.flit.unwrap_or_default();
            if let Some(f) = ti.flit {
                self.cov.sent += 1;
                if let Some(q) = self.expect[e].get_mut(f.vc as usize) {
                    q.push_back(f);
                }
            }
            p.in_valid.set(ti.flit.is_some() as u64);
            let words: Vec<u32> = f.data[..self.words]
                .iter()
                .flat_map(|w| [*w as u32, (*w >> 32) as u32])
                .collect();
            p.in_data.set_words(&words);
            p.in_head.set(f.head as u64);
            p.in_tail.set(f.tail as u64);
            p.in_vc.set(f.vc as u64);
            p.phy_tx_ready.set(ti.ready as u64);
            let w = arrive[e].unwrap_or_default();
            p.phy_rx_valid.set(arrive[e].is_some() as u64);
            p.phy_rx_ctrl.set(w.ctrl as u64);
            p.phy_rx_data.set(w.data);
            p.phy_lane_up.set(ri.lane_up as u64);
            let c = ri.router_credit;
            assert!(c.count_ones() <= 1, "one credit per cycle (one_credit)");
            p.credit_in_valid.set((c != 0) as u64);
            p.credit_in_vc.set(c.trailing_zeros() as u64 & 7);
        }
        let mut errs = 0;
        for e in 0..2 {
            let rtl_errs = self.phys[e].counters();
            errs += rtl_errs.bit_errors + rtl_errs.bursts + rtl_errs.dropped;
        }
        self.cov.phy_errors = errs;
        self.cov.cycles = cycle + 1;
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        if let Some(m) = self.pending.take() {
            return Some(m);
        }
        let m = self
            .check_end(cycle, 0)
            .or_else(|| self.check_end(cycle, 1));
        // Totals from the (just compared) golden counters.
        let x = &self.expected;
        let both = x[0].tx.merged(&x[0].rx).merged(&x[1].tx.merged(&x[1].rx));
        self.cov.frames = both.frames_sent;
        self.cov.crc_errors = both.crc_errors;
        self.cov.retransmissions = both.retransmissions;
        self.cov.timeouts = both.timeouts;
        self.cov.bad_acks = both.bad_acks;
        self.cov.link_downs = both.link_downs;
        m
    }

    fn advance(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_and_reject_bad_values() {
        let b = point("").unwrap();
        assert!(
            b.point().starts_with("flit_bits=128,vcs=4"),
            "{}",
            b.point()
        );
        for (text, want) in [
            ("vcs=9", "link.vcs = 9"),
            ("ber=lots", "link.ber = lots"),
            ("ber=0.5", "link.ber = 0.5"),
            ("flit_bits=96", "link.flit_bits = 96"),
            ("latency_cycles=0", "link.latency_cycles = 0"),
            ("rate_pct=101", "link.rate_pct = 101"),
            ("colour=red", "colour"),
        ] {
            let e = format!("{:#}", point(text).err().unwrap());
            assert!(e.contains(want), "{text}: {e}");
        }
        for b in matrix() {
            assert_eq!(point(&b.point()).unwrap().point(), b.point());
        }
    }
}
