//! Checks a report's `version` against the benchmark's git repository (`--repo PATH
//! [--rev REV]`).
//!
//! The suite's `version` is the first 10 hex digits of the SHA-256 of the entry script's
//! bytes (docs/suite.md#version), not a git hash. A vendor may still have written a commit id
//! there, so
//! a version is accepted either as the script's hash at REV or as a commit prefix, and the
//! verdict says which. Everything is read from the object database: no checkout, and no
//! work-tree file is ever read, so a bare clone is enough.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use git2::{Commit, ObjectType, Oid, Repository, Sort};
use mlbench_schema::unique_id::script_version;

/// The most commits the history search for [`VersionVerdict::OtherRevision`] looks at, per
/// script, newest first by commit time across REV and all branches and tags. Older commits
/// are not searched, so a version from a script older than that is reported as
/// [`VersionVerdict::Unknown`]; the bound keeps a check of a huge monorepo to seconds.
pub const HISTORY_COMMIT_LIMIT: usize = 20_000;

/// The most commits named in a [`VersionVerdict::OtherRevision`].
pub const MAX_LISTED_COMMITS: usize = 5;

/// Length of the short commit ids in verdicts and descriptions.
const SHORT_ID_LEN: usize = 10;

/// Shortest version accepted as a commit prefix: a shorter one is too ambiguous to name a
/// commit, and git itself never abbreviates below 7.
const MIN_COMMIT_PREFIX: usize = 7;

/// Longest commit prefix (a full SHA-1 commit id).
const MAX_COMMIT_PREFIX: usize = 40;

/// Why a repository could not be opened at a revision.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The path is not (inside) a git repository.
    #[error("{}: not a git repository", path.display())]
    NotARepository {
        /// The path given.
        path: PathBuf,
        /// What libgit2 said.
        #[source]
        source: git2::Error,
    },
    /// The revision does not resolve in the repository.
    #[error("{}: revision `{rev}` not found", path.display())]
    RevisionNotFound {
        /// The repository path given.
        path: PathBuf,
        /// The revision given.
        rev: String,
        /// What libgit2 said.
        #[source]
        source: git2::Error,
    },
    /// The revision resolves, but not to a commit (e.g. a tree or blob id).
    #[error("{}: revision `{rev}` is not a commit", path.display())]
    NotACommit {
        /// The repository path given.
        path: PathBuf,
        /// The revision given.
        rev: String,
        /// What libgit2 said.
        #[source]
        source: git2::Error,
    },
    /// The map of benches to scripts does not read.
    #[error(transparent)]
    Scripts(#[from] mlbench_schema::scripts::ScriptsError),
}

mlbench_schema::classify_all!(Input: RepoError);

/// How a report's `version` relates to the benchmark's repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionVerdict {
    /// version == script hash at REV.
    ScriptAtRev,
    /// version is a (≥7 hex digit, unambiguous) prefix of a commit, and the script's blob at
    /// that commit is the same as at REV.
    CommitSameScript {
        /// The commit's full hex id.
        commit: String,
    },
    /// version is a commit prefix but the script differs between that commit and REV (or is
    /// absent at that commit).
    CommitOtherScript {
        /// The commit's full hex id.
        commit: String,
    },
    /// version is the script hash of another revision of the script: the commits (short
    /// 10-hex ids, oldest first, at most 5) where the script had that content.
    ///
    /// The commits listed are those that introduced that content (the script differs in
    /// every parent), so a content kept over many commits is named once.
    OtherRevision {
        /// Short ids of the commits that introduced that content, oldest first.
        commits: Vec<String>,
        /// The script's hash at REV.
        expected: String,
    },
    /// the script is not in REV's tree.
    NoScript,
    /// none of the above; `expected` = the hash at REV.
    Unknown {
        /// The script's hash at REV.
        expected: String,
    },
}

impl VersionVerdict {
    /// True when the version designates exactly the script at REV, either as its hash or
    /// as a commit whose copy of the script is the one at REV.
    pub fn matches_rev(&self) -> bool {
        matches!(
            self,
            VersionVerdict::ScriptAtRev | VersionVerdict::CommitSameScript { .. }
        )
    }
}

impl fmt::Display for VersionVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionVerdict::ScriptAtRev => write!(f, "the script's hash at REV"),
            VersionVerdict::CommitSameScript { commit } => write!(
                f,
                "commit {}, whose copy of the script is the one at REV",
                short(commit)
            ),
            VersionVerdict::CommitOtherScript { commit } => write!(
                f,
                "commit {}, whose copy of the script differs from the one at REV",
                short(commit)
            ),
            VersionVerdict::OtherRevision { commits, expected } => write!(
                f,
                "the script's hash as of commit{} {} (another revision; at REV it is {expected})",
                if commits.len() > 1 { "s" } else { "" },
                commits.join(", ")
            ),
            VersionVerdict::NoScript => write!(f, "no such script at REV"),
            VersionVerdict::Unknown { expected } => write!(
                f,
                "neither the script's hash in its history nor a commit (at REV it is {expected})"
            ),
        }
    }
}

/// The benchmark repository at one revision, with caches for repeated checks.
///
/// Not `Sync` (git2's `Repository` is not): use one per thread.
pub struct ScriptRepo {
    repo: Repository,
    /// The revision as given (for descriptions).
    rev_name: String,
    rev: Oid,
    /// Suite version of each blob already hashed, so a blob is read and hashed once.
    blob_versions: RefCell<HashMap<Oid, String>>,
    /// Per normalized script path: its blob at REV (None when absent).
    blobs_at_rev: RefCell<HashMap<String, Option<Oid>>>,
    /// Per normalized script path: version → commits that introduced it (built lazily).
    histories: RefCell<HashMap<String, HashMap<String, Vec<String>>>>,
}

impl fmt::Debug for ScriptRepo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptRepo")
            .field("path", &self.repo.path())
            .field("rev", &self.rev_name)
            .field("commit", &self.rev)
            .finish_non_exhaustive()
    }
}

impl ScriptRepo {
    /// Opens the repository at `path` (bare, a work tree, or a folder inside a work tree)
    /// and resolves `rev` (default `HEAD`) to a commit.
    pub fn open(path: &Path, rev: Option<&str>) -> Result<ScriptRepo, RepoError> {
        let repo = match Repository::open(path) {
            Ok(repo) => repo,
            // A folder inside a work tree is not itself a repository: look upward for it.
            Err(_) => Repository::discover(path).map_err(|source| RepoError::NotARepository {
                path: path.to_path_buf(),
                source,
            })?,
        };
        let rev_name = rev.unwrap_or("HEAD").to_owned();
        let rev = resolve(&repo, path, &rev_name)?;
        Ok(ScriptRepo {
            repo,
            rev_name,
            rev,
            blob_versions: RefCell::default(),
            blobs_at_rev: RefCell::default(),
            histories: RefCell::default(),
        })
    }

    /// Full hex id of the commit REV resolved to.
    pub fn rev_commit(&self) -> String {
        self.rev.to_string()
    }

    /// The suite version of the script at repo-relative path `script` in REV's tree; None
    /// when there is no such file (or the path is absolute or leaves the repository).
    pub fn script_version_at_rev(&self, script: &str) -> Option<String> {
        let blob = self.blob_at_rev(script)?;
        self.blob_version(blob)
    }

    /// Says how `version` (from a report of the bench whose entry script is `script`,
    /// repo-relative) relates to the repository; see [`VersionVerdict`] for the order of
    /// the rules.
    pub fn check(&self, script: &str, version: &str) -> VersionVerdict {
        let Some(rev_blob) = self.blob_at_rev(script) else {
            return VersionVerdict::NoScript;
        };
        let Some(expected) = self.blob_version(rev_blob) else {
            // The tree names a blob the object database cannot read: nothing to compare.
            return VersionVerdict::NoScript;
        };
        if version == expected {
            return VersionVerdict::ScriptAtRev;
        }
        if let Some(commit) = self.find_commit_prefix(version) {
            let same = self.blob_in_commit(&commit, script) == Some(rev_blob);
            let commit = commit.id().to_string();
            return if same {
                VersionVerdict::CommitSameScript { commit }
            } else {
                VersionVerdict::CommitOtherScript { commit }
            };
        }
        match self.revisions_with_version(script, version) {
            Some(commits) => VersionVerdict::OtherRevision { commits, expected },
            None => VersionVerdict::Unknown { expected },
        }
    }

    /// Says in words which way a verdict matched, naming REV and its commit.
    pub fn describe(&self, verdict: &VersionVerdict) -> String {
        let rev = format!("{} ({})", self.rev_name, short(&self.rev.to_string()));
        verdict.to_string().replace("REV", &rev)
    }

    /// The blob of `script` at REV, cached per path.
    fn blob_at_rev(&self, script: &str) -> Option<Oid> {
        let key = normalize(script)?;
        if let Some(found) = self.blobs_at_rev.borrow().get(&key) {
            return *found;
        }
        let blob = self
            .repo
            .find_commit(self.rev)
            .ok()
            .and_then(|commit| blob_at(&commit, &key));
        self.blobs_at_rev.borrow_mut().insert(key, blob);
        blob
    }

    /// The blob of `script` in `commit`'s tree, if any.
    fn blob_in_commit(&self, commit: &Commit<'_>, script: &str) -> Option<Oid> {
        blob_at(commit, &normalize(script)?)
    }

    /// The suite version of a blob, hashed once per blob id.
    fn blob_version(&self, blob: Oid) -> Option<String> {
        if let Some(version) = self.blob_versions.borrow().get(&blob) {
            return Some(version.clone());
        }
        let version = script_version(self.repo.find_blob(blob).ok()?.content());
        self.blob_versions
            .borrow_mut()
            .insert(blob, version.clone());
        Some(version)
    }

    /// The commit `version` is a prefix of, when it is 7–40 lowercase hex digits and names
    /// exactly one commit; an ambiguous prefix (or one naming another kind of object) is
    /// not a commit.
    fn find_commit_prefix(&self, version: &str) -> Option<Commit<'_>> {
        let hex = version
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex || !(MIN_COMMIT_PREFIX..=MAX_COMMIT_PREFIX).contains(&version.len()) {
            return None;
        }
        self.repo.find_commit_by_prefix(version).ok()
    }

    /// The commits (short ids, oldest first, at most [`MAX_LISTED_COMMITS`]) that
    /// introduced a content of `script` whose suite version is `version`.
    fn revisions_with_version(&self, script: &str, version: &str) -> Option<Vec<String>> {
        let key = normalize(script)?;
        if !self.histories.borrow().contains_key(&key) {
            let history = self.build_history(&key);
            self.histories.borrow_mut().insert(key.clone(), history);
        }
        self.histories
            .borrow()
            .get(&key)
            .and_then(|history| history.get(version))
            .cloned()
    }

    /// Walks the newest [`HISTORY_COMMIT_LIMIT`] commits reachable from REV and from all
    /// branches, remote branches and tags, and indexes which commits introduced each
    /// content of `path` (by suite version). A walk error ends the walk early: the index
    /// then covers what was read, which only makes more versions `Unknown`.
    fn build_history(&self, path: &str) -> HashMap<String, Vec<String>> {
        // Per commit seen: its blob at `path` and its parents, to find where each blob
        // content was introduced once the walk is done.
        let mut seen: HashMap<Oid, (Option<Oid>, Vec<Oid>, i64)> = HashMap::new();
        let mut order: Vec<Oid> = Vec::new();
        if let Ok(mut walk) = self.repo.revwalk() {
            // TIME alone streams newest first without preparing the whole graph, which is
            // what makes the commit bound cheap.
            let pushed = walk.set_sorting(Sort::TIME).is_ok() && walk.push(self.rev).is_ok();
            if pushed {
                for glob in ["refs/heads", "refs/remotes", "refs/tags"] {
                    // A failing glob only loses those refs: REV alone is still searched.
                    let _ignored = walk.push_glob(glob);
                }
                for oid in walk.take(HISTORY_COMMIT_LIMIT) {
                    let Ok(oid) = oid else { break };
                    let Ok(commit) = self.repo.find_commit(oid) else {
                        break;
                    };
                    let blob = blob_at(&commit, path);
                    let parents = commit.parent_ids().collect();
                    seen.insert(oid, (blob, parents, commit.time().seconds()));
                    order.push(oid);
                }
            }
        }

        // (time, walk position) per version, for oldest-first ordering; walk position
        // breaks ties in favour of the ancestor (visited later).
        let mut found: HashMap<String, Vec<(i64, usize, Oid)>> = HashMap::new();
        for (position, oid) in order.iter().enumerate() {
            let Some((Some(blob), parents, time)) = seen.get(oid) else {
                continue;
            };
            let inherited = parents.iter().any(|parent| {
                let parent_blob = match seen.get(parent) {
                    Some((parent_blob, _, _)) => *parent_blob,
                    // Beyond the bound: read that one commit rather than guess.
                    None => self
                        .repo
                        .find_commit(*parent)
                        .ok()
                        .and_then(|c| blob_at(&c, path)),
                };
                parent_blob == Some(*blob)
            });
            if inherited {
                continue;
            }
            if let Some(version) = self.blob_version(*blob) {
                found
                    .entry(version)
                    .or_default()
                    .push((*time, usize::MAX - position, *oid));
            }
        }
        found
            .into_iter()
            .map(|(version, mut commits)| {
                commits.sort();
                let ids = commits
                    .into_iter()
                    .take(MAX_LISTED_COMMITS)
                    .map(|(_, _, oid)| short(&oid.to_string()).to_owned())
                    .collect();
                (version, ids)
            })
            .collect()
    }
}

/// The commit id `rev` names in `repo` (opened from `path`, for the messages).
fn resolve(repo: &Repository, path: &Path, rev: &str) -> Result<Oid, RepoError> {
    let object = repo
        .revparse_single(rev)
        .map_err(|source| RepoError::RevisionNotFound {
            path: path.to_path_buf(),
            rev: rev.to_owned(),
            source,
        })?;
    let commit = object
        .peel_to_commit()
        .map_err(|source| RepoError::NotACommit {
            path: path.to_path_buf(),
            rev: rev.to_owned(),
            source,
        })?;
    Ok(commit.id())
}

/// The blob id at `path` in a commit's tree (None when absent or not a file).
fn blob_at(commit: &Commit<'_>, path: &str) -> Option<Oid> {
    let tree = commit.tree().ok()?;
    let entry = tree.get_path(Path::new(path)).ok()?;
    (entry.kind() == Some(ObjectType::Blob)).then(|| entry.id())
}

/// A repo-relative path in git's form (`a/b/c.py`), or None when it is empty, absolute or
/// climbs out with `..`: such a path cannot name a file of the tree.
fn normalize(script: &str) -> Option<String> {
    let unified = script.replace('\\', "/");
    let mut parts = Vec::new();
    for component in Path::new(&unified).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The first [`SHORT_ID_LEN`] characters of a hex id.
fn short(id: &str) -> &str {
    id.get(..SHORT_ID_LEN).unwrap_or(id)
}
