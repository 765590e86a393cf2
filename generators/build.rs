//! Build-time fingerprint of everything that shapes `exanet generate`'s
//! output, so commands reading a generated folder can tell whether this
//! build would still write the same thing (see `generate::GENERATOR_FINGERPRINT`).
//!
//! Why a hash of the sources rather than of the running executable: the
//! executable differs between debug and release builds, across machines
//! and toolchains, even for the same sources, and would call every folder
//! stale after `cargo build --release`; it also costs a read of tens of MB
//! per command. The sources are what decide the generated text. Hashed: the
//! crates the generator is built from (`hdl`, `sim`, `testbenches` for the
//! manifest's cosim points, `generators`), the XDC/TCL templates, the
//! built-in default config and `Cargo.lock` (dependency versions, e.g.
//! rust-hdl's emitter). A change anywhere there marks folders stale, even one
//! that does not change the output (regenerating is cheap; missing a real
//! change is not). Roots missing from a packaged build are skipped.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Files and folders hashed, relative to the workspace root.
const ROOTS: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "hdl/Cargo.toml",
    "hdl/src",
    "sim/Cargo.toml",
    "sim/src",
    "testbenches/Cargo.toml",
    "testbenches/src",
    "generators/Cargo.toml",
    "generators/askama.toml",
    "generators/build.rs",
    "generators/src",
    "constraints",
    "scripts/vivado",
    "configs/exanest-8x4x4.toml",
];

/// Every regular file under `p` (or `p` itself), skipping hidden entries
/// (editor swap files), in a fixed order.
fn files(p: &Path, out: &mut Vec<PathBuf>) {
    let hidden = p
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'));
    if hidden {
        return;
    }
    if p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
            .unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
            .map(|e| e.expect("directory entry").path())
            .collect();
        entries.sort();
        for e in entries {
            files(&e, out);
        }
    } else if p.is_file() {
        out.push(p.to_path_buf());
    }
}

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest_dir
        .parent()
        .expect("generators/ is in the workspace");
    let mut h = Sha256::new();
    for rel in ROOTS {
        let p = root.join(rel);
        if !p.exists() {
            continue;
        }
        println!("cargo:rerun-if-changed={}", p.display());
        let mut list = Vec::new();
        files(&p, &mut list);
        for f in list {
            let name = f.strip_prefix(root).unwrap_or(&f).to_string_lossy();
            let bytes =
                std::fs::read(&f).unwrap_or_else(|e| panic!("reading {}: {e}", f.display()));
            // Name and length first, so no two file sets hash alike.
            h.update(name.replace('\\', "/").as_bytes());
            h.update([0]);
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(&bytes);
        }
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=EXANET_SOURCES_SHA256={hex}");
}
