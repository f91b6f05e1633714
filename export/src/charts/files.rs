//! Charts written as files: `<dir>/<name>.png` and `.svg`, through
//! `mlbench_schema::destination` (nothing replaced without `force`).

use super::Named;
use mlbench_schema::destination::{WriteFileError, write_files};
use std::path::{Path, PathBuf};

/// Which files a chart is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageFiles {
    /// A PNG.
    pub png: bool,
    /// An SVG.
    pub svg: bool,
}

/// Writes `charts` as `<dir>/<name>.<ext>` (the name made safe, `dir` made if need be),
/// every destination checked first: nothing is written when one would be replaced
/// without `force`. The paths written, in order.
///
/// # Errors
/// [`WriteFileError`]: a destination refused, the folder or a file not written.
pub fn write_charts(
    dir: &Path,
    charts: &[Named],
    files: ImageFiles,
    force: bool,
) -> Result<Vec<PathBuf>, WriteFileError> {
    let mut planned = Vec::new();
    for (name, chart) in charts {
        let name = mlbench_schema::destination::safe_file_name(name);
        if files.png {
            planned.push((dir.join(format!("{name}.png")), chart.png.as_slice()));
        }
        if files.svg {
            planned.push((dir.join(format!("{name}.svg")), chart.svg.as_bytes()));
        }
    }
    write_files(dir, &planned, force)?;
    Ok(planned.into_iter().map(|(p, _)| p).collect())
}
