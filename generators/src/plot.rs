//! Plain SVG charts of a sweep: latency vs offered load (log latency axis,
//! saturation marked), accepted vs offered load, and saturation throughput
//! per series. Every chart has a title, labelled axes with units, ticks and
//! a legend; no dependency beyond string formatting.

use crate::results::{Row, SeriesSummary};
use std::fmt::Write as _;

const W: f64 = 1000.0;
const H: f64 = 560.0;
/// Plot area: left, top, right, bottom edges.
const L: f64 = 80.0;
const T: f64 = 50.0;
const R: f64 = 660.0;
const B: f64 = 490.0;

/// Ten distinguishable colours, then repeated with a dash pattern.
const COLOURS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#bcbd22", "#7f7f7f",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn colour(i: usize) -> &'static str {
    COLOURS[i % COLOURS.len()]
}

fn dash(i: usize) -> &'static str {
    match (i / COLOURS.len()) % 3 {
        0 => "",
        1 => " stroke-dasharray=\"6 3\"",
        _ => " stroke-dasharray=\"2 2\"",
    }
}

/// "Nice" linear ticks covering `lo..=hi` (multiples of 1, 2, 2.5 or 5 x 10^e,
/// computed as integer / 10^-e so they print exactly).
fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let e = (span / 6.0).log10().floor() as i32;
    let scale = |x: f64| {
        if e < 0 {
            x / 10f64.powi(-e)
        } else {
            x * 10f64.powi(e)
        }
    };
    let m = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .find(|&m| span / scale(m) <= 7.0)
        .unwrap_or(10.0);
    let first = (lo / scale(m) - 1e-9).ceil() as i64;
    let last = (hi / scale(m) + 1e-9).floor() as i64;
    (first..=last).map(|k| scale(k as f64 * m)).collect()
}

/// 1-2-5 ticks of a log axis covering `lo..=hi` (both > 0).
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut v = Vec::new();
    let mut dec = 10f64.powf(lo.log10().floor());
    while dec <= hi * 1.0001 {
        for m in [1.0, 2.0, 5.0] {
            let x = m * dec;
            if x >= lo * 0.9999 && x <= hi * 1.0001 {
                v.push(x);
            }
        }
        dec *= 10.0;
    }
    v
}

/// The largest 1-2-5 value (x 10^k) <= `x` (> 0).
fn nice_below(x: f64) -> f64 {
    let dec = 10f64.powf(x.log10().floor());
    [5.0, 2.0, 1.0]
        .iter()
        .map(|m| m * dec)
        .find(|&v| v <= x * 1.0001)
        .unwrap_or(dec)
}

/// The smallest 1-2-5 value (x 10^k) >= `x` (> 0).
fn nice_above(x: f64) -> f64 {
    let dec = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * dec)
        .find(|&v| v >= x * 0.9999)
        .unwrap_or(10.0 * dec)
}

fn fmt_tick(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// One axis mapping.
#[derive(Clone, Copy)]
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Axis {
    fn frac(&self, v: f64) -> f64 {
        if self.log {
            (v.max(self.lo).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }
    fn x(&self, v: f64) -> f64 {
        L + self.frac(v) * (R - L)
    }
    fn y(&self, v: f64) -> f64 {
        B - self.frac(v) * (B - T)
    }
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            log_ticks(self.lo, self.hi)
        } else {
            linear_ticks(self.lo, self.hi)
        }
    }
}

fn header(svg: &mut String, title: &str, subtitle: &str) {
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" \
         font-family=\"Helvetica, Arial, sans-serif\">\n\
         <rect width=\"{W}\" height=\"{H}\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"18\" font-weight=\"bold\">{}</text>\n\
         <text x=\"{}\" y=\"42\" text-anchor=\"middle\" font-size=\"12\" fill=\"#555\">{}</text>\n",
        W / 2.0,
        esc(title),
        W / 2.0,
        esc(subtitle)
    );
}

fn axes(svg: &mut String, x: &Axis, y: &Axis, x_label: &str, y_label: &str) {
    // grid and ticks
    for v in y.ticks() {
        let py = y.y(v);
        let _ = writeln!(
            svg,
            "<line x1=\"{L}\" y1=\"{py:.1}\" x2=\"{R}\" y2=\"{py:.1}\" stroke=\"#e4e4e4\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"12\">{}</text>",
            L - 6.0,
            py + 4.0,
            fmt_tick(v)
        );
    }
    for v in x.ticks() {
        let px = x.x(v);
        let _ = writeln!(
            svg,
            "<line x1=\"{px:.1}\" y1=\"{T}\" x2=\"{px:.1}\" y2=\"{B}\" stroke=\"#e4e4e4\"/>\
             <text x=\"{px:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>",
            B + 18.0,
            fmt_tick(v)
        );
    }
    let _ = writeln!(
        svg,
        "<rect x=\"{L}\" y=\"{T}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n\
         <text class=\"xlabel\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n\
         <text class=\"ylabel\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"14\" \
         transform=\"rotate(-90 {} {})\">{}</text>",
        R - L,
        B - T,
        (L + R) / 2.0,
        B + 42.0,
        esc(x_label),
        L - 52.0,
        (T + B) / 2.0,
        L - 52.0,
        (T + B) / 2.0,
        esc(y_label)
    );
}

/// Legend entries: (label, colour index, extra kind).
enum Key {
    Series(String, usize),
    Note(String, String),
}

/// Series labels `k1=v1, k2=v2` sharing the same keys in the same order
/// (optionally after an `N: ` index) as a legend title `k1, k2` and entries
/// `v1, v2`, so long key names do not push the values out of the legend.
fn compact_labels(labels: &[&str]) -> Option<(String, Vec<String>)> {
    let mut keys: Option<Vec<&str>> = None;
    let mut out = Vec::new();
    for l in labels {
        let (prefix, body) = match l.split_once(": ") {
            Some((n, rest)) if n.chars().all(|c| c.is_ascii_digit()) => (Some(n), rest),
            _ => (None, *l),
        };
        let mut ks = Vec::new();
        let mut vs = Vec::new();
        for item in body.split(", ") {
            let (k, v) = item.split_once('=')?;
            ks.push(k);
            vs.push(v);
        }
        match &keys {
            None => keys = Some(ks),
            Some(prev) if *prev == ks => {}
            Some(_) => return None,
        }
        let values = vs.join(", ");
        out.push(match prefix {
            Some(n) => format!("{n}: {values}"),
            None => values,
        });
    }
    Some((keys?.join(", "), out))
}

fn legend(svg: &mut String, keys: &[Key]) {
    let x0 = R + 20.0;
    let labels: Vec<&str> = keys
        .iter()
        .filter_map(|k| match k {
            Key::Series(l, _) => Some(l.as_str()),
            Key::Note(..) => None,
        })
        .collect();
    let (title, mut compact) = match compact_labels(&labels) {
        Some((t, v)) => (t, Some(v.into_iter())),
        None => ("Legend".to_string(), None),
    };
    let _ = writeln!(
        svg,
        "<g class=\"legend\"><text x=\"{x0}\" y=\"{}\" font-size=\"13\" font-weight=\"bold\">{}</text>",
        T + 4.0,
        esc(&title)
    );
    let mut y = T + 24.0;
    for k in keys {
        match k {
            Key::Series(full, i) => {
                let label = compact
                    .as_mut()
                    .and_then(|c| c.next())
                    .unwrap_or_else(|| full.clone());
                let _ = write!(
                    svg,
                    "<line x1=\"{x0}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{}\" stroke-width=\"2\"{}/>",
                    x0 + 24.0,
                    colour(*i),
                    dash(*i),
                );
                // the series' own marker shape, as on the curve
                marker(svg, x0 + 12.0, y, *i, false);
                let _ = writeln!(
                    svg,
                    "<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>",
                    x0 + 30.0,
                    y + 4.0,
                    esc(&label)
                );
            }
            Key::Note(symbol_svg, text) => {
                let _ = writeln!(
                    svg,
                    "{}<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>",
                    symbol_svg
                        .replace("{x0}", &format!("{x0}"))
                        .replace("{x1}", &format!("{}", x0 + 24.0))
                        .replace("{x}", &format!("{}", x0 + 12.0))
                        .replace("{y}", &format!("{y}")),
                    x0 + 30.0,
                    y + 4.0,
                    esc(text)
                );
            }
        }
        y += 18.0;
        if y > H - 10.0 {
            break;
        }
    }
    svg.push_str("</g>\n");
}

/// Series points sorted by offered load: (offered, value, saturated).
fn points(rows: &[Row], series: &str, f: impl Fn(&Row) -> f64) -> Vec<(f64, f64, bool)> {
    let mut v: Vec<(f64, f64, bool)> = rows
        .iter()
        .filter(|r| r.series == series)
        .map(|r| (r.result.total.offered_flits, f(r), r.result.saturated))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

fn polyline(svg: &mut String, pts: &[(f64, f64)], i: usize) {
    let d: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let _ = writeln!(
        svg,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>",
        d.join(" "),
        colour(i),
        dash(i)
    );
}

/// A point of series `i`: a circle for the first ten series, then a square,
/// then a triangle (with the dash pattern of [`dash`], no two series of a
/// chart look alike); hollow when saturated.
fn marker(svg: &mut String, x: f64, y: f64, i: usize, hollow: bool) {
    let paint = if hollow {
        format!(
            "fill=\"white\" stroke=\"{}\" stroke-width=\"1.5\"",
            colour(i)
        )
    } else {
        format!("fill=\"{}\"", colour(i))
    };
    let _ = match (i / COLOURS.len()) % 3 {
        0 => writeln!(
            svg,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" {paint}/>"
        ),
        1 => writeln!(
            svg,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"7\" height=\"7\" {paint}/>",
            x - 3.5,
            y - 3.5
        ),
        _ => writeln!(
            svg,
            "<polygon points=\"{x:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" {paint}/>",
            y - 4.5,
            x - 4.0,
            y + 3.0,
            x + 4.0,
            y + 3.0
        ),
    };
}

/// The clock/flit conversion if every row shares it: "1 flit/terminal/cycle = X Gb/s".
fn gbps_note(rows: &[Row]) -> Option<f64> {
    let g = |r: &Row| f64::from(r.result.flit_bits) * r.result.clock_mhz / 1000.0;
    let first = g(rows.first()?);
    rows.iter()
        .all(|r| (g(r) - first).abs() < 1e-9)
        .then_some(first)
}

fn ns_note(rows: &[Row]) -> Option<f64> {
    let first = rows.first()?.result.clock_mhz;
    rows.iter()
        .all(|r| r.result.clock_mhz == first)
        .then_some(1000.0 / first)
}

/// Latency vs offered load, one curve per series, saturation marked.
pub fn latency_chart(name: &str, rows: &[Row], series: &[SeriesSummary]) -> String {
    let mut svg = String::new();
    header(
        &mut svg,
        &format!("Average packet latency vs offered load — {name}"),
        "one curve per series; hollow markers: saturated runs; ringed: saturation point (last load accepted in full)",
    );
    let lat: Vec<f64> = rows
        .iter()
        .map(|r| r.result.total.latency_cycles.avg)
        .filter(|&l| l > 0.0)
        .collect();
    let max_x = rows
        .iter()
        .map(|r| r.result.total.offered_flits)
        .fold(0.0, f64::max);
    let x = Axis {
        lo: 0.0,
        hi: linear_ticks(0.0, max_x.max(1e-3) * 1.05)
            .last()
            .copied()
            .unwrap_or(1.0)
            .max(max_x * 1.05),
        log: false,
    };
    let lo = lat.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = lat.iter().copied().fold(0.0, f64::max);
    let (lo, hi) = if lat.is_empty() {
        (1.0, 10.0)
    } else {
        (lo, hi)
    };
    let y = Axis {
        lo: nice_below(lo * 0.9),
        hi: nice_above(hi * 1.1).max(nice_above(lo * 3.0)),
        log: true,
    };
    let y_label = match ns_note(rows) {
        Some(ns) => format!("average latency (cycles, log scale; 1 cycle = {ns:.2} ns)"),
        None => "average latency (cycles, log scale)".to_string(),
    };
    let x_label = match gbps_note(rows) {
        Some(g) => format!("offered load (flits/terminal/cycle; 1 flit/cycle = {g:.1} Gb/s)"),
        None => "offered load (flits/terminal/cycle)".to_string(),
    };
    axes(&mut svg, &x, &y, &x_label, &y_label);
    let mut keys = Vec::new();
    for (i, s) in series.iter().enumerate() {
        let pts = points(rows, &s.series, |r| r.result.total.latency_cycles.avg);
        let px: Vec<(f64, f64)> = pts
            .iter()
            .filter(|p| p.1 > 0.0)
            .map(|p| (x.x(p.0), y.y(p.1)))
            .collect();
        polyline(&mut svg, &px, i);
        for p in pts.iter().filter(|p| p.1 > 0.0) {
            marker(&mut svg, x.x(p.0), y.y(p.1), i, p.2);
        }
        if let (Some(load), true) = (s.saturation_load, s.reached) {
            if let Some(p) = pts.iter().find(|p| p.0 == load) {
                let _ = writeln!(
                    svg,
                    "<circle class=\"saturation\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"8\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>",
                    x.x(p.0),
                    y.y(p.1),
                    colour(i)
                );
            }
        }
        keys.push(Key::Series(s.series.clone(), i));
    }
    keys.push(Key::Note(
        "<circle cx=\"{x}\" cy=\"{y}\" r=\"7\" fill=\"none\" stroke=\"#333\" stroke-width=\"2\"/>"
            .into(),
        "saturation point".into(),
    ));
    keys.push(Key::Note(
        "<circle cx=\"{x}\" cy=\"{y}\" r=\"3.5\" fill=\"white\" stroke=\"#333\" stroke-width=\"1.5\"/>".into(),
        "saturated run (accepted < 95 % offered)".into(),
    ));
    legend(&mut svg, &keys);
    svg.push_str("</svg>\n");
    svg
}

/// Accepted vs offered load with the ideal diagonal.
pub fn throughput_chart(name: &str, rows: &[Row], series: &[SeriesSummary]) -> String {
    let mut svg = String::new();
    header(
        &mut svg,
        &format!("Accepted vs offered load — {name}"),
        "below saturation a network accepts what is offered (dashed diagonal); above it the curve flattens",
    );
    let max = rows
        .iter()
        .map(|r| {
            r.result
                .total
                .offered_flits
                .max(r.result.total.accepted_flits)
        })
        .fold(0.0, f64::max)
        .max(1e-3)
        * 1.05;
    let hi = linear_ticks(0.0, max)
        .last()
        .copied()
        .unwrap_or(1.0)
        .max(max);
    let x = Axis {
        lo: 0.0,
        hi,
        log: false,
    };
    let y = x;
    let g = gbps_note(rows);
    let unit = |what: &str| match g {
        Some(g) => format!("{what} load (flits/terminal/cycle; 1 flit/cycle = {g:.1} Gb/s)"),
        None => format!("{what} load (flits/terminal/cycle)"),
    };
    axes(&mut svg, &x, &y, &unit("offered"), &unit("accepted"));
    let _ = writeln!(
        svg,
        "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#888\" stroke-dasharray=\"5 4\"/>",
        x.x(0.0),
        y.y(0.0),
        x.x(hi),
        y.y(hi)
    );
    let mut keys = Vec::new();
    for (i, s) in series.iter().enumerate() {
        let pts = points(rows, &s.series, |r| r.result.total.accepted_flits);
        let px: Vec<(f64, f64)> = pts.iter().map(|p| (x.x(p.0), y.y(p.1))).collect();
        polyline(&mut svg, &px, i);
        for p in &pts {
            marker(&mut svg, x.x(p.0), y.y(p.1), i, p.2);
        }
        keys.push(Key::Series(s.series.clone(), i));
    }
    keys.push(Key::Note(
        "<line x1=\"{x0}\" y1=\"{y}\" x2=\"{x1}\" y2=\"{y}\" stroke=\"#888\" stroke-dasharray=\"5 4\"/>"
            .into(),
        "accepted = offered".into(),
    ));
    keys.push(Key::Note(
        "<circle cx=\"{x}\" cy=\"{y}\" r=\"3.5\" fill=\"white\" stroke=\"#333\" stroke-width=\"1.5\"/>".into(),
        "saturated run".into(),
    ));
    legend(&mut svg, &keys);
    svg.push_str("</svg>\n");
    svg
}

/// Saturation throughput per series as bars.
pub fn saturation_chart(name: &str, rows: &[Row], series: &[SeriesSummary]) -> String {
    let mut svg = String::new();
    header(
        &mut svg,
        &format!("Saturation throughput per series — {name}"),
        "highest accepted load of each series; pale bars: no run saturated, so the network can do more",
    );
    let max = series
        .iter()
        .map(|s| s.saturation_throughput)
        .fold(0.0, f64::max)
        .max(1e-3)
        * 1.15;
    let hi = linear_ticks(0.0, max)
        .last()
        .copied()
        .unwrap_or(1.0)
        .max(max);
    let y = Axis {
        lo: 0.0,
        hi,
        log: false,
    };
    // the x axis is categorical: draw the frame and y ticks only
    for v in y.ticks() {
        let py = y.y(v);
        let _ = writeln!(
            svg,
            "<line x1=\"{L}\" y1=\"{py:.1}\" x2=\"{R}\" y2=\"{py:.1}\" stroke=\"#e4e4e4\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"12\">{}</text>",
            L - 6.0,
            py + 4.0,
            fmt_tick(v)
        );
    }
    let y_label = match gbps_note(rows) {
        Some(g) => format!("saturation throughput (flits/terminal/cycle; 1 = {g:.1} Gb/s)"),
        None => "saturation throughput (flits/terminal/cycle)".to_string(),
    };
    let _ = writeln!(
        svg,
        "<rect x=\"{L}\" y=\"{T}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n\
         <text class=\"ylabel\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"14\" transform=\"rotate(-90 {} {})\">{}</text>",
        R - L,
        B - T,
        L - 52.0,
        (T + B) / 2.0,
        L - 52.0,
        (T + B) / 2.0,
        esc(&y_label)
    );
    let n = series.len().max(1) as f64;
    let slot = (R - L) / n;
    let bw = (slot * 0.7).min(60.0);
    let by = B + 10.0;
    let mut keys = Vec::new();
    // Each bar is captioned with its number and its series' values (the
    // legend's title names the keys), slanted so twelve or more fit.
    let labels: Vec<&str> = series.iter().map(|s| s.series.as_str()).collect();
    let values = compact_labels(&labels).map(|(_, v)| v);
    for (i, s) in series.iter().enumerate() {
        let cx = L + slot * (i as f64 + 0.5);
        let caption = values
            .as_ref()
            .and_then(|v| v.get(i))
            .map_or(s.series.as_str(), String::as_str);
        let top = y.y(s.saturation_throughput);
        let _ = writeln!(
            svg,
            "<rect class=\"bar\" x=\"{:.1}\" y=\"{top:.1}\" width=\"{bw:.1}\" height=\"{:.1}\" fill=\"{}\" fill-opacity=\"{}\" stroke=\"{}\"/>\
             <text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\">{}{:.3}</text>\
             <text class=\"caption\" x=\"{cx:.1}\" y=\"{by:.1}\" text-anchor=\"end\" font-size=\"10\" \
             transform=\"rotate(-40 {cx:.1} {by:.1})\">{}: {}</text>",
            cx - bw / 2.0,
            B - top,
            colour(i),
            if s.reached { "0.85" } else { "0.35" },
            colour(i),
            top - 5.0,
            if s.reached { "" } else { "≥" },
            s.saturation_throughput,
            i + 1,
            // 16 characters slanted at 40 degrees reach the bottom edge
            esc(&short_label(caption, 16))
        );
        keys.push(Key::Series(format!("{}: {}", i + 1, s.series), i));
    }
    legend(&mut svg, &keys);
    svg.push_str("</svg>\n");
    svg
}

/// `label` cut to about `max` characters (at least 6) for a bar's caption.
fn short_label(label: &str, max: usize) -> String {
    let max = max.max(6);
    if label.chars().count() <= max {
        label.to_string()
    } else {
        let cut: String = label.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

/// One curve of an [`xy_chart`]: label and points `(x, y)` in x order.
pub type Curve = (String, Vec<(f64, f64)>);

/// A chart of `curves` (log x axis when `x_log`, linear y from 0) with an
/// optional dashed horizontal `limit` (value, legend label), in the style
/// of the sweep charts (`exanet reproduce`'s goodput vs message size).
pub fn xy_chart(
    title: &str,
    subtitle: &str,
    labels: (&str, &str),
    x_log: bool,
    curves: &[Curve],
    limit: Option<(f64, &str)>,
) -> String {
    let mut svg = String::new();
    header(&mut svg, title, subtitle);
    let xs = curves.iter().flat_map(|c| c.1.iter().map(|p| p.0));
    let (lo, hi) = xs.fold((f64::INFINITY, 0f64), |(a, b), x| (a.min(x), b.max(x)));
    let (lo, hi) = if lo.is_finite() {
        (lo, hi)
    } else {
        (1.0, 10.0)
    };
    let x = if x_log {
        Axis {
            lo: nice_below(lo.max(1e-9)),
            hi: nice_above(hi.max(lo * 10.0)),
            log: true,
        }
    } else {
        Axis {
            lo: 0.0,
            hi: hi.max(1e-9) * 1.05,
            log: false,
        }
    };
    let ymax = curves
        .iter()
        .flat_map(|c| c.1.iter().map(|p| p.1))
        .chain(limit.map(|l| l.0))
        .fold(0f64, f64::max)
        .max(1e-9)
        * 1.08;
    let y = Axis {
        lo: 0.0,
        hi: linear_ticks(0.0, ymax)
            .last()
            .copied()
            .unwrap_or(ymax)
            .max(ymax),
        log: false,
    };
    axes(&mut svg, &x, &y, labels.0, labels.1);
    let mut keys = Vec::new();
    if let Some((v, label)) = limit {
        let _ = writeln!(
            svg,
            "<line x1=\"{L}\" y1=\"{py:.1}\" x2=\"{R}\" y2=\"{py:.1}\" stroke=\"#888\" stroke-dasharray=\"5 4\"/>",
            py = y.y(v)
        );
        keys.push(Key::Note(
            "<line x1=\"{x0}\" y1=\"{y}\" x2=\"{x1}\" y2=\"{y}\" stroke=\"#888\" stroke-dasharray=\"5 4\"/>"
                .into(),
            label.to_string(),
        ));
    }
    for (i, (label, pts)) in curves.iter().enumerate() {
        let px: Vec<(f64, f64)> = pts.iter().map(|p| (x.x(p.0), y.y(p.1))).collect();
        polyline(&mut svg, &px, i);
        for p in &px {
            marker(&mut svg, p.0, p.1, i, false);
        }
        keys.push(Key::Series(label.clone(), i));
    }
    legend(&mut svg, &keys);
    svg.push_str("</svg>\n");
    svg
}

/// The three charts of a sweep as (file name, SVG).
pub fn sweep_plots(name: &str, rows: &[Row], series: &[SeriesSummary]) -> Vec<(String, String)> {
    vec![
        ("latency.svg".into(), latency_chart(name, rows, series)),
        (
            "throughput.svg".into(),
            throughput_chart(name, rows, series),
        ),
        (
            "saturation.svg".into(),
            saturation_chart(name, rows, series),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_series_all_look_different() {
        let look = |i: usize| {
            let mut m = String::new();
            marker(&mut m, 10.0, 10.0, i, false);
            let shape = m.split_whitespace().next().unwrap_or_default().to_string();
            (colour(i), dash(i), shape)
        };
        let all: std::collections::BTreeSet<_> = (0..30).map(look).collect();
        assert_eq!(all.len(), 30);
        assert_eq!(
            short_label("router.vcs_per_class=2, traffic.pattern=uniform", 12),
            "router.vcs_…"
        );
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(linear_ticks(0.0, 1.0), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(linear_ticks(0.0, 0.5), [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]);
        assert_eq!(
            log_ticks(10.0, 1000.0),
            [10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
        );
        assert_eq!(fmt_tick(0.30000000000000004), "0.3");
        assert_eq!(fmt_tick(200.0), "200");
        assert_eq!((nice_below(85.0), nice_above(85.0)), (50.0, 100.0));
        assert_eq!((nice_below(2100.0), nice_above(2100.0)), (2000.0, 5000.0));
    }

    #[test]
    fn legend_shows_each_series_marker_shape() {
        let keys: Vec<Key> = (0..12).map(|i| Key::Series(format!("s={i}"), i)).collect();
        let mut svg = String::new();
        legend(&mut svg, &keys);
        // series 10 and 11 reuse colours 0 and 1 with squares, in the legend too
        assert_eq!(svg.matches("<circle").count(), 10, "{svg}");
        assert_eq!(svg.matches("<rect").count(), 2, "{svg}");
        for i in 0..12 {
            assert!(svg.contains(&format!(">{i}</text>")), "{svg}");
        }
    }

    #[test]
    fn legend_labels_with_the_same_keys_are_compacted() {
        let (t, v) = compact_labels(&["pattern=uniform, vcs=2", "pattern=tornado, vcs=4"]).unwrap();
        assert_eq!(t, "pattern, vcs");
        assert_eq!(v, ["uniform, 2", "tornado, 4"]);
        let (t, v) = compact_labels(&["1: dims=4x4x4", "2: dims=8x8x8"]).unwrap();
        assert_eq!(
            (t.as_str(), v),
            ("dims", vec!["1: 4x4x4".to_string(), "2: 8x8x8".into()])
        );
        assert!(compact_labels(&["a=1, b=2", "a=1, c=2"]).is_none());
        assert!(compact_labels(&["all"]).is_none());
    }
}
