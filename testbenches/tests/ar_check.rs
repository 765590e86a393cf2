//! Co-simulation of `ar_check` (the allreduce engine's registers and
//! descriptor check) against the golden NI: every matrix point, every
//! status and register case reached, and proof that the bench fails on a
//! broken RTL.

use exanet_hdl::allreduce::ar_check::{ar_check_top_name, emit_ar_check};
use exanet_tb::blocks::ar_check::{info, ArCheckBench, ArCheckPoint};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run, run_clean, run_edited, skip_without_verilator,
    test_options,
};

const CYCLES: u64 = 40_000;

/// Cycles of a run on an edited RTL (a cached model, about 1 s per
/// 40,000 cycles; the box-wrap edit needs a member slot whose box wraps
/// around x, drawn once in tens of thousands of cycles).
const EDITED_CYCLES: u64 = 100_000;

/// Seed of every run.
const SEED: u64 = 0xA4C1;

#[test]
fn every_matrix_point_matches_the_golden_ni() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 3, CYCLES, SEED, tmp.path());
}

/// The stimulus ends checks with every status, takes and refuses ENABLE,
/// hits locked fields, and reads.
#[test]
fn stimulus_reaches_every_case() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = ArCheckBench::new(ArCheckPoint::default()).unwrap();
    run_clean(&mut b, CYCLES, SEED, tmp.path());
    let c = b.coverage();
    println!("{c:?}");
    assert_reached(
        "8x4x4, 4 slots",
        &[
            ("OK", c.status[0]),
            ("BAD_COMM", c.status[1]),
            ("NOT_MEMBER", c.status[2]),
            ("BAD_TYPE", c.status[3]),
            ("BAD_COUNT", c.status[4]),
            ("BAD_ADDR", c.status[5]),
            ("ENABLE taken", c.enables - c.enables_refused),
            ("ENABLE refused", c.enables_refused),
            ("writes to an enabled slot refused", c.locked_writes),
            ("reads", c.reads),
            ("collectives walked", c.walks),
            ("  with the large-vector schedule", c.walks_rsag),
            ("  of a rank count not a power of two", c.walks_non_pow2),
            ("steps compared", c.walk_steps),
            ("reset pulses mid-run", c.mid_resets),
        ],
        3,
    );
}

/// RTL edits, each caught on the port it breaks: the scratch need in
/// elements instead of bytes, the box's wrap ignored in this node's rank,
/// the ENABLE check without the scratch-range test, the misalignment
/// test dropped, a descriptor's slot number not checked against the slot
/// arrays (4 slots: slot 4 + k would be slot k), and in the collective's
/// walk the partner's box digits swapped (y for z), the digits of 1 (Q's
/// start) wrong in a box of x extent 1, and the partner's y coordinate
/// without the box's origin.
#[test]
fn a_mutated_rtl_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let pt = ArCheckPoint::default();
    let top = ar_check_top_name(&pt.params());
    for (from, to, port) in [
        (
            "wire [38:0] q_need = {3'd0, sched_total} << q_e;",
            "wire [38:0] q_need = {3'd0, sched_total};",
            "status",
        ),
        ("me_x + 5'd8 - w_ox", "me_x - w_ox", "status"),
        (
            "(w_box_ok && w_rank_ok && w_scr_ok)",
            "(w_box_ok && w_rank_ok)",
            "wr_ok",
        ),
        ("(q_src[2:0] & q_emask) != 3'd0 ||", "", "status"),
        (
            "st_partner = {p_dx, p_dy, p_dz};",
            "st_partner = {p_dx, p_dz, p_dy};",
            "st_partner",
        ),
        (
            "q_ex_s == 5'd1 ? 4'd0 : 4'd1};",
            "q_ex_s == 5'd0 ? 4'd0 : 4'd1};",
            "st_",
        ),
        (
            "wire [4:0] p_sy = {1'b0, q_org[7:4]} + {1'b0, p_dy};",
            "wire [4:0] p_sy = {1'b0, p_dy};",
            "st_dest",
        ),
        // Slot arrays sized by the communicators: a slot number past them
        // would alias a configured slot without the range test.
        ("wire q_comm_ok = q_in && ", "wire q_comm_ok = ", "status"),
    ] {
        let mut e = emit_ar_check(&pt.params()).unwrap();
        let (_, m) = e
            .modules
            .iter_mut()
            .find(|(n, _)| *n == top)
            .expect("top module");
        assert_eq!(m.matches(from).count(), 1, "`{from}`");
        *m = m.replace(from, to);
        let mut b = ArCheckBench::new(pt.clone()).unwrap();
        let mm = run_edited(&mut b, &e, EDITED_CYCLES, SEED, tmp.path());
        assert!(mm.port.starts_with(port), "`{to}`: {mm}");
    }
}

/// A long run (several seeds); speed is reported, not asserted.
#[test]
#[ignore = "long: 400 k cycles per point and seed; cargo test -p exanet-tb --test ar_check -- --ignored"]
fn long_runs_over_several_seeds() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for b in (info().matrix)() {
        let text = b.point();
        for seed in [1, 2, 3, 4] {
            let mut b = (info().point)(&text).unwrap();
            let r = run(b.as_mut(), &test_options(400_000, seed, tmp.path())).unwrap();
            println!("{}", r.summary());
            assert_eq!(r.mismatches, 0, "{:?}", r.first);
        }
    }
}
