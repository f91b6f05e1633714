//! Command-line arguments (clap derive). The doc comments are the `--help` text.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  mlbench report --reports submissions/example --name fast --gpu-model RTX
  mlbench report -r results/ --gpu-model V100 --scoring score --price 9000
  mlbench report -r results/ --gpu-model RTX --format json --output report.json";

/// Validate, report and compare machine-learning training benchmark submissions.
///
/// mlbench reads the report files of the Mila training suite (every era: per-GPU
/// streams, per-test files, Python's NaN tokens) and computes what the suite's own
/// report tools computed, exactly, saying what it did where they were sloppy.
#[derive(Debug, Parser)]
#[command(name = "mlbench", version, after_help = EXAMPLES, max_term_width = 100)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Average the per-GPU reports over the runs and score them against a GPU model's targets.
    #[command(after_help = REPORT_HELP)]
    Report(ReportArgs),
}

const REPORT_HELP: &str = "\
Layouts read: DIR/<run>/NAME_<K>.json (one folder per suite run, one stream per GPU, as
run_10.sh leaves them) and NAME.<bench>.R<run>.D<device>[.FAIL].<time>.json per-test files.

Exit status: 0 report computed (and, with --check, passed); 1 --check and the pass criteria
failed; 2 usage error or unreadable input.

Examples:
  mlbench report --reports submissions/example --name fast --gpu-model RTX
  mlbench report -r results/ --gpu-model MI50 --scoring score --price 9000 --check
  mlbench report -r results/ --gpu-model RTX --targets my_targets.csv --format markdown";

/// The scoring scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScoringArg {
    /// Trimmed mean over runs, 80% deviation quantile, mean difference to target (the suite's 2019 mlbench-report).
    Classic,
    /// Pooled samples, pass rates, failure gate and score = BF·(2PM + ST + 5PG) (the suite's last tool).
    Score,
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table for people.
    Table,
    /// The stable JSON document of docs/report-json.md.
    Json,
    /// One row per bench.
    Csv,
    /// Markdown tables.
    Markdown,
}

/// `mlbench report` arguments.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Folders (searched recursively) or report files to read.
    ///
    /// Example: --reports results/ (holding output0 … output9).
    #[arg(long = "reports", short = 'r', value_name = "PATH", required = true, num_args = 1..)]
    pub reports: Vec<PathBuf>,

    /// The suite (jobs file) name the reports are named after, e.g. `fast` for fast_0.json.
    ///
    /// Optional when only one suite's reports are present.
    #[arg(long, short = 'n', value_name = "NAME")]
    pub name: Option<String>,

    /// GPU model whose targets to compare with: RTX, V100 or MI50 (built in), or any name
    /// that --targets has.
    #[arg(long, short = 'g', value_name = "MODEL")]
    pub gpu_model: String,

    /// Scoring scheme.
    #[arg(long, value_enum, default_value_t = ScoringArg::Classic)]
    pub scoring: ScoringArg,

    /// Targets file instead of the built-in ones: the project's TOML (baselines/targets/)
    /// or the suite's CSV (bench,target,perf_target,sd_target or bench,V100,MI50,RTX).
    #[arg(long, value_name = "FILE")]
    pub targets: Option<PathBuf>,

    /// Price of the machine, for RPP = price ÷ score (score scoring).
    #[arg(long, value_name = "P")]
    pub price: Option<f64>,

    /// Fewest suite runs accepted.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub min_runs: u32,

    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Write the output to FILE instead of standard output (never overwrites without --force).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Allow --output to replace an existing file.
    #[arg(long)]
    pub force: bool,

    /// Exit with status 1 when the pass criteria fail.
    #[arg(long)]
    pub check: bool,

    /// Compute the report from the entries that could be read, listing the problems as
    /// warnings (without it, unreadable input is listed and the exit status is 2).
    #[arg(long)]
    pub skip_unreadable: bool,
}
