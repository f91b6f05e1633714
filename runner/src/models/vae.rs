//! vae (variational_auto_encoder main.py): the MNIST VAE, 784→400→(20, 20)→400→784, on
//! random 28×28 images in [0, 1]; loss = BCE (sum, on logits) + KL divergence; Adam 1e-3.
//! Args: `batch_size` (fast.json: 128), `hidden` (400), `latent` (20), `image_size` (28).

use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError};
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Reduction, Tensor};

pub(super) const SOURCE: &str = include_str!("vae.rs");

struct Vae {
    fc1: nn::Linear,
    fc21: nn::Linear,
    fc22: nn::Linear,
    fc3: nn::Linear,
    fc4: nn::Linear,
    opt: nn::Optimizer,
    data: Tensor,
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
    let data = Tensor::rand([batch_size, pixels], ctx.opts());
    Ok(Box::new(Vae {
        fc1,
        fc21,
        fc22,
        fc3,
        fc4,
        opt,
        data,
        _vs: vs,
    }))
}

impl Train for Vae {
    fn train_step(&mut self) -> Tensor {
        let h1 = self.fc1.forward(&self.data).relu();
        let (mu, logvar) = (self.fc21.forward(&h1), self.fc22.forward(&h1));
        let z = &mu + (&logvar * 0.5).exp() * mu.randn_like();
        let logits = self.fc4.forward(&self.fc3.forward(&z).relu());
        let bce = logits.binary_cross_entropy_with_logits::<Tensor>(
            &self.data,
            None,
            None,
            Reduction::Sum,
        );
        let kld = ((&logvar + 1.0) - mu.pow_tensor_scalar(2) - logvar.exp()).sum(None) * -0.5;
        let loss = bce + kld;
        self.opt.backward_step(&loss);
        loss
    }
}
