//! The version rules' oracle backed by a git repository: bench → script (the scripts map,
//! else the only `.py` the jobs file's `cmd` folder would point to is not guessed), then
//! [`crate::repo::ScriptRepo::check`].

use crate::repo::{RepoError, ScriptRepo, VersionVerdict};
use crate::rules::versions::{VersionCheck, VersionOracle};
use mlbench_schema::scripts::ScriptMap;
use std::path::Path;

/// Checks versions against `repo` with `scripts` mapping benches to scripts.
pub struct RepoOracle {
    /// The repository at the revision to match.
    pub repo: ScriptRepo,
    /// bench → script path in the repository.
    pub scripts: ScriptMap,
    /// The revision as given, for messages.
    pub rev: String,
}

impl RepoOracle {
    /// The repository at `path` at revision `rev`, with the shipped scripts map and, over
    /// it, the entries of the file `scripts` when one is given.
    pub fn open(path: &Path, rev: &str, scripts: Option<&Path>) -> Result<RepoOracle, RepoError> {
        let repo = ScriptRepo::open(path, Some(rev))?;
        let builtin = ScriptMap::builtin();
        let scripts = match scripts {
            Some(file) => ScriptMap::load(file)?.merged_over(builtin),
            None => builtin,
        };
        let rev = rev.to_owned();
        Ok(RepoOracle { repo, scripts, rev })
    }
}

impl VersionOracle for RepoOracle {
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
