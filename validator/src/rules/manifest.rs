//! The pack manifest: when a submission carries `MANIFEST.sha256` (written by
//! `mlbench pack`), every file must be listed in it with its SHA-256, and nothing else
//! may be present.

use crate::finding::catalogued;
use crate::submission::{MANIFEST_NAME, SUBMISSION_NAME, parse_manifest, sha256_hex};
use mlbench_results::validation::Finding;
use mlbench_schema::Value;
use mlbench_submission::SubmittedFile;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

/// Checks the files against the root `MANIFEST.sha256`, and that `SUBMISSION.json` is a
/// JSON object. Without a manifest there is nothing to check: packing is optional.
pub fn check_manifest(files: &[SubmittedFile]) -> Vec<Finding> {
    let Some(manifest) = files.iter().find(|f| f.path == MANIFEST_NAME) else {
        return Vec::new();
    };
    let submission = files.iter().find(|f| f.path == SUBMISSION_NAME);
    // Hashing is the only costly part, and report files can be large.
    check_manifest_with(
        &manifest.bytes,
        submission.map(|f| f.bytes.as_slice()),
        || {
            files
                .par_iter()
                .filter(|f| f.path != MANIFEST_NAME)
                .map(|f| (f.path.as_str(), sha256_hex(&f.bytes)))
                .collect()
        },
    )
}

/// [`check_manifest`] given the manifest's bytes, those of `SUBMISSION.json` when there is
/// one, and a way to get the SHA-256 of every file but the manifest, by path (called only
/// when the manifest reads).
pub fn check_manifest_with<'a>(
    manifest: &[u8],
    submission: Option<&[u8]>,
    present: impl FnOnce() -> HashMap<&'a str, String>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    if let Some(submission) = submission
        && !matches!(
            mlbench_schema::pyjson::parse(submission),
            Ok(Value::Object(_))
        )
    {
        findings.push(
            catalogued(
                "manifest.malformed",
                "a JSON object",
                describe_json(submission),
            )
            .file(SUBMISSION_NAME),
        );
    }
    let listed = match std::str::from_utf8(manifest) {
        Ok(text) => parse_manifest(text).map_err(|e| (e.line, e.message)),
        Err(e) => {
            let line = manifest[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            Err((line, "not valid UTF-8".to_owned()))
        }
    };
    let listed = match listed {
        Ok(listed) => listed,
        Err((line, message)) => {
            findings.push(
                catalogued("manifest.malformed", "lines `<sha256>  <path>`", message)
                    .file(MANIFEST_NAME)
                    .field(format!("line {line}")),
            );
            return findings;
        }
    };

    let present = present();
    let mut named = HashSet::new();
    for (expected, path) in &listed {
        // `sha256sum` run from inside the folder writes `./a/b`; the intake drops the `./`.
        let path = path.strip_prefix("./").unwrap_or(path);
        named.insert(path);
        match present.get(path) {
            None => findings.push(
                catalogued(
                    "manifest.missing",
                    "the file listed in the manifest",
                    "no such file",
                )
                .file(path),
            ),
            Some(found) if found != expected => findings.push(
                catalogued("manifest.mismatch", expected.as_str(), found.as_str()).file(path),
            ),
            Some(_) => {}
        }
    }
    let mut extra: Vec<&str> = present
        .keys()
        .copied()
        .filter(|p| !named.contains(p))
        .collect();
    extra.sort_unstable();
    for path in extra {
        findings
            .push(catalogued("manifest.extra", "listed in the manifest", "not listed").file(path));
    }
    findings
}

/// What a `SUBMISSION.json` that is not an object holds instead.
fn describe_json(bytes: &[u8]) -> String {
    match mlbench_schema::pyjson::parse(bytes) {
        Ok(value) => format!("a JSON {}", value.type_name()),
        Err(e) => format!("not JSON: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::submission::with_manifest;

    fn file(path: &str, bytes: &[u8]) -> SubmittedFile {
        SubmittedFile::new(path, bytes)
    }

    fn rules(findings: &[Finding]) -> Vec<(&str, Option<&str>)> {
        findings
            .iter()
            .map(|f| (f.rule, f.file.as_deref()))
            .collect()
    }

    #[test]
    fn no_manifest_no_findings() {
        assert!(check_manifest(&[file("a", b"x"), file(SUBMISSION_NAME, b"[")]).is_empty());
    }

    #[test]
    fn packed_files_are_clean_and_changes_are_named() {
        let packed = with_manifest(vec![file("a", b"1"), file("b/c", b"2")], b"{}".to_vec());
        assert!(check_manifest(&packed).is_empty());

        let mut changed = packed.clone();
        changed[2].bytes = b"X".to_vec();
        assert_eq!(
            rules(&check_manifest(&changed)),
            [("manifest.mismatch", Some("a"))]
        );
        let found = &check_manifest(&changed)[0];
        assert_eq!(found.expected, sha256_hex(b"1"));
        assert_eq!(found.found, sha256_hex(b"X"));

        let mut extra = packed.clone();
        extra.push(file("z", b""));
        assert_eq!(
            rules(&check_manifest(&extra)),
            [("manifest.extra", Some("z"))]
        );

        let missing: Vec<_> = packed.iter().filter(|f| f.path != "b/c").cloned().collect();
        assert_eq!(
            rules(&check_manifest(&missing)),
            [("manifest.missing", Some("b/c"))]
        );
    }

    #[test]
    fn malformed_manifest_and_submission() {
        let bad = [file(MANIFEST_NAME, b"oops\n")];
        let findings = check_manifest(&bad);
        assert_eq!(
            rules(&findings),
            [("manifest.malformed", Some(MANIFEST_NAME))]
        );
        assert_eq!(findings[0].field.as_deref(), Some("line 1"));

        let bad = [file(MANIFEST_NAME, b"\n\xff")];
        assert_eq!(check_manifest(&bad)[0].field.as_deref(), Some("line 2"));

        for submission in [&b"[1]"[..], b"{", b""] {
            let packed = with_manifest(vec![], submission.to_vec());
            assert_eq!(
                rules(&check_manifest(&packed)),
                [("manifest.malformed", Some(SUBMISSION_NAME))],
                "{submission:?}"
            );
        }
    }

    #[test]
    fn dot_slash_paths_are_accepted() {
        let text = format!("{}  ./a\n", sha256_hex(b"1"));
        let files = [file(MANIFEST_NAME, text.as_bytes()), file("a", b"1")];
        assert!(check_manifest(&files).is_empty());
    }
}
