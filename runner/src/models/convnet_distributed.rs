//! convnet_distributed / convnet_distributed_fp16 (convnets conv_distributed.py through
//! run_distributed.sh; whole-machine jobs): the convnet ResNet trained through
//! nn.DataParallel over every device of the machine (`vcd` lists them). The script's
//! `--batch-size` is per GPU: it multiplies it by the device count, and its loader (here
//! `host_loader` with `--workers` threads, as convnet's) makes batches of
//! `batch_size × devices`. Each step, as the script's (conv_distributed.py:95-117), is timed
//! in two stages, each synchronising every device on entry and exit:
//!
//! - `loading`: the wait for the next whole batch and its copy to device 0 (`input.cuda()`);
//! - `compute`: DataParallel's forward (the master, replica 0, replicated onto the other
//!   devices through c10d; the batch scattered as `torch.chunk` splits it; the replicas run
//!   in their threads; the outputs gathered onto device 0), the cross-entropy of the whole
//!   batch on device 0, its backward (the gradient scattered back, the replicas' backward,
//!   their gradients summed into the master's through c10d), and the master's plain SGD
//!   (the script's: lr 0.1, no momentum, no weight decay; `--half` through FP16_Optimizer
//!   as convnet's, `half`).
//!
//! For equal shares this is DDP's arithmetic too (`parallel`'s tests show both take one
//! process's step on the whole batch); the cost is DataParallel's: a replication every
//! step, a reduction onto one device and one optimizer. BatchNorm's running statistics are
//! the master's, updated by replica 0 on its share, as DataParallel's.
//! Args: `arch`/`a` (resnet18; the jobs pass resnet101), `batch_size` per device (fast.json:
//! 64, fp16: 128), `image_size` (224), `num_classes` (1000), `lr` (0.1), `half`, `vcd`,
//! `workers` (fast.json: 8).

use super::convnet::{IMAGENET_MEAN, IMAGENET_SD, ResNetArgs};
use super::half::{Sgd, batch_norm_to_float};
use super::host_loader::{HostLoader, Recipe};
use super::image_data::{self, Batches};
use super::parallel::{self, Rank, Workers};
use super::{Ctx, Train, sync};
use crate::bench::{BenchArgs, BenchError, Logs};
use crate::timing::timed;
use tch::nn::{self, ModuleT};
use tch::{Device, Kind, Tensor};

pub(super) const SOURCE: &str = concat!(
    include_str!("convnet_distributed.rs"),
    include_str!("parallel.rs"),
    include_str!("../data_parallel.rs"),
    include_str!("../ddp.rs"),
    include_str!("../c10d.rs"),
    include_str!("host_loader.rs"),
    include_str!("loader.rs"),
    include_str!("half.rs"),
    include_str!("convnet.rs"),
    include_str!("image_data.rs")
);

/// The batch the script records and counts items by: `args.batch_size = args.batch_size *
/// node_size`, the per-device batch times the devices.
pub(super) fn batch_size(args: &BenchArgs) -> i64 {
    args.batch_size * parallel::vcd_devices(args).unwrap_or(1) as i64
}

struct Replica {
    net: Box<dyn ModuleT>,
    rank: Rank,
    /// Parameters and buffers in name order: what replication copies.
    vars: Vec<Tensor>,
    /// Trainable parameters: what the reduction sums.
    params: Vec<Tensor>,
    _vs: nn::VarStore,
}

struct ConvNetDistributed {
    bench: &'static str,
    workers: Workers<Replica>,
    /// The master's optimizer (replica 0's parameters), stepped on this thread.
    opt: Sgd,
    device0: Device,
    /// Every replica's device.
    devices: Vec<Device>,
    /// The script's loader: whole batches of `batch_size × devices` (an epoch's last may
    /// be short).
    loader: Batches,
    /// An image: `[3, size, size]`.
    image: [i64; 3],
    kind: Kind,
    coordinator: parallel::Coordinator,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    Ok(Box::new(model(ctx, args)?))
}

fn model(ctx: &Ctx, args: &BenchArgs) -> Result<ConvNetDistributed, BenchError> {
    let devices = parallel::device_count(ctx, args)?;
    let placements = parallel::placements(ctx, devices)?;
    let ranks = parallel::ranks(ctx, &placements)?;
    let batch_size = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let resnet = ResNetArgs::read(ctx, args)?;
    let lr = ctx.float(args, &["lr", "learning_rate"], 0.1)?;
    if ctx.is_cuda() {
        tch::Cuda::cudnn_set_benchmark(true);
    }
    let size = resnet.image_size;
    let mut replicas = Vec::with_capacity(devices);
    // Built here, one after the other, so the random streams do not depend on threads.
    for (placement, rank) in placements.iter().zip(ranks) {
        let mut vs = nn::VarStore::new(placement.device);
        let net = resnet.net(ctx, &vs.root())?;
        vs.set_kind(ctx.kind);
        batch_norm_to_float(&vs);
        replicas.push(Replica {
            net,
            rank,
            vars: parallel::named(&vs).0,
            params: vs.trainable_variables(),
            _vs: vs,
        });
    }
    let opt = Sgd::new(&replicas[0]._vs, lr).map_err(|e| ctx.failed(e.to_string()))?;
    let workers = Workers::start(replicas, &placements)
        .map_err(|e| ctx.failed(format!("starting the replicas' threads: {e}")))?;
    let workers_threads = ctx.int(args, &["workers"], 0)?.max(0) as usize;
    let whole = batch_size * devices as i64;
    let seed = args.seed as u64;
    // conv_distributed.py:60-83: the folder's images through RandomResizedCrop, flip and
    // Normalize, in one iterator made before the loop, not shuffled.
    let mut whole_args = args.clone();
    whole_args.batch_size = whole;
    let pipeline = image_data::Pipeline::RandomCrop {
        size: size as usize,
    };
    let loader = match image_data::open(ctx, &whole_args, "data", pipeline, false)? {
        Some(files) if files.classes() > resnet.classes as usize => {
            return Err(ctx.arg_error(format!(
                "the data folder has {} classes, more than --num_classes {}",
                files.classes(),
                resnet.classes
            )));
        }
        Some(files) => Batches::Files(HostLoader::new(files, seed, workers_threads, 0)),
        None => {
            let recipe = Recipe::normalized(
                whole as usize,
                (size * size) as usize,
                resnet.classes as u64,
                &IMAGENET_MEAN,
                &IMAGENET_SD,
            );
            Batches::Memory(HostLoader::new(recipe, seed, workers_threads, 0))
        }
    };
    Ok(ConvNetDistributed {
        bench: ctx.name,
        workers,
        opt,
        device0: placements[0].device,
        devices: placements.iter().map(|p| p.device).collect(),
        loader,
        image: [3, size, size],
        kind: ctx.kind,
        coordinator: parallel::Coordinator::default(),
    })
}

impl ConvNetDistributed {
    /// The next whole batch on device 0 (the script's `input.cuda()`, `target.cuda()`).
    fn next_on_device0(&mut self) -> Result<(Tensor, Tensor), BenchError> {
        let batch = self.loader.next(self.bench)?;
        let [c, h, w] = self.image;
        let images = Tensor::from_slice(&batch.images)
            .view([batch.labels.len() as i64, c, h, w])
            .to_device(self.device0)
            .to_kind(self.kind);
        let labels = Tensor::from_slice(&batch.labels).to_device(self.device0);
        Ok((images, labels))
    }

    /// Waits for every replica's device.
    fn sync_all(devices: &[Device]) {
        for &device in devices {
            sync(device);
        }
    }

    /// One step of the script's loop through DataParallel: the whole batch's loss.
    fn train_on(&mut self, images: Tensor, labels: Tensor) -> Result<Tensor, BenchError> {
        self.coordinator.enter(self.device0);
        let (workers, bench) = (&self.workers, self.bench);
        parallel::collective(bench, workers.each(|_, r| r.rank.replicate(&r.vars)))?;
        let applied = parallel::apply(workers, &self.devices, &images, false, |r, x| {
            r.net.forward_t(x, true)
        });
        // Cross-entropy in float32 even for half models, as convnet.
        let loss = applied
            .output
            .to_kind(Kind::Float)
            .cross_entropy_for_logits(&labels);
        self.opt.zero_grad();
        self.opt.backward(&loss);
        let grad = applied.output.grad();
        parallel::backward(workers, applied, &grad);
        parallel::collective(bench, workers.each(|_, r| r.rank.reduce_grads(&r.params)))?;
        self.opt.step();
        Ok(loss.detach())
    }
}

impl Train for ConvNetDistributed {
    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        let (images, labels) = self.next_on_device0()?;
        self.train_on(images, labels)
    }

    fn step(&mut self) -> Result<Logs, BenchError> {
        let devices = self.devices.clone();
        let sync = || Self::sync_all(&devices);
        let (next, loading) = timed(&sync, || self.next_on_device0());
        let (images, labels) = next?;
        let (loss, compute) = timed(&sync, || {
            self.train_on(images, labels)
                .map(|loss| loss.to_kind(Kind::Double).double_value(&[]))
        });
        Ok(Logs::loss(loss?)
            .stage("loading", loading)
            .stage("compute", compute))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::DeviceSpec;
    use mlbench_schema::value::Value;

    /// Three replicas through DataParallel: each step moves the master's weights, leaves
    /// the replicas' gradients zeroed (summed into the master's), and the next replication
    /// makes every replica the master, bit for bit.
    #[test]
    fn the_master_steps_and_replication_copies_it() {
        let extra = [
            ("arch", Value::from("resnet18")),
            ("image_size", Value::Int(32)),
            ("num_classes", Value::Int(5)),
            ("vcd", Value::from("0,1,2")),
            ("synthetic_data", Value::Bool(true)),
        ];
        let args = BenchArgs {
            batch_size: 2,
            number: 1,
            repeat: 1,
            seed: 3,
            extra: extra.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        };
        let spec = DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        let ctx = Ctx::new("convnet_distributed", &args, spec).unwrap();
        let mut model = model(&ctx, &args).unwrap();
        let (images, _) = model.next_on_device0().unwrap();
        assert_eq!(images.size()[0], 6, "the whole batch: 2 per device");
        let copies = |model: &ConvNetDistributed| {
            model
                .workers
                .each(|_, r| r.vars.iter().map(Tensor::copy).collect::<Vec<_>>())
        };
        let before = copies(&model).swap_remove(0);
        for _ in 0..2 {
            let loss = model.train_step().unwrap().double_value(&[]);
            assert!(loss.is_finite());
            let zeroed = model.workers.each(|i, r| {
                i == 0
                    || r.params
                        .iter()
                        .all(|p| p.grad().abs().max().double_value(&[]) == 0.0)
            });
            assert_eq!(
                zeroed, [true; 3],
                "the replicas' gradients went to the master"
            );
        }
        let after = copies(&model);
        let moved = before
            .iter()
            .zip(&after[0])
            .any(|(a, b)| (a - b).abs().max().double_value(&[]) > 0.0);
        assert!(moved, "the step changed the master's weights");
        let replicated = model.workers.each(|_, r| r.rank.replicate(&r.vars));
        assert!(replicated.iter().all(Result::is_ok));
        for (i, vars) in copies(&model).iter().enumerate() {
            for (j, (v, m)) in vars.iter().zip(&after[0]).enumerate() {
                let d = (v - m).abs().max().double_value(&[]);
                assert_eq!(d, 0.0, "replica {i}, variable {j}");
            }
        }
    }
}
