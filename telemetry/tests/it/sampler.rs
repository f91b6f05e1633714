//! The sampler end to end: a scripted source at 50 Hz, the file it writes read back
//! through the schema's reader, its summary; and the real CPU sources of this machine.

use mlbench_schema::telemetry::{self, Counter, Device, Edge, Flag, SourceKind};
use mlbench_telemetry::{
    DetectOptions, DeviceSpec, Reading, Sampler, SamplerConfig, Source, SummaryFlag,
    TelemetryError, detect, summarize, summary::summary_lines,
};
use std::time::{Duration, Instant};

/// A device drawing a constant 100 W: its counter (µJ) is 100 W × the time since it was
/// made, less 10 J after its fifth reading (a reset, as a driver reload would make).
#[derive(Debug)]
struct Scripted {
    device: Device,
    born: Instant,
    reads: u32,
    /// The reading that takes 100 ms (five periods at 50 Hz), if any.
    slow: Option<u32>,
}

const WATTS: f64 = 100.0;

impl Scripted {
    fn new() -> Self {
        Self {
            device: Device {
                id: "test:0".into(),
                source: SourceKind::Other,
                counter: Some(Counter {
                    resolution_uj: 1.0,
                    wrap_raw: None,
                }),
                whole_board: true,
                ..Device::default()
            },
            born: Instant::now() - Duration::from_secs(100),
            reads: 0,
            slow: None,
        }
    }
}

impl Source for Scripted {
    fn probe(&self) -> &Device {
        &self.device
    }

    fn read(&mut self) -> Reading {
        self.reads += 1;
        if self.slow == Some(self.reads) {
            std::thread::sleep(Duration::from_millis(100));
        }
        let uj = WATTS * self.born.elapsed().as_secs_f64() * 1e6;
        let reset = if self.reads > 5 { 10e6 } else { 0.0 };
        let mut r = Reading::default();
        r.values.energy_raw = Some((uj - reset) as u64);
        r.values.power_mw = Some(WATTS * 1000.0);
        r
    }
}

fn config() -> SamplerConfig {
    SamplerConfig {
        hz: 50.0,
        bench: Some("scripted".into()),
        copy: 2,
        ..SamplerConfig::default()
    }
}

#[test]
fn a_sampler_writes_monotonic_samples_marks_in_order_and_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scripted.2.jsonl");
    let sampler = Sampler::start(&path, vec![Box::new(Scripted::new())], config()).unwrap();
    assert!(!path.exists(), "only the .part file while sampling");
    assert!(dir.path().join("scripted.2.jsonl.part").exists());
    std::thread::sleep(Duration::from_millis(50));
    let start = sampler.mark_start("train");
    std::thread::sleep(Duration::from_millis(200));
    let end = sampler.mark_end("train");
    std::thread::sleep(Duration::from_millis(50));
    let summary = sampler.finish().unwrap();
    assert!(!dir.path().join("scripted.2.jsonl.part").exists());

    let file = telemetry::read(&path).unwrap();
    assert_eq!(file.header.sample_period_ns, 20_000_000);
    assert_eq!(file.header.copy, Some(2));
    assert_eq!(file.header.devices[0].id, "test:0");
    // ~0.3 s at 50 Hz is ~15 ticks, one reading at the start and one at the stop; a
    // loaded machine skips some ticks, never adds any.
    let n = file.samples.len();
    assert!((6..=18).contains(&n), "{n} samples");
    assert!(
        file.samples.windows(2).all(|p| p[0].t_ns < p[1].t_ns),
        "monotonic"
    );
    // The reset after the fifth reading is flagged on the sixth.
    assert!(file.samples[5].flags.contains(&Flag::CounterReset));
    assert!(
        file.samples
            .iter()
            .enumerate()
            .all(|(i, s)| i == 5 || !s.flags.contains(&Flag::CounterReset))
    );
    assert_eq!(file.marks.len(), 2);
    assert_eq!(
        (file.marks[0].edge, file.marks[0].t_ns, file.marks[0].copy),
        (Edge::Start, start, 2)
    );
    assert_eq!((file.marks[1].edge, file.marks[1].t_ns), (Edge::End, end));
    // After the samples and marks, one summary line (one window, one device): what
    // `finish` gave, and what the samples give when summarised again.
    assert_eq!(file.summaries, summary_lines(&summary));
    assert_eq!(summary, summarize(&file));
    let s = &file.summaries[0];
    assert_eq!(
        (s.window.as_str(), s.copy, s.device, s.start_ns, s.end_ns),
        ("train", 2, 0, start, end)
    );
    let last_other = file.lines.samples.iter().chain(&file.lines.marks).max();
    assert!(file.lines.summaries[0] > *last_other.unwrap());
    // In the file, each mark sits between the samples taken before and after it.
    let text = std::fs::read_to_string(&path).unwrap();
    let times: Vec<u64> = text
        .lines()
        .skip(1)
        .filter(|l| !l.contains("\"summary\""))
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["t_ns"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert!(
        times.windows(2).all(|p| p[0] <= p[1]),
        "file order is time order: {times:?}"
    );

    assert_eq!(summary.windows.len(), 1);
    let w = &summary.windows[0];
    assert_eq!(
        (w.name.as_str(), w.copy, w.start_ns, w.end_ns),
        ("train", 2, start, end)
    );
    let d = &w.devices[0];
    let expected = WATTS * (end - start) as f64 * 1e-9;
    assert!((d.power_j.unwrap() - expected).abs() < 1e-9 * expected);
    // The counter agrees with the power (its reset interval filled from it). Not exactly:
    // a reading's time is taken just before the read, and a loaded machine can delay the
    // read by milliseconds, a few per cent of this 0.2 s window at most.
    assert!(
        (d.counter_j.unwrap() - expected).abs() < 0.05 * expected,
        "{d:?} vs {expected}"
    );
    assert!(d.flags.contains(&SummaryFlag::TooFewSamples));
    assert!(d.flags.contains(&SummaryFlag::NoIdleBaseline));
}

#[test]
fn a_sampler_never_replaces_a_file_and_refuses_a_bad_rate() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("taken.jsonl");
    std::fs::write(&path, "the user's\n").unwrap();
    let err = Sampler::start(&path, vec![], SamplerConfig::default()).unwrap_err();
    assert!(
        matches!(err, TelemetryError::Exists(ref p) if p == &path),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "the user's\n");
    let other = dir.path().join("other.jsonl");
    std::fs::write(dir.path().join("other.jsonl.part"), "").unwrap();
    let err = Sampler::start(&other, vec![], SamplerConfig::default()).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("other.jsonl.part: already exists; not overwriting it"),
        "{err}"
    );
    for hz in [0.0, -1.0, f64::NAN, 1001.0] {
        let cfg = SamplerConfig {
            hz,
            ..SamplerConfig::default()
        };
        assert!(matches!(
            Sampler::start(&dir.path().join("r"), vec![], cfg),
            Err(TelemetryError::Rate(_))
        ));
    }
}

#[test]
fn a_file_taken_meanwhile_is_not_replaced_at_the_finish() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("race.jsonl");
    let sampler = Sampler::start(&path, vec![Box::new(Scripted::new())], config()).unwrap();
    std::fs::write(&path, "someone else's\n").unwrap();
    let err = sampler.finish().unwrap_err();
    assert!(matches!(err, TelemetryError::Exists(_)), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "someone else's\n");
    // The samples are kept beside it.
    assert!(telemetry::read(&dir.path().join("race.jsonl.part")).is_ok());
}

#[test]
fn a_dropped_sampler_still_leaves_a_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dropped.jsonl");
    {
        let sampler = Sampler::start(&path, vec![Box::new(Scripted::new())], config()).unwrap();
        sampler.mark_start("train");
    }
    let file = telemetry::read(&path).unwrap();
    assert!(!file.truncated_tail);
    assert!(
        file.samples.len() >= 2,
        "a first reading and one at the stop"
    );
    assert_eq!(file.marks.len(), 1);
}

/// `close` finishes the file as `finish` does (summary lines and all): the path it gives
/// is the whole file, and no `.part` is left.
#[test]
fn a_closed_sampler_gives_its_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("closed.jsonl");
    let sampler = Sampler::start(&path, vec![Box::new(Scripted::new())], config()).unwrap();
    sampler.mark_start("train");
    sampler.mark_end("train");
    assert_eq!(sampler.close().unwrap(), path);
    let file = telemetry::read(&path).unwrap();
    assert!(!file.truncated_tail);
    assert_eq!(file.marks.len(), 2);
    assert_eq!(file.summaries.len(), 1);
    assert!(!dir.path().join("closed.jsonl.part").exists());
}

#[test]
fn this_machines_cpu_sources_sample_into_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cpu.0.jsonl");
    let detected = detect(
        &[DeviceSpec::Cpu],
        &DetectOptions::for_process(std::process::id()),
    );
    eprintln!("{detected:?}");
    let ids: Vec<String> = detected
        .sources
        .iter()
        .map(|s| s.probe().id.clone())
        .collect();
    assert_eq!(ids.last().map(String::as_str), Some("cpu:proc"));
    // RAPL zones are there, or a fact says why not.
    assert!(
        ids.len() > 1 || detected.facts.iter().any(|f| f.starts_with("RAPL")),
        "{detected:?}"
    );
    let cfg = SamplerConfig {
        hz: 20.0,
        facts: detected.facts.clone(),
        ..SamplerConfig::default()
    };
    let sampler = Sampler::start(&path, detected.sources, cfg).unwrap();
    sampler.mark_start("train");
    std::thread::sleep(Duration::from_millis(200));
    sampler.mark_end("train");
    let summary = sampler.finish().unwrap();
    let file = telemetry::read(&path).unwrap();
    assert_eq!(file.header.facts, detected.facts);
    let proc = file.header.devices.len() - 1;
    let mine: Vec<_> = file
        .samples
        .iter()
        .filter(|s| s.device as usize == proc)
        .collect();
    assert!(mine.len() >= 3, "{} samples", mine.len());
    assert!(
        mine.iter()
            .all(|s| s.values.memory_bytes.is_some_and(|b| b > 0))
    );
    assert!(
        mine[1..]
            .iter()
            .all(|s| s.values.util_pct.is_none_or(|u| (0.0..=100.0).contains(&u)))
    );
    assert_eq!(summary.windows[0].devices.len(), file.header.devices.len());
}

#[test]
fn a_window_marked_at_once_is_covered_from_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("at-once.jsonl");
    let sampler = Sampler::start(&path, vec![Box::new(Scripted::new())], config()).unwrap();
    let start = sampler.mark_start("train");
    std::thread::sleep(Duration::from_millis(60));
    sampler.mark_end("train");
    let summary = sampler.finish().unwrap();
    let file = telemetry::read(&path).unwrap();
    // The first reading was taken in `start`, before the mark.
    assert!(file.samples[0].t_ns < start);
    let d = &summary.windows[0].devices[0];
    assert!(!d.flags.contains(&SummaryFlag::NotCovered), "{d:?}");
    assert!(d.power_j.is_some() && d.counter_j.is_some());
}

#[test]
fn a_slow_reading_makes_the_next_sample_late_and_a_gap_in_its_window() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slow.jsonl");
    let source = Scripted {
        slow: Some(3),
        ..Scripted::new()
    };
    let sampler = Sampler::start(&path, vec![Box::new(source)], config()).unwrap();
    sampler.mark_start("train");
    std::thread::sleep(Duration::from_millis(250));
    sampler.mark_end("train");
    let summary = sampler.finish().unwrap();
    let file = telemetry::read(&path).unwrap();
    // The third reading's time is taken before it; the fourth comes 100 ms later, over
    // two 20 ms periods.
    assert!(file.samples[3].flags.contains(&Flag::Late));
    assert!(file.samples[3].t_ns - file.samples[2].t_ns >= 100_000_000);
    let flags = &summary.windows[0].devices[0].flags;
    assert!(
        flags
            .iter()
            .any(|f| matches!(f, SummaryFlag::Gap { longest_ns } if *longest_ns >= 100_000_000)),
        "{flags:?}"
    );
}
