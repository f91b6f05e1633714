//! Zip intake against hostile and damaged archives. Every archive is built here: with
//! `ZipWriter` where it will write the case, by hand (local headers and central directory)
//! where it refuses to. Deterministic packing is tested in `pack.rs`.

mod common;

use common::{paths, read, read_bytes, rules};
use mlbench_submission::intake::read_zip;
use mlbench_submission::intake::{IntakeError, Limits, SourceKind, read_folder};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Cursor, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

// ---------------------------------------------------------------------------------------
// Allocation accounting, process-wide: the intake inflates entries on several threads, so
// allocations are counted on every thread, and the tests of this file run one at a time
// (`serial`) so that none counts another's.

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
static SERIAL: Mutex<()> = Mutex::new(());

/// Held by every test of this file for its whole run.
fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

fn track(delta: isize) {
    let now = LIVE.fetch_add(delta, Ordering::Relaxed) + delta;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; only sizes are recorded. The
// default `realloc` (alloc, copy, dealloc) goes through these two, and counts the copy.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        track(-(layout.size() as isize));
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result with the most bytes allocated at once while it ran, on
/// any thread (the caller holds `serial`).
fn peak_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    let peak = PEAK.load(Ordering::Relaxed) - base;
    (out, usize::try_from(peak).unwrap_or(0))
}

const MIB: usize = 1 << 20;

#[test]
fn allocation_accounting_sees_large_buffers_on_every_thread() {
    let _serial = serial();
    // Otherwise the bounds asserted below would prove nothing.
    // Tests outside `serial` run meanwhile and may free a few bytes of their own between
    // the two readings: a little slack, far below the buffer.
    const SLACK: usize = 64 << 10;
    let (buffer, peak) = peak_allocation(|| vec![1u8; 8 * MIB]);
    assert_eq!(buffer.len(), 8 * MIB);
    assert!(peak >= 8 * MIB - SLACK, "peak {peak}");
    let (len, peak) = peak_allocation(|| {
        std::thread::spawn(|| vec![1u8; 8 * MIB].len())
            .join()
            .unwrap()
    });
    assert_eq!(len, 8 * MIB);
    assert!(peak >= 8 * MIB - SLACK, "peak on another thread {peak}");
}

// ---------------------------------------------------------------------------------------
// Building archives.

fn options(method: CompressionMethod) -> SimpleFileOptions {
    SimpleFileOptions::default().compression_method(method)
}

/// A zip of `files`, deflated, written by the zip crate.
fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    for (name, bytes) in files {
        zip.start_file(*name, options(CompressionMethod::Deflated))
            .unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// One stored entry of a hand-built archive; every header field the cases need to forge.
struct Raw {
    name: Vec<u8>,
    data: Vec<u8>,
    crc: Option<u32>,
    declared_size: Option<u32>,
    flags: u16,
    made_by: u16,
    external: u32,
}

impl Raw {
    fn stored(name: impl Into<Vec<u8>>, data: &[u8]) -> Raw {
        Raw {
            name: name.into(),
            data: data.to_vec(),
            crc: None,
            declared_size: None,
            flags: 0,
            made_by: 20,
            external: 0,
        }
    }
}

/// Local headers, data, central directory and end record for `entries`, all stored.
fn raw_zip(entries: &[Raw]) -> Vec<u8> {
    fn u16le(out: &mut Vec<u8>, v: u16) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    fn u32le(out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let mut out = Vec::new();
    let mut central = Vec::new();
    for e in entries {
        let offset = out.len() as u32;
        let crc = e.crc.unwrap_or_else(|| crc32(&e.data));
        let size = e.declared_size.unwrap_or(e.data.len() as u32);
        let fixed = |out: &mut Vec<u8>| {
            u16le(out, 20); // version needed
            u16le(out, e.flags);
            u16le(out, 0); // stored
            u16le(out, 0); // time
            u16le(out, 0x21); // 1980-01-01
            u32le(out, crc);
            u32le(out, e.data.len() as u32);
            u32le(out, size);
            u16le(out, e.name.len() as u16);
            u16le(out, 0); // extra
        };
        u32le(&mut out, 0x0403_4b50);
        fixed(&mut out);
        out.extend_from_slice(&e.name);
        out.extend_from_slice(&e.data);

        u32le(&mut central, 0x0201_4b50);
        u16le(&mut central, e.made_by);
        fixed(&mut central);
        u16le(&mut central, 0); // comment
        u16le(&mut central, 0); // disk
        u16le(&mut central, 0); // internal attributes
        u32le(&mut central, e.external);
        u32le(&mut central, offset);
        central.extend_from_slice(&e.name);
    }
    let cd_offset = out.len() as u32;
    out.extend_from_slice(&central);
    u32le(&mut out, 0x0605_4b50);
    u16le(&mut out, 0);
    u16le(&mut out, 0);
    u16le(&mut out, entries.len() as u16);
    u16le(&mut out, entries.len() as u16);
    u32le(&mut out, central.len() as u32);
    u32le(&mut out, cd_offset);
    u16le(&mut out, 0);
    out
}

/// The offset of the first central-directory record.
fn central_record(zip: &[u8]) -> usize {
    zip.windows(4)
        .position(|w| w == b"PK\x01\x02")
        .expect("a central directory")
}

/// Rewrites the declared uncompressed size of a one-entry archive, in both headers.
fn set_declared_size(zip: &mut [u8], size: u32) {
    let cd = central_record(zip);
    zip[22..26].copy_from_slice(&size.to_le_bytes());
    zip[cd + 24..cd + 28].copy_from_slice(&size.to_le_bytes());
}

/// 50 MiB of zeros, deflated (about 50 KiB), next to a small honest file.
fn bomb() -> &'static [u8] {
    static BOMB: OnceLock<Vec<u8>> = OnceLock::new();
    BOMB.get_or_init(|| {
        let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
        zip.start_file("bomb.bin", options(CompressionMethod::Deflated))
            .unwrap();
        let chunk = vec![0u8; MIB];
        for _ in 0..50 {
            zip.write_all(&chunk).unwrap();
        }
        zip.start_file("ok.json", options(CompressionMethod::Stored))
            .unwrap();
        zip.write_all(b"{}").unwrap();
        zip.finish().unwrap().into_inner()
    })
}

// ---------------------------------------------------------------------------------------
// Reading.

#[test]
fn good_zip_reads_every_file_as_written() {
    let _serial = serial();
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    zip.add_directory("run1/", SimpleFileOptions::default())
        .unwrap();
    for (name, bytes, method) in [
        (
            "run1/train_0.json",
            &b"{\"a\": 1}\n"[..],
            CompressionMethod::Deflated,
        ),
        ("./jobs.json", b"[]", CompressionMethod::Stored),
        ("empty.txt", b"", CompressionMethod::Deflated),
        ("run1/b.json", &[7u8; 5000][..], CompressionMethod::Deflated),
    ] {
        zip.start_file(name, options(method)).unwrap();
        zip.write_all(bytes).unwrap();
    }
    let intake = read(&zip.finish().unwrap().into_inner());
    assert_eq!(intake.kind, SourceKind::Zip);
    assert!(intake.facts.is_empty(), "{:?}", intake.facts);
    assert_eq!(
        paths(&intake),
        ["empty.txt", "jobs.json", "run1/b.json", "run1/train_0.json"]
    );
    assert_eq!(intake.files[0].bytes, b"");
    assert_eq!(intake.files[1].bytes, b"[]");
    assert_eq!(intake.files[2].bytes, [7u8; 5000]);
    assert_eq!(intake.files[3].bytes, b"{\"a\": 1}\n");
}

#[test]
fn missing_file_is_an_error_not_a_finding() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let err = read_zip(&dir.path().join("nope.zip"), &Limits::default()).unwrap_err();
    assert!(matches!(err, IntakeError::NotFound(_)), "{err}");
}

#[test]
fn truncated_archive_is_unreadable() {
    let _serial = serial();
    let zip = zip_of(&[("a.json", b"{\"x\": 1}"), ("b.json", b"[1, 2, 3]")]);
    for cut in [
        0,
        1,
        4,
        30,
        zip.len() / 2,
        zip.len() - 22,
        zip.len() - 21,
        zip.len() - 1,
    ] {
        let intake = read(&zip[..cut]);
        assert_eq!(
            rules(&intake.facts),
            [("archive.unreadable", None)],
            "cut at {cut}"
        );
        assert!(intake.files.is_empty());
    }
}

#[test]
fn corrupt_central_directory_is_unreadable() {
    let _serial = serial();
    let mut zip = zip_of(&[("a.json", b"{}")]);
    let cd = central_record(&zip);
    zip[cd + 3] = 9;
    let intake = read(&zip);
    assert_eq!(rules(&intake.facts), [("archive.unreadable", None)]);
    assert!(intake.files.is_empty());
}

#[test]
fn not_a_zip_is_unreadable() {
    let _serial = serial();
    for bytes in [
        &b""[..],
        b"{\"not\": \"a zip\"}",
        &[0u8; 4096],
        b"PK\x03\x04garbage",
    ] {
        let intake = read(bytes);
        assert_eq!(rules(&intake.facts), [("archive.unreadable", None)]);
        assert!(intake.files.is_empty());
    }
}

#[test]
fn unsafe_paths_are_refused_and_the_rest_read() {
    let _serial = serial();
    for name in [
        "../evil.json",
        "/etc/passwd",
        "a/../../evil.json",
        "C:\\evil.json",
        "C:/evil.json",
        "\\\\server\\share\\evil.json",
        "..\\evil.json",
        "a\0.json",
    ] {
        let zip = raw_zip(&[Raw::stored(name, b"evil"), Raw::stored("ok.json", b"{}")]);
        let intake = read(&zip);
        assert_eq!(
            rules(&intake.facts),
            [("archive.unsafe-path", Some(name))],
            "{name:?}"
        );
        assert_eq!(paths(&intake), ["ok.json"]);
    }
}

#[test]
fn symlink_entry_is_refused() {
    let _serial = serial();
    let mut link = Raw::stored("link.json", b"/etc/passwd");
    link.made_by = (3 << 8) | 20; // Unix
    link.external = 0o120_777 << 16;
    let intake = read(&raw_zip(&[link, Raw::stored("ok.json", b"{}")]));
    assert_eq!(
        rules(&intake.facts),
        [("archive.symlink", Some("link.json"))]
    );
    assert_eq!(paths(&intake), ["ok.json"]);

    // The zip crate's own symlinks are caught the same way.
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    zip.add_symlink("l", "/etc/passwd", SimpleFileOptions::default())
        .unwrap();
    let intake = read(&zip.finish().unwrap().into_inner());
    assert_eq!(rules(&intake.facts), [("archive.symlink", Some("l"))]);
}

#[test]
fn encrypted_entry_is_refused() {
    let _serial = serial();
    let mut secret = Raw::stored("secret.json", b"\x12\x34garbled");
    secret.flags = 1;
    let intake = read(&raw_zip(&[secret, Raw::stored("ok.json", b"{}")]));
    assert_eq!(
        rules(&intake.facts),
        [("archive.encrypted", Some("secret.json"))]
    );
    assert_eq!(paths(&intake), ["ok.json"]);
}

#[test]
fn non_utf8_name_is_refused_with_or_without_the_utf8_flag() {
    let _serial = serial();
    for flags in [0, 0x800] {
        let mut bad = Raw::stored(&b"caf\xe9.json"[..], b"{}");
        bad.flags = flags;
        let intake = read(&raw_zip(&[bad, Raw::stored("ok.json", b"{}")]));
        assert_eq!(
            rules(&intake.facts),
            [("archive.name-encoding", Some("caf\u{fffd}.json"))],
            "flags {flags:#x}"
        );
        assert_eq!(paths(&intake), ["ok.json"]);
    }
}

#[test]
fn duplicate_names_are_reported_and_one_kept() {
    let _serial = serial();
    // Byte for byte the same name: the zip crate indexes one entry per name.
    let zip = raw_zip(&[
        Raw::stored("a.json", b"first"),
        Raw::stored("a.json", b"second"),
        Raw::stored("b.json", b"{}"),
    ]);
    let intake = read(&zip);
    assert_eq!(
        rules(&intake.facts),
        [("archive.duplicate", Some("a.json"))]
    );
    assert_eq!(paths(&intake), ["a.json", "b.json"]);

    // The same after normalisation: the first is kept.
    let zip = raw_zip(&[
        Raw::stored("run/a.json", b"first"),
        Raw::stored("./run/a.json", b"second"),
        Raw::stored("run//a.json", b"third"),
    ]);
    let intake = read(&zip);
    assert_eq!(
        rules(&intake.facts),
        [
            ("archive.duplicate", Some("run/a.json")),
            ("archive.duplicate", Some("run/a.json"))
        ]
    );
    assert_eq!(paths(&intake), ["run/a.json"]);
    assert_eq!(intake.files[0].bytes, b"first");
}

#[test]
fn directory_entries_are_skipped_silently() {
    let _serial = serial();
    let zip = raw_zip(&[
        Raw::stored("./", b""),
        Raw::stored("run/", b""),
        Raw::stored("run/a.json", b"{}"),
    ]);
    let intake = read(&zip);
    assert!(intake.facts.is_empty(), "{:?}", intake.facts);
    assert_eq!(paths(&intake), ["run/a.json"]);
}

#[test]
fn zip_bomb_is_refused_by_ratio_without_inflating() {
    let _serial = serial();
    let (intake, peak) = peak_allocation(|| read(bomb()));
    assert_eq!(rules(&intake.facts), [("archive.ratio", Some("bomb.bin"))]);
    assert_eq!(paths(&intake), ["ok.json"]);
    assert!(peak < 4 * MIB, "peak allocation {peak} bytes");
}

#[test]
fn zip_bomb_over_max_bytes_is_too_large() {
    let _serial = serial();
    let limits = Limits {
        max_bytes: 10 << 20,
        max_ratio: u64::MAX,
        ..Limits::default()
    };
    let (intake, peak) = peak_allocation(|| read_bytes(bomb(), &limits));
    assert_eq!(
        rules(&intake.facts),
        [("archive.too-large", Some("bomb.bin"))]
    );
    assert_eq!(paths(&intake), ["ok.json"]);
    assert!(peak < 4 * MIB, "peak allocation {peak} bytes");

    // The budget is for the whole archive: the second file no longer fits.
    let zip = zip_of(&[("a", &[1u8; 600]), ("b", &[2u8; 600])]);
    let limits = Limits {
        max_bytes: 1000,
        ..Limits::default()
    };
    let intake = read_bytes(&zip, &limits);
    assert_eq!(rules(&intake.facts), [("archive.too-large", Some("b"))]);
    assert_eq!(paths(&intake), ["a"]);
}

#[test]
fn bomb_with_a_lying_size_header_is_read_bounded() {
    let _serial = serial();
    let mut zip = bomb().to_vec();
    set_declared_size(&mut zip, 1000);
    let (intake, peak) = peak_allocation(|| read(&zip));
    assert_eq!(
        rules(&intake.facts),
        [("archive.corrupt", Some("bomb.bin"))]
    );
    assert_eq!(paths(&intake), ["ok.json"]);
    assert!(peak < 4 * MIB, "peak allocation {peak} bytes");
}

/// `n` central-directory records, all pointing at one deflated MiB of zeros: every entry
/// is under the per-entry ratio's 1 MiB floor, together they are `n` MiB.
fn overlapping_bomb(n: usize) -> Vec<u8> {
    let one = zip_of(&[("z0000", &vec![0u8; MIB])]);
    let cd = central_record(&one);
    let field = |at: usize| usize::from(u16::from_le_bytes([one[cd + at], one[cd + at + 1]]));
    let record = &one[cd..cd + 46 + field(28) + field(30) + field(32)];
    let mut out = one[..cd].to_vec();
    for i in 0..n {
        out.extend_from_slice(&record[..46]);
        out.extend_from_slice(format!("z{i:04}").as_bytes());
        out.extend_from_slice(&record[46 + 5..]);
    }
    let cd_size = (out.len() - cd) as u32;
    out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&cd_size.to_le_bytes());
    out.extend_from_slice(&(cd as u32).to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

#[test]
fn overlapping_bomb_is_held_to_the_archive_ratio() {
    let _serial = serial();
    let zip = overlapping_bomb(1000);
    let (intake, peak) = peak_allocation(|| read(&zip));
    let kept = intake.files.len();
    assert!((1..20).contains(&kept), "{kept} entries read");
    let next = format!("z{kept:04}");
    // Every entry but the first names the first one's local header: inconsistent, up to
    // the one the read stops at.
    let (inconsistent, other): (Vec<_>, Vec<_>) = rules(&intake.facts)
        .into_iter()
        .partition(|(rule, _)| *rule == "archive.inconsistent");
    assert_eq!(other, [("archive.ratio", Some(next.as_str()))]);
    assert_eq!(inconsistent.len(), kept);
    assert!(peak < 40 * MIB, "peak allocation {peak} bytes");
}

/// Like `overlapping_bomb`, but every record declares 1,000 bytes: the budgets then let
/// all thousand entries be read, several threads at once, each stream holding a MiB. Every
/// read is bounded and a failed one keeps nothing, so memory stays at a few entries' worth,
/// not the thousand MiB the streams add up to.
#[test]
fn lying_entries_read_in_parallel_do_not_add_up() {
    let _serial = serial();
    let mut zip = overlapping_bomb(1000);
    let mut records = 0;
    let mut at = central_record(&zip);
    while zip[at..].starts_with(b"PK\x01\x02") {
        zip[at + 24..at + 28].copy_from_slice(&1000u32.to_le_bytes());
        let field = |o: usize| usize::from(u16::from_le_bytes([zip[at + o], zip[at + o + 1]]));
        at += 46 + field(28) + field(30) + field(32);
        records += 1;
    }
    assert_eq!(records, 1000);
    let (intake, peak) = peak_allocation(|| read(&zip));
    assert!(intake.files.is_empty(), "{:?}", paths(&intake));
    let corrupt = intake.facts.iter().filter(|f| f.rule == "archive.corrupt");
    assert_eq!(corrupt.count(), 1000);
    // And 999 whose local header (the first entry's) names another file.
    let inconsistent = intake
        .facts
        .iter()
        .filter(|f| f.rule == "archive.inconsistent");
    assert_eq!(inconsistent.count(), 999);
    assert_eq!(intake.facts.len(), 1999, "{:?}", rules(&intake.facts));
    assert!(peak < 40 * MIB, "peak allocation {peak} bytes");
}

#[test]
fn lying_size_header_is_corrupt() {
    let _serial = serial();
    for declared in [3, 100] {
        let mut liar = Raw::stored("liar.json", b"{\"a\": [1, 2, 3]}");
        liar.declared_size = Some(declared);
        let intake = read(&raw_zip(&[liar, Raw::stored("ok.json", b"{}")]));
        assert_eq!(
            rules(&intake.facts),
            [("archive.corrupt", Some("liar.json"))],
            "declared {declared}"
        );
        assert_eq!(paths(&intake), ["ok.json"]);
    }
}

#[test]
fn crc_mismatch_is_corrupt() {
    let _serial = serial();
    let mut bad = Raw::stored("bad.json", b"{\"a\": 1}");
    bad.crc = Some(crc32(b"{\"a\": 2}"));
    let intake = read(&raw_zip(&[bad, Raw::stored("ok.json", b"{}")]));
    assert_eq!(
        rules(&intake.facts),
        [("archive.corrupt", Some("bad.json"))]
    );
    assert_eq!(paths(&intake), ["ok.json"]);

    // A flipped byte inside deflated data: a decompression or CRC error.
    let text = "{\"loss\": 0.125, \"step\": 1}\n".repeat(40);
    let mut zip = zip_of(&[("d.json", text.as_bytes())]);
    let data_start = 30 + "d.json".len();
    zip[data_start + 20] ^= 0x55;
    let intake = read(&zip);
    assert_eq!(rules(&intake.facts), [("archive.corrupt", Some("d.json"))]);
    assert!(intake.files.is_empty());
}

#[test]
fn too_many_files_keeps_the_first() {
    let _serial = serial();
    let zip = zip_of(&[
        ("a", b"1"),
        ("b", b"2"),
        ("c", b"3"),
        ("d", b"4"),
        ("e", b"5"),
    ]);
    let limits = Limits {
        max_files: 3,
        ..Limits::default()
    };
    let intake = read_bytes(&zip, &limits);
    assert_eq!(rules(&intake.facts), [("archive.too-many-files", None)]);
    assert_eq!(intake.facts[0].found, "5 files");
    assert_eq!(paths(&intake), ["a", "b", "c"]);
}

#[cfg(unix)]
#[test]
fn folder_symlink_is_reported_not_followed() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.json"), b"{}").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link.json")).unwrap();
    let intake = read_folder(dir.path(), &Limits::default()).unwrap();
    assert_eq!(rules(&intake.facts), [("file.symlink", Some("link.json"))]);
    assert_eq!(paths(&intake), ["a.json"]);
}

/// Validating from the listing (what `mlbench validate` does) holds one file per reading
/// thread, not the submission: 24 report files of about a MiB each, in a folder and in a
/// zip, validate on two threads with a peak (about 2.5 MiB a thread: the buffer and the
/// string parsed out of it) far below the 24 MiB that reading them whole takes (measured
/// here too, so that the bound means something).
#[test]
fn validating_from_the_listing_does_not_hold_the_submission() {
    use mlbench_submission::intake::{list_submission, read_submission};
    use mlbench_validator::{Options, validate_listing};
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("sub");
    // The first entry of a stream of the example submission, padded with a long string.
    let stream = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../submissions/example/output0/fast_0.json"
    ))
    .unwrap();
    let first = &stream[..stream.find("\n},{").unwrap() + 2];
    let rest = first.strip_prefix("[{").unwrap();
    let pad = "x".repeat(MIB - 1024 - first.len());
    let text = format!(r#"[{{"pad": "{pad}", {rest}]"#);
    let files: Vec<(String, Vec<u8>)> = (0..24)
        .map(|i| {
            let path = format!("output{:02}/fast_{}.json", i / 2, i % 2);
            (path, text.clone().into_bytes())
        })
        .collect();
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    for (path, bytes) in &files {
        let file = folder.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, bytes).unwrap();
        zip.start_file(path.as_str(), options(CompressionMethod::Stored))
            .unwrap();
        zip.write_all(bytes).unwrap();
    }
    let zip_path = dir.path().join("sub.zip");
    std::fs::write(&zip_path, zip.finish().unwrap().into_inner()).unwrap();
    let total: usize = files.iter().map(|(_, b)| b.len()).sum();
    assert!(total > 23 * MIB);

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for path in [&folder, &zip_path] {
        let listing = list_submission(path, &Limits::default()).unwrap();
        let (validation, peak) =
            pool.install(|| peak_allocation(|| validate_listing(&listing, &Options::default())));
        assert_eq!(validation.summary.report_files, 24, "{}", path.display());
        assert_eq!(validation.summary.entries, 24, "{:?}", validation.findings);
        assert!(
            peak < 12 * MIB,
            "{}: peak allocation {peak} bytes",
            path.display()
        );
        let (intake, whole) =
            pool.install(|| peak_allocation(|| read_submission(path, &Limits::default())));
        assert_eq!(intake.unwrap().files.len(), 24);
        assert!(
            whole >= total,
            "{}: read whole, peak {whole} bytes",
            path.display()
        );
    }
}
