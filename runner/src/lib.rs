//! `mlbench run`: execute a jobs file and write reports in the suite's legacy format.
#![warn(missing_docs)]

pub mod bench;
#[cfg(feature = "tch")]
pub mod c10d;
pub mod confine;
pub mod copies;
#[cfg(feature = "tch")]
pub mod data_parallel;
#[cfg(feature = "tch")]
pub mod ddp;
pub mod devices;
pub mod execute;
#[cfg(feature = "tch")]
pub mod models;
pub mod plan;
pub mod profile;
pub mod rendezvous;
pub mod report;
pub mod scaling;
pub mod scripts;
pub mod session;
pub mod setup;
pub mod slurm;
pub mod smoke;
pub mod synthetic;
pub mod system;
pub mod telemetry;
pub mod timing;

pub use bench::{Bench, BenchArgs, BenchError, BenchFactory, DeviceSpec, Logs, RankTiming};
pub use devices::{DeviceKind, DeviceSet, DevicesError};
pub use execute::{
    CopyFailure, CopyResult, ExecuteError, ExecuteOptions, Launcher, Progress, RunOutcome, execute,
    execute_all, run_copy, write_failure,
};
pub use plan::{CopyPlan, Execution, Plan, PlanError, PlanOptions, plan, plan_runs};
pub use timing::{Clock, Measurement, RealClock, ScriptedClock};
