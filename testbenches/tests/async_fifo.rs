//! Two-clock co-simulation of `async_fifo`: every matrix point against the
//! golden model over several seeds, the corners the stimulus must reach,
//! and proof that the bench fails on a wrong golden model or a broken RTL.

use exanet_hdl::common::async_fifo::emit_async_fifo;
use exanet_sim::common::async_fifo::AsyncFifoParams;
use exanet_tb::blocks::async_fifo::{info, AsyncFifoBench};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run_caught, run_clean, run_edited,
    skip_without_verilator,
};

/// Edges (of either clock) per run.
const EDGES: u64 = 100_000;
const SEED: u64 = 0xA5F1;

fn p(width: u32, depth: u32, sync_stages: u32) -> AsyncFifoParams {
    AsyncFifoParams {
        width,
        depth,
        sync_stages,
    }
}

#[test]
fn every_matrix_point_matches_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 3, EDGES, SEED, tmp.path());
}

/// Full, empty, coincident edges, overflow, underflow, reset windows and
/// several clock regimes at every matrix point, and words really crossed.
#[test]
fn stimulus_reaches_every_corner() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for q in [
        p(65, 16, 2),
        p(8, 4, 2),
        p(32, 8, 3),
        p(128, 64, 4),
        p(64, 1024, 2),
    ] {
        let mut b = AsyncFifoBench::new(q.clone()).unwrap();
        run_clean(&mut b, EDGES, SEED, tmp.path());
        let c = b.coverage();
        println!("{q:?}: {c:?}");
        assert_reached(
            &format!("{q:?}"),
            &[
                ("full edges", c.full_edges),
                ("empty edges", c.empty_edges),
                ("coincident edges", c.coincident_edges),
                ("overflows", c.overflows),
                ("underflows", c.underflows),
                ("reset windows", c.resets),
                ("clock regimes", c.regimes),
            ],
            3,
        );
        assert!(
            c.words > EDGES / 10,
            "{q:?}: only {} words crossed",
            c.words
        );
    }
}

/// A golden model with a longer synchronizer is caught where the flags
/// first differ (`empty` or `rd_count` after the first push).
#[test]
fn a_wrong_golden_model_is_caught_on_the_right_port() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = AsyncFifoBench::with_golden(p(32, 8, 2), p(32, 8, 3)).unwrap();
    let (r, m) = run_caught(&mut b, EDGES, SEED, tmp.path());
    assert_eq!(r.mismatches, 1);
    assert!(
        ["empty", "rd_count", "full", "wr_count"].contains(&m.port.as_str()),
        "{m}"
    );
}

/// One-token RTL bugs, loaded as external Verilog, are caught: a `full`
/// test that compares only the low pointer bits, and a write pointer that
/// crosses in binary instead of Gray.
#[test]
fn a_mutated_rtl_is_caught_on_the_right_port() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let q = p(32, 8, 2);
    let e = emit_async_fifo(&q).unwrap();
    let top = e.modules.last().unwrap().1.clone();
    let good = "is_full = wgray_q == (wsync_q ^ top2);";
    assert_eq!(
        top.matches(good).count(),
        1,
        "mutation site not found:\n{top}"
    );
    let mut bad = e.clone();
    bad.modules.last_mut().unwrap().1 = top.replace(good, "is_full = wgray_q == wsync_q;");
    let mut b = AsyncFifoBench::new(q.clone()).unwrap();
    let m = run_edited(&mut b, &bad, EDGES, SEED, tmp.path());
    assert!(m.port == "full" || m.port == "empty", "{m}");

    let good = "rsync_d = wgray_q;";
    assert_eq!(
        top.matches(good).count(),
        1,
        "mutation site not found:\n{top}"
    );
    let mut bad = e.clone();
    bad.modules.last_mut().unwrap().1 = top.replace(good, "rsync_d = wbin_q;");
    let mut b = AsyncFifoBench::new(q).unwrap();
    let m = run_edited(&mut b, &bad, EDGES, SEED, tmp.path());
    assert!(["empty", "rd_count"].contains(&m.port.as_str()), "{m}");
}

/// `reset_sync` against its golden model at every edge: asserted at
/// power-on, following a randomly toggling input `stages` edges later.
#[test]
fn reset_sync_matches_its_golden_model() {
    use exanet_hdl::common::async_fifo::emit_reset_sync;
    use exanet_sim::common::async_fifo::ResetSync;
    use exanet_sim::rng::Rng;
    use exanet_tb::verilator::{BuildOptions, Sim};
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for stages in 2..=4 {
        let e = emit_reset_sync(stages).unwrap();
        let opts = BuildOptions {
            cache_dir: tmp.path().to_path_buf(),
            ..BuildOptions::default()
        };
        let mut sim = Sim::from_emitted(&e, &opts).unwrap();
        let (clock, input, output) = (
            sim.port_w("clock", 1).unwrap(),
            sim.port_w("reset_in", 1).unwrap(),
            sim.port_w("reset", 1).unwrap(),
        );
        let mut gold = ResetSync::new(stages).unwrap();
        let mut rng = Rng::new(SEED);
        let (mut rises, mut falls, mut last) = (0, 0, true);
        clock.set(0);
        sim.eval();
        for edge in 0..20_000 {
            let r = rng.chance(if last { 0.9 } else { 0.1 });
            clock.set(0);
            input.set(r as u64);
            sim.eval();
            assert_eq!(
                output.get() == 1,
                gold.output(),
                "stages {stages} edge {edge}"
            );
            rises += (!last && gold.output()) as u32;
            falls += (last && !gold.output()) as u32;
            last = gold.output();
            clock.set(1);
            sim.eval();
            gold.edge(r);
        }
        assert!(rises > 10 && falls > 10, "stages {stages}: {rises} {falls}");
    }
}
