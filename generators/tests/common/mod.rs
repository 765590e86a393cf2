//! Helpers shared by the CLI integration tests: run the `exanet` binary,
//! find the workspace root, run `exanet simulate --json` and read numbers
//! out of its JSON.
//!
//! Each test file includes this module with `mod common;` and uses only
//! some of it, so unused items are expected here (`dead_code` allowed for
//! this module alone; rustc checks each test crate separately).
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `exanet` binary cargo built for these tests.
pub const EXE: &str = env!("CARGO_BIN_EXE_exanet");

/// One finished `exanet` run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The run, which must have exited 0 (its output in the panic if not).
    pub fn ok(self) -> Run {
        assert_eq!(self.code, 0, "{}{}", self.stdout, self.stderr);
        self
    }
}

/// The workspace root (configs, scripts, examples are relative to it).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `exanet ARGS` in `cwd`, waited for.
pub fn exanet(args: &[&str], cwd: &Path) -> Run {
    let o = Command::new(EXE)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("running exanet");
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// `exanet simulate --json BASE -P E...` in `cwd` (every entry of `keys`
/// becomes one `-P key=value`), which must succeed; its JSON report.
pub fn simulate_json(base: &[&str], keys: &[&str], cwd: &Path) -> Value {
    let mut a = vec!["simulate", "--json"];
    a.extend_from_slice(base);
    for k in keys {
        a.extend(["-P", k]);
    }
    let r = exanet(&a, cwd);
    assert_eq!(r.code, 0, "exanet {a:?}:\n{}{}", r.stdout, r.stderr);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

/// A JSON number, or a panic naming the value.
pub fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A JSON unsigned integer, or a panic naming the value.
pub fn int(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}
