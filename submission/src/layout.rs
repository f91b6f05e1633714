//! What each file of a submission is: a report file (and which run it belongs to), a
//! jobs file, a file of the pack, or something unexpected. One classifier for every
//! reader: the folder discovery of `report` and the validator's intake.

use mlbench_schema::reader::FileName;

/// The manifest `mlbench pack` writes at the root (`sha256sum -c` format).
pub const MANIFEST_NAME: &str = "MANIFEST.sha256";
/// The submission's description `mlbench pack` writes at the root.
pub const SUBMISSION_NAME: &str = "SUBMISSION.json";
/// The per-run log run.py (and `mlbench run`) writes beside the streams.
pub const RUN_LOG_NAME: &str = "summary.txt";
/// The folder of the Slurm tasks' logs (`mlbench run --slurm --submit`).
pub const SLURM_LOG_DIR: &str = "slurm/";

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
    /// `MANIFEST.sha256`, `SUBMISSION.json` or a machine description (`system.json`,
    /// `system.<host>.json`) at the root, a run's `summary.txt`, or a Slurm task's log
    /// (`slurm/*.log`).
    Pack,
    /// A copy's telemetry file written by `mlbench run`: `*.jsonl` in a run's `telemetry`
    /// folder (`mlbench_schema::telemetry`).
    Telemetry,
    /// A copy's Chrome trace written by `mlbench run --profile`: `*.trace.json` in a run's
    /// `profiles` folder (`mlbench_schema::profile`).
    Profile,
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

/// Classifies the file at `path` (`/`-separated, relative to the submission's root).
/// Jobs files are recognised by their content (a JSON array of `{name, cmd, args}`
/// objects), so their name does not matter: `is_jobs` reads it, and is called only for
/// a `*.json` that is not a report.
pub fn classify(path: &str, is_jobs: impl FnOnce() -> bool) -> Role {
    if path == MANIFEST_NAME
        || path == SUBMISSION_NAME
        || base_name(path) == RUN_LOG_NAME
        || mlbench_schema::system::is_system_file(path)
        || (path.starts_with(SLURM_LOG_DIR) && path.ends_with(".log"))
    {
        return Role::Pack;
    }
    if let Some(name) = FileName::parse(base_name(path)) {
        let run = run_of(&name, parent(path));
        return Role::Report { name, run };
    }
    if base_name(parent(path)) == mlbench_schema::telemetry::TELEMETRY_FOLDER
        && path.ends_with(".jsonl")
    {
        return Role::Telemetry;
    }
    if mlbench_schema::profile::is_trace_path(path) {
        return Role::Profile;
    }
    if path.ends_with(".json") && is_jobs() {
        return Role::Jobs;
    }
    Role::Unknown
}

/// The run a report file belongs to: its folder for a legacy stream, `folder/R<run>` for
/// a per-test file (`R<run>` at the root).
pub fn run_of(name: &FileName, dir: &str) -> String {
    match name {
        FileName::Legacy { .. } => dir.to_owned(),
        FileName::PerTest { run, .. } if dir == "." => format!("R{run}"),
        FileName::PerTest { run, .. } => format!("{dir}/R{run}"),
    }
}

/// Whether `bytes` are a jobs file: a JSON array of `{name, cmd, args}` objects.
pub fn looks_like_jobs_bytes(bytes: &[u8]) -> bool {
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

    struct File {
        path: &'static str,
        bytes: &'static [u8],
    }

    fn file(path: &'static str, text: &'static str) -> File {
        File {
            path,
            bytes: text.as_bytes(),
        }
    }

    fn classify(f: &File) -> Role {
        super::classify(f.path, || looks_like_jobs_bytes(f.bytes))
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
        assert_eq!(classify(&file("system.json", "{}")), Role::Pack);
        assert_eq!(classify(&file("slurm/mlbench-12_0.log", "")), Role::Pack);
        assert_eq!(classify(&file("slurm/notes.txt", "")), Role::Unknown);
        assert_eq!(classify(&file("system.node1.json", "{}")), Role::Pack);
        assert_eq!(classify(&file("x/MANIFEST.sha256", "")), Role::Unknown);
        assert_eq!(
            classify(&file("output0/profiles/convnet.0.trace.json", "[")),
            Role::Profile
        );
        assert_eq!(
            classify(&file("output0/telemetry/convnet.0.jsonl", "")),
            Role::Telemetry
        );
        assert_eq!(
            classify(&file("telemetry/idle.cpu.jsonl", "")),
            Role::Telemetry
        );
        // A sampler's leftover (its copy died) and other files there stay unknown.
        assert_eq!(
            classify(&file("output0/telemetry/convnet.0.jsonl.part", "")),
            Role::Unknown
        );
        assert_eq!(
            classify(&file("output0/convnet.0.jsonl", "")),
            Role::Unknown
        );
    }
}
