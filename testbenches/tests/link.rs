//! Co-simulation `link`: both ends of a cable in RTL (`link_tx` + `link_rx`
//! each) with the golden PHY between them, against the golden link, cycle
//! by cycle, plus a scoreboard of every flit — at BER 0, 1e-5 and 1e-4,
//! across link-down events, with a PHY that never comes up, and with a
//! hand-edited RTL the bench must catch.

use exanet_hdl::link::link_pair::emit_link_pair;
use exanet_sim::link::LinkState;
use exanet_sim::point;
use exanet_tb::blocks::link::{info, LinkBench, LinkPoint};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run_clean, run_edited, skip_without_verilator,
};

const CYCLES: u64 = 50_000;
const SEED: u64 = 0x14_11;

fn pt(text: &str) -> LinkPoint {
    point::parse(text).unwrap()
}

#[test]
fn every_matrix_point_matches_the_golden_link() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 6, CYCLES, SEED, tmp.path());
}

/// Several seeds and BERs, each with link drops mid-traffic; injection
/// (20 % of a flit per cycle each way, random drain) stops before the end,
/// so the link drains: everything sent was delivered exactly once (the
/// scoreboard checked each flit on arrival).
#[test]
fn seeds_and_bers_with_link_downs_deliver_everything() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for (i, ber) in ["0", "0.00001", "0.0001"].iter().enumerate() {
        let text = format!("ber={ber},inject_cycles=40000,rate_pct=20");
        let mut b = LinkBench::new(pt(&text)).unwrap();
        run_clean(&mut b, 100_000, SEED + 7 * i as u64, tmp.path());
        let c = b.coverage();
        println!("ber {ber}: {c:?}");
        assert_eq!(c.errors, 0);
        assert_eq!(c.in_flight, 0, "ber {ber}: flits never delivered");
        assert_eq!(c.sent, c.delivered, "ber {ber}");
        assert_reached(
            &text,
            &[
                ("flits", c.delivered / 1000),
                ("link downs", c.link_downs),
                ("training cycles", c.state_cycles[1]),
                ("stray credits counted (bad_acks)", c.bad_acks),
            ],
            1,
        );
        if *ber != "0" {
            assert_reached(
                &text,
                &[
                    ("crc errors", c.crc_errors),
                    ("retransmissions", c.retransmissions),
                ],
                1,
            );
        }
    }
}

/// A PHY that never comes up: both ends stay Down (read on the RTL's state
/// ports), nothing is delivered, and each router gets no credit back once
/// `link_tx`'s buffers are full (the port is back-pressured).
#[test]
fn a_phy_that_never_comes_up_back_pressures_the_port() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = LinkBench::new(pt("vcs=2,never_up=true")).unwrap();
    run_clean(&mut b, 20_000, SEED, tmp.path());
    let c = b.coverage();
    println!("{c:?}");
    assert_eq!(b.rtl_state(0), LinkState::Down);
    assert_eq!(b.rtl_state(1), LinkState::Down);
    assert_eq!(c.state_cycles, [20_000, 0, 0]);
    assert_eq!(c.delivered, 0);
    assert_eq!(c.credits, 0, "no credit back to a router");
    let cap = 2 * 2 * b.params().tx_buffer_flits as u64;
    assert_eq!(
        c.sent, cap,
        "both routers fill link_tx's buffers, then stop"
    );
}

/// A one-character edit of end 1's `link_rx` copy (the CRC check of one
/// bit) is caught, naming the port and end.
#[test]
fn a_mutated_rtl_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = LinkBench::new(pt("ber=0.0001,latency_cycles=4")).unwrap();
    let mut e = emit_link_pair(b.params()).unwrap();
    let top = e.top.clone();
    let (_, m) = e
        .modules
        .iter_mut()
        .find(|(n, _)| *n == top)
        .expect("top module");
    // End 1's flit output: its VC bit 0 forced low.
    let from = ".out_vc(e1_out_vc)";
    assert!(m.contains(from), "the line to edit");
    *m = m.replace(from, ".out_vc(e1_out_vc_raw)");
    *m = m.replace(
        "assign e1_state",
        "wire [3:0] e1_out_vc_raw;\nassign e1_out_vc = e1_out_vc_raw & 4'b1110;\nassign e1_state",
    );
    let m = run_edited(&mut b, &e, CYCLES, SEED, tmp.path());
    println!("{m}");
    assert!(
        m.port.starts_with("e1_out_vc") || m.port.starts_with("scoreboard"),
        "{m}"
    );
}

/// Reliability: toward 10^7 cycles at BER 1e-5 with link drops, then
/// drained: 0 flits lost, duplicated or corrupted (`cargo test -p exanet-tb
/// --release --test link -- --ignored --nocapture`; figure in BENCHMARKS.md).
#[test]
#[ignore]
fn reliability_ten_million_cycles() {
    if skip_without_verilator() {
        return;
    }
    let cycles: u64 = std::env::var("EXANET_LINK_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let tmp = tempfile::tempdir().unwrap();
    let text = format!(
        "ber=0.00001,inject_cycles={},rate_pct=35,drain_pct=100",
        cycles - 100_000
    );
    let mut b = LinkBench::new(pt(&text)).unwrap();
    let t0 = std::time::Instant::now();
    let r = run_clean(&mut b, cycles, SEED, tmp.path());
    let c = b.coverage();
    println!("{}", r.summary());
    println!(
        "reliability: {} cycles, {} flits sent, {} delivered, {} errors, {} in flight, \
         {} crc errors, {} retransmissions, {} timeouts, {} link downs, {:.1} s",
        c.cycles,
        c.sent,
        c.delivered,
        c.errors,
        c.in_flight,
        c.crc_errors,
        c.retransmissions,
        c.timeouts,
        c.link_downs,
        t0.elapsed().as_secs_f64()
    );
    assert_eq!((c.errors, c.in_flight), (0, 0));
    assert_eq!(c.sent, c.delivered);
}
