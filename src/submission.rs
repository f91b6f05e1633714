//! One vendor's submission (a zip or a folder) read into samples, for the commands that
//! compare submissions (`grid`, `plot`) and for `report` on a zip. The container is read with the validator's
//! intake (same limits, zips in place), the report files with the schema's reader, the
//! samples with the analyzer's extraction: the same path `report` takes, from memory.

use anyhow::bail;
use mlbench_analyzer::samples::FileSamples;
use mlbench_analyzer::{LoadedSamples, SampleSet};
use mlbench_schema::reader::{FileName, ReadError, ReportFile, parse_report};
use mlbench_schema::{ReportEntry, TargetTable};
use mlbench_validator::layout::{Role, classify};
use mlbench_validator::{Intake, Limits, read_submission};
use rayon::prelude::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A submission read into samples.
pub struct LoadedSubmission {
    /// Its files as read (for provenance and validation).
    pub intake: Intake,
    /// Its samples.
    pub set: SampleSet,
}

/// Reads `path` and extracts the samples of suite `suite` (the only or most common one when
/// `None`) under `targets`' selection rules and exclusions. An unreadable entry is an error
/// here (the grid compares whole submissions); `report` lists them instead.
pub fn load(
    path: &Path,
    suite: Option<&str>,
    targets: &TargetTable,
    limits: &Limits,
) -> anyhow::Result<LoadedSubmission> {
    let intake = read_intake(path, limits)?;
    let loaded = samples_of_intake(&intake, path, suite, targets)?;
    if let Some(first) = loaded.errors.first() {
        let n = loaded.errors.len();
        bail!(
            "{}: {n} unreadable report entr{} (first: {first}); run `mlbench validate` on it",
            path.display(),
            if n == 1 { "y" } else { "ies" }
        );
    }
    Ok(LoadedSubmission {
        intake,
        set: loaded.set,
    })
}

/// The files of a zip or folder, refusing one whose container is unsafe or broken (the
/// validator's `archive.*` errors).
pub fn read_intake(path: &Path, limits: &Limits) -> anyhow::Result<Intake> {
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
    Ok(intake)
}

/// The report files of `intake` read into samples of one suite, as `discover` and
/// `load_samples` read a folder: the suite is `suite`, or the only one present; reports of
/// other suites, jobs files and other files are counted; problems in entries are listed.
pub fn samples_of_intake(
    intake: &Intake,
    path: &Path,
    suite: Option<&str>,
    targets: &TargetTable,
) -> anyhow::Result<LoadedSamples> {
    let mut reports: Vec<(usize, FileName, String)> = Vec::new();
    let mut jobs_files = Vec::new();
    let mut jobs_bytes: Vec<(String, Vec<u8>)> = Vec::new();
    let mut ignored = 0;
    for (i, file) in intake.files.iter().enumerate() {
        match classify(file) {
            Role::Report { name, run } => reports.push((i, name, run)),
            Role::Jobs => {
                jobs_files.push(file.path.clone());
                jobs_bytes.push((file.path.clone(), file.bytes.clone()));
            }
            // What `mlbench pack` adds is not passed over, it is the container's own.
            Role::Pack if matches!(file.path.as_str(), "MANIFEST.sha256" | "SUBMISSION.json") => {}
            Role::Pack | Role::Unknown => ignored += 1,
        }
    }
    let suites: BTreeSet<&str> = reports.iter().map(|(_, name, _)| name.suite()).collect();
    let chosen = match suite {
        Some(s) => s.to_owned(),
        None => match suites.len() {
            0 => bail!("{}: no report files found", path.display()),
            1 => suites
                .iter()
                .next()
                .map(|s| (*s).to_owned())
                .unwrap_or_default(),
            _ => bail!(
                "{}: reports of several suites ({}); choose one with --name",
                path.display(),
                suites.iter().copied().collect::<Vec<_>>().join(", ")
            ),
        },
    };
    let other_suites: Vec<String> = suites
        .iter()
        .filter(|s| **s != chosen)
        .map(|s| (*s).to_owned())
        .collect();
    reports.retain(|(_, name, _)| name.suite() == chosen);
    if reports.is_empty() {
        bail!("{}: no report files of suite `{chosen}`", path.display());
    }
    reports.sort_by(|a, b| (&a.2, &intake.files[a.0].path).cmp(&(&b.2, &intake.files[b.0].path)));
    let parsed: Vec<(FileSamples, Vec<ReadError>)> = reports
        .par_iter()
        .map(|(i, name, run)| {
            let file = &intake.files[*i];
            let report = ReportFile {
                path: PathBuf::from(&file.path),
                display: file.path.clone(),
                name: name.clone(),
                run: run.clone(),
                parsed: mlbench_schema::reader::parse_report_lean(&file.path, &file.bytes),
            };
            let errors = report.parsed.errors.clone();
            (FileSamples::extract(&report, targets), errors)
        })
        .collect();
    let mut errors = Vec::new();
    let parts = parsed
        .into_iter()
        .map(|(part, e)| {
            errors.extend(e);
            part
        })
        .collect();
    let bytes_of = |file: usize| &intake.files[reports[file].0];
    let set = SampleSet::assemble(
        &chosen,
        targets,
        parts,
        |file, entry| -> Option<ReportEntry> {
            let f = bytes_of(file);
            parse_report(&f.path, &f.bytes)
                .entries
                .into_iter()
                .find(|(i, _)| *i == entry)
                .map(|(_, e)| e)
        },
    );
    Ok(LoadedSamples {
        set,
        errors,
        other_suites,
        ignored,
        jobs: mlbench_analyzer::pick_jobs_file(&chosen, &jobs_bytes),
        jobs_files,
    })
}
