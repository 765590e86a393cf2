//! `retry_buffer`: the words `link_tx` has sent and the far end has not yet
//! acked, for go-back-N replay (golden model
//! `exanet_sim::link::retry_buffer`, whose `outputs`/`step` it matches
//! cycle by cycle).
//!
//! Ports (top module `exanet_retry_buffer_w<words>`), inputs acting in this
//! order within a cycle:
//! - `clock`; `reset` (synchronous: empty);
//! - `ack_valid`, `ack_seq[6]`: free every frame up to and including
//!   `ack_seq` if it is held (`ack_ok`, combinational);
//! - `stop`: end a replay; `start`: replay every closed frame from the
//!   oldest;
//! - `take`: take the word announced on `replay_valid` (combinational:
//!   after this cycle's ack, stop, start); its `replay_data`/`replay_ctrl`
//!   come one cycle later, from the ring's registered read (`link_tx`
//!   registers the word into its PHY output anyway, so it uses them
//!   directly as that register);
//! - `push_valid`, `push_data[64]`, `push_ctrl`: append a word (ignored
//!   when full);
//! - `close_valid`, `close_seq[6]`: the words since the last close form
//!   frame `close_seq` (ignored when 32 frames are held);
//! - outputs from the state: `used[13]` (words held), `frames[6]`,
//!   `oldest[6]` (sequence number of the oldest frame, 0 when none);
//! - after this cycle's ack (combinational, for `link_tx`, which decides
//!   its start/take/push from them): `frames_left[6]`, `used_left[13]`,
//!   `replaying` (before this cycle's stop and start).
//!
//! Latency: 0 for `ack_ok` and `replay_valid`, 1 for the replay word
//! (the golden model shows it in the same cycle; the bench compares the
//! RTL's word one cycle later); a push is replayable from the next cycle.
//!
//! Structure: a ring of `words` 65-bit entries (word + control flag) in
//! block RAM (one write port, one registered read port at the replay
//! pointer: 512 × 65 bits is one BRAM36 in 512 × 72 mode), and a 32-entry
//! queue of `(seq, end pointer)`. Pointers are `log2(words)+1` bits; all
//! comparisons are offsets from the oldest held word, so they never wrap.
//! The combinational logic is two blocks, the ack's (state and ack
//! inputs only) and the rest's, so `link_tx` reading the after-ack
//! outputs to drive start/take/push/close is no combinational loop for
//! Verilator (no UNOPTFLAT, no settling).
//!
//! Parameters ([`RetryBufferParams`]): `words`, a power of two 64..=4096.

use crate::emit::{emit, Emitted};
use anyhow::{Context, Result};
use askama::Template;
pub use exanet_sim::link::retry_buffer::RetryBufferParams;
use exanet_sim::link::retry_buffer::RETRY_FRAMES;
use exanet_sim::link::SEQ_BITS;
use rust_hdl::prelude::*;

/// `templates/link/retry_buffer.v`; every width from the golden constants.
#[derive(Template)]
#[template(path = "link/retry_buffer.v")]
struct Body {
    words: usize,
    words_m1: usize,
    /// Top bit of a pointer (`log2(words)`).
    a: usize,
    a1: usize,
    a_m1: usize,
    /// Top bit of a frame-queue count (`log2(frames)`).
    fa: usize,
    fa1: usize,
    fa_m1: usize,
    frames: usize,
    frames_m1: usize,
    seq: usize,
    seq_m1: usize,
    used_expr: String,
    used_left_expr: String,
}

/// Width of the `used` port: holds 0..=4096.
pub const USED_BITS: usize = 13;

/// The block: ports as in the module doc, body generated Verilog.
#[derive(LogicBlock)]
pub struct RetryBufferRtl {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// Ack valid.
    pub ack_valid: Signal<In, bool>,
    /// Last frame acked.
    pub ack_seq: Signal<In, Bits<6>>,
    /// End a replay.
    pub stop: Signal<In, bool>,
    /// Start a replay.
    pub start: Signal<In, bool>,
    /// Take the replay word.
    pub take: Signal<In, bool>,
    /// Append a word.
    pub push_valid: Signal<In, bool>,
    /// Word to append.
    pub push_data: Signal<In, Bits<64>>,
    /// Its control flag.
    pub push_ctrl: Signal<In, bool>,
    /// Close a frame.
    pub close_valid: Signal<In, bool>,
    /// Its sequence number.
    pub close_seq: Signal<In, Bits<6>>,
    /// The ack names a held frame.
    pub ack_ok: Signal<Out, bool>,
    /// A replay word is shown.
    pub replay_valid: Signal<Out, bool>,
    /// Replay word.
    pub replay_data: Signal<Out, Bits<64>>,
    /// Its control flag.
    pub replay_ctrl: Signal<Out, bool>,
    /// Words held.
    pub used: Signal<Out, Bits<USED_BITS>>,
    /// Frames held.
    pub frames: Signal<Out, Bits<6>>,
    /// Oldest frame's sequence number.
    pub oldest: Signal<Out, Bits<6>>,
    /// Frames held after this cycle's ack.
    pub frames_left: Signal<Out, Bits<6>>,
    /// Words held after this cycle's ack.
    pub used_left: Signal<Out, Bits<USED_BITS>>,
    /// Replaying after this cycle's ack (before stop and start).
    pub replaying: Signal<Out, bool>,
    _body: String,
}

impl Logic for RetryBufferRtl {
    // Simulated with Verilator only (the golden model is the behaviour).
    fn update(&mut self) {}

    fn connect(&mut self) {
        self.ack_ok.connect();
        self.replay_valid.connect();
        self.replay_data.connect();
        self.replay_ctrl.connect();
        self.used.connect();
        self.frames.connect();
        self.oldest.connect();
        self.frames_left.connect();
        self.used_left.connect();
        self.replaying.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(self._body.clone())
    }
}

/// The template's values for `p` (validated).
fn body(p: &RetryBufferParams) -> Result<Body> {
    p.validate()?;
    let a = p.abits() as usize;
    let fa = RETRY_FRAMES.trailing_zeros() as usize;
    // The queue count (fa + 1 bits) and the ack offset share one width.
    assert_eq!(fa + 1, SEQ_BITS as usize, "frame count and sequence widths");
    let widen = |e: &str| {
        if a + 1 == USED_BITS {
            e.to_string()
        } else {
            format!("{{{}'d0, {e}}}", USED_BITS - a - 1)
        }
    };
    let used_expr = widen("head - base");
    let used_left_expr = widen("head - base1");
    Ok(Body {
        words: p.words,
        words_m1: p.words - 1,
        a,
        a1: a + 1,
        a_m1: a - 1,
        fa,
        fa1: fa + 1,
        fa_m1: fa - 1,
        frames: RETRY_FRAMES,
        frames_m1: RETRY_FRAMES - 1,
        seq: SEQ_BITS as usize,
        seq_m1: SEQ_BITS as usize - 1,
        used_expr,
        used_left_expr,
    })
}

/// Top module name of a parameter point.
pub fn retry_buffer_top_name(p: &RetryBufferParams) -> String {
    format!("exanet_retry_buffer_w{}", p.words)
}

impl RetryBufferRtl {
    /// The block for `p` (validated), as a child of another block or a top.
    pub fn new(p: &RetryBufferParams) -> Result<Self> {
        let text = body(p)?
            .render()
            .context("rendering the template templates/link/retry_buffer.v")?;
        Ok(RetryBufferRtl {
            clock: Default::default(),
            reset: Default::default(),
            ack_valid: Default::default(),
            ack_seq: Default::default(),
            stop: Default::default(),
            start: Default::default(),
            take: Default::default(),
            push_valid: Default::default(),
            push_data: Default::default(),
            push_ctrl: Default::default(),
            close_valid: Default::default(),
            close_seq: Default::default(),
            ack_ok: Default::default(),
            replay_valid: Default::default(),
            replay_data: Default::default(),
            replay_ctrl: Default::default(),
            used: Default::default(),
            frames: Default::default(),
            oldest: Default::default(),
            frames_left: Default::default(),
            used_left: Default::default(),
            replaying: Default::default(),
            _body: text,
        })
    }
}

/// Validate `p` and emit its retry buffer as Verilog.
pub fn emit_retry_buffer(p: &RetryBufferParams) -> Result<Emitted> {
    let mut uut = RetryBufferRtl::new(p)?;
    emit(&mut uut, &retry_buffer_top_name(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    #[test]
    fn emits_lint_clean_verilog_at_every_size() {
        for words in [64, 256, 4096] {
            let p = RetryBufferParams { words };
            let e = emit_retry_buffer(&p).unwrap();
            assert_eq!(e.top, format!("exanet_retry_buffer_w{words}"));
            let t = e.text();
            assert!(
                t.contains(&format!("reg [64:0] ring [0:{}];", words - 1)),
                "{t}"
            );
            assert!(!t.contains('$') && !t.contains("{{"));
            assert_lint_clean(&e);
        }
    }

    /// Every width and size in the template comes from the golden
    /// constants through the template's fields: apart from 1-bit literals
    /// and the 65-bit entry (64 data bits + the control flag), no number
    /// is written in it.
    #[test]
    fn template_has_no_literal_sizes() {
        let t = include_str!("../../templates/link/retry_buffer.v");
        let code: String = t
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n")
            .replace("1'b0", "")
            .replace("1'b1", "")
            .replace("[64:0]", "");
        // Drop the template expressions, then look for digits.
        let mut rest = code.as_str();
        let mut plain = String::new();
        while let Some(i) = rest.find("{{") {
            plain.push_str(&rest[..i]);
            let j = rest[i..].find("}}").expect("closed expression") + i + 2;
            rest = &rest[j..];
        }
        plain.push_str(rest);
        let digits: Vec<&str> = plain
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_' && c != '\'')
            .filter(|w| w.starts_with(|c: char| c.is_ascii_digit()))
            .collect();
        // What is left: range bounds and constants 0 and 1 (`[..:0]`,
        // `'d0`, `'d1` after a width expression) — no size.
        assert!(!digits.is_empty(), "the scan sees the template's numbers");
        assert!(
            digits
                .iter()
                .all(|w| matches!(w.trim_start_matches('\''), "0" | "1" | "d0" | "d1")),
            "literal numbers in the template: {digits:?}"
        );
    }

    #[test]
    fn bad_sizes_name_the_key() {
        for words in [32, 100, 8192] {
            let e = emit_retry_buffer(&RetryBufferParams { words })
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("retry_buffer.words") && e.contains(&words.to_string()),
                "{e}"
            );
        }
    }
}
