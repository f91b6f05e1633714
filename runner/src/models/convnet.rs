//! convnet / convnet_fp16 (convnets conv_simple.py): a torchvision-style ResNet on fake
//! ImageNet batches (random 3×S×S images, random labels among 1000 classes), cross-entropy,
//! the script's `torch.optim.SGD(model.parameters(), lr)` (lr 0.1, no momentum, no weight
//! decay). `--half` as the script's fp16utils: the model half but for its BatchNorm layers,
//! the SGD through FP16_Optimizer with a dynamic loss scale (`half`).
//! Args: `arch` (resnet18|34|50|101|152; the example's default resnet18, the jobs pass
//! resnet101), `batch_size` (fast.json: 64), `image_size` (224), `num_classes` (1000), `lr`
//! (0.1), `half`/`fp16`, `workers` (fast.json: 8).
//!
//! As the script (conv_simple.py:64-109): a fresh batch every step from one persistent
//! loader (`host_loader`: `workers` threads, 2 batches ahead each), and each step in two
//! stages of its own, each synchronised on entry and exit as `chrono.time` does: `loading`
//! (the wait for the next batch and its copy to the device) and `compute` (forward, loss,
//! its `.item()`, backward, update). The batches are read from the job's data folder
//! (`$DATA_DIRECTORY/ImageNet/train`, an ImageFolder) as the script's DataLoader reads it:
//! shuffled each epoch, each JPEG decoded, RandomResizedCrop to `image_size`, flipped half
//! the time, ToTensor and ImageNet's normalisation (`image_data`,
//! `mlbench_datasets::images`); a job without a data folder (the tests') has batches of
//! uniform noise made in memory instead, and its entries say so (`synthetic_data`). Not
//! as the script: the host batch is copied from pageable memory (the script's loader pins
//! it).

use super::half::{Sgd, batch_norm_to_float};
use super::host_loader::{HostLoader, Recipe};
use super::image_data::{self, Batches};
use super::{Ctx, Train, sync};
use crate::bench::{BenchArgs, BenchError, Logs};
use crate::timing::timed;
use tch::nn::{self, ModuleT};
use tch::vision::resnet;
use tch::{Device, Kind, Tensor};

pub(super) const SOURCE: &str = concat!(
    include_str!("convnet.rs"),
    include_str!("host_loader.rs"),
    include_str!("image_data.rs"),
    include_str!("loader.rs"),
    include_str!("half.rs")
);

/// torchvision's ImageNet normalisation (the script's `Normalize`).
pub(super) const IMAGENET_MEAN: [f64; 3] = [0.485, 0.456, 0.406];
/// Its standard deviations.
pub(super) const IMAGENET_SD: [f64; 3] = [0.229, 0.224, 0.225];

/// Where a copy's batches come from.
struct ConvNet {
    net: Box<dyn ModuleT>,
    opt: Sgd,
    loader: Batches,
    name: &'static str,
    /// `[3, size, size]`: an image.
    image: [i64; 3],
    kind: Kind,
    device: Device,
    _vs: nn::VarStore,
}

/// The ResNet arguments: `arch`/`a`, `image_size`, `num_classes`.
pub(super) struct ResNetArgs {
    pub arch: String,
    pub image_size: i64,
    pub classes: i64,
}

impl ResNetArgs {
    pub(super) fn read(ctx: &Ctx, args: &BenchArgs) -> Result<ResNetArgs, BenchError> {
        let image_size = ctx.size(args, &["image_size"], 224)?;
        let classes = ctx.size(args, &["num_classes"], 1000)?;
        let arch = ctx
            .string(args, &["arch", "a"])?
            .unwrap_or_else(|| "resnet18".to_owned());
        if image_size < 32 {
            return Err(ctx.arg_error(format!(
                "--image-size {image_size}: a ResNet needs at least 32"
            )));
        }
        Ok(ResNetArgs {
            arch,
            image_size,
            classes,
        })
    }

    /// The network under `p` (torchvision's `models.__dict__[arch]()`).
    pub(super) fn net(&self, ctx: &Ctx, p: &nn::Path) -> Result<Box<dyn ModuleT>, BenchError> {
        let classes = self.classes;
        Ok(match self.arch.as_str() {
            "resnet18" => Box::new(resnet::resnet18(p, classes)),
            "resnet34" => Box::new(resnet::resnet34(p, classes)),
            "resnet50" => Box::new(resnet::resnet50(p, classes)),
            "resnet101" => Box::new(resnet::resnet101(p, classes)),
            "resnet152" => Box::new(resnet::resnet152(p, classes)),
            other => {
                return Err(ctx.arg_error(format!(
                    "--arch `{other}` is not available (resnet18/34/50/101/152)"
                )));
            }
        })
    }
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    let batch_size = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let resnet = ResNetArgs::read(ctx, args)?;
    let (size, classes) = (resnet.image_size, resnet.classes);
    let mut vs = nn::VarStore::new(ctx.device);
    let net = resnet.net(ctx, &vs.root())?;
    vs.set_kind(ctx.kind);
    batch_norm_to_float(&vs);
    if ctx.is_cuda() {
        tch::Cuda::cudnn_set_benchmark(true);
    }
    let lr = ctx.float(args, &["lr", "learning_rate"], 0.1)?;
    let opt = Sgd::new(&vs, lr).map_err(|e| ctx.failed(e.to_string()))?;
    let workers = ctx.int(args, &["workers"], 0)?.max(0) as usize;
    let seed = args.seed as u64;
    // conv_simple.py:73: one iterator, made before the loop.
    let pipeline = image_data::Pipeline::RandomCrop {
        size: size as usize,
    };
    let loader = match image_data::open(ctx, args, "data", pipeline, true)? {
        Some(files) if files.classes() > classes as usize => {
            return Err(ctx.arg_error(format!(
                "the data folder has {} classes, more than --num_classes {classes}",
                files.classes()
            )));
        }
        Some(files) => Batches::Files(HostLoader::new(files, seed, workers, 0)),
        None => {
            let (plane, count) = ((size * size) as usize, batch_size as usize);
            let (mean, sd) = (&IMAGENET_MEAN, &IMAGENET_SD);
            let recipe = Recipe::normalized(count, plane, classes as u64, mean, sd);
            Batches::Memory(HostLoader::new(recipe, seed, workers, 0))
        }
    };
    Ok(Box::new(ConvNet {
        net,
        opt,
        loader,
        name: ctx.name,
        image: [3, size, size],
        kind: ctx.kind,
        device: ctx.device,
        _vs: vs,
    }))
}

impl ConvNet {
    /// `next_batch()` and `.to(device)` of input and target (an epoch's last batch may be
    /// short, as a DataLoader's without `drop_last`).
    fn next_on_device(&mut self) -> Result<(Tensor, Tensor), BenchError> {
        let batch = self.loader.next(self.name)?;
        let [c, h, w] = self.image;
        let images = Tensor::from_slice(&batch.images)
            .view([batch.labels.len() as i64, c, h, w])
            .to_device(self.device)
            .to_kind(self.kind);
        let labels = Tensor::from_slice(&batch.labels).to_device(self.device);
        Ok((images, labels))
    }

    /// Forward, loss, backward, update.
    fn train_on(&mut self, images: &Tensor, labels: &Tensor) -> Tensor {
        let logits = self.net.forward_t(images, true);
        // Cross-entropy in float32 even for half models (log-softmax over 1000 classes).
        let loss = logits.to_kind(Kind::Float).cross_entropy_for_logits(labels);
        self.opt.backward_step(&loss);
        loss
    }
}

impl Train for ConvNet {
    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        let (images, labels) = self.next_on_device()?;
        Ok(self.train_on(&images, &labels))
    }

    fn step(&mut self) -> Result<Logs, BenchError> {
        let device = self.device;
        let (next, loading) = timed(&|| sync(device), || self.next_on_device());
        let (images, labels) = next?;
        let (loss, compute) = timed(&|| sync(device), || {
            let loss = self.train_on(&images, &labels);
            loss.to_kind(Kind::Double).double_value(&[])
        });
        Ok(Logs::loss(loss)
            .stage("loading", loading)
            .stage("compute", compute))
    }
}
