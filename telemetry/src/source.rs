//! The trait every source implements, and what opening and reading one gives.

use mlbench_schema::telemetry::{Device, Values};
use std::fmt;

/// One device's readings.
///
/// A source is opened by its module's `open` (which probes what the device supports and
/// records it in the [`Device`] it describes) and then read once per sampling period by
/// the sampler's thread, hence `Send`.
pub trait Source: Send + std::fmt::Debug {
    /// What opening the source found: the device, its counter, its power reading's kind,
    /// its limit, its facts. Written to the file's header.
    fn probe(&self) -> &Device;

    /// One reading now. Never fails as a whole: a field whose read failed is left out and
    /// named in [`Reading::failed`].
    fn read(&mut self) -> Reading;
}

/// One reading of one device.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// What was read.
    pub values: Values,
    /// The fields whose read failed, with the source's words (`power_mw: GPU is lost`).
    pub failed: Vec<String>,
}

impl Reading {
    /// Records a failed read of `field`.
    pub fn fail(&mut self, field: &str, why: impl fmt::Display) {
        self.failed.push(format!("{field}: {why}"));
    }
}

/// A source that could not be opened: a recorded fact, not an error (the run goes on
/// without it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// Which source, for which device: `NVML (cuda:0)`.
    pub what: String,
    /// Why, in the source's words.
    pub reason: String,
}

impl Unavailable {
    /// `what` is not available because of `reason`.
    pub fn new(what: impl Into<String>, reason: impl fmt::Display) -> Self {
        Self {
            what: what.into(),
            reason: reason.to_string(),
        }
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: not available: {}", self.what, self.reason)
    }
}
