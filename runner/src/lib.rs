//! `mlbench run`: execute a jobs file and write reports in the suite's legacy format.
#![warn(missing_docs)]

pub mod bench;

pub use bench::{Bench, BenchArgs, BenchError, BenchFactory, DeviceSpec};
