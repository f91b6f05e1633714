//! What every part of the site shares: a file's form, its JSON, the tool, a round's
//! folder name.

use crate::error::SiteError;

/// A file of the site: its path under the site's folder and its bytes.
pub(crate) type SiteFile = (String, Vec<u8>);

/// What every page says it was made by.
pub(crate) fn tool() -> String {
    format!("mlbench {}", env!("CARGO_PKG_VERSION"))
}

/// JSON as the site writes it: pretty, then a newline.
pub(crate) fn json<M: serde::Serialize>(model: &M) -> Result<Vec<u8>, SiteError> {
    let mut bytes = serde_json::to_vec_pretty(model).map_err(mlbench_export::ExportError::from)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// What a page says where its figures could not be made.
#[derive(serde::Serialize)]
struct NoFigures<'a> {
    schema_version: u32,
    error: &'a str,
}

pub(crate) fn no_figures(error: &str) -> Result<Vec<u8>, SiteError> {
    json(&NoFigures {
        schema_version: 1,
        error,
    })
}

/// A round's folder name: letters, digits, `-` and `_` kept, every other byte `~XX` (so
/// two rounds never share one, and none is `.` or `..`).
pub(crate) fn slug_of(round: &str) -> String {
    let mut out = String::new();
    for b in round.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' => out.push(b as char),
            _ => out.push_str(&format!("~{b:02X}")),
        }
    }
    if out.is_empty() { "~".into() } else { out }
}

#[cfg(test)]
mod tests {
    use super::slug_of;

    #[test]
    fn round_folders_are_safe_and_never_shared() {
        assert_eq!(slug_of("2026-spring"), "2026-spring");
        assert_eq!(slug_of("../x"), "~2E~2E~2Fx");
        assert_eq!(slug_of("a b"), "a~20b");
        assert_ne!(slug_of("a b"), slug_of("a_b"));
        assert_eq!(slug_of(""), "~");
    }
}
