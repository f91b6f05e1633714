//! End to end without libtorch: a fake factory, a jobs file with per-device and
//! whole-machine jobs, two suite runs, reports read back with mlbench-submission's discover + load.

use mlbench_runner::{
    Bench, BenchArgs, BenchError, BenchFactory, Clock, CopyResult, DeviceSet, DeviceSpec,
    ExecuteOptions, Execution, Logs, Plan, PlanOptions, Progress, ScriptedClock, execute_all,
    plan_runs, run_copy, write_failure,
};
use mlbench_schema::jobs::JobsFile;
use mlbench_schema::unique_id::{EXCLUDED_FINAL, unique_id};
use mlbench_schema::value::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Loss decreasing from 1, or NaN from step 5 (`nan`), or a panic at the first step.
struct Fake {
    kind: &'static str,
    k: u64,
}

impl Bench for Fake {
    fn step(&mut self) -> Result<Logs, BenchError> {
        self.k += 1;
        match self.kind {
            "nan" if self.k > 5 => Ok(Logs::loss(f64::NAN)),
            "panic" => panic!("boom"),
            _ => Ok(Logs::loss(1.0 / self.k as f64)),
        }
    }
    fn sync(&self) {}
}

struct Factory;

impl BenchFactory for Factory {
    fn create(
        &self,
        name: &str,
        _args: &BenchArgs,
        _device: DeviceSpec,
    ) -> Result<Box<dyn Bench>, BenchError> {
        let kind = match name {
            "good" | "whole" => "good",
            "nan" => "nan",
            "panic" => "panic",
            _ => return Err(BenchError::Unknown(name.to_owned())),
        };
        Ok(Box::new(Fake { kind, k: 0 }))
    }
    fn source(&self, name: &str) -> Option<&'static str> {
        (name != "nosource").then_some("fn model() {}")
    }
    fn device_name(&self, device: DeviceSpec) -> String {
        format!("{device:?}")
    }
}

const JOBS: &str = r#"[
  {"name": "good", "cmd": "./good/run.sh", "cgroup": "student",
   "args": {"--repeat": 12, "--number": 2, "--batch-size": 4, "--lr": [0.1, 0.2],
            "--report": "$OUTPUT_DIRECTORY/$JOB_FILE", "--cuda": ""}},
  {"name": "nan", "cmd": "./nan/run.sh", "cgroup": "student",
   "args": {"--repeat": 12, "--number": 2}},
  {"name": "panic", "cmd": "./panic/run.sh", "cgroup": "student", "args": {}},
  {"name": "unknown", "cmd": "./unknown/run.sh", "cgroup": "student", "args": {}},
  {"name": "whole", "cmd": "./whole/run.sh", "args": {"--repeat": 11, "--number": 1}}
]"#;

/// The plan options of the suite `jobs` for `names` (all when empty) on `devices`, written
/// under `out`.
fn options_of(
    jobs: &str,
    out: &std::path::Path,
    names: &[&str],
    devices: DeviceSet,
) -> PlanOptions {
    PlanOptions {
        jobs_name: jobs.into(),
        names: names.iter().map(|&n| n.to_owned()).collect(),
        devices,
        out: out.to_path_buf(),
        run: 0,
        env: BTreeMap::new(),
    }
}

#[test]
fn two_runs_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = JobsFile::parse("fast.json", JOBS.as_bytes()).unwrap();
    let options = options_of("fast", dir.path(), &[], DeviceSet::cpu(5, 2).unwrap());
    let plans = plan_runs(&jobs, &options, 2).unwrap();
    let observations = AtomicUsize::new(0);
    let progress = |p: &Progress<'_>| {
        if let Progress::Observation { .. } = p {
            observations.fetch_add(1, Ordering::Relaxed);
        }
    };
    let clock = || Box::new(ScriptedClock::new(vec![0.5; 12])) as Box<dyn Clock>;
    let exec = ExecuteOptions {
        hostname: "testhost".into(),
        clock: &clock,
        progress: &progress,
        launcher: None,
        telemetry: Default::default(),
        profile: false,
    };
    let outcomes = execute_all(&plans, &Factory, &exec).unwrap();
    assert_eq!(outcomes.len(), 2);
    for (r, o) in outcomes.iter().enumerate() {
        // good × 2 configs and whole pass; nan, panic and unknown fail.
        assert_eq!((o.passed, o.failed), (3, 3), "{:?}", o.failures);
        // 2 copies × (2 good + nan + panic + unknown) + 1 whole.
        assert_eq!(o.entries, 11);
        let out = dir.path().join(format!("output{r}"));
        assert_eq!(o.files, [out.join("fast_0.json"), out.join("fast_1.json")]);
        assert_eq!(o.failures.len(), 6);
        assert!(
            o.failures
                .iter()
                .any(|f| f.message.contains("panicked: boom"))
        );
        assert!(
            o.failures
                .iter()
                .any(|f| f.message.contains("loss NaN at step 5"))
        );
        let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
        let lines: Vec<&str> = summary.lines().collect();
        assert_eq!(lines.len(), 7);
        assert!(
            lines[0].starts_with("[ 1/ 5][  /  ] PASSED |"),
            "{}",
            lines[0]
        );
        assert!(lines[0].ends_with(" MIN | ./good/run.sh"));
        assert!(
            lines[2].starts_with("[ 2/ 5][ 2/ 2] FAILED |"),
            "{}",
            lines[2]
        );
        assert!(lines[5].starts_with("[ 5/ 5][  /  ] PASSED |"));
        assert!(lines[6].starts_with("Total Time "));
    }
    // Per run: 12 × 2 copies × 2 good configs, 2 per nan copy (the NaN falls in the
    // third observation), 11 for whole.
    assert_eq!(observations.load(Ordering::Relaxed), 2 * (48 + 4 + 11));

    let discovery =
        mlbench_submission::discover(&[dir.path().to_path_buf()], Some("fast")).unwrap();
    let runs: Vec<&str> = discovery.files.iter().map(|f| f.run.as_str()).collect();
    assert_eq!(runs, ["output0", "output0", "output1", "output1"]);
    let parsed: Vec<_> = discovery
        .files
        .iter()
        .map(|f| mlbench_schema::reader::read_file(&f.path, &f.display))
        .collect();
    for file in &parsed {
        assert!(file.errors.is_empty(), "{:?}", file.errors);
    }
    let counts: Vec<usize> = parsed.iter().map(|f| f.entries.len()).collect();
    assert_eq!(
        counts,
        [6, 5, 6, 5],
        "device 0 also holds the whole-machine entry"
    );

    let file0 = &parsed[0].entries;
    let names: Vec<Option<&str>> = file0.iter().map(|(_, e)| e.name()).collect();
    assert_eq!(
        names,
        [
            Some("good"),
            Some("good"),
            Some("nan"),
            Some("panic"),
            Some("unknown"),
            Some("whole")
        ]
    );
    let good = &file0[0].1;
    for key in [
        "hostname",
        "cpu_cores",
        "devices",
        "vcd",
        "jr_id",
        "version",
        "unique_id",
        "batch_size",
        "number",
        "repeat",
        "train",
        "train_item",
        "batch_loss",
        "epoch_loss",
        "metrics",
        "completed",
        "run_id",
        "name",
        "lr",
        "cuda",
        "seed",
        "workers",
        "start_time",
        "end_time",
        "suite",
    ] {
        assert!(good.get(key).is_some(), "missing {key}");
    }
    assert_eq!(good.get("suite"), Some(&Value::from("fast")));
    // `Sun Dec  1 00:00:00 2019`: ctime's 24 characters, a year at the end.
    let start = good.get("start_time").and_then(Value::as_str).unwrap();
    assert_eq!(start.len(), 24, "{start}");
    assert!(start[20..].parse::<u32>().unwrap() >= 2024, "{start}");
    assert_eq!(good.get("cpu_cores"), Some(&Value::Int(2)), "floor(5 / 2)");
    assert_eq!(good.get("seed"), Some(&Value::Int(100)));
    assert_eq!(good.get("lr"), Some(&Value::Float(0.1)));
    assert_eq!(good.get("cuda"), Some(&Value::Bool(false)));
    // As the suite's make_report: `gpu` only where `cuda` is true, so none on a CPU device.
    assert_eq!(good.get("gpu"), None);
    assert_eq!(good.get("hostname"), Some(&Value::from("testhost")));
    assert_eq!(good.completed(), Some(true));
    assert_eq!(good.failure(false), None);
    // 12 observations of 0.5 s: 2 kept → 4·2 / 0.5 = 16 items/s.
    assert_eq!(good.train_item_avg(), Some(16.0));
    let losses = good.get("batch_loss").and_then(Value::as_list).unwrap();
    assert_eq!(losses.len(), 24);
    // The process's peak resident memory, in bytes: a test process holds more than a MiB
    // (KiB taken for bytes would be less) and far less than 64 GiB (bytes scaled twice).
    #[cfg(target_os = "linux")]
    {
        let peak = good.get("peak_rss_bytes").and_then(Value::as_i64).unwrap();
        assert!((1 << 20..64 << 30).contains(&peak), "{peak}");
    }
    assert_eq!(good.get("peak_device_bytes"), None, "a CPU copy");
    assert_eq!(
        good.get("unique_id").and_then(Value::as_str),
        Some(unique_id(good.arguments(), EXCLUDED_FINAL).as_str())
    );
    let nan = &file0[2].1;
    assert_eq!(nan.completed(), Some(false));
    assert!(nan.first_nonfinite_loss().is_some());
    assert_eq!(file0[3].1.completed(), Some(false));
    let whole = &file0[5].1;
    assert_eq!(whole.vcd().as_deref(), Some("0,1"));
    assert_eq!(
        whole.get("seed"),
        Some(&Value::Int(2)),
        "uid + device_count"
    );
    // Run 1's seeds: uid 1 + (i+1)·100.
    let run1 = &parsed[3].entries[0].1;
    assert_eq!(run1.get("seed"), Some(&Value::Int(201)));
    assert_eq!(run1.get("run_id"), Some(&Value::from("1")));
}

/// A factory whose bench times one observation fewer than `--repeat` (as wlm's script).
struct OneFewer;

impl BenchFactory for OneFewer {
    fn create(
        &self,
        _name: &str,
        _args: &BenchArgs,
        _device: DeviceSpec,
    ) -> Result<Box<dyn Bench>, BenchError> {
        Ok(Box::new(Fake { kind: "good", k: 0 }))
    }
    fn source(&self, _name: &str) -> Option<&'static str> {
        Some("fn model() {}")
    }
    fn device_name(&self, device: DeviceSpec) -> String {
        format!("{device:?}")
    }
    fn observations(&self, _name: &str, repeat: i64) -> i64 {
        repeat - 1
    }
}

#[test]
fn the_factory_decides_how_many_observations_are_timed() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = JobsFile::parse(
        "w.json",
        br#"[{"name": "wlm", "cmd": "./w.sh", "cgroup": "student",
              "args": {"--repeat": 15, "--number": 3, "--batch-size": 2}}]"#,
    )
    .unwrap();
    let options = options_of("w", dir.path(), &[], DeviceSet::cpu(1, 1).unwrap());
    let plans = plan_runs(&jobs, &options, 1).unwrap();
    let observations = AtomicUsize::new(0);
    let progress = |p: &Progress<'_>| {
        if let Progress::Observation { .. } = p {
            observations.fetch_add(1, Ordering::Relaxed);
        }
    };
    // Observations of 1 s, 2 s, …: the 14 timed ones are 1..=14, the mean of the kept
    // (11..=14) is 12.5 s, so train_item = 2 × 3 / 12.5 = 0.48 items/s.
    let clock =
        || Box::new(ScriptedClock::new((1..=15).map(f64::from).collect())) as Box<dyn Clock>;
    let exec = ExecuteOptions {
        hostname: "h".into(),
        clock: &clock,
        progress: &progress,
        launcher: None,
        telemetry: Default::default(),
        profile: false,
    };
    execute_all(&plans, &OneFewer, &exec).unwrap();
    assert_eq!(observations.load(Ordering::Relaxed), 14);
    let text = std::fs::read(dir.path().join("output0/w_0.json")).unwrap();
    let parsed = mlbench_schema::reader::parse_report("w_0.json", &text);
    let (_, entry) = &parsed.entries[0];
    // The recorded --repeat stays the jobs file's.
    assert_eq!(entry.get("repeat").and_then(Value::as_i64), Some(15));
    let train = entry.get("train").and_then(Value::as_object).unwrap();
    assert_eq!(train.get("count").and_then(Value::as_i64), Some(4));
    assert_eq!(train.get("avg").and_then(Value::as_f64), Some(12.5));
    let item = entry.get("train_item").and_then(Value::as_object).unwrap();
    assert_eq!(item.get("avg").and_then(Value::as_f64), Some(0.48));
}

/// A launcher (the CLI's child processes) in place of threads: copy 1 "dies" before writing
/// its entry, so the launcher has the runner write its failure entry; copy 0 runs.
#[test]
fn a_launcher_runs_the_copies_and_a_dead_copy_still_gets_its_entry() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = JobsFile::parse("fast.json", JOBS.as_bytes()).unwrap();
    let options = options_of("fast", dir.path(), &["good"], DeviceSet::cpu(2, 2).unwrap());
    let plans = plan_runs(&jobs, &options, 1).unwrap();
    let clock = || Box::new(ScriptedClock::new(vec![0.5; 12])) as Box<dyn Clock>;
    let quiet = |_: &Progress<'_>| {};
    let inner = ExecuteOptions {
        hostname: "child".into(),
        clock: &clock,
        progress: &quiet,
        launcher: None,
        telemetry: Default::default(),
        profile: false,
    };
    let launched = AtomicUsize::new(0);
    let launcher = |plan: &Plan, execution: &Execution, copy: usize| -> CopyResult {
        launched.fetch_add(1, Ordering::Relaxed);
        if copy == 1 {
            let peak = mlbench_runner::report::PeakMemory {
                rss_bytes: Some(3 << 20),
                device_bytes: None,
            };
            write_failure(
                plan,
                execution,
                copy,
                &Factory,
                "parent",
                "killed by signal 9".into(),
                &peak,
            )
        } else {
            run_copy(plan, execution, copy, &Factory, &inner)
        }
    };
    let exec = ExecuteOptions {
        hostname: "parent".into(),
        clock: &clock,
        progress: &quiet,
        launcher: Some(&launcher),
        telemetry: Default::default(),
        profile: false,
    };
    let outcomes = execute_all(&plans, &Factory, &exec).unwrap();
    // good has 2 configs (--lr list) × 2 copies.
    assert_eq!(launched.load(Ordering::Relaxed), 4);
    let o = &outcomes[0];
    assert_eq!((o.passed, o.failed, o.entries), (0, 2, 4));
    assert!(
        o.failures
            .iter()
            .all(|f| f.vcd == "1" && f.message == "killed by signal 9")
    );
    for (device, completed, host) in [(0, true, "child"), (1, false, "parent")] {
        let path = dir.path().join(format!("output0/fast_{device}.json"));
        let parsed = mlbench_schema::reader::parse_report("s", &std::fs::read(path).unwrap());
        assert_eq!(parsed.entries.len(), 2);
        for (_, e) in &parsed.entries {
            assert_eq!(e.completed(), Some(completed));
            assert_eq!(e.get("hostname").and_then(Value::as_str), Some(host));
            assert_eq!(e.name(), Some("good"));
            // The dead copy's entry has the peak its launcher measured: still an entry of
            // `mlbench run` (schema's entry_runtime), though it has no `gpu` on a CPU.
            if !completed {
                assert_eq!(e.get("peak_rss_bytes"), Some(&Value::Int(3 << 20)));
            }
            let runtime = mlbench_schema::runtime::entry_runtime(e);
            assert_eq!(runtime, Some(mlbench_schema::RuntimeKind::MlbenchRun));
        }
    }
}

/// `gpu` as the suite's make_report writes it: the device's name where the copy records
/// `cuda: true` (a CUDA device), nothing on a CPU device; whole-machine copies name their
/// first device.
#[test]
fn gpu_is_the_cuda_devices_name_and_absent_on_cpu() {
    for (devices, want) in [
        (
            DeviceSet::cuda(4, 2).unwrap(),
            [Some("Cuda(0)"), Some("Cuda(1)")],
        ),
        (DeviceSet::cpu(4, 2).unwrap(), [None, None]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let jobs = JobsFile::parse("fast.json", JOBS.as_bytes()).unwrap();
        let options = options_of("fast", dir.path(), &["good", "unknown"], devices);
        let plans = plan_runs(&jobs, &options, 1).unwrap();
        execute_quietly(&plans, &Factory, vec![0.5; 12]);
        for (device, gpu) in want.iter().enumerate() {
            let path = dir.path().join(format!("output0/fast_{device}.json"));
            let parsed = mlbench_schema::reader::parse_report("s", &std::fs::read(path).unwrap());
            // good's two configurations and unknown's failure entry.
            assert_eq!(parsed.entries.len(), 3);
            for (_, e) in &parsed.entries {
                assert_eq!(e.get("gpu").and_then(Value::as_str), *gpu, "{e:?}");
                assert_eq!(e.get("cuda"), Some(&Value::Bool(gpu.is_some())));
            }
        }
    }
}

/// A factory whose whole-machine bench scales its batch by the devices of `vcd`, as
/// conv_distributed.py does; its bench sees the jobs file's batch, fails on `fail`.
struct Scaled;

impl BenchFactory for Scaled {
    fn create(
        &self,
        name: &str,
        args: &BenchArgs,
        _device: DeviceSpec,
    ) -> Result<Box<dyn Bench>, BenchError> {
        assert_eq!(args.batch_size, 3, "the model gets the per-device batch");
        if name == "fail" {
            return Err(BenchError::Failed {
                bench: name.to_owned(),
                message: "no".into(),
            });
        }
        Ok(Box::new(Fake { kind: "good", k: 0 }))
    }
    fn source(&self, _name: &str) -> Option<&'static str> {
        Some("fn model() {}")
    }
    fn device_name(&self, device: DeviceSpec) -> String {
        format!("{device:?}")
    }
    fn batch_size(&self, _name: &str, args: &BenchArgs) -> i64 {
        let devices = match args.extra.get("vcd") {
            Some(Value::Str(s)) => s.split(',').count() as i64,
            _ => 1,
        };
        args.batch_size * devices
    }
}

#[test]
fn a_scaled_batch_is_recorded_and_counts_the_items() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = JobsFile::parse(
        "w.json",
        br#"[{"name": "whole", "cmd": "./w.sh", "cgroup": "all",
              "args": {"--repeat": 11, "--number": 2, "--batch-size": 3}},
             {"name": "fail", "cmd": "./f.sh", "cgroup": "all",
              "args": {"--repeat": 11, "--number": 2, "--batch-size": 3}}]"#,
    )
    .unwrap();
    let options = options_of("w", dir.path(), &[], DeviceSet::cpu(4, 4).unwrap());
    let plans = plan_runs(&jobs, &options, 1).unwrap();
    // 1 s per observation: 3 per device × 4 devices × 2 steps = 24 items/s.
    execute_quietly(&plans, &Scaled, vec![1.0; 11]);
    let text = std::fs::read(dir.path().join("output0/w_0.json")).unwrap();
    let parsed = mlbench_schema::reader::parse_report("w_0.json", &text);
    let (_, whole) = &parsed.entries[0];
    assert_eq!(whole.get("vcd"), Some(&Value::from("0,1,2,3")));
    assert_eq!(whole.get("batch_size").and_then(Value::as_i64), Some(12));
    let item = whole.get("train_item").and_then(Value::as_object).unwrap();
    assert_eq!(item.get("avg").and_then(Value::as_f64), Some(24.0));
    // The id leaves batch_size out (not_parameter), as the suite's.
    assert_eq!(
        whole.get("unique_id").and_then(Value::as_str),
        Some(unique_id(whole.arguments(), EXCLUDED_FINAL).as_str())
    );
    // A failure's short entry records the scaled batch too, as the script had set it.
    let (_, failed) = &parsed.entries[1];
    assert_eq!(failed.get("completed"), Some(&Value::Bool(false)));
    assert_eq!(failed.get("batch_size").and_then(Value::as_i64), Some(12));
}

/// Executes `plans` in this process on host `h`, each observation timed as `seconds` say,
/// with no progress; the outcome of each plan.
fn execute_quietly(
    plans: &[Plan],
    factory: &dyn BenchFactory,
    seconds: Vec<f64>,
) -> Vec<mlbench_runner::RunOutcome> {
    let clock = || Box::new(ScriptedClock::new(seconds.clone())) as Box<dyn Clock>;
    let quiet = |_: &Progress<'_>| {};
    let exec = ExecuteOptions {
        hostname: "h".into(),
        clock: &clock,
        progress: &quiet,
        launcher: None,
        telemetry: Default::default(),
        profile: false,
    };
    execute_all(plans, factory, &exec).unwrap()
}

/// Ranks that time 10 steps of the world's batch at 100 items/s per rank times the
/// world's efficiency: 1.0 alone, 0.9 at 2; at 3, rank 2 fails.
struct Ranked;

impl BenchFactory for Ranked {
    fn create(
        &self,
        name: &str,
        _args: &BenchArgs,
        _device: DeviceSpec,
    ) -> Result<Box<dyn Bench>, BenchError> {
        Err(BenchError::Unknown(name.to_owned()))
    }
    fn source(&self, _name: &str) -> Option<&'static str> {
        Some("fn micro_bench() {}")
    }
    fn device_name(&self, device: DeviceSpec) -> String {
        format!("{device:?}")
    }
    fn rank(
        &self,
        _name: &str,
        args: &BenchArgs,
        device: DeviceSpec,
        rendezvous: &mlbench_runner::rendezvous::Rendezvous,
        window: &mut dyn mlbench_runner::timing::TimedWindow,
    ) -> Result<mlbench_runner::RankTiming, BenchError> {
        let DeviceSpec::Cpu { index, .. } = device else {
            panic!("CPU devices")
        };
        assert_eq!(index as usize, rendezvous.rank, "rank r on device r");
        // The timed steps: long enough for a few samples at 100 Hz.
        window.start();
        std::thread::sleep(std::time::Duration::from_millis(60));
        window.end();
        let world = rendezvous.world;
        if world == 3 && rendezvous.rank == 2 {
            return Err(BenchError::Failed {
                bench: "scaling".into(),
                message: "out of memory".into(),
            });
        }
        let efficiency = [1.0, 0.9, 0.8][world - 1];
        let items = args.batch_size as u64 * world as u64;
        let speed = 100.0 * world as f64 * efficiency;
        Ok(mlbench_runner::RankTiming {
            steps: 10,
            items,
            seconds: (10 * items) as f64 / speed,
        })
    }
}

/// The suite's baselines.json entry of `scaling`.
const SCALING_JOB: &str = r#"[{"name": "scaling", "cmd": "./image_classification/scaling/pytorch/run.sh",
    "args": {"--repeat": 10, "--number": 10, "--network": "resnet101", "--devices": 0,
             "--batch-size": 128, "--report": "$OUTPUT_DIRECTORY"}, "cgroup": "all"}]"#;

#[test]
fn a_scaling_sweep_writes_one_entry_per_world_size_as_scaling_py() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = JobsFile::parse("baselines.json", SCALING_JOB.as_bytes()).unwrap();
    let options = options_of("baselines", dir.path(), &[], DeviceSet::cpu(6, 3).unwrap());
    let plans = plan_runs(&jobs, &options, 1).unwrap();
    let copy = &plans[0].executions[0].copies[0];
    assert_eq!(
        copy.args.extra.get("network"),
        Some(&Value::from("resnet101"))
    );
    let outcome = &execute_quietly(&plans, &Ranked, vec![])[0];
    assert_eq!((outcome.passed, outcome.failed, outcome.entries), (0, 1, 3));
    let failure = &outcome.failures[0].message;
    assert!(
        failure.contains("world size 3: rank 2: scaling: out of memory"),
        "{failure}"
    );
    let text = std::fs::read(dir.path().join("output0/baselines_0.json")).unwrap();
    let parsed = mlbench_schema::reader::parse_report("baselines_0.json", &text);
    let entries: Vec<_> = parsed.entries.iter().map(|(_, e)| e).collect();
    assert_eq!(entries.len(), 3);
    let ids: Vec<_> = entries.iter().map(|e| e.get("unique_id")).collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "one id for the sweep");
    let devices = Value::List(["0", "1", "2"].map(Value::from).to_vec());
    for (k, entry) in entries.iter().enumerate() {
        let vcd = (0..=k).map(|d| d.to_string()).collect::<Vec<_>>().join(",");
        assert_eq!(entry.get("vcd"), Some(&Value::from(vcd.as_str())));
        assert_eq!(entry.get("devices"), Some(&devices));
        assert_eq!(entry.get("repeat").and_then(Value::as_i64), Some(3));
        assert_eq!(entry.get("batch_size").and_then(Value::as_i64), Some(128));
        assert_eq!(entry.get("jr_id"), Some(&Value::from("0")));
        // scaling.py forwards --network to micro_bench.py without recording it.
        assert_eq!(entry.get("network"), None);
    }
    let item = |k: usize| {
        entries[k]
            .get("train_item")
            .and_then(Value::as_object)
            .unwrap()
    };
    assert_eq!(item(0).get("avg").and_then(Value::as_f64), Some(1.0));
    let e2 = item(1).get("avg").and_then(Value::as_f64).unwrap();
    assert!((e2 - 0.9).abs() < 1e-12, "{e2}");
    assert_eq!(item(1).get("unit"), Some(&Value::from("%")));
    assert_eq!(item(1).get("sd").and_then(Value::as_i64), Some(0));
    // The failed world: completed false, train_item empty, as scaling.py writes it.
    assert_eq!(entries[2].get("completed"), Some(&Value::Bool(false)));
    assert!(item(2).is_empty());
    // The timed loop of world 2's rank 0: 10 steps of 256 items at 180 items/s.
    let train = entries[1].get("train").and_then(Value::as_object).unwrap();
    let seconds = train.get("avg").and_then(Value::as_f64).unwrap();
    assert!((seconds - 2560.0 / 180.0).abs() < 1e-9, "{seconds}");
}

/// A sweep sampled in threads: one file per world size, in order, each of the world's
/// devices, its window rank 0's timed steps (the other ranks mark nothing), a failed
/// world's included; a note per world size.
/// Runs `plans` sampling at 100 Hz after `idle` of idle baseline: the outcomes, and the
/// telemetry lines said.
fn execute_sampled(
    plans: &[mlbench_runner::plan::Plan],
    factory: &dyn BenchFactory,
    idle: std::time::Duration,
) -> (Vec<mlbench_runner::RunOutcome>, Vec<String>) {
    use mlbench_runner::telemetry::TelemetryOptions;
    let said = std::sync::Mutex::new(Vec::new());
    let progress = |p: &Progress<'_>| {
        if let Progress::Telemetry(lines) = p {
            said.lock().unwrap().extend(lines.iter().cloned());
        }
    };
    let clock = || Box::new(ScriptedClock::new(vec![0.5; 12])) as Box<dyn Clock>;
    let exec = ExecuteOptions {
        hostname: "testhost".into(),
        clock: &clock,
        progress: &progress,
        launcher: None,
        telemetry: TelemetryOptions { hz: 100, idle },
        profile: false,
    };
    let outcomes = execute_all(plans, factory, &exec).unwrap();
    (outcomes, said.into_inner().unwrap())
}

/// The names in `folder`, sorted.
fn file_names(folder: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn a_sampled_sweep_writes_a_file_per_world_size_marked_by_rank_zero() {
    use mlbench_schema::telemetry::{Edge, read};
    let dir = tempfile::tempdir().unwrap();
    let jobs = JobsFile::parse("baselines.json", SCALING_JOB.as_bytes()).unwrap();
    let options = options_of("baselines", dir.path(), &[], DeviceSet::cpu(6, 3).unwrap());
    let plans = plan_runs(&jobs, &options, 1).unwrap();
    let (outcomes, said) = execute_sampled(&plans, &Ranked, std::time::Duration::ZERO);
    let outcome = &outcomes[0];
    assert_eq!((outcome.failed, outcome.entries), (1, 3));
    let folder = dir.path().join("output0/telemetry");
    let names = file_names(&folder);
    assert_eq!(
        names,
        ["scaling.0.2.jsonl", "scaling.0.3.jsonl", "scaling.0.jsonl"]
    );
    for (k, name) in ["scaling.0.jsonl", "scaling.0.2.jsonl", "scaling.0.3.jsonl"]
        .iter()
        .enumerate()
    {
        let file = read(&folder.join(name)).unwrap();
        assert_eq!(file.header.bench.as_deref(), Some("scaling"), "{name}");
        assert_eq!(file.header.copy, Some(0), "{name}");
        // One window, marked once: rank 0's 60 ms.
        let marks: Vec<_> = file
            .marks
            .iter()
            .map(|m| (m.edge, m.window.as_str()))
            .collect();
        assert_eq!(
            marks,
            [(Edge::Start, "train"), (Edge::End, "train")],
            "{name}"
        );
        let span = file.marks[1].t_ns - file.marks[0].t_ns;
        assert!(
            (60_000_000..2_000_000_000).contains(&span),
            "{name}: {span} ns"
        );
        // The world's devices: the same sources for 1, 2 or 3 CPU ranks (one package,
        // one process), so the header is the machine's, not the world size's.
        assert!(
            !file.header.devices.is_empty() || !file.header.facts.is_empty(),
            "{k}"
        );
    }
    let energy: Vec<&String> = said.iter().filter(|l| l.starts_with("energy: ")).collect();
    // An energy line per world size where RAPL is readable, none where it is not.
    assert!(energy.is_empty() || energy.len() == 3, "{said:?}");
    for (k, line) in energy.iter().enumerate() {
        assert!(line.contains(&format!("world size {}", k + 1)), "{line}");
    }
}

/// Telemetry with the copies in threads: the idle baseline of each device, a file per
/// copy (numbered for the second configuration of `good`), the window of the counted
/// observations where the loop reached them, and a note per copy.
#[test]
fn telemetry_beside_every_copy_and_an_idle_baseline_per_device() {
    use mlbench_schema::telemetry::{Edge, read};
    let dir = tempfile::tempdir().unwrap();
    let jobs = JobsFile::parse("fast.json", JOBS.as_bytes()).unwrap();
    let options = options_of("fast", dir.path(), &[], DeviceSet::cpu(5, 2).unwrap());
    let plans = plan_runs(&jobs, &options, 1).unwrap();
    let (_, said) = execute_sampled(&plans, &Factory, std::time::Duration::from_millis(200));
    let folder = dir.path().join("output0/telemetry");
    let names = file_names(&folder);
    assert_eq!(
        names,
        [
            "good.0.2.jsonl",
            "good.0.jsonl",
            "good.1.2.jsonl",
            "good.1.jsonl",
            "idle.0.jsonl",
            "idle.1.jsonl",
            "nan.0.jsonl",
            "nan.1.jsonl",
            "panic.0.jsonl",
            "panic.1.jsonl",
            "unknown.0.jsonl",
            "unknown.1.jsonl",
            "whole.0.jsonl",
        ]
    );
    let edges = |name: &str| -> Vec<(Edge, String)> {
        let file = read(&folder.join(name)).unwrap();
        assert_eq!(file.header.sample_period_ns, 10_000_000, "{name}");
        file.marks
            .iter()
            .map(|m| (m.edge, m.window.clone()))
            .collect()
    };
    let pair = |w: &str| vec![(Edge::Start, w.to_owned()), (Edge::End, w.to_owned())];
    for name in ["good.0.jsonl", "good.1.2.jsonl", "whole.0.jsonl"] {
        assert_eq!(edges(name), pair("train"), "{name}");
    }
    assert_eq!(edges("idle.1.jsonl"), pair("idle"));
    // The NaN at observation 2 and the panic at the first step come before the 11th
    // observation, and the unknown bench never starts: no window.
    for name in ["nan.0.jsonl", "panic.1.jsonl", "unknown.0.jsonl"] {
        assert_eq!(edges(name), [], "{name}");
    }
    // The idle baseline first; then whatever this machine's sources give (an energy line
    // per copy where RAPL is readable), each fact once.
    assert_eq!(
        said[0],
        "idle baseline of output0: sampling the idle devices for 0.2 s before the first job"
    );
    let facts: Vec<&String> = said
        .iter()
        .filter(|l| l.starts_with("telemetry: "))
        .collect();
    let unique: std::collections::BTreeSet<&String> = facts.iter().copied().collect();
    assert_eq!(facts.len(), unique.len(), "{said:?}");
    let energy = said.iter().filter(|l| l.starts_with("energy: ")).count();
    assert!(energy == 0 || energy == 11, "{said:?}");
}

/// Writes a trace of two nested operators (300 µs of `outer` holding 100 µs of `inner`)
/// and counts its starts and stops.
struct FakeProfiler {
    calls: std::sync::Arc<AtomicUsize>,
}

impl mlbench_runner::bench::Profiler for FakeProfiler {
    fn start(&mut self) -> Result<(), String> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
    fn stop(&mut self, path: &std::path::Path) -> Result<(), String> {
        self.calls.fetch_add(100, Ordering::Relaxed);
        let events = r#"{"traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "outer", "pid": 1, "tid": 1, "ts": 10, "dur": 300},
            {"ph": "X", "cat": "cpu_op", "name": "inner", "pid": 1, "tid": 1, "ts": 50, "dur": 100}]}"#;
        std::fs::write(path, events).map_err(|e| e.to_string())
    }
}

/// The fake factory with a profiler (`None`: without one).
struct Profiling(Option<std::sync::Arc<AtomicUsize>>);

impl BenchFactory for Profiling {
    fn create(&self, n: &str, a: &BenchArgs, d: DeviceSpec) -> Result<Box<dyn Bench>, BenchError> {
        Factory.create(n, a, d)
    }
    fn source(&self, name: &str) -> Option<&'static str> {
        Factory.source(name)
    }
    fn device_name(&self, device: DeviceSpec) -> String {
        Factory.device_name(device)
    }
    fn profiler(&self, _: DeviceSpec) -> Option<Box<dyn mlbench_runner::bench::Profiler>> {
        let calls = self.0.clone()?;
        Some(Box::new(FakeProfiler { calls }))
    }
}

/// `--profile`: the profiler runs once around the counted observations, its trace lands
/// in the run's `profiles` folder, and the entry's `profile` is that trace's summary
/// (self times 200 µs and 100 µs, 300 µs inside operators). A factory without a
/// profiler fails the copy, saying so, rather than leave the profile out unsaid.
#[test]
fn a_profiled_copy_keeps_its_trace_and_its_summary() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = JobsFile::parse("fast.json", JOBS.as_bytes()).unwrap();
    let options = options_of("fast", dir.path(), &["good"], DeviceSet::cpu(1, 1).unwrap());
    let plans = plan_runs(&jobs, &options, 1).unwrap();
    let (good, ex_good) = (&plans[0], &plans[0].executions[0]);
    let clock = || Box::new(ScriptedClock::new(vec![0.5; 12])) as Box<dyn Clock>;
    let quiet = |_: &Progress<'_>| {};
    let exec = ExecuteOptions {
        hostname: "h".into(),
        clock: &clock,
        progress: &quiet,
        launcher: None,
        telemetry: Default::default(),
        profile: true,
    };
    let calls = std::sync::Arc::new(AtomicUsize::new(0));
    let result = run_copy(good, ex_good, 0, &Profiling(Some(calls.clone())), &exec);
    assert_eq!(result.failure, None);
    assert_eq!(calls.load(Ordering::Relaxed), 101, "one start, one stop");
    let trace = dir.path().join("output0/profiles/good.0.trace.json");
    assert!(trace.is_file(), "{}", trace.display());
    let text = std::fs::read_to_string(result.written.unwrap()).unwrap();
    let entries = mlbench_schema::reader::parse_report("r", text.as_bytes()).entries;
    let profile = entries[0].1.get("profile").expect("a profile field");
    let summary = mlbench_schema::profile::ProfileSummary::from_value(profile).unwrap();
    assert_eq!(summary.trace, "profiles/good.0.trace.json");
    assert!((summary.operators_s - 300e-6).abs() < 1e-12);
    let outer = summary.top.iter().find(|o| o.name == "outer").unwrap();
    assert!((outer.self_s - 200e-6).abs() < 1e-12);
    assert!(summary.window_s >= 0.0 && summary.window_s.is_finite());
    // Without a profiler: the copy fails and says why.
    let none = run_copy(good, ex_good, 0, &Profiling(None), &exec);
    let failure = none.failure.expect("no profiler is a failure");
    assert!(
        failure.contains("--profile") && failure.contains("no profiler"),
        "{failure}"
    );
}
