//! Co-simulation bench of `link_tx`: the RTL inside an otherwise golden
//! link (`exanet_sim::link::pair::LinkPair`): end 0's golden `link_rx`
//! gives its status, a PHY model each way with bit errors (`ber`), clock
//! compensation gaps on `ready` (a random period from the seed) and
//! scheduled link down/up intervals (from the seed), and a golden far end.
//! Router-like sources send random packets on random VCs under the
//! credit protocol of `link_tx`'s buffers; the sinks drain at random.
//!
//! The RTL's outputs drive the link (the PHY word and the source's
//! credits), and end 0's golden `link_tx` runs beside it on the same
//! inputs: every output (PHY valid/data/ctrl, router credit, every
//! counter, low 32 bits) is compared every cycle. The pair's scoreboard
//! checks that the far router receives every flit exactly once, in order,
//! intact (a scoreboard error is a mismatch on port `scoreboard`).
//!
//! Three things change during a run (issue 19, mutation analysis): the
//! offered load moves between phases (from isolated packets to a full
//! link, so the VC round robin meets every rotation with one VC pending);
//! phases in which the peer is silent (no control word reaches the status
//! side: no acks, nacks or credits) make retransmit timeouts frequent, also
//! right after the link comes up; and a synchronous reset at random times
//! returns the RTL, and the whole golden link around it (both ends, PHYs,
//! sources and scoreboard, rebuilt from the seed), to power-on together.
//! Silence is applied to the RTL's status inputs and to a golden `link_tx`
//! beside end 0's, which the RTL is compared with (without `forge`).
//!
//! With `forge=true` the status side also carries forged control words
//! (acks of frames never sent, credit returns for more flits than were
//! sent) when `link_rx` decoded none; a second golden `link_tx` fed the
//! same inputs without them must match the first in everything but
//! `bad_acks` (port `forged:<what>`).

use super::BlockInfo;
use crate::cosim::{cmp, Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::{bail, Result};
use exanet_hdl::emit::Emitted;
use exanet_hdl::link::link_tx::{check_rtl_params, emit_link_tx};
use exanet_sim::link::link_tx::{LinkTx, TxOutputs};
use exanet_sim::link::pair::{LinkPair, PairOptions};
use exanet_sim::link::phy::{PhyParams, PhySchedule};
use exanet_sim::link::{Control, LinkCounters, LinkParams, LinkState, PhyWord};
use exanet_sim::point;
use exanet_sim::rng::Rng;
use serde::{Deserialize, Serialize};

/// Registry entry for `exanet cosim link_tx`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "link_tx",
        about: "link sending half: VC buffers, framing + CRC, control words, go-back-N replay",
        matrix,
        point,
    }
}

/// Default matrix: flit widths 64/128/256, 1..8 VCs, short and long
/// frames, short and default cable latencies.
pub fn matrix_points() -> Vec<&'static str> {
    vec![
        "flit_bits=128,vcs=4",
        "flit_bits=64,vcs=1,latency_cycles=2,frame_flits=3",
        "flit_bits=256,vcs=8,latency_cycles=4,frame_flits=63",
        "flit_bits=128,vcs=3,latency_cycles=1,frame_flits=1,router_credits=4",
        "flit_bits=64,vcs=5,latency_cycles=8,frame_flits=63,ber=1e-4",
        "flit_bits=256,vcs=2,latency_cycles=3,frame_flits=5,forge=true",
    ]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(matrix_points(), point)
}

/// Parse a point (see [`LinkTxPoint`]).
fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(LinkTxBench::new(point::parse(text)?)?))
}

/// One bench point: the link's shape and the environment's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkTxPoint {
    /// Flit width: 64, 128, 256.
    pub flit_bits: usize,
    /// VCs, 1..=8.
    pub vcs: usize,
    /// One-way PHY latency in cycles.
    pub latency_cycles: usize,
    /// Most flits per frame (0: derived from the flit width).
    pub frame_flits: usize,
    /// Router buffer per VC (the `tx_buffer_flits` the sources count).
    pub router_credits: usize,
    /// Bit error rate on both PHY directions (text, e.g. `1e-5`).
    pub ber: String,
    /// Scheduled link down/up intervals.
    pub downs: bool,
    /// Forged bad acks and credit returns on the status side.
    pub forge: bool,
}

impl Default for LinkTxPoint {
    fn default() -> Self {
        LinkTxPoint {
            flit_bits: 128,
            vcs: 4,
            latency_cycles: 16,
            frame_flits: 0,
            router_credits: 32,
            ber: "1e-5".into(),
            downs: true,
            forge: false,
        }
    }
}

impl LinkTxPoint {
    /// The link parameters (derived as `LinkParams::sized`).
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
        check_rtl_params(&p)?;
        Ok(p)
    }

    /// The BER as a number.
    pub fn ber(&self) -> Result<f64> {
        let b: f64 = self
            .ber
            .parse()
            .map_err(|_| anyhow::anyhow!("link_tx.ber = {}: not a number", self.ber))?;
        if !(0.0..=1e-2).contains(&b) {
            bail!("link_tx.ber = {}: must be 0..=1e-2", self.ber);
        }
        Ok(b)
    }
}

/// A deliberately wrong golden model, to show the bench catches a mismatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkTxFault {
    /// The golden model sees `ready` always high (the RTL sees the gaps).
    IgnoreReady,
    /// The golden model never sees a peer control word.
    IgnorePeerCtrl,
}

/// What a run exercised; the integration test asserts on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkTxCoverage {
    /// Replays started by a nack.
    pub nack_replays: u64,
    /// Replays started by the retransmit timeout.
    pub timeouts: u64,
    /// Up → down with a frame open.
    pub down_mid_frame: u64,
    /// Cycles a word waited for `ready`.
    pub ready_gaps: u64,
    /// Cycles in training.
    pub training: u64,
    /// Forged bad acks / credit returns counted.
    pub bad_acks: u64,
    /// Frames sent.
    pub frames: u64,
    /// Flits delivered to the far router.
    pub delivered: u64,
    /// Mid-run resets.
    pub resets: u64,
    /// Cycles in which the peer was silent.
    pub silent: u64,
    /// Timeouts during silent phases.
    pub silent_timeouts: u64,
}

#[derive(Clone)]
struct Ports {
    reset: Port,
    in_valid: Port,
    in_data: Port,
    in_head: Port,
    in_tail: Port,
    in_vc: Port,
    phy_tx_ready: Port,
    st_state: Port,
    st_heard: Port,
    st_peer_valid: Port,
    st_peer_fields: Port,
    st_ack_seq: Port,
    st_nack_count: Port,
    st_urgent: Port,
    st_freed: Port,
    credit_out_valid: Port,
    credit_out_vc: Port,
    phy_tx_valid: Port,
    phy_tx_data: Port,
    phy_tx_ctrl: Port,
    counters: Vec<(&'static str, Port)>,
}

/// The counters `link_tx` owns, by port name.
pub const TX_COUNTERS: [&str; 7] = [
    "frames_sent",
    "retransmissions",
    "timeouts",
    "bad_acks",
    "overflows",
    "words_replayed",
    "ctrl_sent",
];

/// Counter `name` of `c`.
pub fn counter(c: &LinkCounters, name: &str) -> u64 {
    match name {
        "frames_sent" => c.frames_sent,
        "retransmissions" => c.retransmissions,
        "timeouts" => c.timeouts,
        "bad_acks" => c.bad_acks,
        "overflows" => c.overflows,
        "words_replayed" => c.words_replayed,
        "ctrl_sent" => c.ctrl_sent,
        _ => unreachable!("unknown counter {name}"),
    }
}

/// The `link_tx` bench at one parameter point.
pub struct LinkTxBench {
    pt: LinkTxPoint,
    params: LinkParams,
    ber: f64,
    fault: Option<LinkTxFault>,
    ports: Option<Ports>,
    pair: Option<LinkPair>,
    /// Golden `link_tx` beside end 0's when the fault needs other inputs.
    golden: Option<LinkTx>,
    shadow: Option<LinkTx>,
    expected: TxOutputs,
    expected_counters: LinkCounters,
    pending: Option<Mismatch>,
    prev_up: bool,
    cov: LinkTxCoverage,
    /// Bench cycle of the next mid-run reset.
    reset_at: u64,
    /// Cycles left in this load phase.
    phase_left: u64,
    /// Cycles left in this silent-peer phase.
    silent_left: u64,
}

impl LinkTxBench {
    /// A bench whose RTL and golden model share `pt`.
    pub fn new(pt: LinkTxPoint) -> Result<Self> {
        Self::with_fault(pt, None)
    }

    /// A bench whose golden model is wrong in the way `fault` says.
    pub fn with_fault(pt: LinkTxPoint, fault: Option<LinkTxFault>) -> Result<Self> {
        let params = pt.link_params()?;
        let ber = pt.ber()?;
        Ok(LinkTxBench {
            pt,
            params,
            ber,
            fault,
            ports: None,
            pair: None,
            golden: None,
            shadow: None,
            expected: TxOutputs::default(),
            expected_counters: LinkCounters::default(),
            pending: None,
            prev_up: false,
            cov: LinkTxCoverage::default(),
            reset_at: 0,
            phase_left: 0,
            silent_left: 0,
        })
    }

    /// What the run since the last [`Bench::reset`] exercised.
    pub fn coverage(&self) -> LinkTxCoverage {
        self.cov
    }

    /// The link parameters.
    pub fn params(&self) -> &LinkParams {
        &self.params
    }

    fn build(&mut self, rng: &mut Rng, cycle: u64) -> Result<()> {
        self.reset_at = cycle + 4_000 + rng.below(16_000);
        self.phase_left = 0;
        self.silent_left = 0;
        self.prev_up = false;
        let p = &self.params;
        let mut down = Vec::new();
        if self.pt.downs {
            // The first drop falls early in each life (1,000 to 4,000
            // cycles after a rebuild, once the link has trained), so
            // nearly every life between two resets (4,000 to 20,000
            // cycles) sees one: a drop that cuts a frame while it is
            // flushed is then reached in a short run as well.
            let mut t = 1_000 + rng.below(3_000);
            while t < 1 << 22 {
                let len = match rng.below(4) {
                    0 => 1 + rng.below(8),
                    1 => 20 + rng.below(200),
                    _ => 200 + rng.below(3_000),
                };
                down.push((t, t + len));
                t += len + 3_000 + rng.below(15_000);
            }
        }
        let cc_period = 40 + rng.below(400);
        let phy = PhyParams {
            latency_cycles: p.latency_cycles.max(1),
            ber: self.ber,
            burst_rate: 0.0,
            burst_bits: 16,
            cc_period,
            cc_len: 1 + rng.below(4),
            seed: rng.next_u64(),
        };
        let o = PairOptions {
            rate: [0.3, 0.6, 1.0][rng.below(3) as usize],
            min_flits: 1,
            max_flits: [3, 18, 40][rng.below(3) as usize],
            both_ways: true,
            drain: [0.3, 0.9, 1.0][rng.below(3) as usize],
            malformed: [0.0, 0.0, 0.02][rng.below(3) as usize],
            one_credit: false,
            stray_credit: 0.0,
            seed: rng.next_u64(),
        };
        let pair = LinkPair::new(p, &phy, PhySchedule { down }, o)?;
        if self.fault.is_some() || !self.pt.forge {
            self.golden = Some(pair.end(0).0.clone());
        }
        if self.pt.forge {
            self.shadow = Some(pair.end(0).0.clone());
        }
        self.pair = Some(pair);
        Ok(())
    }

    /// A forged control word from end 0's golden `link_tx` state: an ack of
    /// a frame never sent and credit returns for more flits than were sent.
    fn forge(&self, rng: &mut Rng) -> Control {
        let tx = self.pair.as_ref().expect("built").end(0).0;
        let (acked, _, frames) = tx.ack_state();
        let r = rng.below(63 - frames as u64) as u8;
        let ack_seq = (acked as usize + 1 + frames + r as usize) as u8 & 63;
        let slot = |rng: &mut Rng| {
            let vc = rng.below(self.params.vcs as u64) as u8;
            let (sent, pf) = tx.credit_state(vc as usize);
            let used = sent.wrapping_sub(pf);
            let freed = if used < 255 {
                pf.wrapping_add(used)
                    .wrapping_add(1)
                    .wrapping_add(rng.below(255 - used as u64) as u8)
            } else {
                pf
            };
            (vc, freed)
        };
        let a = slot(rng);
        let b = slot(rng);
        Control {
            nack: false,
            ack_seq,
            credits: [a, b],
        }
    }
}

impl Bench for LinkTxBench {
    fn block(&self) -> &str {
        "link_tx"
    }

    fn point(&self) -> String {
        point::to_text(&self.pt)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_link_tx(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let p = &self.params;
        let counters = TX_COUNTERS
            .iter()
            .map(|&n| Ok((n, sim.port_w(&format!("cnt_{n}"), 32)?)))
            .collect::<Result<Vec<_>>>()?;
        self.ports = Some(Ports {
            reset: sim.port_w("reset", 1)?,
            in_valid: sim.port_w("in_valid", 1)?,
            in_data: sim.port_w("in_data", p.flit_bits as u32)?,
            in_head: sim.port_w("in_head", 1)?,
            in_tail: sim.port_w("in_tail", 1)?,
            in_vc: sim.port_w("in_vc", 4)?,
            phy_tx_ready: sim.port_w("phy_tx_ready", 1)?,
            st_state: sim.port_w("st_state", 2)?,
            st_heard: sim.port_w("st_heard", 1)?,
            st_peer_valid: sim.port_w("st_peer_valid", 1)?,
            st_peer_fields: sim.port_w("st_peer_fields", 32)?,
            st_ack_seq: sim.port_w("st_ack_seq", 6)?,
            st_nack_count: sim.port_w("st_nack_count", 8)?,
            st_urgent: sim.port_w("st_urgent", 8)?,
            st_freed: sim.port_w("st_freed", 8 * p.vcs as u32)?,
            credit_out_valid: sim.port_w("credit_out_valid", 1)?,
            credit_out_vc: sim.port_w("credit_out_vc", 4)?,
            phy_tx_valid: sim.port_w("phy_tx_valid", 1)?,
            phy_tx_data: sim.port_w("phy_tx_data", 64)?,
            phy_tx_ctrl: sim.port_w("phy_tx_ctrl", 1)?,
            counters,
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.pair = None;
        self.golden = None;
        self.shadow = None;
        self.expected = TxOutputs::default();
        self.expected_counters = LinkCounters::default();
        self.pending = None;
        self.prev_up = false;
        self.cov = LinkTxCoverage::default();
        self.reset_at = 0;
        self.phase_left = 0;
        self.silent_left = 0;
    }

    fn drive(&mut self, rng: &mut Rng, cycle: u64) {
        if self.pair.is_none() {
            self.build(rng, cycle).expect("a validated point builds");
        }
        if self.phase_left == 0 {
            // Isolated packets .. a full link.
            let rate = [0.02, 0.1, 0.3, 0.6, 1.0][rng.below(5) as usize];
            self.pair.as_mut().expect("built").set_rate(rate);
            self.phase_left = 1_000 + rng.below(8_000);
        }
        self.phase_left -= 1;
        let p = self.ports.clone().expect("bind before drive");
        // The RTL's registered outputs of this cycle drive the link.
        let rtl = TxOutputs {
            word: (p.phy_tx_valid.get() == 1).then(|| PhyWord {
                data: p.phy_tx_data.get(),
                ctrl: p.phy_tx_ctrl.get() == 1,
            }),
            credit: (p.credit_out_valid.get() == 1).then(|| p.credit_out_vc.get() as u8),
        };
        let pair = self.pair.as_ref().expect("built");
        let tx0 = pair.end(0).0;
        let (g_out, g_cnt) = match &self.golden {
            Some(g) => (*g.outputs(), *g.counters()),
            None => (*tx0.outputs(), *tx0.counters()),
        };
        self.expected = g_out;
        self.expected_counters = g_cnt;
        let (had_frame, before) = match &self.golden {
            Some(g) => (g.frame_open(), *g.counters()),
            None => (tx0.frame_open(), *tx0.counters()),
        };
        let no_ctrl = pair.end(0).1.outputs().status.peer_ctrl.is_none();
        let forge = (self.pt.forge && no_ctrl && rng.chance(0.003)).then(|| self.forge(rng));
        let delivered_before = pair.report(0).delivered;
        let pair = self.pair.as_mut().expect("built");
        let ti = pair.step_hooked(Some(rtl), forge);
        let tx0 = pair.end(0).0;
        // A silent peer: no control word reaches the status side, starting
        // at random and often as the link comes up (a lost ack after a
        // replay), long enough for the retransmit timeout to fire.
        let up = ti.rx.state == LinkState::Up;
        if self.golden.is_some() && self.silent_left == 0 {
            let p_start = if up && !self.prev_up {
                0.5
            } else {
                1.0 / 6_000.0
            };
            if rng.chance(p_start) {
                let t = self.params.timeout as u64;
                self.silent_left = t / 2 + rng.below(4 * t);
            }
        }
        let silent = self.silent_left > 0;
        self.silent_left = self.silent_left.saturating_sub(1);
        let mut ri = ti;
        if silent {
            ri.rx.peer_ctrl = None;
        }
        // The golden beside the pair (silence, faults) and the shadow (forged words).
        let mut gi = ri;
        match self.fault {
            Some(LinkTxFault::IgnoreReady) => gi.ready = true,
            Some(LinkTxFault::IgnorePeerCtrl) => gi.rx.peer_ctrl = None,
            None => {}
        }
        if let Some(g) = self.golden.as_mut() {
            g.tick(&gi);
        }
        // Coverage from the view of the golden model the RTL is compared with.
        let after = match &self.golden {
            Some(g) => *g.counters(),
            None => *tx0.counters(),
        };
        let c = &mut self.cov;
        if gi.rx.peer_ctrl.is_some_and(|x| x.nack) && after.retransmissions > before.retransmissions
        {
            c.nack_replays += 1;
        }
        c.timeouts += after.timeouts - before.timeouts;
        c.silent += silent as u64;
        if silent {
            c.silent_timeouts += after.timeouts - before.timeouts;
        }
        c.down_mid_frame += (self.prev_up && !up && had_frame) as u64;
        self.prev_up = up;
        c.ready_gaps += (g_out.word.is_some() && !ti.ready) as u64;
        c.training += (ti.rx.state == LinkState::Training) as u64;
        c.bad_acks += after.bad_acks - before.bad_acks;
        c.frames += after.frames_sent - before.frames_sent;
        c.delivered += pair.report(0).delivered - delivered_before;
        let r = pair.report(0);
        if r.errors > 0 && self.pending.is_none() {
            self.pending = Some(Mismatch {
                cycle,
                port: "scoreboard".into(),
                expected: "every flit once, in order, intact".into(),
                actual: r.first_error.clone().unwrap_or_default(),
            });
        }
        if let Some(s) = self.shadow.as_mut() {
            let mut si = ti;
            if forge.is_some() && no_ctrl {
                si.rx.peer_ctrl = None;
            }
            s.tick(&si);
            let (a, b) = (s.counters(), tx0.counters());
            if self.pending.is_none() {
                let what = if s.outputs() != tx0.outputs() {
                    Some("outputs")
                } else {
                    TX_COUNTERS
                        .iter()
                        .find(|&&n| n != "bad_acks" && counter(a, n) != counter(b, n))
                        .copied()
                };
                if let Some(w) = what {
                    self.pending = Some(Mismatch {
                        cycle,
                        port: format!("forged:{w}"),
                        expected: format!("{:?} {a:?}", s.outputs()),
                        actual: format!("{:?} {b:?}", tx0.outputs()),
                    });
                }
            }
        }
        // This cycle's inputs to the RTL; a mid-run reset returns it, and
        // (from the next cycle) a new golden link, to power-on.
        let ti = ri;
        let f = ti.flit.unwrap_or_default();
        let reset = cycle == self.reset_at;
        if reset {
            self.pair = None;
            self.golden = None;
            self.shadow = None;
            self.cov.resets += 1;
        }
        p.reset.set(reset as u64);
        p.in_valid.set(ti.flit.is_some() as u64);
        let words: Vec<u32> = f.data[..self.params.words_per_flit()]
            .iter()
            .flat_map(|w| [*w as u32, (*w >> 32) as u32])
            .collect();
        p.in_data.set_words(&words);
        p.in_head.set(f.head as u64);
        p.in_tail.set(f.tail as u64);
        p.in_vc.set(f.vc as u64);
        p.phy_tx_ready.set(ti.ready as u64);
        let st = &ti.rx;
        p.st_state.set(st.state as u64);
        p.st_heard.set(st.heard as u64);
        p.st_peer_valid.set(st.peer_ctrl.is_some() as u64);
        p.st_peer_fields
            .set(st.peer_ctrl.map_or(0, |c| c.pack()) as u64);
        p.st_ack_seq.set(st.ack_seq as u64);
        p.st_nack_count.set(st.nack_count as u64);
        p.st_urgent.set(st.urgent as u64);
        let freed = (0..self.params.vcs).fold(0u64, |m, v| m | (st.freed[v] as u64) << (8 * v));
        p.st_freed.set(freed);
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        if let Some(m) = self.pending.take() {
            return Some(m);
        }
        let p = self.ports.as_ref().expect("bind before check");
        let o = &self.expected;
        let w = o.word.unwrap_or_default();
        cmp(
            cycle,
            "phy_tx_valid",
            o.word.is_some() as u64,
            p.phy_tx_valid.get(),
        )
        .or_else(|| {
            o.word?;
            cmp(cycle, "phy_tx_data", w.data, p.phy_tx_data.get())
                .or_else(|| cmp(cycle, "phy_tx_ctrl", w.ctrl as u64, p.phy_tx_ctrl.get()))
        })
        .or_else(|| {
            cmp(
                cycle,
                "credit_out_valid",
                o.credit.is_some() as u64,
                p.credit_out_valid.get(),
            )
        })
        .or_else(|| {
            let v = o.credit?;
            cmp(cycle, "credit_out_vc", v as u64, p.credit_out_vc.get())
        })
        .or_else(|| {
            p.counters.iter().find_map(|(n, port)| {
                let e = counter(&self.expected_counters, n) & 0xFFFF_FFFF;
                cmp(cycle, &format!("cnt_{n}"), e, port.get())
            })
        })
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
        let e = point("vcs=9").err().unwrap().to_string();
        assert!(e.contains("link.vcs = 9"), "{e}");
        let e = point("ber=lots").err().unwrap().to_string();
        assert!(e.contains("link_tx.ber = lots"), "{e}");
        let e = point("flit_bits=96").err().unwrap().to_string();
        assert!(e.contains("link.flit_bits = 96"), "{e}");
        for b in matrix() {
            assert_eq!(point(&b.point()).unwrap().point(), b.point());
        }
    }
}
