//! Figures of one router for BENCHMARKS.md, measured on the golden model
//! (which the RTL matches cycle for cycle: `exanet cosim router`).
//!
//! `cargo bench -p exanet-sim --bench router_figures [-- --cycles N]`
//!
//! - zero-load latency: a single packet into an idle router, cycles from its
//!   head flit on the input to its head flit on the output;
//! - saturation throughput: every input VC always holds a packet (random
//!   size 1..=max flits), sinks return a credit every cycle, output ports
//!   chosen uniformly (destinations routed to them); accepted flits per
//!   cycle per port, with and without the local ports;
//! - model speed in router-cycles per second at that load.
//!
//! The default point is measured with every `router.allocator` (iSLIP with
//! 1..=3 iterations), the other points with the default allocator.

use exanet_sim::router::harness::{HarnessOptions, RouterHarness};
use exanet_sim::router::{Allocator, Router, RouterParams, VcSelect};
use exanet_sim::topology::Topology;
use std::time::Instant;

fn point(dims: [usize; 3], flit_bits: usize, vcs_per_class: usize) -> RouterParams {
    let hf = if flit_bits == 64 { 2 } else { 1 };
    RouterParams {
        topology: Topology::new(dims, [true; 3], 1).expect("topology"),
        flit_bits,
        vcs_per_class,
        max_packet_flits: hf + 256 * 8 / flit_bits + 1,
        buffer_flits: 2 * (hf + 256 * 8 / flit_bits + 1),
        ..Default::default()
    }
}

/// Cycles from a lone head flit entering to it leaving.
fn zero_load_latency(p: &RouterParams, node: usize) -> u64 {
    let opt = HarnessOptions {
        start: 1.0,
        bubble: 0.0,
        drain: 1.0,
        ..Default::default()
    };
    let mut h = RouterHarness::new(p, node, opt, 7);
    let mut r = Router::new(p, node).expect("router");
    // One packet: inject until the first head enters, then stop injecting.
    let mut entered = None;
    for t in 0..1000u64 {
        let inp = h.drive().clone();
        if entered.is_none() && inp.flit_valid != 0 {
            // Keep only the lowest port's flit on this first cycle.
            entered = Some(t);
            h.stop_injection();
        }
        let out = r.outputs();
        if let Some(t0) = entered {
            if t > t0 && out.flit.iter().flatten().any(|f| f.head) {
                return t - t0;
            }
        }
        h.advance(&out);
        r.tick(&inp);
    }
    panic!("no packet left the router in 1000 cycles");
}

fn main() {
    let mut cycles = 200_000u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--cycles" {
            cycles = args.next().and_then(|v| v.parse().ok()).unwrap_or(cycles);
        }
    }
    println!("| router | header-in to header-out (cycles, zero load) | saturation, all ports (flits/cycle/port) | saturation, network ports only | golden model (M router-cycles/s) |");
    println!("|---|---|---|---|---|");
    let with = |allocator: Allocator, alloc_iterations: usize| RouterParams {
        allocator,
        alloc_iterations,
        ..Default::default()
    };
    // where the allocator matters most: more VCs, any free output VC
    let wide = |allocator: Allocator, alloc_iterations: usize| RouterParams {
        vcs_per_class: 4,
        vc_select: VcSelect::Free,
        ..with(allocator, alloc_iterations)
    };
    let d = RouterParams::default();
    let dname = format!(
        "default: 8x4x4 torus, 6+1 ports, 2x2 VCs, 128 b ({}{})",
        d.allocator.name(),
        if d.allocator == Allocator::Islip {
            format!(", {} iterations", d.alloc_iterations)
        } else {
            String::new()
        }
    );
    for (name, p) in [
        (dname, d),
        ("default, separable".into(), with(Allocator::Separable, 1)),
        (
            "default, islip, 1 iteration".into(),
            with(Allocator::Islip, 1),
        ),
        (
            "default, islip, 2 iterations".into(),
            with(Allocator::Islip, 2),
        ),
        (
            "default, islip, 3 iterations".into(),
            with(Allocator::Islip, 3),
        ),
        ("default, wavefront".into(), with(Allocator::Wavefront, 1)),
        (
            "default with 2x4 VCs, vc_select free, separable".into(),
            wide(Allocator::Separable, 1),
        ),
        (
            "default with 2x4 VCs, vc_select free, islip, 2 iterations".into(),
            wide(Allocator::Islip, 2),
        ),
        (
            "default with 2x4 VCs, vc_select free, islip, 3 iterations".into(),
            wide(Allocator::Islip, 3),
        ),
        (
            "default with 2x4 VCs, vc_select free, wavefront".into(),
            wide(Allocator::Wavefront, 1),
        ),
        ("8x4x4, 2x2 VCs, 64 b flits".into(), point([8, 4, 4], 64, 2)),
        (
            "8x4x4, 2x3 VCs, 256 b flits".into(),
            point([8, 4, 4], 256, 3),
        ),
    ] {
        let node = 0;
        let lat = zero_load_latency(&p, node);
        let opt = HarnessOptions {
            start: 1.0,
            bubble: 0.0,
            drain: 1.0,
            uniform_ports: true,
            ..Default::default()
        };
        let mut h = RouterHarness::new(&p, node, opt, 11);
        let mut r = Router::new(&p, node).expect("router");
        let ports = p.num_ports();
        let dir = p.topology.num_dir_ports();
        let warm = cycles / 10;
        let mut out_flits = vec![0u64; ports];
        let t0 = Instant::now();
        for t in 0..warm + cycles {
            let inp = h.drive().clone();
            let out = r.outputs();
            if t >= warm {
                for (k, f) in out.flit[..ports].iter().enumerate() {
                    out_flits[k] += f.is_some() as u64;
                }
            }
            h.advance(&out);
            r.tick(&inp);
        }
        let secs = t0.elapsed().as_secs_f64();
        assert!(h.report().errors.is_empty(), "{:?}", h.report().errors);
        let all = out_flits.iter().sum::<u64>() as f64 / (cycles * ports as u64) as f64;
        let net = out_flits[..dir].iter().sum::<u64>() as f64 / (cycles * dir as u64) as f64;
        println!(
            "| {name} | {lat} | {all:.3} | {net:.3} | {:.2} |",
            (warm + cycles) as f64 / secs / 1e6
        );
    }
}
