//! `mlbench grid`: submissions against a baseline submission.

use crate::cli::{CompareArgs, GridArgs, GridFormat, TrackArg};
use crate::submission::{self, LoadedSubmission};
use crate::{Failure, Outcome, output};
use anyhow::{Context, anyhow, bail};
use mlbench_analyzer::grid::{Grid, GridInput, GridOptions, GridTrack, Weights};
use mlbench_schema::jobs::JobsFile;
use mlbench_schema::{Scoring, TargetTable};
use mlbench_validator::Limits;
use mlbench_validator::layout::{Role, SUBMISSION_NAME, classify};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// A submission with its label and track, loaded.
pub struct Labelled {
    /// The vendor's name.
    pub label: String,
    /// Its track.
    pub track: GridTrack,
    /// The submission.
    pub sub: LoadedSubmission,
}

/// The selection rules of the suite's targets (wlm's GRU, loader's 256, …) without any
/// target or exclusion: the grid compares what every vendor ran.
fn selection_only() -> anyhow::Result<TargetTable> {
    let mut table = TargetTable::builtin(Scoring::Classic, "RTX")?;
    table.targets.clear();
    table.exclude.clear();
    table.gpu_model = "grid".into();
    Ok(table)
}

fn label_of(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    match name.len().checked_sub(4) {
        Some(cut) if name.is_char_boundary(cut) && name[cut..].eq_ignore_ascii_case(".zip") => {
            name[..cut].to_owned()
        }
        _ => name,
    }
}

/// The track a packed submission carries in SUBMISSION.json.
fn packed_track(sub: &LoadedSubmission) -> Option<GridTrack> {
    let file = sub
        .intake
        .files
        .iter()
        .find(|f| f.path == SUBMISSION_NAME)?;
    let value: serde_json::Value = serde_json::from_slice(&file.bytes).ok()?;
    match value.get("track")?.as_str()? {
        "baseline" => Some(GridTrack::Baseline),
        "tweaked" => Some(GridTrack::Tweaked),
        _ => None,
    }
}

/// Loads every submission in parallel, with labels and tracks.
pub fn load_all(subs: &[PathBuf], args: &CompareArgs) -> anyhow::Result<Vec<Labelled>> {
    let mut labels: Vec<(PathBuf, String)> = Vec::new();
    for l in &args.labels {
        let (name, path) = l
            .split_once('=')
            .ok_or_else(|| anyhow!("--label {l}: expected NAME=SUB"))?;
        if name.is_empty() {
            bail!("--label {l}: the name is empty");
        }
        labels.push((PathBuf::from(path), name.to_owned()));
    }
    for (i, (path, name)) in labels.iter().enumerate() {
        if let Some((_, other)) = labels[..i].iter().find(|(p, _)| p == path) {
            bail!(
                "--label {name}={}: that submission is already labelled `{other}`",
                path.display()
            );
        }
        if !subs.contains(path) {
            bail!(
                "--label {name}={}: not one of the submissions given",
                path.display()
            );
        }
    }
    let targets = selection_only()?;
    let limits = Limits::default();
    let default_track = match args.track {
        TrackArg::Baseline => GridTrack::Baseline,
        TrackArg::Tweaked => GridTrack::Tweaked,
    };
    let loaded: Vec<anyhow::Result<Labelled>> = subs
        .par_iter()
        .map(|path| {
            let sub = submission::load(path, args.name.as_deref(), &targets, &limits)?;
            let label = labels
                .iter()
                .find(|(p, _)| p == path)
                .map_or_else(|| label_of(path), |(_, n)| n.clone());
            let track = packed_track(&sub).unwrap_or(default_track);
            Ok(Labelled { label, track, sub })
        })
        .collect();
    let loaded = loaded.into_iter().collect::<anyhow::Result<Vec<_>>>()?;
    let mut seen = std::collections::BTreeSet::new();
    for l in &loaded {
        if !seen.insert((l.label.clone(), l.track)) {
            bail!(
                "two submissions are labelled `{}` in the {} track; name them with --label NAME=SUB",
                l.label,
                l.track.as_str()
            );
        }
    }
    Ok(loaded)
}

/// The benches of the baseline's jobs file, when it has one.
fn expected_benches(sub: &LoadedSubmission) -> Option<Vec<String>> {
    let file = sub
        .intake
        .files
        .iter()
        .find(|f| classify(f) == Role::Jobs)?;
    let jobs = JobsFile::parse(&file.path, &file.bytes).ok()?;
    let mut names: Vec<String> = jobs.jobs.into_iter().map(|j| j.name).collect();
    names.dedup();
    Some(names)
}

/// Computes the grid of loaded submissions.
pub fn compute(
    loaded: Vec<Labelled>,
    args: &CompareArgs,
    explain: Option<(String, String)>,
) -> anyhow::Result<Grid> {
    let baseline = match &args.baseline {
        Some(b) => b.clone(),
        None => loaded
            .first()
            .map(|l| l.label.clone())
            .context("no submissions")?,
    };
    let benches = loaded
        .iter()
        .find(|l| l.label == baseline)
        .and_then(|l| expected_benches(&l.sub));
    let weights = args.weights.as_deref().map(Weights::load).transpose()?;
    let inputs: Vec<GridInput> = loaded
        .into_iter()
        .map(|l| GridInput {
            label: l.label,
            track: l.track,
            set: l.sub.set,
        })
        .collect();
    let options = GridOptions {
        baseline,
        weights,
        resamples: args.resamples,
        seed: args.seed,
        level: mlbench_analyzer::grid::DEFAULT_LEVEL,
        explain,
        benches,
    };
    Ok(mlbench_analyzer::grid::grid(&inputs, &options)?)
}

/// Runs `mlbench grid`.
pub fn run(args: &GridArgs) -> Result<Outcome, Failure> {
    let explain = match &args.explain {
        Some(pair) => {
            let (a, b) = pair
                .split_once(',')
                .ok_or_else(|| anyhow!("--explain {pair}: expected A,B"))?;
            Some((a.trim().to_owned(), b.trim().to_owned()))
        }
        None => None,
    };
    if args.format == GridFormat::Parquet && args.output.is_none() {
        return Err(anyhow!("--format parquet writes binary data: give --output FILE").into());
    }
    if args.compare.resamples == 0 {
        return Err(anyhow!("--resamples must be at least 1").into());
    }
    // Refuse before any work (and before writing either file) when one would be replaced.
    output::refuse_existing(args.output.iter().chain(args.html.iter()), args.force)?;
    let started = std::time::Instant::now();
    let timings = std::env::var_os("MLBENCH_TIMINGS").is_some();
    let loaded = load_all(&args.subs, &args.compare)?;
    if timings {
        eprintln!(
            "timing: read and extract: {:.1} ms",
            started.elapsed().as_secs_f64() * 1e3
        );
    }
    // What the HTML page shows besides the grid: each submission's validation, inputs.
    let page_extras = match &args.html {
        Some(_) => Some(crate::html_pages::Extras::gather(
            &loaded,
            &args.subs,
            crate::html_pages::GRID_MIN_RUNS,
        )?),
        None => None,
    };
    let computing = std::time::Instant::now();
    let grid = compute(loaded, &args.compare, explain)?;
    if timings {
        eprintln!(
            "timing: grid and bootstrap: {:.1} ms",
            computing.elapsed().as_secs_f64() * 1e3
        );
    }
    if let (Some(path), Some(extras)) = (&args.html, page_extras) {
        let text = crate::html_pages::grid_page(&grid, extras)?;
        output::emit(&text, Some(path), args.force)?;
    }
    match args.format {
        GridFormat::Table => output::emit(
            &crate::render::grid::table(&grid),
            args.output.as_deref(),
            args.force,
        )?,
        GridFormat::Markdown => output::emit(
            &crate::render::grid::markdown(&grid),
            args.output.as_deref(),
            args.force,
        )?,
        GridFormat::Json => output::emit(
            &crate::render::grid::json(&grid)?,
            args.output.as_deref(),
            args.force,
        )?,
        GridFormat::Csv => output::emit(
            &crate::render::grid::csv(&grid),
            args.output.as_deref(),
            args.force,
        )?,
        GridFormat::Parquet => output::emit_bytes(
            &mlbench_analyzer::grid_frame::grid_parquet(&grid)?,
            args.output.as_deref(),
            args.force,
        )?,
    }
    Ok(Outcome::Ok)
}
