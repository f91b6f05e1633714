//! Hostile file systems (issue 26): every reproducer ends cleanly, in bounded time, with
//! the documented exit code and a message that names the place. Each command walks a
//! folder the same way (`mlbench_schema::tree`) and opens only regular files.

use crate::fixtures::{copy_example, mlbench};
use predicates::str::contains;
use std::path::Path;
use std::time::Duration;

/// Every reading command on `sub`, each with a time limit (a hang fails the test).
fn each_command(sub: &Path) -> Vec<(&'static str, assert_cmd::assert::Assert)> {
    let out = tempfile::tempdir().unwrap();
    let zip = out.path().join("x.zip");
    let limit = Duration::from_secs(60);
    let run = |args: &[&std::ffi::OsStr]| mlbench().args(args).timeout(limit).assert();
    let s = sub.as_os_str();
    vec![
        ("validate", run(&["validate".as_ref(), s])),
        (
            "report",
            run(&["report".as_ref(), s, "-g".as_ref(), "RTX".as_ref()]),
        ),
        (
            "grid",
            run(&["grid".as_ref(), s, s, "--resamples".as_ref(), "10".as_ref()]),
        ),
        (
            "pack",
            run(&["pack".as_ref(), s, "-o".as_ref(), zip.as_os_str()]),
        ),
    ]
}

fn code(a: &assert_cmd::assert::Assert) -> Option<i32> {
    a.get_output().status.code()
}

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

fn mkfifo(path: &Path) -> bool {
    let made = std::process::Command::new("mkfifo").arg(path).status();
    if made.is_ok_and(|s| s.success()) {
        return true;
    }
    eprintln!("no mkfifo here: skipped");
    false
}

/// 2,000 nested folders overflowed the recursive walk's stack (SIGABRT, exit 134). Now
/// the walk stops at 64 levels: a finding for `validate` and `pack` (errors, exit 1),
/// exit 2 for `report` and `grid`, which never read a partial tree.
#[test]
fn a_very_deep_tree_ends_cleanly_in_every_command() {
    let sub = copy_example();
    let deep: std::path::PathBuf = (0..2000).map(|_| "d").collect();
    std::fs::create_dir_all(sub.path().join(&deep)).unwrap();
    std::fs::write(sub.path().join(&deep).join("notes.txt"), "x").unwrap();
    for (command, a) in each_command(sub.path()) {
        let expected = if matches!(command, "validate" | "pack") {
            1
        } else {
            2
        };
        assert_eq!(code(&a), Some(expected), "{command}: {}", stderr(&a));
        let err = stderr(&a);
        assert!(
            !err.contains("panicked") && !err.contains("overflow"),
            "{err}"
        );
    }
    let out = mlbench()
        .arg("validate")
        .arg(sub.path())
        .args(["-f", "json"])
        .assert()
        .code(1);
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let deep_finding = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "file.unreadable")
        .expect("a file.unreadable finding");
    assert_eq!(deep_finding["found"], "deeper: not listed");
    assert_eq!(
        deep_finding["file"].as_str().unwrap().split('/').count(),
        64,
        "{deep_finding}"
    );
    mlbench()
        .arg("report")
        .arg(sub.path())
        .args(["-g", "RTX"])
        .assert()
        .code(2)
        .stderr(contains(
            "folders nested deeper than 64 levels: not searched",
        ));
}

/// A FIFO given as the submission hung `validate` and `grid` in open(2): refused at once.
#[test]
fn a_fifo_as_the_submission_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("sub.zip");
    if !mkfifo(&fifo) {
        return;
    }
    for (command, a) in each_command(&fifo) {
        assert_eq!(code(&a), Some(2), "{command}: {}", stderr(&a));
        assert!(stderr(&a).contains("sub.zip"), "{command}: {}", stderr(&a));
    }
    mlbench()
        .arg("validate")
        .arg(&fifo)
        .timeout(Duration::from_secs(60))
        .assert()
        .code(2)
        .stderr(contains("sub.zip: a FIFO, not a folder or a .zip file"));
}

/// A FIFO or a link out of the submission in place of a report stream is never opened or
/// followed: `validate` says what it is, `report` names it as unreadable (exit 2), and
/// none of them reads `/etc/passwd`.
#[test]
fn a_fifo_or_a_link_in_place_of_a_stream_is_never_opened() {
    let sub = copy_example();
    let stream = sub.path().join("output1/fast_1.json");
    std::fs::remove_file(&stream).unwrap();
    if !mkfifo(&stream) {
        return;
    }
    let link = sub.path().join("output2/fast_0.json");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &link).unwrap();
    for (command, a) in each_command(sub.path()) {
        let expected = if matches!(command, "validate" | "pack") {
            1
        } else {
            2
        };
        assert_eq!(code(&a), Some(expected), "{command}: {}", stderr(&a));
        assert!(!stderr(&a).contains("root:"), "{command} read /etc/passwd");
    }
    let out = mlbench()
        .arg("validate")
        .arg(sub.path())
        .args(["-f", "json"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(1);
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let found = |rule: &str, file: &str| {
        json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == rule && f["file"] == file)
            .map(|f| f["found"].clone())
    };
    assert_eq!(
        found("file.unreadable", "output1/fast_1.json"),
        Some("a FIFO".into())
    );
    assert_eq!(
        found("file.symlink", "output2/fast_0.json"),
        Some("a symbolic link".into())
    );
    mlbench()
        .arg("report")
        .arg(sub.path())
        .args(["-g", "RTX"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(2)
        .stderr(contains("output1/fast_1.json: cannot read: a FIFO, not a regular file"))
        .stderr(contains(
            "output2/fast_0.json: cannot read: a symbolic link: links inside a submission are not followed",
        ));
}

/// A folder whose name is not UTF-8 is read by every command, as the same figures; the
/// validator warns that a zip cannot carry the name.
#[test]
fn a_folder_name_that_is_not_utf8_is_read_alike() {
    use std::os::unix::ffi::OsStrExt;
    let sub = copy_example();
    let odd = sub.path().join(std::ffi::OsStr::from_bytes(b"output\xff4"));
    std::fs::rename(sub.path().join("output4"), &odd).unwrap();
    let json = |args: &[&str]| {
        let out = mlbench()
            .args(args)
            .arg(sub.path())
            .args(["-f", "json"])
            .timeout(Duration::from_secs(60))
            .assert();
        let code = out.get_output().status.code();
        let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        (code, doc)
    };
    let (code, report) = json(&["report", "-g", "RTX"]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["runs"], 5);
    let (code, validation) = json(&["validate"]);
    assert_eq!(code, Some(0), "{validation:#}");
    let warnings: Vec<&serde_json::Value> = validation["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "file.name-encoding")
        .collect();
    assert_eq!(
        warnings.len(),
        2,
        "two streams under the folder: {warnings:?}"
    );
    assert_eq!(validation["summary"]["runs"], 5);
    let (code, grid) = json(&["grid", "--resamples", "10"]);
    assert_eq!(code, Some(0), "{grid}");
}
