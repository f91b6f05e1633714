//! Telemetry beside a fixture submission ([`crate::fixtures::write_submission`]), as
//! `mlbench run` writes it (docs/telemetry.md), with every figure chosen so that the
//! energy is worked out by hand.
//!
//! Sampled at 10 Hz. Copy `g` of run `r` draws `scale · (200 + 10r + 10g)` W on its GPU
//! (`cuda:g`, power readings only); for `vae` the copies also read one CPU package (RAPL,
//! a µJ counter wrapping at 2²⁶ µJ ≈ 67.1 J) drawing `scale · 40` W, shared between the two
//! copies. Windows: `convnet` 10 s (its 5 counted observations are timed 8.9 s), `vae`
//! 1 s (0.21 s timed; 11 samples, too few). Idle baselines: each GPU at 50 W, no package.
//! Items per copy: 64 × 5 × 5 = 1600.

use mlbench_schema::telemetry::{
    Counter, Device, Edge, Header, Line, Mark, Sample, SourceKind, TelemetryWriter, Values,
};
use std::path::Path;

const PERIOD_NS: u64 = 100_000_000;
/// The package counter's modulus, µJ.
pub const WRAP_UJ: u64 = 1 << 26;

/// The GPU power of copy `gpu` of run `run`, W, before scaling.
pub fn gpu_watts(run: usize, gpu: u32) -> f64 {
    200.0 + 10.0 * run as f64 + 10.0 * f64::from(gpu)
}

/// The package's power, W, before scaling.
pub const PACKAGE_WATTS: f64 = 40.0;

/// Idle power of each GPU, W.
pub const IDLE_WATTS: f64 = 50.0;

struct Dev {
    device: Device,
    watts: f64,
}

fn gpu(gpu: u32, watts: f64, source: SourceKind) -> Dev {
    Dev {
        device: Device {
            id: format!("cuda:{gpu}"),
            source,
            whole_board: true,
            ..Device::default()
        },
        watts,
    }
}

fn package(watts: f64) -> Dev {
    Dev {
        device: Device {
            id: "cpu:package-0".into(),
            source: SourceKind::Rapl,
            counter: Some(Counter {
                resolution_uj: 1.0,
                wrap_raw: Some(WRAP_UJ),
            }),
            whole_board: true,
            ..Device::default()
        },
        watts,
    }
}

/// A file sampled from 0 to `ticks` periods, the window `name` from tick `from` to `to`.
fn file(
    bench: Option<&str>,
    copy: u32,
    devices: &[Dev],
    ticks: u64,
    (name, from, to): (&str, u64, u64),
) -> Vec<u8> {
    let mut w = TelemetryWriter::new(Vec::new());
    w.header(&Header {
        schema_version: 1,
        tool: "synthetic (tests/cli/energy_fixture.rs)".into(),
        bench: bench.map(str::to_owned),
        copy: Some(copy),
        sample_period_ns: PERIOD_NS,
        devices: devices.iter().map(|d| d.device.clone()).collect(),
        ..Header::default()
    })
    .unwrap();
    let mark = |tick: u64, edge| {
        Line::Mark(Mark {
            t_ns: tick * PERIOD_NS,
            edge,
            window: name.into(),
            copy,
        })
    };
    for tick in 0..=ticks {
        if tick == from {
            w.line(&mark(tick, Edge::Start)).unwrap();
        }
        for (i, d) in devices.iter().enumerate() {
            let t_ns = tick * PERIOD_NS;
            let counter = d.device.counter.is_some();
            let uj = (d.watts * t_ns as f64 * 1e-3).round() as u64;
            w.sample(&Sample {
                t_ns,
                device: i as u32,
                values: Values {
                    energy_raw: counter.then_some(uj % WRAP_UJ),
                    power_mw: (!counter).then_some(d.watts * 1000.0),
                    util_pct: (!counter).then_some(90.0),
                    ..Values::default()
                },
                ..Sample::default()
            })
            .unwrap();
        }
        if tick == to {
            w.line(&mark(tick, Edge::End)).unwrap();
        }
    }
    w.into_inner().unwrap()
}

/// Writes the telemetry of `runs` × `gpus` copies under `root/output<r>/telemetry`, every
/// power × `scale`, the GPUs read through NVML.
pub fn write_telemetry(root: &Path, runs: usize, gpus: u32, scale: f64) {
    write_telemetry_from(root, runs, gpus, scale, SourceKind::Nvml);
}

/// [`write_telemetry`], the GPUs read through `source`.
pub fn write_telemetry_from(root: &Path, runs: usize, gpus: u32, scale: f64, source: SourceKind) {
    let gpu = |g, watts| gpu(g, watts, source);
    for run in 0..runs {
        let dir = root.join(format!("output{run}/telemetry"));
        std::fs::create_dir_all(&dir).unwrap();
        for g in 0..gpus {
            let watts = scale * gpu_watts(run, g);
            let convnet = file(
                Some("convnet"),
                g,
                &[gpu(g, watts)],
                120,
                ("train", 10, 110),
            );
            std::fs::write(dir.join(format!("convnet.{g}.jsonl")), convnet).unwrap();
            let both = [gpu(g, watts), package(scale * PACKAGE_WATTS)];
            let vae = file(Some("vae"), g, &both, 30, ("train", 10, 20));
            std::fs::write(dir.join(format!("vae.{g}.jsonl")), vae).unwrap();
            let idle = file(None, g, &[gpu(g, IDLE_WATTS)], 50, ("idle", 0, 50));
            std::fs::write(dir.join(format!("idle.cuda:{g}.jsonl")), idle).unwrap();
        }
    }
}

/// `folder` packed as an organiser receives it (`mlbench pack`, errors allowed: the
/// fixture has too few runs for `validate`), beside it as `<folder>.zip`; the telemetry
/// goes in with the reports.
pub fn pack(folder: &Path) -> std::path::PathBuf {
    let zip = folder.with_extension("zip");
    let out = (crate::fixtures::mlbench()
        .arg("pack")
        .arg(folder)
        .arg("-o")
        .arg(&zip))
    .arg("--allow-errors")
    .output()
    .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        zip.is_file() && out.status.code().is_some_and(|c| c <= 1),
        "{said}"
    );
    let entries = crate::fixtures::read_zip(&zip);
    assert!(
        entries.iter().any(|(name, _)| name.contains("/telemetry/")),
        "the zip holds the telemetry"
    );
    zip
}
