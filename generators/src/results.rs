//! The rows of a sweep's results and their summaries per series: what
//! `results.csv`, `results.json`, the plots and the page are made of. Shared
//! by the sweep (which produces them) and the plots (which draw them).

use crate::simulate::SimResult;
use serde::{Deserialize, Serialize};

/// One simulation of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub task: usize,
    pub series: String,
    /// The varied keys' values (TOML text); with a search, `traffic.rate` too.
    pub values: Vec<(String, String)>,
    pub result: SimResult,
}

/// One curve's summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesSummary {
    pub series: String,
    pub points: usize,
    /// Highest offered load (flits/terminal/cycle) of a point that was not saturated.
    pub saturation_load: Option<f64>,
    /// Highest accepted load of the series (flits/terminal/cycle) and in Gb/s per terminal.
    pub saturation_throughput: f64,
    pub saturation_gbps: f64,
    /// Whether some point saturated (else the saturation load is only a lower bound).
    pub reached: bool,
    /// Zero-load latency estimate of the lowest-load point, cycles.
    pub zero_load_cycles: f64,
    /// Job-batch study series: mean batch completion time (s) and aborted-run ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<(f64, f64)>,
}

/// The fixed result columns of `results.csv` after `task`, `series` and the varied keys.
pub const RESULT_COLUMNS: [&str; 37] = [
    "pattern",
    "rate",
    "offered_flits",
    "accepted_flits",
    "offered_gbps",
    "accepted_gbps",
    "latency_avg_cycles",
    "latency_p50_cycles",
    "latency_p99_cycles",
    "latency_max_cycles",
    "latency_avg_ns",
    "latency_p99_ns",
    "network_latency_avg_cycles",
    "zero_load_cycles",
    "hops",
    "packets",
    "refused",
    "unfinished",
    "saturated",
    "clean",
    "nodes",
    "flit_bits",
    "clock_mhz",
    "seed",
    "measure",
    "link_flits_mean",
    "link_goodput_gbps_mean",
    "link_goodput_pct",
    "link_crc_errors",
    "link_retransmissions",
    "link_downs",
    // The job-batch study (traffic.pattern = "jobs"; empty otherwise).
    "jobs_placement",
    "batch_completion_s",
    "aborted_ratio",
    "jobs_given_up",
    "bytes_hops_mean",
    "job_run_mean_s",
];

pub(crate) fn result_fields(r: &SimResult) -> Vec<String> {
    let t = &r.total;
    vec![
        r.pattern.clone(),
        format!("{}", r.rate),
        format!("{:.6}", t.offered_flits),
        format!("{:.6}", t.accepted_flits),
        format!("{:.4}", t.offered_gbps),
        format!("{:.4}", t.accepted_gbps),
        format!("{:.3}", t.latency_cycles.avg),
        t.latency_cycles.p50.to_string(),
        t.latency_cycles.p99.to_string(),
        t.latency_cycles.max.to_string(),
        format!("{:.2}", t.latency_ns.avg),
        format!("{:.2}", t.latency_ns.p99),
        format!("{:.3}", t.network_latency_cycles.avg),
        format!("{:.3}", r.zero_load_cycles),
        format!("{:.4}", t.hops),
        t.packets.to_string(),
        t.refused.to_string(),
        r.unfinished.to_string(),
        r.saturated.to_string(),
        r.clean.to_string(),
        r.dims
            .iter()
            .map(|&d| u64::from(d))
            .product::<u64>()
            .to_string(),
        r.flit_bits.to_string(),
        format!("{}", r.clock_mhz),
        r.seed.to_string(),
        r.measure.to_string(),
        // Framed links only (empty with ideal wires).
        r.links
            .as_ref()
            .map_or(String::new(), |l| format!("{:.6}", l.flits_mean)),
        r.links
            .as_ref()
            .map_or(String::new(), |l| format!("{:.4}", l.goodput_gbps_mean)),
        r.links.as_ref().map_or(String::new(), |l| {
            format!(
                "{:.2}",
                100.0 * l.goodput_gbps_mean / l.line_gbps.max(1e-12)
            )
        }),
        r.links
            .as_ref()
            .map_or(String::new(), |l| l.crc_errors.to_string()),
        r.links
            .as_ref()
            .map_or(String::new(), |l| l.retransmissions.to_string()),
        r.links
            .as_ref()
            .map_or(String::new(), |l| l.link_downs.to_string()),
        r.jobs
            .as_ref()
            .map_or(String::new(), |j| j.placement.clone()),
        r.jobs
            .as_ref()
            .map_or(String::new(), |j| format!("{:.6}", j.completion_s)),
        r.jobs
            .as_ref()
            .map_or(String::new(), |j| format!("{:.4}", j.aborted_ratio)),
        r.jobs
            .as_ref()
            .map_or(String::new(), |j| j.given_up.to_string()),
        r.jobs
            .as_ref()
            .map_or(String::new(), |j| format!("{:.4e}", j.mean_bytes_hops)),
        r.jobs
            .as_ref()
            .map_or(String::new(), |j| format!("{:.6}", j.mean_run_s)),
    ]
}

/// Summaries per series, in order of first appearance.
pub fn summarize(rows: &[Row]) -> Vec<SeriesSummary> {
    let mut order: Vec<String> = Vec::new();
    for r in rows {
        if !order.contains(&r.series) {
            order.push(r.series.clone());
        }
    }
    order
        .into_iter()
        .map(|name| {
            let mut pts: Vec<&SimResult> = rows
                .iter()
                .filter(|r| r.series == name)
                .map(|r| &r.result)
                .collect();
            pts.sort_by(|a, b| a.total.offered_flits.total_cmp(&b.total.offered_flits));
            let best = pts
                .iter()
                .max_by(|a, b| a.total.accepted_flits.total_cmp(&b.total.accepted_flits));
            SeriesSummary {
                series: name,
                points: pts.len(),
                saturation_load: pts
                    .iter()
                    .filter(|r| !r.saturated)
                    .map(|r| r.total.offered_flits)
                    .max_by(f64::total_cmp),
                saturation_throughput: best.map_or(0.0, |r| r.total.accepted_flits),
                saturation_gbps: best.map_or(0.0, |r| r.total.accepted_gbps),
                reached: pts.iter().any(|r| r.saturated),
                zero_load_cycles: pts.first().map_or(0.0, |r| r.zero_load_cycles),
                batch: (!pts.is_empty() && pts.iter().all(|r| r.jobs.is_some())).then(|| {
                    let n = pts.len() as f64;
                    let sum = |f: fn(&crate::jobs::JobsResult) -> f64| {
                        pts.iter()
                            .filter_map(|r| r.jobs.as_ref())
                            .map(f)
                            .sum::<f64>()
                            / n
                    };
                    (sum(|j| j.completion_s), sum(|j| j.aborted_ratio))
                }),
            }
        })
        .collect()
}
