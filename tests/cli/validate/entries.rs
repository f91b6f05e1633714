//! The example itself, and the rules about single entries and their fields: `parse.*`,
//! `loss.nan`, `run.*`, `id.mismatch` and `work.inconsistent`.

use super::{
    at, check, missing_in, name_of, names_from, per_test_submission, set_loss, streams, texts,
};
use crate::fixtures::{
    copy_example, edit_entry, edit_object, error, example_dir, finding, folder_files, number,
    read_entries, write_zip,
};
use mlbench_schema::ReportEntry;
use mlbench_schema::value::Value;
use mlbench_schema::writer::{stream_chunk, stream_text};
use serde_json::json;
use zip::CompressionMethod::Deflated;

/// Byte offset of entry `index` in a legacy stream: `[`, then each entry's chunk.
fn entry_offset(entries: &[ReportEntry], index: usize) -> usize {
    1 + entries[..index]
        .iter()
        .map(|e| stream_chunk(e).len())
        .sum::<usize>()
}

// ───────────────────────────── 1. the example ─────────────────────────────

#[test]
fn example_is_clean_with_its_summary() {
    let json = check(example_dir(), &[], 0, vec![]);
    assert_eq!(
        json["summary"],
        json!({
            "suite": "fast", "files": 11, "report_files": 10, "entries": 175, "runs": 5, "runs_from": "folders",
            "gpus": 2, "benches": 19, "jobs_file": "fast.json",
            "baselines": "baselines/jobs/fast.json"
        })
    );
    assert_eq!(json["errors"], 0);
    assert_eq!(json["warnings"], 0);
    assert_eq!(json["waived"], json!([]));
    assert_eq!(json["versions"], json!([]));
    assert_eq!(json["submission"], example_dir().display().to_string());
}

#[test]
fn example_zipped_is_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("example.zip");
    write_zip(&zip, &folder_files(&example_dir()), Deflated);
    let json = check(&zip, &[], 0, vec![]);
    assert_eq!(json["summary"]["files"], 11);
    assert_eq!(json["summary"]["report_files"], 10);
    assert_eq!(json["summary"]["entries"], 175);
    assert_eq!(json["summary"]["jobs_file"], "fast.json");
}

/// The corpus edits streams through the schema's reader and writer: an unchanged stream
/// must come back byte for byte, or every case would test the writer, not the edit.
#[test]
fn rewriting_a_stream_keeps_its_bytes() {
    for (_, _, rel) in streams() {
        let path = example_dir().join(&rel);
        let text = stream_text(&read_entries(&path));
        assert_eq!(text.as_bytes(), std::fs::read(&path).unwrap(), "{rel}");
    }
}

// ───────────────────────────── 2. parse.json ─────────────────────────────

#[test]
fn parse_json_truncated_mid_entry() {
    let dir = copy_example();
    let file = "output2/fast_1.json";
    let entries = read_entries(&at(&dir, file));
    let start = entry_offset(&entries, 5);
    let cut = start + stream_chunk(&entries[5]).len() / 2;
    let bytes = std::fs::read(at(&dir, file)).unwrap();
    std::fs::write(at(&dir, file), &bytes[..cut]).unwrap();
    let lost = names_from(&example_dir().join(file), 5);
    assert_eq!(lost.len(), 11);

    let mut expected = vec![error("parse.json", Some(file), Some(5), None)];
    expected.extend(missing_in(file, lost.len()));
    let json = check(dir.path(), &[], 1, expected);
    let found = finding(&json, "parse.json", Some(file), Some(5))["found"]
        .as_str()
        .unwrap();
    assert!(found.contains(&format!("at byte {cut} ")), "{found}");
    // 11 benches missing in one place: one finding that lists them.
    let expected = "the 11 benches on GPU 1 in run output2".to_owned();
    assert_eq!(texts(&json, "bench.missing", "expected"), [expected]);
    let listed: Vec<String> = lost.iter().map(|b| format!("`{b}`")).collect();
    let found = format!("every one absent: {}", listed.join(", "));
    assert_eq!(texts(&json, "bench.missing", "found"), [found]);
    assert_eq!(json["summary"]["entries"], 175 - 11);
}

#[test]
fn parse_json_stray_character() {
    let dir = copy_example();
    let file = "output3/fast_0.json";
    let entries = read_entries(&at(&dir, file));
    let offset = entry_offset(&entries, 18);
    let mut bytes = std::fs::read(at(&dir, file)).unwrap();
    bytes.insert(offset, b'x');
    std::fs::write(at(&dir, file), &bytes).unwrap();

    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("parse.json", Some(file), Some(18), None),
            error("bench.missing", Some(file), None, None),
        ],
    );
    let found = finding(&json, "parse.json", Some(file), Some(18))["found"]
        .as_str()
        .unwrap();
    assert!(found.contains(&format!("at byte {offset} ")), "{found}");
    let lost = name_of(&example_dir().join(file), 18);
    assert_eq!(
        texts(&json, "bench.missing", "expected"),
        [format!("`{lost}` on the whole machine in run output3")]
    );
}

#[test]
fn parse_json_empty_file() {
    let dir = copy_example();
    let file = "output4/fast_1.json";
    std::fs::write(at(&dir, file), "").unwrap();
    let mut expected = vec![error("parse.json", Some(file), None, None)];
    expected.extend(missing_in(file, 16));
    let json = check(dir.path(), &[], 1, expected);
    let f = finding(&json, "parse.json", Some(file), None);
    assert!(
        f["found"].as_str().unwrap().starts_with("empty file"),
        "{f}"
    );
    assert_eq!(json["summary"]["report_files"], 10);
    assert_eq!(json["summary"]["entries"], 175 - 16);
}

// ───────────────────────────── 3. parse.type ─────────────────────────────

#[test]
fn parse_type_batch_size_as_a_string() {
    let dir = copy_example();
    let file = "output1/fast_1.json";
    edit_entry(&at(&dir, file), 2, |o| o.insert("batch_size", "128"));
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("parse.type", Some(file), Some(2), Some("batch_size")),
            error("bench.missing", Some(file), None, None),
        ],
    );
    let f = finding(&json, "parse.type", Some(file), Some(2));
    assert_eq!(f["expected"], "an int");
    assert_eq!(f["found"], "string");
}

#[test]
fn parse_type_batch_loss_holding_a_string() {
    let dir = copy_example();
    let file = "output3/fast_1.json";
    edit_entry(&at(&dir, file), 4, |o| {
        let mut losses = o.get("batch_loss").unwrap().as_list().unwrap().to_vec();
        losses[5] = Value::from("0.25");
        o.insert("batch_loss", Value::List(losses));
    });
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("parse.type", Some(file), Some(4), Some("batch_loss[5]")),
            error("bench.missing", Some(file), None, None),
        ],
    );
    assert_eq!(
        finding(&json, "parse.type", Some(file), Some(4))["found"],
        "string"
    );
}

// ───────────────────────────── 4. parse.missing-field ─────────────────────────────

#[test]
fn parse_missing_field_train() {
    let dir = copy_example();
    let file = "output0/fast_1.json";
    edit_entry(&at(&dir, file), 8, |o| {
        o.remove("train").unwrap();
    });
    check(
        dir.path(),
        &[],
        1,
        vec![error(
            "parse.missing-field",
            Some(file),
            Some(8),
            Some("train"),
        )],
    );
}

#[test]
fn parse_missing_field_name() {
    let dir = copy_example();
    let file = "output4/fast_0.json";
    let lost = name_of(&at(&dir, file), 10);
    edit_entry(&at(&dir, file), 10, |o| {
        o.remove("name").unwrap();
    });
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("parse.missing-field", Some(file), Some(10), Some("name")),
            error("bench.missing", Some(file), None, None),
        ],
    );
    assert_eq!(
        texts(&json, "bench.missing", "expected"),
        [format!("`{lost}` on GPU 0 in run output4")]
    );
}

// ───────────────────────────── 5. loss.nan ─────────────────────────────

#[test]
fn loss_nan_infinity_and_minus_infinity() {
    let file = "output1/fast_0.json";
    for (value, token) in [
        (f64::NAN, "NaN"),
        (f64::INFINITY, "Infinity"),
        (f64::NEG_INFINITY, "-Infinity"),
    ] {
        let dir = copy_example();
        set_loss(&at(&dir, file), 3, 17, value);
        let text = std::fs::read_to_string(at(&dir, file)).unwrap();
        assert!(text.contains(&format!("        {token},\n")), "{token}");
        let json = check(
            dir.path(),
            &[],
            1,
            vec![error(
                "loss.nan",
                Some(file),
                Some(3),
                Some("batch_loss[17]"),
            )],
        );
        let f = finding(&json, "loss.nan", Some(file), Some(3));
        assert_eq!(f["found"], token);
        assert_eq!(f["expected"], "a finite loss");
    }
}

#[test]
fn loss_nan_in_two_entries_and_several_in_one() {
    let dir = copy_example();
    set_loss(&at(&dir, "output1/fast_0.json"), 3, 17, f64::NAN);
    set_loss(&at(&dir, "output1/fast_0.json"), 3, 40, f64::INFINITY);
    set_loss(&at(&dir, "output3/fast_1.json"), 5, 0, f64::NAN);
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error(
                "loss.nan",
                Some("output1/fast_0.json"),
                Some(3),
                Some("batch_loss[17]"),
            ),
            error(
                "loss.nan",
                Some("output3/fast_1.json"),
                Some(5),
                Some("batch_loss[0]"),
            ),
        ],
    );
    assert_eq!(
        finding(&json, "loss.nan", Some("output1/fast_0.json"), Some(3))["found"],
        "NaN (and 1 more non-finite of 100 values)"
    );
}

// ───────────────────────────── 6. run.incomplete ─────────────────────────────

#[test]
fn run_incomplete() {
    let dir = copy_example();
    let file = "output2/fast_1.json";
    edit_entry(&at(&dir, file), 11, |o| o.insert("completed", false));
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error(
            "run.incomplete",
            Some(file),
            Some(11),
            Some("completed"),
        )],
    );
    assert_eq!(
        finding(&json, "run.incomplete", Some(file), Some(11))["found"],
        "completed: false"
    );
}

// ───────────────────────────── 7. run.failed ─────────────────────────────

#[test]
fn run_failed_stub_among_per_test_files() {
    let dir = per_test_submission();
    let json = check(dir.path(), &[], 0, vec![]);
    assert_eq!(json["summary"]["report_files"], 175);
    assert_eq!(json["summary"]["entries"], 175);
    assert_eq!(json["summary"]["runs"], 5);
    assert_eq!(json["summary"]["gpus"], 2);

    let stub = "fast.None.R0.D1.FAIL.20240102-030405-999999.json";
    std::fs::write(
        at(&dir, stub),
        r#"{"completed": false, "name": null, "run_id": 0, "suite": "fast", "vcd": "1"}"#,
    )
    .unwrap();
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error("run.failed", Some(stub), Some(0), None)],
    );
    assert_eq!(json["summary"]["report_files"], 176);
    assert!(
        finding(&json, "run.failed", Some(stub), Some(0))["found"]
            .as_str()
            .unwrap()
            .contains("name: null")
    );
}

// ───────────────────────────── 16. id.mismatch ─────────────────────────────

#[test]
fn id_mismatch_altered_unique_id() {
    let dir = copy_example();
    let file = "output2/fast_0.json";
    let original = read_entries(&at(&dir, file))[7]
        .get("unique_id")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    let forged = "0".repeat(64);
    edit_entry(&at(&dir, file), 7, |o| {
        o.insert("unique_id", forged.as_str())
    });
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error("id.mismatch", Some(file), Some(7), Some("unique_id"))],
    );
    let f = finding(&json, "id.mismatch", Some(file), Some(7));
    assert_eq!(f["expected"], original);
    assert_eq!(f["found"], forged);
}

#[test]
fn id_mismatch_argument_altered_without_recomputing() {
    let dir = copy_example();
    let file = "output0/fast_1.json";
    assert_eq!(name_of(&at(&dir, file), 0), "toy_reg");
    edit_entry(&at(&dir, file), 0, |o| o.insert("number", 101i64));
    // `number` is hashed, enters the throughput, and is in the jobs file (100).
    let json = check(
        dir.path(),
        &[],
        1,
        vec![
            error("id.mismatch", Some(file), Some(0), Some("unique_id")),
            error(
                "work.inconsistent",
                Some(file),
                Some(0),
                Some("train_item.avg"),
            ),
            error("args.entry-mismatch", Some(file), Some(0), Some("number")),
        ],
    );
    let f = finding(&json, "args.entry-mismatch", Some(file), Some(0));
    assert_eq!(f["expected"], "100 (jobs file --number)");
    assert_eq!(f["found"], "101");
}

// ───────────────────────────── 17. work.inconsistent ─────────────────────────────

#[test]
fn work_inconsistent_throughput_scaled() {
    let dir = copy_example();
    let file = "output2/fast_0.json";
    edit_entry(&at(&dir, file), 0, |o| {
        let avg = number(o, "train_item", "avg");
        // toy_reg's min-max spread is over 1%, so only the arithmetic is off.
        assert!(avg * 1.01 < number(o, "train_item", "max"));
        edit_object(o, "train_item", |item| item.insert("avg", avg * 1.01));
    });
    check(
        dir.path(),
        &[],
        1,
        vec![error(
            "work.inconsistent",
            Some(file),
            Some(0),
            Some("train_item.avg"),
        )],
    );
}

#[test]
fn work_inconsistent_count_over_repeat() {
    let dir = copy_example();
    let file = "output1/fast_1.json";
    edit_entry(&at(&dir, file), 2, |o| {
        assert_eq!(o.get("repeat"), Some(&Value::Int(50)));
        edit_object(o, "train", |t| t.insert("count", 41i64));
    });
    let json = check(
        dir.path(),
        &[],
        1,
        vec![error(
            "work.inconsistent",
            Some(file),
            Some(2),
            Some("train.count"),
        )],
    );
    let f = finding(&json, "work.inconsistent", Some(file), Some(2));
    assert_eq!(f["expected"], "1 ≤ train.count ≤ 40 for repeat 50");
    assert_eq!(f["found"], "41");
}

#[test]
fn work_inconsistent_min_over_avg() {
    let dir = copy_example();
    let file = "output0/fast_0.json";
    edit_entry(&at(&dir, file), 3, |o| {
        let avg = number(o, "train", "avg");
        edit_object(o, "train", |t| t.insert("min", avg * 1.5));
    });
    // min > avg, and train_item.max (= items ÷ train.min) no longer follows.
    check(
        dir.path(),
        &[],
        1,
        vec![
            error("work.inconsistent", Some(file), Some(3), Some("train.avg")),
            error(
                "work.inconsistent",
                Some(file),
                Some(3),
                Some("train_item.max"),
            ),
        ],
    );
}
