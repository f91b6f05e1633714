//! Where mlbench writes: regular files, and folders it makes, checked before the work.
//!
//! A destination is checked before anything is read ([`check_file`], [`check_folder`]),
//! so a refused command writes nothing. mlbench writes regular files only: a folder, a
//! device, a FIFO or a socket is never replaced, even when replacing files is allowed,
//! and a symbolic link that leads nowhere counts as an existing file. A file is written
//! beside its destination and renamed into place ([`write_file`]), so an interrupted
//! write never leaves half a file; the file beside it has a short name of its own
//! (`.mlbench-XXXXXXXX.tmp`), so any legal destination name can be written.
//!
//! Nothing a command reads is written over: the binary names its inputs once
//! ([`guard_inputs`]), and a destination that is one of them or lies inside one is
//! refused by every check, even where replacing files is allowed ([`Inputs`]). A name
//! made from the data (a bench's, a label's) becomes a file name through
//! [`safe_file_name`] only.
//!
//! Standard output and the folders made for outputs
//! ([`to_stdout`], [`create_dir`]) fail as an [`OutputError`]; a closed pipe
//! ([`is_broken_pipe`]) is no failure.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A destination refused before any work.
#[derive(Debug, thiserror::Error)]
pub enum DestinationError {
    /// A file that is there, and replacing is not allowed.
    #[error("{}: already exists; not overwriting it", .0.display())]
    Exists(PathBuf),
    /// A folder where a file is to be written.
    #[error("{}: is a folder; give a file name", .0.display())]
    Folder(PathBuf),
    /// Something that is not a regular file (a device, a FIFO, a socket).
    #[error("{}: is {kind}, not a regular file; mlbench writes only regular files and never replaces anything else", .path.display())]
    Special {
        /// The path.
        path: PathBuf,
        /// What it is: `a FIFO`, `a device`…
        kind: &'static str,
    },
    /// A file where a folder is to be made or written into.
    #[error("{}: is not a folder", .0.display())]
    NotAFolder(PathBuf),
    /// The folder a file is to be written into does not exist.
    #[error("{}: no such folder (create it first)", .0.display())]
    NoParent(PathBuf),
    /// A path with no file name (`..`, `/`).
    #[error("{}: not a file name", .0.display())]
    NotAFileName(PathBuf),
    /// A destination that is an input of the command, or lies inside one.
    #[error("{}: {} {}: mlbench never writes over what it reads, even with --force", .output.display(), if *.inside { "lies inside the input" } else { "is the input" }, .input.display())]
    Input {
        /// The destination.
        output: PathBuf,
        /// The input, as given.
        input: PathBuf,
        /// Whether the destination lies inside the input (a folder) rather than being it.
        inside: bool,
    },
}

/// A file that passed the checks but could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{}: cannot write", path.display())]
pub struct WriteError {
    /// The destination.
    pub path: PathBuf,
    /// The cause.
    pub source: std::io::Error,
}

/// Why [`write_file`] wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum WriteFileError {
    /// Refused (what appeared there during the work is refused as at the start).
    #[error(transparent)]
    Refused(#[from] DestinationError),
    /// The write failed.
    #[error(transparent)]
    Failed(#[from] WriteError),
    /// The folder written into could not be made.
    #[error(transparent)]
    Folder(#[from] OutputError),
}

/// What a path that exists is, for a refusal; `None` for a regular file, a folder, or a
/// link that leads nowhere (a file, as far as replacing goes).
fn special_kind(meta: &Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_file() || t.is_dir() || t.is_symlink() {
        None
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_char_device() || t.is_block_device() {
        Some("a device")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    }
}

/// The folder a file `path` goes into (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A file or folder by device and inode: the same thing however it is named (a link,
/// a relative path, a hard link).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
}

impl Identity {
    fn of(path: &Path) -> Option<Identity> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Identity {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }
}

/// One input: as given (for messages), canonical, and its identity.
#[derive(Debug, Clone)]
struct Input {
    given: PathBuf,
    canonical: PathBuf,
    identity: Identity,
}

/// The files and folders a command reads. A destination that is one of them (the same
/// canonical path, or the same device and inode) or lies inside one of them is refused
/// ([`Inputs::refuse`]); an input that does not exist guards nothing.
#[derive(Debug, Clone, Default)]
pub struct Inputs(Vec<Input>);

impl Inputs {
    /// The inputs among `paths` that exist.
    pub fn of<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Inputs {
        let inputs = paths
            .into_iter()
            .filter_map(|given| {
                Some(Input {
                    given: given.to_path_buf(),
                    canonical: given.canonicalize().ok()?,
                    identity: Identity::of(given)?,
                })
            })
            .collect();
        Inputs(inputs)
    }

    /// Refuses `output` when it is one of the inputs or lies inside one: compared by
    /// canonical path (a destination not there yet by its nearest existing folder's,
    /// with the rest of its path put back) and by the device and inode of it and of each
    /// folder above it.
    pub fn refuse(&self, output: &Path) -> Result<(), DestinationError> {
        if self.0.is_empty() {
            return Ok(());
        }
        let resolved = resolved(output);
        // The destination and the folders above it that exist, nearest first.
        let identities: Vec<Identity> = resolved
            .iter()
            .flat_map(|r| r.ancestors())
            .filter_map(Identity::of)
            .collect();
        let own = Identity::of(output);
        for input in &self.0 {
            let is = own == Some(input.identity)
                || resolved.as_ref().is_some_and(|r| *r == input.canonical);
            let inside = resolved
                .as_ref()
                .is_some_and(|r| r.starts_with(&input.canonical))
                || identities.contains(&input.identity);
            if is || inside {
                return Err(DestinationError::Input {
                    output: output.to_path_buf(),
                    input: input.given.clone(),
                    inside: !is,
                });
            }
        }
        Ok(())
    }
}

/// The inputs of this process, named once by the binary ([`guard_inputs`]).
static GUARDED: OnceLock<Inputs> = OnceLock::new();

/// Names the inputs of this process: from then on [`check_file`], [`check_folder`] and
/// [`write_file`] refuse a destination that is one of them or lies inside one. Set once
/// (a second call changes nothing): the binary calls it with the paths it reads.
pub fn guard_inputs<'a>(paths: impl IntoIterator<Item = &'a Path>) {
    let _ = GUARDED.set(Inputs::of(paths));
}

/// [`Inputs::refuse`] of the guarded inputs.
fn refuse_guarded(path: &Path) -> Result<(), DestinationError> {
    GUARDED.get().map_or(Ok(()), |inputs| inputs.refuse(path))
}

/// `path` made absolute, its longest existing ancestor canonical and the rest put back
/// (`None` when it has no absolute form).
pub fn resolved(path: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(path).ok()?;
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(mut out) = existing.canonicalize() {
            out.extend(rest.iter().rev());
            return Some(out);
        }
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    }
}

/// The most bytes of a name [`safe_file_name`] keeps before its hash: with the hash and
/// an extension, far below the 255 bytes a file name may have.
const SAFE_NAME_BYTES: usize = 120;

/// `name` as one file name component: the characters `A-Z a-z 0-9 . _ -` kept, every
/// other one made `_`, a leading `.` too (no hidden file, no `..`), cut at 120 bytes; a
/// name so changed ends in `-` and 8 hex digits of its SHA-256, so two names never give
/// one file. A name of those characters alone, short, is itself.
pub fn safe_file_name(name: &str) -> String {
    let kept: String = name
        .chars()
        .enumerate()
        .map(|(i, c)| match c {
            '.' if i == 0 => '_',
            'A'..='Z' | 'a'..='z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '_',
        })
        .take(SAFE_NAME_BYTES + 1)
        .collect();
    if kept == name && kept.len() <= SAFE_NAME_BYTES {
        return kept;
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(name.as_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    let cut: String = kept.chars().take(SAFE_NAME_BYTES).collect();
    format!("{cut}-{hash}")
}

/// Checks that a file can be written at `path`: its folder exists, and it is new, or a
/// regular file when `replace` allows replacing one; never an input ([`guard_inputs`]).
/// Nothing is opened: a FIFO cannot block the check.
pub fn check_file(path: &Path, replace: bool) -> Result<(), DestinationError> {
    if path.file_name().is_none() {
        return Err(DestinationError::NotAFileName(path.to_path_buf()));
    }
    refuse_guarded(path)?;
    let Ok(link) = std::fs::symlink_metadata(path) else {
        let parent = parent_of(path);
        return match std::fs::metadata(parent) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => Err(DestinationError::NotAFolder(parent.to_path_buf())),
            Err(_) => Err(DestinationError::NoParent(parent.to_path_buf())),
        };
    };
    // What a link leads to decides; a link that leads nowhere is a file there.
    let meta = std::fs::metadata(path).unwrap_or(link);
    if meta.is_dir() {
        return Err(DestinationError::Folder(path.to_path_buf()));
    }
    if let Some(kind) = special_kind(&meta) {
        let path = path.to_path_buf();
        return Err(DestinationError::Special { path, kind });
    }
    if replace {
        Ok(())
    } else {
        Err(DestinationError::Exists(path.to_path_buf()))
    }
}

/// Checks that `dir` is a folder or can be made one: it, or its nearest existing
/// ancestor, is a folder (the folders missing are made when the files are written); never
/// an input nor inside one ([`guard_inputs`]).
pub fn check_folder(dir: &Path) -> Result<(), DestinationError> {
    refuse_guarded(dir)?;
    let mut at = Some(dir);
    while let Some(p) = at.filter(|p| !p.as_os_str().is_empty()) {
        if let Ok(meta) = std::fs::metadata(p) {
            return if meta.is_dir() {
                Ok(())
            } else {
                Err(DestinationError::NotAFolder(p.to_path_buf()))
            };
        }
        if std::fs::symlink_metadata(p).is_ok() {
            // A link that leads nowhere: not a folder to write into.
            return Err(DestinationError::NotAFolder(p.to_path_buf()));
        }
        at = p.parent();
    }
    Ok(())
}

/// Writes `bytes` to `path` after checking it again with [`check_file`]: written beside
/// it (as `.mlbench-XXXXXXXX.tmp`, a name of its own) and renamed into place; on failure
/// nothing is left behind.
pub fn write_file(bytes: &[u8], path: &Path, replace: bool) -> Result<(), WriteFileError> {
    check_file(path, replace)?;
    let failed = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let (tmp, mut file) = temporary_beside(path).map_err(failed)?;
    let written = std::io::Write::write_all(&mut file, bytes);
    drop(file);
    if let Err(source) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(failed(source).into());
    }
    Ok(())
}

/// A new file `.mlbench-XXXXXXXX.tmp` in `path`'s folder, created there (never one that
/// was there: another name is drawn).
fn temporary_beside(path: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static DRAWN: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut last = None;
    for _ in 0..16 {
        let n = DRAWN.fetch_add(1, Ordering::Relaxed);
        let word = (std::process::id().rotate_left(16) ^ nanos ^ n.wrapping_mul(0x9e37_79b9))
            .wrapping_mul(0x85eb_ca6b);
        let tmp = parent_of(path).join(format!(".mlbench-{word:08x}.tmp"));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no temporary name left")))
}

/// An output that could not be written: standard output, a folder, a page.
#[derive(Debug, thiserror::Error)]
#[error("{}: cannot {action}", path.display())]
pub struct OutputError {
    /// The file or folder (`-` for standard output).
    pub path: PathBuf,
    /// What failed: `write`, `create`.
    pub action: &'static str,
    /// The cause.
    pub source: std::io::Error,
}

/// [`check_file`] for each destination given.
pub fn check_files<'a>(
    paths: impl IntoIterator<Item = &'a PathBuf>,
    replace: bool,
) -> Result<(), DestinationError> {
    paths.into_iter().try_for_each(|p| check_file(p, replace))
}

/// Writes each of `files` into the folder `dir`, made first (with its parents): every
/// destination is checked before any is written, so nothing is written when one would be
/// replaced without `replace`.
///
/// # Errors
/// As [`create_dir`], [`check_files`] and [`write_file`].
pub fn write_files(
    dir: &Path,
    files: &[(PathBuf, impl AsRef<[u8]>)],
    replace: bool,
) -> Result<(), WriteFileError> {
    create_dir(dir)?;
    check_files(files.iter().map(|(p, _)| p), replace)?;
    (files.iter()).try_for_each(|(path, bytes)| write_file(bytes.as_ref(), path, true))
}

/// Creates a folder for outputs (and its parents).
pub fn create_dir(dir: &Path) -> Result<(), OutputError> {
    std::fs::create_dir_all(dir).map_err(|source| OutputError {
        path: dir.to_path_buf(),
        action: "create",
        source,
    })
}

/// Writes `bytes` to standard output.
pub fn to_stdout(bytes: &[u8]) -> Result<(), OutputError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|source| OutputError {
            path: "-".into(),
            action: "write",
            source,
        })
}

/// Whether `error` comes of a closed pipe (`mlbench … | head`): not a failure, as the
/// reader has all it wanted.
pub fn is_broken_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(c) = cause {
        if c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
        {
            return true;
        }
        cause = c.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_destinations() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.json");
        assert!(check_file(&new, false).is_ok());
        std::fs::write(&new, "x").unwrap();
        assert!(matches!(
            check_file(&new, false),
            Err(DestinationError::Exists(_))
        ));
        assert!(check_file(&new, true).is_ok());
        let folder = check_file(dir.path(), true);
        assert!(matches!(folder, Err(DestinationError::Folder(_))));
        let missing = dir.path().join("no/such/x.json");
        assert!(matches!(
            check_file(&missing, true),
            Err(DestinationError::NoParent(p)) if p == dir.path().join("no/such")
        ));
        let under_file = new.join("x.json");
        let under = check_file(&under_file, true);
        assert!(matches!(under, Err(DestinationError::NotAFolder(_))));
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        let link = check_file(&dangling, false);
        assert!(matches!(link, Err(DestinationError::Exists(_))));
        assert!(matches!(
            check_file(Path::new("/dev/null"), true),
            Err(DestinationError::Special {
                kind: "a device",
                ..
            })
        ));
        assert!(matches!(
            check_file(Path::new("/"), true),
            Err(DestinationError::NotAFileName(_))
        ));
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("no mkfifo here: skipped");
            return;
        }
        let refused = write_file(b"x", &fifo, true);
        assert!(matches!(
            refused,
            Err(WriteFileError::Refused(DestinationError::Special {
                kind: "a FIFO",
                ..
            }))
        ));
    }

    #[test]
    fn written_whole_and_nothing_left_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write_file(b"one", &path, false).unwrap();
        assert!(write_file(b"two", &path, false).is_err());
        write_file(b"two", &path, true).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let long = dir.path().join(format!("{}.json", "n".repeat(300)));
        assert!(matches!(
            write_file(b"x", &long, false),
            Err(WriteFileError::Failed(_))
        ));
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "only out.json: {names:?}");
    }

    #[test]
    fn a_legal_name_of_255_bytes_is_written_and_only_it_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let name = format!("{}.json", "n".repeat(250));
        assert_eq!(name.len(), 255);
        let path = dir.path().join(&name);
        write_file(b"x", &path, false).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"x");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [name]);
    }

    #[test]
    fn an_input_or_a_path_inside_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir_all(sub.join("output0")).unwrap();
        let stream = sub.join("output0/fast_0.json");
        std::fs::write(&stream, "[").unwrap();
        let zip = dir.path().join("a.zip");
        std::fs::write(&zip, "PK").unwrap();
        let inputs = Inputs::of([sub.as_path(), zip.as_path()]);
        let refused = |p: &Path| match inputs.refuse(p) {
            Err(DestinationError::Input { input, inside, .. }) => Some((input, inside)),
            Ok(()) => None,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(refused(&zip), Some((zip.clone(), false)));
        assert_eq!(refused(&stream), Some((sub.clone(), true)));
        // Not there yet, inside: by its folder; the same named another way.
        assert_eq!(refused(&sub.join("new/x.json")), Some((sub.clone(), true)));
        let dotted = sub.join("output0/../output0/fast_0.json");
        assert_eq!(refused(&dotted), Some((sub.clone(), true)));
        assert_eq!(refused(&sub), Some((sub.clone(), false)));
        // A hard link and a symbolic link to the zip are the zip.
        let hard = dir.path().join("hard.zip");
        std::fs::hard_link(&zip, &hard).unwrap();
        assert_eq!(refused(&hard), Some((zip.clone(), false)));
        let soft = dir.path().join("soft.zip");
        std::os::unix::fs::symlink(&zip, &soft).unwrap();
        assert_eq!(refused(&soft), Some((zip.clone(), false)));
        // Beside them: written.
        assert_eq!(refused(&dir.path().join("report.json")), None);
        assert_eq!(refused(&dir.path().join("sub.html")), None);
        let message = inputs.refuse(&stream).unwrap_err().to_string();
        assert!(
            message.ends_with(&format!(
                "fast_0.json: lies inside the input {}: mlbench never writes over what it reads, even with --force",
                sub.display()
            )),
            "{message}"
        );
    }

    #[test]
    fn safe_file_names_keep_plain_names_and_never_collide() {
        for plain in ["loss-example-toy_reg", "report-heatmap-a.b", "runs-A-1"] {
            assert_eq!(safe_file_name(plain), plain);
        }
        let slash = safe_file_name("loss-x-../../etc/passwd");
        assert!(slash.starts_with("loss-x-.._.._etc_passwd-"), "{slash}");
        assert_eq!(slash.len(), "loss-x-.._.._etc_passwd-".len() + 8);
        assert!(!slash.contains('/'));
        assert!(safe_file_name("..").starts_with("_.-"));
        // `a/b` and `a_b` differ: the changed one carries its hash.
        assert_ne!(safe_file_name("a/b"), safe_file_name("a_b"));
        assert_ne!(safe_file_name("a/b"), safe_file_name("a:b"));
        let long = "é".repeat(1_000_000);
        let cut = safe_file_name(&long);
        assert_eq!(cut.len(), 120 + 1 + 8, "{cut}");
        assert!(cut.is_ascii());
        let other = format!("{long}x");
        assert_ne!(safe_file_name(&other), cut);
        // Stable: the same name, the same file, run after run.
        assert_eq!(safe_file_name("a/b"), safe_file_name("a/b"));
    }

    #[test]
    fn folder_destinations() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_folder(&dir.path().join("a/b/c")).is_ok());
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(matches!(
            check_folder(&file.join("charts")),
            Err(DestinationError::NotAFolder(p)) if p == file
        ));
        assert!(check_folder(Path::new("relative/new")).is_ok());
    }

    #[test]
    fn a_closed_pipe_anywhere_in_the_chain_is_one() {
        let pipe = OutputError {
            path: "-".into(),
            action: "write",
            source: std::io::Error::from(std::io::ErrorKind::BrokenPipe),
        };
        assert!(is_broken_pipe(&pipe));
        let full = OutputError {
            source: std::io::Error::from(std::io::ErrorKind::StorageFull),
            ..pipe
        };
        assert!(!is_broken_pipe(&full));
        assert_eq!(full.to_string(), "-: cannot write");
    }

    #[test]
    fn write_files_makes_the_folder_and_writes_none_when_one_would_be_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("new/charts");
        let files = [
            (out.join("a.svg"), b"a".as_slice()),
            (out.join("b.svg"), b"b"),
        ];
        write_files(&out, &files, false).unwrap();
        assert_eq!(std::fs::read(out.join("b.svg")).unwrap(), b"b");
        // b.svg is there: without `replace` a.svg is not written again either.
        std::fs::remove_file(out.join("a.svg")).unwrap();
        let again = [
            (out.join("a.svg"), b"A".as_slice()),
            (out.join("b.svg"), b"B"),
        ];
        let refused = write_files(&out, &again, false);
        assert!(matches!(
            refused,
            Err(WriteFileError::Refused(DestinationError::Exists(p))) if p == out.join("b.svg")
        ));
        assert!(!out.join("a.svg").exists());
        write_files(&out, &again, true).unwrap();
        assert_eq!(std::fs::read(out.join("b.svg")).unwrap(), b"B");
        let blocked = dir.path().join("file");
        std::fs::write(&blocked, "x").unwrap();
        let under = [(blocked.join("c.svg"), b"c".as_slice())];
        let folder = write_files(&blocked, &under, false);
        assert!(matches!(folder, Err(WriteFileError::Folder(_))));
    }
}
