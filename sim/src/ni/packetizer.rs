//! Packetizer (sender side of the mailbox): a channel's message slots.
//!
//! PKT_SEND copies the channel's packetizer window into the lowest free
//! slot and queues the slot for sending. A slot is kept (state `AwaitAck`)
//! after its packet leaves, until the destination acknowledges it:
//! - MailboxAck frees it;
//! - MailboxNack with reason "full" (flags 0) or `PayloadCrc` re-queues it
//!   at the tail of the channel's send queue (the same bytes go again);
//! - MailboxNack with any other reason frees it and reports the message as
//!   denied (channel error MSG_DENIED, counter MB_DENIED).
//!
//! The message's transaction id is its NI-wide slot number
//! `channel * pkt_slots + slot`, so an acknowledgement names its slot.
//!
//! While a slot's packet is still leaving (its tail flit not yet sent; only
//! tracked when the NI model runs with explicit events), an
//! acknowledgement naming it is `Stale`: no receiver answers a packet
//! before its tail, so such an ack is forged, and acting on it would free
//! or re-queue a slot the transmitter is still reading.

use super::errors::RejectReason;
use super::wire::Packet;
use crate::packet::coords::Coords;
use crate::packet::footer::Footer;
use crate::packet::header::{Header, PacketType};
use std::collections::VecDeque;

/// MailboxNack flags value meaning "mailbox full, retry".
pub const NACK_FULL: u8 = 0;

/// MailboxAck flags value (an acknowledgement carries no reason).
pub const ACK_FLAGS: u8 = 0;

/// State of a message slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotState {
    /// Unused.
    Free,
    /// Waiting in the send queue.
    Queued,
    /// Sent, waiting for an ack or nack.
    AwaitAck,
}

#[derive(Clone, Debug)]
struct Slot {
    state: SlotState,
    dest: Coords,
    pdid: u16,
    data: Vec<u8>,
    /// Its packet is leaving: picked, tail not yet sent.
    leaving: bool,
}

/// What an acknowledgement did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckOutcome {
    /// The message was delivered; its slot is free.
    Delivered,
    /// The message is queued again.
    Retried,
    /// The destination refused it for good; its slot is free.
    Denied,
}

/// One channel's packetizer.
#[derive(Clone, Debug)]
pub struct Packetizer {
    base_txid: u16,
    slots: Vec<Slot>,
    queue: VecDeque<usize>,
}

impl Packetizer {
    /// `slots` slots whose txids start at `base_txid`.
    pub fn new(slots: usize, base_txid: u16) -> Self {
        Packetizer {
            base_txid,
            slots: vec![
                Slot {
                    state: SlotState::Free,
                    dest: Coords::default(),
                    pdid: 0,
                    data: Vec::new(),
                    leaving: false,
                };
                slots
            ],
            queue: VecDeque::with_capacity(slots),
        }
    }

    /// Free slots.
    pub fn free(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| s.state == SlotState::Free)
            .count()
    }

    /// Any message queued or awaiting an ack.
    pub fn pending(&self) -> bool {
        self.free() < self.slots.len()
    }

    /// A message is queued for sending.
    pub fn has_queued(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Take the lowest free slot for `data` to `dest`; `false` when none is free.
    pub fn send(&mut self, dest: Coords, pdid: u16, data: &[u8]) -> bool {
        let Some(i) = self.slots.iter().position(|s| s.state == SlotState::Free) else {
            return false;
        };
        let s = &mut self.slots[i];
        s.state = SlotState::Queued;
        s.dest = dest;
        s.pdid = pdid;
        s.data.clear();
        s.data.extend_from_slice(data);
        s.leaving = false;
        self.queue.push_back(i);
        true
    }

    /// The next message packet from `me`, if one is queued.
    pub fn next_packet(&mut self, me: Coords) -> Option<Packet> {
        let i = self.queue.pop_front()?;
        let s = &mut self.slots[i];
        s.state = SlotState::AwaitAck;
        let mut h = Header::new(PacketType::Mailbox, s.dest);
        h.set_pdid(s.pdid).expect("16-bit PDID");
        let mut f = Footer::new(me);
        f.set_first(true).set_last(true);
        f.set_txid(self.base_txid + i as u16)
            .expect("validated: txids fit 14 bits");
        Some(Packet::build(h, f, &s.data))
    }

    /// Mark `slot`'s packet as leaving (picked, tail not yet sent) or left.
    pub fn set_leaving(&mut self, slot: usize, on: bool) {
        if let Some(s) = self.slots.get_mut(slot) {
            s.leaving = on;
        }
    }

    /// Apply an ack (`nack = None`) or nack (`Some(flags)`) for `slot` from
    /// `src` under `pdid`. A slot not awaiting an ack, one whose packet is
    /// still leaving, or an ack from another node or PDID than the
    /// message's, is [`RejectReason::Stale`].
    pub fn acknowledge(
        &mut self,
        slot: usize,
        src: Coords,
        pdid: u16,
        nack: Option<u8>,
    ) -> Result<AckOutcome, RejectReason> {
        let Some(s) = self.slots.get_mut(slot) else {
            return Err(RejectReason::Stale);
        };
        if s.state != SlotState::AwaitAck || s.leaving || s.dest != src || s.pdid != pdid {
            return Err(RejectReason::Stale);
        }
        match nack {
            None => {
                s.state = SlotState::Free;
                Ok(AckOutcome::Delivered)
            }
            Some(f) if f == NACK_FULL || f == RejectReason::PayloadCrc.code() => {
                s.state = SlotState::Queued;
                self.queue.push_back(slot);
                Ok(AckOutcome::Retried)
            }
            Some(_) => {
                s.state = SlotState::Free;
                Ok(AckOutcome::Denied)
            }
        }
    }

    /// State of `slot`.
    pub fn slot_state(&self, slot: usize) -> SlotState {
        self.slots[slot].state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_queue_and_acks() {
        let me = Coords::new(0, 0, 0, 1).unwrap();
        let d = Coords::new(3, 0, 0, 0).unwrap();
        let mut p = Packetizer::new(2, 10);
        assert!(p.send(d, 4, b"hello"));
        assert!(p.send(d, 4, b"world!"));
        assert!(!p.send(d, 4, b"x"), "no free slot");
        assert_eq!(p.free(), 0);
        let a = p.next_packet(me).unwrap();
        let f = Footer::from_bits(a.footer_word()).unwrap();
        assert_eq!(f.txid(), 10);
        assert!(f.first() && f.last());
        let h = Header::from_bits(a.header_word()).unwrap();
        assert_eq!(
            (h.ptype(), h.dest(), h.pdid(), h.size()),
            (PacketType::Mailbox, d, 4, 5)
        );
        assert_eq!(a.payload_bytes(5), b"hello");
        let b = p.next_packet(me).unwrap();
        assert_eq!(Footer::from_bits(b.footer_word()).unwrap().txid(), 11);
        assert!(p.next_packet(me).is_none());
        // Stale: wrong source, wrong PDID, not awaiting.
        assert_eq!(p.acknowledge(0, me, 4, None), Err(RejectReason::Stale));
        assert_eq!(p.acknowledge(0, d, 5, None), Err(RejectReason::Stale));
        assert_eq!(p.acknowledge(7, d, 4, None), Err(RejectReason::Stale));
        // Full: retried with the same bytes.
        assert_eq!(
            p.acknowledge(0, d, 4, Some(NACK_FULL)),
            Ok(AckOutcome::Retried)
        );
        assert_eq!(
            p.acknowledge(0, d, 4, None),
            Err(RejectReason::Stale),
            "queued, not sent"
        );
        assert_eq!(p.next_packet(me).unwrap(), a);
        assert_eq!(p.acknowledge(0, d, 4, None), Ok(AckOutcome::Delivered));
        assert_eq!(
            p.acknowledge(1, d, 4, Some(RejectReason::Pdid.code())),
            Ok(AckOutcome::Denied)
        );
        assert_eq!(p.free(), 2);
        assert!(!p.pending());
    }

    #[test]
    fn an_ack_while_the_packet_is_leaving_is_stale() {
        let me = Coords::new(0, 0, 0, 1).unwrap();
        let d = Coords::new(3, 0, 0, 0).unwrap();
        let mut p = Packetizer::new(1, 0);
        assert!(p.send(d, 4, b"hi"));
        p.next_packet(me).unwrap();
        p.set_leaving(0, true);
        for nack in [None, Some(NACK_FULL), Some(RejectReason::Pdid.code())] {
            assert_eq!(p.acknowledge(0, d, 4, nack), Err(RejectReason::Stale));
        }
        assert_eq!(p.slot_state(0), SlotState::AwaitAck, "untouched");
        p.set_leaving(0, false);
        assert_eq!(p.acknowledge(0, d, 4, None), Ok(AckOutcome::Delivered));
    }
}
