//! Co-simulation speed: the Rust-driven lockstep run (RTL + golden model
//! checked every cycle) against a pure C++ Verilator loop on the same
//! Verilated model, measured side by side in one run.
//!
//! `cargo bench -p exanet-tb --bench cosim_speed [-- BLOCK... ] [--cycles N]`
//! Default: the fifo and crc32 blocks, every matrix point, 2,000,000 cycles,
//! best of 3 alternating runs of each driver. The C++ loop runs twice a
//! round: with `m->eval()` and through the harness shim's `exanet_eval`
//! (input region once a cycle); both must fold the outputs to the same
//! value. `EXANET_ICO_SKIP=0` makes the Rust-driven runs evaluate the whole
//! model every time (for before/after figures from one build).

use exanet_tb::blocks;
use exanet_tb::cosim::{self, CosimOptions};
use exanet_tb::verilator::{cpp_loop_speed, PortDir, Sim};

/// The C++ loop's work driven from Rust: random bits on every input, every
/// output read, no golden model. Separates the harness's cost from a bench's.
fn rust_null_loop(sim: &mut Sim, cycles: u64, seed: u64) -> anyhow::Result<f64> {
    let mut rng = exanet_sim::rng::Rng::new(seed);
    let clock = sim.port("clock")?;
    let mut ins = Vec::new();
    let mut outs = Vec::new();
    for p in sim.ports().to_vec() {
        let port = sim.port(&p.name)?;
        match p.dir {
            PortDir::In if p.name == "clock" => {}
            PortDir::In if p.name == "reset" => port.set(0),
            PortDir::In => ins.push(port),
            _ => outs.push(port),
        }
    }
    let mut sink = 0u64;
    let t0 = exanet_tb::cosim::thread_cpu_secs();
    for _ in 0..cycles {
        clock.set(0);
        for p in &ins {
            if p.width() <= 64 {
                p.set(rng.next_u64());
            } else {
                p.set_u128(rng.next_u128());
            }
        }
        sim.eval();
        for p in &outs {
            sink ^= p.get();
        }
        clock.set(1);
        sim.eval();
    }
    std::hint::black_box(sink);
    Ok(cycles as f64 / (exanet_tb::cosim::thread_cpu_secs() - t0).max(1e-9))
}

fn main() -> anyhow::Result<()> {
    // Speeds in BENCHMARKS.md are of models compiled at -O2 (the suite's
    // default is -O1, see `EXANET_CXX_OPT`); set before any thread starts.
    if std::env::var_os("EXANET_CXX_OPT").is_none() {
        std::env::set_var("EXANET_CXX_OPT", "-O2");
    }
    if let Some(r) = cosim::verilator_missing_reason() {
        println!("{r}");
        return Ok(());
    }
    let mut names = Vec::new();
    let mut cycles = 2_000_000u64;
    // `--points N`: only the first N matrix points of each block (point 0 is the default).
    let mut points = usize::MAX;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--cycles" => cycles = args.next().and_then(|v| v.parse().ok()).unwrap_or(cycles),
            "--bench" => {}
            "--points" => points = args.next().and_then(|v| v.parse().ok()).unwrap_or(points),
            _ if a.starts_with('-') => {}
            _ => names.push(a),
        }
    }
    if names.is_empty() {
        names = vec!["fifo".into(), "crc32".into()];
    }
    let opts = CosimOptions {
        cycles,
        ..CosimOptions::default()
    };
    let skip = std::env::var("EXANET_ICO_SKIP").map_or(true, |v| v.trim() != "0");
    println!(
        "Rust-driven runs {} the input region once a cycle (EXANET_ICO_SKIP)",
        if skip { "skip" } else { "do not skip" }
    );
    println!("| block | point | Rust-driven + golden check (M cycles/s) | Rust-driven, no check (M cycles/s) | pure C++ loop, eval() (M cycles/s) | C++ loop through the shim (M cycles/s) | ratio checked / C++ | ratio no-check / C++ |");
    println!("|---|---|---|---|---|---|---|---|");
    for name in names {
        let info = blocks::find(&name)?;
        for mut bench in (info.matrix)().into_iter().take(points) {
            let e = bench.emit()?;
            let sources: Vec<(String, String)> = e
                .modules
                .iter()
                .map(|(n, t)| (format!("{n}.v"), t.clone()))
                .collect();
            let (mut best_rust, mut best_cpp, mut best_null) = (0f64, 0f64, 0f64);
            let mut best_cpp_shim = 0f64;
            let mut sim = Sim::from_emitted(&e, &opts.build)?;
            for round in 0..3 {
                let r = cosim::run(
                    bench.as_mut(),
                    &CosimOptions {
                        seed: 1 + round,
                        ..opts.clone()
                    },
                )?;
                if r.mismatches != 0 {
                    anyhow::bail!("{}", r.summary());
                }
                best_rust = best_rust.max(r.cpu_cycles_per_sec);
                best_null = best_null.max(rust_null_loop(&mut sim, cycles, 1 + round)?);
                let (plain, sink) =
                    cpp_loop_speed(&sources, &e.top, &opts.build, cycles, 1 + round, false)?;
                let (shim, shim_sink) =
                    cpp_loop_speed(&sources, &e.top, &opts.build, cycles, 1 + round, true)?;
                // The shim's eval (input region skipped when it may) must
                // leave every output as `eval()` does.
                if sink != shim_sink {
                    anyhow::bail!(
                        "{} [{}]: C++ loop outputs differ through the shim ({shim_sink:#x}) and eval() ({sink:#x})",
                        bench.block(),
                        bench.point()
                    );
                }
                best_cpp = best_cpp.max(plain);
                best_cpp_shim = best_cpp_shim.max(shim);
            }
            println!(
                "| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2} | {:.2} |",
                bench.block(),
                bench.point(),
                best_rust / 1e6,
                best_null / 1e6,
                best_cpp / 1e6,
                best_cpp_shim / 1e6,
                best_rust / best_cpp,
                best_null / best_cpp
            );
        }
    }
    Ok(())
}
