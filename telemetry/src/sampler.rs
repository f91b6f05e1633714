//! The sampler: a thread that reads every source at a fixed rate on the monotonic clock
//! and writes a telemetry file, with the timed windows marked on the same clock.
//!
//! Marks and readings take their times under one lock, so the file's lines are in time
//! order: a mark taken before a reading is written before it. The file is written to
//! `<path>.part` and moved to `<path>` when the sampler finishes, so nothing under the
//! final name is ever half written, and an existing file is never replaced. Before the
//! move, the `.part` is read back once (the sampler keeps no samples in memory), and its
//! summary lines (each window's gross energy per device) are appended to it.

use crate::counter;
use crate::error::TelemetryError;
use crate::source::{Reading, Source};
use crate::summary::{Summary, summary_lines};
use mlbench_schema::telemetry::{
    Edge, Flag, Header, Mark, Sample, TELEMETRY_SCHEMA_VERSION, TelemetryWriter,
};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, ErrorKind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How a sampler samples and what its file says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplerConfig {
    /// Readings per second of every source (1 by default; at most 1000).
    pub hz: f64,
    /// The tool named in the header.
    pub tool: String,
    /// The bench sampled, when the file is one bench's.
    pub bench: Option<String>,
    /// The copy whose file this is (and whose windows are marked).
    pub copy: u32,
    /// Facts for the header: sources that could not be opened ([`crate::Detected`]).
    pub facts: Vec<String>,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        Self {
            hz: 1.0,
            tool: format!("mlbench {}", env!("CARGO_PKG_VERSION")),
            bench: None,
            copy: 0,
            facts: Vec::new(),
        }
    }
}

/// What the caller's thread and the sampler's share.
#[derive(Debug, Default)]
struct State {
    marks: Vec<Mark>,
    stop: bool,
}

#[derive(Debug, Default)]
struct Control {
    state: Mutex<State>,
    wake: Condvar,
}

impl Control {
    /// The state; a panic elsewhere while it was held leaves it usable (marks and a flag).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Nanoseconds from `origin` to now.
fn since(origin: Instant) -> u64 {
    u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// A running sampler. [`Sampler::finish`] stops it and gives the summary; dropping it
/// stops it too, and still moves the file into place (errors then go unreported).
#[derive(Debug)]
pub struct Sampler {
    control: Arc<Control>,
    origin: Instant,
    copy: u32,
    path: PathBuf,
    part: PathBuf,
    header: Header,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl Sampler {
    /// Starts sampling `sources` into `path` (through `<path>.part`), the first reading
    /// now, on the caller's thread. The file's origin, time 0 of its samples and marks, is
    /// this call.
    ///
    /// # Errors
    /// [`TelemetryError::Rate`] for a rate out of range, [`TelemetryError::Exists`] when
    /// `path` or its `.part` is there, [`TelemetryError::Io`] when the file cannot be
    /// created or its header written, [`TelemetryError::Thread`].
    pub fn start(
        path: &Path,
        sources: Vec<Box<dyn Source>>,
        config: SamplerConfig,
    ) -> Result<Self, TelemetryError> {
        if !(config.hz > 0.0 && config.hz <= 1000.0) {
            return Err(TelemetryError::Rate(config.hz));
        }
        if fs::symlink_metadata(path).is_ok() {
            return Err(TelemetryError::Exists(path.to_owned()));
        }
        let mut part = path.as_os_str().to_owned();
        part.push(".part");
        let part = PathBuf::from(part);
        let file = create_new(&part)?;
        let period = Duration::from_secs_f64(1.0 / config.hz);
        let origin = Instant::now();
        let header = Header {
            schema_version: TELEMETRY_SCHEMA_VERSION,
            tool: config.tool,
            bench: config.bench,
            copy: Some(config.copy),
            sample_period_ns: u64::try_from(period.as_nanos()).unwrap_or(u64::MAX),
            origin_unix_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .ok()
                .and_then(|d| u64::try_from(d.as_millis()).ok()),
            devices: sources.iter().map(|s| s.probe().clone()).collect(),
            facts: config.facts,
        };
        let mut writer = TelemetryWriter::new(BufWriter::new(file));
        let io_err = |source| TelemetryError::Io {
            path: part.clone(),
            source,
        };
        // A sampler that does not start leaves no `.part` behind.
        let discard = |e| {
            let _ = fs::remove_file(&part);
            e
        };
        writer
            .header(&header)
            .and_then(|()| writer.flush())
            .map_err(io_err)
            .map_err(discard)?;
        let control = Arc::new(Control::default());
        let mut worker = Worker::new(sources, writer, Arc::clone(&control), origin, period);
        // The first reading before the caller can mark anything: a window that starts at
        // once is covered from its start.
        worker.read_all().map_err(io_err).map_err(discard)?;
        let thread = std::thread::Builder::new()
            .name("mlbench-telemetry".into())
            .spawn(move || worker.run())
            .map_err(TelemetryError::Thread)
            .map_err(discard)?;
        Ok(Self {
            control,
            origin,
            copy: config.copy,
            path: path.to_owned(),
            part,
            header,
            thread: Some(thread),
        })
    }

    /// The file's header, as written (its devices and facts).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The file's origin: time 0 of its samples and marks.
    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// Marks the start of the timed window `window` now; returns its time (ns since the
    /// origin).
    pub fn mark_start(&self, window: &str) -> u64 {
        self.mark(Edge::Start, window)
    }

    /// Marks the end of the timed window `window` now; returns its time.
    pub fn mark_end(&self, window: &str) -> u64 {
        self.mark(Edge::End, window)
    }

    fn mark(&self, edge: Edge, window: &str) -> u64 {
        let mut state = self.control.lock();
        // Taken under the lock the readings' times are taken under: file order is time order.
        let t_ns = since(self.origin);
        state.marks.push(Mark {
            t_ns,
            edge,
            window: window.to_owned(),
            copy: self.copy,
        });
        t_ns
    }

    /// Stops sampling (after one last reading, so the last window is covered), reads the
    /// `.part` back once and appends its summary lines, moves the file into place, and
    /// gives that summary (gross and net of the file's own idle windows; the file is not
    /// read again).
    ///
    /// # Errors
    /// [`TelemetryError::Io`] for a failed write or move, [`TelemetryError::Exists`] when
    /// a file took the name meanwhile (the `.part` is left), [`TelemetryError::Panicked`],
    /// [`TelemetryError::Read`] when the `.part` does not read back (it is left).
    pub fn finish(mut self) -> Result<Summary, TelemetryError> {
        Ok(self.stop()?.unwrap_or_default())
    }

    /// [`Sampler::finish`], giving the file's final path instead of its summary.
    ///
    /// # Errors
    /// As [`Sampler::finish`].
    pub fn close(mut self) -> Result<PathBuf, TelemetryError> {
        self.stop()?;
        Ok(std::mem::take(&mut self.path))
    }

    /// The final path of the file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops the thread, summarises and publishes the file: its summary, `None` when
    /// stopped before.
    fn stop(&mut self) -> Result<Option<Summary>, TelemetryError> {
        let Some(thread) = self.thread.take() else {
            return Ok(None);
        };
        self.control.lock().stop = true;
        self.control.wake.notify_all();
        match thread.join() {
            Err(_) => return Err(TelemetryError::Panicked(self.part.clone())),
            Ok(Err(source)) => {
                return Err(TelemetryError::Io {
                    path: self.part.clone(),
                    source,
                });
            }
            Ok(Ok(())) => {}
        }
        let summary = append_summary(&self.part)?;
        publish(&self.part, &self.path)?;
        Ok(Some(summary))
    }
}

/// Reads the finished `part` back (once), summarises it, and appends its summary lines.
fn append_summary(part: &Path) -> Result<Summary, TelemetryError> {
    // Read back in one pass: a long run's file is never held whole.
    let summary = crate::fold::reduce_file(part)?.summary_with_idle(&[]);
    let io_err = |source| TelemetryError::Io {
        path: part.to_owned(),
        source,
    };
    let file = OpenOptions::new().append(true).open(part).map_err(io_err)?;
    let mut writer = TelemetryWriter::new(BufWriter::new(file));
    for line in summary_lines(&summary) {
        writer.summary(&line).map_err(io_err)?;
    }
    writer.into_inner().map_err(io_err)?;
    Ok(summary)
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // Nowhere to report to: a failure leaves the `.part` file, which says enough.
        let _ = self.stop();
    }
}

/// Creates `part`, refusing one that is there (another sampler's, or a crashed run's).
fn create_new(part: &Path) -> Result<File, TelemetryError> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(part)
        .map_err(|source| match source.kind() {
            ErrorKind::AlreadyExists => TelemetryError::Exists(part.to_owned()),
            _ => TelemetryError::Io {
                path: part.to_owned(),
                source,
            },
        })
}

/// Moves `part` to `path` without ever replacing a file there: a hard link fails on an
/// existing name, where a rename would replace it.
fn publish(part: &Path, path: &Path) -> Result<(), TelemetryError> {
    let io_err = |path: &Path| {
        let path = path.to_owned();
        move |source| TelemetryError::Io { path, source }
    };
    match fs::hard_link(part, path) {
        Ok(()) => fs::remove_file(part).map_err(io_err(part)),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            Err(TelemetryError::Exists(path.to_owned()))
        }
        // A file system without hard links: check, then rename (a narrow race, said here).
        Err(_) => {
            if fs::symlink_metadata(path).is_ok() {
                return Err(TelemetryError::Exists(path.to_owned()));
            }
            fs::rename(part, path).map_err(io_err(path))
        }
    }
}

/// What the previous sample of a device was, for its flags.
#[derive(Debug, Clone, Copy, Default)]
struct Previous {
    t_ns: Option<u64>,
    raw: Option<u64>,
}

/// The sampler's thread.
struct Worker {
    sources: Vec<Box<dyn Source>>,
    writer: TelemetryWriter<BufWriter<File>>,
    control: Arc<Control>,
    origin: Instant,
    period: Duration,
    previous: Vec<Previous>,
}

impl Worker {
    fn new(
        sources: Vec<Box<dyn Source>>,
        writer: TelemetryWriter<BufWriter<File>>,
        control: Arc<Control>,
        origin: Instant,
        period: Duration,
    ) -> Self {
        let previous = vec![Previous::default(); sources.len()];
        Self {
            sources,
            writer,
            control,
            origin,
            period,
            previous,
        }
    }

    fn run(mut self) -> io::Result<()> {
        while self.wait() {
            self.read_all()?;
        }
        // One last reading after the stop, so the last window's end is covered.
        self.read_all()?;
        let marks = std::mem::take(&mut self.control.lock().marks);
        for mark in &marks {
            self.writer.mark(mark)?;
        }
        self.writer.into_inner()?;
        Ok(())
    }

    /// Waits for the next tick of the period's grid (ticks missed while reading are
    /// skipped, not caught up in a burst); `false` when asked to stop.
    fn wait(&self) -> bool {
        let period = self.period.as_nanos().max(1);
        let next = (self.origin.elapsed().as_nanos() / period + 1) * period;
        let deadline = self.origin + Duration::from_nanos(u64::try_from(next).unwrap_or(u64::MAX));
        let mut state = self.control.lock();
        loop {
            if state.stop {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return true;
            }
            state = self
                .control
                .wake
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// One reading of every source, each preceded by the marks taken before it.
    fn read_all(&mut self) -> io::Result<()> {
        for i in 0..self.sources.len() {
            let (t_ns, marks) = {
                let mut state = self.control.lock();
                (since(self.origin), std::mem::take(&mut state.marks))
            };
            for mark in &marks {
                self.writer.mark(mark)?;
            }
            let reading = self.sources[i].read();
            let sample = self.sample(i, t_ns, reading);
            self.writer.sample(&sample)?;
        }
        // Flushed every tick: a crash loses at most one period.
        self.writer.flush()
    }

    /// The sample of source `i`'s `reading` at `t_ns`, with its flags.
    fn sample(&mut self, i: usize, t_ns: u64, reading: Reading) -> Sample {
        let mut values = reading.values;
        let mut flags = Vec::new();
        let prev = self.previous[i];
        let period = u64::try_from(self.period.as_nanos()).unwrap_or(u64::MAX);
        if prev
            .t_ns
            .is_some_and(|p| t_ns - p > period.saturating_mul(2))
        {
            flags.push(Flag::Late);
        }
        if let (Some(raw), Some(info)) = (values.energy_raw, self.sources[i].probe().counter) {
            values.energy_uj = Some(counter::to_uj(raw, &info));
            let step = prev.raw.map(|p| counter::step(p, raw, info.wrap_raw));
            flags.extend(step.and_then(counter::flag));
        }
        if !reading.failed.is_empty() {
            flags.push(Flag::ReadFailed);
        }
        self.previous[i] = Previous {
            t_ns: Some(t_ns),
            raw: values.energy_raw.or(prev.raw),
        };
        Sample {
            t_ns,
            device: u32::try_from(i).unwrap_or(u32::MAX),
            values,
            flags,
            failed: reading.failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlbench_schema::telemetry::{Counter, Device};

    /// A source that is never read here: `Worker::sample` is given the readings.
    #[derive(Debug)]
    struct Wrapping(Device);

    impl Source for Wrapping {
        fn probe(&self) -> &Device {
            &self.0
        }
        fn read(&mut self) -> Reading {
            Reading::default()
        }
    }

    fn worker(dir: &Path) -> Worker {
        let device = Device {
            counter: Some(Counter {
                resolution_uj: 2.5,
                wrap_raw: Some(1000),
            }),
            ..Device::default()
        };
        let file = File::create(dir.join("w.jsonl")).unwrap();
        Worker::new(
            vec![Box::new(Wrapping(device))],
            TelemetryWriter::new(BufWriter::new(file)),
            Arc::default(),
            Instant::now(),
            Duration::from_secs(1),
        )
    }

    fn reading(raw: Option<u64>, failed: &[&str]) -> Reading {
        let mut r = Reading::default();
        r.values.energy_raw = raw;
        r.failed = failed.iter().map(|f| (*f).to_owned()).collect();
        r
    }

    #[test]
    fn samples_are_flagged_late_wrapped_and_failed_by_hand() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = worker(dir.path());
        const S: u64 = 1_000_000_000;
        let a = w.sample(0, 0, reading(Some(900), &[]));
        assert_eq!((a.flags, a.values.energy_uj), (vec![], Some(2250)));
        // Exactly two periods later: on time. 900 → 950 forward.
        let b = w.sample(0, 2 * S, reading(Some(950), &[]));
        assert_eq!(b.flags, vec![]);
        // 2.1 s later: late; 950 → 30 with a range of 1000: a wrap.
        let c = w.sample(0, 4 * S + S / 10, reading(Some(30), &[]));
        assert_eq!(c.flags, vec![Flag::Late, Flag::CounterWrapped]);
        assert_eq!(c.values.energy_uj, Some(75));
        // A failed counter read: flagged, and the next step counted from 30.
        let d = w.sample(0, 5 * S, reading(None, &["energy_raw: lost"]));
        assert_eq!(d.flags, vec![Flag::ReadFailed]);
        assert_eq!(d.failed, vec!["energy_raw: lost"]);
        let e = w.sample(0, 6 * S, reading(Some(20), &[]));
        assert_eq!(e.flags, vec![Flag::CounterWrapped]);
    }
}
