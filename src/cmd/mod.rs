//! One module per command: arguments → options → library calls → exporter → output.
//! No command module imports another; what two share is here or in `checks`.

mod checks;
pub mod docs;
pub mod grid;
pub mod pack;
pub mod plot;
pub mod report;
#[cfg(feature = "runner")]
pub mod run;
pub mod validate;

use crate::output;
use mlbench_export::Exporter;
use mlbench_results::{Provenance, SubmissionCheck};
use std::path::{Path, PathBuf};

/// Presents `model` with `exporter` and writes the bytes (standard output without a path).
pub fn write<M: ?Sized>(
    exporter: &dyn Exporter<M>,
    model: &M,
    path: Option<&Path>,
    force: bool,
) -> anyhow::Result<()> {
    output::emit_bytes(&exporter.export(model)?, path, force)
}

/// The provenance of a page: this tool, the command line and the SHA-256 of every input.
pub fn provenance(inputs: &[PathBuf]) -> anyhow::Result<Provenance> {
    Ok(Provenance {
        tool: format!("mlbench {}", env!("CARGO_PKG_VERSION")),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        inputs: mlbench_validator::pack::input_digests(inputs)?,
        generated: None,
    })
}

/// Each input that is a whole submission (a folder or a zip), validated with the default
/// rules and `min_runs`, for a page.
pub fn checks_of_inputs(
    inputs: &[PathBuf],
    min_runs: usize,
) -> anyhow::Result<Vec<SubmissionCheck>> {
    use mlbench_validator::{Limits, Options, read_submission, validate};
    let options = Options {
        min_runs,
        ..Options::default()
    };
    let mut checks = Vec::new();
    for path in inputs {
        if path.is_dir() || path.extension().is_some_and(|e| e == "zip") {
            let intake = read_submission(path, &Limits::default())?;
            checks.push(SubmissionCheck {
                label: path.display().to_string(),
                validation: validate(&intake, &options),
            });
        }
    }
    Ok(checks)
}
