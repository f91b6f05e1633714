//! What each of the suite's scripts records that the jobs file does not say: the one home
//! of the scripts' argument facts the runner copies into its entries (so they match the suite's).
//!
//! Source: mila-iqia/training at 0591444 (2020-06-15), each script run up to
//! `exp.get_arguments` with every job's command line of `fast.json` and `baselines.json`
//! (the arguments `argparse` records, with their Python types). A row lists, per bench:
//! - `defaults`: the destinations its script records that those jobs files do not pass
//!   (argparse defaults, and the arguments its `run.sh` adds: wlm's `--data`,
//!   fast_style's `train --dataset … --image-size 64 …`), as the script records them:
//!   `20` (int) is not `20.0` (float), `None` is not `''`. A `$VAR` in a string is
//!   expanded from the run's environment as `/bin/sh` expands `run.sh` (unset: empty).
//!   A job that passes the flag records its own value instead;
//! - `positional`: the destination of the script's positional argument (`data`), whose
//!   value is the jobs file's key without a dash (`"$DATA_DIRECTORY/ImageNet/train": ""`);
//! - `short`: the destinations of the short flags the jobs pass (`-l` → `learning_rate`);
//! - `not_recorded`: flags the jobs pass that the script never records (scaling.py hands
//!   `--network` to its workers);
//! - `cpu_only`: the script keeps its model on the CPU whatever the device (cart's
//!   policy), and its job's `--no-cuda` makes it record `cuda: false` and no `gpu`.
//!
//! The defaults the jobs files always pass (reso's `--lr`, …) are the jobs', not listed.

use mlbench_schema::value::Value;

/// A recorded value, as Python typed it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Py {
    /// `int`.
    Int(i64),
    /// `float`.
    Float(f64),
    /// `str` (`$VAR`s expanded).
    Str(&'static str),
    /// `bool`.
    Bool(bool),
    /// `None`.
    None,
    /// A list of `int`.
    Ints(&'static [i64]),
}

impl Py {
    /// The value as an entry records it (strings not yet expanded).
    pub fn value(self) -> Value {
        match self {
            Py::Int(i) => Value::Int(i),
            Py::Float(f) => Value::Float(f),
            Py::Str(s) => Value::from(s),
            Py::Bool(b) => Value::Bool(b),
            Py::None => Value::Null,
            Py::Ints(list) => Value::from(list.to_vec()),
        }
    }
}

/// One script's facts (see the module documentation).
#[derive(Debug, Clone, Copy)]
pub struct Script {
    /// The bench (job name).
    pub bench: &'static str,
    /// Its entry script in mila-iqia/training.
    pub path: &'static str,
    /// Destinations recorded beyond the common arguments and the jobs file's.
    pub defaults: &'static [(&'static str, Py)],
    /// The positional argument's destination.
    pub positional: Option<&'static str>,
    /// Short flag → destination.
    pub short: &'static [(&'static str, &'static str)],
    /// Flags passed on, never recorded.
    pub not_recorded: &'static [&'static str],
    /// The model always on the CPU, `cuda: false`, no `gpu`.
    pub cpu_only: bool,
}

const fn script(bench: &'static str, path: &'static str) -> Script {
    Script {
        bench,
        path,
        defaults: &[],
        positional: None,
        short: &[],
        not_recorded: &[],
        cpu_only: false,
    }
}

const WLM_DATA: Py =
    Py::Str("./natural_language_processing/word_language_model/pytorch/../data/wikitext-2");
const CONV_SIMPLE: &str = "image_classification/convnets/pytorch/conv_simple.py";
const CONV_DISTRIBUTED: &str = "image_classification/convnets/pytorch/conv_distributed.py";
const DCGAN: &str = "generative_adversarial_networks/dcgan/pytorch/main.py";

/// dcgan's main.py; `ngpu` is recorded as set before the report (main.py:43-44).
const DCGAN_DEFAULTS: &[(&str, Py)] = &[
    ("beta1", Py::Float(0.5)),
    ("lr", Py::Float(0.0002)),
    ("ndf", Py::Int(64)),
    ("netD", Py::Str("")),
    ("netG", Py::Str("")),
    ("ngf", Py::Int(64)),
    ("no_checks", Py::Bool(false)),
    ("nz", Py::Int(100)),
    ("outf", Py::None),
];

/// The scripts of the 20 benches of fast.json and baselines.json.
pub const SCRIPTS: &[Script] = &[
    script("toy_reg", "regression/polynome/pytorch/main.py"),
    script("toy_lstm", "time_sequence_prediction/lstm/pytorch/train.py"),
    script(
        "vae",
        "variational_auto_encoder/auto_encoding_variational_bayes/pytorch/main.py",
    ),
    script("loader", "image_loading/loader/pytorch/loaders.py"),
    script(
        "reso",
        "super_resolution/subpixel_convolution/pytorch/main.py",
    ),
    Script {
        defaults: &[
            ("beam_size", Py::Int(5)),
            ("bucketing", Py::Bool(true)),
            ("cov_penalty_factor", Py::Float(0.1)),
            ("cudnn", Py::Bool(true)),
            ("disable_eval", Py::Bool(false)),
            ("dist_url", Py::Str("tcp://localhost:23456")),
            ("eval_batch_size", Py::Int(32)),
            ("grad_clip", Py::Float(5.0)),
            ("keep_checkpoints", Py::Int(0)),
            ("len_norm_const", Py::Float(5.0)),
            ("len_norm_factor", Py::Float(0.6)),
            ("math", Py::Str("fp32")),
            ("max_length_train", Py::Int(50)),
            ("max_length_val", Py::Int(150)),
            ("max_size", Py::None),
            ("min_length_train", Py::Int(0)),
            ("min_length_val", Py::Int(0)),
            (
                "model_config",
                Py::Str(
                    "{'hidden_size': 1024,'num_layers': 4,                         'dropout': 0.2, 'share_embedding': True}",
                ),
            ),
            (
                "optimization_config",
                Py::Str("{'optimizer': 'Adam', 'lr': 5e-4}"),
            ),
            ("print_freq", Py::Int(10)),
            ("rank", Py::Int(0)),
            ("results_dir", Py::Str("../results")),
            ("resume", Py::None),
            ("save", Py::None),
            ("save_all", Py::Bool(false)),
            ("save_freq", Py::Int(5000)),
            ("smoothing", Py::Float(0.1)),
            ("start_epoch", Py::Int(0)),
            ("world_size", Py::Int(1)),
        ],
        ..script(
            "translator",
            "natural_language_processing/rnn_translator/pytorch/train.py",
        )
    },
    Script {
        defaults: &[
            ("bptt", Py::Int(35)),
            ("clip", Py::Float(0.25)),
            ("data", WLM_DATA),
            ("log_interval", Py::Int(200)),
            ("lr", Py::Int(20)),
            ("nlayers", Py::Int(2)),
            ("onnx_export", Py::Str("")),
            ("save", Py::None),
            ("tied", Py::Bool(false)),
        ],
        ..script(
            "wlm",
            "natural_language_processing/word_language_model/pytorch/main.py",
        )
    },
    Script {
        defaults: &[
            ("bptt", Py::Int(35)),
            ("clip", Py::Float(0.25)),
            ("data", WLM_DATA),
            ("dynamic_loss_scale", Py::Bool(false)),
            ("log_interval", Py::Int(200)),
            ("lr", Py::Int(20)),
            ("nlayers", Py::Int(2)),
            ("save", Py::Str("model.pt")),
            ("static_loss_scale", Py::Float(128.0)),
            ("tied", Py::Bool(false)),
        ],
        ..script(
            "wlmfp16",
            "natural_language_processing/word_language_model/pytorch/main_fp16_optimizer.py",
        )
    },
    Script {
        defaults: &[("render", Py::Bool(false))],
        cpu_only: true,
        ..script("cart", "reinforcement/cart_pole/pytorch/reinforce.py")
    },
    Script {
        defaults: &[
            ("alpha", Py::Float(0.99)),
            ("cuda_deterministic", Py::Bool(false)),
            ("eps", Py::Float(1e-05)),
            ("eval_interval", Py::None),
            ("gae_lambda", Py::Float(0.95)),
            ("gail", Py::Bool(false)),
            ("gail_batch_size", Py::Int(128)),
            ("gail_epoch", Py::Int(5)),
            ("gail_experts_dir", Py::Str("./gail_experts")),
            ("gamma", Py::Float(0.99)),
            ("log_dir", Py::None),
            ("log_interval", Py::Int(10)),
            ("lr", Py::Float(0.0007)),
            ("max_grad_norm", Py::Float(0.5)),
            ("num_env_steps", Py::Float(10_000_000.0)),
            ("ppo_epoch", Py::Int(4)),
            ("recurrent_policy", Py::Bool(false)),
            ("save_dir", Py::Str("./trained_models/")),
            ("save_interval", Py::Int(100)),
            ("use_proper_time_limits", Py::Bool(false)),
        ],
        ..script("atari", "reinforcement/atari/pytorch/main.py")
    },
    Script {
        defaults: &[
            ("checkpoint", Py::None),
            (
                "evaluation",
                Py::Ints(&[120_000, 160_000, 180_000, 200_000, 220_000, 240_000]),
            ),
            ("iteration", Py::Int(0)),
        ],
        ..script(
            "ssd",
            "object_detection/single_stage_detector/pytorch/train.py",
        )
    },
    Script {
        // run.sh: `train --dataset $DATA_DIRECTORY/ImageNet/train --style-image
        // $SCRIPT_PATH/../../images/style-images/candy.jpg --save-model-dir $TEMP_DIRECTORY
        // --no-checks --image-size 64 --style-size 64`.
        defaults: &[
            ("checkpoint_interval", Py::Int(2000)),
            ("checkpoint_model_dir", Py::None),
            ("content_weight", Py::Float(100_000.0)),
            ("dataset", Py::Str("$DATA_DIRECTORY/ImageNet/train")),
            ("image_size", Py::Int(64)),
            ("log_interval", Py::Int(500)),
            ("lr", Py::Float(0.001)),
            ("no_checks", Py::Bool(true)),
            ("prof", Py::None),
            ("save_model_dir", Py::Str("$TEMP_DIRECTORY")),
            (
                "style_image",
                Py::Str(
                    "./fast_neural_style/neural_style/pytorch/../../images/style-images/candy.jpg",
                ),
            ),
            ("style_size", Py::Int(64)),
            ("style_weight", Py::Float(10_000_000_000.0)),
            ("subcommand", Py::Str("train")),
        ],
        ..script(
            "fast_style",
            "fast_neural_style/neural_style/pytorch/neural_style.py",
        )
    },
    Script {
        defaults: DCGAN_WITH_NGPU,
        ..script("dcgan", DCGAN)
    },
    Script {
        defaults: DCGAN_DEFAULTS,
        ..script("dcgan_all", DCGAN)
    },
    Script {
        defaults: &[("half", Py::Bool(false)), ("lr", Py::Float(0.1))],
        positional: Some("data"),
        ..script("convnet", CONV_SIMPLE)
    },
    Script {
        defaults: &[("half", Py::Bool(false)), ("lr", Py::Float(0.1))],
        positional: Some("data"),
        ..script("convnet_fp16", CONV_SIMPLE)
    },
    Script {
        defaults: &[
            ("device_ids", Py::None),
            ("half", Py::Bool(false)),
            ("lr", Py::Float(0.1)),
        ],
        positional: Some("data"),
        ..script("convnet_distributed", CONV_DISTRIBUTED)
    },
    Script {
        defaults: &[
            ("device_ids", Py::None),
            ("half", Py::Bool(false)),
            ("lr", Py::Float(0.1)),
        ],
        positional: Some("data"),
        ..script("convnet_distributed_fp16", CONV_DISTRIBUTED)
    },
    Script {
        defaults: &[("negative_samples", Py::Int(4)), ("topk", Py::Int(10))],
        positional: Some("data"),
        short: &[("-f", "factors"), ("-l", "learning_rate")],
        ..script(
            "recom",
            "recommendation/neural_collaborative_filtering/pytorch/ncf.py",
        )
    },
    Script {
        not_recorded: &["network"],
        ..script("scaling", "image_classification/scaling/pytorch/scaling.py")
    },
];

/// dcgan (one GPU): its defaults and `ngpu = torch.cuda.device_count()` = 1 in a process
/// that sees one device.
const DCGAN_WITH_NGPU: &[(&str, Py)] = &[
    ("beta1", Py::Float(0.5)),
    ("lr", Py::Float(0.0002)),
    ("ndf", Py::Int(64)),
    ("netD", Py::Str("")),
    ("netG", Py::Str("")),
    ("ngf", Py::Int(64)),
    ("ngpu", Py::Int(1)),
    ("no_checks", Py::Bool(false)),
    ("nz", Py::Int(100)),
    ("outf", Py::None),
];

/// The script of `bench`, if the suite has one mlbench knows.
pub fn script_of(bench: &str) -> Option<&'static Script> {
    SCRIPTS.iter().find(|s| s.bench == bench)
}

/// Observations the bench's script times for `--repeat R` (docs/suite.md#statstream): `R`, except
/// word_language_model's `for epoch in range(1, args.repeat)`, `R − 1`.
pub fn observations(bench: &str, repeat: i64) -> i64 {
    if matches!(bench, "wlm" | "wlmfp16") {
        (repeat - 1).max(0)
    } else {
        repeat
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WLM: &str = "natural_language_processing/word_language_model/pytorch/";

    #[test]
    fn one_row_per_bench_and_the_dcgan_rows_agree() {
        for (i, s) in SCRIPTS.iter().enumerate() {
            assert!(
                SCRIPTS[i + 1..].iter().all(|t| t.bench != s.bench),
                "{} twice",
                s.bench
            );
            assert!(
                s.defaults.windows(2).all(|w| w[0].0 < w[1].0),
                "{} sorted",
                s.bench
            );
        }
        assert_eq!(SCRIPTS.len(), 20);
        // dcgan = dcgan_all's defaults + ngpu.
        let single: Vec<_> = DCGAN_WITH_NGPU
            .iter()
            .filter(|(k, _)| *k != "ngpu")
            .collect();
        let all: Vec<_> = DCGAN_DEFAULTS.iter().collect();
        assert_eq!(single, all);
        assert_eq!(
            script_of("wlmfp16").unwrap().path,
            format!("{WLM}main_fp16_optimizer.py")
        );
        assert_eq!(script_of("wlm").unwrap().path, format!("{WLM}main.py"));
    }

    #[test]
    fn observations_of_wlm_are_one_fewer() {
        assert_eq!(observations("wlm", 15), 14);
        assert_eq!(observations("wlmfp16", 0), 0);
        assert_eq!(observations("vae", 15), 15);
    }
}
