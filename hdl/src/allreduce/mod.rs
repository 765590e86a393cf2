//! The allreduce accelerator's blocks: the reduction datapath.

pub mod fp_add;
pub mod reduce_alu;
