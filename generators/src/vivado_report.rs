//! `exanet build`: runs a generated Vivado flow when `vivado` is on PATH
//! and turns its reports into `summary.json` (utilization, WNS, WHS).
//! The report parsers take the text of `report_utilization` and
//! `report_timing_summary`; they are tested on sample report text.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Oldest Vivado release the generated scripts are written for
/// (`write_hw_platform -fixed -include_bit`, UltraScale+ GTHE4 Aurora).
pub const MIN_VIVADO: (u32, u32) = (2020, 2);

/// One utilization row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Used {
    /// Used.
    pub used: f64,
    /// Available on the part.
    pub available: f64,
    /// used / available, percent.
    pub percent: f64,
}

/// The summary of one Vivado run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Site type → use (the rows of report_utilization's tables).
    pub utilization: BTreeMap<String, Used>,
    /// Worst negative (setup) slack, ns.
    pub wns_ns: f64,
    /// Worst hold slack, ns.
    pub whs_ns: f64,
    /// Both slacks non-negative.
    pub timing_met: bool,
}

fn number(s: &str) -> Option<f64> {
    s.trim().trim_start_matches('<').trim().parse().ok()
}

/// The rows of every `| Site Type | Used | … | Available | Util% |` table
/// in a `report_utilization` text (with or without the Prohibited column).
pub fn parse_utilization(text: &str) -> Result<BTreeMap<String, Used>> {
    let mut out = BTreeMap::new();
    let mut in_table = false;
    for line in text.lines() {
        let t = line.trim();
        if !t.starts_with('|') && !t.starts_with('+') {
            in_table = false; // a table ends at the first line not of it
            continue;
        }
        let cells: Vec<&str> = t.split('|').map(str::trim).collect();
        if cells.len() < 5 {
            continue;
        }
        // cells: "", name, used, ..., available, util%, ""
        let n = cells.len();
        if cells[1] == "Site Type" {
            in_table = cells[n - 2] == "Util%" && cells[n - 3] == "Available";
            continue;
        }
        if !in_table {
            continue;
        }
        let (Some(used), Some(available)) = (number(cells[2]), number(cells[n - 3])) else {
            continue;
        };
        let name = cells[1].to_string();
        if name.is_empty() || available == 0.0 {
            continue;
        }
        out.entry(name).or_insert(Used {
            used,
            available,
            percent: 100.0 * used / available,
        });
    }
    if out.is_empty() {
        bail!("no `| Site Type | Used | … | Available | Util% |` table in the utilization report");
    }
    Ok(out)
}

/// (WNS, WHS) in ns from the Design Timing Summary of a
/// `report_timing_summary` text.
pub fn parse_timing_summary(text: &str) -> Result<(f64, f64)> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(h) = lines
        .iter()
        .position(|l| l.contains("WNS(ns)") && l.contains("WHS(ns)"))
    else {
        bail!("no `WNS(ns) … WHS(ns)` header in the timing summary report (is it report_timing_summary output?)");
    };
    let names: Vec<&str> = lines[h]
        .split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let values: Vec<&str> = lines
        .iter()
        .skip(h + 1)
        .find(|l| !l.trim().is_empty() && !l.chars().all(|c| c == '-' || c.is_whitespace()))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    if values.len() != names.len() {
        bail!(
            "the timing summary has {} column names but {} values under them",
            names.len(),
            values.len()
        );
    }
    let get = |col: &str| -> Result<f64> {
        let i = names
            .iter()
            .position(|n| *n == col)
            .context(col.to_string())?;
        number(values[i]).with_context(|| format!("{col} value {:?} is not a number", values[i]))
    };
    Ok((get("WNS(ns)")?, get("WHS(ns)")?))
}

/// The summary of the reports in `dir` (`utilization.rpt`,
/// `timing_summary.rpt`, as vivado/node.tcl writes them).
pub fn summarize(dir: &Path) -> Result<Summary> {
    let read = |f: &str| {
        let p = dir.join(f);
        std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))
    };
    let utilization = parse_utilization(&read("utilization.rpt")?)
        .with_context(|| format!("{}", dir.join("utilization.rpt").display()))?;
    let (wns_ns, whs_ns) = parse_timing_summary(&read("timing_summary.rpt")?)
        .with_context(|| format!("{}", dir.join("timing_summary.rpt").display()))?;
    Ok(Summary {
        utilization,
        wns_ns,
        whs_ns,
        timing_met: wns_ns >= 0.0 && whs_ns >= 0.0,
    })
}

/// (year, release) from `vivado -version` output (`Vivado v2023.2 (64-bit)`).
pub fn parse_version(text: &str) -> Option<(u32, u32)> {
    let v = text.split_whitespace().find_map(|w| w.strip_prefix('v'))?;
    let (y, r) = v.split_once('.')?;
    let r: String = r.chars().take_while(char::is_ascii_digit).collect();
    Some((y.parse().ok()?, r.parse().ok()?))
}

/// Run `OUT/vivado/<script>` with the `vivado` on PATH, then write
/// `OUT/reports/node/summary.json` (node flow). Errors name what is missing.
pub fn build(out: &Path, script: &str) -> Result<Option<Summary>> {
    let tcl = out.join("vivado").join(script);
    if !tcl.is_file() {
        bail!(
            "{} does not exist: run `exanet generate --out {}` first (vivado/node.tcl needs a board \
             with a transceiver lane per link, fpga.board)",
            tcl.display(),
            out.display()
        );
    }
    let version = Command::new("vivado").arg("-version").output();
    let version = match version {
        Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
        Err(e) => bail!(
            "`vivado` is not on PATH ({e}): source Vivado's settings64.sh (Vivado {}.{} or newer, \
             with a licence for xczu9eg) and run again; nothing was built",
            MIN_VIVADO.0,
            MIN_VIVADO.1
        ),
    };
    let Some(v) = parse_version(&version) else {
        bail!("cannot read the version from `vivado -version`: {version:?}");
    };
    if v < MIN_VIVADO {
        bail!(
            "Vivado {}.{} is older than {}.{}, the oldest release the generated scripts are written for",
            v.0,
            v.1,
            MIN_VIVADO.0,
            MIN_VIVADO.1
        );
    }
    let logs = out.join("reports");
    std::fs::create_dir_all(&logs)?;
    let status = Command::new("vivado")
        .args(["-mode", "batch", "-nojournal", "-log"])
        .arg(logs.join(format!("{script}.log")))
        .arg("-source")
        .arg(&tcl)
        .status()
        .context("running vivado")?;
    if !status.success() {
        bail!(
            "vivado failed ({status}) running {}; see {}",
            tcl.display(),
            logs.join(format!("{script}.log")).display()
        );
    }
    if script != "node.tcl" {
        return Ok(None);
    }
    let dir = logs.join("node");
    let summary = summarize(&dir)?;
    let mut json = serde_json::to_string_pretty(&summary)?;
    json.push('\n');
    std::fs::write(dir.join("summary.json"), json)?;
    Ok(Some(summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Sample report text in the layout Vivado writes (values made up).
    const UTIL: &str = "\
1. CLB Logic
------------

+----------------------------+-------+-------+------------+-----------+-------+
|          Site Type         |  Used | Fixed | Prohibited | Available | Util% |
+----------------------------+-------+-------+------------+-----------+-------+
| CLB LUTs                   | 41112 |     0 |          0 |    274080 | 15.00 |
|   LUT as Logic             | 40000 |     0 |          0 |    274080 | 14.59 |
| CLB Registers              | 54816 |     0 |          0 |    548160 | 10.00 |
+----------------------------+-------+-------+------------+-----------+-------+

3. BLOCKRAM
-----------

+-------------------+------+-------+-----------+-------+
|     Site Type     | Used | Fixed | Available | Util% |
+-------------------+------+-------+-----------+-------+
| Block RAM Tile    | 45.5 |     0 |       912 |  4.99 |
| DSPs              |    0 |     0 |      2520 |  0.00 |
+-------------------+------+-------+-----------+-------+

| GTHE4_CHANNEL | 4 | 4 | 0 | 24 | 16.67 |
";

    const TIMING: &str = "\
------------------------------------------------------------------------------------------------
| Design Timing Summary
| ---------------------
------------------------------------------------------------------------------------------------

    WNS(ns)      TNS(ns)  TNS Failing Endpoints  TNS Total Endpoints      WHS(ns)      THS(ns)  THS Failing Endpoints  THS Total Endpoints     WPWS(ns)     TPWS(ns)  TPWS Failing Endpoints  TPWS Total Endpoints  
    -------      -------  ---------------------  -------------------      -------      -------  ---------------------  -------------------     --------     --------  ----------------------  --------------------  
     -0.215       -3.100                     27                91234        0.012        0.000                      0                91234        2.458        0.000                       0                 40311  
";

    #[test]
    fn utilization_rows_with_and_without_the_prohibited_column() {
        let u = parse_utilization(UTIL).unwrap();
        assert_eq!(u["CLB LUTs"].used, 41112.0);
        assert_eq!(u["CLB LUTs"].available, 274080.0);
        assert!((u["CLB LUTs"].percent - 15.0).abs() < 1e-9);
        assert_eq!(u["CLB Registers"].available, 548160.0);
        assert_eq!(u["Block RAM Tile"].used, 45.5);
        assert_eq!(u["DSPs"].available, 2520.0);
        // Only rows of a Site Type table are read.
        assert!(!u.contains_key("GTHE4_CHANNEL"));
        assert!(parse_utilization("no tables").is_err());
    }

    #[test]
    fn timing_summary_gives_wns_and_whs() {
        assert_eq!(parse_timing_summary(TIMING).unwrap(), (-0.215, 0.012));
        let e = parse_timing_summary("WNS only").unwrap_err().to_string();
        assert!(e.contains("WNS(ns)"), "{e}");
        let cut = TIMING.replace("  2.458", "");
        assert!(parse_timing_summary(&cut).is_err());
    }

    #[test]
    fn summary_of_a_report_folder() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("utilization.rpt"), UTIL).unwrap();
        std::fs::write(d.path().join("timing_summary.rpt"), TIMING).unwrap();
        let s = summarize(d.path()).unwrap();
        assert!(!s.timing_met);
        assert_eq!(s.wns_ns, -0.215);
        let e = format!("{:#}", summarize(Path::new("/nonexistent")).unwrap_err());
        assert!(e.contains("utilization.rpt"), "{e}");
    }

    #[test]
    fn versions() {
        assert_eq!(
            parse_version("Vivado v2023.2 (64-bit)\nSW Build"),
            Some((2023, 2))
        );
        assert_eq!(parse_version("Vivado v2020.2.2 (64-bit)"), Some((2020, 2)));
        assert_eq!(parse_version("garbage"), None);
        assert!((2019, 2) < MIN_VIVADO);
    }
}
