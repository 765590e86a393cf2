//! Merging a sweep's task outputs into `results.csv`, `results.json`,
//! `timing.csv`, the plots and `index.html`.

use super::*;
use crate::plot;
use crate::results::result_fields;

/// The header and rows of `results.csv`.
pub fn table(plan: &Plan, rows: &[Row]) -> (Vec<String>, Vec<Vec<String>>) {
    let classes = rows
        .iter()
        .map(|r| r.result.per_class.len())
        .max()
        .unwrap_or(1);
    let mut header: Vec<String> = vec!["task".into(), "series".into()];
    header.extend(plan.vary_keys.iter().filter(|k| *k != RATE_KEY).cloned());
    if plan.vary_keys.iter().any(|k| k == RATE_KEY) || plan.search.is_some() {
        header.push(RATE_KEY.into());
    }
    let keyed = header.len();
    header.extend(RESULT_COLUMNS.iter().map(|s| s.to_string()));
    if classes > 1 {
        for c in 0..classes {
            for f in ["accepted_flits", "latency_avg_cycles", "latency_p99_cycles"] {
                header.push(format!("class{c}_{f}"));
            }
        }
    }
    let body = rows
        .iter()
        .map(|r| {
            let mut line = vec![r.task.to_string(), r.series.clone()];
            for k in &header[2..keyed] {
                line.push(
                    r.values
                        .iter()
                        .find(|(vk, _)| vk == k)
                        .map(|(_, v)| plain_value(v))
                        .unwrap_or_default(),
                );
            }
            line.extend(result_fields(&r.result));
            if classes > 1 {
                for c in 0..classes {
                    match r.result.per_class.get(c) {
                        Some(f) => {
                            line.push(format!("{:.6}", f.accepted_flits));
                            line.push(format!("{:.3}", f.latency_cycles.avg));
                            line.push(f.latency_cycles.p99.to_string());
                        }
                        None => line.extend([String::new(), String::new(), String::new()]),
                    }
                }
            }
            line
        })
        .collect();
    (header, body)
}

/// Merge the task outputs of the sweep in `dir` into results and plots.
/// Results and plots an earlier collect wrote are replaced; a file exanet
/// did not write, or an edited one, is refused (or backed up with `force`).
pub fn collect(dir: &Path, force: bool) -> Result<Collected> {
    let plan = read_plan(dir)?;
    let mut rows = Vec::new();
    let mut timing = String::from("task,point,rate,wall_s,router_cycles_per_s\n");
    let mut missing = Vec::new();
    for t in &plan.tasks {
        let p = dir.join(task_file(t.id));
        let text = match std::fs::read_to_string(&p) {
            Ok(x) => x,
            Err(_) => {
                missing.push(t.id);
                continue;
            }
        };
        // tasks write their file whole (write, then rename): one that does
        // not parse was edited or damaged, a mistake in the folder (exit 2)
        let out: TaskOutput = serde_json::from_str(&text).map_err(|e| {
            usage(format!(
                "{}: not a task result of `exanet sweep` ({e}); delete it and run the task again \
                 (`exanet sweep task {} {}`)",
                p.display(),
                dir.display(),
                t.id
            ))
        })?;
        if out.task != t.id {
            return Err(usage(format!(
                "{} holds task {}, not {}",
                p.display(),
                out.task,
                t.id
            )));
        }
        for (i, r) in out.rows.into_iter().enumerate() {
            let _ = writeln!(
                timing,
                "{},{i},{},{:.3},{:.0}",
                t.id, r.result.rate, r.result.wall_s, r.result.router_cycles_per_s
            );
            rows.push(r);
        }
    }
    let missing_text = (!missing.is_empty()).then(|| {
        let shown: Vec<String> = missing.iter().take(10).map(|m| m.to_string()).collect();
        format!(
            "{} of {} task(s) have no results yet ({}{}): run them (`exanet sweep task {} ID`, \
             or see {}/logs/ for failed Slurm tasks) and collect again",
            missing.len(),
            plan.tasks.len(),
            shown.join(", "),
            if missing.len() > 10 { ", ..." } else { "" },
            dir.display(),
            dir.display()
        )
    });
    match &missing_text {
        // Nothing to merge: say what to do.
        Some(m) if rows.is_empty() => return Err(usage(format!("{}: {m}", dir.display()))),
        // Merge what finished; the report and the caller say what is missing.
        Some(m) => eprintln!("warning: {}: partial results: {m}", dir.display()),
        None => {}
    }
    let series = summarize(&rows);
    let (header, body) = table(&plan, &rows);
    let mut csv_text = header.iter().map(|h| csv(h)).collect::<Vec<_>>().join(",") + "\n";
    for line in &body {
        csv_text += &(line.iter().map(|f| csv(f)).collect::<Vec<_>>().join(",") + "\n");
    }
    let mut writes: Vec<(String, Vec<u8>)> = Vec::new();
    let mut put = |name: &str, text: &str| -> Result<()> {
        writes.push((name.to_string(), text.as_bytes().to_vec()));
        Ok(())
    };
    put("results.csv", &csv_text)?;
    put("timing.csv", &timing)?;
    // results.json: deterministic, so the timing fields go to timing.csv only
    let mut json_rows = serde_json::to_value(&rows)?;
    if let Some(a) = json_rows.as_array_mut() {
        for r in a {
            if let Some(res) = r.get_mut("result").and_then(|x| x.as_object_mut()) {
                res.remove("wall_s");
                res.remove("router_cycles_per_s");
                if let Some(j) = res.get_mut("jobs").and_then(|x| x.as_object_mut()) {
                    j.remove("wall_s");
                }
            }
        }
    }
    let json = serde_json::json!({
        "name": plan.name,
        "sweep_file": plan.sweep_file,
        "vary_keys": plan.vary_keys,
        "series_keys": plan.series_keys,
        "search": plan.search,
        "series": series,
        "rows": json_rows,
    });
    put(
        "results.json",
        &(serde_json::to_string_pretty(&json)? + "\n"),
    )?;
    let plots = if !rows.is_empty() && rows.iter().all(|r| r.result.jobs.is_some()) {
        crate::plot_studies::jobs_plots(&plan.name, &rows)
    } else if !rows.is_empty() && rows.iter().all(|r| r.result.pattern == "qos") {
        let mut p = plot::sweep_plots(&plan.name, &rows, &series);
        p.push(crate::plot_studies::class_p99_plot(&plan.name, &rows));
        p
    } else {
        plot::sweep_plots(&plan.name, &rows, &series)
    };
    for (file, svg) in &plots {
        put(file, svg)?;
    }
    put(
        "index.html",
        &index_html(
            &plan,
            &series,
            &header,
            &body,
            &plots,
            missing_text.as_deref(),
        ),
    )?;
    let mut out = OutDir::claim(dir, "exanet sweep", force)?;
    out.write_all(&writes)?;
    let files = writes.iter().map(|(rel, _)| out.path(rel)).collect();
    report_backups(&out);
    out.commit()?;
    Ok(Collected {
        rows: rows.len(),
        series,
        files,
    })
}

fn index_html(
    plan: &Plan,
    series: &[SeriesSummary],
    header: &[String],
    body: &[Vec<String>],
    plots: &[(String, String)],
    missing: Option<&str>,
) -> String {
    let mut h = String::new();
    let title = format!("exanet sweep: {}", plan.name);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n<style>\n\
         body {{ font-family: sans-serif; margin: 2em; color: #222; }}\n\
         table {{ border-collapse: collapse; font-size: 13px; }}\n\
         th, td {{ border: 1px solid #ccc; padding: 3px 6px; text-align: right; }}\n\
         th {{ background: #f0f0f0; position: sticky; top: 0; }}\n\
         td.l, th.l {{ text-align: left; }}\n\
         tr.sat td {{ color: #a00; }}\n\
         img {{ max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0; }}\n\
         .wide {{ overflow-x: auto; max-height: 40em; }}\n\
         </style>\n</head>\n<body>\n<h1>{t}</h1>\n",
        t = html(&title)
    );
    let mode = match &plan.search {
        Some(s) => format!(
            "saturation search on {RATE_KEY} in [{}, {}] with {} bisection steps",
            s.lo, s.hi, s.steps
        ),
        None => "fixed values".to_string(),
    };
    let _ = write!(
        h,
        "<p>Sweep <code>{}</code> (file <code>{}</code>): {} task(s), {} simulation(s), {} series; varied: {}; {}.\n\
         Load is in flits per terminal per cycle (and Gb/s per terminal at each config's clock and flit width);\n\
         latency is from packet creation to its tail delivered. A point is <em>saturated</em> when it accepts\n\
         less than 95&nbsp;% of the offered load, refuses more than 1&nbsp;% of its packets at full source queues, or leaves packets undelivered. Data: \
         <a href=\"results.csv\">results.csv</a>, <a href=\"results.json\">results.json</a>, \
         <a href=\"timing.csv\">timing.csv</a>.</p>\n",
        html(&plan.name),
        // The file's name only: the report may be read on another machine.
        html(
            &Path::new(&plan.sweep_file)
                .file_name()
                .map_or(plan.sweep_file.clone(), |f| f.to_string_lossy().into_owned())
        ),
        plan.tasks.len(),
        body.len(),
        series.len(),
        html(&plan.vary_keys.join(", ")),
        html(&mode)
    );
    if let Some(m) = missing {
        let _ = writeln!(h, "<p><strong>Partial results:</strong> {}.</p>", html(m));
    }
    for (file, _) in plots {
        let _ = writeln!(h, "<p><img src=\"{file}\" alt=\"{file}\"></p>");
    }
    let _ = write!(
        h,
        "<h2>Saturation per series</h2>\n<table>\n<tr><th class=\"l\">series</th><th>points</th>\
         <th>saturation load<br>(flits/terminal/cycle)</th><th>saturation throughput<br>(flits/terminal/cycle)</th>\
         <th>(Gb/s per terminal)</th><th>zero-load latency<br>(cycles)</th></tr>\n"
    );
    for s in series {
        let load = match (s.saturation_load, s.reached) {
            (Some(l), true) => format!("{l:.4}"),
            (Some(l), false) => format!("&ge; {l:.4} (not reached)"),
            (None, _) => "below the lowest point".to_string(),
        };
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{load}</td><td>{:.4}</td><td>{:.2}</td><td>{:.1}</td></tr>",
            html(&s.series),
            s.points,
            s.saturation_throughput,
            s.saturation_gbps,
            s.zero_load_cycles
        );
    }
    let _ = write!(
        h,
        "</table>\n<h2>All results</h2>\n<div class=\"wide\"><table>\n<tr>"
    );
    let sat_col = header.iter().position(|c| c == "saturated");
    for c in header {
        let _ = write!(h, "<th>{}</th>", html(c));
    }
    h.push_str("</tr>\n");
    for line in body {
        let sat = sat_col.is_some_and(|i| line[i] == "true");
        let _ = write!(h, "<tr{}>", if sat { " class=\"sat\"" } else { "" });
        for (i, f) in line.iter().enumerate() {
            let cls = if i == 1 || f.parse::<f64>().is_err() {
                " class=\"l\""
            } else {
                ""
            };
            let _ = write!(h, "<td{cls}>{}</td>", html(f));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table></div>\n</body>\n</html>\n");
    h
}

/// CSV field: quoted when it holds a comma, quote or newline.
fn csv(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_commas_and_quotes() {
        assert_eq!(csv("a,b"), "\"a,b\"");
        assert_eq!(csv("x\"y"), "\"x\"\"y\"");
        assert_eq!(csv("plain"), "plain");
    }
}
