//! Runtimes within one submission: the suite's entries beside entries written by
//! `mlbench run` (read as one submission, from two folders or one), a `system.json`
//! whose declaration the entries contradict; and runs on synthetic data
//! (`mlbench run --synthetic-data`), flagged by `validate`, `report` and `targets`.

use crate::fixtures::{
    copy_example, copy_tree, edit_entries, entry, example_dir, mlbench, read_entries,
    validate_json, write_entries, write_vendor,
};
use mlbench_schema::Value;
use std::path::Path;

/// The report files of a submission folder (`output<r>/*.json`), sorted.
fn report_files(root: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for run in std::fs::read_dir(root).unwrap() {
        let run = run.unwrap().path();
        if run.is_dir() {
            for file in std::fs::read_dir(&run).unwrap() {
                files.push(file.unwrap().path());
            }
        }
    }
    files.sort();
    files
}

/// Marks every entry under `root` as `mlbench run` writes it (`peak_rss_bytes`), and
/// gives convnet's entries `workers` = 3 (a configuration the suite's entries do not
/// have). Returns (entries marked, convnet entries among them).
fn as_mlbench_run(root: &Path) -> (usize, usize) {
    let (mut marked, mut convnet) = (0, 0);
    for path in report_files(root) {
        edit_entries(&path, |entries| {
            for e in entries.iter_mut() {
                e.fields.insert("peak_rss_bytes", 1_000_000i64);
                if e.name() == Some("convnet") {
                    e.fields.insert("workers", 3i64);
                    convnet += 1;
                }
                marked += 1;
            }
        });
    }
    (marked, convnet)
}

/// A `system.json` at `root` as `mlbench run` writes it, on the example's node.
fn declare_mlbench_run(root: &Path) {
    let info = serde_json::json!({
        "schema_version": 1, "hostname": "vendor00-node", "tool": "mlbench 0.2.0",
        "runtime": {"kind": "mlbench-run", "version": "2.13.0"}, "libtorch": "2.13.0",
        "cores": 16, "devices": []
    });
    std::fs::write(root.join("system.json"), info.to_string()).unwrap();
}

/// `mlbench report SUBS -g RTX` in `format`: (stdout, stderr), the command succeeding.
fn report(subs: &[&Path], format: &str) -> (String, String) {
    let out = mlbench()
        .arg("report")
        .args(subs)
        .args(["-g", "RTX", "--format", format])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (text(&out.stdout), text(&out.stderr))
}

fn report_json(subs: &[&Path]) -> serde_json::Value {
    serde_json::from_str(&report(subs, "json").0).unwrap()
}

/// The example's entries, counted here.
fn example_entries() -> usize {
    report_files(&example_dir())
        .iter()
        .map(|p| read_entries(p).len())
        .sum()
}

/// The example's convnet `workers`, read here.
fn example_convnet_workers() -> i64 {
    let entries = read_entries(&example_dir().join("output0/fast_0.json"));
    let convnet = entries
        .iter()
        .find(|e| e.name() == Some("convnet"))
        .unwrap();
    convnet.get("workers").and_then(Value::as_i64).unwrap()
}

const SUITE: &str = "the mila-iqia/training scripts";
const DECLARED: &str = "system.json declares mlbench run, libtorch 2.13.0";

#[test]
fn two_folders_of_two_runtimes_are_mixed_and_each_side_of_a_conflict_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let (orig, mlb) = (tmp.path().join("orig"), tmp.path().join("mlb"));
    copy_tree(&example_dir(), &orig);
    copy_tree(&example_dir(), &mlb);
    // Three runs of mlbench run: fewer convnet entries than the suite's five runs.
    for run in ["output3", "output4"] {
        std::fs::remove_dir_all(mlb.join(run)).unwrap();
    }
    let (marked, convnet) = as_mlbench_run(&mlb);
    declare_mlbench_run(&mlb);
    let suite = example_entries();
    assert_eq!((suite, marked, convnet), (175, 105, 6));
    let json = report_json(&[&orig, &mlb]);
    let sub = &json["runtime"]["submission"];
    let label = format!(
        "mixed: {suite} entries by {SUITE}, {marked} by mlbench run; {DECLARED}, contradicted by {suite} entries written by {SUITE}"
    );
    assert_eq!(
        *sub,
        serde_json::json!({
            "kind": "mixed", "version": null, "label": label, "basis": "mixed",
            "entries": {"suite_scripts": suite, "mlbench_run": marked, "unknown": 0},
            "declared": {"kind": "mlbench-run", "version": "2.13.0"},
            "contradicting_entries": suite
        }),
        "{json:#}"
    );
    // No runtime is the submission's: none is compared with the targets'.
    assert!(json["runtime_mismatch"].is_null(), "{json:#}");
    // The one conflict (convnet's workers) names each side's runtime.
    let conflicts = json["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1, "{json:#}");
    let c = &conflicts[0];
    assert_eq!(
        (c["bench"].as_str(), c["kept"].as_u64()),
        (Some("convnet"), Some(10))
    );
    assert_eq!(c["set_aside"], convnet);
    assert_eq!(c["kept_runtime"], "suite-scripts");
    assert_eq!(c["set_aside_runtime"], "mlbench-run");
    let (text, _) = report(&[&orig, &mlb], "table");
    assert!(text.contains(&format!("\n  runtime: {label}\n")), "{text}");
    let mix = format!(
        "\n  warning: mixed runtimes: {suite} entries written by {SUITE}, {marked} by mlbench run: a bench's figures pool both runtimes' throughputs"
    );
    assert!(text.contains(&mix), "{text}");
    let contradicted = format!(
        "\n  warning: {DECLARED}, contradicted by {suite} entries written by {SUITE}: the entries, not the declaration, say what ran\n"
    );
    assert!(text.contains(&contradicted), "{text}");
    let workers = example_convnet_workers();
    let conflict = format!(
        "\n  conflict: convnet: {convnet} entries (written by mlbench run) set aside, their configuration differs from the 10 kept (written by {SUITE}) (workers: {workers} here, 3 there); the bench is scored on the entries of {SUITE} alone; e.g. "
    );
    assert!(text.contains(&conflict), "{text}");
    assert!(!text.contains("runtime mismatch"), "{text}");
}

/// The runtime findings of a validation: (rule, severity, file, entry, found).
fn runtime_findings(json: &serde_json::Value) -> Vec<(String, String, String, u64, String)> {
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    let mut out: Vec<_> = (json["findings"].as_array().unwrap().iter())
        .filter(|f| f["rule"].as_str().unwrap().starts_with("runtime."))
        .map(|f| {
            let entry = f["entry"].as_u64().unwrap_or(u64::MAX);
            let (rule, severity, file) = (text(&f["rule"]), text(&f["severity"]), text(&f["file"]));
            (rule, severity, file, entry, text(&f["found"]))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn validate_finds_the_mix_and_the_contradicted_declaration() {
    let tmp = copy_example();
    let root = tmp.path();
    // Runs 5 to 7: the example's runs 0 to 2, as mlbench run wrote them.
    let mlb = tempfile::tempdir().unwrap();
    for run in 0..3 {
        copy_tree(
            &example_dir().join(format!("output{run}")),
            &mlb.path().join(format!("output{}", run + 5)),
        );
    }
    let (marked, _) = as_mlbench_run(mlb.path());
    copy_tree(mlb.path(), root);
    declare_mlbench_run(root);
    let suite = example_entries();
    let (code, json) = validate_json(root, &[]);
    assert_eq!(code, 1, "{json:#}");
    let mut expected = Vec::new();
    for run in 5..8 {
        for gpu in 0..2 {
            let file = format!("output{run}/fast_{gpu}.json");
            let n = read_entries(&root.join(&file)).len();
            let found = format!("{n} entries written by mlbench run");
            expected.push(("runtime.mixed".into(), "error".into(), file, 0, found));
        }
    }
    let total = suite + marked;
    let found = format!("{suite} of {total} entries written by {SUITE}");
    expected.push((
        "runtime.declared".into(),
        "warning".into(),
        "system.json".into(),
        u64::MAX,
        found,
    ));
    expected.sort();
    assert_eq!(runtime_findings(&json), expected, "{json:#}");
    let declared = crate::fixtures::finding(&json, "runtime.declared", Some("system.json"), None);
    assert_eq!(
        declared["expected"],
        "entries written by mlbench run, as system.json declares (mlbench run, libtorch 2.13.0)"
    );
}

#[test]
fn a_declaration_alone_never_overrides_the_entries() {
    let tmp = copy_example();
    declare_mlbench_run(tmp.path());
    let suite = example_entries();
    let sub = report_json(&[tmp.path()])["runtime"]["submission"].clone();
    assert_eq!(sub["basis"], "mixed", "{sub:#}");
    assert_eq!(sub["kind"], "mixed");
    assert_eq!(sub["contradicting_entries"], suite);
    assert_eq!(
        sub["label"],
        format!(
            "mixed: {suite} entries by {SUITE}, 0 by mlbench run; {DECLARED}, contradicted by {suite} entries written by {SUITE}"
        )
    );
    // A warning: the entries themselves are of one runtime.
    let (code, json) = validate_json(tmp.path(), &[]);
    assert_eq!(code, 0, "{json:#}");
    let found = format!("{suite} of {suite} entries written by {SUITE}");
    let want = vec![(
        "runtime.declared".into(),
        "warning".into(),
        "system.json".into(),
        u64::MAX,
        found,
    )];
    assert_eq!(runtime_findings(&json), want);
}

#[test]
fn a_submission_of_one_runtime_is_unchanged() {
    let suite = example_entries();
    let json = report_json(&[&example_dir()]);
    assert_eq!(
        json["runtime"]["submission"],
        serde_json::json!({
            "kind": "suite-scripts", "version": null,
            "label": format!("mila-iqia/training scripts (torch version unknown) (inferred from the entries: {suite} of {suite})"),
            "basis": "entries",
            "entries": {"suite_scripts": suite, "mlbench_run": 0, "unknown": 0},
            "declared": null, "contradicting_entries": 0
        })
    );
    assert_eq!(json["conflicts"], serde_json::json!([]));
    let (text, _) = report(&[&example_dir()], "table");
    assert!(!text.contains("warning: mixed runtimes"), "{text}");
    assert!(!text.contains("contradicted"), "{text}");
    // All of it by mlbench run, declared: the declared runtime, no warning, no finding.
    let tmp = copy_example();
    let (marked, _) = as_mlbench_run(tmp.path());
    declare_mlbench_run(tmp.path());
    let json = report_json(&[tmp.path()]);
    let sub = &json["runtime"]["submission"];
    assert_eq!(sub["kind"], "mlbench-run");
    assert_eq!(sub["version"], "2.13.0");
    assert_eq!(sub["basis"], "declared");
    assert_eq!(
        sub["label"],
        "mlbench run, libtorch 2.13.0 (declared by system.json)"
    );
    assert_eq!(sub["entries"]["mlbench_run"], marked);
    assert_eq!(sub["contradicting_entries"], 0);
    assert_eq!(json["conflicts"], serde_json::json!([]));
    let (text, _) = report(&[tmp.path()], "table");
    assert!(!text.contains("warning: mixed runtimes"), "{text}");
    let (_, json) = validate_json(tmp.path(), &[]);
    assert_eq!(runtime_findings(&json), Vec::new());
}

/// The `run.synthetic-data` finding of a validation (exactly one).
fn synthetic_finding(json: &serde_json::Value) -> serde_json::Value {
    let all: Vec<&serde_json::Value> = (json["findings"].as_array().unwrap().iter())
        .filter(|f| f["rule"] == "run.synthetic-data")
        .collect();
    assert_eq!(all.len(), 1, "{json:#}");
    assert_eq!(all[0]["severity"], "warning");
    all[0].clone()
}

const HOW: &str =
    "(`mlbench run --synthetic-data`: batches made in memory, not read from the data files)";

#[test]
fn one_entry_on_synthetic_data_is_said_in_the_singular() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("output0");
    std::fs::create_dir_all(&dir).unwrap();
    let mut e = entry("vae", 100.0, 0, 0);
    e.fields.insert("synthetic_data", true);
    write_entries(&dir.join("fast_0.json"), &[e]);
    let (_, json) = validate_json(tmp.path(), &[]);
    let found = format!(
        "1 of 1 entry ran on synthetic data {HOW}: its throughput does not include reading and decoding the data set"
    );
    let f = synthetic_finding(&json);
    assert_eq!(f["found"], found.as_str());
    assert!(f["file"].is_null());
    let out = mlbench()
        .arg("report")
        .arg(tmp.path())
        .args(["-g", "RTX", "--min-runs", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("\n  synthetic data: {found}\n")),
        "{text}"
    );
}

#[test]
fn entries_on_synthetic_data_are_counted_by_validate_report_and_targets() {
    let tmp = tempfile::tempdir().unwrap();
    write_vendor(tmp.path(), &[("atari", 10.0), ("vae", 100.0)]);
    let (mut flagged, mut total) = (0, 0);
    for path in report_files(tmp.path()) {
        edit_entries(&path, |entries| {
            for e in entries.iter_mut() {
                if e.name() == Some("atari") {
                    e.fields.insert("synthetic_data", true);
                    flagged += 1;
                }
                total += 1;
            }
        });
    }
    assert_eq!((flagged, total), (8, 16));
    let summary = format!(
        "{flagged} of {total} entries ran on synthetic data {HOW}: their throughput does not include reading and decoding the data set"
    );
    let (_, json) = validate_json(tmp.path(), &[]);
    assert_eq!(synthetic_finding(&json)["found"], summary.as_str());
    let (text, _) = report(&[tmp.path()], "table");
    assert!(
        text.contains(&format!("\n  synthetic data: {summary}\n")),
        "{text}"
    );
    let out = mlbench()
        .arg("targets")
        .arg(tmp.path())
        .args(["-g", "H100", "--allow-failing"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("warning: {summary}, nor do these targets\n")),
        "{stderr}"
    );
    // Without the flag: nothing said.
    let (_, json) = validate_json(example_dir(), &[]);
    assert!(!json.to_string().contains("run.synthetic-data"));
    let (text, _) = report(&[&example_dir()], "table");
    assert!(!text.contains("synthetic data"), "{text}");
}

#[test]
fn a_description_of_a_run_on_synthetic_data_is_said_without_an_entry_flag() {
    let tmp = copy_example();
    // Not mlbench's tool: no runtime declared, only the synthetic data.
    let info = serde_json::json!({"hostname": "vendor00-node", "tool": "a script", "synthetic_data": true});
    std::fs::write(tmp.path().join("system.json"), info.to_string()).unwrap();
    let suite = example_entries();
    let (code, json) = validate_json(tmp.path(), &[]);
    assert_eq!(code, 0, "{json:#}");
    let f = synthetic_finding(&json);
    assert_eq!(f["file"], "system.json");
    let found = format!(
        "system.json records a run on synthetic data {HOW}, though none of the {suite} entries carries `synthetic_data`: if they ran so, their throughput does not include reading and decoding the data set"
    );
    assert_eq!(f["found"], found.as_str());
    let (text, _) = report(&[tmp.path()], "table");
    assert!(
        text.contains(&format!("\n  synthetic data: {found}\n")),
        "{text}"
    );
}
