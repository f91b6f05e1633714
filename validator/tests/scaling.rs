//! A whole-machine job that writes one entry per world size (the suite's `scaling`,
//! docs/suite.md#scripts-that-differ) in the per-test layout: the entries of one run are not
//! duplicates of each other, and their efficiencies in % are not checked as throughputs.

use mlbench_schema::entry::ReportEntry;
use mlbench_schema::pyjson::{parse, to_python_json};
use mlbench_schema::unique_id::{EXCLUDED_FINAL, unique_id};
use mlbench_schema::value::Value;
use mlbench_submission::intake::{Intake, SourceKind, SubmittedFile};
use mlbench_validator::{Options, validate};

const JOBS: &str = r#"[{"name": "scaling", "cmd": "./image_classification/scaling/pytorch/run.sh",
  "args": {"--repeat": 10, "--number": 10, "--batch-size": 128, "--report": "$OUTPUT_DIRECTORY"},
  "cgroup": "all"}]"#;

fn entry(run: u32, world: u32) -> String {
    let vcd: Vec<String> = (0..world).map(|g| g.to_string()).collect();
    let efficiency = 1.0 - 0.02 * f64::from(world - 1) - 0.001 * f64::from(run);
    let text = format!(
        r#"{{"name": "scaling", "version": "52788ff856", "batch_size": 128, "number": 10,
            "repeat": 4, "cuda": true, "devices": ["{world}"], "jr_id": "0",
            "vcd": "{vcd}", "seed": {seed}, "start_time": "Thu Dec 12 21:04:0{run} 2019",
            "run_id": "{run}", "suite": "fast", "completed": true, "hostname": "node",
            "batch_loss": [], "epoch_loss": [], "metrics": {{}},
            "train": {{"avg": {t}, "count": 1, "max": {t}, "min": {t}, "sd": 0.0, "unit": "s"}},
            "train_item": {{"avg": {efficiency}, "max": {efficiency}, "min": {efficiency},
                           "range": 0.0, "sd": 0, "unit": "%"}}}}"#,
        vcd = vcd.join(","),
        seed = run * 100 + world,
        t = 0.5 + 0.01 * f64::from(run) + 0.001 * f64::from(world),
    );
    let Value::Object(mut fields) = parse(text.as_bytes()).expect("entry") else {
        panic!("not an object");
    };
    let id = unique_id(ReportEntry::new(fields.clone()).arguments(), EXCLUDED_FINAL);
    fields.insert("unique_id", Value::Str(id));
    to_python_json(&Value::Object(fields))
}

#[test]
fn one_entry_per_world_size_is_not_a_duplicate() {
    let mut files = vec![SubmittedFile::new("fast.json", JOBS)];
    for run in 0..4 {
        for world in 1..=4u32 {
            let vcd: Vec<String> = (0..world).map(|g| g.to_string()).collect();
            files.push(SubmittedFile::new(
                format!(
                    "fast.scaling.R{run}.D{}.20191212-21040{world}-000000.json",
                    vcd.join(",")
                ),
                entry(run, world),
            ));
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let intake = Intake {
        kind: SourceKind::Folder,
        files,
        facts: Vec::new(),
    };
    let options = Options {
        min_runs: 4,
        ..Options::default()
    };
    let v = validate(&intake, &options);
    // fast.json differs from the shipped fast baselines (one job): that is all there is;
    // `repeat` is the GPU count (4), not the jobs file's 10, as the scaling script forces.
    let rules: Vec<&str> = v.findings.iter().map(|f| f.rule).collect();
    assert!(
        rules
            .iter()
            .all(|r| r.starts_with("jobs.") || *r == "args.disallowed-change"),
        "{:#?}",
        v.findings
    );
    assert_eq!(v.summary.entries, 16);
    assert_eq!(v.summary.runs, 4);
}
