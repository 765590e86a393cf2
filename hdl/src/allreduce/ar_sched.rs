//! `ar_sched`: the allreduce engine's step sequencer.
//!
//! Purpose: walks the schedule of one rank of one collective, step by
//! step, as the golden model's [`steps`](exanet_sim::allreduce::schedule::steps)
//! lists it (recursive doubling, or reduce-scatter + allgather; the pre and
//! post steps of a rank count that is not a power of two), with the
//! receive layout of the engine contract
//! ([`layout_of`](exanet_sim::allreduce::engine::layout_of)): where each
//! step's receive range lands in this rank's scratch bank, and where this
//! rank's send range lands in the **partner's** bank (the fragments'
//! `vaddr`). Walked once, it also gives the bank bytes a collective needs
//! ([`scratch_needed`](exanet_sim::allreduce::engine::scratch_needed)),
//! the engine's descriptor check. No multiplier and no vector-sized
//! storage: element indices only, one halving segment per level.
//!
//! Ports (top module `exanet_ar_sched_r<max_ranks>`), all in elements:
//! - `clock`; `reset` (synchronous);
//! - `start`, `ranks[13]` (P), `rank[12]`, `count[32]` (n), `rsag`
//!   (reduce-scatter + allgather): a new list (abandons the current one);
//! - `ex[5]`, `ey[5]` (the box's x and y extents), `rdig[12]` (this rank's
//!   digits in the box, `{z, y, x}`, 4 bits each), `qdig[12]` (the digits
//!   of Q, the largest power of two <= P): read from `start` to the list's
//!   end, for `partner_dig` only (the caller holds them; they need not be
//!   meaningful for a list whose partners are not used);
//! - `valid`: a step is presented — `index[8]` (the step number fragments
//!   carry), `phase[2]` (golden [`Phase`] codes), `partner_rank[12]`,
//!   `partner_dig[12]` (the partner's digits in the box, `{z, y, x}`),
//!   `send_lo/send_hi[32]`, `recv_lo/recv_hi[32]` (half-open ranges, empty
//!   when equal), `combine`, `my_off[36]` (this rank's layout offset of
//!   the receive range), `their_off[36]` (the partner's layout offset of
//!   this step, where the send range lands; meaningful when the send range
//!   is not empty); `next` takes it;
//! - `done`: the list is over; `total[36]` = the receive elements of the
//!   whole list (the scratch bank a collective needs, in elements); `bad`:
//!   the start was illegal (P = 0, P over `max_ranks`, rank ≥ P), no step.
//!
//! Timing: the first step is presented 2 cycles after `start`, each next
//! one 2 cycles after `next` (a gather step at level k walks the partner's
//! halving chain first: K − k − 1 more cycles).
//!
//! How the partner's offsets come without the partner's list: partners of
//! level k agree on every bit below k, so their halving segments up to
//! level k are the same and so are their layout prefixes (plus P's extra
//! vector when the rank hosts one). In a gather step the partner's layout
//! holds, after its halving ranges, its own earlier gather ranges, whose
//! lengths telescope to `len(seg[k+1]) − len(seg[K])` of its chain; that
//! chain starts at this rank's sibling segment and halves with this rank's
//! bits above k, and only lengths matter (`⌊L/2⌋` for bit 0, `⌈L/2⌉` for
//! bit 1), so it is walked in K − k − 1 cycles.
//!
//! The partner's digits without a division (logic depth): the partner is
//! this rank ± a distance, 2^k in a reduce or gather step of level k (+
//! when this rank's bit k is 0) and Q in a pre / post step (+ for the rank
//! that hosts an extra one). So its digits are `rdig` ± the distance's
//! digits with the box's mixed-radix carries (x then y then z: three
//! 4-bit add-compare-subtract stages), registered with the step. The
//! digits of 2^k are held in `pw`: those of 1 at `start`, doubled (same
//! carries) when the level goes up in a reduce step and halved when it
//! goes down in a gather step (z's low bit carried into y as `ey`, y's
//! into x as `ex`: exact, 2^k is even for k >= 1); they stay below P, so
//! every digit is below its extent. The cycle count is unchanged.
//!
//! Structure: one generated module body rendered from
//! `hdl/templates/allreduce/ar_sched.v`; the phase codes come from the
//! golden [`Phase`] (`codes_come_from_the_golden_phase` checks it). The
//! block's rust-hdl `update` is empty: it is simulated with Verilator only
//! (`exanet cosim ar_sched`, against the golden schedule).
//!
//! Parameters ([`ArSchedParams`]): `max_ranks`, the largest communicator
//! (1..=4096, a 16×16×16 torus; sets the segment storage, `⌊log2⌋ + 1`
//! levels).

use crate::emit::{emit, Emitted};
use anyhow::{bail, Context, Result};
use askama::Template;
use exanet_sim::allreduce::schedule::Phase;
use rust_hdl::prelude::*;
use serde::{Deserialize, Serialize};

/// Bits of the rank-count port.
pub const RANKS_BITS: usize = 13;
/// Bits of the rank and partner ports.
pub const RANK_BITS: usize = 12;
/// Bits of element counts and indices.
pub const COUNT_BITS: usize = 32;
/// Bits of layout offsets (in elements): `(K + 1) · n` at most, K ≤ 12.
pub const OFF_BITS: usize = COUNT_BITS + 4;
/// Bits of the step index (the footer's flags field).
pub const INDEX_BITS: usize = 8;
/// Largest communicator the port widths hold.
pub const MAX_RANKS: usize = 4096;

/// Parameters of `ar_sched`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ArSchedParams {
    /// Largest rank count, 1..=4096.
    pub max_ranks: usize,
}

impl Default for ArSchedParams {
    /// The 8×4×4 machine.
    fn default() -> Self {
        ArSchedParams { max_ranks: 128 }
    }
}

impl ArSchedParams {
    /// Reject an unsupported size, naming the key and value.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_RANKS).contains(&self.max_ranks) {
            bail!(
                "ar_sched.max_ranks = {}: must be 1..={MAX_RANKS}",
                self.max_ranks
            );
        }
        Ok(())
    }

    /// K of the largest communicator: ⌊log2 max_ranks⌋.
    pub fn kmax(&self) -> usize {
        (usize::BITS - 1 - self.max_ranks.leading_zeros()) as usize
    }
}

/// Widths and sizes for the template.
struct Keys {
    pw: usize,
    rw: usize,
    cw: usize,
    ow: usize,
    xw: usize,
    kmax: usize,
    /// Bits of a level number (0..=kmax).
    kw: usize,
    /// Segment storage depth, `2^kw`.
    depth: usize,
    max_ranks: usize,
}

/// Phase codes as Verilog literals, from the golden [`Phase`]; marked
/// (`«Pre»`) for the drift test.
struct PhaseCodes {
    pre: String,
    reduce: String,
    gather: String,
    post: String,
}

impl PhaseCodes {
    fn new(marked: bool) -> Self {
        let f = |p: Phase| {
            if marked {
                format!("«{p:?}»")
            } else {
                format!("2'd{}", p as u8)
            }
        };
        PhaseCodes {
            pre: f(Phase::Pre),
            reduce: f(Phase::Reduce),
            gather: f(Phase::Gather),
            post: f(Phase::Post),
        }
    }
}

#[derive(Template)]
#[template(path = "allreduce/ar_sched.v")]
struct ArSchedVerilog {
    k: Keys,
    c: PhaseCodes,
}

fn ar_sched_body(p: &ArSchedParams, marked: bool) -> Result<String> {
    p.validate()?;
    let kmax = p.kmax();
    let kw = exanet_sim::bits::count_bits(kmax) as usize;
    let t = ArSchedVerilog {
        k: Keys {
            pw: RANKS_BITS,
            rw: RANK_BITS,
            cw: COUNT_BITS,
            ow: OFF_BITS,
            xw: INDEX_BITS,
            kmax,
            kw,
            depth: 1 << kw,
            max_ranks: p.max_ranks,
        },
        c: PhaseCodes::new(marked),
    };
    t.render()
        .context("rendering the template templates/allreduce/ar_sched.v")
}

/// The sequencer.
#[derive(LogicBlock)]
pub struct ArSched {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// Start a list with `ranks`, `rank`, `count`, `rsag`.
    pub start: Signal<In, bool>,
    /// Rank count P.
    pub ranks: Signal<In, Bits<RANKS_BITS>>,
    /// This rank.
    pub rank: Signal<In, Bits<RANK_BITS>>,
    /// Elements n.
    pub count: Signal<In, Bits<COUNT_BITS>>,
    /// Reduce-scatter + allgather (else recursive doubling).
    pub rsag: Signal<In, bool>,
    /// Take the presented step.
    pub next: Signal<In, bool>,
    /// The box's x extent (1..=16), held from `start` to the list's end.
    pub ex: Signal<In, Bits<5>>,
    /// The box's y extent (1..=16), held likewise.
    pub ey: Signal<In, Bits<5>>,
    /// This rank's digits in the box, `{z, y, x}` 4 bits each, held likewise.
    pub rdig: Signal<In, Bits<12>>,
    /// The digits of Q (the largest power of two <= P), held likewise.
    pub qdig: Signal<In, Bits<12>>,
    /// A step is presented.
    pub valid: Signal<Out, bool>,
    /// The list is over.
    pub done: Signal<Out, bool>,
    /// The start was illegal.
    pub bad: Signal<Out, bool>,
    /// Step number.
    pub index: Signal<Out, Bits<INDEX_BITS>>,
    /// Phase code.
    pub phase: Signal<Out, Bits<2>>,
    /// Partner rank.
    pub partner_rank: Signal<Out, Bits<RANK_BITS>>,
    /// The partner's digits in the box, `{z, y, x}` (meaningful when
    /// `ex`, `ey`, `rdig`, `qdig` describe the box and this rank).
    pub partner_dig: Signal<Out, Bits<12>>,
    /// Send range start.
    pub send_lo: Signal<Out, Bits<COUNT_BITS>>,
    /// Send range end.
    pub send_hi: Signal<Out, Bits<COUNT_BITS>>,
    /// Receive range start.
    pub recv_lo: Signal<Out, Bits<COUNT_BITS>>,
    /// Receive range end.
    pub recv_hi: Signal<Out, Bits<COUNT_BITS>>,
    /// Received elements are combined (else stored).
    pub combine: Signal<Out, bool>,
    /// This rank's layout offset of the receive range.
    pub my_off: Signal<Out, Bits<OFF_BITS>>,
    /// The partner's layout offset of this step.
    pub their_off: Signal<Out, Bits<OFF_BITS>>,
    /// Receive elements of the list so far (all of it at `done`).
    pub total: Signal<Out, Bits<OFF_BITS>>,
    _body: String,
}

impl ArSched {
    /// The sequencer for communicators of up to `p.max_ranks` ranks.
    pub fn new(p: &ArSchedParams) -> Result<Self> {
        Ok(ArSched {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            ranks: Default::default(),
            rank: Default::default(),
            count: Default::default(),
            rsag: Default::default(),
            next: Default::default(),
            ex: Default::default(),
            ey: Default::default(),
            rdig: Default::default(),
            qdig: Default::default(),
            valid: Default::default(),
            done: Default::default(),
            bad: Default::default(),
            index: Default::default(),
            phase: Default::default(),
            partner_rank: Default::default(),
            partner_dig: Default::default(),
            send_lo: Default::default(),
            send_hi: Default::default(),
            recv_lo: Default::default(),
            recv_hi: Default::default(),
            combine: Default::default(),
            my_off: Default::default(),
            their_off: Default::default(),
            total: Default::default(),
            _body: ar_sched_body(p, false)?,
        })
    }
}

impl Logic for ArSched {
    /// Simulated with Verilator only (see the module doc).
    fn update(&mut self) {}

    fn connect(&mut self) {
        self.valid.connect();
        self.done.connect();
        self.bad.connect();
        self.index.connect();
        self.phase.connect();
        self.partner_rank.connect();
        self.partner_dig.connect();
        self.send_lo.connect();
        self.send_hi.connect();
        self.recv_lo.connect();
        self.recv_hi.connect();
        self.combine.connect();
        self.my_off.connect();
        self.their_off.connect();
        self.total.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(self._body.clone())
    }
}

/// Top module name of a parameter point.
pub fn ar_sched_top_name(p: &ArSchedParams) -> String {
    format!("exanet_ar_sched_r{}", p.max_ranks)
}

/// Validate `p` and emit the sequencer as Verilog.
pub fn emit_ar_sched(p: &ArSchedParams) -> Result<Emitted> {
    p.validate()?;
    emit(&mut ArSched::new(p)?, &ar_sched_top_name(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    #[test]
    fn emits_lint_clean_verilog() {
        for max_ranks in [1, 2, 6, 128, 4096] {
            let p = ArSchedParams { max_ranks };
            let e = emit_ar_sched(&p).unwrap();
            assert_eq!(e.top, format!("exanet_ar_sched_r{max_ranks}"));
            let top = &e.modules.last().unwrap().1;
            for decl in [
                "[12:0] ranks;",
                "[11:0] rank;",
                "[31:0] count;",
                "[35:0] their_off;",
                "[7:0] index;",
                " valid;",
                " done;",
            ] {
                assert!(top.contains(decl), "{} lacks `{decl}`", e.top);
            }
            // One segment per level number 0..=⌊log2 max_ranks⌋: 2^(bits of the level).
            let depth = 1usize << exanet_sim::bits::count_bits(p.kmax());
            assert!(
                top.contains(&format!("seg_lo [0:{}];", depth - 1)),
                "{}",
                e.top
            );
            assert_lint_clean(&e);
        }
    }

    /// The phase codes reach the Verilog from the golden `Phase` only.
    #[test]
    fn codes_come_from_the_golden_phase() {
        let p = ArSchedParams::default();
        let v = ar_sched_body(&p, true).unwrap();
        for name in ["Pre", "Reduce", "Gather", "Post"] {
            assert!(v.contains(&format!("o_phase <= «{name}»;")), "{name}");
        }
        assert!(!v.contains("o_phase <= 2'd"), "a literal phase code");
        let plain = ar_sched_body(&p, false).unwrap();
        assert!(plain.contains(&format!("o_phase <= 2'd{};", Phase::Post as u8)));
    }

    #[test]
    fn unsupported_size_names_key_and_value() {
        for bad in [0, 4097] {
            let e = emit_ar_sched(&ArSchedParams { max_ranks: bad })
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("ar_sched.max_ranks = {bad}")), "{e}");
        }
    }
}
