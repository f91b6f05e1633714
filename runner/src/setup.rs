//! What `mlbench run` settles before the first copy: the environment the jobs' `$VAR`s
//! expand from, the host's name and cores, and the output folder (no earlier streams
//! appended to by accident, the jobs file copied beside the reports).

use crate::plan::Plan;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why the output folder cannot take this run.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// Report streams an earlier run left.
    #[error("{}{}: report streams of an earlier run; not adding to them", first.display(), if *more == 0 { String::new() } else { format!(" and {more} more") })]
    EarlierReports {
        /// The first, by path.
        first: PathBuf,
        /// How many more.
        more: usize,
    },
    /// A different jobs file of the same name is already in the output folder.
    #[error("{}: a different jobs file of that name is already there; not replacing it", .0.display())]
    OtherJobsFile(PathBuf),
    /// A file or folder could not be read or written.
    #[error("{}: cannot {action}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// `read`, `write`, `create`.
        action: &'static str,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl mlbench_schema::class::Classify for SetupError {
    fn class(&self) -> mlbench_schema::class::ErrorClass {
        use mlbench_schema::class::ErrorClass;
        match self {
            SetupError::EarlierReports { .. } | SetupError::OtherJobsFile(_) => ErrorClass::Input,
            SetupError::Io { .. } => ErrorClass::Internal,
        }
    }
}

fn io(path: &Path, action: &'static str) -> impl FnOnce(std::io::Error) -> SetupError {
    let path = path.to_path_buf();
    move |source| SetupError::Io {
        path,
        action,
        source,
    }
}

/// CPU cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The host's name, as the entries record it (`socket.gethostname()`).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "localhost".into())
}

/// The environment the jobs' `$VAR`s expand from: `env`, with the folders the suite's
/// config.env exports (`DATA_DIRECTORY=$BASE/data`, `TEMP_DIRECTORY=$BASE/tmp`,
/// `FAKE_DATASET=1`) filled in where unset, from `$BASE`, or else: the data in a cache
/// folder outside `out` (`$XDG_CACHE_HOME/mlbench/data`, `~/.cache/mlbench/data`; the
/// loader makes its synthetic images there once, and a submission must not carry them),
/// the temporary folder in `out`. Returns the notes saying what was filled in.
pub fn suite_env(
    mut env: BTreeMap<String, String>,
    out: &Path,
) -> (BTreeMap<String, String>, Vec<(&'static str, String)>) {
    let mut notes = Vec::new();
    let base = env.get("BASE").filter(|b| !b.is_empty()).cloned();
    for (var, sub) in [("DATA_DIRECTORY", "data"), ("TEMP_DIRECTORY", "tmp")] {
        if env.get(var).is_some_and(|v| !v.is_empty()) {
            continue;
        }
        let (value, from) = match (&base, sub) {
            (Some(b), _) => (format!("{b}/{sub}"), "$BASE"),
            (None, "data") => (data_cache(&env).display().to_string(), "the cache folder"),
            (None, _) => (out.join(sub).display().to_string(), "--out-dir"),
        };
        notes.push((
            var,
            format!(
                "${var} is not set: {value} (from {from}; `mlbench data prepare` writes the data sets there)"
            ),
        ));
        env.insert(var.to_owned(), value);
    }
    env.entry("FAKE_DATASET".to_owned())
        .or_insert_with(|| "1".to_owned());
    (env, notes)
}

/// What the suite's config.env exports, from the environment `env` the jobs expand from
/// ([`suite_env`]'s): each copy's process gets them.
pub fn exports(env: &BTreeMap<String, String>) -> Vec<(String, String)> {
    ["DATA_DIRECTORY", "TEMP_DIRECTORY", "FAKE_DATASET"]
        .iter()
        .filter_map(|k| env.get(*k).map(|v| ((*k).to_owned(), v.clone())))
        .collect()
}

/// Where datasets go without `$BASE` or `$DATA_DIRECTORY`.
fn data_cache(env: &BTreeMap<String, String>) -> PathBuf {
    let nonempty = |k: &str| env.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let cache = nonempty("XDG_CACHE_HOME")
        .or_else(|| nonempty("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("mlbench").join("data")
}

/// Refuses to append to report streams an earlier run left: two runs in one stream read
/// as duplicated entries (`--append` when that is meant).
pub fn refuse_earlier_reports(plans: &[Plan]) -> Result<(), SetupError> {
    let mut earlier: Vec<&Path> = plans
        .iter()
        .flat_map(|p| &p.executions)
        .flat_map(|e| &e.copies)
        .map(|c| c.report.as_path())
        .filter(|p| p.exists())
        .collect();
    earlier.sort();
    earlier.dedup();
    match earlier.as_slice() {
        [] => Ok(()),
        [first, rest @ ..] => Err(SetupError::EarlierReports {
            first: first.to_path_buf(),
            more: rest.len(),
        }),
    }
}

/// Puts a copy of the jobs file (its bytes `text`) in `out` as `<jobs_name>.json`, so the
/// output says what it ran (the validator reads it there). An identical file is left as
/// is; a different one is never replaced.
pub fn copy_jobs_file(text: &[u8], out: &Path, jobs_name: &str) -> Result<(), SetupError> {
    let dest = out.join(format!("{jobs_name}.json"));
    match std::fs::read(&dest) {
        Ok(existing) if existing == text => return Ok(()),
        Ok(_) => return Err(SetupError::OtherJobsFile(dest)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(&dest, "read")(e)),
    }
    std::fs::create_dir_all(out).map_err(io(out, "create"))?;
    // Written beside and renamed: nodes sharing OUT (--first-run, Slurm) never read half a
    // file, and an identical copy renamed over another changes nothing.
    let temp = out.join(format!(
        ".{jobs_name}.json.{}.{}",
        hostname(),
        std::process::id()
    ));
    std::fs::write(&temp, text).map_err(io(&temp, "write"))?;
    std::fs::rename(&temp, &dest).map_err(io(&dest, "write"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_folders_come_from_base_or_the_output_folder() {
        let env: BTreeMap<String, String> = [("BASE".to_owned(), "/b".to_owned())].into();
        let (env, notes) = suite_env(env, Path::new("/out"));
        assert_eq!(env["DATA_DIRECTORY"], "/b/data");
        assert_eq!(env["TEMP_DIRECTORY"], "/b/tmp");
        assert_eq!(env["FAKE_DATASET"], "1");
        assert_eq!(notes.len(), 2);
        let cached: BTreeMap<String, String> = [("HOME".to_owned(), "/home/v".to_owned())].into();
        let (env, _) = suite_env(cached, Path::new("/out"));
        assert_eq!(env["DATA_DIRECTORY"], "/home/v/.cache/mlbench/data");
        assert_eq!(env["TEMP_DIRECTORY"], "/out/tmp");
        let set: BTreeMap<String, String> = [("DATA_DIRECTORY".to_owned(), "/d".to_owned())].into();
        let (env, notes) = suite_env(set, Path::new("/out"));
        assert_eq!(env["DATA_DIRECTORY"], "/d");
        assert_eq!(env["TEMP_DIRECTORY"], "/out/tmp");
        assert_eq!(notes, [("TEMP_DIRECTORY", "$TEMP_DIRECTORY is not set: /out/tmp (from --out-dir; `mlbench data prepare` writes the data sets there)".to_owned())]);
    }

    #[test]
    fn the_jobs_file_is_copied_once_and_never_replaced_by_another() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        copy_jobs_file(b"{}", &out, "fast").unwrap();
        assert_eq!(std::fs::read(out.join("fast.json")).unwrap(), b"{}");
        copy_jobs_file(b"{}", &out, "fast").unwrap();
        let e = copy_jobs_file(b"{\"a\": 1}", &out, "fast").unwrap_err();
        assert!(matches!(e, SetupError::OtherJobsFile(_)), "{e}");
        assert_eq!(std::fs::read(out.join("fast.json")).unwrap(), b"{}");
    }
}
