//! reso (super_resolution/subpixel_convolution main.py): ESPCN, conv 5×5 1→64, 3×3 64→64,
//! 3×3 64→32, 3×3 32→r², pixel shuffle (upscale r = 2), on BSDS500's Y channel (crops of
//! 256 → inputs 128×128); MSE; Adam with the jobs' `--lr 0.1`.
//! Args: `batch_size` (fast.json: 64), `upscale_factor` (2), `crop_size` (256, not a flag of
//! the script, which fixes it), `lr` (0.1, what the jobs file passes; the script's own
//! default is 0.01), `testBatchSize` (8, what the jobs pass), `test_images` (200, the test
//! set's size with `--synthetic-data`), `workers` (fast.json: 8).
//!
//! As the script (main.py:42-63,89-99): cuDNN's benchmark mode is left off (the script does
//! not set it); the observation's losses are summed into its `epoch_loss` (logged inside the
//! timer); after the timer, untimed, `test()` runs the model over the test set (no
//! gradient) and logs the mean over its batches of `10·log10(1 / mse)` as the metric
//! `psnr`.
//!
//! Data as the script's (data.py:8,41-63, dataset.py, main.py:31-32,42-63): a fresh batch
//! every step, made on the host by a loader of `workers` threads (`host_loader`) whose
//! iterator each observation starts inside its timer and stops at its end, and copied to
//! the device. The images are `$DATA_DIRECTORY/bsds500/BSR/BSDS500/data/images/train`'s
//! (`DatasetFromFolder`: the `.png`/`.jpg`/`.jpeg` files, here sorted), shuffled, an
//! epoch's last batch short; each read as `convert('YCbCr')`'s Y, the target
//! `CenterCrop(crop)`, the input `CenterCrop(crop)` then `Resize(crop // r)` (torchvision's
//! default bilinear, as Pillow resizes), both `ToTensor` (`mlbench_datasets::images::
//! bsds500`). The test pass reads `…/test` the same way, in the folder's order, in batches
//! of `testBatchSize`, made once at build (the script reads the same values every pass).
//! With `--synthetic-data`: targets of random bytes ÷ 255, inputs the mean of each r × r
//! block, a random test set, and the entries say `synthetic_data`. Not as the script: an
//! observation trains `number` batches through one iterator (the script's loop
//! re-enumerates its 4-batch loader and trains 6 batches, 328 images, through 2 iterators
//! for number 5 while counting 320: its bug), and the next observation's iterator goes on
//! from the last batch (the script starts a new epoch).

use super::host_loader::{EpochLoader, Maker, Order, Recipe, make_batch, on_device};
use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use mlbench_datasets::DataError;
use mlbench_datasets::images::Sampling;
use mlbench_datasets::images::bsds500::{self, Split, SuperResolution};
use std::path::PathBuf;
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Device, Kind, Reduction, Tensor};

pub(super) const SOURCE: &str = concat!(
    include_str!("reso.rs"),
    include_str!("host_loader.rs"),
    include_str!("loader.rs")
);

/// `--synthetic-data`'s batches: crops of `crop` × `crop` and their inputs shrunk by
/// `upscale`.
struct NoiseCrops {
    /// The targets: one channel of bytes ÷ 255.
    target: Recipe,
    crop: usize,
    upscale: usize,
}

/// One batch on the host: `(input, target)`, `[n, 1, crop / r, crop / r]` and
/// `[n, 1, crop, crop]`, row-major (n: the images in it; an epoch's last batch of files
/// may be short).
type Pair = (Vec<f32>, Vec<f32>);

impl NoiseCrops {
    fn new(count: i64, crop: i64, upscale: i64) -> NoiseCrops {
        let plane = (crop * crop) as usize;
        NoiseCrops {
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

    fn make(&self, seed: u64, index: u64) -> Pair {
        let target = make_batch(&self.target, seed, index).images;
        (self.shrink(&target), target)
    }
}

/// The training batches: BSDS500's `train/` through data.py's transforms, or noise.
enum Crops {
    /// Noise made in memory (`--synthetic-data`).
    Memory(NoiseCrops),
    /// `DatasetFromFolder(train_dir, input_transform, target_transform)`, shuffled.
    Files {
        files: Vec<PathBuf>,
        sampling: Sampling,
        transform: SuperResolution,
    },
}

impl Maker for Crops {
    /// A file that cannot be read or decoded is the step's error.
    type Batch = Result<Pair, DataError>;

    fn make(&self, seed: u64, index: u64) -> Self::Batch {
        match self {
            Crops::Memory(noise) => Ok(noise.make(seed, index)),
            Crops::Files {
                files,
                sampling,
                transform,
            } => {
                let b = sampling.pair_batch(files, transform, index)?;
                Ok((b.input, b.target))
            }
        }
    }
}

/// The images of BSDS500's `split` under `$DATA_DIRECTORY` (data.py's `data_folder`), or
/// an error naming the folder and what makes it.
fn list(ctx: &Ctx, split: Split) -> Result<Vec<PathBuf>, BenchError> {
    let root = ctx.data_directory("BSDS500")?;
    bsds500::list(&root.join(split.folder()))
        .map_err(|e| ctx.arg_error(format!("{e}; {}", ctx.prepare_hint())))
}

/// `test()`'s batches of `test_batch` (inputs, targets) on the device: BSDS500's `test/`
/// in the folder's order (the script's loader does not shuffle), made once (the script
/// reads the same values each pass), or noise with `--synthetic-data`.
fn test_set(
    ctx: &Ctx,
    transform: SuperResolution,
    test_batch: i64,
    test_images: i64,
) -> Result<Vec<(Tensor, Tensor)>, BenchError> {
    let (low, crop) = (transform.low() as i64, transform.crop as i64);
    if ctx.synthetic {
        let input = Tensor::rand([test_images, 1, low, low], ctx.opts());
        let target = Tensor::rand([test_images, 1, crop, crop], ctx.opts());
        let pairs = input.split(test_batch, 0).into_iter();
        return Ok(pairs.zip(target.split(test_batch, 0)).collect());
    }
    let files = list(ctx, Split::Test)?;
    let sampling = Sampling {
        seed: 0,
        batch_size: test_batch as usize,
        shuffle: false,
    };
    (0..sampling.batches_per_epoch(files.len()) as u64)
        .map(|index| {
            let b = sampling
                .pair_batch(&files, &transform, index)
                .map_err(|e| ctx.arg_error(format!("{e}; {}", ctx.prepare_hint())))?;
            let n = b.count as i64;
            let input = on_device(&b.input, &[n, 1, low, low], ctx.device, ctx.kind);
            let target = on_device(&b.target, &[n, 1, crop, crop], ctx.device, ctx.kind);
            Ok((input, target))
        })
        .collect()
}

struct Espcn {
    convs: [nn::Conv2D; 4],
    upscale: i64,
    opt: nn::Optimizer,
    /// `training_data_loader`.
    loader: EpochLoader<Crops>,
    /// The input's and the target's sides.
    sides: [i64; 2],
    name: &'static str,
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
    if crop < upscale {
        return Err(ctx.arg_error("--crop-size must be at least the upscale factor"));
    }
    // data.py: `calculate_valid_crop_size(256, upscale_factor)`.
    let transform = SuperResolution::new(crop as usize, upscale as usize);
    let (low, crop) = (transform.low() as i64, transform.crop as i64);
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
    let workers = ctx.int(args, &["workers"], 0)?.max(0) as usize;
    let seed = args.seed as u64;
    let crops = if ctx.synthetic {
        Crops::Memory(NoiseCrops::new(batch_size, crop, upscale))
    } else {
        Crops::Files {
            files: list(ctx, Split::Train)?,
            sampling: Sampling {
                seed,
                batch_size: batch_size as usize,
                shuffle: true,
            },
            transform,
        }
    };
    let loader = EpochLoader::new(crops, seed, workers, Order::Continue);
    let test = test_set(ctx, transform, test_batch, test_images)?;
    Ok(Espcn {
        convs,
        upscale,
        opt,
        loader,
        sides: [low, crop],
        name: ctx.name,
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
        let (input, target) = self.loader.next_batch().map_err(|e| BenchError::Failed {
            bench: self.name.to_owned(),
            message: e.to_string(),
        })?;
        let [low, crop] = self.sides;
        let n = target.len() as i64 / (crop * crop);
        let input = on_device(&input, &[n, 1, low, low], self.device, self.kind);
        let target = on_device(&target, &[n, 1, crop, crop], self.device, self.kind);
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
        let crops = NoiseCrops::new(1, 4, 2);
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
            extra: [
                ("crop_size".to_owned(), mlbench_schema::value::Value::Int(8)),
                ("synthetic_data".to_owned(), true.into()),
            ]
            .into(),
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
