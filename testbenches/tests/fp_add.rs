//! Co-simulation of `fp_add`: both formats against Rust's native addition,
//! every directed class reached, and proof that the bench fails on a wrong
//! golden model or a broken RTL.

use exanet_hdl::allreduce::fp_add::emit_fp_add;
use exanet_sim::allreduce::fp_add::FpAddParams;
use exanet_tb::blocks::fp_add::{info, FpAddBench, FpAddFault};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run, run_caught, run_clean, run_edited,
    skip_without_verilator, test_options,
};

const CYCLES: u64 = 200_000;

/// Seed of every run.
const SEED: u64 = 0xF9AD;

#[test]
fn every_matrix_point_matches_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 2, CYCLES, SEED, tmp.path());
}

/// The stimulus reaches every directed class and every result category,
/// and every exponent difference, in both formats.
#[test]
fn stimulus_reaches_every_case() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for width in [32, 64] {
        let mut b = FpAddBench::new(FpAddParams { width }).unwrap();
        run_clean(&mut b, CYCLES, SEED, tmp.path());
        let c = b.coverage();
        println!("width {width}: {c:?}");
        let k = c.classes;
        assert_reached(
            &format!("width {width}"),
            &[
                ("random pairs", c.random),
                ("near-exponent pairs", k[0]),
                ("exponent-walk pairs", k[1]),
                ("zero pairs", k[2]),
                ("boundary pairs", k[3]),
                ("overflow pairs", k[4]),
                ("special pairs", k[5]),
                ("cancellation pairs", k[6]),
                ("tie pairs", k[7]),
                ("massive-cancellation pairs", k[8]),
                ("subnormal results", c.subnormal_results),
                ("overflows to Inf", c.overflows),
                ("NaN results", c.nan_results),
                ("total cancellations", c.cancellations),
                ("-0 results", c.negative_zeros),
                ("resets", c.resets),
            ],
            10,
        );
        assert_eq!(
            c.exp_diffs_missing, 0,
            "width {width}: exponent differences"
        );
    }
}

/// Golden models that flush subnormals or give a negative NaN are caught
/// on `sum`.
#[test]
fn a_wrong_golden_model_is_caught_on_sum() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for width in [32, 64] {
        for fault in [FpAddFault::FlushSubnormals, FpAddFault::NegativeNan] {
            let p = FpAddParams { width };
            let mut b = FpAddBench::with_fault(p, Some(fault)).unwrap();
            let (r, m) = run_caught(&mut b, CYCLES, SEED, tmp.path());
            assert_eq!(
                (r.mismatches, m.port.as_str()),
                (1, "sum"),
                "{fault:?}: {m}"
            );
            assert!(m.cycle < 2000, "{fault:?} found late: {m}");
        }
    }
}

/// Replace `from` by `to` in the top module of `width` (exactly once).
fn edited(width: usize, from: &str, to: &str) -> exanet_hdl::emit::Emitted {
    let mut e = emit_fp_add(&FpAddParams { width }).unwrap();
    let top = format!("exanet_fp_add_w{width}");
    let (_, m) = e
        .modules
        .iter_mut()
        .find(|(n, _)| *n == top)
        .expect("top module");
    assert_eq!(m.matches(from).count(), 1, "`{from}` in {top}");
    *m = m.replace(from, to);
    e
}

/// RTL edits, each caught on `sum`: ties rounded down instead of to even
/// (the lsb dropped from the round decision), the sticky bit of the
/// alignment dropped, and -0 + -0 giving +0.
#[test]
fn a_mutated_rtl_is_caught_on_sum() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for width in [32, 64] {
        for (from, to) in [
            ("((|s4_norm[2:0]) || s4_norm[4])", "(|s4_norm[2:0])"),
            ("], |s1_wide[", "], 1'b0 & |s1_wide["),
            ("s1_zsign <= a_sign && b_sign;", "s1_zsign <= 1'b0;"),
        ] {
            let e = edited(width, from, to);
            let mut b = FpAddBench::new(FpAddParams { width }).unwrap();
            let m = run_edited(&mut b, &e, CYCLES, SEED, tmp.path());
            assert_eq!(m.port, "sum", "width {width}, `{to}`: {m}");
        }
    }
}

/// A long run (several seeds); speed is reported, not asserted.
#[test]
#[ignore = "long: 4 M cycles per format"]
fn long_runs_over_several_seeds() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for width in [32, 64] {
        for seed in [1, 2, 3, 4] {
            let mut b = FpAddBench::new(FpAddParams { width }).unwrap();
            let r = run(&mut b, &test_options(1_000_000, seed, tmp.path())).unwrap();
            println!("{}", r.summary());
            assert_eq!(r.mismatches, 0, "{:?}", r.first);
        }
    }
}
