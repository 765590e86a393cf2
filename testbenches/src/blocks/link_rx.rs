//! Co-simulation bench of `link_rx`: the RTL receiving end of a link
//! against the golden `exanet_sim::link::link_rx::LinkRx`, cycle by cycle.
//!
//! Around it, all golden: the far end's `link_tx` (fed by a router-like
//! source of packets on random VCs) sends through a PHY model (bit errors
//! at `ber`, bursts, clock-compensation gaps) to the block; the local
//! `link_tx` turns the block's status into acks and credits that go back
//! through a second PHY to the far end's `link_rx`, which feeds the far
//! `link_tx`. The lane goes down and up at random when `downs` is set. The
//! local router drains the block's flits with random credit returns
//! (phases of full stall fill the buffers), and now and then returns a
//! credit it does not owe (`bad_acks`).
//!
//! Directed bad input (`inject`: `crc`, `seq`, `dup`, `ctrl`, `train`,
//! `long`, `over`, or `all`): words put straight on the block's PHY input
//! between frames (real words arriving meanwhile wait behind them): a
//! frame just seen with a flipped data bit, the same frame again (a
//! duplicate), re-sealed with a sequence number ahead (a gap), a control
//! word with a bad CRC, garbage while training, a frame longer than
//! `frame_flits`, and a frame that overruns a full receive buffer (`over`:
//! the one a sender breaking the cable's credit loop would send; re-sealed
//! with the expected sequence number on a VC whose buffer has been full
//! for 16 cycles with no router credit returned, the router then holding
//! its credits until the frame is in, so the buffer is still full at the
//! trailer).
//!
//! A synchronous reset at random times (every 8,000 to 38,000 cycles)
//! returns the RTL, the golden model and everything around it (both far
//! ends, PHYs, source, router and scoreboard, rebuilt from the seed) to
//! power-on together.
//!
//! Every output is compared every cycle: the router flit (while valid),
//! the status bus for `link_tx`, every counter. A scoreboard checks that
//! the router receives every flit sent exactly once, in order per VC,
//! intact.

use super::BlockInfo;
use crate::cosim::{cmp, Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::{bail, Result};
use exanet_hdl::emit::Emitted;
use exanet_hdl::link::link_rx::emit_link_rx;
use exanet_sim::link::link_rx::{LinkRx, RxInputs, RxOutputs};
use exanet_sim::link::link_tx::{LinkTx, TxInputs};
use exanet_sim::link::phy::{Phy, PhyParams};
use exanet_sim::link::{
    crc_word, seal, seq_next, unseal, LinkCounters, LinkParams, LinkState, PhyWord, Trailer,
    FRAME_CRC_INIT,
};
use exanet_sim::point;
use exanet_sim::rng::Rng;
use exanet_sim::router::flit::Flit;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Registry entry for `exanet cosim link_rx`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "link_rx",
        about: "link receiving end: training, de-framing, CRC, go-back-N checks, VC buffers",
        matrix,
        point,
    }
}

/// The default matrix: widths, VC counts, frame and buffer sizes, errors.
pub fn matrix_points() -> Vec<&'static str> {
    vec![
        "flit_bits=128,vcs=4,ber=0.00001,downs=true,inject=over",
        "flit_bits=64,vcs=1,frame_flits=3,rx_buffer_flits=8,ber=0.00003",
        "flit_bits=256,vcs=8,ber=0.00001,downs=true",
        "flit_bits=64,vcs=3,frame_flits=63,rx_buffer_flits=70,inject=all",
        "flit_bits=128,vcs=2,frame_flits=5,rx_buffer_flits=6,router_credits=2,inject=all",
    ]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(matrix_points(), point)
}

fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(LinkRxBench::new(point::parse(text)?)?))
}

/// One parameter point of the bench.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkRxPoint {
    /// Flit width: 64, 128, 256.
    pub flit_bits: usize,
    /// VCs, 1..=8.
    pub vcs: usize,
    /// Frame length in flits (0: the sized default).
    pub frame_flits: usize,
    /// Receive buffer per VC (0: the sized default).
    pub rx_buffer_flits: usize,
    /// Router credits per VC.
    pub router_credits: usize,
    /// PHY latency in cycles each way.
    pub latency: usize,
    /// Bit error rate.
    pub ber: f64,
    /// Error bursts per word.
    pub burst_rate: f64,
    /// Random lane down/up events.
    pub downs: bool,
    /// Directed bad input: none, crc, seq, dup, ctrl, train, long, over, all.
    pub inject: String,
    /// Offered flits per cycle at the far end.
    pub rate: f64,
}

impl Default for LinkRxPoint {
    fn default() -> Self {
        LinkRxPoint {
            flit_bits: 128,
            vcs: 4,
            frame_flits: 0,
            rx_buffer_flits: 0,
            router_credits: 32,
            latency: 16,
            ber: 0.0,
            burst_rate: 0.0,
            downs: false,
            inject: "none".into(),
            rate: 0.4,
        }
    }
}

/// Kinds of directed bad input.
pub const INJECT_KINDS: [&str; 7] = ["crc", "seq", "dup", "ctrl", "train", "long", "over"];

impl LinkRxPoint {
    /// The link parameters of this point (validated).
    pub fn link(&self) -> Result<LinkParams> {
        let mut p = LinkParams::sized(self.flit_bits, self.vcs, self.latency, self.router_credits);
        if self.frame_flits > 0 {
            p.frame_flits = self.frame_flits;
            let fw = p.frame_words();
            p.retry_words = p.retry_words.max((2 * fw).next_power_of_two());
        }
        if self.rx_buffer_flits > 0 {
            p.rx_buffer_flits = self.rx_buffer_flits;
        }
        p.validate()?;
        Ok(p)
    }

    fn kinds(&self) -> Result<Vec<usize>> {
        match self.inject.as_str() {
            "none" => Ok(vec![]),
            "all" => Ok((0..INJECT_KINDS.len()).collect()),
            k => match INJECT_KINDS.iter().position(|x| *x == k) {
                Some(i) => Ok(vec![i]),
                None => bail!(
                    "link_rx.inject = {k}: must be none, all or one of {}",
                    INJECT_KINDS.join(", ")
                ),
            },
        }
    }
}

/// A deliberately wrong golden model, to show the bench catches a mismatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkRxFault {
    /// The golden model never sees a router credit.
    IgnoreCredits,
    /// The golden model sees the lane always up.
    LaneAlwaysUp,
}

/// What a run exercised; the integration tests assert on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkRxCoverage {
    /// Flits delivered to the router (checked by the scoreboard).
    pub delivered: u64,
    /// Frames accepted.
    pub frames: u64,
    /// Bad frames (CRC, length, sideband).
    pub crc_errors: u64,
    /// Duplicates.
    pub duplicates: u64,
    /// Gaps.
    pub seq_errors: u64,
    /// Control words with a bad CRC.
    pub ctrl_crc_errors: u64,
    /// Non-training words while training.
    pub training_errors: u64,
    /// Nacks raised.
    pub nacks: u64,
    /// Lane drops while a frame was half received.
    pub downs_mid_frame: u64,
    /// Cycles in Training.
    pub training_cycles: u64,
    /// Cycles a VC held a full receive buffer.
    pub full_buffer_cycles: u64,
    /// Cycles a VC held flits but had no router credit.
    pub backpressure_cycles: u64,
    /// Credits returned that were not owed.
    pub bad_acks: u64,
    /// Directed injections per kind (order of [`INJECT_KINDS`]).
    pub injected: [u64; 7],
    /// Frames refused for want of room in their VC's buffer.
    pub overflows: u64,
    /// Mid-run resets.
    pub resets: u64,
}

#[derive(Clone)]
struct Ports {
    reset: Port,
    phy_rx_valid: Port,
    phy_rx_ctrl: Port,
    phy_rx_data: Port,
    phy_lane_up: Port,
    credit_in_valid: Port,
    credit_in_vc: Port,
    out_valid: Port,
    out_data: Port,
    out_head: Port,
    out_tail: Port,
    out_vc: Port,
    st_state: Port,
    st_heard: Port,
    st_peer_valid: Port,
    st_peer_fields: Port,
    st_ack_seq: Port,
    st_nack_count: Port,
    st_urgent: Port,
    st_freed: Port,
    cnt: Vec<(&'static str, Port)>,
}

/// The receive-half counters, by port name (`cnt_<name>`).
pub const COUNTERS: [&str; 9] = [
    "frames_received",
    "crc_errors",
    "ctrl_crc_errors",
    "seq_errors",
    "duplicates",
    "link_downs",
    "bad_acks",
    "training_errors",
    "overflows",
];

/// Receive-half counter `name` of `c`.
pub fn counter(c: &LinkCounters, name: &str) -> u64 {
    match name {
        "frames_received" => c.frames_received,
        "crc_errors" => c.crc_errors,
        "ctrl_crc_errors" => c.ctrl_crc_errors,
        "seq_errors" => c.seq_errors,
        "duplicates" => c.duplicates,
        "link_downs" => c.link_downs,
        "bad_acks" => c.bad_acks,
        "training_errors" => c.training_errors,
        "overflows" => c.overflows,
        _ => unreachable!("counter {name}"),
    }
}

/// The `link_rx` bench at one parameter point.
pub struct LinkRxBench {
    pt: LinkRxPoint,
    p: LinkParams,
    kinds: Vec<usize>,
    fault: Option<LinkRxFault>,
    ports: Option<Ports>,
    /// Bench cycle of the next mid-run reset.
    reset_at: u64,
    /// This cycle's synchronous reset.
    resetting: bool,
    golden: LinkRx,
    far_tx: LinkTx,
    far_rx: LinkRx,
    near_tx: LinkTx,
    phy: Option<[Phy; 2]>,
    up: bool,
    switch_at: u64,
    // Far source.
    pending: Vec<VecDeque<Flit>>,
    src_credits: Vec<usize>,
    src_count: Vec<u64>,
    src_rr: usize,
    expect: Vec<VecDeque<Flit>>,
    // Local router sink.
    held: Vec<usize>,
    drain: f64,
    phase_left: u64,
    /// Per VC: cycles its buffer has been full with no flit of it out.
    stall: Vec<u64>,
    /// Per VC: cycles since the router last returned a credit of it.
    since_credit: Vec<u64>,
    /// Cycles the router returns no credit at all (an `over` frame in).
    quiet_left: u64,
    // Injection.
    queue: VecDeque<PhyWord>,
    cur_frame: Vec<PhyWord>,
    last_frame: Vec<PhyWord>,
    inputs: RxInputs,
    golden_inputs: RxInputs,
    score_error: Option<String>,
    cov: LinkRxCoverage,
}

impl LinkRxBench {
    /// A bench whose RTL and golden model share the point.
    pub fn new(pt: LinkRxPoint) -> Result<Self> {
        Self::with_fault(pt, None)
    }

    /// A bench whose golden model is wrong in the way `fault` says.
    pub fn with_fault(pt: LinkRxPoint, fault: Option<LinkRxFault>) -> Result<Self> {
        let p = pt.link()?;
        let kinds = pt.kinds()?;
        PhyParams {
            latency_cycles: pt.latency,
            ber: pt.ber,
            burst_rate: pt.burst_rate,
            ..Default::default()
        }
        .validate()?;
        if !(0.0..=1.0).contains(&pt.rate) {
            bail!("link_rx.rate = {}: must be 0..=1", pt.rate);
        }
        Ok(LinkRxBench {
            golden: LinkRx::new(&p)?,
            far_tx: LinkTx::new(&p)?,
            far_rx: LinkRx::new(&p)?,
            near_tx: LinkTx::new(&p)?,
            phy: None,
            up: true,
            switch_at: 0,
            pending: vec![VecDeque::new(); p.vcs],
            src_credits: vec![p.tx_buffer_flits; p.vcs],
            src_count: vec![0; p.vcs],
            src_rr: 0,
            expect: vec![VecDeque::new(); p.vcs],
            held: vec![0; p.vcs],
            drain: 1.0,
            phase_left: 0,
            stall: vec![0; p.vcs],
            since_credit: vec![0; p.vcs],
            quiet_left: 0,
            queue: VecDeque::new(),
            cur_frame: Vec::new(),
            last_frame: Vec::new(),
            inputs: RxInputs::default(),
            golden_inputs: RxInputs::default(),
            score_error: None,
            cov: LinkRxCoverage::default(),
            kinds,
            fault,
            ports: None,
            reset_at: 0,
            resetting: false,
            pt,
            p,
        })
    }

    /// What the run since the last [`Bench::reset`] exercised.
    pub fn coverage(&self) -> LinkRxCoverage {
        self.cov
    }

    /// The golden model's counters.
    pub fn counters(&self) -> LinkCounters {
        *self.golden.counters()
    }

    /// Flits sent by the far source and not yet delivered.
    pub fn in_flight(&self) -> usize {
        self.expect.iter().map(|q| q.len()).sum::<usize>()
    }

    fn downs_wanted(&self) -> bool {
        self.pt.downs || self.kinds.contains(&4)
    }

    /// Directed words to inject now, of a kind drawn from the point's.
    fn injection(&mut self, rng: &mut Rng) -> Option<(usize, Vec<PhyWord>)> {
        let kind = self.kinds[rng.below(self.kinds.len() as u64) as usize];
        let st = self.golden.outputs().status.state;
        let wanted = if kind == 4 {
            LinkState::Training
        } else {
            LinkState::Up
        };
        if st != wanted {
            return None;
        }
        let bad_ctrl = |rng: &mut Rng| loop {
            let data = rng.next_u64();
            if unseal(FRAME_CRC_INIT, data).is_none() {
                break PhyWord { data, ctrl: true };
            }
        };
        let words = match kind {
            0 | 2 if self.last_frame.len() > 1 => {
                let mut f = self.last_frame.clone();
                if kind == 0 {
                    let i = rng.below(f.len() as u64 - 1) as usize;
                    f[i].data ^= 1 << rng.below(64);
                }
                f
            }
            1 if self.last_frame.len() > 1 => {
                let mut f = self.last_frame.clone();
                let (tr, data) = f.split_last_mut().expect("a frame");
                let crc = data.iter().fold(FRAME_CRC_INIT, |s, w| crc_word(s, w.data));
                let mut t = Trailer::unpack(unseal(crc, tr.data)?)?;
                let expected = seq_next(self.golden.outputs().status.ack_seq);
                t.seq = (expected + 1 + rng.below(30) as u8) & 63;
                tr.data = seal(crc, t.pack());
                f
            }
            3 => vec![bad_ctrl(rng)],
            4 => (0..1 + rng.below(4))
                .map(|_| {
                    if rng.chance(0.5) {
                        bad_ctrl(rng)
                    } else {
                        PhyWord {
                            data: rng.next_u64(),
                            ctrl: false,
                        }
                    }
                })
                .collect(),
            5 => {
                let n = self.p.frame_words() + rng.below(3) as usize;
                let mut v: Vec<PhyWord> = (0..n)
                    .map(|_| PhyWord {
                        data: rng.next_u64(),
                        ctrl: false,
                    })
                    .collect();
                v.push(bad_ctrl(rng));
                v
            }
            6 if self.last_frame.len() > 1 => {
                let wpf = self.p.words_per_flit();
                let n = (self.last_frame.len() - 1) / wpf;
                let full = self.p.rx_buffer_flits;
                let v = (0..self.p.vcs).find(|&v| {
                    self.stall[v] >= 16
                        && self.since_credit[v] >= 16
                        && self.golden.held(v) + n > full
                })?;
                let mut f = self.last_frame.clone();
                let (tr, data) = f.split_last_mut().expect("a frame");
                let crc = data.iter().fold(FRAME_CRC_INIT, |s, w| crc_word(s, w.data));
                let mut t = Trailer::unpack(unseal(crc, tr.data)?)?;
                t.seq = seq_next(self.golden.outputs().status.ack_seq);
                t.vc = v as u8;
                tr.data = seal(crc, t.pack());
                // No credit until the trailer is in (the words, the one
                // real word queued behind them, and a margin).
                self.quiet_left = f.len() as u64 + 8;
                f
            }
            _ => return None,
        };
        Some((kind, words))
    }

    fn sink_and_score(&mut self, o: &RxOutputs, rng: &mut Rng) -> Option<u8> {
        if let Some(f) = o.flit {
            self.cov.delivered += 1;
            let vc = f.vc as usize;
            let want = self.expect.get_mut(vc).and_then(|q| q.pop_front());
            if want != Some(f) && self.score_error.is_none() {
                self.score_error = Some(format!("got {f:?}, expected {want:?}"));
            }
            if vc < self.p.vcs {
                self.held[vc] += 1;
            }
        }
        if self.phase_left == 0 {
            self.drain = [0.0, 0.3, 1.0, 1.0][rng.below(4) as usize];
            self.phase_left = 1 + rng.below(3000);
        }
        self.phase_left -= 1;
        for c in self.since_credit.iter_mut() {
            *c += 1;
        }
        if self.quiet_left > 0 {
            self.quiet_left -= 1;
            return None;
        }
        if rng.chance(0.0005) {
            self.cov.bad_acks += 1;
            let v = rng.below(self.p.vcs as u64) as usize;
            self.since_credit[v] = 0;
            return Some(v as u8);
        }
        if !rng.chance(self.drain) {
            return None;
        }
        let start = rng.below(self.p.vcs as u64) as usize;
        let v = (0..self.p.vcs)
            .map(|k| (start + k) % self.p.vcs)
            .find(|&v| self.held[v] > 0)?;
        self.held[v] -= 1;
        self.since_credit[v] = 0;
        Some(v as u8)
    }

    fn source(&mut self, rng: &mut Rng) -> Option<Flit> {
        if let Some(v) = self.far_tx.outputs().credit {
            self.src_credits[v as usize] += 1;
        }
        let mean = 9.5;
        if rng.chance(self.pt.rate / mean) {
            let vc = rng.below(self.p.vcs as u64) as usize;
            let len = 1 + rng.below(18) as usize;
            let wpf = self.p.words_per_flit();
            for k in 0..len {
                let n = self.src_count[vc];
                self.src_count[vc] += 1;
                let mut data = [0u64; 4];
                for (w, d) in data.iter_mut().enumerate().take(wpf) {
                    *d = (vc as u64) << 56 | n << 4 | w as u64;
                }
                let malformed = rng.chance(0.01);
                self.pending[vc].push_back(Flit {
                    data,
                    head: if malformed { rng.chance(0.5) } else { k == 0 },
                    tail: if malformed {
                        rng.chance(0.5)
                    } else {
                        k + 1 == len
                    },
                    vc: vc as u8,
                });
            }
        }
        let n = self.p.vcs;
        let v = (0..n)
            .map(|k| (self.src_rr + k) % n)
            .find(|&v| self.src_credits[v] > 0 && !self.pending[v].is_empty())?;
        self.src_rr = (v + 1) % n;
        self.src_credits[v] -= 1;
        let f = self.pending[v].pop_front()?;
        self.expect[v].push_back(f);
        Some(f)
    }
}

impl Bench for LinkRxBench {
    fn block(&self) -> &str {
        "link_rx"
    }

    fn point(&self) -> String {
        point::to_text(&self.pt)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_link_rx(&self.p)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let mut cnt = Vec::new();
        for name in COUNTERS {
            cnt.push((name, sim.port_w(&format!("cnt_{name}"), 32)?));
        }
        self.ports = Some(Ports {
            reset: sim.port_w("reset", 1)?,
            phy_rx_valid: sim.port_w("phy_rx_valid", 1)?,
            phy_rx_ctrl: sim.port_w("phy_rx_ctrl", 1)?,
            phy_rx_data: sim.port_w("phy_rx_data", 64)?,
            phy_lane_up: sim.port_w("phy_lane_up", 1)?,
            credit_in_valid: sim.port_w("credit_in_valid", 1)?,
            credit_in_vc: sim.port_w("credit_in_vc", 4)?,
            out_valid: sim.port_w("out_valid", 1)?,
            out_data: sim.port_w("out_data", self.p.flit_bits as u32)?,
            out_head: sim.port_w("out_head", 1)?,
            out_tail: sim.port_w("out_tail", 1)?,
            out_vc: sim.port_w("out_vc", 4)?,
            st_state: sim.port_w("st_state", 2)?,
            st_heard: sim.port_w("st_heard", 1)?,
            st_peer_valid: sim.port_w("st_peer_valid", 1)?,
            st_peer_fields: sim.port_w("st_peer_fields", 32)?,
            st_ack_seq: sim.port_w("st_ack_seq", 6)?,
            st_nack_count: sim.port_w("st_nack_count", 8)?,
            st_urgent: sim.port_w("st_urgent", 8)?,
            st_freed: sim.port_w("st_freed", 8 * self.p.vcs as u32)?,
            cnt,
        });
        Ok(())
    }

    fn reset(&mut self) {
        let fresh = LinkRxBench::with_fault(self.pt.clone(), self.fault)
            .expect("the point was validated when the bench was made");
        let ports = self.ports.take();
        *self = fresh;
        self.ports = ports;
    }

    fn drive(&mut self, rng: &mut Rng, cycle: u64) {
        if self.phy.is_none() {
            let mk = |seed| {
                Phy::new(&PhyParams {
                    latency_cycles: self.pt.latency,
                    ber: self.pt.ber,
                    burst_rate: self.pt.burst_rate,
                    cc_period: 10_000,
                    seed,
                    ..Default::default()
                })
                .expect("validated PHY parameters")
            };
            let (a, b) = (rng.next_u64(), rng.next_u64());
            self.phy = Some([mk(a), mk(b)]);
            // The first lane drop comes early after each (re)start, so the
            // runs between mid-run resets still see drops mid-frame.
            self.switch_at = cycle + 1000 + rng.below(8_000);
            self.reset_at = cycle + 8_000 + rng.below(30_000);
        }
        // Lane down/up.
        if self.downs_wanted() && cycle >= self.switch_at {
            self.up = !self.up;
            self.switch_at = cycle
                + if self.up {
                    2000 + rng.below(15_000)
                } else {
                    1 + rng.below(1500)
                };
            if !self.up && self.golden.mid_frame() {
                self.cov.downs_mid_frame += 1;
            }
        }
        let up = self.up;
        let phy = self.phy.as_mut().expect("made above");
        let ready_a = phy[0].ready(cycle);
        let ready_b = phy[1].ready(cycle);
        let sent_a = self.far_tx.outputs().word.filter(|_| ready_a);
        let sent_b = self.near_tx.outputs().word.filter(|_| ready_b);
        let arrive_b = phy[0].step(sent_a, up);
        let arrive_a = phy[1].step(sent_b, up);
        // What the block gets: the PHY's words, behind any injected ones.
        if !up {
            self.queue.clear();
            self.cur_frame.clear();
        }
        if let Some(w) = arrive_b {
            self.queue.push_back(w);
        }
        if !self.kinds.is_empty()
            && up
            && self.queue.len() <= 1
            && !self.golden.mid_frame()
            && rng.chance(
                if self.golden.outputs().status.state == LinkState::Training {
                    0.1
                } else if self.kinds.contains(&6) && self.stall.iter().any(|&t| t >= 16) {
                    // A full buffer does not last: catch it.
                    0.02
                } else {
                    0.003
                },
            )
        {
            if let Some((kind, words)) = self.injection(rng) {
                self.cov.injected[kind] += 1;
                let real = self.queue.pop_back();
                self.queue.extend(words);
                self.queue.extend(real);
            }
        }
        let word = self.queue.pop_front();
        if let Some(w) = word {
            self.cur_frame.push(w);
            if w.ctrl {
                if unseal(FRAME_CRC_INIT, w.data).is_none() && self.cur_frame.len() > 1 {
                    self.last_frame = std::mem::take(&mut self.cur_frame);
                } else {
                    self.cur_frame.pop();
                }
            }
        }
        // The local router: take the block's flit, return a credit.
        let o = *self.golden.outputs();
        let credit = self.sink_and_score(&o, rng);
        // The far source and the golden link ends around the block.
        let flit = self.source(rng);
        let far_status = self.far_rx.outputs().status;
        self.far_tx.tick(&TxInputs {
            flit,
            ready: ready_a,
            rx: far_status,
        });
        self.far_rx.tick(&RxInputs {
            word: arrive_a,
            lane_up: up,
            router_credit: 0,
        });
        self.near_tx.tick(&TxInputs {
            flit: None,
            ready: ready_b,
            rx: o.status,
        });
        // Coverage from the golden view of this cycle.
        let c = &mut self.cov;
        c.training_cycles += (o.status.state == LinkState::Training) as u64;
        for v in 0..self.p.vcs {
            let h = self.golden.held(v);
            c.full_buffer_cycles += (h == self.p.rx_buffer_flits) as u64;
            let out = o.flit.is_some_and(|f| f.vc as usize == v);
            self.stall[v] = if h == self.p.rx_buffer_flits && !out {
                self.stall[v] + 1
            } else {
                0
            };
        }
        c.backpressure_cycles += (0..self.p.vcs)
            .any(|v| self.golden.held(v) > 0 && o.flit.is_none_or(|f| f.vc as usize != v))
            as u64;
        self.inputs = RxInputs {
            word,
            lane_up: up,
            router_credit: credit.map_or(0, |v| 1 << v),
        };
        self.golden_inputs = self.inputs;
        match self.fault {
            Some(LinkRxFault::IgnoreCredits) => self.golden_inputs.router_credit = 0,
            Some(LinkRxFault::LaneAlwaysUp) => self.golden_inputs.lane_up = true,
            None => {}
        }
        self.resetting = cycle == self.reset_at;
        self.cov.resets += self.resetting as u64;
        let p = self.ports.as_ref().expect("bind before drive");
        p.reset.set(self.resetting as u64);
        p.phy_rx_valid.set(word.is_some() as u64);
        let w = word.unwrap_or_default();
        p.phy_rx_ctrl.set(w.ctrl as u64);
        p.phy_rx_data.set(w.data);
        p.phy_lane_up.set(up as u64);
        p.credit_in_valid.set(credit.is_some() as u64);
        p.credit_in_vc.set(credit.unwrap_or(0) as u64);
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        if let Some(e) = self.score_error.take() {
            return Some(Mismatch {
                cycle,
                port: "scoreboard".into(),
                expected: "every flit once, in order, intact".into(),
                actual: e,
            });
        }
        let o = self.golden.outputs();
        let p = self.ports.as_ref().expect("bind before check");
        let s = &o.status;
        let freed = (0..self.p.vcs).fold(0u64, |a, v| a | (s.freed[v] as u64) << (8 * v));
        let m = cmp(
            cycle,
            "out_valid",
            o.flit.is_some() as u64,
            p.out_valid.get(),
        )
        .or_else(|| {
            let f = o.flit?;
            let n = self.p.flit_bits / 32;
            let mut got = [0u32; 8];
            p.out_data.get_words(&mut got[..n]);
            let want: Vec<u32> = f
                .data
                .iter()
                .flat_map(|w| [*w as u32, (*w >> 32) as u32])
                .take(n)
                .collect();
            (want[..] != got[..n])
                .then(|| Mismatch::words(cycle, "out_data", &want, &got[..n]))
                .or_else(|| cmp(cycle, "out_head", f.head as u64, p.out_head.get()))
                .or_else(|| cmp(cycle, "out_tail", f.tail as u64, p.out_tail.get()))
                .or_else(|| cmp(cycle, "out_vc", f.vc as u64, p.out_vc.get()))
        })
        .or_else(|| cmp(cycle, "st_state", s.state as u64, p.st_state.get()))
        .or_else(|| cmp(cycle, "st_heard", s.heard as u64, p.st_heard.get()))
        .or_else(|| {
            cmp(
                cycle,
                "st_peer_valid",
                s.peer_ctrl.is_some() as u64,
                p.st_peer_valid.get(),
            )
        })
        .or_else(|| {
            let c = s.peer_ctrl?;
            cmp(
                cycle,
                "st_peer_fields",
                c.pack() as u64,
                p.st_peer_fields.get(),
            )
        })
        .or_else(|| cmp(cycle, "st_ack_seq", s.ack_seq as u64, p.st_ack_seq.get()))
        .or_else(|| {
            cmp(
                cycle,
                "st_nack_count",
                s.nack_count as u64,
                p.st_nack_count.get(),
            )
        })
        .or_else(|| cmp(cycle, "st_urgent", s.urgent as u64, p.st_urgent.get()))
        .or_else(|| cmp(cycle, "st_freed", freed, p.st_freed.get()));
        if m.is_some() {
            return m;
        }
        let c = self.golden.counters();
        p.cnt.iter().find_map(|(name, port)| {
            cmp(
                cycle,
                &format!("cnt_{name}"),
                counter(c, name) & 0xFFFF_FFFF,
                port.get(),
            )
        })
    }

    fn advance(&mut self) {
        if self.resetting {
            // Power-on for the block and everything around it (the RTL saw
            // `reset`); the coverage goes on adding up.
            let mut fresh = LinkRxBench::with_fault(self.pt.clone(), self.fault)
                .expect("the point was validated when the bench was made");
            fresh.ports = self.ports.take();
            fresh.cov = self.cov;
            *self = fresh;
            return;
        }
        let before = self.golden.outputs().status.nack_count;
        let b = *self.golden.counters();
        self.golden.tick(&self.golden_inputs);
        let g = &self.golden;
        self.cov.nacks += (g.outputs().status.nack_count != before) as u64;
        let c = g.counters();
        self.cov.frames += c.frames_received - b.frames_received;
        self.cov.crc_errors += c.crc_errors - b.crc_errors;
        self.cov.duplicates += c.duplicates - b.duplicates;
        self.cov.seq_errors += c.seq_errors - b.seq_errors;
        self.cov.ctrl_crc_errors += c.ctrl_crc_errors - b.ctrl_crc_errors;
        self.cov.training_errors += c.training_errors - b.training_errors;
        self.cov.overflows += c.overflows - b.overflows;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_and_reject_bad_values() {
        let b = point("").unwrap();
        assert!(
            b.point().starts_with("flit_bits=128,vcs=4,"),
            "{}",
            b.point()
        );
        let e = point("inject=bogus").err().unwrap().to_string();
        assert!(e.contains("link_rx.inject = bogus"), "{e}");
        let e = point("vcs=9").err().unwrap().to_string();
        assert!(e.contains("link.vcs = 9"), "{e}");
        let e = point("ber=0.5").err().unwrap().to_string();
        assert!(e.contains("link.ber"), "{e}");
        for b in matrix() {
            assert_eq!(point(&b.point()).unwrap().point(), b.point());
        }
    }
}
