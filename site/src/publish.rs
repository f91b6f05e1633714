//! `mlbench publish`: a store's released entries as a static site, written whole into a
//! folder beside `--out`, then renamed into place.

use crate::build::build;
use crate::error::SiteError;
use crate::files::{slug_of, tool};
use crate::index::{SITE_SCHEMA_VERSION, SiteEntry, SiteIndex, SiteOptions, SiteRound};
use crate::sums;
use mlbench_archive::{Store, Tampered};
use mlbench_schema::runs::natural_key;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What [`publish`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    /// Rounds.
    pub rounds: usize,
    /// Submissions published.
    pub submissions: usize,
    /// Submissions released after `now`: left out.
    pub unreleased: usize,
    /// Submissions removed: left out.
    pub removed: usize,
    /// Files in the site, `SHA256SUMS` included.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
}

/// The site's index of `entries`: rounds in order (text, digits as numbers), each
/// round's entries by label then track.
pub(crate) fn index_of(entries: Vec<SiteEntry>, now: &str, options: SiteOptions) -> SiteIndex {
    let mut by_round: BTreeMap<String, Vec<SiteEntry>> = BTreeMap::new();
    for e in entries {
        by_round.entry(e.round.clone()).or_default().push(e);
    }
    let mut rounds: Vec<SiteRound> = (by_round.into_iter())
        .map(|(round, mut entries)| {
            entries.sort_by(|a, b| (&a.label, &a.track).cmp(&(&b.label, &b.track)));
            let slug = slug_of(&round);
            SiteRound {
                page: format!("rounds/{slug}/index.html"),
                json: format!("rounds/{slug}/grid.json"),
                round,
                entries,
            }
        })
        .collect();
    rounds.sort_by_cached_key(|r| (natural_key(&r.round), r.round.clone()));
    SiteIndex {
        schema_version: SITE_SCHEMA_VERSION,
        tool: tool(),
        now: now.to_owned(),
        options,
        unreleased: 0,
        removed: 0,
        rounds,
        history: ["history/index.html".into(), "history/history.json".into()],
    }
}

/// Whether `dir` is missing or an empty folder.
fn is_empty_or_missing(dir: &Path) -> Result<bool, SiteError> {
    match std::fs::read_dir(dir) {
        Ok(mut items) => Ok(items.next().is_none()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(SiteError::io(dir)(e)),
    }
}

/// Writes `files` under `root` (folders made as needed).
pub(crate) fn write_all(root: &Path, files: &[(String, Vec<u8>)]) -> Result<(), SiteError> {
    for (path, bytes) in files {
        let file = root.join(path);
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(SiteError::io(dir))?;
        }
        std::fs::write(&file, bytes).map_err(SiteError::io(&file))?;
    }
    Ok(())
}

/// Publishes the entries of `store` out on `now` into `out`: refused when `out` holds
/// anything, unless `force` (then replaced whole). Every zip is re-hashed first; one
/// missing or changed is refused, naming it.
pub fn publish(
    store: &Store,
    out: &Path,
    now: &str,
    options: SiteOptions,
    force: bool,
) -> Result<Published, SiteError> {
    // `--force` replaces `out` whole: never the store, nor a folder around it.
    let absolute = |p: &Path| std::path::absolute(p).map_err(SiteError::io(p));
    let (site, kept) = (
        absolute(out)?,
        std::fs::canonicalize(store.root()).map_err(SiteError::io(store.root()))?,
    );
    let site = std::fs::canonicalize(&site).unwrap_or(site);
    if site.starts_with(&kept) || kept.starts_with(&site) {
        return Err(SiteError::OverStore {
            out: out.to_path_buf(),
            store: store.root().to_path_buf(),
        });
    }
    if !force && !is_empty_or_missing(out)? {
        return Err(SiteError::NotEmpty(out.to_path_buf()));
    }
    let released = store.released(now)?;
    let problems = store.verify_entries(&released.entries);
    if !problems.is_empty() {
        return Err(Tampered(problems).into());
    }
    let entries = released.entries.iter().map(SiteEntry::of).collect();
    let mut index = index_of(entries, now, options);
    (index.unreleased, index.removed) = (released.unreleased, released.removed);
    let staging = staging_dir(out)?;
    let written = write_site(store, &staging, &mut index);
    let written = written.and_then(|w| replace(out, &staging).map(|()| w));
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    let (files, bytes) = written?;
    Ok(Published {
        rounds: index.rounds.len(),
        submissions: index.entries().count(),
        unreleased: index.unreleased,
        removed: index.removed,
        files,
        bytes,
    })
}

/// A new folder beside `out` to write the site in.
fn staging_dir(out: &Path) -> Result<PathBuf, SiteError> {
    let name = out
        .file_name()
        .map_or_else(|| "site".into(), |n| n.to_string_lossy().into_owned());
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(SiteError::io(&parent))?;
    let staging = parent.join(format!(".{name}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir(&staging).map_err(SiteError::io(&staging))?;
    Ok(staging)
}

/// The zips, every page, then `SHA256SUMS`: (files, bytes) written.
fn write_site(
    store: &Store,
    staging: &Path,
    index: &mut SiteIndex,
) -> Result<(usize, u64), SiteError> {
    let zips = staging.join("zips");
    std::fs::create_dir_all(&zips).map_err(SiteError::io(&zips))?;
    let mut sums = Vec::new();
    let mut bytes = 0;
    for e in index.entries() {
        let zip = std::fs::read(store.zip_path(&e.sha256))
            .map_err(SiteError::io(store.zip_path(&e.sha256)))?;
        let to = staging.join(&e.zip);
        std::fs::write(&to, &zip).map_err(SiteError::io(&to))?;
        bytes += zip.len() as u64;
        sums.push((e.zip.clone(), sums::sha256_hex(&zip)));
    }
    let root = std::fs::canonicalize(staging).map_err(SiteError::io(staging))?;
    let files = build(&root, index)?;
    write_all(staging, &files)?;
    for (path, content) in &files {
        bytes += content.len() as u64;
        sums.push((path.clone(), sums::sha256_hex(content)));
    }
    sums.sort();
    let text = sums::render(&sums);
    let file = staging.join(sums::SUMS_NAME);
    std::fs::write(&file, &text).map_err(SiteError::io(&file))?;
    Ok((sums.len() + 1, bytes + text.len() as u64))
}

/// `staging` renamed to `out`, whatever `out` held removed first.
fn replace(out: &Path, staging: &Path) -> Result<(), SiteError> {
    match std::fs::symlink_metadata(out) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(out).map_err(SiteError::io(out))?,
        Ok(_) => std::fs::remove_file(out).map_err(SiteError::io(out))?,
        Err(_) => {}
    }
    std::fs::rename(staging, out).map_err(SiteError::io(out))
}
