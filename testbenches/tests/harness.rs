//! The Verilator harness on hand-written Verilog: port widths of every
//! storage class, wide ports, clocked state, caching and tracing.

use exanet_tb::cosim::skip_without_verilator;
use exanet_tb::verilator::{BuildOptions, PortDir, Sim};

const DESIGN: &str = "module exanet_t(input wire clock, input wire [7:0] a, input wire [99:0] w,
  input wire [11:0] s, output reg [63:0] q, output wire [127:0] y, output wire [40:0] z,
  output wire [19:0] t, output wire [255:0] big);
  always @(posedge clock) q <= {q[55:0], a};
  assign y = {w[27:0], w};
  assign z = w[40:0];
  assign t = {s, a};
  assign big = {w[99:0], w[99:0], w[55:0]};
endmodule
";

fn opts(dir: &std::path::Path, trace: bool) -> BuildOptions {
    BuildOptions {
        cache_dir: dir.to_path_buf(),
        trace,
        ..BuildOptions::default()
    }
}

#[test]
fn ports_of_every_width_class_read_and_write() {
    if skip_without_verilator() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let src = vec![("t.v".to_string(), DESIGN.to_string())];
    let mut sim = Sim::from_sources(&src, "exanet_t", &opts(cache.path(), false)).unwrap();
    let names: Vec<(&str, u32, PortDir)> = sim
        .ports()
        .iter()
        .map(|p| (p.name.as_str(), p.width, p.dir))
        .collect();
    assert!(names.contains(&("w", 100, PortDir::In)));
    assert!(names.contains(&("big", 256, PortDir::Out)));
    let (clock, a, w, s) = (
        sim.port("clock").unwrap(),
        sim.port("a").unwrap(),
        sim.port("w").unwrap(),
        sim.port("s").unwrap(),
    );
    let (q, y, z, t, big) = (
        sim.port("q").unwrap(),
        sim.port("y").unwrap(),
        sim.port("z").unwrap(),
        sim.port("t").unwrap(),
        sim.port("big").unwrap(),
    );
    assert!(sim
        .port("nope")
        .unwrap_err()
        .to_string()
        .contains("no port `nope`"));
    assert!(sim.port_w("a", 9).is_err());
    let wv: u128 = 0xA_BCDE_F012_3456_789A_BCDE_F012_3456u128 & ((1u128 << 100) - 1);
    w.set_u128(wv);
    a.set(0x1A5); // truncated to 8 bits
    s.set(0xFFF);
    clock.set(0);
    sim.eval();
    assert_eq!(a.get(), 0xA5);
    assert_eq!(w.get_u128(), wv);
    assert_eq!(z.get(), (wv & ((1 << 41) - 1)) as u64);
    assert_eq!(t.get(), 0xFFFA5);
    let expect_y = wv | ((wv & 0xFFF_FFFF) << 100);
    assert_eq!(y.get_u128(), expect_y);
    let mut words = [0u32; 8];
    big.get_words(&mut words);
    assert_eq!(words[0], (wv & 0xFFFF_FFFF) as u32);
    for i in 0..3 {
        clock.set(1);
        sim.eval();
        clock.set(0);
        a.set(i + 1);
        sim.eval();
    }
    assert_eq!(q.get(), 0xA5_01_02);
}

#[test]
fn cache_reuses_a_build_and_trace_writes_vcd() {
    if skip_without_verilator() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let src = vec![("t.v".to_string(), DESIGN.to_string())];
    drop(Sim::from_sources(&src, "exanet_t", &opts(cache.path(), true)).unwrap());
    let mut sim = Sim::from_sources(&src, "exanet_t", &opts(cache.path(), true)).unwrap();
    let names: Vec<String> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let designs = names.iter().filter(|n| n.starts_with("exanet_t-")).count();
    assert_eq!(
        designs, 1,
        "second build of the same design must hit the cache: {names:?}"
    );
    // Verilator's runtime is compiled once, shared by every design.
    let runtimes: Vec<&String> = names.iter().filter(|n| n.starts_with("runtime-")).collect();
    assert_eq!(runtimes.len(), 1, "{names:?}");
    let rt = cache.path().join(runtimes[0]);
    assert!(rt.join("verilated.o").exists() && rt.join("verilated_vcd_c.o").exists());
    let vcd = cache.path().join("w.vcd");
    sim.trace_open(&vcd).unwrap();
    let clock = sim.port("clock").unwrap();
    let a = sim.port("a").unwrap();
    for c in 0..8 {
        a.set(0x10 + c);
        clock.set(c % 2);
        sim.eval();
        sim.trace_dump(c);
    }
    sim.trace_close();
    let text = std::fs::read_to_string(&vcd).unwrap();
    assert!(
        text.contains("$var") && text.contains(" q "),
        "VCD lacks signals"
    );
    // The values change in the waveform, not only at time 0: `q` shifts in
    // `a` at every rising edge (1, 3, 5, 7), so its code shows up at each.
    let code = text
        .lines()
        .find(|l| l.contains("$var") && l.contains(" q "))
        .and_then(|l| l.split_whitespace().nth(3))
        .expect("q's identifier code")
        .to_string();
    let mut times_with_q = Vec::new();
    let mut now = None;
    for l in text.lines() {
        if let Some(t) = l.strip_prefix('#') {
            now = t.parse::<u64>().ok();
        } else if l.starts_with('b') && l.split_whitespace().nth(1) == Some(code.as_str()) {
            times_with_q.extend(now);
        }
    }
    for t in [1, 3, 5, 7] {
        assert!(
            times_with_q.contains(&t),
            "q changes at {times_with_q:?}, not at {t}: a flat waveform"
        );
    }
    // A model built without tracing refuses to trace.
    let mut plain = Sim::from_sources(&src, "exanet_t", &opts(cache.path(), false)).unwrap();
    assert!(plain.trace_open(&vcd).is_err());
}

#[test]
fn broken_verilog_is_an_error_naming_the_tool() {
    if skip_without_verilator() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let src = vec![(
        "b.v".to_string(),
        "module exanet_b(input wire clock); nonsense\n".to_string(),
    )];
    let err = Sim::from_sources(&src, "exanet_b", &opts(cache.path(), false))
        .err()
        .unwrap();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("verilator") && msg.contains("exanet_b"),
        "{msg}"
    );
}

/// A broken file from a user's folder: the error names that file (not the
/// cache's copy), and the failed build leaves nothing in the cache.
#[test]
fn a_broken_user_file_is_named_and_leaves_no_build_folder() {
    if skip_without_verilator() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let rtl = tempfile::tempdir().unwrap();
    std::fs::write(
        rtl.path().join("b.v"),
        "module exanet_b(input wire clock);\n  nonsense here;\nendmodule\n",
    )
    .unwrap();
    let err = Sim::from_dir(rtl.path(), "exanet_b", &opts(cache.path(), false))
        .err()
        .unwrap();
    let msg = format!("{err:#}");
    let user = format!("{}", rtl.path().join("b.v").display());
    assert!(msg.contains(&user), "names {user}: {msg}");
    assert!(!msg.contains("/src/b.v"), "names the cache copy: {msg}");
    let left: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with(".exanet_b-"))
        .collect();
    assert!(left.is_empty(), "build folders left: {left:?}");
}
