//! Co-simulation of `link_status`: AXI4-Lite reads with random timing
//! against the golden model at 1, 6 and 16 links, and proof that the bench
//! catches a hand-edited RTL.

use exanet_hdl::link::link_status::emit_link_status;
use exanet_sim::point;
use exanet_tb::blocks::link_status::{info, LinkStatusBench};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run_clean, run_edited, skip_without_verilator,
};

const SEED: u64 = 0x57A7;

#[test]
fn every_matrix_point_matches_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 3, 50_000, SEED, tmp.path());
}

#[test]
fn reads_writes_and_errors_are_all_reached() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = LinkStatusBench::new(point::parse("links=6").unwrap()).unwrap();
    run_clean(&mut b, 20_000, SEED, tmp.path());
    let c = b.coverage();
    println!("{c:?}");
    assert_reached(
        "link_status",
        &[
            ("good reads", c.reads_ok),
            ("refused reads", c.reads_err),
            ("refused writes", c.writes),
            ("held read responses", c.read_stalls),
        ],
        100,
    );
    // Mid-run resets (one cycle in 2,000) land with a response pending.
    assert_reached(
        "link_status",
        &[("resets with a response pending", c.resets_busy)],
        2,
    );
}

#[test]
fn a_mutated_rtl_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = LinkStatusBench::new(point::parse("links=6").unwrap()).unwrap();
    let mut e = emit_link_status(6).unwrap();
    let (_, m) = e.modules.last_mut().unwrap();
    let from = "(word - link - one)";
    assert!(m.contains(from), "the line to edit:\n{m}");
    *m = m.replace(from, "(word - link)");
    let mm = run_edited(&mut b, &e, 20_000, SEED, tmp.path());
    assert_eq!(mm.port, "s_rdata", "{mm}");
}
