//! `telemetry.*`: the example submission with a telemetry file for every entry of every
//! copy validates clean, packs them (named in SUBMISSION.json, hashed in the manifest),
//! and each damage gives its one finding.
//!
//! Every file is the same hand-made one (literal JSON Lines, not the schema's writer): a
//! GPU at 100 W (counter in mJ, limit 300 W) sampled every second from 0 to 70 s, window
//! `train` from 0.5 to 69.5 s, so 69 samples inside and 69 s × 100 W = 6 900 J by counter
//! and by power, which its summary line (line 75) says.

use super::{at, check, sole};
use crate::fixtures::{copy_example, error, mlbench, read_entries, read_zip, sha256_hex, warning};
use std::collections::BTreeMap;
use std::path::Path;

/// The telemetry file of `bench` and `copy` described above.
fn telemetry_text(bench: &str, copy: u32) -> String {
    let mut text = format!(
        "{{\"type\":\"header\",\"schema_version\":1,\"tool\":\"mlbench test\",\"bench\":\"{bench}\",\"copy\":{copy},\"sample_period_ns\":1000000000,\"devices\":[{{\"id\":\"cuda:{copy}\",\"source\":\"nvml\",\"power_reading\":\"average\",\"counter\":{{\"resolution_uj\":1000.0}},\"power_limit_mw\":300000.0,\"whole_board\":true}}]}}\n"
    );
    let mark = |t_ns: u64, edge: &str| {
        format!(
            "{{\"type\":\"mark\",\"t_ns\":{t_ns},\"edge\":\"{edge}\",\"window\":\"train\",\"copy\":{copy}}}\n"
        )
    };
    for s in 0..=70u64 {
        if s == 1 {
            text.push_str(&mark(500_000_000, "start"));
        }
        if s == 70 {
            text.push_str(&mark(69_500_000_000, "end"));
        }
        text.push_str(&format!(
            "{{\"type\":\"sample\",\"t_ns\":{},\"device\":0,\"energy_raw\":{},\"power_mw\":100000.0}}\n",
            s * 1_000_000_000,
            s * 100_000
        ));
    }
    text.push_str(&format!(
        "{{\"type\":\"summary\",\"window\":\"train\",\"copy\":{copy},\"device\":0,\"start_ns\":500000000,\"end_ns\":69500000000,\"samples\":69,\"counter_j\":6900.0,\"power_j\":6900.0}}\n"
    ));
    text
}

/// Writes a telemetry file for every entry of every copy's stream under `root`
/// (`output<r>/fast_<K>.json` → `output<r>/telemetry/<bench>.<K>.jsonl`, `.2`, … for a
/// bench's later entries): the paths written, sorted.
fn add_telemetry(root: &Path) -> Vec<String> {
    let mut written = Vec::new();
    for run in std::fs::read_dir(root).unwrap() {
        let run = run.unwrap().path();
        let Some(run_name) = run.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        if !run.is_dir() {
            continue;
        }
        std::fs::create_dir_all(run.join("telemetry")).unwrap();
        for copy in 0..2u32 {
            let mut seen: BTreeMap<String, u32> = BTreeMap::new();
            for entry in read_entries(&run.join(format!("fast_{copy}.json"))) {
                let bench = entry.name().unwrap().to_owned();
                let n = seen.entry(bench.clone()).or_default();
                *n += 1;
                let name = match *n {
                    1 => format!("{bench}.{copy}.jsonl"),
                    n => format!("{bench}.{copy}.{n}.jsonl"),
                };
                std::fs::write(
                    run.join("telemetry").join(&name),
                    telemetry_text(&bench, copy),
                )
                .unwrap();
                written.push(format!("{run_name}/telemetry/{name}"));
            }
        }
    }
    written.sort();
    written
}

/// The bench and copy of a telemetry file's path (`…/<bench>.<copy>[.n].jsonl`).
fn bench_and_copy(path: &str) -> (String, u32) {
    let name = path.rsplit('/').next().unwrap();
    let mut parts = name.split('.');
    let bench = parts.next().unwrap().to_owned();
    (bench, parts.next().unwrap().parse().unwrap())
}

/// The index in `output<r>/fast_<K>.json` of the first entry of `bench`.
fn entry_of(path: &Path, bench: &str) -> u64 {
    read_entries(path)
        .iter()
        .position(|e| e.name() == Some(bench))
        .unwrap() as u64
}

#[test]
fn telemetry_of_every_copy_validates_clean() {
    let dir = copy_example();
    let written = add_telemetry(dir.path());
    // One file per entry: 175 entries in the example.
    assert_eq!(written.len(), 175);
    let json = check(dir.path(), &[], 0, vec![]);
    assert_eq!(json["summary"]["files"], 11 + 175);
}

#[test]
fn a_copy_without_its_telemetry_file_is_not_covered() {
    let dir = copy_example();
    add_telemetry(dir.path());
    let stream = "output2/fast_1.json";
    let bench = read_entries(&at(&dir, stream))[3]
        .name()
        .unwrap()
        .to_owned();
    std::fs::remove_file(at(&dir, &format!("output2/telemetry/{bench}.1.jsonl"))).unwrap();
    let entry = entry_of(&at(&dir, stream), &bench);
    let f = sole(
        dir.path(),
        &[],
        1,
        error("telemetry.coverage", Some(stream), Some(entry), None),
    );
    assert_eq!(f["found"], "0 file(s), 0 covered `train` window(s)");
    assert_eq!(
        f["expected"],
        format!(
            "a telemetry file of `{bench}` copy 1 in output2/telemetry/ with its `train` window covered, for each of the 1 entries"
        )
    );
}

#[test]
fn an_edited_summary_is_a_mismatch_at_its_line() {
    let dir = copy_example();
    let written = add_telemetry(dir.path());
    let file = &written[7];
    let text = std::fs::read_to_string(at(&dir, file)).unwrap();
    // 2 % more than the 6 900 J the samples give.
    let edited = text.replace("\"counter_j\":6900.0", "\"counter_j\":7038.0");
    assert_ne!(edited, text);
    std::fs::write(at(&dir, file), edited).unwrap();
    let f = sole(
        dir.path(),
        &[],
        1,
        error(
            "telemetry.summary-mismatch",
            Some(file),
            None,
            Some("line 75"),
        ),
    );
    let (_, copy) = bench_and_copy(file);
    assert_eq!(
        f["found"],
        format!("device 0 (cuda:{copy}): counter_j 7038.000 J (recomputed 6900.000 J)")
    );
}

#[test]
fn a_broken_telemetry_file_is_unreadable_and_uncovered() {
    let dir = copy_example();
    let written = add_telemetry(dir.path());
    let file = &written[0];
    // `output0/telemetry/<bench>.<copy>.jsonl`: its entry is in output0/fast_<copy>.json.
    let (bench, copy) = bench_and_copy(file);
    let stream = format!("output0/fast_{copy}.json");
    let text = std::fs::read_to_string(at(&dir, file)).unwrap();
    let broken = text.replacen("\"device\":0,", "\"device\":0", 1);
    std::fs::write(at(&dir, file), broken).unwrap();
    let entry = entry_of(&at(&dir, &stream), &bench);
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("telemetry.unreadable", Some(file), None, Some("line 2")),
            error("telemetry.coverage", Some(&stream), Some(entry), None),
        ],
    );
    let found = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "telemetry.unreadable")
        .unwrap()["found"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(found.starts_with(&format!("{file}:2: ")), "{found}");
}

#[test]
fn a_short_window_is_a_warning_only() {
    let dir = copy_example();
    let written = add_telemetry(dir.path());
    let file = &written[3];
    // The window ends at 59.5 s: 59 samples (1 … 59 s); the summary says so, 5 900 J.
    let text = std::fs::read_to_string(at(&dir, file)).unwrap();
    let short = text
        .replace("\"t_ns\":69500000000", "\"t_ns\":59500000000")
        .replace(
            "\"end_ns\":69500000000,\"samples\":69,\"counter_j\":6900.0,\"power_j\":6900.0",
            "\"end_ns\":59500000000,\"samples\":59,\"counter_j\":5900.0,\"power_j\":5900.0",
        );
    // The end mark, now at 59.5 s, sits after the sample at 69 s: move it before 60 s.
    let end = "{\"type\":\"mark\",\"t_ns\":59500000000,\"edge\":\"end\"";
    let (before, after) = short.split_once(end).unwrap();
    let (mark_rest, rest) = after.split_once('\n').unwrap();
    let mark = format!("{end}{mark_rest}\n");
    let sixty = "{\"type\":\"sample\",\"t_ns\":60000000000,";
    let moved = format!("{before}{rest}").replacen(sixty, &format!("{mark}{sixty}"), 1);
    std::fs::write(at(&dir, file), moved).unwrap();
    let (_, copy) = bench_and_copy(file);
    let field = format!("window `train` of copy {copy}: device 0 (cuda:{copy})");
    let f = sole(
        dir.path(),
        &[],
        0,
        warning("telemetry.too-few", Some(file), None, Some(&field)),
    );
    assert_eq!(f["found"], "59 samples over 59.000 s");
}

#[test]
fn pack_names_the_telemetry_files_and_hashes_them() {
    let dir = copy_example();
    let written = add_telemetry(dir.path());
    let out = tempfile::tempdir().unwrap();
    let zip = out.path().join("s.zip");
    mlbench()
        .arg("pack")
        .arg(dir.path())
        .arg("-o")
        .arg(&zip)
        .assert()
        .success();
    let files = read_zip(&zip);
    let get = |name: &str| &files.iter().find(|(n, _)| n == name).unwrap().1;
    let info: serde_json::Value = serde_json::from_slice(get("SUBMISSION.json")).unwrap();
    assert_eq!(info["telemetry"], serde_json::json!(written));
    assert_eq!(info["files"], 11 + 175);
    let manifest = String::from_utf8(get("MANIFEST.sha256").clone()).unwrap();
    for path in &written {
        let bytes = std::fs::read(at(&dir, path)).unwrap();
        assert_eq!(get(path), &bytes, "{path} packed as it is");
        let line = format!("{}  {path}\n", sha256_hex(&bytes));
        assert!(manifest.contains(&line), "{line}");
    }
    // The packed archive validates clean, its manifest checked.
    check(&zip, &[], 0, vec![]);
}
