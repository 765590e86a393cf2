//! Network simulator: a torus/mesh of golden router models ([`crate::router`])
//! wired by links, with a network-interface endpoint per terminal, synthetic
//! or trace traffic ([`crate::traffic`]), measurement and a scoreboard.
//!
//! # Links
//! Two models ([`NetworkParams::links`]): `None` is the *ideal wire*
//! described below (one flit per cycle, error-free, the routers' credit
//! loop stretched over `link_latency` cycles each way; the RTL-router
//! network co-simulation compares against it); `Some` puts the golden link
//! layer on every router-to-router link ([`links`]: router out → `link_tx`
//! → PHY model → `link_rx` → router in, frames, CRC, go-back-N, credits
//! over the cable, bit errors and down windows), with its own timing: a
//! router's outputs reach its link ends, and the link ends' outputs its
//! inputs, one cycle later.
//!
//! # Timing (cycle t, ideal wires)
//! 1. Traffic: packets created during t join their source queue.
//! 2. Endpoints: a flit that the router's local output shows during t is
//!    consumed and its credit is on the router's credit input during t; the
//!    endpoint's injected flit for t is on the router's local input during t.
//! 3. Routers tick with the flits and credits on their inputs during t. A
//!    router output (flit or credit) registered at the end of t is on the
//!    neighbour's input during `t + 1 + link_latency`, and on the endpoint's
//!    during `t + 1`.
//!
//! So a hop costs the router's R cycles plus `link_latency`, and the zero-load
//! latency of a packet of F flits over H router-to-router hops (H + 1 routers),
//! from creation to its tail reaching the destination endpoint, is
//! **`T0 = R (H + 1) + link_latency * H + (F - 1)`** cycles, with R = 2 for
//! 128/256-bit flits and R = 3 for 64-bit flits (a router waits for the second
//! header flit before routing, see [`crate::router`]).
//!
//! # Speed
//! Only routers with buffered flits or with a flit or credit arriving are
//! ticked (a wake-up wheel of `link_latency + 2` cycles); an idle router's
//! tick changes nothing but its output registers, which nobody reads. Packet
//! creation uses geometric inter-arrival times in a heap, so idle terminals
//! cost nothing per cycle. Memory is fixed per router (buffers in flat
//! arrays of 64-bit words) plus the packets in flight.
//!
//! # Raw packets
//! [`Network::send_raw`] carries the packets of a real protocol (an NI
//! model's, as 128-bit flits) beside the scoreboard's synthetic ones: same
//! injection queues, VCs and routers; the destination endpoint tells them
//! apart by their header word and hands them over whole
//! ([`Network::take_arrivals`]). [`collective`] runs golden NIs with the
//! allreduce engine on them.
//!
//! # Method
//! Warm-up, a measurement window (packets created in it are *tagged*), then a
//! drain with traffic continuing until every tagged packet is delivered
//! (or `drain_max` passes: reported as unfinished). Offered load = flits of
//! packets created in the window / (terminals x window); accepted load =
//! flits received in the window / (terminals x window). A watchdog reports a
//! deadlock when flits are in the network and none has moved for `watchdog`
//! cycles (which must exceed `link_latency`).

pub mod collective;
pub mod endpoint;
pub mod links;
mod measure;
pub mod params;
pub mod scoreboard;
pub mod sim;
mod source;
pub mod stats;
pub mod watchdog;

pub use links::{
    End as LinkEnd, FramedLinks, LinkEndIo, LinkKeyError, LinkKeys, LinkReport, LINK_MODELS,
};
pub use params::{NetworkParams, Stream, Workload};
pub use sim::{Arrival, LocalIo, Network};
pub use source::HeaderFault;
pub use stats::{ClassReport, Deadlock, Latency, Report};
