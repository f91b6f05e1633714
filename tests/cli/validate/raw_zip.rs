//! Zips written by hand, for what `ZipWriter` refuses to write: raw entries, CRC-32, and
//! deflate streams of zeros dense enough for zip bombs.

use std::path::Path;

/// CRC-32 (IEEE), bit by bit; small inputs only.
pub(super) fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// CRC-32 of `n` zero bytes without reading them: the register update for a zero byte
/// is linear over GF(2), so its `n`-th power is taken by squaring.
pub(super) fn crc32_of_zeros(n: u64) -> u32 {
    type Matrix = [u32; 32];
    let apply = |m: &Matrix, v: u32| {
        (0..32)
            .filter(|i| v >> i & 1 == 1)
            .fold(0, |acc, i| acc ^ m[i])
    };
    let compose = |a: &Matrix, b: &Matrix| -> Matrix { std::array::from_fn(|i| apply(a, b[i])) };
    let zero_byte = |mut crc: u32| {
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
        crc
    };
    let mut power: Matrix = std::array::from_fn(|i| zero_byte(1 << i));
    let mut result: Matrix = std::array::from_fn(|i| 1 << i);
    let mut n = n;
    while n > 0 {
        if n & 1 == 1 {
            result = compose(&power, &result);
        }
        power = compose(&power, &power);
        n >>= 1;
    }
    !apply(&result, !0)
}

/// One entry of a zip written by hand, for what `ZipWriter` refuses to write.
pub(super) struct RawEntry {
    pub(super) name: Vec<u8>,
    /// The bytes as stored in the archive (compressed when `method` is 8).
    pub(super) data: Vec<u8>,
    pub(super) method: u16,
    pub(super) crc: u32,
    pub(super) size: u32,
    pub(super) flags: u16,
    /// Points the central record at the local header of entry `n` instead of its own
    /// (entries sharing their data, as in an overlapping zip bomb); nothing is written.
    pub(super) shares: Option<usize>,
}

impl RawEntry {
    pub(super) fn stored(name: &[u8], bytes: &[u8]) -> RawEntry {
        RawEntry {
            name: name.to_vec(),
            data: bytes.to_vec(),
            method: 0,
            crc: crc32(bytes),
            size: bytes.len() as u32,
            flags: 0,
            shares: None,
        }
    }
}

/// Writes `entries` as a zip: local headers and data, central directory, end record.
pub(super) fn write_raw_zip(path: &Path, entries: &[RawEntry]) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut central = Vec::new();
    let mut offset = 0u32;
    let mut offsets = Vec::new();
    let le16 = |v: u16| v.to_le_bytes();
    let le32 = |v: u32| v.to_le_bytes();
    for e in entries {
        offsets.push(offset);
        let header_at = e.shares.map_or(offset, |n| offsets[n]);
        let mut local = Vec::new();
        local.extend(le32(0x0403_4b50));
        local.extend(le16(20));
        local.extend(le16(e.flags));
        local.extend(le16(e.method));
        local.extend(le16(0)); // time
        local.extend(le16(0x21)); // 1980-01-01
        local.extend(le32(e.crc));
        local.extend(le32(e.data.len() as u32));
        local.extend(le32(e.size));
        local.extend(le16(e.name.len() as u16));
        local.extend(le16(0));
        local.extend(&e.name);
        if e.shares.is_none() {
            out.write_all(&local).unwrap();
            out.write_all(&e.data).unwrap();
        }

        central.extend(le32(0x0201_4b50));
        central.extend(le16(3 << 8 | 20)); // made on Unix
        central.extend(le16(20));
        central.extend(le16(e.flags));
        central.extend(le16(e.method));
        central.extend(le16(0));
        central.extend(le16(0x21));
        central.extend(le32(e.crc));
        central.extend(le32(e.data.len() as u32));
        central.extend(le32(e.size));
        central.extend(le16(e.name.len() as u16));
        central.extend(le16(0)); // extra
        central.extend(le16(0)); // comment
        central.extend(le16(0)); // disk
        central.extend(le16(0)); // internal attributes
        central.extend(le32(0o100_644 << 16)); // a regular file, rw-r--r--
        central.extend(le32(header_at));
        central.extend(&e.name);
        if e.shares.is_none() {
            offset += (local.len() + e.data.len()) as u32;
        }
    }
    out.write_all(&central).unwrap();
    let mut end = Vec::new();
    end.extend(le32(0x0605_4b50));
    end.extend(le16(0));
    end.extend(le16(0));
    end.extend(le16(entries.len() as u16));
    end.extend(le16(entries.len() as u16));
    end.extend(le32(central.len() as u32));
    end.extend(le32(offset));
    end.extend(le16(0));
    out.write_all(&end).unwrap();
    out.flush().unwrap();
}

/// A raw deflate stream of `1 + 258·repeats` zero bytes in one dynamic-Huffman block: a
/// literal 0, then `repeats` copies of ⟨length 258, distance 1⟩ at two bits each (the
/// densest deflate allows, about 1:1030), then end of block.
pub(super) fn deflated_zeros(repeats: usize) -> Vec<u8> {
    deflated_zeros_diluted(repeats, 0)
}

/// As [`deflated_zeros`], with `literals` single zero bytes after each match, which brings
/// the ratio down to `8·(258 + literals) / (2 + 2·literals)`; `1 + (258 + literals)·repeats`
/// bytes in all.
pub(super) fn deflated_zeros_diluted(repeats: usize, literals: usize) -> Vec<u8> {
    struct Bits {
        out: Vec<u8>,
        acc: u64,
        n: u32,
    }
    impl Bits {
        fn put(&mut self, value: u32, len: u32) {
            self.acc |= u64::from(value) << self.n;
            self.n += len;
            while self.n >= 8 {
                self.out.push(self.acc as u8);
                self.acc >>= 8;
                self.n -= 8;
            }
        }
        /// A Huffman code, most significant bit first.
        fn code(&mut self, code: u32, len: u32) {
            let reversed = (0..len).fold(0, |r, i| r | (code >> i & 1) << (len - 1 - i));
            self.put(reversed, len);
        }
    }
    let mut b = Bits {
        out: Vec::with_capacity(repeats / 4 + 64),
        acc: 0,
        n: 0,
    };
    b.put(1, 1); // final block
    b.put(2, 2); // dynamic Huffman
    b.put(286 - 257, 5); // HLIT
    b.put(0, 5); // HDIST: one distance code
    b.put(18 - 4, 4); // HCLEN: 18 code-length codes
    // Code-length code: 18 → `0`, 1 → `10`, 2 → `11`.
    let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1];
    for symbol in order {
        b.put(
            match symbol {
                18 => 1,
                1 | 2 => 2,
                _ => 0,
            },
            3,
        );
    }
    let (len1, len2, zeros) = (
        |b: &mut Bits| b.code(2, 2),
        |b: &mut Bits| b.code(3, 2),
        |b: &mut Bits, n: u32| {
            b.code(0, 1);
            b.put(n - 11, 7);
        },
    );
    // Literal/length lengths: 0 → 2, 1..=255 → 0, 256 → 2, 257..=284 → 0, 285 → 1;
    // distance lengths: 0 → 1.
    len2(&mut b);
    zeros(&mut b, 138);
    zeros(&mut b, 117);
    len2(&mut b);
    zeros(&mut b, 28);
    len1(&mut b);
    len1(&mut b);
    // Canonical codes: 285 → `0`, literal 0 → `10`, end of block → `11`; distance 0 → `0`.
    b.code(2, 2);
    for _ in 0..repeats {
        b.put(0, 2);
        for _ in 0..literals {
            b.code(2, 2);
        }
    }
    b.code(3, 2);
    b.put(0, 7); // flush
    b.out
}
