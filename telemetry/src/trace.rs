//! A bench's power over time, from its telemetry files: the plain data of a power chart
//! (`mlbench plot power`), and the facts a GPU check copies into docs/runner.md (whether
//! each counter moved, the sampling rate reached, the counter's energy against the power
//! readings' integral).
//!
//! One [`Trace`] per bench and run folder: the files of its copies
//! (`<bench>.<copy>.jsonl`; a `.2` file, a second configuration or an appended run, is a
//! trace of its own), a line per device of each file. The copies' files each count time
//! from their own start on the monotonic clock; they are put on one axis by their
//! wall-clock origins (`origin_unix_ms`, to the millisecond), which is for drawing only:
//! every energy is computed on each file's own clock ([`crate::summarize_with_idle`]).
//! Each device's idle baseline comes from the run's `idle.<device>.jsonl` files.
//!
//! Power is the device's own readings (`power_mw`). A device with an energy counter and
//! no power reading (RAPL) gets the mean power between two counter readings, placed
//! midway between them: derived, and said so. An interval across a reset, or longer
//! than two sampling periods, gives no point (the chart breaks the line there). A device
//! with neither (`cpu:proc`) is not drawn, and said so.

use crate::counter::{self, Step};
use crate::fold::{Reduced, reduce_bytes, reduce_file};
use crate::summary::{GAP_PERIODS, WindowSummary};
use mlbench_schema::telemetry::{
    self as format, Device, IDLE_WINDOW, SourceKind, TELEMETRY_FOLDER, TelemetryFile,
    TelemetryReadError,
};
use std::path::{Path, PathBuf};

/// The bench name of the idle baseline's files (`idle.<device>.jsonl`), as `mlbench run`
/// writes them.
const IDLE_FILE: &str = "idle";

/// Why traces could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// A path that is neither a folder nor a zip (a zip only where the caller reads zips:
    /// [`load_with`]).
    #[error("{}: not a folder (power traces are read from a run or submission folder, or its zip)", .0.display())]
    NotAFolder(PathBuf),
    /// A zip that could not be read (its reader's words, which name it).
    #[error("{message}")]
    Zip {
        /// The zip.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A folder without telemetry.
    #[error(
        "{}: no telemetry files (looked for telemetry/*.jsonl in it and in its folders)",
        .0.display()
    )]
    NoTelemetry(PathBuf),
    /// A folder that cannot be listed.
    #[error("{}: cannot list", path.display())]
    Io {
        /// The folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A telemetry file that cannot be read.
    #[error(transparent)]
    Read(#[from] TelemetryReadError),
}

mlbench_schema::classify_all!(Input: TraceError);

/// One bench's power over time in one run folder.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trace {
    /// A name unique among the traces loaded together: `output0-vae`, `output0-vae.2`
    /// (prefixed with the submission's folder name when several were given).
    pub name: String,
    /// The run folder (`output0`).
    pub run: String,
    /// The bench.
    pub bench: String,
    /// One per device of each copy's file that has power or an energy counter.
    pub lines: Vec<TraceLine>,
    /// The timed windows of every copy (the idle baseline's are not among them).
    pub windows: Vec<TraceWindow>,
    /// What a reader must know: how the clocks were put together, what is not drawn,
    /// marks that do not pair.
    pub facts: Vec<String>,
}

/// One device of one copy's file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TraceLine {
    /// `cuda:0 NVIDIA H100 80GB HBM3 · copy 0` (the copy when the trace has several).
    pub label: String,
    /// The device's id.
    pub device: String,
    /// Its source.
    pub source: SourceKind,
    /// The copy whose file it is in.
    pub copy: u32,
    /// The nominal time between two readings, s.
    pub period_s: f64,
    /// `(s, W)` on the trace's time axis, in time order.
    pub points: Vec<(f64, f64)>,
    /// The points are the mean power between counter readings (no power readings).
    pub from_counter: bool,
    /// The device's samples in the file.
    pub samples: usize,
    /// From its first sample to its last, s.
    pub span_s: f64,
    /// How far its energy counter went over the file, J (`None`: no counter readings).
    pub counter_moved_j: Option<f64>,
    /// Its mean idle power, W, from the run's idle baseline.
    pub idle_w: Option<f64>,
    /// Its energy over each timed window of its file.
    pub energy: Vec<LineEnergy>,
    /// Its readings left out of `points`: out of time order, or not finite (a hostile
    /// or broken file; `validate` names them).
    pub undrawn: usize,
}

/// A device's energy over one timed window.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LineEnergy {
    /// The window.
    pub window: String,
    /// By its counter, J.
    pub counter_j: Option<f64>,
    /// By the trapezoid of its power readings, J.
    pub power_j: Option<f64>,
    /// The counter's (else the power's) less the idle power over the window, J.
    pub net_j: Option<f64>,
    /// `|power − counter| / counter`.
    pub disagreement: Option<f64>,
    /// Its samples inside the window.
    pub samples: usize,
    /// The window's length, s.
    pub duration_s: f64,
}

impl LineEnergy {
    /// The energy a reader is given: the counter's, else the power's.
    pub fn gross_j(&self) -> Option<f64> {
        self.counter_j.or(self.power_j)
    }
}

/// A timed window on the trace's time axis.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TraceWindow {
    /// Its name (`train`).
    pub name: String,
    /// Its copy.
    pub copy: u32,
    /// Its start, s.
    pub start_s: f64,
    /// Its end, s.
    pub end_s: f64,
}

/// The traces under `paths`, and what was passed over (a bench whose devices have no
/// power or energy to draw), in words.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Loaded {
    /// One per bench (and numbered file) and run folder, in folder and bench order.
    pub traces: Vec<Trace>,
    /// Benches with nothing to draw.
    pub skipped: Vec<String>,
}

impl Loaded {
    /// What `mlbench plot power` says: a warning per bench passed over, then a line per
    /// device ([`Trace::check_lines`]).
    pub fn lines(&self) -> Vec<String> {
        let warnings = self.skipped.iter().map(|s| format!("warning: {s}"));
        warnings
            .chain(self.traces.iter().flat_map(Trace::check_lines))
            .collect()
    }
}

/// The first trace of each bench, in the order given: a page shows one per bench, not
/// one per run folder and numbered file.
pub fn one_per_bench(traces: Vec<Trace>) -> Vec<Trace> {
    let mut seen = std::collections::HashSet::new();
    traces
        .into_iter()
        .filter(|t| seen.insert(t.bench.clone()))
        .collect()
}

/// The power traces of every run folder under each of `paths`: a run folder
/// (`output0`, holding `telemetry/`), a submission or `mlbench run --out-dir` folder
/// (holding `output*/telemetry/`), or a `telemetry` folder itself.
///
/// # Errors
/// [`TraceError`]: a path that is not a folder or holds no telemetry, a folder that
/// cannot be listed, a telemetry file that cannot be read.
pub fn load(paths: &[PathBuf]) -> Result<Loaded, TraceError> {
    load_with(paths, &|path| Err(TraceError::NotAFolder(path.to_owned())))
}

/// The files of a zipped submission, each with its path in the zip (relative,
/// `/`-separated), as a caller that reads zips gives them ([`load_with`]).
pub type ZipFiles = Vec<(String, Vec<u8>)>;

/// [`load`], and of each path ending in `.zip`, the run folders in the files `read_zip`
/// gives (the reading, with its limits, is the caller's: this crate reads no zip). A
/// folder and its zip give the same traces: one way through ([`Folder`]).
///
/// # Errors
/// As [`load`]; `read_zip`'s.
pub fn load_with(
    paths: &[PathBuf],
    read_zip: &dyn Fn(&Path) -> Result<ZipFiles, TraceError>,
) -> Result<Loaded, TraceError> {
    let mut out = Loaded::default();
    for path in paths {
        let zipped;
        let folders = if is_zip(path) {
            zipped = read_zip(path)?;
            zip_folders(path, &zipped)?
        } else {
            telemetry_folders(path)?
                .into_iter()
                .map(|(run, dir)| (run, Folder::Disk(dir)))
                .collect()
        };
        for (run, folder) in folders {
            let run = if paths.len() > 1 {
                format!("{}-{run}", base_name(path))
            } else {
                run
            };
            load_folder(&folder, &run, &mut out)?;
        }
    }
    // Names unique among all: a second `a/output0` (two submissions named alike) gets `-2`.
    let mut seen: Vec<String> = Vec::new();
    for t in &mut out.traces {
        let base = t.name.clone();
        let mut n = 1;
        while seen.contains(&t.name) {
            n += 1;
            t.name = format!("{base}-{n}");
        }
        seen.push(t.name.clone());
    }
    Ok(out)
}

fn is_zip(path: &Path) -> bool {
    path.is_file() && mlbench_schema::tree::has_zip_extension(path)
}

/// Where a run's telemetry files are: the one thing a folder and a zip differ by.
enum Folder<'a> {
    /// A `telemetry` folder on disk.
    Disk(PathBuf),
    /// The files of a `telemetry` folder in a zip (`display`: the zip and the folder's
    /// path in it), by name, sorted.
    Held {
        display: String,
        files: Vec<(&'a str, &'a [u8])>,
    },
}

impl Folder<'_> {
    fn display(&self) -> String {
        match self {
            Folder::Disk(dir) => dir.display().to_string(),
            Folder::Held { display, .. } => display.clone(),
        }
    }

    /// Its entries' names, sorted, each with whether it is a regular file.
    fn names(&self) -> Result<Vec<(String, bool)>, TraceError> {
        Ok(match self {
            Folder::Disk(dir) => (list(dir)?.into_iter())
                .filter_map(|p| Some((p.file_name()?.to_str()?.to_owned(), p.is_file())))
                .collect(),
            Folder::Held { files, .. } => {
                files.iter().map(|(n, _)| (n.to_string(), true)).collect()
            }
        })
    }

    fn read(&self, name: &str) -> Result<Reduced, TraceError> {
        Ok(match self {
            Folder::Disk(dir) => reduce_file(&dir.join(name))?,
            Folder::Held { display, files } => {
                let bytes = (files.iter().find(|(n, _)| *n == name)).map_or(&[][..], |f| f.1);
                reduce_bytes(Path::new(&format!("{display}/{name}")), bytes)?
            }
        })
    }
}

/// `(run name, telemetry folder)` among the files of the zip `path`: each folder named
/// `telemetry`, its run the folder above it (the zip's name at its top).
fn zip_folders<'a>(
    path: &Path,
    files: &'a ZipFiles,
) -> Result<Vec<(String, Folder<'a>)>, TraceError> {
    let mut found: std::collections::BTreeMap<&str, Vec<(&str, &[u8])>> = Default::default();
    for (inner, bytes) in files {
        let Some((dir, name)) = inner.rsplit_once('/') else {
            continue;
        };
        if dir.rsplit('/').next() == Some(TELEMETRY_FOLDER) {
            found.entry(dir).or_default().push((name, bytes.as_slice()));
        }
    }
    if found.is_empty() {
        return Err(TraceError::NoTelemetry(path.to_owned()));
    }
    let stem = path
        .file_stem()
        .map_or_else(|| "run".into(), |s| s.to_string_lossy().into_owned());
    let mut folders: Vec<(String, Folder<'a>)> = found
        .into_iter()
        .map(|(dir, mut files)| {
            files.sort_by(|a, b| a.0.cmp(b.0));
            let run = dir
                .rsplit('/')
                .nth(1)
                .map_or_else(|| stem.clone(), str::to_owned);
            let display = format!("{}/{dir}", path.display());
            (run, Folder::Held { display, files })
        })
        .collect();
    folders.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(folders)
}

fn base_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// `(run name, telemetry folder)` under `path`.
fn telemetry_folders(path: &Path) -> Result<Vec<(String, PathBuf)>, TraceError> {
    if !path.is_dir() {
        return Err(TraceError::NotAFolder(path.to_owned()));
    }
    if path.file_name().is_some_and(|n| n == TELEMETRY_FOLDER) {
        let run = path.parent().map_or_else(|| "run".into(), base_name);
        return Ok(vec![(run, path.to_owned())]);
    }
    if path.join(TELEMETRY_FOLDER).is_dir() {
        return Ok(vec![(base_name(path), path.join(TELEMETRY_FOLDER))]);
    }
    let mut found: Vec<(String, PathBuf)> = list(path)?
        .into_iter()
        .filter(|p| p.join(TELEMETRY_FOLDER).is_dir())
        .map(|p| (base_name(&p), p.join(TELEMETRY_FOLDER)))
        .collect();
    found.sort();
    if found.is_empty() {
        return Err(TraceError::NoTelemetry(path.to_owned()));
    }
    Ok(found)
}

fn list(dir: &Path) -> Result<Vec<PathBuf>, TraceError> {
    let io = |source| TraceError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        paths.push(entry.map_err(io)?.path());
    }
    paths.sort();
    Ok(paths)
}

/// A bench file's group: its bench and what follows `<bench>.<copy>` in its name
/// (empty, or `.2`); `None` for an idle baseline's file.
fn group_of(name: &str, file: &TelemetryFile) -> Option<(String, String)> {
    let bench = file.header.bench.clone().filter(|b| b != IDLE_FILE)?;
    let stem = name.trim_end_matches(".jsonl").to_owned();
    let copy = file.header.copy.unwrap_or(0);
    let rest = stem
        .strip_prefix(&format!("{bench}.{copy}"))
        .map_or_else(|| format!(" ({stem})"), str::to_owned);
    Some((bench, rest))
}

fn load_folder(folder: &Folder<'_>, run: &str, out: &mut Loaded) -> Result<(), TraceError> {
    let mut idle: Vec<WindowSummary> = Vec::new();
    // (bench, suffix) → files, in name order (copy 0 first).
    let mut groups: Vec<((String, String), Vec<Reduced>)> = Vec::new();
    for (name, is_file) in folder.names()? {
        if name.ends_with(".jsonl.part") {
            out.skipped.push(format!(
                "{}/{name}: a sampler's unfinished file (its copy died, or is still running); not drawn",
                folder.display()
            ));
            continue;
        }
        if !name.ends_with(".jsonl") || !is_file {
            continue;
        }
        let file = folder.read(&name)?;
        match group_of(&name, &file.file) {
            None => idle.extend(file.summary_with_idle(&[]).windows),
            Some(key) => match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, files)) => files.push(file),
                None => groups.push((key, vec![file])),
            },
        }
    }
    idle.retain(|w| w.name == IDLE_WINDOW);
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    for ((bench, suffix), mut files) in groups {
        files.sort_by_key(|f| f.file.header.copy);
        let name = format!("{run}-{bench}{suffix}");
        let trace = trace_of(&name, run, &bench, &files, &idle);
        if trace.lines.iter().all(|l| l.points.is_empty()) {
            out.skipped.push(format!(
                "{}/{bench}{suffix}: no device has power or an energy counter; not drawn",
                folder.display()
            ));
        } else {
            out.traces.push(trace);
        }
    }
    Ok(())
}

/// The trace of one bench's `files` (its copies), with idle baselines from `idle`.
pub fn trace(
    name: &str,
    run: &str,
    bench: &str,
    files: &[TelemetryFile],
    idle: &[WindowSummary],
) -> Trace {
    let files: Vec<Reduced> = files.iter().map(Reduced::of_file).collect();
    trace_of(name, run, bench, &files, idle)
}

/// [`trace`] of files read in one pass ([`crate::fold::reduce`]): each device's points
/// from the samples kept, its counts and energies from every sample.
pub fn trace_of(
    name: &str,
    run: &str,
    bench: &str,
    files: &[Reduced],
    idle: &[WindowSummary],
) -> Trace {
    let mut out = Trace {
        name: name.into(),
        run: run.into(),
        bench: bench.into(),
        ..Trace::default()
    };
    let headers: Vec<&format::Header> = files.iter().map(|f| &f.file.header).collect();
    let offsets = offsets(&headers, &mut out.facts);
    let (mut unread, mut seen) = (Vec::new(), std::collections::HashSet::new());
    let several = files.len() > 1;
    for (reduced, offset) in files.iter().zip(offsets) {
        let file = &reduced.file;
        let copy = file.header.copy.unwrap_or(0);
        let summary = reduced.summary_with_idle(idle);
        out.facts
            .extend(summary.facts.iter().map(|f| format!("copy {copy}: {f}")));
        if file.truncated_tail {
            out.facts
                .push(format!("copy {copy}: its file's last line was cut short"));
        }
        let windows: Vec<&WindowSummary> = summary
            .windows
            .iter()
            .filter(|w| w.name != IDLE_WINDOW)
            .collect();
        for w in &windows {
            out.windows.push(TraceWindow {
                name: w.name.clone(),
                copy: w.copy,
                start_s: offset + w.start_ns as f64 * 1e-9,
                end_s: offset + w.end_ns as f64 * 1e-9,
            });
        }
        for (i, device) in file.header.devices.iter().enumerate() {
            let Some(mut line) = line(reduced, i, offset) else {
                // Once per device id: every copy's file holds the CPU's sources.
                if seen.insert(device.id.as_str()) {
                    unread.push(device.id.clone());
                }
                continue;
            };
            line.label = label(device, several.then_some(copy));
            if line.undrawn > 0 {
                out.facts.push(format!(
                    "{}: {} not drawn, out of time order or not finite (`mlbench validate` names them).",
                    line.label,
                    plural_readings(line.undrawn)
                ));
            }
            line.copy = copy;
            line.energy = windows.iter().map(|w| energy(w, i)).collect();
            line.idle_w = windows
                .iter()
                .find_map(|w| w.devices.get(i).and_then(|d| d.idle_w));
            out.lines.push(line);
        }
    }
    out.facts.extend(unread_fact(&unread));
    out
}

/// `cpu:proc has no power or energy readings: not drawn.`, naming at most eight devices.
fn unread_fact(ids: &[String]) -> Option<String> {
    const NAMED: usize = 8;
    let mut names = ids
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > NAMED {
        names.push_str(&format!(" and {} more devices", ids.len() - NAMED));
    }
    Some(match ids.len() {
        0 => return None,
        1 => format!("{names} has no power or energy readings: not drawn."),
        _ => format!("{names} have no power or energy readings: not drawn."),
    })
}

/// Each file's start on the trace's axis, s: its wall-clock origin less the earliest
/// one; all 0 when a file lacks its origin (said in `facts`).
fn offsets(files: &[&format::Header], facts: &mut Vec<String>) -> Vec<f64> {
    let origins: Option<Vec<u64>> = files.iter().map(|h| h.origin_unix_ms).collect();
    match origins {
        Some(o) if files.len() > 1 => {
            let first = o.iter().copied().min().unwrap_or(0);
            facts.push(
                "The copies' files are put on one time axis by their wall-clock origins \
                 (to the millisecond); each energy is on its file's own monotonic clock."
                    .into(),
            );
            o.iter().map(|t| (t - first) as f64 * 1e-3).collect()
        }
        None if files.len() > 1 => {
            facts.push(
                "A copy's file has no wall-clock origin: every copy is drawn from its own \
                 start, so the copies are not aligned."
                    .into(),
            );
            vec![0.0; files.len()]
        }
        _ => vec![0.0; files.len()],
    }
}

/// `cuda:0 NVIDIA H100 80GB HBM3 · copy 1`: the id, the name where it adds to it, the
/// copy when asked.
fn label(device: &Device, copy: Option<u32>) -> String {
    let mut text = device.id.clone();
    if let Some(name) = device.name.as_deref().filter(|n| !device.id.contains(n)) {
        text.push(' ');
        text.push_str(name);
    }
    if let Some(copy) = copy {
        text.push_str(&format!(" · copy {copy}"));
    }
    text
}

fn energy(w: &WindowSummary, device: usize) -> LineEnergy {
    let d = w.devices.get(device).cloned().unwrap_or_default();
    LineEnergy {
        window: w.name.clone(),
        counter_j: d.counter_j,
        power_j: d.power_j,
        net_j: if d.counter_j.is_some() {
            d.net_counter_j
        } else {
            d.net_power_j
        },
        disagreement: d.disagreement,
        samples: d.samples,
        duration_s: (w.end_ns - w.start_ns) as f64 * 1e-9,
    }
}

/// The line of the `device`-th device of `file`, its times shifted by `offset` s; `None`
/// when it has neither power readings nor counter readings.
fn line(reduced: &Reduced, device: usize, offset: f64) -> Option<TraceLine> {
    let file = &reduced.file;
    let stats = reduced.folded.devices.get(device)?;
    let mine: Vec<&format::Sample> = file
        .samples
        .iter()
        .filter(|s| s.device as usize == device)
        .collect();
    let period_ns = file.header.sample_period_ns;
    let power: Vec<(u64, f64)> = mine
        .iter()
        .filter_map(|s| Some((s.t_ns, s.values.power_mw? * 1e-3)))
        .collect();
    let counter: Vec<(u64, u64)> = mine
        .iter()
        .filter_map(|s| Some((s.t_ns, s.values.energy_raw?)))
        .collect();
    let info = file.header.devices.get(device)?.counter.as_ref();
    let (points, from_counter) = if !power.is_empty() {
        (power, false)
    } else {
        // Of the samples kept, every `kept_every`-th: their gaps are that much longer.
        let period = period_ns.saturating_mul(stats.kept_every.max(1));
        (counter_power_w(&counter, info?, period), true)
    };
    if points.is_empty() && counter.is_empty() {
        return None;
    }
    let read = points.len();
    let points = drawable(points);
    let undrawn = read - points.len();
    let moved = info.and(stats.counter_moved_uj).map(|uj| uj * 1e-6);
    let (first, last) = stats.first_last?;
    Some(TraceLine {
        device: file.header.devices[device].id.clone(),
        source: file.header.devices[device].source,
        period_s: period_ns as f64 * 1e-9,
        points: points
            .into_iter()
            .map(|(t, w)| (offset + t as f64 * 1e-9, w))
            .collect(),
        from_counter,
        samples: stats.samples,
        span_s: last.saturating_sub(first) as f64 * 1e-9,
        counter_moved_j: moved,
        undrawn,
        ..TraceLine::default()
    })
}

fn plural_readings(n: usize) -> String {
    match n {
        1 => "1 reading".to_owned(),
        n => format!("{n} readings"),
    }
}

/// The readings a chart can draw: finite, each at or after the one before (`validate`
/// names the others: `telemetry.clock`, `telemetry.power-range`).
fn drawable(points: Vec<(u64, f64)>) -> Vec<(u64, f64)> {
    let mut kept: Vec<(u64, f64)> = Vec::with_capacity(points.len());
    for (i, &(t, w)) in points.iter().enumerate() {
        // A time past the next one is the odd one (one wild time would otherwise hide
        // every reading after it); a time before the last kept one, likewise.
        let ahead = points.get(i + 1).is_some_and(|&(next, _)| next < t);
        let behind = kept.last().is_some_and(|&(last, _)| t < last);
        if w.is_finite() && !ahead && !behind {
            kept.push((t, w));
        }
    }
    kept
}

/// The mean power, W, between each two counter readings `(t_ns, raw)`, at the middle
/// of their interval: none across a reset (its energy is unknown) or over more than
/// [`GAP_PERIODS`] periods (a gap, which a chart shows as one).
pub fn counter_power_w(
    readings: &[(u64, u64)],
    info: &format::Counter,
    period_ns: u64,
) -> Vec<(u64, f64)> {
    readings
        .windows(2)
        .filter_map(|pair| {
            let ((ta, a), (tb, b)) = (pair[0], pair[1]);
            let dt = tb.checked_sub(ta).filter(|dt| *dt > 0)?;
            if period_ns > 0 && dt > period_ns.saturating_mul(GAP_PERIODS) {
                return None;
            }
            let raw = match counter::step(a, b, info.wrap_raw) {
                Step::Forward(d) | Step::Wrapped(d) => d,
                Step::Reset => return None,
            };
            // µJ per ns is kW.
            let watts = raw as f64 * info.resolution_uj / dt as f64 * 1e3;
            Some((ta + dt / 2, watts))
        })
        .collect()
}

impl Trace {
    /// One line per device: what a GPU check writes down about each source.
    ///
    /// `output0 vae: cuda:0 NVIDIA H100 (nvml) copy 0: 611 samples over 61.0 s, 10.00 Hz of 10.000 Hz;
    /// counter moved 31012.0 J; train 60.0 s, 601 samples: counter 30100.0 J, power
    /// 29800.0 J (1.0 % apart), net of idle 26410.0 J`.
    pub fn check_lines(&self) -> Vec<String> {
        self.lines
            .iter()
            .map(|l| {
                let id = l.label.split(" · ").next().unwrap_or(&l.label);
                let mut text = format!(
                    "{} {}: {id} ({}) copy {}: {}",
                    self.run,
                    self.bench,
                    source_name(l.source),
                    l.copy,
                    rate(l)
                );
                text.push_str(&match l.counter_moved_j {
                    None => "; no energy counter".to_string(),
                    Some(j) if j > 0.0 => format!("; counter moved {j:.1} J"),
                    Some(_) => "; counter did NOT move".to_string(),
                });
                if l.from_counter {
                    text.push_str("; no power readings (power from the counter)");
                }
                for e in &l.energy {
                    text.push_str(&format!("; {}", energy_words(e)));
                }
                text
            })
            .collect()
    }
}

fn source_name(s: SourceKind) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{s:?}"))
}

/// `611 samples over 61.0 s, 10.0 Hz of 10 Hz`.
fn rate(l: &TraceLine) -> String {
    let nominal = 1.0 / l.period_s;
    if l.samples < 2 || l.span_s <= 0.0 {
        return format!("{} samples, nominal {nominal:.3} Hz", l.samples);
    }
    let reached = (l.samples - 1) as f64 / l.span_s;
    format!(
        "{} samples over {:.1} s, {reached:.2} Hz of {nominal:.3} Hz",
        l.samples, l.span_s
    )
}

/// `train 60.0 s, 61 samples: counter 30100.0 J, power 29800.0 J (1.0 % apart)`.
fn energy_words(e: &LineEnergy) -> String {
    let j = |v: Option<f64>| v.map_or_else(|| "none".to_string(), |v| format!("{v:.1} J"));
    let mut text = format!(
        "{} {:.1} s, {} samples: counter {}, power {}",
        e.window,
        e.duration_s,
        e.samples,
        j(e.counter_j),
        j(e.power_j)
    );
    if let Some(d) = e.disagreement {
        text.push_str(&format!(" ({:.1} % apart)", d * 100.0));
    }
    if let Some(net) = e.net_j {
        text.push_str(&format!(", net of idle {net:.1} J"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlbench_schema::telemetry::{Counter, Edge, Header, Mark, Sample, Values};

    const S: u64 = 1_000_000_000;

    fn rapl() -> Counter {
        Counter {
            resolution_uj: 1.0,
            wrap_raw: Some(1_000_000_000),
        }
    }

    fn device(id: &str, source: SourceKind, counter: Option<Counter>) -> Device {
        Device {
            id: id.into(),
            source,
            counter,
            ..Device::default()
        }
    }

    fn sample(t_ns: u64, device: u32, raw: Option<u64>, mw: Option<f64>) -> Sample {
        Sample {
            t_ns,
            device,
            values: Values {
                energy_raw: raw,
                power_mw: mw,
                ..Values::default()
            },
            ..Sample::default()
        }
    }

    fn mark(t_ns: u64, edge: Edge, window: &str, copy: u32) -> Mark {
        Mark {
            t_ns,
            edge,
            window: window.into(),
            copy,
        }
    }

    #[test]
    fn drawable_readings_leave_out_a_wild_time_a_step_back_and_non_finite_power() {
        let t = |s: u64| s * 1_000_000_000;
        let points = vec![
            (t(0), 100.0),
            (t(1), 100.0),
            (u64::MAX, 100.0), // a wild time: past the next reading's
            (t(3), f64::INFINITY),
            (t(4), 100.0), // a step back after it: one of the pair goes
            (t(2), 100.0),
            (t(5), f64::NAN),
            (t(6), 100.0),
        ];
        let kept: Vec<u64> = drawable(points).iter().map(|p| p.0 / t(1)).collect();
        assert_eq!(kept, [0, 1, 2, 6]);
    }

    #[test]
    fn one_per_bench_keeps_each_benchs_first_trace() {
        let t = |name: &str, bench: &str| Trace {
            name: name.into(),
            bench: bench.into(),
            ..Trace::default()
        };
        let kept = one_per_bench(vec![
            t("output0-vae", "vae"),
            t("output0-vae.2", "vae"),
            t("output0-bert", "bert"),
            t("output1-vae", "vae"),
        ]);
        let names: Vec<&str> = kept.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["output0-vae", "output0-bert"]);
    }

    #[test]
    fn counter_power_is_the_mean_between_readings_skipping_resets_and_gaps() {
        let period = S;
        // 0→1 s: 50 J; 1→2 s: a wrap, 1e9 − 999_950_000 + 30_000_000 = 30_050_000 µJ,
        // 30.05 W; 2→3 s: forward by 1.97e9 µJ (a value past
        // the range still counts forward: only backward steps are judged); 3→6 s: three
        // periods, a gap: no point.
        let readings = [
            (0, 949_950_000),
            (S, 999_950_000),
            (2 * S, 30_000_000),
            (3 * S, 2_000_000_000),
            (6 * S, 2_000_000_100),
            (6 * S + S / 2, 2_000_000_100 + 25_000_000),
        ];
        let got = counter_power_w(&readings, &rapl(), period);
        assert_eq!(
            got,
            vec![
                (S / 2, 50.0),
                (S + S / 2, 30.05),
                // 2→3 s: forward by 1.97e9 µJ: a counter past its range still counts
                // forward (step only judges backward steps).
                (2 * S + S / 2, 1970.0),
                (6 * S + S / 4, 50.0),
            ]
        );
        // Backward without a known range: a reset, no point.
        let no_range = Counter {
            resolution_uj: 1000.0,
            wrap_raw: None,
        };
        let got = counter_power_w(
            &[(0, 500_000), (S, 400_000), (2 * S, 460_000)],
            &no_range,
            period,
        );
        // 60 000 counts × 1000 µJ = 60 J over 1 s: 60 W, at 1.5 s.
        assert_eq!(got, vec![(S + S / 2, 60.0)]);
        // Two readings at one time: no point, no division by zero.
        assert!(counter_power_w(&[(S, 1), (S, 2)], &no_range, period).is_empty());
    }

    /// Copy `copy`'s file: a GPU with power (100 W, 300 W from 2 s to 8 s) and a counter
    /// agreeing with it, a RAPL package with a counter only (20 W), `cpu:proc` with
    /// neither; window `train` from 2 s to 8 s; sampled at 1 Hz from 0 to 10 s.
    fn copy_file(copy: u32, origin_ms: Option<u64>) -> TelemetryFile {
        let watts = |s: u64| if (2..8).contains(&s) { 300.0 } else { 100.0 };
        let mut gpu_j = 0.0;
        let mut samples = Vec::new();
        for s in 0..=10u64 {
            if s > 0 {
                // The trapezoid of the power readings between s − 1 and s.
                gpu_j += (watts(s - 1) + watts(s)) / 2.0;
            }
            samples.push(sample(
                s * S,
                0,
                Some((gpu_j * 1000.0) as u64),
                Some(watts(s) * 1000.0),
            ));
            samples.push(sample(s * S, 1, Some(s * 20_000_000), None));
            samples.push(sample(s * S, 2, None, None));
        }
        TelemetryFile {
            header: Header {
                bench: Some("vae".into()),
                copy: Some(copy),
                sample_period_ns: S,
                origin_unix_ms: origin_ms,
                devices: vec![
                    Device {
                        name: Some("NVIDIA H100".into()),
                        ..device(
                            &format!("cuda:{copy}"),
                            SourceKind::Nvml,
                            Some(Counter {
                                resolution_uj: 1000.0,
                                wrap_raw: None,
                            }),
                        )
                    },
                    device("cpu:package-0", SourceKind::Rapl, Some(rapl())),
                    device("cpu:proc", SourceKind::Procfs, None),
                ],
                ..Header::default()
            },
            samples,
            marks: vec![
                mark(2 * S, Edge::Start, "train", copy),
                mark(8 * S, Edge::End, "train", copy),
            ],
            ..TelemetryFile::default()
        }
    }

    /// The idle baseline of `cuda:0`: 90 W for 10 s, by its counter.
    fn idle() -> Vec<WindowSummary> {
        let samples = (0..=10u64)
            .map(|s| sample(s * S, 0, Some(s * 90_000), Some(90_000.0)))
            .collect();
        let file = TelemetryFile {
            header: Header {
                bench: Some(IDLE_FILE.into()),
                sample_period_ns: S,
                devices: vec![device(
                    "cuda:0",
                    SourceKind::Nvml,
                    Some(Counter {
                        resolution_uj: 1000.0,
                        wrap_raw: None,
                    }),
                )],
                ..Header::default()
            },
            samples,
            marks: vec![
                mark(0, Edge::Start, IDLE_WINDOW, 0),
                mark(10 * S, Edge::End, IDLE_WINDOW, 0),
            ],
            ..TelemetryFile::default()
        };
        crate::fold::summarize_with_idle(&file, &[]).windows
    }

    #[test]
    fn one_copy_gives_power_lines_windows_energy_and_idle() {
        let t = trace(
            "output0-vae",
            "output0",
            "vae",
            &[copy_file(0, Some(5_000))],
            &idle(),
        );
        assert_eq!(t.lines.len(), 2, "cpu:proc has nothing to draw");
        assert!(
            t.facts
                .iter()
                .any(|f| f == "cpu:proc has no power or energy readings: not drawn."),
            "{:?}",
            t.facts
        );
        assert_eq!(
            t.windows,
            vec![TraceWindow {
                name: "train".into(),
                copy: 0,
                start_s: 2.0,
                end_s: 8.0
            }]
        );
        let gpu = &t.lines[0];
        assert_eq!(
            gpu.label, "cuda:0 NVIDIA H100",
            "one copy: no copy in the label"
        );
        assert!(!gpu.from_counter);
        assert_eq!(gpu.points.len(), 11);
        assert_eq!(gpu.points[2], (2.0, 300.0));
        assert_eq!((gpu.samples, gpu.span_s, gpu.period_s), (11, 10.0, 1.0));
        // Over the file: 100+200 (0→2 s: 100, 100→300 is 200) … by hand: 0→1 100, 1→2 200,
        // 2→7 5×300, 7→8 200, 8→10 2×100: 2200 J.
        assert_eq!(gpu.counter_moved_j, Some(2200.0));
        assert_eq!(gpu.idle_w, Some(90.0));
        // train 2→8 s: 5×300 + 200 = 1700 J by both; net: 1700 − 90 × 6 = 1160 J.
        let e = &gpu.energy[0];
        assert_eq!(
            (e.counter_j, e.power_j, e.net_j),
            (Some(1700.0), Some(1700.0), Some(1160.0))
        );
        assert_eq!(
            (e.samples, e.duration_s, e.disagreement),
            (7, 6.0, Some(0.0))
        );
        // The package: 20 W from its counter, at the middle of each second; no idle.
        let cpu = &t.lines[1];
        assert!(cpu.from_counter);
        assert_eq!(cpu.points.len(), 10);
        assert_eq!(cpu.points[0], (0.5, 20.0));
        assert_eq!(cpu.energy[0].counter_j, Some(120.0));
        assert_eq!((cpu.idle_w, cpu.energy[0].net_j), (None, None));
        assert_eq!(
            t.check_lines()[0],
            "output0 vae: cuda:0 NVIDIA H100 (nvml) copy 0: 11 samples over 10.0 s, 1.00 Hz of 1.000 Hz; \
             counter moved 2200.0 J; train 6.0 s, 7 samples: counter 1700.0 J, power 1700.0 J \
             (0.0 % apart), net of idle 1160.0 J"
        );
        assert_eq!(
            t.check_lines()[1],
            "output0 vae: cpu:package-0 (rapl) copy 0: 11 samples over 10.0 s, 1.00 Hz of 1.000 Hz; \
             counter moved 200.0 J; no power readings (power from the counter); train 6.0 s, \
             7 samples: counter 120.0 J, power none"
        );
    }

    #[test]
    fn copies_are_aligned_on_their_wall_clock_origins() {
        let files = [copy_file(0, Some(10_000)), copy_file(1, Some(12_500))];
        let t = trace("x", "output0", "vae", &files, &[]);
        assert_eq!(t.lines.len(), 4);
        let not_drawn = t.facts.iter().filter(|f| f.starts_with("cpu:proc")).count();
        assert_eq!(not_drawn, 1, "said once for both copies: {:?}", t.facts);
        assert_eq!(t.lines[2].label, "cuda:1 NVIDIA H100 · copy 1");
        assert_eq!(t.lines[2].copy, 1);
        // Copy 1 started 2.5 s later: its points and window move by 2.5 s.
        assert_eq!(t.lines[2].points[0], (2.5, 100.0));
        assert_eq!(t.windows[1].start_s, 4.5);
        assert_eq!(t.windows[1].end_s, 10.5);
        assert!(
            t.facts
                .iter()
                .any(|f| f.contains("by their wall-clock origins"))
        );
        // Without an origin: not aligned, and said.
        let files = [copy_file(0, Some(10_000)), copy_file(1, None)];
        let t = trace("x", "output0", "vae", &files, &[]);
        assert_eq!(t.lines[2].points[0], (0.0, 100.0));
        assert!(t.facts.iter().any(|f| f.contains("not aligned")));
    }

    fn write(path: &Path, file: &TelemetryFile) {
        let mut w = format::TelemetryWriter::new(Vec::new());
        w.header(&file.header).unwrap();
        for s in &file.samples {
            w.sample(s).unwrap();
        }
        for m in &file.marks {
            w.mark(m).unwrap();
        }
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, w.into_inner().unwrap()).unwrap();
    }

    #[test]
    fn load_finds_run_folders_groups_copies_and_names_traces() {
        let tmp = tempfile::tempdir().unwrap();
        let sub = tmp.path().join("acme");
        let tel = sub.join("output0").join(TELEMETRY_FOLDER);
        write(&tel.join("vae.0.jsonl"), &copy_file(0, Some(0)));
        write(&tel.join("vae.1.jsonl"), &copy_file(1, Some(0)));
        write(&tel.join("vae.0.2.jsonl"), &copy_file(0, Some(0)));
        // A bench whose only device has nothing to draw.
        let mut bare = copy_file(0, None);
        bare.header.bench = Some("cart".into());
        bare.header.devices.truncate(1);
        bare.header.devices[0].counter = None;
        bare.samples.retain(|s| s.device == 0);
        bare.samples
            .iter_mut()
            .for_each(|s| s.values = Values::default());
        write(&tel.join("cart.0.jsonl"), &bare);
        std::fs::write(tel.join("notes.txt"), "not telemetry").unwrap();
        std::fs::write(tel.join("vae.3.jsonl.part"), "{\"type\":").unwrap();
        let loaded = load(std::slice::from_ref(&sub)).unwrap();
        let names: Vec<&str> = loaded.traces.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["output0-vae", "output0-vae.2"]);
        assert_eq!(
            loaded.traces[0].lines.len(),
            4,
            "two copies, two devices each"
        );
        assert_eq!(loaded.traces[1].lines.len(), 2);
        assert_eq!(loaded.skipped.len(), 2, "{:?}", loaded.skipped);
        assert!(loaded.skipped[0].contains("vae.3.jsonl.part: a sampler's unfinished file"));
        assert!(
            loaded.skipped[1]
                .ends_with("/cart: no device has power or an energy counter; not drawn")
        );
        // The run folder and the telemetry folder give the same; two paths are prefixed
        // with their folder names, and alike names numbered.
        for path in [sub.join("output0"), tel.clone()] {
            let names: Vec<String> = load(&[path])
                .unwrap()
                .traces
                .into_iter()
                .map(|t| t.name)
                .collect();
            assert_eq!(names, ["output0-vae", "output0-vae.2"]);
        }
        let loaded = load(&[sub.clone(), sub.join("output0")]).unwrap();
        let names: Vec<&str> = loaded.traces.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "acme-output0-vae",
                "acme-output0-vae.2",
                "output0-output0-vae",
                "output0-output0-vae.2"
            ]
        );
        let loaded = load(&[sub.join("output0"), tel.clone()]).unwrap();
        let names: Vec<&str> = loaded.traces.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "output0-output0-vae",
                "output0-output0-vae.2",
                "telemetry-output0-vae",
                "telemetry-output0-vae.2"
            ]
        );
    }

    /// The files under `root` as a zip reader gives them: paths relative, `/`-separated.
    fn files_under(root: &Path, rel: &str, out: &mut ZipFiles) {
        for entry in std::fs::read_dir(root.join(rel)).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            let inner = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if entry.path().is_dir() {
                files_under(root, &inner, out);
            } else {
                out.push((inner, std::fs::read(entry.path()).unwrap()));
            }
        }
    }

    #[test]
    fn a_zip_gives_the_traces_of_its_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let sub = tmp.path().join("acme");
        for run in ["output0", "output1"] {
            let tel = sub.join(run).join(TELEMETRY_FOLDER);
            write(&tel.join("vae.0.jsonl"), &copy_file(0, Some(0)));
            write(&tel.join("vae.1.jsonl"), &copy_file(1, Some(0)));
            std::fs::write(tel.join("vae.0.2.jsonl.part"), "{").unwrap();
        }
        std::fs::write(sub.join("output0/fast_0.json"), "[]").unwrap();
        let mut files = ZipFiles::new();
        files_under(&sub, "", &mut files);
        let zip = tmp.path().join("acme.zip");
        std::fs::write(&zip, "read by the caller").unwrap();
        let from_folder = load(std::slice::from_ref(&sub)).unwrap();
        let read_zip = |p: &Path| {
            assert_eq!(p, zip.as_path());
            Ok(files.clone())
        };
        let from_zip = load_with(std::slice::from_ref(&zip), &read_zip).unwrap();
        let names: Vec<&str> = from_zip.traces.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["output0-vae", "output1-vae"]);
        assert_eq!(from_zip.traces, from_folder.traces);
        assert_eq!(
            from_zip.traces[0].lines.len(),
            4,
            "two copies, two devices each"
        );
        // The unfinished files are said, named inside the zip.
        let zip_at = format!("{}/output0/telemetry/vae.0.2.jsonl.part: ", zip.display());
        assert!(
            from_zip.skipped[0].starts_with(&zip_at),
            "{:?}",
            from_zip.skipped
        );
        assert_eq!(from_zip.skipped.len(), 2);
        // A zip without telemetry, and one its reader refuses.
        let none = |_: &Path| Ok(vec![("output0/fast_0.json".to_owned(), b"[]".to_vec())]);
        let err = load_with(std::slice::from_ref(&zip), &none).unwrap_err();
        assert!(matches!(err, TraceError::NoTelemetry(_)), "{err}");
        let refused = |p: &Path| {
            Err(TraceError::Zip {
                path: p.to_owned(),
                message: "acme.zip: not a zip".into(),
            })
        };
        let err = load_with(std::slice::from_ref(&zip), &refused).unwrap_err();
        assert_eq!(err.to_string(), "acme.zip: not a zip");
    }

    #[test]
    fn load_refuses_files_folders_without_telemetry_and_bad_files() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("sub.zip");
        std::fs::write(&file, "zip").unwrap();
        let err = load(std::slice::from_ref(&file)).unwrap_err().to_string();
        assert!(
            err.ends_with(
                "sub.zip: not a folder (power traces are read from a run or submission folder, or its zip)"
            ),
            "{err}"
        );
        let err = load(&[tmp.path().to_owned()]).unwrap_err().to_string();
        assert!(err.contains("no telemetry files"), "{err}");
        let tel = tmp.path().join("output0").join(TELEMETRY_FOLDER);
        std::fs::create_dir_all(&tel).unwrap();
        std::fs::write(tel.join("vae.0.jsonl"), "{\"type\":\"sample\"}\n").unwrap();
        let err = load(&[tmp.path().to_owned()]).unwrap_err().to_string();
        assert!(
            err.ends_with("vae.0.jsonl: the first line is not a telemetry header"),
            "{err}"
        );
    }
}
