//! `runs.stopping`: a submission that says it stopped by a rule (`mlbench run --until`,
//! recorded in `system.json`) followed it. The claim is recomputed from the entries with
//! the record's own constants (docs/scoring.md, "How many runs"):
//! - the rule and the method are ones mlbench knows, and the constant c is the one the
//!   stated level, precision and expected CV give (fixed in advance, not tuned);
//! - the submission has the runs the record says it took, within its bounds;
//! - `precision-reached`: every bench with values is within the precision at that count;
//!   `max-runs`: the count is the budget;
//! - and no earlier count (from the first allowed) had every bench within it, where the
//!   rule would have stopped.

use crate::facts::EntryFacts;
use crate::finding::catalogued;
use mlbench_results::validation::Finding;
use mlbench_schema::stopping::{
    ANYTIME_PRECISION, Design, LAI_T_MIXTURE, LogSummary, STOPPED_MAX_RUNS, STOPPED_PRECISION,
    StoppingRule, reached, run_means,
};
use std::collections::BTreeMap;

const RULE: &str = "runs.stopping";

/// `runs.stopping` for each stopping record (`file`, record) found.
pub fn check(
    entries: &[EntryFacts],
    runs: &[String],
    records: &[(String, StoppingRule)],
    out: &mut Vec<Finding>,
) {
    for (file, record) in records {
        if let Some((expected, found)) = inconsistency(entries, runs.len(), record) {
            out.push(
                catalogued(RULE, expected, found)
                    .file(file.clone())
                    .field("stopping"),
            );
        }
    }
}

/// The first way the record disagrees with the data, as (expected, found).
fn inconsistency(
    entries: &[EntryFacts],
    run_count: usize,
    record: &StoppingRule,
) -> Option<(String, String)> {
    if record.rule != ANYTIME_PRECISION || record.method != LAI_T_MIXTURE {
        return Some((
            format!("the rule `{ANYTIME_PRECISION}` with the method `{LAI_T_MIXTURE}`"),
            format!("`{}` with `{}`", record.rule, record.method),
        ));
    }
    let Some(design) = Design::plan(record.level, record.precision, record.expected_cv) else {
        return Some((
            "a level in (0, 1), a precision and an expected CV above 0".into(),
            format!(
                "level {}, precision {}, expected CV {}",
                record.level, record.precision, record.expected_cv
            ),
        ));
    };
    if (design.mixture - record.mixture).abs() > 1e-6 * design.mixture {
        return Some((
            format!(
                "the constant c = {:.6} that the stated expected CV {} gives",
                design.mixture, record.expected_cv
            ),
            format!("c = {} (not fixed in advance)", record.mixture),
        ));
    }
    let runs = u32::try_from(run_count).unwrap_or(u32::MAX);
    if runs != record.runs || runs > record.max_runs || runs < record.min_runs.min(record.max_runs)
    {
        return Some((
            format!(
                "{}, as recorded, between {} and {}",
                runs_text(record.runs),
                record.min_runs,
                record.max_runs
            ),
            format!("{} in the submission", runs_text(runs)),
        ));
    }
    claim_against_data(entries, runs, record, &design)
}

/// Whether the stated end (precision reached, or the budget) and no earlier stop hold.
fn claim_against_data(
    entries: &[EntryFacts],
    runs: u32,
    record: &StoppingRule,
    design: &Design,
) -> Option<(String, String)> {
    let values = run_values(entries);
    let wide_at = |count: u32| -> Option<(String, Option<f64>)> {
        values.iter().find_map(|(bench, by_run)| {
            let firsts: Vec<f64> = by_run.range(..count).map(|(_, v)| *v).collect();
            let half = LogSummary::of(&firsts).and_then(|s| s.anytime_half_width(design));
            let n = u32::try_from(firsts.len()).unwrap_or(u32::MAX);
            (!reached(half, n, design)).then(|| (bench.clone(), half))
        })
    };
    let shown = |h: Option<f64>| {
        h.map_or("unbounded".into(), |h| {
            format!("±{:.2}%", h.exp_m1() * 100.0)
        })
    };
    match record.stopped.as_str() {
        STOPPED_PRECISION => {
            if let Some((bench, half)) = wide_at(runs) {
                return Some((
                    format!(
                        "every bench within ±{}% after {runs} runs",
                        record.precision * 100.0
                    ),
                    format!("{bench} at {}", shown(half)),
                ));
            }
        }
        STOPPED_MAX_RUNS if runs == record.max_runs => {}
        other => {
            return Some((
                format!(
                    "`{STOPPED_PRECISION}`, or `{STOPPED_MAX_RUNS}` after {} runs",
                    record.max_runs
                ),
                format!("`{other}` after {runs} runs"),
            ));
        }
    }
    let first = record.min_runs.max(mlbench_schema::stopping::MIN_RUNS);
    let early = (first..runs).find(|&k| wide_at(k).is_none())?;
    Some((
        format!(
            "a stop after run {early}, where every bench was within ±{}%",
            record.precision * 100.0
        ),
        runs_text(runs),
    ))
}

/// Each bench's value per run ([`run_means`]), failed entries left out.
fn run_values(entries: &[EntryFacts]) -> BTreeMap<String, BTreeMap<u32, f64>> {
    run_means(
        entries
            .iter()
            .filter(|e| e.failure.is_none())
            .filter_map(|e| Some((e.name.as_deref()?, e.run, e.throughput?))),
    )
}

/// `1 run`, `5 runs`.
fn runs_text(runs: u32) -> String {
    mlbench_schema::words::count(runs as usize, "run", "runs")
}

#[cfg(test)]
mod tests;
