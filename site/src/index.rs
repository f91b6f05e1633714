//! The site's index (`index.json`, schema_version 1): what was published, from which
//! store entries, with which options: all that `verify` needs, beside the zips, to make
//! every page again.

use mlbench_archive::Entry;
use serde::{Deserialize, Serialize};

/// The layout version of `index.json` and of the site's folders (docs/archive.md).
pub const SITE_SCHEMA_VERSION: u32 = 1;

/// How the figures of a site are computed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SiteOptions {
    /// Bootstrap resamples of every interval.
    pub resamples: usize,
    /// The seed of every stream.
    pub seed: u64,
    /// The confidence level.
    pub level: f64,
    /// The GPU model whose targets the report pages compare with.
    pub gpu_model: String,
}

impl Default for SiteOptions {
    /// `grid`'s bootstrap (2000 resamples, seed 2019, 95 %) and the RTX targets.
    fn default() -> Self {
        SiteOptions {
            resamples: mlbench_analyzer::grid::DEFAULT_RESAMPLES,
            seed: mlbench_analyzer::grid::DEFAULT_SEED,
            level: mlbench_analyzer::grid::DEFAULT_LEVEL,
            gpu_model: "RTX".into(),
        }
    }
}

/// One published submission: what the store's index says of it, and where the site
/// keeps it and what was made of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SiteEntry {
    /// Its id in the store.
    pub id: i64,
    /// The SHA-256 of its zip.
    pub sha256: String,
    /// The zip's size.
    pub bytes: u64,
    /// Its round.
    pub round: String,
    /// The vendor's label.
    pub label: String,
    /// Its track.
    pub track: String,
    /// Its GPUs in a few words.
    pub gpus: Option<String>,
    /// Its runtime in a few words.
    pub runtime: Option<String>,
    /// Its validation passed (as archived).
    pub passed: bool,
    /// The tool that archived it.
    pub tool: String,
    /// The day it was received.
    pub received: String,
    /// The day it could be published (`None`: at once).
    pub released: Option<String>,
    /// The zip, in the site.
    pub zip: String,
    /// Its report page and the page's JSON.
    pub page: String,
    /// The report's JSON.
    pub json: String,
    /// Its jobs files and machine descriptions, copied out of the zip.
    pub files: Vec<String>,
}

impl SiteEntry {
    /// The entry of a store's `e`, before its files are known.
    pub fn of(e: &Entry) -> SiteEntry {
        let base = format!("submissions/{}", e.sha256);
        SiteEntry {
            id: e.id,
            sha256: e.sha256.clone(),
            bytes: e.bytes,
            round: e.round.clone(),
            label: e.label.clone(),
            track: e.track.clone(),
            gpus: e.gpus.clone(),
            runtime: e.runtime.clone(),
            passed: e.passed,
            tool: e.tool.clone(),
            received: e.received.clone(),
            released: e.released.clone(),
            zip: format!("zips/{}.zip", e.sha256),
            page: format!("{base}/index.html"),
            json: format!("{base}/report.json"),
            files: Vec::new(),
        }
    }

    /// What it ran on, as the history's series are keyed.
    pub fn hardware(&self) -> String {
        self.gpus
            .clone()
            .unwrap_or_else(|| "unknown hardware".into())
    }

    /// `label`, or `label/tweaked`: its row in the round's grid.
    pub fn row(&self) -> String {
        match self.track.as_str() {
            "baseline" => self.label.clone(),
            track => format!("{}/{track}", self.label),
        }
    }
}

/// One round of the site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SiteRound {
    /// The round's name.
    pub round: String,
    /// Its grid page.
    pub page: String,
    /// Its grid's JSON.
    pub json: String,
    /// Its submissions, by label then track.
    pub entries: Vec<SiteEntry>,
}

/// `index.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SiteIndex {
    /// [`SITE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The mlbench that published it.
    pub tool: String,
    /// The day it was published for: submissions released after it are left out.
    pub now: String,
    /// How its figures were computed.
    pub options: SiteOptions,
    /// Submissions not yet released on `now`: left out.
    pub unreleased: usize,
    /// Submissions removed from the store: left out.
    pub removed: usize,
    /// The rounds, in order.
    pub rounds: Vec<SiteRound>,
    /// The history page and its JSON.
    pub history: [String; 2],
}

impl SiteIndex {
    /// Every entry, round by round.
    pub fn entries(&self) -> impl Iterator<Item = &SiteEntry> {
        self.rounds.iter().flat_map(|r| &r.entries)
    }
}
