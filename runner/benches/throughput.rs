//! Throughput of the runner's tch models against the same models in PyTorch for Python
//! (`throughput.py` and `py/` beside this file), on this machine's CPU, by the suite's
//! timing method.
//!
//!   cargo bench -p mlbench-runner --features tch --bench throughput [-- NAME...]
//!
//! Each case is a jobs-file command line. The tch side runs the runner's real path: the
//! arguments parsed as the planner parses them, the `Models` factory with the batch and
//! observation count the report would record, `timing::measure` with the wall clock, one
//! CPU device with every core (a whole-machine job splits it into the devices of its
//! `--vcd`, as `mlbench run --devices N` does). The Python side gets the same command line
//! and thread count. They alternate for `MLBENCH_ROUNDS` rounds (default 3); the table gives
//! the median items/s of each side and their ratio. `MLBENCH_PYTHON` names the interpreter
//! (default `python3`); without PyTorch for Python the comparison is skipped and only the
//! tch figures are printed. NAME arguments select cases by bench name. docs/performance.md
//! records the figures.

use mlbench_runner::bench::{BenchArgs, BenchFactory, DeviceSpec};
use mlbench_runner::models::Models;
use mlbench_runner::plan::argparse_value;
use mlbench_runner::timing::{LoopSize, RealClock, measure};
use mlbench_schema::jobs::flag_dest;
use mlbench_schema::value::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One comparison: a bench and its command line (`$DATA` is the loader's image folder).
struct Case {
    label: &'static str,
    bench: &'static str,
    args: &'static [&'static str],
}

/// The cases. Sizes are the suite's where a CPU takes them in seconds, else smaller with
/// the same shapes of work (said in each label); every case times more than the 10
/// observations the suite drops.
const CASES: &[Case] = &[
    Case {
        label: "toy_reg (polynomial, batch 256)",
        bench: "toy_reg",
        args: &["--batch-size", "256", "--number", "100", "--repeat", "30"],
    },
    Case {
        label: "convnet (ResNet-18, 32×3×64×64)",
        bench: "convnet",
        args: &[
            "--batch-size",
            "32",
            "--arch",
            "resnet18",
            "--image-size",
            "64",
            "--number",
            "2",
            "--repeat",
            "14",
        ],
    },
    Case {
        label: "cart (REINFORCE, 500 steps/update)",
        bench: "cart",
        args: &["--gamma", "0.99", "--number", "500", "--repeat", "20"],
    },
    Case {
        label: "atari (PPO, 16 envs × 32 steps)",
        bench: "atari",
        args: &[
            "--algo",
            "ppo",
            "--num-processes",
            "16",
            "--num-steps",
            "32",
            "--num-mini-batch",
            "4",
            "--clip-param",
            "0.1",
            "--use-gae",
            "--value-loss-coef",
            "0.5",
            "--entropy-coef",
            "0.01",
            "--use-linear-lr-decay",
            "--number",
            "1",
            "--repeat",
            "14",
        ],
    },
    Case {
        label: "translator (GNMT H256, batch 16)",
        bench: "translator",
        args: &[
            "--batch-size",
            "16",
            "--hidden-size",
            "256",
            "--num-layers",
            "4",
            "--number",
            "1",
            "--repeat",
            "13",
        ],
    },
    Case {
        label: "ssd (SSD300, batch 2)",
        bench: "ssd",
        args: &["--batch-size", "2", "--number", "1", "--repeat", "13"],
    },
    Case {
        label: "fast_style (64×64, batch 4)",
        bench: "fast_style",
        args: &[
            "--batch-size",
            "4",
            "--image-size",
            "64",
            "--style-size",
            "64",
            "--number",
            "2",
            "--repeat",
            "14",
        ],
    },
    Case {
        label: "loader (2 workers, batch 32, 224²)",
        bench: "loader",
        args: &[
            "--data",
            "$DATA",
            "--workers",
            "2",
            "--batch-size",
            "32",
            "--number",
            "4",
            "--repeat",
            "15",
        ],
    },
    Case {
        label: "convnet_distributed (2 × ResNet-18)",
        bench: "convnet_distributed",
        args: &[
            "--vcd",
            "0,1",
            "--arch",
            "resnet18",
            "--image-size",
            "64",
            "--batch-size",
            "16",
            "--number",
            "2",
            "--repeat",
            "14",
        ],
    },
    Case {
        label: "dcgan_all (2 devices, batch 2 × 16)",
        bench: "dcgan_all",
        args: &[
            "--vcd",
            "0,1",
            "--ngpu",
            "2",
            "--imageSize",
            "64",
            "--batch-size",
            "16",
            "--number",
            "2",
            "--repeat",
            "14",
        ],
    },
];

/// The case's command line with `$DATA` replaced.
fn argv(case: &Case, data: &Path) -> Vec<String> {
    case.args
        .iter()
        .map(|a| a.replace("$DATA", &data.to_string_lossy()))
        .collect()
}

/// The arguments as the planner gives them to a model: flags by argparse destination,
/// values parsed as argparse would, a bare flag `true`.
fn bench_args(argv: &[String]) -> Result<BenchArgs, String> {
    let mut values: BTreeMap<String, Value> = BTreeMap::new();
    let mut i = 0;
    while i < argv.len() {
        let flag = &argv[i];
        let dest = flag_dest(flag).ok_or_else(|| format!("not a flag: {flag}"))?;
        let value = match argv.get(i + 1) {
            Some(v) if !v.starts_with("--") => {
                i += 1;
                argparse_value(v)
            }
            _ => Value::Bool(true),
        };
        values.insert(dest, value);
        i += 1;
    }
    // The suite's defaults of the common arguments (docs/suite.md#common-arguments), as the planner
    // records.
    let mut int = |dest: &str, default: i64| match values.remove(dest) {
        Some(Value::Int(i)) => Ok(i),
        None => Ok(default),
        Some(other) => Err(format!("{dest}: expected an int, found {other:?}")),
    };
    let (batch_size, number, repeat) = (
        int("batch_size", 1)?,
        int("number", 10)?,
        int("repeat", 100)?,
    );
    // atari's main.py records num_processes as its batch (one item: one environment's
    // rollout and update), as the planner does.
    let batch_size = match values.get("num_processes") {
        Some(Value::Int(p)) if values.contains_key("algo") => *p,
        _ => batch_size,
    };
    Ok(BenchArgs {
        batch_size,
        number,
        repeat,
        seed: 0,
        extra: values,
    })
}

/// items/s and the coefficient of variation of the kept observation times.
struct Figure {
    items_per_s: f64,
    cv: f64,
}

fn run_tch(case: &Case, data: &Path, threads: usize) -> Result<Figure, String> {
    let args = bench_args(&argv(case, data))?;
    let device = DeviceSpec::Cpu { index: 0, threads };
    let mut bench = Models
        .create(case.bench, &args, device)
        .map_err(|e| e.to_string())?;
    let size = LoopSize {
        batch_size: Models.batch_size(case.bench, &args),
        number: args.number,
        repeat: Models.observations(case.bench, args.repeat),
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

fn run_python(python: &str, case: &Case, data: &Path, threads: usize) -> Result<Python, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/throughput.py");
    let mut cmd = Command::new(python);
    cmd.arg(&script)
        .arg(case.bench)
        .args(["--threads", &threads.to_string()])
        .args(argv(case, data));
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
    // As a copy process of `mlbench run` sets its allocator (the Python side runs in a
    // process of its own, with the defaults).
    mlbench_runner::confine::keep_freed_memory();
    // `cargo bench` passes `--bench`; other arguments select cases by bench name.
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
    // The loader's images: made once by the tch side (its first run says so), read by both.
    let data = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("throughput-images");
    println!(
        "tch (libtorch {}) vs PyTorch for Python ({python}) on {threads} CPU thread(s), {rounds} round(s), median items/s",
        tch_version()
    );
    let mut failed = false;
    let mut python_missing = false;
    for case in CASES {
        if !filter.is_empty() && !filter.iter().any(|f| case.bench == f.as_str()) {
            continue;
        }
        let (mut tch, mut py) = (Vec::new(), Vec::new());
        let (mut tch_cv, mut py_cv) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            match run_tch(case, &data, threads) {
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
            match run_python(&python, case, &data, threads) {
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
            println!("{:<38} tch {t:>12.1} (cv {tcv:.1}%)", case.label);
        } else {
            let p = median(&mut py);
            let pcv = median(&mut py_cv) * 100.0;
            println!(
                "{:<38} tch {t:>12.1} (cv {tcv:.1}%)  python {p:>12.1} (cv {pcv:.1}%)  ratio {:.2}×",
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
