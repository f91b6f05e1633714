//! One vendor's submission (a zip or a folder) read into samples, for the commands that
//! compare submissions (`grid`, `plot`). The container is read with the validator's
//! intake (same limits, zips in place), the report files with the schema's reader, the
//! samples with the analyzer's extraction: the same path `report` takes, from memory.

use anyhow::bail;
use mlbench_analyzer::SampleSet;
use mlbench_analyzer::samples::FileSamples;
use mlbench_schema::reader::{FileName, ReportFile, parse_report};
use mlbench_schema::{ReportEntry, TargetTable};
use mlbench_validator::layout::{Role, classify};
use mlbench_validator::{Intake, Limits, read_submission};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A submission read into samples.
pub struct LoadedSubmission {
    /// Its files as read (for provenance and validation).
    pub intake: Intake,
    /// Its samples.
    pub set: SampleSet,
}

/// Reads `path` and extracts the samples of suite `suite` (the only or most common one when
/// `None`) under `targets`' selection rules and exclusions.
pub fn load(
    path: &Path,
    suite: Option<&str>,
    targets: &TargetTable,
    limits: &Limits,
) -> anyhow::Result<LoadedSubmission> {
    let intake = read_submission(path, limits)?;
    if let Some(f) = intake
        .findings
        .iter()
        .find(|f| f.severity == mlbench_validator::Severity::Error)
    {
        bail!(
            "{}: {}: {} (run `mlbench validate {}` for every problem)",
            path.display(),
            f.location(),
            f.found,
            path.display()
        );
    }
    let mut reports: Vec<(usize, FileName, String)> = Vec::new();
    for (i, file) in intake.files.iter().enumerate() {
        if let Role::Report { name, run } = classify(file) {
            reports.push((i, name, run));
        }
    }
    let mut per_suite: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, name, _) in &reports {
        *per_suite.entry(name.suite()).or_default() += 1;
    }
    let chosen = match suite {
        Some(s) => s.to_owned(),
        None => match per_suite.len() {
            0 => bail!("{}: no report files found", path.display()),
            1 => per_suite
                .keys()
                .next()
                .map(|s| (*s).to_owned())
                .unwrap_or_default(),
            _ => bail!(
                "{}: reports of several suites ({}); choose one with --name",
                path.display(),
                per_suite.keys().copied().collect::<Vec<_>>().join(", ")
            ),
        },
    };
    reports.retain(|(_, name, _)| name.suite() == chosen);
    if reports.is_empty() {
        bail!("{}: no report files of suite `{chosen}`", path.display());
    }
    reports.sort_by(|a, b| (&a.2, &intake.files[a.0].path).cmp(&(&b.2, &intake.files[b.0].path)));
    let parsed: Vec<(FileSamples, Vec<String>)> = reports
        .par_iter()
        .map(|(i, name, run)| {
            let file = &intake.files[*i];
            let report = ReportFile {
                path: PathBuf::from(&file.path),
                display: file.path.clone(),
                name: name.clone(),
                run: run.clone(),
                parsed: parse_report(&file.path, &file.bytes),
            };
            let errors = report.parsed.errors.iter().map(|e| e.to_string()).collect();
            (FileSamples::extract(&report, targets), errors)
        })
        .collect();
    let errors: Vec<String> = parsed.iter().flat_map(|(_, e)| e.iter().cloned()).collect();
    if let Some(first) = errors.first() {
        bail!(
            "{}: {} unreadable report entr{} (first: {first}); run `mlbench validate` on it",
            path.display(),
            errors.len(),
            if errors.len() == 1 { "y" } else { "ies" }
        );
    }
    let parts = parsed.into_iter().map(|(p, _)| p).collect();
    let bytes_of = |file: usize| &intake.files[reports[file].0];
    let set = SampleSet::assemble(&chosen, parts, |file, entry| -> Option<ReportEntry> {
        let f = bytes_of(file);
        parse_report(&f.path, &f.bytes)
            .entries
            .into_iter()
            .find(|(i, _)| *i == entry)
            .map(|(_, e)| e)
    });
    Ok(LoadedSubmission { intake, set })
}
