//! A loss curve as the cross-file rules keep it.

/// The values of one `batch_loss`, kept until every file is read: in `f32` where each
/// value is one exactly, else in `f64`.
///
/// PyTorch computes losses in `float32` and the suite writes `loss.item()`, so nearly
/// every curve is `f32` values in `f64` form: kept as such, a large submission's curves
/// take 10 MB instead of 21 (half the fresh pages) and `loss.divergent` reads half as much.
/// Every value reads back as the same `f64`, bit for bit.
#[derive(Debug, Clone, PartialEq)]
pub enum Curve {
    /// Every value is an `f32` exactly.
    Single(Vec<f32>),
    /// Some value is not.
    Double(Vec<f64>),
}

impl Default for Curve {
    fn default() -> Self {
        Curve::Single(Vec::new())
    }
}

impl From<Vec<f64>> for Curve {
    fn from(values: Vec<f64>) -> Self {
        // NaN compares unequal: kept in f64, with its bits.
        let exact = |v: &f64| (*v as f32) as f64 == *v;
        if values.iter().all(exact) {
            Curve::Single(values.iter().map(|&v| v as f32).collect())
        } else {
            Curve::Double(values)
        }
    }
}

impl Curve {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Curve::Single(v) => v.len(),
            Curve::Double(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value at `step`.
    pub fn get(&self, step: usize) -> Option<f64> {
        match self {
            Curve::Single(v) => v.get(step).map(|&x| x as f64),
            Curve::Double(v) => v.get(step).copied(),
        }
    }

    /// The values.
    pub fn to_vec(&self) -> Vec<f64> {
        self.values().collect()
    }

    /// The values, in order.
    pub fn values(&self) -> impl Iterator<Item = f64> + '_ {
        let (single, double) = match self {
            Curve::Single(v) => (v.as_slice(), &[][..]),
            Curve::Double(v) => (&[][..], v.as_slice()),
        };
        single
            .iter()
            .map(|&x| x as f64)
            .chain(double.iter().copied())
    }

    /// Whether both hold the same values, bit for bit.
    pub fn identical(&self, other: &Curve) -> bool {
        match (self, other) {
            (Curve::Single(a), Curve::Single(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            _ => {
                self.len() == other.len()
                    && self
                        .values()
                        .zip(other.values())
                        .all(|(x, y)| x.to_bits() == y.to_bits())
            }
        }
    }

    /// Calls `put(step, value)` for the first `len` values, one curve's loop at a time.
    pub fn each_step(&self, len: usize, mut put: impl FnMut(usize, f64)) {
        match self {
            Curve::Single(v) => {
                for (step, &x) in v[..len].iter().enumerate() {
                    put(step, x as f64);
                }
            }
            Curve::Double(v) => {
                for (step, &x) in v[..len].iter().enumerate() {
                    put(step, x);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn float32_losses_are_kept_in_half_the_room() {
        // 0.374267578125 is an f32; 0.1 is not (its f64 is not an f32's).
        let single = Curve::from(vec![0.374267578125, 2.5, -0.0, f64::INFINITY]);
        assert!(matches!(single, Curve::Single(_)));
        let double = Curve::from(vec![0.374267578125, 0.1]);
        assert!(matches!(double, Curve::Double(_)));
        assert_eq!(double.to_vec(), [0.374267578125, 0.1]);
        assert_eq!(single.get(2).map(f64::to_bits), Some((-0.0f64).to_bits()));
        assert_eq!(single.get(4), None);
        assert!(Curve::default().is_empty());
    }

    fn any_curve() -> impl Strategy<Value = Vec<f64>> {
        let value = prop_oneof![
            any::<f32>().prop_map(f64::from),
            any::<f64>(),
            Just(-0.0),
            Just(f64::from(f32::MAX) * 2.0),
        ];
        proptest::collection::vec(value, 0..20)
    }

    proptest! {
        #[test]
        fn every_value_reads_back_bit_for_bit(values in any_curve()) {
            let curve = Curve::from(values.clone());
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&curve.to_vec()), bits(&values));
            prop_assert_eq!(curve.len(), values.len());
            let mut stepped = vec![0.0; values.len()];
            curve.each_step(values.len(), |step, v| stepped[step] = v);
            prop_assert_eq!(bits(&stepped), bits(&values));
            for (i, v) in values.iter().enumerate() {
                prop_assert_eq!(curve.get(i).map(f64::to_bits), Some(v.to_bits()));
            }
        }

        #[test]
        fn identical_is_bit_for_bit(a in any_curve(), b in any_curve(), double in any::<bool>()) {
            let curve = |v: &[f64]| {
                if double { Curve::Double(v.to_vec()) } else { Curve::from(v.to_vec()) }
            };
            let same = a.len() == b.len()
                && a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits());
            prop_assert_eq!(curve(&a).identical(&Curve::from(b.clone())), same);
            prop_assert!(curve(&a).identical(&Curve::from(a.clone())));
        }
    }
}
