//! `exanet lint`: `verilator --lint-only -Wall` on every generated top, and
//! on the node flow's board-level transceiver wiring when the output folder
//! has one (`lint/board/`: the node, its lane adapters and the vendor IP as
//! black boxes, wired by the list `vivado/node.tcl` is made from).

use crate::generate::{path_in, Manifest};
use anyhow::{bail, Context, Result};
use exanet_hdl::emit::LINT_WAIVERS_FILE;
use std::path::Path;
use std::process::Command;

/// Lint result of one top.
#[derive(Clone, Debug)]
pub struct LintResult {
    /// Top module.
    pub top: String,
    /// Block of the top.
    pub block: String,
    /// First line of each `%Warning`/`%Error` message.
    pub problems: Vec<String>,
    /// Verilator's whole output (stdout + stderr).
    pub output: String,
    /// Verilator's exit status was success.
    pub exited_ok: bool,
}

impl LintResult {
    /// No warnings, no errors.
    pub fn clean(&self) -> bool {
        self.exited_ok && self.problems.is_empty()
    }
}

/// Lint every top of `manifest` (generated into `out`).
pub fn lint(manifest: &Manifest, out: &Path) -> Result<Vec<LintResult>> {
    if crate::tools::verilator_version().is_none() {
        bail!(
            "`verilator` is not installed or not on PATH: install the Debian package \
             `verilator` (scripts/ do this) and run `exanet lint` again"
        );
    }
    let rtl = out.join("rtl");
    let waivers = rtl.join(LINT_WAIVERS_FILE);
    if !waivers.is_file() {
        bail!(
            "{} is missing: run `exanet generate --out {}` again",
            waivers.display(),
            out.display()
        );
    }
    let mut results = Vec::new();
    let board_dir = out.join(crate::node_flow::BOARD_LINT_DIR);
    let board_top = exanet_hdl::transceiver::BOARD_LINT_TOP;
    let board = board_dir.join(format!("{board_top}.v"));
    let board = board.is_file().then(|| crate::generate::TopEntry {
        block: "board".to_string(),
        top: board_top.to_string(),
        point: String::new(),
        files: Vec::new(),
        notes: Vec::new(),
    });
    for t in manifest.tops.iter().chain(board.as_ref()) {
        let (top_file, extra) = if t.block == "board" && board.is_some() {
            (board_dir.join(format!("{}.v", t.top)), Some(&board_dir))
        } else {
            (path_in(out, &format!("rtl/{}.v", t.top)), None)
        };
        let mut cmd = Command::new("verilator");
        cmd.args(["--lint-only", "-Wall"])
            .arg(&waivers)
            .args(["--top-module", &t.top])
            .arg("-y")
            .arg(&rtl);
        if let Some(d) = extra {
            cmd.arg("-y").arg(d);
        }
        let o = cmd
            .arg(&top_file)
            .output()
            .with_context(|| format!("running verilator on {}", t.top))?;
        let output =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        let problems = output
            .lines()
            .filter(|l| l.starts_with("%Warning") || l.starts_with("%Error"))
            // Verilator's closing tally repeats the count, not a new problem.
            .filter(|l| !l.starts_with("%Error: Exiting due to"))
            .map(str::to_string)
            .collect();
        results.push(LintResult {
            top: t.top.clone(),
            block: t.block.clone(),
            problems,
            output,
            exited_ok: o.status.success(),
        });
    }
    Ok(results)
}
