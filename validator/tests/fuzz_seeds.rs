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
