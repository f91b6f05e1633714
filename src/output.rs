//! Where results go: standard output, or a file that is never overwritten by accident.
//! A failure to write is an [`OutputError`] (exit 3, docs/exit-codes.md); a refusal to
//! replace an existing file is a usage error (exit 2) with one message, [`refusal`].

use anyhow::bail;
use std::io::Write;
use std::path::{Path, PathBuf};

/// An output that could not be written (exit 3).
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

impl OutputError {
    fn new(path: &Path, action: &'static str, source: std::io::Error) -> Self {
        OutputError {
            path: path.to_path_buf(),
            action,
            source,
        }
    }
}

/// The one message for a destination that exists and is not replaced without `--force`.
pub fn refusal(path: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "{}: already exists; not overwriting it (use --force to replace it)",
        path.display()
    )
}

/// Fails when one of `paths` exists and `force` is off: checked before any work, so a
/// refused run writes nothing at all.
pub fn refuse_existing<'a>(
    paths: impl IntoIterator<Item = &'a PathBuf>,
    force: bool,
) -> anyhow::Result<()> {
    if force {
        return Ok(());
    }
    for path in paths {
        if path.exists() {
            return Err(refusal(path));
        }
    }
    Ok(())
}

/// Creates a folder for outputs (and its parents).
pub fn create_dir(dir: &Path) -> Result<(), OutputError> {
    std::fs::create_dir_all(dir).map_err(|e| OutputError::new(dir, "create", e))
}

/// Writes `text` to `path`, or to standard output when there is none.
///
/// A file is written beside its destination and renamed into place, so an interrupted
/// write never leaves half a report; an existing file is replaced only with `force`.
pub fn emit_bytes(text: &[u8], path: Option<&Path>, force: bool) -> anyhow::Result<()> {
    let Some(path) = path else {
        let stdout = Path::new("-");
        let mut out = std::io::stdout().lock();
        out.write_all(text)
            .and_then(|()| out.flush())
            .map_err(|e| OutputError::new(stdout, "write", e))?;
        return Ok(());
    };
    if path.exists() && !force {
        return Err(refusal(path));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Some(file_name) = path.file_name() else {
        bail!("{}: not a file name", path.display());
    };
    let tmp = dir.join(format!(".{}.mlbench-tmp", file_name.to_string_lossy()));
    if let Err(e) = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path)) {
        // Leave nothing half-written behind.
        let _ = std::fs::remove_file(&tmp);
        return Err(OutputError::new(path, "write", e).into());
    }
    Ok(())
}
