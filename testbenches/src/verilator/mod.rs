//! The project's own Verilator harness.
//!
//! `Sim::from_*` verilates a design, compiles it into one shared library and
//! loads it. Libraries are cached under `BuildOptions::cache_dir` by a
//! SHA-256 of the Verilator version, the flags, the top name and every
//! source's name and bytes, so a design is built once per content.
//!
//! Ports: Verilator's generated `V<top>.h` declares each port with a
//! `VL_IN8/VL_IN16/VL_IN/VL_IN64/VL_INW` (and `VL_OUT*`) macro. The harness
//! parses those, generates a C shim that returns the address of every port
//! in one call, and keeps the addresses: reading or writing a port is then a
//! plain memory access, with no call across the FFI per port (TOOLING.md:
//! a call per port costs ~40 % of simulation speed).
//!
//! Compilation: the file lists come from `V<top>_classes.mk` (they differ
//! between Verilator 4 and 5); every file is compiled with `-O2 -fPIC
//! -fno-semantic-interposition`, in parallel, and linked with `-shared`.
//!
//! Evaluation: the shim calls the model's root evaluation directly, and
//! skips Verilator's input region on an `eval` where none of the inputs that
//! region reads changed since it last ran (the clock-high `eval` of a
//! lockstep cycle): exact, since the region would recompute the values it
//! left. The build finds the region and the inputs it reads in the
//! generated C++ (Verilator 5.006's names, see `ico`) and falls back to the
//! full evaluation when the code has another shape; the cache folder's
//! `shim.txt` says which. `EXANET_ICO_SKIP=0` turns the skip off at load
//! time (for before/after measurements).

mod build;
mod ico;
mod port;

pub use build::{cpp_loop_speed, verilator_version, BuildOptions};
pub use port::{Port, PortDir, PortInfo};

use anyhow::{bail, Context, Result};
use exanet_hdl::emit::Emitted;
use libloading::Library;
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CString};
use std::path::Path;

type NewFn = unsafe extern "C" fn() -> *mut c_void;
type DelFn = unsafe extern "C" fn(*mut c_void);
type EvalFn = unsafe extern "C" fn(*mut c_void);
type PortsFn = unsafe extern "C" fn(*mut c_void, *mut *mut c_void);
type TraceOpenFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> i32;
type TraceDumpFn = unsafe extern "C" fn(*mut c_void, u64);
type TraceCloseFn = unsafe extern "C" fn(*mut c_void);
type ModeFn = unsafe extern "C" fn() -> u32;
type SkipsFn = unsafe extern "C" fn(*mut c_void) -> u64;

/// Whether `Sim::eval` may skip the input region (`EXANET_ICO_SKIP`: `1`,
/// the default, or `0` to run the whole evaluation every time, for
/// measuring the difference).
fn ico_skip_wanted() -> Result<bool> {
    match std::env::var("EXANET_ICO_SKIP") {
        Err(_) => Ok(true),
        Ok(v) => match v.trim() {
            "1" => Ok(true),
            "0" => Ok(false),
            _ => bail!("EXANET_ICO_SKIP = `{v}`: expected 0 or 1"),
        },
    }
}

/// The C++ model object and the library it lives in, freed together when
/// the [`Sim`] is dropped.
pub struct Model {
    handle: *mut c_void,
    del_fn: DelFn,
    // Dropped after `drop` ran: `del_fn` points into it.
    _lib: Library,
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: handle was made by exanet_new of this library and not freed.
        unsafe { (self.del_fn)(self.handle) }
    }
}

/// A loaded, running Verilated model.
pub struct Sim {
    handle: *mut c_void,
    eval_fn: EvalFn,
    trace_open_fn: TraceOpenFn,
    trace_dump_fn: TraceDumpFn,
    trace_close_fn: TraceCloseFn,
    skips_fn: SkipsFn,
    eval_mode: u32,
    ports: Vec<PortInfo>,
    ptrs: HashMap<String, Port>,
    top: String,
    traced: bool,
    tracing: bool,
    // The function pointers above point into its library.
    _model: Model,
}

impl Sim {
    /// Build (or fetch from cache) and load an emitted design.
    pub fn from_emitted(e: &Emitted, opts: &BuildOptions) -> Result<Sim> {
        let sources: Vec<(String, String)> = e
            .modules
            .iter()
            .map(|(n, t)| (format!("{n}.v"), t.clone()))
            .collect();
        Self::from_sources(&sources, &e.top, opts)
    }

    /// Build and load every `*.v`/`*.sv` file of `dir`, with top module `top`.
    pub fn from_dir(dir: &Path, top: &str, opts: &BuildOptions) -> Result<Sim> {
        let mut sources = Vec::new();
        let rd = std::fs::read_dir(dir)
            .with_context(|| format!("reading RTL folder {}", dir.display()))?;
        for entry in rd {
            let p = entry?.path();
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            if ext == "v" || ext == "sv" {
                let text = std::fs::read_to_string(&p)
                    .with_context(|| format!("reading {}", p.display()))?;
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                sources.push((name, text));
            }
        }
        if sources.is_empty() {
            bail!("RTL folder {} holds no .v or .sv file", dir.display());
        }
        sources.sort();
        let opts = BuildOptions {
            source_dir: Some(dir.to_path_buf()),
            ..opts.clone()
        };
        Self::from_sources(&sources, top, &opts)
    }

    /// Build and load `(file name, text)` sources with top module `top`.
    pub fn from_sources(
        sources: &[(String, String)],
        top: &str,
        opts: &BuildOptions,
    ) -> Result<Sim> {
        let built = build::build(sources, top, opts)?;
        Self::load(&built.lib_path, built.ports, top, opts.trace)
    }

    fn load(lib_path: &Path, ports: Vec<PortInfo>, top: &str, traced: bool) -> Result<Sim> {
        // SAFETY: the library is one we just built from a shim we generated;
        // its initialisers are Verilator's, which have no global side effects
        // beyond their own statics.
        let lib = unsafe { Library::new(lib_path) }
            .with_context(|| format!("loading model library {}", lib_path.display()))?;
        unsafe {
            let new_fn: NewFn = *lib.get::<NewFn>(b"exanet_new\0")?;
            let del_fn: DelFn = *lib.get::<DelFn>(b"exanet_delete\0")?;
            // `exanet_eval` skips the input region when it may (the shim
            // decides; see `ico`), `exanet_eval_full` never does.
            let skip = ico_skip_wanted()?;
            let eval_name: &[u8] = if skip {
                b"exanet_eval\0"
            } else {
                b"exanet_eval_full\0"
            };
            let eval_fn: EvalFn = *lib.get::<EvalFn>(eval_name)?;
            let mode_fn: ModeFn = *lib.get::<ModeFn>(b"exanet_eval_mode\0")?;
            let skips_fn: SkipsFn = *lib.get::<SkipsFn>(b"exanet_ico_skips\0")?;
            let eval_mode = if skip { mode_fn() } else { mode_fn().min(1) };
            let ports_fn: PortsFn = *lib.get::<PortsFn>(b"exanet_ports\0")?;
            let trace_open_fn: TraceOpenFn = *lib.get::<TraceOpenFn>(b"exanet_trace_open\0")?;
            let trace_dump_fn: TraceDumpFn = *lib.get::<TraceDumpFn>(b"exanet_trace_dump\0")?;
            let trace_close_fn: TraceCloseFn = *lib.get::<TraceCloseFn>(b"exanet_trace_close\0")?;
            let handle = new_fn();
            if handle.is_null() {
                bail!("model `{top}` failed to construct");
            }
            let mut raw = vec![std::ptr::null_mut::<c_void>(); ports.len()];
            ports_fn(handle, raw.as_mut_ptr());
            let model = Model {
                handle,
                del_fn,
                _lib: lib,
            };
            let mut ptrs = HashMap::new();
            for (info, p) in ports.iter().zip(raw) {
                ptrs.insert(info.name.clone(), Port::new(p, info.width, info.dir));
            }
            Ok(Sim {
                handle,
                eval_fn,
                trace_open_fn,
                trace_dump_fn,
                trace_close_fn,
                skips_fn,
                eval_mode,
                ports,
                ptrs,
                top: top.to_string(),
                traced,
                tracing: false,
                _model: model,
            })
        }
    }

    /// The top module's name.
    pub fn top(&self) -> &str {
        &self.top
    }

    /// Every port of the top, in declaration order.
    pub fn ports(&self) -> &[PortInfo] {
        &self.ports
    }

    /// A port by name. The handle stays valid while this `Sim` lives.
    pub fn port(&self, name: &str) -> Result<Port> {
        self.ptrs.get(name).cloned().ok_or_else(|| {
            let names: Vec<&str> = self.ports.iter().map(|p| p.name.as_str()).collect();
            anyhow::anyhow!(
                "model `{}` has no port `{name}`; its ports: {}",
                self.top,
                names.join(", ")
            )
        })
    }

    /// A port by name that must be `width` bits wide.
    pub fn port_w(&self, name: &str, width: u32) -> Result<Port> {
        let p = self.port(name)?;
        if p.width() != width {
            bail!(
                "model `{}` port `{name}` is {} bits wide, expected {width}",
                self.top,
                p.width()
            );
        }
        Ok(p)
    }

    /// Whether [`Sim::eval`] skips the model's input region (Verilator's
    /// "ico": the logic fed by top-level inputs) when none of the inputs it
    /// reads changed since it last ran — on the clock-high `eval` of a
    /// lockstep cycle, typically. False when the build found the model's
    /// generated code not in the shape the skip relies on (Verilator 5.006's;
    /// the cache folder's `shim.txt` says why), or with `EXANET_ICO_SKIP=0`.
    pub fn skips_input_region(&self) -> bool {
        self.eval_mode == 2
    }

    /// How many `eval`s so far skipped the input region.
    pub fn input_region_skips(&self) -> u64 {
        // SAFETY: live handle of this library.
        unsafe { (self.skips_fn)(self.handle) }
    }

    /// Evaluate the model (settle combinational logic, fire edges).
    #[inline]
    pub fn eval(&mut self) {
        // SAFETY: handle is live until drop; eval_fn comes from the same library.
        unsafe { (self.eval_fn)(self.handle) }
    }

    /// Start a VCD trace into `path`. The model must have been built with
    /// `BuildOptions::trace`.
    pub fn trace_open(&mut self, path: &Path) -> Result<()> {
        if !self.traced {
            bail!("model `{}` was built without tracing", self.top);
        }
        if let Some(d) = path.parent() {
            if !d.as_os_str().is_empty() {
                std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
            }
        }
        let c = CString::new(path.to_string_lossy().as_bytes())?;
        // SAFETY: live handle; the shim copies the path.
        let rc = unsafe { (self.trace_open_fn)(self.handle, c.as_ptr()) };
        if rc != 0 {
            bail!("could not open trace file {}", path.display());
        }
        self.tracing = true;
        Ok(())
    }

    /// Record the current values at `time` (in half-cycles by convention).
    #[inline]
    pub fn trace_dump(&mut self, time: u64) {
        if self.tracing {
            // SAFETY: live handle with an open trace.
            unsafe { (self.trace_dump_fn)(self.handle, time) }
        }
    }

    /// Flush and close the trace, if open.
    pub fn trace_close(&mut self) {
        if self.tracing {
            // SAFETY: live handle with an open trace.
            unsafe { (self.trace_close_fn)(self.handle) }
            self.tracing = false;
        }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        // The model itself is freed with `_model`, after this.
        self.trace_close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use exanet_sim::rng::Rng;

    fn sim_of(name: &str, text: &str) -> Sim {
        let opts = BuildOptions {
            jobs: 1,
            ..BuildOptions::default()
        };
        Sim::from_sources(&[(format!("{name}.v"), text.to_string())], name, &opts).unwrap()
    }

    /// Logic fed by inputs only, by inputs and registers, and registers: a
    /// lockstep run where the clock-high `eval` skips the input region is
    /// checked every half cycle against a model of the design, and an input
    /// written just before the rising edge is seen at once (no skip then).
    #[test]
    fn input_region_skip_is_exact_and_taken_once_a_cycle() {
        if crate::cosim::skip_without_verilator() {
            return;
        }
        let mut sim = sim_of(
            "ico_mix",
            "module ico_mix(input clock, input [7:0] a, input [99:0] b, output [7:0] y,\n\
             output [99:0] z, output reg [7:0] r);\n\
             initial r = 8'd0;\n\
             always @(posedge clock) r <= r + a;\n\
             assign y = a ^ r;\n\
             assign z = b + 100'd3;\n\
             endmodule\n",
        );
        assert!(sim.skips_input_region());
        let (clock, a, b) = (
            sim.port("clock").unwrap(),
            sim.port("a").unwrap(),
            sim.port("b").unwrap(),
        );
        let (y, z, r) = (
            sim.port("y").unwrap(),
            sim.port("z").unwrap(),
            sim.port("r").unwrap(),
        );
        let mut rng = Rng::new(5);
        let mut reg = 0u8;
        let mut late = 0;
        clock.set(0);
        sim.eval();
        let skips0 = sim.input_region_skips();
        for cycle in 0..2000u64 {
            clock.set(0);
            let (av, bv) = (rng.next_u64() as u8, rng.next_u128() >> 28);
            a.set(av as u64);
            b.set_u128(bv);
            sim.eval();
            assert_eq!(y.get() as u8, av ^ reg, "cycle {cycle} y");
            assert_eq!(z.get_u128(), bv + 3, "cycle {cycle} z");
            let mut bv = bv;
            if cycle % 3 == 0 {
                // Written with the clock: the high eval must run the region.
                bv ^= 1 << 70;
                b.set_u128(bv);
                late += 1;
            }
            clock.set(1);
            sim.eval();
            reg = reg.wrapping_add(av);
            assert_eq!(r.get() as u8, reg, "cycle {cycle} r");
            assert_eq!(y.get() as u8, av ^ reg, "cycle {cycle} y after the edge");
            assert_eq!(z.get_u128(), bv + 3, "cycle {cycle} z after the edge");
        }
        assert_eq!(sim.input_region_skips() - skips0, 2000 - late);
    }

    /// A design whose input region reads the clock: the clock is watched
    /// like any input, so its edge never skips the region.
    #[test]
    fn a_clock_read_by_the_input_region_is_watched() {
        if crate::cosim::skip_without_verilator() {
            return;
        }
        let mut sim = sim_of(
            "ico_clk",
            "module ico_clk(input clock, input [7:0] a, output [7:0] y, output reg [7:0] q);\n\
             initial q = 8'd0;\n\
             always @(posedge clock) q <= a;\n\
             assign y = clock ? a : ~a;\n\
             endmodule\n",
        );
        assert!(sim.skips_input_region());
        let (clock, a, y, q) = (
            sim.port("clock").unwrap(),
            sim.port("a").unwrap(),
            sim.port("y").unwrap(),
            sim.port("q").unwrap(),
        );
        for v in 0..200u64 {
            clock.set(0);
            a.set(v);
            sim.eval();
            assert_eq!(y.get(), !v & 0xff);
            clock.set(1);
            sim.eval();
            assert_eq!((y.get(), q.get()), (v & 0xff, v & 0xff));
        }
        assert_eq!(sim.input_region_skips(), 0);
    }

    /// A design with no logic fed by its inputs has no input region: the
    /// plan is refused at build time and `eval` is the plain fast one.
    #[test]
    fn a_model_without_an_input_region_falls_back_to_the_full_eval() {
        if crate::cosim::skip_without_verilator() {
            return;
        }
        let mut sim = sim_of(
            "ico_none",
            "module ico_none(input clock, input [7:0] a, output reg [7:0] q);\n\
             initial q = 8'd0;\n\
             always @(posedge clock) q <= a + 8'd1;\n\
             endmodule\n",
        );
        assert!(!sim.skips_input_region());
        let (clock, a, q) = (
            sim.port("clock").unwrap(),
            sim.port("a").unwrap(),
            sim.port("q").unwrap(),
        );
        for v in 0..100u64 {
            clock.set(0);
            a.set(v);
            sim.eval();
            clock.set(1);
            sim.eval();
            assert_eq!(q.get(), (v + 1) & 0xff);
        }
        assert_eq!(sim.input_region_skips(), 0);
    }
}
