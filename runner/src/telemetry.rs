//! Telemetry beside every copy (docs/runner.md "Telemetry"): a sampler thread in
//! the copy's own process reads its devices' energy, power, utilisation, memory,
//! temperature and clocks on the monotonic clock, the loop marks its timed part on the
//! same clock ([`crate::timing::measure_within`]), and the file goes beside the run's
//! reports (`output<r>/telemetry/<bench>.<copy>.jsonl`, [`mlbench_telemetry`]). Before a
//! run's first job the parent samples its idle devices (`idle.<device>.jsonl`, window
//! `idle`), the baseline of every copy's net energy. After each copy the parent reads its
//! file and makes a line of its energy; the samplers' facts (a source that could not be
//! opened, and why) are said once.

use crate::bench::DeviceSpec;
use crate::plan::{Execution, Plan};
use crate::timing::TimedWindow;
use mlbench_schema::telemetry::{self as format, IDLE_WINDOW, TELEMETRY_FOLDER, nth_file_name};
use mlbench_telemetry::integrate::mean_power_w;
use mlbench_telemetry::summary::MIN_SAMPLES;
use mlbench_telemetry::{
    DetectOptions, Sampler, SamplerConfig, SummaryFlag, WindowSummary, detect, summarize_with_idle,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The window of a bench's timed observations.
pub const TRAIN_WINDOW: &str = "train";

/// The bench name of the idle baseline's files (`idle.<device>.jsonl`).
pub const IDLE_FILE: &str = "idle";

/// The idle baseline `mlbench run` takes by default (none with `--smoke`).
pub const DEFAULT_IDLE: Duration = Duration::from_secs(30);

/// Names tried for one bench and copy before giving up (never replacing a file).
const MAX_NUMBERED: u32 = 10_000;

/// How a run samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TelemetryOptions {
    /// Readings per second of every source; 0: no telemetry (the default here, so a
    /// library caller opts in; the CLI's default is 1).
    pub hz: u32,
    /// Idle sampling before each run's first job; zero: none.
    pub idle: Duration,
}

impl TelemetryOptions {
    /// `mlbench run`'s: `hz`, and `idle` when given, else [`DEFAULT_IDLE`], or none for a
    /// smoke run (minutes long, a set-up check).
    pub fn new(hz: u32, idle: Option<Duration>, smoke: bool) -> Self {
        let default = if smoke { Duration::ZERO } else { DEFAULT_IDLE };
        Self {
            hz,
            idle: idle.unwrap_or(default),
        }
    }
}

/// Why a sampler could not start or finish, in words (the copy goes on without it).
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The sampler's devices for one of ours.
fn spec(device: DeviceSpec) -> mlbench_telemetry::DeviceSpec {
    match device {
        DeviceSpec::Cuda(i) => mlbench_telemetry::DeviceSpec::Cuda(i),
        DeviceSpec::Cpu { .. } => mlbench_telemetry::DeviceSpec::Cpu,
    }
}

/// The first name of `bench` and `copy` in `dir` that neither a file nor a sampler's
/// `.part` holds.
fn free_name(dir: &Path, bench: &str, copy: u32) -> Result<PathBuf, String> {
    (1..=MAX_NUMBERED)
        .map(|n| dir.join(nth_file_name(bench, copy, n)))
        .find(|path| {
            let mut part = path.as_os_str().to_owned();
            part.push(".part");
            std::fs::symlink_metadata(path).is_err()
                && std::fs::symlink_metadata(PathBuf::from(part)).is_err()
        })
        .ok_or_else(|| {
            format!(
                "{}: {MAX_NUMBERED} telemetry files of {bench}.{copy} already there",
                dir.display()
            )
        })
}

/// Starts a sampler of `devices` (and the CPU's sources) at `hz` into the first free
/// file of `bench` and `copy` under `out_dir/telemetry`, reading the resident memory of
/// this process.
fn start(
    out_dir: &Path,
    bench: &str,
    copy: u32,
    devices: &[DeviceSpec],
    hz: u32,
) -> Result<Sampler, String> {
    let dir = out_dir.join(TELEMETRY_FOLDER);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = free_name(&dir, bench, copy)?;
    let specs: Vec<_> = devices.iter().map(|&d| spec(d)).collect();
    let found = detect(&specs, &DetectOptions::for_process(std::process::id()));
    let config = SamplerConfig {
        hz: f64::from(hz),
        bench: (bench != IDLE_FILE).then(|| bench.to_owned()),
        copy,
        facts: found.facts,
        ..SamplerConfig::default()
    };
    Sampler::start(&path, found.sources, config).map_err(|e| chain(&e))
}

/// The devices a copy's sampler reads: its own, or a whole-machine copy's every device.
fn copy_devices(plan: &Plan, execution: &Execution, index: usize) -> Vec<DeviceSpec> {
    if execution.whole_machine {
        return (0..plan.devices.count())
            .map(|i| plan.devices.student(i))
            .collect();
    }
    execution
        .copies
        .get(index)
        .map(|c| vec![c.device])
        .unwrap_or_default()
}

/// One copy's sampler, and whether its window is open.
#[derive(Debug)]
pub struct CopySampler {
    sampler: Sampler,
    open: bool,
}

impl CopySampler {
    /// Starts the sampler of copy `index` of `execution` (nothing at 0 Hz).
    ///
    /// # Errors
    /// Why it could not start, in words: the copy runs on without telemetry.
    pub fn start(
        plan: &Plan,
        execution: &Execution,
        index: usize,
        hz: u32,
    ) -> Result<Option<CopySampler>, String> {
        if hz == 0 {
            return Ok(None);
        }
        let devices = copy_devices(plan, execution, index);
        let copy = u32::try_from(index).unwrap_or(u32::MAX);
        let sampler = start(&plan.out_dir, &execution.name, copy, &devices, hz)?;
        Ok(Some(CopySampler {
            sampler,
            open: false,
        }))
    }

    /// Starts the sampler of a data-parallel world of `ranks` ranks on this host (rank r on
    /// the plan's device r: `scaling`), into the next file of `bench` and `copy`: a sweep
    /// writes one file per world size, in the order of its entries (nothing at 0 Hz).
    ///
    /// # Errors
    /// Why it could not start, in words: the world runs on without telemetry.
    pub fn for_world(
        plan: &Plan,
        bench: &str,
        copy: u32,
        ranks: usize,
        hz: u32,
    ) -> Result<Option<CopySampler>, String> {
        if hz == 0 {
            return Ok(None);
        }
        let devices: Vec<_> = (0..ranks)
            .map(|r| plan.devices.student(u32::try_from(r).unwrap_or(u32::MAX)))
            .collect();
        let sampler = start(&plan.out_dir, bench, copy, &devices, hz)?;
        Ok(Some(CopySampler {
            sampler,
            open: false,
        }))
    }

    /// Closes the window if the loop left it open (it stopped early), stops the sampler
    /// and moves its file into place: the file.
    ///
    /// # Errors
    /// Why the file could not be finished, in words (a `.part` file may be left).
    pub fn finish(mut self) -> Result<PathBuf, String> {
        self.end();
        self.sampler.close().map_err(|e| chain(&e))
    }
}

/// Runs `f` with its timed part marked on the sampler `started` gave, then finishes the
/// sampler: `f`'s value, and the file or why there is none (`None`: nothing sampled).
pub fn run_sampled<T>(
    started: Result<Option<CopySampler>, String>,
    f: impl FnOnce(&mut dyn TimedWindow) -> T,
) -> (T, Option<Result<PathBuf, String>>) {
    match started {
        Ok(Some(mut sampler)) => {
            let value = f(&mut sampler);
            (value, Some(sampler.finish()))
        }
        Ok(None) => (f(&mut ()), None),
        Err(e) => (f(&mut ()), Some(Err(e))),
    }
}

impl TimedWindow for CopySampler {
    fn start(&mut self) {
        self.sampler.mark_start(TRAIN_WINDOW);
        self.open = true;
    }

    fn end(&mut self) {
        if std::mem::take(&mut self.open) {
            self.sampler.mark_end(TRAIN_WINDOW);
        }
    }
}

/// What the run says about telemetry: a line of energy (a copy's, the idle baseline's),
/// and the samplers' facts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TelemetryNote {
    /// One line, when there is something to say.
    pub line: Option<String>,
    /// The facts of the files' headers and devices (`RAPL: not available: …`).
    pub facts: Vec<String>,
}

/// The facts of a file's header: its own, then each device's, named.
fn facts_of(header: &format::Header) -> Vec<String> {
    let mut facts = header.facts.clone();
    for d in &header.devices {
        facts.extend(d.facts.iter().map(|f| format!("{}: {f}", d.id)));
    }
    facts
}

/// The energies of a window's devices that have one: `cpu:package-0 812.4 J (net 95.1 J)`.
fn energies(window: &WindowSummary) -> Vec<String> {
    window
        .devices
        .iter()
        .filter_map(|d| {
            let (gross, net) = match d.counter_j {
                Some(j) => (j, d.net_counter_j),
                None => (d.power_j?, d.net_power_j),
            };
            Some(match net {
                Some(net) => format!("{} {gross:.1} J (net {net:.1} J)", d.device),
                None => format!("{} {gross:.1} J", d.device),
            })
        })
        .collect()
}

/// The line of one copy's window: `energy: vae copy 0: 41.2 s timed, 42 samples:
/// cpu:package-0 812.4 J (net 95.1 J)`; `None` without energy.
fn energy_line(label: &str, window: &WindowSummary) -> Option<String> {
    let parts = energies(window);
    if parts.is_empty() {
        return None;
    }
    let seconds = (window.end_ns - window.start_ns) as f64 * 1e-9;
    let samples = window.devices.iter().map(|d| d.samples).max().unwrap_or(0);
    let few = window
        .devices
        .iter()
        .any(|d| d.flags.contains(&SummaryFlag::TooFewSamples));
    let mut line = format!(
        "energy: {label}: {seconds:.1} s timed, {samples} samples: {}",
        parts.join(", ")
    );
    if few {
        line.push_str(&format!(" (fewer than {MIN_SAMPLES} samples: rough)"));
    }
    Some(line)
}

/// The note of a copy's file: its energy over its timed window, net of `idle` (the
/// run's idle windows), and its facts.
///
/// # Errors
/// The file cannot be read, in words.
pub fn copy_note(
    path: &Path,
    label: &str,
    idle: &[WindowSummary],
) -> Result<TelemetryNote, String> {
    let file = format::read(path).map_err(|e| chain(&e))?;
    let summary = summarize_with_idle(&file, idle);
    let line = summary
        .windows
        .iter()
        .rfind(|w| w.name == TRAIN_WINDOW)
        .and_then(|w| energy_line(label, w));
    let mut facts = facts_of(&file.header);
    facts.extend(summary.facts);
    Ok(TelemetryNote { line, facts })
}

/// The idle baseline of a run: its windows (one per device), and what to say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IdleBaseline {
    /// The `idle` window of each device's file.
    pub windows: Vec<WindowSummary>,
    /// Its mean power per device, its facts, and any sampler that failed.
    pub note: TelemetryNote,
}

/// Samples `plan`'s idle devices for `options.idle` before its first job, one sampler a
/// device (`output<r>/telemetry/idle.<device>.jsonl`), each file one window `idle`
/// (nothing at 0 Hz or for a zero duration). This process's resident memory stands in
/// for a copy's there.
pub fn measure_idle(plan: &Plan, options: &TelemetryOptions) -> IdleBaseline {
    let mut out = IdleBaseline::default();
    if options.hz == 0 || options.idle.is_zero() {
        return out;
    }
    let mut samplers = Vec::new();
    for i in 0..plan.devices.count() {
        let device = [plan.devices.student(i)];
        match start(&plan.out_dir, IDLE_FILE, i, &device, options.hz) {
            Ok(s) => samplers.push(s),
            Err(e) => out.note.facts.push(format!("idle baseline: {e}")),
        }
    }
    for s in &samplers {
        s.mark_start(IDLE_WINDOW);
    }
    std::thread::sleep(options.idle);
    for s in &samplers {
        s.mark_end(IDLE_WINDOW);
    }
    for s in samplers {
        // The sampler reads its file back once to summarise it; that summary is the one.
        let facts = facts_of(s.header());
        match s.finish() {
            Ok(summary) => {
                out.note.facts.extend(facts);
                out.windows.extend(summary.windows);
            }
            Err(e) => out.note.facts.push(format!("idle baseline: {}", chain(&e))),
        }
    }
    out.note.line = idle_line(&run_label(plan), &out.windows, options.idle);
    out
}

/// The run folder's name (`output1`), for the lines of its idle baseline.
pub fn run_label(plan: &Plan) -> String {
    plan.out_dir.file_name().map_or_else(
        || plan.out_dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// `idle baseline of output0: 30 s: cpu:package-0 41.3 W`: each device's mean idle power,
/// by counter where it has one; `None` when no device has energy.
fn idle_line(run: &str, windows: &[WindowSummary], duration: Duration) -> Option<String> {
    let watts: Vec<String> = windows
        .iter()
        .flat_map(|w| {
            w.devices.iter().filter_map(move |d| {
                let joules = d.counter_j.or(d.power_j)?;
                let watts = mean_power_w(joules, w.end_ns - w.start_ns)?;
                Some(format!("{} {watts:.1} W", d.device))
            })
        })
        .collect();
    (!watts.is_empty()).then(|| {
        format!(
            "idle baseline of {run}: {} s: {}",
            duration.as_secs_f64(),
            watts.join(", ")
        )
    })
}

/// The lines a run prints of its notes: every energy line, each fact only the first
/// time (the samplers of every copy find the same sources missing).
#[derive(Debug, Default)]
pub struct SaidOnce {
    said: Mutex<BTreeSet<String>>,
}

impl SaidOnce {
    /// [`SaidOnce::lines`], each ending with a newline (empty when nothing is new).
    pub fn text(&self, note: &TelemetryNote) -> String {
        self.lines(note).iter().map(|l| format!("{l}\n")).collect()
    }

    /// The lines of `note` not said before: its line, then its new facts.
    pub fn lines(&self, note: &TelemetryNote) -> Vec<String> {
        let mut said = self
            .said
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let facts = note
            .facts
            .iter()
            .filter(|f| said.insert((*f).clone()))
            .map(|f| format!("telemetry: {f}"));
        note.line.clone().into_iter().chain(facts).collect()
    }
}

pub use mlbench_telemetry::duration::parse_duration;

#[cfg(test)]
mod tests {
    use super::*;
    use mlbench_telemetry::DeviceEnergy;

    #[test]
    fn a_smoke_run_takes_no_idle_baseline_unless_given() {
        let given = Some(Duration::from_secs(5));
        let idle = |given, smoke| TelemetryOptions::new(1, given, smoke).idle;
        assert_eq!(idle(None, false), DEFAULT_IDLE);
        assert_eq!(idle(None, true), Duration::ZERO);
        assert_eq!(idle(given, true), Duration::from_secs(5));
        assert_eq!(idle(given, false), Duration::from_secs(5));
    }

    #[test]
    fn names_are_numbered_past_files_and_partial_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(free_name(d, "vae", 1).unwrap(), d.join("vae.1.jsonl"));
        std::fs::write(d.join("vae.1.jsonl"), "").unwrap();
        assert_eq!(free_name(d, "vae", 1).unwrap(), d.join("vae.1.2.jsonl"));
        // A crashed copy's `.part` holds its name too.
        std::fs::write(d.join("vae.1.2.jsonl.part"), "").unwrap();
        assert_eq!(free_name(d, "vae", 1).unwrap(), d.join("vae.1.3.jsonl"));
        assert_eq!(free_name(d, "vae", 0).unwrap(), d.join("vae.0.jsonl"));
    }

    fn window(devices: Vec<DeviceEnergy>) -> WindowSummary {
        WindowSummary {
            name: TRAIN_WINDOW.into(),
            copy: 0,
            start_ns: 1_000_000_000,
            end_ns: 71_500_000_000,
            devices,
        }
    }

    #[test]
    fn a_copy_line_gives_each_device_with_energy_gross_and_net() {
        let package = DeviceEnergy {
            device: "cpu:package-0".into(),
            samples: 70,
            counter_j: Some(2115.04),
            power_j: None,
            net_counter_j: Some(705.0),
            ..DeviceEnergy::default()
        };
        let gpu = DeviceEnergy {
            device: "cuda:0".into(),
            samples: 71,
            power_j: Some(14_000.0),
            ..DeviceEnergy::default()
        };
        let proc = DeviceEnergy {
            device: "cpu:proc".into(),
            samples: 71,
            flags: vec![],
            ..DeviceEnergy::default()
        };
        assert_eq!(
            energy_line(
                "vae on 0",
                &window(vec![package.clone(), gpu, proc.clone()])
            )
            .unwrap(),
            "energy: vae on 0: 70.5 s timed, 71 samples: cpu:package-0 2115.0 J (net 705.0 J), cuda:0 14000.0 J"
        );
        let few = DeviceEnergy {
            samples: 12,
            flags: vec![SummaryFlag::TooFewSamples],
            ..package
        };
        assert_eq!(
            energy_line("toy_reg on 1", &window(vec![few])).unwrap(),
            "energy: toy_reg on 1: 70.5 s timed, 12 samples: cpu:package-0 2115.0 J (net 705.0 J) (fewer than 60 samples: rough)"
        );
        // No device with energy (no RAPL, no GPU): nothing to say.
        assert_eq!(energy_line("vae on 0", &window(vec![proc])), None);
    }

    #[test]
    fn idle_power_is_its_energy_over_its_window() {
        let idle = WindowSummary {
            name: IDLE_WINDOW.into(),
            copy: 0,
            start_ns: 0,
            end_ns: 30_000_000_000,
            devices: vec![DeviceEnergy {
                device: "cpu:package-0".into(),
                counter_j: Some(1239.0),
                ..DeviceEnergy::default()
            }],
        };
        assert_eq!(
            idle_line("output2", &[idle], Duration::from_secs(30)).as_deref(),
            Some("idle baseline of output2: 30 s: cpu:package-0 41.3 W")
        );
        assert_eq!(idle_line("output2", &[], Duration::from_secs(30)), None);
    }

    #[test]
    fn facts_are_said_once_and_lines_every_time() {
        let said = SaidOnce::default();
        let note = TelemetryNote {
            line: Some("energy: a".into()),
            facts: vec!["RAPL: not available".into()],
        };
        assert_eq!(
            said.lines(&note),
            ["energy: a", "telemetry: RAPL: not available"]
        );
        assert_eq!(said.lines(&note), ["energy: a"]);
        assert_eq!(said.text(&note), "energy: a\n");
        let facts = TelemetryNote { line: None, ..note };
        assert_eq!(said.text(&facts), "");
    }
}
