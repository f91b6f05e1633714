//! One copy's figures: its timed window's energy (`mlbench_telemetry::summarize_with_idle`),
//! the items its report entry counted over the same window, and the power and
//! utilisation of its samples inside the window.

use super::pairing::Paired;
use crate::bootstrap::quantile_sorted;
use mlbench_results::energy::{CopyEnergy, DeviceShare, EnergyFlag, Method};
use mlbench_schema::ReportEntry;
use mlbench_schema::telemetry::{Device, SourceKind, TelemetryFile};
use mlbench_telemetry::fold::Reduced;
use mlbench_telemetry::integrate::interpolate;
use mlbench_telemetry::{DeviceEnergy, SummaryFlag, WindowSummary, bounds, counter};

/// The window of a bench's timed observations (the runner's `TRAIN_WINDOW`).
pub const TRAIN_WINDOW: &str = "train";

/// Observations the suite drops before it counts (`skip_obs`; the runner's `SKIP_OBS`).
pub const SKIP_OBS: i64 = 10;

fn int(entry: &ReportEntry, key: &str) -> Option<i64> {
    entry.get(key)?.as_i64()
}

/// The bench whose entries are a sweep over world sizes (`mlbench run`'s `scaling`): each
/// entry's window is rank 0's timed steps of one world, `train` one observation of them.
pub const SWEEP_BENCH: &str = "scaling";

/// A sweep entry's items: `number` steps of `batch_size` items per rank on each of its
/// world's ranks (micro_bench.py's `batch × world × steps`).
fn sweep_items(entry: &ReportEntry) -> Option<f64> {
    let (b, n) = (int(entry, "batch_size")?, int(entry, "number")?);
    // `vcd` ("0,1": 2) is the only field scaling.py sets per world size.
    let world = i64::from(entry.world_size()?);
    (b > 0 && n > 0).then_some((b * n * world) as f64)
}

/// The observations the entry's figure is computed from, which its window spans: those
/// after the first [`SKIP_OBS`] (the timing stage's `count` where it has one), or all
/// `repeat` of a loop too short to drop any; a sweep's entry, its `train` stage's one
/// (its `repeat` is the sweep's largest world).
pub fn counted_observations(entry: &ReportEntry) -> Option<f64> {
    let count = entry
        .get("train")
        .and_then(|t| t.as_object()?.get("count")?.as_i64());
    if entry.name() == Some(SWEEP_BENCH) {
        return count.filter(|&c| c > 0).map(|c| c as f64);
    }
    let repeat = int(entry, "repeat")?;
    let n = match count {
        Some(c) if repeat > SKIP_OBS => c,
        _ if repeat > SKIP_OBS => repeat - SKIP_OBS,
        _ => repeat,
    };
    (n > 0).then_some(n as f64)
}

/// The items an observation processes: `batch_size × number` (what `train_item`
/// divides), else `train_item.avg × train.avg` (items/s × s) where the sizes are absent.
pub fn items_per_observation(entry: &ReportEntry) -> Option<f64> {
    if let (Some(b), Some(n)) = (int(entry, "batch_size"), int(entry, "number")) {
        return (b > 0 && n > 0).then_some((b * n) as f64);
    }
    let seconds = entry.get("train")?.as_object()?.get("avg")?.as_f64()?;
    let items = entry.train_item_avg()? * seconds;
    (items.is_finite() && items > 0.0).then_some(items)
}

/// The items processed in the entry's timed window.
pub fn counted_items(entry: &ReportEntry) -> Option<f64> {
    if entry.name() == Some(SWEEP_BENCH) {
        return Some(counted_observations(entry)? * sweep_items(entry)?);
    }
    Some(counted_observations(entry)? * items_per_observation(entry)?)
}

/// The seconds the entry's counted observations were timed (`train.avg × count`), to
/// check the window against: it cannot be shorter.
fn timed_seconds(entry: &ReportEntry) -> Option<f64> {
    let avg = entry.get("train")?.as_object()?.get("avg")?.as_f64()?;
    Some(avg * counted_observations(entry)?)
}

/// A summary's flag, as the report says it.
fn flag_of(flag: &SummaryFlag) -> EnergyFlag {
    match flag {
        SummaryFlag::TooFewSamples => EnergyFlag::TooFewSamples,
        SummaryFlag::Gap { .. } => EnergyFlag::Gap,
        SummaryFlag::Disagreement => EnergyFlag::Disagreement,
        SummaryFlag::CounterWrapped(_) => EnergyFlag::CounterWrapped,
        SummaryFlag::CounterResetFilled(_) | SummaryFlag::CounterResetDropped(_) => {
            EnergyFlag::CounterReset
        }
        SummaryFlag::NotCovered => EnergyFlag::NotCovered,
        SummaryFlag::WholeBoard => EnergyFlag::WholeBoard,
        SummaryFlag::Mig => EnergyFlag::Mig,
        SummaryFlag::OtherProcesses => EnergyFlag::OtherProcesses,
        SummaryFlag::NoIdleBaseline => EnergyFlag::NoIdleBaseline,
    }
}

/// A device's part, by counter where it has one, else by power; `None` without either.
fn share(d: &DeviceEnergy) -> Option<DeviceShare> {
    let (method, joules, net_joules) = match (d.counter_j, d.power_j) {
        (Some(j), _) => (Method::Counter, j, d.net_counter_j),
        (None, Some(j)) => (Method::Power, j, d.net_power_j),
        (None, None) => return None,
    };
    Some(DeviceShare {
        device: d.device.clone(),
        method,
        joules,
        net_joules,
        shared_by: 1,
        disagreement: d.disagreement,
        watts: Vec::new(),
        source: None,
    })
}

/// A device's power in W at any time of the window: its power readings, linear between
/// them; without any, the slope of its counter's cumulative energy.
enum PowerOf {
    Readings(Vec<(u64, f64)>),
    Counter(Vec<(u64, f64)>),
}

impl PowerOf {
    fn of(file: &TelemetryFile, index: usize, device: &Device) -> Option<PowerOf> {
        let mine = || file.samples.iter().filter(|s| s.device as usize == index);
        let mut readings: Vec<(u64, f64)> = mine()
            .filter_map(|s| Some((s.t_ns, s.values.power_mw? * 1e-3)))
            .collect();
        readings.sort_by_key(|p| p.0);
        if !readings.is_empty() {
            return Some(PowerOf::Readings(readings));
        }
        let info = device.counter.as_ref()?;
        let mut raw: Vec<(u64, u64)> = mine()
            .filter_map(|s| Some((s.t_ns, s.values.energy_raw?)))
            .collect();
        raw.sort_by_key(|p| p.0);
        // Resets without power to fill them are dropped: a zero step, not a guess.
        let cum = counter::cumulative(&raw, info, |_, _| None);
        Some(PowerOf::Counter(cum.points))
    }

    fn at(&self, t: u64) -> Option<f64> {
        match self {
            PowerOf::Readings(points) => interpolate(points, t),
            PowerOf::Counter(points) => {
                // The segment ending at or after `t` (the first one at its start).
                let i = points.partition_point(|p| p.0 < t).max(1);
                let (a, b) = (points.get(i - 1)?, points.get(i)?);
                let dt = b.0.checked_sub(a.0).filter(|&d| d > 0)? as f64;
                Some((b.1 - a.1) * 1e-6 / (dt * 1e-9))
            }
        }
    }
}

/// The devices' power at the sample times (inside the window) of the device sampled
/// most among them: the times (ns since the window's start) and each device's W there,
/// in the order of `devices`; a time where a device has no power is left out.
fn power_trace(
    file: &TelemetryFile,
    devices: &[usize],
    start: u64,
    end: u64,
) -> (Vec<u64>, Vec<Vec<f64>>) {
    let power: Vec<Option<PowerOf>> = devices
        .iter()
        .map(|&i| PowerOf::of(file, i, &file.header.devices[i]))
        .collect();
    let times_of = |i: usize| -> Vec<u64> {
        let mut t: Vec<u64> = file
            .samples
            .iter()
            .filter(|s| s.device as usize == i && s.t_ns >= start && s.t_ns <= end)
            .map(|s| s.t_ns)
            .collect();
        t.sort_unstable();
        t.dedup();
        t
    };
    let longest = devices
        .iter()
        .map(|&i| times_of(i))
        .max_by_key(Vec::len)
        .unwrap_or_default();
    let mut times = Vec::new();
    let mut watts = vec![Vec::new(); devices.len()];
    for t in longest {
        let at: Option<Vec<f64>> = power.iter().map(|p| p.as_ref()?.at(t)).collect();
        if let Some(at) = at {
            times.push(t - start);
            for (w, v) in watts.iter_mut().zip(at) {
                w.push(v);
            }
        }
    }
    (times, watts)
}

/// The mean utilisation (a fraction) of the compute devices in the window: the GPUs'
/// where the copy has any, else the CPU's (`cpu:proc`).
fn utilisation(file: &TelemetryFile, start: u64, end: u64) -> Option<f64> {
    let gpu = |d: &Device| {
        matches!(
            d.source,
            SourceKind::Nvml | SourceKind::Amdsmi | SourceKind::Hwmon
        )
    };
    let devices = &file.header.devices;
    let wanted: Vec<bool> = if devices.iter().any(gpu) {
        devices.iter().map(gpu).collect()
    } else {
        devices
            .iter()
            .map(|d| d.source == SourceKind::Procfs)
            .collect()
    };
    let values: Vec<f64> = file
        .samples
        .iter()
        .filter(|s| wanted.get(s.device as usize) == Some(&true))
        .filter(|s| s.t_ns >= start && s.t_ns <= end)
        .filter_map(|s| s.values.util_pct)
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64 / 100.0)
}

/// The copy's figures over its `train` window, net of `idle` (the run's idle windows);
/// `Err` says in words why there are none.
pub fn measure(
    pair: &Paired,
    reduced: &Reduced,
    idle: &[WindowSummary],
) -> Result<CopyEnergy, String> {
    let file = &reduced.file;
    let header = &file.header;
    // A file saying what no device reads is set aside whole: its energies would be
    // infinite or absurd (`validate` names each reading).
    if let Some(problem) = bounds::problems(header, &reduced.folded.bounds).first() {
        return Err(format!(
            "{}: {problem}: outside physical bounds, set aside (`mlbench validate` says more)",
            pair.telemetry_display
        ));
    }
    if header.bench.as_deref() != Some(pair.bench.as_str()) || header.copy != Some(pair.copy) {
        return Err(format!(
            "{}: its header is of {}.{}, not of {}.{}: not paired",
            pair.telemetry_display,
            header.bench.as_deref().unwrap_or("no bench"),
            header.copy.map_or_else(|| "?".into(), |c| c.to_string()),
            pair.bench,
            pair.copy
        ));
    }
    let summary = reduced.summary_with_idle(idle);
    let window = summary
        .windows
        .iter()
        .rfind(|w| w.name == TRAIN_WINDOW && w.copy == pair.copy)
        .ok_or_else(|| {
            format!(
                "{}: no `train` window of copy {}",
                pair.telemetry_display, pair.copy
            )
        })?;
    let items = counted_items(&pair.entry).ok_or_else(|| {
        format!(
            "{}: entry {}: its items cannot be counted (no repeat, batch_size and number)",
            pair.report, pair.entry_index
        )
    })?;
    let copy = figures(pair, file, window, items);
    let figures = [
        copy.joules,
        copy.net_joules,
        copy.joules_per_item,
        copy.mean_power_w,
    ];
    if figures.iter().flatten().any(|v| !v.is_finite()) {
        return Err(format!(
            "{}: its energy over `train` is not a finite number; set aside",
            pair.telemetry_display
        ));
    }
    Ok(copy)
}

/// [`measure`]'s figures, once the window and the items are known.
fn figures(pair: &Paired, file: &TelemetryFile, window: &WindowSummary, items: f64) -> CopyEnergy {
    let (start, end) = (window.start_ns, window.end_ns);
    let seconds = (end - start) as f64 * 1e-9;
    let with_energy: Vec<(usize, DeviceShare)> = window
        .devices
        .iter()
        .enumerate()
        .filter_map(|(i, d)| {
            let mut s = share(d)?;
            s.source = file.header.devices.get(i).map(|h| h.source);
            Some((i, s))
        })
        .collect();
    let mut flags: Vec<EnergyFlag> = with_energy
        .iter()
        .flat_map(|&(i, _)| window.devices[i].flags.iter().map(flag_of))
        .collect();
    if timed_seconds(&pair.entry).is_some_and(|t| seconds < t * (1.0 - 1e-6)) {
        flags.push(EnergyFlag::WindowShorterThanTimed);
    }
    let indices: Vec<usize> = with_energy.iter().map(|(i, _)| *i).collect();
    let (times, watts) = power_trace(file, &indices, start, end);
    let mut devices: Vec<DeviceShare> = with_energy.into_iter().map(|(_, s)| s).collect();
    for (d, w) in devices.iter_mut().zip(watts) {
        d.watts = w;
    }
    let samples = window.devices.iter().map(|d| d.samples).max().unwrap_or(0);
    let mut copy = CopyEnergy {
        run: pair.run.clone(),
        bench: pair.bench.clone(),
        copy: pair.copy,
        report: pair.report.clone(),
        entry: pair.entry_index,
        telemetry: pair.telemetry_display.clone(),
        seconds,
        items,
        samples,
        method: None,
        joules: None,
        net_joules: None,
        joules_per_item: None,
        net_joules_per_item: None,
        items_per_joule: None,
        mean_power_w: None,
        p95_power_w: None,
        utilisation: utilisation(file, start, end),
        devices,
        flags,
        trace: times.iter().map(|&t| (t as f64 * 1e-9, 0.0)).collect(),
    };
    total(&mut copy);
    copy
}

/// Sums the copy's devices into its energy, its power trace and the figures from them;
/// sorts and dedups its flags.
pub fn total(copy: &mut CopyEnergy) {
    copy.flags.sort_unstable();
    copy.flags.dedup();
    for (i, point) in copy.trace.iter_mut().enumerate() {
        point.1 = copy.devices.iter().filter_map(|d| d.watts.get(i)).sum();
    }
    let mut watts: Vec<f64> = copy.trace.iter().map(|p| p.1).collect();
    watts.sort_unstable_by(f64::total_cmp);
    copy.p95_power_w = quantile_sorted(&watts, 0.95);
    let method = copy.devices.iter().map(|d| d.method).reduce(Method::and);
    copy.method = method;
    if method.is_none() {
        return;
    }
    let joules: f64 = copy.devices.iter().map(|d| d.joules).sum();
    let net: Option<f64> = copy.devices.iter().map(|d| d.net_joules).sum();
    copy.joules = Some(joules);
    copy.net_joules = net;
    copy.joules_per_item = Some(joules / copy.items);
    copy.net_joules_per_item = net.map(|n| n / copy.items);
    copy.items_per_joule = (joules > 0.0).then(|| copy.items / joules);
    copy.mean_power_w = (copy.seconds > 0.0).then(|| joules / copy.seconds);
}
