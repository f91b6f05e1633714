//! Energy beside the figures (docs/telemetry.md): each copy's timed window from
//! its telemetry file, matched to its report entry ([`pairing`]), measured
//! ([`copy::measure`]: joules gross and net of the run's idle baseline, by counter where
//! the device has one, else by the power trapezoid; the items the entry counted over the
//! window; power and utilisation), then per bench over runs and copies with bootstrap
//! intervals ([`aggregate`]). [`per_joule`] turns a submission's samples into items per
//! joule for the grid; [`traces`] are each bench's power over time, for its chart. A
//! folder and a zip, listed or held, are read alike, through [`Submitted`]: the
//! validator's intake, which opens only the regular files within the submission.
//!
//! Where no run has telemetry, nothing here runs and no output changes.

pub mod aggregate;
pub mod copy;
pub mod pairing;
pub mod per_joule;
pub mod submitted;
pub mod traces;

pub use aggregate::Draw;
pub use mlbench_results::energy::Energy;
pub use per_joule::{
    PerJoule, grid_per, grid_per_joule, per_joule, per_joule_all, sensor_kinds,
    untier_mixed_sensors,
};

use crate::grid::{DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED};
use mlbench_results::energy::CopyEnergy;
use mlbench_schema::telemetry::IDLE_WINDOW;
use mlbench_submission::Opened;
use mlbench_telemetry::WindowSummary;
use mlbench_validator::{Intake, Limits};
use pairing::RunFolder;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
pub use submitted::Submitted;
pub use traces::{Loaded, TraceError, held_traces, opened_traces, page_traces, power_traces};

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

/// The idle windows of a run's `idle.<device>.jsonl` files; a note for each unreadable.
fn idle_windows(
    sub: &Submitted,
    folder: &RunFolder,
    notes: &mut Vec<String>,
) -> Vec<WindowSummary> {
    let wanted: BTreeSet<String> = (folder.idle.iter())
        .map(|name| format!("{}/{name}", folder.dir))
        .collect();
    let mut out = Vec::new();
    let read = sub.read_each(
        |path| wanted.contains(path),
        |path, content| submitted::reduce_content(path, content).map_err(|e| e.to_string()),
    );
    for (path, read) in read {
        match read.map_err(|why| format!("{path}: {why}")).and_then(|r| r) {
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
/// has no figure), each file folded as it is read; a note for each that could not be.
fn measure_folder(
    sub: &Submitted,
    folder: &RunFolder,
    notes: &mut Vec<String>,
) -> Vec<(usize, CopyEnergy)> {
    let idle = idle_windows(sub, folder, notes);
    let pairs: Vec<&pairing::Paired> = (folder.pairs.iter())
        .filter(|pair| pair.entry.failure(false).is_none())
        .collect();
    // A display path names one file: its pair's.
    let by_path: HashMap<&str, &pairing::Paired> = (pairs.iter())
        .map(|p| (p.telemetry_display.as_str(), *p))
        .collect();
    let measured = sub.read_each(
        |path| by_path.contains_key(path),
        |path, content| {
            let file = submitted::reduce_content(path, content).map_err(|e| e.to_string())?;
            let pair = by_path
                .get(path)
                .ok_or_else(|| format!("{path}: not paired"))?;
            copy::measure(pair, &file, &idle).map(|c| (pair.ordinal, c))
        },
    );
    let mut measured: HashMap<String, Result<_, String>> = measured.into_iter().collect();
    let mut out = Vec::new();
    // In the pairs' order, as the notes have always come.
    for path in pairs.iter().map(|p| &p.telemetry_display) {
        let Some(read) = measured.remove(path) else {
            continue;
        };
        match read.map_err(|why| format!("{path}: {why}")).and_then(|r| r) {
            Ok(c) => out.push(c),
            Err(e) => notes.push(e),
        }
    }
    out
}

/// [`energy_of`] the submissions at `paths` of `suite`, each listed within `max_bytes`
/// by the validator's intake (a folder or a zip), as the report reads them. `None` where
/// nothing can be listed or found, or for report files given one by one.
pub fn energy_of_paths(paths: &[PathBuf], suite: &str, max_bytes: u64) -> Option<Energy> {
    let zip = |p: &PathBuf| mlbench_schema::read_buffer::has_zip_extension(p);
    if paths.iter().any(|p| p.is_file()) && !matches!(paths, [one] if zip(one)) {
        return None;
    }
    let limits = Limits::within(max_bytes);
    let subs: Vec<Submitted> = (paths.iter())
        .map(|path| Submitted::list(path, &limits))
        .collect::<Result<_, _>>()
        .ok()?;
    energy_of(&subs, suite, Draw::default())
}

/// [`energy_of`] the submissions `opened` once for the whole command (their listings, not
/// walked again), their reports of `suite`.
pub fn energy_of_opened(opened: &[Opened], suite: &str) -> Option<Energy> {
    let subs: Vec<Submitted> = (opened.iter())
        .map(|o| Submitted::Opened(o.listing()))
        .collect();
    energy_of(&subs, suite, Draw::default())
}

/// [`energy_of`] a submission the validator's intake holds (a zip read in place, or a
/// folder), its reports of `suite`; `None` also where the intake holds no report stream.
pub fn energy_of_intake(intake: &Intake, suite: &str) -> Option<Energy> {
    energy_of(&[Submitted::Held(intake)], suite, Draw::default())
}

/// The energy section of the submissions `subs` (their reports of `suite`): every run
/// folder with telemetry, its copies paired, measured and shared out, and each bench's
/// figures, with a note for each telemetry file the intake left out (a link, a FIFO, a
/// file over the limits); `None` when no run has a telemetry file to pair and nothing
/// was left out.
pub fn energy_of(subs: &[Submitted], suite: &str, draw: Draw) -> Option<Energy> {
    let mut notes: Vec<String> = (subs.iter())
        .flat_map(|sub| submitted::left_out(sub, ""))
        .map(|(file, why)| format!("{file}: {why}"))
        .collect();
    let folders: Vec<Vec<RunFolder>> = (subs.iter())
        .map(|sub| pairing::run_folders(sub, suite, &mut notes))
        .collect();
    if folders.iter().flatten().all(|f| f.pairs.is_empty()) && notes.is_empty() {
        return None;
    }
    let mut keyed: Vec<((usize, String, String, usize), CopyEnergy)> = Vec::new();
    for (k, (sub, folders)) in subs.iter().zip(&folders).enumerate() {
        for folder in folders {
            for (ordinal, c) in measure_folder(sub, folder, &mut notes) {
                keyed.push(((k, folder.dir.clone(), c.bench.clone(), ordinal), c));
            }
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
