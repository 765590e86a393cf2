//! Co-simulation of `gth_lane`: two RTL GTH lane adapters back to back
//! through the golden GTH gearbox and line model, against the golden
//! adapters every cycle and a scoreboard, over the default matrix;
//! coverage of pauses, lock and slips; and proof that the bench catches
//! edited RTL (a dropped TXSEQUENCE pause, an undelayed TXSEQUENCE).

use exanet_hdl::transceiver::{emit_gth_lane_pair, GTH_LANE_TOP};
use exanet_sim::link::pcs::PcsParams;
use exanet_sim::point;
use exanet_tb::blocks::gth_lane::{info, GthLaneBench};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run_clean, run_edited, skip_without_verilator,
};

const SEED: u64 = 0x6A7E;

#[test]
fn every_matrix_point_matches_the_golden_model_and_scoreboard() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 3, 20_000, SEED, tmp.path());
}

#[test]
fn pauses_locks_slips_and_resyncs_are_reached() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b =
        GthLaneBench::new(point::parse("offset=40,ber=0,reset_every=6000").unwrap()).unwrap();
    run_clean(&mut b, 20_000, SEED, tmp.path());
    let c = b.coverage();
    println!("{c:?}");
    assert_reached(
        "gth_lane",
        &[
            ("TX pauses", c.pauses),
            ("lock acquisitions", c.locks),
            ("slips", c.slips),
            ("resyncs after reset", c.resyncs),
        ],
        4,
    );
    assert!(c.scoreboard_words > 20_000, "{c:?}");
}

/// The adapter's text with `from` replaced by `to`, run on the default point.
fn edited(from: &str, to: &str) -> exanet_tb::cosim::Mismatch {
    let tmp = tempfile::tempdir().unwrap();
    let mut b = GthLaneBench::new(point::parse("").unwrap()).unwrap();
    let mut e = emit_gth_lane_pair(&PcsParams::default()).unwrap();
    let (_, m) = e
        .modules
        .iter_mut()
        .find(|(n, _)| n == GTH_LANE_TOP)
        .unwrap();
    assert!(m.contains(from), "the line to edit, {from}:\n{m}");
    *m = m.replacen(from, to, 1);
    run_edited(&mut b, &e, 5_000, SEED, tmp.path())
}

#[test]
fn a_dropped_pause_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let mm = edited(
        "assign tx_tready = ~reset & ~pause;",
        "assign tx_tready = ~reset;",
    );
    assert_eq!(mm.port, "a_tx_tready", "{mm}");
}

#[test]
fn an_undelayed_txsequence_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let mm = edited(
        "assign gt_txsequence = seq_q;",
        "assign gt_txsequence = seq;",
    );
    assert_eq!(mm.port, "a_gt_txsequence", "{mm}");
}
