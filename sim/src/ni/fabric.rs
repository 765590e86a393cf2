//! An in-order network stub joining NI models: the golden reference of a
//! multi-node co-simulation (node pair, many-to-one) without routers.
//!
//! Per destination and priority class (`ptype[4]`) one FIFO: packets from
//! one source to one destination in one class arrive in the order sent —
//! the ordering the real network provides (deterministic dimension-order
//! routing, FIFO virtual channels, in-order link retransmission) and the
//! receive path relies on. Routing uses the raw header bits, as a router
//! does, without checking the ECC.
//!
//! One [`Fabric::step`]: every node, in index order, emits up to `inject`
//! packets; then every destination, in index order, is offered the head of
//! its class-1 queue and then of its class-0 queue, once each. A Busy
//! packet stays at the head (it blocks only its own class at that node).

use super::ni::{Ni, RxOutcome};
use super::wire::Packet;
use crate::packet::header::{DEST, PTYPE};
use anyhow::{bail, Result};
use std::collections::{HashMap, VecDeque};

/// Nodes and the queues between them.
pub struct Fabric {
    /// The NIs, addressed by index.
    pub nodes: Vec<Ni>,
    queues: Vec<[VecDeque<Packet>; 2]>,
    index: HashMap<u32, usize>,
    /// Packets emitted per node per step.
    pub inject: usize,
    /// Packets addressed to no node (kept, never dropped silently).
    pub undeliverable: Vec<Packet>,
    /// Every outcome of an offered packet, counted: accepted, refused, rejected, busy.
    pub outcomes: [u64; 4],
}

impl Fabric {
    /// Join `nodes` (distinct coordinates), each injecting one packet per step.
    pub fn new(nodes: Vec<Ni>) -> Result<Self> {
        let mut index = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            if index.insert(n.me().to_bits(), i).is_some() {
                bail!("fabric: two nodes at coordinates {:?}", n.me());
            }
        }
        Ok(Fabric {
            queues: (0..nodes.len()).map(|_| Default::default()).collect(),
            nodes,
            index,
            inject: 1,
            undeliverable: Vec::new(),
            outcomes: [0; 4],
        })
    }

    /// Put `p` into the network as if a node had emitted it now.
    pub fn inject_packet(&mut self, p: Packet) {
        let h = p.header_word();
        let dest = DEST.get(h) as u32;
        let class = (PTYPE.get(h) >> 4 & 1) as usize;
        match self.index.get(&dest) {
            Some(&d) => self.queues[d][class].push_back(p),
            None => self.undeliverable.push(p),
        }
    }

    /// One step (see the module doc); `true` when anything moved.
    pub fn step(&mut self) -> bool {
        let mut moved = false;
        for i in 0..self.nodes.len() {
            for _ in 0..self.inject {
                match self.nodes[i].emit_packet() {
                    Some(p) => {
                        self.inject_packet(p);
                        moved = true;
                    }
                    None => break,
                }
            }
        }
        for d in 0..self.nodes.len() {
            for class in [1, 0] {
                let Some(p) = self.queues[d][class].front() else {
                    continue;
                };
                let o = self.nodes[d].receive_packet(p);
                let k = match o {
                    RxOutcome::Accepted => 0,
                    RxOutcome::Refused => 1,
                    RxOutcome::Rejected(_) => 2,
                    RxOutcome::Busy => 3,
                };
                self.outcomes[k] += 1;
                if o != RxOutcome::Busy {
                    self.queues[d][class].pop_front();
                    moved = true;
                }
            }
        }
        moved
    }

    /// Packets in flight.
    pub fn in_flight(&self) -> usize {
        self.queues.iter().map(|q| q[0].len() + q[1].len()).sum()
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
