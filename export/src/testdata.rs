//! Small models for the exporters' snapshot tests: figures chosen by hand, awkward
//! cells included (a comma and a quote in a name, a missing figure, a failed bench).

use mlbench_results::grid::{
    Attribution, AttributionTerm, Cell, GRID_SCHEMA_VERSION, Grid, VendorRow,
};
use mlbench_results::report::*;
use mlbench_results::validation::{
    Finding, Rule, RuleList, Severity, Summary, Validation, VersionNote,
};
use mlbench_results::{Provenance, ValidationDoc};
use mlbench_schema::Track;
use std::collections::BTreeMap;

fn context(expected: &[&str]) -> ReportContext {
    ReportContext {
        run_names: vec!["output1".into(), "output2".into(), "output3".into()],
        runs_from: "folders",
        expected_from: "targets",
        jobs_file: None,
        expected: expected.iter().map(|b| (*b).to_owned()).collect(),
        scaling: Vec::new(),
    }
}

/// A classic report that passes: two benches, one with a comma and a quote in its name.
pub fn classic_doc() -> ReportDoc {
    let report = Report::Classic(ClassicReport {
        scoring: "classic",
        name: "fast".into(),
        gpu_model: "RTX".into(),
        runs: 3,
        gpus: 2,
        benches: vec![
            ClassicBench {
                bench: "cart".into(),
                n: 3,
                target: Some(2000.0),
                result: Some(2021.5),
                sd: Some(6.0),
                sd_pct: Some(0.003),
                diff: Some(0.01075),
            },
            ClassicBench {
                bench: "odd, \"name\"".into(),
                n: 3,
                target: Some(5.0),
                result: Some(5.47),
                sd: Some(0.023),
                sd_pct: Some(0.0042),
                diff: Some(0.094),
            },
        ],
        statistics: ClassicStatistics {
            bench_passes: true,
            benches_usable: 2,
            benches_expected: 2,
            deviation_quantile_80: Some(0.00396),
            deviation_limit: 0.05,
            deviation_pass: true,
            performance: Some(0.052375),
            performance_pass: true,
            passed: true,
        },
        failures: Vec::new(),
        conflicts: Vec::new(),
        context: context(&["cart", "odd, \"name\""]),
    });
    let mut doc = ReportDoc::new(report);
    doc.notes =
        vec!["read 6 files of suite `fast` (per-GPU streams): 3 runs, 2 GPUs, 12 entries".into()];
    doc
}

/// A score report that fails: a NaN-loss failure, a bench without target, intervals
/// for one bench of two, a world-size breakdown and per-GPU tables.
pub fn score_doc() -> ReportDoc {
    let mut ctx = context(&["cart", "scaling"]);
    ctx.scaling = vec![
        WorldSize {
            bench: "scaling".into(),
            devices: 1,
            n: 3,
            mean: Some(100.0),
            sd: Some(1.0),
        },
        WorldSize {
            bench: "scaling".into(),
            devices: 2,
            n: 3,
            mean: Some(190.0),
            sd: None,
        },
    ];
    let row = |pairs: &[(&str, f64)]| -> BTreeMap<String, f64> {
        pairs.iter().map(|(d, v)| ((*d).to_owned(), *v)).collect()
    };
    let table = |a: f64, b: f64| -> PerGpuTable {
        [("cart".to_owned(), row(&[("0", a), ("1", b)]))].into()
    };
    let report = Report::Score(ScoreReport {
        scoring: "score",
        name: "fast".into(),
        gpu_model: "RTX".into(),
        runs: 3,
        gpus: 2,
        benches: vec![
            ScoreBench {
                bench: "cart".into(),
                n: 5,
                mean: Some(1900.0),
                sd: Some(19.0),
                sd_pct: Some(0.01),
                target: Some(2000.0),
                perf: Some(0.95),
                perf_target: Some(0.9),
                sd_target: Some(0.05),
                perf_pass: true,
                sd_pass: true,
            },
            ScoreBench {
                bench: "scaling".into(),
                n: 6,
                mean: Some(145.0),
                sd: Some(49.3),
                sd_pct: Some(0.34),
                target: None,
                perf: None,
                perf_target: None,
                sd_target: Some(0.05),
                perf_pass: false,
                sd_pass: false,
            },
        ],
        failures: vec![Failure {
            file: "output3/fast.0.json".into(),
            entry: 1,
            bench: Some("cart".into()),
            reason: "nan_loss",
        }],
        statistics: ScoreStatistics {
            failures: 1,
            total: 12,
            failure_ratio: 1.0 / 12.0,
            bf: 0,
            failures_pass: false,
            pm: 0.5,
            st: 0.5,
            pg: Some(0.95),
            score: Some(0.0),
            price: Some(1500.0),
            rpp: None,
            passed: false,
        },
        per_gpu: PerGpu {
            mean: table(1.0, 0.98),
            min: table(0.99, 0.97),
            max: table(1.0, 1.0),
        },
        conflicts: Vec::new(),
        context: ctx,
    });
    let mut doc = ReportDoc::new(report);
    doc.ci = Some(Intervals {
        by_bench: [(
            "cart".to_owned(),
            ResultCi {
                statistic: SCORE_STATISTIC.into(),
                n: 5,
                result: Some(1900.0),
                ci: Some([1885.5, 1914.25]),
                why: None,
            },
        )]
        .into(),
        resampling: "runs resampled within GPUs".into(),
        resamples: 2000,
        seed: 2019,
        level: 0.95,
    });
    doc.stragglers = vec![Straggler {
        device: 1,
        gpu: "1".into(),
        tested: 1,
        below: 1,
        median_deficit: 0.02,
        flagged: true,
        benches: vec![StragglerBench {
            bench: "cart".into(),
            n: 3,
            mean: 1881.0,
            peers_n: 2,
            peers_mean: 1919.0,
            deficit: 0.0198,
            t: Some(-5.1),
            df: Some(2.9),
            p: 0.0077,
            below: true,
        }],
    }];
    doc.notes = vec!["targets: RTX (built in)".into()];
    doc
}

fn cell(ratio: Option<f64>, n: usize, mean: Option<f64>) -> Cell {
    Cell {
        ratio,
        ci: ratio.map(|r| [r * 0.98, r * 1.02]),
        n,
        gpus: 2,
        mean,
        missing: mean.is_none(),
        unnormalized: false,
        mixed_runtime: false,
    }
}

/// Three vendors, one missing a bench, with the attribution of B against C.
pub fn grid() -> Grid {
    let row = |name: &str, track: Track, overall: Option<f64>, tier, cells: Vec<(&str, Cell)>| {
        let present = cells.iter().filter(|(_, c)| !c.missing).count();
        VendorRow {
            name: name.into(),
            track,
            id: match track {
                Track::Baseline => name.into(),
                Track::Tweaked => format!("{name}/tweaked"),
            },
            overall,
            ci: overall.map(|o| [o * 0.97, o * 1.03]),
            tier,
            ratio_to_next: None,
            ratio_to_next_ci: None,
            p_above_next: None,
            geomean: overall,
            weight_share: present as f64 / 2.0,
            present,
            missing: cells
                .iter()
                .filter(|(_, c)| c.missing)
                .map(|(b, _)| (*b).to_owned())
                .collect(),
            cells: cells.into_iter().map(|(b, c)| (b.to_owned(), c)).collect(),
            runtime: None,
            mixed_runtime: false,
            hardware: None,
            validity: None,
        }
    };
    Grid {
        schema_version: GRID_SCHEMA_VERSION,
        per: Default::default(),
        baseline: "A".into(),
        benches: vec!["cart".into(), "convnet".into()],
        weights: [("cart".to_owned(), 1.0), ("convnet".to_owned(), 2.0)].into(),
        unnormalized: Vec::new(),
        vendors: vec![
            row(
                "B",
                Track::Tweaked,
                Some(1.25),
                Some(1),
                vec![
                    ("cart", cell(Some(1.5), 8, Some(3000.0))),
                    ("convnet", cell(Some(1.1334), 8, Some(226.68))),
                ],
            ),
            row(
                "A",
                Track::Baseline,
                Some(1.0),
                Some(2),
                vec![
                    ("cart", cell(Some(1.0), 8, Some(2000.0))),
                    ("convnet", cell(Some(1.0), 8, Some(200.0))),
                ],
            ),
            row(
                "B",
                Track::Baseline,
                Some(0.4),
                Some(3),
                vec![
                    ("cart", cell(Some(1.2), 4, Some(2400.0))),
                    ("convnet", cell(None, 0, None)),
                ],
            ),
        ],
        tiers: vec![vec!["B/tweaked".into()], vec!["A".into()], vec!["B".into()]],
        explain: Some(Attribution {
            a: "B/tweaked".into(),
            b: "B".into(),
            overall_a: 1.25,
            overall_b: 0.4,
            ratio: 3.125,
            ratio_ci: [2.9, 3.3],
            gap: 3.125f64.ln(),
            terms: vec![AttributionTerm {
                bench: "cart".into(),
                weight: 1.0,
                log_ratio_a: Some(1.5f64.ln()),
                log_ratio_b: Some(1.2f64.ln()),
                term: 0.5f64.ln(),
            }],
            penalty: 1.0,
        }),
        resamples: 2000,
        seed: 2019,
        level: 0.95,
        interval: Default::default(),
        informative: None,
        notes: vec!["B/tweaked: 2 samples left out (NaN loss)".into()],
    }
}

/// The rules the findings of [`validation`] are of, as the validator's catalogue has them.
pub fn rules() -> RuleList {
    const RULES: &[Rule] = &[
        Rule {
            id: "runs.too-few",
            severity: Severity::Error,
            summary: "fewer runs of a bench on a GPU than --min-runs",
            hint: "repeat the suite until every bench has the required runs on every GPU",
        },
        Rule {
            id: "bench.missing",
            severity: Severity::Error,
            summary: "a bench of the jobs file is absent on a GPU in a run",
            hint: "re-run the bench (run.sh --name <bench>) in that run",
        },
        Rule {
            id: "loss.nan",
            severity: Severity::Error,
            summary: "NaN or ±Infinity in batch_loss",
            hint: "the training diverged; fix the configuration or the platform and re-run",
        },
    ];
    RuleList(RULES)
}

/// A finding of `rule` (one of [`rules`]) with its severity and hint.
fn finding(rule: &'static str, expected: &str, found: &str) -> Finding {
    let r = rules().rule(rule).expect("a rule of the test catalogue");
    Finding {
        rule,
        severity: r.severity,
        file: None,
        entry: None,
        field: None,
        expected: expected.into(),
        found: found.into(),
        hint: r.hint.into(),
    }
}

/// A validation with an error, a warning, a waived error and a version note.
pub fn validation() -> ValidationDoc {
    let validation = Validation {
        findings: vec![
            finding("runs.too-few", "at least 4 runs", "3 runs"),
            finding("loss.nan", "finite losses", "NaN at step 12")
                .file("output1/fast.0.json")
                .entry(3)
                .field("batch_loss"),
        ],
        waived: vec![finding("bench.missing", "cart, convnet", "cart").file("output2, \"x\"")],
        versions: vec![VersionNote {
            bench: "cart".into(),
            version: "abc123".into(),
            entries: 6,
            result: "known".into(),
        }],
        summary: Summary {
            suite: Some("fast".into()),
            files: 7,
            report_files: 6,
            entries: 12,
            runs: 3,
            runs_from: "folders".into(),
            gpus: 2,
            benches: 2,
            jobs_file: Some("fast.json".into()),
            baselines: None,
        },
        omitted: Vec::new(),
    };
    ValidationDoc {
        submission: "vendor.zip".into(),
        validation,
        rules: rules(),
    }
}

/// A fixed provenance: no clock, no paths of this machine.
pub fn provenance() -> Provenance {
    Provenance {
        tool: "mlbench 0.0.0".into(),
        command: "mlbench report --reports vendor.zip --html page.html".into(),
        inputs: vec![("vendor.zip".into(), "ab".repeat(32))],
        generated: None,
    }
}

/// An exporter's output as text (every text format is UTF-8).
pub fn text(bytes: Result<Vec<u8>, crate::ExportError>) -> String {
    String::from_utf8(bytes.expect("the exporter failed")).expect("not UTF-8")
}

/// One vendor at 2 and 4 devices: per-device 100 and 90 items/s on `cart` (efficiency
/// 0.9), `vae` only at 4 devices.
pub fn scaling() -> mlbench_results::Scaling {
    use mlbench_results::scaling::{SCALING_SCHEMA_VERSION, Scaling, ScalingCell, ScalingRow};
    let cell = |devices: usize, per_device: f64, efficiency: Option<f64>| ScalingCell {
        devices,
        per_device,
        throughput: per_device * devices as f64,
        whole_machine: false,
        efficiency,
    };
    Scaling {
        schema_version: SCALING_SCHEMA_VERSION,
        reference: "v2".into(),
        benches: vec!["cart".into(), "vae".into()],
        rows: vec![
            ScalingRow {
                label: "v2".into(),
                devices: 2,
                nodes: 1,
                benches: [("cart".to_owned(), cell(2, 100.0, Some(1.0)))].into(),
                efficiency: Some(1.0),
            },
            ScalingRow {
                label: "v4".into(),
                devices: 4,
                nodes: 2,
                benches: [
                    ("cart".to_owned(), cell(4, 90.0, Some(0.9))),
                    ("vae".to_owned(), cell(4, 10.0, None)),
                ]
                .into(),
                efficiency: Some(0.9),
            },
        ],
    }
}

/// A sweep on two GPU models: `vae` at 64 and 128 on H100 (gains 1.5, its best 128,
/// every step paying), and `wlm, big` (a name to quote) at 128 alone on an unnamed GPU.
pub fn batch_sweep() -> mlbench_results::BatchSweep {
    use mlbench_results::batch_sweep::*;
    let point = |batch_size, mean: f64, ratio: f64, gain: Option<f64>| SweepPoint {
        batch_size,
        n: 8,
        gpus: 2,
        items_per_second: mean,
        ci: [mean * 0.99, mean * 1.01],
        ratio,
        ratio_ci: [ratio * 0.98, ratio * 1.02],
        gain,
        gain_ci: gain.map(|g| [g * 0.98, g * 1.02]),
    };
    BatchSweep {
        schema_version: BATCH_SWEEP_SCHEMA_VERSION,
        suite: "fast".into(),
        statistic: SWEEP_STATISTIC.into(),
        stop_rule: STOP_RULE.into(),
        resampling: "runs resampled within GPUs".into(),
        resamples: 2000,
        seed: 2019,
        level: 0.95,
        batch_sizes: vec![64, 128],
        benches: vec![
            SweepBench {
                bench: "vae".into(),
                gpu_model: Some("H100".into()),
                points: vec![
                    point(64, 100.0, 1.0, None),
                    point(128, 150.0, 1.5, Some(1.5)),
                ],
                best_batch_size: 128,
                stops_paying_at: None,
            },
            SweepBench {
                bench: "wlm, big".into(),
                gpu_model: None,
                points: vec![point(128, 20.5, 1.0, None)],
                best_batch_size: 128,
                stops_paying_at: None,
            },
        ],
        notes: vec!["read 2 files".into()],
    }
}

/// The texts of a chart's SVG in document order, one per line, for a snapshot.
pub fn svg_lines(svg: &str) -> String {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim())
        .collect();
    texts.join("\n")
}

/// Every text of a chart lies inside the image (its extent estimated from its anchor,
/// size and rotation with the charts' own font metrics) and none overlaps another.
pub fn assert_texts_fit(svg: &str) {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    let num = |n: roxmltree::Node, a: &str| -> f64 {
        n.attribute(a).and_then(|v| v.parse().ok()).expect(a)
    };
    let root = doc.root_element();
    let (w, h) = (num(root, "width"), num(root, "height"));
    let mut boxes: Vec<(&str, [f64; 4])> = Vec::new();
    for n in root.descendants().filter(|n| n.has_tag_name("text")) {
        let text = n.text().unwrap_or("").trim();
        let (x, y, size) = (num(n, "x"), num(n, "y"), num(n, "font-size"));
        let bold = n.attribute("font-weight") == Some("bold");
        let len = f64::from(mlbench_plots::text_width(text, size, bold).expect("font"));
        let start = match n.attribute("text-anchor") {
            Some("middle") => -len / 2.0,
            Some("end") => -len,
            _ => 0.0,
        };
        let across = match n.attribute("dy") {
            Some("0.76em") => 0.0,
            Some("0.5ex") => -size / 2.0,
            _ => -size,
        };
        let b = if n.attribute("transform").is_some() {
            [x + across, x + across + size, y - start - len, y - start]
        } else {
            [x + start, x + start + len, y + across, y + across + size]
        };
        assert!(
            b[0] >= 0.0 && b[1] <= w && b[2] >= 0.0 && b[3] <= h,
            "{text:?} lies outside the {w}×{h} image: {b:?}"
        );
        for (other, o) in &boxes {
            let apart = b[1] <= o[0] + 1.0
                || o[1] <= b[0] + 1.0
                || b[3] <= o[2] + 1.0
                || o[3] <= b[2] + 1.0;
            assert!(apart, "{text:?} {b:?} overlaps {other:?} {o:?}");
        }
        boxes.push((text, b));
    }
}
