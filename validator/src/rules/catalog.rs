//! The catalogue of rules: stable ids, default severities and hints. `docs/validate.md`
//! lists the same table; a unit test keeps ids unique and well formed.

use mlbench_results::validation::{Rule, RuleList, Severity};

const fn def(
    id: &'static str,
    severity: Severity,
    summary: &'static str,
    hint: &'static str,
) -> Rule {
    Rule {
        id,
        severity,
        summary,
        hint,
    }
}

use Severity::{Error, Warning};

/// The catalogue as the result models carry it (`validate --list-rules`, the rules'
/// summaries beside the findings).
pub fn catalogue() -> RuleList {
    RuleList(RULES)
}

/// Every rule, grouped by family.
pub const RULES: &[Rule] = &[
    // Intake: the archive or folder itself.
    def(
        "archive.unreadable",
        Error,
        "the archive cannot be read (not a zip, truncated, corrupt central directory)",
        "re-create the zip (`mlbench pack DIR -o submission.zip`) and send it again",
    ),
    def(
        "archive.corrupt",
        Error,
        "an entry of the archive cannot be decompressed or its size or CRC does not match its header",
        "re-create the zip; the entry was damaged or the archive was tampered with",
    ),
    def(
        "archive.inconsistent",
        Error,
        "the archive disagrees with itself: a local header names another file than the central directory, an entry's data runs past the end of the file, the central directory's declared size is wrong, a folder entry carries data",
        "re-create the zip with a standard tool (`mlbench pack DIR -o submission.zip`)",
    ),
    def(
        "archive.unsafe-path",
        Error,
        "an entry name is absolute or climbs out of the archive (`..`)",
        "zip the output folder from inside it so that names are relative",
    ),
    def(
        "archive.symlink",
        Error,
        "an entry is a symbolic link",
        "zip the files themselves, not links to them",
    ),
    def(
        "archive.encrypted",
        Error,
        "an entry is encrypted",
        "send the archive without a password",
    ),
    def(
        "archive.name-encoding",
        Error,
        "an entry name is not valid UTF-8",
        "rename the file with ASCII or UTF-8 characters",
    ),
    def(
        "archive.duplicate",
        Error,
        "two entries have the same name",
        "zip each file once",
    ),
    def(
        "archive.too-large",
        Error,
        "the uncompressed size of an entry or of the whole archive is over the limit",
        "raise the limit with --max-bytes if the submission is genuinely this large",
    ),
    def(
        "archive.ratio",
        Error,
        "an entry's compression ratio is over the limit (a zip bomb)",
        "zip the report files as written; raise --max-ratio only for a known-good archive",
    ),
    def(
        "archive.too-many-files",
        Error,
        "the archive or folder holds more files than the limit",
        "send only the output folders",
    ),
    def(
        "file.unreadable",
        Error,
        "a file or folder of the folder cannot be read: permissions, a FIFO, socket or device, a folder nested too deep",
        "send the output folders as regular files and folders, readable, a few levels deep",
    ),
    def(
        "file.name-encoding",
        Warning,
        "a file or folder name is not valid UTF-8; the file was read, but a zip cannot carry the name",
        "rename it with ASCII or UTF-8 characters before packing",
    ),
    def(
        "file.symlink",
        Warning,
        "a folder entry is a symbolic link; it was not followed",
        "copy the file in place of the link",
    ),
    def(
        "file.unknown",
        Warning,
        "a file that is neither a report, a jobs file, a manifest nor telemetry",
        "leave logs and other files out of the submission, or ignore this warning",
    ),
    def(
        "profile.invalid",
        Error,
        "a profile trace (`profiles/*.trace.json`) that is not a Chrome trace",
        "pack the traces `mlbench run --profile` wrote, unchanged",
    ),
    // Layout.
    def(
        "reports.none",
        Error,
        "no report files in the submission",
        "reports are named <suite>_<K>.json (one per GPU, in one folder per run) or <suite>.<bench>.R<run>.D<device>.<time>.json",
    ),
    def(
        "reports.mixed-suites",
        Error,
        "report files of several suites (jobs files) in one submission",
        "send one suite per submission, or pick one with --name",
    ),
    def(
        "jobs.missing",
        Warning,
        "no jobs file in the submission and none given with --jobs: the expected benches come from the baselines",
        "include the jobs file the suite was run with (<suite>.json)",
    ),
    def(
        "jobs.several",
        Warning,
        "several jobs files in the submission",
        "include only the jobs file the suite was run with",
    ),
    def(
        "jobs.invalid",
        Error,
        "a jobs file that does not have the jobs-file shape",
        "a jobs file is a JSON array of {name, cmd, args[, cgroup]} objects",
    ),
    def(
        "jobs.no-baselines",
        Warning,
        "no baselines to compare the vendor's jobs file with (no shipped jobs file of the suite's name)",
        "pass the reference jobs file with --baselines FILE",
    ),
    def(
        "jobs.missing-job",
        Error,
        "a job of the baselines is absent from the vendor's jobs file",
        "every baseline job must be run; restore it from the baselines",
    ),
    def(
        "jobs.extra-job",
        Error,
        "a job absent from the baselines is in the vendor's jobs file",
        "remove it, or submit in the tweaked track (--track tweaked)",
    ),
    // Report files.
    def(
        "parse.json",
        Error,
        "a report file is not readable JSON",
        "the file was truncated or edited by hand; re-run the benchmark or restore the file",
    ),
    def(
        "parse.type",
        Error,
        "a field of an entry has the wrong type",
        "report fields are written by the suite; do not edit them",
    ),
    def(
        "parse.missing-field",
        Error,
        "an entry lacks a field every report has",
        "report fields are written by the suite; do not edit them",
    ),
    // Coverage.
    def(
        "runs.too-few",
        Error,
        "fewer runs of a bench on a GPU than --min-runs",
        "repeat the suite until every bench has the required runs on every GPU",
    ),
    def(
        "bench.missing",
        Error,
        "a bench of the jobs file is absent on a GPU in a run",
        "re-run the bench (run.sh --name <bench>) in that run",
    ),
    def(
        "bench.duplicate",
        Error,
        "the same bench and configuration twice in one run on one GPU",
        "keep one result per run; results of re-runs go in a new run folder",
    ),
    def(
        "bench.unknown",
        Warning,
        "a bench that is not in the jobs file",
        "remove it, or include the jobs file it came from",
    ),
    def(
        "loss.nan",
        Error,
        "NaN or ±Infinity in batch_loss",
        "the training diverged; fix the configuration or the platform and re-run",
    ),
    def(
        "run.incomplete",
        Error,
        "an entry with completed: false",
        "the bench did not finish; re-run it",
    ),
    def(
        "run.failed",
        Error,
        "a failure stub written by the runner",
        "the bench process failed; see the run's log and re-run it",
    ),
    def(
        "run.smoke",
        Warning,
        "entries ran at smoke sizes (mlbench run --smoke): a set-up check, not a submission",
        "run the suite without --smoke to produce a submission; the smoke sizes explain the arguments that differ from the jobs file, which are not reported",
    ),
    def(
        "run.synthetic-data",
        Warning,
        "entries ran on synthetic data (mlbench run --synthetic-data): their throughput does not include reading and decoding the data set",
        "run the suite without --synthetic-data (the data sets prepared) to measure what the targets measured; a synthetic run isolates the model's compute",
    ),
    // Fleets.
    def(
        "fleet.inconsistent",
        Warning,
        "nodes of one submission with different GPU models, drivers or library versions",
        "run every node with the same hardware and software stack, or submit the nodes apart",
    ),
    def(
        "fleet.node-missing",
        Warning,
        "a node the submission declares (its system.json) is absent from a run",
        "re-run the suite on that node, or leave its system description out",
    ),
    // Runtimes.
    def(
        "runtime.mixed",
        Error,
        "entries of one submission written by two runtimes (the suite's scripts and mlbench run)",
        "run every bench of the submission with one runtime (the suite's scripts or `mlbench run`); the two do not measure the same throughput",
    ),
    def(
        "runtime.declared",
        Warning,
        "a machine description (system.json) declares a runtime that entries of the submission contradict: they were written by the other runtime",
        "keep system.json with the entries of the run that wrote it; the entries, not the declaration, decide the runtime report and grid show",
    ),
    // Run counts.
    def(
        "runs.stopping",
        Error,
        "the stopping rule a submission records (run --until) is not the one its runs followed: another rule or constant, another run count, a precision not reached, or runs past the point where the rule stops",
        "report what the runs show: rerun with `mlbench run --until`, or remove the stopping record from system.json",
    ),
    // Versions.
    def(
        "version.inconsistent",
        Error,
        "a bench's version differs between runs or GPUs",
        "run every repetition with the same checkout of the suite",
    ),
    def(
        "version.unknown",
        Error,
        "a version that is neither a hash of the bench's script in the repository nor a commit in it",
        "run the suite from a checkout of the benchmark repository; disclose modified scripts",
    ),
    def(
        "version.mismatch",
        Error,
        "a version that names another revision of the bench's script than the one at --rev",
        "run the suite at the required revision, or pass the revision used with --rev",
    ),
    def(
        "version.no-script",
        Error,
        "the bench's script cannot be found in the repository at --rev",
        "map the bench to its script with --scripts FILE",
    ),
    // Arguments.
    def(
        "args.disallowed-change",
        Error,
        "an argument of a job differs from the baselines and may not be changed in this track",
        "in the baseline track only --batch-size, --num-processes, --workers and --cuda may change (--allow adds more)",
    ),
    def(
        "args.entry-mismatch",
        Error,
        "an entry's recorded argument differs from the jobs file",
        "the reports were not produced by this jobs file; include the jobs file actually used",
    ),
    def(
        "id.mismatch",
        Error,
        "unique_id recomputed from the entry's arguments differs from the recorded one",
        "an argument was edited after the run, or the entry was not written by the suite",
    ),
    def(
        "work.inconsistent",
        Error,
        "train_item does not follow from train, batch_size and number",
        "throughput is derived from the timings by the suite; do not edit either",
    ),
    def(
        "work.not-a-measurement",
        Error,
        "a throughput or timing that is no measurement: not finite, negative or over 1e12 (the entry is not scored), or a timing of zero (a stage that measured nothing)",
        "throughputs and timings are written by the suite; re-run the bench, and do not edit its figures",
    ),
    def(
        "loss.divergent",
        Warning,
        "a loss curve lies outside the band of the other runs and GPUs of the bench",
        "check that run's numerics (precision, driver, seed handling)",
    ),
    def(
        "loss.duplicated",
        Error,
        "two independent runs or GPUs with bit-identical loss curves or timings",
        "every result must come from its own execution; do not copy report files",
    ),
    // Manifest.
    def(
        "manifest.malformed",
        Error,
        "MANIFEST.sha256 or SUBMISSION.json cannot be read",
        "re-create the archive with `mlbench pack`",
    ),
    def(
        "manifest.mismatch",
        Error,
        "a file's SHA-256 differs from the manifest",
        "the file changed after packing; re-pack the submission",
    ),
    def(
        "manifest.missing",
        Error,
        "a file listed in the manifest is absent",
        "the archive lost a file after packing; re-pack the submission",
    ),
    def(
        "manifest.extra",
        Error,
        "a file is present but not listed in the manifest",
        "a file was added after packing; re-pack the submission",
    ),
    // Telemetry (`mlbench run`'s, beside the reports; docs/telemetry.md).
    def(
        "telemetry.unreadable",
        Error,
        "a telemetry file that does not parse: a line that is not a telemetry line, no header first, a second header, a last line cut short, a sample of a device the header does not list",
        "the file was damaged or edited after the run; restore it, or re-run the bench",
    ),
    def(
        "telemetry.too-few",
        Warning,
        "fewer than 60 samples of a device in a timed window (MLPerf's rule; the idle baseline aside)",
        "the window is too short for the rate: raise --sample-hz or run longer; the energy is rough",
    ),
    def(
        "telemetry.gap",
        Warning,
        "two samples of a device more than two sampling periods apart inside a timed window",
        "the sampler was starved (a loaded machine, a slow source); the counter's energy still holds, the power trace is coarse there",
    ),
    def(
        "telemetry.clock",
        Error,
        "a telemetry file's times do not run forward: lines out of time order, a device's samples not strictly later than its previous one, window marks that do not pair up",
        "the file was edited or merged from several; telemetry times come from one monotonic clock",
    ),
    def(
        "telemetry.counter-backward",
        Error,
        "an energy counter steps backward on a sample not flagged counter_wrapped or counter_reset",
        "the sampler flags every backward step; an unflagged one means an edited file",
    ),
    def(
        "telemetry.power-range",
        Error,
        "a power reading below 0, above 1.5× the device's power limit, or above 10 kW (10,000,000 mW) whatever the limit",
        "a broken sensor or a unit mistake (W for mW); the power-based energy is wrong",
    ),
    def(
        "telemetry.counter-resolution",
        Error,
        "a device's energy counter resolution that is not a finite number above 0 and at most 1 J (1,000,000 µJ) per count",
        "no counter ticks in more than joules; the energies of this file are not used (the report sets it aside)",
    ),
    def(
        "telemetry.time-range",
        Error,
        "a sample or window mark more than a day (86,400 s) after the line before it: past the run",
        "the sampler writes a line every period on a clock that stops in suspend; a time that far on is an edited or broken file (the report sets it aside)",
    ),
    def(
        "telemetry.summary-mismatch",
        Error,
        "a summary line's energy (or sample count) differs from the one recomputed from the samples by more than 1 %, or summarises a window that does not exist",
        "the summary lines are the sampler's arithmetic on the same samples; a difference means an edited file",
    ),
    def(
        "telemetry.coverage",
        Error,
        "telemetry does not cover every timed window of every copy: a window not inside a device's samples, or (when the submission carries telemetry) a report entry without a telemetry file of its bench and copy whose train window is covered",
        "keep every file of output<r>/telemetry/ in the submission; re-run the copies whose telemetry is missing",
    ),
];

/// The rule with this id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// Whether `pattern` (an id, `family.*` or `*`) names at least one rule.
pub fn pattern_matches_any(pattern: &str) -> bool {
    RULES.iter().any(|r| pattern_matches(pattern, r.id))
}

/// Whether `pattern` (an id, `family.*` or `*`) matches the rule `id`.
pub fn pattern_matches(pattern: &str, id: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => id.starts_with(prefix),
        None => pattern == id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let mut seen = std::collections::BTreeSet::new();
        for r in RULES {
            assert!(seen.insert(r.id), "duplicate {}", r.id);
            let (family, name) = r.id.split_once('.').expect("family.name");
            assert!(!family.is_empty() && !name.is_empty(), "{}", r.id);
            assert!(
                r.id.chars()
                    .all(|c| c.is_ascii_lowercase() || c == '.' || c == '-'),
                "{}",
                r.id
            );
            assert!(!r.hint.is_empty() && !r.summary.is_empty(), "{}", r.id);
        }
    }

    #[test]
    fn unreadable_rules_are_errors_of_the_catalogue() {
        for id in mlbench_results::validation::UNREADABLE {
            assert_eq!(rule(id).map(|r| r.severity), Some(Error), "{id}");
        }
    }

    #[test]
    fn patterns() {
        assert!(pattern_matches("loss.*", "loss.nan"));
        assert!(!pattern_matches("loss.*", "run.failed"));
        assert!(pattern_matches("loss.nan", "loss.nan"));
        assert!(pattern_matches("*", "run.failed"));
        assert!(pattern_matches_any("archive.*"));
        assert!(!pattern_matches_any("nope.*"));
    }
}

#[cfg(test)]
mod docs {
    use super::RULES;

    /// docs/validate.md lists every rule with its severity, as `--list-rules` prints it.
    #[test]
    fn every_rule_is_documented() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/validate.md");
        let text = std::fs::read_to_string(path).expect("docs/validate.md");
        for r in RULES {
            let row = format!("| `{}` | {} | {} |", r.id, r.severity.as_str(), r.summary);
            assert!(text.contains(&row), "docs/validate.md lacks the row {row}");
        }
    }
}
