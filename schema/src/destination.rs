//! Where mlbench writes: regular files, and folders it makes, checked before the work.
//!
//! A destination is checked before anything is read ([`check_file`], [`check_folder`]),
//! so a refused command writes nothing. mlbench writes regular files only: a folder, a
//! device, a FIFO or a socket is never replaced, even when replacing files is allowed,
//! and a symbolic link that leads nowhere counts as an existing file. A file is written
//! beside its destination and renamed into place ([`write_file`]), so an interrupted
//! write never leaves half a file. Standard output and the folders made for outputs
//! ([`to_stdout`], [`create_dir`]) fail as an [`OutputError`]; a closed pipe
//! ([`is_broken_pipe`]) is no failure.

use std::fs::Metadata;
use std::path::{Path, PathBuf};

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

/// Checks that a file can be written at `path`: its folder exists, and it is new, or a
/// regular file when `replace` allows replacing one. Nothing is opened: a FIFO cannot
/// block the check.
pub fn check_file(path: &Path, replace: bool) -> Result<(), DestinationError> {
    if path.file_name().is_none() {
        return Err(DestinationError::NotAFileName(path.to_path_buf()));
    }
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
/// ancestor, is a folder (the folders missing are made when the files are written).
pub fn check_folder(dir: &Path) -> Result<(), DestinationError> {
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
/// it and renamed into place; on failure nothing is left behind.
pub fn write_file(bytes: &[u8], path: &Path, replace: bool) -> Result<(), WriteFileError> {
    check_file(path, replace)?;
    let Some(file_name) = path.file_name() else {
        return Err(DestinationError::NotAFileName(path.to_path_buf()).into());
    };
    let tmp = parent_of(path).join(format!(".{}.mlbench-tmp", file_name.to_string_lossy()));
    if let Err(source) = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        let path = path.to_path_buf();
        return Err(WriteError { path, source }.into());
    }
    Ok(())
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
}
