//! `mlbench validate`: a corpus of broken and hostile submissions, each built from the
//! shipped example by code, with the exact findings it must produce.
//!
//! Expectations are worked out from the edit made (which file, which entry, which field,
//! and what that implies for the cross-file rules), never copied from the output.

mod coverage;
mod entries;
mod intake;
mod jobs;
mod losses;
mod output;
mod raw_zip;
mod telemetry;
mod versions;

use crate::fixtures::{
    Key, edit_entry, error, example_dir, findings, read_entries, sorted, validate_json,
};
use mlbench_schema::value::Value;
use mlbench_schema::writer::per_test_text;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// Runs the validation and asserts the exit status and the exact findings.
fn check(
    path: impl AsRef<Path>,
    extra: &[&str],
    code: i32,
    expected: Vec<Key>,
) -> serde_json::Value {
    let (got, json) = validate_json(path, extra);
    assert_eq!(findings(&json), sorted(expected), "{json:#}");
    assert_eq!(got, code, "{json:#}");
    json
}

/// [`check`] for a submission with exactly one finding, `key`; returns that finding.
fn sole(path: impl AsRef<Path>, extra: &[&str], code: i32, key: Key) -> serde_json::Value {
    let json = check(path, extra, code, vec![key]);
    json["findings"][0].clone()
}

/// `rel` inside a submission folder.
fn at(dir: &TempDir, rel: &str) -> PathBuf {
    dir.path().join(rel)
}

/// Every stream of the example as (run, GPU, `output<run>/fast_<gpu>.json`).
fn streams() -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for run in 0..5 {
        for gpu in 0..2 {
            out.push((run, gpu, format!("output{run}/fast_{gpu}.json")));
        }
    }
    out
}

/// The bench name of entry `index` of a stream.
fn name_of(path: &Path, index: usize) -> String {
    read_entries(path)[index].name().unwrap().to_owned()
}

/// The names of the benches of a stream from entry `from` on.
fn names_from(path: &Path, from: usize) -> Vec<String> {
    read_entries(path)[from..]
        .iter()
        .map(|e| e.name().unwrap().to_owned())
        .collect()
}

/// `bench.missing` of `count` benches missing in one place, in `file`: a finding each up
/// to 4, one finding listing them past that (docs/validate-json.md).
fn missing_in(file: &str, count: usize) -> Vec<Key> {
    let findings = if count <= 4 { count } else { 1 };
    vec![error("bench.missing", Some(file), None, None); findings]
}

/// The `expected` texts of the findings of `rule`, sorted.
fn texts(json: &serde_json::Value, rule: &str, what: &str) -> Vec<String> {
    let mut out: Vec<String> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .map(|f| f[what].as_str().unwrap().to_owned())
        .collect();
    out.sort();
    out
}

fn set_loss(path: &Path, entry: usize, step: usize, value: f64) {
    edit_entry(path, entry, |o| {
        let mut losses = o.get("batch_loss").unwrap().as_list().unwrap().to_vec();
        losses[step] = Value::Float(value);
        o.insert("batch_loss", Value::List(losses));
    });
}

/// The example rewritten in the E3 per-test layout: one file per entry at the root,
/// `fast.<bench>.R<run>.D<vcd>.<YYYYmmdd-HHMMSS-ffffff>.json`, plus the jobs file.
fn per_test_submission() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(example_dir().join("fast.json"), at(&dir, "fast.json")).unwrap();
    let mut clock = 0;
    for (run, _, rel) in streams() {
        for entry in read_entries(&example_dir().join(rel)) {
            clock += 1;
            let name = format!(
                "fast.{}.R{run}.D{}.20240102-0304{:02}-{clock:06}.json",
                entry.name().unwrap(),
                entry.vcd().unwrap(),
                clock % 60
            );
            std::fs::write(at(&dir, &name), per_test_text(&entry)).unwrap();
        }
    }
    dir
}
