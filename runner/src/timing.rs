//! The measured loop, as the suite's scripts run it (spec §5.2–5.5):
//! `repeat` observations of `number` batches, each observation timed between two
//! device synchronisations, fed to a `StatStream` that drops the first 10.
//!
//! The clock is a trait so tests can script the durations and check the arithmetic
//! against schema's `StatStream`/`train_item` without sleeping.

use crate::bench::{Bench, BenchError};
use mlbench_schema::timing::{StatStream, train_item};
use mlbench_schema::value::Object;
use std::collections::VecDeque;
use std::time::Instant;

/// Observations the suite drops before averaging (`skip_obs`).
pub const SKIP_OBS: u64 = 10;

/// Losses kept in `batch_loss` (the suite's ring buffer size).
pub const LOSS_RING: usize = 100;

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

/// A NaN (or infinite) loss: where it happened.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NanLoss {
    /// The batch, counted from 0 over the whole loop.
    pub step: u64,
    /// The observation it fell in (from 0); that observation is not recorded.
    pub observation: u64,
    /// The loss value.
    pub value: f64,
}

/// What the loop measured.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// The `train` stage.
    pub train: StatStream,
    /// Every observation's duration, in order (for tests and progress).
    pub observations: Vec<f64>,
    /// The last [`LOSS_RING`] losses, oldest first, rounded to float32 as the suite
    /// stores them.
    pub batch_loss: VecDeque<f64>,
    /// Set when a loss was not finite: the loop stopped there.
    pub nan: Option<NanLoss>,
    /// The sizes measured with.
    pub size: LoopSize,
}

impl Measurement {
    /// `train_item` of spec §5.4 from the `train` stage.
    pub fn train_item(&self) -> Object {
        train_item(self.size.batch_size, self.size.number, &self.train)
    }

    /// Whether the loop ran to the end with finite losses.
    pub fn completed(&self) -> bool {
        self.nan.is_none()
    }
}

/// Runs the measured loop. `on_observation(r, duration, last_loss)` is called after
/// each recorded observation (for progress bars). A NaN or infinite loss stops the loop
/// and is reported in [`Measurement::nan`]; a bench error is returned as is.
pub fn measure(
    bench: &mut dyn Bench,
    clock: &mut dyn Clock,
    size: LoopSize,
    on_observation: &mut dyn FnMut(u64, f64, f64),
) -> Result<Measurement, BenchError> {
    let mut m = Measurement {
        train: StatStream::new(SKIP_OBS),
        observations: Vec::new(),
        batch_loss: VecDeque::with_capacity(LOSS_RING),
        nan: None,
        size,
    };
    let mut step = 0u64;
    'observations: for r in 0..size.repeat.max(0) as u64 {
        // Synchronise before the first read too, so work queued earlier is not timed.
        bench.sync();
        let start = clock.now();
        let mut last = f64::NAN;
        for _ in 0..size.number.max(0) {
            let loss = bench.step()?;
            if m.batch_loss.len() == LOSS_RING {
                m.batch_loss.pop_front();
            }
            m.batch_loss.push_back(loss as f32 as f64);
            last = loss;
            if !loss.is_finite() {
                // The chrono block is left by the failure: no observation is recorded.
                m.nan = Some(NanLoss {
                    step,
                    observation: r,
                    value: loss,
                });
                break 'observations;
            }
            step += 1;
        }
        bench.sync();
        let duration = clock.now() - start;
        m.train.update(duration);
        m.observations.push(duration);
        on_observation(r, duration, last);
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
        fn step(&mut self) -> Result<f64, BenchError> {
            let k = self.k;
            self.k += 1;
            Ok(if Some(k) == self.nan_at {
                f64::NAN
            } else {
                1.0 / (k + 1) as f64
            })
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
        assert!(!m.completed());
    }
}
