//! Properties of the Python-compatible JSON layer.

use mlbench_schema::pyjson::{parse, to_python_json};
use mlbench_schema::pyrepr::py_float_repr;
use mlbench_schema::{Object, Value};
use proptest::prelude::*;

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        any::<f64>().prop_map(Value::Float),
        ".*".prop_map(Value::Str),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::List),
            prop::collection::vec(("[a-z_]{1,8}", inner), 0..8)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Object>())),
        ]
    })
}

/// A JSON number literal: sign, integer part (no leading zero), fraction, exponent; long
/// and extreme ones included (subnormals, overflow to infinity, 19–40 digit mantissas).
fn number_literal() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        prop_oneof!["0", "[1-9][0-9]{0,25}"],
        prop::option::of("[0-9]{1,30}"),
        prop::option::of(("[eE]", "[+-]?", "[0-9]{1,3}")),
    )
        .prop_map(|(negative, int, frac, exp)| {
            let mut s = String::new();
            if negative {
                s.push('-');
            }
            s.push_str(&int);
            if let Some(frac) = frac {
                s.push('.');
                s.push_str(&frac);
            }
            if let Some((e, sign, digits)) = exp {
                s.push_str(&e);
                s.push_str(&sign);
                s.push_str(&digits);
            }
            s
        })
}

proptest! {
    /// Number literals read as Rust's own parsers read them (which round correctly, as
    /// Python's `float()` and `int()`): a float for a fraction or exponent, else an int
    /// that fits i64, else the digits kept.
    #[test]
    fn number_literals_read_as_std_reads_them(text in number_literal()) {
        let value = parse(text.as_bytes()).unwrap();
        let is_float = text.contains(['.', 'e', 'E']);
        match value {
            Value::Float(f) => {
                prop_assert!(is_float);
                prop_assert_eq!(f.to_bits(), text.parse::<f64>().unwrap().to_bits());
            }
            Value::Int(i) => {
                prop_assert!(!is_float);
                prop_assert_eq!(Ok(i), text.parse::<i64>());
            }
            Value::BigInt(digits) => {
                prop_assert!(!is_float && text.parse::<i64>().is_err());
                prop_assert_eq!(&*digits, text.as_str());
            }
            other => prop_assert!(false, "{text}: {other:?}"),
        }
    }

    /// Whatever mlbench writes, it reads back to the same text: the writer's output is
    /// a fixed point (NaN ≠ NaN, so texts are compared, not values).
    #[test]
    fn written_json_reads_back_identically(v in value()) {
        let text = to_python_json(&v);
        let back = parse(text.as_bytes()).unwrap();
        prop_assert_eq!(to_python_json(&back), text);
    }

    /// Python's float repr is the shortest text that reads back as the same float.
    #[test]
    fn float_repr_round_trips(x in any::<f64>().prop_filter("finite", |x| x.is_finite())) {
        let text = py_float_repr(x);
        prop_assert_eq!(text.parse::<f64>().unwrap().to_bits(), x.to_bits());
        // Positional floats always carry a '.', as Python's do ('1.0', not '1').
        prop_assert!(text.contains('.') || text.contains('e'), "{}", text);
    }

    /// No input makes the reader panic: every failure is an error with an offset.
    #[test]
    fn reader_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let parsed = mlbench_schema::reader::parse_report("x.json", &bytes);
        for e in parsed.errors {
            prop_assert!(!e.message.is_empty());
        }
    }
}

// ── The lean read agrees with the full one ─────────────────────────────────────────────

use mlbench_schema::ReportEntry;
use mlbench_schema::entry::configuration_key_of;
use mlbench_schema::pyjson::{Parser, Skipped};
use mlbench_schema::reader::{
    ParsedFile, parse_report, parse_report_lean, parse_report_values, parse_report_values_each,
};

/// A number token as the suite (or a damaged file) may write it.
fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => any::<f32>().prop_map(|x| py_float_repr(f64::from(x))),
        2 => any::<i64>().prop_map(|i| i.to_string()),
        1 => Just("NaN".to_owned()),
        1 => Just("Infinity".to_owned()),
        1 => Just("-Infinity".to_owned()),
        1 => prop::sample::select(vec![
            "1e400", "-1e400", "1E+309", "2.5e308", "1e308", "1.7976931348623157e308",
            "1e-400", "-0", "0.0", "-0.0e-0", "123456789012345678901234567890",
        ])
        .prop_map(str::to_owned),
        // Integer parts around where f64 overflows (309 digits), with and without fraction.
        1 => (295usize..320, any::<bool>(), any::<bool>()).prop_map(|(n, frac, neg)| {
            format!("{}9{}{}", if neg { "-" } else { "" }, "9".repeat(n - 1), if frac { ".5" } else { "" })
        }),
    ]
}

/// A string literal, with escapes and non-ASCII text.
fn string_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_]{0,10}".prop_map(|s| format!("\"{s}\"")),
        Just(r#""a\"b\\c\/d\n\t\u00e9\ud83d\ude00\ud800x""#.to_owned()),
        Just("\"caf\u{e9} \u{1f600}\"".to_owned()),
        ".{0,8}".prop_map(|s| to_python_json(&Value::Str(s))),
    ]
}

/// A loss list: numbers, mostly, and now and then something else; or a curve as the
/// suite writes it (indented, one plain float a line: the readers' fast paths), now and
/// then with another number in it.
fn loss_list_text() -> impl Strategy<Value = String> {
    let element = prop_oneof![
        12 => number_text(),
        1 => prop::sample::select(vec!["\"x\"", "null", "true", "[1.0]", "{}", "[]"])
            .prop_map(str::to_owned),
    ];
    let short = (
        prop::collection::vec(element, 0..12),
        prop::sample::select(vec![", ", ",", ",\n        ", " ,\t"]),
    )
        .prop_map(|(items, sep)| format!("[{}]", items.join(sep)));
    let curve_element = prop_oneof![
        40 => (0.0f32..100.0).prop_map(|x| py_float_repr(f64::from(x))),
        1 => number_text(),
    ];
    let curve = prop::collection::vec(curve_element, 1..80)
        .prop_map(|items| format!("[\n        {}\n    ]", items.join(",\n        ")));
    // A curve as Python's repr writes real losses: exponents, signs, integer-valued
    // floats, short ones, full f64 precision (the whole-block path's harder inputs).
    let repr_curve = prop::collection::vec(repr_loss(), 1..80)
        .prop_map(|items| format!("[\n        {}\n    ]", items.join(",\n        ")));
    prop_oneof![3 => short, 1 => curve, 1 => repr_curve]
}

/// A loss as `repr(float)` writes it: `3.2247762793424783e-10`, `-0.0625`, `1e-05`,
/// `12.0`, `-7.5e+22`, any finite f64, or an f32's value.
fn repr_loss() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(py_float_repr),
        3 => (1e-12f64..1e-4).prop_map(py_float_repr),
        3 => (-64i32..64).prop_map(|k| py_float_repr(f64::from(k) / 16.0)),
        2 => (-1000i32..1000).prop_map(|k| py_float_repr(f64::from(k))),
        2 => (1u32..10, 1i32..12).prop_map(|(m, e)| py_float_repr(f64::from(m) * 10f64.powi(-e))),
        2 => any::<f32>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(|x| py_float_repr(-f64::from(x).abs())),
    ]
}

/// Text that Python's `json.loads` refuses, token by token.
fn defect() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "01",
        "1.",
        "-",
        "1e",
        "1e+",
        ".5",
        "+1",
        "-NaN",
        "nan",
        "Infinit",
        "-Infinit",
        "tru",
        "nul",
        "[1,]",
        "[,1]",
        "[1 2]",
        "[",
        "]",
        "{\"a\": 1,}",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\" 1}",
        "{a: 1}",
        "{1: 2}",
        "{",
        "}",
        "\"\\x\"",
        "\"\\u12\"",
        "\"\\ud800\\u12\"",
        "\"a\u{1}b\"",
        "\"a\tb\"",
        "\"open",
        "''",
        "1 2",
    ])
    .prop_map(str::to_owned)
}

/// Any JSON text (compact or indented as Python writes it), numbers as the suite writes
/// them, and now and then a defect somewhere inside.
fn json_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        6 => number_text(),
        6 => string_text(),
        3 => prop::sample::select(vec!["null", "true", "false"]).prop_map(str::to_owned),
        1 => defect(),
    ];
    leaf.prop_recursive(3, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "\"a\"",
                        "\"batch_loss\"",
                        "\"metrics\"",
                        "\"acc\"",
                        "\"b\\u0061\""
                    ]),
                    inner
                ),
                0..6
            )
            .prop_map(|pairs| {
                let pairs: Vec<String> = pairs
                    .into_iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect();
                format!("{{{}}}", pairs.join(",\n    "))
            }),
            loss_list_text(),
        ]
    })
}

/// A key a timing stage may sit under: the suite's stages, keys the scorer or the type
/// checks look up (where a lean read keeps the object), one spelled with an escape.
fn stage_key() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "train",
        "loading",
        "compute",
        "eval",
        "name",
        "version",
        "vcd",
        "devices",
        "hostname",
        "batch_size",
        "completed",
        "run_id",
        "smoke",
        "tr\\u0061in",
        "x",
    ])
}

/// Some fields of a stage object: `avg`, `unit` (`"s"` or not), others, also twice.
fn stage_fields_text() -> impl Strategy<Value = String> {
    let field = prop_oneof![
        3 => number_text().prop_map(|v| format!("\"avg\": {v}")),
        3 => Just("\"unit\": \"s\"".to_owned()),
        1 => Just("\"un\\u0069t\": \"s\"".to_owned()),
        1 => json_text().prop_map(|v| format!("\"unit\": {v}")),
        2 => number_text().prop_map(|v| format!("\"sd\": {v}")),
        1 => ("[a-z_]{1,6}", json_text()).prop_map(|(k, v)| format!("\"{k}\": {v}")),
    ];
    prop::collection::vec(field, 0..5).prop_map(|fields| fields.join(", "))
}

/// An object that is a timing stage, most of the time.
fn stage_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (number_text(), number_text()).prop_map(|(avg, sd)| {
            format!("{{\"avg\": {avg}, \"count\": 15, \"max\": {avg}, \"sd\": {sd}, \"unit\": \"s\"}}")
        }),
        2 => stage_fields_text().prop_map(|f| format!("{{{f}}}")),
    ]
}

/// One entry's fields: the suite's keys, the skipped ones (also spelled with an escape,
/// also twice), and others.
fn entry_text() -> impl Strategy<Value = String> {
    let field = prop_oneof![
        3 => loss_list_text().prop_map(|v| format!("\"batch_loss\": {v}")),
        1 => json_text().prop_map(|v| format!("\"batch_loss\": {v}")),
        1 => loss_list_text().prop_map(|v| format!("\"batch\\u005floss\": {v}")),
        2 => json_text().prop_map(|v| format!("\"metrics\": {v}")),
        2 => loss_list_text().prop_map(|v| format!("\"epoch_loss\": {v}")),
        3 => string_text().prop_map(|v| format!("\"name\": {v}")),
        2 => string_text().prop_map(|v| format!("\"unique_id\": {v}")),
        1 => prop::sample::select(vec!["\"3\"", "0", "2.5", "null"]).prop_map(|v| format!("\"jr_id\": {v}")),
        1 => json_text().prop_map(|v| format!("\"gpu\": {v}")),
        1 => string_text().prop_map(|v| format!("\"gpu\": {v}")),
        2 => Just("\"version\": \"494f887e94\"".to_owned()),
        3 => number_text().prop_map(|v| format!("\"train_item\": {{\"avg\": {v}, \"unit\": \"items/sec\"}}")),
        1 => (stage_fields_text(), stage_fields_text()).prop_map(|(a, b)| format!("\"train_item\": {{{a}, {b}}}")),
        3 => (stage_key(), stage_text()).prop_map(|(k, v)| format!("\"{k}\": {v}")),
        2 => (stage_key(), json_text()).prop_map(|(k, v)| format!("\"{k}\": {v}")),
        1 => prop::sample::select(vec!["true", "false", "\"x\""]).prop_map(|v| format!("\"completed\": {v}")),
        1 => prop::sample::select(vec!["\"3\"", "0", "1.5"]).prop_map(|v| format!("\"vcd\": {v}")),
        2 => ("[a-z_]{1,8}", json_text()).prop_map(|(k, v)| format!("\"{k}\": {v}")),
    ];
    (
        prop::collection::vec(field, 0..8),
        prop::sample::select(vec![", ", ",\n    ", ","]),
    )
        .prop_map(|(fields, sep)| format!("{{{}}}", fields.join(sep)))
}

/// Up to three edits (truncate, replace, insert or delete a byte, delete a few) at random
/// places, with bytes that matter to the grammar.
fn damaged(text: String) -> impl Strategy<Value = Vec<u8>> {
    let edit = (
        any::<prop::sample::Index>(),
        0..5u8,
        prop::sample::select(b"\"\\,]}{[:eE-+.N0 \n\x01\xc3\xffx".to_vec()),
    );
    (prop::collection::vec(edit, 0..4), any::<bool>()).prop_map(move |(edits, damage)| {
        let mut bytes = text.clone().into_bytes();
        if damage {
            for (at, kind, b) in edits {
                let i = at.index(bytes.len() + 1);
                match kind {
                    0 => bytes.truncate(i),
                    1 if i < bytes.len() => bytes[i] = b,
                    2 => bytes.insert(i, b),
                    3 if i < bytes.len() => {
                        bytes.remove(i);
                    }
                    4 => {
                        bytes.drain(i..(i + usize::from(b % 6) + 2).min(bytes.len()));
                    }
                    _ => {}
                }
            }
        }
        bytes
    })
}

/// A report text: a stream, a closed array or a bare object, now and then damaged.
fn report_text() -> impl Strategy<Value = Vec<u8>> {
    let entry = prop_oneof![
        8 => entry_text(),
        1 => json_text(),
    ];
    (prop::collection::vec(entry, 1..5), 0..3u8)
        .prop_map(|(entries, container)| match container {
            0 => format!("[{},", entries.join(",\n")),
            1 => format!("[\n{}\n]\n", entries.join(", ")),
            _ => format!("{}\n", entries[0]),
        })
        .prop_flat_map(damaged)
}

/// The keys a lean read never drops a stage from (`entry::looked_up`).
const LOOKED_UP: &[&str] = &[
    "name",
    "version",
    "train_item",
    // Kept so that the lean read checks the same timings as the full one.
    "train",
    "batch_loss",
    "completed",
    "vcd",
    "jr_id",
    "gpu",
    "unique_id",
    "hostname",
    "batch_size",
    "number",
    "repeat",
    "smoke",
    "synthetic_data",
    "devices",
    "run_id",
];

fn nonfinite_bits(x: Option<(usize, f64)>) -> Option<(usize, u64)> {
    x.map(|(i, f)| (i, f.to_bits()))
}

fn check_lean_agrees(text: &[u8]) -> Result<(), TestCaseError> {
    let full: ParsedFile = parse_report("f.json", text);
    let lean = parse_report_lean("f.json", text);
    prop_assert_eq!(full.container, lean.container);
    let errors = |p: &ParsedFile| p.errors.iter().map(ToString::to_string).collect::<Vec<_>>();
    prop_assert_eq!(errors(&full), errors(&lean));
    let indices = |p: &ParsedFile| p.entries.iter().map(|(i, _)| *i).collect::<Vec<_>>();
    prop_assert_eq!(indices(&full), indices(&lean));
    for ((_, f), (_, l)) in full.entries.iter().zip(&lean.entries) {
        prop_assert!(f.loss_scan.is_none());
        match (&l.loss_scan, f.get("batch_loss")) {
            (Some(scan), Some(Value::List(items))) => {
                prop_assert_eq!(scan.len, items.len());
                prop_assert!(l.get("batch_loss").is_none());
            }
            (Some(_), other) => prop_assert!(false, "scanned, but the full entry has {:?}", other),
            (None, loss) => {
                prop_assert_eq!(format!("{loss:?}"), format!("{:?}", l.get("batch_loss")))
            }
        }
        prop_assert!(l.get("epoch_loss").is_none() && l.get("metrics").is_none());
        // What scoring reads of an entry, and its configuration, agree.
        prop_assert_eq!(
            format!("{:?}", f.configuration()),
            format!("{:?}", l.configuration())
        );
        prop_assert_eq!(f.configuration_key(), l.configuration_key());
        // The key hashed in place is the key of the arguments collected first, with and
        // without fields left out.
        // (Also on the entry with its keys in order, as Python writes them: the generated
        // ones mostly are not, and keys in order are hashed where they are.)
        let in_order = ReportEntry::new(
            f.fields
                .sorted()
                .into_iter()
                .map(|(k, v)| (k, v.clone()))
                .collect(),
        );
        for left_out in [vec![], vec!["version".to_owned(), "x".to_owned()]] {
            for e in [f, &in_order] {
                let mut args = e.arguments();
                args.retain(|(k, _)| !left_out.iter().any(|p| p == k));
                prop_assert_eq!(
                    e.configuration_key_without(&left_out),
                    configuration_key_of(&args)
                );
            }
        }
        let avg_bits = |e: &ReportEntry| e.train_item_avg().map(f64::to_bits);
        prop_assert_eq!(avg_bits(f), avg_bits(l));
        prop_assert_eq!(f.is_fail_stub(), l.is_fail_stub());
        let (mut ff, mut lf) = (f.fields.clone(), l.fields.clone());
        // `train_item` keeps its last `avg` alone.
        if let Some(Value::Object(item)) = f.get("train_item") {
            let trimmed: Object = item
                .get("avg")
                .map(|v| ("avg", v.clone()))
                .into_iter()
                .collect();
            prop_assert_eq!(
                format!("{:?}", Some(&Value::Object(trimmed))),
                format!("{:?}", l.get("train_item"))
            );
            ff.remove("train_item");
            lf.remove("train_item");
        }
        // A stage under a key nothing looks up is dropped: a lookup of the key finds
        // nothing when its last value is a stage, and the last value otherwise. (Read
        // twice, the key's earlier stages are dropped too, so only lookups are compared.)
        let duplicated = f.fields.duplicate_keys();
        let is_stage = |v: &Value| {
            v.as_object().is_some_and(|o| {
                o.get("unit").and_then(Value::as_str) == Some("s") && o.contains_key("avg")
            })
        };
        for (key, value) in f.fields.iter() {
            let skipped = ["epoch_loss", "metrics"].contains(&key);
            if LOOKED_UP.contains(&key)
                || skipped
                || !(is_stage(value) || duplicated.contains(&key))
            {
                continue;
            }
            if is_stage(value) {
                prop_assert!(l.get(key).is_none(), "stage {key} kept");
            } else {
                prop_assert_eq!(format!("{:?}", Some(value)), format!("{:?}", l.get(key)));
            }
            ff.remove(key);
            lf.remove(key);
        }
        // String-valued unique_id and jr_id (a per-process argument, outside the
        // configuration) are checked, not kept: what lookups see agrees. `gpu` is kept.
        for key in ["unique_id", "jr_id"] {
            match f.get(key) {
                Some(Value::Str(_)) => prop_assert!(l.get(key).is_none(), "{key} kept"),
                other => prop_assert_eq!(format!("{other:?}"), format!("{:?}", l.get(key))),
            }
        }
        for key in ["batch_loss", "epoch_loss", "metrics", "unique_id", "jr_id"] {
            ff.remove(key);
            lf.remove(key);
        }
        // Debug keeps duplicate keys and prints NaN alike on both sides.
        prop_assert_eq!(format!("{ff:?}"), format!("{lf:?}"));
        prop_assert_eq!(
            nonfinite_bits(f.first_nonfinite_loss()),
            nonfinite_bits(l.first_nonfinite_loss())
        );
        prop_assert_eq!(f.failure(false), l.failure(false));
        prop_assert_eq!(f.type_problems(), l.type_problems());
    }
    Ok(())
}

/// `parse_report_values` gives what `parse_report` gives, with a numbers-only
/// `batch_loss` as `f64`s (bit for bit what `as_f64` of each built element gives).
fn check_values_agree(text: &[u8]) -> Result<(), TestCaseError> {
    let full: ParsedFile = parse_report("f.json", text);
    let kept = parse_report_values("f.json", text);
    prop_assert_eq!(full.container, kept.container);
    let errors = |p: &ParsedFile| p.errors.iter().map(ToString::to_string).collect::<Vec<_>>();
    prop_assert_eq!(errors(&full), errors(&kept));
    let indices = |p: &ParsedFile| p.entries.iter().map(|(i, _)| *i).collect::<Vec<_>>();
    prop_assert_eq!(indices(&full), indices(&kept));
    let bits = |v: Option<std::borrow::Cow<'_, [f64]>>| {
        v.map(|v| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>())
    };
    for ((_, f), (_, k)) in full.entries.iter().zip(&kept.entries) {
        prop_assert_eq!(bits(f.batch_loss_values()), bits(k.batch_loss_values()));
        prop_assert_eq!(f.has("batch_loss"), k.has("batch_loss"));
        if k.loss_values.is_some() {
            prop_assert!(k.get("batch_loss").is_none());
        }
        let (mut ff, mut kf) = (f.fields.clone(), k.fields.clone());
        ff.remove("batch_loss");
        kf.remove("batch_loss");
        prop_assert_eq!(format!("{ff:?}"), format!("{kf:?}"));
        prop_assert_eq!(
            nonfinite_bits(f.first_nonfinite_loss()),
            nonfinite_bits(k.first_nonfinite_loss())
        );
        prop_assert_eq!(f.failure(false), k.failure(false));
        prop_assert_eq!(f.type_problems(), k.type_problems());
    }
    // Handed over one at a time, the same entries (in order), errors and container.
    let mut each = Vec::new();
    let streamed = parse_report_values_each("f.json", text, |i, e| each.push((i, e)));
    prop_assert_eq!(streamed.container, kept.container);
    prop_assert_eq!(errors(&streamed), errors(&kept));
    prop_assert!(streamed.entries.is_empty());
    prop_assert_eq!(format!("{each:?}"), format!("{:?}", kept.entries));
    Ok(())
}

/// What `skip_value` says of a value that `value()` built.
fn expected_skip(v: &Value) -> Skipped {
    match v.as_list() {
        Some(items) if items.iter().all(|x| x.as_f64().is_some()) => Skipped::Numbers {
            len: items.len(),
            first_nonfinite: items
                .iter()
                .enumerate()
                .find_map(|(i, x)| x.as_f64().filter(|f| !f.is_finite()).map(|f| (i, f))),
        },
        _ => Skipped::Other,
    }
}

fn check_skip_agrees(text: &[u8]) -> Result<(), TestCaseError> {
    let mut full = Parser::new(text);
    let mut lean = Parser::new(text);
    let built = full.value();
    let skipped = lean.skip_value();
    match (built, skipped) {
        (Ok(v), Ok(s)) => {
            prop_assert_eq!(full.pos, lean.pos);
            let bits = |s: Skipped| match s {
                Skipped::Numbers {
                    len,
                    first_nonfinite,
                } => Some((len, nonfinite_bits(first_nonfinite))),
                Skipped::Other => None,
            };
            prop_assert_eq!(bits(expected_skip(&v)), bits(s));
        }
        (Err(a), Err(b)) => prop_assert_eq!(a, b),
        (a, b) => prop_assert!(false, "value() {:?}, skip_value() {:?}", a.map(|_| ()), b),
    }
    Ok(())
}

/// A report read from a stream `chunk` bytes at a time gives what the whole text gives:
/// the same container, entries (index and fields) and errors (offsets, lines, columns).
fn check_stream_agrees(text: &[u8], chunk: usize) -> Result<(), TestCaseError> {
    use mlbench_schema::reader::{Content, Reading, parse_each_of, parse_stream_in};
    for reading in [Reading::Lean, Reading::Values] {
        let mut whole_entries = Vec::new();
        let whole = parse_each_of("f", Content::Bytes(text), reading, |i, e| {
            whole_entries.push(format!("{i} {e:?}"))
        });
        let mut streamed_entries = Vec::new();
        let mut input = text;
        let streamed = parse_stream_in("f", &mut input, reading, chunk, 1 << 30, |i, e| {
            streamed_entries.push(format!("{i} {e:?}"))
        });
        prop_assert_eq!(&whole.container, &streamed.container);
        prop_assert_eq!(&whole.errors, &streamed.errors);
        prop_assert_eq!(&whole_entries, &streamed_entries);
    }
    Ok(())
}

proptest! {
    // 2,000 cases at least (more with PROPTEST_CASES).
    #![proptest_config(ProptestConfig::with_cases(ProptestConfig::default().cases.max(2000)))]

    /// Read as a stream through windows of 1 to 64 bytes (every entry cut at every
    /// place over the cases, and windows that grow inside an entry), a report is what the
    /// whole text is: entries and errors alike, positions included.
    #[test]
    fn a_stream_read_in_windows_is_the_whole_text(text in report_text(), chunk in 1usize..64) {
        check_stream_agrees(&text, chunk)?;
    }

    /// `parse_report_lean` gives what `parse_report` gives, less the skipped fields: same
    /// container, errors (text, offsets), entries, type problems and loss verdicts.
    #[test]
    fn lean_read_agrees_with_full_read(text in report_text()) {
        check_lean_agrees(&text)?;
        check_values_agree(&text)?;
    }

    /// `skip_value` accepts what `value()` accepts, stops where it stops, fails with its
    /// error, and sums up number lists as the built list would be.
    #[test]
    fn skip_value_agrees_with_value(bytes in json_text().prop_flat_map(damaged)) {
        check_skip_agrees(&bytes)?;
    }

    /// Arbitrary bytes, too.
    #[test]
    fn lean_read_agrees_on_any_bytes(bytes in prop::collection::vec(prop::sample::select(b"[]{}\",:\\ 0123456789.eE-+NaIfinytrulsbx\n\xc3\xa9".to_vec()), 0..64)) {
        check_lean_agrees(&bytes)?;
        check_values_agree(&bytes)?;
        check_skip_agrees(&bytes)?;
    }
}
