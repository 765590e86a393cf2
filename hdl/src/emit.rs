//! Verilog emission: rust-hdl block → checked, clean, one-module-per-file Verilog.
//!
//! rust-hdl names its top `top` and every submodule by its hierarchical path
//! with `$` separators (`top$fifo$mem`). Vivado users and the Verilator harness
//! should never see `$`, so the top is named by the caller (project prefix
//! `exanet_`), and every `$` becomes `_`. The renaming is checked to be
//! injective: the number of distinct identifiers must not change, otherwise
//! emission fails instead of silently merging two signals.

use anyhow::{bail, Context, Result};
use rust_hdl::prelude::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The environment variable naming a folder where emitted designs are kept
/// between processes (see [`memoized`]); unset, nothing is kept on disk.
pub const EMIT_CACHE_ENV: &str = "EXANET_EMIT_CACHE";

/// `make()`'s design, emitted once per `kind` and `key` (the parameters'
/// full `Debug` text) in this process and, when [`EMIT_CACHE_ENV`] names a
/// folder, once per build of these sources: the file's name carries a
/// fingerprint of this crate's sources and templates, the golden model's
/// and `Cargo.lock` (`build.rs`), so another build never reads it.
///
/// Why: rust-hdl compiles a regular expression for every array-indexed
/// identifier of every unrolled loop, about 4 s of CPU for the default
/// router, and a test suite (or `generate`, which needs the router for its
/// own top and inside the node) asks for the same router many times.
/// A file that cannot be read or parsed is emitted again and rewritten; a
/// folder that cannot be written only loses the saving.
pub fn memoized(kind: &str, key: &str, make: impl FnOnce() -> Result<Emitted>) -> Result<Emitted> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static MEMO: OnceLock<Mutex<HashMap<(String, String), Emitted>>> = OnceLock::new();
    let memo = MEMO.get_or_init(Default::default);
    let mkey = (kind.to_string(), key.to_string());
    if let Some(e) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(&mkey) {
        return Ok(e.clone());
    }
    let dir = std::env::var_os(EMIT_CACHE_ENV).filter(|d| !d.is_empty());
    let e = through_cache_folder(dir.map(PathBuf::from).as_deref(), kind, key, make)?;
    memo.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(mkey, e.clone());
    Ok(e)
}

/// [`memoized`]'s disk side: `make()`'s design from `dir` when a build of
/// these sources kept it there, else made and kept.
fn through_cache_folder(
    dir: Option<&Path>,
    kind: &str,
    key: &str,
    make: impl FnOnce() -> Result<Emitted>,
) -> Result<Emitted> {
    let file = dir.map(|d| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(&(kind, key), &mut h);
        let digest = std::hash::Hasher::finish(&h);
        d.join(format!(
            "{kind}-{}-{digest:016x}.json",
            env!("EXANET_HDL_FINGERPRINT")
        ))
    });
    let cached = file
        .as_ref()
        .and_then(|f| std::fs::read(f).ok())
        .and_then(|b| serde_json::from_slice::<(String, String, Emitted)>(&b).ok())
        .filter(|(k, p, _)| k == kind && p == key)
        .map(|(_, _, e)| e);
    match cached {
        Some(e) => Ok(e),
        None => {
            let e = make()?;
            if let Some(f) = &file {
                let _ = write_cache_file(f, &(kind, key, &e));
            }
            Ok(e)
        }
    }
}

/// Write `value` to `f` atomically (a temporary file renamed over it), so a
/// concurrent reader sees the whole file or none.
fn write_cache_file(f: &Path, value: &impl serde::Serialize) -> Result<()> {
    let dir = f.parent().context("cache file has a folder")?;
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.{:?}",
        f.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&tmp, serde_json::to_vec(value)?)?;
    std::fs::rename(&tmp, f)?;
    Ok(())
}

/// Verilator configuration shipped beside every emitted design.
///
/// rust-hdl emits each module's logic as one `always @(*)`, so any
/// parent → child → parent combinational path (a child's output feeding
/// logic that drives another input of the same child) looks to Verilator
/// like a combinational loop through the whole block and is reported as
/// UNOPTFLAT. The paths are not real loops: they go through distinct bits.
/// Verilator then orders the block by re-evaluating it until it settles,
/// which is slower but correct **provided** every hand-written leaf computes
/// its combinational outputs in dependency order inside its one block (each
/// signal assigned before it is read). With Verilator 5.006 we hit one case
/// where it was not: a leaf that read an input before the parent had set it
/// in the same settle pass produced a stale value that survived the pass
/// (seen only in co-simulation, never in lint). So the waiver is safe only
/// together with two rules this project keeps: leaves assign in dependency
/// order, and every emitted block is co-simulated cycle by cycle against its
/// golden model (a stale value shows up as a mismatch). It is the only rule
/// waived; every other `-Wall` warning must stay at zero.
///
/// The router still needs it. [`split_comb_blocks`] applied to the router's
/// modules removes its UNOPTFLAT warnings (the default router lints clean
/// without the waiver), but the Verilated model gets no faster (pure C++
/// loop, default router, Verilator 5.006, -O2, interleaved runs: 0.237
/// against 0.251 M cycles/s mean; its hot code grows from 109 to 134 KB), so
/// it is not applied (BENCHMARKS.md, "Router co-simulation speed, issue 16
/// item 4: profile and cheap levers"). The settle loops themselves cost
/// little: the active region that re-runs them takes under 1 % of the pure
/// C++ loop and about 5 % of the co-simulation.
pub const LINT_WAIVERS: &str = "`verilator_config\n\
// rust-hdl emits one always @(*) per module; parent->child->parent paths through\n\
// distinct bits look like loops to Verilator. Safe here because every leaf assigns\n\
// its signals in dependency order and every emitted block is co-simulated cycle by\n\
// cycle against its golden model, which catches any stale value (see emit.rs).\n\
lint_off -rule UNOPTFLAT\n";

/// File name of [`LINT_WAIVERS`] inside an emitted RTL folder.
pub const LINT_WAIVERS_FILE: &str = "exanet_waivers.vlt";

/// `verilator --lint-only -Wall` with the project's waivers on an emitted
/// design, its modules written one per file and named in a `-f` file list
/// (a router has hundreds of modules, and one argument per file overflows
/// the command line the `verilator` wrapper script hands to `/bin/sh`).
///
/// `Ok(None)` when Verilator is not installed; otherwise whether the lint is
/// clean (exit 0, no `%Warning`/`%Error`) and its output.
pub fn verilator_lint(e: &Emitted) -> Result<Option<(bool, String)>> {
    if std::process::Command::new("verilator")
        .arg("--version")
        .output()
        .is_err()
    {
        return Ok(None);
    }
    let dir = tempfile_dir(&e.top)?;
    let result = (|| {
        let files = e.write_dir(&dir)?;
        let list = dir.join("files.f");
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        std::fs::write(&list, names.join("\n"))?;
        let vlt = dir.join(LINT_WAIVERS_FILE);
        std::fs::write(&vlt, LINT_WAIVERS)?;
        let out = std::process::Command::new("verilator")
            .args(["--lint-only", "-Wall", "--top-module", &e.top])
            .arg(&vlt)
            .arg("-f")
            .arg(&list)
            .output()
            .context("running verilator --lint-only")?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        let clean = out.status.success() && !text.contains("%Warning") && !text.contains("%Error");
        Ok(Some((clean, text)))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// A fresh scratch folder for one lint run (unique per process and call).
fn tempfile_dir(top: &str) -> Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "exanet-lint-{top}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// Unit-test support: assert an emitted design lints clean, or print why the
/// lint was skipped (Verilator missing).
#[cfg(test)]
pub(crate) fn assert_lint_clean(e: &Emitted) {
    match verilator_lint(e).expect("running the lint") {
        None => println!(
            "ignored: verilator not installed; lint of {} skipped",
            e.top
        ),
        Some((clean, text)) => assert!(clean, "verilator lint of {} failed:\n{text}", e.top),
    }
}

/// One emitted design: its top module name and every module's text.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Emitted {
    /// Name of the top module (also the harness's Verilator `--top-module`).
    pub top: String,
    /// `(module name, module text)`, top last, in a deterministic order.
    pub modules: Vec<(String, String)>,
}

impl Emitted {
    /// All modules concatenated into one Verilog source.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for (_, m) in &self.modules {
            s.push_str(m);
            s.push('\n');
        }
        s
    }

    /// Write one `<module>.v` per module into `dir` (created if missing).
    /// Returns the written paths, in module order.
    pub fn write_dir(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating RTL folder {}", dir.display()))?;
        let mut out = Vec::new();
        for (name, text) in &self.modules {
            let p = dir.join(format!("{name}.v"));
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
            out.push(p);
        }
        Ok(out)
    }
}

/// Emit `uut` as Verilog with top module `top`.
///
/// Connects and checks the block first (rust-hdl's `check_all`: unconnected
/// signals, writes to inputs, combinational loops), so a structural mistake
/// is an error naming the signal, not broken Verilog.
pub fn emit<U: Block>(uut: &mut U, top: &str) -> Result<Emitted> {
    if !top.starts_with("exanet_") || top.contains('$') || top.contains("__") {
        bail!("top module name `{top}` must start with `exanet_` and contain no `$` or `__`");
    }
    uut.connect_all();
    check_all(uut).map_err(|e| anyhow::anyhow!("rust-hdl check of `{top}` failed: {e:?}"))?;
    let mut defs = ModuleDefines::default();
    uut.accept(top, &mut defs);
    let raw = defs.defines();
    let clean = dollar_free(&raw).with_context(|| format!("renaming `$` names in `{top}`"))?;
    let modules = split_modules(&clean)?;
    if !modules.iter().any(|(n, _)| n == top) {
        bail!("emitted Verilog for `{top}` has no module named `{top}`");
    }
    // Top last: readers find the leaves first, as in a hand-written file list.
    let (mut tops, mut rest): (Vec<_>, Vec<_>) = modules.into_iter().partition(|(n, _)| n == top);
    rest.append(&mut tops);
    Ok(Emitted {
        top: top.to_string(),
        modules: rest,
    })
}

/// Split every rust-hdl combinational block (`always @(*)`) of `module` into
/// one block per independent group of statements.
///
/// rust-hdl emits a module's whole `update` as one `always @(*)`. When that
/// block both feeds a child (a request) and reads the child's answer (its
/// grant), Verilator sees a loop through the block (UNOPTFLAT) and settles
/// it by re-evaluating everything on the loop until nothing changes. Here
/// the block's top-level statements (a line at the block's statement indent
/// starts one; `else`/`end...` lines continue it) are grouped so that every
/// variable is written by exactly one group (statements that write a common
/// variable stay together, in their original order), and each group becomes
/// its own `always @(*)`. A group reads the others' results through ordinary
/// signals, so Verilator orders the groups by their real dependencies. For
/// combinational logic the settled values are the same: each variable still
/// has one writer, whose statements run in the original order.
///
/// Blocks that do not have rust-hdl's layout are left unchanged.
pub fn split_comb_blocks(module: &str) -> String {
    const OPEN: &str = "    always @(*) begin";
    const CLOSE: &str = "    end";
    let lines: Vec<&str> = module.lines().collect();
    let mut out = String::with_capacity(module.len() + 1024);
    let mut i = 0;
    while i < lines.len() {
        if lines[i] == OPEN {
            if let Some(len) = lines[i + 1..].iter().position(|l| *l == CLOSE) {
                let body = &lines[i + 1..i + 1 + len];
                match split_block(body) {
                    Some(groups) => {
                        for g in groups {
                            out.push_str(OPEN);
                            out.push('\n');
                            for l in g {
                                out.push_str(l);
                                out.push('\n');
                            }
                            out.push_str(CLOSE);
                            out.push('\n');
                        }
                    }
                    None => {
                        for l in &lines[i..=i + 1 + len] {
                            out.push_str(l);
                            out.push('\n');
                        }
                    }
                }
                i += len + 2;
                continue;
            }
        }
        out.push_str(lines[i]);
        out.push('\n');
        i += 1;
    }
    out
}

/// Group the statements of one `always @(*)` body (see [`split_comb_blocks`]);
/// `None` when the body does not have rust-hdl's layout.
fn split_block<'a>(body: &[&'a str]) -> Option<Vec<Vec<&'a str>>> {
    const INDENT: usize = 8;
    let mut stmts: Vec<Vec<&'a str>> = Vec::new();
    let mut pending: Vec<&'a str> = Vec::new(); // comments, joined to the next statement
    for l in body {
        let t = l.trim_start();
        let indent = l.len() - t.len();
        if t.is_empty() {
            continue;
        }
        if indent < INDENT {
            return None;
        }
        let continues = indent > INDENT || t.starts_with("else") || t.starts_with("end");
        if continues {
            stmts.last_mut()?.push(l);
        } else if t.starts_with("//") {
            pending.push(l);
        } else {
            let mut s = std::mem::take(&mut pending);
            s.push(l);
            stmts.push(s);
        }
    }
    if let Some(last) = stmts.last_mut() {
        last.append(&mut pending);
    }
    // Union-find over statements: two statements writing one variable join.
    let mut parent: Vec<usize> = (0..stmts.len()).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut writer: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (k, s) in stmts.iter().enumerate() {
        for l in s {
            if let Some(v) = assigned_variable(l) {
                match writer.get(v) {
                    Some(&w) => {
                        let (a, b) = (root(&mut parent, k), root(&mut parent, w));
                        parent[a.max(b)] = a.min(b);
                    }
                    None => {
                        writer.insert(v, k);
                    }
                }
            }
        }
    }
    let mut index: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    let mut groups: Vec<Vec<&'a str>> = Vec::new();
    for (k, s) in stmts.into_iter().enumerate() {
        let r = root(&mut parent, k);
        let g = *index.entry(r).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].extend(s);
    }
    Some(groups)
}

/// The variable a blocking assignment line writes (`name = ...;` or
/// `name[...] = ...;`), if the line is one.
fn assigned_variable(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let end = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(t.len());
    if end == 0 || t.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    let name = &t[..end];
    let mut rest = t[end..].trim_start();
    if rest.starts_with('[') {
        let mut depth = 0usize;
        let mut close = None;
        for (k, c) in rest.char_indices() {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(k);
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = rest[close? + 1..].trim_start();
    }
    let after = rest.strip_prefix('=')?;
    (!after.starts_with('=')).then_some(name)
}

fn identifiers(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| !w.is_empty() && !w.as_bytes()[0].is_ascii_digit())
        .collect()
}

/// Replace `$` by `_`, failing if that merges two identifiers or creates `__`
/// (Verilator escapes `__` in generated C++ names).
pub fn dollar_free(text: &str) -> Result<String> {
    let before = identifiers(text);
    let renamed = text.replace('$', "_");
    let after = identifiers(&renamed);
    if before.len() != after.len() {
        let mut seen = std::collections::BTreeMap::new();
        for id in &before {
            let r = id.replace('$', "_");
            if let Some(prev) = seen.insert(r.clone(), *id) {
                bail!("identifiers `{prev}` and `{id}` both become `{r}`");
            }
        }
        bail!("renaming `$` to `_` changed the identifier count");
    }
    if let Some(id) = after.iter().find(|id| id.contains("__")) {
        bail!("identifier `{id}` contains `__`; rename the field it comes from");
    }
    Ok(renamed)
}

/// Split a Verilog text into `(module name, text)` pieces.
fn split_modules(text: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut cur: Option<(String, String)> = None;
    for line in text.lines() {
        let t = line.trim_start();
        if cur.is_none() {
            if let Some(rest) = t.strip_prefix("module ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                cur = Some((name, String::new()));
            } else if t.is_empty() {
                continue;
            } else {
                bail!("unexpected Verilog outside a module: `{t}`");
            }
        }
        if let Some((_, body)) = cur.as_mut() {
            body.push_str(line.trim_end());
            body.push('\n');
        }
        if t.starts_with("endmodule") {
            out.push(cur.take().expect("inside a module"));
        }
    }
    if let Some((name, _)) = cur {
        bail!("module `{name}` has no endmodule");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn design(text: &str) -> Emitted {
        Emitted {
            top: "t".into(),
            modules: vec![("t".into(), text.into())],
        }
    }

    /// The disk side of the emission cache: a second request (another
    /// process) reads the kept design without making it; another key is
    /// made; a damaged file is made again and rewritten; no folder, always
    /// made; a failing `make` keeps nothing.
    #[test]
    fn emission_cache_reuses_only_an_intact_file_of_the_same_key() {
        let tmp = tempfile::tempdir().unwrap();
        let d = Some(tmp.path());
        let made = std::cell::Cell::new(0);
        let make = |t: &'static str| {
            let made = &made;
            move || {
                made.set(made.get() + 1);
                Ok(design(t))
            }
        };
        let a = through_cache_folder(d, "k", "p=1", make("one")).unwrap();
        assert_eq!((a, made.get()), (design("one"), 1));
        let a = through_cache_folder(d, "k", "p=1", make("other")).unwrap();
        assert_eq!((a, made.get()), (design("one"), 1), "kept design reused");
        let b = through_cache_folder(d, "k", "p=2", make("two")).unwrap();
        assert_eq!((b, made.get()), (design("two"), 2));
        let files: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 2, "{files:?}");
        for f in &files {
            assert!(f.to_string_lossy().contains(env!("EXANET_HDL_FINGERPRINT")));
            std::fs::write(f, b"{ damaged").unwrap();
        }
        let a = through_cache_folder(d, "k", "p=1", make("again")).unwrap();
        assert_eq!((a, made.get()), (design("again"), 3));
        let a = through_cache_folder(d, "k", "p=1", make("unused")).unwrap();
        assert_eq!((a, made.get()), (design("again"), 3), "rewritten");
        let a = through_cache_folder(None, "k", "p=1", make("none")).unwrap();
        assert_eq!((a, made.get()), (design("none"), 4));
        let e = through_cache_folder(d, "k", "p=3", || bail!("bad p")).unwrap_err();
        assert_eq!(e.to_string(), "bad p");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 2);
    }

    #[test]
    fn comb_blocks_split_by_written_variable() {
        let m = "module m;\n    always @(*) begin\n        a = x;\n        // b from y\n        b = 1'b0;\n        if (y == 1'b1) begin\n            b = a;\n            c[0] = 1'b1;\n        end\n        else begin\n            b = 1'b0;\n        end\n        d = b;\n        c[1] = d;\n    end\nendmodule\n";
        let s = split_comb_blocks(m);
        // `a` alone; `b` and `c` (written in one if) with `c[1] = d`; `d` alone.
        assert_eq!(s.matches("always @(*) begin").count(), 3, "{s}");
        let blocks: Vec<&str> = s.split("    always @(*) begin\n").skip(1).collect();
        assert!(blocks[0].starts_with("        a = x;\n    end"), "{s}");
        assert!(
            blocks[1].starts_with("        // b from y\n        b = 1'b0;\n        if (y == 1'b1)")
        );
        assert!(blocks[1].contains("        c[1] = d;\n    end"), "{s}");
        assert!(blocks[2].starts_with("        d = b;\n    end"), "{s}");
        // Every line kept, none added but the block brackets.
        let lines = |t: &str| {
            t.lines()
                .filter(|l| !l.contains("always @(*)") && l.trim() != "end")
                .count()
        };
        assert_eq!(lines(m), lines(&s));
        // A body without rust-hdl's layout is left alone.
        let odd = "module m;\n    always @(*) begin\n  a = x;\n    end\nendmodule\n";
        assert_eq!(split_comb_blocks(odd), odd);
        assert_eq!(assigned_variable("        x[3:0] = y == z;"), Some("x"));
        assert_eq!(assigned_variable("        if (x == y) begin"), None);
        assert_eq!(assigned_variable("        x <= y;"), None);
    }

    #[test]
    fn dollar_renaming_refuses_collisions() {
        assert_eq!(dollar_free("a$b c").unwrap(), "a_b c");
        assert!(dollar_free("a$b a_b").is_err());
        assert!(dollar_free("a$$b").is_err());
    }

    #[test]
    fn split_finds_each_module() {
        let v = "module a(x);\ninput wire x;\nendmodule // a\n\nmodule b(y);\nendmodule // b\n";
        let m = split_modules(v).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].0, "a");
        assert!(m[1].1.starts_with("module b"));
        assert!(split_modules("module a(x);\n").is_err());
    }
}
