//! A report file of any bytes: every reading of it (full, lean, values; whole, and as a
//! stream through windows of a size the input picks) ends without a panic, and the
//! stream gives what the whole text gives.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlbench_schema::reader::{Content, Reading, parse_each_of, parse_report, parse_stream_in};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let _ = parse_report("f.json", text);
    for reading in [Reading::Lean, Reading::Values] {
        let mut whole = Vec::new();
        let a = parse_each_of("f", Content::Bytes(text), reading, |i, e| {
            whole.push(format!("{i} {e:?}"))
        });
        let mut streamed = Vec::new();
        let mut input = text;
        let chunk = 1 + usize::from(pick % 64);
        let b = parse_stream_in("f", &mut input, reading, chunk, 1 << 30, |i, e| {
            streamed.push(format!("{i} {e:?}"))
        });
        assert_eq!(a.container, b.container);
        assert_eq!(a.errors, b.errors);
        assert_eq!(whole, streamed);
    }
});
