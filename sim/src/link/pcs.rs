//! `pcs66`: a thin 64B/66B PCS for the raw GTH transceiver in 64B/66B
//! gearbox mode (golden model; RTL `exanet_hdl::link::pcs66`).
//!
//! Why: the link layer marks its control words with [`PhyWord::ctrl`],
//! which is exactly the 64B/66B sync header. Aurora 64B/66B in streaming
//! mode does not expose it; the GTH gearbox does (TXHEADER/TXDATA,
//! RXHEADER/RXDATA), so this PCS is all that sits between the link layer
//! and a raw GTH channel.
//!
//! # Standard facts relied on (IEEE 802.3 clause 49, 10GBASE-R)
//! - A 66-bit block is a 2-bit sync header and a 64-bit payload. Header
//!   `01` = data block, `10` = control block; `00` and `11` are invalid.
//!   Here the header is a 2-bit number: [`HDR_DATA`] = 0b01,
//!   [`HDR_CTRL`] = 0b10 (the GTH TXHEADER values for 10GBASE-R).
//! - The payload (never the header) is scrambled by the self-synchronous
//!   scrambler G(x) = 1 + x^39 + x^58: `s[n] = d[n] ^ s[n-39] ^ s[n-58]`
//!   over the serial payload stream, payload bit 0 first. The descrambler
//!   is `d[n] = s[n] ^ s[n-39] ^ s[n-58]`, so a line error at payload bit
//!   `p` flips descrambled bits `p`, `p + 39` and `p + 58` (the last two
//!   possibly in the next block): the claim of `phy.rs`.
//! - Block lock (figure 49-14): while unlocked, a run of 64 consecutive
//!   valid headers gives lock; an invalid header while unlocked requests a
//!   slip (the gearbox shifts its block boundary by one bit). While locked,
//!   headers are counted in windows of 64; 16 invalid headers within one
//!   window lose lock (and slip).
//!
//! # What this block does
//! - **TX**: `(valid, word, ctrl)` → registered `(valid, header, payload)`,
//!   one cycle later; the scrambler advances only on valid words (the GTH
//!   TX gearbox pauses the user data one cycle in 33; the caller holds
//!   `valid` low then).
//! - **RX**: `(valid, header, payload)` from the gearbox (RXDATAVALID and
//!   RXHEADERVALID together) → registered, one cycle later: the
//!   descrambled word and its `ctrl` flag with `valid` (only while locked
//!   and only for a valid header: an invalid header drops that word),
//!   `block_lock`, a one-cycle `slip` request (RXGEARBOXSLIP) and 32-bit
//!   counters: invalid headers seen while locked, lock losses. The
//!   descrambler takes every valid payload, locked or not, so it is in
//!   step as soon as lock is declared.
//!
//! # Simplifications (stated)
//! - No 802.3 block *decoding* (no /I/, /S/, /T/ control codes, no BER
//!   monitor, no 64B/66B idle insertion): the link layer's control words
//!   are carried as raw 64-bit control payloads, which a 10GBASE-R MAC
//!   would not understand but a point-to-point exanet link does not need.
//! - After a slip the lock machine ignores the next `slip_wait` cycles
//!   (the GTH needs some RXUSRCLK2 cycles before a slip takes effect; UG576
//!   asks for at least 32 between slips), and restarts its count.
//! - The scrambler starts from [`SCRAMBLER_SEED`] after reset (802.3 leaves
//!   the start state open; all ones avoids an all-zero line on a zero word).
//! - One clock for both halves (the RX user clock through the GTH's RX
//!   elastic buffer equals the TX user clock).
//! - The serial bit order of the header on the line is our channel
//!   model's ([`SerialChannel`]: header bit 0, header bit 1, payload bits
//!   0..63); both valid headers are complements, so lock and validity do
//!   not depend on it. The GTH gearbox's order is checked when it is wired.

use super::PhyWord;
use crate::rng::Rng;
use anyhow::{bail, Result};
use std::collections::VecDeque;

/// Sync header of a data block.
pub const HDR_DATA: u8 = 0b01;
/// Sync header of a control block.
pub const HDR_CTRL: u8 = 0b10;
/// Consecutive valid headers that give block lock.
pub const LOCK_HEADERS: u32 = 64;
/// Invalid headers within one window of [`LOCK_HEADERS`] that lose lock.
pub const LOSS_INVALID: u32 = 16;
/// Scrambler state after reset (the last 64 scrambled bits; only the top
/// 58 are used).
pub const SCRAMBLER_SEED: u64 = u64::MAX;
/// Scrambler taps: `s[n]` depends on `s[n - TAP_A]` and `s[n - TAP_B]`.
pub const TAP_A: u32 = 39;
/// Second tap (the polynomial's degree).
pub const TAP_B: u32 = 58;
/// Largest `slip_wait` (8-bit counter in the RTL).
pub const MAX_SLIP_WAIT: u32 = 255;
/// The idle block a transmitter sends when the link layer has no word (a
/// serial line always carries a block): a control block whose payload is
/// the 802.3 clause 49 block type 0x1E ("all idle", the eight /I/ codes
/// zero) in its first byte. As a link-layer control word its kind (bits
/// 63:62, [`super::KIND_TRAILER`] ..) is 0, which the link layer never
/// sends, so the receiving end drops exactly these words and the link
/// layer never sees one (the board-level lane adapter
/// `exanet_gth_lane` does both).
pub const IDLE_WORD: u64 = 0x1E;
/// The GTH TX synchronous gearbox (UG576, 64B/66B with a 64-bit user
/// interface and 32-bit internal width): TXSEQUENCE counts
/// 0..=`GEARBOX_SEQ_MAX`, one step per user clock, and the word offered
/// while it is `GEARBOX_SEQ_MAX` is not taken (33 user cycles carry 32
/// blocks: 64 · 33 = 66 · 32 line bits).
pub const GEARBOX_SEQ_MAX: u32 = 32;
/// Width of TXSEQUENCE on the wizard's port (`txsequence_in[6:0]`).
pub const GEARBOX_SEQ_BITS: u32 = 7;

/// Whether `w` is the idle block ([`IDLE_WORD`] with the control header).
#[inline]
pub fn is_idle(w: PhyWord) -> bool {
    w.ctrl && w.data == IDLE_WORD
}

/// Scramble one 64-bit payload (bit 0 first on the line) after the
/// previous scrambled payload `prev`. The recursion
/// `s = x ^ (s << 39) ^ (s << 58)` unrolls to `x ^ (x << 39) ^ (x << 58)`
/// within 64 bits (any second step shifts by >= 78), where `x` is the data
/// with the previous payload's contributions.
#[inline]
pub fn scramble(prev: u64, data: u64) -> u64 {
    let x = data ^ (prev >> (64 - TAP_A)) ^ (prev >> (64 - TAP_B));
    x ^ (x << TAP_A) ^ (x << TAP_B)
}

/// Descramble one payload `s` received after the payload `prev`.
#[inline]
pub fn descramble(prev: u64, s: u64) -> u64 {
    s ^ (s << TAP_A | prev >> (64 - TAP_A)) ^ (s << TAP_B | prev >> (64 - TAP_B))
}

/// A header is `01` or `10`.
#[inline]
pub fn header_ok(h: u8) -> bool {
    h == HDR_DATA || h == HDR_CTRL
}

/// Parameters of the PCS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcsParams {
    /// Cycles after a slip request during which headers are not tested.
    pub slip_wait: u32,
}

impl Default for PcsParams {
    /// 32 cycles, UG576's least spacing of RXGEARBOXSLIP pulses.
    fn default() -> Self {
        PcsParams { slip_wait: 32 }
    }
}

impl PcsParams {
    /// Reject values the RTL cannot hold, naming the key.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_SLIP_WAIT).contains(&self.slip_wait) {
            bail!(
                "pcs66.slip_wait = {}: must be 1..={MAX_SLIP_WAIT}",
                self.slip_wait
            );
        }
        Ok(())
    }
}

/// TX inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcsTxIn {
    /// Synchronous reset.
    pub reset: bool,
    /// A word is presented.
    pub valid: bool,
    /// The word and its data/control flag.
    pub word: PhyWord,
}

/// TX outputs (registered).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcsTxOut {
    /// A block for the gearbox.
    pub valid: bool,
    /// TXHEADER.
    pub header: u8,
    /// TXDATA: the scrambled payload.
    pub payload: u64,
}

/// The TX half.
#[derive(Clone, Debug)]
pub struct PcsTx {
    state: u64,
    out: PcsTxOut,
}

impl Default for PcsTx {
    fn default() -> Self {
        PcsTx {
            state: SCRAMBLER_SEED,
            out: PcsTxOut::default(),
        }
    }
}

impl PcsTx {
    /// Outputs in this cycle.
    pub fn outputs(&self) -> PcsTxOut {
        self.out
    }

    /// Rising edge.
    pub fn tick(&mut self, i: &PcsTxIn) {
        if i.reset {
            *self = PcsTx::default();
            return;
        }
        self.out.valid = i.valid;
        if i.valid {
            let s = scramble(self.state, i.word.data);
            self.state = s;
            self.out.payload = s;
            self.out.header = if i.word.ctrl { HDR_CTRL } else { HDR_DATA };
        }
    }
}

/// RX inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcsRxIn {
    /// Synchronous reset.
    pub reset: bool,
    /// RXDATAVALID and RXHEADERVALID: a block is presented.
    pub valid: bool,
    /// RXHEADER.
    pub header: u8,
    /// RXDATA (scrambled).
    pub payload: u64,
}

/// RX outputs (registered).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcsRxOut {
    /// `word` holds a received word.
    pub valid: bool,
    /// The descrambled word and its flag.
    pub word: PhyWord,
    /// Block lock.
    pub block_lock: bool,
    /// Slip the gearbox by one bit (one-cycle pulse).
    pub slip: bool,
    /// Invalid headers seen while locked (their words dropped).
    pub invalid_headers: u64,
    /// Locked → unlocked transitions.
    pub lock_losses: u64,
}

/// The RX half.
#[derive(Clone, Debug, Default)]
pub struct PcsRx {
    p: PcsParams,
    hist: u64,
    lock: bool,
    sh_cnt: u32,
    invalid: u32,
    wait: u32,
    out: PcsRxOut,
}

impl PcsRx {
    /// An unlocked receiver.
    pub fn new(p: PcsParams) -> Result<Self> {
        p.validate()?;
        Ok(PcsRx {
            p,
            ..Default::default()
        })
    }

    /// Outputs in this cycle.
    pub fn outputs(&self) -> PcsRxOut {
        PcsRxOut {
            block_lock: self.lock,
            ..self.out
        }
    }

    fn slip(&mut self) {
        self.out.slip = true;
        self.sh_cnt = 0;
        self.invalid = 0;
        self.wait = self.p.slip_wait;
    }

    /// Rising edge.
    pub fn tick(&mut self, i: &PcsRxIn) {
        if i.reset {
            *self = PcsRx {
                p: self.p,
                ..Default::default()
            };
            return;
        }
        self.out.valid = false;
        self.out.slip = false;
        let waiting = self.wait > 0;
        if waiting {
            self.wait -= 1;
        }
        if !i.valid {
            return;
        }
        let data = descramble(self.hist, i.payload);
        self.hist = i.payload;
        if waiting {
            return;
        }
        let ok = header_ok(i.header);
        if self.lock {
            if ok {
                self.out.valid = true;
                self.out.word = PhyWord {
                    data,
                    ctrl: i.header == HDR_CTRL,
                };
            } else {
                self.out.invalid_headers += 1;
            }
            self.sh_cnt += 1;
            self.invalid += !ok as u32;
            if self.invalid == LOSS_INVALID {
                self.lock = false;
                self.out.lock_losses += 1;
                self.slip();
            } else if self.sh_cnt == LOCK_HEADERS {
                self.sh_cnt = 0;
                self.invalid = 0;
            }
        } else if ok {
            self.sh_cnt += 1;
            if self.sh_cnt == LOCK_HEADERS {
                self.lock = true;
                self.sh_cnt = 0;
                self.invalid = 0;
            }
        } else {
            self.slip();
        }
    }
}

/// Errors a [`SerialChannel`] put into one block it sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockErrors {
    /// Header bits flipped (bit 0 = first header bit).
    pub header: u8,
    /// Payload bits flipped.
    pub payload: u64,
}

/// One block as the receiver's gearbox cuts it from the bit stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutBlock {
    /// The header as received.
    pub header: u8,
    /// The payload as received.
    pub payload: u64,
    /// Index of the transmitted block this cut lines up with, or `None`
    /// when the cut is not on a block boundary.
    pub block: Option<u64>,
}

/// A serial line between a TX gearbox and an RX gearbox: 66-bit blocks
/// become a bit stream (header bit 0, header bit 1, payload bits 0..63),
/// with independent bit errors at `ber`, an initial unknown bit offset
/// (`offset` bits of the first block are lost), and a receiver that cuts
/// 66 bits at a time and slips one bit per slip request (the bit is
/// dropped, as the GTH gearbox does by shifting its boundary). It records
/// the errors of every block sent, so a scoreboard can tell what each
/// received word should be.
#[derive(Clone, Debug)]
pub struct SerialChannel {
    rng: Rng,
    ber: f64,
    bits: VecDeque<bool>,
    /// Stream position (bits since the first transmitted bit) of `bits[0]`.
    pos: u64,
    sent: u64,
    errors: Vec<BlockErrors>,
    /// Bit errors injected.
    pub bit_errors: u64,
}

impl SerialChannel {
    /// A line at `ber` losing the first `offset` (0..66) bits.
    pub fn new(seed: u64, ber: f64, offset: u32) -> Result<Self> {
        if !(0.0..=0.5).contains(&ber) {
            bail!("pcs66.ber = {ber}: must be 0..=0.5");
        }
        if offset >= 66 {
            bail!("pcs66.offset = {offset}: must be 0..66");
        }
        Ok(SerialChannel {
            rng: Rng::new(seed),
            ber,
            bits: VecDeque::new(),
            pos: offset as u64,
            sent: 0,
            errors: Vec::new(),
            bit_errors: 0,
        })
    }

    /// Errors put into block `k` (all zero for a block not sent).
    pub fn errors_of(&self, k: u64) -> BlockErrors {
        self.errors.get(k as usize).copied().unwrap_or_default()
    }

    /// Blocks sent.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// The line's bit error rate.
    pub fn ber(&self) -> f64 {
        self.ber
    }

    /// Send one block.
    pub fn send(&mut self, header: u8, payload: u64) {
        self.send_at(header, payload, self.ber);
    }

    /// Send one block through a line at `ber` for this block only (a
    /// noise burst: 0.5 makes every bit random).
    pub fn send_at(&mut self, header: u8, payload: u64, ber: f64) {
        self.send_flipped(header, payload, ber, 0);
    }

    /// Send one block through a line at `ber` with, on top, the header
    /// bits set in `header_flips` flipped (bit 0 = first header bit): a
    /// chosen bad header, recorded in [`SerialChannel::errors_of`] like a
    /// random one.
    pub fn send_flipped(&mut self, header: u8, payload: u64, ber: f64, header_flips: u8) {
        let mut e = BlockErrors::default();
        let start = self.sent * 66;
        for b in 0..66u32 {
            let v = if b < 2 {
                header >> b & 1 == 1
            } else {
                payload >> (b - 2) & 1 == 1
            };
            let flip = (ber > 0.0 && self.rng.chance(ber)) || (b < 2 && header_flips >> b & 1 == 1);
            if flip {
                self.bit_errors += 1;
                if b < 2 {
                    e.header |= 1 << b;
                } else {
                    e.payload |= 1 << (b - 2);
                }
            }
            // The first `offset` bits of the stream never reach the receiver.
            if start + b as u64 >= self.pos {
                self.bits.push_back(v ^ flip);
            }
        }
        self.errors.push(e);
        self.sent += 1;
    }

    /// Cut the next block if 66 bits are there.
    pub fn cut(&mut self) -> Option<CutBlock> {
        if self.bits.len() < 66 {
            return None;
        }
        let mut header = 0u8;
        let mut payload = 0u64;
        for b in 0..66u32 {
            let v = self.bits.pop_front().expect("66 bits") as u64;
            if b < 2 {
                header |= (v as u8) << b;
            } else {
                payload |= v << (b - 2);
            }
        }
        let block = self.pos.is_multiple_of(66).then_some(self.pos / 66);
        self.pos += 66;
        Some(CutBlock {
            header,
            payload,
            block,
        })
    }

    /// Slip: drop one bit (when none is buffered, the next one sent).
    pub fn slip(&mut self) {
        // With nothing buffered, `pos` moving on skips the next bit sent.
        self.bits.pop_front();
        self.pos += 1;
    }
}

/// The descrambled flips a payload error pattern `e` causes in its own
/// block and in the next one: `(this, next)`.
pub fn spread(e: u64) -> (u64, u64) {
    let this = e ^ (e << TAP_A) ^ (e << TAP_B);
    let next = (e >> (64 - TAP_A)) ^ (e >> (64 - TAP_B));
    (this, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(rng: &mut Rng) -> PhyWord {
        PhyWord {
            data: rng.next_u64(),
            ctrl: rng.chance(0.2),
        }
    }

    /// Bit-serial reference of the scrambler: `s[n] = d[n] ^ s[n-39] ^ s[n-58]`.
    fn serial_scramble(state: &mut Vec<bool>, data: u64) -> u64 {
        let mut out = 0u64;
        for i in 0..64 {
            let n = state.len();
            let s = (data >> i & 1 == 1) ^ state[n - 39] ^ state[n - 58];
            state.push(s);
            out |= (s as u64) << i;
        }
        out
    }

    #[test]
    fn parallel_scrambler_equals_the_serial_recursion() {
        let mut rng = Rng::new(3);
        let mut state = vec![true; 64];
        let mut prev = SCRAMBLER_SEED;
        for _ in 0..200 {
            let d = rng.next_u64();
            let s = scramble(prev, d);
            assert_eq!(s, serial_scramble(&mut state, d));
            assert_eq!(descramble(prev, s), d);
            prev = s;
        }
    }

    /// TX → error-free channel → RX: once locked, every word comes back.
    fn run(offset: u32, ber: f64, cycles: u64, seed: u64) -> (PcsRx, SerialChannel, Vec<u64>) {
        let mut rng = Rng::new(seed);
        let mut tx = PcsTx::default();
        let mut rx = PcsRx::new(PcsParams::default()).unwrap();
        let mut ch = SerialChannel::new(seed, ber, offset).unwrap();
        let mut sent = Vec::new();
        let mut pending: Option<Option<u64>> = None;
        let mut bad = Vec::new();
        for _ in 0..cycles {
            let t = tx.outputs();
            if t.valid {
                ch.send(t.header, t.payload);
            }
            let o = rx.outputs();
            if o.slip {
                ch.slip();
            }
            if let Some(Some(k)) = pending.take() {
                if o.valid {
                    let w: PhyWord = sent[k as usize];
                    let e = ch.errors_of(k);
                    let (this, _) = spread(e.payload);
                    let (_, carry) = spread(ch.errors_of(k.wrapping_sub(1)).payload);
                    let want = w.data ^ this ^ carry;
                    if o.word.data != want || o.word.ctrl != (w.ctrl ^ (e.header == 3)) {
                        bad.push(k);
                    }
                }
            }
            let cut = ch.cut();
            let i = match cut {
                Some(c) => PcsRxIn {
                    reset: false,
                    valid: true,
                    header: c.header,
                    payload: c.payload,
                },
                None => PcsRxIn::default(),
            };
            pending = cut.map(|c| c.block);
            let w = word(&mut rng);
            let ti = PcsTxIn {
                reset: false,
                valid: rng.chance(0.97),
                word: w,
            };
            if ti.valid {
                sent.push(w);
            }
            tx.tick(&ti);
            rx.tick(&i);
        }
        (rx, ch, bad)
    }

    #[test]
    fn round_trip_after_lock_gives_the_same_words() {
        let (rx, ch, bad) = run(0, 0.0, 2_000, 5);
        assert!(rx.outputs().block_lock);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(rx.outputs().invalid_headers, 0);
        assert!(ch.sent() > 1_900);
    }

    #[test]
    fn a_bit_offset_stream_locks_after_slips() {
        for offset in [1, 17, 40, 65] {
            let (rx, _, bad) = run(offset, 0.0, 6_000, 7 + offset as u64);
            assert!(rx.outputs().block_lock, "offset {offset}");
            assert!(bad.is_empty(), "offset {offset}: {bad:?}");
            assert_eq!(rx.outputs().lock_losses, 0);
        }
    }

    #[test]
    fn bit_errors_are_all_accounted_for() {
        let (rx, ch, bad) = run(9, 2e-4, 30_000, 11);
        assert!(bad.is_empty(), "{bad:?}");
        assert!(ch.bit_errors > 100, "{}", ch.bit_errors);
        assert!(rx.outputs().invalid_headers > 0);
    }

    #[test]
    fn one_payload_error_flips_p_p39_p58_across_the_boundary() {
        for p in [0u32, 5, 6, 24, 25, 30, 63] {
            let mut prev = SCRAMBLER_SEED;
            let data = [0x0123_4567_89AB_CDEFu64, 0xDEAD_BEEF_0BAD_F00D, 7];
            let line: Vec<u64> = data
                .iter()
                .map(|&d| {
                    prev = scramble(prev, d);
                    prev
                })
                .collect();
            let mut hit = line.clone();
            hit[1] ^= 1 << p;
            let (mut a, mut b) = (line[0], hit[0]);
            let mut flips = 0u128;
            for k in 1..3 {
                let x = descramble(a, line[k]) ^ descramble(b, hit[k]);
                assert_eq!(descramble(a, line[k]), data[k]);
                flips |= (x as u128) << (64 * (k - 1));
                (a, b) = (line[k], hit[k]);
            }
            let want = 1u128 << p | 1u128 << (p + 39) | 1u128 << (p + 58);
            assert_eq!(flips, want, "p = {p}");
            let (this, next) = spread(1 << p);
            assert_eq!(this as u128 | (next as u128) << 64, want, "spread p = {p}");
        }
    }

    #[test]
    fn an_invalid_header_drops_that_word_and_is_counted() {
        let mut tx = PcsTx::default();
        let mut rx = PcsRx::new(PcsParams::default()).unwrap();
        let mut outs = Vec::new();
        for n in 0..100u64 {
            let w = PhyWord {
                data: n * 0x1111,
                ctrl: n % 3 == 0,
            };
            tx.tick(&PcsTxIn {
                reset: false,
                valid: true,
                word: w,
            });
            let t = tx.outputs();
            let header = if n == 80 { 0b11 } else { t.header };
            rx.tick(&PcsRxIn {
                reset: false,
                valid: true,
                header,
                payload: t.payload,
            });
            outs.push(rx.outputs());
        }
        // Lock after the 64th valid header (block 63), words from block 64.
        assert!(!outs[63].valid && outs[63].block_lock);
        assert_eq!(outs[64].word.data, 64 * 0x1111);
        assert!(outs[64].valid && outs[66].word.ctrl);
        assert!(!outs[80].valid, "invalid header dropped");
        assert_eq!(outs[81].word.data, 81 * 0x1111);
        assert_eq!(outs[99].invalid_headers, 1);
        assert!(outs[99].block_lock);
    }

    #[test]
    fn sixteen_invalid_headers_in_a_window_lose_lock() {
        for (bad, lost) in [(15u64, false), (16, true)] {
            let mut rx = PcsRx::new(PcsParams::default()).unwrap();
            let mut tx = PcsTx::default();
            let mut lost_at = None;
            for n in 0..200u64 {
                tx.tick(&PcsTxIn {
                    reset: false,
                    valid: true,
                    word: PhyWord::default(),
                });
                let t = tx.outputs();
                // Blocks 64..64+bad (after lock, one window) have bad headers.
                let header = if (64..64 + bad).contains(&n) {
                    0
                } else {
                    t.header
                };
                rx.tick(&PcsRxIn {
                    reset: false,
                    valid: true,
                    header,
                    payload: t.payload,
                });
                let o = rx.outputs();
                if o.slip && lost_at.is_none() {
                    lost_at = Some(n);
                }
            }
            let o = rx.outputs();
            assert_eq!(o.lock_losses, lost as u64, "{bad} bad headers");
            assert_eq!(o.invalid_headers, bad);
            if lost {
                assert_eq!(lost_at, Some(79));
            }
        }
    }

    #[test]
    fn bad_params_name_the_key() {
        let e = PcsRx::new(PcsParams { slip_wait: 0 }).unwrap_err();
        assert!(e.to_string().contains("pcs66.slip_wait = 0"), "{e}");
        let e = SerialChannel::new(1, 0.0, 66).unwrap_err();
        assert!(e.to_string().contains("pcs66.offset = 66"), "{e}");
    }

    /// The idle block is no word the link layer sends: its control-word
    /// kind is none of the link's kinds, and a data word of the same bits
    /// is not idle.
    #[test]
    fn idle_block_is_not_a_link_word() {
        let kind = (IDLE_WORD >> 62) as u32;
        for k in [
            super::super::KIND_TRAILER,
            super::super::KIND_CONTROL,
            super::super::KIND_TRAINING,
        ] {
            assert_ne!(kind, k);
        }
        assert!(is_idle(PhyWord {
            data: IDLE_WORD,
            ctrl: true
        }));
        assert!(!is_idle(PhyWord {
            data: IDLE_WORD,
            ctrl: false
        }));
        const { assert!(GEARBOX_SEQ_MAX < 1 << GEARBOX_SEQ_BITS) };
        assert_eq!(64 * (GEARBOX_SEQ_MAX + 1), 66 * GEARBOX_SEQ_MAX);
    }
}
