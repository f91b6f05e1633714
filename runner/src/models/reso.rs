//! reso (super_resolution/subpixel_convolution main.py): ESPCN, conv 5×5 1→64, 3×3 64→64,
//! 3×3 64→32, 3×3 32→r², pixel shuffle (upscale r = 2), on random Y-channel crops
//! (BSDS500 crops of 256 → inputs 128×128); MSE; Adam with the jobs' `--lr 0.1`.
//! Args: `batch_size` (fast.json: 64), `upscale_factor` (2), `crop_size` (256), `lr` (0.1, what the
//! jobs file passes; the script's own default is 0.01).

use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError};
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Reduction, Tensor};

pub(super) const SOURCE: &str = include_str!("reso.rs");

struct Espcn {
    convs: [nn::Conv2D; 4],
    upscale: i64,
    opt: nn::Optimizer,
    input: Tensor,
    target: Tensor,
    _vs: nn::VarStore,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    let batch_size = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let upscale = ctx.size(args, &["upscale_factor"], 2)?;
    let crop = ctx.size(args, &["crop_size"], 256)?;
    let lr = ctx.float(args, &["lr"], 0.1)?;
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
    if ctx.is_cuda() {
        tch::Cuda::cudnn_set_benchmark(true);
    }
    let opt = nn::Adam::default()
        .build(&vs, lr)
        .map_err(|e| ctx.failed(e.to_string()))?;
    let low = crop / upscale;
    let input = Tensor::rand([batch_size, 1, low, low], ctx.opts());
    let target = Tensor::rand([batch_size, 1, crop, crop], ctx.opts());
    Ok(Box::new(Espcn {
        convs,
        upscale,
        opt,
        input,
        target,
        _vs: vs,
    }))
}

impl Train for Espcn {
    fn train_step(&mut self) -> Tensor {
        let [c1, c2, c3, c4] = &self.convs;
        let x = c1.forward(&self.input).relu();
        let x = c2.forward(&x).relu();
        let x = c3.forward(&x).relu();
        let out = c4.forward(&x).pixel_shuffle(self.upscale);
        let loss = out.mse_loss(&self.target, Reduction::Mean);
        self.opt.backward_step(&loss);
        loss
    }
}
