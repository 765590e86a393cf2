//! exanet-sim: golden models of every exanet block, in plain Rust.
//!
//! Each model has the same name as its rust-hdl block in `exanet-hdl` and its
//! co-simulation bench in `exanet-tb`. Cycle-level models expose the block's
//! outputs for the current cycle as a function of state and inputs, and a
//! separate `tick` that advances state on the clock edge, so a bench can
//! compare them with the RTL before the edge.
//!
//! The network simulator ([`network`]) is built from the same router model
//! ([`router`]), so what an architect sweeps is what the RTL does.

pub mod allreduce;
pub mod bits;
pub mod common;
pub mod deadlock;
pub mod jobs;
pub mod link;
pub mod network;
pub mod ni;
pub mod node;
pub mod packet;
pub mod point;
pub mod rng;
pub mod router;
pub mod topology;
pub mod traffic;
