//! A `torch.utils.data.DataLoader` of synthetic batches, for the scripts that load their
//! data each step (convnet, vae, dcgan, fast_style, reso, ssd, recom): `workers` threads
//! each make whole batches on the host (batch k by worker k mod workers, as PyTorch assigns
//! them), up to 2 ahead per worker (PyTorch's `prefetch_factor`), and the consumer takes
//! them back in order k = 0, 1, …, so a batch's content depends on the seed and its index
//! alone, not on the threads' timing. With 0 workers the consumer makes each batch itself
//! when it asks (PyTorch's in-process loading). Dropping the loader stops its workers (a
//! DataLoader iterator's shutdown).
//!
//! What a batch is, a [`Maker`] says. The images' one, [`Recipe`]: `count` images of
//! `pixels` 8-bit values turned into floats by a per-channel table (ToTensor's ÷ 255, then
//! the script's normalisation), and `count` labels below `classes`, drawn from SplitMix64
//! streams keyed by (seed, k) ([`stream`]): batch k + 1 shares nothing with batch k. [`EpochLoader`] is a loader whose iterator
//! the script makes anew each observation, inside its timer.

use super::loader::Rng;
use mlbench_schema::rng::SplitMix64;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;
use tch::{Device, Kind, Tensor};

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

/// What a loader's workers make: batch `index` of a copy seeded `seed`, from that alone.
pub(super) trait Maker: Send + Sync + 'static {
    /// One batch on the host.
    type Batch: Send + 'static;
    /// Batch `index`.
    fn make(&self, seed: u64, index: u64) -> Self::Batch;
}

impl Maker for Recipe {
    type Batch = HostBatch;

    fn make(&self, seed: u64, index: u64) -> HostBatch {
        make_batch(self, seed, index)
    }
}

/// The SplitMix64 stream of batch `index` (the image loader's generator), keyed by
/// (seed, index): consecutive batches draw from unrelated streams
/// ([`SplitMix64::keyed`]), not from one stream shifted by an output.
pub(super) fn stream(seed: u64, index: u64) -> Rng {
    Rng::of(SplitMix64::keyed(&[seed ^ BATCH_KEY, index]))
}

/// Tells the batches' streams from the other streams of the same seed.
const BATCH_KEY: u64 = 0x6a09_e667_f3bc_c909;

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
pub(super) struct HostLoader<M: Maker = Recipe> {
    maker: Arc<M>,
    seed: u64,
    /// The first batch's index: batch k is worker `(k − start) mod workers`'s.
    start: u64,
    /// The next batch's index.
    next: u64,
    /// One channel per worker; empty with 0 workers.
    receivers: Vec<Receiver<M::Batch>>,
    workers: Vec<JoinHandle<()>>,
}

impl<M: Maker> HostLoader<M> {
    /// A loader of `workers` threads, its first batch index `first`.
    pub(super) fn new(maker: M, seed: u64, workers: usize, first: u64) -> HostLoader<M> {
        HostLoader::shared(Arc::new(maker), seed, workers, first)
    }

    /// [`HostLoader::new`] with a maker that other loaders share.
    pub(super) fn shared(maker: Arc<M>, seed: u64, workers: usize, first: u64) -> HostLoader<M> {
        let mut receivers = Vec::with_capacity(workers);
        let mut handles = Vec::with_capacity(workers);
        for w in 0..workers as u64 {
            let (send, receive): (SyncSender<M::Batch>, _) = sync_channel(PREFETCH - 1);
            let maker = Arc::clone(&maker);
            let stride = workers as u64;
            let handle = std::thread::Builder::new()
                .name(format!("loader-{w}"))
                .spawn(move || {
                    let mut k = first + w;
                    // A send fails once the loader is dropped: the worker ends.
                    while send.send(maker.make(seed, k)).is_ok() {
                        k += stride;
                    }
                })
                .expect("a loader thread");
            receivers.push(receive);
            handles.push(handle);
        }
        HostLoader {
            maker,
            seed,
            start: first,
            next: first,
            receivers,
            workers: handles,
        }
    }

    /// The next batch, waiting for its worker (`next(iterator)`).
    pub(super) fn next_batch(&mut self) -> M::Batch {
        let k = self.next;
        self.next += 1;
        if self.receivers.is_empty() {
            return self.maker.make(self.seed, k);
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

impl<M: Maker> Drop for HostLoader<M> {
    fn drop(&mut self) {
        self.receivers.clear();
        for handle in self.workers.drain(..) {
            let _ = handle.join();
        }
    }
}

/// Where each observation's iterator starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Order {
    /// After the previous observation's last batch: fresh batches every observation (a
    /// shuffled DataLoader: the script's batches are new draws each epoch).
    Continue,
    /// At batch 0: the same batches every observation (a DataLoader without shuffle, whose
    /// new iterator starts again at the dataset's first items).
    Restart,
}

/// A DataLoader whose iterator the script makes each observation inside its timer (`for
/// i, data in enumerate(loader)` in the `chrono.time('train')` block): [`EpochLoader::begin`]
/// starts the workers, [`EpochLoader::end`] stops them, both timed where the script's are.
/// A step outside an observation (tests) starts one itself.
pub(super) struct EpochLoader<M: Maker> {
    maker: Arc<M>,
    seed: u64,
    workers: usize,
    order: Order,
    /// The observation's iterator.
    loader: Option<HostLoader<M>>,
    /// The next batch's index.
    next: u64,
}

impl<M: Maker> EpochLoader<M> {
    pub(super) fn new(maker: M, seed: u64, workers: usize, order: Order) -> EpochLoader<M> {
        EpochLoader {
            maker: Arc::new(maker),
            seed,
            workers,
            order,
            loader: None,
            next: 0,
        }
    }

    /// What the batches are made by.
    pub(super) fn maker(&self) -> &M {
        &self.maker
    }

    /// The index of the batch [`EpochLoader::next_batch`] returns next.
    #[cfg(test)]
    pub(super) fn position(&self) -> u64 {
        self.next
    }

    /// A new iterator: its workers start.
    pub(super) fn begin(&mut self) {
        if self.order == Order::Restart {
            self.next = 0;
        }
        // The previous iterator stops first, as CPython frees it when the loop ends.
        self.loader = None;
        let maker = Arc::clone(&self.maker);
        self.loader = Some(HostLoader::shared(
            maker,
            self.seed,
            self.workers,
            self.next,
        ));
    }

    /// The iterator is dropped: its workers stop.
    pub(super) fn end(&mut self) {
        self.loader = None;
    }

    /// The next batch (`next(iterator)`).
    pub(super) fn next_batch(&mut self) -> M::Batch {
        let (maker, seed, workers, next) = (&self.maker, self.seed, self.workers, self.next);
        let loader = self
            .loader
            .get_or_insert_with(|| HostLoader::shared(Arc::clone(maker), seed, workers, next));
        let batch = loader.next_batch();
        self.next = loader.position();
        batch
    }
}

/// Host floats as a tensor of `shape` on `device` in `kind` (`.to(device)` of a loader's
/// batch: a copy from pageable memory on CUDA).
pub(super) fn on_device(values: &[f32], shape: &[i64], device: Device, kind: Kind) -> Tensor {
    Tensor::from_slice(values)
        .view(shape)
        .to_device(device)
        .to_kind(kind)
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

    /// Consecutive batches share no run of 8 values (a batch made from its predecessor's
    /// stream one output on would share all but the first 8 bytes), and the labels of
    /// 24 batches of 16 over 1000 classes cover about as many classes as independent
    /// draws do, 1000·(1 − 0.999³⁸⁴) ≈ 319 (sd ≈ 9; the shifted streams gave 39).
    #[test]
    fn consecutive_batches_are_fresh() {
        let r = Recipe::normalized(16, 64, 1000, &[0.0], &[1.0]);
        let batches: Vec<HostBatch> = (0..24).map(|k| make_batch(&r, 5, k)).collect();
        for pair in batches.windows(2) {
            let runs = |b: &HostBatch| -> std::collections::HashSet<Vec<u32>> {
                let bits: Vec<u32> = b.images.iter().map(|v| v.to_bits()).collect();
                bits.windows(8).map(<[u32]>::to_vec).collect()
            };
            let (a, b) = (runs(&pair[0]), runs(&pair[1]));
            assert_eq!(a.intersection(&b).count(), 0);
        }
        let labels: std::collections::BTreeSet<i64> = batches
            .iter()
            .flat_map(|b| b.labels.iter().copied())
            .collect();
        assert!((280..=360).contains(&labels.len()), "{}", labels.len());
    }

    /// Observation after observation, a shuffled loader's iterators hand out new batches
    /// (the next index on), an unshuffled one's the same from batch 0; a step outside an
    /// observation starts an iterator itself.
    #[test]
    fn epoch_loaders_continue_or_restart() {
        let r = recipe();
        let observations = |order, workers| -> Vec<Vec<HostBatch>> {
            let mut loader = EpochLoader::new(r.clone(), 5, workers, order);
            let mut out = vec![vec![loader.next_batch()]];
            for _ in 0..2 {
                loader.begin();
                out.push((0..3).map(|_| loader.next_batch()).collect());
                loader.end();
            }
            out
        };
        let batch = |k| make_batch(&r, 5, k);
        for workers in [0, 2] {
            let fresh = observations(Order::Continue, workers);
            let want = [
                vec![batch(0)],
                (1..4).map(batch).collect(),
                (4..7).map(batch).collect(),
            ];
            assert_eq!(fresh, want, "{workers} workers");
            let same = observations(Order::Restart, workers);
            assert_eq!(same[1], (0..3).map(batch).collect::<Vec<_>>());
            assert_eq!(same[2], same[1]);
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
