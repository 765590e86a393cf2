//! The ports of the `node` bench top (`exanet_hdl::node::emit_node_bench`):
//! node `n`'s own ports `n<n>_<port>` and its internal signals
//! `n<n>_obs_<name>`, bound once.

use crate::blocks::ni::agents::{InnerAxil, NiPorts};
use crate::blocks::node_pair::NodePorts;
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_hdl::router::network::{RX_COUNTERS, TX_COUNTERS};

/// A flit interface: valid, data (128 b), head, tail, vc.
#[derive(Clone)]
pub(super) struct FlitPorts {
    pub(super) valid: Port,
    pub(super) data: Port,
    pub(super) head: Port,
    pub(super) tail: Port,
    pub(super) vc: Port,
}

/// A credit interface: valid, vc.
#[derive(Clone)]
pub(super) struct CreditPorts {
    pub(super) valid: Port,
    pub(super) vc: Port,
}

/// The fields of `link_rx`'s status bus the bench compares (`l<i>_st_<f>`),
/// with their widths (`freed`: 8 bits per VC, set at binding).
pub(super) const STATUS_FIELDS: [(&str, u32); 7] = [
    ("state", 2),
    ("heard", 1),
    ("peer_valid", 1),
    ("ack_seq", 6),
    ("nack_count", 8),
    ("urgent", 8),
    ("freed", 32),
];

/// One link end of a node: its transceiver-side ports and what the bench
/// observes inside.
#[derive(Clone)]
pub(super) struct LinkPorts {
    pub(super) user_clk: Port,
    pub(super) channel_up: Port,
    pub(super) tx_tdata: Port,
    pub(super) tx_tvalid: Port,
    pub(super) tx_tready: Port,
    pub(super) tx_ctrl: Port,
    pub(super) rx_tdata: Port,
    pub(super) rx_tvalid: Port,
    pub(super) rx_ctrl: Port,
    pub(super) lane_down: Port,
    /// [`STATUS_FIELDS`], in order.
    pub(super) status: Vec<Port>,
    /// `link_tx`'s counters ([`TX_COUNTERS`]) and `link_rx`'s ([`RX_COUNTERS`]).
    pub(super) tx_counters: Vec<Port>,
    pub(super) rx_counters: Vec<Port>,
    pub(super) rx_overflows: Port,
}

/// One AXI4-Lite port (32-bit data, 16-bit addresses, 3-bit AxPROT):
/// the node's slave `s_axil_*` or the NI's side of `axil_split`
/// (`obs_ni_s_*`).
#[derive(Clone)]
pub(super) struct AxilPorts {
    /// Name prefix for mismatches (`s_axil_`, `obs_ni_s_`).
    pub(super) name: &'static str,
    pub(super) awaddr: Port,
    pub(super) awprot: Port,
    pub(super) awvalid: Port,
    pub(super) awready: Port,
    pub(super) wdata: Port,
    pub(super) wstrb: Port,
    pub(super) wvalid: Port,
    pub(super) wready: Port,
    pub(super) bresp: Port,
    pub(super) bvalid: Port,
    pub(super) bready: Port,
    pub(super) araddr: Port,
    pub(super) arprot: Port,
    pub(super) arvalid: Port,
    pub(super) arready: Port,
    pub(super) rdata: Port,
    pub(super) rresp: Port,
    pub(super) rvalid: Port,
    pub(super) rready: Port,
}

impl AxilPorts {
    fn bind(sim: &Sim, prefix: &str, name: &'static str) -> Result<Self> {
        let p = |s: &str, w: u32| sim.port_w(&format!("{prefix}{s}"), w);
        Ok(AxilPorts {
            name,
            awaddr: p("awaddr", 16)?,
            awprot: p("awprot", 3)?,
            awvalid: p("awvalid", 1)?,
            awready: p("awready", 1)?,
            wdata: p("wdata", 32)?,
            wstrb: p("wstrb", 4)?,
            wvalid: p("wvalid", 1)?,
            wready: p("wready", 1)?,
            bresp: p("bresp", 2)?,
            bvalid: p("bvalid", 1)?,
            bready: p("bready", 1)?,
            araddr: p("araddr", 16)?,
            arprot: p("arprot", 3)?,
            arvalid: p("arvalid", 1)?,
            arready: p("arready", 1)?,
            rdata: p("rdata", 32)?,
            rresp: p("rresp", 2)?,
            rvalid: p("rvalid", 1)?,
            rready: p("rready", 1)?,
        })
    }
}

/// One node of the bench top.
#[derive(Clone)]
pub(super) struct NodeRtl {
    pub(super) clk: Port,
    pub(super) rst: Port,
    pub(super) pl_rst: Port,
    /// The NI's flits into the router's local input.
    pub(super) ni_out: FlitPorts,
    /// The router's local output into the ejection adapter.
    pub(super) ej: FlitPorts,
    /// The ejection adapter's credits to the router.
    pub(super) ej_credit: CreditPorts,
    /// The router's credits to the NI.
    pub(super) ni_credit_in: CreditPorts,
    /// Per router port: dropped_packets, flit_errors, credit_errors.
    pub(super) router: Vec<[Port; 3]>,
    pub(super) links: Vec<LinkPorts>,
    /// What the node-pair checks of the NI need.
    pub(super) ni: NodePorts,
    /// The node's AXI4-Lite slave (into `axil_split`).
    pub(super) s_axil: AxilPorts,
    /// `axil_split`'s `m0`: the NI's AXI4-Lite slave.
    pub(super) ni_s: AxilPorts,
}

fn flit(sim: &Sim, prefix: &str) -> Result<FlitPorts> {
    let p = |s: &str, w: u32| sim.port_w(&format!("{prefix}{s}"), w);
    Ok(FlitPorts {
        valid: p("valid", 1)?,
        data: p("data", 128)?,
        head: p("head", 1)?,
        tail: p("tail", 1)?,
        vc: p("vc", 4)?,
    })
}

fn credit(sim: &Sim, prefix: &str) -> Result<CreditPorts> {
    Ok(CreditPorts {
        valid: sim.port_w(&format!("{prefix}valid"), 1)?,
        vc: sim.port_w(&format!("{prefix}vc"), 4)?,
    })
}

/// The NI's ports of node `n` under the node's names: the AXI4-Lite slave
/// `s_axil_*` (16-bit addresses, AxPROT\[0\] = privileged), the AXI4 master
/// `m_axi_*` (49-bit addresses), the NI's observability outputs and flits
/// out through `n<n>_obs_*`.
fn ni_ports(sim: &Sim, n: usize, inner: &AxilPorts) -> Result<NiPorts> {
    let p = |s: &str, w: u32| sim.port_w(&format!("n{n}_{s}"), w);
    let o = |s: &str, w: u32| sim.port_w(&format!("n{n}_obs_{s}"), w);
    Ok(NiPorts {
        awvalid: p("s_axil_awvalid", 1)?,
        awready: p("s_axil_awready", 1)?,
        awaddr: p("s_axil_awaddr", 16)?,
        awprot: p("s_axil_awprot", 3)?,
        wvalid: p("s_axil_wvalid", 1)?,
        wready: p("s_axil_wready", 1)?,
        wdata: p("s_axil_wdata", 32)?,
        bvalid: p("s_axil_bvalid", 1)?,
        bready: p("s_axil_bready", 1)?,
        bresp: p("s_axil_bresp", 2)?,
        arvalid: p("s_axil_arvalid", 1)?,
        arready: p("s_axil_arready", 1)?,
        araddr: p("s_axil_araddr", 16)?,
        arprot: p("s_axil_arprot", 3)?,
        rvalid: p("s_axil_rvalid", 1)?,
        rready: p("s_axil_rready", 1)?,
        rdata: p("s_axil_rdata", 32)?,
        rresp: p("s_axil_rresp", 2)?,
        m_arvalid: p("m_axi_arvalid", 1)?,
        m_arready: p("m_axi_arready", 1)?,
        m_araddr: p("m_axi_araddr", 49)?,
        m_arlen: p("m_axi_arlen", 8)?,
        m_arsize: p("m_axi_arsize", 3)?,
        m_arburst: p("m_axi_arburst", 2)?,
        m_aruser: o("unused_ni_m_aruser", 16)?,
        m_rvalid: p("m_axi_rvalid", 1)?,
        m_rready: p("m_axi_rready", 1)?,
        m_rdata: p("m_axi_rdata", 128)?,
        m_rresp: p("m_axi_rresp", 2)?,
        m_awvalid: p("m_axi_awvalid", 1)?,
        m_awready: p("m_axi_awready", 1)?,
        m_awaddr: p("m_axi_awaddr", 49)?,
        m_awlen: p("m_axi_awlen", 8)?,
        m_awsize: p("m_axi_awsize", 3)?,
        m_awburst: p("m_axi_awburst", 2)?,
        m_awuser: o("unused_ni_m_awuser", 16)?,
        m_wvalid: p("m_axi_wvalid", 1)?,
        m_wready: p("m_axi_wready", 1)?,
        m_wdata: p("m_axi_wdata", 128)?,
        m_wstrb: p("m_axi_wstrb", 16)?,
        m_wlast: p("m_axi_wlast", 1)?,
        m_bvalid: p("m_axi_bvalid", 1)?,
        m_bready: p("m_axi_bready", 1)?,
        m_bresp: p("m_axi_bresp", 2)?,
        tx_pick: o("unused_ni_tx_pick", 1)?,
        irq: p("irq", 1)?,
        tx_busy: o("unused_ni_tx_busy", 1)?,
        rsp_pick: o("unused_ni_rsp_pick", 1)?,
        rx_commit: o("unused_ni_rx_commit", 1)?,
        rx_busy: o("unused_ni_rx_busy", 1)?,
        rx_class: o("unused_ni_rx_class", 1)?,
        out_valid: o("ni_out_valid", 1)?,
        out_data: o("ni_out_data", 128)?,
        out_head: o("ni_out_head", 1)?,
        out_tail: o("ni_out_tail", 1)?,
        out_vc: o("ni_out_vc", 4)?,
        out: "obs_ni_out",
        inner: Some(InnerAxil {
            arvalid: inner.arvalid,
            arready: inner.arready,
            awvalid: inner.awvalid,
            awready: inner.awready,
        }),
    })
}

impl NodeRtl {
    /// Bind node `n` with `links` network ports and `router_ports` router
    /// ports; an error names the missing or mis-sized port.
    pub(super) fn bind(
        sim: &Sim,
        n: usize,
        links: usize,
        router_ports: usize,
        vcs: usize,
    ) -> Result<Self> {
        let p = |s: &str, w: u32| sim.port_w(&format!("n{n}_{s}"), w);
        let o = |s: &str, w: u32| sim.port_w(&format!("n{n}_obs_{s}"), w);
        let mut router = Vec::new();
        let mut dropped = Vec::new();
        let mut errors = vec![(
            "obs_unused_eject_errors".to_string(),
            o("unused_eject_errors", 32)?,
        )];
        for q in 0..router_ports {
            let c = ["dropped_packets", "flit_errors", "credit_errors"]
                .map(|c| o(&format!("unused_{c}_{q}"), 32));
            let [a, b, c] = c;
            let c = [a?, b?, c?];
            dropped.push(c[0]);
            for (name, port) in ["flit_errors", "credit_errors"].iter().zip(&c[1..]) {
                errors.push((format!("obs_unused_{name}_{q}"), *port));
            }
            router.push(c);
        }
        let mut ls = Vec::new();
        for i in 0..links {
            let l = |s: &str, w: u32| p(&format!("link{i}_{s}"), w);
            ls.push(LinkPorts {
                user_clk: l("user_clk", 1)?,
                channel_up: l("channel_up", 1)?,
                tx_tdata: l("tx_tdata", 64)?,
                tx_tvalid: l("tx_tvalid", 1)?,
                tx_tready: l("tx_tready", 1)?,
                tx_ctrl: l("tx_ctrl", 1)?,
                rx_tdata: l("rx_tdata", 64)?,
                rx_tvalid: l("rx_tvalid", 1)?,
                rx_ctrl: l("rx_ctrl", 1)?,
                lane_down: o(&format!("l{i}_lane_down"), 1)?,
                status: STATUS_FIELDS
                    .iter()
                    .map(|(f, w)| {
                        let w = if *f == "freed" { 8 * vcs as u32 } else { *w };
                        o(&format!("l{i}_st_{f}"), w)
                    })
                    .collect::<Result<_>>()?,
                tx_counters: TX_COUNTERS
                    .iter()
                    .map(|c| o(&format!("unused_l{i}_tx_{c}"), 32))
                    .collect::<Result<_>>()?,
                rx_counters: RX_COUNTERS
                    .iter()
                    .map(|c| o(&format!("unused_l{i}_rx_{c}"), 32))
                    .collect::<Result<_>>()?,
                rx_overflows: o(&format!("rx_overflows_{i}"), 32)?,
            });
        }
        let ni_in = flit(sim, &format!("n{n}_obs_ni_in_"))?;
        let ni_s = AxilPorts::bind(sim, &format!("n{n}_obs_ni_s_"), "obs_ni_s_")?;
        let s_axil = AxilPorts::bind(sim, &format!("n{n}_s_axil_"), "s_axil_")?;
        Ok(NodeRtl {
            clk: p("clk", 1)?,
            rst: p("rst", 1)?,
            pl_rst: o("pl_rst", 1)?,
            ni_out: flit(sim, &format!("n{n}_obs_ni_out_"))?,
            ej: flit(sim, &format!("n{n}_obs_ej_"))?,
            ej_credit: credit(sim, &format!("n{n}_obs_ej_credit_"))?,
            ni_credit_in: credit(sim, &format!("n{n}_obs_ni_credit_in_"))?,
            router,
            links: ls,
            ni: NodePorts {
                ni: ni_ports(sim, n, &ni_s)?,
                rx_valid: ni_in.valid,
                rx_data: ni_in.data,
                rx_head: ni_in.head,
                rx_tail: ni_in.tail,
                rx_vc: ni_in.vc,
                errors,
                dropped,
            },
            s_axil,
            ni_s,
        })
    }
}
