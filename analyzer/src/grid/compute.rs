//! The grid's arithmetic: cells, bootstrap, overall figures, then tiers and attribution.

use super::tiers::{Fit, assign_tiers_paired, attribute, rank};
use super::{Cell, Grid, GridError, GridInput, GridOptions, Interval, VendorRow, row_id};
use crate::bootstrap::{Strata, group_by_bench, percentile_interval, stream, usable};
use mlbench_schema::words::count;
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
    check_inputs(inputs, options)?;
    let subs: Vec<Sub> = inputs.iter().map(Sub::new).collect();
    let base = resolve(&subs, &options.baseline, "baseline")?;
    if subs[base].benches.is_empty() {
        return Err(GridError::EmptyBaseline(subs[base].id.clone()));
    }
    let mut notes = Vec::new();
    let columns = Columns::new(&subs, base, options, &mut notes);
    // Every row's log mean per normalized bench, and in every resample. The
    // denominator of every row's resample k is the baseline's resample k.
    let resampled = resample_all(&subs, &columns.normalized, options);
    let mut rows = Vec::with_capacity(subs.len());
    let mut works = Vec::with_capacity(subs.len());
    let mut scratch = Vec::with_capacity(options.resamples);
    for (i, sub) in subs.iter().enumerate() {
        let ctx = RowContext {
            columns: &columns,
            own: &resampled[i],
            base: &resampled[base],
            is_base: i == base,
            options,
        };
        let (row, work) = ctx.row(sub, &mut scratch, &mut notes);
        rows.push(row);
        works.push(work);
    }
    let tiered = |i: usize| !options.untiered.contains(&subs[i].id);
    let paired: Vec<Option<(f64, &[f64])>> = (works.iter().enumerate())
        .map(|(i, w)| {
            w.log_overall
                .filter(|_| tiered(i))
                .map(|o| (o, &w.resamples[..]))
        })
        .collect();
    let (tiers_of, links) = assign_tiers_paired(&paired, options.level);
    for ((row, tier), link) in rows.iter_mut().zip(&tiers_of).zip(&links) {
        row.tier = *tier;
        row.ratio_to_next = link.map(|l| l.ratio);
        row.ratio_to_next_ci = link.map(|l| l.ci);
        row.p_above_next = link.map(|l| l.p_above);
    }
    let explain = match &options.explain {
        None => None,
        Some((a, b)) => Some(explain(
            &subs,
            &works,
            (a, b),
            &columns.normalized,
            options,
        )?),
    };
    let tiers = rank(&mut rows);
    let mut grid = Grid {
        schema_version: mlbench_results::grid::GRID_SCHEMA_VERSION,
        baseline: subs[base].id.clone(),
        benches: columns.benches,
        weights: columns.weights,
        unnormalized: columns.unnormalized,
        vendors: rows,
        tiers,
        explain,
        resamples: options.resamples,
        seed: options.seed,
        level: options.level,
        interval: options.interval,
        per: Default::default(),
        informative: None,
        notes,
    };
    if options.interval == Interval::Anytime {
        super::anytime::apply(&mut grid, inputs, (options.level, &options.untiered));
        grid.notes.push(
            "intervals and tiers: anytime-valid (Lai t-mixture sequences of the runs, valid however many runs were made; the attribution stays bootstrap; docs/scoring.md)".into(),
        );
    }
    Ok(grid)
}

/// The options in range and the inputs named once each.
fn check_inputs(inputs: &[GridInput], options: &GridOptions) -> Result<(), GridError> {
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
    Ok(())
}

/// The grid's columns: every bench, those the baseline cannot normalize, the weights,
/// and the normalized benches with their weights.
struct Columns<'o> {
    benches: Vec<String>,
    unnormalized: Vec<String>,
    weights: BTreeMap<String, f64>,
    normalized: Vec<(String, f64)>,
    total_weight: f64,
    options: &'o GridOptions,
}

impl<'o> Columns<'o> {
    /// The expected benches when given, else every bench some row has; notes for the
    /// benches left out, those not normalized, and weights of benches not in the grid.
    fn new(
        subs: &[Sub],
        base: usize,
        options: &'o GridOptions,
        notes: &mut Vec<String>,
    ) -> Columns<'o> {
        let benches: Vec<String> = match &options.benches {
            Some(list) => list.iter().cloned().collect::<BTreeSet<_>>(),
            None => subs
                .iter()
                .flat_map(|s| s.benches.keys().cloned())
                .collect(),
        }
        .into_iter()
        .collect();
        for sub in subs {
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
        let mut columns = Columns {
            benches,
            unnormalized,
            weights: BTreeMap::new(),
            normalized: Vec::new(),
            total_weight: 0.0,
            options,
        };
        columns.weigh(notes);
        columns
    }

    /// A bench's weight: the weights file's, else 1.
    fn weight_of(&self, bench: &str) -> f64 {
        self.options.weights.as_ref().map_or(1.0, |w| w.get(bench))
    }

    /// The weights of the columns and of the normalized ones; weights of benches not in
    /// the grid are notes.
    fn weigh(&mut self, notes: &mut Vec<String>) {
        self.weights = self
            .benches
            .iter()
            .map(|b| (b.clone(), self.weight_of(b)))
            .collect();
        if let Some(w) = &self.options.weights {
            for bench in w.named().keys() {
                if !self.weights.contains_key(bench) {
                    notes.push(format!(
                        "weights: bench `{bench}` of {} is not in the grid",
                        w.source()
                    ));
                }
            }
        }
        self.normalized = self
            .benches
            .iter()
            .filter(|b| self.unnormalized.binary_search(b).is_err())
            .map(|b| (b.clone(), self.weight_of(b)))
            .collect();
        self.total_weight = self.normalized.iter().map(|(_, w)| w).sum();
    }
}

/// Log means of a row's normalized benches: the point and one per resample.
type LogMeans<'b> = BTreeMap<&'b str, (f64, Vec<f64>)>;

/// What one row is computed from: the columns, its own log means and the baseline's.
struct RowContext<'a> {
    columns: &'a Columns<'a>,
    own: &'a LogMeans<'a>,
    base: &'a LogMeans<'a>,
    is_base: bool,
    options: &'a GridOptions,
}

impl RowContext<'_> {
    /// One submission's row: a cell per bench, then its overall figure and interval
    /// (with the missing weight's penalty); and what the attribution needs of it.
    fn row(&self, sub: &Sub, scratch: &mut Vec<f64>, notes: &mut Vec<String>) -> (VendorRow, Work) {
        let mut work = Work {
            log_ratios: BTreeMap::new(),
            weight_present: 0.0,
            log_overall: None,
            resamples: vec![0.0; self.options.resamples],
        };
        let (mut cells, mut missing, mut single_runs) = (BTreeMap::new(), Vec::new(), Vec::new());
        let mut weighted_sum = 0.0;
        for bench in &self.columns.benches {
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
            match (self.base.get(bench.as_str()), strata) {
                (None, _) => cell.unnormalized = true,
                (Some(_), None) => missing.push(bench.clone()),
                (Some(base), Some(strata)) => {
                    if strata.single_runs() {
                        single_runs.push(bench.as_str());
                    }
                    if let Some(point) = self.log_ratio(bench, base, scratch) {
                        let w = self.columns.weight_of(bench);
                        for (acc, l) in work.resamples.iter_mut().zip(scratch.iter()) {
                            *acc += w * l;
                        }
                        weighted_sum += w * point;
                        work.weight_present += w;
                        work.log_ratios.insert(bench.clone(), point);
                        cell.ratio = Some(point.exp());
                        cell.ci = percentile_interval(scratch, self.options.level)
                            .map(|ci| ci.map(f64::exp));
                    }
                }
            }
            cells.insert(bench.clone(), cell);
        }
        let weight_share = if self.columns.total_weight > 0.0 {
            work.weight_present / self.columns.total_weight
        } else {
            0.0
        };
        let (overall, ci, geomean) = self.overall(&mut work, weighted_sum, weight_share, scratch);
        if overall.is_none() {
            notes.push(format!(
                "{}: no normalized bench present: no overall figure and no tier",
                sub.id
            ));
        }
        let normalized = self.columns.normalized.len();
        sub_notes(sub, &missing, normalized, weight_share, &single_runs, notes);
        let row = VendorRow {
            name: sub.input.label.clone(),
            track: sub.input.track,
            id: sub.id.clone(),
            overall,
            ci,
            tier: None,
            ratio_to_next: None,
            ratio_to_next_ci: None,
            p_above_next: None,
            geomean,
            weight_share,
            present: work.log_ratios.len(),
            missing,
            cells,
            runtime: None,
            mixed_runtime: false,
            hardware: None,
            validity: None,
        };
        (row, work)
    }

    /// The row's log ratio of `bench` to the baseline, `scratch` holding it in every
    /// resample; `None` where the row has no resample of it (not reached: every present
    /// normalized bench was resampled).
    fn log_ratio(
        &self,
        bench: &str,
        (base_point, base_resampled): &(f64, Vec<f64>),
        scratch: &mut Vec<f64>,
    ) -> Option<f64> {
        scratch.clear();
        if self.is_base {
            // The baseline's own ratio is exactly 1 in a joint resample; its interval is
            // that of its mean, divided by its mean.
            scratch.extend(base_resampled.iter().map(|m| m - base_point));
            return Some(0.0);
        }
        let (own_point, own) = self.own.get(bench)?;
        scratch.extend(own.iter().zip(base_resampled).map(|(m, b)| m - b));
        Some(own_point - base_point)
    }

    /// The overall figure, its interval and the geometric mean before the penalty, from
    /// the weighted log ratios; the work's resamples become the overall's. All `None`
    /// when no normalized bench is present.
    fn overall(
        &self,
        work: &mut Work,
        weighted_sum: f64,
        weight_share: f64,
        scratch: &mut Vec<f64>,
    ) -> (Option<f64>, Option<[f64; 2]>, Option<f64>) {
        #[allow(clippy::neg_cmp_op_on_partial_ord)] // NaN has no figure either
        if !(work.weight_present > 0.0) {
            work.resamples.clear();
            return (None, None, None);
        }
        let penalty = weight_share.ln();
        for r in &mut work.resamples {
            *r = *r / work.weight_present + penalty;
        }
        let log_geomean = weighted_sum / work.weight_present;
        work.log_overall = Some(log_geomean + penalty);
        scratch.clear();
        scratch.extend_from_slice(&work.resamples);
        let ci = percentile_interval(scratch, self.options.level).map(|ci| ci.map(f64::exp));
        (work.log_overall.map(f64::exp), ci, Some(log_geomean.exp()))
    }
}

/// The attribution of the gap between rows `a` and `b` (`--explain`).
fn explain(
    subs: &[Sub],
    works: &[Work],
    (a, b): (&str, &str),
    normalized: &[(String, f64)],
    options: &GridOptions,
) -> Result<mlbench_results::grid::Attribution, GridError> {
    let fit = |name: &str| -> Result<Fit, GridError> {
        let i = resolve(subs, name, "explain")?;
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
    Ok(attribute(&fit(a)?, &fit(b)?, normalized, options.level))
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
        notes.push(format!(
            "{id}: {} removed",
            count(sub.failures, "failed entry", "failed entries")
        ));
    }
    if sub.conflicts > 0 {
        notes.push(format!(
            "{id}: {} set aside for a configuration conflict (see `mlbench report`)",
            count(sub.conflicts, "entry", "entries")
        ));
    }
    if sub.unusable > 0 {
        notes.push(format!(
            "{id}: {} without a finite positive throughput left out",
            count(sub.unusable, "entry", "entries")
        ));
    }
    if !single_runs.is_empty() {
        notes.push(format!(
            "{id}: every GPU has a single run on {}: the bootstrap resamples runs, so those intervals are points",
            single_runs.join(", ")
        ));
    }
}
