//! Lockstep co-simulation of a block's Verilated RTL against its golden model.
//!
//! One cycle, as run by [`run`]:
//! 1. clock low; [`Bench::drive`] writes this cycle's random inputs to the RTL
//!    ports and hands the same inputs to the golden model;
//! 2. `eval`; [`Bench::check`] compares every output port with the golden
//!    model's outputs for this cycle (combinational outputs included);
//! 3. clock high, `eval` (the RTL registers update); [`Bench::advance`] steps
//!    the golden model's state.
//!
//! The first difference stops the run. The run is then replayed from the same
//! seed with a VCD trace up to a few cycles past the mismatch, so the report
//! always comes with a waveform.

use crate::verilator::{BuildOptions, Sim};
use anyhow::{Context, Result};
use exanet_hdl::emit::Emitted;
use exanet_sim::rng::Rng;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The first difference between RTL and golden model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Cycle number, counted from 0 at the first driven cycle.
    pub cycle: u64,
    /// RTL port (or scoreboard check) that differed.
    pub port: String,
    /// Golden model's value, as text (hex for vectors).
    pub expected: String,
    /// RTL's value, as text.
    pub actual: String,
}

impl Mismatch {
    /// A mismatch on a port, values printed in hex.
    pub fn hex(
        cycle: u64,
        port: &str,
        expected: impl fmt::LowerHex,
        actual: impl fmt::LowerHex,
    ) -> Self {
        Mismatch {
            cycle,
            port: port.to_string(),
            expected: format!("0x{expected:x}"),
            actual: format!("0x{actual:x}"),
        }
    }
}

impl Mismatch {
    /// A mismatch on a wide port given as 32-bit words, least significant
    /// first; printed as one hex number.
    pub fn words(cycle: u64, port: &str, expected: &[u32], actual: &[u32]) -> Self {
        fn hex(w: &[u32]) -> String {
            let mut s = String::from("0x");
            for x in w.iter().rev() {
                s.push_str(&format!("{x:08x}"));
            }
            s
        }
        Mismatch {
            cycle,
            port: port.to_string(),
            expected: hex(expected),
            actual: hex(actual),
        }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cycle {} port {}: expected {} actual {}",
            self.cycle, self.port, self.expected, self.actual
        )
    }
}

/// Compare one output; `Some(Mismatch)` if they differ.
#[inline]
pub fn cmp<T: PartialEq + fmt::LowerHex + Copy>(
    cycle: u64,
    port: &str,
    expected: T,
    actual: T,
) -> Option<Mismatch> {
    if expected == actual {
        None
    } else {
        Some(Mismatch::hex(cycle, port, expected, actual))
    }
}

/// One block's RTL and golden model, driven together.
pub trait Bench {
    /// Block name (`fifo`, `crc32`, …): the hdl/sim/tb file name.
    fn block(&self) -> &str;
    /// This parameter point as `key=value,…` text (parsable by the block's `point`).
    fn point(&self) -> String;
    /// The emitted RTL of this point (used unless the caller supplies `--rtl DIR`).
    fn emit(&self) -> Result<Emitted>;
    /// Look up every port once; an error names the missing or mis-sized port.
    /// Called after each (re)load of the model.
    fn bind(&mut self, sim: &Sim) -> Result<()>;
    /// Return the golden model and the bench's own state to power-on.
    fn reset(&mut self);
    /// Clock is low: draw this cycle's inputs from `rng`, write them to the RTL
    /// ports and give them to the golden model.
    fn drive(&mut self, rng: &mut Rng, cycle: u64);
    /// After `eval` with clock low: compare every RTL output with the golden model.
    fn check(&mut self, cycle: u64) -> Option<Mismatch>;
    /// After the rising edge: advance the golden model by one cycle.
    fn advance(&mut self);

    /// The lockstep loop over `cycles` cycles from power-on (the model has
    /// been bound and both sides reset): returns the cycles run, up to and
    /// including a mismatching one, and the first mismatch.
    ///
    /// Provided, not overridden: each bench type gets its own copy in which
    /// `drive`, `check` and `advance` are static calls the compiler inlines,
    /// so the per-cycle loop pays no virtual calls even when the bench is a
    /// `dyn Bench` (one virtual call per run).
    fn run_cycles(
        &mut self,
        sim: &mut Sim,
        rng: &mut Rng,
        cycles: u64,
        tracing: bool,
    ) -> Result<(u64, Option<Mismatch>)> {
        let clock = sim.port("clock")?;
        clock.set(0);
        sim.eval();
        for cycle in 0..cycles {
            clock.set(0);
            self.drive(rng, cycle);
            sim.eval();
            if tracing {
                sim.trace_dump(2 * cycle);
            }
            if let Some(m) = self.check(cycle) {
                return Ok((cycle + 1, Some(m)));
            }
            clock.set(1);
            sim.eval();
            if tracing {
                sim.trace_dump(2 * cycle + 1);
            }
            self.advance();
        }
        Ok((cycles, None))
    }
}

/// How to run one bench.
#[derive(Clone, Debug)]
pub struct CosimOptions {
    /// Cycles to simulate.
    pub cycles: u64,
    /// Seed of the stimulus.
    pub seed: u64,
    /// Write a VCD of the whole run here (slow; for short runs).
    pub trace: Option<PathBuf>,
    /// Verilog folder supplied from outside instead of the emitted RTL; it must
    /// hold a module with the emitted top's name and ports.
    pub rtl_dir: Option<PathBuf>,
    /// Where waveforms of failing runs go (a VCD per failure).
    pub fail_dir: PathBuf,
    /// Harness build options (cache folder, flags).
    pub build: BuildOptions,
    /// On a mismatch without `trace`, replay the run with tracing compiled in
    /// and write the waveform into `fail_dir` (the CLI always does; tests
    /// that only need the mismatch may skip the traced build).
    pub waveform_on_mismatch: bool,
}

impl Default for CosimOptions {
    fn default() -> Self {
        CosimOptions {
            cycles: 100_000,
            seed: 1,
            trace: None,
            rtl_dir: None,
            fail_dir: std::env::temp_dir().join("exanet-cosim"),
            build: BuildOptions::default(),
            waveform_on_mismatch: true,
        }
    }
}

/// What one run found.
#[derive(Clone, Debug)]
pub struct CosimReport {
    /// Block name.
    pub block: String,
    /// Parameter point.
    pub point: String,
    /// Cycles simulated (up to and including the mismatching one).
    pub cycles: u64,
    /// 0 or 1: the run stops at the first mismatch.
    pub mismatches: u64,
    /// The first mismatch, if any.
    pub first: Option<Mismatch>,
    /// Seed of the stimulus.
    pub seed: u64,
    /// Waveform written (the `--trace` file, or the replay of a failure).
    pub waveform: Option<PathBuf>,
    /// Simulation speed of the untraced run, cycles per second.
    pub cycles_per_sec: f64,
    /// Cycles per second of this thread's CPU time (robust to other jobs
    /// sharing the cores; what speed comparisons use).
    pub cpu_cycles_per_sec: f64,
}

impl CosimReport {
    /// The one-line summary printed by `exanet cosim`.
    pub fn summary(&self) -> String {
        format!(
            "{} [{}] cycles={} mismatches={} seed={} ({:.2} M cycles/s)",
            self.block,
            self.point,
            self.cycles,
            self.mismatches,
            self.seed,
            self.cycles_per_sec / 1e6
        )
    }
}

/// Build (or fetch from cache) and load the model for `bench`.
pub fn load(bench: &dyn Bench, opts: &CosimOptions, trace: bool) -> Result<Sim> {
    let emitted = bench.emit()?;
    let mut build = opts.build.clone();
    build.trace = trace;
    match &opts.rtl_dir {
        None => Sim::from_emitted(&emitted, &build),
        Some(dir) => Sim::from_dir(dir, &emitted.top, &build)
            .with_context(|| format!("loading external RTL from {}", dir.display())),
    }
}

/// Run `cycles` cycles (or until the first mismatch); returns the cycles run.
fn run_loop(
    bench: &mut dyn Bench,
    sim: &mut Sim,
    seed: u64,
    cycles: u64,
    tracing: bool,
) -> Result<(u64, Option<Mismatch>)> {
    bench.bind(sim)?;
    bench.reset();
    let mut rng = Rng::new(seed);
    bench.run_cycles(sim, &mut rng, cycles, tracing)
}

/// Run `bench` per `opts`: RTL vs golden model in lockstep, first mismatch
/// reported with a waveform.
pub fn run(bench: &mut dyn Bench, opts: &CosimOptions) -> Result<CosimReport> {
    let trace = opts.trace.is_some();
    let mut sim = load(bench, opts, trace)?;
    if let Some(p) = &opts.trace {
        sim.trace_open(p)?;
    }
    let t0 = Instant::now();
    let c0 = thread_cpu_secs();
    let (cycles, first) = run_loop(bench, &mut sim, opts.seed, opts.cycles, trace)?;
    let secs = t0.elapsed().as_secs_f64().max(1e-9);
    let cpu = (thread_cpu_secs() - c0).max(1e-9);
    if trace {
        sim.trace_close();
    }
    drop(sim);
    let mut waveform = opts.trace.clone();
    if let Some(m) = &first {
        if waveform.is_none() && opts.waveform_on_mismatch {
            waveform = Some(replay_with_trace(bench, opts, m.cycle)?);
        }
    }
    Ok(CosimReport {
        block: bench.block().to_string(),
        point: bench.point(),
        cycles,
        mismatches: first.is_some() as u64,
        first,
        seed: opts.seed,
        waveform,
        cycles_per_sec: cycles as f64 / secs,
        cpu_cycles_per_sec: cycles as f64 / cpu,
    })
}

/// Re-run from the same seed with tracing, a few cycles past `cycle`.
fn replay_with_trace(bench: &mut dyn Bench, opts: &CosimOptions, cycle: u64) -> Result<PathBuf> {
    std::fs::create_dir_all(&opts.fail_dir)
        .with_context(|| format!("creating {}", opts.fail_dir.display()))?;
    let name = format!(
        "{}-{}-seed{}.vcd",
        bench.block(),
        file_point(&bench.point()),
        opts.seed
    );
    let path = opts.fail_dir.join(name);
    let mut sim = load(bench, opts, true)?;
    sim.trace_open(&path)?;
    // Stop at the mismatch: the loop returns there, so the last traced
    // cycle is the failing one.
    run_loop(bench, &mut sim, opts.seed, cycle + 1, true)?;
    sim.trace_close();
    Ok(path)
}

/// A point's text as part of a file name: [`sanitize`]d; a long one (file
/// names are at most 255 bytes) cut and completed with a hash of the whole
/// text, so different points still get different names.
fn file_point(point: &str) -> String {
    const MAX: usize = 160;
    let s = sanitize(point);
    if s.len() <= MAX {
        return s;
    }
    use sha2::{Digest, Sha256};
    let h = Sha256::digest(point.as_bytes());
    let hex: String = h[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{hex}", &s[..MAX])
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// Does a path look like a usable Verilator install? Benches and tests call
/// this to skip with a visible reason.
pub fn verilator_missing_reason() -> Option<String> {
    crate::verilator::verilator_version()
        .err()
        .map(|e| format!("ignored: verilator not installed ({e})"))
}

/// For tests that need Verilator: when it is missing, print why (the
/// `ignored: …` line of [`verilator_missing_reason`], visible in the test's
/// output) and return true, and the test returns early.
pub fn skip_without_verilator() -> bool {
    match verilator_missing_reason() {
        Some(reason) => {
            println!("{reason}");
            true
        }
        None => false,
    }
}

/// The options the tests run a bench with: `cycles` cycles of stimulus from
/// `seed`, waveforms of failures into `fail_dir`, the rest as
/// [`CosimOptions::default`].
pub fn test_options(cycles: u64, seed: u64, fail_dir: &Path) -> CosimOptions {
    CosimOptions {
        cycles,
        seed,
        fail_dir: fail_dir.to_path_buf(),
        ..Default::default()
    }
}

/// The body of every block's "every matrix point matches" test: runs each
/// bench of `points` (at least `min_points` of them) for `cycles` cycles
/// from `seed` (failure waveforms into `fail_dir`) and panics, naming the
/// point and the first mismatch, unless every run is clean and complete.
/// Prints each run's summary.
pub fn assert_matrix_matches(
    points: Vec<Box<dyn Bench>>,
    min_points: usize,
    cycles: u64,
    seed: u64,
    fail_dir: &Path,
) {
    assert!(
        points.len() >= min_points,
        "only {} matrix points, expected at least {min_points}",
        points.len()
    );
    for mut bench in points {
        let r = run_clean(bench.as_mut(), cycles, seed, fail_dir);
        println!("{}", r.summary());
        assert_eq!(r.cycles, cycles, "{}: ran {} cycles", r.point, r.cycles);
    }
}

/// For tests: run `bench` for `cycles` from `seed` (failure waveforms into
/// `dir`) and panic unless it matches the golden model; the report.
pub fn run_clean(bench: &mut dyn Bench, cycles: u64, seed: u64, dir: &Path) -> CosimReport {
    let r = run(bench, &test_options(cycles, seed, dir))
        .unwrap_or_else(|e| panic!("{}: {e:#}", bench.point()));
    assert_eq!(r.mismatches, 0, "{}: {:?}", r.point, r.first);
    r
}

/// For tests: run `bench` on an edited copy of its RTL, `emitted` (written
/// to `dir/rtl` and loaded as external Verilog, no waveform), and return
/// the first mismatch; panics if the edit goes unnoticed.
pub fn run_edited(
    bench: &mut dyn Bench,
    emitted: &Emitted,
    cycles: u64,
    seed: u64,
    dir: &Path,
) -> Mismatch {
    let rtl = dir.join("rtl");
    emitted
        .write_dir(&rtl)
        .unwrap_or_else(|e| panic!("writing {}: {e:#}", rtl.display()));
    let mut o = test_options(cycles, seed, dir);
    o.rtl_dir = Some(rtl);
    o.waveform_on_mismatch = false;
    let r = run(bench, &o).unwrap_or_else(|e| panic!("{}: {e:#}", bench.point()));
    r.first
        .unwrap_or_else(|| panic!("{}: the edited RTL was not caught", r.point))
}

/// For tests: run `bench`, whose golden model (or stimulus) is known to be
/// wrong, and return the report and its first mismatch; panics when the
/// run is clean, or when the mismatch left no waveform behind.
pub fn run_caught(
    bench: &mut dyn Bench,
    cycles: u64,
    seed: u64,
    dir: &Path,
) -> (CosimReport, Mismatch) {
    let r = run(bench, &test_options(cycles, seed, dir))
        .unwrap_or_else(|e| panic!("{}: {e:#}", bench.point()));
    let m = r
        .first
        .clone()
        .unwrap_or_else(|| panic!("{}: the wrong golden model was not caught", r.point));
    assert!(
        r.waveform.as_ref().is_some_and(|w| w.exists()),
        "{}: no failure waveform for {m}",
        r.point
    );
    (r, m)
}

/// For tests: every coverage count in `counts` (name, count) is at least
/// `min`; `what` names the point in the message.
pub fn assert_reached(what: &str, counts: &[(&str, u64)], min: u64) {
    for (name, n) in counts {
        assert!(*n >= min, "{what}: only {n} {name} (want >= {min})");
    }
}

/// CPU time of the calling thread in seconds (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant
    // every Linux supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + 1e-9 * ts.tv_nsec as f64
}

#[cfg(test)]
mod tests {
    use super::file_point;

    #[test]
    fn long_points_make_short_distinct_file_names() {
        assert_eq!(file_point("a=1,b=2"), "a_1_b_2");
        let long = |v: u32| format!("{}x={v}", "key=1,".repeat(60));
        let (a, b) = (file_point(&long(1)), file_point(&long(2)));
        assert!(a.len() <= 180 && b.len() <= 180, "{a}");
        assert_ne!(a, b);
        assert!(a.starts_with("key_1_key_1_"), "{a}");
    }
}
