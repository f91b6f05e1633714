//! The grid per joule (`mlbench grid --per joule`): each sample's throughput replaced by
//! its copy's items per joule (gross: the energy the devices drew over the timed window,
//! [`super::copy`]), so that the grid's ratios, intervals, tiers and attribution are of
//! energy efficiency, computed by the same code as the throughput's. A sample without a
//! paired telemetry window has no value and counts as missing.

use super::pairing::streams;
use super::{Draw, Submitted, energy_of, energy_of_paths};
use crate::compare::{CompareError, CompareOptions, Labelled, baseline_of, compute};
use crate::samples::SampleSet;
use mlbench_results::energy::Energy;
use mlbench_results::grid::{Grid, Per};
use mlbench_schema::telemetry::SourceKind;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// What [`per_joule`] did to one submission's samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PerJoule {
    /// Usable samples given their items per joule.
    pub with_energy: usize,
    /// Usable samples left without a value: no telemetry paired with them.
    pub without: usize,
}

/// Replaces each sample's value by the items per joule of its copy in `energy` (matched
/// by report file and entry). A usable sample without energy is taken out (the grid then
/// sees a bench without any as missing; [`per_joule_all`]'s notes count them); failed
/// and conflicting entries stay, for the grid's notes of what it left out.
pub fn per_joule(set: &mut SampleSet, energy: Option<&Energy>) -> PerJoule {
    let by_entry: HashMap<(&str, usize), f64> = energy
        .map(|e| {
            e.copies
                .iter()
                .filter_map(|c| Some(((c.report.as_str(), c.entry), c.items_per_joule?)))
                .collect()
        })
        .unwrap_or_default();
    let mut out = PerJoule::default();
    let files = &set.files;
    set.samples.retain_mut(|s| {
        let usable = s.value.is_some() && s.failure.is_none() && !s.conflict;
        let file = files.get(s.file as usize).map_or("", String::as_str);
        let value = by_entry.get(&(file, s.entry as usize)).copied();
        match (usable, value) {
            (true, Some(_)) => out.with_energy += 1,
            (true, None) => out.without += 1,
            (false, _) => {}
        }
        s.value = value;
        !usable || value.is_some()
    });
    out
}

/// The energy of the submission `l`, loaded from `path`: from the files its intake holds
/// where they include its reports (a zip and a folder alike), else read again from `path`
/// within `max_bytes` (an intake loaded lean holds no report).
fn energy_of_loaded(l: &Labelled, path: &Path, max_bytes: u64) -> Option<Energy> {
    let held = Submitted::Held(&l.sub.intake);
    if !streams(&held.paths(), &l.sub.set.suite).is_empty() {
        return energy_of(&[held], &l.sub.set.suite, Draw::default());
    }
    energy_of_paths(
        std::slice::from_ref(&path.to_path_buf()),
        &l.sub.set.suite,
        max_bytes,
    )
}

/// The kinds of source an energy's copies drew their joules from (`nvml`, `amdsmi`,
/// `hwmon`, `rapl`, …), sorted and joined by `+`; `None` when no device says.
pub fn sensor_kinds(energy: &Energy) -> Option<String> {
    let kinds: BTreeSet<&str> = energy
        .copies
        .iter()
        .flat_map(|c| &c.devices)
        .filter_map(|d| d.source.map(source_name))
        .collect();
    (!kinds.is_empty()).then(|| kinds.into_iter().collect::<Vec<_>>().join("+"))
}

/// A source's name, as the telemetry header writes it.
fn source_name(s: SourceKind) -> &'static str {
    match s {
        SourceKind::Nvml => "nvml",
        SourceKind::Amdsmi => "amdsmi",
        SourceKind::Hwmon => "hwmon",
        SourceKind::Rapl => "rapl",
        SourceKind::Procfs => "procfs",
        SourceKind::Other => "other",
    }
}

/// Every submission's samples per joule ([`per_joule`]), its energy read from it (a zip
/// or a folder, `paths` in the order of `loaded`, read within `max_bytes`). The lines
/// say, per submission, how many samples had no energy; the kinds are each
/// submission's [`sensor_kinds`], in the order of `loaded`.
pub fn per_joule_all(
    loaded: &mut [Labelled],
    paths: &[PathBuf],
    max_bytes: u64,
) -> (Vec<String>, Vec<Option<String>>) {
    let mut notes = Vec::new();
    let mut kinds = Vec::with_capacity(loaded.len());
    for (l, path) in loaded.iter_mut().zip(paths) {
        let energy = energy_of_loaded(l, path, max_bytes);
        kinds.push(energy.as_ref().and_then(sensor_kinds));
        let done = per_joule(&mut l.sub.set, energy.as_ref());
        let id = l.id();
        if done.with_energy == 0 {
            notes.push(format!(
                "{id}: no telemetry paired with its entries: no figure per joule"
            ));
        } else if done.without > 0 {
            notes.push(format!(
                "{id}: {} of {} samples without telemetry, left out",
                done.without,
                done.without + done.with_energy
            ));
        }
        notes.extend(
            energy
                .into_iter()
                .flat_map(|e| e.notes)
                .map(|n| format!("{id}: {n}")),
        );
    }
    (notes, kinds)
}

/// The grid of `loaded` per `per`: per joule ([`grid_per_joule`]), or per second
/// ([`crate::compare::compute`], the throughput).
///
/// # Errors
/// Theirs.
pub fn grid_per(
    loaded: Vec<Labelled>,
    paths: &[PathBuf],
    options: &CompareOptions,
    explain: Option<(String, String)>,
    per: Per,
) -> Result<Grid, CompareError> {
    match per {
        Per::Joule => grid_per_joule(loaded, paths, options, explain),
        Per::Second => compute(loaded, options, explain),
    }
}

/// The note that leads a grid per joule: what its figures are.
pub const PER_JOULE_NOTE: &str = "per joule: each figure is items per joule (the items of each copy's timed window ÷ the energy its devices drew over it, gross of idle, whole-board; docs/grid-json.md), normalised to the baseline's";

/// The grid of `loaded` per joule: [`per_joule_all`], then the grid as
/// [`crate::compare::compute`] makes it, marked [`Per::Joule`], its notes led by what
/// the figures are and what was left out.
///
/// # Errors
/// As [`crate::compare::compute`]; [`CompareError::NoEnergy`] when the baseline has no
/// energy at all.
pub fn grid_per_joule(
    mut loaded: Vec<Labelled>,
    paths: &[PathBuf],
    options: &CompareOptions,
    explain: Option<(String, String)>,
) -> Result<Grid, CompareError> {
    let mut notes = vec![PER_JOULE_NOTE.to_owned()];
    let (read, kinds) = per_joule_all(&mut loaded, paths, options.max_bytes);
    notes.extend(read);
    let kinds: HashMap<String, String> = loaded
        .iter()
        .zip(kinds)
        .filter_map(|(l, k)| Some((l.id(), k?)))
        .collect();
    let baseline = baseline_of(&loaded, options)?;
    let has_energy = |l: &&Labelled| l.sub.set.samples.iter().any(|s| s.value.is_some());
    let named: Vec<&Labelled> = loaded
        .iter()
        .filter(|l| l.label == baseline || l.id() == baseline)
        .collect();
    // An unknown baseline is the grid's to name; a known one without energy is ours.
    if !named.is_empty() && !named.iter().any(has_energy) {
        return Err(CompareError::NoEnergy(baseline));
    }
    let mut grid = compute(loaded, options, explain)?;
    grid.per = Per::Joule;
    untier_mixed_sensors(&mut grid, &kinds);
    notes.append(&mut grid.notes);
    grid.notes = notes;
    Ok(grid)
}

/// When the rows with a figure drew their joules from sources of more than one kind
/// (`kinds`: row id → [`sensor_kinds`]), the grid is informative only: no row is
/// tiered, `informative` says each row's kind. Board sensors of different vendors
/// measure different things (a 1 s average, an instantaneous reading, a package's
/// estimate), so their ratios are not a ranking.
pub fn untier_mixed_sensors(grid: &mut Grid, kinds: &HashMap<String, String>) {
    let rows: Vec<(&str, &str)> = grid
        .vendors
        .iter()
        .filter(|r| r.overall.is_some())
        .map(|r| {
            (
                r.id.as_str(),
                kinds.get(&r.id).map_or("unknown", String::as_str),
            )
        })
        .collect();
    let distinct: BTreeSet<&str> = rows.iter().map(|(_, k)| *k).collect();
    if distinct.len() <= 1 {
        return;
    }
    let each: Vec<String> = rows.iter().map(|(id, k)| format!("{id} {k}")).collect();
    grid.informative = Some(format!(
        "board sensors differ by vendor: {}",
        each.join(", ")
    ));
    for row in &mut grid.vendors {
        row.tier = None;
    }
    grid.tiers.clear();
}
