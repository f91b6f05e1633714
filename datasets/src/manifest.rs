//! `MANIFEST.json` in the data root: for each data set prepared there, the tool, seed and
//! scale that made it and each of its files with its size and SHA-256. Every prepare
//! rewrites the entries of the sets it made and keeps the others; [`check`] finds a set
//! whose files are missing or partial before a job reads them.

use crate::make;
use crate::{DataError, Scale};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The manifest's name in the data root.
pub const MANIFEST: &str = "MANIFEST.json";
/// The manifest's format version.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Each data set's entry, by the set's name (`mnist`, `wikitext-2`, …).
    pub sets: BTreeMap<String, SetEntry>,
}

/// One data set as it was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetEntry {
    /// The tool that made it (`mlbench-datasets 0.1.0`).
    pub tool: String,
    /// The seed it was made with.
    pub seed: u64,
    /// `full` or `smoke`.
    pub scale: String,
    /// Its files, in the order written.
    pub files: Vec<FileEntry>,
}

/// One file of a data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// The path relative to the data root, `/`-separated.
    pub path: String,
    /// The size in bytes.
    pub bytes: u64,
    /// The SHA-256, lowercase hex.
    pub sha256: String,
}

/// `full` or `smoke`.
pub fn scale_name(scale: Scale) -> &'static str {
    match scale {
        Scale::Full => "full",
        Scale::Smoke => "smoke",
    }
}

/// This crate's name and version, as entries name it.
pub fn tool() -> String {
    format!("mlbench-datasets {}", env!("CARGO_PKG_VERSION"))
}

/// Reads `root/MANIFEST.json`; `None` when there is none.
pub fn read(root: &Path) -> Result<Option<Manifest>, DataError> {
    let path = root.join(MANIFEST);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(DataError::Io { path, source: e }),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| DataError::Format {
            path,
            place: format!("line {} column {}", e.line(), e.column()),
            what: e.to_string(),
        })
}

/// The entry of `files` (relative to `root`) as made with `seed` and `scale`: each
/// file's size and SHA-256, read back from disk.
pub fn entry(
    root: &Path,
    files: &[PathBuf],
    seed: u64,
    scale: Scale,
) -> Result<SetEntry, DataError> {
    let files = files
        .iter()
        .map(|relative| {
            let (bytes, sha256) = digest(&root.join(relative))?;
            let path = relative.to_string_lossy().replace('\\', "/");
            Ok(FileEntry {
                path,
                bytes,
                sha256,
            })
        })
        .collect::<Result<_, DataError>>()?;
    Ok(SetEntry {
        tool: tool(),
        seed,
        scale: scale_name(scale).to_owned(),
        files,
    })
}

/// Writes `entries` into `root/MANIFEST.json`, replacing those sets' entries and keeping
/// the others (written beside it, then renamed into place).
pub fn record(root: &Path, entries: Vec<(String, SetEntry)>) -> Result<Manifest, DataError> {
    let mut manifest = read(root)?.unwrap_or(Manifest {
        schema_version: SCHEMA_VERSION,
        sets: BTreeMap::new(),
    });
    manifest.schema_version = SCHEMA_VERSION;
    manifest.sets.extend(entries);
    let mut text = serde_json::to_string_pretty(&manifest).expect("plain data");
    text.push('\n');
    let tmp = format!("{MANIFEST}.tmp");
    make::write(root, &tmp, text.as_bytes())?;
    let path = root.join(MANIFEST);
    std::fs::rename(root.join(&tmp), &path).map_err(DataError::io(&path))?;
    Ok(manifest)
}

/// Checks that the set `name` is in `root`'s manifest and that each of its files is there
/// with its recorded size (`hashes`: and its SHA-256). An error names the manifest, the
/// missing entry or the first missing or partial file, and `command`, which makes it.
pub fn check(root: &Path, name: &str, command: &str, hashes: bool) -> Result<(), DataError> {
    let missing = |path: PathBuf, what: String| DataError::Missing {
        path,
        what,
        command: command.to_owned(),
    };
    let manifest_path = root.join(MANIFEST);
    let Some(manifest) = read(root)? else {
        return Err(missing(
            manifest_path,
            "no manifest: no data set was prepared here".into(),
        ));
    };
    let Some(entry) = manifest.sets.get(name) else {
        return Err(missing(
            manifest_path,
            format!("no entry for the data set {name}"),
        ));
    };
    for file in &entry.files {
        let path = root.join(&file.path);
        let size = match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() => meta.len(),
            _ => return Err(missing(path, format!("missing (a file of {name})"))),
        };
        if size != file.bytes {
            let what = format!("partial: {size} bytes, the manifest says {}", file.bytes);
            return Err(missing(path, what));
        }
        if hashes && digest(&path)?.1 != file.sha256 {
            return Err(missing(path, "its SHA-256 is not the manifest's".into()));
        }
    }
    Ok(())
}

/// The size and SHA-256 (lowercase hex) of the file at `path`, streamed.
pub fn digest(path: &Path) -> Result<(u64, String), DataError> {
    let mut file = std::fs::File::open(path).map_err(DataError::io(path))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = file.read(&mut buffer).map_err(DataError::io(path))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        total += n as u64;
    }
    let hex = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok((total, hex))
}
