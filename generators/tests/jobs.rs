//! `exanet simulate` with `traffic.pattern = "jobs"`: every profile runs
//! under every placement, topology-aware placement beats linear on bytes x
//! hops and batch time, failure-aware beats linear with fragile nodes,
//! jobs on failing nodes or dead links are aborted and re-queued (never
//! silently completed), and bad files and keys are refused naming the
//! line, field or key.

mod common;

use common::{int as u, num as f, repo, simulate_json};
use serde_json::Value;

fn exanet(args: &[&str]) -> (i32, String, String) {
    let r = common::exanet(args, &repo());
    (r.code, r.stdout, r.stderr)
}

/// A short batch: 6 jobs of 20 iterations.
fn run(extra: &[&str]) -> Value {
    let base = [
        "-P",
        "traffic.pattern=jobs",
        "-P",
        "jobs.count=6",
        "-P",
        "jobs.iterations=20",
        "-P",
        "jobs.search_iterations=3000",
    ];
    simulate_json(&base, extra, &repo())
}

#[test]
fn every_profile_runs_under_every_placement() {
    for profile in [
        vec!["jobs.profile=halo"],
        vec!["jobs.profile=dataflow"],
        vec!["jobs.profile=allreduce"],
        vec![
            "jobs.profile=file",
            "jobs.profile_file=configs/jobs/halo-16.csv",
        ],
    ] {
        for placement in ["linear", "random", "topology", "failure"] {
            let p = format!("jobs.placement={placement}");
            let mut extra = profile.clone();
            extra.push(&p);
            let v = run(&extra);
            assert_eq!(v["placement"], placement);
            assert_eq!(u(&v["completed"]), 6, "{extra:?}: {v}");
            assert_eq!(u(&v["runs"]), 6);
            assert_eq!(f(&v["aborted_ratio"]), 0.0);
            assert!(f(&v["completion_s"]) > 0.0);
            let log = v["runs_log"].as_array().unwrap();
            assert!(log.iter().all(|r| r["outcome"] == "completed"));
            if profile[0].ends_with("file") {
                assert!(log.iter().all(|r| u(&r["ranks"]) == 16));
            }
        }
    }
}

#[test]
fn topology_aware_beats_linear_on_bytes_hops_and_run_time() {
    for profile in ["halo", "dataflow"] {
        let p = format!("jobs.profile={profile}");
        // Run times as if alone: topology-aware placement minimises the
        // job's own bytes x hops and ignores the links of the jobs already
        // running, so with the contention term a halo's run can come out
        // longer than linear's (BENCHMARKS.md "Job studies").
        let lin = run(&[&p, "jobs.placement=linear", "jobs.contention=false"]);
        let top = run(&[&p, "jobs.placement=topology", "jobs.contention=false"]);
        let (bl, bt) = (f(&lin["mean_bytes_hops"]), f(&top["mean_bytes_hops"]));
        assert!(
            bt < 0.8 * bl,
            "{profile}: bytes x hops topology {bt} vs linear {bl}"
        );
        // the run time of a job, not the batch's (which also depends on packing)
        let (cl, ct) = (f(&lin["mean_run_s"]), f(&top["mean_run_s"]));
        assert!(
            ct < cl,
            "{profile}: job run time topology {ct} vs linear {cl}"
        );
    }
}

/// Failure-aware placement keeps jobs off the fragile nodes whenever the
/// queue leaves a choice: fewer aborts than linear and topology-aware, and a
/// shorter batch than linear (topology-aware, with more aborts but fewer
/// bytes x hops, may still finish first: see BENCHMARKS.md).
#[test]
fn failure_aware_beats_linear_and_aborts_least_with_fragile_nodes() {
    let common = [
        "jobs.profile=mixed",
        "jobs.count=24",
        "jobs.iterations=200",
        "jobs.node_mtbf_s=2000",
        "jobs.node_mtbf_file=configs/jobs/fragile-nodes-8x4x4.csv",
    ];
    let with = |p: &str| {
        let mut e = common.to_vec();
        e.push(p);
        run(&e)
    };
    let lin = with("jobs.placement=linear");
    let top = with("jobs.placement=topology");
    let fa = with("jobs.placement=failure");
    for (name, other) in [("linear", &lin), ("topology", &top)] {
        assert!(
            f(&fa["aborted_ratio"]) < f(&other["aborted_ratio"]),
            "aborted ratio failure {} vs {name} {}",
            fa["aborted_ratio"],
            other["aborted_ratio"]
        );
    }
    assert!(
        f(&fa["completion_s"]) < f(&lin["completion_s"]),
        "batch time failure {} vs linear {}",
        fa["completion_s"],
        lin["completion_s"]
    );
    // same seed, same study
    let again = with("jobs.placement=failure");
    assert_eq!(fa["runs_log"], again["runs_log"]);
}

#[test]
fn jobs_on_failing_nodes_or_dead_links_are_requeued_never_completed() {
    let d = tempfile::tempdir().unwrap();
    let mtbf = d.path().join("m.csv");
    std::fs::write(&mtbf, "node,mtbf_s\n0,0.000001\n").unwrap();
    let m = format!("jobs.node_mtbf_file={}", mtbf.display());
    // one job on every node; node 0 fails within a microsecond of each start
    let v = run(&[
        "jobs.count=1",
        "jobs.ranks=[128]",
        "jobs.max_attempts=4",
        "jobs.repair_s=0.001",
        &m,
    ]);
    assert_eq!(
        (u(&v["completed"]), u(&v["given_up"]), u(&v["runs"])),
        (0, 1, 4),
        "{v}"
    );
    assert_eq!(u(&v["aborted_node"]), 4);
    for r in v["runs_log"].as_array().unwrap() {
        assert_eq!(r["outcome"], "node 0 failed", "{r}");
        assert!(f(&r["end_s"]) - f(&r["start_s"]) < 1e-3);
    }
    // a dead link on linear placement's path: aborted each time; failure-aware goes around it
    let dead = [
        "jobs.count=1",
        "jobs.ranks=[8]",
        "jobs.max_attempts=3",
        "jobs.dead_links=[\"0:x+\"]",
    ];
    let mut e = dead.to_vec();
    e.push("jobs.placement=linear");
    let v = run(&e);
    assert_eq!(
        (u(&v["completed"]), u(&v["given_up"]), u(&v["aborted_link"])),
        (0, 1, 3),
        "{v}"
    );
    assert!(v["runs_log"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["outcome"] == "dead link"));
    e.pop();
    e.push("jobs.placement=failure");
    let v = run(&e);
    assert_eq!((u(&v["completed"]), u(&v["aborted_link"])), (1, 0), "{v}");
    // failing cables abort the jobs running over them
    let v = run(&[
        "jobs.link_mtbf_s=1",
        "jobs.repair_s=0.001",
        "jobs.placement=topology",
    ]);
    assert!(
        u(&v["link_failures"]) > 0 && u(&v["aborted_link"]) > 0,
        "{v}"
    );
    assert_eq!(u(&v["aborted_node"]), 0);
    assert!(v["runs_log"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["outcome"].as_str().unwrap().ends_with("failed")
            && r["outcome"].as_str().unwrap().starts_with("link ")));
}

#[test]
fn malformed_profile_files_are_refused_naming_line_and_field() {
    let d = tempfile::tempdir().unwrap();
    let csv = d.path().join("bad.csv");
    std::fs::write(&csv, "ranks,4\nphase,src,dst,bytes\n0,0,1,64\n0,1,9,64\n").unwrap();
    let json = d.path().join("bad.json");
    std::fs::write(
        &json,
        "{\"ranks\": 4,\n \"phases\": [[{\"src\": 0, \"dst\": 1, \"bytes\": -3}]]}",
    )
    .unwrap();
    let missing = d.path().join("no-such-file.csv");
    for (file, want) in [
        (
            &csv,
            "bad.csv:4: field `dst`: 9 is not below ranks = 4".to_string(),
        ),
        (&json, "bad.json:2:".to_string()),
        (&missing, "cannot read ".to_string()),
    ] {
        let p = format!("jobs.profile_file={}", file.display());
        let (code, out, err) = exanet(&[
            "simulate",
            "-P",
            "traffic.pattern=jobs",
            "-P",
            "jobs.profile=file",
            "-P",
            &p,
        ]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains("jobs.profile_file = "), "{err}");
        assert!(err.contains(&want), "{err}");
    }
}

#[test]
fn bad_jobs_keys_are_refused_naming_the_key() {
    for (set, want) in [
        (
            "jobs.placement=slurm",
            "jobs.placement = \"slurm\": must be one of linear, random, topology, failure",
        ),
        (
            "jobs.ranks=[1]",
            "jobs.ranks = [1]: must be a non-empty list of rank counts 2..=128",
        ),
        ("jobs.ranks=[129]", "jobs.ranks = [129]"),
        (
            "jobs.dead_links=[\"0:w+\"]",
            "port \"w+\" is none of x+, x-, y+, y-, z+, z-",
        ),
        ("jobs.node_mtbf_s=-1", "jobs.node_mtbf_s = -1"),
        ("jobs.count=0", "jobs.count = 0: must be 1..=100000"),
        (
            "jobs.profile=lammps",
            "jobs.profile = \"lammps\": must be one of halo, dataflow, allreduce, mixed, file",
        ),
        (
            "jobs.profile=file",
            "jobs.profile_file = \"\": profile = \"file\" needs a CSV or JSON profile file",
        ),
        ("jobs.max_attempts=0", "jobs.max_attempts = 0: must be 1..=1000"),
        ("jobs.link_mtbf_s=-2", "jobs.link_mtbf_s = -2"),
        (
            "jobs.queue=sjf",
            "jobs.queue = \"sjf\": must be one of fcfs, backfill",
        ),
        ("jobs.count=100001", "jobs.count = 100001: must be 1..=100000"),
        ("jobs.iterations=0", "jobs.iterations = 0: must be >= 1"),
        ("jobs.bytes=0", "jobs.bytes = 0: must be 1..=2^40"),
        (
            "jobs.compute_us=-1",
            "jobs.compute_us = -1: must be a finite number >= 0",
        ),
        (
            "jobs.compute_us=nan",
            "jobs.compute_us = NaN: must be a finite number >= 0",
        ),
        (
            "jobs.failure_weight=-1",
            "jobs.failure_weight = -1: must be a finite number >= 0",
        ),
        (
            "jobs.repair_s=-1",
            "jobs.repair_s = -1: must be a finite number >= 0",
        ),
        (
            "jobs.search_iterations=10000001",
            "jobs.search_iterations = 10000001: must be 0..=10000000",
        ),
        (
            "jobs.max_attempts=1001",
            "jobs.max_attempts = 1001: must be 1..=1000",
        ),
        (
            "jobs.dead_links=[\"999:x+\"]",
            "jobs.dead_links = [\"999:x+\"]: \"999:x+\": node 999 is not below 128 nodes",
        ),
        (
            "jobs.node_mtbf_file=no-such-file.csv",
            "jobs.node_mtbf_file = \"no-such-file.csv\": cannot read no-such-file.csv",
        ),
        (
            "jobs.node_mtbf_file=configs/jobs/halo-16.csv",
            "jobs.node_mtbf_file = \"configs/jobs/halo-16.csv\": configs/jobs/halo-16.csv:5: field `node`: \"ranks\" is not a node index",
        ),
        (
            "jobs.count=many",
            "key `jobs.count`: expected an integer, found a string",
        ),
        (
            "jobs.contention=1",
            "key `jobs.contention`: expected a boolean",
        ),
        ("jobs.speed=1", "unknown key `speed` in [jobs]"),
    ] {
        let (code, out, err) = exanet(&["simulate", "-P", "traffic.pattern=jobs", "-P", set]);
        assert_eq!(code, 2, "{set}: {out}{err}");
        assert!(err.contains(want), "{set}: {err}");
    }
}

/// A batch that meets failures far more often than it is long is refused
/// (exit 2, naming the MTBF keys) instead of running without end: node 5
/// fails every nanosecond, failure-aware placement keeps the one job off
/// it, so nothing else ends the batch.
#[test]
fn endless_failures_are_refused_naming_the_keys() {
    let d = tempfile::tempdir().unwrap();
    let mtbf = d.path().join("m.csv");
    std::fs::write(&mtbf, "5,0.000000001\n").unwrap();
    let m = format!("jobs.node_mtbf_file={}", mtbf.display());
    let (code, out, err) = exanet(&[
        "simulate",
        "-P",
        "traffic.pattern=jobs",
        "-P",
        "jobs.count=1",
        "-P",
        "jobs.ranks=[8]",
        "-P",
        "jobs.repair_s=0",
        "-P",
        "jobs.placement=failure",
        "-P",
        &m,
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("more than 2000000 node and cable failures by ")
            && err.contains("(jobs.node_mtbf_s, jobs.node_mtbf_file, jobs.link_mtbf_s)"),
        "{err}"
    );
}

/// `jobs.queue = "backfill"`: with jobs of 64, 100 and 16 ranks in turn on
/// 128 nodes, the 100-rank job waits behind the first 64-rank one; under
/// FCFS every later job waits with it, under backfill the 16-rank job
/// behind it starts at once. Both batches complete every job, the report
/// names the queue.
#[test]
fn backfill_starts_a_small_job_behind_a_waiting_head() {
    let q = |queue: &str| {
        run(&[
            "jobs.count=3",
            "jobs.ranks=[64,100,16]",
            &format!("jobs.queue={queue}"),
        ])
    };
    let (fcfs, easy) = (q("fcfs"), q("backfill"));
    let start = |v: &Value, j: u64| {
        let log = v["runs_log"].as_array().unwrap();
        f(&log.iter().find(|r| u(&r["job"]) == j).unwrap()["start_s"])
    };
    assert_eq!(
        (fcfs["queue"].as_str(), easy["queue"].as_str()),
        (Some("fcfs"), Some("backfill"))
    );
    assert_eq!((u(&fcfs["completed"]), u(&easy["completed"])), (3, 3));
    assert!(
        start(&fcfs, 1) > 0.0 && start(&fcfs, 2) >= start(&fcfs, 1),
        "{fcfs}"
    );
    assert_eq!(start(&easy, 2), 0.0, "{easy}");
    assert!(start(&easy, 1) <= start(&fcfs, 1), "{easy}\n{fcfs}");
}

/// `simulate --validate`: one job's iterations through the flow model and
/// through the cycle-level golden network (framed links).
fn validate(extra: &[&str]) -> Value {
    let base = [
        "--validate",
        "-P",
        "traffic.pattern=jobs",
        "-P",
        "jobs.compute_us=0",
    ];
    simulate_json(&base, extra, &repo())
}

/// The flow model's iteration time agrees with the cycle-level network
/// within the tolerance BENCHMARKS.md "Job studies" documents for
/// bandwidth-bound phases (16 KiB messages): 5 %. The phases are checked
/// one by one too, so an error that cancels over an iteration still fails.
#[test]
fn flow_model_agrees_with_the_cycle_level_network() {
    for profile in ["halo", "dataflow"] {
        let p = format!("jobs.profile={profile}");
        let v = validate(&[
            "topology.dims=[4,4,4]",
            &p,
            "jobs.count=1",
            "jobs.ranks=[64]",
            "jobs.iterations=2",
            "jobs.bytes=16384",
        ]);
        let j = &v["jobs"][0];
        assert_eq!(u(&j["ranks"]), 64, "{v}");
        assert!(u(&j["packets"]) > 10_000, "{v}");
        let e = f(&j["error_pct"]);
        assert!(e.abs() < 5.0, "{profile}: flow vs cycle level {e} %: {v}");
        let (pf, pc) = (
            j["phases_flow_us"].as_array().unwrap(),
            j["phases_cycle_us"].as_array().unwrap(),
        );
        assert_eq!(pf.len(), pc.len());
        for (a, b) in pf.iter().zip(pc) {
            let (a, b) = (f(a), f(b));
            assert!(
                (a - b).abs() < 0.08 * b,
                "{profile}: phase flow {a} vs cycle {b} us: {v}"
            );
        }
    }
    // without the job pattern, --validate says what it needs
    let (code, _, err) = exanet(&["simulate", "--validate"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--validate checks the job model: it needs traffic.pattern = \"jobs\""),
        "{err}"
    );
}

/// Two 32-rank halos on 4x4x4: linear placement puts them on separate
/// halves (no shared link: times as alone, in both models); random
/// placement interleaves them, and both the flow model's contention term
/// and the cycle-level network make them slower than alone, by amounts that
/// agree within the tolerance BENCHMARKS.md "Job studies" documents.
#[test]
fn jobs_sharing_links_slow_down_and_separating_them_removes_it() {
    let base = [
        "topology.dims=[4,4,4]",
        "jobs.profile=halo",
        "jobs.ranks=[32]",
        "jobs.iterations=2",
        "jobs.bytes=16384",
    ];
    let with = |extra: &[&str]| {
        let mut e = base.to_vec();
        e.extend_from_slice(extra);
        validate(&e)
    };
    let lin = with(&["jobs.count=2", "jobs.placement=linear"]);
    for j in lin["jobs"].as_array().unwrap() {
        assert_eq!(f(&j["flow_us"]), f(&j["flow_alone_us"]), "{lin}");
        assert!(f(&j["error_pct"]).abs() < 5.0, "{lin}");
    }
    let rnd = with(&["jobs.count=2", "jobs.placement=random"]);
    let alone = with(&["jobs.count=1", "jobs.placement=random"]);
    let (j0, a0) = (&rnd["jobs"][0], &alone["jobs"][0]);
    assert_eq!(j0["nodes"], a0["nodes"], "same first placement");
    // both models: slower beside the other job
    assert!(f(&j0["flow_us"]) > 1.05 * f(&j0["flow_alone_us"]), "{rnd}");
    assert!(
        f(&j0["cycle_us"]) > 1.05 * f(&a0["cycle_us"]),
        "{rnd}\n{alone}"
    );
    for j in rnd["jobs"].as_array().unwrap() {
        assert!(f(&j["error_pct"]).abs() < 20.0, "{rnd}");
    }
    // without the contention term the flow model misses the slowdown
    let off = with(&[
        "jobs.count=2",
        "jobs.placement=random",
        "jobs.contention=false",
    ]);
    assert_eq!(
        f(&off["jobs"][0]["flow_us"]),
        f(&j0["flow_alone_us"]),
        "{off}"
    );
    assert!(
        f(&off["jobs"][0]["error_pct"]).abs() > f(&j0["error_pct"]).abs(),
        "{off}"
    );
}
