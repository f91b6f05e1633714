//! The batch-size view's tables: one per GPU model (a row per bench and batch size), then
//! the best batch of each bench; and the data of its CSV (a row per bench, a column per
//! batch size, as Lambda's deeplearning-benchmark writes one file per GPU).

use super::{Rows, num, raw};
use mlbench_results::batch_sweep::{BatchSweep, SweepBench, SweepPoint};

/// `[lo, hi]` for people.
fn interval(ci: Option<[f64; 2]>) -> String {
    ci.map_or_else(
        || "—".into(),
        |[lo, hi]| format!("{}–{}", num(Some(lo)), num(Some(hi))),
    )
}

/// A ratio for people: `1.842×`.
fn times(x: Option<f64>) -> String {
    x.map_or_else(|| "—".into(), |v| format!("{v:.3}×"))
}

/// A ratio with its interval: `1.842× (1.80–1.88)`.
fn ratio_cell(x: Option<f64>, ci: Option<[f64; 2]>) -> String {
    match (x, ci) {
        (Some(_), Some([lo, hi])) => format!("{} ({lo:.3}–{hi:.3})", times(x)),
        _ => times(x),
    }
}

/// The GPU model in words.
pub fn model_name(model: Option<&str>) -> String {
    model.map_or_else(|| "an unnamed GPU".into(), str::to_owned)
}

/// What a point is to its bench: the best batch, where it stops paying.
fn mark(b: &SweepBench, p: &SweepPoint) -> String {
    let mut marks = Vec::new();
    if b.best_batch_size == p.batch_size {
        marks.push("best");
    }
    if b.stops_paying_at == Some(p.batch_size) {
        marks.push("stops paying");
    }
    marks.join(", ")
}

/// The level as a percentage: `95%`.
fn level(s: &BatchSweep) -> String {
    format!("{}%", (s.level * 100.0).round())
}

/// One table per GPU model: a row per bench and batch size.
pub fn point_rows(s: &BatchSweep) -> Vec<Rows> {
    let header = [
        "bench",
        "batch",
        "n",
        "items/s",
        &format!("{} interval", level(s)),
        "× smallest batch",
        "gain over the previous",
        "mark",
    ];
    s.gpu_models()
        .into_iter()
        .map(|model| {
            let rows = (s.benches.iter())
                .filter(|b| b.gpu_model.as_deref() == model)
                .flat_map(|b| {
                    b.points.iter().map(move |p| {
                        vec![
                            b.bench.clone(),
                            p.batch_size.to_string(),
                            p.n.to_string(),
                            num(Some(p.items_per_second)),
                            interval(Some(p.ci)),
                            // The smallest batch is 1× by definition: no interval.
                            ratio_cell(Some(p.ratio), p.gain.map(|_| p.ratio_ci)),
                            ratio_cell(p.gain, p.gain_ci),
                            mark(b, p),
                        ]
                    })
                })
                .collect();
            Rows::new(
                format!(
                    "Throughput by batch size on {} (items/s of one GPU)",
                    model_name(model)
                ),
                &header,
                rows,
            )
        })
        .collect()
}

/// One row per bench and GPU model: its batch sizes, the best, where it stops paying.
pub fn best_rows(s: &BatchSweep) -> Rows {
    let rows = s
        .benches
        .iter()
        .map(|b| {
            let best = b.at(b.best_batch_size);
            vec![
                b.bench.clone(),
                model_name(b.gpu_model.as_deref()),
                (b.points.iter().map(|p| p.batch_size.to_string()))
                    .collect::<Vec<_>>()
                    .join(", "),
                b.best_batch_size.to_string(),
                num(best.map(|p| p.items_per_second)),
                times(best.map(|p| p.ratio)),
                b.stops_paying_at
                    .map_or_else(|| "—".into(), |at| at.to_string()),
            ]
        })
        .collect();
    Rows::new(
        format!(
            "Best batch ({} intervals; a step pays when its gain's interval is above 1)",
            level(s)
        ),
        &[
            "bench",
            "GPU",
            "batch sizes",
            "best batch",
            "items/s",
            "× smallest batch",
            "stops paying at",
        ],
        rows,
    )
}

/// The CSV: a row per GPU model and bench, a column per batch size (its mean items/s,
/// empty where the bench did not run it), then the best batch and where it stops paying.
pub fn csv_rows(s: &BatchSweep) -> Rows {
    let mut header: Vec<String> = vec!["gpu_model".into(), "bench".into()];
    header.extend(s.batch_sizes.iter().map(i64::to_string));
    header.extend(["best_batch_size".into(), "stops_paying_at".into()]);
    let rows = s
        .benches
        .iter()
        .map(|b| {
            let mut row = vec![b.gpu_model.clone().unwrap_or_default(), b.bench.clone()];
            row.extend(
                (s.batch_sizes.iter()).map(|&size| raw(b.at(size).map(|p| p.items_per_second))),
            );
            row.push(b.best_batch_size.to_string());
            row.push(
                b.stops_paying_at
                    .map_or_else(String::new, |at| at.to_string()),
            );
            row
        })
        .collect();
    Rows {
        title: String::new(),
        header,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{batch_sweep, text};
    use crate::{Csv, Exporter, Json, Markdown};

    #[test]
    fn a_table_per_gpu_model_and_a_csv_column_per_batch_size() {
        let s = batch_sweep();
        let tables = point_rows(&s);
        let titles: Vec<&str> = tables.iter().map(|t| t.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "Throughput by batch size on H100 (items/s of one GPU)",
                "Throughput by batch size on an unnamed GPU (items/s of one GPU)"
            ]
        );
        // The smallest batch is 1× without an interval; 128 gains 1.5 ± 2 %.
        assert_eq!(tables[0].rows[0][5..7], ["1.000×", "—"]);
        assert_eq!(
            tables[0].rows[1][3..],
            [
                "150.00",
                "148.50–151.50",
                "1.500× (1.470–1.530)",
                "1.500× (1.470–1.530)",
                "best"
            ]
        );
        let csv = text(Csv.export(&s));
        assert_eq!(
            csv,
            "gpu_model,bench,64,128,best_batch_size,stops_paying_at\nH100,vae,100,150,128,\n,\"wlm, big\",,20.5,128,\n"
        );
        let md = text(Markdown.export(&s));
        assert!(
            md.contains("### Throughput by batch size on an unnamed GPU"),
            "{md}"
        );
        assert!(
            md.contains("| wlm, big | an unnamed GPU | 128 | 128 | 20.500 | 1.000× | — |"),
            "{md}"
        );
        let json: serde_json::Value = serde_json::from_slice(&Json.export(&s).unwrap()).unwrap();
        assert_eq!(json["schema_version"], 1);
        assert_eq!(json["benches"][1]["gpu_model"], serde_json::Value::Null);
        assert_eq!(
            json["benches"][0]["points"][0]["gain_ci"],
            serde_json::Value::Null
        );
    }
}
