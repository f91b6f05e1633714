//! The grid's tables: overall, ratios by bench, the attribution of `--explain`.

use super::{Rows, num};
use mlbench_results::grid::{Grid, Per, VendorRow};

/// The grid's title: `mlbench grid`, or `mlbench grid per joule` for items per joule.
pub fn title(grid: &Grid) -> &'static str {
    match grid.per {
        Per::Second => "mlbench grid",
        Per::Joule => "mlbench grid per joule",
    }
}

/// What a grid's header says when its rows' power came from different kinds of source.
pub const INFORMATIVE_SENSORS: &str = "informative: board sensors differ by vendor";
/// How the grid's `informative` begins when the sensors differ.
const SENSORS_DIFFER: &str = "board sensors differ by vendor: ";

/// A ratio, three decimals.
pub fn ratio(x: Option<f64>) -> String {
    x.map_or_else(|| "—".into(), |v| format!("{v:.3}"))
}

/// An interval, three decimals.
pub fn interval(ci: Option<[f64; 2]>) -> String {
    ci.map_or_else(|| "—".into(), |[lo, hi]| format!("{lo:.3}–{hi:.3}"))
}

/// A ratio and its interval as the charts print them beside a bar, in the tables'
/// formats: `1.009  [1.008–1.010]`, or the ratio alone without an interval.
pub fn figure(value: f64, ci: Option<[f64; 2]>) -> String {
    match ci {
        Some(_) => format!("{}  [{}]", ratio(Some(value)), interval(ci)),
        None => ratio(Some(value)),
    }
}

/// The mark of a row or cell whose runtime differs from the baseline's.
pub const MIXED_RUNTIME: &str = " †";

/// A row's name: the label, with its track when the label has rows on both, and `†`
/// when its runtime differs from the baseline's.
pub fn row_name(v: &VendorRow, grid: &Grid) -> String {
    let tweaked = grid
        .vendors
        .iter()
        .any(|o| o.name == v.name && o.track != v.track);
    let mark = if v.mixed_runtime { MIXED_RUNTIME } else { "" };
    if tweaked {
        format!("{} ({}){mark}", v.name, v.track.as_str())
    } else {
        format!("{}{mark}", v.name)
    }
}

/// The overall table: vendor, overall ratio, its CI, tier, benches present.
pub fn overall_rows(grid: &Grid) -> Rows {
    let rows = grid
        .vendors
        .iter()
        .map(|v| {
            vec![
                row_name(v, grid),
                ratio(v.overall),
                interval(v.ci),
                tier(v),
                next(v),
                format!(
                    "{}/{}",
                    v.present,
                    grid.benches.len() - grid.unnormalized.len()
                ),
                v.missing.join(", "),
                valid(v),
                (v.hardware.as_ref()).map_or_else(String::new, |h| h.gpus_label()),
                (v.hardware.as_ref()).map_or_else(String::new, |h| h.hosts_label()),
                (v.runtime.as_ref()).map_or_else(String::new, |r| r.short_label()),
            ]
        })
        .collect();
    let header = [
        "vendor", "overall", "95% CI", "tier", "vs next", "benches", "missing", "valid", "GPUs",
        "hosts", "runtime",
    ];
    Rows::new("Overall, relative to the baseline", &header, rows)
}

/// A row's tier, or why it has none.
fn tier(v: &VendorRow) -> String {
    match (v.tier, &v.validity) {
        (Some(t), _) => t.to_string(),
        (None, Some(validity)) if !validity.passed => "— (failed validation)".into(),
        (None, _) if v.overall.is_none() => "— (no figure)".into(),
        (None, _) => "— (not tiered)".into(),
    }
}

/// A row's validation in a cell: `pass`, `FAIL 1 error`, `FAIL 12 errors, packed with
/// errors`; empty when the grid was made without it.
fn valid(v: &VendorRow) -> String {
    let Some(validity) = &v.validity else {
        return String::new();
    };
    if validity.passed {
        return "pass".into();
    }
    let errors = mlbench_schema::words::count(validity.errors, "error", "errors");
    match validity.allowed_errors {
        true => format!("FAIL {errors}, packed with errors"),
        false => format!("FAIL {errors}"),
    }
}

/// A row against the next one down: the paired ratio, its interval and P(above), e.g.
/// `1.043 [1.021–1.066] P 1.00`; `—` without.
fn next(v: &VendorRow) -> String {
    match (v.ratio_to_next, v.p_above_next) {
        (Some(r), Some(p)) => format!("{}  P {p:.2}", figure(r, v.ratio_to_next_ci)),
        _ => "—".into(),
    }
}

/// The ratio table: one row per bench, one column per submission.
pub fn ratio_rows(grid: &Grid) -> Rows {
    let mut header = vec!["bench".to_owned()];
    header.extend(grid.vendors.iter().map(|v| row_name(v, grid)));
    let rows = grid
        .benches
        .iter()
        .map(|b| {
            let mut row = vec![b.clone()];
            row.extend(grid.vendors.iter().map(|v| match v.cells.get(b) {
                Some(c) if c.missing => "missing".to_owned(),
                Some(c) if c.unnormalized => format!("({})", num(c.mean)),
                Some(c) if c.mixed_runtime => format!("{}{MIXED_RUNTIME}", ratio(c.ratio)),
                Some(c) => ratio(c.ratio),
                None => "—".into(),
            }));
            row
        })
        .collect();
    Rows {
        title: "Ratio to the baseline, by bench".into(),
        header,
        rows,
    }
}

/// The lines said above the grid's tables.
pub fn notes(grid: &Grid) -> Vec<String> {
    let mut out = vec![format!(
        "baseline: {}; {} bootstrap resamples (seed {}), {:.0}% intervals; overall = weighted geometric mean × share of weight present",
        grid.baseline,
        grid.resamples,
        grid.seed,
        grid.level * 100.0
    )];
    let tiers: Vec<String> = grid
        .tiers
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{}: {}", i + 1, t.join(", ")))
        .collect();
    if let Some(why) = &grid.informative {
        let rows = why.strip_prefix(SENSORS_DIFFER).unwrap_or(why);
        out.insert(0, format!("{INFORMATIVE_SENSORS}; not tiered: {rows}"));
    }
    if !tiers.is_empty() {
        out.push(format!(
            "tiers (a new tier where the paired ratio to the row above excludes 1): {}",
            tiers.join("; ")
        ));
    }
    out.extend(grid.notes.iter().cloned());
    out
}

/// The attribution of `--explain`, titled with the ratio and its interval.
pub fn explain_rows(grid: &Grid) -> Option<Rows> {
    let e = grid.explain.as_ref()?;
    let title = format!(
        "{} ÷ {} = {:.3} (95% CI {:.3}–{:.3}); log gap {:+.4} by bench:",
        e.a, e.b, e.ratio, e.ratio_ci[0], e.ratio_ci[1], e.gap
    );
    let f = |x: Option<f64>| x.map_or_else(|| "missing".into(), |v| format!("{v:+.4}"));
    let mut rows: Vec<Vec<String>> = e
        .terms
        .iter()
        .map(|t| {
            vec![
                t.bench.clone(),
                format!("{}", t.weight),
                f(t.log_ratio_a),
                f(t.log_ratio_b),
                format!("{:+.4}", t.term),
            ]
        })
        .collect();
    rows.push(vec![
        "(missing benches)".into(),
        String::new(),
        String::new(),
        String::new(),
        format!("{:+.4}", e.penalty),
    ]);
    Some(Rows::new(
        title,
        &["bench", "weight", "log ratio A", "log ratio B", "term"],
        rows,
    ))
}

/// The grid's tables in page order: overall, by bench, and the attribution if any.
pub fn tables(grid: &Grid) -> Vec<Rows> {
    let mut out = vec![overall_rows(grid), ratio_rows(grid)];
    out.extend(explain_rows(grid));
    out
}
