//! `exanet mutate` end to end: a small fixed sample of mutants per
//! primitive block and per link-layer block, so a bench that loses its
//! teeth fails here; the full campaigns (larger samples, the router, NI
//! and network) are in `BENCHMARKS.md` with their commands.

use exanet_tb::cosim::skip_without_verilator;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_exanet");

/// The model cache of the workspace's `target` folder, as the in-tree
/// tests use. The runs below work in temporary folders, where the default
/// cache (`.exanet-cache` of the current folder) would start empty on each
/// call: Verilator's runtime recompiled by every call (by both jobs at
/// once), and no mutant build shared between tests drawing the same one.
/// An `EXANET_CACHE` set by the caller wins.
fn model_cache() -> PathBuf {
    std::env::var_os("EXANET_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(EXE)
                .parent()
                .and_then(Path::parent)
                .expect("binary lives in target/<profile>/")
                .join("exanet-cache")
        })
}

/// The g++ level of the mutants' models: `-O0` unless the caller set
/// `EXANET_CXX_OPT`. Each mutant is a build of its own, run once for at
/// most a few tens of thousands of cycles (most are killed well before):
/// its compile costs far more than its run, and `-O0` compiles the
/// evaluation code about 2.6 times faster than the default `-O1`
/// (BENCHMARKS.md, "Test suite time").
fn cxx_opt() -> String {
    std::env::var("EXANET_CXX_OPT").unwrap_or_else(|_| "-O0".into())
}

/// Run `exanet mutate block` on a sample of `count` mutants and return its
/// JSON report.
fn mutate(block: &str, point: Option<&str>, count: usize, cycles: u64) -> Value {
    mutate_seeded(block, point, count, cycles, 7)
}

/// [`mutate`] with the sample's (and the stimulus's) seed.
fn mutate_seeded(block: &str, point: Option<&str>, count: usize, cycles: u64, seed: u64) -> Value {
    mutate_filtered(block, point, None, count, cycles, seed)
}

/// [`mutate_seeded`] on the mutants of the Verilog modules `filter` names
/// (`exanet mutate --filter`).
fn mutate_filtered(
    block: &str,
    point: Option<&str>,
    filter: Option<&str>,
    count: usize,
    cycles: u64,
    seed: u64,
) -> Value {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    let o = Command::new(EXE)
        .args(["mutate", block, "--jobs", "2", "--seed", &seed.to_string()])
        .args(point.map(|p| ["--point", p]).into_iter().flatten())
        .args(filter.map(|f| ["--filter", f]).into_iter().flatten())
        .args([
            "--count",
            &count.to_string(),
            "--cycles",
            &cycles.to_string(),
        ])
        .arg("--json")
        .arg(&json)
        .current_dir(d.path())
        .env("EXANET_CACHE", model_cache())
        .env("EXANET_CXX_OPT", cxx_opt())
        .output()
        .expect("running exanet");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "exanet mutate {block}: {out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    println!("{out}");
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

/// Every primitive's bench kills its sample: no survivor, and every
/// mutant reached a verdict. The arbiter runs at 7 requesters: at 2 (its
/// matrix's first point) the mask only ever holds the upper bit, so
/// dropping the `~` of the lowest-bit isolation is an equivalent mutant
/// there (BENCHMARKS.md, mutation analysis).
#[test]
fn primitive_benches_kill_a_fixed_sample_of_mutants() {
    if skip_without_verilator() {
        return;
    }
    for (block, point) in [
        ("fifo", None),
        ("arbiter", Some(ARBITER_POINT)),
        ("credit_counter", None),
        ("crc32", None),
        ("secded", None),
    ] {
        let r = mutate(block, point, PRIMITIVE_SAMPLE, 20_000);
        let runs = r["runs"].as_array().unwrap();
        assert_eq!(runs.len(), PRIMITIVE_SAMPLE, "{block}: {r}");
        let survivors: Vec<&Value> = runs.iter().filter(|x| x["verdict"] == "survived").collect();
        assert!(survivors.is_empty(), "{block}: survivors {survivors:#?}");
        assert!(
            r["killed"].as_u64().unwrap() + 1 >= PRIMITIVE_SAMPLE as u64,
            "{block}: most of the sample must build and be killed: {r}"
        );
        assert!(r["candidates"].as_u64().unwrap() > 5, "{block}: {r}");
        let rules: Vec<&str> = r["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s[0].as_str().unwrap())
            .collect();
        assert!(
            rules.contains(&"structure") && rules.contains(&"initial"),
            "{rules:?}"
        );
    }
}

/// The arbiter's point in the primitive sample (see above).
const ARBITER_POINT: &str = "n=7";

/// Mutants per primitive in the CI sample (seed 7): a prefix of the
/// 5-mutant samples of the campaigns in BENCHMARKS.md, every one killed
/// there; each mutant is a model build, so the suite keeps three.
const PRIMITIVE_SAMPLE: usize = 3;

/// Every link-layer bench kills its sample (a few mutants each, at the
/// block's default point, short runs): no survivor, every mutant built.
/// The seeds draw no mutant that BENCHMARKS.md lists as equivalent.
#[test]
fn link_benches_kill_a_fixed_sample_of_mutants() {
    if skip_without_verilator() {
        return;
    }
    for (block, count, cycles, seed) in LINK_SAMPLE {
        let r = mutate_seeded(block, None, count, cycles, seed);
        assert_every_mutant_killed(block, &r, count);
    }
}

/// A sample's report `r`: `count` mutants run, none survived, every one
/// built and killed.
fn assert_every_mutant_killed(block: &str, r: &Value, count: usize) {
    let runs = r["runs"].as_array().unwrap();
    assert_eq!(runs.len(), count, "{block}: {r}");
    let survivors: Vec<&Value> = runs.iter().filter(|x| x["verdict"] == "survived").collect();
    assert!(survivors.is_empty(), "{block}: survivors {survivors:#?}");
    assert_eq!(
        r["killed"].as_u64().unwrap(),
        count as u64,
        "{block}: every mutant of the sample builds and is killed: {r}"
    );
}

/// (block, mutants, cycles, seed) of the link-layer CI sample (prefixes of
/// the 3-mutant samples every one of which was killed). Seed 3 of
/// link_rx and link_status draws an equivalent mutant (BENCHMARKS.md), and
/// so does seed 3 of link_tx since the `no-op-tie` rule shifted its sample
/// (a `seal_f` mask bit over a reserved-zero field bit);
/// link_rx's seed-7 sample holds a dropped reset of `c_link_downs`, which
/// needs a link drop before a mid-run reset: 50,000 cycles.
const LINK_SAMPLE: [(&str, usize, u64, u64); 4] = [
    ("retry_buffer", 2, 20_000, 3),
    ("link_status", 2, 20_000, 7),
    ("link_tx", 2, 20_000, 4),
    ("link_rx", 3, 50_000, 7),
];

/// The whole-block benches `link` (both ends of a cable) and `allreduce`
/// (the NI with the engine) kill their samples: no survivor, every mutant
/// built. One mutant each (a model build is about 9 CPU-s for the link
/// pair and 14 for the NI with the engine at `-O0`): link seed 7 (a
/// prefix of its 2-mutant sample, both killed: a `qwr_n` wrap in
/// `link_tx`, a CRC mask bit in `link_rx`), allreduce seed 3 over 30,000
/// cycles (the first mutant of the seed-3 draw; RTL edits redraw it: since
/// session 42 a header-without-payload state constant in `rdma_tx`, which
/// needs more than 10,000 cycles; a run is about 0.2 s of the cost).
#[test]
fn link_and_allreduce_benches_kill_a_fixed_sample_of_mutants() {
    if skip_without_verilator() {
        return;
    }
    for (block, count, cycles, seed) in WHOLE_BLOCK_SAMPLE {
        let r = mutate_seeded(block, None, count, cycles, seed);
        assert_every_mutant_killed(block, &r, count);
    }
}

/// (block, mutants, cycles, seed) of the link and allreduce CI sample.
const WHOLE_BLOCK_SAMPLE: [(&str, usize, u64, u64); 2] =
    [("link", 1, 20_000, 7), ("allreduce", 1, 30_000, 3)];

/// The allreduce engine's sequencer and register/check benches kill their
/// samples: no survivor, every mutant built. Prefixes of the seed-3
/// campaigns in BENCHMARKS.md ("Allreduce engine: the partner's digits and
/// the collective's walk under test"): `ar_sched` at 128 ranks (16 of 16
/// killed) and `ar_check` at 4 slots on the 8×4×4 torus (16 of 16).
#[test]
fn allreduce_engine_benches_kill_a_fixed_sample_of_mutants() {
    if skip_without_verilator() {
        return;
    }
    for (block, point, count, cycles, seed) in ENGINE_SAMPLE {
        let r = mutate_seeded(block, Some(point), count, cycles, seed);
        assert_every_mutant_killed(block, &r, count);
    }
}

/// (block, point, mutants, cycles, seed) of the engine's CI sample.
const ENGINE_SAMPLE: [(&str, &str, usize, u64, u64); 2] = [
    ("ar_sched", "max_ranks=128", 2, 50_000, 3),
    ("ar_check", "communicators=4", 2, 50_000, 3),
];

/// The router's and the packet format's benches kill their samples: no
/// survivor, every mutant built. The router's are drawn from its route
/// compute units (`--filter '_route$'`), where the bench was thin before it
/// moved the router and walked every destination offset, and from its
/// output units (`--filter _outputs`: credits, busy VCs, arbiters); the seeds draw
/// no mutant BENCHMARKS.md lists as equivalent (router and packet
/// campaigns, issue 19 item 2).
#[test]
fn router_and_packet_benches_kill_a_fixed_sample_of_mutants() {
    if skip_without_verilator() {
        return;
    }
    for (block, point, filter, count, cycles, seed) in ROUTER_PACKET_SAMPLE {
        let r = mutate_filtered(block, point, filter, count, cycles, seed);
        assert_every_mutant_killed(block, &r, count);
        if let Some(f) = filter {
            assert_eq!(r["filter"], f, "{r}");
        }
    }
}

/// One CI sample: (block, point, module filter, mutants, cycles, seed).
type Sample = (
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    usize,
    u64,
    u64,
);

/// The router and packet CI sample. Router, default point, seed 3: the
/// entry-dateline detection's `&` turned `|` (the class of survivor issue
/// 19 names; the seed's second draw is an equivalent mutant, so one only).
/// Router, 6x3x2 with a mesh dimension and 3 VCs per class, seed 5: a
/// dropped `upper_base` assignment (killed at cycle 18,946; the seed's
/// second draw, a dropped `port8_1` assignment, also killed, left out to
/// save a router build). Packet, seed 3: 2 mutants of the 20 its campaign
/// killed. A seed's sample is a prefix of the same seed's larger one, so
/// these are drawn from the campaigns in BENCHMARKS.md. Router, default
/// point, output units (`--filter _outputs`), seed 3: `mask_d = zero_n`
/// dropped from the reset branch of output 4's class-1 arbiter, killed
/// at cycle 25,070 (after a mid-run reset), hence 30,000 cycles
/// (BENCHMARKS.md, "Mutation analysis of the whole router and the
/// network"); about 20 CPU-s at `-O0`.
const ROUTER_PACKET_SAMPLE: [Sample; 4] = [
    ("router", None, Some("_route$"), 1, 20_000, 3),
    ("router", Some(ROUTER_632), Some("_route$"), 1, 20_000, 5),
    ("router", None, Some("_outputs"), 1, 30_000, 3),
    ("packet", None, None, 2, 20_000, 3),
];

/// The node-pair bench (two NIs and two routers in one Verilog top)
/// kills a mutant of the NI's response-footer CRC-8 (one of its 4
/// candidates, seed 3; caught on a response flit). One mutant: a
/// node-pair model build is about half a CPU-minute at `-O0`.
#[test]
fn node_pair_bench_kills_a_fixed_sample_of_mutants() {
    if skip_without_verilator() {
        return;
    }
    let (block, point, filter, count, cycles, seed) = NODE_PAIR_SAMPLE;
    let r = mutate_filtered(block, point, filter, count, cycles, seed);
    assert_every_mutant_killed(block, &r, count);
}

/// The node-pair CI sample: drawn from the NI's response-footer CRC-8
/// only (`--filter`), so a change of the routers' RTL (which redraws an
/// unfiltered sample: session 41's vector sizing drew a `pick` assignment
/// that is dead at `vc_select = flow`) leaves it alone.
const NODE_PAIR_SAMPLE: Sample = ("node-pair", None, Some("_rsp_ftr_crc8_map$"), 1, 5_000, 3);

/// The default router's sizes on odd and non-power-of-two rings with a
/// mesh dimension, 2 local ports, 3 VCs per class (halves of 2 and 1: mod
/// 3, 2 and 1 chains), per-flow VCs, at a corner.
const ROUTER_632: &str = "dims=6x3x2,wrap=ttm,local_ports=2,dim_order=zyx,classes=2,vcs_per_class=3,buffer_flits=32,flit_bits=128,max_packet_flits=18,node=17";

/// A mutant the bench cannot see is reported as survived: a bench that
/// runs no cycles sees nothing, so every built mutant survives. The
/// sample is the primitive test's arbiter sample (same point, seed and
/// count), so the two tests share its three model builds.
#[test]
fn a_blind_bench_lets_mutants_survive() {
    if skip_without_verilator() {
        return;
    }
    let r = mutate("arbiter", Some(ARBITER_POINT), PRIMITIVE_SAMPLE, 0);
    let runs = r["runs"].as_array().unwrap();
    assert!(
        runs.iter()
            .all(|x| x["verdict"] == "survived" || x["verdict"] == "invalid"),
        "{r}"
    );
    assert!(r["survived"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["kill_rate"].as_f64().unwrap() < 0.5, "{r}");
}

#[test]
fn bad_arguments_are_usage_errors() {
    let d = tempfile::tempdir().unwrap();
    for (args, want) in [
        (vec!["mutate", "nosuch"], "unknown block `nosuch`"),
        (
            vec!["mutate", "fifo", "--point", "width=0"],
            "--point width=0",
        ),
    ] {
        let o = Command::new(EXE)
            .args(&args)
            .current_dir(d.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
