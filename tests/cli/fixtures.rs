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
