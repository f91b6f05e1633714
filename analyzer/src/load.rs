//! The loader: report files into samples, for every command that computes on them.
//!
//! One way through, parametrized by how the bytes arrive:
//! - a folder tree (or files) found by [`mlbench_submission::discover()`], read from disk in
//!   parallel ([`load_samples`]: `report`'s fast path, never through the intake);
//! - a submission read whole by the validator's intake, a zip in place or a folder, with
//!   the same limits and container checks ([`samples_of_intake`], [`load_submission`]:
//!   `report` on a zip, `plot`, `targets`, `grid` with its page);
//! - a submission listed by the intake and its reports read apart, each reduced as it is
//!   read ([`load_submission_lean`]: `grid`).
//!
//! Every way chooses the suite with [`mlbench_schema::choose_suite`] (a discovery has
//! chosen it already), reduces each report to its samples as it is parsed
//! ([`FileSamples::extract_content`], lean), and goes through the rest as one: the
//! reports sorted by run then path, their samples put together with
//! [`SampleSet::assemble`], the jobs file picked with [`pick_jobs_file`]. Only where an
//! entry is read again (to describe a configuration conflict) do the ways differ.

use crate::expected::pick_jobs_file;
use crate::samples::{FileSamples, SampleSet};
use mlbench_results::Severity;
use mlbench_schema::SystemInfo;
use mlbench_schema::choose_suite;
use mlbench_schema::read_buffer::{Links, read_regular};
use mlbench_schema::reader::{Content, FileName, ReadError, parse_report, read_entry_at};
use mlbench_schema::{JobsFile, ReportEntry, SuiteChoice, SuiteError, TargetTable};
use mlbench_submission::{
    DiscoverError, Discovery, Intake, IntakeError, Limits, Listing, Opened, SubmittedFile,
    read_submission,
};
use mlbench_validator::layout::{Role, classify};
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
    /// Report entries could not be read, each listed where the caller lists them; why
    /// nothing was computed ([`LoadedSamples::unreadable_lines`]).
    #[error("{0}")]
    Refused(String),
    /// The report files could not be found or listed, or are of no one suite.
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    /// A zip among other paths: a zipped submission is read alone (its runs are
    /// complete in it).
    #[error("{}: a zipped submission is read alone; give it as the only submission", .0.display())]
    ZipNotAlone(PathBuf),
}

mlbench_schema::classify_all!(Input: LoadError);

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

impl LoadedSamples {
    /// What `report` says of the unreadable files: each problem (`error: …`, or
    /// `warning: …` when `skip`) and a summary line; then, unless `skip`, why no report is
    /// computed (the report then exits 2).
    pub fn unreadable_lines(&self, skip: bool) -> (Vec<String>, Option<String>) {
        let Some(summary) = self.unreadable_summary() else {
            return (Vec::new(), None);
        };
        let level = if skip { "warning" } else { "error" };
        let mut lines: Vec<String> = self
            .errors
            .iter()
            .map(|e| format!("{level}: {e}"))
            .collect();
        if !skip {
            let why = format!(
                "{summary}: no report computed (--skip-unreadable computes one from the entries that could be read)"
            );
            return (lines, Some(why));
        }
        lines.push(format!(
            "warning: {summary}: the report uses only the entries that could be read"
        ));
        (lines, None)
    }

    /// `N problems in M files` of [`LoadedSamples::errors`]; `None` without any.
    pub fn unreadable_summary(&self) -> Option<String> {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let files = self.errors.iter().map(|e| e.file.as_str());
        let files = files.collect::<std::collections::BTreeSet<_>>().len();
        let problems = self.errors.len();
        (problems > 0).then(|| {
            let (ps, fs) = (plural(problems), plural(files));
            format!("{problems} problem{ps} in {files} file{fs}")
        })
    }
}

/// A submission read into samples, with its files.
pub struct LoadedSubmission {
    /// The files the commands read of it (reports, jobs files, the pack's files,
    /// telemetry: every file with a role, [`held_whole`]), for `SUBMISSION.json`, the
    /// machines, the loss curves and the energy.
    pub intake: Intake,
    /// Its listing, every file: what a page validates and hashes, each file read as it
    /// goes.
    pub listing: Listing,
    /// Its samples.
    pub set: SampleSet,
}

impl LoadedSubmission {
    /// The jobs file the submission ran, as the report picks it ([`pick_jobs_file`]).
    pub fn jobs(&self) -> Result<Option<(String, JobsFile)>, String> {
        pick_jobs_file(&self.set.suite, &Others::of_intake(&self.intake).jobs)
    }
}

/// A report file read, reduced to its samples as soon as it arrived.
struct Arrived {
    /// Its path in the submission (relative, `/`-separated: its display).
    path: String,
    /// Its run.
    run: String,
    /// Where its bytes are, in the [`Bytes`] it arrived by.
    at: usize,
    /// Its problems.
    errors: Vec<ReadError>,
    /// Its samples.
    part: FileSamples,
}

impl Arrived {
    /// The report `path` (`name`, `run`, at `at`) reduced as it is parsed from `content`.
    fn reduce(
        (path, name, run, at): (&str, &FileName, &str, usize),
        content: Result<Content<'_>, ReadError>,
        targets: &TargetTable,
    ) -> Arrived {
        let (errors, part) = match content {
            Ok(content) => FileSamples::extract_content(path, run, name, content, targets),
            Err(e) => (vec![e], FileSamples::begin(path, run, name)),
        };
        Arrived {
            path: path.to_owned(),
            run: run.to_owned(),
            at,
            errors,
            part,
        }
    }
}

/// Where the bytes of a submission are: the one thing the ways in differ by, and what an
/// entry is read again from (to describe a configuration conflict).
enum Bytes<'a> {
    /// Files on disk found by [`mlbench_submission::discover()`], read and streamed in
    /// parallel (the discovery's order).
    Disk(Vec<PathBuf>),
    /// Held whole in the validator's intake (the intake's order).
    Held(&'a Intake),
    /// Listed by the validator's intake and read apart, each file in its reading thread's
    /// reused buffer.
    Listed(&'a Listing),
}

impl Bytes<'_> {
    /// Entry `entry` of the report `path` (at `at`), read again in full.
    fn entry_at(&self, at: usize, path: &str, entry: usize) -> Option<ReportEntry> {
        let again;
        let bytes = match self {
            Bytes::Disk(paths) => return read_entry_at(&paths[at], path, entry),
            Bytes::Held(intake) => &intake.files[at].bytes,
            Bytes::Listed(listing) => {
                again = listing.read_again(path)?;
                &again
            }
        };
        parse_report(path, bytes)
            .entries
            .into_iter()
            .find(|(i, _)| *i == entry)
            .map(|(_, e)| e)
    }
}

/// What a submission's files other than reports add.
#[derive(Default)]
struct Others {
    /// Jobs files (name, bytes).
    jobs: Vec<(String, Vec<u8>)>,
    /// The machines the runs ran on.
    systems: Vec<SystemInfo>,
    /// Files passed over.
    ignored: usize,
}

impl Others {
    /// What the submitted `file` of role `role` adds: a jobs file, or one more file passed
    /// over (the pack's manifest and description, the runs' logs and telemetry are expected,
    /// not counted).
    fn add(&mut self, file: &SubmittedFile, role: Role) {
        match role {
            Role::Jobs => self.jobs.push((file.path.clone(), file.bytes.clone())),
            Role::Unknown => self.ignored += 1,
            Role::Report { .. } | Role::Pack | Role::Telemetry | Role::Profile => {}
        }
    }

    /// What the files of an intake other than reports add.
    fn of_intake(intake: &Intake) -> Others {
        let mut others = Others {
            systems: mlbench_validator::SubmissionInfo::systems_of(&intake.files),
            ..Others::default()
        };
        for file in &intake.files {
            match classify(file) {
                Role::Report { .. } => {}
                role => others.add(file, role),
            }
        }
        others
    }

    /// What the files a discovery met other than reports add (jobs files are small:
    /// discovery read those it recognised, up to 4 MiB).
    fn of_discovery(discovery: &Discovery) -> Others {
        let jobs = (discovery.jobs_files.iter().zip(&discovery.jobs_paths))
            .filter_map(|(name, path)| {
                Some((name.clone(), read_regular(path, Links::Refuse).ok()?))
            })
            .collect();
        let mut systems: Vec<SystemInfo> = (discovery.system_paths.iter())
            .filter_map(|path| SystemInfo::from_json(&read_regular(path, Links::Refuse).ok()?))
            .collect();
        systems.sort_by(|a, b| a.hostname.cmp(&b.hostname));
        Others {
            jobs,
            systems,
            ignored: discovery.ignored,
        }
    }
}

/// The one way through, however the bytes arrived: the reports of the suite chosen,
/// sorted by run then path, their problems collected, their samples put together
/// ([`SampleSet::assemble`]), the jobs file picked ([`pick_jobs_file`]).
fn through(
    mut reports: Vec<Arrived>,
    choice: SuiteChoice,
    others: Others,
    bytes: &Bytes<'_>,
    targets: &TargetTable,
) -> LoadedSamples {
    reports.sort_by(|a, b| (&a.run, &a.path).cmp(&(&b.run, &b.path)));
    let mut errors = Vec::new();
    let (places, parts): (Vec<(usize, String)>, Vec<FileSamples>) = reports
        .into_iter()
        .map(|r| {
            errors.extend(r.errors);
            ((r.at, r.path), r.part)
        })
        .unzip();
    let set = SampleSet::assemble(&choice.suite, targets, parts, |file, entry| {
        let (at, path) = &places[file];
        bytes.entry_at(*at, path, entry)
    });
    LoadedSamples {
        set,
        errors,
        other_suites: choice.others,
        ignored: others.ignored,
        systems: others.systems,
        jobs: pick_jobs_file(&choice.suite, &others.jobs),
        jobs_files: others.jobs.into_iter().map(|(name, _)| name).collect(),
    }
}

/// The suite to read among the reports found (`suite`, or the only one present:
/// [`choose_suite`]), and the reports of it.
fn of_suite<T>(
    reports: Vec<T>,
    suite_of: impl Fn(&T) -> &str,
    suite: Option<&str>,
    path: &Path,
) -> Result<(SuiteChoice, Vec<T>), LoadError> {
    let choice =
        choose_suite(reports.iter().map(&suite_of), suite).map_err(|error| LoadError::Suite {
            path: path.to_path_buf(),
            error,
        })?;
    let kept = (reports.into_iter())
        .filter(|r| suite_of(r) == choice.suite)
        .collect();
    Ok((choice, kept))
}

/// Reads the files of a discovery (its suite chosen) in parallel, reducing each entry to
/// its sample as it is parsed: a large stream is never whole, and memory stays small
/// however large the submission.
pub fn load_samples(discovery: Discovery, targets: &TargetTable) -> LoadedSamples {
    let others = Others::of_discovery(&discovery);
    let choice = SuiteChoice {
        suite: discovery.suite.clone(),
        others: discovery.other_suites.clone(),
    };
    let paths = discovery.files.iter().map(|f| f.path.clone()).collect();
    let clock = mlbench_schema::Timings::start();
    let reports = mlbench_submission::discover::map_contents(discovery, |found, content| {
        let found = (found.display.as_str(), &found.name, found.run.as_str(), 0);
        Arrived::reduce(found, content, targets)
    });
    let reports = (reports.into_iter().enumerate())
        .map(|(at, report)| Arrived { at, ..report })
        .collect();
    clock.lap("  parse files and extract samples");
    let loaded = through(reports, choice, others, &Bytes::Disk(paths), targets);
    clock.lap("  assemble the samples");
    loaded
}

/// The report files under `paths`, as [`mlbench_submission::discover()`] finds them;
/// folders (when every path is one) are opened, each walked once, and handed back with
/// them for what else reads them (energy, a page's checks, digests and power traces),
/// within `max_bytes`.
///
/// # Errors
/// As [`mlbench_submission::discover()`].
pub fn discover_inputs(
    paths: &[PathBuf],
    suite: Option<&str>,
    max_bytes: u64,
) -> Result<(Discovery, Vec<Opened>), DiscoverError> {
    let limits = Limits::within(max_bytes);
    // Folders only: each walked once, for the discovery and every later reader.
    let opened: Vec<Opened> = match paths.iter().all(|p| p.is_dir()) {
        true => (paths.iter())
            .map_while(|p| Opened::open(p, &limits).ok())
            .collect(),
        false => Vec::new(),
    };
    let all = (opened.len() == paths.len()).then_some(&opened[..]);
    let discovery = match all.and_then(|opened| Opened::discover_all(opened, suite)) {
        Some(discovery) => discovery?,
        None => mlbench_submission::discover(paths, suite)?,
    };
    Ok((discovery, opened))
}

/// The files of a zip or folder, refusing one whose container is unsafe or broken (the
/// validator's error findings of the intake).
pub fn read_intake(path: &Path, limits: &Limits) -> Result<Intake, LoadError> {
    refuse_broken(read_submission(path, limits)?, path)
}

/// `intake`, unless its container is unsafe or broken.
fn refuse_broken(intake: Intake, path: &Path) -> Result<Intake, LoadError> {
    if let Some(f) = (intake.facts.iter())
        .map(mlbench_validator::finding::of_fact)
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
    let found: Vec<(usize, FileName, String)> = (intake.files.iter().enumerate())
        .filter_map(|(at, file)| match classify(file) {
            Role::Report { name, run } => Some((at, name, run)),
            _ => None,
        })
        .collect();
    let (choice, found) = of_suite(found, |(_, name, _)| name.suite(), suite, path)?;
    let reports = found
        .par_iter()
        .map(|(at, name, run)| {
            let file = &intake.files[*at];
            let content = Ok(Content::Bytes(&file.bytes));
            Arrived::reduce((&file.path, name, run, *at), content, targets)
        })
        .collect();
    let others = Others::of_intake(intake);
    Ok(through(
        reports,
        choice,
        others,
        &Bytes::Held(intake),
        targets,
    ))
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
    let listing = Opened::open(path, limits)?.into_listing();
    let held = listing.retain(held_whole);
    let report_role = |p: &str| match mlbench_submission::layout::classify(p, || false) {
        Role::Report { name, run } => Some((name, run)),
        _ => None,
    };
    let (intake, reduced) = held.read_apart(
        |p| report_role(p).is_some(),
        |p, content| {
            // Only reports are read apart: the role is always a report's.
            let (name, run) = report_role(p)?;
            let report = Arrived::reduce((p, &name, &run, 0), Ok(content), targets);
            Some((name, report))
        },
    );
    let intake = refuse_broken(intake, path)?;
    let reduced: Vec<(FileName, Arrived)> = reduced.into_iter().filter_map(|(_, r)| r).collect();
    let (choice, reports) = of_suite(reduced, |(name, _)| name.suite(), suite, path)?;
    let reports = reports.into_iter().map(|(_, report)| report).collect();
    let mut others = Others::of_intake(&intake);
    others.ignored += listing.paths().len() - held.paths().len();
    let loaded = through(reports, choice, others, &Bytes::Listed(&held), targets);
    whole_submission(intake, listing, loaded, path)
}

/// Whether the file at `path` is read by the loaders: every file with a role (or that
/// may be a jobs file, a `*.json`). A file of no role (a log, an archive left beside the
/// runs) is validated and hashed from the listing, streamed, never held whole.
pub fn held_whole(path: &str) -> bool {
    path.ends_with(".json") || mlbench_submission::layout::classify(path, || false) != Role::Unknown
}

/// The submission at `path`, unless an entry of it could not be read (the callers compare
/// whole submissions).
fn whole_submission(
    intake: Intake,
    listing: Listing,
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
        listing,
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
    let listing = Opened::open(path, limits)?.into_listing();
    let held = listing.retain(held_whole);
    // The files left out are of no role: passed over, as a folder's discovery counts them.
    let left_out = listing.paths().len() - held.paths().len();
    let intake = refuse_broken(held.read(), path)?;
    let mut loaded = samples_of_intake(&intake, path, suite, targets)?;
    loaded.ignored += left_out;
    whole_submission(intake, listing, loaded, path)
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
        let discovery = mlbench_submission::discover(&[dir.path().to_path_buf()], None).unwrap();
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

    /// The summary of the problems counts each problem and each file once.
    #[test]
    fn the_unreadable_summary_counts_problems_and_files() {
        let dir = folder();
        let loaded = |dir: &Path| {
            let discovery = mlbench_submission::discover(&[dir.to_path_buf()], None).unwrap();
            load_samples(discovery, &targets())
        };
        assert_eq!(loaded(dir.path()).unreadable_summary(), None);
        write(dir.path(), "output2/fast_0.json", "not json at all");
        let one = loaded(dir.path());
        assert_eq!(one.errors.len(), 1, "{:?}", one.errors);
        let summary = one.unreadable_summary();
        assert_eq!(summary.as_deref(), Some("1 problem in 1 file"));
        write(dir.path(), "output3/fast_0.json", "not json at all");
        let two = loaded(dir.path()).unreadable_summary();
        assert_eq!(two.as_deref(), Some("2 problems in 2 files"));
        // Two entries of one file that are no measurement: one file more, two problems.
        let bad = r#"{"name": "vae", "version": "v", "train_item": {"avg": "fast"}}"#;
        write(
            dir.path(),
            "output4/fast_0.json",
            &format!("[{bad}, {bad}]"),
        );
        let three = loaded(dir.path());
        assert_eq!(three.errors.len(), 4, "{:?}", three.errors);
        let summary = three.unreadable_summary();
        assert_eq!(summary.as_deref(), Some("4 problems in 3 files"));
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
        // A file of no role (notes.md) is left out of what is held, kept in the listing.
        assert_eq!(paths(&lean.intake), ["fast.json", "output1/summary.txt"]);
        assert!(lean.listing.paths().iter().any(|p| p == "notes.md"));
        assert_eq!(lean.intake.facts, whole.intake.facts);
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
