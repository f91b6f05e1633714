//! The fleet view on constructed submissions: hand-computed figures on a tiny fleet, a
//! slow node found, and the false-alarm rate of the node test stated and checked.

use mlbench_analyzer::SampleSet;
use mlbench_analyzer::bootstrap::Xoshiro256;
use mlbench_analyzer::fleet::{FleetOptions, fleet};
use mlbench_analyzer::samples::Sample;
use mlbench_results::report::InputSummary;

/// A submission from (bench, node, gpu, values of its runs).
fn set(rows: &[(&str, u32, u32, Vec<f64>)], nodes: usize) -> SampleSet {
    let mut samples = Vec::new();
    for (bench, node, gpu, values) in rows {
        for (run, v) in values.iter().enumerate() {
            samples.push(Sample {
                bench: Some((*bench).to_owned()),
                run: run as u32,
                device: Some(*gpu),
                host: Some(*node),
                model: None,
                world: Some(1),
                value: Some(*v),
                failure: None,
                conflict: false,
                file: 0,
                entry: samples.len() as u32,
                batch_size: None,
            });
        }
    }
    SampleSet {
        suite: "fast".into(),
        runs: vec![],
        summary: InputSummary {
            layout: "legacy".into(),
            files: 1,
            entries: samples.len(),
            runs: 0,
            gpus: 2,
            excluded: 0,
            smoke: 0,
            synthetic_data: 0,
            not_selected: vec![],
            profiles: vec![],
            runs_told_apart: String::new(),
        },
        run_split: None,
        devices: vec![0, 1],
        hosts: (0..nodes).map(|i| format!("node{i}")).collect(),
        models: vec![],
        gpu_labels: vec![],
        samples,
        files: vec!["f.json".into()],
        conflicts: vec![],
        runtimes: Default::default(),
    }
}

#[test]
fn a_tiny_fleet_by_hand() {
    // bench a: node means 10, 12, 9 → median 10 → ratios 1, 1.2, 0.9.
    // bench b: 100, 100, 80 → median 100 → ratios 1, 1, 0.8.
    // relative = geometric mean: 1, √1.2 = 1.095445, √0.72 = 0.848528.
    let rows = [
        ("a", 0, 0, vec![10.0, 10.0]),
        ("a", 1, 0, vec![12.0, 12.0]),
        ("a", 2, 0, vec![9.0, 9.0]),
        ("b", 0, 0, vec![100.0, 100.0]),
        ("b", 1, 0, vec![100.0, 100.0]),
        ("b", 2, 0, vec![80.0, 80.0]),
    ];
    let f = fleet(&set(&rows, 3), &FleetOptions::default()).unwrap();
    let rel: Vec<f64> = f.nodes.iter().map(|n| n.relative).collect();
    let expected = [1.0, 1.2f64.sqrt(), 0.72f64.sqrt()];
    for (got, want) in rel.iter().zip(expected) {
        assert!((got - want).abs() < 1e-12, "{rel:?}");
    }
    // Identical runs: no resample differs, every interval is its point.
    for n in &f.nodes {
        assert!((n.ci_low - n.relative).abs() < 1e-12 && (n.ci_high - n.relative).abs() < 1e-12);
        assert_eq!((n.gpus, n.runs), (1, 2));
        // Two runs per node: fewer than the test's three, nothing tested, nothing flagged.
        assert_eq!((n.tested, n.flagged), (0, false));
    }
    // p10 of 0.848528, 1, 1.095445 at position 0.2: 0.848528 + 0.2 × (1 − 0.848528).
    let p10 = 0.72f64.sqrt() + 0.2 * (1.0 - 0.72f64.sqrt());
    assert!((f.p10 - p10).abs() < 1e-12, "{}", f.p10);
    assert!((f.within_5pct - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(f.nodes[2].node, "node2");
}

#[test]
fn one_node_is_no_fleet() {
    let rows = [
        ("a", 0, 0, vec![1.0, 2.0, 3.0]),
        ("a", 0, 1, vec![1.0, 2.0, 3.0]),
    ];
    assert!(fleet(&set(&rows, 1), &FleetOptions::default()).is_none());
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut Xoshiro256) -> f64 {
    let u = |rng: &mut Xoshiro256| ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let (u1, u2) = (u(rng), u(rng));
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// 4 nodes × 2 GPUs × 5 runs × 19 benches; node k's throughput is `factors[k]` × the
/// bench's, with 0.5 % noise per sample.
fn generated(seed: u64, factors: [f64; 4]) -> SampleSet {
    let mut rng = Xoshiro256::seed_from_u64(seed);
    let benches: Vec<String> = (0..19).map(|b| format!("bench{b:02}")).collect();
    let mut rows = Vec::new();
    for (b, bench) in benches.iter().enumerate() {
        let base = 100.0 * (1.0 + b as f64);
        for (node, factor) in factors.iter().enumerate() {
            for gpu in 0..2 {
                let values = (0..5)
                    .map(|_| base * factor * (1.0 + 0.005 * normal(&mut rng)))
                    .collect();
                rows.push((bench.as_str(), node as u32, gpu, values));
            }
        }
    }
    let rows: Vec<(&str, u32, u32, Vec<f64>)> = rows;
    set(&rows, 4)
}

#[test]
fn a_node_six_percent_slower_is_flagged_and_its_interval_excludes_one() {
    let f = fleet(
        &generated(7, [1.0, 1.0, 1.0, 0.94]),
        &FleetOptions::default(),
    )
    .unwrap();
    let flagged: Vec<&str> = f
        .nodes
        .iter()
        .filter(|n| n.flagged)
        .map(|n| n.node.as_str())
        .collect();
    assert_eq!(flagged, ["node3"]);
    let slow = &f.nodes[3];
    assert!(slow.ci_high < 1.0, "{slow:?}");
    assert!((slow.relative - 0.94).abs() < 0.01, "{slow:?}");
    assert_eq!((slow.gpus, slow.runs, slow.tested), (2, 5, 19));
    // The three others are the median; 3 of 4 nodes within 5 %.
    assert!((f.within_5pct - 0.75).abs() < 1e-12);
    assert!(f.p10 < 0.97, "{}", f.p10);
}

/// The stated false-alarm rate: with no slow node, no node is flagged in at least 95 of
/// 100 submissions (each bench's test at p < 0.01, a node flagged only when below on
/// more than half of its 19 benches).
#[test]
fn without_a_slow_node_nothing_is_flagged_in_95_of_100_seeds() {
    let options = FleetOptions {
        resamples: 10,
        ..FleetOptions::default()
    };
    let alarms = (0..100)
        .filter(|&seed| {
            let f = fleet(&generated(seed, [1.0; 4]), &options).unwrap();
            f.nodes.iter().any(|n| n.flagged)
        })
        .count();
    assert!(alarms <= 5, "{alarms} of 100 fleets had a node flagged");
}
