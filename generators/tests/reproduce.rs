//! `exanet reproduce --quick` end to end: RTL co-simulation of node tops
//! (the 2-node run shares the Verilator build of `exanet-tb`'s node test:
//! same point, same cache under target/; the 10-node ring is its own
//! build of about two minutes), the table's consistency rules, JSON and
//! Markdown agreeing, and the output-folder rules. The table's own rules
//! on made-up runs are unit tests in `exanet_gen::reproduce`.

mod common;

use common::repo;
use serde_json::Value;
use std::process::Command;

/// Run exanet from the workspace root (its Verilator cache is the node
/// tests' one, target/exanet-cache).
fn exanet(args: &[&str]) -> (i32, String, String) {
    let r = common::exanet(args, &repo());
    (r.code, r.stdout, r.stderr)
}

fn verilator_missing() -> bool {
    if Command::new("verilator").arg("--version").output().is_err() {
        println!("ignored: verilator not installed");
        return true;
    }
    false
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// `-P link.latency_ns=25.6`: 4 user cycles of 6.4 ns, the node test's
/// `phy_latency=4`, so the 2-node RTL is the node test's build.
const SHARED_PHY: &str = "link.latency_ns=25.6";

/// The 2-node run shares the node test's Verilator build; the 5-hop run
/// needs its own build of a 10-node ring (the router's route compute is
/// compiled for the ring's size, so no other test's build serves it).
/// Since the node takes its coordinates on straps and models compile at
/// `-O1`, that build is about 2 minutes on the 2 cores (the whole test:
/// 114 s with it, ~12 s with both builds cached; `BENCHMARKS.md`,
/// "`exanet reproduce`", Cost), so it runs in the normal suite.
#[test]
fn quick_table_is_complete_and_consistent() {
    if verilator_missing() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("rep");
    let o = out.to_str().unwrap();
    let t0 = std::time::Instant::now();
    let (code, stdout, stderr) = exanet(&["reproduce", "--quick", "--out", o, "-P", SHARED_PHY]);
    println!("{stdout}{stderr}({:.1} s)", t0.elapsed().as_secs_f64());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("reproduce.json")).unwrap())
            .unwrap();
    let md = std::fs::read_to_string(out.join("reproduce.md")).unwrap();
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("goodput.svg") && out.join("goodput.svg").exists());
    assert!(std::fs::read_to_string(out.join("goodput.svg"))
        .unwrap()
        .contains("<polyline"));

    // The runs: 1 hop and 5 hops, from the head flits' path.
    let one = &json["one_hop"];
    let five = &json["five_hop"];
    assert_eq!(one["hops"], 1, "{one}");
    assert_eq!(five["hops"], 5, "{five}");
    assert_eq!(one["point"], "dims=2x1x1,phy_latency=4,cc_period=0,ber=0");
    // 5-hop − 1-hop = 4 × per hop; both above the software overhead and
    // 5 hops slower than 1.
    let (l1, l5, ph) = (
        f(one, "one_way_us"),
        f(five, "one_way_us"),
        f(&json, "per_hop_us"),
    );
    assert!((l5 - l1 - 4.0 * ph).abs() < 1e-9, "{l1} {l5} {ph}");
    assert!(ph > 0.0 && l1 > 0.47, "{l1} {ph}");
    // The breakdown adds up to the measured hardware latency, every part
    // non-negative; more router and link cycles over 5 hops than over 1.
    for run in [one, five] {
        let b = &run["breakdown"];
        let parts = [
            "ni_tx",
            "router_hops",
            "link_layer",
            "phy",
            "ni_rx",
            "memory_write",
            "completion",
        ];
        let sum: f64 = parts.iter().map(|p| f(b, p)).sum();
        assert!((sum - f(run, "mean_cycles")).abs() < 1e-6, "{run}");
        assert!(parts.iter().all(|p| f(b, p) >= 0.0), "{b}");
    }
    assert!(f(&five["breakdown"], "router_hops") > f(&one["breakdown"], "router_hops"));
    assert!(f(&five["breakdown"], "link_layer") > f(&one["breakdown"], "link_layer"));
    // Goodput: below the link and rising with size.
    let g = json["goodput"].as_array().unwrap();
    assert_eq!(g.len(), 3, "{g:?}");
    let link = f(&json["assumptions"], "link_gbps");
    for w in g.windows(2) {
        assert!(f(&w[1], "gbps") > f(&w[0], "gbps"), "{g:?}");
    }
    assert!(
        g.iter().all(|p| f(p, "gbps") < link && f(p, "gbps") > 0.0),
        "{g:?}"
    );

    // Every row filled or naming what is missing; JSON and Markdown agree.
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    for r in rows {
        let q = r["quantity"].as_str().unwrap();
        match r["exanet"].as_f64() {
            Some(v) => {
                assert!(r["missing"].is_null(), "{r}");
                let line = md
                    .lines()
                    .find(|l| l.starts_with(&format!("| {q} |")))
                    .unwrap_or_else(|| panic!("row {q} in reproduce.md"));
                let shown = if v.abs() >= 100.0 {
                    format!("{v:.1}")
                } else {
                    format!("{v:.3}")
                };
                assert!(line.contains(&format!("| {shown} |")), "{line} vs {v}");
                if let Some(p) = r["prototype"].as_f64() {
                    assert!((f(r, "ratio") - v / p).abs() < 1e-9, "{r}");
                }
            }
            None => {
                let m = r["missing"].as_str().unwrap_or_else(|| panic!("{r}"));
                assert!(!m.is_empty() && !r["how"].as_str().unwrap().is_empty());
            }
        }
    }
    let q = |name: &str| {
        rows.iter()
            .find(|r| r["quantity"].as_str().unwrap().starts_with(name))
            .unwrap()
    };
    assert!((f(q("one-way latency, 1 hop"), "exanet") - l1).abs() < 1e-12);
    assert!((f(q("per extra hop"), "exanet") - ph).abs() < 1e-12);
    // The allreduce row: the golden network's 128-rank collective, the
    // reduction against software (whose every step pays its overhead, the
    // engine's its combining cost: either may win at 8 B), and the JSON's
    // run behind it.
    let ar = q("allreduce");
    let pct = f(ar, "exanet");
    assert!(pct.is_finite() && pct.abs() < 100.0, "{ar}");
    assert_eq!(f(ar, "prototype"), 88.0);
    let run = &json["allreduce"]["Ok"];
    assert_eq!(run["ranks"], 128, "{run}");
    assert_eq!(run["bytes"], 8, "{run}");
    assert!(
        f(run, "hardware_us") > 0.0 && f(run, "software_us") > 0.0,
        "{run}"
    );
    assert!((f(run, "reduction_pct") - pct).abs() < 1e-12, "{run}");
    assert!(q("node resources")["how"]
        .as_str()
        .unwrap()
        .contains("--quick"));
    // The prototype's column is REFERENCE.md's.
    assert_eq!(f(q("one-way latency, 5 hops"), "prototype"), 2.55);
    assert!(md.contains("allreduce.sw_overhead_us") && stdout.contains("assumptions:"));

    // Output folder rules: a file edited since is not overwritten.
    std::fs::write(out.join("reproduce.md"), "mine\n").unwrap();
    let (code, _, stderr) = exanet(&["reproduce", "--quick", "--out", o, "-P", SHARED_PHY]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("reproduce.md"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(out.join("reproduce.md")).unwrap(),
        "mine\n"
    );
}

#[test]
fn bad_assumptions_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let o = tmp.path().join("x");
    let (code, _, stderr) = exanet(&[
        "reproduce",
        "--quick",
        "--out",
        o.to_str().unwrap(),
        "-P",
        "reproduce.mem_latency_ns=-3",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("reproduce.mem_latency_ns") && stderr.contains("-3"),
        "{stderr}"
    );
    let (code, _, stderr) = exanet(&["reproduce", "-P", "reproduce.colour=1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("colour"), "{stderr}");
    assert!(!o.exists(), "nothing written on a bad assumption");
}
