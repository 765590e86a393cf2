//! Emission: the block instances a config needs, their Verilog, the XDC and
//! Vivado TCL (askama templates in `constraints/` and `scripts/vivado/`), and
//! `manifest.json`, written into one output folder:
//!
//! ```text
//! OUT/rtl/<module>.v            one module per file
//! OUT/rtl/exanet_waivers.vlt    the Verilator lint waivers
//! OUT/constraints/exanet.xdc
//! OUT/vivado/build.tcl           per-block out-of-context synthesis
//! OUT/constraints/node.xdc      the node flow on the board `fpga.board`
//! OUT/vivado/node.tcl           (see [`crate::node_flow`]), when the board has a lane per link
//! OUT/rtl/exanet_gth_lane.v     its GTH lane adapter (fpga.transceiver = "gth")
//! OUT/lint/board/*.v            its transceiver wiring with vendor-IP black boxes, for Verilator
//! OUT/regs/                     register map: SystemRDL, C header, Markdown, device tree ([`crate::regmap`])
//! OUT/exanet.core               FuseSoC CAPI2 core ([`crate::fusesoc`])
//! OUT/manifest.json             fingerprints, config, derived params, tops, files + SHA-256, tool versions
//! ```
//!
//! Output is deterministic (same config and tools → same bytes; no
//! timestamps). Files whose content is unchanged are not rewritten. Files an
//! earlier `generate` wrote that this config no longer has are removed. A
//! file `generate` did not write, or one edited since, is never replaced or
//! removed: the command refuses, or with `--force` moves it to a backup
//! folder first (see [`crate::outdir`]).
//!
//! The manifest's [`Fingerprint`] records which generator build and which
//! config wrote the folder; the commands that read it (`lint`, `synth`,
//! `cosim --generated`) refuse a folder this build or the config's current
//! contents would no longer produce ([`check_fresh`]), rather than work on
//! stale RTL.

use crate::config::{Config, Loaded};
use crate::error::usage;
use crate::outdir::OutDir;
pub use crate::outdir::{path_in, sha256_hex};
use crate::params::Params;
use crate::tools::ToolVersions;
use anyhow::{bail, Context, Result};
use askama::Template;
use exanet_hdl::emit::{Emitted, LINT_WAIVERS, LINT_WAIVERS_FILE};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// This generator: its version and the SHA-256 of the sources it was built
/// from (computed by `build.rs`, which says what is hashed and why a source
/// hash rather than the executable's).
pub const GENERATOR_FINGERPRINT: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "+src.",
    env!("EXANET_SOURCES_SHA256")
);

/// The node flow's note on its links for `fpga.transceiver` (README, "From
/// `exanet generate` to a bitstream"): how the link layer's control flag
/// crosses the transceiver, and what that costs.
pub fn transceiver_note(t: crate::params::Transceiver) -> &'static str {
    match t {
        crate::params::Transceiver::Gth => GTH_NOTE,
        crate::params::Transceiver::Aurora => AURORA_FRAMING_NOTE,
    }
}

/// See [`transceiver_note`].
pub const GTH_NOTE: &str = "node flow: links over raw GTH channels (gtwizard_ultrascale, \
     10GBASE-R preset, 64B/66B gearbox) behind the lane adapter exanet_gth_lane (pcs66): \
     the link layer's control flag is the 64B/66B sync header, at no cost beyond the line \
     code (goodput bound with 256 B packets 256/288 * 108/109 * 64/66 = 85.4 %); the \
     wizard's gearbox kind and header bit order are unverified without Vivado (see the \
     adapter's header)";

/// See [`transceiver_note`].
pub const AURORA_FRAMING_NOTE: &str = "node flow: links over Aurora 64B/66B cores in \
     framing mode, the link layer's control flag as tlast: each control word ends an \
     Aurora frame and costs one more 66-bit block (the end-of-frame separator); goodput \
     bound with 256 B packets 256/288 * 108/110 * 64/66 = 84.6 % (85.4 % with \
     fpga.transceiver = \"gth\")";

/// Name of the manifest inside the output folder.
pub const MANIFEST: &str = "manifest.json";
/// The XDC inside the output folder.
pub const XDC_PATH: &str = "constraints/exanet.xdc";
/// The Vivado script inside the output folder.
pub const TCL_PATH: &str = "vivado/build.tcl";
/// Share of the clock period given to the logic outside each port (XDC).
pub const IO_BUDGET_PERCENT: u32 = 30;

/// One emitted block instance.
#[derive(Clone, Debug)]
pub struct Instance {
    /// Block name (`fifo`, …): the hdl/sim/tb file name and `exanet cosim` name.
    pub block: String,
    /// The block's parameters as `key=value,…` (an `exanet cosim --point`).
    pub point: String,
    /// Adjustments made to fit what the block supports.
    pub notes: Vec<String>,
    /// Its Verilog.
    pub emitted: Emitted,
}

/// `key=value,…` from a parameter struct's fields, in field order: the
/// codec `exanet cosim --point` parses with ([`exanet_sim::point`]).
pub fn point_of<P: Serialize>(p: &P) -> String {
    exanet_sim::point::to_text(p)
}

fn instance<P: Serialize>(
    block: &str,
    params: &P,
    notes: Vec<String>,
    emit: impl FnOnce(&P) -> Result<Emitted>,
) -> Result<Instance> {
    let point = point_of(params);
    let emitted = emit(params).with_context(|| format!("emitting {block} [{point}]"))?;
    Ok(Instance {
        block: block.to_string(),
        point,
        notes,
        emitted,
    })
}

/// The smallest supported value >= `want`, or the largest supported one;
/// with a note when it is not `want`.
fn fit(key: &str, want: u32, supported: &[u32]) -> (u32, Option<String>) {
    let above = supported.iter().copied().filter(|&s| s >= want).min();
    match above {
        Some(s) if s == want => (s, None),
        Some(s) => (
            s,
            Some(format!(
                "{key}: {want} is not supported; using {s}, the next supported value ({} spare)",
                s - want
            )),
        ),
        None => {
            let s = supported.iter().copied().max().unwrap_or(want);
            (
                s,
                Some(format!(
                    "{key}: {want} is not supported; using {s}, the largest supported value \
                     ({} bits short: the instance cannot hold a full flit word)",
                    want - s
                )),
            )
        }
    }
}

/// Base of the `link_status` page in the node's AXI4-Lite window: the top
/// 4 KiB page of the 16-bit window (the NI's pages, `0x3000 + 0x1000·c`,
/// end at or below it: `exanet_hdl::node::NodeParams::validate`). One
/// definition, the golden node's.
pub const LINK_STATUS_BASE: u64 = exanet_sim::node::LINK_STATUS_BASE;

/// Every block instance the config needs, at the config's sizes, and last
/// the whole node top `exanet_node` (`exanet_hdl::node`) that joins them.
///
/// These are the blocks the design is built from, each at the size the
/// design uses it: the round-robin arbiter of the router's switch
/// allocator, the NI's payload CRC-32, the header SECDED, the allreduce
/// datapath (`fp_add` in binary32 and binary64, `reduce_alu` over one
/// flit), the router, the NI, the link layer's retry buffer, the link
/// status block and the AXI4-Lite split that will put it beside the NI. (`fifo` and `credit_counter` have co-simulation benches of their
/// own but no design instantiates them, so they are not emitted as parts.)
pub fn instances(p: &Params) -> Result<Vec<Instance>> {
    use exanet_sim::common::arbiter::ArbiterParams;
    use exanet_sim::common::crc32::Crc32Params;
    use exanet_sim::common::secded::SecdedParams;

    let mut out = Vec::new();

    // Switch allocation: one round-robin arbiter over the router's ports.
    let supported: Vec<u32> = exanet_hdl::common::arbiter::SUPPORTED_N.collect();
    let ports = p.router.topology.num_ports() as u32;
    let (n, note) = fit("arbiter.n (router ports)", ports, &supported);
    out.push(instance(
        "arbiter",
        &ArbiterParams { n },
        note.into_iter().collect(),
        exanet_hdl::common::arbiter::emit_arbiter,
    )?);

    // Payload CRC-32 over one flit of data per cycle.
    let crc = Crc32Params {
        width: p.packet.flit_bits as usize,
    };
    out.push(instance(
        "crc32",
        &crc,
        Vec::new(),
        exanet_hdl::common::crc32::emit_crc32,
    )?);

    // Header protection: SECDED over the header's 112 non-ECC bits.
    let secded = SecdedParams {
        data_bits: p.packet.header_protected_bits as usize,
    };
    out.push(instance(
        "secded",
        &secded,
        Vec::new(),
        exanet_hdl::common::secded::emit_secded,
    )?);

    // The allreduce reduction datapath's floating-point adders, binary32
    // and binary64 (the lanes of `reduce_alu`; emitted alone too, so each
    // format's resources and lint stand on their own).
    for width in exanet_sim::allreduce::fp_add::FP_ADD_WIDTHS {
        out.push(instance(
            "fp_add",
            &exanet_sim::allreduce::fp_add::FpAddParams { width },
            exanet_hdl::allreduce::fp_add::clock_note(p.clock.pl_mhz)
                .into_iter()
                .collect(),
            exanet_hdl::allreduce::fp_add::emit_fp_add,
        )?);
    }

    // The allreduce combine over one flit of the config per cycle.
    out.push(instance(
        "reduce_alu",
        &exanet_sim::allreduce::reduce_alu::ReduceAluParams {
            width: p.packet.flit_bits as usize,
        },
        exanet_hdl::allreduce::fp_add::clock_note(p.clock.pl_mhz)
            .into_iter()
            .collect(),
        exanet_hdl::allreduce::reduce_alu::emit_reduce_alu,
    )?);

    // The router of this config. One module serves every node (coordinates
    // are inputs); the point names node 0 for `exanet cosim router --point`.
    let point = point_of(&exanet_sim::router::RouterPoint {
        router: p.router.clone(),
        node: 0,
    });
    let emitted = exanet_hdl::router::top::emit_router(&p.router)
        .with_context(|| format!("emitting router [{point}]"))?;
    out.push(Instance {
        block: "router".to_string(),
        point,
        notes: Vec::new(),
        emitted,
    });

    // The network interface, when the config's packet format allows one
    // (`Params::ni`; otherwise elaboration left a note). One module serves
    // every local port (coordinates are an input).
    if let Some(rtl) = &p.ni {
        let point = rtl.point_text();
        let emitted =
            exanet_hdl::ni::emit_ni(rtl).with_context(|| format!("emitting ni [{point}]"))?;
        out.push(Instance {
            block: "ni".to_string(),
            point,
            notes: Vec::new(),
            emitted,
        });
    }

    // The link layer's retry buffer, sized for the config's cable.
    let (rb, note) = retry_buffer_params(p);
    let mut notes: Vec<String> = note.into_iter().collect();
    // The link layer's sending half (with its own retry buffer inside), for
    // the config's router and cable; a mix its RTL does not support is a
    // note, not an error (the rest of the design is still generated).
    let lt = link_tx_point(p);
    let link_tx = match lt.link_params() {
        Ok(_) => Some(instance("link_tx", &lt, Vec::new(), |pt| {
            exanet_hdl::link::link_tx::emit_link_tx(&pt.link_params()?)
        })?),
        Err(e) => {
            notes.push(format!("link_tx not generated: {e:#}"));
            None
        }
    };
    out.push(instance(
        "retry_buffer",
        &rb,
        notes,
        exanet_hdl::link::retry_buffer::emit_retry_buffer,
    )?);
    out.extend(link_tx);

    // The link's receiving end, with the parameters `LinkParams::sized`
    // derives for the config (as the retry buffer's). A link carries at
    // most 8 VCs (3-bit field): a router with more has no link layer yet.
    let lrx = link_rx_point(p);
    if lrx.link().is_ok() {
        out.push(instance("link_rx", &lrx, Vec::new(), |pt| {
            exanet_hdl::link::link_rx::emit_link_rx(&pt.link()?)
        })?);
    }

    // The status block of the router's links (one per network port): link
    // state and counters over AXI4-Lite. A router with no network port (a
    // single node) has no link, hence no status block.
    let links = p.router.topology.num_dir_ports();
    if links > 0 {
        let st = exanet_tb::blocks::link_status::LinkStatusPoint { links };
        out.push(instance("link_status", &st, Vec::new(), |pt| {
            exanet_hdl::link::link_status::emit_link_status(pt.links)
        })?);
        // The node's AXI4-Lite window split in two: the NI's pages below
        // the top 4 KiB page, `link_status` on that page (`m1`, addresses
        // relative to it). Both are inside `exanet_node` too; emitted here
        // on their own for the per-block flows.
        let split = exanet_sim::common::axil_split::AxilSplitParams {
            addr_bits: exanet_hdl::node_ports::AXIL_ADDR_BITS,
            split: LINK_STATUS_BASE,
        };
        out.push(instance(
            "axil_split",
            &split,
            Vec::new(),
            exanet_hdl::common::axil_split::emit_axil_split,
        )?);
    }

    // The 64B/66B PCS for a raw GTH channel (one per link when the node is
    // wired to the GTH; emitted alone for now), at its golden defaults.
    if links > 0 {
        let pt = exanet_tb::blocks::pcs66::Pcs66Point::default();
        out.push(instance("pcs66", &pt, Vec::new(), |pt| {
            exanet_hdl::link::pcs66::emit_pcs66(&exanet_sim::link::pcs::PcsParams {
                slip_wait: pt.slip_wait,
            })
        })?);
    }

    // The whole node (NI + router + a link end per network port + the
    // clock-domain crossings to the transceivers), when the config has an
    // NI and a link layer; a mix the node does not support is a note.
    if let (Some(ni), Ok(link)) = (&p.ni, lt.link_params()) {
        let np = exanet_hdl::node::NodeParams {
            ni: ni.clone(),
            router: p.router.clone(),
            link,
            cdc: exanet_sim::common::async_fifo::AsyncFifoParams::default(),
            reset_stages: 2,
        };
        match np.validate() {
            Ok(()) => {
                let point = format!(
                    "links={},{},reset_stages={}",
                    np.links(),
                    point_of(&np.cdc),
                    np.reset_stages
                );
                let emitted = exanet_hdl::node::emit_node(&np)
                    .with_context(|| format!("emitting node [{point}]"))?;
                let notes = exanet_hdl::node::rx_overflow_note(
                    p.clock.pl_mhz,
                    crate::node_flow::user_clk_mhz(),
                )
                .into_iter()
                .collect();
                out.push(Instance {
                    block: "node".to_string(),
                    point,
                    notes,
                    emitted,
                });
            }
            Err(e) => {
                let n = out.len() - 1;
                out[n].notes.push(format!("node not generated: {e:#}"));
            }
        }
    }

    Ok(out)
}

/// The retry buffer a link of this config needs: an ack round trip plus two
/// frames of words (`exanet_sim::link::LinkParams::sized`), within the
/// sizes the RTL supports, with a note when the cable is too long for the
/// largest (the link then still works, but stalls for acks).
pub fn retry_buffer_params(
    p: &Params,
) -> (
    exanet_sim::link::retry_buffer::RetryBufferParams,
    Option<String>,
) {
    let r = &p.router;
    let link = exanet_sim::link::LinkParams::sized(
        r.flit_bits,
        r.classes * r.vcs_per_class,
        p.link.latency_cycles as usize,
        r.buffer_flits,
    );
    let (lo, hi) = exanet_sim::link::retry_buffer::RETRY_WORDS_RANGE;
    let words = link.retry_words.clamp(lo, hi);
    let note = (words != link.retry_words).then(|| {
        format!(
            "retry_buffer.words: link.latency_ns = {} needs {} words; using {words}, the nearest \
             supported size (the link stalls for acks at full rate)",
            p.link.latency_ns, link.retry_words
        )
    });
    (
        exanet_sim::link::retry_buffer::RetryBufferParams { words },
        note,
    )
}

/// The `link_tx` a link of this config needs: the router's flit width,
/// VCs (classes × VCs per class) and buffer, the cable's latency, the rest
/// derived as `exanet_sim::link::LinkParams::sized` (the bench point that
/// `exanet cosim link_tx` runs).
pub fn link_tx_point(p: &Params) -> exanet_tb::blocks::link_tx::LinkTxPoint {
    let r = &p.router;
    exanet_tb::blocks::link_tx::LinkTxPoint {
        flit_bits: r.flit_bits,
        vcs: r.classes * r.vcs_per_class,
        latency_cycles: (p.link.latency_cycles as usize).max(1),
        frame_flits: 0,
        router_credits: r.buffer_flits,
        ..Default::default()
    }
}

/// The `link_rx` point of this config: the router's flit width, VCs and
/// input buffer, the cable's latency; frame and receive-buffer sizes as
/// `exanet_sim::link::LinkParams::sized` derives them.
pub fn link_rx_point(p: &Params) -> exanet_tb::blocks::link_rx::LinkRxPoint {
    let r = &p.router;
    exanet_tb::blocks::link_rx::LinkRxPoint {
        flit_bits: r.flit_bits,
        vcs: r.classes * r.vcs_per_class,
        router_credits: r.buffer_flits,
        latency: p.link.latency_cycles as usize,
        ..Default::default()
    }
}

/// One generated top, as listed in the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopEntry {
    /// Block name.
    pub block: String,
    /// Top module name.
    pub top: String,
    /// The block's parameters (`exanet cosim BLOCK --point POINT`).
    pub point: String,
    /// Files of this top, relative to the output folder, leaves first.
    pub files: Vec<String>,
    /// Adjustments made to fit the block's supported values.
    pub notes: Vec<String>,
}

/// One generated file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Path relative to the output folder (`/`-separated).
    pub path: String,
    /// SHA-256 of the bytes, lower-case hex.
    pub sha256: String,
    /// Size in bytes.
    pub bytes: u64,
}

/// Which generator and config wrote an output folder (in its manifest).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// [`GENERATOR_FINGERPRINT`] of the exanet that wrote the folder.
    pub generator: String,
    /// [`config_fingerprint`] of the config it was generated from.
    pub config: String,
    /// The config file given to `exanet generate` (made absolute), if any.
    pub config_file: Option<String>,
    /// The `-P` overrides given to `exanet generate`, in order.
    pub overrides: Vec<String>,
}

impl Fingerprint {
    /// The fingerprint of `loaded` generated by this build.
    pub fn of(loaded: &Loaded) -> Result<Fingerprint> {
        let config_file = loaded.file.as_ref().map(|f| {
            std::fs::canonicalize(f)
                .unwrap_or_else(|_| f.clone())
                .display()
                .to_string()
        });
        Ok(Fingerprint {
            generator: GENERATOR_FINGERPRINT.to_string(),
            config: config_fingerprint(&loaded.config)?,
            config_file,
            overrides: loaded.overrides.clone(),
        })
    }

    /// The `exanet generate` command that regenerates `out` from the same
    /// config file and overrides.
    pub fn regenerate_command(&self, out: &Path) -> String {
        let mut cmd = String::from("exanet generate");
        if let Some(f) = &self.config_file {
            cmd.push_str(&format!(" --config {}", shell_word(f)));
        }
        for o in &self.overrides {
            cmd.push_str(&format!(" -P {}", shell_word(o)));
        }
        cmd.push_str(&format!(
            " --out {}",
            shell_word(&out.display().to_string())
        ));
        cmd
    }
}

/// `s` as one shell word (single-quoted unless it is plainly safe).
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.,/=+:@%".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Does key `k` shape the hardware? `[traffic]` and `[sim]` only drive the
/// network simulator.
fn hardware_key(k: &str) -> bool {
    // `reproduce.*`: assumptions of `exanet reproduce`'s measurement only;
    // `jobs.*`, `qos.*`: the simulator's job-batch study and QoS mix.
    !(k.starts_with("traffic.")
        || k.starts_with("sim.")
        || k.starts_with("reproduce.")
        || k.starts_with("jobs.")
        || k.starts_with("qos."))
}

/// SHA-256 of the hardware keys of `c` (`key = value` lines in key order),
/// the config part of a [`Fingerprint`].
pub fn config_fingerprint(c: &Config) -> Result<String> {
    let text: String = c
        .flatten()?
        .iter()
        .filter(|(k, _)| hardware_key(k))
        .map(|(k, v)| format!("{k} = {v}\n"))
        .collect();
    Ok(sha256_hex(text.as_bytes()))
}

/// `manifest.json`: what was generated, from what, with which tools.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Generator version.
    pub exanet: String,
    /// Generator and config fingerprints.
    pub fingerprint: Fingerprint,
    /// The effective config.
    pub config: Config,
    /// The derived parameters.
    pub params: Params,
    /// Generated tops.
    pub tops: Vec<TopEntry>,
    /// Every generated file except the manifest itself.
    pub files: Vec<FileEntry>,
    /// Tool versions at generation time.
    pub tools: ToolVersions,
}

/// What [`generate`] did.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The manifest written.
    pub manifest: Manifest,
    /// Files whose content changed (or were new), relative to the output folder.
    pub written: Vec<String>,
    /// Files an earlier `generate` wrote that this config no longer has, removed.
    pub removed: Vec<String>,
    /// Files in the way moved to `backup` (with `--force`).
    pub backed_up: Vec<String>,
    /// The backup folder, if anything was moved there.
    pub backup: Option<PathBuf>,
    /// Notes from elaboration and instance fitting.
    pub notes: Vec<String>,
}

#[derive(Template)]
#[template(path = "exanet.xdc")]
struct XdcTemplate<'a> {
    name: &'a str,
    part: &'a str,
    version: &'a str,
    pl_mhz: String,
    period_ns: String,
    io_budget_percent: u32,
    io_delay_ns: String,
    network_ports: u32,
    gbps: String,
    cycles_per_flit: u32,
    latency_cycles: u32,
}

#[derive(Template)]
#[template(path = "build.tcl")]
struct TclTemplate<'a> {
    name: &'a str,
    part: &'a str,
    version: &'a str,
    tops: &'a [TopEntry],
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

/// Askama drops a template's final newline; generated text files end with one.
fn with_newline(mut s: String) -> String {
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// The XDC text for `p`.
pub fn render_xdc(p: &Params) -> Result<String> {
    Ok(with_newline(
        XdcTemplate {
            name: &p.name,
            part: &p.fpga.part,
            version: env!("CARGO_PKG_VERSION"),
            pl_mhz: num(p.clock.pl_mhz),
            period_ns: format!("{:.3}", p.clock.period_ns),
            io_budget_percent: IO_BUDGET_PERCENT,
            io_delay_ns: format!(
                "{:.3}",
                p.clock.period_ns * f64::from(IO_BUDGET_PERCENT) / 100.0
            ),
            network_ports: p.topology.network_ports,
            gbps: num(p.link.gbps),
            cycles_per_flit: p.link.cycles_per_flit_ceil,
            latency_cycles: p.link.latency_cycles,
        }
        .render()?,
    ))
}

/// The Vivado TCL text for `p` and `tops`.
pub fn render_tcl(p: &Params, tops: &[TopEntry]) -> Result<String> {
    Ok(with_newline(
        TclTemplate {
            name: &p.name,
            part: &p.fpga.part,
            version: env!("CARGO_PKG_VERSION"),
            tops,
        }
        .render()?,
    ))
}

/// The first line of every generated Verilog file; it names the generator
/// build (so it changes with the generator's sources, unlike the rest).
pub const VERILOG_STAMP: &str = "// Generated by exanet ";

/// A module's file: a header saying where it came from (generator build,
/// config, and for a block's top the parameter values its name encodes),
/// `default_nettype none` around the module (so an undeclared net is an
/// error, not an implicit wire), then `wire` again for whatever follows.
fn with_header(name: &str, text: &str, config: &str, top: Option<&TopEntry>) -> String {
    let mut s = format!(
        "{VERILOG_STAMP}{GENERATOR_FINGERPRINT} from config `{config}`.\n\
         // Do not edit: regenerate with `exanet generate` (edited files are refused, not overwritten).\n"
    );
    match top {
        Some(t) => s.push_str(&format!(
            "// Module {name}: top of block `{}`, parameters (what the name's suffix encodes): {}.\n",
            t.block,
            t.point.replace(',', ", ")
        )),
        None => s.push_str(&format!("// Module {name}: part of a block's top (see manifest.json).\n")),
    }
    s.push_str("`default_nettype none\n\n");
    s.push_str(text);
    if !text.ends_with('\n') {
        s.push('\n');
    }
    s.push_str("\n`default_nettype wire\n");
    s
}

/// Generate everything for `loaded` (elaborated into `params`) into `out`.
/// Only files an earlier `generate` wrote there and nobody edited since are
/// replaced or removed ([`OutDir`]); anything else in the way is refused, or
/// moved to a backup folder with `force`.
pub fn generate(loaded: &Loaded, params: &Params, out: &Path, force: bool) -> Result<Generated> {
    let config = &loaded.config;
    let fingerprint = Fingerprint::of(loaded)?;
    let insts = instances(params)?;
    let mut notes = params.notes.clone();

    // Every module once; the same name with different text is a generator bug.
    let mut modules: BTreeMap<String, String> = BTreeMap::new();
    let mut tops = Vec::new();
    for inst in &insts {
        let mut files = Vec::new();
        for (name, text) in &inst.emitted.modules {
            if let Some(prev) = modules.insert(name.clone(), text.clone()) {
                if &prev != text {
                    bail!(
                        "two instances emit different modules named `{name}` (in {} [{}])",
                        inst.block,
                        inst.point
                    );
                }
            }
            files.push(format!("rtl/{name}.v"));
        }
        notes.extend(
            inst.notes
                .iter()
                .map(|n| format!("{}: {n}", inst.emitted.top)),
        );
        tops.push(TopEntry {
            block: inst.block.clone(),
            top: inst.emitted.top.clone(),
            point: inst.point.clone(),
            files,
            notes: inst.notes.clone(),
        });
    }
    let mut texts: Vec<(String, Vec<u8>)> = modules
        .into_iter()
        .map(|(name, text)| {
            let top = tops.iter().find(|t| t.top == name);
            let file = with_header(&name, &text, &config.name, top);
            (format!("rtl/{name}.v"), file.into_bytes())
        })
        .collect();
    texts.push((
        format!("rtl/{LINT_WAIVERS_FILE}"),
        LINT_WAIVERS.as_bytes().to_vec(),
    ));
    texts.push((XDC_PATH.to_string(), render_xdc(params)?.into_bytes()));
    texts.push((
        TCL_PATH.to_string(),
        render_tcl(params, &tops)?.into_bytes(),
    ));
    // The node flow, on the board `fpga.board` names (a board with an
    // unknown field is refused here, naming each).
    let board = crate::board::load(&config.fpga.board, &params.fpga.part)?;
    let mut node_xdc = false;
    let mut extra_rtl: Vec<String> = Vec::new();
    let mut board_lint: Vec<String> = Vec::new();
    match crate::node_flow::quad_slots(params, &board) {
        Ok(slots) => {
            node_xdc = true;
            notes.push(transceiver_note(params.fpga.transceiver).to_string());
            let mut module_files: Vec<String> = tops.iter().flat_map(|t| t.files.clone()).collect();
            // The GTH lane adapter around the emitted pcs66, for the block
            // design; the board-level lint of the transceiver wiring.
            if params.fpga.transceiver == crate::params::Transceiver::Gth {
                let pcs = tops.iter().find(|t| t.block == "pcs66").context(
                    "fpga.transceiver = \"gth\" needs the pcs66 block, which was not emitted",
                )?;
                let lane = exanet_hdl::transceiver::render_gth_lane(&pcs.top)?;
                texts.push((
                    crate::node_flow::GTH_LANE_PATH.to_string(),
                    with_header(
                        exanet_hdl::transceiver::GTH_LANE_TOP,
                        &lane,
                        &config.name,
                        None,
                    )
                    .into_bytes(),
                ));
                module_files.push(crate::node_flow::GTH_LANE_PATH.to_string());
                extra_rtl.push(crate::node_flow::GTH_LANE_PATH.to_string());
            }
            for (module, text) in
                exanet_hdl::transceiver::render_board_lint(params.fpga.transceiver, &slots)?
            {
                let path = format!("{}/{module}.v", crate::node_flow::BOARD_LINT_DIR);
                board_lint.push(path.clone());
                texts.push((path, text.into_bytes()));
            }
            texts.push((
                crate::node_flow::NODE_XDC_PATH.to_string(),
                crate::node_flow::render_node_xdc(params, &board)?.into_bytes(),
            ));
            texts.push((
                crate::node_flow::NODE_TCL_PATH.to_string(),
                crate::node_flow::render_node_tcl(params, &board, &module_files)?.into_bytes(),
            ));
        }
        Err(e) => notes.push(format!("node flow (vivado/node.tcl) not generated: {e:#}")),
    }
    // The register map for software, when the config has an NI.
    if let Some(ni) = &params.ni {
        for (path, text) in crate::regmap::files(&ni.ni, params.topology.network_ports as usize)? {
            texts.push((path, text.into_bytes()));
        }
    }
    texts.push((
        crate::fusesoc::CORE_PATH.to_string(),
        crate::fusesoc::core(
            &config.name,
            &params.fpga.part,
            &tops,
            &extra_rtl,
            (!board_lint.is_empty()).then_some(crate::fusesoc::BoardLint {
                files: &board_lint,
                top: exanet_hdl::transceiver::BOARD_LINT_TOP,
            }),
            node_xdc,
        )
        .into_bytes(),
    ));
    texts.sort();
    let files: Vec<FileEntry> = texts
        .iter()
        .map(|(rel, bytes)| FileEntry {
            path: rel.clone(),
            sha256: sha256_hex(bytes),
            bytes: bytes.len() as u64,
        })
        .collect();
    let manifest = Manifest {
        exanet: env!("CARGO_PKG_VERSION").to_string(),
        fingerprint,
        config: config.clone(),
        params: params.clone(),
        tops,
        files,
        tools: ToolVersions::probe(),
    };
    let mut json = serde_json::to_string_pretty(&manifest)?;
    json.push('\n');
    texts.push((MANIFEST.to_string(), json.into_bytes()));

    // The whole change is checked before any of it is made.
    let mut dir = OutDir::claim(out, "exanet generate", force)?;
    let (written, stale) = dir.replace_all(&texts)?;
    let backed_up = std::mem::take(&mut dir.backed_up);
    let backup = dir.commit()?;
    Ok(Generated {
        manifest,
        written,
        removed: stale,
        backed_up,
        backup,
        notes,
    })
}

/// Read `out/manifest.json`; a missing one is a usage error that says how to
/// make it.
pub fn read_manifest(out: &Path) -> Result<Manifest> {
    let path = out.join(MANIFEST);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(usage(format!(
                "{} not found: run `exanet generate --out {}` first",
                path.display(),
                out.display()
            )))
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    serde_json::from_str(&text).map_err(|e| {
        usage(format!(
            "{}: not a manifest written by this exanet ({e}); run `exanet generate --out {}` again",
            path.display(),
            out.display()
        ))
    })
}

/// With `--config`/`-P` given to a command that reads an existing output
/// folder: refuse if the folder was generated from a different config.
pub fn check_same_config(manifest: &Manifest, wanted: &Config, out: &Path) -> Result<()> {
    if let Some((k, h, w)) = first_difference(&manifest.config, wanted)? {
        return Err(usage(format!(
            "{} was generated with {k} = {h}, not {w}: run `exanet generate` with the same \
             --config/-P and --out {} first",
            out.display(),
            out.display()
        )));
    }
    Ok(())
}

/// The first hardware key whose value differs: `(key, in have, in want)`.
fn first_difference(have: &Config, want: &Config) -> Result<Option<(String, String, String)>> {
    let have = have.flatten()?;
    let want = want.flatten()?;
    Ok(want
        .iter()
        .find(|(k, w)| hardware_key(k) && have.get(*k) != Some(*w))
        .map(|(k, w)| {
            let h = have.get(k).map(String::as_str).unwrap_or("(unset)");
            (k.clone(), h.to_string(), w.clone())
        }))
}

/// The fingerprint's short form for messages: version and 12 hex digits.
fn short(fp: &str) -> String {
    match fp.split_once("+src.") {
        Some((v, h)) => format!("{v}+src.{}", &h[..h.len().min(12)]),
        None => fp.to_string(),
    }
}

/// Why `manifest` no longer describes what `exanet generate` would write
/// now, or `None`: another generator build wrote it, or (unless the
/// command was `given` its own --config/-P, compared by
/// [`check_same_config`]) its config file and overrides, read again, now
/// resolve to a different config.
pub fn staleness(manifest: &Manifest, given: bool) -> Result<Option<String>> {
    let fp = &manifest.fingerprint;
    if fp.generator != GENERATOR_FINGERPRINT {
        return Ok(Some(format!(
            "it was written by another exanet build (generator {}; this one is {})",
            short(&fp.generator),
            short(GENERATOR_FINGERPRINT)
        )));
    }
    if given {
        return Ok(None);
    }
    let source = match &fp.config_file {
        Some(f) => format!("config file {f}"),
        None => "built-in default config".to_string(),
    };
    let source = if fp.overrides.is_empty() {
        source
    } else {
        format!("{source} with -P {}", fp.overrides.join(" -P "))
    };
    let now = match crate::config::load(fp.config_file.as_deref().map(Path::new), &fp.overrides) {
        Ok(l) => l.config,
        Err(e) => {
            let e = format!("{e:#}").replace('\n', "; ");
            return Ok(Some(format!("its {source} cannot be read again ({e})")));
        }
    };
    if config_fingerprint(&now)? == fp.config {
        return Ok(None);
    }
    Ok(Some(match first_difference(&manifest.config, &now)? {
        Some((k, then, now)) => {
            format!("its {source} changed since (now {k} = {now}, generated with {then})")
        }
        None => format!("its {source} changed since"),
    }))
}

/// The files `manifest` lists that are missing from `out` or whose bytes no
/// longer have the recorded SHA-256 (edited by hand), each with why.
pub fn changed_files(manifest: &Manifest, out: &Path) -> Vec<String> {
    manifest
        .files
        .iter()
        .filter_map(|f| match std::fs::read(path_in(out, &f.path)) {
            Ok(b) if sha256_hex(&b) == f.sha256 => None,
            Ok(_) => Some(format!("{} (edited since generated)", f.path)),
            Err(_) => Some(format!("{} (missing)", f.path)),
        })
        .collect()
}

/// Refuse (a usage error naming `OUT/manifest.json` and the command that
/// regenerates it) an output folder that [`staleness`] finds stale; with
/// `allow_stale`, return the reason as a warning instead. `given`: the
/// command was given --config/-P.
pub fn check_fresh(
    manifest: &Manifest,
    out: &Path,
    given: bool,
    allow_stale: bool,
) -> Result<Option<String>> {
    let Some(why) = staleness(manifest, given)? else {
        return Ok(None);
    };
    let path = out.join(MANIFEST);
    if allow_stale {
        return Ok(Some(format!(
            "{} is stale: {why}; using it anyway (--allow-stale)",
            path.display()
        )));
    }
    let cmd = if manifest.fingerprint.generator.is_empty() {
        format!(
            "exanet generate --out {}",
            shell_word(&out.display().to_string())
        )
    } else {
        manifest.fingerprint.regenerate_command(out)
    };
    Err(usage(format!(
        "{} is stale: {why}; re-run `{cmd}` (or pass --allow-stale to use the old output anyway)",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_prefers_exact_then_next_then_largest() {
        assert_eq!(fit("k", 128, &[64, 128, 133]), (128, None));
        let (v, n) = fit("k", 132, &[64, 128, 133]);
        assert_eq!(v, 133);
        assert!(n.unwrap().contains("1 spare"));
        let (v, n) = fit("k", 260, &[64, 128, 133]);
        assert_eq!(v, 133);
        assert!(n.unwrap().contains("127 bits short"));
    }

    #[test]
    fn retry_buffer_follows_the_cable_and_notes_a_clamp() {
        let p = crate::params::elaborate(&Config::default()).unwrap();
        let (rb, note) = retry_buffer_params(&p);
        assert_eq!((rb.words, note), (512, None));
        let mut c = Config::default();
        c.link.latency_ns = 1000.0; // 157 cycles each way
        let (rb, note) = retry_buffer_params(&crate::params::elaborate(&c).unwrap());
        assert_eq!((rb.words, note), (1024, None));
        c.link.latency_ns = 20_000.0;
        let (rb, note) = retry_buffer_params(&crate::params::elaborate(&c).unwrap());
        let note = note.expect("a clamp is noted");
        assert_eq!(rb.words, 4096);
        assert!(
            note.contains("link.latency_ns = 20000") && note.contains("4096"),
            "{note}"
        );
    }

    #[test]
    fn point_text_follows_field_order() {
        #[derive(Serialize)]
        struct P {
            width: u32,
            depth: u32,
            name: String,
        }
        let s = point_of(&P {
            width: 8,
            depth: 4,
            name: "a".into(),
        });
        assert_eq!(s, "width=8,depth=4,name=a");
    }

    #[test]
    fn numbers_render_stably() {
        assert_eq!(num(10.0), "10.0");
        assert_eq!(num(156.25), "156.25");
    }

    /// The Vivado script template, pinned by `tests/golden/exanest-8x4x4.tcl`
    /// (`EXANET_BLESS=1` rewrites it). Fixed tops: the real blocks' module
    /// lists are checked against the manifest by the CLI tests.
    #[test]
    fn tcl_template_matches_golden() {
        let p = crate::params::elaborate(&Config::default()).unwrap();
        let top = |block: &str, top: &str, files: &[&str]| TopEntry {
            block: block.into(),
            top: top.into(),
            point: String::new(),
            files: files.iter().map(|f| f.to_string()).collect(),
            notes: Vec::new(),
        };
        let tops = [
            top(
                "fifo",
                "exanet_fifo_w8_d4_a3",
                &[
                    "rtl/exanet_fifo_w8_d4_a3_ram.v",
                    "rtl/exanet_fifo_w8_d4_a3.v",
                ],
            ),
            top("arbiter", "exanet_arbiter_n7", &["rtl/exanet_arbiter_n7.v"]),
        ];
        let text = render_tcl(&p, &tops).unwrap();
        let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/exanest-8x4x4.tcl");
        if std::env::var_os("EXANET_BLESS").is_some() {
            std::fs::write(&golden, &text).unwrap();
        }
        let want = std::fs::read_to_string(&golden).unwrap();
        assert!(
            want == text,
            "{} differs (EXANET_BLESS=1 to accept):\n{text}",
            golden.display()
        );
    }

    #[test]
    fn generator_fingerprint_is_version_and_source_hash() {
        let (v, h) = GENERATOR_FINGERPRINT.split_once("+src.").unwrap();
        assert_eq!(v, env!("CARGO_PKG_VERSION"));
        assert_eq!(h.len(), 64);
        assert!(h.chars().all(|c| c.is_ascii_hexdigit()), "{h}");
        assert_eq!(
            short(GENERATOR_FINGERPRINT),
            format!("{v}+src.{}", &h[..12])
        );
    }

    #[test]
    fn config_fingerprint_follows_hardware_keys_only() {
        let base = Config::default();
        let fp = config_fingerprint(&base).unwrap();
        assert_eq!(fp.len(), 64);
        assert_eq!(fp, config_fingerprint(&base.clone()).unwrap());
        let mut c = base.clone();
        c.traffic.rate = 0.5;
        c.sim.seed = 7;
        assert_eq!(config_fingerprint(&c).unwrap(), fp, "simulator keys");
        for f in [
            (|c: &mut Config| c.ni.tx_ahead = 16) as fn(&mut Config),
            |c| c.router.buffer_flits = 40,
            |c| c.name = "other".into(),
        ] {
            let mut c = base.clone();
            f(&mut c);
            assert_ne!(config_fingerprint(&c).unwrap(), fp);
        }
    }

    #[test]
    fn regenerate_command_quotes_what_the_shell_would_split() {
        let fp = Fingerprint {
            generator: GENERATOR_FINGERPRINT.into(),
            config: String::new(),
            config_file: Some("/a b/x.toml".into()),
            overrides: vec!["topology.dims=[4,4,1]".into(), "ni.tx_ahead=4".into()],
        };
        assert_eq!(
            fp.regenerate_command(Path::new("out/x")),
            "exanet generate --config '/a b/x.toml' -P 'topology.dims=[4,4,1]' \
             -P ni.tx_ahead=4 --out out/x"
        );
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }

    #[test]
    fn hex_digest_is_sha256() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
