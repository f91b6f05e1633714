//! The validation: classify the files, pick the jobs file and the baselines, run the
//! per-file pass in parallel, then the cross-file rules, then the waivers.

use crate::facts::{Device, EntryFacts, FileFacts, file_facts};
use crate::files::FileSource;
use crate::finding::catalogued;
use crate::layout::{MANIFEST_NAME, Role, SUBMISSION_NAME, base_name, looks_like_jobs_bytes};
use crate::rules::coverage::Coverage;
use crate::rules::entry::JobConfigs;
use crate::rules::versions::VersionOracle;
use crate::rules::{self, pattern_matches};
use crate::submission::sha256_hex;
use mlbench_results::validation::{Finding, Omitted, Severity, Summary, Validation};
use mlbench_schema::Track;
use mlbench_schema::jobs::{Job, JobsFile};
use mlbench_schema::reader::Content;
use mlbench_schema::reader::FileName;
use mlbench_schema::runs::{FileRuns, RunIndex, resolve as resolve_runs};
use mlbench_schema::suite::{SuiteError, choose_suite};
use mlbench_submission::intake::Settled;
use mlbench_submission::intake::{ReadFailure, outcomes_in_order};
use mlbench_submission::{Intake, Listing};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// `--waive RULE[:FILE]`: errors of RULE (an id, `family.*` or `*`), in FILE when given
/// (a path inside the submission; a path ending in `/` waives a whole folder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiver {
    /// The rule pattern.
    pub rule: String,
    /// The file or folder, when limited to one.
    pub file: Option<String>,
}

impl Waiver {
    /// Parses `RULE[:FILE]`; the rule pattern must name at least one rule.
    pub fn parse(text: &str) -> Result<Waiver, String> {
        let (rule, file) = match text.split_once(':') {
            Some((r, f)) => (r, Some(f.to_owned())),
            None => (text, None),
        };
        if !rules::pattern_matches_any(rule) {
            return Err(format!(
                "`{rule}` names no rule (see `mlbench validate --list-rules`)"
            ));
        }
        Ok(Waiver {
            rule: rule.to_owned(),
            file,
        })
    }

    /// Whether this waiver covers `finding` (errors only: warnings are never waived).
    pub fn covers(&self, finding: &Finding) -> bool {
        finding.severity == Severity::Error
            && pattern_matches(&self.rule, finding.rule)
            && match (&self.file, &finding.file) {
                (None, _) => true,
                (Some(want), Some(file)) if want.ends_with('/') => file.starts_with(want.as_str()),
                (Some(want), Some(file)) => want == file,
                (Some(_), None) => false,
            }
    }
}

/// `--min-runs` when none is given: the fewest runs of a bench on a GPU.
pub const DEFAULT_MIN_RUNS: usize = 4;

/// What to validate against.
#[derive(Default)]
pub struct Options<'a> {
    /// The suite (jobs-file name) to validate; by default the only one, or the largest.
    pub suite: Option<String>,
    /// Fewest runs of a bench on a GPU (`--min-runs`, default 4).
    pub min_runs: usize,
    /// The jobs file the vendor ran with, when given outside the submission (name, file).
    pub jobs: Option<(String, JobsFile)>,
    /// The baselines (name, file); by default the shipped jobs file of the suite's name.
    pub baselines: Option<(String, JobsFile)>,
    /// The track.
    pub track: Track,
    /// Flags allowed to change on top of the track's.
    pub allow: Vec<String>,
    /// Waivers.
    pub waivers: Vec<Waiver>,
    /// The repository check of versions (`--repo`).
    pub versions: Option<&'a dyn VersionOracle>,
}

/// The wall time of each phase of a validation, in turn (for `MLBENCH_TIMINGS=1`).
#[derive(Debug, Clone, Default)]
pub struct Phases(pub Vec<(&'static str, std::time::Duration)>);

/// The most findings of one rule listed (the first, in sorted order); the rest are
/// counted in [`Validation::omitted`].
pub const LISTED_PER_RULE: usize = 1000;

/// `findings`, sorted, with each rule's list cut at [`LISTED_PER_RULE`]; what was cut is
/// counted into `omitted`.
fn bounded(mut findings: Vec<Finding>, waived: bool, omitted: &mut Vec<Omitted>) -> Vec<Finding> {
    findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    let mut kept = Vec::with_capacity(findings.len().min(LISTED_PER_RULE * 8));
    for group in findings.chunk_by(|a, b| a.rule == b.rule) {
        kept.extend(group.iter().take(LISTED_PER_RULE).cloned());
        if group.len() > LISTED_PER_RULE {
            let (rule, severity) = (group[0].rule, group[0].severity);
            let count = group.len() - LISTED_PER_RULE;
            omitted.push(Omitted {
                rule,
                severity,
                waived,
                count,
            });
        }
    }
    kept
}

/// Why a `*.json` file at the submission's root, which no rule recognised, does not
/// parse as JSON at all (a jobs file cut short, or nested past the parser's limit):
/// `None` when it parses, or is not such a file.
fn broken_json_at_root(
    path: &str,
    bytes: Option<&[u8]>,
) -> Option<mlbench_schema::pyjson::SyntaxError> {
    let bytes = bytes.filter(|_| !path.contains('/') && path.ends_with(".json"))?;
    mlbench_schema::pyjson::parse(bytes).err()
}

struct ReportRef<'a> {
    /// Index of the file in the submission.
    index: usize,
    path: &'a str,
    name: FileName,
    run: String,
}

/// A file whose bytes the validation holds whole: a jobs file, the pack's files.
#[derive(Clone, Copy)]
struct Held<'a> {
    path: &'a str,
    bytes: &'a [u8],
}

/// The per-file pass on one file's content: its SHA-256 (when `hash`), and what `facts`
/// finds in it. A stream is hashed as it is parsed, and read on to its end.
fn per_file(
    content: Content<'_>,
    hash: bool,
    facts: impl FnOnce(Content<'_>) -> Option<Checked>,
) -> PerFile {
    match content {
        Content::Bytes(bytes) => PerFile {
            sha: hash.then(|| sha256_hex(bytes)),
            facts: facts(Content::Bytes(bytes)),
        },
        Content::Stream(input) if hash => {
            let mut hashing = Hashing::new(input);
            let found = facts(Content::Stream(&mut hashing));
            let _ = std::io::copy(&mut hashing, &mut std::io::sink());
            PerFile {
                sha: Some(hashing.hex()),
                facts: found,
            }
        }
        Content::Stream(input) => PerFile {
            sha: None,
            facts: facts(Content::Stream(input)),
        },
    }
}

/// A reader that hashes (SHA-256) what passes through it.
struct Hashing<'a> {
    inner: &'a mut dyn std::io::Read,
    sha: sha2::Sha256,
}

impl<'a> Hashing<'a> {
    fn new(inner: &'a mut dyn std::io::Read) -> Self {
        use sha2::Digest;
        Hashing {
            inner,
            sha: sha2::Sha256::new(),
        }
    }

    fn hex(self) -> String {
        use sha2::Digest;
        mlbench_schema::unique_id::hex(&self.sha.finalize())
    }
}

impl std::io::Read for Hashing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use sha2::Digest;
        let n = self.inner.read(buf)?;
        self.sha.update(&buf[..n]);
        Ok(n)
    }
}

/// What the per-file pass keeps of one file.
struct PerFile {
    /// Its SHA-256, when the submission has a manifest to check it against.
    sha: Option<String>,
    /// Its facts, when it is a report file of the suite or a telemetry file.
    facts: Option<Checked>,
}

/// What the per-file pass found in a file it reads.
enum Checked {
    /// A report file of the suite.
    Report(FileFacts),
    /// A telemetry file.
    Telemetry(rules::telemetry::FileCheck),
}

/// Checks a telemetry file's content in one pass, whether held whole or streamed (memory
/// then does not grow with the file).
fn check_telemetry(path: &str, content: Content<'_>) -> rules::telemetry::FileCheck {
    match content {
        Content::Bytes(bytes) => rules::telemetry::check_file(path, bytes),
        Content::Stream(input) => {
            rules::telemetry::check_stream(path, std::io::BufReader::with_capacity(1 << 16, input))
        }
    }
}

/// Whether the validation needs the bytes of the file at `path` whole: a `*.json` the
/// classifier reads to tell a jobs file, the pack's manifest and description, and machine
/// descriptions. The others (report files above all) are read, parsed and let go one at
/// a time.
fn held_whole(path: &str) -> bool {
    let mut reads = false;
    mlbench_submission::layout::classify(path, || {
        reads = true;
        false
    });
    reads
        || path == MANIFEST_NAME
        || path == SUBMISSION_NAME
        || mlbench_schema::system::is_system_file(path)
}

/// Validates a submission read by [`mlbench_submission::read_submission`].
pub fn validate(intake: &Intake, options: &Options) -> Validation {
    // Files in memory have been read: none fails, so the one attempt stands.
    attempt(intake, options).map(|(v, _)| v).unwrap_or_default()
}

/// Validates a submission listed by [`mlbench_submission::list_submission`], reading each file
/// as the per-file pass reaches it (into a buffer its thread reuses), so that the
/// submission is never held in memory whole. The result is [`validate`]'s on the
/// submission read whole: where a file fails to read, the intake's finding is made and the
/// validation starts over without it, as if the intake had left it out.
pub fn validate_listing(listing: &Listing, options: &Options) -> Validation {
    validate_listing_timed(listing, options).0
}

/// [`validate_listing`], with the wall time of each of its phases (for
/// `MLBENCH_TIMINGS=1`; profiling, not a result).
pub fn validate_listing_timed(listing: &Listing, options: &Options) -> (Validation, Phases) {
    let mut retry: Option<Listing> = None;
    loop {
        let current = retry.as_ref().unwrap_or(listing);
        match attempt(current, options) {
            Ok(done) => return done,
            // Each round leaves out at least one more file, so this ends.
            Err(settled) => retry = Some(current.without(settled)),
        }
    }
}

/// One validation of `src`, or, when some of its files fail to read, what that comes to.
/// Its phases, in turn: the files needed whole are read and every file classified; the
/// suite and the jobs files are chosen; the per-file pass reads, parses and hashes the
/// rest; the entries are given their runs; the cross-file rules run; the summary is
/// counted and the waivers applied.
fn attempt<S: FileSource>(src: &S, options: &Options) -> Result<(Validation, Phases), Settled> {
    let mut clock = Clock::start();
    let n = src.count();
    let mut findings = src.intake_findings();
    let intake_unreadable = findings.iter().any(|f| f.rule == "archive.unreadable");
    // The few files needed whole are read first; the others in the per-file pass.
    let held_at: Vec<usize> = (0..n).filter(|&i| held_whole(src.path(i))).collect();
    let held_read = src.hold(&held_at);
    let mut is_held = vec![false; n];
    let mut whole: Vec<Option<&[u8]>> = vec![None; n];
    for (&i, read) in held_at.iter().zip(&held_read) {
        is_held[i] = true;
        whole[i] = read.as_deref().ok();
    }
    let Classified {
        mut reports,
        jobs_files,
        broken_jobs,
        telemetry,
    } = classify_files(src, &whole, &is_held, &mut findings);
    let suite = suite_of(&mut reports, options, intake_unreadable, &mut findings);
    let jobs = jobs_of(&jobs_files, suite.as_deref(), options, &mut findings);
    if broken_jobs || reports.is_empty() {
        // A jobs file that is there but broken is `jobs.invalid`, not missing; without
        // reports a missing one adds nothing to `reports.none`.
        findings.retain(|f| f.rule != "jobs.missing");
    }
    clock.lap("classify, jobs files");

    let configs = jobs.vendor.as_ref().map(|(_, j)| JobConfigs::new(j));
    let manifest = (0..n)
        .filter(|&i| src.path(i) == MANIFEST_NAME)
        .find_map(|i| whole[i]);
    let held = HeldFiles {
        at: &held_at,
        read: &held_read,
        is_held: &is_held,
        whole: &whole,
    };
    let checked = Checking {
        reports: &reports,
        telemetry: &telemetry,
        configs: configs.as_ref(),
        hashing: manifest.is_some(),
    };
    let pass = per_file_pass(src, &held, &checked)?;
    let (run_index, entries) = entries_of(&reports, pass.per_file, &mut findings);
    telemetry_rules(&reports, &entries, pass.telemetry, &mut findings);
    clock.lap("parse and per-entry rules");

    let paths: Vec<String> = reports.iter().map(|r| r.path.to_owned()).collect();
    let places = places_of(&reports, &run_index, &entries);
    let fallback;
    let expected = match (&jobs.vendor, &jobs.baselines) {
        (Some((_, j)), _) | (None, Some((_, j))) => j,
        (None, None) => {
            fallback = jobs_seen(&entries);
            &fallback
        }
    };
    let cross = CrossFile {
        entries: &entries,
        paths: &paths,
        run_names: &run_index.names,
        places: &places,
        expected,
        any_reports: !reports.is_empty(),
        min_runs: options.min_runs,
    };
    findings.extend(cross.rules(src, &whole, manifest, pass.digests));
    // The repository is not thread-safe (git2), so versions are checked here, in turn.
    let versions = match options.versions {
        Some(oracle) => rules::versions::against_repo(&entries, &paths, oracle, &mut findings),
        None => Vec::new(),
    };
    clock.lap("cross-file rules");

    let summary = Summary {
        files: n,
        suite,
        jobs_file: jobs.vendor.map(|(name, _)| name),
        baselines: jobs.baselines.map(|(name, _)| name),
        ..summary_of(reports.len(), &entries, &run_index, &places)
    };
    let (kept, waived, omitted) = apply_waivers(findings, options);
    let validation = Validation {
        findings: kept,
        waived,
        versions,
        summary,
        omitted,
    };
    Ok((validation, Phases(clock.phases)))
}

/// The time each phase of a validation took, lap by lap.
struct Clock {
    phases: Vec<(&'static str, std::time::Duration)>,
    since: std::time::Instant,
}

impl Clock {
    fn start() -> Self {
        Self {
            phases: Vec::new(),
            since: std::time::Instant::now(),
        }
    }

    /// Ends `phase` now; the next starts.
    fn lap(&mut self, phase: &'static str) {
        let now = std::time::Instant::now();
        self.phases.push((phase, now - self.since));
        self.since = now;
    }
}

/// The summary's counts: report files, entries, runs and how they were told apart, GPUs,
/// benches.
fn summary_of(
    report_files: usize,
    entries: &[EntryFacts],
    run_index: &RunIndex,
    places: &Places,
) -> Summary {
    Summary {
        report_files,
        entries: entries.len(),
        runs: run_index.names.len(),
        runs_from: if run_index.split.is_some() {
            "run_id"
        } else {
            "folders"
        }
        .to_owned(),
        gpus: places.gpus.len(),
        benches: entries
            .iter()
            .filter_map(|e| e.name.as_deref())
            .collect::<BTreeSet<_>>()
            .len(),
        ..Summary::default()
    }
}

/// What the files of a submission are: its report files (of any suite), the jobs files
/// read whole, and whether a broken one was found.
struct Classified<'a> {
    reports: Vec<ReportRef<'a>>,
    jobs_files: Vec<Held<'a>>,
    broken_jobs: bool,
    /// The indices of the telemetry files.
    telemetry: Vec<usize>,
}

/// Classifies every file that read (`whole` holds the bytes of those `is_held`); a file
/// no rule recognises is `file.unknown`, or `jobs.invalid` when it is a JSON file at the
/// root that does not parse.
fn classify_files<'a, S: FileSource>(
    src: &'a S,
    whole: &[Option<&'a [u8]>],
    is_held: &[bool],
    findings: &mut Vec<Finding>,
) -> Classified<'a> {
    let mut out = Classified {
        reports: Vec::new(),
        jobs_files: Vec::new(),
        broken_jobs: false,
        telemetry: Vec::new(),
    };
    // A file that did not read is left out (the validation then starts over without it).
    for i in (0..src.count()).filter(|&i| !is_held[i] || whole[i].is_some()) {
        let path = src.path(i);
        match mlbench_submission::layout::classify(path, || {
            whole[i].is_some_and(looks_like_jobs_bytes)
        }) {
            Role::Report { name, run } => out.reports.push(ReportRef {
                index: i,
                path,
                name,
                run,
            }),
            Role::Jobs => out
                .jobs_files
                .extend(whole[i].map(|bytes| Held { path, bytes })),
            // Telemetry is `mlbench run`'s, beside the reports: checked in the per-file pass.
            Role::Telemetry => out.telemetry.push(i),
            Role::Pack => {}
            Role::Profile => {
                if let Some(found) = whole[i].and_then(not_a_trace) {
                    let finding = catalogued("profile.invalid", "a Chrome trace", found);
                    findings.push(finding.file(path));
                }
            }
            Role::Unknown => match broken_json_at_root(path, whole[i]) {
                // Truncated, or nested past the parser's limit: the jobs file it was.
                Some(e) => {
                    out.broken_jobs = true;
                    let found = format!("not JSON: {e}");
                    let finding = catalogued("jobs.invalid", "a jobs file", found);
                    findings.push(finding.file(path));
                }
                None => findings.push(
                    catalogued(
                        "file.unknown",
                        "report files, the jobs file and the pack manifest",
                        "an unexpected file",
                    )
                    .file(path),
                ),
            },
        }
    }
    out
}

/// Why `bytes` are not a Chrome trace (a JSON object with a `traceEvents` list), if not.
fn not_a_trace(bytes: &[u8]) -> Option<String> {
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Err(e) => Some(format!("not JSON: {e}")),
        Ok(v)
            if v.get("traceEvents")
                .is_some_and(serde_json::Value::is_array) =>
        {
            None
        }
        Ok(_) => Some("JSON without a traceEvents list".to_owned()),
    }
}

/// The suite validated, chosen as every loader chooses it
/// (`mlbench_schema::choose_suite`); where that fails on several suites, the one with the
/// most files is validated and the mix is a finding. `reports` keeps that suite's files;
/// none left is `reports.none` (unless the archive could not be read at all).
fn suite_of(
    reports: &mut Vec<ReportRef>,
    options: &Options,
    intake_unreadable: bool,
    findings: &mut Vec<Finding>,
) -> Option<String> {
    let mut none_of_suite = None;
    let suite = match choose_suite(
        reports.iter().map(|r| r.name.suite()),
        options.suite.as_deref(),
    ) {
        Ok(choice) => Some(choice.suite),
        Err(none @ SuiteError::NoneOfSuite { .. }) => {
            // Said with the suites that are there (and the likely one).
            none_of_suite = Some(none.to_string());
            options.suite.clone()
        }
        Err(SuiteError::NoReports) => None,
        Err(mixed @ SuiteError::Several { .. }) => {
            let chosen = mixed.most_common().map(str::to_owned);
            if let SuiteError::Several { suites } = &mixed {
                let list: Vec<String> = suites
                    .iter()
                    .map(|(s, n)| {
                        format!(
                            "{s} ({})",
                            mlbench_schema::words::count(*n, "file", "files")
                        )
                    })
                    .collect();
                findings.push(catalogued(
                    "reports.mixed-suites",
                    "report files of one suite",
                    format!(
                        "{}; validated `{}`",
                        list.join(", "),
                        chosen.as_deref().unwrap_or("")
                    ),
                ));
            }
            chosen
        }
    };
    reports.retain(|r| Some(r.name.suite()) == suite.as_deref());
    // An archive that could not be read says nothing about what it holds.
    if reports.is_empty() && !intake_unreadable {
        let found = none_of_suite.unwrap_or_else(|| "no report files".to_owned());
        findings.push(catalogued("reports.none", "report files", found));
    }
    suite
}

/// The vendor's jobs file and the baselines it is held against, each with its name.
struct JobsPair {
    vendor: Option<(String, JobsFile)>,
    baselines: Option<(String, JobsFile)>,
}

/// The vendor's jobs file (`pick_jobs`), the baselines (`--baselines`, else the shipped
/// ones of the suite) and the jobs rules between them.
fn jobs_of(
    jobs_files: &[Held],
    suite: Option<&str>,
    options: &Options,
    findings: &mut Vec<Finding>,
) -> JobsPair {
    let vendor = pick_jobs(jobs_files, suite, options, findings);
    let baselines = options.baselines.clone().or_else(|| {
        suite.and_then(|s| JobsFile::builtin(s).map(|j| (format!("baselines/jobs/{s}.json"), j)))
    });
    match (&vendor, &baselines) {
        (Some((vendor_name, vendor)), Some((base_name, base))) => rules::jobs::check(
            vendor,
            vendor_name,
            base,
            base_name,
            options.track,
            &options.allow,
            findings,
        ),
        (Some((vendor_name, _)), None) => findings.push(
            catalogued(
                "jobs.no-baselines",
                format!("baselines for suite `{}`", suite.unwrap_or("")),
                "none shipped and none given",
            )
            .file(vendor_name.clone()),
        ),
        _ => {}
    }
    JobsPair { vendor, baselines }
}

/// The files read before the per-file pass: their indices, reads, and per file of the
/// submission whether it is one of them and its bytes when it read.
struct HeldFiles<'a, 'b> {
    at: &'b [usize],
    read: &'b [Result<std::borrow::Cow<'a, [u8]>, ReadFailure>],
    is_held: &'b [bool],
    whole: &'b [Option<&'a [u8]>],
}

/// What the per-file pass keeps: each report file's facts, each telemetry file's check,
/// and each file's SHA-256 when a manifest is to be checked.
struct Pass {
    per_file: Vec<FileFacts>,
    telemetry: Vec<rules::telemetry::FileCheck>,
    digests: Vec<Option<String>>,
}

/// What the per-file pass checks: the report files of the suite (with the jobs' configs)
/// and the telemetry files (indices in the submission), and whether it hashes every file.
struct Checking<'a> {
    reports: &'a [ReportRef<'a>],
    telemetry: &'a [usize],
    configs: Option<&'a JobConfigs>,
    hashing: bool,
}

/// The telemetry files' findings, and `telemetry.coverage` of the report entries by them.
fn telemetry_rules(
    reports: &[ReportRef],
    entries: &[EntryFacts],
    checks: Vec<rules::telemetry::FileCheck>,
    findings: &mut Vec<Finding>,
) {
    let mut facts = Vec::with_capacity(checks.len());
    for check in checks {
        findings.extend(check.findings);
        facts.push(check.facts);
    }
    let copies: Vec<rules::telemetry::ReportCopy> = reports
        .iter()
        .map(|r| rules::telemetry::ReportCopy {
            path: r.path,
            copy: match r.name {
                FileName::Legacy { job_id, .. } => Some(job_id),
                FileName::PerTest { .. } => None,
            },
        })
        .collect();
    rules::telemetry::coverage(&copies, entries, &facts, findings);
}

/// The per-file pass: every file not held is read (each into its thread's buffer when
/// the source reads from disk), report files of the suite are parsed and their facts
/// kept, and every file is hashed when there is a manifest to check (`hashing`). Files
/// that fail to read end it with what they come to.
fn per_file_pass<S: FileSource>(
    src: &S,
    held: &HeldFiles,
    checking: &Checking,
) -> Result<Pass, Settled> {
    let (reports, configs, hashing) = (checking.reports, checking.configs, checking.hashing);
    let n = src.count();
    let mut report_at: Vec<Option<usize>> = vec![None; n];
    for (r, report) in reports.iter().enumerate() {
        report_at[report.index] = Some(r);
    }
    let mut is_telemetry = vec![false; n];
    for &i in checking.telemetry {
        is_telemetry[i] = true;
    }
    // Already bound to start over: the files are still read, to find every one that fails.
    let doomed = held.read.iter().any(Result::is_err);
    let streamed_at: Vec<usize> = (0..n).filter(|&i| !held.is_held[i]).collect();
    let streamed = src.each(&streamed_at, |i, content| {
        let hash = hashing && src.path(i) != MANIFEST_NAME;
        let report = report_at[i].filter(|_| !doomed);
        let telemetry = is_telemetry[i] && !doomed;
        per_file(content, hash, |content| match report {
            Some(r) => {
                let report = &reports[r];
                let facts = file_facts(r, report.path, &report.name, content, configs);
                Some(Checked::Report(facts))
            }
            None if telemetry => Some(Checked::Telemetry(check_telemetry(src.path(i), content))),
            None => None,
        })
    });
    let outcomes = outcomes_in_order(
        (held.at, held.read, |bytes: &std::borrow::Cow<[u8]>| {
            bytes.len() as u64
        }),
        (&streamed_at, &streamed, |(len, _): &(u64, PerFile)| *len),
    );
    let settled = src.settle(&outcomes);
    if !settled.dropped.is_empty() {
        return Err(settled);
    }
    drop(outcomes);
    let mut pass = Pass {
        per_file: vec![FileFacts::default(); reports.len()],
        telemetry: Vec::new(),
        digests: vec![None; n],
    };
    for (&i, read) in streamed_at.iter().zip(streamed) {
        if let Ok((_, file)) = read {
            match (report_at[i], file.facts) {
                (Some(r), Some(Checked::Report(facts))) => pass.per_file[r] = facts,
                (_, Some(Checked::Telemetry(check))) => pass.telemetry.push(check),
                _ => {}
            }
            pass.digests[i] = file.sha;
        }
    }
    if hashing {
        for &i in held.at {
            if let Some(bytes) = held.whole[i].filter(|_| src.path(i) != MANIFEST_NAME) {
                pass.digests[i] = Some(sha256_hex(bytes));
            }
        }
    }
    Ok(pass)
}

/// The runs (folders and per-test names, split by run_id where a folder's streams hold
/// several runs: the rule every command shares, `mlbench_schema::runs`) and every entry
/// with its run; the files' own findings join `findings`, and smoke-sized entries are
/// `run.smoke`.
fn entries_of(
    reports: &[ReportRef],
    per_file: Vec<FileFacts>,
    findings: &mut Vec<Finding>,
) -> (RunIndex, Vec<EntryFacts>) {
    let run_index = resolve_runs(
        &reports
            .iter()
            .zip(&per_file)
            .map(|(r, f)| FileRuns {
                run: r.run.clone(),
                legacy: matches!(r.name, FileName::Legacy { .. }),
                run_ids: f.entries.iter().map(|e| e.run_id.as_deref()).collect(),
            })
            .collect::<Vec<_>>(),
    );
    let mut of_files = Vec::with_capacity(per_file.len());
    for f in per_file {
        findings.extend(f.findings);
        of_files.push(f.entries);
    }
    let entries = all_entries(of_files, &run_index.of_entry);
    let smoke = entries.iter().filter(|e| e.smoke).count();
    if smoke > 0 {
        findings.push(catalogued(
            "run.smoke",
            "entries at the jobs file's sizes",
            format!(
                "{smoke} of {} ran with --smoke",
                mlbench_schema::words::count(entries.len(), "entry", "entries")
            ),
        ));
    }
    (run_index, entries)
}

/// `run.synthetic-data`: entries flagged `synthetic_data`, or machine descriptions
/// (`systems`: path and description) that record a run on synthetic data, said once.
fn synthetic_data(
    entries: &[EntryFacts],
    systems: &[(String, mlbench_schema::SystemInfo)],
    out: &mut Vec<Finding>,
) {
    let flagged = entries.iter().filter(|e| e.synthetic_data).count();
    let declaring = systems.iter().find(|(_, s)| s.synthetic_data);
    let summary =
        mlbench_schema::system::synthetic_data_summary(flagged, entries.len(), declaring.is_some());
    if let Some(found) = summary {
        let finding = catalogued(
            "run.synthetic-data",
            "entries whose batches were read from the data set",
            found,
        );
        out.push(match (flagged, declaring) {
            (0, Some((path, _))) => finding.file(path.clone()),
            _ => finding,
        });
    }
}

/// Where the entries are: the GPUs seen, the stream holding each (run, GPU), and each
/// run's folder.
struct Places {
    gpus: BTreeSet<u32>,
    streams: HashMap<(u32, u32), usize>,
    run_folders: Vec<Option<String>>,
}

/// [`Places`] of the report files and their entries: a (run, GPU) stream is a folder's
/// stream, or, where runs are told apart by run_id, the stream each run's entries are in.
fn places_of(reports: &[ReportRef], run_index: &RunIndex, entries: &[EntryFacts]) -> Places {
    let folder_run: HashMap<&str, u32> = run_index
        .names
        .iter()
        .enumerate()
        .map(|(i, r)| (r.as_str(), i as u32))
        .collect();
    let mut places = Places {
        gpus: BTreeSet::new(),
        streams: HashMap::new(),
        run_folders: vec![None; run_index.names.len()],
    };
    for (i, r) in reports.iter().enumerate() {
        let runs = folder_run.get(r.run.as_str()).into_iter();
        let runs: Vec<u32> = runs.chain(&run_index.of_entry[i]).copied().collect();
        if let FileName::Legacy { job_id, .. } = r.name {
            places.gpus.insert(job_id);
            for &run in &runs {
                places.streams.insert((run, job_id), i);
            }
        }
        let folder = crate::layout::parent(r.path);
        if folder != "." {
            for &run in &runs {
                places.run_folders[run as usize] = Some(folder.to_owned());
            }
        }
    }
    for e in entries {
        if let Device::Gpu(g) = e.device {
            places.gpus.insert(g);
        }
    }
    places
}

/// What the cross-file rules look at.
struct CrossFile<'a> {
    entries: &'a [EntryFacts],
    paths: &'a [String],
    run_names: &'a [String],
    places: &'a Places,
    expected: &'a JobsFile,
    any_reports: bool,
    min_runs: usize,
}

impl CrossFile<'_> {
    /// The cross-file rules. They are independent: coverage, versions, runtimes and the
    /// fleet on one side, the loss rules (the costly ones) on the other, the manifest's
    /// hashes in between.
    fn rules<S: FileSource>(
        &self,
        src: &S,
        whole: &[Option<&[u8]>],
        manifest: Option<&[u8]>,
        mut digests: Vec<Option<String>>,
    ) -> Vec<Finding> {
        let (entries, paths) = (self.entries, self.paths);
        let n = src.count();
        let ((mut counted, divergent), (duplicated, manifest)) = rayon::join(
            || {
                rayon::join(
                    || self.about_runs(src, whole),
                    || {
                        let mut out = Vec::new();
                        rules::loss::divergent(entries, paths, &mut out);
                        out
                    },
                )
            },
            || {
                rayon::join(
                    || {
                        let mut out = Vec::new();
                        rules::loss::duplicated(entries, paths, &mut out);
                        out
                    },
                    || match manifest {
                        Some(manifest) => {
                            let submission = (0..n)
                                .filter(|&i| src.path(i) == SUBMISSION_NAME)
                                .find_map(|i| whole[i]);
                            rules::manifest::check_manifest_with(manifest, submission, || {
                                (0..n)
                                    .filter_map(|i| Some((src.path(i), digests[i].take()?)))
                                    .collect()
                            })
                        }
                        None => Vec::new(),
                    },
                )
            },
        );
        counted.extend(divergent);
        counted.extend(duplicated);
        counted.extend(manifest);
        counted
    }

    /// Coverage, versions, runtimes and the fleet.
    fn about_runs<S: FileSource>(&self, src: &S, whole: &[Option<&[u8]>]) -> Vec<Finding> {
        let mut out = Vec::new();
        if self.any_reports {
            let coverage = Coverage {
                entries: self.entries,
                runs: self.run_names,
                run_folders: &self.places.run_folders,
                files: self.paths,
                streams: &self.places.streams,
                gpus: &self.places.gpus,
                jobs: self.expected,
                min_runs: self.min_runs,
            };
            coverage.check(&mut out);
        }
        rules::versions::inconsistent(self.entries, self.paths, &mut out);
        rules::runtime::mixed(self.entries, self.paths, &mut out);
        let described: Vec<(String, mlbench_schema::SystemInfo)> = (0..src.count())
            .filter(|&i| mlbench_schema::system::is_system_file(src.path(i)))
            .filter_map(|i| {
                let info = mlbench_schema::SystemInfo::from_json(whole[i]?)?;
                Some((src.path(i).to_owned(), info))
            })
            .collect();
        rules::runtime::declared(self.entries, &described, &mut out);
        synthetic_data(self.entries, &described, &mut out);
        let mut systems: Vec<mlbench_schema::SystemInfo> =
            described.iter().map(|(_, s)| s.clone()).collect();
        systems.sort_by(|a, b| a.hostname.cmp(&b.hostname));
        rules::fleet::check(self.entries, self.run_names, &systems, &mut out);
        let records: Vec<(String, mlbench_schema::stopping::StoppingRule)> = (described.iter())
            .filter_map(|(path, info)| Some((path.clone(), info.stopping.clone()?)))
            .collect();
        rules::stopping::check(self.entries, self.run_names, &records, &mut out);
        out
    }
}

/// The findings a waiver covers set apart from the others, each side bounded
/// ([`bounded`]): (kept, waived, what was omitted).
fn apply_waivers(
    findings: Vec<Finding>,
    options: &Options,
) -> (Vec<Finding>, Vec<Finding>, Vec<Omitted>) {
    let (waived, kept): (Vec<Finding>, Vec<Finding>) = findings
        .into_iter()
        .partition(|f| options.waivers.iter().any(|w| w.covers(f)));
    let mut omitted = Vec::new();
    let kept = bounded(kept, false, &mut omitted);
    let waived = bounded(waived, true, &mut omitted);
    (kept, waived, omitted)
}

/// The entries of every file in one vector, each given its run (`runs`: one per entry of
/// each file), moved in parallel, file by file, into their places: a large submission's
/// facts are 6.5 MB of fresh pages, which one thread took 4–5 ms to fault in and fill.
fn all_entries(files: Vec<Vec<EntryFacts>>, runs: &[Vec<u32>]) -> Vec<EntryFacts> {
    use rayon::prelude::*;
    assert_eq!(files.len(), runs.len());
    let total = files.iter().map(Vec::len).sum();
    let mut entries: Vec<EntryFacts> = Vec::with_capacity(total);
    let mut rest = &mut entries.spare_capacity_mut()[..total];
    let mut places = Vec::with_capacity(files.len());
    for file in &files {
        let (place, after) = std::mem::take(&mut rest).split_at_mut(file.len());
        places.push(place);
        rest = after;
    }
    places
        .into_par_iter()
        .zip(files)
        .zip(runs)
        .for_each(|((place, file), runs)| {
            // A short `runs` would leave slots unwritten: stop before they are counted.
            assert_eq!(runs.len(), file.len(), "one run per entry");
            for ((slot, mut entry), &run) in place.iter_mut().zip(file).zip(runs) {
                entry.run = run;
                slot.write(entry);
            }
        });
    // SAFETY: the places split the first `total` slots of the spare capacity, one per
    // entry of every file (their lengths are the files', which sum to `total`), and each
    // was written above (`runs` matches each file's length, or the assertion stopped us).
    unsafe { entries.set_len(total) };
    entries
}

fn pick_jobs(
    candidates: &[Held],
    suite: Option<&str>,
    options: &Options,
    findings: &mut Vec<Finding>,
) -> Option<(String, JobsFile)> {
    if let Some((name, jobs)) = &options.jobs {
        return Some((name.clone(), jobs.clone()));
    }
    let chosen = match candidates {
        [] => {
            findings.push(catalogued(
                "jobs.missing",
                "the jobs file the suite ran with",
                "none",
            ));
            return None;
        }
        [one] => *one,
        several => {
            let wanted = suite.map(|s| format!("{s}.json"));
            let chosen = several
                .iter()
                .find(|f| Some(base_name(f.path)) == wanted.as_deref())
                .unwrap_or(&several[0]);
            let names: Vec<&str> = several.iter().map(|f| f.path).collect();
            findings.push(catalogued(
                "jobs.several",
                "one jobs file",
                format!("{}; used {}", names.join(", "), chosen.path),
            ));
            *chosen
        }
    };
    match JobsFile::parse(chosen.path, chosen.bytes) {
        Ok(jobs) => Some((chosen.path.to_owned(), jobs)),
        Err(e) => {
            findings
                .push(catalogued("jobs.invalid", "a jobs file", e.to_string()).file(chosen.path));
            None
        }
    }
}

/// Without any jobs file, the benches seen stand for the jobs expected.
fn jobs_seen(entries: &[EntryFacts]) -> JobsFile {
    let mut names: BTreeMap<&str, bool> = BTreeMap::new();
    for e in entries {
        if let Some(name) = &e.name {
            let machine = names.entry(name).or_insert(true);
            *machine &= matches!(e.device, Device::Machine(_));
        }
    }
    JobsFile {
        jobs: names
            .into_iter()
            .map(|(name, machine)| Job {
                name: name.to_owned(),
                cmd: String::new(),
                args: Vec::new(),
                cgroup: Some(if machine { "all" } else { "student" }.to_owned()),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(file: usize, entry: usize) -> EntryFacts {
        EntryFacts::blank(file, entry, u32::MAX, &format!("bench{entry}"))
    }

    #[test]
    fn all_entries_in_file_order_with_their_runs() {
        let files = vec![
            vec![entry(0, 0), entry(0, 1)],
            vec![],
            vec![entry(2, 0), entry(2, 1), entry(2, 2)],
        ];
        let runs = vec![vec![4, 5], vec![], vec![6, 6, 7]];
        let all = all_entries(files, &runs);
        let got: Vec<(usize, usize, u32, Option<&str>)> = all
            .iter()
            .map(|e| (e.file, e.entry, e.run, e.name.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (0, 0, 4, Some("bench0")),
                (0, 1, 5, Some("bench1")),
                (2, 0, 6, Some("bench0")),
                (2, 1, 6, Some("bench1")),
                (2, 2, 7, Some("bench2")),
            ]
        );
        assert!(all_entries(Vec::new(), &[]).is_empty());
    }

    #[test]
    #[should_panic(expected = "one run per entry")]
    fn all_entries_refuses_runs_that_do_not_cover_a_file() {
        all_entries(vec![vec![entry(0, 0), entry(0, 1)]], &[vec![1]]);
    }
}
