//! Data parallelism over the devices of a whole-machine copy, for the suite's multi-GPU
//! jobs. tch has no c10d/NCCL, so the collectives are tensor copies through device 0.
//!
//! - [`Workers`]: one replica of a model per device, each stepped in an OS thread of its
//!   own. On simulated CPU devices every replica lives on `Device::Cpu` and its thread gets
//!   its share of the copy's cores: torch's intra-op thread count (per OS thread) and, as
//!   the per-device copies, the matching contiguous run of CPUs ([`placements`]). On CUDA
//!   replica i lives on `Device::Cuda(i)`. The thread that steps the model ([`Coordinator`])
//!   runs on one intra-op thread on CPU devices.
//! - DistributedDataParallel: [`all_reduce_mean`] averages the replicas' gradients (each
//!   divided by the number of replicas, summed onto device 0, broadcast back), coalesced
//!   into buckets of up to 25 MiB as DDP's; [`broadcast`] copies device 0's parameters or
//!   buffers to the others (DDP's start and its per-step buffer broadcast).
//! - One memory: on simulated CPU devices the collectives go tensor by tensor, in place,
//!   without the buckets' flattened copies (the same arithmetic), and work on every
//!   replica's tensors can be split by tensors between the replicas' threads ([`partition`],
//!   [`on_parts`], [`all_reduce_mean_on`]), so that it uses every core without the
//!   coordinating thread's own intra-op threads.
//! - nn.DataParallel: [`apply`] scatters a batch held on device 0 along its first dimension
//!   as `torch.chunk` splits it ([`chunk_sizes`]), runs each chunk through its replica and
//!   gathers the outputs onto device 0; [`backward`] sends the output's gradient back the
//!   same way and returns the input's; [`reduce_add_grads`] sums the replicas' gradients
//!   into the master's (replica 0, the one the optimizer steps), and [`broadcast`] is the
//!   replication of the master onto the other devices.

use super::{Ctx, panic_message};
use crate::bench::{BenchArgs, DeviceSpec};
use crate::confine::{allowed_cpus, pin_current_thread, share_of};
use crate::devices::{DeviceSet, split_cores};
use mlbench_schema::value::Value;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use tch::{Device, Tensor};

/// DDP's `bucket_cap_mb`: gradients are reduced in buckets of at most this many bytes.
const BUCKET_BYTES: usize = 25 << 20;

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

/// Sets this thread's libtorch intra-op threads for good. ATen's count is per OS thread, but
/// a thread takes, at its first parallel region, the count last set by any thread (a
/// process-wide value) unless it has already done that first initialisation: so it is done
/// here first (`get_num_threads` does it), then the count set.
fn set_own_threads(threads: usize) {
    let _ = tch::get_num_threads();
    tch::set_num_threads(threads.max(1) as i32);
}

/// The coordinating thread of a whole-machine copy on CPU devices, the one that steps the
/// model: while the replicas' threads run it waits, and between their runs it does the
/// collectives, the losses and (for DataParallel) the master's optimizer step. It runs that
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

/// Consecutive runs of `tensors` of one kind and at most [`BUCKET_BYTES`] (at least one
/// tensor each).
fn buckets(tensors: &[Tensor]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut bytes = 0;
    for (j, t) in tensors.iter().enumerate() {
        let size = t.numel() * t.kind().elt_size_in_bytes();
        if j > start && (bytes + size > BUCKET_BYTES || t.kind() != tensors[start].kind()) {
            out.push(start..j);
            start = j;
            bytes = 0;
        }
        bytes += size;
    }
    if start < tensors.len() {
        out.push(start..tensors.len());
    }
    out
}

/// The tensors flattened into one new contiguous vector.
fn flatten(tensors: &[Tensor]) -> Tensor {
    let flat: Vec<Tensor> = tensors.iter().map(|t| t.reshape([-1])).collect();
    Tensor::cat(&flat, 0)
}

/// Each tensor's elements of `flat` (laid out as [`flatten`] does), by `f(tensor, slice)`.
fn unflatten(flat: &Tensor, tensors: &mut [Tensor], mut f: impl FnMut(&mut Tensor, &Tensor)) {
    let mut offset = 0;
    for t in tensors {
        let n = t.numel() as i64;
        let part = flat.narrow(0, offset, n).view(t.size().as_slice());
        f(t, &part);
        offset += n;
    }
}

/// The gradients of `params` (replica × parameter) at the parameters whose gradient replica
/// 0 has, checking that every replica has the same ones.
fn grads(params: &[Vec<Tensor>], replicas: usize) -> (Vec<usize>, Vec<Vec<Tensor>>) {
    let all: Vec<Vec<Tensor>> = params[..replicas]
        .iter()
        .map(|ps| ps.iter().map(Tensor::grad).collect())
        .collect();
    let defined: Vec<usize> = (0..all[0].len()).filter(|&j| all[0][j].defined()).collect();
    for (i, g) in all.iter().enumerate() {
        for (j, t) in g.iter().enumerate() {
            assert_eq!(
                t.defined(),
                all[0][j].defined(),
                "parameter {j}: replica {i} and replica 0 disagree on having a gradient"
            );
        }
    }
    let picked = all
        .into_iter()
        .map(|g| defined.iter().map(|&j| g[j].shallow_clone()).collect())
        .collect();
    (defined, picked)
}

/// Whether the first `replicas` replicas' `tensors[..][range]` are all on replica 0's
/// device: simulated CPU devices, which share one memory. There a collective goes tensor by
/// tensor, in place, with a bucket's arithmetic in the same order but without its flattened
/// copies (copies within one memory, which would double the traffic and allocate a bucket's
/// worth each time).
fn one_memory(tensors: &[Vec<Tensor>], replicas: usize, range: &Range<usize>) -> bool {
    let device0 = tensors[0][range.start].device();
    tensors[..replicas]
        .iter()
        .all(|ts| ts[range.clone()].iter().all(|t| t.device() == device0))
}

/// DistributedDataParallel's gradient all-reduce over every replica: each replica's
/// gradient divided by the number of replicas (DDP's division by the world size), summed
/// onto replica 0's device and copied back to every replica, bucket by bucket.
/// `params[i][j]` is parameter j of replica i (the same order on every replica). Afterwards
/// every replica holds the same averaged gradients.
pub(super) fn all_reduce_mean(params: &[Vec<Tensor>]) {
    all_reduce_mean_with(params, false);
}

/// [`all_reduce_mean`], with `coalesce` flattening the buckets even in one memory.
fn all_reduce_mean_with(params: &[Vec<Tensor>], coalesce: bool) {
    let n = params.len();
    if n < 2 {
        return;
    }
    let _guard = tch::no_grad_guard();
    let (_, mut grads) = grads(params, n);
    for range in buckets(&grads[0]) {
        if !coalesce && one_memory(&grads, n, &range) {
            for j in range {
                for g in &mut grads {
                    let _ = g[j].g_div_scalar_(n as f64);
                }
                let (total, others) = grads.split_at_mut(1);
                for g in others.iter() {
                    total[0][j] += &g[j];
                }
                for g in others.iter_mut() {
                    g[j].copy_(&total[0][j]);
                }
            }
            continue;
        }
        let device0 = grads[0][range.start].device();
        let mut flats: Vec<Tensor> = grads.iter().map(|g| flatten(&g[range.clone()])).collect();
        for flat in &mut flats {
            let _ = flat.g_div_scalar_(n as f64);
        }
        let mut total = flats[0].shallow_clone();
        for flat in &flats[1..] {
            total += to(flat, device0);
        }
        for g in &mut grads {
            let local = to(&total, g[range.start].device());
            unflatten(&local, &mut g[range.clone()], |t, part| {
                t.copy_(part);
            });
        }
    }
}

/// The first `replicas` replicas' `tensors` (parameters or buffers) set to replica 0's,
/// bucket by bucket: DDP's broadcast from rank 0, DataParallel's replication.
pub(super) fn broadcast(tensors: &[Vec<Tensor>], replicas: usize) {
    broadcast_with(tensors, replicas, false);
}

/// [`broadcast`], with `coalesce` flattening the buckets even in one memory.
fn broadcast_with(tensors: &[Vec<Tensor>], replicas: usize, coalesce: bool) {
    if replicas < 2 {
        return;
    }
    let _guard = tch::no_grad_guard();
    for range in buckets(&tensors[0]) {
        if !coalesce && one_memory(tensors, replicas, &range) {
            for replica in &tensors[1..replicas] {
                for j in range.clone() {
                    replica[j].shallow_clone().copy_(&tensors[0][j]);
                }
            }
            continue;
        }
        let flat = flatten(&tensors[0][range.clone()]);
        for replica in &tensors[1..replicas] {
            let mut dst: Vec<Tensor> = replica[range.clone()]
                .iter()
                .map(Tensor::shallow_clone)
                .collect();
            let local = to(&flat, dst[0].device());
            unflatten(&local, &mut dst, |t, part| {
                t.copy_(part);
            });
        }
    }
}

/// DataParallel's gradient reduction: replicas 1..`replicas` add their gradients into
/// replica 0's (the master, the module its optimizer steps), bucket by bucket, and are
/// zeroed (DataParallel's replicas are made afresh each call).
pub(super) fn reduce_add_grads(params: &[Vec<Tensor>], replicas: usize) {
    reduce_add_grads_with(params, replicas, false);
}

/// [`reduce_add_grads`], with `coalesce` flattening the buckets even in one memory.
fn reduce_add_grads_with(params: &[Vec<Tensor>], replicas: usize, coalesce: bool) {
    if replicas < 2 {
        return;
    }
    let _guard = tch::no_grad_guard();
    let (_, mut grads) = grads(params, replicas);
    let buckets: Vec<(Range<usize>, bool)> = buckets(&grads[0])
        .into_iter()
        .map(|range| {
            let direct = !coalesce && one_memory(&grads, replicas, &range);
            (range, direct)
        })
        .collect();
    let (master, others) = grads.split_at_mut(1);
    let master = &mut master[0];
    for (range, direct) in buckets {
        let device0 = master[range.start].device();
        for g in others.iter_mut() {
            if direct {
                for j in range.clone() {
                    master[j] += &g[j];
                }
            } else {
                let flat = to(&flatten(&g[range.clone()]), device0);
                unflatten(&flat, &mut master[range.clone()], |t, part| {
                    *t += part;
                });
            }
            for t in &mut g[range.clone()] {
                let _ = t.zero_();
            }
        }
    }
}

/// Whether every tensor of `tensors` (replica × tensor) is on one device: the simulated CPU
/// devices, which share one memory.
pub(super) fn shares_memory(tensors: &[Vec<Tensor>]) -> bool {
    match tensors.first().and_then(|ts| ts.first()) {
        Some(t) => {
            let device = t.device();
            tensors.iter().flatten().all(|t| t.device() == device)
        }
        None => true,
    }
}

/// Contiguous runs of `tensors`' indices, `parts` of them, of about equal numbers of
/// elements (each tensor goes to the part its middle element falls in; a run may be empty).
pub(super) fn partition(tensors: &[Tensor], parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    let total: usize = tensors.iter().map(Tensor::numel).sum();
    let mut before = 0;
    let part_of: Vec<usize> = tensors
        .iter()
        .map(|t| {
            let n = t.numel();
            let middle = before + n / 2;
            before += n;
            (middle * parts / total.max(1)).min(parts - 1)
        })
        .collect();
    (0..parts)
        .map(|p| part_of.partition_point(|&q| q < p)..part_of.partition_point(|&q| q <= p))
        .collect()
}

/// Runs `f(replica i, share i)` in every replica's thread at once, share i being every
/// replica's tensors of `parts[i]` (replica × tensor, as `tensors`). For work on tensors in
/// one memory split by tensors between the replicas' threads, each on its own share of the
/// cores, instead of this thread: the same arithmetic on every tensor.
pub(super) fn on_parts<R, F>(
    workers: &Workers<R>,
    tensors: &[Vec<Tensor>],
    parts: &[Range<usize>],
    f: F,
) where
    R: Send + 'static,
    F: Fn(&mut R, &[Vec<Tensor>]) + Send + Sync + 'static,
{
    let shares: Vec<Vec<Vec<Tensor>>> = parts
        .iter()
        .map(|range| {
            tensors
                .iter()
                .map(|ts| {
                    ts[range.clone()]
                        .iter()
                        .map(Tensor::shallow_clone)
                        .collect()
                })
                .collect()
        })
        .collect();
    workers.map(shares, move |_, replica, share| f(replica, &share));
}

/// [`all_reduce_mean`] with the work split between the replicas' threads by `parts` (one per
/// replica, see [`partition`]) when the replicas share one memory; else on this thread.
pub(super) fn all_reduce_mean_on<R: Send + 'static>(
    workers: &Workers<R>,
    params: &[Vec<Tensor>],
    parts: &[Range<usize>],
) {
    if params.len() < 2 {
        return;
    }
    if shares_memory(params) {
        on_parts(workers, params, parts, |_, share| all_reduce_mean(share));
    } else {
        all_reduce_mean(params);
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

    /// Replicas of `make` with the reference's weights, each stepping SGD on its share of the
    /// batch after the all-reduce, against the reference's one step on the whole batch.
    fn ddp_matches_one_step_on_the_whole_batch(make: fn() -> Net, input: &[i64], n: usize) {
        tch::manual_seed(7);
        let reference = make();
        let x = Tensor::randn(input, (Kind::Float, Device::Cpu));
        let target_shape = reference.module.forward(&x).size();
        let y = Tensor::randn(target_shape.as_slice(), (Kind::Float, Device::Cpu));
        let lr = 0.5;

        let mut replicas: Vec<Net> = (0..n).map(|_| make()).collect();
        let params: Vec<Vec<Tensor>> = replicas
            .iter()
            .map(|r| r.vs.trainable_variables())
            .collect();
        // Different initial weights until broadcast from replica 0, itself the reference's.
        replicas[0].vs.copy(&reference.vs).unwrap();
        let differ =
            |a: &[Tensor], b: &[Tensor]| a.iter().zip(b).any(|(a, b)| max_diff(a, b) > 0.0);
        assert!(differ(&params[0], &params[1]));
        let all: Vec<Vec<Tensor>> = replicas.iter().map(|r| named(&r.vs).0).collect();
        broadcast(&all, n);
        let mut opts: Vec<nn::Optimizer> = replicas
            .iter()
            .map(|r| nn::Sgd::default().build(&r.vs, lr).unwrap())
            .collect();

        let per = input[0] / n as i64;
        let shares: Vec<(Tensor, Tensor)> = (0..n as i64)
            .map(|i| (x.narrow(0, i * per, per), y.narrow(0, i * per, per)))
            .collect();
        let workers = Workers::start(replicas, &cpu_placements(n)).unwrap();
        let losses = workers.map(shares, |_, r, (x, y)| {
            let loss = r.module.forward(&x).mse_loss(&y, tch::Reduction::Mean);
            loss.backward();
            loss.detach()
        });
        all_reduce_mean(&params);
        for opt in &mut opts {
            opt.step();
        }

        let mut reference_opt = nn::Sgd::default().build(&reference.vs, lr).unwrap();
        let loss = reference
            .module
            .forward(&x)
            .mse_loss(&y, tch::Reduction::Mean);
        reference_opt.backward_step(&loss);
        let mean = Tensor::stack(&losses, 0).mean(Kind::Float);
        assert!(
            max_diff(&mean, &loss) < 1e-6,
            "the mean loss is the batch's"
        );

        let expected = reference.vs.trainable_variables();
        for (i, replica) in params.iter().enumerate() {
            for (j, p) in replica.iter().enumerate() {
                let d = max_diff(p, &expected[j]);
                assert!(
                    d < 1e-6,
                    "replica {i}, parameter {j}: {d} from the reference"
                );
                assert_eq!(max_diff(p, &params[0][j]), 0.0, "replicas {i} and 0 differ");
            }
        }
        drop(workers);
    }

    #[test]
    fn all_reduce_averages_as_ddp_two_and_three_linear_replicas() {
        ddp_matches_one_step_on_the_whole_batch(linear, &[6, 4], 2);
        ddp_matches_one_step_on_the_whole_batch(linear, &[6, 4], 3);
    }

    #[test]
    fn all_reduce_averages_as_ddp_two_and_three_conv_replicas() {
        ddp_matches_one_step_on_the_whole_batch(conv, &[6, 2, 7, 7], 2);
        ddp_matches_one_step_on_the_whole_batch(conv, &[6, 2, 7, 7], 3);
    }

    #[test]
    fn all_reduce_is_a_mean_not_a_sum() {
        let grads = [1.0f32, 4.0, 7.0];
        let params: Vec<Vec<Tensor>> = grads
            .iter()
            .map(|&g| {
                let p = Tensor::zeros([2], (Kind::Float, Device::Cpu)).set_requires_grad(true);
                (&p * g as f64).sum(Kind::Float).backward();
                vec![p]
            })
            .collect();
        all_reduce_mean(&params);
        for p in &params {
            let grad = Vec::<f32>::try_from(p[0].grad()).unwrap();
            assert!(grad.iter().all(|g| (g - 4.0).abs() < 1e-6), "{grad:?}");
        }
    }

    /// The collectives in one memory (tensor by tensor, in place) give bit for bit what the
    /// flattened buckets give.
    #[test]
    fn collectives_in_one_memory_match_the_flattened_buckets() {
        let shapes: [&[i64]; 4] = [&[3, 4], &[5], &[2, 3, 2], &[7]];
        let make = || -> Vec<Vec<Tensor>> {
            (0..3)
                .map(|_| {
                    shapes
                        .iter()
                        .map(|&shape| {
                            let p = Tensor::randn(shape, (Kind::Float, Device::Cpu))
                                .set_requires_grad(true);
                            (&p * Tensor::randn(shape, (Kind::Float, Device::Cpu)))
                                .sum(Kind::Float)
                                .backward();
                            p
                        })
                        .collect()
                })
                .collect()
        };
        // A twin with the same values and gradients.
        let twin = |set: &[Vec<Tensor>]| -> Vec<Vec<Tensor>> {
            set.iter()
                .map(|ps| {
                    ps.iter()
                        .map(|p| {
                            let q = p.detach().copy().set_requires_grad(true);
                            (&q * p.grad().copy()).sum(Kind::Float).backward();
                            q
                        })
                        .collect()
                })
                .collect()
        };
        let same = |a: &[Vec<Tensor>], b: &[Vec<Tensor>]| {
            for (ra, rb) in a.iter().zip(b) {
                for (pa, pb) in ra.iter().zip(rb) {
                    assert_eq!(max_diff(pa, pb), 0.0);
                    assert_eq!(max_diff(&pa.grad(), &pb.grad()), 0.0);
                }
            }
        };
        type Collective = fn(&[Vec<Tensor>], bool);
        let collectives: [(&str, Collective); 4] = [
            ("all-reduce", all_reduce_mean_with),
            ("broadcast", |t, c| broadcast_with(t, 3, c)),
            ("broadcast to 2", |t, c| broadcast_with(t, 2, c)),
            ("reduce-add", |t, c| reduce_add_grads_with(t, 3, c)),
        ];
        // (What each does is the other tests'; they run the one-memory way.)
        for (_, collective) in collectives {
            let direct = make();
            let coalesced = twin(&direct);
            same(&direct, &coalesced);
            collective(&direct, false);
            collective(&coalesced, true);
            same(&direct, &coalesced);
        }
    }

    #[test]
    fn partitions_are_contiguous_and_balanced_by_elements() {
        let ts = |sizes: &[i64]| -> Vec<Tensor> {
            sizes
                .iter()
                .map(|&n| Tensor::zeros([n], (Kind::Float, Device::Cpu)))
                .collect()
        };
        assert_eq!(partition(&ts(&[10, 10, 10, 10]), 2), [0..2, 2..4]);
        assert_eq!(partition(&ts(&[100, 1, 1, 1]), 2), [0..1, 1..4]);
        assert_eq!(partition(&ts(&[1, 1, 1, 100]), 2), [0..3, 3..4]);
        assert_eq!(partition(&ts(&[5, 5, 5]), 3), [0..1, 1..2, 2..3]);
        assert_eq!(partition(&ts(&[5]), 3), [0..0, 0..1, 1..1]);
        assert_eq!(partition(&ts(&[]), 2), [0..0, 0..0]);
        assert_eq!(partition(&ts(&[3, 4]), 1), vec![0..2_usize]);
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

    #[test]
    fn buckets_split_by_size_and_kind() {
        let f = |n: i64| Tensor::zeros([n], (Kind::Float, Device::Cpu));
        let d = Tensor::zeros([3], (Kind::Double, Device::Cpu));
        let big = (BUCKET_BYTES / 4) as i64;
        let ts = [f(2), f(big - 1), f(3), d, f(1)];
        assert_eq!(buckets(&ts), [0..1, 1..2, 2..3, 3..4, 4..5]);
        let one = buckets(&[f(2), f(3), f(4)]);
        assert_eq!((one.len(), one[0].clone()), (1, 0..3));
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
        }
        let make = || Pair {
            first: linear(),
            second: {
                let vs = nn::VarStore::new(Device::Cpu);
                let module = Box::new(nn::linear(vs.root() / "fc", 3, 2, Default::default()));
                Net { module, vs }
            },
        };
        let reference = make();
        let mut replicas = vec![make(), make()];
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
        reduce_add_grads(&first, 2);
        reduce_add_grads(&second, 2);

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
        broadcast(&first, 2);
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
