//! Energy at hand-worked values: run folders made here (report streams, telemetry files,
//! idle baselines), every figure worked out on paper.

use super::*;
use mlbench_results::energy::{EnergyFlag, Method};
use mlbench_schema::ReportEntry;
use mlbench_schema::telemetry::{
    Counter, Device, Edge, Header, Line, Mark, Sample, SourceKind, TelemetryWriter, Values,
};
use mlbench_schema::value::{Object, Value};
use std::path::Path;

const S: u64 = 1_000_000_000;

/// A device of a made-up file: constant power, read as power (mW) or counter (µJ).
#[derive(Clone)]
struct Dev {
    id: &'static str,
    source: SourceKind,
    watts: f64,
    /// What its power readings say, W (`None`: it has none).
    power: Option<f64>,
    /// The counter's modulus in µJ (resolution 1 µJ), when it has a counter.
    counter_wrap: Option<Option<u64>>,
    util_pct: Option<f64>,
}

/// A GPU read by power only (no counter): constant `watts`, `util` percent busy.
fn gpu(watts: f64, util: f64) -> Dev {
    Dev {
        id: "cuda:0",
        source: SourceKind::Nvml,
        watts,
        power: Some(watts),
        counter_wrap: None,
        util_pct: Some(util),
    }
}

/// A RAPL package: a counter in µJ wrapping at 2³², no power readings.
fn package(watts: f64) -> Dev {
    Dev {
        id: "cpu:package-0",
        source: SourceKind::Rapl,
        watts,
        power: None,
        counter_wrap: Some(Some(1 << 32)),
        util_pct: None,
    }
}

fn device(d: &Dev) -> Device {
    Device {
        id: d.id.into(),
        source: d.source,
        counter: d.counter_wrap.map(|wrap_raw| Counter {
            resolution_uj: 1.0,
            wrap_raw,
        }),
        whole_board: true,
        ..Device::default()
    }
}

/// A file of `devices` sampled once a second from 0 to `seconds`, with `window` marked
/// (`name`, start and end in s).
fn telemetry(
    bench: Option<&str>,
    copy: u32,
    devices: &[Dev],
    seconds: u64,
    window: (&str, u64, u64),
) -> Vec<u8> {
    let mut w = TelemetryWriter::new(Vec::new());
    w.header(&Header {
        schema_version: 1,
        bench: bench.map(str::to_owned),
        copy: Some(copy),
        sample_period_ns: S,
        devices: devices.iter().map(device).collect(),
        ..Header::default()
    })
    .unwrap();
    let mark = |t, edge| {
        Line::Mark(Mark {
            t_ns: t * S,
            edge,
            window: window.0.into(),
            copy,
        })
    };
    for s in 0..=seconds {
        if s == window.1 {
            w.line(&mark(s, Edge::Start)).unwrap();
        }
        for (i, d) in devices.iter().enumerate() {
            let uj = (d.watts * s as f64 * 1e6) as u64;
            let raw = d.counter_wrap.map(|wrap| wrap.map_or(uj, |m| uj % m));
            w.sample(&Sample {
                t_ns: s * S,
                device: i as u32,
                values: Values {
                    energy_raw: raw,
                    power_mw: d.power.map(|w| w * 1000.0),
                    util_pct: d.util_pct,
                    ..Values::default()
                },
                ..Sample::default()
            })
            .unwrap();
        }
        if s == window.2 {
            w.line(&mark(s, Edge::End)).unwrap();
        }
    }
    w.into_inner().unwrap()
}

/// A report entry of `bench`: 110 observations of 5 batches of 32 (the last 100 counted:
/// 16 000 items), each timed 0.9 s.
fn entry(bench: &str, failed: bool) -> ReportEntry {
    let mut train = Object::new();
    train.insert("avg", 0.9);
    train.insert("count", 100i64);
    train.insert("unit", "s");
    let mut item = Object::new();
    item.insert("avg", 160.0 / 0.9);
    item.insert("unit", "items/sec");
    let mut o = Object::new();
    o.insert("name", bench);
    o.insert("version", "0123456789");
    o.insert("batch_size", 32i64);
    o.insert("number", 5i64);
    o.insert("repeat", 110i64);
    o.insert("vcd", "0");
    o.insert("jr_id", "0");
    o.insert("train", Value::Object(train));
    o.insert("train_item", Value::Object(item));
    o.insert("completed", !failed);
    ReportEntry::new(o)
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn report(path: &Path, entries: &[ReportEntry]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    for e in entries {
        mlbench_schema::writer::append_to_stream(path, e).unwrap();
    }
}

/// The folder's energy listed by the validator's intake, checked to be the same, field
/// for field, from the folder held in memory, from its zip listed and from its zip held.
fn energy(root: &Path) -> Option<Energy> {
    let d = mlbench_submission::discover(&[root.to_owned()], None).unwrap();
    let listed = energy_of_paths(&[root.to_owned()], &d.suite, u64::MAX);
    let limits = mlbench_validator::Limits::default();
    let folder = mlbench_validator::read_submission(root, &limits).unwrap();
    let held = energy_of_intake(&folder, &d.suite);
    assert_eq!(held, listed, "the folder held in memory");
    let opened =
        mlbench_submission::Opened::open(root, &mlbench_validator::Limits::within(u64::MAX));
    let opened = energy_of_opened(&[opened.unwrap()], &d.suite);
    assert_eq!(
        opened, listed,
        "the folder opened once for the whole command"
    );
    let zip = tempfile::Builder::new().suffix(".zip").tempfile().unwrap();
    mlbench_validator::pack::write_zip(&folder.files, zip.as_file()).unwrap();
    let zipped = mlbench_validator::read_submission(zip.path(), &limits).unwrap();
    assert_eq!(zipped.files.len(), folder.files.len(), "every file zipped");
    assert_eq!(energy_of_intake(&zipped, &d.suite), listed, "the zip held");
    let zip_listed = energy_of_paths(&[zip.path().to_owned()], &d.suite, u64::MAX);
    assert_eq!(zip_listed, listed, "the zip listed");
    listed
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} != {b}");
}

#[test]
fn a_constant_200_w_gpu_over_100_s_is_20_000_j_for_16_000_items() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("output0");
    report(&out.join("fast_0.json"), &[entry("vae", false)]);
    let file = telemetry(Some("vae"), 0, &[gpu(200.0, 50.0)], 110, ("train", 5, 105));
    write(&out.join("telemetry/vae.0.jsonl"), &file);
    let e = energy(dir.path()).unwrap();
    assert_eq!(e.notes, Vec::<String>::new());
    let [c] = e.copies.as_slice() else {
        panic!("{:?}", e.copies)
    };
    assert_eq!(
        (c.run.as_str(), c.bench.as_str(), c.copy),
        ("output0", "vae", 0)
    );
    assert_eq!((c.report.as_str(), c.entry), ("output0/fast_0.json", 0));
    assert_eq!(c.telemetry, "output0/telemetry/vae.0.jsonl");
    assert_eq!((c.samples, c.items), (101, 16_000.0));
    assert_eq!(c.method, Some(Method::Power));
    close(c.seconds, 100.0);
    close(c.joules.unwrap(), 20_000.0);
    close(c.joules_per_item.unwrap(), 1.25);
    close(c.items_per_joule.unwrap(), 0.8);
    close(c.mean_power_w.unwrap(), 200.0);
    close(c.p95_power_w.unwrap(), 200.0);
    close(c.utilisation.unwrap(), 0.5);
    // No idle file: no net energy, and the reader is told.
    assert_eq!(c.net_joules, None);
    assert_eq!(
        c.flags,
        [EnergyFlag::WholeBoard, EnergyFlag::NoIdleBaseline]
    );
    let [b] = e.benches.as_slice() else { panic!() };
    let j = b.joules_per_item.unwrap();
    // One copy: the interval is the point.
    assert_eq!((j.n, j.mean, j.ci), (1, 1.25, [1.25, 1.25]));
    assert_eq!(b.net_joules_per_item, None);
}

#[test]
fn a_wrapping_rapl_counter_adds_its_5000_j_and_the_idle_baseline_is_taken_off() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("output0");
    report(&out.join("fast_0.json"), &[entry("vae", false)]);
    // 50 W is 50e6 µJ a second: 2³² µJ (4294.97 J) wraps once at about 85.9 s.
    let file = telemetry(
        Some("vae"),
        0,
        &[gpu(200.0, 50.0), package(50.0)],
        110,
        ("train", 5, 105),
    );
    write(&out.join("telemetry/vae.0.jsonl"), &file);
    // Idle: the GPU at 80 W, the package at 20 W, 30 s each.
    let idle_gpu = telemetry(None, 0, &[gpu(80.0, 0.0)], 30, ("idle", 0, 30));
    let idle_cpu = telemetry(None, 0, &[package(20.0)], 30, ("idle", 0, 30));
    write(&out.join("telemetry/idle.cuda:0.jsonl"), &idle_gpu);
    write(&out.join("telemetry/idle.cpu.jsonl"), &idle_cpu);
    let e = energy(dir.path()).unwrap();
    let c = &e.copies[0];
    assert_eq!(c.method, Some(Method::Mixed));
    // 200 W × 100 s + 50 W × 100 s.
    close(c.joules.unwrap(), 25_000.0);
    close(c.joules_per_item.unwrap(), 25_000.0 / 16_000.0);
    // Net: (200 − 80) × 100 + (50 − 20) × 100 = 15 000 J.
    close(c.net_joules.unwrap(), 15_000.0);
    close(c.net_joules_per_item.unwrap(), 0.9375);
    // The power at each second is 200 W plus the counter's 50 W slope.
    close(c.p95_power_w.unwrap(), 250.0);
    close(c.mean_power_w.unwrap(), 250.0);
    // The GPU's utilisation, not the package's (which has none).
    close(c.utilisation.unwrap(), 0.5);
    assert!(
        c.flags.contains(&EnergyFlag::CounterWrapped),
        "{:?}",
        c.flags
    );
    assert!(!c.flags.contains(&EnergyFlag::NoIdleBaseline));
    let package = c
        .devices
        .iter()
        .find(|d| d.device == "cpu:package-0")
        .unwrap();
    assert_eq!(package.method, Method::Counter);
    close(package.joules, 5_000.0);
}

#[test]
fn a_package_two_copies_read_is_shared_between_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("output0");
    for copy in 0..2u32 {
        report(
            &out.join(format!("fast_{copy}.json")),
            &[entry("vae", false)],
        );
        let mut g = gpu(200.0, 50.0);
        g.id = if copy == 0 { "cuda:0" } else { "cuda:1" };
        let file = telemetry(
            Some("vae"),
            copy,
            &[g, package(50.0)],
            110,
            ("train", 5, 105),
        );
        write(&out.join(format!("telemetry/vae.{copy}.jsonl")), &file);
    }
    let e = energy(dir.path()).unwrap();
    assert_eq!(e.copies.len(), 2);
    for c in &e.copies {
        // Each GPU's 20 000 J, and half the package's 5000 J.
        close(c.joules.unwrap(), 22_500.0);
        assert!(c.flags.contains(&EnergyFlag::SharedDevice));
        let p = c
            .devices
            .iter()
            .find(|d| d.device == "cpu:package-0")
            .unwrap();
        assert_eq!(p.shared_by, 2);
    }
    let b = &e.benches[0];
    assert_eq!((b.n, b.runs), (2, 1));
    let shared = b
        .flags
        .iter()
        .find(|f| f.flag == EnergyFlag::SharedDevice)
        .unwrap();
    assert_eq!(shared.copies, 2);
}

#[test]
fn runs_of_different_efficiency_give_their_mean_and_an_interval_between_them() {
    let dir = tempfile::tempdir().unwrap();
    // Three runs at 100, 150 and 200 W: 0.625, 0.9375 and 1.25 J per item.
    for (r, watts) in [(0, 100.0), (1, 150.0), (2, 200.0)] {
        let out = dir.path().join(format!("output{r}"));
        report(&out.join("fast_0.json"), &[entry("vae", false)]);
        let file = telemetry(Some("vae"), 0, &[gpu(watts, 50.0)], 110, ("train", 5, 105));
        write(&out.join("telemetry/vae.0.jsonl"), &file);
    }
    let e = energy(dir.path()).unwrap();
    let b = &e.benches[0];
    assert_eq!((b.n, b.runs), (3, 3));
    let j = b.joules_per_item.unwrap();
    close(j.mean, 0.9375);
    assert!(j.ci[0] >= 0.625 && j.ci[0] < 0.9375, "{:?}", j.ci);
    assert!(j.ci[1] <= 1.25 && j.ci[1] > 0.9375, "{:?}", j.ci);
    // The mean of the ratios: (1.6 + 16/15 + 0.8) / 3.
    close(
        b.items_per_joule.unwrap().mean,
        (1.6 + 16.0 / 15.0 + 0.8) / 3.0,
    );
    // The pooled p95 of 101 samples each at 100, 150 and 200 W is 200 W; the mean power
    // is the copies' mean.
    close(b.p95_power_w.unwrap(), 200.0);
    close(b.mean_power_w.unwrap(), 150.0);
}

#[test]
fn entries_pair_with_numbered_files_in_order_and_disagreeing_counts_pair_none() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("output0");
    // Two configurations of vae (100 W then 200 W), one of cart with two files.
    report(
        &out.join("fast_0.json"),
        &[
            entry("vae", false),
            entry("cart", false),
            entry("vae", false),
        ],
    );
    for (name, watts) in [("vae.0.jsonl", 100.0), ("vae.0.2.jsonl", 200.0)] {
        let file = telemetry(Some("vae"), 0, &[gpu(watts, 50.0)], 110, ("train", 5, 105));
        write(&out.join("telemetry").join(name), &file);
    }
    for name in ["cart.0.jsonl", "cart.0.2.jsonl"] {
        let file = telemetry(Some("cart"), 0, &[gpu(1.0, 50.0)], 110, ("train", 5, 105));
        write(&out.join("telemetry").join(name), &file);
    }
    let e = energy(dir.path()).unwrap();
    let got: Vec<(usize, &str, f64)> = e
        .copies
        .iter()
        .map(|c| (c.entry, c.telemetry.as_str(), c.joules.unwrap()))
        .collect();
    assert_eq!(got.len(), 2);
    assert_eq!((got[0].0, got[0].1), (0, "output0/telemetry/vae.0.jsonl"));
    close(got[0].2, 10_000.0);
    assert_eq!((got[1].0, got[1].1), (2, "output0/telemetry/vae.0.2.jsonl"));
    close(got[1].2, 20_000.0);
    assert_eq!(
        e.notes,
        [
            "output0/fast_0.json: 1 entry of cart but 2 telemetry files of cart.0: not paired (which file is whose cannot be told)"
        ]
    );
}

#[test]
fn a_file_of_another_bench_or_without_a_window_is_said_and_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("output0");
    report(
        &out.join("fast_0.json"),
        &[entry("vae", false), entry("cart", false)],
    );
    let other = telemetry(Some("bert"), 0, &[gpu(1.0, 50.0)], 110, ("train", 5, 105));
    write(&out.join("telemetry/vae.0.jsonl"), &other);
    let unmarked = telemetry(Some("cart"), 0, &[gpu(1.0, 50.0)], 110, ("warmup", 5, 105));
    write(&out.join("telemetry/cart.0.jsonl"), &unmarked);
    let e = energy(dir.path()).unwrap();
    assert!(e.copies.is_empty() && e.benches.is_empty());
    assert_eq!(
        e.notes,
        [
            // Bench by bench, by name.
            "output0/telemetry/cart.0.jsonl: no `train` window of copy 0",
            "output0/telemetry/vae.0.jsonl: its header is of bert.0, not of vae.0: not paired",
        ]
    );
}

#[test]
fn a_failed_entry_keeps_its_place_but_has_no_figure() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("output0");
    report(
        &out.join("fast_0.json"),
        &[entry("vae", true), entry("vae", false)],
    );
    for (name, watts) in [("vae.0.jsonl", 100.0), ("vae.0.2.jsonl", 200.0)] {
        let file = telemetry(Some("vae"), 0, &[gpu(watts, 50.0)], 110, ("train", 5, 105));
        write(&out.join("telemetry").join(name), &file);
    }
    let e = energy(dir.path()).unwrap();
    let [c] = e.copies.as_slice() else { panic!() };
    assert_eq!(c.entry, 1);
    close(c.joules.unwrap(), 20_000.0);
}

#[test]
fn a_window_shorter_than_its_timed_observations_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("output0");
    report(&out.join("fast_0.json"), &[entry("vae", false)]);
    // 80 s marked for 100 observations timed 0.9 s each (90 s).
    let file = telemetry(Some("vae"), 0, &[gpu(200.0, 50.0)], 110, ("train", 5, 85));
    write(&out.join("telemetry/vae.0.jsonl"), &file);
    let e = energy(dir.path()).unwrap();
    assert!(
        e.copies[0]
            .flags
            .contains(&EnergyFlag::WindowShorterThanTimed)
    );
}

#[test]
fn without_telemetry_there_is_no_energy_section() {
    let dir = tempfile::tempdir().unwrap();
    report(
        &dir.path().join("output0/fast_0.json"),
        &[entry("vae", false)],
    );
    assert_eq!(energy(dir.path()), None);
}

#[test]
fn items_follow_the_counted_observations() {
    let e = entry("vae", false);
    assert_eq!(copy::counted_items(&e), Some(16_000.0));
    // A loop too short to drop any counts all its observations; without the sizes, the
    // items per observation are items/s × s.
    let mut o = Object::new();
    o.insert("repeat", 8i64);
    let mut train = Object::new();
    train.insert("avg", 2.0);
    train.insert("count", 1i64);
    o.insert("train", Value::Object(train));
    let mut item = Object::new();
    item.insert("avg", 50.0);
    o.insert("train_item", Value::Object(item));
    assert_eq!(copy::counted_items(&ReportEntry::new(o)), Some(800.0));
}

/// A `scaling` entry as `mlbench run` writes it: world size 3 of a sweep over 4 devices,
/// rank 0's one timed observation of 10 steps of 128 items per rank.
#[test]
fn a_sweep_entry_counts_its_worlds_items_once() {
    let mut o = Object::new();
    o.insert("name", "scaling");
    o.insert("repeat", 4i64);
    o.insert("number", 10i64);
    o.insert("batch_size", 128i64);
    o.insert("vcd", "0,1,2");
    let mut train = Object::new();
    train.insert("avg", 2.5);
    train.insert("count", 1i64);
    o.insert("train", Value::Object(train));
    let e = ReportEntry::new(o.clone());
    assert_eq!(copy::counted_observations(&e), Some(1.0));
    assert_eq!(copy::counted_items(&e), Some(10.0 * 128.0 * 3.0));
    // A failed world has no `train`: nothing counted.
    o.remove("train");
    assert_eq!(copy::counted_items(&ReportEntry::new(o)), None);
}

#[test]
fn the_counter_is_preferred_and_a_power_reading_10_percent_off_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("output0");
    report(&out.join("fast_0.json"), &[entry("vae", false)]);
    // The counter says 200 W, the power readings 220 W.
    let mut g = gpu(200.0, 50.0);
    g.counter_wrap = Some(None);
    g.power = Some(220.0);
    let file = telemetry(Some("vae"), 0, &[g], 110, ("train", 5, 105));
    write(&out.join("telemetry/vae.0.jsonl"), &file);
    let e = energy(dir.path()).unwrap();
    let c = &e.copies[0];
    assert_eq!(c.method, Some(Method::Counter));
    close(c.joules.unwrap(), 20_000.0);
    close(c.devices[0].disagreement.unwrap(), 0.1);
    assert!(c.flags.contains(&EnergyFlag::Disagreement), "{:?}", c.flags);
    // The trace follows the power readings where the device has them.
    close(c.p95_power_w.unwrap(), 220.0);
}

#[test]
fn a_cpu_copy_uses_the_machines_utilisation() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("output0");
    report(&out.join("fast_0.json"), &[entry("vae", false)]);
    let proc = Dev {
        id: "cpu:proc",
        source: SourceKind::Procfs,
        watts: 0.0,
        power: None,
        counter_wrap: None,
        util_pct: Some(25.0),
    };
    let file = telemetry(
        Some("vae"),
        0,
        &[package(50.0), proc],
        110,
        ("train", 5, 105),
    );
    write(&out.join("telemetry/vae.0.jsonl"), &file);
    let e = energy(dir.path()).unwrap();
    let c = &e.copies[0];
    close(c.utilisation.unwrap(), 0.25);
    close(c.joules.unwrap(), 5000.0);
    // Only the package has energy: `cpu:proc` is no part of it.
    assert_eq!(c.devices.len(), 1);
}

#[test]
fn an_unreadable_file_is_named_as_the_report_names_files_and_the_rest_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("output0");
    report(
        &out.join("fast_0.json"),
        &[entry("vae", false), entry("cart", false)],
    );
    let mut broken = telemetry(Some("vae"), 0, &[gpu(200.0, 50.0)], 110, ("train", 5, 105));
    broken.splice(0..0, b"{\"type\":\"sample\",\"t_ns\":".iter().copied());
    write(&out.join("telemetry/vae.0.jsonl"), &broken);
    let good = telemetry(Some("cart"), 0, &[gpu(100.0, 50.0)], 110, ("train", 5, 105));
    write(&out.join("telemetry/cart.0.jsonl"), &good);
    write(&out.join("telemetry/idle.cuda:0.jsonl"), b"not json\n");
    let e = energy(dir.path()).unwrap();
    assert_eq!(e.copies.len(), 1);
    close(e.copies[0].joules.unwrap(), 10_000.0);
    assert_eq!(e.notes.len(), 2, "{:?}", e.notes);
    assert!(
        e.notes[0].starts_with("idle baseline of output0: output0/telemetry/idle.cuda:0.jsonl:1: "),
        "{}",
        e.notes[0]
    );
    assert!(
        e.notes[1].starts_with("output0/telemetry/vae.0.jsonl:1: "),
        "{}",
        e.notes[1]
    );
}

#[test]
fn telemetry_over_what_is_left_of_max_bytes_is_set_aside_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("output0");
    report(&out.join("fast_0.json"), &[entry("vae", false)]);
    let file = telemetry(Some("vae"), 0, &[gpu(200.0, 50.0)], 110, ("train", 5, 105));
    write(&out.join("telemetry/vae.0.jsonl"), &file);
    let r = std::fs::metadata(out.join("fast_0.json")).unwrap().len();
    let t = file.len() as u64;
    let paths = [dir.path().to_owned()];
    // The reports and the telemetry fit exactly: read.
    let fits = energy_of_paths(&paths, "fast", r + t).unwrap();
    assert_eq!(fits.copies.len(), 1);
    close(fits.copies[0].joules.unwrap(), 20_000.0);
    // One byte less: the telemetry is set aside by the listing, never read, and the note
    // says so.
    let over = energy_of_paths(&paths, "fast", r + t - 1).unwrap();
    assert!(over.copies.is_empty());
    assert_eq!(
        over.notes,
        [format!(
            "output0/telemetry/vae.0.jsonl: not read: {t} bytes with {r} read before it: set aside, not read (expected at most {} bytes in all (--max-bytes))",
            r + t - 1
        )]
    );
}

/// A paired telemetry file that is a link (here to a copy of itself outside the
/// submission) is never followed: no figure, a note naming it; a FIFO beside it is never
/// opened, and named too.
#[test]
fn a_link_or_a_fifo_in_the_telemetry_folder_is_named_and_never_opened() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    let out = sub.join("output0");
    report(
        &out.join("fast_0.json"),
        &[entry("vae", false), entry("cart", false)],
    );
    let file = telemetry(Some("vae"), 0, &[gpu(200.0, 50.0)], 110, ("train", 5, 105));
    let outside = dir.path().join("vae.0.jsonl");
    write(&outside, &file);
    std::fs::create_dir_all(out.join("telemetry")).unwrap();
    std::os::unix::fs::symlink(&outside, out.join("telemetry/vae.0.jsonl")).unwrap();
    let good = telemetry(Some("cart"), 0, &[gpu(100.0, 50.0)], 110, ("train", 5, 105));
    write(&out.join("telemetry/cart.0.jsonl"), &good);
    let fifo = out.join("telemetry/idle.cuda:0.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let e = energy_of_paths(std::slice::from_ref(&sub), "fast", u64::MAX).unwrap();
    let read: Vec<&str> = e.copies.iter().map(|c| c.telemetry.as_str()).collect();
    assert_eq!(read, ["output0/telemetry/cart.0.jsonl"]);
    close(e.copies[0].joules.unwrap(), 10_000.0);
    assert_eq!(
        e.notes,
        [
            "output0/telemetry/idle.cuda:0.jsonl: not read: a FIFO (expected a regular file)",
            "output0/telemetry/vae.0.jsonl: not read: a symbolic link (expected a regular file)",
        ]
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Whatever the powers, the window and the counter's modulus (at least one
        /// second's energy, so that one wrap at most falls between two readings), a copy's
        /// energy is (GPU + package) × the window, and its joules per item that ÷ 16 000.
        #[test]
        fn constant_powers_give_power_times_duration(
            gpu_w in 1.0f64..700.0,
            package_w in 1.0f64..300.0,
            start in 0u64..20,
            len in 1u64..80,
            wrap_s in 1.0f64..50.0,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("output0");
            report(&out.join("fast_0.json"), &[entry("vae", false)]);
            let mut p = package(package_w);
            let wrap = (package_w * wrap_s * 1e6) as u64;
            p.counter_wrap = Some(Some(wrap));
            let end = start + len;
            let file = telemetry(Some("vae"), 0, &[gpu(gpu_w, 50.0), p], end + 3, ("train", start, end));
            write(&out.join("telemetry/vae.0.jsonl"), &file);
            let e = energy(dir.path()).unwrap();
            let c = &e.copies[0];
            let want = (gpu_w + package_w) * len as f64;
            // The counter holds whole µJ: at most 1 µJ off at each end.
            prop_assert!((c.joules.unwrap() - want).abs() <= 1e-5 + 1e-9 * want);
            prop_assert!((c.joules_per_item.unwrap() - want / 16_000.0).abs() <= 1e-8 + 1e-9 * want);
            let p95 = c.p95_power_w.unwrap();
            prop_assert!((p95 - (gpu_w + package_w)).abs() <= 1e-3, "{p95}");
        }
    }
}

/// A report's page takes a zip's traces from the files the report already read: the zip
/// replaced on disk afterwards, the page's inputs are still those it held, the same as a
/// fresh read of the zip gave before (which would now fail).
#[test]
fn a_pages_inputs_come_from_the_zip_the_report_read() {
    use crate::page::{Held, page_inputs};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sub");
    let out = root.join("output0");
    report(&out.join("fast_0.json"), &[entry("vae", false)]);
    let file = telemetry(Some("vae"), 0, &[gpu(200.0, 50.0)], 110, ("train", 5, 105));
    write(&out.join("telemetry/vae.0.jsonl"), &file);
    let limits = Limits::default();
    let zip = dir.path().join("sub.zip");
    let files = mlbench_validator::read_submission(&root, &limits)
        .unwrap()
        .files;
    mlbench_validator::pack::write_zip(&files, std::fs::File::create(&zip).unwrap()).unwrap();
    let paths = [zip.clone()];
    let read = page_inputs(&paths, &Held::Nothing, true, Vec::new(), &limits);
    let held = Held::Zip(
        zip.clone(),
        mlbench_validator::read_submission(&zip, &limits).unwrap(),
    );
    std::fs::write(&zip, b"no longer a zip").unwrap();
    let from_held = page_inputs(&paths, &held, true, Vec::new(), &limits);

    let traces = read.power.unwrap();
    assert_eq!(traces.len(), 1, "one bench with telemetry");
    assert_eq!(
        (traces[0].run.as_str(), traces[0].bench.as_str()),
        ("output0", "vae")
    );
    assert_eq!(from_held.power.unwrap(), traces);
    // Without the held files the page would read the zip again, and now could not.
    let reread = page_inputs(&paths, &Held::Nothing, true, Vec::new(), &limits);
    assert!(reread.power.is_err());
    // No energy in the report: no traces read, none shown.
    let quiet = page_inputs(&paths, &held, false, Vec::new(), &limits);
    assert_eq!(quiet.power.unwrap(), Vec::new());
}
