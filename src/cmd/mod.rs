//! One module per command: arguments → options → library calls → exporter → output.
//! No command module imports another; what two share is here or in `checks`.

pub mod archive;
mod checks;
pub mod data;
pub mod docs;
pub mod grid;
pub mod pack;
pub mod plot;
pub mod report;
#[cfg(feature = "runner")]
pub mod run;
pub mod site;
pub mod targets;
pub mod validate;

use crate::exit::CommandError;
use crate::output;
use mlbench_export::Exporter;
use mlbench_results::Provenance;
use std::path::Path;

/// Presents `model` with `exporter` and writes the bytes (standard output without a path).
pub fn write<M: ?Sized>(
    exporter: &dyn Exporter<M>,
    model: &M,
    path: Option<&Path>,
    force: bool,
) -> Result<(), CommandError> {
    emit_bytes(&exporter.export(model)?, path, force)
}

/// Writes `bytes` to `path`, or to standard output when there is none.
pub fn emit_bytes(bytes: &[u8], path: Option<&Path>, force: bool) -> Result<(), CommandError> {
    match path {
        Some(path) => Ok(output::write_file(bytes, path, force)?),
        None => Ok(output::to_stdout(bytes)?),
    }
}

/// The provenance of a page: this tool, the command line and the SHA-256 of every input
/// (`digests`, from the submissions the command opened).
pub fn provenance(digests: Vec<(String, String)>) -> Provenance {
    Provenance {
        tool: tool(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        inputs: digests,
        generated: None,
    }
}

/// Whether verdicts are coloured: standard output is a terminal and `NO_COLOR` is unset
/// or empty (no-color.org).
pub fn colour_on_stdout() -> bool {
    use std::io::IsTerminal;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stdout().is_terminal()
}

/// This tool and its version, as `SUBMISSION.json` and the pages name it.
pub fn tool() -> String {
    format!("mlbench {}", env!("CARGO_PKG_VERSION"))
}
