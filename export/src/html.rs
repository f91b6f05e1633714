//! HTML: one self-contained page (inline CSS, no script, no fetch) from plain data.
//!
//! The builder knows nothing of reports or grids: callers fill an [`HtmlDoc`] with
//! sections of paragraphs, tables, figures and verdicts, and [`render`] writes the page.
//! The output depends on the document only (no clock, no environment), so the same
//! input gives the same bytes. A Content-Security-Policy in the page forbids scripts and
//! every load, so a stray reference shows up as a console error in `scripts/check-html.sh`.
//!
//! [`Html`] is the exporter of the report and grid pages ([`pages`] lays them out).

mod pages;
mod power;
mod svg;

use crate::{ExportError, Exporter};
pub use mlbench_results::Provenance;
use mlbench_results::{GridPage, ReportPage};
pub use power::power_section;
use std::fmt::Write as _;
pub use svg::sanitize_svg;

/// One self-contained HTML page (`--html`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Html;

impl Exporter<ReportPage> for Html {
    fn export(&self, page: &ReportPage) -> Result<Vec<u8>, ExportError> {
        Ok(render(&report_doc(page)?).into_bytes())
    }
}

impl Exporter<GridPage> for Html {
    fn export(&self, page: &GridPage) -> Result<Vec<u8>, ExportError> {
        Ok(render(&grid_doc(page)?).into_bytes())
    }
}

/// The report page's document, to add sections to before [`render`]. Its charts are
/// drawn as SVG only ([`mlbench_plots::svg_only`]): the page inlines nothing else.
pub fn report_doc(page: &ReportPage) -> Result<HtmlDoc, ExportError> {
    mlbench_plots::svg_only(|| pages::report(page))
}

/// The grid page's document, to add sections to before [`render`] (charts as SVG only).
pub fn grid_doc(page: &GridPage) -> Result<HtmlDoc, ExportError> {
    mlbench_plots::svg_only(|| pages::grid(page))
}

/// A page: a title, sections in order, and where its figures came from.
#[derive(Debug, Clone, Default)]
pub struct HtmlDoc {
    /// The `<title>` and the `<h1>`.
    pub title: String,
    /// A line under the title (suite, GPU model, scoring…).
    pub subtitle: Option<String>,
    /// The body; a table of contents precedes it when there are three or more.
    pub sections: Vec<Section>,
    /// The footer: tool, command line, input files and their digests.
    pub provenance: Provenance,
}

/// A section of the page, with its own `<h2>` and anchor.
#[derive(Debug, Clone, Default)]
pub struct Section {
    /// The heading, also the entry in the table of contents.
    pub heading: String,
    /// The content, in order.
    pub blocks: Vec<Block>,
}

/// One piece of content. All text is escaped; only [`Block::Svg`] carries markup.
#[derive(Debug, Clone)]
pub enum Block {
    /// A paragraph of text.
    Paragraph(String),
    /// A bulleted list of remarks (what was skipped, assumed, departed from).
    Notes(Vec<String>),
    /// A table with a caption.
    Table(HtmlTable),
    /// An inline SVG figure; scripts and event handlers are removed ([`sanitize_svg`]).
    Svg {
        /// The `<figcaption>`.
        caption: String,
        /// The `<svg>…</svg>` document.
        svg: String,
    },
    /// A PASS/FAIL verdict, as a badge with words (not colour alone) and a sentence.
    Status {
        /// Whether it passed.
        passed: bool,
        /// What passed or failed.
        text: String,
    },
    /// A table whose cells may link to other files of the same site: `hrefs[row][column]`
    /// (missing entries: plain text). Only relative links are drawn as links; one with a
    /// scheme (`https:`) or a host (`//`) is shown as text, so no page sends a reader, or a
    /// browser, outside its folder.
    Linked {
        /// The table.
        table: HtmlTable,
        /// Each cell's link, row by row.
        hrefs: Vec<Vec<Option<String>>>,
    },
    /// The validator's findings: counts and one row per finding.
    Findings {
        /// Number of errors.
        errors: usize,
        /// Number of warnings.
        warnings: usize,
        /// The findings, in the order to show.
        lines: Vec<FindingLine>,
    },
}

/// One finding of [`Block::Findings`].
#[derive(Debug, Clone, Default)]
pub struct FindingLine {
    /// `error`, `warning` or `note` (others are shown as notes).
    pub severity: String,
    /// The rule's id.
    pub rule: String,
    /// File, entry or field.
    pub location: String,
    /// What is wrong.
    pub message: String,
}

/// A table: caption, header, rows of text, and which columns hold figures.
#[derive(Debug, Clone, Default)]
pub struct HtmlTable {
    /// The `<caption>`.
    pub caption: String,
    /// The column names.
    pub header: Vec<String>,
    /// The cells, row by row; short rows are padded with empty cells.
    pub rows: Vec<Vec<String>>,
    /// Columns right-aligned in tabular figures; missing entries mean text.
    pub numeric: Vec<bool>,
    /// The anchor (`id`); made safe and unique in the page.
    pub id: String,
}

/// Escapes text for HTML content and for quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// An anchor: ASCII letters, digits, `-` and `_`, unique in the page.
fn anchor(wanted: &str, used: &mut Vec<String>) -> String {
    let mut base: String = wanted
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    base = base.trim_matches('-').to_owned();
    if base.is_empty() {
        base = "x".into();
    }
    let mut id = base.clone();
    let mut n = 1;
    while used.contains(&id) {
        n += 1;
        id = format!("{base}-{n}");
    }
    used.push(id.clone());
    id
}

const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

const CSS: &str = include_str!("html/page.css");

/// Renders the page: HTML5, UTF-8, inline CSS, no script.
pub fn render(doc: &HtmlDoc) -> String {
    let mut used = Vec::new();
    let section_ids: Vec<String> = doc
        .sections
        .iter()
        .map(|s| anchor(&format!("sec-{}", s.heading), &mut used))
        .collect();
    let mut out = String::with_capacity(16 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        out,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
    );
    let _ = writeln!(out, "<title>{}</title>", escape(&doc.title));
    let _ = write!(out, "<style>\n{CSS}</style>\n</head>\n<body>\n<header>\n");
    let _ = writeln!(out, "<h1>{}</h1>", escape(&doc.title));
    if let Some(subtitle) = &doc.subtitle {
        let _ = writeln!(out, "<p class=\"subtitle\">{}</p>", escape(subtitle));
    }
    out.push_str("</header>\n");
    if doc.sections.len() >= 3 {
        out.push_str("<nav aria-label=\"Contents\">\n<h2>Contents</h2>\n<ol>\n");
        for (section, id) in doc.sections.iter().zip(&section_ids) {
            let _ = writeln!(
                out,
                "<li><a href=\"#{id}\">{}</a></li>",
                escape(&section.heading)
            );
        }
        out.push_str("</ol>\n</nav>\n");
    }
    out.push_str("<main>\n");
    for (section, id) in doc.sections.iter().zip(&section_ids) {
        let _ = writeln!(out, "<section id=\"{id}\">");
        let _ = writeln!(out, "<h2>{}</h2>", escape(&section.heading));
        for block in &section.blocks {
            render_block(&mut out, block, &mut used);
        }
        out.push_str("</section>\n");
    }
    out.push_str("</main>\n");
    render_provenance(&mut out, &doc.provenance, &mut used);
    out.push_str("</body>\n</html>\n");
    out
}

fn render_block(out: &mut String, block: &Block, used: &mut Vec<String>) {
    match block {
        Block::Paragraph(text) => {
            let _ = writeln!(out, "<p>{}</p>", escape(text));
        }
        Block::Notes(notes) if notes.is_empty() => {}
        Block::Notes(notes) => {
            out.push_str("<ul class=\"notes\">\n");
            for note in notes {
                let _ = writeln!(out, "<li>{}</li>", escape(note));
            }
            out.push_str("</ul>\n");
        }
        Block::Table(table) => render_table(out, table, &[], used),
        Block::Linked { table, hrefs } => render_table(out, table, hrefs, used),
        Block::Svg { caption, svg } => {
            out.push_str("<figure>\n");
            match sanitize_svg(svg) {
                Some(svg) => {
                    out.push_str(&svg);
                    out.push('\n');
                }
                None => out.push_str("<p class=\"notes\">(figure left out: not a plain SVG)</p>\n"),
            }
            let _ = writeln!(
                out,
                "<figcaption>{}</figcaption>\n</figure>",
                escape(caption)
            );
        }
        Block::Status { passed, text } => {
            let (class, word) = if *passed {
                ("pass", "✓ PASS")
            } else {
                ("fail", "✗ FAIL")
            };
            let _ = writeln!(
                out,
                "<p class=\"status {class}\"><span class=\"badge\">{word}</span> {}</p>",
                escape(text)
            );
        }
        Block::Findings {
            errors,
            warnings,
            lines,
        } => {
            // Counts, not a second status: a page shows one status, at its top.
            let plural =
                |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
            let class = if *errors == 0 {
                "counts"
            } else {
                "counts failing"
            };
            let _ = writeln!(
                out,
                "<p class=\"{class}\">{}, {}</p>",
                plural(*errors, "error"),
                plural(*warnings, "warning")
            );
            if lines.is_empty() {
                return;
            }
            let id = anchor("findings", used);
            let _ = writeln!(out, "<table id=\"{id}\">\n<caption>Findings</caption>");
            out.push_str("<thead><tr><th scope=\"col\">severity</th><th scope=\"col\">rule</th><th scope=\"col\">location</th><th scope=\"col\">message</th></tr></thead>\n<tbody>\n");
            for line in lines {
                let class = match line.severity.as_str() {
                    "error" => "fail",
                    "warning" => "warning",
                    _ => "note",
                };
                let _ = writeln!(
                    out,
                    "<tr><td><span class=\"badge {class}\">{}</span></td><td><code>{}</code></td><td class=\"mono\">{}</td><td>{}</td></tr>",
                    escape(&line.severity),
                    escape(&line.rule),
                    escape(&line.location),
                    escape(&line.message)
                );
            }
            out.push_str("</tbody>\n</table>\n");
        }
    }
}

/// Whether `href` stays within the page's folder tree: no scheme, no host, no absolute path.
pub fn is_relative_link(href: &str) -> bool {
    let before_slash = href.split(['/', '?', '#']).next().unwrap_or("");
    !href.is_empty() && !href.starts_with('/') && !before_slash.contains(':')
}

fn render_table(
    out: &mut String,
    table: &HtmlTable,
    hrefs: &[Vec<Option<String>>],
    used: &mut Vec<String>,
) {
    let id = anchor(&table.id, used);
    let columns = table
        .rows
        .iter()
        .map(Vec::len)
        .chain([table.header.len()])
        .max()
        .unwrap_or(0);
    let class = |i: usize| {
        if table.numeric.get(i).copied().unwrap_or(false) {
            " class=\"num\""
        } else {
            ""
        }
    };
    let _ = writeln!(out, "<table id=\"{id}\">");
    let _ = writeln!(out, "<caption>{}</caption>", escape(&table.caption));
    out.push_str("<thead><tr>");
    for i in 0..columns {
        let name = table.header.get(i).map_or("", String::as_str);
        let _ = write!(out, "<th scope=\"col\"{}>{}</th>", class(i), escape(name));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    if table.rows.is_empty() {
        let _ = writeln!(
            out,
            "<tr><td class=\"empty\" colspan=\"{}\">(no rows)</td></tr>",
            columns.max(1)
        );
    }
    for (r, row) in table.rows.iter().enumerate() {
        out.push_str("<tr>");
        for i in 0..columns {
            let cell = row.get(i).map_or("", String::as_str);
            let href = (hrefs.get(r).and_then(|h| h.get(i)))
                .and_then(Option::as_deref)
                .filter(|h| is_relative_link(h));
            match href {
                Some(h) => {
                    let (h, c) = (escape(h), escape(cell));
                    let _ = write!(out, "<td{}><a href=\"{h}\">{c}</a></td>", class(i));
                }
                None => {
                    let _ = write!(out, "<td{}>{}</td>", class(i), escape(cell));
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

fn render_provenance(out: &mut String, p: &Provenance, used: &mut Vec<String>) {
    out.push_str("<footer>\n<h2>Provenance</h2>\n<dl>\n");
    let _ = writeln!(out, "<dt>Tool</dt><dd>{}</dd>", escape(&p.tool));
    let _ = writeln!(
        out,
        "<dt>Command</dt><dd><code>{}</code></dd>",
        escape(&p.command)
    );
    if let Some(when) = &p.generated {
        let _ = writeln!(out, "<dt>Generated</dt><dd>{}</dd>", escape(when));
    }
    out.push_str("</dl>\n");
    if p.inputs.is_empty() {
        out.push_str("<p>No input files recorded.</p>\n");
    } else {
        let table = HtmlTable {
            caption: "Input files".into(),
            header: vec!["file".into(), "SHA-256".into()],
            rows: p
                .inputs
                .iter()
                .map(|(path, digest)| vec![path.clone(), digest.clone()])
                .collect(),
            numeric: Vec::new(),
            id: "inputs".into(),
        };
        render_table(out, &table, &[], used);
    }
    out.push_str("</footer>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document CI renders in a browser (`.ci/run`) and the snapshot shows.
    fn sample() -> HtmlDoc {
        let table = HtmlTable {
            caption: "Benches".into(),
            header: ["bench", "n", "result", "sd%"].map(String::from).into(),
            rows: vec![
                ["atari", "5", "5.470", "0.42%"].map(String::from).into(),
                ["cart <&> \"q\"", "5", "2021.52", "0.30%"]
                    .map(String::from)
                    .into(),
            ],
            numeric: vec![false, true, true, true],
            id: "benches".into(),
        };
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"240\" height=\"80\" \
                   onload=\"alert(1)\"><rect x=\"10\" y=\"10\" width=\"120\" height=\"60\" \
                   fill=\"#0969da\"/><script>alert(2)</script><text x=\"140\" y=\"45\">\
                   result</text></svg>";
        HtmlDoc {
            title: "mlbench report: suite `fast`".into(),
            subtitle: Some("RTX targets, classic scoring".into()),
            sections: vec![
                Section {
                    heading: "Result".into(),
                    blocks: vec![
                        Block::Status {
                            passed: true,
                            text: "every criterion met".into(),
                        },
                        Block::Status {
                            passed: false,
                            text: "a <b>failed</b> one".into(),
                        },
                        Block::Paragraph("5 runs × 2 GPUs".into()),
                    ],
                },
                Section {
                    heading: "Benches".into(),
                    blocks: vec![
                        Block::Table(table),
                        Block::Notes(vec!["one note".into()]),
                        Block::Svg {
                            caption: "A figure".into(),
                            svg: svg.into(),
                        },
                    ],
                },
                Section {
                    heading: "Findings".into(),
                    blocks: vec![Block::Findings {
                        errors: 1,
                        warnings: 0,
                        lines: vec![FindingLine {
                            severity: "error".into(),
                            rule: "entry/nan-loss".into(),
                            location: "output0/fast_0.json#3".into(),
                            message: "loss is NaN".into(),
                        }],
                    }],
                },
            ],
            provenance: Provenance {
                tool: "mlbench 0.1.0".into(),
                command: "mlbench report --reports 'a b' --html out.html".into(),
                inputs: vec![("a b/fast_0.json".into(), "ab".repeat(32))],
                generated: None,
            },
        }
    }

    #[test]
    fn snapshot_of_a_small_page() {
        insta::assert_snapshot!(render(&sample()));
    }

    #[test]
    fn same_document_same_bytes() {
        assert_eq!(render(&sample()), render(&sample()));
    }

    #[test]
    fn a_linked_table_links_only_within_its_folder_tree() {
        let hrefs = [
            "a/b.html",
            "../../zips/x.zip",
            "https://example.com/",
            "//host/x",
            "/etc/passwd",
            "javascript:alert(1)",
            "x\"y",
        ];
        let table = HtmlTable {
            caption: "Links".into(),
            header: vec!["link".into()],
            rows: hrefs.iter().map(|h| vec![format!("to {h}")]).collect(),
            ..HtmlTable::default()
        };
        let doc = HtmlDoc {
            title: "t".into(),
            sections: vec![Section {
                heading: "s".into(),
                blocks: vec![Block::Linked {
                    table,
                    hrefs: hrefs.iter().map(|h| vec![Some((*h).to_owned())]).collect(),
                }],
            }],
            ..HtmlDoc::default()
        };
        let page = render(&doc);
        let links: Vec<&str> = page
            .split("<a href=\"")
            .skip(1)
            .map(|s| &s[..s.find('"').unwrap()])
            .collect();
        // The anchors of the contents aside (none: one section), exactly the relative three.
        assert_eq!(links, ["a/b.html", "../../zips/x.zip", "x&quot;y"]);
        assert!(page.contains("<td>to https://example.com/</td>"));
    }

    #[test]
    fn escape_neutralises_markup_and_quotes() {
        assert_eq!(
            escape("<script>alert('x')</script>"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"
        );
        assert_eq!(escape("a & b \"c\""), "a &amp; b &quot;c&quot;");
        assert_eq!(escape("&amp;"), "&amp;amp;");
        assert_eq!(escape("5 runs × 2 — ok"), "5 runs × 2 — ok");
        let mut doc = sample();
        doc.title = "<script>alert(1)</script>".into();
        doc.sections[0].heading = "\"><img src=x onerror=alert(1)>".into();
        let html = render(&doc);
        assert!(!html.contains("<script>alert(1)"));
        assert!(!html.contains("<img"));
        assert!(html.contains("<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>"));
    }

    #[test]
    fn a_figure_that_is_not_plain_svg_is_left_out() {
        let mut doc = sample();
        doc.sections[1].blocks = vec![Block::Svg {
            caption: "c".into(),
            svg: "<img>".into(),
        }];
        let html = render(&doc);
        assert!(html.contains("figure left out") && !html.contains("<img"));
    }

    #[test]
    fn page_structure() {
        let html = render(&sample());
        assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
        assert_eq!(html.matches("<html").count(), 1);
        assert_eq!(html.matches("</html>").count(), 1);
        assert!(html.contains("<meta charset=\"utf-8\">"));
        assert!(html.contains("name=\"viewport\""));
        for tag in [
            "table", "thead", "tbody", "tr", "section", "figure", "footer",
        ] {
            let open = html.matches(&format!("<{tag}>")).count()
                + html.matches(&format!("<{tag} ")).count();
            assert_eq!(open, html.matches(&format!("</{tag}>")).count(), "<{tag}>");
        }
        let tables = html.matches("<table").count();
        assert_eq!(tables, 3, "benches, findings, inputs");
        assert_eq!(html.matches("<table id=\"").count(), tables);
        for table in html.split("<table").skip(1) {
            assert!(
                table
                    .trim_start_matches(|c| c != '>')
                    .starts_with(">\n<caption>")
            );
        }
        assert_eq!(html.matches("<script").count(), 0);
        assert!(html.contains("@media print"));
        assert!(html.contains("<td class=\"num\">2021.52</td>"));
        assert!(html.contains("<span class=\"badge\">✓ PASS</span>"));
        assert!(html.contains("<span class=\"badge\">✗ FAIL</span>"));
        // External loads: none but fragment links.
        assert_eq!(
            html.matches("href=\"").count(),
            html.matches("href=\"#").count()
        );
        assert!(!html.contains("src="));
        let footer = &html[html.find("<footer>").unwrap()..];
        assert!(footer.contains(&"ab".repeat(32)) && footer.contains("mlbench 0.1.0"));
    }

    #[test]
    fn contents_only_from_three_sections_and_unique_anchors() {
        let mut doc = sample();
        assert!(render(&doc).contains("<nav aria-label=\"Contents\">"));
        doc.sections.truncate(2);
        assert!(!render(&doc).contains("<nav"));
        let mut used = Vec::new();
        assert_eq!(anchor("A b/c", &mut used), "a-b-c");
        assert_eq!(anchor("a-b-c", &mut used), "a-b-c-2");
        assert_eq!(anchor("\"><", &mut used), "x");
    }
}
