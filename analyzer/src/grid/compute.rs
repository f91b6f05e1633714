//! The grid's arithmetic: cells, bootstrap, overall figures, then tiers and attribution.

use super::tiers::{Fit, assign_tiers, attribute};
use super::{Cell, Grid, GridError, GridInput, GridOptions, VendorRow, row_id};
use crate::bootstrap::{Strata, group_by_bench, percentile_interval, stream, usable};
use std::collections::{BTreeMap, BTreeSet};

/// One submission's usable samples and what was left out of them.
struct Sub<'a> {
    input: &'a GridInput,
    id: String,
    benches: BTreeMap<String, Strata>,
    failures: usize,
    conflicts: usize,
    unusable: usize,
}

impl<'a> Sub<'a> {
    fn new(input: &'a GridInput) -> Sub<'a> {
        let (mut failures, mut conflicts, mut unusable) = (0, 0, 0);
        for s in &input.set.samples {
            if s.failure.is_some() {
                failures += 1;
            } else if s.conflict {
                conflicts += 1;
            } else if s.bench.is_some() && usable(s).is_none() {
                unusable += 1;
            }
        }
        let benches = group_by_bench(&input.set)
            .into_iter()
            .map(|(bench, devices)| (bench, Strata::new(devices.into_values())))
            .collect();
        Sub {
            input,
            id: row_id(&input.label, input.track),
            benches,
            failures,
            conflicts,
            unusable,
        }
    }
}

/// A row under construction, kept for the attribution.
struct Work {
    log_ratios: BTreeMap<String, f64>,
    weight_present: f64,
    log_overall: Option<f64>,
    resamples: Vec<f64>,
}

pub(super) fn grid(inputs: &[GridInput], options: &GridOptions) -> Result<Grid, GridError> {
    if options.resamples == 0 {
        return Err(GridError::Resamples);
    }
    if !(options.level > 0.0 && options.level < 1.0) {
        return Err(GridError::Level(options.level));
    }
    if inputs.is_empty() {
        return Err(GridError::NoInputs);
    }
    let mut seen = BTreeSet::new();
    for input in inputs {
        if !seen.insert((input.label.as_str(), input.track)) {
            return Err(GridError::Duplicate {
                label: input.label.clone(),
                track: input.track,
            });
        }
    }
    let subs: Vec<Sub> = inputs.iter().map(Sub::new).collect();
    let base = resolve(&subs, &options.baseline, "baseline")?;
    if subs[base].benches.is_empty() {
        return Err(GridError::EmptyBaseline(subs[base].id.clone()));
    }
    let mut notes = Vec::new();

    let benches: Vec<String> = match &options.benches {
        Some(list) => list
            .iter()
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        None => subs
            .iter()
            .flat_map(|s| s.benches.keys().cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
    };
    for sub in &subs {
        for (bench, strata) in &sub.benches {
            if benches.binary_search(bench).is_err() {
                notes.push(format!(
                    "{}: bench `{bench}` is not among the expected benches: left out ({} samples)",
                    sub.id,
                    strata.n()
                ));
            }
        }
    }
    let unnormalized: Vec<String> = benches
        .iter()
        .filter(|b| !subs[base].benches.contains_key(*b))
        .cloned()
        .collect();
    for bench in &unnormalized {
        notes.push(format!(
            "bench `{bench}` has no usable sample in the baseline `{}`: it cannot be normalized; \
             its cells have no ratio and it is left out of every overall figure",
            subs[base].id
        ));
    }
    let weight_of = |b: &str| options.weights.as_ref().map_or(1.0, |w| w.get(b));
    let weights: BTreeMap<String, f64> =
        benches.iter().map(|b| (b.clone(), weight_of(b))).collect();
    if let Some(w) = &options.weights {
        for bench in w.named().keys() {
            if !weights.contains_key(bench) {
                notes.push(format!(
                    "weights: bench `{bench}` of {} is not in the grid",
                    w.source()
                ));
            }
        }
    }
    let normalized: Vec<(String, f64)> = benches
        .iter()
        .filter(|b| unnormalized.binary_search(b).is_err())
        .map(|b| (b.clone(), weight_of(b)))
        .collect();
    let total_weight: f64 = normalized.iter().map(|(_, w)| w).sum();

    let resamples = options.resamples;
    // Every row's log mean per normalized bench, and in every resample. The
    // denominator of every row's resample k is the baseline's resample k.
    let resampled = resample_all(&subs, &normalized, options);
    let base_log_means = &resampled[base];

    let mut rows = Vec::with_capacity(subs.len());
    let mut works = Vec::with_capacity(subs.len());
    let mut scratch = Vec::with_capacity(resamples);
    for (i, sub) in subs.iter().enumerate() {
        let mut cells = BTreeMap::new();
        let mut work = Work {
            log_ratios: BTreeMap::new(),
            weight_present: 0.0,
            log_overall: None,
            resamples: vec![0.0; resamples],
        };
        let mut weighted_sum = 0.0;
        let mut missing = Vec::new();
        let mut single_runs = Vec::new();
        for bench in &benches {
            let strata = sub.benches.get(bench);
            let mut cell = Cell {
                ratio: None,
                ci: None,
                n: strata.map_or(0, Strata::n),
                gpus: strata.map_or(0, Strata::gpus),
                mean: strata.map(Strata::mean),
                missing: strata.is_none(),
                unnormalized: false,
                mixed_runtime: false,
            };
            let Some((base_point, base_resampled)) = base_log_means.get(bench.as_str()) else {
                cell.unnormalized = true;
                cells.insert(bench.clone(), cell);
                continue;
            };
            let Some(strata) = strata else {
                missing.push(bench.clone());
                cells.insert(bench.clone(), cell);
                continue;
            };
            if strata.single_runs() {
                single_runs.push(bench.as_str());
            }
            let w = weight_of(bench);
            scratch.clear();
            let point = if i == base {
                // The baseline's own ratio is exactly 1 in a joint resample; its
                // interval is that of its mean, divided by its mean.
                scratch.extend(base_resampled.iter().map(|m| m - base_point));
                0.0
            } else {
                let Some((own_point, own)) = resampled[i].get(bench.as_str()) else {
                    // Not reached: every present normalized bench was resampled.
                    continue;
                };
                scratch.extend(own.iter().zip(base_resampled).map(|(m, b)| m - b));
                own_point - base_point
            };
            for (acc, l) in work.resamples.iter_mut().zip(&scratch) {
                *acc += w * l;
            }
            weighted_sum += w * point;
            work.weight_present += w;
            work.log_ratios.insert(bench.clone(), point);
            cell.ratio = Some(point.exp());
            cell.ci = percentile_interval(&mut scratch, options.level).map(|ci| ci.map(f64::exp));
            cells.insert(bench.clone(), cell);
        }
        let present = work.log_ratios.len();
        let weight_share = if total_weight > 0.0 {
            work.weight_present / total_weight
        } else {
            0.0
        };
        let (mut overall, mut ci, mut geomean) = (None, None, None);
        if work.weight_present > 0.0 {
            let penalty = weight_share.ln();
            for r in &mut work.resamples {
                *r = *r / work.weight_present + penalty;
            }
            let log_geomean = weighted_sum / work.weight_present;
            work.log_overall = Some(log_geomean + penalty);
            geomean = Some(log_geomean.exp());
            overall = work.log_overall.map(f64::exp);
            scratch.clear();
            scratch.extend_from_slice(&work.resamples);
            ci = percentile_interval(&mut scratch, options.level).map(|ci| ci.map(f64::exp));
        } else {
            work.resamples.clear();
            notes.push(format!(
                "{}: no normalized bench present: no overall figure and no tier",
                sub.id
            ));
        }
        sub_notes(
            sub,
            &missing,
            normalized.len(),
            weight_share,
            &single_runs,
            &mut notes,
        );
        rows.push(VendorRow {
            name: sub.input.label.clone(),
            track: sub.input.track,
            id: sub.id.clone(),
            overall,
            ci,
            tier: None,
            geomean,
            weight_share,
            present,
            missing,
            cells,
            runtime: None,
            mixed_runtime: false,
        });
        works.push(work);
    }

    let tiers_of = assign_tiers(&rows.iter().map(|r| r.overall.zip(r.ci)).collect::<Vec<_>>());
    for (row, tier) in rows.iter_mut().zip(&tiers_of) {
        row.tier = *tier;
    }
    let explain = match &options.explain {
        None => None,
        Some((a, b)) => {
            let fit = |name: &str| -> Result<Fit, GridError> {
                let i = resolve(&subs, name, "--explain")?;
                let w = &works[i];
                let log_overall = w
                    .log_overall
                    .ok_or_else(|| GridError::NoOverall(subs[i].id.clone()))?;
                Ok(Fit {
                    id: &subs[i].id,
                    log_ratios: &w.log_ratios,
                    weight_present: w.weight_present,
                    log_overall,
                    resamples: &w.resamples,
                })
            };
            Some(attribute(&fit(a)?, &fit(b)?, &normalized, options.level))
        }
    };
    // Best first; rows without a figure last; ties by name, then track.
    rows.sort_by(|x, y| {
        let key = |r: &VendorRow| r.overall.map_or(f64::NEG_INFINITY, |o| o);
        let none_last = x.overall.is_none().cmp(&y.overall.is_none());
        none_last
            .then_with(|| key(y).total_cmp(&key(x)))
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.track.cmp(&y.track))
    });
    let mut tiers: Vec<Vec<String>> = Vec::new();
    for row in &rows {
        if let Some(t) = row.tier {
            if tiers.len() < t {
                tiers.resize(t, Vec::new());
            }
            tiers[t - 1].push(row.id.clone());
        }
    }
    Ok(Grid {
        schema_version: mlbench_results::grid::GRID_SCHEMA_VERSION,
        baseline: subs[base].id.clone(),
        benches,
        weights,
        unnormalized,
        vendors: rows,
        tiers,
        explain,
        resamples,
        seed: options.seed,
        level: options.level,
        notes,
    })
}

/// Each row's log means of the normalized benches it has, rows split over the cores.
/// Every (row, bench) has its own stream, so the split changes no figure.
fn resample_all<'b>(
    subs: &[Sub],
    benches: &'b [(String, f64)],
    options: &GridOptions,
) -> Vec<BTreeMap<&'b str, (f64, Vec<f64>)>> {
    let one = |sub: &Sub| -> BTreeMap<&'b str, (f64, Vec<f64>)> {
        benches
            .iter()
            .filter_map(|(b, _)| {
                let strata = sub.benches.get(b)?;
                Some((b.as_str(), log_means(sub, b, strata, options)))
            })
            .collect()
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(subs.len());
    if threads <= 1 {
        return subs.iter().map(one).collect();
    }
    let chunk = subs.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = subs
            .chunks(chunk)
            .map(|part| {
                (
                    part,
                    scope.spawn(move || part.iter().map(one).collect::<Vec<_>>()),
                )
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|(part, handle)| {
                // A thread that died is redone here rather than losing its rows.
                handle
                    .join()
                    .unwrap_or_else(|_| part.iter().map(one).collect())
            })
            .collect()
    })
}

/// The log of the mean, and of the mean of every resample, of one submission's bench,
/// from its own stream (named by label, track and bench).
fn log_means(sub: &Sub, bench: &str, strata: &Strata, options: &GridOptions) -> (f64, Vec<f64>) {
    let mut rng = stream(
        options.seed,
        &[&sub.input.label, sub.input.track.as_str(), bench],
    );
    let mut means = Vec::with_capacity(options.resamples);
    strata.resample_means(&mut rng, options.resamples, &mut means);
    for m in &mut means {
        *m = m.ln();
    }
    (strata.mean().ln(), means)
}

/// A row id, or a label (its baseline-track submission, else its only one).
fn resolve(subs: &[Sub], name: &str, role: &'static str) -> Result<usize, GridError> {
    if let Some(i) = subs.iter().position(|s| s.id == name) {
        return Ok(i);
    }
    let by_label: Vec<usize> = (0..subs.len())
        .filter(|&i| subs[i].input.label == name)
        .collect();
    match by_label[..] {
        [i] => Ok(i),
        _ => Err(GridError::UnknownSubmission {
            role,
            name: name.to_owned(),
            known: subs
                .iter()
                .map(|s| format!("`{}`", s.id))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

fn sub_notes(
    sub: &Sub,
    missing: &[String],
    normalized: usize,
    weight_share: f64,
    single_runs: &[&str],
    notes: &mut Vec<String>,
) {
    let id = &sub.id;
    if !missing.is_empty() {
        notes.push(format!(
            "{id}: {} of {normalized} benches missing ({}): its overall figure is multiplied by the weight share present, {weight_share:.4}",
            missing.len(),
            missing.join(", ")
        ));
    }
    if sub.failures > 0 {
        notes.push(format!("{id}: {} failed entries removed", sub.failures));
    }
    if sub.conflicts > 0 {
        notes.push(format!(
            "{id}: {} entries set aside for a configuration conflict (see `mlbench report`)",
            sub.conflicts
        ));
    }
    if sub.unusable > 0 {
        notes.push(format!(
            "{id}: {} entries without a finite positive throughput left out",
            sub.unusable
        ));
    }
    if !single_runs.is_empty() {
        notes.push(format!(
            "{id}: every GPU has a single run on {}: the bootstrap resamples runs, so those intervals are points",
            single_runs.join(", ")
        ));
    }
}
