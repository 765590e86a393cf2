//! `exanet simulate` end to end: zero-load latency against the formula,
//! accepted vs offered load, units of the report, the dimension rule
//! (32 in simulation, 16 for hardware), traffic keys and their errors.

mod common;

use common::{exanet, num as f, Run};
use serde_json::Value;
use std::path::Path;

fn json(args: &[&str], cwd: &Path) -> Value {
    common::simulate_json(args, &[], cwd)
}

/// One-line usage error (exit 2) and its text.
fn usage_error(r: &Run) -> String {
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    lines[0].to_string()
}

/// Node index of router (x, y, z) on the default 8x4x4 torus.
fn node(x: usize, y: usize, z: usize) -> usize {
    x + 8 * (y + 4 * z)
}

/// Over ideal wires (`link.model = "ideal"`), packets sent one at a time
/// (1,000 cycles apart) never meet another: each
/// takes exactly R (H + 1) + L H + (F - 1) cycles, R = 2 per router (3 with
/// 64-bit flits), L = 16 (100 ns at 6.4 ns per cycle, rounded up).
#[test]
fn zero_load_latency_is_hops_times_router_cycles_plus_link_latency() {
    let d = tempfile::tempdir().unwrap();
    // (destination terminal, hops, payload bytes, flit bits, trace time unit)
    let cases: [(usize, usize, usize, usize, &str); 5] = [
        (node(1, 0, 0), 1, 256, 128, "cycles"),
        (node(7, 0, 0), 1, 256, 128, "cycles"),
        (node(2, 1, 0), 3, 100, 128, "ns"),
        (node(4, 2, 2), 8, 16, 128, "cycles"),
        (node(3, 3, 1), 5, 256, 64, "cycles"),
    ];
    for (i, &(dst, hops, bytes, bits, unit)) in cases.iter().enumerate() {
        let name = format!("t{i}.csv");
        let mut csv = String::from("time,src,dst,bytes\n");
        let n = 20;
        for k in 0..n {
            let cycle = 1_000 * k;
            let time = if unit == "ns" {
                format!("{:.1}", cycle as f64 * 6.4)
            } else {
                cycle.to_string()
            };
            csv += &format!("{time},0,{dst},{bytes}\n");
        }
        std::fs::write(d.path().join(&name), csv).unwrap();
        let trace = format!("traffic.trace={name}");
        let unit_flag = format!("traffic.trace_unit={unit}");
        let bits_flag = format!("packet.flit_bits={bits}");
        let v = json(
            &[
                "-P",
                "traffic.pattern=trace",
                "-P",
                &trace,
                "-P",
                &unit_flag,
                "-P",
                &bits_flag,
                "-P",
                "router.buffer_flits=40",
                "-P",
                "sim.warmup=0",
                "-P",
                "sim.measure=20000",
                "-P",
                "link.model=ideal",
            ],
            d.path(),
        );
        let header_flits = if bits == 64 { 2 } else { 1 };
        let flits = 2 * header_flits + (bytes * 8).div_ceil(bits);
        let per_router = if bits == 64 { 3 } else { 2 };
        let want = per_router * (hops + 1) + 16 * hops + flits - 1;
        let t = &v["total"];
        assert_eq!(t["packets"], n, "case {i}: {v}");
        assert_eq!(f(&t["hops"]), hops as f64, "case {i}");
        let l = &t["latency_cycles"];
        assert_eq!(
            (f(&l["avg"]), l["p50"].as_u64(), l["max"].as_u64()),
            (want as f64, Some(want as u64), Some(want as u64)),
            "case {i}: {hops} hops, {flits} flits of {bits} bits: {l}"
        );
        assert_eq!(f(&v["zero_load_cycles"]), want as f64, "case {i}");
        assert!(
            (f(&t["latency_ns"]["max"]) - want as f64 * 6.4).abs() < 1e-6,
            "case {i}: ns at 156.25 MHz"
        );
        assert_eq!(v["clean"], true);
    }
}

#[test]
fn accepted_equals_offered_below_saturation_and_flattens_above() {
    let d = tempfile::tempdir().unwrap();
    let run = |rate: f64| {
        let r = format!("traffic.rate={rate}");
        json(
            &[
                "-P",
                &r,
                "-P",
                "sim.measure=4000",
                "-P",
                "sim.warmup=1000",
                "-P",
                "link.model=ideal",
            ],
            d.path(),
        )
    };
    // Very low load: the average latency is the zero-load latency of the mix.
    let v = run(0.01);
    let (avg, t0) = (
        f(&v["total"]["latency_cycles"]["avg"]),
        f(&v["zero_load_cycles"]),
    );
    assert!((avg - t0).abs() < 0.05 * t0, "avg {avg} vs zero-load {t0}");
    for rate in [0.05, 0.1] {
        let v = run(rate);
        let (off, acc) = (
            f(&v["total"]["offered_flits"]),
            f(&v["total"]["accepted_flits"]),
        );
        assert!((off - rate).abs() < 0.1 * rate, "offered {off} at {rate}");
        assert!((acc - off).abs() < 0.03 * off, "accepted {acc} vs {off}");
        assert_eq!(v["saturated"], false);
        // Gb/s per terminal at 156.25 MHz x 128 bits = 20 Gb/s per flit/cycle
        assert!((f(&v["total"]["accepted_gbps"]) - 20.0 * acc).abs() < 1e-9);
    }
    let hi: Vec<Value> = [0.35, 0.6].iter().map(|&r| run(r)).collect();
    let acc: Vec<f64> = hi
        .iter()
        .map(|v| f(&v["total"]["accepted_flits"]))
        .collect();
    for (v, a) in hi.iter().zip(&acc) {
        let off = f(&v["total"]["offered_flits"]);
        assert!(*a < 0.8 * off, "saturated: accepted {a} vs offered {off}");
        assert_eq!(v["saturated"], true);
        assert!(v["total"]["refused"].as_u64().unwrap() > 0);
        assert_eq!(v["clean"], true, "{v}");
    }
    assert!(
        (acc[1] - acc[0]).abs() < 0.15 * acc[0],
        "accepted load flattens: {acc:?}"
    );
}

/// The default framed links: one hop by itself costs the ideal wire's
/// latency plus the packet's serialization at 10 Gb/s (2 words per 128-bit
/// flit) and the frame check; the report has the link figures and no
/// "one flit per cycle" note, which the ideal wire keeps.
#[test]
fn framed_links_are_the_default_and_are_reported() {
    let d = tempfile::tempdir().unwrap();
    let mut csv = String::from("time,src,dst,bytes\n");
    for k in 1..=10 {
        csv += &format!("{},0,{},256\n", 1_000 * k, node(1, 0, 0));
    }
    std::fs::write(d.path().join("one.csv"), csv).unwrap();
    let base = [
        "-P",
        "traffic.pattern=trace",
        "-P",
        "traffic.trace=one.csv",
        "-P",
        "sim.warmup=0",
        "-P",
        "sim.measure=12000",
    ];
    let framed = json(&base, d.path());
    let mut ideal_args = base.to_vec();
    ideal_args.extend(["-P", "link.model=ideal"]);
    let ideal = json(&ideal_args, d.path());
    let lat = |v: &Value| f(&v["total"]["latency_cycles"]["avg"]);
    // 18 flits: 17 cycles to stream over the wire, 36 word slots framed.
    assert_eq!(lat(&ideal), 2.0 * 2.0 + 16.0 + 17.0);
    assert!(
        lat(&framed) >= lat(&ideal) + 19.0 && lat(&framed) <= lat(&ideal) + 40.0,
        "framed {} vs ideal {}",
        lat(&framed),
        lat(&ideal)
    );
    let l = &framed["links"];
    assert_eq!(l["directions"], 768);
    assert_eq!(l["crc_errors"], 0);
    assert!(l["frames_received"].as_u64().unwrap() >= 10, "{l}");
    assert!(ideal["links"].is_null());
    assert_eq!(framed["clean"], true);
    let text = |extra: &[&str]| {
        let mut a = vec!["simulate", "-P", "sim.measure=2000"];
        a.extend_from_slice(extra);
        let r = exanet(&a, d.path());
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        r.stdout
    };
    let t = text(&["-P", "link.ber=1e-5"]);
    for w in [
        "links (framed",
        "% of line",
        "CRC errors",
        "retransmissions",
        "link-downs",
    ] {
        assert!(t.contains(w), "{w:?} missing:\n{t}");
    }
    assert!(!t.contains("one flit per cycle in the simulator"), "{t}");
    let t = text(&["-P", "link.model=ideal"]);
    assert!(t.contains("links: ideal wires"), "{t}");
    assert!(t.contains("one flit per cycle in the simulator"), "{t}");
    // Bad link keys name the key, the value and the rule.
    for (flag, want) in [
        ("link.ber=0.5", "link.ber = 0.5: must be 0..=1e-2"),
        ("link.model=\"fast\"", "link.model = \"fast\""),
        ("link.down=[[500, 100]]", "link.down[0] = [500, 100]"),
        ("link.frame_flits=64", "link.frame_flits"),
    ] {
        let r = exanet(&["simulate", "-P", flag], d.path());
        assert_ne!(r.code, 0);
        assert!(r.stderr.contains(want), "{flag}: {}", r.stderr);
    }
}

#[test]
fn text_report_has_units_and_per_class_figures() {
    let d = tempfile::tempdir().unwrap();
    let r = exanet(
        &[
            "simulate",
            "-P",
            "traffic.class1_fraction=0.3",
            "-P",
            "traffic.sizes=bimodal",
            "-P",
            "sim.measure=3000",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    for w in [
        "8x4x4 torus",
        "128 terminals",
        "offered",
        "accepted",
        "flits per terminal per cycle",
        "Gb/s",
        "p99",
        "avg ns",
        "hops",
        "class 0",
        "class 1",
        "zero-load latency",
        "below saturation",
    ] {
        assert!(r.stdout.contains(w), "{w:?} missing:\n{}", r.stdout);
    }
    let v = json(
        &[
            "-P",
            "traffic.class1_fraction=0.3",
            "-P",
            "traffic.sizes=bimodal",
            "-P",
            "sim.measure=3000",
        ],
        d.path(),
    );
    let c = v["per_class"].as_array().unwrap();
    assert_eq!(c.len(), 2);
    let (p0, p1) = (
        c[0]["packets"].as_u64().unwrap(),
        c[1]["packets"].as_u64().unwrap(),
    );
    assert_eq!(p0 + p1, v["total"]["packets"].as_u64().unwrap());
    let share = p1 as f64 / (p0 + p1) as f64;
    assert!((0.25..0.35).contains(&share), "class 1 share {share}");
    // bimodal 32 B / 256 B (75 % / 25 %): 0.75 x 4 + 0.25 x 18 flits
    assert!((f(&v["mean_packet_flits"]) - 7.5).abs() < 1e-9);
}

#[test]
fn simulation_takes_dimensions_up_to_32_hardware_up_to_16() {
    let d = tempfile::tempdir().unwrap();
    let v = json(
        &[
            "-P",
            "topology.dims=[32,4,2]",
            "-P",
            "traffic.rate=0.05",
            "-P",
            "sim.warmup=200",
            "-P",
            "sim.measure=1000",
        ],
        d.path(),
    );
    assert_eq!(v["terminals"], 256);
    assert_eq!(v["clean"], true, "{v}");
    assert!(v["total"]["packets"].as_u64().unwrap() > 100);
    let line = usage_error(&exanet(
        &["generate", "-P", "topology.dims=[32,4,2]", "--out", "o"],
        d.path(),
    ));
    assert!(
        line.contains("topology.dims[0] = 32: must be 1..=16 for hardware"),
        "{line}"
    );
    assert!(line.contains("exanet simulate"), "{line}");
    let line = usage_error(&exanet(
        &["simulate", "-P", "topology.dims=[33,4,2]"],
        d.path(),
    ));
    assert!(line.contains("topology.dims[0] = 33"), "{line}");
}

#[test]
fn traffic_patterns_run_and_bad_traffic_keys_are_named() {
    let d = tempfile::tempdir().unwrap();
    for p in [
        "transpose",
        "bit_complement",
        "bit_reverse",
        "tornado",
        "neighbour",
        "hotspot",
    ] {
        let flag = format!("traffic.pattern={p}");
        let v = json(
            &[
                "-P",
                &flag,
                "-P",
                "traffic.rate=0.02",
                "-P",
                "sim.measure=1500",
            ],
            d.path(),
        );
        assert_eq!(v["clean"], true, "{p}: {v}");
        assert_eq!(v["pattern"], p);
        if p == "neighbour" {
            assert_eq!(f(&v["total"]["hops"]), 1.0);
        }
    }
    let line = usage_error(&exanet(
        &["simulate", "-P", "traffic.pattern=random"],
        d.path(),
    ));
    assert!(
        line.contains(
            "-P traffic.pattern=random: traffic.pattern = \"random\": must be one of uniform"
        ),
        "{line}"
    );
    let line = usage_error(&exanet(&["simulate", "-P", "traffic.patern=x"], d.path()));
    assert!(line.contains("unknown key `patern` in [traffic]"), "{line}");
    std::fs::write(
        d.path().join("c.toml"),
        "[traffic]\npattern = \"hotspot\"\nhotspot_nodes = [500]\n",
    )
    .unwrap();
    let line = usage_error(&exanet(&["simulate", "--config", "c.toml"], d.path()));
    assert!(
        line.contains("c.toml:3:17: traffic.hotspot_nodes = [500]"),
        "{line}"
    );
    let line = usage_error(&exanet(
        &[
            "simulate",
            "-P",
            "traffic.pattern=trace",
            "-P",
            "traffic.trace=none.csv",
        ],
        d.path(),
    ));
    assert!(
        line.contains("traffic.trace") && line.contains("none.csv"),
        "{line}"
    );
}

/// A trace whose messages all fall in the warm-up has nothing to report:
/// an error naming the trace and the window, not an all-zero report. A
/// run that refuses many of its packets at the sources is saturated, and
/// the report states the rule.
#[test]
fn a_trace_before_the_window_is_an_error_and_refused_packets_saturate() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("early.csv"),
        "time,src,dst,bytes\n0,0,1,64\n10,1,0,64\n",
    )
    .unwrap();
    let line = usage_error(&exanet(
        &[
            "simulate",
            "-P",
            "traffic.pattern=trace",
            "-P",
            "traffic.trace=early.csv",
            "-P",
            "sim.warmup=500",
            "-P",
            "sim.measure=1000",
        ],
        d.path(),
    ));
    assert!(
        line.contains("early.csv")
            && line.contains(
                "no message of the trace falls in the measurement window (cycles 500..1500"
            ),
        "{line}"
    );
    // Far above saturation: packets are refused at the source queues.
    let r = exanet(
        &[
            "simulate",
            "-P",
            "traffic.rate=0.9",
            "-P",
            "topology.dims=[4,2,2]",
            "-P",
            "sim.warmup=500",
            "-P",
            "sim.measure=1000",
            "-P",
            "sim.drain=20000",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let state = r.stdout.lines().find(|l| l.starts_with("state: ")).unwrap();
    assert!(
        state.starts_with("state: SATURATED (accepted")
            && state.contains("% of packets refused")
            && state.contains("<= 1 % of packets refused at full source queues"),
        "{state}"
    );
}
