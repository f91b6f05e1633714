//! Energy from an energy counter's differences: pure functions.
//!
//! A counter only goes forward, except when it wraps (it counts modulo a known range:
//! RAPL's `max_energy_range_uj`) or is reset (a driver reload; amdsmi's accumulator is
//! known to step back now and then). A backward step with a known range is one wrap; a
//! backward step without one is a reset, and the energy of that interval is unknown from
//! the counter. It is then taken from the power readings' trapezoid over the same interval
//! when the device has them, and otherwise dropped (the total is then a lower bound); both
//! are counted, so a summary can say which. Reset intervals are one sampling period long,
//! so either way the error is at most a second's energy per reset.

use crate::summary::GAP_PERIODS;
use mlbench_schema::telemetry::{Counter, Flag};

/// One step of a counter between two readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// It went forward (or stayed) by this many raw counts.
    Forward(u64),
    /// It went back and its range is known: it wrapped once and went forward by this many.
    Wrapped(u64),
    /// It went back and its range is unknown (or the values are outside it): a reset.
    Reset,
}

/// The step from `prev` to `cur` of a counter counting modulo `wrap_raw` (when known).
pub fn step(prev: u64, cur: u64, wrap_raw: Option<u64>) -> Step {
    if cur >= prev {
        return Step::Forward(cur - prev);
    }
    match wrap_raw {
        // A value at or past the range is not this counter's modulo arithmetic.
        Some(range) if prev < range => Step::Wrapped(range - prev + cur),
        _ => Step::Reset,
    }
}

/// The flag a sample carries for the step that led to it.
pub fn flag(step: Step) -> Option<Flag> {
    match step {
        Step::Forward(_) => None,
        Step::Wrapped(_) => Some(Flag::CounterWrapped),
        Step::Reset => Some(Flag::CounterReset),
    }
}

/// One device's energy since its first counter reading.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cumulative {
    /// `(t_ns, µJ since the first reading)` at each reading, in time order.
    pub points: Vec<(u64, f64)>,
    /// Wraps taken as such.
    pub wraps: usize,
    /// Resets whose interval's energy came from the power readings.
    pub resets_filled: usize,
    /// Resets whose interval's energy is unknown and left out.
    pub resets_dropped: usize,
}

/// The cumulative energy of a device from its counter readings `(t_ns, raw)`, in time
/// order. `fill(t0, t1)` gives the energy in µJ over a reset interval from another
/// measure (the power trapezoid), `None` where there is none.
pub fn cumulative(
    readings: &[(u64, u64)],
    counter: &Counter,
    fill: impl Fn(u64, u64) -> Option<f64>,
) -> Cumulative {
    let mut out = Cumulative::default();
    let Some(&(t0, _)) = readings.first() else {
        return out;
    };
    let mut total = 0.0;
    out.points.push((t0, total));
    for pair in readings.windows(2) {
        let ((ta, a), (tb, b)) = (pair[0], pair[1]);
        total += match step(a, b, counter.wrap_raw) {
            Step::Forward(d) => d as f64 * counter.resolution_uj,
            Step::Wrapped(d) => {
                out.wraps += 1;
                d as f64 * counter.resolution_uj
            }
            Step::Reset => match fill(ta, tb) {
                Some(uj) => {
                    out.resets_filled += 1;
                    uj
                }
                None => {
                    out.resets_dropped += 1;
                    0.0
                }
            },
        };
        out.points.push((tb, total));
    }
    out
}

/// The µJ a raw value stands for, rounded (what a sample's `energy_uj` holds).
pub fn to_uj(raw: u64, counter: &Counter) -> u64 {
    (raw as f64 * counter.resolution_uj).round() as u64
}

/// The mean power, W, between each two counter readings `(t_ns, raw)`, at the middle
/// of their interval: none across a reset (its energy is unknown) or over more than
/// [`GAP_PERIODS`] periods (a gap, which a chart shows as one).
pub fn power_w(readings: &[(u64, u64)], info: &Counter, period_ns: u64) -> Vec<(u64, f64)> {
    readings
        .windows(2)
        .filter_map(|pair| {
            let ((ta, a), (tb, b)) = (pair[0], pair[1]);
            let dt = tb.checked_sub(ta).filter(|dt| *dt > 0)?;
            if period_ns > 0 && dt > period_ns.saturating_mul(GAP_PERIODS) {
                return None;
            }
            let raw = match step(a, b, info.wrap_raw) {
                Step::Forward(d) | Step::Wrapped(d) => d,
                Step::Reset => return None,
            };
            // µJ per ns is kW.
            let watts = raw as f64 * info.resolution_uj / dt as f64 * 1e3;
            Some((ta + dt / 2, watts))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const RAPL: Counter = Counter {
        resolution_uj: 1.0,
        wrap_raw: Some(262_143_328_850 + 1),
    };

    #[test]
    fn forward_steps_are_differences() {
        assert_eq!(step(100, 250, None), Step::Forward(150));
        assert_eq!(step(100, 100, Some(1000)), Step::Forward(0));
        assert_eq!(flag(step(1, 2, None)), None);
    }

    #[test]
    fn a_backward_step_with_a_range_is_one_wrap() {
        // RAPL at 262 143 328 000 µJ, range 262 143 328 851: 851 µJ to the wrap, then 1 149.
        assert_eq!(
            step(262_143_328_000, 1_149, RAPL.wrap_raw),
            Step::Wrapped(2_000)
        );
        assert_eq!(flag(Step::Wrapped(1)), Some(Flag::CounterWrapped));
    }

    #[test]
    fn a_backward_step_without_a_range_is_a_reset() {
        assert_eq!(step(5_000, 10, None), Step::Reset);
        // A value past the declared range is no wrap either.
        assert_eq!(step(2_000, 10, Some(1_000)), Step::Reset);
        assert_eq!(flag(Step::Reset), Some(Flag::CounterReset));
    }

    #[test]
    fn cumulative_energy_scales_by_the_resolution() {
        // amdsmi: 15.3 µJ a count; 0 → 1000 → 3000 counts is 15 300 then 45 900 µJ.
        let amd = Counter {
            resolution_uj: 15.3,
            wrap_raw: None,
        };
        let c = cumulative(&[(0, 0), (10, 1_000), (20, 3_000)], &amd, |_, _| None);
        assert_eq!(c.points.len(), 3);
        assert!((c.points[1].1 - 15_300.0).abs() < 1e-6);
        assert!((c.points[2].1 - 45_900.0).abs() < 1e-6);
        assert_eq!((c.wraps, c.resets_filled, c.resets_dropped), (0, 0, 0));
    }

    #[test]
    fn cumulative_energy_goes_through_a_wrap() {
        let r = [
            (0, 262_143_328_000),
            (1, 262_143_328_800),
            (2, 1_149),
            (3, 2_149),
        ];
        let c = cumulative(&r, &RAPL, |_, _| None);
        // 800, then 51 + 1 149 = 1 200, then 1 000: 800, 2 000, 3 000.
        let values: Vec<f64> = c.points.iter().map(|p| p.1).collect();
        assert_eq!(values, vec![0.0, 800.0, 2_000.0, 3_000.0]);
        assert_eq!(c.wraps, 1);
    }

    #[test]
    fn a_reset_is_filled_from_power_or_dropped() {
        let nvml = Counter {
            resolution_uj: 1000.0,
            wrap_raw: None,
        };
        // mJ: 500 → 700 (+200 000 µJ), reset to 40, then 90 (+50 000 µJ).
        let r = [(0, 500), (1, 700), (2, 40), (3, 90)];
        let filled = cumulative(&r, &nvml, |t0, t1| {
            assert_eq!((t0, t1), (1, 2));
            Some(123_000.0)
        });
        assert_eq!(filled.points[3].1, 200_000.0 + 123_000.0 + 50_000.0);
        assert_eq!((filled.resets_filled, filled.resets_dropped), (1, 0));
        let dropped = cumulative(&r, &nvml, |_, _| None);
        assert_eq!(dropped.points[3].1, 250_000.0);
        assert_eq!((dropped.resets_filled, dropped.resets_dropped), (0, 1));
    }

    #[test]
    fn raw_values_convert_to_rounded_microjoules() {
        let amd = Counter {
            resolution_uj: 15.3,
            wrap_raw: None,
        };
        assert_eq!(to_uj(3, &amd), 46); // 45.9
        assert_eq!(to_uj(0, &amd), 0);
    }

    proptest::proptest! {
        /// Any run of steps shorter than the range, on a counter counting modulo it:
        /// the cumulative energy is the steps' sum, and each crossing is one wrap.
        #[test]
        fn wrapped_counters_add_up(
            range in 1_000u64..1_000_000,
            start_frac in 0.0f64..1.0,
            steps_frac in proptest::collection::vec(0.0f64..1.0, 1..50),
            resolution in 0.5f64..2000.0,
        ) {
            let start = (start_frac * range as f64) as u64 % range;
            let steps: Vec<u64> = steps_frac.iter().map(|f| (f * range as f64) as u64 % range).collect();
            let mut raw = start;
            let mut absolute = start;
            let mut readings = vec![(0, start)];
            for (i, d) in steps.iter().enumerate() {
                absolute += d;
                raw = (raw + d) % range;
                readings.push((i as u64 + 1, raw));
            }
            let info = Counter { resolution_uj: resolution, wrap_raw: Some(range) };
            let c = cumulative(&readings, &info, |_, _| None);
            let sum: u64 = steps.iter().sum();
            let last = c.points.last().unwrap().1;
            proptest::prop_assert!((last - sum as f64 * resolution).abs() <= 1e-9 * last.max(1.0));
            proptest::prop_assert_eq!(c.wraps as u64, absolute / range - start / range);
            proptest::prop_assert_eq!((c.resets_filled, c.resets_dropped), (0, 0));
        }
    }

    #[test]
    fn counter_power_is_the_mean_between_readings_skipping_resets_and_gaps() {
        const S: u64 = 1_000_000_000;
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
        let got = power_w(
            &readings,
            &Counter {
                resolution_uj: 1.0,
                wrap_raw: Some(1_000_000_000),
            },
            period,
        );
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
        let got = power_w(
            &[(0, 500_000), (S, 400_000), (2 * S, 460_000)],
            &no_range,
            period,
        );
        // 60 000 counts × 1000 µJ = 60 J over 1 s: 60 W, at 1.5 s.
        assert_eq!(got, vec![(S + S / 2, 60.0)]);
        // Two readings at one time: no point, no division by zero.
        assert!(power_w(&[(S, 1), (S, 2)], &no_range, period).is_empty());
    }
}
