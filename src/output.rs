//! Where results go: standard output, or a file that is never overwritten by accident.

use anyhow::{Context, bail};
use std::io::Write;
use std::path::Path;

/// Fails when one of `paths` exists and `force` is off: checked before any work, so a
/// refused run writes nothing at all.
pub fn refuse_existing<'a>(
    paths: impl IntoIterator<Item = &'a std::path::PathBuf>,
    force: bool,
) -> anyhow::Result<()> {
    if force {
        return Ok(());
    }
    for path in paths {
        if path.exists() {
            bail!(
                "{}: already exists; not overwriting it (use --force to replace it)",
                path.display()
            );
        }
    }
    Ok(())
}

/// Writes `text` to `path`, or to standard output when there is none.
///
/// A file is written beside its destination and renamed into place, so an interrupted
/// write never leaves half a report; an existing file is replaced only with `force`.
pub fn emit(text: &str, path: Option<&Path>, force: bool) -> anyhow::Result<()> {
    emit_bytes(text.as_bytes(), path, force)
}

/// [`emit`] for bytes.
pub fn emit_bytes(text: &[u8], path: Option<&Path>, force: bool) -> anyhow::Result<()> {
    let Some(path) = path else {
        let mut out = std::io::stdout().lock();
        out.write_all(text)?;
        return Ok(out.flush()?);
    };
    if path.exists() && !force {
        bail!(
            "{}: already exists; not overwriting it (use --force to replace it)",
            path.display()
        );
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let file_name = path.file_name().context("--output needs a file name")?;
    let tmp = dir.join(format!(".{}.mlbench-tmp", file_name.to_string_lossy()));
    std::fs::write(&tmp, text).with_context(|| format!("{}: cannot write", path.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("{}: cannot write", path.display()))?;
    Ok(())
}
