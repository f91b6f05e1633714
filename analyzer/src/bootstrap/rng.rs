//! The bootstrap's random numbers: xoshiro256** seeded by SplitMix64, one stream per
//! (seed, names).

/// SplitMix64 (`mlbench_schema::rng`): expands one 64-bit seed into the state of
/// [`Xoshiro256`], as its authors recommend.
pub use mlbench_schema::rng::SplitMix64;

/// xoshiro256\*\* 1.0: fast, 256 bits of state, all output bits of good quality.
#[derive(Debug, Clone)]
pub struct Xoshiro256 {
    s: [u64; 4],
}

impl Xoshiro256 {
    /// A generator with its state filled by [`SplitMix64`] from `seed` (never all zero:
    /// SplitMix64 does not output four zeros in a row).
    pub fn seed_from_u64(seed: u64) -> Xoshiro256 {
        let mut sm = SplitMix64::new(seed);
        Xoshiro256 {
            s: [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()],
        }
    }

    /// A generator with the given state (for the reference test vectors).
    pub fn from_state(s: [u64; 4]) -> Xoshiro256 {
        Xoshiro256 { s }
    }

    /// The next output.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n` (`n ≥ 1`), without bias: Lemire's multiply-and-shift
    /// on the upper 32 bits of one output, redrawing in the rare rejected zone.
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        let n64 = u64::from(n);
        let mut m = (self.next_u64() >> 32) * n64;
        if (m as u32) < n {
            let threshold = n.wrapping_neg() % n.max(1);
            while (m as u32) < threshold {
                m = (self.next_u64() >> 32) * n64;
            }
        }
        (m >> 32) as u32
    }
}

/// 64-bit FNV-1a: a fixed, documented hash of names (std's hashers may change between
/// Rust versions, which would change every interval).
fn fnv1a(bytes: impl IntoIterator<Item = u8>, mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The generator of one named stream: FNV-1a of the names (each followed by a 0xFF
/// byte, which UTF-8 never contains, so `("ab", "c")` and `("a", "bc")` differ) XORed
/// with the first SplitMix64 output of `seed`, expanded by SplitMix64.
pub fn stream(seed: u64, names: &[&str]) -> Xoshiro256 {
    let mut h = 0xcbf2_9ce4_8422_2325;
    for name in names {
        h = fnv1a(name.bytes().chain([0xff]), h);
    }
    Xoshiro256::seed_from_u64(SplitMix64::new(seed).next_u64() ^ h)
}
