//! Energy and telemetry beside a bench: the sources that read a device's energy counter,
//! power, utilisation, memory, temperature and clocks, the sampler thread that writes
//! them to a telemetry file ([`mlbench_schema::telemetry`]), and the arithmetic that turns
//! a file into energy per timed window (docs/telemetry.md).
//!
//! - [`Source`]: one device's readings, behind one trait; the sources are [`nvml`]
//!   (NVIDIA), [`amdsmi`] (AMD, with [`hwmon`] as its fallback), [`hwmon`] (AMD and Intel
//!   GPUs), [`cpu`] (RAPL packages, `/proc/stat` utilisation, the copy's resident memory);
//!   [`detect()`] chooses them for a run's devices. Every vendor library is loaded at run
//!   time: one that is missing or broken is a recorded fact ([`Unavailable`]), never a
//!   panic, and the crate builds without any.
//! - [`counter`]: energy from counter differences (wraps, resets, resolution) and the
//!   mean power between two readings; [`integrate`]: the trapezoid of power samples, the
//!   cross-check, the idle baseline; [`summary`]: both over each timed window of a file;
//!   [`fold`]: a file read in one pass, line by line. A bench's power over time (a
//!   chart's trace) is the analyzer's, made from these.
//! - [`Sampler`]: the thread that samples at a fixed rate on the monotonic clock, marks
//!   windows on the same clock, and writes the file (never half a file under its name).
#![warn(missing_docs)]

#[cfg(feature = "vendors")]
pub mod amdsmi;
pub mod bounds;
pub mod counter;
pub mod cpu;
#[cfg(feature = "vendors")]
pub mod detect;
pub mod duration;
mod error;
pub mod fold;
pub mod hwmon;
pub mod integrate;
#[cfg(feature = "vendors")]
pub mod nvml;
mod sampler;
mod source;
pub mod summary;

#[cfg(feature = "vendors")]
pub use detect::{DetectOptions, Detected, DeviceSpec, detect};
pub use error::TelemetryError;
pub use fold::{summarize, summarize_with_idle};
pub use sampler::{Sampler, SamplerConfig};
pub use source::{Reading, Source, Unavailable};
pub use summary::{DeviceEnergy, Summary, SummaryFlag, WindowSummary};
