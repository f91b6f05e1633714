//! `mlbench run --profile`: a [`Profiler`] around the copy's timed observations (the
//! [`TimedWindow`] the loop marks), its trace written beside the run's reports and its
//! summary ([`mlbench_schema::profile`]) put into the copy's entry as `profile`.

use crate::bench::{Profiler, TimedWindow};
use mlbench_schema::ReportEntry;
use mlbench_schema::profile::{ProfileSummary, summarize, trace_path};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A window that also runs a profiler: started just before the loop's first counted
/// observation, stopped just after its last.
pub struct ProfiledWindow<'a> {
    inner: &'a mut dyn TimedWindow,
    profiler: Box<dyn Profiler>,
    trace: PathBuf,
    started: Option<Instant>,
    /// The window's seconds once the trace is written, or why there is none.
    outcome: Option<Result<f64, String>>,
}

impl<'a> ProfiledWindow<'a> {
    /// `profiler` around `inner`, its trace to be written to `trace`.
    pub fn new(
        inner: &'a mut dyn TimedWindow,
        profiler: Box<dyn Profiler>,
        trace: PathBuf,
    ) -> Self {
        ProfiledWindow {
            inner,
            profiler,
            trace,
            started: None,
            outcome: None,
        }
    }

    /// The profiled seconds, or why there is no trace (`None`: the window never opened,
    /// as in a loop that failed first).
    pub fn outcome(self) -> Option<Result<f64, String>> {
        self.outcome
    }
}

impl TimedWindow for ProfiledWindow<'_> {
    fn start(&mut self) {
        self.inner.start();
        match self.profiler.start() {
            Ok(()) => self.started = Some(Instant::now()),
            Err(e) => self.outcome = Some(Err(format!("the profiler did not start: {e}"))),
        }
    }

    fn end(&mut self) {
        if let Some(started) = self.started.take() {
            let window = started.elapsed().as_secs_f64();
            if let Some(dir) = self.trace.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let written = self.profiler.stop(&self.trace).map(|()| window);
            self.outcome = Some(
                written.map_err(|e| format!("the profiler's trace {}: {e}", self.trace.display())),
            );
        }
        self.inner.end();
    }
}

/// Where copy `vcd` of `bench` writes its trace: the `profiles` folder beside `report`.
pub fn trace_file(report: &Path, bench: &str, vcd: &str) -> PathBuf {
    let run = report.parent().unwrap_or(Path::new("."));
    run.join(trace_path(bench, vcd))
}

/// Puts the summary of the trace at `trace` over `window_s` seconds into `entry` as its
/// `profile` field; an error naming the trace when it does not read (`entry` unchanged).
pub fn add_profile(
    entry: &mut ReportEntry,
    trace: &Path,
    bench: &str,
    vcd: &str,
    window_s: f64,
) -> Result<(), String> {
    let bytes = std::fs::read(trace).map_err(|e| format!("{}: {e}", trace.display()))?;
    let summary: ProfileSummary = summarize(&bytes, window_s, &trace_path(bench, vcd))
        .map_err(|e| format!("{}: {e}", trace.display()))?;
    entry.fields.insert("profile", summary.to_value());
    Ok(())
}
