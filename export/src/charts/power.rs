//! A bench's power over time: from the telemetry's plain trace to `mlbench_plots`'
//! power chart.

use super::{Named, drawn};
use crate::ExportError;
use crate::rows::plural;
use mlbench_plots::{Chart, PowerLine, PowerTrace, PowerWindow, WindowEnergy};
use mlbench_results::trace::Trace;

/// The power chart of one trace: a line per device of each copy, the timed windows
/// shaded, each device's idle level, its energy per window in the legend (by counter,
/// else by power; net of idle where there is a baseline), the trace's facts under it.
pub fn power_chart(trace: &Trace) -> Result<Chart, ExportError> {
    let copies = {
        let mut c: Vec<u32> = trace.lines.iter().map(|l| l.copy).collect();
        c.sort_unstable();
        c.dedup();
        c.len()
    };
    let hz: Vec<String> = {
        let mut h: Vec<String> = trace
            .lines
            .iter()
            .map(|l| match l.period_s > 0.0 {
                true => format!("{} Hz", rate_text(1.0 / l.period_s)),
                false => "an unknown rate".to_owned(),
            })
            .collect();
        h.sort();
        h.dedup();
        h
    };
    let lines = trace
        .lines
        .iter()
        .take(MAX_LINES)
        .map(|l| PowerLine {
            label: mlbench_plots::shortened(&l.label).into_owned(),
            points: l.points.clone(),
            // A file without a period (0) is broken at its lines by its median spacing.
            period_s: (l.period_s > 0.0).then_some(l.period_s),
            idle_w: l.idle_w.filter(|w| w.is_finite()),
            from_counter: l.from_counter,
            energy: l
                .energy
                .iter()
                .filter_map(|e| {
                    // An energy past f64 (readings of 1e308 W) is left out of the legend.
                    Some(WindowEnergy {
                        window: e.window.clone(),
                        gross_j: e.gross_j().filter(|j| j.is_finite())?,
                        net_j: e.net_j.filter(|j| j.is_finite()),
                    })
                })
                .collect(),
        })
        .collect();
    let spec = PowerTrace {
        title: format!(
            "Power of {} in {}",
            mlbench_plots::shortened(&trace.bench),
            mlbench_plots::shortened(&trace.run)
        ),
        subtitle: Some(format!(
            "{} of {}, sampled at {}; shaded: the timed windows",
            plural(trace.lines.len(), "device line"),
            copies_text(copies),
            hz.join(", ")
        )),
        lines,
        windows: trace
            .windows
            .iter()
            .map(|w| PowerWindow {
                name: w.name.clone(),
                start_s: w.start_s,
                end_s: w.end_s,
            })
            .collect(),
        notes: notes(trace),
        x_label: Some("time since sampling began (s)".into()),
        ..PowerTrace::default()
    };
    mlbench_plots::power_trace(&spec).map_err(drawn(format!("the power of {}", trace.name)))
}

/// The device lines a chart draws: a whole machine's copies give tens (16 in the layout
/// tests); past this, a file with thousands of devices (a broken one) would give a legend
/// taller than any image.
const MAX_LINES: usize = 64;

/// The facts under a chart: the first [`MAX_NOTES`] of the trace's, then how many more
/// (the command's own output says each), and the lines left out.
const MAX_NOTES: usize = 12;

fn notes(trace: &Trace) -> Vec<String> {
    let mut notes: Vec<String> = trace.facts.iter().take(MAX_NOTES).cloned().collect();
    if trace.facts.len() > MAX_NOTES {
        notes.push(format!(
            "… and {} more notes.",
            trace.facts.len() - MAX_NOTES
        ));
    }
    if trace.lines.len() > MAX_LINES {
        notes.push(format!(
            "{} device lines; the first {MAX_LINES} are drawn.",
            trace.lines.len()
        ));
    }
    notes
}

/// The power chart of each trace, named `power-<trace name>`.
pub fn power_charts(traces: &[Trace]) -> Result<Vec<Named>, ExportError> {
    traces
        .iter()
        .map(|t| Ok((format!("power-{}", t.name), power_chart(t)?)))
        .collect()
}

/// `1 copy`, `2 copies`.
fn copies_text(n: usize) -> String {
    if n == 1 {
        "1 copy".into()
    } else {
        format!("{n} copies")
    }
}

/// A rate as people write it: `1`, `10`, `0.5`.
fn rate_text(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlbench_results::trace::{LineEnergy, TraceLine, TraceWindow};

    fn texts(svg: &str) -> String {
        let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn line(copy: u32, energy: Vec<LineEnergy>) -> TraceLine {
        TraceLine {
            label: format!("cuda:{copy} · copy {copy}"),
            device: format!("cuda:{copy}"),
            copy,
            period_s: 0.1,
            points: (0..50).map(|i| (f64::from(i) / 10.0, 200.0)).collect(),
            idle_w: Some(90.0),
            energy,
            ..TraceLine::default()
        }
    }

    /// A broken file's thousands: 200 device lines and 30 facts give a chart of 64 lines
    /// and 12 facts, with notes that say what was left out (each fact is still in the
    /// command's own output).
    #[test]
    fn hundreds_of_devices_and_facts_are_drawn_in_part_and_said() {
        let trace = Trace {
            name: "output0-vae".into(),
            run: "output0".into(),
            bench: "vae".into(),
            lines: (0..200).map(|c| line(c, Vec::new())).collect(),
            facts: (0..30).map(|i| format!("fact number {i}.")).collect(),
            ..Trace::default()
        };
        let chart = power_chart(&trace).expect("drawn");
        let text = texts(&chart.svg);
        assert!(text.contains("cuda:63 · copy 63") && !text.contains("cuda:64 · copy 64"));
        assert!(text.contains("fact number 11.") && !text.contains("fact number 12."));
        for words in [
            "18 more notes.",
            "200 device lines; the first 64 are drawn.",
        ] {
            for w in words.split(' ') {
                assert!(text.contains(w), "{w:?} of {words:?} missing: {text}");
            }
        }
    }

    #[test]
    fn the_chart_gives_each_device_its_energy_by_counter_else_by_power() {
        let by_counter = LineEnergy {
            window: "train".into(),
            counter_j: Some(1700.0),
            power_j: Some(1650.0),
            net_j: Some(1160.0),
            ..LineEnergy::default()
        };
        let by_power = LineEnergy {
            window: "train".into(),
            power_j: Some(812.4),
            ..LineEnergy::default()
        };
        let none = LineEnergy {
            window: "train".into(),
            ..LineEnergy::default()
        };
        let trace = Trace {
            name: "output0-vae".into(),
            run: "output0".into(),
            bench: "vae".into(),
            lines: vec![
                line(0, vec![by_counter]),
                line(1, vec![by_power]),
                line(2, vec![none]),
            ],
            windows: vec![TraceWindow {
                name: "train".into(),
                copy: 0,
                start_s: 1.0,
                end_s: 4.0,
            }],
            facts: vec!["The copies' files are put on one time axis.".into()],
        };
        let charts = power_charts(std::slice::from_ref(&trace)).unwrap();
        assert_eq!(charts.len(), 1);
        assert_eq!(charts[0].0, "power-output0-vae");
        let all = texts(&charts[0].1.svg);
        assert!(all.contains("Power of vae in output0"), "{all}");
        assert!(
            all.contains("3 device lines of 3 copies, sampled at 10 Hz"),
            "{all}"
        );
        assert!(
            all.contains("train 1.70 kJ (1.16 kJ net of idle 90.0 W)"),
            "{all}"
        );
        assert!(all.contains("copy 1: train 812 J"), "{all}");
        // No energy for copy 2: its label says only its idle level.
        assert!(all.contains("copy 2: idle 90.0 W"), "{all}");
        assert!(
            all.contains("The copies' files are put on one time axis."),
            "{all}"
        );
        assert!(all.contains("time since sampling began (s)"), "{all}");
    }
}
