//! Packet creation: synthetic traffic (geometric inter-arrival times per
//! terminal, so idle terminals cost nothing per cycle) and trace replay.

use super::endpoint::Queued;
use super::scoreboard::Record;
use super::sim::Network;
use crate::packet::header::PacketType;
use crate::rng::Rng;
use crate::router::header_fields::Coords;
use crate::router::route_compute::injection_vc;
use crate::router::HeaderFields;
use std::cmp::Reverse;

impl Network {
    /// Stop creating packets (synthetic and trace).
    pub fn stop_traffic(&mut self) {
        self.generating = false;
    }

    /// Create a packet now from terminal `src` to `dst` with `bytes` payload in `class`.
    pub fn send(&mut self, src: usize, dst: usize, bytes: usize, class: usize) {
        self.create(src, dst, bytes, class);
    }

    pub(super) fn in_window(&self, t: u64) -> bool {
        t >= self.p.warmup && t < self.p.warmup + self.p.window
    }

    fn create(&mut self, src: usize, dst: usize, bytes: usize, class: usize) {
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
            return;
        }
        let id = self.next_id;
        self.next_id += 1;
        let l = self.locals;
        let c = self.topo.coords(dst / l);
        let dest = Coords {
            x: c[0] as u8,
            y: c[1] as u8,
            z: c[2] as u8,
            fpga: (dst % l) as u8,
        };
        let vc = injection_vc(r, class, dest);
        let header = HeaderFields {
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
        .pack();
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
        });
        self.wake_ep(src, self.t);
    }

    pub(super) fn generate(&mut self) {
        let t = self.t;
        while let Some(&Reverse((at, term))) = self.gen.peek() {
            if at > t {
                break;
            }
            self.gen.pop();
            let src = term as usize;
            let dests = self.dests.as_ref().expect("synthetic traffic");
            let dst = dests.dest(src, &mut self.rng);
            let bytes = self.sizes.draw(&mut self.rng);
            let class = usize::from(self.class1 > 0.0 && self.rng.chance(self.class1));
            self.create(src, dst, bytes, class);
            let next = t + geometric(&mut self.rng, self.gen_p);
            self.gen.push(Reverse((next, term)));
        }
        let max = self.p.max_payload();
        while let Some(&e) = self.trace.get(self.trace_pos) {
            if e.cycle > t {
                break;
            }
            self.trace_pos += 1;
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

/// Cycles until the next success of a Bernoulli(p) trial sequence, >= 1.
pub(super) fn geometric(rng: &mut Rng, p: f64) -> u64 {
    if p >= 1.0 {
        return 1;
    }
    let u = ((rng.next_u64() >> 11) as f64 + 1.0) * (1.0 / (1u64 << 53) as f64);
    1 + (u.ln() / (1.0 - p).ln()).floor() as u64
}
