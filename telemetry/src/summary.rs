//! Energy per timed window of a telemetry file: by counter and by power, gross and less
//! the idle baseline, with what a reader must know about each number (flags).
//!
//! The same function serves the sampler (its summary when it finishes) and a later check
//! of a submission (the summary recomputed from the file's samples).

use crate::integrate::{cross_check, mean_power_w, net_j};
use mlbench_schema::telemetry::{Device, IDLE_WINDOW, SummaryLine};
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

/// The flags the device's header carries into every window.
pub(crate) fn device_flags(device: &Device) -> Vec<SummaryFlag> {
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

/// One device over one window, gross (no idle baseline yet), from its energies and the
/// flags of its sampling: whether a window its readings should cover is not, the
/// cross-check, the header's flags.
pub(crate) fn finish_device(
    device: &Device,
    (has_counter, has_power): (bool, bool),
    samples: usize,
    counter_j: Option<f64>,
    power_j: Option<f64>,
    mut flags: Vec<SummaryFlag>,
) -> DeviceEnergy {
    // Only a device with energy readings can miss them (a `/proc` device has none).
    let missed_counter = has_counter && device.counter.is_some() && counter_j.is_none();
    let missed_power = has_power && power_j.is_none();
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

/// The last of `windows` (by position) that ended at or before a time, found by binary
/// search: the windows by end, each with the latest position among those ending no later.
struct LastEnded {
    ends: Vec<u64>,
    latest: Vec<usize>,
}

impl LastEnded {
    fn new(windows: impl Iterator<Item = (usize, u64)>) -> LastEnded {
        let mut by_end: Vec<(u64, usize)> = windows.map(|(i, end)| (end, i)).collect();
        by_end.sort_unstable();
        let mut latest = Vec::with_capacity(by_end.len());
        for &(_, i) in &by_end {
            latest.push(latest.last().map_or(i, |&l: &usize| l.max(i)));
        }
        LastEnded {
            ends: by_end.into_iter().map(|(end, _)| end).collect(),
            latest,
        }
    }

    fn before(&self, t: u64) -> Option<usize> {
        let n = self.ends.partition_point(|&end| end <= t);
        n.checked_sub(1).map(|k| self.latest[k])
    }
}

/// Subtracts from each window of `summary` but the idle ones the idle baseline
/// [`crate::fold::summarize_with_idle`] describes (the file's own idle windows, then `external`'s).
pub fn with_idle(summary: &mut Summary, external: &[WindowSummary]) {
    let idle: Vec<WindowSummary> = (summary.windows.iter())
        .filter(|w| w.name == IDLE_WINDOW)
        .cloned()
        .collect();
    let any_copy = LastEnded::new(idle.iter().map(|w| w.end_ns).enumerate());
    let mut by_copy: HashMap<u32, LastEnded> = HashMap::new();
    for copy in idle.iter().map(|w| w.copy) {
        by_copy.entry(copy).or_insert_with(|| {
            let mine = (idle.iter().enumerate()).filter(|(_, w)| w.copy == copy);
            LastEnded::new(mine.map(|(i, w)| (i, w.end_ns)))
        });
    }
    let external: Vec<&WindowSummary> = external.iter().filter(|i| i.name == IDLE_WINDOW).collect();
    for w in summary.windows.iter_mut().filter(|w| w.name != IDLE_WINDOW) {
        let same_copy = (by_copy.get(&w.copy)).and_then(|l| l.before(w.start_ns));
        let mut baselines: Vec<&WindowSummary> = (same_copy.into_iter())
            .chain(any_copy.before(w.start_ns))
            .map(|i| &idle[i])
            .collect();
        baselines.extend(external.iter().copied());
        subtract_idle(w, &baselines);
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
    use crate::fold::{summarize, summarize_with_idle};
    use mlbench_schema::telemetry::{Counter, Edge, Header, Mark, Sample, TelemetryFile, Values};

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
