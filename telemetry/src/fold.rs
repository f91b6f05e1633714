//! One pass over a telemetry file's lines, in bounded memory: every timed window's energy
//! and sample count accumulated as the samples go by, each device's counts and span, the
//! first readings outside physical bounds, and a bounded, decimated set of samples kept
//! for what draws them (`plot power`, the report's power trace).
//!
//! Energy over a window is a difference of running totals: the counter's cumulative
//! energy and the power readings' cumulative trapezoid, each evaluated (linear between
//! two readings) at the window's edges as the first reading at or after an edge goes by.
//! A window's sample count is likewise a difference of running counts, its wraps and
//! resets too. So a window costs a few numbers whatever its length, and a sample costs the
//! same whatever the number of windows (a gap, rare, is checked against the windows open
//! over it).
//!
//! Samples are put back in time order per device within [`REORDER`] samples (a file
//! written by the sampler is in order); a sample further behind is left out of the
//! arithmetic and counted (`validate`'s `telemetry.clock` names it). A mark that comes
//! after [`REORDER`] later samples of a device cannot be placed: its window is left out,
//! said in the summary's facts.

use crate::bounds::OutOfBounds;
use crate::counter::{self, Step};
use crate::summary::{
    DeviceEnergy, GAP_PERIODS, MIN_SAMPLES, Summary, SummaryFlag, WindowSummary, with_idle,
};
use mlbench_schema::telemetry::{Counter, Device, Edge, Header, Line, Mark, Sample, TelemetryFile};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// Samples of one device put back in time order before they count: a sample more than
/// this many behind its device's latest is left out of the arithmetic.
pub const REORDER: usize = 4096;

/// The most samples a reading keeps, all devices together, for what draws them: past it,
/// each device keeps every 2nd, 4th, 8th… of its samples (at most
/// `KEPT_IN_ALL / devices`, at least 2, each). A sampler's hour at 1 Hz is 3,600 a device.
pub const KEPT_IN_ALL: usize = 200_000;

/// What one pass over a file gives besides its summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceStats {
    /// The device's samples in the file.
    pub samples: usize,
    /// The time of its first and last sample, in file order.
    pub first_last: Option<(u64, u64)>,
    /// The earliest and latest of its sample times, with their lines.
    pub span: Option<(TimeAt, TimeAt)>,
    /// How far its counter went over the file, in file order, µJ (resets left out);
    /// `None` without counter readings or a counter in the header.
    pub counter_moved_uj: Option<f64>,
    /// Samples left out of the arithmetic: more than [`REORDER`] behind.
    pub late: usize,
    /// Whether it has counter readings, power readings.
    pub has_counter: bool,
    /// See `has_counter`.
    pub has_power: bool,
    /// One sample in how many is kept for drawing (1: all of them).
    pub kept_every: u64,
}

/// A sample's time (ns) and line.
pub type TimeAt = (u64, usize);

/// The gaps of one device over one window (intervals between two of its consecutive
/// samples longer than [`GAP_PERIODS`] periods that overlap the window).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gaps {
    /// How many.
    pub count: usize,
    /// The longest: its length, and the times and lines of the samples on each side.
    pub longest: Option<(u64, TimeAt, TimeAt)>,
}

/// A device's running totals at one moment (an edge of a window).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Totals {
    /// Cumulative counter energy, µJ (`None`: not within the counter's readings).
    counter_uj: Option<f64>,
    /// Cumulative power trapezoid, mW·ns (`None`: not within the power readings).
    power: Option<f64>,
    /// Wraps, resets filled, resets dropped, up to the reading the edge takes.
    steps: [usize; 3],
    /// Samples before the edge (a start) or at and before it (an end).
    samples: usize,
}

/// One reading of a device, as released in time order.
#[derive(Debug, Clone, Copy)]
struct Point {
    t: u64,
    line: usize,
    seq: u64,
    raw: Option<u64>,
    mw: Option<f64>,
}

impl PartialEq for Point {
    fn eq(&self, other: &Self) -> bool {
        (self.t, self.seq) == (other.t, other.seq)
    }
}
impl Eq for Point {}
impl PartialOrd for Point {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Point {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.t, self.seq).cmp(&(other.t, other.seq))
    }
}

/// A pending edge: its time, whether it ends a window (an end counts the samples at its
/// time, a start does not), and its mark.
type Query = (u64, bool, usize);

/// One device's running state.
#[derive(Debug, Default)]
struct Track {
    waiting: BinaryHeap<Reverse<Point>>,
    frontier: Option<u64>,
    /// Edges not yet reached by the counter, the power, the sample times.
    pending: [BinaryHeap<Reverse<Query>>; 3],
    counter: Option<(u64, u64, f64)>,
    power: Option<(u64, f64, f64)>,
    /// Power total at the last counter reading's time, when a power reading was there.
    power_at_counter: Option<f64>,
    steps: [usize; 3],
    released: usize,
    previous: Option<(u64, usize)>,
    /// Running totals at each edge, by mark.
    at: HashMap<usize, Totals>,
    /// The windows open over this device's samples: (start mark), for the gap check.
    open: Vec<usize>,
    gaps: HashMap<usize, Gaps>,
    stats: DeviceStats,
    file_counter: Option<u64>,
    kept: Vec<(u64, Sample, usize)>,
    stride: u64,
}

/// Where a mark's window stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MarkState {
    /// A start at this time, its end not seen.
    Open(u64),
    /// A start, and the end that came: their times.
    Closed(u64, u64),
    /// A start restarted, or an end: no window to check gaps over.
    Done,
}

/// A telemetry file folded in one pass.
#[derive(Debug, Default)]
pub struct Fold {
    header: Header,
    counters: Vec<Option<Counter>>,
    tracks: Vec<Track>,
    marks: Vec<(Mark, usize)>,
    state: Vec<MarkState>,
    open: HashMap<(String, u32), usize>,
    windows: Vec<(usize, usize)>,
    facts: Vec<String>,
    late_marks: Vec<usize>,
    reorder: usize,
    per_device: usize,
    seq: u64,
    last_time: Option<u64>,
    bounds: OutOfBounds,
}

/// What a fold gives at its end.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Folded {
    /// Every window's gross energies (no idle baseline yet), flags and facts.
    pub summary: Summary,
    /// Per window (as in `summary`) and device: its gaps.
    pub gaps: Vec<Vec<Gaps>>,
    /// Per device of the header.
    pub devices: Vec<DeviceStats>,
    /// The samples kept, in file order, with their lines ([`KEPT_IN_ALL`]).
    pub kept: Vec<(Sample, usize)>,
    /// Whether some device kept fewer samples than it has.
    pub decimated: bool,
    /// Readings outside physical bounds.
    pub bounds: OutOfBounds,
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
///
/// The file is in memory: its samples are all put in time order ([`Fold`] with no
/// reorder limit), its marks taken first.
pub fn summarize_with_idle(file: &TelemetryFile, external: &[WindowSummary]) -> Summary {
    let mut fold = Fold::with_reorder(file.header.clone(), usize::MAX);
    for (i, m) in file.marks.iter().enumerate() {
        fold.mark(file.lines.marks.get(i).copied().unwrap_or(0), m);
    }
    for (i, s) in file.samples.iter().enumerate() {
        fold.sample(file.lines.samples.get(i).copied().unwrap_or(0), s);
    }
    let mut summary = fold.finish().summary;
    with_idle(&mut summary, external);
    summary
}

impl Fold {
    /// A fold of a file with this header, samples put back in order within [`REORDER`].
    pub fn new(header: Header) -> Fold {
        Fold::with_reorder(header, REORDER)
    }

    /// A fold whose samples are put back in order within `reorder` samples per device
    /// (`usize::MAX`: all of them, for a file already in memory).
    pub fn with_reorder(header: Header, reorder: usize) -> Fold {
        let n = header.devices.len();
        let per_device = (KEPT_IN_ALL / n.max(1)).max(2);
        Fold {
            counters: header.devices.iter().map(|d| d.counter).collect(),
            tracks: (0..n)
                .map(|_| Track {
                    stride: 1,
                    ..Track::default()
                })
                .collect(),
            header,
            reorder,
            per_device,
            ..Fold::default()
        }
    }

    /// Takes one line of the file (its number from 1); a header is passed over.
    pub fn line(&mut self, number: usize, line: &Line) {
        match line {
            Line::Sample(s) => self.sample(number, s),
            Line::Mark(m) => self.mark(number, m),
            _ => {}
        }
    }

    fn clock(&mut self, number: usize, t: u64) {
        if let Some(before) = self.last_time
            && t.saturating_sub(before) > crate::bounds::MAX_STEP_NS
            && self.bounds.time.is_none()
        {
            self.bounds.time = Some((number, t, before));
        }
        self.last_time = Some(t);
    }

    /// Takes one sample, at line `number`.
    pub fn sample(&mut self, number: usize, s: &Sample) {
        self.clock(number, s.t_ns);
        if let Some(mw) = s.values.power_mw
            && !(mw.is_finite() && mw <= crate::bounds::MAX_POWER_MW)
            && self.bounds.power.is_none()
        {
            self.bounds.power = Some((number, s.device, mw));
        }
        let seq = self.seq;
        self.seq += 1;
        let (reorder, per_device) = (self.reorder, self.per_device);
        let Some(info) = self.counters.get(s.device as usize).copied() else {
            return;
        };
        let track = &mut self.tracks[s.device as usize];
        track.file_order(s, info.as_ref());
        track.keep(seq, s, number, per_device);
        if track.frontier.is_some_and(|f| s.t_ns < f) {
            track.stats.late += 1;
            return;
        }
        track.waiting.push(Reverse(Point {
            t: s.t_ns,
            line: number,
            seq,
            raw: s.values.energy_raw,
            mw: s.values.power_mw,
        }));
        if track.waiting.len() > reorder {
            track.release_one(info.as_ref(), &self.state, self.header.sample_period_ns);
        }
    }

    /// Takes one mark, at line `number`.
    pub fn mark(&mut self, number: usize, m: &Mark) {
        self.clock(number, m.t_ns);
        let id = self.marks.len();
        self.marks.push((m.clone(), number));
        self.state.push(MarkState::Done);
        let end = m.edge == Edge::End;
        let mut late = false;
        for track in &mut self.tracks {
            late |= track.frontier.is_some_and(|f| m.t_ns <= f);
            for pending in &mut track.pending {
                pending.push(Reverse((m.t_ns, end, id)));
            }
        }
        if late {
            self.late_marks.push(id);
        }
        self.pair(id, m);
    }

    /// Pairs a mark with its window's other edge, as the summary always has: a start
    /// again replaces the first, an end needs a start at or before it.
    fn pair(&mut self, id: usize, m: &Mark) {
        let key = (m.window.clone(), m.copy);
        let named = format!("window `{}` of copy {}", m.window, m.copy);
        match (m.edge, self.open.remove(&key)) {
            (Edge::Start, previous) => {
                if let Some(previous) = previous {
                    self.state[previous] = MarkState::Done;
                    self.facts.push(format!(
                        "{named} starts again before it ended; the later start is kept"
                    ));
                }
                self.open.insert(key, id);
                self.state[id] = MarkState::Open(m.t_ns);
                for track in &mut self.tracks {
                    track.open.push(id);
                }
            }
            (Edge::End, Some(start)) if self.marks[start].0.t_ns <= m.t_ns => {
                self.state[start] = MarkState::Closed(self.marks[start].0.t_ns, m.t_ns);
                self.windows.push((start, id));
            }
            (Edge::End, Some(start)) => {
                self.state[start] = MarkState::Done;
                self.facts.push(format!("{named} ends before it starts"));
            }
            (Edge::End, None) => self.facts.push(format!("{named} ends without a start")),
        }
    }

    /// The end of the file: every sample released, every edge evaluated, each window's
    /// energies as differences of the totals at its edges.
    pub fn finish(mut self) -> Folded {
        let period = self.header.sample_period_ns;
        for (track, info) in self.tracks.iter_mut().zip(&self.counters) {
            while !track.waiting.is_empty() {
                track.release_one(info.as_ref(), &self.state, period);
            }
            track.settle();
        }
        let mut left: Vec<(String, u32)> = std::mem::take(&mut self.open).into_keys().collect();
        left.sort();
        for (name, copy) in left {
            self.facts.push(format!(
                "window `{name}` of copy {copy} starts and never ends"
            ));
        }
        self.windows
            .sort_by_key(|&(start, _)| self.marks[start].0.t_ns);
        self.say_late_marks();
        let mut out = Folded {
            bounds: std::mem::take(&mut self.bounds),
            ..Folded::default()
        };
        for &(start, end) in &self.windows {
            out.summary.windows.push(self.window(start, end));
            out.gaps.push(
                (self.tracks.iter())
                    .map(|t| t.gaps.get(&start).copied().unwrap_or_default())
                    .collect(),
            );
        }
        out.summary.facts = std::mem::take(&mut self.facts);
        self.kept_samples(&mut out);
        out
    }

    /// The windows with a mark that came after later samples: left out, and said.
    fn say_late_marks(&mut self) {
        if self.late_marks.is_empty() {
            return;
        }
        let late = &self.late_marks;
        self.windows
            .retain(|(s, e)| !late.contains(s) && !late.contains(e));
        for &id in late.iter().take(8) {
            let (m, line) = &self.marks[id];
            self.facts.push(format!(
                "window `{}` of copy {}: its mark on line {line} comes after more than {} later samples; left out",
                m.window, m.copy, self.reorder
            ));
        }
        if late.len() > 8 {
            let more = late.len() - 8;
            self.facts.push(format!("{more} more marks like it"));
        }
    }

    fn kept_samples(&mut self, out: &mut Folded) {
        let mut kept: Vec<(u64, Sample, usize)> = Vec::new();
        for track in &mut self.tracks {
            out.decimated |= track.stride > 1;
            track.stats.kept_every = track.stride;
            kept.append(&mut track.kept);
            out.devices.push(std::mem::take(&mut track.stats));
        }
        kept.sort_by_key(|k| k.0);
        out.kept = kept.into_iter().map(|(_, s, line)| (s, line)).collect();
    }

    /// One window's summary from its edges' totals.
    fn window(&self, start: usize, end: usize) -> WindowSummary {
        let (s, e) = (&self.marks[start].0, &self.marks[end].0);
        let period = self.header.sample_period_ns;
        let devices = (self.header.devices.iter().zip(&self.tracks))
            .map(|(device, track)| {
                let zero = Totals::default();
                let a = track.at.get(&start).unwrap_or(&zero);
                let b = track.at.get(&end).unwrap_or(&zero);
                let gaps = track.gaps.get(&start).copied().unwrap_or_default();
                let span = (s.t_ns, e.t_ns);
                energy(device, &track.stats, span, (a, b), gaps, period)
            })
            .collect();
        WindowSummary {
            name: s.window.clone(),
            copy: s.copy,
            start_ns: s.t_ns,
            end_ns: e.t_ns,
            devices,
        }
    }
}

/// One device over one window, from the totals at its edges.
fn energy(
    device: &Device,
    stats: &DeviceStats,
    (start, end): (u64, u64),
    (a, b): (&Totals, &Totals),
    gaps: Gaps,
    period: u64,
) -> DeviceEnergy {
    let samples = b.samples.saturating_sub(a.samples);
    let mut flags = Vec::new();
    if samples < MIN_SAMPLES {
        flags.push(SummaryFlag::TooFewSamples);
    }
    if let Some((longest_ns, _, _)) = gaps.longest.filter(|_| period > 0) {
        flags.push(SummaryFlag::Gap { longest_ns });
    }
    let counter_j = device.counter.and_then(|_| {
        let uj = b.counter_uj? - a.counter_uj?;
        let counted = [
            SummaryFlag::CounterWrapped as fn(usize) -> SummaryFlag,
            SummaryFlag::CounterResetFilled,
            SummaryFlag::CounterResetDropped,
        ];
        for (i, flag) in counted.into_iter().enumerate() {
            let n = b.steps[i].saturating_sub(a.steps[i]);
            if n > 0 {
                flags.push(flag(n));
            }
        }
        Some(uj * 1e-6)
    });
    // An empty window has no trapezoid (as the trapezoid of its readings never had).
    let power_j = (a.power.zip(b.power))
        .filter(|_| end > start)
        .map(|(x, y)| (y - x) * 1e-12);
    let has = (stats.has_counter, stats.has_power);
    crate::summary::finish_device(device, has, samples, counter_j, power_j, flags)
}

impl Track {
    /// What file order alone gives: counts, first and last times, the counter's travel.
    fn file_order(&mut self, s: &Sample, info: Option<&Counter>) {
        let stats = &mut self.stats;
        stats.samples += 1;
        let t = s.t_ns;
        stats.first_last = Some(stats.first_last.map_or((t, t), |(f, _)| (f, t)));
        stats.has_power |= s.values.power_mw.is_some();
        let (Some(raw), Some(info)) = (s.values.energy_raw, info) else {
            return;
        };
        stats.has_counter = true;
        let moved = stats.counter_moved_uj.get_or_insert(0.0);
        if let Some(prev) = self.file_counter {
            *moved += match counter::step(prev, raw, info.wrap_raw) {
                Step::Forward(d) | Step::Wrapped(d) => d as f64 * info.resolution_uj,
                Step::Reset => 0.0,
            };
        }
        self.file_counter = Some(raw);
    }

    /// Keeps every `stride`-th sample, doubling the stride (and halving what is kept)
    /// whenever `cap` are kept.
    fn keep(&mut self, seq: u64, s: &Sample, line: usize, cap: usize) {
        let nth = (self.stats.samples - 1) as u64;
        if nth % self.stride != 0 {
            return;
        }
        if self.kept.len() >= cap {
            let mut i = 0;
            self.kept.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.stride = self.stride.saturating_mul(2);
            if nth % self.stride != 0 {
                return;
            }
        }
        self.kept.push((seq, s.clone(), line));
    }

    /// Releases the earliest waiting sample into the running totals.
    fn release_one(&mut self, info: Option<&Counter>, state: &[MarkState], period: u64) {
        let Some(Reverse(p)) = self.waiting.pop() else {
            return;
        };
        self.frontier = Some(p.t);
        if let Some(mw) = p.mw {
            self.power_point(p.t, mw);
        }
        if let (Some(raw), Some(info)) = (p.raw, info) {
            self.counter_point(p.t, raw, info);
        }
        self.time_point(p, state, period);
    }

    /// Evaluates the power total at the edges a power reading at `t` reaches.
    fn power_point(&mut self, t: u64, mw: f64) {
        let total = match self.power {
            Some((t0, v0, f0)) => f0 + t.saturating_sub(t0) as f64 * (mw + v0) / 2.0,
            None => 0.0,
        };
        while let Some(&Reverse((q, _, id))) = self.pending[1].peek() {
            if q > t {
                break;
            }
            self.pending[1].pop();
            let value = match self.power {
                _ if q == t => Some(total),
                Some((t0, v0, f0)) if t0 < q => {
                    let vq = v0 + (q - t0) as f64 / (t - t0) as f64 * (mw - v0);
                    Some(f0 + (q - t0) as f64 * (v0 + vq) / 2.0)
                }
                _ => None,
            };
            self.at.entry(id).or_default().power = value;
        }
        self.power = Some((t, mw, total));
    }

    /// Adds a counter reading at `t` to the cumulative energy (a reset's interval filled
    /// from the power readings of the same two samples, where both have one) and
    /// evaluates it at the edges it reaches.
    fn counter_point(&mut self, t: u64, raw: u64, info: &Counter) {
        let power_here = self.power.filter(|p| p.0 == t).map(|p| p.2);
        let before = self.steps;
        let total = match self.counter {
            None => 0.0,
            Some((_, prev, c0)) => {
                c0 + match counter::step(prev, raw, info.wrap_raw) {
                    Step::Forward(d) => d as f64 * info.resolution_uj,
                    Step::Wrapped(d) => {
                        self.steps[0] += 1;
                        d as f64 * info.resolution_uj
                    }
                    Step::Reset => match (self.power_at_counter, power_here) {
                        (Some(a), Some(b)) => {
                            self.steps[1] += 1;
                            (b - a) * 1e-6
                        }
                        _ => {
                            self.steps[2] += 1;
                            0.0
                        }
                    },
                }
            }
        };
        while let Some(&Reverse((q, end, id))) = self.pending[0].peek() {
            if q > t {
                break;
            }
            self.pending[0].pop();
            let value = match self.counter {
                _ if q == t => Some(total),
                Some((t0, _, c0)) if t0 < q => {
                    Some(c0 + (q - t0) as f64 / (t - t0) as f64 * (total - c0))
                }
                _ => None,
            };
            let at = self.at.entry(id).or_default();
            at.counter_uj = value;
            // A start takes the reading at or before it; an end the one at or after it.
            at.steps = if end || q == t { self.steps } else { before };
        }
        self.counter = Some((t, raw, total));
        self.power_at_counter = power_here;
    }

    /// Counts a sample at its time, checks the interval before it for a gap, and
    /// evaluates the count at the edges it reaches.
    fn time_point(&mut self, p: Point, state: &[MarkState], period: u64) {
        while let Some(&Reverse((q, end, id))) = self.pending[2].peek() {
            // A start counts the samples before it; an end those at or before it.
            if q > p.t || (end && q == p.t) {
                break;
            }
            self.pending[2].pop();
            self.at.entry(id).or_default().samples = self.released;
        }
        self.released += 1;
        let span = &mut self.stats.span;
        *span = Some(match *span {
            None => ((p.t, p.line), (p.t, p.line)),
            Some((lo, hi)) => (lo.min((p.t, p.line)), hi.max((p.t, p.line))),
        });
        if let Some(a) = self.previous {
            let length = p.t.saturating_sub(a.0);
            if period > 0 && length > period.saturating_mul(GAP_PERIODS) {
                self.gap((length, a, (p.t, p.line)), state);
            }
        }
        self.previous = Some((p.t, p.line));
    }

    /// A gap between samples `a` and `b`: counted in every window open over it.
    fn gap(&mut self, (length, a, b): (u64, TimeAt, TimeAt), state: &[MarkState]) {
        // Windows that ended before the gap never see another: let go.
        self.open.retain(|&id| match state[id] {
            MarkState::Open(_) => true,
            MarkState::Closed(_, end) => end > a.0,
            MarkState::Done => false,
        });
        for &id in &self.open {
            let (MarkState::Open(start) | MarkState::Closed(start, _)) = state[id] else {
                continue;
            };
            if start >= b.0 {
                continue;
            }
            let g = self.gaps.entry(id).or_default();
            g.count += 1;
            // The last of the longest, as a scan taking the maximum finds it.
            if g.longest.is_none_or(|l| length >= l.0) {
                g.longest = Some((length, a, b));
            }
        }
    }

    /// The edges no reading reached: past the last one (no value; the counts are all).
    fn settle(&mut self) {
        for (series, pending) in self.pending.iter_mut().enumerate() {
            while let Some(Reverse((_, _, id))) = pending.pop() {
                let at = self.at.entry(id).or_default();
                match series {
                    0 => {
                        at.counter_uj = None;
                        at.steps = self.steps;
                    }
                    1 => at.power = None,
                    _ => at.samples = self.released,
                }
            }
        }
    }
}

/// A telemetry file read in one pass ([`reduce`]): what its consumers need of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reduced {
    /// The file with its header, marks, summary lines, and the samples kept
    /// ([`KEPT_IN_ALL`]; every sample of a file within it), each with its line.
    pub file: TelemetryFile,
    /// Every window's energies from every sample, the devices' counts, the bounds.
    pub folded: Folded,
    /// The number of the file's last line (a cut last line among them).
    pub last_line: usize,
}

impl Reduced {
    /// A file already in memory, folded whole (its samples all kept, put in time order
    /// without a limit, as [`summarize`] does).
    pub fn of_file(file: &TelemetryFile) -> Reduced {
        let mut fold = Fold::with_reorder(file.header.clone(), usize::MAX);
        for (i, m) in file.marks.iter().enumerate() {
            fold.mark(file.lines.marks.get(i).copied().unwrap_or(0), m);
        }
        for (i, s) in file.samples.iter().enumerate() {
            fold.sample(file.lines.samples.get(i).copied().unwrap_or(0), s);
        }
        let mut folded = fold.finish();
        folded.kept.clear();
        folded.decimated = false;
        folded.devices.iter_mut().for_each(|d| d.kept_every = 1);
        Reduced {
            file: file.clone(),
            folded,
            last_line: 0,
        }
    }

    /// Its summary with the idle baselines (its own idle windows, then `external`'s), as
    /// [`summarize_with_idle`] gives of the whole file.
    pub fn summary_with_idle(&self, external: &[WindowSummary]) -> Summary {
        let mut summary = self.folded.summary.clone();
        with_idle(&mut summary, external);
        summary
    }
}

/// Reads the telemetry file `input` line by line (`path` names it in errors), folding its
/// samples as they go by: memory is bounded by its windows and [`KEPT_IN_ALL`], not by
/// its samples. `also` sees every line first (a checker's per-line rules).
///
/// # Errors
/// [`mlbench_schema::telemetry::TelemetryReadError`], naming the file and the line.
pub fn reduce(
    path: &std::path::Path,
    input: impl std::io::BufRead,
    mut also: impl FnMut(usize, &Line),
) -> Result<Reduced, mlbench_schema::telemetry::TelemetryReadError> {
    let mut file = TelemetryFile::default();
    let mut fold: Option<Fold> = None;
    let ended = mlbench_schema::telemetry::each_line(path, input, |number, line| {
        also(number, &line);
        match line {
            Line::Header(h) => {
                fold = Some(Fold::new(h.clone()));
                file.header = h;
            }
            Line::Sample(s) => {
                if let Some(fold) = fold.as_mut() {
                    fold.sample(number, &s);
                }
            }
            Line::Mark(m) => {
                if let Some(fold) = fold.as_mut() {
                    fold.mark(number, &m);
                }
                file.push(number, Line::Mark(m));
            }
            other => file.push(number, other),
        }
    })?;
    file.unknown_lines = ended.unknown_lines;
    file.truncated_tail = ended.truncated_tail;
    // `each_line` gives the header first, or fails.
    let folded = fold.map(Fold::finish).unwrap_or_default();
    for (sample, line) in &folded.kept {
        file.samples.push(sample.clone());
        file.lines.samples.push(*line);
    }
    Ok(Reduced {
        file,
        folded,
        last_line: ended.last_line,
    })
}

/// [`reduce`] of a file's bytes.
///
/// # Errors
/// As [`reduce`].
pub fn reduce_bytes(
    path: &std::path::Path,
    bytes: &[u8],
) -> Result<Reduced, mlbench_schema::telemetry::TelemetryReadError> {
    reduce(path, bytes, |_, _| {})
}

/// [`reduce`] of the file at `path`.
///
/// # Errors
/// As [`reduce`]; a file that cannot be opened is `Io`.
pub fn reduce_file(
    path: &std::path::Path,
) -> Result<Reduced, mlbench_schema::telemetry::TelemetryReadError> {
    let file = std::fs::File::open(path).map_err(|source| {
        mlbench_schema::telemetry::TelemetryReadError::Io {
            path: path.to_owned(),
            source,
        }
    })?;
    reduce(
        path,
        std::io::BufReader::with_capacity(1 << 16, file),
        |_, _| {},
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrate::{interpolate, power_energy_j};
    use mlbench_schema::telemetry::{TelemetryWriter, Values};
    use std::path::Path;

    const MS: u64 = 1_000_000;

    fn header(devices: usize) -> Header {
        Header {
            sample_period_ns: 10 * MS,
            devices: (0..devices)
                .map(|i| Device {
                    id: format!("cuda:{i}"),
                    counter: Some(Counter {
                        resolution_uj: 1000.0,
                        wrap_raw: None,
                    }),
                    ..Device::default()
                })
                .collect(),
            ..Header::default()
        }
    }

    /// Device `d`'s sample `k`: every 10 ms, power varying, its counter holding the
    /// energy in mJ (rounded down), reset to 0 at k = 700; none from 1200 to 1210 (a gap).
    fn sample(d: u32, k: u64) -> Sample {
        let w = 100.0 + 50.0 * ((k % 37) as f64 / 37.0) + 10.0 * f64::from(d);
        let mj = if k >= 700 { (k - 700) * 1100 } else { k * 1000 };
        Sample {
            t_ns: k * 10 * MS,
            device: d,
            values: Values {
                energy_raw: Some(mj),
                power_mw: Some(w * 1000.0),
                ..Values::default()
            },
            ..Sample::default()
        }
    }

    /// 3,000 samples of two devices, a few swapped out of order, with 40 windows
    /// (overlapping ones among them) marked where their times fall.
    fn lines() -> Vec<Line> {
        let mut samples: Vec<Sample> = (0..3000u64)
            .filter(|k| !(1200..1210).contains(k))
            .flat_map(|k| [sample(0, k), sample(1, k)])
            .collect();
        samples.swap(100, 130);
        samples.swap(2001, 2000);
        let mut marks: Vec<Mark> = (0..40u64)
            .flat_map(|w| {
                let (start, end) = (w * 700 * MS + 3 * MS, w * 700 * MS + 2_300 * MS + 7);
                let name = if w % 2 == 0 { "train" } else { "idle" };
                [(start, Edge::Start), (end, Edge::End)].map(|(t_ns, edge)| Mark {
                    t_ns,
                    edge,
                    window: name.into(),
                    copy: (w % 3) as u32,
                })
            })
            .collect();
        marks.sort_by_key(|m| m.t_ns);
        let mut out = Vec::new();
        let mut marks = marks.into_iter().peekable();
        for s in samples {
            while let Some(m) = marks.next_if(|m| m.t_ns <= s.t_ns) {
                out.push(Line::Mark(m));
            }
            out.push(Line::Sample(s));
        }
        out.extend(marks.map(Line::Mark));
        out
    }

    fn bytes(header: &Header, lines: &[Line]) -> Vec<u8> {
        let mut w = TelemetryWriter::new(Vec::new());
        w.header(header).unwrap();
        for l in lines {
            w.line(l).unwrap();
        }
        w.into_inner().unwrap()
    }

    /// The energies of a window computed as they were before the fold: each device's
    /// readings sorted, the counter's cumulative energy and the power trapezoid over
    /// the whole series, the samples inside counted by a scan.
    fn by_scan(file: &TelemetryFile, device: u32, start: u64, end: u64) -> (f64, f64, usize) {
        let mut mine: Vec<&Sample> = file.samples.iter().filter(|s| s.device == device).collect();
        mine.sort_by_key(|s| s.t_ns);
        let power: Vec<(u64, f64)> = mine
            .iter()
            .map(|s| (s.t_ns, s.values.power_mw.unwrap()))
            .collect();
        let raw: Vec<(u64, u64)> = mine
            .iter()
            .map(|s| (s.t_ns, s.values.energy_raw.unwrap()))
            .collect();
        let info = file.header.devices[device as usize].counter.unwrap();
        let fill = |a, b| power_energy_j(&power, a, b).map(|j| j * 1e6);
        let cum = counter::cumulative(&raw, &info, fill);
        let uj = interpolate(&cum.points, end).unwrap() - interpolate(&cum.points, start).unwrap();
        let inside = mine
            .iter()
            .filter(|s| s.t_ns >= start && s.t_ns <= end)
            .count();
        (
            uj * 1e-6,
            power_energy_j(&power, start, end).unwrap(),
            inside,
        )
    }

    #[test]
    fn streamed_energies_are_the_scans_of_every_sample() {
        let (header, lines) = (header(2), lines());
        let text = bytes(&header, &lines);
        let whole = mlbench_schema::telemetry::parse(Path::new("t.jsonl"), &text).unwrap();
        let reduced = reduce_bytes(Path::new("t.jsonl"), &text).unwrap();
        let windows = &reduced.folded.summary.windows;
        assert_eq!(windows.len(), 40);
        assert!(
            reduced.folded.summary.facts.is_empty(),
            "{:?}",
            reduced.folded.summary.facts
        );
        for (w, gaps) in windows.iter().zip(&reduced.folded.gaps) {
            for (device, d) in (0u32..).zip(&w.devices) {
                let (counter_j, power_j, inside) = by_scan(&whole, device, w.start_ns, w.end_ns);
                assert!(
                    (d.counter_j.unwrap() - counter_j).abs() < 1e-9 * counter_j,
                    "{w:?}"
                );
                assert!(
                    (d.power_j.unwrap() - power_j).abs() < 1e-9 * power_j,
                    "{w:?}"
                );
                assert_eq!(d.samples, inside);
                // The gap 11.99 s → 12.10 s lies in the windows from 7.003 s and 11.203 s.
                let gap = w.start_ns < 12_100 * MS && w.end_ns > 11_990 * MS;
                let longest = gaps[device as usize].longest.map(|g| (g.0, g.1.0, g.2.0));
                assert_eq!(longest, gap.then_some((110 * MS, 11_990 * MS, 12_100 * MS)));
                assert_eq!(
                    d.flags.contains(&SummaryFlag::Gap {
                        longest_ns: 110 * MS
                    }),
                    gap
                );
            }
        }
        // The reset at 7 s is filled from power in the windows over it.
        let over_reset = windows
            .iter()
            .find(|w| w.start_ns < 7_000 * MS && w.end_ns > 7_000 * MS);
        assert!(
            over_reset.unwrap().devices[0]
                .flags
                .contains(&SummaryFlag::CounterResetFilled(1))
        );
        // Read whole or streamed, the same summary; the file is small: every sample kept.
        assert_eq!(summarize(&whole), reduced.summary_with_idle(&[]));
        assert_eq!(reduced.file.samples, whole.samples);
        assert_eq!(reduced.file.lines, whole.lines);
        assert!(!reduced.folded.decimated);
        assert_eq!(reduced.folded.devices[0].samples, 2990);
    }

    #[test]
    fn what_is_kept_for_drawing_is_bounded_and_evenly_spaced() {
        // A thousand devices share KEPT_IN_ALL: 200 each; device 0 has 5,000 samples.
        let mut fold = Fold::new(header(1000));
        for k in 0..5000 {
            fold.sample(k as usize + 2, &sample(0, k));
        }
        let folded = fold.finish();
        assert!(folded.decimated);
        let times: Vec<u64> = folded
            .kept
            .iter()
            .map(|(s, _)| s.t_ns / (10 * MS))
            .collect();
        // Every 32nd sample (5000 / 32 = 157 kept, at most 200).
        assert_eq!(times.len(), 157);
        assert!(
            times.iter().zip(0..).all(|(&t, i)| t == 32 * i),
            "{times:?}"
        );
        assert_eq!(folded.devices[0].samples, 5000);
        assert_eq!(folded.devices[0].first_last, Some((0, 4999 * 10 * MS)));
    }

    #[test]
    fn a_sample_or_mark_far_out_of_order_is_left_out_and_said() {
        let mut fold = Fold::with_reorder(header(1), 4);
        let start = Mark {
            t_ns: 5 * 10 * MS,
            edge: Edge::Start,
            window: "train".into(),
            copy: 0,
        };
        fold.mark(1, &start);
        for k in 0..100 {
            fold.sample(k as usize + 2, &sample(0, k));
        }
        // Behind the samples already counted: left out.
        fold.sample(200, &sample(0, 3));
        let end = Mark {
            t_ns: 20 * 10 * MS,
            edge: Edge::End,
            ..start.clone()
        };
        fold.mark(201, &end);
        let folded = fold.finish();
        assert_eq!(folded.devices[0].late, 1);
        assert_eq!(folded.devices[0].samples, 101);
        assert!(folded.summary.windows.is_empty());
        assert_eq!(
            folded.summary.facts,
            vec![
                "window `train` of copy 0: its mark on line 201 comes after more than 4 later samples; left out"
            ]
        );
    }

    #[test]
    fn readings_out_of_bounds_are_found_once_each() {
        let mut fold = Fold::new(header(1));
        let mut s = sample(0, 1);
        fold.sample(2, &s);
        s.values.power_mw = Some(1e308);
        fold.sample(3, &s);
        fold.sample(4, &s);
        s.t_ns = u64::MAX;
        fold.sample(5, &s);
        let folded = fold.finish();
        assert_eq!(folded.bounds.power, Some((3, 0, 1e308)));
        assert_eq!(folded.bounds.time, Some((5, u64::MAX, 10 * MS)));
    }
}
