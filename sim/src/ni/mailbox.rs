//! Receive mailbox: packetizer messages queued for software, read through
//! the mailbox register page. Full means refuse (the sender is nacked and
//! retries); the mailbox itself never drops a message it accepted.
//!
//! Each message keeps its footer's txid (the sender's slot), which
//! software does not see: the event trace's `MBOX_POP` names the message
//! taken by it ([`super::trace`]).

use crate::packet::coords::Coords;
use std::collections::VecDeque;

/// One received message.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MailboxEntry {
    /// Sender.
    pub src: Coords,
    /// PDID the message carried.
    pub pdid: u16,
    /// Message bytes (1..=mailbox_msg_bytes).
    pub data: Vec<u8>,
}

/// Bounded FIFO of messages.
#[derive(Clone, Debug)]
pub struct Mailbox {
    depth: usize,
    /// The messages, each with its footer's txid.
    q: VecDeque<(MailboxEntry, u16)>,
}

impl Mailbox {
    /// Empty mailbox of `depth` messages.
    pub fn new(depth: usize) -> Self {
        Mailbox {
            depth,
            q: VecDeque::with_capacity(depth),
        }
    }

    /// Room for one more message.
    pub fn has_room(&self) -> bool {
        self.q.len() < self.depth
    }

    /// Queue `e`, which arrived with footer txid `txid` (caller checked
    /// `has_room`).
    pub fn push(&mut self, e: MailboxEntry, txid: u16) {
        debug_assert!(self.has_room());
        self.q.push_back((e, txid));
    }

    /// Oldest message.
    pub fn head(&self) -> Option<&MailboxEntry> {
        self.q.front().map(|(e, _)| e)
    }

    /// Remove the oldest message; with its txid.
    pub fn pop(&mut self) -> Option<(MailboxEntry, u16)> {
        self.q.pop_front()
    }

    /// Messages queued.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// No messages.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Word `i` of the head message as MB_DATA\[i\] reads it: bytes
    /// `4i..4i+4`, little-endian, bytes past the message's length zero.
    pub fn data_word(&self, i: usize) -> u32 {
        let mut b = [0u8; 4];
        if let Some((e, _)) = self.q.front() {
            for (k, x) in b.iter_mut().enumerate() {
                *x = e.data.get(4 * i + k).copied().unwrap_or(0);
            }
        }
        u32::from_le_bytes(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_capacity_and_data_words() {
        let mut m = Mailbox::new(2);
        assert_eq!(m.data_word(0), 0);
        let e = |n: u8| MailboxEntry {
            src: Coords::default(),
            pdid: n as u16,
            data: (1..=n).collect(),
        };
        m.push(e(5), 9);
        m.push(e(6), 10);
        assert!(!m.has_room());
        assert_eq!(m.data_word(0), 0x0403_0201);
        assert_eq!(m.data_word(1), 0x0000_0005, "bytes past the length read 0");
        assert_eq!(m.data_word(7), 0);
        assert_eq!(m.pop(), Some((e(5), 9)));
        assert!(m.has_room());
        assert_eq!(m.head(), Some(&e(6)));
    }
}
