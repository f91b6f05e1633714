//! The site's HTML pages: export's report and grid pages with the site's links added
//! (where each figure came from, and the way back), the history, and the index. Every
//! link is relative: the site is read from its folder, with no server.

use crate::error::SiteError;
use crate::files::{SiteFile, json, slug_of, tool};
use crate::index::{SiteEntry, SiteIndex, SiteRound};
use mlbench_export::html::{Block, HtmlDoc, HtmlTable, Section, grid_doc, render, report_doc};
use mlbench_results::history::History;
use mlbench_results::{GridPage, Provenance, ReportPage};

/// `up` (`../../`) before a path from the site's root.
fn from(up: &str, path: &str) -> Option<String> {
    Some(format!("{up}{path}"))
}

fn linked(
    caption: &str,
    id: &str,
    header: &[&str],
    rows: Vec<Vec<(String, Option<String>)>>,
) -> Block {
    let hrefs = rows
        .iter()
        .map(|r| r.iter().map(|c| c.1.clone()).collect())
        .collect();
    let table = HtmlTable {
        caption: caption.into(),
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows: rows
            .into_iter()
            .map(|r| r.into_iter().map(|c| c.0).collect())
            .collect(),
        numeric: Vec::new(),
        id: id.into(),
    };
    Block::Linked { table, hrefs }
}

/// The way back: the index and the history.
fn site_section(up: &str) -> Section {
    let rows = vec![vec![
        ("index of rounds".to_owned(), from(up, "index.html")),
        ("history".to_owned(), from(up, "history/index.html")),
        ("SHA256SUMS".to_owned(), from(up, "SHA256SUMS")),
    ]];
    Section {
        heading: "Site".into(),
        blocks: vec![linked(
            "This site",
            "site",
            &["index", "history", "checksums"],
            rows,
        )],
    }
}

/// Where a submission's figures came from: its zip, its jobs files and machine
/// descriptions, its report, its JSON.
fn sources_rows(up: &str, entries: &[&SiteEntry]) -> Vec<Vec<(String, Option<String>)>> {
    (entries.iter())
        .map(|e| {
            let files = e.files.iter().map(|f| {
                let name = f.rsplit('/').next().unwrap_or(f).to_owned();
                (name, from(up, f))
            });
            let mut row = vec![
                (e.row(), from(up, &e.page)),
                (e.gpus.clone().unwrap_or_default(), None),
                (e.runtime.clone().unwrap_or_default(), None),
                (if e.passed { "pass" } else { "FAIL" }.to_owned(), None),
                (
                    format!("{}.zip", &e.sha256[..12.min(e.sha256.len())]),
                    from(up, &e.zip),
                ),
                ("report.json".to_owned(), from(up, &e.json)),
            ];
            row.extend(files);
            row
        })
        .collect()
}

const SOURCES: [&str; 7] = [
    "submission",
    "hardware",
    "runtime",
    "valid",
    "zip",
    "figures",
    "jobs file, system.json",
];

const ROUND_AND_SOURCES: [&str; 8] = [
    "round",
    "submission",
    "hardware",
    "runtime",
    "valid",
    "zip",
    "figures",
    "jobs file, system.json",
];

fn page_bytes(doc: &HtmlDoc) -> Vec<u8> {
    render(doc).into_bytes()
}

fn error_doc(title: String, why: &str, provenance: Provenance) -> HtmlDoc {
    HtmlDoc {
        title,
        subtitle: None,
        sections: vec![Section {
            heading: "No figures".into(),
            blocks: vec![Block::Paragraph(format!("No figures could be made: {why}"))],
        }],
        provenance,
    }
}

fn site_provenance(command: String) -> Provenance {
    Provenance {
        tool: tool(),
        command,
        inputs: Vec::new(),
        generated: None,
    }
}

/// A round's page: its grid (hardware, runtime and validity per row), then where each
/// row came from.
pub(crate) fn round_page(
    round: &SiteRound,
    page: Result<&GridPage, &String>,
) -> Result<Vec<u8>, SiteError> {
    let up = "../../";
    let title = format!("Round {}", round.round);
    let mut doc = match page {
        Ok(p) => {
            let mut d = grid_doc(p)?;
            d.title = format!("{title}: {}", d.title);
            d
        }
        Err(why) => error_doc(title, why, site_provenance("mlbench publish".into())),
    };
    let entries: Vec<&SiteEntry> = round.entries.iter().collect();
    let sources = Section {
        heading: "Sources".into(),
        blocks: vec![
            Block::Paragraph(format!(
                "Each row's zip, the files copied out of it, and its report. The grid's figures: {} (the command in the provenance below remakes them in this folder).",
                round.json.rsplit('/').next().unwrap_or("")
            )),
            linked(
                "Where each row came from",
                "sources",
                &SOURCES,
                sources_rows(up, &entries),
            ),
            linked(
                "This page's figures",
                "figures",
                &["JSON"],
                vec![vec![("grid.json".into(), Some("grid.json".into()))]],
            ),
        ],
    };
    doc.sections.insert(0, site_section(up));
    doc.sections.push(sources);
    Ok(page_bytes(&doc))
}

/// A submission's page: its report, then where it came from.
pub(crate) fn submission_page(
    e: &SiteEntry,
    page: Result<&ReportPage, &String>,
) -> Result<Vec<u8>, SiteError> {
    let up = "../../";
    let title = format!("{} in round {}", e.row(), e.round);
    let mut doc = match page {
        Ok(p) => {
            let mut d = report_doc(p)?;
            d.title = format!("{title}: {}", d.title);
            d
        }
        Err(why) => error_doc(
            title,
            why,
            site_provenance(format!("mlbench report {}", e.zip)),
        ),
    };
    let round = format!("rounds/{}/index.html", slug_of(&e.round));
    let sources = Section {
        heading: "Sources".into(),
        blocks: vec![
            linked(
                "Where it came from",
                "sources",
                &SOURCES,
                sources_rows(up, &[e]),
            ),
            linked(
                "Its round",
                "round",
                &["round", "figures"],
                vec![vec![
                    (e.round.clone(), from(up, &round)),
                    ("report.json".into(), Some("report.json".into())),
                ]],
            ),
        ],
    };
    doc.sections.insert(0, site_section(up));
    doc.sections.push(sources);
    Ok(page_bytes(&doc))
}

/// The history page: one panel per bench, then every series' table.
pub(crate) fn history_page(index: &SiteIndex, history: &History) -> Result<Vec<u8>, SiteError> {
    let up = "../";
    let rows =
        mlbench_export::rows::history::history_rows(history, mlbench_export::rows::Form::People);
    // The page inlines the SVG only.
    let panels = mlbench_plots::svg_only(|| mlbench_export::charts::history_charts(history))?;
    let mut sections = vec![site_section(up)];
    sections.push(Section {
        heading: "Changes".into(),
        blocks: vec![
            Block::Paragraph(rows.title.clone()),
            Block::Linked {
                table: HtmlTable {
                    caption: "Every series, round by round (change: this round's mean ÷ the series' previous round's; each round links to the submission it came from)".into(),
                    header: rows.header.clone(),
                    rows: rows.rows.clone(),
                    numeric: vec![false, false, false, false, false, true, true, true, true, true, true, true, false],
                    id: "history".into(),
                },
                // In the rows' order: series by series, point by point; the round's cell.
                hrefs: (history.series.iter().flat_map(|s| &s.points))
                    .map(|p| {
                        let page = format!("{up}submissions/{}/index.html", p.sha256);
                        vec![None, None, None, None, Some(page)]
                    })
                    .collect(),
            },
            linked("This page's figures", "figures", &["JSON"], vec![vec![("history.json".into(), Some("history.json".into()))]]),
        ],
    });
    sections.push(Section {
        heading: "By bench".into(),
        blocks: (panels.into_iter())
            .map(|(name, chart)| Block::Svg {
                caption: name,
                svg: chart.svg,
            })
            .collect(),
    });
    let doc = HtmlDoc {
        title: "History of the rounds".into(),
        subtitle: Some(format!(
            "{} rounds; published for {}",
            history.rounds.len(),
            index.now
        )),
        sections,
        provenance: site_provenance(format!("mlbench history --now {}", index.now)),
    };
    Ok(page_bytes(&doc))
}

/// `index.html` and `index.json`.
pub(crate) fn index_files(index: &SiteIndex) -> Result<Vec<SiteFile>, SiteError> {
    let rounds = (index.rounds.iter())
        .map(|r| {
            vec![
                (r.round.clone(), Some(r.page.clone())),
                (r.entries.len().to_string(), None),
                ("grid.json".into(), Some(r.json.clone())),
            ]
        })
        .collect();
    let entries: Vec<&SiteEntry> = index.entries().collect();
    let left_out = format!(
        "{} left out: released after {}; {} removed from the store.",
        mlbench_schema::words::count(index.unreleased, "submission", "submissions"),
        index.now,
        index.removed
    );
    let doc = HtmlDoc {
        title: "Benchmark rounds".into(),
        subtitle: Some(format!("Published for {} by {}", index.now, index.tool)),
        sections: vec![
            Section {
                heading: "Rounds".into(),
                blocks: vec![
                    linked("Every round", "rounds", &["round", "submissions", "figures"], rounds),
                    Block::Paragraph(left_out),
                ],
            },
            Section {
                heading: "Submissions".into(),
                blocks: vec![linked("Every submission", "submissions", &ROUND_AND_SOURCES, {
                    let mut rows = sources_rows("", &entries);
                    for (row, e) in rows.iter_mut().zip(&entries) {
                        let page = format!("rounds/{}/index.html", slug_of(&e.round));
                        row.insert(0, (e.round.clone(), Some(page)));
                    }
                    rows
                })],
            },
            Section {
                heading: "Check it".into(),
                blocks: vec![
                    Block::Paragraph("Every figure of this site can be made again from its zips: `mlbench verify DIR` on a copy of this folder recomputes each page's JSON and checks SHA256SUMS.".into()),
                    linked("This site", "site", &["history", "index", "checksums"], vec![vec![
                        ("history".into(), Some(index.history[0].clone())),
                        ("index.json".into(), Some("index.json".into())),
                        ("SHA256SUMS".into(), Some("SHA256SUMS".into())),
                    ]]),
                ],
            },
        ],
        provenance: site_provenance(format!("mlbench publish --now {}", index.now)),
    };
    Ok(vec![
        ("index.json".into(), json(index)?),
        ("index.html".into(), page_bytes(&doc)),
    ])
}
