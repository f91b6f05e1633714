//! The tch models: each builds with tiny sizes and trains (needs libtorch: see
//! runner/setup-libtorch.sh; `cargo test -p mlbench-runner --features tch`).
#![cfg(feature = "tch")]

use mlbench_runner::models::Models;
use mlbench_runner::{BenchArgs, BenchError, BenchFactory, DeviceSpec};
use mlbench_schema::value::Value;
use std::collections::{BTreeMap, BTreeSet};

const CPU: DeviceSpec = DeviceSpec::Cpu {
    index: 0,
    threads: 1,
};

fn args(batch_size: i64, extra: &[(&str, Value)]) -> BenchArgs {
    BenchArgs {
        batch_size,
        number: 1,
        repeat: 1,
        seed: 100,
        extra: extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    }
}

/// Each bench with sizes small enough for a debug build on one thread.
fn tiny(name: &str) -> BenchArgs {
    let i = Value::Int;
    match name {
        "toy_reg" => args(16, &[]),
        "toy_lstm" => args(
            1,
            &[
                ("samples", i(6)),
                ("length", i(12)),
                ("hidden", i(8)),
                ("dtype", "float32".into()),
            ],
        ),
        "vae" => args(4, &[("hidden", i(16)), ("latent", i(4))]),
        "convnet" | "convnet_fp16" => args(
            2,
            &[
                ("arch", "resnet18".into()),
                ("image_size", i(32)),
                ("num_classes", i(10)),
            ],
        ),
        // Whole-machine jobs: two simulated devices (the copy's `vcd`), 2 images per device.
        "convnet_distributed" | "convnet_distributed_fp16" => args(
            2,
            &[
                ("arch", "resnet18".into()),
                ("image_size", i(32)),
                ("num_classes", i(10)),
                ("vcd", "0,1".into()),
            ],
        ),
        "reso" => args(2, &[("upscale_factor", i(2)), ("crop_size", i(16))]),
        "dcgan" => args(
            2,
            &[
                ("nz", i(8)),
                ("ngf", i(4)),
                ("ndf", i(4)),
                ("imageSize", i(64)),
            ],
        ),
        "dcgan_all" => args(
            2,
            &[
                ("nz", i(8)),
                ("ngf", i(4)),
                ("ndf", i(4)),
                ("imageSize", i(64)),
                ("ngpu", i(2)),
                ("vcd", "0,1".into()),
            ],
        ),
        "wlm" | "wlmfp16" => args(
            2,
            &[
                ("emsize", i(8)),
                ("nhid", i(8)),
                ("bptt", i(5)),
                ("ntokens", i(50)),
                ("model", "GRU".into()),
            ],
        ),
        "recom" => args(
            16,
            &[
                ("users", i(30)),
                ("items", i(20)),
                ("factors", i(4)),
                ("layers", "16 8 4".into()),
                ("l", Value::Float(0.001)),
            ],
        ),
        // The smallest images the TransformerNet (a multiple of 4) and VGG's pools take.
        "fast_style" => args(2, &[("image_size", i(8)), ("style_size", i(8))]),
        "loader" => {
            let data = std::env::temp_dir().join("mlbench-loader-tiny");
            let data = Value::Str(data.display().to_string());
            args(
                2,
                &[
                    ("data", data),
                    ("images", i(6)),
                    ("crop_size", i(16)),
                    ("workers", i(1)),
                ],
            )
        }
        // 257 is the smallest input whose last feature map is 1 × 1.
        "ssd" => args(1, &[("image_size", i(257)), ("label_num", i(5))]),
        "translator" => args(
            2,
            &[
                ("hidden_size", i(8)),
                ("num_layers", i(3)),
                ("vocab_size", i(40)),
                ("max_length_train", i(6)),
            ],
        ),
        "cart" => args(1, &[("gamma", Value::Float(0.99))]),
        // Frames stay 84×84 (the trunk's 32·7·7 needs them): 2 environments × 8 steps.
        "atari" => args(
            1,
            &[
                ("algo", "ppo".into()),
                ("num_processes", i(2)),
                ("num_steps", i(8)),
                ("num_mini_batch", i(2)),
                ("ppo_epoch", i(2)),
                ("clip_param", Value::Float(0.1)),
                ("use_gae", Value::Bool(true)),
                ("use_linear_lr_decay", Value::Bool(true)),
            ],
        ),
        other => panic!("no tiny configuration for {other}"),
    }
}

#[test]
fn every_model_trains_three_steps_with_finite_losses() {
    tch::set_num_threads(1);
    for name in Models::names() {
        let mut bench = Models
            .create(name, &tiny(name), CPU)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for step in 0..3 {
            let loss = bench.step().unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(loss.is_finite(), "{name}: step {step} loss {loss}");
        }
        bench.sync();
    }
}

#[test]
fn wlm_lstm_and_float64_lstm_train() {
    let mut a = tiny("wlm");
    a.extra.insert("model".into(), "LSTM".into());
    let mut bench = Models.create("wlm", &a, CPU).unwrap();
    assert!(bench.step().unwrap().is_finite());
    assert!(bench.step().unwrap().is_finite());

    let mut a = tiny("toy_lstm");
    a.extra.insert("dtype".into(), "float64".into());
    let mut bench = Models.create("toy_lstm", &a, CPU).unwrap();
    assert!(bench.step().unwrap().is_finite());
}

/// L-BFGS as the suite's script: each step runs up to 20 evaluations, so a few steps fit
/// the sine waves (train.py's loss falls from ~0.5 to ~1e-3 within 10 steps in float64).
#[test]
fn toy_lstm_lbfgs_fits_the_waves_in_a_few_steps() {
    let i = Value::Int;
    let a = args(
        1,
        &[
            ("samples", i(8)),
            ("length", i(60)),
            ("hidden", i(12)),
            ("dtype", "float64".into()),
        ],
    );
    let mut bench = Models.create("toy_lstm", &a, CPU).unwrap();
    let losses: Vec<f64> = (0..6).map(|_| bench.step().unwrap()).collect();
    assert!(losses.iter().all(|l| l.is_finite()), "{losses:?}");
    assert!(
        losses[5] < losses[0] / 20.0,
        "L-BFGS should cut the loss twentyfold in 6 steps: {losses:?}"
    );
}

#[test]
fn toy_reg_loss_decreases_over_200_steps() {
    let mut bench = Models.create("toy_reg", &args(64, &[]), CPU).unwrap();
    let losses: Vec<f64> = (0..200).map(|_| bench.step().unwrap()).collect();
    assert!(losses.iter().all(|l| l.is_finite()));
    let first = losses[..10].iter().sum::<f64>() / 10.0;
    let last = losses[190..].iter().sum::<f64>() / 10.0;
    assert!(
        last < first / 10.0,
        "first 10 average {first}, last 10 average {last}"
    );
}

#[test]
fn unknown_name_is_unknown() {
    match Models.create("no_such_bench", &args(1, &[]), CPU) {
        Err(BenchError::Unknown(name)) => assert_eq!(name, "no_such_bench"),
        Err(other) => panic!("wrong error {other}"),
        Ok(_) => panic!("built an unknown bench"),
    }
    assert!(Models.source("no_such_bench").is_none());
}

#[test]
fn fp16_on_cpu_is_a_device_error_and_bad_arguments_are_argument_errors() {
    let is_device = |r: Result<_, BenchError>| matches!(r, Err(BenchError::Device { .. }));
    let is_argument = |r: Result<_, BenchError>| matches!(r, Err(BenchError::Argument { .. }));
    let half = args(2, &[("half", Value::Bool(true))]);
    assert!(is_device(Models.create("convnet_fp16", &half, CPU)));
    let mut half_whole = tiny("convnet_distributed_fp16");
    half_whole
        .extra
        .insert("half".into(), Value::Str(String::new()));
    assert!(is_device(Models.create(
        "convnet_distributed_fp16",
        &half_whole,
        CPU
    )));
    let fp16 = args(2, &[("fp16", Value::Str(String::new()))]);
    assert!(is_device(Models.create("wlmfp16", &fp16, CPU)));
    let dtype = args(1, &[("dtype", "float16".into())]);
    assert!(is_device(Models.create("toy_lstm", &dtype, CPU)));
    let arch = args(2, &[("arch", "densenet121".into())]);
    assert!(is_argument(Models.create("convnet", &arch, CPU)));
    let model = args(2, &[("model", "RNN_TANH".into())]);
    assert!(is_argument(Models.create("wlm", &model, CPU)));
    let emsize = args(2, &[("emsize", "many".into())]);
    assert!(is_argument(Models.create("wlm", &emsize, CPU)));
}

#[test]
fn bfloat16_trains_on_cpu() {
    let mut a = tiny("vae");
    a.extra.insert("dtype".into(), "bfloat16".into());
    let mut bench = Models.create("vae", &a, CPU).unwrap();
    assert!(bench.step().unwrap().is_finite());
}

#[test]
fn missing_cuda_device_is_a_device_error() {
    if tch::Cuda::device_count() > 7 {
        return;
    }
    let r = Models.create("toy_reg", &args(8, &[]), DeviceSpec::Cuda(7));
    assert!(matches!(r, Err(BenchError::Device { .. })));
}

#[test]
fn sources_are_non_empty_and_differ_between_models() {
    let mut seen: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for name in Models::names() {
        let source = Models
            .source(name)
            .unwrap_or_else(|| panic!("{name}: no source"));
        assert!(source.contains("fn build"), "{name}");
        seen.entry(source).or_default().insert(name);
    }
    // The fp16 jobs share their model with the fp32 ones; all others differ.
    let groups: BTreeSet<Vec<&str>> = seen.values().map(|s| s.iter().copied().collect()).collect();
    // Every bench is its own group but the three fp16 ones (counted so that adding a model
    // needs no edit here).
    assert_eq!(groups.len(), Models::names().count() - 3, "{groups:?}");
    assert!(groups.contains(&vec!["wlm", "wlmfp16"]));
    assert!(groups.contains(&vec!["convnet", "convnet_fp16"]));
    assert!(groups.contains(&vec!["convnet_distributed", "convnet_distributed_fp16"]));
}

#[test]
fn device_names() {
    assert!(!Models.device_name(CPU).is_empty());
    assert_eq!(Models.device_name(DeviceSpec::Cuda(3)), "cuda:3");
}

#[test]
fn a_bench_steps_from_another_thread() {
    let device = DeviceSpec::Cpu {
        index: 1,
        threads: 1,
    };
    let mut bench = Models.create("toy_reg", &args(8, &[]), device).unwrap();
    let loss = std::thread::spawn(move || bench.step().unwrap())
        .join()
        .unwrap();
    assert!(loss.is_finite());
}

/// Every job of the shipped `runner.json` with its real arguments as the planner gives them
/// (short flags, `--dtype`, `--arch`, sizes), only the batch made small: builds and takes
/// one step on CPU, the fp16 jobs are refused there. `--ignored`: a few minutes (toy_lstm's
/// one L-BFGS step is 20 passes over 97 waves of 999 steps).
#[test]
#[ignore]
fn runner_jobs_build_and_step_on_cpu_with_their_arguments() {
    use mlbench_runner::{DeviceSet, PlanOptions, plan};
    let jobs = mlbench_schema::jobs::JobsFile::builtin("runner").unwrap();
    let options = PlanOptions {
        jobs_name: "runner".into(),
        names: Vec::new(),
        devices: DeviceSet::cpu(2, 1).unwrap(),
        out: std::path::PathBuf::from("/nonexistent"),
        run: 0,
        env: [("DATA_DIRECTORY".to_owned(), "/data".to_owned())].into(),
    };
    let plan = plan(&jobs, &options).unwrap();
    assert_eq!(plan.executions.len(), 10);
    for execution in &plan.executions {
        let name = execution.name.as_str();
        let copy = &execution.copies[0];
        let mut a = copy.args.clone();
        if name != "recom" {
            a.batch_size = a.batch_size.min(2);
        }
        let start = std::time::Instant::now();
        let created = Models.create(name, &a, copy.device);
        if name.ends_with("fp16") {
            assert!(
                matches!(created, Err(BenchError::Device { .. })),
                "{name}: float16 must be refused on CPU"
            );
            continue;
        }
        let mut bench = created.unwrap_or_else(|e| panic!("{name}: {e}"));
        let loss = bench.step().unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("{name}: loss {loss:.4} in {:.2?}", start.elapsed());
        assert!(loss.is_finite(), "{name}");
    }
}

#[test]
fn wlm_times_one_observation_fewer_than_repeat() {
    // word_language_model main.py loops `range(1, args.repeat)` (spec §5.3).
    assert_eq!(Models.observations("wlm", 15), 14);
    assert_eq!(Models.observations("wlmfp16", 15), 14);
    assert_eq!(Models.observations("toy_reg", 20), 20);
    assert_eq!(Models.observations("convnet", 15), 15);
}

#[test]
fn every_job_of_the_shipped_runner_suite_has_a_model() {
    let jobs = mlbench_schema::jobs::JobsFile::builtin("runner").unwrap();
    let names: Vec<&str> = Models::names().collect();
    for job in &jobs.jobs {
        assert!(names.contains(&job.name.as_str()), "{}", job.name);
        assert!(Models.source(&job.name).is_some(), "{}", job.name);
    }
    assert_eq!(jobs.jobs.len(), 10);
}

/// conv_distributed.py and dcgan's main.py record, and count items by, the per-device batch
/// times the devices; a bad `--ngpu` or `vcd` is the job's argument error.
#[test]
fn whole_machine_jobs_record_the_batch_of_every_device() {
    let mut four = tiny("convnet_distributed");
    four.extra.insert("vcd".into(), "0,1,2,3".into());
    assert_eq!(Models.batch_size("convnet_distributed", &four), 8);
    assert_eq!(Models.batch_size("convnet_distributed_fp16", &four), 8);
    assert_eq!(Models.batch_size("dcgan_all", &tiny("dcgan_all")), 4);
    let mut one = tiny("dcgan_all");
    one.extra.insert("ngpu".into(), Value::Int(1));
    assert_eq!(Models.batch_size("dcgan_all", &one), 2);
    assert_eq!(Models.batch_size("convnet", &tiny("convnet")), 2);
    assert_eq!(Models.batch_size("dcgan", &tiny("dcgan")), 2);

    let is_argument = |r: Result<_, BenchError>| matches!(r, Err(BenchError::Argument { .. }));
    let mut too_many = tiny("dcgan_all");
    too_many.extra.insert("ngpu".into(), Value::Int(3));
    assert!(is_argument(Models.create("dcgan_all", &too_many, CPU)));
    let mut bad = tiny("convnet_distributed");
    bad.extra.insert("vcd".into(), "0,,1".into());
    assert!(is_argument(Models.create("convnet_distributed", &bad, CPU)));
}

/// One device of a whole-machine job (`vcd` "0", `--ngpu 1`) is the plain model with one
/// replica: it trains too.
#[test]
fn whole_machine_jobs_train_on_one_device() {
    for name in ["convnet_distributed", "dcgan_all"] {
        let mut a = tiny(name);
        a.extra.insert("vcd".into(), "0".into());
        a.extra.remove("ngpu");
        let mut bench = Models.create(name, &a, CPU).unwrap();
        assert!(bench.step().unwrap().is_finite(), "{name}");
    }
}
