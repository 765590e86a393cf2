//! `exanet cosim`: a block's RTL against its golden model, per parameter point.
//!
//! The lockstep loop and the benches live in `exanet-tb`; this module picks
//! the points to run and turns the CLI's flags into `CosimOptions`.

use crate::error::usage;
use crate::generate::Manifest;
use anyhow::Result;
use exanet_tb::blocks;
use exanet_tb::cosim::{Bench, CosimOptions, CosimReport};
use std::path::{Path, PathBuf};

/// Every block with a bench: `(name, one-line description)`.
pub fn list() -> Vec<(&'static str, &'static str)> {
    blocks::all().iter().map(|b| (b.name, b.about)).collect()
}

/// The benches to run: the one `point` (`key=value,…`), or the block's whole
/// default matrix.
pub fn benches(block: &str, point: Option<&str>) -> Result<Vec<Box<dyn Bench>>> {
    let info = blocks::find(block).map_err(|e| usage(e.to_string()))?;
    match point {
        Some(text) => {
            let b = (info.point)(text).map_err(|e| usage(format!("--point {text}: {e:#}")))?;
            Ok(vec![b])
        }
        None => {
            let m = (info.matrix)();
            if m.is_empty() {
                anyhow::bail!("block `{block}` has no co-simulation points yet");
            }
            Ok(m)
        }
    }
}

/// The benches of the tops of `block` in a generated folder's manifest.
pub fn generated_benches(manifest: &Manifest, block: &str) -> Result<Vec<Box<dyn Bench>>> {
    let info = blocks::find(block).map_err(|e| usage(e.to_string()))?;
    let mut out = Vec::new();
    for t in manifest.tops.iter().filter(|t| t.block == block) {
        out.push((info.point)(&t.point).map_err(|e| {
            usage(format!(
                "generated point {} [{}] is not a valid bench point: {e:#}",
                t.top, t.point
            ))
        })?);
    }
    if out.is_empty() {
        let blocks: Vec<&str> = manifest.tops.iter().map(|t| t.block.as_str()).collect();
        return Err(usage(format!(
            "no generated top for block `{block}`; generated blocks: {}",
            blocks.join(", ")
        )));
    }
    Ok(out)
}

/// The trace file of point `i` of `n`: `F` itself for a single point, else
/// `F` with the point appended to its stem so points do not overwrite each other.
pub fn trace_path(trace: &Path, point: &str, n: usize) -> PathBuf {
    if n <= 1 {
        return trace.to_path_buf();
    }
    let stem = trace
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace".into());
    let safe: String = point
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    trace.with_file_name(format!("{stem}-{safe}.vcd"))
}

/// Options for one point.
pub fn options(
    cycles: u64,
    seed: u64,
    trace: Option<PathBuf>,
    rtl: Option<PathBuf>,
    fail_dir: PathBuf,
) -> CosimOptions {
    CosimOptions {
        cycles,
        seed,
        trace,
        rtl_dir: rtl,
        fail_dir,
        ..CosimOptions::default()
    }
}

/// The lines printed for a mismatching run (empty when it passed); `rtl` is
/// the `--rtl` folder of the run, repeated in the rerun command.
pub fn mismatch_lines(r: &CosimReport, rtl: Option<&Path>) -> Vec<String> {
    let Some(m) = &r.first else {
        return Vec::new();
    };
    let wave = r
        .waveform
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "(none)".into());
    vec![
        format!("MISMATCH {} [{}]", r.block, r.point),
        format!("  cycle:    {}", m.cycle),
        format!("  port:     {}", m.port),
        format!("  expected: {}", m.expected),
        format!("  actual:   {}", m.actual),
        format!("  seed:     {}", r.seed),
        format!("  waveform: {wave}"),
        format!(
            "  rerun:    exanet cosim {} --point {} --seed {} --cycles {}{}",
            r.block,
            r.point,
            r.seed,
            m.cycle + 1,
            rtl.map(|d| format!(" --rtl {}", d.display()))
                .unwrap_or_default()
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_paths_are_per_point_when_several() {
        let p = Path::new("w/t.vcd");
        assert_eq!(trace_path(p, "width=8", 1), PathBuf::from("w/t.vcd"));
        assert_eq!(
            trace_path(p, "width=8,depth=4", 3),
            PathBuf::from("w/t-width_8_depth_4.vcd")
        );
    }

    #[test]
    fn unknown_block_is_a_usage_error() {
        let e = benches("nosuch", None).err().unwrap();
        assert!(crate::error::is_usage(&e));
        assert!(format!("{e}").contains("known blocks"), "{e}");
    }
}
