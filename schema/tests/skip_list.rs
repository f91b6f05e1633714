//! `skip_list`'s fast path (plain floats in Python's indented layout, checked a 64-byte
//! block at a time, then element by element against byte classes of 64-byte blocks on
//! x86-64, then eight bytes at a time) changes nothing: on
//! loss lists as the suite writes them, and on lists varied or damaged in every way near
//! it, the list skip gives what its careful loop alone gives (the algorithm before the
//! fast path) and what the full parser says of the list, and `number_list` (the
//! validator's read of the values, whose fast path shares the whole-block pass) reads
//! the values the full parser builds, bit for bit.

use mlbench_schema::Value;
use mlbench_schema::pyjson::{Parser, Skipped};
use mlbench_schema::pyrepr::py_float_repr;
use proptest::prelude::*;

/// A float as `repr` writes it (no `inf`/`nan`: those are JSON tokens).
fn repr(x: f64) -> String {
    if x.is_finite() {
        py_float_repr(x)
    } else {
        "NaN".to_owned()
    }
}

/// An element as the suite writes it: a loss, an f32 widened, in the usual ranges.
fn loss() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => 0.0f32..1.0,
        6 => 1.0f32..1e4,
        1 => 1e4f32..2e7,
    ]
    .prop_map(|x| repr(f64::from(x)))
}

/// A finite loss as `repr(float)` writes real ones: tiny ones with exponents, negative
/// ones, integer-valued ones, short decimals, any f64.
fn repr_shaped() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<f64>().prop_filter("finite", |x| x.is_finite()).prop_map(repr),
        3 => (1e-12f64..1e-4).prop_map(repr),
        2 => (-64i32..64).prop_map(|k| repr(f64::from(k) / 16.0)),
        2 => (-1000i32..1000).prop_map(|k| repr(f64::from(k))),
        2 => (1u32..10, 1i32..12).prop_map(|(m, e)| repr(f64::from(m) * 10f64.powi(-e))),
        2 => (-1e4f32..0.0).prop_map(|x| repr(f64::from(x))),
        2 => loss(),
    ]
}

/// An element that is not a loss as the suite writes it: any other number or token,
/// or something that is not valid there, most of them close to a plain float.
fn odd_element() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => any::<f32>().prop_map(|x| repr(f64::from(x))),
        2 => any::<f64>().prop_map(repr),
        1 => (-1e3f64..0.0).prop_map(repr),
        1 => any::<i64>().prop_map(|i| i.to_string()),
        2 => prop::sample::select(vec![
            "NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1E+5", "1e-05", "0.0", "-0.0",
            "0", "-0", "1.5e3", "2.5E-3", "9999999.5", "12345678.5", "1234567.125",
        ])
        .prop_map(str::to_owned),
        // Exponents around the 10^308 below which a literal is finite unconverted.
        2 => prop::sample::select(OVERFLOW_EDGE.to_vec())
        .prop_map(str::to_owned),
        // Any digits, dots and signs: leading zeros, `1.`, `.5`, `--1`, `1..5`…
        2 => "[-0-9.]{1,24}",
        // Literals around the 23 bytes the fast path takes, and integer parts beyond
        // the 300 digits past which an int may overflow to infinity.
        1 => "[1-9][0-9]{0,9}\\.[0-9]{10,16}",
        1 => (295usize..320).prop_map(|n| format!("9{}.5", "9".repeat(n - 1))),
        3 => prop::sample::select(vec![
            "007.5", "01.5", "00", "1..5", "--1", "-", "1.", ".5", ".40067997574806213", "-.5",
            "0.5.5", "1.5e", "1.5E+", "1.e5", "1234567.", "1234567.e5", "12345678.", "0x1", "+1",
            "NaNx", "Infinit", "-NaN", "\"0.5\"", "[0.5]", "[]", "{}", "null", "true",
            "1.5 2.5", "0.5,", ",0.5", "",
        ])
        .prop_map(str::to_owned),
        // A loss with a character that is not ASCII in it.
        1 => (loss(), any::<prop::sample::Index>(), prop::sample::select(vec!["\u{80}", "\u{b9}", "é", "\u{ff}", "\u{fffd}"]))
            .prop_map(|(mut x, at, c)| {
                x.replace_range(at.index(x.len())..=at.index(x.len()), c);
                x
            }),
    ]
}

/// Literals on both sides of f64's largest value (1.7976931348623157e308; halfway to
/// the next, 1.797693134862315807…e308, rounds to infinity), with the decimal point and
/// the exponent traded against each other, and far below.
const OVERFLOW_EDGE: &[&str] = &[
    "1e308",
    "-1e308",
    "1e309",
    "1E+308",
    "1.7976931348623157e308",
    "1.7976931348623158e308",
    "1.7976931348623159e308",
    "-1.7976931348623159e308",
    "17.976931348623157e307",
    "0.17976931348623157e309",
    "0.5e309",
    "0.05e309",
    "99e307",
    "9.9e307",
    "123e306",
    "0.0000001e315",
    "0e999",
    "0.0e400",
    "1e-400",
    "-2.5e-320",
    "1e00308",
    "1e+0000309",
];

/// Each literal of [`OVERFLOW_EDGE`], alone and after plain losses: the skip's finiteness
/// is the full parser's (Rust's `str::parse`, Python's `float()`), wherever the exponent
/// takes the value.
#[test]
fn literals_at_the_edge_of_overflow_are_told_exactly() {
    for literal in OVERFLOW_EDGE {
        let finite = literal.parse::<f64>().unwrap().is_finite();
        for before in ["", "0.5,\n        ", "0.25,\n        1.5,\n        "] {
            let text = format!("[\n        {before}{literal}\n    ],\n    \"{TAIL}\": 1\n}}\n");
            check(text.as_bytes()).unwrap_or_else(|e| panic!("{literal}: {e}"));
            let (summary, _, _) = outcome(text.as_bytes(), false);
            let first = summary
                .flatten()
                .and_then(|(_, first)| first)
                .map(|(i, _)| i);
            let index = before.matches(',').count();
            assert_eq!(first, (!finite).then_some(index), "{literal}");
        }
    }
}

/// One element: mostly a loss, now and then an odd one.
fn element() -> impl Strategy<Value = String> {
    prop_oneof![
        60 => loss(),
        1 => odd_element(),
    ]
}

/// What goes between two elements: Python's `,` + newline + indentation, or other
/// white space, no comma, or two; `odd` in a thousand of them are not Python's.
fn separator(indent: String, odd: u32) -> impl Strategy<Value = String> {
    prop_oneof![
        1000 - odd => Just(format!(",\n{indent}")),
        odd => prop::sample::select(vec![
            ", ".to_owned(),
            ",".to_owned(),
            format!(",\n{indent} "),
            format!(",\n{}", &indent[1..]),
            format!(",\r\n{indent}"),
            format!(",\n\t{indent}"),
            format!("\n{indent}"),
            format!(" ,\n{indent}"),
            format!(",,\n{indent}"),
        ]),
    ]
}

/// A list as `json.dumps(indent=4)` writes it at some depth (the fast path takes the
/// depths of 8 and 12 spaces), now and then with other separators, a trailing comma or
/// no `]`, followed by the rest of an entry or not.
fn list_text() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![0usize, 1, 1, 1, 2, 3]),
        prop::sample::select(vec![1u32, 3, 100]),
    )
        .prop_flat_map(|(level, odd)| {
            let (outer, inner) = (" ".repeat(4 * level), " ".repeat(4 * level + 4));
            (
                prop::collection::vec((element(), separator(inner.clone(), odd)), 0..120),
                Just(inner),
                prop_oneof![
                    20 => Just(format!("\n{outer}]")),
                    1 => Just(format!(",\n{outer}]")),
                    1 => Just(format!("\n{outer} ]")),
                    1 => Just("]".to_owned()),
                    1 => Just(String::new()),
                ],
                prop::sample::select(vec![
                    "",
                    "\n}",
                    ",\n    \"x\": 1\n}\n",
                    ",\n    \"name\": \"the rest of an entry, for a whole window\"\n}\n",
                    "]]",
                ]),
            )
        })
        .prop_map(|(items, inner, close, after)| {
            let mut text = String::from("[");
            for (i, (item, sep)) in items.iter().enumerate() {
                if i == 0 {
                    text.push('\n');
                    text.push_str(&inner);
                } else {
                    text.push_str(sep);
                }
                text.push_str(item);
            }
            text + &close + after
        })
}

/// Up to three byte edits (replace, insert, delete, truncate) past the `[`, with bytes
/// that matter to numbers and separators, and bytes that are not ASCII (whose carries
/// the eight-byte digit test must survive).
fn damaged(text: String) -> impl Strategy<Value = Vec<u8>> {
    let edit = (
        any::<prop::sample::Index>(),
        0..4u8,
        prop::sample::select(b"0123456789.,-+eE \n\t\r][N\"\x80\xb9\xc3\xff".to_vec()),
    );
    (prop::collection::vec(edit, 0..4), 0..3u8).prop_map(move |(edits, damage)| {
        let mut bytes = text.clone().into_bytes();
        if damage == 0 {
            for (at, kind, b) in edits {
                let i = 1 + at.index(bytes.len());
                match kind {
                    0 if i < bytes.len() => bytes[i] = b,
                    1 => bytes.insert(i.min(bytes.len()), b),
                    2 if i < bytes.len() => {
                        bytes.remove(i);
                    }
                    3 => bytes.truncate(i),
                    _ => {}
                }
            }
        }
        bytes
    })
}

/// A key long enough that a list's last element has the fast path's whole window.
const TAIL: &str = "the rest of an entry, for a whole window";

/// A list skip's outcome, with floats compared bit for bit (NaN included).
type Outcome = (Option<Option<(usize, Option<(usize, u64)>)>>, usize, usize);

fn outcome(text: &[u8], reference: bool) -> Outcome {
    let (skipped, pos, depth) = Parser::new(text).skip_list_outcome(reference);
    let skipped = skipped.map(|s| match s {
        Skipped::Numbers {
            len,
            first_nonfinite,
        } => Some((len, first_nonfinite.map(|(i, f)| (i, f.to_bits())))),
        Skipped::Other => None,
    });
    match skipped {
        // On failure the caller rereads from the start: only the failure counts.
        None => (None, 0, 0),
        some => (some, pos, depth),
    }
}

/// What the full parser says of the list: its end and summary, or that it fails.
fn built(text: &[u8]) -> Outcome {
    let mut parser = Parser::new(text);
    let Ok(Value::List(items)) = parser.value() else {
        return (None, 0, 0);
    };
    let numbers: Option<Vec<f64>> = items.iter().map(Value::as_f64).collect();
    let summary = numbers.map(|xs| {
        let first = xs.iter().position(|x| !x.is_finite());
        (xs.len(), first.map(|i| (i, xs[i].to_bits())))
    });
    (Some(summary), parser.pos, 0)
}

/// A list read as numbers, bits and end: by [`Parser::number_list`] (`values_of`), or
/// as the full parser's list and `as_f64` of each element; `None` when it is not a
/// list of numbers.
type Numbers = Option<(Vec<u64>, usize)>;

fn values_of(text: &[u8]) -> Numbers {
    let mut parser = Parser::new(text);
    let values = parser.number_list()?;
    Some((values.iter().map(|f| f.to_bits()).collect(), parser.pos))
}

fn built_values(text: &[u8]) -> Numbers {
    let mut parser = Parser::new(text);
    let Ok(Value::List(items)) = parser.value() else {
        return None;
    };
    let values: Option<Vec<f64>> = items.iter().map(Value::as_f64).collect();
    Some((values?.iter().map(|f| f.to_bits()).collect(), parser.pos))
}

fn check(text: &[u8]) -> Result<(), TestCaseError> {
    let fast = outcome(text, false);
    let show = || String::from_utf8_lossy(text).into_owned();
    prop_assert_eq!(&fast, &outcome(text, true), "{}", show());
    prop_assert_eq!(&fast, &built(text), "{}", show());
    // The validator's read of the values takes the same fast path.
    prop_assert_eq!(values_of(text), built_values(text), "{}", show());
    Ok(())
}

proptest! {
    // 3,000 cases at least (more with PROPTEST_CASES).
    #![proptest_config(ProptestConfig::with_cases(ProptestConfig::default().cases.max(3000)))]

    /// Lists as the suite writes them, varied and damaged: the fast path agrees with the
    /// careful loop and with the full parser.
    #[test]
    fn fast_skip_agrees_with_careful_skip(text in list_text().prop_flat_map(damaged)) {
        check(&text)?;
    }

    /// A loss curve with one odd element somewhere, which the fast path must stop at.
    #[test]
    fn fast_skip_stops_where_it_must(
        xs in prop::collection::vec(loss(), 0..80),
        odd in odd_element(),
        at in any::<prop::sample::Index>(),
        close in prop::sample::select(vec!["\n    ]", "\n    ],", ",\n    ]", " ]", "]", ""]),
    ) {
        let mut items = xs;
        items.insert(at.index(items.len() + 1), odd);
        let text = format!("[\n        {}{close}\n    \"{TAIL}\": 1\n}}\n", items.join(",\n        "));
        check(text.as_bytes())?;
    }

    /// Real losses as Python's `repr` writes them, undamaged: exponents
    /// (`3.2247762793424783e-10`, `1e-05`), signs (`-0.0625`), integer-valued floats
    /// (`12.0`), any f64: the fast path agrees with the careful loop and the full parser,
    /// bit for bit, wherever it hands over.
    #[test]
    fn fast_skip_agrees_on_repr_shaped_losses(xs in prop::collection::vec(repr_shaped(), 0..200)) {
        let text = format!("[\n        {}\n    ],\n    \"{TAIL}\": 1\n}}\n", xs.join(",\n        "));
        check(text.as_bytes())?;
        prop_assert_eq!(outcome(text.as_bytes(), false).0, Some(Some((xs.len(), None))));
    }

    /// The loss curves themselves, undamaged, in the layout the fast path is for.
    #[test]
    fn fast_skip_agrees_on_loss_curves(xs in prop::collection::vec(0.0f32..100.0, 0..200)) {
        let items: Vec<String> = xs.iter().map(|&x| repr(f64::from(x))).collect();
        let text = format!("[\n        {}\n    ],\n    \"{TAIL}\": 1\n}}\n", items.join(",\n        "));
        check(text.as_bytes())?;
        prop_assert_eq!(outcome(text.as_bytes(), false).0, Some(Some((xs.len(), None))));
    }
}

/// The bytes that matter to the whole-block pass (its classes, and what ends a float or
/// a list), put at, inserted at, or deleted from every place of a curve long enough for
/// it (three blocks and more), with integer parts of every length it takes and
/// elements across the blocks' bounds.
#[test]
fn every_class_anywhere_in_whole_blocks() {
    let items = [
        "0.40067997574806213",
        "1234567.5",
        "12345678901.25",
        "0.5",
        "7.0",
        "10.000001",
        "0.001953125",
        "99.5",
        "3.14",
        "100000.5",
        "0.25",
        "2.0",
        "0.3981657922267914",
    ];
    let base = format!(
        "[\n        {}\n    ],\n    \"{TAIL}\": 1\n}}",
        items.join(",\n        ")
    );
    let base = base.as_bytes();
    for at in 1..base.len() {
        let mut deleted = base.to_vec();
        deleted.remove(at);
        check(&deleted).unwrap_or_else(|e| panic!("byte {at} deleted: {e}"));
        for &b in b"0123456789.,\n -+eE]\t\r\x80\xb9\xff" {
            let mut put = base.to_vec();
            put[at] = b;
            let mut inserted = base.to_vec();
            inserted.insert(at, b);
            for text in [put, inserted] {
                check(&text).unwrap_or_else(|e| panic!("byte {b:#04x} at {at}: {e}"));
            }
        }
    }
}

/// Every byte value put at, inserted at, or deleted from every place of plain floats
/// (ending in each of their three words), their separators and the list's end.
#[test]
fn every_byte_anywhere_in_a_float() {
    let base = concat!(
        "[\n        0.40067997574806213,\n        1234567.5,\n        1234.5678901234567,",
        "\n        7.5\n    ],\n    \"name\": \"the fast path needs 40 bytes after an element\"\n}",
    );
    let edits = |at: usize, b: u8| {
        let mut put = base.as_bytes().to_vec();
        put[at] = b;
        let mut inserted = base.as_bytes().to_vec();
        inserted.insert(at, b);
        [put, inserted]
    };
    for at in 1..base.len() {
        let mut deleted = base.as_bytes().to_vec();
        deleted.remove(at);
        check(&deleted).unwrap_or_else(|e| panic!("byte {at} deleted: {e}"));
        for b in 0..=255u8 {
            for text in edits(at, b) {
                check(&text).unwrap_or_else(|e| panic!("byte {b:#04x} at {at}: {e}"));
            }
        }
    }
}
