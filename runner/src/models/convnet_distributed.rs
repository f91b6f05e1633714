//! convnet_distributed / convnet_distributed_fp16 (convnets conv_distributed.py through
//! run_distributed.sh; whole-machine jobs): the convnet ResNet trained data-parallel over
//! every device of the machine. One replica per device (`vcd` lists them), each on its share
//! of `--batch-size` images of a fresh whole batch every step (the script's `--batch-size` is
//! per GPU: it multiplies it by the device count; its loader, here `host_loader` with
//! `--workers` threads as convnet's, makes batches of `batch_size × devices`, which the step
//! splits in equal shares and copies to each replica's device), cross-entropy, and every step the
//! gradients all-reduced to their average (`parallel::all_reduce_mean`, DDP's arithmetic,
//! which for equal shares is also the script's nn.DataParallel gradient of the mean loss
//! over the whole batch), then each replica's plain SGD (the script's: lr 0.1, no momentum,
//! no weight decay; `--half` through FP16_Optimizer as convnet's, `half`). BatchNorm
//! buffers are broadcast from replica 0 before each step.
//! The loss is the mean of the replicas' losses. As the script (conv_distributed.py:95-117)
//! each step is timed in two stages, each synchronising every device on entry and exit:
//! `loading` (the wait for the batch and its copies to the devices) and `compute` (the
//! replicas' forward and backward, the all-reduce, the steps). Not as the script: the
//! script copies its whole batch to GPU 0 and DataParallel scatters it inside `compute`.
//! Args: `arch`/`a` (resnet18; the jobs pass resnet101), `batch_size` per device (fast.json:
//! 64, fp16: 128), `image_size` (224), `num_classes` (1000), `lr` (0.1), `half`, `vcd`,
//! `workers` (fast.json: 8).

use super::convnet::{IMAGENET_MEAN, IMAGENET_SD, ResNetArgs};
use super::half::{Sgd, batch_norm_to_float};
use super::host_loader::{HostLoader, Recipe};
use super::parallel::{self, Workers};
use super::{Ctx, Train, sync};
use crate::bench::{BenchArgs, BenchError, Logs};
use crate::timing::timed;
use tch::nn::{self, ModuleT};
use tch::{Device, Kind, Tensor};

pub(super) const SOURCE: &str = concat!(
    include_str!("convnet_distributed.rs"),
    include_str!("parallel.rs"),
    include_str!("host_loader.rs"),
    include_str!("loader.rs"),
    include_str!("half.rs"),
    include_str!("convnet.rs")
);

/// The batch the script records and counts items by: `args.batch_size = args.batch_size *
/// node_size`, the per-device batch times the devices.
pub(super) fn batch_size(args: &BenchArgs) -> i64 {
    args.batch_size * parallel::vcd_devices(args).unwrap_or(1) as i64
}

struct Replica {
    net: Box<dyn ModuleT>,
    opt: Sgd,
    device: Device,
    _vs: nn::VarStore,
}

struct ConvNetDistributed {
    workers: Workers<Replica>,
    /// Trainable parameters, replica × parameter.
    params: Vec<Vec<Tensor>>,
    /// BatchNorm running statistics, replica × buffer.
    buffers: Vec<Vec<Tensor>>,
    /// Each replica's share of the parameters in a split all-reduce.
    parts: Vec<std::ops::Range<usize>>,
    device0: Device,
    /// Every replica's device.
    devices: Vec<Device>,
    /// The script's loader: whole batches of `batch_size × devices`.
    loader: HostLoader,
    /// One replica's share: `[batch_size, 3, size, size]`.
    shape: [i64; 4],
    kind: Kind,
    coordinator: parallel::Coordinator,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    Ok(Box::new(model(ctx, args)?))
}

fn model(ctx: &Ctx, args: &BenchArgs) -> Result<ConvNetDistributed, BenchError> {
    let devices = parallel::device_count(ctx, args)?;
    let placements = parallel::placements(ctx, devices)?;
    let batch_size = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let resnet = ResNetArgs::read(ctx, args)?;
    let lr = ctx.float(args, &["lr", "learning_rate"], 0.1)?;
    if ctx.is_cuda() {
        tch::Cuda::cudnn_set_benchmark(true);
    }
    let size = resnet.image_size;
    let mut replicas = Vec::with_capacity(devices);
    let (mut params, mut all, mut buffers) = (Vec::new(), Vec::new(), Vec::new());
    // Built here, one after the other, so the random streams do not depend on threads.
    for placement in &placements {
        let device = placement.device;
        let mut vs = nn::VarStore::new(device);
        let net = resnet.net(ctx, &vs.root())?;
        vs.set_kind(ctx.kind);
        batch_norm_to_float(&vs);
        let opt = Sgd::new(&vs, lr).map_err(|e| ctx.failed(e.to_string()))?;
        params.push(vs.trainable_variables());
        let (vars, bufs) = parallel::named(&vs);
        all.push(vars);
        buffers.push(bufs);
        replicas.push(Replica {
            net,
            opt,
            device,
            _vs: vs,
        });
    }
    // DDP's construction: every replica starts from replica 0's weights and buffers.
    parallel::broadcast(&all, devices);
    let workers = Workers::start(replicas, &placements)
        .map_err(|e| ctx.failed(format!("starting the replicas' threads: {e}")))?;
    let parts = parallel::partition(&params[0], devices);
    let workers_threads = ctx.int(args, &["workers"], 0)?.max(0) as usize;
    let recipe = Recipe::normalized(
        batch_size as usize * devices,
        (size * size) as usize,
        resnet.classes as u64,
        &IMAGENET_MEAN,
        &IMAGENET_SD,
    );
    // conv_distributed.py:83: one iterator, made before the loop (not shuffled).
    let loader = HostLoader::new(recipe, args.seed as u64, workers_threads, 0);
    Ok(ConvNetDistributed {
        workers,
        parts,
        params,
        buffers,
        device0: placements[0].device,
        devices: placements.iter().map(|p| p.device).collect(),
        loader,
        shape: [batch_size, 3, size, size],
        kind: ctx.kind,
        coordinator: parallel::Coordinator::default(),
    })
}

impl ConvNetDistributed {
    /// The next whole batch, split in equal shares, each on its replica's device.
    fn next_on_devices(&mut self) -> Vec<(Tensor, Tensor)> {
        let batch = self.loader.next_batch();
        let share = self.shape[0] as usize;
        let values = batch.images.len() / self.devices.len();
        self.devices
            .iter()
            .enumerate()
            .map(|(i, &device)| {
                let images = Tensor::from_slice(&batch.images[i * values..(i + 1) * values])
                    .view(self.shape)
                    .to_device(device)
                    .to_kind(self.kind);
                let labels =
                    Tensor::from_slice(&batch.labels[i * share..(i + 1) * share]).to_device(device);
                (images, labels)
            })
            .collect()
    }

    /// Waits for every replica's device.
    fn sync_all(devices: &[Device]) {
        for &device in devices {
            sync(device);
        }
    }

    /// One step on the replicas' shares: the mean of their losses.
    fn train_on(&mut self, inputs: Vec<(Tensor, Tensor)>) -> Tensor {
        self.coordinator.enter(self.device0);
        // DDP's broadcast_buffers: replica 0's running statistics before the forward.
        parallel::broadcast(&self.buffers, self.buffers.len());
        let losses = self.workers.map(inputs, |_, r, (images, labels)| {
            r.opt.zero_grad();
            let logits = r.net.forward_t(&images, true);
            // Cross-entropy in float32 even for half models, as convnet.
            let loss = logits
                .to_kind(Kind::Float)
                .cross_entropy_for_logits(&labels);
            r.opt.backward(&loss);
            loss.detach()
        });
        parallel::all_reduce_mean_on(&self.workers, &self.params, &self.parts);
        self.workers.each(|_, r| {
            r.opt.step();
            // Each device finished with its step, as each process's loss.item() waits for
            // its own: the step's time covers every device.
            if let Device::Cuda(i) = r.device {
                tch::Cuda::synchronize(i as i64);
            }
        });
        let losses: Vec<Tensor> = losses.iter().map(|l| l.to_device(self.device0)).collect();
        Tensor::stack(&losses, 0).mean(Kind::Float)
    }
}

impl Train for ConvNetDistributed {
    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        let inputs = self.next_on_devices();
        Ok(self.train_on(inputs))
    }

    fn step(&mut self) -> Result<Logs, BenchError> {
        let devices = self.devices.clone();
        let sync = || Self::sync_all(&devices);
        let (inputs, loading) = timed(&sync, || self.next_on_devices());
        let (loss, compute) = timed(&sync, || {
            self.train_on(inputs)
                .to_kind(Kind::Double)
                .double_value(&[])
        });
        Ok(Logs::loss(loss)
            .stage("loading", loading)
            .stage("compute", compute))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::DeviceSpec;
    use mlbench_schema::value::Value;

    /// Three replicas on their own batches: after each step every replica holds the same
    /// weights (the averaged gradients reached each optimizer), which the step changed.
    #[test]
    fn replicas_stay_identical_while_training() {
        let extra = [
            ("arch", Value::from("resnet18")),
            ("image_size", Value::Int(32)),
            ("num_classes", Value::Int(5)),
            ("vcd", Value::from("0,1,2")),
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
        assert_eq!(model.params.len(), 3);
        let before: Vec<Tensor> = model.params[0].iter().map(Tensor::copy).collect();
        for _ in 0..2 {
            let loss = model.train_step().unwrap().double_value(&[]);
            assert!(loss.is_finite());
            for (i, replica) in model.params.iter().enumerate() {
                for (j, p) in replica.iter().enumerate() {
                    let d = (p - &model.params[0][j]).abs().max().double_value(&[]);
                    assert_eq!(d, 0.0, "replica {i}, parameter {j}");
                }
            }
        }
        let moved = before
            .iter()
            .zip(&model.params[0])
            .any(|(a, b)| (a - b).abs().max().double_value(&[]) > 0.0);
        assert!(moved, "the step changed the weights");
    }
}
