//! The suite's benchmarks as tch (libtorch) models, built by name through [`Models`].
//!
//! Each model lives in its own file, whose text, followed by the texts of the shared files
//! it trains through (`half.rs`, `parallel.rs`, `host_loader.rs`, …, transitively), is its
//! [`BenchFactory::source`]: the report's `version` is their SHA-256, so a change to a shared
//! file changes the version of every model that uses it (tests/models.rs checks the lists). Sizes come from the jobs-file arguments (`BenchArgs::extra`, by
//! argparse destination) with the suite's defaults (docs/suite.md#the-shipped-jobs-files) when
//! absent; `batch_size` is
//! the jobs file's, or the suite's common default 1 when it passes none (as its scripts
//! would then train, and as train_item counts). Data are synthetic: random tensors made on
//! the device once or per step, or, where the script loads a fresh batch each step from a
//! DataLoader (convnet jobs, vae, dcgan jobs, fast_style, reso, ssd, recom), made on the
//! host by `host_loader`'s worker threads and copied to the device. What a model logs and
//! does around its steps is its script's ([`Train`]'s hooks, `crate::bench`).

use crate::bench::{Bench, BenchArgs, BenchError, BenchFactory, DataSource, DeviceSpec, Logs};
use mlbench_schema::value::Value;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::thread::ThreadId;
use tch::{Device, Kind, Tensor};

mod atari;
mod cart;
mod convnet;
mod convnet_distributed;
mod dcgan;
mod dcgan_all;
mod fast_style;
mod half;
mod host_loader;
mod image_data;
mod kineto;
mod loader;
mod parallel;
mod pong;
mod recom;
mod reso;
mod scaling;
mod ssd;
mod toy_lstm;
mod toy_reg;
mod translator;
mod vae;
mod wlm;

/// Builds a model on a prepared context.
type Builder = fn(&Ctx, &BenchArgs) -> Result<Box<dyn Train>, BenchError>;

/// Bench name → (model source, builder). `wlmfp16`/`convnet_fp16`/`convnet_distributed_fp16`
/// are the same models as `wlm`/`convnet`/`convnet_distributed`; their jobs pass
/// `--fp16`/`--half`.
const BENCHES: &[(&str, &str, Builder)] = &[
    ("toy_reg", toy_reg::SOURCE, toy_reg::build),
    ("toy_lstm", toy_lstm::SOURCE, toy_lstm::build),
    ("vae", vae::SOURCE, vae::build),
    ("convnet", convnet::SOURCE, convnet::build),
    ("convnet_fp16", convnet::SOURCE, convnet::build),
    (
        "convnet_distributed",
        convnet_distributed::SOURCE,
        convnet_distributed::build,
    ),
    (
        "convnet_distributed_fp16",
        convnet_distributed::SOURCE,
        convnet_distributed::build,
    ),
    ("reso", reso::SOURCE, reso::build),
    ("dcgan", dcgan::SOURCE, dcgan::build),
    ("dcgan_all", dcgan_all::SOURCE, dcgan_all::build),
    ("wlm", wlm::SOURCE, wlm::build),
    ("wlmfp16", wlm::SOURCE, wlm::build),
    ("recom", recom::SOURCE, recom::build),
    ("fast_style", fast_style::SOURCE, fast_style::build),
    ("atari", atari::SOURCE, atari::build),
    ("cart", cart::SOURCE, cart::build),
    ("ssd", ssd::SOURCE, ssd::build),
    ("loader", loader::SOURCE, loader::build),
    ("translator", translator::SOURCE, translator::build),
];

/// The benches that run as ranks of a data-parallel world rather than a timed loop
/// (`crate::scaling` sweeps their world sizes): name → model source.
const RANKED: &[(&str, &str)] = &[("scaling", scaling::SOURCE)];

/// The benches that read their data set's files as their scripts do (through
/// `mlbench_datasets`); the other benches whose scripts read files make noise and say so
/// ([`DataSource::Synthetic`]).
const READERS: &[&str] = &[
    "loader",
    "convnet",
    "convnet_fp16",
    "convnet_distributed",
    "convnet_distributed_fp16",
    "dcgan",
    "dcgan_all",
    "fast_style",
    "recom",
    "reso",
    "ssd",
    "toy_lstm",
    "translator",
    "vae",
    "wlm",
    "wlmfp16",
];

/// A reader's source: the model's, then the data sets crate's, whose decoding and
/// transforms are part of what the bench runs (made once per bench, kept for the process).
fn with_readers(name: &str, model: &'static str) -> &'static str {
    use std::collections::BTreeMap;
    use std::sync::{Mutex, OnceLock};
    static MADE: OnceLock<Mutex<BTreeMap<String, &'static str>>> = OnceLock::new();
    let mut made = MADE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    made.entry(name.to_owned()).or_insert_with(|| {
        Box::leak(format!("{model}{}", mlbench_datasets::SOURCE).into_boxed_str())
    })
}

/// The benches of the suite implemented on tch.
#[derive(Debug, Clone, Copy, Default)]
pub struct Models;

impl Models {
    /// The bench names this factory knows.
    pub fn names() -> impl Iterator<Item = &'static str> {
        BENCHES
            .iter()
            .map(|(name, _, _)| *name)
            .chain(RANKED.iter().map(|(name, _)| *name))
    }
}

impl BenchFactory for Models {
    fn create(
        &self,
        name: &str,
        args: &BenchArgs,
        device: DeviceSpec,
    ) -> Result<Box<dyn Bench>, BenchError> {
        let &(name, _, build) = BENCHES
            .iter()
            .find(|(n, _, _)| *n == name)
            .ok_or_else(|| BenchError::Unknown(name.to_owned()))?;
        let ctx = Ctx::new(name, args, device)?;
        // libtorch reports errors (bad shapes, out of memory) as panics through tch.
        let model = catch_unwind(AssertUnwindSafe(|| build(&ctx, args)))
            .map_err(|panic| ctx.failed(format!("building: {}", panic_message(&*panic))))??;
        Ok(Box::new(TchBench {
            name,
            device,
            bound_thread: Some(std::thread::current().id()),
            model,
        }))
    }

    fn source(&self, name: &str) -> Option<&'static str> {
        let model = BENCHES
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, source, _)| *source)
            .or_else(|| RANKED.iter().find(|(n, _)| *n == name).map(|(_, s)| *s))?;
        Some(match READERS.contains(&name) {
            true => with_readers(name, model),
            false => model,
        })
    }

    fn rank(
        &self,
        name: &str,
        args: &BenchArgs,
        device: DeviceSpec,
        rendezvous: &crate::rendezvous::Rendezvous,
        window: &mut dyn crate::timing::TimedWindow,
    ) -> Result<crate::bench::RankTiming, BenchError> {
        if name != "scaling" {
            return Err(BenchError::Unknown(name.to_owned()));
        }
        // libtorch reports errors as panics through tch.
        catch_unwind(AssertUnwindSafe(|| {
            scaling::rank(args, device, rendezvous, window)
        }))
        .map_err(|panic| BenchError::Failed {
            bench: name.to_owned(),
            message: panic_message(&*panic),
        })?
    }

    fn data_source(&self, name: &str, args: &BenchArgs) -> DataSource {
        if !mlbench_datasets::sets::reads_files(name) {
            DataSource::Generated
        } else if args.synthetic_data() {
            DataSource::Synthetic
        } else if READERS.contains(&name) {
            DataSource::Files
        } else {
            // A script that reads files whose reader mlbench lacks: noise, and it says so.
            DataSource::Synthetic
        }
    }

    fn profiler(&self, device: DeviceSpec) -> Option<Box<dyn crate::bench::Profiler>> {
        Some(Box::new(kineto::Kineto::new(device)))
    }

    fn batch_size(&self, name: &str, args: &BenchArgs) -> i64 {
        // conv_distributed.py and dcgan's main.py multiply it by the devices they split over.
        match name {
            "convnet_distributed" | "convnet_distributed_fp16" => {
                convnet_distributed::batch_size(args)
            }
            "dcgan_all" => dcgan_all::batch_size(args),
            _ => args.batch_size,
        }
    }

    fn device_name(&self, device: DeviceSpec) -> String {
        match device {
            DeviceSpec::Cpu { .. } => {
                crate::system::cpu_model().unwrap_or_else(|| "cpu".to_owned())
            }
            // tch exposes no CUDA device-name query: nvidia-smi's name where it is sure to
            // be this device's, else the device's tch name.
            DeviceSpec::Cuda(i) => {
                crate::system::cuda_device_name(i).unwrap_or_else(|| format!("cuda:{i}"))
            }
        }
    }
}

/// One model's work, as its script does it around and inside the timed loop (see
/// [`crate::bench`] for where each hook runs). Only [`Train::train_step`] is required: a
/// script that logs each step's loss and nothing else needs nothing more.
pub(crate) trait Train: Send {
    /// Trains on one batch; returns its loss as a scalar tensor, or why the step failed (an
    /// input that cannot be read; libtorch's own errors arrive as panics, which
    /// [`TchBench`] catches).
    fn train_step(&mut self) -> Result<Tensor, BenchError>;
    /// What the script logs for one step: by default the loss of [`Train::train_step`],
    /// read back (which waits for the device, as the script's `loss.item()` does).
    fn step(&mut self) -> Result<Logs, BenchError> {
        let loss = self.train_step()?;
        Ok(Logs::loss(loss.to_kind(Kind::Double).double_value(&[])))
    }
    /// Inside the timer, before the observation's first step.
    fn begin_observation(&mut self, _observation: u64) {}
    /// Inside the timer, after the observation's last step.
    fn end_observation(&mut self, _observation: u64) -> Logs {
        Logs::none()
    }
    /// After the `train` timer (`train_seconds` long): untimed work with stages of its own.
    fn after_observation(&mut self, _observation: u64, _train_seconds: f64) -> Logs {
        Logs::none()
    }
    /// Observations the stage `name` drops before averaging ([`Bench::skip_obs`]): the
    /// suite's 10 unless the script's `chrono.time` gives another (ncf's `loading_data`: 0).
    fn skip_obs(&self, _stage: &str) -> u64 {
        crate::bench::SKIP_OBS
    }
    /// Whether the timer's waits are waits for the copy's device: `false` for a script
    /// that keeps its model on the CPU and passes `--no-cuda` (cart), which never syncs.
    fn syncs_device(&self) -> bool {
        true
    }
}

/// Waits for `device`'s queued work (`torch.cuda.synchronize()`; nothing on the CPU).
pub(crate) fn sync(device: Device) {
    if let Device::Cuda(i) = device {
        tch::Cuda::synchronize(i as i64);
    }
}

/// A model as a [`Bench`]: sets the CPU threads in the thread that steps it, turns libtorch
/// errors (tch's panics) into [`BenchError::Failed`].
struct TchBench {
    name: &'static str,
    device: DeviceSpec,
    bound_thread: Option<ThreadId>,
    model: Box<dyn Train>,
}

impl TchBench {
    /// Runs `f` on the model in this thread, libtorch's errors caught.
    fn guarded<T>(&mut self, f: impl FnOnce(&mut dyn Train) -> T) -> Result<T, BenchError> {
        let here = std::thread::current().id();
        if self.bound_thread != Some(here) {
            // torch's intra-op thread count is per OS thread (OpenMP): set it where we run.
            if let DeviceSpec::Cpu { threads, .. } = self.device {
                tch::set_num_threads(threads.max(1) as i32);
            }
            self.bound_thread = Some(here);
        }
        let model = &mut *self.model;
        catch_unwind(AssertUnwindSafe(|| f(model))).map_err(|panic| BenchError::Failed {
            bench: self.name.to_owned(),
            message: panic_message(&*panic),
        })
    }
}

impl Bench for TchBench {
    fn step(&mut self) -> Result<Logs, BenchError> {
        self.guarded(|m| m.step())?
    }

    fn sync(&self) {
        if let DeviceSpec::Cuda(i) = self.device
            && self.model.syncs_device()
        {
            tch::Cuda::synchronize(i64::from(i));
        }
    }

    fn begin_observation(&mut self, observation: u64) -> Result<(), BenchError> {
        self.guarded(|m| m.begin_observation(observation))
    }

    fn end_observation(&mut self, observation: u64) -> Result<Logs, BenchError> {
        self.guarded(|m| m.end_observation(observation))
    }

    fn after_observation(
        &mut self,
        observation: u64,
        train_seconds: f64,
    ) -> Result<Logs, BenchError> {
        self.guarded(|m| m.after_observation(observation, train_seconds))
    }

    fn skip_obs(&self, stage: &str) -> u64 {
        self.model.skip_obs(stage)
    }
}

/// `nn.Linear(input, output, bias)` as PyTorch initialises it (`reset_parameters`: the
/// weights uniform in ±1/√input, kaiming_uniform with a = √5, and the bias too). tch's
/// default layer draws its weights from ±√6/√input (Kaiming with ReLU's gain), 2.45 times
/// wider than the scripts' models start.
pub(super) fn torch_linear<'a>(
    p: impl std::borrow::Borrow<tch::nn::Path<'a>>,
    input: i64,
    output: i64,
    bias: bool,
) -> tch::nn::Linear {
    linear_uniform(p, input, output, 1.0 / (input as f64).sqrt(), bias)
}

/// A linear layer whose weights are uniform in ±`limit` (a script's own initialisation),
/// its bias as PyTorch's (uniform in ±1/√input).
pub(super) fn linear_uniform<'a>(
    p: impl std::borrow::Borrow<tch::nn::Path<'a>>,
    input: i64,
    output: i64,
    limit: f64,
    bias: bool,
) -> tch::nn::Linear {
    let config = tch::nn::LinearConfig {
        ws_init: tch::nn::Init::Uniform {
            lo: -limit,
            up: limit,
        },
        bs_init: None,
        bias,
    };
    tch::nn::linear(p, input, output, config)
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else {
        "libtorch error".to_owned()
    }
}

/// What every model is built with: the device, the floating-point kind, the bench's name
/// (for errors) and the arguments.
pub(crate) struct Ctx {
    pub name: &'static str,
    pub device: Device,
    /// The parameters' and inputs' kind: Float unless `--half`/`--fp16`/`--dtype` say otherwise.
    pub kind: Kind,
    /// `--synthetic-data`: batches made in memory where the script reads files.
    pub synthetic: bool,
}

impl Ctx {
    fn new(name: &'static str, args: &BenchArgs, spec: DeviceSpec) -> Result<Ctx, BenchError> {
        let device = match spec {
            DeviceSpec::Cpu { threads, .. } => {
                tch::set_num_threads(threads.max(1) as i32);
                Device::Cpu
            }
            DeviceSpec::Cuda(i) => {
                let count = if tch::Cuda::is_available() {
                    tch::Cuda::device_count()
                } else {
                    0
                };
                if i64::from(i) >= count {
                    return Err(BenchError::Device {
                        bench: name.to_owned(),
                        message: format!("no CUDA device {i} (libtorch sees {count})"),
                    });
                }
                Device::Cuda(i as usize)
            }
        };
        let ctx0 = Ctx {
            name,
            device,
            kind: Kind::Float,
            synthetic: args.synthetic_data(),
        };
        let kind = ctx0.precision(args)?;
        if matches!(kind, Kind::Half) && device == Device::Cpu {
            return Err(ctx0.device_error("float16 needs a CUDA device (this is a CPU device)"));
        }
        tch::manual_seed(args.seed);
        Ok(Ctx { kind, ..ctx0 })
    }

    /// `--half`, `--fp16`, `--dtype float16|bfloat16|float32|float64`.
    fn precision(&self, args: &BenchArgs) -> Result<Kind, BenchError> {
        if self.flag(args, &["half", "fp16"]) {
            return Ok(Kind::Half);
        }
        match self.string(args, &["dtype"])?.as_deref() {
            None | Some("float32" | "float" | "fp32") => Ok(Kind::Float),
            Some("float16" | "half" | "fp16") => Ok(Kind::Half),
            Some("bfloat16" | "bf16") => Ok(Kind::BFloat16),
            Some("float64" | "double" | "fp64") => Ok(Kind::Double),
            Some(other) => Err(self.arg_error(format!("unsupported --dtype `{other}`"))),
        }
    }

    pub fn opts(&self) -> (Kind, Device) {
        (self.kind, self.device)
    }

    pub fn int_opts(&self) -> (Kind, Device) {
        (Kind::Int64, self.device)
    }

    pub fn is_cuda(&self) -> bool {
        self.device != Device::Cpu
    }

    /// What makes this bench's data set, and the way around it: the tail of every
    /// missing-data error.
    pub fn prepare_hint(&self) -> String {
        format!(
            "`mlbench data prepare $DATA_DIRECTORY --bench {}` makes it (or `mlbench run \
             --synthetic-data` for batches made in memory)",
            self.name
        )
    }

    /// `$DATA_DIRECTORY` (config.env's), under which the script reads its data set `what`;
    /// an error saying how to make it when it is not set.
    pub fn data_directory(&self, what: &str) -> Result<std::path::PathBuf, BenchError> {
        match std::env::var_os("DATA_DIRECTORY") {
            Some(dir) if !dir.is_empty() => Ok(dir.into()),
            _ => Err(self.arg_error(format!(
                "the script reads {what} under $DATA_DIRECTORY, which is not set; {}",
                self.prepare_hint()
            ))),
        }
    }

    pub fn arg_error(&self, message: impl Into<String>) -> BenchError {
        BenchError::Argument {
            bench: self.name.to_owned(),
            message: message.into(),
        }
    }

    pub fn device_error(&self, message: impl Into<String>) -> BenchError {
        BenchError::Device {
            bench: self.name.to_owned(),
            message: message.into(),
        }
    }

    pub fn failed(&self, message: impl Into<String>) -> BenchError {
        BenchError::Failed {
            bench: self.name.to_owned(),
            message: message.into(),
        }
    }

    fn lookup<'a>(args: &'a BenchArgs, keys: &[&str]) -> Option<(&'a str, &'a Value)> {
        keys.iter()
            .find_map(|k| args.extra.get_key_value(*k))
            .map(|(k, v)| (k.as_str(), v))
    }

    /// An integer argument under any of `keys` (ints, integral floats and numeric strings).
    pub fn int(&self, args: &BenchArgs, keys: &[&str], default: i64) -> Result<i64, BenchError> {
        let Some((key, value)) = Self::lookup(args, keys) else {
            return Ok(default);
        };
        let n = match value {
            Value::Int(i) => Some(*i),
            Value::Float(f) if f.fract() == 0.0 && f.is_finite() => Some(*f as i64),
            Value::Str(s) => s.trim().parse().ok(),
            _ => None,
        };
        n.ok_or_else(|| self.arg_error(format!("--{key} wants an integer, got {value:?}")))
    }

    /// A positive integer argument.
    pub fn size(&self, args: &BenchArgs, keys: &[&str], default: i64) -> Result<i64, BenchError> {
        let n = self.int(args, keys, default)?;
        if n < 1 {
            return Err(self.arg_error(format!("--{} must be at least 1, got {n}", keys[0])));
        }
        Ok(n)
    }

    /// A float argument under any of `keys`.
    pub fn float(&self, args: &BenchArgs, keys: &[&str], default: f64) -> Result<f64, BenchError> {
        let Some((key, value)) = Self::lookup(args, keys) else {
            return Ok(default);
        };
        let x = match value {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Str(s) => s.trim().parse().ok(),
            _ => None,
        };
        x.ok_or_else(|| self.arg_error(format!("--{key} wants a number, got {value:?}")))
    }

    /// A string argument under any of `keys` (numbers are written out).
    pub fn string(&self, args: &BenchArgs, keys: &[&str]) -> Result<Option<String>, BenchError> {
        let Some((key, value)) = Self::lookup(args, keys) else {
            return Ok(None);
        };
        match value {
            Value::Str(s) => Ok(Some(s.trim().trim_matches('"').to_owned())),
            Value::Int(i) => Ok(Some(i.to_string())),
            Value::Float(f) => Ok(Some(f.to_string())),
            other => Err(self.arg_error(format!("--{key} wants a string, got {other:?}"))),
        }
    }

    /// A list of integers: a JSON list or a string of numbers (`"256 256 128 64"`).
    pub fn int_list(
        &self,
        args: &BenchArgs,
        keys: &[&str],
        default: &[i64],
    ) -> Result<Vec<i64>, BenchError> {
        let Some((key, value)) = Self::lookup(args, keys) else {
            return Ok(default.to_vec());
        };
        let bad = || self.arg_error(format!("--{key} wants a list of integers, got {value:?}"));
        let list: Vec<i64> = match value {
            Value::Int(i) => vec![*i],
            Value::Str(s) => s
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|t| !t.is_empty())
                .map(|t| t.parse().map_err(|_| bad()))
                .collect::<Result<_, _>>()?,
            Value::List(items) => items
                .iter()
                .map(|v| v.as_i64().ok_or_else(bad))
                .collect::<Result<_, _>>()?,
            _ => return Err(bad()),
        };
        if list.is_empty() || list.iter().any(|&n| n < 1) {
            return Err(bad());
        }
        Ok(list)
    }

    /// A store-true flag: present and not `false`/`null`/`0`.
    pub fn flag(&self, args: &BenchArgs, keys: &[&str]) -> bool {
        match Self::lookup(args, keys) {
            None => false,
            Some((_, Value::Bool(b))) => *b,
            Some((_, Value::Null)) => false,
            Some((_, Value::Int(i))) => *i != 0,
            Some(_) => true,
        }
    }
}

/// Tests whose figures depend on libtorch's global generator: the tests of a binary run in
/// parallel threads that all draw from it, so a run seeded here may be drawn from by
/// another test between its seeding and its use. [`own_process::runner`] runs one seeded
/// computation in a fresh process of the test binary, running one test alone (as
/// `mlbench run` gives each copy a process of its own).
#[cfg(test)]
mod init_tests {
    use super::*;

    /// The largest |value| of `t` and its spread over ±`bound`: uniform draws of 40,000
    /// values reach within 0.1 % of the bound and never past it.
    fn spans(t: &Tensor, bound: f64) {
        let max = t.abs().max().double_value(&[]);
        assert!(max <= bound && max > 0.99 * bound, "{max} against ±{bound}");
    }

    #[test]
    fn linear_layers_start_as_pytorchs() {
        let vs = tch::nn::VarStore::new(Device::Cpu);
        // nn.Linear(400, 100): weights and bias in ±1/20.
        let l = torch_linear(vs.root() / "a", 400, 100, true);
        spans(&l.ws, 0.05);
        spans(l.bs.as_ref().unwrap(), 0.05);
        // Glorot's limit √(6 / (400 + 100)) for the weights; the bias stays PyTorch's.
        let g = linear_uniform(vs.root() / "b", 400, 100, (6.0f64 / 500.0).sqrt(), true);
        spans(&g.ws, (6.0f64 / 500.0).sqrt());
        spans(g.bs.as_ref().unwrap(), 0.05);
        assert!(torch_linear(vs.root() / "c", 4, 3, false).bs.is_none());
    }
}

#[cfg(test)]
pub(crate) mod own_process {
    /// Set in the child: the seed to run with.
    const CHILD_SEED: &str = "MLBENCH_TEST_CHILD_SEED";
    const MARK: &str = "MLBENCH_TEST_LOSSES=";

    /// The runs of the seeded computation `losses` for the test `test` (its path below the
    /// crate, `models::…::name`): in the parent, a function giving the losses a child
    /// process of this test alone prints for a seed; in the child (the variable set),
    /// `None` once it has run `losses` with its seed and printed them, and the test must
    /// then return.
    pub(crate) fn runner(
        test: &'static str,
        losses: impl Fn(i64) -> Vec<f64>,
    ) -> Option<impl Fn(i64) -> Vec<f64>> {
        if let Ok(seed) = std::env::var(CHILD_SEED) {
            let losses = losses(seed.parse().expect("a seed"));
            // After libtest's `test … ` on the same line.
            println!("{MARK}{}", serde_json::to_string(&losses).unwrap());
            return None;
        }
        Some(move |seed| self::losses(test, seed))
    }

    /// The losses the test `test` (its path below the crate, `models::…::name`) prints in
    /// a child process run with `seed`.
    fn losses(test: &str, seed: i64) -> Vec<f64> {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([test, "--exact", "--nocapture", "--test-threads", "1"])
            .env(CHILD_SEED, seed.to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        let line = stdout
            .lines()
            .find_map(|l| l.split_once(MARK).map(|(_, json)| json))
            .unwrap_or_else(|| panic!("no losses printed by {test}: {stdout}"));
        serde_json::from_str(line).unwrap()
    }
}
