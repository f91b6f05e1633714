//! The loader: report files into samples, for every command that computes on them.
//!
//! Two ways in, one way through:
//! - a folder tree (or files) found by [`mlbench_schema::discover()`], read from disk in
//!   parallel ([`load_samples`]: `report`'s fast path, never through the intake);
//! - a submission as the validator's intake reads it, a zip in place or a folder, with
//!   the same limits and container checks ([`load_submission`], [`samples_of_intake`]:
//!   `grid`, `plot`, and `report` on a zip).
//!
//! Both choose the suite with [`mlbench_schema::choose_suite`], extract each file's
//! samples as soon as it is parsed ([`FileSamples::extract`], lean), put them together
//! with [`SampleSet::assemble`] and pick the jobs file with [`pick_jobs_file`].

use crate::expected::pick_jobs_file;
use crate::samples::{FileSamples, SampleSet};
use mlbench_schema::SystemInfo;
use mlbench_schema::read_buffer::{Links, read_regular};
use mlbench_schema::reader::{FileName, ReadError, ReportFile, parse_report, parse_report_lean};
use mlbench_schema::{Discovery, JobsFile, ReportEntry, SuiteError, TargetTable, choose_suite};
use mlbench_validator::layout::{Role, classify};
use mlbench_validator::{
    Intake, IntakeError, Limits, Severity, SubmittedFile, list_submission, read_submission,
};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Why a submission could not be loaded. Every variant names the submission.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The path could not be read (missing, not a folder or zip, unreadable).
    #[error(transparent)]
    Intake(#[from] IntakeError),
    /// The container is unsafe or broken (the validator's `archive.*` and `file.*` errors).
    #[error("{}: {location}: {found} (run `mlbench validate {}` for every problem)", .path.display(), .path.display())]
    Container {
        /// The submission.
        path: PathBuf,
        /// The rule of the first error.
        rule: &'static str,
        /// Where in the submission.
        location: String,
        /// What was found there.
        found: String,
    },
    /// No suite could be chosen.
    #[error("{}: {error}", .path.display())]
    Suite {
        /// The submission.
        path: PathBuf,
        /// Why.
        error: SuiteError,
    },
    /// Report entries could not be read (the loaders that compare whole submissions
    /// refuse them; `report` lists them instead).
    #[error(
        "{}: {count} unreadable report entr{} (first: {first}); run `mlbench validate` on it",
        .path.display(),
        if *.count == 1 { "y" } else { "ies" }
    )]
    Unreadable {
        /// The submission.
        path: PathBuf,
        /// How many problems.
        count: usize,
        /// The first, with its file, entry and field or offset.
        first: Box<ReadError>,
    },
}

/// What a loader read.
pub struct LoadedSamples {
    /// The samples.
    pub set: SampleSet,
    /// Every problem met reading the files.
    pub errors: Vec<ReadError>,
    /// Report files of other suites passed over.
    pub other_suites: Vec<String>,
    /// Files not named like reports.
    pub ignored: usize,
    /// Jobs files met among them (not counted in `ignored`).
    pub jobs_files: Vec<String>,
    /// The machines the runs ran on (`system.json`, `system.<host>.json` that read).
    pub systems: Vec<SystemInfo>,
    /// The jobs file the submission ran, picked among them ([`pick_jobs_file`]), or why
    /// none was.
    pub jobs: Result<Option<(String, JobsFile)>, String>,
}

/// A submission read into samples, with its files.
pub struct LoadedSubmission {
    /// Its files as read (for provenance, validation, `SUBMISSION.json`, loss curves).
    pub intake: Intake,
    /// Its samples.
    pub set: SampleSet,
}

/// What every loader does once each file is extracted: the problems collected, the
/// samples put together, the jobs file picked.
struct Gathered<'a> {
    suite: &'a str,
    other_suites: Vec<String>,
    ignored: usize,
    jobs: Vec<(String, Vec<u8>)>,
    systems: Vec<SystemInfo>,
}

impl Gathered<'_> {
    fn into_loaded(
        self,
        targets: &TargetTable,
        parts: Vec<(Vec<ReadError>, FileSamples)>,
        entry_at: impl Fn(usize, usize) -> Option<ReportEntry>,
    ) -> LoadedSamples {
        let mut errors = Vec::new();
        let parts = parts
            .into_iter()
            .map(|(e, part)| {
                errors.extend(e);
                part
            })
            .collect();
        let set = SampleSet::assemble(self.suite, targets, parts, entry_at);
        LoadedSamples {
            set,
            errors,
            other_suites: self.other_suites,
            ignored: self.ignored,
            systems: self.systems,
            jobs: pick_jobs_file(self.suite, &self.jobs),
            jobs_files: self.jobs.into_iter().map(|(name, _)| name).collect(),
        }
    }
}

/// One file's problems and samples, as soon as it is parsed.
fn extract(file: &ReportFile, targets: &TargetTable) -> (Vec<ReadError>, FileSamples) {
    (
        file.parsed.errors.clone(),
        FileSamples::extract(file, targets),
    )
}

/// Reads the files of a discovery in parallel, extracting samples from each as soon as
/// it is parsed (memory stays small however large the submission).
pub fn load_samples(discovery: Discovery, targets: &TargetTable) -> LoadedSamples {
    // Jobs files are small (discovery read those it recognised, up to 4 MiB).
    let jobs: Vec<(String, Vec<u8>)> = discovery
        .jobs_files
        .iter()
        .zip(&discovery.jobs_paths)
        .filter_map(|(name, path)| Some((name.clone(), read_regular(path, Links::Refuse).ok()?)))
        .collect();
    let mut systems: Vec<SystemInfo> = discovery
        .system_paths
        .iter()
        .filter_map(|path| SystemInfo::from_json(&read_regular(path, Links::Refuse).ok()?))
        .collect();
    systems.sort_by(|a, b| a.hostname.cmp(&b.hostname));
    let suite = discovery.suite.clone();
    let gathered = Gathered {
        suite: &suite,
        other_suites: discovery.other_suites.clone(),
        ignored: discovery.ignored,
        jobs,
        systems,
    };
    let paths: Vec<(PathBuf, String)> = discovery
        .files
        .iter()
        .map(|f| (f.path.clone(), f.display.clone()))
        .collect();
    let clock = mlbench_schema::Timings::start();
    // Each entry reduced to its sample as it is parsed: a large stream is never whole.
    let parts = mlbench_schema::discover::map_contents(discovery, |found, content| {
        let (display, run, name) = (&found.display, &found.run, &found.name);
        match content {
            Ok(content) => FileSamples::extract_content(display, run, name, content, targets),
            Err(e) => (vec![e], FileSamples::begin(display, run, name)),
        }
    });
    clock.lap("  parse files and extract samples");
    let loaded = gathered.into_loaded(targets, parts, |file, entry| {
        let (path, display) = &paths[file];
        mlbench_schema::reader::read_entry_at(path, display, entry)
    });
    clock.lap("  assemble the samples");
    loaded
}

/// The files of a zip or folder, refusing one whose container is unsafe or broken (the
/// validator's error findings of the intake).
pub fn read_intake(path: &Path, limits: &Limits) -> Result<Intake, LoadError> {
    refuse_broken(read_submission(path, limits)?, path)
}

/// `intake`, unless its container is unsafe or broken.
fn refuse_broken(intake: Intake, path: &Path) -> Result<Intake, LoadError> {
    if let Some(f) = intake
        .findings
        .iter()
        .find(|f| f.severity == Severity::Error)
    {
        return Err(LoadError::Container {
            path: path.to_path_buf(),
            rule: f.rule,
            location: f.location(),
            found: f.found.clone(),
        });
    }
    Ok(intake)
}

/// The report files of `intake` (read from `path`) read into samples of one suite, as
/// [`load_samples`] reads a folder: the suite is `suite`, or the only one present
/// ([`choose_suite`]); reports of other suites, jobs files and other files are counted
/// (what `mlbench pack` adds and the runs' `summary.txt` are not); problems in entries
/// are listed.
pub fn samples_of_intake(
    intake: &Intake,
    path: &Path,
    suite: Option<&str>,
    targets: &TargetTable,
) -> Result<LoadedSamples, LoadError> {
    let mut reports: Vec<(usize, FileName, String)> = Vec::new();
    let mut jobs: Vec<(String, Vec<u8>)> = Vec::new();
    let mut ignored = 0;
    for (i, file) in intake.files.iter().enumerate() {
        match classify(file) {
            Role::Report { name, run } => reports.push((i, name, run)),
            role => sort_other(file, role, &mut jobs, &mut ignored),
        }
    }
    let choice = choose_suite_of(reports.iter().map(|(_, name, _)| name.suite()), suite, path)?;
    reports.retain(|(_, name, _)| name.suite() == choice.suite);
    reports.sort_by(|a, b| (&a.2, &intake.files[a.0].path).cmp(&(&b.2, &intake.files[b.0].path)));
    let parts: Vec<(Vec<ReadError>, FileSamples)> = reports
        .par_iter()
        .map(|(i, name, run)| {
            let file = &intake.files[*i];
            let report = ReportFile {
                path: PathBuf::from(&file.path),
                display: file.path.clone(),
                name: name.clone(),
                run: run.clone(),
                parsed: parse_report_lean(&file.path, &file.bytes),
            };
            extract(&report, targets)
        })
        .collect();
    let gathered = Gathered {
        suite: &choice.suite,
        other_suites: choice.others.clone(),
        ignored,
        jobs,
        systems: mlbench_validator::SubmissionInfo::systems_of(&intake.files),
    };
    Ok(gathered.into_loaded(targets, parts, |file, entry| {
        let f = &intake.files[reports[file].0];
        parse_report(&f.path, &f.bytes)
            .entries
            .into_iter()
            .find(|(i, _)| *i == entry)
            .map(|(_, e)| e)
    }))
}

/// What a file that is not a report adds: a jobs file, or one more file passed over (the
/// pack's manifest and description and the runs' logs are expected, not counted).
fn sort_other(
    file: &SubmittedFile,
    role: Role,
    jobs: &mut Vec<(String, Vec<u8>)>,
    ignored: &mut usize,
) {
    match role {
        Role::Jobs => jobs.push((file.path.clone(), file.bytes.clone())),
        Role::Unknown => *ignored += 1,
        Role::Report { .. } | Role::Pack => {}
    }
}

/// The suite to read among the reports' suites ([`choose_suite`]).
fn choose_suite_of<'a>(
    suites: impl Iterator<Item = &'a str>,
    suite: Option<&str>,
    path: &Path,
) -> Result<mlbench_schema::SuiteChoice, LoadError> {
    choose_suite(suites, suite).map_err(|error| LoadError::Suite {
        path: path.to_path_buf(),
        error,
    })
}

/// [`load_submission`] for a caller that needs the samples but not the report files'
/// bytes (`grid` without its HTML page): each report is parsed and reduced to samples
/// as soon as it is read, in its reading thread's reused buffer, and the intake keeps the
/// other files only (the manifest, jobs files, machine descriptions). The same samples,
/// the same errors; an entry is read again from the submission only to describe a
/// configuration conflict.
pub fn load_submission_lean(
    path: &Path,
    suite: Option<&str>,
    targets: &TargetTable,
    limits: &Limits,
) -> Result<LoadedSubmission, LoadError> {
    let listing = list_submission(path, limits)?;
    let is_report = |p: &str| {
        matches!(
            mlbench_schema::layout::classify(p, || false),
            Role::Report { .. }
        )
    };
    let (intake, reduced) = listing.read_apart(is_report, |p, content| {
        // Only reports are read apart: the role is always a report's.
        let Role::Report { name, run } = mlbench_schema::layout::classify(p, || false) else {
            return None;
        };
        let part = FileSamples::extract_content(p, &run, &name, content, targets);
        Some((name, run, part))
    });
    let reduced: Vec<_> = reduced
        .into_iter()
        .filter_map(|(p, part)| Some((p, part?)))
        .collect();
    let intake = refuse_broken(intake, path)?;
    let (mut jobs, mut ignored) = (Vec::new(), 0);
    for file in &intake.files {
        sort_other(file, classify(file), &mut jobs, &mut ignored);
    }
    let choice = choose_suite_of(
        reduced.iter().map(|(_, (name, _, _))| name.suite()),
        suite,
        path,
    )?;
    let mut reports: Vec<(String, String, (Vec<ReadError>, FileSamples))> = reduced
        .into_iter()
        .filter(|(_, (name, _, _))| name.suite() == choice.suite)
        .map(|(p, (_, run, part))| (p, run, part))
        .collect();
    reports.sort_by(|a, b| (&a.1, &a.0).cmp(&(&b.1, &b.0)));
    let (paths, parts): (Vec<String>, Vec<_>) =
        reports.into_iter().map(|(p, _, part)| (p, part)).unzip();
    let gathered = Gathered {
        suite: &choice.suite,
        other_suites: choice.others.clone(),
        ignored,
        jobs,
        systems: mlbench_validator::SubmissionInfo::systems_of(&intake.files),
    };
    let loaded = gathered.into_loaded(targets, parts, |file, entry| {
        let bytes = listing.read_again(&paths[file])?;
        parse_report(&paths[file], &bytes)
            .entries
            .into_iter()
            .find(|(i, _)| *i == entry)
            .map(|(_, e)| e)
    });
    whole_submission(intake, loaded, path)
}

/// The submission at `path`, unless an entry of it could not be read (the callers compare
/// whole submissions).
fn whole_submission(
    intake: Intake,
    mut loaded: LoadedSamples,
    path: &Path,
) -> Result<LoadedSubmission, LoadError> {
    if !loaded.errors.is_empty() {
        let count = loaded.errors.len();
        return Err(LoadError::Unreadable {
            path: path.to_path_buf(),
            count,
            first: Box::new(loaded.errors.swap_remove(0)),
        });
    }
    Ok(LoadedSubmission {
        intake,
        set: loaded.set,
    })
}

/// Reads the submission at `path` (a zip, read in place, or a folder) and extracts the
/// samples of suite `suite` (the only one when `None`) under `targets`' selection rules
/// and exclusions. An unreadable entry is an error here: the callers compare whole
/// submissions.
pub fn load_submission(
    path: &Path,
    suite: Option<&str>,
    targets: &TargetTable,
    limits: &Limits,
) -> Result<LoadedSubmission, LoadError> {
    let intake = read_intake(path, limits)?;
    let loaded = samples_of_intake(&intake, path, suite, targets)?;
    whole_submission(intake, loaded, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlbench_schema::Scoring;

    fn entry(bench: &str, value: f64) -> String {
        format!(
            r#"{{"name": "{bench}", "version": "v", "vcd": "0", "batch_loss": [1.0, 0.5], "train_item": {{"avg": {value}}}}}"#
        )
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn targets() -> TargetTable {
        TargetTable::builtin(Scoring::Classic, "RTX").unwrap()
    }

    /// Two runs of suite `fast` (one GPU, `vae`), a jobs file and a note.
    fn folder() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "output0/fast_0.json",
            &format!("[{}]", entry("vae", 10.0)),
        );
        write(
            dir.path(),
            "output1/fast_0.json",
            &format!("[{}]", entry("vae", 12.0)),
        );
        write(dir.path(), "output1/summary.txt", "log");
        write(dir.path(), "notes.md", "hello");
        write(
            dir.path(),
            "fast.json",
            r#"[{"name": "vae", "cmd": "./vae/run.sh", "args": {}}]"#,
        );
        dir
    }

    #[test]
    fn a_folder_reads_the_same_through_either_way_in() {
        let dir = folder();
        let limits = Limits::default();
        let sub = load_submission(dir.path(), None, &targets(), &limits).unwrap();
        let discovery = mlbench_schema::discover(&[dir.path().to_path_buf()], None).unwrap();
        let folder = load_samples(discovery, &targets());
        let values = |set: &SampleSet| -> Vec<(u32, Option<f64>)> {
            set.samples.iter().map(|s| (s.run, s.value)).collect()
        };
        assert_eq!(values(&sub.set), [(0, Some(10.0)), (1, Some(12.0))]);
        assert_eq!(values(&sub.set), values(&folder.set));
        assert_eq!(sub.set.runs, folder.set.runs);
        let intake = read_intake(dir.path(), &limits).unwrap();
        let loaded = samples_of_intake(&intake, dir.path(), Some("fast"), &targets()).unwrap();
        assert_eq!(loaded.ignored, folder.ignored);
        assert_eq!(loaded.ignored, 1, "notes.md only");
        assert_eq!(loaded.jobs_files, folder.jobs_files);
        assert_eq!(loaded.jobs.unwrap().unwrap().0, "fast.json");
    }

    /// The lean load (reports reduced as they are read, `grid`'s) gives the samples, the
    /// conflicts (whose differences read an entry again) and the notes of the whole load,
    /// and an intake of the other files.
    #[test]
    fn the_lean_load_gives_what_the_whole_load_gives() {
        let dir = folder();
        write(
            dir.path(),
            "output2/fast_0.json",
            &format!(
                "[{}]",
                entry("vae", 11.0).replacen("\"vcd\"", "\"batch_size\": 64, \"vcd\"", 1)
            ),
        );
        let limits = Limits::default();
        let whole = load_submission(dir.path(), None, &targets(), &limits).unwrap();
        let lean = load_submission_lean(dir.path(), None, &targets(), &limits).unwrap();
        assert_eq!(format!("{:?}", lean.set), format!("{:?}", whole.set));
        assert_eq!(lean.set.conflicts.len(), 1);
        assert_eq!(
            lean.set.conflicts[0].differences.len(),
            1,
            "{:?}",
            lean.set.conflicts
        );
        let paths = |i: &Intake| i.files.iter().map(|f| f.path.clone()).collect::<Vec<_>>();
        assert_eq!(
            paths(&lean.intake),
            ["fast.json", "notes.md", "output1/summary.txt"]
        );
        assert_eq!(lean.intake.findings, whole.intake.findings);
    }

    type Loader =
        fn(&Path, Option<&str>, &TargetTable, &Limits) -> Result<LoadedSubmission, LoadError>;

    #[test]
    fn errors_name_the_submission() {
        for load in [load_submission as Loader, load_submission_lean] {
            errors_name_the_submission_with(load);
        }
    }

    fn errors_name_the_submission_with(load_submission: Loader) {
        let dir = folder();
        let path = dir.path();
        let limits = Limits::default();
        // The suite: one choice, one message.
        write(
            path,
            "output0/baselines_0.json",
            &format!("[{}]", entry("vae", 1.0)),
        );
        let err = load_submission(path, None, &targets(), &limits)
            .err()
            .unwrap();
        assert!(matches!(
            &err,
            LoadError::Suite {
                error: SuiteError::Several { .. },
                ..
            }
        ));
        assert_eq!(
            err.to_string(),
            format!(
                "{}: reports of several suites found (baselines, fast); choose one",
                path.display()
            )
        );
        let err = load_submission(path, Some("nope"), &targets(), &limits)
            .err()
            .unwrap();
        assert!(
            err.to_string().ends_with(
                "no report files of suite `nope` found (suites present: baselines, fast)"
            ),
            "{err}"
        );
        assert!(load_submission(path, Some("fast"), &targets(), &limits).is_ok());
        // Unreadable entries: every problem counted (name, version and train_item of each
        // of two entries), the first named with its file.
        write(
            path,
            "output1/fast_1.json",
            "[{\"name\": 3}, {\"name\": 4}]",
        );
        let err = load_submission(path, Some("fast"), &targets(), &limits)
            .err()
            .unwrap();
        let LoadError::Unreadable { count, first, .. } = &err else {
            panic!("{err}");
        };
        assert_eq!((*count, first.file.as_str()), (6, "output1/fast_1.json"));
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "{}: 6 unreadable report entries (first: ",
                path.display()
            )),
            "{text}"
        );
        assert!(text.ends_with("); run `mlbench validate` on it"), "{text}");
        // A container the intake refuses, and a path that is none.
        let zip = path.join("broken.zip");
        std::fs::write(&zip, b"PK\x03\x04 not really").unwrap();
        let err = load_submission(&zip, None, &targets(), &limits)
            .err()
            .unwrap();
        assert!(matches!(err, LoadError::Container { .. }), "{err}");
        assert!(err.to_string().contains("(run `mlbench validate "), "{err}");
        let err = load_submission(&path.join("missing"), None, &targets(), &limits)
            .err()
            .unwrap();
        assert!(
            matches!(err, LoadError::Intake(IntakeError::NotFound(_))),
            "{err}"
        );
        let empty = tempfile::tempdir().unwrap();
        let err = load_submission(empty.path(), None, &targets(), &limits)
            .err()
            .unwrap();
        assert!(matches!(
            err,
            LoadError::Suite {
                error: SuiteError::NoReports,
                ..
            }
        ));
    }
}
