//! The telemetry rules (docs/validate.md "Telemetry"): each telemetry file of a
//! submission read and checked on its own ([`check_file`]: it reads, its clock runs
//! forward, its counters never step back unflagged, its power is in range, each timed
//! window has enough samples without gaps and is covered, its summary lines agree with
//! the samples), then across files ([`coverage`]): every copy of every report that
//! `mlbench run` wrote has a telemetry file whose `train` window is covered. A submission
//! without telemetry gets none of these findings: telemetry is optional.

use crate::facts::EntryFacts;
use crate::finding::catalogued;
use crate::layout::{base_name, parent};
use mlbench_results::validation::Finding;
use mlbench_schema::telemetry::{self, Flag, IDLE_WINDOW, TelemetryFile, TelemetryReadError};
use mlbench_telemetry::summary::{MIN_SAMPLES, WindowSummary, summarize};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// A summary line's energy disagrees with the samples' beyond this relative difference.
pub const SUMMARY_TOLERANCE: f64 = 0.01;

/// Power above this many times the device's power limit is out of range.
pub const POWER_LIMIT_FACTOR: f64 = 1.5;

/// Two samples of a device further apart than this many sampling periods are a gap (the
/// sampler's own summary flags it by the same rule).
pub use mlbench_telemetry::summary::GAP_PERIODS;

/// The timed window of a copy (`mlbench run`'s: the counted observations).
pub const TRAIN_WINDOW: &str = "train";

/// Benches whose entries need no telemetry file: `mlbench run` samples each world of
/// scaling's sweep from its rank 0, but not a world across nodes (rank 0 reads its own
/// node only; docs/runner.md "Telemetry"). The files there are checked like any other.
pub const COVERAGE_EXEMPT_BENCHES: &[&str] = &["scaling"];

/// What [`coverage`] needs of one telemetry file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelemetryFacts {
    /// The file, in the submission.
    pub path: String,
    /// Its bench: the header's, else the file name's (`<bench>.<copy>[.n].jsonl`).
    pub bench: Option<String>,
    /// Its copy, likewise.
    pub copy: Option<u32>,
    /// Its `train` windows that every device's samples cover (0 for a file that does not
    /// read).
    pub covered_train: usize,
}

/// The outcome of [`check_file`].
#[derive(Debug, Clone)]
pub struct FileCheck {
    /// The file's findings.
    pub findings: Vec<Finding>,
    /// What coverage needs of it.
    pub facts: TelemetryFacts,
}

/// Checks one telemetry file (`path` in the submission, its bytes).
pub fn check_file(path: &str, bytes: &[u8]) -> FileCheck {
    let (bench, copy) = name_parts(base_name(path));
    let mut facts = TelemetryFacts {
        path: path.to_owned(),
        bench,
        copy,
        covered_train: 0,
    };
    let file = match telemetry::parse(Path::new(path), bytes) {
        Ok(file) => file,
        Err(e) => {
            let finding = unreadable(path, &e);
            return FileCheck {
                findings: vec![finding],
                facts,
            };
        }
    };
    facts.bench = file.header.bench.clone().or(facts.bench);
    facts.copy = file.header.copy.or(facts.copy);
    let mut findings = Vec::new();
    let at = FileAt { path, file: &file };
    if file.truncated_tail {
        let last = bytes.split(|&b| b == b'\n').count();
        findings.push(
            catalogued(
                "telemetry.unreadable",
                "whole lines, each ending with a newline",
                "the last line is cut short (an interrupted write)",
            )
            .file(path)
            .field(format!("line {last}")),
        );
    }
    at.unknown_devices(&mut findings);
    at.clock(&mut findings);
    at.counters(&mut findings);
    at.power(&mut findings);
    let windows = summarize(&file).windows;
    facts.covered_train = at.windows(&windows, &mut findings);
    at.summaries(&windows, &mut findings);
    FileCheck { findings, facts }
}

/// The bench and copy a telemetry file's name gives: `<bench>.<copy>.jsonl`,
/// `<bench>.<copy>.<n>.jsonl`.
fn name_parts(name: &str) -> (Option<String>, Option<u32>) {
    let Some(stem) = name.strip_suffix(".jsonl") else {
        return (None, None);
    };
    let parts: Vec<&str> = stem.rsplitn(3, '.').collect();
    let numbered = |s: &str| s.parse::<u32>().ok();
    match parts.as_slice() {
        [n, copy, bench] if numbered(n).is_some() && numbered(copy).is_some() => {
            (Some((*bench).to_owned()), numbered(copy))
        }
        [copy, rest @ ..] if numbered(copy).is_some() => {
            let bench: Vec<&str> = rest.iter().rev().copied().collect();
            (Some(bench.join(".")), numbered(copy))
        }
        _ => (None, None),
    }
}

/// The finding of a file that does not parse, at the line its error names.
fn unreadable(path: &str, e: &TelemetryReadError) -> Finding {
    let line = match e {
        TelemetryReadError::NotUtf8 { line, .. }
        | TelemetryReadError::Line { line, .. }
        | TelemetryReadError::SecondHeader { line, .. } => Some(*line),
        TelemetryReadError::NoHeader { .. } => Some(1),
        _ => None,
    };
    let finding = catalogued(
        "telemetry.unreadable",
        "a telemetry file (docs/telemetry.md)",
        e.to_string(),
    )
    .file(path);
    match line {
        Some(line) => finding.field(format!("line {line}")),
        None => finding,
    }
}

/// The first finding of one rule in one file, said in full, and how many more there
/// were (a file broken throughout is one finding, not thousands).
#[derive(Default)]
struct FirstOf {
    first: Option<Finding>,
    more: usize,
}

impl FirstOf {
    fn push(&mut self, finding: impl FnOnce() -> Finding) {
        match self.first {
            None => self.first = Some(finding()),
            Some(_) => self.more += 1,
        }
    }

    fn finish(self, out: &mut Vec<Finding>) {
        if let Some(mut finding) = self.first {
            if self.more > 0 {
                finding
                    .found
                    .push_str(&format!(" (and {} more)", self.more));
            }
            out.push(finding);
        }
    }
}

/// Seconds, for people: `12.500 s`.
fn seconds(ns: u64) -> String {
    format!("{:.3} s", ns as f64 * 1e-9)
}

/// One file being checked.
struct FileAt<'a> {
    path: &'a str,
    file: &'a TelemetryFile,
}

impl FileAt<'_> {
    /// A finding of `rule` at `line` of this file.
    fn at_line(&self, rule: &'static str, line: usize, expected: &str, found: String) -> Finding {
        catalogued(rule, expected, found)
            .file(self.path)
            .field(format!("line {line}"))
    }

    /// The line of sample `i` (0 when the file was not read from bytes).
    fn sample_line(&self, i: usize) -> usize {
        self.file.lines.samples.get(i).copied().unwrap_or(0)
    }

    /// `device 1 (cuda:0)`.
    fn device(&self, index: usize) -> String {
        match self.file.header.devices.get(index) {
            Some(d) => format!("device {index} ({})", d.id),
            None => format!("device {index}"),
        }
    }

    /// `window `train` of copy 0: device 1 (cuda:0)`.
    fn window_field(&self, w: &WindowSummary, device: usize) -> String {
        format!(
            "window `{}` of copy {}: {}",
            w.name,
            w.copy,
            self.device(device)
        )
    }

    /// Samples of a device the header does not list.
    fn unknown_devices(&self, out: &mut Vec<Finding>) {
        let listed = self.file.header.devices.len();
        let mut first = FirstOf::default();
        for (i, s) in self.file.samples.iter().enumerate() {
            if s.device as usize >= listed {
                first.push(|| {
                    self.at_line(
                        "telemetry.unreadable",
                        self.sample_line(i),
                        "a device of the header",
                        format!("device {}; the header lists {listed}", s.device),
                    )
                });
            }
        }
        first.finish(out);
    }

    /// Lines in time order, each device's samples strictly later than its previous one,
    /// and marks that pair up (start, then end, of one window and copy).
    fn clock(&self, out: &mut Vec<Finding>) {
        let mut first = FirstOf::default();
        let lines = &self.file.lines;
        let mut timed: Vec<(usize, u64)> = (lines.samples.iter().copied())
            .zip(self.file.samples.iter().map(|s| s.t_ns))
            .chain(
                lines
                    .marks
                    .iter()
                    .copied()
                    .zip(self.file.marks.iter().map(|m| m.t_ns)),
            )
            .collect();
        timed.sort_unstable();
        for pair in timed.windows(2) {
            let ((before, t0), (line, t1)) = (pair[0], pair[1]);
            if t1 < t0 {
                first.push(|| {
                    let found = format!(
                        "{} (t_ns {t1}) after {} on line {before}",
                        seconds(t1),
                        seconds(t0)
                    );
                    self.at_line("telemetry.clock", line, "lines in time order", found)
                });
            }
        }
        let mut last: HashMap<u32, (usize, u64)> = HashMap::new();
        for (i, s) in self.file.samples.iter().enumerate() {
            let line = self.sample_line(i);
            if let Some(&(before, t0)) = last.get(&s.device).filter(|(_, t0)| s.t_ns <= *t0) {
                first.push(|| {
                    let found = format!(
                        "{}: {} after its sample at {} on line {before}",
                        self.device(s.device as usize),
                        seconds(s.t_ns),
                        seconds(t0)
                    );
                    self.at_line(
                        "telemetry.clock",
                        line,
                        "each device's samples later than its previous one",
                        found,
                    )
                });
            }
            last.insert(s.device, (line, s.t_ns));
        }
        self.marks(&mut first);
        first.finish(out);
    }

    /// Marks that do not pair up: an end without a start, an end before its start, a
    /// start again before the end, a start never ended.
    fn marks(&self, first: &mut FirstOf) {
        const EXPECTED: &str = "each window's start, then its end";
        let mut open: BTreeMap<(&str, u32), (usize, u64)> = BTreeMap::new();
        let lines = &self.file.lines.marks;
        for (m, &line) in self.file.marks.iter().zip(lines) {
            let key = (m.window.as_str(), m.copy);
            let named = format!("window `{}` of copy {}", m.window, m.copy);
            let found = match (m.edge, open.remove(&key)) {
                (telemetry::Edge::Start, Some((before, _))) => Some(format!(
                    "{named} starts again (it started on line {before})"
                )),
                (telemetry::Edge::Start, None) => None,
                (telemetry::Edge::End, None) => Some(format!("{named} ends without a start")),
                (telemetry::Edge::End, Some((before, start))) if m.t_ns < start => Some(format!(
                    "{named} ends at {}, before its start at {} on line {before}",
                    seconds(m.t_ns),
                    seconds(start)
                )),
                (telemetry::Edge::End, Some(_)) => None,
            };
            if m.edge == telemetry::Edge::Start {
                open.insert(key, (line, m.t_ns));
            }
            if let Some(found) = found {
                first.push(|| self.at_line("telemetry.clock", line, EXPECTED, found));
            }
        }
        for ((window, copy), (line, _)) in open {
            let found = format!("window `{window}` of copy {copy} starts and never ends");
            first.push(|| self.at_line("telemetry.clock", line, EXPECTED, found));
        }
    }

    /// Energy counters that step backward on a sample without `counter_wrapped` or
    /// `counter_reset`.
    fn counters(&self, out: &mut Vec<Finding>) {
        let mut first = FirstOf::default();
        let mut last: HashMap<u32, (usize, u64)> = HashMap::new();
        for (i, s) in self.file.samples.iter().enumerate() {
            let Some(raw) = s.values.energy_raw else {
                continue;
            };
            let line = self.sample_line(i);
            let flagged = s
                .flags
                .iter()
                .any(|f| matches!(f, Flag::CounterWrapped | Flag::CounterReset));
            let backward = last
                .get(&s.device)
                .filter(|(_, prev)| raw < *prev && !flagged);
            if let Some(&(before, prev)) = backward {
                first.push(|| {
                    let found = format!(
                        "{}: energy_raw {raw} after {prev} on line {before}, not flagged",
                        self.device(s.device as usize)
                    );
                    self.at_line(
                        "telemetry.counter-backward",
                        line,
                        "a counter that goes forward, or a backward step flagged counter_wrapped or counter_reset",
                        found,
                    )
                });
            }
            last.insert(s.device, (line, raw));
        }
        first.finish(out);
    }

    /// Power below 0 or above [`POWER_LIMIT_FACTOR`] × the device's limit.
    fn power(&self, out: &mut Vec<Finding>) {
        let mut first = FirstOf::default();
        for (i, s) in self.file.samples.iter().enumerate() {
            let Some(mw) = s.values.power_mw else {
                continue;
            };
            let device = self.file.header.devices.get(s.device as usize);
            let limit = device.and_then(|d| d.power_limit_mw).filter(|l| *l > 0.0);
            let (expected, out_of_range) = match limit {
                Some(limit) => (
                    format!(
                        "0 to {} mW ({POWER_LIMIT_FACTOR} × the power limit of {limit} mW)",
                        POWER_LIMIT_FACTOR * limit
                    ),
                    mw < 0.0 || mw > POWER_LIMIT_FACTOR * limit,
                ),
                None => ("0 mW or more".to_owned(), mw < 0.0),
            };
            if out_of_range {
                first.push(|| {
                    let found = format!("{}: power_mw {mw}", self.device(s.device as usize));
                    self.at_line(
                        "telemetry.power-range",
                        self.sample_line(i),
                        &expected,
                        found,
                    )
                });
            }
        }
        first.finish(out);
    }

    /// Each device's sample times, sorted, with their lines.
    fn times(&self) -> Vec<Vec<(u64, usize)>> {
        let mut times = vec![Vec::new(); self.file.header.devices.len()];
        for (i, s) in self.file.samples.iter().enumerate() {
            if let Some(t) = times.get_mut(s.device as usize) {
                t.push((s.t_ns, self.sample_line(i)));
            }
        }
        times.iter_mut().for_each(|t| t.sort_unstable());
        times
    }

    /// Each timed window of each device: enough samples (not for the idle baseline), no
    /// gap, covered from its start to its end. Gives the `train` windows covered by every
    /// device.
    fn windows(&self, windows: &[WindowSummary], out: &mut Vec<Finding>) -> usize {
        let times = self.times();
        let period = self.file.header.sample_period_ns;
        let mut covered_train = 0;
        for w in windows {
            let mut covered = !times.is_empty();
            for (i, (d, t)) in w.devices.iter().zip(&times).enumerate() {
                let field = || self.window_field(w, i);
                if w.name != IDLE_WINDOW && d.samples < MIN_SAMPLES {
                    out.push(
                        catalogued(
                            "telemetry.too-few",
                            format!("at least {MIN_SAMPLES} samples in the window"),
                            format!(
                                "{} samples over {}",
                                d.samples,
                                seconds(w.end_ns - w.start_ns)
                            ),
                        )
                        .file(self.path)
                        .field(field()),
                    );
                }
                out.extend(gap(t, w, period).map(|found| {
                    let expected = format!(
                        "samples at most {GAP_PERIODS} periods ({}) apart",
                        seconds(GAP_PERIODS.saturating_mul(period))
                    );
                    catalogued("telemetry.gap", expected, found)
                        .file(self.path)
                        .field(field())
                }));
                let span = t.first().zip(t.last());
                if !span.is_some_and(|(a, b)| a.0 <= w.start_ns && b.0 >= w.end_ns) {
                    covered = false;
                    let found = match span {
                        Some((a, b)) => {
                            format!("samples from {} to {}", seconds(a.0), seconds(b.0))
                        }
                        None => "no samples".to_owned(),
                    };
                    let expected = format!(
                        "samples from {} (its start) to {} (its end)",
                        seconds(w.start_ns),
                        seconds(w.end_ns)
                    );
                    out.push(
                        catalogued("telemetry.coverage", expected, found)
                            .file(self.path)
                            .field(field()),
                    );
                }
            }
            covered_train += usize::from(covered && w.name == TRAIN_WINDOW);
        }
        covered_train
    }

    /// Each summary line against its window's energies recomputed from the samples.
    fn summaries(&self, windows: &[WindowSummary], out: &mut Vec<Finding>) {
        let lines = &self.file.lines.summaries;
        for (s, &line) in self.file.summaries.iter().zip(lines) {
            let window = windows.iter().find(|w| {
                (w.name.as_str(), w.copy, w.start_ns, w.end_ns)
                    == (s.window.as_str(), s.copy, s.start_ns, s.end_ns)
            });
            let recomputed = window.and_then(|w| w.devices.get(s.device as usize));
            let Some(d) = recomputed else {
                let found = format!(
                    "a summary of window `{}` of copy {} from {} to {}, {}: the marks make no such window of that device",
                    s.window,
                    s.copy,
                    seconds(s.start_ns),
                    seconds(s.end_ns),
                    self.device(s.device as usize)
                );
                out.push(self.at_line(
                    "telemetry.summary-mismatch",
                    line,
                    "a summary of a window of the file",
                    found,
                ));
                continue;
            };
            let mut differences = Vec::new();
            if s.samples != d.samples as u64 {
                differences.push(format!("samples {} (recomputed {})", s.samples, d.samples));
            }
            for (name, recorded, again) in [
                ("counter_j", s.counter_j, d.counter_j),
                ("power_j", s.power_j, d.power_j),
            ] {
                if energy_differs(recorded, again) {
                    differences.push(format!(
                        "{name} {} (recomputed {})",
                        joules(recorded),
                        joules(again)
                    ));
                }
            }
            if !differences.is_empty() {
                let expected = format!(
                    "the energies the samples give, within {} %",
                    SUMMARY_TOLERANCE * 100.0
                );
                let found = format!(
                    "{}: {}",
                    self.device(s.device as usize),
                    differences.join(", ")
                );
                out.push(self.at_line("telemetry.summary-mismatch", line, &expected, found));
            }
        }
    }
}

/// A sample's time (ns) and line.
type TimeAt = (u64, usize);

/// The longest gap of a device's sorted sample `times` over window `w` (an interval
/// between two consecutive samples that overlaps the window, longer than
/// [`GAP_PERIODS`] periods), in words, with how many others there are.
fn gap(times: &[(u64, usize)], w: &WindowSummary, period: u64) -> Option<String> {
    if period == 0 {
        return None;
    }
    let gaps: Vec<(u64, TimeAt, TimeAt)> = times
        .windows(2)
        .filter(|p| p[1].0 > w.start_ns && p[0].0 < w.end_ns)
        .map(|p| (p[1].0.saturating_sub(p[0].0), p[0], p[1]))
        .filter(|(length, _, _)| *length > GAP_PERIODS.saturating_mul(period))
        .collect();
    let (length, a, b) = gaps.iter().max_by_key(|g| g.0)?;
    let mut found = format!(
        "{} between the samples at {} (line {}) and {} (line {})",
        seconds(*length),
        seconds(a.0),
        a.1,
        seconds(b.0),
        b.1
    );
    if gaps.len() > 1 {
        found.push_str(&format!(" (the longest of {} gaps)", gaps.len()));
    }
    Some(found)
}

/// Whether a recorded energy and the one recomputed differ by more than
/// [`SUMMARY_TOLERANCE`] of the recomputed one (one of them missing is a difference).
pub fn energy_differs(recorded: Option<f64>, recomputed: Option<f64>) -> bool {
    match (recorded, recomputed) {
        (None, None) => false,
        (Some(a), Some(b)) => (a - b).abs() > SUMMARY_TOLERANCE * b.abs(),
        _ => true,
    }
}

/// `812.400 J`, or `none`.
fn joules(j: Option<f64>) -> String {
    j.map_or_else(|| "none".to_owned(), |j| format!("{j:.3} J"))
}

#[cfg(test)]
mod tests;

/// A report file as coverage sees it: its path, and the copy its name gives
/// (`<suite>_<K>.json`, `mlbench run`'s stream of copy K; `None` for the suite's per-test
/// files, which `mlbench run` does not write).
#[derive(Debug, Clone, Copy)]
pub struct ReportCopy<'a> {
    /// The file, in the submission.
    pub path: &'a str,
    /// Its copy.
    pub copy: Option<u32>,
}

/// `telemetry.coverage` across files: when the submission carries telemetry at all, each
/// entry of a copy's stream (`<run>/<suite>_<K>.json`) needs a telemetry file of its bench
/// and copy in its run's `telemetry/` folder with a covered `train` window. Entries are
/// matched to files by count: the entries of one bench in one stream (its configurations,
/// runs appended) against the covered `train` windows of that bench and copy's files
/// (`<bench>.<K>.jsonl`, `<bench>.<K>.2.jsonl`, …). Failed entries (their own finding) and
/// [`COVERAGE_EXEMPT_BENCHES`] are left out. `entries[i].file` indexes `reports`.
pub fn coverage(
    reports: &[ReportCopy],
    entries: &[EntryFacts],
    telemetry: &[TelemetryFacts],
    out: &mut Vec<Finding>,
) {
    if telemetry.is_empty() {
        return;
    }
    // (run folder, bench, copy) → (files, covered train windows).
    let mut found: HashMap<(&str, &str, u32), (usize, usize)> = HashMap::new();
    for t in telemetry {
        if let (Some(bench), Some(copy)) = (t.bench.as_deref(), t.copy) {
            let slot = found
                .entry((parent(parent(&t.path)), bench, copy))
                .or_default();
            slot.0 += 1;
            slot.1 += t.covered_train;
        }
    }
    let mut wanted: BTreeMap<(&str, &str, u32), Vec<&EntryFacts>> = BTreeMap::new();
    for e in entries.iter().filter(|e| e.failure.is_none()) {
        let (Some(name), Some(report)) = (e.name.as_deref(), reports.get(e.file)) else {
            continue;
        };
        if let Some(copy) = report
            .copy
            .filter(|_| !COVERAGE_EXEMPT_BENCHES.contains(&name))
        {
            wanted
                .entry((parent(report.path), name, copy))
                .or_default()
                .push(e);
        }
    }
    for (key, entries) in wanted {
        let (files, covered) = found.get(&key).copied().unwrap_or_default();
        let Some(first_uncovered) = entries.get(covered) else {
            continue;
        };
        let (folder, bench, copy) = key;
        let telemetry_folder = match folder {
            "." => telemetry::TELEMETRY_FOLDER.to_owned(),
            folder => format!("{folder}/{}", telemetry::TELEMETRY_FOLDER),
        };
        let expected = format!(
            "a telemetry file of `{bench}` copy {copy} in {telemetry_folder}/ with its `{TRAIN_WINDOW}` window covered, for each of the {} entries",
            entries.len()
        );
        let found = format!("{files} file(s), {covered} covered `{TRAIN_WINDOW}` window(s)");
        out.push(
            catalogued("telemetry.coverage", expected, found)
                .file(reports[first_uncovered.file].path)
                .entry(first_uncovered.entry),
        );
    }
}
