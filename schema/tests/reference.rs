//! Checks against the suite's own material, kept in the repository under
//! tests/data/mila-training (PROVENANCE.md): the ids printed in the suite's README, the
//! target figures of its CSVs, and that the copies are the suite's blobs.

use mlbench_schema::reader::{Container, parse_report};
use mlbench_schema::targets::BUILTIN_MODELS;
use mlbench_schema::unique_id::{EXCLUDED_FIRST, unique_id};
use mlbench_schema::{Scoring, TargetTable, Value};
use std::path::{Path, PathBuf};

fn reference() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/mila-training")
}

/// The "Report example" of the suite's README: a real E1 stream, `[{…},{…},` with its ids.
fn seed_000_report() -> String {
    let path = reference().join("readme-report-example.txt");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file kept is named in PROVENANCE.md with the git blob id it has in
/// mila-iqia/training, and hashes to it: the copies are verbatim.
#[test]
fn copies_are_the_suites_blobs() {
    let dir = reference();
    let provenance = std::fs::read_to_string(dir.join("PROVENANCE.md")).unwrap();
    let mut listed = Vec::new();
    for line in provenance.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let file = cells[1].trim_matches('`');
        let blob = cells[3].trim_matches('`');
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let oid = git2::Oid::hash_object(git2::ObjectType::Blob, &bytes).unwrap();
        assert_eq!(oid.to_string(), blob, "{file}");
        listed.push(file.to_owned());
    }
    let mut found = Vec::new();
    collect_files(&dir, &dir, &mut found);
    found.retain(|f| f != "PROVENANCE.md" && f != "readme-report-example.txt");
    found.sort();
    listed.sort();
    assert_eq!(
        found, listed,
        "every kept file has its row, every row its file"
    );
    assert_eq!(listed.len(), 17);
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_files(root, &path, out);
        } else {
            let rel = path.strip_prefix(root).unwrap();
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

#[test]
fn seed_000_stream_reads_as_two_entries() {
    let parsed = parse_report("seed000", seed_000_report().as_bytes());
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    assert_eq!(parsed.container, Some(Container::Stream));
    assert_eq!(parsed.entries.len(), 2);
    let e = &parsed.entries[0].1;
    assert_eq!(e.train_item_avg(), Some(15.947496843418666));
    assert_eq!(e.get("batch_loss").unwrap().as_list().unwrap().len(), 90);
}

#[test]
fn unique_ids_of_seed_000_are_reproduced() {
    // E1 (fd9ee95): `not_parameter` = {gpu}; `report` (None) and `seed` (0) were hashed
    // and then popped from the report, so they are put back to recompute the id.
    let parsed = parse_report("seed000", seed_000_report().as_bytes());
    let report = Value::Null;
    let seed = Value::Int(0);
    let mut ids = Vec::new();
    for (_, entry) in &parsed.entries {
        let mut args = entry.arguments();
        args.push(("report", &report));
        args.push(("seed", &seed));
        assert_eq!(args.len(), 16, "{args:?}");
        let recorded = entry.get("unique_id").unwrap().as_str().unwrap();
        let computed = unique_id(args, EXCLUDED_FIRST);
        assert_eq!(computed, recorded);
        ids.push(computed);
    }
    assert_eq!(
        ids,
        [
            "966c9e2984121be717c7b4f4d71637619a59b69f84a26aed8d2ea34a08e81157",
            "8f3b6f5a72105215fde07fac915cad0ab83645271fc3bb812fca1b0420cdff28"
        ]
    );
}

#[test]
fn seed_000_entries_round_trip_byte_for_byte() {
    // The README shows the file as Python wrote it, except for its line breaks
    // ("[{" and "},{" seams are the writer's; the text in between is json.dumps output).
    let text = seed_000_report();
    let parsed = parse_report("seed000", text.as_bytes());
    let entries: Vec<_> = parsed.entries.iter().map(|(_, e)| e.clone()).collect();
    let written = mlbench_schema::writer::stream_text(&entries);
    assert_eq!(written, text);
}

fn csv_rows(name: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(reference().join("report").join(name)).unwrap();
    text.lines()
        .map(|l| l.split(',').map(str::to_owned).collect())
        .collect()
}

#[test]
fn builtin_score_targets_carry_the_suites_figures() {
    for model in BUILTIN_MODELS {
        let rows = csv_rows(&format!("target_{}.csv", model.to_lowercase()));
        assert_eq!(rows[0], ["bench", "target", "perf_target", "sd_target"]);
        let table = TargetTable::builtin(Scoring::Score, model).unwrap();
        assert_eq!(table.targets.len(), rows.len() - 1);
        for (row, t) in rows[1..].iter().zip(&table.targets) {
            assert_eq!(row[0], t.bench);
            assert_eq!(
                row[1].parse::<f64>().unwrap(),
                t.target,
                "{model} {}",
                t.bench
            );
            assert_eq!(Some(row[2].parse::<f64>().unwrap()), t.perf_target);
            assert_eq!(Some(row[3].parse::<f64>().unwrap()), t.sd_target);
        }
    }
}

#[test]
fn builtin_classic_targets_carry_data_csv() {
    let rows = csv_rows("data.csv");
    assert_eq!(rows[0], ["bench", "V100", "MI50", "RTX"]);
    for (col, model) in ["V100", "MI50", "RTX"].iter().enumerate() {
        let table = TargetTable::builtin(Scoring::Classic, model).unwrap();
        assert_eq!(table.targets.len(), rows.len() - 1);
        for (row, t) in rows[1..].iter().zip(&table.targets) {
            assert_eq!(row[0], t.bench);
            assert_eq!(
                row[col + 1].parse::<f64>().unwrap(),
                t.target,
                "{model} {}",
                t.bench
            );
        }
    }
}

#[test]
fn original_csvs_load_as_user_targets() {
    let dir = reference().join("report");
    let t = TargetTable::load(&dir.join("target_rtx.csv"), Scoring::Score, "RTX").unwrap();
    assert_eq!(t.get("atari").unwrap().target, 5.0);
    assert_eq!(t.exclude.len(), 3, "a CSV gets the built-in exclusions");
    let t = TargetTable::load(&dir.join("data.csv"), Scoring::Classic, "v100").unwrap();
    assert_eq!(t.get("ssd").unwrap().target, 36.43);
    assert_eq!(t.select.len(), 5, "a CSV gets the built-in selection rules");
}
