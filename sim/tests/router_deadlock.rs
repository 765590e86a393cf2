//! Deadlock check at elaboration: acyclic channel dependencies for the
//! default schemes, a named cycle for one VC per class on a torus, and fast
//! enough for the largest network.

use exanet_sim::deadlock::{check, find_cycle};
use exanet_sim::router::{RouterParams, TieBreak};
use exanet_sim::topology::Topology;
use std::time::Instant;

fn with(dims: [usize; 3], wrap: [bool; 3], vpc: usize) -> RouterParams {
    RouterParams {
        topology: Topology::new(dims, wrap, 1).unwrap(),
        vcs_per_class: vpc,
        ..Default::default()
    }
}

#[test]
fn default_8x4x4_passes_and_one_vc_per_class_is_rejected() {
    check(&RouterParams::default()).unwrap();
    check(&with([4, 4, 4], [true; 3], 2)).unwrap();
    // One VC per class: the 8-rings chain 2-hop routes all the way round
    // under either tie rule; on 4-rings only ties to + do (with parity ties
    // a 1-VC ring of 4 is acyclic: the deadlock module's tests show it).
    for (dims, tie) in [
        ([8, 4, 4], TieBreak::Parity),
        ([8, 4, 4], TieBreak::Plus),
        ([4, 4, 4], TieBreak::Plus),
    ] {
        let p = RouterParams {
            tie_break: tie,
            ..with(dims, [true; 3], 1)
        };
        let e = check(&p).unwrap_err().to_string();
        assert!(
            e.contains("cyclic channel dependency"),
            "{dims:?} {tie:?}: {e}"
        );
        assert!(e.contains("vc"), "names channels: {e}");
    }
}

#[test]
fn the_16x16x16_torus_is_checked_quickly() {
    let t0 = Instant::now();
    check(&with([16, 16, 16], [true; 3], 2)).unwrap();
    let ok = t0.elapsed();
    let t1 = Instant::now();
    let cyc = find_cycle(&with([16, 16, 16], [true; 3], 1)).expect("one VC per class deadlocks");
    let bad = t1.elapsed();
    eprintln!(
        "16x16x16: acyclic check {ok:?}, cyclic check {bad:?} (cycle of {} channels)",
        cyc.len()
    );
    assert!(ok.as_secs_f64() < 10.0 && bad.as_secs_f64() < 10.0);
}
