//! What a benchmark is to the runner: something that trains one batch at a time on a
//! device and says its loss. The models (feature `tch`) implement it; tests use fakes.

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

/// One bench instance on one device.
pub trait Bench: Send {
    /// Trains on one batch; returns its loss (NaN is reported, not an error).
    fn step(&mut self) -> Result<f64, BenchError>;
    /// Waits for the device to finish queued work (no-op on CPU).
    fn sync(&self);
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
    /// The device name the report records as `gpu` (e.g. the CPU model for CPU devices).
    fn device_name(&self, device: DeviceSpec) -> String;
    /// Observations the bench's script times for `--repeat R` (spec §5.3): `R`, except
    /// where a script's loop differs (wlm's `range(1, repeat)` times `R − 1`).
    fn observations(&self, _name: &str, repeat: i64) -> i64 {
        repeat
    }
    /// The batch size the bench's script records and counts items by (`train_item`): the
    /// jobs file's `--batch-size`, except where a script scales it (spec §5.6:
    /// conv_distributed multiplies it by its device count, dcgan by `--ngpu`).
    fn batch_size(&self, _name: &str, args: &BenchArgs) -> i64 {
        args.batch_size
    }
}
