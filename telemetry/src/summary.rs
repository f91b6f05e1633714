//! Energy per timed window of a telemetry file: by counter and by power, gross and less
//! the idle baseline, with what a reader must know about each number (flags).
//!
//! The same function serves the sampler (its summary when it finishes) and a later check
//! of a submission (the summary recomputed from the file's samples).

use crate::counter;
use crate::integrate::{self, cross_check, mean_power_w, net_j, power_energy_j};
use mlbench_schema::telemetry::{Device, Edge, IDLE_WINDOW, SummaryLine, TelemetryFile};
use std::collections::HashMap;

/// Two samples of a device further apart than this many sampling periods are a gap
/// ([`SummaryFlag::Gap`]; the validator's `telemetry.gap` by the same rule).
pub const GAP_PERIODS: u64 = 2;

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
    /// Two samples further apart than [`GAP_PERIODS`] sampling periods.
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
    // The arithmetic needs time order; a file out of order is the validator's to report.
    out.times.sort_unstable();
    out.counter.sort_by_key(|p| p.0);
    out.power_mw.sort_by_key(|p| p.0);
    out
}

/// The points of a time-ordered series that bear on `[start, end]`: those inside, and
/// the nearest one on each side.
fn around<T>(points: &[T], time: impl Fn(&T) -> u64, start: u64, end: u64) -> &[T] {
    let lo = points
        .partition_point(|p| time(p) <= start)
        .saturating_sub(1);
    let hi = (points.partition_point(|p| time(p) < end) + 1).min(points.len());
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
    let readings = around(&series.counter, |p| p.0, start, end);
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
    let longest_ns = around(&series.times, |&t| t, w.start, w.end)
        .windows(2)
        .map(|p| p[1].saturating_sub(p[0]))
        .max()
        .unwrap_or(0);
    if period_ns > 0 && longest_ns > period_ns.saturating_mul(GAP_PERIODS) {
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

/// Subtracts each device's idle power over the window: from the first of `idle` (idle
/// windows, in order of preference) that has the device (matched by id) with an energy.
fn subtract_idle(window: &mut WindowSummary, idle: &[&WindowSummary]) {
    let duration = window.end_ns - window.start_ns;
    for d in &mut window.devices {
        let baseline = idle.iter().find_map(|w| {
            let e = w.devices.iter().find(|e| e.device == d.device)?;
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
    summarize_with_idle(file, &[])
}

/// [`summarize`], with idle windows from elsewhere (another file's, e.g. `mlbench run`'s
/// `idle.<device>.jsonl` of the same run) for the devices the file's own idle windows do
/// not give: a device's baseline is taken from the file's idle windows first, then from
/// the first of `external` that has a device of the same id.
pub fn summarize_with_idle(file: &TelemetryFile, external: &[WindowSummary]) -> Summary {
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
        let same_copy = idle.iter().rfind(|i| before(i) && i.copy == w.copy);
        let any_copy = idle.iter().rfind(before);
        let mut baselines: Vec<&WindowSummary> = same_copy.into_iter().chain(any_copy).collect();
        baselines.extend(external.iter().filter(|i| i.name == IDLE_WINDOW));
        subtract_idle(w, &baselines);
    }
    Summary {
        windows: out,
        facts,
    }
}

/// The summary lines of `summary` (what a sampler appends to its file): one per window
/// and device, in window order then device order, gross energies only.
pub fn summary_lines(summary: &Summary) -> Vec<SummaryLine> {
    summary
        .windows
        .iter()
        .flat_map(|w| {
            w.devices.iter().zip(0u32..).map(|(d, device)| SummaryLine {
                window: w.name.clone(),
                copy: w.copy,
                device,
                start_ns: w.start_ns,
                end_ns: w.end_ns,
                samples: d.samples as u64,
                counter_j: d.counter_j,
                power_j: d.power_j,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlbench_schema::telemetry::{Counter, Header, Mark, Sample, Values};

    const S: u64 = 1_000_000_000;

    fn gpu() -> Device {
        Device {
            id: "cuda:0".into(),
            counter: Some(Counter {
                resolution_uj: 1000.0,
                wrap_raw: None,
            }),
            whole_board: true,
            ..Device::default()
        }
    }

    fn sample(t_ns: u64, raw: Option<u64>, power_mw: Option<f64>) -> Sample {
        Sample {
            t_ns,
            values: Values {
                energy_raw: raw,
                power_mw,
                ..Values::default()
            },
            ..Sample::default()
        }
    }

    fn mark(t_ns: u64, edge: Edge, window: &str) -> Mark {
        Mark {
            t_ns,
            edge,
            window: window.into(),
            copy: 0,
        }
    }

    fn file(devices: Vec<Device>, samples: Vec<Sample>, marks: Vec<Mark>) -> TelemetryFile {
        TelemetryFile {
            header: Header {
                sample_period_ns: S,
                devices,
                ..Header::default()
            },
            samples,
            marks,
            ..TelemetryFile::default()
        }
    }

    /// 50 W up to 5 s, 200 W from 6 s (linear between), one sample a second to 100 s;
    /// the counter (mJ) holds the same energy: E(t) = 50 t J to 5 s, 375 J at 6 s, then
    /// 375 + 200 (t − 6) J.
    fn idle_then_busy(power_scale: f64) -> Vec<Sample> {
        (0..=100u64)
            .map(|s| {
                let (w, j) = if s <= 5 {
                    (50.0, 50.0 * s as f64)
                } else {
                    (200.0, 375.0 + 200.0 * (s - 6) as f64)
                };
                sample(
                    s * S,
                    Some((j * 1000.0) as u64),
                    Some(w * 1000.0 * power_scale),
                )
            })
            .collect()
    }

    #[test]
    fn gross_and_net_energy_by_counter_and_by_power() {
        let marks = vec![
            mark(0, Edge::Start, IDLE_WINDOW),
            mark(5 * S, Edge::End, IDLE_WINDOW),
            mark(10 * S + S / 2, Edge::Start, "train"),
            mark(80 * S + S / 2, Edge::End, "train"),
        ];
        let s = summarize(&file(vec![gpu()], idle_then_busy(1.0), marks));
        assert!(s.facts.is_empty(), "{:?}", s.facts);
        assert_eq!(s.windows.len(), 2);
        let idle = &s.windows[0].devices[0];
        assert!((idle.counter_j.unwrap() - 250.0).abs() < 1e-9);
        assert_eq!(idle.net_counter_j, None);
        let train = &s.windows[1];
        assert_eq!(
            (train.name.as_str(), train.start_ns, train.end_ns),
            ("train", 10 * S + S / 2, 80 * S + S / 2)
        );
        let d = &train.devices[0];
        // 70 s at 200 W: 14 000 J by both; idle 250 J / 5 s = 50 W, × 70 s = 3 500 J.
        assert!((d.counter_j.unwrap() - 14_000.0).abs() < 1e-6);
        assert!((d.power_j.unwrap() - 14_000.0).abs() < 1e-6);
        assert!((d.idle_w.unwrap() - 50.0).abs() < 1e-12);
        assert!((d.net_counter_j.unwrap() - 10_500.0).abs() < 1e-6);
        assert!((d.net_power_j.unwrap() - 10_500.0).abs() < 1e-6);
        assert!(d.disagreement.unwrap() < 1e-12);
        // 11 s … 80 s: 70 samples, one a second.
        assert_eq!(d.samples, 70);
        assert_eq!(d.flags, vec![SummaryFlag::WholeBoard]);
    }

    #[test]
    fn power_ten_percent_high_is_a_disagreement_and_no_idle_window_no_net() {
        let marks = vec![
            mark(10 * S, Edge::Start, "train"),
            mark(80 * S, Edge::End, "train"),
        ];
        let s = summarize(&file(vec![gpu()], idle_then_busy(1.1), marks));
        let d = &s.windows[0].devices[0];
        assert!((d.disagreement.unwrap() - 0.1).abs() < 1e-9);
        assert!(d.flags.contains(&SummaryFlag::Disagreement));
        assert!(d.flags.contains(&SummaryFlag::NoIdleBaseline));
        assert_eq!((d.idle_w, d.net_counter_j), (None, None));
    }

    #[test]
    fn an_idle_window_of_another_file_gives_the_net_energy_by_device_id() {
        // The idle file: a device without readings, then cuda:0 at 50 W over 0 … 5 s (250 J).
        let idle_marks = vec![
            mark(0, Edge::Start, IDLE_WINDOW),
            mark(5 * S, Edge::End, IDLE_WINDOW),
        ];
        let mut idle_samples = idle_then_busy(1.0);
        idle_samples.iter_mut().for_each(|s| s.device = 1);
        let idle = summarize(&file(
            vec![Device::default(), gpu()],
            idle_samples,
            idle_marks,
        ));
        // The bench file: cuda:0 and a CPU package, no idle window of its own.
        let marks = vec![
            mark(10 * S + S / 2, Edge::Start, "train"),
            mark(80 * S + S / 2, Edge::End, "train"),
        ];
        let package = Device {
            id: "cpu:package-0".into(),
            ..gpu()
        };
        let mut samples = idle_then_busy(1.0);
        samples.extend(
            idle_then_busy(1.0)
                .into_iter()
                .map(|s| Sample { device: 1, ..s }),
        );
        let s = summarize_with_idle(&file(vec![gpu(), package], samples, marks), &idle.windows);
        let [train] = s.windows.as_slice() else {
            panic!("{:?}", s.windows)
        };
        // 14 000 J gross over 70 s, less 50 W × 70 s.
        let d = &train.devices[0];
        assert!((d.idle_w.unwrap() - 50.0).abs() < 1e-12);
        assert!((d.net_counter_j.unwrap() - 10_500.0).abs() < 1e-6);
        // No idle window has a `cpu:package-0`.
        let p = &train.devices[1];
        assert_eq!((p.idle_w, p.net_counter_j), (None, None));
        assert!(p.flags.contains(&SummaryFlag::NoIdleBaseline));
    }

    #[test]
    fn few_samples_and_a_gap_are_flagged() {
        let samples = [0, 1, 2, 6, 7]
            .map(|s| sample(s * S, None, Some(1000.0)))
            .to_vec();
        let marks = vec![
            mark(S / 2, Edge::Start, "w"),
            mark(6 * S + S / 2, Edge::End, "w"),
        ];
        let s = summarize(&file(vec![Device::default()], samples, marks));
        let d = &s.windows[0].devices[0];
        // 1, 2 and 6 s are inside; 2 → 6 s is 4 s, over two 1 s periods.
        assert_eq!(d.samples, 3);
        assert!(d.flags.contains(&SummaryFlag::TooFewSamples));
        assert!(d.flags.contains(&SummaryFlag::Gap { longest_ns: 4 * S }));
        // 1 W for 6 s.
        assert!((d.power_j.unwrap() - 6.0).abs() < 1e-9);
    }

    #[test]
    fn a_reset_in_a_window_is_filled_from_power_and_said() {
        // 100 W throughout; the counter (mJ) resets between 2 and 3 s.
        let raws = [0, 100_000, 200_000, 5, 100_005];
        let samples = raws
            .iter()
            .zip(0u64..)
            .map(|(&raw, s)| sample(s * S, Some(raw), Some(100_000.0)))
            .collect();
        let marks = vec![mark(0, Edge::Start, "w"), mark(4 * S, Edge::End, "w")];
        let s = summarize(&file(vec![gpu()], samples, marks));
        let d = &s.windows[0].devices[0];
        // 100 + 100 + (the reset second, from power) 100 + 100 J.
        assert!((d.counter_j.unwrap() - 400.0).abs() < 1e-9);
        assert!(d.flags.contains(&SummaryFlag::CounterResetFilled(1)));
    }

    #[test]
    fn a_window_past_the_samples_is_not_covered() {
        let samples = (0..3u64)
            .map(|s| sample(s * S, Some(s * 1000), Some(1000.0)))
            .collect();
        let marks = vec![mark(S, Edge::Start, "w"), mark(5 * S, Edge::End, "w")];
        let s = summarize(&file(vec![gpu()], samples, marks));
        let d = &s.windows[0].devices[0];
        assert_eq!((d.counter_j, d.power_j), (None, None));
        assert!(d.flags.contains(&SummaryFlag::NotCovered));
    }

    #[test]
    fn samples_out_of_order_give_the_same_energy_and_no_panic() {
        let marks = || {
            vec![
                mark(10 * S, Edge::Start, "train"),
                mark(80 * S, Edge::End, "train"),
            ]
        };
        let ordered = summarize(&file(vec![gpu()], idle_then_busy(1.0), marks()));
        let mut shuffled = idle_then_busy(1.0);
        shuffled.reverse();
        shuffled.swap(3, 40);
        let s = summarize(&file(vec![gpu()], shuffled, marks()));
        assert_eq!(s, ordered);
        assert!((s.windows[0].devices[0].counter_j.unwrap() - 14_000.0).abs() < 1e-6);
    }

    #[test]
    fn marks_that_do_not_pair_are_facts() {
        let marks = vec![
            mark(1, Edge::End, "a"),
            mark(2, Edge::Start, "b"),
            mark(3, Edge::Start, "c"),
            mark(4, Edge::Start, "c"),
            mark(5, Edge::End, "c"),
        ];
        let s = summarize(&file(vec![], vec![], marks));
        assert_eq!(s.windows.len(), 1);
        assert_eq!((s.windows[0].start_ns, s.windows[0].end_ns), (4, 5));
        assert_eq!(
            s.facts,
            vec![
                "window `a` of copy 0 ends without a start",
                "window `c` of copy 0 starts again before it ended; the later start is kept",
                "window `b` of copy 0 starts and never ends",
            ]
        );
    }
}
