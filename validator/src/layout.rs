//! What each file of a submission is: a report file (and which run and GPU it belongs
//! to), a jobs file, the pack manifest, or something unexpected.

use crate::intake::SubmittedFile;
use mlbench_schema::reader::FileName;

pub use crate::pack::{MANIFEST_NAME, SUBMISSION_NAME};

/// What a file of a submission is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// A report file, with what its name says and the run it belongs to.
    Report {
        /// The parsed file name.
        name: FileName,
        /// The run: the folder of a legacy stream, `folder/R<run>` of a per-test file.
        run: String,
    },
    /// A `*.json` whose shape is a jobs list.
    Jobs,
    /// `MANIFEST.sha256` or `SUBMISSION.json` at the root, or a run's `summary.txt`.
    Pack,
    /// Anything else.
    Unknown,
}

/// The folder part of a `/`-separated path, `.` at the root.
pub fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or(".", |(dir, _)| dir)
}

/// The file-name part of a `/`-separated path.
pub fn base_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, name)| name)
}

/// Classifies one file. Jobs files are recognised by their content (a JSON array of
/// `{name, cmd, args}` objects), so their name does not matter.
pub fn classify(file: &SubmittedFile) -> Role {
    let path = file.path.as_str();
    if path == MANIFEST_NAME || path == SUBMISSION_NAME {
        return Role::Pack;
    }
    // run.py's (and `mlbench run`'s) per-run log sits beside the streams.
    if base_name(path) == "summary.txt" {
        return Role::Pack;
    }
    if let Some(name) = FileName::parse(base_name(path)) {
        let dir = parent(path);
        let run = match &name {
            FileName::Legacy { .. } => dir.to_owned(),
            FileName::PerTest { run, .. } if dir == "." => format!("R{run}"),
            FileName::PerTest { run, .. } => format!("{dir}/R{run}"),
        };
        return Role::Report { name, run };
    }
    if path.ends_with(".json") && looks_like_jobs_bytes(&file.bytes) {
        return Role::Jobs;
    }
    Role::Unknown
}

fn looks_like_jobs_bytes(bytes: &[u8]) -> bool {
    // Cheap pre-check before parsing: a jobs file is an array.
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'[') {
        return false;
    }
    mlbench_schema::pyjson::parse(bytes)
        .map(|v| mlbench_schema::jobs::looks_like_jobs(&v))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> SubmittedFile {
        SubmittedFile {
            path: path.into(),
            bytes: text.as_bytes().to_vec(),
        }
    }

    #[test]
    fn roles() {
        assert_eq!(
            classify(&file("output3/fast_2.json", "[")),
            Role::Report {
                name: FileName::Legacy {
                    suite: "fast".into(),
                    job_id: 2
                },
                run: "output3".into()
            }
        );
        let per_test = classify(&file(
            "e3/baselines.vae.R1.D0.20200106-160000-123456.json",
            "{}",
        ));
        assert!(matches!(per_test, Role::Report { run, .. } if run == "e3/R1"));
        assert_eq!(
            classify(&file(
                "fast.json",
                r#"[{"name": "a", "cmd": "./a/run.sh", "args": {}}]"#
            )),
            Role::Jobs
        );
        assert_eq!(classify(&file("notes.json", r#"{"a": 1}"#)), Role::Unknown);
        assert_eq!(classify(&file("output3/summary.txt", "")), Role::Pack);
        assert_eq!(classify(&file("notes.txt", "")), Role::Unknown);
        assert_eq!(classify(&file("MANIFEST.sha256", "")), Role::Pack);
        assert_eq!(classify(&file("x/MANIFEST.sha256", "")), Role::Unknown);
    }
}
