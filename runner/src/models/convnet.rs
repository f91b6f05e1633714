//! convnet / convnet_fp16 (convnets conv_simple.py): a torchvision-style ResNet on fake
//! ImageNet batches (random 3×S×S images, random labels among 1000 classes), cross-entropy,
//! the script's `torch.optim.SGD(model.parameters(), lr)` (lr 0.1, no momentum, no weight
//! decay). `--half` as the script's fp16utils: the model half but for its BatchNorm layers,
//! the SGD through FP16_Optimizer with a dynamic loss scale (`half`).
//! Args: `arch` (resnet18|34|50|101|152; the example's default resnet18, the jobs pass
//! resnet101), `batch_size` (fast.json: 64), `image_size` (224), `num_classes` (1000), `lr`
//! (0.1), `half`/`fp16`.

use super::half::{Sgd, batch_norm_to_float};
use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError};
use tch::nn::{self, ModuleT};
use tch::vision::resnet;
use tch::{Kind, Tensor};

pub(super) const SOURCE: &str = include_str!("convnet.rs");

struct ConvNet {
    net: Box<dyn ModuleT>,
    opt: Sgd,
    images: Tensor,
    labels: Tensor,
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
    let images = Tensor::randn([batch_size, 3, size, size], ctx.opts());
    let labels = Tensor::randint(classes, [batch_size], ctx.int_opts());
    Ok(Box::new(ConvNet {
        net,
        opt,
        images,
        labels,
        _vs: vs,
    }))
}

impl Train for ConvNet {
    fn train_step(&mut self) -> Tensor {
        let logits = self.net.forward_t(&self.images, true);
        // Cross-entropy in float32 even for half models (log-softmax over 1000 classes).
        let loss = logits
            .to_kind(Kind::Float)
            .cross_entropy_for_logits(&self.labels);
        self.opt.backward_step(&loss);
        loss
    }
}
