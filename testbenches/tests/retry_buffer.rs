//! Co-simulation of `retry_buffer`: every matrix point against the golden
//! model, the stimulus reaching every case, and proof that the bench fails
//! on a wrong golden model or a hand-edited RTL.

use exanet_hdl::link::retry_buffer::emit_retry_buffer;
use exanet_sim::link::retry_buffer::RetryBufferParams;
use exanet_tb::blocks::retry_buffer::{info, RetryBufferBench, RetryBufferFault};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run_caught, run_clean, run_edited,
    skip_without_verilator,
};

const CYCLES: u64 = 150_000;
const SEED: u64 = 0x7E7B;

#[test]
fn every_matrix_point_matches_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 3, CYCLES, SEED, tmp.path());
}

#[test]
fn stimulus_reaches_every_case() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for words in [64, 256] {
        let mut b = RetryBufferBench::new(RetryBufferParams { words }).unwrap();
        run_clean(&mut b, CYCLES, SEED, tmp.path());
        let c = b.coverage();
        println!("words {words}: {c:?}");
        assert_reached(
            &format!("words {words}"),
            &[
                ("good acks", c.acks_ok),
                ("bad acks", c.acks_bad),
                ("refused pushes", c.pushes_refused),
                ("replays", c.replays),
                ("finished replays", c.replays_done),
                ("acks mid-replay", c.acks_mid_replay),
                ("resets", c.resets),
            ],
            3,
        );
    }
}

#[test]
fn a_wrong_golden_model_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for (fault, port) in [
        (RetryBufferFault::IgnoreAck, "ack_ok"),
        (RetryBufferFault::IgnoreTake, "replay"),
    ] {
        let mut b =
            RetryBufferBench::with_fault(RetryBufferParams { words: 64 }, Some(fault)).unwrap();
        let (_, m) = run_caught(&mut b, CYCLES, SEED, tmp.path());
        assert!(m.port.starts_with(port), "{fault:?}: {m}");
        assert!(m.cycle < 50_000, "{fault:?} found late: {m}");
    }
}

/// The replay pointer stepping by two instead of one, edited into the
/// emitted Verilog, is caught on a replay output.
#[test]
fn a_mutated_rtl_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let p = RetryBufferParams { words: 64 };
    let mut e = emit_retry_buffer(&p).unwrap();
    let (_, m) = e
        .modules
        .iter_mut()
        .find(|(n, _)| n == "exanet_retry_buffer_w64")
        .expect("top module");
    let from = "rp_n = rp2 + 7'd1;";
    assert!(m.contains(from), "the line to edit");
    *m = m.replace(from, "rp_n = rp2 + 7'd2;");
    let mut b = RetryBufferBench::new(p).unwrap();
    let m = run_edited(&mut b, &e, CYCLES, SEED, tmp.path());
    assert!(m.port.starts_with("replay"), "{m}");
}
