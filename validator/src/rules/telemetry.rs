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
use mlbench_telemetry::bounds::{self, MAX_POWER_MW};
use mlbench_telemetry::fold::{Folded, Gaps, reduce};
use mlbench_telemetry::summary::{MIN_SAMPLES, WindowSummary};
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
    check_stream(path, bytes)
}

/// Checks one telemetry file (`path` in the submission) read from `input` in one pass:
/// the per-line rules as the lines go by, the windows' from what the pass folded
/// (`mlbench_telemetry::fold`), so memory does not grow with the samples.
pub fn check_stream(path: &str, input: impl std::io::BufRead) -> FileCheck {
    let (bench, copy) = name_parts(base_name(path));
    let mut facts = TelemetryFacts {
        path: path.to_owned(),
        bench,
        copy,
        covered_train: 0,
    };
    let mut rules = LineRules::new(path);
    let reduced = match reduce(Path::new(path), input, |n, line| rules.line(n, line)) {
        Ok(reduced) => reduced,
        // A read that failed is the intake's finding (it names the file and why), never a
        // file without a header.
        Err(TelemetryReadError::Io { .. }) => {
            return FileCheck {
                findings: Vec::new(),
                facts,
            };
        }
        Err(e) => {
            return FileCheck {
                findings: vec![unreadable(path, &e)],
                facts,
            };
        }
    };
    let file = &reduced.file;
    facts.bench = file.header.bench.clone().or(facts.bench);
    facts.copy = file.header.copy.or(facts.copy);
    let mut findings = Vec::new();
    if file.truncated_tail {
        findings.push(
            catalogued(
                "telemetry.unreadable",
                "whole lines, each ending with a newline",
                "the last line is cut short (an interrupted write)",
            )
            .file(path)
            .field(format!("line {}", reduced.last_line)),
        );
    }
    rules.finish(&mut findings);
    let at = FileAt {
        path,
        file,
        folded: &reduced.folded,
    };
    at.bounds(&mut findings);
    facts.covered_train = at.windows(&mut findings);
    at.summaries(&mut findings);
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

    /// One rule's findings made by several checks, said as one: the first of the first
    /// check that found any, and how many more in all.
    fn chain(parts: impl IntoIterator<Item = FirstOf>) -> FirstOf {
        let mut out = FirstOf::default();
        for part in parts {
            let Some(first) = part.first else { continue };
            match out.first {
                None => out.first = Some(first),
                Some(_) => out.more += 1,
            }
            out.more += part.more;
        }
        out
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

/// A finding of `rule` at `line` of `path`.
fn at_line(path: &str, rule: &'static str, line: usize, expected: &str, found: String) -> Finding {
    catalogued(rule, expected, found)
        .file(path)
        .field(format!("line {line}"))
}

/// `device 1 (cuda:0)`.
fn device_name(header: &telemetry::Header, index: usize) -> String {
    match header.devices.get(index) {
        Some(d) => format!("device {index} ({})", d.id),
        None => format!("device {index}"),
    }
}

/// The rules of each line, checked as the lines go by: samples of devices the header
/// does not list, times that do not run forward, marks that do not pair, counters that
/// step back unflagged, power out of range.
struct LineRules<'a> {
    path: &'a str,
    header: telemetry::Header,
    unknown: FirstOf,
    /// Lines out of time order; a device's samples not later than its previous one;
    /// marks that do not pair (one rule, said in that order).
    clock: [FirstOf; 3],
    counters: FirstOf,
    power: FirstOf,
    last_line: Option<(usize, u64)>,
    last_time: HashMap<u32, (usize, u64)>,
    last_raw: HashMap<u32, (usize, u64)>,
    open: BTreeMap<(String, u32), (usize, u64)>,
}

impl<'a> LineRules<'a> {
    fn new(path: &'a str) -> Self {
        LineRules {
            path,
            header: telemetry::Header::default(),
            unknown: FirstOf::default(),
            clock: Default::default(),
            counters: FirstOf::default(),
            power: FirstOf::default(),
            last_line: None,
            last_time: HashMap::new(),
            last_raw: HashMap::new(),
            open: BTreeMap::new(),
        }
    }

    fn line(&mut self, number: usize, line: &telemetry::Line) {
        match line {
            telemetry::Line::Header(h) => self.header = h.clone(),
            telemetry::Line::Sample(s) => {
                self.in_order(number, s.t_ns);
                self.sample(number, s);
            }
            telemetry::Line::Mark(m) => {
                self.in_order(number, m.t_ns);
                self.mark(number, m);
            }
            _ => {}
        }
    }

    fn finish(mut self, out: &mut Vec<Finding>) {
        const EXPECTED: &str = "each window's start, then its end";
        for ((window, copy), (line, _)) in std::mem::take(&mut self.open) {
            let found = format!("window `{window}` of copy {copy} starts and never ends");
            let path = self.path;
            self.clock[2].push(|| at_line(path, "telemetry.clock", line, EXPECTED, found));
        }
        self.unknown.finish(out);
        FirstOf::chain(self.clock).finish(out);
        self.counters.finish(out);
        self.power.finish(out);
    }

    /// Samples and marks in time order, line after line.
    fn in_order(&mut self, line: usize, t1: u64) {
        if let Some((before, t0)) = self.last_line.filter(|&(_, t0)| t1 < t0) {
            let path = self.path;
            self.clock[0].push(|| {
                let found = format!(
                    "{} (t_ns {t1}) after {} on line {before}",
                    seconds(t1),
                    seconds(t0)
                );
                at_line(path, "telemetry.clock", line, "lines in time order", found)
            });
        }
        self.last_line = Some((line, t1));
    }

    fn sample(&mut self, line: usize, s: &telemetry::Sample) {
        let listed = self.header.devices.len();
        let (path, header) = (self.path, &self.header);
        if s.device as usize >= listed {
            self.unknown.push(|| {
                let found = format!("device {}; the header lists {listed}", s.device);
                at_line(
                    path,
                    "telemetry.unreadable",
                    line,
                    "a device of the header",
                    found,
                )
            });
        }
        if let Some(&(before, t0)) = (self.last_time.get(&s.device)).filter(|(_, t0)| s.t_ns <= *t0)
        {
            self.clock[1].push(|| {
                let found = format!(
                    "{}: {} after its sample at {} on line {before}",
                    device_name(header, s.device as usize),
                    seconds(s.t_ns),
                    seconds(t0)
                );
                let expected = "each device's samples later than its previous one";
                at_line(path, "telemetry.clock", line, expected, found)
            });
        }
        self.last_time.insert(s.device, (line, s.t_ns));
        self.counter(line, s);
        self.power(line, s);
    }

    /// Energy counters that step backward on a sample without `counter_wrapped` or
    /// `counter_reset`.
    fn counter(&mut self, line: usize, s: &telemetry::Sample) {
        let Some(raw) = s.values.energy_raw else {
            return;
        };
        let flagged =
            (s.flags.iter()).any(|f| matches!(f, Flag::CounterWrapped | Flag::CounterReset));
        let backward = (self.last_raw.get(&s.device)).filter(|(_, prev)| raw < *prev && !flagged);
        if let Some(&(before, prev)) = backward {
            let (path, header) = (self.path, &self.header);
            self.counters.push(|| {
                let found = format!(
                    "{}: energy_raw {raw} after {prev} on line {before}, not flagged",
                    device_name(header, s.device as usize)
                );
                let expected = "a counter that goes forward, or a backward step flagged counter_wrapped or counter_reset";
                at_line(path, "telemetry.counter-backward", line, expected, found)
            });
        }
        self.last_raw.insert(s.device, (line, raw));
    }

    /// Power below 0, above [`POWER_LIMIT_FACTOR`] × the device's limit, or above
    /// [`MAX_POWER_MW`] whatever the limit (or not a finite number).
    fn power(&mut self, line: usize, s: &telemetry::Sample) {
        let Some(mw) = s.values.power_mw else {
            return;
        };
        let device = self.header.devices.get(s.device as usize);
        let limit = (device.and_then(|d| d.power_limit_mw))
            .filter(|l| *l > 0.0 && POWER_LIMIT_FACTOR * l <= MAX_POWER_MW);
        let (expected, out_of_range) = match limit {
            Some(limit) => (
                format!(
                    "0 to {} mW ({POWER_LIMIT_FACTOR} × the power limit of {limit} mW)",
                    POWER_LIMIT_FACTOR * limit
                ),
                !(0.0..=POWER_LIMIT_FACTOR * limit).contains(&mw),
            ),
            None => (
                format!("0 to {MAX_POWER_MW} mW (10 kW, more than one device draws)"),
                !(0.0..=MAX_POWER_MW).contains(&mw),
            ),
        };
        if out_of_range {
            let (path, header) = (self.path, &self.header);
            self.power.push(|| {
                let found = format!("{}: power_mw {mw}", device_name(header, s.device as usize));
                at_line(path, "telemetry.power-range", line, &expected, found)
            });
        }
    }

    /// Marks that do not pair up: an end without a start, an end before its start, a
    /// start again before the end (a start never ended: at the end of the file).
    fn mark(&mut self, line: usize, m: &telemetry::Mark) {
        const EXPECTED: &str = "each window's start, then its end";
        let key = (m.window.clone(), m.copy);
        let named = format!("window `{}` of copy {}", m.window, m.copy);
        let found = match (m.edge, self.open.remove(&key)) {
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
            self.open.insert(key, (line, m.t_ns));
        }
        if let Some(found) = found {
            let path = self.path;
            self.clock[2].push(|| at_line(path, "telemetry.clock", line, EXPECTED, found));
        }
    }
}

/// One file being checked, once read.
struct FileAt<'a> {
    path: &'a str,
    file: &'a TelemetryFile,
    folded: &'a Folded,
}

impl FileAt<'_> {
    /// `device 1 (cuda:0)`.
    fn device(&self, index: usize) -> String {
        device_name(&self.file.header, index)
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

    /// Counter resolutions no device has; a time far past the line before it.
    fn bounds(&self, out: &mut Vec<Finding>) {
        for problem in bounds::problems(&self.file.header, &self.folded.bounds) {
            match problem {
                bounds::Problem::Resolution {
                    device,
                    resolution_uj,
                } => out.push(
                    catalogued(
                        "telemetry.counter-resolution",
                        format!(
                            "a finite resolution above 0 and at most {} µJ per count (1 J)",
                            bounds::MAX_RESOLUTION_UJ
                        ),
                        format!("resolution_uj {resolution_uj:e}"),
                    )
                    .file(self.path)
                    .field(format!("header: {}", self.device(device))),
                ),
                bounds::Problem::Time {
                    line,
                    t_ns,
                    before_ns,
                } => out.push(at_line(
                    self.path,
                    "telemetry.time-range",
                    line,
                    "each line at most a day (86400 s) after the line before it",
                    format!(
                        "t_ns {t_ns}: {} after the line before it ({})",
                        seconds(t_ns.saturating_sub(before_ns)),
                        seconds(before_ns)
                    ),
                )),
                // Said per reading by `telemetry.power-range`.
                bounds::Problem::Power { .. } => {}
            }
        }
    }

    /// Each timed window of each device: enough samples (not for the idle baseline), no
    /// gap, covered from its start to its end. Gives the `train` windows covered by every
    /// device.
    fn windows(&self, out: &mut Vec<Finding>) -> usize {
        let period = self.file.header.sample_period_ns;
        let (windows, gaps) = (&self.folded.summary.windows, &self.folded.gaps);
        let devices = &self.folded.devices;
        let mut covered_train = 0;
        for (w, gaps) in windows.iter().zip(gaps) {
            let mut covered = !devices.is_empty();
            for (i, ((d, stats), gaps)) in w.devices.iter().zip(devices).zip(gaps).enumerate() {
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
                out.extend(gap(gaps, period).map(|found| {
                    let expected = format!(
                        "samples at most {GAP_PERIODS} periods ({}) apart",
                        seconds(GAP_PERIODS.saturating_mul(period))
                    );
                    catalogued("telemetry.gap", expected, found)
                        .file(self.path)
                        .field(field())
                }));
                let span = stats.span;
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
    fn summaries(&self, out: &mut Vec<Finding>) {
        // The first window of each name, copy and edges, found by key (a file of many
        // windows and as many summary lines is not compared pair by pair).
        let mut by_key: HashMap<(&str, u32, u64, u64), &WindowSummary> = HashMap::new();
        for w in &self.folded.summary.windows {
            by_key
                .entry((w.name.as_str(), w.copy, w.start_ns, w.end_ns))
                .or_insert(w);
        }
        let lines = &self.file.lines.summaries;
        for (s, &line) in self.file.summaries.iter().zip(lines) {
            let window = by_key.get(&(s.window.as_str(), s.copy, s.start_ns, s.end_ns));
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
                out.push(at_line(
                    self.path,
                    "telemetry.summary-mismatch",
                    line,
                    "a summary of a window of the file",
                    found,
                ));
                continue;
            };
            self.summary_against(s, d, line, out);
        }
    }

    fn summary_against(
        &self,
        s: &telemetry::SummaryLine,
        d: &mlbench_telemetry::DeviceEnergy,
        line: usize,
        out: &mut Vec<Finding>,
    ) {
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
            out.push(at_line(
                self.path,
                "telemetry.summary-mismatch",
                line,
                &expected,
                found,
            ));
        }
    }
}

/// The longest gap of a device over a window (an interval between two consecutive
/// samples that overlaps the window, longer than [`GAP_PERIODS`] periods), in words,
/// with how many others there are.
fn gap(gaps: &Gaps, period: u64) -> Option<String> {
    if period == 0 {
        return None;
    }
    let (length, a, b) = gaps.longest?;
    let mut found = format!(
        "{} between the samples at {} (line {}) and {} (line {})",
        seconds(length),
        seconds(a.0),
        a.1,
        seconds(b.0),
        b.1
    );
    if gaps.count > 1 {
        found.push_str(&format!(" (the longest of {} gaps)", gaps.count));
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
