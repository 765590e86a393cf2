//! Running a sweep's tasks: one task from the files [`super::plan`] wrote, all of them
//! locally on threads, or as a Slurm array job.

use super::*;

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
    serde_json::from_str(&text).map_err(|e| {
        usage(format!(
            "{}: not a plan written by `exanet sweep` ({e}); plan the sweep again",
            p.display()
        ))
    })
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
        "#\n# exanet sweep {:?}: {n} task(s), one sweep point (or one saturation search) each.\n\
         # Submit with `sbatch {}/sweep.sbatch`; when all tasks are done, merge with\n\
         # `exanet sweep collect {}`. EXANET overrides the binary.\n\
         set -euo pipefail\n\
         EXANET=\"${{EXANET:-{}}}\"\n\
         exec \"$EXANET\" sweep task \"{}\" \"$SLURM_ARRAY_TASK_ID\"",
        // escaped: a line break in the name would end the comment
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_estimate_grows_with_the_network() {
        assert_eq!(mem_estimate(128), "1G");
        assert_eq!(mem_estimate(32 * 32 * 32), "2G");
    }
}
