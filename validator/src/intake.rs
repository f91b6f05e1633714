//! Reading a submission: a folder or a zip archive, into memory, with limits. Nothing is
//! ever written next to the input.

use crate::finding::Finding;
use mlbench_schema::discover::TreeKind;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// One file of a submission.
#[derive(Debug, Clone)]
pub struct SubmittedFile {
    /// Its path inside the submission: relative, `/`-separated.
    pub path: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl SubmittedFile {
    /// A file at `path` (relative, `/`-separated) holding `bytes`.
    pub fn new(path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        SubmittedFile {
            path: path.into(),
            bytes: bytes.into(),
        }
    }
}

/// Where a submission came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// A folder on disk.
    Folder,
    /// A zip archive, read in place.
    Zip,
}

/// A submission read into memory: its files, sorted by path, and what intake found.
#[derive(Debug, Clone)]
pub struct Intake {
    /// Folder or zip.
    pub kind: SourceKind,
    /// The files that could be read safely, sorted by path.
    pub files: Vec<SubmittedFile>,
    /// Problems with the container itself (hostile entries, unreadable files…).
    pub findings: Vec<Finding>,
}

/// Limits that keep a hostile submission from exhausting memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Total uncompressed bytes read (default 4 GiB).
    pub max_bytes: u64,
    /// Largest compression ratio accepted for an entry over 1 MiB (default 200).
    pub max_ratio: u64,
    /// Most files (default 100,000).
    pub max_files: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 4 << 30,
            max_ratio: 200,
            max_files: 100_000,
        }
    }
}

/// Why a submission could not be read at all (exit 2, not a finding).
#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    /// The path does not exist.
    #[error("{0}: no such file or folder")]
    NotFound(PathBuf),
    /// The path could not be opened or listed.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Not a folder and not named `.zip`.
    #[error("{0}: not a folder or a .zip file")]
    NotASubmission(PathBuf),
}

/// Reads a submission: a folder, or a file ending in `.zip` (read in place).
pub fn read_submission(path: &Path, limits: &Limits) -> Result<Intake, IntakeError> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => IntakeError::NotFound(path.to_path_buf()),
        _ => IntakeError::Io {
            path: path.to_path_buf(),
            source: e,
        },
    })?;
    if meta.is_dir() {
        read_folder(path, limits)
    } else if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("zip"))
    {
        crate::archive::read_zip(path, limits)
    } else {
        Err(IntakeError::NotASubmission(path.to_path_buf()))
    }
}

/// Reads every regular file under `root`; symbolic links are reported, not followed.
pub fn read_folder(root: &Path, limits: &Limits) -> Result<Intake, IntakeError> {
    let mut paths = Vec::new();
    let mut findings = Vec::new();
    walk(root, &mut paths, &mut findings)?;
    paths.sort();
    // Sizes are checked before anything is read, so --max-bytes bounds memory here too.
    let mut planned: u64 = 0;
    let mut over = None;
    for (i, rel) in paths.iter().enumerate() {
        planned += std::fs::metadata(root.join(rel)).map_or(0, |m| m.len());
        if planned > limits.max_bytes {
            over = Some(i);
            break;
        }
    }
    if let Some(i) = over {
        findings.push(
            Finding::new(
                "archive.too-large",
                format!("at most {} bytes in all (--max-bytes)", limits.max_bytes),
                format!(
                    "over {planned} bytes by this file; it and the files after it were not read"
                ),
            )
            .file(paths[i].clone()),
        );
        paths.truncate(i);
    }
    if paths.len() > limits.max_files {
        findings.push(Finding::new(
            "archive.too-many-files",
            format!("at most {} files", limits.max_files),
            format!("{} files", paths.len()),
        ));
        paths.truncate(limits.max_files);
    }
    let read: Vec<(String, std::io::Result<Vec<u8>>)> = paths
        .into_par_iter()
        .map(|rel| {
            let bytes = std::fs::read(root.join(&rel));
            (rel, bytes)
        })
        .collect();
    let mut files = Vec::with_capacity(read.len());
    let mut total: u64 = 0;
    for (path, bytes) in read {
        match bytes {
            Ok(bytes) => {
                total += bytes.len() as u64;
                if total > limits.max_bytes {
                    findings.push(
                        Finding::new(
                            "archive.too-large",
                            format!("at most {} bytes in all (--max-bytes)", limits.max_bytes),
                            format!("over {total} bytes by this file"),
                        )
                        .file(path),
                    );
                    break;
                }
                files.push(SubmittedFile { path, bytes });
            }
            Err(e) => findings
                .push(Finding::new("file.unreadable", "a readable file", e.to_string()).file(path)),
        }
    }
    Ok(Intake {
        kind: SourceKind::Folder,
        files,
        findings,
    })
}

fn walk(
    root: &Path,
    paths: &mut Vec<String>,
    findings: &mut Vec<Finding>,
) -> Result<(), IntakeError> {
    let entries = mlbench_schema::discover::list_tree(root).map_err(|e| IntakeError::Io {
        path: e.path,
        source: e.source,
    })?;
    for entry in entries {
        match entry.kind {
            TreeKind::File => paths.push(entry.display),
            TreeKind::Symlink => findings.push(
                Finding::new("file.symlink", "a regular file", "a symbolic link")
                    .file(entry.display),
            ),
            TreeKind::Unknown => findings.push(
                Finding::new("file.unreadable", "a file", "no file type").file(entry.display),
            ),
        }
    }
    Ok(())
}
