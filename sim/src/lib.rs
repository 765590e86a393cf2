//! exanet-sim: golden models of every exanet block, in plain Rust.
//!
//! Each model has the same name as its rust-hdl block in `exanet-hdl` and its
//! co-simulation bench in `exanet-tb`. Cycle-level models expose the block's
//! outputs for the current cycle as a function of state and inputs, and a
//! separate `tick` that advances state on the clock edge, so a bench can
//! compare them with the RTL before the edge.

pub mod common;
pub mod packet;
pub mod rng;
