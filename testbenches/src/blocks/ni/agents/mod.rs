//! The agents and checks shared by the benches that drive network
//! interfaces: the `ni` bench (one NI, ports as the NI names them) and the
//! `node-pair` bench (one NI per node, ports prefixed `n{i}_`, the flits out
//! named `tx_*` instead of `out_*`).
//!
//! - [`NiPorts`]: the NI's AXI4-Lite slave, AXI4 master (read and write),
//!   transmit handshake, receive decision and flits out, bound once.
//! - [`AxilMaster`]: the software, one access at a time with random
//!   valid/ready delays, every response checked against the golden model's.
//! - [`AxiReadSlave`] / [`AxiWriteSlave`]: the memory, with random
//!   backpressure, latency and beat gaps; every AR and AW burst checked for
//!   shape and PDID, every write's strobed bytes against the golden write.
//! - [`check_picks`] and [`TxFlits`]: `rsp_pick` against the golden
//!   model's `emit_response` (class 1, the response lane on `resp_vc`),
//!   `tx_pick` against its `emit_request` (class 0, on `vc`), and every
//!   flit out against the oldest packet picked for its VC.
//!
//! Each bench passes its own time base (`now`: the NI bench counts cycles
//! in a phase, the node-pair bench from power-on) and a [`Report`] naming
//! the cycle and the port prefix of its mismatches. The random draws are
//! made in the order the benches made them before they shared this code.

mod axil;
mod flits;
mod memory;
mod ports;

pub(crate) use axil::{Access, AxilMaster};
pub(crate) use flits::{check_picks, TxFlits};
pub(crate) use memory::{AxiReadSlave, AxiWriteSlave};
pub use ports::{InnerAxil, NiPorts};

use crate::cosim::Mismatch;

/// Where a check failed: the cycle, and the prefix of the bench's port
/// names (`""` for the `ni` bench, `n{i}_` for a node of the node pair).
#[derive(Clone, Copy)]
pub(crate) struct Report<'a> {
    pub cycle: u64,
    pub prefix: &'a str,
}

impl Report<'_> {
    /// A mismatch on `port` (prefixed).
    pub fn mismatch(&self, port: &str, expected: String, actual: String) -> Mismatch {
        Mismatch {
            cycle: self.cycle,
            port: format!("{}{port}", self.prefix),
            expected,
            actual,
        }
    }

    /// `Err` of [`Report::mismatch`].
    pub fn bad<T>(&self, port: &str, expected: String, actual: String) -> Result<T, Mismatch> {
        Err(self.mismatch(port, expected, actual))
    }

    /// `Err` of a mismatch with the values in hex.
    pub fn hex<T>(&self, port: &str, expected: u64, actual: u64) -> Result<T, Mismatch> {
        Err(Mismatch::hex(
            self.cycle,
            &format!("{}{port}", self.prefix),
            expected,
            actual,
        ))
    }
}
