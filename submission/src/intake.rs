//! Reading a submission: a folder or a zip archive, with limits. Nothing is ever written
//! next to the input.
//!
//! A submission is first listed ([`list_submission`]): its files are found, checked and
//! counted against the [`Limits`] (sizes before anything is read), which gives a
//! [`Listing`]. The listing is then either read whole into memory ([`Listing::read`], an
//! [`Intake`]: what [`read_submission`] returns), or gone through file by file, each read
//! into a buffer its thread reuses (the validator's `validate_listing`), so that a large
//! submission is never held whole. Both ways read the same files under the same limits and
//! report the same facts.

use crate::archive::{ReadProblem, ZipListing, ZipSource};
use crate::fact::{Fact, fact};

use crate::tree::{TreeEntry, TreeKind};
use mlbench_schema::read_buffer::{Links, read_file_into, with_content, with_thread_buffer};
use mlbench_schema::reader::Content;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

pub use crate::source::{Intake, IntakeError, Limits, Settled, SourceKind, SubmittedFile};

/// Reads a submission: a folder, or a file ending in `.zip` (read in place).
pub fn read_submission(path: &Path, limits: &Limits) -> Result<Intake, IntakeError> {
    list_submission(path, limits).map(Listing::read)
}

/// Lists a submission, a folder or a file ending in `.zip`, without reading its files.
pub fn list_submission(path: &Path, limits: &Limits) -> Result<Listing, IntakeError> {
    Opened::open(path, limits).map(Opened::into_listing)
}

/// A submission opened once, to hand on to every reader of it (the loader's discovery, a
/// page's checks and digests): a folder's one walk, from which its listing (made when
/// first asked for) and its discovery come, or a zip's listing. Every other way in
/// ([`list_submission`], [`read_submission`]) opens one and reads it.
#[derive(Debug)]
pub struct Opened {
    path: PathBuf,
    limits: Limits,
    /// A folder's walk ([`crate::tree::list_tree`]); `None` for a zip.
    tree: Option<Vec<TreeEntry>>,
    listing: std::sync::OnceLock<Listing>,
}

impl Opened {
    /// Opens the submission at `path`, a folder (walked once) or a file ending in `.zip`
    /// (listed), to be read within `limits`. A FIFO or a device is refused unopened.
    pub fn open(path: &Path, limits: &Limits) -> Result<Opened, IntakeError> {
        let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => IntakeError::NotFound(path.to_path_buf()),
            _ => IntakeError::Io {
                path: path.to_path_buf(),
                source: e,
            },
        })?;
        let listing = std::sync::OnceLock::new();
        let tree = if meta.is_dir() {
            let entries = crate::tree::list_tree(path).map_err(|e| IntakeError::Io {
                path: e.path,
                source: e.source,
            })?;
            Some(entries)
        } else if !meta.is_file() {
            // A FIFO or a device: opening it could wait forever for a writer.
            let kind = crate::tree::special_kind(&meta.file_type());
            return Err(IntakeError::NotRegular(path.to_path_buf(), kind));
        } else if crate::tree::has_zip_extension(path) {
            let _ = listing.set(list_zip(path, limits)?);
            None
        } else {
            return Err(IntakeError::NotASubmission(path.to_path_buf()));
        };
        Ok(Opened {
            path: path.to_path_buf(),
            limits: *limits,
            tree,
            listing,
        })
    }

    /// The path it was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Folder or zip.
    pub fn kind(&self) -> SourceKind {
        match self.tree {
            Some(_) => SourceKind::Folder,
            None => SourceKind::Zip,
        }
    }

    /// Its listing, within the limits it was opened with.
    pub fn listing(&self) -> &Listing {
        self.listing.get_or_init(|| self.folder_listing())
    }

    /// Its listing, owned.
    pub fn into_listing(mut self) -> Listing {
        match self.listing.take() {
            Some(listing) => listing,
            None => self.folder_listing(),
        }
    }

    fn folder_listing(&self) -> Listing {
        let entries = self.tree.as_deref().unwrap_or_default();
        list_entries(&self.path, entries, &self.limits)
    }

    /// The report files of a folder, as [`crate::discover()`] finds them, from the walk
    /// already made; `None` for a zip (its reports are read from its listing).
    pub fn discover(
        &self,
        suite: Option<&str>,
    ) -> Option<Result<crate::Discovery, crate::DiscoverError>> {
        Opened::discover_all(std::slice::from_ref(self), suite)
    }

    /// The discovery of the folders `opened`, as one search of them all from their walks
    /// (`None` if one of them is a zip).
    pub fn discover_all(
        opened: &[Opened],
        suite: Option<&str>,
    ) -> Option<Result<crate::Discovery, crate::DiscoverError>> {
        let walked: Option<Vec<(&Path, &[TreeEntry])>> = (opened.iter())
            .map(|o| Some((o.path.as_path(), o.tree.as_deref()?)))
            .collect();
        Some(crate::discover::discover_walked(&walked?, suite))
    }
}

/// Reads a zip archive in place: nothing is extracted or written. Entries that are unsafe
/// (absolute or climbing paths, links, encrypted, badly named, duplicated, over the limits
/// or damaged) are reported and skipped; the others are read, sorted by path.
pub fn read_zip(path: &Path, limits: &Limits) -> Result<Intake, IntakeError> {
    list_zip(path, limits).map(Listing::read)
}

/// Lists a zip archive without inflating anything: every entry is checked against the
/// limits and its read bounded, as [`read_zip`] reads them. The entries whose data then
/// turn out damaged are reported when read.
pub fn list_zip(path: &Path, limits: &Limits) -> Result<Listing, IntakeError> {
    let ZipListing {
        paths,
        head,
        tail,
        source,
    } = crate::archive::list_zip(path, limits)?;
    Ok(match source {
        Some(source) => Listing::zip(paths, head, tail, source),
        None => Listing::empty(SourceKind::Zip, head),
    })
}

/// Reads every regular file under `root`; symbolic links are reported, not followed.
pub fn read_folder(root: &Path, limits: &Limits) -> Result<Intake, IntakeError> {
    list_folder(root, limits).map(Listing::read)
}

/// Lists every regular file under `root`, as [`read_folder`] reads them.
pub fn list_folder(root: &Path, limits: &Limits) -> Result<Listing, IntakeError> {
    let entries = crate::tree::list_tree(root).map_err(|e| IntakeError::Io {
        path: e.path,
        source: e.source,
    })?;
    Ok(list_entries(root, &entries, limits))
}

/// The listing of the folder `root` from its walk's `entries` ([`crate::tree::list_tree`]),
/// as [`list_folder`] makes it: for a caller that has walked the folder already.
pub fn list_entries(root: &Path, entries: &[TreeEntry], limits: &Limits) -> Listing {
    let mut paths = Vec::new();
    let mut odd_names = Vec::new();
    let mut facts = Vec::new();
    sort_entries(root, entries, &mut paths, &mut odd_names, &mut facts);
    paths.sort();
    let odd_names = std::sync::Arc::new(odd_names);
    // Sizes are checked before anything is read, so --max-bytes bounds memory here too.
    // Each file's size asked in parallel: one call per file, 1,600 on a large tree.
    let real = |rel: &String| real_path(root, &odd_names, rel);
    let sizes: Vec<u64> = paths
        .par_iter()
        .map(|rel| std::fs::symlink_metadata(real(rel)).map_or(0, |m| m.len()))
        .collect();
    // A file that does not fit in what is left of the limit is set aside, named, and
    // never read; the files after it are still taken while they fit (as in a zip).
    let mut planned: u64 = 0;
    let mut kept = Vec::with_capacity(paths.len());
    for (path, size) in std::mem::take(&mut paths).into_iter().zip(sizes) {
        if planned.saturating_add(size) > limits.max_bytes {
            facts.push(
                fact(
                    "archive.too-large",
                    format!("at most {} bytes in all (--max-bytes)", limits.max_bytes),
                    format!("{size} bytes with {planned} read before it: set aside, not read"),
                )
                .file(path),
            );
            continue;
        }
        planned += size;
        kept.push(path);
    }
    let mut paths = kept;
    if paths.len() > limits.max_files {
        facts.push(fact(
            "archive.too-many-files",
            format!("at most {} files", limits.max_files),
            format!("{} files", paths.len()),
        ));
        paths.truncate(limits.max_files);
    }
    Listing {
        kind: SourceKind::Folder,
        paths,
        head: facts,
        tail: Vec::new(),
        source: Source::Folder {
            root: root.to_path_buf(),
            max_bytes: limits.max_bytes,
            odd_names,
        },
    }
}

/// A submission listed and checked against the [`Limits`], its files not read yet (see the
/// module's documentation).
#[derive(Debug, Clone)]
pub struct Listing {
    kind: SourceKind,
    /// The files to read, sorted by path.
    paths: Vec<String>,
    /// What the listing found, reported before what the reads find.
    head: Vec<Fact>,
    /// What the listing found, reported after what the reads find.
    tail: Vec<Fact>,
    source: Source,
}

impl Default for Listing {
    /// A folder's listing without files.
    fn default() -> Listing {
        Listing::empty(SourceKind::Folder, Vec::new())
    }
}

/// Where a listing's files are read from.
#[derive(Debug, Clone)]
enum Source {
    /// Nothing to read (an archive that could not be opened).
    Nothing,
    /// A folder; `max_bytes` holds the files read to the limit even if they grew after
    /// they were listed; `odd_names`, the real relative path of each file whose name is
    /// not UTF-8, by its display path.
    Folder {
        root: PathBuf,
        max_bytes: u64,
        odd_names: std::sync::Arc<Vec<(String, PathBuf)>>,
    },
    /// A zip archive.
    Zip(ZipSource),
}

/// Why a listed file could not be read.
#[derive(Debug)]
pub enum ReadFailure {
    /// A file of a folder.
    Io(std::io::Error),
    /// An entry of a zip.
    Zip(ReadProblem),
}

impl Listing {
    /// A listing without files: only facts.
    pub(crate) fn empty(kind: SourceKind, facts: Vec<Fact>) -> Listing {
        Listing {
            kind,
            paths: Vec::new(),
            head: facts,
            tail: Vec::new(),
            source: Source::Nothing,
        }
    }

    /// The listing of a zip archive: its entries' paths (sorted, in the order of
    /// `source`'s reads) and what was found before and after reading them.
    pub(crate) fn zip(
        paths: Vec<String>,
        head: Vec<Fact>,
        tail: Vec<Fact>,
        source: ZipSource,
    ) -> Listing {
        Listing {
            kind: SourceKind::Zip,
            paths,
            head,
            tail,
            source: Source::Zip(source),
        }
    }

    /// Folder or zip.
    pub fn kind(&self) -> SourceKind {
        self.kind
    }

    /// The paths of the files to read, sorted.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// Where the `i`-th file of a folder's listing is on disk (`None` for a zip's entry).
    pub fn disk_path(&self, i: usize) -> Option<PathBuf> {
        match &self.source {
            Source::Folder {
                root, odd_names, ..
            } => Some(real_path(root, odd_names, self.paths.get(i)?)),
            Source::Nothing | Source::Zip(_) => None,
        }
    }

    /// What the listing found (hostile entries, limits…); reading may find more.
    pub fn facts(&self) -> impl Iterator<Item = &Fact> {
        self.head.iter().chain(&self.tail)
    }

    /// Reads every file into memory, in parallel.
    pub fn read(self) -> Intake {
        let all: Vec<usize> = (0..self.paths.len()).collect();
        // A buffer of its own per file, kept as the file's bytes.
        let read = self.read_each(&all, false, |_, buffer| std::mem::take(buffer));
        let outcomes: Vec<(usize, Result<u64, &ReadFailure>)> = read
            .iter()
            .enumerate()
            .map(|(i, r)| (i, r.as_ref().map(|bytes| bytes.len() as u64)))
            .collect();
        let settled = self.settle(&outcomes);
        let keep = self.kept(&settled.dropped);
        let files = self
            .paths
            .into_iter()
            .zip(read)
            .zip(keep)
            .filter_map(|((path, read), keep)| match read {
                Ok(bytes) if keep => Some(SubmittedFile { path, bytes }),
                _ => None,
            })
            .collect();
        let mut facts = self.head;
        facts.extend(settled.facts);
        facts.extend(self.tail);
        Intake {
            kind: self.kind,
            files,
            facts,
        }
    }

    /// Reads every file as [`Listing::read`] does (the same facts, the same files left
    /// out), except that the files `apart` picks by path are not kept: each is read into
    /// its thread's reused buffer (or, a large one, as a stream) and handed to `f` (its
    /// path and content) as soon as it is read. Returns the intake of the other files, and `f`'s result for each file apart
    /// that was not left out, in path order. For readers that reduce the report files as
    /// they go: a submission's reports read whole into memory are a fresh page fault per
    /// 4 KiB, more system time than the reading.
    pub fn read_apart<T, F>(&self, apart: impl Fn(&str) -> bool, f: F) -> (Intake, Vec<(String, T)>)
    where
        T: Send,
        F: Fn(&str, Content<'_>) -> T + Sync,
    {
        let (apart_at, kept_at): (Vec<usize>, Vec<usize>) =
            (0..self.paths.len()).partition(|&i| apart(&self.paths[i]));
        let kept_read = self.read_each(&kept_at, false, |_, buffer| std::mem::take(buffer));
        // A large report is handed over as a stream: never held whole.
        let apart_read = self.read_each_content(&apart_at, |i, content| f(&self.paths[i], content));
        let outcomes = outcomes_in_order(
            (&kept_at, &kept_read, |bytes: &Vec<u8>| bytes.len() as u64),
            (&apart_at, &apart_read, |(len, _): &(u64, T)| *len),
        );
        let settled = self.settle(&outcomes);
        let keep = self.kept(&settled.dropped);
        let files = kept_at
            .into_iter()
            .zip(kept_read)
            .filter_map(|(i, read)| match read {
                Ok(bytes) if keep[i] => Some(SubmittedFile {
                    path: self.paths[i].clone(),
                    bytes,
                }),
                _ => None,
            })
            .collect();
        let reduced = apart_at
            .into_iter()
            .zip(apart_read)
            .filter_map(|(i, read)| match read {
                Ok((_, out)) if keep[i] => Some((self.paths[i].clone(), out)),
                _ => None,
            })
            .collect();
        let mut facts = self.head.clone();
        facts.extend(settled.facts);
        facts.extend(self.tail.iter().cloned());
        let intake = Intake {
            kind: self.kind,
            files,
            facts,
        };
        (intake, reduced)
    }

    /// The listing of only the files `keep` picks by path, read under the same limits and
    /// without the whole listing's container facts (they stay the whole's): for a reader of some
    /// of a submission's files (its telemetry) that opens none of the others.
    pub fn only(&self, keep: impl Fn(&str) -> bool) -> Listing {
        let dropped = (0..self.paths.len())
            .filter(|&i| !keep(&self.paths[i]))
            .collect();
        let mut part = self.without(Settled {
            facts: Vec::new(),
            dropped,
        });
        part.head.clear();
        part.tail.clear();
        part
    }

    /// The bytes of the listed file at `path` read again (`None` if it is not listed or
    /// cannot be read now): for the rare look back at a file read apart.
    pub fn read_again(&self, path: &str) -> Option<Vec<u8>> {
        let i = (self.paths.binary_search_by(|p| p.as_str().cmp(path)).ok())
            .or_else(|| self.paths.iter().position(|p| p == path))?;
        let mut read = self.read_each(&[i], false, |_, buffer| std::mem::take(buffer));
        read.pop()?.ok()
    }

    /// Reads the files `which` (indices into the listing) in parallel and calls `f` on
    /// each one's bytes, as soon as it is read; the results come back in `which`'s order.
    /// With `reuse`, each thread reads every file into the same buffer (so `f` must not
    /// take it); without, each file gets a buffer of its own, which `f` may keep.
    pub fn read_each<T, F>(&self, which: &[usize], reuse: bool, f: F) -> Vec<Result<T, ReadFailure>>
    where
        T: Send,
        F: Fn(usize, &mut Vec<u8>) -> T + Sync,
    {
        match &self.source {
            Source::Nothing => which
                .iter()
                .map(|_| {
                    Err(ReadFailure::Io(std::io::Error::from(
                        std::io::ErrorKind::NotFound,
                    )))
                })
                .collect(),
            Source::Folder {
                root, odd_names, ..
            } => which
                .par_iter()
                .map(|&i| {
                    with_buffer(reuse, |buffer| {
                        read_file_into(&real_path(root, odd_names, &self.paths[i]), buffer)
                            .map_err(ReadFailure::Io)?;
                        Ok(f(i, buffer))
                    })
                })
                .collect(),
            Source::Zip(zip) => which
                .par_iter()
                .map_init(
                    || zip.archive().clone(),
                    |archive, &i| {
                        with_buffer(reuse, |buffer| {
                            zip.read_into(archive, i, buffer)
                                .map_err(ReadFailure::Zip)?;
                            Ok(f(i, buffer))
                        })
                    },
                )
                .collect(),
        }
    }

    /// Reads the files `which` in parallel and calls `f` on each one's content as soon as
    /// it is read: its bytes in its thread's reused buffer, or, for a file above
    /// `STREAM_ABOVE`, a stream of it (memory then bounded by the largest entry, not the
    /// file). Each result comes with the file's length, in `which`'s order.
    pub fn read_each_content<T, F>(
        &self,
        which: &[usize],
        f: F,
    ) -> Vec<Result<(u64, T), ReadFailure>>
    where
        T: Send,
        F: Fn(usize, Content<'_>) -> T + Sync,
    {
        match &self.source {
            Source::Nothing => which
                .iter()
                .map(|_| Err(ReadFailure::Io(std::io::ErrorKind::NotFound.into())))
                .collect(),
            Source::Folder {
                root, odd_names, ..
            } => which
                .par_iter()
                .map(|&i| {
                    let path = real_path(root, odd_names, &self.paths[i]);
                    let read = with_content(&path, Links::Refuse, |content| f(i, content))
                        .map_err(ReadFailure::Io)?;
                    match read.failed {
                        Some(e) => Err(ReadFailure::Io(e)),
                        None => Ok((read.size, read.out)),
                    }
                })
                .collect(),
            Source::Zip(zip) => which
                .par_iter()
                .map_init(
                    || zip.archive().clone(),
                    |archive, &i| {
                        zip.with_content(archive, i, |content| f(i, content))
                            .map_err(ReadFailure::Zip)
                    },
                )
                .collect(),
        }
    }

    /// What the reads came to, given every file of the listing (in its order) with its
    /// length or why it could not be read: the facts of the files that failed, and the
    /// files left out (those, and for a folder that grew past `--max-bytes` after it was
    /// listed, every file from the one that went over).
    pub fn settle(&self, outcomes: &[(usize, Result<u64, &ReadFailure>)]) -> Settled {
        match &self.source {
            Source::Nothing => Settled::default(),
            Source::Folder { max_bytes, .. } => {
                let mut settled = Settled::default();
                let mut total: u64 = 0;
                for (k, (i, outcome)) in outcomes.iter().enumerate() {
                    let path = self.paths[*i].clone();
                    match outcome {
                        Ok(len) => {
                            total += len;
                            if total > *max_bytes {
                                settled.facts.push(
                                    fact(
                                        "archive.too-large",
                                        format!("at most {max_bytes} bytes in all (--max-bytes)"),
                                        format!("over {total} bytes by this file"),
                                    )
                                    .file(path),
                                );
                                settled
                                    .dropped
                                    .extend(outcomes[k..].iter().map(|(i, _)| *i));
                                break;
                            }
                        }
                        Err(e) => {
                            settled.facts.push(
                                fact("file.unreadable", "a readable file", e.to_string())
                                    .file(path),
                            );
                            settled.dropped.push(*i);
                        }
                    }
                }
                settled
            }
            Source::Zip(zip) => zip.settle(
                &self.paths,
                outcomes.iter().filter_map(|(i, outcome)| {
                    let problem = match outcome.as_ref().err()? {
                        ReadFailure::Zip(problem) => problem.clone(),
                        // Entries fail as entries; this is never met.
                        ReadFailure::Io(e) => ReadProblem::Corrupt(e.to_string()),
                    };
                    Some((*i, problem))
                }),
            ),
        }
    }

    /// The listing without the files `settled` leaves out, its facts reported with the
    /// listing's own: to read again what did read.
    pub fn without(&self, settled: Settled) -> Listing {
        let keep = self.kept(&settled.dropped);
        let mut head = self.head.clone();
        head.extend(settled.facts);
        Listing {
            kind: self.kind,
            paths: self
                .paths
                .iter()
                .zip(&keep)
                .filter(|(_, keep)| **keep)
                .map(|(path, _)| path.clone())
                .collect(),
            head,
            tail: self.tail.clone(),
            source: match &self.source {
                Source::Zip(zip) => Source::Zip(zip.retain(&keep)),
                other => other.clone(),
            },
        }
    }

    /// The listing of the files `keep` picks by path, the others never read (the
    /// listing's own facts kept): for a reader that needs some of a submission's files.
    pub fn retain(&self, keep: impl Fn(&str) -> bool) -> Listing {
        let dropped = (0..self.paths.len())
            .filter(|&i| !keep(&self.paths[i]))
            .collect();
        self.without(Settled {
            facts: Vec::new(),
            dropped,
        })
    }

    /// For each file of the listing, whether `dropped` leaves it in.
    fn kept(&self, dropped: &[usize]) -> Vec<bool> {
        let mut keep = vec![true; self.paths.len()];
        for &i in dropped {
            keep[i] = false;
        }
        keep
    }
}

/// Every file's read outcome (its length, or why it could not be read) in the listing's
/// order, from two reads of disjoint sets of its files (`(indices, results, length of a
/// result)`): what [`Listing::settle`] takes.
pub fn outcomes_in_order<'r, A, B>(
    first: (&[usize], &'r [Result<A, ReadFailure>], impl Fn(&A) -> u64),
    second: (&[usize], &'r [Result<B, ReadFailure>], impl Fn(&B) -> u64),
) -> Vec<(usize, Result<u64, &'r ReadFailure>)> {
    let (first_at, first_read, first_len) = first;
    let (second_at, second_read, second_len) = second;
    let mut outcomes: Vec<(usize, Result<u64, &ReadFailure>)> = first_at
        .iter()
        .zip(first_read)
        .map(|(&i, r)| (i, r.as_ref().map(&first_len)))
        .chain(
            second_at
                .iter()
                .zip(second_read)
                .map(|(&i, r)| (i, r.as_ref().map(&second_len))),
        )
        .collect();
    outcomes.sort_by_key(|(i, _)| *i);
    outcomes
}

impl std::fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadFailure::Io(e) => e.fmt(f),
            ReadFailure::Zip(ReadProblem::Corrupt(message)) => f.write_str(message),
            ReadFailure::Zip(ReadProblem::OverCap) => f.write_str("over its cap"),
            ReadFailure::Zip(ReadProblem::WrongSize(len)) => write!(f, "{len} bytes"),
        }
    }
}

/// Where the file listed as `rel` is: under `root`, by its real name when that is not
/// UTF-8 (its display name then has replacement characters).
fn real_path(root: &Path, odd_names: &[(String, PathBuf)], rel: &str) -> PathBuf {
    match odd_names.iter().find(|(display, _)| display == rel) {
        Some((_, real)) => root.join(real),
        None => root.join(rel),
    }
}

/// Calls `g` with this thread's read buffer (`reuse`), or with a new one.
fn with_buffer<R>(reuse: bool, g: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    if reuse {
        with_thread_buffer(g)
    } else {
        g(&mut Vec::new())
    }
}

/// The regular files under `root` (display paths), their real relative paths where a
/// name is not UTF-8, and a fact for everything else: links (never followed), FIFOs,
/// sockets and devices (never opened), folders that could not be listed or lie too deep.
fn sort_entries(
    root: &Path,
    entries: &[TreeEntry],
    paths: &mut Vec<String>,
    odd_names: &mut Vec<(String, PathBuf)>,
    facts: &mut Vec<Fact>,
) {
    for entry in entries {
        let unreadable = |expected: &str, found: &str| {
            fact("file.unreadable", expected, found).file(entry.display.clone())
        };
        match &entry.kind {
            TreeKind::File => {
                if !entry.utf8 {
                    let rel = entry.path.strip_prefix(root).unwrap_or(&entry.path);
                    odd_names.push((entry.display.clone(), rel.to_path_buf()));
                    facts.push(
                        fact(
                            "file.name-encoding",
                            "a UTF-8 name",
                            "bytes that are not UTF-8",
                        )
                        .file(entry.display.clone()),
                    );
                }
                paths.push(entry.display.clone());
            }
            TreeKind::Symlink => facts.push(
                fact("file.symlink", "a regular file", "a symbolic link")
                    .file(entry.display.clone()),
            ),
            TreeKind::Special(kind) => facts.push(unreadable("a regular file", kind)),
            TreeKind::Unknown => facts.push(unreadable("a file", "no file type")),
            TreeKind::Unlisted(reason) => {
                facts.push(unreadable("a folder that can be listed", reason))
            }
            TreeKind::TooDeep => facts.push(unreadable(
                &format!("folders at most {} levels deep", crate::tree::MAX_DEPTH),
                "deeper: not listed",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// The one walk gives what walking again gives: the discovery, and the listing with
    /// its facts (a link named, never followed).
    #[test]
    fn an_opened_folder_gives_the_discovery_and_the_listing_of_its_one_walk() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "output0/fast_0.json", "[]");
        write(dir.path(), "output1/fast_0.json", "[]");
        write(dir.path(), "notes.txt", "x");
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("output0/fast_1.json")).unwrap();
        let opened = Opened::open(dir.path(), &Limits::default()).unwrap();
        assert_eq!(opened.kind(), SourceKind::Folder);
        let once = opened.discover(None).unwrap().unwrap();
        let again = crate::discover(&[dir.path().to_owned()], None).unwrap();
        let shown = |d: &crate::Discovery| -> Vec<String> {
            d.files.iter().map(|f| f.display.clone()).collect()
        };
        assert_eq!(
            shown(&once),
            [
                "output0/fast_0.json",
                "output0/fast_1.json",
                "output1/fast_0.json"
            ]
        );
        assert_eq!(shown(&once), shown(&again));
        assert_eq!(once.ignored, again.ignored);
        let walked = list_folder(dir.path(), &Limits::default()).unwrap();
        assert_eq!(opened.listing().paths(), walked.paths());
        assert_eq!(
            opened.listing().paths(),
            ["notes.txt", "output0/fast_0.json", "output1/fast_0.json"]
        );
        let facts: Vec<&Fact> = opened.listing().facts().collect();
        assert_eq!(facts, walked.facts().collect::<Vec<_>>());
        assert_eq!(facts.len(), 1);
        assert_eq!(
            (facts[0].rule, facts[0].file.as_deref()),
            ("file.symlink", Some("output0/fast_1.json"))
        );
    }

    /// Several folders opened give, from their walks, the discovery one search of them
    /// all gives (the files of both, of the suite asked for); a zip among them has none.
    #[test]
    fn folders_opened_together_are_discovered_as_one_search() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(a.path(), "output0/fast_0.json", "[]");
        write(b.path(), "output0/fast_0.json", "[]");
        write(b.path(), "output1/fast_1.json", "[]");
        write(b.path(), "output1/baselines_0.json", "[]");
        let roots = [a.path().to_owned(), b.path().to_owned()];
        let opened: Vec<Opened> = (roots.iter())
            .map(|r| Opened::open(r, &Limits::default()).unwrap())
            .collect();
        let once = Opened::discover_all(&opened, Some("fast"))
            .unwrap()
            .unwrap();
        let again = crate::discover(&roots, Some("fast")).unwrap();
        let shown = |d: &crate::Discovery| -> Vec<(String, String)> {
            (d.files.iter())
                .map(|f| (f.path.display().to_string(), f.run.clone()))
                .collect()
        };
        assert_eq!(shown(&once), shown(&again));
        assert_eq!((once.suite.as_str(), once.files.len()), ("fast", 3));
        let zip = a.path().join("sub.zip");
        std::fs::write(&zip, b"not a zip").unwrap();
        let with_zip = [
            opened.into_iter().next().unwrap(),
            Opened::open(&zip, &Limits::default()).unwrap(),
        ];
        assert!(Opened::discover_all(&with_zip, None).is_none());
    }

    #[test]
    fn a_zip_is_listed_at_once_and_has_no_walk() {
        let dir = tempfile::tempdir().unwrap();
        let zip = dir.path().join("sub.zip");
        std::fs::write(&zip, b"not a zip").unwrap();
        let opened = Opened::open(&zip, &Limits::default()).unwrap();
        assert_eq!(opened.kind(), SourceKind::Zip);
        assert!(opened.discover(None).is_none());
        let rules: Vec<&str> = opened.listing().facts().map(|f| f.rule).collect();
        assert_eq!(rules, ["archive.unreadable"]);
        let other = dir.path().join("sub.tar");
        std::fs::write(&other, b"x").unwrap();
        assert!(matches!(
            Opened::open(&other, &Limits::default()),
            Err(IntakeError::NotASubmission(_))
        ));
    }
}
