//! dcgan (generative_adversarial_networks/dcgan main.py): the 64×64 DCGAN generator
//! (nz→ngf·8→…→3, transposed convolutions, batch norm, tanh) and discriminator (3→ndf→…→1,
//! leaky ReLU, batch norm), weights N(0, 0.02); one step trains D on a real (random) and a
//! fake batch, then G; BCE on logits, Adam lr 2e-4, β₁ 0.5.
//!
//! Logged as the script (main.py:237-264): no batch loss; the metrics `errD_real`,
//! `errG_fake` (the script's name for errD_fake) and `errG`, each read with `.item()` where
//! the script reads it, and the three output means it reads (D_x, D_G_z1, D_G_z2): six waits
//! per step. The script's loop (`if i > opt.number: break`) trains `number + 1` batches per
//! observation while counting `number`: its bug, which mlbench does not copy (`number`).
//!
//! Data as the script's (main.py:58-66,101-106,221-244): a fresh real batch every step,
//! [B, 3, 64, 64] in [−1, 1] (ToTensor then `Normalize(0.5, 0.5)`), made on the host by a
//! loader of `workers` threads (`host_loader`) whose iterator each observation starts
//! inside its timer and stops at its end (the script's new shuffled DataLoader iterator),
//! copied to the device from pageable memory as the script's `.to(device)`; the noise
//! `randn(B, nz, 1, 1)` drawn on the device each step. The real images are `--dataroot`'s
//! (`$DATA_DIRECTORY/ImageNet/train`) as main.py's ImageFolder reads them: decoded, Resize
//! 64 (Pillow's antialiased bilinear), CenterCrop 64, ToTensor, Normalize(0.5, 0.5)
//! (`image_data`); with `--synthetic-data`, uniform noise made in memory, and the
//! entries say `synthetic_data`. dcgan_all reads the same way.
//! Args: `batch_size` (fast.json: 128), `nz` (100), `ngf` (64), `ndf` (64), `imageSize` (64
//! only), `workers` (fast.json: 8).

use super::host_loader::{EpochLoader, Order, Recipe, on_device};
use super::image_data::{self, Images};
use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use tch::nn::{self, ModuleT, OptimizerConfig};
use tch::{Device, Kind, Reduction, Tensor};

pub(super) const SOURCE: &str = concat!(
    include_str!("dcgan.rs"),
    include_str!("host_loader.rs"),
    include_str!("image_data.rs"),
    include_str!("loader.rs")
);

/// Image channels (`nc` for imagenet).
pub(super) const NC: i64 = 3;

/// main.py's `weights_init` for convolutions: N(0, 0.02).
const WEIGHTS_INIT: nn::Init = nn::Init::Randn {
    mean: 0.0,
    stdev: 0.02,
};

fn tconv(p: nn::Path, i: i64, o: i64, stride: i64, padding: i64) -> nn::ConvTranspose2D {
    let cfg = nn::ConvTransposeConfig {
        stride,
        padding,
        bias: false,
        ws_init: WEIGHTS_INIT,
        ..Default::default()
    };
    nn::conv_transpose2d(p, i, o, 4, cfg)
}

fn conv(p: nn::Path, i: i64, o: i64, stride: i64, padding: i64) -> nn::Conv2D {
    let cfg = nn::ConvConfig {
        stride,
        padding,
        bias: false,
        ws_init: WEIGHTS_INIT,
        ..Default::default()
    };
    nn::conv2d(p, i, o, 4, cfg)
}

fn bn(p: nn::Path, n: i64) -> nn::BatchNorm {
    let cfg = nn::BatchNormConfig {
        ws_init: nn::Init::Randn {
            mean: 1.0,
            stdev: 0.02,
        },
        bs_init: nn::Init::Const(0.0),
        ..Default::default()
    };
    nn::batch_norm2d(p, n, cfg)
}

/// The ReLUs in place, as main.py's `nn.ReLU(True)`, and the tanh too (a transposed
/// convolution's backward does not need its output; tanh's own needs only its result).
pub(super) fn generator(p: &nn::Path, nz: i64, ngf: i64) -> nn::SequentialT {
    let widths = [nz, ngf * 8, ngf * 4, ngf * 2, ngf];
    let mut seq = nn::seq_t();
    for (i, w) in widths.windows(2).enumerate() {
        let (stride, padding) = if i == 0 { (1, 0) } else { (2, 1) };
        seq = seq
            .add(tconv(p / format!("tconv{i}"), w[0], w[1], stride, padding))
            .add(bn(p / format!("bn{i}"), w[1]))
            .add_fn(|x| x.shallow_clone().relu_());
    }
    seq.add(tconv(p / "tconv4", ngf, NC, 2, 1))
        .add_fn(|x| x.shallow_clone().tanh_())
}

/// Ends with the logit (the script's Sigmoid is folded into the loss).
pub(super) fn discriminator(p: &nn::Path, ndf: i64) -> nn::SequentialT {
    let widths = [NC, ndf, ndf * 2, ndf * 4, ndf * 8];
    let mut seq = nn::seq_t();
    for (i, w) in widths.windows(2).enumerate() {
        seq = seq.add(conv(p / format!("conv{i}"), w[0], w[1], 2, 1));
        if i > 0 {
            seq = seq.add(bn(p / format!("bn{i}"), w[1]));
        }
        seq = seq.add_fn(leaky_relu_02);
    }
    seq.add(conv(p / "conv4", ndf * 8, 1, 1, 0))
}

/// main.py's `nn.LeakyReLU(0.2, inplace=True)`. tch's `leaky_relu` has only PyTorch's
/// default slope (0.01), but ATen's leaky ReLU backward takes a slope: `x ↦ x if x > 0,
/// else 0.2·x` is that backward applied to `x` as the gradient, with a detached `x` as the
/// input it tests. One native pass forward, and autograd's derivative of the backward with
/// respect to its gradient argument is the leaky ReLU's own (`grad` if x > 0, else
/// `0.2·grad`; 0.2 at x = 0, as PyTorch's), one native pass back. The values are bitwise
/// `max(x, 0.2·x)`'s (both multiply by the float 0.2), whose backward ATen makes far more
/// costly (about 10× a leaky ReLU's on the CPU).
pub(super) fn leaky_relu_02(x: &Tensor) -> Tensor {
    x.detach().leaky_relu_backward(x, 0.2, false)
}

/// What the real batches are made of: noise, or the data folder's images.
/// The real batches: main.py's `dataloader` of fake ImageNet, 64×64 in [−1, 1].
pub(super) struct Reals {
    loader: EpochLoader<Images>,
    name: &'static str,
    /// `[batch, 3, 64, 64]`.
    shape: [i64; 4],
    kind: Kind,
    device: Device,
}

impl Reals {
    /// Batches of `batch_size` on `device`, from `--workers` threads seeded by the copy's
    /// seed: `--dataroot`'s images, or noise made in memory with `--synthetic-data`.
    pub(super) fn new(
        ctx: &Ctx,
        args: &BenchArgs,
        batch_size: i64,
        device: Device,
    ) -> Result<Reals, BenchError> {
        let workers = ctx.int(args, &["workers"], 0)?.max(0) as usize;
        let half = [0.5; NC as usize];
        let pipeline = image_data::Pipeline::DCGAN;
        let files = image_data::open(ctx, args, "dataroot", pipeline, true)?;
        let batches = match files {
            Some(files) => Images::Files(files),
            None => Images::Memory(Recipe::normalized(
                batch_size as usize,
                64 * 64,
                0,
                &half,
                &half,
            )),
        };
        Ok(Reals {
            loader: EpochLoader::new(batches, args.seed as u64, workers, Order::Continue),
            name: ctx.name,
            shape: [batch_size, NC, 64, 64],
            kind: ctx.kind,
            device,
        })
    }

    /// Images per batch.
    pub(super) fn batch_size(&self) -> i64 {
        self.shape[0]
    }

    /// The next batch, `.to(device)` (an epoch's last batch of files may be short, as a
    /// DataLoader's without `drop_last`).
    pub(super) fn next(&mut self) -> Result<Tensor, BenchError> {
        let batch = self.loader.next_batch().map_err(|e| BenchError::Failed {
            bench: self.name.to_owned(),
            message: e.to_string(),
        })?;
        let [_, c, h, w] = self.shape;
        let n = (batch.images.len() as i64) / (c * h * w);
        Ok(on_device(
            &batch.images,
            &[n, c, h, w],
            self.device,
            self.kind,
        ))
    }

    /// `for i, data in enumerate(dataloader)`: a new iterator (inside the timer).
    pub(super) fn begin(&mut self) {
        self.loader.begin();
    }

    /// The loop's end: the iterator and its workers go (inside the timer).
    pub(super) fn end(&mut self) {
        self.loader.end();
    }
}

struct Dcgan {
    net_g: nn::SequentialT,
    net_d: nn::SequentialT,
    opt_g: nn::Optimizer,
    opt_d: nn::Optimizer,
    reals: Reals,
    nz: i64,
    _vs: (nn::VarStore, nn::VarStore),
}

/// The networks' sizes: `nz`, `ngf`, `ndf` (and `imageSize`, 64 only).
pub(super) struct DcganArgs {
    pub nz: i64,
    pub ngf: i64,
    pub ndf: i64,
}

impl DcganArgs {
    pub(super) fn read(ctx: &Ctx, args: &BenchArgs) -> Result<DcganArgs, BenchError> {
        let nz = ctx.size(args, &["nz"], 100)?;
        let ngf = ctx.size(args, &["ngf"], 64)?;
        let ndf = ctx.size(args, &["ndf"], 64)?;
        let image_size = ctx.size(args, &["imageSize", "image_size"], 64)?;
        if image_size != 64 {
            return Err(ctx.arg_error(format!(
                "--imageSize {image_size}: the DCGAN nets are for 64×64"
            )));
        }
        Ok(DcganArgs { nz, ngf, ndf })
    }
}

/// main.py's optimizers: Adam, β₁ 0.5 (lr [`LR`]).
pub(super) const ADAM: nn::Adam = nn::Adam {
    beta1: 0.5,
    beta2: 0.999,
    wd: 0.0,
    eps: 1e-8,
    amsgrad: false,
};

/// main.py's `--lr` default.
pub(super) const LR: f64 = 2e-4;

/// main.py's `BCELoss` after the Sigmoid, on the logits: mean over the batch.
pub(super) fn bce(logits: &Tensor, label: f64) -> Tensor {
    let target = logits.full_like(label);
    logits.binary_cross_entropy_with_logits::<Tensor>(&target, None, None, Reduction::Mean)
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    let batch_size = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let sizes = DcganArgs::read(ctx, args)?;
    let reals = Reals::new(ctx, args, batch_size, ctx.device)?;
    whole_batch(ctx, reals, sizes, ADAM, LR)
}

/// main.py's two networks on one device, over the batches of `reals`, each with its own
/// `adam` at `lr`.
pub(super) fn whole_batch(
    ctx: &Ctx,
    reals: Reals,
    sizes: DcganArgs,
    adam: nn::Adam,
    lr: f64,
) -> Result<Box<dyn Train>, BenchError> {
    Ok(Box::new(networks(ctx, reals, sizes, adam, lr)?))
}

/// [`whole_batch`]'s model.
fn networks(
    ctx: &Ctx,
    reals: Reals,
    DcganArgs { nz, ngf, ndf }: DcganArgs,
    adam: nn::Adam,
    lr: f64,
) -> Result<Dcgan, BenchError> {
    let mut vs_g = nn::VarStore::new(ctx.device);
    let mut vs_d = nn::VarStore::new(ctx.device);
    let net_g = generator(&vs_g.root(), nz, ngf);
    let net_d = discriminator(&vs_d.root(), ndf);
    vs_g.set_kind(ctx.kind);
    vs_d.set_kind(ctx.kind);
    if ctx.is_cuda() {
        tch::Cuda::cudnn_set_benchmark(true);
    }
    let opt_g = adam
        .build(&vs_g, lr)
        .map_err(|e| ctx.failed(e.to_string()))?;
    let opt_d = adam
        .build(&vs_d, lr)
        .map_err(|e| ctx.failed(e.to_string()))?;
    Ok(Dcgan {
        net_g,
        net_d,
        opt_g,
        opt_d,
        reals,
        nz,
        _vs: (vs_g, vs_d),
    })
}

/// What the script reads with `.item()` in a step, in its order: a metric's name, or
/// `None` for the output means it only prints (D_x, D_G_z1, D_G_z2).
pub(super) type Read<'a> = dyn FnMut(Option<&'static str>, &Tensor) + 'a;

/// Reads every value as the script's `.item()` does (each a wait for the device) and
/// files the metrics.
pub(super) fn logged_step(update: impl FnOnce(&mut Read<'_>)) -> Logs {
    let mut logs = Logs::none();
    update(&mut |name, value| {
        let value = value.to_kind(tch::Kind::Double).double_value(&[]);
        if let Some(name) = name {
            logs.metrics.push((name, value));
        }
    });
    logs
}

impl Dcgan {
    /// One step of main.py:232-264; `read` is called where the script calls `.item()`.
    /// Returns errD_real + errD_fake + errG.
    fn update(&mut self, read: &mut Read<'_>) -> Result<Tensor, BenchError> {
        let real = self.reals.next()?;
        // main.py:236: `batch_size = real_cpu.size(0)`.
        let batch = real.size()[0];
        // (1) D: maximise log D(x) + log(1 − D(G(z))).
        self.opt_d.zero_grad();
        let output = self.net_d.forward_t(&real, true);
        let err_d_real = bce(&output, 1.0);
        read(Some("errD_real"), &err_d_real);
        err_d_real.backward();
        read(None, &sigmoid_mean(&output));
        let noise = Tensor::randn([batch, self.nz, 1, 1], (real.kind(), real.device()));
        let fake = self.net_g.forward_t(&noise, true);
        let output = self.net_d.forward_t(&fake.detach(), true);
        let err_d_fake = bce(&output, 0.0);
        read(Some("errG_fake"), &err_d_fake);
        err_d_fake.backward();
        read(None, &sigmoid_mean(&output));
        self.opt_d.step();
        // (2) G: maximise log D(G(z)).
        self.opt_g.zero_grad();
        let output = self.net_d.forward_t(&fake, true);
        let err_g = bce(&output, 1.0);
        read(Some("errG"), &err_g);
        err_g.backward();
        read(None, &sigmoid_mean(&output));
        self.opt_g.step();
        Ok(err_d_real.detach() + err_d_fake.detach() + err_g.detach())
    }
}

/// `output.mean()` of the script's discriminator, whose last layer is the Sigmoid that
/// mlbench folds into the loss.
pub(super) fn sigmoid_mean(logits: &Tensor) -> Tensor {
    tch::no_grad(|| logits.sigmoid().mean(None))
}

impl Train for Dcgan {
    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        self.update(&mut |_, _| {})
    }

    fn step(&mut self) -> Result<Logs, BenchError> {
        let mut result = Ok(());
        let logs = logged_step(|read| result = self.update(read).map(drop));
        result.map(|()| logs)
    }

    fn begin_observation(&mut self, _observation: u64) {
        self.reals.begin();
    }

    fn end_observation(&mut self, _observation: u64) -> Logs {
        self.reals.end();
        Logs::none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::DeviceSpec;
    use mlbench_schema::value::Value;
    use tch::{Device, Kind};

    /// main.py's data: every step a new batch of [B, 3, 64, 64] in [−1, 1] (the
    /// observations' iterators continue the shuffled stream: never a batch twice), the same
    /// batches for the same seed whatever the workers.
    #[test]
    fn every_step_takes_a_fresh_real_batch() {
        let args = |workers: i64| BenchArgs {
            batch_size: 2,
            number: 1,
            repeat: 1,
            seed: 3,
            extra: [
                ("workers".to_owned(), Value::Int(workers)),
                ("synthetic_data".to_owned(), Value::Bool(true)),
            ]
            .into(),
        };
        let spec = DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        let ctx = Ctx::new("dcgan", &args(0), spec).unwrap();
        let batches = |workers| -> Vec<Vec<f32>> {
            let mut reals = Reals::new(&ctx, &args(workers), 2, Device::Cpu).unwrap();
            let mut out = Vec::new();
            for _ in 0..2 {
                reals.begin();
                for _ in 0..2 {
                    let t = reals.next().unwrap();
                    assert_eq!(t.size(), [2, 3, 64, 64]);
                    out.push(Vec::<f32>::try_from(t.flatten(0, -1)).unwrap());
                }
                reals.end();
            }
            out
        };
        let inline = batches(0);
        assert!(inline.iter().flatten().all(|v| (-1.0..=1.0).contains(v)));
        for (i, a) in inline.iter().enumerate() {
            for b in &inline[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(batches(3), inline);
        // The model takes one a step.
        let sizes = DcganArgs {
            nz: 4,
            ngf: 2,
            ndf: 2,
        };
        let reals = Reals::new(&ctx, &args(0), 2, Device::Cpu).unwrap();
        let mut model = networks(&ctx, reals, sizes, ADAM, LR).unwrap();
        for r in 0..2 {
            model.begin_observation(r);
            for _ in 0..3 {
                assert_eq!(model.step().unwrap().metrics.len(), 3);
            }
            let _ = model.end_observation(r);
        }
        assert_eq!(model.reals.loader.position(), 6);
    }

    /// The values of `max(x, 0.2·x)`, bit for bit, and its gradient away from 0 (1 above,
    /// 0.2 below); at 0 the gradient is PyTorch's leaky ReLU's, 0.2.
    #[test]
    fn the_leaky_relu_is_max_x_and_0_2x_with_its_gradient() {
        let values = [-3.5f32, -1.0, -0.3, -1e-30, 0.0, 1e-30, 0.1, 0.7, 2.0, 1e20];
        let x = Tensor::from_slice(&values).set_requires_grad(true);
        let want = tch::no_grad(|| x.maximum(&(&x * 0.2)));
        // On a layer's output, as in the network (x + 0 is x, bit for bit).
        let y = leaky_relu_02(&(&x + 0.0));
        assert_eq!(
            Vec::<f32>::try_from(&y).unwrap(),
            Vec::<f32>::try_from(&want).unwrap()
        );
        y.sum(Kind::Float).backward();
        let grad = Vec::<f32>::try_from(x.grad()).unwrap();
        for (v, g) in values.iter().zip(&grad) {
            let expected = if *v > 0.0 { 1.0 } else { 0.2 };
            assert_eq!(*g, expected, "at {v}");
        }
        // The same through autograd's max(x, 0.2·x), away from 0.
        let x2 = Tensor::from_slice(&values).set_requires_grad(true);
        x2.maximum(&(&x2 * 0.2)).sum(Kind::Float).backward();
        let grad2 = Vec::<f32>::try_from(x2.grad()).unwrap();
        for ((v, g), g2) in values.iter().zip(&grad).zip(&grad2) {
            if *v != 0.0 {
                assert_eq!(g, g2, "at {v}");
            }
        }
        // A batch of random values, as the discriminator sees them.
        let x = Tensor::randn([4, 8, 5, 5], (Kind::Float, Device::Cpu));
        let d = (leaky_relu_02(&x.copy()) - x.maximum(&(&x * 0.2)))
            .abs()
            .max()
            .double_value(&[]);
        assert_eq!(d, 0.0);
    }
}
