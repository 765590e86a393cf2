//! Golden model of `retry_buffer`: the words `link_tx` has sent and the
//! far end has not yet acked, kept for go-back-N replay.
//!
//! A ring of `retry_words` 64-bit words (plus each word's control flag)
//! with three pointers, all free-running word counts: `base` (oldest
//! unacked word), `head` (next word written) and `replay` (next word to
//! replay, when replaying). Beside it, a queue of the frames in the ring:
//! their sequence numbers and end pointers, so an ack frees whole frames.
//! In hardware the ring is a simple dual-port RAM (BRAM when it is large)
//! and the frame queue a small FIFO of `(seq, end)`.

use super::{seq_sub, PhyWord, MAX_OUTSTANDING};
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Smallest and largest ring the RTL supports, in words.
pub const RETRY_WORDS_RANGE: (usize, usize) = (64, 4096);
/// Frames the frame queue holds (more than [`MAX_OUTSTANDING`]).
pub const RETRY_FRAMES: usize = 32;

/// Parameters of the `retry_buffer` block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetryBufferParams {
    /// Ring size in 64-bit words: a power of two, 64..=4096.
    pub words: usize,
}

impl Default for RetryBufferParams {
    /// 256 words (the default link's size).
    fn default() -> Self {
        RetryBufferParams { words: 256 }
    }
}

impl RetryBufferParams {
    /// Reject sizes the RTL does not support, naming the key and value.
    pub fn validate(&self) -> Result<()> {
        let (lo, hi) = RETRY_WORDS_RANGE;
        if !self.words.is_power_of_two() || !(lo..=hi).contains(&self.words) {
            bail!(
                "retry_buffer.words = {}: must be a power of two in {lo}..={hi}",
                self.words
            );
        }
        Ok(())
    }

    /// Address bits of the ring.
    pub fn abits(&self) -> u32 {
        self.words.trailing_zeros()
    }
}

/// Inputs of one cycle of the `retry_buffer` block, applied in this order:
/// ack, stop, start, take, push, close.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RetryBufferInputs {
    /// Synchronous reset (empties everything).
    pub reset: bool,
    /// Free frames up to and including `ack_seq`.
    pub ack: Option<u8>,
    /// End a replay.
    pub stop: bool,
    /// Start a replay of every closed frame.
    pub start: bool,
    /// Take the replay word shown this cycle.
    pub take: bool,
    /// Append a word (only when not full).
    pub push: Option<PhyWord>,
    /// Close a frame with this sequence number after the push.
    pub close: Option<u8>,
}

/// Outputs of one cycle of the `retry_buffer` block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RetryBufferOutputs {
    /// Words held (before this cycle's changes).
    pub used: usize,
    /// Closed frames held (before this cycle's changes).
    pub frames: usize,
    /// Sequence number of the oldest held frame (0 when none).
    pub oldest: u8,
    /// This cycle's `ack` names a held frame.
    pub ack_ok: bool,
    /// Closed frames held after this cycle's ack.
    pub frames_left: usize,
    /// Words held after this cycle's ack.
    pub used_left: usize,
    /// Replaying after this cycle's ack (before its stop and start).
    pub replaying: bool,
    /// The word a `take` gets this cycle (after this cycle's ack, stop,
    /// start), if replaying.
    pub replay: Option<PhyWord>,
}

/// The retry buffer.
#[derive(Clone, Debug)]
pub struct RetryBuffer {
    cap: usize,
    ring: Vec<PhyWord>,
    base: u64,
    head: u64,
    /// Frames held: `(seq, end)`, oldest first; a frame's words run from
    /// the previous frame's end (or `base`) to `end`.
    frames: VecDeque<(u8, u64)>,
    replay: Option<u64>,
}

impl RetryBuffer {
    /// An empty buffer of `cap` words (a power of two).
    pub fn new(cap: usize) -> Self {
        RetryBuffer {
            cap,
            ring: vec![PhyWord::default(); cap],
            base: 0,
            head: 0,
            frames: VecDeque::new(),
            replay: None,
        }
    }

    /// Words held (acked words are gone).
    pub fn len(&self) -> usize {
        (self.head - self.base) as usize
    }

    /// Nothing held.
    pub fn is_empty(&self) -> bool {
        self.head == self.base
    }

    /// Free words.
    pub fn room(&self) -> usize {
        self.cap - self.len()
    }

    /// Closed frames held (sent, not acked).
    pub fn frames(&self) -> usize {
        self.frames.len()
    }

    /// Sequence number of the oldest held frame.
    pub fn oldest(&self) -> Option<u8> {
        self.frames.front().map(|f| f.0)
    }

    /// Append a word (caller checks [`Self::room`]).
    pub fn push(&mut self, w: PhyWord) {
        assert!(self.room() > 0, "retry buffer overrun (caller checks room)");
        self.ring[(self.head as usize) & (self.cap - 1)] = w;
        self.head += 1;
    }

    /// The words pushed since the last close form frame `seq`.
    pub fn close_frame(&mut self, seq: u8) {
        self.frames.push_back((seq, self.head));
    }

    /// Index in the frame queue of held frame `seq`.
    fn ack_index(&self, seq: u8) -> Option<usize> {
        let first = self.oldest()?;
        let k = seq_sub(seq, first) as usize;
        (k < self.frames.len() && k <= MAX_OUTSTANDING as usize).then_some(k)
    }

    /// Outputs for `i` without changing anything: what [`Self::step`]
    /// would report (the RTL computes the same combinationally).
    pub fn outputs(&self, i: &RetryBufferInputs) -> RetryBufferOutputs {
        let k = i.ack.and_then(|s| self.ack_index(s));
        let (base, remaining) = match k {
            Some(k) => (self.frames[k].1, self.frames.len() - k - 1),
            None => (self.base, self.frames.len()),
        };
        let frames_end = match self.frames.back() {
            Some(&(_, end)) if remaining > 0 => end,
            _ => base,
        };
        let mut replay = self.replay;
        if let (Some(r), Some(_)) = (replay, k) {
            if r < base {
                replay = (base < frames_end).then_some(base);
            }
        }
        let replaying = replay.is_some();
        if i.stop {
            replay = None;
        }
        if i.start {
            replay = (remaining > 0).then_some(base);
        }
        RetryBufferOutputs {
            used: self.len(),
            frames: self.frames.len(),
            oldest: self.oldest().unwrap_or(0),
            ack_ok: k.is_some(),
            frames_left: remaining,
            used_left: (self.head - base) as usize,
            replaying,
            replay: replay.map(|r| self.ring[(r as usize) & (self.cap - 1)]),
        }
    }

    /// One clock edge of the block: `i` applied in its documented order.
    pub fn step(&mut self, i: &RetryBufferInputs) {
        if i.reset {
            // Pointers and queue cleared; the ring's contents stay (RAM).
            let ring = std::mem::take(&mut self.ring);
            *self = RetryBuffer::new(self.cap);
            self.ring = ring;
            return;
        }
        if let Some(s) = i.ack {
            self.ack(s);
        }
        if i.stop {
            self.stop_replay();
        }
        if i.start {
            self.start_replay();
        }
        if i.take {
            self.next_replay();
        }
        if let Some(w) = i.push {
            if self.room() > 0 {
                self.push(w);
            }
        }
        if let Some(s) = i.close {
            if self.frames.len() < RETRY_FRAMES {
                self.close_frame(s);
            }
        }
    }

    /// Free every frame up to and including `seq`. `Some(frames freed)`,
    /// or `None` (and nothing changes) when `seq` is not a held frame, i.e.
    /// an ack for a frame never sent or already acked beyond.
    pub fn ack(&mut self, seq: u8) -> Option<usize> {
        let k = self.ack_index(seq)?;
        let (_, end) = self.frames[k];
        self.frames.drain(..=k);
        self.base = end;
        if let Some(r) = self.replay {
            if r < end {
                self.replay = if end < self.frames_end() {
                    Some(end)
                } else {
                    None
                };
            }
        }
        Some(k + 1)
    }

    /// End of the last closed frame (words after it belong to an open frame).
    fn frames_end(&self) -> u64 {
        self.frames.back().map_or(self.base, |f| f.1)
    }

    /// Start replaying every closed frame held; `false` if there is none.
    pub fn start_replay(&mut self) -> bool {
        if self.frames.is_empty() {
            self.replay = None;
            return false;
        }
        self.replay = Some(self.base);
        true
    }

    /// End a replay (the link went down; it restarts when back up).
    pub fn stop_replay(&mut self) {
        self.replay = None;
    }

    /// A replay is in progress.
    pub fn replaying(&self) -> bool {
        self.replay.is_some()
    }

    /// The next word of the replay (advancing it); the replay ends after
    /// the last closed frame.
    pub fn next_replay(&mut self) -> Option<PhyWord> {
        let r = self.replay?;
        let w = self.ring[(r as usize) & (self.cap - 1)];
        self.replay = if r + 1 < self.frames_end() {
            Some(r + 1)
        } else {
            None
        };
        Some(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// `outputs` predicts what the methods do, under random operations.
    #[test]
    fn outputs_predict_step() {
        let mut rng = Rng::new(5);
        let mut r = RetryBuffer::new(64);
        let mut seq = 0u8;
        for _ in 0..50_000 {
            let i = RetryBufferInputs {
                reset: rng.chance(0.001),
                ack: rng
                    .chance(0.1)
                    .then(|| (seq + 64 - 1 - rng.below(8) as u8) & 63),
                stop: rng.chance(0.02),
                start: rng.chance(0.03),
                take: rng.chance(0.7),
                push: rng.chance(0.6).then(|| PhyWord {
                    data: rng.next_u64(),
                    ctrl: rng.chance(0.2),
                }),
                close: (r.frames() < 31 && rng.chance(0.2)).then_some(seq),
            };
            let o = r.outputs(&i);
            let mut m = r.clone();
            if let Some(s) = i.ack {
                assert_eq!(m.ack(s).is_some(), o.ack_ok);
            }
            if i.stop {
                m.stop_replay();
            }
            if i.start {
                m.start_replay();
            }
            let peek = m.replay.map(|p| m.ring[(p as usize) & 63]);
            assert_eq!(
                peek, o.replay,
                "{i:?} {:?} {} {} {:?}",
                r.replay, r.base, r.head, r.frames
            );
            r.step(&i);
            if i.reset {
                seq = 0;
            } else if i.close.is_some() {
                seq = (seq + 1) & 63;
            }
        }
    }

    fn w(i: u64) -> PhyWord {
        PhyWord {
            data: i,
            ctrl: false,
        }
    }

    #[test]
    fn ack_frees_frames_and_rejects_unknown_seqs() {
        let mut r = RetryBuffer::new(16);
        for f in 0..3u8 {
            for i in 0..3 {
                r.push(w(10 * f as u64 + i));
            }
            r.close_frame((62 + f) & 63); // 62, 63, 0: wraps
        }
        assert_eq!((r.len(), r.frames(), r.room()), (9, 3, 7));
        assert_eq!(r.ack(5), None, "never sent");
        assert_eq!(r.ack(61), None, "before the oldest");
        assert_eq!(r.ack(63), Some(2));
        assert_eq!((r.len(), r.oldest()), (3, Some(0)));
        assert_eq!(r.ack(63), None, "already acked");
        assert_eq!(r.ack(0), Some(1));
        assert!(r.is_empty());
    }

    #[test]
    fn replay_returns_closed_frames_and_skips_acked_ones() {
        let mut r = RetryBuffer::new(32);
        for f in 0..3u8 {
            for i in 0..4 {
                r.push(w(10 * f as u64 + i));
            }
            r.close_frame(f);
        }
        r.push(w(99)); // open frame: not replayed
        assert!(r.start_replay());
        let got: Vec<u64> = (0..3).map(|_| r.next_replay().unwrap().data).collect();
        assert_eq!(got, vec![0, 1, 2]);
        // Frames 0 and 1 acked mid-replay: it jumps to frame 2.
        assert_eq!(r.ack(1), Some(2));
        let rest: Vec<u64> = std::iter::from_fn(|| r.next_replay().map(|w| w.data)).collect();
        assert_eq!(rest, vec![20, 21, 22, 23]);
        assert!(!r.replaying());
        assert_eq!(r.ack(2), Some(1));
        assert!(!r.start_replay(), "nothing closed to replay");
        assert_eq!(r.len(), 1);
    }
}
