//! `gth_lane`: golden model of the GTH lane adapter `exanet_gth_lane`
//! (RTL: `exanet_hdl::transceiver::render_gth_lane`, template
//! `hdl/templates/board/gth_lane.v`) and of the GTH transceiver's 64B/66B
//! gearbox as the adapter sees it ([`Gearbox`]).
//!
//! # The adapter (cycle model of the template, one clock `clk`)
//! - Reset: a two-flop chain set asynchronously while `gt_tx_done &
//!   gt_rx_done` is low, released one flop per edge after: `reset` is high
//!   in a cycle where the wizard is not done and for two edges after.
//! - TX: a free-running sequence counter `seq` (0..=[`GEARBOX_SEQ_MAX`],
//!   no reset); `pause = seq == GEARBOX_SEQ_MAX`; `tx_tready = !reset &
//!   !pause`. The PCS ([`PcsTx`]) gets a block on every cycle but the pause:
//!   the node's word when it is taken, else the idle block. Because the PCS
//!   registers its block, `gt_txsequence` is `seq` delayed by one edge, so
//!   the gearbox's pause value lines up with the PCS's empty cycle, whose
//!   header is the invalid `00` (it starts at the pause value, so the count
//!   has no break from power-on).
//! - RX: the gearbox's block (`RXDATAVALID[0]` & `RXHEADERVALID[0]`) into the
//!   PCS ([`PcsRx`]); its words pass on unless they are the idle block;
//!   `channel_up = block_lock & !reset`; `gt_rxgearboxslip` is the PCS's
//!   slip request.
//!
//! # The gearbox ([`Gearbox`]; UG576 "TX/RX Gearbox", 64B/66B, 64-bit user
//! interface, 32-bit internal datapath)
//! What is assumed (from UG576/PG182 and the public GTX/GTH guides that
//! describe the same synchronous gearbox; stated, not verified on
//! hardware):
//! - TX synchronous gearbox, external sequence counter: the user drives
//!   TXSEQUENCE, counting 0..=32, one step per TXUSRCLK2 cycle; the block
//!   (`TXHEADER[1:0]`, `TXDATA[63:0]`) presented with TXSEQUENCE = 32 is not
//!   taken (the line carries 32 blocks of 66 bits in 33 cycles of 64 bits).
//!   Every other cycle's block is taken, whatever its header. A TXSEQUENCE
//!   that does not follow the count is a user error the real gearbox
//!   does not report (it would garble the line); the model counts it
//!   ([`Gearbox::sequence_errors`]) so a bench can fail on it.
//! - RX gearbox: at most one block per RXUSRCLK2 cycle, with RXDATAVALID
//!   and RXHEADERVALID both low one cycle in 33 (the line delivers 32
//!   blocks per 33 cycles); the block boundary is wherever the gearbox
//!   happens to cut the bit stream until RXGEARBOXSLIP shifts it by one
//!   bit (the line model [`SerialChannel`] drops one bit per slip).
//! - Not modelled (could not be checked without the device): the number of
//!   cycles the GTH's own TX/RX pipelines add (a fixed latency: it shifts
//!   every block equally), the exact RX pause position within the 33
//!   (only its rate), the header's serial bit order (both ends are this
//!   adapter: see the template's UNVERIFIED notes) and the asynchronous
//!   gearbox variant (which ignores TXSEQUENCE).

use super::pcs::{
    is_idle, PcsParams, PcsRx, PcsRxIn, PcsTx, PcsTxIn, SerialChannel, GEARBOX_SEQ_MAX, IDLE_WORD,
};
use super::PhyWord;
use anyhow::Result;

/// Inputs of the adapter in one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneInputs {
    /// `gt_tx_done & gt_rx_done` (the wizard's resets are done).
    pub gt_done: bool,
    /// `tx_tvalid` with `tx_tdata` / `tx_ctrl`.
    pub tx: Option<PhyWord>,
    /// The gearbox's RX block: `(RXHEADER[1:0], RXDATA)` with `RXDATAVALID[0]`
    /// and `RXHEADERVALID[0]` high, else `None`.
    pub rx_block: Option<(u8, u64)>,
}

/// Outputs of the adapter in one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneOutputs {
    /// `tx_tready`.
    pub tx_ready: bool,
    /// `gt_txsequence`.
    pub txsequence: u32,
    /// `gt_txheader[1:0]` (the upper bits are 0).
    pub txheader: u8,
    /// `gt_txdata`.
    pub txdata: u64,
    /// `rx_tvalid` with `rx_tdata` / `rx_ctrl` (the PCS word, shown even
    /// when not valid).
    pub rx_valid: bool,
    /// `rx_tdata` / `rx_ctrl`.
    pub rx_word: PhyWord,
    /// `channel_up`.
    pub channel_up: bool,
    /// `block_lock`.
    pub block_lock: bool,
    /// `gt_rxgearboxslip`.
    pub rxslip: bool,
    /// `cnt_invalid_headers` (32-bit wrapping).
    pub invalid_headers: u32,
    /// `cnt_lock_losses` (32-bit wrapping).
    pub lock_losses: u32,
}

/// The lane adapter.
#[derive(Clone, Debug)]
pub struct GthLane {
    rst: [bool; 2],
    seq: u32,
    seq_q: u32,
    tx: PcsTx,
    rx: PcsRx,
}

impl GthLane {
    /// An adapter at power-on around a PCS with `p`.
    pub fn new(p: PcsParams) -> Result<Self> {
        Ok(GthLane {
            rst: [true; 2],
            seq: 0,
            seq_q: GEARBOX_SEQ_MAX,
            tx: PcsTx::default(),
            rx: PcsRx::new(p)?,
        })
    }

    fn reset(&self, i: &LaneInputs) -> bool {
        !i.gt_done || self.rst[1]
    }

    /// Outputs in a cycle with inputs `i` (the reset is asynchronous).
    pub fn outputs(&self, i: &LaneInputs) -> LaneOutputs {
        let reset = self.reset(i);
        let pause = self.seq == GEARBOX_SEQ_MAX;
        let t = self.tx.outputs();
        let r = self.rx.outputs();
        LaneOutputs {
            tx_ready: !reset && !pause,
            txsequence: self.seq_q,
            txheader: if t.valid { t.header } else { 0 },
            txdata: t.payload,
            rx_valid: r.valid && !is_idle(r.word),
            rx_word: r.word,
            channel_up: r.block_lock && !reset,
            block_lock: r.block_lock,
            rxslip: r.slip,
            invalid_headers: r.invalid_headers as u32,
            lock_losses: r.lock_losses as u32,
        }
    }

    /// The clock edge ending a cycle with inputs `i`. Returns the node word
    /// the adapter took (`tx_tvalid & tx_tready`).
    pub fn tick(&mut self, i: &LaneInputs) -> Option<PhyWord> {
        let reset = self.reset(i);
        let o = self.outputs(i);
        let pause = self.seq == GEARBOX_SEQ_MAX;
        let taken = i.tx.filter(|_| o.tx_ready);
        let word = taken.unwrap_or(PhyWord {
            data: IDLE_WORD,
            ctrl: true,
        });
        self.tx.tick(&PcsTxIn {
            reset,
            valid: !pause,
            word,
        });
        let (valid, header, payload) = match i.rx_block {
            Some((h, d)) => (true, h, d),
            None => (false, 0, 0),
        };
        self.rx.tick(&PcsRxIn {
            reset,
            valid,
            header,
            payload,
        });
        self.seq_q = self.seq;
        self.seq = if pause { 0 } else { self.seq + 1 };
        self.rst = if i.gt_done {
            [false, self.rst[0]]
        } else {
            [true, true]
        };
        taken
    }
}

/// One direction of a GTH link as the adapters see it: the sender's TX
/// gearbox, the serial line ([`SerialChannel`]: bit offset, bit errors,
/// one bit dropped per slip) and the receiver's RX gearbox.
#[derive(Clone, Debug)]
pub struct Gearbox {
    line: SerialChannel,
    expect_seq: Option<u32>,
    rx_seq: u32,
    sequence_errors: u64,
    taken: u64,
    dropped_at_pause: u64,
    /// Blocks left in the current bad-header episode.
    episode_left: u64,
    /// One block in this many of an episode gets a bad header.
    episode_every: u64,
    /// Blocks taken since the episode started.
    episode_pos: u64,
    header_flips: u64,
}

impl Gearbox {
    /// A direction whose line loses the first `offset` bits (0..66) and
    /// flips bits at `ber`, deterministic from `seed`.
    pub fn new(seed: u64, ber: f64, offset: u32) -> Result<Self> {
        Ok(Gearbox {
            line: SerialChannel::new(seed, ber, offset)?,
            expect_seq: None,
            rx_seq: 0,
            sequence_errors: 0,
            taken: 0,
            dropped_at_pause: 0,
            episode_left: 0,
            episode_every: 0,
            episode_pos: 0,
            header_flips: 0,
        })
    }

    /// Start an episode of bad headers: of the next `blocks` blocks the
    /// TX gearbox takes, the `every`-th, `2 * every`-th, … reach the
    /// receiver with their first header bit flipped (`01` ↔ `00`, `10` ↔
    /// `11`: always an invalid header), on top of the line's `ber`. A
    /// bench starts one when the receiver gains block lock, to put a
    /// moderate density of bad headers across its first locked windows.
    /// `every` = 0 ends any episode.
    pub fn bad_header_episode(&mut self, blocks: u64, every: u64) {
        self.episode_left = if every == 0 { 0 } else { blocks };
        self.episode_every = every;
        self.episode_pos = 0;
    }

    /// Headers flipped by bad-header episodes so far.
    pub fn header_flips(&self) -> u64 {
        self.header_flips
    }

    /// TX gearbox at a TXUSRCLK2 edge: TXSEQUENCE `seq`, `TXHEADER[1:0]`
    /// `header`, TXDATA `data`. Returns whether the block was taken.
    pub fn tx(&mut self, seq: u32, header: u8, data: u64) -> bool {
        if let Some(e) = self.expect_seq {
            if seq != e {
                self.sequence_errors += 1;
            }
        }
        self.expect_seq = Some(if seq >= GEARBOX_SEQ_MAX { 0 } else { seq + 1 });
        if seq == GEARBOX_SEQ_MAX {
            // Not taken: a real block offered here is lost.
            self.dropped_at_pause += (header & 3 != 0) as u64;
            return false;
        }
        let mut flips = 0;
        if self.episode_left > 0 {
            self.episode_left -= 1;
            self.episode_pos += 1;
            if self.episode_pos.is_multiple_of(self.episode_every) {
                flips = 1;
                self.header_flips += 1;
            }
        }
        let ber = self.line.ber();
        self.line.send_flipped(header & 3, data, ber, flips);
        self.taken += 1;
        true
    }

    /// RX gearbox in one RXUSRCLK2 cycle: the block it presents, if any
    /// (none one cycle in 33, or while the line has not delivered 66 bits).
    pub fn rx(&mut self) -> Option<(u8, u64)> {
        let pause = self.rx_seq == GEARBOX_SEQ_MAX;
        self.rx_seq = if pause { 0 } else { self.rx_seq + 1 };
        if pause {
            return None;
        }
        self.line.cut().map(|c| (c.header, c.payload))
    }

    /// RXGEARBOXSLIP: the block boundary moves by one bit.
    pub fn slip(&mut self) {
        self.line.slip();
    }

    /// Cycles whose TXSEQUENCE broke the count 0..=32.
    pub fn sequence_errors(&self) -> u64 {
        self.sequence_errors
    }

    /// Blocks the TX gearbox took.
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// Blocks with a valid-looking header offered at the pause (lost).
    pub fn dropped_at_pause(&self) -> u64 {
        self.dropped_at_pause
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two golden adapters back to back through the gearbox model: after
    /// lock, every word A takes comes out of B once, in order, and the
    /// TX sequence never breaks the count.
    #[test]
    fn words_cross_in_order_after_lock() {
        let p = PcsParams { slip_wait: 32 };
        let (mut a, mut b) = (GthLane::new(p).unwrap(), GthLane::new(p).unwrap());
        let mut g = Gearbox::new(3, 0.0, 17).unwrap();
        let mut sent = Vec::new();
        let mut got = Vec::new();
        let mut n = 0u64;
        let mut rx_block = None;
        for cycle in 0..20_000u64 {
            let w = PhyWord {
                data: n.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                ctrl: n.is_multiple_of(5),
            };
            let ia = LaneInputs {
                gt_done: cycle > 3,
                tx: Some(w),
                rx_block: None,
            };
            let ib = LaneInputs {
                gt_done: cycle > 3,
                tx: None,
                rx_block,
            };
            let oa = a.outputs(&ia);
            let ob = b.outputs(&ib);
            g.tx(oa.txsequence, oa.txheader, oa.txdata);
            if ob.rxslip {
                g.slip();
            }
            if ob.rx_valid && ob.channel_up {
                got.push(ob.rx_word);
            }
            if a.tick(&ia).is_some() {
                sent.push(w);
                n += 1;
            }
            b.tick(&ib);
            rx_block = g.rx();
        }
        assert_eq!(g.sequence_errors(), 0);
        assert_eq!(g.dropped_at_pause(), 0);
        assert!(got.len() > 15_000, "{}", got.len());
        // B locked after A started: what it delivers is a contiguous run of
        // what A sent.
        let first = sent.iter().position(|w| *w == got[0]).unwrap();
        assert_eq!(&sent[first..first + got.len()], &got[..]);
    }

    /// A bad-header episode flips the first header bit of every `every`-th
    /// block taken, for `blocks` blocks, and nothing else.
    #[test]
    fn a_bad_header_episode_flips_every_nth_header() {
        use crate::link::pcs::HDR_DATA;
        let mut g = Gearbox::new(5, 0.0, 0).unwrap();
        g.tx(0, HDR_DATA, 1);
        g.bad_header_episode(16, 4);
        let mut seen = Vec::new();
        for k in 1..=24u32 {
            g.tx(k, HDR_DATA, k as u64);
            seen.extend(g.rx());
        }
        for _ in 0..40 {
            seen.extend(g.rx());
        }
        assert_eq!(seen.len(), 25, "{seen:?}");
        assert_eq!(g.header_flips(), 4);
        let bad: Vec<u64> = seen
            .iter()
            .filter(|(h, _)| *h != HDR_DATA)
            .map(|x| x.1)
            .collect();
        assert_eq!(bad, [4, 8, 12, 16], "{seen:?}");
        assert!(
            seen.iter().all(|(h, _)| *h == HDR_DATA || *h == 0),
            "{seen:?}"
        );
    }

    /// Without the one-cycle delay of TXSEQUENCE, the pause value meets a
    /// real block: the gearbox drops node words.
    #[test]
    fn an_undelayed_sequence_loses_words() {
        let p = PcsParams { slip_wait: 32 };
        let mut a = GthLane::new(p).unwrap();
        let mut g = Gearbox::new(3, 0.0, 0).unwrap();
        for _ in 0..1000 {
            let ia = LaneInputs {
                gt_done: true,
                tx: Some(PhyWord::default()),
                rx_block: None,
            };
            let o = a.outputs(&ia);
            // The mutation: the undelayed counter on TXSEQUENCE.
            g.tx(a.seq, o.txheader, o.txdata);
            a.tick(&ia);
        }
        assert!(g.dropped_at_pause() > 20, "{}", g.dropped_at_pause());
    }
}
