//! `exanet sweep` end to end on reduced copies of the example sweeps: the
//! outputs (CSV, JSON, SVG, HTML), the saturation search, the Slurm script
//! (run here task by task without Slurm) and `collect` reproducing the local
//! table exactly, and errors in sweep files.

mod common;

use common::{exanet, repo, Run, EXE};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A usage error (exit 2) whose message holds `want`.
fn assert_refused(r: &Run, want: &str) {
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains(want), "want {want:?} in {}", r.stderr);
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A copy of `configs/sweeps/NAME` with the base made absolute, each
/// [vary] list cut by `cut(key, list)` and short simulations.
fn reduced(
    name: &str,
    dir: &Path,
    cut: impl Fn(&str, &[toml::Value]) -> Vec<toml::Value>,
) -> PathBuf {
    let src = repo().join("configs/sweeps").join(name);
    let mut t: toml::Table = toml::from_str(&read(&src)).unwrap();
    let base = repo()
        .join("configs/sweeps")
        .join(t["base"].as_str().unwrap());
    t.insert("base".into(), base.display().to_string().into());
    let set = t.get_mut("set").unwrap().as_table_mut().unwrap();
    set.insert("sim.warmup".into(), 500.into());
    set.insert("sim.measure".into(), 1500.into());
    set.insert("sim.drain".into(), 20_000.into());
    let vary = t.get_mut("vary").unwrap().as_table_mut().unwrap();
    for (k, v) in vary.iter_mut() {
        let list = v.as_array().unwrap().clone();
        *v = toml::Value::Array(cut(k, &list));
    }
    let p = dir.join(name);
    std::fs::write(&p, toml::to_string(&t).unwrap()).unwrap();
    p
}

fn vcs_buffers(dir: &Path) -> PathBuf {
    reduced("vcs-buffers-8x4x4.toml", dir, |k, l| match k {
        "traffic.pattern" => l.to_vec(),
        "router.buffer_flits" => vec![l[0].clone()],
        "traffic.rate" => vec![l[0].clone(), l[l.len() - 1].clone()],
        _ => l[..1].to_vec(),
    })
}

#[test]
fn vcs_buffers_sweep_writes_table_json_plots_and_page() {
    let d = tempfile::tempdir().unwrap();
    let sweep = vcs_buffers(d.path());
    let r = exanet(
        &[
            "sweep",
            sweep.to_str().unwrap(),
            "--jobs",
            "2",
            "--out",
            "o",
        ],
        d.path(),
    )
    .ok();
    assert!(
        r.stdout.contains("4 simulation(s), 2 series"),
        "{}",
        r.stdout
    );
    let o = d.path().join("o");
    let csv = read(&o.join("results.csv"));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 4, "{csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    for col in [
        "task",
        "series",
        "traffic.pattern",
        "router.vcs_per_class",
        "router.buffer_flits",
        "traffic.rate",
        "offered_flits",
        "accepted_flits",
        "offered_gbps",
        "accepted_gbps",
        "latency_avg_cycles",
        "latency_p50_cycles",
        "latency_p99_cycles",
        "latency_max_cycles",
        "latency_avg_ns",
        "hops",
        "saturated",
        "class0_latency_avg_cycles",
        "class1_accepted_flits",
    ] {
        assert!(header.contains(&col), "column {col} missing: {header:?}");
    }
    // 0.02 is far below saturation, 0.5 far above (8x4x4, 18-flit buffers)
    assert!(
        lines[1].starts_with(
            "0,\"pattern=uniform, vcs_per_class=2, buffer_flits=18\",uniform,2,18,0.02,"
        ),
        "{}",
        lines[1]
    );
    let sat = header.iter().position(|c| *c == "saturated").unwrap();
    let col = |l: &str, i: usize| -> String {
        // the series field is quoted and holds commas: split after it
        let rest = l.split_once("\",").unwrap().1;
        rest.split(',').nth(i - 2).unwrap().to_string()
    };
    assert_eq!(col(lines[1], sat), "false");
    assert_eq!(col(lines[2], sat), "true");

    let j: Value = serde_json::from_str(&read(&o.join("results.json"))).unwrap();
    assert_eq!(j["rows"].as_array().unwrap().len(), 4);
    let series = j["series"].as_array().unwrap();
    assert_eq!(series.len(), 2);
    for s in series {
        assert_eq!(s["reached"], true, "{s}");
        assert!(s["saturation_throughput"].as_f64().unwrap() > 0.02);
    }
    assert!(
        j["rows"][0]["result"].get("wall_s").is_none(),
        "timing only in timing.csv"
    );
    assert_eq!(read(&o.join("timing.csv")).lines().count(), 5);

    let lat = read(&o.join("latency.svg"));
    for w in [
        "<svg",
        "Average packet latency vs offered load",
        "offered load (flits/terminal/cycle; 1 flit/cycle = 20.0 Gb/s)",
        "average latency (cycles, log scale; 1 cycle = 6.40 ns)",
        // The legend names the keys once and lists each series' values.
        ">pattern, vcs_per_class, buffer_flits</text>",
        ">uniform, 2, 18</text>",
        ">tornado, 2, 18</text>",
        "class=\"saturation\"",
        "saturation point",
    ] {
        assert!(lat.contains(w), "latency.svg lacks {w:?}");
    }
    let thr = read(&o.join("throughput.svg"));
    for w in [
        "Accepted vs offered load",
        "accepted load (flits/terminal/cycle",
        "accepted = offered",
        ">pattern, vcs_per_class, buffer_flits</text>",
    ] {
        assert!(thr.contains(w), "throughput.svg lacks {w:?}");
    }
    let bars = read(&o.join("saturation.svg"));
    assert_eq!(bars.matches("class=\"bar\"").count(), 2);
    assert!(
        bars.contains("Saturation throughput per series")
            && bars.contains("saturation throughput (flits/terminal/cycle")
    );
    let page = read(&o.join("index.html"));
    for w in [
        "<img src=\"latency.svg\"",
        "<img src=\"throughput.svg\"",
        "<img src=\"saturation.svg\"",
        "<a href=\"results.csv\">",
        "Saturation per series",
        "<th>latency_avg_cycles</th>",
    ] {
        assert!(page.contains(w), "index.html lacks {w:?}");
    }
    assert_eq!(page.matches("<tr class=\"sat\">").count(), 2);
}

#[test]
fn torus_dims_saturation_search_bisects_the_rate() {
    let d = tempfile::tempdir().unwrap();
    let sweep = reduced("torus-dims.toml", d.path(), |_, l| l[..1].to_vec());
    // 4x4x4 only, 2 bisection steps
    let mut t: toml::Table = toml::from_str(&read(&sweep)).unwrap();
    t["saturation"]
        .as_table_mut()
        .unwrap()
        .insert("steps".into(), 2.into());
    std::fs::write(&sweep, toml::to_string(&t).unwrap()).unwrap();
    exanet(
        &["sweep", sweep.to_str().unwrap(), "-j", "1", "--out", "o"],
        d.path(),
    )
    .ok();
    let j: Value = serde_json::from_str(&read(&d.path().join("o/results.json"))).unwrap();
    let rows = j["rows"].as_array().unwrap();
    // hi (saturates), lo (does not), then 2 bisection steps
    let rates: Vec<f64> = rows
        .iter()
        .map(|r| r["result"]["rate"].as_f64().unwrap())
        .collect();
    assert_eq!(rates.len(), 4, "{rates:?}");
    let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert!(
        near(rates[0], 0.6) && near(rates[1], 0.02) && near(rates[2], 0.31),
        "{rates:?}"
    );
    let third = if rows[2]["result"]["saturated"] == true {
        0.165
    } else {
        0.455
    };
    assert!(near(rates[3], third), "{rates:?}");
    assert_eq!(rows[0]["result"]["saturated"], true);
    assert_eq!(rows[1]["result"]["saturated"], false);
    let s = &j["series"][0];
    assert_eq!(s["series"], "dims=4x4x4");
    assert_eq!(s["reached"], true);
    let csv = read(&d.path().join("o/results.csv"));
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .contains(",topology.dims,traffic.rate,"),
        "{csv}"
    );
    assert!(csv.contains(",\"[4, 4, 4]\",0.6,"), "{csv}");
}

#[test]
fn slurm_script_runs_each_point_and_collect_reproduces_the_local_table() {
    let d = tempfile::tempdir().unwrap();
    let sweep = vcs_buffers(d.path());
    let s = sweep.to_str().unwrap();
    exanet(&["sweep", s, "--jobs", "2", "--out", "local"], d.path()).ok();
    let r = exanet(&["sweep", s, "--slurm", "--out", "slurm"], d.path()).ok();
    assert!(r.stdout.contains("sbatch"), "{}", r.stdout);
    let dir = d.path().join("slurm");
    assert!(!dir.join("results.csv").exists(), "--slurm runs nothing");
    let script = read(&dir.join("sweep.sbatch"));
    let abs = std::fs::canonicalize(&dir).unwrap();
    for line in [
        "#!/bin/bash".to_string(),
        "#SBATCH --job-name=exanet-vcs-buffers-8x4x4".into(),
        "#SBATCH --array=0-3".into(),
        "#SBATCH --ntasks=1".into(),
        "#SBATCH --cpus-per-task=1".into(),
        "#SBATCH --mem=1G".into(),
        "#SBATCH --time=01:00:00".into(),
        format!("#SBATCH --output={}/logs/task-%a.out", abs.display()),
    ] {
        assert!(
            script.lines().any(|l| l == line),
            "{line:?} missing:\n{script}"
        );
    }
    // every #SBATCH line comes before the first command
    let first_cmd = script
        .lines()
        .position(|l| !l.starts_with('#') && !l.is_empty())
        .unwrap();
    assert!(script
        .lines()
        .skip(first_cmd)
        .all(|l| !l.starts_with("#SBATCH")));
    assert!(script.contains("sweep task"), "{script}");
    assert_eq!(std::fs::read_dir(dir.join("points")).unwrap().count(), 4);
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(dir.join("sweep.sbatch"))
        .status()
        .unwrap();
    assert!(syntax.success(), "bash -n sweep.sbatch");

    // not all tasks done: collect says which are missing
    let r = exanet(&["sweep", "collect", "slurm"], d.path());
    assert_refused(&r, "4 of 4 task(s) have no results yet (0, 1, 2, 3)");

    // what Slurm would do: run the script once per array index; after the
    // first, collect merges what finished and names what is missing
    for i in 0..4 {
        if i == 1 {
            let r = exanet(&["sweep", "collect", "slurm"], d.path()).ok();
            assert!(
                r.stderr
                    .contains("partial results: 3 of 4 task(s) have no results yet (1, 2, 3)"),
                "{}",
                r.stderr
            );
            assert!(read(&dir.join("index.html")).contains("Partial results:"));
        }
        let st = Command::new("bash")
            .arg(dir.join("sweep.sbatch"))
            .env("SLURM_ARRAY_TASK_ID", i.to_string())
            .env("EXANET", EXE)
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "task {i}: {}",
            String::from_utf8_lossy(&st.stderr)
        );
    }
    exanet(&["sweep", "collect", "slurm"], d.path()).ok();
    // The task results Slurm wrote are exanet's: planning again into the
    // folder replaces them without --force (none is collected twice).
    let again = exanet(&["sweep", s, "--slurm", "--out", "again"], d.path()).ok();
    assert!(again.stdout.contains("sbatch"));
    let local = d.path().join("local");
    for f in [
        "results.csv",
        "results.json",
        "latency.svg",
        "throughput.svg",
        "saturation.svg",
    ] {
        assert_eq!(
            read(&local.join(f)),
            read(&dir.join(f)),
            "{f}: collect of the Slurm tasks differs from the local run"
        );
    }
}

/// A sweep folder follows the output-folder rule: a user's file survives,
/// a non-empty folder no exanet wrote is refused, and a failed local run
/// leaves no partial task results behind.
#[test]
fn sweep_folders_keep_foreign_files_and_failed_runs_leave_nothing_half_written() {
    let d = tempfile::tempdir().unwrap();
    let sweep = reduced("vcs-buffers-8x4x4.toml", d.path(), |k, l| match k {
        "traffic.rate" => vec![l[0].clone()],
        _ => l[..1].to_vec(),
    });
    let s = sweep.to_str().unwrap();
    std::fs::create_dir_all(d.path().join("mine")).unwrap();
    std::fs::write(d.path().join("mine/notes.txt"), "keep\n").unwrap();
    let r = exanet(&["sweep", s, "--out", "mine"], d.path());
    assert_refused(
        &r,
        "is not empty and no exanet command wrote it (no .exanet-owned.json): notes.txt",
    );
    assert!(
        !d.path().join("mine/plan.json").exists(),
        "a refused sweep wrote"
    );

    // A folder of its own: run twice, the user's file added in between stays.
    exanet(&["sweep", s, "--out", "o"], d.path()).ok();
    std::fs::write(d.path().join("o/notes.txt"), "keep\n").unwrap();
    exanet(&["sweep", s, "--out", "o"], d.path()).ok();
    assert_eq!(read(&d.path().join("o/notes.txt")), "keep\n");
    // An edited report is refused, and backed up with --force.
    std::fs::write(d.path().join("o/index.html"), "<p>my notes</p>\n").unwrap();
    let r = exanet(&["sweep", s, "--out", "o"], d.path());
    assert_refused(&r, "index.html (edited since exanet wrote it)");
    let r = exanet(&["sweep", s, "--out", "o", "--force"], d.path()).ok();
    assert!(
        r.stderr.contains("--force: moved index.html to"),
        "{}",
        r.stderr
    );

    // A local run whose task fails: no tasks/ results, no staging left.
    let dir = d.path().join("f");
    let plan = exanet_gen::sweep::plan(&sweep, None, &[], &dir, false).unwrap();
    std::fs::write(dir.join(&plan.tasks[0].config), "[router]\nvcs = 1\n").unwrap();
    let e = exanet_gen::sweep::run_local(&dir, &plan, 1, &|_| {}).unwrap_err();
    assert!(format!("{e:#}").contains("task 0"), "{e:#}");
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !left
            .iter()
            .any(|f| f == "tasks" || f.starts_with(".exanet-staging")),
        "{left:?}"
    );
}

#[test]
fn malformed_sweep_files_name_the_key() {
    let d = tempfile::tempdir().unwrap();
    let cases: [(&str, &str); 7] = [
        ("vray = {}\n", "unknown field `vray`"),
        ("[vary]\n\"router.vcs\" = [2, 4]\n", "[vary] key `router.vcs` value 2: unknown key `vcs` in [router]"),
        ("[vary]\n\"router.buffer_flits\" = 32\n", "[vary] key `router.buffer_flits` must be a list of values"),
        ("[vary]\n\"traffic.pattern\" = [\"uniform\", 3]\n", "point 1 (traffic.pattern=3): traffic.pattern = \"3\": must be one of uniform"),
        ("[set]\n\"sim.mesure\" = 10\n[vary]\n\"traffic.rate\" = [0.1]\n", "[set] key `sim.mesure`: unknown key `mesure` in [sim]"),
        ("[vary]\n\"traffic.rate\" = [0.1]\n[saturation]\nlo = 0.1\n", "[saturation] searches traffic.rate itself"),
        ("[vary]\n\"router.buffer_flits\" = [8, 32]\n", "point 0 (router.buffer_flits=8): router.buffer_flits = 8: must hold one maximum packet"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let p = d.path().join(format!("bad{i}.toml"));
        std::fs::write(&p, text).unwrap();
        let r = exanet(&["sweep", p.to_str().unwrap(), "--out", "o"], d.path());
        assert_eq!(r.code, 2, "case {i}: {}{}", r.stdout, r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "case {i}: {}", r.stderr);
        assert!(
            r.stderr.contains(want),
            "case {i}: want {want:?} in {}",
            r.stderr
        );
        assert!(
            r.stderr.contains(&format!("bad{i}.toml")),
            "names the file: {}",
            r.stderr
        );
    }
    let r = exanet(&["sweep", "collect", "nowhere"], d.path());
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("nowhere/plan.json"), "{}", r.stderr);
}
