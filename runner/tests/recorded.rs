//! The arguments an entry records are the ones the suite's script records: every job of
//! fast.json planned as the suite's harness ran it (run 0, 2 GPUs, 16 cores so
//! `CPU_COUNT` 8, `BASE=/BASE`) against what each script of mila-iqia/training 0591444
//! recorded, read by running it up to `exp.get_arguments` (`tests/data/fast-recorded.json`:
//! names, values and Python types; `report` and `start_time` left out, the first popped by
//! `make_report`, the second the run's clock, which the runner adds when the copy starts).

use mlbench_runner::{DeviceSet, PlanOptions, plan};
use mlbench_schema::jobs::JobsFile;
use mlbench_schema::value::Value;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// A recorded `[value, type]` as the runner writes it.
fn expected(pair: &Json) -> Value {
    let (value, kind) = (&pair[0], pair[1].as_str().unwrap());
    match (kind, value) {
        ("int", Json::Number(n)) => Value::Int(n.as_i64().unwrap()),
        ("float", Json::Number(n)) => Value::Float(n.as_f64().unwrap()),
        ("str", Json::String(s)) => Value::Str(s.clone()),
        ("bool", Json::Bool(b)) => Value::Bool(*b),
        ("NoneType", Json::Null) => Value::Null,
        ("list", Json::Array(items)) => Value::List(
            items
                .iter()
                .map(|i| Value::Int(i.as_i64().unwrap()))
                .collect(),
        ),
        other => panic!("unexpected recorded value {other:?}"),
    }
}

#[test]
fn every_job_of_fast_json_records_what_its_script_records() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/fast-recorded.json"
    ))
    .unwrap();
    let doc: Json = serde_json::from_str(&text).unwrap();
    let scripts = doc["jobs"].as_object().unwrap();
    let jobs = JobsFile::builtin("fast").unwrap();
    let options = PlanOptions {
        jobs_name: "fast".into(),
        names: Vec::new(),
        devices: DeviceSet::cuda(16, 2).unwrap(),
        out: "/BASE/output".into(),
        run: 0,
        env: [
            ("DATA_DIRECTORY".to_owned(), "/BASE/data".to_owned()),
            ("TEMP_DIRECTORY".to_owned(), "/BASE/tmp".to_owned()),
        ]
        .into(),
    };
    let plan = plan(&jobs, &options).unwrap();
    assert_eq!(plan.executions.len(), scripts.len());
    for execution in &plan.executions {
        let name = execution.name.as_str();
        let recorded = scripts[name]["recorded"].as_object().unwrap();
        let mut want: BTreeMap<&str, Value> = recorded
            .iter()
            .map(|(k, v)| (k.as_str(), expected(v)))
            .collect();
        if name == "atari" {
            // main.py:170 overwrites it after get_arguments, before the report: `args.batch_size
            // = args.num_processes`. (The whole-machine jobs' × devices is applied later, to
            // the entry: execute.rs, `BenchFactory::batch_size`.)
            want.insert("batch_size", want["num_processes"].clone());
        }
        let copy = &execution.copies[0];
        let got: BTreeMap<&str, Value> = copy
            .arguments
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        let got_names: Vec<&str> = got.keys().copied().collect();
        let want_names: Vec<&str> = want.keys().copied().collect();
        assert_eq!(got_names, want_names, "{name}: the recorded names");
        for (key, value) in &want {
            assert_eq!(&got[key], value, "{name}: {key}");
        }
    }
}
