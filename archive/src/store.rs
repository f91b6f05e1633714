//! The store: `zips/sha256/<first two hex digits>/<sha256>.zip`, written under a
//! temporary name in `tmp/` and renamed into place, and `index.sqlite`, changed only in
//! transactions that take the write lock first (`BEGIN IMMEDIATE`), so that two `add`s
//! at once are serialised, never interleaved.

use crate::date;
use crate::error::ArchiveError;
use mlbench_results::{Hardware, Validity};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

pub use mlbench_results::archive::ArchiveEntry as Entry;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The index's layout version; an index of a newer one is refused.
pub const INDEX_SCHEMA_VERSION: u32 = 1;

/// The index file in the store's folder.
pub const INDEX_NAME: &str = "index.sqlite";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY,
    sha256 TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    round TEXT NOT NULL,
    label TEXT NOT NULL,
    track TEXT NOT NULL,
    gpus TEXT,
    hardware TEXT,
    runtime TEXT,
    passed INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    warnings INTEGER NOT NULL,
    allowed_errors INTEGER NOT NULL,
    tool TEXT NOT NULL,
    received TEXT NOT NULL,
    released TEXT,
    removed TEXT
);
CREATE INDEX IF NOT EXISTS submissions_by_hash ON submissions (sha256);
CREATE UNIQUE INDEX IF NOT EXISTS one_entry_per_label
    ON submissions (round, label, track) WHERE removed IS NULL;
";

/// A store opened on its folder.
pub struct Store {
    root: PathBuf,
    db: Connection,
}

/// What is archived of a submission, besides its bytes.
#[derive(Debug, Clone)]
pub struct NewEntry {
    /// The round (`2026`, `2026-spring`).
    pub round: String,
    /// The vendor's label.
    pub label: String,
    /// Its track (`baseline`, `tweaked`).
    pub track: String,
    /// What it ran on.
    pub hardware: Hardware,
    /// Its runtime in a few words.
    pub runtime: String,
    /// Its validation verdict.
    pub validity: Validity,
    /// The tool that archived it (`mlbench 0.1.0`).
    pub tool: String,
    /// The day it was received.
    pub received: String,
    /// The day it may be published (`None`: at once).
    pub released: Option<String>,
}

/// What [`Store::add`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Added {
    /// A new entry.
    New(Entry),
    /// The same bytes under the same round, label and track: nothing changed.
    AlreadyThere(Entry),
}

/// Something [`Store::check`] found wrong.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    /// The entry, when the problem is one's.
    pub id: Option<i64>,
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub what: String,
}

const COLUMNS: &str = "id, sha256, bytes, round, label, track, gpus, hardware, runtime, passed, \
                       errors, warnings, allowed_errors, tool, received, released, removed";

fn entry_of(row: &rusqlite::Row<'_>) -> rusqlite::Result<Entry> {
    let hardware: Option<String> = row.get(7)?;
    Ok(Entry {
        id: row.get(0)?,
        sha256: row.get(1)?,
        bytes: row.get::<_, i64>(2)? as u64,
        round: row.get(3)?,
        label: row.get(4)?,
        track: row.get(5)?,
        gpus: row.get(6)?,
        hardware: hardware.and_then(|h| serde_json::from_str(&h).ok()),
        runtime: row.get(8)?,
        passed: row.get(9)?,
        errors: row.get::<_, i64>(10)? as u64,
        warnings: row.get::<_, i64>(11)? as u64,
        allowed_errors: row.get(12)?,
        tool: row.get(13)?,
        received: row.get(14)?,
        released: row.get(15)?,
        removed: row.get(16)?,
    })
}

/// The SHA-256 of `bytes`, in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Store {
    /// Opens the store in `root`, making the folder and the index when they are not
    /// there.
    pub fn open(root: &Path) -> Result<Store, ArchiveError> {
        std::fs::create_dir_all(root).map_err(ArchiveError::io(root))?;
        let path = root.join(INDEX_NAME);
        let index = |source| ArchiveError::Index {
            path: path.clone(),
            source,
        };
        let db = Connection::open(&path).map_err(index)?;
        db.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(index)?;
        db.execute_batch(SCHEMA).map_err(index)?;
        let version: Option<String> = db
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(index)?;
        match version.and_then(|v| v.parse::<u32>().ok()) {
            Some(found) if found > INDEX_SCHEMA_VERSION => {
                return Err(ArchiveError::NewerIndex {
                    path,
                    found,
                    known: INDEX_SCHEMA_VERSION,
                });
            }
            Some(_) => {}
            None => {
                db.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?1)",
                    [INDEX_SCHEMA_VERSION.to_string()],
                )
                .map_err(index)?;
            }
        }
        Ok(Store {
            root: root.to_path_buf(),
            db,
        })
    }

    /// The store's folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn index_error(&self) -> impl Fn(rusqlite::Error) -> ArchiveError + '_ {
        move |source| ArchiveError::Index {
            path: self.root.join(INDEX_NAME),
            source,
        }
    }

    /// Where the zip of SHA-256 `sha256` is kept.
    pub fn zip_path(&self, sha256: &str) -> PathBuf {
        let fan = sha256.get(..2).unwrap_or("00");
        self.root
            .join("zips/sha256")
            .join(fan)
            .join(format!("{sha256}.zip"))
    }

    /// Keeps `zip` under its SHA-256 (returned, with the path): written under a temporary
    /// name, synced, then renamed into place. Bytes already there are checked, never
    /// rewritten.
    pub fn put_zip(&self, zip: &[u8]) -> Result<(String, PathBuf), ArchiveError> {
        let sha256 = sha256_hex(zip);
        let path = self.zip_path(&sha256);
        if path.exists() {
            let held = std::fs::read(&path).map_err(ArchiveError::io(&path))?;
            let found = sha256_hex(&held);
            if found != sha256 {
                return Err(ArchiveError::Corrupt {
                    path,
                    expected: sha256,
                    found,
                });
            }
            return Ok((sha256, path));
        }
        let tmp_dir = self.root.join("tmp");
        let parent = path.parent().unwrap_or(&self.root);
        for dir in [&tmp_dir, &parent.to_path_buf()] {
            std::fs::create_dir_all(dir).map_err(ArchiveError::io(dir))?;
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let tmp = tmp_dir.join(format!("{sha256}.{}.{nanos}.part", std::process::id()));
        let mut file = std::fs::File::create(&tmp).map_err(ArchiveError::io(&tmp))?;
        file.write_all(zip).map_err(ArchiveError::io(&tmp))?;
        file.sync_all().map_err(ArchiveError::io(&tmp))?;
        drop(file);
        std::fs::rename(&tmp, &path).map_err(ArchiveError::io(&path))?;
        Ok((sha256, path))
    }

    /// Indexes the zip of SHA-256 `sha256` (already kept by [`Store::put_zip`]) as `new`,
    /// in one transaction holding the write lock: the same bytes under the same round,
    /// label and track are left as they are; under another, or another submission under
    /// this one, refused.
    pub fn add(&mut self, sha256: &str, new: &NewEntry) -> Result<Added, ArchiveError> {
        let path = self.zip_path(sha256);
        let bytes = std::fs::metadata(&path)
            .map_err(ArchiveError::io(&path))?
            .len();
        let root = self.root.join(INDEX_NAME);
        let index = |source| ArchiveError::Index {
            path: root.clone(),
            source,
        };
        let tx = (self.db)
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(index)?;
        let same_bytes: Option<Entry> = tx
            .query_row(
                &format!("SELECT {COLUMNS} FROM submissions WHERE sha256 = ?1 AND removed IS NULL"),
                [sha256],
                entry_of,
            )
            .optional()
            .map_err(index)?;
        if let Some(e) = same_bytes {
            if (e.round.as_str(), e.label.as_str(), e.track.as_str())
                == (new.round.as_str(), new.label.as_str(), new.track.as_str())
            {
                return Ok(Added::AlreadyThere(e));
            }
            return Err(ArchiveError::SameBytes {
                sha256: sha256.to_owned(),
                id: e.id,
                round: e.round,
                label: e.label,
                track: e.track,
            });
        }
        let taken: Option<i64> = tx
            .query_row(
                "SELECT id FROM submissions WHERE round = ?1 AND label = ?2 AND track = ?3 \
                 AND removed IS NULL",
                params![new.round, new.label, new.track],
                |r| r.get(0),
            )
            .optional()
            .map_err(index)?;
        if let Some(id) = taken {
            return Err(ArchiveError::LabelTaken {
                round: new.round.clone(),
                label: new.label.clone(),
                track: new.track.clone(),
                id,
            });
        }
        let hardware = serde_json::to_string(&new.hardware).ok();
        let v = &new.validity;
        tx.execute(
            "INSERT INTO submissions (sha256, bytes, round, label, track, gpus, hardware, \
             runtime, passed, errors, warnings, allowed_errors, tool, received, released) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            params![
                sha256,
                bytes as i64,
                new.round,
                new.label,
                new.track,
                new.hardware.gpus_label(),
                hardware,
                new.runtime,
                v.passed,
                v.errors as i64,
                v.warnings as i64,
                v.allowed_errors,
                new.tool,
                new.received,
                new.released,
            ],
        )
        .map_err(index)?;
        let id = tx.last_insert_rowid();
        let entry = tx
            .query_row(
                &format!("SELECT {COLUMNS} FROM submissions WHERE id = ?1"),
                [id],
                entry_of,
            )
            .map_err(index)?;
        tx.commit().map_err(index)?;
        Ok(Added::New(entry))
    }

    /// Every entry, removed ones included, by id.
    pub fn list(&self) -> Result<Vec<Entry>, ArchiveError> {
        let mut stmt = (self.db)
            .prepare(&format!("SELECT {COLUMNS} FROM submissions ORDER BY id"))
            .map_err(self.index_error())?;
        let rows = stmt.query_map([], entry_of).map_err(self.index_error())?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(self.index_error())
    }

    /// The entry `id` names: its number (`3`, `#3`), or a prefix of its zip's SHA-256 of
    /// at least 6 hex digits.
    pub fn find(&self, id: &str) -> Result<Entry, ArchiveError> {
        let all = self.list()?;
        let wanted = id.trim_start_matches('#');
        if let Ok(n) = wanted.parse::<i64>() {
            if let Some(e) = all.iter().find(|e| e.id == n) {
                return Ok(e.clone());
            }
        }
        let hex = wanted.len() >= 6 && wanted.bytes().all(|b| b.is_ascii_hexdigit());
        let matching: Vec<&Entry> = match hex {
            true => (all.iter())
                .filter(|e| e.sha256.starts_with(&wanted.to_ascii_lowercase()))
                .collect(),
            false => Vec::new(),
        };
        match matching.as_slice() {
            [] => Err(ArchiveError::NotFound(id.to_owned())),
            [one] => Ok((*one).clone()),
            many => Err(ArchiveError::Ambiguous {
                prefix: id.to_owned(),
                ids: many.iter().map(|e| e.id).collect(),
            }),
        }
    }

    /// Marks the entry `id` names removed on `day`; its zip stays (and so does its row).
    pub fn remove(&mut self, id: &str, day: &str) -> Result<Entry, ArchiveError> {
        let entry = self.find(id)?;
        if let Some(date) = entry.removed {
            return Err(ArchiveError::AlreadyRemoved { id: entry.id, date });
        }
        (self.db)
            .execute(
                "UPDATE submissions SET removed = ?1 WHERE id = ?2 AND removed IS NULL",
                params![day, entry.id],
            )
            .map_err(self.index_error())?;
        self.find(&entry.id.to_string())
    }

    /// Every zip re-hashed against the index: a zip missing, one whose bytes changed, a
    /// zip or a temporary file the index does not know.
    pub fn check(&self) -> Result<Vec<Problem>, ArchiveError> {
        let mut problems = Vec::new();
        let entries = self.list()?;
        let mut known = std::collections::BTreeSet::new();
        for e in &entries {
            let path = self.zip_path(&e.sha256);
            known.insert(path.clone());
            let what = match std::fs::read(&path) {
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    "missing: the index lists it, the store has no such file".to_owned()
                }
                Err(err) => format!("unreadable: {err}"),
                Ok(bytes) => match sha256_hex(&bytes) {
                    found if found == e.sha256 => continue,
                    found => format!("changed on disk: its bytes hash to {found}"),
                },
            };
            let id = Some(e.id);
            problems.push(Problem { id, path, what });
        }
        for path in files_under(&self.root.join("zips"))? {
            if !known.contains(&path) {
                let what = "not in the index (an add that stopped before indexing it?)".into();
                problems.push(Problem {
                    id: None,
                    path,
                    what,
                });
            }
        }
        Ok(problems)
    }
}

/// Every file under `dir`, sorted (none when it does not exist).
fn files_under(dir: &Path) -> Result<Vec<PathBuf>, ArchiveError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let read = match std::fs::read_dir(&d) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            other => other.map_err(ArchiveError::io(&d))?,
        };
        for item in read {
            let path = item.map_err(ArchiveError::io(&d))?.path();
            match path.is_dir() {
                true => stack.push(path),
                false => out.push(path),
            }
        }
    }
    out.sort();
    Ok(out)
}

/// `text` as a release date, when it is one.
pub fn release_date(text: &str) -> Option<String> {
    date::parse(text).map(str::to_owned)
}
