//! fast_style (fast_neural_style/neural_style/pytorch neural_style.py `train`, PyTorch
//! examples' fast neural style): the TransformerNet of its `transformer_net.py` (reflection-
//! padded convolutions 9×9 3→32, 3×3/2 32→64, 3×3/2 64→128, each with affine instance norm
//! and ReLU; five residual blocks of 128; nearest ×2 upsample then 3×3 conv 128→64 and
//! 64→32, instance norm, ReLU; 9×9 conv 32→3) trained against the perceptual loss of its
//! `vgg.py`: VGG-16's `features[:23]` cut after relu1_2, relu2_2, relu3_3 and relu4_3.
//! Content loss: MSE of relu2_2 between stylised and content batch, × content weight; style
//! loss: Σ over the four slices of the MSE between the stylised batch's Gram matrices
//! (`utils.gram_matrix`: FFᵀ / (c·h·w)) and the style image's, × style weight; both batches
//! ImageNet-normalised first (`utils.normalize_batch`: ÷255, −mean, ÷std). Adam, lr 1e-3.
//! One step is one batch of `batch_size` content images, the item the suite's `train_item`
//! counts (batch_size·number per observation; the script's `if batch_id > args.number:
//! break` actually ran number + 1 batches, the runner runs `number`). No cuDNN benchmark
//! mode: the script sets none.
//!
//! The VGG-16 is **randomly initialised** (torchvision's `vgg16` init: Kaiming normal, fan
//! out, zero biases) and frozen: the script loads ImageNet weights (`pretrained=True`), which
//! cannot be downloaded here. The work per step is the same; the loss values are not the
//! script's. The content images are run.sh's `--dataset $DATA_DIRECTORY/ImageNet/train`
//! (or the job's `dataset`), read as neural_style.py:37-45 reads them: ImageFolder,
//! Resize(image_size) as Pillow does it, CenterCrop, ToTensor, `mul(255)` (`image_data`);
//! with `--synthetic-data`, random 8-bit images (pixel values 0…255 as floats). A fresh
//! batch every step, made on the host by a loader of `workers` threads (`host_loader`)
//! whose iterator each observation starts inside its timer and stops at its end, and
//! copied to the device, as the script's
//! `DataLoader(train_dataset, batch_size, num_workers)` (neural_style.py:45,71). That loader
//! does not shuffle, so each observation's new iterator starts again at the dataset's first
//! images: here too, an observation's k-th batch is the same in every observation (batch k
//! of the copy's seed), and the batches within one differ. A random style image's Gram
//! matrices are computed once at build time, as the script does for `candy.jpg`.
//! Args: `batch_size` (fast.json: 128), `image_size` (64, run.sh's `--image-size 64`; the
//! script's default is 256; a multiple of 4, at least 8), `style_size` (64, run.sh's), `lr`
//! (1e-3), `content_weight` (1e5), `style_weight` (1e10), `workers` (fast.json: 8); Gram
//! matrices and losses in float32 for float16/bfloat16 nets.

use super::host_loader::{EpochLoader, Order, Recipe, on_device};
use super::image_data::{self, Images};
use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Device, Kind, Reduction, Tensor};

pub(super) const SOURCE: &str = concat!(
    include_str!("fast_style.rs"),
    include_str!("host_loader.rs"),
    include_str!("image_data.rs"),
    include_str!("loader.rs")
);

/// torch.nn.Conv2d's default init (`kaiming_uniform_(a=√5)` for the weight, and the bias
/// alike): U(−1/√fan_in, 1/√fan_in). tch's default (Kaiming uniform with the ReLU gain,
/// zero bias) would start the TransformerNet √6 times wider than the script's.
fn torch_conv(p: nn::Path, i: i64, o: i64, k: i64, stride: i64) -> nn::Conv2D {
    let bound = 1.0 / ((i * k * k) as f64).sqrt();
    let init = nn::Init::Uniform {
        lo: -bound,
        up: bound,
    };
    let cfg = nn::ConvConfig {
        stride,
        ws_init: init,
        bs_init: init,
        ..Default::default()
    };
    nn::conv2d(p, i, o, k, cfg)
}

/// transformer_net.py's `ConvLayer`: reflection padding of k/2, then an unpadded conv;
/// with `upsample`, its `UpsampleConvLayer` (nearest ×2 first).
#[derive(Debug)]
struct ConvLayer {
    conv: nn::Conv2D,
    pad: i64,
    upsample: bool,
}

impl ConvLayer {
    fn new(p: nn::Path, i: i64, o: i64, k: i64, stride: i64) -> ConvLayer {
        ConvLayer {
            conv: torch_conv(p / "conv2d", i, o, k, stride),
            pad: k / 2,
            upsample: false,
        }
    }

    fn upsampling(p: nn::Path, i: i64, o: i64, k: i64) -> ConvLayer {
        ConvLayer {
            upsample: true,
            ..ConvLayer::new(p, i, o, k, 1)
        }
    }
}

impl Module for ConvLayer {
    fn forward(&self, x: &Tensor) -> Tensor {
        let x = if self.upsample {
            let (_, _, h, w) = x.size4().unwrap();
            // F.interpolate(mode='nearest', scale_factor=2).
            x.upsample_nearest2d([2 * h, 2 * w], 2.0, 2.0)
        } else {
            x.shallow_clone()
        };
        let p = self.pad;
        self.conv.forward(&x.reflection_pad2d([p, p, p, p]))
    }
}

/// torch.nn.InstanceNorm2d(affine=True): per-sample, per-channel statistics, no running
/// statistics (track_running_stats=False), ε 1e-5, weight 1 and bias 0 at the start.
#[derive(Debug)]
struct InstanceNorm {
    weight: Tensor,
    bias: Tensor,
}

impl InstanceNorm {
    fn new(p: nn::Path, channels: i64) -> InstanceNorm {
        InstanceNorm {
            weight: p.var("weight", &[channels], nn::Init::Const(1.0)),
            bias: p.var("bias", &[channels], nn::Init::Const(0.0)),
        }
    }
}

impl Module for InstanceNorm {
    fn forward(&self, x: &Tensor) -> Tensor {
        x.instance_norm(
            Some(&self.weight),
            Some(&self.bias),
            None::<&Tensor>,
            None::<&Tensor>,
            true,
            0.1,
            1e-5,
            true,
        )
    }
}

/// transformer_net.py's `ResidualBlock`: conv, IN, ReLU, conv, IN, plus the input (no ReLU
/// after the sum).
#[derive(Debug)]
struct ResidualBlock {
    conv1: ConvLayer,
    in1: InstanceNorm,
    conv2: ConvLayer,
    in2: InstanceNorm,
}

impl ResidualBlock {
    fn new(p: nn::Path, channels: i64) -> ResidualBlock {
        ResidualBlock {
            conv1: ConvLayer::new(&p / "conv1", channels, channels, 3, 1),
            in1: InstanceNorm::new(&p / "in1", channels),
            conv2: ConvLayer::new(&p / "conv2", channels, channels, 3, 1),
            in2: InstanceNorm::new(&p / "in2", channels),
        }
    }
}

impl Module for ResidualBlock {
    fn forward(&self, x: &Tensor) -> Tensor {
        let out = self.in1.forward(&self.conv1.forward(x)).relu();
        self.in2.forward(&self.conv2.forward(&out)) + x
    }
}

/// transformer_net.py's `TransformerNet`, its parameter names kept (`conv1.conv2d.weight`,
/// `in1.weight`, `res1.conv1.conv2d.weight`, …): 1,679,235 parameters.
#[derive(Debug)]
struct TransformerNet {
    down: Vec<(ConvLayer, InstanceNorm)>,
    res: Vec<ResidualBlock>,
    up: Vec<(ConvLayer, InstanceNorm)>,
    last: ConvLayer,
}

impl TransformerNet {
    fn new(p: &nn::Path) -> TransformerNet {
        let down = [(3, 32, 9, 1), (32, 64, 3, 2), (64, 128, 3, 2)]
            .iter()
            .enumerate()
            .map(|(i, &(cin, cout, k, stride))| {
                (
                    ConvLayer::new(p / format!("conv{}", i + 1), cin, cout, k, stride),
                    InstanceNorm::new(p / format!("in{}", i + 1), cout),
                )
            })
            .collect();
        let res = (1..=5)
            .map(|i| ResidualBlock::new(p / format!("res{i}"), 128))
            .collect();
        let up = [(128, 64), (64, 32)]
            .iter()
            .enumerate()
            .map(|(i, &(cin, cout))| {
                (
                    ConvLayer::upsampling(p / format!("deconv{}", i + 1), cin, cout, 3),
                    InstanceNorm::new(p / format!("in{}", i + 4), cout),
                )
            })
            .collect();
        let last = ConvLayer::new(p / "deconv3", 32, 3, 9, 1);
        TransformerNet {
            down,
            res,
            up,
            last,
        }
    }
}

impl Module for TransformerNet {
    fn forward(&self, x: &Tensor) -> Tensor {
        let mut y = x.shallow_clone();
        for (conv, norm) in &self.down {
            y = norm.forward(&conv.forward(&y)).relu();
        }
        for block in &self.res {
            y = block.forward(&y);
        }
        for (conv, norm) in &self.up {
            y = norm.forward(&conv.forward(&y)).relu();
        }
        // No activation on the output: the image comes out unbounded, as the script's.
        self.last.forward(&y)
    }
}

/// vgg.py's `Vgg16`: torchvision's VGG-16 `features[0..23]` (3×3 convs, padding 1, ReLU;
/// 2×2 max-pools) in its four slices. Variables are named by torchvision's indices
/// (`features.0.weight`, …) so ImageNet weights could be loaded into it.
#[derive(Debug)]
struct Vgg16 {
    /// Per slice: does it open with a max-pool, and its convolutions.
    slices: Vec<(bool, Vec<nn::Conv2D>)>,
}

/// (first features index, convolution widths) of each slice.
const VGG_SLICES: [(i64, &[(i64, i64)]); 4] = [
    (0, &[(3, 64), (64, 64)]),
    (5, &[(64, 128), (128, 128)]),
    (10, &[(128, 256), (256, 256), (256, 256)]),
    (17, &[(256, 512), (512, 512), (512, 512)]),
];

impl Vgg16 {
    fn new(p: &nn::Path) -> Vgg16 {
        // torchvision VGG._initialize_weights (what vgg16(pretrained=False) would start from).
        let cfg = nn::ConvConfig {
            padding: 1,
            ws_init: nn::Init::Kaiming {
                dist: nn::init::NormalOrUniform::Normal,
                fan: nn::init::FanInOut::FanOut,
                non_linearity: nn::init::NonLinearity::ReLU,
            },
            bs_init: nn::Init::Const(0.0),
            ..Default::default()
        };
        let features = p / "features";
        let slices = VGG_SLICES
            .iter()
            .map(|&(first, widths)| {
                let convs = widths
                    .iter()
                    .enumerate()
                    .map(|(j, &(cin, cout))| {
                        // Each conv is followed by its ReLU: indices step by 2.
                        let index = first + 2 * j as i64;
                        nn::conv2d(&features / index, cin, cout, 3, cfg)
                    })
                    .collect();
                (first > 0, convs)
            })
            .collect();
        Vgg16 { slices }
    }

    /// relu1_2, relu2_2, relu3_3, relu4_3.
    fn forward(&self, x: &Tensor) -> Vec<Tensor> {
        let mut h = x.shallow_clone();
        let mut outputs = Vec::with_capacity(self.slices.len());
        for (pool, convs) in &self.slices {
            if *pool {
                h = h.max_pool2d([2, 2], [2, 2], [0, 0], [1, 1], false);
            }
            for conv in convs {
                h = conv.forward(&h).relu();
            }
            outputs.push(h.shallow_clone());
        }
        outputs
    }
}

/// utils.py's `gram_matrix`: (b, c, h, w) → (b, c, c), F·Fᵀ / (c·h·w).
fn gram_matrix(y: &Tensor) -> Tensor {
    let (b, ch, h, w) = y.size4().unwrap();
    let features = y.reshape([b, ch, h * w]);
    features.bmm(&features.transpose(1, 2)) / (ch * h * w) as f64
}

/// utils.py's `normalize_batch`: pixels in 0…255 to ImageNet-normalised values. The script
/// divides its argument in place (`div_`); a new tensor is returned here and the input left
/// alone (the same arithmetic).
fn normalize_batch(batch: &Tensor) -> Tensor {
    let channel = |values: [f64; 3]| {
        Tensor::from_slice(&values)
            .to_kind(batch.kind())
            .to_device(batch.device())
            .view([-1, 1, 1])
    };
    let mean = channel([0.485, 0.456, 0.406]);
    let std = channel([0.229, 0.224, 0.225]);
    (batch / 255.0 - mean) / std
}

/// Random 8-bit pixels, 0…255 as floats (`ToTensor()` then `mul(255)`).
fn random_images(n: i64, size: i64, ctx: &Ctx) -> Tensor {
    Tensor::randint(256, [n, 3, size, size], ctx.int_opts()).to_kind(ctx.kind)
}

/// The content batches: `n` images of 3 × `size` × `size` random bytes, ÷ 255 by ToTensor
/// and × 255 by the script's `Lambda(lambda x: x.mul(255))` (a table: byte b → b).
fn content_recipe(n: i64, size: i64) -> Recipe {
    let channels = [0.0; 3];
    let sd = [1.0 / 255.0; 3];
    Recipe::normalized(n as usize, (size * size) as usize, 0, &channels, &sd)
}

/// run.sh's `--dataset $DATA_DIRECTORY/ImageNet/train` (the jobs name none) through
/// neural_style.py:37-45's Resize, CenterCrop, ToTensor and `mul(255)`, not shuffled;
/// with `--synthetic-data`, [`content_recipe`]'s noise.
fn content_images(
    ctx: &Ctx,
    args: &BenchArgs,
    batch_size: i64,
    size: i64,
) -> Result<Images, BenchError> {
    if ctx.synthetic {
        return Ok(Images::Memory(content_recipe(batch_size, size)));
    }
    let mut args = args.clone();
    args.batch_size = batch_size;
    if ctx.string(&args, &["dataset"])?.is_none() {
        let train = ctx.data_directory("ImageNet/train")?.join("ImageNet/train");
        let train = mlbench_schema::value::Value::Str(train.display().to_string());
        args.extra.insert("dataset".to_owned(), train);
    }
    let pipeline = image_data::Pipeline::CenterCrop {
        size: size as usize,
        norm: mlbench_datasets::images::transforms::Normalisation::Times255,
    };
    let files = image_data::open(ctx, &args, "dataset", pipeline, false)?;
    let files = files.ok_or_else(|| ctx.failed("no content images"))?;
    Ok(Images::Files(files))
}

struct FastStyle {
    transformer: TransformerNet,
    vgg: Vgg16,
    opt: nn::Optimizer,
    /// The content images (`train_loader`): the same batches each observation.
    content: EpochLoader<Images>,
    name: &'static str,
    /// `[batch, 3, size, size]`.
    shape: [i64; 4],
    kind: Kind,
    device: Device,
    /// The style image's Gram matrix per slice, (1, c, c), in `loss_kind`.
    gram_style: Vec<Tensor>,
    content_weight: f64,
    style_weight: f64,
    /// Gram matrices and losses are taken in float32 even for float16/bfloat16 nets: the
    /// weights (1e10) and the sums over h·w would overflow float16.
    loss_kind: Kind,
    /// The observation's summed losses (`agg_content_loss + agg_style_loss`).
    agg_loss: f64,
    _vs: (nn::VarStore, nn::VarStore),
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    Ok(Box::new(new_model(ctx, args)?))
}

fn new_model(ctx: &Ctx, args: &BenchArgs) -> Result<FastStyle, BenchError> {
    let batch_size = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let image_size = ctx.size(args, &["image_size"], 64)?;
    let style_size = ctx.size(args, &["style_size"], 64)?;
    let lr = ctx.float(args, &["lr"], 1e-3)?;
    let content_weight = ctx.float(args, &["content_weight"], 1e5)?;
    let style_weight = ctx.float(args, &["style_weight"], 1e10)?;
    // Two stride-2 convs then two ×2 upsamples give the input size back only for multiples
    // of 4 (else the script's content MSE would fail on mismatched shapes); VGG's three
    // pools need 8 pixels, and the 9×9 reflection padding needs more than 4.
    if image_size % 4 != 0 || image_size < 8 {
        return Err(ctx.arg_error(format!(
            "--image-size {image_size}: must be a multiple of 4, at least 8"
        )));
    }
    if style_size < 8 {
        return Err(ctx.arg_error(format!(
            "--style-size {style_size}: VGG-16's three pools need at least 8"
        )));
    }
    let mut vs = nn::VarStore::new(ctx.device);
    let transformer = TransformerNet::new(&vs.root());
    vs.set_kind(ctx.kind);
    let mut vgg_vs = nn::VarStore::new(ctx.device);
    let vgg = Vgg16::new(&vgg_vs.root());
    vgg_vs.set_kind(ctx.kind);
    // Vgg16(requires_grad=False): gradients flow through it to the image, not into it.
    vgg_vs.freeze();
    let opt = nn::Adam::default()
        .build(&vs, lr)
        .map_err(|e| ctx.failed(e.to_string()))?;
    let workers = ctx.int(args, &["workers"], 0)?.max(0) as usize;
    let content = content_images(ctx, args, batch_size, image_size)?;
    let content = EpochLoader::new(content, args.seed as u64, workers, Order::Restart);
    let loss_kind = if ctx.kind == Kind::Double {
        Kind::Double
    } else {
        Kind::Float
    };
    // The script repeats the style image batch_size times and keeps gram_style[:n_batch];
    // the copies' Gram matrices are identical, so one image's is computed and broadcast.
    let style = random_images(1, style_size, ctx);
    let gram_style = tch::no_grad(|| {
        vgg.forward(&normalize_batch(&style))
            .iter()
            .map(|f| gram_matrix(&f.to_kind(loss_kind)))
            .collect()
    });
    Ok(FastStyle {
        transformer,
        vgg,
        opt,
        content,
        name: ctx.name,
        shape: [batch_size, 3, image_size, image_size],
        kind: ctx.kind,
        device: ctx.device,
        gram_style,
        content_weight,
        style_weight,
        loss_kind,
        agg_loss: 0.0,
        _vs: (vs, vgg_vs),
    })
}

impl FastStyle {
    /// content_weight·MSE(relu2_2) + style_weight·Σ MSE(Gram), for a stylised batch `y` of
    /// the content batch `x`, both in pixels.
    fn loss(&self, y: &Tensor, x: &Tensor) -> Tensor {
        let features_y = self.vgg.forward(&normalize_batch(y));
        let features_x = self.vgg.forward(&normalize_batch(x));
        let kind = self.loss_kind;
        let content = features_y[1]
            .to_kind(kind)
            .mse_loss(&features_x[1].to_kind(kind), Reduction::Mean)
            * self.content_weight;
        let style = features_y
            .iter()
            .zip(&self.gram_style)
            .map(|(f, gram_s)| {
                let gram_y = gram_matrix(&f.to_kind(kind));
                gram_y.mse_loss(&gram_s.expand_as(&gram_y), Reduction::Mean)
            })
            .reduce(|a, b| a + b)
            .expect("four VGG slices")
            * self.style_weight;
        content + style
    }
}

impl Train for FastStyle {
    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        let batch = self.content.next_batch().map_err(|e| BenchError::Failed {
            bench: self.name.to_owned(),
            message: e.to_string(),
        })?;
        // An epoch's last batch may be short (a DataLoader without `drop_last`).
        let [_, c, h, w] = self.shape;
        let n = batch.images.len() as i64 / (c * h * w);
        let x = on_device(&batch.images, &[n, c, h, w], self.device, self.kind);
        let y = self.transformer.forward(&x);
        let loss = self.loss(&y, &x);
        self.opt.backward_step(&loss);
        Ok(loss)
    }

    fn begin_observation(&mut self, _observation: u64) {
        self.agg_loss = 0.0;
        // `for batch_id, (x, _) in enumerate(train_loader)`: a new iterator, from the start.
        self.content.begin();
    }

    fn step(&mut self) -> Result<Logs, BenchError> {
        let loss = self.train_step()?.to_kind(Kind::Double).double_value(&[]);
        // agg_content_loss + agg_style_loss: the sum of the steps' total losses.
        self.agg_loss += loss;
        Ok(Logs::loss(loss))
    }

    fn end_observation(&mut self, _observation: u64) -> Logs {
        // The loop's end drops the iterator; neural_style.py:105, inside the timer.
        self.content.end();
        Logs::none().epoch_loss(self.agg_loss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::DeviceSpec;
    use crate::models::own_process;
    use mlbench_schema::value::Value;
    use std::collections::BTreeMap;
    use tch::Device;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance * b.abs().max(1.0)
    }

    fn values(t: &Tensor) -> Vec<f64> {
        Vec::<f64>::try_from(t.to_kind(Kind::Double).flatten(0, -1)).unwrap()
    }

    /// One sample, two channels of 2×2 (c·h·w = 8):
    ///   channel 0 = [[1, 2], [3, 4]], channel 1 = [[0, 1], [-1, 2]].
    ///   G00 = (1 + 4 + 9 + 16) / 8 = 30/8 = 3.75
    ///   G01 = G10 = (1·0 + 2·1 + 3·(−1) + 4·2) / 8 = 7/8 = 0.875
    ///   G11 = (0 + 1 + 1 + 4) / 8 = 6/8 = 0.75
    #[test]
    fn fast_style_gram_matrix_by_hand() {
        let y =
            Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 0.0, 1.0, -1.0, 2.0]).view([1, 2, 2, 2]);
        let gram = gram_matrix(&y);
        assert_eq!(gram.size(), [1, 2, 2]);
        let got = values(&gram);
        for (g, e) in got.iter().zip([3.75, 0.875, 0.875, 0.75]) {
            assert!(close(*g, e, 1e-6), "{got:?}");
        }
        // A batch of two: each sample its own Gram matrix (the second is the first × 2, so
        // its Gram matrix is × 4).
        let two = Tensor::cat(&[&y, &(&y * 2.0)], 0);
        let got = values(&gram_matrix(&two));
        for (g, e) in got
            .iter()
            .zip([3.75, 0.875, 0.875, 0.75, 15.0, 3.5, 3.5, 3.0])
        {
            assert!(close(*g, e, 1e-6), "{got:?}");
        }
    }

    /// (p/255 − mean_c) / std_c, pixels per channel (two each):
    ///   R: 0 → −0.485/0.229 = −2.1179039, 255 → 0.515/0.229 = 2.2489083
    ///   G: 127.5 → (0.5 − 0.456)/0.224 = 0.1964286, 255·0.456 = 116.28 → 0
    ///   B: 255·0.406 = 103.53 → 0, 255·(0.406 + 0.225) = 160.905 → 1
    #[test]
    fn fast_style_normalize_batch_on_known_pixels() {
        let pixels = [0.0f64, 255.0, 127.5, 116.28, 103.53, 160.905];
        let batch = Tensor::from_slice(&pixels).view([1, 3, 1, 2]);
        let got = values(&normalize_batch(&batch));
        let expected = [-2.1179039, 2.2489083, 0.1964286, 0.0, 0.0, 1.0];
        for (g, e) in got.iter().zip(expected) {
            assert!(close(*g, e, 1e-6), "{got:?}");
        }
        // The input comes back untouched (the script's `div_` is in place).
        assert_eq!(values(&batch), pixels);
        // Float32 gives the same figures.
        let got = values(&normalize_batch(&batch.to_kind(Kind::Float)));
        for (g, e) in got.iter().zip(expected) {
            assert!(close(*g, e, 1e-5), "{got:?}");
        }
    }

    /// TransformerNet, as PyTorch counts it (weights and biases of each layer):
    ///   convs 1–3: 3·32·81 + 32 + 32·64·9 + 64 + 64·128·9 + 128 = 100,160
    ///   in1–3: 2·(32 + 64 + 128) = 448
    ///   res1–5: 5·(2·(128·128·9 + 128) + 2·2·128) = 1,478,400
    ///   deconv1–2: 128·64·9 + 64 + 64·32·9 + 32 = 92,256
    ///   in4–5: 2·(64 + 32) = 192
    ///   deconv3: 32·3·81 + 3 = 7,779
    ///   total 1,679,235.
    /// VGG-16's `features[:23]`, convs 3→64→64→128→128→256→256→256→512→512→512:
    ///   1,792 + 36,928 + 73,856 + 147,584 + 295,168 + 2·590,080 + 1,180,160 + 2·2,359,808
    ///   = 7,635,264.
    #[test]
    fn fast_style_parameter_counts_match_the_scripts_nets() {
        let count = |vs: &nn::VarStore| -> i64 {
            vs.trainable_variables()
                .iter()
                .map(|t| t.numel() as i64)
                .sum()
        };
        let vs = nn::VarStore::new(Device::Cpu);
        let _net = TransformerNet::new(&vs.root());
        assert_eq!(count(&vs), 1_679_235);
        let names = vs.variables();
        for name in [
            "conv1.conv2d.weight",
            "in3.bias",
            "res5.in2.weight",
            "deconv3.conv2d.bias",
        ] {
            assert!(names.contains_key(name), "{name} missing");
        }
        let vgg_vs = nn::VarStore::new(Device::Cpu);
        let _vgg = Vgg16::new(&vgg_vs.root());
        assert_eq!(count(&vgg_vs), 7_635_264);
        assert!(vgg_vs.variables().contains_key("features.21.weight"));
    }

    /// Strides 2, 2 then upsamples ×2, ×2: a side divisible by 4 comes back unchanged
    /// (12 → 6 → 3 → 6 → 12), and the VGG slices halve it after each of the first three.
    #[test]
    fn fast_style_transformer_keeps_the_spatial_size() {
        tch::manual_seed(1);
        let vs = nn::VarStore::new(Device::Cpu);
        let net = TransformerNet::new(&vs.root());
        for shape in [[2, 3, 16, 16], [1, 3, 12, 20]] {
            let x = Tensor::rand(shape, (Kind::Float, Device::Cpu)) * 255.0;
            let y = tch::no_grad(|| net.forward(&x));
            assert_eq!(y.size(), shape);
            assert!(values(&y).iter().all(|v| v.is_finite()));
        }
        let vgg_vs = nn::VarStore::new(Device::Cpu);
        let vgg = Vgg16::new(&vgg_vs.root());
        let x = Tensor::rand([2, 3, 16, 16], (Kind::Float, Device::Cpu));
        let shapes: Vec<Vec<i64>> = tch::no_grad(|| vgg.forward(&x))
            .iter()
            .map(|f| f.size())
            .collect();
        assert_eq!(
            shapes,
            [
                vec![2, 64, 16, 16],
                vec![2, 128, 8, 8],
                vec![2, 256, 4, 4],
                vec![2, 512, 2, 2]
            ]
        );
    }

    fn tiny(seed: i64) -> BenchArgs {
        BenchArgs {
            batch_size: 2,
            number: 1,
            repeat: 1,
            seed,
            extra: [
                ("image_size".to_owned(), Value::Int(16)),
                ("style_size".to_owned(), Value::Int(8)),
                ("synthetic_data".to_owned(), Value::Bool(true)),
            ]
            .into(),
        }
    }

    fn ctx(args: &BenchArgs) -> Ctx {
        let spec = DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        Ctx::new("fast_style", args, spec).unwrap()
    }

    /// Four observations of one step of the tiny model built with `seed`: four steps on
    /// the same batch, each observation's first.
    fn losses(seed: i64) -> Vec<f64> {
        let args = tiny(seed);
        let ctx = ctx(&args);
        let mut model = build(&ctx, &args).unwrap();
        (0..4)
            .map(|r| {
                model.begin_observation(r);
                let loss = model.train_step().unwrap().double_value(&[]);
                let _ = model.end_observation(r);
                loss
            })
            .collect()
    }

    /// As the script's unshuffled loader: within an observation each step a new batch,
    /// and every observation the same batches in the same order; another seed, others.
    #[test]
    fn fast_style_batches_are_fresh_each_step_and_the_same_each_observation() {
        let args = tiny(7);
        let ctx = ctx(&args);
        let mut model = new_model(&ctx, &args).unwrap();
        let observation = |model: &mut FastStyle, r| {
            model.begin_observation(r);
            let batches: Vec<Vec<f32>> = (0..3)
                .map(|_| model.content.next_batch().unwrap().images)
                .collect();
            let _ = model.end_observation(r);
            batches
        };
        let first = observation(&mut model, 0);
        assert_eq!(first[0].len(), 2 * 3 * 16 * 16);
        assert!(
            first[0]
                .iter()
                .all(|v| v.fract() == 0.0 && (0.0..=255.0).contains(v))
        );
        assert_ne!(first[0], first[1]);
        assert_ne!(first[1], first[2]);
        assert_eq!(observation(&mut model, 1), first);
        // The model takes one a step, from the observation's first.
        model.begin_observation(2);
        let _ = model.train_step().unwrap();
        let _ = model.train_step().unwrap();
        assert_eq!(model.content.position(), 2);
        let _ = model.end_observation(2);
        let other = tiny(8);
        let mut model = new_model(&ctx, &other).unwrap();
        assert_ne!(observation(&mut model, 0)[0], first[0]);
    }

    /// The same seed gives the same losses, another seed others: each run in a process of
    /// its own (libtorch's generator is global; `own_process`).
    #[test]
    fn fast_style_same_seed_same_losses() {
        let Some(run) = own_process::runner(
            "models::fast_style::tests::fast_style_same_seed_same_losses",
            losses,
        ) else {
            return;
        };
        let a = run(7);
        assert_eq!(a.len(), 4);
        assert!(a.iter().all(|l| l.is_finite() && *l > 0.0), "{a:?}");
        assert_eq!(a, run(7));
        assert_ne!(a, run(8));
    }

    /// Training moves the TransformerNet and lowers the loss on a batch it sees again,
    /// never the frozen VGG.
    #[test]
    fn fast_style_trains_the_transformer_only() {
        let a = losses(7);
        assert!(a.iter().all(|l| l.is_finite() && *l > 0.0), "{a:?}");
        assert!(
            a[3] < a[0],
            "Adam should lower the loss on a batch seen again: {a:?}"
        );

        let args = tiny(7);
        let ctx = ctx(&args);
        let mut model = new_model(&ctx, &args).unwrap();
        let snapshot = |vs: &nn::VarStore| -> BTreeMap<String, Tensor> {
            vs.variables()
                .into_iter()
                .map(|(name, t)| (name, t.copy()))
                .collect()
        };
        let (net_before, vgg_before) = (snapshot(&model._vs.0), snapshot(&model._vs.1));
        let _ = model.train_step().unwrap();
        let moved = |before: &BTreeMap<String, Tensor>, vs: &nn::VarStore| -> Vec<String> {
            let after = snapshot(vs);
            before
                .iter()
                .filter(|(name, t)| !t.equal(&after[name.as_str()]))
                .map(|(name, _)| name.clone())
                .collect()
        };
        let (vs, vgg_vs) = &model._vs;
        let net_moved = moved(&net_before, vs);
        // Every weight (conv and instance norm) takes an Adam step. (The conv biases ahead
        // of an instance norm are cancelled by it and get no gradient to speak of.)
        for name in net_before.keys() {
            if name.ends_with("weight") || name.starts_with("in") || name.starts_with("deconv3") {
                assert!(net_moved.contains(name), "{name} did not move");
            }
        }
        assert_eq!(moved(&vgg_before, vgg_vs), Vec::<String>::new());
        assert!(
            vgg_vs
                .trainable_variables()
                .iter()
                .all(|t| !t.requires_grad())
        );
    }

    /// The jobs' sizes (run.sh's 64×64 images and style, the script's weights and lr) with
    /// the batch cut from 128 to 4: a step on CPU gives a finite loss, and training lowers
    /// it. `--ignored`: a few seconds in a debug build.
    #[test]
    #[ignore]
    fn fast_style_steps_at_the_jobs_image_sizes() {
        let args = BenchArgs {
            batch_size: 4,
            number: 1,
            repeat: 1,
            seed: 100,
            extra: [("synthetic_data".to_owned(), Value::Bool(true))].into(),
        };
        let ctx = ctx(&args);
        let start = std::time::Instant::now();
        let mut model = build(&ctx, &args).unwrap();
        let built = start.elapsed();
        let losses: Vec<f64> = (0..3)
            .map(|_| model.train_step().unwrap().double_value(&[]))
            .collect();
        eprintln!(
            "built in {built:.2?}, 3 steps in {:.2?}: {losses:?}",
            start.elapsed() - built
        );
        assert!(losses.iter().all(|l| l.is_finite()), "{losses:?}");
        assert!(losses[2] < losses[0], "{losses:?}");
    }

    #[test]
    fn fast_style_refuses_sizes_the_nets_cannot_take() {
        for (key, size) in [("image_size", 30), ("image_size", 4), ("style_size", 7)] {
            let mut args = tiny(1);
            args.extra.insert(key.to_owned(), Value::Int(size));
            let ctx = ctx(&args);
            assert!(
                matches!(build(&ctx, &args), Err(BenchError::Argument { .. })),
                "{key} {size}"
            );
        }
    }
}
