//! The virtual-channel router, block by block. Its cycle-exact golden model
//! is `exanet_sim::router` (whose module doc is the microarchitecture
//! contract); its co-simulation bench is `exanet_tb::blocks::router`.
//!
//! - [`route_compute`]: the routing function of one input port, compiled to logic;
//! - [`input_vc`]: one input VC: buffer, state, request;
//! - [`allocator`]: the class-priority round-robin arbiter (input and output side);
//! - [`input_unit`]: one input port: its VCs, input arbitration, credit return;
//! - [`output_unit`]: one output port: output arbitration, credits, busy bits,
//!   output register;
//! - [`switch_alloc`]: the matching switch allocators (iSLIP, wavefront), a
//!   Verilog template;
//! - [`top`]: the router top, crossbar and [`emit_router`].
//! - [`network`]: a structural top of A x B x C routers wired as the topology
//!   (for co-simulating whole networks).

pub mod allocator;
pub mod input_unit;
pub mod input_vc;
pub mod network;
pub mod output_unit;
pub mod route_compute;
pub mod switch_alloc;
pub mod top;

pub use network::{emit_network, network_top_name};
pub use top::{emit_router, router_top_name, single_file, Router};
