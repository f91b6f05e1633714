//! The percentile interval selects its order statistics: the same bits as the
//! quantiles of the sorted values.

use mlbench_analyzer::bootstrap::{percentile_interval, quantile_sorted};
use proptest::prelude::*;

/// The interval as the sorted values give it.
fn sorted_interval(values: &[f64], level: f64) -> Option<[f64; 2]> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    Some([
        quantile_sorted(&sorted, (1.0 - level) / 2.0)?,
        quantile_sorted(&sorted, (1.0 + level) / 2.0)?,
    ])
}

fn bits(x: Option<[f64; 2]>) -> Option<[u64; 2]> {
    x.map(|[a, b]| [a.to_bits(), b.to_bits()])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(ProptestConfig::default().cases.max(2000)))]

    /// Any length (one value, two, a few, thousands), repeated values and signed zeros,
    /// any level (0 and 1 included, and beyond: clamped, or negative).
    #[test]
    fn selected_interval_is_the_sorted_one(
        values in prop::collection::vec(
            prop_oneof![
                4 => -1e3f64..1e3,
                2 => (0u8..4).prop_map(f64::from),
                1 => Just(-0.0),
                1 => Just(0.0),
            ],
            0..300,
        ),
        level in prop_oneof![
            4 => 0.0f64..1.0,
            2 => prop::sample::select(vec![0.0, 0.5, 0.9, 0.95, 0.99, 1.0]),
            1 => -1.5f64..2.5,
        ],
    ) {
        let want = sorted_interval(&values, level);
        let mut shuffled = values;
        prop_assert_eq!(bits(percentile_interval(&mut shuffled, level)), bits(want));
    }
}

#[test]
fn intervals_worked_by_hand() {
    // 0..=10: the 2.5 % quantile sits at 0.25 (between 0 and 1), the 97.5 % one at 9.75
    // (up to the rounding of (1 − 0.95) / 2 = 0.025).
    let mut values: Vec<f64> = (0..=10).rev().map(f64::from).collect();
    let [low, high] = percentile_interval(&mut values, 0.95).unwrap();
    assert!(
        (low - 0.25).abs() < 1e-12 && (high - 9.75).abs() < 1e-12,
        "{low} {high}"
    );
    // A level of 0: both quantiles are the median, 5.
    assert_eq!(percentile_interval(&mut values, 0.0), Some([5.0, 5.0]));
    assert_eq!(percentile_interval(&mut [7.0], 0.95), Some([7.0, 7.0]));
    assert_eq!(percentile_interval(&mut [], 0.95), None);
}
