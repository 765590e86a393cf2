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

/// Nanoseconds this thread has run on a CPU (the machine is shared: wall time overstates).
fn cpu_ns() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .next()
                .and_then(|x| x.parse::<f64>().ok())
        })
        .unwrap_or(f64::NAN)
}

fn speed(dims: [usize; 3], rate: f64, cycles: u64) -> f64 {
    let p = params(dims, rate);
    let mut net = Network::new(&p).unwrap();
    net.run_cycles(5_000); // warm up
    let ticks0 = net.router_ticks();
    let t0 = Instant::now();
    let c0 = cpu_ns();
    net.run_cycles(cycles);
    let cpu = (cpu_ns() - c0) / 1e9;
    let secs = t0.elapsed().as_secs_f64();
    let nodes = net.routers().len() as f64;
    let rcps = nodes * cycles as f64 / cpu;
    let r = net.report(0.0);
    let active = (net.router_ticks() - ticks0) as f64 / (nodes * cycles as f64);
    eprintln!(
        "{dims:?} rate {rate}: {cycles} cycles in {secs:.2} s wall, {cpu:.2} s CPU = {:.2} M router-cycles/s per core \
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
#[ignore = "speed figure; run in release"]
fn speed_4x4x4_saturated() {
    let mut p = params([4, 4, 4], 1.0);
    p.source_queue_limit = 4;
    p.workload = Workload::Synthetic {
        pattern: Pattern::BitComplement,
        rate: 1.0,
        sizes: PacketSizes::Fixed { bytes: 256 },
        class1_fraction: 0.0,
    };
    let mut net = Network::new(&p).unwrap();
    net.run_cycles(5_000);
    let t0 = Instant::now();
    let c0 = cpu_ns();
    let n = 200_000;
    net.run_cycles(n);
    let cpu = (cpu_ns() - c0) / 1e9;
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "[4, 4, 4] bit-complement saturated: {n} cycles in {secs:.2} s wall, {cpu:.2} s CPU = {:.2} M router-cycles/s per core, accepted {:.3}",
        64.0 * n as f64 / cpu / 1e6,
        net.report(0.0).total.accepted
    );
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
    let c0 = cpu_ns();
    net.run_cycles(1_000);
    let cpu = (cpu_ns() - c0) / 1e9;
    eprintln!(
        "32x32x32: built in {built:.1} s ({rss_built:.0} MiB), 1000 cycles at 0.05 in {:.1} s wall, {cpu:.1} s CPU \
         ({:.2} M router-cycles/s per core), peak RSS {:.0} MiB, {} packets live",
        t1.elapsed().as_secs_f64(),
        32768.0 * 1000.0 / cpu / 1e6,
        peak_rss_mib(),
        net.packets_live()
    );
}

/// Framed links (the default `[link]`: 10 Gb/s, 100 ns, BER `ber`) on a
/// torus at a light uniform load, with the ticks of quiet links skipped
/// or not: network cycles per CPU second and the share of link-end ticks
/// skipped.
fn framed_speed(dims: [usize; 3], rate: f64, ber: f64, cycles: u64, skip: bool) -> f64 {
    use exanet_sim::network::{FramedLinks, LinkKeys};
    let mut p = params(dims, rate);
    let k = LinkKeys {
        gbps: 10.0,
        latency_ns: 100.0,
        model: "framed".into(),
        frame_flits: 0,
        ber,
        burst_rate: 0.0,
        burst_bits: 16,
        down: vec![],
        down_nodes: vec![],
    };
    let nodes = p.router.topology.num_nodes();
    p.links = FramedLinks::from_keys(
        &k,
        p.router.flit_bits,
        p.router.num_vcs(),
        p.router.buffer_flits,
        16,
        156.25,
        nodes,
        1,
    )
    .unwrap();
    p.link_latency = 16;
    let mut net = Network::new(&p).unwrap();
    net.set_link_idle_skipping(skip);
    net.run_cycles(2_000); // warm up
    let s0 = net.link_ticks_skipped();
    let c0 = cpu_ns();
    net.run_cycles(cycles);
    let cpu = (cpu_ns() - c0) / 1e9;
    let ends = net.link_ends().len() as f64;
    let skipped = (net.link_ticks_skipped() - s0) as f64 / (ends * cycles as f64);
    let r = net.report(0.0);
    eprintln!(
        "{dims:?} framed, rate {rate}, BER {ber}, skipping {skip}: {cycles} cycles in {cpu:.2} s CPU = {:.0} cycles/s \
         ({:.0}% of link-end ticks skipped), accepted {:.4} flits/node/cycle",
        cycles as f64 / cpu,
        100.0 * skipped,
        r.total.accepted
    );
    assert!(r.error_count == 0 && r.deadlock.is_none());
    cycles as f64 / cpu
}

#[test]
#[ignore = "speed figure; run in release"]
fn framed_links_idle_skipping() {
    for skip in [false, true] {
        framed_speed([8, 4, 4], 0.1, 0.0, 10_000, skip);
        framed_speed([8, 4, 4], 0.01, 1e-5, 10_000, skip);
        framed_speed([16, 16, 16], 0.01, 0.0, 1_000, skip);
    }
}
