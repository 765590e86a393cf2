//! Golden models of the allreduce accelerator's blocks.

pub mod engine;
pub mod fp_add;
pub mod reduce_alu;
pub mod schedule;
