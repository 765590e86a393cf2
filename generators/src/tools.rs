//! External tools (Verilator, Yosys): presence and versions.

use serde::{Deserialize, Serialize};
use std::process::Command;

/// The first line of `cmd arg`'s output, or `None` if it cannot run.
pub fn version_of(cmd: &str, arg: &str) -> Option<String> {
    let out = Command::new(cmd).arg(arg).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// `verilator --version`, if installed.
pub fn verilator_version() -> Option<String> {
    version_of("verilator", "--version")
}

/// `yosys -V`, if installed.
pub fn yosys_version() -> Option<String> {
    version_of("yosys", "-V")
}

/// Tool versions recorded in the manifest (`"absent"` for a missing tool).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolVersions {
    /// This generator's version.
    pub exanet: String,
    /// `verilator --version` or `"absent"`.
    pub verilator: String,
    /// `yosys -V` or `"absent"`.
    pub yosys: String,
}

impl ToolVersions {
    /// Probe the installed tools.
    pub fn probe() -> Self {
        let absent = || "absent".to_string();
        ToolVersions {
            exanet: env!("CARGO_PKG_VERSION").to_string(),
            verilator: verilator_version().unwrap_or_else(absent),
            yosys: yosys_version().unwrap_or_else(absent),
        }
    }
}
