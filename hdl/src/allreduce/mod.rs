//! The allreduce accelerator's blocks: the reduction datapath.

pub mod ar_check;
pub mod ar_sched;
pub mod fp_add;
pub mod reduce_alu;
