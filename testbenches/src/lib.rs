//! exanet-tb: the Verilator harness and the RTL-vs-golden co-simulation benches.
//!
//! [`verilator`] verilates emitted Verilog, builds one shared library per
//! design (cached by a hash of sources and flags), loads it and maps every
//! port to a raw pointer once. [`cosim`] runs a [`cosim::Bench`] — one block's
//! RTL and golden model — in lockstep and stops at the first difference,
//! replaying the run with a waveform. [`blocks`] holds one bench per block.

pub mod blocks;
pub mod cosim;
pub mod mutate;
pub mod verilator;
