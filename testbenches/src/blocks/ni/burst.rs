//! The many-to-one mailbox burst ([`NiBench::set_mailbox_burst`]): remote
//! senders with up to two messages in flight each, the NI's answers to
//! them, and software reading and popping each message once.

use super::{NiBench, Op};
use exanet_sim::ni::{regs, Packet};
use exanet_sim::packet::coords::Coords;
use exanet_sim::packet::footer::Footer;
use exanet_sim::packet::header::{Header, PacketType};
use exanet_sim::rng::Rng;
use std::collections::VecDeque;

/// A remote node sending mailbox messages in the burst mode: messages in
/// flight (txid, id, bytes) and messages nacked, to send again.
pub(super) struct Sender {
    pub(super) at: Coords,
    pub(super) inflight: Vec<(u16, u32, Vec<u8>)>,
    pub(super) retry: VecDeque<(u32, Vec<u8>)>,
}

/// Many-to-one burst: several senders, each with up to two messages in
/// flight, into the NI's mailbox; software reads and pops slowly.
pub(super) struct MbBurst {
    pub(super) senders: Vec<Sender>,
    /// Messages to create in all.
    pub(super) limit: u64,
    /// PDID of every message (MBOX_CTRL is set to it).
    pub(super) pdid: u16,
    /// A consume read (MB_DATA\[0\]) is outstanding.
    pub(super) reading: bool,
    /// Message ids software has read and popped.
    pub(super) delivered: std::collections::HashSet<u32>,
}

impl NiBench {
    /// Many-to-one mailbox burst: `senders` remote nodes (1..=8), each with
    /// up to two messages in flight, send `limit` messages in all into the
    /// mailbox (resending each one nacked because the mailbox was full);
    /// software only reads the mailbox and pops it, slowly; one phase, no
    /// reset after power-on. Delivery counts are in [`NiCoverage`](super::NiCoverage).
    pub fn set_mailbox_burst(&mut self, senders: usize, limit: u64) {
        let senders = (0..senders.clamp(1, 8) as u32)
            .map(|k| Sender {
                at: Coords::from_bits(0x0_1101 + 0x2_0100 * k).expect("22-bit coordinates"),
                inflight: Vec::new(),
                retry: VecDeque::new(),
            })
            .collect();
        self.burst = Some(MbBurst {
            senders,
            limit,
            pdid: 0,
            reading: false,
            delivered: Default::default(),
        });
    }

    /// The next message of the many-to-one burst, if a sender has one to
    /// send (a nacked message again, or a new one) and a free txid.
    pub(super) fn burst_packet(&mut self, rng: &mut Rng) -> Option<Vec<u128>> {
        let me = self.me;
        let msg_bytes = self.params.ni.mailbox_msg_bytes as u64;
        let created = self.cov.burst_created;
        let b = self.burst.as_mut()?;
        let k = rng.below(b.senders.len() as u64) as usize;
        let pdid = b.pdid;
        let room = created < b.limit;
        let sd = &mut b.senders[k];
        if sd.inflight.len() >= 2 {
            return None;
        }
        let (id, data) = match sd.retry.pop_front() {
            Some(m) => m,
            None if room => {
                // Word 0 names the message: a non-zero id, unique in the run.
                let id = 0x5A00_0000 | (k as u32) << 16 | created as u32;
                let len = 4 + rng.below(msg_bytes - 3);
                let mut data: Vec<u8> = (0..len).map(|_| rng.bits(8) as u8).collect();
                data[..4].copy_from_slice(&id.to_le_bytes());
                self.cov.burst_created += 1;
                (id, data)
            }
            None => return None,
        };
        let txid = if sd.inflight.iter().any(|m| m.0 == 0) {
            1
        } else {
            0
        };
        let mut h = Header::new(PacketType::Mailbox, me);
        h.set_pdid(pdid).expect("16-bit PDID");
        let mut f = Footer::new(sd.at);
        f.set_first(true).set_last(true);
        f.set_txid(txid).expect("14-bit txid");
        let words = Packet::build(h, f, &data).words;
        sd.inflight.push((txid, id, data));
        Some(words)
    }

    /// The NI answered a burst message (a MailboxAck or MailboxNack it emits).
    pub(super) fn burst_answer(&mut self, pk: &Packet, h: &Header) {
        let Some(b) = self.burst.as_mut() else {
            return;
        };
        let f = Footer::from_bits(pk.footer_word()).expect("golden footer");
        let Some(sd) = b.senders.iter_mut().find(|s| s.at == h.dest()) else {
            self.cov.burst_other += 1;
            return;
        };
        let Some(i) = sd.inflight.iter().position(|m| m.0 == f.txid()) else {
            self.cov.burst_other += 1;
            return;
        };
        let (_, id, data) = sd.inflight.remove(i);
        match (h.ptype(), f.flags()) {
            (PacketType::MailboxAck, _) => {}
            (PacketType::MailboxNack, 0) => {
                self.cov.burst_nacks += 1;
                sd.retry.push_back((id, data));
            }
            _ => self.cov.burst_other += 1,
        }
    }

    /// Software's read of `addr` answered `v` (RTL = golden): in the burst
    /// mode, a message's id read (MB_DATA\[0\]); software takes it and pops
    /// it; only this software pops, so the head stays until then.
    pub(super) fn burst_read(&mut self, addr: u32, v: u32) {
        let Some(b) = &mut self.burst else {
            return;
        };
        if addr != regs::MB_PAGE + regs::MB_DATA {
            return;
        }
        b.reading = false;
        if v != 0 {
            if b.delivered.insert(v) {
                self.cov.burst_delivered += 1;
            } else {
                self.cov.burst_dups += 1;
            }
            let user = |a| Op::Read {
                addr: regs::MB_PAGE + a,
                prot: false,
            };
            self.sw.push_front(Op::Write {
                addr: regs::MB_PAGE + regs::MB_POP,
                data: v,
                prot: false,
            });
            self.sw.push_front(user(regs::MB_LEN));
            self.sw.push_front(user(regs::MB_SRC));
        }
    }

    /// One software action of the burst mode: read the head message's
    /// first word (its id), or wait; the pop follows only when a message
    /// was there ([`NiBench::burst_read`]).
    pub(super) fn burst_software(&mut self, rng: &mut Rng) {
        let Some(b) = &mut self.burst else {
            return;
        };
        if !b.reading && rng.chance(0.5) {
            b.reading = true;
            self.sw.push_back(Op::Read {
                addr: regs::MB_PAGE + regs::MB_DATA,
                prot: false,
            });
        } else {
            self.sw.push_back(Op::Wait(20 + rng.below(100) as u32));
        }
    }
}
