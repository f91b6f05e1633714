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

/// The hash of a curve's bits for [`crate::facts::EntryFacts::losses_hash`]: `None` for
/// fewer than two values or all equal (a constant curve, e.g. a reward of 1 per step, is
/// no sign of a copy).
pub fn curve_hash(losses: &[f64]) -> Option<u64> {
    let first = losses.first()?.to_bits();
    if losses.len() < 2 || losses.iter().all(|v| v.to_bits() == first) {
        return None;
    }
    Some(losses.iter().fold(losses.len() as u64, fold))
}

/// One step of [`curve_hash`]: a multiply-rotate fold (FxHash's). Equal curves are
/// confirmed bit for bit afterwards, so speed matters here, not resistance to crafted
/// collisions.
fn fold(hash: u64, value: &f64) -> u64 {
    (hash.rotate_left(5) ^ value.to_bits()).wrapping_mul(0x517c_c1b7_2722_0a95)
}

impl Curve {
    /// What the cross-file rules keep of an entry's loss values: the curve and its
    /// [`curve_hash`] when every value is finite, else an empty curve and no hash. One
    /// pass over the values, where finiteness, the hash and the `f32` form took five.
    pub fn kept(values: Vec<f64>) -> (Curve, Option<u64>) {
        let Some(&first) = values.first() else {
            return (Curve::default(), None);
        };
        let mut single = Vec::with_capacity(values.len());
        let (mut finite, mut exact, mut varies) = (true, true, false);
        let mut hash = values.len() as u64;
        for v in &values {
            finite &= v.is_finite();
            let narrow = *v as f32;
            exact &= narrow as f64 == *v;
            single.push(narrow);
            varies |= v.to_bits() != first.to_bits();
            hash = fold(hash, v);
        }
        if !finite {
            return (Curve::default(), None);
        }
        let hash = (values.len() >= 2 && varies).then_some(hash);
        let curve = if exact {
            Curve::Single(single)
        } else {
            Curve::Double(values)
        };
        (curve, hash)
    }

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
    fn hashes_by_hand() {
        assert_eq!(curve_hash(&[]), None);
        assert_eq!(curve_hash(&[1.5]), None);
        assert_eq!(curve_hash(&[1.0, 1.0, 1.0]), None, "constant");
        // -0.0 and 0.0 differ in their bits: not constant.
        assert!(curve_hash(&[0.0, -0.0]).is_some());
        let k = 0x517c_c1b7_2722_0a95u64;
        let step = |h: u64, v: f64| (h.rotate_left(5) ^ v.to_bits()).wrapping_mul(k);
        assert_eq!(curve_hash(&[1.0, 2.0]), Some(step(step(2, 1.0), 2.0)));
        assert_eq!(Curve::kept(vec![1.0, f64::NAN]), (Curve::default(), None));
    }

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
        fn kept_in_one_pass_as_in_three(values in any_curve(), finite in any::<bool>()) {
            let values: Vec<f64> = if finite {
                values.into_iter().filter(|v| v.is_finite()).collect()
            } else {
                values
            };
            let (curve, hash) = Curve::kept(values.clone());
            let expected = if values.iter().all(|v| v.is_finite()) {
                (Curve::from(values.clone()), curve_hash(&values))
            } else {
                (Curve::default(), None)
            };
            prop_assert_eq!(hash, expected.1);
            prop_assert!(curve.identical(&expected.0));
            prop_assert_eq!(
                std::mem::discriminant(&curve),
                std::mem::discriminant(&expected.0)
            );
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
