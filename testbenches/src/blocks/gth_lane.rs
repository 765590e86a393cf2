//! Co-simulation bench of `gth_lane`: two RTL GTH lane adapters
//! (`exanet_gth_lane`, `a` and `b`, co-simulation top
//! `exanet_hdl::transceiver::emit_gth_lane_pair`) back to back through the
//! golden model of the GTH's 64B/66B gearbox and a serial line
//! (`exanet_sim::link::gth_lane::Gearbox`: TXSEQUENCE pause, bit offset,
//! bit errors, RXGEARBOXSLIP), one per direction, against two golden
//! adapters (`GthLane`) fed the same inputs. Every adapter output (node
//! side, gearbox side, status) is compared every cycle; the first
//! difference names the signal (`a_…` / `b_…`). The gearbox is driven by
//! the RTL's own TXSEQUENCE/TXHEADER/TXDATA, and it fails the run when the
//! RTL breaks the sequence count or offers a block at the pause (a real
//! gearbox would lose it silently).
//!
//! Beside it a scoreboard, independent of the golden adapters: with no bit
//! errors, each adapter's received words (`rx_tvalid` while `channel_up`)
//! are a gap-free, in-order run of the words the other adapter took.
//!
//! Stimulus: random node words (25 % control, sometimes the idle block's
//! payload as a data word), `tx_tvalid` at random; the wizard's reset-done
//! low at the start and, when `reset_every` is set, for a few cycles now
//! and then (both adapters restart and relock). With `lock_errors` set,
//! each block-lock acquisition starts a bad-header episode on the line
//! into the adapter that locked ([`Gearbox::bad_header_episode`]: one
//! block in `lock_errors` with an invalid header over the next four lock
//! windows), so the first locked windows carry a moderate density of bad
//! headers, below the loss threshold per window but above it over two
//! (a first window of the wrong length loses lock); the scoreboard then
//! lets a receiver lose, while in sync, at most as many words as the
//! episodes flipped headers.

use super::BlockInfo;
use crate::cosim::{cmp, Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::{bail, Result};
use exanet_hdl::emit::Emitted;
use exanet_hdl::transceiver::{emit_gth_lane_pair, GT_HEADER_BITS, GT_VALID_BITS};
use exanet_sim::link::gth_lane::{Gearbox, GthLane, LaneInputs, LaneOutputs};
use exanet_sim::link::pcs::{PcsParams, GEARBOX_SEQ_BITS, IDLE_WORD, LOCK_HEADERS};
use exanet_sim::link::PhyWord;
use exanet_sim::point;
use exanet_sim::rng::Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Registry entry for `exanet cosim gth_lane`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "gth_lane",
        about: "two GTH lane adapters (pcs66 + TXSEQUENCE gearbox pacing) back to back through a GTH gearbox and line model",
        matrix,
        point,
    }
}

/// Default matrix: clean lines with different bit offsets (one with
/// resets), a noisy line, and bad-header episodes at each lock (with
/// resets, so each adapter locks several times).
pub fn matrix_points() -> Vec<&'static str> {
    vec![
        "offset=23,ber=0,reset_every=0",
        "offset=61,ber=0,reset_every=7000",
        "offset=5,ber=0.0001,reset_every=0",
        "offset=23,ber=0,reset_every=7000,lock_errors=7",
    ]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(matrix_points(), point)
}

fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(GthLaneBench::new(point::parse(text)?)?))
}

/// One bench point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GthLanePoint {
    /// Bits of the first block lost on each line, 0..66.
    pub offset: u32,
    /// Line bit error rate, 0..=0.001 (0: the scoreboard checks every word).
    pub ber: f64,
    /// Every this many cycles, the wizard's reset-done drops for 5 cycles
    /// (0 = only at the start; else >= 2000, time to relock).
    pub reset_every: u64,
    /// At each block-lock acquisition, the line into that adapter gives
    /// one bad header in this many blocks over the next four lock windows
    /// (0 = none; else 2..=64).
    pub lock_errors: u64,
}

impl Default for GthLanePoint {
    fn default() -> Self {
        GthLanePoint {
            offset: 23,
            ber: 0.0,
            reset_every: 0,
            lock_errors: 0,
        }
    }
}

/// What a run exercised.
#[derive(Clone, Copy, Debug, Default)]
pub struct GthLaneCoverage {
    /// Words delivered by either adapter while up.
    pub words: u64,
    /// Words checked by the scoreboard.
    pub scoreboard_words: u64,
    /// TX pauses (tx_tready low outside reset while a word waited).
    pub pauses: u64,
    /// Block-lock acquisitions.
    pub locks: u64,
    /// Gearbox slips.
    pub slips: u64,
    /// Times a receiver started a gap-free run (after reset or lock).
    pub resyncs: u64,
    /// Bad-header episodes started (one per lock with `lock_errors`).
    pub episodes: u64,
    /// Headers the episodes flipped.
    pub episode_flips: u64,
    /// Words the scoreboard saw lost in sync (each under a flipped header).
    pub episode_losses: u64,
}

#[derive(Clone)]
struct SidePorts {
    gt_tx_done: Port,
    gt_rx_done: Port,
    gt_txpmaresetdone: Port,
    gt_userclk_tx_reset: Port,
    channel_up: Port,
    tx_tdata: Port,
    tx_tvalid: Port,
    tx_tready: Port,
    tx_ctrl: Port,
    rx_tdata: Port,
    rx_tvalid: Port,
    rx_ctrl: Port,
    gt_txdata: Port,
    gt_txheader: Port,
    gt_txsequence: Port,
    gt_rxdata: Port,
    gt_rxheader: Port,
    gt_rxheadervalid: Port,
    gt_rxdatavalid: Port,
    gt_rxgearboxslip: Port,
    block_lock: Port,
    cnt_invalid_headers: Port,
    cnt_lock_losses: Port,
}

/// One adapter's side of the bench.
struct Side {
    name: &'static str,
    golden: GthLane,
    /// The gearbox and line carrying this adapter's TX to the other.
    tx_line: Gearbox,
    /// The word offered on tx_tvalid (held until taken).
    offer: Option<PhyWord>,
    inputs: LaneInputs,
    expected: LaneOutputs,
    /// Words this adapter took, not yet seen at the other end.
    sent: VecDeque<PhyWord>,
    was_locked: bool,
    /// This side has delivered a word since its channel came up.
    synced: bool,
    /// Words this side lost while in sync (allowed up to the headers the
    /// episodes flipped on the line into it).
    lost_in_sync: u64,
}

/// The bench.
pub struct GthLaneBench {
    pt: GthLanePoint,
    p: PcsParams,
    sides: [Side; 2],
    ports: Option<[SidePorts; 2]>,
    cov: GthLaneCoverage,
}

impl GthLaneBench {
    /// A bench at `pt`; errors name the bad key.
    pub fn new(pt: GthLanePoint) -> Result<Self> {
        if pt.offset >= 66 {
            bail!("gth_lane.offset = {}: must be 0..66", pt.offset);
        }
        if !(0.0..=0.001).contains(&pt.ber) {
            bail!("gth_lane.ber = {}: must be 0..=0.001", pt.ber);
        }
        if pt.reset_every != 0 && pt.reset_every < 2000 {
            bail!(
                "gth_lane.reset_every = {}: must be 0 or >= 2000 (time to relock)",
                pt.reset_every
            );
        }
        if pt.lock_errors == 1 || pt.lock_errors > 64 {
            bail!(
                "gth_lane.lock_errors = {}: must be 0 (none) or 2..=64",
                pt.lock_errors
            );
        }
        let p = PcsParams::default();
        let side = |name, seed| -> Result<Side> {
            Ok(Side {
                name,
                golden: GthLane::new(p)?,
                tx_line: Gearbox::new(seed, pt.ber, pt.offset)?,
                offer: None,
                inputs: LaneInputs::default(),
                expected: LaneOutputs::default(),
                sent: VecDeque::new(),
                was_locked: false,
                synced: false,
                lost_in_sync: 0,
            })
        };
        Ok(GthLaneBench {
            sides: [side("a", 11)?, side("b", 12)?],
            p,
            pt,
            ports: None,
            cov: GthLaneCoverage::default(),
        })
    }

    /// What the run exercised.
    pub fn coverage(&self) -> GthLaneCoverage {
        self.cov
    }

    fn bad(cycle: u64, port: String, expected: String, actual: String) -> Option<Mismatch> {
        Some(Mismatch {
            cycle,
            port,
            expected,
            actual,
        })
    }
}

impl Bench for GthLaneBench {
    fn block(&self) -> &str {
        "gth_lane"
    }

    fn point(&self) -> String {
        point::to_text(&self.pt)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_gth_lane_pair(&self.p)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let side = |x: &str| -> Result<SidePorts> {
            let w = |n: &str, b: u32| sim.port_w(&format!("{x}_{n}"), b);
            Ok(SidePorts {
                gt_tx_done: w("gt_tx_done", 1)?,
                gt_rx_done: w("gt_rx_done", 1)?,
                gt_txpmaresetdone: w("gt_txpmaresetdone", 1)?,
                gt_userclk_tx_reset: w("gt_userclk_tx_reset", 1)?,
                channel_up: w("channel_up", 1)?,
                tx_tdata: w("tx_tdata", 64)?,
                tx_tvalid: w("tx_tvalid", 1)?,
                tx_tready: w("tx_tready", 1)?,
                tx_ctrl: w("tx_ctrl", 1)?,
                rx_tdata: w("rx_tdata", 64)?,
                rx_tvalid: w("rx_tvalid", 1)?,
                rx_ctrl: w("rx_ctrl", 1)?,
                gt_txdata: w("gt_txdata", 64)?,
                gt_txheader: w("gt_txheader", GT_HEADER_BITS)?,
                gt_txsequence: w("gt_txsequence", GEARBOX_SEQ_BITS)?,
                gt_rxdata: w("gt_rxdata", 64)?,
                gt_rxheader: w("gt_rxheader", GT_HEADER_BITS)?,
                gt_rxheadervalid: w("gt_rxheadervalid", GT_VALID_BITS)?,
                gt_rxdatavalid: w("gt_rxdatavalid", GT_VALID_BITS)?,
                gt_rxgearboxslip: w("gt_rxgearboxslip", 1)?,
                block_lock: w("block_lock", 1)?,
                cnt_invalid_headers: w("cnt_invalid_headers", 32)?,
                cnt_lock_losses: w("cnt_lock_losses", 32)?,
            })
        };
        self.ports = Some([side("a")?, side("b")?]);
        Ok(())
    }

    fn reset(&mut self) {
        *self = GthLaneBench {
            ports: self.ports.take(),
            ..GthLaneBench::new(self.pt.clone()).expect("checked")
        };
    }

    fn drive(&mut self, rng: &mut Rng, cycle: u64) {
        let ports = self.ports.clone().expect("bind before drive");
        let e = self.pt.reset_every;
        let done = cycle >= 4 && (e == 0 || cycle % e >= 5);
        // The RX gearbox of each side shows what the other side's line
        // delivers this cycle.
        for (s, p) in ports.iter().enumerate() {
            let block = self.sides[1 - s].tx_line.rx();
            let side = &mut self.sides[s];
            if side.offer.is_none() && rng.chance(0.9) {
                // Sometimes the idle block's payload as a data word (only
                // the control word is the idle block; the link layer never
                // sends that one).
                side.offer = Some(if rng.chance(0.02) {
                    PhyWord {
                        data: IDLE_WORD,
                        ctrl: false,
                    }
                } else {
                    PhyWord {
                        data: rng.next_u64(),
                        ctrl: rng.chance(0.25),
                    }
                });
            }
            side.inputs = LaneInputs {
                gt_done: done,
                tx: side.offer,
                rx_block: block,
            };
            side.expected = side.golden.outputs(&side.inputs);
            p.gt_tx_done.set(done as u64);
            p.gt_rx_done.set(done as u64);
            p.gt_txpmaresetdone.set(1);
            p.tx_tvalid.set(side.offer.is_some() as u64);
            p.tx_tdata.set(side.offer.map_or(0, |w| w.data));
            p.tx_ctrl.set(side.offer.is_some_and(|w| w.ctrl) as u64);
            let (h, d) = block.unwrap_or((0, 0));
            p.gt_rxheader.set(h as u64);
            p.gt_rxdata.set(d);
            p.gt_rxheadervalid.set(block.is_some() as u64);
            p.gt_rxdatavalid.set(block.is_some() as u64);
        }
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let ports = self.ports.clone().expect("bind before check");
        for (s, p) in ports.iter().enumerate() {
            let side = &self.sides[s];
            let o = side.expected;
            let x = side.name;
            let b = |v: bool| v as u64;
            let c = |n: &str, w: u64, got: u64| cmp(cycle, &format!("{x}_{n}"), w, got);
            let m = c("tx_tready", b(o.tx_ready), p.tx_tready.get())
                .or_else(|| c("gt_txsequence", o.txsequence as u64, p.gt_txsequence.get()))
                .or_else(|| c("gt_txheader", o.txheader as u64, p.gt_txheader.get()))
                .or_else(|| c("gt_txdata", o.txdata, p.gt_txdata.get()))
                .or_else(|| c("rx_tvalid", b(o.rx_valid), p.rx_tvalid.get()))
                .or_else(|| c("rx_tdata", o.rx_word.data, p.rx_tdata.get()))
                .or_else(|| c("rx_ctrl", b(o.rx_word.ctrl), p.rx_ctrl.get()))
                .or_else(|| c("channel_up", b(o.channel_up), p.channel_up.get()))
                .or_else(|| c("block_lock", b(o.block_lock), p.block_lock.get()))
                .or_else(|| c("gt_rxgearboxslip", b(o.rxslip), p.gt_rxgearboxslip.get()))
                .or_else(|| {
                    c(
                        "cnt_invalid_headers",
                        o.invalid_headers as u64,
                        p.cnt_invalid_headers.get(),
                    )
                })
                .or_else(|| {
                    c(
                        "cnt_lock_losses",
                        o.lock_losses as u64,
                        p.cnt_lock_losses.get(),
                    )
                })
                .or_else(|| c("gt_userclk_tx_reset", 0, p.gt_userclk_tx_reset.get()));
            if m.is_some() {
                return m;
            }
        }
        // The gearbox takes the RTL's own TX side; the scoreboard checks
        // the RTL's deliveries (values equal to the golden's by now).
        for (s, p) in ports.iter().enumerate() {
            let (seq, hdr, data) = (
                p.gt_txsequence.get() as u32,
                p.gt_txheader.get() as u8,
                p.gt_txdata.get(),
            );
            let x = self.sides[s].name;
            let line = &mut self.sides[s].tx_line;
            let (errs, lost) = (line.sequence_errors(), line.dropped_at_pause());
            line.tx(seq, hdr, data);
            if line.sequence_errors() != errs {
                return Self::bad(
                    cycle,
                    format!("{x}_gt_txsequence (gearbox: the count 0..=32 broke)"),
                    "the next value of the count".into(),
                    seq.to_string(),
                );
            }
            if line.dropped_at_pause() != lost {
                return Self::bad(
                    cycle,
                    format!(
                        "{x}_gt_txheader (gearbox: a block offered at TXSEQUENCE = 32 is lost)"
                    ),
                    "0 (no block at the pause)".into(),
                    hdr.to_string(),
                );
            }
            if p.gt_rxgearboxslip.get() == 1 {
                // The other side's line carries this side's RX.
                self.sides[1 - s].tx_line.slip();
                self.cov.slips += 1;
            }
        }
        for (s, p) in ports.iter().enumerate() {
            let x = self.sides[s].name;
            let up = p.channel_up.get() == 1;
            let lock = p.block_lock.get() == 1;
            if lock && !self.sides[s].was_locked {
                self.cov.locks += 1;
                if self.pt.lock_errors != 0 {
                    // The line into this side: the other side's TX line.
                    let windows = 4 * LOCK_HEADERS as u64;
                    self.sides[1 - s]
                        .tx_line
                        .bad_header_episode(windows, self.pt.lock_errors);
                    self.cov.episodes += 1;
                }
            }
            let side = &mut self.sides[s];
            side.was_locked = lock;
            if !up {
                side.synced = false;
            }
            if side.offer.is_some() && side.inputs.gt_done && !side.expected.tx_ready {
                self.cov.pauses += 1;
            }
            if !(up && p.rx_tvalid.get() == 1) {
                continue;
            }
            self.cov.words += 1;
            if self.pt.ber > 0.0 {
                continue;
            }
            let got = PhyWord {
                data: p.rx_tdata.get(),
                ctrl: p.rx_ctrl.get() == 1,
            };
            // The other side's words, in order: the first word after
            // (re)gaining the channel may follow words lost on the way
            // (sent while this side was down or locking); after it, none.
            let synced = self.sides[s].synced;
            let q = &mut self.sides[1 - s].sent;
            let Some(k) = q.iter().position(|w| *w == got) else {
                return Self::bad(
                    cycle,
                    format!("scoreboard: {x}_rx_tdata (a word the other adapter never took, or a repeat)"),
                    format!("{:x?}", q.front()),
                    format!("{got:x?}"),
                );
            };
            // Words under a header an episode flipped are dropped by the
            // receiver: at most that many losses in sync.
            let flips = self.sides[1 - s].tx_line.header_flips();
            if synced && k != 0 && self.sides[s].lost_in_sync + k as u64 <= flips {
                self.sides[s].lost_in_sync += k as u64;
                self.cov.episode_losses += k as u64;
            } else if synced && k != 0 {
                let q = &self.sides[1 - s].sent;
                return Self::bad(
                    cycle,
                    format!("scoreboard: {x}_rx_tdata ({k} words lost before it)"),
                    format!("{:x?}", q.front()),
                    format!("{got:x?}"),
                );
            }
            let q = &mut self.sides[1 - s].sent;
            q.drain(..=k);
            self.cov.resyncs += !synced as u64;
            self.sides[s].synced = true;
            self.cov.scoreboard_words += 1;
        }
        self.cov.episode_flips =
            self.sides[0].tx_line.header_flips() + self.sides[1].tx_line.header_flips();
        None
    }

    fn advance(&mut self) {
        for side in self.sides.iter_mut() {
            if let Some(w) = side.golden.tick(&side.inputs) {
                side.sent.push_back(w);
                side.offer = None;
            }
            // Words nobody will receive any more (lost in a reset) need
            // not be kept forever.
            while side.sent.len() > 4096 {
                side.sent.pop_front();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_and_reject_bad_values() {
        assert_eq!(
            point("").unwrap().point(),
            "offset=23,ber=0,reset_every=0,lock_errors=0"
        );
        for (t, want) in [
            ("offset=66", "gth_lane.offset = 66"),
            ("ber=0.5", "gth_lane.ber = 0.5"),
            ("reset_every=10", "gth_lane.reset_every = 10"),
            ("lock_errors=1", "gth_lane.lock_errors = 1"),
            ("lock_errors=65", "gth_lane.lock_errors = 65"),
        ] {
            let e = format!("{:#}", point(t).err().unwrap());
            assert!(e.contains(want), "{t}: {e}");
        }
    }
}
