//! Writes a realistic synthetic submission in the suite's own format (E2 legacy streams,
//! or E3 per-test files), deterministic for given arguments.
//!
//! cargo run -p mlbench-schema --example gen_submission -- --out DIR [--vendors V]
//!     [--runs R] [--gpus G] [--suite NAME] [--layout legacy|per-test] [--seed S]
//!     [--nan-loss K]

use mlbench_schema::timing::{StatStream, train_item};
use mlbench_schema::unique_id::{EXCLUDED_FINAL, script_version, unique_id};
use mlbench_schema::writer::{per_test_text, stream_text};
use mlbench_schema::{Object, ReportEntry, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The "fast" profile (92b03cb): bench, script, batch, repeat, number, RTX throughput,
/// whole machine.
const BENCHES: &[(&str, &str, i64, i64, i64, f64, bool)] = &[
    (
        "toy_reg",
        "regression/polynome/pytorch/main.py",
        256,
        20,
        100,
        368820.18,
        false,
    ),
    (
        "toy_lstm",
        "time_sequence_prediction/lstm/pytorch/train.py",
        1,
        10,
        5,
        2.65,
        false,
    ),
    (
        "vae",
        "variational_auto_encoder/auto_encoding_variational_bayes/pytorch/main.py",
        128,
        50,
        30,
        7972.69,
        false,
    ),
    (
        "loader",
        "image_loading/loader/pytorch/loaders.py",
        256,
        15,
        5,
        1200.0,
        false,
    ),
    (
        "reso",
        "super_resolution/subpixel_convolution/pytorch/main.py",
        64,
        25,
        5,
        138.34,
        false,
    ),
    (
        "translator",
        "natural_language_processing/rnn_translator/pytorch/train.py",
        64,
        15,
        10,
        223.47,
        false,
    ),
    (
        "wlm",
        "natural_language_processing/word_language_model/pytorch/main.py",
        64,
        15,
        5,
        1440.87,
        false,
    ),
    (
        "wlmfp16",
        "natural_language_processing/word_language_model/pytorch/main_fp16_optimizer.py",
        128,
        15,
        5,
        3793.37,
        false,
    ),
    (
        "cart",
        "reinforcement/cart_pole/pytorch/reinforce.py",
        1,
        200,
        500,
        2000.0,
        false,
    ),
    (
        "atari",
        "reinforcement/atari/pytorch/main.py",
        16,
        15,
        5,
        5.41,
        false,
    ),
    (
        "ssd",
        "object_detection/single_stage_detector/pytorch/train.py",
        128,
        15,
        5,
        59.96,
        false,
    ),
    (
        "fast_style",
        "fast_neural_style/neural_style/pytorch/neural_style.py",
        128,
        25,
        5,
        156.75,
        false,
    ),
    (
        "dcgan",
        "generative_adversarial_networks/dcgan/pytorch/main.py",
        128,
        25,
        5,
        115.52,
        false,
    ),
    (
        "convnet",
        "image_classification/convnets/pytorch/conv_simple.py",
        64,
        15,
        5,
        178.76,
        false,
    ),
    (
        "convnet_fp16",
        "image_classification/convnets/pytorch/conv_simple.py",
        128,
        15,
        5,
        262.56,
        false,
    ),
    (
        "recom",
        "recommendation/neural_collaborative_filtering/pytorch/ncf.py",
        2048,
        25,
        100,
        20650.19,
        false,
    ),
    (
        "convnet_distributed",
        "image_classification/convnets/pytorch/conv_distributed.py",
        64,
        15,
        5,
        276.1,
        true,
    ),
    (
        "convnet_distributed_fp16",
        "image_classification/convnets/pytorch/conv_distributed.py",
        128,
        15,
        5,
        330.41,
        true,
    ),
    (
        "dcgan_all",
        "generative_adversarial_networks/dcgan/pytorch/main.py",
        128,
        25,
        5,
        139.29,
        true,
    ),
];

/// splitmix64: small, deterministic, good enough for noise.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
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
    per_test: bool,
    seed: u64,
    nan_loss: usize,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        out: PathBuf::new(),
        vendors: 1,
        runs: 5,
        gpus: 2,
        suite: "fast".into(),
        per_test: false,
        seed: 1,
        nan_loss: 0,
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
            "--seed" => o.seed = number(value()?)? as u64,
            "--nan-loss" => o.nan_loss = number(value()?)?,
            "--layout" => {
                o.per_test = match value()?.as_str() {
                    "legacy" => false,
                    "per-test" => true,
                    other => return Err(format!("--layout: `{other}` is not legacy or per-test")),
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

/// One entry of `bench` with throughput around `speed`.
fn entry(
    rng: &mut Rng,
    b: &(&str, &str, i64, i64, i64, f64, bool),
    speed: f64,
    gpu: usize,
    gpus: usize,
    run: usize,
    vendor: usize,
) -> ReportEntry {
    let (name, script, batch, repeat, number, _, all) = *b;
    let mut args = Object::new();
    args.insert("batch_size", batch);
    args.insert("cuda", name != "cart");
    args.insert("workers", if name == "loader" { 8i64 } else { 4 });
    args.insert("devices", 1i64);
    args.insert("repeat", repeat);
    args.insert("number", number);
    let vcd = if all {
        (0..gpus)
            .map(|g| g.to_string())
            .collect::<Vec<_>>()
            .join(",")
    } else {
        gpu.to_string()
    };
    args.insert(
        "jr_id",
        if all {
            "0".to_string()
        } else {
            gpu.to_string()
        },
    );
    args.insert("vcd", vcd);
    args.insert("cpu_cores", 10i64);
    match name {
        "wlm" | "wlmfp16" => {
            args.insert("model", "GRU");
            args.insert("emsize", 656i64);
            args.insert("nhid", 656i64);
        }
        "toy_lstm" => args.insert("dtype", "float32"),
        "convnet" | "convnet_fp16" | "convnet_distributed" | "convnet_distributed_fp16" => {
            args.insert("arch", "resnet101");
            args.insert("lr", 0.1);
            if name.ends_with("fp16") {
                args.insert("half", true);
            }
        }
        "atari" => args.insert("num_processes", 16i64),
        "recom" => args.insert("layers", "256 256 128 64"),
        _ => {}
    }
    args.insert("version", script_version(script.as_bytes()));
    let id = unique_id(args.iter(), EXCLUDED_FINAL);
    // Time of `number` batches: items / throughput, with ~0.7% noise per observation.
    let items = (batch * number) as f64;
    let mut train = StatStream::new(10);
    for _ in 0..repeat {
        train.update(items / speed * (1.0 + rng.noise(0.007)));
    }
    let mut e = args;
    e.insert("name", name);
    e.insert("unique_id", id);
    e.insert("run_id", run.to_string());
    if name != "cart" {
        e.insert("gpu", "TITAN RTX");
    }
    e.insert("hostname", format!("vendor{vendor:02}-node"));
    let start = 6.9 + rng.noise(0.05);
    let losses: Vec<f64> = (0..100)
        .map(|i| ((start * (-(i as f64) / 60.0).exp() + 1.0 + rng.noise(0.05)) as f32) as f64)
        .collect();
    e.insert("batch_loss", Value::from(losses));
    e.insert("epoch_loss", Value::List(vec![]));
    e.insert("metrics", Value::Object(Object::new()));
    e.insert("train", Value::Object(train.to_stage()));
    e.insert(
        "train_item",
        Value::Object(train_item(batch, number, &train)),
    );
    ReportEntry::new(e)
}

fn write(path: &Path, text: &str, bytes: &mut usize) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    *bytes += text.len();
    std::fs::write(path, text)
}

fn run(o: &Options) -> std::io::Result<(usize, usize, usize)> {
    let mut rng = Rng(o.seed);
    let (mut files, mut entries, mut bytes) = (0, 0, 0);
    let mut nan_left = o.nan_loss;
    for vendor in 0..o.vendors {
        let root = if o.vendors > 1 {
            o.out.join(format!("vendor{vendor:02}"))
        } else {
            o.out.clone()
        };
        // Vendor speed 0.7…1.5 (the first at 1.0), and a fixed ±2% per GPU.
        let vendor_speed = if vendor == 0 {
            1.0
        } else {
            0.7 + 0.8 * rng.unit()
        };
        let gpu_speed: Vec<f64> = (0..o.gpus)
            .map(|_| 1.0 + rng.noise(0.01).clamp(-0.02, 0.02))
            .collect();
        for run in 0..o.runs {
            let run_speed = 1.0 + rng.noise(0.004);
            for (gpu, gpu_speed) in gpu_speed.iter().enumerate() {
                let mut stream = Vec::new();
                for b in BENCHES.iter().filter(|b| !b.6 || gpu == 0) {
                    let speed = b.5 * vendor_speed * gpu_speed * run_speed;
                    let mut e = entry(&mut rng, b, speed, gpu, o.gpus, run, vendor);
                    // Spread the NaN losses: one per (run, bench) from the last run back.
                    if nan_left > 0
                        && run + 1 == o.runs - (o.nan_loss - nan_left) % o.runs.max(1)
                        && gpu + 1 == o.gpus
                        && b.0 == "reso"
                    {
                        if let Some(Value::List(l)) = e.fields.get("batch_loss").cloned() {
                            let mut l = l;
                            l[57] = Value::Float(f64::NAN);
                            e.fields.insert("batch_loss", Value::List(l));
                        }
                        nan_left -= 1;
                    }
                    entries += 1;
                    if o.per_test {
                        let ts = format!(
                            "20200106-{:02}{:02}{:02}-{:06}",
                            10 + run % 10,
                            gpu % 60,
                            files % 60,
                            files % 1_000_000
                        );
                        let path =
                            root.join(format!("{}.{}.R{run}.D{gpu}.{ts}.json", o.suite, b.0));
                        write(&path, &per_test_text(&e), &mut bytes)?;
                        files += 1;
                    } else {
                        stream.push(e);
                    }
                }
                if !o.per_test {
                    let path = root
                        .join(format!("output{run}"))
                        .join(format!("{}_{gpu}.json", o.suite));
                    write(&path, &stream_text(&stream), &mut bytes)?;
                    files += 1;
                }
            }
        }
    }
    Ok((files, entries, bytes))
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}");
            }
            eprintln!(
                "usage: gen_submission --out DIR [--vendors V] [--runs R] [--gpus G] [--suite NAME] [--layout legacy|per-test] [--seed S] [--nan-loss K]"
            );
            return ExitCode::from(2);
        }
    };
    // Never write into a folder that holds anything.
    if std::fs::read_dir(&o.out).is_ok_and(|mut d| d.next().is_some()) {
        eprintln!(
            "error: {}: exists and is not empty; not writing into it",
            o.out.display()
        );
        return ExitCode::from(2);
    }
    match run(&o) {
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
