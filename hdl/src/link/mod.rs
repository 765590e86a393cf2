//! The link layer between FPGAs (see `exanet_sim::link` for the frame
//! format, the protocol and the golden models).
//!
//! Blocks here are generated Verilog (askama templates under
//! `hdl/templates/link/`) inside a rust-hdl wrapper, as the NI's: their
//! logic is a few `always` blocks over RAMs and pointers, which rust-hdl
//! expresses poorly (one `always @(*)` per module, no RAM inference).

pub mod link_pair;
pub mod link_rx;
pub mod link_status;
pub mod link_tx;
pub mod pcs66;
pub mod retry_buffer;
pub mod xor_net;
