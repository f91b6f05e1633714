//! The power traces at hand-worked values: copies' files made here, every figure worked
//! out on paper; folders, zips and what a telemetry folder must not make us open.

use super::build::drawable;
use super::*;
use mlbench_results::trace::TraceWindow;
use mlbench_schema::telemetry::{
    self as format, Counter, Device, Edge, Header, IDLE_WINDOW, Mark, Sample, SourceKind, Values,
};

const S: u64 = 1_000_000_000;

fn rapl() -> Counter {
    Counter {
        resolution_uj: 1.0,
        wrap_raw: Some(1_000_000_000),
    }
}

fn device(id: &str, source: SourceKind, counter: Option<Counter>) -> Device {
    Device {
        id: id.into(),
        source,
        counter,
        ..Device::default()
    }
}

fn sample(t_ns: u64, device: u32, raw: Option<u64>, mw: Option<f64>) -> Sample {
    Sample {
        t_ns,
        device,
        values: Values {
            energy_raw: raw,
            power_mw: mw,
            ..Values::default()
        },
        ..Sample::default()
    }
}

fn mark(t_ns: u64, edge: Edge, window: &str, copy: u32) -> Mark {
    Mark {
        t_ns,
        edge,
        window: window.into(),
        copy,
    }
}

#[test]
fn drawable_readings_leave_out_a_wild_time_a_step_back_and_non_finite_power() {
    let t = |s: u64| s * 1_000_000_000;
    let points = vec![
        (t(0), 100.0),
        (t(1), 100.0),
        (u64::MAX, 100.0), // a wild time: past the next reading's
        (t(3), f64::INFINITY),
        (t(4), 100.0), // a step back after it: one of the pair goes
        (t(2), 100.0),
        (t(5), f64::NAN),
        (t(6), 100.0),
    ];
    let kept: Vec<u64> = drawable(points).iter().map(|p| p.0 / t(1)).collect();
    assert_eq!(kept, [0, 1, 2, 6]);
}

#[test]
fn one_per_bench_keeps_each_benchs_first_trace() {
    let t = |name: &str, bench: &str| Trace {
        name: name.into(),
        bench: bench.into(),
        ..Trace::default()
    };
    let kept = one_per_bench(vec![
        t("output0-vae", "vae"),
        t("output0-vae.2", "vae"),
        t("output0-bert", "bert"),
        t("output1-vae", "vae"),
    ]);
    let names: Vec<&str> = kept.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["output0-vae", "output0-bert"]);
}

/// Copy `copy`'s file: a GPU with power (100 W, 300 W from 2 s to 8 s) and a counter
/// agreeing with it, a RAPL package with a counter only (20 W), `cpu:proc` with
/// neither; window `train` from 2 s to 8 s; sampled at 1 Hz from 0 to 10 s.
fn copy_file(copy: u32, origin_ms: Option<u64>) -> TelemetryFile {
    let watts = |s: u64| if (2..8).contains(&s) { 300.0 } else { 100.0 };
    let mut gpu_j = 0.0;
    let mut samples = Vec::new();
    for s in 0..=10u64 {
        if s > 0 {
            // The trapezoid of the power readings between s − 1 and s.
            gpu_j += (watts(s - 1) + watts(s)) / 2.0;
        }
        samples.push(sample(
            s * S,
            0,
            Some((gpu_j * 1000.0) as u64),
            Some(watts(s) * 1000.0),
        ));
        samples.push(sample(s * S, 1, Some(s * 20_000_000), None));
        samples.push(sample(s * S, 2, None, None));
    }
    TelemetryFile {
        header: Header {
            bench: Some("vae".into()),
            copy: Some(copy),
            sample_period_ns: S,
            origin_unix_ms: origin_ms,
            devices: vec![
                Device {
                    name: Some("NVIDIA H100".into()),
                    ..device(
                        &format!("cuda:{copy}"),
                        SourceKind::Nvml,
                        Some(Counter {
                            resolution_uj: 1000.0,
                            wrap_raw: None,
                        }),
                    )
                },
                device("cpu:package-0", SourceKind::Rapl, Some(rapl())),
                device("cpu:proc", SourceKind::Procfs, None),
            ],
            ..Header::default()
        },
        samples,
        marks: vec![
            mark(2 * S, Edge::Start, "train", copy),
            mark(8 * S, Edge::End, "train", copy),
        ],
        ..TelemetryFile::default()
    }
}

/// The idle baseline of `cuda:0`: 90 W for 10 s, by its counter.
fn idle() -> Vec<WindowSummary> {
    let samples = (0..=10u64)
        .map(|s| sample(s * S, 0, Some(s * 90_000), Some(90_000.0)))
        .collect();
    let file = TelemetryFile {
        header: Header {
            bench: Some(IDLE_FILE.into()),
            sample_period_ns: S,
            devices: vec![device(
                "cuda:0",
                SourceKind::Nvml,
                Some(Counter {
                    resolution_uj: 1000.0,
                    wrap_raw: None,
                }),
            )],
            ..Header::default()
        },
        samples,
        marks: vec![
            mark(0, Edge::Start, IDLE_WINDOW, 0),
            mark(10 * S, Edge::End, IDLE_WINDOW, 0),
        ],
        ..TelemetryFile::default()
    };
    mlbench_telemetry::summarize_with_idle(&file, &[]).windows
}

#[test]
fn one_copy_gives_power_lines_windows_energy_and_idle() {
    let t = trace(
        "output0-vae",
        "output0",
        "vae",
        &[copy_file(0, Some(5_000))],
        &idle(),
    );
    assert_eq!(t.lines.len(), 2, "cpu:proc has nothing to draw");
    assert!(
        t.facts
            .iter()
            .any(|f| f == "cpu:proc has no power or energy readings: not drawn."),
        "{:?}",
        t.facts
    );
    assert_eq!(
        t.windows,
        vec![TraceWindow {
            name: "train".into(),
            copy: 0,
            start_s: 2.0,
            end_s: 8.0
        }]
    );
    let gpu = &t.lines[0];
    assert_eq!(
        gpu.label, "cuda:0 NVIDIA H100",
        "one copy: no copy in the label"
    );
    assert!(!gpu.from_counter);
    assert_eq!(gpu.points.len(), 11);
    assert_eq!(gpu.points[2], (2.0, 300.0));
    assert_eq!((gpu.samples, gpu.span_s, gpu.period_s), (11, 10.0, 1.0));
    // Over the file: 100+200 (0→2 s: 100, 100→300 is 200) … by hand: 0→1 100, 1→2 200,
    // 2→7 5×300, 7→8 200, 8→10 2×100: 2200 J.
    assert_eq!(gpu.counter_moved_j, Some(2200.0));
    assert_eq!(gpu.idle_w, Some(90.0));
    // train 2→8 s: 5×300 + 200 = 1700 J by both; net: 1700 − 90 × 6 = 1160 J.
    let e = &gpu.energy[0];
    assert_eq!(
        (e.counter_j, e.power_j, e.net_j),
        (Some(1700.0), Some(1700.0), Some(1160.0))
    );
    assert_eq!(
        (e.samples, e.duration_s, e.disagreement),
        (7, 6.0, Some(0.0))
    );
    // The package: 20 W from its counter, at the middle of each second; no idle.
    let cpu = &t.lines[1];
    assert!(cpu.from_counter);
    assert_eq!(cpu.points.len(), 10);
    assert_eq!(cpu.points[0], (0.5, 20.0));
    assert_eq!(cpu.energy[0].counter_j, Some(120.0));
    assert_eq!((cpu.idle_w, cpu.energy[0].net_j), (None, None));
    assert_eq!(
        check_lines(&t)[0],
        "output0 vae: cuda:0 NVIDIA H100 (nvml) copy 0: 11 samples over 10.0 s, 1.00 Hz of 1.000 Hz; \
         counter moved 2200.0 J; train 6.0 s, 7 samples: counter 1700.0 J, power 1700.0 J \
         (0.0 % apart), net of idle 1160.0 J"
    );
    assert_eq!(
        check_lines(&t)[1],
        "output0 vae: cpu:package-0 (rapl) copy 0: 11 samples over 10.0 s, 1.00 Hz of 1.000 Hz; \
         counter moved 200.0 J; no power readings (power from the counter); train 6.0 s, \
         7 samples: counter 120.0 J, power none"
    );
}

#[test]
fn copies_are_aligned_on_their_wall_clock_origins() {
    let files = [copy_file(0, Some(10_000)), copy_file(1, Some(12_500))];
    let t = trace("x", "output0", "vae", &files, &[]);
    assert_eq!(t.lines.len(), 4);
    let not_drawn = t.facts.iter().filter(|f| f.starts_with("cpu:proc")).count();
    assert_eq!(not_drawn, 1, "said once for both copies: {:?}", t.facts);
    assert_eq!(t.lines[2].label, "cuda:1 NVIDIA H100 · copy 1");
    assert_eq!(t.lines[2].copy, 1);
    // Copy 1 started 2.5 s later: its points and window move by 2.5 s.
    assert_eq!(t.lines[2].points[0], (2.5, 100.0));
    assert_eq!(t.windows[1].start_s, 4.5);
    assert_eq!(t.windows[1].end_s, 10.5);
    assert!(
        t.facts
            .iter()
            .any(|f| f.contains("by their wall-clock origins"))
    );
    // Without an origin: not aligned, and said.
    let files = [copy_file(0, Some(10_000)), copy_file(1, None)];
    let t = trace("x", "output0", "vae", &files, &[]);
    assert_eq!(t.lines[2].points[0], (0.0, 100.0));
    assert!(t.facts.iter().any(|f| f.contains("not aligned")));
}

fn write(path: &Path, file: &TelemetryFile) {
    let mut w = format::TelemetryWriter::new(Vec::new());
    w.header(&file.header).unwrap();
    for s in &file.samples {
        w.sample(s).unwrap();
    }
    for m in &file.marks {
        w.mark(m).unwrap();
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, w.into_inner().unwrap()).unwrap();
}

#[test]
fn load_finds_run_folders_groups_copies_and_names_traces() {
    let tmp = tempfile::tempdir().unwrap();
    let sub = tmp.path().join("acme");
    let tel = sub.join("output0").join(TELEMETRY_FOLDER);
    write(&tel.join("vae.0.jsonl"), &copy_file(0, Some(0)));
    write(&tel.join("vae.1.jsonl"), &copy_file(1, Some(0)));
    write(&tel.join("vae.0.2.jsonl"), &copy_file(0, Some(0)));
    // A bench whose only device has nothing to draw.
    let mut bare = copy_file(0, None);
    bare.header.bench = Some("cart".into());
    bare.header.devices.truncate(1);
    bare.header.devices[0].counter = None;
    bare.samples.retain(|s| s.device == 0);
    bare.samples
        .iter_mut()
        .for_each(|s| s.values = Values::default());
    write(&tel.join("cart.0.jsonl"), &bare);
    std::fs::write(tel.join("notes.txt"), "not telemetry").unwrap();
    std::fs::write(tel.join("vae.3.jsonl.part"), "{\"type\":").unwrap();
    let loaded = power_traces(std::slice::from_ref(&sub), u64::MAX).unwrap();
    let names: Vec<&str> = loaded.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["output0-vae", "output0-vae.2"]);
    assert_eq!(
        loaded.traces[0].lines.len(),
        4,
        "two copies, two devices each"
    );
    assert_eq!(loaded.traces[1].lines.len(), 2);
    assert_eq!(loaded.skipped.len(), 2, "{:?}", loaded.skipped);
    assert!(loaded.skipped[0].contains("vae.3.jsonl.part: a sampler's unfinished file"));
    assert!(
        loaded.skipped[1].ends_with("/cart: no device has power or an energy counter; not drawn")
    );
    // The run folder and the telemetry folder give the same; two paths are prefixed
    // with their folder names, and alike names numbered.
    for path in [sub.join("output0"), tel.clone()] {
        let names: Vec<String> = power_traces(&[path], u64::MAX)
            .unwrap()
            .traces
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["output0-vae", "output0-vae.2"]);
    }
    let loaded = power_traces(&[sub.clone(), sub.join("output0")], u64::MAX).unwrap();
    let names: Vec<&str> = loaded.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "acme-output0-vae",
            "acme-output0-vae.2",
            "output0-output0-vae",
            "output0-output0-vae.2"
        ]
    );
    let loaded = power_traces(&[sub.join("output0"), tel.clone()], u64::MAX).unwrap();
    let names: Vec<&str> = loaded.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "output0-output0-vae",
            "output0-output0-vae.2",
            "telemetry-output0-vae",
            "telemetry-output0-vae.2"
        ]
    );
}

/// A zip of the folder `root` (every file the intake reads of it), at `zip`.
fn zip_of(root: &Path, zip: &Path) {
    let limits = Limits::default();
    let files = mlbench_validator::read_submission(root, &limits)
        .unwrap()
        .files;
    mlbench_validator::pack::write_zip(&files, std::fs::File::create(zip).unwrap()).unwrap();
}

#[test]
fn a_zip_gives_the_traces_of_its_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let sub = tmp.path().join("acme");
    for run in ["output0", "output1"] {
        let tel = sub.join(run).join(TELEMETRY_FOLDER);
        write(&tel.join("vae.0.jsonl"), &copy_file(0, Some(0)));
        write(&tel.join("vae.1.jsonl"), &copy_file(1, Some(0)));
        std::fs::write(tel.join("vae.0.2.jsonl.part"), "{").unwrap();
    }
    std::fs::write(sub.join("output0/fast_0.json"), "[]").unwrap();
    let zip = tmp.path().join("acme.zip");
    zip_of(&sub, &zip);
    let from_folder = power_traces(std::slice::from_ref(&sub), u64::MAX).unwrap();
    let from_zip = power_traces(std::slice::from_ref(&zip), u64::MAX).unwrap();
    let names: Vec<&str> = from_zip.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["output0-vae", "output1-vae"]);
    assert_eq!(from_zip.traces, from_folder.traces);
    // The folder opened once for a whole command (a report's walk) gives the page the
    // same traces as a walk of its own.
    let opened = Opened::open(&sub, &Limits::within(u64::MAX)).unwrap();
    assert_eq!(
        opened_traces(std::slice::from_ref(&opened), true).unwrap(),
        page_traces(std::slice::from_ref(&sub), true, u64::MAX).unwrap()
    );
    assert!(opened_traces(&[opened], false).unwrap().is_empty());
    assert_eq!(
        from_zip.traces[0].lines.len(),
        4,
        "two copies, two devices each"
    );
    // The unfinished files are said, named inside the zip.
    let zip_at = format!("{}/output0/telemetry/vae.0.2.jsonl.part: ", zip.display());
    assert!(
        from_zip.skipped[0].starts_with(&zip_at),
        "{:?}",
        from_zip.skipped
    );
    assert_eq!(from_zip.skipped.len(), 2);
    // The zip held in memory (the report's) gives the same, one per bench.
    let held = mlbench_validator::read_submission(&zip, &Limits::default()).unwrap();
    let page = held_traces(&zip, &held, true).unwrap();
    assert_eq!(page, one_per_bench(from_folder.traces.clone()));
    assert_eq!(held_traces(&zip, &held, false).unwrap(), Vec::new());
    // A zip without telemetry, and one that is no zip.
    let bare = tmp.path().join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    std::fs::write(bare.join("fast_0.json"), "[]").unwrap();
    let bare_zip = tmp.path().join("bare.zip");
    zip_of(&bare, &bare_zip);
    let err = power_traces(std::slice::from_ref(&bare_zip), u64::MAX).unwrap_err();
    assert!(matches!(err, TraceError::NoTelemetry(_)), "{err}");
    std::fs::write(&zip, "PK").unwrap();
    let err = power_traces(std::slice::from_ref(&zip), u64::MAX).unwrap_err();
    assert!(matches!(err, TraceError::Zip { .. }), "{err}");
    assert!(
        err.to_string().starts_with(&format!("{}: ", zip.display())),
        "{err}"
    );
}

#[test]
fn load_refuses_files_folders_without_telemetry_and_bad_files() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("notes.txt");
    std::fs::write(&file, "not a submission").unwrap();
    let err = power_traces(std::slice::from_ref(&file), u64::MAX).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("notes.txt: not a folder or a .zip file"),
        "{err}"
    );
    let err = power_traces(&[tmp.path().to_owned()], u64::MAX)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no telemetry files"), "{err}");
    let tel = tmp.path().join("output0").join(TELEMETRY_FOLDER);
    std::fs::create_dir_all(&tel).unwrap();
    std::fs::write(tel.join("vae.0.jsonl"), "{\"type\":\"sample\"}\n").unwrap();
    let err = power_traces(&[tmp.path().to_owned()], u64::MAX)
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with("vae.0.jsonl: the first line is not a telemetry header"),
        "{err}"
    );
}

/// Links (to a file outside, to a FIFO, to a device) and a FIFO in a telemetry folder are
/// never opened or followed: each is passed over and named; the real files still draw.
#[test]
fn links_and_fifos_in_a_telemetry_folder_are_named_and_never_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let sub = tmp.path().join("acme");
    let tel = sub.join("output0").join(TELEMETRY_FOLDER);
    write(&tel.join("vae.0.jsonl"), &copy_file(0, Some(0)));
    // Outside: a file that would draw a trace of its own, were it followed.
    let outside = tmp.path().join("outside.jsonl");
    let mut other = copy_file(0, Some(0));
    other.header.bench = Some("bert".into());
    write(&outside, &other);
    std::os::unix::fs::symlink(&outside, tel.join("bert.0.jsonl")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", tel.join("zero.0.jsonl")).unwrap();
    let fifo = tel.join("fifo.0.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    let fifo_made = made.is_ok_and(|s| s.success());
    if fifo_made {
        std::os::unix::fs::symlink(&fifo, tel.join("link.0.jsonl")).unwrap();
    }
    let loaded = power_traces(std::slice::from_ref(&sub), u64::MAX).unwrap();
    let names: Vec<&str> = loaded.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["output0-vae"], "{:?}", loaded.skipped);
    let said = |name: &str, what: &str| {
        let at = format!("{}: not read: {what}", tel.join(name).display());
        loaded.skipped.iter().any(|s| s.starts_with(&at))
    };
    assert!(
        said("bert.0.jsonl", "a symbolic link"),
        "{:?}",
        loaded.skipped
    );
    assert!(
        said("zero.0.jsonl", "a symbolic link"),
        "{:?}",
        loaded.skipped
    );
    if fifo_made {
        assert!(said("fifo.0.jsonl", "a FIFO"), "{:?}", loaded.skipped);
        assert!(
            said("link.0.jsonl", "a symbolic link"),
            "{:?}",
            loaded.skipped
        );
    }
    assert_eq!(loaded.skipped.len(), if fifo_made { 4 } else { 2 });
}
