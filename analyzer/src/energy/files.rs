//! Where the energy's bytes come from: the one thing the energy of a folder and of a zip
//! differ by. [`pairing`](super::pairing) and [`energy_of`](super::energy_of) see a
//! submission only through [`Files`]: its report streams, their entries, the names in
//! the `telemetry` folder beside each stream and the bytes of a telemetry file.
//! [`OnDisk`] reads a folder's
//! files found by [`mlbench_submission::discover()`]; [`Held`] reads a submission the
//! validator's intake holds in memory (a zip read in place, or a folder). The same
//! submission gives the same figures either way.

use mlbench_schema::ReportEntry;
use mlbench_schema::read_buffer::{Links, read_regular};
use mlbench_schema::reader::{FileName, parse_report, read_file};
use mlbench_schema::telemetry::TELEMETRY_FOLDER;
use mlbench_submission::Discovery;
use mlbench_validator::layout::{Role, classify};
use mlbench_validator::{Intake, SubmittedFile};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// One report stream (`<suite>_<copy>.json`) of a submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    /// The file, as the report names files (`output0/fast_0.json`).
    pub display: String,
    /// Its run.
    pub run: String,
    /// Its copy (`JOB_ID`).
    pub copy: u32,
    /// The telemetry folder beside it, as its [`Files`] knows it (two folders given to
    /// one report may hold the same display paths: the key tells them apart).
    pub dir: String,
    /// Where it is in its [`Files`].
    at: usize,
}

/// A submission's report streams and telemetry, wherever its bytes are.
pub trait Files {
    /// The report streams of the suite (per-test files have no telemetry), by run then
    /// path.
    fn streams(&self) -> Vec<Stream>;
    /// The entries of `stream` that parse, with their indices.
    fn entries(&self, stream: &Stream) -> Vec<(usize, ReportEntry)>;
    /// The names of the files in the telemetry folder `dir` (a [`Stream::dir`]), sorted;
    /// `None` when there is no such folder.
    fn names_in(&self, dir: &str) -> Option<BTreeSet<String>>;
    /// The bytes of the file `name` of the telemetry folder `dir`; `Err` says why not, in
    /// words (the caller names the file).
    fn read(&self, dir: &str, name: &str) -> Result<Cow<'_, [u8]>, String>;
}

/// The folder of a display path (`output0/fast_0.json` → `output0`; empty at the top).
pub fn display_parent(display: &str) -> &str {
    display.rsplit_once('/').map_or("", |(parent, _)| parent)
}

/// `parent/telemetry/name`, as the report names files (`name` empty: the folder).
pub fn telemetry_display(parent: &str, name: &str) -> String {
    let dir = match parent {
        "" => TELEMETRY_FOLDER.to_owned(),
        parent => format!("{parent}/{TELEMETRY_FOLDER}"),
    };
    match name {
        "" => dir,
        name => format!("{dir}/{name}"),
    }
}

/// A folder's files found by a discovery, read from disk. The telemetry read counts
/// toward `max_bytes` with the report files: a file that does not fit in what is left is
/// not read, and said so.
pub struct OnDisk<'a> {
    discovery: &'a Discovery,
    /// The telemetry folder beside each report file, in the discovery's order.
    dirs: Vec<PathBuf>,
    /// The bytes left to read.
    left: AtomicU64,
}

impl<'a> OnDisk<'a> {
    /// The files of `discovery` (its report files within `max_bytes` already: see
    /// [`Discovery::set_aside_over`]), their telemetry read within what is left of it.
    pub fn new(discovery: &'a Discovery, max_bytes: u64) -> OnDisk<'a> {
        let reports: u64 = (discovery.files.iter())
            .map(|f| std::fs::symlink_metadata(&f.path).map_or(0, |m| m.len()))
            .sum();
        let dirs = (discovery.files.iter())
            .map(|f| f.path.with_file_name(TELEMETRY_FOLDER))
            .collect();
        OnDisk {
            discovery,
            dirs,
            left: AtomicU64::new(max_bytes.saturating_sub(reports)),
        }
    }
}

impl Files for OnDisk<'_> {
    fn streams(&self) -> Vec<Stream> {
        (self.discovery.files.iter().enumerate())
            .filter_map(|(at, found)| match found.name {
                FileName::Legacy { job_id, .. } => Some(Stream {
                    display: found.display.clone(),
                    run: found.run.clone(),
                    copy: job_id,
                    dir: self.dirs[at].to_string_lossy().into_owned(),
                    at,
                }),
                FileName::PerTest { .. } => None,
            })
            .collect()
    }

    fn entries(&self, stream: &Stream) -> Vec<(usize, ReportEntry)> {
        read_file(&self.discovery.files[stream.at].path, &stream.display).entries
    }

    fn names_in(&self, dir: &str) -> Option<BTreeSet<String>> {
        let read = std::fs::read_dir(dir).ok()?;
        let names = read
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str().map(str::to_owned));
        Some(names.collect())
    }

    fn read(&self, dir: &str, name: &str) -> Result<Cow<'_, [u8]>, String> {
        let path = Path::new(dir).join(name);
        let meta = std::fs::symlink_metadata(&path).map_err(|e| format!("cannot read: {e}"))?;
        if !meta.is_file() {
            return Err("cannot read: not a regular file".into());
        }
        let (size, left) = (meta.len(), self.left.load(Ordering::Relaxed));
        if size > left {
            return Err(format!(
                "not read: {size} bytes, over the {left} bytes left of the limit on bytes read (--max-bytes)"
            ));
        }
        self.left.fetch_sub(size, Ordering::Relaxed);
        let bytes = read_regular(&path, Links::Refuse).map_err(|e| format!("cannot read: {e}"))?;
        Ok(Cow::Owned(bytes))
    }
}

/// A submission held in memory by the validator's intake (a zip read in place, or a
/// folder), already read within its limits.
pub struct Held<'a> {
    files: &'a [SubmittedFile],
    /// Each file's index, by its path.
    by_path: BTreeMap<&'a str, usize>,
    /// The report streams of the suite, with the index of each one's file.
    streams: Vec<Stream>,
}

impl<'a> Held<'a> {
    /// The files of `intake`, its report streams of `suite`.
    pub fn new(intake: &'a Intake, suite: &str) -> Held<'a> {
        let mut streams: Vec<Stream> = (intake.files.iter().enumerate())
            .filter_map(|(at, file)| match classify(file) {
                Role::Report {
                    name: FileName::Legacy { suite: s, job_id },
                    run,
                } if s == suite => Some(Stream {
                    dir: telemetry_display(display_parent(&file.path), ""),
                    display: file.path.clone(),
                    run,
                    copy: job_id,
                    at,
                }),
                _ => None,
            })
            .collect();
        streams.sort_by(|a, b| (&a.run, &a.display).cmp(&(&b.run, &b.display)));
        Held {
            files: &intake.files,
            by_path: (intake.files.iter().enumerate())
                .map(|(i, f)| (f.path.as_str(), i))
                .collect(),
            streams,
        }
    }

    /// Whether it holds report streams (an intake read lean holds none: its reports were
    /// read apart).
    pub fn has_streams(&self) -> bool {
        !self.streams.is_empty()
    }
}

impl Files for Held<'_> {
    fn streams(&self) -> Vec<Stream> {
        self.streams.clone()
    }

    fn entries(&self, stream: &Stream) -> Vec<(usize, ReportEntry)> {
        parse_report(&stream.display, &self.files[stream.at].bytes).entries
    }

    fn names_in(&self, dir: &str) -> Option<BTreeSet<String>> {
        let prefix = format!("{dir}/");
        let names: BTreeSet<String> = (self.by_path.range(prefix.as_str()..))
            .map_while(|(path, _)| path.strip_prefix(&prefix))
            .filter(|rest| !rest.contains('/'))
            .map(str::to_owned)
            .collect();
        (!names.is_empty()).then_some(names)
    }

    fn read(&self, dir: &str, name: &str) -> Result<Cow<'_, [u8]>, String> {
        let path = format!("{dir}/{name}");
        let at = (self.by_path.get(path.as_str()))
            .ok_or("not in the submission (or not read: over its limits)")?;
        Ok(Cow::Borrowed(self.files[*at].bytes.as_slice()))
    }
}
