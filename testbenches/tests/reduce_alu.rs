//! Co-simulation of `reduce_alu`: every width against the golden model,
//! every legal (op, dtype) pair and corner reached, and proof that the
//! bench fails on a wrong golden model or a broken RTL.

use exanet_hdl::allreduce::reduce_alu::emit_reduce_alu;
use exanet_sim::allreduce::reduce_alu::{ReduceAluParams, ReduceDtype, ReduceOp};
use exanet_tb::blocks::reduce_alu::{info, ReduceAluBench, ReduceAluFault};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run, run_caught, run_clean, run_edited,
    skip_without_verilator, test_options,
};

const CYCLES: u64 = 100_000;

/// Seed of every run.
const SEED: u64 = 0xA1D0;

#[test]
fn every_matrix_point_matches_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 3, CYCLES, SEED, tmp.path());
}

/// The stimulus reaches every legal pair and every corner.
#[test]
fn stimulus_reaches_every_case() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = ReduceAluBench::new(ReduceAluParams { width: 128 }).unwrap();
    run_clean(&mut b, CYCLES, SEED, tmp.path());
    let c = b.coverage();
    println!("{c:?}");
    let names: Vec<String> = ReduceDtype::ALL
        .into_iter()
        .flat_map(|d| ReduceOp::ALL.into_iter().map(move |o| (o, d)))
        .filter(|(o, d)| d.supports(*o))
        .map(|(o, d)| format!("{} {} flits", o.name(), d.name()))
        .collect();
    let mut counts: Vec<(&str, u64)> = names
        .iter()
        .map(String::as_str)
        .zip(c.pairs.iter().copied())
        .collect();
    counts.extend([
        ("bitwise-on-float flits", c.bitwise_float),
        ("undefined-code flits", c.undefined_codes),
        ("NaN min/max lanes", c.nan_min_max),
        ("+0/-0 min/max lanes", c.signed_zero_min_max),
        ("wrapped integer sums", c.wrapped_sums),
        ("equal min/max lanes", c.equal_lanes),
        ("resets", c.resets),
    ]);
    assert_reached("width 128", &counts, 10);
}

/// Golden models that order signed as unsigned, or accept bitwise ops on
/// floats, are caught (on `y`, and on `bad`).
#[test]
fn a_wrong_golden_model_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for (fault, port) in [
        (ReduceAluFault::SignedAsUnsigned, "y"),
        (ReduceAluFault::BitwiseFloatsLegal, "bad"),
    ] {
        let mut b =
            ReduceAluBench::with_fault(ReduceAluParams { width: 128 }, Some(fault)).unwrap();
        let (r, m) = run_caught(&mut b, CYCLES, SEED, tmp.path());
        assert_eq!((r.mismatches, m.port.as_str()), (1, port), "{fault:?}: {m}");
        assert!(m.cycle < 1000, "{fault:?} found late: {m}");
    }
}

/// RTL edits, each caught: floats ordered as signed integers (negatives
/// not inverted: -0/+0 and negative order wrong), NaN not propagated by
/// binary64 min/max, and bitwise ops on floats taken as legal.
#[test]
fn a_mutated_rtl_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let p = ReduceAluParams { width: 128 };
    for (from, to, port) in [
        ("(is_f32 && l32_2_a[31])", "(1'b0 && l32_2_a[31])", "y"),
        (": l64_0_nan ? 64'h", ": 1'b0 ? 64'h", "y"),
        (
            "|| (is_bitwise && (is_f32 || is_f64))",
            "|| (is_bitwise && is_f32)",
            "bad",
        ),
    ] {
        let mut e = emit_reduce_alu(&p).unwrap();
        let (_, m) = e
            .modules
            .iter_mut()
            .find(|(n, _)| n == "exanet_reduce_alu_w128")
            .expect("top module");
        assert_eq!(m.matches(from).count(), 1, "`{from}`");
        *m = m.replace(from, to);
        let mut b = ReduceAluBench::new(p.clone()).unwrap();
        let mm = run_edited(&mut b, &e, CYCLES, SEED, tmp.path());
        assert_eq!(mm.port, port, "`{to}`: {mm}");
    }
}

/// A long run (several seeds); speed is reported, not asserted.
#[test]
#[ignore = "long: 4 M cycles per width"]
fn long_runs_over_several_seeds() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for width in [64, 128, 256] {
        for seed in [1, 2, 3, 4] {
            let mut b = ReduceAluBench::new(ReduceAluParams { width }).unwrap();
            let r = run(&mut b, &test_options(1_000_000, seed, tmp.path())).unwrap();
            println!("{}", r.summary());
            assert_eq!(r.mismatches, 0, "{:?}", r.first);
        }
    }
}
