//! Co-simulation of `ni` with a non-default transmit read-ahead
//! (`tx_ahead`, config key `ni.tx_ahead`): the golden model does not depend
//! on it (every pick is still its `emit_packet` instant), so the same bench
//! must pass with the packet and read-job queues at their shallowest, full
//! most of the time a long transfer is being sent.

use exanet_tb::blocks::ni::{matrix_points, parse_point, point_text, NiBench};
use exanet_tb::cosim::{run, skip_without_verilator, test_options};

/// Cycles of the run (`exanet cosim ni --point ...,tx_ahead=2` runs longer).
const CYCLES: u64 = 40_000;

#[test]
fn tx_ahead_is_a_point_key_checked_like_the_others() {
    let p = parse_point("tx_ahead=16").unwrap();
    assert_eq!(p.tx_ahead, 16);
    assert!(
        point_text(&p).ends_with(",vc=0,resp_vc=2,vcs_per_class=2,tx_ahead=16"),
        "{}",
        point_text(&p)
    );
    assert_eq!(parse_point(&point_text(&p)).unwrap(), p);
    assert_eq!(parse_point("").unwrap().tx_ahead, 8, "default");
    for bad in ["tx_ahead=3", "tx_ahead=1", "tx_ahead=64"] {
        let e = format!("{:#}", parse_point(bad).unwrap_err());
        assert!(e.contains("ni.tx_ahead = "), "{bad}: {e}");
        assert!(e.contains("power of two in 2..=32"), "{bad}: {e}");
    }
}

/// The message-class VCs are point keys: `resp_vc` and `vcs_per_class`
/// (defaults 2 and 2) round-trip through the point text; a value the NI
/// does not support is an error naming its key.
#[test]
fn class_vcs_are_point_keys_checked_like_the_others() {
    let d = parse_point("").unwrap();
    assert_eq!((d.vc, d.resp_vc, d.vcs_per_class), (0, 2, 2), "defaults");
    let p = parse_point("vc=2,resp_vc=5,vcs_per_class=3").unwrap();
    assert_eq!((p.vc, p.resp_vc, p.vcs_per_class), (2, 5, 3));
    assert!(
        point_text(&p).contains(",vc=2,resp_vc=5,vcs_per_class=3,"),
        "{}",
        point_text(&p)
    );
    assert_eq!(parse_point(&point_text(&p)).unwrap(), p);
    for (bad, key) in [
        ("resp_vc=1", "ni.resp_vc = 1"),
        ("resp_vc=4", "ni.resp_vc = 4"),
        ("vc=2", "ni.vc = 2"),
        ("vcs_per_class=0", "ni.vcs_per_class = 0"),
        ("vcs_per_class=9,resp_vc=9", "ni.vcs_per_class = 9"),
    ] {
        let e = format!("{:#}", parse_point(bad).unwrap_err());
        assert!(e.contains(key), "{bad}: {e}");
    }
    let e = format!("{:#}", parse_point("resp_vc=x").unwrap_err());
    assert!(e.contains("resp_vc"), "{e}");
}

/// The default NI (4 channels, 256-byte packets, 32 credits) with
/// `tx_ahead = 2`: zero mismatches, and long RDMA writes and read responses
/// went through the shallow queues.
#[test]
fn shallowest_read_ahead_matches_the_golden_model() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let text = format!("{},tx_ahead=2", matrix_points()[0]);
    let p = parse_point(&text).unwrap();
    assert_eq!(p.tx_ahead, 2);
    let mut bench = NiBench::new(p).unwrap();
    let r = run(&mut bench, &test_options(CYCLES, 0x7a, tmp.path())).unwrap();
    println!("{}", r.summary());
    assert_eq!(r.mismatches, 0, "{}: {:?}", r.point, r.first);
    assert_eq!(r.cycles, CYCLES);
    assert!(r.point.ends_with(",tx_ahead=2"), "{}", r.point);
    let c = bench.coverage();
    println!("  {c:?}");
    assert!(
        c.writes > 100 && c.read_reqs > 5 && c.messages > 4,
        "{text}: {c:?}"
    );
    assert!(c.split_reads > 0 && c.credit_stalls > 0, "{text}: {c:?}");
    assert!(
        c.read_jobs > 10 && c.read_resps > c.read_jobs,
        "{text}: {c:?}"
    );
}
