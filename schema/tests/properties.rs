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

proptest! {
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
