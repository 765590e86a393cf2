//! Co-simulation of `ar_sched` (the allreduce step sequencer) against the
//! golden schedule and layout: every matrix point, every case reached, and
//! proof that the bench fails on a broken RTL.

use exanet_hdl::allreduce::ar_sched::{emit_ar_sched, ArSchedParams};
use exanet_tb::blocks::ar_sched::{info, ArSchedBench};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run, run_clean, run_edited, skip_without_verilator,
    test_options,
};

const CYCLES: u64 = 100_000;

/// Seed of every run.
const SEED: u64 = 0xA5C4;

#[test]
fn every_matrix_point_matches_the_golden_schedule() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 3, CYCLES, SEED, tmp.path());
}

/// The stimulus reaches both schedules, non-power-of-two counts, every
/// phase, illegal starts and abandoned lists.
#[test]
fn stimulus_reaches_every_case() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = ArSchedBench::new(ArSchedParams { max_ranks: 128 }).unwrap();
    run_clean(&mut b, CYCLES, SEED, tmp.path());
    let c = b.coverage();
    println!("{c:?}");
    assert_reached(
        "max_ranks 128",
        &[
            ("recursive doubling lists", c.rd_lists),
            ("reduce-scatter + allgather lists", c.rsag_lists),
            ("non-power-of-two lists", c.non_pow2_lists),
            ("pre steps", c.phases[0]),
            ("reduce steps", c.phases[1]),
            ("gather steps", c.phases[2]),
            ("post steps", c.phases[3]),
            ("illegal starts", c.bad_starts),
            ("abandoned lists", c.abandoned),
            ("steps with partner digits checked", c.dig_steps),
            ("  of a box with x extent 1", c.dig_steps_x1),
            ("  pre / post (distance Q)", c.dig_steps_q),
        ],
        3,
    );
}

/// RTL edits, each caught on the port it breaks: the partner's gather
/// offset without its earlier gather ranges, the halving split rounded the
/// other way, an extra rank's post receive left out of its scratch need,
/// and the partner's y digit without the carry out of x.
#[test]
fn a_mutated_rtl_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let p = ArSchedParams { max_ranks: 128 };
    for (from, to, port) in [
        ("+ wsum + theirs_wide - wl_wide;", "+ wsum;", "their_off"),
        (
            "wire [31:0] mid = cur_lo + half;",
            "wire [31:0] mid = cur_hi - half;",
            "send_hi",
        ),
        (
            "acc <= xtra_q ? acc + n_wide : acc;",
            "acc <= acc;",
            "total",
        ),
        (
            "wire [5:0] pay = {2'd0, rdig[7:4]} + {2'd0, dstep[7:4]} + {5'd0, pax_c};",
            "wire [5:0] pay = {2'd0, rdig[7:4]} + {2'd0, dstep[7:4]};",
            "partner_dig",
        ),
    ] {
        let mut e = emit_ar_sched(&p).unwrap();
        let (_, m) = e
            .modules
            .iter_mut()
            .find(|(n, _)| n == "exanet_ar_sched_r128")
            .expect("top module");
        assert_eq!(m.matches(from).count(), 1, "`{from}`");
        *m = m.replace(from, to);
        let mut b = ArSchedBench::new(p.clone()).unwrap();
        let mm = run_edited(&mut b, &e, CYCLES, SEED, tmp.path());
        assert!(mm.port.starts_with(port), "`{to}`: {mm}");
    }
}

/// A long run (several seeds); speed is reported, not asserted.
#[test]
#[ignore = "long: 2 M cycles per point; cargo test -p exanet-tb --test ar_sched -- --ignored"]
fn long_runs_over_several_seeds() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for max_ranks in [6, 128, 4096] {
        for seed in [1, 2, 3, 4] {
            let mut b = ArSchedBench::new(ArSchedParams { max_ranks }).unwrap();
            let r = run(&mut b, &test_options(500_000, seed, tmp.path())).unwrap();
            println!("{}", r.summary());
            assert_eq!(r.mismatches, 0, "{:?}", r.first);
        }
    }
}
