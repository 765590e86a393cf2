//! Co-simulation of `node`: whole node tops joined by golden PHYs, every
//! node's PL clock and every cable's user clock drifting on its own, against
//! golden nodes and golden NIs (see `exanet_tb::blocks::node`). The short
//! 2x1x1 run and the wrong-golden runs share one Verilator build (the build
//! cache hits); longer runs and the 2x2x1 are `#[ignore]`d (run them with
//! `--ignored`; figures in BENCHMARKS.md).

use exanet_tb::blocks::node::{info, matrix_points, parse_point, Fault, NodeBench};
use exanet_tb::cosim::{run, skip_without_verilator, test_options, CosimOptions};

/// Seed of every run.
const SEED: u64 = 7;

/// The options of a run: no traced rebuild on a mismatch (only the
/// mismatch matters here).
fn opts(cycles: u64, fail_dir: &std::path::Path) -> CosimOptions {
    CosimOptions {
        waveform_on_mismatch: false,
        ..test_options(cycles, SEED, fail_dir)
    }
}

/// A clean run of `point` for `cycles` PL cycles of node 0: no mismatch,
/// and traffic went through every part (returns the coverage).
fn clean(point: &str, cycles: u64) -> exanet_tb::blocks::node::NodeCoverage {
    let tmp = tempfile::tempdir().unwrap();
    let mut bench = NodeBench::new(parse_point(point).unwrap()).unwrap();
    let r = run(&mut bench, &opts(cycles, tmp.path())).unwrap();
    println!("{}", r.summary());
    assert_eq!(r.mismatches, 0, "{:?}", r.first);
    let c = bench.coverage();
    println!("  {c:?}");
    assert!(
        c.coincident > 0,
        "a PL and a user edge at one instant: {c:?}"
    );
    assert!(c.frames > 100 && c.phy_words > 1000, "{c:?}");
    assert!(c.pair.drains >= 1, "a drain (memories compared): {c:?}");
    assert!(c.pair.rdma_writes > 5 && c.pair.delivered > 50, "{c:?}");
    // Node-pair software's drains read STATUS (and `irq` is compared the
    // PL edge after every read).
    assert!(c.pair.drains >= 1, "{c:?}");
    // The link status read over AXI4-Lite during the run and at its end:
    // every register of every link, on every node, more than once.
    let p = parse_point(point).unwrap();
    let nodes = (p.dims[0] * p.dims[1] * p.dims[2]) as u64;
    let sweeps = exanet_tb::blocks::node::sweep_starts(cycles).len() as u64;
    assert!(sweeps >= 2, "{sweeps}");
    // Every sweep but the last completes (the last one, near the end, may
    // still be waiting for software to let go of the port).
    assert!(c.status_sweeps >= (sweeps - 1) * nodes, "{c:?}");
    let regs = exanet_sim::link::status::REGS_PER_LINK as u64;
    assert!(c.status_reads >= c.status_sweeps * (regs + 1), "{c:?}");
    c
}

#[test]
fn two_nodes_match_golden_and_wrong_goldens_are_caught() {
    if skip_without_verilator() {
        return;
    }
    assert_eq!((info().matrix)().len(), matrix_points().len());
    let c = clean(matrix_points()[0], 40_000);
    // A whole-node reset pulse in the middle of traffic (node-pair
    // software's), and every configured register read back after it.
    assert!(c.pair.mid_resets >= 1, "{c:?}");
    assert!(c.pair.reset_readbacks >= 100, "{c:?}");

    let tmp = tempfile::tempdir().unwrap();
    let p = parse_point(matrix_points()[0]).unwrap();
    // One PHY word flipped on the golden side only: its link counters or
    // status differ first, named.
    let mut bench = NodeBench::with_fault(p.clone(), Fault::GoldenRxBit).unwrap();
    let r = run(&mut bench, &opts(40_000, tmp.path())).unwrap();
    let m = r.first.expect("the flipped golden word is caught");
    println!("caught: {m}");
    assert!(
        m.port.starts_with("n1_obs_l0_") || m.port.starts_with("n1_obs_unused_l0_"),
        "{m}"
    );
    // One byte of node 1's golden memory: caught at the first drain.
    let mut bench = NodeBench::with_fault(p.clone(), Fault::GoldenMemByte).unwrap();
    let r = run(&mut bench, &opts(40_000, tmp.path())).unwrap();
    let m = r.first.expect("the golden memory byte is caught");
    println!("caught: {m}");
    assert!(m.port.contains("n1 memory byte"), "{m}");
    // The golden link_status with two counters swapped, or with links 0
    // and 1 swapped: a status sweep's read-back differs, named. (Not
    // always the first: a reset pulse in the middle of traffic before it,
    // at cycle 2,406 with this seed, leaves every counter 0 there.)
    for f in [Fault::GoldenStatusOrder, Fault::GoldenStatusLink] {
        let mut bench = NodeBench::with_fault(p.clone(), f).unwrap();
        let r = run(&mut bench, &opts(40_000, tmp.path())).unwrap();
        let m = r.first.expect("the status decode mutation is caught");
        println!("caught ({f:?}): {m}");
        assert!(m.port.contains("_s_axil_rdata"), "{m}");
        assert!(m.cycle < 30_000, "caught in a sweep: {m}");
    }
}

/// A short sample of the bit-error point below, in the default suite (the
/// same model build): at 1e-4 the links detect CRC errors and retransmit
/// within 15,000 cycles, every PHY word, link counter and packet as the
/// golden side's. (Too short for the drains and sweeps `clean` asks for.)
#[test]
fn two_nodes_with_bit_errors_short_sample() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let p = parse_point("dims=2x1x1,phy_latency=4,cc_period=97,ber=0.0001").unwrap();
    let mut bench = NodeBench::new(p).unwrap();
    let r = run(&mut bench, &opts(15_000, tmp.path())).unwrap();
    println!("{}", r.summary());
    assert_eq!(r.mismatches, 0, "{:?}", r.first);
    let c = bench.coverage();
    println!("  {c:?}");
    assert!(c.crc_errors > 20 && c.retransmissions > 20, "{c:?}");
    assert!(c.pair.delivered > 100 && c.status_reads > 0, "{c:?}");
}

/// Bit errors on every PHY direction: the links retransmit, RTL and golden
/// agree on every counter.
#[test]
#[ignore]
fn two_nodes_with_bit_errors_match_golden() {
    if skip_without_verilator() {
        return;
    }
    let c = clean("dims=2x1x1,phy_latency=4,cc_period=97,ber=0.00002", 60_000);
    assert!(c.crc_errors > 0 && c.retransmissions > 0, "{c:?}");
    // ... and software sees them over AXI4-Lite.
    assert!(
        c.status_crc_errors > 0 && c.status_retransmissions > 0,
        "{c:?}"
    );
}

#[test]
#[ignore]
fn two_nodes_long_run_matches_golden() {
    if skip_without_verilator() {
        return;
    }
    clean(matrix_points()[0], 200_000);
}

#[test]
#[ignore]
fn four_nodes_on_a_2x2_torus_match_golden() {
    if skip_without_verilator() {
        return;
    }
    clean(matrix_points()[1], 40_000);
}
