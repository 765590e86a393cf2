//! exanet-hdl: the exanet hardware, written in rust-hdl.
//!
//! One block per file, grouped by subsystem (see `shared/design/ARCHITECTURE.md`).
//! Every block's golden model lives in `exanet-sim` under the same name and
//! its co-simulation bench in `exanet-tb`. [`emit`] turns a block into clean
//! Verilog: one module per file, a project-prefixed top, no `$` names.

pub mod allreduce;
pub mod common;
pub mod emit;
pub mod limits;
pub mod link;
pub mod ni;
pub mod node;
pub mod node_pair;
pub mod node_ports;
pub mod packet;
pub mod router;
pub mod transceiver;
