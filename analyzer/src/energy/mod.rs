//! Energy beside the figures (docs/telemetry.md): each copy's timed window from
//! its telemetry file, matched to its report entry ([`pairing`]), measured
//! ([`copy::measure`]: joules gross and net of the run's idle baseline, by counter where
//! the device has one, else by the power trapezoid; the items the entry counted over the
//! window; power and utilisation), then per bench over runs and copies with bootstrap
//! intervals ([`aggregate`]). [`per_joule`] turns a submission's samples into items per
//! joule for the grid. A folder and a zip are read alike, through [`files::Files`].
//!
//! Where no run has telemetry, nothing here runs and no output changes.

pub mod aggregate;
pub mod copy;
pub mod files;
pub mod pairing;
pub mod per_joule;

pub use aggregate::Draw;
pub use mlbench_results::energy::Energy;
pub use per_joule::{PerJoule, grid_per, grid_per_joule, per_joule, per_joule_all};

use crate::grid::{DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED};
use files::{Files, Held, OnDisk};
use mlbench_results::energy::CopyEnergy;
use mlbench_schema::telemetry::IDLE_WINDOW;
use mlbench_telemetry::WindowSummary;
use mlbench_telemetry::fold::{Reduced, reduce_bytes};
use mlbench_telemetry::trace::{self, TraceError};
use mlbench_validator::{Intake, Limits};
use pairing::RunFolder;
use std::path::{Path, PathBuf};

impl Default for Draw {
    /// The grid's: 2000 resamples, seed 2019, 95 %.
    fn default() -> Draw {
        Draw {
            resamples: DEFAULT_RESAMPLES,
            seed: DEFAULT_SEED,
            level: DEFAULT_LEVEL,
        }
    }
}

/// The telemetry file `name` of `folder`, read in one pass (its samples folded, not
/// kept), its errors naming it as `display` (as the report names files).
fn read_named(
    files: &dyn Files,
    folder: &RunFolder,
    name: &str,
    display: &str,
) -> Result<Reduced, String> {
    let bytes = (files.read(&folder.dir, name)).map_err(|why| format!("{display}: {why}"))?;
    reduce_bytes(Path::new(display), &bytes).map_err(|e| e.to_string())
}

/// The idle windows of a run's `idle.<device>.jsonl` files; a note for each unreadable.
fn idle_windows(
    files: &dyn Files,
    folder: &RunFolder,
    notes: &mut Vec<String>,
) -> Vec<WindowSummary> {
    let mut out = Vec::new();
    for name in &folder.idle {
        match read_named(files, folder, name, &format!("{}/{name}", folder.display)) {
            Ok(file) => out.extend(
                file.summary_with_idle(&[])
                    .windows
                    .into_iter()
                    .filter(|w| w.name == IDLE_WINDOW),
            ),
            Err(e) => notes.push(format!("idle baseline of {}: {e}", folder.run)),
        }
    }
    out
}

/// Every paired copy of a run folder measured (failed entries left out: a failed run
/// has no figure); a note for each that could not be.
fn measure_folder(
    files: &dyn Files,
    folder: &RunFolder,
    notes: &mut Vec<String>,
) -> Vec<(usize, CopyEnergy)> {
    let idle = idle_windows(files, folder, notes);
    let mut out = Vec::new();
    for pair in &folder.pairs {
        if pair.entry.failure(false).is_some() {
            continue;
        }
        let measured = read_named(files, folder, &pair.telemetry, &pair.telemetry_display)
            .and_then(|file| copy::measure(pair, &file, &idle));
        match measured {
            Ok(c) => out.push((pair.ordinal, c)),
            Err(e) => notes.push(e),
        }
    }
    out
}

/// [`energy_of`] the submission at `paths` of `suite`, read within `max_bytes` as the
/// report reads it: a zip given alone read in place ([`energy_of_intake`]), else the
/// report files found under the folders (those that fit) and their telemetry from disk.
/// `None` where nothing can be found, for report files given one by one, or where the
/// zip cannot be read (the report, which read it first, has said why).
pub fn energy_of_paths(paths: &[PathBuf], suite: &str, max_bytes: u64) -> Option<Energy> {
    if paths.iter().any(|p| p.is_file()) {
        let [one] = paths else { return None };
        let intake = crate::load::read_intake(one, &Limits::within(max_bytes)).ok()?;
        return energy_of_intake(&intake, suite);
    }
    let mut discovery = mlbench_submission::discover(paths, Some(suite)).ok()?;
    discovery.set_aside_over(max_bytes);
    energy_of(&OnDisk::new(&discovery, max_bytes), Draw::default())
}

/// [`energy_of`] a submission the validator's intake holds (a zip read in place, or a
/// folder), its reports of `suite`; `None` also where the intake holds no report stream.
pub fn energy_of_intake(intake: &Intake, suite: &str) -> Option<Energy> {
    energy_of(&Held::new(intake, suite), Draw::default())
}

/// The energy section of the submission `files` holds: every run folder with
/// telemetry, its copies paired, measured and shared out, and each bench's figures;
/// `None` when no run has a telemetry file to pair.
pub fn energy_of(files: &dyn Files, draw: Draw) -> Option<Energy> {
    let mut notes = Vec::new();
    let folders = pairing::run_folders(files, &mut notes);
    if folders.iter().all(|f| f.pairs.is_empty()) && notes.is_empty() {
        return None;
    }
    let mut keyed: Vec<((String, String, usize), CopyEnergy)> = Vec::new();
    for folder in &folders {
        for (ordinal, c) in measure_folder(files, folder, &mut notes) {
            keyed.push(((folder.dir.clone(), c.bench.clone(), ordinal), c));
        }
    }
    let (keys, mut copies): (Vec<_>, Vec<_>) = keyed.into_iter().unzip();
    aggregate::share_devices(&mut copies, |i| keys[i].clone());
    copies.sort_by(|a, b| {
        (&a.run, &a.bench, a.copy, a.entry).cmp(&(&b.run, &b.bench, b.copy, b.entry))
    });
    Some(Energy {
        benches: aggregate::benches(&copies, draw),
        copies,
        resamples: draw.resamples,
        seed: draw.seed,
        level: draw.level,
        notes,
    })
}

/// The power traces under `paths` ([`trace::load_with`]): folders, and zips read in
/// place by the validator's intake within `max_bytes` (as every command reads a zip).
///
/// # Errors
/// [`TraceError`]: as [`trace::load`]; a zip that cannot be read, or whose container is
/// unsafe or broken.
pub fn power_traces(paths: &[PathBuf], max_bytes: u64) -> Result<trace::Loaded, TraceError> {
    let read_zip = |path: &Path| {
        let intake = crate::load::read_intake(path, &Limits::within(max_bytes)).map_err(|e| {
            TraceError::Zip {
                path: path.to_owned(),
                message: e.to_string(),
            }
        })?;
        Ok(intake
            .files
            .into_iter()
            .map(|f| (f.path, f.bytes))
            .collect())
    };
    trace::load_with(paths, &read_zip)
}

/// The traces of a report's HTML page, one per bench ([`trace::one_per_bench`]), where
/// the report has `energy` (none otherwise: nothing is read).
///
/// # Errors
/// As [`power_traces`].
pub fn page_traces(
    paths: &[PathBuf],
    energy: bool,
    max_bytes: u64,
) -> Result<Vec<trace::Trace>, TraceError> {
    match energy {
        true => Ok(trace::one_per_bench(power_traces(paths, max_bytes)?.traces)),
        false => Ok(Vec::new()),
    }
}

#[cfg(test)]
mod tests;
