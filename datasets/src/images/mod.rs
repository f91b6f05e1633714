//! The image data sets: the fake ImageNet the suite makes, the COCO layout ssd reads and
//! BSDS500's image folders reso reads (makers), and the readers and transforms of the
//! scripts that read them (convnet, convnet_fp16, loader, dcgan, fast_style; ssd's
//! annotations and training transform; reso's crops). Readers give plain buffers.

pub mod batch;
pub mod bsds500;
pub mod coco;
pub mod color;
pub mod fake_imagenet;
pub mod folder;
pub mod jpeg;
pub mod keyed;
pub mod resample;
pub mod ssd;
pub mod transforms;

pub use batch::{Batch, Sampling};
pub use folder::ImageFolder;
pub use jpeg::Rgb;
pub use resample::{Filter, resize};
pub use transforms::{Normalisation, Pipeline};

use crate::DataError;
use std::path::{Path, PathBuf};

/// Runs `write` on every item, the items split over four threads; the first error.
pub(crate) fn write_parallel<T: Sync>(
    items: &[T],
    write: impl Fn(&T) -> Result<(), DataError> + Sync,
) -> Result<(), DataError> {
    let chunk = items.len().div_ceil(4).max(1);
    let write = &write;
    std::thread::scope(|s| {
        let writers: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().try_for_each(write)))
            .collect();
        writers
            .into_iter()
            .try_for_each(|w| w.join().expect("a writer thread panicked"))
    })
}

/// An error naming the first of `files` (relative to `root`) that exists.
pub(crate) fn refuse_existing(
    root: &Path,
    files: impl IntoIterator<Item = PathBuf>,
) -> Result<(), DataError> {
    for file in files {
        let path = root.join(&file);
        if path.symlink_metadata().is_ok() {
            return Err(DataError::Io {
                path,
                source: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "exists; not overwritten (pass force to replace it)",
                ),
            });
        }
    }
    Ok(())
}
