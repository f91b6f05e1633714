//! What the text and table makers share: a seeded generator and the writing of a file
//! under the data root.

use crate::DataError;
use mlbench_schema::rng::SplitMix64;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The workspace's SplitMix64 (`mlbench_schema::rng`), keyed by the seed and a stream (one
/// per data set and file, so that the sets made from one seed are unrelated), with the
/// draws the makers need.
pub(crate) struct Rng(SplitMix64);

impl Rng {
    /// A generator for `seed`, on the stream `stream`.
    pub(crate) fn new(seed: u64, stream: u64) -> Rng {
        Rng(SplitMix64::keyed(&[seed, stream]))
    }

    /// The next 64 bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..n` (`n` > 0), without modulo bias (Lemire's multiply and reject).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        let threshold = n.wrapping_neg() % n;
        loop {
            let wide = u128::from(self.next_u64()) * u128::from(n);
            if (wide as u64) >= threshold {
                return (wide >> 64) as u64;
            }
        }
    }

    /// A number in `[0, 1)` with 53 random bits.
    pub(crate) fn unit(&mut self) -> f64 {
        self.0.unit_f64()
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// A discrete distribution over `0..weights.len()`, drawn by binary search of its
/// cumulative weights.
pub(crate) struct Weighted(Vec<f64>);

impl Weighted {
    /// The distribution of `weights` (not all zero).
    pub(crate) fn new(weights: impl IntoIterator<Item = f64>) -> Weighted {
        let mut total = 0.0;
        let cumulative = weights
            .into_iter()
            .map(|w| {
                total += w;
                total
            })
            .collect();
        Weighted(cumulative)
    }

    /// How many outcomes.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The probability of outcome `i`.
    pub(crate) fn probability(&self, i: usize) -> f64 {
        let below = if i == 0 { 0.0 } else { self.0[i - 1] };
        (self.0[i] - below) / self.0[self.0.len() - 1]
    }

    /// One draw.
    pub(crate) fn draw(&self, rng: &mut Rng) -> usize {
        let total = self.0.last().copied().unwrap_or(0.0);
        let x = rng.unit() * total;
        self.0.partition_point(|&c| c <= x).min(self.0.len() - 1)
    }
}

/// Writes `bytes` to `root/relative`, making the folders it needs; returns `relative`.
pub(crate) fn write(root: &Path, relative: &str, bytes: &[u8]) -> Result<PathBuf, DataError> {
    let mut file = create(root, relative)?;
    let path = root.join(relative);
    file.write_all(bytes).map_err(DataError::io(&path))?;
    file.flush().map_err(DataError::io(&path))?;
    Ok(PathBuf::from(relative))
}

/// A buffered new file at `root/relative` (its folders made).
pub(crate) fn create(
    root: &Path,
    relative: &str,
) -> Result<std::io::BufWriter<std::fs::File>, DataError> {
    let path = root.join(relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(DataError::io(parent))?;
    }
    let file = std::fs::File::create(&path).map_err(DataError::io(&path))?;
    Ok(std::io::BufWriter::with_capacity(1 << 20, file))
}

/// Reads `path` whole.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, DataError> {
    std::fs::read(path).map_err(DataError::io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_reaches_every_value() {
        let mut rng = Rng::new(7, 1);
        let mut seen = [0u32; 5];
        for _ in 0..1000 {
            seen[rng.below(5) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 150), "{seen:?}");
    }

    #[test]
    fn weighted_never_draws_a_zero_weight() {
        let dist = Weighted::new([0.0, 1.0, 0.0, 3.0]);
        let mut rng = Rng::new(1, 2);
        let mut seen = [0u32; 4];
        for _ in 0..4000 {
            seen[dist.draw(&mut rng)] += 1;
        }
        assert_eq!((seen[0], seen[2]), (0, 0));
        assert!((2700..3300).contains(&seen[3]), "{seen:?}");
    }
}
