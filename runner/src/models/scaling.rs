//! `scaling`'s rank: micro_bench.py of the suite's image_classification/scaling, one
//! process of a DistributedDataParallel world (the sweep over world sizes is
//! `crate::scaling`).
//!
//! As the script: torchvision's `--network` (resnet101 in the jobs file; resnet18/34/50/152
//! too), randomly initialised, 1000 classes; one input `randn(batch, 3, 224, 224)` made once
//! on the device and targets all zeros; cross-entropy; SGD with lr 0.01 and momentum 0.9;
//! `--batch-size` per rank. DDP over c10d (`crate::ddp`): rank 0's parameters and buffers
//! at the start, its buffers again before each forward, gradients averaged in buckets after
//! each backward. Two warm-up steps, then `--number` steps timed between two device
//! synchronisations (the telemetry window, when rank 0 samples its world); the world's
//! speed is batch × world × steps ÷ seconds.
//!
//! `image_size` (not an argument of the script; 224 by default) lets `--smoke` shrink the
//! input. The process group is Gloo's on CPU devices and NCCL's on CUDA devices, as
//! `torch.distributed`'s default backends; a runner whose shim was built without NCCL (any
//! but a CUDA libtorch's) fails a CUDA rank with a message that says so.
use super::Ctx;
use super::convnet::ResNetArgs;
use crate::bench::{BenchArgs, BenchError, DeviceSpec, RankTiming};
use crate::c10d::{Engine, ProcessGroup};
use crate::ddp::Ddp;
use crate::rendezvous::Rendezvous;
use crate::timing::TimedWindow;
use std::time::Instant;
use tch::nn::OptimizerConfig;
use tch::{Tensor, nn};

pub(super) const SOURCE: &str = concat!(
    include_str!("scaling.rs"),
    include_str!("../ddp.rs"),
    include_str!("../c10d.rs"),
    include_str!("convnet.rs"),
    include_str!("image_data.rs"),
    include_str!("host_loader.rs"),
    include_str!("loader.rs"),
    include_str!("half.rs")
);

/// Steps before the timed ones (micro_bench.py's two).
const WARM_UP: u64 = 2;

/// Runs rank `rendezvous.rank` of the world on `device`.
pub(super) fn rank(
    args: &BenchArgs,
    device: DeviceSpec,
    rendezvous: &Rendezvous,
    window: &mut dyn TimedWindow,
) -> Result<RankTiming, BenchError> {
    let ctx = Ctx::new("scaling", args, device)?;
    let batch = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let network = ResNetArgs {
        arch: ctx
            .string(args, &["network"])?
            .unwrap_or_else(|| "resnet101".to_owned()),
        image_size: ctx.size(args, &["image_size"], 224)?,
        classes: 1000,
    };
    let vs = nn::VarStore::new(ctx.device);
    let net = network.net(&ctx, &vs.root())?;
    let (params, buffers) = split_variables(&vs);
    let group = ProcessGroup::join(Engine::for_device(ctx.device), rendezvous)
        .map_err(|e| ctx.failed(e.to_string()))?;
    let mut ddp = Ddp::new(group, params, buffers).map_err(|e| ctx.failed(e.to_string()))?;
    let mut opt = nn::Sgd {
        momentum: 0.9,
        ..Default::default()
    }
    .build(&vs, 0.01)
    .map_err(|e| ctx.failed(e.to_string()))?;
    let size = network.image_size;
    let input = Tensor::randn([batch, 3, size, size], ctx.opts());
    let target = Tensor::zeros([batch], ctx.int_opts());
    let mut step = || -> Result<Tensor, BenchError> {
        ddp.broadcast_buffers()
            .map_err(|e| ctx.failed(e.to_string()))?;
        let loss = net
            .forward_t(&input, true)
            .cross_entropy_for_logits(&target);
        opt.zero_grad();
        loss.backward();
        ddp.average_gradients()
            .map_err(|e| ctx.failed(e.to_string()))?;
        opt.step();
        Ok(loss)
    };
    for _ in 0..WARM_UP {
        let _ = step()?;
    }
    super::sync(ctx.device);
    let steps = args.number.max(1) as u64;
    window.start();
    let started = Instant::now();
    let mut last = None;
    for _ in 0..steps {
        last = Some(step()?);
    }
    super::sync(ctx.device);
    let seconds = started.elapsed().as_secs_f64();
    window.end();
    // The script logs no loss; a diverged step still makes its timing worthless.
    if let Some(loss) = last.map(|l| l.double_value(&[]))
        && !loss.is_finite()
    {
        return Err(ctx.failed(format!("loss {loss} after the timed steps")));
    }
    Ok(RankTiming {
        steps,
        items: (batch as u64) * rendezvous.world as u64,
        seconds,
    })
}

/// The store's trainable tensors and its buffers, each sorted by name: the same order on
/// every rank.
fn split_variables(vs: &nn::VarStore) -> (Vec<Tensor>, Vec<Tensor>) {
    let mut named: Vec<(String, Tensor)> = vs.variables().into_iter().collect();
    named.sort_by(|a, b| a.0.cmp(&b.0));
    let (params, buffers): (Vec<_>, Vec<_>) =
        named.into_iter().partition(|(_, t)| t.requires_grad());
    let strip = |v: Vec<(String, Tensor)>| v.into_iter().map(|(_, t)| t).collect();
    (strip(params), strip(buffers))
}
