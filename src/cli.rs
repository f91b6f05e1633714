//! Command-line arguments (clap derive). The doc comments are the `--help` text.

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum, ValueHint};
use mlbench_results::grid::Per;
use std::path::PathBuf;

/// The prose of each `--help` after the options is in src/help/ (text, each file without
/// a final newline: `the_help_texts_end_where_their_text_does` checks).
const EXAMPLES: &str = include_str!("help/mlbench.txt");

/// Validate, report and compare machine-learning training benchmark submissions.
///
/// mlbench reads the report files of the Mila training suite (every era: per-GPU
/// streams, per-test files, Python's NaN tokens) and computes what the suite's own
/// report tools computed, exactly, saying what it did where they were sloppy.
#[derive(Debug, Parser)]
#[command(
    name = "mlbench",
    version,
    after_help = EXAMPLES,
    max_term_width = 100,
    disable_help_subcommand = true
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Average the per-GPU reports over the runs and score them against a GPU model's targets.
    #[command(after_help = include_str!("help/report.txt"))]
    Report(ReportArgs),
    /// Check a submission (zip or folder): files, versions, arguments, losses, coverage.
    #[command(after_help = include_str!("help/validate.txt"))]
    Validate(ValidateArgs),
    /// Pack a submission folder into a deterministic zip with a SHA-256 manifest.
    #[command(after_help = include_str!("help/pack.txt"))]
    Pack(PackArgs),
    /// Compare vendors' submissions: every bench normalized to a baseline submission, with
    /// bootstrap confidence intervals, an overall figure per vendor and tiers.
    #[command(after_help = include_str!("help/grid.txt"))]
    Grid(GridArgs),
    /// Draw comparison plots (PNG and SVG) of a grid, a report, runs or loss curves.
    #[command(after_help = include_str!("help/plot.txt"))]
    Plot(PlotArgs),
    /// Make a targets file from a baseline submission (each bench's trimmed mean, with
    /// provenance), to score a round that runs `mlbench run` everywhere.
    #[command(after_help = include_str!("help/targets.txt"))]
    Targets(TargetsArgs),
    /// Make the data sets the suite's scripts read (seeded synthetic stand-ins in their
    /// layouts) in a data root, with a MANIFEST.json of their files.
    #[command(after_help = include_str!("help/data.txt"))]
    Data(DataArgs),
    /// Run a jobs file with the built-in tch models and write the suite's reports
    /// (feature `runner`: needs libtorch, see runner/setup-libtorch.sh).
    #[cfg(feature = "runner")]
    #[command(after_help = RUN_HELP)]
    Run(RunArgs),
    /// Run a jobs file with the built-in tch models (not in this build: it needs
    /// libtorch; `mlbench run` says how to build it).
    #[cfg(not(feature = "runner"))]
    #[command(after_help = RUN_HELP_UNBUILT)]
    Run(RunArgs),
    /// Keep submissions in a store of rounds (content-addressed zips, an SQLite index):
    /// add, list, show, remove, check.
    #[command(after_help = include_str!("help/archive.txt"))]
    Archive(ArchiveArgs),
    /// Each label × hardware × bench of a store across its rounds: the figure and its
    /// interval per round, the change between rounds and whether its interval excludes 1.
    #[command(after_help = include_str!("help/history.txt"))]
    History(HistoryArgs),
    /// Write a store's released rounds as a static site (grids, reports, history, the
    /// zips, a JSON mirror of every figure, SHA256SUMS) that anyone can verify.
    #[command(after_help = include_str!("help/publish.txt"))]
    Publish(PublishArgs),
    /// Recompute every figure of a published site from its zips and check SHA256SUMS.
    #[command(after_help = include_str!("help/verify.txt"))]
    Verify(VerifyArgs),
    /// Print a shell completion script: `mlbench completions bash > /etc/bash_completion.d/mlbench`.
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per command into --out-dir.
    Man(ManArgs),
}

/// The commands that read submissions, and the flags that once named them (`report
/// -r/--reports`, `plot --from`): kept working as hidden aliases of the positional.
const READERS: [&str; 6] = ["report", "validate", "pack", "grid", "plot", "targets"];
const INPUT_FLAGS: [&str; 3] = ["--reports", "-r", "--from"];

/// The command line with the older input flags dropped before their values, so that the
/// values are read as the positional submissions (`report -r DIR` is `report DIR`).
pub fn normalize_args(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let Some(at) = args
        .iter()
        .position(|a| a.to_str().is_some_and(|a| READERS.contains(&a)))
    else {
        return args;
    };
    let mut out: Vec<std::ffi::OsString> = args[..=at].to_vec();
    for (i, arg) in args.iter().enumerate().skip(at + 1) {
        let text = arg.to_str().unwrap_or("");
        if text == "--" {
            // Everything after `--` is positional already.
            out.extend(args[i..].iter().cloned());
            break;
        }
        if INPUT_FLAGS.contains(&text) {
            continue;
        }
        match INPUT_FLAGS
            .iter()
            .find_map(|f| text.strip_prefix(&format!("{f}=")))
        {
            Some(value) => out.push(value.into()),
            None => out.push(arg.clone()),
        }
    }
    out
}

/// `--gpu-model`: any name (a `--targets` file may have its own), with the built-in
/// models offered to shell completion.
#[derive(Debug, Clone, Copy)]
pub struct GpuModelParser;

impl TypedValueParser for GpuModelParser {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let models = mlbench_schema::targets::BUILTIN_MODELS;
        Some(Box::new(models.iter().map(PossibleValue::new)))
    }
}

/// The clap command: each command's help ends with its one exit paragraph
/// (`exit::help`).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let top = format!("{}\n\n{}", EXAMPLES, crate::exit::help(None));
    Cli::command().after_help(top).mut_subcommands(|sub| {
        let name = sub.get_name().to_owned();
        let before = sub
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        let sep = if before.is_empty() { "" } else { "\n\n" };
        sub.after_help(format!("{before}{sep}{}", crate::exit::help(Some(&name))))
    })
}

/// `mlbench targets` arguments.
#[derive(Debug, Args)]
pub struct TargetsArgs {
    /// The baseline submission: a zip or a folder (`--from SUB` is the same).
    #[arg(value_name = "SUB", value_hint = ValueHint::AnyPath)]
    pub submission: PathBuf,

    /// The GPU model the targets are for: the column `report --gpu-model` will name.
    #[arg(long, short = 'g', value_name = "MODEL", value_hint = ValueHint::Other)]
    pub gpu_model: String,

    /// The suite (jobs file) name the reports are named after; default: the only one.
    #[arg(long, short = 'n', value_name = "NAME", value_hint = ValueHint::Other)]
    pub name: Option<String>,

    /// A date to record in the provenance (YYYY-MM-DD); none by default, so the same
    /// submission gives the same bytes.
    #[arg(long, value_name = "YYYY-MM-DD", value_hint = ValueHint::Other)]
    pub date: Option<String>,

    /// Write the targets to FILE instead of standard output (never overwrites without
    /// --force).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Allow --output to replace an existing file.
    #[arg(long)]
    pub force: bool,

    /// Make targets of a baseline that fails its validation (or was packed with errors),
    /// and record in the file that it did.
    #[arg(long)]
    pub allow_failing: bool,

    #[command(flatten)]
    pub size: SizeArgs,
}

/// `mlbench data`.
#[derive(Debug, Args)]
pub struct DataArgs {
    /// What to do with data sets.
    #[command(subcommand)]
    pub command: DataCommand,
}

/// The `data` subcommands.
#[derive(Debug, Subcommand)]
pub enum DataCommand {
    /// Write the data sets of the benches named (every known one by default) into DIR and
    /// record them in DIR/MANIFEST.json.
    Prepare(PrepareArgs),
}

/// `mlbench data prepare` arguments.
#[derive(Debug, Args)]
pub struct PrepareArgs {
    /// The data root (the suite's $DATA_DIRECTORY); made if missing.
    #[arg(value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub dir: PathBuf,

    /// A bench whose data sets to make (repeatable: --bench vae --bench wlm).
    #[arg(long, value_name = "NAME", value_hint = ValueHint::Other)]
    pub bench: Vec<String>,

    /// The seed of the synthetic data: the same seed, the same bytes.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,

    /// A few items of each data set, in the same layout (tests, CI, `run --smoke`).
    #[arg(long)]
    pub smoke: bool,

    /// Replace data sets already in DIR.
    #[arg(long)]
    pub force: bool,
}

/// `mlbench archive`.
#[derive(Debug, Args)]
pub struct ArchiveArgs {
    /// The store's folder (made if missing). Default: $MLBENCH_STORE, else ./mlbench-store.
    #[arg(long, global = true, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub store: Option<PathBuf>,
    /// Output format of `list`, `show` and `check`.
    #[arg(long, short = 'f', global = true, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(subcommand)]
    pub action: ArchiveAction,
}

/// `mlbench history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The store's folder. Default: $MLBENCH_STORE, else ./mlbench-store.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub store: Option<PathBuf>,
    /// Leave out submissions released after this day (YYYY-MM-DD). Default: today.
    #[arg(long, value_name = "DATE")]
    pub now: Option<String>,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw one panel per bench (PNG and SVG) into DIR.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub plot: Option<PathBuf>,
    /// Bootstrap resamples.
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub resamples: usize,
    /// Bootstrap seed.
    #[arg(long, value_name = "N", default_value_t = 2019)]
    pub seed: u64,
    /// Replace files already there (the output file, the plots).
    #[arg(long)]
    pub force: bool,
    /// Write to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `mlbench publish`.
#[derive(Debug, Args)]
pub struct PublishArgs {
    /// The store's folder. Default: $MLBENCH_STORE, else ./mlbench-store.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub store: Option<PathBuf>,
    /// The site's folder: must be empty or missing, unless --force (then replaced whole).
    #[arg(long, value_name = "SITE", value_hint = ValueHint::DirPath)]
    pub out: PathBuf,
    /// Leave out submissions released after this day (YYYY-MM-DD). Default: today.
    #[arg(long, value_name = "DATE")]
    pub now: Option<String>,
    /// The GPU model whose targets the report pages compare with.
    #[arg(long, value_name = "MODEL", default_value = "RTX")]
    pub gpu_model: String,
    /// Bootstrap resamples.
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub resamples: usize,
    /// Bootstrap seed.
    #[arg(long, value_name = "N", default_value_t = 2019)]
    pub seed: u64,
    /// Replace what --out holds.
    #[arg(long)]
    pub force: bool,
}

/// `mlbench verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The site's folder, as `mlbench publish` wrote it.
    #[arg(value_name = "SITE", value_hint = ValueHint::DirPath)]
    pub site: PathBuf,
}

/// What `mlbench archive` does.
#[derive(Debug, clap::Subcommand)]
pub enum ArchiveAction {
    /// Keep submissions (zips, or folders packed as `mlbench pack` packs them) in ROUND.
    Add {
        /// The round (`2026`, `2026-spring`).
        round: String,
        /// The submissions: zips or folders.
        #[arg(required = true, value_name = "SUB", value_hint = ValueHint::AnyPath)]
        submissions: Vec<PathBuf>,
        /// A submission's label (`NAME=SUB`, SUB as given); default: its file or folder name.
        #[arg(long = "label", value_name = "NAME=SUB")]
        labels: Vec<String>,
        /// The day its figures may be published (YYYY-MM-DD); default: at once.
        #[arg(long, value_name = "DATE")]
        release: Option<String>,
        /// Pack a folder whose validation finds errors (SUBMISSION.json records them).
        #[arg(long)]
        allow_errors: bool,
    },
    /// Every archived submission, removed ones included.
    List,
    /// One submission, by id (`3`, `#3`) or a prefix of its SHA-256.
    Show {
        /// The id or hash prefix.
        id: String,
    },
    /// Mark a submission removed; its bytes stay, and so does its row.
    Remove {
        /// The id or hash prefix.
        id: String,
    },
    /// Re-hash every zip against the index; exit 1 naming each mismatch.
    Check,
}

/// `mlbench completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `mlbench man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write mlbench.1 and mlbench-<command>.1 into DIR instead of printing mlbench.1.
    #[arg(long = "out-dir", value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub out_dir: Option<PathBuf>,

    /// Allow --out-dir's pages to replace existing files.
    #[arg(long, requires = "out_dir")]
    pub force: bool,
}

/// `mlbench run`'s closing help, in both builds.
macro_rules! run_help {
    () => {
        include_str!("help/run.txt")
    };
}

#[cfg(feature = "runner")]
const RUN_HELP: &str = run_help!();

/// A build without the runner lists `run`'s options all the same, and says how to get it.
#[cfg(not(feature = "runner"))]
const RUN_HELP_UNBUILT: &str = concat!(
    run_help!(),
    "\n\nNot in this build: `mlbench run` needs libtorch. Build it with\n",
    "  eval \"$(runner/setup-libtorch.sh ~/.cache/mlbench/libtorch)\"\n",
    "  cargo build --release --features runner\n",
    "(docs/runner.md)"
);

/// `mlbench run` arguments (parsed in every build, so that `run --help` lists them).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The jobs file (the suite's format).
    #[arg(long, value_name = "FILE")]
    pub jobs: PathBuf,

    /// Run only this job (repeatable).
    #[arg(long, value_name = "BENCH", value_hint = ValueHint::Other)]
    pub name: Vec<String>,

    /// `N` devices (GPUs, or N simulated CPU devices without GPU) or `cpu`; default every GPU.
    #[arg(long, value_name = "N|cpu", value_hint = ValueHint::Other)]
    pub devices: Option<String>,

    /// Suite repetitions: output0 … output{K-1}.
    #[arg(long, value_name = "K", default_value_t = 1, value_hint = ValueHint::Other,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat_suite: u32,

    /// Output folder (`--out` is the old spelling).
    #[arg(
        long = "out-dir",
        alias = "out",
        value_name = "DIR",
        default_value = "output"
    )]
    pub out: PathBuf,

    /// Number the suite runs from R (output<R>…, RUN_ID and seeds): how machines or Slurm
    /// array tasks share one output folder without repeating a run.
    #[arg(long, value_name = "R", default_value_t = 0, value_hint = ValueHint::Other)]
    pub first_run: u32,

    /// Print the plan (commands, devices, seeds, report files) and run nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Run every job at the smallest sizes that still run all of its code (12
    /// observations of one step, small batches and images: runner/src/smoke.toml), to
    /// check a machine's set-up in minutes. Entries record `smoke: true`; `validate` and
    /// `report` say it is a smoke run, not a submission.
    #[arg(long)]
    pub smoke: bool,

    /// Make the batches in memory where the scripts read files (the data sets are then
    /// not needed). Entries and system.json record `synthetic_data: true`, and `validate`
    /// warns of it: the throughputs leave out reading and decoding the data.
    #[arg(long)]
    pub synthetic_data: bool,

    /// Record each copy's timed observations with libtorch's profiler: a Chrome trace in
    /// OUT/output<r>/profiles/ (chrome://tracing, Perfetto) and a summary in the entry
    /// (`profile`: top operators by self time, shares of compute, loading and
    /// communication), which `report` shows per bench.
    #[arg(long)]
    pub profile: bool,

    /// Telemetry samples per second beside every copy (energy, power, utilisation,
    /// memory, temperature, clocks) into OUT/output<r>/telemetry/; 0 samples nothing.
    #[arg(long, value_name = "HZ", default_value_t = 1, value_hint = ValueHint::Other,
          value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub sample_hz: u32,

    /// Idle sampling before each run's first job, the baseline of net energy (30s, 2m,
    /// 500ms; 0 skips it). Default 30s, and 0 with --smoke.
    #[arg(long, value_name = "DURATION", value_parser = mlbench_telemetry::duration::parse_duration)]
    pub idle_baseline: Option<std::time::Duration>,

    /// Print an sbatch job-array script running the same jobs on a Slurm cluster: one array
    /// task per node, --devices N GPUs per node (or cpu), --repeat-suite runs per node.
    #[arg(long, conflicts_with = "first_run")]
    pub slurm: bool,

    /// Nodes (array tasks) of --slurm.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "slurm", value_hint = ValueHint::Other)]
    pub nodes: u32,

    /// Data-parallel jobs (scaling) sweep their world sizes over all the nodes of a Slurm
    /// allocation, each world's ranks started with srun. With --slurm, the script asks for
    /// --nodes nodes at once, in one task that runs the suite on the first node; inside
    /// such an allocation (SLURM_JOB_NUM_NODES set), this run is that task.
    #[arg(long)]
    pub across_nodes: bool,

    /// With --slurm: submit the script with sbatch instead of printing it (the tasks'
    /// logs go to OUT/slurm/).
    #[arg(long, requires = "slurm")]
    pub submit: bool,

    /// With --submit: follow the array tasks until all have ended (progress on standard
    /// error), name each failed task with its log, and exit 1 if one failed.
    #[arg(long, requires = "submit")]
    pub wait: bool,

    /// Add to report streams an earlier run left in OUT (by default such a run is refused,
    /// so that two runs never mix in one stream).
    #[arg(long)]
    pub append: bool,

    /// After the run, validate OUT and pack it into this zip (as `mlbench pack`; never
    /// overwrites a file, and packs nothing when the validator finds an error).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["dry_run", "slurm"])]
    pub pack: Option<PathBuf>,

    /// The track the packed submission declares.
    #[arg(long, value_enum, default_value_t = TrackArg::Baseline, requires = "pack")]
    pub track: TrackArg,

    /// Repeat the suite until every bench's mean is known to ±PCT (anytime-valid 95 %
    /// interval; docs/scoring.md, "How many runs"), from 3 runs, one run at a time, at most
    /// --max-runs. The rule and its constants are recorded in system.json.
    #[arg(long, value_name = "PCT", value_parser = mlbench_analyzer::anytime::parse_fraction,
          requires = "max_runs", conflicts_with_all = ["dry_run", "repeat_suite"])]
    pub until: Option<f64>,

    /// The budget of --until: stop after this many runs even if the precision is not reached.
    #[arg(long, value_name = "N", requires = "until", value_hint = ValueHint::Other)]
    pub max_runs: Option<u32>,

    /// The run-to-run spread (CV) --until's interval is tuned for, stated in advance.
    #[arg(long, value_name = "PCT", default_value = "2%", requires = "until",
          value_parser = mlbench_analyzer::anytime::parse_fraction)]
    pub expected_cv: f64,

    /// Internal: run one copy (RUN:CONFIG:COPY) in this process and print its result; how
    /// `mlbench run` starts each copy in a process of its own.
    #[arg(long, value_name = "RUN:CONFIG:COPY", hide = true,
          conflicts_with_all = ["pack", "slurm", "dry_run", "append"])]
    pub copy: Option<String>,
}

/// What `mlbench plot` draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlotKind {
    /// Grid ratios per bench and overall figures per vendor.
    Grid,
    /// Per-GPU heatmap and run distributions against the targets.
    Report,
    /// Run distributions against the targets.
    Runs,
    /// Batch-loss curves per bench with the validator's band.
    Loss,
    /// Each node of a submission run on several hosts against the median node.
    Fleet,
    /// One vendor's submissions at several sizes: efficiency against linear scaling.
    Scaling,
    /// Each bench's power over time from a run's telemetry files, per device and copy.
    Power,
    /// Items/s against batch size, a line per bench and a chart per GPU model (`report
    /// --by batch_size`'s figures).
    BatchSize,
}

/// Image formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImageFormat {
    /// PNG (text drawn with the bundled DejaVu Sans).
    Png,
    /// SVG.
    Svg,
    /// Both.
    Both,
}

/// Output format of the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GridFormat {
    /// A table for people.
    Table,
    /// The stable JSON document of docs/grid-json.md.
    Json,
    /// One row per vendor and bench.
    Csv,
    /// Markdown tables.
    Markdown,
    /// Parquet, one row per vendor and bench (needs --output).
    Parquet,
}

/// How much of a submission is read: the one size limit of `report`, `validate`, `pack`,
/// `grid` and `plot`.
#[derive(Debug, Args)]
pub struct SizeArgs {
    /// Most uncompressed bytes read from a submission; report files past it are set
    /// aside and named, never read.
    #[arg(long, value_name = "BYTES", default_value_t = 4 << 30, value_hint = ValueHint::Other)]
    pub max_bytes: u64,
}

/// The most bootstrap resamples `--resamples` takes: 100,000 draws of every bench are a
/// few seconds and some hundred MB; 10 million aborted at 2.8 GB.
pub const MAX_RESAMPLES: u64 = 100_000;

/// How submissions are compared (shared by grid and plot grid).
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Name a submission: NAME=SUB (repeatable).
    #[arg(long = "label", value_name = "NAME=SUB", value_hint = ValueHint::Other,
          value_parser = mlbench_analyzer::compare::parse_label)]
    pub labels: Vec<(String, PathBuf)>,

    /// The submission every other is normalized to: a label, or the submission's path as
    /// given; default: the first.
    #[arg(long, value_name = "NAME", value_hint = ValueHint::Other)]
    pub baseline: Option<String>,

    /// The suite (jobs file) name the reports are named after.
    #[arg(long, short = 'n', value_name = "NAME", value_hint = ValueHint::Other)]
    pub name: Option<String>,

    /// Bench weights for the overall figure: TOML `[weights]` or CSV `bench,weight`.
    #[arg(long, value_name = "FILE")]
    pub weights: Option<PathBuf>,

    /// Track of submissions that do not say (packed ones carry theirs).
    #[arg(long, value_enum, default_value_t = TrackArg::Baseline)]
    pub track: TrackArg,

    /// Bootstrap resamples for the confidence intervals (1 to 100,000: memory and time
    /// grow with them).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 2000,
        value_hint = ValueHint::Other,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_RESAMPLES)
    )]
    pub resamples: usize,

    #[command(flatten)]
    pub size: SizeArgs,

    /// Compare submissions of different runtimes (the suite's scripts and `mlbench run`);
    /// without it they are refused. The rows and cells of a runtime other than the
    /// baseline's are marked †.
    #[arg(long)]
    pub allow_mixed_runtimes: bool,

    /// Tier the submissions that fail their validation too (they stay marked; without
    /// this flag they get no tier).
    #[arg(long)]
    pub include_failing: bool,

    /// The intervals of the cells and rows, and so the tiers: the bootstrap of the samples
    /// (valid when every vendor fixed its run count in advance) or the anytime-valid
    /// sequences of the runs (valid however many runs each made; docs/scoring.md).
    #[arg(long, value_enum, default_value_t = IntervalArg::Bootstrap)]
    pub interval: IntervalArg,

    /// Seed of the bootstrap (results are reproducible with it).
    #[arg(long, value_name = "S", default_value_t = mlbench_analyzer::grid::DEFAULT_SEED, value_hint = ValueHint::Other)]
    pub seed: u64,
}

/// `mlbench grid` arguments.
#[derive(Debug, Args)]
pub struct GridArgs {
    /// Submissions: zips or folders, one per vendor (and track).
    #[arg(id = "subs", value_name = "SUB", required = true, num_args = 1.., value_hint = ValueHint::AnyPath)]
    pub submissions: Vec<PathBuf>,

    #[command(flatten)]
    pub compare: CompareArgs,

    /// Explain the gap between two vendors bench by bench: A,B.
    #[arg(long, value_name = "A,B", value_hint = ValueHint::Other, value_parser = mlbench_analyzer::compare::parse_explain)]
    pub explain: Option<(String, String)>,

    /// One vendor's submissions at several sizes (1, 2, 4… devices or nodes): each
    /// bench's throughput against the number of devices and the efficiency against
    /// linear scaling from the smallest, instead of the grid (docs/scoring.md).
    #[arg(long, conflicts_with_all = ["explain", "html"])]
    pub scaling: bool,

    /// Score items per `second` (the throughput) or per `joule` (energy efficiency, from
    /// each run's telemetry; docs/grid-json.md), normalised to the baseline either way.
    #[arg(long, value_name = "second|joule", default_value = "second", value_parser = Per::from_name, conflicts_with = "scaling")]
    pub per: Per,

    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = GridFormat::Table)]
    pub format: GridFormat,

    /// Write the output to FILE instead of standard output (never overwrites without --force).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Also write one self-contained HTML page with the grid, its plots and provenance.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Allow --output and --html to replace existing files.
    #[arg(long)]
    pub force: bool,
}

/// The folder `plot` writes into when no `--out-dir` is given: a named folder, never
/// the current one.
pub const PLOT_DIR: &str = "mlbench-plots";

/// `mlbench plot` arguments.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// What to draw.
    #[arg(value_enum)]
    pub kind: PlotKind,

    /// Submissions: zips or folders.
    #[arg(id = "subs", value_name = "SUB", required = true, num_args = 1.., value_hint = ValueHint::AnyPath)]
    pub submissions: Vec<PathBuf>,

    #[command(flatten)]
    pub compare: CompareArgs,

    /// For `plot grid`: items per `second` (the throughput) or per `joule` (from each
    /// run's telemetry), as `grid --per`.
    #[arg(long, value_name = "second|joule", default_value = "second", value_parser = Per::from_name)]
    pub per: Per,

    /// GPU model whose targets to compare with: RTX, V100 or MI50 (built in), or any name
    /// that --targets has (needed by the report and runs plots).
    #[arg(
        long,
        short = 'g',
        value_name = "MODEL",
        value_parser = GpuModelParser,
        hide_possible_values = true,
        required_if_eq_any = [("kind", "report"), ("kind", "runs"), ("kind", "batch-size")]
    )]
    pub gpu_model: Option<String>,

    /// Targets file instead of the built-in ones: the project's TOML (baselines/targets/)
    /// or the suite's CSV (bench,target,perf_target,sd_target or bench,V100,MI50,RTX).
    #[arg(long, value_name = "FILE")]
    pub targets: Option<PathBuf>,

    /// Folder to write the images into (made if missing; `--out` is the old spelling).
    #[arg(
        long = "out-dir",
        alias = "out",
        value_name = "DIR",
        default_value = PLOT_DIR,
        value_hint = ValueHint::DirPath
    )]
    pub out: PathBuf,

    /// Image format.
    #[arg(long, short = 'f', value_enum, default_value_t = ImageFormat::Both)]
    pub format: ImageFormat,

    /// Replace existing image files.
    #[arg(long)]
    pub force: bool,

    /// Not for plot, which writes several files: refused with a pointer to --out-dir.
    #[arg(long, short = 'o', value_name = "FILE", hide = true)]
    pub output: Option<PathBuf>,
}

/// Output format of the findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FindingsFormat {
    /// One line per finding grouped by rule, then a summary line (`table` also works).
    #[value(alias = "table")]
    Human,
    /// The stable JSON document of docs/validate-json.md.
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
    /// One row per finding.
    Csv,
    /// A Markdown table.
    Markdown,
}

/// The submission track.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TrackArg {
    /// Only --batch-size, --num-processes, --workers and --cuda may differ from the baselines.
    Baseline,
    /// Any change allowed; each is listed as a warning.
    Tweaked,
}

/// What a submission is checked against (shared by validate and pack).
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The suite (jobs file name) to validate, e.g. `fast`; by default the one the reports are named after.
    #[arg(long, short = 'n', value_name = "NAME", value_hint = ValueHint::Other)]
    pub name: Option<String>,

    /// Fewest runs of each bench on each GPU.
    #[arg(long, value_name = "N", default_value_t = 4, value_hint = ValueHint::Other)]
    pub min_runs: usize,

    /// The jobs file the suite ran with, when the submission does not hold it.
    #[arg(long, value_name = "FILE")]
    pub jobs: Option<PathBuf>,

    /// The reference jobs file to compare the vendor's with (default: the shipped
    /// baselines/jobs/<suite>.json).
    #[arg(long, value_name = "FILE")]
    pub baselines: Option<PathBuf>,

    /// The submission track.
    #[arg(long, value_enum, default_value_t = TrackArg::Baseline)]
    pub track: TrackArg,

    /// A flag that may also differ from the baselines, e.g. --allow=--seed (repeatable).
    #[arg(long, value_name = "ARG", allow_hyphen_values = true, value_hint = ValueHint::Other)]
    pub allow: Vec<String>,

    /// The benchmark's git repository: check each bench's version against its script there.
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,

    /// The revision of --repo the versions must match.
    #[arg(long, value_name = "REV", default_value = "HEAD", requires = "repo", value_hint = ValueHint::Other)]
    pub rev: String,

    /// TOML map of bench → script path in the repository, over the shipped baselines/scripts.toml.
    #[arg(long, value_name = "FILE", requires = "repo")]
    pub scripts: Option<PathBuf>,

    /// Turn errors of RULE (an id, `family.*`), in FILE if given, into listed waivers (repeatable).
    #[arg(long, value_name = "RULE[:FILE]")]
    pub waive: Vec<String>,

    #[command(flatten)]
    pub size: SizeArgs,

    /// Highest compression ratio accepted for an archive entry over 1 MiB.
    #[arg(long, value_name = "RATIO", default_value_t = 200, value_hint = ValueHint::Other,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_ratio: u64,
}

/// `mlbench validate` arguments.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The submission: a zip or a folder.
    #[arg(id = "path", value_name = "SUB", required_unless_present = "list_rules", value_hint = ValueHint::AnyPath)]
    pub submission: Option<PathBuf>,

    #[command(flatten)]
    pub check: CheckArgs,

    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = FindingsFormat::Human)]
    pub format: FindingsFormat,

    /// Write the output to FILE instead of standard output (never overwrites without --force).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Allow --output to replace an existing file.
    #[arg(long)]
    pub force: bool,

    /// List the rules (id, severity, what each checks) and exit.
    #[arg(long)]
    pub list_rules: bool,
}

/// `mlbench pack` arguments.
#[derive(Debug, Args)]
pub struct PackArgs {
    /// The submission folder.
    #[arg(id = "dir", value_name = "SUB", value_hint = ValueHint::DirPath)]
    pub submission: PathBuf,

    /// The zip to write (never overwritten without --force).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,

    #[command(flatten)]
    pub check: CheckArgs,

    /// Pack even when the folder has errors (SUBMISSION.json records it, with the count).
    #[arg(long)]
    pub allow_errors: bool,

    /// Allow --output to replace an existing file.
    #[arg(long)]
    pub force: bool,
}

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
    /// Report folders (searched recursively) or files, or one zipped submission (read in
    /// place, as `mlbench validate` reads it).
    // `id`: the name shell completion shows, as it was before the field had the one name.
    #[arg(id = "reports", value_name = "SUB", required = true, num_args = 1.., value_hint = ValueHint::AnyPath)]
    pub submissions: Vec<PathBuf>,

    /// The suite (jobs file) name the reports are named after, e.g. `fast` for fast_0.json.
    ///
    /// Optional when only one suite's reports are present.
    #[arg(long, short = 'n', value_name = "NAME", value_hint = ValueHint::Other)]
    pub name: Option<String>,

    /// GPU model whose targets to compare with: RTX, V100 or MI50 (built in), or any name
    /// that --targets has.
    #[arg(
        long,
        short = 'g',
        value_name = "MODEL",
        value_parser = GpuModelParser,
        hide_possible_values = true
    )]
    pub gpu_model: String,

    /// Scoring scheme.
    #[arg(long, value_enum, default_value_t = ScoringArg::Classic)]
    pub scoring: ScoringArg,

    /// Targets file instead of the built-in ones: the project's TOML (baselines/targets/)
    /// or the suite's CSV (bench,target,perf_target,sd_target or bench,V100,MI50,RTX).
    #[arg(long, value_name = "FILE")]
    pub targets: Option<PathBuf>,

    /// Price of the machine, for RPP = price ÷ score (score scoring).
    #[arg(long, value_name = "P", value_hint = ValueHint::Other)]
    pub price: Option<f64>,

    /// Fewest suite runs accepted.
    #[arg(long, value_name = "N", default_value_t = 4, value_hint = ValueHint::Other)]
    pub min_runs: u32,

    #[command(flatten)]
    pub size: SizeArgs,

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

    /// Add a 95% bootstrap confidence interval of every bench's mean (runs resampled
    /// within GPUs, 2000 resamples, fixed seed).
    #[arg(long)]
    pub ci: bool,

    /// Also write one self-contained HTML page: the tables, plots, the validation summary
    /// and provenance (never overwrites without --force).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    #[command(flatten)]
    pub precision: PrecisionArgs,

    /// Throughput by batch size instead of the scores: entries that differ only in
    /// `--batch-size` are one bench at several; per bench and GPU model, items/s with its
    /// interval at each, the ratio to the smallest, the best batch and where a larger one
    /// stops paying (docs/batch-size.md; `mlbench plot batch-size` draws it).
    #[arg(long, value_name = "batch_size", value_parser = mlbench_analyzer::batch_sweep::By::parse, conflicts_with_all = ["html", "check", "price", "ci"])]
    pub by: Option<mlbench_analyzer::batch_sweep::By>,
}

/// The precision a run count is judged by (`report`; docs/scoring.md, "How many runs").
#[derive(Debug, Args, Clone, Copy)]
pub struct PrecisionArgs {
    /// The half-width each bench's mean should be known to, relative: `1%` or `0.01`
    /// [default: the submission's --until, else 1%]. `report` says, per bench, how many
    /// runs the fixed-n and the anytime-valid interval need for it.
    #[arg(long, value_name = "PCT", value_parser = mlbench_analyzer::anytime::parse_fraction)]
    pub precision: Option<f64>,

    /// The run-to-run spread (CV) to tune the anytime-valid interval for, stated in
    /// advance, never taken from the data: `2%` or `0.02` [default: the submission's, else 2%].
    #[arg(long, value_name = "PCT", value_parser = mlbench_analyzer::anytime::parse_fraction)]
    pub expected_cv: Option<f64>,
}

impl PrecisionArgs {
    /// The design the flags ask for at the report's 95 % level (`None`: neither given, so
    /// the submission's recorded one or the default).
    pub fn design(&self) -> Result<Option<mlbench_analyzer::anytime::Design>, String> {
        mlbench_analyzer::until::asked_design(self.precision, self.expected_cv)
            .map_err(|e| format!("--precision: {e}"))
    }
}

/// `--track` as every library takes it (the schema's one `Track`).
impl From<TrackArg> for mlbench_schema::track::Track {
    fn from(track: TrackArg) -> Self {
        match track {
            TrackArg::Baseline => Self::Baseline,
            TrackArg::Tweaked => Self::Tweaked,
        }
    }
}

/// `--interval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IntervalArg {
    /// The paired bootstrap of the samples.
    Bootstrap,
    /// The anytime-valid sequences of the runs.
    Anytime,
}

/// `grid`'s and `plot`'s comparison arguments, as the analyzer takes them.
impl From<&CompareArgs> for mlbench_analyzer::compare::CompareOptions {
    fn from(args: &CompareArgs) -> Self {
        Self {
            labels: args.labels.clone(),
            baseline: args.baseline.clone(),
            suite: args.name.clone(),
            weights: args.weights.clone(),
            track: args.track.into(),
            resamples: args.resamples,
            seed: args.seed,
            max_bytes: args.size.max_bytes,
            allow_mixed_runtimes: args.allow_mixed_runtimes,
            include_failing: args.include_failing,
            interval: match args.interval {
                IntervalArg::Bootstrap => mlbench_analyzer::grid::Interval::Bootstrap,
                IntervalArg::Anytime => mlbench_analyzer::grid::Interval::Anytime,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalized(args: &[&str]) -> Vec<String> {
        let args = args.iter().map(std::ffi::OsString::from).collect();
        normalize_args(args)
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn older_input_flags_become_positionals() {
        assert_eq!(
            normalized(&["mlbench", "report", "-r", "a", "b", "-g", "RTX"]),
            ["mlbench", "report", "a", "b", "-g", "RTX"]
        );
        assert_eq!(
            normalized(&["mlbench", "plot", "loss", "--from", "a", "--out-dir", "x"]),
            ["mlbench", "plot", "loss", "a", "--out-dir", "x"]
        );
        assert_eq!(
            normalized(&["mlbench", "grid", "--reports=a", "--from=b"]),
            ["mlbench", "grid", "a", "b"]
        );
        // Not a command that reads submissions, or after `--`: untouched.
        let run = ["mlbench", "run", "--jobs", "j.json", "-r"];
        assert_eq!(normalized(&run), run);
        let dashed = ["mlbench", "validate", "--", "-r"];
        assert_eq!(normalized(&dashed), dashed);
        assert_eq!(
            normalized(&["mlbench", "report", "-r", "a", "--", "-r"]),
            ["mlbench", "report", "a", "--", "-r"]
        );
    }

    #[test]
    fn the_help_texts_end_where_their_text_does() {
        let texts = [
            EXAMPLES,
            run_help!(),
            include_str!("help/exit.txt"),
            include_str!("help/report.txt"),
            include_str!("help/validate.txt"),
            include_str!("help/pack.txt"),
            include_str!("help/grid.txt"),
            include_str!("help/plot.txt"),
            include_str!("help/targets.txt"),
        ];
        for text in texts {
            assert!(!text.ends_with(char::is_whitespace), "{text:?}");
        }
    }

    #[test]
    fn the_command_is_consistent() {
        command().debug_assert();
    }
}
