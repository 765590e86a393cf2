//! Co-simulation of `ni` (transmit side; receive checks, reject path and
//! data writes): every matrix point against the golden model, coverage of
//! what the stimulus exercised, the zero-bytes-written security test, and
//! proof that the bench fails on a wrong golden model or an edited RTL.

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
        // Receive path: accepted writes compared byte for byte, corrected
        // headers, and every reject reason the agent provokes.
        assert!(c.rx_accepted > 50 && c.rx_corrected > 5, "{text}: {c:?}");
        assert_eq!(c.rx_writes, c.rx_accepted, "{text}: {c:?}");
        assert!(c.errq_words > 5 && c.errq_pops > 5, "{text}: {c:?}");
        for r in [1, 2, 3, 4, 5, 6, 7, 8, 10] {
            assert!(c.rx_rejected[r] > 3, "{text}: reason {r}: {c:?}");
        }
    }
}

/// Security: only forged, misdirected or corrupted packets — none writes a
/// byte (the landing area is unchanged in the RTL's memory and the golden
/// model's), every one is counted, and the counters match (register reads).
#[test]
fn rejected_packets_write_nothing() {
    if skip() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for (i, text) in matrix_points().iter().enumerate() {
        let p = parse_point(text).unwrap();
        let mut bench = NiBench::new(p).unwrap();
        bench.set_only_bad(true);
        let before = bench.landing_bytes();
        assert_eq!(before.0, before.1);
        let r = run(&mut bench, &opts(CYCLES / 4, 0x51 + i as u64, tmp.path())).unwrap();
        println!("{}", r.summary());
        assert_eq!(r.mismatches, 0, "{}: {:?}", r.point, r.first);
        let c = bench.coverage();
        println!("  {c:?}");
        let rejected: u64 = c.rx_rejected.iter().sum();
        assert!(rejected > 100, "{text}: {c:?}");
        assert_eq!(rejected, c.rx_packets, "{text}: {c:?}");
        assert_eq!((c.rx_accepted, c.rx_writes), (0, 0), "{text}: {c:?}");
        for r in [1, 2, 3, 4, 5, 6, 7, 8, 10] {
            assert!(c.rx_rejected[r] > 0, "{text}: reason {r}: {c:?}");
        }
        let after = bench.landing_bytes();
        assert!(after.0 == before.0, "{text}: RTL memory changed");
        assert!(after.1 == before.1, "{text}: golden memory changed");
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
        ["out_", "s_rdata", "m_aw", "m_w", "rx_commit"]
            .iter()
            .any(|p| m.port.starts_with(p)),
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

/// Edited receive path — the PDID check removed, or a payload CRC error
/// ignored, lets a bad packet write memory; an error-queue word wrong —
/// the bench catches each.
#[test]
fn an_edited_receive_path_is_caught() {
    if skip() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let text = matrix_points()[0];
    let p = parse_point(text).unwrap();
    let e = exanet_hdl::ni::emit_ni(&p).unwrap();
    for (k, (from, to)) in [
        (
            "else if (x_data && !x_pd) x_reason = 4'd8;",
            "else if (1'b0) x_reason = 4'd8;",
        ),
        (
            "else if (rx_crc != footer_unpack_payload_crc) x_reason = 4'd6;",
            "else if (1'b0) x_reason = 4'd6;",
        ),
        // The error queue loses the source coordinates.
        ("eq_w1 = {10'd0, eq_rd[46:25]};", "eq_w1 = 32'd0;"),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = tmp.path().join(format!("rx{k}"));
        let mut edited = e.clone();
        let top = edited.modules.last_mut().unwrap();
        assert!(top.1.contains(from), "`{from}` not in the emitted RTL");
        top.1 = top.1.replace(from, to);
        edited.write_dir(&dir).unwrap();
        let mut bench = NiBench::new(p.clone()).unwrap();
        bench.set_only_bad(true);
        let mut o = opts(40_000, 5, tmp.path());
        o.rtl_dir = Some(dir);
        let r = run(&mut bench, &o).unwrap();
        println!("{}", r.summary());
        let m = r.first.expect("the edited RTL must be caught");
        let port = if k < 2 {
            "m_aw"
        } else {
            "s_rdata (read 0x000c8)"
        };
        assert!(m.port.starts_with(port), "{m}");
    }
}
