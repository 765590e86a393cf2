//! Co-simulation of `arbiter`: every matrix point against the golden model
//! (with the RTL fairness scoreboard), and proof that the bench fails on a
//! wrong golden model or a broken RTL.

use exanet_hdl::common::arbiter::emit_arbiter;
use exanet_sim::common::arbiter::ArbiterParams;
use exanet_tb::blocks::arbiter::{info, ArbiterBench};
use exanet_tb::cosim::{
    assert_matrix_matches, run, run_caught, run_clean, run_edited, skip_without_verilator,
    test_options,
};

const CYCLES: u64 = 200_000;

/// Seed of every run.
const SEED: u64 = 0xA4B;

#[test]
fn every_matrix_point_matches_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 3, CYCLES, SEED, tmp.path());
}

/// Every requester wins, the n-1 wait bound is reached (so the scoreboard
/// tests something) and never exceeded, all-requesting and idle both occur.
#[test]
fn stimulus_reaches_every_corner_and_the_fairness_bound() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for n in [2, 3, 7, 11, 16] {
        let mut b = ArbiterBench::new(ArbiterParams { n }).unwrap();
        run_clean(&mut b, CYCLES, SEED, tmp.path());
        let c = b.coverage();
        println!("n={n}: {c:?}");
        for g in 0..n as usize {
            assert!(
                c.accepted[g] > 100,
                "n={n}: requester {g} won {}",
                c.accepted[g]
            );
        }
        assert_eq!(c.max_wait, n - 1, "n={n}");
        assert!(
            c.all_requesting > 100 && c.idle > 100 && c.resets >= 5,
            "{c:?}"
        );
    }
}

/// A golden model that ignores `accept` (fixed priority) is caught on `grant`.
#[test]
fn a_wrong_golden_model_is_caught_on_the_right_port() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = ArbiterBench::with_fixed_priority_golden(ArbiterParams { n: 7 }).unwrap();
    let (_, m) = run_caught(&mut b, CYCLES, SEED, tmp.path());
    assert_eq!(m.port, "grant", "{m}");
}

/// RTL whose pointer update forgets the positions before the grant
/// (`~g` instead of `~(g | (g - 1))`) is caught on `grant`.
#[test]
fn a_mutated_rtl_is_caught_on_the_right_port() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let q = ArbiterParams { n: 11 };
    let mut e = emit_arbiter(&q).unwrap();
    let top = e.modules.last_mut().unwrap();
    let good = "mask_d = ~(chosen | (chosen - one_n));";
    assert_eq!(top.1.matches(good).count(), 1, "mutation site not found");
    top.1 = top.1.replace(good, "mask_d = ~chosen;");
    let mut b = ArbiterBench::new(q).unwrap();
    let m = run_edited(&mut b, &e, CYCLES, SEED, tmp.path());
    assert_eq!(m.port, "grant", "{m}");
}

/// The fairness scoreboard alone (no golden comparison) passes the real RTL
/// and catches the same mutant as starvation of a continuous requester.
#[test]
fn the_fairness_scoreboard_alone_catches_starvation() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let q = ArbiterParams { n: 5 };
    let mut b = ArbiterBench::new(q.clone()).unwrap().scoreboard_only();
    run_clean(&mut b, CYCLES, SEED, tmp.path());
    assert_eq!(b.coverage().max_wait, 4);

    let mut e = emit_arbiter(&q).unwrap();
    let top = e.modules.last_mut().unwrap();
    top.1 = top.1.replace(
        "mask_d = ~(chosen | (chosen - one_n));",
        "mask_d = ~chosen;",
    );
    let dir = tmp.path().join("rtl");
    e.write_dir(&dir).unwrap();
    let mut o = test_options(CYCLES, SEED, tmp.path());
    o.rtl_dir = Some(dir);
    o.waveform_on_mismatch = false;
    let mut b = ArbiterBench::new(q).unwrap().scoreboard_only();
    let r = run(&mut b, &o).unwrap();
    let m = r
        .first
        .expect("a starving arbiter must fail the scoreboard");
    assert!(m.port.starts_with("fairness(req["), "{m}");
}
