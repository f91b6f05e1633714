//! `mlbench data prepare`: the data sets and their manifest written, a second run refused
//! without --force, unknown benches and unwritable folders.

use crate::fixtures::mlbench;
use predicates::prelude::*;
use std::path::Path;

fn manifest(root: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(root.join("MANIFEST.json")).unwrap()).unwrap()
}

#[test]
fn prepare_writes_the_sets_and_their_manifest_then_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("data");
    mlbench()
        .args(["data", "prepare"])
        .arg(&root)
        .args([
            "--bench", "wlm", "--bench", "toy_lstm", "--smoke", "--seed", "4",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("wikitext-2: 3 files, "))
        .stdout(predicate::str::contains("sine-waves: 1 files, 8128 bytes"));
    let m = manifest(&root);
    let sets = m["sets"].as_object().unwrap();
    assert_eq!(
        sets.keys().collect::<Vec<_>>(),
        ["sine-waves", "wikitext-2"]
    );
    let wiki = &sets["wikitext-2"];
    assert_eq!(
        (wiki["seed"].as_u64(), wiki["scale"].as_str()),
        (Some(4), Some("smoke"))
    );
    for file in wiki["files"].as_array().unwrap() {
        let path = root.join(file["path"].as_str().unwrap());
        let len = std::fs::metadata(&path).unwrap().len();
        assert_eq!(file["bytes"].as_u64(), Some(len), "{}", path.display());
    }
    let before = std::fs::read(root.join("wikitext-2/train.txt")).unwrap();
    mlbench()
        .args(["data", "prepare"])
        .arg(&root)
        .args(["--bench", "wlmfp16", "--smoke", "--seed", "5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("wikitext-2: already exists"))
        .stderr(predicate::str::contains("--force"));
    assert_eq!(
        std::fs::read(root.join("wikitext-2/train.txt")).unwrap(),
        before
    );
    mlbench()
        .args(["data", "prepare"])
        .arg(&root)
        .args(["--bench", "wlmfp16", "--smoke", "--seed", "5", "--force"])
        .assert()
        .success();
    assert_ne!(
        std::fs::read(root.join("wikitext-2/train.txt")).unwrap(),
        before
    );
    let m = manifest(&root);
    assert_eq!(m["sets"]["wikitext-2"]["seed"].as_u64(), Some(5));
    assert_eq!(m["sets"]["sine-waves"]["seed"].as_u64(), Some(4), "kept");
    mlbench_datasets::sets::check(&root, mlbench_datasets::sets::DataSet::Wikitext2).unwrap();
}

#[test]
fn the_same_seed_makes_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a", "b"] {
        mlbench()
            .args(["data", "prepare"])
            .arg(dir.path().join(name))
            .args([
                "--bench", "vae", "--bench", "recom", "--smoke", "--seed", "11",
            ])
            .assert()
            .success();
    }
    let (a, b) = (
        manifest(&dir.path().join("a")),
        manifest(&dir.path().join("b")),
    );
    assert_eq!(a, b);
    assert_eq!(a["sets"]["mnist"]["files"].as_array().unwrap().len(), 4);
    assert_eq!(a["sets"]["ml-20m"]["files"].as_array().unwrap().len(), 4);
}

#[test]
fn an_unknown_bench_is_usage_and_an_unwritable_folder_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    mlbench()
        .args(["data", "prepare"])
        .arg(dir.path().join("d"))
        .args(["--bench", "scaling"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--bench scaling: no data set"));
    assert!(!dir.path().join("d").exists(), "nothing made");
    mlbench().args(["data", "prepare"]).assert().code(2);
    let file = dir.path().join("file");
    std::fs::write(&file, b"").unwrap();
    mlbench()
        .args(["data", "prepare"])
        .arg(file.join("under"))
        .args(["--bench", "vae", "--smoke"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("under"));
}
