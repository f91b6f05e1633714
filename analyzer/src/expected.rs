//! Which benches a submission is expected to have a result for.
//!
//! When the submission carries the jobs file it ran, the expected benches are that file's
//! jobs that the targets score (a run of a 3-job file is not scored over 17 benches, and
//! an old-era submission does not lose PM and ST for a `scaling` job its suite never had).
//! Otherwise they are the targets' benches. A bench expected and absent fails, as before;
//! whether the jobs file itself dropped a baseline job is `validate`'s `jobs.missing-job`.

use mlbench_schema::{JobsFile, TargetTable};
use serde::Serialize;

/// Where the expected benches come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExpectedFrom {
    /// The jobs file the submission carries.
    Jobs,
    /// The target table (no usable jobs file).
    Targets,
}

impl ExpectedFrom {
    /// The JSON token.
    pub fn as_str(self) -> &'static str {
        match self {
            ExpectedFrom::Jobs => "jobs",
            ExpectedFrom::Targets => "targets",
        }
    }
}

/// The benches expected, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    /// Their source.
    pub from: ExpectedFrom,
    /// The jobs file, when they come from one (as named in the submission).
    pub jobs_file: Option<String>,
    /// The benches, sorted.
    pub benches: Vec<String>,
}

impl Expected {
    /// Every bench of the table not excluded.
    pub fn from_targets(targets: &TargetTable) -> Expected {
        let mut benches: Vec<String> = targets
            .required_benches()
            .map(|t| t.bench.clone())
            .collect();
        benches.sort();
        benches.dedup();
        Expected {
            from: ExpectedFrom::Targets,
            jobs_file: None,
            benches,
        }
    }

    /// The jobs of `jobs` that are benches of the table not excluded.
    pub fn from_jobs(file: &str, jobs: &JobsFile, targets: &TargetTable) -> Expected {
        let mut benches: Vec<String> = jobs
            .jobs
            .iter()
            .map(|j| j.name.clone())
            .filter(|name| targets.required_benches().any(|t| t.bench == *name))
            .collect();
        benches.sort();
        benches.dedup();
        Expected {
            from: ExpectedFrom::Jobs,
            jobs_file: Some(file.to_owned()),
            benches,
        }
    }

    /// From the jobs file picked among a submission's (see [`pick_jobs_file`]), else
    /// from the targets.
    pub fn new(jobs: Option<&(String, JobsFile)>, targets: &TargetTable) -> Expected {
        match jobs {
            Some((file, jobs)) => Expected::from_jobs(file, jobs, targets),
            None => Expected::from_targets(targets),
        }
    }

    /// Whether `bench` is expected.
    pub fn contains(&self, bench: &str) -> bool {
        self.benches
            .binary_search_by(|b| b.as_str().cmp(bench))
            .is_ok()
    }
}

/// The jobs file a submission ran, among the jobs files found in it (`(name, bytes)`):
/// the one named `<suite>.json`, else the only one (copies with the same bytes count as
/// one). `Err` says why none was taken (several candidates, or the one found does not
/// parse); `Ok(None)` when there is none.
pub fn pick_jobs_file(
    suite: &str,
    candidates: &[(String, Vec<u8>)],
) -> Result<Option<(String, JobsFile)>, String> {
    let own = format!("{suite}.json");
    let named: Vec<&(String, Vec<u8>)> = candidates
        .iter()
        .filter(|(name, _)| name.rsplit('/').next() == Some(own.as_str()))
        .collect();
    // Several copies of one file (a folder of vendors each with its jobs file) are one.
    let all_same = |files: &[&(String, Vec<u8>)]| files.windows(2).all(|w| w[0].1 == w[1].1);
    let everything: Vec<&(String, Vec<u8>)> = candidates.iter().collect();
    let chosen = match (named.as_slice(), candidates) {
        ([one], _) => *one,
        ([], [one]) => one,
        ([], []) => return Ok(None),
        (many, _) if many.len() > 1 && all_same(many) => many[0],
        ([], _) if all_same(&everything) => everything[0],
        (many, all) => {
            let names: Vec<&str> = if many.is_empty() {
                all.iter().map(|(n, _)| n.as_str()).collect()
            } else {
                many.iter().map(|(n, _)| n.as_str()).collect()
            };
            return Err(format!(
                "several jobs files ({}), none taken",
                names.join(", ")
            ));
        }
    };
    let (name, bytes) = chosen;
    JobsFile::parse(name, bytes)
        .map(|jobs| Some((name.clone(), jobs)))
        .map_err(|e| format!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlbench_schema::Scoring;

    fn jobs(names: &[&str]) -> Vec<u8> {
        let jobs: Vec<String> = names
            .iter()
            .map(|n| format!(r#"{{"name": "{n}", "cmd": "./{n}/run.sh", "args": {{}}}}"#))
            .collect();
        format!("[{}]", jobs.join(", ")).into_bytes()
    }

    #[test]
    fn jobs_file_narrows_the_targets() {
        let rtx = TargetTable::builtin(Scoring::Score, "RTX").unwrap();
        let all = Expected::from_targets(&rtx);
        // 20 rows, the 3 multi-GPU ones excluded.
        assert_eq!(all.benches.len(), 17);
        assert_eq!(all.from, ExpectedFrom::Targets);
        // A 3-job file: two scored benches and one the table does not know.
        let picked = pick_jobs_file(
            "mine",
            &[("mine.json".into(), jobs(&["vae", "cart", "nope"]))],
        )
        .unwrap()
        .unwrap();
        let e = Expected::new(Some(&picked), &rtx);
        assert_eq!(e.benches, ["cart", "vae"]);
        assert_eq!(e.from, ExpectedFrom::Jobs);
        assert!(e.contains("vae") && !e.contains("nope") && !e.contains("scaling"));
        // fast.json has no scaling job: 16 of the 17.
        let fast = JobsFile::builtin("fast").unwrap();
        let e = Expected::from_jobs("fast.json", &fast, &rtx);
        assert_eq!(e.benches.len(), 16);
        assert!(!e.contains("scaling") && !e.contains("dcgan_all"));
    }

    #[test]
    fn picking_the_jobs_file() {
        let a = ("a/fast.json".to_owned(), jobs(&["vae"]));
        let b = ("other.json".to_owned(), jobs(&["cart"]));
        assert_eq!(pick_jobs_file("fast", &[]), Ok(None));
        let (name, _) = pick_jobs_file("fast", &[a.clone(), b.clone()])
            .unwrap()
            .unwrap();
        assert_eq!(name, "a/fast.json");
        let (name, _) = pick_jobs_file("fast", std::slice::from_ref(&b))
            .unwrap()
            .unwrap();
        assert_eq!(name, "other.json");
        // Copies of one jobs file count as one (the first is named).
        let copy = ("b/fast.json".to_owned(), a.1.clone());
        let (name, _) = pick_jobs_file("fast", &[a.clone(), copy, b.clone()])
            .unwrap()
            .unwrap();
        assert_eq!(name, "a/fast.json");
        let c = ("c.json".to_owned(), jobs(&["x"]));
        assert_eq!(
            pick_jobs_file("fast", &[b.clone(), c]),
            Err("several jobs files (other.json, c.json), none taken".to_owned())
        );
        let broken = ("fast.json".to_owned(), b"[{\"name\": 3}]".to_vec());
        assert!(
            pick_jobs_file("fast", &[broken])
                .unwrap_err()
                .contains("fast.json")
        );
    }
}
