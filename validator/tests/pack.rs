//! Deterministic packing, and the pack manifest of a packed zip read back through the
//! zip intake.

mod common;

use common::{paths, read, rules};
use mlbench_validator::SubmittedFile;
use mlbench_validator::pack;
use mlbench_validator::rules::manifest::check_manifest;
use mlbench_validator::submission::{self, MANIFEST_NAME, SUBMISSION_NAME};
use std::io::Cursor;

fn file(path: &str, bytes: &[u8]) -> SubmittedFile {
    SubmittedFile {
        path: path.into(),
        bytes: bytes.to_vec(),
    }
}

fn sample_files() -> Vec<SubmittedFile> {
    vec![
        file("run1/train_0.json", b"{\"loss\": 1.5}\n"),
        file("run1/train_1.json", b"{\"loss\": 1.25}\n"),
        file("train.json", b"[]"),
        file("notes/empty.txt", b""),
    ]
}

fn packed(files: &[SubmittedFile]) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    pack::write_zip(files, &mut out).unwrap();
    out.into_inner()
}

#[test]
fn packing_twice_is_byte_identical() {
    let files = submission::with_manifest(sample_files(), b"{\"vendor\": \"x\"}".to_vec());
    let first = packed(&files);
    let mut reversed = files.clone();
    reversed.reverse();
    assert_eq!(first, packed(&files));
    assert_eq!(first, packed(&reversed));
}

#[test]
fn packed_zip_reads_back_the_same_files() {
    let files = submission::with_manifest(sample_files(), b"{}".to_vec());
    let intake = read(&packed(&files));
    assert!(intake.facts.is_empty(), "{:?}", intake.facts);
    let read: Vec<(&str, &[u8])> = intake
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.bytes.as_slice()))
        .collect();
    let written: Vec<(&str, &[u8])> = files
        .iter()
        .map(|f| (f.path.as_str(), f.bytes.as_slice()))
        .collect();
    assert_eq!(read, written);
    assert_eq!(paths(&intake)[..2], [MANIFEST_NAME, SUBMISSION_NAME]);
}

#[test]
fn manifest_of_a_packed_zip_catches_changes() {
    let files = submission::with_manifest(sample_files(), b"{}".to_vec());
    let check = |files: &[SubmittedFile]| check_manifest(&read(&packed(files)).files);
    assert!(check(&files).is_empty());

    let mut changed = files.clone();
    let target = changed
        .iter_mut()
        .find(|f| f.path == "run1/train_0.json")
        .unwrap();
    target.bytes[3] ^= 1;
    assert_eq!(
        rules(&check(&changed)),
        [("manifest.mismatch", Some("run1/train_0.json"))]
    );

    let removed: Vec<_> = files
        .iter()
        .filter(|f| f.path != "train.json")
        .cloned()
        .collect();
    assert_eq!(
        rules(&check(&removed)),
        [("manifest.missing", Some("train.json"))]
    );

    let mut added = files.clone();
    added.push(file("run1/extra.json", b"{}"));
    assert_eq!(
        rules(&check(&added)),
        [("manifest.extra", Some("run1/extra.json"))]
    );
}

/// The shipped example submission copied into a temporary folder (it validates clean).
fn example_copy() -> (tempfile::TempDir, std::path::PathBuf) {
    fn copy(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sub");
    copy(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../submissions/example"),
        &dir,
    );
    (tmp, dir)
}

fn pack_options(allow_errors: bool) -> pack::PackOptions<'static> {
    pack::PackOptions {
        validation: mlbench_validator::Options {
            min_runs: mlbench_validator::DEFAULT_MIN_RUNS,
            track: mlbench_schema::Track::Tweaked,
            ..Default::default()
        },
        limits: Default::default(),
        allow_errors,
        tool: "mlbench test".into(),
    }
}

#[test]
fn submission_info_round_trips_with_its_version_last() {
    let info = submission::SubmissionInfo {
        tool: "mlbench 1.2.3".into(),
        track: mlbench_schema::Track::Tweaked,
        suite: Some("fast".into()),
        jobs_file: None,
        files: 11,
        report_files: 10,
        entries: 175,
        runs: 5,
        gpus: 2,
        benches: 19,
        errors: 0,
        warnings: 1,
        schema_version: submission::SUBMISSION_SCHEMA_VERSION,
        // Without machine descriptions the key is absent: old packs keep their bytes.
        systems: Vec::new(),
        runtime: None,
        // Absent too when no error was allowed.
        allowed_errors: false,
        // And without telemetry files.
        telemetry: Vec::new(),
        profiles: Vec::new(),
        left_out: Vec::new(),
    };
    let json = info.to_json().unwrap();
    let text = std::str::from_utf8(&json).unwrap();
    assert!(text.starts_with("{\n  \"tool\": \"mlbench 1.2.3\",\n  \"track\": \"tweaked\","));
    assert!(text.ends_with("  \"schema_version\": 1\n}\n"), "{text}");
    assert!(text.contains("\"jobs_file\": null"), "{text}");
    assert_eq!(submission::SubmissionInfo::from_json(&json).unwrap(), info);
    assert_eq!(
        submission::SubmissionInfo::of_files(&[file(SUBMISSION_NAME, &json)]),
        Some(info)
    );
    // A file written before the version was added reads as version 0; one without a
    // track, or with an unknown one, does not read.
    let old = submission::SubmissionInfo::from_json(
        br#"{"tool": "mlbench 0.1.0", "track": "baseline", "suite": "fast"}"#,
    )
    .unwrap();
    assert_eq!(
        (old.track, old.schema_version),
        (mlbench_schema::Track::Baseline, 0)
    );
    assert!(submission::SubmissionInfo::from_json(br#"{"suite": "fast"}"#).is_err());
    assert!(submission::SubmissionInfo::from_json(br#"{"track": "fancy"}"#).is_err());
    assert_eq!(
        submission::SubmissionInfo::of_files(&[file("x/SUBMISSION.json", &[])]),
        None
    );
}

#[test]
fn pack_folder_packs_the_example_deterministically() {
    let (tmp, dir) = example_copy();
    let out = tmp.path().join("sub.zip");
    let first = pack::pack_folder(&dir, Some(&out), &pack_options(false)).unwrap();
    assert_eq!(first.validation.errors(), 0);
    assert_eq!(first.files, 13);
    assert_eq!(first.info.track, mlbench_schema::Track::Tweaked);
    assert_eq!(first.info.suite.as_deref(), Some("fast"));
    assert_eq!((first.info.report_files, first.info.entries), (10, 175));
    assert_eq!(first.info.tool, "mlbench test");
    assert_eq!(
        first.describe(),
        "packed 13 files (10 report files, 175 entries)"
    );
    // Nothing is written by the library.
    assert!(!out.exists());
    // A second pack, over the files of the first (manifest included), is the same bytes.
    let intake = read(&first.zip);
    assert!(intake.facts.is_empty(), "{:?}", intake.facts);
    for f in &intake.files {
        let path = dir.join(&f.path);
        std::fs::write(path, &f.bytes).unwrap();
    }
    let second = pack::pack_folder(&dir, None, &pack_options(false)).unwrap();
    assert_eq!(first.zip, second.zip);
    assert_eq!(
        submission::SubmissionInfo::of_files(&intake.files),
        Some(first.info)
    );
}

#[test]
fn pack_folder_refusals() {
    let (tmp, dir) = example_copy();
    // Not a folder.
    let file_path = dir.join("fast.json");
    let err = pack::pack_folder(&file_path, None, &pack_options(true)).unwrap_err();
    assert!(matches!(err, pack::PackError::NotAFolder(_)), "{err}");
    assert!(
        err.to_string()
            .ends_with("fast.json: not a folder (pack takes the submission folder)")
    );
    // The archive inside the folder it packs (even through `..`).
    let inside = dir.join("output0/../packed.zip");
    let err = pack::pack_folder(&dir, Some(&inside), &pack_options(true)).unwrap_err();
    assert!(matches!(err, pack::PackError::InsideFolder(_)), "{err}");
    assert!(
        err.to_string()
            .ends_with("the archive would be inside the folder it packs")
    );
    // A missing folder.
    let err = pack::pack_folder(&tmp.path().join("nope"), None, &pack_options(true)).unwrap_err();
    assert!(matches!(err, pack::PackError::NotAFolder(_)), "{err}");
    // Errors: refused with the validation to show, unless forced.
    std::fs::write(dir.join("output0/fast_0.json"), b"[{\"name\": ").unwrap();
    let err = pack::pack_folder(&dir, None, &pack_options(false)).unwrap_err();
    let pack::PackError::Refused { validation, .. } = &err else {
        panic!("{err}");
    };
    assert!(validation.findings.iter().any(|f| f.rule == "parse.json"));
    assert!(
        err.to_string()
            .ends_with("sub: not packed: the folder has errors"),
        "{err}"
    );
    let forced = pack::pack_folder(&dir, None, &pack_options(true)).unwrap();
    assert!(forced.info.errors > 0);
    assert_eq!(forced.info.errors, forced.validation.errors());
    assert!(forced.info.allowed_errors);
    let json = String::from_utf8(forced.info.to_json().unwrap()).unwrap();
    assert!(json.contains("\"allowed_errors\": true"), "{json}");
    assert_eq!(rules(&read(&forced.zip).facts), []);
    // No report file at all: nothing to pack, errors allowed or not.
    for run in 0..5 {
        std::fs::remove_dir_all(dir.join(format!("output{run}"))).unwrap();
    }
    let empty = pack::pack_folder(&dir, None, &pack_options(true)).unwrap_err();
    let pack::PackError::Refused { validation, .. } = &empty else {
        panic!("{empty}");
    };
    assert!(
        validation.unreadable(),
        "no report file: not packed even with errors allowed"
    );
}

#[test]
fn a_clean_folder_records_no_allowed_errors() {
    let (_tmp, dir) = example_copy();
    let packed = pack::pack_folder(&dir, None, &pack_options(true)).unwrap();
    assert_eq!(packed.info.errors, 0);
    assert!(!packed.info.allowed_errors);
    let json = String::from_utf8(packed.info.to_json().unwrap()).unwrap();
    assert!(!json.contains("allowed_errors"), "{json}");
}
