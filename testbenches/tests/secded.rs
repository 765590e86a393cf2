//! Co-simulation of `secded`: every matrix point against the golden model
//! with 0/1/2/3+-bit errors injected, and proof that the bench fails on a
//! wrong golden model or a broken RTL.

use exanet_hdl::common::secded::emit_secded;
use exanet_sim::common::secded::SecdedParams;
use exanet_tb::blocks::secded::{info, SecdedBench, SecdedFault};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run, run_caught, run_clean, run_edited,
    skip_without_verilator, test_options,
};

const CYCLES: u64 = 200_000;

/// Seed of every run.
const SEED: u64 = 0x5EC;

#[test]
fn every_matrix_point_matches_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 3, CYCLES, SEED, tmp.path());
}

/// Every error class is injected at every width.
#[test]
fn stimulus_injects_every_error_class() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for data_bits in [32, 64, 112] {
        let mut b = SecdedBench::new(SecdedParams { data_bits }).unwrap();
        run_clean(&mut b, 20_000, SEED, tmp.path());
        let c = b.coverage();
        println!("data_bits {data_bits}: {c:?}");
        assert_reached(
            &format!("data_bits {data_bits}"),
            &[
                ("clean", c.clean),
                ("single data", c.single_data),
                ("single check", c.single_check),
                ("double", c.double),
                ("3+ bits", c.multiple),
            ],
            50,
        );
    }
}

#[test]
fn a_wrong_golden_model_is_caught_on_the_right_port() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for (fault, port) in [
        (SecdedFault::NoCorrection, "corrected"),
        (SecdedFault::DoubleAsSingle, "single_err"),
    ] {
        let mut b = SecdedBench::with_fault(SecdedParams { data_bits: 112 }, Some(fault)).unwrap();
        let (r, m) = run_caught(&mut b, CYCLES, SEED, tmp.path());
        assert_eq!((r.mismatches, m.port.as_str()), (1, port), "{fault:?}: {m}");
        assert!(m.cycle < 100, "{fault:?} found late: {m}");
    }
}

/// The syndrome pattern of one data bit changed in the generated one-hot
/// decoder, loaded as external Verilog, is caught on `corrected`.
#[test]
fn a_mutated_rtl_is_caught_on_corrected() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let p = SecdedParams { data_bits: 64 };
    let mut e = emit_secded(&p).unwrap();
    let (_, m) = e
        .modules
        .iter_mut()
        .find(|(n, _)| n.ends_with("_flip"))
        .expect("one-hot decoder module");
    let line = m
        .lines()
        .find(|l| l.trim_start().starts_with("y[5] = (x == 8'h"))
        .expect("pattern of data bit 5")
        .to_string();
    let mutated = line
        .replace("(x == 8'h", "(x == 8'h1 ^ 8'h")
        .replace(");", "));")
        .replacen("(x == ", "(x == (", 1);
    *m = m.replace(&line, &mutated);
    let mut b = SecdedBench::new(p).unwrap();
    let m = run_edited(&mut b, &e, CYCLES, SEED, tmp.path());
    assert_eq!(m.port, "corrected", "{m}");
}

/// Speed of a long run (reported, not asserted: machines differ).
#[test]
fn one_million_cycles() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = SecdedBench::new(SecdedParams { data_bits: 112 }).unwrap();
    let r = run(&mut b, &test_options(1_000_000, SEED, tmp.path())).unwrap();
    println!("{}", r.summary());
    assert_eq!(r.mismatches, 0, "{:?}", r.first);
}
