//! The telemetry rules on small hand-made files, each rule on both sides of its line.
//!
//! The base file: one GPU (counter in mJ, power limit 300 W), a sample a second from 0 to
//! 70 s at a constant 100 W (counter 100 J a second), window `train` from 0.5 to 69.5 s:
//! 69 samples inside (1 … 69 s), 69 s × 100 W = 6 900 J by counter and by power.

use super::*;
use crate::facts::{Device as EntryDevice, EntryFacts};
use mlbench_results::validation::Severity;
use mlbench_schema::entry::FailureKind;
use mlbench_schema::telemetry::{
    Counter, Device, Edge, Header, Line, Mark, Sample, SummaryLine, TelemetryWriter, Values,
};

const S: u64 = 1_000_000_000;
const PATH: &str = "output0/telemetry/convnet.0.jsonl";

fn header() -> Header {
    Header {
        schema_version: 1,
        tool: "mlbench test".into(),
        bench: Some("convnet".into()),
        copy: Some(0),
        sample_period_ns: S,
        devices: vec![Device {
            id: "cuda:0".into(),
            counter: Some(Counter {
                resolution_uj: 1000.0,
                wrap_raw: None,
            }),
            power_limit_mw: Some(300_000.0),
            whole_board: true,
            ..Device::default()
        }],
        ..Header::default()
    }
}

/// The sample at `s` seconds: 100 W, counter 100 J (100 000 mJ) a second.
fn sample(s: u64) -> Sample {
    Sample {
        t_ns: s * S,
        device: 0,
        values: Values {
            energy_raw: Some(100_000 * s),
            power_mw: Some(100_000.0),
            ..Values::default()
        },
        ..Sample::default()
    }
}

fn mark(t_ns: u64, edge: Edge, window: &str) -> Line {
    Line::Mark(Mark {
        t_ns,
        edge,
        window: window.into(),
        copy: 0,
    })
}

/// The summary line of the base window with these numbers.
fn summary(samples: u64, counter_j: f64, power_j: f64) -> Line {
    Line::Summary(SummaryLine {
        window: "train".into(),
        copy: 0,
        device: 0,
        start_ns: S / 2,
        end_ns: 69 * S + S / 2,
        samples,
        counter_j: Some(counter_j),
        power_j: Some(power_j),
    })
}

/// The base file's lines after the header: samples 0 … 70 s, the marks where their times
/// fall, the base summary.
fn base_lines() -> Vec<Line> {
    let mut lines = Vec::new();
    for s in 0..=70 {
        if s == 1 {
            lines.push(mark(S / 2, Edge::Start, "train"));
        }
        if s == 70 {
            lines.push(mark(69 * S + S / 2, Edge::End, "train"));
        }
        lines.push(Line::Sample(sample(s)));
    }
    lines.push(summary(69, 6900.0, 6900.0));
    lines
}

fn bytes_of(header: &Header, lines: &[Line]) -> Vec<u8> {
    let mut w = TelemetryWriter::new(Vec::new());
    w.header(header).unwrap();
    for line in lines {
        w.line(line).unwrap();
    }
    w.into_inner().unwrap()
}

fn check(lines: &[Line]) -> FileCheck {
    check_file(PATH, &bytes_of(&header(), lines))
}

/// The findings of `rule`, as (severity, field, found).
fn of(check: &FileCheck, rule: &str) -> Vec<(Severity, String, String)> {
    check
        .findings
        .iter()
        .filter(|f| f.rule == rule)
        .map(|f| {
            assert_eq!(f.file.as_deref(), Some(PATH));
            (
                f.severity,
                f.field.clone().unwrap_or_default(),
                f.found.clone(),
            )
        })
        .collect()
}

/// The line (from 1: the header is line 1) of the sample at `s` seconds in the base file.
fn line_of_sample(s: u64) -> usize {
    // Header, then samples, the start mark before 1 s and the end mark before 70 s.
    2 + s as usize + usize::from(s >= 1) + usize::from(s >= 70)
}

#[test]
fn the_base_file_is_clean_and_its_train_window_covered() {
    let c = check(&base_lines());
    assert!(c.findings.is_empty(), "{:#?}", c.findings);
    assert_eq!(
        c.facts,
        TelemetryFacts {
            path: PATH.into(),
            bench: Some("convnet".into()),
            copy: Some(0),
            covered_train: 1,
        }
    );
}

#[test]
fn a_broken_line_is_unreadable_at_its_line() {
    let mut text = String::from_utf8(bytes_of(&header(), &base_lines())).unwrap();
    // The sample at 2 s (line 5) loses its closing brace.
    let line = "{\"type\":\"sample\",\"t_ns\":2000000000,\"device\":0,\"energy_raw\":200000,\"power_mw\":100000.0}\n";
    assert!(text.contains(line));
    text = text.replace(line, &line.replace("}\n", "\n"));
    let c = check_file(PATH, text.as_bytes());
    let found = of(&c, "telemetry.unreadable");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, Severity::Error);
    assert_eq!(found[0].1, "line 5");
    assert!(found[0].2.starts_with(&format!("{PATH}:5: ")), "{found:?}");
    assert_eq!(c.findings.len(), 1);
    // Its bench and copy still come from its name, for coverage; nothing is covered.
    assert_eq!(c.facts.bench.as_deref(), Some("convnet"));
    assert_eq!((c.facts.copy, c.facts.covered_train), (Some(0), 0));
}

#[test]
fn a_cut_tail_a_missing_header_and_an_unlisted_device_are_unreadable() {
    let whole = bytes_of(&header(), &base_lines());
    let cut = &whole[..whole.len() - 10];
    let c = check_file(PATH, cut);
    // 71 samples, 2 marks, 1 summary after the header: the cut summary is line 75.
    assert_eq!(
        of(&c, "telemetry.unreadable"),
        [(
            Severity::Error,
            "line 75".to_owned(),
            "the last line is cut short (an interrupted write)".to_owned()
        )]
    );
    let c = check_file(PATH, b"{\"type\":\"sample\",\"t_ns\":1,\"device\":0}\n");
    assert_eq!(of(&c, "telemetry.unreadable")[0].1, "line 1");
    let mut lines = base_lines();
    let mut stray = sample(3);
    stray.device = 1;
    // Before the sample at 4 s: line 7.
    lines.insert(line_of_sample(4) - 2, Line::Sample(stray));
    let found = of(&check(&lines), "telemetry.unreadable");
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].1.as_str(), found[0].2.as_str()),
        ("line 7", "device 1; the header lists 1")
    );
}

#[test]
fn sixty_samples_in_a_window_are_enough_and_fifty_nine_too_few() {
    // Window 0.5 … 60.5 s: the samples at 1 … 60 s, 60 of them.
    let window = |end_s: u64| {
        let mut lines: Vec<Line> = (0..=70).map(|s| Line::Sample(sample(s))).collect();
        lines.insert(1, mark(S / 2, Edge::Start, "train"));
        lines.push(mark(end_s * S + S / 2, Edge::End, "train"));
        lines
    };
    // The end mark after every sample: lines out of time order, but nothing else.
    let sixty = check(&window(60));
    assert!(of(&sixty, "telemetry.too-few").is_empty());
    let fifty_nine = check(&window(59));
    assert_eq!(
        of(&fifty_nine, "telemetry.too-few"),
        [(
            Severity::Warning,
            "window `train` of copy 0: device 0 (cuda:0)".to_owned(),
            "59 samples over 59.000 s".to_owned()
        )]
    );
    // Too few samples are a warning: the window is still covered.
    assert_eq!(fifty_nine.facts.covered_train, 1);
}

#[test]
fn an_idle_window_of_few_samples_is_not_too_few() {
    let mut lines: Vec<Line> = (0..=5).map(|s| Line::Sample(sample(s))).collect();
    lines.insert(1, mark(S / 2, Edge::Start, IDLE_WINDOW));
    lines.insert(5, mark(3 * S + S / 2, Edge::End, IDLE_WINDOW));
    let c = check(&lines);
    assert!(c.findings.is_empty(), "{:#?}", c.findings);
    assert_eq!(c.facts.covered_train, 0);
}

#[test]
fn three_periods_between_samples_are_a_gap_and_two_are_not() {
    // Without the sample at 10 s: 9 → 11 s, two periods: no gap.
    let mut lines = base_lines();
    lines.retain(|l| !matches!(l, Line::Sample(s) if s.t_ns == 10 * S));
    let two = check(&lines);
    assert!(of(&two, "telemetry.gap").is_empty());
    // The summary's sample count is now 68: that rule sees it, not the gap rule.
    assert_eq!(of(&two, "telemetry.summary-mismatch").len(), 1);
    // Without 11 s too: 9 → 12 s, three periods; and without 30 … 33 s, 29 → 34 s.
    lines.retain(|l| !matches!(l, Line::Sample(s) if s.t_ns == 11 * S || (30 * S..=33 * S).contains(&s.t_ns)));
    let found = of(&check(&lines), "telemetry.gap");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, Severity::Warning);
    assert_eq!(found[0].1, "window `train` of copy 0: device 0 (cuda:0)");
    // 29 s is line 32 of the base file, less the two samples removed before it.
    assert_eq!(
        found[0].2,
        format!(
            "5.000 s between the samples at 29.000 s (line {}) and 34.000 s (line {}) (the longest of 2 gaps)",
            line_of_sample(29) - 2,
            line_of_sample(34) - 6
        )
    );
}

#[test]
fn a_gap_outside_every_window_is_not_one() {
    let mut lines = base_lines();
    // 69 → 70 s is inside (the window ends at 69.5 s); a sample at 75 s, after it, is not.
    lines.push(Line::Sample(sample(75)));
    assert!(of(&check(&lines), "telemetry.gap").is_empty());
}

#[test]
fn samples_out_of_order_and_a_repeated_time_break_the_clock() {
    let mut lines = base_lines();
    let at = line_of_sample(20) - 2;
    lines.swap(at, at + 1);
    let found = of(&check(&lines), "telemetry.clock");
    // Line 23 holds 21 s, line 24 holds 20 s: one line out of order, one device sample
    // not after its previous one; one finding, the other counted.
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, Severity::Error);
    assert_eq!(found[0].1, "line 24");
    assert_eq!(
        found[0].2,
        "20.000 s (t_ns 20000000000) after 21.000 s on line 23 (and 1 more)"
    );
    let mut lines = base_lines();
    let mut again = sample(40);
    again.values.energy_raw = Some(100_000 * 40);
    lines.insert(line_of_sample(41) - 2, Line::Sample(again));
    let found = of(&check(&lines), "telemetry.clock");
    assert_eq!(
        found[0].2,
        format!(
            "device 0 (cuda:0): 40.000 s after its sample at 40.000 s on line {}",
            line_of_sample(40)
        )
    );
}

#[test]
fn marks_that_do_not_pair_break_the_clock() {
    let mut lines: Vec<Line> = (0..=3).map(|s| Line::Sample(sample(s))).collect();
    lines.push(mark(3 * S, Edge::End, "eval"));
    lines.push(mark(3 * S, Edge::Start, "train"));
    let found = of(&check(&lines), "telemetry.clock");
    assert_eq!(
        found,
        [(
            Severity::Error,
            "line 6".to_owned(),
            "window `eval` of copy 0 ends without a start (and 1 more)".to_owned()
        )]
    );
    // The unpaired start alone: said at its line.
    lines.remove(4);
    let found = of(&check(&lines), "telemetry.clock");
    assert_eq!(found[0].1, "line 6");
    assert_eq!(found[0].2, "window `train` of copy 0 starts and never ends");
}

#[test]
fn a_counter_stepping_back_needs_a_flag() {
    let at = line_of_sample(20) - 2;
    let mut lines = base_lines();
    let Line::Sample(s) = &mut lines[at] else {
        panic!()
    };
    s.values.energy_raw = Some(5);
    let found = of(&check(&lines), "telemetry.counter-backward");
    assert_eq!(
        found,
        [(
            Severity::Error,
            format!("line {}", line_of_sample(20)),
            "device 0 (cuda:0): energy_raw 5 after 1900000 on line 22, not flagged".to_owned()
        )]
    );
    for flag in [Flag::CounterReset, Flag::CounterWrapped] {
        let Line::Sample(s) = &mut lines[at] else {
            panic!()
        };
        s.flags = vec![flag];
        assert!(of(&check(&lines), "telemetry.counter-backward").is_empty());
    }
}

#[test]
fn power_from_zero_to_one_and_a_half_limits_is_in_range() {
    let set = |mw: f64| {
        let mut lines = base_lines();
        let Line::Sample(s) = &mut lines[line_of_sample(70) - 2] else {
            panic!()
        };
        s.values.power_mw = Some(mw);
        of(&check(&lines), "telemetry.power-range")
    };
    // 1.5 × 300 W = 450 W: at the limit, fine; a milliwatt over, not.
    assert!(set(450_000.0).is_empty());
    assert!(set(0.0).is_empty());
    let over = set(450_001.0);
    assert_eq!(over.len(), 1);
    assert_eq!(over[0].0, Severity::Error);
    assert_eq!(over[0].1, format!("line {}", line_of_sample(70)));
    assert_eq!(over[0].2, "device 0 (cuda:0): power_mw 450001");
    assert_eq!(set(-1.0)[0].2, "device 0 (cuda:0): power_mw -1");
    // Without a known limit, below zero or above 10 kW (what no one device draws).
    let mut h = header();
    h.devices[0].power_limit_mw = None;
    let without_limit = |h: &Header, mw: f64| {
        let mut lines = base_lines();
        let Line::Sample(s) = &mut lines[3] else {
            panic!()
        };
        s.values.power_mw = Some(mw);
        check_file(PATH, &bytes_of(h, &lines))
    };
    let c = without_limit(&h, 1e7);
    assert!(c.findings.iter().all(|f| f.rule != "telemetry.power-range"));
    // (The summary's power energy no longer holds: another rule's finding.)
    assert_eq!(c.findings.len(), 1, "{:#?}", c.findings);
    let over = of(&without_limit(&h, 1e7 + 1.0), "telemetry.power-range");
    assert_eq!(over.len(), 1);
    assert_eq!(over[0].2, "device 0 (cuda:0): power_mw 10000001");
    // A limit above what a device draws is capped at 10 kW too.
    h.devices[0].power_limit_mw = Some(1e12);
    assert_eq!(
        of(&without_limit(&h, 1e9), "telemetry.power-range").len(),
        1
    );
}

#[test]
fn an_absurd_counter_resolution_and_a_time_past_the_run_are_found() {
    let mut h = header();
    h.devices[0].counter = Some(Counter {
        resolution_uj: 1e308,
        wrap_raw: None,
    });
    let c = check_file(PATH, &bytes_of(&h, &base_lines()));
    let found = of(&c, "telemetry.counter-resolution");
    assert_eq!(
        found,
        vec![(
            Severity::Error,
            "header: device 0 (cuda:0)".to_owned(),
            "resolution_uj 1e308".to_owned()
        )]
    );
    // 1 J a count is the most; 0 and below are none.
    for (resolution_uj, flagged) in [(1e6, false), (1e6 + 1.0, true), (0.0, true), (15.3, false)] {
        h.devices[0].counter = Some(Counter {
            resolution_uj,
            wrap_raw: None,
        });
        let c = check_file(PATH, &bytes_of(&h, &base_lines()));
        assert_eq!(
            !of(&c, "telemetry.counter-resolution").is_empty(),
            flagged,
            "{resolution_uj}"
        );
    }
    // A sample at 2⁶⁴ − 1 ns after the last one (70 s): past the run, on its line.
    let mut lines = base_lines();
    let mut last = sample(70);
    last.t_ns = u64::MAX;
    let at = lines.len();
    lines.insert(at - 1, Line::Sample(last));
    let c = check(&lines);
    let found = of(&c, "telemetry.time-range");
    assert_eq!(found.len(), 1, "{:#?}", c.findings);
    assert_eq!(found[0].1, format!("line {}", at + 1));
    assert!(
        found[0].2.starts_with("t_ns 18446744073709551615: "),
        "{}",
        found[0].2
    );
    // A day exactly after the line before it is not past the run.
    let mut lines = base_lines();
    let mut day = sample(70);
    day.t_ns = 70 * S + 86_400 * S;
    lines.insert(lines.len() - 1, Line::Sample(day));
    assert!(of(&check(&lines), "telemetry.time-range").is_empty());
}

#[test]
fn a_summary_two_percent_off_disagrees_and_half_a_percent_does_not() {
    let with = |line: Line| {
        let mut lines = base_lines();
        *lines.last_mut().unwrap() = line;
        of(&check(&lines), "telemetry.summary-mismatch")
    };
    // 6 900 J × 1.005 = 6 934.5 J, within 1 %; × 1.02 = 7 038 J, not.
    assert!(with(summary(69, 6934.5, 6900.0 * 0.995)).is_empty());
    let found = with(summary(69, 7038.0, 6900.0));
    assert_eq!(
        found,
        [(
            Severity::Error,
            "line 75".to_owned(),
            "device 0 (cuda:0): counter_j 7038.000 J (recomputed 6900.000 J)".to_owned()
        )]
    );
    assert_eq!(
        with(summary(68, 6900.0, 6762.0))[0].2,
        "device 0 (cuda:0): samples 68 (recomputed 69), power_j 6762.000 J (recomputed 6900.000 J)"
    );
    // A summary of a window the marks do not make.
    let Line::Summary(mut other) = summary(69, 6900.0, 6900.0) else {
        panic!()
    };
    other.start_ns = S;
    assert_eq!(
        with(Line::Summary(other))[0].2,
        "a summary of window `train` of copy 0 from 1.000 s to 69.500 s, device 0 (cuda:0): the marks make no such window of that device"
    );
}

#[test]
fn energy_differs_at_one_percent_of_the_recomputed_value() {
    assert!(!energy_differs(Some(101.0), Some(100.0)));
    assert!(energy_differs(Some(101.01), Some(100.0)));
    assert!(!energy_differs(Some(99.0), Some(100.0)));
    assert!(energy_differs(Some(0.1), Some(0.0)));
    assert!(!energy_differs(None, None));
    assert!(energy_differs(Some(1.0), None));
    assert!(energy_differs(None, Some(1.0)));
}

#[test]
fn a_window_past_the_samples_is_not_covered() {
    let mut lines: Vec<Line> = (0..=70).map(|s| Line::Sample(sample(s))).collect();
    lines.insert(1, mark(S / 2, Edge::Start, "train"));
    lines.push(mark(75 * S, Edge::End, "train"));
    let c = check(&lines);
    assert_eq!(
        of(&c, "telemetry.coverage"),
        [(
            Severity::Error,
            "window `train` of copy 0: device 0 (cuda:0)".to_owned(),
            "samples from 0.000 s to 70.000 s".to_owned()
        )]
    );
    assert_eq!(c.facts.covered_train, 0);
}

#[test]
fn bench_and_copy_from_a_file_name() {
    let parts = name_parts;
    assert_eq!(
        parts("bert-fp16.3.jsonl"),
        (Some("bert-fp16".into()), Some(3))
    );
    assert_eq!(
        parts("convnet.0.2.jsonl"),
        (Some("convnet".into()), Some(0))
    );
    assert_eq!(parts("idle.1.jsonl"), (Some("idle".into()), Some(1)));
    assert_eq!(parts("notes.jsonl"), (None, None));
    assert_eq!(parts("a.b.jsonl"), (None, None));
}

fn entry(file: usize, index: usize, name: &str) -> EntryFacts {
    EntryFacts {
        device: EntryDevice::Gpu(file as u32),
        ..EntryFacts::blank(file, index, 0, name)
    }
}

fn facts(path: &str, covered_train: usize) -> TelemetryFacts {
    let (bench, copy) = name_parts(base_name(path));
    TelemetryFacts {
        path: path.into(),
        bench,
        copy,
        covered_train,
    }
}

#[test]
fn every_copy_of_every_bench_needs_a_covered_train_window() {
    let reports = [
        ReportCopy {
            path: "output0/s_0.json",
            copy: Some(0),
        },
        ReportCopy {
            path: "output0/s_1.json",
            copy: Some(1),
        },
    ];
    // Copy 0 ran `a` twice (two configurations) and `b`; copy 1 ran `a`.
    let entries = [
        entry(0, 0, "a"),
        entry(0, 1, "a"),
        entry(0, 2, "b"),
        entry(1, 0, "a"),
    ];
    let telemetry = [
        facts("output0/telemetry/a.0.jsonl", 1),
        facts("output0/telemetry/a.0.2.jsonl", 1),
        facts("output0/telemetry/b.0.jsonl", 1),
        facts("output0/telemetry/a.1.jsonl", 1),
        facts("output0/telemetry/idle.0.jsonl", 0),
    ];
    let mut out = Vec::new();
    coverage(&reports, &entries, &telemetry, &mut out);
    assert!(out.is_empty(), "{out:#?}");
    // The second file of `a` on copy 0 lost, copy 1's window not covered.
    let mut out = Vec::new();
    let fewer = [
        telemetry[0].clone(),
        telemetry[2].clone(),
        facts("output0/telemetry/a.1.jsonl", 0),
    ];
    coverage(&reports, &entries, &fewer, &mut out);
    let got: Vec<(&str, Option<&str>, Option<usize>, &str)> = out
        .iter()
        .map(|f| (f.rule, f.file.as_deref(), f.entry, f.found.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "telemetry.coverage",
                Some("output0/s_0.json"),
                Some(1),
                "1 file(s), 1 covered `train` window(s)"
            ),
            (
                "telemetry.coverage",
                Some("output0/s_1.json"),
                Some(0),
                "1 file(s), 0 covered `train` window(s)"
            ),
        ]
    );
    assert_eq!(
        out[0].expected,
        "a telemetry file of `a` copy 0 in output0/telemetry/ with its `train` window covered, for each of the 2 entries"
    );
    assert_eq!(out[0].severity, Severity::Error);
}

#[test]
fn without_telemetry_failed_unsampled_and_per_test_entries_need_none() {
    let reports = [
        ReportCopy {
            path: "output0/s_0.json",
            copy: Some(0),
        },
        ReportCopy {
            path: "e/s.a.R0.D0.20200101-000000-000000.json",
            copy: None,
        },
    ];
    let mut failed = entry(0, 0, "a");
    failed.failure = Some(FailureKind::FailStub);
    let entries = [failed, entry(0, 1, "scaling"), entry(1, 0, "a")];
    let mut out = Vec::new();
    coverage(
        &reports,
        &entries,
        &[facts("output0/telemetry/idle.0.jsonl", 0)],
        &mut out,
    );
    assert!(out.is_empty(), "{out:#?}");
    // And no telemetry at all: not even a sampled entry needs any.
    coverage(&reports, &[entry(0, 0, "a")], &[], &mut out);
    assert!(out.is_empty());
    // With telemetry elsewhere, it does.
    coverage(
        &reports,
        &[entry(0, 0, "a")],
        &[facts("output1/telemetry/a.0.jsonl", 1)],
        &mut out,
    );
    assert_eq!(out.len(), 1);
}

mod property {
    use super::*;
    use mlbench_telemetry::summary::summary_lines;
    use proptest::prelude::*;

    /// A file of one GPU sampled at irregular times (each 0.2 … 3 s after the last) at
    /// powers of 1 … 300 W, its counter the energy of those powers, one window between two
    /// of its sample times; the lines in time order, marks before samples of their time.
    fn file_of(deltas: &[u64], watts: &[u32], from: usize, to: usize) -> Vec<Line> {
        let mut t = 0;
        let mut raw = 0u64;
        let mut timed: Vec<(u64, u8, Line)> = Vec::new();
        for (i, (&delta, &w)) in deltas.iter().zip(watts).enumerate() {
            if i > 0 {
                t += delta;
                // mJ over the interval at this power.
                raw += u64::from(w) * delta / 1_000_000;
            }
            let mut s = sample(0);
            s.t_ns = t;
            s.values.energy_raw = Some(raw);
            s.values.power_mw = Some(f64::from(w) * 1000.0);
            timed.push((t, 1, Line::Sample(s)));
        }
        let at = |i: usize| timed[i].0;
        let (start, end) = (at(from) + 1, at(to));
        timed.push((start, 0, mark(start, Edge::Start, "train")));
        timed.push((end, 0, mark(end, Edge::End, "train")));
        timed.sort_by_key(|(t, order, _)| (*t, *order));
        timed.into_iter().map(|(_, _, line)| line).collect()
    }

    proptest! {
        /// The sampler's own summary lines pass the check, and a counter energy 2 % off
        /// fails it: the rule is the arithmetic, not a copy of some output.
        #[test]
        fn the_samplers_summaries_agree_and_two_percent_off_does_not(
            points in prop::collection::vec((200_000_000u64..3_000_000_000, 1u32..=300), 3..90),
            a in 0usize..1000,
            b in 0usize..1000,
        ) {
            let (deltas, watts): (Vec<u64>, Vec<u32>) = points.into_iter().unzip();
            let n = deltas.len();
            let (from, to) = (a % (n - 1), 1 + b % (n - 1));
            let (from, to) = (from.min(to - 1), to.max(from + 1));
            let mut lines = file_of(&deltas, &watts, from, to);
            let file = telemetry::parse(Path::new(PATH), &bytes_of(&header(), &lines)).unwrap();
            let summaries = summary_lines(&mlbench_telemetry::summarize(&file));
            prop_assert_eq!(summaries.len(), 1);
            lines.extend(summaries.iter().cloned().map(Line::Summary));
            let c = check(&lines);
            prop_assert!(of(&c, "telemetry.summary-mismatch").is_empty(), "{:#?}", c.findings);
            prop_assert!(of(&c, "telemetry.clock").is_empty(), "{:#?}", c.findings);
            prop_assert!(of(&c, "telemetry.coverage").is_empty(), "{:#?}", c.findings);
            prop_assert_eq!(c.facts.covered_train, 1);
            let mut off = summaries[0].clone();
            let counter = off.counter_j.unwrap();
            prop_assume!(counter > 0.0);
            off.counter_j = Some(counter * 1.02);
            *lines.last_mut().unwrap() = Line::Summary(off);
            prop_assert_eq!(of(&check(&lines), "telemetry.summary-mismatch").len(), 1);
        }
    }
}
