//! dcgan_all (generative_adversarial_networks/dcgan main.py with `--ngpu $DEVICE_TOTAL`; a
//! whole-machine job): dcgan's generator and discriminator through nn.DataParallel over
//! `ngpu` devices. main.py multiplies `--batch-size` by `ngpu`; every call of G or D
//! replicates the master (replica 0, on device 0) onto the devices, scatters its batch (on
//! device 0) as torch.chunk splits it, runs the chunks in their replicas' threads and gathers
//! the outputs onto device 0, where the losses are taken; the backward goes the same way back
//! and the replicas' gradients are summed into the master's, which alone the two optimizers
//! (Adam, `lr` 2e-4, β₁ `beta1` 0.5) step (`parallel::apply`, `backward`,
//! `reduce_add_grads`, `broadcast`). One step is dcgan's: D on the real batch and on a fake
//! one, then G through D. Returns errD_real + errD_fake + errG, as dcgan.
//! Args: `batch_size` per device (fast.json: 128), `ngpu` (the devices of `vcd`), `nz`
//! (100), `ngf` (64), `ndf` (64), `imageSize` (64 only), `lr`, `beta1`.

use super::dcgan::{self, DcganArgs, NC};
use super::parallel::{self, Workers};
use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError};
use mlbench_schema::value::Value;
use tch::nn::{self, ModuleT, OptimizerConfig};
use tch::{Device, Tensor};

pub(super) const SOURCE: &str = include_str!("dcgan_all.rs");

/// `--ngpu`, or the devices of `vcd` (main.py: `torch.cuda.device_count()`) without it.
fn ngpu(args: &BenchArgs) -> Option<i64> {
    match args.extra.get("ngpu") {
        None | Some(Value::Null) => parallel::vcd_devices(args).map(|n| n as i64),
        Some(Value::Int(i)) => Some(*i),
        Some(Value::Str(s)) => s.trim().parse().ok(),
        Some(_) => None,
    }
}

/// The batch main.py records and counts items by: `opt.batch_size * opt.ngpu`.
pub(super) fn batch_size(args: &BenchArgs) -> i64 {
    args.batch_size * ngpu(args).unwrap_or(1)
}

struct Replica {
    g: nn::SequentialT,
    d: nn::SequentialT,
    _vs: (nn::VarStore, nn::VarStore),
}

/// A module of the pair, as the master and its replicas hold it.
struct Module {
    /// Trainable parameters, replica × parameter (replica 0: the master's).
    params: Vec<Vec<Tensor>>,
    /// Parameters and buffers, replica × variable: what replication copies.
    vars: Vec<Vec<Tensor>>,
    /// The master's optimizer.
    opt: nn::Optimizer,
}

impl Module {
    /// main.py's `zero_grad()`, on the master and on the replicas' pending gradients.
    fn zero_grad(&self) {
        tch::no_grad(|| {
            for p in self.params.iter().flatten() {
                let mut grad = p.grad();
                if grad.defined() {
                    let _ = grad.zero_();
                }
            }
        });
    }

    /// DataParallel's `replicate` before a call: the replicas take the master's parameters
    /// and buffers.
    fn replicate(&self) {
        parallel::broadcast(&self.vars, self.vars.len());
    }

    /// The replicas' gradients summed into the master's (once per step: the sum DataParallel
    /// makes call by call), and the master's optimizer step.
    fn step(&mut self, replicas: usize) {
        parallel::reduce_add_grads(&self.params, replicas);
        self.opt.step();
    }
}

struct DcganAll {
    workers: Workers<Replica>,
    devices: Vec<Device>,
    g: Module,
    d: Module,
    /// The real batch, whole, on device 0 (main.py's `data[0].to(device)`).
    real: Tensor,
    nz: i64,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    let visible = parallel::device_count(ctx, args)?;
    let ngpu = ngpu(args).filter(|&n| n >= 1).ok_or_else(|| {
        ctx.arg_error(format!("--ngpu {:?}: not a count", args.extra.get("ngpu")))
    })?;
    if ngpu as usize > visible {
        return Err(ctx.arg_error(format!(
            "--ngpu {ngpu}: the copy has {visible} device(s) (vcd)"
        )));
    }
    let placements = parallel::placements(ctx, ngpu as usize)?;
    let per_device = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let batch_size = per_device * ngpu;
    let DcganArgs { nz, ngf, ndf } = DcganArgs::read(ctx, args)?;
    let lr = ctx.float(args, &["lr"], dcgan::LR)?;
    let beta1 = ctx.float(args, &["beta1"], dcgan::ADAM.beta1)?;
    if ctx.is_cuda() {
        tch::Cuda::cudnn_set_benchmark(true);
    }
    let adam = nn::Adam {
        beta1,
        ..dcgan::ADAM
    };
    let mut replicas = Vec::with_capacity(placements.len());
    let (mut g_params, mut g_vars, mut d_params, mut d_vars) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut opts = None;
    for placement in &placements {
        let mut vs_g = nn::VarStore::new(placement.device);
        let mut vs_d = nn::VarStore::new(placement.device);
        let g = dcgan::generator(&vs_g.root(), nz, ngf);
        let d = dcgan::discriminator(&vs_d.root(), ndf);
        vs_g.set_kind(ctx.kind);
        vs_d.set_kind(ctx.kind);
        if opts.is_none() {
            let build =
                |vs: &nn::VarStore| adam.build(vs, lr).map_err(|e| ctx.failed(e.to_string()));
            opts = Some((build(&vs_g)?, build(&vs_d)?));
        }
        g_params.push(vs_g.trainable_variables());
        g_vars.push(parallel::named(&vs_g).0);
        d_params.push(vs_d.trainable_variables());
        d_vars.push(parallel::named(&vs_d).0);
        replicas.push(Replica {
            g,
            d,
            _vs: (vs_g, vs_d),
        });
    }
    let Some((opt_g, opt_d)) = opts else {
        return Err(ctx.arg_error("no devices to run on"));
    };
    let device0 = placements[0].device;
    let real = Tensor::rand([batch_size, NC, 64, 64], (ctx.kind, device0)) * 2.0 - 1.0;
    let workers = Workers::start(replicas, &placements)
        .map_err(|e| ctx.failed(format!("starting the replicas' threads: {e}")))?;
    Ok(Box::new(DcganAll {
        workers,
        devices: placements.iter().map(|p| p.device).collect(),
        g: Module {
            params: g_params,
            vars: g_vars,
            opt: opt_g,
        },
        d: Module {
            params: d_params,
            vars: d_vars,
            opt: opt_d,
        },
        real,
        nz,
    }))
}

fn net_g(r: &mut Replica, x: &Tensor) -> Tensor {
    r.g.forward_t(x, true)
}

fn net_d(r: &mut Replica, x: &Tensor) -> Tensor {
    r.d.forward_t(x, true)
}

impl Train for DcganAll {
    fn train_step(&mut self) -> Tensor {
        let (workers, devices) = (&self.workers, self.devices.as_slice());
        let batch = self.real.size()[0];
        let replicas = parallel::chunk_sizes(batch, devices.len()).len();
        // A loss on a gathered output, its backward, and the replicas' backward.
        let loss_of = |applied: parallel::Applied, label: f64| -> (Tensor, Option<Tensor>) {
            let loss = dcgan::bce(&applied.output, label);
            loss.backward();
            let grad = applied.output.grad();
            (loss.detach(), parallel::backward(workers, applied, &grad))
        };
        // (1) D: maximise log D(x) + log(1 − D(G(z))).
        self.d.zero_grad();
        self.d.replicate();
        let out = parallel::apply(workers, devices, &self.real, false, net_d);
        let (err_d_real, _) = loss_of(out, 1.0);
        let noise = Tensor::randn([batch, self.nz, 1, 1], (self.real.kind(), devices[0]));
        self.g.replicate();
        let fake = parallel::apply(workers, devices, &noise, false, net_g);
        self.d.replicate();
        let out = parallel::apply(workers, devices, &fake.output.detach(), false, net_d);
        let (err_d_fake, _) = loss_of(out, 0.0);
        self.d.step(replicas);
        // (2) G: maximise log D(G(z)), through the updated D.
        self.g.zero_grad();
        self.d.replicate();
        let out = parallel::apply(workers, devices, &fake.output, true, net_d);
        let (err_g, grad_fake) = loss_of(out, 1.0);
        let grad_fake = grad_fake.expect("D's input is G's output, which needs a gradient");
        parallel::backward(workers, fake, &grad_fake);
        self.g.step(replicas);
        err_d_real + err_d_fake + err_g
    }
}
