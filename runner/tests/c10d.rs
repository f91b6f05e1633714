//! libtorch's c10d through the shim, with one process per rank as in a real run: this test
//! binary starts itself again as each rank (`MLBENCH_C10D_ROLE` says which part to play),
//! so it has its own `main` (`harness = false`). Needs libtorch (`--features tch`).
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use mlbench_runner::c10d::{Engine, ProcessGroup, Rendezvous};
use mlbench_runner::ddp::Ddp;
use tch::{Kind, Tensor, nn, nn::Module};

const ROLE: &str = "MLBENCH_C10D_ROLE";
const BATCH: i64 = 8;

fn main() -> ExitCode {
    tch::set_num_threads(1);
    if let Ok(role) = std::env::var(ROLE) {
        return play(&role);
    }
    let tests: [(&str, fn()); 5] = [
        (
            "nccl_without_it_or_without_a_gpu_is_an_error_that_says_so",
            nccl_without_it_or_without_a_gpu_is_an_error_that_says_so,
        ),
        (
            "ddp_ranks_take_rank_0s_replica_and_step_as_one_process_on_the_whole_batch",
            ddp_ranks_take_rank_0s_replica_and_step_as_one_process_on_the_whole_batch,
        ),
        (
            "two_ranks_averaging_their_gradients_get_the_whole_batch_gradient",
            two_ranks_averaging_their_gradients_get_the_whole_batch_gradient,
        ),
        (
            "a_broadcast_gives_every_rank_the_roots_tensor",
            a_broadcast_gives_every_rank_the_roots_tensor,
        ),
        (
            "a_rank_that_dies_fails_the_others_collective_without_a_hang",
            a_rank_that_dies_fails_the_others_collective_without_a_hang,
        ),
    ];
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut failed = 0;
    for (name, test) in tests {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        match std::panic::catch_unwind(test) {
            Ok(()) => println!("test {name} ... ok"),
            Err(_) => {
                println!("test {name} ... FAILED");
                failed += 1;
            }
        }
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Starts `world` ranks playing `part`; returns each one's (exit success, stdout).
fn ranks(part: &str, world: usize) -> Vec<(bool, String)> {
    let port = mlbench_runner::rendezvous::free_port().unwrap();
    let children: Vec<_> = (0..world)
        .map(|rank| {
            Command::new(std::env::current_exe().unwrap())
                .env(ROLE, format!("{part}:{rank}:{world}:{port}"))
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            (out.status.success(), String::from_utf8(out.stdout).unwrap())
        })
        .collect()
}

fn group(rank: usize, world: usize, port: u16, timeout: Duration) -> ProcessGroup {
    ProcessGroup::gloo(&Rendezvous::on_this_host(port, rank, world, timeout)).unwrap()
}

/// A small network, initialised from `seed`, and its batch (the same for every seed).
fn model_and_batch(seed: i64) -> (nn::VarStore, nn::Sequential, Tensor, Tensor) {
    tch::manual_seed(seed);
    let vs = nn::VarStore::new(tch::Device::Cpu);
    let net = nn::seq()
        .add(nn::linear(vs.root() / "a", 5, 6, Default::default()))
        .add_fn(|x| x.tanh())
        .add(nn::linear(vs.root() / "b", 6, 3, Default::default()));
    tch::manual_seed(99);
    let x = Tensor::randn([BATCH, 5], (Kind::Float, tch::Device::Cpu));
    let y = Tensor::randn([BATCH, 3], (Kind::Float, tch::Device::Cpu));
    (vs, net, x, y)
}

/// The store's variables, sorted by name (the same order on every rank).
fn parameters(vs: &nn::VarStore) -> Vec<Tensor> {
    let mut vars = vs.variables().into_iter().collect::<Vec<_>>();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    vars.into_iter().map(|(_, v)| v).collect()
}

/// The gradients of the mean squared error over `x`, `y`, flattened in the store's order.
fn gradients(vs: &nn::VarStore, net: &nn::Sequential, x: &Tensor, y: &Tensor) -> Vec<Tensor> {
    let loss = (net.forward(x) - y).square().mean(Kind::Float);
    loss.backward();
    parameters(vs)
        .iter()
        .map(|v| v.grad().flatten(0, -1))
        .collect()
}

/// One SGD step of rate 0.1 on the store's parameters; their values after it, flattened.
fn sgd_step(vs: &nn::VarStore) -> Vec<f64> {
    let params = parameters(vs);
    tch::no_grad(|| {
        for p in &params {
            let mut p = p.shallow_clone();
            let _ = p.f_sub_(&(p.grad() * 0.1)).unwrap();
        }
    });
    let flat: Vec<Tensor> = params.iter().map(|p| p.flatten(0, -1)).collect();
    Vec::<f64>::try_from(Tensor::cat(&flat, 0).to_kind(Kind::Double)).unwrap()
}

fn play(role: &str) -> ExitCode {
    let parts: Vec<&str> = role.split(':').collect();
    let (rank, world, port) = (
        parts[1].parse::<usize>().unwrap(),
        parts[2].parse::<usize>().unwrap(),
        parts[3].parse::<u16>().unwrap(),
    );
    match parts[0] {
        "gradients" => {
            let mut pg = group(rank, world, port, Duration::from_secs(60));
            let (vs, net, x, y) = model_and_batch(7);
            let share = BATCH / world as i64;
            let (x, y) = (
                x.narrow(0, rank as i64 * share, share),
                y.narrow(0, rank as i64 * share, share),
            );
            let mut flat = Tensor::cat(&gradients(&vs, &net, &x, &y), 0);
            pg.all_reduce_sum(&mut flat).unwrap();
            let mean = flat / world as f64;
            println!("{:?}", Vec::<f64>::try_from(&mean).unwrap());
        }
        "ddp" => {
            // Each rank initialises its replica from its own seed: DDP's broadcast must
            // make them rank 0's before training.
            let pg = group(rank, world, port, Duration::from_secs(60));
            let (vs, net, x, y) = model_and_batch(7 + rank as i64);
            // Caps of 64 and 128 bytes: the 57 parameters' 4 tensors in 3 buckets.
            let mut ddp = Ddp::with_caps(pg, parameters(&vs), Vec::new(), 64, 128).unwrap();
            assert_eq!(ddp.bucket_indices().len(), 3);
            let share = BATCH / world as i64;
            let (x, y) = (
                x.narrow(0, rank as i64 * share, share),
                y.narrow(0, rank as i64 * share, share),
            );
            let _ = gradients(&vs, &net, &x, &y);
            ddp.average_gradients().unwrap();
            println!("{:?}", sgd_step(&vs));
        }
        "broadcast" => {
            let mut pg = group(rank, world, port, Duration::from_secs(60));
            let mut t = Tensor::from_slice(&[rank as f64 + 0.5, -(rank as f64)]);
            pg.broadcast(&mut t, 1).unwrap();
            println!("{:?}", Vec::<f64>::try_from(&t).unwrap());
        }
        "dies" => {
            let mut pg = group(rank, world, port, Duration::from_secs(30));
            pg.barrier().unwrap();
            if rank == 1 {
                // Dies as a killed rank would: no goodbye, no destructor.
                unsafe { libc_exit(9) };
            }
            let mut t = Tensor::ones([4], (Kind::Float, tch::Device::Cpu));
            let started = Instant::now();
            let result = pg.all_reduce_sum(&mut t);
            println!(
                "{:?} after {:.1} s",
                result.map_err(|e| e.to_string()),
                started.elapsed().as_secs_f64()
            );
        }
        other => panic!("unknown role {other}"),
    }
    ExitCode::SUCCESS
}

unsafe extern "C" {
    #[link_name = "_exit"]
    fn libc_exit(code: i32) -> !;
}

fn parse_floats(line: &str) -> Vec<f64> {
    line.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .map(|v| v.trim().parse().unwrap())
        .collect()
}

fn two_ranks_averaging_their_gradients_get_the_whole_batch_gradient() {
    let (vs, net, x, y) = model_and_batch(7);
    let whole = Vec::<f64>::try_from(Tensor::cat(&gradients(&vs, &net, &x, &y), 0)).unwrap();
    let out = ranks("gradients", 2);
    for (rank, (ok, stdout)) in out.iter().enumerate() {
        assert!(ok, "rank {rank} failed");
        let averaged = parse_floats(stdout);
        assert_eq!(averaged.len(), whole.len());
        // 5·6 + 6 + 6·3 + 3 = 57 parameters.
        assert_eq!(whole.len(), 57);
        let worst = averaged
            .iter()
            .zip(&whole)
            .map(|(a, w)| (a - w).abs())
            .fold(0.0, f64::max);
        assert!(worst <= 1e-6, "rank {rank}: off by {worst}");
        assert!(
            whole.iter().any(|g| g.abs() > 1e-3),
            "a gradient to compare"
        );
    }
}

fn ddp_ranks_take_rank_0s_replica_and_step_as_one_process_on_the_whole_batch() {
    let (vs, net, x, y) = model_and_batch(7);
    let before = sgd_step_of_nothing(&vs);
    let _ = gradients(&vs, &net, &x, &y);
    let whole = sgd_step(&vs);
    assert_eq!(whole.len(), 57);
    let moved = whole
        .iter()
        .zip(&before)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(moved > 1e-4, "the step moves the parameters ({moved})");
    for (rank, (ok, stdout)) in ranks("ddp", 2).iter().enumerate() {
        assert!(ok, "rank {rank} failed");
        let stepped = parse_floats(stdout);
        let worst = stepped
            .iter()
            .zip(&whole)
            .map(|(a, w)| (a - w).abs())
            .fold(0.0, f64::max);
        assert!(worst <= 1e-6, "rank {rank}: off by {worst}");
    }
}

/// The parameters' values, flattened, without stepping.
fn sgd_step_of_nothing(vs: &nn::VarStore) -> Vec<f64> {
    let flat: Vec<Tensor> = parameters(vs).iter().map(|p| p.flatten(0, -1)).collect();
    Vec::<f64>::try_from(Tensor::cat(&flat, 0).to_kind(Kind::Double)).unwrap()
}

fn a_broadcast_gives_every_rank_the_roots_tensor() {
    for (rank, (ok, stdout)) in ranks("broadcast", 3).iter().enumerate() {
        assert!(ok, "rank {rank} failed");
        assert_eq!(parse_floats(stdout), [1.5, -1.0], "rank {rank}");
    }
}

fn a_rank_that_dies_fails_the_others_collective_without_a_hang() {
    let started = Instant::now();
    let out = ranks("dies", 2);
    assert!(!out[1].0, "rank 1 died");
    assert!(out[0].0, "rank 0 reports, not crashes");
    assert!(
        out[0].1.starts_with("Err(\"c10d all_reduce:"),
        "{}",
        out[0].1
    );
    eprintln!("rank 0 saw: {}", out[0].1.trim());
    // Gloo sees the closed connection at once; well within the 30 s timeout.
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "{:?}",
        started.elapsed()
    );
}

/// Joining NCCL's group in a runner built without it (this CPU libtorch) says that NCCL is not
/// built; with it but without a GPU, c10d's own refusal comes back as an error, without the
/// C++ backtrace.
fn nccl_without_it_or_without_a_gpu_is_an_error_that_says_so() {
    if tch::Cuda::is_available() {
        return;
    }
    let port = mlbench_runner::rendezvous::free_port().unwrap();
    let rendezvous = Rendezvous::on_this_host(port, 0, 1, Duration::from_secs(30));
    let started = Instant::now();
    let message = match ProcessGroup::join(Engine::Nccl, &rendezvous) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("an NCCL group without a GPU"),
    };
    let expected = if Engine::nccl_built() {
        "c10d rendezvous: ProcessGroupNCCL is only supported with GPUs"
    } else {
        "c10d rendezvous: NCCL is not built into this runner"
    };
    assert!(message.starts_with(expected), "{message}");
    assert!(!message.contains("frame #"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(10));
}
