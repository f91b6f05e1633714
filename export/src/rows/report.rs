//! The report's tables: benches, world sizes, intervals, statistics, per-GPU.

use super::{Rows, num, pct, signed_pct, verdict};
use mlbench_results::Report;
use mlbench_results::report::{Intervals, Precision, PrecisionInterval, ReportDoc};

/// The report's heading: suite, GPU model, scoring.
pub fn heading(report: &Report) -> String {
    let (scoring, name, model) = match report {
        Report::Classic(r) => ("classic", &r.name, &r.gpu_model),
        Report::Score(r) => ("score", &r.name, &r.gpu_model),
    };
    format!("mlbench report: suite `{name}`, {model} targets, {scoring} scoring")
}

/// The world-size breakdown of the benches pooled over world sizes (`scaling`), as
/// (title, header, rows); `None` when no bench is pooled.
pub fn world_size_rows(report: &Report) -> Option<Rows> {
    let sizes = &report.context().scaling;
    if sizes.is_empty() {
        return None;
    }
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
    Some(Rows::new(
        "By world size (pooled in the table above; efficiency against the number of devices)",
        &["bench", "devices", "n", "mean", "sd"],
        rows,
    ))
}

/// The interval table of `--ci`, titled with its method and the statistic: the result of
/// the bench table, its interval beside it (the reason in place of a missing one).
pub fn ci_rows(cis: &Intervals) -> Rows {
    let rows = cis
        .by_bench
        .iter()
        .map(|(b, c)| {
            let why = |cell: String| match &c.why {
                Some(why) => format!("{cell} ({why})"),
                None => cell,
            };
            let [low, high] = match c.ci {
                Some([lo, hi]) => [num(Some(lo)), num(Some(hi))],
                None => [why("—".into()), "—".into()],
            };
            vec![b.clone(), c.n.to_string(), num(c.result), low, high]
        })
        .collect();
    let statistic = cis
        .by_bench
        .values()
        .next()
        .map_or("the result", |c| c.statistic.as_str());
    let level = format!("{:.0}%", cis.level * 100.0);
    Rows {
        title: format!(
            "{level} confidence intervals of the result above ({statistic}), recomputed in each resample (bootstrap: {}, {} resamples, seed {})",
            cis.resampling, cis.resamples, cis.seed
        ),
        header: vec![
            "bench".to_string(),
            "n".into(),
            "result".into(),
            format!("{level} CI low"),
            format!("{level} CI high"),
        ],
        rows,
    }
}

/// The statistics block as (label, value, verdict) rows.
pub fn statistics_rows(report: &Report) -> Vec<[String; 3]> {
    match report {
        Report::Classic(r) => {
            let s = &r.statistics;
            vec![
                [
                    "Bench passes".into(),
                    format!("{}/{} benches", s.benches_usable, s.benches_expected),
                    verdict(s.bench_passes).into(),
                ],
                [
                    "Deviation quantile (80%)".into(),
                    format!(
                        "{} (< {:.0}%)",
                        pct(s.deviation_quantile_80),
                        s.deviation_limit * 100.0
                    ),
                    verdict(s.deviation_pass).into(),
                ],
                [
                    "Performance".into(),
                    format!("{} (≥ 0%)", signed_pct(s.performance)),
                    verdict(s.performance_pass).into(),
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
                    verdict(s.failures_pass).into(),
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
pub fn per_gpu_tables(report: &Report) -> Vec<Rows> {
    let Report::Score(r) = report else {
        return Vec::new();
    };
    // Devices are indices on one host (sorted as numbers), `host/index` on several.
    let mut devices: Vec<String> = r
        .per_gpu
        .mean
        .values()
        .flat_map(|row| row.keys().cloned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    devices.sort_by_key(|d| (d.parse::<u32>().unwrap_or(u32::MAX), d.clone()));
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
                    row.get(d)
                        .map_or_else(|| "—".into(), |v| format!("{:.0}%", v * 100.0))
                }));
                cells
            })
            .collect();
        out.push(Rows {
            title: format!("Relative GPU performance ({title})"),
            header,
            rows,
        });
    }
    out
}

/// The failed entries of a score report as rows (file, entry, bench, reason); empty for
/// a classic one (its failures are kept, and said in the notes).
pub fn failure_rows(report: &Report) -> Vec<[String; 4]> {
    let Report::Score(r) = report else {
        return Vec::new();
    };
    r.failures
        .iter()
        .map(|f| {
            [
                f.file.clone(),
                f.entry.to_string(),
                f.bench.clone().unwrap_or_else(|| "(unnamed stub)".into()),
                f.reason.to_owned(),
            ]
        })
        .collect()
}

/// What failed, one phrase each: the scoring's criteria, each submission's validation
/// (empty when the report passed).
pub fn failed_parts(doc: &ReportDoc) -> Vec<String> {
    let mut failed = Vec::new();
    if !doc.report.passed() {
        failed.push("the scoring's criteria (see Statistics)".to_owned());
    }
    for v in doc.validity.iter().filter(|v| !v.validity.passed) {
        let errors = v.validity.errors_text();
        failed.push(format!("validation of {}: {errors}", v.submission));
    }
    failed
}

/// The verdict line: `PASS`, or `FAIL` and what failed ([`failed_parts`]): the one
/// status of a report, in every format.
pub fn result_line(doc: &ReportDoc) -> String {
    let word = verdict(doc.passed());
    match failed_parts(doc) {
        failed if failed.is_empty() => word.to_owned(),
        failed => format!("{word}: {}", failed.join("; ")),
    }
}

/// The fleet table: one row per node (`None` for a single node).
pub fn fleet_rows(doc: &ReportDoc) -> Option<Rows> {
    let fleet = doc.fleet.as_ref()?;
    let rows = fleet
        .nodes
        .iter()
        .map(|n| {
            vec![
                n.node.clone(),
                n.gpus.to_string(),
                n.runs.to_string(),
                super::grid::ratio(Some(n.relative)),
                super::grid::interval(Some([n.ci_low, n.ci_high])),
                format!("{}/{}", n.below, n.tested),
                if n.flagged {
                    "SLOW".into()
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    Some(Rows::new(
        format!(
            "Fleet: each node against the median node (p10 {:.3}, {:.0}% within 5%; 95% bootstrap intervals, {} resamples, seed {})",
            fleet.p10,
            fleet.within_5pct * 100.0,
            fleet.resamples,
            fleet.seed
        ),
        &[
            "node",
            "gpus",
            "runs",
            "relative",
            "95% CI",
            "below/tested",
            "flag",
        ],
        rows,
    ))
}

/// A half-width for people: `±0.84%` (with `✓` when within the precision), or
/// `unbounded` with its reason (`unbounded (5 runs; bounded from 8 at 95%)`).
fn half_width(i: &PrecisionInterval) -> String {
    match i.half_width {
        None => match &i.why {
            Some(why) => format!("unbounded ({why})"),
            None => "unbounded".into(),
        },
        Some(h) if i.reached => format!("±{:.2}% ✓", h * 100.0),
        Some(h) => format!("±{:.2}%", h * 100.0),
    }
}

/// Runs needed for people: `12`, `>100000`, `— (1 run: …)` (no spread measured yet).
fn runs_needed(n: Option<u32>, runs: u32) -> String {
    match n {
        Some(n) => n.to_string(),
        None if runs >= 2 => format!(">{}", mlbench_results::report::RUNS_NEEDED_CAP),
        None if runs == 1 => "— (1 run: needs 2 to measure a spread)".into(),
        None => "— (no run with a value)".into(),
    }
}

/// The "how many runs" table: per bench, both intervals' half-widths and the runs each
/// needs for the precision, then a line over all benches.
pub fn precision_rows(p: &Precision) -> Rows {
    let mut rows: Vec<Vec<String>> = p
        .benches
        .iter()
        .map(|b| {
            let runs = if b.runs_without_value > 0 {
                format!("{} (+{} without a value)", b.runs, b.runs_without_value)
            } else {
                b.runs.to_string()
            };
            vec![
                b.bench.clone(),
                runs,
                num(b.mean),
                half_width(&b.fixed),
                runs_needed(b.fixed.runs_needed, b.runs),
                half_width(&b.anytime),
                runs_needed(b.anytime.runs_needed, b.runs),
            ]
        })
        .collect();
    let o = &p.overall;
    let reached = |r: bool| if r { "all reached" } else { "not all reached" };
    rows.push(vec![
        "all benches".into(),
        o.runs.to_string(),
        String::new(),
        reached(o.fixed_reached).into(),
        runs_needed(o.fixed_runs_needed, o.runs),
        reached(o.anytime_reached).into(),
        runs_needed(o.anytime_runs_needed, o.runs),
    ]);
    Rows::new(
        format!(
            "How many runs for ±{}% at {:.0}%: the fixed-n interval (a bootstrap of the runs) and the anytime-valid one (Lai t-mixture, c = {:.4}, expected CV {}%) of the geometric mean of run means (the sequence works on log throughput, so this centre is not the result above), and the runs each needs at the observed spread",
            p.precision * 100.0,
            p.level * 100.0,
            p.mixture,
            p.expected_cv * 100.0
        ),
        &[
            "bench",
            "runs",
            "geometric mean of run means",
            "fixed-n ±",
            "runs needed",
            "anytime ±",
            "runs needed (anytime)",
        ],
        rows,
    )
}

/// The line that says which stopping rule the submission followed, if any.
pub fn stopping_line(doc: &ReportDoc) -> Option<String> {
    let s = doc.stopping.as_ref()?;
    Some(format!(
        "Runs: stopped by `{}` ({}, ±{}% at {:.0}%, c = {:.4}, {}–{} runs) after {} runs: {}{}",
        s.rule,
        s.method,
        s.precision * 100.0,
        s.level * 100.0,
        s.mixture,
        s.min_runs,
        s.max_runs,
        s.runs,
        s.stopped,
        if s.failed_runs > 0 {
            format!(", {} of them with a failure", s.failed_runs)
        } else {
            String::new()
        }
    ))
}

/// The line `run --until` prints after each batch: the benches within the precision, the
/// widest of the others, and the runs without a value (failed or set aside), counted.
pub fn until_line(p: &Precision, runs: u32) -> String {
    let within = p.benches.iter().filter(|b| b.anytime.reached).count();
    let width = |b: &&mlbench_results::report::BenchPrecision| {
        b.anytime.half_width.unwrap_or(f64::INFINITY)
    };
    let widest = p
        .benches
        .iter()
        .filter(|b| !b.anytime.reached)
        .max_by(|a, b| width(a).total_cmp(&width(b)));
    let without: u32 = p.benches.iter().map(|b| b.runs_without_value).sum();
    let mut line = format!(
        "after {}: {within} of {} benches within ±{}%",
        mlbench_schema::words::count(runs as usize, "run", "runs"),
        p.benches.len(),
        p.precision * 100.0
    );
    if let Some(b) = widest {
        line.push_str(&format!(
            "; widest {} at {}",
            b.bench,
            half_width(&b.anytime)
        ));
    }
    if without > 0 {
        line.push_str(&format!(
            "; {without} bench-runs without a value (failed or set aside)"
        ));
    }
    line
}
