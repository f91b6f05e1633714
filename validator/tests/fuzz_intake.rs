//! Fuzzing the zip intake: arbitrary bytes, bytes ending in a forged end-of-central-
//! directory record, and valid zips with random byte flips, truncations, insertions and
//! removals. `read_zip` must never panic, and what it returns must respect the limits;
//! validating the archive from its listing (entries inflated as the validation reaches
//! them, damaged ones found then) must give what validating the intake gives.
//!
//! 256 cases per property by default; `PROPTEST_CASES=20000 cargo test --test fuzz_intake`
//! for a long run.

use mlbench_submission::archive::normalize_entry_name;
use mlbench_submission::intake::{Intake, Limits};
use mlbench_submission::intake::{list_zip, read_zip};
use mlbench_validator::{Options, validate, validate_listing};
use proptest::prelude::*;
use std::io::{Cursor, Write};
use std::sync::OnceLock;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// Small valid archives to mutate: stored, deflated, empty, nested, a directory, a link
/// and a compressible file, so that mutations reach every branch of the intake.
fn seeds() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
        let deflated = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
        let build = |with_extras: bool| -> Vec<u8> {
            let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
            let mut add = |name: &str, bytes: &[u8], options| {
                zip.start_file(name, options).expect("start");
                zip.write_all(bytes).expect("write");
            };
            add(
                "run/train_0.json",
                b"{\"loss\": 1.5, \"step\": 1}\n",
                deflated,
            );
            add("jobs.json", b"[{\"name\": \"a\"}]", stored);
            add("empty", b"", deflated);
            add(
                "big.json",
                "{\"rate\": 12.5}\n".repeat(300).as_bytes(),
                deflated,
            );
            if with_extras {
                add("./dot/a.json", b"{}", stored);
                zip.add_directory("dir/", SimpleFileOptions::default())
                    .expect("dir");
                zip.add_symlink("link", "run/train_0.json", SimpleFileOptions::default())
                    .expect("link");
            }
            zip.finish().expect("finish").into_inner()
        };
        vec![build(false), build(true)]
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip {
        at: usize,
        mask: u8,
    },
    Set {
        at: usize,
        byte: u8,
    },
    /// Hits the central directory and the end record, where one byte matters most.
    Tail {
        from_end: usize,
        byte: u8,
    },
    Truncate {
        at: usize,
    },
    Insert {
        at: usize,
        bytes: Vec<u8>,
    },
    Remove {
        at: usize,
        len: usize,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(at, mask)| Mutation::Flip { at, mask }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Set { at, byte }),
        (1..160usize, any::<u8>()).prop_map(|(from_end, byte)| Mutation::Tail { from_end, byte }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        (any::<usize>(), 1..64usize).prop_map(|(at, len)| Mutation::Remove { at, len }),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let len = bytes.len();
    if len == 0 {
        return;
    }
    match m {
        Mutation::Flip { at, mask } => bytes[at % len] ^= mask,
        Mutation::Set { at, byte } => bytes[at % len] = *byte,
        Mutation::Tail { from_end, byte } => bytes[len - 1 - from_end % len] = *byte,
        Mutation::Truncate { at } => bytes.truncate(at % len),
        Mutation::Insert { at, bytes: new } => {
            let at = at % (len + 1);
            bytes.splice(at..at, new.iter().copied());
        }
        Mutation::Remove { at, len: n } => {
            let at = at % len;
            bytes.drain(at..(at + n).min(len));
        }
    }
}

fn limits() -> impl Strategy<Value = Limits> {
    prop_oneof![
        Just(Limits::default()),
        (0..5000u64, 1..300u64, 0..8usize).prop_map(|(max_bytes, max_ratio, max_files)| {
            Limits {
                max_bytes,
                max_ratio,
                max_files,
            }
        }),
    ]
}

/// A forged end-of-central-directory record after `body`, claiming `entries` records of
/// `size` bytes at `offset`: the central-directory parser then runs on random bytes.
fn with_end_record(mut body: Vec<u8>, entries: u16, size: u32, offset: u32) -> Vec<u8> {
    let len = body.len() as u32;
    let (offset, size) = (offset % (len + 1), size % (len + 1));
    body.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    body.extend_from_slice(&entries.to_le_bytes());
    body.extend_from_slice(&entries.to_le_bytes());
    body.extend_from_slice(&size.to_le_bytes());
    body.extend_from_slice(&offset.to_le_bytes());
    body.extend_from_slice(&[0, 0]);
    body
}

/// Reads `bytes` from a temporary file and checks what came back.
fn check(bytes: &[u8], limits: &Limits) -> Result<(), TestCaseError> {
    let mut file =
        tempfile::NamedTempFile::new().map_err(|e| TestCaseError::fail(e.to_string()))?;
    file.write_all(bytes)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let intake: Intake =
        read_zip(file.path(), limits).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(intake.files.len() <= limits.max_files);
    let total: u64 = intake.files.iter().map(|f| f.bytes.len() as u64).sum();
    prop_assert!(total <= limits.max_bytes, "{total} bytes kept");
    for pair in intake.files.windows(2) {
        prop_assert!(pair[0].path < pair[1].path, "not sorted or not unique");
    }
    for f in &intake.files {
        let normal = normalize_entry_name(&f.path);
        prop_assert!(
            normal.as_deref() == Ok(f.path.as_str()) && !f.path.is_empty(),
            "path {:?}",
            f.path
        );
    }
    for finding in &intake.facts {
        prop_assert!(finding.rule.starts_with("archive."), "{}", finding.rule);
    }
    if intake.facts.iter().any(|f| f.rule == "archive.unreadable") {
        prop_assert_eq!(intake.facts.len(), 1);
        prop_assert!(intake.files.is_empty());
    }
    let listing = list_zip(file.path(), limits).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let options = Options::default();
    let streamed = validate_listing(&listing, &options);
    let whole = validate(&intake, &options);
    prop_assert_eq!(streamed.findings, whole.findings);
    prop_assert_eq!(streamed.summary, whole.summary);
    Ok(())
}

fn config() -> ProptestConfig {
    // Cases from PROPTEST_CASES (256 unless set); failures are printed, not written into
    // the source tree.
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..2048), limits in limits()) {
        check(&bytes, &limits)?;
    }

    #[test]
    fn arbitrary_central_directory(
        body in prop::collection::vec(any::<u8>(), 0..1024),
        records in prop::collection::vec(prop::collection::vec(any::<u8>(), 42..120), 0..4),
        entries in 0..6u16,
        size in any::<u32>(),
        offset in any::<u32>(),
        limits in limits(),
    ) {
        // Random bytes holding central-directory signatures, so that record parsing runs.
        let mut body = body;
        for record in records {
            body.extend_from_slice(b"PK\x01\x02");
            body.extend_from_slice(&record);
        }
        check(&with_end_record(body, entries, size, offset), &limits)?;
    }

    #[test]
    fn mutated_zip(
        seed in 0..2usize,
        mutations in prop::collection::vec(mutation(), 1..6),
        limits in limits(),
    ) {
        let mut bytes = seeds()[seed].clone();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        check(&bytes, &limits)?;
    }

    #[test]
    fn valid_zip_under_random_limits(seed in 0..2usize, limits in limits()) {
        check(&seeds()[seed], &limits)?;
    }
}
