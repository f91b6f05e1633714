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
    DataFrame::new_infer_height(vec![
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
    ])
}

/// The grid's long table as Parquet bytes.
pub fn grid_parquet(grid: &Grid) -> PolarsResult<Vec<u8>> {
    let mut df = grid_frame(grid)?;
    let mut out = Vec::new();
    polars_io::parquet::write::ParquetWriter::new(&mut out).finish(&mut df)?;
    Ok(out)
}
