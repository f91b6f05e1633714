//! Energy end to end on the CPU (what the energy work had to show): `mlbench run` samples a RAPL
//! package, `validate` checks the files, `report` gives the energy of each copy and
//! `grid --per joule` scores two submissions per joule. This machine has no readable
//! RAPL, so the package is a sysfs tree of the test's own (`MLBENCH_SYS_ROOT`) whose
//! counter a thread advances at a known power, wrapping as RAPL's does; every expected
//! figure comes from that power and the window the telemetry file marks. The run is
//! niced below the counter's thread, and each energy is allowed what the thread's longest
//! stall could move it.

use crate::fixtures::{mlbench, quiet, validate_json};
use mlbench_schema::telemetry::{Edge, TelemetryFile};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// toy_reg on one CPU device: 2 counted observations of 8,000 steps of 16 items. The
/// window must hold at least one of the counter's wraps (0.4 s at 50 W) on any machine:
/// 2,000 steps took 0.18 s on a fast one, so the work is four times that.
const JOBS: &str = r#"[
 {"name": "toy_reg", "cmd": "./regression/polynome/pytorch/run.sh",
  "args": {"--repeat": 12, "--number": 8000, "--batch-size": 16, "--cuda": ""}, "cgroup": "student"}
]"#;
const ITEMS: f64 = 2.0 * 8000.0 * 16.0;

/// The counter's range: 20 J, so it wraps every 0.4 s at 50 W (several times a window).
const MAX_ENERGY_RANGE_UJ: u64 = 19_999_999;

/// A RAPL package under `<root>/class/powercap/intel-rapl:0` drawing `watts`: its
/// `energy_uj` is rewritten every millisecond, whole (a rename), as the µJ since the
/// start modulo the range.
struct FakeRapl {
    root: tempfile::TempDir,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// The longest time between two writes, ns: a reading can be that stale, the
    /// thread being starved on a loaded machine, so an energy read over a window can be
    /// off by the power times it at each edge.
    stall_ns: Arc<AtomicU64>,
}

impl FakeRapl {
    fn start(watts: f64) -> Self {
        Self::with_range(watts, MAX_ENERGY_RANGE_UJ)
    }

    /// A package whose counter wraps past `range_uj`.
    fn with_range(watts: f64, range_uj: u64) -> Self {
        let root = tempfile::tempdir().unwrap();
        let zone = root.path().join("class/powercap/intel-rapl:0");
        std::fs::create_dir_all(&zone).unwrap();
        std::fs::write(zone.join("name"), "package-0\n").unwrap();
        let range = format!("{range_uj}\n");
        std::fs::write(zone.join("max_energy_range_uj"), range).unwrap();
        let write = move |zone: &Path, origin: Instant| {
            let uj = (watts * origin.elapsed().as_secs_f64() * 1e6) as u64;
            let tmp = zone.join("energy_uj.tmp");
            std::fs::write(&tmp, format!("{}\n", uj % (range_uj + 1))).unwrap();
            std::fs::rename(&tmp, zone.join("energy_uj")).unwrap();
        };
        let origin = Instant::now();
        write(&zone, origin);
        let stop = Arc::new(AtomicBool::new(false));
        let stall_ns = Arc::new(AtomicU64::new(0));
        let (flag, stall) = (Arc::clone(&stop), Arc::clone(&stall_ns));
        let thread = std::thread::spawn(move || {
            let mut last = Instant::now();
            while !flag.load(Ordering::Relaxed) {
                write(&zone, origin);
                let now = Instant::now();
                stall.fetch_max((now - last).as_nanos() as u64, Ordering::Relaxed);
                last = now;
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        Self {
            root,
            stop,
            thread: Some(thread),
            stall_ns,
        }
    }

    /// `mlbench` reading this package, at a lower priority than the counter's thread:
    /// on a loaded machine the counter keeps up as a hardware one would.
    fn mlbench(&self) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::new("nice");
        cmd.args(["-n", "10"])
            .arg(assert_cmd::cargo::cargo_bin("mlbench"))
            .env("MLBENCH_SYS_ROOT", self.root.path());
        quiet(cmd)
    }

    /// Stops the counter; the longest time its readings went without a write.
    fn stop(mut self) -> Duration {
        self.halt();
        Duration::from_nanos(self.stall_ns.load(Ordering::Relaxed))
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for FakeRapl {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The relative tolerance of an energy over a window of `seconds`: 5 %, plus what a
/// counter stale by `stall` at both edges may take from it or add.
fn energy_tolerance(seconds: f64, stall: Duration) -> f64 {
    0.05 + 2.0 * stall.as_secs_f64() / seconds
}

/// A run of [`JOBS`] into `out` on one CPU device, sampling the package at `watts`; the
/// fake counter's longest stall.
fn run_at(watts: f64, jobs: &Path, out: &Path) -> Duration {
    let rapl = FakeRapl::start(watts);
    rapl.mlbench()
        .arg("run")
        .arg("--jobs")
        .arg(jobs)
        .args([
            "--devices",
            "1",
            "--sample-hz",
            "20",
            "--idle-baseline",
            "1s",
        ])
        .arg("--out-dir")
        .arg(out)
        .assert()
        .success();
    rapl.stop()
}

/// The `train` window of a copy's file, s, from its marks.
fn window_s(file: &TelemetryFile) -> f64 {
    let edge = |e: Edge| file.marks.iter().find(|m| m.edge == e).unwrap().t_ns;
    (edge(Edge::End) - edge(Edge::Start)) as f64 * 1e-9
}

fn read_window(out: &Path) -> f64 {
    let file = out.join("output0/telemetry/toy_reg.0.jsonl");
    let file = mlbench_schema::telemetry::read(&file).unwrap();
    assert_eq!(
        file.header.devices[0].id, "cpu:package-0",
        "{:?}",
        file.header
    );
    window_s(&file)
}

fn close(got: f64, want: f64, tolerance: f64, what: &str) {
    assert!(
        (got - want).abs() <= tolerance * want.abs(),
        "{what}: {got} against {want}"
    );
}

/// Of `validate`'s telemetry findings, only the warnings a short run on a loaded
/// machine may earn: `telemetry.too-few` (a window of about a second at 20–50 Hz may
/// hold fewer than 60 samples) and `telemetry.gap` (the sampler thread starved beside
/// the rank processes on 2 cores; the counter's energy still holds).
fn only_load_warnings(json: &serde_json::Value) {
    const LOAD_RULES: [&str; 2] = ["telemetry.too-few", "telemetry.gap"];
    for f in json["findings"].as_array().unwrap() {
        let rule = f["rule"].as_str().unwrap();
        if rule.starts_with("telemetry.") {
            assert!(LOAD_RULES.contains(&rule), "{f}");
            assert_eq!(f["severity"], "warning", "{f}");
        }
    }
}

/// `report`'s JSON of the run folders under `out`, one run enough.
fn report_json(out: &Path) -> serde_json::Value {
    let report = mlbench()
        .arg("report")
        .arg(out)
        .args(["-g", "RTX", "--min-runs", "1", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    serde_json::from_slice(&report.stdout).unwrap()
}

#[test]
fn a_cpu_run_is_validated_reported_and_gridded_per_joule() {
    let tmp = tempfile::tempdir().unwrap();
    let jobs = tmp.path().join("tiny.json");
    std::fs::write(&jobs, JOBS).unwrap();
    let (a, b): (PathBuf, PathBuf) = (tmp.path().join("a"), tmp.path().join("b"));
    let stall_a = run_at(50.0, &jobs, &a);
    let stall_b = run_at(100.0, &jobs, &b);

    // validate: the files pass (a window of 20 Hz × about a second may hold fewer than
    // 60 samples: that warning alone is allowed).
    let (_, json) = validate_json(&a, &["--min-runs", "1"]);
    only_load_warnings(&json);

    // report: the copy's energy is 50 W over the window the file marks, 8,000 steps of
    // 16 items twice, the counter's wraps undone; idle drew the same, so net is about 0.
    let doc = report_json(&a);
    let copy = &doc["energy"]["copies"][0];
    let seconds = read_window(&a);
    assert!(seconds > 0.4, "a window over one wrap: {seconds} s");
    close(copy["items"].as_f64().unwrap(), ITEMS, 0.0, "items");
    close(copy["seconds"].as_f64().unwrap(), seconds, 1e-9, "seconds");
    let joules = copy["joules"].as_f64().unwrap();
    let tolerance = energy_tolerance(seconds, stall_a);
    close(joules, 50.0 * seconds, tolerance, "joules");
    assert_eq!(copy["method"], "counter");
    // Net of the idle power measured over the 1 s baseline, itself read off the counter.
    let net = copy["net_joules"].as_f64().unwrap();
    let idle_tolerance = energy_tolerance(1.0, stall_a);
    assert!(
        net.abs() <= (tolerance + idle_tolerance) * joules,
        "net {net} J of {joules} J"
    );
    close(
        doc["energy"]["benches"][0]["joules_per_item"]["mean"]
            .as_f64()
            .unwrap(),
        50.0 * seconds / ITEMS,
        tolerance,
        "J/item",
    );

    // grid per joule: b's items per joule over a's is a's window at 50 W over b's at 100 W.
    let grid = mlbench()
        .arg("grid")
        .args([&a, &b])
        .args(["--baseline", "a", "--per", "joule", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        grid.status.success(),
        "{}",
        String::from_utf8_lossy(&grid.stderr)
    );
    let grid: serde_json::Value = serde_json::from_slice(&grid.stdout).unwrap();
    let b_row = grid["vendors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "b")
        .unwrap();
    let seconds_b = read_window(&b);
    let want = (50.0 * seconds) / (100.0 * seconds_b);
    close(
        b_row["cells"]["toy_reg"]["ratio"].as_f64().unwrap(),
        want,
        tolerance + energy_tolerance(seconds_b, stall_b),
        "ratio",
    );
}

/// `scaling` at tiny sizes on two CPU devices: world sizes 1 and 2, each rank a process of
/// its own meeting through c10d (Gloo).
const SCALING: &str = r#"[
 {"name": "scaling", "cmd": "./image_classification/scaling/pytorch/run.sh",
  "args": {"--repeat": 10, "--number": 20, "--network": "resnet18", "--devices": 0,
           "--batch-size": 2, "--image-size": 32}, "cgroup": "all"}
]"#;

/// A sweep is sampled world by world: rank 0 of each world (a process the launcher
/// started) writes the next file of the bench and marks its timed steps; `validate`
/// passes it, and `report` pairs world size k's entry with the k-th file and counts the
/// world's items (20 steps of 2 items on each of k ranks) over the window's 50 W.
#[test]
fn a_scaling_sweep_is_sampled_world_by_world_from_rank_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let jobs = tmp.path().join("baselines.json");
    std::fs::write(&jobs, SCALING).unwrap();
    let out = tmp.path().join("out");
    // Wrapping every 4 s: the counter's thread, starved while the ranks train (processes
    // on this machine's two cores), may stall past the 0.4 s of [`FakeRapl::start`] and
    // skip a whole wrap, which real RAPL, a hardware counter, never does.
    let rapl = FakeRapl::with_range(50.0, 199_999_999);
    rapl.mlbench()
        .arg("run")
        .arg("--jobs")
        .arg(&jobs)
        .args([
            "--devices",
            "2",
            "--sample-hz",
            "50",
            "--idle-baseline",
            "0",
        ])
        .arg("--out-dir")
        .arg(&out)
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "energy: scaling on 0,1, world size 2: ",
        ));
    let stall = rapl.stop();
    let folder = out.join("output0/telemetry");
    let windows: Vec<f64> = ["scaling.0.jsonl", "scaling.0.2.jsonl"]
        .iter()
        .map(|name| window_s(&mlbench_schema::telemetry::read(&folder.join(name)).unwrap()))
        .collect();

    let (_, json) = validate_json(&out, &["--min-runs", "1"]);
    only_load_warnings(&json);

    let doc = report_json(&out);
    let copies = doc["energy"]["copies"].as_array().unwrap();
    assert_eq!(copies.len(), 2, "{}", doc["energy"]);
    for (k, copy) in copies.iter().enumerate() {
        assert_eq!(copy["bench"], "scaling");
        assert_eq!(copy["entry"], k);
        close(
            copy["seconds"].as_f64().unwrap(),
            windows[k],
            1e-9,
            "seconds",
        );
        close(
            copy["items"].as_f64().unwrap(),
            20.0 * 2.0 * (k + 1) as f64,
            0.0,
            "items",
        );
        assert_eq!(copy["method"], "counter");
        close(
            copy["joules"].as_f64().unwrap(),
            50.0 * windows[k],
            energy_tolerance(windows[k], stall),
            "joules",
        );
    }
}
