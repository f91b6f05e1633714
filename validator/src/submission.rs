//! The submission's own files, as `mlbench pack` writes them and every command reads
//! them: `SUBMISSION.json` ([`SubmissionInfo`]), the `sha256sum` manifest
//! (`MANIFEST.sha256`: [`manifest_text`], [`parse_manifest`], [`with_manifest`]) and the
//! digest of a submission's content (the digests of files and of a page's inputs are
//! `mlbench_submission::digest`'s, streamed). Below both `validate` (which checks a manifest) and
//! `pack` (which writes one); it knows neither.

use mlbench_schema::Track;
use mlbench_schema::{Runtime, SystemInfo};
use mlbench_submission::{Listing, SubmittedFile};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

pub use mlbench_submission::layout::{MANIFEST_NAME, SUBMISSION_NAME};

/// Why a manifest could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ManifestError {
    /// The 1-based line.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

/// The version of the `SUBMISSION.json` document [`SubmissionInfo`] writes.
pub const SUBMISSION_SCHEMA_VERSION: u32 = 1;

/// `SUBMISSION.json`: what was packed, written by [`crate::pack::pack_folder`] and read back by the
/// commands that take a packed submission (its track). No timestamps, so packing is
/// deterministic. Fields are written in this order; `schema_version` comes last, as it
/// was added after the others (a file without it reads as version 0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubmissionInfo {
    /// The tool and its version, e.g. `mlbench 0.1.0`.
    #[serde(default)]
    pub tool: String,
    /// The track the folder was validated and packed under.
    pub track: Track,
    /// The suite validated.
    #[serde(default)]
    pub suite: Option<String>,
    /// The vendor's jobs file used.
    #[serde(default)]
    pub jobs_file: Option<String>,
    /// Files in the folder (the manifest and this file excluded).
    #[serde(default)]
    pub files: usize,
    /// Report files of the suite.
    #[serde(default)]
    pub report_files: usize,
    /// Entries read.
    #[serde(default)]
    pub entries: usize,
    /// Runs.
    #[serde(default)]
    pub runs: usize,
    /// GPUs.
    #[serde(default)]
    pub gpus: usize,
    /// Distinct benches.
    #[serde(default)]
    pub benches: usize,
    /// Errors of the validation (not waived; non-zero only when errors were allowed).
    #[serde(default)]
    pub errors: usize,
    /// Warnings of the validation.
    #[serde(default)]
    pub warnings: usize,
    /// [`SUBMISSION_SCHEMA_VERSION`] when written.
    #[serde(default)]
    pub schema_version: u32,
    /// The machines the runs ran on: each `system.json` / `system.<host>.json` at the
    /// folder's root (`mlbench run` writes them), by host name. Absent when there are
    /// none, so a folder without one packs to the bytes it always did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub systems: Vec<SystemInfo>,
    /// What produced the entries, as the machine descriptions declare it
    /// (`{"kind": "mlbench-run", "version": "2.13.0"}`; [`mlbench_schema::runtime`]):
    /// `mlbench run` and its libtorch. Absent when no description declares one (a
    /// submission of the suite's scripts: readers infer it from the entries), so such a
    /// folder packs to the bytes it always did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<Runtime>,
    /// Whether the folder was packed despite errors of its validation (`errors` counts
    /// them). Absent when false, so a clean folder packs to the bytes it always did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allowed_errors: bool,
    /// The telemetry files packed (`mlbench run`'s, `<run>/telemetry/*.jsonl`,
    /// docs/telemetry.md), by path, sorted; the manifest hashes them with every other
    /// file. Absent when there are none, so a folder without telemetry packs to the bytes
    /// it always did, and older readers pass the key over.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub telemetry: Vec<String>,
    /// The profile traces packed (`mlbench run --profile`'s, `<run>/profiles/*.trace.json`,
    /// docs/profiling.md), by path, sorted; hashed by the manifest as every file. Absent
    /// when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<String>,
    /// The folder's entries pack could not pack faithfully (symbolic links, FIFOs,
    /// devices, folders it could not list, files over `--max-bytes`), each with why.
    /// Absent when there are none, so a folder without one packs to the bytes it always
    /// did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
}

/// A folder entry `pack` left out of the zip, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    /// Its path in the folder (`/`-separated).
    pub path: String,
    /// Why: `a symbolic link, not followed`, `a FIFO`…
    pub why: String,
}

impl SubmissionInfo {
    /// The machine descriptions at the root of `files` that read, sorted by host name
    /// (a description that does not read is left out: `validate` does not judge it).
    pub fn systems_of(files: &[SubmittedFile]) -> Vec<SystemInfo> {
        Self::systems_among(files.iter().map(|f| (f.path.as_str(), f.bytes.as_slice())))
    }

    /// The runtime `systems` declare ([`mlbench_schema::runtime::resolve`] of their
    /// [`SystemInfo::runtime_of`]); `None` when none declares one, or they disagree.
    pub fn declared_runtime(systems: &[SystemInfo]) -> Option<Runtime> {
        let declared: Vec<Runtime> = systems.iter().filter_map(SystemInfo::runtime_of).collect();
        if declared.is_empty() {
            return None;
        }
        mlbench_schema::runtime::resolve(&declared, Default::default()).runtime
    }

    /// [`Self::systems_of`] the files given as (path, bytes), in order.
    pub fn systems_among<'a>(files: impl Iterator<Item = (&'a str, &'a [u8])>) -> Vec<SystemInfo> {
        let mut systems: Vec<SystemInfo> = files
            .filter(|(path, _)| mlbench_schema::system::is_system_file(path))
            .filter_map(|(_, bytes)| serde_json::from_slice(bytes).ok())
            .collect();
        systems.sort_by(|a, b| a.hostname.cmp(&b.hostname));
        systems
    }

    /// The file's bytes: pretty JSON and a final newline.
    pub fn to_json(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut json = serde_json::to_vec_pretty(self)?;
        json.push(b'\n');
        Ok(json)
    }

    /// Reads a `SUBMISSION.json`.
    pub fn from_json(bytes: &[u8]) -> Result<SubmissionInfo, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    /// The paths of the telemetry files among `files` ([`mlbench_submission::layout::Role::Telemetry`]),
    /// sorted.
    pub fn telemetry_of(files: &[SubmittedFile]) -> Vec<String> {
        Self::of_role(files, mlbench_submission::layout::Role::Telemetry)
    }

    /// The paths of the profile traces among `files`
    /// ([`mlbench_submission::layout::Role::Profile`]), sorted.
    pub fn profiles_of(files: &[SubmittedFile]) -> Vec<String> {
        Self::of_role(files, mlbench_submission::layout::Role::Profile)
    }

    fn of_role(files: &[SubmittedFile], role: mlbench_submission::layout::Role) -> Vec<String> {
        let mut paths: Vec<String> = files
            .iter()
            .filter(|f| mlbench_submission::layout::classify(&f.path, || false) == role)
            .map(|f| f.path.clone())
            .collect();
        paths.sort();
        paths
    }

    /// The `SUBMISSION.json` at the root of `files`, when there is one that reads.
    pub fn of_files(files: &[SubmittedFile]) -> Option<SubmissionInfo> {
        let file = files.iter().find(|f| f.path == SUBMISSION_NAME)?;
        SubmissionInfo::from_json(&file.bytes).ok()
    }
}

pub use mlbench_submission::digest::{sha256_file, sha256_hex};

/// The SHA-256 of a submission's content: of the [`manifest_text`] of its files other
/// than `MANIFEST.sha256` and `SUBMISSION.json`, which `mlbench pack` adds. A folder and
/// the zip packed from it have the same digest; any change to a file changes it.
pub fn content_digest(files: &[SubmittedFile]) -> String {
    let listed = files
        .iter()
        .filter(|f| f.path != MANIFEST_NAME && f.path != SUBMISSION_NAME)
        .collect();
    sha256_hex(manifest_of(listed).as_bytes())
}

/// [`content_digest`] of the files of `listing`, each hashed as it is read (a large one
/// streamed, never held whole); a file that cannot be read now is left out, as an intake
/// leaves it out.
pub fn content_digest_listed(listing: &Listing) -> String {
    use mlbench_schema::reader::Content;
    let which: Vec<usize> = (0..listing.paths().len())
        .filter(|&i| {
            let path = &listing.paths()[i];
            path != MANIFEST_NAME && path != SUBMISSION_NAME
        })
        .collect();
    let digests = listing.read_each_content(&which, |_, content| match content {
        Content::Bytes(bytes) => Some(sha256_hex(bytes)),
        Content::Stream(stream) => mlbench_submission::digest::sha256_reader(stream).ok(),
    });
    let mut lines: Vec<(&str, String)> = which
        .iter()
        .zip(digests)
        .filter_map(|(&i, read)| Some((listing.paths()[i].as_str(), read.ok()?.1?)))
        .collect();
    lines.sort();
    sha256_hex(manifest_lines(lines).as_bytes())
}

/// The manifest of `files`, in `sha256sum` format (`<hex>  <path>` per line, sorted by
/// path), leaving out the manifest itself. Paths holding `\`, a newline or a carriage
/// return are escaped the way `sha256sum` does, so `sha256sum -c` can check the result.
pub fn manifest_text(files: &[SubmittedFile]) -> String {
    manifest_of(files.iter().filter(|f| f.path != MANIFEST_NAME).collect())
}

/// The `sha256sum` listing of `listed`, sorted by path.
fn manifest_of(mut listed: Vec<&SubmittedFile>) -> String {
    listed.sort_by(|a, b| a.path.cmp(&b.path));
    manifest_lines(
        listed
            .into_iter()
            .map(|f| (f.path.as_str(), sha256_hex(&f.bytes)))
            .collect(),
    )
}

/// The `sha256sum` lines of (path, digest) pairs, in their order.
fn manifest_lines(listed: Vec<(&str, String)>) -> String {
    let mut out = String::new();
    for (path, digest) in listed {
        if path.contains(['\\', '\n', '\r']) {
            let escaped = path
                .replace('\\', "\\\\")
                .replace('\n', "\\n")
                .replace('\r', "\\r");
            out.push_str(&format!("\\{digest}  {escaped}\n"));
        } else {
            out.push_str(&format!("{digest}  {path}\n"));
        }
    }
    out
}

/// Parses a `sha256sum`-format manifest into (lower-case hash, path) pairs, in file order.
/// Accepts the binary marker (`<hex> *<path>`), escaped lines and CRLF line ends; refuses
/// blank lines, bad hashes and paths listed twice.
pub fn parse_manifest(text: &str) -> Result<Vec<(String, String)>, ManifestError> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let body = text.strip_suffix('\n').unwrap_or(text);
    if body.is_empty() {
        return Ok(out);
    }
    for (index, line) in body.split('\n').enumerate() {
        let line_no = index + 1;
        let err = |message: String| ManifestError {
            line: line_no,
            message,
        };
        let (escaped, line) = match line.strip_prefix('\\') {
            Some(rest) => (true, rest),
            // An unescaped path cannot hold `\r`, so a trailing one is a CRLF line end.
            None => (false, line.strip_suffix('\r').unwrap_or(line)),
        };
        if line.is_empty() {
            return Err(err("blank line".into()));
        }
        let (hash, rest) = line
            .split_at_checked(64)
            .ok_or_else(|| err("expected a 64-digit SHA-256, two spaces and a path".into()))?;
        if !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(err(format!("not a SHA-256 in hex: {hash:?}")));
        }
        let path = rest
            .strip_prefix("  ")
            .or_else(|| rest.strip_prefix(" *"))
            .ok_or_else(|| err("expected two spaces between the hash and the path".into()))?;
        let path = if escaped {
            unescape(path).ok_or_else(|| err(format!("bad escape in {path:?}")))?
        } else {
            path.to_owned()
        };
        if path.is_empty() {
            return Err(err("no path".into()));
        }
        if !seen.insert(path.clone()) {
            return Err(err(format!("{path} is listed twice")));
        }
        out.push((hash.to_ascii_lowercase(), path));
    }
    Ok(out)
}

/// Undoes `sha256sum`'s escaping (`\\`, `\n`, `\r`).
fn unescape(path: &str) -> Option<String> {
    let mut out = String::with_capacity(path.len());
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '\\' => out.push('\\'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            _ => return None,
        }
    }
    Some(out)
}

/// `files` ready to pack: any `MANIFEST.sha256` and `SUBMISSION.json` among them are
/// replaced by `submission_json` and a fresh manifest covering every other file
/// (`SUBMISSION.json` included); sorted by path.
pub fn with_manifest(files: Vec<SubmittedFile>, submission_json: Vec<u8>) -> Vec<SubmittedFile> {
    let mut out: Vec<SubmittedFile> = files
        .into_iter()
        .filter(|f| f.path != MANIFEST_NAME && f.path != SUBMISSION_NAME)
        .collect();
    out.push(SubmittedFile {
        path: SUBMISSION_NAME.into(),
        bytes: submission_json,
    });
    let manifest = manifest_text(&out);
    out.push(SubmittedFile {
        path: MANIFEST_NAME.into(),
        bytes: manifest.into_bytes(),
    });
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, bytes: &[u8]) -> SubmittedFile {
        SubmittedFile::new(path, bytes)
    }

    #[test]
    fn manifest_round_trips() {
        let files = vec![
            file("b/x.json", b"{}"),
            file("a.json", b"[]"),
            file(MANIFEST_NAME, b"ignored"),
            file("odd\\name\n", b""),
        ];
        let text = manifest_text(&files);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], format!("{}  a.json", sha256_hex(b"[]")));
        assert!(lines[2].starts_with('\\') && lines[2].ends_with("  odd\\\\name\\n"));
        let parsed = parse_manifest(&text).unwrap();
        let paths: Vec<&str> = parsed.iter().map(|(_, p)| p.as_str()).collect();
        assert_eq!(paths, ["a.json", "b/x.json", "odd\\name\n"]);
        assert_eq!(
            parsed[2].0,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn the_content_digest_leaves_out_what_pack_adds() {
        let files = vec![file("a.json", b"[]"), file("b/c.json", b"{}")];
        let digest = content_digest(&files);
        assert_eq!(digest, sha256_hex(manifest_text(&files).as_bytes()));
        let packed = with_manifest(files.clone(), b"{}".to_vec());
        assert_eq!(packed.len(), 4);
        assert_eq!(content_digest(&packed), digest);
        let changed = vec![file("a.json", b"[ ]"), file("b/c.json", b"{}")];
        assert_ne!(content_digest(&changed), digest);
    }

    #[test]
    fn manifest_errors_name_the_line() {
        let good = format!("{}  a\n", "0".repeat(64));
        assert_eq!(parse_manifest("").unwrap(), vec![]);
        assert_eq!(parse_manifest(&good).unwrap().len(), 1);
        let binary = format!("{} *a\r\n", "A".repeat(64));
        assert_eq!(parse_manifest(&binary).unwrap()[0].0, "a".repeat(64));
        for (text, line) in [
            (format!("{good}\n{good}"), 2),
            (format!("{good}{}  a\n", "1".repeat(64)), 2),
            (format!("{good}xyz  b\n"), 2),
            (format!("{}  b\n", "g".repeat(64)), 1),
            (format!("{} b\n", "0".repeat(64)), 1),
            (format!("{}  \n", "0".repeat(64)), 1),
            (format!("{good}\\{}  b\\q\n", "0".repeat(64)), 2),
        ] {
            assert_eq!(parse_manifest(&text).unwrap_err().line, line, "{text:?}");
        }
    }

    #[test]
    fn with_manifest_replaces_and_covers_submission() {
        let files = vec![
            file("r/a.json", b"1"),
            file(SUBMISSION_NAME, b"old"),
            file(MANIFEST_NAME, b"old"),
        ];
        let out = with_manifest(files, b"{}".to_vec());
        let paths: Vec<&str> = out.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, [MANIFEST_NAME, SUBMISSION_NAME, "r/a.json"]);
        assert_eq!(out[1].bytes, b"{}");
        let listed = parse_manifest(std::str::from_utf8(&out[0].bytes).unwrap()).unwrap();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0], (sha256_hex(b"{}"), SUBMISSION_NAME.to_owned()));
    }

    /// SUBMISSION.json names the runtime the machine descriptions declare, and has no
    /// `runtime` key without one (a folder of the suite's scripts packs as it did).
    #[test]
    fn the_declared_runtime_is_recorded_only_when_there_is_one() {
        let node = |host: &str, tool: &str, libtorch: Option<&str>| SystemInfo {
            hostname: host.into(),
            tool: tool.into(),
            libtorch: libtorch.map(str::to_owned),
            ..SystemInfo::default()
        };
        let run = |v: &str| Some(Runtime::mlbench_run(Some(v.into())));
        let older = node("a", "mlbench 0.1.0", Some("2.13.0"));
        assert_eq!(
            SubmissionInfo::declared_runtime(std::slice::from_ref(&older)),
            run("2.13.0")
        );
        let mut newer = node("b", "mlbench 0.2.0", None);
        newer.runtime = run("2.12.0");
        assert_eq!(
            SubmissionInfo::declared_runtime(&[older, newer]),
            run("2.12.0/2.13.0")
        );
        assert_eq!(
            SubmissionInfo::declared_runtime(&[node("c", "other", None)]),
            None
        );
        assert_eq!(SubmissionInfo::declared_runtime(&[]), None);
        let mut info = SubmissionInfo {
            tool: "mlbench 0.1.0".into(),
            track: Track::Baseline,
            suite: None,
            jobs_file: None,
            files: 0,
            report_files: 0,
            entries: 0,
            runs: 0,
            gpus: 0,
            benches: 0,
            errors: 0,
            warnings: 0,
            schema_version: SUBMISSION_SCHEMA_VERSION,
            systems: Vec::new(),
            runtime: None,
            allowed_errors: false,
            telemetry: Vec::new(),
            profiles: Vec::new(),
            left_out: Vec::new(),
        };
        let text = String::from_utf8(info.to_json().unwrap()).unwrap();
        assert!(!text.contains("runtime"), "{text}");
        info.runtime = run("2.13.0");
        let text = String::from_utf8(info.to_json().unwrap()).unwrap();
        assert!(
            text.contains(
                "\"runtime\": {\n    \"kind\": \"mlbench-run\",\n    \"version\": \"2.13.0\"\n  }"
            ),
            "{text}"
        );
        assert_eq!(SubmissionInfo::from_json(text.as_bytes()).unwrap(), info);
    }

    #[test]
    fn telemetry_files_are_named_only_when_there_are_some() {
        let files = [
            SubmittedFile::new("output1/telemetry/vae.0.jsonl", ""),
            SubmittedFile::new("output0/telemetry/vae.1.2.jsonl", ""),
            SubmittedFile::new("output0/telemetry/vae.1.jsonl.part", ""),
            SubmittedFile::new("output0/fast_0.json", "[]"),
            SubmittedFile::new("notes.jsonl", ""),
        ];
        let listed = SubmissionInfo::telemetry_of(&files);
        assert_eq!(
            listed,
            [
                "output0/telemetry/vae.1.2.jsonl",
                "output1/telemetry/vae.0.jsonl"
            ]
        );
        let text = r#"{"track": "baseline", "schema_version": 1}"#;
        let mut info = SubmissionInfo::from_json(text.as_bytes()).unwrap();
        assert!(info.telemetry.is_empty(), "an older file reads with none");
        let json = String::from_utf8(info.to_json().unwrap()).unwrap();
        assert!(!json.contains("telemetry"), "{json}");
        info.telemetry = listed;
        let json = String::from_utf8(info.to_json().unwrap()).unwrap();
        assert!(
            json.ends_with(
                "\"telemetry\": [\n    \"output0/telemetry/vae.1.2.jsonl\",\n    \"output1/telemetry/vae.0.jsonl\"\n  ]\n}\n"
            ),
            "{json}"
        );
        assert_eq!(SubmissionInfo::from_json(json.as_bytes()).unwrap(), info);
    }
}
