//! `mlbench run --profile`: a copy's timed observations recorded by libtorch's profiler
//! (Kineto), its Chrome trace kept as `profiles/<bench>.<vcd>.trace.json` beside the run's
//! reports, and the summary its entry carries as `profile` (docs/profiling.md).
//!
//! The summary is computed from the trace alone, so anyone can recompute it: each
//! operator's **self time** is its duration less the durations of the operators nested
//! directly inside it on the same thread, so the self times of a thread sum to the time
//! it spent inside operators. The profiled **window** is the wall time from the profiler's
//! start to its stop; what is not inside an operator is **outside operators** (waiting for
//! the loader's next batch, and the host code between operators).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The folder beside a run's report files that holds its traces.
pub const PROFILE_FOLDER: &str = "profiles";

/// The summary's layout version.
pub const PROFILE_SCHEMA_VERSION: u32 = 1;

/// Operators listed by name in a summary; the rest are summed as `other_operators_s`.
pub const TOP_OPERATORS: usize = 10;

/// The trace file of copy `vcd` of `bench`, relative to the run's folder.
pub fn trace_path(bench: &str, vcd: &str) -> String {
    let vcd = vcd.replace([',', '/'], "-");
    format!("{PROFILE_FOLDER}/{bench}.{vcd}.trace.json")
}

/// Whether `path` (`/`-separated, in a submission) is a trace `mlbench run --profile`
/// wrote: `*.trace.json` in a `profiles` folder.
pub fn is_trace_path(path: &str) -> bool {
    let (dir, name) = path.rsplit_once('/').unwrap_or((".", path));
    let folder = dir.rsplit_once('/').map_or(dir, |(_, last)| last);
    folder == PROFILE_FOLDER && name.ends_with(".trace.json")
}

/// An operator's time over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperatorTime {
    /// Its name (`aten::convolution_backward`).
    pub name: String,
    /// Its self time, seconds.
    pub self_s: f64,
    /// How many times it ran.
    pub calls: u64,
}

/// What an entry's `profile` says: where the window's time went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileSummary {
    /// [`PROFILE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The trace, relative to the run's folder ([`trace_path`]).
    pub trace: String,
    /// What was recorded: `cpu operators`, or `cpu operators and cuda kernels`.
    pub recorded: String,
    /// The profiled window, seconds: the copy's timed observations.
    pub window_s: f64,
    /// The self times of every operator, summed (the time inside operators).
    pub operators_s: f64,
    /// Of those, the collectives' (c10d: Gloo, NCCL).
    pub communication_s: f64,
    /// The window's time outside operators: waiting for batches, host code.
    pub outside_s: f64,
    /// CUDA kernels' time on the devices (0 when none were recorded).
    pub kernels_s: f64,
    /// The [`TOP_OPERATORS`] operators of most self time, most first.
    pub top: Vec<OperatorTime>,
    /// The other operators' self time, summed.
    pub other_operators_s: f64,
}

impl ProfileSummary {
    /// The summary as an entry's `profile` field.
    pub fn to_value(&self) -> crate::value::Value {
        let bytes = serde_json::to_vec(self).expect("a summary serialises");
        crate::pyjson::parse(&bytes).expect("serde_json's output parses")
    }

    /// The summary of an entry's `profile` field, when it is one.
    pub fn from_value(value: &crate::value::Value) -> Option<ProfileSummary> {
        let text = crate::pyjson::to_python_json(value);
        serde_json::from_str(&text).ok()
    }

    /// Compute's share of the window: the operators but the collectives.
    pub fn compute_share(&self) -> f64 {
        share(self.operators_s - self.communication_s, self.window_s)
    }

    /// Communication's share of the window.
    pub fn communication_share(&self) -> f64 {
        share(self.communication_s, self.window_s)
    }

    /// Loading's share of the window: the time outside operators.
    pub fn loading_share(&self) -> f64 {
        share(self.outside_s, self.window_s)
    }

    /// The summary line: the window, the shares, the top operators.
    pub fn line(&self) -> String {
        let top: Vec<String> = (self.top.iter().take(3))
            .map(|o| format!("{} {:.0}%", o.name, 100.0 * share(o.self_s, self.window_s)))
            .collect();
        format!(
            "{:.3} s profiled ({}): compute {:.0}%, loading {:.0}%, communication {:.0}%; top: {}",
            self.window_s,
            self.recorded,
            100.0 * self.compute_share(),
            100.0 * self.loading_share(),
            100.0 * self.communication_share(),
            if top.is_empty() {
                "none".to_owned()
            } else {
                top.join(", ")
            }
        )
    }
}

/// The profile of a bench over its copies' `summaries`: each time the mean per copy, the
/// top operators those the copies' own tops name most (their self times summed over the
/// copies that name them, ÷ the copies); `None` without any.
pub fn combine(summaries: &[ProfileSummary]) -> Option<ProfileSummary> {
    let first = summaries.first()?;
    let n = summaries.len() as f64;
    let mean = |f: fn(&ProfileSummary) -> f64| summaries.iter().map(f).sum::<f64>() / n + 0.0;
    let mut ops: BTreeMap<&str, (f64, u64)> = BTreeMap::new();
    for o in summaries.iter().flat_map(|s| &s.top) {
        let slot = ops.entry(&o.name).or_default();
        slot.0 += o.self_s / n;
        slot.1 += o.calls;
    }
    let mut top: Vec<OperatorTime> = (ops.into_iter())
        .map(|(name, (self_s, calls))| OperatorTime {
            name: name.to_owned(),
            self_s,
            calls: calls / summaries.len() as u64,
        })
        .collect();
    top.sort_by(|a, b| {
        b.self_s
            .total_cmp(&a.self_s)
            .then_with(|| a.name.cmp(&b.name))
    });
    top.truncate(TOP_OPERATORS);
    let operators_s = mean(|s| s.operators_s);
    let named: f64 = top.iter().map(|o| o.self_s).sum();
    Some(ProfileSummary {
        schema_version: PROFILE_SCHEMA_VERSION,
        trace: first.trace.clone(),
        recorded: first.recorded.clone(),
        window_s: mean(|s| s.window_s),
        operators_s,
        communication_s: mean(|s| s.communication_s),
        outside_s: mean(|s| s.outside_s),
        kernels_s: mean(|s| s.kernels_s),
        top,
        other_operators_s: (operators_s - named).max(0.0),
    })
}

fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 { part / whole } else { 0.0 }
}

/// A trace that does not read as Kineto's Chrome trace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a Chrome trace: {0}")]
pub struct TraceError(pub String);

#[derive(Deserialize)]
struct RawTrace {
    #[serde(rename = "traceEvents")]
    events: Vec<RawEvent>,
}

#[derive(Deserialize)]
struct RawEvent {
    #[serde(default)]
    ph: String,
    #[serde(default)]
    cat: Option<String>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    pid: serde_json::Value,
    #[serde(default)]
    tid: serde_json::Value,
    #[serde(default)]
    ts: f64,
    #[serde(default)]
    dur: f64,
}

/// A complete operator event: its thread, start and duration (µs), name.
struct Span<'a> {
    thread: String,
    start: f64,
    dur: f64,
    name: &'a str,
}

/// Whether an operator is a collective of c10d.
fn is_collective(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "c10d",
        "gloo",
        "nccl",
        "record_param_comms",
        "allreduce",
        "all_reduce",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// The summary of the trace `bytes` over a window of `window_s` seconds, its file named
/// `trace` in the summary.
pub fn summarize(bytes: &[u8], window_s: f64, trace: &str) -> Result<ProfileSummary, TraceError> {
    let raw: RawTrace = serde_json::from_slice(bytes).map_err(|e| TraceError(e.to_string()))?;
    let complete = |e: &&RawEvent| e.ph == "X" && e.dur.is_finite() && e.dur >= 0.0;
    let spans: Vec<Span<'_>> = (raw.events.iter().filter(complete))
        .filter(|e| e.cat.as_deref() == Some("cpu_op"))
        .map(|e| Span {
            thread: format!("{}:{}", e.pid, e.tid),
            start: e.ts,
            dur: e.dur,
            name: &e.name,
        })
        .collect();
    // `+ 0.0`: an empty sum of floats is −0.0.
    let kernels_us = (raw.events.iter().filter(complete))
        .filter(|e| e.cat.as_deref() == Some("kernel"))
        .map(|e| e.dur)
        .sum::<f64>()
        + 0.0;
    let by_name = self_times(spans);
    let mut ops: Vec<OperatorTime> = by_name
        .into_iter()
        .map(|(name, (us, calls))| OperatorTime {
            name: name.to_owned(),
            self_s: us * 1e-6,
            calls,
        })
        .collect();
    ops.sort_by(|a, b| {
        b.self_s
            .total_cmp(&a.self_s)
            .then_with(|| a.name.cmp(&b.name))
    });
    let operators_s = ops.iter().map(|o| o.self_s).sum::<f64>() + 0.0;
    let communication_s = (ops.iter().filter(|o| is_collective(&o.name)))
        .map(|o| o.self_s)
        .sum::<f64>()
        + 0.0;
    let other_operators_s = ops
        .iter()
        .skip(TOP_OPERATORS)
        .map(|o| o.self_s)
        .sum::<f64>()
        + 0.0;
    ops.truncate(TOP_OPERATORS);
    Ok(ProfileSummary {
        schema_version: PROFILE_SCHEMA_VERSION,
        trace: trace.to_owned(),
        recorded: match kernels_us > 0.0 {
            true => "cpu operators and cuda kernels".to_owned(),
            false => "cpu operators".to_owned(),
        },
        window_s,
        operators_s,
        communication_s,
        outside_s: (window_s - operators_s).max(0.0),
        kernels_s: kernels_us * 1e-6,
        top: ops,
        other_operators_s,
    })
}

/// Each operator name's self time (µs) and calls: per thread, an operator's duration
/// less those of the operators directly inside it.
fn self_times(mut spans: Vec<Span<'_>>) -> BTreeMap<&str, (f64, u64)> {
    // Outer before inner: by thread, start, then the longer first.
    spans.sort_by(|a, b| {
        (a.thread.cmp(&b.thread))
            .then(a.start.total_cmp(&b.start))
            .then(b.dur.total_cmp(&a.dur))
    });
    let mut out: BTreeMap<&str, (f64, u64)> = BTreeMap::new();
    // The open operators of the current thread: (end, index into `selfs`).
    let mut open: Vec<(f64, usize)> = Vec::new();
    let mut selfs: Vec<(usize, f64)> = Vec::with_capacity(spans.len());
    let mut thread: Option<&str> = None;
    for (i, span) in spans.iter().enumerate() {
        if thread != Some(span.thread.as_str()) {
            open.clear();
            thread = Some(span.thread.as_str());
        }
        while open.last().is_some_and(|&(end, _)| end <= span.start) {
            open.pop();
        }
        if let Some(&(_, parent)) = open.last() {
            selfs[parent].1 -= span.dur;
        }
        selfs.push((i, span.dur));
        open.push((span.start + span.dur, selfs.len() - 1));
    }
    for (i, us) in selfs {
        let slot = out.entry(spans[i].name).or_insert((0.0, 0));
        slot.0 += us.max(0.0);
        slot.1 += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, tid: u32, ts: f64, dur: f64) -> String {
        format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": {tid}, "ts": {ts}, "dur": {dur}}}"#
        )
    }

    /// Nested operators count once: `aten::linear` (100 µs) holds `aten::addmm` (70 µs),
    /// which holds `aten::copy_` (20 µs): self times 30, 50 and 20. A second thread's
    /// operator and a collective count too; a kernel is the devices' time, apart.
    #[test]
    fn self_times_subtract_the_operators_inside() {
        let events = [
            op("aten::linear", 7, 1000.0, 100.0),
            op("aten::addmm", 7, 1010.0, 70.0),
            op("aten::copy_", 7, 1020.0, 20.0),
            op("aten::copy_", 7, 1200.0, 5.0),
            op("c10d::allreduce_", 8, 1000.0, 40.0),
            r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 300}"#
                .to_owned(),
            r#"{"ph": "i", "name": "mark", "ts": 3}"#.to_owned(),
        ];
        let text = format!(
            r#"{{"traceEvents": [{}], "otherField": 1}}"#,
            events.join(", ")
        );
        let s = summarize(text.as_bytes(), 0.0002, "profiles/x.0.trace.json").unwrap();
        let find = |n: &str| s.top.iter().find(|o| o.name == n).unwrap().clone();
        assert!((find("aten::linear").self_s - 30e-6).abs() < 1e-12);
        assert!((find("aten::addmm").self_s - 50e-6).abs() < 1e-12);
        assert_eq!(find("aten::copy_").calls, 2);
        assert!((find("aten::copy_").self_s - 25e-6).abs() < 1e-12);
        // 100 + 5 on thread 7, 40 on thread 8: the top-level durations.
        assert!((s.operators_s - 145e-6).abs() < 1e-12);
        assert!((s.communication_s - 40e-6).abs() < 1e-12);
        assert!((s.outside_s - 55e-6).abs() < 1e-12);
        assert!((s.kernels_s - 300e-6).abs() < 1e-12);
        assert_eq!(s.recorded, "cpu operators and cuda kernels");
        assert_eq!(s.top[0].name, "aten::addmm");
        assert!(
            (s.compute_share() + s.communication_share() + s.loading_share() - 1.0).abs() < 1e-9
        );
    }

    #[test]
    fn only_the_ten_longest_are_named() {
        let events: Vec<String> = (0..12)
            .map(|i| op(&format!("op{i:02}"), 1, 100.0 * i as f64, 1.0 + i as f64))
            .collect();
        let text = format!(r#"{{"traceEvents": [{}]}}"#, events.join(","));
        let s = summarize(text.as_bytes(), 1.0, "t").unwrap();
        assert_eq!(s.top.len(), TOP_OPERATORS);
        assert_eq!(s.top[0].name, "op11");
        assert!(
            (s.other_operators_s - 3e-6).abs() < 1e-12,
            "op00 and op01: 1 + 2 µs"
        );
        assert!(summarize(b"{}", 1.0, "t").is_err());
        assert!(summarize(b"[1", 1.0, "t").is_err());
    }

    /// Two copies: each time their mean; an operator only one copy names counts half.
    #[test]
    fn copies_combine_into_their_means() {
        let summary = |window: f64, ops: f64, top: &[(&str, f64)]| ProfileSummary {
            schema_version: 1,
            trace: "profiles/a.0.trace.json".into(),
            recorded: "cpu operators".into(),
            window_s: window,
            operators_s: ops,
            communication_s: 0.0,
            outside_s: window - ops,
            kernels_s: 0.0,
            top: top
                .iter()
                .map(|&(name, self_s)| OperatorTime {
                    name: name.into(),
                    self_s,
                    calls: 2,
                })
                .collect(),
            other_operators_s: 0.0,
        };
        let both = combine(&[
            summary(1.0, 0.9, &[("mm", 0.6), ("add", 0.3)]),
            summary(3.0, 2.7, &[("mm", 2.0), ("relu", 0.7)]),
        ])
        .unwrap();
        assert_eq!((both.window_s, both.operators_s), (2.0, 1.8));
        assert!((both.outside_s - 0.2).abs() < 1e-12);
        let names: Vec<(&str, f64)> = both
            .top
            .iter()
            .map(|o| (o.name.as_str(), o.self_s))
            .collect();
        assert_eq!(names, [("mm", 1.3), ("relu", 0.35), ("add", 0.15)]);
        assert!(combine(&[]).is_none());
    }

    #[test]
    fn trace_paths() {
        assert_eq!(trace_path("convnet", "0"), "profiles/convnet.0.trace.json");
        assert_eq!(
            trace_path("dcgan_all", "0,1"),
            "profiles/dcgan_all.0-1.trace.json"
        );
        assert!(is_trace_path("output0/profiles/convnet.0.trace.json"));
        assert!(is_trace_path("profiles/convnet.0.trace.json"));
        assert!(!is_trace_path("output0/convnet.0.trace.json"));
        assert!(!is_trace_path("output0/profiles/convnet.json"));
    }
}
