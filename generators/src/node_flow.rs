//! The node flow: `OUT/vivado/node.tcl` (Vivado non-project flow of the
//! whole node: PS block design, one transceiver per link as
//! `fpga.transceiver` says (see [`exanet_hdl::transceiver`]), synthesis to
//! bitstream and `.xsa`) and `OUT/constraints/node.xdc`, from the askama templates
//! `scripts/vivado/node.tcl` and `constraints/node.xdc`, the board file
//! ([`crate::board`]) and the node top's port list
//! ([`exanet_hdl::node_ports`]).

use crate::board::Board;
use crate::params::Params;
use crate::params::Transceiver;
use anyhow::{bail, Result};
use askama::Template;
use exanet_hdl::node_ports::{self as np, NODE_TOP};
use exanet_hdl::transceiver::{self as tr, link_nets, quad_suffix, QuadSlot, GTH_LANE_TOP};

/// The node XDC inside the output folder.
pub const NODE_XDC_PATH: &str = "constraints/node.xdc";
/// The node flow script inside the output folder.
pub const NODE_TCL_PATH: &str = "vivado/node.tcl";
/// The node top's Verilog file inside the output folder.
pub const NODE_RTL_PATH: &str = "rtl/exanet_node.v";
/// The GTH lane adapter's Verilog file inside the output folder (with
/// `fpga.transceiver = "gth"`).
pub const GTH_LANE_PATH: &str = "rtl/exanet_gth_lane.v";
/// Folder of the board-level lint inside the output folder: the black
/// boxes of the vendor IP and the top wiring them to the node
/// ([`exanet_hdl::transceiver::render_board_lint`]).
pub const BOARD_LINT_DIR: &str = "lint/board";
/// User data width of the GTH wizard, bits (one 64B/66B block per cycle).
pub const GT_USER_DATA_BITS: u32 = 64;
/// Internal data width of the GTH (the 10GBASE-R preset's 32 bits; 64-bit
/// user data at half that rate).
pub const GT_INT_DATA_BITS: u32 = 32;
/// Line rate of one lane, Gb/s (10GBASE-R rate).
pub const LINE_GBPS: f64 = 10.3125;
/// Base address of the node's register window in the PS address map (the
/// start of M_AXI_HPM0_FPD's window).
pub const REGS_BASE: u64 = 0xA000_0000;
/// Size of the node's register window, bytes (the AXI4-Lite address space).
pub const REGS_RANGE: u64 = 1 << np::AXIL_ADDR_BITS;

/// One quad the links use, as the templates use it.
pub struct QuadView {
    /// Index in order of first use.
    pub index: u32,
    /// Suffix of its reference-clock port and buffer.
    pub qs: String,
    /// Quad name.
    pub name: String,
    /// The link owning its common block.
    pub owner: u32,
    /// Reference clock pin name (MGTREFCLK…).
    pub refclk_pin: String,
    /// Reference clock P / N package pins.
    pub refclk_p: String,
    /// See `refclk_p`.
    pub refclk_n: String,
    /// Reference clock, MHz.
    pub refclk_mhz: String,
    /// Reference clock, Hz.
    pub refclk_hz: u64,
    /// Reference clock period, ns (3 decimals).
    pub refclk_period_ns: String,
}

/// One link's lane, as the templates use it.
pub struct LaneView {
    /// Link index.
    pub index: u32,
    /// Lane name on the board.
    pub name: String,
    /// Channel site.
    pub channel: String,
    /// Channel site as `X1Y12`.
    pub site: String,
    /// Pins.
    pub rx_p: String,
    /// Pins.
    pub rx_n: String,
    /// Pins.
    pub tx_p: String,
    /// Pins.
    pub tx_n: String,
    /// TX_DISABLE pin, when the lane has one (else empty).
    pub tx_disable: String,
    /// Whether the lane has a TX_DISABLE pin.
    pub has_tx_disable: bool,
    /// Its quad's name (`Quad_X1Y3`).
    pub quad: String,
    /// Whether this link's core owns its quad's common block.
    pub owns: bool,
    /// The link owning its quad's common block.
    pub owner: u32,
    /// Suffix of its quad's reference-clock port and buffer
    /// ([`exanet_hdl::transceiver::quad_suffix`]).
    pub qs: String,
    /// Its quad's reference clock, MHz (as the templates print it).
    pub refclk_mhz: String,
    /// QPLL0 fractional-N numerator for that reference clock.
    pub qpll_fracn: u64,
    /// Its nets, each the argument list of one `connect_bd_net`, from
    /// [`exanet_hdl::transceiver::link_nets`] (the list the board-level
    /// lint is made from too).
    pub nets: Vec<String>,
}

#[derive(Template)]
#[template(path = "node.tcl")]
struct NodeTcl<'a> {
    name: &'a str,
    version: &'a str,
    top: &'a str,
    board: &'a str,
    board_part: &'a str,
    part: &'a str,
    links: u32,
    gth: bool,
    transceiver: &'a str,
    constants: Vec<(&'static str, u32, u64)>,
    user_data_bits: u32,
    int_data_bits: u32,
    lane_top: &'a str,
    files: Vec<String>,
    axi_data_bits: u32,
    pl_mhz: String,
    reset_pin: &'a str,
    line_gbps: String,
    quads: &'a [QuadView],
    lanes: &'a [LaneView],
    regs_base: String,
    regs_range: String,
}

#[derive(Template)]
#[template(path = "node.xdc")]
struct NodeXdc<'a> {
    name: &'a str,
    version: &'a str,
    board: &'a str,
    part: &'a str,
    pl_mhz: String,
    quads: &'a [QuadView],
    reset_pin: &'a str,
    reset_iostandard: &'a str,
    lanes: &'a [LaneView],
    cdc_max_ns: String,
    user_clk_mhz: String,
    transceiver: &'a str,
    cdc_sync: &'a str,
    cdc_gray: &'a str,
    cdc_sync_gray: &'a str,
    rst_sync: &'a str,
}

/// A number for a generated file: shortest exact decimal, no exponent.
fn num(x: f64) -> String {
    let s = format!("{x}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

fn with_newline(mut s: String) -> String {
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// QPLL0 fractional-N numerator (24-bit fraction of the feedback divider
/// line rate / 2 / refclk) for a `refclk_mhz` reference: 0 at 10.3125
/// Gb/s from 156.25 MHz.
fn qpll_fracn(refclk_mhz: f64) -> u64 {
    ((LINE_GBPS * 1000.0 / 2.0 / refclk_mhz).fract() * (1u64 << 24) as f64).round() as u64
}

/// The links of the node: one per network port of the router, each on the
/// board lane of the same index, and the quads those lanes use (in order of
/// first use); an error naming both counts when the board has fewer lanes.
pub fn lanes(p: &Params, board: &Board) -> Result<(Vec<LaneView>, Vec<QuadView>)> {
    let links = p.topology.network_ports;
    if (board.lanes.len() as u32) < links {
        bail!(
            "fpga.board: board `{}` has {} transceiver lane(s), but the router of config `{}` \
             has {links} network port(s) (topology.dims/wrap); the node flow needs one lane per link",
            board.name,
            board.lanes.len(),
            p.name
        );
    }
    let t = p.fpga.transceiver;
    let used = &board.lanes[..links as usize];
    let slots = QuadSlot::plan(&used.iter().map(|l| l.quad.as_str()).collect::<Vec<_>>());
    let quad_of = |name: &str| {
        board
            .quads
            .iter()
            .find(|q| q.name == name)
            .expect("board::parse checks every lane's quad")
    };
    let mut quads: Vec<QuadView> = Vec::new();
    for (l, (lane, slot)) in used.iter().zip(&slots).enumerate() {
        if slot.owner == l as u32 {
            let q = quad_of(&lane.quad);
            quads.push(QuadView {
                index: slot.quad,
                qs: quad_suffix(slot.quad),
                name: q.name.clone(),
                owner: slot.owner,
                refclk_pin: q.refclk.pin.clone(),
                refclk_p: q.refclk.p.clone(),
                refclk_n: q.refclk.n.clone(),
                refclk_mhz: num(q.refclk.mhz),
                refclk_hz: (q.refclk.mhz * 1e6).round() as u64,
                refclk_period_ns: format!("{:.3}", 1000.0 / q.refclk.mhz),
            });
        }
    }
    let lanes = used
        .iter()
        .zip(&slots)
        .enumerate()
        .map(|(i, (l, slot))| {
            let q = quad_of(&l.quad);
            LaneView {
                index: i as u32,
                name: l.name.clone(),
                channel: l.channel.clone(),
                site: l.site_xy().to_string(),
                rx_p: l.rx_p.clone(),
                rx_n: l.rx_n.clone(),
                tx_p: l.tx_p.clone(),
                tx_n: l.tx_n.clone(),
                tx_disable: l.tx_disable.clone().unwrap_or_default(),
                has_tx_disable: l.tx_disable.is_some(),
                quad: l.quad.clone(),
                owns: slot.owner == i as u32,
                owner: slot.owner,
                qs: quad_suffix(slot.quad),
                refclk_mhz: num(q.refclk.mhz),
                qpll_fracn: qpll_fracn(q.refclk.mhz),
                nets: link_nets(t, i as u32, *slot)
                    .iter()
                    .map(|n| {
                        n.0.iter()
                            .map(|ep| format!("[get_bd_pins {ep}]"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect(),
            }
        })
        .collect();
    Ok((lanes, quads))
}

/// The quad slots of the links of `p` on `board` (for the board-level
/// lint; see [`lanes`]).
pub fn quad_slots(p: &Params, board: &Board) -> Result<Vec<QuadSlot>> {
    let (lanes, _) = lanes(p, board)?;
    let quads: Vec<&str> = lanes.iter().map(|l| l.quad.as_str()).collect();
    Ok(QuadSlot::plan(&quads))
}

/// The Verilog files of the node: every generated module file, then the
/// node top.
pub fn node_files(module_files: &[String]) -> Vec<String> {
    let mut files: Vec<String> = module_files.to_vec();
    files.sort();
    files.dedup();
    files.retain(|f| f != NODE_RTL_PATH);
    files.push(NODE_RTL_PATH.to_string());
    files
}

/// The node flow's TCL for `p` on `board`.
pub fn render_node_tcl(p: &Params, board: &Board, module_files: &[String]) -> Result<String> {
    let (lanes, quads) = lanes(p, board)?;
    let t = p.fpga.transceiver;
    // The block design's constant cells that the nets use.
    let constants = tr::CONSTANTS
        .iter()
        .copied()
        .filter(|(c, _, _)| {
            lanes
                .iter()
                .any(|l| l.nets.iter().any(|n| n.contains(&format!("{c}/dout"))))
        })
        .collect();
    Ok(with_newline(
        NodeTcl {
            name: &p.name,
            version: env!("CARGO_PKG_VERSION"),
            top: NODE_TOP,
            board: &board.name,
            board_part: &board.board_part,
            part: &p.fpga.part,
            links: lanes.len() as u32,
            gth: t == Transceiver::Gth,
            transceiver: t.name(),
            constants,
            user_data_bits: GT_USER_DATA_BITS,
            int_data_bits: GT_INT_DATA_BITS,
            lane_top: GTH_LANE_TOP,
            files: node_files(module_files),
            axi_data_bits: np::AXI_DATA_BITS,
            pl_mhz: num(p.clock.pl_mhz),
            reset_pin: &board.reset.pin,
            line_gbps: num(LINE_GBPS),
            quads: &quads,
            lanes: &lanes,
            regs_base: format!("0x{REGS_BASE:08X}"),
            regs_range: format!("0x{REGS_RANGE:X}"),
        }
        .render()?,
    ))
}

/// The transceiver user clock, MHz: line rate ÷ 64 (Aurora 64B/66B's
/// user_clk, and the GTH's TXUSRCLK2 with 64-bit user data and the
/// synchronous gearbox, which pauses one cycle in 33). The fastest user
/// clock either choice may run at, so the CDC bound of the XDC holds for
/// both.
pub fn user_clk_mhz() -> f64 {
    LINE_GBPS * 1000.0 / 64.0
}

/// The node XDC for `p` on `board`.
pub fn render_node_xdc(p: &Params, board: &Board) -> Result<String> {
    let (lanes, quads) = lanes(p, board)?;
    let fastest_mhz = user_clk_mhz().max(p.clock.pl_mhz);
    Ok(with_newline(
        NodeXdc {
            name: &p.name,
            version: env!("CARGO_PKG_VERSION"),
            board: &board.name,
            part: &p.fpga.part,
            pl_mhz: num(p.clock.pl_mhz),
            quads: &quads,
            reset_pin: &board.reset.pin,
            reset_iostandard: &board.reset.iostandard,
            lanes: &lanes,
            cdc_max_ns: format!("{:.3}", 1000.0 / fastest_mhz),
            user_clk_mhz: num(user_clk_mhz()),
            transceiver: p.fpga.transceiver.name(),
            cdc_sync: np::CDC_SYNC_CELLS,
            cdc_gray: np::CDC_GRAY_CELLS,
            cdc_sync_gray: np::CDC_GRAY_SYNC_CELLS,
            rst_sync: np::RESET_SYNC_CELLS,
        }
        .render()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_clock_is_line_rate_over_64() {
        assert_eq!(user_clk_mhz(), 161.1328125);
    }

    #[test]
    fn node_files_end_with_the_node_top_once() {
        let f = node_files(&[
            "rtl/b.v".into(),
            "rtl/a.v".into(),
            "rtl/a.v".into(),
            NODE_RTL_PATH.into(),
        ]);
        assert_eq!(f, ["rtl/a.v", "rtl/b.v", NODE_RTL_PATH]);
    }
}
