//! `axi_master`: the AR channel of the NI's AXI4 master (generated
//! Verilog, part of the `ni` top). Read data are consumed by
//! [`super::rdma_tx`].
//!
//! Per RDMA write or read response packet of `n` bytes from source `s`: `ceil((s mod 16 +
//! n) / 16)` beats of 16 bytes from `s` rounded down to 16, INCR, split
//! into two bursts where they would cross a 4 KiB boundary; ARUSER = the
//! transfer's PDID (the channel's, or the read request's; for the
//! system's SMMU). The AR of a packet is issued after its LOAD; the
//! scheduler picks the next packet only once every AR of the previous one
//! is accepted, so ARUSER is always the last picked packet's PDID. Up to
//! `tx_ahead` ([`super::rdma_tx`]) packets' bursts are outstanding; data must
//! return in order (one ID); RREADY is driven by the realigner
//! ([`super::rdma_tx`]).

use super::geometry::{Geometry, Keys};
use super::vgen::render;
use anyhow::Result;
use askama::Template;

/// `templates/ni/axi_master.v`.
#[derive(Template)]
#[template(path = "ni/axi_master.v")]
struct AxiMaster {
    k: Keys,
    /// `addr_bits - 12`: the page-number bits of an address.
    ab12: usize,
    /// `m_araddr`: `ar_addr` zero-extended to 42 bits.
    araddr: String,
}

/// The Verilog of the AR channel.
pub fn verilog(g: &Geometry) -> Result<String> {
    let ab = g.p.ni.addr_bits as usize;
    let araddr = if ab == 42 {
        "ar_addr".to_string()
    } else {
        format!("{{{}'d0, ar_addr}}", 42 - ab)
    };
    render(
        &AxiMaster {
            k: g.keys(),
            ab12: ab - 12,
            araddr,
        },
        "axi_master",
    )
}
