//! Reading report files of every era (docs/suite.md#report-files).
//!
//! - E1/E2 streams `<jobs>_<K>.json`: `[` then `{…},` per entry, never closed;
//! - the same closed properly (`[…]`), as people fix them by hand;
//! - E3 per-test files `<suite>.<name>.R<run>.D<vcd>[.FAIL].<ts>.json`: one bare object.
//!
//! A damaged entry never hides the others: every entry that parses is kept, and every
//! problem is returned with the file, the entry index and the byte offset or field.

use crate::entry::{LossScan, ReportEntry};
mod stream;

use crate::pyjson::{Parser, Skipped, SyntaxError};
use crate::value::{Object, Value};
use std::borrow::Cow;
use std::fmt;
use std::path::Path;

/// What a report file's name says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileName {
    /// `<suite>_<job_id>.json`: one stream per GPU per suite run (E1/E2).
    Legacy {
        /// The jobs file's name, e.g. `baselines`.
        suite: String,
        /// `JOB_ID`, the GPU index of the per-GPU jobs.
        job_id: u32,
    },
    /// `<suite>.<name>.R<run>.D<vcd>[.FAIL].<ts>.json`: one test process (E3).
    PerTest {
        /// The jobs file's name.
        suite: String,
        /// The bench name (`None` in failure stubs).
        name: String,
        /// The run id.
        run: String,
        /// `CUDA_VISIBLE_DEVICES`, e.g. `3` or `0,1,2`.
        vcd: String,
        /// Whether the name carries `.FAIL.`.
        fail: bool,
        /// The UTC timestamp `%Y%m%d-%H%M%S-%f`.
        timestamp: String,
    },
}

impl FileName {
    /// Classifies a file name; `None` when it is neither layout.
    pub fn parse(file_name: &str) -> Option<FileName> {
        let stem = file_name.strip_suffix(".json")?;
        if let Some(per_test) = Self::parse_per_test(stem) {
            return Some(per_test);
        }
        let (suite, job) = stem.rsplit_once('_')?;
        if suite.is_empty() || job.is_empty() || !job.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(FileName::Legacy {
            suite: suite.to_owned(),
            job_id: job.parse().ok()?,
        })
    }

    fn parse_per_test(stem: &str) -> Option<FileName> {
        let (rest, timestamp) = stem.rsplit_once('.')?;
        let ts_ok = timestamp.len() == 22
            && timestamp.bytes().enumerate().all(|(i, b)| {
                if i == 8 || i == 15 {
                    b == b'-'
                } else {
                    b.is_ascii_digit()
                }
            });
        if !ts_ok {
            return None;
        }
        let (rest, fail) = match rest.strip_suffix(".FAIL") {
            Some(r) => (r, true),
            None => (rest, false),
        };
        let (rest, device) = rest.rsplit_once('.')?;
        let vcd = device.strip_prefix('D')?;
        let (rest, run) = rest.rsplit_once('.')?;
        let run = run.strip_prefix('R')?;
        let (suite, name) = rest.rsplit_once('.')?;
        if suite.is_empty() || name.is_empty() || run.is_empty() {
            return None;
        }
        Some(FileName::PerTest {
            suite: suite.to_owned(),
            name: name.to_owned(),
            run: run.to_owned(),
            vcd: vcd.to_owned(),
            fail,
            timestamp: timestamp.to_owned(),
        })
    }

    /// The suite (jobs file) name.
    pub fn suite(&self) -> &str {
        match self {
            FileName::Legacy { suite, .. } | FileName::PerTest { suite, .. } => suite,
        }
    }
}

/// How a file's content was laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    /// `[{…},{…},` with no closing bracket: the suite's own stream.
    Stream,
    /// A properly closed array `[…]`.
    Array,
    /// One bare object (E3 per-test files).
    Object,
}

impl Container {
    /// A short description for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Container::Stream => "unclosed stream",
            Container::Array => "closed array",
            Container::Object => "single object",
        }
    }
}

/// Where in a file a problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// The whole file.
    File,
    /// A byte offset, with 1-based line and column.
    Offset {
        /// Byte offset.
        offset: usize,
        /// Line.
        line: usize,
        /// Column.
        column: usize,
    },
    /// A field of an entry.
    Field(String),
    /// A field of an entry whose figure is no measurement ([`crate::measure`]).
    Measurement(String),
}

/// A problem reading one file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ReadError {
    /// The file, as the user named it (relative to the folder searched).
    pub file: String,
    /// The entry index in the file, when the problem is in one entry.
    pub entry: Option<usize>,
    /// Where in the file or entry.
    pub location: Location,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(entry) = self.entry {
            write!(f, ": entry {entry}")?;
        }
        match &self.location {
            Location::File => {}
            Location::Offset {
                offset,
                line,
                column,
            } => write!(f, ": byte {offset} (line {line}, column {column})")?,
            Location::Field(field) | Location::Measurement(field) => {
                write!(f, ": field `{field}`")?
            }
        }
        write!(f, ": {}", self.message)
    }
}

/// The entries of one file, with the problems met while reading it.
#[derive(Debug, Clone)]
pub struct ParsedFile {
    /// The layout found, when the file started like a report.
    pub container: Option<Container>,
    /// Entries that parsed (a damaged one is skipped, the others kept), with their index.
    pub entries: Vec<(usize, ReportEntry)>,
    /// Problems, in file order.
    pub errors: Vec<ReadError>,
}

fn syntax(file: &str, entry: Option<usize>, e: SyntaxError) -> ReadError {
    let e = e.into_detail();
    ReadError {
        file: file.to_owned(),
        entry,
        location: Location::Offset {
            offset: e.offset,
            line: e.line,
            column: e.column,
        },
        message: e.message,
    }
}

/// Parses the text of a report file; `file` names it in errors.
///
/// Type problems of an entry's fields (see [`ReportEntry::type_problems`]) are errors
/// too, and so are figures that are no measurement ([`crate::measure::unreadable`]):
/// such an entry is not returned.
pub fn parse_report(file: &str, text: &[u8]) -> ParsedFile {
    parse_with(file, text, Read::Full)
}

/// [`parse_report`] for scoring: the same container, entries (with the same indices),
/// errors (same messages, offsets, lines and columns) and type problems, but the bulky
/// fields of each entry that scoring never reads are passed over without being built.
///
/// In each entry object (the file's bare object, or each element of its array or
/// stream), the values of `batch_loss`, `epoch_loss` and `metrics` are skipped with
/// [`Parser::skip_value`], which accepts exactly what the full parser accepts.
/// `epoch_loss` and `metrics` are then absent from the entry's fields. A `batch_loss`
/// that is a list of numbers is absent too, and summed up in
/// [`ReportEntry::loss_scan`] (length and first non-finite element, which is what
/// [`ReportEntry::first_nonfinite_loss`] and so [`ReportEntry::failure`] need); any other
/// `batch_loss` is read in full from the same position, so the entry is then what
/// [`parse_report`] gives, type problems included. Keys read twice keep the full
/// parse's semantics: the last `batch_loss` is the one that counts.
///
/// The type-checked strings `unique_id` and `jr_id` are skipped too. `train_item` keeps
/// its last `avg` only (the throughput, all the scorer reads of it), and a timing stage
/// (an object whose `unit` is `"s"`, with an `avg`: `train`, `loading`, …) under a key
/// that no accessor looks up is dropped: stages are not arguments, so the entry's
/// [`ReportEntry::arguments`] and configuration key are the full read's.
///
/// Nested objects keep those keys: only the entry's own fields are skipped.
pub fn parse_report_lean(file: &str, text: &[u8]) -> ParsedFile {
    parse_with(file, text, Read::Lean)
}

/// [`parse_report`] for the validator, whose loss rules read every value: the same
/// container, entries, errors and type problems, but a `batch_loss` that is a list of
/// numbers is kept as `f64`s in [`ReportEntry::loss_values`] instead of a `Value` per
/// element ([`ReportEntry::batch_loss_values`] reads either).
pub fn parse_report_values(file: &str, text: &[u8]) -> ParsedFile {
    parse_with(file, text, Read::Values)
}

/// How the entries of a report are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    /// Every field built ([`parse_report`]).
    Full,
    /// The loss curves and metrics skipped ([`parse_report_lean`]).
    Lean,
    /// `batch_loss` kept as numbers ([`parse_report_values`]).
    Values,
}

/// What a read kept of an entry's `batch_loss` apart from its fields.
#[derive(Default)]
struct LossesApart {
    scan: Option<LossScan>,
    values: Option<Vec<f64>>,
}

/// One entry at the parser's position: its value, and the scan of its `batch_loss` when
/// a lean read skipped it.
fn read_entry(parser: &mut Parser, read: Read) -> Result<(Value, LossesApart), SyntaxError> {
    if read == Read::Full || parser.peek() != Some(b'{') {
        return Ok((parser.value()?, LossesApart::default()));
    }
    let mut fields = Object::with_capacity(24);
    let mut scan = None;
    let mut values = None;
    // Whether a `batch_loss` read in full is among `fields` (only an unusual one is).
    let mut built_loss = false;
    parser.object_with(|parser, key| {
        match &*key {
            "batch_loss" if read == Read::Values => match parser.number_list() {
                Some(numbers) => {
                    // The last `batch_loss` is the one lookups see: drop an earlier one.
                    if built_loss {
                        fields.remove("batch_loss");
                        built_loss = false;
                    }
                    values = Some(numbers);
                }
                None => {
                    let value = parser.value()?;
                    fields.push_raw(key.into_key(), value);
                    built_loss = true;
                    values = None;
                }
            },
            "batch_loss" => match scan_losses(parser)? {
                Ok(found) => {
                    // The last `batch_loss` is the one lookups see: drop an earlier one.
                    if built_loss {
                        fields.remove("batch_loss");
                        built_loss = false;
                    }
                    scan = Some(found);
                }
                Err(value) => {
                    fields.push_raw(key.into_key(), value);
                    built_loss = true;
                    scan = None;
                }
            },
            "epoch_loss" | "metrics" if read == Read::Lean => {
                parser.skip_value()?;
            }
            // Only type-checked (a string), never read by the scorer (`jr_id` is a
            // per-process argument, outside the configuration): a string is skipped, and
            // with it any earlier value of the key (lookups see the last one). `gpu` is
            // read: stragglers and the fleet compare peers of one GPU model.
            "unique_id" | "jr_id" if read == Read::Lean && parser.peek() == Some(b'"') => {
                parser.skip_value()?;
                fields.remove(&key);
            }
            // The scorer reads the throughput's `avg` alone (and the type checks nothing
            // else): the object keeps its last `avg`, the other fields are skipped.
            "train_item" if read == Read::Lean && parser.peek() == Some(b'{') => {
                let item = lean_train_item(parser)?;
                fields.push_raw(key.into_key(), item);
            }
            // A timing stage (`train`: `{avg, …, unit: "s"}`) is not an argument, and
            // under a key that nothing looks up it is not read either: it is skipped, with
            // any earlier value of the key. Any other object is read in full from the same
            // position.
            _ if read == Read::Lean
                && parser.peek() == Some(b'{')
                && !crate::entry::looked_up(&key) =>
            {
                let start = parser.pos;
                if skip_stage(parser)? {
                    fields.remove(&key);
                } else {
                    parser.pos = start;
                    let value = parser.value()?;
                    fields.push_raw(key.into_key(), value);
                }
            }
            _ => {
                let value = parser.value()?;
                fields.push_raw(key.into_key(), value);
            }
        }
        Ok(())
    })?;
    Ok((Value::Object(fields), LossesApart { scan, values }))
}

/// The `batch_loss` at the parser's position skipped, with what the skip saw of it; or,
/// when it is not a list of numbers, its value read as the full parse reads it.
#[inline]
fn scan_losses(parser: &mut Parser) -> Result<Result<LossScan, Value>, SyntaxError> {
    let start = parser.pos;
    Ok(match parser.skip_value()? {
        Skipped::Numbers {
            len,
            first_nonfinite,
        } => Ok(LossScan {
            len,
            first_nonfinite,
        }),
        Skipped::Other => {
            parser.pos = start;
            Err(parser.value()?)
        }
    })
}

/// The `train_item` object at the parser's position as the scorer reads it: its last
/// `avg` alone, the other fields skipped.
#[inline]
fn lean_train_item(parser: &mut Parser) -> Result<Value, SyntaxError> {
    let mut avg = None;
    parser.object_with(|parser, key| {
        if &*key == "avg" {
            avg = Some(parser.value()?);
        } else {
            parser.skip_value()?;
        }
        Ok(())
    })?;
    let mut item = Object::with_capacity(1);
    if let Some(avg) = avg {
        item.push_raw(Cow::Borrowed("avg"), avg);
    }
    Ok(Value::Object(item))
}

/// Passes over the object at the parser's position and says whether it is a timing
/// stage as [`ReportEntry::arguments`] tells one (its last `unit` is `"s"` and it has an
/// `avg`). The errors are those of [`Parser::value`] (the same walk, values skipped).
fn skip_stage(parser: &mut Parser) -> Result<bool, SyntaxError> {
    let (mut seconds, mut avg) = (false, false);
    parser.object_with(|parser, key| {
        match &*key {
            // A string is compared where it is (no copy of `"s"` per entry).
            "unit" if parser.peek() == Some(b'"') => seconds = parser.str_cow()? == "s",
            "unit" => {
                parser.value()?;
                seconds = false;
            }
            "avg" => {
                avg = true;
                parser.skip_value()?;
            }
            _ => {
                parser.skip_value()?;
            }
        }
        Ok(())
    })?;
    Ok(seconds && avg)
}

/// [`parse_report_values`], handing each entry that parses to `each` (with its index) as
/// soon as it is read, instead of keeping them all: the file returned has no entries.
/// The validator checks each entry and lets it go, so that a large stream (the suite run
/// ten times into one folder: 1,600 entries, 5 MB of parsed values) is never held whole.
pub fn parse_report_values_each(
    file: &str,
    text: &[u8],
    mut each: impl FnMut(usize, ReportEntry),
) -> ParsedFile {
    parse_each(file, text, Read::Values, &mut each)
}

fn parse_with(file: &str, text: &[u8], read: Read) -> ParsedFile {
    let mut entries = Vec::new();
    let mut out = parse_each(file, text, read, &mut |index, entry| {
        entries.push((index, entry))
    });
    out.entries = entries;
    out
}

// Where the bytes come from, and when a file is streamed: read_buffer's.
pub use crate::read_buffer::{Content, STREAM_ABOVE, stream_above};

/// How a report is read for [`parse_each_of`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// As [`parse_report`] reads it (every field built).
    Full,
    /// As [`parse_report_lean`] reads it (scoring).
    Lean,
    /// As [`parse_report_values`] reads it (validation).
    Values,
}

impl Reading {
    fn read(self) -> Read {
        match self {
            Reading::Full => Read::Full,
            Reading::Lean => Read::Lean,
            Reading::Values => Read::Values,
        }
    }
}

/// Parses a report from `content`, handing each entry that parses to `each` as it is
/// read: the entries are never all in memory, and a stream never whole. The file
/// returned has no entries; a read that fails is its last error.
pub fn parse_each_of(
    file: &str,
    content: Content<'_>,
    reading: Reading,
    mut each: impl FnMut(usize, ReportEntry),
) -> ParsedFile {
    let read = reading.read();
    match content {
        Content::Bytes(text) => parse_each(file, text, read, &mut each),
        Content::Stream(input) => {
            parse_stream_in(file, input, reading, stream::CHUNK, stream::MAX_ENTRY, each)
        }
    }
}

/// [`parse_each_of`] of a stream read `chunk` bytes at a time, entries up to
/// `max_entry` bytes: for the tests that prove the windows change nothing.
#[doc(hidden)]
pub fn parse_stream_in(
    file: &str,
    input: &mut dyn std::io::Read,
    reading: Reading,
    chunk: usize,
    max_entry: usize,
    mut each: impl FnMut(usize, ReportEntry),
) -> ParsedFile {
    let read = reading.read();
    let mut window = stream::Window::new(input, chunk, max_entry);
    let mut out = walk(file, &mut window, read, &mut each);
    if let Some(e) = window.failed.take() {
        out.errors.push(ReadError {
            file: file.to_owned(),
            entry: None,
            location: Location::File,
            message: format!("cannot read: {e}"),
        });
    }
    out
}

/// Parses `text`, giving each entry that parses to `each`; the errors are returned.
fn parse_each(
    file: &str,
    text: &[u8],
    read: Read,
    each: &mut dyn FnMut(usize, ReportEntry),
) -> ParsedFile {
    walk(file, &mut Whole(Parser::new(text)), read, each)
}

/// Where the container walk of a report reads from: a whole text in memory ([`Whole`]),
/// or a stream read a window at a time ([`stream::Window`]). The walk ([`walk`]) is one,
/// so both give the same entries and errors.
trait Cursor {
    /// Skips white space.
    fn skip_ws(&mut self);
    /// The next byte, if any.
    fn peek(&mut self) -> Option<u8>;
    /// Consumes `b` if it is next.
    fn eat(&mut self, b: u8) -> bool;
    /// Whether the text is over.
    fn at_end(&mut self) -> bool;
    /// An error at the current position.
    fn error(&mut self, message: &str) -> SyntaxError;
    /// Reads one entry at the current position.
    fn entry(&mut self, read: Read) -> Result<(Value, LossesApart), SyntaxError>;
}

/// A whole text in memory.
struct Whole<'a>(Parser<'a>);

impl Cursor for Whole<'_> {
    fn skip_ws(&mut self) {
        self.0.skip_ws();
    }
    fn peek(&mut self) -> Option<u8> {
        self.0.peek()
    }
    fn eat(&mut self, b: u8) -> bool {
        self.0.eat(b)
    }
    fn at_end(&mut self) -> bool {
        self.0.at_end()
    }
    fn error(&mut self, message: &str) -> SyntaxError {
        self.0.error(message)
    }
    fn entry(&mut self, read: Read) -> Result<(Value, LossesApart), SyntaxError> {
        read_entry(&mut self.0, read)
    }
}

/// The walk of a report's container: a bare object, or `[` and entries with or without
/// the closing `]`, giving each entry that parses to `each`.
fn walk(
    file: &str,
    text: &mut impl Cursor,
    read: Read,
    each: &mut dyn FnMut(usize, ReportEntry),
) -> ParsedFile {
    let mut out = ParsedFile {
        container: None,
        entries: Vec::new(),
        errors: Vec::new(),
    };
    text.skip_ws();
    match text.peek() {
        None => out.errors.push(ReadError {
            file: file.to_owned(),
            entry: None,
            location: Location::File,
            message: "empty file: a report holds `[` and entries, or one object".into(),
        }),
        Some(b'{') => {
            out.container = Some(Container::Object);
            match text.entry(read) {
                Ok((value, scan)) => {
                    text.skip_ws();
                    if !text.at_end() {
                        let e = text.error("extra data after the report object");
                        out.errors.push(syntax(file, None, e));
                    }
                    accept(file, 0, value, scan, &mut out.errors, each);
                }
                Err(e) => out.errors.push(syntax(file, Some(0), e)),
            }
        }
        Some(b'[') => {
            text.eat(b'[');
            let closed = walk_entries(file, text, read, each, &mut out.errors);
            out.container = Some(if closed {
                Container::Array
            } else {
                Container::Stream
            });
        }
        Some(_) => {
            let e = text.error("not a report: expected `[` or `{`");
            out.errors.push(syntax(file, None, e));
        }
    }
    out
}

/// The entries after a report's `[`, to its `]` or its end; whether the `]` was there.
fn walk_entries(
    file: &str,
    text: &mut impl Cursor,
    read: Read,
    each: &mut dyn FnMut(usize, ReportEntry),
    errors: &mut Vec<ReadError>,
) -> bool {
    let mut index = 0;
    loop {
        text.skip_ws();
        if text.at_end() {
            return false;
        }
        if text.eat(b']') {
            text.skip_ws();
            if !text.at_end() {
                errors.push(syntax(file, None, text.error("extra data after `]`")));
            }
            return true;
        }
        match text.entry(read) {
            Ok((value, scan)) => accept(file, index, value, scan, errors, each),
            Err(e) => {
                // Nothing after a broken entry can be trusted (there is no resync
                // point in JSON), so stop here and keep what came before.
                errors.push(syntax(file, Some(index), e));
                return false;
            }
        }
        index += 1;
        text.skip_ws();
        if text.eat(b',') {
            continue;
        }
        if text.at_end() {
            return false;
        }
        if text.peek() == Some(b']') {
            continue;
        }
        let e = text.error("expected `,` or `]` after an entry");
        errors.push(syntax(file, Some(index), e));
        return false;
    }
}

fn accept(
    file: &str,
    index: usize,
    value: Value,
    apart: LossesApart,
    errors: &mut Vec<ReadError>,
    each: &mut dyn FnMut(usize, ReportEntry),
) {
    match value {
        Value::Object(fields) => {
            let entry = ReportEntry {
                fields,
                loss_scan: apart.scan,
                loss_values: apart.values,
            };
            let problems = entry.type_problems();
            if !problems.is_empty() {
                for p in problems {
                    errors.push(ReadError {
                        file: file.to_owned(),
                        entry: Some(index),
                        location: Location::Field(p.field),
                        message: format!("expected {}, found {}", p.expected, p.found),
                    });
                }
                return;
            }
            // A figure that is no measurement cannot be scored: the entry is set aside.
            let absurd = crate::measure::unreadable(&entry);
            if absurd.is_empty() {
                each(index, entry);
                return;
            }
            for n in absurd {
                errors.push(ReadError {
                    file: file.to_owned(),
                    entry: Some(index),
                    message: n.message(entry.name()),
                    location: Location::Measurement(n.field),
                });
            }
        }
        other => errors.push(ReadError {
            file: file.to_owned(),
            entry: Some(index),
            location: Location::File,
            message: format!(
                "entry is {} {}, expected an object",
                article(other.type_name()),
                other.type_name()
            ),
        }),
    }
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'i', 'o']) {
        "an"
    } else {
        "a"
    }
}

/// Reads and parses one file; an I/O failure becomes a [`ReadError`].
pub fn read_file(path: &Path, display: &str) -> ParsedFile {
    read_with(path, display, Read::Full)
}

/// Entry `index` of the file at `path`, read in full (`None` if it does not parse or the
/// file cannot be read): the one entry kept, however large the file.
pub fn read_entry_at(path: &Path, display: &str, index: usize) -> Option<ReportEntry> {
    let links = crate::read_buffer::Links::Refuse;
    let read = crate::read_buffer::with_content(path, links, |content| {
        let mut found = None;
        parse_each_of(display, content, Reading::Full, |i, e| {
            if i == index {
                found = Some(e);
            }
        });
        found
    });
    read.ok()?.out
}

fn read_with(path: &Path, display: &str, read: Read) -> ParsedFile {
    let reading = match read {
        Read::Full => Reading::Full,
        Read::Lean => Reading::Lean,
        Read::Values => Reading::Values,
    };
    let links = crate::read_buffer::Links::Refuse;
    let outcome = crate::read_buffer::with_content(path, links, |content| {
        let mut entries = Vec::new();
        let mut parsed = parse_each_of(display, content, reading, |i, e| entries.push((i, e)));
        parsed.entries = entries;
        parsed
    });
    match outcome {
        // A stream that failed is an error the parse recorded where it ended.
        Ok(read) => read.out,
        Err(e) => ParsedFile {
            container: None,
            entries: Vec::new(),
            errors: vec![ReadError {
                file: display.to_owned(),
                entry: None,
                location: Location::File,
                message: format!("cannot read: {e}"),
            }],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::FailureKind;

    const E: &str = r#"{"name": "vae", "version": "abc", "train_item": {"avg": 2.5}}"#;

    #[test]
    fn names_of_both_eras() {
        assert_eq!(
            FileName::parse("baselines_3.json"),
            Some(FileName::Legacy {
                suite: "baselines".into(),
                job_id: 3
            })
        );
        assert_eq!(
            FileName::parse("my_jobs_12.json"),
            Some(FileName::Legacy {
                suite: "my_jobs".into(),
                job_id: 12
            })
        );
        assert_eq!(
            FileName::parse("baselines.vae.R0.D0,1,2.FAIL.20200106-160000-123456.json"),
            Some(FileName::PerTest {
                suite: "baselines".into(),
                name: "vae".into(),
                run: "0".into(),
                vcd: "0,1,2".into(),
                fail: true,
                timestamp: "20200106-160000-123456".into()
            })
        );
        assert_eq!(FileName::parse("baselines.json"), None);
        assert_eq!(FileName::parse("summary.txt"), None);
        assert_eq!(FileName::parse("baselines_x.json"), None);
    }

    #[test]
    fn stream_closed_and_bare() {
        for (text, container, n) in [
            (format!("[{E},{E},"), Container::Stream, 2),
            (format!("[{E},{E}]\n"), Container::Array, 2),
            (format!("[{E},]"), Container::Array, 1),
            (format!("{E}\n"), Container::Object, 1),
            ("[".to_string(), Container::Stream, 0),
            (format!("  [ {E} , "), Container::Stream, 1),
        ] {
            let parsed = parse_report("f.json", text.as_bytes());
            assert!(parsed.errors.is_empty(), "{text}: {:?}", parsed.errors);
            assert_eq!(parsed.container, Some(container), "{text}");
            assert_eq!(parsed.entries.len(), n, "{text}");
        }
    }

    #[test]
    fn truncated_stream_keeps_complete_entries() {
        let text = format!("[{E},{E},{{\"name\": \"va");
        let parsed = parse_report("output1/fast_2.json", text.as_bytes());
        assert_eq!(parsed.entries.len(), 2);
        assert_eq!(parsed.errors.len(), 1);
        let err = &parsed.errors[0];
        assert_eq!(err.entry, Some(2));
        assert!(matches!(err.location, Location::Offset { .. }));
        assert!(
            err.to_string()
                .starts_with("output1/fast_2.json: entry 2: byte "),
            "{err}"
        );
    }

    #[test]
    fn non_json_and_empty() {
        let parsed = parse_report("notes.json", b"hello");
        assert_eq!(parsed.container, None);
        assert_eq!(
            parsed.errors[0].to_string(),
            "notes.json: byte 0 (line 1, column 1): not a report: expected `[` or `{`"
        );
        let parsed = parse_report("e.json", b"  \n");
        assert!(parsed.errors[0].message.starts_with("empty file"));
    }

    #[test]
    fn entry_that_is_not_an_object() {
        let parsed = parse_report("f.json", format!("[{E},3,").as_bytes());
        assert_eq!(parsed.entries.len(), 1);
        assert_eq!(
            parsed.errors[0].to_string(),
            "f.json: entry 1: entry is an int, expected an object"
        );
    }

    #[test]
    fn bad_field_names_entry_and_field() {
        let parsed = parse_report(
            "f.json",
            br#"[{"name": "vae", "version": "abc", "train_item": {"avg": "x"}},"#,
        );
        assert!(parsed.entries.is_empty());
        assert_eq!(
            parsed.errors[0].to_string(),
            "f.json: entry 0: field `train_item.avg`: expected a number, found string"
        );
    }

    /// An entry with `batch_loss` (and the skipped fields) as given.
    fn with_losses(losses: &str) -> String {
        format!(
            "[{{\"name\": \"vae\", \"version\": \"abc\", \"batch_loss\": {losses},\n \
             \"epoch_loss\": [1.5], \"metrics\": {{\"acc\": [0.5, NaN]}}, \
             \"train_item\": {{\"avg\": 2.5}}}},"
        )
    }

    #[test]
    fn lean_read_scans_losses_and_drops_the_curves() {
        let parsed = parse_report_lean("f.json", with_losses("[1, 2.5, -0.0, 3]").as_bytes());
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        let entry = &parsed.entries[0].1;
        let scan = entry.loss_scan.unwrap();
        assert_eq!((scan.len, scan.first_nonfinite), (4, None));
        for key in ["batch_loss", "epoch_loss", "metrics"] {
            assert!(entry.get(key).is_none(), "{key}");
        }
        assert_eq!(entry.train_item_avg(), Some(2.5));
        assert_eq!(entry.failure(false), None);
        // The full read keeps them all.
        let full = parse_report("f.json", with_losses("[1, 2.5, -0.0, 3]").as_bytes());
        assert_eq!(full.entries[0].1.loss_scan, None);
        assert!(full.entries[0].1.get("metrics").is_some());
    }

    #[test]
    fn lean_read_sees_overflowing_literals_as_infinite() {
        for (losses, first) in [
            ("[0.5, 1e400, NaN]".to_owned(), Some((1, f64::INFINITY))),
            ("[0.5, -1E+309]".to_owned(), Some((1, f64::NEG_INFINITY))),
            (
                "[1e308, 1.7976931348623157e308, 6.9410552978515625]".to_owned(),
                None,
            ),
            ("[-Infinity]".to_owned(), Some((0, f64::NEG_INFINITY))),
            // 10^308 and 10^309 written out: ints to Python; the second is beyond f64,
            // so inf to `as_f64`.
            (format!("[2, 1{}]", "0".repeat(308)), None),
            (
                format!("[2, 1{}]", "0".repeat(309)),
                Some((1, f64::INFINITY)),
            ),
            (format!("[2, 1{}.5]", "0".repeat(300)), None),
        ] {
            let text = with_losses(&losses);
            let lean = parse_report_lean("f.json", text.as_bytes());
            let full = parse_report("f.json", text.as_bytes());
            let (lean, full) = (&lean.entries[0].1, &full.entries[0].1);
            assert_eq!(lean.first_nonfinite_loss(), first, "{losses}");
            assert_eq!(full.first_nonfinite_loss(), first, "{losses}");
            assert_eq!(lean.failure(false), full.failure(false), "{losses}");
        }
        let text = with_losses("[1.0, NaN]");
        let lean = parse_report_lean("f.json", text.as_bytes());
        let (i, f) = lean.entries[0].1.first_nonfinite_loss().unwrap();
        assert!(i == 1 && f.is_nan());
        assert_eq!(lean.entries[0].1.failure(false), Some(FailureKind::NanLoss));
    }

    #[test]
    fn lean_read_of_odd_losses_is_the_full_read() {
        for losses in [r#"[1.0, "x"]"#, "[[1.0]]", "{}", "null", "[1.0, null, NaN]"] {
            let text = with_losses(losses);
            let lean = parse_report_lean("f.json", text.as_bytes());
            let full = parse_report("f.json", text.as_bytes());
            assert!(
                lean.entries.is_empty() && full.entries.is_empty(),
                "{losses}"
            );
            assert_eq!(lean.errors, full.errors, "{losses}");
        }
        let lean = parse_report_lean("f.json", with_losses(r#"[1.0, "x"]"#).as_bytes());
        assert_eq!(
            lean.errors[0].to_string(),
            "f.json: entry 0: field `batch_loss[1]`: expected a number, found string"
        );
    }

    #[test]
    fn lean_read_drops_stages_and_trims_the_throughput() {
        let text = r#"{"name": "vae", "version": "x", "batch_size": 64,
            "train_item": {"avg": 1, "max": 2.5, "unit": "items/sec", "avg": 3.5},
            "train": {"avg": 2.0, "count": 15, "unit": "s"},
            "loading": {"avg": 1.0, "unit": "ms"},
            "eval": 7, "eval": {"avg": 1.0, "unit": "s"},
            "all": {"avg": 1.0, "unit": "s"}, "all": [1, 2],
            "devices": {"avg": 1.0, "unit": "s"}}"#;
        let lean = parse_report_lean("f.json", text.as_bytes());
        let full = parse_report("f.json", text.as_bytes());
        let (lean, full) = (&lean.entries[0].1, &full.entries[0].1);
        // The last `avg` alone; the stage `eval` (its last value) dropped; `train` is
        // kept whole (its figures are checked as measurements); `loading` (in ms) is no
        // stage; `all` ends as a list; `devices` is looked up.
        assert_eq!(
            lean.get("train_item"),
            Some(&Value::Object([("avg", 3.5)].into_iter().collect()))
        );
        assert_eq!(lean.train_item_avg(), Some(3.5));
        assert!(lean.get("eval").is_none() && full.get("eval").is_some());
        for key in ["train", "loading", "all", "devices", "batch_size"] {
            assert_eq!(lean.get(key), full.get(key), "{key}");
        }
        let keys = |e: &ReportEntry| {
            e.arguments()
                .iter()
                .map(|(k, _)| k.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(keys(lean), ["all", "batch_size", "loading", "version"]);
        assert_eq!(keys(lean), keys(full));
        assert_eq!(lean.configuration_key(), full.configuration_key());
    }

    #[test]
    fn lean_read_keeps_the_last_of_duplicate_losses() {
        // A scanned list after an odd one: the entry is usable, as `get` sees the last.
        let text = r#"{"name": "vae", "version": "x", "train_item": {"avg": 1},
            "batch_loss": "odd", "batch\u005floss": [1.0, Infinity]}"#;
        let lean = parse_report_lean("f.json", text.as_bytes());
        let full = parse_report("f.json", text.as_bytes());
        assert!(lean.errors.is_empty() && full.errors.is_empty());
        let entry = &lean.entries[0].1;
        assert!(entry.get("batch_loss").is_none());
        assert_eq!(entry.first_nonfinite_loss(), Some((1, f64::INFINITY)));
        assert_eq!(
            full.entries[0].1.first_nonfinite_loss(),
            Some((1, f64::INFINITY))
        );
        // An odd one after a scanned list: the odd one counts, as in the full read.
        let text = r#"{"name": "vae", "version": "x", "train_item": {"avg": 1},
            "batch_loss": [NaN], "batch_loss": "odd"}"#;
        let lean = parse_report_lean("f.json", text.as_bytes());
        assert_eq!(lean.errors, parse_report("f.json", text.as_bytes()).errors);
        assert_eq!(
            lean.errors[0].location,
            Location::Field("batch_loss".into())
        );
    }

    #[test]
    fn lean_read_errors_inside_skipped_fields_are_the_full_read_errors() {
        for (metrics, at) in [
            (r#"{"acc": [0.5, 0.25,]}"#, "]}"),
            (r#"{"acc": [0.5 0.25]}"#, "0.25]"),
            (r#"{"acc" [0.5]}"#, "[0.5]"),
            ("{\"a\tb\": 1}", "\tb"),
            (r#"{"acc": "\x"}"#, "\\x"),
            (r#"{"acc": 01}"#, "1}"),
        ] {
            let text = format!(
                "[{{\"name\": \"vae\", \"version\": \"abc\", \"train_item\": {{\"avg\": 2.5}}}},\n\
                 {{\"name\": \"vae\",\n \"metrics\": {metrics}, \"batch_loss\": [1]}},"
            );
            let lean = parse_report_lean("f.json", text.as_bytes());
            let full = parse_report("f.json", text.as_bytes());
            assert_eq!(lean.errors, full.errors, "{metrics}");
            assert_eq!(lean.entries.len(), 1);
            let [err] = &lean.errors[..] else {
                panic!("{metrics}: {:?}", lean.errors)
            };
            let Location::Offset { offset, line, .. } = err.location else {
                panic!("{err}")
            };
            // Where the full parser stops, on the second entry's third line.
            let metrics_at = text.find(metrics).unwrap();
            assert_eq!(
                offset,
                metrics_at + metrics.find(at).unwrap(),
                "{metrics}: {err}"
            );
            assert_eq!((line, err.entry), (3, Some(1)), "{err}");
        }
        // Too deep inside a skipped field: the same refusal, at the same bracket.
        let text = format!("[{{\"metrics\": {}1{}}}", "[".repeat(600), "]".repeat(600));
        let lean = parse_report_lean("f.json", text.as_bytes());
        let full = parse_report("f.json", text.as_bytes());
        assert_eq!(lean.errors, full.errors);
        assert!(
            lean.errors[0].message.contains("nesting"),
            "{:?}",
            lean.errors
        );
        // Invalid UTF-8 in a skipped string.
        let mut text = br#"{"name": "vae", "metrics": {"k": "caf"#.to_vec();
        text.extend_from_slice(b"\xe9\"}}");
        let lean = parse_report_lean("f.json", &text);
        assert_eq!(lean.errors, parse_report("f.json", &text).errors);
        assert!(lean.errors[0].message.contains("UTF-8"));
    }
}
