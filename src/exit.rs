//! The exit-code policy, in one place (docs/exit-codes.md): 0 ok; 1 findings, or failed
//! criteria; 2 usage, or input that cannot be read; 3 an output that could not be
//! written, or an internal error.
//!
//! Every error a command can end with is a variant of [`CommandError`]. Each library says
//! the class of its own errors (`mlbench_schema::class::Classify`, variant by variant
//! where they differ); [`CommandError::code`] asks it, in one exhaustive `match`, so an
//! error type that is not a variant cannot reach `main`. What the user can do about an
//! error, in the command line's words, is [`CommandError::hint`].

use crate::output::{DestinationError, OutputError, WriteError, WriteFileError};
use mlbench_analyzer::compare::CompareError;
use mlbench_analyzer::{AnalyzeError, GridError, LoadError};
use mlbench_schema::class::{Classify, ErrorClass};
use mlbench_schema::suite::SuiteError;
use mlbench_schema::targets::TargetsError;
use mlbench_submission::DiscoverError;
use mlbench_validator::PackError;
#[cfg(feature = "runner")]
use {mlbench_runner::session::RunError, mlbench_runner::setup::SetupError};

/// How a command ended, when it did not fail outright.
pub enum Outcome {
    /// Everything passed (exit 0).
    Ok,
    /// Criteria failed or findings were made (exit 1).
    Failed,
    /// The submission could not be read at all, though the command said what it found
    /// (`validate`'s document with its `archive.unreadable` finding; exit 2).
    Unreadable,
}

impl Outcome {
    /// The exit status.
    pub fn code(&self) -> u8 {
        match self {
            Outcome::Ok => 0,
            Outcome::Failed => ErrorClass::Failed.code(),
            Outcome::Unreadable => ErrorClass::Input.code(),
        }
    }

    /// [`Outcome::Failed`] if `failed`, else [`Outcome::Ok`].
    pub fn failed_if(failed: bool) -> Outcome {
        if failed { Outcome::Failed } else { Outcome::Ok }
    }
}

/// [`CommandError`]: the binary's own variants, then one per library error (`$variant`
/// of `$error`), shown as the library says it; [`CommandError::code`] asks the library for
/// its class, in one exhaustive `match`.
macro_rules! command_error {
    ($($(#[cfg($cfg:meta)])? $variant:ident($error:ty),)*) => {
        /// Every error that can end a command (not to be confused with the models'
        /// `Failure`, a failed bench entry).
        #[derive(Debug, thiserror::Error)]
        pub enum CommandError {
            /// Arguments that clap accepts but the command cannot use.
            #[error("{0}")]
            Usage(String),
            /// Input that cannot be used, as the binary finds it (unreadable entries, say).
            #[error("{0}")]
            Input(String),
            /// A destination refused before any work (exists, a folder, a device, no parent).
            #[error("{}", refusal(.0))]
            Destination(#[from] DestinationError),
            /// `--devices` that this machine cannot give.
            #[cfg(feature = "runner")]
            #[error("--devices: {0}")]
            Devices(#[from] mlbench_runner::devices::DevicesError),
            /// `--devices` of `--slurm`.
            #[cfg(feature = "runner")]
            #[error("--devices (with --slurm): {0}")]
            NodeDevices(#[from] mlbench_runner::slurm::NodeDevicesError),
            /// The internal `--copy` of a child process.
            #[cfg(feature = "runner")]
            #[error("--copy {0}")]
            Copy(#[from] mlbench_runner::copies::CopyError),
            $($(#[cfg($cfg)])? #[error(transparent)] $variant(#[from] $error),)*
        }

        impl CommandError {
            /// The exit status of this failure (docs/exit-codes.md): its library's class.
            pub fn code(&self) -> u8 {
                let library: &dyn Classify = match self {
                    CommandError::Usage(_)
                    | CommandError::Input(_)
                    | CommandError::Destination(_) => return ErrorClass::Input.code(),
                    #[cfg(feature = "runner")]
                    CommandError::Devices(e) => e,
                    #[cfg(feature = "runner")]
                    CommandError::NodeDevices(e) => e,
                    #[cfg(feature = "runner")]
                    CommandError::Copy(e) => e,
                    $($(#[cfg($cfg)])? CommandError::$variant(e) => e,)*
                };
                library.class().code()
            }
        }
    };
}

command_error! {
    // A file that could not be written; standard output, a folder or a page.
    Write(WriteError),
    Output(OutputError),
    // The report files could not be found or listed; a targets file or GPU model, a jobs
    // file that cannot be used.
    Discover(DiscoverError),
    Targets(TargetsError),
    Jobs(mlbench_schema::jobs::JobsError),
    // A submission that cannot be opened, or whose reports cannot be loaded.
    Intake(mlbench_validator::IntakeError),
    Load(LoadError),
    // The benchmark's git repository (or the map of its scripts) cannot be used.
    #[cfg(feature = "git")]
    Repo(mlbench_validator::repo::RepoError),
    // A folder not packed, or a zip not made.
    Pack(PackError),
    // Statistics, comparisons, grids, weights and series of sizes that cannot be made.
    Analyze(AnalyzeError),
    Compare(CompareError),
    Grid(GridError),
    Weights(mlbench_analyzer::grid::weights::WeightsError),
    Scaling(mlbench_analyzer::scaling::ScalingError),
    OneHost(mlbench_analyzer::fleet::OneHost),
    // A data set that could not be written (`data prepare`).
    Data(mlbench_datasets::DataError),
    // A presentation that could not be made (a chart that cannot be drawn).
    Export(mlbench_export::ExportError),
    // The compiled-in parity table (baselines/parity.toml) does not read: a bug.
    Parity(mlbench_schema::runtime::ParityError),
    // Telemetry files that cannot be found or read (`plot power`).
    Trace(mlbench_analyzer::energy::TraceError),
    // Targets that cannot be made from a submission.
    MakeTargets(mlbench_analyzer::targets::MakeTargetsError),
    // A store of rounds that cannot be used, or a request it refuses.
    Archive(mlbench_archive::ArchiveError),
    // A history, a site or its verification that cannot be made.
    Site(mlbench_site::SiteError),
    // A run that could not be made or followed.
    #[cfg(feature = "runner")]
    Run(mlbench_runner::session::RunError),
}

impl CommandError {
    /// What the user can do about it, in the command line's words (the libraries never
    /// name a flag).
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            CommandError::Pack(PackError::Refused { validation, .. })
                if !validation.unreadable() =>
            {
                Some(
                    "fix them, waive them with --waive RULE[:FILE], or pack anyway with \
                     --allow-errors (SUBMISSION.json then records the errors)",
                )
            }
            CommandError::Analyze(AnalyzeError::TooFewRuns { .. }) => {
                Some("add runs, or ask for fewer with --min-runs N")
            }
            CommandError::Compare(
                CompareError::LabelSyntax(_)
                | CompareError::LabelEmpty(_)
                | CompareError::LabelledTwice { .. }
                | CompareError::LabelNotGiven { .. }
                | CompareError::SameLabel { .. },
            ) => Some("name each submission once with --label NAME=SUB (SUB as given)"),
            CommandError::Compare(CompareError::Explain(_))
            | CommandError::Compare(CompareError::Grid(GridError::NoOverall(_))) => {
                Some("--explain A,B names two rows of the grid, each with an overall figure")
            }
            CommandError::Compare(CompareError::MixedRuntimes { .. }) => Some(
                "compare them anyway with --allow-mixed-runtimes (their cells are marked), or \
                 score mlbench run submissions against targets made by `mlbench targets --from`",
            ),
            CommandError::Targets(TargetsError::UnknownModel { .. })
            | CommandError::Compare(CompareError::Targets(TargetsError::UnknownModel { .. })) => {
                Some("give your own targets with --targets FILE (TOML or the suite's CSV)")
            }
            CommandError::Discover(DiscoverError::Suite {
                error: SuiteError::Several { .. },
                ..
            })
            | CommandError::Load(LoadError::Suite {
                error: SuiteError::Several { .. },
                ..
            })
            | CommandError::Load(LoadError::Discover(DiscoverError::Suite {
                error: SuiteError::Several { .. },
                ..
            }))
            | CommandError::Compare(CompareError::Load(LoadError::Suite {
                error: SuiteError::Several { .. },
                ..
            })) => Some("choose the suite with --name NAME"),
            #[cfg(feature = "runner")]
            CommandError::Run(RunError::Setup(SetupError::EarlierReports { .. })) => {
                Some("choose another --out-dir, or add to them with --append")
            }
            #[cfg(feature = "runner")]
            CommandError::Run(RunError::Setup(SetupError::OtherJobsFile(_))) => {
                Some("choose another --out-dir")
            }
            _ => None,
        }
    }
}

impl From<WriteFileError> for CommandError {
    fn from(e: WriteFileError) -> Self {
        match e {
            WriteFileError::Refused(e) => CommandError::Destination(e),
            WriteFileError::Failed(e) => CommandError::Write(e),
            WriteFileError::Folder(e) => CommandError::Output(e),
        }
    }
}

/// The one message of a refused destination: an existing file says how to replace it.
fn refusal(e: &DestinationError) -> String {
    match e {
        DestinationError::Exists(_) => format!("{e} (use --force to replace it)"),
        _ => e.to_string(),
    }
}

/// docs/exit-codes.md, whose per-command table is the one source of each `--help`'s
/// exit paragraph.
const DOCS: &str = include_str!("../docs/exit-codes.md");

/// What codes 0 to 3 mean for `command`, as the docs' table says (`—`: not used).
pub fn meanings(command: &str) -> Option<[&'static str; 4]> {
    let row = format!("| `{command}` | ");
    let line = DOCS.lines().find(|l| l.starts_with(&row))?;
    let cells: Vec<&str> = line[row.len()..]
        .trim_end_matches(" |")
        .split(" | ")
        .collect();
    cells.try_into().ok()
}

/// The one exit paragraph of a command's `--help` (the top level's when `None`).
pub fn help(command: Option<&str>) -> String {
    let Some(codes) = command.and_then(meanings) else {
        return include_str!("help/exit.txt").to_owned();
    };
    let mut text = String::from("Exit status:");
    for (code, meaning) in codes.iter().enumerate().filter(|(_, m)| **m != "—") {
        text.push_str(&format!("\n  {code}  {}", meaning.replace('`', "")));
    }
    text.push_str("\n(docs/exit-codes.md)");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each command's help lists its codes from the docs' table, 2 and 3 always.
    #[test]
    fn every_command_help_has_codes_2_and_3() {
        let commands = [
            "report",
            "validate",
            "pack",
            "grid",
            "plot",
            "targets",
            "run",
            "data",
            "completions",
            "man",
        ];
        for command in commands {
            let text = help(Some(command));
            assert!(
                text.contains("\n  0  ") && text.contains("\n  2  "),
                "{text}"
            );
            assert!(text.contains("\n  3  "), "{command}: {text}");
            assert_eq!(text.matches("Exit status").count(), 1);
        }
        assert_eq!(meanings("grid").map(|m| m[1]), Some("—"));
        assert!(!help(Some("grid")).contains("\n  1  "));
        assert!(meanings("nope").is_none());
        assert!(help(None).contains("3 an output"));
    }
}
