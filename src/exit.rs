//! The exit-code policy, in one place (docs/exit-codes.md): 0 ok; 1 findings, or failed
//! criteria; 2 usage, or input that cannot be read; 3 an output that could not be
//! written, or an internal error.
//!
//! Every error a command can end with is a variant of [`CommandError`], and
//! [`CommandError::code`] maps each variant to its code in one exhaustive `match` (nextest's
//! `ExpectedError::process_exit_code` is the model): an error type that is not a
//! variant cannot reach `main`, and a variant without a code does not compile. Library
//! errors whose variants differ in kind are matched variant by variant, with no
//! wildcard, so a new library variant also needs its code here.

use crate::output::{DestinationError, OutputError, WriteError, WriteFileError};
use mlbench_analyzer::compare::CompareError;
use mlbench_analyzer::grid::weights::WeightsError;
use mlbench_analyzer::scaling::ScalingError;
use mlbench_analyzer::{AnalyzeError, GridError, LoadError};
use mlbench_export::ExportError;
use mlbench_schema::jobs::JobsError;
use mlbench_schema::scripts::ScriptsError;
use mlbench_schema::suite::SuiteError;
use mlbench_schema::targets::TargetsError;
use mlbench_submission::DiscoverError;
use mlbench_validator::{IntakeError, PackError};

/// Findings, or failed criteria.
pub const FAILED: u8 = 1;
/// Usage, or input that cannot be read.
pub const INPUT: u8 = 2;
/// An output that could not be written, or an internal error.
pub const INTERNAL: u8 = 3;

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
            Outcome::Failed => FAILED,
            Outcome::Unreadable => INPUT,
        }
    }
}

/// Every error that can end a command (not to be confused with the models' `Failure`, a
/// failed bench entry).
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
    Destination(DestinationError),
    /// A file that could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// Standard output, a folder or a page that could not be written.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The report files could not be found or listed.
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    /// A targets file that cannot be read, or an unknown GPU model.
    #[error(transparent)]
    Targets(#[from] TargetsError),
    /// A jobs file that cannot be read.
    #[error(transparent)]
    Jobs(#[from] JobsError),
    /// A bench → script map that cannot be read.
    #[error(transparent)]
    Scripts(#[from] ScriptsError),
    /// A submission that cannot be opened.
    #[error(transparent)]
    Intake(#[from] IntakeError),
    /// A submission whose reports cannot be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The benchmark's git repository cannot be used.
    #[cfg(feature = "git")]
    #[error(transparent)]
    Repo(#[from] mlbench_validator::repo::RepoError),
    /// A folder not packed, or a zip not made.
    #[error(transparent)]
    Pack(#[from] PackError),
    /// The statistics could not be computed.
    #[error(transparent)]
    Analyze(#[from] AnalyzeError),
    /// Submissions that cannot be compared.
    #[error(transparent)]
    Compare(#[from] CompareError),
    /// A grid that cannot be made.
    #[error(transparent)]
    Grid(#[from] GridError),
    /// A weights file that cannot be used.
    #[error(transparent)]
    Weights(#[from] WeightsError),
    /// Submissions that are not a series of sizes.
    #[error(transparent)]
    Scaling(#[from] ScalingError),
    /// A presentation that could not be made (a chart that cannot be drawn).
    #[error(transparent)]
    Export(#[from] ExportError),
    /// The compiled-in parity table (baselines/parity.toml) does not read: a bug.
    #[error(transparent)]
    Parity(#[from] mlbench_schema::runtime::ParityError),
    /// Telemetry files that cannot be found or read (`plot power`).
    #[error(transparent)]
    Trace(#[from] mlbench_analyzer::energy::TraceError),
    /// Targets that cannot be made from a submission.
    #[error(transparent)]
    MakeTargets(#[from] mlbench_analyzer::targets::MakeTargetsError),
    /// The runner's errors.
    #[cfg(feature = "runner")]
    #[error(transparent)]
    Run(#[from] RunError),
}

impl CommandError {
    /// The exit status of this failure (docs/exit-codes.md).
    pub fn code(&self) -> u8 {
        match self {
            CommandError::Usage(_)
            | CommandError::Input(_)
            | CommandError::Destination(_)
            | CommandError::Discover(_)
            | CommandError::Targets(_)
            | CommandError::Jobs(_)
            | CommandError::Scripts(_)
            | CommandError::Intake(_)
            | CommandError::Load(_)
            | CommandError::Weights(_)
            | CommandError::Scaling(_)
            | CommandError::Trace(_) => INPUT,
            #[cfg(feature = "git")]
            CommandError::Repo(_) => INPUT,
            CommandError::Write(_)
            | CommandError::Output(_)
            | CommandError::Export(_)
            | CommandError::Parity(_) => INTERNAL,
            CommandError::Pack(e) => pack_code(e),
            CommandError::Analyze(e) => analyze_code(e),
            CommandError::MakeTargets(e) => make_targets_code(e),
            CommandError::Compare(e) => compare_code(e),
            CommandError::Grid(e) => grid_code(e),
            #[cfg(feature = "runner")]
            CommandError::Run(e) => e.code(),
        }
    }
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
            | CommandError::Compare(CompareError::Load(LoadError::Suite {
                error: SuiteError::Several { .. },
                ..
            })) => Some("choose the suite with --name NAME"),
            #[cfg(feature = "runner")]
            CommandError::Run(RunError::Setup(
                mlbench_runner::setup::SetupError::EarlierReports { .. },
            )) => Some("choose another --out-dir, or add to them with --append"),
            #[cfg(feature = "runner")]
            CommandError::Run(RunError::Setup(
                mlbench_runner::setup::SetupError::OtherJobsFile(_),
            )) => Some("choose another --out-dir"),
            _ => None,
        }
    }
}

impl From<DestinationError> for CommandError {
    fn from(e: DestinationError) -> Self {
        CommandError::Destination(e)
    }
}

impl From<WriteFileError> for CommandError {
    fn from(e: WriteFileError) -> Self {
        match e {
            WriteFileError::Refused(e) => CommandError::Destination(e),
            WriteFileError::Failed(e) => CommandError::Write(e),
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

fn pack_code(e: &PackError) -> u8 {
    match e {
        // Nothing to pack: the submission cannot be read at all.
        PackError::Refused { validation, .. } if validation.unreadable() => INPUT,
        PackError::Refused { .. } => FAILED,
        PackError::NotAFolder(_)
        | PackError::InsideFolder(_)
        | PackError::Intake(_)
        | PackError::UnsafePath { .. }
        | PackError::Duplicate(_) => INPUT,
        PackError::Json(_) | PackError::Zip(_) | PackError::Io(_) => INTERNAL,
    }
}

fn analyze_code(e: &AnalyzeError) -> u8 {
    match e {
        AnalyzeError::TooFewRuns { .. } | AnalyzeError::NoEntries => INPUT,
        // The statistics engine failing on data that loaded is a bug.
        AnalyzeError::Polars(_) => INTERNAL,
    }
}

fn make_targets_code(e: &mlbench_analyzer::targets::MakeTargetsError) -> u8 {
    use mlbench_analyzer::targets::MakeTargetsError as E;
    match e {
        E::NoTargets(_) | E::ModelName(_) | E::Date(_) | E::Digest { .. } => INPUT,
        E::Analyze(e) => analyze_code(e),
    }
}

fn grid_code(e: &GridError) -> u8 {
    match e {
        GridError::NoInputs
        | GridError::Duplicate { .. }
        | GridError::UnknownSubmission { .. }
        | GridError::EmptyBaseline(_)
        | GridError::NoOverall(_)
        | GridError::Resamples
        | GridError::Level(_) => INPUT,
    }
}

fn compare_code(e: &CompareError) -> u8 {
    match e {
        CompareError::LabelSyntax(_)
        | CompareError::LabelEmpty(_)
        | CompareError::LabelledTwice { .. }
        | CompareError::LabelNotGiven { .. }
        | CompareError::SameLabel { .. }
        | CompareError::Explain(_)
        | CompareError::NoSubmissions
        | CompareError::NoEnergy(_)
        | CompareError::Targets(_)
        | CompareError::Load(_)
        | CompareError::MixedRuntimes { .. }
        | CompareError::Weights(_) => INPUT,
        CompareError::Grid(e) => grid_code(e),
    }
}

/// The runner's errors (feature `runner`), each with its code.
#[cfg(feature = "runner")]
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// `--devices` that this machine cannot give.
    #[error("--devices: {0}")]
    Devices(#[from] mlbench_runner::devices::DevicesError),
    /// `--devices` of `--slurm`.
    #[error("--devices (with --slurm): {0}")]
    NodeDevices(#[from] mlbench_runner::slurm::NodeDevicesError),
    /// A job that cannot be planned.
    #[error(transparent)]
    Plan(#[from] mlbench_runner::plan::PlanError),
    /// The internal `--copy` of a child process.
    #[error("--copy {0}")]
    Copy(#[from] mlbench_runner::copies::CopyError),
    /// The smoke sizes shipped in the binary.
    #[error(transparent)]
    Smoke(#[from] mlbench_runner::smoke::SmokeError),
    /// The output folder refused or not written.
    #[error(transparent)]
    Setup(#[from] mlbench_runner::setup::SetupError),
    /// A report stream or summary not written.
    #[error(transparent)]
    Execute(#[from] mlbench_runner::execute::ExecuteError),
    /// sbatch or squeue missing or failing.
    #[error(transparent)]
    Slurm(#[from] mlbench_runner::slurm::SlurmError),
    /// Copies whose entry could not be written to their report stream.
    #[error(
        "{}: {lost} cop{} wrote no entry: {} report stream could not be written (see the failures above)",
        .out.display(),
        if *.lost == 1 { "y" } else { "ies" },
        if *.lost == 1 { "its" } else { "their" }
    )]
    LostEntries {
        /// The copies without an entry.
        lost: usize,
        /// The output folder.
        out: std::path::PathBuf,
    },
    /// The binary cannot find itself to start the copies.
    #[error("cannot locate the mlbench binary to start the copies: {0}")]
    CurrentExe(#[source] std::io::Error),
}

#[cfg(feature = "runner")]
impl RunError {
    fn code(&self) -> u8 {
        use mlbench_runner::setup::SetupError;
        match self {
            RunError::Devices(_)
            | RunError::NodeDevices(_)
            | RunError::Plan(_)
            | RunError::Copy(_)
            | RunError::Slurm(_) => INPUT,
            RunError::Setup(SetupError::EarlierReports { .. })
            | RunError::Setup(SetupError::OtherJobsFile(_)) => INPUT,
            RunError::Setup(SetupError::Io { .. })
            | RunError::Execute(_)
            | RunError::Smoke(_)
            | RunError::LostEntries { .. }
            | RunError::CurrentExe(_) => INTERNAL,
        }
    }
}

#[cfg(feature = "runner")]
macro_rules! run_failure_from {
    ($($t:ty),*) => {$(
        impl From<$t> for CommandError {
            fn from(e: $t) -> Self {
                CommandError::Run(e.into())
            }
        }
    )*};
}
#[cfg(feature = "runner")]
run_failure_from!(
    mlbench_runner::devices::DevicesError,
    mlbench_runner::slurm::NodeDevicesError,
    mlbench_runner::plan::PlanError,
    mlbench_runner::copies::CopyError,
    mlbench_runner::smoke::SmokeError,
    mlbench_runner::setup::SetupError,
    mlbench_runner::execute::ExecuteError,
    mlbench_runner::slurm::SlurmError
);

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
        return "Exit status: 0 ok; 1 findings, or failed criteria; 2 usage, or input that \
                cannot be read; 3 an output that could not be written, or an internal error \
                (docs/exit-codes.md)."
            .to_owned();
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
