//! Packet creation: synthetic traffic (geometric inter-arrival times per
//! terminal, so idle terminals cost nothing per cycle) and trace replay.

use super::endpoint::Queued;
use super::params::{NetworkParams, Workload};
use super::scoreboard::Record;
use super::sim::Network;
use crate::packet::header::PacketType;
use crate::rng::Rng;
use crate::router::header_fields::Coords;
use crate::router::route_compute::injection_vc;
use crate::router::HeaderFields;
use crate::topology::Topology;
use crate::traffic::{Destinations, PacketSizes, TraceEvent};
use anyhow::Result;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The traffic source: when and what each terminal sends next (synthetic
/// traffic or a trace), and the numbering of packets.
pub(super) struct Source {
    /// Next creation time per terminal (synthetic traffic), earliest first.
    pub(super) gen: BinaryHeap<Reverse<(u64, u32)>>,
    /// Probability a terminal creates a packet in a cycle (synthetic).
    pub(super) gen_p: f64,
    /// Trace events in time order, and the next one to replay.
    pub(super) trace: Vec<TraceEvent>,
    pub(super) trace_pos: usize,
    /// Destination pattern (synthetic traffic).
    pub(super) dests: Option<Destinations>,
    /// Payload sizes (synthetic traffic).
    pub(super) sizes: PacketSizes,
    /// Share of packets in class 1.
    pub(super) class1: f64,
    pub(super) rng: Rng,
    /// Id of the next packet (0 is never used).
    pub(super) next_id: u64,
    /// Whether packets are still being created.
    pub(super) generating: bool,
    /// The QoS mix's streams; a `gen` entry's terminal carries its stream
    /// number (1, 2, ...) above [`STREAM_SHIFT`] (0 = the synthetic stream).
    pub(super) streams: Vec<StreamGen>,
}

/// Bit of a `gen` entry's terminal field where the stream number starts.
const STREAM_SHIFT: u32 = 24;

/// One stream of the QoS mix.
pub(super) struct StreamGen {
    dests: Destinations,
    gen_p: f64,
    bytes: usize,
    class: usize,
}

impl Source {
    /// The source of `p`'s workload on `topo` (`terminals` of them);
    /// trace events naming a terminal that does not exist are refused.
    pub(super) fn new(p: &NetworkParams, topo: &Topology, terminals: usize) -> Result<Source> {
        let r = &p.router;
        let mut rng = Rng::new(p.seed);
        let (dests, sizes, class1, gen_p, trace) = match &p.workload {
            Workload::Synthetic {
                pattern,
                rate,
                sizes,
                class1_fraction,
            } => {
                let mean = sizes.mean_flits(|b| r.packet_flits(b));
                (
                    Some(Destinations::new(pattern, topo)?),
                    sizes.clone(),
                    *class1_fraction,
                    rate / mean,
                    Vec::new(),
                )
            }
            Workload::Trace { events } => {
                if let Some(e) = events
                    .iter()
                    .find(|e| e.src >= terminals || e.dst >= terminals)
                {
                    anyhow::bail!(
                        "trace event {e:?}: terminal out of range (this network has {terminals})"
                    );
                }
                let mut ev = events.clone();
                ev.sort_by_key(|e| e.cycle);
                (None, PacketSizes::default(), 0.0, 0.0, ev)
            }
            Workload::QosMix { .. } => (None, PacketSizes::default(), 0.0, 0.0, Vec::new()),
        };
        let mut gen = BinaryHeap::new();
        if gen_p > 0.0 {
            for term in 0..terminals {
                gen.push(Reverse((geometric(&mut rng, gen_p) - 1, term as u32)));
            }
        }
        let mut streams = Vec::new();
        if let Workload::QosMix { storage, mpi } = &p.workload {
            anyhow::ensure!(
                terminals < 1 << STREAM_SHIFT,
                "{terminals} terminals: too many for the QoS mix"
            );
            for s in [storage, mpi] {
                let gen_p = s.rate / r.packet_flits(s.bytes) as f64;
                streams.push(StreamGen {
                    dests: Destinations::new(&s.pattern, topo)?,
                    gen_p,
                    bytes: s.bytes,
                    class: s.class,
                });
                if gen_p > 0.0 {
                    let tag = (streams.len() as u32) << STREAM_SHIFT;
                    for term in 0..terminals {
                        gen.push(Reverse((geometric(&mut rng, gen_p) - 1, tag | term as u32)));
                    }
                }
            }
        }
        Ok(Source {
            gen,
            gen_p,
            trace,
            trace_pos: 0,
            dests,
            sizes,
            class1,
            rng,
            next_id: 1,
            generating: true,
            streams,
        })
    }
}

impl Network {
    /// Stop creating packets (synthetic and trace).
    pub fn stop_traffic(&mut self) {
        self.src.generating = false;
    }

    /// Create a packet now from terminal `src` to `dst` with `bytes` payload in
    /// `class`; its id, or `None` if the source queue was full.
    pub fn send(&mut self, src: usize, dst: usize, bytes: usize, class: usize) -> Option<u64> {
        self.create(src, dst, bytes, class)
    }

    /// Queue a packet whose header `fault` spoils (for co-simulation of the
    /// routers' bad-packet handling): like [`Network::send`], but the packet
    /// is not entered in the scoreboard (delivering it anywhere is an error)
    /// and its flits are not counted as in the network (a router drops it).
    /// `None` if the source queue was full.
    pub fn send_bad(
        &mut self,
        src: usize,
        dst: usize,
        bytes: usize,
        class: usize,
        fault: HeaderFault,
    ) -> Option<u64> {
        let limit = self.p.source_queue_limit;
        if limit > 0 && self.eps[src].queued(class) >= limit {
            return None;
        }
        let id = self.src.next_id;
        self.src.next_id += 1;
        let mut dest = self.dest_coords(dst);
        if let HeaderFault::Dest(d) = fault {
            dest = d;
        }
        let vc = injection_vc(&self.p.router, class, dest);
        let mut header = self.header(id, dest, bytes, class, vc);
        if let HeaderFault::FlipBit(b) = fault {
            header ^= 1u128 << (b % 128);
        }
        self.eps[src].queues[class].push_back(Queued {
            id,
            header,
            flits: self.p.router.packet_flits(bytes) as u16,
            vc,
            bad: true,
            raw: false,
        });
        self.wakeups.endpoint(src, self.t);
        Some(id)
    }

    /// The coordinates of terminal `dst` (fpga = its local port).
    pub(super) fn src_dest_coords(&self, dst: usize) -> Coords {
        self.dest_coords(dst)
    }

    fn dest_coords(&self, dst: usize) -> Coords {
        let l = self.locals;
        let c = self.topo.coords(dst / l);
        Coords {
            x: c[0] as u8,
            y: c[1] as u8,
            z: c[2] as u8,
            fpga: (dst % l) as u8,
        }
    }

    fn header(&self, id: u64, dest: Coords, bytes: usize, class: usize, vc: u8) -> u128 {
        HeaderFields {
            dest,
            dva: id,
            size: bytes as u16,
            // a request type in class 0, a response type in class 1 (the class is the type's top bit)
            ptype: if class == 1 {
                PacketType::Ack
            } else {
                PacketType::RdmaWrite
            }
            .code(),
            vc,
            ..Default::default()
        }
        .pack()
    }

    pub(super) fn in_window(&self, t: u64) -> bool {
        t >= self.p.warmup && t < self.p.warmup + self.p.window
    }

    fn create(&mut self, src: usize, dst: usize, bytes: usize, class: usize) -> Option<u64> {
        let r = &self.p.router;
        let flits = r.packet_flits(bytes);
        let tagged = self.in_window(self.t);
        let acc = &mut self.acc[class];
        if tagged {
            acc.created_packets += 1;
            acc.created_flits += flits as u64;
        }
        let limit = self.p.source_queue_limit;
        if limit > 0 && self.eps[src].queued(class) >= limit {
            if tagged {
                acc.refused_packets += 1;
            }
            return None;
        }
        let id = self.src.next_id;
        self.src.next_id += 1;
        let dest = self.dest_coords(dst);
        let vc = injection_vc(r, class, dest);
        let header = self.header(id, dest, bytes, class, vc);
        self.sb.add(
            id,
            Record {
                src: src as u32,
                dst: dst as u32,
                class: class as u8,
                flits: flits as u16,
                created: self.t,
                injected: 0,
                tagged,
                header,
                flow_seq: 0,
            },
        );
        if tagged {
            self.tagged_live += 1;
        }
        self.eps[src].queues[class].push_back(Queued {
            id,
            header,
            flits: flits as u16,
            vc,
            bad: false,
            raw: false,
        });
        self.wakeups.endpoint(src, self.t);
        Some(id)
    }

    pub(super) fn generate(&mut self) {
        let t = self.t;
        while let Some(&Reverse((at, term))) = self.src.gen.peek() {
            if at > t {
                break;
            }
            self.src.gen.pop();
            let stream = (term >> STREAM_SHIFT) as usize;
            if stream > 0 {
                let src = (term & ((1 << STREAM_SHIFT) - 1)) as usize;
                let s = &self.src.streams[stream - 1];
                let (bytes, class, gen_p) = (s.bytes, s.class, s.gen_p);
                let dst = s.dests.dest(src, &mut self.src.rng);
                self.create(src, dst, bytes, class);
                let next = t + geometric(&mut self.src.rng, gen_p);
                self.src.gen.push(Reverse((next, term)));
                continue;
            }
            let src = term as usize;
            let dests = self.src.dests.as_ref().expect("synthetic traffic");
            let dst = dests.dest(src, &mut self.src.rng);
            let bytes = self.src.sizes.draw(&mut self.src.rng);
            let class = usize::from(self.src.class1 > 0.0 && self.src.rng.chance(self.src.class1));
            self.create(src, dst, bytes, class);
            let next = t + geometric(&mut self.src.rng, self.src.gen_p);
            self.src.gen.push(Reverse((next, term)));
        }
        let max = self.p.max_payload();
        while let Some(&e) = self.src.trace.get(self.src.trace_pos) {
            if e.cycle > t {
                break;
            }
            self.src.trace_pos += 1;
            let mut left = e.bytes;
            loop {
                let b = left.min(max);
                self.create(e.src, e.dst, b, 0);
                left -= b;
                if left == 0 {
                    break;
                }
            }
        }
    }
}

/// How [`Network::send_bad`] spoils a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderFault {
    /// Flip header bit `b` (0..=119 are the protected bits and the SECDED
    /// check byte: any one flip is detected).
    FlipBit(u32),
    /// Replace the destination (e.g. coordinates outside the network, or an
    /// `fpga` at or above the local ports), with a valid check byte.
    Dest(Coords),
}

/// Cycles until the next success of a Bernoulli(p) trial sequence, >= 1.
pub(super) fn geometric(rng: &mut Rng, p: f64) -> u64 {
    if p >= 1.0 {
        return 1;
    }
    let u = ((rng.next_u64() >> 11) as f64 + 1.0) * (1.0 / (1u64 << 53) as f64);
    1 + (u.ln() / (1.0 - p).ln()).floor() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::{NetworkParams, Workload};
    use crate::router::RouterParams;
    use crate::topology::Topology;

    /// A good and two bad packets from terminal 0 to 3 of a 2x2 torus: the
    /// recorded local-port traffic shows every flit injected, only the good
    /// packet ejected with a credit back, both bad ones dropped, and the
    /// network quiet with nothing counted in flight.
    #[test]
    fn bad_packets_are_dropped_and_local_io_records_the_local_ports() {
        let p = NetworkParams {
            router: RouterParams {
                topology: Topology::new([2, 2, 1], [true; 3], 1).unwrap(),
                ..Default::default()
            },
            workload: Workload::Trace { events: Vec::new() },
            ..Default::default()
        };
        let mut net = Network::new(&p).unwrap();
        net.record_local_io(true);
        assert!(net.quiet());
        let flits = p.router.packet_flits(64) as u64;
        assert!(net.send(0, 3, 64, 0).is_some());
        let dest = Coords {
            x: 5,
            ..Default::default()
        };
        assert!(net.send_bad(0, 3, 64, 1, HeaderFault::Dest(dest)).is_some());
        assert!(net.send_bad(0, 3, 64, 0, HeaderFault::FlipBit(7)).is_some());
        assert!(!net.quiet());
        let (mut injected, mut ejected, mut credits) = (0, 0, 0);
        for _ in 0..500 {
            net.step();
            let io = net.local_io();
            assert_eq!(io.len(), 4);
            injected += io[0].to_router.is_some() as u64;
            ejected += io[3].from_router.is_some() as u64;
            credits += io.iter().filter(|x| x.credit_from_router.is_some()).count() as u64;
            assert!(io[1].from_router.is_none() && io[2].from_router.is_none());
            if net.quiet() {
                break;
            }
        }
        assert!(net.quiet());
        assert_eq!((injected, ejected, credits), (3 * flits, flits, 3 * flits));
        assert_eq!(net.delivered(), 1);
        assert_eq!(net.flits_in_network(), 0);
        assert_eq!(net.errors().1, 0);
        let dropped: u64 = net
            .routers()
            .iter()
            .map(|r| r.counters().dropped_packets.iter().sum::<u64>())
            .sum();
        assert_eq!(dropped, 2);
        net.record_local_io(false);
        net.step();
        assert!(net.local_io().is_empty());
    }
}
