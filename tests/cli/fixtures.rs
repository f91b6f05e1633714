//! Submissions built by code, in the suite's own file format.

use mlbench_schema::writer::stream_text;
use mlbench_schema::{Object, ReportEntry, Value};
use std::path::Path;

/// A bench of a fixture: name and base throughput.
pub const BENCHES: &[(&str, f64)] = &[("atari", 5.5), ("convnet", 180.0), ("vae", 7600.0)];

/// One entry as the suite writes it (E2 era), throughput `value`.
pub fn entry(name: &str, value: f64, gpu: u32, run: usize) -> ReportEntry {
    let mut train = Object::new();
    train.insert("avg", 64.0 * 5.0 / value);
    train.insert("count", 5i64);
    train.insert("max", 64.0 * 5.0 / value * 1.01);
    train.insert("min", 64.0 * 5.0 / value * 0.99);
    train.insert("sd", 0.001);
    train.insert("unit", "s");
    let mut item = Object::new();
    item.insert("avg", value);
    item.insert("max", value * 1.01);
    item.insert("min", value * 0.99);
    item.insert("range", value * 0.02);
    item.insert("unit", "items/sec");
    let mut o = Object::new();
    o.insert("name", name);
    o.insert("version", "9c2ff8e92f");
    o.insert("unique_id", "0".repeat(64));
    o.insert("batch_size", 64i64);
    o.insert("cuda", true);
    o.insert("workers", 4i64);
    o.insert("devices", 1i64);
    o.insert("repeat", 15i64);
    o.insert("number", 5i64);
    o.insert("jr_id", gpu.to_string());
    o.insert("vcd", gpu.to_string());
    o.insert("cpu_cores", 8i64);
    o.insert("run_id", run.to_string());
    o.insert("gpu", "TITAN RTX");
    o.insert("hostname", "node1");
    o.insert("batch_loss", Value::from(vec![2.5, 2.25, 2.0]));
    o.insert("epoch_loss", Value::List(vec![]));
    o.insert("metrics", Value::Object(Object::new()));
    o.insert("train", Value::Object(train));
    o.insert("train_item", Value::Object(item));
    ReportEntry::new(o)
}

/// Writes `runs` × `gpus` legacy stream files `output{r}/fast_{g}.json` with the
/// [`BENCHES`], each value scaled by 1 + 0.01·((r + g) mod 3 − 1).
pub fn write_submission(root: &Path, runs: usize, gpus: u32) {
    for run in 0..runs {
        let dir = root.join(format!("output{run}"));
        std::fs::create_dir_all(&dir).unwrap();
        for gpu in 0..gpus {
            let wiggle = 1.0 + 0.01 * (((run + gpu as usize) % 3) as f64 - 1.0);
            let entries: Vec<ReportEntry> = BENCHES
                .iter()
                .map(|(b, v)| entry(b, v * wiggle, gpu, run))
                .collect();
            std::fs::write(dir.join(format!("fast_{gpu}.json")), stream_text(&entries)).unwrap();
        }
    }
}

/// Targets for [`BENCHES`] in the suite's score CSV layout.
pub fn write_targets(path: &Path) {
    let mut text = String::from("bench,target,perf_target,sd_target\n");
    for (b, v) in BENCHES {
        text.push_str(&format!("{b},{v},0.5,0.05\n"));
    }
    std::fs::write(path, text).unwrap();
}

// Helpers of the validator corpus (`validate.rs`, `pack.rs`): the shipped example copied
// into a temporary folder, edited entry by entry in the suite's own stream format, and
// `mlbench validate --format json` run on it.

use mlbench_schema::reader::parse_report;
use mlbench_schema::unique_id::{EXCLUDED_FINAL, unique_id};
use std::path::PathBuf;
use tempfile::TempDir;

/// `mlbench` with a quiet environment.
pub fn mlbench() -> assert_cmd::Command {
    quiet(assert_cmd::Command::cargo_bin("mlbench").unwrap())
}

/// No backtraces, no colours: what the tests compare is the plain output.
pub fn quiet(mut cmd: assert_cmd::Command) -> assert_cmd::Command {
    cmd.env_remove("RUST_BACKTRACE").env("NO_COLOR", "1");
    cmd
}

/// The shipped example submission (5 runs × 2 GPUs, legacy streams, `fast.json`).
pub fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("submissions/example")
}

/// Copies the folder `from` into `to` (created), recursively.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for child in std::fs::read_dir(from).unwrap() {
        let child = child.unwrap();
        let target = to.join(child.file_name());
        if child.file_type().unwrap().is_dir() {
            copy_tree(&child.path(), &target);
        } else {
            std::fs::copy(child.path(), &target).unwrap();
        }
    }
}

/// A temporary copy of the example submission; the folder itself is the submission root.
pub fn copy_example() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&example_dir(), dir.path());
    dir
}

/// Every file under `root` as (`/`-separated relative path, bytes), sorted by path.
pub fn folder_files(root: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for child in std::fs::read_dir(dir).unwrap() {
            let path = child.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap().to_string_lossy();
                out.push((rel.replace('\\', "/"), std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// The entries of a report file, which must parse without a single error.
pub fn read_entries(path: &Path) -> Vec<ReportEntry> {
    let parsed = parse_report(&path.display().to_string(), &std::fs::read(path).unwrap());
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    parsed.entries.into_iter().map(|(_, e)| e).collect()
}

/// Writes `entries` as the suite's legacy stream (`[` then `{…},` per entry, unclosed).
pub fn write_entries(path: &Path, entries: &[ReportEntry]) {
    std::fs::write(path, stream_text(entries)).unwrap();
}

/// Reads a stream, lets `edit` change its entries, writes it back.
pub fn edit_entries(path: &Path, edit: impl FnOnce(&mut Vec<ReportEntry>)) {
    let mut entries = read_entries(path);
    edit(&mut entries);
    write_entries(path, &entries);
}

/// Edits the fields of entry `index` of a stream.
pub fn edit_entry(path: &Path, index: usize, edit: impl FnOnce(&mut Object)) {
    edit_entries(path, |entries| edit(&mut entries[index].fields));
}

/// Recomputes `unique_id` from the entry's arguments, as the suite does.
pub fn rehash(fields: &mut Object) {
    let id = unique_id(ReportEntry::new(fields.clone()).arguments(), EXCLUDED_FINAL);
    fields.insert("unique_id", id);
}

/// Edits the sub-object `key` of an entry (`train`, `train_item`).
pub fn edit_object(fields: &mut Object, key: &str, edit: impl FnOnce(&mut Object)) {
    let mut object = fields
        .get(key)
        .and_then(Value::as_object)
        .cloned()
        .expect(key);
    edit(&mut object);
    fields.insert(key, Value::Object(object));
}

/// A number of an entry's sub-object (`train.avg`…).
pub fn number(fields: &Object, key: &str, field: &str) -> f64 {
    fields
        .get(key)
        .and_then(Value::as_object)
        .and_then(|o| o.get(field))
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{key}.{field}"))
}

/// The exit status and the parsed document of `mlbench validate PATH EXTRA… --format json`.
/// The document must agree with itself and with the status: `errors` and `warnings`
/// count the findings of each severity; the status is 2 exactly when an error says no
/// submission could be read (`archive.unreadable`, `reports.none`: docs/exit-codes.md,
/// with one line on standard error), else 1 exactly when there are errors.
pub fn validate_json(path: impl AsRef<Path>, extra: &[&str]) -> (i32, serde_json::Value) {
    let out = mlbench()
        .arg("validate")
        .arg(path.as_ref())
        .args(extra)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let code = out.status.code().expect("an exit status");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        (0..=2).contains(&code),
        "exit {code}, stderr: {stderr}, stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let unreadable = json["findings"].as_array().unwrap().iter().any(|f| {
        f["severity"] == "error"
            && (f["rule"] == "archive.unreadable" || f["rule"] == "reports.none")
    });
    if unreadable {
        assert_eq!(code, 2, "{json:#}");
        // One line, naming the submission and what was found.
        let path = path.as_ref().display();
        assert!(stderr.starts_with(&format!("error: {path}: ")), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        return (code, json);
    }
    assert!(stderr.is_empty(), "stderr: {stderr}");
    let count = |severity: &str| {
        json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == severity)
            .count() as u64
    };
    assert_eq!(json["errors"], count("error"), "{json:#}");
    assert_eq!(json["warnings"], count("warning"), "{json:#}");
    assert_eq!(code, i32::from(count("error") > 0), "{json:#}");
    (code, json)
}

/// Where a finding is and what it is: (rule, severity, file, entry, field).
pub type Key = (String, String, Option<String>, Option<u64>, Option<String>);

fn keys_of(list: &serde_json::Value) -> Vec<Key> {
    let text = |v: &serde_json::Value| v.as_str().map(str::to_owned);
    let mut keys: Vec<Key> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                text(&f["rule"]).unwrap(),
                text(&f["severity"]).unwrap(),
                text(&f["file"]),
                f["entry"].as_u64(),
                text(&f["field"]),
            )
        })
        .collect();
    keys.sort();
    keys
}

/// The findings of a document as sorted keys; a multiset (a finding made twice is listed
/// twice), so counts are asserted along with the places.
pub fn findings(json: &serde_json::Value) -> Vec<Key> {
    keys_of(&json["findings"])
}

/// The waived findings of a document, as [`findings`].
pub fn waived(json: &serde_json::Value) -> Vec<Key> {
    keys_of(&json["waived"])
}

/// An expected error finding.
pub fn error(rule: &str, file: Option<&str>, entry: Option<u64>, field: Option<&str>) -> Key {
    key(rule, "error", file, entry, field)
}

/// An expected warning finding.
pub fn warning(rule: &str, file: Option<&str>, entry: Option<u64>, field: Option<&str>) -> Key {
    key(rule, "warning", file, entry, field)
}

fn key(
    rule: &str,
    severity: &str,
    file: Option<&str>,
    entry: Option<u64>,
    field: Option<&str>,
) -> Key {
    (
        rule.to_owned(),
        severity.to_owned(),
        file.map(str::to_owned),
        entry,
        field.map(str::to_owned),
    )
}

/// Sorted, for comparing with [`findings`].
pub fn sorted(mut keys: Vec<Key>) -> Vec<Key> {
    keys.sort();
    keys
}

/// The finding of `rule` at `file` and `entry` (exactly one).
pub fn finding<'a>(
    json: &'a serde_json::Value,
    rule: &str,
    file: Option<&str>,
    entry: Option<u64>,
) -> &'a serde_json::Value {
    let matching: Vec<&serde_json::Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule && f["file"].as_str() == file && f["entry"].as_u64() == entry)
        .collect();
    assert_eq!(matching.len(), 1, "{rule} at {file:?} {entry:?}: {json:#}");
    matching[0]
}

/// Writes `files` (path, bytes) as a zip with the `zip` crate, in the order given.
pub fn write_zip(path: &Path, files: &[(String, Vec<u8>)], method: zip::CompressionMethod) {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let options = zip::write::SimpleFileOptions::default().compression_method(method);
    for (name, bytes) in files {
        zip.start_file(name.as_str(), options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
}

/// The entries of a zip as (name, bytes), in archive order.
pub fn read_zip(path: &Path) -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    let mut archive = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut entry = archive.by_index(i).unwrap();
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).unwrap();
            (entry.name().unwrap().into_owned(), bytes)
        })
        .collect()
}

/// SHA-256 in lower-case hex (computed here, not by the code under test).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

// Helpers of the grid, plot and report tests (`grid.rs`, `plot.rs`, `report.rs`):
// submissions whose every throughput is chosen by the test, so that means, ratios and
// overall figures are known by hand.

/// Writes legacy streams `output<run>/fast_<gpu>.json` holding, for each bench, the
/// throughput `values[gpu][run]` (one entry per bench, GPU and run; a bench may have
/// fewer GPUs or runs than another).
pub fn write_samples(root: &Path, benches: &[(&str, Vec<Vec<f64>>)]) {
    let gpus = benches.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
    let runs = benches
        .iter()
        .flat_map(|(_, v)| v.iter().map(Vec::len))
        .max()
        .unwrap_or(0);
    for run in 0..runs {
        let dir = root.join(format!("output{run}"));
        std::fs::create_dir_all(&dir).unwrap();
        for gpu in 0..gpus {
            let entries: Vec<ReportEntry> = benches
                .iter()
                .filter_map(|(bench, values)| {
                    let value = *values.get(gpu)?.get(run)?;
                    Some(entry(bench, value, gpu as u32, run))
                })
                .collect();
            if !entries.is_empty() {
                write_entries(&dir.join(format!("fast_{gpu}.json")), &entries);
            }
        }
    }
}

/// Relative deviations of a vendor's samples, `SPREAD[gpu][run]`: each GPU's four sum
/// to zero, so the mean of `mean·(1 + d)` over the 8 samples (or over one GPU) is `mean`;
/// every sample lies within ±2 % of it.
pub const SPREAD: [[f64; 4]; 2] = [[-0.02, 0.0, 0.02, 0.0], [0.01, -0.01, 0.01, -0.01]];

/// The 2 GPUs × 4 runs of a bench with mean `mean`: `mean·(1 + SPREAD[gpu][run])`.
pub fn spread(mean: f64) -> Vec<Vec<f64>> {
    SPREAD
        .iter()
        .map(|gpu| gpu.iter().map(|d| mean * (1.0 + d)).collect())
        .collect()
}

/// A vendor's submission of 2 GPUs × 4 runs with the given mean throughput per bench.
pub fn write_vendor(root: &Path, means: &[(&str, f64)]) {
    let benches: Vec<(&str, Vec<Vec<f64>>)> = means.iter().map(|(b, m)| (*b, spread(*m))).collect();
    write_samples(root, &benches);
}

/// Whether `a` and `b` agree to a relative 1e-9 (both finite).
pub fn close(a: f64, b: f64) -> bool {
    a.is_finite() && b.is_finite() && (a - b).abs() <= 1e-9 * b.abs().max(1e-300)
}

/// A JSON number, asserted to be one.
pub fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A JSON value that keeps the order of object keys (`serde_json::Value` sorts them).
#[derive(Debug)]
pub enum Ordered {
    /// An object: keys in document order.
    Object(Vec<(String, Ordered)>),
    /// An array.
    Array(Vec<Ordered>),
    /// Anything else.
    Scalar,
}

impl Ordered {
    /// Parses a document.
    pub fn parse(text: &str) -> Ordered {
        serde_json::from_str(text).unwrap()
    }

    /// The keys of an object, in order.
    pub fn keys(&self) -> Vec<&str> {
        match self {
            Ordered::Object(fields) => fields.iter().map(|(k, _)| k.as_str()).collect(),
            other => panic!("not an object: {other:?}"),
        }
    }

    /// The value of `key` of an object.
    pub fn get(&self, key: &str) -> &Ordered {
        match self {
            Ordered::Object(fields) => &fields.iter().find(|(k, _)| k == key).expect(key).1,
            other => panic!("not an object: {other:?}"),
        }
    }

    /// Item `i` of an array.
    pub fn at(&self, i: usize) -> &Ordered {
        match self {
            Ordered::Array(items) => &items[i],
            other => panic!("not an array: {other:?}"),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Ordered, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_str<E>(self, _: &str) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Ordered, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Ordered::Array(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Ordered, A::Error> {
                let mut fields = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Ordered>()? {
                    fields.push((key, value));
                }
                Ok(Ordered::Object(fields))
            }
        }
        d.deserialize_any(Visit)
    }
}

/// The text of a file, which must exist.
pub fn read_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The file names in a folder, sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Occurrences of `needle` in `text`.
pub fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

/// The rows of the HTML table after the caption `caption`: each row's `<td>` texts.
pub fn html_rows(html: &str, caption: &str) -> Vec<Vec<String>> {
    let start = html
        .find(&format!("<caption>{caption}</caption>"))
        .unwrap_or_else(|| panic!("no table captioned {caption}"));
    let table = &html[start..start + html[start..].find("</table>").unwrap()];
    table
        .split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let open = cell.find('>').unwrap() + 1;
                    cell[open..cell.find("</td>").unwrap()].to_owned()
                })
                .collect::<Vec<_>>()
        })
        .filter(|row| !row.is_empty())
        .collect()
}

/// `report --scoring score` JSON against the oracle's (tests/oracle/head_report.py): the
/// failure counts and BF exactly, PM, ST, PG, score and every bench's n, mean, sd, perf
/// and sd_pct to a relative 1e-9, the pass flags exactly.
pub fn assert_score_equals_oracle(actual: &serde_json::Value, expected: &serde_json::Value) {
    let near = |a: &serde_json::Value, b: &serde_json::Value, what: &str| {
        let (a, b) = (f(a), f(b));
        assert!(
            (a - b).abs() <= 1e-9 * b.abs().max(1.0),
            "{what}: mlbench {a}, oracle {b}"
        );
    };
    let s = &actual["statistics"];
    assert_eq!(s["failures"], expected["failures"]);
    assert_eq!(s["total"], expected["total"]);
    assert_eq!(s["bf"], expected["bf"]);
    for key in ["pm", "st", "pg", "score"] {
        near(&s[key], &expected[key], key);
    }
    let rows = expected["benches"].as_object().unwrap();
    assert_eq!(actual["benches"].as_array().unwrap().len(), rows.len());
    for b in actual["benches"].as_array().unwrap() {
        let name = b["bench"].as_str().unwrap();
        let e = &rows[name];
        assert_eq!(b["n"], e["n"], "{name}");
        for key in ["mean", "sd", "perf", "sd_pct"] {
            near(&b[key], &e[key], &format!("{name} {key}"));
        }
        assert_eq!(b["perf_pass"], e["perf_pass"], "{name}");
        assert_eq!(b["sd_pass"], e["sd_pass"], "{name}");
    }
}
