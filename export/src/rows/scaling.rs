//! The scaling table's rows: one per submission, then one per bench.

use super::{Rows, num};
use mlbench_results::Scaling;

fn eff(x: Option<f64>) -> String {
    x.map_or_else(|| "—".into(), |e| format!("{:.1}%", e * 100.0))
}

/// One row per submission: devices, nodes, the geometric-mean efficiency.
pub fn overall_rows(s: &Scaling) -> Rows {
    let rows = s
        .rows
        .iter()
        .map(|r| {
            vec![
                r.label.clone(),
                r.devices.to_string(),
                r.nodes.to_string(),
                eff(r.efficiency),
            ]
        })
        .collect();
    Rows::new(
        format!(
            "Scaling from {} (efficiency: throughput ÷ linear scaling of its per-device throughput)",
            s.reference
        ),
        &["submission", "devices", "nodes", "efficiency"],
        rows,
    )
}

/// One row per bench, one column per submission: throughput (efficiency).
pub fn bench_rows(s: &Scaling) -> Rows {
    let mut header = vec!["bench".to_owned()];
    header.extend(
        s.rows
            .iter()
            .map(|r| format!("{} ({})", r.label, r.devices)),
    );
    let rows = s
        .benches
        .iter()
        .map(|b| {
            // Said once per bench: its figure is the machine's own, not devices × one.
            let whole = s
                .rows
                .iter()
                .any(|r| r.benches.get(b).is_some_and(|c| c.whole_machine));
            let name = if whole {
                format!("{b} (whole machine)")
            } else {
                b.clone()
            };
            let mut row = vec![name];
            row.extend(s.rows.iter().map(|r| match r.benches.get(b) {
                Some(c) => format!("{} ({})", num(Some(c.throughput)), eff(c.efficiency)),
                None => "—".into(),
            }));
            row
        })
        .collect();
    Rows {
        title: "Throughput by bench (efficiency)".into(),
        header,
        rows,
    }
}
