//! `mlbench run`'s telemetry (feature `runner`): a sampler beside every copy,
//! the idle baseline, the files beside the reports, and what a run says. Whatever this
//! machine lets the sources read (RAPL, NVML), the files' shape is checked, not energies.

use crate::fixtures::{mlbench, validate_json};
use mlbench_schema::telemetry::{Edge, TelemetryFile};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// toy_reg, per device: with --smoke, 12 observations of one step of 16.
const JOBS: &str = r#"[
 {"name": "toy_reg", "cmd": "./regression/polynome/pytorch/run.sh",
  "args": {"--repeat": 12, "--number": 2, "--batch-size": 16, "--cuda": ""}, "cgroup": "student"}
]"#;

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let jobs = tmp.path().join("tiny.json");
    std::fs::write(&jobs, JOBS).unwrap();
    (tmp, jobs)
}

/// A smoke run on two CPU devices; its standard error.
fn smoke_run(jobs: &Path, out: &Path, extra: &[&str]) -> String {
    let assert = mlbench()
        .arg("run")
        .arg("--jobs")
        .arg(jobs)
        .args(["--smoke", "--devices", "2", "--out-dir"])
        .arg(out)
        .args(extra)
        .assert()
        .success();
    String::from_utf8(assert.get_output().stderr.clone()).unwrap()
}

/// The files of `output0/telemetry`, sorted.
fn telemetry_files(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join("output0/telemetry"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The file read back by schema's reader, after checking that its lines are in time
/// order as written (marks among the samples, on one clock).
fn read_back(path: &Path) -> TelemetryFile {
    let text = std::fs::read_to_string(path).unwrap();
    // Summary lines (after the samples and marks) have no time of their own.
    let times: Vec<u64> = text
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["t_ns"].as_u64())
        .collect();
    assert!(times.windows(2).all(|t| t[0] <= t[1]), "{}", path.display());
    let file = mlbench_schema::telemetry::read(path).unwrap();
    assert!(!file.truncated_tail);
    file
}

/// The one window of `name` in `file`: its start and end, which the samples cover.
fn window(file: &TelemetryFile, name: &str, copy: u32) -> (u64, u64) {
    let edges: Vec<(Edge, u64)> = file
        .marks
        .iter()
        .filter(|m| m.window == name)
        .map(|m| {
            assert_eq!(m.copy, copy);
            (m.edge, m.t_ns)
        })
        .collect();
    let [(Edge::Start, start), (Edge::End, end)] = edges.as_slice() else {
        panic!("{name}: {edges:?}")
    };
    assert!(start <= end);
    // A reading at the origin, before the start; one after the end, as the sampler stops.
    let (first, last) = (
        file.samples.iter().map(|s| s.t_ns).min().unwrap(),
        file.samples.iter().map(|s| s.t_ns).max().unwrap(),
    );
    assert!(
        first <= *start && *end <= last,
        "{first} {start} {end} {last}"
    );
    (*start, *end)
}

/// The keys of every entry of a stream (`[`, then `{…},` per entry, unclosed).
fn entry_keys(stream: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(stream).unwrap();
    let closed = format!("{}]", text.trim_end().trim_end_matches(','));
    let entries: Vec<serde_json::Map<String, serde_json::Value>> =
        serde_json::from_str(&closed).unwrap();
    entries
        .into_iter()
        .flat_map(|e| e.into_iter().map(|(k, _)| k))
        .collect()
}

#[test]
fn a_smoke_run_writes_a_telemetry_file_per_copy_and_an_idle_file_per_device() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    let err = smoke_run(&jobs, &out, &["--sample-hz", "20", "--idle-baseline", "1s"]);
    assert_eq!(
        telemetry_files(&out),
        [
            "idle.0.jsonl",
            "idle.1.jsonl",
            "toy_reg.0.jsonl",
            "toy_reg.1.jsonl"
        ]
    );
    let dir = out.join("output0/telemetry");
    for copy in 0..2u32 {
        let idle = read_back(&dir.join(format!("idle.{copy}.jsonl")));
        assert_eq!(
            (idle.header.bench.as_deref(), idle.header.copy),
            (None, Some(copy))
        );
        let (start, end) = window(&idle, "idle", copy);
        // 1 s of idle sampling: at least that, and not a great deal more.
        assert!(
            (1_000_000_000..5_000_000_000).contains(&(end - start)),
            "{start} {end}"
        );
        let file = read_back(&dir.join(format!("toy_reg.{copy}.jsonl")));
        assert_eq!(file.header.bench.as_deref(), Some("toy_reg"));
        assert_eq!(file.header.copy, Some(copy));
        assert_eq!(file.header.sample_period_ns, 50_000_000);
        // Whatever else this machine has, /proc is read: the copy's resident memory.
        let proc = file.header.devices.iter().position(|d| d.id == "cpu:proc");
        let proc = proc.expect("a cpu:proc device") as u32;
        assert!(
            file.samples
                .iter()
                .any(|s| s.device == proc && s.values.memory_bytes.is_some_and(|b| b > 0))
        );
        // The 11th and 12th observations, the two that are counted.
        window(&file, "train", copy);
        assert_eq!(file.marks.len(), 2);
    }
    // The reports stay the suite's: the same fields as a run without telemetry.
    let plain = tmp.path().join("plain");
    let quiet = smoke_run(&jobs, &plain, &["--sample-hz", "0"]);
    for d in 0..2 {
        let stream = format!("output0/tiny_{d}.json");
        assert_eq!(
            entry_keys(&out.join(&stream)),
            entry_keys(&plain.join(&stream))
        );
    }
    assert!(!plain.join("output0/telemetry").exists());
    assert!(
        !quiet.contains("telemetry") && !quiet.contains("energy:"),
        "{quiet}"
    );
    // Each fact of the samplers (a source missing here, say) is said once for the run:
    // two copies and two idle samplers find the same.
    let facts: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("telemetry: "))
        .collect();
    let unique: BTreeSet<&str> = facts.iter().copied().collect();
    assert_eq!(facts.len(), unique.len(), "{err}");
}

/// A smoke run's telemetry passes `validate`: no `telemetry.*` error, and exactly the
/// warnings a smoke run must give, `telemetry.too-few` for each device of each copy's
/// `train` window (two counted observations of a tiny model take milliseconds, far from 60
/// samples at 1 Hz); the idle baseline's window is not held to 60 samples.
#[test]
fn a_smoke_runs_telemetry_passes_validate_with_too_few_warnings_only() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    smoke_run(&jobs, &out, &["--sample-hz", "1", "--idle-baseline", "1s"]);
    let (_, json) = validate_json(&out, &["--min-runs", "1"]);
    let mut telemetry: Vec<(String, String, String, String)> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"].as_str().unwrap().starts_with("telemetry."))
        .map(|f| {
            let text = |k: &str| f[k].as_str().unwrap_or_default().to_owned();
            (text("rule"), text("severity"), text("file"), text("field"))
        })
        .collect();
    telemetry.sort();
    let mut expected = Vec::new();
    for copy in 0..2u32 {
        let path = format!("output0/telemetry/toy_reg.{copy}.jsonl");
        let file = read_back(&out.join(&path));
        // The sampler's summary lines: one per device of the one window.
        assert_eq!(file.summaries.len(), file.header.devices.len(), "{path}");
        for (i, device) in file.header.devices.iter().enumerate() {
            let field = format!("window `train` of copy {copy}: device {i} ({})", device.id);
            expected.push((
                "telemetry.too-few".into(),
                "warning".into(),
                path.clone(),
                field,
            ));
        }
    }
    expected.sort();
    assert_eq!(telemetry, expected, "{json:#}");
}

#[test]
fn a_second_run_appended_numbers_its_files_and_leaves_the_first_alone() {
    let (tmp, jobs) = workspace();
    let out = tmp.path().join("out");
    smoke_run(
        &jobs,
        &out,
        &["--sample-hz", "50", "--idle-baseline", "200ms"],
    );
    let first = std::fs::read(out.join("output0/telemetry/toy_reg.1.jsonl")).unwrap();
    smoke_run(
        &jobs,
        &out,
        &["--sample-hz", "50", "--idle-baseline", "200ms", "--append"],
    );
    assert_eq!(
        telemetry_files(&out),
        [
            "idle.0.2.jsonl",
            "idle.0.jsonl",
            "idle.1.2.jsonl",
            "idle.1.jsonl",
            "toy_reg.0.2.jsonl",
            "toy_reg.0.jsonl",
            "toy_reg.1.2.jsonl",
            "toy_reg.1.jsonl",
        ]
    );
    let again = std::fs::read(out.join("output0/telemetry/toy_reg.1.jsonl")).unwrap();
    assert_eq!(first, again);
    let second = read_back(&out.join("output0/telemetry/toy_reg.1.2.jsonl"));
    window(&second, "train", 1);
}

#[test]
fn telemetry_flags_out_of_range_are_usage_errors() {
    let (tmp, jobs) = workspace();
    for (flag, value, says) in [
        ("--sample-hz", "1001", "1001 is not in 0..=1000"),
        (
            "--idle-baseline",
            "5 parsecs",
            "the unit must be ms, s, m or h",
        ),
        ("--idle-baseline", "-1s", "zero or more"),
    ] {
        mlbench()
            .arg("run")
            .arg("--jobs")
            .arg(&jobs)
            .arg(format!("{flag}={value}"))
            .arg("--out-dir")
            .arg(tmp.path().join("out"))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
    assert!(!tmp.path().join("out").exists());
}
