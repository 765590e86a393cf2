//! Co-simulation of `link_tx`: the RTL inside a golden link at every matrix
//! point, the stimulus reaching replays by nack and by timeout, link drops
//! mid-frame, PHY gaps and training, forged acks and credit returns that
//! change nothing but `bad_acks`, and proof that the bench fails on a wrong
//! golden model or a hand-edited RTL.

use exanet_hdl::link::link_tx::emit_link_tx;
use exanet_sim::point;
use exanet_tb::blocks::link_tx::{info, LinkTxBench, LinkTxFault, LinkTxPoint};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run_caught, run_clean, run_edited,
    skip_without_verilator,
};

const CYCLES: u64 = 60_000;
const SEED: u64 = 0x11_7A;

fn pt(text: &str) -> LinkTxPoint {
    point::parse(text).unwrap()
}

#[test]
fn every_matrix_point_matches_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 2, CYCLES, SEED, tmp.path());
}

#[test]
fn stimulus_reaches_every_case() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = LinkTxBench::new(pt("flit_bits=128,vcs=4,latency_cycles=4,ber=1e-4")).unwrap();
    run_clean(&mut b, 200_000, SEED, tmp.path());
    let c = b.coverage();
    println!("{c:?}");
    assert_reached(
        "link_tx",
        &[
            ("nack replays", c.nack_replays),
            ("timeouts", c.timeouts),
            ("downs mid-frame", c.down_mid_frame),
            ("ready gaps", c.ready_gaps),
            ("training cycles", c.training),
            ("frames", c.frames),
            ("delivered flits", c.delivered),
            ("mid-run resets", c.resets),
            ("silent-peer cycles", c.silent),
            ("timeouts while the peer is silent", c.silent_timeouts),
        ],
        2,
    );
}

/// Acks of frames never sent and credit returns for more flits than sent
/// are counted in `bad_acks` and change nothing else (the bench compares
/// against a golden model that never saw them, and the RTL against the
/// golden model that did).
#[test]
fn forged_acks_and_credits_are_counted_and_ignored() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = LinkTxBench::new(pt("flit_bits=64,vcs=2,latency_cycles=3,forge=true")).unwrap();
    run_clean(&mut b, CYCLES, SEED, tmp.path());
    let c = b.coverage();
    assert!(c.bad_acks >= 20, "{c:?}");
    assert!(c.delivered > 1000, "{c:?}");
}

#[test]
fn a_wrong_golden_model_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for fault in [LinkTxFault::IgnoreReady, LinkTxFault::IgnorePeerCtrl] {
        let mut b = LinkTxBench::with_fault(pt("flit_bits=64,vcs=2,latency_cycles=2"), Some(fault))
            .unwrap();
        let (_, m) = run_caught(&mut b, CYCLES, SEED, tmp.path());
        assert!(
            m.port.starts_with("phy_tx")
                || m.port.starts_with("cnt_")
                || m.port.starts_with("credit"),
            "{fault:?}: {m}"
        );
        assert!(m.cycle < CYCLES, "{fault:?}: {m}");
    }
}

/// One bit of the per-word CRC inverted in the emitted Verilog is caught
/// on the PHY data.
#[test]
fn a_mutated_rtl_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let p = pt("flit_bits=64,vcs=2,latency_cycles=2");
    let mut b = LinkTxBench::new(p).unwrap();
    let mut e = emit_link_tx(b.params()).unwrap();
    let top = e.top.clone();
    let (_, m) = e
        .modules
        .iter_mut()
        .find(|(n, _)| *n == top)
        .expect("top module");
    let from = "assign crc_nx[0] = ";
    assert!(m.contains(from), "the line to edit");
    *m = m.replace(from, "assign crc_nx[0] = ~");
    let m = run_edited(&mut b, &e, CYCLES, SEED, tmp.path());
    assert!(m.port.starts_with("phy_tx_data"), "{m}");
}

/// Long run at BER 1e-5 with link drops (`cargo test ... -- --ignored`).
#[test]
#[ignore]
fn long_run_matches() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for (i, text) in ["flit_bits=128,vcs=4", "flit_bits=256,vcs=8,forge=true"]
        .iter()
        .enumerate()
    {
        let mut b = LinkTxBench::new(pt(text)).unwrap();
        run_clean(&mut b, 2_000_000, SEED + i as u64, tmp.path());
        println!("{text}: {:?}", b.coverage());
    }
}
