//! `link_pair`: a generated structural top holding **both ends of one
//! cable** for the co-simulation `exanet cosim link`: per end `e` (0, 1) the
//! `link_tx` and `link_rx` modules exactly as [`emit_link_tx`] and
//! [`emit_link_rx`] emit them, `link_rx`'s status bus (`st_*`) wired to
//! `link_tx` inside the end. The PHY between the ends stays outside (the
//! bench runs the golden PHY model on the ends' PHY ports), so one Verilated
//! model holds all four RTL blocks and one waveform shows both ends.
//!
//! # Ports (top module [`link_pair_top_name`])
//! `clock`, `reset` (to all four blocks); per end `e`, every port of its
//! `link_tx` and `link_rx` except `clock`, `reset` and `st_*`, prefixed
//! `e<e>_` (`e0_in_valid`, `e0_phy_tx_data`, `e1_out_vc`, …), with the
//! counters named by their half: `e<e>_tx_<counter>` for `link_tx`'s
//! `cnt_<counter>` and `e<e>_rx_<counter>` for `link_rx`'s (both halves have
//! `bad_acks` and `overflows`); and `e<e>_state[2]`, the end's link state
//! (`link_rx`'s `st_state`). The port lists are read from the emitted
//! modules, so a port added to `link_tx` or `link_rx` appears here without
//! a change to this generator.

use super::link_rx::emit_link_rx;
use super::link_tx::emit_link_tx;
use crate::emit::Emitted;
use crate::node_pair::{module_ports, PortDecl};
use anyhow::{bail, Context, Result};
use askama::Template;
use exanet_sim::link::LinkParams;

/// One instance: module, instance name, `(port, signal)` connections.
struct Inst {
    module: String,
    name: String,
    conns: Vec<(String, String)>,
}

/// `templates/link/link_pair.v`.
#[derive(Template)]
#[template(path = "link/link_pair.v")]
struct Top {
    top: String,
    ports: Vec<String>,
    wires: Vec<String>,
    insts: Vec<Inst>,
    assigns: Vec<String>,
}

/// Top module name of a parameter point: the main sizes and a hash of
/// every parameter.
pub fn link_pair_top_name(p: &LinkParams) -> String {
    let text = exanet_sim::point::to_text(p);
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    format!(
        "exanet_link_pair_f{}_v{}_n{}_{:08x}",
        p.flit_bits, p.vcs, p.frame_flits, h as u32
    )
}

fn range(width: usize) -> String {
    if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    }
}

/// The top-level name of port `q` of end `e`'s `half` (`tx` or `rx`).
fn exposed(e: usize, half: &str, q: &PortDecl) -> String {
    match q.name.strip_prefix("cnt_") {
        Some(c) => format!("e{e}_{half}_{c}"),
        None => format!("e{e}_{}", q.name),
    }
}

/// The ports of an emitted rust-hdl top: the declarations right after its
/// `// Module arguments` line (a Verilog body's function inputs are not
/// ports).
pub(crate) fn header_ports(text: &str) -> Result<Vec<PortDecl>> {
    let block: Vec<&str> = text
        .lines()
        .skip_while(|l| l.trim() != "// Module arguments")
        .skip(1)
        .take_while(|l| {
            let t = l.trim_start();
            t.starts_with("input ") || t.starts_with("output ")
        })
        .collect();
    module_ports(&block.join("\n"))
}

/// Validate `p` and emit both ends of a link: `link_tx`'s modules,
/// `link_rx`'s, and the top.
pub fn emit_link_pair(p: &LinkParams) -> Result<Emitted> {
    let tx = emit_link_tx(p)?;
    let rx = emit_link_rx(p)?;
    let tx_ports = header_ports(&tx.modules.last().context("link_tx top module")?.1)
        .context("reading link_tx's port list")?;
    let rx_ports = header_ports(&rx.modules.last().context("link_rx top module")?.1)
        .context("reading link_rx's port list")?;
    // Every status input of link_tx must be a status output of link_rx.
    for q in tx_ports.iter().filter(|q| q.name.starts_with("st_")) {
        let found = rx_ports.iter().find(|r| r.name == q.name);
        match found {
            Some(r) if !r.input && q.input && r.width == q.width => {}
            _ => bail!(
                "link_tx input `{}` ({} bits) has no matching link_rx output",
                q.name,
                q.width
            ),
        }
    }
    let top = link_pair_top_name(p);
    let mut t = Top {
        top: top.clone(),
        ports: vec!["input wire clock".into(), "input wire reset".into()],
        wires: Vec::new(),
        insts: Vec::new(),
        assigns: Vec::new(),
    };
    for e in 0..2 {
        for (half, module, ports) in [("tx", &tx.top, &tx_ports), ("rx", &rx.top, &rx_ports)] {
            let mut conns = Vec::new();
            for q in ports.iter() {
                let sig = match q.name.as_str() {
                    "clock" | "reset" => q.name.clone(),
                    n if n.starts_with("st_") => format!("e{e}_{n}"),
                    _ => {
                        let name = exposed(e, half, q);
                        let dir = if q.input { "input" } else { "output" };
                        t.ports.push(format!("{dir} wire {}{name}", range(q.width)));
                        name
                    }
                };
                if half == "rx" && q.name.starts_with("st_") {
                    t.wires.push(format!("{}e{e}_{}", range(q.width), q.name));
                }
                conns.push((q.name.clone(), sig));
            }
            t.insts.push(Inst {
                module: module.clone(),
                name: format!("e{e}_{half}"),
                conns,
            });
        }
        t.ports.push(format!("output wire [1:0] e{e}_state"));
        t.assigns.push(format!("e{e}_state = e{e}_st_state"));
    }
    let text = t
        .render()
        .context("rendering the template templates/link/link_pair.v")?;
    let mut modules = tx.modules.clone();
    modules.extend(rx.modules.iter().cloned());
    modules.push((top.clone(), text));
    Ok(Emitted { top, modules })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    #[test]
    fn both_ends_lint_clean_and_expose_every_port() {
        for (fb, v, lat) in [(128, 4, 16), (64, 1, 2), (256, 8, 4)] {
            let p = LinkParams::sized(fb, v, lat, 32);
            let e = emit_link_pair(&p).unwrap();
            assert_eq!(e.top, link_pair_top_name(&p));
            let text = &e.modules.last().unwrap().1;
            let ports = module_ports(text).unwrap();
            for name in [
                "e0_in_data",
                "e1_phy_tx_data",
                "e1_phy_rx_data",
                "e0_out_vc",
                "e1_credit_in_valid",
                "e0_tx_frames_sent",
                "e0_rx_bad_acks",
                "e0_tx_bad_acks",
                "e1_rx_link_downs",
                "e1_state",
            ] {
                assert!(
                    ports.iter().any(|q| q.name == name),
                    "{name} missing in {text}"
                );
            }
            assert!(!ports.iter().any(|q| q.name.contains("st_")), "{text}");
            assert_lint_clean(&e);
        }
    }

    #[test]
    fn bad_params_name_the_key() {
        let p = LinkParams {
            vcs: 9,
            ..Default::default()
        };
        let e = emit_link_pair(&p).unwrap_err().to_string();
        assert!(e.contains("link.vcs = 9"), "{e}");
    }
}
