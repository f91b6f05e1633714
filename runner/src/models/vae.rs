//! vae (variational_auto_encoder main.py): the MNIST VAE, 784→400→(20, 20)→400→784, on
//! MNIST's training images in [0, 1]; loss = BCE (sum, on logits) + KL divergence; Adam 1e-3.
//! Args: `batch_size` (fast.json: 128), `hidden` (400), `latent` (20), `image_size` (28).
//!
//! As the script (main.py:52-59,107-136): a fresh batch every step, made on the host by a
//! loader of one worker thread (`host_loader`) that each observation starts inside its
//! timer and stops at its end, and copied to the device; the observation's losses summed
//! and logged as its `epoch_loss` after the timer. The images are MNIST's training split
//! as torchvision reads it (`$DATA_DIRECTORY/mnist/MNIST/raw`, `mlbench data prepare`'s;
//! `mlbench_datasets::mnist`), read once, each epoch shuffled (keyed by the seed and the
//! epoch), ToTensor's bytes ÷ 255. Without the files: random bytes of MNIST's shape, and
//! the entries say `synthetic_data`. Not as the script: pageable host memory (its loader
//! pins on CUDA).

use super::host_loader::{HostBatch, HostLoader, Maker, Recipe};
use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use mlbench_datasets::images::Sampling;
use std::path::PathBuf;
use std::sync::Arc;
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Device, Kind, Reduction, Tensor};

/// main.py:57: `num_workers=1`.
const WORKERS: usize = 1;

pub(super) const SOURCE: &str = concat!(
    include_str!("vae.rs"),
    include_str!("host_loader.rs"),
    include_str!("loader.rs")
);

struct Vae {
    fc1: nn::Linear,
    fc21: nn::Linear,
    fc22: nn::Linear,
    fc3: nn::Linear,
    fc4: nn::Linear,
    opt: nn::Optimizer,
    /// The batches: MNIST's images, or noise of their shape.
    batches: Batches,
    /// `[batch, pixels]`.
    shape: [i64; 2],
    seed: u64,
    /// The observation's loader (an iterator of `train_loader`).
    loader: Option<HostLoader<Batches>>,
    /// The next batch's index over the whole run.
    next_batch: u64,
    kind: Kind,
    device: Device,
    /// `train_loss`: the observation's summed losses.
    train_loss: f64,
    _vs: nn::VarStore,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    let batch_size = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let hidden = ctx.size(args, &["hidden"], 400)?;
    let latent = ctx.size(args, &["latent"], 20)?;
    let side = ctx.size(args, &["image_size"], 28)?;
    let pixels = side * side;
    let mut vs = nn::VarStore::new(ctx.device);
    let root = vs.root();
    let lin = |name: &str, i, o| super::torch_linear(&root / name, i, o, true);
    let (fc1, fc21, fc22) = (
        lin("fc1", pixels, hidden),
        lin("fc21", hidden, latent),
        lin("fc22", hidden, latent),
    );
    let (fc3, fc4) = (lin("fc3", latent, hidden), lin("fc4", hidden, pixels));
    vs.set_kind(ctx.kind);
    let opt = nn::Adam::default()
        .build(&vs, 1e-3)
        .map_err(|e| ctx.failed(e.to_string()))?;
    let batches = match mnist_root(ctx)? {
        Some(_) if side != 28 => {
            let why = format!("--image_size {side}: MNIST's images are 28×28");
            return Err(ctx.arg_error(why));
        }
        Some(root) => {
            let split = mlbench_datasets::mnist::read(&root, true)
                .map_err(|e| ctx.failed(e.to_string()))?;
            let sampling = Sampling {
                seed: args.seed as u64,
                batch_size: batch_size as usize,
                shuffle: true,
            };
            Batches::Files(Arc::new(split), sampling)
        }
        // transforms.ToTensor(): bytes ÷ 255, one channel; ten classes (unused, as the
        // script's).
        None => Batches::Memory(Recipe::normalized(
            batch_size as usize,
            pixels as usize,
            10,
            &[0.0],
            &[1.0],
        )),
    };
    Ok(Box::new(Vae {
        fc1,
        fc21,
        fc22,
        fc3,
        fc4,
        opt,
        batches,
        shape: [batch_size, pixels],
        seed: args.seed as u64,
        loader: None,
        next_batch: 0,
        kind: ctx.kind,
        device: ctx.device,
        train_loss: 0.0,
        _vs: vs,
    }))
}

impl Vae {
    /// `for batch_id, (data, _) in enumerate(train_loader)`: a new iterator starts its
    /// worker.
    fn start_loader(&mut self) {
        let loader = HostLoader::new(self.batches.clone(), self.seed, WORKERS, self.next_batch);
        self.loader = Some(loader);
    }

    /// The next batch, `.to(device)`.
    fn next_on_device(&mut self) -> Tensor {
        let (batches, seed, next) = (&self.batches, self.seed, self.next_batch);
        let loader = self
            .loader
            .get_or_insert_with(|| HostLoader::new(batches.clone(), seed, WORKERS, next));
        let batch = loader.next_batch();
        self.next_batch = loader.position();
        // An epoch's last batch may be short, as a DataLoader's without `drop_last`.
        let shape = [batch.labels.len() as i64, self.shape[1]];
        Tensor::from_slice(&batch.images)
            .view(shape)
            .to_device(self.device)
            .to_kind(self.kind)
    }
}

/// Where vae's batches come from.
#[derive(Clone)]
enum Batches {
    /// Noise of MNIST's shape, made in memory.
    Memory(Recipe),
    /// MNIST's training split, read once, and how a copy samples it.
    Files(Arc<mlbench_datasets::mnist::Split>, Sampling),
}

impl Maker for Batches {
    type Batch = HostBatch;

    fn make(&self, seed: u64, index: u64) -> HostBatch {
        match self {
            Batches::Memory(recipe) => recipe.make(seed, index),
            Batches::Files(split, sampling) => {
                let plane = split.rows * split.cols;
                let items = sampling.items(split.count, index);
                let images = (items.iter())
                    .flat_map(|&i| &split.pixels[i * plane..(i + 1) * plane])
                    .map(|&p| f32::from(p) / 255.0)
                    .collect();
                let labels = items.iter().map(|&i| i64::from(split.labels[i])).collect();
                HostBatch { images, labels }
            }
        }
    }
}

/// The data root whose MNIST the script reads (`$DATA_DIRECTORY`, where `mlbench data
/// prepare` writes `mnist/MNIST/raw`); `None` with `--synthetic-data`; an error naming
/// the file missing and the command that makes it.
pub(super) fn mnist_root(ctx: &Ctx) -> Result<Option<PathBuf>, BenchError> {
    if ctx.synthetic {
        return Ok(None);
    }
    let root = ctx.data_directory("MNIST")?;
    let raw = root.join(mlbench_datasets::mnist::RAW);
    let files = [
        mlbench_datasets::mnist::TRAIN_IMAGES,
        mlbench_datasets::mnist::TRAIN_LABELS,
    ];
    match files.iter().map(|f| raw.join(f)).find(|f| !f.is_file()) {
        Some(absent) => Err(ctx.arg_error(format!(
            "{}: no such file; {}",
            absent.display(),
            ctx.prepare_hint()
        ))),
        None => Ok(Some(root)),
    }
}

impl Train for Vae {
    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        let data = self.next_on_device();
        let h1 = self.fc1.forward(&data).relu();
        let (mu, logvar) = (self.fc21.forward(&h1), self.fc22.forward(&h1));
        let z = &mu + (&logvar * 0.5).exp() * mu.randn_like();
        let logits = self.fc4.forward(&self.fc3.forward(&z).relu());
        let bce =
            logits.binary_cross_entropy_with_logits::<Tensor>(&data, None, None, Reduction::Sum);
        let kld = ((&logvar + 1.0) - mu.pow_tensor_scalar(2) - logvar.exp()).sum(None) * -0.5;
        let loss = bce + kld;
        self.opt.backward_step(&loss);
        Ok(loss)
    }

    fn begin_observation(&mut self, _observation: u64) {
        self.train_loss = 0.0;
        self.start_loader();
    }

    fn end_observation(&mut self, _observation: u64) -> Logs {
        // The iterator is dropped when the loop ends, inside the timer: its worker stops.
        self.loader = None;
        Logs::none()
    }

    fn step(&mut self) -> Result<Logs, BenchError> {
        let loss = self.train_step()?.to_kind(Kind::Double).double_value(&[]);
        self.train_loss += loss;
        Ok(Logs::loss(loss))
    }

    fn after_observation(&mut self, _observation: u64, _train_seconds: f64) -> Logs {
        Logs::none().epoch_loss(self.train_loss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlbench_datasets::{Scale, mnist};

    /// MNIST's batches are its images ÷ 255, in an order shuffled per epoch that covers
    /// every image once (the smoke split's 256, in batches of 100: 3 a epoch, the last 56).
    #[test]
    fn mnist_batches_are_the_files_images_each_once_an_epoch() {
        let tmp = tempfile::tempdir().unwrap();
        mnist::prepare(tmp.path(), 2, Scale::Smoke).unwrap();
        let split = Arc::new(mnist::read(tmp.path(), true).unwrap());
        assert_eq!(split.count, 256);
        let sampling = Sampling {
            seed: 9,
            batch_size: 100,
            shuffle: true,
        };
        let batches = Batches::Files(Arc::clone(&split), sampling);
        let mut seen = Vec::new();
        for k in 0..3 {
            let b = batches.make(9, k);
            let items = sampling.items(256, k);
            assert_eq!(b.labels.len(), items.len());
            for (slot, &i) in items.iter().enumerate() {
                let want: Vec<f32> = (split.pixels[i * 784..(i + 1) * 784].iter())
                    .map(|&p| f32::from(p) / 255.0)
                    .collect();
                assert_eq!(&b.images[slot * 784..(slot + 1) * 784], want.as_slice());
                assert_eq!(b.labels[slot], i64::from(split.labels[i]));
            }
            seen.extend(items);
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..256).collect::<Vec<_>>());
        // The next epoch is another order.
        assert_ne!(sampling.items(256, 3), sampling.items(256, 0));
    }
}
