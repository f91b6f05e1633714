//! Reading the submission: hostile zips, files and layout of a folder, and paths that
//! are no submission at all (exit 2).

use super::raw_zip::{
    RawEntry, crc32, crc32_of_zeros, deflated_zeros, deflated_zeros_diluted, write_raw_zip,
};
use super::{at, check, sole};
use crate::fixtures::{
    Key, copy_example, error, example_dir, finding, folder_files, mlbench, warning, write_zip,
};
use predicates::prelude::*;
use std::path::Path;
use zip::CompressionMethod::{Deflated, Stored};

// ───────────────────────────── 21. hostile zips ─────────────────────────────

/// The example's files plus hostile raw entries, as a hand-written zip.
fn raw_example_zip(path: &Path, extra: Vec<RawEntry>) {
    let mut entries: Vec<RawEntry> = folder_files(&example_dir())
        .iter()
        .map(|(n, b)| RawEntry::stored(n.as_bytes(), b))
        .collect();
    entries.extend(extra);
    write_raw_zip(path, &entries);
}

/// The example's files plus `extra`, zipped (stored) by the `zip` crate.
fn example_with(extra: &[(&str, &[u8])]) -> Vec<(String, Vec<u8>)> {
    let mut files = folder_files(&example_dir());
    files.extend(extra.iter().map(|(n, b)| ((*n).to_owned(), b.to_vec())));
    files
}

#[test]
fn hand_written_zips_are_read_back() {
    // The helpers themselves: CRC of zeros by squaring, the bomb's deflate stream, and a
    // raw zip of the example validating clean.
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    for n in [0, 1, 7, 258, 1000] {
        assert_eq!(crc32_of_zeros(n), crc32(&vec![0; n as usize]), "{n}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("small-bomb.zip");
    let size = 1 + 258 * 100;
    write_raw_zip(
        &path,
        &[RawEntry {
            name: b"zeros".to_vec(),
            data: deflated_zeros(100),
            method: 8,
            crc: crc32_of_zeros(size as u64),
            size,
            flags: 0,
            shares: None,
        }],
    );
    let back = crate::fixtures::read_zip(&path);
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].1, vec![0; size as usize]);

    let path = tmp.path().join("raw.zip");
    raw_example_zip(&path, vec![]);
    check(&path, &[], 0, vec![]);
}

#[test]
fn zip_entry_climbing_out() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("s.zip");
    write_zip(&zip, &example_with(&[("../escape.json", b"{}")]), Stored);
    let json = check(
        &zip,
        &[],
        1,
        vec![error(
            "archive.unsafe-path",
            Some("../escape.json"),
            None,
            None,
        )],
    );
    assert_eq!(
        finding(&json, "archive.unsafe-path", Some("../escape.json"), None)["found"],
        "a path with a `..` component"
    );
}

#[test]
fn zip_entry_with_an_absolute_path() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("s.zip");
    write_zip(&zip, &example_with(&[("/tmp/abs.json", b"{}")]), Stored);
    let json = check(
        &zip,
        &[],
        1,
        vec![error(
            "archive.unsafe-path",
            Some("/tmp/abs.json"),
            None,
            None,
        )],
    );
    assert_eq!(
        finding(&json, "archive.unsafe-path", Some("/tmp/abs.json"), None)["found"],
        "an absolute path"
    );
}

#[test]
fn zip_entries_with_windows_paths() {
    for (name, found) in [
        ("output0\\..\\..\\evil.json", "a path with a backslash"),
        ("C:/evil.json", "a path with a drive letter"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let zip = tmp.path().join("s.zip");
        write_zip(&zip, &example_with(&[(name, b"{}")]), Stored);
        let json = check(
            &zip,
            &[],
            1,
            vec![error("archive.unsafe-path", Some(name), None, None)],
        );
        assert_eq!(
            finding(&json, "archive.unsafe-path", Some(name), None)["found"],
            found
        );
    }
}

#[test]
fn zip_entry_with_a_bad_crc() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.zip");
    let mut bad = RawEntry::stored(b"output0/notes.txt", b"tampered after zipping\n");
    bad.crc ^= 1;
    raw_example_zip(&path, vec![bad]);
    // The entry is refused, so it is not listed as an unknown file either.
    let json = check(
        &path,
        &[],
        1,
        vec![error(
            "archive.corrupt",
            Some("output0/notes.txt"),
            None,
            None,
        )],
    );
    assert_eq!(json["summary"]["files"], 11);
}

#[test]
fn zip_symlink_entry() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default().compression_method(Stored);
    for (name, bytes) in folder_files(&example_dir()) {
        zip.start_file(name, options).unwrap();
        zip.write_all(&bytes).unwrap();
    }
    zip.add_symlink("output0/fast_9.json", "../../../etc/passwd", options)
        .unwrap();
    zip.finish().unwrap();
    check(
        &path,
        &[],
        1,
        vec![error(
            "archive.symlink",
            Some("output0/fast_9.json"),
            None,
            None,
        )],
    );
}

#[test]
fn zip_encrypted_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.zip");
    let mut secret = RawEntry::stored(b"output0/secret.json", b"\x8a\x13\x07 not plain text");
    secret.flags = 1; // encrypted
    raw_example_zip(&path, vec![secret]);
    check(
        &path,
        &[],
        1,
        vec![error(
            "archive.encrypted",
            Some("output0/secret.json"),
            None,
            None,
        )],
    );
}

#[test]
fn zip_duplicate_names() {
    let tmp = tempfile::tempdir().unwrap();
    // The same name twice, byte for byte (ZipWriter refuses to write that).
    let path = tmp.path().join("same.zip");
    let again = std::fs::read(example_dir().join("output1/fast_0.json")).unwrap();
    raw_example_zip(
        &path,
        vec![RawEntry::stored(b"output1/fast_0.json", &again)],
    );
    let json = sole(
        &path,
        &[],
        1,
        error("archive.duplicate", Some("output1/fast_0.json"), None, None),
    );
    assert_eq!(json["found"], "2 entries with this name");

    // Two names that are one path once normalised.
    let path = tmp.path().join("normalised.zip");
    write_zip(
        &path,
        &example_with(&[("./output1/fast_0.json", &again)]),
        Stored,
    );
    let json = sole(
        &path,
        &[],
        1,
        error("archive.duplicate", Some("output1/fast_0.json"), None, None),
    );
    assert_eq!(json["found"], "another entry named ./output1/fast_0.json");
}

#[test]
fn zip_name_not_utf8() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default().compression_method(Stored);
    for (name, bytes) in folder_files(&example_dir()) {
        zip.start_file(name, options).unwrap();
        zip.write_all(&bytes).unwrap();
    }
    zip.start_file_with_options(options.name(b"output0/caf\xe9.json"))
        .unwrap();
    zip.write_all(b"{}").unwrap();
    zip.finish().unwrap();
    check(
        &path,
        &[],
        1,
        vec![error(
            "archive.name-encoding",
            Some("output0/caf\u{fffd}.json"),
            None,
            None,
        )],
    );
}

#[test]
fn zip_bomb_ratio_and_size_limits() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bomb.zip");
    let repeats = (300 << 20) / 258;
    let size = 1 + 258 * repeats as u64;
    let data = deflated_zeros(repeats);
    assert!(size > 300_000_000 && data.len() < 400_000, "{}", data.len());
    let bomb = RawEntry {
        name: b"output0/zeros.bin".to_vec(),
        data,
        method: 8,
        crc: crc32_of_zeros(size),
        size: size as u32,
        flags: 0,
        shares: None,
    };
    raw_example_zip(&path, vec![bomb]);
    let json = check(
        &path,
        &[],
        1,
        vec![error(
            "archive.ratio",
            Some("output0/zeros.bin"),
            None,
            None,
        )],
    );
    assert_eq!(
        finding(&json, "archive.ratio", Some("output0/zeros.bin"), None)["expected"],
        "a compression ratio of at most 200 (--max-ratio)"
    );

    // With the ratio allowed, the size limit: the example's files fit, then 1 MB is left.
    let example: u64 = folder_files(&example_dir())
        .iter()
        .map(|(_, b)| b.len() as u64)
        .sum();
    let limit = (example + 1_000_000).to_string();
    let json = check(
        &path,
        &["--max-ratio", "5000", "--max-bytes", &limit],
        1,
        vec![error(
            "archive.too-large",
            Some("output0/zeros.bin"),
            None,
            None,
        )],
    );
    let f = finding(&json, "archive.too-large", Some("output0/zeros.bin"), None);
    assert_eq!(
        f["expected"],
        format!("at most {limit} bytes in all (--max-bytes)")
    );
    assert_eq!(
        f["found"],
        format!("{size} bytes in this entry, over what is left")
    );
}

#[test]
fn zip_bomb_of_overlapping_entries() {
    // 100 entries of 2 MiB each, every one under the per-entry ratio (about 150), all
    // pointing at the same 14 kB of compressed data: 200 MiB from a 20 kB archive.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("overlap.zip");
    let repeats = (2 << 20) / 264;
    let size = (1 + 264 * repeats) as u64;
    let data = deflated_zeros_diluted(repeats, 6);
    let ratio = size / data.len() as u64;
    assert!((100..200).contains(&ratio), "{ratio}");
    let entries: Vec<RawEntry> = (0..100)
        .map(|i| RawEntry {
            name: format!("output0/z{i:03}.bin").into_bytes(),
            data: data.clone(),
            method: 8,
            crc: crc32_of_zeros(size),
            size: size as u32,
            flags: 0,
            shares: (i > 0).then_some(0),
        })
        .collect();
    write_raw_zip(&path, &entries);
    let archive_len = std::fs::metadata(&path).unwrap().len();
    assert!(archive_len < 30_000, "{archive_len}");
    // 200 × the archive's length covers the first entries whole; the next one is over it,
    // and the read stops there.
    let allowed = (archive_len * 200 / size) as usize;
    assert!((1..10).contains(&allowed), "{allowed}");
    let third = format!("output0/z{allowed:03}.bin");
    let third = third.as_str();
    let mut expected: Vec<Key> = (0..allowed)
        .map(|i| format!("output0/z{i:03}.bin"))
        .map(|name| warning("file.unknown", Some(&name), None, None))
        .collect();
    expected.push(error("archive.ratio", Some(third), None, None));
    // Every entry after the first points at the first one's local header, which names
    // another file: each is inconsistent, up to the one the read stops at.
    for i in 1..=allowed {
        let name = format!("output0/z{i:03}.bin");
        expected.push(error("archive.inconsistent", Some(&name), None, None));
    }
    // Nothing else in it: no reports (and then no word about the jobs file), so no
    // submission could be read: exit 2.
    expected.push(error("reports.none", None, None, None));
    let json = check(&path, &[], 2, expected);
    assert_eq!(
        finding(&json, "archive.ratio", Some(third), None)["expected"],
        format!("at most 200 times the archive's {archive_len} bytes in all (--max-ratio)")
    );
}

#[test]
fn zip_entry_whose_header_understates_its_size() {
    // The header says 1000 bytes; the data inflates to 300 MiB. The read is bounded and
    // the entry refused as damaged.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("liar.zip");
    let repeats = (300 << 20) / 258;
    let liar = RawEntry {
        name: b"output0/liar.bin".to_vec(),
        data: deflated_zeros(repeats),
        method: 8,
        crc: crc32_of_zeros(1000),
        size: 1000,
        flags: 0,
        shares: None,
    };
    raw_example_zip(&path, vec![liar]);
    check(
        &path,
        &[],
        1,
        vec![error(
            "archive.corrupt",
            Some("output0/liar.bin"),
            None,
            None,
        )],
    );
}

/// What an archive that cannot be opened at all gives: that finding alone (nothing is
/// said about content that could not be read).
fn unreadable() -> Vec<Key> {
    vec![error("archive.unreadable", None, None, None)]
}

#[test]
fn zip_truncated() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole.zip");
    write_zip(&whole, &folder_files(&example_dir()), Deflated);
    let bytes = std::fs::read(&whole).unwrap();
    let cut = tmp.path().join("cut.zip");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let json = check(&cut, &[], 2, unreadable());
    assert_eq!(json["summary"]["files"], 0);
}

#[test]
fn zip_that_is_random_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("noise.zip");
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let noise: Vec<u8> = (0..4096)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    std::fs::write(&path, noise).unwrap();
    check(&path, &[], 2, unreadable());
}

// ───────────────────────────── 22. files and layout ─────────────────────────────

#[test]
fn file_unknown_is_a_warning() {
    let dir = copy_example();
    std::fs::write(at(&dir, "notes.txt"), "ran on Tuesday\n").unwrap();
    let json = check(
        dir.path(),
        &[],
        0,
        vec![warning("file.unknown", Some("notes.txt"), None, None)],
    );
    assert_eq!(json["summary"]["files"], 12);
}

/// `mlbench run`'s telemetry files are expected beside the reports: not unknown files
/// (the telemetry rules read them: tests/cli/validate/telemetry.rs); a sampler's leftover
/// `.part` (its copy died) is still an unknown file.
#[test]
fn telemetry_files_are_known_and_a_leftover_part_is_not() {
    let dir = copy_example();
    std::fs::create_dir(at(&dir, "output0/telemetry")).unwrap();
    std::fs::write(at(&dir, "output0/telemetry/vae.0.jsonl"), "{}\n").unwrap();
    std::fs::write(at(&dir, "output0/telemetry/vae.1.jsonl.part"), "{}\n").unwrap();
    let part = "output0/telemetry/vae.1.jsonl.part";
    let (code, json) = crate::fixtures::validate_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let of = |rule: &str| -> Vec<Key> {
        crate::fixtures::findings(&json)
            .into_iter()
            .filter(|k| k.0 == rule)
            .collect()
    };
    assert_eq!(
        of("file.unknown"),
        [warning("file.unknown", Some(part), None, None)]
    );
    // `{}` is no telemetry line: read, and found wanting at its line.
    let file = "output0/telemetry/vae.0.jsonl";
    assert_eq!(
        of("telemetry.unreadable"),
        [error(
            "telemetry.unreadable",
            Some(file),
            None,
            Some("line 1")
        )]
    );
}

#[test]
fn folder_symlink_is_not_followed() {
    let dir = copy_example();
    std::os::unix::fs::symlink("/etc/passwd", at(&dir, "output0/fast_7.json")).unwrap();
    let json = check(
        dir.path(),
        &[],
        0,
        vec![warning(
            "file.symlink",
            Some("output0/fast_7.json"),
            None,
            None,
        )],
    );
    assert_eq!(json["summary"]["files"], 11);
    assert_eq!(json["summary"]["gpus"], 2);
}

#[test]
fn reports_of_mixed_suites() {
    let dir = copy_example();
    std::fs::copy(
        at(&dir, "output0/fast_0.json"),
        at(&dir, "output0/baselines_0.json"),
    )
    .unwrap();
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error("reports.mixed-suites", None, None, None)],
    );
    assert_eq!(
        finding(&json, "reports.mixed-suites", None, None)["found"],
        "baselines (1 file), fast (10 files); validated `fast`"
    );
    assert_eq!(json["summary"]["suite"], "fast");
    assert_eq!(json["summary"]["report_files"], 10);
}

#[test]
fn reports_none_in_an_empty_folder() {
    let dir = tempfile::tempdir().unwrap();
    let json = check(
        dir.path(),
        &[],
        2,
        vec![error("reports.none", None, None, None)],
    );
    assert_eq!(json["summary"]["suite"], serde_json::Value::Null);
    assert_eq!(json["summary"]["files"], 0);
}

// ───────────────────────────── 24. unusable input ─────────────────────────────

#[test]
fn missing_path_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent");
    mlbench()
        .arg("validate")
        .arg(&path)
        .args(["--format", "json"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(format!(
            "error: {}: no such file or folder\n",
            path.display()
        ));
}

#[test]
fn path_neither_folder_nor_zip_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("submission.tar");
    std::fs::write(&path, "not a zip").unwrap();
    mlbench()
        .arg("validate")
        .arg(&path)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("not a folder or a .zip file"));
}
