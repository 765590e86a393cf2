//! `exanet`: the command line. Thin: parsing, printing and exit codes only;
//! the work is in the `exanet_gen` library.

// The `///` comments on the clap types below are `--help` text, written
// for a terminal: `[traffic]`, `<date>` and `[4,4,2]` there are literal
// text, not rustdoc links or HTML, and escaping them would print the
// escapes in `--help`.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use exanet_gen::config::{self, Loaded};
use exanet_gen::error::{is_usage, usage};
use exanet_gen::outdir::{OutDir, Staging};
use exanet_gen::{cosim, generate, lint, simulate, sweep, synth};
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
  exanet simulate -P traffic.rate=0.3      # whole-network simulation of the golden routers
  exanet sweep configs/sweeps/vcs-buffers-8x4x4.toml --jobs 2   # load-latency curves, plots

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
    /// No --config, no -P.
    fn none() -> Self {
        ConfigArgs {
            config: None,
            set: Vec::new(),
        }
    }
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
    /// (generator and config fingerprints, config, derived parameters, every
    /// file with its SHA-256, tool versions). The output is deterministic.
    /// Only files an earlier `generate` wrote into OUT, unedited since, are
    /// replaced or removed (OUT/.exanet-owned.json lists them); any other
    /// file in the way makes it refuse and change nothing, as does a
    /// non-empty OUT that no exanet command wrote. --force moves such files
    /// into OUT/backup-<date>/ instead. lint, synth and cosim --generated
    /// refuse OUT once this exanet's sources or the config file change.
    ///
    /// NI options are keys too, e.g. -P ni.tx_ahead=16 (transmit read-ahead).
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
        /// Write even over files that generate did not write or that were
        /// edited since: they are moved into OUT/backup-<date>/ first.
        #[arg(long)]
        force: bool,
    },
    /// Print the effective config (after --config and -P) as TOML, or its derived parameters.
    ///
    /// Examples:
    ///   exanet config -P topology.dims=[4,4,2] > my.toml
    ///   exanet config --derived --config configs/mesh-4x4x1.toml
    ///   exanet config --limits                  # what hardware and the simulator take, per key
    #[command(verbatim_doc_comment)]
    Config {
        /// Print the derived parameters (ports, packet flits, link cycles, ...) as JSON.
        #[arg(long)]
        derived: bool,
        /// Check the config for the network simulator (`simulate`, `sweep`)
        /// instead of hardware: its limits are wider (see --limits).
        #[arg(long)]
        simulation: bool,
        /// Print the table of per-key limits, for hardware and simulation, and exit.
        #[arg(long, conflicts_with_all = ["derived", "simulation"])]
        limits: bool,
    },
    /// Lint every generated top with `verilator --lint-only -Wall`; fails on any warning.
    ///
    /// Reads OUT/manifest.json (run `exanet generate` first). With --config/-P,
    /// first checks that OUT was generated from that config. Refuses a stale
    /// OUT: written by another exanet build, or its config file changed since.
    ///
    /// Example:
    ///   exanet generate --out out && exanet lint --out out
    #[command(verbatim_doc_comment)]
    Lint {
        /// Folder written by `exanet generate`.
        #[arg(long, short, default_value = "out", value_name = "DIR")]
        out: PathBuf,
        /// Use OUT even if it is stale (a warning instead of an error).
        #[arg(long)]
        allow_stale: bool,
    },
    /// Run the generated Vivado flow (needs `vivado` on PATH) and summarize it.
    ///
    /// Runs OUT/vivado/node.tcl (PS block design, one transceiver per link as
    /// fpga.transceiver says, synthesis to bitstream and .xsa, failing on
    /// negative WNS/WHS), or with --ooc the
    /// per-block out-of-context synthesis OUT/vivado/build.tcl. Checks the
    /// Vivado version first; without Vivado it says what is missing and
    /// builds nothing. The node flow's reports are summarized into
    /// OUT/reports/node/summary.json (utilization, WNS, WHS).
    ///
    /// Examples:
    ///   exanet generate --config configs/mesh-4x4x1.toml --out out/mesh && exanet build --out out/mesh
    ///   exanet build --out out --ooc
    #[command(verbatim_doc_comment)]
    Build {
        /// Folder written by `exanet generate`.
        #[arg(long, short, default_value = "out", value_name = "DIR")]
        out: PathBuf,
        /// The per-block out-of-context flow (vivado/build.tcl) instead of the node.
        #[arg(long)]
        ooc: bool,
    },
    /// Estimate LUT/FF/CARRY/LUTRAM/BRAM/DSP/GTH and logic depth of the generated tops with Yosys (UltraScale+).
    ///
    /// Prints a table with the share of a ZU9EG, and each top's logic depth:
    /// LUT levels on the worst register-to-register (and input-to-register,
    /// register-to-output) path of the mapped netlist, against the budget for
    /// clock.pl_mhz on a -2 part, with the worst path's start and end
    /// registers. Caches results in OUT/.synth-cache (by Verilog and Yosys
    /// version). Refuses a stale OUT (written by another exanet build, or its
    /// config file changed since).
    ///
    /// Examples:
    ///   exanet synth
    ///   exanet synth --block fifo --json out/fifo-resources.json
    ///   exanet synth --block router                 # flat, then LUTs by sub-block (2 levels)
    ///   exanet synth --block node                   # the node's fit, goal <= 25 % LUTs
    #[command(verbatim_doc_comment)]
    Synth {
        /// Folder written by `exanet generate`.
        #[arg(long, short, default_value = "out", value_name = "DIR")]
        out: PathBuf,
        /// Only the tops of this block (or this top module name). `node`
        /// gives the node's estimate composed from
        /// its parts (NI, router, links, CDC FIFOs), labelled as composed.
        #[arg(long, value_name = "NAME")]
        block: Option<String>,
        /// Also break each top down by sub-block (a second, hierarchical
        /// Yosys run keeping the top's first structural level); always on for
        /// the node, and for `--block router` (two levels: input units'
        /// VCs, route compute and arbiter, output units' arbiter, and each
        /// unit's own logic; the crossbar is the glue).
        #[arg(long)]
        by_module: bool,
        /// Levels of sub-blocks with `--by-module`: 1 (the top's first
        /// structural level) or 2 (also their children that hold logic).
        /// Default 1, and 2 for `--block router`.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=2))]
        levels: Option<u8>,
        /// Synthesize the `node` top itself (flat and by sub-block) instead
        /// of composing its estimate from its parts. Slow: the router alone
        /// takes tens of minutes on 2 cores, the whole node hours. Without
        /// this flag the node top is left out of a run over every top, and
        /// `--block node` composes.
        #[arg(long)]
        whole_node: bool,
        /// Also write the results as JSON here.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Use OUT even if it is stale (a warning instead of an error).
        #[arg(long)]
        allow_stale: bool,
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
    ///   exanet cosim network --dims 4x2x2 --ber 1e-5 --point link_latency=16   # ... with RTL link layers
    ///   exanet cosim link_tx --ber 1e-4 --cycles 1000000 --seed 7   # RTL link_tx in a golden link
    ///   exanet cosim link --ber 1e-5 --seed 3 --cycles 1000000      # both RTL ends, golden PHY between
    ///   exanet cosim node --dims 2x1x1 --cycles 50000 --seed 3       # 2 whole node tops, drifting clocks
    ///   exanet cosim node --dims 2x2x1 --ber 1e-5                   # 4 node tops, bit errors on every cable
    #[command(verbatim_doc_comment)]
    Cosim(CosimArgs),
    /// List the blocks that have a co-simulation bench (same as `exanet cosim --list`).
    #[command(verbatim_doc_comment)]
    Blocks,
    /// NI event traces (the ring read over TRACE_* registers; ni.trace_depth).
    #[command(subcommand)]
    Trace(TraceCmd),
    /// Simulate the whole network of golden router models under the config's traffic.
    ///
    /// Traffic and method are config keys ([traffic] and [sim], see
    /// configs/exanest-8x4x4.toml), set in a file or with -P like any other key:
    /// pattern (uniform, transpose, bit_complement, bit_reverse, tornado,
    /// neighbour, hotspot, trace), rate (flits/terminal/cycle), packet sizes
    /// (fixed or bimodal), warm-up / measurement / drain cycles, seed.
    /// Dimensions up to 32 are accepted here (16 for hardware).
    ///
    /// Reports offered and accepted load (flits/terminal/cycle and Gb/s),
    /// average/p50/p99/max latency (cycles and ns), hops, per class.
    ///
    /// Examples:
    ///   exanet simulate
    ///   exanet simulate -P traffic.pattern=tornado -P traffic.rate=0.3 --json
    ///   exanet simulate -P traffic.sizes=bimodal -P traffic.small_bytes=16
    ///   exanet simulate -P traffic.pattern=hotspot -P traffic.hotspot_nodes=[0,5] -P traffic.hotspot_fraction=0.1
    ///   exanet simulate -P traffic.pattern=trace -P traffic.trace=app.csv -P sim.warmup=0
    ///   exanet simulate -P topology.dims=[32,32,32] -P traffic.rate=0.05 -P sim.measure=2000
    ///
    /// traffic.pattern = "allreduce" runs the [allreduce] workload instead:
    /// golden NIs with the allreduce engine at every router, the hardware
    /// collective beside a software one from RDMA writes, every rank's result
    /// checked bit for bit; latency min/mean/max (cycles, us) per rank count:
    ///   exanet simulate -P traffic.pattern=allreduce -P allreduce.scaling=true
    ///   exanet simulate -P traffic.pattern=allreduce -P allreduce.count=8192 -P allreduce.dtype=f32
    ///
    /// traffic.pattern = "jobs" runs the [jobs] batch study instead: a queue
    /// of jobs with communication profiles (halo, dataflow, allreduce, mixed,
    /// or a CSV/JSON file) placed by jobs.placement (linear, random, topology,
    /// failure) as nodes free up, with node failures (jobs.node_mtbf_s,
    /// jobs.node_mtbf_file) and dead links (jobs.dead_links); reports batch
    /// completion time and aborted-run ratio:
    ///   exanet simulate -P traffic.pattern=jobs -P jobs.profile=halo -P jobs.placement=topology
    ///   exanet simulate -P traffic.pattern=jobs -P jobs.profile=dataflow -P jobs.node_mtbf_s=2000 -P jobs.placement=failure
    /// --validate runs the first jobs of the queue through both the flow model
    /// and the cycle-level network (golden NIs' packets, routers, links):
    ///   exanet simulate -P traffic.pattern=jobs -P jobs.count=1 -P jobs.ranks=[64] -P jobs.iterations=3 --validate
    ///
    /// traffic.pattern = "qos" runs the [qos] mix: a storage-like stream (large
    /// packets) and an MPI-like stream (small packets), each on one priority
    /// class, through the same golden routers and links; figures per class:
    ///   exanet simulate -P traffic.pattern=qos -P qos.storage_rate=0.3 -P qos.mpi_rate=0.02
    #[command(verbatim_doc_comment)]
    Simulate {
        /// Print the result as JSON instead of the text report.
        #[arg(long)]
        json: bool,
        /// With traffic.pattern = "jobs": instead of the batch, check the
        /// flow model against the cycle-level network (the jobs at the head of
        /// the queue that fit together, placed by jobs.placement, run
        /// jobs.iterations iterations through both; iteration times and error).
        #[arg(long)]
        validate: bool,
    },
    /// Run a parameter sweep (cross product of value lists) and plot it.
    ///
    /// A sweep file names a base config, fixed overrides ([set]), lists of
    /// values for any config keys ([vary]) and optionally a saturation search
    /// on traffic.rate ([saturation]); see configs/sweeps/. Writes
    /// OUT/results.csv, results.json, timing.csv, latency.svg, throughput.svg,
    /// saturation.svg and index.html. --config and -P change the base config.
    ///
    /// With --slurm, nothing runs: OUT gets sweep.sbatch (one array task per
    /// sweep point) and the per-point configs; after the job, `exanet sweep
    /// collect OUT` merges the task results into the same outputs.
    ///
    /// Examples:
    ///   exanet sweep configs/sweeps/vcs-buffers-8x4x4.toml --jobs 2 --out out/vcs
    ///   exanet sweep configs/sweeps/torus-dims.toml --slurm --out /scratch/dims
    ///   sbatch /scratch/dims/sweep.sbatch
    ///   exanet sweep collect /scratch/dims
    #[command(verbatim_doc_comment, args_conflicts_with_subcommands = true)]
    Sweep(SweepArgs),
    /// The ExaNeSt prototype's published figures beside our RTL's, under the same assumptions.
    ///
    /// Rows: one-way latency at 1 and 5 hops, the per-hop increment, single-hop
    /// bandwidth (% of the link), allreduce reduction vs software, the node's
    /// LUTs of a ZU9EG. Latency and bandwidth come from RTL co-simulation of
    /// whole node tops joined by their link layers (2 nodes; a 10-node ring,
    /// node 0 to node 5, for 5 hops): 64 B RDMA writes from doorbell to the
    /// completion readable at the destination, cycles → ns at clock.pl_mhz,
    /// plus the software overhead allreduce.sw_overhead_us; goodput of one
    /// write per size, 64 B … 1 MiB. A row without a number names the block or
    /// tool that is missing. Assumptions are config keys (clock.pl_mhz,
    /// link.gbps, link.latency_ns, link.ber, allreduce.sw_overhead_us,
    /// reproduce.mem_latency_ns), printed with the table and overridable with -P.
    ///
    /// Writes OUT/reproduce.md, reproduce.json, goodput.svg, breakdown.svg and
    /// index.html (output-folder rules as `exanet sweep`: only files exanet
    /// wrote there are replaced; --force moves others into a backup folder).
    ///
    /// Examples:
    ///   exanet reproduce --out out/reproduce
    ///   exanet reproduce --quick                       # fewer sizes and samples
    ///   exanet reproduce -P clock.pl_mhz=250 -P link.latency_ns=50
    ///   exanet generate --out out && exanet reproduce --synth out   # + the node's resources (Yosys)
    #[command(verbatim_doc_comment)]
    Reproduce {
        /// Output folder.
        #[arg(long, short, default_value = "out/reproduce", value_name = "DIR")]
        out: PathBuf,
        /// Fewer goodput sizes (256 B, 4 KiB, 16 KiB) and latency samples; no synthesis.
        #[arg(long)]
        quick: bool,
        /// Folder written by `exanet generate` on this config: the node's
        /// resources from its parts' Yosys runs (`exanet synth --block node`,
        /// cached there; tens of minutes when not cached). Without it the
        /// resources row says how to get it.
        #[arg(long, value_name = "GEN_DIR", conflicts_with = "quick")]
        synth: Option<PathBuf>,
        /// Write into OUT even over files exanet did not write there (moved
        /// into OUT/backup-<date>/ first).
        #[arg(long)]
        force: bool,
    },
    /// Mutation analysis of a block's own bench: how many small edits of
    /// its RTL the co-simulation catches.
    ///
    /// Takes the emitted RTL of one point (default: the first of the
    /// block's matrix) and applies one mutation at a time (swap & and |,
    /// == and !=, < and >=, + and -; a constant ±1; drop a ~; invert an if;
    /// swap mux arms; tie a valid/ready/credit signal to 0 or 1; drop an
    /// assignment). Each mutant is co-simulated against the unchanged golden
    /// model and is killed (a mismatch, or a failure while running),
    /// survived (a clean run) or invalid (it does not build). Prints the
    /// kill rate, every survivor with file:line and its diff, and the lines
    /// skipped by rule (structure, initial blocks, system tasks, clock
    /// forwards, comments).
    ///
    /// Examples:
    ///   exanet mutate arbiter
    ///   exanet mutate router --count 40 --cycles 50000 --jobs 2 --json out/mutate-router.json
    ///   exanet mutate fifo --point width=8,depth=4,almost_full=3 --count 0
    ///   exanet mutate router --filter '_route$' --count 10 --jobs 1
    #[command(verbatim_doc_comment)]
    Mutate {
        /// Block name (see `exanet cosim --list`).
        block: String,
        /// Parameter point, key=value,... (default: the first of the block's matrix).
        #[arg(long, value_name = "K=V,...")]
        point: Option<String>,
        /// Seed of the sample and of each co-simulation's stimulus.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Mutants to run, a sample of all candidates (0 = all).
        #[arg(long, default_value_t = 30)]
        count: usize,
        /// Only mutate lines of Verilog modules whose name contains this
        /// text; a trailing `$` anchors it at the end of the name (e.g.
        /// `_route$`: the router's route compute units). The sample is
        /// drawn from those.
        #[arg(long, value_name = "TEXT")]
        filter: Option<String>,
        /// Cycles of each co-simulation.
        #[arg(long, default_value_t = 50_000)]
        cycles: u64,
        /// Mutants run at once (default: the number of CPUs).
        #[arg(long, short, value_name = "N")]
        jobs: Option<usize>,
        /// Also write the report as JSON here.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
}

#[derive(Args)]
struct SweepArgs {
    #[command(subcommand)]
    action: Option<SweepCmd>,
    /// The sweep file (TOML).
    #[arg(value_name = "SWEEP.toml")]
    file: Option<PathBuf>,
    /// Output folder (default: out/sweeps/<name>).
    #[arg(long, short, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Simulations run in parallel (default: the number of CPUs).
    #[arg(long, short, value_name = "N")]
    jobs: Option<usize>,
    /// Write a Slurm array job and the per-point configs instead of running.
    #[arg(long)]
    slurm: bool,
    /// Write into OUT even over files no exanet sweep wrote there, or ones
    /// edited since: they are moved into OUT/backup-<date>/ first.
    #[arg(long)]
    force: bool,
}

#[derive(Subcommand)]
enum SweepCmd {
    /// Merge the task results of a sweep folder into results, plots and index.html.
    Collect {
        /// Folder written by `exanet sweep --slurm` (or a local sweep).
        dir: PathBuf,
        /// Replace results or plots edited since (moved into DIR/backup-<date>/ first).
        #[arg(long)]
        force: bool,
    },
    /// Run one task of a planned sweep (what each Slurm array task runs).
    #[command(hide = true)]
    Task {
        /// Folder written by `exanet sweep --slurm`.
        dir: PathBuf,
        /// Task number (SLURM_ARRAY_TASK_ID).
        id: usize,
    },
}

#[derive(Subcommand)]
enum TraceCmd {
    /// Print a trace dump as per-transaction timelines, with the cycles
    /// between events.
    ///
    /// FILE: one 64-bit entry per line in hex (as TRACE_HI:TRACE_LO), oldest
    /// first, `# node NAME` starting each NI's entries, other `#` lines
    /// comments (the format `exanet_sim::ni::trace::dump_text` writes; the
    /// node-pair bench writes one with EXANET_TRACE_DUMP=FILE). Events
    /// are grouped by transaction (RDMA transfer txid, or packetizer
    /// message slot: the message's packets and its MBOX_POP by the
    /// receiver's software) across the nodes. A bad line is an error
    /// naming it.
    ///
    /// Example:
    ///   exanet trace decode out/node_pair.trace
    #[command(verbatim_doc_comment)]
    Decode {
        /// The dump.
        file: PathBuf,
    },
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
    /// Network size for `exanet cosim network` and `node` (sets the point's `dims`), e.g. 4x2x2.
    #[arg(long, value_name = "AxBxC")]
    dims: Option<String>,
    /// Bit error rate of the PHY model for `exanet cosim link`, `link_tx`,
    /// `link_rx`, `node` and `network` (sets the point's `ber`; without --point,
    /// the default point at this BER; for the network also `links=framed`:
    /// RTL link layers between the RTL routers).
    #[arg(long, value_name = "B", conflicts_with = "generated")]
    ber: Option<f64>,
    /// Use the Verilog in this folder instead of emitting it (must hold the point's top module).
    #[arg(long, value_name = "DIR")]
    rtl: Option<PathBuf>,
    /// Write a VCD of the whole run (slow; for short runs). Several points get one file each.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Where waveforms of failing runs are written (never over a file
    /// exanet did not write there: a taken name gets a -2, -3, … suffix).
    #[arg(long, default_value = "out/cosim", value_name = "DIR")]
    fail_dir: PathBuf,
    /// Use a --fail-dir that is not empty and that no exanet command wrote.
    #[arg(long)]
    force: bool,
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
    /// With --generated: use OUT even if it is stale (written by another
    /// exanet build, or its config file changed since), with a warning.
    #[arg(long, requires = "generated")]
    allow_stale: bool,
    /// Do not replay a failing run to write its waveform (what `exanet
    /// mutate` runs its mutants with).
    #[arg(long, hide = true)]
    no_waveform: bool,
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
                .join(": ");
            // A mistake in the input is one line; a tool's failure keeps its
            // own lines (a compiler's messages), indented under the first.
            let msg = if is_usage(&e) {
                msg.replace('\n', "; ")
            } else {
                msg.replace('\n', "\n  ")
            };
            eprintln!("error: {msg}");
            ExitCode::from(if is_usage(&e) { 2 } else { 1 })
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Generate { out, force } => {
            let loaded = cli.cfg.load()?;
            let params = loaded.elaborate()?;
            let g = generate::generate(&loaded, &params, &out, force)?;
            for n in &g.notes {
                println!("note: {n}");
            }
            for t in &g.manifest.tops {
                println!("top {:<32} {} [{}]", t.top, t.block, t.point);
            }
            for r in &g.removed {
                println!("removed stale {r}");
            }
            print_backups(&g.backed_up, g.backup.as_deref());
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
        Cmd::Config { limits: true, .. } => {
            println!("{:<26} {:<28} {:<28} why", "key", "hardware", "simulation");
            for l in exanet_hdl::limits::LIMITS {
                println!(
                    "{:<26} {:<28} {:<28} {}",
                    l.key,
                    l.hardware.to_string(),
                    l.simulation.to_string(),
                    l.why
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Config {
            derived,
            simulation,
            ..
        } => {
            let loaded = cli.cfg.load()?;
            let params = if simulation {
                loaded.elaborate_sim()?.params
            } else {
                loaded.elaborate()?
            };
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
        Cmd::Build { out, ooc } => {
            let script = if ooc { "build.tcl" } else { "node.tcl" };
            if let Some(s) = exanet_gen::vivado_report::build(&out, script)? {
                println!(
                    "WNS {} ns, WHS {} ns; summary in {}",
                    s.wns_ns,
                    s.whs_ns,
                    out.join("reports/node/summary.json").display()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Lint { out, allow_stale } => {
            let manifest = read_generated(&out, &cli.cfg, allow_stale)?;
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
        Cmd::Synth {
            out,
            block,
            by_module,
            levels,
            whole_node,
            json,
            allow_stale,
        } => {
            // The router's sub-blocks are asked for by name (issue 16).
            let router = block.as_deref() == Some("router");
            let by_module = by_module || router || levels.is_some();
            let levels = levels.map_or(if router { 2 } else { 1 }, usize::from);
            let manifest = read_generated(&out, &cli.cfg, allow_stale)?;
            let mhz = manifest.config.clock.pl_mhz;
            let composed = block.as_deref() == Some("node")
                && !(whole_node && manifest.tops.iter().any(|t| t.block == "node"));
            let tops = if composed {
                Vec::new()
            } else {
                let mut tops = synth::select(&manifest, block.as_deref())?;
                if block.is_none() && !whole_node && tops.iter().any(|t| t.block == "node") {
                    tops.retain(|t| t.block != "node");
                    eprintln!(
                        "synth: the node top is left out (its parts are here; \
                         `--block node` composes its estimate, `--whole-node` synthesizes it whole)"
                    );
                }
                tops
            };
            let yosys = synth::require_yosys()?;
            let mut results = Vec::new();
            let mut cached = 0;
            let mut runs = 0;
            if composed {
                let bar = bar(0, "synth node parts");
                let (node, parts, c) =
                    synth::compose_node(&manifest, &out, &yosys, |name, i, n| {
                        bar.set_length(n as u64);
                        bar.set_position(i as u64);
                        bar.set_message(name.to_string());
                    })?;
                bar.finish_and_clear();
                cached += c;
                runs += parts.len();
                print!("{}", synth::breakdown_table(&node, None));
                print!("{}", synth::capacity_line());
                print!("{}", synth::node_goal(&node));
                print!("{}", synth::depth_table(&parts, mhz));
                results.push(node);
            } else {
                let bar = bar(tops.len() as u64, "synth");
                for t in tops {
                    bar.set_message(t.top.clone());
                    let s = synth::synth_top(t, &out, &yosys)?;
                    cached += s.cached as usize;
                    runs += 1;
                    let mut r = s.result;
                    r.gth = synth::gth_of(&manifest, &t.block);
                    if by_module || t.block == "node" {
                        bar.set_message(format!("{} by sub-block", t.top));
                        let (mut b, c) = synth::synth_breakdown(t, &out, &yosys, levels)?;
                        cached += c as usize;
                        runs += 1;
                        b.total.gth = r.gth;
                        r.breakdown = Some(Box::new(b));
                    }
                    results.push(r);
                    bar.inc(1);
                }
                bar.finish_and_clear();
                print!("{}", synth::table(&results));
                for r in &results {
                    if r.breakdown.is_some() {
                        print!("{}", synth::breakdown_table(r, Some(r)));
                    }
                    if r.block == "node" {
                        print!("{}", synth::node_goal(r));
                    }
                }
                print!("{}", synth::depth_table(&results, mhz));
            }
            let over = if composed {
                Vec::new()
            } else {
                synth::over_budget(&results, mhz)
            };
            println!(
                "by {yosys} (synth_xilinx -family xcup; {cached} of {runs} runs from {})",
                out.join(".synth-cache").display()
            );
            for (top, kind, levels) in &over {
                println!("over the depth budget: {top} {kind} {levels} LUT levels");
            }
            if let Some(path) = json {
                std::fs::write(&path, serde_json::to_string_pretty(&results)? + "\n")
                    .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
                println!("wrote {}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Reproduce {
            out,
            quick,
            synth,
            force,
        } => run_reproduce(&cli.cfg, &out, quick, synth.as_deref(), force),
        Cmd::Mutate {
            block,
            point,
            seed,
            count,
            filter,
            cycles,
            jobs,
            json,
        } => {
            if cli.cfg.given() {
                return Err(usage(
                    "mutate runs a block's test point, not a config: use --point key=value,...",
                ));
            }
            let work = tempfile_dir("exanet-mutate")?;
            let o = exanet_gen::mutate::MutateOptions {
                block,
                point,
                seed,
                count,
                filter,
                cycles,
                jobs: jobs.unwrap_or_else(default_jobs),
                work: work.clone(),
                exe: std::env::current_exe()?,
            };
            let bar = bar(count as u64, "mutate");
            let report = exanet_gen::mutate::run(&o, &|r| {
                bar.inc(1);
                bar.set_message(format!("#{} {:?}", r.id, r.verdict));
            });
            bar.finish_and_clear();
            let _ = std::fs::remove_dir_all(&work);
            let report = report?;
            println!("{}", report.summary());
            if let Some(path) = json {
                exanet_gen::mutate::write_json(&report, &path)?;
                println!("  report: {}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Cosim(a) => {
            if cli.cfg.given() {
                // A config that is not legal hardware says so first.
                cli.cfg.load()?.elaborate()?;
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
        Cmd::Simulate { json, validate } => {
            let loaded = cli.cfg.load()?;
            let setup = loaded.elaborate_sim()?;
            if validate {
                let Some(spec) = &setup.jobs else {
                    return Err(usage(format!(
                        "--validate checks the job model: it needs traffic.pattern = \"jobs\", not {:?}",
                        setup.config.traffic.pattern
                    )));
                };
                let r = exanet_gen::jobs::validate(
                    &setup.config,
                    spec,
                    &setup.net,
                    setup.params.clock.period_ns,
                )?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&r)?);
                } else {
                    print!("{}", exanet_gen::jobs::validate_text(&r));
                }
                return Ok(ExitCode::SUCCESS);
            }
            if let Some(spec) = &setup.jobs {
                let r = exanet_gen::jobs::run(&setup.config, spec)?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&r)?);
                } else {
                    print!("{}", exanet_gen::jobs::text(&r));
                }
                return Ok(ExitCode::SUCCESS);
            }
            if setup.allreduce.is_some() {
                let r = simulate::run_allreduce(&setup)?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&r)?);
                } else {
                    print!("{}", exanet_gen::allreduce::text(&r));
                }
                return Ok(if r.clean {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                });
            }
            let nodes = setup.params.topology.nodes;
            let spin = ProgressBar::new_spinner();
            spin.set_draw_target(ProgressDrawTarget::stderr());
            spin.set_message(format!(
                "simulating {nodes} routers for {} + {} cycles (+ drain)",
                setup.net.warmup, setup.net.window
            ));
            spin.enable_steady_tick(std::time::Duration::from_millis(250));
            let r = simulate::run(&setup);
            spin.finish_and_clear();
            let r = r?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                print!("{}", simulate::text(&r));
            }
            Ok(if r.clean {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Cmd::Sweep(a) => run_sweep(&cli.cfg, a),
        Cmd::Trace(TraceCmd::Decode { file }) => {
            if cli.cfg.given() {
                return Err(usage("`exanet trace decode` takes no config"));
            }
            let text = std::fs::read_to_string(&file)
                .map_err(|e| usage(format!("{}: {e}", file.display())))?;
            let sections = exanet_sim::ni::trace::parse_dump(&text)
                .map_err(|e| usage(format!("{}: {e}", file.display())))?;
            print!("{}", exanet_sim::ni::trace::timeline(&sections));
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Blocks => {
            if cli.cfg.given() {
                // A config that is not legal hardware says so first.
                cli.cfg.load()?.elaborate()?;
                return Err(usage("`exanet blocks` takes no config"));
            }
            print_blocks();
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn run_sweep(cfg: &ConfigArgs, a: SweepArgs) -> Result<ExitCode> {
    let report = |dir: &std::path::Path, c: &sweep::Collected| {
        for s in &c.series {
            if let Some((t, a)) = s.batch {
                println!(
                    "{:<48} batch completion {t:.6} s, aborted ratio {a:.4}",
                    s.series
                );
                continue;
            }
            let load = match (s.saturation_load, s.reached) {
                (Some(l), true) => format!("saturates above {l:.4}"),
                (Some(l), false) => format!("not saturated up to {l:.4}"),
                (None, _) => "saturated at every load".to_string(),
            };
            println!(
                "{:<48} throughput {:.4} flits/terminal/cycle ({:.2} Gb/s), {load}",
                s.series, s.saturation_throughput, s.saturation_gbps
            );
        }
        println!(
            "{} simulation(s), {} series: {}",
            c.rows,
            c.series.len(),
            dir.join("index.html").display()
        );
    };
    match a.action {
        Some(SweepCmd::Collect { dir, force }) => {
            let c = sweep::collect(&dir, force)?;
            report(&dir, &c);
            Ok(ExitCode::SUCCESS)
        }
        Some(SweepCmd::Task { dir, id }) => {
            let plan = sweep::read_plan(&dir)?;
            let out = sweep::run_task(&dir, &dir.join("tasks"), &plan, id)?;
            for r in &out.rows {
                println!(
                    "task {id} [{}] rate {}: accepted {:.4}, latency {:.1} cycles{}",
                    r.series,
                    r.result.rate,
                    r.result.total.accepted_flits,
                    r.result.total.latency_cycles.avg,
                    if r.result.saturated {
                        " (saturated)"
                    } else {
                        ""
                    }
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let Some(file) = a.file else {
                return Err(usage(
                    "exanet sweep: give a sweep file (exanet sweep SWEEP.toml) or `collect DIR`",
                ));
            };
            let stem = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "sweep".into());
            let dir = a
                .out
                .unwrap_or_else(|| PathBuf::from("out/sweeps").join(stem));
            let plan = sweep::plan(&file, cfg.config.as_deref(), &cfg.set, &dir, a.force)?;
            if a.slurm {
                let exe = std::env::current_exe()?;
                let script = sweep::write_slurm(&dir, &plan, &exe)?;
                println!(
                    "wrote {} ({} array task(s)) and {} point config(s) in {}",
                    script.display(),
                    plan.tasks.len(),
                    plan.tasks.len(),
                    dir.join("points").display()
                );
                if plan.tasks.len() > sweep::SLURM_DEFAULT_MAX_ARRAY {
                    println!(
                        "note: {} array tasks: Slurm's default MaxArraySize ({}) refuses this array; \
                         ask for it to be raised (scontrol show config | grep MaxArraySize) or split the sweep",
                        plan.tasks.len(),
                        sweep::SLURM_DEFAULT_MAX_ARRAY
                    );
                }
                println!(
                    "submit: sbatch {}; then: exanet sweep collect {}",
                    script.display(),
                    dir.display()
                );
                return Ok(ExitCode::SUCCESS);
            }
            let jobs = a.jobs.unwrap_or_else(default_jobs);
            let bar = ProgressBar::with_draw_target(
                Some(plan.tasks.len() as u64),
                ProgressDrawTarget::stderr(),
            );
            if let Ok(style) = ProgressStyle::with_template(
                "{spinner} sweep [{bar:30}] {pos}/{len} {elapsed} ETA {eta} {msg}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.enable_steady_tick(std::time::Duration::from_millis(250));
            // Without a terminal the bar is hidden: a line per finished task instead.
            let plain = bar.is_hidden();
            let total = plan.tasks.len();
            let done = std::sync::atomic::AtomicUsize::new(0);
            let ran = sweep::run_local(&dir, &plan, jobs, &|t| {
                bar.set_message(t.series.clone());
                bar.inc(1);
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                if plain {
                    eprintln!("sweep: {n}/{total} done (task {} [{}])", t.id, t.series);
                }
            });
            bar.finish_and_clear();
            ran?;
            let c = sweep::collect(&dir, false)?;
            report(&dir, &c);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// What `--force` moved out of the way, and where.
fn print_backups(files: &[String], backup: Option<&std::path::Path>) {
    if let Some(b) = backup {
        for f in files {
            eprintln!("warning: --force: moved {f} to {}", b.join(f).display());
        }
    }
}

/// The manifest of a folder written by `exanet generate`, refused when it was
/// generated from another config than --config/-P (if given) or is stale
/// (see `generate::check_fresh`); a stale one allowed is a warning on stderr.
fn read_generated(
    out: &std::path::Path,
    cfg: &ConfigArgs,
    allow_stale: bool,
) -> Result<generate::Manifest> {
    // A config given must itself be legal hardware (its errors name the
    // key and the rule) before it is compared with the folder's.
    let given = if cfg.given() {
        let loaded = cfg.load()?;
        loaded.elaborate()?;
        Some(loaded)
    } else {
        None
    };
    let manifest = generate::read_manifest(out)?;
    if let Some(loaded) = given {
        generate::check_same_config(&manifest, &loaded.config, out)?;
    }
    if let Some(w) = generate::check_fresh(&manifest, out, cfg.given(), allow_stale)? {
        eprintln!("warning: {w}");
    }
    let changed = generate::changed_files(&manifest, out);
    if !changed.is_empty() {
        eprintln!(
            "warning: {} file(s) in {} differ from what `exanet generate` wrote ({}); the \
             results describe the files as they are now",
            changed.len(),
            out.display(),
            changed.join(", ")
        );
    }
    Ok(manifest)
}

fn print_blocks() {
    for (name, about) in cosim::list() {
        println!("{name:<16} {about}");
    }
}

/// One job per CPU.
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A fresh scratch folder under the system's temporary folder.
fn tempfile_dir(what: &str) -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| anyhow::anyhow!("creating scratch folder {}: {e}", dir.display()))?;
    Ok(dir)
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

fn run_reproduce(
    cfg: &ConfigArgs,
    out: &std::path::Path,
    quick: bool,
    synth_dir: Option<&std::path::Path>,
    force: bool,
) -> Result<ExitCode> {
    use exanet_gen::reproduce;
    let loaded = cfg.load()?;
    loaded.elaborate()?;
    reproduce::Assumptions::of(&loaded)?;
    // Refuse a folder that is not exanet's before the long runs.
    reproduce::check_out(out, force)?;
    let t0 = std::time::Instant::now();
    let bar = bar(4, "reproduce");
    let resources = if quick {
        Err(
            "skipped in --quick: the node's synthesis (`exanet synth --block node`) takes tens of \
             minutes on 2 cores; run `exanet generate --out out && exanet reproduce --synth out`"
                .to_string(),
        )
    } else {
        match synth_dir {
            None => Err(
                "not run: give --synth GEN_DIR (a folder of `exanet generate` on this \
                         config) to compose the node from its parts' Yosys runs (`exanet synth \
                         --block node`)"
                    .to_string(),
            ),
            Some(dir) => match synth::require_yosys() {
                Err(e) => Err(format!("missing tool: {e}")),
                Ok(yosys) => {
                    let manifest = read_generated(dir, cfg, false)?;
                    bar.set_message("synthesizing the node's parts (Yosys)");
                    let (node, _, _) =
                        synth::compose_node(&manifest, dir, &yosys, |name, i, n| {
                            bar.set_message(format!("synth node part {name} ({}/{n})", i + 1));
                        })?;
                    Ok(node)
                }
            },
        }
    };
    bar.inc(1);
    // A mismatch stops the run with the signal named; its waveform is
    // for `exanet cosim node` to write, not this report.
    let mut cosim_opts = cosim::options(1, 1, None, None, std::env::temp_dir());
    cosim_opts.waveform_on_mismatch = false;
    let opts = reproduce::Options {
        quick,
        resources,
        cosim: cosim_opts,
    };
    let report = reproduce::reproduce(&loaded, &opts, |what| {
        bar.set_message(what.to_string());
        bar.inc(1);
    })?;
    bar.finish_and_clear();
    let files = reproduce::write(out, &report, force)?;
    print!("{}", reproduce::summary(&report));
    println!(
        "wrote {} ({:.0} s)",
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

fn run_cosim(block: &str, a: &CosimArgs) -> Result<ExitCode> {
    let (mut benches, rtl) = if a.generated {
        if a.dims.is_some() {
            return Err(usage(
                "--dims and --generated: the generated points fix their dimensions",
            ));
        }
        let manifest = read_generated(&a.out, &ConfigArgs::none(), a.allow_stale)?;
        (
            cosim::generated_benches(&manifest, block)?
                .into_iter()
                .map(cosim::CosimItem::Block)
                .collect(),
            Some(a.out.join("rtl")),
        )
    } else {
        let point = match a.ber {
            Some(b) => Some(cosim::ber_point(block, a.point.as_deref(), b)?),
            None => a.point.clone(),
        };
        (
            cosim::items(block, point.as_deref(), a.dims.as_deref())?,
            a.rtl.clone(),
        )
    };
    // Waveforms of failures are traced into a staging folder and moved into
    // --fail-dir under a name no other file has (never over a user's file).
    let mut fail_dir = OutDir::claim(&a.fail_dir, "exanet cosim", a.force)?;
    fail_dir.prepare(&[], &[])?; // the folder is exanet's from now on
    let staging = Staging::new(&a.fail_dir)?;
    let n = benches.len();
    let bar = bar(n as u64, "cosim");
    let mut failed = 0;
    for item in benches.iter_mut() {
        let bench = item.bench();
        let point = bench.point();
        bar.set_message(format!("[{point}]"));
        let trace = a.trace.as_ref().map(|t| cosim::trace_path(t, &point, n));
        let mut opts = cosim::options(
            a.cycles,
            a.seed,
            trace,
            rtl.clone(),
            staging.path().to_path_buf(),
        );
        opts.waveform_on_mismatch = !a.no_waveform;
        let mut report = exanet_tb::cosim::run(bench, &opts)?;
        if let Some(w) = report.waveform.take() {
            report.waveform = Some(if w.starts_with(staging.path()) {
                let name = w.file_name().unwrap_or_default().to_string_lossy();
                let rel = fail_dir.free_name(&name)?;
                fail_dir.adopt(&w, &rel)?;
                fail_dir.save()?;
                fail_dir.path(&rel)
            } else {
                w
            });
        }
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
