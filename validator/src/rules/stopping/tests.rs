use super::*;

/// One entry per run of `bench` with the given throughputs (run i has `values[i]`).
fn runs_of(bench: &str, values: &[f64]) -> Vec<EntryFacts> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut e = EntryFacts::blank(i, 0, i as u32, bench);
            e.throughput = Some(*v);
            e
        })
        .collect()
}

fn record(runs: u32, stopped: &str) -> StoppingRule {
    let design = Design::plan(0.95, 0.01, 0.02).unwrap();
    StoppingRule {
        rule: ANYTIME_PRECISION.into(),
        method: LAI_T_MIXTURE.into(),
        level: 0.95,
        precision: 0.01,
        expected_cv: 0.02,
        mixture: design.mixture,
        min_runs: 3,
        max_runs: 20,
        runs,
        stopped: stopped.into(),
        failed_runs: 0,
    }
}

fn findings(entries: &[EntryFacts], runs: usize, r: &StoppingRule) -> Vec<Finding> {
    let names: Vec<String> = (0..runs).map(|i| format!("output{i}")).collect();
    let mut out = Vec::new();
    check(
        entries,
        &names,
        &[("system.json".into(), r.clone())],
        &mut out,
    );
    out
}

/// Throughputs within ±0.05 % of 100: the interval is within ±1 % as soon as it is
/// bounded. The first such count, from the definition of the rule (at least 3 runs and a
/// half-width within ln 1.01), is where `run --until` stops.
fn tight() -> (Vec<f64>, u32) {
    let values: Vec<f64> = (0..20)
        .map(|i| 100.0 + [0.05, -0.05, 0.02, -0.02][i % 4])
        .collect();
    let design = Design::plan(0.95, 0.01, 0.02).unwrap();
    let stop = (3..=20u32)
        .find(|&k| {
            let s = LogSummary::of(&values[..k as usize]).unwrap();
            s.anytime_half_width(&design)
                .is_some_and(|h| h <= 1.01f64.ln())
        })
        .unwrap();
    (values, stop)
}

#[test]
fn a_record_the_runs_followed_passes() {
    let (values, stop) = tight();
    assert!(stop > 3, "bounded only after a few runs: {stop}");
    let entries = runs_of("vae", &values[..stop as usize]);
    assert_eq!(
        findings(&entries, stop as usize, &record(stop, STOPPED_PRECISION)),
        []
    );
    // The budget used up without reaching it: wide runs, 20 of 20.
    let wide: Vec<f64> = (0..20)
        .map(|i| if i % 2 == 0 { 80.0 } else { 120.0 })
        .collect();
    let entries = runs_of("vae", &wide);
    assert_eq!(findings(&entries, 20, &record(20, STOPPED_MAX_RUNS)), []);
}

#[test]
fn each_false_claim_is_an_error_on_the_record() {
    let (values, stop) = tight();
    let n = stop as usize;
    let entries = runs_of("vae", &values[..n]);
    let check_one = |r: StoppingRule, runs: usize, entries: &[EntryFacts], says: &str| {
        let out = findings(entries, runs, &r);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].rule, "runs.stopping");
        assert_eq!(out[0].file.as_deref(), Some("system.json"));
        let text = format!("{} / {}", out[0].expected, out[0].found);
        assert!(text.contains(says), "{text}");
    };
    // Another run count than the submission's.
    check_one(
        record(stop + 1, STOPPED_PRECISION),
        n,
        &entries,
        "runs in the submission",
    );
    // A constant other than the stated CV's: tuned on the data.
    let mut tuned = record(stop, STOPPED_PRECISION);
    tuned.mixture *= 1.5;
    check_one(tuned, n, &entries, "not fixed in advance");
    // An unknown rule.
    let mut other = record(stop, STOPPED_PRECISION);
    other.rule = "sd-below".into();
    check_one(other, n, &entries, "`sd-below`");
    // Precision claimed, not reached: one bench wide.
    let mut both = entries.clone();
    both.extend(runs_of(
        "wlm",
        &[80.0, 120.0, 80.0, 120.0, 80.0, 120.0, 80.0, 120.0][..n],
    ));
    check_one(record(stop, STOPPED_PRECISION), n, &both, "wlm at");
    // Runs past the stop: the rule stops at `stop`, the submission has two more.
    let longer = runs_of("vae", &values[..n + 2]);
    check_one(
        record(stop + 2, STOPPED_PRECISION),
        n + 2,
        &longer,
        &format!("a stop after run {stop}"),
    );
    // The budget claimed before it is used.
    check_one(record(stop, STOPPED_MAX_RUNS), n, &entries, "after 20 runs");
}
