//! `exanet synth`: Yosys resource estimates of the generated tops for the
//! ZU9EG (UltraScale+), cached by content.
//!
//! Per top: `read_verilog <its files>; synth_xilinx -family xcup -flatten
//! -noiopad -noclkbuf -top T; stat`. `-flatten` gives one cell count per
//! top; `-noiopad -noclkbuf` because each top is an out-of-context block, not
//! a chip (its ports are not pins). Results are cached under
//! `OUT/.synth-cache/<sha256>.json`, keyed by the Yosys version, the script
//! and every input file's name and bytes.

use crate::error::usage;
use crate::generate::{path_in, sha256_hex, Manifest, TopEntry};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Bumped when the script or the parsing changes, so old cache entries die.
const RECIPE_VERSION: u32 = 1;

/// ZU9EG capacity (UltraScale+ XCZU9EG).
pub mod zu9eg {
    /// CLB LUTs.
    pub const LUTS: u64 = 274_080;
    /// CLB flip-flops.
    pub const FFS: u64 = 548_160;
    /// LUTs usable as memory (in SLICEMs).
    pub const LUTRAM_LUTS: u64 = 144_000;
    /// 36 Kb block RAMs.
    pub const BRAM36: u64 = 912;
    /// DSP48E2 slices.
    pub const DSPS: u64 = 2_520;
}

/// Resource estimate of one top.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthResult {
    /// Block name.
    pub block: String,
    /// Top module.
    pub top: String,
    /// `yosys -V` of the Yosys that produced this.
    pub yosys: String,
    /// LUT1..LUT6 (and INV) cells.
    pub lut: u64,
    /// Flip-flops (FD* cells).
    pub ff: u64,
    /// Carry chains (CARRY4/CARRY8 cells).
    pub carry: u64,
    /// LUT-RAM and SRL cells.
    pub lutram_cells: u64,
    /// LUTs those cells occupy in SLICEMs.
    pub lutram_luts: u64,
    /// Block RAMs in 36 Kb units (a RAMB18 counts 0.5).
    pub bram36: f64,
    /// DSP48E2 cells.
    pub dsp: u64,
    /// Every cell type Yosys reported, with its count.
    pub cells: BTreeMap<String, u64>,
}

/// LUTs in a SLICEM taken by a LUT-RAM or SRL primitive, or `None` if `cell` is not one.
fn lutram_luts(cell: &str) -> Option<u64> {
    Some(match cell {
        "RAM32X1S" | "RAM64X1S" | "SRL16E" | "SRLC16E" | "SRLC32E" => 1,
        "RAM32X1D" | "RAM64X1D" | "RAM128X1S" => 2,
        "RAM32M" | "RAM64M" | "RAM128X1D" | "RAM256X1S" => 4,
        // RAM32X16DR8 and RAM64X8SW (UltraScale+) take a whole SLICEM.
        "RAM32M16" | "RAM64M8" | "RAM256X1D" | "RAM512X1S" | "RAM32X16DR8" | "RAM64X8SW" => 8,
        _ => return None,
    })
}

/// Classify Yosys cell counts into the resource columns.
pub fn classify(block: &str, top: &str, yosys: &str, cells: BTreeMap<String, u64>) -> SynthResult {
    let mut r = SynthResult {
        block: block.to_string(),
        top: top.to_string(),
        yosys: yosys.to_string(),
        lut: 0,
        ff: 0,
        carry: 0,
        lutram_cells: 0,
        lutram_luts: 0,
        bram36: 0.0,
        dsp: 0,
        cells,
    };
    for (cell, &n) in &r.cells {
        let c = cell.as_str();
        // Yosys leaves some inverters as INV cells; Vivado implements them as LUT1.
        if matches!(
            c,
            "LUT1" | "LUT2" | "LUT3" | "LUT4" | "LUT5" | "LUT6" | "INV"
        ) {
            r.lut += n;
        } else if c.starts_with("FD") {
            r.ff += n;
        } else if matches!(c, "CARRY4" | "CARRY8") {
            r.carry += n;
        } else if let Some(l) = lutram_luts(c) {
            r.lutram_cells += n;
            r.lutram_luts += n * l;
        } else if c.starts_with("RAMB36") || c.starts_with("FIFO36") {
            r.bram36 += n as f64;
        } else if c.starts_with("RAMB18") || c.starts_with("FIFO18") {
            r.bram36 += n as f64 / 2.0;
        } else if c.starts_with("DSP48") {
            r.dsp += n;
        }
    }
    r
}

/// Cell counts of the last `stat` section for module `top` in Yosys output.
pub fn parse_stat(log: &str, top: &str) -> Result<BTreeMap<String, u64>> {
    let header = format!("=== {top} ===");
    let start = log
        .rfind(&header)
        .with_context(|| format!("yosys output has no `stat` section for `{top}`"))?;
    let mut cells = BTreeMap::new();
    let mut in_cells = false;
    for line in log[start..].lines().skip(1) {
        let t = line.trim();
        if t.starts_with("Number of cells:") {
            in_cells = true;
            continue;
        }
        if in_cells {
            let mut it = t.split_whitespace();
            match (it.next(), it.next(), it.next()) {
                (Some(name), Some(n), None) => match n.parse::<u64>() {
                    Ok(n) => {
                        cells.insert(name.to_string(), n);
                    }
                    Err(_) => break,
                },
                _ => break,
            }
        }
    }
    if !in_cells {
        bail!("yosys `stat` for `{top}` has no cell count");
    }
    Ok(cells)
}

/// The Yosys script for `t`, with paths relative to the output folder.
fn script(t: &TopEntry) -> String {
    let mut s = String::new();
    for f in &t.files {
        s.push_str(&format!("read_verilog {f}\n"));
    }
    s.push_str(&format!(
        "synth_xilinx -family xcup -flatten -noiopad -noclkbuf -top {}\nstat\n",
        t.top
    ));
    s
}

/// One top's result and whether it came from the cache.
#[derive(Clone, Debug)]
pub struct Synthesized {
    /// The estimate.
    pub result: SynthResult,
    /// Taken from `OUT/.synth-cache` instead of running Yosys.
    pub cached: bool,
}

/// Tops of `manifest` whose block or top name is `filter` (all if `None`).
pub fn select<'a>(manifest: &'a Manifest, filter: Option<&str>) -> Result<Vec<&'a TopEntry>> {
    let tops: Vec<&TopEntry> = manifest
        .tops
        .iter()
        .filter(|t| match filter {
            None => true,
            Some(f) => t.block == f || t.top == f,
        })
        .collect();
    if tops.is_empty() {
        let mut blocks: Vec<&str> = manifest.tops.iter().map(|t| t.block.as_str()).collect();
        blocks.dedup();
        return Err(usage(format!(
            "no generated top for block `{}`; generated blocks: {}",
            filter.unwrap_or(""),
            blocks.join(", ")
        )));
    }
    Ok(tops)
}

/// Synthesize (or fetch from cache) one top generated into `out`.
pub fn synth_top(t: &TopEntry, out: &Path, yosys: &str) -> Result<Synthesized> {
    let script = script(t);
    let mut key = format!("recipe {RECIPE_VERSION}\n{yosys}\n{script}");
    for f in &t.files {
        let p = path_in(out, f);
        let text =
            std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
        key.push_str(&format!("file {f} {}\n", sha256_hex(text.as_bytes())));
    }
    let hash = sha256_hex(key.as_bytes());
    let cache = out.join(".synth-cache");
    let entry = cache.join(format!("{hash}.json"));
    if let Ok(text) = std::fs::read_to_string(&entry) {
        if let Ok(r) = serde_json::from_str::<SynthResult>(&text) {
            // Re-classify: the cell counts are the cached fact, the columns may change.
            return Ok(Synthesized {
                result: classify(&t.block, &t.top, &r.yosys, r.cells),
                cached: true,
            });
        }
    }
    std::fs::create_dir_all(&cache).with_context(|| format!("creating {}", cache.display()))?;
    let ys = cache.join(format!("{hash}.ys"));
    std::fs::write(&ys, &script).with_context(|| format!("writing {}", ys.display()))?;
    // Yosys runs in `out` so the script's and the log's paths stay relative.
    let o = Command::new("yosys")
        .arg("-s")
        .arg(Path::new(".synth-cache").join(format!("{hash}.ys")))
        .current_dir(out)
        .output()
        .with_context(|| format!("running yosys on {}", t.top))?;
    let log = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    let log_path = cache.join(format!("{hash}.log"));
    std::fs::write(&log_path, &log).with_context(|| format!("writing {}", log_path.display()))?;
    if !o.status.success() {
        let last = log
            .lines()
            .rev()
            .find(|l| l.contains("ERROR"))
            .unwrap_or("(no ERROR line)");
        bail!(
            "yosys failed on {}: {} (full log: {})",
            t.top,
            last.trim(),
            log_path.display()
        );
    }
    let cells = parse_stat(&log, &t.top)?;
    let result = classify(&t.block, &t.top, yosys, cells);
    std::fs::write(&entry, serde_json::to_string_pretty(&result)? + "\n")
        .with_context(|| format!("writing {}", entry.display()))?;
    Ok(Synthesized {
        result,
        cached: false,
    })
}

/// `yosys -V`, or an error saying how to install it.
pub fn require_yosys() -> Result<String> {
    crate::tools::yosys_version().ok_or_else(|| {
        anyhow::anyhow!(
            "`yosys` is not installed or not on PATH: install the Debian package `yosys` \
             (scripts/ do this) and run `exanet synth` again"
        )
    })
}

fn pct(n: f64, cap: u64) -> String {
    format!("{:.2}%", 100.0 * n / cap as f64)
}

/// The resource table printed by `exanet synth`.
pub fn table(results: &[SynthResult]) -> String {
    let w = results
        .iter()
        .map(|r| r.top.len())
        .max()
        .unwrap_or(3)
        .max(3);
    let row = |c: [&str; 13]| {
        format!(
            "{:<w$}  {:>7} {:>6}  {:>7} {:>6}  {:>5}  {:>6} {:>6} {:>6}  {:>6} {:>6}  {:>4} {:>6}\n",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12]
        )
    };
    let mut s = row([
        "top", "LUT", "%", "FF", "%", "CARRY", "LUTRAM", "(LUTs)", "%", "BRAM36", "%", "DSP", "%",
    ]);
    for r in results {
        s.push_str(&row([
            &r.top,
            &r.lut.to_string(),
            &pct(r.lut as f64, zu9eg::LUTS),
            &r.ff.to_string(),
            &pct(r.ff as f64, zu9eg::FFS),
            &r.carry.to_string(),
            &r.lutram_cells.to_string(),
            &r.lutram_luts.to_string(),
            &pct(r.lutram_luts as f64, zu9eg::LUTRAM_LUTS),
            &r.bram36.to_string(),
            &pct(r.bram36, zu9eg::BRAM36),
            &r.dsp.to_string(),
            &pct(r.dsp as f64, zu9eg::DSPS),
        ]));
    }
    s.push_str(&format!(
        "% of a ZU9EG: {} LUTs, {} FFs, {} LUTs usable as LUTRAM, {} BRAM36, {} DSP48E2\n",
        zu9eg::LUTS,
        zu9eg::FFS,
        zu9eg::LUTRAM_LUTS,
        zu9eg::BRAM36,
        zu9eg::DSPS
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
3. Printing statistics.

=== exanet_x ===

   Number of wires:                 14
   Number of cells:                 30
     CARRY4                          2
     FDRE                            8
     FDSE                            1
     LUT2                            8
     LUT6                            3
     RAM32M16                        2
     RAM64X1D                        1
     RAM32X16DR8                     3
     RAMB18E2                        1
     RAMB36E2                        2
     DSP48E2                         1

End of script.
";

    #[test]
    fn stat_is_parsed_and_classified() {
        let cells = parse_stat(LOG, "exanet_x").unwrap();
        assert_eq!(cells.len(), 11);
        let r = classify("b", "exanet_x", "Yosys 0.23", cells);
        assert_eq!(r.lut, 11);
        assert_eq!(r.ff, 9);
        assert_eq!(r.carry, 2);
        assert_eq!(r.lutram_cells, 6);
        assert_eq!(r.lutram_luts, 42);
        assert_eq!(r.bram36, 2.5);
        assert_eq!(r.dsp, 1);
        assert!(parse_stat(LOG, "other").is_err());
        let t = table(&[r]);
        assert!(t.contains("exanet_x"), "{t}");
        assert!(t.contains("0.03%"), "{t}");
    }
}
