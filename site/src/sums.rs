//! `SHA256SUMS`: one line per file of the site, `sha256sum`'s format (`<hex>  <path>`),
//! sorted by path; `sha256sum -c SHA256SUMS` checks it too.

use sha2::{Digest, Sha256};

/// The name of the checksums file at the site's root.
pub const SUMS_NAME: &str = "SHA256SUMS";

/// The SHA-256 of `bytes`, in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The checksums file of `files` (path, SHA-256), in the order given.
pub fn render(files: &[(String, String)]) -> String {
    files
        .iter()
        .map(|(path, hex)| format!("{hex}  {path}\n"))
        .collect()
}

/// The (path, SHA-256) of each line, or the number of the first line that is not one.
pub fn parse(text: &str) -> Result<Vec<(String, String)>, usize> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let (hex, path) = line.split_once("  ").ok_or(i + 1)?;
        let hex_ok = hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit());
        if !hex_ok || path.is_empty() {
            return Err(i + 1);
        }
        out.push((path.to_owned(), hex.to_ascii_lowercase()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksums_read_back_and_a_broken_line_is_named() {
        // sha256("abc"), as `printf abc | sha256sum` prints it.
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex(b"abc"), abc);
        let files = vec![("a/b.json".to_owned(), abc.to_owned())];
        let text = render(&files);
        assert_eq!(text, format!("{abc}  a/b.json\n"));
        assert_eq!(parse(&text), Ok(files));
        assert_eq!(parse(&format!("{text}nothing\n")), Err(2));
    }
}
