//! Deterministic packing, and the pack manifest of a packed zip read back through the
//! zip intake.

mod common;

use common::{paths, read, rules};
use mlbench_validator::SubmittedFile;
use mlbench_validator::pack::{self, MANIFEST_NAME, SUBMISSION_NAME};
use mlbench_validator::rules::manifest::check_manifest;
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
    let files = pack::with_manifest(sample_files(), b"{\"vendor\": \"x\"}".to_vec());
    let first = packed(&files);
    let mut reversed = files.clone();
    reversed.reverse();
    assert_eq!(first, packed(&files));
    assert_eq!(first, packed(&reversed));
}

#[test]
fn packed_zip_reads_back_the_same_files() {
    let files = pack::with_manifest(sample_files(), b"{}".to_vec());
    let intake = read(&packed(&files));
    assert!(intake.findings.is_empty(), "{:?}", intake.findings);
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
    let files = pack::with_manifest(sample_files(), b"{}".to_vec());
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
