//! Co-simulation bench of `retry_buffer`: RTL vs
//! `exanet_sim::link::retry_buffer` (its `outputs`/`step`).
//!
//! Stimulus in phases of random length: acks flowing or withheld (so the
//! ring fills and pushes are refused), acks of held frames, of frames
//! never sent and random ones; replays started, stopped and taken at
//! random rates (acks land mid-replay and move it); frames closed at
//! random lengths including empty ones, never more than the 31 a
//! `link_tx` keeps; rare resets. Every output is compared every cycle;
//! the replay word, which the RTL reads from block RAM with a registered
//! read, one cycle after the golden model shows it (`replay_data` at
//! cycle t + 1 against the golden word of cycle t, whenever the golden
//! `replay_valid` was set at t).

use super::BlockInfo;
use crate::cosim::{cmp, Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_hdl::emit::Emitted;
use exanet_hdl::link::retry_buffer::{emit_retry_buffer, USED_BITS};
use exanet_sim::link::retry_buffer::{RetryBuffer, RetryBufferInputs, RetryBufferParams};
use exanet_sim::link::{PhyWord, MAX_OUTSTANDING};
use exanet_sim::point;
use exanet_sim::rng::Rng;

/// Registry entry for `exanet cosim retry_buffer`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "retry_buffer",
        about: "link go-back-N retry buffer: ring of sent words, frame queue, replay",
        matrix,
        point,
    }
}

/// Default matrix: the smallest, the default and a large ring.
fn matrix() -> Vec<Box<dyn Bench>> {
    super::benches_of(vec!["words=64", "words=256", "words=1024"], point)
}

/// Parse `words=..` (default 256).
fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(RetryBufferBench::new(point::parse(text)?)?))
}

/// A deliberately wrong golden model, to show the bench catches a mismatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryBufferFault {
    /// The golden model never sees an ack.
    IgnoreAck,
    /// The golden model never sees `take`.
    IgnoreTake,
}

/// What a run exercised; the integration test asserts on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RetryBufferCoverage {
    /// Acks of held frames.
    pub acks_ok: u64,
    /// Acks of frames not held.
    pub acks_bad: u64,
    /// Pushes refused because the ring was full.
    pub pushes_refused: u64,
    /// Replays started with something to replay.
    pub replays: u64,
    /// Replays that ran to their end.
    pub replays_done: u64,
    /// Acks that moved a running replay.
    pub acks_mid_replay: u64,
    /// Resets.
    pub resets: u64,
}

#[derive(Clone)]
struct Ports {
    reset: Port,
    ack_valid: Port,
    ack_seq: Port,
    stop: Port,
    start: Port,
    take: Port,
    push_valid: Port,
    push_data: Port,
    push_ctrl: Port,
    close_valid: Port,
    close_seq: Port,
    ack_ok: Port,
    replay_valid: Port,
    replay_data: Port,
    replay_ctrl: Port,
    used: Port,
    frames: Port,
    oldest: Port,
    frames_left: Port,
    used_left: Port,
    replaying: Port,
}

/// The `retry_buffer` bench at one parameter point.
pub struct RetryBufferBench {
    params: RetryBufferParams,
    golden: RetryBuffer,
    fault: Option<RetryBufferFault>,
    ports: Option<Ports>,
    inputs: RetryBufferInputs,
    golden_inputs: RetryBufferInputs,
    /// The golden replay word of the previous cycle (what the RTL's
    /// registered read shows now).
    shown: Option<PhyWord>,
    next_seq: u8,
    phase_left: u64,
    p_ack: f64,
    p_push: f64,
    p_take: f64,
    cov: RetryBufferCoverage,
}

impl RetryBufferBench {
    /// A bench whose RTL and golden model share `params`.
    pub fn new(params: RetryBufferParams) -> Result<Self> {
        Self::with_fault(params, None)
    }

    /// A bench whose golden model is wrong in the way `fault` says.
    pub fn with_fault(params: RetryBufferParams, fault: Option<RetryBufferFault>) -> Result<Self> {
        params.validate()?;
        Ok(RetryBufferBench {
            golden: RetryBuffer::new(params.words),
            params,
            fault,
            ports: None,
            inputs: RetryBufferInputs::default(),
            golden_inputs: RetryBufferInputs::default(),
            shown: None,
            next_seq: 0,
            phase_left: 0,
            p_ack: 0.1,
            p_push: 0.5,
            p_take: 0.8,
            cov: RetryBufferCoverage::default(),
        })
    }

    /// What the run since the last [`Bench::reset`] exercised.
    pub fn coverage(&self) -> RetryBufferCoverage {
        self.cov
    }
}

impl Bench for RetryBufferBench {
    fn block(&self) -> &str {
        "retry_buffer"
    }

    fn point(&self) -> String {
        point::to_text(&self.params)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_retry_buffer(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        self.ports = Some(Ports {
            reset: sim.port_w("reset", 1)?,
            ack_valid: sim.port_w("ack_valid", 1)?,
            ack_seq: sim.port_w("ack_seq", 6)?,
            stop: sim.port_w("stop", 1)?,
            start: sim.port_w("start", 1)?,
            take: sim.port_w("take", 1)?,
            push_valid: sim.port_w("push_valid", 1)?,
            push_data: sim.port_w("push_data", 64)?,
            push_ctrl: sim.port_w("push_ctrl", 1)?,
            close_valid: sim.port_w("close_valid", 1)?,
            close_seq: sim.port_w("close_seq", 6)?,
            ack_ok: sim.port_w("ack_ok", 1)?,
            replay_valid: sim.port_w("replay_valid", 1)?,
            replay_data: sim.port_w("replay_data", 64)?,
            replay_ctrl: sim.port_w("replay_ctrl", 1)?,
            used: sim.port_w("used", USED_BITS as u32)?,
            frames: sim.port_w("frames", 6)?,
            oldest: sim.port_w("oldest", 6)?,
            frames_left: sim.port_w("frames_left", 6)?,
            used_left: sim.port_w("used_left", USED_BITS as u32)?,
            replaying: sim.port_w("replaying", 1)?,
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.golden = RetryBuffer::new(self.params.words);
        self.inputs = RetryBufferInputs::default();
        self.golden_inputs = RetryBufferInputs::default();
        self.shown = None;
        self.next_seq = 0;
        self.phase_left = 0;
        self.cov = RetryBufferCoverage::default();
    }

    #[inline]
    fn drive(&mut self, rng: &mut Rng, _cycle: u64) {
        if self.phase_left == 0 {
            // Acks withheld / trickling / flowing; pushes light or heavy.
            self.p_ack = [0.0, 0.02, 0.15][rng.below(3) as usize];
            self.p_push = [0.2, 0.6, 0.95][rng.below(3) as usize];
            self.p_take = [0.3, 0.9][rng.below(2) as usize];
            self.phase_left = 1 + rng.below(4 * self.params.words as u64);
        }
        self.phase_left -= 1;
        let g = &self.golden;
        let frames = g.frames() as u8;
        let oldest = g.oldest().unwrap_or(self.next_seq);
        let ack = rng.chance(self.p_ack).then(|| match rng.below(10) {
            0 => rng.bits(6) as u8,
            1 => (oldest + frames + rng.below(4) as u8) & 63, // never sent
            _ => (oldest + rng.below(frames.max(1) as u64) as u8) & 63,
        });
        let close =
            (g.frames() < MAX_OUTSTANDING as usize && rng.chance(0.08)).then_some(self.next_seq);
        let reset = rng.chance(1.0 / 20_000.0);
        let i = RetryBufferInputs {
            reset,
            ack,
            stop: rng.chance(0.005),
            start: rng.chance(0.01),
            take: rng.chance(self.p_take),
            push: rng.chance(self.p_push).then(|| PhyWord {
                data: rng.next_u64(),
                ctrl: rng.chance(0.1),
            }),
            close,
        };
        // Coverage, from the golden model's view of this cycle.
        let o = self.golden.outputs(&i);
        let c = &mut self.cov;
        c.resets += reset as u64;
        if ack.is_some() {
            if o.ack_ok {
                c.acks_ok += 1;
                c.acks_mid_replay += self.golden.replaying() as u64;
            } else {
                c.acks_bad += 1;
            }
        }
        c.replays += (i.start && o.replay.is_some()) as u64;
        if i.push.is_some() && self.golden.room() == 0 && !o.ack_ok {
            c.pushes_refused += 1;
        }
        if reset {
            self.next_seq = 0;
        } else if close.is_some() {
            self.next_seq = (self.next_seq + 1) & 63;
        }
        self.inputs = i;
        self.golden_inputs = i;
        match self.fault {
            Some(RetryBufferFault::IgnoreAck) => self.golden_inputs.ack = None,
            Some(RetryBufferFault::IgnoreTake) => self.golden_inputs.take = false,
            None => {}
        }
        let p = self.ports.as_ref().expect("bind before drive");
        p.reset.set(reset as u64);
        p.ack_valid.set(ack.is_some() as u64);
        p.ack_seq.set(ack.unwrap_or(0) as u64);
        p.stop.set(i.stop as u64);
        p.start.set(i.start as u64);
        p.take.set(i.take as u64);
        let w = i.push.unwrap_or_default();
        p.push_valid.set(i.push.is_some() as u64);
        p.push_data.set(w.data);
        p.push_ctrl.set(w.ctrl as u64);
        p.close_valid.set(close.is_some() as u64);
        p.close_seq.set(close.unwrap_or(0) as u64);
    }

    #[inline]
    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let o = self.golden.outputs(&self.golden_inputs);
        let p = self.ports.as_ref().expect("bind before check");
        let valid = o.replay.is_some();
        let shown = self.shown;
        cmp(cycle, "ack_ok", o.ack_ok as u64, p.ack_ok.get())
            .or_else(|| cmp(cycle, "used", o.used as u64, p.used.get()))
            .or_else(|| cmp(cycle, "frames", o.frames as u64, p.frames.get()))
            .or_else(|| cmp(cycle, "oldest", o.oldest as u64, p.oldest.get()))
            .or_else(|| {
                cmp(
                    cycle,
                    "frames_left",
                    o.frames_left as u64,
                    p.frames_left.get(),
                )
            })
            .or_else(|| cmp(cycle, "used_left", o.used_left as u64, p.used_left.get()))
            .or_else(|| cmp(cycle, "replaying", o.replaying as u64, p.replaying.get()))
            .or_else(|| cmp(cycle, "replay_valid", valid as u64, p.replay_valid.get()))
            .or_else(|| {
                let w = shown?;
                cmp(cycle, "replay_data", w.data, p.replay_data.get())
                    .or_else(|| cmp(cycle, "replay_ctrl", w.ctrl as u64, p.replay_ctrl.get()))
            })
    }

    #[inline]
    fn advance(&mut self) {
        let was = self.golden.replaying();
        self.shown = self.golden.outputs(&self.golden_inputs).replay;
        self.golden.step(&self.golden_inputs);
        if was && self.golden_inputs.take && !self.golden.replaying() {
            self.cov.replays_done += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_and_reject_bad_values() {
        assert_eq!(point("").unwrap().point(), "words=256");
        let e = point("words=100").err().unwrap().to_string();
        assert!(e.contains("retry_buffer.words") && e.contains("100"), "{e}");
        let e = point("wrods=64").err().unwrap().to_string();
        assert!(e.contains("wrods"), "{e}");
        for b in matrix() {
            assert_eq!(point(&b.point()).unwrap().point(), b.point());
        }
    }
}
