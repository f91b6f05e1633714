//! The `MLBENCH_TIMINGS` switch: phase timings on standard error (`timing: PHASE: N ms`),
//! for `docs/performance.md`. One switch, read here, for every command and crate.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// The environment variable that turns phase timings on (any value).
pub const ENV_VAR: &str = "MLBENCH_TIMINGS";

/// Whether `MLBENCH_TIMINGS` is set.
pub fn enabled() -> bool {
    std::env::var_os(ENV_VAR).is_some()
}

/// A lap clock that prints each phase's wall time when `MLBENCH_TIMINGS` is set and does
/// nothing otherwise.
#[derive(Debug)]
pub struct Timings(Option<Cell<Instant>>);

impl Timings {
    /// Starts the clock (a no-op clock unless `MLBENCH_TIMINGS` is set).
    pub fn start() -> Timings {
        Timings::new(enabled())
    }

    /// A clock that prints when `on`, whatever the environment.
    pub fn new(on: bool) -> Timings {
        Timings(on.then(|| Cell::new(Instant::now())))
    }

    /// Whether it prints.
    pub fn enabled(&self) -> bool {
        self.0.is_some()
    }

    /// Prints the time since the last lap (or the start) as `phase`, and starts the next.
    pub fn lap(&self, phase: &str) {
        if let Some(t) = &self.0 {
            let now = Instant::now();
            print_phase(phase, now - t.get());
            t.set(now);
        }
    }

    /// Restarts the clock without printing (work not worth timing in between).
    pub fn skip(&self) {
        if let Some(t) = &self.0 {
            t.set(Instant::now());
        }
    }

    /// Prints phases measured elsewhere (e.g. the validator's).
    pub fn phases(&self, phases: &[(&str, Duration)]) {
        if self.enabled() {
            for (phase, took) in phases {
                print_phase(phase, *took);
            }
        }
    }
}

/// `timing: PHASE: N ms` on standard error, the line every command prints.
pub fn format_phase(phase: &str, took: Duration) -> String {
    format!("timing: {phase}: {:.1} ms", took.as_secs_f64() * 1e3)
}

fn print_phase(phase: &str, took: Duration) {
    eprintln!("{}", format_phase(phase, took));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_does_nothing_on_formats_in_milliseconds() {
        let off = Timings::new(false);
        assert!(!off.enabled());
        off.lap("nothing");
        off.skip();
        assert!(Timings::new(true).enabled());
        assert_eq!(
            format_phase("discover", Duration::from_micros(1300)),
            "timing: discover: 1.3 ms"
        );
    }
}
