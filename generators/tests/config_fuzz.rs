//! Config fuzzing (issue 19 item 5): the shipped configs and example sweep
//! files, mutated at random (a key deleted, a value of the wrong type, a
//! number out of range, an unknown key, a huge array, broken TOML text), go
//! through what `generate`, `simulate` and `sweep` do with a config, in
//! process: loading, the hardware check `generate` runs before it emits
//! anything, the simulator's check and a short simulation, a sweep's plan
//! and a short run of its first task. Every case must end in `Ok` or a
//! usage error (the CLI's exit 2) naming the mutated key (or, for broken
//! TOML, the file); a panic, a tool error (exit 1) or a case running longer
//! than [`CASE_LIMIT`] fails the test with the case that did it. A small
//! sample of the refused cases goes through the real binary: exit 2 and one
//! line on stderr naming the key.
//!
//! `EXANET_FUZZ_CASES` (default 1,500: three in four configs, one in four
//! sweep files; about 30 s) and `EXANET_FUZZ_SEED` change the run; the
//! failing case's seed is printed. The ignored `many_mutants_and_full_generate`
//! runs 20,000 cases and sends 10 accepted mutants through the whole of
//! `generate`, emission included.

mod common;

use common::{repo, EXE};
use exanet_gen::config;
use exanet_gen::error::is_usage;
use exanet_gen::{generate, simulate, sweep};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use toml::{Table, Value};

/// A case (load, checks, a short simulation) taking longer than this is a hang.
const CASE_LIMIT: Duration = Duration::from_secs(20);
/// The same for a case that also runs `generate` (rust-hdl emission).
const GENERATE_LIMIT: Duration = Duration::from_secs(300);
/// How many accepted mutants still go through the whole of `generate`
/// (the long, ignored run sets it).
static GENERATES_LEFT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// How many went through `generate` (for the summary line).
static GENERATED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// Simulations run only on networks up to this many routers, for this many
/// warm-up + measured cycles (the keys are still checked at any size).
const SIM_MAX_NODES: u32 = 128;
const SIM_WARMUP: u64 = 30;
const SIM_WINDOW: u64 = 120;
const SIM_DRAIN: u64 = 3000;
/// At most this many short simulations per run (they are the costly part).
const SIM_BUDGET: usize = 100;
/// Length of a "huge" array.
const HUGE: usize = 20_000;

/// xorshift64*: reproducible without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A leaf's path from the root table: table keys, then array indices.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn leaves(v: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match v {
        Value::Table(t) => {
            for (k, sub) in t {
                path.push(Step::Key(k.clone()));
                leaves(sub, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            out.push(path.clone());
            for (i, sub) in a.iter().enumerate() {
                path.push(Step::Index(i));
                leaves(sub, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

fn tables(v: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    if let Value::Table(t) = v {
        out.push(path.clone());
        for (k, sub) in t {
            path.push(Step::Key(k.clone()));
            tables(sub, path, out);
            path.pop();
        }
    }
}

fn at<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match (s, v) {
        (Step::Key(k), Value::Table(t)) => t.get_mut(k).expect("path from leaves()"),
        (Step::Index(i), Value::Array(a)) => &mut a[*i],
        _ => unreachable!("path from leaves()"),
    })
}

/// The name the error must hold for a mutation at `path`: the last table
/// key on it (`dims` for `topology.dims[1]`, `sim.warmup` for a sweep's
/// `[set]` key).
fn key_of(path: &[Step]) -> String {
    path.iter()
        .rev()
        .find_map(|s| match s {
            Step::Key(k) => Some(k.clone()),
            Step::Index(_) => None,
        })
        .unwrap_or_default()
}

fn show(path: &[Step]) -> String {
    let mut s = String::new();
    for p in path {
        match p {
            Step::Key(k) if s.is_empty() => s.push_str(k),
            Step::Key(k) => {
                s.push('.');
                s.push_str(k)
            }
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

fn wrong_type(rng: &mut Rng, v: &Value) -> Value {
    let mut t = Table::new();
    t.insert("a".into(), Value::Integer(1));
    let all = [
        Value::String("fuzz".into()),
        Value::Integer(7),
        Value::Float(0.5),
        Value::Boolean(true),
        Value::Array(vec![Value::Integer(1)]),
        Value::Table(t),
        Value::Array(vec![Value::String("x".into()), Value::Integer(2)]),
    ];
    loop {
        let c = rng.pick(&all).clone();
        let same = std::mem::discriminant(&c) == std::mem::discriminant(v)
            || matches!((v, &c), (Value::Float(_), Value::Integer(_)));
        if !same {
            return c;
        }
    }
}

fn out_of_range(rng: &mut Rng, v: &Value) -> Value {
    match v {
        Value::Integer(n) => Value::Integer(*rng.pick(&[
            -1,
            0,
            1,
            i64::MAX,
            i64::MIN,
            1 << 32,
            1 << 40,
            n.saturating_mul(1000).saturating_add(7),
            n.saturating_add(1),
            n.saturating_sub(1),
            u32::MAX as i64 + 1,
        ])),
        Value::Float(f) => Value::Float(*rng.pick(&[
            -1.0,
            0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e300,
            -1e-300,
            f * 1e6,
            1.0000001,
        ])),
        Value::String(s) => Value::String(
            rng.pick(&[
                String::new(),
                "zzz".to_string(),
                format!("{s}x"),
                "x".repeat(100_000),
                "../../../../nope".to_string(),
                "\u{1F600}\0\n".to_string(),
            ])
            .clone(),
        ),
        Value::Boolean(b) => Value::Boolean(!b),
        Value::Array(a) => match rng.below(3) {
            0 => Value::Array(Vec::new()),
            1 => Value::Array(a.iter().chain(a.iter()).cloned().collect()),
            _ => Value::Array(a.iter().take(a.len().saturating_sub(1)).cloned().collect()),
        },
        other => other.clone(),
    }
}

fn huge_array(rng: &mut Rng, v: &Value) -> Value {
    let item = match v {
        Value::Array(a) if !a.is_empty() => a[rng.below(a.len())].clone(),
        Value::Array(_) => Value::Integer(0),
        other => other.clone(),
    };
    Value::Array(vec![item; HUGE])
}

/// What a mutated file must do.
#[derive(Clone, Debug)]
enum Expect {
    /// Accepted, or refused naming this key.
    Key(String),
    /// A deleted key: accepted, or refused naming it or its table (deleting
    /// the last key of `[vary]` leaves "[vary] is empty").
    Deleted(String, String),
    /// Refused naming this key.
    Refused(String),
    /// Broken text: accepted, or refused naming the file.
    File,
}

struct Case {
    text: String,
    what: String,
    expect: Expect,
}

fn mutate(rng: &mut Rng, base: &str) -> Case {
    let mut root = Value::Table(toml::from_str(base).expect("shipped file parses"));
    let mut ls = Vec::new();
    leaves(&root, &mut Vec::new(), &mut ls);
    let path = rng.pick(&ls).clone();
    let key = key_of(&path);
    let where_ = show(&path);
    let kind = rng.below(7);
    let (what, expect) = match kind {
        0 => {
            // delete a key (a table entry; an array element is shortened instead)
            match path.split_last() {
                Some((Step::Key(k), parent)) => {
                    if let Value::Table(t) = at(&mut root, parent) {
                        t.remove(k);
                    }
                }
                Some((Step::Index(i), parent)) => {
                    if let Value::Array(a) = at(&mut root, parent) {
                        a.remove(*i);
                    }
                }
                None => {}
            }
            let table = match path.first() {
                Some(Step::Key(t)) if path.len() > 1 => format!("[{t}]"),
                _ => key.clone(),
            };
            (format!("delete {where_}"), Expect::Deleted(key, table))
        }
        1 => {
            let v = at(&mut root, &path);
            let new = wrong_type(rng, v);
            let what = format!("{where_} = {new} (wrong type)");
            *v = new;
            (what, Expect::Key(key))
        }
        2 | 3 => {
            let v = at(&mut root, &path);
            let new = out_of_range(rng, v);
            let shown: String = new.to_string().chars().take(60).collect();
            let what = format!("{where_} = {shown} (out of range)");
            *v = new;
            (what, Expect::Key(key))
        }
        4 => {
            let mut ts = Vec::new();
            tables(&root, &mut Vec::new(), &mut ts);
            let t = rng.pick(&ts).clone();
            let name = format!("fuzz_unknown_{}", rng.below(1000));
            if let Value::Table(tab) = at(&mut root, &t) {
                tab.insert(name.clone(), Value::Integer(1));
            }
            let shown = show(&t);
            (
                format!("unknown key {name} in [{shown}]"),
                Expect::Refused(name),
            )
        }
        5 => {
            let v = at(&mut root, &path);
            let new = huge_array(rng, v);
            *v = new;
            (format!("{where_} = [{HUGE} items]"), Expect::Key(key))
        }
        _ => {
            let mut text = base.to_string();
            let pos = {
                let mut p = rng.below(text.len());
                while !text.is_char_boundary(p) {
                    p -= 1;
                }
                p
            };
            let what = match rng.below(4) {
                0 => {
                    text.truncate(pos);
                    format!("truncated at byte {pos}")
                }
                1 => {
                    let c = *rng.pick(&['[', ']', '=', '"', '{', ',', '\n', '\'', '.', '#']);
                    text.insert(pos, c);
                    format!("{c:?} inserted at byte {pos}")
                }
                2 => {
                    text.replace_range(pos..pos, "\n[[\n");
                    format!("\"[[\" line inserted at byte {pos}")
                }
                _ => {
                    let line = text
                        .lines()
                        .nth(rng.below(text.lines().count()))
                        .unwrap_or("")
                        .to_string();
                    let start = text[..pos].rfind('\n').map_or(0, |n| n + 1);
                    text.insert_str(start, &format!("{line}\n"));
                    format!("line {line:?} copied to byte {start}")
                }
            };
            return Case {
                text,
                what,
                expect: Expect::File,
            };
        }
    };
    let text = match root {
        Value::Table(t) => toml::to_string(&t).expect("a table serializes"),
        _ => unreachable!(),
    };
    Case { text, what, expect }
}

/// The CLI's one-line message of an error.
fn message(e: &anyhow::Error) -> String {
    e.chain()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(": ")
}

/// `Err(reason)` if `r` breaks the case's rule.
fn judge<T>(r: &anyhow::Result<T>, expect: &Expect, file: &Path) -> Result<bool, String> {
    let e = match r {
        Ok(_) => {
            return match expect {
                Expect::Refused(k) => Err(format!("accepted; want an error naming `{k}`")),
                _ => Ok(true),
            }
        }
        Err(e) => e,
    };
    let msg = message(e);
    if !is_usage(e) {
        return Err(format!("not a usage error (exit 1, not 2): {msg}"));
    }
    let name = match expect {
        Expect::Key(k) | Expect::Refused(k) => k.clone(),
        Expect::Deleted(k, t) if !msg.contains(k.as_str()) => t.clone(),
        Expect::Deleted(k, _) => k.clone(),
        Expect::File => file.file_name().unwrap().to_string_lossy().into_owned(),
    };
    if !msg.contains(&name) {
        return Err(format!("the error does not name `{name}`: {msg}"));
    }
    Ok(false)
}

/// Every case's start, for the hang watchdog.
type Current = Arc<Mutex<Option<(Instant, String, Duration)>>>;

fn watchdog() -> Current {
    let cur: Current = Arc::new(Mutex::new(None));
    let c = cur.clone();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(500));
        if let Some((t, what, limit)) = &*c.lock().unwrap() {
            if t.elapsed() > *limit {
                // straight to stderr: the test harness's capture dies with the abort
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "config_fuzz: HANG: case ran over {limit:?}: {what}"
                );
                std::process::abort();
            }
        }
    });
    cur
}

/// Panics are the finding: keep their messages, not the default hook's
/// noise, on this thread only (the other test of this binary keeps its own).
fn quiet_panics() {
    let fuzz = std::thread::current().id();
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() != fuzz {
            default(info)
        }
    }));
}

fn caught<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        let s = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("PANIC: {s}")
    })
}

/// Load, check for hardware and for simulation, and simulate briefly.
fn config_case(
    file: &Path,
    expect: &Expect,
    sims: &mut usize,
    accepted: &mut usize,
) -> Result<(), String> {
    let loaded = caught(|| config::load(Some(file), &[]))?;
    if !judge(&loaded, expect, file)? {
        return Ok(());
    }
    *accepted += 1;
    let loaded = loaded.unwrap();
    let hw = caught(|| loaded.elaborate())?;
    if judge(&hw, expect, file)? && loaded.config != config::load(None, &[]).unwrap().config {
        let take = GENERATES_LEFT.fetch_update(
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
            |n| n.checked_sub(1),
        );
        if take.is_ok() {
            // what passed the check must generate (exit 0) or be refused as
            // a usage error (exit 2), never fail inside the emitter (exit 1)
            let out = file.with_extension("out");
            let params = hw.as_ref().unwrap();
            let g = caught(|| generate::generate(&loaded, params, &out, false))?;
            GENERATED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if let Err(e) = &g {
                if !is_usage(e) {
                    return Err(format!(
                        "generate failed after the check passed: {}",
                        message(e)
                    ));
                }
            }
            let _ = std::fs::remove_dir_all(&out);
        }
    }
    let setup = caught(|| loaded.elaborate_sim())?;
    if !judge(&setup, expect, file)? {
        return Ok(());
    }
    let mut setup = setup.unwrap();
    simulate_briefly(&mut setup, sims)
}

/// Time spent in simulations (reported beside the case count).
static SIM_NANOS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn simulate_briefly(setup: &mut simulate::Setup, sims: &mut usize) -> Result<(), String> {
    if setup.params.topology.nodes > SIM_MAX_NODES
        || setup.allreduce.is_some()
        || *sims >= SIM_BUDGET
    {
        return Ok(());
    }
    setup.net.warmup = setup.net.warmup.min(SIM_WARMUP);
    setup.net.window = setup.net.window.min(SIM_WINDOW);
    setup.net.drain_max = setup.net.drain_max.min(SIM_DRAIN);
    *sims += 1;
    let t0 = Instant::now();
    let r = caught(|| simulate::run(setup))?;
    SIM_NANOS.fetch_add(
        t0.elapsed().as_nanos() as u64,
        std::sync::atomic::Ordering::Relaxed,
    );
    match r {
        Ok(_) => Ok(()),
        // a run that ends in an error must be a usage error too
        Err(e) if is_usage(&e) => Ok(()),
        Err(e) => Err(format!("simulate failed: {}", message(&e))),
    }
}

/// Plan the sweep, then check and briefly simulate its first task.
fn sweep_case(
    file: &Path,
    dir: &Path,
    expect: &Expect,
    sims: &mut usize,
    tasks: &mut usize,
    accepted: &mut usize,
) -> Result<(), String> {
    let plan = caught(|| sweep::plan(file, None, &[], dir, true))?;
    if !judge(&plan, expect, file)? {
        return Ok(());
    }
    *accepted += 1;
    let plan = plan.unwrap();
    let Some(task) = plan.tasks.first() else {
        return Err("a plan with no task".into());
    };
    *tasks += plan.tasks.len();
    let point = dir.join(&task.config);
    let loaded = caught(|| config::load(Some(&point), &[]))?
        .map_err(|e| format!("planned point does not load: {}", message(&e)))?;
    let mut setup = caught(|| loaded.elaborate_sim())?
        .map_err(|e| format!("planned point does not elaborate: {}", message(&e)))?;
    simulate_briefly(&mut setup, sims)
}

struct Found {
    seed: u64,
    case: usize,
    source: String,
    what: String,
    problem: String,
    text: String,
}

/// A base file for sweep fuzzing: `base` made absolute.
fn sweep_base(name: &str) -> String {
    let src = repo().join("configs/sweeps").join(name);
    let mut t: Table = toml::from_str(&std::fs::read_to_string(&src).unwrap()).unwrap();
    if let Some(Value::String(b)) = t.get("base") {
        let abs = src.parent().unwrap().join(b).canonicalize().unwrap();
        t.insert("base".into(), Value::String(abs.display().to_string()));
    }
    toml::to_string(&t).unwrap()
}

/// A sweep small enough to run a point of every case.
fn tiny_sweep() -> String {
    format!(
        "name = \"tiny\"\nbase = {:?}\n\n[set]\n\"sim.warmup\" = 20\n\"sim.measure\" = 100\n\"sim.drain\" = 2000\n\n[vary]\n\"router.buffer_flits\" = [32, 64]\n\"traffic.rate\" = [0.05, 0.2]\n\n[slurm]\ntime = \"00:05:00\"\n",
        repo()
            .join("configs/small-4x2x2.toml")
            .canonicalize()
            .unwrap()
            .display()
            .to_string()
    )
}

#[test]
fn mutated_configs_and_sweeps_fail_cleanly() {
    fuzz(
        env_u64("EXANET_FUZZ_SEED", 19),
        env_u64("EXANET_FUZZ_CASES", 1500) as usize,
        0,
    );
}

/// 20,000 cases, and the first 10 accepted mutants that differ from the
/// default through the whole of `generate` (emission included).
#[test]
#[ignore = "long: about 10 minutes"]
fn many_mutants_and_full_generate() {
    fuzz(env_u64("EXANET_FUZZ_SEED", 20), 20_000, 10);
}

fn fuzz(seed: u64, n: usize, generates: usize) {
    GENERATES_LEFT.store(generates, std::sync::atomic::Ordering::Relaxed);
    quiet_panics();
    let tmp = tempfile::tempdir().unwrap();
    let cur = watchdog();
    let start = Instant::now();

    let mut configs = Vec::new();
    for f in ["exanest-8x4x4.toml", "small-4x2x2.toml", "mesh-4x4x1.toml"] {
        let p = repo().join("configs").join(f);
        configs.push((f.to_string(), std::fs::read_to_string(p).unwrap()));
    }
    let mut sweeps = vec![("tiny".to_string(), tiny_sweep())];
    for f in [
        "vcs-buffers-8x4x4.toml",
        "torus-dims.toml",
        "link-ber-8x4x4.toml",
    ] {
        sweeps.push((f.to_string(), sweep_base(f)));
    }

    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut found: Vec<Found> = Vec::new();
    let mut time_of: std::collections::BTreeMap<String, f64> = Default::default();
    let (mut sims, mut planned_tasks, mut accepted) = (0, 0, 0);
    for i in 0..n {
        let is_sweep = i % 4 == 3;
        let (source, base) = if is_sweep {
            rng.pick(&sweeps).clone()
        } else {
            rng.pick(&configs).clone()
        };
        let case = mutate(&mut rng, &base);
        let file = tmp.path().join(format!("case-{i}.toml"));
        std::fs::write(&file, &case.text).unwrap();
        let limit = if GENERATES_LEFT.load(std::sync::atomic::Ordering::Relaxed) > 0 {
            GENERATE_LIMIT
        } else {
            CASE_LIMIT
        };
        *cur.lock().unwrap() = Some((
            Instant::now(),
            format!("case {i} ({source}): {}", case.what),
            limit,
        ));
        let t0 = Instant::now();
        let r = if is_sweep {
            let dir = tmp.path().join("sweep-out");
            sweep_case(
                &file,
                &dir,
                &case.expect,
                &mut sims,
                &mut planned_tasks,
                &mut accepted,
            )
        } else {
            config_case(&file, &case.expect, &mut sims, &mut accepted)
        };
        *cur.lock().unwrap() = None;
        let dt = t0.elapsed().as_secs_f64();
        *time_of.entry(source.clone()).or_insert(0.0) += dt;
        let kind = if case.what.contains(" items]") {
            "huge"
        } else if case.what.contains("out of range") {
            "range"
        } else if case.what.contains("wrong type") {
            "type"
        } else if case.what.starts_with("delete") {
            "delete"
        } else if case.what.starts_with("unknown") {
            "unknown"
        } else {
            "broken"
        };
        *time_of.entry(kind.to_string()).or_insert(0.0) += dt;
        match r {
            Ok(()) => {
                let _ = std::fs::remove_file(&file);
            }
            Err(problem) => found.push(Found {
                seed,
                case: i,
                source,
                what: case.what,
                problem,
                text: case.text.chars().take(400).collect(),
            }),
        }
    }
    eprintln!(
        "config_fuzz: {n} cases (seed {seed}) in {:.1} s: {accepted} accepted by the first check (load, or a sweep's plan), the rest refused, {sims} short simulations, {planned_tasks} sweep tasks planned, {} through the whole of generate, {} problems",
        start.elapsed().as_secs_f64(),
        GENERATED.load(std::sync::atomic::Ordering::Relaxed),
        found.len()
    );
    eprintln!(
        "config_fuzz: seconds per source file: {time_of:.1?}; in simulations {:.1} s",
        SIM_NANOS.load(std::sync::atomic::Ordering::Relaxed) as f64 * 1e-9
    );
    let _ = std::panic::take_hook();
    if !found.is_empty() {
        let mut report = String::new();
        for f in found.iter().take(25) {
            report.push_str(&format!(
                "\n- seed {} case {} ({}): {}\n  {}\n",
                f.seed, f.case, f.source, f.what, f.problem
            ));
            if f.problem.starts_with("PANIC") {
                report.push_str(&format!("  file starts: {:?}\n", f.text));
            }
        }
        panic!("{} of {n} fuzz cases broke the rules:{report}", found.len());
    }
}

/// Refused mutants through the real binary: exit 2 and one line naming the
/// key, for `generate`, `simulate` and `sweep`.
#[test]
fn the_binary_refuses_mutants_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "generate",
            "[router]\nbuffer_flits = \"many\"\n",
            "buffer_flits",
        ),
        ("generate", "[topology]\ndims = [8, 4]\n", "dims"),
        (
            "generate",
            "[router]\nvcs_per_class = 99999999999\n",
            "vcs_per_class",
        ),
        ("generate", "[packet]\nfuzz_unknown = 1\n", "fuzz_unknown"),
        ("simulate", "[sim]\nmeasure = -5\n", "measure"),
        ("simulate", "[traffic]\nrate = nan\n", "rate"),
        (
            "simulate",
            "[traffic]\nhotspot_nodes = [99999]\npattern = \"hotspot\"\n",
            "hotspot_nodes",
        ),
        ("simulate", "[link]\ngbps = inf\n", "gbps"),
        ("simulate", "[sim\nwarmup = 1\n", "case-8.toml:1:"),
    ];
    for (i, (cmd, text, want)) in cases.iter().enumerate() {
        let f = tmp.path().join(format!("case-{i}.toml"));
        std::fs::write(&f, text).unwrap();
        let out = tmp.path().join(format!("out-{i}"));
        let mut args = vec![
            "--config".to_string(),
            f.display().to_string(),
            cmd.to_string(),
        ];
        if *cmd == "generate" {
            args.extend(["--out".to_string(), out.display().to_string()]);
        }
        let o = Command::new(EXE).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd} {text:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{cmd} {text:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(want),
            "{cmd} {text:?}: want {want:?} in {err}"
        );
        assert!(!out.exists(), "{cmd} {text:?} wrote {}", out.display());
    }
    // sweep files
    let base = repo()
        .join("configs/small-4x2x2.toml")
        .canonicalize()
        .unwrap();
    let sweeps: &[(&str, &str)] = &[
        ("[vary]\n\"traffic.rate\" = [0.1, \"x\"]\n", "traffic.rate"),
        (
            "[set]\n\"sim.warmup\" = -3\n[vary]\n\"traffic.rate\" = [0.1]\n",
            "sim.warmup",
        ),
        ("[vary]\n\"router.nope\" = [1]\n", "nope"),
        (
            "[saturation]\nlo = 0.5\nhi = 0.1\nsteps = 3\n[vary]\n\"router.buffer_flits\" = [16]\n",
            "lo",
        ),
    ];
    for (i, (body, want)) in sweeps.iter().enumerate() {
        let f = tmp.path().join(format!("sweep-{i}.toml"));
        std::fs::write(
            &f,
            format!("base = {:?}\n{body}", base.display().to_string()),
        )
        .unwrap();
        let out = tmp.path().join(format!("sweep-out-{i}"));
        let o = Command::new(EXE)
            .args([
                "sweep",
                &f.display().to_string(),
                "--out",
                &out.display().to_string(),
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{body:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{body:?}: {err}");
        assert!(err.contains(want), "{body:?}: want {want:?} in {err}");
    }
}

fn json_leaves(v: &serde_json::Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, sub) in m {
                path.push(Step::Key(k.clone()));
                json_leaves(sub, path, out);
                path.pop();
            }
        }
        serde_json::Value::Array(a) => {
            out.push(path.clone());
            for (i, sub) in a.iter().enumerate() {
                path.push(Step::Index(i));
                json_leaves(sub, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

fn json_at<'a>(v: &'a mut serde_json::Value, path: &[Step]) -> &'a mut serde_json::Value {
    path.iter().fold(v, |v, s| match s {
        Step::Key(k) => &mut v[k.as_str()],
        Step::Index(i) => &mut v[*i],
    })
}

/// `sweep collect` on a finished sweep whose `plan.json` or one task result
/// was damaged (a value of another type or out of range, a key deleted, a
/// huge array, the text cut or a character inserted): no panic, and either
/// a report or a usage error (exit 2) naming the damaged file.
#[test]
fn collect_of_damaged_sweep_folders_fails_cleanly() {
    use serde_json::Value as J;
    let tmp = tempfile::tempdir().unwrap();
    let sweep_file = tmp.path().join("tiny.toml");
    std::fs::write(&sweep_file, tiny_sweep()).unwrap();
    let dir = tmp.path().join("done");
    let plan = sweep::plan(&sweep_file, None, &[], &dir, false).unwrap();
    sweep::run_local(&dir, &plan, 1, &|_| {}).unwrap();
    sweep::collect(&dir, false).unwrap();
    let files: Vec<String> = std::iter::once("plan.json".to_string())
        .chain((0..plan.tasks.len()).map(|i| format!("tasks/task-{i:04}.json")))
        .collect();
    let mut rng = Rng(0x5eed_c011);
    let cur = watchdog();
    let mut problems = Vec::new();
    let n = env_u64("EXANET_FUZZ_CASES", 1500) as usize / 5;
    let (mut reports, mut refusals) = (0, 0);
    for case in 0..n {
        let f = rng.pick(&files).clone();
        let path = dir.join(&f);
        let original = std::fs::read_to_string(&path).unwrap();
        let mut v: J = serde_json::from_str(&original).unwrap();
        let mut ls = Vec::new();
        json_leaves(&v, &mut Vec::new(), &mut ls);
        let at = rng.pick(&ls).clone();
        let what;
        let text = match rng.below(6) {
            0 => {
                let new = rng
                    .pick(&[
                        J::String("fuzz".into()),
                        J::from(-1),
                        J::from(u64::MAX),
                        J::from(1e308),
                        J::Bool(true),
                        J::Null,
                        J::Array(vec![]),
                        serde_json::json!({"a": 1}),
                    ])
                    .clone();
                what = format!("{f}: {} = {new}", show(&at));
                *json_at(&mut v, &at) = new;
                serde_json::to_string(&v).unwrap()
            }
            1 => {
                what = format!("{f}: delete {}", show(&at));
                match at.split_last() {
                    Some((Step::Key(k), parent)) => {
                        if let Some(m) = json_at(&mut v, parent).as_object_mut() {
                            m.remove(k);
                        }
                    }
                    Some((Step::Index(i), parent)) => {
                        if let Some(a) = json_at(&mut v, parent).as_array_mut() {
                            a.remove(*i);
                        }
                    }
                    None => {}
                }
                serde_json::to_string(&v).unwrap()
            }
            2 => {
                what = format!("{f}: {} = [{HUGE} copies]", show(&at));
                let item = json_at(&mut v, &at).clone();
                *json_at(&mut v, &at) = J::Array(vec![item; HUGE]);
                serde_json::to_string(&v).unwrap()
            }
            3 => {
                let cut = rng.below(original.len());
                what = format!("{f}: cut at byte {cut}");
                original[..cut].to_string()
            }
            4 => {
                let at = rng.below(original.len());
                let c = *rng.pick(&['{', '}', '"', ',', ']', 'x']);
                what = format!("{f}: {c:?} inserted at byte {at}");
                let mut t = original.clone();
                t.insert(at, c);
                t
            }
            _ => {
                what = format!("{f}: emptied");
                String::new()
            }
        };
        std::fs::write(&path, &text).unwrap();
        *cur.lock().unwrap() = Some((Instant::now(), what.clone(), CASE_LIMIT));
        let r = caught(|| sweep::collect(&dir, true));
        *cur.lock().unwrap() = None;
        let name = Path::new(&f)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        match &r {
            Ok(Ok(_)) => reports += 1,
            Ok(Err(_)) => refusals += 1,
            Err(_) => {}
        }
        match r {
            Err(p) => problems.push(format!("case {case}: {what}: {p}")),
            Ok(Err(e)) if !is_usage(&e) || !message(&e).contains(&name) => problems.push(format!(
                "case {case}: {what}: want a usage error naming {name}: {}",
                message(&e)
            )),
            Ok(_) => {}
        }
        std::fs::write(&path, &original).unwrap();
    }
    eprintln!("config_fuzz: collect of {n} damaged folders: {reports} reports, {refusals} refused");
    assert!(
        problems.is_empty(),
        "{} of {n} damaged folders broke the rules:\n{}",
        problems.len(),
        problems
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
