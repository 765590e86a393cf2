//! An in-order network stub joining NI models: the golden reference of a
//! multi-node co-simulation (node pair, many-to-one) without routers.
//!
//! Per destination and message class one FIFO: packets from one source to
//! one destination in one class arrive in the order sent — the ordering the
//! real network provides (deterministic dimension-order routing, FIFO
//! virtual channels, in-order link retransmission) and the receive path
//! relies on. A packet's class is the lane it left by: class 1 for
//! [`Ni::emit_response`], class 0 for [`Ni::emit_request`] (the NI RTL's
//! response lane on `resp_vc` and its request path on `vc`); the receiver
//! is offered it with [`Ni::receive_packet_on`] on that class. Routing uses
//! the raw header bits, as a router does, without checking the ECC.
//!
//! One [`Fabric::step`]: every node, in index order, first retries the
//! packets it holds (below), then emits up to `inject` packets (each time
//! the next response, else the next request); then every destination, in
//! index order, is offered the head of its class-1 queue and then of its
//! class-0 queue, once each. A Busy packet stays at the head (it blocks
//! only its own class at that node).
//!
//! Bounded network ([`Fabric::capacity`]): each destination queue holds at
//! most `capacity` packets (the buffering of the path to that node). A
//! packet that finds its queue full stays at its source, which emits
//! nothing more of that class until it has gone (backpressure). With
//! [`Fabric::set_classes`]`(1)` the network keeps one queue per destination
//! and one output per source for both classes (the NI's classes still
//! decide each packet's arrival class): the one-class network, where the
//! protocol can deadlock (a receive path waiting for its response queue,
//! which drains into a network full of requests waiting for the same at
//! the other end).

use super::ni::{Ni, RxOutcome};
use super::wire::Packet;
use crate::packet::header::{Header, DEST};
use anyhow::{bail, Result};
use std::collections::{HashMap, VecDeque};

/// A packet in the network and the message class it arrives on.
type InFlight = (usize, Packet);

/// Nodes and the queues between them.
pub struct Fabric {
    /// The NIs, addressed by index.
    pub nodes: Vec<Ni>,
    /// Per destination, per network queue (class, or 0 with one class).
    queues: Vec<[VecDeque<InFlight>; 2]>,
    /// Per source, per network queue: a packet emitted that found its
    /// destination queue full, with its destination index.
    held: Vec<[Option<(usize, InFlight)>; 2]>,
    index: HashMap<u32, usize>,
    classes: usize,
    /// Packets emitted per node per step.
    pub inject: usize,
    /// Packets each destination queue holds at most (`None`: unbounded,
    /// the default).
    pub capacity: Option<usize>,
    /// Packets addressed to no node (kept, never dropped silently).
    pub undeliverable: Vec<Packet>,
    /// Every outcome of an offered packet, counted: accepted, refused, rejected, busy.
    pub outcomes: [u64; 4],
}

impl Fabric {
    /// Join `nodes` (distinct coordinates), each injecting one packet per
    /// step, into an unbounded two-class network.
    pub fn new(nodes: Vec<Ni>) -> Result<Self> {
        let mut index = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            if index.insert(n.me().to_bits(), i).is_some() {
                bail!("fabric: two nodes at coordinates {:?}", n.me());
            }
        }
        Ok(Fabric {
            queues: (0..nodes.len()).map(|_| Default::default()).collect(),
            held: (0..nodes.len()).map(|_| Default::default()).collect(),
            nodes,
            index,
            classes: 2,
            inject: 1,
            capacity: None,
            undeliverable: Vec::new(),
            outcomes: [0; 4],
        })
    }

    /// Message classes the network keeps apart: 2 (the default, one queue
    /// per class) or 1 (both classes share the queues; see the module
    /// doc). An error for any other count, or when packets are in flight.
    pub fn set_classes(&mut self, classes: usize) -> Result<()> {
        if !(1..=2).contains(&classes) {
            bail!("fabric: classes = {classes}, must be 1 or 2");
        }
        if self.in_flight() != 0 {
            bail!("fabric: classes changed with packets in flight");
        }
        self.classes = classes;
        Ok(())
    }

    /// Message classes the network keeps apart.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// Put `p` into the network as if a node had emitted it now, on its
    /// type's class (class 0 when the header does not decode). Bypasses
    /// [`Fabric::capacity`].
    pub fn inject_packet(&mut self, p: Packet) {
        let class = Header::decode(p.header_word()).map_or(0, |(h, _)| h.ptype().class());
        self.inject_packet_on(p, class);
    }

    /// Put `p` into the network on message class `class` (0 or 1; a
    /// forged packet may use the other class than its type's). Bypasses
    /// [`Fabric::capacity`].
    pub fn inject_packet_on(&mut self, p: Packet, class: usize) {
        match self.dest_of(&p) {
            Some(d) => {
                let q = self.queue_of(class);
                self.queues[d][q].push_back((class, p));
            }
            None => self.undeliverable.push(p),
        }
    }

    fn dest_of(&self, p: &Packet) -> Option<usize> {
        self.index.get(&(DEST.get(p.header_word()) as u32)).copied()
    }

    /// The network queue of a class.
    fn queue_of(&self, class: usize) -> usize {
        if self.classes == 1 {
            0
        } else {
            class.min(1)
        }
    }

    fn has_room(&self, d: usize, q: usize) -> bool {
        self.capacity.is_none_or(|c| self.queues[d][q].len() < c)
    }

    /// Send `p` (class `class`) from node `src`: into its destination
    /// queue, or held at `src` when that queue is full.
    fn send(&mut self, src: usize, class: usize, p: Packet) {
        let q = self.queue_of(class);
        match self.dest_of(&p) {
            None => self.undeliverable.push(p),
            Some(d) if self.has_room(d, q) => self.queues[d][q].push_back((class, p)),
            Some(d) => self.held[src][q] = Some((d, (class, p))),
        }
    }

    /// One step (see the module doc); `true` when anything moved.
    pub fn step(&mut self) -> bool {
        let mut moved = false;
        for i in 0..self.nodes.len() {
            for q in [1, 0] {
                if let Some((d, f)) = self.held[i][q].take() {
                    if self.has_room(d, q) {
                        self.queues[d][q].push_back(f);
                        moved = true;
                    } else {
                        self.held[i][q] = Some((d, f));
                    }
                }
            }
            for _ in 0..self.inject {
                let free = |c: usize| self.held[i][self.queue_of(c)].is_none();
                let (c1, c0) = (free(1), free(0));
                let n = &mut self.nodes[i];
                let next = match (c1.then(|| n.emit_response()).flatten(), c0) {
                    (Some(p), _) => Some((1, p)),
                    (None, true) => n.emit_request().map(|p| (0, p)),
                    (None, false) => None,
                };
                let Some((class, p)) = next else { break };
                self.send(i, class, p);
                moved = true;
            }
        }
        for d in 0..self.nodes.len() {
            for q in (0..self.classes).rev() {
                let Some((class, p)) = self.queues[d][q].front() else {
                    continue;
                };
                let o = self.nodes[d].receive_packet_on(p, *class);
                let k = match o {
                    RxOutcome::Accepted => 0,
                    RxOutcome::Refused => 1,
                    RxOutcome::Rejected(_) => 2,
                    RxOutcome::Busy => 3,
                };
                self.outcomes[k] += 1;
                if o != RxOutcome::Busy {
                    self.queues[d][q].pop_front();
                    moved = true;
                }
            }
        }
        moved
    }

    /// Packets queued for node `dest`, per network queue (class 0, class
    /// 1; with one class all in the first).
    pub fn queued(&self, dest: usize) -> [usize; 2] {
        [self.queues[dest][0].len(), self.queues[dest][1].len()]
    }

    /// Packets held at their source because their queue was full.
    pub fn held(&self) -> usize {
        self.held.iter().flatten().filter(|h| h.is_some()).count()
    }

    /// Packets in flight (queued, or held at their source).
    pub fn in_flight(&self) -> usize {
        let queued: usize = self.queues.iter().map(|q| q[0].len() + q[1].len()).sum();
        queued + self.held()
    }

    /// Nothing in flight and nothing any node could emit.
    pub fn idle(&self) -> bool {
        self.in_flight() == 0 && self.nodes.iter().all(|n| !n.has_packet())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ni::params::NiParams;
    use crate::packet::coords::Coords;

    #[test]
    fn duplicate_coordinates_are_an_error() {
        let p = NiParams::default();
        let c = Coords::new(1, 0, 0, 0).unwrap();
        let n = || Ni::new(&p, c).unwrap();
        assert!(Fabric::new(vec![n(), n()]).is_err());
    }
}
