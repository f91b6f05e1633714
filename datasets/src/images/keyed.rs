//! Keyed random streams: each stream is SplitMix64 started from a hash of its key (the
//! seed, a purpose tag and the item's numbers, through `SplitMix64::keyed`), so two keys
//! that differ anywhere give streams with no relation to each other — not shifts of one
//! stream, as `(seed ^ K) + index · GAMMA` would give.

use mlbench_schema::rng::SplitMix64;

/// The purposes a stream is drawn for: part of every key, so that no two purposes share a
/// stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub(crate) enum Purpose {
    /// The class of a fake ImageNet draw.
    FakeClass = 0x6661_6b65_636c_6173,
    /// The pixels of a fake ImageNet draw.
    FakePixels = 0x6661_6b65_7069_7865,
    /// A COCO image's size, boxes and pixels.
    Coco = 0x636f_636f_696d_6167,
    /// A BSDS500 image's ids, size, colours and shapes.
    Bsds = 0x6273_6473_3530_3069,
    /// The order of an epoch of a data set.
    Epoch = 0x6570_6f63_686f_7264,
    /// The random transforms of one item of one batch.
    Item = 0x6974_656d_7472_616e,
}

/// A stream of draws keyed by (seed, purpose, parts).
#[derive(Debug, Clone)]
pub struct Stream(SplitMix64);

impl Stream {
    /// The stream of `seed`, `purpose` and `parts`: the workspace's keyed SplitMix64
    /// ([`SplitMix64::keyed`]: each word folded into the state and the state mixed).
    pub(crate) fn keyed(seed: u64, purpose: Purpose, parts: &[u64]) -> Stream {
        let mut key = Vec::with_capacity(parts.len() + 2);
        key.extend([seed, purpose as u64]);
        key.extend_from_slice(parts);
        Stream(SplitMix64::keyed(&key))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [0, 1), 53 bits (Python's `random.random()`).
    pub fn unit(&mut self) -> f64 {
        self.0.unit_f64()
    }

    /// Uniform in [lo, hi) (Python's `random.uniform(lo, hi)`: lo + (hi − lo)·u).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform over the integers 0..n, without modulo bias (Lemire's multiply-and-reject).
    /// `n` must be positive.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "a draw below 0");
        let threshold = n.wrapping_neg() % n;
        loop {
            let product = u128::from(self.next_u64()) * u128::from(n);
            if (product as u64) >= threshold {
                return (product >> 64) as u64;
            }
        }
    }

    /// Uniform over lo..=hi (Python's `random.randint(lo, hi)`).
    pub fn randint(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below((hi - lo) as u64 + 1) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_differ_anywhere_give_other_streams() {
        let first = |s: &mut Stream| (0..4).map(|_| s.next_u64()).collect::<Vec<_>>();
        let a = first(&mut Stream::keyed(1, Purpose::Item, &[2, 3]));
        assert_eq!(a, first(&mut Stream::keyed(1, Purpose::Item, &[2, 3])));
        for other in [
            Stream::keyed(0, Purpose::Item, &[2, 3]),
            Stream::keyed(1, Purpose::Epoch, &[2, 3]),
            Stream::keyed(1, Purpose::Item, &[3, 2]),
            Stream::keyed(1, Purpose::Item, &[2, 3, 0]),
        ] {
            assert_ne!(a, first(&mut other.clone()));
        }
    }

    /// Consecutive item keys share no output: a stream keyed `(seed ^ K) + index · GAMMA`
    /// would give key i + 1 the outputs of key i shifted by one.
    #[test]
    fn consecutive_keys_share_no_outputs() {
        let outputs = |i: u64| {
            let mut s = Stream::keyed(7, Purpose::Item, &[i]);
            (0..64)
                .map(|_| s.next_u64())
                .collect::<std::collections::HashSet<_>>()
        };
        for i in 0..50 {
            assert!(
                outputs(i).is_disjoint(&outputs(i + 1)),
                "keys {i} and {}",
                i + 1
            );
        }
    }

    /// 60 000 draws below 6 fall evenly: the chi-square statistic with 5 degrees of
    /// freedom stays under 20.5 (its 0.999 quantile).
    #[test]
    fn draws_below_n_are_uniform() {
        let mut s = Stream::keyed(3, Purpose::Epoch, &[]);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[s.below(6) as usize] += 1;
        }
        let chi2: f64 = counts
            .iter()
            .map(|&c| (f64::from(c) - 10_000.0).powi(2) / 10_000.0)
            .sum();
        assert!(chi2 < 20.5, "{counts:?}");
        let mut r = Stream::keyed(3, Purpose::Epoch, &[1]);
        assert!(
            (0..1000)
                .map(|_| r.randint(2, 4))
                .all(|v| (2..=4).contains(&v))
        );
    }
}
