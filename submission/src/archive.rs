//! Zip intake: the archive is read in place, under the [`Limits`]: every entry is checked
//! and its read bounded first (`list_zip`, which the front's [`crate::intake::list_zip`]
//! turns into a listing), then the entries are inflated in parallel, into memory
//! ([`crate::intake::read_zip`]) or one at a time per thread for the validation to parse as
//! it goes (the validator's `validate_listing`). Whatever is wrong inside the archive
//! becomes a [`Fact`] and the entry is skipped; only a file that cannot be opened at all
//! is an [`IntakeError`].

use crate::fact::{Fact, fact};
use crate::source::{IntakeError, Limits, Settled};

use shared_file::SharedFile;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use zip::ZipArchive;

mod shared_file;

use mlbench_schema::read_buffer::{Recording, with_thread_buffer};
use mlbench_schema::reader::Content;
mod structure;

/// Entries up to this uncompressed size are exempt from the ratio check: small JSON files
/// compress very well and cannot exhaust memory anyway.
pub const RATIO_EXEMPT_BYTES: u64 = 1 << 20;

/// The most preallocated for one entry: its declared size is not trusted.
const MAX_PREALLOCATION: u64 = 16 << 20;

/// Unix file-type bits of the mode, and the symbolic-link type.
const S_IFMT: u32 = 0o170_000;
const S_IFLNK: u32 = 0o120_000;

/// Why an entry name is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameProblem {
    /// Nothing but `.` and `/` (a file needs a name).
    Empty,
    /// Starts with `/`.
    Absolute,
    /// Starts with a drive letter (`C:`).
    DriveLetter,
    /// Holds a `\`, which Windows tools read as a separator (`..\x`, `\\server\x`).
    Backslash,
    /// Holds a NUL byte, which truncates the name in C tools.
    Nul,
    /// Holds a `..` component.
    ParentDir,
}

impl NameProblem {
    /// What is wrong, for the fact's `found`.
    pub fn describe(self) -> &'static str {
        match self {
            NameProblem::Empty => "an empty name",
            NameProblem::Absolute => "an absolute path",
            NameProblem::DriveLetter => "a path with a drive letter",
            NameProblem::Backslash => "a path with a backslash",
            NameProblem::Nul => "a name with a NUL byte",
            NameProblem::ParentDir => "a path with a `..` component",
        }
    }
}

/// Checks an entry name and normalises it: `/`-separated, `.` and empty components dropped
/// (`./a//b` becomes `a/b`). The result may be empty (for `./`), which only a directory
/// entry may be.
pub fn normalize_entry_name(name: &str) -> Result<String, NameProblem> {
    if name.contains('\0') {
        return Err(NameProblem::Nul);
    }
    if name.contains('\\') {
        return Err(NameProblem::Backslash);
    }
    if name.starts_with('/') {
        return Err(NameProblem::Absolute);
    }
    let bytes = name.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(NameProblem::DriveLetter);
    }
    let mut parts = Vec::new();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(NameProblem::ParentDir),
            _ => parts.push(part),
        }
    }
    Ok(parts.join("/"))
}

/// What is needed of an entry's central-directory record before reading it.
struct EntryMeta {
    raw_name: Vec<u8>,
    header_start: u64,
    is_dir: bool,
    enclosed: bool,
    mode: Option<u32>,
    encrypted: bool,
    size: u64,
    compressed: u64,
}

/// Why an entry's data was not taken.
#[derive(Debug, Clone)]
pub enum ReadProblem {
    /// More bytes than the cap allowed.
    OverCap,
    /// Decompression, CRC or I/O error.
    Corrupt(String),
    /// Fewer or more bytes than the header declared without a decoding error (defensive:
    /// the zip crate's CRC check normally catches it). The bytes are dropped at once, so
    /// entries read in parallel never hold more than one entry per thread.
    WrongSize(u64),
}

/// A zip archive listed: its entries' paths (sorted, in the order of `source`'s reads),
/// what was found before and after reading them, and the archive to read them from
/// (`None`: it could not be opened, only facts).
pub(crate) struct ZipListing {
    pub(crate) paths: Vec<String>,
    pub(crate) head: Vec<Fact>,
    pub(crate) tail: Vec<Fact>,
    pub(crate) source: Option<ZipSource>,
}

/// Lists a zip archive without inflating anything: every entry is checked against the
/// limits and its read bounded, as `intake::read_zip` reads them. The entries whose data
/// then turn out damaged are reported when read.
pub(crate) fn list_zip(path: &Path, limits: &Limits) -> Result<ZipListing, IntakeError> {
    let (file, archive_len) = open_zip(path)?;
    // A second handle for the checks of what the zip crate reads past (`structure`).
    let raw_file = file.try_clone().ok();
    let mut facts = Vec::new();
    let archive = match ZipArchive::new(SharedFile::new(file, archive_len)) {
        Ok(archive) => archive,
        Err(e) => {
            facts.push(fact("archive.unreadable", "a zip archive", e.to_string()));
            return Ok(ZipListing {
                paths: Vec::new(),
                head: facts,
                tail: Vec::new(),
                source: None,
            });
        }
    };
    if let Some(raw) = &raw_file {
        let dir_start = archive.central_directory_start();
        facts.extend(structure::directory_finding(raw, archive_len, dir_start));
    }
    if archive.has_duplicate_names() {
        // The zip crate keeps one entry per exact name, so the repeats are found by
        // walking the central directory again.
        report_exact_duplicates(path, archive.central_directory_start(), &mut facts);
    }
    let mut budgets = Budgets::new(limits, archive_len);
    let mut planned: Vec<(String, PlannedRead)> = Vec::new();
    for index in 0..archive.len() {
        let Some(meta) = entry_meta(&archive, index, &mut facts) else {
            continue;
        };
        if let Some(raw) = &raw_file {
            let described = structure::Described {
                raw_name: &meta.raw_name,
                display: String::from_utf8_lossy(&meta.raw_name).into_owned(),
                header_start: meta.header_start,
                compressed: meta.compressed,
                size: meta.size,
                is_dir: meta.is_dir,
            };
            facts.extend(structure::entry_findings(raw, archive_len, &described));
        }
        let Some(path) = check_name(&meta, &mut facts) else {
            continue;
        };
        if meta.is_dir {
            continue;
        }
        match budgets.judge(index, &meta, &path, &mut facts) {
            Verdict::Take(read) => planned.push((path, read)),
            Verdict::Skip => {}
            Verdict::Stop => break,
        }
    }
    // Reported after the entries that fail to read, as when they were read here.
    let mut tail = Vec::new();
    if budgets.file_entries > limits.max_files {
        tail.push(fact(
            "archive.too-many-files",
            format!("at most {} files", limits.max_files),
            format!("{} files", budgets.file_entries),
        ));
    }
    // The listing's order is the paths' (names are unique: repeats were refused).
    planned.sort_by(|a, b| a.0.cmp(&b.0));
    let (paths, reads) = planned.into_iter().unzip();
    let source = ZipSource {
        archive,
        reads,
        limits: *limits,
    };
    Ok(ZipListing {
        paths,
        head: facts,
        tail,
        source: Some(source),
    })
}

/// The archive opened as a regular file (never a FIFO or a device), and its length.
fn open_zip(path: &Path) -> Result<(File, u64), IntakeError> {
    let links = mlbench_schema::read_buffer::Links::Follow;
    let opened = mlbench_schema::read_buffer::open_regular(path, links);
    let file = opened.map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => IntakeError::NotFound(path.to_path_buf()),
        _ => IntakeError::Io {
            path: path.to_path_buf(),
            source,
        },
    })?;
    let archive_len = file.metadata().map_or(0, |m| m.len());
    Ok((file, archive_len))
}

/// What the central directory says of entry `index`; `None` when it cannot be read
/// (an `archive.corrupt` fact).
fn entry_meta(
    archive: &ZipArchive<SharedFile>,
    index: usize,
    facts: &mut Vec<Fact>,
) -> Option<EntryMeta> {
    match archive.by_index_data(index) {
        Ok(entry) => Some(EntryMeta {
            raw_name: entry.name_raw().to_vec(),
            header_start: entry.header_start(),
            is_dir: entry.is_dir(),
            enclosed: entry.enclosed_name().is_some(),
            mode: entry.unix_mode(),
            encrypted: entry.encrypted(),
            size: entry.size(),
            compressed: entry.compressed_size(),
        }),
        Err(e) => {
            facts.push(fact(
                "archive.corrupt",
                "a readable entry",
                format!("entry {index}: {e}"),
            ));
            None
        }
    }
}

/// What becomes of an entry of the listing.
enum Verdict {
    /// Read it, bounded.
    Take(PlannedRead),
    /// Leave it out (a fact says why, or it is past the file count).
    Skip,
    /// Stop listing: the archive as a whole is over its ratio.
    Stop,
}

/// The names taken and what is left of the limits as the entries are listed.
struct Budgets<'l> {
    limits: &'l Limits,
    archive_len: u64,
    seen: HashSet<String>,
    /// Uncompressed bytes left under `max_bytes`.
    budget: u64,
    /// Uncompressed bytes left under the whole archive's ratio: entries may share their
    /// compressed data (an overlapping bomb) and each stay under the per-entry ratio.
    archive_budget: u64,
    /// File entries seen (past `max_files` they are counted, not read).
    file_entries: usize,
}

impl<'l> Budgets<'l> {
    fn new(limits: &'l Limits, archive_len: u64) -> Budgets<'l> {
        Budgets {
            limits,
            archive_len,
            seen: HashSet::new(),
            budget: limits.max_bytes,
            archive_budget: RATIO_EXEMPT_BYTES.max(archive_len.saturating_mul(limits.max_ratio)),
            file_entries: 0,
        }
    }

    /// The verdict on a file entry named `path`: links, encryption, repeats, the count,
    /// the ratios and the budgets, in that order.
    fn judge(
        &mut self,
        index: usize,
        meta: &EntryMeta,
        path: &str,
        facts: &mut Vec<Fact>,
    ) -> Verdict {
        let limits = self.limits;
        let refuse = |facts: &mut Vec<Fact>, fact: Fact| {
            facts.push(fact.file(path.to_owned()));
            Verdict::Skip
        };
        if meta.mode.is_some_and(|m| m & S_IFMT == S_IFLNK) {
            let refused = fact("archive.symlink", "a regular file", "a symbolic link");
            return refuse(facts, refused);
        }
        if meta.encrypted {
            let refused = fact(
                "archive.encrypted",
                "an unencrypted entry",
                "an encrypted entry",
            );
            return refuse(facts, refused);
        }
        if !self.seen.insert(path.to_owned()) {
            let found = format!(
                "another entry named {}",
                String::from_utf8_lossy(&meta.raw_name)
            );
            let refused = fact("archive.duplicate", "each name once", found);
            return refuse(facts, refused);
        }
        self.file_entries += 1;
        if self.file_entries > limits.max_files {
            return Verdict::Skip;
        }
        if ratio_exceeded(meta.size, meta.compressed, limits.max_ratio) {
            return refuse(facts, ratio_finding(limits, meta.size, meta.compressed));
        }
        if meta.size > self.budget {
            return refuse(facts, too_large_finding(limits, meta.size));
        }
        if meta.size > self.archive_budget {
            refuse(facts, archive_ratio_finding(limits, self.archive_len));
            // Whatever follows is built from the same few bytes: stop here.
            return Verdict::Stop;
        }
        // The header may lie, so the read itself is bounded too: by what is left of the
        // budgets and by the entry's ratio, whichever is smallest. The budgets count the
        // declared sizes of the entries taken for reading (a read that then fails does not
        // give its share back), so every cap is known before any entry is inflated.
        let ratio_cap = RATIO_EXEMPT_BYTES.max(meta.compressed.saturating_mul(limits.max_ratio));
        let cap = self.budget.min(ratio_cap).min(self.archive_budget);
        let read = PlannedRead {
            index,
            cap,
            cap_is_budget: cap == self.budget,
            size: meta.size,
            compressed: meta.compressed,
        };
        self.budget -= meta.size;
        self.archive_budget -= meta.size;
        Verdict::Take(read)
    }
}

/// The archive behind a [`Listing`]: its parsed directory and the reads planned, in the
/// listing's order. Clones share the open file and the directory.
#[derive(Debug, Clone)]
pub(crate) struct ZipSource {
    archive: ZipArchive<SharedFile>,
    reads: Vec<PlannedRead>,
    limits: Limits,
}

impl ZipSource {
    /// The archive, to clone once per reading thread: each clone reads at positions of its
    /// own, the parsed directory is shared.
    pub(crate) fn archive(&self) -> &ZipArchive<SharedFile> {
        &self.archive
    }

    /// Inflates the `i`-th entry of the listing into `buffer` (cleared first) through
    /// `archive` (a clone of [`Self::archive`]), bounded by its cap and checked against
    /// its declared size.
    pub(crate) fn read_into(
        &self,
        archive: &mut ZipArchive<SharedFile>,
        i: usize,
        buffer: &mut Vec<u8>,
    ) -> Result<(), ReadProblem> {
        let read = &self.reads[i];
        read_entry(archive, read.index, read.cap, read.size, buffer)?;
        if buffer.len() as u64 != read.size {
            return Err(ReadProblem::WrongSize(buffer.len() as u64));
        }
        Ok(())
    }

    /// Calls `f` with the content of the `i`-th entry of the listing: its bytes, inflated
    /// into this thread's buffer, or, above `STREAM_ABOVE` bytes (declared), a stream of
    /// it, read on to its end after `f` so that its CRC and size are checked alike.
    /// Returns its length with `f`'s result.
    pub(crate) fn with_content<T>(
        &self,
        archive: &mut ZipArchive<SharedFile>,
        i: usize,
        f: impl FnOnce(Content<'_>) -> T,
    ) -> Result<(u64, T), ReadProblem> {
        let read = &self.reads[i];
        if read.size <= mlbench_schema::reader::stream_above() {
            return with_thread_buffer(|buffer| {
                self.read_into(archive, i, buffer)?;
                Ok((buffer.len() as u64, f(Content::Bytes(buffer))))
            });
        }
        let entry = archive
            .by_index(read.index)
            .map_err(|e| ReadProblem::Corrupt(e.to_string()))?;
        let mut stream = Recording::new(entry.take(read.cap.saturating_add(1)));
        let out = f(Content::Stream(&mut stream));
        // What the parse left unread, read too: the CRC is checked at the end.
        let _ = std::io::copy(&mut stream, &mut std::io::sink());
        if let Some(e) = stream.failed {
            return Err(ReadProblem::Corrupt(e.to_string()));
        }
        if stream.read > read.cap {
            return Err(ReadProblem::OverCap);
        }
        if stream.read != read.size {
            return Err(ReadProblem::WrongSize(stream.read));
        }
        Ok((stream.read, out))
    }

    /// The facts of the entries that failed to read (indices into the listing, whose
    /// paths are `paths`, with why), in the archive's order, and those entries.
    pub(crate) fn settle(
        &self,
        paths: &[String],
        failed: impl Iterator<Item = (usize, ReadProblem)>,
    ) -> Settled {
        let mut failed: Vec<(usize, ReadProblem)> = failed.collect();
        failed.sort_by_key(|(i, _)| self.reads[*i].index);
        let limits = &self.limits;
        let mut settled = Settled::default();
        for (i, problem) in failed {
            let (read, path) = (&self.reads[i], paths[i].clone());
            settled.facts.push(match problem {
                ReadProblem::WrongSize(len) => fact(
                    "archive.corrupt",
                    format!("{} bytes (declared in the header)", read.size),
                    format!("{len} bytes"),
                )
                .file(path),
                // Only if the zip crate stopped honouring the declared size; the cap held.
                ReadProblem::OverCap if read.cap_is_budget => {
                    too_large_finding(limits, read.cap.saturating_add(1)).file(path)
                }
                ReadProblem::OverCap => {
                    ratio_finding(limits, read.cap.saturating_add(1), read.compressed).file(path)
                }
                ReadProblem::Corrupt(message) => {
                    fact("archive.corrupt", "an intact entry", message.as_str()).file(path)
                }
            });
            settled.dropped.push(i);
        }
        settled.dropped.sort_unstable();
        settled
    }

    /// The same source without the entries `keep` says to leave out.
    pub(crate) fn retain(&self, keep: &[bool]) -> ZipSource {
        ZipSource {
            archive: self.archive.clone(),
            reads: self
                .reads
                .iter()
                .zip(keep)
                .filter(|(_, keep)| **keep)
                .map(|(read, _)| read.clone())
                .collect(),
            limits: self.limits,
        }
    }
}

/// The entry's normalised path, or `None` after reporting why its name is refused.
fn check_name(meta: &EntryMeta, facts: &mut Vec<Fact>) -> Option<String> {
    let Ok(name) = std::str::from_utf8(&meta.raw_name) else {
        facts.push(
            fact(
                "archive.name-encoding",
                "a UTF-8 name",
                "a name that is not valid UTF-8",
            )
            .file(String::from_utf8_lossy(&meta.raw_name)),
        );
        return None;
    };
    let problem = match normalize_entry_name(name) {
        Ok(path) if path.is_empty() && !meta.is_dir => NameProblem::Empty,
        // Belt and braces: the zip crate's own check must agree.
        Ok(_) if !meta.is_dir && !meta.enclosed => NameProblem::ParentDir,
        Ok(path) => return Some(path),
        Err(problem) => problem,
    };
    facts.push(
        fact(
            "archive.unsafe-path",
            "a relative path inside the archive",
            problem.describe(),
        )
        .file(name),
    );
    None
}

/// Whether an entry of `size` bytes compressed to `compressed` is a likely bomb.
fn ratio_exceeded(size: u64, compressed: u64, max_ratio: u64) -> bool {
    size > RATIO_EXEMPT_BYTES && size > compressed.saturating_mul(max_ratio)
}

fn ratio_finding(limits: &Limits, size: u64, compressed: u64) -> Fact {
    fact(
        "archive.ratio",
        format!(
            "a compression ratio of at most {} (--max-ratio)",
            limits.max_ratio
        ),
        format!("at least {size} bytes from {compressed} compressed"),
    )
}

fn archive_ratio_finding(limits: &Limits, archive_len: u64) -> Fact {
    fact(
        "archive.ratio",
        format!(
            "at most {} times the archive's {archive_len} bytes in all (--max-ratio)",
            limits.max_ratio
        ),
        "more, with this entry (entries sharing compressed data?)",
    )
}

fn too_large_finding(limits: &Limits, size: u64) -> Fact {
    fact(
        "archive.too-large",
        format!("at most {} bytes in all (--max-bytes)", limits.max_bytes),
        format!("{size} bytes in this entry, over what is left"),
    )
}

/// An entry taken for reading, with the most bytes it may inflate to.
#[derive(Debug, Clone)]
struct PlannedRead {
    index: usize,
    cap: u64,
    /// Whether the cap is the byte budget (an overrun is then "too large", else the ratio).
    cap_is_budget: bool,
    size: u64,
    compressed: u64,
}

/// Reads entry `index` whole into `bytes` (cleared first), refusing more than `cap` bytes:
/// the read stops one byte past the cap, so memory stays bounded whatever the header says.
fn read_entry<R: Read + Seek>(
    archive: &mut ZipArchive<R>,
    index: usize,
    cap: u64,
    declared: u64,
    bytes: &mut Vec<u8>,
) -> Result<(), ReadProblem> {
    bytes.clear();
    let entry = archive
        .by_index(index)
        .map_err(|e| ReadProblem::Corrupt(e.to_string()))?;
    let capacity = declared.min(cap).min(MAX_PREALLOCATION);
    bytes.reserve(usize::try_from(capacity).unwrap_or(0));
    // Read a fixed chunk at a time, not into whatever room the buffer has (as
    // `read_to_end` does): the inflater then sees the same reads whichever buffer a thread
    // reuses, so a damaged entry fails with the same error read whole or file by file.
    let mut reader = entry.take(cap.saturating_add(1));
    let mut chunk = [0u8; 32 << 10];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadProblem::Corrupt(e.to_string())),
        }
    }
    if bytes.len() as u64 > cap {
        return Err(ReadProblem::OverCap);
    }
    Ok(())
}

/// Reports every name that occurs more than once, byte for byte, in the central directory
/// starting at `dir_start`. The zip crate serves one of them (the last one's data).
fn report_exact_duplicates(path: &Path, dir_start: u64, facts: &mut Vec<Fact>) {
    let repeated = File::open(path).and_then(|file| repeated_names(file, dir_start));
    match repeated {
        Ok(names) if !names.is_empty() => {
            for (name, count) in names {
                facts.push(
                    fact(
                        "archive.duplicate",
                        "each name once",
                        format!("{count} entries with this name"),
                    )
                    .file(String::from_utf8_lossy(&name)),
                );
            }
        }
        // The zip crate saw a repeat that the walk did not (e.g. a name replaced by a
        // Unicode-path extra field): still worth saying.
        _ => facts.push(fact(
            "archive.duplicate",
            "each name once",
            "entries with the same name",
        )),
    }
}

/// The names met more than once in the central directory, with their counts, in order.
fn repeated_names(file: File, dir_start: u64) -> std::io::Result<Vec<(Vec<u8>, usize)>> {
    const SIGNATURE: [u8; 4] = [0x50, 0x4b, 0x01, 0x02];
    let mut reader = BufReader::new(file);
    reader.seek(SeekFrom::Start(dir_start))?;
    let mut counts: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut order = Vec::new();
    let mut header = [0u8; 46];
    // Every record is at least 46 bytes, so the walk ends with the file.
    while reader.read_exact(&mut header).is_ok() && header[..4] == SIGNATURE {
        let field = |at: usize| usize::from(u16::from_le_bytes([header[at], header[at + 1]]));
        let (name_len, skip) = (field(28), field(30) + field(32));
        let mut name = vec![0; name_len];
        reader.read_exact(&mut name)?;
        reader.seek_relative(skip as i64)?;
        let count = counts.entry(name.clone()).or_insert(0);
        *count += 1;
        if *count == 2 {
            order.push(name);
        }
    }
    Ok(order
        .into_iter()
        .map(|name| {
            let count = counts.get(&name).copied().unwrap_or(2);
            (name, count)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_safe_names() {
        assert_eq!(normalize_entry_name("a/b.json"), Ok("a/b.json".into()));
        assert_eq!(normalize_entry_name("./a/b.json"), Ok("a/b.json".into()));
        assert_eq!(normalize_entry_name("././a//./b"), Ok("a/b".into()));
        assert_eq!(normalize_entry_name("a/"), Ok("a".into()));
        assert_eq!(normalize_entry_name("./"), Ok(String::new()));
        assert_eq!(normalize_entry_name("a..b/c.."), Ok("a..b/c..".into()));
        assert_eq!(normalize_entry_name("run:1/x"), Ok("run:1/x".into()));
    }

    #[test]
    fn refuses_unsafe_names() {
        use NameProblem::*;
        for (name, problem) in [
            ("/etc/passwd", Absolute),
            ("//server/x", Absolute),
            ("../evil.json", ParentDir),
            ("a/../../b", ParentDir),
            ("a/..", ParentDir),
            ("./../x", ParentDir),
            ("C:\\x", Backslash),
            ("C:/x", DriveLetter),
            ("c:x", DriveLetter),
            ("\\\\server\\x", Backslash),
            ("..\\x", Backslash),
            ("a\0b", Nul),
        ] {
            assert_eq!(normalize_entry_name(name), Err(problem), "{name:?}");
        }
    }

    #[test]
    fn ratio_spares_small_entries() {
        assert!(!ratio_exceeded(RATIO_EXEMPT_BYTES, 1, 200));
        assert!(ratio_exceeded(RATIO_EXEMPT_BYTES + 1, 1, 200));
        assert!(!ratio_exceeded(200 << 20, 1 << 20, 200));
        assert!(ratio_exceeded((200 << 20) + 1, 1 << 20, 200));
        assert!(ratio_exceeded(2 << 20, 0, u64::MAX));
    }
}
