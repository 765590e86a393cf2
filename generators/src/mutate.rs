//! `exanet mutate BLOCK`: mutation analysis of a block's own bench.
//!
//! The point's emitted RTL is edited one mutant at a time
//! ([`exanet_tb::mutate`]: operators and skip rules), and each mutant is
//! co-simulated against the unchanged golden model by a child
//! `exanet cosim BLOCK --point P --rtl DIR` (a process of its own, so a
//! mutant that makes Verilator abort, e.g. a loop that no longer settles,
//! is a result, not a crash). Each mutant is:
//! - **killed**: the co-simulation found a mismatch, or the model failed
//!   while running;
//! - **survived**: the co-simulation ran clean: the bench cannot tell the
//!   mutant from the design (a stimulus or check hole, or an equivalent
//!   mutant);
//! - **invalid**: the mutant does not build.
//!
//! The kill rate is killed / (killed + survived).

use anyhow::{Context, Result};
use exanet_tb::blocks;
use exanet_tb::mutate::{self, Mutant, Operator, SKIP_RULES};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// What to run.
#[derive(Clone, Debug)]
pub struct MutateOptions {
    /// Block name (a bench of `exanet cosim`).
    pub block: String,
    /// Parameter point (default: the first of the block's matrix).
    pub point: Option<String>,
    /// Seed of the sample and of each co-simulation's stimulus.
    pub seed: u64,
    /// Mutants to run, a sample of all (0 = all of them).
    pub count: usize,
    /// Only mutants inside Verilog modules whose name contains this
    /// (e.g. `route_compute`); the sample is drawn from those.
    pub filter: Option<String>,
    /// Cycles of each co-simulation.
    pub cycles: u64,
    /// Mutants run at once.
    pub jobs: usize,
    /// Scratch folder (one sub-folder per mutant, removed after its run).
    pub work: PathBuf,
    /// The `exanet` binary the children run.
    pub exe: PathBuf,
}

/// How a mutant fared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Killed,
    Survived,
    Invalid,
}

/// One mutant's run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MutantRun {
    /// Its number in the sample.
    pub id: usize,
    pub mutant: Mutant,
    pub verdict: Verdict,
    /// Why: the first mismatch, the failure, or the build error (one line).
    pub detail: String,
}

/// The whole analysis (also written as JSON).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MutationReport {
    pub block: String,
    pub point: String,
    pub seed: u64,
    pub cycles: u64,
    /// Mutants the operators produced (inside the modules `filter`
    /// names, when given), before sampling.
    pub candidates: usize,
    /// The `--filter` on Verilog module names, if any.
    #[serde(default)]
    pub filter: Option<String>,
    /// Per operator, candidates (name, count).
    pub per_operator: Vec<(Operator, usize)>,
    /// Lines skipped per rule (name, lines, why).
    pub skipped: Vec<(String, usize, String)>,
    pub killed: usize,
    pub survived: usize,
    pub invalid: usize,
    /// killed / (killed + survived), 1 when nothing ran.
    pub kill_rate: f64,
    pub runs: Vec<MutantRun>,
}

impl MutationReport {
    /// The survivors.
    pub fn survivors(&self) -> impl Iterator<Item = &MutantRun> {
        self.runs.iter().filter(|r| r.verdict == Verdict::Survived)
    }

    /// The one-screen summary `exanet mutate` prints.
    pub fn summary(&self) -> String {
        let within = match &self.filter {
            Some(f) => format!(" in modules matching `{f}`"),
            None => String::new(),
        };
        let mut s = format!(
            "mutate {} [{}]: {} of {} candidate mutants{within} run ({} cycles, seed {}): {} killed, {} survived, {} invalid; kill rate {:.1} %\n",
            self.block,
            self.point,
            self.runs.len(),
            self.candidates,
            self.cycles,
            self.seed,
            self.killed,
            self.survived,
            self.invalid,
            100.0 * self.kill_rate
        );
        for r in self.survivors() {
            s += &format!(
                "  survived #{} {:?} at {}\n    {}\n",
                r.id,
                r.mutant.op,
                r.mutant.location(),
                r.mutant.diff().replace('\n', "\n    ")
            );
        }
        s += "  skipped by rule:";
        for (rule, n, _) in &self.skipped {
            s += &format!(" {rule} {n} lines;");
        }
        s.pop();
        s
    }
}

/// Run the analysis; `done(run)` after each mutant (progress).
pub fn run(o: &MutateOptions, done: &(dyn Fn(&MutantRun) + Sync)) -> Result<MutationReport> {
    let info = blocks::find(&o.block).map_err(|e| crate::error::usage(e.to_string()))?;
    let bench = match &o.point {
        Some(t) => {
            (info.point)(t).map_err(|e| crate::error::usage(format!("--point {t}: {e:#}")))?
        }
        None => (info.matrix)()
            .into_iter()
            .next()
            .ok_or_else(|| anyhow::anyhow!("block `{}` has no co-simulation points", o.block))?,
    };
    let point = bench.point();
    let emitted = bench
        .emit()
        .with_context(|| format!("emitting {} [{point}]", o.block))?;
    let (all, skipped) = mutate::mutants(&emitted);
    let all = match &o.filter {
        Some(f) => {
            let kept = mutate::filter_modules(&emitted, all, f);
            if kept.is_empty() {
                return Err(crate::error::usage(format!(
                    "--filter {f}: no mutant of {} [{point}] lies in a Verilog module whose name contains `{f}`",
                    o.block
                )));
            }
            kept
        }
        None => all,
    };
    let mut per_operator: Vec<(Operator, usize)> = Vec::new();
    for m in &all {
        match per_operator.iter_mut().find(|(op, _)| *op == m.op) {
            Some(e) => e.1 += 1,
            None => per_operator.push((m.op, 1)),
        }
    }
    let chosen = mutate::sample(&all, o.count, o.seed);
    std::fs::create_dir_all(&o.work).with_context(|| format!("creating {}", o.work.display()))?;
    let next = AtomicUsize::new(0);
    let runs = Mutex::new(Vec::new());
    let first_error = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..o.jobs.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(m) = chosen.get(i) else { break };
                match run_one(o, &point, &emitted, i, m) {
                    Ok(r) => {
                        done(&r);
                        runs.lock().expect("runs").push(r);
                    }
                    Err(e) => {
                        first_error.lock().expect("error").get_or_insert(e);
                        break;
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().expect("error") {
        return Err(e);
    }
    let mut runs = runs.into_inner().expect("runs");
    runs.sort_by_key(|r| r.id);
    let count = |v: Verdict| runs.iter().filter(|r| r.verdict == v).count();
    let (killed, survived, invalid) = (
        count(Verdict::Killed),
        count(Verdict::Survived),
        count(Verdict::Invalid),
    );
    Ok(MutationReport {
        block: o.block.clone(),
        point,
        seed: o.seed,
        cycles: o.cycles,
        candidates: all.len(),
        filter: o.filter.clone(),
        per_operator,
        skipped: skipped
            .iter()
            .map(|(rule, n)| {
                let why = SKIP_RULES
                    .iter()
                    .find(|(r, _)| r == rule)
                    .map_or("", |(_, w)| *w);
                (rule.to_string(), *n, why.to_string())
            })
            .collect(),
        killed,
        survived,
        invalid,
        kill_rate: if killed + survived == 0 {
            1.0
        } else {
            killed as f64 / (killed + survived) as f64
        },
        runs,
    })
}

/// Mutant `id`: write its RTL, co-simulate it in a child `exanet cosim`,
/// classify the outcome; its folder is removed afterwards.
fn run_one(
    o: &MutateOptions,
    point: &str,
    emitted: &exanet_hdl::emit::Emitted,
    id: usize,
    m: &Mutant,
) -> Result<MutantRun> {
    let dir = o.work.join(format!("mutant-{id:04}"));
    let rtl = dir.join("rtl");
    mutate::apply(emitted, m).write_dir(&rtl)?;
    let out = Command::new(&o.exe)
        .args([
            "cosim",
            &o.block,
            "--point",
            point,
            "--no-waveform",
            "--force",
        ])
        .arg("--rtl")
        .arg(&rtl)
        .arg("--fail-dir")
        .arg(dir.join("fail"))
        .args([
            "--cycles",
            &o.cycles.to_string(),
            "--seed",
            &o.seed.to_string(),
        ])
        .output()
        .with_context(|| format!("running {}", o.exe.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (verdict, detail) = classify(out.status.code(), &stdout, &stderr);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(MutantRun {
        id,
        mutant: m.clone(),
        verdict,
        detail,
    })
}

/// A child co-simulation's outcome: exit 0 is a clean run (survived); a
/// build error of the model is invalid; anything else (exit 1 with a
/// mismatch, an error while running, a signal) is killed.
fn classify(code: Option<i32>, stdout: &str, stderr: &str) -> (Verdict, String) {
    let first = |t: &str, pat: &str| {
        t.lines()
            .find(|l| l.contains(pat))
            .unwrap_or_else(|| t.lines().next().unwrap_or(""))
            .trim()
            .chars()
            .take(300)
            .collect::<String>()
    };
    match code {
        Some(0) => (Verdict::Survived, "clean run".into()),
        _ if stderr.contains("building model") => {
            (Verdict::Invalid, first(stderr, "building model"))
        }
        Some(1) if stdout.contains("MISMATCH") => {
            let field = |name: &str| {
                stdout
                    .lines()
                    .find_map(|l| l.trim().strip_prefix(name))
                    .unwrap_or("?")
                    .trim()
                    .to_string()
            };
            (
                Verdict::Killed,
                format!(
                    "mismatch on {} at cycle {}",
                    field("port:"),
                    field("cycle:")
                ),
            )
        }
        Some(c) => (
            Verdict::Killed,
            format!("exit {c}: {}", first(&format!("{stderr}{stdout}"), "error")),
        ),
        None => (Verdict::Killed, "the model aborted (signal)".into()),
    }
}

/// Write the report as JSON to `path`.
pub fn write_json(r: &MutationReport, path: &Path) -> Result<()> {
    let text = serde_json::to_string_pretty(r)?;
    crate::outdir::write_atomic(path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_classified() {
        assert_eq!(classify(Some(0), "ok", "").0, Verdict::Survived);
        let (v, d) = classify(
            Some(1),
            "fifo [w=8]: 12 cycles\nMISMATCH fifo [w=8]\n  cycle:    11\n  port:     dout\n",
            "",
        );
        assert_eq!(
            (v, d.as_str()),
            (Verdict::Killed, "mismatch on dout at cycle 11")
        );
        let (v, d) = classify(
            Some(1),
            "",
            "error: building model `exanet_fifo`: %Error: x",
        );
        assert_eq!(v, Verdict::Invalid, "{d}");
        assert_eq!(classify(None, "", "").0, Verdict::Killed);
        assert_eq!(
            classify(Some(2), "", "error: run failed").0,
            Verdict::Killed
        );
    }
}
