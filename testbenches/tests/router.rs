//! Co-simulation of `router`: every matrix point against the golden model
//! with the harness scoreboard, coverage of what the stimulus exercised, and
//! proof that the bench fails on a wrong golden model.

use exanet_sim::router::RouterParams;
use exanet_sim::router::{Coords, RouteCompute};
use exanet_tb::blocks::router::{info, matrix_points, parse_point, RouterBench};
use exanet_tb::cosim::{run, skip_without_verilator, test_options};

/// Cycles per matrix point (`exanet cosim router --cycles N` runs longer).
const CYCLES: u64 = 100_000;

/// Matrix points run by `cargo test` (each is a Verilator build of about a
/// CPU minute): together they cover torus and mesh, 1 and 2 classes, 2 and 3
/// VCs, 64-, 128- and 256-bit flits, 1 and 2 local ports, and each value of
/// `dateline` (entry, wrap), `tie_break` (parity, plus), `vc_select`
/// (flow, free) and `allocator` (separable, islip with 2 and 3 rounds,
/// wavefront); and the generated default router's rules on odd and
/// non-power-of-two rings (6x3x2), where the modulo chain's correction
/// steps fire. The others run
/// under `exanet cosim router` and `cargo test -- --ignored`.
const TESTED_POINTS: usize = 5;

/// The first matrix points: zero mismatches, a clean scoreboard, and the
/// stimulus reached what it should (traffic on every output, deliveries,
/// drops of bad packets, protocol errors, resets, several router
/// positions, every (input port, input VC, destination offset)).
/// (In two halves, so the test threads build and run them side by side.)
#[test]
fn main_matrix_points_match_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let points = matrix_points();
    assert!(points.len() >= 6);
    assert_eq!((info().matrix)().len(), points.len());
    check_points(0..TESTED_POINTS / 2);
}

/// The second half of [`main_matrix_points_match_the_golden_model`].
#[test]
fn main_matrix_points_second_half_match_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    check_points(TESTED_POINTS / 2..TESTED_POINTS);
}

/// The rest of the matrix (odd rings, a 16-node ring with 4 local ports, a
/// ring of 2, 4 VCs per class on 8x4): as `exanet cosim router` runs them.
#[test]
#[ignore = "four more Verilator builds; `exanet cosim router` runs every point"]
fn other_matrix_points_match_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    check_points(TESTED_POINTS..matrix_points().len());
}

fn check_points(range: std::ops::Range<usize>) {
    let tmp = tempfile::tempdir().unwrap();
    let points = matrix_points();
    for (i, text) in points.iter().enumerate().take(range.end).skip(range.start) {
        let (p, node) = parse_point(text).unwrap();
        let mut bench = RouterBench::new(p.clone(), node).unwrap();
        let r = run(
            &mut bench,
            &test_options(CYCLES, 0x0e7a + i as u64, tmp.path()),
        )
        .unwrap();
        println!("{}", r.summary());
        assert_eq!(r.mismatches, 0, "{}: {:?}", r.point, r.first);
        assert_eq!(r.cycles, CYCLES);
        let c = bench.coverage();
        println!("  {c:?}");
        // Every (input port, input VC, destination offset) was reached by a
        // good packet, at several router positions.
        assert_eq!(c.combos_hit, c.combos_total, "{text}: {c:?}");
        assert!(c.combos_total >= p.num_ports() * p.num_vcs());
        let mut nodes = c.nodes.clone();
        assert_eq!(nodes[0], node);
        nodes.sort_unstable();
        nodes.dedup();
        assert!(nodes.len() >= 4, "{text}: positions {nodes:?}");
        // Every port some route uses (at a node the router ran at) carries
        // traffic; the others carry none (a mesh edge node's outward ports;
        // on a ring of 2 with ties to + the minus port, with parity ties the
        // port the destination's parity does not pick): asked of the golden
        // route compute.
        let t = &p.topology;
        let mut used = vec![false; p.num_ports()];
        for rc in nodes.iter().map(|&n| RouteCompute::new(&p, n)) {
            for dst in 0..t.num_nodes() {
                let d = t.coords(dst);
                for fpga in 0..t.local_ports {
                    let dest = Coords {
                        x: d[0] as u8,
                        y: d[1] as u8,
                        z: d[2] as u8,
                        fpga: fpga as u8,
                    };
                    for in_port in 0..p.num_ports() {
                        for in_vc in 0..p.num_vcs() {
                            if let Ok(r) = rc.compute(dest, in_port, in_vc) {
                                used[r.port as usize] = true;
                            }
                        }
                    }
                }
            }
        }
        for (port, &n) in c.flits_out[..p.num_ports()].iter().enumerate() {
            if used[port] {
                assert!(n > 100, "{text}: only {n} flits left port {port}");
            } else {
                assert_eq!(n, 0, "{text}: flits left unused port {port}");
            }
        }
        assert!(c.delivered > 1000, "{text}: {c:?}");
        assert!(c.bad_injected > 20 && c.dropped > 20, "{text}: {c:?}");
        assert!(c.flit_errors_injected > 10, "{text}: {c:?}");
        assert!(c.resets >= 1, "{text}: {c:?}");
        // Narrow counters wrapped at least once, checked against the model.
        if p.counter_bits <= 4 {
            assert!(c.max_counter >= 1 << p.counter_bits, "{text}: {c:?}");
        }
    }
}

/// A golden model routing in another dimension order disagrees on some output.
#[test]
fn a_wrong_golden_dimension_order_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // The mesh point (its traced build, for the waveform, is the cheapest).
    let (p, node) = parse_point(matrix_points()[1]).unwrap();
    assert_eq!(p.dim_order, [2, 1, 0]);
    let wrong = RouterParams {
        dim_order: [0, 1, 2],
        ..p.clone()
    };
    let mut bench = RouterBench::with_golden(p, node, wrong, node).unwrap();
    let r = run(&mut bench, &test_options(20_000, 7, tmp.path())).unwrap();
    println!("{}", r.summary());
    let m = r.first.expect("the wrong dimension order must be caught");
    assert!(m.port.starts_with("out_"), "{m}");
    assert!(r.waveform.is_some_and(|w| w.exists()));
}

/// A golden model that reserves fewer credits for a head (a smaller maximum
/// packet) starts packets the RTL holds back: caught on an output.
#[test]
fn a_wrong_golden_cut_through_threshold_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (p, node) = parse_point(matrix_points()[1]).unwrap();
    let wrong = RouterParams {
        max_packet_flits: p.max_packet_flits - 4,
        ..p.clone()
    };
    let mut bench = RouterBench::with_golden(p, node, wrong, node).unwrap();
    let r = run(&mut bench, &test_options(50_000, 8, tmp.path())).unwrap();
    println!("{}", r.summary());
    let m = r
        .first
        .expect("the wrong virtual cut-through threshold must be caught");
    assert!(
        m.port.starts_with("out_") || m.port.starts_with("credit_out_"),
        "{m}"
    );
}
