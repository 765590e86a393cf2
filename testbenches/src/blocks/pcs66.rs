//! Co-simulation bench of `pcs66`: the RTL TX half sends through a serial
//! channel model ([`SerialChannel`]: 66-bit blocks as a bit stream with an
//! unknown initial bit offset, bit errors at `ber`, noise bursts, and one
//! dropped bit per RX `gt_rxslip`, as the GTH gearbox slips) into the RTL
//! RX half. Every output is compared every cycle with the golden
//! `PcsTx`/`PcsRx` fed the same inputs (first difference names the
//! signal). Beside it a scoreboard, independent of the golden model, uses
//! the channel's record of every flipped bit: each block the RX cuts on a
//! block boundary while locked must come out as the word sent with exactly
//! the flips the line caused (bits p, p+39, p+58 of each payload error, a
//! data/control swap for a doubly-flipped header), or be dropped when its
//! header is invalid; a word delivered off a block boundary is a false
//! lock.
//!
//! Stimulus: random words (25 % control) with the TX gearbox's pause one
//! cycle in 33 plus random idle cycles; the RX gearbox shows random gaps.

use super::BlockInfo;
use crate::cosim::{cmp, Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::{bail, Result};
use exanet_hdl::emit::Emitted;
use exanet_hdl::link::pcs66::emit_pcs66;
use exanet_sim::link::pcs::{
    header_ok, spread, PcsParams, PcsRx, PcsRxIn, PcsRxOut, PcsTx, PcsTxIn, PcsTxOut, SerialChannel,
};
use exanet_sim::link::PhyWord;
use exanet_sim::point;
use exanet_sim::rng::Rng;
use serde::{Deserialize, Serialize};

/// Registry entry for `exanet cosim pcs66`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "pcs66",
        about: "64B/66B PCS for the raw GTH (scrambler, sync headers, block lock) over a serial line with bit offset, BER and slips",
        matrix,
        point,
    }
}

/// Default matrix: the default slip wait at BER 1e-4; a short slip wait
/// with noise bursts that break lock; the longest wait at BER 1e-3.
pub fn matrix_points() -> Vec<&'static str> {
    vec![
        "slip_wait=32,offset=23,ber=0.0001",
        "slip_wait=4,offset=65,ber=0,burst_every=3000",
        "slip_wait=255,offset=1,ber=0.001",
    ]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(matrix_points(), point)
}

fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(Pcs66Bench::new(point::parse(text)?)?))
}

/// One bench point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Pcs66Point {
    /// Cycles after a slip with headers untested (RTL parameter), 1..=255.
    pub slip_wait: u32,
    /// Bits of the first block lost on the line, 0..66.
    pub offset: u32,
    /// Line bit error rate, 0..=0.01.
    pub ber: f64,
    /// Every this many cycles, 40 blocks of noise (0 = never).
    pub burst_every: u64,
}

impl Default for Pcs66Point {
    fn default() -> Self {
        Pcs66Point {
            slip_wait: 32,
            offset: 23,
            ber: 1e-4,
            burst_every: 0,
        }
    }
}

/// What a run exercised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pcs66Coverage {
    /// Lock acquisitions.
    pub locks: u64,
    /// Slip requests.
    pub slips: u64,
    /// Words delivered and checked by the scoreboard.
    pub words: u64,
    /// Delivered words the line had corrupted (and the scoreboard predicted).
    pub corrupted: u64,
    /// Words dropped for an invalid header while locked.
    pub dropped: u64,
    /// Lock losses.
    pub lock_losses: u64,
}

#[derive(Clone)]
struct Ports {
    reset: Port,
    tx_valid: Port,
    tx_data: Port,
    tx_ctrl: Port,
    gt_tx_valid: Port,
    gt_txheader: Port,
    gt_txdata: Port,
    gt_rx_valid: Port,
    gt_rxheader: Port,
    gt_rxdata: Port,
    rx_valid: Port,
    rx_data: Port,
    rx_ctrl: Port,
    block_lock: Port,
    gt_rxslip: Port,
    cnt_invalid_headers: Port,
    cnt_lock_losses: Port,
}

/// What the scoreboard expects the RX to show one cycle after a cut.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Nothing delivered (unlocked, waiting, or an invalid header).
    Nothing,
    /// This word, from block `k`.
    Word(u64, PhyWord, bool),
    /// Locked on a cut off the block boundary: any delivery is a false lock.
    OffBoundary,
}

/// The bench.
pub struct Pcs66Bench {
    pt: Pcs66Point,
    p: PcsParams,
    tx: PcsTx,
    rx: PcsRx,
    ch: SerialChannel,
    rng: Rng,
    ports: Option<Ports>,
    tx_in: PcsTxIn,
    rx_in: PcsRxIn,
    tx_out: PcsTxOut,
    rx_out: PcsRxOut,
    sent: Vec<PhyWord>,
    /// The expectation of the block cut last cycle (checked this cycle).
    due: Expect,
    /// The expectation of the block cut this cycle.
    next: Expect,
    cov: Pcs66Coverage,
    was_locked: bool,
}

impl Pcs66Bench {
    /// A bench at `pt`; errors name the bad key.
    pub fn new(pt: Pcs66Point) -> Result<Self> {
        let p = PcsParams {
            slip_wait: pt.slip_wait,
        };
        p.validate()?;
        if !(0.0..=0.01).contains(&pt.ber) {
            bail!("pcs66.ber = {}: must be 0..=0.01", pt.ber);
        }
        if pt.burst_every != 0 && pt.burst_every < 1000 {
            bail!(
                "pcs66.burst_every = {}: must be 0 or >= 1000 (time to relock)",
                pt.burst_every
            );
        }
        Ok(Pcs66Bench {
            rx: PcsRx::new(p)?,
            ch: SerialChannel::new(1, pt.ber, pt.offset)?,
            p,
            pt,
            tx: PcsTx::default(),
            rng: Rng::new(1),
            ports: None,
            tx_in: PcsTxIn::default(),
            rx_in: PcsRxIn::default(),
            tx_out: PcsTxOut::default(),
            rx_out: PcsRxOut::default(),
            sent: Vec::new(),
            due: Expect::Nothing,
            next: Expect::Nothing,
            cov: Pcs66Coverage::default(),
            was_locked: false,
        })
    }

    /// What the run exercised.
    pub fn coverage(&self) -> Pcs66Coverage {
        self.cov
    }

    /// The scoreboard's expectation for a block cut now, given the RX's
    /// lock state before it.
    fn expectation(&self, header: u8, block: Option<u64>, locked: bool) -> Expect {
        if !locked || !header_ok(header) {
            return Expect::Nothing;
        }
        let Some(k) = block else {
            return Expect::OffBoundary;
        };
        let e = self.ch.errors_of(k);
        let (this, _) = spread(e.payload);
        let (_, carry) = match k.checked_sub(1) {
            Some(j) => spread(self.ch.errors_of(j).payload),
            None => (0, 0),
        };
        let w = self.sent[k as usize];
        let want = PhyWord {
            data: w.data ^ this ^ carry,
            ctrl: w.ctrl ^ (e.header == 3),
        };
        Expect::Word(k, want, this | carry != 0 || e.header != 0)
    }
}

impl Bench for Pcs66Bench {
    fn block(&self) -> &str {
        "pcs66"
    }

    fn point(&self) -> String {
        point::to_text(&self.pt)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_pcs66(&self.p)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        self.ports = Some(Ports {
            reset: sim.port_w("reset", 1)?,
            tx_valid: sim.port_w("tx_valid", 1)?,
            tx_data: sim.port_w("tx_data", 64)?,
            tx_ctrl: sim.port_w("tx_ctrl", 1)?,
            gt_tx_valid: sim.port_w("gt_tx_valid", 1)?,
            gt_txheader: sim.port_w("gt_txheader", 2)?,
            gt_txdata: sim.port_w("gt_txdata", 64)?,
            gt_rx_valid: sim.port_w("gt_rx_valid", 1)?,
            gt_rxheader: sim.port_w("gt_rxheader", 2)?,
            gt_rxdata: sim.port_w("gt_rxdata", 64)?,
            rx_valid: sim.port_w("rx_valid", 1)?,
            rx_data: sim.port_w("rx_data", 64)?,
            rx_ctrl: sim.port_w("rx_ctrl", 1)?,
            block_lock: sim.port_w("block_lock", 1)?,
            gt_rxslip: sim.port_w("gt_rxslip", 1)?,
            cnt_invalid_headers: sim.port_w("cnt_invalid_headers", 32)?,
            cnt_lock_losses: sim.port_w("cnt_lock_losses", 32)?,
        });
        Ok(())
    }

    fn reset(&mut self) {
        *self = Pcs66Bench {
            ports: self.ports.take(),
            ..Pcs66Bench::new(self.pt.clone()).expect("checked")
        };
    }

    fn drive(&mut self, rng: &mut Rng, cycle: u64) {
        let p = self.ports.as_ref().expect("bind before drive");
        let reset = cycle < 2;
        self.tx_out = self.tx.outputs();
        self.rx_out = self.rx.outputs();
        let (t, r) = (self.tx_out, self.rx_out);
        // The line: this cycle's TX block goes out (through a noise burst
        // in the burst windows), a slip request drops one bit.
        if t.valid {
            let burst =
                self.pt.burst_every != 0 && cycle % self.pt.burst_every >= self.pt.burst_every - 40;
            if burst {
                self.ch.send_at(t.header, t.payload, 0.5);
            } else {
                self.ch.send(t.header, t.payload);
            }
        }
        if r.slip {
            self.ch.slip();
            self.cov.slips += 1;
        }
        if r.block_lock && !self.was_locked {
            self.cov.locks += 1;
        }
        self.was_locked = r.block_lock;
        self.cov.lock_losses = r.lock_losses;
        self.cov.dropped = r.invalid_headers;
        // The RX gearbox: a block when 66 bits are there, with random gaps.
        let cut = if reset || self.rng.chance(0.03) {
            None
        } else {
            self.ch.cut()
        };
        self.rx_in = match cut {
            Some(c) => PcsRxIn {
                reset,
                valid: true,
                header: c.header,
                payload: c.payload,
            },
            None => PcsRxIn {
                reset,
                ..Default::default()
            },
        };
        let next = match cut {
            Some(c) if !reset => self.expectation(c.header, c.block, r.block_lock),
            _ => Expect::Nothing,
        };
        self.due = std::mem::replace(&mut self.next, next);
        // The TX side: a pause one cycle in 33 (the gearbox) and at random.
        let valid = !reset && cycle % 33 != 32 && rng.chance(0.95);
        let word = PhyWord {
            data: rng.next_u64(),
            ctrl: rng.chance(0.25),
        };
        self.tx_in = PcsTxIn { reset, valid, word };
        if valid {
            self.sent.push(word);
        }
        p.reset.set(reset as u64);
        p.tx_valid.set(valid as u64);
        p.tx_data.set(word.data);
        p.tx_ctrl.set(word.ctrl as u64);
        p.gt_rx_valid.set(self.rx_in.valid as u64);
        p.gt_rxheader.set(self.rx_in.header as u64);
        p.gt_rxdata.set(self.rx_in.payload);
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let p = self.ports.as_ref().expect("bind before check");
        let (t, r) = (self.tx_out, self.rx_out);
        let m = cmp(cycle, "gt_tx_valid", t.valid as u64, p.gt_tx_valid.get())
            .or_else(|| cmp(cycle, "gt_txheader", t.header as u64, p.gt_txheader.get()))
            .or_else(|| cmp(cycle, "gt_txdata", t.payload, p.gt_txdata.get()))
            .or_else(|| cmp(cycle, "rx_valid", r.valid as u64, p.rx_valid.get()))
            .or_else(|| cmp(cycle, "rx_data", r.word.data, p.rx_data.get()))
            .or_else(|| cmp(cycle, "rx_ctrl", r.word.ctrl as u64, p.rx_ctrl.get()))
            .or_else(|| cmp(cycle, "block_lock", r.block_lock as u64, p.block_lock.get()))
            .or_else(|| cmp(cycle, "gt_rxslip", r.slip as u64, p.gt_rxslip.get()))
            .or_else(|| {
                cmp(
                    cycle,
                    "cnt_invalid_headers",
                    r.invalid_headers & 0xFFFF_FFFF,
                    p.cnt_invalid_headers.get(),
                )
            })
            .or_else(|| {
                cmp(
                    cycle,
                    "cnt_lock_losses",
                    r.lock_losses & 0xFFFF_FFFF,
                    p.cnt_lock_losses.get(),
                )
            });
        if m.is_some() {
            return m;
        }
        // The scoreboard, on the RTL's outputs (the expectation of the
        // block cut last cycle).
        let (valid, data, ctrl) = (p.rx_valid.get() == 1, p.rx_data.get(), p.rx_ctrl.get() == 1);
        let sb = |what: &str, e: String, a: String| {
            Some(Mismatch {
                cycle,
                port: format!("scoreboard: {what}"),
                expected: e,
                actual: a,
            })
        };
        match self.due {
            Expect::Nothing if valid => sb(
                "a word delivered while unlocked or for an invalid header",
                "no word".into(),
                format!("0x{data:x}"),
            ),
            Expect::OffBoundary if valid => sb(
                "false lock: a word delivered off a block boundary",
                "no word".into(),
                format!("0x{data:x}"),
            ),
            Expect::Word(k, w, hit) => {
                if !valid {
                    return sb(
                        &format!("block {k} with a valid header dropped while locked"),
                        format!("0x{:x} ctrl {}", w.data, w.ctrl),
                        "no word".into(),
                    );
                }
                if data != w.data || ctrl != w.ctrl {
                    return sb(
                        &format!("block {k}: not the word sent with the line's flips"),
                        format!("0x{:x} ctrl {}", w.data, w.ctrl),
                        format!("0x{data:x} ctrl {ctrl}"),
                    );
                }
                self.cov.words += 1;
                self.cov.corrupted += hit as u64;
                None
            }
            _ => None,
        }
    }

    fn advance(&mut self) {
        self.tx.tick(&self.tx_in);
        self.rx.tick(&self.rx_in);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_and_reject_bad_values() {
        assert_eq!(
            point("").unwrap().point(),
            "slip_wait=32,offset=23,ber=0.0001,burst_every=0"
        );
        for (t, want) in [
            ("slip_wait=0", "pcs66.slip_wait = 0"),
            ("offset=66", "pcs66.offset = 66"),
            ("ber=0.5", "pcs66.ber = 0.5"),
            ("burst_every=10", "pcs66.burst_every = 10"),
        ] {
            let e = format!("{:#}", point(t).err().unwrap());
            assert!(e.contains(want), "{t}: {e}");
        }
    }
}
