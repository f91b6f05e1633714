//! Writing reports in the suite's legacy stream format, byte for byte
//! (docs/suite.md#the-stream-format).
//!
//! `make_report` writes `[` when the file does not exist, then appends each entry as
//! `json.dumps(entry, sort_keys=True, indent=4, separators=(',', ': '))` followed by `,`
//! and no newline. The file is never closed with `]`.

use crate::entry::ReportEntry;
use crate::pyjson::to_python_json;
use crate::value::Value;
use std::io::Write;
use std::path::Path;

/// The bytes the suite appends for one entry: the dumped object and a comma.
pub fn stream_chunk(entry: &ReportEntry) -> String {
    let mut text = to_python_json(&Value::Object(entry.fields.clone()));
    text.push(',');
    text
}

/// A whole stream file holding `entries`, as the suite leaves it after they were written.
pub fn stream_text<'a>(entries: impl IntoIterator<Item = &'a ReportEntry>) -> String {
    let mut text = String::from("[");
    for entry in entries {
        text.push_str(&stream_chunk(entry));
    }
    text
}

/// Appends one entry to a stream file, creating it with `[` first when it does not
/// exist. The entry is written with one `write` and flushed, so an interrupted run
/// loses no entry that was completed.
pub fn append_to_stream(path: &Path, entry: &ReportEntry) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let mut chunk = String::new();
    if file.metadata()?.len() == 0 {
        chunk.push('[');
    }
    chunk.push_str(&stream_chunk(entry));
    file.write_all(chunk.as_bytes())?;
    file.flush()
}

/// The bytes of an E3 per-test file: the dumped object and a newline.
pub fn per_test_text(entry: &ReportEntry) -> String {
    let mut text = to_python_json(&Value::Object(entry.fields.clone()));
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::parse_report;

    #[test]
    fn append_creates_then_appends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fast_0.json");
        let entry = ReportEntry::new(
            [
                ("name", Value::from("vae")),
                ("batch_loss", Value::from(vec![1.5, f64::NAN])),
            ]
            .into_iter()
            .collect(),
        );
        append_to_stream(&path, &entry).unwrap();
        append_to_stream(&path, &entry).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let one = "{\n    \"batch_loss\": [\n        1.5,\n        NaN\n    ],\n    \"name\": \"vae\"\n},";
        assert_eq!(text, format!("[{one}{one}"));
        let parsed = parse_report("fast_0.json", text.as_bytes());
        assert_eq!(parsed.entries.len(), 0, "entries lack version/train_item");
        assert_eq!(parsed.errors.len(), 4);
    }
}
