//! Sine waves (toy_lstm). The suite's `generate_sine_wave.py` writes
//! `$DATA_DIRECTORY/time_series_prediction/traindata.pt`: `torch.save` of a NumPy array
//! (a pickle of `numpy.ndarray`, float64, shape 100 × 1000) of
//! `sin((arange(1000) + randint(-80, 80, 100)[:, None]) / 20)` after `np.random.seed(2)`;
//! train.py reads it with `torch.load` (rows 3… train, rows 0–2 test).
//!
//! The values are fixed by that seed, so the maker recomputes them exactly (NumPy's
//! legacy `RandomState`: MT19937 seeded with 2; a bounded integer is the next 32-bit
//! output masked to 8 bits until it is under 160) and writes them as
//! `time_series_prediction/traindata.npy` (NumPy's documented `.npy` format, version 1.0,
//! `<f8`, C order), which `numpy.load` reads and this module's [`read`] reads. A
//! `traindata.pt` would need a pickle writer for `numpy.core.multiarray._reconstruct`
//! inside torch's zip container, and a pickle reader on the runner's side; not made.

use crate::make;
use crate::{DataError, Scale};
use std::path::{Path, PathBuf};

/// The folder under the data root.
pub const FOLDER: &str = "time_series_prediction";
/// The file written.
pub const FILE: &str = "traindata.npy";
/// The script's seed (`np.random.seed(2)`).
pub const SEED: u32 = 2;
/// The script's period factor `T`.
pub const T: f64 = 20.0;

/// Waves and samples per wave: the script's 100 × 1000, or 10 × 100 (the first ten
/// waves' first hundred samples).
pub fn shape(scale: Scale) -> (usize, usize) {
    match scale {
        Scale::Full => (100, 1000),
        Scale::Smoke => (10, 100),
    }
}

/// The waves: `rows × cols` float64, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Waves {
    /// Waves.
    pub rows: usize,
    /// Samples per wave.
    pub cols: usize,
    /// The samples.
    pub data: Vec<f64>,
}

/// The script's waves, computed: each row `sin((j + offset) / T)` for `j` in `0..cols`.
pub fn waves(rows: usize, cols: usize) -> Waves {
    let mut mt = Mt19937::new(SEED);
    let offsets: Vec<i64> = (0..rows)
        .map(|_| {
            loop {
                let v = mt.next_u32() & 0xFF;
                if v <= 159 {
                    break i64::from(v) - 80;
                }
            }
        })
        .collect();
    let data = offsets
        .iter()
        .flat_map(|&o| (0..cols as i64).map(move |j| ((j + o) as f64 / 1.0 / T).sin()))
        .collect();
    Waves { rows, cols, data }
}

/// Writes `time_series_prediction/traindata.npy`. `seed` is not used: the script's data
/// are fixed by its own seed.
pub fn prepare(root: &Path, _seed: u64, scale: Scale) -> Result<Vec<PathBuf>, DataError> {
    let (rows, cols) = shape(scale);
    let waves = waves(rows, cols);
    let mut bytes = npy_header(rows, cols);
    for v in &waves.data {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    Ok(vec![make::write(
        root,
        &format!("{FOLDER}/{FILE}"),
        &bytes,
    )?])
}

/// The header of a version 1.0 `.npy` file of `rows × cols` little-endian float64, C
/// order: magic, version, header length, the dictionary padded with spaces and a newline
/// to a multiple of 64 bytes.
pub fn npy_header(rows: usize, cols: usize) -> Vec<u8> {
    let dict = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    let unpadded = 10 + dict.len() + 1;
    let padded = unpadded.div_ceil(64) * 64;
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&((padded - 10) as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.resize(padded - 1, b' ');
    out.push(b'\n');
    out
}

/// Reads `root/time_series_prediction/traindata.npy` (a 2-D `<f8` C-order `.npy`).
pub fn read(root: &Path) -> Result<Waves, DataError> {
    let path = root.join(FOLDER).join(FILE);
    let bytes = make::read(&path)?;
    let bad = |at: usize, what: &str| DataError::Format {
        path: path.clone(),
        place: format!("byte {at}"),
        what: what.to_owned(),
    };
    if bytes.len() < 10 || &bytes[..8] != b"\x93NUMPY\x01\x00" {
        return Err(bad(0, "not a version 1.0 .npy file"));
    }
    let length = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let header = bytes
        .get(10..10 + length)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or_else(|| bad(8, "the header is cut short or not text"))?;
    if !header.contains("'descr': '<f8'") || !header.contains("'fortran_order': False") {
        return Err(bad(10, "expected little-endian float64 ('<f8') in C order"));
    }
    let dims = header
        .split_once("'shape': (")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(dims, _)| {
            dims.split(',')
                .filter_map(|d| d.trim().parse().ok())
                .collect()
        })
        .unwrap_or_else(Vec::<usize>::new);
    let [rows, cols] = dims[..] else {
        return Err(bad(10, "expected a two-dimensional shape"));
    };
    let body = &bytes[10 + length..];
    if Some(body.len()) != rows.checked_mul(cols).and_then(|n| n.checked_mul(8)) {
        let what = format!("{} bytes of data for shape ({rows}, {cols})", body.len());
        return Err(bad(10 + length, &what));
    }
    let data = body
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    Ok(Waves { rows, cols, data })
}

/// The 32-bit Mersenne Twister (Matsumoto and Nishimura), seeded as `init_genrand`.
struct Mt19937 {
    state: [u32; 624],
    at: usize,
}

impl Mt19937 {
    fn new(seed: u32) -> Mt19937 {
        let mut state = [0u32; 624];
        state[0] = seed;
        for i in 1..624 {
            let prev = state[i - 1];
            state[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 { state, at: 624 }
    }

    fn next_u32(&mut self) -> u32 {
        if self.at == 624 {
            for i in 0..624 {
                let y = (self.state[i] & 0x8000_0000) | (self.state[(i + 1) % 624] & 0x7FFF_FFFF);
                let mut v = self.state[(i + 397) % 624] ^ (y >> 1);
                if y & 1 == 1 {
                    v ^= 0x9908_B0DF;
                }
                self.state[i] = v;
            }
            self.at = 0;
        }
        let mut y = self.state[self.at];
        self.at += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9D2C_5680;
        y ^= (y << 15) & 0xEFC6_0000;
        y ^ (y >> 18)
    }
}
