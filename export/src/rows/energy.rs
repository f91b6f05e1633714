//! The report's energy table, defined once: per bench, joules per item and items per
//! joule with their intervals, mean and p95 power, utilisation and the flags, for people
//! (table, Markdown, HTML) and as data beside the bench table (CSV).

use super::{Rows, num, raw};
use mlbench_results::energy::{BenchEnergy, Energy, MeanCi};

/// The title of the energy table.
pub const TITLE: &str =
    "Energy per bench (from the runs' telemetry; whole-board: every process on a device counts)";

/// A mean for people (`—` for none).
fn mean_of(x: &Option<MeanCi>) -> String {
    num(x.map(|m| m.mean))
}

/// An interval for people, `low–high` (`—` for none).
fn interval_of(x: &Option<MeanCi>) -> String {
    match x {
        Some(m) => format!("{}–{}", num(Some(m.ci[0])), num(Some(m.ci[1]))),
        None => "—".into(),
    }
}

/// The flags of a bench for people: `vae (8 copies): whole_board 8, gap 1`; `None`
/// without any.
fn flag_line(b: &BenchEnergy) -> Option<String> {
    let words: Vec<String> = b
        .flags
        .iter()
        .map(|f| format!("{} {}", f.flag.as_str(), f.copies))
        .collect();
    (!words.is_empty()).then(|| {
        format!(
            "{} ({}): {}",
            b.bench,
            if b.n == 1 {
                "1 copy".to_owned()
            } else {
                format!("{} copies", b.n)
            },
            words.join(", ")
        )
    })
}

/// The energy table for people.
pub fn energy_rows(energy: &Energy) -> Rows {
    let level = format!("{:.0}% interval", energy.level * 100.0);
    let rows = energy
        .benches
        .iter()
        .map(|b| {
            vec![
                b.bench.clone(),
                b.n.to_string(),
                b.method.as_str().to_owned(),
                mean_of(&b.joules_per_item),
                interval_of(&b.joules_per_item),
                mean_of(&b.net_joules_per_item),
                mean_of(&b.items_per_joule),
                interval_of(&b.items_per_joule),
                num(b.mean_power_w),
                num(b.p95_power_w),
                b.utilisation
                    .map_or_else(|| "—".into(), |u| format!("{:.1}%", u * 100.0)),
            ]
        })
        .collect();
    let header = [
        "bench",
        "copies",
        "method",
        "J/item",
        level.as_str(),
        "net J/item",
        "items/J",
        level.as_str(),
        "mean W",
        "p95 W",
        "util",
    ];
    Rows::new(TITLE, &header, rows)
}

/// The columns the energy adds beside each bench of the bench table as data.
pub const DATA_COLUMNS: [&str; 13] = [
    "energy_copies",
    "energy_method",
    "joules_per_item",
    "joules_per_item_low",
    "joules_per_item_high",
    "net_joules_per_item",
    "items_per_joule",
    "items_per_joule_low",
    "items_per_joule_high",
    "mean_power_w",
    "p95_power_w",
    "utilisation",
    "energy_flags",
];

/// The energy cells of `bench` as data (empty where it has no energy).
pub fn data_cells(energy: &Energy, bench: &str) -> Vec<String> {
    let Some(b) = energy.benches.iter().find(|b| b.bench == bench) else {
        return vec![String::new(); DATA_COLUMNS.len()];
    };
    let ci = |x: &Option<MeanCi>, i: usize| raw(x.map(|m| m.ci[i]));
    let flags: Vec<String> = b
        .flags
        .iter()
        .map(|f| format!("{}={}", f.flag.as_str(), f.copies))
        .collect();
    vec![
        b.n.to_string(),
        b.method.as_str().to_owned(),
        raw(b.joules_per_item.map(|m| m.mean)),
        ci(&b.joules_per_item, 0),
        ci(&b.joules_per_item, 1),
        raw(b.net_joules_per_item.map(|m| m.mean)),
        raw(b.items_per_joule.map(|m| m.mean)),
        ci(&b.items_per_joule, 0),
        ci(&b.items_per_joule, 1),
        raw(b.mean_power_w),
        raw(b.p95_power_w),
        raw(b.utilisation),
        flags.join(";"),
    ]
}

/// What a reader of the energy table must know: each bench's flags (docs/report-json.md,
/// "energy"), what was left out, and why.
pub fn notes(energy: &Energy) -> Vec<String> {
    let mut out: Vec<String> = energy.benches.iter().filter_map(flag_line).collect();
    if !out.is_empty() {
        out.insert(0, "flags, with the copies carrying each:".into());
    }
    if energy.benches.is_empty() {
        out.push(
            "no copy's telemetry gave an energy (no device with a counter or power readings)"
                .into(),
        );
    }
    out.extend(energy.notes.iter().cloned());
    out
}
