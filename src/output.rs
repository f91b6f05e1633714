//! Where results go: standard output, or a file checked before the work and never
//! overwritten by accident, written beside and renamed into place. The policy and the
//! writing are `mlbench_schema::destination`'s. A refusal is exit 2; a failure to write
//! once the work is done is exit 3 (docs/exit-codes.md).

#[cfg(feature = "runner")]
pub use mlbench_schema::destination::create_dir;
pub use mlbench_schema::destination::{
    DestinationError, OutputError, WriteError, WriteFileError, check_file, check_files,
    check_folder, is_broken_pipe, to_stdout, write_file, write_files,
};
use std::path::PathBuf;

/// Guards every path argument of the command but its outputs
/// (`mlbench_schema::destination::guard_inputs`): no output may be one or lie inside one.
pub fn guard_inputs(matches: &clap::ArgMatches) {
    let args = matches.subcommand().map_or(matches, |(_, args)| args);
    let outputs = ["output", "html", "out", "out_dir", "pack"];
    let ids = args.ids().filter(|id| !outputs.contains(&id.as_str()));
    let paths = ids.filter_map(|id| args.try_get_many::<PathBuf>(id.as_str()).ok()?);
    mlbench_schema::destination::guard_inputs(paths.flatten().map(PathBuf::as_path));
}
