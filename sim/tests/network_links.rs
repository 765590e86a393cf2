//! The network simulator with framed links (golden `link_tx` → PHY →
//! `link_rx` on every router-to-router link): every packet delivered
//! exactly once, in order and intact, at BER 0 and under bit errors, across
//! a scheduled link-down window, deterministically; and bad `[link]` keys
//! refused with the key named.

use exanet_sim::network::{FramedLinks, LinkKeys, Network, NetworkParams, Report, Workload};
use exanet_sim::router::RouterParams;
use exanet_sim::topology::Topology;
use exanet_sim::traffic::{PacketSizes, Pattern};

fn keys() -> LinkKeys {
    LinkKeys {
        gbps: 10.0,
        latency_ns: 100.0,
        model: "framed".into(),
        frame_flits: 0,
        ber: 0.0,
        burst_rate: 0.0,
        burst_bits: 16,
        down: vec![],
        down_nodes: vec![],
    }
}

fn params(dims: [usize; 3], k: &LinkKeys, rate: f64, seed: u64) -> NetworkParams {
    let wrap = dims.map(|d| d > 1);
    let router = RouterParams {
        topology: Topology::new(dims, wrap, 1).unwrap(),
        ..Default::default()
    };
    let nodes = router.topology.num_nodes();
    let links = FramedLinks::from_keys(
        k,
        router.flit_bits,
        router.num_vcs(),
        router.buffer_flits,
        16,
        156.25,
        nodes,
        seed,
    )
    .unwrap();
    NetworkParams {
        router,
        link_latency: 16,
        links,
        workload: Workload::Synthetic {
            pattern: Pattern::Uniform,
            rate,
            sizes: PacketSizes::Fixed { bytes: 256 },
            class1_fraction: 0.0,
        },
        warmup: 1_000,
        window: 6_000,
        drain_max: 40_000,
        source_queue_limit: 16,
        seed,
        ..Default::default()
    }
}

fn run(p: &NetworkParams) -> Report {
    let mut net = Network::new(p).unwrap();
    let r = net.run();
    assert!(
        net.drain_all(60_000),
        "every packet delivered after the run"
    );
    for _ in 0..20_000 {
        if net.quiet() {
            break;
        }
        net.step();
    }
    assert!(net.quiet(), "links and routers empty at the end");
    r
}

fn check_clean(r: &Report, what: &str) {
    assert!(
        r.clean(),
        "{what}: {:?} {:?} {:?}",
        r.errors,
        r.deadlock,
        r.unfinished
    );
    assert!(r.total.packets > 50, "{what}: {} packets", r.total.packets);
    let l = r.links.as_ref().expect("framed links report");
    assert_eq!(
        l.counters.overflows, 0,
        "{what}: link buffers never overflow"
    );
    assert_eq!(l.counters.bad_acks, 0, "{what}: no bogus acks or credits");
}

#[test]
fn small_tori_deliver_everything_at_ber_0_and_1e_5() {
    for dims in [[4, 2, 2], [3, 1, 1]] {
        for ber in [0.0, 1e-5] {
            let k = LinkKeys { ber, ..keys() };
            let r = run(&params(dims, &k, 0.3, 7));
            let what = format!("{dims:?} ber {ber}");
            check_clean(&r, &what);
            let l = r.links.as_ref().unwrap();
            assert!(l.counters.frames_received > 0, "{what}");
            if ber == 0.0 {
                assert_eq!(
                    l.counters.crc_errors + l.counters.retransmissions,
                    0,
                    "{what}"
                );
            } else {
                assert!(
                    l.counters.crc_errors > 0 && l.counters.retransmissions > 0,
                    "{what}: {l:?}"
                );
            }
        }
    }
}

/// Node 0's links go down mid-traffic for 3,000 cycles: traffic through
/// them stalls (the watchdog does not call it a deadlock), resumes from the
/// retry buffers, and nothing is lost, duplicated or reordered.
#[test]
fn a_link_down_window_stalls_and_recovers_with_nothing_lost() {
    let k = LinkKeys {
        down: vec![vec![3_000, 6_000]],
        down_nodes: vec![0],
        ..keys()
    };
    let mut p = params([4, 2, 2], &k, 0.3, 3);
    p.watchdog = 1_000; // shorter than the outage: only the link rule keeps it quiet
    let r = run(&p);
    check_clean(&r, "down window");
    let l = r.links.as_ref().unwrap();
    // Node 0 has 6 links (a 2-ring's two ports are two cables to the same
    // neighbour); each end counts its own link-down.
    assert_eq!(l.counters.link_downs, 12, "{l:?}");
    assert!(
        l.counters.retransmissions > 0,
        "unacked frames replayed: {l:?}"
    );
    assert!(l.not_up_cycles >= 3_000, "{l:?}");
    // The same run without the outage is faster: the window cost latency.
    let calm = run(&params([4, 2, 2], &keys(), 0.3, 3));
    assert!(r.total.latency.max > calm.total.latency.max + 2_000);
}

/// A link that never comes back leaves its packets undelivered, reported
/// as unfinished (not as a deadlock).
#[test]
fn a_link_that_stays_down_is_not_a_deadlock() {
    let k = LinkKeys {
        down: vec![vec![500, u64::MAX]],
        down_nodes: vec![1],
        ..keys()
    };
    let mut p = params([3, 1, 1], &k, 0.2, 5);
    p.drain_max = 5_000;
    p.watchdog = 1_000;
    let r = Network::new(&p).unwrap().run();
    assert!(r.deadlock.is_none());
    assert!(r.unfinished > 0 && !r.clean());
    assert_eq!(r.error_count, 0, "{:?}", r.errors);
}

#[test]
fn same_seed_same_run_other_seed_other_errors() {
    let k = LinkKeys {
        ber: 1e-5,
        burst_rate: 1e-5,
        ..keys()
    };
    let a = run(&params([4, 2, 2], &k, 0.25, 11));
    let b = run(&params([4, 2, 2], &k, 0.25, 11));
    assert_eq!(a.total, b.total);
    assert_eq!(a.links, b.links);
    let c = run(&params([4, 2, 2], &k, 0.25, 12));
    assert_ne!(
        a.links.as_ref().unwrap().counters,
        c.links.as_ref().unwrap().counters
    );
}

/// Skipping the ticks of quiet links changes nothing: the same report,
/// link counters included, with and without, over seeds, BERs, loads and
/// a down window (whose links are never skipped), and the skipping does
/// happen.
#[test]
fn idle_links_skipped_or_ticked_give_the_same_run() {
    let points = [
        (0.0, 0.02, 21, false),
        (1e-5, 0.05, 22, false),
        (1e-4, 0.01, 23, false),
        (1e-5, 0.02, 24, true),
    ];
    for (ber, rate, seed, down) in points {
        let k = LinkKeys {
            ber,
            burst_rate: if ber > 0.0 { 1e-5 } else { 0.0 },
            down: if down {
                vec![vec![3_000, 3_500]]
            } else {
                vec![]
            },
            down_nodes: if down { vec![1] } else { vec![] },
            ..keys()
        };
        let p = params([4, 2, 2], &k, rate, seed);
        let mut runs = Vec::new();
        for skip in [false, true] {
            let mut net = Network::new(&p).unwrap();
            net.set_link_idle_skipping(skip);
            let mut r = net.run();
            r.router_cycles_per_s = 0.0;
            let skipped = net.link_ticks_skipped();
            assert_eq!(skipped > 0, skip, "seed {seed}: {skipped} ticks skipped");
            runs.push(r);
        }
        check_clean(&runs[0], "ticked every cycle");
        assert_eq!(runs[0], runs[1], "ber {ber}, rate {rate}, seed {seed}");
    }
}

/// `model = "ideal"` gives no link layer: the old wire, as before.
#[test]
fn ideal_model_is_the_wire() {
    let k = LinkKeys {
        model: "ideal".into(),
        ..keys()
    };
    let p = params([4, 2, 2], &k, 0.2, 1);
    assert!(p.links.is_none());
    let r = run(&p);
    assert!(r.clean() && r.links.is_none());
}

#[test]
fn bad_keys_are_refused_naming_key_and_value() {
    let cases: Vec<(LinkKeys, &str)> = vec![
        (LinkKeys { ber: 0.5, ..keys() }, "link.ber = 0.5"),
        (
            LinkKeys {
                ber: -1e-9,
                ..keys()
            },
            "link.ber = -1e-9",
        ),
        (
            LinkKeys {
                model: "fast".into(),
                ..keys()
            },
            "link.model = \"fast\": must be one of \"framed\", \"ideal\"",
        ),
        (
            LinkKeys {
                burst_bits: 65,
                ..keys()
            },
            "link.burst_bits = 65",
        ),
        (
            LinkKeys {
                burst_rate: 2.0,
                ..keys()
            },
            "link.burst_rate = 2.0",
        ),
        (
            LinkKeys {
                frame_flits: 64,
                ..keys()
            },
            "link.frame_flits = 64",
        ),
        (
            LinkKeys {
                down: vec![vec![100, 200], vec![150, 300]],
                ..keys()
            },
            "link.down[1] = [150, 300]: must start at or after the previous window's end (200)",
        ),
        (
            LinkKeys {
                down: vec![vec![300, 200]],
                ..keys()
            },
            "link.down[0] = [300, 200]: must have from < until",
        ),
        (
            LinkKeys {
                down: vec![vec![1, 2, 3]],
                ..keys()
            },
            "link.down[0] = [1, 2, 3]",
        ),
        (
            LinkKeys {
                down: vec![vec![1, 2]],
                down_nodes: vec![16],
                ..keys()
            },
            "link.down_nodes[0] = 16: must be a router index below 16",
        ),
        (
            LinkKeys {
                down_nodes: vec![1],
                ..keys()
            },
            "link.down_nodes = [1]",
        ),
    ];
    for (k, want) in cases {
        let e = FramedLinks::from_keys(&k, 128, 4, 32, 16, 156.25, 16, 1).unwrap_err();
        assert!(e.to_string().contains(want), "{e} / want {want}");
    }
    // A good point derives the link layer from the router and the clock.
    let f = FramedLinks::from_keys(
        &LinkKeys {
            gbps: 5.0,
            frame_flits: 20,
            ..keys()
        },
        128,
        4,
        32,
        16,
        156.25,
        16,
        1,
    )
    .unwrap()
    .unwrap();
    assert_eq!(f.link.frame_flits, 20);
    assert_eq!((f.link.tx_buffer_flits, f.link.router_credits), (32, 32));
    assert!((f.words_per_cycle - 0.5).abs() < 1e-12);
    assert!(f.link.rx_buffer_flits * 2 >= f.link.credit_round_trip());
}

/// A 5 Gb/s link (half a word per cycle at 156.25 MHz) carries half the
/// flits of a 10 Gb/s one when saturated.
#[test]
fn a_slower_link_is_a_slower_phy() {
    let fast = run(&params([3, 1, 1], &keys(), 1.0, 2));
    let slow = run(&params(
        [3, 1, 1],
        &LinkKeys {
            gbps: 5.0,
            ..keys()
        },
        0.6,
        2,
    ));
    let (f, s) = (fast.links.unwrap(), slow.links.unwrap());
    assert!(s.words_max <= 0.5 + 1e-9, "{s:?}");
    assert!(f.words_max > 0.9, "{f:?}");
    assert!(
        s.flits_mean < 0.6 * f.flits_mean,
        "{} vs {}",
        s.flits_mean,
        f.flits_mean
    );
}
