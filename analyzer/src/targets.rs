//! Targets made from a baseline submission (`mlbench targets`): for a round where every
//! vendor runs `mlbench run`, the suite's targets (measured by its Python scripts) cannot
//! serve; an organizer measures a baseline machine with `mlbench run` and scores every
//! submission against it.
//!
//! Each bench's target is its classic trimmed mean ([`crate::classic_report`], exactly
//! as `mlbench report --scoring classic` computes its `result`: per run the mean over
//! GPUs, across runs the mean without the lowest and the highest run; docs/scoring.md),
//! under the suite's selection rules and pooling (the built-in tables'), so that
//! `mlbench report` on the baseline submission against the table it made gives a `diff`
//! of 0 on every bench. The table says where it comes from: the submission, its
//! SHA-256 and the digest of its files, its runtime, the tool, and a date only when one
//! is given (the same submission gives the same bytes).

use crate::expected::{Expected, ExpectedFrom};
use crate::load::LoadedSubmission;
use crate::{AnalyzeError, classic_report};
use mlbench_schema::read_buffer::Links;
use mlbench_schema::targets::{BENCH_KEYS, TargetsError, TargetsProvenance};
use mlbench_schema::{Runtime, Scoring, SelectionRule, Target, TargetTable};
use mlbench_submission::SourceKind;
use mlbench_submission::digest::sha256_file;
use mlbench_validator::submission::{SubmissionInfo, content_digest_listed};
use std::path::{Path, PathBuf};

/// What every target is, as the table's provenance says it.
pub const STATISTIC: &str = "classic trimmed mean of train_item.avg: per run the mean over GPUs, across runs the mean without the lowest and the highest run (docs/scoring.md)";

/// Why targets could not be made.
#[derive(Debug, thiserror::Error)]
pub enum MakeTargetsError {
    /// No bench of the submission has a trimmed mean.
    #[error(
        "{}: no bench has a trimmed mean (it needs a throughput in at least 3 runs): no targets to make",
        .0.display()
    )]
    NoTargets(PathBuf),
    /// A GPU model named like a key of the bench rows.
    #[error(
        "GPU model `{0}` is a key of the targets' bench rows ({keys}); name the model otherwise",
        keys = BENCH_KEYS.join(", ")
    )]
    ModelName(String),
    /// A date that is not `YYYY-MM-DD`.
    #[error("date `{0}`: expected YYYY-MM-DD")]
    Date(String),
    /// The zip could not be read again for its SHA-256.
    #[error("{}: cannot read it for its SHA-256: {source}", .path.display())]
    Digest {
        /// The zip.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The statistics could not be computed.
    #[error(transparent)]
    Analyze(#[from] AnalyzeError),
    /// The baseline fails its validation, or was packed with errors.
    #[error(
        "{}: the baseline fails its validation ({what}): its targets would score every vendor against a failing run; `mlbench validate` lists the findings, --allow-failing makes the targets anyway and records it",
        .path.display()
    )]
    FailingBaseline {
        /// The submission.
        path: PathBuf,
        /// The errors, the first few rules and files named.
        what: String,
    },
}

impl mlbench_schema::class::Classify for MakeTargetsError {
    fn class(&self) -> mlbench_schema::class::ErrorClass {
        use MakeTargetsError as E;
        match self {
            E::NoTargets(_) | E::ModelName(_) | E::Date(_) | E::Digest { .. } => {
                mlbench_schema::class::ErrorClass::Input
            }
            E::Analyze(e) => e.class(),
            E::FailingBaseline { .. } => mlbench_schema::class::ErrorClass::Failed,
        }
    }
}

/// How the table is made.
#[derive(Debug, Clone)]
pub struct TargetsOptions {
    /// The GPU model the targets are for: the name of the targets' column.
    pub gpu_model: String,
    /// The tool, `mlbench 0.1.0`.
    pub tool: String,
    /// The date to record (`YYYY-MM-DD`), if any.
    pub date: Option<String>,
    /// Make targets of a baseline that fails its validation (`--allow-failing`).
    pub allow_failing: bool,
}

impl TargetsOptions {
    /// The options, once the model's name and the date are checked (before the
    /// submission is read: [`targets_from`] checks them again).
    pub fn checked(self) -> Result<TargetsOptions, MakeTargetsError> {
        if BENCH_KEYS.contains(&self.gpu_model.as_str()) {
            return Err(MakeTargetsError::ModelName(self.gpu_model));
        }
        if let Some(date) = &self.date {
            check_date(date)?;
        }
        Ok(self)
    }
}

/// Targets made from a submission, with what was left out.
#[derive(Debug, Clone)]
pub struct MadeTargets {
    /// The table (classic scoring, one column: the GPU model).
    pub table: TargetTable,
    /// Why benches were left out, and anything else the organizer should know, one
    /// sentence each.
    pub warnings: Vec<String>,
}

impl MadeTargets {
    /// The comment lines that head the table's file: what it is, and what was left out.
    pub fn comments(&self) -> Vec<String> {
        let mut lines = vec![
            format!(
                "mlbench classic targets for {}, made from a baseline submission by `mlbench targets`.",
                self.table.gpu_model
            ),
            "Each target is the bench's classic trimmed mean of train_item.avg (items/s): per run the".to_owned(),
            "mean over GPUs, across runs the mean without the lowest and the highest run (docs/scoring.md).".to_owned(),
        ];
        for w in &self.warnings {
            lines.push(format!("Note: {w}"));
        }
        lines
    }
}

/// The rules targets are made under: the suite's selection rules and pooling (`scaling`
/// over its world sizes), as the built-in tables have them, with no exclusion (a
/// baseline's every bench gets a target) and no target.
pub fn rules() -> Result<TargetTable, TargetsError> {
    let mut rules = TargetTable::builtin(Scoring::Score, "RTX")?;
    rules.exclude.clear();
    rules.gpu_model = "targets".into();
    Ok(rules)
}

/// Whether `date` is `YYYY-MM-DD` with a month 1–12 and a day 1–31.
pub fn check_date(date: &str) -> Result<(), MakeTargetsError> {
    let bad = || MakeTargetsError::Date(date.to_owned());
    let parts: Vec<&str> = date.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return Err(bad());
    };
    let number = |text: &str, len: usize| {
        (text.len() == len && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse::<u32>().ok())
            .flatten()
    };
    match (number(y, 4), number(m, 2), number(d, 2)) {
        (Some(_), Some(1..=12), Some(1..=31)) => Ok(()),
        _ => Err(bad()),
    }
}

/// How many findings a refusal names.
const NAMED: usize = 3;

/// The validation of the baseline `sub` (its listing, the default rules of its suite),
/// as the table records it: `passed: …`, or `failed: …` when it has errors or its
/// `SUBMISSION.json` says it was packed with errors. A failing one is refused unless
/// `allow_failing`; then the record says so.
pub fn baseline_validation(
    sub: &LoadedSubmission,
    path: &Path,
    allow_failing: bool,
) -> Result<String, MakeTargetsError> {
    let options = mlbench_validator::Options {
        suite: Some(sub.set.suite.clone()),
        min_runs: mlbench_validator::DEFAULT_MIN_RUNS,
        ..mlbench_validator::Options::default()
    };
    let validation = mlbench_validator::validate_listing(&sub.listing, &options);
    let errors = validation.errors();
    let packed = SubmissionInfo::of_files(&sub.intake.files).is_some_and(|i| i.allowed_errors);
    let count = |n, what| mlbench_schema::words::count(n, what, &format!("{what}s"));
    if errors == 0 && !packed {
        return Ok(format!(
            "passed: 0 errors, {}",
            count(validation.warnings(), "warning")
        ));
    }
    let mut what = Vec::new();
    if errors > 0 {
        let named: Vec<String> = (validation.findings.iter())
            .filter(|f| f.severity == mlbench_results::validation::Severity::Error)
            .take(NAMED)
            .map(|f| {
                format!(
                    "{} ({})",
                    f.rule,
                    f.file.as_deref().unwrap_or("(submission)")
                )
            })
            .collect();
        let more = if errors > named.len() { ", …" } else { "" };
        what.push(format!(
            "{}: {}{more}",
            count(errors, "error"),
            named.join(", ")
        ));
    }
    if packed {
        what.push(format!(
            "packed with errors: its {} records allowed_errors",
            mlbench_validator::submission::SUBMISSION_NAME
        ));
    }
    let what = what.join("; ");
    if !allow_failing {
        return Err(MakeTargetsError::FailingBaseline {
            path: path.to_path_buf(),
            what,
        });
    }
    Ok(format!("failed: {what} (--allow-failing)"))
}

/// The batch size of each bench's entries and the other arguments of the baseline
/// track its jobs file gives ([`Target::batch_size`], [`Target::args`]); a bench whose
/// entries ran at several batch sizes gets none, and a warning.
fn record_arguments(sub: &LoadedSubmission, targets: &mut [Target], warnings: &mut Vec<String>) {
    let sizes = crate::batch::batch_sizes(&sub.set);
    let jobs = sub.jobs().ok().flatten();
    for t in targets {
        if let Some(found) = sizes.get(t.bench.as_str()) {
            if let [(size, _)] = found.iter().collect::<Vec<_>>().as_slice() {
                t.batch_size = Some(**size);
            } else {
                let each: Vec<String> = (found.iter())
                    .map(|(size, n)| {
                        format!(
                            "{size} ({})",
                            mlbench_schema::words::count(*n, "entry", "entries")
                        )
                    })
                    .collect();
                warnings.push(format!(
                    "`{}`: its entries ran at batch sizes {}: no batch_size recorded",
                    t.bench,
                    each.join(", ")
                ));
            }
        }
        let Some(job) = jobs.as_ref().and_then(|(_, j)| j.get(&t.bench)) else {
            continue;
        };
        for flag in mlbench_validator::rules::jobs::ALLOWED_IN_BASELINE {
            if let (false, Some(value)) = (*flag == "--batch-size", job.arg(flag)) {
                t.args.insert((*flag).to_owned(), value.clone());
            }
        }
    }
}

/// A target per bench of `report` with a trimmed mean that is a throughput, and why
/// each other bench was left out.
fn bench_targets(
    report: &mlbench_results::report::ClassicReport,
    rules: &TargetTable,
) -> (Vec<Target>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut targets = Vec::new();
    for b in &report.benches {
        match b.result {
            Some(result) if result.is_finite() && result > 0.0 => targets.push(Target {
                bench: b.bench.clone(),
                target: result,
                perf_target: None,
                sd_target: None,
                pool_over: rules.pool_over(&b.bench).to_vec(),
                batch_size: None,
                args: Default::default(),
            }),
            Some(result) => warnings.push(format!(
                "`{}` left out: its trimmed mean is {result}, not a throughput",
                b.bench
            )),
            None => warnings.push(format!(
                "`{}` left out: a throughput in {} run{} (a trimmed mean needs 3)",
                b.bench,
                b.n,
                if b.n == 1 { "" } else { "s" }
            )),
        }
    }
    (targets, warnings)
}

/// The targets of the submission `sub`, read from `path` under [`rules`] (`rules` is the
/// table it was loaded with).
pub fn targets_from(
    sub: &LoadedSubmission,
    path: &Path,
    rules: &TargetTable,
    options: &TargetsOptions,
) -> Result<MadeTargets, MakeTargetsError> {
    let options = &options.clone().checked()?;
    let baseline_validation = baseline_validation(sub, path, options.allow_failing)?;
    let set = &sub.set;
    let none = Expected {
        from: ExpectedFrom::Targets,
        jobs_file: None,
        benches: Vec::new(),
    };
    let report = classic_report(set, rules, &none, 0)?;
    let (mut targets, mut warnings) = bench_targets(&report, rules);
    if targets.is_empty() {
        return Err(MakeTargetsError::NoTargets(path.to_path_buf()));
    }
    record_arguments(sub, &mut targets, &mut warnings);
    if baseline_validation.starts_with("failed") {
        warnings.push(format!(
            "the baseline fails its validation; targets made anyway: {baseline_validation}"
        ));
    }
    if set.summary.smoke > 0 {
        warnings.push(format!(
            "{} of {} entries ran with `mlbench run --smoke` (reduced sizes): these targets are a set-up check's",
            set.summary.smoke, set.summary.entries
        ));
    }
    let systems = SubmissionInfo::systems_of(&sub.intake.files);
    let declared = systems.iter().any(|s| s.synthetic_data);
    let (flagged, entries) = (set.summary.synthetic_data, set.summary.entries);
    if let Some(summary) =
        mlbench_schema::system::synthetic_data_summary(flagged, entries, declared)
    {
        warnings.push(format!("{summary}, nor do these targets"));
    }
    let runtime = crate::runtime::submission_runtime(&systems, set);
    if runtime.runtime.is_none() {
        warnings.push(format!("runtime {}: the table names none", runtime.label()));
    }
    let digest = |source| MakeTargetsError::Digest {
        path: path.to_path_buf(),
        source,
    };
    let sha256 = match sub.intake.kind {
        SourceKind::Zip => Some(sha256_file(path, Links::Follow).map_err(digest)?),
        SourceKind::Folder => None,
    };
    let benches: Vec<&str> = targets.iter().map(|t| t.bench.as_str()).collect();
    let select: Vec<SelectionRule> = rules
        .select
        .iter()
        .filter(|r| benches.contains(&r.bench()))
        .cloned()
        .collect();
    let submission = path.display().to_string();
    let table = TargetTable {
        scoring: Scoring::Classic,
        gpu_model: options.gpu_model.clone(),
        source: format!(
            "submission {submission} (suite `{}`, {} × {}), mlbench targets",
            set.suite,
            mlbench_schema::words::count(set.runs.len(), "run", "runs"),
            mlbench_schema::words::count(set.devices.len(), "GPU", "GPUs")
        ),
        targets,
        exclude: Vec::new(),
        select,
        runtime: runtime.runtime.clone(),
        provenance: Some(TargetsProvenance {
            submission,
            sha256,
            manifest_sha256: content_digest_listed(&sub.listing),
            suite: Some(set.suite.clone()),
            runs: set.runs.len(),
            gpus: set.devices.len(),
            statistic: STATISTIC.to_owned(),
            tool: options.tool.clone(),
            date: options.date.clone(),
            baseline_validation: Some(baseline_validation),
        }),
        swept: None,
    };
    Ok(MadeTargets { table, warnings })
}

/// The runtime a made table names, for a line that says where its figures come from.
pub fn describe(table: &TargetTable) -> String {
    let runtime = table
        .runtime
        .as_ref()
        .map_or_else(|| "runtime unknown".to_owned(), Runtime::to_string);
    format!(
        "{} targets for GPU model {} ({runtime})",
        table.targets.len(),
        table.gpu_model
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::load_submission;
    use mlbench_validator::Limits;

    fn example() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../submissions/example")
    }

    fn options(date: Option<&str>) -> TargetsOptions {
        TargetsOptions {
            gpu_model: "H100".into(),
            tool: "mlbench 0.1.0".into(),
            date: date.map(str::to_owned),
            allow_failing: false,
        }
    }

    #[test]
    fn dates_are_checked() {
        assert!(check_date("2026-01-31").is_ok());
        for bad in [
            "2026-1-31",
            "2026-13-01",
            "2026-01-00",
            "26-01-01",
            "today",
            "",
        ] {
            assert!(check_date(bad).is_err(), "{bad}");
        }
    }

    /// The example's 19 benches, each its classic `result`; the provenance of the folder;
    /// the text reads back as the same table.
    #[test]
    fn the_example_gives_a_target_per_bench() {
        let rules = rules().unwrap();
        let sub = load_submission(&example(), None, &rules, &Limits::default()).unwrap();
        let made = targets_from(&sub, &example(), &rules, &options(Some("2026-01-02"))).unwrap();
        let t = &made.table;
        assert_eq!(t.targets.len(), 19);
        assert!(made.warnings.is_empty(), "{:?}", made.warnings);
        assert_eq!(t.runtime, Some(Runtime::suite_scripts(None)));
        let p = t.provenance.as_ref().unwrap();
        assert_eq!((p.runs, p.gpus, p.sha256.as_deref()), (5, 2, None));
        let whole = mlbench_submission::read_submission(&example(), &Limits::default()).unwrap();
        let digest = mlbench_validator::submission::content_digest(&whole.files);
        assert_eq!(p.manifest_sha256, digest);
        assert_eq!(p.date.as_deref(), Some("2026-01-02"));
        assert_eq!(
            p.baseline_validation.as_deref(),
            Some("passed: 0 errors, 0 warnings")
        );
        // fast.json and the entries: convnet at 64 with 8 workers; atari records its
        // num_processes as its batch size (none recorded), cart runs without CUDA.
        let bench = |b: &str| t.get(b).unwrap();
        assert_eq!(bench("convnet").batch_size, Some(64));
        assert_eq!(bench("convnet_distributed").batch_size, Some(64));
        assert_eq!(bench("atari").batch_size, None);
        let args = |b: &str| {
            (bench(b).args.iter())
                .map(|(k, v)| format!("{k}={}", mlbench_schema::pyrepr::py_repr(v)))
                .collect::<Vec<_>>()
        };
        assert_eq!(args("convnet"), ["--workers=8"]);
        assert_eq!(args("loader"), ["--cuda=''", "--workers=8"]);
        assert_eq!(args("cart"), ["--no-cuda=''"]);
        assert_eq!(args("atari"), ["--cuda=''", "--num-processes=16"]);
        let text = t.to_toml(&made.comments());
        let back = TargetTable::from_toml("t.toml", &text, Scoring::Classic, "H100").unwrap();
        assert_eq!(&back, t);
        let err = targets_from(
            &sub,
            &example(),
            &rules,
            &TargetsOptions {
                gpu_model: "target".into(),
                ..options(None)
            },
        )
        .unwrap_err();
        assert!(matches!(err, MakeTargetsError::ModelName(_)), "{err}");
        assert!(matches!(
            targets_from(&sub, &example(), &rules, &options(Some("soon"))).unwrap_err(),
            MakeTargetsError::Date(_)
        ));
        assert_eq!(
            describe(t),
            "19 targets for GPU model H100 (mila-iqia/training scripts (torch version unknown))"
        );
    }
}
