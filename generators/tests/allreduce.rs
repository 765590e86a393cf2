//! `exanet simulate` with `traffic.pattern = "allreduce"`: the workload runs
//! hardware and software on the timed network with every rank's result
//! checked, the report carries latency per rank count in cycles and µs and
//! the reduction, and bad `[allreduce]` keys are refused naming the key.

mod common;

use common::{num as f, simulate_json};
use serde_json::Value;
use std::path::Path;

fn exanet(args: &[&str], cwd: &Path) -> (i32, String, String) {
    let r = common::exanet(args, cwd);
    (r.code, r.stdout, r.stderr)
}

const SMALL: [&str; 6] = [
    "-P",
    "topology.dims=[4,2,2]",
    "-P",
    "traffic.pattern=allreduce",
    "-P",
    "allreduce.repetitions=2",
];

fn run_json(extra: &[&str], cwd: &Path) -> Value {
    let base: Vec<&str> = SMALL.iter().chain(extra).copied().collect();
    simulate_json(&base, &[], cwd)
}

#[test]
fn scaling_run_reports_every_rank_count_with_units_and_reduction() {
    let d = tempfile::tempdir().unwrap();
    let v = run_json(
        &[
            "-P",
            "allreduce.scaling=true",
            "-P",
            "allreduce.dtype=f32",
            "-P",
            "allreduce.count=64",
            // Software at 5 µs per message (781 cycles), far above the
            // engine's combining cost per step (two 128-byte chunks, about
            // 190 cycles at the default 15-cycle memory).
            "-P",
            "allreduce.sw_overhead_us=5",
        ],
        d.path(),
    );
    assert_eq!(v["clean"], true, "{v}");
    let rows = v["rows"].as_array().unwrap();
    let ranks: Vec<u64> = rows.iter().map(|r| r["ranks"].as_u64().unwrap()).collect();
    assert_eq!(ranks, [2, 4, 8, 16]);
    // 2 repetitions x (2 + 4 + 8 + 16) ranks, hardware and software
    assert_eq!(v["checked"].as_u64().unwrap(), 2 * 2 * 30);
    let mhz = f(&v["clock_mhz"]);
    let mut last = 0.0;
    for r in rows {
        let h = &r["hardware"];
        let s = &r["software"];
        let mean = f(&h["mean_cycles"]);
        assert!(mean > last, "latency grows with the rank count: {rows:?}");
        last = mean;
        assert!((f(&h["mean_us"]) - mean / mhz).abs() < 1e-9);
        assert!(f(&h["min_cycles"]) <= mean && mean <= f(&h["max_cycles"]));
        let red = f(&r["reduction_pct"]);
        let want = 100.0 * (1.0 - mean / f(&s["mean_cycles"]));
        assert!((red - want).abs() < 1e-9, "{r}");
        // Both pay the overhead once per collective at 2 ranks (one
        // step), where the engine's combining makes it the slower; from 2
        // steps on, software's overhead per step wins it the engine.
        if r["ranks"].as_u64().unwrap() == 2 {
            assert!(
                red < 0.0,
                "one step: software's overhead is paid once too: {r}"
            );
        } else {
            assert!(
                red > 0.0,
                "hardware beats software with 5 us per message: {r}"
            );
        }
    }
    // the text report names its units
    let mut a = vec!["simulate"];
    a.extend_from_slice(&SMALL);
    let (code, out, err) = exanet(&a, d.path());
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("mean us") && out.contains("reduction"),
        "{out}"
    );
    assert!(out.contains("all equal"), "{out}");
}

#[test]
fn a_non_power_of_two_box_under_background_traffic_is_exact() {
    let d = tempfile::tempdir().unwrap();
    let v = run_json(
        &[
            "-P",
            "allreduce.origin=[3,1,0]",
            "-P",
            "allreduce.extent=[3,1,2]",
            "-P",
            "allreduce.op=min",
            "-P",
            "allreduce.dtype=f64",
            "-P",
            "allreduce.count=100",
            "-P",
            "allreduce.threshold=64",
            "-P",
            "allreduce.background_rate=0.1",
        ],
        d.path(),
    );
    assert_eq!(v["clean"], true, "{v}");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["ranks"], 6);
    assert_eq!(v["checked"].as_u64().unwrap(), 2 * 2 * 6);
}

#[test]
fn bad_allreduce_keys_are_refused_naming_the_key() {
    let d = tempfile::tempdir().unwrap();
    for (flag, key) in [
        ("allreduce.op=avg", "allreduce.op"),
        ("allreduce.dtype=f16", "allreduce.dtype"),
        ("allreduce.mode=fast", "allreduce.mode"),
        ("allreduce.count=0", "allreduce.count"),
        ("allreduce.count=1000000", "allreduce.count"),
        ("allreduce.extent=[5,1,1]", "allreduce.extent"),
        ("allreduce.origin=[0,0]", "allreduce.origin"),
        ("allreduce.repetitions=0", "allreduce.repetitions"),
        ("allreduce.sw_overhead_us=-1.0", "allreduce.sw_overhead_us"),
        ("allreduce.background_rate=2.0", "allreduce.background_rate"),
        ("topology.local_ports=2", "topology.local_ports"),
    ] {
        let mut a = vec!["simulate"];
        a.extend_from_slice(&SMALL);
        a.extend_from_slice(&["-P", flag]);
        let (code, out, err) = exanet(&a, d.path());
        assert_eq!(code, 2, "{flag}: {out}{err}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{flag}: {err}");
        assert!(lines[0].contains(&format!("{key} =")), "{flag}: {err}");
    }
    // a bitwise op on a float type names the op
    let mut a = vec!["simulate"];
    a.extend_from_slice(&SMALL);
    a.extend_from_slice(&["-P", "allreduce.op=band", "-P", "allreduce.dtype=f32"]);
    let (code, _, err) = exanet(&a, d.path());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("allreduce.op = \"band\"") && err.contains("f32"),
        "{err}"
    );
    // an unknown key in [allreduce]
    let mut a = vec!["simulate"];
    a.extend_from_slice(&SMALL);
    a.extend_from_slice(&["-P", "allreduce.cont=3"]);
    let (code, _, err) = exanet(&a, d.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown key `cont` in [allreduce]"), "{err}");
}
