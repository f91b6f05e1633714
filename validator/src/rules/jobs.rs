//! The vendor's jobs file against the baselines (`args.disallowed-change`,
//! `jobs.missing-job`, `jobs.extra-job`).

use crate::finding::catalogued;
use mlbench_results::validation::{Finding, Severity};
use mlbench_schema::jobs::{JobsFile, diff};
use mlbench_schema::pyrepr::py_str;
use mlbench_schema::value::Value;

/// Flags a vendor may change in the baseline track (the vendor guide's second list; `--no-cuda`
/// is the other spelling of `--cuda`).
pub const ALLOWED_IN_BASELINE: &[&str] = &[
    "--batch-size",
    "--num-processes",
    "--workers",
    "--cuda",
    "--no-cuda",
];

/// The submission track (the schema's: one type for every crate). In the baseline track
/// only the allowed arguments may change; in the tweaked one anything may, and every
/// change is listed as a warning.
use mlbench_schema::Track;

fn shown(value: &Option<Value>) -> String {
    match value {
        Some(Value::Str(s)) if s.is_empty() => "(bare flag)".into(),
        Some(v) => py_str(v),
        None => "(absent)".into(),
    }
}

/// Compares `vendor` (at `file` in the submission) with `baseline` (`baseline_name`).
pub fn check(
    vendor: &JobsFile,
    file: &str,
    baseline: &JobsFile,
    baseline_name: &str,
    track: Track,
    allow: &[String],
    out: &mut Vec<Finding>,
) {
    let d = diff(baseline, vendor);
    let tweaked = track == Track::Tweaked;
    let relax = |f: Finding| {
        if tweaked {
            f.severity(Severity::Warning)
        } else {
            f
        }
    };
    for name in &d.missing_jobs {
        out.push(relax(
            catalogued(
                "jobs.missing-job",
                format!("job `{name}` as in {baseline_name}"),
                "absent",
            )
            .file(file),
        ));
    }
    for name in &d.extra_jobs {
        out.push(relax(
            catalogued(
                "jobs.extra-job",
                format!("only the jobs of {baseline_name}"),
                format!("job `{name}`"),
            )
            .file(file),
        ));
    }
    for change in &d.changes {
        let allowed =
            ALLOWED_IN_BASELINE.contains(&change.flag.as_str()) || allow.contains(&change.flag);
        if allowed && !tweaked {
            continue;
        }
        let finding = catalogued(
            "args.disallowed-change",
            format!("{} as in {baseline_name}", shown(&change.baseline)),
            shown(&change.vendor),
        )
        .file(file)
        .entry(change.job_index)
        .field(format!("{}.{}", change.job, change.flag));
        out.push(if tweaked {
            finding
                .severity(Severity::Warning)
                .hint("allowed in the tweaked track; listed so the change is disclosed")
        } else {
            finding
        });
    }
}
