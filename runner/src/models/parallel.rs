//! nn.DataParallel for the suite's whole-machine jobs: one replica of a model per device,
//! each stepped by an OS thread of its own, as DataParallel's `parallel_apply` runs them.
//!
//! - [`Workers`]: the replicas' threads. On simulated CPU devices every replica lives on
//!   `Device::Cpu` and its thread gets its share of the copy's cores: torch's intra-op
//!   thread count (per OS thread) and, as the per-device copies, the matching contiguous run
//!   of CPUs ([`placements`]). On CUDA replica i lives on `Device::Cuda(i)`. The thread that
//!   steps the model ([`Coordinator`]) runs on one intra-op thread on CPU devices.
//! - The communication is c10d's ([`crate::data_parallel`]): each replica's thread holds its
//!   rank of a process group made for the replicas ([`groups`]); replication (the master's
//!   parameters and buffers broadcast before every forward) and the gradients' reduction
//!   onto the master go through it: Gloo's group for CPU tensors, NCCL's for CUDA ones
//!   (built only against a CUDA libtorch; elsewhere more than one CUDA device is refused,
//!   saying so).
//! - [`apply`] scatters a batch held on device 0 along its first dimension as `torch.chunk`
//!   splits it ([`chunk_sizes`]), runs each chunk through its replica and gathers the
//!   outputs onto device 0; [`backward`] sends the output's gradient back the same way and
//!   returns the input's. Scatter and gather are device copies, as `comm.scatter` and
//!   `comm.gather` are in PyTorch (on simulated CPU devices, views of one memory).

use super::{Ctx, panic_message};
use crate::bench::{BenchArgs, BenchError, DeviceSpec};
use crate::c10d::{C10dError, Engine, ProcessGroup};
use crate::confine::{allowed_cpus, pin_current_thread, share_of};
use crate::data_parallel;
use crate::devices::{DeviceSet, split_cores};
use mlbench_schema::value::Value;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;
use tch::{Device, Tensor};

/// The devices a whole-machine copy spans: the entries of its `vcd` argument
/// (`CUDA_VISIBLE_DEVICES`, `"0,1,…"`), 1 without one. `None` for a malformed `vcd`.
pub(super) fn vcd_devices(args: &BenchArgs) -> Option<usize> {
    match args.extra.get("vcd") {
        None => Some(1),
        Some(Value::Int(_)) => Some(1),
        Some(Value::Str(s)) => {
            let entries: Vec<&str> = s.split(',').map(str::trim).collect();
            let ok = entries
                .iter()
                .all(|e| !e.is_empty() && e.chars().all(|c| c.is_ascii_digit()));
            ok.then_some(entries.len())
        }
        Some(_) => None,
    }
}

/// [`vcd_devices`], or an argument error.
pub(super) fn device_count(ctx: &Ctx, args: &BenchArgs) -> Result<usize, crate::bench::BenchError> {
    vcd_devices(args).ok_or_else(|| {
        ctx.arg_error(format!(
            "vcd {:?}: expected a list of device indices such as \"0,1\"",
            args.extra.get("vcd")
        ))
    })
}

/// Where replica i runs: its device and, on CPU, its threads and CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Placement {
    pub device: Device,
    /// torch's intra-op threads for the replica's thread (CPU devices).
    pub threads: Option<usize>,
    /// The CPUs the replica's thread is pinned to (CPU devices; empty: not pinned).
    pub cpus: Vec<usize>,
}

/// The placements of `n` replicas of a copy built on `ctx`: on CUDA, `Cuda(0..n)` (each
/// checked to exist); on CPU, `n` simulated devices sharing the copy's cores as `--devices n`
/// splits them for per-device copies (`split_cores`, `share_of`). The copy's cores are the
/// intra-op threads `Ctx::new` has just set on this thread (`DeviceSpec::Cpu::threads`).
pub(super) fn placements(ctx: &Ctx, n: usize) -> Result<Vec<Placement>, crate::bench::BenchError> {
    if n == 0 {
        return Err(ctx.arg_error("no devices to run on"));
    }
    if ctx.is_cuda() {
        let count = tch::Cuda::device_count();
        return (0..n)
            .map(|i| {
                if i as i64 >= count {
                    Err(ctx.device_error(format!(
                        "{n} devices wanted, libtorch sees {count} CUDA device(s)"
                    )))
                } else {
                    Ok(Placement {
                        device: Device::Cuda(i),
                        threads: None,
                        cpus: Vec::new(),
                    })
                }
            })
            .collect();
    }
    let cores = tch::get_num_threads().max(1) as usize;
    let threads = split_cores(cores, n as u32);
    let set = DeviceSet::cpu(cores, n as u32).map_err(|e| ctx.arg_error(e.to_string()))?;
    let allowed = allowed_cpus();
    Ok(threads
        .into_iter()
        .enumerate()
        .map(|(i, threads)| {
            let spec = DeviceSpec::Cpu {
                index: i as u32,
                threads,
            };
            Placement {
                device: Device::Cpu,
                threads: Some(threads),
                cpus: share_of(&set, spec, false, &allowed, None).cpus,
            }
        })
        .collect())
}

/// How long a replica waits for the others at a collective: c10d's default.
const TIMEOUT: Duration = Duration::from_secs(60);

/// A replica's part in DataParallel's communication: its rank in the replicas' process
/// group, rank 0 being the master; none with one replica (DataParallel on one device calls
/// the module itself, without replication or reduction).
pub(super) struct Rank(Option<ProcessGroup>);

impl Rank {
    /// Replication: the master's `vars` (parameters and buffers) copied into this
    /// replica's, as DataParallel does before every forward.
    pub(super) fn replicate(&mut self, vars: &[Tensor]) -> Result<(), C10dError> {
        match &mut self.0 {
            Some(group) => data_parallel::broadcast_coalesced(group, vars),
            None => Ok(()),
        }
    }

    /// The gradients of `params` summed into the master's, this replica's then zeroed, as
    /// DataParallel's backward does after each call.
    pub(super) fn reduce_grads(&mut self, params: &[Tensor]) -> Result<(), C10dError> {
        match &mut self.0 {
            Some(group) => data_parallel::reduce_add_coalesced(group, params),
            None => Ok(()),
        }
    }
}

/// The replicas' ranks, replica i's at index i: a process group in this process over the
/// loopback, Gloo's on CPU devices and NCCL's on CUDA devices (the engine DataParallel's
/// `comm` calls there); nothing for one replica. A runner built without NCCL refuses more
/// than one CUDA device, saying so.
pub(super) fn ranks(ctx: &Ctx, placements: &[Placement]) -> Result<Vec<Rank>, BenchError> {
    let n = placements.len();
    if n <= 1 {
        return Ok((0..n).map(|_| Rank(None)).collect());
    }
    let engine = Engine::for_device(placements[0].device);
    let groups = ProcessGroup::world_here(engine, n, TIMEOUT)
        .map_err(|e| ctx.device_error(format!("the replicas' process group: {e}")))?;
    Ok(groups.into_iter().map(|g| Rank(Some(g))).collect())
}

/// The replicas' results of one collective: the first failure, naming its replica.
pub(super) fn collective(
    bench: &str,
    results: Vec<Result<(), C10dError>>,
) -> Result<(), BenchError> {
    match results
        .into_iter()
        .enumerate()
        .find_map(|(i, r)| r.err().map(|e| (i, e)))
    {
        None => Ok(()),
        Some((i, e)) => Err(BenchError::Failed {
            bench: bench.to_owned(),
            message: format!("replica {i}: {e}"),
        }),
    }
}

/// Sets this thread's libtorch intra-op threads for good. ATen's count is per OS thread, but
/// a thread takes, at its first parallel region, the count last set by any thread (a
/// process-wide value) unless it has already done that first initialisation: so it is done
/// here first (`get_num_threads` does it), then the count set.
fn set_own_threads(threads: usize) {
    let _ = tch::get_num_threads();
    tch::set_num_threads(threads.max(1) as i32);
}

/// The coordinating thread of a whole-machine copy on CPU devices, the one that steps the
/// model: while the replicas' threads run (their forward, backward and collectives) it waits,
/// and between their runs it takes the losses and steps the master's optimizer. It runs that
/// work on one libtorch thread: with more, libgomp's helper threads spin after each parallel
/// region (for milliseconds, by default) on the cores the replicas' threads need, often
/// while the thread they wait for is not scheduled.
#[derive(Debug, Default)]
pub(super) struct Coordinator(Option<std::thread::ThreadId>);

impl Coordinator {
    /// At the start of each step: on CPU devices, the first time on a thread, sets its
    /// libtorch threads to one (the copy's placements have read its cores by then).
    pub(super) fn enter(&mut self, device: Device) {
        let here = std::thread::current().id();
        if device == Device::Cpu && self.0 != Some(here) {
            set_own_threads(1);
            self.0 = Some(here);
        }
    }
}

type Job<R> = Box<dyn FnOnce(&mut R) + Send>;

/// One thread per replica, each owning its replica `R`, running the jobs it is sent in order.
pub(super) struct Workers<R: Send + 'static> {
    senders: Vec<mpsc::Sender<Job<R>>>,
    handles: Vec<JoinHandle<()>>,
}

impl<R: Send + 'static> Workers<R> {
    /// Starts a thread per replica with its placement's threads and CPUs.
    pub(super) fn start(replicas: Vec<R>, placements: &[Placement]) -> std::io::Result<Self> {
        let mut workers = Workers {
            senders: Vec::with_capacity(replicas.len()),
            handles: Vec::with_capacity(replicas.len()),
        };
        for (i, (mut replica, placement)) in replicas.into_iter().zip(placements).enumerate() {
            let (tx, rx) = mpsc::channel::<Job<R>>();
            let placement = placement.clone();
            let handle = std::thread::Builder::new()
                .name(format!("replica-{i}"))
                .spawn(move || {
                    // Before this thread's first parallel region, so its OpenMP team
                    // inherits the pinning; the count is per OS thread.
                    if !placement.cpus.is_empty() {
                        let _ = pin_current_thread(&placement.cpus);
                    }
                    if let Some(threads) = placement.threads {
                        set_own_threads(threads);
                    }
                    while let Ok(job) = rx.recv() {
                        job(&mut replica);
                    }
                })?;
            workers.senders.push(tx);
            workers.handles.push(handle);
        }
        Ok(workers)
    }

    /// The number of replicas.
    pub(super) fn len(&self) -> usize {
        self.senders.len()
    }

    /// Runs `f(i, replica i, inputs[i])` on the first `inputs.len()` replicas at once and
    /// returns the results in replica order. A panic in a replica (a libtorch error) is
    /// raised here, after every replica has finished, naming the replica.
    pub(super) fn map<I, T, F>(&self, inputs: Vec<I>, f: F) -> Vec<T>
    where
        I: Send + 'static,
        T: Send + 'static,
        F: Fn(usize, &mut R, I) -> T + Send + Sync + 'static,
    {
        assert!(
            inputs.len() <= self.len(),
            "{} inputs for {} replicas",
            inputs.len(),
            self.len()
        );
        let f = Arc::new(f);
        let (tx, rx) = mpsc::channel();
        let n = inputs.len();
        for (i, input) in inputs.into_iter().enumerate() {
            let (f, tx) = (Arc::clone(&f), tx.clone());
            let job: Job<R> = Box::new(move |replica| {
                let out = catch_unwind(AssertUnwindSafe(|| f(i, replica, input)));
                let _ = tx.send((i, out.map_err(|p| panic_message(&*p))));
            });
            if self.senders[i].send(job).is_err() {
                panic!("replica {i}: its thread has stopped");
            }
        }
        drop(tx);
        let mut results: Vec<Option<T>> = (0..n).map(|_| None).collect();
        let mut failure = None;
        for (i, out) in rx.iter().take(n) {
            match out {
                Ok(t) => results[i] = Some(t),
                Err(message) => failure = failure.or(Some(format!("replica {i}: {message}"))),
            }
        }
        if let Some(message) = failure {
            panic!("{message}");
        }
        results
            .into_iter()
            .enumerate()
            .map(|(i, r)| r.unwrap_or_else(|| panic!("replica {i}: its thread has stopped")))
            .collect()
    }

    /// Runs `f` on every replica at once.
    pub(super) fn each<T, F>(&self, f: F) -> Vec<T>
    where
        T: Send + 'static,
        F: Fn(usize, &mut R) -> T + Send + Sync + 'static,
    {
        self.map(vec![(); self.len()], move |i, r, ()| f(i, r))
    }
}

impl<R: Send + 'static> Drop for Workers<R> {
    fn drop(&mut self) {
        self.senders.clear();
        for handle in self.handles.drain(..) {
            let _ = handle.join();
        }
    }
}

/// A copy of `t` on `device` (`t` itself when already there); device-to-device copies are
/// ordered on the streams by libtorch, so they need not block the host.
fn to(t: &Tensor, device: Device) -> Tensor {
    if t.device() == device {
        t.shallow_clone()
    } else {
        t.to_device_(device, t.kind(), true, false)
    }
}

/// torch.chunk's split of `n` items into `parts`, as DataParallel's scatter splits a batch:
/// chunks of ⌈n / parts⌉, the last one smaller, fewer chunks when the items run out
/// (5 over 2: 3 + 2; 5 over 4: 2 + 2 + 1).
pub(super) fn chunk_sizes(n: i64, parts: usize) -> Vec<i64> {
    if n <= 0 || parts == 0 {
        return Vec::new();
    }
    let size = (n + parts as i64 - 1) / parts as i64;
    let mut out = Vec::new();
    let mut left = n;
    while left > 0 {
        out.push(size.min(left));
        left -= size;
    }
    out
}

/// nn.parallel.scatter: `input` split along dimension 0 by [`chunk_sizes`], chunk i on
/// `devices[i]`. Each chunk is a leaf of its own, requiring grad when `requires_grad`, so
/// that [`backward`] can return the input's gradient.
pub(super) fn scatter(input: &Tensor, devices: &[Device], requires_grad: bool) -> Vec<Tensor> {
    let mut offset = 0;
    chunk_sizes(input.size()[0], devices.len())
        .into_iter()
        .zip(devices)
        .map(|(len, &device)| {
            let chunk = to(&input.narrow(0, offset, len).detach(), device);
            offset += len;
            if requires_grad {
                chunk.detach().set_requires_grad(true)
            } else {
                chunk
            }
        })
        .collect()
}

/// nn.parallel.gather: the outputs concatenated along dimension 0 on `device`.
pub(super) fn gather(outputs: &[Tensor], device: Device) -> Tensor {
    let parts: Vec<Tensor> = outputs.iter().map(|y| to(y, device)).collect();
    Tensor::cat(&parts, 0)
}

/// One application of a module through DataParallel.
pub(super) struct Applied {
    /// The replicas' inputs (leaves).
    inputs: Vec<Tensor>,
    /// The replicas' outputs, with their graphs.
    outputs: Vec<Tensor>,
    /// The gathered output on device 0: a leaf requiring grad, whose gradient (after the
    /// loss's backward) [`backward`] sends back to the replicas.
    pub output: Tensor,
}

/// `nn.parallel.data_parallel(module, input, devices)`: `input` (on device 0) scattered over
/// the replicas, `f(replica, chunk)` run on each in its thread, the outputs gathered onto
/// device 0. With `input_grad`, [`backward`] returns the input's gradient (for a module
/// applied to another's output, as dcgan's D to G's).
pub(super) fn apply<R, F>(
    workers: &Workers<R>,
    devices: &[Device],
    input: &Tensor,
    input_grad: bool,
    f: F,
) -> Applied
where
    R: Send + 'static,
    F: Fn(&mut R, &Tensor) -> Tensor + Send + Sync + 'static,
{
    let inputs = scatter(input, devices, input_grad);
    let shared: Vec<Tensor> = inputs.iter().map(Tensor::shallow_clone).collect();
    let outputs = workers.map(shared, move |_, replica, x| f(replica, &x));
    let detached: Vec<Tensor> = outputs.iter().map(Tensor::detach).collect();
    let output = gather(&detached, devices[0]).set_requires_grad(true);
    Applied {
        inputs,
        outputs,
        output,
    }
}

/// The backward of `applied` given its output's gradient (on device 0): scattered back
/// over the replicas (Gather's backward), each replica's backward run in its thread (its
/// parameters' gradients accumulate), and the input's gradient gathered onto device 0
/// (Scatter's backward) when the input needed one.
pub(super) fn backward<R: Send + 'static>(
    workers: &Workers<R>,
    applied: Applied,
    output_grad: &Tensor,
) -> Option<Tensor> {
    let device0 = applied.output.device();
    let mut offset = 0;
    let jobs: Vec<(Tensor, Tensor)> = applied
        .outputs
        .into_iter()
        .map(|y| {
            let len = y.size()[0];
            let grad = to(&output_grad.narrow(0, offset, len), y.device());
            offset += len;
            (y, grad)
        })
        .collect();
    workers.map(jobs, |_, _, (y, grad)| {
        // d/dy Σ y·g = g: y's backward seeded with g.
        (&y * &grad).sum(y.kind()).backward();
    });
    if !applied.inputs.first().is_some_and(Tensor::requires_grad) {
        return None;
    }
    let grads: Vec<Tensor> = applied.inputs.iter().map(Tensor::grad).collect();
    Some(gather(&grads, device0))
}

/// The named variables of a var store (parameters and buffers) in name order, and which
/// of them are buffers (not trained).
pub(super) fn named(vs: &tch::nn::VarStore) -> (Vec<Tensor>, Vec<Tensor>) {
    let mut vars: Vec<(String, Tensor)> = vs.variables().into_iter().collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    let buffers = vars
        .iter()
        .filter(|(_, t)| !t.requires_grad())
        .map(|(_, t)| t.shallow_clone())
        .collect();
    (vars.into_iter().map(|(_, t)| t).collect(), buffers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Kind;
    use tch::nn::{self, Module, OptimizerConfig};

    /// A replica of the test models: a linear layer, or a small conv net.
    struct Net {
        module: Box<dyn Module>,
        vs: nn::VarStore,
    }

    fn linear() -> Net {
        let vs = nn::VarStore::new(Device::Cpu);
        let module = Box::new(nn::linear(vs.root() / "fc", 4, 3, Default::default()));
        Net { module, vs }
    }

    fn conv() -> Net {
        let vs = nn::VarStore::new(Device::Cpu);
        let p = vs.root();
        let module = Box::new(
            nn::seq()
                .add(nn::conv2d(&p / "c1", 2, 3, 3, Default::default()))
                .add_fn(|x| x.relu())
                .add(nn::conv2d(&p / "c2", 3, 2, 3, Default::default()))
                .add_fn(|x| x.flatten(1, -1)),
        );
        Net { module, vs }
    }

    fn cpu_placements(n: usize) -> Vec<Placement> {
        vec![
            Placement {
                device: Device::Cpu,
                threads: Some(1),
                cpus: Vec::new(),
            };
            n
        ]
    }

    fn max_diff(a: &Tensor, b: &Tensor) -> f64 {
        (a - b).abs().max().double_value(&[])
    }

    /// A replica for DataParallel: a net and its rank.
    struct Replica {
        net: Net,
        rank: Rank,
    }

    fn replicas_of(make: fn() -> Net, n: usize) -> Vec<Replica> {
        let ranks = ProcessGroup::gloo_world_here(n, TIMEOUT).unwrap();
        ranks
            .into_iter()
            .map(|g| Replica {
                net: make(),
                rank: Rank(Some(g)),
            })
            .collect()
    }

    /// One step of the suite's nn.DataParallel over `n` replicas (replicate the master,
    /// scatter, forward, gather, the mean loss on device 0, backward, reduce onto the
    /// master, SGD on the master alone), one of DDP over `n` ranks (each replica on its share,
    /// its loss's mean, the gradients averaged by `ddp::Ddp`, SGD on every rank), and one of
    /// a single process on the whole batch: the same weights (to 1e-6) and the same loss.
    fn data_parallel_and_ddp_take_the_whole_batchs_step(
        make: fn() -> Net,
        input: &[i64],
        n: usize,
    ) {
        tch::manual_seed(7);
        let reference = make();
        let x = Tensor::randn(input, (Kind::Float, Device::Cpu));
        let target_shape = reference.module.forward(&x).size();
        let y = Tensor::randn(target_shape.as_slice(), (Kind::Float, Device::Cpu));
        let lr = 0.5;

        // DataParallel: the replicas start from other weights; replication makes them the
        // master's, and the master (replica 0) is the reference's.
        let mut replicas = replicas_of(make, n);
        replicas[0].net.vs.copy(&reference.vs).unwrap();
        let master = replicas[0].net.vs.trainable_variables();
        let mut opt = nn::Sgd::default().build(&replicas[0].net.vs, lr).unwrap();
        let devices = vec![Device::Cpu; n];
        let workers = Workers::start(replicas, &cpu_placements(n)).unwrap();
        let replicated = workers.each(|_, r| {
            let vars = named(&r.net.vs).0;
            r.rank.replicate(&vars).unwrap();
            vars.iter().map(Tensor::copy).collect::<Vec<_>>()
        });
        for vars in &replicated[1..] {
            for (a, b) in vars.iter().zip(&replicated[0]) {
                assert_eq!(max_diff(a, b), 0.0, "replication");
            }
        }
        let applied = apply(&workers, &devices, &x, false, |r: &mut Replica, x| {
            r.net.module.forward(x)
        });
        let dp_loss = applied.output.mse_loss(&y, tch::Reduction::Mean);
        dp_loss.backward();
        let grad = applied.output.grad();
        assert!(backward(&workers, applied, &grad).is_none());
        workers.each(|_, r| {
            let params = r.net.vs.trainable_variables();
            r.rank.reduce_grads(&params).unwrap()
        });
        opt.step();

        // DDP: rank i on share i, in threads of this process.
        let per = input[0] / n as i64;
        let groups = ProcessGroup::gloo_world_here(n, TIMEOUT).unwrap();
        let ddp: Vec<Vec<Tensor>> = std::thread::scope(|scope| {
            let joins: Vec<_> = groups
                .into_iter()
                .enumerate()
                .map(|(i, group)| {
                    let (x, y) = (
                        x.narrow(0, i as i64 * per, per),
                        y.narrow(0, i as i64 * per, per),
                    );
                    let weights = (i == 0).then(|| named(&reference.vs).0);
                    scope.spawn(move || {
                        let net = make();
                        if let Some(weights) = weights {
                            tch::no_grad(|| {
                                for (mine, theirs) in named(&net.vs).0.iter().zip(&weights) {
                                    mine.shallow_clone().copy_(theirs);
                                }
                            });
                        }
                        let params = net.vs.trainable_variables();
                        let mut ddp = crate::ddp::Ddp::new(group, params, Vec::new()).unwrap();
                        let mut opt = nn::Sgd::default().build(&net.vs, lr).unwrap();
                        net.module
                            .forward(&x)
                            .mse_loss(&y, tch::Reduction::Mean)
                            .backward();
                        ddp.average_gradients().unwrap();
                        opt.step();
                        net.vs.trainable_variables()
                    })
                })
                .collect();
            joins.into_iter().map(|j| j.join().unwrap()).collect()
        });

        let mut reference_opt = nn::Sgd::default().build(&reference.vs, lr).unwrap();
        let loss = reference
            .module
            .forward(&x)
            .mse_loss(&y, tch::Reduction::Mean);
        reference_opt.backward_step(&loss);
        assert!(max_diff(&dp_loss, &loss) < 1e-6, "DataParallel's loss");
        let expected = reference.vs.trainable_variables();
        for (j, p) in expected.iter().enumerate() {
            let d = max_diff(&master[j], p);
            assert!(
                d < 1e-6,
                "DataParallel, parameter {j}: {d} from one process"
            );
            for (rank, weights) in ddp.iter().enumerate() {
                let d = max_diff(&weights[j], p);
                assert!(
                    d < 1e-6,
                    "DDP rank {rank}, parameter {j}: {d} from one process"
                );
            }
        }
        drop(workers);
    }

    #[test]
    fn data_parallel_and_ddp_take_one_step_linear_replicas() {
        data_parallel_and_ddp_take_the_whole_batchs_step(linear, &[6, 4], 2);
        data_parallel_and_ddp_take_the_whole_batchs_step(linear, &[6, 4], 3);
    }

    #[test]
    fn data_parallel_and_ddp_take_one_step_conv_replicas() {
        data_parallel_and_ddp_take_the_whole_batchs_step(conv, &[6, 2, 7, 7], 2);
        data_parallel_and_ddp_take_the_whole_batchs_step(conv, &[6, 2, 7, 7], 3);
    }

    #[test]
    fn more_than_one_cuda_device_needs_nccl() {
        let args = BenchArgs {
            batch_size: 1,
            number: 1,
            repeat: 1,
            seed: 0,
            extra: Default::default(),
        };
        let spec = DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        let ctx = Ctx::new("convnet_distributed", &args, spec).unwrap();
        let cuda = |i| Placement {
            device: Device::Cuda(i),
            threads: None,
            cpus: Vec::new(),
        };
        if !Engine::nccl_built() {
            let message = match ranks(&ctx, &[cuda(0), cuda(1)]) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("two CUDA replicas without NCCL"),
            };
            assert!(message.contains("NCCL is not built"), "{message}");
        }
        assert!(ranks(&ctx, &[cuda(0)]).unwrap()[0].0.is_none());
        let two = ranks(&ctx, &cpu_placements(2)).unwrap();
        assert!(two.iter().all(|r| r.0.is_some()));
    }

    #[test]
    fn chunk_sizes_are_torch_chunks() {
        assert_eq!(chunk_sizes(5, 2), [3, 2]);
        assert_eq!(chunk_sizes(5, 4), [2, 2, 1]);
        assert_eq!(chunk_sizes(8, 4), [2, 2, 2, 2]);
        assert_eq!(chunk_sizes(1, 3), [1]);
        assert_eq!(chunk_sizes(6, 1), [6]);
        assert!(chunk_sizes(0, 2).is_empty());
    }

    /// Two chained modules (as dcgan's D after G) through DataParallel on 2 replicas, batch 5
    /// scattered 3 + 2: the gathered output, the loss, the master's reduced gradients and the
    /// input's gradient are the single model's on the whole batch; the replicas' gradients
    /// are zeroed, and broadcast replicates the master.
    #[test]
    fn data_parallel_scatters_3_plus_2_and_gathers_the_single_models_gradients() {
        tch::manual_seed(3);
        struct Pair {
            first: Net,
            second: Net,
            rank: Rank,
        }
        let make = |rank| Pair {
            first: linear(),
            second: {
                let vs = nn::VarStore::new(Device::Cpu);
                let module = Box::new(nn::linear(vs.root() / "fc", 3, 2, Default::default()));
                Net { module, vs }
            },
            rank,
        };
        let reference = make(Rank(None));
        let groups = ProcessGroup::gloo_world_here(2, TIMEOUT).unwrap();
        let mut replicas: Vec<Pair> = groups.into_iter().map(|g| make(Rank(Some(g)))).collect();
        for r in &mut replicas {
            r.first.vs.copy(&reference.first.vs).unwrap();
            r.second.vs.copy(&reference.second.vs).unwrap();
        }
        let first: Vec<Vec<Tensor>> = replicas
            .iter()
            .map(|r| r.first.vs.trainable_variables())
            .collect();
        let second: Vec<Vec<Tensor>> = replicas
            .iter()
            .map(|r| r.second.vs.trainable_variables())
            .collect();
        let devices = [Device::Cpu, Device::Cpu];
        let workers = Workers::start(replicas, &cpu_placements(2)).unwrap();

        let x = Tensor::randn([5, 4], (Kind::Float, Device::Cpu));
        let scattered = scatter(&x, &devices, false);
        let sizes: Vec<i64> = scattered.iter().map(|c| c.size()[0]).collect();
        assert_eq!(sizes, [3, 2]);
        assert_eq!(max_diff(&gather(&scattered, Device::Cpu), &x), 0.0);

        // Each replica gets its chunk.
        let rows = workers.map(scattered, |i, _, c: Tensor| (i, c.size()[0]));
        assert_eq!(rows, [(0, 3), (1, 2)]);

        let a = apply(&workers, &devices, &x, false, |r: &mut Pair, x| {
            r.first.module.forward(x)
        });
        let b = apply(&workers, &devices, &a.output, true, |r: &mut Pair, x| {
            r.second.module.forward(x)
        });
        let loss = b.output.square().mean(Kind::Float);
        loss.backward();
        let grad_b = b.output.grad();
        let grad_a = backward(&workers, b, &grad_b).expect("the input needed a gradient");
        assert!(backward(&workers, a, &grad_a).is_none());
        let reduced = workers.each(|_, r| {
            let (a, b) = (
                r.first.vs.trainable_variables(),
                r.second.vs.trainable_variables(),
            );
            r.rank.reduce_grads(&a)?;
            r.rank.reduce_grads(&b)
        });
        assert!(reduced.iter().all(Result::is_ok), "{reduced:?}");

        let expected_a = reference.first.module.forward(&x);
        let expected_b = reference.second.module.forward(&expected_a);
        let expected_loss = expected_b.square().mean(Kind::Float);
        expected_loss.backward();
        assert!(max_diff(&loss, &expected_loss) < 1e-6);
        for (mine, theirs) in [(&first, &reference.first), (&second, &reference.second)] {
            for (j, p) in theirs.vs.trainable_variables().iter().enumerate() {
                let d = max_diff(&mine[0][j].grad(), &p.grad());
                assert!(d < 1e-6, "master gradient {j}: {d}");
                assert_eq!(
                    mine[1][j].grad().abs().sum(Kind::Float).double_value(&[]),
                    0.0
                );
            }
        }

        // Replication: replica 1 takes the master's new weights.
        tch::no_grad(|| {
            let _ = first[0][0].shallow_clone().g_add_scalar_(1.0);
        });
        assert!(max_diff(&first[0][0], &first[1][0]) > 0.5);
        let replicated = workers.each(|_, r| r.rank.replicate(&named(&r.first.vs).0));
        assert!(replicated.iter().all(Result::is_ok), "{replicated:?}");
        assert_eq!(max_diff(&first[0][0], &first[1][0]), 0.0);
    }

    #[test]
    fn a_panicking_replica_is_reported_with_its_index() {
        let workers = Workers::start(vec![0u8, 1u8], &cpu_placements(2)).unwrap();
        let result = catch_unwind(AssertUnwindSafe(|| {
            workers.each(|i, _| {
                if i == 1 {
                    panic!("shape mismatch");
                }
            })
        }));
        let message = panic_message(&*result.unwrap_err());
        assert_eq!(message, "replica 1: shape mismatch");
        // The workers survive it.
        assert_eq!(workers.each(|i, r| i + *r as usize), [0, 2]);
    }

    /// Each replica's thread keeps its own intra-op thread count whatever other threads set
    /// later (ATen's count is per thread, but a thread's first parallel region otherwise
    /// takes the count last set anywhere), and the coordinating thread runs on one.
    #[test]
    fn replicas_keep_their_thread_counts_and_the_coordinator_runs_on_one() {
        let placements: Vec<Placement> = [2, 1, 3]
            .into_iter()
            .map(|threads| Placement {
                device: Device::Cpu,
                threads: Some(threads),
                cpus: Vec::new(),
            })
            .collect();
        let workers = Workers::start(vec![(); 3], &placements).unwrap();
        workers.each(|_, _| ());
        tch::set_num_threads(4);
        let mut coordinator = Coordinator::default();
        coordinator.enter(Device::Cuda(0));
        assert_eq!(tch::get_num_threads(), 4, "not on GPUs");
        coordinator.enter(Device::Cpu);
        assert_eq!(tch::get_num_threads(), 1);
        let counts = workers.each(|_, _| {
            // A parallel region, as a replica's step runs.
            let _ = Tensor::ones([1 << 16], (Kind::Float, Device::Cpu)).sum(Kind::Float);
            tch::get_num_threads()
        });
        assert_eq!(counts, [2, 1, 3]);
        // Once per thread: a count set since is kept on the same thread.
        tch::set_num_threads(2);
        coordinator.enter(Device::Cpu);
        assert_eq!(tch::get_num_threads(), 2);
    }

    #[test]
    fn vcd_counts_devices() {
        let args = |vcd: Option<Value>| BenchArgs {
            batch_size: 1,
            number: 1,
            repeat: 1,
            seed: 0,
            extra: vcd.into_iter().map(|v| ("vcd".to_owned(), v)).collect(),
        };
        assert_eq!(vcd_devices(&args(Some("0,1,2".into()))), Some(3));
        assert_eq!(vcd_devices(&args(Some("0".into()))), Some(1));
        assert_eq!(vcd_devices(&args(Some(Value::Int(0)))), Some(1));
        assert_eq!(vcd_devices(&args(None)), Some(1));
        assert_eq!(vcd_devices(&args(Some("0,,1".into()))), None);
        assert_eq!(vcd_devices(&args(Some("gpu".into()))), None);
    }
}
