//! `node`: the whole node of one FPGA, top module `exanet_node`
//! ([`NODE_TOP`]), with exactly the ports of [`crate::node_ports`] (the
//! Vivado block design and the node XDC use the same list).
//!
//! # Structure (askama template `hdl/templates/node/node.v`)
//! - the **NI** ([`crate::ni`]) on the **local port** of the **router**
//!   ([`crate::router::top`]), through the ejection adapter of
//!   [`crate::node_pair`] (the router's per-VC cut-through output into the
//!   NI's per-class receive rings; module `exanet_node_eject`);
//! - per **network port** `i` of the router (`0..num_dir_ports`, in router
//!   port order), one link end: `link_tx` (router output `i` → PHY word)
//!   and `link_rx` (PHY word → router input `i`), joined by `link_rx`'s
//!   status bus, as in the framed network ([`crate::router::network`]);
//!   its PHY words cross between the PL clock `clk` and the transceiver's
//!   user clock `link<i>_user_clk` through two `async_fifo`s
//!   ([`crate::common::async_fifo`]) of [`PHY_FIFO_WIDTH`] bits (word +
//!   control bit at [`PHY_FIFO_CTRL_BIT`], the golden layout
//!   [`exanet_sim::node::pack_phy_word`]):
//!   - **TX** (PL → user clock): `link_tx`'s word enters while the FIFO is
//!     not full (`phy_tx_ready = !full`); `link<i>_tx_tvalid = !empty`,
//!     the head leaves on `link<i>_tx_tready`.
//!   - **RX** (user clock → PL): every `link<i>_rx_tvalid` word is pushed
//!     (Aurora has no RX backpressure); the PL side pops one word per cycle
//!     into `link_rx`. A word meeting a full FIFO is lost and counted in
//!     `rx_overflows_<i>` (32 b, user-clock domain). Software reads it in
//!     `link_status`: its Gray code, registered on the user clock, crosses
//!     through `sync_stages` `ASYNC_REG` flip-flops (cell names matching the
//!     FIFO pointers' `*_gray_reg*` / `*_gray_sync0_reg*` XDC patterns) and
//!     is turned back into binary (golden: `LinkEndOutputs::rx_overflows_pl`). It
//!     cannot overflow when `clock.pl_mhz` ≥ the user clock
//!     ([`exanet_sim::node::rx_crossing_can_overflow`]): at most one push
//!     per user-clock edge, one pop per PL edge. [`rx_overflow_note`] says
//!     so for configs where it could (the default 156.25 MHz PL clock is
//!     below Aurora's 161.13 MHz user clock).
//! - **resets**: `rst` (the PS reset) through a `reset_sync` into the PL
//!   domain (`pl_rst`: NI, router, adapter, links, FIFO PL sides) and one
//!   per user clock (FIFO user sides); `link<i>_channel_up` through a
//!   `reset_sync` (of `!channel_up`) into the PL domain as `link_rx`'s
//!   `phy_lane_up` (down at power-on).
//! - **coordinates**: input straps `node_x`, `node_y`, `node_z`,
//!   `node_fpga` of the logic, module [`NODE_CORE`] (template
//!   `hdl/templates/node/node.v`), to the router's `node_x/y/z` and the
//!   NI's `node` word (layout and widths from `exanet_sim::packet::coords`,
//!   [`node_straps`]). [`NODE_TOP`] (template `node_top.v`) is the core
//!   with the straps tied from the Verilog parameters `NODE_X`, `NODE_Y`,
//!   `NODE_Z`, `NODE_FPGA` (one module for every FPGA; the block design
//!   sets them). The co-simulation top ([`emit_node_bench`]) instantiates
//!   the core with constant straps, so all its nodes are one Verilator
//!   module, built once whatever the number of nodes (parameters would
//!   make Verilator specialise, i.e. build, one copy per node).
//!
//! # AXI4-Lite: one slave, two register blocks
//! `s_axil_*` (16-bit addresses) goes into `axil_split`
//! ([`crate::common::axil_split`], split at
//! [`exanet_sim::node::LINK_STATUS_BASE`] = `0xF000`; wires `ni_s_*` for
//! `m0`, `ls_*` for `m1`):
//! - `m0` (below `0xF000`): the NI. It decodes a 20-bit address; `m0`'s
//!   16-bit address is zero-extended (every NI page, `0x3000 + 0x1000·c`
//!   for its channels, must lie below `0xF000`: [`NodeParams::validate`]
//!   refuses more channels). `AxPROT[0]` (privileged) goes to the NI;
//!   `AxPROT[2:1]` are ignored. The NI's registers take whole 32-bit words:
//!   `wstrb` is ignored (software writes registers with 32-bit stores).
//! - `m1` (`0xF000` and up, address relative to it): one `link_status`
//!   ([`crate::link::link_status`]) for every link of the node: per link
//!   its `link_rx` state (`l<i>_st_state`) and fifteen counters, each the
//!   `cnt_*` port of `link_tx` or `link_rx` (or the sum of both, wire
//!   `l<i>_reg_<name>`) or the RX crossing's overflow counter in the PL
//!   domain (`l<i>_rx_overflows_pl`), as
//!   [`crate::link::link_status::counter_source`] says (map:
//!   `exanet_sim::link::status`). The 4 KiB page is fully decoded by
//!   `link_status` (an address beyond the last link answers SLVERR, as
//!   does every write); `m1`'s write address, data, strobes and AxPROT go
//!   nowhere.
//! - Latency: the split adds one cycle each way (a read answered at once
//!   by its block reaches `s_axil_rvalid` 4 cycles after `s_axil_arvalid`);
//!   one read and one write in flight.
//!
//! # How the NI's other interfaces are adapted to `node_ports`
//! - AXI4 master: the NI's 42-bit addresses are zero-extended to 49 bits;
//!   one ID (`AxID = 0`: the NI relies on in-order responses, `BID`/`RID`
//!   ignored), `AxLOCK = 0`, `AxCACHE = 0011` (normal, non-cacheable,
//!   bufferable), `AxPROT = 000`, `AxQOS = 0`. `RRESP` goes to the NI's
//!   `m_rresp` and `BRESP` to `m_bresp` (SLVERR / DECERR counted and
//!   reported: the `ni` module doc, "AXI4 error responses"). `RLAST` is
//!   ignored: the NI counts the beats of every burst it asked for and
//!   does not check RLAST against that count (a slave that ends a burst
//!   early or late is not detected). The
//!   NI's `AxUSER` (the PDID) has no pin on S_AXI_HP0_FPD and is dropped.
//! - `irq`: the NI's interrupt (level, high while STATUS & IRQ_ENABLE is
//!   not zero: a completion or message waiting, an error queued, a sticky
//!   error bit), to `pl_ps_irq0`.
//! - The router's counters and the NI's observability outputs have no
//!   register path to software (every link counter has one: `link_status`); they stay on `unused_*` wires inside the node (visible in a
//!   waveform; the link counters `link_status` reads keep their `unused_`
//!   names so a bench finds every counter the same way); the
//!   co-simulation top [`emit_node_bench`] shows them
//!   as `n<n>_obs_<name>` ports ([`node_observed`]) through hierarchical
//!   references, so the node's port list stays the Vivado flow's.
//!
//! Allreduce engine: inside the NI when `ni.ar_communicators > 0` (the NI
//! top's name then ends in `_ar<N>`; its `reduce_alu` is the NI's child),
//! so the node carries it with no port of its own: descriptors and
//! completions go through the NI's registers, fragments through its
//! packet path, operands and results through its AXI4 master. The default
//! config has no engine (`ni.ar_communicators = 0`); `exanet -P
//! ni.ar_communicators=4 generate` emits the node with it, lint clean.
//!
//! # Latency
//! Flit timing inside the PL domain is the framed network's (a router
//! output during t is in `link_tx` during t; a `link_rx` flit is on the
//! router's input at t + 1). Each crossing adds the `async_fifo`'s latency
//! (a word pushed on a write edge is visible after `sync_stages` + 1 read
//! edges; golden `exanet_sim::common::async_fifo`).

use crate::common::async_fifo::{emit_async_fifo, emit_reset_sync};
use crate::common::axil_split::emit_axil_split;
use crate::emit::Emitted;
use crate::link::link_pair::header_ports;
use crate::link::link_rx::emit_link_rx;
use crate::link::link_status::{counter_source, emit_link_status, CounterPort};
use crate::link::link_tx::emit_link_tx;
use crate::ni::{emit_ni, NiRtlParams};
use crate::node_pair::{eject_module, module_ports, NodePairParams, PortDecl};
use crate::node_ports::{self as np, node_ports, Dir, NODE_TOP};
use crate::router::network::check_link_fits;
use crate::router::top::emit_router;
use anyhow::{bail, Context, Result};
use askama::Template;
use exanet_sim::common::async_fifo::AsyncFifoParams;
use exanet_sim::link::status::{COUNTER_REGS, LINK_STRIDE, MAX_LINKS};
use exanet_sim::link::LinkParams;
use exanet_sim::node::{
    axil_split_params, rx_crossing_can_overflow, LINK_STATUS_BASE, PHY_FIFO_CTRL_BIT,
    PHY_FIFO_WIDTH,
};
use exanet_sim::router::RouterParams;

/// Whether `links` links' status registers (`links` × the golden
/// [`LINK_STRIDE`]) fit the node's `link_status` page (from
/// [`LINK_STATUS_BASE`] to the end of the AXI4-Lite window) and one
/// `link_status` block serves them.
pub fn check_status_page(links: usize) -> Result<()> {
    let page = (1u64 << np::AXIL_ADDR_BITS) - LINK_STATUS_BASE;
    let bytes = (links * LINK_STRIDE) as u64;
    if bytes > page || links > MAX_LINKS {
        bail!(
            "{links} network links need {links} x {LINK_STRIDE} B = {bytes} B of link_status \
             registers; the page at {LINK_STATUS_BASE:#x} holds {page} B and one link_status \
             serves at most {MAX_LINKS} links"
        );
    }
    Ok(())
}
/// The node's logic with its coordinates as input straps (every port of
/// [`NODE_TOP`] plus those of [`node_straps`]); [`NODE_TOP`] instantiates
/// it once, a co-simulation top once per node.
pub const NODE_CORE: &str = "exanet_node_core";

/// Parameters of the node.
#[derive(Clone, Debug)]
pub struct NodeParams {
    /// The NI.
    pub ni: NiRtlParams,
    /// The router (its topology gives the network ports; one local port).
    pub router: RouterParams,
    /// Every link end (flit width, VCs, buffers as the router's).
    pub link: LinkParams,
    /// Depth and synchronizer stages of every crossing FIFO (width
    /// [`PHY_FIFO_WIDTH`]).
    pub cdc: AsyncFifoParams,
    /// Flip-flops of every reset / channel_up synchronizer (2..=4).
    pub reset_stages: u32,
}

impl Default for NodeParams {
    /// A node of the two-node `2x1x1` torus of [`NodePairParams::default`],
    /// its links sized by `LinkParams::sized` for a 1-cycle cable, 16-deep
    /// crossings with two-flop synchronizers.
    fn default() -> Self {
        let pair = NodePairParams::default();
        let r = &pair.router;
        let link = LinkParams::sized(r.flit_bits, r.num_vcs(), 1, r.buffer_flits);
        NodeParams {
            ni: pair.ni,
            router: pair.router,
            link,
            cdc: AsyncFifoParams::default(),
            reset_stages: 2,
        }
    }
}

impl NodeParams {
    /// Every rule the node adds to its blocks' own; the error names the key,
    /// the value and the rule.
    pub fn validate(&self) -> Result<()> {
        NodePairParams {
            ni: self.ni.clone(),
            router: self.router.clone(),
            link_latency: 0,
        }
        .validate()
        .map_err(|e| anyhow::anyhow!("{}", e.to_string().replace("node_pair:", "node:")))?;
        check_link_fits(&self.router, &self.link).context("node: the links")?;
        self.cdc.validate()?;
        if self.cdc.width != PHY_FIFO_WIDTH {
            bail!(
                "node: async_fifo.width = {}: must be {PHY_FIFO_WIDTH} (a PHY word plus its control bit)",
                self.cdc.width
            );
        }
        if self.router.topology.num_dir_ports() == 0 {
            bail!(
                "node: topology.dims = {:?}: a single node has no network port, so no link",
                self.router.topology.dims
            );
        }
        check_status_page(self.links())
            .with_context(|| format!("node: topology.dims = {:?}", self.router.topology.dims))?;
        let ch = self.ni.ni.channels;
        let top = exanet_sim::ni::regs::ch_page(ch.saturating_sub(1)) as u64
            + exanet_sim::ni::regs::PAGE as u64;
        if np::AXIL_ADDR_BITS != exanet_sim::node::AXIL_ADDR_BITS {
            bail!(
                "node: node_ports' AXI4-Lite address ({} b) differs from the golden node's ({} b)",
                np::AXIL_ADDR_BITS,
                exanet_sim::node::AXIL_ADDR_BITS
            );
        }
        if top > LINK_STATUS_BASE {
            bail!(
                "node: ni.channels = {ch}: the NI's pages end at {top:#x}, beyond {LINK_STATUS_BASE:#x} \
                 where the node's AXI4-Lite window gives way to link_status (at most {} channels)",
                (LINK_STATUS_BASE - exanet_sim::ni::regs::ch_page(0) as u64)
                    / exanet_sim::ni::regs::PAGE as u64
            );
        }
        Ok(())
    }

    /// Network links of the node (one per network port of the router).
    pub fn links(&self) -> usize {
        self.router.topology.num_dir_ports()
    }

    /// The golden node's parameters for this node top (validated first), so
    /// a bench builds [`exanet_sim::node::GoldenNode`] from exactly what the
    /// RTL was emitted from.
    pub fn golden(&self) -> Result<exanet_sim::node::GoldenNodeParams> {
        self.validate()?;
        Ok(exanet_sim::node::GoldenNodeParams {
            router: self.router.clone(),
            link: self.link.clone(),
            cdc: self.cdc.clone(),
            reset_stages: self.reset_stages,
            ni: self.ni.ni.clone(),
        })
    }
}

/// A note for configs whose RX crossing could overflow (see the module
/// doc), naming both clocks.
pub fn rx_overflow_note(pl_mhz: f64, user_clk_mhz: f64) -> Option<String> {
    rx_crossing_can_overflow(pl_mhz, user_clk_mhz).then(|| {
        format!(
            "node: clock.pl_mhz = {pl_mhz} is below the transceiver user clock ({user_clk_mhz} MHz): \
             a far end sending a word on every user-clock edge for long enough overflows a link's \
             RX crossing (Aurora has no RX backpressure); the node counts lost words in \
             rx_overflows_<i>. Set clock.pl_mhz >= {user_clk_mhz} to rule it out."
        )
    })
}

/// One instance: module, instance name, `(port, signal)` connections.
struct Inst {
    module: String,
    name: String,
    conns: Vec<(String, String)>,
}

/// `templates/node/node.v`.
#[derive(Template)]
#[template(path = "node/node.v")]
struct Top {
    top: String,
    wrapper: String,
    /// `(strap port, width, wrapper parameter)`.
    straps: Vec<(String, u32, String)>,
    ni: String,
    eject: String,
    router: String,
    link_tx: String,
    link_rx: String,
    fifo: String,
    reset_sync: String,
    coords: String,
    ports: Vec<String>,
    unused_inputs: Vec<String>,
    wires: Vec<String>,
    assigns: Vec<String>,
    insts: Vec<Inst>,
    /// `(link index,)`: one CDC block per link.
    links: Vec<(usize,)>,
    fifo_msb: u32,
    ctrl_bit: u32,
    count_msb: u32,
    /// Flip-flops of the `rx_overflows` synchronizer: `0..sync_stages`,
    /// `(k, k - 1)` for `k ≥ 1`, and the last.
    sync_stages: Vec<usize>,
    sync_pairs: Vec<(usize, usize)>,
    sync_last: usize,
}

fn range(width: usize) -> String {
    if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    }
}

/// `templates/node/node_top.v`: [`NODE_TOP`], the core with its straps
/// tied from parameters.
#[derive(Template)]
#[template(path = "node/node_top.v")]
struct Wrapper {
    top: String,
    core: String,
    straps: Vec<(String, u32, String)>,
    ports: Vec<String>,
    conns: Vec<String>,
}

/// The coordinate fields a node takes from its straps, in
/// `exanet_sim::packet::coords::FIELDS` order (every field but `reserved`).
const STRAP_FIELDS: [&str; 4] = ["x", "y", "z", "fpga"];

/// The core's coordinate straps: `(input port, width, parameter of
/// [`NODE_TOP`])`, e.g. `("node_x", 4, "NODE_X")`, widths from
/// `exanet_sim::packet::coords::FIELDS`.
pub fn node_straps() -> Vec<(String, u32, String)> {
    exanet_sim::packet::coords::FIELDS
        .iter()
        .filter(|f| STRAP_FIELDS.contains(&f.name))
        .map(|f| {
            (
                format!("node_{}", f.name),
                f.width,
                format!("NODE_{}", f.name.to_uppercase()),
            )
        })
        .collect()
}

/// The NI's coordinates word from the node's straps, fields MSB first
/// as `exanet_sim::packet::coords::FIELDS` lays them out.
fn coords_expr() -> Result<String> {
    use exanet_sim::packet::coords::{COORDS_BITS, FIELDS};
    let mut f = FIELDS.to_vec();
    f.sort_by_key(|x| std::cmp::Reverse(x.offset));
    let mut next = COORDS_BITS;
    let mut parts = Vec::new();
    for x in f {
        if x.offset + x.width != next {
            bail!("coords field `{}` does not tile the word", x.name);
        }
        next = x.offset;
        parts.push(match x.name {
            n if STRAP_FIELDS.contains(&n) => format!("node_{n}"),
            _ => format!("{}'d0", x.width),
        });
    }
    Ok(format!("{{{}}}", parts.join(", ")))
}

/// The flit and credit fields of a router port: (name, width).
fn flit_fields(flit_bits: usize) -> [(&'static str, usize); 5] {
    [
        ("valid", 1),
        ("data", flit_bits),
        ("head", 1),
        ("tail", 1),
        ("vc", 4),
    ]
}
const CREDIT_FIELDS: [(&str, usize); 2] = [("valid", 1), ("vc", 4)];

/// The node port a NI port maps to (module doc), by name (the AXI4-Lite
/// slave `s_*` goes through `axil_split` instead: [`emit_node`]).
fn node_port_of(ni_port: &str) -> Option<String> {
    if let Some(r) = ni_port.strip_prefix("m_") {
        if r.ends_with("user") {
            return None;
        }
        return Some(format!("m_axi_{r}"));
    }
    // The interrupt goes to the node's `irq` (pl_ps_irq0).
    (ni_port == "irq").then(|| "irq".to_string())
}

/// Validate `p` and emit the node: the NI's modules, the router's, the
/// link halves', the crossing FIFO, the reset synchronizer, the adapter
/// (each module once), then `exanet_node`.
pub fn emit_node(p: &NodeParams) -> Result<Emitted> {
    p.validate()?;
    let pair = NodePairParams {
        ni: p.ni.clone(),
        router: p.router.clone(),
        link_latency: 0,
    };
    let ni = emit_ni(&p.ni)?;
    let router = emit_router(&p.router)?;
    let ltx = emit_link_tx(&p.link)?;
    let lrx = emit_link_rx(&p.link)?;
    let fifo = emit_async_fifo(&p.cdc)?;
    let rsync = emit_reset_sync(p.reset_stages)?;
    let split = emit_axil_split(&axil_split_params())?;
    let status = emit_link_status(p.links())?;
    let eject_name = format!("{NODE_TOP}_eject");
    let eject = eject_module(&pair, &eject_name);

    let ni_ports = module_ports(&ni.modules.last().context("NI top module")?.1)
        .context("reading the NI's port list")?;
    let tx_ports = header_ports(&ltx.modules.last().context("link_tx top")?.1)
        .context("reading link_tx's port list")?;
    let rx_ports = header_ports(&lrx.modules.last().context("link_rx top")?.1)
        .context("reading link_rx's port list")?;
    let split_ports = module_ports(&split.modules.last().context("axil_split top")?.1)
        .context("reading axil_split's port list")?;
    let status_ports = module_ports(&status.modules.last().context("link_status top")?.1)
        .context("reading link_status's port list")?;
    let links = p.links();
    let nports = p.router.topology.num_ports();
    let w = p.router.flit_bits;
    let node = node_ports(links as u32);
    let node_width = |name: &str| node.iter().find(|q| q.name == name).map(|q| q.width);

    let mut t = Top {
        top: NODE_CORE.to_string(),
        wrapper: NODE_TOP.to_string(),
        straps: node_straps(),
        ni: ni.top.clone(),
        eject: eject_name.clone(),
        router: router.top.clone(),
        link_tx: ltx.top.clone(),
        link_rx: lrx.top.clone(),
        fifo: fifo.top.clone(),
        reset_sync: rsync.top.clone(),
        coords: coords_expr()?,
        ports: node
            .iter()
            .map(|q| {
                let dir = if q.dir == Dir::In { "input" } else { "output" };
                format!("{dir} wire {}{}", range(q.width as usize), q.name)
            })
            .collect(),
        unused_inputs: vec!["m_axi_bid".into(), "m_axi_rid".into(), "m_axi_rlast".into()],
        wires: Vec::new(),
        assigns: Vec::new(),
        insts: Vec::new(),
        links: (0..links).map(|i| (i,)).collect(),
        fifo_msb: PHY_FIFO_WIDTH - 1,
        ctrl_bit: PHY_FIFO_CTRL_BIT,
        count_msb: p.cdc.pointer_bits() - 1,
        sync_stages: (0..p.cdc.sync_stages as usize).collect(),
        sync_pairs: (1..p.cdc.sync_stages as usize)
            .map(|k| (k, k - 1))
            .collect(),
        sync_last: p.cdc.sync_stages as usize - 1,
    };

    // ---- AXI4-Lite split: the node's slave; m0 (wires `ni_s_*`) to the
    // NI, m1 (wires `ls_*`) to link_status.
    let mut driven: Vec<String> = Vec::new();
    let mut conns: Vec<(String, String)> = Vec::new();
    // Split outputs toward a master side, by wire name, until consumed.
    let mut m_outputs: Vec<(String, usize)> = Vec::new();
    let mut m_widths: Vec<(String, usize)> = Vec::new();
    for q in &split_ports {
        let n = q.name.as_str();
        let sig = match n {
            "clock" => "clk".to_string(),
            "reset" => "pl_rst".to_string(),
            _ if n.starts_with("s_") => {
                let np_name = format!("s_axil_{}", &n[2..]);
                let nw = node_width(&np_name).with_context(|| {
                    format!("axil_split port `{n}` has no node port `{np_name}` (node_ports.rs)")
                })? as usize;
                if nw != q.width {
                    bail!(
                        "axil_split port `{n}` ({} b) and node port `{np_name}` ({nw} b) differ",
                        q.width
                    );
                }
                if !q.input {
                    driven.push(np_name.clone());
                }
                np_name
            }
            _ if n.starts_with("m0_") || n.starts_with("m1_") => {
                let w = match n.strip_prefix("m0_") {
                    Some(r) => format!("ni_s_{r}"),
                    None => format!("ls_{}", &n[3..]),
                };
                t.wires.push(format!("{}{w}", range(q.width)));
                if !q.input {
                    m_outputs.push((w.clone(), q.width));
                }
                m_widths.push((w.clone(), q.width));
                w
            }
            _ => bail!("axil_split port `{n}`: the node does not know where it goes"),
        };
        conns.push((n.to_string(), sig));
    }
    t.insts.push(Inst {
        module: split.top.clone(),
        name: "axil_split".into(),
        conns: std::mem::take(&mut conns),
    });
    let m_width = |w: &str| m_widths.iter().find(|x| x.0 == w).map(|x| x.1);
    // A split wire into a block input of `width` bits: zero-extended when
    // the block is wider, its low bits when narrower (the rest unused).
    let mut consumed: Vec<(String, usize)> = Vec::new();
    let mut into = |wire: String, width: usize, port: &str| -> Result<String> {
        let sw = m_width(&wire)
            .with_context(|| format!("`{port}`: axil_split has no port for `{wire}`"))?;
        consumed.push((wire.clone(), width.min(sw)));
        Ok(match width.cmp(&sw) {
            std::cmp::Ordering::Equal => wire,
            std::cmp::Ordering::Greater => format!("{{{}'d0, {wire}}}", width - sw),
            std::cmp::Ordering::Less if width == 1 => format!("{wire}[0]"),
            std::cmp::Ordering::Less => format!("{wire}[{}:0]", width - 1),
        })
    };

    // ---- link_status: every link's state and counters, on m1.
    let links_n = p.links();
    for l in 0..links_n {
        // Driven in the link's section of the template (the RX crossing).
        t.wires.push(format!("[31:0] l{l}_rx_overflows_pl"));
    }
    let mut sc = Vec::new();
    for q in &status_ports {
        let n = q.name.as_str();
        let sig = match n {
            "clock" => "clk".to_string(),
            "reset" => "pl_rst".to_string(),
            "link_state" => {
                let v: Vec<String> = (0..links_n)
                    .rev()
                    .map(|i| format!("l{i}_st_state"))
                    .collect();
                format!("{{{}}}", v.join(", "))
            }
            "link_counters" => {
                // Counter k of link l at bit (15l + k)·32: MSB first. A
                // register counted by both halves is their sum (wire
                // `l<l>_reg_<name>`).
                let mut v = Vec::new();
                for l in (0..links_n).rev() {
                    for reg in COUNTER_REGS.iter().rev() {
                        let src: Vec<String> = counter_source(*reg)?
                            .iter()
                            .map(|c| match c {
                                CounterPort::Tx(n) => format!("unused_l{l}_tx_{n}"),
                                CounterPort::Rx(n) => format!("unused_l{l}_rx_{n}"),
                                CounterPort::Crossing => format!("l{l}_rx_overflows_pl"),
                            })
                            .collect();
                        if let [one] = &src[..] {
                            v.push(one.clone());
                        } else {
                            let w = format!("l{l}_reg_{}", reg.name());
                            t.wires.push(format!("[31:0] {w}"));
                            t.assigns.push(format!("{w} = {}", src.join(" + ")));
                            v.push(w);
                        }
                    }
                }
                if v.len() * 32 != q.width {
                    bail!(
                        "link_status port `link_counters` is {} b, the node has {} counters",
                        q.width,
                        v.len()
                    );
                }
                format!("{{{}}}", v.join(", "))
            }
            _ if n.starts_with("s_") => {
                let w = format!("ls_{}", &n[2..]);
                if q.input {
                    into(w, q.width, n)?
                } else {
                    if m_width(&w) != Some(q.width) {
                        bail!(
                            "link_status output `{n}` ({} b) does not fit axil_split's `{w}`",
                            q.width
                        );
                    }
                    w
                }
            }
            _ => bail!("link_status port `{n}`: the node does not know where it goes"),
        };
        sc.push((n.to_string(), sig));
    }
    t.insts.push(Inst {
        module: status.top.clone(),
        name: "link_status".into(),
        conns: sc,
    });

    // ---- NI.
    for q in &ni_ports {
        let n = q.name.as_str();
        let sig = match n {
            "clock" => "clk".to_string(),
            "reset" => "pl_rst".to_string(),
            "node" => "node_coords".to_string(),
            _ if n.starts_with("s_") => {
                let w = format!("ni_{n}");
                if q.input {
                    into(w, q.width, n)?
                } else {
                    if m_width(&w) != Some(q.width) {
                        bail!(
                            "NI output `{n}` ({} b) does not fit axil_split's `{w}`",
                            q.width
                        );
                    }
                    w
                }
            }
            _ if n.starts_with("out_") || n.starts_with("in_") || n.starts_with("credit_") => {
                let s = format!("ni_{n}");
                t.wires.push(format!("{}{s}", range(q.width)));
                s
            }
            _ => match node_port_of(n) {
                Some(np_name) => {
                    let nw = node_width(&np_name).with_context(|| {
                        format!("the NI port `{n}` has no node port `{np_name}` (node_ports.rs)")
                    })? as usize;
                    let node_in = node.iter().any(|x| x.name == np_name && x.dir == Dir::In);
                    if node_in != q.input {
                        bail!("NI port `{n}` and node port `{np_name}` differ in direction");
                    }
                    if q.input {
                        match q.width.cmp(&nw) {
                            std::cmp::Ordering::Equal => np_name,
                            std::cmp::Ordering::Greater => {
                                format!("{{{}'d0, {np_name}}}", q.width - nw)
                            }
                            std::cmp::Ordering::Less => bail!(
                                "NI input `{n}` ({} b) is narrower than node port `{np_name}` ({nw} b)",
                                q.width
                            ),
                        }
                    } else {
                        driven.push(np_name.clone());
                        match q.width.cmp(&nw) {
                            std::cmp::Ordering::Equal => np_name,
                            std::cmp::Ordering::Less => {
                                let s = format!("ni_{n}");
                                t.wires.push(format!("{}{s}", range(q.width)));
                                t.assigns
                                    .push(format!("{np_name} = {{{}'d0, {s}}}", nw - q.width));
                                s
                            }
                            std::cmp::Ordering::Greater => bail!(
                                "NI output `{n}` ({} b) is wider than node port `{np_name}` ({nw} b)",
                                q.width
                            ),
                        }
                    }
                }
                None if !q.input => {
                    let s = format!("unused_ni_{n}");
                    t.wires.push(format!("{}{s}", range(q.width)));
                    s
                }
                None => bail!("the NI input `{n}` has no source in the node"),
            },
        };
        conns.push((n.to_string(), sig));
    }
    t.insts.push(Inst {
        module: ni.top.clone(),
        name: "ni".into(),
        conns,
    });
    // Split outputs (or their upper bits) no block takes: the NI ignores
    // write strobes and AxPROT[2:1]; link_status decodes only the read
    // address (every write is refused).
    for (w, width) in &m_outputs {
        let used = consumed.iter().find(|c| &c.0 == w).map_or(0, |c| c.1);
        if used == 0 {
            t.unused_inputs.push(w.clone());
        } else if used < *width {
            t.unused_inputs.push(format!("{w}[{}:{used}]", width - 1));
        }
    }
    // Node outputs the NI does not drive (module doc).
    for (port, value) in [
        ("m_axi_awid", "0"),
        ("m_axi_arid", "0"),
        ("m_axi_awlock", "0"),
        ("m_axi_arlock", "0"),
        ("m_axi_awcache", "3"),
        ("m_axi_arcache", "3"),
        ("m_axi_awprot", "0"),
        ("m_axi_arprot", "0"),
        ("m_axi_awqos", "0"),
        ("m_axi_arqos", "0"),
    ] {
        let wd = node_width(port).with_context(|| format!("node port `{port}`"))?;
        t.assigns.push(format!("{port} = {wd}'d{value}"));
        driven.push(port.to_string());
    }
    for q in node
        .iter()
        .filter(|q| q.dir == Dir::Out && q.link.is_none())
    {
        if !driven.contains(&q.name) {
            bail!("node output `{}` is driven by nothing", q.name);
        }
    }

    // ---- Ejection adapter: router local output -> NI input.
    let nd = links; // the local port follows the network ports
    let mut c: Vec<(String, String)> = vec![
        ("clock".into(), "clk".into()),
        ("reset".into(), "pl_rst".into()),
    ];
    for (f, wd) in flit_fields(w) {
        let s = format!("ej_{f}");
        t.wires.push(format!("{}{s}", range(wd)));
        c.push((format!("r_{f}"), s));
    }
    for (f, wd) in CREDIT_FIELDS {
        let s = format!("ej_credit_{f}");
        t.wires.push(format!("{}{s}", range(wd)));
        c.push((format!("r_credit_{f}"), s));
    }
    for (f, _) in flit_fields(w) {
        c.push((format!("n_{f}"), format!("ni_in_{f}")));
    }
    for (f, _) in CREDIT_FIELDS {
        c.push((format!("n_credit_{f}"), format!("ni_credit_out_{f}")));
    }
    t.wires.push("[31:0] unused_eject_errors".into());
    c.push(("errors".into(), "unused_eject_errors".into()));
    t.insts.push(Inst {
        module: eject_name.clone(),
        name: "eject".into(),
        conns: c,
    });

    // ---- Router.
    let mut c: Vec<(String, String)> = vec![
        ("clock".into(), "clk".into()),
        ("reset".into(), "pl_rst".into()),
        ("node_x".into(), "node_x".into()),
        ("node_y".into(), "node_y".into()),
        ("node_z".into(), "node_z".into()),
    ];
    for q in 0..nports {
        let local = q == nd;
        for (f, wd) in flit_fields(w) {
            let (i, o) = if local {
                (format!("ni_out_{f}"), format!("ej_{f}"))
            } else {
                let (i, o) = (format!("l{q}_rin_{f}"), format!("l{q}_rout_{f}"));
                t.wires.push(format!("{}{i}", range(wd)));
                t.wires.push(format!("{}{o}", range(wd)));
                (i, o)
            };
            c.push((format!("in_{f}_{q}"), i));
            c.push((format!("out_{f}_{q}"), o));
        }
        for (f, wd) in CREDIT_FIELDS {
            let (i, o) = if local {
                (format!("ej_credit_{f}"), format!("ni_credit_in_{f}"))
            } else {
                let (i, o) = (format!("l{q}_rcin_{f}"), format!("l{q}_rcout_{f}"));
                t.wires.push(format!("{}{i}", range(wd)));
                t.wires.push(format!("{}{o}", range(wd)));
                (i, o)
            };
            c.push((format!("credit_in_{f}_{q}"), i));
            c.push((format!("credit_out_{f}_{q}"), o));
        }
        for cn in ["dropped_packets", "flit_errors", "credit_errors"] {
            let s = format!("unused_{cn}_{q}");
            t.wires.push(format!("[31:0] {s}"));
            c.push((format!("{cn}_{q}"), s));
        }
    }
    t.insts.push(Inst {
        module: router.top.clone(),
        name: "router".into(),
        conns: c,
    });

    // ---- Link ends (the crossings are in the template).
    for i in 0..links {
        for (f, wd) in [
            ("phy_tx_valid", 1),
            ("phy_tx_data", 64),
            ("phy_tx_ctrl", 1),
            ("phy_tx_ready", 1),
            ("phy_rx_valid", 1),
            ("phy_rx_data", 64),
            ("phy_rx_ctrl", 1),
            ("phy_lane_up", 1),
        ] {
            t.wires.push(format!("{}l{i}_{f}", range(wd)));
        }
        for (half, module, ports) in [("tx", &ltx.top, &tx_ports), ("rx", &lrx.top, &rx_ports)] {
            let mut c = Vec::new();
            for q in ports.iter() {
                let sig = link_signal(i, half, q, &mut t.wires)?;
                c.push((q.name.clone(), sig));
            }
            t.insts.push(Inst {
                module: module.clone(),
                name: format!("l{i}_link_{half}"),
                conns: c,
            });
        }
    }

    let mut text = t
        .render()
        .context("rendering the template templates/node/node.v")?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let mut modules: Vec<(String, String)> = Vec::new();
    for part in [&ni, &router, &ltx, &lrx, &fifo, &rsync, &split, &status] {
        for (name, body) in &part.modules {
            if !modules.iter().any(|(n, _)| n == name) {
                modules.push((name.clone(), body.clone()));
            }
        }
    }
    modules.push((eject_name, eject));
    modules.push((NODE_CORE.to_string(), text));
    let mut wrapper = Wrapper {
        top: NODE_TOP.to_string(),
        core: NODE_CORE.to_string(),
        straps: node_straps(),
        ports: t.ports.clone(),
        conns: node.iter().map(|q| q.name.clone()).collect(),
    }
    .render()
    .context("rendering the template templates/node/node_top.v")?;
    if !wrapper.ends_with('\n') {
        wrapper.push('\n');
    }
    modules.push((NODE_TOP.to_string(), wrapper));
    Ok(Emitted {
        top: NODE_TOP.to_string(),
        modules,
    })
}

/// `templates/node/node_bench.v`.
#[derive(Template)]
#[template(path = "node/node_bench.v")]
struct BenchTop {
    top: String,
    node: String,
    dims: String,
    ports: Vec<String>,
    /// `(node index, strap connections)`, e.g. `node_x(4'd1)`.
    nodes: Vec<(usize, Vec<String>)>,
    conns: Vec<String>,
    /// Internal signals of every node shown as `n<n>_obs_<name>`.
    observed: Vec<String>,
}

/// Internal wires of the node (by name prefix) a bench also compares: the
/// synchronized PL reset, the NI's flits into the router and the router's
/// credits back, the router's local output into the ejection adapter and
/// its credits, the adapter's flits into the NI and its credits out.
pub const OBSERVED_WIRES: [&str; 6] = ["pl_rst", "ni_out_", "ni_in_", "ni_credit_", "ej_", "ni_s_"];

/// `l<i>_st_<field>` (link `i`'s status bus, `link_rx` to `link_tx`) and
/// `l<i>_lane_down`.
fn is_link_status(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('l') else {
        return false;
    };
    let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
    digits > 0 && (rest[digits..].starts_with("_st_") || &rest[digits..] == "_lane_down")
}

/// The node's internal signals a bench compares and no node port carries
/// (module doc): every `unused_*` wire (router, link and ejection counters,
/// the NI's observability outputs), the `rx_overflows_<i>` registers, the
/// wires of [`OBSERVED_WIRES`] (the local port's flits and credits, `pl_rst`)
/// and each link's status bus and lane-down, as `(name, width)`, read from
/// the node top's declarations.
pub fn node_observed(node_top: &str) -> Result<Vec<(String, usize)>> {
    let mut out = Vec::new();
    for line in node_top.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        if !matches!(t.first(), Some(&"wire") | Some(&"reg")) || t.len() < 2 {
            continue;
        }
        let (width, name) = match t[1].strip_prefix('[') {
            Some(r) => {
                let msb = r.split(':').next().unwrap_or("");
                let msb: usize = msb
                    .parse()
                    .with_context(|| format!("node top: width of `{line}`"))?;
                (msb + 1, t.get(2).copied().unwrap_or(""))
            }
            None => (1, t[1]),
        };
        let name = name.trim_end_matches(';');
        if name == "unused_inputs" || name.is_empty() {
            continue;
        }
        if name.starts_with("unused_")
            || name.starts_with("rx_overflows_")
            || OBSERVED_WIRES.iter().any(|w| name.starts_with(w))
            || is_link_status(name)
        {
            out.push((name.to_string(), width));
        }
    }
    Ok(out)
}

/// The strap connections of the node at `coords` (FPGA 0 of its board),
/// e.g. `node_x(4'd1)`.
fn strap_conns(coords: [usize; 3]) -> Vec<String> {
    node_straps()
        .into_iter()
        .map(|(port, w, _)| {
            let v = match port.as_str() {
                "node_x" => coords[0],
                "node_y" => coords[1],
                "node_z" => coords[2],
                _ => 0,
            };
            format!("{port}({w}'d{v})")
        })
        .collect()
}

/// Top module name of the co-simulation top of `p`'s network.
pub fn node_bench_top_name(p: &NodeParams) -> String {
    let d = p.router.topology.dims;
    format!("exanet_node_bench_{}x{}x{}", d[0], d[1], d[2])
}

/// The co-simulation top (`exanet cosim node`): one [`NODE_CORE`] per node
/// of `p`'s topology, its coordinates on its straps, every port of node
/// `n` on the top as `n<n>_<port>`; after [`emit_node`]'s modules but the
/// wrapper [`NODE_TOP`] (so every node is the same Verilator module).
pub fn emit_node_bench(p: &NodeParams) -> Result<Emitted> {
    let mut node = emit_node(p)?;
    node.modules.retain(|(n, _)| n != NODE_TOP);
    let t = &p.router.topology;
    let ports = node_ports(p.links() as u32);
    let mut decls = Vec::new();
    for n in 0..t.num_nodes() {
        for q in &ports {
            let dir = if q.dir == Dir::In { "input" } else { "output" };
            decls.push(format!(
                "{dir} wire {}n{n}_{}",
                range(q.width as usize),
                q.name
            ));
        }
    }
    let node_text = &node
        .modules
        .iter()
        .find(|(n, _)| n == NODE_CORE)
        .context("the node emitted no core module")?
        .1;
    let observed = node_observed(node_text)?;
    for n in 0..t.num_nodes() {
        for (name, w) in &observed {
            decls.push(format!("output wire {}n{n}_obs_{name}", range(*w)));
        }
    }
    let top = node_bench_top_name(p);
    let mut text = BenchTop {
        top: top.clone(),
        node: NODE_CORE.to_string(),
        dims: format!("{}x{}x{}", t.dims[0], t.dims[1], t.dims[2]),
        ports: decls,
        nodes: (0..t.num_nodes())
            .map(|n| (n, strap_conns(t.coords(n))))
            .collect(),
        conns: ports.iter().map(|q| q.name.clone()).collect(),
        observed: observed.into_iter().map(|(n, _)| n).collect(),
    }
    .render()
    .context("rendering the template templates/node/node_bench.v")?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let mut modules = node.modules;
    modules.push((top.clone(), text));
    Ok(Emitted { top, modules })
}

/// What port `q` of link `i`'s `half` (`tx`: `link_tx`, `rx`: `link_rx`)
/// connects to; declares the status and counter wires (the status bus once,
/// from `link_rx`'s side).
fn link_signal(i: usize, half: &str, q: &PortDecl, wires: &mut Vec<String>) -> Result<String> {
    let n = q.name.as_str();
    Ok(match n {
        "clock" => "clk".into(),
        "reset" => "pl_rst".into(),
        _ if n.starts_with("phy_") => format!("l{i}_{n}"),
        _ if n.starts_with("st_") => {
            if half == "rx" {
                wires.push(format!("{}l{i}_{n}", range(q.width)));
            }
            format!("l{i}_{n}")
        }
        _ if n.starts_with("cnt_") => {
            let s = format!("unused_l{i}_{half}_{}", &n[4..]);
            wires.push(format!("{}{s}", range(q.width)));
            s
        }
        // link_tx: router output i in, credits to the router's credit input i.
        _ if half == "tx" && n.starts_with("in_") => format!("l{i}_rout_{}", &n[3..]),
        _ if half == "tx" && n.starts_with("credit_out_") => {
            format!("l{i}_rcin_{}", &n["credit_out_".len()..])
        }
        // link_rx: flits to the router's input i, its credits in.
        _ if half == "rx" && n.starts_with("out_") => format!("l{i}_rin_{}", &n[4..]),
        _ if half == "rx" && n.starts_with("credit_in_") => {
            format!("l{i}_rcout_{}", &n["credit_in_".len()..])
        }
        _ => bail!("link_{half} port `{n}`: the node does not know where it goes"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;
    use exanet_sim::topology::Topology;

    fn mesh4() -> NodeParams {
        let mut p = NodeParams::default();
        p.router.topology = Topology::new([4, 4, 1], [false; 3], 1).unwrap();
        p.router.vcs_per_class = 1;
        p.ni.vcs_per_class = 1;
        p.ni.resp_vc = 1;
        p.link = LinkParams::sized(128, p.router.num_vcs(), 1, p.router.buffer_flits);
        p
    }

    /// The core's text in `e`.
    fn core_of(e: &Emitted) -> &str {
        &e.modules.iter().find(|(n, _)| n == NODE_CORE).unwrap().1
    }

    /// The default (2 links) and the ZCU102 mesh node (4 links) have exactly
    /// the node_ports list, in order (the core: the straps first, then the
    /// same list), and lint clean.
    #[test]
    fn node_has_the_node_ports_and_lints_clean() {
        for p in [NodeParams::default(), mesh4()] {
            let e = emit_node(&p).unwrap();
            assert_eq!(e.top, NODE_TOP);
            let top = &e.modules.last().unwrap().1;
            let got = module_ports(top).unwrap();
            let want = node_ports(p.links() as u32);
            assert_eq!(got.len(), want.len(), "{top}");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(
                    (g.name.as_str(), g.width, g.input),
                    (w.name.as_str(), w.width as usize, w.dir == Dir::In)
                );
            }
            for (name, w, param) in node_straps() {
                assert!(
                    top.contains(&format!("parameter [{}:0] {param} = {w}'d0", w - 1)),
                    "{top}"
                );
                assert!(top.contains(&format!(".{name}({param}),")), "{top}");
            }
            let core = core_of(&e);
            let got = module_ports(core).unwrap();
            let straps = node_straps();
            assert_eq!(got.len(), straps.len() + want.len(), "{core}");
            for (g, s) in got.iter().zip(&straps) {
                assert_eq!(
                    (g.name.as_str(), g.width, g.input),
                    (s.0.as_str(), s.1 as usize, true)
                );
            }
            for (g, w) in got[straps.len()..].iter().zip(&want) {
                assert_eq!(
                    (g.name.as_str(), g.width, g.input),
                    (w.name.as_str(), w.width as usize, w.dir == Dir::In)
                );
            }
            assert!(!core.contains("NODE_"), "no parameter in the core: {core}");
            let top = core;
            for i in 0..p.links() {
                assert!(top.contains(&format!("tx_fifo{i} (")), "{top}");
                assert!(top.contains(&format!("rx_overflows_{i}")), "{top}");
            }
            let names: Vec<&str> = e.modules.iter().map(|(n, _)| n.as_str()).collect();
            let mut dedup = names.clone();
            dedup.sort();
            dedup.dedup();
            assert_eq!(dedup.len(), names.len(), "each module once");
            assert_lint_clean(&e);
        }
    }

    /// The two-node bench top: both nodes, their coordinates, every port
    /// prefixed; lint clean.
    #[test]
    fn bench_top_holds_every_node_and_lints_clean() {
        let p = NodeParams::default();
        let e = emit_node_bench(&p).unwrap();
        assert_eq!(e.top, "exanet_node_bench_2x1x1");
        let top = &e.modules.last().unwrap().1;
        let ports = module_ports(top).unwrap();
        let observed = node_observed(core_of(&emit_node(&p).unwrap())).unwrap();
        assert!(
            observed.contains(&("rx_overflows_1".to_string(), 32)),
            "{observed:?}"
        );
        assert!(
            observed.contains(&("unused_eject_errors".to_string(), 32)),
            "{observed:?}"
        );
        assert!(!observed.iter().any(|o| o.0 == "unused_inputs"));
        for (want, w) in [
            ("pl_rst", 1),
            ("ni_out_data", 128),
            ("ni_in_vc", 4),
            ("ni_credit_out_valid", 1),
            ("ej_credit_vc", 4),
            ("l1_st_state", 2),
            ("l0_lane_down", 1),
        ] {
            assert!(
                observed.contains(&(want.to_string(), w)),
                "{want}: {observed:?}"
            );
        }
        assert!(!observed
            .iter()
            .any(|o| o.0 == "l0_phy_tx_data" || o.0 == "ni_m_araddr"));
        assert_eq!(
            ports.len(),
            2 * (node_ports(p.links() as u32).len() + observed.len())
        );
        for want in [
            "n0_clk",
            "n1_link1_user_clk",
            "n1_m_axi_rlast",
            "n0_irq",
            "n1_obs_rx_overflows_0",
            "n0_obs_unused_dropped_packets_2",
        ] {
            assert!(ports.iter().any(|q| q.name == want), "{want}");
        }
        for (name, w) in &observed {
            let q = ports
                .iter()
                .find(|q| q.name == format!("n1_obs_{name}"))
                .unwrap();
            assert_eq!(q.width, *w, "{name}");
        }
        assert!(top.contains(".node_x(4'd1),"), "{top}");
        assert!(top.contains(".node_fpga(2'd0),"), "{top}");
        assert_eq!(top.matches(&format!("{NODE_CORE} node_n")).count(), 2);
        assert!(
            !e.modules.iter().any(|(n, _)| n == NODE_TOP),
            "the wrapper is not in a bench"
        );
        assert_lint_clean(&e);
    }

    /// The golden node built from the node top's parameters has the RTL's
    /// network ports, one local port after them, and refuses what the node
    /// top refuses.
    #[test]
    fn golden_node_has_the_rtl_ports() {
        let p = NodeParams::default();
        for n in 0..p.router.topology.num_nodes() {
            let g = exanet_sim::node::GoldenNode::new(&p.golden().unwrap(), n).unwrap();
            assert_eq!(g.num_links(), p.links());
            assert_eq!(g.local_port(), p.router.topology.local_port(0));
            assert_eq!(g.outputs().links.len(), p.links());
        }
        let mut bad = NodeParams::default();
        bad.cdc.width = 64;
        let e = bad.golden().unwrap_err().to_string();
        assert!(e.contains("async_fifo.width = 64"), "{e}");
    }

    #[test]
    fn coordinates_follow_the_golden_layout() {
        assert_eq!(
            coords_expr().unwrap(),
            "{node_x, node_y, node_z, node_fpga, 8'd0}"
        );
    }

    #[test]
    fn bad_parameters_name_the_key() {
        let mut p = NodeParams::default();
        p.cdc.width = 64;
        let e = emit_node(&p).unwrap_err().to_string();
        assert!(e.contains("async_fifo.width = 64"), "{e}");
        let mut p = NodeParams::default();
        p.ni.ni.channels = 14;
        let e = format!("{:#}", emit_node(&p).unwrap_err());
        assert!(e.contains("ni.channels = 14"), "{e}");
        let mut p = NodeParams::default();
        p.link.vcs = 2;
        let e = format!("{:#}", emit_node(&p).unwrap_err());
        assert!(e.contains("link"), "{e}");
        let mut p = NodeParams::default();
        p.router.topology = Topology::new([1, 1, 1], [false; 3], 1).unwrap();
        let e = format!("{:#}", emit_node(&p).unwrap_err());
        assert!(e.contains("no network port"), "{e}");
        // The link registers must fit the 4 KiB link_status page (no
        // topology has more than 6 network ports, so the rule is checked
        // on its own; validate() adds the key `topology.dims`).
        check_status_page(6).unwrap();
        check_status_page(MAX_LINKS).unwrap();
        let e = check_status_page(MAX_LINKS + 1).unwrap_err().to_string();
        assert!(e.contains("17 network links") && e.contains("64 B"), "{e}");
        let e = check_status_page(65).unwrap_err().to_string();
        assert!(e.contains("4160 B") && e.contains("4096 B"), "{e}");
    }

    #[test]
    fn overflow_note_only_for_slow_pl_clocks() {
        assert!(rx_overflow_note(156.25, 161.1328125).is_some());
        assert!(rx_overflow_note(200.0, 161.1328125).is_none());
    }
}
