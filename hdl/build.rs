//! A fingerprint of everything emitted Verilog can depend on — this
//! crate's sources and templates, the golden model's definitions it takes
//! its layouts from, and the locked dependency versions (rust-hdl) — for
//! the emission cache (`emit::memoized`): a cached text is reused only by
//! a build of the same sources.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = here.parent().expect("the crate sits in the workspace");
    let mut list = Vec::new();
    for d in [
        here.join("src"),
        here.join("templates"),
        root.join("sim").join("src"),
    ] {
        println!("cargo:rerun-if-changed={}", d.display());
        files(&d, &mut list);
    }
    for f in [here.join("askama.toml"), root.join("Cargo.lock")] {
        println!("cargo:rerun-if-changed={}", f.display());
        list.push(f);
    }
    list.sort();
    let mut h = DefaultHasher::new();
    for f in &list {
        h.write(
            f.strip_prefix(root)
                .unwrap_or(f)
                .to_string_lossy()
                .as_bytes(),
        );
        h.write(&std::fs::read(f).unwrap_or_default());
    }
    println!("cargo:rustc-env=EXANET_HDL_FINGERPRINT={:016x}", h.finish());
}
