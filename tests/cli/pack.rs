//! `mlbench pack`: deterministic archives with a manifest, and what pack refuses to do.

use crate::fixtures::{
    copy_tree, edit_entry, error, example_dir, findings, folder_files, mlbench, read_zip,
    sha256_hex, validate_json,
};
use mlbench_schema::value::Value;
use predicates::prelude::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A temporary folder holding a copy of the example in `src`.
fn workspace() -> (TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    copy_tree(&example_dir(), &src);
    (tmp, src)
}

fn pack(dir: &Path, out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    mlbench()
        .arg("pack")
        .arg(dir)
        .arg("-o")
        .arg(out)
        .args(extra)
        .assert()
}

#[test]
fn packing_twice_gives_identical_bytes() {
    let (tmp, src) = workspace();
    let a = tmp.path().join("a.zip");
    let b = tmp.path().join("b.zip");
    pack(&src, &a, &[]).success().stderr(format!(
        "packed 13 files (10 report files, 175 entries) into {}\n",
        a.display()
    ));
    pack(&src, &b, &[]).success();
    let bytes = std::fs::read(&a).unwrap();
    assert_eq!(bytes, std::fs::read(&b).unwrap());

    // The folder's own path, and its files' times, leave no trace.
    let other = tmp.path().join("elsewhere/deeper");
    copy_tree(&src, &other);
    let c = tmp.path().join("c.zip");
    pack(&other, &c, &[]).success();
    assert_eq!(bytes, std::fs::read(&c).unwrap());

    // Unpacked (manifest and all) and packed again: the same archive.
    let unpacked = tmp.path().join("unpacked");
    for (name, content) in read_zip(&a) {
        let path = unpacked.join(&name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    let d = tmp.path().join("d.zip");
    pack(&unpacked, &d, &[]).success();
    assert_eq!(bytes, std::fs::read(&d).unwrap());
}

#[test]
fn the_archive_holds_the_files_a_manifest_and_a_summary() {
    let (tmp, src) = workspace();
    let out = tmp.path().join("out.zip");
    pack(&src, &out, &[]).success();
    let entries = read_zip(&out);

    // The folder's files, byte for byte, plus the two pack files, sorted by name.
    let mut expected_names: Vec<String> = folder_files(&src).into_iter().map(|(n, _)| n).collect();
    expected_names.push("MANIFEST.sha256".into());
    expected_names.push("SUBMISSION.json".into());
    expected_names.sort();
    let names: Vec<String> = entries.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(names, expected_names);
    for (name, bytes) in folder_files(&src) {
        let (_, packed) = entries.iter().find(|(n, _)| *n == name).unwrap();
        assert_eq!(packed, &bytes, "{name}");
    }

    // One `<sha256>  <path>` line per other file, sorted by path, hashes of what was read back.
    let manifest = &entries
        .iter()
        .find(|(n, _)| n == "MANIFEST.sha256")
        .unwrap()
        .1;
    let manifest = String::from_utf8(manifest.clone()).unwrap();
    let mut want: Vec<(String, String)> = entries
        .iter()
        .filter(|(n, _)| n != "MANIFEST.sha256")
        .map(|(n, b)| (n.clone(), sha256_hex(b)))
        .collect();
    want.sort();
    let want_text: String = want.iter().map(|(n, h)| format!("{h}  {n}\n")).collect();
    assert_eq!(manifest, want_text);
    assert_eq!(manifest.lines().count(), 12);

    let summary = &entries
        .iter()
        .find(|(n, _)| n == "SUBMISSION.json")
        .unwrap()
        .1;
    let summary: serde_json::Value = serde_json::from_slice(summary).unwrap();
    assert_eq!(
        summary,
        json!({
            "tool": format!("mlbench {}", env!("CARGO_PKG_VERSION")),
            "track": "baseline", "suite": "fast", "jobs_file": "fast.json",
            "files": 11, "report_files": 10, "entries": 175, "runs": 5, "gpus": 2,
            "benches": 19, "errors": 0, "warnings": 0, "schema_version": 1
        })
    );

    // Fixed metadata: deflated, dated 1980-01-01 00:00, mode 0644.
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
    for i in 0..archive.len() {
        let entry = archive.by_index(i).unwrap();
        assert_eq!(entry.compression(), zip::CompressionMethod::Deflated);
        assert_eq!(entry.unix_mode().map(|m| m & 0o7777), Some(0o644));
        let time = entry.last_modified().unwrap();
        assert_eq!((time.year(), time.month(), time.day()), (1980, 1, 1));
        assert_eq!((time.hour(), time.minute(), time.second()), (0, 0, 0));
    }
}

#[test]
fn the_packed_archive_validates_clean() {
    let (tmp, src) = workspace();
    let out = tmp.path().join("out.zip");
    pack(&src, &out, &[]).success();
    let (code, json) = validate_json(&out, &[]);
    assert_eq!(code, 0);
    assert_eq!(findings(&json), []);
    assert_eq!(json["summary"]["files"], 13);
    assert_eq!(json["summary"]["report_files"], 10);
    assert_eq!(json["summary"]["entries"], 175);
}

#[test]
fn an_existing_output_is_kept_without_force() {
    let (tmp, src) = workspace();
    let out = tmp.path().join("out.zip");
    std::fs::write(&out, "keep me").unwrap();
    pack(&src, &out, &[])
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");

    pack(&src, &out, &["--force"]).success();
    assert_eq!(read_zip(&out).len(), 13);
}

#[test]
fn a_folder_with_errors_is_packed_only_with_errors_allowed() {
    let (tmp, src) = workspace();
    let file = "output1/fast_0.json";
    edit_entry(&src.join(file), 3, |o| {
        let mut losses = o.get("batch_loss").unwrap().as_list().unwrap().to_vec();
        losses[17] = Value::Float(f64::NAN);
        o.insert("batch_loss", Value::List(losses));
    });
    let out = tmp.path().join("out.zip");
    pack(&src, &out, &[])
        .code(1)
        .stderr(
            predicate::str::contains("error[loss.nan]").and(predicate::str::contains(
                "not packed: the folder has errors",
            )),
        );
    assert!(!out.exists());

    // Waived, it packs.
    pack(&src, &out, &["--waive", "loss.nan"]).success();
    std::fs::remove_file(&out).unwrap();

    // --force only replaces a file: it does not pack a folder with errors.
    std::fs::write(&out, "old").unwrap();
    pack(&src, &out, &["--force"]).code(1);
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
    std::fs::remove_file(&out).unwrap();

    // With errors allowed, it packs, the warning says so, and the archive says what is
    // wrong with it.
    pack(&src, &out, &["--allow-errors"])
        .success()
        .stderr(predicate::str::contains(
            "warning: packed with 1 error (--allow-errors); SUBMISSION.json records them",
        ));
    let (code, json) = validate_json(&out, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        findings(&json),
        [error(
            "loss.nan",
            Some(file),
            Some(3),
            Some("batch_loss[17]")
        )]
    );
    let summary = &read_zip(&out)
        .into_iter()
        .find(|(n, _)| n == "SUBMISSION.json")
        .unwrap()
        .1;
    let summary: serde_json::Value = serde_json::from_slice(summary).unwrap();
    assert_eq!(summary["errors"], 1);
    assert_eq!(summary["allowed_errors"], true);
}

#[test]
fn pack_writes_nothing_inside_the_input_folder() {
    let (tmp, src) = workspace();
    let before = folder_files(&src);
    pack(&src, &tmp.path().join("out.zip"), &[]).success();
    assert_eq!(folder_files(&src), before);
}

#[test]
fn pack_refuses_an_output_inside_the_input_folder() {
    let (_tmp, src) = workspace();
    let before = folder_files(&src);
    for inside in [src.join("out.zip"), src.join("output0/out.zip")] {
        pack(&src, &inside, &[])
            .code(2)
            .stderr(predicate::str::contains(
                "the archive would be inside the folder it packs",
            ));
        assert!(!inside.exists(), "{}", inside.display());
        assert_eq!(folder_files(&src), before);
    }
}

#[test]
fn pack_refuses_an_existing_output_inside_the_input_folder_even_with_force() {
    let (_tmp, src) = workspace();
    let inside = src.join("out.zip");
    std::fs::write(&inside, "old").unwrap();
    pack(&src, &inside, &["--force"])
        .code(2)
        .stderr(predicate::str::contains(
            "the archive would be inside the folder it packs",
        ));
    assert_eq!(std::fs::read(&inside).unwrap(), b"old");
}
