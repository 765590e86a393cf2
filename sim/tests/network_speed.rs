//! Speed and memory figures of the network simulator (ignored by default; run
//! with `cargo test --release -p exanet-sim --test network_speed -- --ignored --nocapture`).

use exanet_sim::network::{Network, NetworkParams, Workload};
use exanet_sim::router::RouterParams;
use exanet_sim::topology::Topology;
use exanet_sim::traffic::{PacketSizes, Pattern};
use std::time::Instant;

fn params(dims: [usize; 3], rate: f64) -> NetworkParams {
    NetworkParams {
        router: RouterParams {
            topology: Topology::new(dims, [true; 3], 1).unwrap(),
            ..Default::default()
        },
        workload: Workload::Synthetic {
            pattern: Pattern::Uniform,
            rate,
            sizes: PacketSizes::Fixed { bytes: 256 },
            class1_fraction: 0.0,
        },
        source_queue_limit: 16,
        ..Default::default()
    }
}

fn peak_rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<f64>().ok())
        .map_or(f64::NAN, |k| k / 1024.0)
}

fn speed(dims: [usize; 3], rate: f64, cycles: u64) -> f64 {
    let p = params(dims, rate);
    let mut net = Network::new(&p).unwrap();
    net.run_cycles(5_000); // warm up
    let ticks0 = net.router_ticks();
    let t0 = Instant::now();
    net.run_cycles(cycles);
    let secs = t0.elapsed().as_secs_f64();
    let nodes = net.routers().len() as f64;
    let rcps = nodes * cycles as f64 / secs;
    let r = net.report(0.0);
    let active = (net.router_ticks() - ticks0) as f64 / (nodes * cycles as f64);
    eprintln!(
        "{dims:?} rate {rate}: {cycles} cycles in {secs:.2} s = {:.2} M router-cycles/s \
         ({:.0}% of router-cycles ticked), accepted {:.3} flits/node/cycle",
        rcps / 1e6,
        100.0 * active,
        r.total.accepted
    );
    assert!(r.error_count == 0 && r.deadlock.is_none());
    rcps
}

#[test]
#[ignore = "speed figure; run in release"]
fn speed_8x8x8() {
    speed([8, 8, 8], 0.05, 50_000);
    speed([8, 8, 8], 0.2, 20_000);
    speed([8, 8, 8], 0.5, 20_000);
}

#[test]
#[ignore = "memory figure; run in release"]
fn memory_32x32x32() {
    let t0 = Instant::now();
    let p = params([32, 32, 32], 0.05);
    let mut net = Network::new(&p).unwrap();
    let built = t0.elapsed().as_secs_f64();
    let rss_built = peak_rss_mib();
    let t1 = Instant::now();
    net.run_cycles(2_000);
    eprintln!(
        "32x32x32: built in {built:.1} s ({rss_built:.0} MiB), 2000 cycles at 0.05 in {:.1} s, peak RSS {:.0} MiB, {} packets live",
        t1.elapsed().as_secs_f64(),
        peak_rss_mib(),
        net.packets_live()
    );
}
