//! The pack manifest, waivers, and the output formats: SARIF, CSV and human text.

use super::{at, check, set_loss};
use crate::fixtures::{
    Key, copy_example, copy_tree, edit_entries, error, example_dir, finding, findings, mlbench,
    sha256_hex, sorted, validate_json, waived, warning, write_zip,
};
use std::path::Path;
use tempfile::TempDir;
use zip::CompressionMethod::Deflated;

// ───────────────────────────── 20. manifest ─────────────────────────────

/// The example packed by `mlbench pack`, as (name, bytes) in archive order.
fn packed_example(tmp: &TempDir) -> Vec<(String, Vec<u8>)> {
    let src = tmp.path().join("src");
    copy_tree(&example_dir(), &src);
    let zip = tmp.path().join("packed.zip");
    mlbench()
        .arg("pack")
        .arg(&src)
        .arg("-o")
        .arg(&zip)
        .assert()
        .success();
    crate::fixtures::read_zip(&zip)
}

#[test]
fn manifest_mismatch_missing_extra_malformed() {
    let tmp = tempfile::tempdir().unwrap();
    let packed = packed_example(&tmp);
    let write = |name: &str, files: &[(String, Vec<u8>)]| {
        let path = tmp.path().join(name);
        write_zip(&path, files, Deflated);
        path
    };
    check(write("clean.zip", &packed), &[], 0, vec![]);

    // One byte of one file changed.
    let mut files = packed.clone();
    let target = "output2/fast_0.json";
    let (_, bytes) = files.iter_mut().find(|(n, _)| n == target).unwrap();
    let original = bytes.clone();
    let key = b"\"hostname\": \"";
    let at_byte = bytes.windows(key.len()).position(|w| w == key).unwrap() + key.len();
    bytes[at_byte] = if bytes[at_byte] == b'w' { b'v' } else { b'w' };
    let changed = bytes.clone();
    let json = check(
        write("mismatch.zip", &files),
        &[],
        1,
        vec![error("manifest.mismatch", Some(target), None, None)],
    );
    let f = finding(&json, "manifest.mismatch", Some(target), None);
    assert_eq!(f["expected"], sha256_hex(&original));
    assert_eq!(f["found"], sha256_hex(&changed));

    // A listed file dropped.
    let files: Vec<_> = packed
        .iter()
        .filter(|(n, _)| n != "SUBMISSION.json")
        .cloned()
        .collect();
    check(
        write("missing.zip", &files),
        &[],
        1,
        vec![error(
            "manifest.missing",
            Some("SUBMISSION.json"),
            None,
            None,
        )],
    );

    // A file added.
    let mut files = packed.clone();
    files.push(("notes.txt".into(), b"hello\n".to_vec()));
    check(
        write("extra.zip", &files),
        &[],
        1,
        vec![
            error("manifest.extra", Some("notes.txt"), None, None),
            warning("file.unknown", Some("notes.txt"), None, None),
        ],
    );

    // A manifest line garbled.
    let mut files = packed.clone();
    let (_, manifest) = files
        .iter_mut()
        .find(|(n, _)| n == "MANIFEST.sha256")
        .unwrap();
    let text = String::from_utf8(manifest.clone()).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[2] = lines[2].replacen(|c: char| c.is_ascii_hexdigit(), "g", 1);
    *manifest = format!("{}\n", lines.join("\n")).into_bytes();
    check(
        write("malformed.zip", &files),
        &[],
        1,
        vec![error(
            "manifest.malformed",
            Some("MANIFEST.sha256"),
            None,
            Some("line 3"),
        )],
    );
}

// ───────────────────────────── 23. waivers ─────────────────────────────

fn nan_example() -> TempDir {
    let dir = copy_example();
    set_loss(&at(&dir, "output1/fast_0.json"), 3, 17, f64::NAN);
    dir
}

#[test]
fn waivers_move_errors_aside() {
    let dir = nan_example();
    let nan = error(
        "loss.nan",
        Some("output1/fast_0.json"),
        Some(3),
        Some("batch_loss[17]"),
    );
    for waiver in [
        "loss.nan:output1/fast_0.json",
        "loss.*",
        "loss.nan",
        "*",
        "loss.nan:output1/",
    ] {
        let json = check(dir.path(), &["--waive", waiver], 0, vec![]);
        assert_eq!(waived(&json), std::slice::from_ref(&nan), "{waiver}");
        assert_eq!(json["errors"], 0);
    }
    // A waiver for another file, or another rule, leaves the error where it is.
    for waiver in ["loss.nan:output2/fast_0.json", "run.*"] {
        let json = check(dir.path(), &["--waive", waiver], 1, vec![nan.clone()]);
        assert_eq!(waived(&json), [], "{waiver}");
    }
    // Warnings are never waived.
    std::fs::write(at(&dir, "notes.txt"), "x").unwrap();
    let json = check(
        dir.path(),
        &["--waive", "*"],
        0,
        vec![warning("file.unknown", Some("notes.txt"), None, None)],
    );
    assert_eq!(waived(&json), [nan]);
}

#[test]
fn waiver_naming_no_rule_is_a_usage_error() {
    let dir = nan_example();
    let out = mlbench()
        .arg("validate")
        .arg(dir.path())
        .args(["--waive", "nope", "--format", "json"])
        .assert()
        .code(2)
        .stdout("");
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("--waive nope"), "{stderr}");
    assert!(stderr.contains("`nope` names no rule"), "{stderr}");
}

// ───────────────────────────── 25. output formats ─────────────────────────────

/// A small broken submission: a NaN loss, a missing bench, a stray file.
fn small_broken() -> TempDir {
    let dir = nan_example();
    edit_entries(&at(&dir, "output2/fast_1.json"), |e| {
        e.remove(6);
    });
    std::fs::write(at(&dir, "notes.txt"), "x").unwrap();
    dir
}

fn small_broken_findings() -> Vec<Key> {
    vec![
        error(
            "loss.nan",
            Some("output1/fast_0.json"),
            Some(3),
            Some("batch_loss[17]"),
        ),
        error("bench.missing", Some("output2/fast_1.json"), None, None),
        warning("file.unknown", Some("notes.txt"), None, None),
    ]
}

fn stdout_of(dir: &Path, args: &[&str], code: i32) -> String {
    let out = mlbench()
        .arg("validate")
        .arg(dir)
        .args(args)
        .assert()
        .code(code)
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn sarif_has_one_result_per_finding() {
    let dir = small_broken();
    let (_, json) = validate_json(dir.path(), &["--waive", "bench.missing"]);
    let sarif: serde_json::Value = serde_json::from_str(&stdout_of(
        dir.path(),
        &["--format", "sarif", "--waive", "bench.missing"],
        1,
    ))
    .unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let runs = sarif["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let results = runs[0]["results"].as_array().unwrap();
    let all: Vec<&serde_json::Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .chain(json["waived"].as_array().unwrap())
        .collect();
    assert_eq!(results.len(), 3);
    assert_eq!(results.len(), all.len());
    for (result, f) in results.iter().zip(all) {
        assert_eq!(result["ruleId"], f["rule"]);
        assert_eq!(
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            f["file"]
        );
        let waived = f["rule"] == "bench.missing";
        assert_eq!(result["suppressions"].is_array(), waived, "{result}");
    }
    let rules = runs[0]["tool"]["driver"]["rules"].as_array().unwrap();
    assert!(rules.iter().any(|r| r["id"] == "loss.nan"));
}

#[test]
fn csv_has_a_header_and_one_row_per_finding() {
    let dir = small_broken();
    let text = stdout_of(dir.path(), &["--format", "csv", "--waive", "loss.nan"], 1);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "rule,severity,file,entry,field,expected,found,hint"
    );
    assert_eq!(lines.len(), 1 + 3, "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("loss.nan,waived,output1/fast_0.json,3,batch_loss[17],"))
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("file.unknown,warning,notes.txt,,,"))
    );
}

#[test]
fn human_output_of_a_small_broken_case() {
    let dir = small_broken();
    let (code, json) = validate_json(dir.path(), &[]);
    assert_eq!(findings(&json), sorted(small_broken_findings()));
    assert_eq!(code, 1);
    let text = stdout_of(dir.path(), &[], 1);
    insta::assert_snapshot!("validate_small_broken_human", text);
}

#[test]
fn human_output_of_the_clean_example_is_one_line() {
    assert_eq!(
        stdout_of(&example_dir(), &[], 0),
        "0 errors, 0 warnings in 11 files\n"
    );
}
