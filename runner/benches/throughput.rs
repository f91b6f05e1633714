//! Throughput of the runner's tch models against the same models in PyTorch for Python
//! (`throughput.py` beside this file), on this machine's CPU, by the suite's timing method.
//!
//!   cargo bench -p mlbench-runner --features tch --bench throughput
//!
//! Each case runs the runner's real path (the `Models` factory, `timing::measure` with the
//! wall clock, one CPU device with every core) and then the Python script with the same
//! sizes and thread count, alternating for `MLBENCH_ROUNDS` rounds (default 3); the table
//! gives the median items/s of each side and their ratio. `MLBENCH_PYTHON` names the
//! interpreter (default `python3`); without PyTorch for Python the comparison is skipped
//! and only the tch figures are printed. docs/performance.md records the figures.

use mlbench_runner::bench::{BenchArgs, BenchFactory, DeviceSpec};
use mlbench_runner::models::Models;
use mlbench_runner::timing::{LoopSize, RealClock, measure};
use mlbench_schema::value::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// One comparison: a model and its sizes.
struct Case {
    label: &'static str,
    bench: &'static str,
    batch_size: i64,
    number: i64,
    repeat: i64,
    image_size: Option<i64>,
}

const CASES: &[Case] = &[
    // The suite's toy_reg sizes (batch 256, 100 batches per observation), more observations.
    Case {
        label: "toy_reg (polynomial, batch 256)",
        bench: "toy_reg",
        batch_size: 256,
        number: 100,
        repeat: 30,
        image_size: None,
    },
    // ResNet-18 at a CPU-sized input (32 images of 64×64); the conv work dominates.
    Case {
        label: "convnet (ResNet-18, 32×3×64×64)",
        bench: "convnet",
        batch_size: 32,
        number: 2,
        repeat: 14,
        image_size: Some(64),
    },
];

/// items/s and the coefficient of variation of the kept observation times.
struct Figure {
    items_per_s: f64,
    cv: f64,
}

fn run_tch(case: &Case, threads: usize) -> Result<Figure, String> {
    let mut extra = BTreeMap::new();
    extra.insert("batch_size".to_owned(), Value::Int(case.batch_size));
    if let Some(size) = case.image_size {
        extra.insert("arch".to_owned(), Value::Str("resnet18".to_owned()));
        extra.insert("image_size".to_owned(), Value::Int(size));
    }
    let args = BenchArgs {
        batch_size: case.batch_size,
        number: case.number,
        repeat: case.repeat,
        seed: 0,
        extra,
    };
    let device = DeviceSpec::Cpu { index: 0, threads };
    let mut bench = Models
        .create(case.bench, &args, device)
        .map_err(|e| e.to_string())?;
    let size = LoopSize {
        batch_size: case.batch_size,
        number: case.number,
        repeat: case.repeat,
    };
    let m = measure(&mut *bench, &mut RealClock::new(), size, &mut |_, _, _| {})
        .map_err(|e| e.to_string())?;
    if let Some(nan) = m.nan {
        return Err(format!(
            "non-finite loss {} at step {}",
            nan.value, nan.step
        ));
    }
    let items_per_s = m
        .train_item()
        .get("avg")
        .and_then(Value::as_f64)
        .ok_or("no train_item avg")?;
    Ok(Figure {
        items_per_s,
        cv: m.train.sd() / m.train.avg(),
    })
}

enum Python {
    Ran(Figure),
    Missing,
}

fn run_python(python: &str, case: &Case, threads: usize) -> Result<Python, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/throughput.py");
    let mut cmd = Command::new(python);
    cmd.arg(&script).arg(case.bench).args([
        "--batch-size",
        &case.batch_size.to_string(),
        "--number",
        &case.number.to_string(),
        "--repeat",
        &case.repeat.to_string(),
        "--threads",
        &threads.to_string(),
    ]);
    if let Some(size) = case.image_size {
        cmd.args(["--image-size", &size.to_string()]);
    }
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Python::Missing),
        Err(e) => return Err(format!("{python}: {e}")),
    };
    if out.status.code() == Some(3) {
        return Ok(Python::Missing);
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "{}: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let fields: Vec<f64> = stdout
        .split_whitespace()
        .filter_map(|t| t.parse().ok())
        .collect();
    match fields.as_slice() {
        [items_per_s, cv, _] => Ok(Python::Ran(Figure {
            items_per_s: *items_per_s,
            cv: *cv,
        })),
        _ => Err(format!(
            "{}: unexpected output {stdout:?}",
            script.display()
        )),
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument selects cases by bench name.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rounds: usize = std::env::var("MLBENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3)
        .max(1);
    let python = std::env::var("MLBENCH_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    println!(
        "tch (libtorch {}) vs PyTorch for Python ({python}) on {threads} CPU thread(s), {rounds} round(s), median items/s",
        tch_version()
    );
    let mut failed = false;
    let mut python_missing = false;
    for case in CASES {
        if !filter.is_empty() && !filter.iter().any(|f| case.bench.contains(f.as_str())) {
            continue;
        }
        let (mut tch, mut py) = (Vec::new(), Vec::new());
        let (mut tch_cv, mut py_cv) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            match run_tch(case, threads) {
                Ok(f) => {
                    tch.push(f.items_per_s);
                    tch_cv.push(f.cv);
                }
                Err(e) => {
                    eprintln!("{}: tch: {e}", case.label);
                    failed = true;
                }
            }
            if python_missing {
                continue;
            }
            match run_python(&python, case, threads) {
                Ok(Python::Ran(f)) => {
                    py.push(f.items_per_s);
                    py_cv.push(f.cv);
                }
                Ok(Python::Missing) => {
                    python_missing = true;
                    eprintln!("PyTorch for Python not found ({python}): comparison skipped");
                }
                Err(e) => {
                    eprintln!("{}: python: {e}", case.label);
                    failed = true;
                }
            }
        }
        if tch.is_empty() {
            continue;
        }
        let t = median(&mut tch);
        let tcv = median(&mut tch_cv) * 100.0;
        if py.is_empty() {
            println!("{:<34} tch {t:>12.1} (cv {tcv:.1}%)", case.label);
        } else {
            let p = median(&mut py);
            let pcv = median(&mut py_cv) * 100.0;
            println!(
                "{:<34} tch {t:>12.1} (cv {tcv:.1}%)  python {p:>12.1} (cv {pcv:.1}%)  ratio {:.2}×",
                case.label,
                t / p
            );
        }
    }
    if failed {
        std::process::exit(1);
    }
}

fn tch_version() -> String {
    let libtorch = std::env::var("LIBTORCH").unwrap_or_default();
    std::fs::read_to_string(Path::new(&libtorch).join("build-version"))
        .map(|v| v.trim().to_owned())
        .unwrap_or_else(|_| "?".to_owned())
}
