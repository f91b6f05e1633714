//! A `torch.utils.data.DataLoader` of synthetic batches, for the scripts that load their
//! data each step (convnet, vae): `workers` threads each make whole batches on the host
//! (batch k by worker k mod workers, as PyTorch assigns them), up to 2 ahead per worker
//! (PyTorch's `prefetch_factor`), and the consumer takes them back in order k = 0, 1, …, so
//! a batch's content depends on the seed and its index alone, not on the threads' timing.
//! With 0 workers the consumer makes each batch itself when it asks (PyTorch's in-process
//! loading). Dropping the loader stops its workers (a DataLoader iterator's shutdown).
//!
//! A batch is `count` images of `pixels` 8-bit values turned into floats by a per-channel
//! table (ToTensor's ÷ 255, then the script's normalisation), and `count` labels below
//! `classes`, drawn from SplitMix64 streams seeded by (seed, k).

use super::loader::Rng;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Batches each worker makes ahead (`prefetch_factor`).
const PREFETCH: usize = 2;

/// What a batch looks like.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Recipe {
    /// Images per batch.
    pub count: usize,
    /// Channels per image.
    pub channels: usize,
    /// Values per channel (height × width).
    pub plane: usize,
    /// Labels are drawn below this (0: no labels).
    pub classes: u64,
    /// Per channel: the float of each byte value (`(b / 255 − mean) / sd`).
    pub tables: Vec<[f32; 256]>,
}

impl Recipe {
    /// ToTensor then `Normalize(mean, sd)` per channel.
    pub(super) fn normalized(
        count: usize,
        plane: usize,
        classes: u64,
        mean: &[f64],
        sd: &[f64],
    ) -> Recipe {
        let tables = mean
            .iter()
            .zip(sd)
            .map(|(m, s)| std::array::from_fn(|b| ((b as f64 / 255.0 - m) / s) as f32))
            .collect::<Vec<_>>();
        Recipe {
            count,
            channels: tables.len(),
            plane,
            classes,
            tables,
        }
    }

    /// Values of one batch.
    fn values(&self) -> usize {
        self.count * self.channels * self.plane
    }
}

/// One batch on the host.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct HostBatch {
    /// `[count, channels, plane]` floats, row-major.
    pub images: Vec<f32>,
    /// `count` labels (empty when the recipe has no classes).
    pub labels: Vec<i64>,
}

/// The SplitMix64 stream of batch `index` (the image loader's generator).
fn stream(seed: u64, index: u64) -> Rng {
    let mut rng = Rng(seed ^ 0x6a09_e667_f3bc_c909);
    rng.0 = rng
        .0
        .wrapping_add(index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    rng.next();
    rng
}

/// Batch `index` of `recipe` with `seed`.
pub(super) fn make_batch(recipe: &Recipe, seed: u64, index: u64) -> HostBatch {
    let mut rng = stream(seed, index);
    let mut images = Vec::with_capacity(recipe.values());
    for _ in 0..recipe.count {
        for table in &recipe.tables {
            let mut left = recipe.plane;
            while left > 0 {
                let bytes = rng.next().to_le_bytes();
                let take = left.min(8);
                images.extend(bytes[..take].iter().map(|b| table[*b as usize]));
                left -= take;
            }
        }
    }
    let labels = if recipe.classes == 0 {
        Vec::new()
    } else {
        (0..recipe.count)
            .map(|_| (rng.next() % recipe.classes) as i64)
            .collect()
    };
    HostBatch { images, labels }
}

/// The loader (see the module documentation).
pub(super) struct HostLoader {
    recipe: Arc<Recipe>,
    seed: u64,
    /// The first batch's index: batch k is worker `(k − start) mod workers`'s.
    start: u64,
    /// The next batch's index.
    next: u64,
    /// One channel per worker; empty with 0 workers.
    receivers: Vec<Receiver<HostBatch>>,
    workers: Vec<JoinHandle<()>>,
}

impl HostLoader {
    /// A loader of `workers` threads, its first batch index `first`.
    pub(super) fn new(recipe: Recipe, seed: u64, workers: usize, first: u64) -> HostLoader {
        let recipe = Arc::new(recipe);
        let mut receivers = Vec::with_capacity(workers);
        let mut handles = Vec::with_capacity(workers);
        for w in 0..workers as u64 {
            let (send, receive): (SyncSender<HostBatch>, _) = sync_channel(PREFETCH - 1);
            let recipe = Arc::clone(&recipe);
            let stride = workers as u64;
            let handle = std::thread::Builder::new()
                .name(format!("loader-{w}"))
                .spawn(move || {
                    let mut k = first + w;
                    // A send fails once the loader is dropped: the worker ends.
                    while send.send(make_batch(&recipe, seed, k)).is_ok() {
                        k += stride;
                    }
                })
                .expect("a loader thread");
            receivers.push(receive);
            handles.push(handle);
        }
        HostLoader {
            recipe,
            seed,
            start: first,
            next: first,
            receivers,
            workers: handles,
        }
    }

    /// The next batch, waiting for its worker (`next(iterator)`).
    pub(super) fn next_batch(&mut self) -> HostBatch {
        let k = self.next;
        self.next += 1;
        if self.receivers.is_empty() {
            return make_batch(&self.recipe, self.seed, k);
        }
        let w = ((k - self.start) % self.receivers.len() as u64) as usize;
        self.receivers[w]
            .recv()
            .expect("a loader worker ended early")
    }

    /// The index of the batch [`HostLoader::next_batch`] returns next.
    pub(super) fn position(&self) -> u64 {
        self.next
    }
}

impl Drop for HostLoader {
    fn drop(&mut self) {
        self.receivers.clear();
        for handle in self.workers.drain(..) {
            let _ = handle.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recipe() -> Recipe {
        Recipe::normalized(3, 5, 10, &[0.5, 0.25], &[0.5, 2.0])
    }

    #[test]
    fn the_tables_are_to_tensor_then_normalize() {
        let r = recipe();
        assert_eq!(r.channels, 2);
        // Byte 255 → 1.0 → (1 − 0.5) / 0.5 = 1; byte 0 → −1; channel 1: (0 − 0.25) / 2.
        assert_eq!((r.tables[0][255], r.tables[0][0]), (1.0, -1.0));
        assert_eq!(r.tables[1][0], -0.125);
        assert_eq!(r.tables[1][51], ((0.2 - 0.25) / 2.0) as f32);
    }

    #[test]
    fn a_batch_depends_on_the_seed_and_its_index_alone() {
        let r = recipe();
        let b = make_batch(&r, 7, 3);
        assert_eq!((b.images.len(), b.labels.len()), (3 * 2 * 5, 3));
        assert!(b.labels.iter().all(|l| (0..10).contains(l)));
        // Every value is a table entry of its channel.
        for (i, v) in b.images.iter().enumerate() {
            let channel = i / 5 % 2;
            assert!(r.tables[channel].contains(v), "{i}: {v}");
        }
        assert_eq!(b, make_batch(&r, 7, 3));
        assert_ne!(b, make_batch(&r, 7, 4));
        assert_ne!(b, make_batch(&r, 8, 3));
        // Threads or none, the loader hands the batches out in order.
        for workers in [0, 1, 3] {
            let mut loader = HostLoader::new(r.clone(), 7, workers, 2);
            let got: Vec<HostBatch> = (0..7).map(|_| loader.next_batch()).collect();
            let want: Vec<HostBatch> = (2..9).map(|k| make_batch(&r, 7, k)).collect();
            assert_eq!(got, want, "{workers} workers");
            assert_eq!(loader.position(), 9);
        }
    }

    #[test]
    fn dropping_the_loader_stops_its_workers() {
        let loader = HostLoader::new(recipe(), 1, 4, 0);
        // Each worker is blocked on a full channel by now or soon; the drop joins them all.
        std::thread::sleep(std::time::Duration::from_millis(20));
        drop(loader);
    }
}
