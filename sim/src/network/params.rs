//! Parameters of a network simulation.

use super::links::FramedLinks;
use crate::router::RouterParams;
use crate::traffic::{PacketSizes, Pattern, TraceEvent};
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Where packets come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Workload {
    /// Bernoulli injection at `rate` flits/terminal/cycle with a destination pattern.
    Synthetic {
        pattern: Pattern,
        /// Offered load in flits per terminal per cycle (0..=1).
        rate: f64,
        sizes: PacketSizes,
        /// Probability that a packet is in class 1 (high priority), when there are 2 classes.
        class1_fraction: f64,
    },
    /// Replay of parsed trace events (class 0).
    Trace {
        #[serde(skip)]
        events: Vec<TraceEvent>,
    },
    /// The QoS mix: a storage-like and an MPI-like stream, independent
    /// Bernoulli processes per terminal, each on its own priority class.
    QosMix {
        /// Large packets, bandwidth-hungry.
        storage: Stream,
        /// Small packets, latency-bound.
        mpi: Stream,
    },
}

/// One stream of a [`Workload::QosMix`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stream {
    /// Destinations.
    pub pattern: Pattern,
    /// Offered load, flits per terminal per cycle (0..=1).
    pub rate: f64,
    /// Payload bytes of every packet.
    pub bytes: usize,
    /// Priority class (class 1 has strict priority over class 0).
    pub class: usize,
}

/// Everything a run needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkParams {
    /// The routers (and through them the topology).
    pub router: RouterParams,
    /// Extra cycles on every router-to-router link, each way: a flit in an output
    /// register during cycle t is on the next router's input during t + link_latency.
    pub link_latency: usize,
    /// The link layer on every router-to-router link (`None` = the ideal
    /// wire of `link_latency`; see [`super::links`]).
    #[serde(default)]
    pub links: Option<FramedLinks>,
    pub workload: Workload,
    /// Cycles before measurement starts.
    pub warmup: u64,
    /// Measurement window in cycles: packets created in it are tagged and all accounted for.
    pub window: u64,
    /// Longest drain after the window (cycles) before tagged packets are reported unfinished.
    pub drain_max: u64,
    /// Cycles with flits in the network and none moving before a deadlock is reported (0 = off).
    pub watchdog: u64,
    /// Check per-flow order (costs two hash look-ups per packet); the exactly-once,
    /// right-node and integrity checks always run.
    pub order_check: bool,
    /// Source queue limit per class in packets (0 = unbounded); a packet created when
    /// the queue is full is refused and counted.
    pub source_queue_limit: usize,
    /// Refuse routing schemes whose channel dependencies are cyclic (tests of the watchdog turn it off).
    pub check_deadlock: bool,
    pub seed: u64,
}

impl Default for NetworkParams {
    fn default() -> Self {
        NetworkParams {
            router: RouterParams::default(),
            link_latency: 0,
            links: None,
            workload: Workload::Synthetic {
                pattern: Pattern::Uniform,
                rate: 0.1,
                sizes: PacketSizes::default(),
                class1_fraction: 0.0,
            },
            warmup: 1_000,
            window: 10_000,
            drain_max: 100_000,
            watchdog: 10_000,
            order_check: true,
            source_queue_limit: 0,
            check_deadlock: true,
            seed: 1,
        }
    }
}

/// Largest link latency in cycles.
pub const MAX_LINK_LATENCY: usize = 4096;

impl NetworkParams {
    /// Largest payload of one packet in bytes.
    pub fn max_payload(&self) -> usize {
        let r = &self.router;
        (r.max_packet_flits - 2 * r.header_flits()) * r.flit_bits / 8
    }

    /// Check every field against its rule.
    pub fn validate(&self) -> Result<()> {
        self.router.validate()?;
        if self.link_latency > MAX_LINK_LATENCY {
            bail!(
                "network.link_latency = {}: must be 0..={MAX_LINK_LATENCY} cycles",
                self.link_latency
            );
        }
        if let Some(l) = &self.links {
            l.validate()?;
            if l.link.vcs != self.router.num_vcs() || l.link.flit_bits != self.router.flit_bits {
                bail!(
                    "links: {} VCs of {}-bit flits, the routers {} VCs of {} bits: must agree",
                    l.link.vcs,
                    l.link.flit_bits,
                    self.router.num_vcs(),
                    self.router.flit_bits
                );
            }
            if l.link.tx_buffer_flits != self.router.buffer_flits
                || l.link.router_credits != self.router.buffer_flits
            {
                bail!(
                    "links: link buffers toward the router ({} / {} flits) must equal router.buffer_flits = {}",
                    l.link.tx_buffer_flits,
                    l.link.router_credits,
                    self.router.buffer_flits
                );
            }
        }
        if self.window == 0 {
            bail!("network.window = 0: must be >= 1 cycle");
        }
        if self.router.max_packet_flits < 2 * self.router.header_flits() {
            bail!(
                "router.max_packet_flits = {}: the simulator's packets carry a header and a footer ({} flits)",
                self.router.max_packet_flits,
                2 * self.router.header_flits()
            );
        }
        if let Workload::Synthetic {
            rate,
            sizes,
            class1_fraction,
            ..
        } = &self.workload
        {
            sizes.validate(self.max_payload())?;
            let mean = sizes.mean_flits(|b| self.router.packet_flits(b));
            if !(0.0..=mean).contains(rate) || *rate > 1.0 {
                bail!("traffic.rate = {rate}: must be 0..=1 flits/terminal/cycle");
            }
            if !(0.0..=1.0).contains(class1_fraction) {
                bail!("traffic.class1_fraction = {class1_fraction}: must be 0..=1");
            }
            if *class1_fraction > 0.0 && self.router.classes < 2 {
                bail!("traffic.class1_fraction = {class1_fraction}: needs router.classes = 2");
            }
        }
        if let Workload::QosMix { storage, mpi } = &self.workload {
            for (name, s) in [("storage", storage), ("mpi", mpi)] {
                if !(0.0..=1.0).contains(&s.rate) {
                    bail!(
                        "qos.{name}_rate = {}: must be 0..=1 flits/terminal/cycle",
                        s.rate
                    );
                }
                if s.bytes > self.max_payload() {
                    bail!(
                        "qos.{name}_bytes = {}: must be 0..={}",
                        s.bytes,
                        self.max_payload()
                    );
                }
                if s.class >= self.router.classes {
                    bail!(
                        "qos: the {name} stream's class {} needs router.classes = 2",
                        s.class
                    );
                }
            }
        }
        Ok(())
    }
}
