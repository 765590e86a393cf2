//! Measurement: offered and accepted load, latency distribution, hops, per class.

use serde::Serialize;

/// Latency summary in cycles.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Latency {
    pub avg: f64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

impl Latency {
    /// Summary of `v` (sorted in place); zeros when empty.
    pub fn of(v: &mut [u32]) -> Self {
        if v.is_empty() {
            return Latency::default();
        }
        v.sort_unstable();
        let q = |f: f64| v[((v.len() as f64 * f).ceil() as usize).clamp(1, v.len()) - 1] as u64;
        Latency {
            avg: v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64,
            p50: q(0.50),
            p99: q(0.99),
            max: *v.last().unwrap() as u64,
        }
    }
}

/// Accumulators of one class.
#[derive(Clone, Debug, Default)]
pub struct ClassAcc {
    pub created_packets: u64,
    pub created_flits: u64,
    pub refused_packets: u64,
    pub accepted_flits: u64,
    pub latency: Vec<u32>,
    pub network_latency: Vec<u32>,
    pub hops: u64,
}

/// Figures of one class over the measurement window.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ClassReport {
    /// The class, `None` for all classes together.
    pub class: Option<usize>,
    /// Flits of packets created in the window, per terminal per cycle.
    pub offered: f64,
    /// Flits received in the window, per terminal per cycle.
    pub accepted: f64,
    /// Tagged packets delivered.
    pub packets: u64,
    /// Packets refused at a full source queue during the window.
    pub refused: u64,
    /// Creation to tail received, cycles (includes source queueing).
    pub latency: Latency,
    /// Head injected into the first router to tail received, cycles.
    pub network_latency: Latency,
    /// Average router-to-router hops.
    pub hops: f64,
}

impl ClassAcc {
    pub fn report(&mut self, class: Option<usize>, terminals: usize, window: u64) -> ClassReport {
        let norm = (terminals as u64 * window) as f64;
        let packets = self.latency.len() as u64;
        ClassReport {
            class,
            offered: self.created_flits as f64 / norm,
            accepted: self.accepted_flits as f64 / norm,
            packets,
            refused: self.refused_packets,
            latency: Latency::of(&mut self.latency),
            network_latency: Latency::of(&mut self.network_latency),
            hops: if packets == 0 {
                0.0
            } else {
                self.hops as f64 / packets as f64
            },
        }
    }
}

/// A channel holding flits when the watchdog fired.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlockedChannel {
    /// Router coordinates.
    pub router: [usize; 3],
    /// Input port name and VC holding the flits.
    pub input: String,
    pub vc: usize,
    pub flits: usize,
    /// Output port and VC it waits for (if its route is known), with that VC's credits and busy bit.
    pub wants: Option<(String, usize, u16, bool)>,
}

/// Deadlock report of the watchdog.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Deadlock {
    pub cycle: u64,
    pub flits_in_network: u64,
    /// Cycles since the last flit moved.
    pub stalled_for: u64,
    /// Up to 64 blocked channels.
    pub blocked: Vec<BlockedChannel>,
}

/// The result of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub terminals: usize,
    pub cycles: u64,
    pub warmup: u64,
    pub window: u64,
    /// All classes together.
    pub total: ClassReport,
    pub per_class: Vec<ClassReport>,
    /// Tagged packets not delivered by the end of the drain.
    pub unfinished: u64,
    pub deadlock: Option<Deadlock>,
    /// Scoreboard errors (first 20) and their count.
    pub errors: Vec<String>,
    pub error_count: u64,
    /// Packets dropped by routers (bad packets; zero for the simulator's own traffic).
    pub dropped: u64,
    /// Router-cycles simulated per wall-clock second (all routers, idle ones included).
    pub router_cycles_per_s: f64,
    /// The framed links' figures (`None` with ideal wires).
    pub links: Option<super::links::LinkReport>,
}

impl Report {
    /// Whether the run is clean: no deadlock, no scoreboard error, nothing unfinished or dropped.
    pub fn clean(&self) -> bool {
        self.deadlock.is_none()
            && self.error_count == 0
            && self.unfinished == 0
            && self.dropped == 0
            && self
                .links
                .as_ref()
                .is_none_or(|l| l.counters.overflows == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let mut v: Vec<u32> = (1..=100).rev().collect();
        let l = Latency::of(&mut v);
        assert_eq!((l.p50, l.p99, l.max), (50, 99, 100));
        assert!((l.avg - 50.5).abs() < 1e-9);
        assert_eq!(Latency::of(&mut []), Latency::default());
    }
}
