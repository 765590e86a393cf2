//! The port list of the node top, `exanet_node`: the one place the node
//! RTL (issue 17 item 1), the Vivado block design (`vivado/node.tcl`), the
//! node XDC and the black-box lint share.
//!
//! Shape: the PL clock and reset; the NI's AXI4 master (128-bit data, to the
//! PS's S_AXI_HP0_FPD); the AXI4-Lite register slave (from M_AXI_HPM0_FPD
//! through an interconnect); an interrupt; and per network link `i` an
//! Aurora 64B/66B-style user interface (`link<i>_…`, PG074 names after the
//! prefix): TX tdata/tvalid/tready plus a control indication, RX
//! tdata/tvalid plus control (no RX backpressure: Aurora has no
//! m_axi_rx_tready), the core's user clock and channel_up.
//!
//! Vivado infers the AXI interfaces of a module reference from these
//! prefixes (`m_axi_`, `s_axil_`), so the block design connects them as
//! interfaces.

/// Port direction, seen from `exanet_node`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Input.
    In,
    /// Output.
    Out,
}

/// One port of the node top (or of a board-level cell of
/// [`crate::transceiver`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Port {
    /// Name; a node link port's name is `link<i>_` + this.
    pub name: &'static str,
    /// Direction (seen from the module).
    pub dir: Dir,
    /// Width in bits.
    pub width: u32,
}

/// An input port.
pub(crate) const fn i(name: &'static str, width: u32) -> Port {
    Port {
        name,
        dir: Dir::In,
        width,
    }
}
/// An output port.
pub(crate) const fn o(name: &'static str, width: u32) -> Port {
    Port {
        name,
        dir: Dir::Out,
        width,
    }
}

/// Module name of the node top.
pub const NODE_TOP: &str = "exanet_node";
/// Data width of the NI's AXI4 master (S_AXI_HP0_FPD is set to this).
pub const AXI_DATA_BITS: u32 = 128;
/// Address width of the AXI4 master (the PS's 49-bit HP address space).
pub const AXI_ADDR_BITS: u32 = 49;
/// ID width of the AXI4 master (S_AXI_HP0_FPD takes 6 bits).
pub const AXI_ID_BITS: u32 = 6;
/// Address width of the AXI4-Lite register slave (the NI's register window).
pub const AXIL_ADDR_BITS: u32 = 16;
/// Data width of the AXI4-Lite register slave.
pub const AXIL_DATA_BITS: u32 = 32;
/// Data width of one link's user interface (one Aurora 64B/66B lane).
pub const LINK_DATA_BITS: u32 = 64;

/// Cell-name patterns the node top's clock-domain crossings use, so the
/// node XDC (`constraints/node.xdc`) can constrain them: the first flop of
/// every two-flop synchronizer (marked ASYNC_REG) …
pub const CDC_SYNC_CELLS: &str = "*_sync0_reg*";
/// … the first synchronizer flop of a gray-coded FIFO pointer …
pub const CDC_GRAY_SYNC_CELLS: &str = "*_gray_sync0_reg*";
/// … the gray-coded pointer registers it samples …
pub const CDC_GRAY_CELLS: &str = "*_gray_reg*";
/// … and the flops of a reset synchronizer (asynchronous assert).
pub const RESET_SYNC_CELLS: &str = "*rst_sync*_reg*";

/// Clock and reset (the PS's pl_clk0 and its reset).
pub const CLOCK_RESET: &[Port] = &[i("clk", 1), i("rst", 1)];

/// The NI's AXI4 master (to S_AXI_HP0_FPD).
pub const AXI_MASTER: &[Port] = &[
    o("m_axi_awid", AXI_ID_BITS),
    o("m_axi_awaddr", AXI_ADDR_BITS),
    o("m_axi_awlen", 8),
    o("m_axi_awsize", 3),
    o("m_axi_awburst", 2),
    o("m_axi_awlock", 1),
    o("m_axi_awcache", 4),
    o("m_axi_awprot", 3),
    o("m_axi_awqos", 4),
    o("m_axi_awvalid", 1),
    i("m_axi_awready", 1),
    o("m_axi_wdata", AXI_DATA_BITS),
    o("m_axi_wstrb", AXI_DATA_BITS / 8),
    o("m_axi_wlast", 1),
    o("m_axi_wvalid", 1),
    i("m_axi_wready", 1),
    i("m_axi_bid", AXI_ID_BITS),
    i("m_axi_bresp", 2),
    i("m_axi_bvalid", 1),
    o("m_axi_bready", 1),
    o("m_axi_arid", AXI_ID_BITS),
    o("m_axi_araddr", AXI_ADDR_BITS),
    o("m_axi_arlen", 8),
    o("m_axi_arsize", 3),
    o("m_axi_arburst", 2),
    o("m_axi_arlock", 1),
    o("m_axi_arcache", 4),
    o("m_axi_arprot", 3),
    o("m_axi_arqos", 4),
    o("m_axi_arvalid", 1),
    i("m_axi_arready", 1),
    i("m_axi_rid", AXI_ID_BITS),
    i("m_axi_rdata", AXI_DATA_BITS),
    i("m_axi_rresp", 2),
    i("m_axi_rlast", 1),
    i("m_axi_rvalid", 1),
    o("m_axi_rready", 1),
];

/// The AXI4-Lite register slave (from M_AXI_HPM0_FPD).
pub const AXIL_SLAVE: &[Port] = &[
    i("s_axil_awaddr", AXIL_ADDR_BITS),
    i("s_axil_awprot", 3),
    i("s_axil_awvalid", 1),
    o("s_axil_awready", 1),
    i("s_axil_wdata", AXIL_DATA_BITS),
    i("s_axil_wstrb", AXIL_DATA_BITS / 8),
    i("s_axil_wvalid", 1),
    o("s_axil_wready", 1),
    o("s_axil_bresp", 2),
    o("s_axil_bvalid", 1),
    i("s_axil_bready", 1),
    i("s_axil_araddr", AXIL_ADDR_BITS),
    i("s_axil_arprot", 3),
    i("s_axil_arvalid", 1),
    o("s_axil_arready", 1),
    o("s_axil_rdata", AXIL_DATA_BITS),
    o("s_axil_rresp", 2),
    o("s_axil_rvalid", 1),
    i("s_axil_rready", 1),
];

/// The NI's interrupt (to pl_ps_irq0).
pub const IRQ: &[Port] = &[o("irq", 1)];

/// One link's ports, each named `link<i>_` + name. The TX side drives the
/// Aurora core's `s_axi_tx_*`; the RX side takes its `m_axi_rx_*`;
/// `tx_ctrl`/`rx_ctrl` mark a control (not data) word; `user_clk` and
/// `channel_up` come from the core.
pub const LINK: &[Port] = &[
    i("user_clk", 1),
    i("channel_up", 1),
    o("tx_tdata", LINK_DATA_BITS),
    o("tx_tvalid", 1),
    i("tx_tready", 1),
    o("tx_ctrl", 1),
    i("rx_tdata", LINK_DATA_BITS),
    i("rx_tvalid", 1),
    i("rx_ctrl", 1),
];

// Which transceiver pin each link port connects to, per `fpga.transceiver`:
// `crate::transceiver::phy_pin` (and `link_nets` for the whole wiring).

/// A port with its full name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedPort {
    /// Full port name.
    pub name: String,
    /// Direction.
    pub dir: Dir,
    /// Width in bits.
    pub width: u32,
    /// The link it belongs to, if any.
    pub link: Option<u32>,
    /// For a link port: its name after the `link<i>_` prefix.
    pub link_port: Option<&'static str>,
}

/// Every port of `exanet_node` with `links` network links, in port order.
pub fn node_ports(links: u32) -> Vec<NamedPort> {
    let plain = |p: &Port| NamedPort {
        name: p.name.to_string(),
        dir: p.dir,
        width: p.width,
        link: None,
        link_port: None,
    };
    let mut out: Vec<NamedPort> = CLOCK_RESET
        .iter()
        .chain(AXI_MASTER)
        .chain(AXIL_SLAVE)
        .chain(IRQ)
        .map(plain)
        .collect();
    for l in 0..links {
        out.extend(LINK.iter().map(|p| NamedPort {
            name: format!("link{l}_{}", p.name),
            dir: p.dir,
            width: p.width,
            link: Some(l),
            link_port: Some(p.name),
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn names_are_unique_and_axi_is_complete() {
        let ports = node_ports(6);
        let names: BTreeSet<&str> = ports.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names.len(), ports.len());
        assert_eq!(ports.len(), 2 + 37 + 19 + 1 + 6 * LINK.len());
        // Every AXI4 channel handshake both ways, RLAST and WSTRB present
        // (NEWCOMER defect 13: the node top must carry full AXI).
        for n in ["m_axi_rlast", "m_axi_wstrb", "m_axi_rresp", "s_axil_wstrb"] {
            assert!(names.contains(n), "{n}");
        }
        let wstrb = ports.iter().find(|p| p.name == "m_axi_wstrb").unwrap();
        assert_eq!(wstrb.width * 8, AXI_DATA_BITS);
    }
}
