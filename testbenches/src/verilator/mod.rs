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

mod build;
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
            let eval_fn: EvalFn = *lib.get::<EvalFn>(b"exanet_eval\0")?;
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
