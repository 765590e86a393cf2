//! `exanet`: the command line. Thin: parsing, printing and exit codes only;
//! the work is in the `exanet_gen` library.

use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use exanet_gen::config::{self, Loaded};
use exanet_gen::error::{is_usage, usage};
use exanet_gen::{cosim, generate, lint, synth};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;

const ABOUT: &str = "Generate, check and co-simulate the exanet interconnect hardware \
(router, NI, links of an ExaNeSt-class machine of ZU9EG FPGAs).";

const LONG_ABOUT: &str = "\
Generate, check and co-simulate the exanet interconnect hardware (router, NI,
links of an ExaNeSt-class machine of ZU9EG FPGAs).

A config is a TOML file (see configs/). Without --config, the built-in
ExaNeSt 8x4x4 default (configs/exanest-8x4x4.toml) is used; a file only needs
the keys it changes. Any key can be overridden with -P key.path=value.

Typical session:
  exanet generate                          # RTL + XDC + Vivado TCL into out/
  exanet lint                              # verilator -Wall on every top
  exanet synth                             # Yosys LUT/FF/BRAM estimate vs ZU9EG
  exanet cosim fifo                        # RTL vs golden model, every test point

Exit codes: 0 ok, 1 a check failed (lint warning, RTL mismatch, tool error),
2 a usage or config error.";

#[derive(Parser)]
#[command(name = "exanet", version, about = ABOUT, long_about = LONG_ABOUT)]
struct Cli {
    #[command(flatten)]
    cfg: ConfigArgs,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Args)]
struct ConfigArgs {
    /// Config file (TOML); keys it omits keep the built-in default's values.
    #[arg(long, short = 'c', value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    /// Override one config key, e.g. -P router.vcs_per_class=4 or
    /// -P topology.dims=[4,4,1] (repeatable; applied after --config).
    #[arg(short = 'P', value_name = "KEY=VALUE", global = true)]
    set: Vec<String>,
}

impl ConfigArgs {
    fn given(&self) -> bool {
        self.config.is_some() || !self.set.is_empty()
    }
    fn load(&self) -> Result<Loaded> {
        config::load(self.config.as_deref(), &self.set)
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Write Verilog, constraints, a Vivado script and a manifest for a config.
    ///
    /// Writes OUT/rtl/<module>.v (one module per file), OUT/rtl/exanet_waivers.vlt,
    /// OUT/constraints/exanet.xdc, OUT/vivado/build.tcl and OUT/manifest.json
    /// (config, derived parameters, every file with its SHA-256, tool versions).
    /// The output is deterministic; stale Verilog in OUT/rtl is removed.
    ///
    /// Examples:
    ///   exanet generate
    ///   exanet generate --config configs/small-4x2x2.toml --out out/small
    ///   exanet generate -P router.vcs_per_class=4 -P router.buffer_flits=64
    #[command(verbatim_doc_comment)]
    Generate {
        /// Output folder.
        #[arg(long, short, default_value = "out", value_name = "DIR")]
        out: PathBuf,
    },
    /// Print the effective config (after --config and -P) as TOML, or its derived parameters.
    ///
    /// Examples:
    ///   exanet config -P topology.dims=[4,4,2] > my.toml
    ///   exanet config --derived --config configs/mesh-4x4x1.toml
    #[command(verbatim_doc_comment)]
    Config {
        /// Print the derived parameters (ports, packet flits, link cycles, ...) as JSON.
        #[arg(long)]
        derived: bool,
    },
    /// Lint every generated top with `verilator --lint-only -Wall`; fails on any warning.
    ///
    /// Reads OUT/manifest.json (run `exanet generate` first). With --config/-P,
    /// first checks that OUT was generated from that config.
    ///
    /// Example:
    ///   exanet generate --out out && exanet lint --out out
    #[command(verbatim_doc_comment)]
    Lint {
        /// Folder written by `exanet generate`.
        #[arg(long, short, default_value = "out", value_name = "DIR")]
        out: PathBuf,
    },
    /// Estimate LUT/FF/CARRY/LUTRAM/BRAM/DSP of the generated tops with Yosys (UltraScale+).
    ///
    /// Prints a table with the share of a ZU9EG and caches results in
    /// OUT/.synth-cache (by Verilog and Yosys version).
    ///
    /// Examples:
    ///   exanet synth
    ///   exanet synth --block fifo --json out/fifo-resources.json
    #[command(verbatim_doc_comment)]
    Synth {
        /// Folder written by `exanet generate`.
        #[arg(long, short, default_value = "out", value_name = "DIR")]
        out: PathBuf,
        /// Only the tops of this block (or this top module name).
        #[arg(long, value_name = "NAME")]
        block: Option<String>,
        /// Also write the results as JSON here.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Run a block's Verilated RTL against its golden Rust model, cycle by cycle.
    ///
    /// Without --point, runs every point of the block's test matrix. The first
    /// difference stops a run and is reported with cycle, port, expected and
    /// actual values, the seed and a waveform (VCD).
    ///
    /// Examples:
    ///   exanet cosim --list
    ///   exanet cosim fifo
    ///   exanet cosim fifo --point width=133,depth=32,almost_full=15 --cycles 1000000
    ///   exanet cosim fifo --point width=8,depth=4,almost_full=3 --rtl my-rtl/ --trace f.vcd
    ///   exanet generate && exanet cosim fifo --generated     # the generated instance
    ///   exanet cosim network --dims 4x2x2 --cycles 200000    # 16 RTL routers vs the golden network
    #[command(verbatim_doc_comment)]
    Cosim(CosimArgs),
    /// List the blocks that have a co-simulation bench (same as `exanet cosim --list`).
    #[command(verbatim_doc_comment)]
    Blocks,
}

#[derive(Args)]
struct CosimArgs {
    /// Block name (see --list).
    #[arg(required_unless_present = "list")]
    block: Option<String>,
    /// List the blocks and exit.
    #[arg(long)]
    list: bool,
    /// Cycles per point.
    #[arg(long, default_value_t = 100_000)]
    cycles: u64,
    /// Seed of the random stimulus.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// One parameter point, key=value,... (keys as printed by the run or in OUT/manifest.json).
    #[arg(long, value_name = "K=V,...")]
    point: Option<String>,
    /// Network size for `exanet cosim network` (sets the point's `dims`), e.g. 4x2x2.
    #[arg(long, value_name = "AxBxC")]
    dims: Option<String>,
    /// Use the Verilog in this folder instead of emitting it (must hold the point's top module).
    #[arg(long, value_name = "DIR")]
    rtl: Option<PathBuf>,
    /// Write a VCD of the whole run (slow; for short runs). Several points get one file each.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Where waveforms of failing runs are written.
    #[arg(long, default_value = "out/cosim", value_name = "DIR")]
    fail_dir: PathBuf,
    /// Run the points that `exanet generate` wrote to OUT (see --out), on the
    /// Verilog files in OUT/rtl, instead of the block's test matrix.
    #[arg(long, conflicts_with_all = ["point", "rtl"])]
    generated: bool,
    /// Folder written by `exanet generate` (with --generated).
    #[arg(
        long,
        short,
        default_value = "out",
        value_name = "DIR",
        requires = "generated"
    )]
    out: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            let msg = e
                .chain()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(": ")
                .replace('\n', "; ");
            eprintln!("error: {msg}");
            ExitCode::from(if is_usage(&e) { 2 } else { 1 })
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Generate { out } => {
            let loaded = cli.cfg.load()?;
            let params = loaded.elaborate()?;
            let g = generate::generate(&loaded.config, &params, &out)?;
            for n in &g.notes {
                println!("note: {n}");
            }
            for t in &g.manifest.tops {
                println!("top {:<32} {} [{}]", t.top, t.block, t.point);
            }
            for r in &g.removed {
                println!("removed stale {r}");
            }
            println!(
                "generated `{}` into {}: {} files ({} changed), manifest {}",
                g.manifest.config.name,
                out.display(),
                g.manifest.files.len() + 1,
                g.written.len(),
                out.join(generate::MANIFEST).display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Config { derived } => {
            let loaded = cli.cfg.load()?;
            let params = loaded.elaborate()?;
            if derived {
                println!("{}", serde_json::to_string_pretty(&params)?);
            } else {
                print!("{}", loaded.config.to_toml()?);
            }
            for n in &params.notes {
                eprintln!("note: {n}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Lint { out } => {
            let manifest = generate::read_manifest(&out)?;
            if cli.cfg.given() {
                generate::check_same_config(&manifest, &cli.cfg.load()?.config, &out)?;
            }
            let results = lint::lint(&manifest, &out)?;
            let mut bad = 0;
            for r in &results {
                if r.clean() {
                    println!("ok    {} ({})", r.top, r.block);
                } else {
                    bad += 1;
                    println!(
                        "FAIL  {} ({}): {} problem(s)",
                        r.top,
                        r.block,
                        r.problems.len()
                    );
                    for line in r.output.lines() {
                        println!("      {line}");
                    }
                }
            }
            println!(
                "lint: {} top(s), {} clean, {} with warnings",
                results.len(),
                results.len() - bad,
                bad
            );
            Ok(if bad == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Cmd::Synth { out, block, json } => {
            let manifest = generate::read_manifest(&out)?;
            if cli.cfg.given() {
                generate::check_same_config(&manifest, &cli.cfg.load()?.config, &out)?;
            }
            let tops = synth::select(&manifest, block.as_deref())?;
            let yosys = synth::require_yosys()?;
            let bar = bar(tops.len() as u64, "synth");
            let mut results = Vec::new();
            let mut cached = 0;
            for t in tops {
                bar.set_message(t.top.clone());
                let s = synth::synth_top(t, &out, &yosys)?;
                cached += s.cached as usize;
                results.push(s.result);
                bar.inc(1);
            }
            bar.finish_and_clear();
            print!("{}", synth::table(&results));
            println!(
                "by {yosys} (synth_xilinx -family xcup -flatten; {cached} of {} from {})",
                results.len(),
                out.join(".synth-cache").display()
            );
            if let Some(path) = json {
                std::fs::write(&path, serde_json::to_string_pretty(&results)? + "\n")
                    .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
                println!("wrote {}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Cosim(a) => {
            if cli.cfg.given() {
                return Err(usage(
                    "cosim runs block test points, not a config: use --point key=value,... \
                     (the generated points are listed in OUT/manifest.json and by `exanet generate`)",
                ));
            }
            if a.list {
                print_blocks();
                return Ok(ExitCode::SUCCESS);
            }
            let block = a.block.as_deref().unwrap_or_default();
            run_cosim(block, &a)
        }
        Cmd::Blocks => {
            if cli.cfg.given() {
                return Err(usage("`exanet blocks` takes no config"));
            }
            print_blocks();
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn print_blocks() {
    for (name, about) in cosim::list() {
        println!("{name:<16} {about}");
    }
}

fn bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(&format!(
        "{{spinner}} {what} [{{bar:30}}] {{pos}}/{{len}} {{elapsed}} {{msg}}"
    )) {
        bar.set_style(style.progress_chars("=> "));
    }
    // Ticks while one long point or top runs, so the screen shows it is alive.
    bar.enable_steady_tick(std::time::Duration::from_millis(250));
    bar
}

fn run_cosim(block: &str, a: &CosimArgs) -> Result<ExitCode> {
    let (mut benches, rtl) = if a.generated {
        if a.dims.is_some() {
            return Err(usage(
                "--dims and --generated: the generated points fix their dimensions",
            ));
        }
        let manifest = generate::read_manifest(&a.out)?;
        (
            cosim::generated_benches(&manifest, block)?
                .into_iter()
                .map(cosim::CosimItem::Block)
                .collect(),
            Some(a.out.join("rtl")),
        )
    } else {
        (
            cosim::items(block, a.point.as_deref(), a.dims.as_deref())?,
            a.rtl.clone(),
        )
    };
    let n = benches.len();
    let bar = bar(n as u64, "cosim");
    let mut failed = 0;
    for item in benches.iter_mut() {
        let bench = item.bench();
        let point = bench.point();
        bar.set_message(format!("[{point}]"));
        let trace = a.trace.as_ref().map(|t| cosim::trace_path(t, &point, n));
        let opts = cosim::options(a.cycles, a.seed, trace, rtl.clone(), a.fail_dir.clone());
        let report = exanet_tb::cosim::run(bench, &opts)?;
        bar.suspend(|| {
            println!("{}", report.summary());
            if let Some(f) = item.figures(&report) {
                println!("{f}");
            }
            let lines = cosim::mismatch_lines(&report, rtl.as_deref());
            for line in &lines {
                println!("{line}");
            }
            if let (true, Some(w)) = (lines.is_empty(), &report.waveform) {
                println!("  trace: {}", w.display());
            }
        });
        failed += (report.mismatches > 0) as usize;
        bar.inc(1);
    }
    bar.finish_and_clear();
    println!(
        "cosim {block}: {} point(s), {} passed, {failed} failed",
        n,
        n - failed
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
