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

/// Slurm's default `MaxArraySize`: array indices stop at 1000 unless the
/// cluster raised it (`sbatch` then refuses the whole array).
pub const SLURM_DEFAULT_MAX_ARRAY: usize = 1001;

impl SlurmOptions {
    /// The values `sbatch` would refuse (or read as more lines of the
    /// script), named by key: checked when the sweep is planned, not when
    /// the job is submitted.
    pub fn check(&self) -> std::result::Result<(), String> {
        if let Some(t) = &self.time {
            if !slurm_time_ok(t) {
                return Err(format!(
                    "time = {t:?}: must be a Slurm time: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS"
                ));
            }
        }
        if let Some(m) = &self.mem {
            let digits = m.trim_end_matches(['K', 'M', 'G', 'T', 'k', 'm', 'g', 't']);
            let suffix = m.len() - digits.len();
            if digits.is_empty()
                || suffix > 1
                || !digits.bytes().all(|b| b.is_ascii_digit())
                || digits.bytes().all(|b| b == b'0')
            {
                return Err(format!(
                    "mem = {m:?}: must be a whole number of megabytes, or with a unit K, M, G or T (e.g. \"1500M\", \"2G\")"
                ));
            }
        }
        if self.max_parallel == Some(0) {
            return Err("max_parallel = 0: must be at least 1".into());
        }
        for (key, v) in [("partition", &self.partition), ("account", &self.account)] {
            if let Some(v) = v {
                if v.is_empty()
                    || !v
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.,".contains(c))
                {
                    return Err(format!(
                        "{key} = {v:?}: must be a Slurm name (letters, digits, - _ . ,)"
                    ));
                }
            }
        }
        for (i, e) in self.extra.iter().enumerate() {
            if !e.starts_with("--") || e.chars().any(char::is_control) {
                return Err(format!(
                    "extra[{i}] = {e:?}: must be one sbatch option on one line, e.g. \"--qos=short\""
                ));
            }
        }
        Ok(())
    }
}

/// Slurm's `--time` forms: `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S`.
fn slurm_time_ok(t: &str) -> bool {
    let num = |s: &str| !s.is_empty() && s.len() <= 6 && s.bytes().all(|b| b.is_ascii_digit());
    let (days, rest) = match t.split_once('-') {
        Some((d, r)) => (Some(d), r),
        None => (None, t),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    days.is_none_or(num) && parts.len() <= 3 && parts.iter().all(|p| num(p))
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

/// What one task writes: `DIR/tasks/task-NNNN.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskOutput {
    pub task: usize,
    pub rows: Vec<Row>,
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

/// ` (at `LINE`)` for 1-based line `l` of `text`, cut to 80 characters: a
/// type error in a sweep file then shows the key it is about.
fn source_line(text: &str, l: usize) -> String {
    match text.lines().nth(l.saturating_sub(1)).map(str::trim) {
        Some(t) if !t.is_empty() => {
            let cut: String = t.chars().take(80).collect();
            let more = if cut.len() < t.len() { "…" } else { "" };
            format!(" (at `{cut}{more}`)")
        }
        _ => String::new(),
    }
}

/// Most points (the cross product of the `[vary]` lists) one sweep plans.
pub const MAX_POINTS: usize = 10_000;

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
        let (pos, line) = e
            .span()
            .map(|s| {
                let (l, c) = config::line_col(&text, s.start);
                (format!(":{l}:{c}"), source_line(&text, l))
            })
            .unwrap_or_default();
        usage(format!(
            "{shown}{pos}: {}{line}",
            e.message().lines().collect::<Vec<_>>().join("; ")
        ))
    })?;
    file.slurm
        .check()
        .map_err(|e| usage(format!("{shown}: [slurm] {e}")))?;
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
    // Before any value is checked (each check loads a config): a list of a
    // million values would take minutes to refuse, and write a file per point.
    let points = vary.iter().fold(1usize, |n, (_, v)| match v {
        Value::Array(list) => n.saturating_mul(list.len()),
        _ => n,
    });
    if points > MAX_POINTS {
        let sizes: Vec<String> = vary
            .iter()
            .filter_map(|(k, v)| v.as_array().map(|l| format!("`{k}` {}", l.len())))
            .collect();
        return Err(usage(format!(
            "{shown}: [vary] makes {points} points ({}): at most {MAX_POINTS}; split the sweep",
            sizes.join(" x ")
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
        // The job study's files, absolute too (points are read from DIR/points/).
        if let Some(j) = &setup.jobs {
            let abs = |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            if let Some(p) = &j.profile_file {
                cfg.jobs.profile_file = abs(p).display().to_string();
            }
            if let Some(p) = &j.mtbf_file {
                cfg.jobs.node_mtbf_file = abs(p).display().to_string();
            }
        }
        let rel = point_file(id);
        let header = format!(
            // a comment line: the name escaped, never a line break
            "# exanet sweep {name:?} task {id}: {}\n",
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

pub use crate::results::{summarize, Row, SeriesSummary, RESULT_COLUMNS};

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

mod collect;
mod run;
pub use collect::{collect, table};
pub use run::{read_plan, run_local, run_task, write_slurm};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_options_sbatch_would_refuse_are_named() {
        for t in ["30", "30:00", "01:00:00", "2-0", "2-12:00", "1-00:00:00"] {
            assert!(slurm_time_ok(t), "{t}");
        }
        for t in ["", "00:05:00x", "1:2:3:4", "-1", "1-", "a", "1.5", "1-2-3"] {
            assert!(!slurm_time_ok(t), "{t}");
        }
        let with = |f: &dyn Fn(&mut SlurmOptions)| {
            let mut o = SlurmOptions::default();
            f(&mut o);
            o.check()
        };
        assert!(with(&|o| o.mem = Some("1500M".into())).is_ok());
        assert!(with(&|o| o.mem = Some("2G".into())).is_ok());
        for m in ["1.5G", "G", "0", "2GB", "-1G"] {
            let e = with(&|o| o.mem = Some(m.into())).unwrap_err();
            assert!(e.starts_with(&format!("mem = {m:?}")), "{e}");
        }
        let e = with(&|o| o.time = Some("1h".into())).unwrap_err();
        assert!(e.starts_with("time = \"1h\""), "{e}");
        let e = with(&|o| o.max_parallel = Some(0)).unwrap_err();
        assert!(e.starts_with("max_parallel = 0"), "{e}");
        let e = with(&|o| o.partition = Some("a b".into())).unwrap_err();
        assert!(e.starts_with("partition"), "{e}");
        // a line break would add a command to the script
        let e = with(&|o| o.extra = vec!["--qos=x\nrm -rf /".into()]).unwrap_err();
        assert!(e.starts_with("extra[0]"), "{e}");
        assert!(with(&|o| o.extra = vec!["--qos=short".into()]).is_ok());
    }

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
    }
}
