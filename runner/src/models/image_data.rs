//! The image data sets the scripts read, for the host loader: batches of an ImageFolder
//! decoded and transformed as the script's DataLoader does (`mlbench_datasets::images`),
//! keyed by (seed, batch index), so that any worker thread makes the same batch.

use super::Ctx;
use super::host_loader::{HostBatch, Maker};
use crate::bench::{BenchArgs, BenchError};
use mlbench_datasets::DataError;
pub(super) use mlbench_datasets::images::Pipeline;
use mlbench_datasets::images::{ImageFolder, Sampling};
use std::path::Path;

/// What a copy's loader reads: the folder, the script's transforms, its sampling.
pub(super) struct FolderBatches {
    folder: ImageFolder,
    pipeline: Pipeline,
    sampling: Sampling,
}

impl FolderBatches {
    /// The folder's classes.
    pub(super) fn classes(&self) -> usize {
        self.folder.classes.len()
    }
}

impl Maker for FolderBatches {
    /// A file that cannot be read or decoded is the step's error.
    type Batch = Result<HostBatch, DataError>;

    fn make(&self, _seed: u64, index: u64) -> Self::Batch {
        let b = self.sampling.batch(&self.folder, &self.pipeline, index)?;
        Ok(HostBatch {
            images: b.data,
            labels: b.labels,
        })
    }
}

/// The folder the job's `key` argument names (`data`, `dataroot`), when it names one:
/// `None` without the argument (the bench then makes its batches in memory); an error
/// naming the path and the command that makes it when the folder holds no image.
pub(super) fn open(
    ctx: &Ctx,
    args: &BenchArgs,
    key: &str,
    pipeline: Pipeline,
    shuffle: bool,
) -> Result<Option<FolderBatches>, BenchError> {
    let Some(path) = ctx.string(args, &[key])?.filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let missing = |why: String| {
        ctx.arg_error(format!(
            "--{key}: {why}; for this bench: `mlbench data prepare $DATA_DIRECTORY --bench {}`",
            ctx.name
        ))
    };
    let folder = ImageFolder::open(Path::new(&path)).map_err(|e| missing(e.to_string()))?;
    if folder.is_empty() {
        return Err(missing(format!("{path}: no image in it")));
    }
    let sampling = Sampling {
        seed: args.seed as u64,
        batch_size: args.batch_size.max(1) as usize,
        shuffle,
    };
    Ok(Some(FolderBatches {
        folder,
        pipeline,
        sampling,
    }))
}

/// Whether `args` name a data folder under `key` (the bench then reads its files).
pub(super) fn named(args: &BenchArgs, key: &str) -> bool {
    matches!(args.extra.get(key), Some(mlbench_schema::value::Value::Str(s)) if !s.trim().is_empty())
}
