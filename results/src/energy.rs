//! The energy section of `mlbench report` (`docs/report-json.md`, "energy"): per bench,
//! joules per item and items per joule with bootstrap intervals, mean and p95 power and
//! utilisation, from the telemetry files `mlbench run` writes beside its reports
//! (`docs/telemetry.md`); and each copy's figures they were computed from.
//!
//! Energies are joules, powers watts, utilisation a fraction (never percent). A figure
//! that cannot be computed is `null`, never a made-up zero.

pub use crate::interval::MeanCi;
use serde::Serialize;

/// Everything `report` found about energy; present only where some run has telemetry.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Energy {
    /// Per bench, sorted by name.
    pub benches: Vec<BenchEnergy>,
    /// Every copy's timed window matched to its report entry, by run, bench, copy.
    pub copies: Vec<CopyEnergy>,
    /// Bootstrap resamples of the intervals.
    pub resamples: usize,
    /// Their seed.
    pub seed: u64,
    /// Their confidence level.
    pub level: f64,
    /// What could not be read or matched, one line each.
    pub notes: Vec<String>,
}

/// How an energy was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Every device by its energy counter (preferred).
    Counter,
    /// Every device by the trapezoid of its power readings (no counter).
    Power,
    /// Some devices by counter, others by power.
    Mixed,
}

impl Method {
    /// The word in the JSON and the tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Counter => "counter",
            Method::Power => "power",
            Method::Mixed => "mixed",
        }
    }

    /// The method of two parts together.
    pub fn and(self, other: Method) -> Method {
        if self == other { self } else { Method::Mixed }
    }
}

/// Something a reader must know about an energy figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EnergyFlag {
    /// The energy is the whole board's or package's: every process on it counts.
    WholeBoard,
    /// MIG mode was on: the whole GPU's energy, whatever slice the copy had.
    Mig,
    /// Other processes were on the device when sampling began.
    OtherProcesses,
    /// Fewer than 60 samples in the window (MLPerf's minimum): a rough figure.
    TooFewSamples,
    /// Two samples further apart than two sampling periods.
    Gap,
    /// Counter and power disagree by more than 5 %.
    Disagreement,
    /// A counter wrapped (handled).
    CounterWrapped,
    /// A counter was reset; its interval's energy came from power, or was dropped.
    CounterReset,
    /// A device's readings do not cover the window: its energy is left out.
    NotCovered,
    /// A device has no idle baseline: no net energy.
    NoIdleBaseline,
    /// A device was sampled by several copies of the run (a CPU package): its energy is
    /// shared equally between them.
    SharedDevice,
    /// The window is shorter than the observations the entry timed: the file and the
    /// entry may not belong together.
    WindowShorterThanTimed,
}

impl EnergyFlag {
    /// The word in the JSON and the tables.
    pub fn as_str(self) -> &'static str {
        match self {
            EnergyFlag::WholeBoard => "whole_board",
            EnergyFlag::Mig => "mig",
            EnergyFlag::OtherProcesses => "other_processes",
            EnergyFlag::TooFewSamples => "too_few_samples",
            EnergyFlag::Gap => "gap",
            EnergyFlag::Disagreement => "disagreement",
            EnergyFlag::CounterWrapped => "counter_wrapped",
            EnergyFlag::CounterReset => "counter_reset",
            EnergyFlag::NotCovered => "not_covered",
            EnergyFlag::NoIdleBaseline => "no_idle_baseline",
            EnergyFlag::SharedDevice => "shared_device",
            EnergyFlag::WindowShorterThanTimed => "window_shorter_than_timed",
        }
    }
}

/// One bench over every run and copy with energy.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BenchEnergy {
    /// The bench.
    pub bench: String,
    /// Copies (run × copy) with an energy.
    pub n: usize,
    /// Runs among them.
    pub runs: usize,
    /// How the energies were measured (over every copy).
    pub method: Method,
    /// Mean joules per item over the copies, with its interval.
    pub joules_per_item: Option<MeanCi>,
    /// The same net of the idle baseline (`null` unless every copy has one).
    pub net_joules_per_item: Option<MeanCi>,
    /// Mean items per joule over the copies, with its interval (the mean of the copies'
    /// ratios, so not exactly the reciprocal of `joules_per_item`'s mean).
    pub items_per_joule: Option<MeanCi>,
    /// Mean power over the copies' windows, W (energy ÷ duration).
    pub mean_power_w: Option<f64>,
    /// The 95th percentile of the copies' power over their windows, W.
    pub p95_power_w: Option<f64>,
    /// Mean utilisation of the copies' compute devices, a fraction.
    pub utilisation: Option<f64>,
    /// Each flag with the copies that carry it.
    pub flags: Vec<FlagCount>,
}

/// A flag and how many copies carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FlagCount {
    /// The flag.
    pub flag: EnergyFlag,
    /// Copies carrying it.
    pub copies: usize,
}

/// One copy's timed window, matched to its report entry.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CopyEnergy {
    /// The run (as the report names it: `output0`).
    pub run: String,
    /// The bench.
    pub bench: String,
    /// The copy (the report file's `_<copy>`).
    pub copy: u32,
    /// The report file, as the report names files.
    pub report: String,
    /// The entry's index in it.
    pub entry: usize,
    /// The telemetry file, the same way.
    pub telemetry: String,
    /// The window's duration, s.
    pub seconds: f64,
    /// Items processed in the window: the entry's counted observations × items each.
    pub items: f64,
    /// Samples in the window (of the device sampled most).
    pub samples: usize,
    /// How its energy was measured (`null`: no device has energy).
    pub method: Option<Method>,
    /// Energy of its devices over the window, J.
    pub joules: Option<f64>,
    /// The same less the idle baseline (`null` unless every device has one).
    pub net_joules: Option<f64>,
    /// `joules ÷ items`.
    pub joules_per_item: Option<f64>,
    /// `net_joules ÷ items`.
    pub net_joules_per_item: Option<f64>,
    /// `items ÷ joules`.
    pub items_per_joule: Option<f64>,
    /// `joules ÷ seconds`, W.
    pub mean_power_w: Option<f64>,
    /// The 95th percentile of its devices' summed power in the window, W.
    pub p95_power_w: Option<f64>,
    /// Mean utilisation of its compute devices in the window, a fraction.
    pub utilisation: Option<f64>,
    /// Each device with energy.
    pub devices: Vec<DeviceShare>,
    /// The flags of its devices and of the match.
    pub flags: Vec<EnergyFlag>,
    /// Its devices' summed power over the window, for charts: (seconds since the
    /// window's start, W). Not in the JSON.
    #[serde(skip)]
    pub trace: Vec<(f64, f64)>,
}

/// One device's part of a copy's energy.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DeviceShare {
    /// The device's id (`cuda:0`, `cpu:package-0`).
    pub device: String,
    /// How it was measured.
    pub method: Method,
    /// Its energy over the window, J (its share, where copies shared it).
    pub joules: f64,
    /// The same less its idle power over the window.
    pub net_joules: Option<f64>,
    /// Copies of the run and bench that sampled it (its energy is divided by this).
    pub shared_by: usize,
    /// `|power − counter| ÷ counter`, where it has both.
    pub disagreement: Option<f64>,
    /// Its power at each time of its copy's `trace`, W (its share). Not in the JSON.
    #[serde(skip)]
    pub watts: Vec<f64>,
    /// Where its readings came from (`None`: not known). Not in the JSON.
    #[serde(skip)]
    pub source: Option<mlbench_schema::telemetry::SourceKind>,
}
