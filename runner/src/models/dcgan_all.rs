//! dcgan_all (generative_adversarial_networks/dcgan main.py with `--ngpu $DEVICE_TOTAL`; a
//! whole-machine job). main.py multiplies `--batch-size` by `ngpu` and runs its networks
//! through `nn.parallel.data_parallel` only when the input is on CUDA (`if input.is_cuda and
//! self.ngpu > 1`), so the job has two paths, as the script:
//!
//! - On CUDA devices, dcgan's generator and discriminator through nn.DataParallel over
//!   `ngpu` devices: every call of G or D replicates the master (replica 0, on device 0)
//!   onto the devices, scatters its batch (on device 0) as torch.chunk splits it, runs the
//!   chunks in their replicas' threads and gathers the outputs onto device 0, where the
//!   losses are taken; the backward goes the same way back and, after each call's backward,
//!   the replicas' gradients are summed into the master's, which alone the two optimizers
//!   (Adam, `lr` 2e-4, β₁ `beta1` 0.5) step (`parallel::apply`, `backward`; replication and
//!   reduction through c10d, `parallel::Rank`). One step is dcgan's: D on the real batch
//!   and on a fake one, then G through D; logged as dcgan (the metrics errD_real,
//!   errG_fake, errG, no batch loss). More than one CUDA device needs NCCL, not built yet:
//!   refused, saying so. The tests run this path on CPU replicas, over Gloo.
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
use super::parallel::{self, Applied, Rank, Workers};
use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use mlbench_schema::value::Value;
use tch::nn::{self, ModuleT, OptimizerConfig};
use tch::{Device, Tensor};

pub(super) const SOURCE: &str = concat!(
    include_str!("dcgan_all.rs"),
    include_str!("parallel.rs"),
    include_str!("../data_parallel.rs"),
    include_str!("../ddp.rs"),
    include_str!("../c10d.rs"),
    include_str!("dcgan.rs"),
    include_str!("host_loader.rs"),
    include_str!("image_data.rs"),
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
    rank: Rank,
    /// G's and D's parameters and buffers in name order: what replication copies.
    vars: [Vec<Tensor>; 2],
    /// G's and D's trainable parameters: what the reduction sums.
    params: [Vec<Tensor>; 2],
    _vs: (nn::VarStore, nn::VarStore),
}

/// Which module of the pair: an index into [`Replica::vars`], [`Replica::params`] and
/// `DcganAll::opts`.
const G: usize = 0;
const D: usize = 1;

/// DataParallel's `replicate` before a call of module `which`: the replicas take the
/// master's parameters and buffers.
fn replicate(workers: &Workers<Replica>, which: usize) -> Result<(), BenchError> {
    let results = workers.each(move |_, r| r.rank.replicate(&r.vars[which]));
    parallel::collective(BENCH, results)
}

/// After the backward of a call of module `which`: the replicas' gradients summed into the
/// master's.
fn reduce(workers: &Workers<Replica>, which: usize) -> Result<(), BenchError> {
    let results = workers.each(move |_, r| r.rank.reduce_grads(&r.params[which]));
    parallel::collective(BENCH, results)
}

const BENCH: &str = "dcgan_all";

struct DcganAll {
    workers: Workers<Replica>,
    devices: Vec<Device>,
    /// The master's optimizers, G's and D's, stepped on this thread.
    opts: [nn::Optimizer; 2],
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
        Ok(Box::new(model(ctx, args)?))
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

/// The model through DataParallel (on CPU devices too: the tests).
fn model(ctx: &Ctx, args: &BenchArgs) -> Result<DcganAll, BenchError> {
    let Settings {
        ngpu,
        per_device,
        sizes: DcganArgs { nz, ngf, ndf },
        adam,
        lr,
    } = Settings::read(ctx, args)?;
    let placements = parallel::placements(ctx, ngpu as usize)?;
    let ranks = parallel::ranks(ctx, &placements)?;
    let batch_size = per_device * ngpu;
    if ctx.is_cuda() {
        tch::Cuda::cudnn_set_benchmark(true);
    }
    let mut replicas = Vec::with_capacity(placements.len());
    for (placement, rank) in placements.iter().zip(ranks) {
        let mut vs_g = nn::VarStore::new(placement.device);
        let mut vs_d = nn::VarStore::new(placement.device);
        let g = dcgan::generator(&vs_g.root(), nz, ngf);
        let d = dcgan::discriminator(&vs_d.root(), ndf);
        vs_g.set_kind(ctx.kind);
        vs_d.set_kind(ctx.kind);
        replicas.push(Replica {
            g,
            d,
            rank,
            vars: [parallel::named(&vs_g).0, parallel::named(&vs_d).0],
            params: [vs_g.trainable_variables(), vs_d.trainable_variables()],
            _vs: (vs_g, vs_d),
        });
    }
    let master = replicas
        .first()
        .ok_or_else(|| ctx.arg_error("no devices to run on"))?;
    let failed = |e: tch::TchError| ctx.failed(e.to_string());
    let opts = [
        adam.build(&master._vs.0, lr).map_err(failed)?,
        adam.build(&master._vs.1, lr).map_err(failed)?,
    ];
    let reals = Reals::new(ctx, args, batch_size, placements[0].device)?;
    let workers = Workers::start(replicas, &placements)
        .map_err(|e| ctx.failed(format!("starting the replicas' threads: {e}")))?;
    Ok(DcganAll {
        workers,
        devices: placements.iter().map(|p| p.device).collect(),
        opts,
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
        self.update(&mut |_, _| {})
    }

    fn step(&mut self) -> Result<Logs, BenchError> {
        let mut result = Ok(());
        let logs = dcgan::logged_step(|read| result = self.update(read).map(drop));
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

impl DcganAll {
    /// A call of module `m` on `input` through DataParallel: the replication, then
    /// scatter, the replicas' forward and gather.
    fn call(&self, m: usize, input: &Tensor, input_grad: bool) -> Result<Applied, BenchError> {
        replicate(&self.workers, m)?;
        let f = if m == G { net_g } else { net_d };
        Ok(parallel::apply(
            &self.workers,
            &self.devices,
            input,
            input_grad,
            f,
        ))
    }

    /// The backward of a call of `m` given its output's gradient, then the reduction of
    /// the replicas' gradients into the master's; the input's gradient when it needed one.
    fn back(
        &self,
        m: usize,
        applied: Applied,
        grad: &Tensor,
    ) -> Result<Option<Tensor>, BenchError> {
        let input_grad = parallel::backward(&self.workers, applied, grad);
        reduce(&self.workers, m)?;
        Ok(input_grad)
    }

    /// A loss on a call's gathered output, its backward through the call; `read` where the
    /// script calls `.item()`.
    fn loss_of(
        &self,
        m: usize,
        applied: Applied,
        label: f64,
        name: &'static str,
        read: &mut dcgan::Read<'_>,
    ) -> Result<(Tensor, Option<Tensor>), BenchError> {
        let loss = dcgan::bce(&applied.output, label);
        read(Some(name), &loss);
        loss.backward();
        read(None, &dcgan::sigmoid_mean(&applied.output));
        let grad = applied.output.grad();
        Ok((loss.detach(), self.back(m, applied, &grad)?))
    }

    /// dcgan's step through the replicas; `read` where the script calls `.item()`.
    fn update(&mut self, read: &mut dcgan::Read<'_>) -> Result<Tensor, BenchError> {
        self.coordinator.enter(self.devices[0]);
        let real = self.reals.next()?;
        let batch = self.reals.batch_size();
        // (1) D: maximise log D(x) + log(1 − D(G(z))).
        self.opts[D].zero_grad();
        let out = self.call(D, &real, false)?;
        let (err_d_real, _) = self.loss_of(D, out, 1.0, "errD_real", read)?;
        let noise = Tensor::randn([batch, self.nz, 1, 1], (real.kind(), self.devices[0]));
        let fake = self.call(G, &noise, false)?;
        let out = self.call(D, &fake.output.detach(), false)?;
        let (err_d_fake, _) = self.loss_of(D, out, 0.0, "errG_fake", read)?;
        self.opts[D].step();
        // (2) G: maximise log D(G(z)), through the updated D.
        self.opts[G].zero_grad();
        let out = self.call(D, &fake.output, true)?;
        let (err_g, grad_fake) = self.loss_of(D, out, 1.0, "errG", read)?;
        let grad_fake = grad_fake.ok_or_else(|| BenchError::Failed {
            bench: BENCH.into(),
            message: "D's input, G's output, has no gradient".into(),
        })?;
        self.back(G, fake, &grad_fake)?;
        self.opts[G].step();
        Ok(err_d_real + err_d_fake + err_g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::DeviceSpec;
    use crate::models::own_process;

    fn args() -> BenchArgs {
        let extra = [
            ("nz", Value::Int(8)),
            ("ngf", Value::Int(4)),
            ("ndf", Value::Int(4)),
            ("vcd", Value::from("0,1")),
            ("synthetic_data", Value::Bool(true)),
        ];
        BenchArgs {
            batch_size: 2,
            number: 1,
            repeat: 1,
            seed: 5,
            extra: extra.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
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
        out.extend(losses_of(&mut model(&ctx, &one).unwrap(), 4));
        let ctx = Ctx::new("dcgan_all", &base, spec).unwrap();
        out.extend(losses_of(&mut model(&ctx, &base).unwrap(), 3));
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
}
