//! `exanet sweep`: the cross product of lists of values for any config keys,
//! run locally in parallel or as a Slurm array job, merged into a results
//! table, plots and an HTML page.
//!
//! # Sweep file
//!
//! ```toml
//! name = "vcs-buffers"                 # names the output (default: the file's stem)
//! base = "../exanest-8x4x4.toml"       # base config, relative to this file (default: built-in)
//! [set]                                # fixed overrides of every point
//! "sim.measure" = 5000
//! [vary]                               # lists of values: their cross product is the sweep
//! "router.vcs_per_class" = [2, 4]
//! "traffic.pattern" = ["uniform", "tornado"]
//! "traffic.rate" = [0.05, 0.1, 0.2, 0.3]
//! [saturation]                         # optional: bisection on traffic.rate instead of a list
//! lo = 0.02
//! hi = 1.0
//! steps = 6
//! [slurm]                              # optional: resources of each array task
//! time = "00:30:00"
//! ```
//!
//! Keys are config keys exactly as `-P` takes them (quoted `"a.b"` or dotted
//! `a.b` TOML keys both work). A *series* is one combination of the varied
//! keys other than `traffic.rate`; it is one curve in the plots.
//!
//! # Flow
//!
//! [`plan`] checks the file, elaborates every point (so a bad combination
//! fails before anything runs) and writes `DIR/plan.json` and one complete
//! config per task in `DIR/points/`. A task is one point, or with
//! `[saturation]` one series (its bisection). [`run_task`] runs a task from
//! those files alone and writes `DIR/tasks/task-NNNN.json`; locally the tasks
//! run on `--jobs` threads, under Slurm one per array task
//! ([`write_slurm`]). [`collect`] merges the task files into
//! `results.csv`, `results.json`, `timing.csv`, the SVG plots and
//! `index.html`, the same way for both.

use crate::config::{self, Config};
use crate::error::usage;
use crate::outdir::{write_atomic, OutDir, Staging};
use crate::plot;
use crate::simulate::{self, SimResult};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use toml::{Table, Value};

/// The key a saturation search varies.
pub const RATE_KEY: &str = "traffic.rate";

/// A sweep file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    name: Option<String>,
    base: Option<String>,
    #[serde(default)]
    set: Table,
    vary: Table,
    saturation: Option<Search>,
    #[serde(default)]
    slurm: SlurmOptions,
}

/// Bisection on `traffic.rate` between `lo` and `hi` in `steps` halvings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Search {
    #[serde(default = "Search::default_lo")]
    pub lo: f64,
    #[serde(default = "Search::default_hi")]
    pub hi: f64,
    #[serde(default = "Search::default_steps")]
    pub steps: u32,
}

impl Search {
    fn default_lo() -> f64 {
        0.02
    }
    fn default_hi() -> f64 {
        1.0
    }
    fn default_steps() -> u32 {
        6
    }
}

/// Resources and options of the Slurm array job.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlurmOptions {
    /// `--partition`.
    pub partition: Option<String>,
    /// `--account`.
    pub account: Option<String>,
    /// `--time` per task (default 01:00:00).
    pub time: Option<String>,
    /// `--mem` per task (default: estimated from the largest network).
    pub mem: Option<String>,
    /// Most tasks running at once (`--array=...%N`).
    pub max_parallel: Option<u32>,
    /// Extra `#SBATCH` lines, e.g. `"--qos=short"`.
    #[serde(default)]
    pub extra: Vec<String>,
}

/// One unit of work: one point, or one series' saturation search.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: usize,
    /// Label of the series (the varied keys other than `traffic.rate`).
    pub series: String,
    /// Every varied key with its value (TOML text).
    pub values: Vec<(String, String)>,
    /// Its complete config, relative to the sweep folder.
    pub config: String,
    /// Router count of its network (for the Slurm memory estimate).
    pub nodes: u64,
}

/// What [`plan`] decided; `DIR/plan.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub name: String,
    /// The sweep file as given.
    pub sweep_file: String,
    /// The varied keys in file order.
    pub vary_keys: Vec<String>,
    /// The varied keys that make a series.
    pub series_keys: Vec<String>,
    pub search: Option<Search>,
    pub slurm: SlurmOptions,
    pub tasks: Vec<Task>,
}

/// One simulation of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub task: usize,
    pub series: String,
    /// The varied keys' values (TOML text); with a search, `traffic.rate` too.
    pub values: Vec<(String, String)>,
    pub result: SimResult,
}

/// What one task writes: `DIR/tasks/task-NNNN.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskOutput {
    pub task: usize,
    pub rows: Vec<Row>,
}

/// One curve's summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesSummary {
    pub series: String,
    pub points: usize,
    /// Highest offered load (flits/terminal/cycle) of a point that was not saturated.
    pub saturation_load: Option<f64>,
    /// Highest accepted load of the series (flits/terminal/cycle) and in Gb/s per terminal.
    pub saturation_throughput: f64,
    pub saturation_gbps: f64,
    /// Whether some point saturated (else the saturation load is only a lower bound).
    pub reached: bool,
    /// Zero-load latency estimate of the lowest-load point, cycles.
    pub zero_load_cycles: f64,
}

/// Paths of the outputs [`collect`] wrote.
#[derive(Clone, Debug)]
pub struct Collected {
    pub rows: usize,
    pub series: Vec<SeriesSummary>,
    pub files: Vec<PathBuf>,
}

fn task_name(id: usize) -> String {
    format!("task-{id:04}.json")
}

fn task_file(id: usize) -> String {
    format!("tasks/{}", task_name(id))
}

fn point_file(id: usize) -> String {
    format!("points/task-{id:04}.toml")
}

/// Every leaf of `t` as (`a.b.c`, value).
fn flatten(prefix: &str, t: &Table, out: &mut Vec<(String, Value)>) {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Table(sub) => flatten(&key, sub, out),
            other => out.push((key, other.clone())),
        }
    }
}

fn parse_one(text: &str) -> Option<Value> {
    toml::from_str::<Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
}

/// A value as the results table shows it: strings bare, the rest as TOML.
fn plain_value(text: &str) -> String {
    match parse_one(text) {
        Some(Value::String(s)) => s,
        _ => text.to_string(),
    }
}

/// A value as a series label shows it: strings bare, integer arrays `4x4x4`.
fn label_value(text: &str) -> String {
    match parse_one(text) {
        Some(Value::String(s)) => s,
        Some(Value::Array(a)) if a.iter().all(|v| v.is_integer()) => a
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join("x"),
        _ => text.to_string(),
    }
}

fn short_keys(keys: &[String]) -> Vec<String> {
    let last = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
    keys.iter()
        .map(|k| {
            let l = last(k);
            if keys.iter().filter(|o| last(o) == l).count() > 1 {
                k.clone()
            } else {
                l
            }
        })
        .collect()
}

/// Check `sweep` and write the plan and per-task configs into `dir`.
///
/// `config_override` replaces the file's `base`; `overrides` (`-P`) apply after
/// the file's `[set]` and before the varied values. Every point is
/// elaborated before anything is written. What an earlier sweep wrote into
/// `dir` (points, task results, logs, results) is replaced; files exanet did
/// not write, or edited ones, make it refuse (or, with `force`, are moved to
/// a backup folder): see [`crate::outdir`].
pub fn plan(
    sweep: &Path,
    config_override: Option<&Path>,
    overrides: &[String],
    dir: &Path,
    force: bool,
) -> Result<Plan> {
    let shown = sweep.display().to_string();
    let text = std::fs::read_to_string(sweep)
        .map_err(|e| usage(format!("cannot read sweep file {shown}: {e}")))?;
    let file: SweepFile = toml::from_str(&text).map_err(|e| {
        let pos = e
            .span()
            .map(|s| {
                let (l, c) = config::line_col(&text, s.start);
                format!(":{l}:{c}")
            })
            .unwrap_or_default();
        usage(format!(
            "{shown}{pos}: {}",
            e.message().lines().collect::<Vec<_>>().join("; ")
        ))
    })?;
    let name = file.name.clone().unwrap_or_else(|| {
        sweep
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sweep".into())
    });
    let base: Option<PathBuf> = match (config_override, &file.base) {
        (Some(c), _) => Some(c.to_path_buf()),
        (None, Some(b)) => Some(sweep.parent().unwrap_or(Path::new(".")).join(b)),
        (None, None) => None,
    };
    if let Some(b) = &base {
        if !b.is_file() {
            return Err(usage(format!(
                "{shown}: base = {:?}: no such config file ({})",
                file.base.as_deref().unwrap_or_default(),
                b.display()
            )));
        }
    }
    let mut fixed = Vec::new();
    let mut set = Vec::new();
    flatten("", &file.set, &mut set);
    for (k, v) in &set {
        fixed.push(format!("{k}={v}"));
    }
    // each [set] key alone, so an error names it
    for (i, f) in fixed.iter().enumerate() {
        config::load(base.as_deref(), std::slice::from_ref(f)).map_err(|e| {
            usage(format!(
                "{shown}: [set] key `{}`: {}",
                set[i].0,
                strip_flag(&format!("{e:#}"), f)
            ))
        })?;
    }
    fixed.extend(overrides.iter().cloned());
    config::load(base.as_deref(), &fixed)?;

    let mut vary = Vec::new();
    flatten("", &file.vary, &mut vary);
    if vary.is_empty() {
        return Err(usage(format!(
            "{shown}: [vary] is empty; list values for at least one key, e.g. \"traffic.rate\" = [0.1, 0.2]"
        )));
    }
    let mut axes: Vec<(String, Vec<String>)> = Vec::new();
    for (k, v) in &vary {
        let Value::Array(list) = v else {
            return Err(usage(format!(
                "{shown}: [vary] key `{k}` must be a list of values, e.g. `\"{k}\" = [{v}]`"
            )));
        };
        if list.is_empty() {
            return Err(usage(format!(
                "{shown}: [vary] key `{k}`: the list of values is empty"
            )));
        }
        if file.saturation.is_some() && k == RATE_KEY {
            return Err(usage(format!(
                "{shown}: [vary] key `{k}`: [saturation] searches {RATE_KEY} itself; remove it from [vary]"
            )));
        }
        let texts: Vec<String> = list.iter().map(|x| x.to_string()).collect();
        for t in &texts {
            let flag = format!("{k}={t}");
            let mut o = fixed.clone();
            o.push(flag.clone());
            config::load(base.as_deref(), &o).map_err(|e| {
                usage(format!(
                    "{shown}: [vary] key `{k}` value {t}: {}",
                    strip_flag(&format!("{e:#}"), &flag)
                ))
            })?;
        }
        axes.push((k.clone(), texts));
    }
    if let Some(s) = &file.saturation {
        if !(0.0 <= s.lo && s.lo < s.hi && s.hi <= 1.0) || s.steps == 0 || s.steps > 30 {
            return Err(usage(format!(
                "{shown}: [saturation] lo = {}, hi = {}, steps = {}: need 0 <= lo < hi <= 1 and 1 <= steps <= 30",
                s.lo, s.hi, s.steps
            )));
        }
    }
    let vary_keys: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
    let series_keys: Vec<String> = vary_keys
        .iter()
        .filter(|k| *k != RATE_KEY)
        .cloned()
        .collect();
    let shorts = short_keys(&series_keys);

    let mut writes: Vec<(String, Vec<u8>)> = Vec::new();
    // the cross product, last key fastest
    let total: usize = axes.iter().map(|(_, v)| v.len()).product();
    let mut tasks = Vec::with_capacity(total);
    for id in 0..total {
        let mut rest = id;
        let mut values = vec![(String::new(), String::new()); axes.len()];
        for (i, (k, vals)) in axes.iter().enumerate().rev() {
            values[i] = (k.clone(), vals[rest % vals.len()].clone());
            rest /= vals.len();
        }
        let series = if series_keys.is_empty() {
            "all".to_string()
        } else {
            values
                .iter()
                .filter(|(k, _)| k != RATE_KEY)
                .zip(&shorts)
                .map(|((_, v), s)| format!("{s}={}", label_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut o = fixed.clone();
        o.extend(values.iter().map(|(k, v)| format!("{k}={v}")));
        let what = || {
            let v: Vec<String> = values.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{shown}: point {id} ({})", v.join(", "))
        };
        let loaded =
            config::load(base.as_deref(), &o).map_err(|e| usage(format!("{}: {e:#}", what())))?;
        let setup = loaded
            .elaborate_sim()
            .map_err(|e| usage(format!("{}: {}", what(), strip_origin(&format!("{e:#}")))))?;
        let mut cfg: Config = setup.config.clone();
        if let Some(t) = &setup.trace {
            let abs = std::fs::canonicalize(t).unwrap_or_else(|_| t.clone());
            cfg.traffic.trace = abs.display().to_string();
        }
        let rel = point_file(id);
        let header = format!(
            "# exanet sweep `{name}` task {id}: {}\n",
            values
                .iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        writes.push((rel.clone(), (header + &cfg.to_toml()?).into_bytes()));
        tasks.push(Task {
            id,
            series,
            values,
            config: rel,
            nodes: u64::from(setup.params.topology.nodes),
        });
    }
    let plan = Plan {
        name,
        sweep_file: shown,
        vary_keys,
        series_keys,
        search: file.saturation.clone(),
        slurm: file.slurm.clone(),
        tasks,
    };
    writes.push((
        "plan.json".to_string(),
        (serde_json::to_string_pretty(&plan)? + "\n").into_bytes(),
    ));
    let mut out = OutDir::claim(dir, "exanet sweep", force)?;
    // Files the Slurm array tasks write (the sbatch script names them).
    out.own_pattern(TASK_PATTERN);
    out.own_pattern(LOG_PATTERN);
    out.replace_all(&writes)?;
    report_backups(&out);
    out.commit()?;
    Ok(plan)
}

/// Task result files, as an [`OutDir`] pattern.
const TASK_PATTERN: &str = "tasks/task-*.json";
/// Slurm task logs, as an [`OutDir`] pattern.
const LOG_PATTERN: &str = "logs/task-*.out";

/// Tell what `--force` moved out of the way (on stderr: it is a warning).
fn report_backups(out: &OutDir) {
    if let Some(b) = out.backup_dir() {
        for f in &out.backed_up {
            eprintln!("warning: --force: moved {f} to {}", b.join(f).display());
        }
    }
}

/// `-P k=v: message` → `message` (the sweep names the key itself).
fn strip_flag(msg: &str, flag: &str) -> String {
    msg.strip_prefix(&format!("-P {flag}: "))
        .unwrap_or(msg)
        .to_string()
}

/// `-P k=v: key = v: rule` → `key = v: rule`.
fn strip_origin(msg: &str) -> String {
    match msg.strip_prefix("-P ") {
        Some(rest) => rest.split_once(": ").map_or(msg, |(_, r)| r).to_string(),
        None => msg.to_string(),
    }
}

/// Read `DIR/plan.json`.
pub fn read_plan(dir: &Path) -> Result<Plan> {
    let p = dir.join("plan.json");
    let text = std::fs::read_to_string(&p).map_err(|e| {
        usage(format!(
            "cannot read {}: {e} (is {} a folder written by `exanet sweep`?)",
            p.display(),
            dir.display()
        ))
    })?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", p.display()))
}

fn simulate_at(cfg: &Path, rate: Option<f64>) -> Result<SimResult> {
    let o: Vec<String> = rate
        .map(|r| format!("{RATE_KEY}={r}"))
        .into_iter()
        .collect();
    let loaded = config::load(Some(cfg), &o)?;
    let setup = loaded.elaborate_sim()?;
    simulate::run(&setup)
}

/// Run task `id` of the sweep in `dir` and write its output file into
/// `tasks` (`DIR/tasks` for a Slurm task; a staging folder for a local run).
pub fn run_task(dir: &Path, tasks: &Path, plan: &Plan, id: usize) -> Result<TaskOutput> {
    let task = plan.tasks.get(id).ok_or_else(|| {
        usage(format!(
            "task {id}: the sweep in {} has tasks 0..={}",
            dir.display(),
            plan.tasks.len().saturating_sub(1)
        ))
    })?;
    let cfg = dir.join(&task.config);
    let row = |result: SimResult, rate: Option<f64>| {
        let mut values = task.values.clone();
        if let Some(r) = rate {
            values.push((RATE_KEY.to_string(), r.to_string()));
        }
        Row {
            task: id,
            series: task.series.clone(),
            values,
            result,
        }
    };
    let mut rows = Vec::new();
    match &plan.search {
        None => rows.push(row(simulate_at(&cfg, None)?, None)),
        Some(s) => {
            // the top of the range first: if it does not saturate there is nothing to search
            let top = simulate_at(&cfg, Some(s.hi))?;
            let sat = top.saturated;
            rows.push(row(top, Some(s.hi)));
            if sat {
                let (mut lo, mut hi) = (s.lo, s.hi);
                let bottom = simulate_at(&cfg, Some(lo))?;
                let low_sat = bottom.saturated;
                rows.push(row(bottom, Some(lo)));
                if !low_sat {
                    for _ in 0..s.steps {
                        // rounded to 1e-6 so the rate prints as it was set
                        let mid = ((lo + hi) / 2.0 * 1e6).round() / 1e6;
                        let r = simulate_at(&cfg, Some(mid))?;
                        if r.saturated {
                            hi = mid;
                        } else {
                            lo = mid;
                        }
                        rows.push(row(r, Some(mid)));
                    }
                }
            }
        }
    }
    let out = TaskOutput { task: id, rows };
    // write then rename, so `collect` never reads half a file
    write_atomic(
        &tasks.join(task_name(id)),
        (serde_json::to_string_pretty(&out)? + "\n").as_bytes(),
    )?;
    Ok(out)
}

/// Run every task on `jobs` threads; `done(task)` after each. The task
/// results are written into a staging folder and moved into `DIR/tasks/`
/// only when every task succeeded: a failed run leaves no partial results
/// behind. The first failures are returned together after all tasks ran.
pub fn run_local(
    dir: &Path,
    plan: &Plan,
    jobs: usize,
    done: &(dyn Fn(&Task) + Sync),
) -> Result<()> {
    let staging = Staging::new(dir)?;
    run_all(dir, staging.path(), plan, jobs, done)?;
    let mut out = OutDir::claim(dir, "exanet sweep", false)?;
    let mut writes = Vec::new();
    for t in &plan.tasks {
        let from = staging.path().join(task_name(t.id));
        let bytes = std::fs::read(&from).with_context(|| format!("reading {}", from.display()))?;
        writes.push((task_file(t.id), bytes));
    }
    out.write_all(&writes)?;
    out.commit()?;
    Ok(())
}

/// [`run_local`]'s tasks, results into `tasks`.
fn run_all(
    dir: &Path,
    tasks: &Path,
    plan: &Plan,
    jobs: usize,
    done: &(dyn Fn(&Task) + Sync),
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let errors = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(plan.tasks.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(task) = plan.tasks.get(i) else {
                    break;
                };
                if let Err(e) = run_task(dir, tasks, plan, i) {
                    errors
                        .lock()
                        .expect("no panics while held")
                        .push(format!("task {i} ({}): {e:#}", task.series));
                }
                done(task);
            });
        }
    });
    let mut errors = errors.into_inner().expect("no panics while held");
    if errors.is_empty() {
        Ok(())
    } else {
        errors.sort();
        let n = errors.len();
        errors.truncate(3);
        anyhow::bail!("{n} task(s) failed: {}", errors.join("; "))
    }
}

/// Slurm memory per task for a network of `nodes` routers: measured ~18 KiB
/// per router (32x32x32: 596 MiB peak) plus the program, with headroom.
fn mem_estimate(nodes: u64) -> String {
    let mib = 256 + nodes * 32 / 1024;
    let gib = mib.div_ceil(1024).max(1);
    format!("{gib}G")
}

/// Write `DIR/sweep.sbatch`, an array job of one task per sweep task, and
/// return its path. `exe` is the `exanet` binary the tasks run.
pub fn write_slurm(dir: &Path, plan: &Plan, exe: &Path) -> Result<PathBuf> {
    let abs = std::fs::canonicalize(dir)?;
    let o = &plan.slurm;
    let n = plan.tasks.len();
    let mem = o
        .mem
        .clone()
        .unwrap_or_else(|| mem_estimate(plan.tasks.iter().map(|t| t.nodes).max().unwrap_or(1)));
    let job: String = plan
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut s = String::new();
    let _ = writeln!(s, "#!/bin/bash");
    let _ = writeln!(s, "#SBATCH --job-name=exanet-{job}");
    let array = match o.max_parallel {
        Some(m) => format!("0-{}%{m}", n - 1),
        None => format!("0-{}", n - 1),
    };
    let _ = writeln!(s, "#SBATCH --array={array}");
    let _ = writeln!(s, "#SBATCH --ntasks=1");
    let _ = writeln!(s, "#SBATCH --cpus-per-task=1");
    let _ = writeln!(s, "#SBATCH --mem={mem}");
    let _ = writeln!(
        s,
        "#SBATCH --time={}",
        o.time.as_deref().unwrap_or("01:00:00")
    );
    let _ = writeln!(s, "#SBATCH --output={}/logs/task-%a.out", abs.display());
    if let Some(p) = &o.partition {
        let _ = writeln!(s, "#SBATCH --partition={p}");
    }
    if let Some(a) = &o.account {
        let _ = writeln!(s, "#SBATCH --account={a}");
    }
    for e in &o.extra {
        let _ = writeln!(s, "#SBATCH {e}");
    }
    let _ = writeln!(
        s,
        "#\n# exanet sweep `{}`: {n} task(s), one sweep point (or one saturation search) each.\n\
         # Submit with `sbatch {}/sweep.sbatch`; when all tasks are done, merge with\n\
         # `exanet sweep collect {}`. EXANET overrides the binary.\n\
         set -euo pipefail\n\
         EXANET=\"${{EXANET:-{}}}\"\n\
         exec \"$EXANET\" sweep task \"{}\" \"$SLURM_ARRAY_TASK_ID\"",
        plan.name,
        abs.display(),
        abs.display(),
        exe.display(),
        abs.display()
    );
    // `plan` claimed the folder and removed an earlier sbatch script.
    let mut out = OutDir::claim(&abs, "exanet sweep", false)?;
    out.write_all(&[("sweep.sbatch".to_string(), s.into_bytes())])?;
    out.commit()?;
    std::fs::create_dir_all(abs.join("logs"))?;
    let p = abs.join("sweep.sbatch");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(p)
}

/// CSV field: quoted when it holds a comma, quote or newline.
fn csv(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The fixed result columns of `results.csv` after `task`, `series` and the varied keys.
pub const RESULT_COLUMNS: [&str; 25] = [
    "pattern",
    "rate",
    "offered_flits",
    "accepted_flits",
    "offered_gbps",
    "accepted_gbps",
    "latency_avg_cycles",
    "latency_p50_cycles",
    "latency_p99_cycles",
    "latency_max_cycles",
    "latency_avg_ns",
    "latency_p99_ns",
    "network_latency_avg_cycles",
    "zero_load_cycles",
    "hops",
    "packets",
    "refused",
    "unfinished",
    "saturated",
    "clean",
    "nodes",
    "flit_bits",
    "clock_mhz",
    "seed",
    "measure",
];

fn result_fields(r: &SimResult) -> Vec<String> {
    let t = &r.total;
    vec![
        r.pattern.clone(),
        format!("{}", r.rate),
        format!("{:.6}", t.offered_flits),
        format!("{:.6}", t.accepted_flits),
        format!("{:.4}", t.offered_gbps),
        format!("{:.4}", t.accepted_gbps),
        format!("{:.3}", t.latency_cycles.avg),
        t.latency_cycles.p50.to_string(),
        t.latency_cycles.p99.to_string(),
        t.latency_cycles.max.to_string(),
        format!("{:.2}", t.latency_ns.avg),
        format!("{:.2}", t.latency_ns.p99),
        format!("{:.3}", t.network_latency_cycles.avg),
        format!("{:.3}", r.zero_load_cycles),
        format!("{:.4}", t.hops),
        t.packets.to_string(),
        t.refused.to_string(),
        r.unfinished.to_string(),
        r.saturated.to_string(),
        r.clean.to_string(),
        r.dims
            .iter()
            .map(|&d| u64::from(d))
            .product::<u64>()
            .to_string(),
        r.flit_bits.to_string(),
        format!("{}", r.clock_mhz),
        r.seed.to_string(),
        r.measure.to_string(),
    ]
}

/// The header and rows of `results.csv`.
pub fn table(plan: &Plan, rows: &[Row]) -> (Vec<String>, Vec<Vec<String>>) {
    let classes = rows
        .iter()
        .map(|r| r.result.per_class.len())
        .max()
        .unwrap_or(1);
    let mut header: Vec<String> = vec!["task".into(), "series".into()];
    header.extend(plan.vary_keys.iter().filter(|k| *k != RATE_KEY).cloned());
    if plan.vary_keys.iter().any(|k| k == RATE_KEY) || plan.search.is_some() {
        header.push(RATE_KEY.into());
    }
    let keyed = header.len();
    header.extend(RESULT_COLUMNS.iter().map(|s| s.to_string()));
    if classes > 1 {
        for c in 0..classes {
            for f in ["accepted_flits", "latency_avg_cycles", "latency_p99_cycles"] {
                header.push(format!("class{c}_{f}"));
            }
        }
    }
    let body = rows
        .iter()
        .map(|r| {
            let mut line = vec![r.task.to_string(), r.series.clone()];
            for k in &header[2..keyed] {
                line.push(
                    r.values
                        .iter()
                        .find(|(vk, _)| vk == k)
                        .map(|(_, v)| plain_value(v))
                        .unwrap_or_default(),
                );
            }
            line.extend(result_fields(&r.result));
            if classes > 1 {
                for c in 0..classes {
                    match r.result.per_class.get(c) {
                        Some(f) => {
                            line.push(format!("{:.6}", f.accepted_flits));
                            line.push(format!("{:.3}", f.latency_cycles.avg));
                            line.push(f.latency_cycles.p99.to_string());
                        }
                        None => line.extend([String::new(), String::new(), String::new()]),
                    }
                }
            }
            line
        })
        .collect();
    (header, body)
}

/// Summaries per series, in order of first appearance.
pub fn summarize(rows: &[Row]) -> Vec<SeriesSummary> {
    let mut order: Vec<String> = Vec::new();
    for r in rows {
        if !order.contains(&r.series) {
            order.push(r.series.clone());
        }
    }
    order
        .into_iter()
        .map(|name| {
            let mut pts: Vec<&SimResult> = rows
                .iter()
                .filter(|r| r.series == name)
                .map(|r| &r.result)
                .collect();
            pts.sort_by(|a, b| a.total.offered_flits.total_cmp(&b.total.offered_flits));
            let best = pts
                .iter()
                .max_by(|a, b| a.total.accepted_flits.total_cmp(&b.total.accepted_flits));
            SeriesSummary {
                series: name,
                points: pts.len(),
                saturation_load: pts
                    .iter()
                    .filter(|r| !r.saturated)
                    .map(|r| r.total.offered_flits)
                    .max_by(f64::total_cmp),
                saturation_throughput: best.map_or(0.0, |r| r.total.accepted_flits),
                saturation_gbps: best.map_or(0.0, |r| r.total.accepted_gbps),
                reached: pts.iter().any(|r| r.saturated),
                zero_load_cycles: pts.first().map_or(0.0, |r| r.zero_load_cycles),
            }
        })
        .collect()
}

/// Merge the task outputs of the sweep in `dir` into results and plots.
/// Results and plots an earlier collect wrote are replaced; a file exanet
/// did not write, or an edited one, is refused (or backed up with `force`).
pub fn collect(dir: &Path, force: bool) -> Result<Collected> {
    let plan = read_plan(dir)?;
    let mut rows = Vec::new();
    let mut timing = String::from("task,point,rate,wall_s,router_cycles_per_s\n");
    let mut missing = Vec::new();
    for t in &plan.tasks {
        let p = dir.join(task_file(t.id));
        let text = match std::fs::read_to_string(&p) {
            Ok(x) => x,
            Err(_) => {
                missing.push(t.id);
                continue;
            }
        };
        let out: TaskOutput =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", p.display()))?;
        if out.task != t.id {
            anyhow::bail!("{} holds task {}, not {}", p.display(), out.task, t.id);
        }
        for (i, r) in out.rows.into_iter().enumerate() {
            let _ = writeln!(
                timing,
                "{},{i},{},{:.3},{:.0}",
                t.id, r.result.rate, r.result.wall_s, r.result.router_cycles_per_s
            );
            rows.push(r);
        }
    }
    let missing_text = (!missing.is_empty()).then(|| {
        let shown: Vec<String> = missing.iter().take(10).map(|m| m.to_string()).collect();
        format!(
            "{} of {} task(s) have no results yet ({}{}): run them (`exanet sweep task {} ID`, \
             or see {}/logs/ for failed Slurm tasks) and collect again",
            missing.len(),
            plan.tasks.len(),
            shown.join(", "),
            if missing.len() > 10 { ", ..." } else { "" },
            dir.display(),
            dir.display()
        )
    });
    match &missing_text {
        // Nothing to merge: say what to do.
        Some(m) if rows.is_empty() => return Err(usage(format!("{}: {m}", dir.display()))),
        // Merge what finished; the report and the caller say what is missing.
        Some(m) => eprintln!("warning: {}: partial results: {m}", dir.display()),
        None => {}
    }
    let series = summarize(&rows);
    let (header, body) = table(&plan, &rows);
    let mut csv_text = header.iter().map(|h| csv(h)).collect::<Vec<_>>().join(",") + "\n";
    for line in &body {
        csv_text += &(line.iter().map(|f| csv(f)).collect::<Vec<_>>().join(",") + "\n");
    }
    let mut writes: Vec<(String, Vec<u8>)> = Vec::new();
    let mut put = |name: &str, text: &str| -> Result<()> {
        writes.push((name.to_string(), text.as_bytes().to_vec()));
        Ok(())
    };
    put("results.csv", &csv_text)?;
    put("timing.csv", &timing)?;
    // results.json: deterministic, so the timing fields go to timing.csv only
    let mut json_rows = serde_json::to_value(&rows)?;
    if let Some(a) = json_rows.as_array_mut() {
        for r in a {
            if let Some(res) = r.get_mut("result").and_then(|x| x.as_object_mut()) {
                res.remove("wall_s");
                res.remove("router_cycles_per_s");
            }
        }
    }
    let json = serde_json::json!({
        "name": plan.name,
        "sweep_file": plan.sweep_file,
        "vary_keys": plan.vary_keys,
        "series_keys": plan.series_keys,
        "search": plan.search,
        "series": series,
        "rows": json_rows,
    });
    put(
        "results.json",
        &(serde_json::to_string_pretty(&json)? + "\n"),
    )?;
    let plots = plot::sweep_plots(&plan.name, &rows, &series);
    for (file, svg) in &plots {
        put(file, svg)?;
    }
    put(
        "index.html",
        &index_html(
            &plan,
            &series,
            &header,
            &body,
            &plots,
            missing_text.as_deref(),
        ),
    )?;
    let mut out = OutDir::claim(dir, "exanet sweep", force)?;
    out.write_all(&writes)?;
    let files = writes.iter().map(|(rel, _)| out.path(rel)).collect();
    report_backups(&out);
    out.commit()?;
    Ok(Collected {
        rows: rows.len(),
        series,
        files,
    })
}

fn index_html(
    plan: &Plan,
    series: &[SeriesSummary],
    header: &[String],
    body: &[Vec<String>],
    plots: &[(String, String)],
    missing: Option<&str>,
) -> String {
    let mut h = String::new();
    let title = format!("exanet sweep: {}", plan.name);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n<style>\n\
         body {{ font-family: sans-serif; margin: 2em; color: #222; }}\n\
         table {{ border-collapse: collapse; font-size: 13px; }}\n\
         th, td {{ border: 1px solid #ccc; padding: 3px 6px; text-align: right; }}\n\
         th {{ background: #f0f0f0; position: sticky; top: 0; }}\n\
         td.l, th.l {{ text-align: left; }}\n\
         tr.sat td {{ color: #a00; }}\n\
         img {{ max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0; }}\n\
         .wide {{ overflow-x: auto; max-height: 40em; }}\n\
         </style>\n</head>\n<body>\n<h1>{t}</h1>\n",
        t = html(&title)
    );
    let mode = match &plan.search {
        Some(s) => format!(
            "saturation search on {RATE_KEY} in [{}, {}] with {} bisection steps",
            s.lo, s.hi, s.steps
        ),
        None => "fixed values".to_string(),
    };
    let _ = write!(
        h,
        "<p>Sweep <code>{}</code> (file <code>{}</code>): {} task(s), {} simulation(s), {} series; varied: {}; {}.\n\
         Load is in flits per terminal per cycle (and Gb/s per terminal at each config's clock and flit width);\n\
         latency is from packet creation to its tail delivered. A point is <em>saturated</em> when it accepts\n\
         less than 95&nbsp;% of the offered load, refuses more than 1&nbsp;% of its packets at full source queues, or leaves packets undelivered. Data: \
         <a href=\"results.csv\">results.csv</a>, <a href=\"results.json\">results.json</a>, \
         <a href=\"timing.csv\">timing.csv</a>.</p>\n",
        html(&plan.name),
        // The file's name only: the report may be read on another machine.
        html(
            &Path::new(&plan.sweep_file)
                .file_name()
                .map_or(plan.sweep_file.clone(), |f| f.to_string_lossy().into_owned())
        ),
        plan.tasks.len(),
        body.len(),
        series.len(),
        html(&plan.vary_keys.join(", ")),
        html(&mode)
    );
    if let Some(m) = missing {
        let _ = writeln!(h, "<p><strong>Partial results:</strong> {}.</p>", html(m));
    }
    for (file, _) in plots {
        let _ = writeln!(h, "<p><img src=\"{file}\" alt=\"{file}\"></p>");
    }
    let _ = write!(
        h,
        "<h2>Saturation per series</h2>\n<table>\n<tr><th class=\"l\">series</th><th>points</th>\
         <th>saturation load<br>(flits/terminal/cycle)</th><th>saturation throughput<br>(flits/terminal/cycle)</th>\
         <th>(Gb/s per terminal)</th><th>zero-load latency<br>(cycles)</th></tr>\n"
    );
    for s in series {
        let load = match (s.saturation_load, s.reached) {
            (Some(l), true) => format!("{l:.4}"),
            (Some(l), false) => format!("&ge; {l:.4} (not reached)"),
            (None, _) => "below the lowest point".to_string(),
        };
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{load}</td><td>{:.4}</td><td>{:.2}</td><td>{:.1}</td></tr>",
            html(&s.series),
            s.points,
            s.saturation_throughput,
            s.saturation_gbps,
            s.zero_load_cycles
        );
    }
    let _ = write!(
        h,
        "</table>\n<h2>All results</h2>\n<div class=\"wide\"><table>\n<tr>"
    );
    let sat_col = header.iter().position(|c| c == "saturated");
    for c in header {
        let _ = write!(h, "<th>{}</th>", html(c));
    }
    h.push_str("</tr>\n");
    for line in body {
        let sat = sat_col.is_some_and(|i| line[i] == "true");
        let _ = write!(h, "<tr{}>", if sat { " class=\"sat\"" } else { "" });
        for (i, f) in line.iter().enumerate() {
            let cls = if i == 1 || f.parse::<f64>().is_err() {
                " class=\"l\""
            } else {
                ""
            };
            let _ = write!(h, "<td{cls}>{}</td>", html(f));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table></div>\n</body>\n</html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_short_keys() {
        assert_eq!(label_value("\"uniform\""), "uniform");
        assert_eq!(label_value("[4, 4, 4]"), "4x4x4");
        assert_eq!(label_value("0.25"), "0.25");
        let k = short_keys(&[
            "router.vcs_per_class".into(),
            "a.rate".into(),
            "traffic.rate".into(),
        ]);
        assert_eq!(k, ["vcs_per_class", "a.rate", "traffic.rate"]);
        assert_eq!(csv("a,b"), "\"a,b\"");
        assert_eq!(csv("x\"y"), "\"x\"\"y\"");
    }

    #[test]
    fn memory_estimate_grows_with_the_network() {
        assert_eq!(mem_estimate(128), "1G");
        assert_eq!(mem_estimate(32 * 32 * 32), "2G");
    }
}
