//! One user channel: PDID, error register, descriptor staging and queue,
//! the RDMA engine's transfer in progress, and the packetizer.
//!
//! Per channel, the next packet is: the packetizer's queued message if any
//! (small messages do not wait behind a large transfer), else the next
//! packet of the descriptor at the head of the queue — every packet of an
//! RDMA write in turn, or the single request packet of an RDMA read. A
//! descriptor leaves the queue (its slot frees) when its last packet is
//! emitted. The PDID is captured when a descriptor is queued or a message
//! is sent: a later PDID change does not affect them.

use super::descriptor::{Descriptor, Op, Staging};
use super::memory::{AxiErrKinds, SparseMemory};
use super::packetizer::Packetizer;
use super::rdma_tx::{read_request_packet, ReadRequest, TxStream};
use super::regs::ChError;
use super::wire::Packet;
use crate::packet::coords::Coords;
use crate::packet::header::PacketType;
use std::collections::VecDeque;

/// One channel.
#[derive(Clone, Debug)]
pub struct Channel {
    /// PDID (privileged register).
    pub pdid: u16,
    /// CH_ERR: last error code, 0 = none.
    pub err: u8,
    /// Descriptor staging registers.
    pub staging: Staging,
    /// PKT_DEST (22 bits).
    pub pkt_dest: u32,
    /// Packetizer window bytes.
    pub pkt_window: Vec<u8>,
    /// Packetizer slots.
    pub pkt: Packetizer,
    descs: VecDeque<(Descriptor, u16)>,
    depth: usize,
    active: Option<TxStream>,
}

impl Channel {
    /// Channel with `depth` descriptor slots, `msg_bytes` window bytes and
    /// `pkt_slots` message slots whose txids start at `base_txid`.
    pub fn new(depth: usize, msg_bytes: usize, pkt_slots: usize, base_txid: u16) -> Self {
        Channel {
            pdid: 0,
            err: 0,
            staging: Staging::default(),
            pkt_dest: 0,
            pkt_window: vec![0; msg_bytes],
            pkt: Packetizer::new(pkt_slots, base_txid),
            descs: VecDeque::with_capacity(depth),
            depth,
            active: None,
        }
    }

    fn fail(&mut self, e: ChError) -> Result<(), ChError> {
        self.err = e as u8;
        Err(e)
    }

    /// DOORBELL: queue the staged descriptor, or latch why not.
    pub fn doorbell(&mut self, addr_bits: u32) -> Result<(), ChError> {
        if self.descs.len() >= self.depth {
            return self.fail(ChError::QueueFull);
        }
        match self.staging.descriptor(addr_bits) {
            Ok(d) => {
                self.descs.push_back((d, self.pdid));
                Ok(())
            }
            Err(e) => self.fail(e),
        }
    }

    /// PKT_SEND of `len` bytes: length check first, then a free slot.
    pub fn pkt_send(&mut self, len: u32) -> Result<(), ChError> {
        if len == 0 || len as usize > self.pkt_window.len() {
            return self.fail(ChError::PktBadLen);
        }
        let dest = Coords::from_bits(self.pkt_dest).expect("masked to 22 bits");
        let (pdid, data) = (self.pdid, &self.pkt_window[..len as usize]);
        if !self.pkt.send(dest, pdid, data) {
            return self.fail(ChError::PktFull);
        }
        Ok(())
    }

    /// Descriptors queued (the one in progress included).
    pub fn queued(&self) -> usize {
        self.descs.len()
    }

    /// CH_STATUS.
    pub fn status(&self) -> u32 {
        (self.depth - self.descs.len()) as u32
            | (self.pkt.free() as u32) << 16
            | (!self.descs.is_empty() as u32) << 24
            | (self.pkt.pending() as u32) << 25
    }

    /// Has a packet to send.
    pub fn ready(&self) -> bool {
        self.pkt.has_queued() || !self.descs.is_empty()
    }

    /// The channel's next packet (see the module doc), reading RDMA
    /// payload from `mem` now.
    pub fn next_packet(
        &mut self,
        mem: &SparseMemory,
        me: Coords,
        max_payload: usize,
    ) -> Option<Packet> {
        self.next_packet_checked(mem, me, max_payload)
            .map(|(p, _)| p)
    }

    /// As [`Channel::next_packet`], with the AXI4 error kinds of an RDMA
    /// write packet's payload read ([`TxStream::next_packet_checked`]; 0
    /// for other packets).
    pub fn next_packet_checked(
        &mut self,
        mem: &SparseMemory,
        me: Coords,
        max_payload: usize,
    ) -> Option<(Packet, AxiErrKinds)> {
        if let Some(p) = self.pkt.next_packet(me) {
            return Some((p, 0));
        }
        let &(d, pdid) = self.descs.front()?;
        match d.op {
            Op::Read => {
                self.descs.pop_front();
                let req = ReadRequest {
                    land: d.laddr,
                    len: d.len,
                };
                Some((
                    read_request_packet(me, d.dest, d.raddr, req, pdid, d.txid, d.notify),
                    0,
                ))
            }
            Op::Write => {
                let s = self.active.get_or_insert(TxStream {
                    ptype: PacketType::RdmaWrite,
                    dest: d.dest,
                    pdid,
                    txid: d.txid,
                    notify: d.notify,
                    src_addr: d.laddr,
                    land_addr: d.raddr,
                    remaining: d.len as u64,
                    emitted: 0,
                });
                let p = s.next_packet_checked(mem, me, max_payload);
                if s.done() {
                    self.active = None;
                    self.descs.pop_front();
                }
                Some(p)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ni::regs::DescField;
    use crate::packet::footer::Footer;
    use crate::packet::header::Header;

    fn stage(c: &mut Channel, d: &Descriptor) {
        for (f, v) in d.staging_writes() {
            c.staging.write(f, v);
        }
    }

    #[test]
    fn queue_order_packetizer_first_and_status() {
        let me = Coords::new(0, 0, 0, 0).unwrap();
        let dest = Coords::new(1, 0, 0, 0).unwrap();
        let mem = SparseMemory::new();
        let mut c = Channel::new(2, 64, 1, 0);
        c.pdid = 5;
        let w = Descriptor {
            op: Op::Write,
            laddr: 0,
            raddr: 0x100,
            len: 300,
            dest,
            notify: false,
            txid: 1,
        };
        stage(&mut c, &w);
        c.doorbell(40).unwrap();
        stage(
            &mut c,
            &Descriptor {
                op: Op::Read,
                txid: 2,
                ..w
            },
        );
        c.doorbell(40).unwrap();
        assert_eq!(c.doorbell(40), Err(ChError::QueueFull));
        assert_eq!(c.err, ChError::QueueFull as u8);
        assert_eq!(c.status() & 0xFFFF, 0);
        assert_eq!(c.status() >> 24 & 1, 1);
        c.pdid = 6; // does not affect queued descriptors
        let p1 = c.next_packet(&mem, me, 256).unwrap();
        c.pkt_dest = dest.to_bits();
        c.pkt_send(3).unwrap();
        assert_eq!(c.pkt_send(3), Err(ChError::PktFull));
        assert_eq!(c.pkt_send(65), Err(ChError::PktBadLen));
        let p2 = c.next_packet(&mem, me, 256).unwrap();
        let p3 = c.next_packet(&mem, me, 256).unwrap();
        let p4 = c.next_packet(&mem, me, 256).unwrap();
        assert!(c.next_packet(&mem, me, 256).is_none());
        let t = |p: &Packet| Header::from_bits(p.header_word()).unwrap();
        assert_eq!(
            (t(&p1).ptype(), t(&p1).size(), t(&p1).pdid()),
            (PacketType::RdmaWrite, 256, 5)
        );
        assert_eq!(
            t(&p2).ptype(),
            PacketType::Mailbox,
            "message jumps the RDMA queue"
        );
        assert_eq!(t(&p2).pdid(), 6);
        assert_eq!(t(&p3).size(), 44);
        assert!(Footer::from_bits(p3.footer_word()).unwrap().last());
        assert_eq!(
            (t(&p4).ptype(), t(&p4).pdid()),
            (PacketType::RdmaReadReq, 5)
        );
        assert_eq!(c.status() & 0xFFFF, 2);
        // Bad staging is refused with its code.
        c.staging.write(DescField::Len, 0);
        assert_eq!(c.doorbell(40), Err(ChError::BadLen));
        assert_eq!(c.queued(), 0);
    }
}
