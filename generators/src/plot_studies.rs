//! The sweep report's charts of the architect's studies, against the last
//! numeric varied key (e.g. `jobs.node_mtbf_s`, `qos.storage_rate`), one
//! curve per combination of the other varied keys (e.g. `jobs.placement`);
//! without a numeric varied key the points are numbered in sweep order:
//! * job batches (`traffic.pattern = "jobs"`): batch completion time and
//!   aborted-run ratio ([`jobs_plots`]);
//! * the QoS mix (`traffic.pattern = "qos"`): p99 latency per priority
//!   class ([`class_p99_plot`]).
//!
//! Kept apart from [`crate::plot`] (its colours and styles are reused
//! through [`crate::plot::xy_chart`]).

use crate::plot::{xy_chart, Curve};
use crate::results::Row;

/// The varied key the x axis shows: the last one whose values are all numbers.
fn x_key(rows: &[Row]) -> Option<String> {
    let keys: Vec<String> = rows
        .first()?
        .values
        .iter()
        .map(|(k, _)| k.clone())
        .collect();
    keys.into_iter().rev().find(|k| {
        rows.iter().all(|r| {
            r.values
                .iter()
                .find(|(kk, _)| kk == k)
                .is_some_and(|(_, v)| v.parse::<f64>().is_ok())
        })
    })
}

/// Curves of `f` per combination of the varied keys other than the x key.
fn curves(rows: &[Row], x: Option<&str>, f: impl Fn(&Row) -> Option<f64>) -> Vec<Curve> {
    let mut out: Vec<Curve> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let label: Vec<String> = r
            .values
            .iter()
            .filter(|(k, _)| Some(k.as_str()) != x)
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    k.rsplit('.').next().unwrap_or(k),
                    v.trim_matches('"')
                )
            })
            .collect();
        let label = if label.is_empty() {
            "all".to_string()
        } else {
            label.join(", ")
        };
        let xv = match x {
            Some(k) => r
                .values
                .iter()
                .find(|(kk, _)| kk == k)
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(0.0),
            None => (i + 1) as f64,
        };
        let Some(y) = f(r) else { continue };
        match out.iter_mut().find(|c| c.0 == label) {
            Some(c) => c.1.push((xv, y)),
            None => out.push((label, vec![(xv, y)])),
        }
    }
    for c in &mut out {
        c.1.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// `jobs-completion.svg` and `jobs-aborted.svg` of the sweep `name`.
pub fn jobs_plots(name: &str, rows: &[Row]) -> Vec<(String, String)> {
    let x = x_key(rows);
    let xl = x.clone().unwrap_or_else(|| "sweep point".into());
    let completion = curves(rows, x.as_deref(), |r| {
        r.result.jobs.as_ref().map(|j| j.completion_s)
    });
    let aborted = curves(rows, x.as_deref(), |r| {
        r.result.jobs.as_ref().map(|j| j.aborted_ratio)
    });
    vec![
        (
            "jobs-completion.svg".into(),
            xy_chart(
                &format!("{name}: batch completion time"),
                "job-batch study (traffic.pattern = jobs), flow-level time model",
                (&xl, "batch completion (s)"),
                false,
                &completion,
                None,
            ),
        ),
        (
            "jobs-aborted.svg".into(),
            xy_chart(
                &format!("{name}: aborted runs"),
                "aborted runs / runs started (node failures and dead links)",
                (&xl, "aborted ratio"),
                false,
                &aborted,
                None,
            ),
        ),
    ]
}

/// `class-p99.svg`: p99 latency (cycles) of each priority class.
pub fn class_p99_plot(name: &str, rows: &[Row]) -> (String, String) {
    let x = x_key(rows);
    let xl = x.clone().unwrap_or_else(|| "sweep point".into());
    let mut all: Vec<Curve> = Vec::new();
    for class in 0..2usize {
        let c = curves(rows, x.as_deref(), |r| {
            r.result
                .per_class
                .iter()
                .find(|f| f.class == Some(class) && f.packets > 0)
                .map(|f| f.latency_cycles.p99 as f64)
        });
        for (label, pts) in c {
            let label = if label == "all" {
                format!("class {class}")
            } else {
                format!("class {class}, {label}")
            };
            all.push((label, pts));
        }
    }
    (
        "class-p99.svg".into(),
        xy_chart(
            &format!("{name}: p99 latency per class"),
            "creation to tail delivered; class 1 has strict priority over class 0",
            (&xl, "p99 latency (cycles)"),
            false,
            &all,
            None,
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::JobsResult;
    use crate::simulate::SimResult;

    fn row(placement: &str, mtbf: &str, t: f64, a: f64) -> Row {
        Row {
            task: 0,
            series: String::new(),
            values: vec![
                ("jobs.placement".into(), format!("{placement:?}")),
                ("jobs.node_mtbf_s".into(), mtbf.into()),
            ],
            result: SimResult {
                jobs: Some(JobsResult {
                    name: "t".into(),
                    dims: [8, 4, 4],
                    profile: "halo".into(),
                    placement: placement.into(),
                    queue: "fcfs".into(),
                    seed: 1,
                    jobs: 1,
                    completed: 1,
                    given_up: 0,
                    runs: 1,
                    aborted_node: 0,
                    aborted_link: 0,
                    aborted_ratio: a,
                    completion_s: t,
                    mean_bytes_hops: 1.0,
                    mean_run_s: 1.0,
                    node_failures: 0,
                    link_failures: 0,
                    wall_s: 0.0,
                    runs_log: vec![],
                }),
                ..SimResult::default()
            },
        }
    }

    #[test]
    fn one_curve_per_placement_against_the_numeric_key() {
        let rows = vec![
            row("linear", "200", 3.0, 0.2),
            row("linear", "100", 4.0, 0.3),
            row("failure", "200", 2.0, 0.1),
            row("failure", "100", 2.5, 0.15),
        ];
        assert_eq!(x_key(&rows).as_deref(), Some("jobs.node_mtbf_s"));
        let c = curves(&rows, Some("jobs.node_mtbf_s"), |r| {
            r.result.jobs.as_ref().map(|j| j.completion_s)
        });
        assert_eq!(
            c,
            vec![
                (
                    "placement=linear".to_string(),
                    vec![(100.0, 4.0), (200.0, 3.0)]
                ),
                (
                    "placement=failure".to_string(),
                    vec![(100.0, 2.5), (200.0, 2.0)]
                ),
            ]
        );
        let p = jobs_plots("s", &rows);
        assert_eq!(p[0].0, "jobs-completion.svg");
        assert!(
            p[0].1.contains("failure") && p[0].1.contains("linear"),
            "{}",
            p[0].1
        );
        assert!(p[1].1.contains("aborted ratio"));
    }

    #[test]
    fn one_p99_curve_per_class() {
        use crate::simulate::Figures;
        let row = |rate: &str, p0: u64, p1: u64| Row {
            task: 0,
            series: String::new(),
            values: vec![("qos.storage_rate".into(), rate.into())],
            result: SimResult {
                per_class: [p0, p1]
                    .iter()
                    .enumerate()
                    .map(|(c, &p)| {
                        let mut f = Figures {
                            class: Some(c),
                            packets: 10,
                            ..Figures::default()
                        };
                        f.latency_cycles.p99 = p;
                        f
                    })
                    .collect(),
                ..SimResult::default()
            },
        };
        let rows = vec![row("0.4", 900, 300), row("0.2", 400, 200)];
        let (file, svg) = class_p99_plot("q", &rows);
        assert_eq!(file, "class-p99.svg");
        assert!(svg.contains("class 0") && svg.contains("class 1"), "{svg}");
        let c = curves(&rows, Some("qos.storage_rate"), |r| {
            Some(r.result.per_class[1].latency_cycles.p99 as f64)
        });
        assert_eq!(
            c,
            vec![("all".to_string(), vec![(0.2, 200.0), (0.4, 300.0)])]
        );
    }
}
