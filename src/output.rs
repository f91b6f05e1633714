//! Where results go: standard output, or a file checked before the work and never
//! overwritten by accident, written beside and renamed into place. The policy and the
//! writing are `mlbench_schema::destination`'s. A refusal is exit 2; a failure to write
//! once the work is done is exit 3 (docs/exit-codes.md).

pub use mlbench_schema::destination::{
    DestinationError, OutputError, WriteError, WriteFileError, check_file, check_files,
    check_folder, create_dir, is_broken_pipe, to_stdout, write_file,
};
