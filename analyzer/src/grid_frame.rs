//! The grid as a long table (one row per submission and bench, plus an `(overall)` row
//! per submission) in a Polars frame, written as Parquet for notebooks and dashboards.

use crate::grid::Grid;
use polars::prelude::*;

/// The long table of the grid; columns as `--format csv` has them.
pub fn grid_frame(grid: &Grid) -> PolarsResult<DataFrame> {
    let mut vendor = Vec::new();
    let mut track = Vec::new();
    let mut bench = Vec::new();
    let mut ratio = Vec::new();
    let mut low = Vec::new();
    let mut high = Vec::new();
    let mut n: Vec<Option<u32>> = Vec::new();
    let mut gpus: Vec<Option<u32>> = Vec::new();
    let mut mean = Vec::new();
    let mut missing = Vec::new();
    let mut tier: Vec<Option<u32>> = Vec::new();
    let mut system = SystemColumns::default();
    for v in &grid.vendors {
        let rows = grid
            .benches
            .iter()
            .filter_map(|b| v.cells.get(b).map(|c| (b.as_str(), Some(c))))
            .chain(std::iter::once(("(overall)", None)));
        for (b, cell) in rows {
            vendor.push(v.name.clone());
            track.push(v.track.as_str());
            bench.push(b.to_owned());
            tier.push(v.tier.map(|t| t as u32));
            system.push(v);
            match cell {
                Some(c) => {
                    ratio.push(c.ratio);
                    low.push(c.ci.map(|c| c[0]));
                    high.push(c.ci.map(|c| c[1]));
                    n.push(Some(c.n as u32));
                    gpus.push(Some(c.gpus as u32));
                    mean.push(c.mean);
                    missing.push(c.missing);
                }
                None => {
                    ratio.push(v.overall);
                    low.push(v.ci.map(|c| c[0]));
                    high.push(v.ci.map(|c| c[1]));
                    n.push(None);
                    gpus.push(None);
                    mean.push(None);
                    missing.push(!v.missing.is_empty());
                }
            }
        }
    }
    let vendor_rows = vendor.len();
    let mut columns = vec![
        Column::new("vendor".into(), vendor),
        Column::new("track".into(), track),
        Column::new("bench".into(), bench),
        Column::new("ratio".into(), ratio),
        Column::new("ci_low".into(), low),
        Column::new("ci_high".into(), high),
        Column::new("n".into(), n),
        Column::new("gpus".into(), gpus),
        Column::new("mean".into(), mean),
        Column::new("missing".into(), missing),
        Column::new("tier".into(), tier),
        // What `mean` counts, as in the CSV.
        Column::new("per".into(), vec![grid.per.name(); vendor_rows]),
    ];
    columns.extend(system.columns());
    DataFrame::new_infer_height(columns)
}

/// A row's validation and system on each of its lines, as the CSV has them (null when
/// the grid was made without them; several models or hosts joined by `;`).
#[derive(Default)]
struct SystemColumns {
    valid: Vec<Option<&'static str>>,
    errors: Vec<Option<u32>>,
    gpu_models: Vec<Option<String>>,
    gpu_count: Vec<Option<u32>>,
    hosts: Vec<Option<String>>,
    runtime: Vec<Option<String>>,
}

impl SystemColumns {
    fn push(&mut self, v: &mlbench_results::grid::VendorRow) {
        let validity = v.validity.as_ref();
        let hardware = v.hardware.as_ref();
        (self.valid).push(validity.map(|x| if x.passed { "pass" } else { "fail" }));
        self.errors.push(validity.map(|x| x.errors as u32));
        self.gpu_models.push(hardware.map(|h| {
            let names: Vec<&str> = h.gpus.iter().map(|g| g.name.as_str()).collect();
            names.join(";")
        }));
        self.gpu_count.push(hardware.map(|h| h.gpu_count as u32));
        self.hosts.push(hardware.map(|h| h.hosts.join(";")));
        self.runtime
            .push(v.runtime.as_ref().map(|r| r.short_label()));
    }

    fn columns(self) -> Vec<Column> {
        vec![
            Column::new("valid".into(), self.valid),
            Column::new("errors".into(), self.errors),
            Column::new("gpu_models".into(), self.gpu_models),
            Column::new("gpu_count".into(), self.gpu_count),
            Column::new("hosts".into(), self.hosts),
            Column::new("runtime".into(), self.runtime),
        ]
    }
}

/// The grid's long table as Parquet bytes.
pub fn grid_parquet(grid: &Grid) -> PolarsResult<Vec<u8>> {
    let mut df = grid_frame(grid)?;
    let mut out = Vec::new();
    polars_io::parquet::write::ParquetWriter::new(&mut out).finish(&mut df)?;
    Ok(out)
}
