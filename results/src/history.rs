//! `mlbench history`: each label × hardware × bench across the rounds of a store, with
//! the figure's bootstrap interval per round and the change from one round to the next
//! (docs/archive.md, "History"). Plain data; the analyzer computes it.

use serde::Serialize;

/// The history JSON's layout version (docs/archive.md).
pub const HISTORY_SCHEMA_VERSION: u32 = 1;

/// Every series of a store's rounds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct History {
    /// [`HISTORY_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The rounds, in order (text, digits compared as numbers).
    pub rounds: Vec<String>,
    /// Bootstrap resamples of every interval.
    pub resamples: usize,
    /// The seed of every bootstrap stream.
    pub seed: u64,
    /// The confidence level of every interval.
    pub level: f64,
    /// One series per label × track × hardware × bench, sorted so.
    pub series: Vec<HistorySeries>,
    /// The changes whose interval excludes 1, in series order.
    pub flagged: usize,
    /// What was left out, and why.
    pub notes: Vec<String>,
}

/// One label × track × hardware × bench.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistorySeries {
    /// The vendor's label.
    pub label: String,
    /// Its track.
    pub track: String,
    /// What it ran on, in a few words (`2 × TITAN RTX`).
    pub hardware: String,
    /// The bench.
    pub bench: String,
    /// One point per round the series has a figure in, in round order.
    pub points: Vec<HistoryPoint>,
}

/// A series' figure in one round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryPoint {
    /// The round.
    pub round: String,
    /// The SHA-256 of the zip it was computed from.
    pub sha256: String,
    /// The mean throughput over every usable sample (GPUs × runs).
    pub mean: f64,
    /// Its percentile bootstrap interval (runs resampled within GPUs).
    pub ci: [f64; 2],
    /// Samples pooled.
    pub n: usize,
    /// GPUs they ran on.
    pub gpus: usize,
    /// The change from the series' previous point (`None` for its first).
    pub change: Option<Change>,
}

/// The change between two consecutive points of a series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The earlier round.
    pub from: String,
    /// This round's mean ÷ the earlier round's.
    pub ratio: f64,
    /// Its percentile interval over the paired resamples (resample k of this round ÷
    /// resample k of the earlier one).
    pub ci: [f64; 2],
    /// Whether the interval excludes 1.
    pub flagged: bool,
    /// `up` or `down` when flagged.
    pub direction: Option<String>,
    /// (ratio − 1) in percent.
    pub percent: f64,
}

impl Change {
    /// `↑ +12.3 %`, `↓ −4.0 %`, or empty when not flagged.
    pub fn flag_text(&self) -> String {
        match self.direction.as_deref() {
            Some("up") => format!("↑ +{:.1} %", self.percent),
            Some(_) => format!("↓ −{:.1} %", -self.percent),
            None => String::new(),
        }
    }
}
