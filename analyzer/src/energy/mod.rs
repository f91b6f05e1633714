//! Energy beside the figures (issue 25, docs/telemetry.md): each copy's timed window from
//! its telemetry file, matched to its report entry ([`pairing`]), measured
//! ([`copy::measure`]: joules gross and net of the run's idle baseline, by counter where
//! the device has one, else by the power trapezoid; the items the entry counted over the
//! window; power and utilisation), then per bench over runs and copies with bootstrap
//! intervals ([`aggregate`]). [`per_joule`] turns a submission's samples into items per
//! joule for the grid.
//!
//! Where no run has telemetry, nothing here runs and no output changes.

pub mod aggregate;
pub mod copy;
pub mod pairing;
pub mod per_joule;

pub use aggregate::Draw;
pub use per_joule::{PerJoule, grid_per, grid_per_joule, per_joule, per_joule_all};

use crate::grid::{DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED};
use mlbench_results::energy::{CopyEnergy, Energy};
use mlbench_schema::Discovery;
use mlbench_schema::telemetry::{IDLE_WINDOW, TelemetryFile, parse};
use mlbench_telemetry::{WindowSummary, summarize};
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

/// The telemetry file at `path`, its errors naming it as `display` (as the report names
/// files), not by its full path.
fn read_named(path: &Path, display: &str) -> Result<TelemetryFile, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{display}: cannot read: {e}"))?;
    parse(Path::new(display), &bytes).map_err(|e| e.to_string())
}

/// The idle windows of a run's `idle.<device>.jsonl` files; a note for each unreadable.
fn idle_windows(folder: &RunFolder, notes: &mut Vec<String>) -> Vec<WindowSummary> {
    let mut out = Vec::new();
    for path in &folder.idle {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        match read_named(path, &format!("{}/{name}", folder.display)) {
            Ok(file) => out.extend(
                summarize(&file)
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
fn measure_folder(folder: &RunFolder, notes: &mut Vec<String>) -> Vec<(usize, CopyEnergy)> {
    let idle = idle_windows(folder, notes);
    let mut out = Vec::new();
    for pair in &folder.pairs {
        if pair.entry.failure(false).is_some() {
            continue;
        }
        let measured = read_named(&pair.telemetry, &pair.telemetry_display)
            .and_then(|file| copy::measure(pair, &file, &idle));
        match measured {
            Ok(c) => out.push((pair.ordinal, c)),
            Err(e) => notes.push(e),
        }
    }
    out
}

/// [`energy_of`] the report files under `paths` of `suite` (those that fit in
/// `max_bytes`, as the report reads them); `None` for a zip (its telemetry is not read)
/// or where nothing can be found.
pub fn energy_of_paths(paths: &[PathBuf], suite: &str, max_bytes: u64) -> Option<Energy> {
    if paths.iter().any(|p| p.is_file()) {
        return None;
    }
    let mut discovery = mlbench_schema::discover(paths, Some(suite)).ok()?;
    discovery.set_aside_over(max_bytes);
    energy_of(&discovery, Draw::default())
}

/// The energy section of the submission `discovery` found: every run folder with
/// telemetry, its copies paired, measured and shared out, and each bench's figures;
/// `None` when no run has a telemetry file to pair.
pub fn energy_of(discovery: &Discovery, draw: Draw) -> Option<Energy> {
    let mut notes = Vec::new();
    let folders = pairing::run_folders(discovery, &mut notes);
    if folders.iter().all(|f| f.pairs.is_empty()) && notes.is_empty() {
        return None;
    }
    let mut keyed: Vec<((PathBuf, String, usize), CopyEnergy)> = Vec::new();
    for folder in &folders {
        for (ordinal, c) in measure_folder(folder, &mut notes) {
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

#[cfg(test)]
mod tests;
