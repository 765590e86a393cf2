//! [`NiPorts`]: the ports of one NI the shared agents drive and check,
//! bound once by name.

use crate::verilator::{Port, Sim};
use anyhow::Result;

/// The ports of one NI the shared agents drive and check.
#[derive(Clone)]
pub struct NiPorts {
    pub awvalid: Port,
    pub awready: Port,
    pub awaddr: Port,
    pub awprot: Port,
    pub wvalid: Port,
    pub wready: Port,
    pub wdata: Port,
    pub bvalid: Port,
    pub bready: Port,
    pub bresp: Port,
    pub arvalid: Port,
    pub arready: Port,
    pub araddr: Port,
    pub arprot: Port,
    pub rvalid: Port,
    pub rready: Port,
    pub rdata: Port,
    pub rresp: Port,
    pub m_arvalid: Port,
    pub m_arready: Port,
    pub m_araddr: Port,
    pub m_arlen: Port,
    pub m_arsize: Port,
    pub m_arburst: Port,
    pub m_aruser: Port,
    pub m_rvalid: Port,
    pub m_rready: Port,
    pub m_rdata: Port,
    pub m_rresp: Port,
    pub m_awvalid: Port,
    pub m_awready: Port,
    pub m_awaddr: Port,
    pub m_awlen: Port,
    pub m_awsize: Port,
    pub m_awburst: Port,
    pub m_awuser: Port,
    pub m_wvalid: Port,
    pub m_wready: Port,
    pub m_wdata: Port,
    pub m_wstrb: Port,
    pub m_wlast: Port,
    pub m_bvalid: Port,
    pub m_bready: Port,
    pub m_bresp: Port,
    pub tx_pick: Port,
    pub tx_busy: Port,
    /// The response lane takes the response queue's head (golden
    /// `emit_response`).
    pub rsp_pick: Port,
    pub rx_commit: Port,
    pub rx_busy: Port,
    /// Class of the packet decided at `rx_commit` (or found Busy at
    /// `rx_busy`).
    pub rx_class: Port,
    /// The interrupt (registered: in cycle t + 1 it shows the STATUS and
    /// IRQ_ENABLE of cycle t), checked the cycle after each read
    /// (the AXI4-Lite master agent).
    pub irq: Port,
    /// Flits out: `{out}_valid`, `_data`, `_head`, `_tail`, `_vc`.
    pub out_valid: Port,
    pub out_data: Port,
    pub out_head: Port,
    pub out_tail: Port,
    pub out_vc: Port,
    /// Name of the flits-out group (`out` or `tx`), for mismatches.
    pub out: &'static str,
    /// When an interconnect (the node's `axil_split`) stands between the
    /// AXI4-Lite ports above and the NI: the NI's own handshakes, at which
    /// the golden NI performs each access (`InnerAxil`).
    pub inner: Option<InnerAxil>,
}

/// The NI's own AXI4-Lite request handshakes behind an interconnect: the
/// read is performed when `arvalid && arready` here, the write when
/// `awvalid && awready` (the NI takes AW and W together).
#[derive(Clone)]
pub struct InnerAxil {
    pub arvalid: Port,
    pub arready: Port,
    pub awvalid: Port,
    pub awready: Port,
}

impl NiPorts {
    /// Bind the ports named `{prefix}{name}`; the flits out are
    /// `{prefix}{out}_valid` and so on. An error names a missing or
    /// mis-sized port.
    pub fn bind(sim: &Sim, prefix: &str, out: &'static str) -> Result<NiPorts> {
        let p = |n: &str, w: u32| sim.port_w(&format!("{prefix}{n}"), w);
        let o = |n: &str, w: u32| sim.port_w(&format!("{prefix}{out}_{n}"), w);
        Ok(NiPorts {
            awvalid: p("s_awvalid", 1)?,
            awready: p("s_awready", 1)?,
            awaddr: p("s_awaddr", 20)?,
            awprot: p("s_awprot", 1)?,
            wvalid: p("s_wvalid", 1)?,
            wready: p("s_wready", 1)?,
            wdata: p("s_wdata", 32)?,
            bvalid: p("s_bvalid", 1)?,
            bready: p("s_bready", 1)?,
            bresp: p("s_bresp", 2)?,
            arvalid: p("s_arvalid", 1)?,
            arready: p("s_arready", 1)?,
            araddr: p("s_araddr", 20)?,
            arprot: p("s_arprot", 1)?,
            rvalid: p("s_rvalid", 1)?,
            rready: p("s_rready", 1)?,
            rdata: p("s_rdata", 32)?,
            rresp: p("s_rresp", 2)?,
            m_arvalid: p("m_arvalid", 1)?,
            m_arready: p("m_arready", 1)?,
            m_araddr: p("m_araddr", 42)?,
            m_arlen: p("m_arlen", 8)?,
            m_arsize: p("m_arsize", 3)?,
            m_arburst: p("m_arburst", 2)?,
            m_aruser: p("m_aruser", 16)?,
            m_rvalid: p("m_rvalid", 1)?,
            m_rready: p("m_rready", 1)?,
            m_rdata: p("m_rdata", 128)?,
            m_rresp: p("m_rresp", 2)?,
            m_awvalid: p("m_awvalid", 1)?,
            m_awready: p("m_awready", 1)?,
            m_awaddr: p("m_awaddr", 42)?,
            m_awlen: p("m_awlen", 8)?,
            m_awsize: p("m_awsize", 3)?,
            m_awburst: p("m_awburst", 2)?,
            m_awuser: p("m_awuser", 16)?,
            m_wvalid: p("m_wvalid", 1)?,
            m_wready: p("m_wready", 1)?,
            m_wdata: p("m_wdata", 128)?,
            m_wstrb: p("m_wstrb", 16)?,
            m_wlast: p("m_wlast", 1)?,
            m_bvalid: p("m_bvalid", 1)?,
            m_bready: p("m_bready", 1)?,
            m_bresp: p("m_bresp", 2)?,
            tx_pick: p("tx_pick", 1)?,
            irq: p("irq", 1)?,
            tx_busy: p("tx_busy", 1)?,
            rsp_pick: p("rsp_pick", 1)?,
            rx_commit: p("rx_commit", 1)?,
            rx_busy: p("rx_busy", 1)?,
            rx_class: p("rx_class", 1)?,
            out_valid: o("valid", 1)?,
            out_data: o("data", 128)?,
            out_head: o("head", 1)?,
            out_tail: o("tail", 1)?,
            out_vc: o("vc", 4)?,
            out,
            inner: None,
        })
    }
}
