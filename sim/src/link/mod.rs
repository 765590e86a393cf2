//! Golden models of the link layer between FPGAs: `link_tx`, `link_rx`,
//! `retry_buffer`, and the PHY model `phy` (serdes + cable with bit errors).
//!
//! # Where it sits
//! ```text
//! router A out ─▶ link_tx A ─▶ PHY A→B (64 b/cycle + ctrl flag) ─▶ link_rx B ─▶ router B in
//!                  ▲  │ acks/credits of link_rx A go out through link_tx A
//! router A in ◀── link_rx A ◀─ PHY B→A ◀──────────────────────── link_tx B ◀─ router B out
//! ```
//! The PHY user interface is the Aurora 64B/66B streaming shape: one 64-bit
//! word per PL cycle plus a data/control flag (the 66-bit code word's sync
//! header), a TX `ready` that drops for clock-compensation gaps, and no RX
//! back-pressure.
//!
//! # Frame format
//! A **frame** is 1..=`frame_flits` flits of *one* VC, each flit sent as
//! `flit_bits / 64` data words (least significant word first), followed by
//! one control word, the **trailer**. A control word is 32 bits of fields
//! (bits 63..32) and a CRC-32 (bits 31..0, the project's `crc32`):
//!
//! | kind (bits 31:30 of the fields) | fields 29..0 | CRC-32 over |
//! |---|---|---|
//! | `01` trailer | seq 6 · vc 3 · head 1 · tail slot a 6 · b 6 · c 6 · `00` | the frame's data words (8 bytes each, little-endian) then the 4 field bytes |
//! | `10` control | nack 1 · ack_seq 6 · vc_a 3 · freed_a 8 · vc_b 3 · freed_b 8 · `0` | the 4 field bytes |
//! | `11` training | ok 1 · magic 29 ([`TRAIN_MAGIC`]) | the 4 field bytes |
//!
//! Sideband: the frame's VC is `vc`; flit 0 is a head iff `head`; flit `i`
//! is a tail iff `i` is in a tail slot (63 = empty; used slots are
//! increasing and come first); flit `i > 0` is a head iff flit `i - 1` is a
//! tail. So a frame holds the end of one packet and up to three packet
//! boundaries; the transmitter closes a frame at its third tail, at
//! `frame_flits`, when its VC has no flit or credit, or when the next flit's
//! head bit is not what the rule implies (so any sideband stream is carried
//! exactly, even a malformed one). The frame length is not sent: the
//! receiver counts data words (a count that is not a whole number of flits
//! in 1..=`frame_flits` is a bad frame).
//!
//! Control words carry *cumulative* state, so losing one loses nothing: the
//! last in-order frame received (`ack_seq`, go-back-N), a nack flag, and for
//! two VCs the total number of flits (mod 256) the receiver has passed on
//! to its router (`freed`). Control words may sit between any two words,
//! even inside a frame (they are not part of its CRC).
//!
//! **Overhead** (default `frame_flits = 54`, 128-bit flits): three 18-flit
//! packets (256 B payload) per frame → 108 data words + 1 trailer; goodput
//! bound 256/288 · 108/109 · 64/66 = 85.4 % of the 10.3125 Gb/s line
//! (86.2 % without framing), minus control words on the same lane (one per
//! `keepalive` cycles on an idle reverse direction) and clock compensation.
//!
//! # Reliability
//! Go-back-N with 6-bit sequence numbers and at most [`MAX_OUTSTANDING`]
//! frames in flight. The receiver accepts a frame only with a good CRC and
//! the expected sequence number; a duplicate is dropped and re-acked, a gap
//! or a bad frame is nacked (once per `nack_holdoff` cycles). The
//! transmitter keeps every sent word in the retry buffer until acked and
//! replays from the oldest unacked frame on a nack, on a retransmit timeout,
//! and when the link comes back up.
//!
//! # Flow control
//! The receiver buffers `rx_buffer_flits` per VC, at least one credit round
//! trip over the cable at full rate, so the cable's credit loop (counted in
//! `link_tx`) never throttles a busy VC; the routers on both sides see short
//! local credit loops (`link_tx` holds `tx_buffer_flits` per VC for its
//! router, `link_rx` counts the far router's `router_credits`).
//!
//! # Link state
//! `Down` (PHY lane down) → `Training` (both ends send training words; `ok`
//! says "I hear you") → `Up` on a valid training word with `ok`, or on any
//! valid control word (the peer is already up). A drop mid-traffic closes
//! the open frame into the retry buffer and resumes from it when up again.

//!
//! # Toward the RTL
//! `retry_buffer`, `link_tx` and `link_rx` have RTL and co-simulations.
//! Two places where these models do in one cycle what hardware spreads
//! (the models and the RTL change together):
//! - On a link drop `link_tx` closes the open frame into the retry buffer
//!   one push per cycle (the rest of the current flit, then the trailer),
//!   as its RTL does with the `retry_buffer` block; entering `Up` before the
//!   closing is done replays it too, and nothing is sent until it is done.
//! - `link_rx` writes a good frame's `n` flits into its VC buffer in the
//!   trailer's cycle and may pass flit 0 on in the same cycle. The RTL
//!   (`exanet_hdl::link::link_rx`, settled) keeps that timing: the VC is
//!   only in the trailer, so every arriving flit is written into *every*
//!   VC's buffer at that VC's committed tail plus the flit's index; the
//!   trailer commits the frame to its VC (tail += `n`, its sideband into a
//!   per-VC descriptor queue), and a bad frame commits nothing, which
//!   rolls the speculative writes back. Each VC buffer holds
//!   `rx_buffer_flits + frame_flits` slots (power of two) so speculation
//!   never overwrites a held flit. Rejected: a ping-pong staging RAM copied
//!   at one flit per cycle after the trailer — fewer BRAMs (one shared VC
//!   memory + two frames of staging, ~4 BRAM36 instead of 8 at the
//!   default), but a copy engine and a trailer queue, and at least two
//!   more cycles per frame (copy, then pick). Even one cycle breaks the
//!   goal: with this model's pick moved before the commit (a frame
//!   eligible the cycle after its trailer), the zero-load test measured
//!   5.0 cycles mean and 7 max (goal 6; today 4 and 6), and one-way
//!   goodput with clock compensation fell to 84.8 %. The golden model did
//!   not change; `rx_buffer_flits` sizing neither.

pub mod gth_lane;
pub mod link_rx;
pub mod link_tx;
pub mod pair;
pub mod pcs;
pub mod phy;
pub mod retry_buffer;
pub mod status;

use crate::common::crc32::{crc32_update, CRC32_INIT, CRC32_XOROUT};
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Bits of a frame sequence number.
pub const SEQ_BITS: u32 = 6;
/// Sequence numbers wrap at this value.
pub const SEQ_MOD: u8 = 1 << SEQ_BITS;
/// Most frames in flight (sent, not acked): less than half the sequence
/// space, so the receiver can tell a duplicate from a gap.
pub const MAX_OUTSTANDING: u8 = SEQ_MOD / 2 - 1;
/// Tail slots in a trailer.
pub const TAIL_SLOTS: usize = 3;
/// An empty tail slot.
pub const TAIL_NONE: u8 = 63;
/// Most flits in a frame (a tail slot holds 0..=62).
pub const MAX_FRAME_FLITS: usize = 63;
/// Most VCs (3-bit field).
pub const MAX_VCS: usize = 8;
/// Largest receive buffer per VC (freed counters are mod 256).
pub const MAX_RX_BUFFER_FLITS: usize = 255;
/// Control-word kinds (bits 31:30 of the fields).
pub const KIND_TRAILER: u32 = 1;
/// Ack / nack / credits.
pub const KIND_CONTROL: u32 = 2;
/// Link training.
pub const KIND_TRAINING: u32 = 3;
/// Fixed pattern in a training word's low 29 field bits.
pub const TRAIN_MAGIC: u32 = 0x0A5C_3E71 & 0x1FFF_FFFF;

/// One word on the PHY user interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PhyWord {
    /// 64 data bits.
    pub data: u64,
    /// Control block (sync header `10`) rather than data (`01`).
    pub ctrl: bool,
}

/// State of one end of a link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LinkState {
    /// PHY lane down: nothing sent, the router port back-pressured.
    #[default]
    Down = 0,
    /// Lane up, handshake with the far end.
    Training = 1,
    /// Frames flow.
    Up = 2,
}

/// `a - b` in sequence space.
#[inline]
pub fn seq_sub(a: u8, b: u8) -> u8 {
    a.wrapping_sub(b) & (SEQ_MOD - 1)
}

/// `a + 1` in sequence space.
#[inline]
pub fn seq_next(a: u8) -> u8 {
    (a + 1) & (SEQ_MOD - 1)
}

/// CRC register after `bytes` (continuing from `state`; start with [`CRC32_INIT`]).
#[inline]
pub fn crc_word(state: u32, word: u64) -> u32 {
    crc32_update(state, &word.to_le_bytes())
}

/// A control word: `fields` in bits 63..32, CRC-32 of the data words so
/// far (`state`, register form) and the field bytes in bits 31..0.
#[inline]
pub fn seal(state: u32, fields: u32) -> u64 {
    let crc = crc32_update(state, &fields.to_le_bytes()) ^ CRC32_XOROUT;
    (fields as u64) << 32 | crc as u64
}

/// The fields of a control word if its CRC (continuing from `state`) holds.
#[inline]
pub fn unseal(state: u32, word: u64) -> Option<u32> {
    let fields = (word >> 32) as u32;
    (seal(state, fields) == word).then_some(fields)
}

/// Kind of a control word's fields.
#[inline]
pub fn kind_of(fields: u32) -> u32 {
    fields >> 30
}

/// A frame trailer's fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trailer {
    /// Sequence number.
    pub seq: u8,
    /// VC of every flit of the frame.
    pub vc: u8,
    /// Flit 0 is a head.
    pub head: bool,
    /// Tail positions, increasing, [`TAIL_NONE`] when unused.
    pub tails: [u8; TAIL_SLOTS],
}

impl Trailer {
    /// The 32 field bits.
    pub fn pack(&self) -> u32 {
        KIND_TRAILER << 30
            | (self.seq as u32 & 0x3F) << 24
            | (self.vc as u32 & 7) << 21
            | (self.head as u32) << 20
            | (self.tails[0] as u32 & 0x3F) << 14
            | (self.tails[1] as u32 & 0x3F) << 8
            | (self.tails[2] as u32 & 0x3F) << 2
    }

    /// Fields of a trailer (kind and reserved bits checked), or `None`.
    pub fn unpack(f: u32) -> Option<Self> {
        if kind_of(f) != KIND_TRAILER || f & 3 != 0 {
            return None;
        }
        Some(Trailer {
            seq: (f >> 24 & 0x3F) as u8,
            vc: (f >> 21 & 7) as u8,
            head: f >> 20 & 1 == 1,
            tails: [
                (f >> 14 & 0x3F) as u8,
                (f >> 8 & 0x3F) as u8,
                (f >> 2 & 0x3F) as u8,
            ],
        })
    }

    /// Whether flit `i` of an `n`-flit frame is a tail, or `None` if the
    /// slots are not increasing, not below `n`, or not filled in order.
    pub fn tails_ok(&self, n: usize) -> bool {
        let mut prev: Option<u8> = None;
        let mut ended = false;
        for &t in &self.tails {
            if t == TAIL_NONE {
                ended = true;
                continue;
            }
            if ended || t as usize >= n || prev.is_some_and(|p| t <= p) {
                return false;
            }
            prev = Some(t);
        }
        true
    }

    /// Flit `i` is a tail.
    pub fn is_tail(&self, i: usize) -> bool {
        self.tails
            .iter()
            .any(|&t| t != TAIL_NONE && t as usize == i)
    }
}

/// A control word's fields (ack, nack, two credit slots).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Control {
    /// Resend from `ack_seq + 1`.
    pub nack: bool,
    /// Last frame received in order.
    pub ack_seq: u8,
    /// `(vc, flits freed on it so far mod 256)`, two slots.
    pub credits: [(u8, u8); 2],
}

impl Control {
    /// The 32 field bits.
    pub fn pack(&self) -> u32 {
        KIND_CONTROL << 30
            | (self.nack as u32) << 29
            | (self.ack_seq as u32 & 0x3F) << 23
            | (self.credits[0].0 as u32 & 7) << 20
            | (self.credits[0].1 as u32) << 12
            | (self.credits[1].0 as u32 & 7) << 9
            | (self.credits[1].1 as u32) << 1
    }

    /// Fields of a control word, or `None` for another kind / reserved bit set.
    pub fn unpack(f: u32) -> Option<Self> {
        if kind_of(f) != KIND_CONTROL || f & 1 != 0 {
            return None;
        }
        Some(Control {
            nack: f >> 29 & 1 == 1,
            ack_seq: (f >> 23 & 0x3F) as u8,
            credits: [
                ((f >> 20 & 7) as u8, (f >> 12) as u8),
                ((f >> 9 & 7) as u8, (f >> 1) as u8),
            ],
        })
    }
}

/// Training word fields.
pub fn training_fields(ok: bool) -> u32 {
    KIND_TRAINING << 30 | (ok as u32) << 29 | TRAIN_MAGIC
}

/// `Some(ok)` for a training word's fields.
pub fn training_ok(f: u32) -> Option<bool> {
    (kind_of(f) == KIND_TRAINING && f & 0x1FFF_FFFF == TRAIN_MAGIC).then_some(f >> 29 & 1 == 1)
}

/// Parameters of the link layer (`link_tx`, `link_rx`, `retry_buffer`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkParams {
    /// Flit width in bits: 64, 128 or 256.
    pub flit_bits: usize,
    /// VCs on the link (router classes × VCs per class), 1..=8.
    pub vcs: usize,
    /// Most flits in a frame, 1..=63.
    pub frame_flits: usize,
    /// One-way PHY latency in PL cycles (serdes + cable), used for sizing.
    pub latency_cycles: usize,
    /// Per-VC buffer in `link_tx` the local router's credits count.
    pub tx_buffer_flits: usize,
    /// Per-VC buffer in `link_rx`: covers the cable's credit round trip.
    pub rx_buffer_flits: usize,
    /// Per-VC input buffer of the router `link_rx` feeds.
    pub router_credits: usize,
    /// Retry buffer in 64-bit words (a power of two).
    pub retry_words: usize,
    /// Least cycles between control words carrying new acks or credit batches.
    pub ack_interval: usize,
    /// Freed flits on one VC that make a credit update due.
    pub credit_batch: usize,
    /// Cycles after which any changed ack or credit is sent.
    pub refresh_interval: usize,
    /// Cycles after which a control word is sent even if nothing changed.
    pub keepalive: usize,
    /// Cycles without ack progress, with frames outstanding, before a replay.
    pub timeout: usize,
    /// Least cycles between two nacks.
    pub nack_holdoff: usize,
}

impl Default for LinkParams {
    /// 128-bit flits, 4 VCs, 16 cycles (100 ns at 156.25 MHz) each way.
    fn default() -> Self {
        LinkParams::sized(128, 4, 16, 32)
    }
}

impl LinkParams {
    /// Words per flit.
    pub fn words_per_flit(&self) -> usize {
        self.flit_bits / 64
    }

    /// Longest frame in words, trailer included.
    pub fn frame_words(&self) -> usize {
        self.frame_flits * self.words_per_flit() + 1
    }

    /// Cycles from a flit leaving `link_tx` to its credit being back at
    /// `link_tx` when the far router drains at once: the frame still to
    /// send, both cable directions, the wait for a control-word slot (a
    /// credit batch at half rate, or two slots' turn among the VCs) and
    /// the pipeline registers.
    pub fn credit_round_trip(&self) -> usize {
        let wait = (self.ack_interval * self.vcs.div_ceil(2))
            .max(self.credit_batch * self.words_per_flit());
        2 * self.latency_cycles + self.frame_words() + wait + 8
    }

    /// Defaults derived for a flit width, VC count, one-way latency and
    /// router buffer: the receive buffer covers the credit round trip at
    /// full rate, the retry buffer a round trip plus a frame, the timeout
    /// twice that.
    pub fn sized(flit_bits: usize, vcs: usize, latency_cycles: usize, router: usize) -> Self {
        // Three 18-flit packets of 128 bits; the same ~108 words at other widths.
        let frame_flits = (108 / (flit_bits / 64).max(1)).clamp(1, MAX_FRAME_FLITS);
        Self::sized_frames(flit_bits, vcs, latency_cycles, router, frame_flits)
    }

    /// [`Self::sized`] with frames of at most `frame_flits` flits (the
    /// buffers, retry buffer and timers derived from that frame length).
    pub fn sized_frames(
        flit_bits: usize,
        vcs: usize,
        latency_cycles: usize,
        router: usize,
        frame_flits: usize,
    ) -> Self {
        let mut p = LinkParams {
            flit_bits,
            vcs,
            frame_flits,
            latency_cycles,
            tx_buffer_flits: router,
            rx_buffer_flits: 0,
            router_credits: router,
            retry_words: 0,
            ack_interval: 32,
            credit_batch: 16,
            refresh_interval: 128,
            keepalive: 1024,
            timeout: 0,
            nack_holdoff: 0,
        };
        let wpf = p.words_per_flit().max(1);
        p.rx_buffer_flits = p.credit_round_trip().div_ceil(wpf).min(MAX_RX_BUFFER_FLITS);
        let ack_rt = 2 * latency_cycles + p.ack_interval + 8;
        p.retry_words = (ack_rt + 2 * p.frame_words()).next_power_of_two();
        p.timeout = 2 * (ack_rt + p.frame_words());
        p.nack_holdoff = ack_rt + p.frame_words() + 8;
        p
    }

    /// Reject illegal values and mixes, naming the key, value and rule.
    pub fn validate(&self) -> Result<()> {
        let k =
            |key: &str, v: usize, rule: &str| -> Result<()> { bail!("link.{key} = {v}: {rule}") };
        if ![64, 128, 256].contains(&self.flit_bits) {
            k("flit_bits", self.flit_bits, "must be 64, 128 or 256")?;
        }
        if !(1..=MAX_VCS).contains(&self.vcs) {
            k("vcs", self.vcs, "must be 1..=8 (3-bit VC field)")?;
        }
        if !(1..=MAX_FRAME_FLITS).contains(&self.frame_flits) {
            k(
                "frame_flits",
                self.frame_flits,
                "must be 1..=63 (6-bit tail slots)",
            )?;
        }
        if self.tx_buffer_flits == 0 || self.router_credits == 0 {
            k(
                "tx_buffer_flits/router_credits",
                self.tx_buffer_flits.min(self.router_credits),
                "must be >= 1",
            )?;
        }
        if !(1..=MAX_RX_BUFFER_FLITS).contains(&self.rx_buffer_flits) {
            k(
                "rx_buffer_flits",
                self.rx_buffer_flits,
                "must be 1..=255 (8-bit freed counters)",
            )?;
        }
        if !self.retry_words.is_power_of_two() || self.retry_words < 2 * self.frame_words() {
            k(
                "retry_words",
                self.retry_words,
                &format!(
                    "must be a power of two >= two frames ({} words)",
                    2 * self.frame_words()
                ),
            )?;
        }
        if self.ack_interval == 0 || self.credit_batch == 0 || self.refresh_interval == 0 {
            k(
                "ack_interval/credit_batch/refresh_interval",
                0,
                "must each be >= 1",
            )?;
        }
        if self.keepalive < self.refresh_interval {
            k(
                "keepalive",
                self.keepalive,
                &format!("must be >= refresh_interval ({})", self.refresh_interval),
            )?;
        }
        let rt = 2 * self.latency_cycles + self.frame_words() + self.ack_interval;
        if self.timeout <= rt {
            k(
                "timeout",
                self.timeout,
                &format!("must exceed the ack round trip plus a frame ({rt} cycles)"),
            )?;
        }
        Ok(())
    }
}

/// Counters of one link end (`link_tx` and `link_rx` fill their halves).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LinkCounters {
    /// Frames sent for the first time.
    pub frames_sent: u64,
    /// Frames accepted (good CRC, in order).
    pub frames_received: u64,
    /// Frames dropped for a bad CRC, a bad length or malformed sideband.
    pub crc_errors: u64,
    /// Control or training words with a bad CRC (outside a frame).
    pub ctrl_crc_errors: u64,
    /// Good frames with a sequence number ahead of the expected one.
    pub seq_errors: u64,
    /// Good frames already received (replays), dropped.
    pub duplicates: u64,
    /// Replays started (nack, timeout or link back up).
    pub retransmissions: u64,
    /// Replays started by the retransmit timeout.
    pub timeouts: u64,
    /// Up → down transitions.
    pub link_downs: u64,
    /// Acks or credit returns for frames / flits never sent, ignored.
    pub bad_acks: u64,
    /// Words received while training that were not training words.
    pub training_errors: u64,
    /// Flits that found their buffer full (a sender broke flow control), dropped.
    pub overflows: u64,
    /// Words sent by replays.
    pub words_replayed: u64,
    /// Control words sent.
    pub ctrl_sent: u64,
}

impl LinkCounters {
    /// Field-wise sum (one end = its TX half + its RX half).
    pub fn merged(&self, o: &LinkCounters) -> LinkCounters {
        LinkCounters {
            frames_sent: self.frames_sent + o.frames_sent,
            frames_received: self.frames_received + o.frames_received,
            crc_errors: self.crc_errors + o.crc_errors,
            ctrl_crc_errors: self.ctrl_crc_errors + o.ctrl_crc_errors,
            seq_errors: self.seq_errors + o.seq_errors,
            duplicates: self.duplicates + o.duplicates,
            retransmissions: self.retransmissions + o.retransmissions,
            timeouts: self.timeouts + o.timeouts,
            link_downs: self.link_downs + o.link_downs,
            bad_acks: self.bad_acks + o.bad_acks,
            training_errors: self.training_errors + o.training_errors,
            overflows: self.overflows + o.overflows,
            words_replayed: self.words_replayed + o.words_replayed,
            ctrl_sent: self.ctrl_sent + o.ctrl_sent,
        }
    }
}

/// Start value of a frame CRC register.
pub const FRAME_CRC_INIT: u32 = CRC32_INIT;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::crc32::crc32;

    #[test]
    fn fields_round_trip_and_kinds_are_distinct() {
        let t = Trailer {
            seq: 45,
            vc: 5,
            head: true,
            tails: [3, 40, TAIL_NONE],
        };
        assert_eq!(Trailer::unpack(t.pack()), Some(t));
        assert_eq!(Control::unpack(t.pack()), None);
        let c = Control {
            nack: true,
            ack_seq: 63,
            credits: [(7, 255), (2, 1)],
        };
        assert_eq!(Control::unpack(c.pack()), Some(c));
        assert_eq!(Trailer::unpack(c.pack()), None);
        assert_eq!(training_ok(training_fields(true)), Some(true));
        assert_eq!(training_ok(training_fields(false)), Some(false));
        assert_eq!(training_ok(c.pack()), None);
        assert!(t.tails_ok(41) && !t.tails_ok(40));
        let bad = Trailer {
            tails: [5, TAIL_NONE, 7],
            ..t
        };
        assert!(!bad.tails_ok(60));
        let dec = Trailer {
            tails: [9, 4, TAIL_NONE],
            ..t
        };
        assert!(!dec.tails_ok(60));
    }

    /// The seal is the plain CRC-32 of the data words' bytes then the field bytes.
    #[test]
    fn seal_is_crc32_of_words_then_fields() {
        let words = [0x0123_4567_89AB_CDEFu64, 0xFEDC_BA98_7654_3210];
        let f = Trailer::default().pack();
        let st = words.iter().fold(FRAME_CRC_INIT, |s, &w| crc_word(s, w));
        let w = seal(st, f);
        let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        bytes.extend_from_slice(&f.to_le_bytes());
        assert_eq!(w as u32, crc32(&bytes));
        assert_eq!(unseal(st, w), Some(f));
        for bit in 0..64 {
            assert_eq!(unseal(st, w ^ 1 << bit), None, "bit {bit}");
        }
        assert_eq!(unseal(FRAME_CRC_INIT, w), None, "CRC covers the data words");
    }

    #[test]
    fn defaults_are_valid_and_cover_the_round_trip() {
        let p = LinkParams::default();
        p.validate().unwrap();
        assert!(p.rx_buffer_flits * p.words_per_flit() >= p.credit_round_trip());
        assert!(p.retry_words >= 2 * p.latency_cycles + 2 * p.frame_words());
        for (lat, fb, v) in [(1, 64, 1), (16, 256, 8), (60, 128, 4)] {
            let q = LinkParams::sized(fb, v, lat, 32);
            q.validate()
                .unwrap_or_else(|e| panic!("{lat} {fb} {v}: {e}"));
        }
    }

    #[test]
    fn bad_params_name_key_and_value() {
        type Edit = Box<dyn Fn(&mut LinkParams)>;
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|p| p.flit_bits = 96), "link.flit_bits = 96"),
            (Box::new(|p| p.vcs = 9), "link.vcs = 9"),
            (Box::new(|p| p.frame_flits = 64), "link.frame_flits = 64"),
            (
                Box::new(|p| p.rx_buffer_flits = 256),
                "link.rx_buffer_flits = 256",
            ),
            (Box::new(|p| p.retry_words = 300), "link.retry_words = 300"),
            (Box::new(|p| p.timeout = 10), "link.timeout = 10"),
            (Box::new(|p| p.keepalive = 1), "link.keepalive = 1"),
        ];
        for (f, want) in cases {
            let mut p = LinkParams::default();
            f(&mut p);
            let e = p.validate().unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }
}
