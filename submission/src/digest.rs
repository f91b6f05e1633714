//! SHA-256 digests, streamed: a file is hashed a chunk at a time, never held whole. The
//! provenance of a page (the input files of `report --html` and `grid --html`) comes
//! from the one listing of each submission: its regular files hashed, what is not one
//! (a link, a FIFO, a device, a file set aside by `--max-bytes`) named, never opened, and
//! nothing outside the submission read.

use crate::intake::{Limits, Listing, Opened, SourceKind};
use mlbench_schema::read_buffer::{Links, open_regular};
use mlbench_schema::unique_id::hex;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The SHA-256 of `bytes`, in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The SHA-256 of everything `reader` yields, in lower-case hex, read 64 KiB at a time.
pub fn sha256_reader(mut reader: impl Read) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => hasher.update(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(hex(&hasher.finalize()))
}

/// The SHA-256 of the regular file at `path`, streamed; `links` says whether a link
/// there is followed (a path named on the command line) or refused (inside a submission).
/// Anything but a regular file is refused before it is read.
pub fn sha256_file(path: &Path, links: Links) -> std::io::Result<String> {
    let named =
        |e: std::io::Error| std::io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    sha256_reader(open_regular(path, links).map_err(named)?).map_err(named)
}

/// (path, SHA-256) of each file of a folder's `listing` (paths shown under `root`, as
/// given), sorted by path component by component; each entry that is not a regular file,
/// or that was set aside, is named with why it was not read in place of its digest. A
/// zip's listing has no files on disk: it is hashed as one file ([`input_digests`]).
pub fn listing_digests(root: &Path, listing: &Listing) -> Vec<(String, String)> {
    let listed: Vec<(PathBuf, String)> = (0..listing.paths().len())
        .into_par_iter()
        .filter_map(|i| {
            let real = listing.disk_path(i)?;
            let digest = sha256_file(&real, Links::Refuse)
                .unwrap_or_else(|e| format!("not read: {}", strip_path(&e, &real)));
            Some((PathBuf::from(&listing.paths()[i]), digest))
        })
        .collect();
    let mut out: Vec<(PathBuf, String)> = listed;
    let mut named = std::collections::HashSet::new();
    for fact in listing.facts() {
        let Some(file) = &fact.file else { continue };
        if listing.paths().binary_search(file).is_ok() || !named.insert(file.clone()) {
            continue;
        }
        let why = match fact.rule {
            "archive.too-large" => "not read: over --max-bytes".to_owned(),
            _ => format!("not read: {}", fact.found),
        };
        out.push((PathBuf::from(file), why));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.into_iter()
        .map(|(rel, digest)| (root.join(rel).display().to_string(), digest))
        .collect()
}

/// An error's message without the path it was given (the row names the file).
fn strip_path(e: &std::io::Error, path: &Path) -> String {
    let message = e.to_string();
    let prefix = format!("{}: ", path.display());
    message
        .strip_prefix(&prefix)
        .map_or(message.clone(), str::to_owned)
}

/// (path, SHA-256) of the submission at `path` listed as `listing`, for a page's
/// provenance: a folder's listed files ([`listing_digests`]), a zip hashed as one file.
pub fn submission_digests(path: &Path, listing: &Listing) -> Vec<(String, String)> {
    match listing.kind() {
        SourceKind::Folder => listing_digests(path, listing),
        SourceKind::Zip => vec![file_digest(path)],
    }
}

/// (path, SHA-256) of a file named on the command line (a link there is followed), or
/// why it was not read in place of the digest.
fn file_digest(path: &Path) -> (String, String) {
    let digest = sha256_file(path, Links::Follow)
        .unwrap_or_else(|e| format!("not read: {}", strip_path(&e, path)));
    (path.display().to_string(), digest)
}

/// (path, SHA-256) of each input, for the provenance of a page: a folder stands for the
/// files of its listing ([`listing_digests`]: from the submission among `opened` at that
/// path, else opened here within `limits`), a zip or a report file given alone is hashed
/// as given; what cannot be read is named with why in place of its digest.
pub fn input_digests(
    inputs: &[PathBuf],
    opened: &[Opened],
    limits: &Limits,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for path in inputs {
        if !path.is_dir() {
            out.push(file_digest(path));
            continue;
        }
        match opened.iter().find(|o| o.path() == path) {
            Some(sub) => out.extend(submission_digests(path, sub.listing())),
            None => match Opened::open(path, limits) {
                Ok(sub) => out.extend(submission_digests(path, sub.listing())),
                Err(e) => out.push((path.display().to_string(), format!("not read: {e}"))),
            },
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_digest_is_the_digest_of_the_bytes() {
        // sha256("abc"), FIPS 180-2's example.
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex(b"abc"), abc);
        assert_eq!(sha256_reader(&b"abc"[..]).unwrap(), abc);
        let long = vec![7u8; (64 << 10) * 3 + 5];
        assert_eq!(sha256_reader(&long[..]).unwrap(), sha256_hex(&long));
    }

    #[test]
    fn a_folder_is_its_regular_files_and_links_are_named_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("sub");
        std::fs::create_dir_all(root.join("output0")).unwrap();
        std::fs::write(root.join("output0/fast_0.json"), "[]").unwrap();
        std::fs::write(root.join("a.json"), "abc").unwrap();
        std::fs::write(dir.path().join("secret"), "outside").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("link")).unwrap();
        let got = input_digests(std::slice::from_ref(&root), &[], &Limits::default());
        let shown = |rel: &str| root.join(rel).display().to_string();
        assert_eq!(
            got,
            [
                (shown("a.json"), sha256_hex(b"abc")),
                (shown("link"), "not read: a symbolic link".to_owned()),
                (shown("output0/fast_0.json"), sha256_hex(b"[]")),
            ]
        );
    }

    #[test]
    fn order_is_component_by_component() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/b"), "1").unwrap();
        std::fs::write(dir.path().join("a.json"), "2").unwrap();
        let got = input_digests(&[dir.path().to_owned()], &[], &Limits::default());
        let names: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
        let a_b = dir.path().join("a/b").display().to_string();
        let a_json = dir.path().join("a.json").display().to_string();
        assert_eq!(names, [a_b.as_str(), a_json.as_str()]);
    }

    #[test]
    fn a_file_over_the_limit_is_named_not_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big.log"), vec![b'x'; 100]).unwrap();
        let got = input_digests(&[dir.path().to_owned()], &[], &Limits::within(10));
        assert_eq!(got[0].1, "not read: over --max-bytes");
    }
}
