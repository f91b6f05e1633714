//! The measured loop, as the suite's scripts run it (docs/suite.md#timing):
//! `repeat` observations of `number` batches, each observation timed between two
//! device synchronisations, fed to a `StatStream` that drops the first 10; the other
//! stages, metrics and losses a bench logs ([`crate::bench::Logs`]) kept as the suite's
//! `Experiment` keeps them.
//!
//! The clock is a trait so tests can script the durations and check the arithmetic
//! against schema's `StatStream`/`train_item` without sleeping.

use crate::bench::{Bench, BenchError, Logs};
use mlbench_schema::timing::{StatStream, train_item};
use mlbench_schema::value::Object;
use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

// The suite's `skip_obs`, part of a bench's contract (its stages may drop others).
pub use crate::bench::SKIP_OBS;

/// Losses kept in `batch_loss` (the suite's ring buffer size).
pub const LOSS_RING: usize = 100;

/// Epoch losses kept in `epoch_loss`.
pub const EPOCH_RING: usize = 10;

/// Values kept per metric in `metrics`.
pub const METRIC_RING: usize = 10;

/// A source of time in seconds.
pub trait Clock: Send {
    /// Seconds since an arbitrary origin.
    fn now(&mut self) -> f64;
}

/// The wall clock (`time.time()` in the suite; a monotonic clock here, which cannot
/// jump when NTP adjusts the system time mid-observation).
#[derive(Debug, Clone)]
pub struct RealClock {
    origin: Instant,
}

impl RealClock {
    /// A clock starting now.
    pub fn new() -> Self {
        RealClock {
            origin: Instant::now(),
        }
    }
}

impl Default for RealClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for RealClock {
    fn now(&mut self) -> f64 {
        self.origin.elapsed().as_secs_f64()
    }
}

/// A clock for tests: each observation lasts the next scripted duration (reads
/// alternate between an observation's start and its end; after the script, 1 s).
#[derive(Debug, Clone)]
pub struct ScriptedClock {
    durations: Vec<f64>,
    reads: usize,
    t: f64,
}

impl ScriptedClock {
    /// A clock whose successive observations last `durations` seconds.
    pub fn new(durations: Vec<f64>) -> Self {
        ScriptedClock {
            durations,
            reads: 0,
            t: 0.0,
        }
    }
}

impl Clock for ScriptedClock {
    fn now(&mut self) -> f64 {
        if self.reads % 2 == 1 {
            self.t += self.durations.get(self.reads / 2).copied().unwrap_or(1.0);
        }
        self.reads += 1;
        self.t
    }
}

/// Loop sizes: `repeat` observations of `number` batches of `batch_size` items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopSize {
    /// Items per batch (for `train_item`).
    pub batch_size: i64,
    /// Batches per observation.
    pub number: i64,
    /// Observations.
    pub repeat: i64,
}

/// A non-finite logged value (a loss, an epoch loss or a metric): where it happened.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NanLoss {
    /// The batch, counted from 0 over the whole loop (for a value logged by an
    /// observation hook: the steps done before it).
    pub step: u64,
    /// The observation it fell in (from 0). Logged by a step or inside the timed region,
    /// that observation is not recorded (the chrono block is left by the failure); logged
    /// after the timer ([`Bench::after_observation`]), it is, since its block had ended.
    pub observation: u64,
    /// What it is: `batch_loss`, `epoch_loss` or the metric's name.
    pub what: &'static str,
    /// The value.
    pub value: f64,
}

/// The ring buffers of float32 the suite keeps (`RingBuffer(n, torch.float32)`).
#[derive(Debug, Clone, PartialEq)]
pub struct Ring {
    values: VecDeque<f64>,
    capacity: usize,
}

impl Ring {
    /// An empty ring of `capacity` values.
    pub fn new(capacity: usize) -> Ring {
        Ring {
            values: VecDeque::with_capacity(capacity),
            capacity,
        }
    }

    /// Appends `value` rounded to float32, dropping the oldest when full.
    pub fn push(&mut self, value: f64) {
        if self.values.len() == self.capacity {
            self.values.pop_front();
        }
        self.values.push_back(value as f32 as f64);
    }

    /// The values, oldest first.
    pub fn values(&self) -> &VecDeque<f64> {
        &self.values
    }
}

/// What the loop measured.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// The `train` stage.
    pub train: StatStream,
    /// The other stages (`loading`, `compute`, `eval`, `all`, …) by name.
    pub stages: BTreeMap<&'static str, StatStream>,
    /// Every `train` observation's duration, in order (for tests and progress).
    pub observations: Vec<f64>,
    /// The last [`LOSS_RING`] losses, oldest first, rounded to float32 as the suite
    /// stores them.
    pub batch_loss: VecDeque<f64>,
    /// The last [`EPOCH_RING`] epoch losses (float32).
    pub epoch_loss: Ring,
    /// Each metric's last [`METRIC_RING`] values (float32), by name.
    pub metrics: BTreeMap<&'static str, Ring>,
    /// Set when a logged value was not finite: the loop stopped there.
    pub nan: Option<NanLoss>,
    /// The sizes measured with.
    pub size: LoopSize,
}

impl Measurement {
    fn new(size: LoopSize) -> Measurement {
        Measurement {
            train: StatStream::new(SKIP_OBS),
            stages: BTreeMap::new(),
            observations: Vec::new(),
            batch_loss: VecDeque::with_capacity(LOSS_RING),
            epoch_loss: Ring::new(EPOCH_RING),
            metrics: BTreeMap::new(),
            nan: None,
            size,
        }
    }

    /// `train_item` from the `train` stage (docs/suite.md#throughput).
    pub fn train_item(&self) -> Object {
        train_item(self.size.batch_size, self.size.number, &self.train)
    }

    /// Whether the loop ran to the end with finite losses and metrics.
    pub fn completed(&self) -> bool {
        self.nan.is_none()
    }

    /// Files `logs` as the suite's `log_*` calls and stages would; `Err` with the first
    /// non-finite value, after filing everything (so the report shows it).
    fn file(
        &mut self,
        logs: &Logs,
        bench: &dyn Bench,
        step: u64,
        observation: u64,
    ) -> Result<(), NanLoss> {
        if let Some(loss) = logs.loss {
            if self.batch_loss.len() == LOSS_RING {
                self.batch_loss.pop_front();
            }
            self.batch_loss.push_back(loss as f32 as f64);
        }
        if let Some(value) = logs.epoch_loss {
            self.epoch_loss.push(value);
        }
        for &(name, value) in &logs.metrics {
            let ring = self
                .metrics
                .entry(name)
                .or_insert_with(|| Ring::new(METRIC_RING));
            ring.push(value);
        }
        for &(name, seconds) in &logs.stages {
            let stream = self
                .stages
                .entry(name)
                .or_insert_with(|| StatStream::new(bench.skip_obs(name)));
            stream.update(seconds);
        }
        match logs.first_nonfinite() {
            Some((what, value)) => Err(NanLoss {
                step,
                observation,
                what,
                value,
            }),
            None => Ok(()),
        }
    }
}

/// Runs `f` as a `chrono.time(name)` block does: `sync` on enter (so earlier queued work
/// is not timed) and on exit, the wall clock read after each. Returns `f`'s value and
/// the block's duration in seconds, for [`Logs::stage`].
pub fn timed<T>(sync: &dyn Fn(), f: impl FnOnce() -> T) -> (T, f64) {
    sync();
    let start = Instant::now();
    let value = f();
    sync();
    (value, start.elapsed().as_secs_f64())
}

/// The edges of a loop's timed part ([`measure_within`]); a bench's own trait, as a
/// data-parallel rank marks its window too.
pub use crate::bench::TimedWindow;

/// The first observation whose duration counts: [`SKIP_OBS`], or 0 for a loop too short
/// to drop any.
pub fn first_counted(repeat: i64) -> u64 {
    if repeat > SKIP_OBS as i64 {
        SKIP_OBS
    } else {
        0
    }
}

/// Runs the measured loop (see [`crate::bench`] for the order of the hooks).
/// `on_observation(r, duration, last_loss)` is called after each recorded observation (for
/// progress bars; `last_loss` NaN when none was logged). A non-finite logged value stops
/// the loop and is reported in [`Measurement::nan`]; a bench error is returned as is.
pub fn measure(
    bench: &mut dyn Bench,
    clock: &mut dyn Clock,
    size: LoopSize,
    on_observation: &mut dyn FnMut(u64, f64, f64),
) -> Result<Measurement, BenchError> {
    measure_within(bench, clock, size, on_observation, &mut ())
}

/// [`measure`], marking the loop's timed part on `window`: from the start of the first
/// counted observation ([`first_counted`]) to the end of the last one, the observations
/// whose durations make the figure. What runs between observations outside the timer
/// ([`Bench::after_observation`]) falls inside it. A loop that stops early (a non-finite
/// value, an error) leaves the window open for the caller to close.
pub fn measure_within(
    bench: &mut dyn Bench,
    clock: &mut dyn Clock,
    size: LoopSize,
    on_observation: &mut dyn FnMut(u64, f64, f64),
    window: &mut dyn TimedWindow,
) -> Result<Measurement, BenchError> {
    let mut m = Measurement::new(size);
    let mut step = 0u64;
    let repeat = size.repeat.max(0) as u64;
    for r in 0..repeat {
        // Synchronise before the first read too, so work queued earlier is not timed.
        bench.sync();
        if r == first_counted(size.repeat) {
            window.start();
        }
        let start = clock.now();
        let mut last = f64::NAN;
        bench.begin_observation(r)?;
        for _ in 0..size.number.max(0) {
            let logs = bench.step()?;
            last = logs.loss.unwrap_or(last);
            if let Err(nan) = m.file(&logs, &*bench, step, r) {
                m.nan = Some(nan);
                return Ok(m);
            }
            step += 1;
        }
        let end = bench.end_observation(r)?;
        if let Err(nan) = m.file(&end, &*bench, step, r) {
            m.nan = Some(nan);
            return Ok(m);
        }
        bench.sync();
        let duration = clock.now() - start;
        if r + 1 == repeat {
            window.end();
        }
        m.train.update(duration);
        m.observations.push(duration);
        let after = bench.after_observation(r, duration)?;
        let filed = m.file(&after, &*bench, step, r);
        on_observation(r, duration, last);
        if let Err(nan) = filed {
            m.nan = Some(nan);
            return Ok(m);
        }
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Loss 1/(k+1) at step k, NaN at `nan_at`; counts syncs.
    struct Fake {
        k: u64,
        nan_at: Option<u64>,
        syncs: Arc<AtomicUsize>,
    }

    impl Bench for Fake {
        fn step(&mut self) -> Result<Logs, BenchError> {
            let k = self.k;
            self.k += 1;
            Ok(Logs::loss(if Some(k) == self.nan_at {
                f64::NAN
            } else {
                1.0 / (k + 1) as f64
            }))
        }
        fn sync(&self) {
            self.syncs.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn fake(nan_at: Option<u64>) -> (Fake, Arc<AtomicUsize>) {
        let syncs = Arc::new(AtomicUsize::new(0));
        let bench = Fake {
            k: 0,
            nan_at,
            syncs: syncs.clone(),
        };
        (bench, syncs)
    }

    #[test]
    fn arithmetic_equals_schema_and_drops_first_ten() {
        let durations: Vec<f64> = (1..=15).map(|i| i as f64 * 0.5).collect();
        let mut clock = ScriptedClock::new(durations.clone());
        let (mut bench, syncs) = fake(None);
        let size = LoopSize {
            batch_size: 32,
            number: 5,
            repeat: 15,
        };
        let mut seen = 0;
        let m = measure(&mut bench, &mut clock, size, &mut |_, _, _| seen += 1).unwrap();
        assert_eq!(seen, 15);
        assert_eq!(
            syncs.load(Ordering::Relaxed),
            30,
            "sync before each clock read"
        );
        assert_eq!(m.observations, durations);
        let mut expected = StatStream::new(10);
        durations.iter().for_each(|d| expected.update(*d));
        assert_eq!(m.train.to_stage(), expected.to_stage());
        // Kept for the mean: observations 11..=15 (5.5 … 7.5 s).
        assert_eq!(m.train.count(), 5);
        assert_eq!(m.train.avg(), 6.5);
        assert_eq!(m.train.min(), 5.0, "min includes the 10th observation");
        let item = m.train_item();
        assert_eq!(item, train_item(32, 5, &expected));
        assert_eq!(item.get("avg").and_then(|v| v.as_f64()), Some(160.0 / 6.5));
        assert_eq!(m.batch_loss.len(), 75);
        assert!(m.completed());
    }

    /// Records the bench's syncs so far at each edge of the window.
    struct Edges {
        syncs: Arc<AtomicUsize>,
        seen: Vec<(&'static str, usize)>,
    }

    impl TimedWindow for Edges {
        fn start(&mut self) {
            self.seen
                .push(("start", self.syncs.load(Ordering::Relaxed)));
        }
        fn end(&mut self) {
            self.seen.push(("end", self.syncs.load(Ordering::Relaxed)));
        }
    }

    fn edges(nan_at: Option<u64>, repeat: i64) -> Vec<(&'static str, usize)> {
        let (mut bench, syncs) = fake(nan_at);
        let mut window = Edges {
            syncs,
            seen: Vec::new(),
        };
        let size = LoopSize {
            batch_size: 1,
            number: 2,
            repeat,
        };
        let mut clock = ScriptedClock::new(vec![]);
        measure_within(&mut bench, &mut clock, size, &mut |_, _, _| {}, &mut window).unwrap();
        window.seen
    }

    #[test]
    fn the_window_spans_the_counted_observations_between_their_syncs() {
        // Two syncs an observation: the 11th (r = 10) starts after sync 21, and the
        // 15th ends with sync 30.
        assert_eq!(edges(None, 15), [("start", 21), ("end", 30)]);
        assert_eq!(
            (first_counted(15), first_counted(10), first_counted(0)),
            (10, 0, 0)
        );
        // Ten observations or fewer drop none: the window spans them all.
        assert_eq!(edges(None, 5), [("start", 1), ("end", 10)]);
        // A NaN at step 24 (observation 12) stops the loop: the end is the caller's.
        assert_eq!(edges(Some(24), 15), [("start", 21)]);
        assert_eq!(edges(None, 0), []);
    }

    /// `repeat` observations of `number` batches of the fake (NaN at `nan_at`), 1 s each.
    fn measure_fake(nan_at: Option<u64>, number: i64, repeat: i64) -> Measurement {
        let (mut bench, _) = fake(nan_at);
        let size = LoopSize {
            batch_size: 1,
            number,
            repeat,
        };
        measure(
            &mut bench,
            &mut ScriptedClock::new(vec![]),
            size,
            &mut |_, _, _| {},
        )
        .unwrap()
    }

    #[test]
    fn ring_buffer_keeps_the_last_hundred_as_float32() {
        let m = measure_fake(None, 10, 12);
        assert_eq!(m.batch_loss.len(), 100);
        assert_eq!(m.batch_loss[0], (1.0f64 / 21.0) as f32 as f64);
        assert_eq!(m.batch_loss[99], (1.0f64 / 120.0) as f32 as f64);
    }

    #[test]
    fn nan_stops_the_loop() {
        let m = measure_fake(Some(12), 5, 20);
        let nan = m.nan.unwrap();
        assert_eq!((nan.step, nan.observation), (12, 2));
        assert!(nan.value.is_nan());
        assert_eq!(
            m.observations.len(),
            2,
            "the failing observation is dropped"
        );
        assert_eq!(m.batch_loss.len(), 13);
        assert!(m.batch_loss.back().unwrap().is_nan());
        assert_eq!(nan.what, "batch_loss");
        assert!(!m.completed());
    }

    /// A bench like convnet + wlm + dcgan at once: per step `loading` (0.25 + k/100 s)
    /// and `compute` (1 + k/10 s) and a metric `err` = k + 0.1 with no loss; per
    /// observation an epoch loss r/3 at the end, and after the timer an `eval` stage of
    /// 2 + r s, `all` = train + eval and a metric `val` = 1/(r + 1). Records the order
    /// of its calls.
    #[derive(Default)]
    struct Staged {
        k: u64,
        calls: Vec<String>,
        nan_metric_at: Option<u64>,
    }

    impl Bench for Staged {
        fn step(&mut self) -> Result<Logs, BenchError> {
            let k = self.k as f64;
            self.calls.push("step".into());
            let err = if Some(self.k) == self.nan_metric_at {
                f64::INFINITY
            } else {
                k + 0.1
            };
            self.k += 1;
            Ok(Logs::none()
                .stage("loading", 0.25 + k / 100.0)
                .stage("compute", 1.0 + k / 10.0)
                .metric("err", err))
        }
        fn sync(&self) {}
        fn begin_observation(&mut self, r: u64) -> Result<(), BenchError> {
            self.calls.push(format!("begin {r}"));
            Ok(())
        }
        fn end_observation(&mut self, r: u64) -> Result<Logs, BenchError> {
            self.calls.push(format!("end {r}"));
            Ok(Logs::none().epoch_loss(r as f64 / 3.0))
        }
        fn after_observation(&mut self, r: u64, train: f64) -> Result<Logs, BenchError> {
            self.calls.push(format!("after {r} {train}"));
            let eval = 2.0 + r as f64;
            Ok(Logs::none()
                .stage("eval", eval)
                .stage("all", train + eval)
                .metric("val", 1.0 / (r + 1) as f64))
        }
        fn skip_obs(&self, stage: &str) -> u64 {
            if stage == "eval" { 3 } else { SKIP_OBS }
        }
    }

    /// Schema's StatStream over `values` dropping `skip`.
    fn expected_stage(skip: u64, values: impl IntoIterator<Item = f64>) -> Object {
        let mut s = StatStream::new(skip);
        values.into_iter().for_each(|v| s.update(v));
        s.to_stage()
    }

    #[test]
    fn stages_metrics_and_epoch_loss_as_the_suite_keeps_them() {
        let (number, repeat) = (3u64, 14u64);
        let durations: Vec<f64> = (0..repeat).map(|r| 5.0 + r as f64).collect();
        let mut bench = Staged::default();
        let size = LoopSize {
            batch_size: 8,
            number: number as i64,
            repeat: repeat as i64,
        };
        let mut clock = ScriptedClock::new(durations.clone());
        let mut last = Vec::new();
        let m = measure(&mut bench, &mut clock, size, &mut |_, _, l| last.push(l)).unwrap();
        assert!(m.completed());
        assert!(last.iter().all(|l| l.is_nan()), "no loss logged");
        assert!(m.batch_loss.is_empty());
        let steps = 0..number * repeat;
        let stage = |name: &str| m.stages.get(name).unwrap().to_stage();
        assert_eq!(
            stage("loading"),
            expected_stage(10, steps.clone().map(|k| 0.25 + k as f64 / 100.0))
        );
        assert_eq!(
            stage("compute"),
            expected_stage(10, steps.clone().map(|k| 1.0 + k as f64 / 10.0))
        );
        // 42 steps: the sub-stages count 32 observations, as convnet's 65 of 75.
        assert_eq!(m.stages["loading"].count(), 32);
        assert_eq!(
            stage("eval"),
            expected_stage(3, (0..repeat).map(|r| 2.0 + r as f64))
        );
        assert_eq!(
            stage("all"),
            expected_stage(
                10,
                durations.iter().zip(0..).map(|(d, r)| d + 2.0 + r as f64)
            )
        );
        assert_eq!(m.train.to_stage(), expected_stage(10, durations.clone()));
        // Rings of 10 float32: the last 10 of 42 `err`, of 14 `val` and epoch losses.
        let f32s = |v: Vec<f64>| v.into_iter().map(|x| x as f32 as f64).collect::<Vec<_>>();
        let ring = |name: &str| m.metrics[name].values().iter().copied().collect::<Vec<_>>();
        assert_eq!(
            ring("err"),
            f32s((32..42).map(|k| k as f64 + 0.1).collect())
        );
        assert_eq!(
            ring("val"),
            f32s((4..14).map(|r| 1.0 / (r + 1) as f64).collect())
        );
        let epoch: Vec<f64> = m.epoch_loss.values().iter().copied().collect();
        assert_eq!(epoch, f32s((4..14).map(|r| r as f64 / 3.0).collect()));
        // Hooks in order: begin inside the timer, after with the observation's duration.
        assert_eq!(
            bench.calls[..6],
            ["begin 0", "step", "step", "step", "end 0", "after 0 5"]
        );
        assert_eq!(bench.calls.len(), 14 * 6);
    }

    #[test]
    fn a_nonfinite_metric_stops_the_loop_like_a_nan_loss() {
        let mut bench = Staged {
            nan_metric_at: Some(7),
            ..Staged::default()
        };
        let size = LoopSize {
            batch_size: 1,
            number: 3,
            repeat: 12,
        };
        let mut clock = ScriptedClock::new(vec![]);
        let m = measure(&mut bench, &mut clock, size, &mut |_, _, _| {}).unwrap();
        let nan = m.nan.unwrap();
        assert_eq!((nan.what, nan.step, nan.observation), ("err", 7, 2));
        assert_eq!(nan.value, f64::INFINITY);
        assert_eq!(m.observations.len(), 2);
        assert!(m.metrics["err"].values().back().unwrap().is_infinite());
        assert!(!m.completed());
    }

    /// NaN `val` after the timer of observation 1: that observation is recorded.
    struct NanAfter;

    impl Bench for NanAfter {
        fn step(&mut self) -> Result<Logs, BenchError> {
            Ok(Logs::loss(1.0))
        }
        fn sync(&self) {}
        fn after_observation(&mut self, r: u64, _: f64) -> Result<Logs, BenchError> {
            Ok(Logs::none().metric("val", if r == 1 { f64::NAN } else { 1.0 }))
        }
    }

    #[test]
    fn a_nonfinite_value_after_the_timer_keeps_its_observation() {
        let size = LoopSize {
            batch_size: 1,
            number: 2,
            repeat: 12,
        };
        let mut clock = ScriptedClock::new(vec![]);
        let m = measure(&mut NanAfter, &mut clock, size, &mut |_, _, _| {}).unwrap();
        let nan = m.nan.unwrap();
        assert_eq!((nan.what, nan.step, nan.observation), ("val", 4, 1));
        assert_eq!(m.observations.len(), 2);
    }

    #[test]
    fn timed_syncs_on_enter_and_exit() {
        let syncs = AtomicUsize::new(0);
        let sync = || {
            syncs.fetch_add(1, Ordering::Relaxed);
        };
        let (value, seconds) = timed(&sync, || {
            assert_eq!(syncs.load(Ordering::Relaxed), 1, "synced before the work");
            std::thread::sleep(std::time::Duration::from_millis(20));
            7
        });
        assert_eq!((value, syncs.load(Ordering::Relaxed)), (7, 2));
        assert!((0.02..1.0).contains(&seconds), "{seconds}");
    }
}
