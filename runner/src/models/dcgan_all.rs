//! dcgan_all (generative_adversarial_networks/dcgan main.py with `--ngpu $DEVICE_TOTAL`; a
//! whole-machine job). main.py multiplies `--batch-size` by `ngpu` and runs its networks
//! through `nn.parallel.data_parallel` only when the input is on CUDA (`if input.is_cuda and
//! self.ngpu > 1`), so the job has two paths, as the script:
//!
//! - On CUDA devices, dcgan's generator and discriminator through nn.DataParallel over
//!   `ngpu` devices: every call of G or D replicates the master (replica 0, on device 0)
//!   onto the devices, scatters its batch (on device 0) as torch.chunk splits it, runs the
//!   chunks in their replicas' threads and gathers the outputs onto device 0, where the
//!   losses are taken; the backward goes the same way back and the replicas' gradients are
//!   summed into the master's, which alone the two optimizers (Adam, `lr` 2e-4, β₁ `beta1`
//!   0.5) step (`parallel::apply`, `backward`, `reduce_add_grads`, `broadcast`). One step
//!   is dcgan's: D on the real batch and on a fake one, then G through D; logged as
//!   dcgan (the metrics errD_real, errG_fake, errG, no batch loss). On replicas that share one memory (CPU
//!   replicas: the tests) the master's replication, zeroing, gradient reduction and
//!   optimizer steps are split by parameters between the replicas' threads (each an Adam
//!   over its share of the master's parameters: the same update, parameter by parameter).
//! - On (simulated) CPU devices, main.py's CPU path: dcgan's two networks on the whole
//!   batch (`batch_size × ngpu`) in one process, on every core of the whole-machine copy
//!   (`dcgan::whole_batch`).
//!
//! Both paths take dcgan's data: a fresh real batch of `batch_size × ngpu` images every
//! step from a loader of `workers` threads restarted each observation inside its timer
//! (`dcgan::Reals`), copied to device 0 (the CUDA path) or the copy's device.
//!
//! Args: `batch_size` per device (fast.json: 128), `ngpu` (the devices of `vcd`), `nz`
//! (100), `ngf` (64), `ndf` (64), `imageSize` (64 only), `lr`, `beta1`, `workers`.

use super::dcgan::{self, DcganArgs, Reals};
use super::parallel::{self, Workers};
use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use mlbench_schema::value::Value;
use std::ops::Range;
use tch::nn::{self, ModuleT, OptimizerConfig};
use tch::{COptimizer, Device, Tensor};

pub(super) const SOURCE: &str = concat!(
    include_str!("dcgan_all.rs"),
    include_str!("parallel.rs"),
    include_str!("dcgan.rs"),
    include_str!("host_loader.rs"),
    include_str!("loader.rs")
);

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
    /// The master's optimizers (G's, D's) over this replica's share of the master's
    /// parameters, when the master's step is split between the replicas' threads.
    shares: [Option<COptimizer>; 2],
    _vs: (nn::VarStore, nn::VarStore),
}

/// Which module of the pair: an index into [`Replica::shares`].
const G: usize = 0;
const D: usize = 1;

/// A module of the pair, as the master and its replicas hold it.
struct Module {
    /// G or D.
    which: usize,
    /// Trainable parameters, replica × parameter (replica 0: the master's).
    params: Vec<Vec<Tensor>>,
    /// Parameters and buffers, replica × variable: what replication copies.
    vars: Vec<Vec<Tensor>>,
    /// The master's optimizer, stepped on this thread; `None` when the replicas share one
    /// memory (simulated CPU devices): then each replica's thread steps the master's
    /// parameters of its share ([`Replica::shares`], `param_parts`) and replication,
    /// zeroing and the gradients' reduction are split the same way (`parallel::on_parts`).
    /// The same arithmetic on every parameter (Adam's update is parameter by parameter),
    /// spread over every core without this thread's own intra-op threads.
    opt: Option<nn::Optimizer>,
    /// Each replica's share of `params` and of `vars`.
    param_parts: Vec<Range<usize>>,
    var_parts: Vec<Range<usize>>,
}

impl Module {
    /// main.py's `zero_grad()`, on the master and on the replicas' pending gradients.
    fn zero_grad(&self, workers: &Workers<Replica>) {
        let zero = |params: &[Vec<Tensor>]| {
            tch::no_grad(|| {
                for p in params.iter().flatten() {
                    let mut grad = p.grad();
                    if grad.defined() {
                        let _ = grad.zero_();
                    }
                }
            })
        };
        if self.opt.is_some() {
            zero(&self.params);
        } else {
            parallel::on_parts(workers, &self.params, &self.param_parts, move |_, share| {
                zero(share)
            });
        }
    }

    /// DataParallel's `replicate` before a call: the replicas take the master's parameters
    /// and buffers.
    fn replicate(&self, workers: &Workers<Replica>) {
        if self.opt.is_some() {
            parallel::broadcast(&self.vars, self.vars.len());
        } else {
            parallel::on_parts(workers, &self.vars, &self.var_parts, |_, share| {
                parallel::broadcast(share, share.len())
            });
        }
    }

    /// The replicas' gradients summed into the master's (once per step: the sum DataParallel
    /// makes call by call), and the master's optimizer step.
    fn step(&mut self, workers: &Workers<Replica>, replicas: usize) {
        if let Some(opt) = &mut self.opt {
            parallel::reduce_add_grads(&self.params, replicas);
            opt.step();
            return;
        }
        let which = self.which;
        parallel::on_parts(workers, &self.params, &self.param_parts, move |r, share| {
            parallel::reduce_add_grads(share, replicas);
            if let Some(opt) = &r.shares[which] {
                opt.step().unwrap_or_else(|e| panic!("{e}"));
            }
        });
    }
}

struct DcganAll {
    workers: Workers<Replica>,
    devices: Vec<Device>,
    g: Module,
    d: Module,
    /// The real batches, whole, on device 0 (main.py's `data[0].to(device)`).
    reals: Reals,
    nz: i64,
    coordinator: parallel::Coordinator,
}

/// On CUDA devices, the networks through the DataParallel emulation; on (simulated) CPU
/// devices, main.py's own CPU path: `input.is_cuda and self.ngpu > 1` is false there, so
/// its two networks run on the whole batch (`batch_size × ngpu`) in one process, on every
/// core of the whole-machine copy.
pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    if ctx.is_cuda() {
        Ok(Box::new(model(ctx, args, None)?))
    } else {
        let s = Settings::read(ctx, args)?;
        let reals = Reals::new(ctx, args, s.per_device * s.ngpu, ctx.device)?;
        dcgan::whole_batch(ctx, reals, s.sizes, s.adam, s.lr)
    }
}

/// The job's arguments, checked against the copy's devices.
struct Settings {
    ngpu: i64,
    /// `--batch-size`: each device's share of the batch.
    per_device: i64,
    sizes: DcganArgs,
    adam: nn::Adam,
    lr: f64,
}

impl Settings {
    fn read(ctx: &Ctx, args: &BenchArgs) -> Result<Settings, BenchError> {
        let visible = parallel::device_count(ctx, args)?;
        let ngpu = ngpu(args).filter(|&n| n >= 1).ok_or_else(|| {
            ctx.arg_error(format!("--ngpu {:?}: not a count", args.extra.get("ngpu")))
        })?;
        if ngpu as usize > visible {
            return Err(ctx.arg_error(format!(
                "--ngpu {ngpu}: the copy has {visible} device(s) (vcd)"
            )));
        }
        let beta1 = ctx.float(args, &["beta1"], dcgan::ADAM.beta1)?;
        Ok(Settings {
            ngpu,
            per_device: ctx.size(args, &["batch_size"], args.batch_size.max(1))?,
            sizes: DcganArgs::read(ctx, args)?,
            adam: nn::Adam {
                beta1,
                ..dcgan::ADAM
            },
            lr: ctx.float(args, &["lr"], dcgan::LR)?,
        })
    }
}

/// The model through the DataParallel emulation (on CPU devices too: the tests); `split`
/// forces the master's step split between the replicas' threads or not (by default: split
/// when the replicas share one memory).
fn model(ctx: &Ctx, args: &BenchArgs, split: Option<bool>) -> Result<DcganAll, BenchError> {
    let Settings {
        ngpu,
        per_device,
        sizes: DcganArgs { nz, ngf, ndf },
        adam,
        lr,
    } = Settings::read(ctx, args)?;
    let placements = parallel::placements(ctx, ngpu as usize)?;
    let batch_size = per_device * ngpu;
    if ctx.is_cuda() {
        tch::Cuda::cudnn_set_benchmark(true);
    }
    let failed = |e: tch::TchError| ctx.failed(e.to_string());
    let mut replicas = Vec::with_capacity(placements.len());
    let (mut g_params, mut g_vars, mut d_params, mut d_vars) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for placement in &placements {
        let mut vs_g = nn::VarStore::new(placement.device);
        let mut vs_d = nn::VarStore::new(placement.device);
        let g = dcgan::generator(&vs_g.root(), nz, ngf);
        let d = dcgan::discriminator(&vs_d.root(), ndf);
        vs_g.set_kind(ctx.kind);
        vs_d.set_kind(ctx.kind);
        g_params.push(vs_g.trainable_variables());
        g_vars.push(parallel::named(&vs_g).0);
        d_params.push(vs_d.trainable_variables());
        d_vars.push(parallel::named(&vs_d).0);
        replicas.push(Replica {
            g,
            d,
            shares: [None, None],
            _vs: (vs_g, vs_d),
        });
    }
    if replicas.is_empty() {
        return Err(ctx.arg_error("no devices to run on"));
    }
    let n = replicas.len();
    let split = split
        .unwrap_or_else(|| parallel::shares_memory(&g_vars) && parallel::shares_memory(&d_vars));
    let mut module = |which: usize, params: Vec<Vec<Tensor>>, vars: Vec<Vec<Tensor>>| {
        let param_parts = parallel::partition(&params[0], n);
        let opt = if split {
            for (replica, range) in replicas.iter_mut().zip(&param_parts) {
                let mut opt = adam.build_copt(lr).map_err(failed)?;
                for p in &params[0][range.clone()] {
                    opt.add_parameters(p, 0).map_err(failed)?;
                }
                replica.shares[which] = Some(opt);
            }
            None
        } else {
            let vs = if which == G {
                &replicas[0]._vs.0
            } else {
                &replicas[0]._vs.1
            };
            Some(adam.build(vs, lr).map_err(failed)?)
        };
        Ok::<_, BenchError>(Module {
            which,
            var_parts: parallel::partition(&vars[0], n),
            param_parts,
            params,
            vars,
            opt,
        })
    };
    let g = module(G, g_params, g_vars)?;
    let d = module(D, d_params, d_vars)?;
    let reals = Reals::new(ctx, args, batch_size, placements[0].device)?;
    let workers = Workers::start(replicas, &placements)
        .map_err(|e| ctx.failed(format!("starting the replicas' threads: {e}")))?;
    Ok(DcganAll {
        workers,
        devices: placements.iter().map(|p| p.device).collect(),
        g,
        d,
        reals,
        nz,
        coordinator: parallel::Coordinator::default(),
    })
}

fn net_g(r: &mut Replica, x: &Tensor) -> Tensor {
    r.g.forward_t(x, true)
}

fn net_d(r: &mut Replica, x: &Tensor) -> Tensor {
    r.d.forward_t(x, true)
}

impl Train for DcganAll {
    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        Ok(self.update(&mut |_, _| {}))
    }

    fn step(&mut self) -> Result<Logs, BenchError> {
        Ok(dcgan::logged_step(|read| {
            let _ = self.update(read);
        }))
    }

    fn begin_observation(&mut self, _observation: u64) {
        self.reals.begin();
    }

    fn end_observation(&mut self, _observation: u64) -> Logs {
        self.reals.end();
        Logs::none()
    }
}

impl DcganAll {
    /// dcgan's step through the replicas; `read` where the script calls `.item()`.
    fn update(&mut self, read: &mut dcgan::Read<'_>) -> Tensor {
        self.coordinator.enter(self.devices[0]);
        let real = self.reals.next();
        let (workers, devices) = (&self.workers, self.devices.as_slice());
        let batch = self.reals.batch_size();
        let replicas = parallel::chunk_sizes(batch, devices.len()).len();
        // A loss on a gathered output, its backward, and the replicas' backward.
        let mut loss_of = |applied: parallel::Applied,
                           label: f64,
                           name: &'static str|
         -> (Tensor, Option<Tensor>) {
            let loss = dcgan::bce(&applied.output, label);
            read(Some(name), &loss);
            loss.backward();
            read(None, &dcgan::sigmoid_mean(&applied.output));
            let grad = applied.output.grad();
            (loss.detach(), parallel::backward(workers, applied, &grad))
        };
        // (1) D: maximise log D(x) + log(1 − D(G(z))).
        self.d.zero_grad(workers);
        self.d.replicate(workers);
        let out = parallel::apply(workers, devices, &real, false, net_d);
        let (err_d_real, _) = loss_of(out, 1.0, "errD_real");
        let noise = Tensor::randn([batch, self.nz, 1, 1], (real.kind(), devices[0]));
        self.g.replicate(workers);
        let fake = parallel::apply(workers, devices, &noise, false, net_g);
        self.d.replicate(workers);
        let out = parallel::apply(workers, devices, &fake.output.detach(), false, net_d);
        let (err_d_fake, _) = loss_of(out, 0.0, "errG_fake");
        self.d.step(workers, replicas);
        // (2) G: maximise log D(G(z)), through the updated D.
        self.g.zero_grad(workers);
        self.d.replicate(workers);
        let out = parallel::apply(workers, devices, &fake.output, true, net_d);
        let (err_g, grad_fake) = loss_of(out, 1.0, "errG");
        let grad_fake = grad_fake.expect("D's input is G's output, which needs a gradient");
        parallel::backward(workers, fake, &grad_fake);
        self.g.step(workers, replicas);
        err_d_real + err_d_fake + err_g
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::DeviceSpec;
    use crate::models::own_process;
    use tch::Kind;

    fn args() -> BenchArgs {
        let extra = [
            ("nz", Value::Int(8)),
            ("ngf", Value::Int(4)),
            ("ndf", Value::Int(4)),
            ("vcd", Value::from("0,1")),
        ];
        BenchArgs {
            batch_size: 2,
            number: 1,
            repeat: 1,
            seed: 5,
            extra: extra.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        }
    }

    fn same(a: &[Vec<Tensor>], b: &[Vec<Tensor>]) {
        for (i, (ra, rb)) in a.iter().zip(b).enumerate() {
            for (j, (x, y)) in ra.iter().zip(rb).enumerate() {
                let d = (x - y).abs().max().double_value(&[]);
                assert_eq!(d, 0.0, "replica {i}, variable {j}");
            }
        }
    }

    /// `steps` losses of `model`.
    fn losses_of(model: &mut dyn Train, steps: usize) -> Vec<f64> {
        (0..steps)
            .map(|_| model.train_step().unwrap().double_value(&[]))
            .collect()
    }

    /// What the DataParallel emulation gives with `seed`, in this order: plain dcgan (batch
    /// 2) for 4 steps, dcgan_all on one device (batch 2 × 1) for 4, and on two (batch 2 × 2)
    /// for 3.
    fn data_parallel_losses(seed: i64) -> Vec<f64> {
        let spec = DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        let mut base = args();
        base.seed = seed;
        let ctx = Ctx::new("dcgan", &base, spec).unwrap();
        let mut out = losses_of(&mut *dcgan::build(&ctx, &base).unwrap(), 4);
        let mut one = base.clone();
        one.extra.insert("ngpu".into(), Value::Int(1));
        let ctx = Ctx::new("dcgan_all", &one, spec).unwrap();
        out.extend(losses_of(&mut model(&ctx, &one, None).unwrap(), 4));
        let ctx = Ctx::new("dcgan_all", &base, spec).unwrap();
        out.extend(losses_of(&mut model(&ctx, &base, None).unwrap(), 3));
        out
    }

    /// On one device the DataParallel path (scatter, the replica's thread, gather, the
    /// loss's gradient sent back by hand, G reached through D's input gradient, the master's
    /// optimizers) is dcgan itself: the same seed gives dcgan's losses step after step. On
    /// two, the replicas' threads draw nothing: the same seed gives the same losses, another
    /// seed others. Each run in a process of its own (libtorch's generator is global).
    #[test]
    fn data_parallel_is_dcgan_on_one_device_and_its_seed_alone_on_two() {
        let Some(run) = own_process::runner(
            "models::dcgan_all::tests::data_parallel_is_dcgan_on_one_device_and_its_seed_alone_on_two",
            data_parallel_losses,
        ) else {
            return;
        };
        let a = run(11);
        assert_eq!(a.len(), 11);
        assert!(a.iter().all(|l| l.is_finite()), "{a:?}");
        let (plain, one, two) = (&a[..4], &a[4..8], &a[8..]);
        for (p, o) in plain.iter().zip(one) {
            assert!((p - o).abs() < 1e-5, "dcgan {plain:?}, one device {one:?}");
        }
        let b = run(11);
        assert_eq!(two, &b[8..], "two devices, the same seed");
        let c = run(12);
        assert_ne!(two, &c[8..], "two devices, another seed");
    }

    /// The master's step split between the replicas' threads (one memory) is the whole one
    /// on this thread: from the same weights, replication, zeroing, the same gradients on
    /// every replica, their reduction and Adam give the same weights, bit for bit.
    #[test]
    fn the_split_master_step_is_the_whole_one() {
        let args = args();
        let spec = DeviceSpec::Cpu {
            index: 0,
            threads: 2,
        };
        let ctx = Ctx::new("dcgan_all", &args, spec).unwrap();
        let mut split = model(&ctx, &args, Some(true)).unwrap();
        let mut whole = model(&ctx, &args, Some(false)).unwrap();
        assert!(split.g.opt.is_none() && whole.g.opt.is_some());
        assert_eq!(split.d.param_parts.len(), 2);
        assert!(split.d.param_parts.iter().all(|r| !r.is_empty()));
        tch::no_grad(|| {
            for (a, b) in [(&split.g, &whole.g), (&split.d, &whole.d)] {
                for (x, y) in a.vars[0].iter().zip(&b.vars[0]) {
                    y.shallow_clone().copy_(x);
                }
            }
        });
        for step in 0..3 {
            for model in [&mut split, &mut whole] {
                let workers = &model.workers;
                for module in [&mut model.g, &mut model.d] {
                    module.zero_grad(workers);
                    module.replicate(workers);
                    for (i, params) in module.params.iter().enumerate() {
                        for (j, p) in params.iter().enumerate() {
                            let c = Tensor::arange(p.numel() as i64, (Kind::Float, Device::Cpu))
                                .view(p.size().as_slice())
                                .sin()
                                * (1 + i + j + step) as f64;
                            (p * c).sum(Kind::Float).backward();
                        }
                    }
                    module.step(workers, 2);
                }
            }
            for (a, b) in [(&split.g, &whole.g), (&split.d, &whole.d)] {
                same(&a.vars, &b.vars);
                let grads = |m: &Module| -> Vec<Vec<Tensor>> {
                    m.params
                        .iter()
                        .map(|ps| ps.iter().map(Tensor::grad).collect())
                        .collect()
                };
                same(&grads(a), &grads(b));
            }
        }
        // And the whole step runs split.
        let loss = split.train_step().unwrap().double_value(&[]);
        assert!(loss.is_finite(), "{loss}");
    }
}
