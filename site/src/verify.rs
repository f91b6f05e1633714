//! `mlbench verify SITE`: every file against `SHA256SUMS`, each zip against its name,
//! then every page made again from the site's zips and compared, figure by figure.

use crate::build::build;
use crate::error::SiteError;
use crate::index::{SITE_SCHEMA_VERSION, SiteIndex};
use crate::sums::{self, SUMS_NAME, sha256_hex};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One way a site is not what its zips say.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// The file, relative to the site.
    pub file: String,
    /// Where in it (a JSON path, `vendors[1].cells.convnet.ratio`), when a figure.
    pub place: Option<String>,
    /// What differs.
    pub what: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.place {
            Some(place) => write!(f, "{}: {place}: {}", self.file, self.what),
            None => write!(f, "{}: {}", self.file, self.what),
        }
    }
}

fn differs(file: &str, place: Option<String>, what: impl Into<String>) -> Difference {
    Difference {
        file: file.to_owned(),
        place,
        what: what.into(),
    }
}

/// The most figures named per file (the rest counted in one line).
const PER_FILE: usize = 50;

/// Every difference between the site in `site` and what its zips make, none when it is
/// exactly what they say.
pub fn verify(site: &Path) -> Result<Vec<Difference>, SiteError> {
    let not_a_site = |path: &Path, e: std::io::Error| SiteError::Malformed {
        path: path.to_path_buf(),
        why: format!("{e}: not a site `mlbench publish` wrote"),
    };
    let root = std::fs::canonicalize(site).map_err(|e| not_a_site(site, e))?;
    let mut index = read_index(&root)?;
    let on_disk = files_under(&root)?;
    let mut out = check_sums(&root, &on_disk)?;
    index
        .rounds
        .iter_mut()
        .flat_map(|r| &mut r.entries)
        .for_each(|e| e.files.clear());
    let made = match build(&root, &mut index) {
        Ok(files) => files,
        Err(e) => {
            out.push(differs(
                "zips/",
                None,
                format!("the pages cannot be made again from the zips: {e}"),
            ));
            return Ok(out);
        }
    };
    let made_paths: BTreeMap<&str, &[u8]> = made
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_slice()))
        .collect();
    for (path, bytes) in &made {
        let file = root.join(path);
        match std::fs::read(&file) {
            Err(_) => out.push(differs(path, None, "missing: its zips make it")),
            Ok(held) if held == *bytes => {}
            Ok(held) if path.ends_with(".json") => out.extend(compare_json(path, &held, bytes)),
            Ok(_) => out.push(differs(path, None, "differs from the page its zips make")),
        }
    }
    for path in on_disk.keys() {
        let ours = path == SUMS_NAME
            || path.starts_with("zips/")
            || made_paths.contains_key(path.as_str());
        if !ours {
            out.push(differs(
                path,
                None,
                "not made from the zips (publish writes no such file)",
            ));
        }
    }
    Ok(out)
}

/// The site's `index.json`, of this layout, every zip it names inside `zips/`.
fn read_index(root: &Path) -> Result<SiteIndex, SiteError> {
    let not_a_site = |path: &Path, e: std::io::Error| SiteError::Malformed {
        path: path.to_path_buf(),
        why: format!("{e}: not a site `mlbench publish` wrote"),
    };
    let index_path = root.join("index.json");
    let text = std::fs::read(&index_path).map_err(|e| not_a_site(&index_path, e))?;
    let malformed = |why: String| SiteError::Malformed {
        path: index_path.clone(),
        why,
    };
    let index: SiteIndex = serde_json::from_slice(&text).map_err(|e| malformed(e.to_string()))?;
    if index.schema_version != SITE_SCHEMA_VERSION {
        let why = format!(
            "schema_version {}; this mlbench reads {SITE_SCHEMA_VERSION}",
            index.schema_version
        );
        return Err(malformed(why));
    }
    for e in index.entries() {
        if !e.zip.starts_with("zips/") || e.zip.contains("..") {
            return Err(malformed(format!(
                "#{}: zip `{}` is not in the site's zips/",
                e.id, e.zip
            )));
        }
    }
    Ok(index)
}

/// Every file under `root`, relative, `/`-separated, with its full path.
fn files_under(root: &Path) -> Result<BTreeMap<String, PathBuf>, SiteError> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for item in std::fs::read_dir(&dir).map_err(SiteError::unreadable(&dir))? {
            let path = item.map_err(SiteError::unreadable(&dir))?.path();
            let kind = std::fs::symlink_metadata(&path).map_err(SiteError::unreadable(&path))?;
            if kind.is_dir() {
                stack.push(path);
                continue;
            }
            // A link or a device is never followed or read: publish writes neither.
            if !kind.is_file() {
                let rel = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                return Err(SiteError::Malformed {
                    path: path.clone(),
                    why: format!("{rel}: not a regular file (publish writes only files)"),
                });
            }
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.insert(parts.join("/"), path);
        }
    }
    Ok(out)
}

/// Each file against `SHA256SUMS` (listed, present, same hash; none unlisted), each zip
/// against its name.
fn check_sums(
    root: &Path,
    on_disk: &BTreeMap<String, PathBuf>,
) -> Result<Vec<Difference>, SiteError> {
    let sums_path = root.join(SUMS_NAME);
    let mut out = Vec::new();
    let listed = match std::fs::read_to_string(&sums_path) {
        Err(_) => {
            out.push(differs(
                SUMS_NAME,
                None,
                "missing: nothing says what the site's files were",
            ));
            Vec::new()
        }
        Ok(text) => match sums::parse(&text) {
            Ok(listed) => listed,
            Err(line) => {
                out.push(differs(
                    SUMS_NAME,
                    Some(format!("line {line}")),
                    "not `<sha256>  <path>`",
                ));
                Vec::new()
            }
        },
    };
    let listed_map: BTreeMap<&str, &str> = listed
        .iter()
        .map(|(p, h)| (p.as_str(), h.as_str()))
        .collect();
    for (path, full) in on_disk {
        if path == SUMS_NAME {
            continue;
        }
        let bytes = std::fs::read(full).map_err(SiteError::unreadable(full))?;
        let hex = sha256_hex(&bytes);
        match listed_map.get(path.as_str()) {
            None => out.push(differs(path, None, "not in SHA256SUMS")),
            Some(want) if *want != hex => out.push(differs(
                path,
                None,
                format!("SHA256SUMS says {want}, its bytes hash to {hex}"),
            )),
            Some(_) => {}
        }
        if let Some(name) = path
            .strip_prefix("zips/")
            .and_then(|n| n.strip_suffix(".zip"))
            && name != hex
        {
            out.push(differs(
                path,
                None,
                format!("a zip named by its hash, but its bytes hash to {hex}"),
            ));
        }
    }
    for (path, _) in &listed {
        if !on_disk.contains_key(path) && !path.is_empty() {
            out.push(differs(path, None, "listed in SHA256SUMS, not in the site"));
        }
    }
    Ok(out)
}

/// The figures of a page's JSON that differ from those its zips make.
fn compare_json(path: &str, held: &[u8], made: &[u8]) -> Vec<Difference> {
    let Ok(held) = serde_json::from_slice::<Value>(held) else {
        return vec![differs(
            path,
            None,
            "not JSON; its zips make a JSON document",
        )];
    };
    let made: Value = serde_json::from_slice(made).unwrap_or(Value::Null);
    let mut found = Vec::new();
    walk(&held, &made, String::new(), &mut found);
    let mut out: Vec<Difference> = (found.iter().take(PER_FILE))
        .map(|(place, what)| differs(path, Some(place.clone()), what.clone()))
        .collect();
    if found.len() > PER_FILE {
        out.push(differs(
            path,
            None,
            format!("and {} more figures", found.len() - PER_FILE),
        ));
    }
    if out.is_empty() {
        // Same values, other bytes (spacing, key order): still not the file publish writes.
        out.push(differs(
            path,
            None,
            "same figures, other bytes than publish writes",
        ));
    }
    out
}

/// Every place where `held` and `made` differ.
fn walk(held: &Value, made: &Value, place: String, out: &mut Vec<(String, String)>) {
    let at = |key: &str| match place.is_empty() {
        true => key.to_owned(),
        false => format!("{place}.{key}"),
    };
    match (held, made) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                match b.get(k) {
                    Some(w) => walk(v, w, at(k), out),
                    None => out.push((at(k), "not among the figures its zips make".into())),
                }
            }
            for k in b.keys().filter(|k| !a.contains_key(*k)) {
                out.push((at(k), "missing: its zips make it".into()));
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                walk(v, w, format!("{place}[{i}]"), out);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push((place, format!("the page says {a}, its zips make {b}"))),
    }
}
