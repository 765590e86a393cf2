//! Co-simulation of `fifo`: every matrix point against the golden model,
//! and proof that the bench fails on a wrong golden model or a broken RTL.

use exanet_hdl::common::fifo::emit_fifo;
use exanet_sim::common::fifo::FifoParams;
use exanet_tb::blocks::fifo::{info, FifoBench};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run, run_caught, run_clean, run_edited,
    skip_without_verilator, test_options,
};

const CYCLES: u64 = 200_000;

fn p(width: u32, depth: u32, almost_full: u32) -> FifoParams {
    FifoParams {
        width,
        depth,
        almost_full,
    }
}

/// Seed of every run.
const SEED: u64 = 0xF1F0;

#[test]
fn every_matrix_point_matches_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 3, CYCLES, SEED, tmp.path());
}

/// The stimulus really reaches every corner at every matrix point: full,
/// empty, push+pop while full and while empty, overflow, underflow, reset.
#[test]
fn stimulus_reaches_every_corner() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for q in [
        p(8, 2, 1),
        p(16, 4, 4),
        p(32, 16, 12),
        p(64, 64, 48),
        p(133, 1024, 1000),
    ] {
        let mut b = FifoBench::new(q.clone()).unwrap();
        run_clean(&mut b, CYCLES, SEED, tmp.path());
        let c = b.coverage();
        println!("{q:?}: {c:?}");
        assert_reached(
            &format!("{q:?}"),
            &[
                ("full cycles", c.full_cycles),
                ("empty cycles", c.empty_cycles),
                ("push+pop while full", c.push_pop_full),
                ("push+pop while empty", c.push_pop_empty),
                ("overflows", c.overflows),
                ("underflows", c.underflows),
                ("resets", c.resets),
            ],
            5,
        );
    }
}

/// A golden model with a different `almost_full` threshold must be caught on
/// `almost_full`. One with half the depth is caught on `dout` while empty
/// (its pointers wrap after 8 slots, so the stale slot at the read pointer
/// differs) or on `full`, whichever the stimulus meets first.
#[test]
fn a_wrong_golden_model_is_caught_on_the_right_port() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let rtl = p(32, 16, 12);
    let mut b = FifoBench::with_golden(rtl.clone(), p(32, 16, 13)).unwrap();
    let (r, m) = run_caught(&mut b, CYCLES, SEED, tmp.path());
    assert_eq!((r.mismatches, m.port.as_str()), (1, "almost_full"), "{m}");
    assert_eq!(
        (m.expected.as_str(), m.actual.as_str()),
        ("0x0", "0x1"),
        "{m}"
    );

    let mut b = FifoBench::with_golden(rtl, p(32, 8, 8)).unwrap();
    let (_, m) = run_caught(&mut b, CYCLES, SEED, tmp.path());
    assert!(m.port == "dout" || m.port == "full", "{m}");
}

/// A one-character bug in the RTL (`almost_full` as `>` instead of `>=`),
/// loaded as external Verilog, is caught on `almost_full`.
#[test]
fn a_mutated_rtl_is_caught_on_the_right_port() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let q = p(32, 16, 12);
    let mut e = emit_fifo(&q).unwrap();
    let top = e.modules.last_mut().unwrap();
    let good = "almost_full = used_q >= count_almost_full;";
    assert_eq!(top.1.matches(good).count(), 1, "mutation site not found");
    top.1 = top
        .1
        .replace(good, "almost_full = used_q > count_almost_full;");
    let mut b = FifoBench::new(q).unwrap();
    let m = run_edited(&mut b, &e, CYCLES, SEED, tmp.path());
    assert_eq!(m.port, "almost_full", "{m}");
}

/// Speed of a long run (reported, not asserted: machines differ).
#[test]
fn one_million_cycles() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = FifoBench::new(p(64, 16, 12)).unwrap();
    let r = run(&mut b, &test_options(1_000_000, SEED, tmp.path())).unwrap();
    println!("{}", r.summary());
    assert_eq!(r.mismatches, 0, "{:?}", r.first);
}
