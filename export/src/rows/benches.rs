//! The report's bench table, defined once: each column's header and cell in either form,
//! for people (table, Markdown, HTML) or as data (CSV). The formats only lay the rows
//! out; the figures and verdicts are the model's.

use super::{Form, Rows, num, pct, raw, signed_pct, verdict};
use mlbench_results::Report;
use mlbench_results::report::{ClassicBench, ReportDoc, ScoreBench};

/// One column of the bench table: its header in each form and its cell.
struct Column<B> {
    /// The header for people.
    people: &'static str,
    /// The header as data.
    data: &'static str,
    /// The cell of a bench.
    cell: fn(&B, Form) -> String,
}

/// A column (a `const fn`, so that the tables below read as tables).
const fn col<B>(
    people: &'static str,
    data: &'static str,
    cell: fn(&B, Form) -> String,
) -> Column<B> {
    Column { people, data, cell }
}

/// A figure in `form`: for people as `people` writes it, as data at full precision.
fn figure(x: Option<f64>, form: Form, people: fn(Option<f64>) -> String) -> String {
    match form {
        Form::People => people(x),
        Form::Data => raw(x),
    }
}

/// A figure for people in `format` (`—` for none), as data at full precision.
fn shown(x: Option<f64>, form: Form, format: fn(f64) -> String) -> String {
    match (form, x) {
        (Form::People, Some(v)) => format(v),
        (Form::People, None) => "—".into(),
        (Form::Data, x) => raw(x),
    }
}

/// A pass flag: PASS or FAIL for people, `true` or `false` as data.
fn flag(pass: bool, form: Form) -> String {
    match form {
        Form::People => verdict(pass).into(),
        Form::Data => pass.to_string(),
    }
}

/// The classic scoring's columns, the same in both forms.
const CLASSIC: &[Column<ClassicBench>] = &[
    col("bench", "bench", |b, _| b.bench.clone()),
    col("n", "n", |b, _| b.n.to_string()),
    col("target", "target", |b, f| figure(b.target, f, num)),
    col("result", "result", |b, f| figure(b.result, f, num)),
    col("sd", "sd", |b, f| figure(b.sd, f, num)),
    col("sd%", "sd_pct", |b, f| figure(b.sd_pct, f, pct)),
    col("diff", "diff", |b, f| figure(b.diff, f, signed_pct)),
];

// The score scoring's columns, each defined once; the two forms order them differently.
const S_BENCH: Column<ScoreBench> = col("bench", "bench", |b, _| b.bench.clone());
const S_N: Column<ScoreBench> = col("n", "n", |b, _| b.n.to_string());
const S_MEAN: Column<ScoreBench> = col("mean", "mean", |b, f| figure(b.mean, f, num));
const S_SD: Column<ScoreBench> = col("sd", "sd", |b, f| figure(b.sd, f, num));
const S_SD_PCT: Column<ScoreBench> = col("sd%", "sd_pct", |b, f| {
    shown(b.sd_pct, f, |v| format!("{:.1}%", v * 100.0))
});
const S_TARGET: Column<ScoreBench> = col("target", "target", |b, f| figure(b.target, f, num));
const S_PERF: Column<ScoreBench> = col("perf", "perf", |b, f| {
    shown(b.perf, f, |v| format!("{v:.2}"))
});
const S_PERF_TARGET: Column<ScoreBench> = col("perf_tgt", "perf_target", |b, f| {
    shown(b.perf_target, f, |v| format!("{v}"))
});
const S_SD_TARGET: Column<ScoreBench> = col("sd%_tgt", "sd_target", |b, f| {
    shown(b.sd_target, f, |v| format!("{:.0}%", v * 100.0))
});
const S_PERF_PASS: Column<ScoreBench> = col("perf_pass", "perf_pass", |b, f| flag(b.perf_pass, f));
const S_SD_PASS: Column<ScoreBench> = col("sd%_pass", "sd_pass", |b, f| flag(b.sd_pass, f));

/// The score scoring's columns as data: every figure, in the JSON document's order.
const SCORE_DATA: &[Column<ScoreBench>] = &[
    S_BENCH,
    S_N,
    S_MEAN,
    S_SD,
    S_SD_PCT,
    S_TARGET,
    S_PERF,
    S_PERF_TARGET,
    S_SD_TARGET,
    S_PERF_PASS,
    S_SD_PASS,
];

/// The score scoring's columns for people: the targets first, each verdict beside its
/// figure, no `sd` (sd% says it).
const SCORE_PEOPLE: &[Column<ScoreBench>] = &[
    S_BENCH,
    S_N,
    S_TARGET,
    S_PERF_TARGET,
    S_SD_TARGET,
    S_MEAN,
    S_PERF,
    S_PERF_PASS,
    S_SD_PCT,
    S_SD_PASS,
];

/// `benches` under `columns`, in `form`.
fn laid_out<B>(columns: &[Column<B>], benches: &[B], form: Form) -> Rows {
    let header: Vec<&str> = columns
        .iter()
        .map(|c| match form {
            Form::People => c.people,
            Form::Data => c.data,
        })
        .collect();
    let rows = benches
        .iter()
        .map(|b| columns.iter().map(|c| (c.cell)(b, form)).collect())
        .collect();
    Rows::new("", &header, rows)
}

/// The bench table of `report` in `form` (untitled).
pub fn bench_table(report: &Report, form: Form) -> Rows {
    match (report, form) {
        (Report::Classic(r), _) => laid_out(CLASSIC, &r.benches, form),
        (Report::Score(r), Form::People) => laid_out(SCORE_PEOPLE, &r.benches, form),
        (Report::Score(r), Form::Data) => laid_out(SCORE_DATA, &r.benches, form),
    }
}

/// The bench table as data (CSV): [`bench_table`], then beside each bench `--ci`'s
/// interval (`ci_low`, `ci_high`), the precision's half-widths and runs needed, and,
/// where the runs have telemetry, the energy's figures ([`super::energy::DATA_COLUMNS`])
/// (empty where unknown). For people these are tables of their own.
pub fn bench_data(doc: &ReportDoc) -> Rows {
    let mut t = bench_table(&doc.report, Form::Data);
    if let Some(ci) = &doc.ci {
        t.header.extend(["ci_low", "ci_high"].map(String::from));
        for row in &mut t.rows {
            let interval = ci.by_bench.get(&row[0]).and_then(|c| c.ci);
            row.push(raw(interval.map(|c| c[0])));
            row.push(raw(interval.map(|c| c[1])));
        }
    }
    if let Some(p) = &doc.precision {
        t.header.extend(
            [
                "fixed_half_width",
                "fixed_runs_needed",
                "anytime_half_width",
                "anytime_runs_needed",
            ]
            .map(String::from),
        );
        for row in &mut t.rows {
            let bench = p.benches.iter().find(|b| b.bench == row[0]);
            let count = |n: Option<u32>| n.map_or_else(String::new, |n| n.to_string());
            row.push(raw(bench.and_then(|b| b.fixed.half_width)));
            row.push(count(bench.and_then(|b| b.fixed.runs_needed)));
            row.push(raw(bench.and_then(|b| b.anytime.half_width)));
            row.push(count(bench.and_then(|b| b.anytime.runs_needed)));
        }
    }
    if let Some(e) = &doc.energy {
        t.header
            .extend(super::energy::DATA_COLUMNS.map(String::from));
        for row in &mut t.rows {
            let cells = super::energy::data_cells(e, &row[0]);
            row.extend(cells);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    /// Both forms list the same benches in the same order, and every column people read
    /// is a column of the data, with the same figure (the data's at full precision).
    #[test]
    fn both_forms_show_the_same_benches_and_figures() {
        for doc in [testdata::classic_doc(), testdata::score_doc()] {
            let people = bench_table(&doc.report, Form::People);
            let data = bench_table(&doc.report, Form::Data);
            let first = |t: &Rows| t.rows.iter().map(|r| r[0].clone()).collect::<Vec<_>>();
            assert_eq!(first(&people), first(&data));
            for (i, name) in people.header.iter().enumerate() {
                let in_data = name
                    .replace("sd%_tgt", "sd_target")
                    .replace("perf_tgt", "perf_target");
                let in_data = in_data
                    .replace("sd%_pass", "sd_pass")
                    .replace("sd%", "sd_pct");
                let j = data.header.iter().position(|h| *h == in_data).unwrap();
                for (p, d) in people.rows.iter().zip(&data.rows) {
                    match (p[i].as_str(), d[j].as_str()) {
                        ("—", d) => assert_eq!(d, ""),
                        ("PASS", d) => assert_eq!(d, "true"),
                        ("FAIL", d) => assert_eq!(d, "false"),
                        _ => {}
                    }
                }
            }
        }
    }
}
