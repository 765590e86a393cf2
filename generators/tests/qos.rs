//! `exanet simulate` with `traffic.pattern = "qos"`: a storage-like and an
//! MPI-like stream on the two priority classes through the golden routers
//! and links; per-class load and latency, strict priority visible in the
//! p99, bad `[qos]` keys refused naming the key.

mod common;

use common::{num as f, repo, simulate_json};
use serde_json::Value;

fn exanet(args: &[&str]) -> (i32, String, String) {
    let r = common::exanet(args, &repo());
    (r.code, r.stdout, r.stderr)
}

fn run(extra: &[&str]) -> Value {
    let base = [
        "-P",
        "topology.dims=[4,2,2]",
        "-P",
        "traffic.pattern=qos",
        "-P",
        "sim.measure=3000",
    ];
    simulate_json(&base, extra, &repo())
}

fn class(v: &Value, c: u64) -> &Value {
    v["per_class"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["class"].as_u64() == Some(c))
        .unwrap_or_else(|| panic!("no class {c}: {v}"))
}

#[test]
fn each_stream_rides_its_class_and_priority_shows_in_the_p99() {
    // storage on class 0 near saturation, MPI on class 1
    let v = run(&[
        "qos.storage_rate=0.35",
        "qos.mpi_rate=0.02",
        "qos.mpi_bytes=16",
    ]);
    let (s, m) = (class(&v, 0), class(&v, 1));
    assert!((f(&s["offered_flits"]) - 0.35).abs() < 0.03, "{s}");
    assert!((f(&m["offered_flits"]) - 0.02).abs() < 0.005, "{m}");
    let (ps, pm) = (
        f(&s["latency_cycles"]["p99"]),
        f(&m["latency_cycles"]["p99"]),
    );
    assert!(
        pm < ps,
        "MPI p99 {pm} should beat storage p99 {ps} under strict priority"
    );
    // the same loads with the classes swapped: storage now has priority
    let w = run(&[
        "qos.storage_rate=0.35",
        "qos.mpi_rate=0.02",
        "qos.mpi_bytes=16",
        "qos.storage_class=1",
    ]);
    let m0 = f(&class(&w, 0)["latency_cycles"]["p99"]);
    assert!(m0 > pm, "MPI p99 with priority {pm} vs without {m0}");
    // no storage: only the MPI class carries packets
    let z = run(&["qos.storage_rate=0"]);
    assert_eq!(class(&z, 0)["packets"].as_u64(), Some(0));
    assert!(class(&z, 1)["packets"].as_u64().unwrap() > 0);
}

#[test]
fn bad_qos_keys_are_refused_naming_the_key() {
    for (set, want) in [
        (
            "qos.storage_class=2",
            "qos.storage_class = 2: must be 0 or 1",
        ),
        (
            "qos.mpi_bytes=1000",
            "qos.mpi_bytes = 1000: must be 0..=256",
        ),
        (
            "qos.storage_rate=1.5",
            "qos.storage_rate = 1.5: must be 0..=1",
        ),
        (
            "qos.storage_nodes=[99]",
            "qos.storage_nodes = [99]: must be node indices below 16",
        ),
        (
            "router.classes=1",
            "traffic.pattern = \"qos\": needs router.classes = 2",
        ),
    ] {
        let (code, out, err) = exanet(&[
            "simulate",
            "-P",
            "topology.dims=[4,2,2]",
            "-P",
            "traffic.pattern=qos",
            "-P",
            set,
        ]);
        assert_eq!(code, 2, "{set}: {out}{err}");
        assert!(err.contains(want), "{set}: {err}");
    }
}
