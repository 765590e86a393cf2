//! Golden model of `link_tx`: the sending half of a link end.
//!
//! Takes flits from the local router into per-VC buffers of
//! `tx_buffer_flits` (the router's credits count them; a credit goes back
//! the cycle a flit leaves), frames them (format in the module doc of
//! [`super`]), keeps every frame word in the [`RetryBuffer`] until acked,
//! and sends control words for the local `link_rx`.
//!
//! Each word slot (a cycle with no word pending, or whose pending word
//! the PHY took — `ready`), in `Up`, in priority order:
//! 1. a control word, when due: a nack or an urgent request from `link_rx`,
//!    or `ack_interval` cycles since the last one and the ack moved or a VC
//!    freed `credit_batch` flits, or `refresh_interval` cycles and anything
//!    changed, or `keepalive` cycles. Its two credit slots go to the VCs
//!    with the most flits freed since they were last sent (ties rotate);
//! 2. a replay word, when replaying; a replay requested (nack, timeout,
//!    link back up) starts once the open frame is closed;
//! 3. the next word of the current flit;
//! 4. the next flit of the open frame's VC if it may follow (see the
//!    format) and the far buffer has a credit, else the trailer;
//! 5. a new frame: the next VC round-robin with a flit and a credit, when
//!    fewer than `MAX_OUTSTANDING` frames are unacked and the retry buffer
//!    has room for a flit and a trailer.
//!
//! In `Training` every slot carries a training word (`ok` = `link_rx` has
//! heard the far end); in `Down` nothing is sent. Leaving `Up` closes the
//! open frame into the retry buffer unsent, one word per cycle (the rest
//! of the current flit, then the trailer: the retry buffer takes one push
//! per cycle); entering `Up` replays every unacked frame (including one
//! still being closed) and sends a control word at once. While a closing
//! is unfinished in `Up`, nothing is sent.
//!
//! Acks free the retry buffer; an ack for a frame not held, or a credit
//! return for more flits than were sent, is ignored and counted
//! (`bad_acks`). With frames unacked and no ack progress for `timeout`
//! cycles (outside a replay) a replay starts (`timeouts`).
//!
//! Outputs are registered: the word (held until `ready`) and the credit.

use super::link_rx::RxStatus;
use super::retry_buffer::RetryBuffer;
use super::{
    crc_word, seal, seq_next, training_fields, Control, LinkCounters, LinkParams, LinkState,
    PhyWord, Trailer, FRAME_CRC_INIT, MAX_OUTSTANDING, MAX_VCS, SEQ_MOD, TAIL_NONE, TAIL_SLOTS,
};
use crate::router::flit::Flit;
use anyhow::Result;
use std::collections::VecDeque;

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default)]
pub struct TxInputs {
    /// Flit from the local router (sent only with a credit).
    pub flit: Option<Flit>,
    /// The PHY takes the word on the output this cycle.
    pub ready: bool,
    /// Status of the local `link_rx`.
    pub rx: RxStatus,
}

/// Outputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxOutputs {
    /// Word to the PHY (held until taken).
    pub word: Option<PhyWord>,
    /// A flit left the buffer of this VC: a credit to the local router.
    pub credit: Option<u8>,
}

#[derive(Clone, Copy, Debug)]
struct OpenFrame {
    seq: u8,
    vc: u8,
    head: bool,
    n: usize,
    tails: [u8; TAIL_SLOTS],
    ntails: usize,
    last_tail: bool,
    crc: u32,
}

/// Cycle-level model of `link_tx`.
#[derive(Clone, Debug)]
pub struct LinkTx {
    p: LinkParams,
    out: TxOutputs,
    queues: Vec<VecDeque<Flit>>,
    sent: [u8; MAX_VCS],
    peer_freed: [u8; MAX_VCS],
    next_seq: u8,
    acked: u8,
    retry: RetryBuffer,
    frame: Option<OpenFrame>,
    /// The flit being serialized and its next word.
    cur: Option<(Flit, usize)>,
    rewind: bool,
    /// The link dropped with a frame open: its rest goes into the retry
    /// buffer one word per cycle.
    flushing: bool,
    timer: usize,
    rr: usize,
    prev_state: LinkState,
    // Control-word coalescing: what was last sent.
    last_ack: u8,
    last_freed: [u8; MAX_VCS],
    last_nack: u8,
    last_urgent: u8,
    force_ctrl: bool,
    since_ctrl: usize,
    slot_rr: usize,
    counters: LinkCounters,
}

impl LinkTx {
    /// A transmitter at power-on.
    pub fn new(p: &LinkParams) -> Result<Self> {
        p.validate()?;
        Ok(LinkTx {
            out: TxOutputs::default(),
            queues: vec![VecDeque::with_capacity(p.tx_buffer_flits); p.vcs],
            sent: [0; MAX_VCS],
            peer_freed: [0; MAX_VCS],
            next_seq: 0,
            acked: SEQ_MOD - 1,
            retry: RetryBuffer::new(p.retry_words),
            frame: None,
            cur: None,
            rewind: false,
            flushing: false,
            timer: 0,
            rr: 0,
            prev_state: LinkState::Down,
            last_ack: SEQ_MOD - 1,
            last_freed: [0; MAX_VCS],
            last_nack: 0,
            last_urgent: 0,
            force_ctrl: false,
            since_ctrl: 0,
            slot_rr: 0,
            counters: LinkCounters::default(),
            p: p.clone(),
        })
    }

    /// Outputs during this cycle.
    #[inline]
    pub fn outputs(&self) -> &TxOutputs {
        &self.out
    }

    /// Counters (send half).
    pub fn counters(&self) -> &LinkCounters {
        &self.counters
    }

    /// Frames sent and not yet acked.
    pub fn outstanding(&self) -> usize {
        self.retry.frames()
    }

    /// Flits waiting in the router-facing buffer of `vc`.
    pub fn queued(&self, vc: usize) -> usize {
        self.queues[vc].len()
    }

    /// Nothing queued, open or unacked.
    pub fn idle(&self) -> bool {
        self.queues.iter().all(|q| q.is_empty())
            && self.frame.is_none()
            && self.retry.is_empty()
            && self.out.word.is_none()
    }

    /// How many of the next ticks would only count cycles, given that its
    /// inputs stay as in a quiet link (no flit from the router, `ready`
    /// whatever, `rx` as now, no control word from the peer): the link up
    /// since the last tick, nothing queued, open, held or shown, no credit
    /// out, nothing to tell the peer but the keepalive, which falls due
    /// when the cycle count reaches `keepalive`. 0 when not quiet. For a
    /// simulator that skips idle links: ticking those cycles is exactly
    /// [`LinkTx::skip`] (the network simulator's
    /// `idle_links_skipped_or_ticked_give_the_same_run` test checks it).
    pub fn quiet_cycles(&self, rx: &RxStatus) -> usize {
        let n = self.p.vcs;
        let quiet = rx.state == LinkState::Up
            && self.prev_state == LinkState::Up
            && rx.peer_ctrl.is_none()
            && self.idle()
            && self.out.credit.is_none()
            && self.cur.is_none()
            && !self.rewind
            && !self.flushing
            && self.timer == 0
            && !self.force_ctrl
            && rx.nack_count == self.last_nack
            && rx.urgent == self.last_urgent
            && rx.ack_seq == self.last_ack
            && rx.freed[..n] == self.last_freed[..n];
        if quiet {
            self.p.keepalive.saturating_sub(self.since_ctrl + 1)
        } else {
            0
        }
    }

    /// Advance `cycles` quiet ticks at once (see [`LinkTx::quiet_cycles`]).
    pub fn skip(&mut self, cycles: usize) {
        self.since_ctrl = self.since_ctrl.saturating_add(cycles);
    }

    /// `(last frame acked, next sequence number, frames held)`: what a
    /// bench needs to forge acks for frames never sent.
    pub fn ack_state(&self) -> (u8, u8, usize) {
        (self.acked, self.next_seq, self.retry.frames())
    }

    /// `(flits sent, flits the far end has freed)` on `vc`, mod 256: what a
    /// bench needs to forge credit returns for more flits than were sent.
    pub fn credit_state(&self, vc: usize) -> (u8, u8) {
        (self.sent[vc], self.peer_freed[vc])
    }

    /// A frame is open (being sent, or being closed after a drop).
    pub fn frame_open(&self) -> bool {
        self.frame.is_some()
    }

    /// Credits the far `link_rx` has for `vc`.
    fn credits(&self, vc: usize) -> usize {
        let used = self.sent[vc].wrapping_sub(self.peer_freed[vc]) as usize;
        self.p.rx_buffer_flits.saturating_sub(used)
    }

    fn apply_ctrl(&mut self, c: &Control) {
        if c.ack_seq != self.acked {
            match self.retry.ack(c.ack_seq) {
                Some(_) => {
                    self.acked = c.ack_seq;
                    self.timer = 0;
                }
                None => self.counters.bad_acks += 1,
            }
        }
        if c.nack && self.retry.frames() > 0 && !self.rewind {
            self.rewind = true;
            self.counters.retransmissions += 1;
        }
        for &(vc, freed) in &c.credits {
            let vc = vc as usize;
            if vc >= self.p.vcs {
                self.counters.bad_acks += 1;
                continue;
            }
            let delta = freed.wrapping_sub(self.peer_freed[vc]);
            let used = self.sent[vc].wrapping_sub(self.peer_freed[vc]);
            if delta <= used {
                self.peer_freed[vc] = freed;
            } else {
                self.counters.bad_acks += 1;
            }
        }
    }

    /// One word of closing the open frame into the retry buffer without
    /// sending (after a link drop): the next word of the current flit, or
    /// the trailer.
    fn flush_step(&mut self) {
        if let Some((flit, k)) = self.cur {
            self.cur = (k + 1 < self.p.words_per_flit()).then_some((flit, k + 1));
            self.push_data(flit.data[k]);
        } else {
            self.trailer();
            self.flushing = false;
        }
    }

    fn push_data(&mut self, d: u64) -> PhyWord {
        let w = PhyWord {
            data: d,
            ctrl: false,
        };
        self.retry.push(w);
        if let Some(f) = self.frame.as_mut() {
            f.crc = crc_word(f.crc, d);
        }
        w
    }

    fn trailer(&mut self) -> PhyWord {
        let f = self.frame.take().expect("an open frame");
        let t = Trailer {
            seq: f.seq,
            vc: f.vc,
            head: f.head,
            tails: f.tails,
        };
        let w = PhyWord {
            data: seal(f.crc, t.pack()),
            ctrl: true,
        };
        self.retry.push(w);
        self.retry.close_frame(f.seq);
        self.next_seq = seq_next(self.next_seq);
        self.counters.frames_sent += 1;
        w
    }

    /// Take the front flit of `vc` into the open frame; its first word.
    fn take_flit(&mut self, vc: usize) -> PhyWord {
        let flit = self.queues[vc].pop_front().expect("a queued flit");
        self.out.credit = Some(vc as u8);
        self.sent[vc] = self.sent[vc].wrapping_add(1);
        let f = self.frame.as_mut().expect("an open frame");
        if flit.tail {
            f.tails[f.ntails] = f.n as u8;
            f.ntails += 1;
        }
        f.last_tail = flit.tail;
        f.n += 1;
        if self.p.words_per_flit() > 1 {
            self.cur = Some((flit, 1));
        }
        self.push_data(flit.data[0])
    }

    fn ctrl_due(&self, rx: &RxStatus) -> bool {
        if self.force_ctrl || rx.nack_count != self.last_nack || rx.urgent != self.last_urgent {
            return true;
        }
        let ack = rx.ack_seq != self.last_ack;
        let most = (0..self.p.vcs)
            .map(|v| rx.freed[v].wrapping_sub(self.last_freed[v]) as usize)
            .max()
            .unwrap_or(0);
        (self.since_ctrl >= self.p.ack_interval && (ack || most >= self.p.credit_batch))
            || (self.since_ctrl >= self.p.refresh_interval && (ack || most > 0))
            || self.since_ctrl >= self.p.keepalive
    }

    fn ctrl_word(&mut self, rx: &RxStatus) -> PhyWord {
        let n = self.p.vcs;
        // Most freed since last sent first; ties in rotating order.
        let mut order: Vec<usize> = (0..n).map(|k| (self.slot_rr + k) % n).collect();
        order.sort_by_key(|&v| std::cmp::Reverse(rx.freed[v].wrapping_sub(self.last_freed[v])));
        let a = order[0];
        let b = if n > 1 { order[1] } else { a };
        let c = Control {
            nack: rx.nack_count != self.last_nack,
            ack_seq: rx.ack_seq,
            credits: [(a as u8, rx.freed[a]), (b as u8, rx.freed[b])],
        };
        self.last_ack = rx.ack_seq;
        self.last_freed[a] = rx.freed[a];
        self.last_freed[b] = rx.freed[b];
        self.last_nack = rx.nack_count;
        self.last_urgent = rx.urgent;
        self.force_ctrl = false;
        self.since_ctrl = 0;
        self.slot_rr = (self.slot_rr + 2) % n;
        self.counters.ctrl_sent += 1;
        PhyWord {
            data: seal(FRAME_CRC_INIT, c.pack()),
            ctrl: true,
        }
    }

    /// The word of the next slot while `Up`.
    fn next_word(&mut self, rx: &RxStatus) -> Option<PhyWord> {
        if self.ctrl_due(rx) {
            return Some(self.ctrl_word(rx));
        }
        if self.retry.replaying() {
            self.counters.words_replayed += 1;
            return self.retry.next_replay();
        }
        let wpf = self.p.words_per_flit();
        if let Some((flit, k)) = self.cur {
            self.cur = (k + 1 < wpf).then_some((flit, k + 1));
            return Some(self.push_data(flit.data[k]));
        }
        if let Some(f) = self.frame {
            let vc = f.vc as usize;
            let follows = !self.rewind
                && f.n < self.p.frame_flits
                && f.ntails < TAIL_SLOTS
                && self.credits(vc) > 0
                && self.retry.room() > wpf
                && self.queues[vc]
                    .front()
                    .is_some_and(|x| x.head == f.last_tail);
            return Some(if follows {
                self.take_flit(vc)
            } else {
                self.trailer()
            });
        }
        if self.rewind {
            self.rewind = false;
            self.timer = 0;
            if self.retry.start_replay() {
                self.counters.words_replayed += 1;
                return self.retry.next_replay();
            }
        }
        if self.retry.frames() >= MAX_OUTSTANDING as usize || self.retry.room() <= wpf {
            return None;
        }
        let n = self.p.vcs;
        let vc = (0..n)
            .map(|k| (self.rr + k) % n)
            .find(|&v| !self.queues[v].is_empty() && self.credits(v) > 0)?;
        self.rr = (vc + 1) % n;
        self.frame = Some(OpenFrame {
            seq: self.next_seq,
            vc: vc as u8,
            head: self.queues[vc][0].head,
            n: 0,
            tails: [TAIL_NONE; TAIL_SLOTS],
            ntails: 0,
            last_tail: false,
            crc: FRAME_CRC_INIT,
        });
        Some(self.take_flit(vc))
    }

    /// The clock edge.
    pub fn tick(&mut self, i: &TxInputs) {
        let taken = self.out.word.is_some() && i.ready;
        self.out.credit = None;
        let st = i.rx.state;
        if st != LinkState::Up && self.prev_state == LinkState::Up {
            self.flushing = self.frame.is_some();
            self.out.word = None;
            self.rewind = false;
            self.retry.stop_replay();
        }
        if st == LinkState::Up && self.prev_state != LinkState::Up {
            if self.retry.frames() > 0 || self.flushing {
                self.rewind = true;
                self.counters.retransmissions += 1;
            }
            self.force_ctrl = true;
            self.timer = 0;
            self.out.word = None;
        }
        self.prev_state = st;
        if let Some(c) = i.rx.peer_ctrl {
            self.apply_ctrl(&c);
        }
        self.since_ctrl = self.since_ctrl.saturating_add(1);
        if st == LinkState::Up && self.retry.frames() > 0 && !self.retry.replaying() && !self.rewind
        {
            self.timer += 1;
            if self.timer >= self.p.timeout {
                self.timer = 0;
                self.rewind = true;
                self.counters.timeouts += 1;
                self.counters.retransmissions += 1;
            }
        } else if self.retry.frames() == 0 {
            self.timer = 0;
        }
        if let Some(f) = i.flit {
            let vc = f.vc as usize;
            if vc < self.p.vcs && self.queues[vc].len() < self.p.tx_buffer_flits {
                self.queues[vc].push_back(f);
            } else {
                self.counters.overflows += 1;
            }
        }
        if self.flushing {
            self.flush_step();
            if st == LinkState::Up {
                return;
            }
        }
        if self.out.word.is_some() && !taken {
            return;
        }
        self.out.word = match st {
            LinkState::Down => None,
            LinkState::Training => Some(PhyWord {
                data: seal(FRAME_CRC_INIT, training_fields(i.rx.heard)),
                ctrl: true,
            }),
            LinkState::Up => self.next_word(&i.rx),
        };
    }
}
