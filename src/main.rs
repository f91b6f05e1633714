//! mlbench: the command-line front end. Parses arguments, calls the library crates,
//! prints, and turns errors into messages and exit codes (src/exit.rs,
//! docs/exit-codes.md: 0 ok, 1 failed criteria or findings, 2 usage or unreadable input,
//! 3 an output that could not be written or an internal error).

mod cli;
mod cmd;
mod exit;
mod output;

use exit::Outcome;

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
            return ExitCode::from(if e.use_stderr() { exit::INPUT } else { 0 });
        }
    };
    #[cfg(feature = "runner")]
    let runs_models = matches!(cli.command, cli::Command::Run(_));
    #[cfg(not(feature = "runner"))]
    let runs_models = false;
    if !runs_models {
        no_huge_pages();
    }
    let result = match cli.command {
        cli::Command::Report(args) => cmd::report::run(&args),
        cli::Command::Validate(args) => cmd::validate::run(&args),
        cli::Command::Pack(args) => cmd::pack::run(&args),
        cli::Command::Grid(args) => cmd::grid::run(&args),
        cli::Command::Plot(args) => cmd::plot::run(&args),
        cli::Command::Completions(args) => cmd::docs::completions(&args, command()),
        cli::Command::Man(args) => cmd::docs::man(&args, command()),
        #[cfg(feature = "runner")]
        cli::Command::Run(args) => cmd::run::run(&args),
    };
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Failed) => ExitCode::from(exit::FAILED),
        Err(e) if is_broken_pipe(&e.error) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", e.error);
            for cause in e.error.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(e.code)
        }
    }
}

/// Parses the command line.
fn parse_args() -> Result<cli::Cli, clap::Error> {
    use clap::FromArgMatches;
    cli::Cli::from_arg_matches(&command().try_get_matches()?)
}

/// The clap command; every command's help ends with where the exit codes are.
fn command() -> clap::Command {
    use clap::CommandFactory;
    let with_codes = |help: Option<&clap::builder::StyledStr>| {
        let help = help.map(|h| h.to_string()).unwrap_or_default();
        let sep = if help.is_empty() { "" } else { "\n\n" };
        format!("{help}{sep}{}", exit::HELP)
    };
    let command = cli::Cli::command();
    let top = with_codes(command.get_after_help());
    command.after_help(top).mut_subcommands(|sub| {
        let help = with_codes(sub.get_after_help());
        sub.after_help(help)
    })
}

/// `mlbench … | head` closes the pipe early: that is not an error.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
