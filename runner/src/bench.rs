//! What a benchmark is to the runner: something that trains one batch at a time on a
//! device and logs what its script logs. The models (feature `tch`) implement it; tests
//! use fakes.
//!
//! # The observation, as [`crate::timing::measure`] drives a [`Bench`]
//!
//! The suite's scripts run `for r in range(repeat): with chrono.time('train'): …`; what
//! they do inside and around that block differs by script, so a bench has four places to
//! put work, each returning the [`Logs`] its script writes there:
//!
//! ```text
//! for r in 0..repeat:
//!     sync()                              ┐ `train` (chrono syncs on enter and exit)
//!     begin_observation(r)                │ a new loader iterator, a hidden-state or
//!                                         │ environment reset: timed, as in the scripts
//!     number × step()                     │ one batch each; sub-stages it times itself
//!                                         │ (`loading`, `compute`) come back in Logs::stages
//!     end_observation(r)                  │ work after the last batch that is still timed
//!                                         │ (cart's finish_episode, an epoch loss)
//!     sync()                              ┘
//!     after_observation(r, train_seconds)   untimed by `train`: wlm's evaluation (its own
//!                                           `eval` stage and `all`), reso's PSNR test
//! ```
//!
//! - [`Logs::loss`] is `log_batch_loss` (a ring of 100 float32 in the report's
//!   `batch_loss`); `None` where the script logs none (dcgan, loader, translator).
//! - [`Logs::epoch_loss`] is `log_epoch_loss` (a ring of 10 float32, `epoch_loss`).
//! - [`Logs::metrics`] are `log_metric(name, value)` (a ring of 10 float32 per name, the
//!   report's `metrics`).
//! - [`Logs::stages`] are durations in seconds of the script's other `chrono.time(name)`
//!   blocks, measured by the bench with [`crate::timing::timed`] (which syncs on enter and
//!   exit, as chrono does). Each name becomes a stage object of its own beside `train`
//!   (`avg, min, max, sd, count, unit`), a `StatStream` that drops the first
//!   [`Bench::skip_obs`] observations (10, the suite's default).
//!
//! A non-finite loss, epoch loss or metric stops the loop (see
//! [`crate::timing::NanLoss`]).
//!
//! A bench that feeds a fresh batch per step through a loader (worker threads making
//! synthetic batches) makes its iterator in [`Bench::begin_observation`] where the script
//! makes one per observation inside the timer (or once, at build, where the script keeps
//! one), and in [`Bench::step`] times `loading` (wait for the batch + copy to the device)
//! and `compute` (forward, loss, backward, update) with [`crate::timing::timed`]:
//!
//! ```ignore
//! fn step(&mut self) -> Result<Logs, BenchError> {
//!     let (batch, loading) = timed(&|| self.sync(), || self.loader.next_on_device());
//!     let (loss, compute) = timed(&|| self.sync(), || self.train_on(&batch));
//!     Ok(Logs::loss(loss).stage("loading", loading).stage("compute", compute))
//! }
//! ```

use mlbench_schema::value::Value;
use std::collections::BTreeMap;

/// Where a copy of a bench runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceSpec {
    /// A share of the CPU: `index` of the simulated devices, with `threads` threads.
    Cpu {
        /// The simulated device's index (its `JOB_ID`/`vcd`).
        index: u32,
        /// Threads given to this copy (torch's intra-op threads).
        threads: usize,
    },
    /// A CUDA device, by index.
    Cuda(u32),
}

/// The arguments a bench is built from: the suite's common ones and the rest by argparse
/// destination (`--hidden-size 64` → `hidden_size: 64`).
#[derive(Debug, Clone, PartialEq)]
pub struct BenchArgs {
    /// `--batch-size`.
    pub batch_size: i64,
    /// `--number`: batches per observation.
    pub number: i64,
    /// `--repeat`: observations.
    pub repeat: i64,
    /// The seed (run.py's `uid + (i+1)·100` per device).
    pub seed: i64,
    /// Every other argument by destination.
    pub extra: BTreeMap<String, Value>,
}

impl BenchArgs {
    /// Whether the copy makes its batches in memory where its script reads files
    /// (`mlbench run --synthetic-data` marks such copies `synthetic_data: true`).
    pub fn synthetic_data(&self) -> bool {
        matches!(self.extra.get(SYNTHETIC_DATA), Some(Value::Bool(true)))
    }
}

/// The argument that marks a copy run on batches made in memory, in its plan and its
/// entries (as `smoke` marks a smoke run): another configuration, so another `unique_id`.
pub const SYNTHETIC_DATA: &str = "synthetic_data";

/// Where a copy's batches come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataSource {
    /// Made in memory as the bench's script makes them: it reads no data set (toy_reg,
    /// cart, atari, scaling).
    Generated,
    /// Read from the data set's files, as the script reads them.
    Files,
    /// Made in memory where the script reads files: `--synthetic-data`. Its entries say
    /// `synthetic_data: true`.
    Synthetic,
}

/// Why a bench could not be built or stepped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BenchError {
    /// No bench of this name.
    #[error("no bench named `{0}` in this runner")]
    Unknown(String),
    /// An argument the bench cannot use.
    #[error("{bench}: {message}")]
    Argument {
        /// The bench.
        bench: String,
        /// What is wrong.
        message: String,
    },
    /// The device cannot run it (e.g. fp16 on a CPU without support).
    #[error("{bench}: {message}")]
    Device {
        /// The bench.
        bench: String,
        /// What is missing.
        message: String,
    },
    /// A failure while training.
    #[error("{bench}: {message}")]
    Failed {
        /// The bench.
        bench: String,
        /// What happened.
        message: String,
    },
}

/// Observations the suite drops before averaging a stage (`skip_obs`).
pub const SKIP_OBS: u64 = 10;

/// What a script logs at one point of its loop (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Logs {
    /// `log_batch_loss(value)`: `None` where the script logs none.
    pub loss: Option<f64>,
    /// `log_epoch_loss(value)`.
    pub epoch_loss: Option<f64>,
    /// `log_metric(name, value)`, in the order logged.
    pub metrics: Vec<(&'static str, f64)>,
    /// Durations (s) of the script's `chrono.time(name)` blocks other than `train`.
    pub stages: Vec<(&'static str, f64)>,
}

impl Logs {
    /// A batch loss and nothing else (most scripts' step).
    pub fn loss(value: f64) -> Logs {
        Logs {
            loss: Some(value),
            ..Logs::default()
        }
    }

    /// Nothing logged (a step of dcgan, loader, translator before its metrics).
    pub fn none() -> Logs {
        Logs::default()
    }

    /// With `log_metric(name, value)`.
    pub fn metric(mut self, name: &'static str, value: f64) -> Logs {
        self.metrics.push((name, value));
        self
    }

    /// With the duration of the stage `name`.
    pub fn stage(mut self, name: &'static str, seconds: f64) -> Logs {
        self.stages.push((name, seconds));
        self
    }

    /// With `log_epoch_loss(value)`.
    pub fn epoch_loss(mut self, value: f64) -> Logs {
        self.epoch_loss = Some(value);
        self
    }

    /// The first logged value that is not finite: (what it is, its value). A loss is
    /// `batch_loss`, an epoch loss `epoch_loss`, a metric its name.
    pub fn first_nonfinite(&self) -> Option<(&'static str, f64)> {
        let loss = self.loss.map(|v| ("batch_loss", v));
        let epoch = self.epoch_loss.map(|v| ("epoch_loss", v));
        loss.into_iter()
            .chain(epoch)
            .chain(self.metrics.iter().copied())
            .find(|(_, v)| !v.is_finite())
    }
}

/// One bench instance on one device. Only [`Bench::step`] and [`Bench::sync`] are
/// required; the observation hooks default to doing and logging nothing.
pub trait Bench: Send {
    /// Trains on one batch; returns what the script logs for it (a NaN loss is reported,
    /// not an error).
    fn step(&mut self) -> Result<Logs, BenchError>;
    /// Waits for the device to finish queued work (no-op on CPU).
    fn sync(&self);
    /// Inside the timed region, before the first step of observation `observation`.
    fn begin_observation(&mut self, _observation: u64) -> Result<(), BenchError> {
        Ok(())
    }
    /// Inside the timed region, after the last step of the observation.
    fn end_observation(&mut self, _observation: u64) -> Result<Logs, BenchError> {
        Ok(Logs::none())
    }
    /// After the `train` timer stopped (its duration `train_seconds`): untimed work with
    /// stages of its own (wlm's `eval` and `all`, reso's test).
    fn after_observation(
        &mut self,
        _observation: u64,
        _train_seconds: f64,
    ) -> Result<Logs, BenchError> {
        Ok(Logs::none())
    }
    /// Observations the stage `name` drops before averaging (the script's `skip_obs`).
    fn skip_obs(&self, _stage: &str) -> u64 {
        SKIP_OBS
    }
}

/// Builds benches by name.
pub trait BenchFactory: Sync {
    /// A bench `name` with `args` on `device`.
    fn create(
        &self,
        name: &str,
        args: &BenchArgs,
        device: DeviceSpec,
    ) -> Result<Box<dyn Bench>, BenchError>;
    /// The source text of the bench's model: its SHA-256 gives the report's `version`.
    fn source(&self, name: &str) -> Option<&'static str>;
    /// The device's name (the CUDA device's, as `torch.cuda.get_device_name`; the CPU model
    /// for CPU devices). The report records it as `gpu` only for a copy whose `cuda` is
    /// true, as the suite does.
    fn device_name(&self, device: DeviceSpec) -> String;
    /// A profiler of the operators this factory's benches run on `device`
    /// (`mlbench run --profile`); `None` where it has none.
    fn profiler(&self, _device: DeviceSpec) -> Option<Box<dyn Profiler>> {
        None
    }
    /// Observations the bench's script times for `--repeat R` (docs/suite.md#statstream): `R`,
    /// except where a script's loop differs (wlm's `range(1, repeat)` times `R − 1`,
    /// [`crate::scripts::observations`], which the plan checks too).
    fn observations(&self, name: &str, repeat: i64) -> i64 {
        crate::scripts::observations(name, repeat)
    }
    /// Where the copy's batches come from ([`DataSource`]): its entries say
    /// `synthetic_data: true` for [`DataSource::Synthetic`]. The default: made in memory
    /// as the script makes them.
    fn data_source(&self, _name: &str, _args: &BenchArgs) -> DataSource {
        DataSource::Generated
    }
    /// The batch size the bench's script records and counts items by (`train_item`): the
    /// jobs file's `--batch-size`, except where a script scales it
    /// (docs/suite.md#scripts-that-differ: conv_distributed multiplies it by its device
    /// count, dcgan by `--ngpu`).
    fn batch_size(&self, _name: &str, args: &BenchArgs) -> i64 {
        args.batch_size
    }
    /// One rank of a data-parallel world (`scaling`, [`crate::scaling`]): trains with the
    /// other ranks of `rendezvous` on `device` and returns what it timed, its timed steps
    /// marked on `window` (rank 0's is the world's telemetry window). The default: this
    /// factory has no such bench.
    fn rank(
        &self,
        name: &str,
        _args: &BenchArgs,
        _device: DeviceSpec,
        _rendezvous: &crate::rendezvous::Rendezvous,
        _window: &mut dyn TimedWindow,
    ) -> Result<RankTiming, BenchError> {
        Err(BenchError::Unknown(name.to_owned()))
    }
}

/// What one rank of a data-parallel world timed: `steps` steps of `items` items each over
/// the whole world (the global batch) in `seconds`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RankTiming {
    /// Steps timed.
    pub steps: u64,
    /// Items per step over every rank.
    pub items: u64,
    /// Their duration.
    pub seconds: f64,
}

impl RankTiming {
    /// Items per second over the world, as micro_bench.py's `speed`.
    pub fn speed(&self) -> f64 {
        (self.steps * self.items) as f64 / self.seconds
    }
}

/// The edges of a loop's timed part, for telemetry (`timing::measure_within`, a
/// data-parallel rank's timed steps).
pub trait TimedWindow {
    /// Just before the clock is read at the start of the first counted observation.
    fn start(&mut self);
    /// Just after the clock is read at the end of the last observation.
    fn end(&mut self);
}

/// Records what a copy's thread runs between [`Profiler::start`] and [`Profiler::stop`]
/// (libtorch's profiler for the tch models).
pub trait Profiler {
    /// Starts recording on this thread.
    fn start(&mut self) -> Result<(), String>;
    /// Stops, and writes the record as a Chrome trace to `path`.
    fn stop(&mut self, path: &std::path::Path) -> Result<(), String>;
}

/// No window marked.
impl TimedWindow for () {
    fn start(&mut self) {}
    fn end(&mut self) {}
}
