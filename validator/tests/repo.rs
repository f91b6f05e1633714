//! The version checks against a git repository, on repositories built here with git2.
#![cfg(feature = "git")]

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use git2::{Commit, Oid, Repository, Signature, Time};
use mlbench_validator::repo::{RepoError, ScriptRepo, VersionVerdict};
use sha2::{Digest, Sha256};
use tempfile::TempDir;

const SCRIPT: &str = "regression/polynome/pytorch/main.py";
const OTHER: &str = "word_language_model/pytorch/main.py";
const V1: &[u8] = b"print('polynome v1')\n";
const V2: &[u8] = b"print('polynome v2')\n";
const V3: &[u8] = b"print('polynome v3, vendor tweak')\n";
const V4: &[u8] = b"print('polynome v4, tagged only')\n";
const WLM: &[u8] = b"print('word language model')\n";

/// The suite version computed independently of the code under test.
fn sha10(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    hex[..10].to_owned()
}

fn signature(n: i64) -> Signature<'static> {
    Signature::new(
        "Bench Vendor",
        "vendor@example.com",
        &Time::new(1_560_000_000 + n * 3600, 0),
    )
    .unwrap()
}

/// Writes a tree of `files` (repo-relative paths) into the object database.
fn write_tree(repo: &Repository, files: &[(&str, &[u8])]) -> Oid {
    #[derive(Default)]
    struct Dir {
        files: BTreeMap<String, Oid>,
        dirs: BTreeMap<String, Dir>,
    }
    fn write(repo: &Repository, dir: &Dir) -> Oid {
        let mut builder = repo.treebuilder(None).unwrap();
        for (name, blob) in &dir.files {
            builder.insert(name, *blob, 0o100644).unwrap();
        }
        for (name, sub) in &dir.dirs {
            builder.insert(name, write(repo, sub), 0o040000).unwrap();
        }
        builder.write().unwrap()
    }
    let mut root = Dir::default();
    for (path, content) in files {
        let mut parts: Vec<&str> = path.split('/').collect();
        let name = parts.pop().unwrap();
        let mut dir = &mut root;
        for part in parts {
            dir = dir.dirs.entry(part.to_owned()).or_default();
        }
        dir.files
            .insert(name.to_owned(), repo.blob(content).unwrap());
    }
    write(repo, &root)
}

/// Commits `files` as a tree built in the object database, updating `refname`.
fn commit_tree(
    repo: &Repository,
    refname: Option<&str>,
    parents: &[Oid],
    files: &[(&str, &[u8])],
    n: i64,
) -> Oid {
    let tree = repo.find_tree(write_tree(repo, files)).unwrap();
    let parents: Vec<Commit<'_>> = parents
        .iter()
        .map(|p| repo.find_commit(*p).unwrap())
        .collect();
    let parents: Vec<&Commit<'_>> = parents.iter().collect();
    let sig = signature(n);
    repo.commit(refname, &sig, &sig, &format!("commit {n}"), &tree, &parents)
        .unwrap()
}

/// Commits the work tree's `files` through the index, as `git add` + `git commit` would.
fn commit_work_tree(repo: &Repository, files: &[(&str, &[u8])], n: i64) -> Oid {
    let workdir = repo.workdir().unwrap().to_path_buf();
    let mut index = repo.index().unwrap();
    for (path, content) in files {
        let full = workdir.join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(&full, content).unwrap();
        index.add_path(Path::new(path)).unwrap();
    }
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let parent = repo.head().ok().map(|h| h.peel_to_commit().unwrap());
    let parents: Vec<&Commit<'_>> = parent.iter().collect();
    let sig = signature(n);
    repo.commit(
        Some("HEAD"),
        &sig,
        &sig,
        &format!("commit {n}"),
        &tree,
        &parents,
    )
    .unwrap()
}

/// The commits of the shared history.
struct History {
    /// Adds the script (v1) and the word language model.
    a: Oid,
    /// Changes the script to v2; HEAD.
    b: Oid,
    /// Branch `vendor-tweak` off B: script v3.
    c: Oid,
    /// Off A, reachable only from the annotated tag `vendor-release`: script v4.
    d: Oid,
}

/// Adds the branch, the tags and the tag-only commit on top of A and B.
fn add_refs(repo: &Repository, a: Oid, b: Oid) -> History {
    let c = commit_tree(
        repo,
        Some("refs/heads/vendor-tweak"),
        &[b],
        &[(SCRIPT, V3), (OTHER, WLM)],
        3,
    );
    let d = commit_tree(repo, None, &[a], &[(SCRIPT, V4), (OTHER, WLM)], 4);
    let d_obj = repo.find_object(d, None).unwrap();
    repo.tag("vendor-release", &d_obj, &signature(5), "release", false)
        .unwrap();
    let a_obj = repo.find_object(a, None).unwrap();
    repo.tag_lightweight("v1.0", &a_obj, false).unwrap();
    History { a, b, c, d }
}

/// A repository with a work tree, committed through the index, whose work-tree files are
/// then deleted (only `.git` is left).
fn work_tree_repo() -> (TempDir, History) {
    let dir = TempDir::new().unwrap();
    let repo = Repository::init(dir.path()).unwrap();
    let a = commit_work_tree(&repo, &[(SCRIPT, V1), (OTHER, WLM)], 1);
    let b = commit_work_tree(&repo, &[(SCRIPT, V2)], 2);
    let history = add_refs(&repo, a, b);
    for entry in fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap() != ".git" {
            fs::remove_dir_all(&path).unwrap();
        }
    }
    (dir, history)
}

/// The same history in a bare repository, built in the object database only.
fn bare_repo() -> (TempDir, History) {
    let dir = TempDir::new().unwrap();
    let repo = Repository::init_bare(dir.path()).unwrap();
    let a = commit_tree(&repo, Some("HEAD"), &[], &[(SCRIPT, V1), (OTHER, WLM)], 1);
    let b = commit_tree(&repo, Some("HEAD"), &[a], &[(SCRIPT, V2), (OTHER, WLM)], 2);
    let history = add_refs(&repo, a, b);
    (dir, history)
}

fn short(oid: Oid) -> String {
    oid.to_string()[..10].to_owned()
}

/// Every check of the history at HEAD = B.
fn assert_checks_at_head(path: &Path, h: &History) {
    let repo = ScriptRepo::open(path, None).unwrap();
    assert_eq!(repo.rev_commit(), h.b.to_string());
    assert_eq!(repo.script_version_at_rev(SCRIPT), Some(sha10(V2)));
    assert_eq!(repo.script_version_at_rev(OTHER), Some(sha10(WLM)));
    let expected = sha10(V2);

    assert_eq!(repo.check(SCRIPT, &sha10(V2)), VersionVerdict::ScriptAtRev);
    assert_eq!(
        repo.check(SCRIPT, &sha10(V1)),
        VersionVerdict::OtherRevision {
            commits: vec![short(h.a)],
            expected: expected.clone()
        }
    );
    assert_eq!(
        repo.check(SCRIPT, &sha10(V3)),
        VersionVerdict::OtherRevision {
            commits: vec![short(h.c)],
            expected: expected.clone()
        }
    );
    assert_eq!(
        repo.check(SCRIPT, &sha10(V4)),
        VersionVerdict::OtherRevision {
            commits: vec![short(h.d)],
            expected: expected.clone()
        }
    );
    assert_eq!(
        repo.check(SCRIPT, &short(h.b)),
        VersionVerdict::CommitSameScript {
            commit: h.b.to_string()
        }
    );
    assert_eq!(
        repo.check(SCRIPT, &short(h.a)),
        VersionVerdict::CommitOtherScript {
            commit: h.a.to_string()
        }
    );
    // The other bench's script did not change between A and B.
    assert_eq!(
        repo.check(OTHER, &short(h.a)),
        VersionVerdict::CommitSameScript {
            commit: h.a.to_string()
        }
    );
    assert_eq!(
        repo.check("nope/main.py", &sha10(V2)),
        VersionVerdict::NoScript
    );
    assert_eq!(repo.script_version_at_rev("nope/main.py"), None);
    assert_eq!(
        repo.check(SCRIPT, "0123456789"),
        VersionVerdict::Unknown {
            expected: expected.clone()
        }
    );
}

#[test]
fn checks_without_a_work_tree() {
    let (dir, h) = work_tree_repo();
    assert!(!dir.path().join(SCRIPT).exists());
    assert!(!dir.path().join("regression").exists());
    assert_checks_at_head(dir.path(), &h);
}

#[test]
fn checks_in_a_bare_repository() {
    let (dir, h) = bare_repo();
    assert!(Repository::open(dir.path()).unwrap().is_bare());
    assert_checks_at_head(dir.path(), &h);
}

#[test]
fn rev_selects_the_reference_revision() {
    let (dir, h) = bare_repo();
    for rev in [h.a.to_string(), "v1.0".to_owned(), short(h.a)] {
        let repo = ScriptRepo::open(dir.path(), Some(&rev)).unwrap();
        assert_eq!(repo.rev_commit(), h.a.to_string());
        assert_eq!(repo.check(SCRIPT, &sha10(V1)), VersionVerdict::ScriptAtRev);
        assert_eq!(
            repo.check(SCRIPT, &sha10(V2)),
            VersionVerdict::OtherRevision {
                commits: vec![short(h.b)],
                expected: sha10(V1)
            }
        );
        assert_eq!(
            repo.check(SCRIPT, &short(h.b)),
            VersionVerdict::CommitOtherScript {
                commit: h.b.to_string()
            }
        );
    }
    // A branch name and an annotated tag peel to their commits.
    let branch = ScriptRepo::open(dir.path(), Some("vendor-tweak")).unwrap();
    assert_eq!(branch.rev_commit(), h.c.to_string());
    assert_eq!(
        branch.check(SCRIPT, &sha10(V3)),
        VersionVerdict::ScriptAtRev
    );
    let tag = ScriptRepo::open(dir.path(), Some("vendor-release")).unwrap();
    assert_eq!(tag.rev_commit(), h.d.to_string());
}

#[test]
fn short_or_malformed_prefixes_are_not_commits() {
    let (dir, h) = bare_repo();
    let repo = ScriptRepo::open(dir.path(), None).unwrap();
    let unknown = VersionVerdict::Unknown {
        expected: sha10(V2),
    };
    let a = h.a.to_string();
    assert_eq!(repo.check(SCRIPT, &a[..5]), unknown);
    assert_eq!(repo.check(SCRIPT, &a[..6]), unknown);
    assert_eq!(repo.check(SCRIPT, &a[..10].to_uppercase()), unknown);
    assert_eq!(repo.check(SCRIPT, &format!("{}z", &a[..9])), unknown);
    assert_eq!(repo.check(SCRIPT, ""), unknown);
    // 7 digits and the full id are prefixes.
    let other = VersionVerdict::CommitOtherScript { commit: a.clone() };
    assert_eq!(repo.check(SCRIPT, &a[..7]), other);
    assert_eq!(repo.check(SCRIPT, &a), other);
    // A blob id prefix names no commit.
    let blob = Repository::open(dir.path()).unwrap().blob(V2).unwrap();
    assert_eq!(repo.check(SCRIPT, &blob.to_string()[..10]), unknown);
}

#[test]
fn repeated_checks_give_the_same_verdicts() {
    let (dir, h) = bare_repo();
    let repo = ScriptRepo::open(dir.path(), None).unwrap();
    for _ in 0..3 {
        for version in [sha10(V1), sha10(V3), "0123456789".to_owned()] {
            let first = repo.check(SCRIPT, &version);
            assert_eq!(repo.check(SCRIPT, &version), first);
        }
        assert_eq!(repo.check(OTHER, &sha10(WLM)), VersionVerdict::ScriptAtRev);
    }
    assert_eq!(
        repo.check(&format!("./{SCRIPT}"), &sha10(V1)),
        VersionVerdict::OtherRevision {
            commits: vec![short(h.a)],
            expected: sha10(V2)
        }
    );
    assert_eq!(
        repo.check("../main.py", &sha10(V2)),
        VersionVerdict::NoScript
    );
    assert_eq!(
        repo.check(&format!("/{SCRIPT}"), &sha10(V2)),
        VersionVerdict::NoScript
    );
    // A directory is not a script.
    assert_eq!(
        repo.check("regression", &sha10(V2)),
        VersionVerdict::NoScript
    );
}

#[test]
fn a_content_reintroduced_later_names_both_commits_oldest_first() {
    let (dir, h) = bare_repo();
    let repo = Repository::open(dir.path()).unwrap();
    // E reverts the script to v1 on top of B; F keeps it (not listed again).
    let e = commit_tree(
        &repo,
        Some("HEAD"),
        &[h.b],
        &[(SCRIPT, V1), (OTHER, WLM)],
        6,
    );
    let f = commit_tree(&repo, Some("HEAD"), &[e], &[(SCRIPT, V1)], 7);
    let checker = ScriptRepo::open(dir.path(), Some(&h.b.to_string())).unwrap();
    assert_eq!(
        checker.check(SCRIPT, &sha10(V1)),
        VersionVerdict::OtherRevision {
            commits: vec![short(h.a), short(e)],
            expected: sha10(V2)
        }
    );
    // OTHER is absent at F.
    let at_f = ScriptRepo::open(dir.path(), None).unwrap();
    assert_eq!(at_f.rev_commit(), f.to_string());
    assert_eq!(at_f.check(OTHER, &sha10(WLM)), VersionVerdict::NoScript);
}

#[test]
fn opens_from_inside_a_work_tree() {
    let (dir, h) = work_tree_repo();
    let sub = dir.path().join("some/folder");
    fs::create_dir_all(&sub).unwrap();
    let repo = ScriptRepo::open(&sub, None).unwrap();
    assert_eq!(repo.rev_commit(), h.b.to_string());
    assert_eq!(repo.check(SCRIPT, &sha10(V2)), VersionVerdict::ScriptAtRev);
}

#[test]
fn open_errors_name_the_path_and_the_rev() {
    let plain = TempDir::new().unwrap();
    let err = ScriptRepo::open(plain.path(), None).unwrap_err();
    assert!(matches!(err, RepoError::NotARepository { .. }));
    assert_eq!(
        err.to_string(),
        format!("{}: not a git repository", plain.path().display())
    );

    let (dir, h) = bare_repo();
    let err = ScriptRepo::open(dir.path(), Some("v9")).unwrap_err();
    assert!(matches!(err, RepoError::RevisionNotFound { .. }));
    assert_eq!(
        err.to_string(),
        format!("{}: revision `v9` not found", dir.path().display())
    );

    let tree = Repository::open(dir.path())
        .unwrap()
        .find_commit(h.a)
        .unwrap()
        .tree_id();
    let err = ScriptRepo::open(dir.path(), Some(&tree.to_string())).unwrap_err();
    assert!(matches!(err, RepoError::NotACommit { .. }));
    assert_eq!(
        err.to_string(),
        format!(
            "{}: revision `{tree}` is not a commit",
            dir.path().display()
        )
    );

    // An empty repository has no HEAD commit yet.
    let empty = TempDir::new().unwrap();
    Repository::init(empty.path()).unwrap();
    let err = ScriptRepo::open(empty.path(), None).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}: revision `HEAD` not found", empty.path().display())
    );
}

#[test]
fn verdicts_say_which_way_they_matched() {
    let (dir, h) = bare_repo();
    let repo = ScriptRepo::open(dir.path(), None).unwrap();
    let at_rev = VersionVerdict::ScriptAtRev;
    assert_eq!(at_rev.to_string(), "the script's hash at REV");
    assert_eq!(
        repo.describe(&at_rev),
        format!("the script's hash at HEAD ({})", short(h.b))
    );
    let same = repo.check(SCRIPT, &short(h.b));
    assert_eq!(
        same.to_string(),
        format!(
            "commit {}, whose copy of the script is the one at REV",
            short(h.b)
        )
    );
    assert!(same.matches_rev());
    let other = repo.check(SCRIPT, &short(h.a));
    assert!(other.to_string().contains("differs from the one at REV"));
    assert!(!other.matches_rev());
    let older = repo.check(SCRIPT, &sha10(V1));
    assert_eq!(
        repo.describe(&older),
        format!(
            "the script's hash as of commit {} (another revision; at HEAD ({}) it is {})",
            short(h.a),
            short(h.b),
            sha10(V2)
        )
    );
    assert!(!older.matches_rev());
    let unknown = repo.check(SCRIPT, "0123456789");
    assert!(unknown.to_string().contains(&sha10(V2)));
    assert_eq!(
        VersionVerdict::NoScript.to_string(),
        "no such script at REV"
    );
}
