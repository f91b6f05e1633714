//! The result models of mlbench, defined once and free of Polars: what `report`, `grid`
//! and `validate` found, the views the charts draw (power traces among them) and the HTML
//! pages' contents. The analyzer and the validator compute them; `mlbench-export`
//! presents them; the JSON of each (`docs/report-json.md`, `docs/grid-json.md`,
//! `docs/validate-json.md`) is its serde form, led by a `schema_version`.
#![warn(missing_docs)]

pub mod archive;
pub mod batch_sweep;
pub mod energy;
pub mod grid;
pub mod hardware;
pub mod history;
pub mod interval;
pub mod pages;
pub mod report;
pub mod scaling;
pub mod trace;
pub mod validation;
pub mod views;

pub use batch_sweep::BatchSweep;
pub use grid::Grid;
pub use hardware::{GpuModel, Hardware};
pub use pages::{GridPage, Provenance, ReportPage, SubmissionCheck};
pub use report::{Report, ReportDoc};
pub use scaling::Scaling;
pub use trace::Trace;
pub use validation::{
    FailedRule, Finding, Rule, RuleList, Severity, SubmissionValidity, Validation, ValidationDoc,
    Validity,
};
pub use views::{GpuRelative, LossCurve, LossGroup, RunMeans};
