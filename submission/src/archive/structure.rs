//! What the zip crate reads past: the local headers, the entries' extents against the
//! file, the central directory's declared size, folder entries. The crate goes by the
//! central directory alone, so a local header could name another file (`../../evil`, for
//! a tool that trusts local headers), and a size could point past the end of the file,
//! without a word. Each disagreement is an `archive.inconsistent` fact.

use crate::fact::{Fact, fact};

use std::fs::File;
use std::os::unix::fs::FileExt;

/// The signatures of a local file header, of the end of central directory record, and
/// of the zip64 end of central directory locator.
const LOCAL: u32 = 0x0403_4b50;
const END: u32 = 0x0605_4b50;
const ZIP64_LOCATOR: u32 = 0x0706_4b50;

/// One entry as the central directory describes it.
pub(crate) struct Described<'a> {
    /// Its name, as the central directory has it (raw bytes).
    pub(crate) raw_name: &'a [u8],
    /// Its name for a fact.
    pub(crate) display: String,
    /// Where its local header starts.
    pub(crate) header_start: u64,
    /// Its compressed and uncompressed sizes.
    pub(crate) compressed: u64,
    pub(crate) size: u64,
    /// Whether it is a folder entry.
    pub(crate) is_dir: bool,
}

fn inconsistent(expected: impl Into<String>, found: impl Into<String>) -> Fact {
    fact("archive.inconsistent", expected, found)
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// The facts of one entry: its local header, its extent, a folder with data.
pub(crate) fn entry_findings(file: &File, len: u64, e: &Described) -> Vec<Fact> {
    let mut out = Vec::new();
    if e.is_dir && e.size > 0 {
        let fact = inconsistent("a folder entry without data", format!("{} bytes", e.size));
        out.push(fact.file(e.display.clone()));
    }
    let mut fixed = [0u8; 30];
    if file.read_exact_at(&mut fixed, e.header_start).is_err() || u32_at(&fixed, 0) != LOCAL {
        let expected = format!("a local header at byte {}", e.header_start);
        out.push(inconsistent(expected, "none there").file(e.display.clone()));
        return out;
    }
    let (name_len, extra_len) = (u16_at(&fixed, 26) as usize, u16_at(&fixed, 28) as u64);
    let mut local_name = vec![0u8; name_len];
    let name_read = file.read_exact_at(&mut local_name, e.header_start + 30);
    if name_read.is_err() || local_name != e.raw_name {
        let found = format!(
            "the local header names `{}`",
            String::from_utf8_lossy(&local_name)
        );
        let expected = "the central directory's name in the local header";
        out.push(inconsistent(expected, found).file(e.display.clone()));
    }
    let data_start = e.header_start + 30 + name_len as u64 + extra_len;
    if data_start.saturating_add(e.compressed) > len {
        let expected = format!("data within the file's {len} bytes");
        let found = format!(
            "{} compressed bytes from byte {data_start}: past the end",
            e.compressed
        );
        out.push(inconsistent(expected, found).file(e.display.clone()));
    }
    out
}

/// The fact of a central directory whose declared size is not its extent: from its
/// start to the record after it (the end record, or zip64's).
pub(crate) fn directory_finding(file: &File, len: u64, dir_start: u64) -> Option<Fact> {
    // The end record is in the last 22 + 65,535 bytes (its comment at most 64 KiB).
    let tail_len = len.min(22 + 65_535);
    let mut tail = vec![0u8; tail_len as usize];
    file.read_exact_at(&mut tail, len - tail_len).ok()?;
    let at = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| u32_at(&tail, i) == END)?;
    let end_at = len - tail_len + at as u64;
    let declared = u32_at(&tail, at + 12);
    if declared == u32::MAX {
        return None; // zip64: the size is in the zip64 record.
    }
    // With a zip64 locator just before it, the directory ends at the zip64 record.
    let zip64 = at >= 20 && u32_at(&tail, at - 20) == ZIP64_LOCATOR;
    if zip64 {
        return None;
    }
    let actual = end_at.checked_sub(dir_start)?;
    (u64::from(declared) != actual).then(|| {
        inconsistent(
            format!("a central directory of {declared} bytes (as the end record declares)"),
            format!("{actual} bytes from its start to the end record"),
        )
    })
}
