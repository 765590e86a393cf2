//! Co-simulation of `crc32`: every matrix point against the golden model,
//! and proof that the bench fails on a wrong golden model or a broken RTL.

use exanet_hdl::common::crc32::emit_crc32;
use exanet_sim::common::crc32::Crc32Params;
use exanet_tb::blocks::crc32::{info, Crc32Bench, Crc32Fault};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run, run_caught, run_clean, run_edited,
    skip_without_verilator, test_options,
};

const CYCLES: u64 = 200_000;

/// Seed of every run.
const SEED: u64 = 0xC4C3;

#[test]
fn every_matrix_point_matches_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 3, CYCLES, SEED, tmp.path());
}

/// The stimulus reaches every case at every width.
#[test]
fn stimulus_reaches_every_case() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for width in [64, 128, 256] {
        let mut b = Crc32Bench::new(Crc32Params { width }).unwrap();
        run_clean(&mut b, 50_000, SEED, tmp.path());
        let c = b.coverage();
        println!("width {width}: {c:?}");
        assert_reached(
            &format!("width {width}"),
            &[
                ("full flits", c.full_flits),
                ("partial flits", c.partial_flits),
                ("out-of-range byte counts", c.out_of_range),
                ("starts", c.starts),
                ("idle starts", c.idle_starts),
                ("resets", c.resets),
            ],
            5,
        );
    }
}

/// Golden models that ignore `bytes` or `start` are caught on `crc`.
#[test]
fn a_wrong_golden_model_is_caught_on_crc() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for fault in [Crc32Fault::IgnoreBytes, Crc32Fault::IgnoreStart] {
        let mut b = Crc32Bench::with_fault(Crc32Params { width: 128 }, Some(fault)).unwrap();
        let (r, m) = run_caught(&mut b, CYCLES, SEED, tmp.path());
        assert_eq!(
            (r.mismatches, m.port.as_str()),
            (1, "crc"),
            "{fault:?}: {m}"
        );
        assert!(m.cycle < 1000, "{fault:?} found late: {m}");
    }
}

/// One data bit toggled in the mask of one XOR tree, loaded
/// as external Verilog, is caught on `crc`.
#[test]
fn a_mutated_rtl_is_caught_on_crc() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let p = Crc32Params { width: 64 };
    let mut e = emit_crc32(&p).unwrap();
    let (_, m) = e
        .modules
        .iter_mut()
        .find(|(n, _)| n == "exanet_crc32_w64")
        .expect("top module");
    let line = m
        .lines()
        .find(|l| l.trim_start().starts_with("full[7] = "))
        .expect("row 7")
        .to_string();
    let at = line.find("(masked & 64'h").expect("data term") + "(masked & 64'h".len();
    let mask = u64::from_str_radix(&line[at..at + 16], 16).unwrap();
    let mutated = format!(
        "{}{:016x}{}",
        &line[..at],
        mask ^ (1 << 5),
        &line[at + 16..]
    );
    *m = m.replace(&line, &mutated);
    let mut b = Crc32Bench::new(p).unwrap();
    let m = run_edited(&mut b, &e, CYCLES, SEED, tmp.path());
    assert_eq!(m.port, "crc", "{m}");
}

/// Speed of a long run (reported, not asserted: machines differ).
#[test]
fn one_million_cycles() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for width in [128, 256] {
        let mut b = Crc32Bench::new(Crc32Params { width }).unwrap();
        let r = run(&mut b, &test_options(1_000_000, SEED, tmp.path())).unwrap();
        println!("{}", r.summary());
        assert_eq!(r.mismatches, 0, "{:?}", r.first);
    }
}
