//! Co-simulation of `axil_split`: every matrix point against the golden
//! model with the transaction scoreboard, the corners the stimulus must
//! reach, and proof that the bench fails on a wrong golden model or a
//! broken RTL.

use exanet_hdl::common::axil_split::emit_axil_split;
use exanet_sim::common::axil_split::AxilSplitParams;
use exanet_tb::blocks::axil_split::{info, AxilSplitBench};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run_caught, run_clean, run_edited,
    skip_without_verilator,
};

const CYCLES: u64 = 100_000;

/// Seed of every run.
const SEED: u64 = 0xA71;

fn p(addr_bits: u32, split: u64) -> AxilSplitParams {
    AxilSplitParams { addr_bits, split }
}

#[test]
fn every_matrix_point_matches_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 6, CYCLES, SEED, tmp.path());
}

/// Writes and reads reach both sides, AW and W arrive in every order, the
/// master handshakes split, requests land next to `split`, responses wait
/// at the slave port, and resets happen.
#[test]
fn stimulus_reaches_every_corner() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for q in [p(16, 0xF000), p(12, 0xFFC)] {
        let mut b = AxilSplitBench::new(q.clone()).unwrap();
        run_clean(&mut b, 200_000, SEED, tmp.path());
        let c = b.coverage();
        println!("{q:?}: {c:?}");
        assert_reached(
            &format!("{q:?}"),
            &[
                ("writes to m0", c.writes[0]),
                ("writes to m1", c.writes[1]),
                ("reads from m0", c.reads[0]),
                ("reads from m1", c.reads[1]),
                ("AW before W", c.aw_first),
                ("W before AW", c.w_first),
                ("AW with W", c.aw_w_together),
                ("split master handshakes", c.split_issue),
                ("requests at the boundary", c.at_boundary),
                ("response stalls", c.resp_stalls),
            ],
            20,
        );
        assert!(c.resets >= 2, "{q:?}: only {} resets", c.resets);
    }
}

/// A golden model that puts the boundary one page lower sends requests in
/// 0xE000..0xF000 to `m1` where the RTL sends them to `m0`, and masks
/// `m1`'s address with one bit more: caught on a master port.
#[test]
fn a_wrong_golden_model_is_caught_on_a_master_port() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = AxilSplitBench::with_golden(p(16, 0xF000), p(16, 0xE000)).unwrap();
    let (_, m) = run_caught(&mut b, CYCLES, SEED, tmp.path());
    println!("{m}");
    assert!(
        m.port.starts_with("m0_") || m.port.starts_with("m1_"),
        "{m}"
    );
}

/// RTL whose `m1` read address is not made relative to `split` is caught
/// on `m1_araddr`.
#[test]
fn a_mutated_rtl_is_caught_on_the_right_port() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let q = p(16, 0xF000);
    let mut e = emit_axil_split(&q).unwrap();
    let top = e.modules.last_mut().unwrap();
    let site = "m1_araddr = raddr_q & win_mask;";
    assert_eq!(top.1.matches(site).count(), 1, "mutation site not found");
    top.1 = top.1.replace(site, "m1_araddr = raddr_q;");
    let mut b = AxilSplitBench::new(q).unwrap();
    let m = run_edited(&mut b, &e, CYCLES, SEED, tmp.path());
    assert_eq!(m.port, "m1_araddr", "{m}");
}
