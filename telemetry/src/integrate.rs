//! Power into energy: the trapezoid of power samples over a window, the cross-check
//! against the counter, the idle baseline. Pure functions over `(t_ns, value)` series in
//! time order.

/// The counter and the power readings disagree when they differ by more than this
/// fraction of the counter's energy.
pub const DISAGREEMENT_LIMIT: f64 = 0.05;

/// The series' value at `t`, linear between its neighbours; `None` outside the series.
pub fn interpolate(points: &[(u64, f64)], t: u64) -> Option<f64> {
    let i = points.partition_point(|p| p.0 < t);
    let (t1, v1) = *points.get(i)?;
    if t1 == t {
        return Some(v1);
    }
    let (t0, v0) = *points.get(i.checked_sub(1)?)?;
    // Saturating: a series out of order gives a wrong number, never a panic.
    let f = t.saturating_sub(t0) as f64 / t1.saturating_sub(t0) as f64;
    Some(v0 + f * (v1 - v0))
}

/// The integral over `[start, end]` of the series taken as linear between its points
/// (value × ns), with its values at the window's edges interpolated. `None` when the
/// window is empty or backwards, or not inside the series' span: energy outside the
/// readings is never guessed.
pub fn trapezoid(points: &[(u64, f64)], start: u64, end: u64) -> Option<f64> {
    if end <= start {
        return None;
    }
    let first = interpolate(points, start)?;
    let last = interpolate(points, end)?;
    let inside = points.iter().filter(|p| p.0 > start && p.0 < end);
    let mut total = 0.0;
    let mut prev = (start, first);
    for &point in inside.chain(std::iter::once(&(end, last))) {
        total += point.0.saturating_sub(prev.0) as f64 * (point.1 + prev.1) / 2.0;
        prev = point;
    }
    Some(total)
}

/// The energy in J of a window from power samples in mW (mW × ns is 10⁻¹² J).
pub fn power_energy_j(points_mw: &[(u64, f64)], start: u64, end: u64) -> Option<f64> {
    trapezoid(points_mw, start, end).map(|v| v * 1e-12)
}

/// How far the power readings' energy is from the counter's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrossCheck {
    /// `|power − counter| / counter`.
    pub relative: f64,
    /// Whether `relative` is over [`DISAGREEMENT_LIMIT`].
    pub flagged: bool,
}

/// The cross-check of a window's energy by counter and by power; `None` when the
/// counter's is not positive (nothing to compare against).
pub fn cross_check(counter_j: f64, power_j: f64) -> Option<CrossCheck> {
    if !(counter_j > 0.0 && counter_j.is_finite() && power_j.is_finite()) {
        return None;
    }
    let relative = (power_j - counter_j).abs() / counter_j;
    Some(CrossCheck {
        relative,
        flagged: relative > DISAGREEMENT_LIMIT,
    })
}

/// The mean power in W of `energy_j` over `duration_ns`; `None` for an empty window.
pub fn mean_power_w(energy_j: f64, duration_ns: u64) -> Option<f64> {
    (duration_ns > 0).then(|| energy_j / (duration_ns as f64 * 1e-9))
}

/// A window's energy less what the device draws idle over the same time (J). May be
/// negative when the bench draws less than the idle baseline: kept, not clamped, so the
/// reader sees it.
pub fn net_j(gross_j: f64, idle_w: f64, duration_ns: u64) -> f64 {
    gross_j - idle_w * duration_ns as f64 * 1e-9
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn interpolation_is_linear_and_stays_inside() {
        let p = [(0, 100.0), (10, 200.0), (20, 200.0)];
        assert_eq!(interpolate(&p, 0), Some(100.0));
        assert_eq!(interpolate(&p, 5), Some(150.0));
        assert_eq!(interpolate(&p, 10), Some(200.0));
        assert_eq!(interpolate(&p, 21), None);
        assert_eq!(interpolate(&p[1..], 5), None);
        assert_eq!(interpolate(&[], 0), None);
    }

    #[test]
    fn the_trapezoid_interpolates_at_the_window_edges() {
        // 100 W at 0 s, 200 W at 1 s, 200 W at 2 s, 100 W at 3 s (in mW).
        let p = [
            (0, 100_000.0),
            (S, 200_000.0),
            (2 * S, 200_000.0),
            (3 * S, 100_000.0),
        ];
        // Whole span: 150 + 200 + 150 = 500 J.
        assert!((power_energy_j(&p, 0, 3 * S).unwrap() - 500.0).abs() < 1e-9);
        // 0.5 s → 2.5 s: 150 W at 0.5 s, 150 W at 2.5 s:
        // 0.5 × (150 + 200) / 2 + 200 + 0.5 × (200 + 150) / 2 = 87.5 + 200 + 87.5 = 375 J.
        assert!((power_energy_j(&p, S / 2, 5 * S / 2).unwrap() - 375.0).abs() < 1e-9);
        // Inside one interval: 0.25 s → 0.75 s, 125 → 175 W: 0.5 × 150 = 75 J.
        assert!((power_energy_j(&p, S / 4, 3 * S / 4).unwrap() - 75.0).abs() < 1e-9);
    }

    #[test]
    fn the_trapezoid_refuses_what_it_cannot_see() {
        let p = [(S, 1.0), (2 * S, 1.0)];
        assert_eq!(trapezoid(&p, 0, 2 * S), None);
        assert_eq!(trapezoid(&p, S, 3 * S), None);
        assert_eq!(trapezoid(&p, 2 * S, S), None);
        assert_eq!(trapezoid(&p, S, S), None);
    }

    #[test]
    fn five_percent_is_the_line() {
        // 4.9 % below and above: not flagged; 5.1 %: flagged.
        let below = cross_check(1000.0, 951.0).unwrap();
        assert!((below.relative - 0.049).abs() < 1e-12);
        assert!(!below.flagged);
        assert!(!cross_check(1000.0, 1049.0).unwrap().flagged);
        let over = cross_check(1000.0, 1051.0).unwrap();
        assert!((over.relative - 0.051).abs() < 1e-12);
        assert!(over.flagged);
        assert!(cross_check(1000.0, 949.0).unwrap().flagged);
        assert_eq!(cross_check(0.0, 5.0), None);
        assert_eq!(cross_check(f64::NAN, 5.0), None);
    }

    #[test]
    fn the_idle_baseline_is_subtracted_over_the_window() {
        // Idle: 1 500 J over 30 s is 50 W. A 120 s window of 36 000 J: 36 000 − 6 000.
        let idle_w = mean_power_w(1_500.0, 30 * S).unwrap();
        assert!((idle_w - 50.0).abs() < 1e-12);
        assert!((net_j(36_000.0, idle_w, 120 * S) - 30_000.0).abs() < 1e-9);
        // Below the baseline: negative, kept.
        assert!((net_j(100.0, 50.0, 10 * S) + 400.0).abs() < 1e-9);
        assert_eq!(mean_power_w(1.0, 0), None);
    }

    proptest::proptest! {
        /// The integral over [a, c] is the integral over [a, b] plus [b, c], wherever the
        /// edges fall between samples; a constant integrates to itself × the duration.
        #[test]
        fn the_trapezoid_is_additive_and_exact_on_constants(
            values in proptest::collection::vec(0.0f64..1000.0, 2..40),
            cuts in proptest::collection::vec(0.0f64..1.0, 3),
            level in 0.0f64..1000.0,
        ) {
            let points: Vec<(u64, f64)> =
                values.iter().enumerate().map(|(i, &v)| (i as u64 * S, v)).collect();
            let span = (values.len() as u64 - 1) * S;
            let mut edges: Vec<u64> = cuts.iter().map(|f| (f * span as f64) as u64).collect();
            edges.sort_unstable();
            let [a, b, c] = [edges[0], edges[1], edges[2]];
            proptest::prop_assume!(a < b && b < c);
            let whole = trapezoid(&points, a, c).unwrap();
            let parts = trapezoid(&points, a, b).unwrap() + trapezoid(&points, b, c).unwrap();
            proptest::prop_assert!((whole - parts).abs() <= 1e-9 * whole.max(1.0));
            let flat: Vec<(u64, f64)> = points.iter().map(|p| (p.0, level)).collect();
            let exact = level * (c - a) as f64;
            proptest::prop_assert!((trapezoid(&flat, a, c).unwrap() - exact).abs() <= 1e-9 * exact.max(1.0));
        }
    }
}
