//! reso (super_resolution/subpixel_convolution main.py): ESPCN, conv 5×5 1→64, 3×3 64→64,
//! 3×3 64→32, 3×3 32→r², pixel shuffle (upscale r = 2), on random Y-channel crops
//! (BSDS500 crops of 256 → inputs 128×128); MSE; Adam with the jobs' `--lr 0.1`.
//! Args: `batch_size` (fast.json: 64), `upscale_factor` (2), `crop_size` (256), `lr` (0.1, what the
//! jobs file passes; the script's own default is 0.01), `testBatchSize` (8), `test_images`
//! (200, BSDS500's test set).
//!
//! As the script (main.py:42-63,89-99): cuDNN's benchmark mode is left off (the script does
//! not set it); the observation's losses are summed into its `epoch_loss` (logged inside the
//! timer); after the timer, untimed, `test()` runs the model over the test set (no
//! gradient) and logs the mean over its batches of `10·log10(1 / mse)` as the metric
//! `psnr`. The test set is synthetic, made once.
//! Not as the script: its batches are fixed random tensors, not fresh BSDS500 crops from
//! 8 workers, and an observation trains `number` batches (the script's loop re-enumerates
//! its 4-batch loader and trains 6 batches, 328 images, for number 5 while counting 320).

use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Kind, Reduction, Tensor};

pub(super) const SOURCE: &str = include_str!("reso.rs");

struct Espcn {
    convs: [nn::Conv2D; 4],
    upscale: i64,
    opt: nn::Optimizer,
    input: Tensor,
    target: Tensor,
    /// The test set: inputs and targets in batches of `testBatchSize`.
    test: Vec<(Tensor, Tensor)>,
    /// The observation's summed losses.
    epoch_loss: f64,
    _vs: nn::VarStore,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    let batch_size = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let upscale = ctx.size(args, &["upscale_factor"], 2)?;
    let crop = ctx.size(args, &["crop_size"], 256)?;
    let lr = ctx.float(args, &["lr"], 0.1)?;
    let test_batch = ctx.size(args, &["testBatchSize"], 8)?;
    let test_images = ctx.size(args, &["test_images"], 200)?;
    let crop = crop - crop % upscale;
    if crop < upscale {
        return Err(ctx.arg_error("--crop-size must be at least the upscale factor"));
    }
    let mut vs = nn::VarStore::new(ctx.device);
    let root = vs.root();
    let conv = |name: &str, i, o, k| {
        let cfg = nn::ConvConfig {
            padding: k / 2,
            ..Default::default()
        };
        nn::conv2d(&root / name, i, o, k, cfg)
    };
    let convs = [
        conv("conv1", 1, 64, 5),
        conv("conv2", 64, 64, 3),
        conv("conv3", 64, 32, 3),
        conv("conv4", 32, upscale * upscale, 3),
    ];
    vs.set_kind(ctx.kind);
    let opt = nn::Adam::default()
        .build(&vs, lr)
        .map_err(|e| ctx.failed(e.to_string()))?;
    let low = crop / upscale;
    let input = Tensor::rand([batch_size, 1, low, low], ctx.opts());
    let target = Tensor::rand([batch_size, 1, crop, crop], ctx.opts());
    let test_input = Tensor::rand([test_images, 1, low, low], ctx.opts());
    let test_target = Tensor::rand([test_images, 1, crop, crop], ctx.opts());
    let test = test_input
        .split(test_batch, 0)
        .into_iter()
        .zip(test_target.split(test_batch, 0))
        .collect();
    Ok(Box::new(Espcn {
        convs,
        upscale,
        opt,
        input,
        target,
        test,
        epoch_loss: 0.0,
        _vs: vs,
    }))
}

impl Espcn {
    fn forward(&self, input: &Tensor) -> Tensor {
        let [c1, c2, c3, c4] = &self.convs;
        let x = c1.forward(input).relu();
        let x = c2.forward(&x).relu();
        let x = c3.forward(&x).relu();
        c4.forward(&x).pixel_shuffle(self.upscale)
    }

    /// `test()`: the mean over the test batches of their PSNR, `10·log10(1 / mse)`.
    fn psnr(&self) -> f64 {
        tch::no_grad(|| {
            let total: f64 = self
                .test
                .iter()
                .map(|(input, target)| {
                    let mse = self
                        .forward(input)
                        .mse_loss(target, Reduction::Mean)
                        .to_kind(Kind::Double)
                        .double_value(&[]);
                    10.0 * (1.0 / mse).log10()
                })
                .sum();
            total / self.test.len() as f64
        })
    }
}

impl Train for Espcn {
    fn train_step(&mut self) -> Tensor {
        let loss = self
            .forward(&self.input)
            .mse_loss(&self.target, Reduction::Mean);
        self.opt.backward_step(&loss);
        loss
    }

    fn begin_observation(&mut self, _observation: u64) {
        self.epoch_loss = 0.0;
    }

    fn step(&mut self) -> Logs {
        let loss = self.train_step().to_kind(Kind::Double).double_value(&[]);
        self.epoch_loss += loss;
        Logs::loss(loss)
    }

    fn end_observation(&mut self, _observation: u64) -> Logs {
        Logs::none().epoch_loss(self.epoch_loss)
    }

    fn after_observation(&mut self, _observation: u64, _train_seconds: f64) -> Logs {
        Logs::none().metric("psnr", self.psnr())
    }
}
