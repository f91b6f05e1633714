//! The grid for people (tables), JSON (docs/grid-json.md), CSV and Markdown.

use super::num;
use mlbench_analyzer::grid::{Grid, VendorRow};
use std::fmt::Write as _;

fn ratio(x: Option<f64>) -> String {
    x.map_or_else(|| "—".into(), |v| format!("{v:.3}"))
}

fn interval(ci: Option<[f64; 2]>) -> String {
    ci.map_or_else(|| "—".into(), |[lo, hi]| format!("{lo:.3}–{hi:.3}"))
}

fn row_name(v: &VendorRow, grid: &Grid) -> String {
    let tweaked = grid
        .vendors
        .iter()
        .any(|o| o.name == v.name && o.track != v.track);
    if tweaked {
        format!("{} ({})", v.name, v.track.as_str())
    } else {
        v.name.clone()
    }
}

/// The overall table: vendor, overall ratio, its CI, tier, benches present.
fn overall_rows(grid: &Grid) -> (Vec<String>, Vec<Vec<String>>) {
    let header = ["vendor", "overall", "95% CI", "tier", "benches", "missing"]
        .map(str::to_owned)
        .to_vec();
    let rows = grid
        .vendors
        .iter()
        .map(|v| {
            vec![
                row_name(v, grid),
                ratio(v.overall),
                interval(v.ci),
                v.tier.map_or_else(|| "—".into(), |t| t.to_string()),
                format!(
                    "{}/{}",
                    v.present,
                    grid.benches.len() - grid.unnormalized.len()
                ),
                v.missing.join(", "),
            ]
        })
        .collect();
    (header, rows)
}

/// The ratio table: one row per bench, one column per submission.
fn ratio_rows(grid: &Grid) -> (Vec<String>, Vec<Vec<String>>) {
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
                Some(c) => ratio(c.ratio),
                None => "—".into(),
            }));
            row
        })
        .collect();
    (header, rows)
}

fn comfy(header: Vec<String>, rows: Vec<Vec<String>>) -> comfy_table::Table {
    super::table::table(header, rows)
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
    if !tiers.is_empty() {
        out.push(format!(
            "tiers (overlapping intervals: indistinguishable): {}",
            tiers.join("; ")
        ));
    }
    out.extend(grid.notes.iter().cloned());
    out
}

fn explain_rows(grid: &Grid) -> Option<(String, Vec<String>, Vec<Vec<String>>)> {
    let e = grid.explain.as_ref()?;
    let title = format!(
        "{} ÷ {} = {:.3} (95% CI {:.3}–{:.3}); log gap {:+.4} by bench:",
        e.a, e.b, e.ratio, e.ratio_ci[0], e.ratio_ci[1], e.gap
    );
    let header = ["bench", "weight", "log ratio A", "log ratio B", "term"]
        .map(str::to_owned)
        .to_vec();
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
    Some((title, header, rows))
}

/// The grid as terminal tables.
pub fn table(grid: &Grid) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "mlbench grid: {} submissions", grid.vendors.len());
    for n in notes(grid) {
        let _ = writeln!(out, "  {n}");
    }
    out.push('\n');
    let (h, r) = overall_rows(grid);
    let _ = writeln!(out, "{}\n", comfy(h, r));
    let (h, r) = ratio_rows(grid);
    let _ = writeln!(out, "{}", comfy(h, r));
    if let Some((title, h, r)) = explain_rows(grid) {
        let _ = writeln!(out, "\n{title}\n{}", comfy(h, r));
    }
    out
}

/// The grid as Markdown.
pub fn markdown(grid: &Grid) -> String {
    let mut out = String::from("# mlbench grid\n\n");
    for n in notes(grid) {
        let _ = writeln!(out, "- {n}");
    }
    out.push_str("\n## Overall\n\n");
    let (h, r) = overall_rows(grid);
    super::markdown::md_table(&mut out, &h, &r);
    out.push_str("## Ratio to the baseline, by bench\n\n");
    let (h, r) = ratio_rows(grid);
    super::markdown::md_table(&mut out, &h, &r);
    if let Some((title, h, r)) = explain_rows(grid) {
        let _ = writeln!(out, "## Explained\n\n{title}\n");
        super::markdown::md_table(&mut out, &h, &r);
    }
    out
}

/// The JSON document (docs/grid-json.md).
pub fn json(grid: &Grid) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(grid)?;
    text.push('\n');
    Ok(text)
}

/// One row per submission and bench, then one `(overall)` row per submission.
pub fn csv(grid: &Grid) -> String {
    let cell = |x: Option<f64>| x.map_or_else(String::new, |v| format!("{v}"));
    let mut out =
        String::from("vendor,track,bench,ratio,ci_low,ci_high,n,gpus,mean,missing,tier\n");
    let text = super::csv::text;
    for v in &grid.vendors {
        for b in &grid.benches {
            if let Some(c) = v.cells.get(b) {
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{},{}",
                    text(&v.name),
                    v.track.as_str(),
                    text(b),
                    cell(c.ratio),
                    cell(c.ci.map(|c| c[0])),
                    cell(c.ci.map(|c| c[1])),
                    c.n,
                    c.gpus,
                    cell(c.mean),
                    c.missing,
                    v.tier.map_or_else(String::new, |t| t.to_string())
                );
            }
        }
        let _ = writeln!(
            out,
            "{},{},(overall),{},{},{},,,,{},{}",
            text(&v.name),
            v.track.as_str(),
            cell(v.overall),
            cell(v.ci.map(|c| c[0])),
            cell(v.ci.map(|c| c[1])),
            !v.missing.is_empty(),
            v.tier.map_or_else(String::new, |t| t.to_string())
        );
    }
    out
}

/// The tables of the grid as plain (header, rows) pairs, for the HTML page.
pub fn html_tables(grid: &Grid) -> Vec<(String, Vec<String>, Vec<Vec<String>>)> {
    let mut out = Vec::new();
    let (h, r) = overall_rows(grid);
    out.push(("Overall, relative to the baseline".to_owned(), h, r));
    let (h, r) = ratio_rows(grid);
    out.push(("Ratio to the baseline, by bench".to_owned(), h, r));
    if let Some((title, h, r)) = explain_rows(grid) {
        out.push((title, h, r));
    }
    out
}
