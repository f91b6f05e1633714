//! `mlbench validate`: a corpus of broken and hostile submissions, each built from the
//! shipped example by code, with the exact findings it must produce.
//!
//! Expectations are worked out from the edit made (which file, which entry, which field,
//! and what that implies for the cross-file rules), never copied from the output.

use crate::fixtures::{
    Key, copy_example, copy_tree, edit_entries, edit_entry, edit_object, error, example_dir,
    finding, findings, folder_files, mlbench, number, read_entries, rehash, sha256_hex, sorted,
    validate_json, waived, warning, write_entries, write_zip,
};
use mlbench_schema::value::Value;
use mlbench_schema::writer::{per_test_text, stream_chunk, stream_text};
use mlbench_schema::{ReportEntry, ScriptMap};
use predicates::prelude::*;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tempfile::TempDir;
use zip::CompressionMethod::{Deflated, Stored};

/// Runs the validation and asserts the exit status and the exact findings.
fn check(
    path: impl AsRef<Path>,
    extra: &[&str],
    code: i32,
    expected: Vec<Key>,
) -> serde_json::Value {
    let (got, json) = validate_json(path, extra);
    assert_eq!(findings(&json), sorted(expected), "{json:#}");
    assert_eq!(got, code, "{json:#}");
    json
}

/// `rel` inside a submission folder.
fn at(dir: &TempDir, rel: &str) -> PathBuf {
    dir.path().join(rel)
}

/// Every stream of the example as (run, GPU, `output<run>/fast_<gpu>.json`).
fn streams() -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for run in 0..5 {
        for gpu in 0..2 {
            out.push((run, gpu, format!("output{run}/fast_{gpu}.json")));
        }
    }
    out
}

/// The bench name of entry `index` of a stream.
fn name_of(path: &Path, index: usize) -> String {
    read_entries(path)[index].name().unwrap().to_owned()
}

/// The names of the benches of a stream from entry `from` on.
fn names_from(path: &Path, from: usize) -> Vec<String> {
    read_entries(path)[from..]
        .iter()
        .map(|e| e.name().unwrap().to_owned())
        .collect()
}

/// `bench.missing` for each name, in `file`.
fn missing_in(file: &str, count: usize) -> Vec<Key> {
    vec![error("bench.missing", Some(file), None, None); count]
}

/// The `expected` texts of the findings of `rule`, sorted.
fn texts(json: &serde_json::Value, rule: &str, what: &str) -> Vec<String> {
    let mut out: Vec<String> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .map(|f| f[what].as_str().unwrap().to_owned())
        .collect();
    out.sort();
    out
}

/// Byte offset of entry `index` in a legacy stream: `[`, then each entry's chunk.
fn entry_offset(entries: &[ReportEntry], index: usize) -> usize {
    1 + entries[..index]
        .iter()
        .map(|e| stream_chunk(e).len())
        .sum::<usize>()
}

// ───────────────────────────── 1. the example ─────────────────────────────

#[test]
fn example_is_clean_with_its_summary() {
    let json = check(example_dir(), &[], 0, vec![]);
    assert_eq!(
        json["summary"],
        json!({
            "suite": "fast", "files": 11, "report_files": 10, "entries": 175, "runs": 5,
            "gpus": 2, "benches": 19, "jobs_file": "fast.json",
            "baselines": "baselines/jobs/fast.json"
        })
    );
    assert_eq!(json["errors"], 0);
    assert_eq!(json["warnings"], 0);
    assert_eq!(json["waived"], json!([]));
    assert_eq!(json["versions"], json!([]));
    assert_eq!(json["submission"], example_dir().display().to_string());
}

#[test]
fn example_zipped_is_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("example.zip");
    write_zip(&zip, &folder_files(&example_dir()), Deflated);
    let json = check(&zip, &[], 0, vec![]);
    assert_eq!(json["summary"]["files"], 11);
    assert_eq!(json["summary"]["report_files"], 10);
    assert_eq!(json["summary"]["entries"], 175);
    assert_eq!(json["summary"]["jobs_file"], "fast.json");
}

/// The corpus edits streams through the schema's reader and writer: an unchanged stream
/// must come back byte for byte, or every case would test the writer, not the edit.
#[test]
fn rewriting_a_stream_keeps_its_bytes() {
    for (_, _, rel) in streams() {
        let path = example_dir().join(&rel);
        let text = stream_text(&read_entries(&path));
        assert_eq!(text.as_bytes(), std::fs::read(&path).unwrap(), "{rel}");
    }
}

// ───────────────────────────── 2. parse.json ─────────────────────────────

#[test]
fn parse_json_truncated_mid_entry() {
    let dir = copy_example();
    let file = "output2/fast_1.json";
    let entries = read_entries(&at(&dir, file));
    let start = entry_offset(&entries, 5);
    let cut = start + stream_chunk(&entries[5]).len() / 2;
    let bytes = std::fs::read(at(&dir, file)).unwrap();
    std::fs::write(at(&dir, file), &bytes[..cut]).unwrap();
    let lost = names_from(&example_dir().join(file), 5);
    assert_eq!(lost.len(), 11);

    let mut expected = vec![error("parse.json", Some(file), Some(5), None)];
    expected.extend(missing_in(file, lost.len()));
    let json = check(dir.path(), &[], 1, expected);
    let found = finding(&json, "parse.json", Some(file), Some(5))["found"]
        .as_str()
        .unwrap();
    assert!(found.contains(&format!("at byte {cut} ")), "{found}");
    let mut want: Vec<String> = lost
        .iter()
        .map(|b| format!("`{b}` on GPU 1 in run output2"))
        .collect();
    want.sort();
    assert_eq!(texts(&json, "bench.missing", "expected"), want);
    assert_eq!(json["summary"]["entries"], 175 - 11);
}

#[test]
fn parse_json_stray_character() {
    let dir = copy_example();
    let file = "output3/fast_0.json";
    let entries = read_entries(&at(&dir, file));
    let offset = entry_offset(&entries, 18);
    let mut bytes = std::fs::read(at(&dir, file)).unwrap();
    bytes.insert(offset, b'x');
    std::fs::write(at(&dir, file), &bytes).unwrap();

    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("parse.json", Some(file), Some(18), None),
            error("bench.missing", Some(file), None, None),
        ],
    );
    let found = finding(&json, "parse.json", Some(file), Some(18))["found"]
        .as_str()
        .unwrap();
    assert!(found.contains(&format!("at byte {offset} ")), "{found}");
    let lost = name_of(&example_dir().join(file), 18);
    assert_eq!(
        texts(&json, "bench.missing", "expected"),
        [format!("`{lost}` on the whole machine in run output3")]
    );
}

#[test]
fn parse_json_empty_file() {
    let dir = copy_example();
    let file = "output4/fast_1.json";
    std::fs::write(at(&dir, file), "").unwrap();
    let mut expected = vec![error("parse.json", Some(file), None, None)];
    expected.extend(missing_in(file, 16));
    let json = check(dir.path(), &[], 1, expected);
    let f = finding(&json, "parse.json", Some(file), None);
    assert!(
        f["found"].as_str().unwrap().starts_with("empty file"),
        "{f}"
    );
    assert_eq!(json["summary"]["report_files"], 10);
    assert_eq!(json["summary"]["entries"], 175 - 16);
}

// ───────────────────────────── 3. parse.type ─────────────────────────────

#[test]
fn parse_type_batch_size_as_a_string() {
    let dir = copy_example();
    let file = "output1/fast_1.json";
    edit_entry(&at(&dir, file), 2, |o| o.insert("batch_size", "128"));
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("parse.type", Some(file), Some(2), Some("batch_size")),
            error("bench.missing", Some(file), None, None),
        ],
    );
    let f = finding(&json, "parse.type", Some(file), Some(2));
    assert_eq!(f["expected"], "an int");
    assert_eq!(f["found"], "string");
}

#[test]
fn parse_type_batch_loss_holding_a_string() {
    let dir = copy_example();
    let file = "output3/fast_1.json";
    edit_entry(&at(&dir, file), 4, |o| {
        let mut losses = o.get("batch_loss").unwrap().as_list().unwrap().to_vec();
        losses[5] = Value::from("0.25");
        o.insert("batch_loss", Value::List(losses));
    });
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("parse.type", Some(file), Some(4), Some("batch_loss[5]")),
            error("bench.missing", Some(file), None, None),
        ],
    );
    assert_eq!(
        finding(&json, "parse.type", Some(file), Some(4))["found"],
        "string"
    );
}

// ───────────────────────────── 4. parse.missing-field ─────────────────────────────

#[test]
fn parse_missing_field_train() {
    let dir = copy_example();
    let file = "output0/fast_1.json";
    edit_entry(&at(&dir, file), 8, |o| {
        o.remove("train").unwrap();
    });
    check(
        dir.path(),
        &[],
        1,
        vec![error(
            "parse.missing-field",
            Some(file),
            Some(8),
            Some("train"),
        )],
    );
}

#[test]
fn parse_missing_field_name() {
    let dir = copy_example();
    let file = "output4/fast_0.json";
    let lost = name_of(&at(&dir, file), 10);
    edit_entry(&at(&dir, file), 10, |o| {
        o.remove("name").unwrap();
    });
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("parse.missing-field", Some(file), Some(10), Some("name")),
            error("bench.missing", Some(file), None, None),
        ],
    );
    assert_eq!(
        texts(&json, "bench.missing", "expected"),
        [format!("`{lost}` on GPU 0 in run output4")]
    );
}

// ───────────────────────────── 5. loss.nan ─────────────────────────────

fn set_loss(path: &Path, entry: usize, step: usize, value: f64) {
    edit_entry(path, entry, |o| {
        let mut losses = o.get("batch_loss").unwrap().as_list().unwrap().to_vec();
        losses[step] = Value::Float(value);
        o.insert("batch_loss", Value::List(losses));
    });
}

#[test]
fn loss_nan_infinity_and_minus_infinity() {
    let file = "output1/fast_0.json";
    for (value, token) in [
        (f64::NAN, "NaN"),
        (f64::INFINITY, "Infinity"),
        (f64::NEG_INFINITY, "-Infinity"),
    ] {
        let dir = copy_example();
        set_loss(&at(&dir, file), 3, 17, value);
        let text = std::fs::read_to_string(at(&dir, file)).unwrap();
        assert!(text.contains(&format!("        {token},\n")), "{token}");
        let json = check(
            dir.path(),
            &[],
            1,
            vec![error(
                "loss.nan",
                Some(file),
                Some(3),
                Some("batch_loss[17]"),
            )],
        );
        let f = finding(&json, "loss.nan", Some(file), Some(3));
        assert_eq!(f["found"], token);
        assert_eq!(f["expected"], "a finite loss");
    }
}

#[test]
fn loss_nan_in_two_entries_and_several_in_one() {
    let dir = copy_example();
    set_loss(&at(&dir, "output1/fast_0.json"), 3, 17, f64::NAN);
    set_loss(&at(&dir, "output1/fast_0.json"), 3, 40, f64::INFINITY);
    set_loss(&at(&dir, "output3/fast_1.json"), 5, 0, f64::NAN);
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error(
                "loss.nan",
                Some("output1/fast_0.json"),
                Some(3),
                Some("batch_loss[17]"),
            ),
            error(
                "loss.nan",
                Some("output3/fast_1.json"),
                Some(5),
                Some("batch_loss[0]"),
            ),
        ],
    );
    assert_eq!(
        finding(&json, "loss.nan", Some("output1/fast_0.json"), Some(3))["found"],
        "NaN (and 1 more non-finite of 100 values)"
    );
}

// ───────────────────────────── 6. run.incomplete ─────────────────────────────

#[test]
fn run_incomplete() {
    let dir = copy_example();
    let file = "output2/fast_1.json";
    edit_entry(&at(&dir, file), 11, |o| o.insert("completed", false));
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error(
            "run.incomplete",
            Some(file),
            Some(11),
            Some("completed"),
        )],
    );
    assert_eq!(
        finding(&json, "run.incomplete", Some(file), Some(11))["found"],
        "completed: false"
    );
}

// ───────────────────────────── 7. run.failed ─────────────────────────────

/// The example rewritten in the E3 per-test layout: one file per entry at the root,
/// `fast.<bench>.R<run>.D<vcd>.<YYYYmmdd-HHMMSS-ffffff>.json`, plus the jobs file.
fn per_test_submission() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(example_dir().join("fast.json"), at(&dir, "fast.json")).unwrap();
    let mut clock = 0;
    for (run, _, rel) in streams() {
        for entry in read_entries(&example_dir().join(rel)) {
            clock += 1;
            let name = format!(
                "fast.{}.R{run}.D{}.20240102-0304{:02}-{clock:06}.json",
                entry.name().unwrap(),
                entry.vcd().unwrap(),
                clock % 60
            );
            std::fs::write(at(&dir, &name), per_test_text(&entry)).unwrap();
        }
    }
    dir
}

#[test]
fn run_failed_stub_among_per_test_files() {
    let dir = per_test_submission();
    let json = check(dir.path(), &[], 0, vec![]);
    assert_eq!(json["summary"]["report_files"], 175);
    assert_eq!(json["summary"]["entries"], 175);
    assert_eq!(json["summary"]["runs"], 5);
    assert_eq!(json["summary"]["gpus"], 2);

    let stub = "fast.None.R0.D1.FAIL.20240102-030405-999999.json";
    std::fs::write(
        at(&dir, stub),
        r#"{"completed": false, "name": null, "run_id": 0, "suite": "fast", "vcd": "1"}"#,
    )
    .unwrap();
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error("run.failed", Some(stub), Some(0), None)],
    );
    assert_eq!(json["summary"]["report_files"], 176);
    assert!(
        finding(&json, "run.failed", Some(stub), Some(0))["found"]
            .as_str()
            .unwrap()
            .contains("name: null")
    );
}

// ───────────────────────────── 8. runs.too-few ─────────────────────────────

#[test]
fn runs_too_few_with_three_run_folders() {
    let dir = copy_example();
    std::fs::remove_dir_all(at(&dir, "output3")).unwrap();
    std::fs::remove_dir_all(at(&dir, "output4")).unwrap();
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error("runs.too-few", None, None, None)],
    );
    let f = finding(&json, "runs.too-few", None, None);
    assert_eq!(f["expected"], "at least 4 runs (--min-runs)");
    assert_eq!(f["found"], "3 runs (output0, output1, output2)");
    assert_eq!(json["summary"]["runs"], 3);
}

#[test]
fn runs_too_few_with_min_runs_6() {
    let json = check(
        example_dir(),
        &["--min-runs", "6"],
        1,
        vec![error("runs.too-few", None, None, None)],
    );
    let f = finding(&json, "runs.too-few", None, None);
    assert_eq!(f["expected"], "at least 6 runs (--min-runs)");
    assert_eq!(
        f["found"],
        "5 runs (output0, output1, output2, output3, output4)"
    );
}

#[test]
fn runs_too_few_of_one_bench_when_a_run_failed() {
    // A NaN run is not a usable result: with --min-runs 5 that bench has 4 on GPU 0.
    let dir = copy_example();
    let file = "output1/fast_0.json";
    let bench = name_of(&at(&dir, file), 3);
    set_loss(&at(&dir, file), 3, 17, f64::NAN);
    let json = check(
        dir.path(),
        &["--min-runs", "5"],
        1,
        vec![
            error("loss.nan", Some(file), Some(3), Some("batch_loss[17]")),
            error("runs.too-few", None, None, Some(&bench)),
        ],
    );
    let f = finding(&json, "runs.too-few", None, None);
    assert_eq!(
        f["expected"],
        format!("at least 5 runs of `{bench}` on GPU 0 with a usable result")
    );
    assert_eq!(f["found"], "4 (output0, output2, output3, output4)");
}

// ───────────────────────────── 9. bench.missing ─────────────────────────────

#[test]
fn bench_missing_one_entry() {
    let dir = copy_example();
    let file = "output2/fast_1.json";
    let lost = name_of(&at(&dir, file), 6);
    edit_entries(&at(&dir, file), |e| {
        e.remove(6);
    });
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error("bench.missing", Some(file), None, None)],
    );
    let f = finding(&json, "bench.missing", Some(file), None);
    assert_eq!(f["expected"], format!("`{lost}` on GPU 1 in run output2"));
    assert_eq!(f["found"], "absent");
}

#[test]
fn bench_missing_whole_gpu_stream() {
    let dir = copy_example();
    let lost = names_from(&at(&dir, "output3/fast_1.json"), 0);
    std::fs::remove_file(at(&dir, "output3/fast_1.json")).unwrap();
    // No stream of GPU 1 in that run: the findings name the run's folder.
    let json = check(dir.path(), &[], 1, missing_in("output3", lost.len()));
    let mut want: Vec<String> = lost
        .iter()
        .map(|b| format!("`{b}` on GPU 1 in run output3"))
        .collect();
    want.sort();
    assert_eq!(texts(&json, "bench.missing", "expected"), want);
    assert_eq!(json["summary"]["gpus"], 2);
}

/// A per-test submission with one bench's file removed has no file to name: its runs
/// are `R<run>` labels, not paths. The finding is about the submission (or, for per-test
/// files in a folder, that folder), as `findings[].file` is documented to be a path
/// inside the submission or null.
#[test]
fn bench_missing_in_the_per_test_layout_names_no_pseudo_file() {
    let dir = per_test_submission();
    let gone: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with("fast.vae.R0.D1.")
        })
        .collect();
    assert_eq!(gone.len(), 1);
    std::fs::remove_file(&gone[0]).unwrap();
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error("bench.missing", None, None, None)],
    );
    assert_eq!(
        texts(&json, "bench.missing", "expected"),
        ["`vae` on GPU 1 in run R0"]
    );
}

// ───────────────────────────── 10. bench.duplicate ─────────────────────────────

#[test]
fn bench_duplicate_entry_appended_twice() {
    let dir = copy_example();
    let file = "output1/fast_0.json";
    edit_entries(&at(&dir, file), |e| {
        let again = e[4].clone();
        e.push(again);
    });
    // The copy is also a bit-identical loss curve and timing of another entry.
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("bench.duplicate", Some(file), Some(19), None),
            error("loss.duplicated", Some(file), Some(19), Some("batch_loss")),
            error("loss.duplicated", Some(file), Some(19), Some("train")),
        ],
    );
    assert_eq!(
        finding(&json, "bench.duplicate", Some(file), Some(19))["found"],
        "again after output1/fast_0.json entry 4"
    );
}

// ───────────────────────────── 11. bench.unknown ─────────────────────────────

#[test]
fn bench_unknown_renamed_entry_also_leaves_its_bench_missing() {
    let dir = copy_example();
    let file = "output0/fast_1.json";
    edit_entry(&at(&dir, file), 5, |o| o.insert("name", "reso_v2"));
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            warning("bench.unknown", Some(file), Some(5), None),
            error("bench.missing", Some(file), None, None),
        ],
    );
    assert_eq!(
        finding(&json, "bench.unknown", Some(file), Some(5))["found"],
        "`reso_v2` (1 entry)"
    );
}

#[test]
fn bench_unknown_extra_entry_is_only_a_warning() {
    let dir = copy_example();
    let file = "output2/fast_0.json";
    edit_entries(&at(&dir, file), |e| {
        let mut extra = e[0].clone();
        extra.fields.insert("name", "toy_reg_extra");
        e.push(extra);
    });
    check(
        dir.path(),
        &[],
        0,
        vec![warning("bench.unknown", Some(file), Some(19), None)],
    );
}

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

// ───────────────────────────── 14. args.disallowed-change ─────────────────────────────

/// Replaces the value of `flag` in job `job` of a jobs file written one key per line.
fn edit_job_arg(path: &Path, job: &str, flag: &str, value: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    let job_at = text.find(&format!("\"name\": \"{job}\"")).unwrap();
    let key = format!("\"{flag}\": ");
    let start = job_at + text[job_at..].find(&key).unwrap() + key.len();
    let end = start + text[start..].find([',', '\n']).unwrap();
    let edited = format!("{}{value}{}", &text[..start], &text[end..]);
    std::fs::write(path, edited).unwrap();
}

/// Sets `field` of every entry of `bench` (and recomputes `unique_id`).
fn set_field(dir: &TempDir, bench: &str, field: &str, value: Value) {
    for (_, _, rel) in streams() {
        edit_entries(&at(dir, &rel), |entries| {
            for e in entries.iter_mut().filter(|e| e.name() == Some(bench)) {
                e.fields.insert(field, value.clone());
                rehash(&mut e.fields);
            }
        });
    }
}

/// Every (file, entry) of `bench` in the example.
fn entries_of(bench: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for (_, _, rel) in streams() {
        for (i, e) in read_entries(&example_dir().join(&rel)).iter().enumerate() {
            if e.name() == Some(bench) {
                out.push((rel.clone(), i as u64));
            }
        }
    }
    out
}

#[test]
fn args_repeat_changed_in_the_jobs_file_only() {
    let dir = copy_example();
    edit_job_arg(&at(&dir, "fast.json"), "vae", "--repeat", "60");
    let mut expected = vec![error(
        "args.disallowed-change",
        Some("fast.json"),
        Some(2),
        Some("vae.--repeat"),
    )];
    let vae = entries_of("vae");
    assert_eq!(vae.len(), 10);
    for (file, entry) in &vae {
        expected.push(error(
            "args.entry-mismatch",
            Some(file),
            Some(*entry),
            Some("repeat"),
        ));
    }
    let json = check(dir.path(), &[], 1, expected);
    let f = finding(&json, "args.disallowed-change", Some("fast.json"), Some(2));
    assert_eq!(f["expected"], "50 as in baselines/jobs/fast.json");
    assert_eq!(f["found"], "60");
    let (file, entry) = &vae[0];
    let f = finding(&json, "args.entry-mismatch", Some(file), Some(*entry));
    assert_eq!(f["expected"], "60 (jobs file --repeat)");
    assert_eq!(f["found"], "50");
}

#[test]
fn args_repeat_changed_consistently_by_track_and_allow() {
    let dir = copy_example();
    edit_job_arg(&at(&dir, "fast.json"), "vae", "--repeat", "60");
    set_field(&dir, "vae", "repeat", Value::Int(60));
    let change = |severity: fn(&str, Option<&str>, Option<u64>, Option<&str>) -> Key| {
        severity(
            "args.disallowed-change",
            Some("fast.json"),
            Some(2),
            Some("vae.--repeat"),
        )
    };
    check(dir.path(), &[], 1, vec![change(error)]);
    let json = check(
        dir.path(),
        &["--track", "tweaked"],
        0,
        vec![change(warning)],
    );
    assert_eq!(
        finding(&json, "args.disallowed-change", Some("fast.json"), Some(2))["hint"],
        "allowed in the tweaked track; listed so the change is disclosed"
    );
    check(dir.path(), &["--allow=--repeat"], 0, vec![]);
}

#[test]
fn args_batch_size_changed_consistently_is_allowed() {
    let dir = copy_example();
    edit_job_arg(&at(&dir, "fast.json"), "vae", "--batch-size", "64");
    for (_, _, rel) in streams() {
        edit_entries(&at(&dir, &rel), |entries| {
            for e in entries.iter_mut().filter(|e| e.name() == Some("vae")) {
                let o = &mut e.fields;
                o.insert("batch_size", 64i64);
                let items = 64.0 * o.get("number").unwrap().as_f64().unwrap();
                let (avg, min, max) = (
                    number(o, "train", "avg"),
                    number(o, "train", "min"),
                    number(o, "train", "max"),
                );
                edit_object(o, "train_item", |item| {
                    item.insert("avg", items / avg);
                    item.insert("min", items / max);
                    item.insert("max", items / min);
                    item.insert("range", items / min - items / max);
                });
                rehash(o);
            }
        });
    }
    check(dir.path(), &[], 0, vec![]);
    // The tweaked track lists every change, allowed ones included, as warnings.
    check(
        dir.path(),
        &["--track", "tweaked"],
        0,
        vec![warning(
            "args.disallowed-change",
            Some("fast.json"),
            Some(2),
            Some("vae.--batch-size"),
        )],
    );
}

// ───────────────────────────── 15. jobs ─────────────────────────────

/// The span of job `job` in a jobs file written two spaces per level: from the `\n  {`
/// before its name to the `\n  }` after it.
fn job_span(text: &str, job: &str) -> (usize, usize) {
    let name = text.find(&format!("\"name\": \"{job}\"")).unwrap();
    let start = text[..name].rfind("\n  {").unwrap();
    let end = name + text[name..].find("\n  }").unwrap() + "\n  }".len();
    (start, end)
}

#[test]
fn jobs_missing_when_the_jobs_file_is_absent() {
    let dir = copy_example();
    std::fs::remove_file(at(&dir, "fast.json")).unwrap();
    let json = check(
        dir.path(),
        &[],
        0,
        vec![warning("jobs.missing", None, None, None)],
    );
    assert_eq!(json["summary"]["jobs_file"], serde_json::Value::Null);
    assert_eq!(json["summary"]["baselines"], "baselines/jobs/fast.json");
}

#[test]
fn jobs_missing_job() {
    let dir = copy_example();
    let path = at(&dir, "fast.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let (start, end) = job_span(&text, "wlm");
    assert_eq!(&text[end..end + 1], ",");
    std::fs::write(&path, format!("{}{}", &text[..start], &text[end + 1..])).unwrap();
    // The baselines' job is missing; the reports still hold `wlm`, which the vendor's
    // jobs file (what the entries are checked against) does not list.
    let wlm = entries_of("wlm");
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("jobs.missing-job", Some("fast.json"), None, None),
            warning("bench.unknown", Some(&wlm[0].0), Some(wlm[0].1), None),
        ],
    );
    assert_eq!(
        finding(&json, "jobs.missing-job", Some("fast.json"), None)["expected"],
        "job `wlm` as in baselines/jobs/fast.json"
    );
    assert_eq!(
        finding(&json, "bench.unknown", Some(&wlm[0].0), Some(wlm[0].1))["found"],
        "`wlm` (10 entries)"
    );
}

/// The jobs file with a copy of the `vae` job named `vae_big` after it.
fn add_vae_big(dir: &TempDir) {
    let path = at(dir, "fast.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let (start, end) = job_span(&text, "vae");
    let copy = text[start..end].replace("\"name\": \"vae\"", "\"name\": \"vae_big\"");
    std::fs::write(&path, format!("{},{copy}{}", &text[..end], &text[end..])).unwrap();
}

#[test]
fn jobs_extra_job_without_reports() {
    let dir = copy_example();
    add_vae_big(&dir);
    // The vendor's jobs file says vae_big ran once per GPU in every run: none did.
    let mut expected = vec![error("jobs.extra-job", Some("fast.json"), None, None)];
    for (_, _, rel) in streams() {
        expected.push(error("bench.missing", Some(&rel), None, None));
    }
    expected.extend(vec![error("runs.too-few", None, None, Some("vae_big")); 2]);
    let json = check(dir.path(), &[], 1, expected);
    assert_eq!(
        finding(&json, "jobs.extra-job", Some("fast.json"), None)["found"],
        "job `vae_big`"
    );
}

#[test]
fn jobs_extra_job_with_its_reports() {
    let dir = copy_example();
    add_vae_big(&dir);
    for (_, _, rel) in streams() {
        edit_entries(&at(&dir, &rel), |entries| {
            let mut extra = entries[2].clone();
            assert_eq!(extra.name(), Some("vae"));
            extra.fields.insert("name", "vae_big");
            entries.push(extra);
        });
    }
    check(
        dir.path(),
        &[],
        1,
        vec![error("jobs.extra-job", Some("fast.json"), None, None)],
    );
}

// ───────────────────────────── 16. id.mismatch ─────────────────────────────

#[test]
fn id_mismatch_altered_unique_id() {
    let dir = copy_example();
    let file = "output2/fast_0.json";
    let original = read_entries(&at(&dir, file))[7]
        .get("unique_id")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    let forged = "0".repeat(64);
    edit_entry(&at(&dir, file), 7, |o| {
        o.insert("unique_id", forged.as_str())
    });
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error("id.mismatch", Some(file), Some(7), Some("unique_id"))],
    );
    let f = finding(&json, "id.mismatch", Some(file), Some(7));
    assert_eq!(f["expected"], original);
    assert_eq!(f["found"], forged);
}

#[test]
fn id_mismatch_argument_altered_without_recomputing() {
    let dir = copy_example();
    let file = "output0/fast_1.json";
    assert_eq!(name_of(&at(&dir, file), 0), "toy_reg");
    edit_entry(&at(&dir, file), 0, |o| o.insert("number", 101i64));
    // `number` is hashed, enters the throughput, and is in the jobs file (100).
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("id.mismatch", Some(file), Some(0), Some("unique_id")),
            error(
                "work.inconsistent",
                Some(file),
                Some(0),
                Some("train_item.avg"),
            ),
            error("args.entry-mismatch", Some(file), Some(0), Some("number")),
        ],
    );
    let f = finding(&json, "args.entry-mismatch", Some(file), Some(0));
    assert_eq!(f["expected"], "100 (jobs file --number)");
    assert_eq!(f["found"], "101");
}

// ───────────────────────────── 17. work.inconsistent ─────────────────────────────

#[test]
fn work_inconsistent_throughput_scaled() {
    let dir = copy_example();
    let file = "output2/fast_0.json";
    edit_entry(&at(&dir, file), 0, |o| {
        let avg = number(o, "train_item", "avg");
        // toy_reg's min-max spread is over 1%, so only the arithmetic is off.
        assert!(avg * 1.01 < number(o, "train_item", "max"));
        edit_object(o, "train_item", |item| item.insert("avg", avg * 1.01));
    });
    check(
        dir.path(),
        &[],
        1,
        vec![error(
            "work.inconsistent",
            Some(file),
            Some(0),
            Some("train_item.avg"),
        )],
    );
}

#[test]
fn work_inconsistent_count_over_repeat() {
    let dir = copy_example();
    let file = "output1/fast_1.json";
    edit_entry(&at(&dir, file), 2, |o| {
        assert_eq!(o.get("repeat"), Some(&Value::Int(50)));
        edit_object(o, "train", |t| t.insert("count", 41i64));
    });
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error(
            "work.inconsistent",
            Some(file),
            Some(2),
            Some("train.count"),
        )],
    );
    let f = finding(&json, "work.inconsistent", Some(file), Some(2));
    assert_eq!(f["expected"], "1 ≤ train.count ≤ 40 for repeat 50");
    assert_eq!(f["found"], "41");
}

#[test]
fn work_inconsistent_min_over_avg() {
    let dir = copy_example();
    let file = "output0/fast_0.json";
    edit_entry(&at(&dir, file), 3, |o| {
        let avg = number(o, "train", "avg");
        edit_object(o, "train", |t| t.insert("min", avg * 1.5));
    });
    // min > avg, and train_item.max (= items ÷ train.min) no longer follows.
    check(
        dir.path(),
        &[],
        1,
        vec![
            error("work.inconsistent", Some(file), Some(3), Some("train.avg")),
            error(
                "work.inconsistent",
                Some(file),
                Some(3),
                Some("train_item.max"),
            ),
        ],
    );
}

// ───────────────────────────── 18. loss.divergent ─────────────────────────────

#[test]
fn loss_divergent_is_a_warning() {
    let dir = copy_example();
    let file = "output3/fast_1.json";
    edit_entry(&at(&dir, file), 2, |o| {
        let losses: Vec<f64> = o
            .get("batch_loss")
            .unwrap()
            .as_list()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() * 3.0)
            .collect();
        o.insert("batch_loss", Value::from(losses));
    });
    let json = check(
        dir.path(),
        &[],
        0,
        vec![warning(
            "loss.divergent",
            Some(file),
            Some(2),
            Some("batch_loss"),
        )],
    );
    let f = finding(&json, "loss.divergent", Some(file), Some(2));
    assert!(
        f["expected"].as_str().unwrap().contains("its 9 other runs"),
        "{f}"
    );
}

// ───────────────────────────── 19. loss.duplicated ─────────────────────────────

#[test]
fn loss_duplicated_stream_copied_over_the_other_gpu() {
    let dir = copy_example();
    std::fs::copy(
        at(&dir, "output1/fast_0.json"),
        at(&dir, "output1/fast_1.json"),
    )
    .unwrap();
    // The copy still says GPU 0 (`vcd`), so GPU 1 has nothing in that run and GPU 0 has
    // every bench twice; every entry is a bit-identical copy.
    let copy = "output1/fast_1.json";
    let mut expected = Vec::new();
    for i in 0..19 {
        expected.push(error(
            "loss.duplicated",
            Some(copy),
            Some(i),
            Some("batch_loss"),
        ));
        expected.push(error("loss.duplicated", Some(copy), Some(i), Some("train")));
        expected.push(error("bench.duplicate", Some(copy), Some(i), None));
    }
    expected.extend(missing_in(copy, 16));
    let json = check(dir.path(), &[], 1, expected);
    assert_eq!(json["errors"], 19 * 3 + 16);
}

#[test]
fn loss_duplicated_stream_copied_and_relabelled() {
    let dir = copy_example();
    let mut entries = read_entries(&at(&dir, "output1/fast_0.json"));
    entries.truncate(16);
    for e in &mut entries {
        e.fields.insert("vcd", "1");
        e.fields.insert("jr_id", "1");
        rehash(&mut e.fields);
    }
    write_entries(&at(&dir, "output1/fast_1.json"), &entries);
    let copy = "output1/fast_1.json";
    let mut expected = Vec::new();
    for i in 0..16 {
        expected.push(error(
            "loss.duplicated",
            Some(copy),
            Some(i),
            Some("batch_loss"),
        ));
        expected.push(error("loss.duplicated", Some(copy), Some(i), Some("train")));
    }
    let json = check(dir.path(), &[], 1, expected);
    assert_eq!(json["errors"], 32);
    assert_eq!(
        texts(&json, "loss.duplicated", "found")[0],
        "bit-identical to output1/fast_0.json entry 0"
    );
}

#[test]
fn loss_duplicated_one_curve_from_another_run() {
    let dir = copy_example();
    let source = read_entries(&at(&dir, "output0/fast_1.json"))[2]
        .get("batch_loss")
        .unwrap()
        .clone();
    let file = "output3/fast_1.json";
    edit_entry(&at(&dir, file), 2, |o| o.insert("batch_loss", source));
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error(
            "loss.duplicated",
            Some(file),
            Some(2),
            Some("batch_loss"),
        )],
    );
    assert_eq!(
        finding(&json, "loss.duplicated", Some(file), Some(2))["found"],
        "bit-identical to output0/fast_1.json entry 2"
    );
}

// ───────────────────────────── 20. manifest ─────────────────────────────

/// The example packed by `mlbench pack`, as (name, bytes) in archive order.
fn packed_example(tmp: &TempDir) -> Vec<(String, Vec<u8>)> {
    let src = tmp.path().join("src");
    copy_tree(&example_dir(), &src);
    let zip = tmp.path().join("packed.zip");
    mlbench()
        .arg("pack")
        .arg(&src)
        .arg("-o")
        .arg(&zip)
        .assert()
        .success();
    crate::fixtures::read_zip(&zip)
}

#[test]
fn manifest_mismatch_missing_extra_malformed() {
    let tmp = tempfile::tempdir().unwrap();
    let packed = packed_example(&tmp);
    let write = |name: &str, files: &[(String, Vec<u8>)]| {
        let path = tmp.path().join(name);
        write_zip(&path, files, Deflated);
        path
    };
    check(write("clean.zip", &packed), &[], 0, vec![]);

    // One byte of one file changed.
    let mut files = packed.clone();
    let target = "output2/fast_0.json";
    let (_, bytes) = files.iter_mut().find(|(n, _)| n == target).unwrap();
    let original = bytes.clone();
    let key = b"\"hostname\": \"";
    let at_byte = bytes.windows(key.len()).position(|w| w == key).unwrap() + key.len();
    bytes[at_byte] = if bytes[at_byte] == b'w' { b'v' } else { b'w' };
    let changed = bytes.clone();
    let json = check(
        write("mismatch.zip", &files),
        &[],
        1,
        vec![error("manifest.mismatch", Some(target), None, None)],
    );
    let f = finding(&json, "manifest.mismatch", Some(target), None);
    assert_eq!(f["expected"], sha256_hex(&original));
    assert_eq!(f["found"], sha256_hex(&changed));

    // A listed file dropped.
    let files: Vec<_> = packed
        .iter()
        .filter(|(n, _)| n != "SUBMISSION.json")
        .cloned()
        .collect();
    check(
        write("missing.zip", &files),
        &[],
        1,
        vec![error(
            "manifest.missing",
            Some("SUBMISSION.json"),
            None,
            None,
        )],
    );

    // A file added.
    let mut files = packed.clone();
    files.push(("notes.txt".into(), b"hello\n".to_vec()));
    check(
        write("extra.zip", &files),
        &[],
        1,
        vec![
            error("manifest.extra", Some("notes.txt"), None, None),
            warning("file.unknown", Some("notes.txt"), None, None),
        ],
    );

    // A manifest line garbled.
    let mut files = packed.clone();
    let (_, manifest) = files
        .iter_mut()
        .find(|(n, _)| n == "MANIFEST.sha256")
        .unwrap();
    let text = String::from_utf8(manifest.clone()).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[2] = lines[2].replacen(|c: char| c.is_ascii_hexdigit(), "g", 1);
    *manifest = format!("{}\n", lines.join("\n")).into_bytes();
    check(
        write("malformed.zip", &files),
        &[],
        1,
        vec![error(
            "manifest.malformed",
            Some("MANIFEST.sha256"),
            None,
            Some("line 3"),
        )],
    );
}

// ───────────────────────────── 21. hostile zips ─────────────────────────────

/// CRC-32 (IEEE), bit by bit; small inputs only.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// CRC-32 of `n` zero bytes without reading them: the register update for a zero byte
/// is linear over GF(2), so its `n`-th power is taken by squaring.
fn crc32_of_zeros(n: u64) -> u32 {
    type Matrix = [u32; 32];
    let apply = |m: &Matrix, v: u32| {
        (0..32)
            .filter(|i| v >> i & 1 == 1)
            .fold(0, |acc, i| acc ^ m[i])
    };
    let compose = |a: &Matrix, b: &Matrix| -> Matrix { std::array::from_fn(|i| apply(a, b[i])) };
    let zero_byte = |mut crc: u32| {
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
        crc
    };
    let mut power: Matrix = std::array::from_fn(|i| zero_byte(1 << i));
    let mut result: Matrix = std::array::from_fn(|i| 1 << i);
    let mut n = n;
    while n > 0 {
        if n & 1 == 1 {
            result = compose(&power, &result);
        }
        power = compose(&power, &power);
        n >>= 1;
    }
    !apply(&result, !0)
}

/// One entry of a zip written by hand, for what `ZipWriter` refuses to write.
struct RawEntry {
    name: Vec<u8>,
    /// The bytes as stored in the archive (compressed when `method` is 8).
    data: Vec<u8>,
    method: u16,
    crc: u32,
    size: u32,
    flags: u16,
    /// Points the central record at the local header of entry `n` instead of its own
    /// (entries sharing their data, as in an overlapping zip bomb); nothing is written.
    shares: Option<usize>,
}

impl RawEntry {
    fn stored(name: &[u8], bytes: &[u8]) -> RawEntry {
        RawEntry {
            name: name.to_vec(),
            data: bytes.to_vec(),
            method: 0,
            crc: crc32(bytes),
            size: bytes.len() as u32,
            flags: 0,
            shares: None,
        }
    }
}

/// Writes `entries` as a zip: local headers and data, central directory, end record.
fn write_raw_zip(path: &Path, entries: &[RawEntry]) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut central = Vec::new();
    let mut offset = 0u32;
    let mut offsets = Vec::new();
    let le16 = |v: u16| v.to_le_bytes();
    let le32 = |v: u32| v.to_le_bytes();
    for e in entries {
        offsets.push(offset);
        let header_at = e.shares.map_or(offset, |n| offsets[n]);
        let mut local = Vec::new();
        local.extend(le32(0x0403_4b50));
        local.extend(le16(20));
        local.extend(le16(e.flags));
        local.extend(le16(e.method));
        local.extend(le16(0)); // time
        local.extend(le16(0x21)); // 1980-01-01
        local.extend(le32(e.crc));
        local.extend(le32(e.data.len() as u32));
        local.extend(le32(e.size));
        local.extend(le16(e.name.len() as u16));
        local.extend(le16(0));
        local.extend(&e.name);
        if e.shares.is_none() {
            out.write_all(&local).unwrap();
            out.write_all(&e.data).unwrap();
        }

        central.extend(le32(0x0201_4b50));
        central.extend(le16(3 << 8 | 20)); // made on Unix
        central.extend(le16(20));
        central.extend(le16(e.flags));
        central.extend(le16(e.method));
        central.extend(le16(0));
        central.extend(le16(0x21));
        central.extend(le32(e.crc));
        central.extend(le32(e.data.len() as u32));
        central.extend(le32(e.size));
        central.extend(le16(e.name.len() as u16));
        central.extend(le16(0)); // extra
        central.extend(le16(0)); // comment
        central.extend(le16(0)); // disk
        central.extend(le16(0)); // internal attributes
        central.extend(le32(0o100_644 << 16)); // a regular file, rw-r--r--
        central.extend(le32(header_at));
        central.extend(&e.name);
        if e.shares.is_none() {
            offset += (local.len() + e.data.len()) as u32;
        }
    }
    out.write_all(&central).unwrap();
    let mut end = Vec::new();
    end.extend(le32(0x0605_4b50));
    end.extend(le16(0));
    end.extend(le16(0));
    end.extend(le16(entries.len() as u16));
    end.extend(le16(entries.len() as u16));
    end.extend(le32(central.len() as u32));
    end.extend(le32(offset));
    end.extend(le16(0));
    out.write_all(&end).unwrap();
    out.flush().unwrap();
}

/// A raw deflate stream of `1 + 258·repeats` zero bytes in one dynamic-Huffman block: a
/// literal 0, then `repeats` copies of ⟨length 258, distance 1⟩ at two bits each (the
/// densest deflate allows, about 1:1030), then end of block.
fn deflated_zeros(repeats: usize) -> Vec<u8> {
    deflated_zeros_diluted(repeats, 0)
}

/// As [`deflated_zeros`], with `literals` single zero bytes after each match, which brings
/// the ratio down to `8·(258 + literals) / (2 + 2·literals)`; `1 + (258 + literals)·repeats`
/// bytes in all.
fn deflated_zeros_diluted(repeats: usize, literals: usize) -> Vec<u8> {
    struct Bits {
        out: Vec<u8>,
        acc: u64,
        n: u32,
    }
    impl Bits {
        fn put(&mut self, value: u32, len: u32) {
            self.acc |= u64::from(value) << self.n;
            self.n += len;
            while self.n >= 8 {
                self.out.push(self.acc as u8);
                self.acc >>= 8;
                self.n -= 8;
            }
        }
        /// A Huffman code, most significant bit first.
        fn code(&mut self, code: u32, len: u32) {
            let reversed = (0..len).fold(0, |r, i| r | (code >> i & 1) << (len - 1 - i));
            self.put(reversed, len);
        }
    }
    let mut b = Bits {
        out: Vec::with_capacity(repeats / 4 + 64),
        acc: 0,
        n: 0,
    };
    b.put(1, 1); // final block
    b.put(2, 2); // dynamic Huffman
    b.put(286 - 257, 5); // HLIT
    b.put(0, 5); // HDIST: one distance code
    b.put(18 - 4, 4); // HCLEN: 18 code-length codes
    // Code-length code: 18 → `0`, 1 → `10`, 2 → `11`.
    let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1];
    for symbol in order {
        b.put(
            match symbol {
                18 => 1,
                1 | 2 => 2,
                _ => 0,
            },
            3,
        );
    }
    let (len1, len2, zeros) = (
        |b: &mut Bits| b.code(2, 2),
        |b: &mut Bits| b.code(3, 2),
        |b: &mut Bits, n: u32| {
            b.code(0, 1);
            b.put(n - 11, 7);
        },
    );
    // Literal/length lengths: 0 → 2, 1..=255 → 0, 256 → 2, 257..=284 → 0, 285 → 1;
    // distance lengths: 0 → 1.
    len2(&mut b);
    zeros(&mut b, 138);
    zeros(&mut b, 117);
    len2(&mut b);
    zeros(&mut b, 28);
    len1(&mut b);
    len1(&mut b);
    // Canonical codes: 285 → `0`, literal 0 → `10`, end of block → `11`; distance 0 → `0`.
    b.code(2, 2);
    for _ in 0..repeats {
        b.put(0, 2);
        for _ in 0..literals {
            b.code(2, 2);
        }
    }
    b.code(3, 2);
    b.put(0, 7); // flush
    b.out
}

/// The example's files plus hostile raw entries, as a hand-written zip.
fn raw_example_zip(path: &Path, extra: Vec<RawEntry>) {
    let mut entries: Vec<RawEntry> = folder_files(&example_dir())
        .iter()
        .map(|(n, b)| RawEntry::stored(n.as_bytes(), b))
        .collect();
    entries.extend(extra);
    write_raw_zip(path, &entries);
}

/// The example's files plus `extra`, zipped (stored) by the `zip` crate.
fn example_with(extra: &[(&str, &[u8])]) -> Vec<(String, Vec<u8>)> {
    let mut files = folder_files(&example_dir());
    files.extend(extra.iter().map(|(n, b)| ((*n).to_owned(), b.to_vec())));
    files
}

#[test]
fn hand_written_zips_are_read_back() {
    // The helpers themselves: CRC of zeros by squaring, the bomb's deflate stream, and a
    // raw zip of the example validating clean.
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    for n in [0, 1, 7, 258, 1000] {
        assert_eq!(crc32_of_zeros(n), crc32(&vec![0; n as usize]), "{n}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("small-bomb.zip");
    let size = 1 + 258 * 100;
    write_raw_zip(
        &path,
        &[RawEntry {
            name: b"zeros".to_vec(),
            data: deflated_zeros(100),
            method: 8,
            crc: crc32_of_zeros(size as u64),
            size,
            flags: 0,
            shares: None,
        }],
    );
    let back = crate::fixtures::read_zip(&path);
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].1, vec![0; size as usize]);

    let path = tmp.path().join("raw.zip");
    raw_example_zip(&path, vec![]);
    check(&path, &[], 0, vec![]);
}

#[test]
fn zip_entry_climbing_out() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("s.zip");
    write_zip(&zip, &example_with(&[("../escape.json", b"{}")]), Stored);
    let json = check(
        &zip,
        &[],
        1,
        vec![error(
            "archive.unsafe-path",
            Some("../escape.json"),
            None,
            None,
        )],
    );
    assert_eq!(
        finding(&json, "archive.unsafe-path", Some("../escape.json"), None)["found"],
        "a path with a `..` component"
    );
}

#[test]
fn zip_entry_with_an_absolute_path() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("s.zip");
    write_zip(&zip, &example_with(&[("/tmp/abs.json", b"{}")]), Stored);
    let json = check(
        &zip,
        &[],
        1,
        vec![error(
            "archive.unsafe-path",
            Some("/tmp/abs.json"),
            None,
            None,
        )],
    );
    assert_eq!(
        finding(&json, "archive.unsafe-path", Some("/tmp/abs.json"), None)["found"],
        "an absolute path"
    );
}

#[test]
fn zip_entries_with_windows_paths() {
    for (name, found) in [
        ("output0\\..\\..\\evil.json", "a path with a backslash"),
        ("C:/evil.json", "a path with a drive letter"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let zip = tmp.path().join("s.zip");
        write_zip(&zip, &example_with(&[(name, b"{}")]), Stored);
        let json = check(
            &zip,
            &[],
            1,
            vec![error("archive.unsafe-path", Some(name), None, None)],
        );
        assert_eq!(
            finding(&json, "archive.unsafe-path", Some(name), None)["found"],
            found
        );
    }
}

#[test]
fn zip_entry_with_a_bad_crc() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.zip");
    let mut bad = RawEntry::stored(b"output0/notes.txt", b"tampered after zipping\n");
    bad.crc ^= 1;
    raw_example_zip(&path, vec![bad]);
    // The entry is refused, so it is not listed as an unknown file either.
    let json = check(
        &path,
        &[],
        1,
        vec![error(
            "archive.corrupt",
            Some("output0/notes.txt"),
            None,
            None,
        )],
    );
    assert_eq!(json["summary"]["files"], 11);
}

#[test]
fn zip_symlink_entry() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default().compression_method(Stored);
    for (name, bytes) in folder_files(&example_dir()) {
        zip.start_file(name, options).unwrap();
        zip.write_all(&bytes).unwrap();
    }
    zip.add_symlink("output0/fast_9.json", "../../../etc/passwd", options)
        .unwrap();
    zip.finish().unwrap();
    check(
        &path,
        &[],
        1,
        vec![error(
            "archive.symlink",
            Some("output0/fast_9.json"),
            None,
            None,
        )],
    );
}

#[test]
fn zip_encrypted_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.zip");
    let mut secret = RawEntry::stored(b"output0/secret.json", b"\x8a\x13\x07 not plain text");
    secret.flags = 1; // encrypted
    raw_example_zip(&path, vec![secret]);
    check(
        &path,
        &[],
        1,
        vec![error(
            "archive.encrypted",
            Some("output0/secret.json"),
            None,
            None,
        )],
    );
}

#[test]
fn zip_duplicate_names() {
    let tmp = tempfile::tempdir().unwrap();
    // The same name twice, byte for byte (ZipWriter refuses to write that).
    let path = tmp.path().join("same.zip");
    let again = std::fs::read(example_dir().join("output1/fast_0.json")).unwrap();
    raw_example_zip(
        &path,
        vec![RawEntry::stored(b"output1/fast_0.json", &again)],
    );
    let json = check(
        &path,
        &[],
        1,
        vec![error(
            "archive.duplicate",
            Some("output1/fast_0.json"),
            None,
            None,
        )],
    );
    assert_eq!(
        finding(
            &json,
            "archive.duplicate",
            Some("output1/fast_0.json"),
            None
        )["found"],
        "2 entries with this name"
    );

    // Two names that are one path once normalised.
    let path = tmp.path().join("normalised.zip");
    write_zip(
        &path,
        &example_with(&[("./output1/fast_0.json", &again)]),
        Stored,
    );
    let json = check(
        &path,
        &[],
        1,
        vec![error(
            "archive.duplicate",
            Some("output1/fast_0.json"),
            None,
            None,
        )],
    );
    assert_eq!(
        finding(
            &json,
            "archive.duplicate",
            Some("output1/fast_0.json"),
            None
        )["found"],
        "another entry named ./output1/fast_0.json"
    );
}

#[test]
fn zip_name_not_utf8() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default().compression_method(Stored);
    for (name, bytes) in folder_files(&example_dir()) {
        zip.start_file(name, options).unwrap();
        zip.write_all(&bytes).unwrap();
    }
    zip.start_file_with_options(options.name(b"output0/caf\xe9.json"))
        .unwrap();
    zip.write_all(b"{}").unwrap();
    zip.finish().unwrap();
    check(
        &path,
        &[],
        1,
        vec![error(
            "archive.name-encoding",
            Some("output0/caf\u{fffd}.json"),
            None,
            None,
        )],
    );
}

#[test]
fn zip_bomb_ratio_and_size_limits() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bomb.zip");
    let repeats = (300 << 20) / 258;
    let size = 1 + 258 * repeats as u64;
    let data = deflated_zeros(repeats);
    assert!(size > 300_000_000 && data.len() < 400_000, "{}", data.len());
    let bomb = RawEntry {
        name: b"output0/zeros.bin".to_vec(),
        data,
        method: 8,
        crc: crc32_of_zeros(size),
        size: size as u32,
        flags: 0,
        shares: None,
    };
    raw_example_zip(&path, vec![bomb]);
    let json = check(
        &path,
        &[],
        1,
        vec![error(
            "archive.ratio",
            Some("output0/zeros.bin"),
            None,
            None,
        )],
    );
    assert_eq!(
        finding(&json, "archive.ratio", Some("output0/zeros.bin"), None)["expected"],
        "a compression ratio of at most 200 (--max-ratio)"
    );

    // With the ratio allowed, the size limit: the example's files fit, then 1 MB is left.
    let example: u64 = folder_files(&example_dir())
        .iter()
        .map(|(_, b)| b.len() as u64)
        .sum();
    let limit = (example + 1_000_000).to_string();
    let json = check(
        &path,
        &["--max-ratio", "5000", "--max-bytes", &limit],
        1,
        vec![error(
            "archive.too-large",
            Some("output0/zeros.bin"),
            None,
            None,
        )],
    );
    let f = finding(&json, "archive.too-large", Some("output0/zeros.bin"), None);
    assert_eq!(
        f["expected"],
        format!("at most {limit} bytes in all (--max-bytes)")
    );
    assert_eq!(
        f["found"],
        format!("{size} bytes in this entry, over what is left")
    );
}

#[test]
fn zip_bomb_of_overlapping_entries() {
    // 100 entries of 2 MiB each, every one under the per-entry ratio (about 150), all
    // pointing at the same 14 kB of compressed data: 200 MiB from a 20 kB archive.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("overlap.zip");
    let repeats = (2 << 20) / 264;
    let size = (1 + 264 * repeats) as u64;
    let data = deflated_zeros_diluted(repeats, 6);
    let ratio = size / data.len() as u64;
    assert!((100..200).contains(&ratio), "{ratio}");
    let entries: Vec<RawEntry> = (0..100)
        .map(|i| RawEntry {
            name: format!("output0/z{i:03}.bin").into_bytes(),
            data: data.clone(),
            method: 8,
            crc: crc32_of_zeros(size),
            size: size as u32,
            flags: 0,
            shares: (i > 0).then_some(0),
        })
        .collect();
    write_raw_zip(&path, &entries);
    let archive_len = std::fs::metadata(&path).unwrap().len();
    assert!(archive_len < 30_000, "{archive_len}");
    // 200 × the archive's length covers the first entries whole; the next one is over it,
    // and the read stops there.
    let allowed = (archive_len * 200 / size) as usize;
    assert!((1..10).contains(&allowed), "{allowed}");
    let third = format!("output0/z{allowed:03}.bin");
    let third = third.as_str();
    let mut expected: Vec<Key> = (0..allowed)
        .map(|i| format!("output0/z{i:03}.bin"))
        .map(|name| warning("file.unknown", Some(&name), None, None))
        .collect();
    expected.push(error("archive.ratio", Some(third), None, None));
    // Nothing else in it: no reports (and then no word about the jobs file).
    expected.push(error("reports.none", None, None, None));
    let json = check(&path, &[], 1, expected);
    assert_eq!(
        finding(&json, "archive.ratio", Some(third), None)["expected"],
        format!("at most 200 times the archive's {archive_len} bytes in all (--max-ratio)")
    );
}

#[test]
fn zip_entry_whose_header_understates_its_size() {
    // The header says 1000 bytes; the data inflates to 300 MiB. The read is bounded and
    // the entry refused as damaged.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("liar.zip");
    let repeats = (300 << 20) / 258;
    let liar = RawEntry {
        name: b"output0/liar.bin".to_vec(),
        data: deflated_zeros(repeats),
        method: 8,
        crc: crc32_of_zeros(1000),
        size: 1000,
        flags: 0,
        shares: None,
    };
    raw_example_zip(&path, vec![liar]);
    check(
        &path,
        &[],
        1,
        vec![error(
            "archive.corrupt",
            Some("output0/liar.bin"),
            None,
            None,
        )],
    );
}

/// What an archive that cannot be opened at all gives: that finding alone (nothing is
/// said about content that could not be read).
fn unreadable() -> Vec<Key> {
    vec![error("archive.unreadable", None, None, None)]
}

#[test]
fn zip_truncated() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole.zip");
    write_zip(&whole, &folder_files(&example_dir()), Deflated);
    let bytes = std::fs::read(&whole).unwrap();
    let cut = tmp.path().join("cut.zip");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let json = check(&cut, &[], 1, unreadable());
    assert_eq!(json["summary"]["files"], 0);
}

#[test]
fn zip_that_is_random_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("noise.zip");
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let noise: Vec<u8> = (0..4096)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    std::fs::write(&path, noise).unwrap();
    check(&path, &[], 1, unreadable());
}

// ───────────────────────────── 22. files and layout ─────────────────────────────

#[test]
fn file_unknown_is_a_warning() {
    let dir = copy_example();
    std::fs::write(at(&dir, "notes.txt"), "ran on Tuesday\n").unwrap();
    let json = check(
        dir.path(),
        &[],
        0,
        vec![warning("file.unknown", Some("notes.txt"), None, None)],
    );
    assert_eq!(json["summary"]["files"], 12);
}

#[test]
fn folder_symlink_is_not_followed() {
    let dir = copy_example();
    std::os::unix::fs::symlink("/etc/passwd", at(&dir, "output0/fast_7.json")).unwrap();
    let json = check(
        dir.path(),
        &[],
        0,
        vec![warning(
            "file.symlink",
            Some("output0/fast_7.json"),
            None,
            None,
        )],
    );
    assert_eq!(json["summary"]["files"], 11);
    assert_eq!(json["summary"]["gpus"], 2);
}

#[test]
fn reports_of_mixed_suites() {
    let dir = copy_example();
    std::fs::copy(
        at(&dir, "output0/fast_0.json"),
        at(&dir, "output0/baselines_0.json"),
    )
    .unwrap();
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error("reports.mixed-suites", None, None, None)],
    );
    assert_eq!(
        finding(&json, "reports.mixed-suites", None, None)["found"],
        "baselines (1 files), fast (10 files); validated `fast`"
    );
    assert_eq!(json["summary"]["suite"], "fast");
    assert_eq!(json["summary"]["report_files"], 10);
}

#[test]
fn reports_none_in_an_empty_folder() {
    let dir = tempfile::tempdir().unwrap();
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error("reports.none", None, None, None)],
    );
    assert_eq!(json["summary"]["suite"], serde_json::Value::Null);
    assert_eq!(json["summary"]["files"], 0);
}

// ───────────────────────────── 23. waivers ─────────────────────────────

fn nan_example() -> TempDir {
    let dir = copy_example();
    set_loss(&at(&dir, "output1/fast_0.json"), 3, 17, f64::NAN);
    dir
}

#[test]
fn waivers_move_errors_aside() {
    let dir = nan_example();
    let nan = error(
        "loss.nan",
        Some("output1/fast_0.json"),
        Some(3),
        Some("batch_loss[17]"),
    );
    for waiver in [
        "loss.nan:output1/fast_0.json",
        "loss.*",
        "loss.nan",
        "*",
        "loss.nan:output1/",
    ] {
        let json = check(dir.path(), &["--waive", waiver], 0, vec![]);
        assert_eq!(waived(&json), std::slice::from_ref(&nan), "{waiver}");
        assert_eq!(json["errors"], 0);
    }
    // A waiver for another file, or another rule, leaves the error where it is.
    for waiver in ["loss.nan:output2/fast_0.json", "run.*"] {
        let json = check(dir.path(), &["--waive", waiver], 1, vec![nan.clone()]);
        assert_eq!(waived(&json), [], "{waiver}");
    }
    // Warnings are never waived.
    std::fs::write(at(&dir, "notes.txt"), "x").unwrap();
    let json = check(
        dir.path(),
        &["--waive", "*"],
        0,
        vec![warning("file.unknown", Some("notes.txt"), None, None)],
    );
    assert_eq!(waived(&json), [nan]);
}

#[test]
fn waiver_naming_no_rule_is_a_usage_error() {
    let dir = nan_example();
    let out = mlbench()
        .arg("validate")
        .arg(dir.path())
        .args(["--waive", "nope", "--format", "json"])
        .assert()
        .code(2)
        .stdout("");
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("--waive nope"), "{stderr}");
    assert!(stderr.contains("`nope` names no rule"), "{stderr}");
}

// ───────────────────────────── 24. unusable input ─────────────────────────────

#[test]
fn missing_path_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent");
    mlbench()
        .arg("validate")
        .arg(&path)
        .args(["--format", "json"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(format!(
            "error: {}: no such file or folder\n",
            path.display()
        ));
}

#[test]
fn path_neither_folder_nor_zip_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("submission.tar");
    std::fs::write(&path, "not a zip").unwrap();
    mlbench()
        .arg("validate")
        .arg(&path)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("not a folder or a .zip file"));
}

// ───────────────────────────── 25. output formats ─────────────────────────────

/// A small broken submission: a NaN loss, a missing bench, a stray file.
fn small_broken() -> TempDir {
    let dir = nan_example();
    edit_entries(&at(&dir, "output2/fast_1.json"), |e| {
        e.remove(6);
    });
    std::fs::write(at(&dir, "notes.txt"), "x").unwrap();
    dir
}

fn small_broken_findings() -> Vec<Key> {
    vec![
        error(
            "loss.nan",
            Some("output1/fast_0.json"),
            Some(3),
            Some("batch_loss[17]"),
        ),
        error("bench.missing", Some("output2/fast_1.json"), None, None),
        warning("file.unknown", Some("notes.txt"), None, None),
    ]
}

fn stdout_of(dir: &Path, args: &[&str], code: i32) -> String {
    let out = mlbench()
        .arg("validate")
        .arg(dir)
        .args(args)
        .assert()
        .code(code)
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn sarif_has_one_result_per_finding() {
    let dir = small_broken();
    let (_, json) = validate_json(dir.path(), &["--waive", "bench.missing"]);
    let sarif: serde_json::Value = serde_json::from_str(&stdout_of(
        dir.path(),
        &["--format", "sarif", "--waive", "bench.missing"],
        1,
    ))
    .unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let runs = sarif["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let results = runs[0]["results"].as_array().unwrap();
    let all: Vec<&serde_json::Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .chain(json["waived"].as_array().unwrap())
        .collect();
    assert_eq!(results.len(), 3);
    assert_eq!(results.len(), all.len());
    for (result, f) in results.iter().zip(all) {
        assert_eq!(result["ruleId"], f["rule"]);
        assert_eq!(
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            f["file"]
        );
        let waived = f["rule"] == "bench.missing";
        assert_eq!(result["suppressions"].is_array(), waived, "{result}");
    }
    let rules = runs[0]["tool"]["driver"]["rules"].as_array().unwrap();
    assert!(rules.iter().any(|r| r["id"] == "loss.nan"));
}

#[test]
fn csv_has_a_header_and_one_row_per_finding() {
    let dir = small_broken();
    let text = stdout_of(dir.path(), &["--format", "csv", "--waive", "loss.nan"], 1);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "rule,severity,file,entry,field,expected,found,hint"
    );
    assert_eq!(lines.len(), 1 + 3, "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("loss.nan,waived,output1/fast_0.json,3,batch_loss[17],"))
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("file.unknown,warning,notes.txt,,,"))
    );
}

#[test]
fn human_output_of_a_small_broken_case() {
    let dir = small_broken();
    let (code, json) = validate_json(dir.path(), &[]);
    assert_eq!(findings(&json), sorted(small_broken_findings()));
    assert_eq!(code, 1);
    let text = stdout_of(dir.path(), &[], 1);
    insta::assert_snapshot!("validate_small_broken_human", text);
}

#[test]
fn human_output_of_the_clean_example_is_one_line() {
    assert_eq!(
        stdout_of(&example_dir(), &[], 0),
        "0 errors, 0 warnings in 11 files\n"
    );
}
