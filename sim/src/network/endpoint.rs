//! Network-interface abstraction at each terminal.
//!
//! Injection: one source queue per class (unbounded unless limited); one
//! packet at a time on the injection link, one flit per cycle. A packet
//! starts only when its VC (fixed per flow, [`injection_vc`]) has credits for
//! the whole packet, class 1 before class 0; a started packet is never
//! interrupted. The flit the NI decides on during cycle t is on the router's
//! local input during cycle t. Credits arriving from the router during cycle
//! t are usable from cycle t+1.
//!
//! Ejection: flits from the router's local output are consumed the cycle they
//! appear, and each is credited back to the router in that same cycle
//! ("immediate credit return"). Packets may interleave across VCs; each VC
//! reassembles its own packet and checks every flit against the scoreboard.
//!
//! [`injection_vc`]: crate::router::route_compute::injection_vc

use super::scoreboard::{packet_flit, Record, Scoreboard};
use crate::router::params::MAX_VCS;
use crate::router::Flit;
use std::collections::VecDeque;

/// A packet waiting at its source.
#[derive(Clone, Copy, Debug)]
pub struct Queued {
    pub id: u64,
    pub header: u128,
    pub flits: u16,
    pub vc: u8,
    /// A deliberately bad packet ([`Network::send_bad`]): a router drops it,
    /// so its flits are not counted as in the network.
    ///
    /// [`Network::send_bad`]: super::Network::send_bad
    pub bad: bool,
    /// A packet of a real protocol ([`Network::send_raw`]): its flits are
    /// the next entry of the endpoint's raw queue of its class, not a
    /// function of `id` (which is 0).
    ///
    /// [`Network::send_raw`]: super::Network::send_raw
    pub raw: bool,
}

#[derive(Clone, Copy, Debug, Default)]
enum Rx {
    #[default]
    Idle,
    /// 64-bit flits: the low header half.
    FirstHalf(u64),
    In {
        id: u64,
        next: u16,
        len: u16,
    },
    /// Discarding the rest of a packet already reported as wrong.
    Skip,
    /// Collecting a raw packet ([`Endpoint::start_raw`]).
    Raw,
}

/// One terminal's network interface.
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub queues: [VecDeque<Queued>; 2],
    /// The packet being sent, its next flit, its class.
    sending: Option<(Queued, u16, usize)>,
    credits: [u16; MAX_VCS],
    rx: [Rx; MAX_VCS],
    /// Per class: the flits of the raw packets queued, in queue order.
    raw_tx: [VecDeque<Vec<Flit>>; 2],
    /// Per VC: the raw packet being received (empty until one arrives).
    raw_rx: Vec<Vec<Flit>>,
}

impl Endpoint {
    /// An idle interface whose router input buffers hold `credits` flits per VC.
    pub fn new(credits: usize) -> Self {
        Endpoint {
            queues: Default::default(),
            sending: None,
            credits: [credits as u16; MAX_VCS],
            rx: [Rx::Idle; MAX_VCS],
            raw_tx: Default::default(),
            raw_rx: Vec::new(),
        }
    }

    /// Whether the interface has packets to send.
    #[inline]
    pub fn busy(&self) -> bool {
        self.sending.is_some() || !self.queues[0].is_empty() || !self.queues[1].is_empty()
    }

    /// Packets waiting (not yet started) in class `c`.
    pub fn queued(&self, c: usize) -> usize {
        self.queues[c].len()
    }

    /// The flit to inject this cycle, if any, the id of a packet whose head
    /// it is, and whether it belongs to a bad packet.
    #[inline]
    pub fn inject(&mut self, words: usize) -> Option<(Flit, Option<u64>, bool)> {
        if self.sending.is_none() {
            let c = (0..2).rev().find(|&c| {
                self.queues[c]
                    .front()
                    .is_some_and(|q| self.credits[q.vc as usize] >= q.flits)
            })?;
            let q = self.queues[c].pop_front().expect("checked front");
            self.sending = Some((q, 0, c));
        }
        let (q, i, c) = self.sending.as_mut().expect("sending");
        let f = if q.raw {
            self.raw_tx[*c].front().expect("a raw packet's flits")[*i as usize]
        } else {
            packet_flit(q.id, q.header, *i as usize, q.flits as usize, words, q.vc)
        };
        self.credits[q.vc as usize] -= 1;
        *i += 1;
        let head = (*i == 1 && !q.raw).then_some(q.id);
        let bad = q.bad;
        if *i == q.flits {
            if q.raw {
                self.raw_tx[*c].pop_front();
            }
            self.sending = None;
        }
        Some((f, head, bad))
    }

    /// Queue a raw packet (its flits, on their VC) in class `class`.
    pub fn queue_raw(&mut self, flits: Vec<Flit>, class: usize) {
        self.queues[class].push_back(Queued {
            id: 0,
            header: 0,
            flits: flits.len() as u16,
            vc: flits[0].vc,
            bad: false,
            raw: true,
        });
        self.raw_tx[class].push_back(flits);
    }

    /// Whether the packet arriving on `vc` is a raw one being collected.
    #[inline]
    pub fn in_raw(&self, vc: u8) -> bool {
        matches!(self.rx[vc as usize], Rx::Raw)
    }

    /// A raw packet's head flit arrived on its VC (which is between packets).
    pub fn start_raw(&mut self, f: &Flit) {
        if self.raw_rx.is_empty() {
            self.raw_rx = vec![Vec::new(); MAX_VCS];
        }
        self.rx[f.vc as usize] = Rx::Raw;
        self.raw_rx[f.vc as usize].clear();
    }

    /// The next flit of a raw packet; the whole packet once its tail is in.
    pub fn receive_raw(&mut self, f: &Flit) -> Option<Vec<Flit>> {
        let v = f.vc as usize;
        self.raw_rx[v].push(*f);
        if f.tail {
            self.rx[v] = Rx::Idle;
            Some(std::mem::take(&mut self.raw_rx[v]))
        } else {
            None
        }
    }

    /// A credit from the router for `vc`.
    #[inline]
    pub fn credit(&mut self, vc: u8) {
        self.credits[vc as usize] += 1;
    }

    /// Consume an ejected flit at terminal `at`; the record of a packet it completes.
    pub fn receive(
        &mut self,
        f: &Flit,
        words: usize,
        at: u32,
        sb: &mut Scoreboard,
    ) -> Option<Record> {
        let v = f.vc as usize;
        let (id, idx, len) = match self.rx[v] {
            Rx::Raw => {
                sb.error(format!(
                    "terminal {at} vc {v}: raw packet flit offered to the scoreboard"
                ));
                return None;
            }
            Rx::Skip => {
                if f.tail {
                    self.rx[v] = Rx::Idle;
                }
                return None;
            }
            Rx::Idle if !f.head => {
                sb.error(format!(
                    "terminal {at} vc {v}: non-head flit outside a packet: {f:?}"
                ));
                self.rx[v] = if f.tail { Rx::Idle } else { Rx::Skip };
                return None;
            }
            Rx::Idle if words == 1 => {
                self.rx[v] = Rx::FirstHalf(f.data[0]);
                return None;
            }
            Rx::Idle => {
                let Some(id) = sb.identify(f.low128(), at) else {
                    self.rx[v] = if f.tail { Rx::Idle } else { Rx::Skip };
                    return None;
                };
                (id, 0, sb.get(id).expect("identified").flits)
            }
            Rx::FirstHalf(lo) => {
                let Some(id) = sb.identify((f.data[0] as u128) << 64 | lo as u128, at) else {
                    self.rx[v] = if f.tail { Rx::Idle } else { Rx::Skip };
                    return None;
                };
                (id, 1, sb.get(id).expect("identified").flits)
            }
            Rx::In { id, next, len } => (id, next, len),
        };
        // only header flits carry the header: look it up for them alone
        let header_flits = if words == 1 { 2 } else { 1 };
        let header = if (idx as usize) < header_flits {
            sb.get(id).map_or(0, |r| r.header)
        } else {
            0
        };
        let want = packet_flit(id, header, idx as usize, len as usize, words, f.vc);
        if *f != want {
            sb.error(format!(
                "terminal {at}: packet {id} flit {idx}: got {f:?}, want {want:?}"
            ));
            self.rx[v] = if f.tail { Rx::Idle } else { Rx::Skip };
            return None;
        }
        if idx + 1 == len {
            self.rx[v] = Rx::Idle;
            sb.deliver(id)
        } else {
            self.rx[v] = Rx::In {
                id,
                next: idx + 1,
                len,
            };
            None
        }
    }
}
