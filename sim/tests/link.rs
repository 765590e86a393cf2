//! Link layer golden models: scoreboard runs (every flit exactly once, in
//! order, intact) across BERs, bursts, CC gaps and link-down events, and
//! bad input injected straight into `link_rx` / `link_tx`.

use exanet_sim::link::link_rx::{LinkRx, RxInputs};
use exanet_sim::link::link_tx::{LinkTx, TxInputs};
use exanet_sim::link::pair::{LinkPair, PairOptions};
use exanet_sim::link::phy::{PhyParams, PhySchedule};
use exanet_sim::link::*;
use exanet_sim::router::flit::Flit;

fn check_clean(pair: &LinkPair, what: &str) {
    for from in 0..2 {
        let r = pair.report(from);
        assert_eq!(r.errors, 0, "{what}, from end {from}: {:?}", r.first_error);
        assert_eq!(r.sent, r.delivered, "{what}, from end {from}: all delivered");
    }
}

fn run(p: &LinkParams, phy: PhyParams, sched: PhySchedule, o: PairOptions, cycles: u64) -> LinkPair {
    let mut pair = LinkPair::new(p, &phy, sched, o).unwrap();
    let quiet = pair.run(cycles, 200_000);
    assert!(quiet, "drained: {:?} {:?}", pair.counters(0), pair.counters(1));
    pair
}

#[test]
fn error_free_link_trains_and_delivers_everything() {
    let p = LinkParams::default();
    let pair = run(&p, PhyParams::default(), PhySchedule::default(), PairOptions::default(), 20_000);
    check_clean(&pair, "error-free");
    assert!(pair.report(0).sent > 4000 && pair.report(1).sent > 4000);
    for e in 0..2 {
        let c = pair.counters(e);
        assert_eq!(pair.state(e), LinkState::Up);
        assert_eq!(c.crc_errors + c.retransmissions + c.timeouts + c.bad_acks, 0, "{c:?}");
        assert!(c.frames_sent > 100 && c.frames_received > 100, "{c:?}");
    }
}

#[test]
fn scoreboard_holds_across_bers_bursts_and_link_downs() {
    for (k, &(flit_bits, vcs)) in [(128, 4), (64, 2), (256, 3)].iter().enumerate() {
        let p = LinkParams::sized(flit_bits, vcs, 16, 32);
        for (j, ber) in [1e-6, 1e-5, 1e-4].into_iter().enumerate() {
            let phy = PhyParams {
                ber,
                burst_rate: 1e-4,
                cc_period: 5000,
                cc_len: 3,
                seed: 11 + (10 * k + j) as u64,
                ..Default::default()
            };
            let sched = PhySchedule {
                down: vec![(9_000, 9_400), (21_000, 21_050)],
            };
            let o = PairOptions {
                rate: 0.45,
                drain: 0.7,
                seed: 5 + j as u64,
                ..Default::default()
            };
            let pair = run(&p, phy, sched, o, 40_000);
            let what = format!("{flit_bits} b, {vcs} VCs, BER {ber}");
            check_clean(&pair, &what);
            let c = pair.counters(0).merged(&pair.counters(1));
            assert_eq!(c.link_downs, 4, "{what}: {c:?}");
            assert!(c.retransmissions > 0, "{what}: {c:?}");
            if ber >= 1e-5 {
                assert!(c.crc_errors > 0, "{what}: {c:?}");
            }
            println!("{what}: {c:?}");
        }
    }
}
