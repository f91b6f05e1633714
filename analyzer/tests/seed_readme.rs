//! The seed README's `mlbench-report --name fast --gpu-model RTX` table, reproduced.
//!
//! For each row a 4-run submission is built whose trimmed mean and sample sd are the
//! row's `result` and `sd`: runs R − e, R, R, R + e with e = sd·√(3/2) (trimmed mean R;
//! variance (e² + e²)/3 = sd²). The classic report over it must give the README's sd%,
//! diff and statistics (+0.2129 performance, 1.1458% deviation quantile).

mod common;

use common::load_legacy;
use mlbench_analyzer::{Report, ReportOptions, report_of};
use mlbench_schema::{Object, ReportEntry, Scoring, TargetTable, Value};

/// bench, result, sd, sd%, diff — as printed in the seed README.
const TABLE: &[(&str, f64, f64, f64, f64)] = &[
    ("atari", 7.424253, 0.055735, 0.007507, 0.372320),
    ("cart", 2195.248475, 6.457116, 0.002941, 0.097624),
    ("convnet", 175.973774, 0.191682, 0.001089, -0.015586),
    (
        "convnet_distributed",
        756.841070,
        60.333975,
        0.079718,
        1.741185,
    ),
    (
        "convnet_distributed_fp16",
        785.470579,
        43.330802,
        0.055165,
        1.377260,
    ),
    ("convnet_fp16", 329.347550, 0.770485, 0.002339, 0.254371),
    ("dcgan_all", 274.608760, 1.361280, 0.004957, 0.971489),
    ("dcgan", 147.794385, 0.632454, 0.004279, 0.279384),
    ("fast_style", 146.285007, 0.218744, 0.001495, -0.066762),
    ("loader", 1188.224303, 62.070805, 0.052238, -0.009813),
    ("recom", 20802.705368, 103.476919, 0.004974, 0.007386),
    ("reso", 178.694817, 0.920870, 0.005153, 0.291708),
    ("ssd", 49.263719, 0.203476, 0.004130, -0.178390),
    ("toy_lstm", 1.254635, 0.007228, 0.005761, -0.526553),
    ("toy_reg", 215482.487073, 3745.776792, 0.017383, -0.415752),
    ("translator", 212.040509, 0.443492, 0.002092, -0.051146),
    ("vae", 5931.232565, 26.450238, 0.004459, -0.256056),
    ("wlm", 1365.497700, 2.910483, 0.002131, -0.052310),
    ("wlmfp16", 4649.460342, 18.698980, 0.004022, 0.225681),
];

fn entry(bench: &str, value: f64) -> ReportEntry {
    let mut item = Object::new();
    item.insert("avg", value);
    let mut o = Object::new();
    o.insert("name", bench);
    o.insert("version", "0123456789");
    o.insert("train_item", Value::Object(item));
    // Fields the classic selection rules look at, as the fast profile sets them.
    o.insert("batch_size", if bench == "loader" { 256i64 } else { 64 });
    o.insert("model", "GRU");
    o.insert("dtype", "float32");
    o.insert(
        "vcd",
        if bench.ends_with("_all") || bench.contains("distributed") {
            "0,1"
        } else {
            "0"
        },
    );
    ReportEntry::new(o)
}

#[test]
fn classic_report_reproduces_the_seed_readme() {
    let files: Vec<(usize, u32, Vec<ReportEntry>)> = (0..4)
        .map(|run| {
            let entries = TABLE
                .iter()
                .map(|(bench, result, sd, _, _)| {
                    let e = sd * 1.5f64.sqrt();
                    entry(bench, [result - e, *result, *result, result + e][run])
                })
                .collect();
            (run, 0, entries)
        })
        .collect();
    let targets = TargetTable::builtin(Scoring::Classic, "RTX").unwrap();
    let options = ReportOptions {
        scoring: Scoring::Classic,
        min_runs: 4,
        price: None,
        expected: None,
    };
    let set = load_legacy(&files, &targets);
    let Report::Classic(r) = report_of(&set, &targets, &options).unwrap() else {
        unreachable!()
    };
    assert_eq!(r.benches.len(), 19);
    for (bench, result, sd, sd_pct, diff) in TABLE {
        let row = r.benches.iter().find(|b| b.bench == *bench).unwrap();
        assert_eq!(row.n, 4);
        assert!(
            (row.result.unwrap() - result).abs() < 1e-9 * result,
            "{bench} result"
        );
        assert!((row.sd.unwrap() - sd).abs() < 1e-9 * result, "{bench} sd");
        // The README prints six decimals.
        assert!((row.sd_pct.unwrap() - sd_pct).abs() < 5e-7, "{bench} sd%");
        assert!((row.diff.unwrap() - diff).abs() < 5e-7, "{bench} diff");
    }
    let s = &r.statistics;
    // "Performance : +0.2129 %" (a fraction printed with %), "Deviation Quantile : +1.1458 %".
    assert!(
        (s.performance.unwrap() - 0.212949).abs() < 5e-7,
        "{:?}",
        s.performance
    );
    assert!(
        (s.deviation_quantile_80.unwrap() - 0.011458).abs() < 5e-7,
        "{:?}",
        s.deviation_quantile_80
    );
    assert!(s.bench_passes && s.passed);
}
