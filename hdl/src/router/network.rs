//! `network`: a generated structural top that wires `A x B x C` copies of the
//! router (emitted once, see [`emit_router`]) into the torus or mesh of its
//! topology, for co-simulating whole networks against the golden network
//! simulator `exanet_sim::network::Network`.
//!
//! Ports (top module `exanet_network_<suffix>`, see [`network_top_name`]);
//! node `<n>` is the node index `x + A (y + B z)` of `exanet_sim::topology`,
//! `<j>` a local port, `<p>` a router port number:
//! - `clock`; `reset` (synchronous: every router and link register; the
//!   power-on state equals the reset state);
//! - per node and local port, the router's local port unchanged:
//!   `n<n>_l<j>_in_valid`, `_in_data` (W b), `_in_head`, `_in_tail`, `_in_vc`
//!   (4 b): the flit injected; `n<n>_l<j>_credit_out_valid`, `_credit_out_vc`:
//!   the router's credit to the injector; `n<n>_l<j>_out_valid`, `_out_data`,
//!   `_out_head`, `_out_tail`, `_out_vc`: the flit ejected;
//!   `n<n>_l<j>_credit_in_valid`, `_credit_in_vc`: the ejector's credit;
//! - per node and port, the router's counters: `n<n>_dropped_packets_<p>`,
//!   `n<n>_flit_errors_<p>`, `n<n>_credit_errors_<p>` (32 b).
//!
//! Links: each router-to-router link is `link_latency` register stages in
//! each direction, for the flit (valid, data, head, tail, vc) and for the
//! credit (valid, vc): a router output during cycle t is on the neighbour's
//! input during `t + link_latency` — the timing of the golden network. A
//! mesh-boundary port's inputs are tied to zero and its outputs left on
//! `unused_*` wires. Each router gets its coordinates as constants on
//! `node_x/y/z`, so one router module serves every node.
//!
//! # Framed links ([`emit_network_framed`], top `exanet_network_<suffix>_lk<hash>`)
//! Instead of register stages, each connected network port `q` of router
//! `n` (a *link end* `n<n>_p<q>`) gets an RTL `link_tx` (`ltx_n<n>_p<q>`:
//! the router's output `q` in, its credits back to the router's credit
//! input `q`) and an RTL `link_rx` (`lrx_n<n>_p<q>`: flits to the router's
//! input `q`, the router's credits for them in), joined by `link_rx`'s
//! status bus. The PHY between two link ends is outside, on top ports per
//! end: `n<n>_p<q>_phy_tx_valid`, `_phy_tx_data[64]`, `_phy_tx_ctrl`
//! (outputs, `link_tx`'s word), `_phy_tx_ready`, `_phy_rx_valid`,
//! `_phy_rx_ctrl`, `_phy_rx_data[64]`, `_phy_lane_up` (inputs, for
//! `link_rx`: the word the far end's `link_tx` sent, after the PHY); plus
//! `_link_state[2]` (`link_rx`'s state) and the counters `_tx_<c>` for
//! [`TX_COUNTERS`] and `_rx_<c>` for [`RX_COUNTERS`] (32 b). Every link
//! output is a register, so a router output during t is in `link_tx`
//! during t and a `link_rx` flit is on the router's input during t + 1:
//! the golden network's framed-link timing (`exanet_sim::network::links`).

use super::top::{emit_router, router_top_name};
use crate::emit::Emitted;
use crate::link::link_rx::emit_link_rx;
use crate::link::link_tx::emit_link_tx;
use anyhow::{bail, Result};
use exanet_sim::link::LinkParams;
use exanet_sim::router::RouterParams;
use exanet_sim::topology::PortKind;
use std::fmt::Write;

/// Most register stages per link direction the generator accepts.
pub const MAX_LINK_LATENCY: usize = 16;

/// Top module name, e.g. `exanet_network_x4t_y2t_z2t_l1_zyx_c2v2_b32_f128_m18_k1`
/// (the router's name with `router` replaced by `network`, plus `k<link_latency>`).
pub fn network_top_name(p: &RouterParams, link_latency: usize) -> String {
    let r = router_top_name(p);
    let suffix = r.strip_prefix("exanet_router_").unwrap_or(&r);
    format!("exanet_network_{suffix}_k{link_latency}")
}

/// Validate and emit the network: the router's modules, then the top.
pub fn emit_network(p: &RouterParams, link_latency: usize) -> Result<Emitted> {
    if link_latency > MAX_LINK_LATENCY {
        bail!("network.link_latency = {link_latency}: the RTL top supports 0..={MAX_LINK_LATENCY} register stages");
    }
    let router = emit_router(p)?;
    let top = network_top_name(p, link_latency);
    let text = network_top(p, link_latency, &router.top, None, &top);
    let mut modules = router.modules;
    modules.push((top.clone(), text));
    Ok(Emitted { top, modules })
}

/// Top module name of the network with framed links: the router's suffix
/// plus `lk<hash>`, a hash of every link parameter (the `link_tx` and
/// `link_rx` module names).
pub fn network_framed_top_name(p: &RouterParams, link: &LinkParams) -> String {
    let r = router_top_name(p);
    let suffix = r.strip_prefix("exanet_router_").unwrap_or(&r);
    let text = exanet_sim::point::to_text(link);
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    format!("exanet_network_{suffix}_lk{:08x}", h as u32)
}

/// Check that `link` is valid and fits the router `p`: flit width, VCs,
/// and the router buffer as `link_tx`'s buffer and `link_rx`'s router
/// credits (used by every top that joins routers with framed links).
pub fn check_link_fits(p: &RouterParams, link: &LinkParams) -> Result<()> {
    link.validate()?;
    if link.flit_bits != p.flit_bits || link.vcs != p.num_vcs() {
        bail!(
            "link: {} VCs of {}-bit flits, the routers {} VCs of {} bits: must agree",
            link.vcs,
            link.flit_bits,
            p.num_vcs(),
            p.flit_bits
        );
    }
    if link.tx_buffer_flits != p.buffer_flits || link.router_credits != p.buffer_flits {
        bail!(
            "link.tx_buffer_flits = {}, link.router_credits = {}: both must equal router.buffer_flits = {}",
            link.tx_buffer_flits,
            link.router_credits,
            p.buffer_flits
        );
    }
    Ok(())
}

/// Validate and emit the network with framed links (module doc, "Framed
/// links"): the router's modules, `link_tx`'s, `link_rx`'s (each module
/// once), then the top. The link parameters must fit the routers (flit
/// width, VCs, the router buffer as `link_tx`'s buffer and `link_rx`'s
/// router credits) and the link RTL.
pub fn emit_network_framed(p: &RouterParams, link: &LinkParams) -> Result<Emitted> {
    check_link_fits(p, link)?;
    let router = emit_router(p)?;
    let ltx = emit_link_tx(link)?;
    let lrx = emit_link_rx(link)?;
    let top = network_framed_top_name(p, link);
    let names = FramedNames {
        tx: ltx.top.clone(),
        rx: lrx.top.clone(),
        vcs: link.vcs,
    };
    let text = network_top(p, 0, &router.top, Some(&names), &top);
    let mut modules = router.modules;
    for (name, body) in ltx.modules.into_iter().chain(lrx.modules) {
        if !modules.iter().any(|(n, _)| *n == name) {
            modules.push((name, body));
        }
    }
    modules.push((top.clone(), text));
    Ok(Emitted { top, modules })
}

/// The link modules of a framed network top.
struct FramedNames {
    tx: String,
    rx: String,
    vcs: usize,
}

/// A link end's PHY ports on the top: (suffix, width, is an output).
pub const PHY_PORTS: [(&str, usize, bool); 8] = [
    ("phy_tx_valid", 1, true),
    ("phy_tx_data", 64, true),
    ("phy_tx_ctrl", 1, true),
    ("phy_tx_ready", 1, false),
    ("phy_rx_valid", 1, false),
    ("phy_rx_ctrl", 1, false),
    ("phy_rx_data", 64, false),
    ("phy_lane_up", 1, false),
];

/// `link_tx`'s counters (its port `cnt_<name>`; top port `n<n>_p<q>_tx_<name>`).
pub const TX_COUNTERS: [&str; 7] = [
    "frames_sent",
    "retransmissions",
    "timeouts",
    "bad_acks",
    "overflows",
    "words_replayed",
    "ctrl_sent",
];

/// `link_rx`'s counters (its port `cnt_<name>`; top port `n<n>_p<q>_rx_<name>`).
pub const RX_COUNTERS: [&str; 9] = [
    "frames_received",
    "crc_errors",
    "ctrl_crc_errors",
    "seq_errors",
    "duplicates",
    "link_downs",
    "bad_acks",
    "training_errors",
    "overflows",
];

/// A golden link end's counters in [`TX_COUNTERS`] order (`t`, from
/// `link_tx`) and [`RX_COUNTERS`] order (`r`, from `link_rx`): what the
/// benches compare with the counter ports.
pub fn counter_values(
    t: &exanet_sim::link::LinkCounters,
    r: &exanet_sim::link::LinkCounters,
) -> ([u64; 7], [u64; 9]) {
    (
        [
            t.frames_sent,
            t.retransmissions,
            t.timeouts,
            t.bad_acks,
            t.overflows,
            t.words_replayed,
            t.ctrl_sent,
        ],
        [
            r.frames_received,
            r.crc_errors,
            r.ctrl_crc_errors,
            r.seq_errors,
            r.duplicates,
            r.link_downs,
            r.bad_acks,
            r.training_errors,
            r.overflows,
        ],
    )
}

/// The signal names of one flit interface.
const FLIT: [(&str, usize); 5] = [
    ("valid", 1),
    ("data", 0),
    ("head", 1),
    ("tail", 1),
    ("vc", 4),
];
/// The signal names of one credit interface.
const CREDIT: [(&str, usize); 2] = [("valid", 1), ("vc", 4)];

fn range(width: usize) -> String {
    if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    }
}

/// What drives an input of router `n`'s port `p` (flit or credit), by field.
enum Source {
    /// A top-level input port of this prefix (`n0_l0_in`, `n0_l0_credit_in`).
    Top(String),
    /// A wire or the last link stage, of this prefix.
    Link(String),
    /// Nothing: a mesh boundary.
    Zero,
}

/// Verilog text of the top module `name` (the router module `router`, and
/// with `framed` the link modules, emitted separately).
fn network_top(
    p: &RouterParams,
    lat: usize,
    router: &str,
    framed: Option<&FramedNames>,
    name: &str,
) -> String {
    let t = &p.topology;
    let w = p.flit_bits;
    let nodes = t.num_nodes();
    let ports = t.num_ports();
    let width = |wd: usize| if wd == 0 { w } else { wd };
    let mut v = String::new();
    let kind = |d: usize| if t.wrap[d] { "torus" } else { "mesh" };
    let links = match framed {
        Some(f) => format!("framed links (`{}` -> PHY ports -> `{}`)", f.tx, f.rx),
        None => format!("{lat} register stage(s) per link direction"),
    };
    let _ = writeln!(
        v,
        "// {name}: {}x{}x{} routers `{router}` (x {}, y {}, z {}), {links}.",
        t.dims[0],
        t.dims[1],
        t.dims[2],
        kind(0),
        kind(1),
        kind(2)
    );
    let _ = writeln!(v, "// Generated by exanet (hdl/src/router/network.rs).");
    // Port list.
    let mut decls: Vec<String> = vec!["input wire clock".into(), "input wire reset".into()];
    for n in 0..nodes {
        for j in 0..t.local_ports {
            for (f, wd) in FLIT {
                decls.push(format!("input wire {}n{n}_l{j}_in_{f}", range(width(wd))));
            }
            for (f, wd) in CREDIT {
                decls.push(format!("output wire {}n{n}_l{j}_credit_out_{f}", range(wd)));
            }
            for (f, wd) in FLIT {
                decls.push(format!("output wire {}n{n}_l{j}_out_{f}", range(width(wd))));
            }
            for (f, wd) in CREDIT {
                decls.push(format!("input wire {}n{n}_l{j}_credit_in_{f}", range(wd)));
            }
        }
        for c in ["dropped_packets", "flit_errors", "credit_errors"] {
            for q in 0..ports {
                decls.push(format!("output wire [31:0] n{n}_{c}_{q}"));
            }
        }
        if framed.is_some() {
            for q in 0..t.num_dir_ports() {
                if t.neighbour(n, q).is_none() {
                    continue;
                }
                for (f, wd, out) in PHY_PORTS {
                    let dir = if out { "output" } else { "input" };
                    decls.push(format!("{dir} wire {}n{n}_p{q}_{f}", range(wd)));
                }
                decls.push(format!("output wire [1:0] n{n}_p{q}_link_state"));
                for c in TX_COUNTERS {
                    decls.push(format!("output wire [31:0] n{n}_p{q}_tx_{c}"));
                }
                for c in RX_COUNTERS {
                    decls.push(format!("output wire [31:0] n{n}_p{q}_rx_{c}"));
                }
            }
        }
    }
    let _ = writeln!(v, "module {name} (\n    {}\n);", decls.join(",\n    "));
    // Router outputs on the links: wires (mesh boundaries: unused_*).
    let out_prefix = |n: usize, q: usize| -> String {
        match t.port_kind(q) {
            PortKind::Local(j) => format!("n{n}_l{j}_out"),
            PortKind::Dir { .. } if t.neighbour(n, q).is_some() => format!("n{n}_p{q}_out"),
            PortKind::Dir { .. } => format!("unused_n{n}_p{q}_out"),
        }
    };
    let credit_prefix = |n: usize, q: usize| -> String {
        match t.port_kind(q) {
            PortKind::Local(j) => format!("n{n}_l{j}_credit_out"),
            PortKind::Dir { .. } if t.neighbour(n, q).is_some() => {
                format!("n{n}_p{q}_credit_out")
            }
            PortKind::Dir { .. } => format!("unused_n{n}_p{q}_credit_out"),
        }
    };
    let _ = writeln!(v, "\n    // Router outputs towards neighbours.");
    for n in 0..nodes {
        for q in 0..t.num_dir_ports() {
            for (f, wd) in FLIT {
                let _ = writeln!(v, "    wire {}{}_{f};", range(width(wd)), out_prefix(n, q));
            }
            for (f, wd) in CREDIT {
                let _ = writeln!(v, "    wire {}{}_{f};", range(wd), credit_prefix(n, q));
            }
        }
    }
    // Link stages: flit of (n, q) towards its neighbour; credit of (n, q) towards its neighbour.
    // Stage 0 is the router output wire; stage k (1..=lat) a register.
    let stage = |base: &str, k: usize| -> String {
        if k == 0 {
            base.to_string()
        } else {
            format!("{base}_s{k}")
        }
    };
    if lat > 0 {
        let _ = writeln!(
            v,
            "\n    // Link registers: {lat} stage(s) per direction, reset to idle."
        );
        for n in 0..nodes {
            for q in 0..t.num_dir_ports() {
                if t.neighbour(n, q).is_none() {
                    continue;
                }
                for (base, fields) in [
                    (out_prefix(n, q), &FLIT[..]),
                    (credit_prefix(n, q), &CREDIT[..]),
                ] {
                    for k in 1..=lat {
                        for &(f, wd) in fields {
                            let _ = writeln!(
                                v,
                                "    reg {}{}_{f} = 0;",
                                range(width(wd)),
                                stage(&base, k)
                            );
                        }
                        let _ = writeln!(v, "    always @(posedge clock) begin");
                        let _ = writeln!(v, "        if (reset) begin");
                        for &(f, _) in fields {
                            let _ = writeln!(v, "            {}_{f} <= 0;", stage(&base, k));
                        }
                        let _ = writeln!(v, "        end else begin");
                        for &(f, _) in fields {
                            let _ = writeln!(
                                v,
                                "            {}_{f} <= {}_{f};",
                                stage(&base, k),
                                stage(&base, k - 1)
                            );
                        }
                        let _ = writeln!(v, "        end\n    end");
                    }
                }
            }
        }
    }
    if let Some(f) = framed {
        link_ends(&mut v, p, f, &out_prefix, &credit_prefix);
    }
    // Routers.
    for n in 0..nodes {
        let c = t.coords(n);
        let _ = writeln!(
            v,
            "\n    // Router {n} at x={}, y={}, z={}.",
            c[0], c[1], c[2]
        );
        let _ = writeln!(v, "    {router} router_n{n} (");
        let mut conns: Vec<String> = vec![
            ".clock(clock)".into(),
            ".reset(reset)".into(),
            format!(".node_x(4'd{})", c[0]),
            format!(".node_y(4'd{})", c[1]),
            format!(".node_z(4'd{})", c[2]),
        ];
        for q in 0..ports {
            // What feeds input q (flit) and credit input q.
            let (flit_src, credit_src) = match t.port_kind(q) {
                PortKind::Local(j) => (
                    Source::Top(format!("n{n}_l{j}_in")),
                    Source::Top(format!("n{n}_l{j}_credit_in")),
                ),
                PortKind::Dir { .. } => match t.neighbour(n, q) {
                    // Framed: our input q is fed by our link end's link_rx, our
                    // credit input q by its link_tx.
                    Some(_) if framed.is_some() => (
                        Source::Link(format!("n{n}_p{q}_lrx_out")),
                        Source::Link(format!("n{n}_p{q}_ltx_credit")),
                    ),
                    // Our input q is fed by the neighbour's output back_q; our credit
                    // input q by the neighbour's credit output back_q.
                    Some((m, back)) => (
                        Source::Link(stage(&out_prefix(m, back), lat)),
                        Source::Link(stage(&credit_prefix(m, back), lat)),
                    ),
                    None => (Source::Zero, Source::Zero),
                },
            };
            for (f, wd) in FLIT {
                conns.push(format!(".in_{f}_{q}({})", source(&flit_src, f, width(wd))));
            }
            for (f, _) in CREDIT {
                conns.push(format!(".credit_out_{f}_{q}({}_{f})", credit_prefix(n, q)));
            }
            for (f, _) in FLIT {
                conns.push(format!(".out_{f}_{q}({}_{f})", out_prefix(n, q)));
            }
            for (f, wd) in CREDIT {
                conns.push(format!(
                    ".credit_in_{f}_{q}({})",
                    source(&credit_src, f, wd)
                ));
            }
            for cn in ["dropped_packets", "flit_errors", "credit_errors"] {
                conns.push(format!(".{cn}_{q}(n{n}_{cn}_{q})"));
            }
        }
        let _ = writeln!(v, "        {}\n    );", conns.join(",\n        "));
    }
    let _ = writeln!(v, "endmodule // {name}");
    v
}

/// The status bus from a `link_rx` to its `link_tx`: (port suffix, width).
fn status_bus(vcs: usize) -> [(&'static str, usize); 8] {
    [
        ("st_state", 2),
        ("st_heard", 1),
        ("st_peer_valid", 1),
        ("st_peer_fields", 32),
        ("st_ack_seq", 6),
        ("st_nack_count", 8),
        ("st_urgent", 8),
        ("st_freed", 8 * vcs),
    ]
}

/// Framed links: per connected network port (n, q), a `link_tx` fed by
/// the router's output q and a `link_rx` feeding its input q, joined by
/// the status bus, with their PHY ports and counters on the top.
fn link_ends(
    v: &mut String,
    p: &RouterParams,
    f: &FramedNames,
    out_prefix: &dyn Fn(usize, usize) -> String,
    credit_prefix: &dyn Fn(usize, usize) -> String,
) {
    let t = &p.topology;
    let w = p.flit_bits;
    for n in 0..t.num_nodes() {
        for q in 0..t.num_dir_ports() {
            let Some((m, back)) = t.neighbour(n, q) else {
                continue;
            };
            let e = format!("n{n}_p{q}");
            let _ = writeln!(
                v,
                "\n    // Link end {e}: router {n} port {q} <-> router {m} port {back}."
            );
            for (fld, wd) in FLIT {
                let wd = if wd == 0 { w } else { wd };
                let _ = writeln!(v, "    wire {}{e}_lrx_out_{fld};", range(wd));
            }
            for (fld, wd) in CREDIT {
                let _ = writeln!(v, "    wire {}{e}_ltx_credit_{fld};", range(wd));
            }
            for (fld, wd) in status_bus(f.vcs) {
                let _ = writeln!(v, "    wire {}{e}_{fld};", range(wd));
            }
            let _ = writeln!(v, "    assign {e}_link_state = {e}_st_state;");
            let mut c: Vec<String> = vec![".clock(clock)".into(), ".reset(reset)".into()];
            for (fld, _) in FLIT {
                c.push(format!(".in_{fld}({}_{fld})", out_prefix(n, q)));
            }
            for (fld, _) in CREDIT {
                c.push(format!(".credit_out_{fld}({e}_ltx_credit_{fld})"));
            }
            for (fld, _, _) in &PHY_PORTS[..4] {
                c.push(format!(".{fld}({e}_{fld})"));
            }
            for (fld, _) in status_bus(f.vcs) {
                c.push(format!(".{fld}({e}_{fld})"));
            }
            for cn in TX_COUNTERS {
                c.push(format!(".cnt_{cn}({e}_tx_{cn})"));
            }
            let _ = writeln!(
                v,
                "    {} ltx_{e} (\n        {}\n    );",
                f.tx,
                c.join(",\n        ")
            );
            let mut c: Vec<String> = vec![".clock(clock)".into(), ".reset(reset)".into()];
            for (fld, _, _) in &PHY_PORTS[4..] {
                c.push(format!(".{fld}({e}_{fld})"));
            }
            for (fld, _) in FLIT {
                c.push(format!(".out_{fld}({e}_lrx_out_{fld})"));
            }
            for (fld, _) in CREDIT {
                c.push(format!(".credit_in_{fld}({}_{fld})", credit_prefix(n, q)));
            }
            for (fld, _) in status_bus(f.vcs) {
                c.push(format!(".{fld}({e}_{fld})"));
            }
            for cn in RX_COUNTERS {
                c.push(format!(".cnt_{cn}({e}_rx_{cn})"));
            }
            let _ = writeln!(
                v,
                "    {} lrx_{e} (\n        {}\n    );",
                f.rx,
                c.join(",\n        ")
            );
        }
    }
}

fn source(s: &Source, field: &str, width: usize) -> String {
    match s {
        Source::Top(pre) | Source::Link(pre) => format!("{pre}_{field}"),
        Source::Zero => format!("{width}'d0"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::{LINT_WAIVERS, LINT_WAIVERS_FILE};
    use exanet_sim::topology::Topology;
    use std::process::Command;

    fn params(dims: [usize; 3], wrap: [bool; 3], local: usize) -> RouterParams {
        RouterParams {
            topology: Topology::new(dims, wrap, local).unwrap(),
            ..Default::default()
        }
    }

    /// `verilator --lint-only -Wall` with the project's waivers; `None` when
    /// Verilator is missing (the caller prints why it skips).
    fn lint(e: &Emitted) -> Option<String> {
        if Command::new("verilator").arg("--version").output().is_err() {
            return None;
        }
        let dir =
            std::env::temp_dir().join(format!("exanet-lint-{}-{}", e.top, std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files = e.write_dir(&dir).unwrap();
        let list = dir.join("files.f");
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        std::fs::write(&list, names.join("\n")).unwrap();
        let vlt = dir.join(LINT_WAIVERS_FILE);
        std::fs::write(&vlt, LINT_WAIVERS).unwrap();
        let out = Command::new("verilator")
            .args(["--lint-only", "-Wall", "--top-module", &e.top])
            .arg(&vlt)
            .arg("-f")
            .arg(&list)
            .output()
            .expect("running verilator");
        let _ = std::fs::remove_dir_all(&dir);
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        let clean = out.status.success() && !text.contains("%Warning") && !text.contains("%Error");
        Some(if clean { String::new() } else { text })
    }

    /// A torus with latency-1 links and a mesh with direct links (boundary
    /// ports tied off) lint clean; the router module is emitted once and
    /// instanced per node with its coordinates.
    #[test]
    fn torus_and_mesh_tops_lint_clean() {
        for (p, lat) in [
            (params([4, 2, 2], [true; 3], 1), 1),
            (params([3, 2, 1], [false; 3], 2), 0),
        ] {
            let e = emit_network(&p, lat).unwrap();
            assert_eq!(e.top, network_top_name(&p, lat));
            let top = &e.modules.last().unwrap().1;
            let router = router_top_name(&p);
            let nodes = p.topology.num_nodes();
            assert_eq!(
                top.matches(&format!("    {router} router_n")).count(),
                nodes
            );
            assert_eq!(
                e.modules.iter().filter(|(n, _)| *n == router).count(),
                1,
                "the router module is emitted once"
            );
            let last = nodes - 1;
            let c = p.topology.coords(last);
            assert!(top.contains(&format!(".node_x(4'd{})", c[0])), "{top}");
            assert!(top.contains(&format!("n{last}_l0_out_valid")));
            assert!(top.contains(&format!("n{last}_credit_errors_{}", p.num_ports() - 1)));
            match lint(&e) {
                None => println!(
                    "ignored: verilator not installed; lint of {} skipped",
                    e.top
                ),
                Some(text) => assert!(text.is_empty(), "lint of {}:\n{text}", e.top),
            }
        }
    }

    #[test]
    fn links_have_the_requested_register_stages() {
        let p = params([2, 1, 1], [true; 3], 1);
        let top = network_top(&p, 2, "r", None, "t");
        // x+ and x- of both nodes, flit and credit, two stages each: one always block per stage.
        assert_eq!(
            top.matches("always @(posedge clock)").count(),
            2 * 2 * 2 * 2
        );
        assert!(top.contains("n0_p0_out_s2_valid <= n0_p0_out_s1_valid;"));
        // node 0's x+ input is node 1's x- output after 2 stages
        assert!(top.contains(".in_valid_0(n1_p1_out_s2_valid)"), "{top}");
        assert!(top.contains(".credit_in_valid_0(n1_p1_credit_out_s2_valid)"));
        let direct = network_top(&p, 0, "r", None, "t");
        assert!(!direct.contains("always"));
        assert!(direct.contains(".in_valid_0(n1_p1_out_valid)"));
        let mesh = network_top(&params([2, 1, 1], [false; 3], 1), 0, "r", None, "t");
        assert!(mesh.contains(".in_valid_1(1'd0)") && mesh.contains(".in_data_1(128'd0)"));
        assert!(mesh.contains(".out_valid_1(unused_n0_p1_out_valid)"));
    }

    /// Framed links: a torus (two links between the same two routers) and
    /// a mesh lint clean; every connected port gets a `link_tx` and a
    /// `link_rx`, each link module is emitted once, the routers' network
    /// inputs come from the `link_rx`es.
    #[test]
    fn framed_tops_lint_clean() {
        for (p, lat) in [
            (params([2, 1, 1], [true; 3], 1), 1),
            (params([2, 2, 1], [false; 3], 1), 4),
        ] {
            let lp = LinkParams::sized(p.flit_bits, p.num_vcs(), lat, p.buffer_flits);
            let e = emit_network_framed(&p, &lp).unwrap();
            assert_eq!(e.top, network_framed_top_name(&p, &lp));
            let top = &e.modules.last().unwrap().1;
            let t = &p.topology;
            let ends: usize = (0..t.num_nodes())
                .map(|n| {
                    (0..t.num_dir_ports())
                        .filter(|&q| t.neighbour(n, q).is_some())
                        .count()
                })
                .sum();
            assert_eq!(top.matches(" ltx_n").count(), ends);
            assert_eq!(top.matches(" lrx_n").count(), ends);
            let mut names: Vec<&String> = e.modules.iter().map(|(n, _)| n).collect();
            let all = names.len();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), all, "a module emitted twice");
            assert!(top.contains(".in_valid_0(n0_p0_lrx_out_valid)"), "{top}");
            assert!(top.contains(".credit_in_valid_0(n0_p0_ltx_credit_valid)"));
            assert!(top.contains("output wire [63:0] n0_p0_phy_tx_data"));
            assert!(!top.contains("always"));
            match lint(&e) {
                None => println!(
                    "ignored: verilator not installed; lint of {} skipped",
                    e.top
                ),
                Some(text) => assert!(text.is_empty(), "lint of {}:\n{text}", e.top),
            }
        }
        let p = params([2, 1, 1], [true; 3], 1);
        let mut lp = LinkParams::sized(p.flit_bits, p.num_vcs(), 1, p.buffer_flits);
        lp.tx_buffer_flits += 1;
        let e = emit_network_framed(&p, &lp).unwrap_err().to_string();
        assert!(
            e.contains("link.tx_buffer_flits") && e.contains("router.buffer_flits"),
            "{e}"
        );
        let lp = LinkParams::sized(64, p.num_vcs(), 1, p.buffer_flits);
        let e = emit_network_framed(&p, &lp).unwrap_err().to_string();
        assert!(e.contains("must agree"), "{e}");
    }

    #[test]
    fn bad_parameters_are_errors() {
        let p = params([4, 2, 2], [true; 3], 1);
        let e = emit_network(&p, MAX_LINK_LATENCY + 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("network.link_latency"), "{e}");
        let big = params([20, 1, 1], [true; 3], 1);
        assert!(emit_network(&big, 1).is_err());
    }
}
