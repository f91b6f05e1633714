//! SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
//! OOPSLA 2014), the workspace's one small deterministic generator: the bootstrap seeds
//! xoshiro256** with it (`analyzer::bootstrap`), the runner's synthetic images, batches and
//! games draw from it, and the example submission generator makes its noise with it. Not
//! for cryptography; every stream is fixed by its seed on every platform.

/// The state's increment: 2⁶⁴ ÷ φ, odd (the generator's "golden gamma").
pub const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// Where [`SplitMix64::keyed`] starts: the first 64 bits of π's fraction.
const KEY_ORIGIN: u64 = 0x243f_6a88_85a3_08d3;

/// SplitMix64: a 64-bit state advanced by [`GAMMA`], each output a mix of the state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose state is `state` (its first output mixes `state + GAMMA`).
    pub const fn new(state: u64) -> SplitMix64 {
        SplitMix64 { state }
    }

    /// The stream of a key (a seed, a step, a worker, …): each word is folded into the
    /// state and the state replaced by one mixed output, so that keys one apart give
    /// unrelated streams. Two states a small multiple of [`GAMMA`] apart are one stream
    /// shifted (`seed + k·GAMMA` makes stream k + 1 stream k one output later); mixed
    /// states are that close with negligible probability.
    pub fn keyed(words: &[u64]) -> SplitMix64 {
        let mut state = KEY_ORIGIN;
        for &word in words {
            state = SplitMix64::new(state ^ word).next_u64();
        }
        SplitMix64::new(state)
    }

    /// Folds `word` into the state (XOR), for streams keyed by several numbers.
    pub fn xor_state(&mut self, word: u64) {
        self.state ^= word;
    }

    /// The next output.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 bits: the output's top 53 bits ÷ 2⁵³.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [0, 1) with 24 bits: the output's top 24 bits ÷ 2²⁴.
    pub fn unit_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference outputs of SplitMix64 seeded with 1234567 (the values of Vigna's
    /// `splitmix64.c`, as the `rand_xoshiro` crate's test vectors list them).
    #[test]
    fn the_reference_stream() {
        let mut g = SplitMix64::new(1_234_567);
        let want = [
            6_457_827_717_110_365_317,
            3_203_168_211_198_807_973,
            9_817_491_932_198_370_423,
            4_593_380_528_125_082_431,
            16_408_922_859_458_223_821,
        ];
        for w in want {
            assert_eq!(g.next_u64(), w);
        }
    }

    /// Draws of `n` outputs from each of the streams `make(0..streams)`.
    fn draws(streams: u64, n: usize, make: impl Fn(u64) -> SplitMix64) -> Vec<Vec<u64>> {
        let each = |k| {
            let mut g = make(k);
            (0..n).map(|_| g.next_u64()).collect()
        };
        (0..streams).map(each).collect()
    }

    /// How many outputs of `streams` appear in another stream too.
    fn shared(streams: &[Vec<u64>]) -> usize {
        let mut seen = std::collections::HashMap::new();
        for (k, s) in streams.iter().enumerate() {
            for v in s {
                seen.entry(*v)
                    .or_insert_with(std::collections::BTreeSet::new)
                    .insert(k);
            }
        }
        seen.values().filter(|ks| ks.len() > 1).count()
    }

    /// Keyed streams of consecutive keys share no output, where states `GAMMA` apart
    /// share all but one (the check would catch the shifted streams).
    #[test]
    fn keyed_streams_of_consecutive_keys_are_unrelated() {
        let keyed = draws(64, 4096, |k| SplitMix64::keyed(&[42, k]));
        assert_eq!(shared(&keyed), 0);
        let shifted = draws(2, 4096, |k| SplitMix64::new(42u64.wrapping_add(k * GAMMA)));
        assert_eq!(shared(&shifted), 4095);
        // The key is the whole list: order and every word count.
        let a = SplitMix64::keyed(&[1, 2]).next_u64();
        assert_ne!(a, SplitMix64::keyed(&[2, 1]).next_u64());
        assert_ne!(a, SplitMix64::keyed(&[1, 2, 0]).next_u64());
        assert_eq!(a, SplitMix64::keyed(&[1, 2]).next_u64());
    }

    /// Labels drawn as a loader draws them (`next % classes`, 16 per batch, one keyed
    /// stream per batch) cover the classes as independent uniform draws do: over 24
    /// batches of 1000 classes, about 1000·(1 − 0.999³⁸⁴) ≈ 319 distinct labels (sd ≈ 9);
    /// and over 10 classes the chi-square statistic of 16,000 draws stays below its
    /// 99.9 % quantile, 27.88 (9 degrees of freedom).
    #[test]
    fn labels_from_keyed_batches_are_uniform() {
        let labels = |classes: u64, batches: u64| -> Vec<u64> {
            let streams = draws(batches, 16, |k| SplitMix64::keyed(&[7, k]));
            streams.into_iter().flatten().map(|v| v % classes).collect()
        };
        let distinct: std::collections::BTreeSet<u64> = labels(1000, 24).into_iter().collect();
        assert!((280..=360).contains(&distinct.len()), "{}", distinct.len());
        let mut counts = [0u64; 10];
        for l in labels(10, 1000) {
            counts[l as usize] += 1;
        }
        let expected = 1600.0;
        let chi2: f64 = (counts.iter())
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        assert!(chi2 < 27.88, "{chi2}: {counts:?}");
    }

    #[test]
    fn units_lie_in_the_unit_interval_and_take_the_top_bits() {
        let mut g = SplitMix64::new(7);
        let mut twin = g.clone();
        for _ in 0..1000 {
            let (u, raw) = (g.unit_f64(), twin.next_u64());
            assert!((0.0..1.0).contains(&u));
            assert_eq!(u, (raw >> 11) as f64 / 9_007_199_254_740_992.0);
        }
        let mut g = SplitMix64::new(7);
        let mut twin = g.clone();
        let (u, raw) = (g.unit_f32(), twin.next_u64());
        assert_eq!(u, (raw >> 40) as f32 / 16_777_216.0);
        // Folding a word into the state is the XOR of the two states.
        let (mut a, b) = (SplitMix64::new(0b1100), SplitMix64::new(0b0110));
        a.xor_state(0b1010);
        assert_eq!(a, b);
    }
}
