//! Verilate, compile and cache one design as a shared library.

use super::ico::IcoPlan;
use super::port::{PortDir, PortInfo};
use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bumped whenever the generated shim or the build recipe changes, so cached
/// libraries built by an older harness are not reused.
const RECIPE_VERSION: u32 = 8;

/// The recipe of Verilator's runtime objects (shared by every design):
/// unchanged by a new shim.
const RUNTIME_RECIPE: u32 = 6;

/// How to build a model.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Cache folder; one sub-folder per design hash.
    pub cache_dir: PathBuf,
    /// Compile VCD tracing in (needed for `Sim::trace_open`).
    pub trace: bool,
    /// Extra Verilator flags.
    pub verilator_flags: Vec<String>,
    /// Parallel C++ compiles.
    pub jobs: usize,
    /// Where the sources came from (a user's `--rtl` folder), so a build
    /// error names the user's file and not the cache's copy of it; `None`:
    /// errors name the files by their plain names.
    pub source_dir: Option<PathBuf>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        let cache_dir = std::env::var_os("EXANET_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(default_cache_dir);
        BuildOptions {
            cache_dir,
            trace: false,
            verilator_flags: Vec::new(),
            jobs: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
            source_dir: None,
        }
    }
}

/// `target/exanet-cache` of the workspace when run from inside it, else
/// `.exanet-cache` in the current folder.
fn default_cache_dir() -> PathBuf {
    let mut dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    loop {
        if dir.join("Cargo.lock").exists()
            || dir.join("target").is_dir() && dir.join("Cargo.toml").exists()
        {
            return dir.join("target").join("exanet-cache");
        }
        if !dir.pop() {
            return PathBuf::from(".exanet-cache");
        }
    }
}

/// `verilator --version`, or an error saying it is not installed.
pub fn verilator_version() -> Result<String> {
    let out = Command::new("verilator")
        .arg("--version")
        .output()
        .context("`verilator` not found on PATH (install the Debian package `verilator`)")?;
    if !out.status.success() {
        bail!("`verilator --version` failed");
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn verilator_root() -> Result<PathBuf> {
    let out = Command::new("verilator")
        .args(["--getenv", "VERILATOR_ROOT"])
        .output()
        .context("running `verilator --getenv VERILATOR_ROOT`")?;
    let root = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !root.join("include").join("verilated.h").exists() {
        bail!(
            "Verilator root {} has no include/verilated.h",
            root.display()
        );
    }
    Ok(root)
}

pub(crate) struct Built {
    pub lib_path: PathBuf,
    pub ports: Vec<PortInfo>,
}

impl Built {
    fn dir(&self) -> &Path {
        self.lib_path
            .parent()
            .expect("library lives in its build folder")
    }
}

/// The g++ optimisation level of a design's eval code: `EXANET_CXX_OPT`
/// (`-O0` … `-O3`, `-Os`), default `-O1`. A co-simulation test spends more
/// of its time compiling the model than running it: `-O1` compiles the
/// eval code about 30 % faster than `-O2` (CPU time, measured on the NI
/// and the 4x2x2 network) for a slower run (BENCHMARKS.md, "Test suite
/// time"); long runs and speed benchmarks can ask for `-O2`.
fn cxx_opt() -> Result<&'static str> {
    const LEVELS: [&str; 5] = ["-O0", "-O1", "-O2", "-O3", "-Os"];
    match std::env::var("EXANET_CXX_OPT") {
        Err(_) => Ok("-O1"),
        Ok(v) => LEVELS
            .into_iter()
            .find(|l| *l == v.trim())
            .ok_or_else(|| anyhow::anyhow!("EXANET_CXX_OPT = `{v}`: expected one of {LEVELS:?}")),
    }
}

/// Build (or reuse) the shared library of `sources` with top `top`.
pub(crate) fn build(sources: &[(String, String)], top: &str, opts: &BuildOptions) -> Result<Built> {
    let version = verilator_version()?;
    if !top.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || top.is_empty() {
        bail!("top module name `{top}` is not a plain Verilog identifier");
    }
    let mut h = Sha256::new();
    h.update(format!(
        "recipe {RECIPE_VERSION}\n{version}\ntop {top}\ntrace {}\ncxx {}\n",
        opts.trace,
        cxx_opt()?
    ));
    for f in &opts.verilator_flags {
        h.update(format!("flag {f}\n"));
    }
    for (name, text) in sources {
        h.update(format!("file {name} {}\n", text.len()));
        h.update(text.as_bytes());
    }
    let key: String = h
        .finalize()
        .iter()
        .take(10)
        .map(|b| format!("{b:02x}"))
        .collect();
    let dir = opts.cache_dir.join(format!("{top}-{key}"));
    let lib_path = dir.join(format!("lib{top}.so"));
    let ports_path = dir.join("ports.txt");
    if lib_path.exists() && ports_path.exists() {
        let ports = read_ports(&std::fs::read_to_string(&ports_path)?)?;
        return Ok(Built { lib_path, ports });
    }
    // Threads of one process (the tests of one test binary) that want the
    // same design wait for the first one's build and then reuse it, instead
    // of each compiling its own copy on the same cores.
    let lock = design_lock(&dir);
    let _building = lock.lock().unwrap_or_else(|e| e.into_inner());
    if lib_path.exists() && ports_path.exists() {
        let ports = read_ports(&std::fs::read_to_string(&ports_path)?)?;
        return Ok(Built { lib_path, ports });
    }
    // Build in a private folder and rename it into place: concurrent test
    // processes may build the same design; the first rename wins.
    std::fs::create_dir_all(&opts.cache_dir)
        .with_context(|| format!("creating cache folder {}", opts.cache_dir.display()))?;
    let tmp = opts.cache_dir.join(format!(
        ".{top}-{key}.{}.{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
    ));
    #[cfg(test)]
    tests::BUILT.lock().unwrap().push(dir.clone());
    let result = build_into(&tmp, sources, top, opts);
    if let Err(e) = result {
        // The error carries the tool's output (its last lines); the folder
        // goes, so failed builds leave nothing in the cache.
        let copies = format!("{}{}", tmp.join("src").display(), std::path::MAIN_SEPARATOR);
        let origin = opts
            .source_dir
            .as_ref()
            .map(|d| format!("{}{}", d.display(), std::path::MAIN_SEPARATOR))
            .unwrap_or_default();
        let text = format!("{e:#}").replace(&copies, &origin);
        let _ = std::fs::remove_dir_all(&tmp);
        bail!("building model `{top}`: {text}");
    }
    match std::fs::rename(&tmp, &dir) {
        Ok(()) => {}
        Err(_) if lib_path.exists() => {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        Err(e) => {
            return Err(e).with_context(|| format!("moving {} to {}", tmp.display(), dir.display()))
        }
    }
    let ports = read_ports(&std::fs::read_to_string(&ports_path)?)?;
    Ok(Built { lib_path, ports })
}

/// The lock of the build of cache folder `dir`, one per folder per process.
fn design_lock(dir: &Path) -> std::sync::Arc<std::sync::Mutex<()>> {
    type Locks =
        std::sync::Mutex<std::collections::HashMap<PathBuf, std::sync::Arc<std::sync::Mutex<()>>>>;
    static LOCKS: std::sync::OnceLock<Locks> = std::sync::OnceLock::new();
    LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(dir.to_path_buf())
        .or_default()
        .clone()
}

/// Speed of a pure C++ Verilator loop on the same model: no Rust, no golden
/// model, no FFI. Every input but `clock` gets fresh random bits each cycle
/// (`reset` is held low after the first cycle), the model is evaluated twice
/// a cycle, and outputs are folded into a sink so nothing is optimised away.
/// `through_shim`: evaluate through the harness shim's `exanet_eval` (which
/// skips the input region when it may, see `ico`) instead of `m->eval()`.
/// Returns cycles per second of process CPU time (not wall time, so other
/// jobs sharing the cores do not skew the comparison) and the outputs'
/// fold (equal for equal `cycles` and `seed` whichever way the model is
/// evaluated).
pub fn cpp_loop_speed(
    sources: &[(String, String)],
    top: &str,
    opts: &BuildOptions,
    cycles: u64,
    seed: u64,
    through_shim: bool,
) -> Result<(f64, u64)> {
    let mut opts = opts.clone();
    opts.trace = false;
    let built = build(sources, top, &opts)?;
    let dir = built.dir();
    // `cpp_loop3`: linked with the shim (`cpp_loop2` was not; `cpp_loop`
    // was timed by wall time).
    let exe = dir.join("cpp_loop3");
    if !exe.exists() {
        let main = dir.join("obj").join("exanet_cpp_loop.cpp");
        std::fs::write(&main, cpp_loop(top, &built.ports))?;
        let root = verilator_root()?;
        let mut objs: Vec<PathBuf> = std::fs::read_dir(dir.join("obj"))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "o"))
            .collect();
        objs.sort();
        let tmp_exe = dir.join(format!("cpp_loop.{}", std::process::id()));
        let mut cmd = Command::new("g++");
        cmd.args([
            "-std=gnu++17",
            "-O2",
            "-w",
            "-DVM_TRACE=0",
            "-DVM_COVERAGE=0",
            "-DVM_SC=0",
        ])
        .arg(format!("-I{}", dir.join("obj").display()))
        .arg(format!("-I{}", root.join("include").display()))
        .arg(format!(
            "-I{}",
            root.join("include").join("vltstd").display()
        ))
        .arg(&main)
        .args(&objs)
        .arg("-pthread")
        .arg("-o")
        .arg(&tmp_exe);
        run(
            &mut cmd,
            "building the C++ reference loop",
            &dir.join("cpp_loop.log"),
        )?;
        std::fs::rename(&tmp_exe, &exe)?;
    }
    let out = Command::new(&exe)
        .arg(cycles.to_string())
        .arg(seed.to_string())
        .arg(if through_shim { "shim" } else { "eval" })
        .output()
        .with_context(|| format!("running {}", exe.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().to_string())
    };
    let speed = field("cycles_per_sec=").and_then(|v| v.parse::<f64>().ok());
    let sink = field("sink=").and_then(|v| v.parse::<u64>().ok());
    match (speed, sink) {
        (Some(v), Some(k)) => Ok((v, k)),
        _ => bail!("C++ reference loop printed no speed and sink: {text}"),
    }
}

fn cpp_loop(top: &str, ports: &[PortInfo]) -> String {
    let mut drive = String::new();
    let mut sink = String::new();
    for p in ports {
        let n = &p.name;
        match (p.dir, p.width) {
            (PortDir::In, _) if n == "clock" => {}
            (PortDir::In, _) if n == "reset" => drive.push_str("    m->reset = 0;\n"),
            (PortDir::In, w) if w <= 64 => {
                let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
                drive.push_str(&format!("    m->{n} = rnd() & 0x{mask:x}ULL;\n"));
            }
            (PortDir::In, w) => {
                let words = w.div_ceil(32);
                let top_mask = if w % 32 == 0 {
                    u32::MAX
                } else {
                    (1u32 << (w % 32)) - 1
                };
                drive.push_str(&format!(
                    "    for (int i = 0; i < {words}; i++) m->{n}[i] = (uint32_t)rnd();\n    m->{n}[{last}] &= 0x{top_mask:x}u;\n",
                    last = words - 1
                ));
            }
            (PortDir::Out, w) if w <= 64 => {
                sink.push_str(&format!("    sink ^= (uint64_t)m->{n};\n"))
            }
            (PortDir::Out, _) => sink.push_str(&format!("    sink ^= (uint64_t)m->{n}[0];\n")),
            _ => {}
        }
    }
    let has_reset = ports
        .iter()
        .any(|p| p.name == "reset" && p.dir == PortDir::In);
    let reset_on = if has_reset { "  m->reset = 1;\n" } else { "" };
    format!(
        "#include \"V{top}.h\"\n#include \"verilated.h\"\n#include <ctime>\n#include <cstdio>\n#include <cstdlib>\n#include <cstdint>\n#include <cstring>\n\
extern \"C\" {{ void* exanet_new(); void exanet_eval(void*); void* exanet_model(void*); void exanet_delete(void*); }}\n\
static uint64_t s[4];\n\
static inline uint64_t rotl(uint64_t x, int k) {{ return (x << k) | (x >> (64 - k)); }}\n\
static inline uint64_t rnd() {{ uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17; s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45); return r; }}\n\
template <bool SHIM> static uint64_t run(V{top}* m, void* h, uint64_t cycles) {{\n\
  uint64_t sink = 0;\n\
  for (uint64_t c = 0; c < cycles; c++) {{\n\
    m->clock = 0;\n{drive}    if (SHIM) exanet_eval(h); else m->eval();\n{sink}    m->clock = 1;\n    if (SHIM) exanet_eval(h); else m->eval();\n  }}\n\
  return sink;\n}}\n\
int main(int argc, char** argv) {{\n\
  uint64_t cycles = argc > 1 ? strtoull(argv[1], 0, 10) : 1000000;\n\
  uint64_t seed = argc > 2 ? strtoull(argv[2], 0, 10) : 1;\n\
  bool shim = argc > 3 && !strcmp(argv[3], \"shim\");\n\
  for (int i = 0; i < 4; i++) {{ seed += 0x9E3779B97F4A7C15ULL; uint64_t z = seed; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL; z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL; s[i] = z ^ (z >> 31); }}\n\
  void* h = exanet_new();\n\
  V{top}* m = (V{top}*)exanet_model(h);\n\
{reset_on}  m->clock = 0; exanet_eval(h); m->clock = 1; exanet_eval(h);\n\
  timespec a, b;\n  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);\n\
  uint64_t sink = shim ? run<true>(m, h, cycles) : run<false>(m, h, cycles);\n\
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);\n  double secs = (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);\n\
  printf(\"cycles_per_sec=%.1f\\nsink=%llu\\n\", cycles / secs, (unsigned long long)sink);\n\
  exanet_delete(h);\n  return 0;\n}}\n"
    )
}

fn run(cmd: &mut Command, what: &str, log: &Path) -> Result<()> {
    let out = cmd.output().with_context(|| format!("starting {what}"))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    std::fs::write(log, &text).ok();
    if !out.status.success() {
        let tail: Vec<&str> = text.lines().rev().take(25).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!("{what} failed ({}):\n{}", out.status, tail.join("\n"));
    }
    Ok(())
}

fn build_into(
    tmp: &Path,
    sources: &[(String, String)],
    top: &str,
    opts: &BuildOptions,
) -> Result<()> {
    let src = tmp.join("src");
    let obj = tmp.join("obj");
    std::fs::create_dir_all(&src)?;
    std::fs::create_dir_all(&obj)?;
    let mut files = Vec::new();
    for (name, text) in sources {
        if name.contains('/') || name.contains("..") {
            bail!("source name `{name}` must be a plain file name");
        }
        let p = src.join(name);
        std::fs::write(&p, text)?;
        files.push(p);
    }
    let mut cmd = Command::new("verilator");
    cmd.arg("--cc")
        .args(["--top-module", top])
        .arg("--Mdir")
        .arg(&obj)
        // Lint is `exanet lint`'s job; a model of externally supplied or
        // synthesized Verilog must build even when it is not lint-clean.
        .arg("-Wno-fatal")
        .args(["-O3", "--x-assign", "fast", "--x-initial", "fast"]);
    if opts.trace {
        cmd.arg("--trace");
    }
    cmd.args(&opts.verilator_flags);
    cmd.args(&files);
    run(&mut cmd, "verilator", &tmp.join("verilator.log"))?;

    let header = std::fs::read_to_string(obj.join(format!("V{top}.h")))
        .with_context(|| format!("reading Verilator header V{top}.h"))?;
    let ports = parse_ports(&header)?;
    if ports.is_empty() {
        bail!("model `{top}` has no ports");
    }
    std::fs::write(tmp.join("ports.txt"), write_ports(&ports))?;

    let classes = std::fs::read_to_string(obj.join(format!("V{top}_classes.mk")))
        .with_context(|| format!("reading V{top}_classes.mk"))?;
    let root = verilator_root()?;
    // (source, kind): the design's eval code, its run-once code (constructors,
    // initial settling: compiled without optimisation, as Verilator's own
    // makefiles do, which saves much of a large design's compile time), and
    // Verilator's design-independent runtime.
    let mut cpp: Vec<(PathBuf, Unit)> = Vec::new();
    for (var, unit) in [
        ("VM_CLASSES_FAST", Unit::Fast),
        ("VM_CLASSES_SLOW", Unit::Slow),
        ("VM_SUPPORT_FAST", Unit::Fast),
        ("VM_SUPPORT_SLOW", Unit::Slow),
    ] {
        for n in mk_list(&classes, var) {
            cpp.push((obj.join(format!("{n}.cpp")), unit));
        }
    }
    for var in ["VM_GLOBAL_FAST", "VM_GLOBAL_SLOW"] {
        for n in mk_list(&classes, var) {
            cpp.push((root.join("include").join(format!("{n}.cpp")), Unit::Runtime));
        }
    }
    let inc = [
        format!("-I{}", obj.display()),
        format!("-I{}", root.join("include").display()),
        format!("-I{}", root.join("include").join("vltstd").display()),
    ];
    let mut defs = vec!["-DVM_COVERAGE=0".to_string(), "-DVM_SC=0".to_string()];
    defs.push(format!("-DVM_TRACE={}", opts.trace as u8));
    defs.push(format!("-DVM_TRACE_VCD={}", opts.trace as u8));
    defs.push("-DVM_TRACE_FST=0".to_string());
    let opt = cxx_opt()?;
    let cflags = [
        "-std=gnu++17",
        opt,
        "-fPIC",
        "-fno-semantic-interposition",
        // Only the shim's entry points are exported (it pushes default
        // visibility); everything else binds inside the library.
        "-fvisibility=hidden",
        "-fvisibility-inlines-hidden",
        "-w",
    ];
    let objs: Vec<PathBuf> = cpp
        .iter()
        .enumerate()
        .map(|(i, (c, _))| {
            obj.join(format!(
                "{}_{i}.o",
                c.file_stem().unwrap().to_string_lossy()
            ))
        })
        .collect();
    let jobs = opts.jobs.max(1);
    // The runtime (verilated.cpp, …) is the same for every design: compiled
    // once per Verilator version, flags and trace setting, then copied in.
    let runtime_dir = {
        let mut h = Sha256::new();
        h.update(format!(
            "runtime {RUNTIME_RECIPE}\n{}\n{}\n{}\n",
            verilator_version()?,
            cflags.join(" "),
            defs.join(" ")
        ));
        let key: String = h
            .finalize()
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect();
        opts.cache_dir.join(format!("runtime-{key}"))
    };
    std::fs::create_dir_all(&runtime_dir)
        .with_context(|| format!("creating {}", runtime_dir.display()))?;
    let runtime_inc = &inc[1..];
    let slow_cflags: Vec<&str> = cflags
        .iter()
        .map(|f| if *f == opt { "-O0" } else { *f })
        .collect();
    let work: Vec<((PathBuf, Unit), PathBuf)> = cpp.into_iter().zip(objs.iter().cloned()).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let errors = std::sync::Mutex::new(Vec::<anyhow::Error>::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(((c, unit), o)) = work.get(i) else {
                    break;
                };
                if *unit == Unit::Runtime {
                    let r = runtime_object(c, &runtime_dir, &cflags, runtime_inc, &defs).and_then(
                        |r| {
                            std::fs::copy(&r, o)
                                .map(|_| ())
                                .with_context(|| format!("copying {}", r.display()))
                        },
                    );
                    if let Err(e) = r {
                        errors.lock().unwrap().push(e);
                    }
                    continue;
                }
                let mut cmd = Command::new("g++");
                if *unit == Unit::Slow {
                    cmd.args(&slow_cflags);
                } else {
                    cmd.args(cflags);
                }
                cmd.args(&inc).args(&defs).arg("-c").arg(c).arg("-o").arg(o);
                let log = o.with_extension("log");
                if let Err(e) = run(&mut cmd, &format!("g++ {}", c.display()), &log) {
                    errors.lock().unwrap().push(e);
                }
            });
        }
    });
    if let Some(e) = errors.into_inner().unwrap().into_iter().next() {
        return Err(e);
    }
    // The shim: first with the input region skipped when it may be (see
    // `ico`), then with the fast eval (see `shim`), both relying on
    // Verilator 5.006's generated names; if neither compiles and links, the
    // plain one. `shim.txt` says which one the library has, and why not
    // the skip.
    let mut generated = Vec::new();
    for e in std::fs::read_dir(&obj)? {
        let p = e?.path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".cpp") {
            generated.push((name, std::fs::read_to_string(&p)?));
        }
    }
    let plan = super::ico::plan(top, &generated, &ports);
    let mut modes = Vec::new();
    if let Ok(p) = &plan {
        modes.push(ShimMode::SkipIco(p));
    }
    modes.extend([ShimMode::Fast, ShimMode::Plain]);
    let shim_cpp = obj.join("exanet_shim.cpp");
    let shim_o = obj.join("exanet_shim.o");
    let lib = tmp.join(format!("lib{top}.so"));
    let mut notes = match &plan {
        Ok(p) => format!(
            "input region: skipped when these inputs are unchanged: {}\n",
            p.watched
                .iter()
                .map(|&i| ports[i].name.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ),
        Err(why) => format!("input region: run on every eval ({why})\n"),
    };
    for (k, mode) in modes.iter().enumerate() {
        let last = k + 1 == modes.len();
        std::fs::write(&shim_cpp, shim(top, &ports, opts.trace, *mode))?;
        let mut cmd = Command::new("g++");
        cmd.args(cflags)
            .args(&inc)
            .args(&defs)
            .arg("-c")
            .arg(&shim_cpp)
            .arg("-o")
            .arg(&shim_o);
        let mut link = Command::new("g++");
        // -Bsymbolic: calls inside the model bind directly, not through the PLT.
        link.arg("-shared")
            .arg("-Wl,-Bsymbolic")
            .arg("-o")
            .arg(&lib)
            .args(&objs)
            .arg(&shim_o)
            .arg("-pthread");
        let r = run(
            &mut cmd,
            "g++ exanet_shim.cpp",
            &obj.join("exanet_shim.log"),
        )
        .and_then(|()| run(&mut link, "linking the model", &tmp.join("link.log")));
        match r {
            Ok(()) => {
                notes.push_str(&format!("shim: {}\n", mode.name()));
                break;
            }
            Err(e) if last => return Err(e),
            Err(e) => notes.push_str(&format!("shim {} failed: {e:#}\n", mode.name())),
        }
    }
    std::fs::write(tmp.join("shim.txt"), notes)?;
    Ok(())
}

/// What a generated C++ file is, for how it is compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    /// Evaluation code ([`cxx_opt`]).
    Fast,
    /// Run-once code: constructors, initial settling (`-O0`).
    Slow,
    /// Verilator's runtime library, shared by every design.
    Runtime,
}

/// The object of Verilator runtime source `c` in the shared runtime cache
/// `dir`, compiled there first if missing (into a private name, then
/// renamed: concurrent builds may race, the first rename wins).
fn runtime_object(
    c: &Path,
    dir: &Path,
    cflags: &[&str],
    inc: &[String],
    defs: &[String],
) -> Result<PathBuf> {
    let stem = c
        .file_stem()
        .context("runtime source without a name")?
        .to_string_lossy()
        .into_owned();
    let o = dir.join(format!("{stem}.o"));
    if o.exists() {
        return Ok(o);
    }
    // Private to this call: this process's id (test processes share the
    // cache) and a number no other call in this process draws (the
    // compiles run on several threads).
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{stem}.{}.{n}.o", std::process::id()));
    let mut cmd = Command::new("g++");
    cmd.args(cflags)
        .args(inc)
        .args(defs)
        .arg("-c")
        .arg(c)
        .arg("-o")
        .arg(&tmp);
    run(
        &mut cmd,
        &format!("g++ {}", c.display()),
        &tmp.with_extension("log"),
    )?;
    std::fs::rename(&tmp, &o).with_context(|| format!("moving {} into place", tmp.display()))?;
    let _ = std::fs::remove_file(tmp.with_extension("log"));
    Ok(o)
}

/// The names listed in a `VAR += \` block of a Verilator `_classes.mk`.
fn mk_list(mk: &str, var: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in mk.lines() {
        let t = line.trim();
        if !inside {
            if t.starts_with(var) && t[var.len()..].trim_start().starts_with("+=") {
                inside = t.ends_with('\\');
                let rest = t[var.len()..].trim_start()[2..]
                    .trim_end_matches('\\')
                    .trim();
                out.extend(rest.split_whitespace().map(String::from));
            }
        } else {
            inside = t.ends_with('\\');
            out.extend(
                t.trim_end_matches('\\')
                    .split_whitespace()
                    .map(String::from),
            );
        }
    }
    out
}

/// Parse `VL_IN8(&name,msb,lsb);`-style port declarations of `V<top>.h`.
pub(crate) fn parse_ports(header: &str) -> Result<Vec<PortInfo>> {
    let mut ports = Vec::new();
    for line in header.lines() {
        let t = line.trim();
        let Some(rest) = t.strip_prefix("VL_") else {
            continue;
        };
        let (dir, rest) = if let Some(r) = rest.strip_prefix("INOUT") {
            (PortDir::InOut, r)
        } else if let Some(r) = rest.strip_prefix("IN") {
            (PortDir::In, r)
        } else if let Some(r) = rest.strip_prefix("OUT") {
            (PortDir::Out, r)
        } else {
            continue;
        };
        let Some(open) = rest.find("(&") else {
            continue;
        };
        let Some(close) = rest.find(')') else {
            continue;
        };
        let args: Vec<&str> = rest[open + 2..close].split(',').map(str::trim).collect();
        if args.len() < 3 {
            bail!("unrecognised port declaration `{t}`");
        }
        let msb: u32 = args[1]
            .parse()
            .with_context(|| format!("port msb in `{t}`"))?;
        let lsb: u32 = args[2]
            .parse()
            .with_context(|| format!("port lsb in `{t}`"))?;
        if lsb != 0 {
            bail!(
                "port `{}` has lsb {lsb}; only [N:0] ports are supported",
                args[0]
            );
        }
        ports.push(PortInfo {
            name: args[0].to_string(),
            width: msb + 1,
            dir,
        });
    }
    Ok(ports)
}

fn write_ports(ports: &[PortInfo]) -> String {
    ports
        .iter()
        .map(|p| {
            let d = match p.dir {
                PortDir::In => "in",
                PortDir::Out => "out",
                PortDir::InOut => "inout",
            };
            format!("{} {} {}\n", d, p.width, p.name)
        })
        .collect()
}

fn read_ports(text: &str) -> Result<Vec<PortInfo>> {
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() != 3 {
                bail!("corrupt ports.txt line `{l}`");
            }
            let dir = match f[0] {
                "in" => PortDir::In,
                "out" => PortDir::Out,
                _ => PortDir::InOut,
            };
            Ok(PortInfo {
                name: f[2].to_string(),
                width: f[1].parse()?,
                dir,
            })
        })
        .collect()
}

/// Which evaluation entry the shim gets.
#[derive(Clone, Copy, Debug)]
enum ShimMode<'a> {
    /// Fast, and skipping the input region when no input it reads changed
    /// (see [`super::ico`]).
    SkipIco(&'a IcoPlan),
    /// The model's root evaluation called directly (after the first `eval`).
    Fast,
    /// `eval()` as Verilator documents it.
    Plain,
}

impl ShimMode<'_> {
    /// As `shim.txt` names it.
    fn name(&self) -> &'static str {
        match self {
            ShimMode::SkipIco(_) => "skip-ico",
            ShimMode::Fast => "fast",
            ShimMode::Plain => "plain",
        }
    }

    /// The value `exanet_eval_mode` returns.
    fn code(&self) -> u32 {
        match self {
            ShimMode::SkipIco(_) => 2,
            ShimMode::Fast => 1,
            ShimMode::Plain => 0,
        }
    }
}

/// Bytes Verilator stores a port of `width` bits in (see `port.rs`).
fn storage_bytes(width: u32) -> u32 {
    match width {
        0..=8 => 1,
        9..=16 => 2,
        17..=32 => 4,
        33..=64 => 8,
        w => 4 * w.div_ceil(32),
    }
}

/// The C shim the Rust side loads. With [`ShimMode::Fast`], `exanet_eval`
/// calls the model's root evaluation directly after the first `eval()`: the
/// model's `eval_step` also writes and reads Verilator thread-locals
/// (multithreading bookkeeping: `mtaskId`, end-of-eval message queues) that
/// a single-threaded model without `$display` does not need, and in a
/// `dlopen`ed library each such access is a `__tls_get_addr` call. Reaching
/// the root needs the model's private `vlSymsp`, hence the `private`
/// redefinition around that one header.
///
/// With [`ShimMode::SkipIco`], `exanet_eval` also keeps a copy of the input
/// ports the input region reads, and when none of them changed since that
/// region last ran it runs the root evaluation without the region (the
/// plan's body): on the clock-high `eval` of a cycle, typically, where only
/// the clock was written. `exanet_eval_full` always runs the whole root
/// evaluation (`EXANET_ICO_SKIP=0`); `exanet_ico_skips` counts the skips.
fn shim(top: &str, ports: &[PortInfo], trace: bool, mode: ShimMode) -> String {
    let fast = !matches!(mode, ShimMode::Plain);
    let mut s = String::new();
    s.push_str("#include \"verilated.h\"\n#include <cstring>\n");
    if trace {
        s.push_str("#include \"verilated_vcd_c.h\"\n");
    }
    if fast {
        s.push_str(&format!(
            "#define private public\n#include \"V{top}.h\"\n#undef private\n\
             #include \"V{top}__Syms.h\"\n\
             void V{top}___024root___eval(V{top}___024root* vlSelf);\n"
        ));
    } else {
        s.push_str(&format!("#include \"V{top}.h\"\n"));
    }
    // The watched inputs' copy: one byte array, each port at its offset.
    let mut watched: Vec<(&str, u32, u32)> = Vec::new();
    if let ShimMode::SkipIco(plan) = mode {
        let mut off = 0;
        for &i in &plan.watched {
            let n = storage_bytes(ports[i].width);
            watched.push((&ports[i].name, off, n));
            off += n;
        }
        for c in &plan.calls {
            s.push_str(&format!(
                "void V{top}___024root___{c}(V{top}___024root* vlSelf);\n"
            ));
        }
        s.push_str(&format!(
            "static void exanet_eval_no_ico(V{top}___024root* vlSelf) {{\n{}\n}}\n",
            plan.body
        ));
        for (name, _, n) in &watched {
            s.push_str(&format!(
                "static_assert(sizeof(((V{top}*)nullptr)->{name}) == {n}, \"storage of port {name}\");\n"
            ));
        }
    }
    let copy_bytes = watched.iter().map(|w| w.1 + w.2).max().unwrap_or(0).max(1);
    s.push_str(&format!(
        "struct ExanetCtx {{ VerilatedContext* ctx; V{top}* m; void* tfp; unsigned long long skips; unsigned char in[{copy_bytes}]; }};\n"
    ));
    if let ShimMode::SkipIco(_) = mode {
        // 1 when a watched input differs from its copy; the copy is then
        // brought up to date (the input region is about to run on it).
        s.push_str(
            "static inline bool exanet_inputs_changed(ExanetCtx* c) {\n  bool changed = false;\n",
        );
        for (name, off, n) in &watched {
            s.push_str(&format!(
                "  if (memcmp(c->in + {off}, &c->m->{name}, {n})) {{ memcpy(c->in + {off}, &c->m->{name}, {n}); changed = true; }}\n"
            ));
        }
        s.push_str("  return changed;\n}\n");
    }
    s.push_str(&format!(
        "#pragma GCC visibility push(default)\n\
         extern \"C\" {{\n\
         void* exanet_new() {{\n\
           ExanetCtx* c = new ExanetCtx;\n\
           c->ctx = new VerilatedContext;\n\
           c->ctx->traceEverOn({t});\n\
           c->m = new V{top}(c->ctx, \"TOP\");\n\
           c->tfp = nullptr;\n\
           c->skips = 0;\n\
           memset(c->in, 0, sizeof c->in);\n\
           return c;\n\
         }}\n\
         unsigned exanet_eval_mode() {{ return {code}; }}\n\
         unsigned long long exanet_ico_skips(void* p) {{ return ((ExanetCtx*)p)->skips; }}\n\
         void* exanet_model(void* p) {{ return ((ExanetCtx*)p)->m; }}\n",
        t = if trace { "true" } else { "false" },
        code = mode.code()
    ));
    s.push_str("void exanet_trace_close(void* p);\n");
    s.push_str(
        "void exanet_delete(void* p) {\n\
           ExanetCtx* c = (ExanetCtx*)p;\n\
           exanet_trace_close(p);\n\
           c->m->final();\n\
           delete c->m;\n\
           delete c->ctx;\n\
           delete c;\n\
         }\n\
",
    );
    if fast {
        // `eval()` also marks the model active for the tracer (a traced
        // model's dump writes no change unless `__Vm_activity` is set);
        // the direct call must do the same or every waveform is flat.
        let activity = if trace {
            "syms->__Vm_activity = true; "
        } else {
            ""
        };
        let (first, root) = match mode {
            // The first `eval()` runs the input region too: take the copy.
            ShimMode::SkipIco(_) => (
                "{ exanet_inputs_changed(c); c->m->eval(); }",
                format!(
                    "if (exanet_inputs_changed(c)) V{top}___024root___eval(&syms->TOP);\n\
                     else {{ c->skips++; exanet_eval_no_ico(&syms->TOP); }}"
                ),
            ),
            _ => (
                "c->m->eval();",
                format!("V{top}___024root___eval(&syms->TOP);"),
            ),
        };
        let full_root = if let ShimMode::SkipIco(_) = mode {
            format!("exanet_inputs_changed(c); V{top}___024root___eval(&syms->TOP);")
        } else {
            format!("V{top}___024root___eval(&syms->TOP);")
        };
        s.push_str(&format!(
            "void exanet_eval(void* p) {{\n\
               ExanetCtx* c = (ExanetCtx*)p;\n\
               V{top}__Syms* syms = c->m->vlSymsp;\n\
               if (VL_UNLIKELY(!syms->__Vm_didInit)) {first}\n\
               else {{ {root} {activity}}}\n\
             }}\n\
             void exanet_eval_full(void* p) {{\n\
               ExanetCtx* c = (ExanetCtx*)p;\n\
               V{top}__Syms* syms = c->m->vlSymsp;\n\
               if (VL_UNLIKELY(!syms->__Vm_didInit)) {first}\n\
               else {{ {full_root} {activity}}}\n\
             }}\n"
        ));
    } else {
        s.push_str(
            "void exanet_eval(void* p) { ((ExanetCtx*)p)->m->eval(); }\n\
             void exanet_eval_full(void* p) { ((ExanetCtx*)p)->m->eval(); }\n",
        );
    }
    s.push_str(
        "\
         void exanet_ports(void* p, void** out) {\n\
           ExanetCtx* c = (ExanetCtx*)p;\n",
    );
    for (i, port) in ports.iter().enumerate() {
        s.push_str(&format!("  out[{i}] = (void*)&c->m->{};\n", port.name));
    }
    s.push_str("}\n");
    if trace {
        s.push_str(
            "int exanet_trace_open(void* p, const char* path) {\n\
               ExanetCtx* c = (ExanetCtx*)p;\n\
               if (c->tfp) return 0;\n\
               VerilatedVcdC* t = new VerilatedVcdC;\n\
               c->m->trace(t, 99);\n\
               t->open(path);\n\
               if (!t->isOpen()) { delete t; return 1; }\n\
               c->tfp = t;\n\
               return 0;\n\
             }\n\
             void exanet_trace_dump(void* p, unsigned long long time) {\n\
               ExanetCtx* c = (ExanetCtx*)p;\n\
               if (c->tfp) ((VerilatedVcdC*)c->tfp)->dump((vluint64_t)time);\n\
             }\n\
             void exanet_trace_close(void* p) {\n\
               ExanetCtx* c = (ExanetCtx*)p;\n\
               if (c->tfp) { ((VerilatedVcdC*)c->tfp)->close(); delete (VerilatedVcdC*)c->tfp; c->tfp = nullptr; }\n\
             }\n",
        );
    } else {
        s.push_str(
            "int exanet_trace_open(void*, const char*) { return 1; }\n\
             void exanet_trace_dump(void*, unsigned long long) {}\n\
             void exanet_trace_close(void*) {}\n",
        );
    }
    s.push_str("}\n#pragma GCC visibility pop\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cache folder a build was started for, in this test process.
    pub(super) static BUILT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

    /// Four threads asking for the same new design at once: one compiles
    /// it, the others wait and reuse it.
    #[test]
    fn concurrent_requests_for_one_design_build_it_once() {
        if crate::cosim::skip_without_verilator() {
            return;
        }
        // The usual cache (its Verilator runtime is already compiled), a
        // design it cannot hold yet (a fresh comment), removed afterwards.
        let opts = BuildOptions {
            jobs: 1,
            ..BuildOptions::default()
        };
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let src = vec![(
            "once.v".to_string(),
            format!(
                "// {nonce} {}\nmodule once(input clock, input [7:0] a, output reg [7:0] q);\n\
                 always @(posedge clock) q <= a + 8'd1;\nendmodule\n",
                std::process::id()
            ),
        )];
        let libs: Vec<PathBuf> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| build(&src, "once", &opts).unwrap().lib_path))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(libs.iter().all(|l| l == &libs[0] && l.exists()), "{libs:?}");
        let dir = libs[0].parent().unwrap().to_path_buf();
        let started = BUILT.lock().unwrap().iter().filter(|d| **d == dir).count();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(started, 1, "builds started for {}", dir.display());
    }

    #[test]
    fn parses_verilator_port_macros() {
        let h = "    VL_IN8(&clock,0,0);\n    VL_INW(&w,99,0,4);\n    VL_OUT64(&q,40,0);\n    VL_OUT(&y,31,0);\n";
        let p = parse_ports(h).unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(
            (p[1].name.as_str(), p[1].width, p[1].dir),
            ("w", 100, PortDir::In)
        );
        assert_eq!(
            (p[2].name.as_str(), p[2].width, p[2].dir),
            ("q", 41, PortDir::Out)
        );
        assert_eq!(read_ports(&write_ports(&p)).unwrap(), p);
    }

    #[test]
    fn reads_classes_mk_lists() {
        let mk =
            "VM_CLASSES_FAST += \\\n\tVa \\\n\tVb \\\n\nVM_GLOBAL_FAST += \\\n\tverilated \\\n";
        assert_eq!(mk_list(mk, "VM_CLASSES_FAST"), vec!["Va", "Vb"]);
        assert_eq!(mk_list(mk, "VM_GLOBAL_FAST"), vec!["verilated"]);
        assert!(mk_list(mk, "VM_SUPPORT_SLOW").is_empty());
    }
}
