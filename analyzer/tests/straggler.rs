//! The straggler check on constructed submissions, and Welch's test by hand.

use mlbench_analyzer::bootstrap::Xoshiro256;
use mlbench_analyzer::samples::Sample;
use mlbench_analyzer::straggler::welch_below;
use mlbench_analyzer::{SampleSet, StragglerOptions, stragglers};
use mlbench_results::report::InputSummary;

/// A submission from (bench, device, values of its runs).
fn set(rows: &[(String, u32, Vec<f64>)]) -> SampleSet {
    let mut samples = Vec::new();
    for (bench, device, values) in rows {
        for (run, v) in values.iter().enumerate() {
            samples.push(Sample {
                bench: Some(bench.clone()),
                run: run as u32,
                device: Some(*device),
                host: None,
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
    let mut devices: Vec<u32> = rows.iter().map(|r| r.1).collect();
    devices.sort_unstable();
    devices.dedup();
    SampleSet {
        suite: "fast".into(),
        runs: vec![],
        summary: InputSummary {
            layout: "legacy".into(),
            files: 1,
            entries: samples.len(),
            runs: 0,
            gpus: devices.len(),
            excluded: 0,
            smoke: 0,
            synthetic_data: 0,
            not_selected: vec![],
            profiles: vec![],
            runs_told_apart: String::new(),
        },
        run_split: None,
        devices,
        hosts: vec![],
        models: vec![],
        gpu_labels: vec![],
        samples,
        files: vec!["f.json".into()],
        conflicts: vec![],
        runtimes: Default::default(),
    }
}

/// 8 GPUs × `benches` benches × 10 runs, each run uniform within ±`noise` of 100 ×
/// the GPU's speed on that bench.
fn machine(benches: usize, noise: f64, seed: u64, speed: impl Fn(u32, usize) -> f64) -> SampleSet {
    let mut g = Xoshiro256::seed_from_u64(seed);
    let mut rows = Vec::new();
    for b in 0..benches {
        for d in 0..8 {
            let values = (0..10)
                .map(|_| {
                    let u = (g.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                    100.0 * speed(d, b) * (1.0 + noise * (2.0 * u - 1.0))
                })
                .collect();
            rows.push((format!("bench{b:02}"), d, values));
        }
    }
    set(&rows)
}

#[test]
fn welch_by_hand() {
    // x = 1, 2, 3: mean 2, s² = 1; y = 4, 5, 6: mean 5, s² = 1.
    // se² = 1/3 + 1/3 = 2/3; t = (2 − 5) ÷ √(2/3) = −3.6742346142;
    // df = (2/3)² ÷ ((1/3)²/2 + (1/3)²/2) = (4/9) ÷ (1/9) = 4;
    // with 4 degrees of freedom F(t) = ½ + ¾·u·(1 − u²/3), u = t ÷ √(4 + t²):
    // p = 0.0106558206.
    let (t, df, p) = welch_below(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
    let t = t.expect("t");
    assert!((t - (-3.674_234_614_174_767)).abs() < 1e-12, "{t}");
    assert!((df.expect("df") - 4.0).abs() < 1e-12);
    let u = t / (4.0 + t * t).sqrt();
    let by_hand = 0.5 + 0.75 * u * (1.0 - u * u / 3.0);
    assert!((by_hand - 0.010_655_820_564).abs() < 1e-11);
    assert!((p - by_hand).abs() < 1e-9, "{p} vs {by_hand}");
}

#[test]
fn the_tiny_case_through_the_check() {
    // GPU 0 against GPU 1 is the case above: p = 0.0107, not below 0.01; deficit
    // 1 − 2/5 = 0.6. GPU 1 against GPU 0: t = +3.67, p = 0.989.
    let s = set(&[
        ("x".into(), 0, vec![1.0, 2.0, 3.0]),
        ("x".into(), 1, vec![4.0, 5.0, 6.0]),
    ]);
    let out = stragglers(&s, &StragglerOptions::default());
    assert_eq!(out.len(), 2);
    let b = &out[0].benches[0];
    assert_eq!((b.n, b.peers_n), (3, 3));
    assert!((b.deficit - 0.6).abs() < 1e-15);
    assert!(!b.below);
    assert_eq!((out[0].tested, out[0].below, out[0].flagged), (1, 0, false));
    assert!((out[1].benches[0].p - (1.0 - 0.010_655_820_564)).abs() < 1e-9);
    // At 5 % it is below, on its only bench: flagged.
    let loose = StragglerOptions {
        alpha: 0.05,
        ..StragglerOptions::default()
    };
    let out = stragglers(&s, &loose);
    assert_eq!((out[0].below, out[0].flagged), (1, true));
    assert!((out[0].median_deficit - 0.6).abs() < 1e-15);
}

#[test]
fn one_slow_gpu_among_eight_is_flagged() {
    // GPU 5 runs 8 % slow on every bench; run noise ±3 %.
    let s = machine(19, 0.03, 1, |d, _| if d == 5 { 0.92 } else { 1.0 });
    let out = stragglers(&s, &StragglerOptions::default());
    assert_eq!(out.len(), 8);
    let flagged: Vec<u32> = out.iter().filter(|g| g.flagged).map(|g| g.device).collect();
    assert_eq!(flagged, [5]);
    let slow = &out[5];
    assert_eq!(slow.tested, 19);
    assert!(slow.below >= 18, "{}", slow.below);
    // Its deficit against peers at 100: about 8 %.
    assert!(
        (slow.median_deficit - 0.08).abs() < 0.01,
        "{}",
        slow.median_deficit
    );
}

#[test]
fn noise_alone_flags_nobody() {
    for seed in 0..20 {
        let s = machine(19, 0.05, seed, |_, _| 1.0);
        let out = stragglers(&s, &StragglerOptions::default());
        assert!(out.iter().all(|g| !g.flagged), "seed {seed}: {out:?}");
        // At p < 0.01 the tests that come out "below" by chance are rare.
        let below: usize = out.iter().map(|g| g.below).sum();
        assert!(below <= 5, "seed {seed}: {below} of 152");
    }
}

#[test]
fn slow_on_half_the_benches_or_fewer_is_not_flagged() {
    let slow_on = |k: usize| {
        let s = machine(10, 0.02, 3, |d, b| if d == 2 && b < k { 0.85 } else { 1.0 });
        let out = stragglers(&s, &StragglerOptions::default());
        (out[2].below, out[2].flagged)
    };
    assert_eq!(slow_on(5), (5, false));
    assert_eq!(slow_on(6), (6, true));
}

#[test]
fn a_small_consistent_gap_is_significant_but_not_a_straggler() {
    // GPU 3 is 0.5 % slow everywhere, with ±0.1 % noise: every test is significant, but
    // the gap is under the 1 % floor.
    let s = machine(8, 0.001, 4, |d, _| if d == 3 { 0.995 } else { 1.0 });
    let out = stragglers(&s, &StragglerOptions::default());
    assert!(out[3].benches.iter().all(|b| b.p < 0.01));
    assert!(!out[3].flagged);
    let no_floor = StragglerOptions {
        min_deficit: 0.0,
        ..StragglerOptions::default()
    };
    assert!(stragglers(&s, &no_floor)[3].flagged);
}

#[test]
fn too_few_runs_are_not_tested_and_no_spread_is_certain() {
    let s = set(&[
        ("x".into(), 0, vec![10.0, 10.0]),
        ("x".into(), 1, vec![20.0, 20.0, 20.0]),
        ("x".into(), 2, vec![20.0, 20.0, 20.0]),
        ("y".into(), 0, vec![5.0, 5.0, 5.0]),
        ("y".into(), 1, vec![9.0, 9.0, 9.0]),
    ]);
    let out = stragglers(&s, &StragglerOptions::default());
    // GPU 0 on x has 2 runs: untested. On y, no spread on either side: p = 0, below.
    let gpu0 = &out[0];
    assert_eq!(gpu0.tested, 1);
    let y = &gpu0.benches[0];
    assert_eq!(
        (y.bench.as_str(), y.t, y.df, y.p, y.below),
        ("y", None, None, 0.0, true)
    );
    assert!(gpu0.flagged);
    // GPU 1 on x against GPU 2 (GPU 0's two runs count among its peers): 20 vs
    // 10, 10, 20, 20, 20 — above, p near 1.
    let gpu1_x = &out[1].benches[0];
    assert_eq!((gpu1_x.bench.as_str(), gpu1_x.peers_n), ("x", 5));
    assert!(gpu1_x.p > 0.9);
}

/// Seven GPUs of different means, spreads and run counts: each GPU's peer statistics
/// (pooled from the GPUs before it and after it) are those of the other GPUs' values put
/// together by hand, and so are t, df and p (Welch's test on the raw values).
#[test]
fn each_gpus_peers_are_the_other_gpus_pooled() {
    let mut rng = Xoshiro256::seed_from_u64(11);
    let rows: Vec<(String, u32, Vec<f64>)> = (0..7u32)
        .map(|gpu| {
            let runs = 3 + (gpu as usize % 4);
            let values = (0..runs)
                .map(|_| {
                    100.0
                        + f64::from(gpu) * 3.0
                        + (rng.next_u64() >> 11) as f64 / (1u64 << 50) as f64
                })
                .collect();
            ("vae".to_owned(), gpu, values)
        })
        .collect();
    let out = stragglers(&set(&rows), &StragglerOptions::default());
    assert_eq!(out.len(), 7);
    for (gpu, (_, _, own)) in out.iter().zip(&rows) {
        let others: Vec<f64> = rows
            .iter()
            .filter(|r| r.1 != gpu.device)
            .flat_map(|r| r.2.iter().copied())
            .collect();
        let b = &gpu.benches[0];
        let peers_mean = others.iter().sum::<f64>() / others.len() as f64;
        assert_eq!((b.n, b.peers_n), (own.len(), others.len()));
        assert!(
            (b.peers_mean - peers_mean).abs() < 1e-12 * peers_mean,
            "GPU {}",
            gpu.device
        );
        let (t, df, p) = welch_below(own, &others);
        let close = |a: Option<f64>, b: Option<f64>| (a.unwrap() - b.unwrap()).abs() < 1e-9;
        assert!(
            close(b.t, t) && close(b.df, df),
            "GPU {}: {:?} {:?}",
            gpu.device,
            (b.t, b.df),
            (t, df)
        );
        assert!(
            (b.p - p).abs() < 1e-12,
            "GPU {}: {} against {p}",
            gpu.device,
            b.p
        );
    }
}
