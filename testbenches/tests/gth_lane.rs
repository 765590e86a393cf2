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

/// Bad-header episodes at each lock reach the scoreboard: headers flipped,
/// words lost under them (and no more), every lock followed by an episode.
#[test]
fn bad_header_episodes_at_lock_are_reached() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let text = (info().matrix)().last().unwrap().point();
    assert!(text.contains("lock_errors=7"), "{text}");
    let mut b = GthLaneBench::new(point::parse(&text).unwrap()).unwrap();
    run_clean(&mut b, 20_000, SEED, tmp.path());
    let c = b.coverage();
    println!("{c:?}");
    assert_eq!(c.episodes, c.locks, "{c:?}");
    assert_reached(
        "gth_lane episodes",
        &[
            ("lock acquisitions", c.locks),
            ("episodes", c.episodes),
            ("resyncs after reset", c.resyncs),
        ],
        4,
    );
    // Each episode flips one header in 7 of 4 windows of 64 headers.
    assert!(c.episode_flips >= c.episodes * 30, "{c:?}");
    assert!(c.episode_losses > 0 && c.scoreboard_words > 20_000, "{c:?}");
}

/// The PCS's first locked window must be 64 headers long like every other:
/// with its count not cleared at lock acquisition (a first window of 128),
/// an episode's bad headers, 9 or 10 per window of 64, add up to the loss
/// threshold of 16 within the long window and the RTL loses lock where
/// the golden adapter keeps it.
#[test]
fn a_long_first_locked_window_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let text = (info().matrix)().last().unwrap().point();
    let mut b = GthLaneBench::new(point::parse(&text).unwrap()).unwrap();
    let mut e = emit_gth_lane_pair(&PcsParams::default()).unwrap();
    let (_, m) = e
        .modules
        .iter_mut()
        .find(|(_, m)| m.contains(LOCK_ACQUISITION))
        .unwrap_or_else(|| panic!("no module holds {LOCK_ACQUISITION}"));
    *m = m.replacen(LOCK_ACQUISITION, LOCK_ACQUISITION_KEEPING_COUNT, 1);
    let mm = run_edited(&mut b, &e, 8_000, SEED, tmp.path());
    println!("{mm}");
    assert!(mm.port.ends_with("channel_up"), "{mm}");
}

/// The PCS's lock acquisition (rust-hdl's text of `exanet_hdl::link::pcs66`)
/// and the mutant that keeps the header count (`exanet mutate gth_lane`,
/// BENCHMARKS.md "Mutation analysis: kill rates per block").
const LOCK_ACQUISITION: &str = "lock_d = 1'b1;\n                        sh_cnt_d = zero7;";
const LOCK_ACQUISITION_KEEPING_COUNT: &str = "lock_d = 1'b1;";
