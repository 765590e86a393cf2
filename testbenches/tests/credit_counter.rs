//! Co-simulation of `credit_counter`: every matrix point against the golden
//! model, and proof that the bench fails on a wrong golden model or a
//! broken RTL.

use exanet_hdl::common::credit_counter::emit_credit_counter;
use exanet_sim::common::credit_counter::CreditCounterParams;
use exanet_tb::blocks::credit_counter::{info, CreditCounterBench};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run_caught, run_clean, run_edited,
    skip_without_verilator,
};

const CYCLES: u64 = 200_000;

fn p(max: u32, need: u32) -> CreditCounterParams {
    CreditCounterParams { max, need }
}

/// Seed of every run.
const SEED: u64 = 0xC0C0;

#[test]
fn every_matrix_point_matches_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 3, CYCLES, SEED, tmp.path());
}

/// The count reaches 0 and `max`, saturates both ways, cancels at both
/// bounds, `enough` rises, and resets happen, at every tested point.
#[test]
fn stimulus_reaches_every_corner() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for q in [
        p(1, 1),
        p(2, 2),
        p(16, 5),
        p(40, 18),
        p(64, 64),
        p(1024, 1000),
    ] {
        let mut b = CreditCounterBench::new(q.clone()).unwrap();
        run_clean(&mut b, CYCLES, SEED, tmp.path());
        let c = b.coverage();
        println!("{q:?}: {c:?}");
        assert_reached(
            &format!("{q:?}"),
            &[
                ("cycles at 0", c.zero_cycles),
                ("cycles at max", c.max_cycles),
                ("underruns", c.underruns),
                ("overruns", c.overruns),
                ("cancels at a bound", c.cancels_at_bounds),
                ("enough rises", c.enough_rises),
                ("resets", c.resets),
            ],
            5,
        );
    }
}

/// A golden model with a different `need` is caught on `enough`; one with a
/// different `max` on `count` at once (power-on value).
#[test]
fn a_wrong_golden_model_is_caught_on_the_right_port() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = CreditCounterBench::with_golden(p(40, 18), p(40, 17)).unwrap();
    let (_, m) = run_caught(&mut b, CYCLES, SEED, tmp.path());
    assert_eq!(m.port, "enough", "{m}");
    assert_eq!(
        (m.expected.as_str(), m.actual.as_str()),
        ("0x1", "0x0"),
        "{m}"
    );

    let mut b = CreditCounterBench::with_golden(p(40, 18), p(41, 18)).unwrap();
    let (_, m) = run_caught(&mut b, CYCLES, SEED, tmp.path());
    assert_eq!((m.port.as_str(), m.cycle), ("count", 0), "{m}");
}

/// RTL that wraps instead of saturating at 0 is caught on `count`.
#[test]
fn a_mutated_rtl_is_caught_on_the_right_port() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let q = p(16, 5);
    let mut e = emit_credit_counter(&q).unwrap();
    let top = e.modules.last_mut().unwrap();
    // The branch for a consume at 0 sets the error; the mutant also
    // decrements, so the count wraps to all ones.
    let lines: Vec<&str> = top.1.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim() == "if (at_zero) begin")
        .expect("mutation site not found");
    assert_eq!(lines[at + 1].trim(), "err_d = 1'b1;");
    let indent = &lines[at + 1][..lines[at + 1].len() - lines[at + 1].trim_start().len()];
    let mut mutated: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    mutated.insert(
        at + 2,
        format!("{indent}credits_d = credits_q - count_one;"),
    );
    top.1 = mutated.join("\n") + "\n";
    let mut b = CreditCounterBench::new(q).unwrap();
    let m = run_edited(&mut b, &e, CYCLES, SEED, tmp.path());
    assert_eq!(m.port, "count", "{m}");
}
