//! The tch models: each builds with tiny sizes and trains (needs libtorch: see
//! runner/setup-libtorch.sh; `cargo test -p mlbench-runner --features tch`).
#![cfg(feature = "tch")]

use mlbench_runner::bench::DataSource;
use mlbench_runner::models::Models;
use mlbench_runner::{Bench, BenchArgs, BenchError, BenchFactory, DeviceSpec, Logs};
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

/// Each bench with sizes small enough for a debug build on one thread, its batches made
/// in memory where its script reads files (`--synthetic-data`; loader makes its files).
fn tiny(name: &str) -> BenchArgs {
    let mut a = tiny_sizes(name);
    if mlbench_datasets::sets::reads_files(name) && name != "loader" {
        a.extra.insert("synthetic_data".into(), Value::Bool(true));
    }
    a
}

fn tiny_sizes(name: &str) -> BenchArgs {
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

/// A step's logged loss (the step must log one).
fn loss(bench: &mut Box<dyn Bench>) -> f64 {
    let logs = bench.step().unwrap();
    logs.loss
        .unwrap_or_else(|| panic!("no loss logged: {logs:?}"))
}

/// What each script logs per step (its `log_batch_loss`, its `log_metric` names): dcgan's
/// main.py logs three metrics and no loss, loaders.py and the translator's trainer nothing,
/// atari's main.py the action loss and `value_loss`, every other script its loss.
fn logged_per_step(name: &str) -> (bool, Vec<&'static str>) {
    match name {
        "dcgan" | "dcgan_all" => (false, vec!["errD_real", "errG_fake", "errG"]),
        "loader" | "translator" => (false, vec![]),
        "atari" => (true, vec!["value_loss"]),
        _ => (true, vec![]),
    }
}

#[test]
fn every_model_trains_an_observation_logging_what_its_script_logs() {
    tch::set_num_threads(1);
    // A sweep's ranks train inside `scaling`'s own test below.
    for name in Models::names().filter(|n| !mlbench_runner::scaling::is_sweep(n)) {
        let mut bench = Models
            .create(name, &tiny(name), CPU)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        bench.begin_observation(0).unwrap();
        let (loss, metrics) = logged_per_step(name);
        for step in 0..3 {
            let logs = bench.step().unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(logs.first_nonfinite(), None, "{name}: step {step} {logs:?}");
            assert_eq!(logs.loss.is_some(), loss, "{name}: {logs:?}");
            let names: Vec<&str> = logs.metrics.iter().map(|m| m.0).collect();
            assert_eq!(names, metrics, "{name}");
            // conv_simple.py and conv_distributed.py time `loading` and `compute` inside
            // each step; ncf.py times `loading_data` once, before its loop (filed with the
            // first step).
            let stages: Vec<&str> = logs.stages.iter().map(|m| m.0).collect();
            let want: &[&str] = match (name, step) {
                (
                    "convnet" | "convnet_fp16" | "convnet_distributed" | "convnet_distributed_fp16",
                    _,
                ) => &["loading", "compute"],
                ("recom", 0) => &["loading_data"],
                _ => &[],
            };
            assert_eq!(stages, want, "{name}");
            assert!(logs.stages.iter().all(|(_, t)| *t >= 0.0), "{name}");
            assert!(logs.epoch_loss.is_none(), "{name}");
        }
        let end = bench.end_observation(0).unwrap();
        bench.sync();
        let after = bench.after_observation(0, 1.0).unwrap();
        for logs in [&end, &after] {
            assert_eq!(logs.first_nonfinite(), None, "{name}: {logs:?}");
            assert_eq!(logs.loss, None, "{name}");
        }
        // The epoch losses and the metrics the scripts log once an observation.
        let epoch_loss = match name {
            "reso" | "translator" | "fast_style" => end.epoch_loss,
            "vae" | "recom" => after.epoch_loss,
            _ => {
                assert_eq!((end.epoch_loss, after.epoch_loss), (None, None), "{name}");
                None
            }
        };
        if matches!(name, "reso" | "translator" | "fast_style" | "vae" | "recom") {
            assert!(epoch_loss.is_some(), "{name}: no epoch loss");
        }
        let after_metrics: Vec<&str> = after.metrics.iter().map(|m| m.0).collect();
        let after_stages: Vec<&str> = after.stages.iter().map(|m| m.0).collect();
        match name {
            "wlm" | "wlmfp16" => {
                assert_eq!(after_metrics, ["val_loss"], "{name}");
                assert_eq!(after_stages, ["eval", "all"], "{name}");
            }
            "reso" => assert_eq!((after_metrics, after_stages), (vec!["psnr"], vec![])),
            _ => assert!(
                after_metrics.is_empty() && after_stages.is_empty(),
                "{name}"
            ),
        }
    }
}

/// Σ of the steps' losses is vae's `train_loss` (main.py:130,136), reso's `epoch_loss`
/// (main.py:55-58,95) and fast_style's (neural_style.py:104-105); recom's is
/// `losses.sum`, Σ loss × batch (ncf.py:186,192).
#[test]
fn epoch_losses_are_the_scripts_sums_of_the_steps_losses() {
    for (name, per_item) in [
        ("vae", 1.0),
        ("reso", 1.0),
        ("fast_style", 1.0),
        ("recom", 16.0),
    ] {
        let mut bench = Models.create(name, &tiny(name), CPU).unwrap();
        for r in 0..2 {
            bench.begin_observation(r).unwrap();
            let losses: Vec<f64> = (0..3).map(|_| loss(&mut bench)).collect();
            let end = bench.end_observation(r).unwrap();
            let after = bench.after_observation(r, 0.5).unwrap();
            let logged = end.epoch_loss.or(after.epoch_loss).unwrap();
            let want: f64 = losses.iter().map(|l| l * per_item).sum();
            assert!(
                (logged - want).abs() <= 1e-9 * want.abs(),
                "{name}: {logged} vs {want}"
            );
        }
    }
    assert_eq!(tiny("recom").batch_size, 16);
}

/// ncf.py's `chrono.time('loading_data', skip_obs=0)`: one observation, the synthetic
/// training set's construction, kept (not dropped as the first 10 of other stages are);
/// logged once, whatever the observations after.
#[test]
fn recom_records_its_loading_data_once_and_keeps_it() {
    use mlbench_runner::timing::{LoopSize, measure};
    let mut bench = Models.create("recom", &tiny("recom"), CPU).unwrap();
    assert_eq!(bench.skip_obs("loading_data"), 0);
    assert_eq!(bench.skip_obs("train"), mlbench_runner::timing::SKIP_OBS);
    let mut clock = mlbench_runner::ScriptedClock::new(vec![0.5; 3]);
    let size = LoopSize {
        batch_size: 16,
        number: 2,
        repeat: 3,
    };
    let m = measure(bench.as_mut(), &mut clock, size, &mut |_, _, _| {}).unwrap();
    let stage = m.stages["loading_data"].to_stage();
    assert_eq!(stage.get("count"), Some(&Value::Int(1)), "{stage:?}");
    let avg = stage.get("avg").and_then(Value::as_f64).unwrap();
    assert!(avg > 0.0 && avg.is_finite(), "{avg}");
    assert_eq!(m.stages.len(), 1);
    assert_eq!(m.batch_loss.len(), 6);
}

/// The scripts that load a fresh batch each step, their loaders with worker threads (the
/// jobs' `--workers 8`; ssd's 4 whatever it is given), over two observations (an iterator
/// started and stopped in each): every step trains and logs what its script logs. (That
/// each step takes a batch of its own, and the same with threads or without: each model's
/// and `host_loader`'s tests.)
#[test]
fn loaders_with_worker_threads_train_observation_after_observation() {
    for name in ["dcgan", "dcgan_all", "fast_style", "reso", "ssd", "recom"] {
        let mut a = tiny(name);
        a.extra.insert("workers".into(), Value::Int(2));
        let mut bench = Models.create(name, &a, CPU).unwrap();
        for r in 0..2 {
            bench.begin_observation(r).unwrap();
            for _ in 0..2 {
                let logs = bench.step().unwrap();
                assert_eq!(logs.first_nonfinite(), None, "{name}: {logs:?}");
                assert_eq!(logs.loss.is_some(), logged_per_step(name).0, "{name}");
            }
            let end = bench.end_observation(r).unwrap();
            assert_eq!(end.first_nonfinite(), None, "{name}");
        }
    }
}

#[test]
fn wlm_lstm_and_float64_lstm_train() {
    let mut a = tiny("wlm");
    a.extra.insert("model".into(), "LSTM".into());
    let mut bench = Models.create("wlm", &a, CPU).unwrap();
    assert!(loss(&mut bench).is_finite());
    assert!(loss(&mut bench).is_finite());

    let mut a = tiny("toy_lstm");
    a.extra.insert("dtype".into(), "float64".into());
    let mut bench = Models.create("toy_lstm", &a, CPU).unwrap();
    assert!(loss(&mut bench).is_finite());
}

/// SGD at lr 0.01 as the suite's script: one evaluation a step, so the loss falls slowly
/// (the suite's run on CPU: 0.50 → 0.49 over its 50 steps; L-BFGS took it to 6e-6).
#[test]
fn toy_lstm_sgd_moves_the_loss_slowly() {
    let i = Value::Int;
    let a = args(
        1,
        &[
            ("samples", i(8)),
            ("length", i(60)),
            ("hidden", i(12)),
            ("dtype", "float64".into()),
            ("synthetic_data", Value::Bool(true)),
        ],
    );
    let mut bench = Models.create("toy_lstm", &a, CPU).unwrap();
    let losses: Vec<f64> = (0..6).map(|_| loss(&mut bench)).collect();
    assert!(losses.iter().all(|l| l.is_finite()), "{losses:?}");
    assert!(
        losses[5] < losses[0] && losses[5] > losses[0] / 2.0,
        "six SGD steps of lr 0.01 lower the loss, by less than half: {losses:?}"
    );
}

#[test]
fn toy_reg_loss_decreases_over_1000_steps() {
    let mut bench = Models.create("toy_reg", &args(64, &[]), CPU).unwrap();
    let losses: Vec<f64> = (0..1000).map(|_| loss(&mut bench)).collect();
    assert!(losses.iter().all(|l| l.is_finite()));
    let first = losses[..10].iter().sum::<f64>() / 10.0;
    let last = losses[990..].iter().sum::<f64>() / 10.0;
    // At the script's lr 0.01 the fit is slow (the suite's own run: 0.06–0.44 → 0.03–0.28
    // over its steps); the update itself is checked by hand in toy_reg.rs. The polynomial
    // is random: the global generator is shared by the tests running beside this one, so
    // the seed does not fix it. Over 40 seeds the last/first ratio after 200 steps reached
    // 0.90 (this test failed in CI at 0.78); after 1000 steps at most 0.56.
    assert!(
        last < first * 0.75,
        "first 10 average {first}, last 10 average {last}"
    );
}

/// convnet's labels are random and every batch is fresh, so nothing can be learnt: its
/// loss stays near chance, ln 1000 ≈ 6.91, as the suite's does (6.7–7.1 over its first
/// steps). Batches that were the previous one shifted by one value (their labels nearly
/// the same) let the model memorise them: the loss fell to 3.5–4.0 within 24 steps.
#[test]
fn convnet_loss_stays_near_chance_on_fresh_random_labels() {
    let i = Value::Int;
    let extra = [
        ("arch", "resnet18".into()),
        ("image_size", i(32)),
        ("num_classes", i(1000)),
    ];
    let mut a = args(16, &extra);
    a.extra.insert("synthetic_data".into(), Value::Bool(true));
    let mut bench = Models.create("convnet", &a, CPU).unwrap();
    let losses: Vec<f64> = (0..30).map(|_| loss(&mut bench)).collect();
    let last = losses[20..].iter().sum::<f64>() / 10.0;
    let chance = 1000f64.ln();
    assert!(last > chance - 1.0, "last 10 average {last}: {losses:?}");
}

/// convnet reads the job's data folder as conv_simple.py's DataLoader does, step by step
/// (without its files a step fails, naming one); a folder that is not there is an argument error naming the
/// path and the command that makes it; entries say whether the data were files.
#[test]
fn convnet_reads_its_image_folder_and_says_what_is_missing() {
    use mlbench_datasets::images::{ImageFolder, fake_imagenet};
    let tmp = tempfile::tempdir().unwrap();
    fake_imagenet::prepare(tmp.path(), 3, mlbench_datasets::Scale::Smoke, false).unwrap();
    let train = tmp.path().join(fake_imagenet::TRAIN);
    let i = Value::Int;
    let data = Value::Str(train.display().to_string());
    let extra = [
        ("arch", "resnet18".into()),
        ("image_size", i(32)),
        ("data", data),
    ];
    let mut with_data = args(2, &extra);
    with_data.extra.insert("num_classes".into(), i(10));
    assert_eq!(Models.data_source("convnet", &with_data), DataSource::Files);
    let synthetic = Models.data_source("convnet", &tiny("convnet"));
    assert_eq!(synthetic, DataSource::Synthetic);
    let mut bench = Models.create("convnet", &with_data, CPU).unwrap();
    for _ in 0..3 {
        assert!(loss(&mut bench).is_finite());
    }
    // A folder that is not there names itself and the command that makes it.
    let mut missing = with_data.clone();
    let gone = tmp.path().join("nowhere").display().to_string();
    missing
        .extra
        .insert("data".into(), Value::Str(gone.clone()));
    let err = Models
        .create("convnet", &missing, CPU)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains(&gone) && err.contains("mlbench data prepare"),
        "{err}"
    );
    // More classes on disk than the model has outputs: refused, not a crash in a step.
    let mut few = with_data.clone();
    few.extra.insert("num_classes".into(), i(1));
    let err = Models
        .create("convnet", &few, CPU)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("more than --num_classes 1"), "{err}");
    // The steps read the files: with them gone, the next step fails naming one.
    let folder = ImageFolder::open(&train).unwrap();
    for (path, _) in &folder.samples {
        std::fs::remove_file(path).unwrap();
    }
    let err = bench
        .step()
        .expect_err("a step without its files")
        .to_string();
    assert!(err.contains(&train.display().to_string()), "{err}");
}

/// Where each bench's batches come from: as its script where the script makes them
/// (toy_reg, cart, atari); the files where it reads them, unless `--synthetic-data` marks
/// the copy (then `synthetic_data` goes into its entries).
#[test]
fn data_sources_follow_the_scripts_and_the_flag() {
    let plain = |_: &str| args(2, &[]);
    for name in ["toy_reg", "cart", "atari", "scaling"] {
        assert_eq!(
            Models.data_source(name, &plain(name)),
            DataSource::Generated
        );
    }
    for name in ["toy_reg", "cart", "atari"] {
        assert_eq!(Models.data_source(name, &tiny(name)), DataSource::Generated);
    }
    for name in [
        "convnet",
        "dcgan_all",
        "recom",
        "ssd",
        "toy_lstm",
        "translator",
        "vae",
        "wlm",
    ] {
        assert_eq!(
            Models.data_source(name, &plain(name)),
            DataSource::Files,
            "{name}"
        );
        assert_eq!(Models.data_source(name, &tiny(name)), DataSource::Synthetic);
    }
}

/// Without `--synthetic-data` a bench that reads files needs them: a job that names no
/// folder, or a folder without the files, is an argument error naming what is missing,
/// the command that makes it and the flag that does without.
#[test]
fn a_reader_without_its_files_says_what_makes_them() {
    let mut convnet = tiny_sizes("convnet");
    convnet.extra.remove("synthetic_data");
    let err = Models
        .create("convnet", &convnet, CPU)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("names no folder"), "{err}");
    let tmp = tempfile::tempdir().unwrap();
    let mut recom = tiny_sizes("recom");
    let folder = tmp.path().join("ml-20m").display().to_string();
    recom
        .extra
        .insert("data".into(), Value::Str(folder.clone()));
    let err = Models
        .create("recom", &recom, CPU)
        .err()
        .unwrap()
        .to_string();
    for want in [
        folder.as_str(),
        "mlbench data prepare $DATA_DIRECTORY --bench recom",
        "--synthetic-data",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
}

/// The tests that set `$DATA_DIRECTORY` (where vae, wlm and toy_lstm read their sets),
/// one at a time.
static DATA_DIRECTORY: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `f` with `$DATA_DIRECTORY` set to `dir` (`None`: unset).
fn with_data_directory<T>(dir: Option<&std::path::Path>, f: impl FnOnce() -> T) -> T {
    let _one = DATA_DIRECTORY.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: the lock above keeps the tests that read or write it apart; no other
    // thread of this binary reads the variable (the other tests' copies are synthetic).
    unsafe {
        match dir {
            Some(d) => std::env::set_var("DATA_DIRECTORY", d),
            None => std::env::remove_var("DATA_DIRECTORY"),
        }
    }
    let out = f();
    unsafe { std::env::remove_var("DATA_DIRECTORY") };
    out
}

/// reso reads `$DATA_DIRECTORY`'s BSDS500 as data.py does: it builds and trains on the
/// training folder's 4 smoke images in batches of 3 (3, 1, then the next epoch) and logs
/// a finite PSNR over the test folder; without the test folder, or `$DATA_DIRECTORY`, the
/// error names what is missing and what makes it.
#[test]
fn reso_reads_bsds500_under_the_data_directory() {
    use mlbench_datasets::images::bsds500::Split;
    use mlbench_datasets::sets::{DataSet, prepare};
    let tmp = tempfile::tempdir().unwrap();
    prepare(
        tmp.path(),
        &[DataSet::Bsds500],
        2,
        mlbench_datasets::Scale::Smoke,
        false,
    )
    .unwrap();
    let mut a = tiny_sizes("reso");
    a.batch_size = 3;
    a.extra.insert("testBatchSize".into(), Value::Int(3));
    assert_eq!(Models.data_source("reso", &a), DataSource::Files);
    let mut bench =
        with_data_directory(Some(tmp.path()), || Models.create("reso", &a, CPU)).unwrap();
    bench.begin_observation(0).unwrap();
    for _ in 0..3 {
        assert!(loss(&mut bench).is_finite());
    }
    bench.end_observation(0).unwrap();
    let logs = bench.after_observation(0, 1.0).unwrap();
    let psnr = logs
        .metrics
        .iter()
        .find(|(k, _)| *k == "psnr")
        .map(|(_, v)| *v);
    assert!(psnr.is_some_and(f64::is_finite), "{logs:?}");
    let err = with_data_directory(None, || Models.create("reso", &a, CPU));
    let err = err.err().unwrap().to_string();
    assert!(
        err.contains("mlbench data prepare $DATA_DIRECTORY --bench reso"),
        "{err}"
    );
    let test = tmp.path().join(Split::Test.folder());
    std::fs::remove_dir_all(&test).unwrap();
    let err = with_data_directory(Some(tmp.path()), || Models.create("reso", &a, CPU));
    let err = err.err().unwrap().to_string();
    assert!(
        err.contains(&test.display().to_string()) && err.contains("--synthetic-data"),
        "{err}"
    );
}

/// toy_lstm, vae and wlm read `$DATA_DIRECTORY`'s sets as their scripts do: prepared,
/// they build and train; without the variable, or with a file cut short, the error says
/// what is missing and what makes it.
#[test]
fn benches_of_the_data_directory_read_it_and_say_what_is_missing() {
    use mlbench_datasets::sets::{DataSet, prepare};
    let tmp = tempfile::tempdir().unwrap();
    let sets = [DataSet::SineWaves, DataSet::Mnist, DataSet::Wikitext2];
    prepare(tmp.path(), &sets, 1, mlbench_datasets::Scale::Smoke, false).unwrap();
    let plain = |name: &str| {
        let mut a = tiny_sizes(name);
        a.extra.remove("synthetic_data");
        a
    };
    for name in ["toy_lstm", "vae", "wlm"] {
        let a = plain(name);
        let mut bench = with_data_directory(Some(tmp.path()), || Models.create(name, &a, CPU))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        bench.begin_observation(0).unwrap();
        let logs = bench.step().unwrap();
        assert_eq!(logs.first_nonfinite(), None, "{name}");
        let err = with_data_directory(None, || Models.create(name, &a, CPU));
        let err = err.err().unwrap().to_string();
        let want = format!("mlbench data prepare $DATA_DIRECTORY --bench {name}");
        assert!(
            err.contains(&want) && err.contains("--synthetic-data"),
            "{err}"
        );
    }
    let waves = tmp.path().join(mlbench_datasets::sine::FOLDER);
    let file = waves.join(mlbench_datasets::sine::FILE);
    std::fs::write(&file, b"\x93NUMPY").unwrap();
    let a = plain("toy_lstm");
    let err = with_data_directory(Some(tmp.path()), || Models.create("toy_lstm", &a, CPU));
    let err = err.err().unwrap().to_string();
    assert!(err.contains(&file.display().to_string()), "{err}");
}

/// recom reads `train-ratings.csv` of its data folder, as ncf.py's CFTrainDataset: the
/// embeddings have the file's users and items (its largest ids + 1), and it trains.
#[test]
fn recom_reads_the_training_pairs_of_its_folder() {
    use mlbench_datasets::movielens;
    let tmp = tempfile::tempdir().unwrap();
    movielens::prepare(tmp.path(), 4, mlbench_datasets::Scale::Smoke).unwrap();
    let folder = tmp.path().join(movielens::FOLDER);
    let pairs = movielens::read_pairs(&folder.join(movielens::TRAIN)).unwrap();
    assert!(!pairs.users.is_empty());
    let mut a = tiny_sizes("recom");
    a.extra
        .insert("data".into(), Value::Str(folder.display().to_string()));
    assert_eq!(Models.data_source("recom", &a), DataSource::Files);
    let mut bench = Models.create("recom", &a, CPU).unwrap();
    bench.begin_observation(0).unwrap();
    let logs = bench.step().unwrap();
    assert_eq!(logs.first_nonfinite(), None);
    // The file's bytes are read, not only its name: cut it, and the build says where.
    std::fs::write(folder.join(movielens::TRAIN), "0\t1\n").unwrap();
    let err = Models.create("recom", &a, CPU).err().unwrap().to_string();
    assert!(err.contains(movielens::TRAIN), "{err}");
}

/// ssd reads `--data`'s COCO folder as train.py does (`COCODetection` of train2017
/// through the training transform): the classes are the annotation file's (80 and the
/// background), the smoke set's 8 images in batches of 3 train an epoch with its short
/// last batch; a `label_num` other than the file's, or a folder without the annotations,
/// is an argument error naming what is wrong; with its images gone, a step fails naming
/// one.
#[test]
fn ssd_reads_its_coco_folder() {
    use mlbench_datasets::images::coco::{self, Detection, Split};
    let tmp = tempfile::tempdir().unwrap();
    coco::prepare(tmp.path(), 3, mlbench_datasets::Scale::Smoke, false).unwrap();
    let folder = tmp.path().join(coco::COCO);
    let set = Detection::open(tmp.path(), Split::Train).unwrap();
    assert_eq!(set.label_count, 81);
    let mut a = tiny_sizes("ssd");
    a.extra.remove("label_num");
    a.batch_size = 3;
    let data = Value::Str(folder.display().to_string());
    a.extra.insert("data".into(), data);
    assert_eq!(Models.data_source("ssd", &a), DataSource::Files);
    let mut bench = Models.create("ssd", &a, CPU).unwrap();
    bench.begin_observation(0).unwrap();
    for _ in 0..set.items.len().div_ceil(3) + 1 {
        assert!(loss(&mut bench).is_finite());
    }
    bench.end_observation(0).unwrap();
    let mut five = a.clone();
    five.extra.insert("label_num".into(), Value::Int(5));
    let err = Models.create("ssd", &five, CPU).err().unwrap().to_string();
    assert!(err.contains("81 classes"), "{err}");
    let annotations = folder.join("annotations/instances_val2017.json");
    std::fs::rename(&annotations, tmp.path().join("moved.json")).unwrap();
    let err = Models.create("ssd", &a, CPU).err().unwrap().to_string();
    let hint = "mlbench data prepare $DATA_DIRECTORY --bench ssd";
    let named = err.contains(&annotations.display().to_string());
    assert!(named && err.contains(hint), "{err}");
    for item in &set.items {
        std::fs::remove_file(&item.path).unwrap();
    }
    bench.begin_observation(1).unwrap();
    let err = bench
        .step()
        .expect_err("a step without its images")
        .to_string();
    assert!(
        err.contains(&folder.join("train2017").display().to_string()),
        "{err}"
    );
}

/// dcgan reads `--dataroot` as main.py's ImageFolder does, an epoch's short last batch
/// included (the smoke set's 12 images in batches of 5: 5, 5, 2), and fails a step
/// naming the folder when its files are gone.
#[test]
fn dcgan_reads_its_dataroot_short_batches_included() {
    use mlbench_datasets::images::{ImageFolder, fake_imagenet};
    let tmp = tempfile::tempdir().unwrap();
    fake_imagenet::prepare(tmp.path(), 5, mlbench_datasets::Scale::Smoke, false).unwrap();
    let train = tmp.path().join(fake_imagenet::TRAIN);
    let folder = ImageFolder::open(&train).unwrap();
    assert_eq!(
        folder.len(),
        12,
        "the smoke set's size, which the batches below assume"
    );
    let mut a = tiny_sizes("dcgan");
    a.batch_size = 5;
    a.extra
        .insert("dataroot".into(), Value::Str(train.display().to_string()));
    assert_eq!(Models.data_source("dcgan", &a), DataSource::Files);
    let synthetic = Models.data_source("dcgan", &tiny("dcgan"));
    assert_eq!(synthetic, DataSource::Synthetic);
    let mut bench = Models.create("dcgan", &a, CPU).unwrap();
    for _ in 0..4 {
        let logs = bench.step().unwrap();
        assert_eq!(logs.metrics.len(), 3);
        assert_eq!(logs.first_nonfinite(), None);
    }
    for (path, _) in &folder.samples {
        std::fs::remove_file(path).unwrap();
    }
    let err = bench
        .step()
        .expect_err("a step without its files")
        .to_string();
    assert!(err.contains(&train.display().to_string()), "{err}");
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
    assert!(loss(&mut bench).is_finite());
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
        assert!(
            source.contains("fn build") || source.contains("fn rank"),
            "{name}"
        );
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
    // nvidia-smi's name where it is this device's for sure, else tch's name.
    let want = mlbench_runner::system::cuda_device_name(3).unwrap_or_else(|| "cuda:3".into());
    assert_eq!(Models.device_name(DeviceSpec::Cuda(3)), want);
}

#[test]
fn a_bench_steps_from_another_thread() {
    let device = DeviceSpec::Cpu {
        index: 1,
        threads: 1,
    };
    let mut bench = Models.create("toy_reg", &args(8, &[]), device).unwrap();
    let loss = std::thread::spawn(move || loss(&mut bench)).join().unwrap();
    assert!(loss.is_finite());
}

/// Every job of the shipped `runner.json` with its real arguments as the planner gives them
/// (short flags, `--dtype`, `--arch`, sizes), only the batch made small: builds and takes
/// one step on CPU, the fp16 jobs are refused there. `--ignored`: a few minutes.
#[test]
#[ignore]
fn runner_jobs_build_and_step_on_cpu_with_their_arguments() {
    use mlbench_runner::{DeviceSet, PlanOptions, plan};
    let jobs = mlbench_schema::jobs::JobsFile::builtin("runner").unwrap();
    // The data sets the jobs read, at smoke size (`mlbench data prepare --smoke`'s).
    let data = tempfile::tempdir().unwrap();
    let (all, smoke) = (
        mlbench_datasets::sets::DataSet::ALL,
        mlbench_datasets::Scale::Smoke,
    );
    mlbench_datasets::sets::prepare(data.path(), &all, 0, smoke, false).unwrap();
    let options = PlanOptions {
        jobs_name: "runner".into(),
        names: Vec::new(),
        devices: DeviceSet::cpu(2, 1).unwrap(),
        out: std::path::PathBuf::from("/nonexistent"),
        run: 0,
        env: [(
            "DATA_DIRECTORY".to_owned(),
            data.path().display().to_string(),
        )]
        .into(),
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
        let created =
            with_data_directory(Some(data.path()), || Models.create(name, &a, copy.device));
        if name.ends_with("fp16") {
            assert!(
                matches!(created, Err(BenchError::Device { .. })),
                "{name}: float16 must be refused on CPU"
            );
            continue;
        }
        let mut bench = created.unwrap_or_else(|e| panic!("{name}: {e}"));
        bench.begin_observation(0).unwrap();
        let logs: Logs = bench.step().unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("{name}: {logs:?} in {:.2?}", start.elapsed());
        assert_eq!(logs.first_nonfinite(), None, "{name}");
    }
}

#[test]
fn wlm_times_one_observation_fewer_than_repeat() {
    // word_language_model main.py loops `range(1, args.repeat)` (docs/suite.md#statstream).
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
        let logs = bench.step().unwrap();
        assert_eq!(logs.first_nonfinite(), None, "{name}");
        assert_eq!(logs.metrics.len(), if name == "dcgan_all" { 3 } else { 0 });
    }
}

/// `scaling` on 2 CPU devices, its ranks in threads meeting through c10d: one entry per
/// world size, efficiency 1 alone and a positive one at 2, the sweep's devices and id.
#[test]
fn scaling_sweeps_world_sizes_with_ranks_on_c10d() {
    use mlbench_runner::{
        Clock, DeviceSet, ExecuteOptions, PlanOptions, Progress, ScriptedClock, execute_all,
        plan_runs,
    };
    let dir = tempfile::tempdir().unwrap();
    let jobs = mlbench_schema::jobs::JobsFile::parse(
        "baselines.json",
        br#"[{"name": "scaling", "cmd": "./image_classification/scaling/pytorch/run.sh",
              "args": {"--repeat": 10, "--number": 2, "--network": "resnet18",
                       "--devices": 0, "--batch-size": 2, "--image-size": 32},
              "cgroup": "all"}]"#,
    )
    .unwrap();
    let options = PlanOptions {
        jobs_name: "baselines".into(),
        names: Vec::new(),
        devices: DeviceSet::cpu(2, 2).unwrap(),
        out: dir.path().to_path_buf(),
        run: 0,
        env: BTreeMap::new(),
    };
    let plans = plan_runs(&jobs, &options, 1).unwrap();
    let quiet = |_: &Progress<'_>| {};
    let clock = || Box::new(ScriptedClock::new(vec![])) as Box<dyn Clock>;
    let exec = ExecuteOptions {
        hostname: "h".into(),
        clock: &clock,
        progress: &quiet,
        launcher: None,
        telemetry: Default::default(),
        profile: false,
    };
    let outcome = &execute_all(&plans, &Models, &exec).unwrap()[0];
    assert_eq!(
        (outcome.passed, outcome.entries),
        (1, 2),
        "{:?}",
        outcome.failures
    );
    let text = std::fs::read(dir.path().join("output0/baselines_0.json")).unwrap();
    let parsed = mlbench_schema::reader::parse_report("baselines_0.json", &text);
    let efficiency: Vec<f64> = parsed
        .entries
        .iter()
        .map(|(_, e)| {
            let item = e.get("train_item").and_then(Value::as_object).unwrap();
            item.get("avg").and_then(Value::as_f64).unwrap()
        })
        .collect();
    assert_eq!(efficiency[0], 1.0);
    assert!(
        efficiency[1] > 0.0 && efficiency[1].is_finite(),
        "{efficiency:?}"
    );
    let (_, two) = &parsed.entries[1];
    assert_eq!(two.get("vcd"), Some(&Value::from("0,1")));
    let source = Models.source("scaling").unwrap();
    assert!(source.starts_with(include_str!("../src/models/scaling.rs")));
}

/// The modules a file uses: models' files it names as `module::` and the crate's training
/// modules (`crate::ddp`, `crate::c10d`, `crate::data_parallel`), by path.
fn used_modules(text: &str, own: &str, models: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for m in models.iter().filter(|m| m.as_str() != own) {
        let named = text.match_indices(&format!("{m}::")).any(|(i, _)| {
            !text[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if named {
            out.push(format!("src/models/{m}.rs"));
        }
    }
    for m in ["ddp", "c10d", "data_parallel"] {
        if text.contains(&format!("crate::{m}")) {
            out.push(format!("src/{m}.rs"));
        }
    }
    out
}

/// A model's version hashes its file and every file it trains through, transitively: a
/// change to the loss scaler (`half.rs`) or the loaders changes the versions that use them.
#[test]
fn every_version_covers_the_shared_code_its_model_trains_through() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |rel: &str| std::fs::read_to_string(root.join(rel)).unwrap();
    let models: Vec<String> = std::fs::read_dir(root.join("src/models"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|f| f.strip_suffix(".rs").map(str::to_owned))
        .filter(|m| m != "mod")
        .collect();
    let mut checked = 0;
    for name in Models::names() {
        let source = Models.source(name).unwrap();
        let own = models
            .iter()
            .find(|m| source.starts_with(&read(&format!("src/models/{m}.rs"))))
            .unwrap_or_else(|| panic!("{name}: its source starts with no model file"));
        let mut todo = vec![format!("src/models/{own}.rs")];
        let mut seen = BTreeSet::new();
        while let Some(file) = todo.pop() {
            if !seen.insert(file.clone()) {
                continue;
            }
            let text = read(&file);
            assert!(source.contains(&text), "{name}: its version misses {file}");
            let stem = file.rsplit('/').next().unwrap().trim_end_matches(".rs");
            todo.extend(used_modules(&text, stem, &models));
        }
        checked += seen.len();
    }
    // convnet alone trains through 4 files (itself, half, host_loader, loader).
    assert!(checked > Models::names().count(), "shared files were found");
}
