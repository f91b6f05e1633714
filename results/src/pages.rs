//! What the HTML pages of `report --html` and `grid --html` hold: a result, the views its
//! charts draw, each input's validation, and where the page came from.

use crate::grid::Grid;
use crate::report::{ReportDoc, SystemInfo};
use crate::validation::Validation;
use crate::views::{GpuRelative, RunMeans};

/// Where a page came from: shown at its end.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Provenance {
    /// The tool and its version, e.g. `mlbench 0.1.0`.
    pub tool: String,
    /// The command line that made the page.
    pub command: String,
    /// Input files as (path, SHA-256 hex).
    pub inputs: Vec<(String, String)>,
    /// A timestamp, if wanted; `None` keeps the page reproducible.
    pub generated: Option<String>,
}

/// One submission's validation, shown on a page.
#[derive(Debug, Clone)]
pub struct SubmissionCheck {
    /// The submission's label or path.
    pub label: String,
    /// Its validation.
    pub validation: Validation,
}

/// The report page.
#[derive(Debug, Clone)]
pub struct ReportPage {
    /// The report with its notes and intervals.
    pub doc: ReportDoc,
    /// The suite, for the title and the charts.
    pub suite: String,
    /// Per-GPU relative means (`None`: no single-GPU sample, no heatmap).
    pub gpus: Option<GpuRelative>,
    /// Per-run means of every bench against the targets.
    pub runs: Vec<RunMeans>,
    /// The GPU model of the targets.
    pub gpu_model: String,
    /// Each whole submission among the inputs, validated.
    pub checks: Vec<SubmissionCheck>,
    /// One power trace per bench where the inputs hold telemetry (its first run
    /// folder's: `mlbench_analyzer::energy::traces::one_per_bench`).
    pub power: Vec<crate::trace::Trace>,
    /// Where the page came from.
    pub provenance: Provenance,
}

/// The grid page.
#[derive(Debug, Clone)]
pub struct GridPage {
    /// The grid.
    pub grid: Grid,
    /// Each submission, validated.
    pub checks: Vec<SubmissionCheck>,
    /// Each submission's machines (label, its `system.json`s), in the order given.
    pub systems: Vec<(String, Vec<SystemInfo>)>,
    /// Where the page came from.
    pub provenance: Provenance,
}
