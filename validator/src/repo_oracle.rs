//! The version rules' oracle backed by a git repository: bench → script (the scripts map,
//! else the only `.py` the jobs file's `cmd` folder would point to is not guessed), then
//! [`crate::repo::ScriptRepo::check`].

use crate::repo::{ScriptRepo, VersionVerdict};
use crate::rules::versions::{VersionCheck, VersionOracle};
use mlbench_schema::scripts::ScriptMap;

/// Checks versions against `repo` with `scripts` mapping benches to scripts.
pub struct RepoOracle<'a> {
    /// The repository at the revision to match.
    pub repo: &'a ScriptRepo,
    /// bench → script path in the repository.
    pub scripts: &'a ScriptMap,
    /// The revision as given, for messages.
    pub rev: &'a str,
}

impl VersionOracle for RepoOracle<'_> {
    fn check(&self, bench: &str, version: &str) -> VersionCheck {
        let Some(script) = self.scripts.script_for(bench) else {
            return VersionCheck::Problem(
                "version.no-script",
                format!("a script mapped to `{bench}`"),
                "no entry in the scripts map (add it with --scripts FILE)".into(),
            );
        };
        let at = format!("{script} at {}", self.rev);
        match self.repo.check(script, version) {
            VersionVerdict::ScriptAtRev => VersionCheck::Matched(format!("the hash of {at}")),
            VersionVerdict::CommitSameScript { commit } => VersionCheck::Matched(format!(
                "commit {commit}, whose {script} is the one at {}",
                self.rev
            )),
            VersionVerdict::CommitOtherScript { commit } => VersionCheck::Problem(
                "version.mismatch",
                format!("the hash of {at}, or a commit with the same {script}"),
                format!("{version}: commit {commit}, whose {script} differs"),
            ),
            VersionVerdict::OtherRevision { commits, expected } => VersionCheck::Problem(
                "version.mismatch",
                format!("{expected} (the hash of {at})"),
                format!("{version}: the hash of {script} at {}", commits.join(", ")),
            ),
            VersionVerdict::NoScript => VersionCheck::Problem(
                "version.no-script",
                format!("{script} in the tree at {}", self.rev),
                "absent".into(),
            ),
            VersionVerdict::Unknown { expected } => VersionCheck::Problem(
                "version.unknown",
                format!("{expected} (the hash of {at}) or a commit of the repository"),
                version.to_owned(),
            ),
        }
    }
}
