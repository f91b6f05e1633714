//! Hostile file systems: every reproducer ends cleanly, in bounded time, with
//! the documented exit code and a message that names the place. Each command walks a
//! folder the same way (`mlbench_submission::tree`) and opens only regular files.

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

/// 3,000 runs of one empty stream each: 15,000 `bench.missing` findings (per run, GPU 0's
/// and GPU 1's 16 benches as one finding each, and the 3 whole-machine benches one by
/// one). The document lists the first 1,000 of the rule and counts the rest: the counts
/// stay exact and the output stays bounded, whatever the input.
#[test]
fn findings_past_a_thousand_per_rule_are_counted_not_listed() {
    use crate::fixtures::{folder_files, write_zip};
    let dir = tempfile::tempdir().unwrap();
    let zip = dir.path().join("many.zip");
    let mut files = folder_files(&crate::fixtures::example_dir());
    for run in 5..3005 {
        files.push((format!("output{run}/fast_0.json"), b"[".to_vec()));
    }
    write_zip(&zip, &files, zip::CompressionMethod::Deflated);
    let out = mlbench()
        .arg("validate")
        .arg(&zip)
        .args(["-f", "json"])
        .timeout(Duration::from_secs(120))
        .assert()
        .code(1);
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(json["errors"], 3000 * 5);
    assert_eq!(json["findings"].as_array().unwrap().len(), 1000);
    assert_eq!(
        json["omitted"],
        serde_json::json!([{"rule": "bench.missing", "severity": "error", "waived": false, "count": 14000}])
    );
    let aggregated = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == "output10")
        .expect("GPU 1 of output10, where no stream is");
    assert_eq!(
        aggregated["expected"],
        "the 16 benches on GPU 1 in run output10"
    );
    assert!(
        aggregated["found"]
            .as_str()
            .unwrap()
            .starts_with("every one absent: `toy_reg`, `toy_lstm`, `vae`,"),
        "{aggregated}"
    );
    // The human output says how many were left out, once, under the rule.
    mlbench()
        .arg("validate")
        .arg(&zip)
        .timeout(Duration::from_secs(120))
        .assert()
        .code(1)
        .stdout(contains("  … and 14000 more, not listed\n"))
        .stdout(contains("15000 errors, 0 warnings in 3011 files"));
}

/// Every numeric flag that sizes memory has a bound, said before any work.
#[test]
fn resamples_are_bounded() {
    for command in [&["grid"][..], &["plot", "grid"]] {
        for n in ["10000000", "0"] {
            mlbench()
                .args(command)
                .arg(crate::fixtures::example_dir())
                .args(["--resamples", n])
                .assert()
                .code(2)
                .stderr(contains(format!(
                    "invalid value '{n}' for '--resamples <N>': {n} is not in 1..=100000"
                )));
        }
    }
}

/// A jobs file cut short, or nested past the parser's limit, is `jobs.invalid` (it
/// passed as an unknown file, and the submission as having no jobs file).
#[test]
fn a_truncated_or_too_deep_jobs_file_is_invalid() {
    let whole = std::fs::read(crate::fixtures::example_dir().join("fast.json")).unwrap();
    let deep = format!("{}{}", "[".repeat(600), "]".repeat(600)).into_bytes();
    for (bytes, found) in [
        (whole[..500].to_vec(), "not JSON: "),
        (deep, "not JSON: nesting deeper than 512 levels at byte 512"),
    ] {
        let sub = copy_example();
        std::fs::write(sub.path().join("fast.json"), bytes).unwrap();
        let out = mlbench()
            .arg("validate")
            .arg(sub.path())
            .args(["-f", "json"])
            .assert()
            .code(1);
        let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        let rules: Vec<&str> = json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap())
            .collect();
        assert_eq!(rules, ["jobs.invalid"], "{json:#}");
        let text = json["findings"][0]["found"].as_str().unwrap();
        assert!(text.starts_with(found), "{text}");
        assert_eq!(json["findings"][0]["file"], "fast.json");
    }
}

/// Four zips the zip crate reads without a word: a local header naming another file than
/// the central directory, an entry whose data runs past the end of the file, a central
/// directory whose declared size is wrong, a folder entry that carries data. Each is an
/// `archive.inconsistent` error.
#[test]
fn zips_that_disagree_with_themselves_are_inconsistent() {
    use crate::fixtures::write_zip;
    let dir = tempfile::tempdir().unwrap();
    let files = vec![
        ("output0/fast_0.json".to_owned(), b"[".to_vec()),
        ("output0/".to_owned(), Vec::new()),
    ];
    let clean = dir.path().join("clean.zip");
    write_zip(&clean, &files[..1], zip::CompressionMethod::Stored);
    let bytes = std::fs::read(&clean).unwrap();
    let find = |needle: &[u8], from_end: bool| {
        let mut windows = bytes.windows(needle.len());
        if from_end {
            windows.rposition(|w| w == needle).unwrap()
        } else {
            windows.position(|w| w == needle).unwrap()
        }
    };
    let central = find(&[0x50, 0x4b, 0x01, 0x02], false);
    let end = find(&[0x50, 0x4b, 0x05, 0x06], true);
    let patched = |name: &str, edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = bytes.clone();
        edit(&mut b);
        let path = dir.path().join(name);
        std::fs::write(&path, b).unwrap();
        path
    };
    // The local header's name (19 bytes at 30), replaced by one of the same length.
    let renamed = patched("renamed.zip", &|b| {
        b[30..49].copy_from_slice(b"../../evil/aaaa.jso")
    });
    // The central record's compressed size (at 20 of the record), far past the end.
    let past = patched("past.zip", &|b| {
        b[central + 20..central + 24].copy_from_slice(&1_000_000u32.to_le_bytes())
    });
    // The end record's central-directory size (at 12 of the record), one too many.
    let sized = patched("sized.zip", &|b| {
        let declared = u32::from_le_bytes(b[end + 12..end + 16].try_into().unwrap());
        b[end + 12..end + 16].copy_from_slice(&(declared + 1).to_le_bytes());
    });
    let with_dir = dir.path().join("dir.zip");
    write_zip(&with_dir, &files, zip::CompressionMethod::Stored);
    let dir_bytes = std::fs::read(&with_dir).unwrap();
    // The folder entry's sizes (in its local header and central record) made 5, and
    // 5 bytes of data put after its local header.
    let with_data = dir.path().join("dir-data.zip");
    std::fs::write(&with_data, folder_with_data(&dir_bytes)).unwrap();
    for (zip, expected) in [
        (&renamed, "the local header names `../../evil/aaaa.jso`"),
        (&past, "1000000 compressed bytes from byte"),
        (&sized, "bytes from its start to the end record"),
        (&with_data, "5 bytes"),
    ] {
        let out = mlbench()
            .arg("validate")
            .arg(zip)
            .args(["-f", "json"])
            .timeout(Duration::from_secs(60))
            .assert();
        let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        let found: Vec<String> = json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "archive.inconsistent")
            .map(|f| f["found"].as_str().unwrap().to_owned())
            .collect();
        assert!(
            found.iter().any(|f| f.contains(expected)),
            "{}: {json:#}",
            zip.display()
        );
        assert_ne!(out.get_output().status.code(), Some(0));
    }
    // The clean zip has none.
    let out = mlbench()
        .arg("validate")
        .arg(&clean)
        .args(["-f", "json"])
        .assert();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(!text.contains("archive.inconsistent"), "{text}");
}

/// `zip` (stored, written by `ZipWriter`) with its folder entry given 5 bytes of data.
fn folder_with_data(zip: &[u8]) -> Vec<u8> {
    let local = [0x50, 0x4b, 0x03, 0x04];
    let central = [0x50, 0x4b, 0x01, 0x02];
    // The second local header is the folder's: its name is `output0/`, no data after it.
    let headers: Vec<usize> = zip
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == local)
        .map(|(i, _)| i)
        .collect();
    let at = headers[1];
    let name_len = u16::from_le_bytes([zip[at + 26], zip[at + 27]]) as usize;
    let extra_len = u16::from_le_bytes([zip[at + 28], zip[at + 29]]) as usize;
    let data_at = at + 30 + name_len + extra_len;
    let mut out = zip[..data_at].to_vec();
    out[at + 18..at + 22].copy_from_slice(&5u32.to_le_bytes());
    out[at + 22..at + 26].copy_from_slice(&5u32.to_le_bytes());
    out.extend_from_slice(b"hello");
    let mut rest = zip[data_at..].to_vec();
    // Central records follow: the folder's record gets the sizes and the shifted offsets.
    let records: Vec<usize> = rest
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == central)
        .map(|(i, _)| i)
        .collect();
    let folder = records[1];
    rest[folder + 20..folder + 24].copy_from_slice(&5u32.to_le_bytes());
    rest[folder + 24..folder + 28].copy_from_slice(&5u32.to_le_bytes());
    // The end record's directory offset moves by the 5 bytes put in.
    let end = rest
        .windows(4)
        .rposition(|w| w == [0x50, 0x4b, 0x05, 0x06])
        .unwrap();
    let offset = u32::from_le_bytes(rest[end + 16..end + 20].try_into().unwrap());
    rest[end + 16..end + 20].copy_from_slice(&(offset + 5).to_le_bytes());
    out.extend(rest);
    out
}

/// Every report read as a stream (`MLBENCH_STREAM_ABOVE=0`: what a file over 64 MiB
/// gets) gives the outputs of every report read whole, on the example, on a damaged copy
/// (an entry cut short, a broken one) and on a zip: the same figures, the same errors at
/// the same bytes, lines and columns.
#[test]
fn reports_read_as_streams_give_what_reports_read_whole_give() {
    let damaged = copy_example();
    let stream = damaged.path().join("output2/fast_1.json");
    let bytes = std::fs::read(&stream).unwrap();
    std::fs::write(&stream, &bytes[..30_000]).unwrap();
    std::fs::write(
        damaged.path().join("output3/fast_0.json"),
        "[{\"name\": 3},\n {\"x\": Nope}",
    )
    .unwrap();
    let zip = tempfile::tempdir().unwrap();
    let zipped = zip.path().join("example.zip");
    crate::fixtures::write_zip(
        &zipped,
        &crate::fixtures::folder_files(&crate::fixtures::example_dir()),
        zip::CompressionMethod::Deflated,
    );
    let example = crate::fixtures::example_dir();
    let both = |args: &[&std::ffi::OsStr]| {
        let run = |stream: bool| {
            let mut cmd = mlbench();
            if stream {
                cmd.env("MLBENCH_STREAM_ABOVE", "0");
            }
            let out = cmd.args(args).output().unwrap();
            (out.status.code(), out.stdout, out.stderr)
        };
        let (whole, streamed) = (run(false), run(true));
        assert_eq!(whole, streamed, "{args:?}");
        assert!(!whole.1.is_empty() || !whole.2.is_empty());
    };
    for sub in [
        example.as_os_str(),
        damaged.path().as_os_str(),
        zipped.as_os_str(),
    ] {
        let skip = "--skip-unreadable".as_ref();
        for scoring in ["classic", "score"] {
            both(&[
                "report".as_ref(),
                sub,
                "-g".as_ref(),
                "RTX".as_ref(),
                "-f".as_ref(),
                "json".as_ref(),
                "--scoring".as_ref(),
                scoring.as_ref(),
                skip,
            ]);
        }
        both(&["validate".as_ref(), sub, "-f".as_ref(), "json".as_ref()]);
    }
    both(&[
        "grid".as_ref(),
        example.as_os_str(),
        zipped.as_os_str(),
        "-f".as_ref(),
        "json".as_ref(),
        "--resamples".as_ref(),
        "100".as_ref(),
    ]);
}

/// A report file of 8 GiB (sparse) is over the 4 GiB read at most: named and set aside,
/// never read (report and grid exit 2, validate has an `archive.too-large` error). One of
/// 3 GiB is under it: read as a stream, it is refused at its first byte, in bounded memory
/// and time.
#[test]
fn huge_report_files_are_set_aside_or_streamed() {
    let limit = Duration::from_secs(60);
    for (size, set_aside) in [(8u64 << 30, true), (3 << 30, false)] {
        let sub = copy_example();
        let huge = sub.path().join("output0/fast_0.json");
        std::fs::File::create(&huge).unwrap().set_len(size).unwrap();
        let report = mlbench()
            .arg("report")
            .arg(sub.path())
            .args(["-g", "RTX"])
            .timeout(limit)
            .assert()
            .code(2);
        let err = stderr(&report);
        if set_aside {
            assert!(
                err.contains("output0/fast_0.json: not read: 8589934592 bytes with 0 read before it, over the 4294967296 bytes read at most"),
                "{err}"
            );
        } else {
            assert!(
                err.contains("output0/fast_0.json: byte 0 (line 1, column 1): not a report: expected `[` or `{`"),
                "{err}"
            );
        }
        // The other files are read: one stream missing, not the whole submission.
        let validate = mlbench()
            .arg("validate")
            .arg(sub.path())
            .args(["-f", "json"])
            .timeout(limit)
            .assert()
            .code(1);
        let json: serde_json::Value =
            serde_json::from_slice(&validate.get_output().stdout).unwrap();
        let rule = if set_aside {
            "archive.too-large"
        } else {
            "parse.json"
        };
        assert!(
            json["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["rule"] == rule && f["file"] == "output0/fast_0.json"),
            "{json:#}"
        );
        mlbench()
            .arg("grid")
            .arg(sub.path())
            .arg(crate::fixtures::example_dir())
            .timeout(limit)
            .assert()
            .code(2)
            .stderr(contains("output0/fast_0.json"));
    }
}

// ---------------------------------------------------------------------------------------
// Hostile sizes: jobs files whose lists multiply into millions of configurations, or that
// repeat one job 100,000 times; telemetry files of a gigabyte, of 200,000 windows, and of
// numbers no device reads. Each ends in bounded time with 0, 1 or 2 and names the file;
// the ordinary part of the submission keeps its figures.
// ---------------------------------------------------------------------------------------

/// A command of `mlbench` with a hang guard.
fn guarded(args: &[&std::ffi::OsStr], secs: u64) -> assert_cmd::assert::Assert {
    mlbench()
        .args(args)
        .timeout(Duration::from_secs(secs))
        .assert()
}

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

/// One job of `lists` two-element list arguments: 2^lists configurations.
fn job_of_lists(name: &str, lists: usize) -> String {
    let args: Vec<String> = (0..lists).map(|k| format!(r#""--a{k}": [1, 2]"#)).collect();
    format!(
        r#"{{"name": "{name}", "cmd": "./{name}/run.sh", "args": {{{}}}, "cgroup": "student"}}"#,
        args.join(", ")
    )
}

#[test]
fn a_jobs_file_of_a_million_or_two_to_the_forty_configurations_is_refused_unexpanded() {
    for (lists, count) in [(20, "1,048,576"), (40, "1,099,511,627,776")] {
        let sub = copy_example();
        let jobs = sub.path().join("fast.json");
        std::fs::write(&jobs, format!("[{}]", job_of_lists("convnet", lists))).unwrap();
        let said = format!("job `convnet` makes {count} configurations, over the 100,000 allowed");
        let s = sub.path().as_os_str();
        let v = guarded(
            &["validate".as_ref(), s, "-f".as_ref(), "json".as_ref()],
            60,
        );
        assert_eq!(code(&v), Some(1), "{}", stderr(&v));
        let json: serde_json::Value = serde_json::from_str(&stdout(&v)).unwrap();
        let invalid: Vec<&serde_json::Value> = (json["findings"].as_array().unwrap().iter())
            .filter(|f| f["rule"] == "jobs.invalid")
            .collect();
        assert_eq!(invalid.len(), 1, "{json:#}");
        assert_eq!(invalid[0]["file"], "fast.json");
        assert!(
            invalid[0]["found"].as_str().unwrap().ends_with(&said),
            "{json:#}"
        );
        // Given with --jobs, the file is what the command needs: exit 2, said.
        let with = guarded(
            &["validate".as_ref(), s, "--jobs".as_ref(), jobs.as_os_str()],
            60,
        );
        assert_eq!(code(&with), Some(2));
        assert!(
            stderr(&with).contains(&format!("{}: {said}", jobs.display())),
            "{}",
            stderr(&with)
        );
        let zip = sub.path().with_extension("zip");
        let pack = guarded(&["pack".as_ref(), s, "-o".as_ref(), zip.as_os_str()], 60);
        assert_eq!(code(&pack), Some(1), "{}", stderr(&pack));
        assert!(stderr(&pack).contains(&said) || stdout(&pack).contains(&said));
        // The report does without a jobs file it cannot use, and says why.
        let report = guarded(&["report".as_ref(), s, "-g".as_ref(), "RTX".as_ref()], 60);
        assert_eq!(code(&report), Some(0), "{}", stderr(&report));
        let all = stdout(&report) + &stderr(&report);
        assert!(all.contains(&said), "{all}");
    }
}

#[test]
fn a_jobs_file_of_a_hundred_thousand_duplicate_jobs_is_compared_in_linear_time() {
    let sub = copy_example();
    let jobs = sub.path().join("fast.json");
    let one = r#"{"name": "toy_reg", "cmd": "./regression/polynome/pytorch/run.sh", "args": {"--repeat": 20, "--number": 100, "--batch-size": 256, "--report": "$OUTPUT_DIRECTORY/$JOB_FILE", "--cuda": ""}, "cgroup": "student"}"#;
    let text = format!("[{}]", vec![one; 100_000].join(",\n"));
    std::fs::write(&jobs, text).unwrap();
    let s = sub.path().as_os_str();
    // The comparison was quadratic: 20,000 duplicates took 3 s of a release build.
    let v = guarded(
        &["validate".as_ref(), s, "-f".as_ref(), "json".as_ref()],
        120,
    );
    assert_eq!(code(&v), Some(1), "{}", stderr(&v));
    let json: serde_json::Value = serde_json::from_str(&stdout(&v)).unwrap();
    // All but the first `toy_reg` are jobs the baselines lack: 99,999 errors of fast.json
    // (a thousand listed, the rest counted).
    let extra: Vec<&serde_json::Value> = (json["findings"].as_array().unwrap().iter())
        .filter(|f| f["rule"] == "jobs.extra-job")
        .collect();
    assert!(!extra.is_empty() && extra.iter().all(|f| f["file"] == "fast.json"));
    assert!(
        json["errors"].as_u64().unwrap() >= 99_999,
        "{}",
        json["errors"]
    );
    let zip = sub.path().with_extension("zip");
    let pack = guarded(&["pack".as_ref(), s, "-o".as_ref(), zip.as_os_str()], 120);
    assert!(matches!(code(&pack), Some(0 | 1)), "{}", stderr(&pack));
}

/// The fixture submission with its telemetry ([`crate::energy_fixture`]), and its
/// targets: `(tempdir, sub, targets)`.
fn with_telemetry() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    crate::fixtures::write_submission(&sub, 4, 2);
    crate::energy_fixture::write_telemetry(&sub, 4, 2, 1.0);
    let targets = dir.path().join("targets.csv");
    crate::fixtures::write_targets(&targets);
    (dir, sub, targets)
}

/// `validate -f json`, `report -f json`, `plot power` and `grid --per joule` (against a
/// copy) of `sub`: each one's exit code, standard output and standard error.
fn energy_outputs(sub: &Path, targets: &Path, secs: u64) -> Vec<(Option<i32>, String, String)> {
    let out = sub.parent().unwrap().join("plots");
    let other = sub.parent().unwrap().join("other");
    if !other.exists() {
        crate::fixtures::write_submission(&other, 4, 2);
        crate::energy_fixture::write_telemetry(&other, 4, 2, 1.1);
    }
    let s = sub.as_os_str();
    let runs = [
        guarded(
            &["validate".as_ref(), s, "-f".as_ref(), "json".as_ref()],
            secs,
        ),
        guarded(
            &[
                "report".as_ref(),
                s,
                "-g".as_ref(),
                "RTX".as_ref(),
                "--targets".as_ref(),
                targets.as_os_str(),
                "-f".as_ref(),
                "json".as_ref(),
            ],
            secs,
        ),
        guarded(
            &[
                "plot".as_ref(),
                "power".as_ref(),
                s,
                "--out-dir".as_ref(),
                out.as_os_str(),
                "--force".as_ref(),
            ],
            secs,
        ),
        guarded(
            &[
                "grid".as_ref(),
                other.as_os_str(),
                s,
                "--per".as_ref(),
                "joule".as_ref(),
                "-f".as_ref(),
                "json".as_ref(),
            ],
            secs,
        ),
    ];
    runs.iter()
        .map(|a| {
            let c = code(a);
            assert!(matches!(c, Some(0..=2)), "{c:?}: {}", stderr(a));
            (c, stdout(a), stderr(a))
        })
        .collect()
}

/// A gigabyte of telemetry (the fixture's file padded with blank lines of 1 MiB: the
/// same bytes as 12 million samples at 1 kHz, read the same way, line by line, in a
/// fraction of the time a debug build would parse them) is read in one pass: every
/// command gives what it gave of the file unpadded.
#[test]
fn a_gigabyte_telemetry_file_is_read_in_one_pass_with_the_same_figures() {
    let (_dir, sub, targets) = with_telemetry();
    let before = energy_outputs(&sub, &targets, 120);
    let file = sub.join("output0/telemetry/convnet.0.jsonl");
    let mut out = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    let mut blank = vec![b' '; 1 << 20];
    *blank.last_mut().unwrap() = b'\n';
    for _ in 0..1024 {
        std::io::Write::write_all(&mut out, &blank).unwrap();
    }
    drop(out);
    assert!(std::fs::metadata(&file).unwrap().len() > 1 << 30);
    let after = energy_outputs(&sub, &targets, 300);
    // validate, report, grid: the same bytes; plot power: the same lines (its files are
    // written again, so said as `wrote`).
    for (i, (b, a)) in before.iter().zip(&after).enumerate() {
        assert_eq!(b.0, a.0, "command {i}: {}", a.2);
        assert_eq!(b.1, a.1, "command {i}");
    }
    assert_eq!(before[2].2, after[2].2);
    assert!(!after[0].1.contains("first line is not a telemetry header"));
}

/// 200,000 timed windows in one file (40 MB): each window's energy and checks cost a few
/// running totals, not a scan of every sample; the file's own findings name it, and the
/// figures of the other files are those without it.
#[test]
fn a_telemetry_file_of_two_hundred_thousand_windows_is_checked_in_linear_time() {
    let (_dir, sub, targets) = with_telemetry();
    let before = energy_outputs(&sub, &targets, 120);
    let path = sub.join("output0/telemetry/windows.0.jsonl");
    let mut text = String::from(
        r#"{"type":"header","schema_version":1,"tool":"t","bench":"windows","copy":0,"sample_period_ns":1000000,"devices":[{"id":"cuda:0","source":"nvml","power_reading":"average","whole_board":true}]}"#,
    );
    text.push('\n');
    for k in 0..200_000u64 {
        let t = k * 1_000_000;
        text.push_str(&format!(
            "{{\"type\":\"sample\",\"t_ns\":{t},\"device\":0,\"power_mw\":100000.0}}\n\
             {{\"type\":\"mark\",\"t_ns\":{},\"edge\":\"start\",\"window\":\"train\",\"copy\":0}}\n\
             {{\"type\":\"mark\",\"t_ns\":{},\"edge\":\"end\",\"window\":\"train\",\"copy\":0}}\n",
            t + 100,
            t + 900
        ));
    }
    std::fs::write(&path, text).unwrap();
    let after = energy_outputs(&sub, &targets, 300);
    // validate: the new file's windows are too short and not covered at the last; named.
    let json: serde_json::Value = serde_json::from_str(&after[0].1).unwrap();
    let named: Vec<&serde_json::Value> = (json["findings"].as_array().unwrap().iter())
        .filter(|f| f["file"] == "output0/telemetry/windows.0.jsonl")
        .collect();
    assert!(
        named.iter().any(|f| f["rule"] == "telemetry.too-few"),
        "{json:#}"
    );
    // report and grid: the same figures (no report entry is of `windows`); the report's
    // verdict of the submission is the validation's, with the new file's errors.
    let report = |text: &str| {
        let mut doc: serde_json::Value = serde_json::from_str(text).unwrap();
        let validity = doc.as_object_mut().unwrap().remove("validity").unwrap();
        (doc, validity[0]["errors"].as_u64().unwrap())
    };
    let ((figures_before, _), (figures_after, errors)) =
        (report(&before[1].1), report(&after[1].1));
    assert_eq!(figures_before, figures_after);
    assert_eq!(errors, json["errors"].as_u64().unwrap());
    let grid = |text: &str| {
        let mut doc: serde_json::Value = serde_json::from_str(text).unwrap();
        let rows = doc["vendors"].as_array_mut().unwrap();
        let sub = rows.iter().position(|r| r["name"] == "sub").unwrap();
        let errors = rows[sub]["validity"]["errors"].as_u64().unwrap();
        rows.iter_mut()
            .for_each(|r| drop(r.as_object_mut().unwrap().remove("validity")));
        (doc, errors)
    };
    let ((grid_before, _), (grid_after, errors)) = (grid(&before[3].1), grid(&after[3].1));
    assert_eq!(grid_before, grid_after);
    assert_eq!(errors, json["errors"].as_u64().unwrap());
    // plot power draws it too.
    assert!(after[2].2.contains("windows"), "{}", after[2].2);
}

/// A counter resolution of 1e308 µJ a count gave an infinite J/item with a NaN interval,
/// and a sample at 2⁶⁴ − 1 ns a 584-year window with only a `gap` warning: each file is
/// now a finding of its own and set aside by the report, which names it.
#[test]
fn telemetry_outside_physical_bounds_is_found_and_set_aside() {
    let (_dir, sub, targets) = with_telemetry();
    let vae = sub.join("output0/telemetry/vae.0.jsonl");
    let text = std::fs::read_to_string(&vae).unwrap();
    assert!(text.contains("\"resolution_uj\":1.0"));
    std::fs::write(
        &vae,
        text.replace("\"resolution_uj\":1.0", "\"resolution_uj\":1e308"),
    )
    .unwrap();
    let convnet = sub.join("output1/telemetry/convnet.1.jsonl");
    let mut text = std::fs::read_to_string(&convnet).unwrap();
    text.push_str(&format!(
        "{{\"type\":\"sample\",\"t_ns\":{},\"device\":0,\"power_mw\":1000.0}}\n",
        u64::MAX
    ));
    std::fs::write(&convnet, text).unwrap();
    let after = energy_outputs(&sub, &targets, 120);
    let json: serde_json::Value = serde_json::from_str(&after[0].1).unwrap();
    let has = |rule: &str, file: &str| {
        (json["findings"].as_array().unwrap().iter())
            .any(|f| f["rule"] == rule && f["file"] == file)
    };
    assert!(
        has(
            "telemetry.counter-resolution",
            "output0/telemetry/vae.0.jsonl"
        ),
        "{json:#}"
    );
    assert!(
        has("telemetry.time-range", "output1/telemetry/convnet.1.jsonl"),
        "{json:#}"
    );
    let report = &after[1].1;
    for file in [
        "output0/telemetry/vae.0.jsonl",
        "output1/telemetry/convnet.1.jsonl",
    ] {
        assert!(
            report.contains(&format!("{file}: ")) && report.contains("set aside"),
            "{report}"
        );
    }
    // The other copies keep their figures: convnet's copy 0 of run 0 draws 200 W over
    // its 10 s window, 2,000 J.
    let doc: serde_json::Value = serde_json::from_str(report).unwrap();
    let copies = doc["energy"]["copies"].as_array().unwrap();
    // Neither file gives a figure; every figure given is a finite number (JSON has no
    // other kind: a non-finite one would be `null`).
    for c in copies {
        assert!(c["telemetry"] != "output0/telemetry/vae.0.jsonl", "{c:#}");
        assert!(
            c["telemetry"] != "output1/telemetry/convnet.1.jsonl",
            "{c:#}"
        );
        assert!(c["joules_per_item"].is_f64(), "{c:#}");
    }
    let first = copies
        .iter()
        .find(|c| c["bench"] == "convnet" && c["run"] == "output0" && c["copy"] == 0)
        .unwrap();
    let joules = first["joules"].as_f64().unwrap();
    assert!((joules - 2000.0).abs() < 1e-6, "{first:#}");
}

// ---------------------------------------------------------------------------------------
// Hostile telemetry folders: a FIFO named as a telemetry file, and links in a telemetry
// folder to a FIFO, to /dev/zero and to a file outside the submission. Energy (`report`,
// `grid --per joule`), the page's power traces (`report --html`), `plot power` and
// `validate` open only the regular files within the submission (the validator's intake
// lists them): each command ends in bounded time with 0, 1 or 2, names the file in a
// finding or a note, and reads nothing outside.
// ---------------------------------------------------------------------------------------

/// [`energy_outputs`] of `sub` (validate, report, plot power, grid per joule), then
/// `report --html` of it: each one's exit code, standard output and standard error, each
/// command within 60 s.
fn telemetry_outputs(sub: &Path, targets: &Path) -> Vec<(Option<i32>, String, String)> {
    let mut outputs = energy_outputs(sub, targets, 60);
    let page = sub.parent().unwrap().join("p.html");
    let s = sub.as_os_str();
    let html = guarded(
        &[
            "report".as_ref(),
            s,
            "-g".as_ref(),
            "RTX".as_ref(),
            "--targets".as_ref(),
            targets.as_os_str(),
            "--html".as_ref(),
            page.as_os_str(),
            "--force".as_ref(),
        ],
        60,
    );
    assert!(matches!(code(&html), Some(0..=2)), "{}", stderr(&html));
    assert!(page.is_file(), "{}", stderr(&html));
    outputs.push((code(&html), stdout(&html), stderr(&html)));
    outputs
}

/// The files `validate -f json` names under `rule`.
fn files_found(validate_json: &str, rule: &str) -> Vec<String> {
    let json: serde_json::Value = serde_json::from_str(validate_json).unwrap();
    (json["findings"].as_array().unwrap().iter())
        .filter(|f| f["rule"] == rule)
        .filter_map(|f| f["file"].as_str().map(str::to_owned))
        .collect()
}

/// The telemetry files of the report's energy copies (`report -f json`).
fn copies_read(report_json: &str) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_str(report_json).unwrap();
    (doc["energy"]["copies"].as_array().unwrap().iter())
        .map(|c| c["telemetry"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_fifo_as_a_telemetry_file_is_named_and_never_opened() {
    let (_dir, sub, targets) = with_telemetry();
    let before = energy_outputs(&sub, &targets, 60);
    let fifo = "output0/telemetry/x.0.jsonl";
    if !mkfifo(&sub.join(fifo)) {
        return;
    }
    let after = telemetry_outputs(&sub, &targets);
    let [validate, report, plot, grid, html] = after.as_slice() else {
        panic!("five commands")
    };
    assert_eq!(validate.0, Some(1), "{}", validate.2);
    assert!(
        files_found(&validate.1, "file.unreadable").contains(&fifo.to_owned()),
        "{}",
        validate.1
    );
    // The report's energy says what was not read, and keeps every figure.
    assert_eq!(report.0, Some(0), "{}", report.2);
    let note = format!("{fifo}: not read: a FIFO (expected a regular file)");
    assert!(report.1.contains(&note), "{}", report.1);
    assert_eq!(copies_read(&report.1), copies_read(&before[1].1));
    // The grid refuses a submission holding a FIFO (a container error, as anywhere in
    // it), naming it.
    assert_eq!(grid.0, Some(2), "{}", grid.2);
    assert!(grid.2.contains(&format!("{fifo}: a FIFO")), "{}", grid.2);
    // plot power warns, naming it, and draws the rest.
    assert_eq!(plot.0, Some(0), "{}", plot.2);
    let warned = format!("{}: not read: a FIFO", sub.join(fifo).display());
    assert!(plot.2.contains(&warned), "{}", plot.2);
    assert!(plot.2.contains("output0 convnet: cuda:0"), "{}", plot.2);
    // The page keeps its power traces.
    assert_eq!(html.0, Some(0), "{}", html.2);
    assert!(!html.2.contains("no power traces"), "{}", html.2);
}

#[test]
fn links_in_a_telemetry_folder_are_named_and_never_followed() {
    let (dir, sub, targets) = with_telemetry();
    let tel = sub.join("output0/telemetry");
    // Outside the submission: a FIFO no one writes to, and the file of a paired copy
    // (`vae.0.jsonl`, moved out and linked to): followed, it would give that copy its figure
    // and its line.
    let fifo = dir.path().join("outside.fifo");
    let fifo_made = mkfifo(&fifo);
    let outside = dir.path().join("outside.jsonl");
    std::fs::rename(tel.join("vae.0.jsonl"), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, tel.join("vae.0.jsonl")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", tel.join("zero.0.jsonl")).unwrap();
    let mut links = vec![
        "output0/telemetry/vae.0.jsonl",
        "output0/telemetry/zero.0.jsonl",
    ];
    if fifo_made {
        std::os::unix::fs::symlink(&fifo, tel.join("fifo.0.jsonl")).unwrap();
        links.push("output0/telemetry/fifo.0.jsonl");
    }
    let after = telemetry_outputs(&sub, &targets);
    let [validate, report, plot, grid, html] = after.as_slice() else {
        panic!("five commands")
    };
    assert_eq!(validate.0, Some(1), "{}", validate.2);
    let symlinks = files_found(&validate.1, "file.symlink");
    for link in &links {
        assert!(
            symlinks.contains(&link.to_string()),
            "{link}: {}",
            validate.1
        );
        let note = format!("{link}: not read: a symbolic link");
        assert!(report.1.contains(&note), "{note}: {}", report.1);
        assert!(grid.1.contains(&note), "{note}: {}", grid.1);
        let warned = format!("{}: not read: a symbolic link", sub.join(link).display());
        assert!(plot.2.contains(&warned), "{warned}: {}", plot.2);
    }
    // Nothing outside was read: no figure of the moved copy, no line of its device; its
    // neighbour keeps both.
    assert_eq!(report.0, Some(0), "{}", report.2);
    let read = copies_read(&report.1);
    assert!(!read.contains(&links[0].to_string()), "{read:?}");
    assert!(
        read.contains(&"output0/telemetry/vae.1.jsonl".to_string()),
        "{read:?}"
    );
    assert_eq!(grid.0, Some(0), "{}", grid.2);
    assert_eq!(plot.0, Some(0), "{}", plot.2);
    assert!(!plot.2.contains("output0 vae: cuda:0 (nvml)"), "{}", plot.2);
    assert!(plot.2.contains("output0 vae: cuda:1 (nvml)"), "{}", plot.2);
    assert_eq!(html.0, Some(0), "{}", html.2);
    assert!(!html.2.contains("no power traces"), "{}", html.2);
}

// ---------------------------------------------------------------------------------------
// Hostile numbers and names: a throughput of 1e308, 1e309 or -Infinity, timings of zero, a
// bench name of 2 MB or one holding `/`, an output that is the input or lies inside it, a
// legal 255-byte output name. Each ends cleanly (0, 1 or 2), in bounded time, naming the
// file (and entry and field); no input is changed; a long name is drawn shortened and
// kept whole in the data; a name never becomes a path of its own.
// ---------------------------------------------------------------------------------------

/// The example's streams with every `toy_reg` renamed `name` (its text replaced).
fn example_with_toy_reg_named(name: &str) -> tempfile::TempDir {
    let sub = copy_example();
    let quoted = serde_json::to_string(name).unwrap();
    for run in 0..5 {
        for gpu in 0..2 {
            let path = sub.path().join(format!("output{run}/fast_{gpu}.json"));
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(text.contains("\"name\": \"toy_reg\""), "{}", path.display());
            let renamed = text.replace("\"name\": \"toy_reg\"", &format!("\"name\": {quoted}"));
            std::fs::write(&path, renamed).unwrap();
        }
    }
    sub
}

/// Every file under `dir` (recursively) with its bytes, to tell that nothing changed.
fn every_file(dir: &Path) -> Vec<(String, Vec<u8>)> {
    crate::fixtures::folder_files(dir)
}

/// The index of `bench`'s entry in the stream at `path`.
fn entry_of(path: &Path, bench: &str) -> usize {
    crate::fixtures::read_entries(path)
        .iter()
        .position(|e| e.name() == Some(bench))
        .unwrap_or_else(|| panic!("no {bench} in {}", path.display()))
}

/// `report`, `plot report` and `plot loss` of a 2 MB bench name took over a minute
/// (100 KB: 53 s, then exit 3): the name is drawn shortened (80 characters, an ellipsis
/// in the middle), its chart file named by a safe name of bounded length, and the data
/// keep it whole.
#[test]
fn a_bench_name_of_two_megabytes_is_drawn_shortened_in_bounded_time() {
    let name = format!("toy_reg_{}_end", "x".repeat(2 << 20));
    let sub = example_with_toy_reg_named(&name);
    let before = every_file(sub.path());
    let out = tempfile::tempdir().unwrap();
    let s = sub.path().as_os_str();
    let shown = mlbench_plots::shortened(&name).into_owned();
    assert!(shown.starts_with("toy_reg_xxx") && shown.ends_with("xxx_end"));
    let report_dir = out.path().join("report");
    let loss_dir = out.path().join("loss");
    let page = out.path().join("page.html");
    let rtx = ["-g".as_ref(), "RTX".as_ref()];
    let runs = [
        (
            "plot report",
            [
                &["plot".as_ref(), "report".as_ref(), s][..],
                &rtx,
                &["--out-dir".as_ref(), report_dir.as_os_str()],
            ]
            .concat(),
        ),
        (
            "plot loss",
            vec![
                "plot".as_ref(),
                "loss".as_ref(),
                s,
                "--out-dir".as_ref(),
                loss_dir.as_os_str(),
            ],
        ),
        (
            "report --html",
            [
                &["report".as_ref(), s][..],
                &rtx,
                &["--html".as_ref(), page.as_os_str()],
            ]
            .concat(),
        ),
    ];
    for (what, args) in &runs {
        let a = guarded(args, 60);
        assert_eq!(code(&a), Some(0), "{what}: {}", stderr(&a));
    }
    // Every chart shows the shortened name and never the whole one.
    let long_run = "x".repeat(1000);
    let mut drawn = 0;
    for dir in [&report_dir, &loss_dir] {
        for file in crate::fixtures::names_in(dir) {
            assert!(file.len() <= 255, "{file}");
            let path = dir.join(&file);
            if file.ends_with(".svg") {
                let svg = std::fs::read_to_string(&path).unwrap();
                assert!(!svg.contains(&long_run), "{file}");
                // Set whole, or fitted further to a narrow column: its head and an ellipsis.
                drawn += usize::from(svg.contains("toy_reg_xxxx") && svg.contains('…'));
            }
        }
    }
    assert!(
        drawn >= 2,
        "the heatmap, the runs and the loss chart name it"
    );
    let loss_files = crate::fixtures::names_in(&loss_dir);
    assert!(
        loss_files
            .iter()
            .any(|f| f.contains("-toy_reg_xxx") && f.ends_with(".svg")),
        "{loss_files:?}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(&shown[..40]));
    // The data keep the name whole.
    let json = guarded(
        &[
            &["report".as_ref(), s][..],
            &rtx,
            &["-f".as_ref(), "json".as_ref()],
        ]
        .concat(),
        60,
    );
    assert_eq!(code(&json), Some(0), "{}", stderr(&json));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let benches = doc["benches"].as_array().unwrap();
    assert!(benches.iter().any(|b| b["bench"] == name.as_str()));
    assert_eq!(
        every_file(sub.path()),
        before,
        "the submission is unchanged"
    );
}

/// A bench name holding `/` became part of `plot loss`'s output path: its chart is now
/// written in the folder asked for, under a safe name with a hash of the real one.
#[test]
fn a_bench_name_holding_a_slash_never_becomes_a_path() {
    let sub = example_with_toy_reg_named("../../escape/toy");
    let out = tempfile::tempdir().unwrap();
    let plots = out.path().join("deep/plots");
    std::fs::create_dir_all(&plots).unwrap();
    let a = guarded(
        &[
            "plot".as_ref(),
            "loss".as_ref(),
            sub.path().as_os_str(),
            "--out-dir".as_ref(),
            plots.as_os_str(),
        ],
        60,
    );
    assert_eq!(code(&a), Some(0), "{}", stderr(&a));
    for file in crate::fixtures::names_in(&plots) {
        assert!(plots.join(&file).is_file(), "{file}");
    }
    let names = crate::fixtures::names_in(&plots);
    let escaped: Vec<&String> = names
        .iter()
        .filter(|f| f.contains("-.._.._escape_toy-"))
        .collect();
    assert_eq!(escaped.len(), 2, "its PNG and SVG: {names:?}");
    assert_eq!(crate::fixtures::names_in(out.path()), ["deep"]);
    assert_eq!(
        crate::fixtures::names_in(&out.path().join("deep")),
        ["plots"]
    );
}

/// `-o` onto the zip read, or onto a stream inside the folder read, destroyed the input
/// even so; `--html` and `--out-dir` inside it wrote into the submission. Each is refused
/// before the work (exit 2, naming both), with or without `--force`.
#[test]
fn an_output_that_is_an_input_or_inside_one_is_refused_even_with_force() {
    let sub = copy_example();
    let dir = tempfile::tempdir().unwrap();
    let zip = dir.path().join("a.zip");
    crate::fixtures::write_zip(
        &zip,
        &crate::fixtures::folder_files(sub.path()),
        zip::CompressionMethod::Deflated,
    );
    let zip_bytes = std::fs::read(&zip).unwrap();
    let before = every_file(sub.path());
    let stream = sub.path().join("output0/fast_0.json");
    let rtx = ["-g".as_ref(), "RTX".as_ref(), "--force".as_ref()];
    let o = |p: &Path| vec![std::ffi::OsString::from("-o"), p.as_os_str().to_owned()];
    let cases: Vec<(Vec<std::ffi::OsString>, String)> = vec![
        (
            [vec!["report".into(), zip.clone().into_os_string()], o(&zip)].concat(),
            format!("{}: is the input {}", zip.display(), zip.display()),
        ),
        (
            [vec!["report".into(), sub.path().into()], o(&stream)].concat(),
            format!(
                "{}: lies inside the input {}",
                stream.display(),
                sub.path().display()
            ),
        ),
        (
            vec![
                "report".into(),
                sub.path().into(),
                "--html".into(),
                sub.path().join("page.html").into(),
            ],
            "lies inside the input".into(),
        ),
        (
            vec![
                "plot".into(),
                "report".into(),
                sub.path().into(),
                "--out-dir".into(),
                sub.path().join("plots").into(),
            ],
            "lies inside the input".into(),
        ),
        (
            [
                vec!["validate".into(), zip.clone().into_os_string()],
                o(&zip),
            ]
            .concat(),
            "is the input".into(),
        ),
    ];
    for (args, said) in &cases {
        let mut args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        args.extend(
            rtx.iter()
                .skip(if args[0] == std::ffi::OsStr::new("validate") {
                    2
                } else {
                    0
                }),
        );
        let a = guarded(&args, 60);
        assert_eq!(code(&a), Some(2), "{args:?}: {}", stderr(&a));
        assert!(
            stderr(&a).contains(said.as_str()),
            "{args:?}: {}",
            stderr(&a)
        );
        assert!(
            stderr(&a).contains("mlbench never writes over what it reads, even with --force"),
            "{}",
            stderr(&a)
        );
    }
    assert_eq!(std::fs::read(&zip).unwrap(), zip_bytes);
    assert_eq!(every_file(sub.path()), before);
    // Beside the input: written as ever.
    let beside = dir.path().join("report.txt");
    let a = guarded(
        &[
            &[
                "report".as_ref(),
                zip.as_os_str(),
                "-o".as_ref(),
                beside.as_os_str(),
            ][..],
            &rtx,
        ]
        .concat(),
        60,
    );
    assert_eq!(code(&a), Some(0), "{}", stderr(&a));
    assert!(beside.is_file());
}

/// A legal file name of 255 bytes failed with `File name too long`: the temporary file
/// beside it had a longer name. It is now `.mlbench-XXXXXXXX.tmp`.
#[test]
fn an_output_name_of_255_bytes_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("{}.json", "r".repeat(250));
    assert_eq!(name.len(), 255);
    let path = dir.path().join(&name);
    let a = guarded(
        &[
            "report".as_ref(),
            crate::fixtures::example_dir().as_os_str(),
            "-g".as_ref(),
            "RTX".as_ref(),
            "-f".as_ref(),
            "json".as_ref(),
            "-o".as_ref(),
            path.as_os_str(),
        ],
        60,
    );
    assert_eq!(code(&a), Some(0), "{}", stderr(&a));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(doc["runs"], 5);
    assert_eq!(crate::fixtures::names_in(dir.path()), [name]);
}

/// `train_item.avg = 1e308` in one entry gave toy_reg a result of −123,897 with an
/// infinite sd and exit 0. The entry is now unreadable, named with its field and bench
/// (exit 2); set aside with --skip-unreadable, toy_reg's result is the trimmed mean of
/// the other entries; `validate` finds it.
#[test]
fn a_throughput_of_1e308_is_an_unreadable_entry_named() {
    use crate::fixtures::{edit_entry, edit_object, number, read_entries};
    let sub = copy_example();
    let stream = sub.path().join("output0/fast_0.json");
    let index = entry_of(&stream, "toy_reg");
    edit_entry(&stream, index, |o| {
        edit_object(o, "train_item", |item| item.insert("avg", 1e308))
    });
    let s = sub.path().as_os_str();
    let report = |extra: &[&str]| {
        let mut args: Vec<&std::ffi::OsStr> =
            vec!["report".as_ref(), s, "-g".as_ref(), "RTX".as_ref()];
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        guarded(&args, 60)
    };
    let said = format!(
        "output0/fast_0.json: entry {index}: field `train_item.avg`: bench `toy_reg`: train_item.avg 1e308 is not a measurement: over the limit of 1e12"
    );
    let refused = report(&[]);
    assert_eq!(code(&refused), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains(&format!("error: {said}")),
        "{}",
        stderr(&refused)
    );
    let skipped = report(&["--skip-unreadable", "-f", "json"]);
    assert_eq!(code(&skipped), Some(0), "{}", stderr(&skipped));
    assert!(
        stderr(&skipped).contains(&format!("warning: {said}")),
        "{}",
        stderr(&skipped)
    );
    // toy_reg's per-run means over the GPUs, run 0's of GPU 1 alone: the mean of the
    // middle three.
    let mut means = Vec::new();
    for run in 0..5 {
        let values: Vec<f64> = (0..2)
            .filter(|gpu| (run, *gpu) != (0, 0))
            .flat_map(|gpu| read_entries(&sub.path().join(format!("output{run}/fast_{gpu}.json"))))
            .filter(|e| e.name() == Some("toy_reg") && e.train_item_avg().is_some_and(|v| v < 1e12))
            .map(|e| number(&e.fields, "train_item", "avg"))
            .collect();
        assert!(!values.is_empty());
        means.push(values.iter().sum::<f64>() / values.len() as f64);
    }
    let (lo, hi) = means
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), m| (a.min(*m), b.max(*m)));
    let expected = (means.iter().sum::<f64>() - lo - hi) / 3.0;
    let doc: serde_json::Value = serde_json::from_str(&stdout(&skipped)).unwrap();
    let toy = doc["benches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["bench"] == "toy_reg")
        .unwrap();
    let result = toy["result"].as_f64().unwrap();
    assert!(
        crate::fixtures::close(result, expected),
        "{result} against {expected}"
    );
    assert!(toy["sd"].as_f64().unwrap().is_finite(), "{toy}");
    let (code_v, json) = crate::fixtures::validate_json(sub.path(), &[]);
    assert_eq!(code_v, 1);
    let f = crate::fixtures::finding(
        &json,
        "work.not-a-measurement",
        Some("output0/fast_0.json"),
        Some(index as u64),
    );
    assert_eq!(f["field"], "train_item.avg");
    assert_eq!(f["severity"], "error");
}

/// A throughput of `1e309` (Infinity as Python reads it) or `-Infinity` ended the HTML
/// page and `plot report` with exit 3, "heatmap … NaN", no file named: now exit 2 naming
/// the file, the entry and the field, before anything is drawn.
#[test]
fn an_infinite_throughput_is_named_not_drawn() {
    use crate::fixtures::{edit_entry, edit_object};
    for literal in ["1e309", "-Infinity"] {
        let sub = copy_example();
        let stream = sub.path().join("output1/fast_1.json");
        let index = entry_of(&stream, "toy_lstm");
        // A marker figure, then its text replaced by the literal.
        edit_entry(&stream, index, |o| {
            edit_object(o, "train_item", |item| item.insert("avg", 123456.789))
        });
        let text = std::fs::read_to_string(&stream).unwrap();
        assert_eq!(text.matches("123456.789").count(), 1);
        std::fs::write(&stream, text.replace("123456.789", literal)).unwrap();
        let before = every_file(sub.path());
        let out = tempfile::tempdir().unwrap();
        let page = out.path().join("page.html");
        let plots = out.path().join("plots");
        let s = sub.path().as_os_str();
        let rtx = ["-g".as_ref(), "RTX".as_ref()];
        for args in [
            [
                &["report".as_ref(), s][..],
                &rtx,
                &["--html".as_ref(), page.as_os_str()],
            ]
            .concat(),
            [
                &["plot".as_ref(), "report".as_ref(), s][..],
                &rtx,
                &["--out-dir".as_ref(), plots.as_os_str()],
            ]
            .concat(),
        ] {
            let a = guarded(&args, 60);
            assert_eq!(code(&a), Some(2), "{literal} {args:?}: {}", stderr(&a));
            let err = stderr(&a);
            assert!(
                err.contains(&format!("output1/fast_1.json: entry {index}: field `train_item.avg`: bench `toy_lstm`: train_item.avg")),
                "{literal}: {err}"
            );
            assert!(!err.contains("NaN"), "{err}");
        }
        assert!(!page.exists());
        assert!(!plots.exists() || crate::fixtures::names_in(&plots).is_empty());
        assert_eq!(every_file(sub.path()), before);
    }
}

/// `train.avg = min = max = 0` passed `validate` without a word: a stage that measured
/// nothing is `work.not-a-measurement`. Scaling's empty stage is not (a test of
/// `layouts.rs` validates what scaling writes).
#[test]
fn timings_of_zero_are_not_a_measurement() {
    use crate::fixtures::{edit_entry, edit_object};
    let sub = copy_example();
    let stream = sub.path().join("output2/fast_0.json");
    let index = entry_of(&stream, "vae");
    edit_entry(&stream, index, |o| {
        edit_object(o, "train", |t| {
            for key in ["avg", "min", "max"] {
                t.insert(key, 0.0);
            }
        })
    });
    let (code_v, json) = crate::fixtures::validate_json(sub.path(), &[]);
    assert_eq!(code_v, 1, "{json:#}");
    let f = crate::fixtures::finding(
        &json,
        "work.not-a-measurement",
        Some("output2/fast_0.json"),
        Some(index as u64),
    );
    assert_eq!(f["field"], "train.avg");
    assert!(f["found"].as_str().unwrap().contains("bench `vae`"), "{f}");
    let rules: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["work.not-a-measurement"], "{json:#}");
}

// ---------------------------------------------------------------------------------------
// Hostile folders behind a page: FIFOs anywhere in the folder, links out of it (to a FIFO,
// /dev/stdin, /etc/passwd, /dev/zero, /proc/self), dangling and looping links, a sparse
// log of 3 GiB under a 4 GiB address space. A page's validation and its provenance come
// from the submission's one listing: only regular files inside it are opened, what is not
// one is named on the page (`not read: …`) in place of a digest, a large file is hashed
// as a stream; every command ends in bounded time and changes nothing of its input.
// ---------------------------------------------------------------------------------------

/// What a folder holds, without opening or following anything: each entry's relative
/// path with its kind and, for a file, its length.
fn tree_state(root: &Path) -> Vec<(String, String)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let t = meta.file_type();
            if t.is_dir() {
                walk(root, &path, out);
                continue;
            }
            let kind = if t.is_file() {
                format!("file of {} bytes", meta.len())
            } else if t.is_symlink() {
                format!("link to {}", std::fs::read_link(&path).unwrap().display())
            } else {
                "special".to_owned()
            };
            out.push((rel, kind));
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// A page's run: the command, how it ended, and the page when one was written.
struct PageRun {
    command: String,
    assert: assert_cmd::assert::Assert,
    page: Option<String>,
}

/// `report SUB --html` (with `extra` arguments) and `grid SUB T --html`, T a copy of the
/// example, each under a 60 s guard; `sub` is left as it was.
fn page_runs(sub: &Path, extra: &[&str]) -> Vec<PageRun> {
    let other = copy_example();
    let out = tempfile::tempdir().unwrap();
    let before = tree_state(sub);
    let (s, t) = (sub.as_os_str(), other.path().as_os_str());
    let mut runs = Vec::new();
    let report_page = out.path().join("report.html");
    let mut report: Vec<&std::ffi::OsStr> = vec!["report".as_ref(), s, "-g".as_ref()];
    report.extend(["RTX".as_ref(), "--html".as_ref(), report_page.as_os_str()]);
    report.extend(extra.iter().map(std::ffi::OsStr::new));
    let grid_page = out.path().join("grid.html");
    let grid: Vec<&std::ffi::OsStr> = vec![
        "grid".as_ref(),
        s,
        t,
        "--resamples".as_ref(),
        "10".as_ref(),
        "--html".as_ref(),
        grid_page.as_os_str(),
    ];
    for (args, page) in [(report, &report_page), (grid, &grid_page)] {
        let assert = guarded(&args, 60);
        let command = format!("{} {}", args[0].to_string_lossy(), extra.join(" "));
        let page = std::fs::read_to_string(page).ok();
        runs.push(PageRun {
            command,
            assert,
            page,
        });
    }
    assert_eq!(tree_state(sub), before, "the submission changed");
    runs
}

/// The row of the page's provenance that names `rel` under `sub`, when there is one.
fn provenance_row<'p>(page: &'p str, sub: &Path, rel: &str) -> Option<&'p str> {
    let name = sub.join(rel).display().to_string();
    let at = page.find(&format!("<td>{name}</td>"))?;
    let end = page[at..].find("</tr>").map_or(page.len(), |e| at + e);
    Some(&page[at..end])
}

/// A FIFO anywhere in the folder (a stray `extra.json`, a `system.json`) was opened to be
/// hashed for the page's provenance and hung every page (`grid --html` forever). It is
/// named on the page, never opened; `report` makes its page (exit 0, with or without
/// `--skip-unreadable`), `grid` refuses the submission whose file cannot be read (exit 2,
/// the file named), as it refuses it without a page.
#[test]
fn a_fifo_anywhere_in_the_folder_is_named_on_the_page_never_opened() {
    for name in ["extra.json", "system.json"] {
        let sub = copy_example();
        if !mkfifo(&sub.path().join(name)) {
            return;
        }
        for extra in [&[][..], &["--skip-unreadable"][..]] {
            for run in page_runs(sub.path(), extra) {
                let (command, a) = (&run.command, &run.assert);
                if command.starts_with("grid") {
                    assert_eq!(code(a), Some(2), "{command}: {}", stderr(a));
                    assert!(stderr(a).contains(name), "{command}: {}", stderr(a));
                    assert!(run.page.is_none(), "{command}");
                    continue;
                }
                assert_eq!(code(a), Some(0), "{command} ({name}): {}", stderr(a));
                let page = run.page.as_deref().expect("a page");
                let row = provenance_row(page, sub.path(), name).expect("the FIFO named");
                assert!(row.contains("not read: a FIFO"), "{row}");
            }
        }
    }
}

/// The SHA-256 of the file at `path`, computed here.
fn sha256_of(path: &Path) -> String {
    use sha2::Digest;
    let bytes = std::fs::read(path).unwrap();
    sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Links out of the submission were followed to be hashed: one to a FIFO outside, or to
/// `/dev/stdin`, hung the page; one to `/dev/zero` read until memory ran out; one to
/// `/etc/passwd` put that file's SHA-256 on the page. Each is named as a link, never
/// followed, and both pages are made.
#[test]
fn links_out_of_the_submission_are_named_on_the_page_never_followed() {
    let outside = tempfile::tempdir().unwrap();
    let fifo = outside.path().join("fifo");
    if !mkfifo(&fifo) {
        return;
    }
    let sub = copy_example();
    let links: [(&str, &Path); 4] = [
        ("fifo.json", &fifo),
        ("stdin.json", Path::new("/dev/stdin")),
        ("output0/passwd", Path::new("/etc/passwd")),
        ("zero.log", Path::new("/dev/zero")),
    ];
    for (rel, target) in links {
        std::os::unix::fs::symlink(target, sub.path().join(rel)).unwrap();
    }
    let passwd = sha256_of(Path::new("/etc/passwd"));
    for run in page_runs(sub.path(), &["--skip-unreadable"]) {
        let (command, a) = (&run.command, &run.assert);
        assert_eq!(code(a), Some(0), "{command}: {}", stderr(a));
        let page = run.page.as_deref().expect("a page");
        assert!(
            !page.contains(&passwd),
            "{command}: /etc/passwd's digest on the page"
        );
        for (rel, _) in links {
            let row = provenance_row(page, sub.path(), rel).expect("the link named");
            assert!(row.contains("not read: a symbolic link"), "{row}");
        }
    }
}

/// A dangling link refused the page over a file that `report` and `validate` pass over,
/// `loop -> ..` over a loop the walk never takes, and a link to `/proc/self` took the
/// digests' walk into `/proc`. The page is made, each link named, nothing of `/proc` on it.
#[test]
fn dangling_looping_and_proc_links_leave_the_page_whole() {
    let sub = copy_example();
    let links = [
        ("gone.json", "nowhere/at/all"),
        ("loop", ".."),
        ("proc", "/proc/self"),
    ];
    for (rel, target) in links {
        std::os::unix::fs::symlink(target, sub.path().join(rel)).unwrap();
    }
    for run in page_runs(sub.path(), &[]) {
        let (command, a) = (&run.command, &run.assert);
        assert_eq!(code(a), Some(0), "{command}: {}", stderr(a));
        let page = run.page.as_deref().expect("a page");
        for (rel, _) in links {
            let row = provenance_row(page, sub.path(), rel).expect("the link named");
            assert!(row.contains("not read: a symbolic link"), "{row}");
        }
        let proc_entry = sub.path().join("proc/status").display().to_string();
        assert!(
            !page.contains(&proc_entry),
            "{command}: the walk went into /proc"
        );
    }
}

/// A sparse 3 GiB log beside the reports was read whole (for the page's checks, for the
/// grid's intake and for the digest): under a 4 GiB address space that aborted (SIGABRT).
/// It is validated and hashed as a stream, never held: both pages are made and give its
/// SHA-256 (3 GiB of zeros, hashed here).
#[test]
fn a_sparse_three_gigabyte_log_is_streamed_under_a_four_gigabyte_address_space() {
    if !std::process::Command::new("prlimit")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("no prlimit here: skipped");
        return;
    }
    let sub = copy_example();
    let big = sub.path().join("output0/big.log");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let zeros = {
        use sha2::Digest;
        let mut hasher = sha2::Sha256::new();
        let chunk = vec![0u8; 1 << 20];
        for _ in 0..3 << 10 {
            hasher.update(&chunk);
        }
        let digest: String = (hasher.finalize().iter())
            .map(|b| format!("{b:02x}"))
            .collect();
        digest
    };
    let out = tempfile::tempdir().unwrap();
    let other = copy_example();
    let bin = assert_cmd::cargo::cargo_bin("mlbench");
    let page = out.path().join("page.html");
    let s = sub.path().as_os_str();
    let report: Vec<&std::ffi::OsStr> = vec!["report".as_ref(), s, "-g".as_ref(), "RTX".as_ref()];
    let grid: Vec<&std::ffi::OsStr> = vec![
        "grid".as_ref(),
        s,
        other.path().as_os_str(),
        "--resamples".as_ref(),
        "10".as_ref(),
    ];
    for args in [report, grid] {
        let _ = std::fs::remove_file(&page);
        let a = crate::fixtures::quiet(assert_cmd::Command::new("prlimit"))
            .arg("--as=4294967296")
            .arg(&bin)
            .args(&args)
            .arg("--html")
            .arg(&page)
            .timeout(Duration::from_secs(60))
            .assert();
        let command = args[0].to_string_lossy().to_string();
        assert_eq!(code(&a), Some(0), "{command}: {}", stderr(&a));
        let page = std::fs::read_to_string(&page).unwrap();
        let row = provenance_row(&page, sub.path(), "output0/big.log").expect("big.log named");
        assert!(row.contains(&zeros), "{command}: {row}");
    }
}
