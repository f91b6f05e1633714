//! vae (variational_auto_encoder main.py): the MNIST VAE, 784→400→(20, 20)→400→784, on
//! random 28×28 images in [0, 1]; loss = BCE (sum, on logits) + KL divergence; Adam 1e-3.
//! Args: `batch_size` (fast.json: 128), `hidden` (400), `latent` (20), `image_size` (28).
//!
//! As the script (main.py:52-59,107-136): a fresh batch every step, made on the host by a
//! loader of one worker thread (`host_loader`: random 8-bit pixels ÷ 255, MNIST's shape)
//! that each observation starts inside its timer and stops at its end, and copied to the
//! device; the observation's losses summed and logged as its `epoch_loss` after the timer.
//! Not as the script: pageable host memory (its loader pins on CUDA), noise for digits.

use super::host_loader::{HostLoader, Recipe};
use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
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
    /// The batches' shape and values.
    recipe: Recipe,
    seed: u64,
    /// The observation's loader (an iterator of `train_loader`).
    loader: Option<HostLoader>,
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
    let lin = |name: &str, i, o| nn::linear(&root / name, i, o, Default::default());
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
    // transforms.ToTensor(): bytes ÷ 255, one channel; ten classes (unused, as the script's).
    let recipe = Recipe::normalized(batch_size as usize, pixels as usize, 10, &[0.0], &[1.0]);
    Ok(Box::new(Vae {
        fc1,
        fc21,
        fc22,
        fc3,
        fc4,
        opt,
        recipe,
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
        let loader = HostLoader::new(self.recipe.clone(), self.seed, WORKERS, self.next_batch);
        self.loader = Some(loader);
    }

    /// The next batch, `.to(device)`.
    fn next_on_device(&mut self) -> Tensor {
        let (recipe, seed, next) = (&self.recipe, self.seed, self.next_batch);
        let loader = self
            .loader
            .get_or_insert_with(|| HostLoader::new(recipe.clone(), seed, WORKERS, next));
        let batch = loader.next_batch();
        self.next_batch = loader.position();
        let shape = [self.recipe.count as i64, self.recipe.plane as i64];
        Tensor::from_slice(&batch.images)
            .view(shape)
            .to_device(self.device)
            .to_kind(self.kind)
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
