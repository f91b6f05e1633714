//! Where results go: standard output, or a file checked before the work and never
//! overwritten by accident (`mlbench_schema::destination` holds the policy). A refusal
//! is exit 2; a failure to write once the work is done is exit 3 (docs/exit-codes.md).

pub use mlbench_schema::destination::{
    DestinationError, WriteError, WriteFileError, check_file, check_folder,
};
use std::io::Write;
use std::path::{Path, PathBuf};

/// An output that could not be written (exit 3): standard output, a folder, a page.
#[derive(Debug, thiserror::Error)]
#[error("{}: cannot {action}", path.display())]
pub struct OutputError {
    /// The file or folder (`-` for standard output).
    pub path: PathBuf,
    /// What failed: `write`, `create`.
    pub action: &'static str,
    /// The cause.
    pub source: std::io::Error,
}

/// Guards every path argument of the command but its outputs
/// (`mlbench_schema::destination::guard_inputs`): no output may be one or lie inside one.
pub fn guard_inputs(matches: &clap::ArgMatches) {
    let args = matches.subcommand().map_or(matches, |(_, args)| args);
    let outputs = ["output", "html", "out", "out_dir", "pack"];
    let ids = args.ids().filter(|id| !outputs.contains(&id.as_str()));
    let paths = ids.filter_map(|id| args.try_get_many::<PathBuf>(id.as_str()).ok()?);
    mlbench_schema::destination::guard_inputs(paths.flatten().map(PathBuf::as_path));
}

/// [`check_file`] for each destination given.
pub fn check_files<'a>(
    paths: impl IntoIterator<Item = &'a PathBuf>,
    force: bool,
) -> Result<(), DestinationError> {
    paths.into_iter().try_for_each(|p| check_file(p, force))
}

/// Creates a folder for outputs (and its parents).
pub fn create_dir(dir: &Path) -> Result<(), OutputError> {
    std::fs::create_dir_all(dir).map_err(|source| OutputError {
        path: dir.to_path_buf(),
        action: "create",
        source,
    })
}

/// Writes `bytes` to standard output.
pub fn to_stdout(bytes: &[u8]) -> Result<(), OutputError> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|source| OutputError {
            path: "-".into(),
            action: "write",
            source,
        })
}

/// Writes `bytes` to `path` (checked again: what appeared there during the work is
/// refused as it would have been at the start).
pub fn write_file(bytes: &[u8], path: &Path, force: bool) -> Result<(), WriteFileError> {
    mlbench_schema::destination::write_file(bytes, path, force)
}
