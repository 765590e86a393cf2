//! The Vivado flows without Vivado: the node flow's TCL and XDC against
//! golden files per board, and the generated scripts *executed* by tclsh
//! against stand-ins for every Vivado command they call
//! (`scripts/vivado/stub/vivado_stub.tcl`: options checked against UG835,
//! call order recorded). Skipped, saying so, when `tclsh` is absent.

mod common;

use common::{repo, EXE};
use exanet_gen::board;
use exanet_gen::config::load;
use exanet_gen::node_flow::{render_node_tcl, render_node_xdc, NODE_RTL_PATH};
use exanet_gen::params::{elaborate, Transceiver};
use std::path::{Path, PathBuf};
use std::process::Command;

fn golden(name: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("EXANET_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (EXANET_BLESS=1 writes it)", path.display()));
    assert!(
        want == text,
        "{} differs from the rendered text (EXANET_BLESS=1 rewrites it)",
        path.display()
    );
}

/// The node flow of configs/mesh-4x4x1.toml (4 network links: one per
/// ZCU102 SFP+ cage) on `board` with `fpga.transceiver = transceiver`, with
/// a fixed module list.
fn mesh_on(board_name: &str, transceiver: &str) -> anyhow::Result<(String, String)> {
    let l = load(
        Some(&repo().join("configs/mesh-4x4x1.toml")),
        &[
            format!("fpga.board={board_name}"),
            format!("fpga.transceiver={transceiver}"),
        ],
    )?;
    let p = elaborate(&l.config)?;
    let b = board::load(&l.config.fpga.board, &p.fpga.part)?;
    let files = ["rtl/exanet_router_example.v".to_string()];
    Ok((render_node_tcl(&p, &b, &files)?, render_node_xdc(&p, &b)?))
}

#[test]
fn zcu102_node_flow_matches_golden() {
    for (t, suffix) in [("gth", ""), ("aurora", "-aurora")] {
        let (tcl, xdc) = mesh_on("zcu102", t).unwrap();
        golden(&format!("node-zcu102-mesh-4x4x1{suffix}.tcl"), &tcl);
        golden(&format!("node-zcu102-mesh-4x4x1{suffix}.xdc"), &xdc);
        // Pins from the board file, the refclk period from its frequency;
        // the same port names for both transceivers.
        assert!(xdc.contains("create_clock -name gt_refclk -period 6.400"));
        assert!(xdc.contains("set_property PACKAGE_PIN C8 [get_ports gt_refclk_clk_p]"));
        assert!(xdc.contains("set_property PACKAGE_PIN A8 [get_ports {link3_gt_tx_txp[0]}]"));
        assert!(xdc.contains("set_max_delay -datapath_only"));
        assert!(xdc.contains("set_bus_skew"));
        // The flag crosses the transceiver: no input of the node is tied
        // off and no output left open for it.
        assert!(
            !tcl.contains("rx_ctrl_zero") && !tcl.contains("KNOWN GAP"),
            "{t}"
        );
        for l in 0..4 {
            for port in ["tx_ctrl", "rx_ctrl", "tx_tready", "channel_up"] {
                assert!(
                    tcl.contains(&format!("node/link{l}_{port}]")),
                    "{t}: link{l}_{port} not connected"
                );
            }
        }
    }
}

/// The node flow of the built-in default config (8×4×4 torus: six network
/// links) on the ZCU102: four links on the SFP+ quad, two on FMC HPC0's
/// quad, each quad with its own reference clock and owner of its common
/// block.
fn default_on_zcu102(transceiver: &str) -> (String, String) {
    let l = load(None, &[format!("fpga.transceiver={transceiver}")]).unwrap();
    let p = elaborate(&l.config).unwrap();
    assert_eq!(p.topology.network_ports, 6);
    let b = board::load(&l.config.fpga.board, &p.fpga.part).unwrap();
    let files = ["rtl/exanet_router_example.v".to_string()];
    (
        render_node_tcl(&p, &b, &files).unwrap(),
        render_node_xdc(&p, &b).unwrap(),
    )
}

#[test]
fn default_node_flow_spans_two_quads() {
    for (t, suffix) in [("gth", ""), ("aurora", "-aurora")] {
        let (tcl, xdc) = default_on_zcu102(t);
        golden(&format!("node-zcu102-default{suffix}.tcl"), &tcl);
        golden(&format!("node-zcu102-default{suffix}.xdc"), &xdc);
        // Both reference clocks, each constrained on its own pins.
        assert!(xdc.contains("set_property PACKAGE_PIN C8 [get_ports gt_refclk_clk_p]"));
        assert!(xdc.contains("set_property PACKAGE_PIN G8 [get_ports gt_refclk1_clk_p]"));
        assert!(xdc.contains("create_clock -name gt_refclk1 -period 6.400"));
        // The FMC lanes' pins; no TX_DISABLE for them.
        assert!(xdc.contains("set_property PACKAGE_PIN H2 [get_ports {link4_gt_rx_rxp[0]}]"));
        assert!(xdc.contains("set_property PACKAGE_PIN H6 [get_ports {link5_gt_tx_txp[0]}]"));
        assert!(xdc.contains("link3_tx_disable") && !xdc.contains("link4_tx_disable"));
        assert!(!tcl.contains("link5_tx_disable]"));
        assert!(tcl.contains("create_bd_intf_port -mode Slave -vlnv xilinx.com:interface:diff_clock_rtl:1.0 gt_refclk1"));
        if t == "gth" {
            assert_eq!(tcl.matches("CONFIG.LOCATE_COMMON {CORE}").count(), 2);
            assert!(
                tcl.contains("[get_bd_pins refclk_buf1/IBUF_OUT] [get_bd_pins gt_4/gtrefclk00_in]")
            );
            assert!(
                tcl.contains("[get_bd_pins gt_4/qpll0outclk_out] [get_bd_pins gt_5/qpll0clk_in]")
            );
            assert!(!tcl.contains("[get_bd_pins gt_0/qpll0outclk_out] [get_bd_pins gt_4/"));
        } else {
            assert_eq!(tcl.matches("CONFIG.SupportLevel {1}").count(), 2);
            assert!(tcl.contains("CONFIG.C_START_QUAD {Quad_X1Y2}"));
            assert!(tcl.contains("CONFIG.C_START_LANE {X1Y10}"));
            assert!(tcl.contains(
                "[get_bd_intf_ports gt_refclk1] [get_bd_intf_pins aurora_4/GT_DIFF_REFCLK1]"
            ));
        }
    }
}

#[test]
fn a_bad_transceiver_is_refused_naming_key_and_value() {
    let e = format!("{:#}", mesh_on("zcu102", "gtx").unwrap_err());
    assert!(
        e.contains("fpga.transceiver") && e.contains("\"gtx\"") && e.contains("\"aurora\""),
        "{e}"
    );
}

#[test]
fn qfdb_template_is_refused_per_field() {
    let e = format!("{:#}", mesh_on("qfdb", "gth").unwrap_err());
    assert!(e.contains("unknown field(s)"), "{e}");
    for f in ["board_part", "refclk.p", "refclk.n", "lanes[3].tx_p"] {
        assert!(e.contains(f), "{f} not named: {e}");
    }
}

#[test]
fn generate_refuses_an_unknown_board_field_on_the_command_line() {
    let d = tempfile::tempdir().unwrap();
    let o = Command::new(EXE)
        .args(["generate", "-P", "fpga.board=qfdb", "--out"])
        .arg(d.path().join("o"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("fpga.board") && err.contains("lanes[0].rx_p"),
        "{err}"
    );
    assert!(!d.path().join("o/manifest.json").exists());
}

/// `tclsh` on PATH, or None after saying why the test is skipped.
fn tclsh(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("tclsh"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        eprintln!("SKIPPED {test}: `tclsh` is not on PATH (Debian package `tcl`)");
    }
    found
}

struct StubRun {
    ok: bool,
    calls: Vec<String>,
    stderr: String,
}

/// Run `script` (inside a generated OUT) under tclsh with the Vivado stubs.
fn run_stubbed(tclsh: &Path, script: &Path, slack: &str) -> StubRun {
    let dir = tempfile::tempdir().unwrap();
    let driver = dir.path().join("driver.tcl");
    let stub = repo().join("scripts/vivado/stub/vivado_stub.tcl");
    std::fs::write(
        &driver,
        format!(
            "source {{{}}}\nset ::stub::slack {slack}\nset ::stub::tmp {{{}}}\n\
             if {{[catch {{source {{{}}}}} msg]}} {{ puts stderr \"FAILED: $msg\"; exit 1 }}\n\
             foreach c $::stub::calls {{ puts $c }}\n",
            stub.display(),
            dir.path().join("tmp").display(),
            script.display()
        ),
    )
    .unwrap();
    let o = Command::new(tclsh)
        .arg(&driver)
        .current_dir(dir.path())
        .output()
        .unwrap();
    StubRun {
        ok: o.status.success(),
        calls: String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_string)
            .collect(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// `exanet generate` of configs/mesh-4x4x1.toml into a temporary OUT (with
/// the node top the flow reads), with `fpga.transceiver = "gth"` (the
/// default).
fn generated() -> tempfile::TempDir {
    generated_with("gth")
}

/// [`generated`] with `fpga.transceiver = transceiver`.
fn generated_with(transceiver: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let o = Command::new(EXE)
        .arg("generate")
        .arg("--config")
        .arg(repo().join("configs/mesh-4x4x1.toml"))
        .args(["-P", &format!("fpga.transceiver={transceiver}")])
        .arg("--out")
        .arg(d.path().join("o"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(d.path().join("o").join(NODE_RTL_PATH).exists());
    // The chosen transceiver's cost is said.
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let t = match transceiver {
        "gth" => Transceiver::Gth,
        _ => Transceiver::Aurora,
    };
    assert!(
        all.contains(exanet_gen::generate::transceiver_note(t)),
        "{all}"
    );
    d
}

fn first(calls: &[String], cmd: &str) -> usize {
    calls
        .iter()
        .position(|c| c.split_whitespace().next() == Some(cmd))
        .unwrap_or_else(|| panic!("{cmd} never called"))
}

#[test]
fn node_tcl_runs_under_the_stubs_in_flow_order() {
    let Some(t) = tclsh("node_tcl_runs_under_the_stubs_in_flow_order") else {
        return;
    };
    let d = generated();
    let r = run_stubbed(&t, &d.path().join("o/vivado/node.tcl"), "0.250");
    assert!(r.ok, "{}", r.stderr);
    let order = [
        "read_verilog",
        "create_bd_design",
        "read_xdc",
        "synth_design",
        "opt_design",
        "place_design",
        "phys_opt_design",
        "route_design",
        "report_utilization",
        "report_timing_summary",
        "report_cdc",
        "write_bitstream",
        "write_hw_platform",
    ];
    let at: Vec<usize> = order.iter().map(|c| first(&r.calls, c)).collect();
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "flow order {order:?} at {at:?}"
    );
    // The PS ports, one GTH wizard and lane adapter per link, the .xsa with
    // the bitstream.
    let text = r.calls.join("\n");
    for want in [
        "CONFIG.PSU__USE__S_AXI_GP2 1",
        "CONFIG.PSU__SAXIGP2__DATA_WIDTH 128",
        "ps/pl_ps_irq0",
        "CONFIG.preset GTH-10GBASE-R",
        "CONFIG.TX_LINE_RATE 10.3125",
        "CONFIG.RX_REFCLK_FREQUENCY 156.25",
        "CONFIG.TX_USER_DATA_WIDTH 64",
        "CONFIG.C_BUF_TYPE IBUFDSGTE",
        "connect_bd_net node/link2_tx_ctrl lane_2/tx_ctrl",
        "connect_bd_net lane_3/gt_txheader gt_3/txheader_in",
        "write_hw_platform -fixed -include_bit",
    ] {
        assert!(text.contains(want), "`{want}` not in the calls");
    }
    let count = |s: &str| r.calls.iter().filter(|c| c.contains(s)).count();
    assert_eq!(count("xilinx.com:ip:gtwizard_ultrascale"), 4);
    assert_eq!(count("-reference exanet_gth_lane"), 4);
    assert_eq!(count("aurora_64b66b"), 0);
    // One wizard owns the quad's common block; the others take its QPLL0.
    assert_eq!(text.matches("CONFIG.LOCATE_COMMON CORE").count(), 1);
    assert_eq!(
        text.matches("CONFIG.LOCATE_COMMON EXAMPLE_DESIGN").count(),
        3
    );
    assert_eq!(
        text.matches("connect_bd_net gt_0/qpll0outclk_out gt_")
            .count(),
        3
    );
    // The lane adapter is read with the node's RTL.
    assert!(r
        .calls
        .iter()
        .any(|c| c.starts_with("read_verilog") && c.ends_with("rtl/exanet_gth_lane.v")));
}

#[test]
fn aurora_node_tcl_runs_under_the_stubs_in_framing_mode() {
    let Some(t) = tclsh("aurora_node_tcl_runs_under_the_stubs_in_framing_mode") else {
        return;
    };
    let d = generated_with("aurora");
    let r = run_stubbed(&t, &d.path().join("o/vivado/node.tcl"), "0.250");
    assert!(r.ok, "{}", r.stderr);
    let text = r.calls.join("\n");
    for want in [
        "CONFIG.C_LINE_RATE 10.3125",
        "CONFIG.C_REFCLK_FREQUENCY 156.25",
        "CONFIG.interface_mode Framing",
        "connect_bd_net node/link1_tx_ctrl aurora_1/s_axi_tx_tlast",
        "connect_bd_net aurora_1/m_axi_rx_tlast node/link1_rx_ctrl",
        "connect_bd_net keep_all/dout aurora_0/s_axi_tx_tkeep",
    ] {
        assert!(text.contains(want), "`{want}` not in the calls");
    }
    assert!(!text.contains("Streaming") && !text.contains("gtwizard"));
    let cores = r
        .calls
        .iter()
        .filter(|c| c.contains("aurora_64b66b"))
        .count();
    assert_eq!(cores, 4);
    // One core owns the quad's common block.
    assert_eq!(text.matches("CONFIG.SupportLevel 1").count(), 1);
    assert!(!d.path().join("o/rtl/exanet_gth_lane.v").exists());
}

/// `verilator --lint-only -Wall` of `exanet_board_lint` in `dir` (the
/// board-level lint folder) with the generated RTL of `out`: (exit ok,
/// stderr), or None after saying why the test is skipped.
fn lint_board(test: &str, out: &Path, dir: &Path) -> Option<(bool, String)> {
    if Command::new("verilator").arg("--version").output().is_err() {
        eprintln!("SKIPPED {test}: verilator is not installed");
        return None;
    }
    let o = Command::new("verilator")
        .args(["--lint-only", "-Wall"])
        .arg(out.join("rtl/exanet_waivers.vlt"))
        .args(["--top-module", "exanet_board_lint"])
        .arg("-y")
        .arg(out.join("rtl"))
        .arg("-y")
        .arg(dir)
        .arg(dir.join("exanet_board_lint.v"))
        .output()
        .unwrap();
    Some((
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    ))
}

/// The board-level wiring for the default `fpga.transceiver = "gth"` (the
/// node, GTH lane adapters around pcs66, and black boxes of the wizard
/// with its documented port list, wired from the list the block design is
/// made from) is `verilator --lint-only -Wall` clean.
#[test]
fn gth_board_wiring_lints_clean() {
    let d = generated();
    let out = d.path().join("o");
    let Some((ok, err)) = lint_board(
        "gth_board_wiring_lints_clean",
        &out,
        &out.join("lint/board"),
    ) else {
        return;
    };
    assert!(ok && !err.contains("%Warning"), "{err}");
}

/// `exanet generate` on the built-in default config writes the node flow
/// (six links over two quads); its TCL runs under the stubs and its
/// board-level wiring lints clean.
#[test]
fn default_config_node_flow_runs_and_its_wiring_lints_clean() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o");
    let o = Command::new(EXE)
        .args(["generate", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!said.contains("not generated"), "{said}");
    assert!(out.join("vivado/node.tcl").exists() && out.join("constraints/node.xdc").exists());
    if let Some(t) = tclsh("default_config_node_flow_runs_and_its_wiring_lints_clean") {
        let r = run_stubbed(&t, &out.join("vivado/node.tcl"), "0.250");
        assert!(r.ok, "{}", r.stderr);
        let count = |s: &str| r.calls.iter().filter(|c| c.contains(s)).count();
        assert_eq!(count("xilinx.com:ip:gtwizard_ultrascale"), 6);
        assert_eq!(count("CONFIG.C_BUF_TYPE IBUFDSGTE"), 2);
        assert!(first(&r.calls, "write_hw_platform") > first(&r.calls, "write_bitstream"));
    }
    if let Some((ok, err)) = lint_board(
        "default_config_node_flow_runs_and_its_wiring_lints_clean",
        &out,
        &out.join("lint/board"),
    ) {
        assert!(ok && !err.contains("%Warning"), "{err}");
    }
}

/// The same for `"aurora"`, and a wrong pin name in the wiring is caught
/// (one more node elaboration each: ~15 s apiece on 2 busy cores).
#[test]
#[ignore]
fn aurora_board_wiring_lints_clean_and_a_wrong_pin_fails() {
    let test = "aurora_board_wiring_lints_clean_and_a_wrong_pin_fails";
    for t in ["aurora", "gth"] {
        let d = generated_with(t);
        let out = d.path().join("o");
        let board = out.join("lint/board");
        if t == "aurora" {
            let Some((ok, err)) = lint_board(test, &out, &board) else {
                return;
            };
            assert!(ok && !err.contains("%Warning"), "{t}: {err}");
        }
        let top = std::fs::read_to_string(board.join("exanet_board_lint.v")).unwrap();
        let pin = if t == "gth" {
            ".txheader_in("
        } else {
            ".s_axi_tx_tlast("
        };
        assert!(top.contains(pin), "{t}: {pin}");
        let bad = d.path().join("bad");
        std::fs::create_dir_all(&bad).unwrap();
        for f in std::fs::read_dir(&board).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, bad.join(f.file_name().unwrap())).unwrap();
        }
        std::fs::write(
            bad.join("exanet_board_lint.v"),
            top.replacen(pin, &pin.replace('(', "x("), 1),
        )
        .unwrap();
        let Some((ok, err)) = lint_board(test, &out, &bad) else {
            return;
        };
        assert!(!ok && err.contains("PINNOTFOUND"), "{t}: {err}");
    }
}

#[test]
fn ooc_build_tcl_runs_under_the_stubs() {
    let Some(t) = tclsh("ooc_build_tcl_runs_under_the_stubs") else {
        return;
    };
    let d = generated();
    let r = run_stubbed(&t, &d.path().join("o/vivado/build.tcl"), "0.250");
    assert!(r.ok, "{}", r.stderr);
    assert!(first(&r.calls, "read_verilog") < first(&r.calls, "synth_design"));
    assert!(r.calls.iter().any(|c| c.starts_with("close_project")));
}

/// The stubs catch what Vivado would: each mutation of a good script fails
/// with a message naming what is wrong.
#[test]
fn stubs_fail_a_misspelling_a_wrong_option_and_an_undefined_variable() {
    let Some(t) = tclsh("stubs_fail_a_misspelling_a_wrong_option_and_an_undefined_variable") else {
        return;
    };
    let d = generated();
    let script = d.path().join("o/vivado/node.tcl");
    let good = std::fs::read_to_string(&script).unwrap();
    let cases = [
        (
            "\nopt_design\n",
            "\nopt_desing\n",
            "invalid command name \"opt_desing\"",
        ),
        (
            "write_hw_platform -fixed -include_bit -force [",
            "write_hw_platform -fixed -include_bit -force -file [",
            "option -file is not documented for write_hw_platform",
        ),
        (
            "report_cdc -details",
            "report_cdc -detail",
            "option -detail is not documented for report_cdc",
        ),
        (
            "[file join $reports utilization.rpt]",
            "[file join $report utilization.rpt]",
            "can't read \"report\"",
        ),
        (
            "create_bd_cell -type module",
            "create_bd_cell -type modul",
            "-type modul is not one of",
        ),
        (
            "read_xdc [file join $out constraints node.xdc]",
            "read_xdc [file join $out constraints nod.xdc]",
            "no file",
        ),
    ];
    for (from, to, want) in cases {
        assert!(good.contains(from), "`{from}` not in node.tcl");
        let bad = d.path().join("o/vivado/bad.tcl");
        std::fs::write(&bad, good.replacen(from, to, 1)).unwrap();
        let r = run_stubbed(&t, &bad, "0.250");
        assert!(!r.ok, "`{to}` was not caught");
        assert!(r.stderr.contains(want), "`{to}`: {}", r.stderr);
    }
}

#[test]
fn negative_slack_fails_the_run_before_the_bitstream() {
    let Some(t) = tclsh("negative_slack_fails_the_run_before_the_bitstream") else {
        return;
    };
    let d = generated();
    let r = run_stubbed(&t, &d.path().join("o/vivado/node.tcl"), "-0.042");
    assert!(!r.ok);
    assert!(
        r.stderr
            .contains("timing not met: WNS -0.042 ns (setup), WHS -0.042 ns (hold)"),
        "{}",
        r.stderr
    );
    assert!(!r.calls.iter().any(|c| c.starts_with("write_bitstream")));
}

#[test]
fn a_missing_node_top_is_named() {
    let Some(t) = tclsh("a_missing_node_top_is_named") else {
        return;
    };
    let d = generated();
    // An output folder whose node RTL was lost (deleted by hand, or an
    // interrupted copy): the flow must stop before Vivado, naming the file.
    let rtl = d.path().join("o").join(NODE_RTL_PATH);
    assert!(rtl.exists(), "generate emits {}", rtl.display());
    std::fs::remove_file(&rtl).unwrap();
    let r = run_stubbed(&t, &d.path().join("o/vivado/node.tcl"), "0.250");
    assert!(!r.ok);
    assert!(
        r.stderr.contains("rtl/exanet_node.v is missing") && r.stderr.contains("exanet_node"),
        "{}",
        r.stderr
    );
}

/// `exanet build` without Vivado: a clear error naming `vivado`, nothing run.
#[test]
fn build_without_vivado_names_what_is_missing() {
    let d = generated();
    let o = Command::new(EXE)
        .args(["build", "--out"])
        .arg(d.path().join("o"))
        .env("PATH", d.path()) // no vivado here
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert!(err.contains("`vivado` is not on PATH"), "{err}");
    assert!(!d.path().join("o/reports/node/summary.json").exists());
    // No node flow generated: says to generate (with a board lane per link).
    let o = Command::new(EXE)
        .args(["build", "--out"])
        .arg(d.path().join("nothing"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("node.tcl does not exist"), "{err}");
}
