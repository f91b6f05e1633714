//! reso (super_resolution/subpixel_convolution main.py): ESPCN, conv 5×5 1→64, 3×3 64→64,
//! 3×3 64→32, 3×3 32→r², pixel shuffle (upscale r = 2), on random Y-channel crops
//! (BSDS500 crops of 256 → inputs 128×128); MSE; Adam with the jobs' `--lr 0.1`.
//! Args: `batch_size` (fast.json: 64), `upscale_factor` (2), `crop_size` (256), `lr` (0.1, what the
//! jobs file passes; the script's own default is 0.01), `testBatchSize` (8), `test_images`
//! (200, BSDS500's test set), `workers` (fast.json: 8).
//!
//! As the script (main.py:42-63,89-99): cuDNN's benchmark mode is left off (the script does
//! not set it); the observation's losses are summed into its `epoch_loss` (logged inside the
//! timer); after the timer, untimed, `test()` runs the model over the test set (no
//! gradient) and logs the mean over its batches of `10·log10(1 / mse)` as the metric
//! `psnr`. The test set is synthetic, made once.
//!
//! Data as the script's (data.py:41-63, main.py:31,42-63): a fresh batch every step, made
//! on the host by a loader of `workers` threads (`host_loader`) whose iterator each
//! observation starts inside its timer and stops at its end, and copied to the device: the
//! target a [B, 1, crop, crop] Y channel of random bytes ÷ 255 (`CenterCrop`, `ToTensor`),
//! the input the same image shrunk by the upscale factor (`Resize(crop / r)`; here the mean
//! of each r × r block, PIL's is bicubic). Not as the script: noise for BSDS500 photographs,
//! and an observation trains `number` batches through one iterator (the script's loop
//! re-enumerates its 4-batch loader and trains 6 batches, 328 images, through 2 iterators
//! for number 5 while counting 320: its bug).

use super::host_loader::{EpochLoader, Maker, Order, Recipe, make_batch, on_device};
use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Device, Kind, Reduction, Tensor};

pub(super) const SOURCE: &str = concat!(
    include_str!("reso.rs"),
    include_str!("host_loader.rs"),
    include_str!("loader.rs")
);

/// The training batches: crops of `crop` × `crop` and their inputs shrunk by `upscale`.
struct Crops {
    /// The targets: one channel of bytes ÷ 255.
    target: Recipe,
    crop: usize,
    upscale: usize,
}

/// One batch on the host: `(input, target)`, `[count, 1, crop / r, crop / r]` and
/// `[count, 1, crop, crop]`, row-major.
type Pair = (Vec<f32>, Vec<f32>);

impl Crops {
    fn new(count: i64, crop: i64, upscale: i64) -> Crops {
        let plane = (crop * crop) as usize;
        Crops {
            target: Recipe::normalized(count as usize, plane, 0, &[0.0], &[1.0]),
            crop: crop as usize,
            upscale: upscale as usize,
        }
    }

    /// The mean of each `upscale` × `upscale` block of each image of `target`.
    fn shrink(&self, target: &[f32]) -> Vec<f32> {
        let (crop, r) = (self.crop, self.upscale);
        let low = crop / r;
        let scale = 1.0 / (r * r) as f32;
        let mut input = vec![0.0f32; target.len() / (r * r)];
        for (image, out) in target
            .chunks_exact(crop * crop)
            .zip(input.chunks_exact_mut(low * low))
        {
            for (y, row) in image.chunks_exact(crop).enumerate() {
                let out_row = &mut out[y / r * low..(y / r + 1) * low];
                for (x, v) in row.iter().enumerate() {
                    out_row[x / r] += v * scale;
                }
            }
        }
        input
    }
}

impl Maker for Crops {
    type Batch = Pair;

    fn make(&self, seed: u64, index: u64) -> Pair {
        let target = make_batch(&self.target, seed, index).images;
        (self.shrink(&target), target)
    }
}

struct Espcn {
    convs: [nn::Conv2D; 4],
    upscale: i64,
    opt: nn::Optimizer,
    /// `training_data_loader`.
    loader: EpochLoader<Crops>,
    /// The input's and the target's shapes.
    shapes: [[i64; 4]; 2],
    kind: Kind,
    device: Device,
    /// The test set: inputs and targets in batches of `testBatchSize`.
    test: Vec<(Tensor, Tensor)>,
    /// The observation's summed losses.
    epoch_loss: f64,
    _vs: nn::VarStore,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    Ok(Box::new(new_model(ctx, args)?))
}

fn new_model(ctx: &Ctx, args: &BenchArgs) -> Result<Espcn, BenchError> {
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
    let workers = ctx.int(args, &["workers"], 0)?.max(0) as usize;
    let crops = Crops::new(batch_size, crop, upscale);
    let loader = EpochLoader::new(crops, args.seed as u64, workers, Order::Continue);
    let test_input = Tensor::rand([test_images, 1, low, low], ctx.opts());
    let test_target = Tensor::rand([test_images, 1, crop, crop], ctx.opts());
    let test = test_input
        .split(test_batch, 0)
        .into_iter()
        .zip(test_target.split(test_batch, 0))
        .collect();
    Ok(Espcn {
        convs,
        upscale,
        opt,
        loader,
        shapes: [[batch_size, 1, low, low], [batch_size, 1, crop, crop]],
        kind: ctx.kind,
        device: ctx.device,
        test,
        epoch_loss: 0.0,
        _vs: vs,
    })
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
    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        let (input, target) = self.loader.next_batch();
        let [input_shape, target_shape] = &self.shapes;
        let input = on_device(&input, input_shape, self.device, self.kind);
        let target = on_device(&target, target_shape, self.device, self.kind);
        let loss = self.forward(&input).mse_loss(&target, Reduction::Mean);
        self.opt.backward_step(&loss);
        Ok(loss)
    }

    fn begin_observation(&mut self, _observation: u64) {
        self.epoch_loss = 0.0;
        // `for iteration, batch in enumerate(training_data_loader, 1)`: a new iterator.
        self.loader.begin();
    }

    fn step(&mut self) -> Result<Logs, BenchError> {
        let loss = self.train_step()?.to_kind(Kind::Double).double_value(&[]);
        self.epoch_loss += loss;
        Ok(Logs::loss(loss))
    }

    fn end_observation(&mut self, _observation: u64) -> Logs {
        self.loader.end();
        Logs::none().epoch_loss(self.epoch_loss)
    }

    fn after_observation(&mut self, _observation: u64, _train_seconds: f64) -> Logs {
        Logs::none().metric("psnr", self.psnr())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4 × 4 crop shrunk by 2: each input pixel the mean of its 2 × 2 block.
    #[test]
    fn the_input_is_the_crop_shrunk_by_block_means() {
        let crops = Crops::new(1, 4, 2);
        let target: Vec<f32> = (0..16).map(|v| v as f32).collect();
        // Rows 0-1: (0 + 1 + 4 + 5) / 4 = 2.5, (2 + 3 + 6 + 7) / 4 = 4.5; rows 2-3: 10.5, 12.5.
        assert_eq!(crops.shrink(&target), [2.5, 4.5, 10.5, 12.5]);
        let (input, target) = crops.make(3, 0);
        assert_eq!((input.len(), target.len()), (4, 16));
        assert!(target.iter().all(|v| (0.0..=1.0).contains(v)));
        assert_eq!(input, crops.shrink(&target));
        assert_ne!(crops.make(3, 1).1, target);
    }

    /// Each step takes the loader's next batch; the next observation's iterator goes on
    /// from there (the script's shuffled loader: new batches every observation).
    #[test]
    fn each_step_takes_the_next_batch() {
        let args = BenchArgs {
            batch_size: 2,
            number: 1,
            repeat: 1,
            seed: 1,
            extra: [("crop_size".to_owned(), mlbench_schema::value::Value::Int(8))].into(),
        };
        let spec = crate::bench::DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        let ctx = Ctx::new("reso", &args, spec).unwrap();
        let mut model = new_model(&ctx, &args).unwrap();
        for r in 0..2 {
            model.begin_observation(r);
            for _ in 0..3 {
                assert!(model.step().unwrap().loss.unwrap().is_finite());
            }
            let _ = model.end_observation(r);
        }
        assert_eq!(model.loader.position(), 6);
    }
}
