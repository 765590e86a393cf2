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
use std::collections::VecDeque;

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

    /// Free every frame up to and including `seq`. `Some(frames freed)`,
    /// or `None` (and nothing changes) when `seq` is not a held frame, i.e.
    /// an ack for a frame never sent or already acked beyond.
    pub fn ack(&mut self, seq: u8) -> Option<usize> {
        let first = self.oldest()?;
        let k = seq_sub(seq, first) as usize;
        if k >= self.frames.len() || k > MAX_OUTSTANDING as usize {
            return None;
        }
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
