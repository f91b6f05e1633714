//! Loss curves compared across runs and GPUs: `loss.divergent` and `loss.duplicated`.

use super::{at, check, missing_in, texts};
use crate::fixtures::{
    copy_example, edit_entry, error, finding, read_entries, rehash, warning, write_entries,
};
use mlbench_schema::value::Value;

// ───────────────────────────── 18. loss.divergent ─────────────────────────────

#[test]
fn loss_divergent_is_a_warning() {
    let dir = copy_example();
    let file = "output3/fast_1.json";
    edit_entry(&at(&dir, file), 2, |o| {
        let losses: Vec<f64> = o
            .get("batch_loss")
            .unwrap()
            .as_list()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() * 3.0)
            .collect();
        o.insert("batch_loss", Value::from(losses));
    });
    let json = check(
        dir.path(),
        &[],
        0,
        vec![warning(
            "loss.divergent",
            Some(file),
            Some(2),
            Some("batch_loss"),
        )],
    );
    let f = finding(&json, "loss.divergent", Some(file), Some(2));
    assert!(
        f["expected"].as_str().unwrap().contains("its 9 other runs"),
        "{f}"
    );
}

// ───────────────────────────── 19. loss.duplicated ─────────────────────────────

#[test]
fn loss_duplicated_stream_copied_over_the_other_gpu() {
    let dir = copy_example();
    std::fs::copy(
        at(&dir, "output1/fast_0.json"),
        at(&dir, "output1/fast_1.json"),
    )
    .unwrap();
    // The copy still says GPU 0 (`vcd`), so GPU 1 has nothing in that run and GPU 0 has
    // every bench twice; every entry is a bit-identical copy.
    let copy = "output1/fast_1.json";
    let mut expected = Vec::new();
    for i in 0..19 {
        expected.push(error(
            "loss.duplicated",
            Some(copy),
            Some(i),
            Some("batch_loss"),
        ));
        expected.push(error("loss.duplicated", Some(copy), Some(i), Some("train")));
        expected.push(error("bench.duplicate", Some(copy), Some(i), None));
    }
    expected.extend(missing_in(copy, 16));
    let json = check(dir.path(), &[], 1, expected);
    // The 16 benches missing on GPU 0 of that run are one finding.
    assert_eq!(json["errors"], 19 * 3 + 1);
}

#[test]
fn loss_duplicated_stream_copied_and_relabelled() {
    let dir = copy_example();
    let mut entries = read_entries(&at(&dir, "output1/fast_0.json"));
    entries.truncate(16);
    for e in &mut entries {
        e.fields.insert("vcd", "1");
        e.fields.insert("jr_id", "1");
        rehash(&mut e.fields);
    }
    write_entries(&at(&dir, "output1/fast_1.json"), &entries);
    let copy = "output1/fast_1.json";
    let mut expected = Vec::new();
    for i in 0..16 {
        expected.push(error(
            "loss.duplicated",
            Some(copy),
            Some(i),
            Some("batch_loss"),
        ));
        expected.push(error("loss.duplicated", Some(copy), Some(i), Some("train")));
    }
    let json = check(dir.path(), &[], 1, expected);
    assert_eq!(json["errors"], 32);
    assert_eq!(
        texts(&json, "loss.duplicated", "found")[0],
        "bit-identical to output1/fast_0.json entry 0"
    );
}

#[test]
fn loss_duplicated_one_curve_from_another_run() {
    let dir = copy_example();
    let source = read_entries(&at(&dir, "output0/fast_1.json"))[2]
        .get("batch_loss")
        .unwrap()
        .clone();
    let file = "output3/fast_1.json";
    edit_entry(&at(&dir, file), 2, |o| o.insert("batch_loss", source));
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error(
            "loss.duplicated",
            Some(file),
            Some(2),
            Some("batch_loss"),
        )],
    );
    assert_eq!(
        finding(&json, "loss.duplicated", Some(file), Some(2))["found"],
        "bit-identical to output0/fast_1.json entry 2"
    );
}

/// Healthy runs of different seeds (tests/data/healthy-seeds: the runner's own curves,
/// levels orders of magnitude apart for some benches) are not divergent; the same curves
/// with one vae curve made three times larger are, that one alone (vae's runs agree within
/// a few per cent: three times is far outside them).
#[test]
fn healthy_seeds_are_not_divergent() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/healthy-seeds");
    let divergent = |json: &serde_json::Value| -> Vec<(String, u64)> {
        json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "loss.divergent")
            .map(|f| {
                (
                    f["file"].as_str().unwrap().to_owned(),
                    f["entry"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let (_, json) = crate::fixtures::validate_json(&data, &[]);
    assert_eq!(divergent(&json), Vec::<(String, u64)>::new(), "{json:#}");
    let copy = tempfile::tempdir().unwrap();
    crate::fixtures::copy_tree(&data, copy.path());
    let stream = copy.path().join("output1/fast_1.json");
    // Entry 2 of that stream (vae), three times larger at every step.
    edit_entry(&stream, 2, |o| {
        let losses: Vec<Value> = (o.get("batch_loss").unwrap().as_list().unwrap().iter())
            .map(|v| Value::Float(v.as_f64().unwrap() * 3.0))
            .collect();
        o.insert("batch_loss", Value::List(losses));
    });
    let (_, json) = crate::fixtures::validate_json(copy.path(), &[]);
    assert_eq!(
        divergent(&json),
        [("output1/fast_1.json".to_owned(), 2)],
        "{json:#}"
    );
}
