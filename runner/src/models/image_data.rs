//! The image data sets the scripts read, for the host loader: batches of an ImageFolder
//! decoded and transformed as the script's DataLoader does (`mlbench_datasets::images`),
//! keyed by (seed, batch index), so that any worker thread makes the same batch.

use super::Ctx;
use super::host_loader::{HostBatch, HostLoader, Maker, Recipe};
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

/// A copy's batches: a folder's images, or noise made in memory (`--synthetic-data`).
pub(super) enum Batches {
    /// Noise made in memory.
    Memory(HostLoader),
    /// The data folder's images.
    Files(HostLoader<FolderBatches>),
}

impl Batches {
    /// The next batch; a file that cannot be read is the step's failure.
    pub(super) fn next(&mut self, bench: &str) -> Result<HostBatch, BenchError> {
        match self {
            Batches::Memory(l) => Ok(l.next_batch()),
            Batches::Files(l) => l.next_batch().map_err(|e| BenchError::Failed {
                bench: bench.to_owned(),
                message: e.to_string(),
            }),
        }
    }
}

/// The images of an [`EpochLoader`]: a folder's, or noise made in memory
/// (`--synthetic-data`).
pub(super) enum Images {
    /// Noise made in memory.
    Memory(Recipe),
    /// A folder's images, as the script's ImageFolder and transforms read them.
    Files(FolderBatches),
}

impl Maker for Images {
    type Batch = Result<HostBatch, DataError>;

    fn make(&self, seed: u64, index: u64) -> Self::Batch {
        match self {
            Images::Memory(recipe) => Ok(recipe.make(seed, index)),
            Images::Files(files) => files.make(seed, index),
        }
    }
}

/// The folder the job's `key` argument names (`data`, `dataroot`): `None` with
/// `--synthetic-data` (the bench then makes its batches in memory); an error naming the
/// path and the command that makes it when the folder holds no image, or when the job
/// names none.
pub(super) fn open(
    ctx: &Ctx,
    args: &BenchArgs,
    key: &str,
    pipeline: Pipeline,
    shuffle: bool,
) -> Result<Option<FolderBatches>, BenchError> {
    if ctx.synthetic {
        return Ok(None);
    }
    let missing = |why: String| ctx.arg_error(format!("--{key}: {why}; {}", ctx.prepare_hint()));
    let Some(path) = ctx.string(args, &[key])?.filter(|p| !p.is_empty()) else {
        return Err(missing("the job names no folder of images".to_owned()));
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
