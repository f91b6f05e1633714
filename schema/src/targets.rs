//! Targets: the expected throughput of each bench on a GPU model, with the rules that
//! pick which entries count (docs/suite.md#the-classic-tool, #target-csvs).
//!
//! Two scorings, two kinds of table:
//! - `classic` (the trimmed-mean tool, `data.csv`): one target per bench per GPU model;
//! - `score` (the HEAD tool, `target_<model>.csv`): target, minimum `perf_target`
//!   (mean ÷ target) and maximum `sd_target` (sd ÷ mean) per bench.
//!
//! The project's own tables are TOML files in `baselines/targets/`, compiled in; a user's
//! file can be TOML in the same layout or CSV in the suite's original layouts.

use crate::entry::ReportEntry;
use crate::runtime::Runtime;
use crate::value::Value;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// Which report tool's scheme the numbers follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scoring {
    /// The trimmed-mean tool (milabench 17bb0c4…03b8be2), the seed README's table.
    Classic,
    /// The HEAD tool (ce4e272): pooled samples, pass rates and the BF score.
    Score,
}

impl fmt::Display for Scoring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scoring::Classic => "classic",
            Scoring::Score => "score",
        })
    }
}

/// A target of one bench.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// Bench name as in the reports.
    pub bench: String,
    /// Expected throughput (items/s; efficiency for `scaling`).
    pub target: f64,
    /// Minimum mean ÷ target to pass (score tables).
    pub perf_target: Option<f64>,
    /// Maximum sd ÷ mean to pass (score tables).
    pub sd_target: Option<f64>,
    /// Fields whose values vary by design between the entries of this bench, which are
    /// pooled rather than set aside as conflicting configurations: `scaling` runs one
    /// job at world sizes 1..N (`devices`, `vcd`) and the suite pooled them all.
    pub pool_over: Vec<String>,
    /// The `--batch-size` the target was measured with (per process, as the jobs file
    /// gives it: [`ReportEntry::given_batch_size`]); `None`: the table does not say.
    pub batch_size: Option<i64>,
    /// The other arguments the baseline track lets a vendor change (`--num-processes`,
    /// `--workers`, `--cuda`/`--no-cuda`), as the target's jobs file gave them, by flag
    /// (a bare flag is `""`); empty: the table does not say.
    pub args: BTreeMap<String, Value>,
}

/// A rule that keeps only some entries of a bench (the classic tool's filters, as data).
#[derive(Debug, Clone, PartialEq)]
pub enum SelectionRule {
    /// Keep entries whose `field` equals `value` (`wlm`: `model` = `"GRU"`).
    Equals {
        /// The bench the rule applies to.
        bench: String,
        /// The entry field.
        field: String,
        /// The value it must have.
        value: Value,
    },
    /// Keep entries that ran on exactly one device (`ssd`: the per-GPU job only).
    SingleDevice {
        /// The bench the rule applies to.
        bench: String,
    },
}

impl SelectionRule {
    /// The bench the rule applies to.
    pub fn bench(&self) -> &str {
        match self {
            SelectionRule::Equals { bench, .. } | SelectionRule::SingleDevice { bench } => bench,
        }
    }

    /// Whether `entry` (of this rule's bench) is kept.
    pub fn keeps(&self, entry: &ReportEntry) -> bool {
        match self {
            SelectionRule::Equals { field, value, .. } => {
                entry.get(field).is_some_and(|v| same(v, value))
            }
            SelectionRule::SingleDevice { .. } => entry.single_device().is_some(),
        }
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            a.as_f64() == b.as_f64()
        }
        _ => a == b,
    }
}

impl fmt::Display for SelectionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SelectionRule::Equals {
                bench,
                field,
                value,
            } => {
                write!(
                    f,
                    "{bench}: only {field} = {}",
                    crate::pyrepr::py_repr(value)
                )
            }
            SelectionRule::SingleDevice { bench } => {
                write!(f, "{bench}: only single-device entries")
            }
        }
    }
}

/// The targets of one GPU model under one scoring.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetTable {
    /// The scoring these targets serve.
    pub scoring: Scoring,
    /// The GPU model, as given by the user or the file.
    pub gpu_model: String,
    /// Where the figures come from, for provenance.
    pub source: String,
    /// One row per bench, in file order.
    pub targets: Vec<Target>,
    /// Benches whose entries are set aside entirely (the HEAD tool's `_exclude`).
    pub exclude: Vec<String>,
    /// Entry selection rules.
    pub select: Vec<SelectionRule>,
    /// What measured the figures (`runtime = "…"` in the TOML layout; `None`: the file
    /// does not say, as a CSV cannot). The built-in tables are the suite's scripts'.
    pub runtime: Option<Runtime>,
    /// Where a table made from a submission comes from (`[provenance]`, written by
    /// `mlbench targets`); `None` for the others.
    pub provenance: Option<TargetsProvenance>,
    /// A field whose values are one sweep of every bench (`batch_size` under `report --by
    /// batch_size`): pooled over like a row's `pool_over`, for every bench, and no selection
    /// rule on it applies ([`TargetTable::sweeping`]). `None` in every table read from a file.
    pub swept: Option<String>,
}

/// Where a target table made from a baseline submission comes from: the `[provenance]`
/// table of the TOML layout (docs/targets.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetsProvenance {
    /// The submission, as given (a zip or a folder).
    pub submission: String,
    /// The SHA-256 of the zip, when the submission is one.
    #[serde(default)]
    pub sha256: Option<String>,
    /// The SHA-256 of the manifest of the submission's files: the `sha256sum` listing of
    /// every file read (sorted by path, `MANIFEST.sha256` itself left out), as `mlbench
    /// pack` writes it; the same for the folder and for the zip packed from it, but for
    /// `SUBMISSION.json`.
    pub manifest_sha256: String,
    /// The suite whose reports were read.
    #[serde(default)]
    pub suite: Option<String>,
    /// Runs and GPUs read.
    #[serde(default)]
    pub runs: usize,
    /// GPUs read.
    #[serde(default)]
    pub gpus: usize,
    /// What each target is.
    #[serde(default)]
    pub statistic: String,
    /// The tool that made the table (`mlbench 0.1.0`).
    #[serde(default)]
    pub tool: String,
    /// The date given when it was made (`None`: none was given, for reproducible bytes).
    #[serde(default)]
    pub date: Option<String>,
    /// What the validation of the submission found when the table was made: `passed`
    /// (with its warnings), or `failed: …` when `--allow-failing` made targets of a
    /// submission with errors (or packed with them); `None`: a table of before this
    /// field.
    #[serde(default)]
    pub baseline_validation: Option<String>,
}

impl TargetTable {
    /// Figures that are allowed but almost certainly a mistake, one sentence each: an
    /// `sd_target` above 1 (100 % of the mean) is a percentage written where the suite
    /// writes a fraction (5 for 0.05).
    pub fn warnings(&self) -> Vec<String> {
        self.targets
            .iter()
            .filter_map(|t| {
                let sd = t.sd_target.filter(|sd| *sd > 1.0)?;
                Some(format!(
                    "bench `{}`: sd_target {sd} allows an sd of {:.0}% of the mean; the suite \
                     writes it as a fraction ({} for {sd}%)",
                    t.bench,
                    sd * 100.0,
                    sd / 100.0
                ))
            })
            .collect()
    }
}

/// A targets file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TargetsError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The file's content is wrong.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, with the line where known.
        message: String,
    },
    /// No built-in table for this model.
    #[error("no built-in {scoring} targets for GPU model `{model}` (built in: RTX, V100, MI50)")]
    UnknownModel {
        /// The scoring.
        scoring: Scoring,
        /// The model asked for.
        model: String,
    },
}

const BUILTIN_CLASSIC: &str = include_str!("../../baselines/targets/classic.toml");
const BUILTIN_RTX: &str = include_str!("../../baselines/targets/rtx.toml");
const BUILTIN_V100: &str = include_str!("../../baselines/targets/v100.toml");
const BUILTIN_MI50: &str = include_str!("../../baselines/targets/mi50.toml");

/// The built-in GPU models, in the order the suite lists them.
pub use crate::gpu_names::MODELS as BUILTIN_MODELS;

impl TargetTable {
    /// The project's own table for `gpu_model` (case-insensitive).
    pub fn builtin(scoring: Scoring, gpu_model: &str) -> Result<TargetTable, TargetsError> {
        let unknown = || TargetsError::UnknownModel {
            scoring,
            model: gpu_model.to_owned(),
        };
        let model = BUILTIN_MODELS
            .iter()
            .find(|m| m.eq_ignore_ascii_case(gpu_model))
            .ok_or_else(unknown)?;
        let (name, text) = match (scoring, *model) {
            (Scoring::Classic, _) => ("baselines/targets/classic.toml", BUILTIN_CLASSIC),
            (Scoring::Score, "RTX") => ("baselines/targets/rtx.toml", BUILTIN_RTX),
            (Scoring::Score, "V100") => ("baselines/targets/v100.toml", BUILTIN_V100),
            (Scoring::Score, _) => ("baselines/targets/mi50.toml", BUILTIN_MI50),
        };
        Self::from_toml(name, text, scoring, model)
    }

    /// The table of the file `path` when one is given (`--targets`), else the built-in one.
    pub fn load_or_builtin(
        path: Option<&Path>,
        scoring: Scoring,
        gpu_model: &str,
    ) -> Result<TargetTable, TargetsError> {
        // A device name as the entries write it (`TITAN RTX`) means its model (`RTX`).
        let gpu_model = crate::gpu_names::resolve(gpu_model);
        match path {
            Some(path) => Self::load(path, scoring, gpu_model),
            None => Self::builtin(scoring, gpu_model),
        }
    }

    /// Reads a targets file: TOML in the project's layout, or CSV in either of the
    /// suite's layouts (`bench,target,perf_target,sd_target` or `bench,V100,MI50,RTX`).
    /// A CSV carries no selection rules or exclusions; the built-in ones of `scoring` apply.
    pub fn load(
        path: &Path,
        scoring: Scoring,
        gpu_model: &str,
    ) -> Result<TargetTable, TargetsError> {
        let name = path.display().to_string();
        let text = crate::read_buffer::read_regular_text(path, crate::read_buffer::Links::Follow)
            .map_err(|source| TargetsError::Io {
            path: name.clone(),
            source,
        })?;
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
        {
            Self::from_toml(&name, &text, scoring, gpu_model)
        } else {
            let mut table = Self::from_csv(&name, &text, scoring, gpu_model)?;
            let rules = Self::builtin(scoring, BUILTIN_MODELS[0])?;
            table.exclude = rules.exclude;
            table.select = rules.select;
            Ok(table)
        }
    }

    /// Parses the project's TOML layout (see `docs/targets.md`).
    pub fn from_toml(
        name: &str,
        text: &str,
        scoring: Scoring,
        gpu_model: &str,
    ) -> Result<TargetTable, TargetsError> {
        let invalid = |message: String| TargetsError::Invalid {
            path: name.to_owned(),
            message,
        };
        let raw: RawFile =
            toml::from_str(text).map_err(|e| invalid(e.to_string().trim_end().to_owned()))?;
        let file_scoring = match raw.scoring.as_str() {
            "classic" => Scoring::Classic,
            "score" => Scoring::Score,
            other => {
                return Err(invalid(format!(
                    "scoring must be \"classic\" or \"score\", found \"{other}\""
                )));
            }
        };
        if scoring == Scoring::Score && file_scoring == Scoring::Classic {
            return Err(invalid(
                "a classic table has no perf_target and sd_target: the score scoring needs a score table".into(),
            ));
        }
        let mut targets = Vec::with_capacity(raw.bench.len());
        for bench in raw.bench {
            let target = match file_scoring {
                Scoring::Score => bench
                    .target
                    .ok_or_else(|| invalid(format!("bench `{}` has no target", bench.name)))?,
                Scoring::Classic => *bench
                    .by_model
                    .iter()
                    .find(|(m, _)| m.eq_ignore_ascii_case(gpu_model))
                    .map(|(_, v)| v)
                    .ok_or_else(|| {
                        invalid(format!(
                            "bench `{}` has no target for GPU model `{gpu_model}` (it has: {})",
                            bench.name,
                            bench
                                .by_model
                                .keys()
                                .cloned()
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })?,
            };
            let args = bench.args().map_err(invalid)?;
            targets.push(Target {
                bench: bench.name,
                target,
                perf_target: bench.perf_target,
                sd_target: bench.sd_target,
                pool_over: bench.pool_over,
                batch_size: bench.batch_size,
                args,
            });
        }
        let mut select = Vec::with_capacity(raw.select.len());
        for rule in raw.select {
            select.push(match (rule.field, rule.equals, rule.single_device) {
                (Some(field), Some(value), None) => {
                    let value = toml_to_value(&value).ok_or_else(|| {
                        invalid(format!("select `{field}`: value must be a string, number or bool"))
                    })?;
                    SelectionRule::Equals {
                        bench: rule.bench,
                        field,
                        value,
                    }
                }
                (None, None, Some(true)) => SelectionRule::SingleDevice { bench: rule.bench },
                _ => {
                    return Err(invalid(format!(
                        "select rule for `{}` needs either `field` and `equals`, or `single_device = true`",
                        rule.bench
                    )));
                }
            });
        }
        let parse = |r: &str| r.parse::<Runtime>().map_err(|e| invalid(e.to_string()));
        let runtime = raw.runtime.as_deref().map(parse).transpose()?;
        Ok(TargetTable {
            scoring,
            gpu_model: raw.gpu_model.unwrap_or_else(|| gpu_model.to_owned()),
            source: raw.source.unwrap_or_else(|| name.to_owned()),
            targets,
            exclude: raw.exclude,
            select,
            runtime,
            provenance: raw.provenance,
            swept: None,
        })
    }

    /// Parses a CSV in one of the suite's layouts.
    pub fn from_csv(
        name: &str,
        text: &str,
        scoring: Scoring,
        gpu_model: &str,
    ) -> Result<TargetTable, TargetsError> {
        let invalid = |line: usize, message: String| TargetsError::Invalid {
            path: name.to_owned(),
            message: format!("line {line}: {message}"),
        };
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (_, header) = lines
            .next()
            .ok_or_else(|| invalid(1, "empty file".into()))?;
        let columns: Vec<&str> = header.split(',').map(str::trim).collect();
        if columns.first() != Some(&"bench") {
            return Err(invalid(
                1,
                format!("the first column must be `bench`, found `{}`", columns[0]),
            ));
        }
        let find = |col: &str| columns.iter().position(|c| c.eq_ignore_ascii_case(col));
        let (target_col, perf_col, sd_col) = match find("target") {
            Some(t) => (t, find("perf_target"), find("sd_target")),
            None => {
                let col = find(gpu_model).ok_or_else(|| {
                    invalid(
                        1,
                        format!(
                            "no column for GPU model `{gpu_model}` (columns: {})",
                            columns[1..].join(", ")
                        ),
                    )
                })?;
                (col, None, None)
            }
        };
        if scoring == Scoring::Score && (perf_col.is_none() || sd_col.is_none()) {
            return Err(invalid(
                1,
                "the score scoring needs the columns bench,target,perf_target,sd_target".into(),
            ));
        }
        let mut targets = Vec::new();
        for (i, line) in lines {
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            let number = |col: usize, what: &str| -> Result<f64, TargetsError> {
                let cell = cells.get(col).copied().unwrap_or("");
                cell.parse::<f64>()
                    .map_err(|_| invalid(i + 1, format!("{what} `{cell}` is not a number")))
            };
            let bench = cells[0].to_owned();
            targets.push(Target {
                target: number(target_col, "target")?,
                perf_target: perf_col.map(|c| number(c, "perf_target")).transpose()?,
                sd_target: sd_col.map(|c| number(c, "sd_target")).transpose()?,
                pool_over: suite_pooled(&bench),
                batch_size: None,
                args: BTreeMap::new(),
                bench,
            });
        }
        Ok(TargetTable {
            scoring,
            gpu_model: gpu_model.to_owned(),
            source: name.to_owned(),
            targets,
            exclude: Vec::new(),
            select: Vec::new(),
            runtime: None,
            provenance: None,
            swept: None,
        })
    }

    /// The target row of a bench.
    pub fn get(&self, bench: &str) -> Option<&Target> {
        self.targets.iter().find(|t| t.bench == bench)
    }

    /// The fields pooled over for `bench` (see [`Target::pool_over`]); empty for a bench
    /// not in the table.
    pub fn pool_over(&self, bench: &str) -> &[String] {
        self.get(bench).map_or(&[], |t| t.pool_over.as_slice())
    }

    /// Whether the entries of `bench` are set aside.
    pub fn is_excluded(&self, bench: &str) -> bool {
        self.exclude.iter().any(|b| b == bench)
    }

    /// The rule of `bench` that drops `entry`, if one does (a rule on the
    /// [`TargetTable::swept`] field never does).
    pub fn rejecting_rule(&self, bench: &str, entry: &ReportEntry) -> Option<&SelectionRule> {
        self.select
            .iter()
            .filter(|r| !self.is_swept_rule(r))
            .find(|r| r.bench() == bench && !r.keeps(entry))
    }

    fn is_swept_rule(&self, rule: &SelectionRule) -> bool {
        match (rule, &self.swept) {
            (SelectionRule::Equals { field, .. }, Some(swept)) => field == swept,
            _ => false,
        }
    }

    /// The table with `field` swept ([`TargetTable::swept`]): entries that differ in it
    /// only are one bench at several values, not conflicting configurations.
    pub fn sweeping(mut self, field: &str) -> TargetTable {
        self.swept = Some(field.to_owned());
        self
    }

    /// The fields the entries of `bench` are pooled over when they are grouped by
    /// configuration: its row's `pool_over` and the [`TargetTable::swept`] field.
    pub fn pooled_fields(&self, bench: &str) -> std::borrow::Cow<'_, [String]> {
        match &self.swept {
            None => std::borrow::Cow::Borrowed(self.pool_over(bench)),
            Some(field) => {
                let mut fields = self.pool_over(bench).to_vec();
                fields.push(field.clone());
                std::borrow::Cow::Owned(fields)
            }
        }
    }

    /// The benches a complete submission must have a result for: every row not excluded.
    pub fn required_benches(&self) -> impl Iterator<Item = &Target> {
        self.targets.iter().filter(|t| !self.is_excluded(&t.bench))
    }
}

impl TargetTable {
    /// The table in the project's TOML layout (docs/targets.md), which
    /// [`TargetTable::from_toml`] reads back equal (under the same scoring, for the model
    /// `gpu_model`): `comments` first, one `# ` line each, then `scoring`, `gpu_model`,
    /// `source`, `runtime`, `exclude`, `[provenance]`, the `[[select]]` rules and one
    /// `[[bench]]` per row. A classic table writes each target in a column named after
    /// its GPU model. Numbers are written as Rust's shortest round-trip form, so the
    /// figures read back to the bit; the bytes depend only on the table.
    pub fn to_toml(&self, comments: &[String]) -> String {
        let mut out = String::new();
        for line in comments {
            if line.is_empty() {
                out.push_str("#\n");
            } else {
                out.push_str(&format!("# {line}\n"));
            }
        }
        out.push_str(&format!(
            "scoring = {}\n",
            toml_str(&self.scoring.to_string())
        ));
        out.push_str(&format!("gpu_model = {}\n", toml_str(&self.gpu_model)));
        out.push_str(&format!("source = {}\n", toml_str(&self.source)));
        if let Some(runtime) = &self.runtime {
            out.push_str(&format!("runtime = {}\n", toml_str(&runtime.to_string())));
        }
        if !self.exclude.is_empty() {
            out.push_str(&format!("exclude = {}\n", toml_list(&self.exclude)));
        }
        if let Some(p) = &self.provenance {
            out.push_str("\n[provenance]\n");
            out.push_str(&format!("submission = {}\n", toml_str(&p.submission)));
            if let Some(sha) = &p.sha256 {
                out.push_str(&format!("sha256 = {}\n", toml_str(sha)));
            }
            out.push_str(&format!(
                "manifest_sha256 = {}\n",
                toml_str(&p.manifest_sha256)
            ));
            if let Some(suite) = &p.suite {
                out.push_str(&format!("suite = {}\n", toml_str(suite)));
            }
            out.push_str(&format!("runs = {}\ngpus = {}\n", p.runs, p.gpus));
            out.push_str(&format!("statistic = {}\n", toml_str(&p.statistic)));
            out.push_str(&format!("tool = {}\n", toml_str(&p.tool)));
            if let Some(date) = &p.date {
                out.push_str(&format!("date = {}\n", toml_str(date)));
            }
            if let Some(v) = &p.baseline_validation {
                out.push_str(&format!("baseline_validation = {}\n", toml_str(v)));
            }
        }
        for rule in &self.select {
            out.push_str("\n[[select]]\n");
            out.push_str(&format!("bench = {}\n", toml_str(rule.bench())));
            match rule {
                SelectionRule::Equals { field, value, .. } => {
                    out.push_str(&format!("field = {}\n", toml_str(field)));
                    out.push_str(&format!("equals = {}\n", toml_value(value)));
                }
                SelectionRule::SingleDevice { .. } => out.push_str("single_device = true\n"),
            }
        }
        for t in &self.targets {
            out.push_str("\n[[bench]]\n");
            out.push_str(&format!("name = {}\n", toml_str(&t.bench)));
            match self.scoring {
                Scoring::Classic => out.push_str(&format!(
                    "{} = {}\n",
                    toml_key(&self.gpu_model),
                    toml_float(t.target)
                )),
                Scoring::Score => {
                    out.push_str(&format!("target = {}\n", toml_float(t.target)));
                    for (key, v) in [("perf_target", t.perf_target), ("sd_target", t.sd_target)] {
                        if let Some(v) = v {
                            out.push_str(&format!("{key} = {}\n", toml_float(v)));
                        }
                    }
                }
            }
            if !t.pool_over.is_empty() {
                out.push_str(&format!("pool_over = {}\n", toml_list(&t.pool_over)));
            }
            if let Some(batch) = t.batch_size {
                out.push_str(&format!("batch_size = {batch}\n"));
            }
            if !t.args.is_empty() {
                let args: Vec<String> = (t.args.iter())
                    .map(|(flag, v)| format!("{} = {}", toml_str(flag), toml_value(v)))
                    .collect();
                out.push_str(&format!("args = {{ {} }}\n", args.join(", ")));
            }
        }
        out
    }
}

/// A TOML basic string.
fn toml_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A key: bare when TOML allows it, else quoted.
fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare { key.to_owned() } else { toml_str(key) }
}

/// A float that reads back to the bit (`2000.0`, `5.47`, `1e-7`; `inf`, `nan`).
fn toml_float(x: f64) -> String {
    if x.is_nan() {
        "nan".to_owned()
    } else {
        format!("{x:?}")
    }
}

/// The keys of a `[[bench]]` row that are not a GPU model's column: a model cannot be
/// named after one of them.
pub const BENCH_KEYS: &[&str] = &[
    "name",
    "target",
    "perf_target",
    "sd_target",
    "pool_over",
    "batch_size",
    "args",
];

fn toml_list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|i| toml_str(i)).collect();
    format!("[{}]", items.join(", "))
}

fn toml_value(v: &Value) -> String {
    match v {
        Value::Str(s) => toml_str(s),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => toml_float(*f),
        Value::Bool(b) => b.to_string(),
        other => toml_str(&crate::pyrepr::py_repr(other)),
    }
}

/// What the suite's own tools pooled, for tables read from its CSVs (which cannot say
/// so): `scaling`'s world sizes. The project's TOML tables say it with `pool_over`.
fn suite_pooled(bench: &str) -> Vec<String> {
    match bench {
        "scaling" => vec!["devices".to_owned(), "vcd".to_owned()],
        _ => Vec::new(),
    }
}

fn toml_to_value(v: &toml::Value) -> Option<Value> {
    Some(match v {
        toml::Value::String(s) => Value::Str(s.clone()),
        toml::Value::Integer(i) => Value::Int(*i),
        toml::Value::Float(f) => Value::Float(*f),
        toml::Value::Boolean(b) => Value::Bool(*b),
        _ => return None,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    scoring: String,
    gpu_model: Option<String>,
    source: Option<String>,
    runtime: Option<String>,
    #[serde(default)]
    exclude: Vec<String>,
    provenance: Option<TargetsProvenance>,
    #[serde(default)]
    select: Vec<RawSelect>,
    bench: Vec<RawBench>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSelect {
    bench: String,
    field: Option<String>,
    equals: Option<toml::Value>,
    single_device: Option<bool>,
}

#[derive(Deserialize)]
struct RawBench {
    name: String,
    target: Option<f64>,
    perf_target: Option<f64>,
    sd_target: Option<f64>,
    #[serde(default)]
    pool_over: Vec<String>,
    batch_size: Option<i64>,
    #[serde(default)]
    args: BTreeMap<String, toml::Value>,
    #[serde(flatten)]
    by_model: BTreeMap<String, f64>,
}

impl RawBench {
    /// The row's `args`, as values; why not, when one is not a string, number or bool.
    fn args(&self) -> Result<BTreeMap<String, Value>, String> {
        (self.args.iter())
            .map(|(flag, value)| {
                let value = toml_to_value(value).ok_or_else(|| {
                    format!(
                        "bench `{}`: args `{flag}`: value must be a string, number or bool",
                        self.name
                    )
                })?;
                Ok((flag.clone(), value))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_tables_load() {
        for model in BUILTIN_MODELS {
            let classic = TargetTable::builtin(Scoring::Classic, model).unwrap();
            assert_eq!(classic.targets.len(), 19);
            let score = TargetTable::builtin(Scoring::Score, &model.to_lowercase()).unwrap();
            assert_eq!(score.targets.len(), 20);
            assert_eq!(score.required_benches().count(), 17);
        }
        let rtx = TargetTable::builtin(Scoring::Classic, "rtx").unwrap();
        assert_eq!(rtx.get("atari").unwrap().target, 5.41);
        assert!(matches!(
            TargetTable::builtin(Scoring::Score, "H100"),
            Err(TargetsError::UnknownModel { .. })
        ));
    }

    #[test]
    fn an_sd_target_written_as_a_percentage_is_warned_of() {
        let t = TargetTable::from_csv(
            "t.csv",
            "bench,target,perf_target,sd_target\nloader,1200,0.5,5\nvae,7600,0.5,0.05\n",
            Scoring::Score,
            "X",
        )
        .unwrap();
        assert_eq!(
            t.warnings(),
            [
                "bench `loader`: sd_target 5 allows an sd of 500% of the mean; the suite writes it as a fraction (0.05 for 5%)"
            ]
        );
        for model in BUILTIN_MODELS {
            let builtin = TargetTable::builtin(Scoring::Score, model).unwrap();
            assert!(builtin.warnings().is_empty(), "{model}");
        }
    }

    /// What `to_toml` writes reads back equal, for both layouts, with the runtime,
    /// the provenance, rules of every kind and names that need quoting.
    #[test]
    fn tables_round_trip_through_toml() {
        let mut classic = TargetTable::builtin(Scoring::Classic, "RTX").unwrap();
        classic.gpu_model = "NVIDIA H100 \"SXM\"".into();
        classic.source = "submission a.zip".into();
        classic.runtime = Some(Runtime::mlbench_run(Some("2.13.0".into())));
        classic.targets[0].target = 373326.2319285007;
        classic.targets[1].target = 1e-7;
        classic.targets[2].pool_over = vec!["devices".into(), "vcd".into()];
        classic.exclude = vec!["dcgan_all".into()];
        classic.select.push(SelectionRule::Equals {
            bench: "x".into(),
            field: "ratio".into(),
            value: Value::Float(0.5),
        });
        classic.select.push(SelectionRule::Equals {
            bench: "x".into(),
            field: "half".into(),
            value: Value::Bool(true),
        });
        classic.provenance = Some(TargetsProvenance {
            submission: "subs/a.zip".into(),
            sha256: Some("ab".repeat(32)),
            manifest_sha256: "cd".repeat(32),
            suite: Some("fast".into()),
            runs: 5,
            gpus: 2,
            statistic: "classic trimmed mean".into(),
            tool: "mlbench 0.1.0".into(),
            date: Some("2026-01-02".into()),
            baseline_validation: Some("failed: 1 error (--allow-failing)".into()),
        });
        classic.targets[3].batch_size = Some(128);
        classic.targets[3].args = BTreeMap::from([
            ("--workers".to_owned(), Value::Int(8)),
            ("--cuda".to_owned(), Value::Str(String::new())),
        ]);
        let text = classic.to_toml(&["made by a test".into(), String::new()]);
        assert!(
            text.starts_with("# made by a test\n#\nscoring = \"classic\"\n"),
            "{text}"
        );
        assert!(
            text.contains("\n\"NVIDIA H100 \\\"SXM\\\"\" = 373326.2319285007\n"),
            "{text}"
        );
        let row = format!("name = \"{}\"\n", classic.targets[3].bench);
        let row = &text[text.find(&row).unwrap()..];
        assert!(
            row.contains("\nbatch_size = 128\nargs = { \"--cuda\" = \"\", \"--workers\" = 8 }\n"),
            "{text}"
        );
        assert!(
            text.contains("\nbaseline_validation = \"failed: 1 error (--allow-failing)\"\n"),
            "{text}"
        );
        let back =
            TargetTable::from_toml("t.toml", &text, Scoring::Classic, &classic.gpu_model).unwrap();
        assert_eq!(back, classic);
        let score = TargetTable::builtin(Scoring::Score, "MI50").unwrap();
        let text = score.to_toml(&[]);
        let mut back = TargetTable::from_toml("t.toml", &text, Scoring::Score, "MI50").unwrap();
        assert_eq!(back.source, score.source);
        back.source.clone_from(&score.source);
        assert_eq!(back, score);
        // The built-in tables say what measured them.
        assert_eq!(score.runtime, Some(Runtime::suite_scripts(None)));
        let err = TargetTable::from_toml(
            "t.toml",
            "scoring = \"classic\"\nruntime = \"python\"\nbench = []\n",
            Scoring::Classic,
            "RTX",
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("t.toml: runtime `python`: expected"),
            "{err}"
        );
    }

    /// A file of before `batch_size`, `args` and `baseline_validation` reads, saying none;
    /// the built-in tables give the batch sizes of the jobs files the suite measured with.
    #[test]
    fn batch_sizes_and_args_are_optional() {
        let old = "scoring = \"classic\"\n[provenance]\nsubmission = \"a.zip\"\nmanifest_sha256 = \"ab\"\n\n[[bench]]\nname = \"vae\"\nH100 = 10.0\n";
        let t = TargetTable::from_toml("t.toml", old, Scoring::Classic, "H100").unwrap();
        let vae = t.get("vae").unwrap();
        assert_eq!((vae.batch_size, vae.args.len()), (None, 0));
        assert_eq!(t.provenance.unwrap().baseline_validation, None);
        let bad = "scoring = \"classic\"\n[[bench]]\nname = \"vae\"\nH100 = 1.0\nargs = { \"--workers\" = [1] }\n";
        let err = TargetTable::from_toml("t.toml", bad, Scoring::Classic, "H100").unwrap_err();
        assert!(err.to_string().contains("args `--workers`"), "{err}");
        // fast.json: convnet 64, convnet_distributed 64 per GPU, recom 2048; atari, cart
        // and toy_lstm are given none.
        let classic = TargetTable::builtin(Scoring::Classic, "RTX").unwrap();
        let batch = |t: &TargetTable, b: &str| t.get(b).unwrap().batch_size;
        for (bench, size) in [
            ("convnet", 64),
            ("convnet_distributed", 64),
            ("recom", 2048),
            ("loader", 256),
        ] {
            assert_eq!(batch(&classic, bench), Some(size), "{bench}");
        }
        for bench in ["atari", "cart", "toy_lstm"] {
            assert_eq!(batch(&classic, bench), None, "{bench}");
        }
        for model in BUILTIN_MODELS {
            let score = TargetTable::builtin(Scoring::Score, model).unwrap();
            assert_eq!(batch(&score, "scaling"), Some(128), "{model}");
            assert_eq!(batch(&score, "convnet_fp16"), Some(128), "{model}");
            assert_eq!(batch(&score, "toy_reg"), Some(256), "{model}");
        }
    }

    #[test]
    fn csv_layouts() {
        let t = TargetTable::from_csv(
            "t.csv",
            "bench,V100,MI50,RTX\natari,6.61,1.24,5.41\n",
            Scoring::Classic,
            "mi50",
        )
        .unwrap();
        assert_eq!(t.targets[0].target, 1.24);
        let t = TargetTable::from_csv(
            "t.csv",
            "bench,target,perf_target,sd_target\nloader,1200.00,0.5,0.10\n",
            Scoring::Score,
            "X",
        )
        .unwrap();
        assert_eq!(t.targets[0].sd_target, Some(0.10));
        let e = TargetTable::from_csv("t.csv", "bench,V100\natari,6.61\n", Scoring::Score, "V100")
            .unwrap_err();
        assert!(e.to_string().contains("needs the columns"), "{e}");
        let e = TargetTable::from_csv(
            "t.csv",
            "bench,target\natari,fast\n",
            Scoring::Classic,
            "V100",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv: line 2: target `fast` is not a number"
        );
    }

    #[test]
    fn selection_rules_keep_and_drop() {
        let t = TargetTable::builtin(Scoring::Classic, "RTX").unwrap();
        let entry = |text: &str| {
            ReportEntry::new(
                crate::pyjson::parse(text.as_bytes())
                    .unwrap()
                    .as_object()
                    .unwrap()
                    .clone(),
            )
        };
        assert!(
            t.rejecting_rule("wlm", &entry(r#"{"model": "GRU"}"#))
                .is_none()
        );
        assert!(
            t.rejecting_rule("wlm", &entry(r#"{"model": "LSTM"}"#))
                .is_some()
        );
        assert!(
            t.rejecting_rule("loader", &entry(r#"{"batch_size": 256}"#))
                .is_none()
        );
        assert!(
            t.rejecting_rule("loader", &entry(r#"{"batch_size": 128}"#))
                .is_some()
        );
        assert!(
            t.rejecting_rule("ssd", &entry(r#"{"vcd": "12"}"#))
                .is_none()
        );
        assert!(
            t.rejecting_rule("ssd", &entry(r#"{"vcd": "0,1"}"#))
                .is_some()
        );
        assert!(
            t.rejecting_rule("toy_lstm", &entry(r#"{"dtype": "float64"}"#))
                .is_some()
        );
        assert!(t.rejecting_rule("vae", &entry(r#"{}"#)).is_none());
    }

    #[test]
    fn a_swept_field_is_pooled_for_every_bench_and_its_rules_waived() {
        // The score table: its `scaling` pools the world sizes.
        let t = TargetTable::builtin(Scoring::Score, "RTX").unwrap();
        let entry = |text: &str| {
            let fields = crate::pyjson::parse(text.as_bytes()).unwrap();
            ReportEntry::new(fields.as_object().unwrap().clone())
        };
        let swept = t.clone().sweeping("batch_size");
        assert_eq!(t.swept, None);
        let (loader_128, lstm) = (
            entry(r#"{"batch_size": 128}"#),
            entry(r#"{"model": "LSTM"}"#),
        );
        assert!(t.rejecting_rule("loader", &loader_128).is_some());
        assert!(swept.rejecting_rule("loader", &loader_128).is_none());
        // Rules on other fields still apply.
        assert!(swept.rejecting_rule("wlm", &lstm).is_some());
        assert!(t.pooled_fields("vae").is_empty());
        assert_eq!(*swept.pooled_fields("vae"), ["batch_size".to_owned()]);
        // A bench's own pooled fields come first; one not in the table gets the field too.
        let scaling = t.pool_over("scaling").to_vec();
        assert!(!scaling.is_empty());
        let mut both = scaling.clone();
        both.push("batch_size".into());
        assert_eq!(*swept.pooled_fields("scaling"), both[..]);
        assert_eq!(
            *swept.pooled_fields("not_a_bench"),
            ["batch_size".to_owned()]
        );
        assert_eq!(*t.pooled_fields("scaling"), scaling[..]);
    }
}
