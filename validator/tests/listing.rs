//! Validating a submission from its listing, each file read as the per-file pass reaches
//! it (`validate_listing`, what `mlbench validate` does), against validating it read whole
//! into memory (`validate` on `read_submission`, what `pack`, `grid` and the pages do): the
//! same findings in the same order and the same summary, for folders and zips, clean or
//! damaged, with a manifest to check or without, and when files change between the listing
//! and the reads (a file that no longer reads, a folder grown past `--max-bytes`).

use mlbench_results::Validation;
use mlbench_submission::intake::{Limits, Listing, list_submission, read_submission};
use mlbench_validator::submission::{MANIFEST_NAME, SUBMISSION_NAME, manifest_text};
use mlbench_validator::{Options, SubmittedFile, validate, validate_listing};
use std::io::Write;
use std::path::{Path, PathBuf};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../submissions/example");

fn options() -> Options<'static> {
    Options {
        min_runs: 1,
        ..Options::default()
    }
}

/// The example submission's files, with `extra` added (or replacing one of the same path).
fn example_with(extra: &[(&str, &[u8])]) -> Vec<SubmittedFile> {
    let mut files = read_submission(Path::new(EXAMPLE), &Limits::default())
        .unwrap()
        .files;
    for (path, bytes) in extra {
        files.retain(|f| f.path != *path);
        files.push(SubmittedFile::new(*path, *bytes));
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

fn write_folder(dir: &Path, files: &[SubmittedFile]) {
    for f in files {
        let path = dir.join(&f.path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &f.bytes).unwrap();
    }
}

/// A zip of `files`, report files stored (so that tests can find and damage their bytes),
/// the others deflated.
fn write_zip(path: &Path, files: &[SubmittedFile]) {
    let mut zip = ZipWriter::new(std::fs::File::create(path).unwrap());
    for f in files {
        let method = if f.path.contains("/fast_") {
            CompressionMethod::Stored
        } else {
            CompressionMethod::Deflated
        };
        zip.start_file(
            f.path.as_str(),
            SimpleFileOptions::default().compression_method(method),
        )
        .unwrap();
        zip.write_all(&f.bytes).unwrap();
    }
    zip.finish().unwrap();
}

fn rules(v: &Validation) -> Vec<(&str, Option<&str>)> {
    v.findings
        .iter()
        .map(|f| (f.rule, f.file.as_deref()))
        .collect()
}

/// Validates `listing` both ways and checks that they agree; returns the streamed one.
/// Reading it with the report files apart (`Listing::read_apart`, what `grid` does) is
/// held to reading it whole too.
fn both_ways(listing: &Listing) -> Validation {
    let streamed = validate_listing(listing, &options());
    let whole = validate(&listing.clone().read(), &options());
    assert_eq!(streamed.findings, whole.findings);
    assert_eq!(streamed.waived, whole.waived);
    assert_eq!(streamed.summary, whole.summary);
    reports_apart_as_read_whole(listing);
    streamed
}

/// The report files read apart: the same findings as the whole read, the other files in
/// the intake, and each report that read handed over once, with its bytes, in path order.
fn reports_apart_as_read_whole(listing: &Listing) {
    let whole = listing.clone().read();
    let is_report = |p: &str| {
        p.rsplit('/')
            .next()
            .is_some_and(|name| name.starts_with("fast_"))
    };
    let (intake, apart) = listing.read_apart(is_report, |path, content| {
        (path.to_owned(), bytes_of(content))
    });
    assert_eq!(intake.facts, whole.facts);
    assert_eq!(intake.kind, whole.kind);
    let files = |files: Vec<&SubmittedFile>| -> Vec<(String, Vec<u8>)> {
        files
            .into_iter()
            .map(|f| (f.path.clone(), f.bytes.clone()))
            .collect()
    };
    let (reports, others): (Vec<&SubmittedFile>, Vec<&SubmittedFile>) =
        whole.files.iter().partition(|f| is_report(&f.path));
    assert!(!reports.is_empty());
    assert_eq!(files(intake.files.iter().collect()), files(others));
    let apart: Vec<(String, Vec<u8>)> = apart
        .into_iter()
        .map(|(path, (seen, bytes))| {
            assert_eq!(path, seen);
            (path, bytes)
        })
        .collect();
    assert_eq!(apart, files(reports));
    // A file read apart is read again on demand; one not listed is not.
    assert_eq!(listing.read_again(&apart[0].0), Some(apart[0].1.clone()));
    assert_eq!(listing.read_again("no/such/file.json"), None);
}

/// Validates the submission at `path` both ways, from the start.
fn both_ways_at(path: &Path, limits: &Limits) -> Validation {
    let streamed = both_ways(&list_submission(path, limits).unwrap());
    let whole = validate(&read_submission(path, limits).unwrap(), &options());
    assert_eq!(streamed.findings, whole.findings);
    assert_eq!(streamed.summary, whole.summary);
    streamed
}

/// The example with something of everything: an unknown file, a machine description, a
/// report of another suite, a broken report, a second jobs file and a manifest (with one
/// file changed since, one listed but gone, one not listed).
fn damaged_example() -> Vec<SubmittedFile> {
    let system = br#"{"hostname": "node1", "gpus": [{"name": "A100"}]}"#;
    let mut files = example_with(&[
        ("notes.txt", b"hello"),
        ("system.json", system),
        ("output0/other_0.json", b"[]"),
        ("output1/fast_1.json", b"[{\"name\": \"vae\", "),
        (
            "jobs/more.json",
            br#"[{"name": "a", "cmd": "./a.sh", "args": {}}]"#,
        ),
        ("gone.txt", b"listed"),
        (SUBMISSION_NAME, b"{\"tool\": \"x\"}"),
    ]);
    let manifest = manifest_text(&files);
    files.retain(|f| f.path != "gone.txt");
    files.push(SubmittedFile::new(MANIFEST_NAME, manifest));
    files.push(SubmittedFile::new("extra.txt", "not listed"));
    let changed = files
        .iter_mut()
        .find(|f| f.path == "output2/fast_0.json")
        .unwrap();
    changed.bytes.extend_from_slice(b"\n");
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

#[test]
fn the_example_folder_and_zip() {
    let v = both_ways_at(Path::new(EXAMPLE), &Limits::default());
    assert_eq!(v.summary.report_files, 10);
    assert!(v.summary.entries > 0);
    let dir = tempfile::tempdir().unwrap();
    let zip = dir.path().join("example.zip");
    write_zip(&zip, &example_with(&[]));
    let z = both_ways_at(&zip, &Limits::default());
    assert_eq!(z.summary, v.summary);
    assert_eq!(z.findings, v.findings);
}

#[test]
fn a_damaged_submission_with_a_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("sub");
    write_folder(&folder, &damaged_example());
    let v = both_ways_at(&folder, &Limits::default());
    // The broken stream's 16 benches are missing (one finding listing them), and each
    // problem planted is found once; every file but the manifest is hashed, those held
    // whole included.
    let (missing, others): (Vec<_>, Vec<_>) = rules(&v)
        .into_iter()
        .partition(|(rule, _)| *rule == "bench.missing");
    assert_eq!(missing, [("bench.missing", Some("output1/fast_1.json"))]);
    let listed = v
        .findings
        .iter()
        .find(|f| f.rule == "bench.missing")
        .unwrap();
    assert_eq!(listed.expected, "the 16 benches on GPU 1 in run output1");
    assert_eq!(
        others,
        [
            ("file.unknown", Some("extra.txt")),
            ("file.unknown", Some("notes.txt")),
            ("jobs.several", None),
            ("manifest.extra", Some("extra.txt")),
            ("manifest.mismatch", Some("output2/fast_0.json")),
            ("manifest.missing", Some("gone.txt")),
            ("parse.json", Some("output1/fast_1.json")),
            ("reports.mixed-suites", None),
        ]
    );
    let s = &v.summary;
    assert_eq!(
        (s.files, s.report_files, s.entries, s.runs, s.gpus),
        (18, 10, 159, 5, 2)
    );
    assert_eq!(s.jobs_file.as_deref(), Some("fast.json"));
    let zip = dir.path().join("sub.zip");
    write_zip(&zip, &damaged_example());
    let z = both_ways_at(&zip, &Limits::default());
    assert_eq!(z.findings, v.findings);
    assert_eq!(z.summary, v.summary);
}

/// Limits met while listing (and the files after them never read) agree too.
#[test]
fn limits_met_while_listing() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("sub");
    let files = damaged_example();
    write_folder(&folder, &files);
    let zip = dir.path().join("sub.zip");
    write_zip(&zip, &files);
    let half: u64 = files.iter().map(|f| f.bytes.len() as u64).sum::<u64>() / 2;
    for limits in [
        Limits {
            max_bytes: half,
            ..Limits::default()
        },
        Limits {
            max_files: 7,
            ..Limits::default()
        },
    ] {
        for path in [&folder, &zip] {
            let v = both_ways_at(path, &limits);
            assert!(
                v.findings
                    .iter()
                    .any(|f| f.rule.starts_with("archive.too-")),
                "{:?}",
                rules(&v)
            );
        }
    }
}

/// An entry whose stored bytes no longer match their CRC is found only once inflated: the
/// streamed validation starts over without it, as the whole read leaves it out.
#[test]
fn a_zip_entry_damaged_inside() {
    let dir = tempfile::tempdir().unwrap();
    let zip = dir.path().join("sub.zip");
    let files = damaged_example();
    write_zip(&zip, &files);
    let mut bytes = std::fs::read(&zip).unwrap();
    let victim = &files
        .iter()
        .find(|f| f.path == "output3/fast_1.json")
        .unwrap()
        .bytes;
    let at = bytes
        .windows(64)
        .position(|w| w == &victim[100..164])
        .unwrap();
    bytes[at + 10] ^= 0x20;
    std::fs::write(&zip, &bytes).unwrap();
    let v = both_ways_at(&zip, &Limits::default());
    let found = rules(&v);
    assert!(
        found.contains(&("archive.corrupt", Some("output3/fast_1.json"))),
        "{found:?}"
    );
    assert_eq!(v.summary.files, files.len() - 1);
}

/// Files that change between the listing and the reads: one removed (it no longer reads),
/// one grown so that the folder goes over `--max-bytes` (it and the files after it are
/// left out). Both ways read the same disk, so they must agree on what that comes to.
#[test]
fn folder_files_changed_after_listing() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("sub");
    let files = damaged_example();
    write_folder(&folder, &files);

    let listing = list_submission(&folder, &Limits::default()).unwrap();
    std::fs::remove_file(folder.join("output0/fast_1.json")).unwrap();
    std::fs::remove_file(folder.join("notes.txt")).unwrap();
    let v = both_ways(&listing);
    let found = rules(&v);
    assert!(
        found.contains(&("file.unreadable", Some("output0/fast_1.json"))),
        "{found:?}"
    );
    assert!(
        found.contains(&("file.unreadable", Some("notes.txt"))),
        "{found:?}"
    );
    assert!(!found.contains(&("file.unknown", Some("notes.txt"))));
    assert_eq!(v.summary.files, listing.paths().len() - 2);
    write_folder(&folder, &files);

    let total: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    let limits = Limits {
        max_bytes: total + 10,
        ..Limits::default()
    };
    let listing = list_submission(&folder, &limits).unwrap();
    assert_eq!(listing.paths().len(), files.len());
    let grown: PathBuf = folder.join("output1/fast_0.json");
    let mut bytes = std::fs::read(&grown).unwrap();
    bytes.extend_from_slice(&[b' '; 100]);
    std::fs::write(&grown, bytes).unwrap();
    let v = both_ways(&listing);
    let found = rules(&v);
    let over = v
        .findings
        .iter()
        .find(|f| f.rule == "archive.too-large")
        .expect("too large");
    assert!(over.found.starts_with("over "), "{}", over.found);
    let first_left_out = over.file.clone().unwrap();
    let kept: Vec<&String> = listing
        .paths()
        .iter()
        .filter(|p| **p < first_left_out)
        .collect();
    assert_eq!(v.summary.files, kept.len(), "{found:?}");
}

/// The bytes of a content, however it came.
fn bytes_of(content: mlbench_schema::reader::Content<'_>) -> Vec<u8> {
    use mlbench_schema::reader::Content;
    match content {
        Content::Bytes(bytes) => bytes.to_vec(),
        Content::Stream(input) => {
            let mut bytes = Vec::new();
            input.read_to_end(&mut bytes).unwrap();
            bytes
        }
    }
}

/// A listing of some of its files (`Listing::only`) reads those and opens no other: for
/// a folder and its zip, the files picked come back with the bytes the whole read gives,
/// none of the whole's findings come with them, and a file the part leaves out is never
/// read (a folder's, removed after the listing, finds nothing).
#[test]
fn a_listing_of_some_files_reads_only_those() {
    let files = example_with(&[("output0/telemetry/vae.0.jsonl", b"{}\n")]);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sub");
    write_folder(&root, &files);
    // A link: a finding of the whole listing, not of the part.
    std::os::unix::fs::symlink("/etc/passwd", root.join("output0/telemetry/x.0.jsonl")).unwrap();
    let zip = dir.path().join("sub.zip");
    write_zip(&zip, &files);
    let picked = |p: &str| p.starts_with("output0/telemetry/");
    for path in [&root, &zip] {
        let whole = list_submission(path, &Limits::default()).unwrap();
        let part = whole.only(picked);
        assert_eq!(part.paths(), ["output0/telemetry/vae.0.jsonl"], "{path:?}");
        assert_eq!(part.facts().count(), 0, "{path:?}");
        if path == &root {
            assert!(whole.facts().any(|f| f.rule == "file.symlink"));
            // Gone after the listing: the whole would find it unreadable; the part
            // never reads it.
            std::fs::remove_file(root.join("output0/fast_0.json")).unwrap();
        }
        let (rest, read) = part.read_apart(|_| true, |p, c| (p.to_owned(), bytes_of(c)));
        assert!(rest.files.is_empty() && rest.facts.is_empty(), "{path:?}");
        let read: Vec<(String, Vec<u8>)> = read.into_iter().map(|(_, r)| r).collect();
        assert_eq!(
            read,
            [("output0/telemetry/vae.0.jsonl".to_owned(), b"{}\n".to_vec())]
        );
    }
}
