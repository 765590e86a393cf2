//! Co-simulation of `pcs66`: RTL TX → serial line (bit offset, BER, noise
//! bursts, gearbox slips) → RTL RX against the golden PCS every cycle and
//! a scoreboard, over the default matrix; coverage of lock, slips, errors
//! and lock losses; and proof that the bench catches edited RTL (a wrong
//! scrambler tap, a wrong lock-loss threshold).

use exanet_hdl::link::pcs66::{emit_pcs66, PcsParams};
use exanet_sim::point;
use exanet_tb::blocks::pcs66::{info, Pcs66Bench};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run_clean, run_edited, skip_without_verilator,
};

const SEED: u64 = 0x9C566;

#[test]
fn every_matrix_point_matches_the_golden_model_and_scoreboard() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 2, 40_000, SEED, tmp.path());
}

#[test]
fn lock_slips_errors_and_lock_losses_are_all_reached() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b =
        Pcs66Bench::new(point::parse("slip_wait=8,offset=40,ber=0.0002,burst_every=4000").unwrap())
            .unwrap();
    run_clean(&mut b, 40_000, SEED, tmp.path());
    let c = b.coverage();
    println!("{c:?}");
    assert_reached(
        "pcs66",
        &[
            ("lock acquisitions", c.locks),
            ("slips", c.slips),
            ("corrupted words predicted", c.corrupted),
            ("dropped words", c.dropped),
            ("lock losses", c.lock_losses),
        ],
        5,
    );
    assert!(c.words > 30_000, "{c:?}");
}

fn edited(from: &str, to: &str, point_text: &str) -> exanet_tb::cosim::Mismatch {
    let tmp = tempfile::tempdir().unwrap();
    let mut b = Pcs66Bench::new(point::parse(point_text).unwrap()).unwrap();
    let mut e = emit_pcs66(&PcsParams {
        slip_wait: point::parse::<exanet_tb::blocks::pcs66::Pcs66Point>(point_text)
            .unwrap()
            .slip_wait,
    })
    .unwrap();
    let (_, m) = e.modules.last_mut().unwrap();
    assert!(m.contains(from), "the line to edit, {from}:\n{m}");
    *m = m.replacen(from, to, 1);
    run_edited(&mut b, &e, 20_000, SEED, tmp.path())
}

#[test]
fn a_wrong_scrambler_tap_is_caught_on_txdata() {
    if skip_without_verilator() {
        return;
    }
    let mm = edited(
        "localparam  tap_a = 7'b100111;",
        "localparam  tap_a = 7'b100110;",
        "",
    );
    assert_eq!(mm.port, "gt_txdata", "{mm}");
}

#[test]
fn a_wrong_lock_loss_threshold_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let mm = edited(
        "localparam  loss_invalid = 5'b10000;",
        "localparam  loss_invalid = 5'b10001;",
        "slip_wait=4,offset=65,ber=0,burst_every=3000",
    );
    assert!(
        ["block_lock", "gt_rxslip", "rx_valid", "cnt_lock_losses"].contains(&mm.port.as_str()),
        "{mm}"
    );
}
