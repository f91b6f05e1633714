//! A store's history as a table: one row per series and round.

use super::{Form, Rows, num, raw};
use mlbench_results::history::History;

/// The columns of [`history_rows`].
pub const HEADER: [&str; 13] = [
    "label",
    "track",
    "hardware",
    "bench",
    "round",
    "n",
    "mean",
    "ci_low",
    "ci_high",
    "change",
    "change_low",
    "change_high",
    "flag",
];

/// One row per point of every series: the figure and its interval, then the change from
/// the series' previous point, its interval and the flag (`↑ +12.3 %`, only where the
/// interval excludes 1).
pub fn history_rows(history: &History, form: Form) -> Rows {
    let figure = |x: Option<f64>| match form {
        Form::People => num(x),
        Form::Data => raw(x),
    };
    let mut rows = Vec::new();
    for s in &history.series {
        for p in &s.points {
            let c = p.change.as_ref();
            let flag = match (form, c) {
                (Form::People, Some(c)) => c.flag_text(),
                (Form::Data, Some(c)) => c.direction.clone().unwrap_or_default(),
                (_, None) => String::new(),
            };
            rows.push(vec![
                s.label.clone(),
                s.track.clone(),
                s.hardware.clone(),
                s.bench.clone(),
                p.round.clone(),
                p.n.to_string(),
                figure(Some(p.mean)),
                figure(Some(p.ci[0])),
                figure(Some(p.ci[1])),
                figure(c.map(|c| c.ratio)),
                figure(c.map(|c| c.ci[0])),
                figure(c.map(|c| c.ci[1])),
                flag,
            ]);
        }
    }
    let title = format!(
        "{} over {}; {} flagged (interval of the ratio excludes 1; {:.0} %, {} resamples, seed {})",
        mlbench_schema::words::count(history.series.len(), "series", "series"),
        mlbench_schema::words::count(history.rounds.len(), "round", "rounds"),
        mlbench_schema::words::count(history.flagged, "change", "changes"),
        history.level * 100.0,
        history.resamples,
        history.seed
    );
    Rows::new(title, &HEADER, rows)
}
