//! A bench's power over time: the plain data of a power chart (`mlbench plot power`,
//! the report page's power section) and of the lines a GPU check copies into
//! docs/runner.md. The analyzer makes them from a submission's telemetry files
//! (`mlbench_analyzer::energy::traces`); `mlbench_export` draws them.
//!
//! One [`Trace`] per bench and run folder: a line per device of each copy's file, the
//! copies' files put on one time axis by their wall-clock origins (for drawing only:
//! every energy is computed on each file's own clock).

use mlbench_schema::telemetry::SourceKind;

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
