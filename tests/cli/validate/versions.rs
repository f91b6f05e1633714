//! Script versions: `version.inconsistent`, and every `version.*` rule against a git
//! repository of the benchmark.

use super::{at, check, streams};
use crate::fixtures::{
    copy_example, edit_entries, edit_entry, error, example_dir, finding, read_entries, rehash,
    sha256_hex,
};
use mlbench_schema::ScriptMap;
use std::collections::BTreeMap;
use std::path::Path;
use tempfile::TempDir;

// ───────────────────────────── 12. version.inconsistent ─────────────────────────────

#[test]
fn version_inconsistent() {
    let file = "output4/fast_0.json";
    let original = read_entries(&example_dir().join(file))[2]
        .version()
        .unwrap()
        .to_owned();

    let dir = copy_example();
    edit_entry(&at(&dir, file), 2, |o| {
        o.insert("version", "0123456789");
        rehash(o);
    });
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error(
            "version.inconsistent",
            Some(file),
            Some(2),
            Some("version"),
        )],
    );
    let f = finding(&json, "version.inconsistent", Some(file), Some(2));
    assert_eq!(f["found"], "0123456789");
    assert_eq!(
        f["expected"],
        format!("`vae` at version {original} like its other entries")
    );

    // `version` is hashed into `unique_id`: without recomputing it, both rules fire.
    let dir = copy_example();
    edit_entry(&at(&dir, file), 2, |o| o.insert("version", "0123456789"));
    check(
        dir.path(),
        &[],
        1,
        vec![
            error("version.inconsistent", Some(file), Some(2), Some("version")),
            error("id.mismatch", Some(file), Some(2), Some("unique_id")),
        ],
    );
}

// ───────────────────────────── 13. versions against a repository ─────────────────────────────

/// A benchmark repository built with git2: every script of `baselines/scripts.toml`,
/// committed twice; the second commit changes the script of `vae` only.
struct BenchRepo {
    dir: TempDir,
    first: String,
    head: String,
    /// script path → content at the first commit and at HEAD.
    first_content: BTreeMap<String, String>,
    head_content: BTreeMap<String, String>,
}

fn script_text(path: &str, generation: u32) -> String {
    format!("# {path}\n# generation {generation}\nimport torch\nprint('training')\n")
}

/// The suite's version of a script: sha256(bytes)[:10], computed here.
fn suite_version(content: &str) -> String {
    sha256_hex(content.as_bytes())[..10].to_owned()
}

fn bench_script(bench: &str) -> String {
    ScriptMap::builtin().script_for(bench).unwrap().to_owned()
}

fn bench_repo() -> BenchRepo {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    let commit = |content: &BTreeMap<String, String>, message: &str, time: i64| {
        let mut index = repo.index().unwrap();
        for (path, text) in content {
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, text).unwrap();
            index.add_path(Path::new(path)).unwrap();
        }
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::new("corpus", "corpus@example.org", &git2::Time::new(time, 0))
            .unwrap();
        let parent = repo.head().ok().map(|h| h.peel_to_commit().unwrap());
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
            .unwrap()
            .to_string()
    };
    let first_content: BTreeMap<String, String> = ScriptMap::builtin()
        .iter()
        .map(|(_, path)| (path.to_owned(), script_text(path, 1)))
        .collect();
    let first = commit(&first_content, "the scripts", 1_700_000_000);
    let mut head_content = first_content.clone();
    let vae = bench_script("vae");
    head_content.insert(vae.clone(), script_text(&vae, 2));
    let head = commit(&head_content, "vae: new version", 1_700_000_100);
    BenchRepo {
        dir,
        first,
        head,
        first_content,
        head_content,
    }
}

/// The example with every entry's version set to its script's hash at HEAD.
fn versioned_example(repo: &BenchRepo) -> TempDir {
    let dir = copy_example();
    for (_, _, rel) in streams() {
        edit_entries(&at(&dir, &rel), |entries| {
            for e in entries {
                let script = bench_script(e.name().unwrap());
                e.fields
                    .insert("version", suite_version(&repo.head_content[&script]));
                rehash(&mut e.fields);
            }
        });
    }
    dir
}

/// Sets the version of every entry of `bench`.
fn set_version(dir: &TempDir, bench: &str, version: &str) {
    for (_, _, rel) in streams() {
        edit_entries(&at(dir, &rel), |entries| {
            for e in entries.iter_mut().filter(|e| e.name() == Some(bench)) {
                e.fields.insert("version", version);
                rehash(&mut e.fields);
            }
        });
    }
}

#[test]
fn versions_against_a_git_repository() {
    let repo = bench_repo();
    let repo_path = repo.dir.path().to_str().unwrap().to_owned();
    let with_repo = ["--repo", repo_path.as_str()];

    // Counts of entries per bench, from the example itself.
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for (_, _, rel) in streams() {
        for e in read_entries(&example_dir().join(rel)) {
            *counts.entry(e.name().unwrap().to_owned()).or_default() += 1;
        }
    }

    // Every version is its script's hash at HEAD: clean, and each bench says so.
    let dir = versioned_example(&repo);
    let json = check(dir.path(), &with_repo, 0, vec![]);
    let notes = json["versions"].as_array().unwrap();
    assert_eq!(notes.len(), 19);
    for note in notes {
        let bench = note["bench"].as_str().unwrap();
        let script = bench_script(bench);
        assert_eq!(note["version"], suite_version(&repo.head_content[&script]));
        assert_eq!(note["entries"], counts[bench], "{bench}");
        assert_eq!(note["result"], format!("the hash of {script} at HEAD"));
    }

    // vae at the first commit's script: another revision of it.
    let vae = bench_script("vae");
    let old = suite_version(&repo.first_content[&vae]);
    let now = suite_version(&repo.head_content[&vae]);
    assert_ne!(old, now);
    let dir = versioned_example(&repo);
    set_version(&dir, "vae", &old);
    let json = check(
        dir.path(),
        &with_repo,
        1,
        vec![error(
            "version.mismatch",
            Some("output0/fast_0.json"),
            Some(2),
            Some("version"),
        )],
    );
    let f = finding(
        &json,
        "version.mismatch",
        Some("output0/fast_0.json"),
        Some(2),
    );
    assert_eq!(f["expected"], format!("{now} (the hash of {vae} at HEAD)"));
    assert_eq!(
        f["found"],
        format!(
            "{old}: the hash of {vae} at {} (in 10 entries)",
            &repo.first[..10]
        )
    );

    // A version that is nothing of the repository's.
    let dir = versioned_example(&repo);
    set_version(&dir, "toy_lstm", "0123456789");
    let json = check(
        dir.path(),
        &with_repo,
        1,
        vec![error(
            "version.unknown",
            Some("output0/fast_0.json"),
            Some(1),
            Some("version"),
        )],
    );
    assert_eq!(
        finding(
            &json,
            "version.unknown",
            Some("output0/fast_0.json"),
            Some(1)
        )["found"],
        "0123456789 (in 10 entries)"
    );

    // A scripts map sending recom to a file absent from the tree.
    let dir = versioned_example(&repo);
    let scripts_dir = tempfile::tempdir().unwrap();
    let scripts = scripts_dir.path().join("scripts.toml");
    std::fs::write(
        &scripts,
        "[scripts]\nrecom = \"recommendation/absent/ncf.py\"\n",
    )
    .unwrap();
    let mut args = with_repo.to_vec();
    args.extend(["--scripts", scripts.to_str().unwrap()]);
    let json = check(
        dir.path(),
        &args,
        1,
        vec![error(
            "version.no-script",
            Some("output0/fast_0.json"),
            Some(15),
            Some("version"),
        )],
    );
    let f = finding(
        &json,
        "version.no-script",
        Some("output0/fast_0.json"),
        Some(15),
    );
    assert_eq!(
        f["expected"],
        "recommendation/absent/ncf.py in the tree at HEAD"
    );
    assert_eq!(f["found"], "absent (in 10 entries)");

    // A commit prefix of HEAD as the version: accepted, and said to match by commit.
    let dir = versioned_example(&repo);
    let prefix = &repo.head[..10];
    set_version(&dir, "toy_reg", prefix);
    let json = check(dir.path(), &with_repo, 0, vec![]);
    let note = json["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["bench"] == "toy_reg")
        .unwrap()
        .clone();
    assert_eq!(note["version"], prefix);
    assert_eq!(
        note["result"],
        format!(
            "commit {}, whose {} is the one at HEAD",
            repo.head,
            bench_script("toy_reg")
        )
    );

    // A commit prefix of the first commit for vae, whose script changed since.
    let dir = versioned_example(&repo);
    let prefix = &repo.first[..10];
    set_version(&dir, "vae", prefix);
    let json = check(
        dir.path(),
        &with_repo,
        1,
        vec![error(
            "version.mismatch",
            Some("output0/fast_0.json"),
            Some(2),
            Some("version"),
        )],
    );
    assert_eq!(
        finding(
            &json,
            "version.mismatch",
            Some("output0/fast_0.json"),
            Some(2)
        )["found"],
        format!(
            "{prefix}: commit {}, whose {vae} differs (in 10 entries)",
            repo.first
        )
    );
}
