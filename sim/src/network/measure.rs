//! Running and measuring: warm-up, window, drain, the report.

use super::scoreboard::Record;
use super::sim::Network;
use super::stats::{ClassAcc, Report};
use std::time::Instant;

impl Network {
    pub(super) fn delivered_packet(&mut self, r: Record) {
        if !r.tagged {
            return;
        }
        self.tagged_live -= 1;
        let t = self.t;
        let hops = self
            .topo
            .hops(r.src as usize / self.locals, r.dst as usize / self.locals);
        let acc = &mut self.acc[r.class as usize];
        acc.latency.push((t - r.created) as u32);
        acc.network_latency.push((t - r.injected) as u32);
        acc.hops += hops as u64;
    }

    /// Run `n` cycles (stops early on deadlock).
    pub fn run_cycles(&mut self, n: u64) {
        for _ in 0..n {
            if self.deadlock.is_some() {
                return;
            }
            self.step();
        }
    }

    /// Stop traffic and run until every packet is delivered; `false` if
    /// `max` cycles pass first or the watchdog fires.
    pub fn drain_all(&mut self, max: u64) -> bool {
        self.stop_traffic();
        for _ in 0..max {
            if self.sb.live() == 0 && self.flits_in_network == 0 {
                return true;
            }
            if self.deadlock.is_some() {
                return false;
            }
            self.step();
        }
        self.sb.live() == 0
    }

    /// Warm-up, measurement window, then drain until every tagged packet is
    /// delivered (traffic continues, untagged) or `drain_max` passes; the report.
    pub fn run(&mut self) -> Report {
        let start = Instant::now();
        let cycles0 = self.t;
        let end = self.p.warmup + self.p.window;
        while self.t < end && self.deadlock.is_none() {
            self.step();
        }
        let limit = end + self.p.drain_max;
        while self.tagged_live > 0 && self.t < limit && self.deadlock.is_none() {
            self.step();
        }
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        self.report((self.t - cycles0) as f64 * self.routers.len() as f64 / secs)
    }

    /// The report of the measurement so far.
    pub fn report(&mut self, router_cycles_per_s: f64) -> Report {
        let (terms, window) = (self.eps.len(), self.p.window);
        let classes = self.p.router.classes;
        let mut total = ClassAcc::default();
        for a in &self.acc[..classes] {
            total.created_packets += a.created_packets;
            total.created_flits += a.created_flits;
            total.refused_packets += a.refused_packets;
            total.accepted_flits += a.accepted_flits;
            total.latency.extend_from_slice(&a.latency);
            total.network_latency.extend_from_slice(&a.network_latency);
            total.hops += a.hops;
        }
        let per_class = (0..classes)
            .map(|c| self.acc[c].report(Some(c), terms, window))
            .collect();
        Report {
            terminals: terms,
            cycles: self.t,
            warmup: self.p.warmup,
            window,
            total: total.report(None, terms, window),
            per_class,
            unfinished: self.tagged_live,
            deadlock: self.deadlock.clone(),
            errors: self.sb.errors.clone(),
            error_count: self.sb.error_count,
            dropped: self
                .routers
                .iter()
                .map(|r| r.counters().dropped_packets.iter().sum::<u64>())
                .sum(),
            router_cycles_per_s,
            links: self
                .links
                .as_ref()
                .map(|l| l.report(window, self.p.router.flit_bits)),
        }
    }

    /// Latencies (creation to tail received) of delivered tagged packets of `class`, in delivery order.
    pub fn tagged_latencies(&self, class: usize) -> &[u32] {
        &self.acc[class].latency
    }
}
