//! The transceiver side of the node flow (`fpga.transceiver`): what sits
//! between a node top's PHY ports (`link<i>_*`, [`crate::node_ports::LINK`],
//! in the transceiver's user-clock domain) and the serial pins, as one
//! connection list that both the Vivado block design (`vivado/node.tcl`,
//! rendered by `exanet_gen::node_flow`) and a Verilator lint of the same
//! wiring ([`render_board_lint`], node + lane adapters + black boxes of the
//! vendor IP with their documented port lists) are made from.
//!
//! Two choices, both carrying the link layer's control flag
//! (`PhyWord.ctrl`) exactly:
//! - **`gth`** (default): per link a `gtwizard_ultrascale` channel (GTH,
//!   10GBASE-R preset: 10.3125 Gb/s from 156.25 MHz, 64B/66B with the
//!   internal gearbox, 64-bit user data) and the lane adapter
//!   `exanet_gth_lane` (template `board/gth_lane.v`) around the project's
//!   `pcs66`: the flag is the 64B/66B sync header. In each quad the wizard
//!   of the quad's first link owns the common block (QPLL0); the others are
//!   channel-only and take its QPLL0 clocks and lock.
//! - **`aurora`**: per link an Aurora 64B/66B core in *framing* mode
//!   (AXI4-Stream with `tlast`): the flag is `tlast`. Every link-layer frame
//!   ends with a control word (its trailer) and a standalone control word
//!   is a one-word Aurora frame, so `ctrl` ↔ `tlast` word for word; each
//!   control word costs one more 66-bit block (Aurora's end-of-frame
//!   separator). In each quad the core of the quad's first link owns the
//!   common block.
//!
//! Links may span several quads (the default 8×4×4 torus needs 6 lanes;
//! the ZCU102 has 4 SFP+ cages in one quad and the FMC HPC0 lanes in
//! another): [`QuadSlot`] names, per link, the quad (its index in order of
//! first use, which also names the quad's reference-clock port and buffer)
//! and the link that owns that quad's common block.
//!
//! Port and CONFIG names of the vendor IP are from PG182 (UltraScale FPGAs
//! Transceivers Wizard), UG576 (GTH transceivers) and PG074 (Aurora
//! 64B/66B), cross-checked against public ZCU102 designs; what could not be
//! checked without Vivado is marked UNVERIFIED where it is used.

use crate::node_ports::{i, node_ports, o, Dir, NamedPort, Port, NODE_TOP};
use anyhow::{bail, Result};
use askama::Template;
use exanet_sim::link::pcs::{GEARBOX_SEQ_BITS, GEARBOX_SEQ_MAX, HDR_CTRL, IDLE_WORD};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What carries each link between FPGAs (`fpga.transceiver`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transceiver {
    /// Raw GTH channel (gtwizard_ultrascale) + `pcs66`: the flag is the
    /// sync header.
    Gth,
    /// Aurora 64B/66B, framing mode: the flag is `tlast`.
    Aurora,
}

impl Transceiver {
    /// The config text, as `fpga.transceiver` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Transceiver::Gth => "gth",
            Transceiver::Aurora => "aurora",
        }
    }
}

/// Module name of the GTH lane adapter.
pub const GTH_LANE_TOP: &str = "exanet_gth_lane";
/// Width of the wizard's TXHEADER/RXHEADER ports (PG182: 6 bits per
/// channel; 64B/66B uses bits 1:0).
pub const GT_HEADER_BITS: u32 = 6;
/// Width of RXDATAVALID/RXHEADERVALID (PG182: 2 bits; bit 0 in 64B/66B
/// with a 64-bit user interface).
pub const GT_VALID_BITS: u32 = 2;

/// The lane adapter's ports (`board/gth_lane.v` declares exactly these).
pub const GTH_LANE_PORTS: &[Port] = &[
    // TX user clock (TXUSRCLK2; RXUSRCLK2 is the same clock).
    i("clk", 1),
    // Wizard status: reset done (TX and RX), TX PMA reset done.
    i("gt_tx_done", 1),
    i("gt_rx_done", 1),
    i("gt_txpmaresetdone", 1),
    // Holds the wizard's TX user-clocking helper in reset until the TX PMA
    // reset is done (PG182).
    o("gt_userclk_tx_reset", 1),
    // Node side (the node's link<i>_* ports).
    o("channel_up", 1),
    i("tx_tdata", 64),
    i("tx_tvalid", 1),
    o("tx_tready", 1),
    i("tx_ctrl", 1),
    o("rx_tdata", 64),
    o("rx_tvalid", 1),
    o("rx_ctrl", 1),
    // Wizard side.
    o("gt_txdata", 64),
    o("gt_txheader", GT_HEADER_BITS),
    o("gt_txsequence", GEARBOX_SEQ_BITS),
    i("gt_rxdata", 64),
    i("gt_rxheader", GT_HEADER_BITS),
    i("gt_rxheadervalid", GT_VALID_BITS),
    i("gt_rxdatavalid", GT_VALID_BITS),
    o("gt_rxgearboxslip", 1),
    // Status (pcs66).
    o("block_lock", 1),
    o("cnt_invalid_headers", 32),
    o("cnt_lock_losses", 32),
];

/// `gtwizard_ultrascale`, one GTH channel in 64B/66B gearbox mode with a
/// 64-bit user interface (PG182 port names), the ports of both variants:
/// reset controller and TX user clocking in the core, RX user clocking in
/// the example design (driven here from the TX user clock: the RX elastic
/// buffer is on, so RXUSRCLK may be the TX clock, UG576).
pub const GTWIZ_PORTS: &[Port] = &[
    i("gtwiz_userclk_tx_reset_in", 1),
    o("gtwiz_userclk_tx_srcclk_out", 1),
    o("gtwiz_userclk_tx_usrclk_out", 1),
    o("gtwiz_userclk_tx_usrclk2_out", 1),
    o("gtwiz_userclk_tx_active_out", 1),
    i("gtwiz_userclk_rx_active_in", 1),
    i("gtwiz_reset_clk_freerun_in", 1),
    i("gtwiz_reset_all_in", 1),
    i("gtwiz_reset_tx_pll_and_datapath_in", 1),
    i("gtwiz_reset_tx_datapath_in", 1),
    i("gtwiz_reset_rx_pll_and_datapath_in", 1),
    i("gtwiz_reset_rx_datapath_in", 1),
    o("gtwiz_reset_rx_cdr_stable_out", 1),
    o("gtwiz_reset_tx_done_out", 1),
    o("gtwiz_reset_rx_done_out", 1),
    i("gtwiz_userdata_tx_in", 64),
    o("gtwiz_userdata_rx_out", 64),
    i("gthrxn_in", 1),
    i("gthrxp_in", 1),
    o("gthtxn_out", 1),
    o("gthtxp_out", 1),
    i("rxgearboxslip_in", 1),
    i("rxusrclk_in", 1),
    i("rxusrclk2_in", 1),
    i("txheader_in", GT_HEADER_BITS),
    i("txsequence_in", GEARBOX_SEQ_BITS),
    o("gtpowergood_out", 1),
    o("rxdatavalid_out", GT_VALID_BITS),
    o("rxheader_out", GT_HEADER_BITS),
    o("rxheadervalid_out", GT_VALID_BITS),
    o("rxoutclk_out", 1),
    o("rxpmaresetdone_out", 1),
    o("rxprgdivresetdone_out", 1),
    o("rxstartofseq_out", GT_VALID_BITS),
    o("txpmaresetdone_out", 1),
    o("txprgdivresetdone_out", 1),
];

/// Ports only the wizard that owns the quad's common block has
/// (LOCATE_COMMON = CORE, optional port `qpll0lock_out` enabled).
pub const GTWIZ_COMMON_PORTS: &[Port] = &[
    i("gtrefclk00_in", 1),
    o("qpll0lock_out", 1),
    o("qpll0outclk_out", 1),
    o("qpll0outrefclk_out", 1),
];

/// Ports only a channel-only wizard has (LOCATE_COMMON = EXAMPLE_DESIGN):
/// the shared QPLL's clocks and lock in, its reset request out.
pub const GTWIZ_CHANNEL_PORTS: &[Port] = &[
    i("gtwiz_reset_qpll0lock_in", 1),
    o("gtwiz_reset_qpll0reset_out", 1),
    i("qpll0clk_in", 1),
    i("qpll0refclk_in", 1),
    i("qpll1clk_in", 1),
    i("qpll1refclk_in", 1),
];

/// Aurora 64B/66B, one lane, framing mode, no flow control (PG074 port
/// names), the ports of both support levels.
pub const AURORA_PORTS: &[Port] = &[
    i("init_clk", 1),
    i("reset_pb", 1),
    i("pma_init", 1),
    i("power_down", 1),
    i("loopback", 3),
    i("s_axi_tx_tdata", 64),
    i("s_axi_tx_tkeep", 8),
    i("s_axi_tx_tlast", 1),
    i("s_axi_tx_tvalid", 1),
    o("s_axi_tx_tready", 1),
    o("m_axi_rx_tdata", 64),
    o("m_axi_rx_tkeep", 8),
    o("m_axi_rx_tlast", 1),
    o("m_axi_rx_tvalid", 1),
    i("rxp", 1),
    i("rxn", 1),
    o("txp", 1),
    o("txn", 1),
    o("user_clk_out", 1),
    o("channel_up", 1),
    o("lane_up", 1),
    o("hard_err", 1),
    o("soft_err", 1),
];

/// Ports of the Aurora core with shared logic in the core (SupportLevel 1):
/// the reference clock pins in, the quad's QPLL out.
pub const AURORA_COMMON_PORTS: &[Port] = &[
    i("gt_refclk1_p", 1),
    i("gt_refclk1_n", 1),
    o("gt_refclk1_out", 1),
    o("gt_qpllclk_quad1_out", 1),
    o("gt_qpllrefclk_quad1_out", 1),
    o("gt_qplllock_quad1_out", 1),
];

/// Ports of an Aurora core with shared logic outside (SupportLevel 0).
pub const AURORA_SHARED_PORTS: &[Port] = &[
    i("refclk1_in", 1),
    i("gt_qpllclk_quad1_in", 1),
    i("gt_qpllrefclk_quad1_in", 1),
    i("gt_qplllock_quad1_in", 1),
];

/// Block-design cells outside the transceiver wiring whose pins the
/// connection list uses: the PS's PL clock, the reset generator's active-
/// high reset, the GT reference-clock buffer (util_ds_buf, IBUFDSGTE).
pub const OUTSIDE_PINS: &[(&str, Port)] = &[
    ("ps", o("pl_clk0", 1)),
    ("rstgen", o("peripheral_reset", 1)),
    ("refclk_buf", o("IBUF_OUT", 1)),
];

/// The pin `pin` of a cell outside the lint named `cell` (the reference
/// clock buffers of the second quad on are `refclk_buf<q>`).
fn outside_pin(cell: &str, pin: &str) -> Option<Port> {
    let base =
        if cell.starts_with("refclk_buf") && cell["refclk_buf".len()..].parse::<u32>().is_ok() {
            "refclk_buf"
        } else {
            cell
        };
    OUTSIDE_PINS
        .iter()
        .find(|(c, p)| *c == base && p.name == pin)
        .map(|(_, p)| *p)
}

/// Where a link's transceiver sits: its quad (index in order of first use
/// over the links) and the link whose core owns that quad's common block
/// (the quad's first link).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuadSlot {
    /// Quad index, 0 for the first quad the links use.
    pub quad: u32,
    /// The link owning the quad's common block.
    pub owner: u32,
}

impl QuadSlot {
    /// The slots of `quads[l]` (any quad key per link, in link order).
    pub fn plan<K: PartialEq>(quads: &[K]) -> Vec<QuadSlot> {
        let mut seen: Vec<(&K, u32)> = Vec::new();
        quads
            .iter()
            .enumerate()
            .map(|(l, k)| {
                let q = match seen.iter().position(|(s, _)| *s == k) {
                    Some(q) => q,
                    None => {
                        seen.push((k, l as u32));
                        seen.len() - 1
                    }
                };
                QuadSlot {
                    quad: q as u32,
                    owner: seen[q].1,
                }
            })
            .collect()
    }

    /// `links` links in one quad (link 0 owns it).
    pub fn one_quad(links: u32) -> Vec<QuadSlot> {
        (0..links).map(|_| QuadSlot { quad: 0, owner: 0 }).collect()
    }
}

/// The block design's suffix of quad `q`'s reference-clock port and buffer
/// (`gt_refclk`, `refclk_buf` for the first quad; `gt_refclk1`, … after).
pub fn quad_suffix(q: u32) -> String {
    if q == 0 {
        String::new()
    } else {
        q.to_string()
    }
}

/// A constant cell of the block design (`xlconstant`): name, width, value.
pub const CONSTANTS: &[(&str, u32, u64)] =
    &[("zero1", 1, 0), ("zero3", 3, 0), ("keep_all", 8, 0xFF)];

/// The node link port → PHY pin of each choice: the cell prefix (`lane`
/// or `aurora`, suffixed `_<link>`) and pin. Every link port has one.
pub fn phy_pin(t: Transceiver, link_port: &str) -> Option<(&'static str, &'static str)> {
    match t {
        Transceiver::Gth => {
            let pin = match link_port {
                "channel_up" => "channel_up",
                "tx_tdata" => "tx_tdata",
                "tx_tvalid" => "tx_tvalid",
                "tx_tready" => "tx_tready",
                "tx_ctrl" => "tx_ctrl",
                "rx_tdata" => "rx_tdata",
                "rx_tvalid" => "rx_tvalid",
                "rx_ctrl" => "rx_ctrl",
                // The user clock is the wizard's TXUSRCLK2 (see `link_nets`).
                _ => return None,
            };
            Some(("lane", pin))
        }
        Transceiver::Aurora => {
            let pin = match link_port {
                "user_clk" => "user_clk_out",
                "channel_up" => "channel_up",
                "tx_tdata" => "s_axi_tx_tdata",
                "tx_tvalid" => "s_axi_tx_tvalid",
                "tx_tready" => "s_axi_tx_tready",
                // Framing mode: a control word ends an Aurora frame.
                "tx_ctrl" => "s_axi_tx_tlast",
                "rx_tdata" => "m_axi_rx_tdata",
                "rx_tvalid" => "m_axi_rx_tvalid",
                "rx_ctrl" => "m_axi_rx_tlast",
                _ => return None,
            };
            Some(("aurora", pin))
        }
    }
}

/// One net of the block design: `cell/pin` endpoints, the driver first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Net(pub Vec<String>);

fn net(pins: &[String]) -> Net {
    Net(pins.to_vec())
}

/// The nets of link `l` for transceiver `t`, in quad slot `slot`:
/// everything the block design connects by pin for that link (interface
/// connections and board ports are the template's).
pub fn link_nets(t: Transceiver, l: u32, slot: QuadSlot) -> Vec<Net> {
    let owns = slot.owner == l;
    let mut nets = Vec::new();
    let node = |p: &str| format!("node/link{l}_{p}");
    // The node's PHY ports.
    for p in crate::node_ports::LINK {
        if let Some((cell, pin)) = phy_pin(t, p.name) {
            let phy = format!("{cell}_{l}/{pin}");
            nets.push(match p.dir {
                Dir::In => net(&[phy, node(p.name)]),
                Dir::Out => net(&[node(p.name), phy]),
            });
        }
    }
    match t {
        Transceiver::Gth => {
            let gt = |p: &str| format!("gt_{l}/{p}");
            let lane = |p: &str| format!("lane_{l}/{p}");
            nets.extend([
                net(&["ps/pl_clk0".into(), gt("gtwiz_reset_clk_freerun_in")]),
                net(&["rstgen/peripheral_reset".into(), gt("gtwiz_reset_all_in")]),
                net(&[
                    "zero1/dout".into(),
                    gt("gtwiz_reset_tx_pll_and_datapath_in"),
                    gt("gtwiz_reset_tx_datapath_in"),
                    gt("gtwiz_reset_rx_pll_and_datapath_in"),
                    gt("gtwiz_reset_rx_datapath_in"),
                ]),
                net(&[lane("gt_userclk_tx_reset"), gt("gtwiz_userclk_tx_reset_in")]),
                net(&[gt("txpmaresetdone_out"), lane("gt_txpmaresetdone")]),
                net(&[gt("gtwiz_userclk_tx_usrclk_out"), gt("rxusrclk_in")]),
                net(&[
                    gt("gtwiz_userclk_tx_usrclk2_out"),
                    gt("rxusrclk2_in"),
                    lane("clk"),
                    node("user_clk"),
                ]),
                net(&[
                    gt("gtwiz_userclk_tx_active_out"),
                    gt("gtwiz_userclk_rx_active_in"),
                ]),
                net(&[gt("gtwiz_reset_tx_done_out"), lane("gt_tx_done")]),
                net(&[gt("gtwiz_reset_rx_done_out"), lane("gt_rx_done")]),
                net(&[lane("gt_txdata"), gt("gtwiz_userdata_tx_in")]),
                net(&[lane("gt_txheader"), gt("txheader_in")]),
                net(&[lane("gt_txsequence"), gt("txsequence_in")]),
                net(&[gt("gtwiz_userdata_rx_out"), lane("gt_rxdata")]),
                net(&[gt("rxheader_out"), lane("gt_rxheader")]),
                net(&[gt("rxheadervalid_out"), lane("gt_rxheadervalid")]),
                net(&[gt("rxdatavalid_out"), lane("gt_rxdatavalid")]),
                net(&[lane("gt_rxgearboxslip"), gt("rxgearboxslip_in")]),
            ]);
            if owns {
                nets.push(net(&[
                    format!("refclk_buf{}/IBUF_OUT", quad_suffix(slot.quad)),
                    gt("gtrefclk00_in"),
                ]));
            } else {
                // Channel-only: QPLL0 of the quad owner's wizard (its reset
                // request stays open: the owner's reset controller owns the
                // QPLL). QPLL1 is not used (tied 0).
                let o = |p: &str| format!("gt_{}/{p}", slot.owner);
                nets.extend([
                    net(&[o("qpll0outclk_out"), gt("qpll0clk_in")]),
                    net(&[o("qpll0outrefclk_out"), gt("qpll0refclk_in")]),
                    net(&[o("qpll0lock_out"), gt("gtwiz_reset_qpll0lock_in")]),
                    net(&["zero1/dout".into(), gt("qpll1clk_in"), gt("qpll1refclk_in")]),
                ]);
            }
        }
        Transceiver::Aurora => {
            let a = |p: &str| format!("aurora_{l}/{p}");
            nets.extend([
                net(&["ps/pl_clk0".into(), a("init_clk")]),
                net(&[
                    "rstgen/peripheral_reset".into(),
                    a("reset_pb"),
                    a("pma_init"),
                ]),
                // Every word is 8 full bytes.
                net(&["keep_all/dout".into(), a("s_axi_tx_tkeep")]),
                net(&["zero1/dout".into(), a("power_down")]),
                net(&["zero3/dout".into(), a("loopback")]),
            ]);
            if !owns {
                let o = |p: &str| format!("aurora_{}/{p}", slot.owner);
                nets.extend([
                    net(&[o("gt_qpllclk_quad1_out"), a("gt_qpllclk_quad1_in")]),
                    net(&[o("gt_qpllrefclk_quad1_out"), a("gt_qpllrefclk_quad1_in")]),
                    net(&[o("gt_qplllock_quad1_out"), a("gt_qplllock_quad1_in")]),
                    net(&[o("gt_refclk1_out"), a("refclk1_in")]),
                ]);
            }
        }
    }
    nets
}

/// A cell the lint instantiates: instance name, module, ports.
struct Cell {
    name: String,
    module: String,
    ports: Vec<(String, Dir, u32)>,
}

fn ports_of(lists: &[&[Port]]) -> Vec<(String, Dir, u32)> {
    lists
        .iter()
        .flat_map(|l| l.iter())
        .map(|p| (p.name.to_string(), p.dir, p.width))
        .collect()
}

/// Black-box module names of the vendor IP in the lint (Vivado names the
/// generated IP after the block design; only the port lists matter here).
pub const GTWIZ_COMMON_BB: &str = "exanet_bb_gtwizard_common";
/// See [`GTWIZ_COMMON_BB`].
pub const GTWIZ_CHANNEL_BB: &str = "exanet_bb_gtwizard_channel";
/// See [`GTWIZ_COMMON_BB`].
pub const AURORA_COMMON_BB: &str = "exanet_bb_aurora_common";
/// See [`GTWIZ_COMMON_BB`].
pub const AURORA_SHARED_BB: &str = "exanet_bb_aurora_shared";
/// Top module of the board-level lint.
pub const BOARD_LINT_TOP: &str = "exanet_board_lint";

fn cells(t: Transceiver, slots: &[QuadSlot]) -> Vec<Cell> {
    let links = slots.len() as u32;
    let node: Vec<(String, Dir, u32)> = node_ports(links)
        .into_iter()
        .map(|p: NamedPort| (p.name, p.dir, p.width))
        .collect();
    let mut out = vec![Cell {
        name: "node".into(),
        module: NODE_TOP.into(),
        ports: node,
    }];
    for (l, slot) in (0..links).zip(slots) {
        let owns = slot.owner == l;
        match t {
            Transceiver::Gth => {
                out.push(Cell {
                    name: format!("lane_{l}"),
                    module: GTH_LANE_TOP.into(),
                    ports: ports_of(&[GTH_LANE_PORTS]),
                });
                out.push(Cell {
                    name: format!("gt_{l}"),
                    module: if owns {
                        GTWIZ_COMMON_BB
                    } else {
                        GTWIZ_CHANNEL_BB
                    }
                    .into(),
                    ports: if owns {
                        ports_of(&[GTWIZ_PORTS, GTWIZ_COMMON_PORTS])
                    } else {
                        ports_of(&[GTWIZ_PORTS, GTWIZ_CHANNEL_PORTS])
                    },
                });
            }
            Transceiver::Aurora => out.push(Cell {
                name: format!("aurora_{l}"),
                module: if owns {
                    AURORA_COMMON_BB
                } else {
                    AURORA_SHARED_BB
                }
                .into(),
                ports: if owns {
                    ports_of(&[AURORA_PORTS, AURORA_COMMON_PORTS])
                } else {
                    ports_of(&[AURORA_PORTS, AURORA_SHARED_PORTS])
                },
            }),
        }
    }
    out
}

/// A Verilog port declaration.
fn decl(dir: Dir, width: u32, name: &str) -> String {
    let d = match dir {
        Dir::In => "input  wire",
        Dir::Out => "output wire",
    };
    if width == 1 {
        format!("{d} {name}")
    } else {
        format!("{d} [{}:0] {name}", width - 1)
    }
}

/// One instance of the lint top.
struct Inst {
    module: String,
    name: String,
    conns: Vec<(String, String)>,
}

#[derive(Template)]
#[template(path = "board/board_lint.v")]
struct BoardLint {
    top: String,
    transceiver: &'static str,
    ports: Vec<String>,
    wires: Vec<String>,
    insts: Vec<Inst>,
}

#[derive(Template)]
#[template(path = "board/blackbox.v")]
struct BlackBox {
    module: String,
    what: String,
    ports: Vec<String>,
}

#[derive(Template)]
#[template(path = "board/gth_lane.v")]
struct GthLane {
    top: &'static str,
    pcs: String,
    ports: Vec<String>,
    hdr_bits: u32,
    valid_bits: u32,
    seq_bits: u32,
    seq_max: u32,
    idle_word: String,
    hdr_ctrl: String,
}

/// `text` ending with exactly one newline (askama drops a template's
/// last one; Verilator's EOFNEWLINE wants it).
fn with_newline(text: String) -> String {
    format!("{}\n", text.trim_end_matches('\n'))
}

#[derive(Template)]
#[template(path = "board/gth_lane_pair.v")]
struct GthLanePair {
    top: &'static str,
    lane: &'static str,
    ports: Vec<String>,
    sides: Vec<&'static str>,
    conns: Vec<&'static str>,
}

/// Top module of the lane adapters' co-simulation ([`emit_gth_lane_pair`]).
pub const GTH_LANE_PAIR_TOP: &str = "exanet_gth_lane_pair";

/// The co-simulation top of two lane adapters `a` and `b` on one clock
/// (`clock`; template `board/gth_lane_pair.v`): pcs66 with `p`, the adapter,
/// then the pair, whose ports are every adapter port but `clk`, prefixed
/// `a_` / `b_`.
pub fn emit_gth_lane_pair(p: &crate::link::pcs66::PcsParams) -> Result<crate::emit::Emitted> {
    let pcs = crate::link::pcs66::emit_pcs66(p)?;
    let lane = render_gth_lane(&pcs.top)?;
    let conns: Vec<&'static str> = GTH_LANE_PORTS
        .iter()
        .map(|q| q.name)
        .filter(|n| *n != "clk")
        .collect();
    let sides = vec!["a", "b"];
    let mut ports = Vec::new();
    for x in &sides {
        for q in GTH_LANE_PORTS.iter().filter(|q| q.name != "clk") {
            ports.push(decl(q.dir, q.width, &format!("{x}_{}", q.name)));
        }
    }
    let pair = with_newline(
        GthLanePair {
            top: GTH_LANE_PAIR_TOP,
            lane: GTH_LANE_TOP,
            ports,
            sides,
            conns,
        }
        .render()?,
    );
    let mut modules = pcs.modules;
    modules.push((GTH_LANE_TOP.to_string(), lane));
    modules.push((GTH_LANE_PAIR_TOP.to_string(), pair));
    Ok(crate::emit::Emitted {
        top: GTH_LANE_PAIR_TOP.to_string(),
        modules,
    })
}

/// The GTH lane adapter `exanet_gth_lane` around the pcs66 module `pcs`
/// (its emitted top name).
pub fn render_gth_lane(pcs: &str) -> Result<String> {
    Ok(with_newline(
        GthLane {
            top: GTH_LANE_TOP,
            pcs: pcs.to_string(),
            ports: GTH_LANE_PORTS
                .iter()
                .map(|p| decl(p.dir, p.width, p.name))
                .collect(),
            hdr_bits: GT_HEADER_BITS,
            valid_bits: GT_VALID_BITS,
            seq_bits: GEARBOX_SEQ_BITS,
            seq_max: GEARBOX_SEQ_MAX,
            idle_word: format!("64'h{IDLE_WORD:016x}"),
            hdr_ctrl: format!("2'b{HDR_CTRL:02b}"),
        }
        .render()?,
    ))
}

fn black_box(module: &str, what: &str, ports: &[(String, Dir, u32)]) -> Result<String> {
    Ok(with_newline(
        BlackBox {
            module: module.to_string(),
            what: what.to_string(),
            ports: ports.iter().map(|(n, d, w)| decl(*d, *w, n)).collect(),
        }
        .render()?,
    ))
}

/// The board-level lint for links in quad slots `slots` (one per link) on
/// transceiver `t`: one Verilog
/// text holding the black boxes of the vendor IP and the top
/// [`BOARD_LINT_TOP`], which instantiates the node, the lane adapters (GTH)
/// and the IP black boxes and wires them by [`link_nets`] exactly as the
/// block design does; every pin on no net is a port of the top (the PS,
/// the serial pins, status). Checked here: every endpoint names a pin that
/// exists, every net has exactly one driver (an output, a constant or a
/// block-design cell outside the lint) and one width; Verilator then checks
/// the instances against the modules (the node and adapter RTL are read
/// with it).
pub fn render_board_lint(t: Transceiver, slots: &[QuadSlot]) -> Result<Vec<(String, String)>> {
    let mut nets: Vec<Net> = Vec::new();
    for (l, slot) in slots.iter().enumerate() {
        nets.extend(link_nets(t, l as u32, *slot));
    }
    board_lint_of(t, slots, &nets)
}

/// [`render_board_lint`] over the nets `nets`: `(module, text)` per file.
fn board_lint_of(
    t: Transceiver,
    slots: &[QuadSlot],
    nets: &[Net],
) -> Result<Vec<(String, String)>> {
    let cells = cells(t, slots);
    // Pin → (net wire) for instantiated cells; the top's extra ports.
    let mut wire_of: BTreeMap<String, String> = BTreeMap::new();
    let mut wires = Vec::new();
    let mut top_ports = Vec::new();
    let find = |ep: &str| -> Result<(Option<Dir>, u32, bool)> {
        let (cell, pin) = ep
            .split_once('/')
            .ok_or_else(|| anyhow::anyhow!("net endpoint `{ep}` is not cell/pin"))?;
        if let Some(c) = cells.iter().find(|c| c.name == cell) {
            let Some((_, d, w)) = c.ports.iter().find(|(n, _, _)| n == pin) else {
                bail!("net endpoint `{ep}`: `{}` has no pin `{pin}`", c.module);
            };
            return Ok((Some(*d), *w, false));
        }
        if let Some(p) = outside_pin(cell, pin) {
            return Ok((Some(p.dir), p.width, true));
        }
        if let Some((_, w, _)) = CONSTANTS.iter().find(|(c, _, _)| *c == cell) {
            if pin == "dout" {
                return Ok((None, *w, true));
            }
        }
        bail!("net endpoint `{ep}`: no cell `{cell}` with that pin in the transceiver wiring")
    };
    let mut consts_used = BTreeMap::new();
    let mut outside_used = BTreeMap::new();
    for (k, n) in nets.iter().enumerate() {
        let mut drivers = Vec::new();
        let mut width = None;
        for ep in &n.0 {
            let (dir, w, outside) = find(ep.as_str())?;
            if *width.get_or_insert(w) != w {
                bail!(
                    "net {k} ({}): `{ep}` is {w} bit(s) wide, `{}` {}",
                    n.0.join(" "),
                    n.0[0],
                    width.unwrap_or(0)
                );
            }
            // A constant, a pin of a cell outside the lint, or an output
            // drives the net.
            if dir.is_none() || outside || dir == Some(Dir::Out) {
                drivers.push(ep.clone());
            }
        }
        if drivers.len() != 1 || drivers[0] != n.0[0] {
            bail!(
                "net {k} ({}): needs exactly one driver, listed first; drivers: {drivers:?}",
                n.0.join(" ")
            );
        }
        let w = width.unwrap_or(1);
        let wire = format!("n_{}", n.0[0].replace('/', "_"));
        let driver = &n.0[0];
        let (cell, pin) = driver.split_once('/').unwrap_or((driver.as_str(), ""));
        if let Some((_, cw, v)) = CONSTANTS.iter().find(|(c, _, _)| *c == cell) {
            consts_used.insert(wire.clone(), format!("{cw}'h{v:x}"));
        } else if outside_pin(cell, pin).is_some() {
            outside_used.insert(wire.clone(), w);
        } else if !wire_of.contains_key(driver) {
            wires.push(if w == 1 {
                format!("wire {wire};")
            } else {
                format!("wire [{}:0] {wire};", w - 1)
            });
        }
        for ep in &n.0 {
            if let Some(prev) = wire_of.insert(ep.clone(), wire.clone()) {
                if prev != wire {
                    bail!("`{ep}` is on two nets ({prev}, {wire})");
                }
            }
        }
    }
    for (wire, value) in &consts_used {
        let w: u32 = value.split('\'').next().unwrap_or("1").parse().unwrap_or(1);
        wires.push(if w == 1 {
            format!("wire {wire} = {value};")
        } else {
            format!("wire [{}:0] {wire} = {value};", w - 1)
        });
    }
    for (wire, w) in &outside_used {
        top_ports.push(decl(Dir::In, *w, wire));
    }
    let mut insts = Vec::new();
    for c in &cells {
        let mut conns = Vec::new();
        for (pin, dir, w) in &c.ports {
            let ep = format!("{}/{pin}", c.name);
            let sig = match wire_of.get(&ep) {
                Some(wire) => wire.clone(),
                None => {
                    let name = format!("{}_{pin}", c.name);
                    top_ports.push(decl(*dir, *w, &name));
                    name
                }
            };
            conns.push((pin.clone(), sig));
        }
        insts.push(Inst {
            module: c.module.clone(),
            name: c.name.clone(),
            conns,
        });
    }
    let mut files = Vec::new();
    let mut seen = Vec::new();
    for c in &cells {
        if c.module == NODE_TOP || c.module == GTH_LANE_TOP || seen.contains(&c.module) {
            continue;
        }
        seen.push(c.module.clone());
        let what = match c.module.as_str() {
            GTWIZ_COMMON_BB => {
                "gtwizard_ultrascale, GTH 10GBASE-R preset, owns the quad's common block (PG182)"
            }
            GTWIZ_CHANNEL_BB => "gtwizard_ultrascale, GTH 10GBASE-R preset, channel only (PG182)",
            AURORA_COMMON_BB => "aurora_64b66b, 1 lane, framing, shared logic in the core (PG074)",
            _ => "aurora_64b66b, 1 lane, framing, shared logic outside (PG074)",
        };
        files.push((c.module.clone(), black_box(&c.module, what, &c.ports)?));
    }
    files.push((
        BOARD_LINT_TOP.to_string(),
        with_newline(
            BoardLint {
                top: BOARD_LINT_TOP.to_string(),
                transceiver: t.name(),
                ports: top_ports,
                wires,
                insts,
            }
            .render()?,
        ),
    ));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_phy_port_has_a_pin_but_the_gth_user_clock() {
        for t in [Transceiver::Gth, Transceiver::Aurora] {
            for p in crate::node_ports::LINK {
                let pin = phy_pin(t, p.name);
                let expect_none = t == Transceiver::Gth && p.name == "user_clk";
                assert_eq!(pin.is_none(), expect_none, "{t:?} {}", p.name);
            }
        }
        // Aurora framing: the flag rides in tlast.
        assert_eq!(
            phy_pin(Transceiver::Aurora, "tx_ctrl"),
            Some(("aurora", "s_axi_tx_tlast"))
        );
        assert_eq!(
            phy_pin(Transceiver::Aurora, "rx_ctrl"),
            Some(("aurora", "m_axi_rx_tlast"))
        );
    }

    /// The adapter and its co-simulation pair are lint-clean (Verilator
    /// -Wall), and the pair carries every adapter port but `clk` per side.
    #[test]
    fn lane_pair_is_lint_clean() {
        let e = emit_gth_lane_pair(&crate::link::pcs66::PcsParams { slip_wait: 32 }).unwrap();
        crate::emit::assert_lint_clean(&e);
        let (_, top) = e.modules.last().unwrap();
        for q in GTH_LANE_PORTS.iter().filter(|q| q.name != "clk") {
            assert!(top.contains(&format!(".{0}(a_{0})", q.name)), "{}", q.name);
            assert!(top.contains(&format!(".{0}(b_{0})", q.name)), "{}", q.name);
        }
    }

    #[test]
    fn lint_renders_for_both_and_every_node_link_port_is_wired() {
        for t in [Transceiver::Gth, Transceiver::Aurora] {
            let files = render_board_lint(t, &QuadSlot::one_quad(4)).unwrap();
            let (top, v) = files.last().unwrap();
            assert_eq!(top, BOARD_LINT_TOP);
            for l in 0..4 {
                for p in crate::node_ports::LINK {
                    let conn = format!(".link{l}_{}(n_", p.name);
                    assert!(v.contains(&conn), "{t:?}: {conn} not on a net");
                }
            }
            // Black boxes: the owner of the common block and the sharers.
            assert_eq!(files.len(), 3, "{t:?}");
            for (m, text) in &files {
                assert!(text.ends_with('\n'), "{m}: no newline at the end");
                assert!(!text.ends_with("\n\n"), "{m}: blank last line");
                // Verilator reads `// verilator ...` as a directive.
                for l in text.lines() {
                    assert!(!l.to_lowercase().starts_with("// verilator"), "{m}: {l}");
                }
            }
        }
    }

    #[test]
    fn quad_slots_name_each_quads_first_link_as_owner() {
        let s = QuadSlot::plan(&["A", "A", "B", "A", "B", "C"]);
        let got: Vec<(u32, u32)> = s.iter().map(|q| (q.quad, q.owner)).collect();
        assert_eq!(got, [(0, 0), (0, 0), (1, 2), (0, 0), (1, 2), (2, 5)]);
        assert_eq!(QuadSlot::plan(&[7; 3]), QuadSlot::one_quad(3));
        assert_eq!(
            (quad_suffix(0), quad_suffix(2)),
            (String::new(), "2".to_string())
        );
    }

    /// Six links over two quads (the default torus on the ZCU102: four
    /// SFP+ lanes, two FMC lanes): each quad's first link owns its common
    /// block and its own reference clock buffer; the others take their
    /// quad owner's PLL, never the other quad's.
    #[test]
    fn links_over_two_quads_take_their_own_quads_pll() {
        let slots = QuadSlot::plan(&[0, 0, 0, 0, 1, 1]);
        let gth: Vec<Net> = (0..6)
            .flat_map(|l| link_nets(Transceiver::Gth, l, slots[l as usize]))
            .collect();
        let has = |nets: &[Net], a: &str, b: &str| {
            nets.iter()
                .any(|n| n.0.first().map(String::as_str) == Some(a) && n.0.iter().any(|x| x == b))
        };
        assert!(has(&gth, "refclk_buf/IBUF_OUT", "gt_0/gtrefclk00_in"));
        assert!(has(&gth, "refclk_buf1/IBUF_OUT", "gt_4/gtrefclk00_in"));
        assert!(has(&gth, "gt_0/qpll0outclk_out", "gt_3/qpll0clk_in"));
        assert!(has(&gth, "gt_4/qpll0outclk_out", "gt_5/qpll0clk_in"));
        assert!(!has(&gth, "gt_0/qpll0outclk_out", "gt_5/qpll0clk_in"));
        let aur: Vec<Net> = (0..6)
            .flat_map(|l| link_nets(Transceiver::Aurora, l, slots[l as usize]))
            .collect();
        assert!(has(&aur, "aurora_4/gt_refclk1_out", "aurora_5/refclk1_in"));
        assert!(!aur
            .iter()
            .any(|n| n.0.iter().any(|x| x == "aurora_4/refclk1_in")));
        for t in [Transceiver::Gth, Transceiver::Aurora] {
            let files = render_board_lint(t, &slots).unwrap();
            let (_, v) = files.last().unwrap();
            // Two owners of a common block, four sharers.
            let owners = v
                .matches(if t == Transceiver::Gth {
                    GTWIZ_COMMON_BB
                } else {
                    AURORA_COMMON_BB
                })
                .count();
            assert!(owners >= 2, "{t:?}: {owners}");
            if t == Transceiver::Gth {
                assert!(
                    v.contains("n_refclk_buf1_IBUF_OUT"),
                    "second quad's clock is a port"
                );
            }
        }
    }

    /// The structural checks name what is wrong: a pin that does not exist,
    /// a net with two drivers, a width mismatch.
    #[test]
    fn a_wrong_pin_two_drivers_or_two_widths_are_refused() {
        let t = Transceiver::Gth;
        let one = QuadSlot::one_quad(1);
        let mut nets = link_nets(t, 0, one[0]);
        fn e(extra: Net, nets: &[Net]) -> String {
            let mut n = nets.to_vec();
            n.push(extra);
            format!(
                "{:#}",
                board_lint_of(Transceiver::Gth, &QuadSlot::one_quad(1), &n).unwrap_err()
            )
        }
        let bad = e(Net(vec!["gt_0/rxheader_outt".into()]), &nets);
        assert!(bad.contains("has no pin `rxheader_outt`"), "{bad}");
        let bad = e(
            Net(vec!["gt_0/gthtxp_out".into(), "gt_0/rxoutclk_out".into()]),
            &nets,
        );
        assert!(bad.contains("exactly one driver"), "{bad}");
        let bad = e(
            Net(vec!["gt_0/rxheader_out".into(), "lane_0/tx_tvalid".into()]),
            &nets,
        );
        assert!(bad.contains("bit(s) wide"), "{bad}");
        nets.push(Net(vec![
            "gt_0/rxoutclk_out".into(),
            "lane_0/gt_rx_done".into(),
        ]));
        let bad = format!("{:#}", board_lint_of(t, &one, &nets).unwrap_err());
        assert!(bad.contains("on two nets"), "{bad}");
    }
}
