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

#[cfg(test)]
mod tests {
    use super::*;
    use mlbench_results::energy::{EnergyFlag, FlagCount, Method};

    fn energy() -> Energy {
        let ci = |mean: f64, lo: f64, hi: f64| {
            Some(MeanCi {
                n: 3,
                mean,
                ci: [lo, hi],
            })
        };
        Energy {
            benches: vec![BenchEnergy {
                bench: "vae".into(),
                n: 3,
                runs: 3,
                method: Method::Counter,
                joules_per_item: ci(0.9375, 0.7, 1.2),
                net_joules_per_item: None,
                items_per_joule: ci(1.1556, 0.9, 1.4),
                mean_power_w: Some(150.0),
                p95_power_w: Some(200.0),
                utilisation: Some(0.5),
                flags: vec![
                    FlagCount { flag: EnergyFlag::WholeBoard, copies: 3 },
                    FlagCount { flag: EnergyFlag::Gap, copies: 1 },
                ],
            }],
            copies: Vec::new(),
            resamples: 2000,
            seed: 2019,
            level: 0.95,
            notes: vec!["output1/fast_0.json: 2 entries of vae but 1 telemetry file of vae.0: not paired (which file is whose cannot be told)".into()],
        }
    }

    #[test]
    fn people_read_the_figures_the_data_hold() {
        let e = energy();
        let t = energy_rows(&e);
        assert_eq!(
            t.rows[0],
            [
                "vae",
                "3",
                "counter",
                "0.9375",
                "0.7000–1.200",
                "—",
                "1.156",
                "0.9000–1.400",
                "150.00",
                "200.00",
                "50.0%"
            ]
        );
        assert_eq!(t.header[4], "95% interval");
        let cells = data_cells(&e, "vae");
        assert_eq!(cells.len(), DATA_COLUMNS.len());
        assert_eq!(
            cells,
            [
                "3",
                "counter",
                "0.9375",
                "0.7",
                "1.2",
                "",
                "1.1556",
                "0.9",
                "1.4",
                "150",
                "200",
                "0.5",
                "whole_board=3;gap=1"
            ]
        );
        // A bench without energy: every cell empty.
        assert!(data_cells(&e, "atari").iter().all(String::is_empty));
    }

    #[test]
    fn the_notes_give_each_benchs_flags_then_what_was_left_out() {
        let notes = notes(&energy());
        assert_eq!(notes[0], "flags, with the copies carrying each:");
        assert_eq!(notes[1], "vae (3 copies): whole_board 3, gap 1");
        assert!(notes[2].contains("not paired"));
        let none = Energy {
            benches: Vec::new(),
            notes: Vec::new(),
            ..energy()
        };
        assert_eq!(
            super::notes(&none),
            ["no copy's telemetry gave an energy (no device with a counter or power readings)"]
        );
    }
}
