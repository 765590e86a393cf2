//! Framed links in the network simulator: every router-to-router link is
//! router out → golden [`LinkTx`] → [`Phy`] → golden [`LinkRx`] → router in,
//! in both directions (the link layer of [`crate::link`]).
//!
//! # Keys
//! [`LinkKeys`] is the `[link]` section of the user config (beside the
//! parameters it becomes, as `RouterKeys` is for the router):
//! `link.model` = `"framed"` (this module) or `"ideal"` (the old wire: one
//! flit per cycle, error-free, the router's credit loop stretched over
//! `link_latency` cycles each way; the RTL-router network co-simulation
//! compares against that one). [`FramedLinks::from_keys`] derives the link
//! layer's parameters ([`LinkParams::sized_frames`] from the flit width,
//! the VCs, the latency in cycles and the router buffer), the PHY's
//! ([`PhyParams`]: BER, bursts) and its word rate: `link.gbps` against
//! `clock.pl_mhz` × 64 b (10 Gb/s at 156.25 MHz is one 64-bit word per
//! cycle; a slower link is a PHY whose TX `ready` is high on that share of
//! the cycles, evenly spread; a faster one is capped at one word per cycle).
//!
//! # Timing (cycle t, after the endpoints, before the routers)
//! 1. Each direction's PHY takes the word its `link_tx` shows (when `ready`)
//!    and delivers the word sent `latency_cycles` ago to the far `link_rx`.
//! 2. Each end's `link_tx` ticks with the flit its router put out during t
//!    (the router's output register) and its `link_rx`'s status; each
//!    `link_rx` ticks with the word that arrived and the credits its router
//!    returned during t.
//! 3. What they put out (a flit from `link_rx`, a credit from `link_tx`) is
//!    on the router's input during t + 1.
//!
//! The router's credits for a network output count `link_tx`'s
//! `tx_buffer_flits` (= `router.buffer_flits`) per VC, a 1–2 cycle local
//! loop; `link_rx` counts the router's input buffer. The cable's own credit
//! loop is `link_tx` ↔ the far `link_rx` (`rx_buffer_flits` per VC).
//!
//! # Seeds and schedule
//! Each direction's PHY has its own seed, derived from `sim.seed` and the
//! direction's index (node × ports + port of the sending end), so runs are
//! deterministic. `link.down` lists `[from, until)` cycle windows during
//! which the lanes are down, for the links of the routers in
//! `link.down_nodes` (every link when empty). A link that is not up is not
//! a deadlock: the watchdog does not fire while one is down, and the report
//! counts the link-downs and the cycles some link was not up.

use crate::link::link_rx::{LinkRx, RxInputs};
use crate::link::link_tx::{LinkTx, TxInputs};
use crate::link::phy::{Phy, PhyParams, PhySchedule};
use crate::link::{LinkCounters, LinkParams, LinkState, PhyWord, MAX_FRAME_FLITS};
use crate::router::Flit;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// The names `link.model` takes.
pub const LINK_MODELS: [&str; 2] = ["framed", "ideal"];

/// The `[link]` keys of the user config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkKeys {
    /// Usable data rate after line coding, Gb/s.
    pub gbps: f64,
    /// One-way latency of serdes + cable, ns.
    pub latency_ns: f64,
    /// `"framed"` (golden link layer) or `"ideal"` (1 flit/cycle wire).
    pub model: String,
    /// Most flits per frame, 1..=63; 0 = derived (about 108 data words).
    pub frame_flits: u32,
    /// Independent bit error rate on the 66-bit code words, 0..=1e-2.
    pub ber: f64,
    /// Probability per word sent that an error burst starts, 0..=1.
    pub burst_rate: f64,
    /// Payload bits a burst randomises, 1..=64.
    pub burst_bits: u32,
    /// Windows `[from, until]` of cycles (until excluded) the links are down.
    pub down: Vec<Vec<u64>>,
    /// Routers whose links `down` takes down; empty = every link.
    pub down_nodes: Vec<u32>,
}

/// A `[link]` value that breaks a rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkKeyError {
    /// The key (`link.ber`, `link.down[1]`, …).
    pub key: String,
    /// The value given.
    pub value: String,
    /// The rule.
    pub rule: String,
}

impl std::fmt::Display for LinkKeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} = {}: {}", self.key, self.value, self.rule)
    }
}

impl std::error::Error for LinkKeyError {}

fn bad(
    key: impl Into<String>,
    value: impl std::fmt::Debug,
    rule: impl Into<String>,
) -> LinkKeyError {
    LinkKeyError {
        key: key.into(),
        value: format!("{value:?}"),
        rule: rule.into(),
    }
}

/// The framed links of a network: one link layer per router-to-router link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FramedLinks {
    /// The link layer of every link end.
    pub link: LinkParams,
    /// The PHY of every direction (`seed` is the base of the per-direction seeds).
    pub phy: PhyParams,
    /// 64-bit words the PHY takes per cycle, (0, 1].
    pub words_per_cycle: f64,
    /// Down windows `[from, until)`, sorted, not overlapping.
    pub down: Vec<(u64, u64)>,
    /// Routers whose links the windows take down (empty = all).
    pub down_nodes: Vec<u32>,
}

impl FramedLinks {
    /// The framed links the keys describe, or `None` for `model = "ideal"`.
    /// `latency_cycles` is `link.latency_ns` in clock cycles (rounded up),
    /// `vcs` the VCs per link, `router_buffer` the router's per-VC buffer,
    /// `nodes` the routers in the network, `seed` the run's seed.
    #[allow(clippy::too_many_arguments)]
    pub fn from_keys(
        k: &LinkKeys,
        flit_bits: usize,
        vcs: usize,
        router_buffer: usize,
        latency_cycles: usize,
        pl_mhz: f64,
        nodes: usize,
        seed: u64,
    ) -> Result<Option<FramedLinks>, LinkKeyError> {
        match k.model.as_str() {
            "framed" => {}
            "ideal" => return Ok(None),
            m => {
                let names: Vec<String> = LINK_MODELS.iter().map(|n| format!("{n:?}")).collect();
                return Err(bad(
                    "link.model",
                    m,
                    format!("must be one of {}", names.join(", ")),
                ));
            }
        }
        if !(0.0..=1e-2).contains(&k.ber) {
            return Err(bad("link.ber", k.ber, "must be 0..=1e-2"));
        }
        if !(0.0..=1.0).contains(&k.burst_rate) {
            return Err(bad(
                "link.burst_rate",
                k.burst_rate,
                "must be 0..=1 (bursts per word sent)",
            ));
        }
        if !(1..=64).contains(&k.burst_bits) {
            return Err(bad(
                "link.burst_bits",
                k.burst_bits,
                "must be 1..=64 (payload bits of one 66-bit code word)",
            ));
        }
        if k.frame_flits as usize > MAX_FRAME_FLITS {
            return Err(bad(
                "link.frame_flits",
                k.frame_flits,
                "must be 0 (derived) or 1..=63 (6-bit tail slots)",
            ));
        }
        let mut down = Vec::with_capacity(k.down.len());
        for (i, w) in k.down.iter().enumerate() {
            let key = format!("link.down[{i}]");
            let &[from, until] = w.as_slice() else {
                return Err(bad(key, w, "must be a window [from, until] of two cycles"));
            };
            if from >= until {
                return Err(bad(key, w, "must have from < until (until excluded)"));
            }
            if let Some(&(_, prev)) = down.last() {
                if from < prev {
                    return Err(bad(
                        key,
                        w,
                        format!("must start at or after the previous window's end ({prev}): windows in order, not overlapping"),
                    ));
                }
            }
            down.push((from, until));
        }
        for (i, &n) in k.down_nodes.iter().enumerate() {
            if n as usize >= nodes {
                return Err(bad(
                    format!("link.down_nodes[{i}]"),
                    n,
                    format!("must be a router index below {nodes}"),
                ));
            }
        }
        if !k.down_nodes.is_empty() && down.is_empty() {
            return Err(bad(
                "link.down_nodes",
                &k.down_nodes,
                "needs link.down windows (it says whose links they take down)",
            ));
        }
        let latency = latency_cycles.max(1);
        let link = if k.frame_flits == 0 {
            LinkParams::sized(flit_bits, vcs, latency, router_buffer)
        } else {
            LinkParams::sized_frames(
                flit_bits,
                vcs,
                latency,
                router_buffer,
                k.frame_flits as usize,
            )
        };
        let words_per_cycle = (k.gbps * 1000.0 / (pl_mhz * 64.0)).min(1.0);
        let phy = PhyParams {
            latency_cycles: latency,
            ber: k.ber,
            burst_rate: k.burst_rate,
            burst_bits: k.burst_bits,
            cc_period: 0,
            cc_len: 3,
            seed,
        };
        let f = FramedLinks {
            link,
            phy,
            words_per_cycle,
            down,
            down_nodes: k.down_nodes.clone(),
        };
        f.validate()
            .map_err(|e| bad("link", k.model.as_str(), format!("{e:#}")))?;
        Ok(Some(f))
    }

    /// Check the derived parameters (the link layer's and the PHY's rules).
    pub fn validate(&self) -> Result<()> {
        self.link.validate()?;
        self.phy.validate()?;
        if !(self.words_per_cycle > 0.0 && self.words_per_cycle <= 1.0) {
            anyhow::bail!(
                "link words per cycle = {}: must be in (0, 1] (link.gbps against clock.pl_mhz x 64 b)",
                self.words_per_cycle
            );
        }
        Ok(())
    }

    /// Seed of the PHY direction leaving link end `index` (node × ports + port).
    pub fn phy_seed(&self, index: usize) -> u64 {
        let mut z = self
            .phy
            .seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add((index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
        z = (z ^ (z >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z ^ (z >> 32)
    }

    /// Flits per cycle one direction can carry at most, after framing: a
    /// full frame's flits over its words (flits + trailer) times the PHY's
    /// word rate. Control words take a little more (at most one per
    /// `ack_interval` cycles when both directions are busy).
    pub fn flit_rate_bound(&self) -> f64 {
        let p = &self.link;
        p.frame_flits as f64 / p.frame_words() as f64 * self.words_per_cycle
    }
}

/// What one link end's PHY interface carried in the last cycle (for
/// co-simulating RTL link ends against the golden ones, see
/// [`super::Network::link_ends`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkEndIo {
    /// The word `link_tx` showed the PHY (before its tick), taken or not.
    pub shown: Option<PhyWord>,
    /// The PHY took it (`phy_tx_ready`: the word pace and clock compensation).
    pub ready: bool,
    /// The word the PHY delivered to this end's `link_rx`.
    pub arrived: Option<PhyWord>,
    /// This end's lane was up (the down schedule).
    pub lane_up: bool,
}

/// One end of a link: its `link_tx`, `link_rx`, and the PHY direction it sends on.
pub struct End {
    /// The router and its network port this end serves.
    pub node: u32,
    pub port: u8,
    /// Index of the end at the other side.
    pub peer: u32,
    /// The schedule's windows take this link down.
    scheduled: bool,
    /// The sending half.
    pub tx: LinkTx,
    /// The receiving half.
    pub rx: LinkRx,
    phy: Phy,
    /// Its PHY interface in the last cycle.
    pub io: LinkEndIo,
}

/// The link layer state of a network.
pub(super) struct Links {
    pub(super) ends: Vec<End>,
    /// Per (node × ports + port): the end index, or `u32::MAX`.
    pub(super) end_of: Vec<u32>,
    /// Per end: the word that arrives at its `link_rx` this cycle.
    arrive: Vec<Option<PhyWord>>,
    /// Per end: the flit its router put out (for `link_tx`).
    pub(super) in_flit: Vec<Option<Flit>>,
    /// Per end: credits (VC mask) its router returned (for `link_rx`).
    pub(super) in_credit: Vec<u32>,
    sched: PhySchedule,
    vcs: usize,
    words_per_cycle: f64,
    pace: f64,
    /// Per end: flits passed to its router in the measurement window.
    pub(super) win_flits: Vec<u64>,
    /// Per end: words its PHY direction took in the measurement window.
    pub(super) win_words: Vec<u64>,
    /// Cycles during which some link end was not up.
    pub(super) not_up_cycles: u64,
    /// Some end is not up in the current cycle.
    pub(super) any_not_up: bool,
    /// Skip the ticks of quiet links (see [`Links::tick`]); results are
    /// the same either way.
    pub(super) skip_idle: bool,
    /// Per end: asleep since this cycle (its ticks from then on not yet
    /// done), or `u64::MAX` when awake. Both ends of a link sleep together.
    slept_from: Vec<u64>,
    /// Per end: the first cycle it must tick again (when asleep).
    wake_at: Vec<u64>,
    /// End ticks skipped so far.
    pub(super) skipped_ticks: u64,
}

impl Links {
    /// Link ends for every connected network port of `peer` (per node ×
    /// ports + port: the far node and port, node `u32::MAX` = unconnected).
    pub(super) fn new(f: &FramedLinks, peer: &[(u32, u8)], ports: usize) -> Result<Links> {
        let mut end_of = vec![u32::MAX; peer.len()];
        let mut idx = Vec::new();
        for (i, &(n, _)) in peer.iter().enumerate() {
            if n != u32::MAX {
                end_of[i] = idx.len() as u32;
                idx.push(i);
            }
        }
        let in_down =
            |node: usize| f.down_nodes.is_empty() || f.down_nodes.contains(&(node as u32));
        let mut ends = Vec::with_capacity(idx.len());
        for &i in &idx {
            let (node, port) = (i / ports, i % ports);
            let (qn, qp) = peer[i];
            let far = end_of[qn as usize * ports + qp as usize];
            anyhow::ensure!(
                far != u32::MAX,
                "link {node}.{port}: the far port is not linked back"
            );
            ends.push(End {
                node: node as u32,
                port: port as u8,
                peer: far,
                scheduled: !f.down.is_empty() && (in_down(node) || in_down(qn as usize)),
                tx: LinkTx::new(&f.link)?,
                rx: LinkRx::new(&f.link)?,
                phy: Phy::new(&PhyParams {
                    seed: f.phy_seed(i),
                    ..f.phy.clone()
                })?,
                io: LinkEndIo::default(),
            });
        }
        let n = ends.len();
        Ok(Links {
            ends,
            end_of,
            arrive: vec![None; n],
            in_flit: vec![None; n],
            in_credit: vec![0; n],
            sched: PhySchedule {
                down: f.down.clone(),
            },
            vcs: f.link.vcs,
            words_per_cycle: f.words_per_cycle,
            pace: 0.0,
            win_flits: vec![0; n],
            win_words: vec![0; n],
            not_up_cycles: 0,
            any_not_up: false,
            skip_idle: true,
            slept_from: vec![u64::MAX; n],
            wake_at: vec![0; n],
            skipped_ticks: 0,
        })
    }

    /// Whether every link is empty: nothing queued, unacked or buffered.
    pub(super) fn idle(&self) -> bool {
        self.in_flit.iter().all(|f| f.is_none())
            && self
                .ends
                .iter()
                .all(|e| e.tx.idle() && (0..self.vcs).all(|v| e.rx.held(v) == 0))
    }

    /// One cycle of every link (timing in the module doc). `deliver(end,
    /// flit, credit)` receives what each end puts on its router's inputs
    /// for the next cycle; `window` says whether the cycle is measured.
    /// Returns whether a flit entered or left a link.
    pub(super) fn tick(
        &mut self,
        t: u64,
        window: bool,
        mut deliver: impl FnMut(&End, Option<Flit>, Option<u8>),
    ) -> bool {
        // The PHY's word pace: `words_per_cycle` words per cycle, evenly spread.
        self.pace += self.words_per_cycle;
        let paced = self.pace >= 1.0 - 1e-12;
        if paced {
            self.pace -= 1.0;
        }
        let lane_up = self.sched.down.is_empty() || self.sched.up(t);
        // Wake the sleeping links that get an input from their routers or
        // whose keepalive falls due, doing the ticks they skipped at once.
        for e in 0..self.ends.len() {
            let from = self.slept_from[e];
            if from == u64::MAX {
                continue;
            }
            let q = self.ends[e].peer as usize;
            let input = |i: usize| self.in_flit[i].is_some() || self.in_credit[i] != 0;
            if t >= self.wake_at[e] || input(e) || input(q) {
                for i in [e, q] {
                    let end = &mut self.ends[i];
                    end.tx.skip((t - from) as usize);
                    end.rx.skip((t - from) as usize);
                    end.phy.skip(t - from);
                    self.slept_from[i] = u64::MAX;
                    self.skipped_ticks += t - from;
                }
            }
        }
        for (e, end) in self.ends.iter_mut().enumerate() {
            let up = lane_up || !end.scheduled;
            let ready = paced && end.phy.ready(t);
            if self.slept_from[e] != u64::MAX {
                // What an idle tick shows: no word either way.
                end.io = LinkEndIo {
                    shown: None,
                    ready,
                    arrived: None,
                    lane_up: up,
                };
                continue;
            }
            let shown = end.tx.outputs().word;
            let sent = if ready { shown } else { None };
            if window && sent.is_some() {
                self.win_words[e] += 1;
            }
            end.io.shown = shown;
            end.io.ready = ready;
            self.arrive[end.peer as usize] = end.phy.step(sent, up);
        }
        let mut moved = false;
        let mut not_up = false;
        for (e, end) in self.ends.iter_mut().enumerate() {
            if self.slept_from[e] != u64::MAX {
                continue;
            }
            let up = lane_up || !end.scheduled;
            let ready = paced && end.phy.ready(t);
            let flit = self.in_flit[e].take();
            moved |= flit.is_some();
            let status = end.rx.outputs().status;
            end.tx.tick(&TxInputs {
                flit,
                ready,
                rx: status,
            });
            let word = self.arrive[e].take();
            end.io.arrived = word;
            end.io.lane_up = up;
            end.rx.tick(&RxInputs {
                word,
                lane_up: up,
                router_credit: std::mem::take(&mut self.in_credit[e]),
            });
            not_up |= end.rx.outputs().status.state != LinkState::Up;
            let f = end.rx.outputs().flit;
            let c = end.tx.outputs().credit;
            if f.is_some() {
                moved = true;
                if window {
                    self.win_flits[e] += 1;
                }
            }
            if f.is_some() || c.is_some() {
                deliver(end, f, c);
            }
        }
        self.any_not_up = not_up;
        self.not_up_cycles += not_up as u64;
        if self.skip_idle {
            self.fall_asleep(t);
        }
        moved
    }

    /// Put to sleep, from cycle `t + 1`, every awake link whose two ends
    /// are quiet: up, with no down window, no word in either PHY
    /// direction, each `link_tx` with nothing to send before its keepalive
    /// ([`LinkTx::quiet_cycles`]) and each `link_rx` with nothing held
    /// ([`LinkRx::quiet`]). Until a router gives either end a flit or a
    /// credit, or the first keepalive falls due, their ticks would only
    /// count cycles, so they are skipped and done at once on waking
    /// (`skip`); the results are the same as ticking every cycle (the
    /// `idle_links_skipped_or_ticked_give_the_same_run` test).
    fn fall_asleep(&mut self, t: u64) {
        for e in 0..self.ends.len() {
            let q = self.ends[e].peer as usize;
            if q < e || self.slept_from[e] != u64::MAX {
                continue;
            }
            let quiet = |end: &End| -> usize {
                if end.scheduled || !end.phy.empty() || !end.rx.quiet() {
                    return 0;
                }
                end.tx.quiet_cycles(&end.rx.outputs().status)
            };
            let k = quiet(&self.ends[e]).min(quiet(&self.ends[q]));
            if k >= 2 {
                for i in [e, q] {
                    self.slept_from[i] = t + 1;
                    self.wake_at[i] = t + 1 + k as u64;
                }
            }
        }
    }

    /// Counters of every end summed, with the PHYs'.
    pub(super) fn report(&self, window: u64, flit_bits: usize) -> LinkReport {
        let mut c = LinkCounters::default();
        let (mut bit_errors, mut bursts, mut lost) = (0, 0, 0);
        for e in &self.ends {
            c = c.merged(e.tx.counters()).merged(e.rx.counters());
            let p = e.phy.counters();
            bit_errors += p.bit_errors;
            bursts += p.bursts;
            lost += p.dropped + p.lost_down;
        }
        let n = self.ends.len().max(1) as f64;
        let w = window.max(1) as f64;
        let flits: Vec<f64> = self.win_flits.iter().map(|&x| x as f64 / w).collect();
        let words: Vec<f64> = self.win_words.iter().map(|&x| x as f64 / w).collect();
        LinkReport {
            directions: self.ends.len(),
            flit_bits,
            words_per_cycle: self.words_per_cycle,
            flits_mean: flits.iter().sum::<f64>() / n,
            flits_max: flits.iter().cloned().fold(0.0, f64::max),
            words_mean: words.iter().sum::<f64>() / n,
            words_max: words.iter().cloned().fold(0.0, f64::max),
            counters: c,
            bit_errors,
            bursts,
            words_lost: lost,
            not_up_cycles: self.not_up_cycles,
        }
    }
}

/// What the links did (framed model).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkReport {
    /// Link directions (two per router-to-router link).
    pub directions: usize,
    /// Flit width, bits.
    pub flit_bits: usize,
    /// PHY words per cycle (1 = `link.gbps` at 64 b per clock cycle).
    pub words_per_cycle: f64,
    /// Flits one direction passed to its router per cycle in the
    /// measurement window: mean over directions and the busiest.
    pub flits_mean: f64,
    /// The busiest direction's flits per cycle.
    pub flits_max: f64,
    /// PHY words sent per cycle in the window (occupancy of the lane: data,
    /// trailers, control words, replays): mean over directions.
    pub words_mean: f64,
    /// The busiest direction's words per cycle.
    pub words_max: f64,
    /// Link-layer counters of every end summed (whole run).
    pub counters: LinkCounters,
    /// Line bit errors the PHYs injected.
    pub bit_errors: u64,
    /// Error bursts injected.
    pub bursts: u64,
    /// Words the PHYs dropped (bad sync header) or lost with a lane down.
    pub words_lost: u64,
    /// Cycles some link was not up (training or down).
    pub not_up_cycles: u64,
}
