//! Golden model of `async_fifo`: a two-clock first-word-fall-through FIFO
//! with Gray-coded pointers crossing the clock domains through chains of
//! synchronizer flip-flops.
//!
//! Purpose: the node's clock-domain crossings. Each transceiver delivers its
//! received words in its own user clock, and the link layer runs in the PL
//! clock; the 64-bit PHY word and its data/control bit (65 bits) cross in
//! both directions through one of these.
//!
//! # Behaviour (the RTL in `exanet_hdl::common::async_fifo` matches it bit
//! for bit at every clock edge; the co-simulation checks it)
//! The model is edge-driven, not cycle-driven: [`AsyncFifo::edge`] takes
//! the inputs of the write domain when its clock rises, of the read domain
//! when its clock rises, or both when the two rise together. Every register
//! of both domains samples its inputs *before* the edge (a write and a read
//! edge at the same instant both see the other domain's old pointer).
//!
//! Write domain (clock `wr_clock`):
//! - `full` when the write pointer's Gray code equals the synchronized read
//!   pointer's with its two top bits inverted (`depth` words in flight as
//!   the write side knows it).
//! - A `push` while not full writes `din` at `wbin mod depth` and advances
//!   the binary pointer `wbin` and its Gray code `wgray` (both `log2(depth)
//!   + 1` bits, wrapping). A push while full is dropped and sets the sticky
//!   `overflow`.
//! - `wr_count` = `wbin` minus the synchronized read pointer (in binary),
//!   modulo `2·depth`: the words the write side must assume are stored. It
//!   is never below the true count.
//! - The read pointer reaches the write domain through `sync_stages`
//!   flip-flops: at each write edge the chain shifts in the current `rgray`.
//!
//! Read domain (clock `rd_clock`), the mirror image:
//! - `empty` when `rgray` equals the synchronized write pointer.
//! - `dout` is the word at `rbin mod depth`, combinationally (the head word
//!   when not empty; otherwise the stale slot, which is deterministic).
//! - A `pop` while not empty advances `rbin`/`rgray`; a pop while empty is
//!   ignored and sets the sticky `underflow`.
//! - `rd_count` = synchronized write pointer minus `rbin`, modulo
//!   `2·depth`: never above the true count.
//!
//! Latency: a word pushed at a write edge shows (`empty` low) at the read
//! side after `sync_stages + 1` read edges at most, counting from the first
//! read edge after the push; a pop frees its slot for the writer after
//! `sync_stages + 1` write edges at most.
//!
//! Resets: `wr_reset` and `rd_reset` are synchronous to their own clocks
//! and clear that domain's pointers, synchronizer chain and sticky flag
//! (never the storage). Both domains must be reset together: the reset
//! windows must overlap, which holds when both come from one
//! `reset_sync` pair driven by a common reset held for longer than a few
//! periods of the slower clock.
//!
//! Metastability is not modelled: a synchronizer flip-flop takes the value
//! at its input at the edge. In hardware each may resolve a changing bit
//! either way; Gray coding makes that at most one bit, so the synchronized
//! pointer is either the old or the new value, and both are safe (the flags
//! are conservative). The co-simulation exercises every phase relation of
//! the two clocks by drifting their periods.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Largest supported word width in bits.
pub const MAX_WIDTH: u32 = 128;
/// Smallest supported depth (the full test needs two pointer bits above the
/// address).
pub const MIN_DEPTH: u32 = 4;
/// Largest supported depth.
pub const MAX_DEPTH: u32 = 1024;
/// Supported synchronizer lengths.
pub const SYNC_STAGES: std::ops::RangeInclusive<u32> = 2..=4;

/// Parameters of one asynchronous FIFO.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AsyncFifoParams {
    /// Word width in bits.
    pub width: u32,
    /// Number of words; a power of two, 4..=1024.
    pub depth: u32,
    /// Synchronizer flip-flops per crossing pointer, 2..=4.
    pub sync_stages: u32,
}

impl Default for AsyncFifoParams {
    /// The PHY crossing: 64-bit word plus its data/control bit, 16 deep,
    /// two-flop synchronizers.
    fn default() -> Self {
        AsyncFifoParams {
            width: 65,
            depth: 16,
            sync_stages: 2,
        }
    }
}

impl AsyncFifoParams {
    /// Check every rule; the error names the key, the value and the rule.
    pub fn validate(&self) -> Result<()> {
        if self.width == 0 || self.width > MAX_WIDTH {
            bail!(
                "async_fifo.width = {}: must be 1..={MAX_WIDTH} bits",
                self.width
            );
        }
        if !(MIN_DEPTH..=MAX_DEPTH).contains(&self.depth) || !self.depth.is_power_of_two() {
            bail!(
                "async_fifo.depth = {}: must be a power of two in {MIN_DEPTH}..={MAX_DEPTH}",
                self.depth
            );
        }
        if !SYNC_STAGES.contains(&self.sync_stages) {
            bail!(
                "async_fifo.sync_stages = {}: must be {}..={}",
                self.sync_stages,
                SYNC_STAGES.start(),
                SYNC_STAGES.end()
            );
        }
        Ok(())
    }

    /// Bits of a pointer and of the `wr_count`/`rd_count` ports: log2(depth) + 1.
    pub fn pointer_bits(&self) -> u32 {
        self.depth.trailing_zeros() + 1
    }
}

/// Binary to Gray code.
pub fn to_gray(b: u32) -> u32 {
    b ^ (b >> 1)
}

/// Gray code to binary.
pub fn from_gray(g: u32) -> u32 {
    let mut b = g;
    let mut s = 1;
    while s < 32 {
        b ^= b >> s;
        s <<= 1;
    }
    b
}

/// Write-domain inputs at a write clock edge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteInputs {
    /// Synchronous reset of the write domain.
    pub reset: bool,
    /// Write `din`.
    pub push: bool,
    /// Word to write.
    pub din: u128,
}

/// Read-domain inputs at a read clock edge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadInputs {
    /// Synchronous reset of the read domain.
    pub reset: bool,
    /// Remove the head word.
    pub pop: bool,
}

/// Every output of both domains (functions of registers only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AsyncFifoOutputs {
    /// Write side: no room as far as it knows.
    pub full: bool,
    /// Write side: sticky, a push was dropped.
    pub overflow: bool,
    /// Write side: words it must assume stored.
    pub wr_count: u32,
    /// Read side: the word at the read pointer.
    pub dout: u128,
    /// Read side: nothing to read as far as it knows.
    pub empty: bool,
    /// Read side: sticky, a pop was ignored.
    pub underflow: bool,
    /// Read side: words it knows are stored.
    pub rd_count: u32,
}

/// Edge-level model of the asynchronous FIFO.
#[derive(Clone, Debug)]
pub struct AsyncFifo {
    mem: Vec<u128>,
    mask: u128,
    /// `2·depth - 1`: pointers wrap at twice the depth.
    ptr_mask: u32,
    depth: u32,
    wbin: u32,
    wgray: u32,
    /// Read pointer's Gray code as seen through the write domain's chain;
    /// index 0 is the first flip-flop.
    wsync: Vec<u32>,
    overflow: bool,
    rbin: u32,
    rgray: u32,
    rsync: Vec<u32>,
    underflow: bool,
}

impl AsyncFifo {
    /// A FIFO at power-on: empty, zero storage.
    pub fn new(p: &AsyncFifoParams) -> Result<Self> {
        p.validate()?;
        let s = p.sync_stages as usize;
        Ok(AsyncFifo {
            mem: vec![0; p.depth as usize],
            mask: if p.width == 128 {
                u128::MAX
            } else {
                (1u128 << p.width) - 1
            },
            ptr_mask: 2 * p.depth - 1,
            depth: p.depth,
            wbin: 0,
            wgray: 0,
            wsync: vec![0; s],
            overflow: false,
            rbin: 0,
            rgray: 0,
            rsync: vec![0; s],
            underflow: false,
        })
    }

    fn full(&self) -> bool {
        let top2 = self.depth | (self.depth >> 1);
        self.wgray == *self.wsync.last().expect("at least two stages") ^ top2
    }

    fn empty(&self) -> bool {
        self.rgray == *self.rsync.last().expect("at least two stages")
    }

    /// What both domains show now.
    pub fn outputs(&self) -> AsyncFifoOutputs {
        let rsynced = from_gray(*self.wsync.last().expect("stages"));
        let wsynced = from_gray(*self.rsync.last().expect("stages"));
        AsyncFifoOutputs {
            full: self.full(),
            overflow: self.overflow,
            wr_count: self.wbin.wrapping_sub(rsynced) & self.ptr_mask,
            dout: self.mem[(self.rbin & (self.depth - 1)) as usize],
            empty: self.empty(),
            underflow: self.underflow,
            rd_count: wsynced.wrapping_sub(self.rbin) & self.ptr_mask,
        }
    }

    /// Words stored (the truth neither side sees directly).
    pub fn stored(&self) -> u32 {
        self.wbin.wrapping_sub(self.rbin) & self.ptr_mask
    }

    /// One instant at which the write clock (`wr` is `Some`), the read clock
    /// (`rd`), or both rise. Returns whether a push and a pop were taken.
    pub fn edge(&mut self, wr: Option<&WriteInputs>, rd: Option<&ReadInputs>) -> (bool, bool) {
        // Both domains sample the other's registers as they were before the edge.
        let (wgray_before, rgray_before) = (self.wgray, self.rgray);
        let (full, empty) = (self.full(), self.empty());
        let mut taken = (false, false);
        if let Some(w) = wr {
            if w.reset {
                self.wbin = 0;
                self.wgray = 0;
                self.wsync.iter_mut().for_each(|s| *s = 0);
                self.overflow = false;
            } else {
                let push = w.push && !full;
                if push {
                    self.mem[(self.wbin & (self.depth - 1)) as usize] = w.din & self.mask;
                    self.wbin = (self.wbin + 1) & self.ptr_mask;
                    self.wgray = to_gray(self.wbin);
                }
                self.overflow |= w.push && !push;
                self.wsync.rotate_right(1);
                self.wsync[0] = rgray_before;
                taken.0 = push;
            }
        }
        if let Some(r) = rd {
            if r.reset {
                self.rbin = 0;
                self.rgray = 0;
                self.rsync.iter_mut().for_each(|s| *s = 0);
                self.underflow = false;
            } else {
                let pop = r.pop && !empty;
                if pop {
                    self.rbin = (self.rbin + 1) & self.ptr_mask;
                    self.rgray = to_gray(self.rbin);
                }
                self.underflow |= r.pop && !pop;
                self.rsync.rotate_right(1);
                self.rsync[0] = wgray_before;
                taken.1 = pop;
            }
        }
        taken
    }
}

/// Golden model of `reset_sync`: a reset into a clock domain through
/// `stages` flip-flops, asserted at power-on; the output follows the input
/// `stages` rising edges later, in both directions.
#[derive(Clone, Debug)]
pub struct ResetSync {
    stages: Vec<bool>,
}

impl ResetSync {
    /// At power-on (every stage asserted).
    pub fn new(stages: u32) -> Result<Self> {
        if !SYNC_STAGES.contains(&stages) {
            bail!("reset_sync.stages = {stages}: must be 2..=4");
        }
        Ok(ResetSync {
            stages: vec![true; stages as usize],
        })
    }

    /// The synchronized reset now.
    pub fn output(&self) -> bool {
        *self.stages.last().expect("two stages")
    }

    /// A rising edge of the destination clock with `reset_in` at its input.
    pub fn edge(&mut self, reset_in: bool) {
        self.stages.rotate_right(1);
        self.stages[0] = reset_in;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::collections::VecDeque;

    #[test]
    fn gray_round_trips_and_changes_one_bit_per_step() {
        for b in 0..4096u32 {
            assert_eq!(from_gray(to_gray(b)), b);
            let d = to_gray(b) ^ to_gray((b + 1) & 4095);
            assert_eq!(d.count_ones(), 1, "step {b}");
        }
        // Whole 32-bit counters too (the node's RX overflow counter), up to
        // the wrap.
        for v in (0..70_000u32).chain([u32::MAX - 3, u32::MAX - 1, u32::MAX]) {
            assert_eq!(from_gray(to_gray(v)), v, "{v}");
            assert_eq!(
                (to_gray(v) ^ to_gray(v.wrapping_add(1))).count_ones(),
                1,
                "{v}"
            );
        }
    }

    #[test]
    fn bad_parameters_name_key_and_value() {
        let p = |width, depth, sync_stages| AsyncFifoParams {
            width,
            depth,
            sync_stages,
        };
        let e = p(0, 16, 2).validate().unwrap_err().to_string();
        assert!(e.contains("async_fifo.width = 0"), "{e}");
        let e = p(129, 16, 2).validate().unwrap_err().to_string();
        assert!(e.contains("async_fifo.width = 129"), "{e}");
        let e = p(8, 2, 2).validate().unwrap_err().to_string();
        assert!(e.contains("async_fifo.depth = 2"), "{e}");
        let e = p(8, 24, 2).validate().unwrap_err().to_string();
        assert!(e.contains("async_fifo.depth = 24"), "{e}");
        let e = p(8, 16, 1).validate().unwrap_err().to_string();
        assert!(e.contains("async_fifo.sync_stages = 1"), "{e}");
        assert!(p(8, 16, 5).validate().is_err());
        assert!(AsyncFifoParams::default().validate().is_ok());
    }

    /// Latency through the crossing: `sync_stages + 1` read edges after the
    /// push until `empty` falls, and the word is at `dout` then.
    #[test]
    fn a_push_shows_after_the_synchronizer() {
        for s in 2..=4 {
            let p = AsyncFifoParams {
                width: 8,
                depth: 4,
                sync_stages: s,
            };
            let mut f = AsyncFifo::new(&p).unwrap();
            let w = WriteInputs {
                reset: false,
                push: true,
                din: 0xa5,
            };
            f.edge(Some(&w), None);
            let idle = ReadInputs::default();
            let mut n = 0;
            while f.outputs().empty {
                f.edge(None, Some(&idle));
                n += 1;
                assert!(n < 10);
            }
            assert_eq!(n, s);
            assert_eq!(f.outputs().dout, 0xa5);
            assert_eq!(f.outputs().rd_count, 1);
        }
    }

    /// Random edges of two unrelated clocks: the words come out in order,
    /// none lost or duplicated; the flags are conservative and the counts
    /// bracket the truth; full and empty are both reached.
    #[test]
    fn words_cross_in_order_and_the_flags_are_conservative() {
        let p = AsyncFifoParams {
            width: 16,
            depth: 8,
            sync_stages: 2,
        };
        let mut f = AsyncFifo::new(&p).unwrap();
        let mut rng = Rng::new(11);
        let mut sent: VecDeque<u128> = VecDeque::new();
        let (mut next, mut got, mut saw_full, mut saw_empty) = (0u128, 0, false, false);
        for _ in 0..200_000 {
            let o = f.outputs();
            let stored = f.stored();
            assert!(o.wr_count >= stored && o.rd_count <= stored);
            assert!(!o.full || o.wr_count == p.depth);
            assert!(stored <= p.depth);
            saw_full |= o.full;
            saw_empty |= o.empty && !sent.is_empty();
            let which = rng.below(3);
            let w = WriteInputs {
                reset: false,
                push: !o.full && rng.chance(0.6),
                din: next,
            };
            let r = ReadInputs {
                reset: false,
                pop: !o.empty && rng.chance(0.6),
            };
            let head = o.dout;
            let (pushed, popped) = match which {
                0 => f.edge(Some(&w), None),
                1 => f.edge(None, Some(&r)),
                _ => f.edge(Some(&w), Some(&r)),
            };
            if popped {
                assert_eq!(Some(head), sent.pop_front());
                got += 1;
            }
            if pushed {
                sent.push_back(next);
                next = (next + 1) & 0xffff;
            }
        }
        assert!(got > 50_000 && saw_full && saw_empty);
        assert!(!f.outputs().overflow && !f.outputs().underflow);
    }
}
