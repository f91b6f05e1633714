//! mlbench: the command-line front end. Parses arguments, calls the library crates,
//! prints, and turns errors into messages and exit codes (src/exit.rs,
//! docs/exit-codes.md: 0 ok, 1 failed criteria or findings, 2 usage or unreadable input,
//! 3 an output that could not be written or an internal error).

mod cli;
mod cmd;
mod exit;
mod output;

use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// No transparent huge pages for this process: the kernel zeroes 2 MiB at the first touch
/// of each, a third of `report`'s time on a large submission whose working set is a few
/// MiB per thread (docs/performance.md). mimalloc is built not to ask for them (`no_thp`);
/// this also covers systems whose THP mode is `always`. Not for `run`: libtorch's large
/// tensors are what huge pages are for.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and changes only the paging policy
    // of this process; it cannot touch Rust-visible memory. A failure (old kernel) is
    // harmless and ignored.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

fn main() -> ExitCode {
    let cli = match parse_args() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout (exit 0) and usage errors to stderr (2).
            let _ = e.print();
            #[cfg(not(feature = "runner"))]
            if e.use_stderr() && names_run(std::env::args_os()) {
                eprintln!("note: {RUNNER_MISSING}");
            }
            let usage = mlbench_schema::class::ErrorClass::Input.code();
            return ExitCode::from(if e.use_stderr() { usage } else { 0 });
        }
    };
    let runs_models = cfg!(feature = "runner") && matches!(cli.command, cli::Command::Run(_));
    if !runs_models {
        no_huge_pages();
    }
    let result = match cli.command {
        cli::Command::Report(args) => cmd::report::run(&args),
        cli::Command::Validate(args) => cmd::validate::run(&args),
        cli::Command::Pack(args) => cmd::pack::run(&args),
        cli::Command::Grid(args) => cmd::grid::run(&args),
        cli::Command::Plot(args) => cmd::plot::run(&args),
        cli::Command::Targets(args) => cmd::targets::run(&args),
        cli::Command::Data(args) => cmd::data::run(&args),
        cli::Command::Archive(args) => cmd::archive::run(&args),
        cli::Command::History(args) => cmd::site::history(&args),
        cli::Command::Publish(args) => cmd::site::publish(&args),
        cli::Command::Verify(args) => cmd::site::verify(&args),
        cli::Command::Completions(args) => cmd::docs::completions(&args, cli::command()),
        cli::Command::Man(args) => cmd::docs::man(&args, cli::command()),
        #[cfg(feature = "runner")]
        cli::Command::Run(args) => cmd::run::run(&args),
        #[cfg(not(feature = "runner"))]
        cli::Command::Run(_) => Err(exit::CommandError::Usage(RUNNER_MISSING.to_owned())),
    };
    match result {
        Ok(outcome) => ExitCode::from(outcome.code()),
        // `mlbench … | head` closes the pipe early: that is not an error.
        Err(e) if output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let mut said = e.to_string();
            eprintln!("error: {said}");
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                // A wrapper that already quotes its cause (`--devices: …`) says it once.
                let text = c.to_string();
                if !said.contains(&text) {
                    eprintln!("  caused by: {text}");
                }
                said = text;
                cause = c.source();
            }
            if let Some(hint) = e.hint() {
                eprintln!("  hint: {hint}");
            }
            ExitCode::from(e.code())
        }
    }
}

/// What `mlbench run` says in a build without the runner.
#[cfg(not(feature = "runner"))]
const RUNNER_MISSING: &str = "this mlbench was built without the runner (`mlbench run` \
needs libtorch). Build it with:
    eval \"$(runner/setup-libtorch.sh ~/.cache/mlbench/libtorch)\"
    cargo build --release --features runner
(docs/runner.md)";

/// Whether the command line asks for `mlbench run` (its first word that is no option).
#[cfg(not(feature = "runner"))]
fn names_run(mut args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    args.nth(1).is_some_and(|a| a == "run")
}

/// Parses the command line.
fn parse_args() -> Result<cli::Cli, clap::Error> {
    use clap::FromArgMatches;
    let args = cli::normalize_args(std::env::args_os().collect());
    let matches = cli::command().try_get_matches_from(args)?;
    output::guard_inputs(&matches);
    cli::Cli::from_arg_matches(&matches)
}
