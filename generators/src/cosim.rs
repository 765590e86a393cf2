//! `exanet cosim`: a block's RTL against its golden model, per parameter point.
//!
//! The lockstep loop and the benches live in `exanet-tb`; this module picks
//! the points to run and turns the CLI's flags into `CosimOptions`.

use crate::error::usage;
use crate::generate::Manifest;
use anyhow::Result;
use exanet_tb::blocks;
use exanet_tb::blocks::network::{self, NetworkBench};
use exanet_tb::blocks::node::{self, NodeBench};
use exanet_tb::blocks::node_pair::{self, NodePairBench};
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

/// One bench to run; the network bench also reports scoreboard figures.
pub enum CosimItem {
    Block(Box<dyn Bench>),
    Network(Box<NetworkBench>),
    NodePair(Box<NodePairBench>),
    Node(Box<NodeBench>),
}

impl CosimItem {
    /// The bench.
    pub fn bench(&mut self) -> &mut dyn Bench {
        match self {
            CosimItem::Block(b) => b.as_mut(),
            CosimItem::Network(b) => b.as_mut(),
            CosimItem::NodePair(b) => b.as_mut(),
            CosimItem::Node(b) => b.as_mut(),
        }
    }

    /// An extra summary line after run `r` (the network's scoreboard
    /// figures, and its speed, too slow for the summary's M cycles/s).
    pub fn figures(&self, r: &CosimReport) -> Option<String> {
        match self {
            CosimItem::Block(_) => None,
            CosimItem::Network(b) => Some(format!(
                "  {} ({:.0} cycles/s)",
                b.coverage().summary(),
                r.cycles_per_sec
            )),
            CosimItem::NodePair(b) => Some(format!(
                "  {:?}\n  {} ({:.0} cycles/s)",
                b.coverage(),
                b.figures().summary(),
                r.cycles_per_sec
            )),
            CosimItem::Node(b) => Some(format!(
                "  {:?}\n  ({:.0} PL cycles of node 0 per second)",
                b.coverage(),
                r.cycles_per_sec
            )),
        }
    }
}

/// The benches to run for `exanet cosim BLOCK [--point P] [--dims AxBxC]`:
/// `--dims` (network only) sets the point's `dims` key; `network` benches
/// report scoreboard figures.
pub fn items(block: &str, point: Option<&str>, dims: Option<&str>) -> Result<Vec<CosimItem>> {
    if block == "node-pair" && dims.is_none() {
        let texts: Vec<String> = match point {
            Some(p) => vec![p.to_string()],
            None => node_pair::matrix_points()
                .iter()
                .map(|s| s.to_string())
                .collect(),
        };
        return texts
            .iter()
            .map(|t| {
                let p =
                    node_pair::parse_point(t).map_err(|e| usage(format!("--point {t}: {e:#}")))?;
                let b = NodePairBench::new(p).map_err(|e| usage(format!("--point {t}: {e:#}")))?;
                Ok(CosimItem::NodePair(Box::new(b)))
            })
            .collect();
    }
    if block == "node" {
        return node_items(point, dims);
    }
    if block != "network" {
        if dims.is_some() {
            return Err(usage(format!(
                "--dims applies to `exanet cosim network` and `node` only, not `{block}`"
            )));
        }
        return Ok(benches(block, point)?
            .into_iter()
            .map(CosimItem::Block)
            .collect());
    }
    let texts = point_texts(point, dims, network::matrix_points)?;
    texts
        .iter()
        .map(|t| {
            let what = if dims.is_some() && point.is_none() {
                format!("--dims {}", dims.unwrap_or_default())
            } else {
                format!("--point {t}")
            };
            let p = network::parse(t).map_err(|e| usage(format!("{what}: {e:#}")))?;
            let b = NetworkBench::from_point(p).map_err(|e| usage(format!("{what}: {e:#}")))?;
            Ok(CosimItem::Network(Box::new(b)))
        })
        .collect()
}

/// The point texts of a bench that takes `--dims`: `--point` with `dims`
/// from `--dims` added (refused when the point has its own), or the
/// default `matrix`.
fn point_texts(
    point: Option<&str>,
    dims: Option<&str>,
    matrix: impl FnOnce() -> Vec<String>,
) -> Result<Vec<String>> {
    Ok(match (point, dims) {
        (Some(p), Some(_))
            if exanet_sim::point::items(p)
                .map_err(|e| usage(format!("--point {p}: {e:#}")))?
                .iter()
                .any(|(k, _)| *k == "dims") =>
        {
            return Err(usage(format!(
                "--dims and a `dims` key in --point {p}: give the dimensions once"
            )));
        }
        (Some(p), Some(d)) => vec![format!("{p},dims={d}")],
        (None, Some(d)) => vec![format!("dims={d}")],
        (Some(p), None) => vec![p.to_string()],
        (None, None) => matrix(),
    })
}

/// The benches of `exanet cosim node [--point P] [--dims AxBxC]`: the
/// point (with `dims` from `--dims`), or the default matrix (2x1x1, 2x2x1).
fn node_items(point: Option<&str>, dims: Option<&str>) -> Result<Vec<CosimItem>> {
    let texts = point_texts(point, dims, || {
        node::matrix_points()
            .iter()
            .map(|s| s.to_string())
            .collect()
    })?;
    texts
        .iter()
        .map(|t| {
            let p = node::parse_point(t).map_err(|e| usage(format!("--point {t}: {e:#}")))?;
            let b = NodeBench::new(p).map_err(|e| usage(format!("--point {t}: {e:#}")))?;
            Ok(CosimItem::Node(Box::new(b)))
        })
        .collect()
}

/// The point text for `--ber B`: `point` (or the default point) with its
/// `ber` key set; only link benches, the node (every cable's PHY) and the
/// network (whose `--ber` means framed links: `links=framed` unless the
/// point sets `links`) have a PHY model.
pub fn ber_point(block: &str, point: Option<&str>, ber: f64) -> Result<String> {
    if !["link", "link_tx", "link_rx", "network", "node", "pcs66"].contains(&block) {
        return Err(usage(format!(
            "--ber applies to `exanet cosim link`, `link_tx`, `link_rx`, `network`, `node` and `pcs66` only, not `{block}`"
        )));
    }
    let items = match point {
        None => Vec::new(),
        Some(p) => exanet_sim::point::items(p).map_err(|e| usage(format!("--point {p}: {e:#}")))?,
    };
    if items.iter().any(|(k, _)| *k == "ber") {
        return Err(usage(format!(
            "--ber and a `ber` key in --point {}: give the bit error rate once",
            point.unwrap_or_default()
        )));
    }
    let framed = block == "network" && !items.iter().any(|(k, _)| *k == "links");
    let mut t = point.map(|p| format!("{p},")).unwrap_or_default();
    if framed {
        t.push_str("links=framed,");
    }
    t.push_str(&format!("ber={ber}"));
    Ok(t)
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
    fn dims_make_a_network_point_and_are_refused_elsewhere() {
        let mut v = items("network", None, Some("2x2x1")).unwrap();
        assert_eq!(v.len(), 1);
        assert!(v[0].bench().point().starts_with("dims=2x2x1,"));
        let r = CosimReport {
            block: "network".into(),
            point: v[0].bench().point(),
            cycles: 0,
            mismatches: 0,
            first: None,
            seed: 1,
            waveform: None,
            cycles_per_sec: 1234.4,
            cpu_cycles_per_sec: 1234.4,
        };
        let f = v[0].figures(&r).unwrap();
        assert!(
            f.contains("delivered=0") && f.contains("(1234 cycles/s)"),
            "{f}"
        );
        let v = items("network", Some("link_latency=2"), Some("3x1x1")).unwrap();
        assert_eq!(v.len(), 1);
        let e = items("network", Some("dims=2x2x2"), Some("3x1x1"))
            .err()
            .unwrap();
        assert!(
            crate::error::is_usage(&e) && format!("{e}").contains("once"),
            "{e}"
        );
        let e = items("network", None, Some("4x2")).err().unwrap();
        assert!(
            crate::error::is_usage(&e) && format!("{e}").contains("--dims 4x2"),
            "{e}"
        );
        let e = items("fifo", None, Some("4x2x2")).err().unwrap();
        assert!(
            crate::error::is_usage(&e)
                && format!("{e}").contains("`exanet cosim network` and `node` only"),
            "{e}"
        );
        assert_eq!(
            items("network", None, None).unwrap().len(),
            network::matrix_points().len()
        );
    }

    #[test]
    fn node_points_from_dims_ber_and_the_matrix() {
        let mut v = items("node", None, Some("2x2x1")).unwrap();
        assert_eq!(v.len(), 1);
        assert!(v[0].bench().point().starts_with("dims=2x2x1,"));
        assert_eq!(v[0].bench().block(), "node");
        assert_eq!(
            items("node", None, None).unwrap().len(),
            node::matrix_points().len()
        );
        let t = ber_point("node", Some("dims=2x1x1"), 1e-5).unwrap();
        assert_eq!(t, "dims=2x1x1,ber=0.00001");
        let mut v = items("node", Some(&t), None).unwrap();
        assert!(v[0].bench().point().contains("ber=0.00001"));
        let e = items("node", Some("dims=2x1x1"), Some("2x2x1"))
            .err()
            .unwrap();
        assert!(
            crate::error::is_usage(&e) && format!("{e}").contains("once"),
            "{e}"
        );
        let e = items("node", Some("phy_latency=0"), None).err().unwrap();
        assert!(
            crate::error::is_usage(&e) && format!("{e:#}").contains("latency"),
            "{e:#}"
        );
        let e = items("node", None, Some("1x1x1")).err().unwrap();
        assert!(
            crate::error::is_usage(&e) && format!("{e:#}").contains("dims"),
            "{e:#}"
        );
    }

    #[test]
    fn ber_sets_the_link_point_and_is_refused_elsewhere() {
        assert_eq!(ber_point("link_rx", None, 1e-5).unwrap(), "ber=0.00001");
        let t = ber_point("link_rx", Some("vcs=2"), 1e-6).unwrap();
        let v = items("link_rx", Some(&t), None).unwrap();
        assert!(v.len() == 1, "one point");
        let e = ber_point("fifo", None, 1e-5).err().unwrap();
        assert!(
            crate::error::is_usage(&e) && format!("{e}").contains("link_rx"),
            "{e}"
        );
        let t = ber_point("link", Some("vcs=2"), 1e-4).unwrap();
        assert_eq!(t, "vcs=2,ber=0.0001");
        let v = items("link", Some("ber=0.0001,vcs=2"), None).unwrap();
        assert!(v.len() == 1, "one link point");
        let e = ber_point("link_rx", Some("ber=0.1"), 1e-5).err().unwrap();
        assert!(format!("{e}").contains("once"), "{e}");
        // the network: --ber means framed links, with --dims
        let t = ber_point("network", None, 1e-5).unwrap();
        assert_eq!(t, "links=framed,ber=0.00001");
        let v = items("network", Some(&t), Some("2x2x1")).unwrap();
        assert_eq!(v.len(), 1);
        let CosimItem::Network(b) = &v[0] else {
            panic!("a network bench")
        };
        let pt = b.point();
        assert!(
            pt.contains("dims=2x2x1") && pt.contains("links=framed") && pt.contains("ber=0.00001"),
            "{pt}"
        );
        let t = ber_point("network", Some("links=ideal"), 1e-5).unwrap();
        let e = items("network", Some(&t), None).err().unwrap();
        assert!(
            crate::error::is_usage(&e)
                && format!("{e}").contains("`ber`")
                && format!("{e}").contains("framed"),
            "{e}"
        );
    }

    #[test]
    fn unknown_block_is_a_usage_error() {
        let e = benches("nosuch", None).err().unwrap();
        assert!(crate::error::is_usage(&e));
        assert!(format!("{e}").contains("known blocks"), "{e}");
    }
}
