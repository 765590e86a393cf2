//! `exanet synth`: Yosys resource estimates of the generated tops for the
//! ZU9EG (UltraScale+), cached by content.
//!
//! Per top: `read_verilog <its files>; synth_xilinx -family xcup -flatten
//! -noiopad -noclkbuf -top T; stat; write_json`. `-flatten` gives one cell
//! count per top; `-noiopad -noclkbuf` because each top is an out-of-context
//! block, not a chip (its ports are not pins). The mapped netlist
//! (`write_json`) gives the logic depth ([`crate::logic_depth`]). Results are
//! cached under `OUT/.synth-cache/<sha256>.json`, keyed by the Yosys version,
//! the script and every input file's name and bytes.
//!
//! By sub-block ([`synth_breakdown`], `exanet synth --by-module`): a second
//! run keeps the hierarchy of the top's first structural level (the
//! children of the first module with more than one child instance) with
//! `keep_hierarchy`, and flattens everything below and above it, so each
//! sub-block is optimised as a whole, as in the flat run, and `stat` counts
//! its cells. The one thing this run cannot do is optimise across those
//! boundaries (constants on a sub-block's inputs, outputs nobody reads), so
//! its total can exceed the flat run's; both totals are reported. Why not
//! attribute the flat run's cells to modules instead: ABC re-creates the
//! LUTs without the source attributes that would say which module each came
//! from.
//!
//! The node ([`compose_node`]): its estimate is composed from the tops it
//! is built from, each synthesized alone and counted by instance, and
//! labelled as composed. Synthesizing the `node` top itself (`exanet synth
//! --block node --whole-node`) takes hours on 2 cores (the router alone
//! takes tens of minutes), while the composed estimate reuses each block's
//! cached run; what it cannot see is optimisation across the parts'
//! boundaries and paths between parts.

use crate::error::usage;
use crate::generate::{path_in, sha256_hex, Manifest, TopEntry};
use crate::logic_depth::{self, Budget, Depth};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// Bumped when the script or the parsing changes, so old cache entries die.
const RECIPE_VERSION: u32 = 2;

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
    /// GTH transceivers.
    pub const GTH: u64 = 24;
}

/// The node's goal: at most this share of the ZU9EG's LUTs (issue 17).
pub const NODE_LUT_GOAL: f64 = 0.25;

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
    /// GTH transceivers (0 for a block; a node uses one per network link).
    #[serde(default)]
    pub gth: u64,
    /// Every cell type Yosys reported, with its count.
    pub cells: BTreeMap<String, u64>,
    /// Logic depth of the mapped netlist (flat run only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<Depth>,
    /// Resources by sub-block (`--by-module`, and the composed node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breakdown: Option<Box<Breakdown>>,
}

/// Resources of a top by sub-block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// How the figures were obtained.
    pub method: String,
    /// The module whose children are the sub-blocks (the top when composed).
    pub level: String,
    /// One row per sub-block kind, largest LUT count first; the last is the glue.
    pub parts: Vec<Part>,
    /// The sum of the parts (instances counted).
    pub total: SynthResult,
}

/// One kind of sub-block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// Instance name without its index (`input_unit`), or `(glue)`.
    pub name: String,
    /// Its instances.
    pub instances: u64,
    /// The modules (or tops) behind them.
    pub modules: Vec<String>,
    /// All instances together.
    pub res: SynthResult,
}

/// LUTs in a SLICEM taken by a LUT-RAM or SRL primitive, or `None` if `cell` is not one.
pub(crate) fn lutram_luts(cell: &str) -> Option<u64> {
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
        gth: 0,
        cells,
        depth: None,
        breakdown: None,
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

/// The flat Yosys script for `t`, with paths relative to the output
/// folder; it writes the mapped netlist to `netlist`.
fn script(t: &TopEntry, netlist: &str) -> String {
    let mut s = String::new();
    for f in &t.files {
        s.push_str(&format!("read_verilog {f}\n"));
    }
    s.push_str(&format!(
        "synth_xilinx -family xcup -flatten -noiopad -noclkbuf -top {}\nstat\nwrite_json {netlist}\n",
        t.top
    ));
    s
}

/// The by-sub-block script: `parts` keep their hierarchy.
fn hier_script(t: &TopEntry, parts: &BTreeSet<String>) -> String {
    let mut s = String::new();
    for f in &t.files {
        s.push_str(&format!("read_verilog {f}\n"));
    }
    s.push_str(&format!("hierarchy -top {}\n", t.top));
    if !parts.is_empty() {
        let list: Vec<&str> = parts.iter().map(String::as_str).collect();
        s.push_str(&format!(
            "setattr -mod -set keep_hierarchy 1 {}\n",
            list.join(" ")
        ));
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

/// Run a Yosys script for `t` in `out`, or fetch its parsed result from the
/// cache. `script_for(netlist)` gives the script, writing any netlist to the
/// path it is handed (under the cache, named by the key); `parse(log,
/// netlist)` turns the log (and netlist file) into the cached value.
fn cached_run<T: Serialize + serde::de::DeserializeOwned>(
    t: &TopEntry,
    out: &Path,
    yosys: &str,
    tag: &str,
    script_for: impl Fn(&str) -> String,
    parse: impl FnOnce(&str, &Path) -> Result<T>,
) -> Result<(T, bool, std::path::PathBuf)> {
    let mut key = format!(
        "recipe {RECIPE_VERSION} {tag}\n{yosys}\n{}",
        script_for("NETLIST")
    );
    for f in &t.files {
        let p = path_in(out, f);
        let text =
            std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
        key.push_str(&format!("file {f} {}\n", sha256_hex(text.as_bytes())));
    }
    let hash = sha256_hex(key.as_bytes());
    let cache = out.join(".synth-cache");
    let entry = cache.join(format!("{hash}.json"));
    let netlist = format!(".synth-cache/{hash}.netlist.json");
    if let Ok(text) = std::fs::read_to_string(&entry) {
        if let Ok(r) = serde_json::from_str::<T>(&text) {
            return Ok((r, true, path_in(out, &netlist)));
        }
    }
    std::fs::create_dir_all(&cache).with_context(|| format!("creating {}", cache.display()))?;
    let script = script_for(&netlist);
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
    let value = parse(&log, &path_in(out, &netlist)).with_context(|| {
        format!(
            "reading yosys's results for {} ({})",
            t.top,
            log_path.display()
        )
    })?;
    std::fs::write(&entry, serde_json::to_string_pretty(&value)? + "\n")
        .with_context(|| format!("writing {}", entry.display()))?;
    Ok((value, false, path_in(out, &netlist)))
}

/// Synthesize (or fetch from cache) one top generated into `out`: flat
/// resources and the logic depth of the mapped netlist.
pub fn synth_top(t: &TopEntry, out: &Path, yosys: &str) -> Result<Synthesized> {
    let (r, cached, netlist) = cached_run(
        t,
        out,
        yosys,
        "flat",
        |netlist| script(t, netlist),
        |log, netlist| {
            let cells = parse_stat(log, &t.top)?;
            let json = std::fs::read_to_string(netlist)
                .with_context(|| format!("reading {}", netlist.display()))?;
            let depth = logic_depth::depth_of_json(&json, &t.top)?;
            Ok(SynthResult {
                depth: Some(depth),
                ..classify(&t.block, &t.top, yosys, cells)
            })
        },
    )?;
    // Re-classify: the cell counts and the netlist are the cached facts; the
    // columns and the depth walk may change, so both are recomputed.
    let depth = match std::fs::read_to_string(&netlist) {
        Ok(json) if cached => Some(logic_depth::depth_of_json(&json, &t.top)?),
        _ => r.depth,
    };
    let result = SynthResult {
        depth,
        ..classify(&t.block, &t.top, &r.yosys, r.cells)
    };
    Ok(Synthesized { result, cached })
}

/// Module instances in one module's Verilog text: `(module, instance)` for
/// each line `<module> <instance> (` whose module is one of `known`.
pub fn instantiations(text: &str, known: &BTreeSet<String>) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let mut it = line.split_whitespace();
        let (Some(m), Some(rest)) = (it.next(), it.next()) else {
            continue;
        };
        if !known.contains(m) {
            continue;
        }
        let inst = rest.split('(').next().unwrap_or("");
        // `(` on this line, or alone at the start of the next non-empty one.
        let next_opens = || {
            lines[i + 1..]
                .iter()
                .map(|l| l.trim())
                .find(|l| !l.is_empty())
                .is_some_and(|l| l.starts_with('('))
        };
        let opens = rest.contains('(')
            || match it.next() {
                Some(n) => n.starts_with('('),
                None => next_opens(),
            };
        if opens
            && !inst.is_empty()
            && inst
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
        {
            found.push((m.to_string(), inst.to_string()));
        }
    }
    found
}

/// The sub-blocks of `t`: the first module from the top down with more than
/// one child instance, and its children `(module, instance)`. A leaf top
/// has none.
pub fn structural_level(t: &TopEntry, out: &Path) -> Result<(String, Vec<(String, String)>)> {
    let known = known_modules(t);
    let mut at = t.top.clone();
    for _ in 0..t.files.len() + 1 {
        let kids = instantiations(&module_text(t, out, &at)?, &known);
        match kids.len() {
            0 => return Ok((at, Vec::new())),
            1 => at = kids[0].0.clone(),
            _ => return Ok((at, kids)),
        }
    }
    bail!("the module hierarchy of {} has a cycle at `{at}`", t.top)
}

fn module_of(f: &str) -> Option<String> {
    f.rsplit('/')
        .next()
        .and_then(|n| n.strip_suffix(".v"))
        .map(str::to_string)
}

fn module_text(t: &TopEntry, out: &Path, m: &str) -> Result<String> {
    let f = t
        .files
        .iter()
        .find(|f| module_of(f).as_deref() == Some(m))
        .with_context(|| format!("no file for module `{m}` among {}'s files", t.top))?;
    let p = path_in(out, f);
    std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))
}

/// The modules of `t`'s files (one module per file, named as its file).
fn known_modules(t: &TopEntry) -> BTreeSet<String> {
    t.files.iter().filter_map(|f| module_of(f)).collect()
}

/// A module worth its own row one level down: it has children or
/// combinational logic (a bare register module, rust-hdl's `DFF`, is not:
/// it stays in its parent's row).
fn has_logic(text: &str) -> bool {
    text.contains("always @(*)")
}

/// Second-level sub-blocks (`levels = 2`): per sub-block `(module,
/// instance)`, its children worth a row (see [`has_logic`]).
fn grandchildren(
    t: &TopEntry,
    out: &Path,
    kids: &[(String, String)],
) -> Result<Vec<Vec<(String, String)>>> {
    let known = known_modules(t);
    let mut all = Vec::new();
    for (m, _) in kids {
        let mut keep = Vec::new();
        for (g, inst) in instantiations(&module_text(t, out, m)?, &known) {
            let text = module_text(t, out, &g)?;
            if has_logic(&text) || !instantiations(&text, &known).is_empty() {
                keep.push((g, inst));
            }
        }
        all.push(keep);
    }
    Ok(all)
}

/// `input_unit_3` → `input_unit`: instances of one kind share a row.
pub fn kind_of(instance: &str) -> &str {
    let s = instance.trim_end_matches(|c: char| c.is_ascii_digit());
    let s = s.strip_suffix('_').unwrap_or(s);
    if s.is_empty() {
        instance
    } else {
        s
    }
}

fn merge(into: &mut BTreeMap<String, u64>, cells: &BTreeMap<String, u64>, times: u64) {
    for (c, n) in cells {
        *into.entry(c.clone()).or_default() += n * times;
    }
}

/// Instances of one module, before grouping by kind.
struct PartRow {
    kind: String,
    instances: u64,
    module: String,
    /// Cells of one instance.
    cells: BTreeMap<String, u64>,
    /// GTH per instance.
    gth: u64,
}

/// A kind's instances, modules, cells and GTH so far.
type KindSum = (u64, Vec<String>, BTreeMap<String, u64>, u64);

/// Group rows into [`Part`]s, largest LUT count first, with the glue last,
/// and their total.
fn parts_of(
    block: &str,
    yosys: &str,
    rows: Vec<PartRow>,
    glue: Option<BTreeMap<String, u64>>,
) -> (Vec<Part>, SynthResult) {
    let mut kinds: BTreeMap<String, KindSum> = BTreeMap::new();
    let mut all = BTreeMap::new();
    let mut gth_total = 0;
    for row in rows {
        let PartRow {
            kind,
            instances: n,
            module,
            cells,
            gth,
        } = row;
        let k = kinds.entry(kind).or_default();
        k.0 += n;
        if !k.1.contains(&module) {
            k.1.push(module);
        }
        merge(&mut k.2, &cells, n);
        k.3 += gth * n;
        merge(&mut all, &cells, n);
        gth_total += gth * n;
    }
    let mut parts: Vec<Part> = kinds
        .into_iter()
        .map(|(name, (n, modules, cells, gth))| Part {
            res: SynthResult {
                gth,
                ..classify(&name, &modules.join(","), yosys, cells)
            },
            name,
            instances: n,
            modules,
        })
        .collect();
    parts.sort_by(|a, b| b.res.lut.cmp(&a.res.lut).then(a.name.cmp(&b.name)));
    if let Some(g) = glue {
        merge(&mut all, &g, 1);
        parts.push(Part {
            name: "(glue)".to_string(),
            instances: 1,
            modules: Vec::new(),
            res: classify("(glue)", "", yosys, g),
        });
    }
    let total = SynthResult {
        gth: gth_total,
        ..classify(block, "total", yosys, all)
    };
    (parts, total)
}

/// Resources of `t` by sub-block: see the module doc. Cached like [`synth_top`].
pub fn synth_breakdown(
    t: &TopEntry,
    out: &Path,
    yosys: &str,
    levels: usize,
) -> Result<(Breakdown, bool)> {
    let (level, kids) = structural_level(t, out)?;
    let grand = if levels >= 2 {
        grandchildren(t, out, &kids)?
    } else {
        vec![Vec::new(); kids.len()]
    };
    let mut modules: BTreeSet<String> = kids.iter().map(|(m, _)| m.clone()).collect();
    modules.extend(grand.iter().flatten().map(|(m, _)| m.clone()));
    let run = if levels >= 2 { "hier2" } else { "hier" };
    let (b, cached, _) = cached_run(
        t,
        out,
        yosys,
        run,
        |_| hier_script(t, &modules),
        |log, _| {
            let mut rows = Vec::new();
            for ((m, inst), gs) in kids.iter().zip(&grand) {
                let kind = kind_of(inst);
                let mut own = parse_stat(log, m)?;
                own.retain(|c, _| !modules.contains(c));
                rows.push(PartRow {
                    kind: if gs.is_empty() {
                        kind.to_string()
                    } else {
                        format!("{kind} (own logic)")
                    },
                    instances: 1,
                    module: m.clone(),
                    cells: own,
                    gth: 0,
                });
                for (g, ginst) in gs {
                    let mut cells = parse_stat(log, g)?;
                    cells.retain(|c, _| !modules.contains(c));
                    rows.push(PartRow {
                        kind: format!("{kind}.{}", kind_of(ginst)),
                        instances: 1,
                        module: g.clone(),
                        cells,
                        gth: 0,
                    });
                }
            }
            // The top's own cells, minus its instances of the kept modules.
            let mut glue = parse_stat(log, &t.top)?;
            glue.retain(|c, _| !modules.contains(c));
            let (parts, total) = parts_of(&t.block, yosys, rows, Some(glue));
            let deeper = if levels >= 2 {
                " and their children with logic"
            } else {
                ""
            };
            Ok(Breakdown {
                method: format!(
                    "hierarchical: children of `{level}`{deeper} kept (keep_hierarchy), \
                     each flattened inside; synth_xilinx -family xcup -flatten"
                ),
                level: level.clone(),
                parts,
                total,
            })
        },
    )?;
    Ok((b, cached))
}

/// One part of the composed node: a top and how many the node holds.
#[derive(Clone, Debug)]
pub struct NodePart {
    /// Row name.
    pub name: String,
    /// Instances in the node.
    pub count: u64,
    /// The top to synthesize.
    pub top: TopEntry,
    /// GTH transceivers per instance.
    pub gth: u64,
}

/// The parts of a node of `manifest`'s config, for [`compose_node`]: the NI
/// (one per local port), the allreduce datapath (`reduce_alu`), the router,
/// per network link a `link_tx` (its retry buffer is inside it, so no
/// separate `retry_buffer`) and a `link_rx` (each link also counts one GTH),
/// the links' status block and the AXI4-Lite split in front of it and the
/// NI, per link two `async_fifo`s (the PHY word, 65
/// bits, in each direction) and one `reset_sync` per clock domain (the PL
/// clock and each link's user clock). `async_fifo` and `reset_sync` are not
/// manifest tops: they are emitted here into `OUT/.synth-cache/parts/`.
pub fn node_parts(manifest: &Manifest, out: &Path) -> Result<(Vec<NodePart>, Vec<String>)> {
    let topo = &manifest.params.router.topology;
    let links = topo.num_dir_ports() as u64;
    let mut parts = Vec::new();
    let mut missing = Vec::new();
    let mut take = |block: &str, count: u64, gth: u64, parts: &mut Vec<NodePart>| {
        if count == 0 {
            return;
        }
        match manifest.tops.iter().find(|t| t.block == block) {
            Some(t) => parts.push(NodePart {
                name: block.to_string(),
                count,
                top: t.clone(),
                gth,
            }),
            None => missing.push(format!("{block} (not generated for this config)")),
        }
    };
    take("ni", topo.local_ports as u64, 0, &mut parts);
    take("reduce_alu", 1, 0, &mut parts);
    take("router", 1, 0, &mut parts);
    take("link_tx", links, 1, &mut parts);
    take("link_rx", links, 0, &mut parts);
    take("link_status", 1.min(links), 0, &mut parts);
    take("axil_split", 1.min(links), 0, &mut parts);
    if links > 0 {
        let dir = out.join(".synth-cache").join("parts");
        let mut emitted = |name: &str, count: u64, e: exanet_hdl::emit::Emitted| -> Result<()> {
            e.write_dir(&dir)?;
            parts.push(NodePart {
                name: name.to_string(),
                count,
                top: TopEntry {
                    block: name.to_string(),
                    top: e.top.clone(),
                    point: String::new(),
                    files: e
                        .modules
                        .iter()
                        .map(|(m, _)| format!(".synth-cache/parts/{m}.v"))
                        .collect(),
                    notes: Vec::new(),
                },
                gth: 0,
            });
            Ok(())
        };
        let af = exanet_sim::common::async_fifo::AsyncFifoParams::default();
        emitted(
            "async_fifo",
            2 * links,
            exanet_hdl::common::async_fifo::emit_async_fifo(&af)?,
        )?;
        emitted(
            "reset_sync",
            links + 1,
            exanet_hdl::common::async_fifo::emit_reset_sync(af.sync_stages)?,
        )?;
    }
    Ok((parts, missing))
}

/// The node estimate by composition: each part synthesized alone (cached),
/// counted by instance, and each part's own result (for its depth). The
/// node's depth is the worst part's (paths between parts are not seen).
/// `each` reports progress per part.
pub fn compose_node(
    manifest: &Manifest,
    out: &Path,
    yosys: &str,
    mut each: impl FnMut(&str, usize, usize),
) -> Result<(SynthResult, Vec<SynthResult>, usize)> {
    let (parts, missing) = node_parts(manifest, out)?;
    let mut rows = Vec::new();
    let mut cached = 0;
    let mut depth: Option<(u32, Depth)> = None;
    let mut each_part = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        each(&p.name, i, parts.len());
        let s = synth_top(&p.top, out, yosys)
            .with_context(|| format!("synthesizing node part {}", p.name))?;
        cached += s.cached as usize;
        if let Some(d) = &s.result.depth {
            let w = d.worst_levels();
            if depth.as_ref().is_none_or(|(x, _)| w > *x) {
                depth = Some((w, d.clone()));
            }
        }
        rows.push(PartRow {
            kind: p.name.clone(),
            instances: p.count,
            module: p.top.top.clone(),
            cells: s.result.cells.clone(),
            gth: p.gth,
        });
        each_part.push(s.result);
    }
    let (parts, total) = parts_of("node", yosys, rows, None);
    let mut method = "composed: each part synthesized alone (synth_xilinx -family xcup -flatten), \
                      counted by instance; no node top in the manifest yet"
        .to_string();
    if !missing.is_empty() {
        method.push_str(&format!("; missing: {}", missing.join(", ")));
    }
    let breakdown = Breakdown {
        method,
        level: "node (composed)".to_string(),
        parts,
        total: total.clone(),
    };
    Ok((
        SynthResult {
            top: "node (composed)".to_string(),
            depth: depth.map(|(_, d)| d),
            breakdown: Some(Box::new(breakdown)),
            ..total
        },
        each_part,
        cached,
    ))
}

/// GTH transceivers of a top: one per network link for the node, none for a block.
pub fn gth_of(manifest: &Manifest, block: &str) -> u64 {
    if block == "node" {
        manifest.params.router.topology.num_dir_ports() as u64
    } else {
        0
    }
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

/// One resource row: name, instances (if shown), the columns of [`table`].
fn resource_cells(name: &str, instances: Option<u64>, r: &SynthResult) -> Vec<String> {
    let mut c = vec![name.to_string()];
    if let Some(n) = instances {
        c.push(n.to_string());
    }
    c.extend([
        r.lut.to_string(),
        pct(r.lut as f64, zu9eg::LUTS),
        r.ff.to_string(),
        pct(r.ff as f64, zu9eg::FFS),
        r.carry.to_string(),
        r.lutram_cells.to_string(),
        r.lutram_luts.to_string(),
        pct(r.lutram_luts as f64, zu9eg::LUTRAM_LUTS),
        r.bram36.to_string(),
        pct(r.bram36, zu9eg::BRAM36),
        r.dsp.to_string(),
        pct(r.dsp as f64, zu9eg::DSPS),
        r.gth.to_string(),
        pct(r.gth as f64, zu9eg::GTH),
    ]);
    c
}

/// Rows aligned: the first column left, the others right.
fn aligned(rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let w: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            if i == 0 {
                line.push_str(&format!("{c:<0$}", w[0]));
            } else {
                line.push_str(&format!("  {c:>0$}", w[i]));
            }
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

const RESOURCE_HEADER: [&str; 15] = [
    "LUT", "%", "FF", "%", "CARRY", "LUTRAM", "(LUTs)", "%", "BRAM36", "%", "DSP", "%", "GTH", "%",
    "",
];

pub fn capacity_line() -> String {
    format!(
        "% of a ZU9EG: {} LUTs, {} FFs, {} LUTs usable as LUTRAM, {} BRAM36, {} DSP48E2, {} GTH\n",
        zu9eg::LUTS,
        zu9eg::FFS,
        zu9eg::LUTRAM_LUTS,
        zu9eg::BRAM36,
        zu9eg::DSPS,
        zu9eg::GTH
    )
}

/// The resource table printed by `exanet synth`.
pub fn table(results: &[SynthResult]) -> String {
    let mut rows = vec![std::iter::once("top")
        .chain(RESOURCE_HEADER[..14].iter().copied())
        .map(str::to_string)
        .collect::<Vec<_>>()];
    for r in results {
        rows.push(resource_cells(&r.top, None, r));
    }
    aligned(&rows) + &capacity_line()
}

/// The by-sub-block table of one top, with the flat run's total beside the
/// sum of the parts when there is one.
pub fn breakdown_table(r: &SynthResult, flat: Option<&SynthResult>) -> String {
    let Some(b) = &r.breakdown else {
        return String::new();
    };
    let mut s = format!("{} by sub-block ({})\n", r.top, b.method);
    let mut rows = vec![["sub-block", "inst"]
        .into_iter()
        .chain(RESOURCE_HEADER[..14].iter().copied())
        .map(str::to_string)
        .collect::<Vec<_>>()];
    for p in &b.parts {
        rows.push(resource_cells(&p.name, Some(p.instances), &p.res));
    }
    rows.push(resource_cells("total (sum of parts)", None, &b.total));
    rows[b.parts.len() + 1].insert(1, String::new());
    s.push_str(&aligned(&rows));
    if let Some(f) = flat {
        let d = b.total.lut as i64 - f.lut as i64;
        s.push_str(&format!(
            "flat run of {}: {} LUT, {} FF; the sum of the parts is {d:+} LUT ({:+.1}%), {:+} FF \
             (no optimisation across the kept boundaries: constants into a part and outputs \
             nobody reads stay; and ABC maps each part on its own, which moves the count \
             either way)\n",
            f.top,
            f.lut,
            f.ff,
            100.0 * d as f64 / f.lut.max(1) as f64,
            b.total.ff as i64 - f.ff as i64
        ));
    }
    s
}

/// The node's goal line: its LUTs against [`NODE_LUT_GOAL`] of the ZU9EG.
pub fn node_goal(r: &SynthResult) -> String {
    let goal = (NODE_LUT_GOAL * zu9eg::LUTS as f64).floor() as u64;
    let share = 100.0 * r.lut as f64 / zu9eg::LUTS as f64;
    let gap = r.lut as i64 - goal as i64;
    format!(
        "goal: node <= {:.0}% of the ZU9EG's LUTs ({goal}); {}: {} LUT = {share:.1}% -> {}\n",
        NODE_LUT_GOAL * 100.0,
        r.top,
        r.lut,
        if gap > 0 {
            format!(
                "OVER by {gap} LUT ({:.1} points)",
                share - NODE_LUT_GOAL * 100.0
            )
        } else {
            format!("met, {} LUT to spare", -gap)
        }
    )
}

/// Depth budget (LUT levels) of `mhz` with the -2 delay model, and its statement.
pub fn depth_budget(mhz: f64) -> (u32, String) {
    let b: Budget = logic_depth::MINUS2;
    let n = b.levels(mhz);
    (
        n,
        format!(
            "budget at {mhz} MHz ({:.2} ns) on a -2 part: {n} LUT levels, assuming {} ns per level \
             (LUT + typical net) and {} ns of clock-to-out, setup and clock uncertainty; carry \
             cells and MUXF7/8 add {} ns each to the estimate (assumed: DS925 gives no CLB delays)",
            1000.0 / mhz,
            b.level_ns,
            b.overhead_ns,
            b.carry_ns
        ),
    )
}

fn path_cell(p: &Option<logic_depth::Path>) -> String {
    match p {
        None => "-".to_string(),
        Some(p) => {
            let mut s = p.lut_levels.to_string();
            if p.carry_cells > 0 || p.wide_muxes > 0 {
                s.push_str(&format!("+{}c{}m", p.carry_cells, p.wide_muxes));
            }
            s
        }
    }
}

/// Tops whose worst path (any kind) exceeds the budget, with that path's kind.
pub fn over_budget(results: &[SynthResult], mhz: f64) -> Vec<(String, &'static str, u32)> {
    let (n, _) = depth_budget(mhz);
    let mut over = Vec::new();
    for r in results {
        let Some(d) = &r.depth else { continue };
        for (kind, p) in [
            ("reg->reg", &d.reg_to_reg),
            ("in->reg", &d.in_to_reg),
            ("reg->out", &d.reg_to_out),
            ("in->out", &d.in_to_out),
        ] {
            if let Some(p) = p {
                if p.lut_levels > n {
                    over.push((r.top.clone(), kind, p.lut_levels));
                }
            }
        }
    }
    over
}

/// The logic-depth table: LUT levels per path kind (`+Nc Mm`: carry cells
/// and wide muxes on it), the estimate of the worst reg→reg path, the flag,
/// and the worst reg→reg path's ends.
pub fn depth_table(results: &[SynthResult], mhz: f64) -> String {
    let (n, statement) = depth_budget(mhz);
    let b = logic_depth::MINUS2;
    let mut rows = vec![[
        "top", "reg->reg", "in->reg", "reg->out", "in->out", "est. ns", "budget", "",
    ]
    .map(str::to_string)
    .to_vec()];
    let mut ends = String::new();
    for r in results {
        let Some(d) = &r.depth else { continue };
        let worst = [&d.reg_to_reg, &d.in_to_reg, &d.reg_to_out, &d.in_to_out]
            .iter()
            .filter_map(|p| p.as_ref().map(|p| p.lut_levels))
            .max()
            .unwrap_or(0);
        rows.push(vec![
            r.top.clone(),
            path_cell(&d.reg_to_reg),
            path_cell(&d.in_to_reg),
            path_cell(&d.reg_to_out),
            path_cell(&d.in_to_out),
            d.reg_to_reg
                .as_ref()
                .map_or("-".to_string(), |p| format!("{:.1}", b.path_ns(p))),
            n.to_string(),
            if worst > n { "OVER" } else { "ok" }.to_string(),
        ]);
        if let Some(p) = &d.reg_to_reg {
            ends.push_str(&format!("  {}: {} -> {}\n", r.top, p.from, p.to));
        }
        if !d.loop_cuts.is_empty() {
            ends.push_str(&format!(
                "  {}: structural loop(s) in the Yosys netlist, cut at: {}\n",
                r.top,
                d.loop_cuts.join(", ")
            ));
        }
        if !d.opaque.is_empty() {
            let list: Vec<String> = d.opaque.iter().map(|(t, c)| format!("{t} x{c}")).collect();
            ends.push_str(&format!(
                "  {}: taken as registers (not known to the depth walk): {}\n",
                r.top,
                list.join(", ")
            ));
        }
    }
    let mut s = format!("logic depth, LUT levels of the mapped netlist; {statement}\n");
    s.push_str(&aligned(&rows));
    if !ends.is_empty() {
        s.push_str("worst reg->reg path (start register -> end register):\n");
        s.push_str(&ends);
    }
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
    #[test]
    fn instances_are_found_and_grouped_by_kind() {
        let known: BTreeSet<String> = ["exanet_r_iu_0", "exanet_r_iu_1", "exanet_r_xbar"]
            .map(str::to_string)
            .into();
        let text = "module exanet_r(\n  input clock\n);\n\
                    // Sub module instances\n\
                    exanet_r_iu_0 iu_0(\n  .clock(clock)\n);\n\
                    exanet_r_iu_1 iu_1 (\n);\n\
                    exanet_r_xbar xbar\n  (.a(b));\n\
                    wire exanet_r_xbar;\n\
                    reg [3:0] other_thing;\nendmodule\n";
        let found = instantiations(text, &known);
        assert_eq!(
            found,
            vec![
                ("exanet_r_iu_0".to_string(), "iu_0".to_string()),
                ("exanet_r_iu_1".to_string(), "iu_1".to_string()),
                ("exanet_r_xbar".to_string(), "xbar".to_string()),
            ]
        );
        assert_eq!(kind_of("iu_12"), "iu");
        assert_eq!(kind_of("link7"), "link");
        assert_eq!(kind_of("xbar"), "xbar");
        assert_eq!(kind_of("0"), "0");
    }

    /// Two levels: a top of two units, each with a logic child, a bare
    /// register child (stays in its parent's row) and own logic; every
    /// row's cells are its own, and the parts sum to the total.
    #[test]
    fn two_level_breakdown_keeps_children_with_logic() {
        let Some(yosys) = crate::tools::yosys_version() else {
            eprintln!("ignored: yosys not installed");
            return;
        };
        let d = tempfile::tempdir().unwrap();
        let files: Vec<(&str, String)> = vec![
            (
                "t_u_0_add",
                "module t_u_0_add(input [7:0] a, input [7:0] b, output reg [7:0] s);\n\
                 always @(*) begin s = a + b; end\nendmodule\n"
                    .into(),
            ),
            (
                "t_u_1_add",
                "module t_u_1_add(input [7:0] a, input [7:0] b, output reg [7:0] s);\n\
                 always @(*) begin s = a + b; end\nendmodule\n"
                    .into(),
            ),
            (
                "t_u_0_r",
                "module t_u_0_r(input clock, input [7:0] d, output reg [7:0] q);\n\
                 always @(posedge clock) q <= d;\nendmodule\n"
                    .into(),
            ),
            (
                "t_u_1_r",
                "module t_u_1_r(input clock, input [7:0] d, output reg [7:0] q);\n\
                 always @(posedge clock) q <= d;\nendmodule\n"
                    .into(),
            ),
        ];
        let mut files = files;
        for u in 0..2 {
            files.push((
                if u == 0 { "t_u_0" } else { "t_u_1" },
                format!(
                    "module t_u_{u}(input clock, input [7:0] a, input [7:0] b, output [7:0] y);\n\
                     wire [7:0] s; wire [7:0] q; reg [7:0] x;\n\
                     always @(*) begin x = (s ^ {{a[3:0], b[7:4]}}) & (q | a); end\n\
                     t_u_{u}_add add(.a(a), .b(b), .s(s));\n\
                     t_u_{u}_r r(.clock(clock), .d(x), .q(q));\n\
                     assign y = q;\nendmodule\n"
                ),
            ));
        }
        files.push((
            "t",
            "module t(input clock, input [7:0] a, input [7:0] b, input sel, output [7:0] y);\n\
             wire [7:0] y0; wire [7:0] y1;\n\
             t_u_0 u_0(.clock(clock), .a(a), .b(b), .y(y0));\n\
             t_u_1 u_1(.clock(clock), .a(b), .b(a), .y(y1));\n\
             assign y = sel ? y1 : y0;\nendmodule\n"
                .into(),
        ));
        for (m, text) in &files {
            std::fs::write(d.path().join(format!("{m}.v")), text).unwrap();
        }
        let t = TopEntry {
            block: "t".into(),
            top: "t".into(),
            point: String::new(),
            files: files.iter().map(|(m, _)| format!("{m}.v")).collect(),
            notes: Vec::new(),
        };
        let (b1, _) = synth_breakdown(&t, d.path(), &yosys, 1).unwrap();
        let names1: Vec<&str> = b1.parts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names1.len(), 2, "{names1:?}");
        assert!(names1.contains(&"u") && names1.contains(&"(glue)"));
        let (b2, cached) = synth_breakdown(&t, d.path(), &yosys, 2).unwrap();
        assert!(!cached);
        let get = |name: &str| {
            b2.parts
                .iter()
                .find(|p| p.name == name)
                .unwrap_or_else(|| panic!("no part {name}: {:?}", b2.parts))
        };
        // The adder is its own row (two instances), the register stays in
        // the unit's own logic, the output mux is the glue.
        assert_eq!(b2.parts.len(), 3, "{:?}", b2.parts);
        assert_eq!(get("u.add").instances, 2);
        assert!(get("u.add").res.lut >= 2 * 8 / 2, "{:?}", get("u.add").res);
        assert_eq!(get("u.add").res.ff, 0);
        assert_eq!(get("u (own logic)").instances, 2);
        assert_eq!(get("u (own logic)").res.ff, 16);
        assert!(get("u (own logic)").res.lut >= 8);
        assert!(get("(glue)").res.lut >= 4);
        let lut: u64 = b2.parts.iter().map(|p| p.res.lut).sum();
        assert_eq!(lut, b2.total.lut);
        assert_eq!(b2.total.ff, 16);
        assert!(
            b2.method.contains("their children with logic"),
            "{}",
            b2.method
        );
        // Cached apart from the one-level run.
        assert!(synth_breakdown(&t, d.path(), &yosys, 2).unwrap().1);
    }

    fn cells(v: &[(&str, u64)]) -> BTreeMap<String, u64> {
        v.iter().map(|(c, n)| (c.to_string(), *n)).collect()
    }

    fn row(kind: &str, n: u64, module: &str, c: &[(&str, u64)], gth: u64) -> PartRow {
        PartRow {
            kind: kind.to_string(),
            instances: n,
            module: module.to_string(),
            cells: cells(c),
            gth,
        }
    }

    #[test]
    fn parts_sum_with_instances_and_glue() {
        let rows = vec![
            row("iu", 1, "m0", &[("LUT6", 10), ("FDRE", 4)], 0),
            row("iu", 1, "m1", &[("LUT6", 12), ("FDRE", 4)], 0),
            row("link_tx", 6, "lt", &[("LUT3", 100), ("RAMB36E2", 1)], 1),
        ];
        let (parts, total) = parts_of("node", "Yosys", rows, Some(cells(&[("LUT2", 3)])));
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0].name, "link_tx");
        assert_eq!(
            (parts[0].instances, parts[0].res.lut, parts[0].res.gth),
            (6, 600, 6)
        );
        assert_eq!(parts[0].res.bram36, 6.0);
        assert_eq!(
            (parts[1].name.as_str(), parts[1].instances, parts[1].res.lut),
            ("iu", 2, 22)
        );
        assert_eq!(parts[1].modules, vec!["m0", "m1"]);
        assert_eq!(parts[2].name, "(glue)");
        assert_eq!((total.lut, total.ff, total.gth), (625, 8, 6));
        let node = SynthResult {
            top: "node (composed)".into(),
            breakdown: Some(Box::new(Breakdown {
                method: "composed".into(),
                level: "node".into(),
                parts,
                total: total.clone(),
            })),
            ..total
        };
        let t = breakdown_table(&node, None);
        assert!(
            t.contains("link_tx") && t.contains("(glue)") && t.contains("total"),
            "{t}"
        );
        assert!(
            t.lines()
                .any(|l| l.starts_with("link_tx") && l.contains(" 600 ")),
            "{t}"
        );
        let flat = SynthResult {
            lut: 600,
            ..node.clone()
        };
        assert!(breakdown_table(&node, Some(&flat)).contains("+25 LUT"));
    }

    #[test]
    fn node_goal_prints_the_gap() {
        let mut r = classify("node", "node (composed)", "Yosys", BTreeMap::new());
        r.lut = 70_000;
        let g = node_goal(&r);
        assert!(g.contains("68520") && g.contains("OVER by 1480 LUT"), "{g}");
        r.lut = 60_000;
        assert!(node_goal(&r).contains("met, 8520 LUT to spare"));
    }

    fn path(levels: u32) -> logic_depth::Path {
        logic_depth::Path {
            lut_levels: levels,
            carry_cells: 1,
            wide_muxes: 0,
            from: "a_q".into(),
            to: "b_q (FDRE.D)".into(),
            through: Vec::new(),
        }
    }

    #[test]
    fn depth_over_budget_is_flagged() {
        let mut ok = classify("a", "exanet_a", "Yosys", BTreeMap::new());
        ok.depth = Some(Depth {
            reg_to_reg: Some(path(9)),
            ..Default::default()
        });
        let mut deep = classify("b", "exanet_b", "Yosys", BTreeMap::new());
        deep.depth = Some(Depth {
            reg_to_reg: Some(path(4)),
            in_to_out: Some(path(12)),
            ..Default::default()
        });
        let rs = [ok, deep];
        assert_eq!(
            over_budget(&rs, 156.25),
            vec![("exanet_b".to_string(), "in->out", 12)]
        );
        // At 250 MHz the budget is 5 levels: the 9-level path is over too.
        assert_eq!(over_budget(&rs, 250.0).len(), 2);
        let t = depth_table(&rs, 156.25);
        assert!(
            t.contains("9 LUT levels") && t.contains("0.6 ns per level"),
            "{t}"
        );
        let row = |top: &str| t.lines().find(|l| l.starts_with(top)).unwrap().to_string();
        assert!(row("exanet_a").ends_with("ok"), "{t}");
        assert!(row("exanet_b").ends_with("OVER"), "{t}");
        assert!(row("exanet_a").contains("9+1c0m"), "{t}");
        assert!(t.contains("exanet_a: a_q -> b_q (FDRE.D)"), "{t}");
    }
}
