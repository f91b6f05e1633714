#!/usr/bin/env python3
"""mlbench's DDP (c10d Gloo, one process per rank) against PyTorch's, on CPU.

Both sides run micro_bench.py's step (torchvision's ResNet, one fixed random batch, targets
all zeros, cross-entropy, SGD lr 0.01 momentum 0.9) under DistributedDataParallel with Gloo,
world sizes 1 and 2, one intra-op thread per rank and each rank pinned to its own CPU: 2
warm-up steps, then STEPS timed. mlbench's side is `mlbench run` on a one-job jobs file
(`scaling`), whose entries give each world's timed seconds; PyTorch's is this script's own
ranks (torch.multiprocessing). The sides alternate, REPS times.

    python runner/benches/ddp.py --mlbench target/debug/mlbench [--network resnet18]
        [--batch 16] [--image 64] [--steps 20] [--reps 3]

Needs torch and torchvision (e.g. the parity venv, runner/parity/README.md).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time


def rank_main(rank, world, port, args, out):
    import torch
    import torch.distributed as dist
    import torchvision

    os.sched_setaffinity(0, {rank})
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    torch.manual_seed(rank)
    net = torchvision.models.__dict__[args.network]()
    net = torch.nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    inp = torch.randn(args.batch, 3, args.image, args.image)
    target = torch.zeros(args.batch, dtype=torch.long)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(inp), target)
        loss.backward()
        opt.step()

    for _ in range(2):
        step()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    seconds = time.perf_counter() - start
    if rank == 0:
        out.put(args.steps * args.batch * world / seconds)
    dist.destroy_process_group()


def pytorch_speed(world, args):
    import torch.multiprocessing as mp
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=rank_main, args=(r, world, port, args, out)) for r in range(world)]
    for p in procs:
        p.start()
    speed = out.get()
    for p in procs:
        p.join()
    return speed


def read_entries(path):
    text = open(path).read().strip()
    text = re.sub(r",\s*$", "", text)
    if not text.endswith("]"):
        text += "]"
    text = re.sub(r",\s*\]$", "]", text)
    return json.loads(text.replace("Infinity", "1e999").replace("NaN", "null"))


def mlbench_speeds(args):
    jobs = [{
        "name": "scaling",
        "cmd": "./image_classification/scaling/pytorch/run.sh",
        "args": {"--repeat": 10, "--number": args.steps, "--network": args.network,
                 "--devices": 0, "--batch-size": args.batch, "--image-size": args.image},
        "cgroup": "all",
    }]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ddp.json")
        with open(path, "w") as f:
            json.dump(jobs, f)
        subprocess.run([args.mlbench, "run", "--jobs", path, "--devices", "2",
                        "--out-dir", os.path.join(tmp, "out")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        entries = read_entries(os.path.join(tmp, "out/output0/ddp_0.json"))
    speeds = {}
    for e in entries:
        world = len(e["vcd"].split(","))
        speeds[world] = args.steps * args.batch * world / e["train"]["avg"]
    return speeds


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mlbench", required=True)
    p.add_argument("--network", default="resnet18")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--image", type=int, default=64)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    rows = []
    for rep in range(args.reps):
        ours = mlbench_speeds(args)
        theirs = {w: pytorch_speed(w, args) for w in (1, 2)}
        for w in (1, 2):
            rows.append((rep, w, ours[w], theirs[w], ours[w] / theirs[w]))
            print(f"rep {rep} world {w}: mlbench {ours[w]:.2f} items/s, "
                  f"PyTorch {theirs[w]:.2f} items/s, ratio {ours[w] / theirs[w]:.3f}", flush=True)
    for w in (1, 2):
        ratios = sorted(r[4] for r in rows if r[1] == w)
        print(f"world {w}: mlbench ÷ PyTorch {ratios[0]:.3f}–{ratios[-1]:.3f} (median {ratios[len(ratios) // 2]:.3f})")


if __name__ == "__main__":
    sys.exit(main())
