//! A page section of power traces: one inline figure per bench and run folder.
//!
//! Not on the report or grid pages yet: [`mlbench_results::ReportPage`] does not carry the
//! traces. Wiring it is one field there (the traces, or the loaded run folders) and one
//! line in `pages::report`: `sections.extend(power_section(&page.power)?)`.

use super::{Block, Section};
use crate::ExportError;
use crate::charts::power_chart;
use mlbench_results::trace::Trace;

/// The section "Power" with each trace's chart as an inline SVG figure, captioned with
/// what it shows; `None` without traces.
pub fn power_section(traces: &[Trace]) -> Result<Option<Section>, ExportError> {
    if traces.is_empty() {
        return Ok(None);
    }
    let mut blocks = vec![Block::Paragraph(
        "Each device's power over time as sampled beside the bench; the shaded spans are \
         the timed windows the figures are computed over, the dashed levels the idle \
         baselines, and the legend gives each device's energy over each window (by its \
         counter where it has one; the whole board's or package's)."
            .into(),
    )];
    for t in traces {
        blocks.push(Block::Svg {
            caption: format!(
                "Power of {} in {}",
                mlbench_plots::shortened(&t.bench),
                mlbench_plots::shortened(&t.run)
            ),
            svg: power_chart(t)?.svg,
        });
    }
    Ok(Some(Section {
        heading: "Power".into(),
        blocks,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{HtmlDoc, render};
    use mlbench_results::trace::{TraceLine, TraceWindow};

    fn trace(bench: &str) -> Trace {
        Trace {
            name: format!("output0-{bench}"),
            run: "output0".into(),
            bench: bench.into(),
            lines: vec![TraceLine {
                label: "cuda:0".into(),
                device: "cuda:0".into(),
                period_s: 1.0,
                points: vec![(0.0, 100.0), (1.0, 300.0), (2.0, 100.0)],
                ..TraceLine::default()
            }],
            windows: vec![TraceWindow {
                name: "train".into(),
                copy: 0,
                start_s: 0.5,
                end_s: 1.5,
            }],
            ..Trace::default()
        }
    }

    #[test]
    fn a_figure_per_trace_survives_the_page() {
        assert!(power_section(&[]).unwrap().is_none());
        let section = power_section(&[trace("vae"), trace("cart")])
            .unwrap()
            .unwrap();
        assert_eq!(section.heading, "Power");
        let figures = section
            .blocks
            .iter()
            .filter(|b| matches!(b, Block::Svg { .. }))
            .count();
        assert_eq!(figures, 2);
        let page = render(&HtmlDoc {
            title: "power".into(),
            sections: vec![section],
            ..HtmlDoc::default()
        });
        assert_eq!(
            page.matches("<svg").count(),
            2,
            "both figures kept by the sanitizer"
        );
        assert!(
            page.contains("Power of vae in output0") && page.contains("Power of cart in output0")
        );
    }
}
