//! Golden model of `link_rx`: the receiving half of a link end.
//!
//! Takes PHY words, tracks the link state, checks and de-frames frames into
//! per-VC buffers, decodes the far end's control words for the local
//! `link_tx`, and passes flits to the local router under its credits.
//!
//! Per cycle (`tick`), with the PHY word of this cycle:
//! - lane down → `Down` (counting a drop from `Up`), partial frame discarded;
//!   lane up while `Down` → `Training`;
//! - `Training`: a valid training word sets `heard`, and with `ok` moves to
//!   `Up`; a valid control word moves to `Up` (the peer is up); any other
//!   word is counted in `training_errors` and ignored;
//! - `Up`: data words are staged and CRC'd; a control word that passes its
//!   own CRC is a control word (its fields go to `link_tx` next cycle) or a
//!   training word (the peer retrains: `urgent`, so `link_tx` answers with a
//!   control word at once); otherwise, after data words, it must be a
//!   trailer whose CRC covers the staged words. A bad or malformed frame is
//!   dropped (`crc_errors`) and nacked; a good one in order is written to
//!   its VC's buffer (`frames_received`, ack advances); a good one behind is
//!   a duplicate (dropped, `urgent` re-ack); ahead is a gap (`seq_errors`,
//!   nack). A control word with a bad CRC outside a frame counts in
//!   `ctrl_crc_errors`.
//! - then one flit, round-robin over VCs with a flit and a router credit,
//!   is registered to the output (so a one-flit frame leaves `link_rx` the
//!   cycle after its trailer), and its VC's `freed` count advances.
//!
//! Outputs are registered (Moore): the flit, and the status `link_tx`
//! reads (state, heard, the decoded peer control word, `ack_seq`,
//! `nack_count`, `urgent`, `freed`).

use super::PhyWord;
use super::{
    crc_word, seq_next, seq_sub, training_ok, unseal, Control, LinkCounters, LinkParams, LinkState,
    Trailer, FRAME_CRC_INIT, MAX_VCS, SEQ_MOD,
};
use crate::router::flit::Flit;
use anyhow::Result;
use std::collections::VecDeque;

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default)]
pub struct RxInputs {
    /// Word from the PHY this cycle.
    pub word: Option<PhyWord>,
    /// PHY lane (channel) up.
    pub lane_up: bool,
    /// Credits returned by the local router this cycle, one bit per VC.
    pub router_credit: u32,
}

/// What `link_tx` of the same end reads from `link_rx` (registered).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxStatus {
    /// Link state.
    pub state: LinkState,
    /// A valid training word has been received since the lane came up.
    pub heard: bool,
    /// A valid control word from the far end, decoded last cycle.
    pub peer_ctrl: Option<Control>,
    /// Last frame received in order.
    pub ack_seq: u8,
    /// Advances each time a nack is due.
    pub nack_count: u8,
    /// Advances when a control word should go out at once.
    pub urgent: u8,
    /// Flits passed to the router per VC, mod 256.
    pub freed: [u8; MAX_VCS],
}

/// Outputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxOutputs {
    /// Flit to the local router.
    pub flit: Option<Flit>,
    /// Status for the local `link_tx`.
    pub status: RxStatus,
}

/// Cycle-level model of `link_rx`.
#[derive(Clone, Debug)]
pub struct LinkRx {
    p: LinkParams,
    out: RxOutputs,
    staging: Vec<u64>,
    crc: u32,
    /// Discard data words until the next control word (frame too long).
    poisoned: bool,
    expected: u8,
    holdoff: usize,
    bufs: Vec<VecDeque<Flit>>,
    router_credits: Vec<usize>,
    rr: usize,
    counters: LinkCounters,
}

impl LinkRx {
    /// A receiver at power-on (`Down`).
    pub fn new(p: &LinkParams) -> Result<Self> {
        p.validate()?;
        Ok(LinkRx {
            out: RxOutputs {
                status: RxStatus {
                    ack_seq: SEQ_MOD - 1,
                    ..Default::default()
                },
                ..Default::default()
            },
            staging: Vec::with_capacity(p.frame_flits * p.words_per_flit()),
            crc: FRAME_CRC_INIT,
            poisoned: false,
            expected: 0,
            holdoff: 0,
            bufs: vec![VecDeque::with_capacity(p.rx_buffer_flits); p.vcs],
            router_credits: vec![p.router_credits; p.vcs],
            rr: 0,
            counters: LinkCounters::default(),
            p: p.clone(),
        })
    }

    /// Outputs during this cycle.
    #[inline]
    pub fn outputs(&self) -> &RxOutputs {
        &self.out
    }

    /// Its next tick only counts down the nack hold-off if its inputs are
    /// quiet (lane up, no word, no router credit): up, no control word
    /// decoded last cycle, nothing held for the router, no frame being
    /// received. For a simulator that skips idle links.
    pub fn quiet(&self) -> bool {
        self.out.status.state == LinkState::Up
            && self.out.status.peer_ctrl.is_none()
            && self.out.flit.is_none()
            && !self.mid_frame()
            && self.bufs.iter().all(|b| b.is_empty())
    }

    /// Advance `cycles` quiet ticks at once (see [`LinkRx::quiet`]).
    pub fn skip(&mut self, cycles: usize) {
        self.holdoff = self.holdoff.saturating_sub(cycles);
    }

    /// Counters (receive half).
    pub fn counters(&self) -> &LinkCounters {
        &self.counters
    }

    /// Flits held for the router on `vc`.
    pub fn held(&self, vc: usize) -> usize {
        self.bufs[vc].len()
    }

    /// Inside a frame: data words staged, or discarding an over-long one.
    pub fn mid_frame(&self) -> bool {
        !self.staging.is_empty() || self.poisoned
    }

    fn clear_frame(&mut self) {
        self.staging.clear();
        self.crc = FRAME_CRC_INIT;
        self.poisoned = false;
    }

    fn nack(&mut self) {
        if self.holdoff == 0 {
            self.out.status.nack_count = self.out.status.nack_count.wrapping_add(1);
            self.holdoff = self.p.nack_holdoff;
        }
    }

    fn bad_frame(&mut self) {
        self.counters.crc_errors += 1;
        self.clear_frame();
        self.nack();
    }

    fn trailer(&mut self, t: Trailer) {
        let wpf = self.p.words_per_flit();
        let words = self.staging.len();
        let n = words / wpf;
        if self.poisoned
            || words == 0
            || !words.is_multiple_of(wpf)
            || n > self.p.frame_flits
            || t.vc as usize >= self.p.vcs
            || !t.tails_ok(n)
        {
            return self.bad_frame();
        }
        let d = seq_sub(t.seq, self.expected);
        if d == 0 {
            let vc = t.vc as usize;
            if self.bufs[vc].len() + n > self.p.rx_buffer_flits {
                // The sender broke the cable's credit loop: refuse, do not ack.
                self.counters.overflows += 1;
                self.clear_frame();
                self.nack();
                return;
            }
            for i in 0..n {
                let mut data = [0u64; 4];
                data[..wpf].copy_from_slice(&self.staging[i * wpf..(i + 1) * wpf]);
                self.bufs[vc].push_back(Flit {
                    data,
                    head: if i == 0 { t.head } else { t.is_tail(i - 1) },
                    tail: t.is_tail(i),
                    vc: t.vc,
                });
            }
            self.out.status.ack_seq = self.expected;
            self.expected = seq_next(self.expected);
            self.counters.frames_received += 1;
        } else if d < SEQ_MOD / 2 {
            self.counters.seq_errors += 1;
            self.nack();
        } else {
            self.counters.duplicates += 1;
            self.out.status.urgent = self.out.status.urgent.wrapping_add(1);
        }
        self.clear_frame();
    }

    fn up_word(&mut self, w: PhyWord) {
        if !w.ctrl {
            if self.poisoned {
                return;
            }
            if self.staging.len() == self.p.frame_flits * self.p.words_per_flit() {
                // Longer than any frame: a lost trailer; drop until the next control word.
                self.counters.crc_errors += 1;
                self.nack();
                self.staging.clear();
                self.poisoned = true;
                return;
            }
            self.staging.push(w.data);
            self.crc = crc_word(self.crc, w.data);
            return;
        }
        if let Some(f) = unseal(FRAME_CRC_INIT, w.data) {
            if let Some(c) = Control::unpack(f) {
                self.out.status.peer_ctrl = Some(c);
                return;
            }
            if training_ok(f).is_some() {
                self.out.status.urgent = self.out.status.urgent.wrapping_add(1);
                return;
            }
        }
        if self.staging.is_empty() && !self.poisoned {
            self.counters.ctrl_crc_errors += 1;
            return;
        }
        match unseal(self.crc, w.data).and_then(Trailer::unpack) {
            Some(t) => self.trailer(t),
            None => self.bad_frame(),
        }
    }

    /// The clock edge.
    pub fn tick(&mut self, i: &RxInputs) {
        let st = &mut self.out.status;
        st.peer_ctrl = None;
        self.holdoff = self.holdoff.saturating_sub(1);
        if !i.lane_up {
            if st.state == LinkState::Up {
                self.counters.link_downs += 1;
            }
            st.state = LinkState::Down;
            st.heard = false;
            self.clear_frame();
        } else {
            match st.state {
                LinkState::Down => {
                    st.state = LinkState::Training;
                    st.heard = false;
                    self.clear_frame();
                }
                LinkState::Training => {
                    if let Some(w) = i.word {
                        let f = if w.ctrl {
                            unseal(FRAME_CRC_INIT, w.data)
                        } else {
                            None
                        };
                        match f {
                            Some(f) if training_ok(f).is_some() => {
                                st.heard = true;
                                if training_ok(f) == Some(true) {
                                    st.state = LinkState::Up;
                                    st.urgent = st.urgent.wrapping_add(1);
                                }
                            }
                            Some(f) if Control::unpack(f).is_some() => {
                                st.state = LinkState::Up;
                                st.peer_ctrl = Control::unpack(f);
                                st.urgent = st.urgent.wrapping_add(1);
                            }
                            _ => self.counters.training_errors += 1,
                        }
                    }
                }
                LinkState::Up => {
                    if let Some(w) = i.word {
                        self.up_word(w);
                    }
                }
            }
        }
        // One flit to the router.
        for v in 0..self.p.vcs {
            if i.router_credit >> v & 1 == 1 {
                if self.router_credits[v] < self.p.router_credits {
                    self.router_credits[v] += 1;
                } else {
                    // A credit for a flit never passed on: ignored.
                    self.counters.bad_acks += 1;
                }
            }
        }
        self.out.flit = None;
        let n = self.p.vcs;
        for k in 0..n {
            let v = (self.rr + k) % n;
            if self.router_credits[v] > 0 && !self.bufs[v].is_empty() {
                self.out.flit = self.bufs[v].pop_front();
                self.router_credits[v] -= 1;
                self.out.status.freed[v] = self.out.status.freed[v].wrapping_add(1);
                self.rr = (v + 1) % n;
                break;
            }
        }
    }
}
