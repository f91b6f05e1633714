//! Energy per timed window of a telemetry file: by counter and by power, gross and less
//! the idle baseline, with what a reader must know about each number (flags).
//!
//! The same function serves the sampler (its summary when it finishes) and a later check
//! of a submission (the summary recomputed from the file's samples).

use crate::counter;
use crate::integrate::{self, cross_check, mean_power_w, net_j, power_energy_j};
use mlbench_schema::telemetry::{Device, Edge, IDLE_WINDOW, TelemetryFile};
use std::collections::HashMap;

/// Fewer samples of a device in a timed window than this are too few to trust.
pub const MIN_SAMPLES: usize = 60;

/// What a file's samples say about each of its timed windows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// One per window (a start mark and its end), in the order they started.
    pub windows: Vec<WindowSummary>,
    /// Marks that do not pair up, said in words.
    pub facts: Vec<String>,
}

/// One timed window.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowSummary {
    /// Its name (`train`, [`IDLE_WINDOW`]).
    pub name: String,
    /// Its copy.
    pub copy: u32,
    /// Its start, ns since the file's origin.
    pub start_ns: u64,
    /// Its end, ns since the file's origin.
    pub end_ns: u64,
    /// One per device of the header, in its order.
    pub devices: Vec<DeviceEnergy>,
}

/// One device's energy over one window.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeviceEnergy {
    /// The device's id.
    pub device: String,
    /// Its samples inside the window (edges included).
    pub samples: usize,
    /// Energy by its counter, J (`None`: no counter, or the window is not covered).
    pub counter_j: Option<f64>,
    /// Energy by the trapezoid of its power readings, J.
    pub power_j: Option<f64>,
    /// Its mean idle power, W, from the idle window (by counter where it has one).
    pub idle_w: Option<f64>,
    /// `counter_j` less the idle power over the window.
    pub net_counter_j: Option<f64>,
    /// `power_j` less the idle power over the window.
    pub net_power_j: Option<f64>,
    /// `|power − counter| / counter`.
    pub disagreement: Option<f64>,
    /// What a reader must know about these numbers.
    pub flags: Vec<SummaryFlag>,
}

/// Something a reader must know about a device's energy over a window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryFlag {
    /// Fewer than [`MIN_SAMPLES`] samples in the window.
    TooFewSamples,
    /// Two samples further apart than two sampling periods.
    Gap {
        /// The longest time between two samples, ns.
        longest_ns: u64,
    },
    /// Counter and power disagree by more than 5 %.
    Disagreement,
    /// The counter wrapped this many times (handled).
    CounterWrapped(usize),
    /// The counter was reset this many times; those intervals' energy came from power.
    CounterResetFilled(usize),
    /// The counter was reset this many times with no power to fill in: a lower bound.
    CounterResetDropped(usize),
    /// The samples do not cover the whole window: no energy for it.
    NotCovered,
    /// The energy is the whole board's (every process on it counts).
    WholeBoard,
    /// MIG mode was on: the whole board's energy, whatever slice the copy had.
    Mig,
    /// Other processes were on the device when sampling began.
    OtherProcesses,
    /// No idle window: no net energy.
    NoIdleBaseline,
}

/// One device's readings, split out of the file.
#[derive(Debug, Default)]
struct Series {
    times: Vec<u64>,
    counter: Vec<(u64, u64)>,
    power_mw: Vec<(u64, f64)>,
}

fn series(file: &TelemetryFile, device: usize) -> Series {
    let mut out = Series::default();
    for s in file.samples.iter().filter(|s| s.device as usize == device) {
        out.times.push(s.t_ns);
        if let Some(raw) = s.values.energy_raw {
            out.counter.push((s.t_ns, raw));
        }
        if let Some(mw) = s.values.power_mw {
            out.power_mw.push((s.t_ns, mw));
        }
    }
    out
}

/// The points of a time-ordered series that bear on `[start, end]`: those inside, and
/// the nearest one on each side.
fn around<T>(points: &[(u64, T)], start: u64, end: u64) -> &[(u64, T)] {
    let lo = points.partition_point(|p| p.0 <= start).saturating_sub(1);
    let hi = (points.partition_point(|p| p.0 < end) + 1).min(points.len());
    &points[lo..hi.max(lo)]
}

/// A window's marks, paired.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Window {
    name: String,
    copy: u32,
    start: u64,
    end: u64,
}

/// The windows of a file's marks, in the order they started, and facts about the marks
/// that do not pair up (those windows are left out).
fn windows(file: &TelemetryFile) -> (Vec<Window>, Vec<String>) {
    let mut open: HashMap<(String, u32), u64> = HashMap::new();
    let mut closed = Vec::new();
    let mut facts = Vec::new();
    for m in &file.marks {
        let key = (m.window.clone(), m.copy);
        let named = format!("window `{}` of copy {}", m.window, m.copy);
        match (m.edge, open.remove(&key)) {
            (Edge::Start, previous) => {
                if previous.is_some() {
                    facts.push(format!(
                        "{named} starts again before it ended; the later start is kept"
                    ));
                }
                open.insert(key, m.t_ns);
            }
            (Edge::End, Some(start)) if start <= m.t_ns => closed.push(Window {
                name: key.0,
                copy: key.1,
                start,
                end: m.t_ns,
            }),
            (Edge::End, Some(_)) => facts.push(format!("{named} ends before it starts")),
            (Edge::End, None) => facts.push(format!("{named} ends without a start")),
        }
    }
    let mut left: Vec<(String, u32)> = open.into_keys().collect();
    left.sort();
    for (name, copy) in left {
        facts.push(format!(
            "window `{name}` of copy {copy} starts and never ends"
        ));
    }
    closed.sort_by_key(|w| w.start);
    (closed, facts)
}

/// The energy by counter over `[start, end]`, J, with the flags of its wraps and resets;
/// `None` when the counter readings do not cover the window.
fn counter_energy(
    series: &Series,
    device: &Device,
    start: u64,
    end: u64,
    flags: &mut Vec<SummaryFlag>,
) -> Option<f64> {
    let info = device.counter.as_ref()?;
    let readings = around(&series.counter, start, end);
    // A reset interval's energy from the power trapezoid (µJ), where there is power.
    let fill = |a, b| power_energy_j(&series.power_mw, a, b).map(|j| j * 1e6);
    let cum = counter::cumulative(readings, info, fill);
    let gross_uj =
        integrate::interpolate(&cum.points, end)? - integrate::interpolate(&cum.points, start)?;
    for (n, flag) in [
        (
            cum.wraps,
            SummaryFlag::CounterWrapped as fn(usize) -> SummaryFlag,
        ),
        (cum.resets_filled, SummaryFlag::CounterResetFilled),
        (cum.resets_dropped, SummaryFlag::CounterResetDropped),
    ] {
        if n > 0 {
            flags.push(flag(n));
        }
    }
    Some(gross_uj * 1e-6)
}

/// The flags of how a device was sampled over a window: count and gaps.
fn sampling_flags(series: &Series, w: &Window, period_ns: u64) -> (usize, Vec<SummaryFlag>) {
    let inside = series
        .times
        .iter()
        .filter(|&&t| t >= w.start && t <= w.end)
        .count();
    let mut flags = Vec::new();
    if inside < MIN_SAMPLES {
        flags.push(SummaryFlag::TooFewSamples);
    }
    let lo = series
        .times
        .partition_point(|&t| t <= w.start)
        .saturating_sub(1);
    let hi = (series.times.partition_point(|&t| t < w.end) + 1).min(series.times.len());
    let longest_ns = series.times[lo..hi.max(lo)]
        .windows(2)
        .map(|p| p[1] - p[0])
        .max()
        .unwrap_or(0);
    if period_ns > 0 && longest_ns > 2 * period_ns {
        flags.push(SummaryFlag::Gap { longest_ns });
    }
    (inside, flags)
}

/// The flags the device's header carries into every window.
fn device_flags(device: &Device) -> Vec<SummaryFlag> {
    let mut flags = Vec::new();
    if device.whole_board {
        flags.push(SummaryFlag::WholeBoard);
    }
    if device.mig == Some(true) {
        flags.push(SummaryFlag::Mig);
    }
    if device
        .other_processes
        .as_ref()
        .is_some_and(|p| !p.is_empty())
    {
        flags.push(SummaryFlag::OtherProcesses);
    }
    flags
}

/// One device over one window, gross (no idle baseline yet).
fn device_energy(series: &Series, device: &Device, w: &Window, period_ns: u64) -> DeviceEnergy {
    let (samples, mut flags) = sampling_flags(series, w, period_ns);
    let counter_j = counter_energy(series, device, w.start, w.end, &mut flags);
    let power_j = power_energy_j(&series.power_mw, w.start, w.end);
    // Only a device with energy readings can miss them (a `/proc` device has none).
    let missed_counter =
        !series.counter.is_empty() && device.counter.is_some() && counter_j.is_none();
    let missed_power = !series.power_mw.is_empty() && power_j.is_none();
    if missed_counter || missed_power {
        flags.push(SummaryFlag::NotCovered);
    }
    let check = counter_j.zip(power_j).and_then(|(c, p)| cross_check(c, p));
    if check.is_some_and(|c| c.flagged) {
        flags.push(SummaryFlag::Disagreement);
    }
    flags.extend(device_flags(device));
    DeviceEnergy {
        device: device.id.clone(),
        samples,
        counter_j,
        power_j,
        disagreement: check.map(|c| c.relative),
        flags,
        ..DeviceEnergy::default()
    }
}

/// Subtracts each device's idle power (from `idle`, the idle window's energies) over the
/// window.
fn subtract_idle(window: &mut WindowSummary, idle: Option<&WindowSummary>) {
    let duration = window.end_ns - window.start_ns;
    for (i, d) in window.devices.iter_mut().enumerate() {
        let baseline = idle.and_then(|w| {
            let e = w.devices.get(i)?;
            mean_power_w(e.counter_j.or(e.power_j)?, w.end_ns - w.start_ns)
        });
        let Some(idle_w) = baseline else {
            d.flags.push(SummaryFlag::NoIdleBaseline);
            continue;
        };
        d.idle_w = Some(idle_w);
        d.net_counter_j = d.counter_j.map(|j| net_j(j, idle_w, duration));
        d.net_power_j = d.power_j.map(|j| net_j(j, idle_w, duration));
    }
}

/// The energy of each device over each timed window of `file`: gross by counter and by
/// power, their disagreement, net of the idle window's mean power (the latest idle window
/// of the same copy that ended before the window started, else of any copy), and flags.
pub fn summarize(file: &TelemetryFile) -> Summary {
    let (marked, facts) = windows(file);
    let period = file.header.sample_period_ns;
    let all: Vec<Series> = (0..file.header.devices.len())
        .map(|i| series(file, i))
        .collect();
    let mut out: Vec<WindowSummary> = marked
        .iter()
        .map(|w| WindowSummary {
            name: w.name.clone(),
            copy: w.copy,
            start_ns: w.start,
            end_ns: w.end,
            devices: file
                .header
                .devices
                .iter()
                .zip(&all)
                .map(|(device, s)| device_energy(s, device, w, period))
                .collect(),
        })
        .collect();
    let idle: Vec<WindowSummary> = out
        .iter()
        .filter(|w| w.name == IDLE_WINDOW)
        .cloned()
        .collect();
    for w in out.iter_mut().filter(|w| w.name != IDLE_WINDOW) {
        let before = |i: &&WindowSummary| i.end_ns <= w.start_ns;
        let baseline = idle
            .iter()
            .filter(before)
            .filter(|i| i.copy == w.copy)
            .next_back()
            .or_else(|| idle.iter().filter(before).next_back());
        subtract_idle(w, baseline);
    }
    Summary {
        windows: out,
        facts,
    }
}
