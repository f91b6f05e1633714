//! `mlbench run --smoke`: the plans of a real run, shrunk to the sizes of `smoke.toml`
//! (shipped in the binary) so that every job runs all of its code in seconds. Each entry
//! records `smoke: true` among its arguments (so its `unique_id` is a smoke run's, never
//! a real one's), which `validate` and `report` read to tell a smoke run from a submission.

use crate::bench::DeviceSpec;
use crate::plan::Plan;
use mlbench_schema::value::Value;
use std::collections::BTreeMap;

/// The sizes of `smoke.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct Smoke {
    /// `repeat` of every copy.
    pub repeat: i64,
    /// `number` of every copy.
    pub number: i64,
    /// Bench → argument (argparse destination) → value.
    pub benches: BTreeMap<String, BTreeMap<String, Value>>,
}

/// `smoke.toml` does not read (a bug in the shipped file: a test reads it).
#[derive(Debug, thiserror::Error)]
#[error("smoke.toml: {0}")]
pub struct SmokeError(String);

impl Smoke {
    /// The shipped sizes.
    pub fn builtin() -> Result<Smoke, SmokeError> {
        Smoke::parse(include_str!("smoke.toml"))
    }

    /// Reads a smoke table.
    pub fn parse(text: &str) -> Result<Smoke, SmokeError> {
        let table: toml::Table = text.parse().map_err(|e| SmokeError(format!("{e}")))?;
        let int = |key: &str| match table.get(key) {
            Some(toml::Value::Integer(i)) if *i > 0 => Ok(*i),
            other => Err(SmokeError(format!(
                "`{key}` must be a positive integer, found {other:?}"
            ))),
        };
        let mut benches = BTreeMap::new();
        if let Some(toml::Value::Table(t)) = table.get("benches") {
            for (bench, sizes) in t {
                let toml::Value::Table(sizes) = sizes else {
                    return Err(SmokeError(format!("[benches.{bench}] is not a table")));
                };
                let mut args = BTreeMap::new();
                for (key, value) in sizes {
                    let value = match value {
                        toml::Value::Integer(i) => Value::Int(*i),
                        toml::Value::Float(f) => Value::Float(*f),
                        toml::Value::String(s) => Value::Str(s.clone()),
                        toml::Value::Boolean(b) => Value::Bool(*b),
                        other => {
                            return Err(SmokeError(format!(
                                "benches.{bench}.{key}: unsupported value {other:?}"
                            )));
                        }
                    };
                    args.insert(key.clone(), value);
                }
                benches.insert(bench.clone(), args);
            }
        }
        Ok(Smoke {
            repeat: int("repeat")?,
            number: int("number")?,
            benches,
        })
    }

    /// Shrinks every copy of `plans`. On a CPU device, an fp16 job (`--half`, `--fp16`)
    /// runs in float32 (float16 needs CUDA); returns the benches that did.
    pub fn apply(&self, plans: &mut [Plan]) -> Vec<String> {
        let mut in_float32 = Vec::new();
        for plan in plans.iter_mut() {
            for execution in &mut plan.executions {
                let sizes = self.benches.get(&execution.name);
                for copy in &mut execution.copies {
                    let mut values = vec![
                        ("repeat".to_owned(), Value::Int(self.repeat)),
                        ("number".to_owned(), Value::Int(self.number)),
                    ];
                    values.extend(
                        sizes
                            .into_iter()
                            .flatten()
                            .map(|(k, v)| (k.clone(), v.clone())),
                    );
                    let on_cpu = matches!(copy.device, DeviceSpec::Cpu { .. });
                    for key in ["half", "fp16"] {
                        if on_cpu && copy.args.extra.get(key).is_some_and(truthy) {
                            values.push((key.to_owned(), Value::Bool(false)));
                            if !in_float32.contains(&execution.name) {
                                in_float32.push(execution.name.clone());
                            }
                        }
                    }
                    values.push(("smoke".to_owned(), Value::Bool(true)));
                    for (key, value) in values {
                        copy.arguments.insert(key.clone(), value.clone());
                        match (key.as_str(), &value) {
                            ("batch_size", Value::Int(i)) => copy.args.batch_size = *i,
                            ("number", Value::Int(i)) => copy.args.number = *i,
                            ("repeat", Value::Int(i)) => copy.args.repeat = *i,
                            _ => {
                                copy.args.extra.insert(key, value);
                            }
                        }
                    }
                }
            }
        }
        in_float32
    }
}

// The shipped sizes not reading is a bug.
mlbench_schema::classify_all!(Internal: SmokeError);

/// A flag's value as the models read it (`--half ""` is `true`).
fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Null => false,
        Value::Int(i) => *i != 0,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devices::DeviceSet;
    use crate::plan::{PlanOptions, plan};

    fn fast(devices: DeviceSet) -> Plan {
        let jobs = mlbench_schema::jobs::JobsFile::builtin("fast").unwrap();
        let options = PlanOptions {
            jobs_name: "fast".into(),
            names: Vec::new(),
            devices,
            out: "/out".into(),
            run: 0,
            env: [
                ("DATA_DIRECTORY".to_owned(), "/data".to_owned()),
                ("TEMP_DIRECTORY".to_owned(), "/tmp".to_owned()),
            ]
            .into(),
        };
        plan(&jobs, &options).unwrap()
    }

    #[test]
    fn the_shipped_table_reads_and_names_only_benches_of_the_shipped_jobs_files() {
        let smoke = Smoke::builtin().unwrap();
        assert_eq!((smoke.repeat, smoke.number), (12, 1));
        let plan = fast(DeviceSet::cpu(2, 2).unwrap());
        let baselines = mlbench_schema::jobs::JobsFile::builtin("baselines").unwrap();
        for bench in smoke.benches.keys() {
            assert!(
                plan.executions.iter().any(|e| &e.name == bench)
                    || baselines.jobs.iter().any(|j| &j.name == bench),
                "{bench} is no job of fast.json or baselines.json"
            );
        }
        assert!(smoke.benches.contains_key("scaling"));
    }

    #[test]
    fn sizes_replace_the_jobs_and_every_copy_says_smoke() {
        let mut plans = vec![fast(DeviceSet::cpu(2, 2).unwrap())];
        let float32 = Smoke::builtin().unwrap().apply(&mut plans);
        assert!(float32.contains(&"convnet_fp16".to_owned()), "{float32:?}");
        assert!(float32.contains(&"wlmfp16".to_owned()), "{float32:?}");
        for e in &plans[0].executions {
            for c in &e.copies {
                assert_eq!(c.arguments.get("smoke"), Some(&Value::Bool(true)));
                // cart's table sets its own `number` (REINFORCE updates once per observation).
                let number = if e.name == "cart" { 8 } else { 1 };
                assert_eq!((c.args.repeat, c.args.number), (12, number), "{}", e.name);
                assert_eq!(c.arguments.get("repeat"), Some(&Value::Int(12)));
            }
        }
        let convnet = plans[0]
            .executions
            .iter()
            .find(|e| e.name == "convnet")
            .unwrap();
        let c = &convnet.copies[0];
        assert_eq!(c.args.batch_size, 2);
        assert_eq!(c.arguments.get("batch_size"), Some(&Value::Int(2)));
        assert_eq!(c.args.extra.get("image_size"), Some(&Value::Int(32)));
        // The job's own choices stay.
        assert_eq!(
            c.args.extra.get("arch"),
            convnet_job_arch().as_ref(),
            "architecture kept"
        );
        let half = plans[0]
            .executions
            .iter()
            .find(|e| e.name == "convnet_fp16")
            .unwrap();
        assert_eq!(
            half.copies[0].args.extra.get("half"),
            Some(&Value::Bool(false))
        );
    }

    fn convnet_job_arch() -> Option<Value> {
        fast(DeviceSet::cpu(2, 2).unwrap())
            .executions
            .iter()
            .find(|e| e.name == "convnet")
            .and_then(|e| e.copies[0].args.extra.get("arch").cloned())
    }

    #[test]
    fn the_smoke_sizes_leave_every_bench_a_recorded_observation() {
        let mut plans = vec![fast(DeviceSet::cpu(2, 2).unwrap())];
        Smoke::builtin().unwrap().apply(&mut plans);
        for e in &plans[0].executions {
            let a = &e.copies[0].args;
            crate::plan::check_observations(&e.name, a.number, a.repeat)
                .unwrap_or_else(|err| panic!("{err}"));
        }
    }

    #[test]
    fn bad_tables_are_errors() {
        assert!(Smoke::parse("repeat = 0\nnumber = 1").is_err());
        assert!(Smoke::parse("repeat = 2").is_err());
        assert!(Smoke::parse("repeat = 2\nnumber = 1\n[benches]\nx = 1").is_err());
        assert!(Smoke::parse("repeat = 2\nnumber = 1\n[benches.x]\na = [1]").is_err());
    }
}
