//! The comparison around the grid, for `grid` and `plot`: which submissions, under which
//! labels and tracks, read in parallel, against which baseline and expected benches.
//!
//! The command line maps its arguments to [`CompareOptions`] and calls [`load_all`], then
//! [`compute`] (or the plots' views on the loaded samples).

use crate::grid::{DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, Grid, GridError};
use crate::grid::{GridInput, GridOptions, Weights, WeightsError};
use crate::load::{LoadError, LoadedSubmission, load_submission, load_submission_lean};
use mlbench_results::SubmissionCheck;
use mlbench_schema::class::{Classify, ErrorClass};
use mlbench_schema::jobs::JobsFile;
use mlbench_schema::targets::TargetsError;
use mlbench_schema::{Scoring, SubmissionRuntime, TargetTable, Track};
use mlbench_submission::{Intake, Limits};
use mlbench_validator::layout::{Role, classify};
use mlbench_validator::submission::SubmissionInfo;
use mlbench_validator::{DEFAULT_MIN_RUNS, page_check_listed};
use rayon::prelude::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How submissions are compared (`grid` and `plot` share them).
#[derive(Debug, Clone)]
pub struct CompareOptions {
    /// The labels given, (name, submission) as [`parse_label`] reads `NAME=SUB`; each
    /// submission must be one of those compared.
    pub labels: Vec<(String, PathBuf)>,
    /// The submission every other is normalized to (a label or a row id); default: the
    /// first submission.
    pub baseline: Option<String>,
    /// The suite the reports are named after (default: the only one of each submission).
    pub suite: Option<String>,
    /// Bench weights of the overall figure (TOML or CSV file).
    pub weights: Option<PathBuf>,
    /// The track of submissions that do not carry one in `SUBMISSION.json`.
    pub track: Track,
    /// Bootstrap resamples (at least 1).
    pub resamples: usize,
    /// The bootstrap seed.
    pub seed: u64,
    /// The most uncompressed bytes read from each submission (files past it are set
    /// aside, as the validator sets them aside).
    pub max_bytes: u64,
    /// Compare submissions of different runtimes (the suite's scripts, `mlbench run`)
    /// instead of refusing them; the rows and cells of a runtime other than the
    /// baseline's are marked.
    pub allow_mixed_runtimes: bool,
    /// Which intervals the grid carries and decides its tiers on.
    pub interval: crate::grid::Interval,
    /// Tier the rows of submissions that fail their validation too (`--include-failing`;
    /// they stay marked). Without it they have no tier.
    pub include_failing: bool,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            labels: Vec::new(),
            baseline: None,
            suite: None,
            weights: None,
            track: Track::Baseline,
            resamples: DEFAULT_RESAMPLES,
            seed: DEFAULT_SEED,
            max_bytes: Limits::default().max_bytes,
            allow_mixed_runtimes: false,
            interval: Default::default(),
            include_failing: false,
        }
    }
}

/// Why submissions could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A label without `=`.
    #[error("label `{0}`: expected NAME=SUB")]
    LabelSyntax(String),
    /// A label with an empty name.
    #[error("label `{0}`: the name is empty")]
    LabelEmpty(String),
    /// A submission labelled twice.
    #[error("label `{name}={}`: that submission is already labelled `{other}`", .path.display())]
    LabelledTwice {
        /// The second name.
        name: String,
        /// The submission.
        path: PathBuf,
        /// The first name.
        other: String,
    },
    /// A label for a path that is not among the submissions.
    #[error("label `{name}={}`: not one of the submissions given", .path.display())]
    LabelNotGiven {
        /// The name.
        name: String,
        /// The path.
        path: PathBuf,
    },
    /// Two submissions with one label on one track.
    #[error(
        "two submissions are labelled `{label}` in the {track} track; each needs a name of its own"
    )]
    SameLabel {
        /// The label.
        label: String,
        /// The track.
        track: Track,
    },
    /// Rows to explain without a comma.
    #[error("explain `{0}`: expected two rows, A,B")]
    Explain(String),
    /// Nothing to compare.
    #[error("no submissions")]
    NoSubmissions,
    /// `grid --per joule` with a baseline that has no energy.
    #[error(
        "the baseline `{0}` has no telemetry paired with its entries: no grid per joule (docs/grid-json.md, \"Per joule\")"
    )]
    NoEnergy(String),
    /// The suite's selection rules could not be read (a bug in the shipped tables).
    #[error(transparent)]
    Targets(#[from] TargetsError),
    /// A submission could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The weights file could not be read.
    #[error(transparent)]
    Weights(#[from] WeightsError),
    /// The grid could not be computed.
    #[error(transparent)]
    Grid(#[from] GridError),
    /// Submissions of different runtimes, not allowed to be compared.
    #[error(
        "submissions of different runtimes: {}; a throughput of one runtime is not comparable with the other's (the suite's scripts and `mlbench run` differ by up to twice on one machine)",
        .runtimes.iter().map(|(label, runtime)| format!("{label}: {runtime}")).collect::<Vec<_>>().join("; ")
    )]
    MixedRuntimes {
        /// Every submission (row id) with its runtime, in the order given.
        runtimes: Vec<(String, String)>,
    },
}

impl Classify for CompareError {
    fn class(&self) -> ErrorClass {
        match self {
            CompareError::LabelSyntax(_)
            | CompareError::LabelEmpty(_)
            | CompareError::LabelledTwice { .. }
            | CompareError::LabelNotGiven { .. }
            | CompareError::SameLabel { .. }
            | CompareError::Explain(_)
            | CompareError::NoSubmissions
            | CompareError::NoEnergy(_)
            | CompareError::MixedRuntimes { .. } => ErrorClass::Input,
            CompareError::Targets(e) => e.class(),
            CompareError::Load(e) => e.class(),
            CompareError::Weights(e) => e.class(),
            CompareError::Grid(e) => e.class(),
        }
    }
}

/// A submission loaded, with its label and track.
pub struct Labelled {
    /// The vendor's name.
    pub label: String,
    /// Its track.
    pub track: Track,
    /// The submission.
    pub sub: LoadedSubmission,
    /// What produced it ([`crate::runtime::submission_runtime`]).
    pub runtime: SubmissionRuntime,
    /// The path it was given as (`--baseline` and `--explain` may name it so).
    pub path: PathBuf,
    /// Its validation with the default rules (`validate`'s), made the first time
    /// [`Labelled::check`] asks (a grid's rows and its page share it; a plot of runs
    /// never needs it).
    pub check: OnceLock<SubmissionCheck>,
}

impl Labelled {
    /// Its validation with the default rules, from its listing: made once, on first use.
    pub fn check(&self) -> &SubmissionCheck {
        (self.check).get_or_init(|| {
            page_check_listed(self.label.clone(), &self.sub.listing, DEFAULT_MIN_RUNS)
        })
    }

    /// (path, SHA-256) of its files, for a page's provenance (from its listing: see
    /// [`mlbench_submission::digest::submission_digests`]).
    pub fn digests(&self) -> Vec<(String, String)> {
        mlbench_submission::digest::submission_digests(&self.path, &self.sub.listing)
    }

    /// What it ran on, from its samples and machine descriptions (as a grid row says).
    pub fn hardware(&self) -> mlbench_results::Hardware {
        let systems = mlbench_validator::SubmissionInfo::systems_of(&self.sub.intake.files);
        crate::hardware::hardware_of(&self.sub.set, &systems)
    }

    /// `label`, with `/tweaked` on the tweaked track (a grid row's id).
    pub fn id(&self) -> String {
        match self.track {
            Track::Baseline => self.label.clone(),
            Track::Tweaked => format!("{}/tweaked", self.label),
        }
    }
}

/// Parses one `NAME=SUB` label.
pub fn parse_label(text: &str) -> Result<(String, PathBuf), CompareError> {
    let (name, path) = text
        .split_once('=')
        .ok_or_else(|| CompareError::LabelSyntax(text.to_owned()))?;
    if name.is_empty() {
        return Err(CompareError::LabelEmpty(text.to_owned()));
    }
    Ok((name.to_owned(), PathBuf::from(path)))
}

/// Checks the labels against the submissions given: each names one of them, and none
/// twice. Returns (submission, name) pairs in the order given.
pub fn check_labels(
    labels: &[(String, PathBuf)],
    subs: &[PathBuf],
) -> Result<Vec<(PathBuf, String)>, CompareError> {
    let out: Vec<(PathBuf, String)> = labels
        .iter()
        .map(|(name, path)| (path.clone(), name.clone()))
        .collect();
    for (i, (path, name)) in out.iter().enumerate() {
        if let Some((_, other)) = out[..i].iter().find(|(p, _)| p == path) {
            return Err(CompareError::LabelledTwice {
                name: name.clone(),
                path: path.clone(),
                other: other.clone(),
            });
        }
        if !subs.contains(path) {
            return Err(CompareError::LabelNotGiven {
                name: name.clone(),
                path: path.clone(),
            });
        }
    }
    Ok(out)
}

/// The label of a submission not given one: its file or folder name, without `.zip`.
pub fn default_label(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    match name.len().checked_sub(4) {
        Some(cut) if name.is_char_boundary(cut) && name[cut..].eq_ignore_ascii_case(".zip") => {
            name[..cut].to_owned()
        }
        _ => name,
    }
}

/// `--explain A,B`: the two submissions whose gap is attributed.
pub fn parse_explain(text: &str) -> Result<(String, String), CompareError> {
    let (a, b) = text
        .split_once(',')
        .ok_or_else(|| CompareError::Explain(text.to_owned()))?;
    Ok((a.trim().to_owned(), b.trim().to_owned()))
}

/// The selection rules of the suite's targets (wlm's GRU, loader's 256, …) without any
/// target or exclusion: the grid compares what every vendor ran.
pub fn selection_only() -> Result<TargetTable, TargetsError> {
    let mut table = TargetTable::builtin(Scoring::Classic, "RTX")?;
    table.targets.clear();
    table.exclude.clear();
    table.gpu_model = "grid".into();
    Ok(table)
}

/// The track a packed submission carries in `SUBMISSION.json`.
pub fn packed_track(intake: &Intake) -> Option<Track> {
    SubmissionInfo::of_files(&intake.files).map(|info| info.track)
}

/// The benches of a submission's jobs file (the first one, by path), in its order, when
/// it has one that reads.
pub fn expected_benches(intake: &Intake) -> Option<Vec<String>> {
    let file = intake.files.iter().find(|f| classify(f) == Role::Jobs)?;
    let jobs = JobsFile::parse(&file.path, &file.bytes).ok()?;
    let mut names: Vec<String> = jobs.jobs.into_iter().map(|j| j.name).collect();
    names.dedup();
    Some(names)
}

/// What [`load_all`] keeps of each submission's report files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Their bytes, in each submission's intake.
    Reports,
    /// Their samples only.
    Samples,
}

impl Keep {
    /// What a grid `per` keeps, with its HTML `page` or without: the page validates each
    /// submission, and per joule each report's entries are paired with their telemetry;
    /// both need the report files themselves.
    pub fn for_grid(page: bool, per: mlbench_results::grid::Per) -> Keep {
        match page || per == mlbench_results::grid::Per::Joule {
            true => Keep::Reports,
            false => Keep::Samples,
        }
    }
}

/// One submission loaded as a grid loads it, under `label`: what `archive add` records
/// of it (its hardware, runtime, track and validation).
pub fn describe(path: &Path, label: &str) -> Result<Labelled, CompareError> {
    let options = CompareOptions {
        labels: vec![(label.to_owned(), path.to_path_buf())],
        ..CompareOptions::default()
    };
    let mut loaded = load_all(&[path.to_path_buf()], &options, Keep::Samples)?;
    Ok(loaded.remove(0))
}

/// Loads every submission in parallel (zips in place, folders), with labels and tracks:
/// a submission's label is its `--label` or [`default_label`], its track the one its
/// `SUBMISSION.json` says or `options.track`. Two submissions may not share a label on
/// one track. With [`Keep::Samples`] the report files are reduced to samples as they are
/// read and left out of each intake ([`load_submission_lean`]): for a grid, which needs
/// no more; [`Keep::Reports`] keeps them (plots of the loss curves, the HTML page's
/// validation).
pub fn load_all(
    subs: &[PathBuf],
    options: &CompareOptions,
    keep: Keep,
) -> Result<Vec<Labelled>, CompareError> {
    let labels = check_labels(&options.labels, subs)?;
    let targets = selection_only()?;
    let limits = Limits::within(options.max_bytes);
    let loaded: Vec<Result<Labelled, CompareError>> = subs
        .par_iter()
        .map(|path| {
            let load = match keep {
                Keep::Reports => load_submission,
                Keep::Samples => load_submission_lean,
            };
            let sub = load(path, options.suite.as_deref(), &targets, &limits)?;
            let label = labels
                .iter()
                .find(|(p, _)| p == path)
                .map_or_else(|| default_label(path), |(_, n)| n.clone());
            let track = packed_track(&sub.intake).unwrap_or(options.track);
            let runtime = crate::runtime::submission_runtime(
                &SubmissionInfo::systems_of(&sub.intake.files),
                &sub.set,
            );
            Ok(Labelled {
                label,
                track,
                sub,
                runtime,
                path: path.clone(),
                check: OnceLock::new(),
            })
        })
        .collect();
    let loaded = loaded.into_iter().collect::<Result<Vec<_>, _>>()?;
    check_unique(&loaded)?;
    Ok(loaded)
}

/// Refuses two submissions with one label on one track.
pub fn check_unique(loaded: &[Labelled]) -> Result<(), CompareError> {
    let mut seen = BTreeSet::new();
    for l in loaded {
        if !seen.insert((l.label.as_str(), l.track)) {
            return Err(CompareError::SameLabel {
                label: l.label.clone(),
                track: l.track,
            });
        }
    }
    Ok(())
}

/// The baseline: `options.baseline` (a label, or a submission's path as given: see
/// [`name_of`]), else the first submission's label.
pub fn baseline_of(loaded: &[Labelled], options: &CompareOptions) -> Result<String, CompareError> {
    match &options.baseline {
        Some(b) => Ok(name_of(loaded, b)),
        None => loaded
            .first()
            .map(|l| l.label.clone())
            .ok_or(CompareError::NoSubmissions),
    }
}

/// The row a `--baseline` or `--explain` name means: a label or row id as it is; else the
/// id of the submission given as that path (as typed, or the same file or folder), so
/// `--baseline vendorA.zip` works as `--baseline vendorA` does. A name that is neither
/// comes back unchanged, for the grid to refuse with the labels it knows.
pub fn name_of(loaded: &[Labelled], given: &str) -> String {
    if loaded.iter().any(|l| l.label == given || l.id() == given) {
        return given.to_owned();
    }
    let path = Path::new(given);
    let canonical = std::fs::canonicalize(path).ok();
    let same = |l: &Labelled| {
        l.path == path
            || canonical
                .as_ref()
                .is_some_and(|c| std::fs::canonicalize(&l.path).ok().as_ref() == Some(c))
    };
    loaded
        .iter()
        .find(|l| same(l))
        .map_or_else(|| given.to_owned(), Labelled::id)
}

/// Refuses submissions of different runtimes (two whose runtimes are known and differ:
/// [`SubmissionRuntime::differs_from`]) unless `options.allow_mixed_runtimes`; an
/// unknown runtime is never said to differ.
pub fn check_runtimes(loaded: &[Labelled], options: &CompareOptions) -> Result<(), CompareError> {
    let mixed = loaded.iter().enumerate().any(|(i, a)| {
        loaded[..i]
            .iter()
            .any(|b| a.runtime.differs_from(&b.runtime))
    });
    if !mixed || options.allow_mixed_runtimes {
        return Ok(());
    }
    Err(CompareError::MixedRuntimes {
        runtimes: loaded.iter().map(|l| (l.id(), l.runtime.label())).collect(),
    })
}

/// A submission's row and runtime, kept while its samples go into the grid.
struct RowRuntime {
    label: String,
    track: Track,
    id: String,
    runtime: SubmissionRuntime,
    hardware: mlbench_results::Hardware,
    validity: mlbench_results::Validity,
}

impl RowRuntime {
    /// What a row carries of `l` besides its figures: its runtime, its hardware, and its
    /// validation verdict (the default rules, as `validate` and the grid's page check it).
    fn of(l: &Labelled) -> RowRuntime {
        RowRuntime {
            label: l.label.clone(),
            track: l.track,
            id: l.id(),
            runtime: l.runtime.clone(),
            hardware: l.hardware(),
            validity: mlbench_validator::validity_of_check(l.check(), &l.sub.listing),
        }
    }
}

/// The note of the rows that failed their validation: untiered, or tiered and marked.
fn failing_note(rows: &[RowRuntime], include_failing: bool) -> Option<String> {
    let mut failing: Vec<&str> = (rows.iter())
        .filter(|r| !r.validity.passed)
        .map(|r| r.id.as_str())
        .collect();
    failing.sort_unstable();
    (!failing.is_empty()).then(|| match include_failing {
        false => format!(
            "{}: failed validation, not tiered (--include-failing tiers them)",
            failing.join(", ")
        ),
        true => format!(
            "{}: failed validation, tiered (--include-failing)",
            failing.join(", ")
        ),
    })
}

/// The runtime the others are held against: the baseline's (its baseline-track row,
/// else its only one) when it is known, else the first known one in the order given.
fn reference_runtime<'a>(rows: &'a [RowRuntime], baseline: &str) -> Option<&'a SubmissionRuntime> {
    let of_baseline = rows
        .iter()
        .filter(|l| l.id == baseline || l.label == baseline)
        .min_by_key(|l| l.track != Track::Baseline)
        .map(|l| &l.runtime)
        .filter(|r| r.key().is_some());
    of_baseline.or_else(|| rows.iter().map(|l| &l.runtime).find(|r| r.key().is_some()))
}

/// Each row's runtime, and the marks of a runtime other than the reference's
/// ([`reference_runtime`]): the row, and its cells with a ratio. One line says every
/// submission's runtime; another, which rows are marked.
fn mark_runtimes(grid: &mut Grid, rows: &[RowRuntime], baseline: &str) {
    let reference = reference_runtime(rows, baseline).cloned();
    let mut marked = Vec::new();
    for l in rows {
        let Some(row) = grid
            .vendors
            .iter_mut()
            .find(|v| v.name == l.label && v.track == l.track)
        else {
            continue;
        };
        row.mixed_runtime = reference
            .as_ref()
            .is_some_and(|r| l.runtime.differs_from(r));
        if row.mixed_runtime {
            for cell in row.cells.values_mut() {
                cell.mixed_runtime = cell.ratio.is_some();
            }
            marked.push(format!("{} ({})", l.id, l.runtime.label()));
        }
        row.runtime = Some(l.runtime.clone());
        (row.hardware, row.validity) = (Some(l.hardware.clone()), Some(l.validity.clone()));
    }
    // Each runtime once, with its rows, by row id: the grid does not depend on the
    // order the submissions were given in.
    let mut sorted: Vec<&RowRuntime> = rows.iter().collect();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    let mut by_runtime: Vec<(String, Vec<&str>)> = Vec::new();
    for l in sorted {
        let name = match &l.runtime.runtime {
            Some(r) => r.to_string(),
            None => l.runtime.label(),
        };
        match by_runtime.iter_mut().find(|(n, _)| *n == name) {
            Some((_, ids)) => ids.push(&l.id),
            None => by_runtime.push((name, vec![&l.id])),
        }
    }
    let said: Vec<String> = by_runtime
        .iter()
        .map(|(name, ids)| format!("{}: {name}", ids.join(", ")))
        .collect();
    grid.notes
        .insert(0, format!("runtimes: {}", said.join("; ")));
    marked.sort();
    if let (Some(reference), false) = (&reference, marked.is_empty()) {
        grid.notes.insert(
            1,
            format!(
                "† mixed runtimes: {} against {}: their ratios compare the runtimes as well as the machines",
                marked.join(", "),
                reference.runtime.as_ref().map_or_else(|| reference.label(), ToString::to_string)
            ),
        );
    }
}

/// Computes the grid of loaded submissions: normalized to the baseline, over the benches
/// of the baseline's jobs file when it has one, with `explain`'s gap attributed.
/// Submissions of different runtimes are refused ([`check_runtimes`]) unless allowed;
/// each row carries its runtime, and, when they were allowed, the rows and cells of
/// another runtime than the baseline's are marked (`mixed_runtime`, `†`).
pub fn compute(
    loaded: Vec<Labelled>,
    options: &CompareOptions,
    explain: Option<(String, String)>,
) -> Result<Grid, CompareError> {
    check_runtimes(&loaded, options)?;
    let baseline = baseline_of(&loaded, options)?;
    let explain = explain.map(|(a, b)| (name_of(&loaded, &a), name_of(&loaded, &b)));
    let rows: Vec<RowRuntime> = loaded.par_iter().map(RowRuntime::of).collect();
    let untiered = (rows.iter())
        .filter(|r| !r.validity.passed && !options.include_failing)
        .map(|r| r.id.clone())
        .collect();
    let benches = loaded
        .iter()
        .find(|l| l.label == baseline)
        .and_then(|l| expected_benches(&l.sub.intake));
    let weights = options.weights.as_deref().map(Weights::load).transpose()?;
    let inputs: Vec<GridInput> = loaded
        .into_iter()
        .map(|l| GridInput {
            label: l.label,
            track: l.track,
            set: l.sub.set,
        })
        .collect();
    let grid_options = GridOptions {
        baseline: baseline.clone(),
        weights,
        resamples: options.resamples,
        seed: options.seed,
        level: DEFAULT_LEVEL,
        explain,
        benches,
        interval: options.interval,
        untiered,
    };
    let mut grid = crate::grid::grid(&inputs, &grid_options)?;
    mark_runtimes(&mut grid, &rows, &baseline);
    grid.notes
        .extend(failing_note(&rows, options.include_failing));
    Ok(grid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlbench_submission::{Listing, SourceKind, SubmittedFile};

    fn subs(paths: &[&str]) -> Vec<PathBuf> {
        paths.iter().map(PathBuf::from).collect()
    }

    fn labels(texts: &[&str]) -> Vec<(String, PathBuf)> {
        texts.iter().map(|t| parse_label(t).unwrap()).collect()
    }

    #[test]
    fn labels_parse_and_name_given_submissions_once() {
        assert_eq!(
            parse_label("Acme=a/b.zip").unwrap(),
            ("Acme".to_owned(), PathBuf::from("a/b.zip"))
        );
        // The name ends at the first `=`: a path may hold one.
        assert_eq!(parse_label("A=x=y").unwrap().1, PathBuf::from("x=y"));
        assert_eq!(
            parse_label("Acme").unwrap_err().to_string(),
            "label `Acme`: expected NAME=SUB"
        );
        assert_eq!(
            parse_label("=a").unwrap_err().to_string(),
            "label `=a`: the name is empty"
        );
        let err =
            |l: &[&str], s: &[&str]| check_labels(&labels(l), &subs(s)).unwrap_err().to_string();
        assert_eq!(
            err(&["A=a", "B=a"], &["a"]),
            "label `B=a`: that submission is already labelled `A`"
        );
        assert_eq!(
            err(&["A=b"], &["a"]),
            "label `A=b`: not one of the submissions given"
        );
        let ok = check_labels(&labels(&["B=b", "A=a"]), &subs(&["a", "b"])).unwrap();
        assert_eq!(
            ok,
            [
                (PathBuf::from("b"), "B".to_owned()),
                (PathBuf::from("a"), "A".to_owned())
            ]
        );
    }

    #[test]
    fn default_labels_drop_the_zip_extension() {
        assert_eq!(default_label(Path::new("x/acme.zip")), "acme");
        assert_eq!(default_label(Path::new("x/Acme.ZIP")), "Acme");
        assert_eq!(default_label(Path::new("x/acme")), "acme");
        assert_eq!(default_label(Path::new("x/.zip")), "");
        assert_eq!(default_label(Path::new("zip")), "zip");
        assert_eq!(default_label(Path::new("x/é.zip")), "é");
        assert_eq!(default_label(Path::new("/")), "/");
    }

    #[test]
    fn explain_takes_two_names() {
        assert_eq!(
            parse_explain("A, B/tweaked").unwrap(),
            ("A".to_owned(), "B/tweaked".to_owned())
        );
        assert_eq!(
            parse_explain("AB").unwrap_err().to_string(),
            "explain `AB`: expected two rows, A,B"
        );
    }

    #[test]
    fn the_selection_only_table_has_rules_and_no_targets() {
        let t = selection_only().unwrap();
        assert!(t.targets.is_empty() && t.exclude.is_empty());
        assert_eq!(t.gpu_model, "grid");
        assert!(!t.select.is_empty());
    }

    fn intake(files: Vec<SubmittedFile>) -> Intake {
        Intake {
            kind: SourceKind::Zip,
            files,
            facts: Vec::new(),
        }
    }

    #[test]
    fn packed_track_and_expected_benches_come_from_the_files() {
        let info = |track: &str| {
            SubmittedFile::new(
                "SUBMISSION.json",
                format!(r#"{{"tool": "mlbench 0.1.0", "track": "{track}"}}"#),
            )
        };
        assert_eq!(
            packed_track(&intake(vec![info("tweaked")])),
            Some(Track::Tweaked)
        );
        assert_eq!(
            packed_track(&intake(vec![info("baseline")])),
            Some(Track::Baseline)
        );
        assert_eq!(packed_track(&intake(vec![info("other")])), None);
        assert_eq!(packed_track(&intake(Vec::new())), None);
        let jobs = SubmittedFile::new(
            "fast.json",
            r#"[{"name": "vae", "cmd": "./vae/run.sh", "args": {}},
                {"name": "vae", "cmd": "./vae/run.sh", "args": {"--x": 1}},
                {"name": "atari", "cmd": "./atari/run.sh", "args": {}}]"#,
        );
        assert_eq!(
            expected_benches(&intake(vec![jobs])),
            Some(vec!["vae".to_owned(), "atari".to_owned()])
        );
        assert_eq!(expected_benches(&intake(vec![info("baseline")])), None);
    }

    #[test]
    fn baseline_defaults_to_the_first_and_labels_are_unique_per_track() {
        let sub = || LoadedSubmission {
            intake: intake(Vec::new()),
            listing: Listing::default(),
            set: crate::SampleSet::assemble(
                "fast",
                &selection_only().unwrap(),
                Vec::new(),
                |_, _| None,
            ),
        };
        let l = |label: &str, track| Labelled {
            label: label.into(),
            track,
            sub: sub(),
            runtime: mlbench_schema::runtime::resolve(&[], Default::default()),
            path: PathBuf::from(format!("subs/{label}.zip")),
            check: OnceLock::new(),
        };
        let options = CompareOptions::default();
        assert!(matches!(
            baseline_of(&[], &options),
            Err(CompareError::NoSubmissions)
        ));
        let loaded = vec![l("B", Track::Baseline), l("A", Track::Baseline)];
        assert_eq!(baseline_of(&loaded, &options).unwrap(), "B");
        let chosen = CompareOptions {
            baseline: Some("A".into()),
            ..CompareOptions::default()
        };
        assert_eq!(baseline_of(&loaded, &chosen).unwrap(), "A");
        // A path as given names its submission; a path given differently but naming the
        // same file does too (canonically), and anything else is passed on unchanged.
        let by_path = CompareOptions {
            baseline: Some("subs/A.zip".into()),
            ..CompareOptions::default()
        };
        assert_eq!(baseline_of(&loaded, &by_path).unwrap(), "A");
        assert_eq!(name_of(&loaded, "subs/C.zip"), "subs/C.zip");
        let dir = tempfile::tempdir().unwrap();
        let zip = dir.path().join("a.zip");
        std::fs::write(&zip, b"").unwrap();
        let mut on_disk = vec![l("A", Track::Baseline), l("B", Track::Tweaked)];
        on_disk[1].path = zip.clone();
        let roundabout = dir.path().join(".").join("a.zip");
        assert_eq!(name_of(&on_disk, roundabout.to_str().unwrap()), "B/tweaked");
        // A label wins over a path that happens to be spelt the same.
        on_disk[0].path = PathBuf::from("B");
        assert_eq!(name_of(&on_disk, "B"), "B");
        assert!(check_unique(&[l("A", Track::Baseline), l("A", Track::Tweaked)]).is_ok());
        let err = check_unique(&[l("A", Track::Tweaked), l("A", Track::Tweaked)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "two submissions are labelled `A` in the tweaked track; each needs a name of its own"
        );
    }

    #[test]
    fn load_all_labels_loads_and_reports_the_first_failure() {
        let dir = tempfile::tempdir().unwrap();
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../submissions/example");
        let missing = dir.path().join("missing");
        let options = CompareOptions {
            labels: labels(&[&format!("Ref={}", example.display())]),
            ..CompareOptions::default()
        };
        let loaded = load_all(std::slice::from_ref(&example), &options, Keep::Samples).unwrap();
        assert_eq!(loaded.len(), 1);
        assert_eq!(
            (loaded[0].label.as_str(), loaded[0].track),
            ("Ref", Track::Baseline)
        );
        assert_eq!(loaded[0].sub.set.suite, "fast");
        let err = load_all(&[example.clone(), missing.clone()], &options, Keep::Reports)
            .err()
            .unwrap();
        assert!(matches!(err, CompareError::Load(_)), "{err}");
        assert_eq!(
            err.to_string(),
            format!("{}: no such file or folder", missing.display())
        );
        // Two folders named alike, unlabelled, on one track.
        let twice = load_all(
            &[example.clone(), example.join("../example")],
            &CompareOptions::default(),
            Keep::Samples,
        )
        .err()
        .unwrap();
        assert!(matches!(twice, CompareError::SameLabel { .. }), "{twice}");
        let grid = compute(loaded, &options, None).unwrap();
        assert_eq!(grid.baseline, "Ref");
        assert_eq!(grid.benches.len(), 19);
    }

    /// Submissions of two runtimes are refused, naming each; allowed, the grid says every
    /// runtime and marks the row of the other runtime and its cells with a ratio.
    #[test]
    fn mixed_runtimes_are_refused_unless_allowed_and_then_marked() {
        use mlbench_schema::runtime::{RuntimeTally, resolve};
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../submissions/example");
        let options = CompareOptions {
            resamples: 20,
            ..CompareOptions::default()
        };
        // A: the example; B: the example again, as if `mlbench run` had written it.
        let load = || load_all(std::slice::from_ref(&example), &options, Keep::Samples).unwrap();
        let (mut loaded, mut b) = (load(), load().remove(0));
        loaded[0].label = "A".into();
        b.label = "B".into();
        assert_eq!(
            loaded[0].runtime.label(),
            "mila-iqia/training scripts (torch version unknown) (inferred from the entries: 175 of 175)"
        );
        b.runtime = resolve(
            &[mlbench_schema::Runtime::mlbench_run(Some("2.13.0".into()))],
            RuntimeTally::default(),
        );
        loaded.push(b);
        let err = check_runtimes(&loaded, &options).unwrap_err();
        assert_eq!(
            err.to_string(),
            "submissions of different runtimes: A: mila-iqia/training scripts (torch version unknown) (inferred from the entries: 175 of 175); B: mlbench run, libtorch 2.13.0 (declared by system.json); a throughput of one runtime is not comparable with the other's (the suite's scripts and `mlbench run` differ by up to twice on one machine)"
        );
        assert!(matches!(
            compute(Vec::new(), &options, None),
            Err(CompareError::NoSubmissions)
        ));
        let allowed = CompareOptions {
            allow_mixed_runtimes: true,
            ..options
        };
        let grid = compute(loaded, &allowed, None).unwrap();
        let row = |name: &str| grid.vendors.iter().find(|v| v.name == name).unwrap();
        assert!(!row("A").mixed_runtime);
        assert!(row("A").cells.values().all(|c| !c.mixed_runtime));
        assert!(row("B").mixed_runtime);
        assert!(
            row("B")
                .cells
                .values()
                .all(|c| c.mixed_runtime == c.ratio.is_some())
        );
        assert_eq!(
            row("B").cells.values().filter(|c| c.mixed_runtime).count(),
            19
        );
        assert_eq!(
            row("B").runtime.as_ref().and_then(|r| r.runtime.clone()),
            Some(mlbench_schema::Runtime::mlbench_run(Some("2.13.0".into())))
        );
        assert_eq!(
            grid.notes[0],
            "runtimes: A: mila-iqia/training scripts (torch version unknown); B: mlbench run, libtorch 2.13.0"
        );
        assert_eq!(
            grid.notes[1],
            "† mixed runtimes: B (mlbench run, libtorch 2.13.0 (declared by system.json)) against mila-iqia/training scripts (torch version unknown): their ratios compare the runtimes as well as the machines"
        );
    }
}
