//! Batches of an image data set as a copy's `DataLoader` gives them, made from nothing but
//! (the files, the pipeline, the seed, the batch's index): epochs follow one another, each
//! in its own order (a permutation keyed by (seed, epoch) when shuffled, the files' order
//! when not), cut into `ceil(n / batch_size)` batches, the last one short, as a
//! `DataLoader` without `drop_last`; each item's random transforms draw from a stream keyed
//! by (seed, batch index, slot in the batch). So a batch can be made on any thread, in
//! any order, again and again, with the same values.

use super::folder::ImageFolder;
use super::jpeg;
use super::keyed::{Purpose, Stream};
use super::transforms::Pipeline;
use crate::DataError;

/// How a copy reads its data set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sampling {
    /// The copy's seed.
    pub seed: u64,
    /// Images per batch.
    pub batch_size: usize,
    /// `DataLoader(shuffle=True)` (convnet, loader, dcgan); fast_style's loader does not
    /// shuffle.
    pub shuffle: bool,
}

/// One batch: `len · 3 · size · size` floats (NCHW) and the images' class indices.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// The images, one after another, each CHW.
    pub data: Vec<f32>,
    /// `[n, 3, size, size]`.
    pub shape: [usize; 4],
    /// Each image's class index.
    pub labels: Vec<i64>,
}

impl Sampling {
    /// Batches in an epoch of `n` images.
    pub fn batches_per_epoch(&self, n: usize) -> usize {
        n.div_ceil(self.batch_size.max(1))
    }

    /// The positions in the data set (of `n` images) of batch `index`'s images.
    pub fn items(&self, n: usize, index: u64) -> Vec<usize> {
        assert!(n > 0 && self.batch_size > 0, "an empty data set or batch");
        let per_epoch = self.batches_per_epoch(n) as u64;
        let (epoch, k) = (index / per_epoch, (index % per_epoch) as usize);
        let start = k * self.batch_size;
        let end = (start + self.batch_size).min(n);
        if !self.shuffle {
            return (start..end).collect();
        }
        // Fisher–Yates from the last position, keyed by (seed, epoch): the same order for
        // every batch of the epoch.
        let mut order: Vec<usize> = (0..n).collect();
        let mut rng = Stream::keyed(self.seed, Purpose::Epoch, &[epoch]);
        for i in (1..n).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        order[start..end].to_vec()
    }

    /// The stream of item `slot`'s random transforms in batch `index`.
    pub fn item_stream(&self, index: u64, slot: usize) -> Stream {
        Stream::keyed(self.seed, Purpose::Item, &[index, slot as u64])
    }

    /// Batch `index` of `folder` through `pipeline`: each image read, decoded and
    /// transformed (a file that cannot be read or decoded is an error naming it).
    pub fn batch(
        &self,
        folder: &ImageFolder,
        pipeline: &Pipeline,
        index: u64,
    ) -> Result<Batch, DataError> {
        let items = self.items(folder.len(), index);
        let per = pipeline.item_len();
        let mut data = vec![0.0f32; items.len() * per];
        let mut labels = Vec::with_capacity(items.len());
        for (slot, (&i, out)) in items.iter().zip(data.chunks_exact_mut(per)).enumerate() {
            let (path, class) = &folder.samples[i];
            let img = jpeg::read(path)?;
            pipeline.apply_into(&img, &mut self.item_stream(index, slot), out);
            labels.push(*class as i64);
        }
        let size = pipeline.size();
        Ok(Batch {
            data,
            shape: [items.len(), 3, size, size],
            labels,
        })
    }
}
