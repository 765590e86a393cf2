//! Co-simulation of `link_rx`: every matrix point against the golden
//! model with a scoreboard, the stimulus reaching every case, directed bad
//! input counted and harmless, and proof that the bench fails on a wrong
//! golden model or a hand-edited RTL.

use exanet_hdl::link::link_rx::emit_link_rx;
use exanet_sim::point;
use exanet_tb::blocks::link_rx::{info, LinkRxBench, LinkRxFault, LinkRxPoint, INJECT_KINDS};
use exanet_tb::cosim::{
    assert_matrix_matches, assert_reached, run_caught, run_clean, run_edited,
    skip_without_verilator,
};

const CYCLES: u64 = 100_000;
const SEED: u64 = 0x11C5;

fn bench(text: &str) -> LinkRxBench {
    LinkRxBench::new(point::parse::<LinkRxPoint>(text).unwrap()).unwrap()
}

#[test]
fn every_matrix_point_matches_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_matrix_matches((info().matrix)(), 2, CYCLES, SEED, tmp.path());
}

/// Flit widths and VC counts across their ranges, small and large frames,
/// small receive buffers, with errors and link drops.
#[test]
fn parameter_edges_match() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for text in [
        "flit_bits=64,vcs=8,frame_flits=1,rx_buffer_flits=2,ber=0.00002,downs=true",
        "flit_bits=256,vcs=1,frame_flits=63,rx_buffer_flits=64,ber=0.00001",
        "flit_bits=128,vcs=5,frame_flits=2,rx_buffer_flits=3,router_credits=1,downs=true",
        "flit_bits=64,vcs=2,latency=1,burst_rate=0.001,downs=true",
    ] {
        let mut b = bench(text);
        run_clean(&mut b, 40_000, SEED, tmp.path());
        assert!(b.coverage().delivered > 500, "{text}: {:?}", b.coverage());
    }
}

#[test]
fn stimulus_reaches_every_case() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let text = "flit_bits=128,vcs=2,frame_flits=6,rx_buffer_flits=8,router_credits=4,\
                ber=0.00003,downs=true,inject=all";
    let mut b = bench(text);
    run_clean(&mut b, 150_000, SEED, tmp.path());
    let c = b.coverage();
    println!("{c:?}");
    let mut counts = vec![
        ("flits delivered", c.delivered),
        ("frames", c.frames),
        ("bad frames", c.crc_errors),
        ("duplicates", c.duplicates),
        ("gaps", c.seq_errors),
        ("bad control words", c.ctrl_crc_errors),
        ("training errors", c.training_errors),
        ("nacks", c.nacks),
        ("link downs mid-frame", c.downs_mid_frame),
        ("training cycles", c.training_cycles),
        ("full buffer cycles", c.full_buffer_cycles),
        ("back-pressure cycles", c.backpressure_cycles),
        ("bad acks", c.bad_acks),
        ("mid-run resets", c.resets),
        ("overflows", c.overflows),
    ];
    for (k, n) in INJECT_KINDS.iter().zip(c.injected) {
        counts.push((k, n));
    }
    assert_reached(text, &counts, 2);
}

/// Each kind of directed bad input alone, error-free PHY: counted in its
/// own counter at least once per injection, and the scoreboard (checked
/// every cycle by the bench) sees every flit once, in order, intact.
#[test]
fn bad_input_is_counted_and_harmless() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for (i, kind) in INJECT_KINDS.iter().enumerate() {
        let text = format!("flit_bits=64,vcs=2,frame_flits=8,inject={kind}");
        let mut b = bench(&text);
        run_clean(&mut b, 60_000, SEED, tmp.path());
        // Counted over the whole run (the golden counters restart at each
        // mid-run reset; the coverage adds them up).
        let c = b.coverage();
        let n = c.injected[i];
        assert!(n >= 3, "{kind}: only {n} injected");
        let counted = match *kind {
            "crc" | "long" => c.crc_errors,
            "seq" => c.seq_errors,
            "dup" => c.duplicates,
            "ctrl" => c.ctrl_crc_errors,
            "train" => c.training_errors,
            "over" => c.overflows,
            _ => unreachable!(),
        };
        assert!(
            counted >= n,
            "{kind}: {n} injected, {counted} counted: {c:?}"
        );
        assert!(c.delivered > 1000, "{kind}: {c:?}");
        println!(
            "{kind}: {n} injected, {counted} counted, {} delivered",
            c.delivered
        );
    }
}

#[test]
fn a_wrong_golden_model_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for fault in [LinkRxFault::IgnoreCredits, LinkRxFault::LaneAlwaysUp] {
        let pt = point::parse::<LinkRxPoint>("flit_bits=64,vcs=2,downs=true").unwrap();
        let mut b = LinkRxBench::with_fault(pt, Some(fault)).unwrap();
        let (_, m) = run_caught(&mut b, CYCLES, SEED, tmp.path());
        println!("{fault:?}: {m}");
        assert!(m.cycle < CYCLES, "{fault:?}: {m}");
    }
}

/// The duplicate check edited out of the RTL (a duplicate counts as a
/// gap) is caught.
#[test]
fn a_mutated_rtl_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let pt = point::parse::<LinkRxPoint>("flit_bits=64,vcs=2,frame_flits=8,inject=dup").unwrap();
    let mut e = emit_link_rx(&pt.link().unwrap()).unwrap();
    let top = e.top.clone();
    let (_, m) = e.modules.iter_mut().find(|(n, _)| *n == top).unwrap();
    let from = "end else if (dseq < 6'd32) begin";
    assert!(m.contains(from), "the line to edit");
    *m = m.replace(from, "end else if (dseq != 6'd0) begin");
    let mut b = LinkRxBench::new(pt).unwrap();
    let m = run_edited(&mut b, &e, CYCLES, SEED, tmp.path());
    println!("{m}");
    assert!(
        m.port.starts_with("cnt_") || m.port.starts_with("st_"),
        "{m}"
    );
}

/// 2·10⁶ cycles at BER 1e-5 with link drops and every kind of bad input.
#[test]
#[ignore]
fn long_run() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut b = bench("flit_bits=128,vcs=4,ber=0.00001,burst_rate=0.0001,downs=true,inject=all");
    run_clean(&mut b, 2_000_000, SEED, tmp.path());
    println!("{:?}\n{:?}", b.coverage(), b.counters());
}
