//! Renderers: each turns a finished report into text and computes nothing.

pub mod csv;
pub mod findings;
pub mod grid;
pub mod html;
pub mod markdown;
pub mod table;

use mlbench_analyzer::Report;

/// A measured value for people: 4 significant figures at least, no exponent, `—` for none.
pub fn num(x: Option<f64>) -> String {
    match x {
        None => "—".into(),
        Some(v) if !v.is_finite() => format!("{v}"),
        Some(v) => {
            let a = v.abs();
            if a >= 100.0 || a == 0.0 {
                format!("{v:.2}")
            } else if a >= 1.0 {
                format!("{v:.3}")
            } else {
                // Enough decimals for four significant figures.
                let decimals = (3 - a.log10().floor() as i32).clamp(4, 12) as usize;
                format!("{v:.decimals$}")
            }
        }
    }
}

/// A fraction as a percentage, e.g. `0.0075` → `0.75%`.
pub fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "—".into(), |v| format!("{:.2}%", v * 100.0))
}

/// A signed fraction as a percentage, e.g. `0.37` → `+37.00%`.
pub fn signed_pct(x: Option<f64>) -> String {
    x.map_or_else(|| "—".into(), |v| format!("{:+.2}%", v * 100.0))
}

/// The report's heading: suite, GPU model, scoring.
pub fn heading(report: &Report) -> String {
    let (scoring, name, model) = match report {
        Report::Classic(r) => ("classic", &r.name, &r.gpu_model),
        Report::Score(r) => ("score", &r.name, &r.gpu_model),
    };
    format!("mlbench report: suite `{name}`, {model} targets, {scoring} scoring")
}

/// PASS or FAIL.
pub fn verdict(pass: bool) -> &'static str {
    if pass { "PASS" } else { "FAIL" }
}

/// The rows of the bench table: header and cells, shared by the table and Markdown.
pub fn bench_rows(report: &Report) -> (Vec<&'static str>, Vec<Vec<String>>) {
    match report {
        Report::Classic(r) => (
            vec!["bench", "n", "target", "result", "sd", "sd%", "diff"],
            r.benches
                .iter()
                .map(|b| {
                    vec![
                        b.bench.clone(),
                        b.n.to_string(),
                        num(b.target),
                        num(b.result),
                        num(b.sd),
                        pct(b.sd_pct),
                        signed_pct(b.diff),
                    ]
                })
                .collect(),
        ),
        Report::Score(r) => (
            vec![
                "bench",
                "n",
                "target",
                "perf_tgt",
                "sd%_tgt",
                "mean",
                "perf",
                "perf_pass",
                "sd%",
                "sd%_pass",
            ],
            r.benches
                .iter()
                .map(|b| {
                    vec![
                        b.bench.clone(),
                        b.n.to_string(),
                        num(b.target),
                        b.perf_target.map_or_else(|| "—".into(), |v| format!("{v}")),
                        b.sd_target
                            .map_or_else(|| "—".into(), |v| format!("{:.0}%", v * 100.0)),
                        num(b.mean),
                        b.perf.map_or_else(|| "—".into(), |v| format!("{v:.2}")),
                        verdict(b.perf_pass).into(),
                        b.sd_pct
                            .map_or_else(|| "—".into(), |v| format!("{:.1}%", v * 100.0)),
                        verdict(b.sd_pass).into(),
                    ]
                })
                .collect(),
        ),
    }
}

/// The world-size breakdown of the benches pooled over world sizes (`scaling`), as
/// (title, header, rows); `None` when no bench is pooled.
pub fn world_size_rows(report: &Report) -> Option<(String, Vec<String>, Vec<Vec<String>>)> {
    let sizes = &report.context().scaling;
    if sizes.is_empty() {
        return None;
    }
    let header = ["bench", "devices", "n", "mean", "sd"]
        .map(str::to_owned)
        .to_vec();
    let rows = sizes
        .iter()
        .map(|w| {
            vec![
                w.bench.clone(),
                w.devices.to_string(),
                w.n.to_string(),
                num(w.mean),
                num(w.sd),
            ]
        })
        .collect();
    Some((
        "By world size (pooled in the table above; efficiency against the number of devices)"
            .to_owned(),
        header,
        rows,
    ))
}

/// (header, rows) of the interval table.
pub fn ci_rows(
    cis: &std::collections::BTreeMap<String, mlbench_analyzer::MeanCi>,
) -> (Vec<String>, Vec<Vec<String>>) {
    let header = ["bench", "n", "mean", "95% CI low", "95% CI high"]
        .map(str::to_owned)
        .to_vec();
    let rows = cis
        .iter()
        .map(|(b, c)| {
            vec![
                b.clone(),
                c.n.to_string(),
                num(Some(c.mean)),
                num(Some(c.ci[0])),
                num(Some(c.ci[1])),
            ]
        })
        .collect();
    (header, rows)
}

/// The statistics block as (label, value, verdict) rows.
pub fn statistics_rows(report: &Report) -> Vec<[String; 3]> {
    match report {
        Report::Classic(r) => {
            let s = &r.statistics;
            let expected = &r.context.expected;
            let required = expected.len();
            let usable = r
                .benches
                .iter()
                .filter(|b| {
                    expected.contains(&b.bench)
                        && b.result.is_some()
                        && b.sd.is_some()
                        && b.sd_pct.is_some()
                })
                .count();
            vec![
                [
                    "Bench passes".into(),
                    format!("{usable}/{required} benches"),
                    verdict(s.bench_passes).into(),
                ],
                [
                    "Deviation quantile (80%)".into(),
                    format!("{} (< 5%)", pct(s.deviation_quantile_80)),
                    verdict(s.deviation_quantile_80.is_some_and(|q| q < 0.05)).into(),
                ],
                [
                    "Performance".into(),
                    format!("{} (≥ 0%)", signed_pct(s.performance)),
                    verdict(s.performance.is_some_and(|p| p >= 0.0)).into(),
                ],
            ]
        }
        Report::Score(r) => {
            let s = &r.statistics;
            let two = |x: Option<f64>| x.map_or_else(|| "—".into(), |v| format!("{v:.2}"));
            let mut rows = vec![
                [
                    "Failures".into(),
                    format!(
                        "{} / {} results ({:.2}%)",
                        s.failures,
                        s.total,
                        s.failure_ratio * 100.0
                    ),
                    verdict(s.bf == 1).into(),
                ],
                [
                    "Well functioning score (BF)".into(),
                    s.bf.to_string(),
                    String::new(),
                ],
                [
                    "Minimal performance score (PM)".into(),
                    two(Some(s.pm)),
                    String::new(),
                ],
                [
                    "Standard deviation score (ST)".into(),
                    two(Some(s.st)),
                    String::new(),
                ],
                [
                    "Mean performance (geomean) (PG)".into(),
                    two(s.pg),
                    String::new(),
                ],
                [
                    "Score (BF(2PM + ST + 5PG))".into(),
                    two(s.score),
                    String::new(),
                ],
            ];
            if let Some(price) = s.price {
                rows.push(["Price".into(), format!("${price:.2}"), String::new()]);
                rows.push(["RPP (Price/Score)".into(), two(s.rpp), String::new()]);
            }
            rows
        }
    }
}

/// The per-GPU tables as (title, header, rows), devices as columns.
pub fn per_gpu_tables(report: &Report) -> Vec<(String, Vec<String>, Vec<Vec<String>>)> {
    let Report::Score(r) = report else {
        return Vec::new();
    };
    let mut devices: Vec<u32> = r
        .per_gpu
        .mean
        .values()
        .flat_map(|row| row.keys().filter_map(|d| d.parse().ok()))
        .collect();
    devices.sort_unstable();
    devices.dedup();
    if devices.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (title, table) in [
        ("mean", &r.per_gpu.mean),
        ("min", &r.per_gpu.min),
        ("max", &r.per_gpu.max),
    ] {
        let mut header = vec!["bench".to_string()];
        header.extend(devices.iter().map(|d| d.to_string()));
        let rows = table
            .iter()
            .map(|(bench, row)| {
                let mut cells = vec![bench.clone()];
                cells.extend(devices.iter().map(|d| {
                    row.get(&d.to_string())
                        .map_or_else(|| "—".into(), |v| format!("{:.0}%", v * 100.0))
                }));
                cells
            })
            .collect();
        out.push((format!("Relative GPU performance ({title})"), header, rows));
    }
    out
}
