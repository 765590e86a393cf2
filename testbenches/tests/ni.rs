//! Co-simulation of `ni` (transmit side): every matrix point against the
//! golden model, coverage of what the stimulus exercised, and proof that
//! the bench fails on a wrong golden model or an edited RTL.

use exanet_sim::ni::NiParams;
use exanet_tb::blocks::ni::{info, matrix_points, parse_point, NiBench};
use exanet_tb::cosim::{run, verilator_missing_reason, CosimOptions};

/// Cycles per matrix point (`exanet cosim ni --cycles N` runs longer).
const CYCLES: u64 = 40_000;

fn opts(cycles: u64, seed: u64, fail_dir: &std::path::Path) -> CosimOptions {
    CosimOptions {
        cycles,
        seed,
        fail_dir: fail_dir.to_path_buf(),
        ..Default::default()
    }
}

fn skip() -> bool {
    if let Some(reason) = verilator_missing_reason() {
        println!("{reason}");
        return true;
    }
    false
}

/// Every matrix point: zero mismatches, and the stimulus reached every
/// packet type, refusals, SLVERRs, 4 KiB splits, credit stalls and resets.
#[test]
fn every_matrix_point_matches_the_golden_model() {
    if skip() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let points = matrix_points();
    assert!(points.len() >= 2);
    assert_eq!((info().matrix)().len(), points.len());
    for (i, text) in points.iter().enumerate() {
        let p = parse_point(text).unwrap();
        let mut bench = NiBench::new(p).unwrap();
        let r = run(&mut bench, &opts(CYCLES, 0x41 + i as u64, tmp.path())).unwrap();
        println!("{}", r.summary());
        assert_eq!(r.mismatches, 0, "{}: {:?}", r.point, r.first);
        assert_eq!(r.cycles, CYCLES);
        let c = bench.coverage();
        println!("  {c:?}");
        assert!(
            c.writes > 100 && c.read_reqs > 10 && c.messages > 4,
            "{text}: {c:?}"
        );
        assert!(
            c.refused_doorbells > 5 && c.refused_sends > 5,
            "{text}: {c:?}"
        );
        assert!(c.axil_reads > 100 && c.slverr > 30, "{text}: {c:?}");
        assert!(c.split_reads > 0, "{text}: {c:?}");
        assert!(c.credit_stalls > 0, "{text}: {c:?}");
        assert!(c.resets >= 2, "{text}: {c:?}");
    }
}

/// A golden model with another packet size disagrees on a flit.
#[test]
fn a_wrong_golden_model_is_caught() {
    if skip() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let p = parse_point(matrix_points()[0]).unwrap();
    let wrong = NiParams {
        max_payload_bytes: 128,
        ..p.ni.clone()
    };
    let mut bench = NiBench::with_golden(p, wrong).unwrap();
    let r = run(&mut bench, &opts(20_000, 7, tmp.path())).unwrap();
    println!("{}", r.summary());
    let m = r.first.expect("the wrong packet size must be caught");
    assert!(
        m.port.starts_with("out_") || m.port.starts_with("s_rdata"),
        "{m}"
    );
    assert!(r.waveform.is_some_and(|w| w.exists()));
}

/// Edited RTL (one realignment shift off by a byte, or the first flag
/// inverted) is caught.
#[test]
fn an_edited_rtl_is_caught() {
    if skip() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let text = matrix_points()[1];
    let p = parse_point(text).unwrap();
    let e = exanet_hdl::ni::emit_ni(&p).unwrap();
    for (k, (from, to)) in [
        ("e_first <= !l_act;", "e_first <= 1'b1;"),
        ("sh = {e_shift, 3'd0};", "sh = {e_shift + 4'd1, 3'd0};"),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = tmp.path().join(format!("rtl{k}"));
        let mut edited = e.clone();
        let top = edited.modules.last_mut().unwrap();
        assert!(top.1.contains(from), "`{from}` not in the emitted RTL");
        top.1 = top.1.replace(from, to);
        edited.write_dir(&dir).unwrap();
        let mut bench = NiBench::new(p.clone()).unwrap();
        let mut o = opts(20_000, 3, tmp.path());
        o.rtl_dir = Some(dir);
        let r = run(&mut bench, &o).unwrap();
        println!("{}", r.summary());
        let m = r.first.expect("the edited RTL must be caught");
        assert!(m.port.starts_with("out_data"), "{m}");
    }
}
