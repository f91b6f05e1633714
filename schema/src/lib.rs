//! The Mila training suite's formats, read tolerantly and written exactly.
//!
//! - [`value`], [`pyjson`], [`pyrepr`]: JSON and `str()` as Python has them (`NaN`
//!   tokens, int/float distinction, `sort_keys` + `indent=4` output);
//! - [`entry`], [`reader`], [`runs`]: report entries, report files of every era, and
//!   telling their runs apart (finding them in a submission is `mlbench-submission`'s);
//! - [`writer`]: the legacy stream format, byte for byte;
//! - [`unique_id`]: the suite's id and version algorithms;
//! - [`timing`]: its `StatStream` and throughput arithmetic; [`measure`]: what counts
//!   as a measurement (finite, not negative, at most 10¹²);
//! - [`targets`]: target tables and entry selection rules;
//! - [`runtime`]: what produced a submission (the suite's scripts or `mlbench run`),
//!   declared or inferred from the entries, and the runtimes' parity per bench;
//! - [`jobs`], [`scripts`]: jobs files (parsing, expansion, comparison, the shell-word
//!   splitter) and the map from bench to entry script;
//! - [`suite`]: which suite of report files is read; [`track`]: the submission track;
//! - [`timings`]: the `MLBENCH_TIMINGS` switch;
//! - [`telemetry`]: the sampler's files (energy, power, utilisation beside a bench):
//!   header, samples, window marks, their reader and writer;
//! - [`class`]: what kind of failure an error is (its exit code's class);
//! - [`destination`]: where mlbench writes (regular files, checked before the work);
//!   [`read_buffer`]: how input files are opened (regular files only, never blocking).
#![warn(missing_docs)]

pub mod calendar;
pub mod class;
pub mod destination;
pub mod entry;
pub mod gpu_names;
pub mod jobs;

pub mod measure;
pub mod profile;
pub mod pyjson;
pub mod pyrepr;
pub mod read_buffer;
pub mod reader;
pub mod rng;
pub mod runs;
pub mod runtime;
pub mod scripts;
pub mod stopping;
pub mod suite;
pub mod system;
pub mod targets;
pub mod telemetry;
pub mod timing;
pub mod timings;
pub mod track;
pub mod unique_id;
pub mod value;
pub mod words;
pub mod writer;

pub use entry::{FailureKind, ReportEntry};
pub use jobs::{ArgChange, Config, Job, JobsDiff, JobsError, JobsFile};
pub use reader::{FileName, ReadError};
pub use runtime::{Runtime, RuntimeKind, SubmissionRuntime};
pub use scripts::{ScriptMap, ScriptsError};
pub use suite::{SuiteChoice, SuiteError, choose_suite};
pub use system::SystemInfo;
pub use targets::{Scoring, SelectionRule, Target, TargetTable};
pub use timings::Timings;
pub use track::Track;
pub use value::{Object, Value};
