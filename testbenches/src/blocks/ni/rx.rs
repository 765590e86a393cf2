//! The receive agent's state: a router local port sending flits into the
//! NI (one credit pool per message class), the packets sent and awaiting
//! their decision, the credits owed back, and the memory's AXI4 write
//! slave.

use super::agents::AxiWriteSlave;
use exanet_sim::ni::Packet;
use exanet_sim::packet::coords::Coords;
use exanet_sim::rng::Rng;
use std::collections::VecDeque;

/// A packet sent into the NI, awaiting its decision: the packet, its VC,
/// its number in the order of arrival (tails).
pub(super) struct SentPacket {
    pub(super) pkt: Packet,
    pub(super) vc: u8,
    pub(super) seq: u64,
}

/// The receive agent: a router local port sending flits into the NI, and
/// the memory's AXI4 write slave.
pub(super) struct Rx {
    /// Landing area: window 0 covers `[land, land + REGION)`; the next
    /// REGION is outside it. Neither overlaps a source region.
    pub(super) land: u64,
    /// PDID window 0 is set up with.
    pub(super) pdid: u16,
    /// VCs per message class: VC `v` is of class `v / vcs`.
    pub(super) vcs: usize,
    /// Per class: credits of the NI's receive ring (its size, and what the
    /// agent holds); a packet starts on a class only with `pkt` (its
    /// largest packet) of that class's credits (virtual cut-through).
    pub(super) buffer: [usize; 2],
    pub(super) pkt: usize,
    pub(super) credits: [usize; 2],
    /// Packet made, waiting for credits of its class: words, VC.
    pub(super) next: Option<(Vec<u128>, u8)>,
    /// Packet being sent: words, next flit, VC.
    pub(super) sending: Option<(Vec<u128>, usize, u8)>,
    /// A flit is on `in_*` this cycle.
    pub(super) flit_now: bool,
    /// Per class of the arrival VC: sent, awaiting `rx_commit`, oldest first.
    pub(super) sent: [VecDeque<SentPacket>; 2],
    /// Packets sent whole so far (numbers their arrival order).
    pub(super) arrivals: u64,
    /// A class-0 packet found Busy is still undecided.
    pub(super) busy0: bool,
    /// The class whose Busy packet the golden model confirmed last (asked
    /// again when another class is Busy, or the golden model changed).
    pub(super) busy_checked: Option<usize>,
    /// Per class: committed, credits owed: VC, flits.
    pub(super) owed: [VecDeque<(u8, usize)>; 2],
    /// The memory's AXI4 write slave (times counted in the phase).
    pub(super) wr: AxiWriteSlave,
    pub(super) wait_commit: u64,
    pub(super) load: f64,
    /// The NI's messages (emitted, not yet acknowledged) the agent may
    /// answer: destination, PDID, txid.
    pub(super) outstanding: Vec<(Coords, u16, u16)>,
    /// (src, txid) pool of data packets: repeats exercise the
    /// damaged-transfer table.
    pub(super) keys: Vec<(Coords, u16)>,
    /// Mailbox senders of the general mode.
    pub(super) senders: Vec<Coords>,
    /// Consecutive cycles the receive path was Busy.
    pub(super) busy_run: u64,
    /// Read requests still to send back to back.
    pub(super) read_storm: u64,
    /// Golden writes not yet landed (B), oldest first: whether each posts
    /// a completion when it lands.
    pub(super) landing: VecDeque<bool>,
    /// A completion's write was decided: software may poll CQ_COUNT.
    pub(super) poll_landing: bool,
    /// The NI's messages picked whose tail has not left: destination,
    /// PDID, txid.
    pub(super) sending_msgs: Vec<(Coords, u16, u16)>,
    /// A message just picked, to acknowledge at once (while it is sent),
    /// when `early_go` (every second message picked: `early_coin`).
    pub(super) early: Option<(Coords, u16, u16)>,
    pub(super) early_go: bool,
    pub(super) early_coin: bool,
    /// Header bits flipped so far: the walk's position (see
    /// `NiBench::flip_header_bit`; kept through reset pulses).
    pub(super) hdr_walk: u64,
}

impl Rx {
    pub(super) fn new(land: u64, vcs: usize, buffer: [usize; 2], pkt: usize) -> Rx {
        let c = |x: u32| Coords::from_bits(x).expect("22-bit coordinates");
        Rx {
            outstanding: Vec::new(),
            keys: (0..6)
                .map(|k| (c(0x1_0203 + 0x111 * (k / 3)), 40 + (k % 3) as u16))
                .collect(),
            senders: (0..4).map(|k| c(0x2_0A01 + 0x1010 * k)).collect(),
            busy_run: 0,
            read_storm: 0,
            landing: VecDeque::new(),
            poll_landing: false,
            sending_msgs: Vec::new(),
            early: None,
            early_go: false,
            early_coin: false,
            hdr_walk: 0,
            land,
            pdid: 0,
            vcs,
            buffer,
            pkt,
            credits: buffer,
            next: None,
            sending: None,
            flit_now: false,
            sent: Default::default(),
            arrivals: 0,
            busy0: false,
            busy_checked: None,
            owed: Default::default(),
            wr: AxiWriteSlave::new(),
            wait_commit: 0,
            load: 0.05,
        }
    }

    pub(super) fn idle(&self) -> bool {
        self.next.is_none()
            && self.sending.is_none()
            && self.sent.iter().all(|q| q.is_empty())
            && self.owed.iter().all(|q| q.is_empty())
            && self.wr.idle()
            && self.credits == self.buffer
            && self.outstanding.is_empty()
    }

    /// No packet awaits its decision.
    pub(super) fn none_sent(&self) -> bool {
        self.sent.iter().all(|q| q.is_empty())
    }

    /// Whether a packet of `class` may start (no packet being sent, the
    /// class's pool holds a largest packet).
    pub(super) fn may_start(&self, class: usize) -> bool {
        self.sending.is_none() && self.credits[class] >= self.pkt
    }

    /// A random VC of `class`.
    pub(super) fn vc_of(&self, class: usize, rng: &mut Rng) -> u8 {
        (class * self.vcs + rng.below(self.vcs as u64) as usize) as u8
    }

    /// The class of VC `vc`.
    pub(super) fn class_of(&self, vc: u64) -> usize {
        vc as usize / self.vcs
    }
}
