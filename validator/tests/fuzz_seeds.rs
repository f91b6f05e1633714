//! The zip target's seeds (fuzz/seeds/zip: the hostile zips among them) listed,
//! read and validated as scripts/fuzz.sh does, on every test run: no panic, and each
//! hostile one gives the finding it was made for.

use mlbench_validator::{Limits, Options, list_submission, validate_listing};
use std::path::Path;

#[test]
fn zip_seeds_validate_with_their_findings() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/zip");
    let expected = [
        ("directory-size-wrong.zip", "archive.inconsistent"),
        ("folder-with-data.zip", "archive.inconsistent"),
        ("local-name-differs.zip", "archive.inconsistent"),
        ("size-past-end.zip", "archive.inconsistent"),
        ("random.zip", "archive.unreadable"),
        ("truncated.zip", "archive.unreadable"),
        ("many-empty-streams.zip", "bench.missing"),
    ];
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let listing = list_submission(&path, &Limits::default()).unwrap();
        let options = Options {
            min_runs: 4,
            ..Options::default()
        };
        let v = validate_listing(&listing, &options);
        let name = path.file_name().unwrap().to_str().unwrap();
        if let Some((_, rule)) = expected.iter().find(|(n, _)| *n == name) {
            assert!(
                v.findings.iter().any(|f| f.rule == *rule),
                "{name}: {:?}",
                v.findings.iter().map(|f| f.rule).collect::<Vec<_>>()
            );
            seen += 1;
        }
    }
    assert_eq!(seen, expected.len());
}

/// The telemetry target's seeds (fuzz/seeds/telemetry) through what
/// fuzz/fuzz_targets/telemetry.rs asserts, and each hostile one's finding.
#[test]
fn telemetry_seeds_check_as_the_fuzz_target_does() {
    use mlbench_schema::telemetry::parse;
    use mlbench_validator::rules::telemetry::check_file;
    const PATH: &str = "output0/telemetry/convnet.0.jsonl";
    let expected = [
        ("whole.jsonl", None),
        ("cut.jsonl", Some("telemetry.unreadable")),
        ("no-header.jsonl", Some("telemetry.unreadable")),
        ("out-of-order.jsonl", Some("telemetry.clock")),
        (
            "resolution-1e308.jsonl",
            Some("telemetry.counter-resolution"),
        ),
        ("time-2-64.jsonl", Some("telemetry.time-range")),
        ("windows.jsonl", Some("telemetry.power-range")),
    ];
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/telemetry");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        // The fuzz target's body.
        let whole = parse(Path::new(PATH), &data);
        let check = check_file(PATH, &data);
        assert!(
            check
                .findings
                .iter()
                .all(|f| f.file.as_deref() == Some(PATH))
        );
        let unreadable = check
            .findings
            .iter()
            .any(|f| f.rule == "telemetry.unreadable");
        if whole.is_err() {
            assert!(unreadable, "{whole:?}");
        }
        let name = path.file_name().unwrap().to_str().unwrap();
        let rules: Vec<&str> = check.findings.iter().map(|f| f.rule).collect();
        match expected.iter().find(|(n, _)| *n == name) {
            Some((_, None)) => assert!(rules.is_empty(), "{name}: {rules:?}"),
            Some((_, Some(rule))) => assert!(rules.contains(rule), "{name}: {rules:?}"),
            None => continue,
        }
        seen += 1;
    }
    assert_eq!(seen, expected.len());
}
