//! Scoreboard: every injected packet is delivered exactly once, intact, to
//! the right terminal, and (optionally) in order within its
//! (source, destination, class) flow.
//!
//! A packet's id travels in the header's destination-virtual-address field;
//! its payload words are a function of (id, flit index), so the receiver
//! checks every flit without storing payloads. A delivered id is removed from
//! the table, so a duplicate is reported as unknown.

use crate::router::harness::payload_word;
use crate::router::header_fields::dva;
use crate::router::Flit;
use std::collections::HashMap;

/// A packet in flight.
#[derive(Clone, Debug)]
pub struct Record {
    pub src: u32,
    pub dst: u32,
    pub class: u8,
    pub flits: u16,
    pub created: u64,
    /// Cycle its head entered the first router (set on injection).
    pub injected: u64,
    pub tagged: bool,
    pub header: u128,
    pub flow_seq: u32,
}

/// Packets in flight and the checks on delivery.
#[derive(Debug, Default)]
pub struct Scoreboard {
    live: HashMap<u64, Record>,
    order_check: bool,
    next_seq: HashMap<(u32, u32, u8), u32>,
    expect_seq: HashMap<(u32, u32, u8), u32>,
    pub errors: Vec<String>,
    pub error_count: u64,
    pub delivered: u64,
}

/// The `i`-th flit of packet `id` with header `header`, `words` 64-bit words, `len` flits.
pub fn packet_flit(id: u64, header: u128, i: usize, len: usize, words: usize, vc: u8) -> Flit {
    let mut f = Flit {
        head: i == 0,
        tail: i + 1 == len,
        vc,
        ..Default::default()
    };
    for w in 0..words {
        f.data[w] = payload_word(id, i, w);
    }
    if words == 1 {
        if i < 2 {
            f.data[0] = (header >> (64 * i)) as u64;
        }
    } else if i == 0 {
        f.data[0] = header as u64;
        f.data[1] = (header >> 64) as u64;
    }
    f
}

impl Scoreboard {
    pub fn new(order_check: bool) -> Self {
        Scoreboard {
            order_check,
            ..Default::default()
        }
    }

    /// Number of packets in flight.
    pub fn live(&self) -> usize {
        self.live.len()
    }

    /// Register a new packet; returns its flow sequence number.
    pub fn add(&mut self, id: u64, mut r: Record) {
        if self.order_check {
            let s = self.next_seq.entry((r.src, r.dst, r.class)).or_insert(0);
            r.flow_seq = *s;
            *s += 1;
        }
        self.live.insert(id, r);
    }

    /// The record of a live packet.
    pub fn get(&self, id: u64) -> Option<&Record> {
        self.live.get(&id)
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut Record> {
        self.live.get_mut(&id)
    }

    pub fn error(&mut self, msg: String) {
        self.error_count += 1;
        if self.errors.len() < 20 {
            self.errors.push(msg);
        }
    }

    /// Identify the packet of a complete header arriving at terminal `at`;
    /// `None` (and an error) if it is unknown, a duplicate, or misdelivered.
    pub fn identify(&mut self, header: u128, at: u32) -> Option<u64> {
        let id = dva(header);
        let Some(r) = self.live.get(&id) else {
            self.error(format!(
                "terminal {at}: unknown or duplicate packet {id} (header {header:#x})"
            ));
            return None;
        };
        if r.header != header {
            let want = r.header;
            self.error(format!(
                "terminal {at}: packet {id} header {header:#x}, sent {want:#x}"
            ));
            return None;
        }
        if r.dst != at {
            let dst = r.dst;
            self.error(format!("packet {id} for terminal {dst} delivered to {at}"));
            return None;
        }
        Some(id)
    }

    /// Remove a delivered packet and check its flow order; returns its record.
    pub fn deliver(&mut self, id: u64) -> Option<Record> {
        let r = self.live.remove(&id)?;
        self.delivered += 1;
        if self.order_check {
            let e = self.expect_seq.entry((r.src, r.dst, r.class)).or_insert(0);
            let want = *e;
            *e = r.flow_seq + 1;
            if r.flow_seq != want {
                self.error(format!(
                    "flow ({} -> {}, class {}): packet {id} is number {} of the flow, expected {want}",
                    r.src, r.dst, r.class, r.flow_seq
                ));
            }
        }
        Some(r)
    }

    /// Ids of live packets (for reports), at most `n`.
    pub fn some_live(&self, n: usize) -> Vec<u64> {
        let mut v: Vec<u64> = self.live.keys().copied().collect();
        v.sort_unstable();
        v.truncate(n);
        v
    }
}
