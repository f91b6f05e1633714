//! CSV: one row per bench, full precision, empty cells for missing figures.

use mlbench_analyzer::MeanCi;
use mlbench_analyzer::Report;
use std::collections::BTreeMap;
use std::fmt::Write as _;

fn cell(x: Option<f64>) -> String {
    x.map_or_else(String::new, |v| format!("{v}"))
}

/// Quotes a text cell when it needs it (RFC 4180).
pub fn text(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// Renders the bench table as CSV; with `ci`, two more columns `ci_low,ci_high`.
pub fn render(report: &Report, ci: Option<&BTreeMap<String, MeanCi>>) -> String {
    let plain = render_plain(report);
    let Some(ci) = ci else {
        return plain;
    };
    let benches: Vec<&str> = match report {
        Report::Classic(r) => r.benches.iter().map(|b| b.bench.as_str()).collect(),
        Report::Score(r) => r.benches.iter().map(|b| b.bench.as_str()).collect(),
    };
    let mut out = String::new();
    for (i, line) in plain.lines().enumerate() {
        out.push_str(line);
        if i == 0 {
            out.push_str(",ci_low,ci_high");
        } else if let Some(c) = benches.get(i - 1).and_then(|b| ci.get(*b)) {
            let _ = write!(out, ",{},{}", c.ci[0], c.ci[1]);
        } else {
            out.push_str(",,");
        }
        out.push('\n');
    }
    out
}

fn render_plain(report: &Report) -> String {
    let mut out = String::new();
    match report {
        Report::Classic(r) => {
            out.push_str("bench,n,target,result,sd,sd_pct,diff\n");
            for b in &r.benches {
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{}",
                    text(&b.bench),
                    b.n,
                    cell(b.target),
                    cell(b.result),
                    cell(b.sd),
                    cell(b.sd_pct),
                    cell(b.diff)
                );
            }
        }
        Report::Score(r) => {
            out.push_str(
                "bench,n,mean,sd,sd_pct,target,perf,perf_target,sd_target,perf_pass,sd_pass\n",
            );
            for b in &r.benches {
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{},{}",
                    text(&b.bench),
                    b.n,
                    cell(b.mean),
                    cell(b.sd),
                    cell(b.sd_pct),
                    cell(b.target),
                    cell(b.perf),
                    cell(b.perf_target),
                    cell(b.sd_target),
                    b.perf_pass,
                    b.sd_pass
                );
            }
        }
    }
    out
}
