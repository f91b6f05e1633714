//! Every page of a site, made from the zips in it: each round's grid, each submission's
//! report, the history and the index, each as JSON and HTML. `publish` writes what this
//! makes; `verify` makes it again and compares.

use crate::error::SiteError;
use crate::files::{SiteFile, no_figures, tool};
use crate::history::history_of;
use crate::index::{SiteEntry, SiteIndex, SiteRound};
use crate::pages;
use mlbench_analyzer::compare::{self, CompareOptions, Keep, Labelled};
use mlbench_analyzer::grid_page::PageExtras;
use mlbench_analyzer::history::HistoryOptions;
use mlbench_export::{Exporter, Json};
use mlbench_results::{Grid, Provenance, ReportPage};
use mlbench_validator::layout::{Role, classify};
use std::path::{Path, PathBuf};

/// Every page of the site whose zips are under `root` (`zips/<sha256>.zip`), as `index`
/// lists them; `index`'s entries get the files copied out of their zips. The pages'
/// paths are relative to `root`, and so is every path they show.
pub(crate) fn build(root: &Path, index: &mut SiteIndex) -> Result<Vec<SiteFile>, SiteError> {
    let root_text = format!("{}/", root.display());
    let mut files = Vec::new();
    for round in &mut index.rounds {
        files.extend(round_files(root, round, index.options.clone())?);
    }
    let entries: Vec<&SiteEntry> = index.entries().collect();
    let reports = on_threads(&entries, |e| {
        report_files(root, e, &index.options.gpu_model)
    });
    for r in reports {
        files.extend(r?);
    }
    files.extend(history_files(root, index)?);
    files.extend(pages::index_files(index)?);
    // A path the analysis names is the site's own, without the folder it lies in.
    for (_, bytes) in &mut files {
        if let Ok(text) = std::str::from_utf8(bytes)
            && text.contains(&root_text)
        {
            *bytes = text.replace(&root_text, "").into_bytes();
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// `f` of every item, in order, on as many plain threads as there are cores, each taking
/// the next item when done. Not rayon's pool: a report waits on Polars' pool, and a
/// rayon worker that waits takes another job meanwhile, so thousands of reports nested
/// on one worker's stack until it overflowed.
fn on_threads<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.min(items.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break out };
                        out.push((i, f(item)));
                    }
                })
            })
            .collect();
        (workers.into_iter())
            .flat_map(|w| {
                w.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// A round's grid page and JSON, and the files copied out of its zips (each entry's
/// `files` set).
fn round_files(
    root: &Path,
    round: &mut SiteRound,
    site: crate::index::SiteOptions,
) -> Result<Vec<SiteFile>, SiteError> {
    let paths: Vec<PathBuf> = round.entries.iter().map(|e| root.join(&e.zip)).collect();
    let options = CompareOptions {
        labels: (round.entries.iter().zip(&paths))
            .map(|(e, p)| (e.label.clone(), p.clone()))
            .collect(),
        resamples: site.resamples,
        seed: site.seed,
        allow_mixed_runtimes: true,
        ..CompareOptions::default()
    };
    let grid_error = |source| SiteError::Grid {
        round: round.round.clone(),
        source,
    };
    let loaded = compare::load_all(&paths, &options, Keep::Reports).map_err(grid_error)?;
    let mut files = Vec::new();
    for (entry, l) in round.entries.iter_mut().zip(&loaded) {
        let copied = copied_files(entry, l);
        entry.files = copied.iter().map(|(p, _)| p.clone()).collect();
        files.extend(copied);
    }
    let extras = PageExtras::of(&loaded);
    let per = mlbench_results::grid::Per::Second;
    let command = grid_command(round);
    let page = match mlbench_analyzer::energy::grid_per(loaded, &paths, &options, None, per) {
        Ok(grid) => Ok(extras.page(grid, |inputs| provenance(command, inputs))),
        Err(e) => Err(e.to_string()),
    };
    let json = match &page {
        Ok(p) => Exporter::<Grid>::export(&Json, &p.grid)?,
        Err(e) => no_figures(e)?,
    };
    let html = pages::round_page(round, page.as_ref())?;
    files.push((round.json.clone(), json));
    files.push((round.page.clone(), html));
    Ok(files)
}

/// The command that makes a round's grid again, in the site's folder.
fn grid_command(round: &SiteRound) -> String {
    let mut words = vec!["mlbench grid --allow-mixed-runtimes".to_owned()];
    for e in &round.entries {
        words.push(format!("--label {}={}", e.label, e.zip));
    }
    words.extend(round.entries.iter().map(|e| e.zip.clone()));
    words.join(" ")
}

fn provenance(command: String, inputs: Vec<(String, String)>) -> Provenance {
    Provenance {
        tool: tool(),
        command,
        inputs,
        generated: None,
    }
}

/// A submission's jobs files and machine descriptions, copied out of its zip to
/// `submissions/<sha256>/files/…` (each path's parts made safe).
fn copied_files(entry: &SiteEntry, l: &Labelled) -> Vec<SiteFile> {
    let wanted = |f: &&mlbench_submission::SubmittedFile| {
        let name = f.path.rsplit('/').next().unwrap_or("");
        let system = name.starts_with("system") && name.ends_with(".json");
        classify(f) == Role::Jobs || (classify(f) == Role::Pack && system)
    };
    (l.sub.intake.files.iter())
        .filter(wanted)
        .map(|f| {
            let safe: Vec<String> = (f.path.split('/'))
                .map(mlbench_schema::destination::safe_file_name)
                .collect();
            let path = format!("submissions/{}/files/{}", entry.sha256, safe.join("/"));
            (path, f.bytes.clone())
        })
        .collect()
}

/// A submission's report page and JSON (a page saying why where there is no report).
fn report_files(root: &Path, e: &SiteEntry, gpu_model: &str) -> Result<Vec<SiteFile>, SiteError> {
    let zip = root.join(&e.zip);
    let command = format!(
        "mlbench report --gpu-model {gpu_model} --html PAGE {}",
        e.zip
    );
    let page = report_page(&zip, gpu_model, command)?;
    let json = match &page {
        Ok(p) => Exporter::<mlbench_results::ReportDoc>::export(&Json, &p.doc)?,
        Err(why) => no_figures(why)?,
    };
    let html = pages::submission_page(e, page.as_ref())?;
    Ok(vec![(e.json.clone(), json), (e.page.clone(), html)])
}

/// The report page of one zip as `mlbench report --html` makes it with the defaults, or
/// why there is none (too few runs, say).
fn report_page(
    zip: &Path,
    gpu_model: &str,
    command: String,
) -> Result<Result<ReportPage, String>, SiteError> {
    use mlbench_analyzer::{DocOptions, inputs::read_report_inputs, page, report_document};
    use mlbench_schema::{Scoring, TargetTable, Timings, runtime::ParityTable};
    let targets = TargetTable::load_or_builtin(None, Scoring::Classic, gpu_model)?;
    let clock = Timings::start();
    let paths = [zip.to_path_buf()];
    let read = match read_report_inputs(&paths, None, u64::MAX, true, (&targets, &clock, 4)) {
        Ok(read) => read,
        Err(e) => return Ok(Err(e.to_string())),
    };
    if let (_, Some(why)) = read.loaded.unreadable_lines(false) {
        return Ok(Err(why));
    }
    let options = DocOptions {
        scoring: Scoring::Classic,
        min_runs: 4,
        price: None,
        intervals: false,
        parity: ParityTable::builtin().map_err(|e| SiteError::Malformed {
            path: "baselines/parity.toml".into(),
            why: e.to_string(),
        })?,
        design: None,
    };
    let (energy, held) = (read.energy, read.held);
    let (set, mut doc) = match report_document((read.loaded, read.validity), &targets, &options) {
        Ok(made) => made,
        Err(e) => return Ok(Err(e.to_string())),
    };
    doc.energy = energy;
    let limits = (&mlbench_submission::Limits::default(), read.checks);
    let of = (&set, &targets, &doc);
    let (page, _) = page::report_page(of, (&paths, &held), limits, |inputs| {
        provenance(command, inputs)
    });
    Ok(Ok(page))
}

/// The history page and JSON, from the site's zips.
fn history_files(root: &Path, index: &SiteIndex) -> Result<Vec<SiteFile>, SiteError> {
    let entries: Vec<SiteEntry> = index.entries().cloned().collect();
    let o = &index.options;
    let options = HistoryOptions {
        resamples: o.resamples,
        seed: o.seed,
        level: o.level,
    };
    let history = history_of(
        &entries,
        |sha| root.join(format!("zips/{sha}.zip")),
        None,
        &options,
    )?;
    let json = Exporter::<mlbench_results::history::History>::export(&Json, &history)?;
    let html = pages::history_page(index, &history)?;
    let [page, json_path] = index.history.clone();
    Ok(vec![(json_path, json), (page, html)])
}
