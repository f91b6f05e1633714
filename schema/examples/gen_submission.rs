//! Writes a realistic synthetic submission in the suite's own format (E2 legacy streams,
//! or E3 per-test files), deterministic for given arguments.
//!
//! cargo run -p mlbench-schema --example gen_submission -- --out DIR [--vendors V]
//!     [--runs R] [--gpus G] [--suite NAME] [--jobs fast|baselines|old_baselines]
//!     [--layout legacy|appended|per-test] [--seed S] [--nan-loss K] [--numbers plain|repr]
//!
//! Layouts (docs/suite.md#report-files, #repetition), per vendor root (`DIR`, or `DIR/vendorNN`
//! with `--vendors`):
//! - `legacy` (default): `run_10.sh`'s, one folder per run, `outputR/<suite>_<gpu>.json`,
//!   one legacy stream per GPU per run;
//! - `appended`: the suite run R times into the same folder without the move, so each
//!   GPU's stream `<suite>_<gpu>.json` holds run 0's entries, then run 1's, …; the runs
//!   are told apart only by the entries' `run_id`. The entries are those of `legacy`;
//! - `per-test`: E3, one file per test process, `<suite>.<bench>.R<run>.D<vcd>.<ts>.json`.
//!
//! Whole-machine jobs write to GPU 0's stream (`JOB_ID=0`).
//!
//! The benches are the jobs of a shipped jobs file (`--jobs`; by default the one named
//! `--suite` if there is one, else `fast`), which is written beside the runs as
//! `<suite>.json`, byte for byte. Every entry records the arguments its job sets, as the
//! suite's scripts store them, the HEAD `version` of its script, and a `unique_id` and
//! `train_item` computed as the suite does. `scaling` (in `baselines`) reports as its
//! script does from 6d106f8 (docs/suite.md#scripts-that-differ): one entry per world size k = 1..N,
//! whose `train_item` is the scaling efficiency.

use mlbench_schema::jobs::{JobsFile, flag_dest};
use mlbench_schema::rng::SplitMix64;
use mlbench_schema::scripts::ScriptMap;
use mlbench_schema::timing::{StatStream, train_item};
use mlbench_schema::unique_id::{EXCLUDED_FINAL, unique_id};
use mlbench_schema::writer::{per_test_text, stream_text};
use mlbench_schema::{Object, ReportEntry, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Per bench: RTX throughput (items/s) and the level of its loss curve.
const FIGURES: &[(&str, f64, f64)] = &[
    ("toy_reg", 368820.18, 0.05),
    ("toy_lstm", 2.65, 0.02),
    ("vae", 7972.69, 14.0),
    ("loader", 1200.0, 1.0),
    ("reso", 138.34, 0.01),
    ("translator", 223.47, 1.2),
    ("wlm", 1440.87, 0.9),
    ("wlmfp16", 3793.37, 0.9),
    ("cart", 2000.0, 2.5),
    ("atari", 5.41, 0.004),
    ("ssd", 59.96, 1.6),
    ("fast_style", 156.75, 8.0),
    ("dcgan", 115.52, 0.6),
    ("convnet", 178.76, 0.9),
    ("convnet_fp16", 262.56, 0.9),
    ("recom", 20650.19, 0.07),
    ("convnet_distributed", 276.1, 0.9),
    ("convnet_distributed_fp16", 330.41, 0.9),
    ("dcgan_all", 139.29, 0.6),
    // One GPU's images/s of resnet101 at batch 128 (scaling's speed_1, which only sets its
    // `train` stage: its `train_item` is an efficiency, see `scaling_entries`).
    ("scaling", 150.0, 0.9),
];

/// `version` of each entry script at the suite's HEAD (0591444), docs/suite.md#version.
const VERSIONS: &[(&str, &str)] = &[
    ("regression/polynome/pytorch/main.py", "494f887e94"),
    (
        "time_sequence_prediction/lstm/pytorch/train.py",
        "89220edec4",
    ),
    (
        "variational_auto_encoder/auto_encoding_variational_bayes/pytorch/main.py",
        "b239658344",
    ),
    ("image_loading/loader/pytorch/loaders.py", "177b4faa5b"),
    (
        "super_resolution/subpixel_convolution/pytorch/main.py",
        "7e5edbda94",
    ),
    (
        "natural_language_processing/rnn_translator/pytorch/train.py",
        "d926956467",
    ),
    (
        "natural_language_processing/word_language_model/pytorch/main.py",
        "26142c2313",
    ),
    (
        "natural_language_processing/word_language_model/pytorch/main_fp16_optimizer.py",
        "4231b41cc9",
    ),
    ("reinforcement/cart_pole/pytorch/reinforce.py", "2d78487190"),
    ("reinforcement/atari/pytorch/main.py", "e43cdbaa15"),
    (
        "object_detection/single_stage_detector/pytorch/train.py",
        "40b6e713e3",
    ),
    (
        "fast_neural_style/neural_style/pytorch/neural_style.py",
        "25340321c2",
    ),
    (
        "generative_adversarial_networks/dcgan/pytorch/main.py",
        "a442914fe6",
    ),
    (
        "image_classification/convnets/pytorch/conv_simple.py",
        "9c2ff8e92f",
    ),
    (
        "image_classification/convnets/pytorch/conv_distributed.py",
        "52ee9aff22",
    ),
    (
        "recommendation/neural_collaborative_filtering/pytorch/ncf.py",
        "610ca8e84a",
    ),
    (
        "image_classification/scaling/pytorch/scaling.py",
        "52788ff856",
    ),
];

/// The hard-coded table this generator had before it read jobs files ran dcgan_all 25
/// times; fast.json says 15. The noise of the 10 extra observations is still drawn (and
/// dropped) so that the random stream, and every other figure of the shipped example
/// that README.md quotes, stays as it was.
const LEGACY_DRAWS: &[(&str, i64)] = &[("dcgan_all", 25)];

/// What `$VAR` placeholders of the jobs file expand to (config.env, docs/suite.md#environment, with
/// `BASE=/home/bench/training`); `$DEVICE_TOTAL` is the GPU count.
const DATA_DIRECTORY: &str = "/home/bench/training/data";
const OUTPUT_DIRECTORY: &str = "/home/bench/training/output";

/// Which files the runs go to (see the module's doc).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    Legacy,
    Appended,
    PerTest,
}

/// One configuration of a job, with what the generator needs to report it.
struct Bench {
    name: String,
    /// The configuration's arguments (flag → value, JSON order).
    args: Vec<(String, Value)>,
    /// The entry script, which decides the scripts' batch-size overwrites.
    script: String,
    version: String,
    whole_machine: bool,
    speed: f64,
    loss_level: f64,
    /// Observations whose noise is drawn (at least `repeat`; see LEGACY_DRAWS).
    draws: i64,
    /// How its losses look once Python's `repr` writes them (`--numbers`).
    shape: LossShape,
}

/// How a bench's losses look in the file (`--numbers repr` gives each bench one of the
/// shapes real losses take; `plain`, the default, f32 values of a few units).
#[derive(Debug, Clone, Copy, PartialEq)]
enum LossShape {
    /// `6.912345886230469`: an f32 loss of a few units.
    Plain,
    /// `3.2247762793424783e-10`: a tiny f64 loss, written with an exponent.
    Tiny,
    /// `-2.3512353897094727`: a negative loss (a log-likelihood, a GAN's).
    Negative,
    /// `12.0`, `-0.0625`: coarse values, integer-valued ones among them.
    Coarse,
    /// `7e-05`, `1.2e-05`: short values with an exponent.
    Short,
}

impl LossShape {
    /// `loss` (a decaying curve's value around 1 to 10) in this shape.
    fn of(self, loss: f64) -> f64 {
        match self {
            LossShape::Plain => (loss as f32) as f64,
            LossShape::Tiny => loss * 4.7e-10,
            LossShape::Negative => -f64::from(loss as f32),
            LossShape::Coarse => ((loss - 4.0) * 16.0).round() / 16.0,
            LossShape::Short => (loss * 10.0).round() * 1e-6,
        }
    }
}

impl Bench {
    /// scaling.py, which writes one entry per world size (see `scaling_entries`).
    fn is_scaling(&self) -> bool {
        self.script.ends_with("scaling/pytorch/scaling.py")
    }
}

/// SplitMix64 (`mlbench_schema::rng`): small, deterministic, good enough for noise.
struct Rng(SplitMix64);
impl Rng {
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0.unit_f64()
    }
    /// Roughly normal (sum of 4 uniforms), mean 0, sd `sd`.
    fn noise(&mut self, sd: f64) -> f64 {
        let s: f64 = (0..4).map(|_| self.unit()).sum::<f64>() - 2.0;
        s * sd * 3f64.sqrt()
    }
}

struct Options {
    out: PathBuf,
    vendors: usize,
    runs: usize,
    gpus: usize,
    suite: String,
    jobs: Option<String>,
    layout: Layout,
    seed: u64,
    nan_loss: usize,
    repr_numbers: bool,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        out: PathBuf::new(),
        vendors: 1,
        runs: 5,
        gpus: 2,
        suite: "fast".into(),
        jobs: None,
        layout: Layout::Legacy,
        seed: 1,
        nan_loss: 0,
        repr_numbers: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        let number = |v: String| {
            v.parse::<usize>()
                .map_err(|_| format!("{flag}: `{v}` is not a number"))
        };
        match flag.as_str() {
            "--out" => o.out = PathBuf::from(value()?),
            "--vendors" => o.vendors = number(value()?)?.max(1),
            "--runs" => o.runs = number(value()?)?,
            "--gpus" => o.gpus = number(value()?)?.max(1),
            "--suite" => o.suite = value()?,
            "--jobs" => o.jobs = Some(value()?),
            "--seed" => o.seed = number(value()?)? as u64,
            "--nan-loss" => o.nan_loss = number(value()?)?,
            "--numbers" => {
                o.repr_numbers = match value()?.as_str() {
                    "plain" => false,
                    "repr" => true,
                    other => return Err(format!("--numbers: `{other}` is not plain or repr")),
                }
            }
            "--layout" => {
                o.layout = match value()?.as_str() {
                    "legacy" => Layout::Legacy,
                    "appended" => Layout::Appended,
                    "per-test" => Layout::PerTest,
                    other => {
                        return Err(format!(
                            "--layout: `{other}` is not legacy, appended or per-test"
                        ));
                    }
                }
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if o.out.as_os_str().is_empty() {
        return Err("--out DIR is required".into());
    }
    Ok(o)
}

/// A shipped jobs file's bytes and its benches: one per configuration of each job.
fn benches(jobs_name: &str) -> Result<(&'static [u8], Vec<Bench>), String> {
    let unknown = || {
        format!("--jobs: `{jobs_name}` is not a shipped jobs file (fast, baselines, old_baselines)")
    };
    let bytes = JobsFile::builtin_bytes(jobs_name).ok_or_else(unknown)?;
    let jobs = JobsFile::builtin(jobs_name).ok_or_else(unknown)?;
    let scripts = ScriptMap::builtin();
    let mut out = Vec::new();
    for job in &jobs.jobs {
        let figure = |what: &str| {
            format!(
                "no {what} for bench `{}` of {jobs_name}.json (the shipped jobs files have all)",
                job.name
            )
        };
        let &(_, speed, loss_level) = FIGURES
            .iter()
            .find(|f| f.0 == job.name)
            .ok_or_else(|| figure("throughput figure"))?;
        let script = scripts
            .script_for(&job.name)
            .ok_or_else(|| figure("script"))?;
        let &(_, version) = VERSIONS
            .iter()
            .find(|v| v.0 == script)
            .ok_or_else(|| figure("version"))?;
        for config in job.configs() {
            let repeat = config
                .args
                .iter()
                .find(|(k, _)| k == "--repeat")
                .and_then(|(_, v)| v.as_i64())
                .unwrap_or(100);
            let legacy = LEGACY_DRAWS.iter().find(|d| d.0 == job.name);
            out.push(Bench {
                name: job.name.clone(),
                args: config.args,
                script: script.to_owned(),
                version: version.to_owned(),
                whole_machine: job.whole_machine(),
                speed,
                loss_level,
                draws: legacy.map_or(repeat, |d| d.1.max(repeat)),
                shape: LossShape::Plain,
            });
        }
    }
    Ok((bytes, out))
}

/// A jobs-file value as the script's argparse stores it: `""` is a bare flag (`true`;
/// `--no-cuda` stores `cuda: false`), and a string goes through `/bin/sh` (placeholders
/// expanded, quotes removed) and the argument's type (ints, lists of ints).
fn stored_value(flag: &str, value: &Value, gpus: usize) -> Value {
    let Value::Str(text) = value else {
        return value.clone();
    };
    if text.is_empty() {
        return Value::Bool(flag != "--no-cuda");
    }
    let text = text
        .replace("${DATA_DIRECTORY}", DATA_DIRECTORY)
        .replace("$DATA_DIRECTORY", DATA_DIRECTORY)
        .replace("$OUTPUT_DIRECTORY", OUTPUT_DIRECTORY)
        .replace("$DEVICE_TOTAL", &gpus.to_string())
        .replace(['"', '\''], "");
    let ints: Option<Vec<i64>> = text.split_whitespace().map(|w| w.parse().ok()).collect();
    match ints {
        Some(ints) if ints.len() == 1 => Value::Int(ints[0]),
        Some(ints) if ints.len() > 1 => Value::from(ints),
        _ => Value::Str(text),
    }
}

/// The arguments `make_report` stores for one process of `b` on `gpu` (or, for a
/// whole-machine job, on every GPU), up to `version`.
fn arguments(b: &Bench, gpu: usize, gpus: usize) -> Object {
    let all = b.whole_machine;
    // The defaults every script has (docs/suite.md#common-arguments), the workers from
    // PROC_COUNT=4.
    let mut e = Object::new();
    e.insert("batch_size", 1i64);
    e.insert("cuda", true);
    e.insert("workers", 4i64);
    e.insert("devices", 1i64);
    e.insert("repeat", 100i64);
    e.insert("number", 10i64);
    for (flag, value) in &b.args {
        // Positionals and short flags: their destinations are the scripts' own.
        let Some(dest) = flag_dest(flag) else {
            continue;
        };
        // make_report pops `report` (and, in E1/E2, `seed`).
        if dest != "report" && dest != "seed" {
            e.insert(dest, stored_value(flag, value, gpus));
        }
    }
    // The scripts' own overwrites of batch_size (docs/suite.md#scripts-that-differ).
    let batch = int(&e, "batch_size").unwrap_or(1);
    let batch = if b.script.ends_with("convnets/pytorch/conv_distributed.py") {
        batch * gpus as i64
    } else if b.script.ends_with("dcgan/pytorch/main.py") {
        // ngpu defaults to the devices the process sees: 1 for a per-GPU job.
        let ngpu = int(&e, "ngpu").unwrap_or(if all { gpus as i64 } else { 1 });
        e.insert("ngpu", ngpu);
        batch * ngpu
    } else if b.script.ends_with("atari/pytorch/main.py") {
        int(&e, "num_processes").unwrap_or(batch)
    } else {
        batch
    };
    e.insert("batch_size", batch);
    e.insert(
        "jr_id",
        if all {
            "0".to_string()
        } else {
            gpu.to_string()
        },
    );
    e.insert(
        "vcd",
        if all {
            device_list(gpus)
        } else {
            gpu.to_string()
        },
    );
    e.insert("cpu_cores", 10i64);
    e.insert("version", b.version.as_str());
    e
}

fn int(e: &Object, key: &str) -> Option<i64> {
    e.get(key).and_then(Value::as_i64)
}

/// `"0,1,…,n-1"`, as `CUDA_VISIBLE_DEVICES` of a process on the first `n` GPUs.
fn device_list(n: usize) -> String {
    (0..n).map(|g| g.to_string()).collect::<Vec<_>>().join(",")
}

/// One entry of `bench` with throughput around `speed`.
fn entry(
    rng: &mut Rng,
    b: &Bench,
    speed: f64,
    gpu: usize,
    gpus: usize,
    run: usize,
    vendor: usize,
) -> ReportEntry {
    let e = arguments(b, gpu, gpus);
    let batch = int(&e, "batch_size").unwrap_or(1);
    let repeat = int(&e, "repeat").unwrap_or(100);
    let number = int(&e, "number").unwrap_or(10);
    // Time of `number` batches: items / throughput, with ~0.7% noise per observation.
    let items = (batch * number) as f64;
    let mut train = StatStream::new(10);
    for i in 0..b.draws {
        let noise = rng.noise(0.007);
        if i < repeat {
            train.update(items / speed * (1.0 + noise));
        }
    }
    let item = train_item(batch, number, &train);
    finish(rng, e, b, run, vendor, train.to_stage(), item)
}

/// What `make_report` adds to the arguments `e`: the results (with the loss curve drawn
/// here), the `train` stage and `train_item`, and the `unique_id` of the arguments.
fn finish(
    rng: &mut Rng,
    mut e: Object,
    b: &Bench,
    run: usize,
    vendor: usize,
    train: Object,
    item: Object,
) -> ReportEntry {
    e.insert("name", b.name.as_str());
    e.insert("run_id", run.to_string());
    if e.get("cuda") == Some(&Value::Bool(true)) {
        e.insert("gpu", "TITAN RTX");
    }
    e.insert("hostname", format!("vendor{vendor:02}-node"));
    // A decaying curve in the bench's band; the noise differs for every run and GPU.
    let start = 6.9 + rng.noise(0.05);
    let losses: Vec<f64> = (0..100)
        .map(|i| {
            let loss = b.loss_level * (start * (-(i as f64) / 60.0).exp() + 1.0 + rng.noise(0.05));
            b.shape.of(loss)
        })
        .collect();
    e.insert("batch_loss", Value::from(losses));
    e.insert("epoch_loss", Value::List(vec![]));
    e.insert("metrics", Value::Object(Object::new()));
    e.insert("train", Value::Object(train));
    e.insert("train_item", Value::Object(item));
    // Hashed as the suite does: every argument, i.e. every key make_report does not add.
    let mut entry = ReportEntry::new(e);
    let id = unique_id(entry.arguments(), EXCLUDED_FINAL);
    entry.fields.insert("unique_id", id);
    entry
}

/// The entries of one `scaling` job, as scaling.py writes them from 6d106f8
/// (docs/suite.md#scripts-that-differ):
/// `repeat` is forced to the device count N (`--devices`, or every GPU when it is 0),
/// and for k = 1..N it times micro_bench on GPUs 0..k-1 and reports world size k with
/// `devices` = the k device ids as strings, `vcd` = "0,…,k-1", `completed: true` and its
/// own `train_item`: the efficiency (speed_k / speed_1) / k, drawn here around
/// 1 − 0.02·(k − 1) (exactly 1 for k = 1), in `unit` "%".
///
/// The script's one `train` stream gets one observation per world size (the time of
/// that launch, `speed` being one GPU's throughput), so each report holds it after k of
/// them: with fewer than 10 the suite's StatStream has avg 0, min `Infinity` and max
/// `-Infinity`, as the suite's own scaling reports do (docs/suite.md#statstream).
fn scaling_entries(
    rng: &mut Rng,
    b: &Bench,
    speed: f64,
    gpus: usize,
    run: usize,
    vendor: usize,
) -> Vec<ReportEntry> {
    let base = arguments(b, 0, gpus);
    let devices = match int(&base, "devices") {
        Some(n) if n > 0 => n as usize,
        _ => gpus,
    };
    let batch = int(&base, "batch_size").unwrap_or(1) as f64;
    let number = int(&base, "number").unwrap_or(10) as f64;
    let mut train = StatStream::new(10);
    let mut out = Vec::with_capacity(devices);
    for k in 1..=devices {
        let efficiency = if k == 1 {
            1.0
        } else {
            1.0 - 0.02 * (k - 1) as f64 + rng.noise(0.003)
        };
        // time_per_batch = batch·k / speed_k = batch / (speed_1 · efficiency); the launch
        // times 2 warm-up batches and `number` timed ones.
        let per_batch = batch / (speed * efficiency);
        train.update((number + 2.0) * per_batch * (1.0 + rng.noise(0.007)));
        let mut e = base.clone();
        e.insert("repeat", devices as i64);
        e.insert(
            "devices",
            Value::List((0..k).map(|d| Value::Str(d.to_string())).collect()),
        );
        e.insert("vcd", device_list(k));
        e.insert("completed", true);
        let mut item = Object::new();
        item.insert("avg", efficiency);
        item.insert("max", efficiency);
        item.insert("min", efficiency);
        item.insert("range", 0i64);
        item.insert("sd", 0i64);
        item.insert("unit", "%");
        out.push(finish(rng, e, b, run, vendor, train.to_stage(), item));
    }
    out
}

fn write(path: &Path, text: &str, bytes: &mut usize) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    *bytes += text.len();
    std::fs::write(path, text)
}

fn run(o: &Options, jobs: &[u8], benches: &[Bench]) -> std::io::Result<(usize, usize, usize)> {
    let mut rng = Rng(SplitMix64::new(o.seed));
    let (mut files, mut entries, mut bytes) = (0, 0, 0);
    // Counted apart: `files` also numbers the per-test time stamps.
    let mut jobs_files = 0;
    let mut nan_left = o.nan_loss;
    for vendor in 0..o.vendors {
        let root = if o.vendors > 1 {
            o.out.join(format!("vendor{vendor:02}"))
        } else {
            o.out.clone()
        };
        // The jobs file the runs were made with, as the suite's run.py read it.
        std::fs::create_dir_all(&root)?;
        std::fs::write(root.join(format!("{}.json", o.suite)), jobs)?;
        jobs_files += 1;
        bytes += jobs.len();
        // Vendor speed 0.7…1.5 (the first at 1.0), and a fixed ±2% per GPU.
        let vendor_speed = if vendor == 0 {
            1.0
        } else {
            0.7 + 0.8 * rng.unit()
        };
        let gpu_speed: Vec<f64> = (0..o.gpus)
            .map(|_| 1.0 + rng.noise(0.01).clamp(-0.02, 0.02))
            .collect();
        // `appended`: each GPU's stream over every run, written once the runs are made.
        let mut appended: Vec<Vec<ReportEntry>> = (0..o.gpus).map(|_| Vec::new()).collect();
        for run in 0..o.runs {
            let run_speed = 1.0 + rng.noise(0.004);
            for (gpu, gpu_speed) in gpu_speed.iter().enumerate() {
                let mut stream = Vec::new();
                for b in benches.iter().filter(|b| !b.whole_machine || gpu == 0) {
                    let speed = b.speed * vendor_speed * gpu_speed * run_speed;
                    let made = if b.is_scaling() {
                        scaling_entries(&mut rng, b, speed, o.gpus, run, vendor)
                    } else {
                        vec![entry(&mut rng, b, speed, gpu, o.gpus, run, vendor)]
                    };
                    for mut e in made {
                        // Spread the NaN losses: one per (run, bench) from the last run back.
                        if nan_left > 0
                            && run + 1 == o.runs - (o.nan_loss - nan_left) % o.runs.max(1)
                            && gpu + 1 == o.gpus
                            && b.name == "reso"
                        {
                            if let Some(Value::List(l)) = e.fields.get("batch_loss").cloned() {
                                let mut l = l;
                                l[57] = Value::Float(f64::NAN);
                                e.fields.insert("batch_loss", Value::List(l));
                            }
                            nan_left -= 1;
                        }
                        entries += 1;
                        if o.layout == Layout::PerTest {
                            let ts = format!(
                                "20200106-{:02}{:02}{:02}-{:06}",
                                10 + run % 10,
                                gpu % 60,
                                files % 60,
                                files % 1_000_000
                            );
                            // D<vcd>: a whole-machine process saw every GPU (`D0,1,2,3`).
                            let vcd = e.fields.get("vcd").and_then(Value::as_str).unwrap_or("0");
                            let name = format!("{}.{}.R{run}.D{vcd}.{ts}.json", o.suite, b.name);
                            write(&root.join(name), &per_test_text(&e), &mut bytes)?;
                            files += 1;
                        } else {
                            stream.push(e);
                        }
                    }
                }
                match o.layout {
                    Layout::Legacy => {
                        let path = root
                            .join(format!("output{run}"))
                            .join(format!("{}_{gpu}.json", o.suite));
                        write(&path, &stream_text(&stream), &mut bytes)?;
                        files += 1;
                    }
                    Layout::Appended => appended[gpu].extend(stream),
                    Layout::PerTest => {}
                }
            }
        }
        if o.layout == Layout::Appended && o.runs > 0 {
            for (gpu, stream) in appended.iter().enumerate() {
                let path = root.join(format!("{}_{gpu}.json", o.suite));
                write(&path, &stream_text(stream), &mut bytes)?;
                files += 1;
            }
        }
    }
    Ok((files + jobs_files, entries, bytes))
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}");
            }
            eprintln!(
                "usage: gen_submission --out DIR [--vendors V] [--runs R] [--gpus G] [--suite NAME] [--jobs fast|baselines|old_baselines] [--layout legacy|appended|per-test] [--seed S] [--nan-loss K] [--numbers plain|repr]"
            );
            return ExitCode::from(2);
        }
    };
    let jobs_name = o.jobs.clone().unwrap_or_else(|| {
        let own = JobsFile::builtin_bytes(&o.suite).is_some();
        if own { o.suite.clone() } else { "fast".into() }
    });
    let (jobs, mut benches) = match benches(&jobs_name) {
        Ok(found) => found,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if o.repr_numbers {
        // Each bench in turn one of the shapes real losses take.
        let shapes = [
            LossShape::Tiny,
            LossShape::Negative,
            LossShape::Coarse,
            LossShape::Short,
            LossShape::Plain,
        ];
        for (i, b) in benches.iter_mut().enumerate() {
            b.shape = shapes[i % shapes.len()];
        }
    }
    // Never write into a folder that holds anything.
    if std::fs::read_dir(&o.out).is_ok_and(|mut d| d.next().is_some()) {
        eprintln!(
            "error: {}: exists and is not empty; not writing into it",
            o.out.display()
        );
        return ExitCode::from(2);
    }
    match run(&o, jobs, &benches) {
        Ok((files, entries, bytes)) => {
            eprintln!(
                "wrote {files} files, {entries} entries, {:.1} MB to {}",
                bytes as f64 / 1e6,
                o.out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {e}", o.out.display());
            ExitCode::from(2)
        }
    }
}
