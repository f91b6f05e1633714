"""convnet_distributed (runner/src/models/convnet_distributed.rs + parallel.rs): the
convnet ResNet trained data-parallel over the devices of `--vcd`, as a Python user does it
on CPUs: torch.distributed with the gloo backend and DistributedDataParallel, one process
per device (spawned by torch.multiprocessing). Each rank holds its own fixed batch of
`--batch-size` random images and labels; cross-entropy; plain SGD (lr 0.1, no momentum, no
weight decay, as conv_distributed.py and the tch model); DDP broadcasts rank 0's weights at
construction and its BatchNorm buffers before every forward, and averages the gradients
(buckets of 25 MiB) during the backward. Rank i gets `threads // devices` intra-op
threads, one more for the first `threads % devices` ranks (devices.rs `split_cores`, as
the tch replicas' threads).

`step()` sends every rank its order through a pipe and blocks until every rank has
finished the step (optimizer step and `loss.item()` included), then returns the mean of
the ranks' losses, as the tch model. An item is an image: `batch_size × devices` a step,
the batch conv_distributed.py records.

Differences from the tch model: the tch model runs nn.DataParallel as conv_distributed.py
does (the master replicated every step, the gradients reduced onto it through c10d's Gloo,
one optimizer), which PyTorch for Python offers only on GPUs; this twin is what a Python
user runs on CPUs, DistributedDataParallel, which overlaps its gloo all-reduce with the
backward and steps every rank. The ranks are processes, not pinned to CPUs (tch: threads,
each pinned to its share of the cores); the weights are initialised by torch.nn's defaults
(tch::vision's ResNet: its own; the cost is the same).
"""

import os
import socket
import sys

import torch
import torch.multiprocessing as mp
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from convnet import ResNet18  # noqa: E402


def add_arguments(p):
    p.add_argument("--vcd", default="0", help="the devices, CUDA_VISIBLE_DEVICES style")
    p.add_argument("--arch", "-a", default="resnet18", choices=["resnet18"])
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--num-classes", type=int, default=1000)
    p.add_argument("--lr", type=float, default=0.1)


def devices(a):
    entries = [e.strip() for e in str(a.vcd).split(",")]
    if not all(e.isdigit() for e in entries):
        raise SystemExit(f"--vcd {a.vcd!r}: expected a list of device indices such as 0,1")
    return len(entries)


def items(a):
    return a.batch_size * devices(a)


def split_cores(cores, n):
    base, rest = divmod(cores, n)
    return [max(base + (i < rest), 1) for i in range(n)]


def _rank(rank, world, port, threads, seed, batch_size, image_size, classes, lr, conn):
    torch.set_num_threads(threads)
    torch.distributed.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    try:
        torch.manual_seed(seed + rank)
        net = ResNet18(classes)
        net.train()
        ddp = torch.nn.parallel.DistributedDataParallel(net)
        opt = torch.optim.SGD(ddp.parameters(), lr=lr)
        images = torch.randn(batch_size, 3, image_size, image_size)
        labels = torch.randint(classes, (batch_size,))
        conn.send("ready")
        while conn.recv() == "step":
            loss = F.cross_entropy(ddp(images).float(), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            conn.send(loss.item())
    finally:
        torch.distributed.destroy_process_group()
        conn.close()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ConvNetDistributed:
    def __init__(self, a):
        n = devices(a)
        threads = a.threads if a.threads > 0 else torch.get_num_threads()
        ctx = mp.get_context("spawn")
        port = _free_port()
        self.conns, self.procs = [], []
        for rank, t in enumerate(split_cores(threads, n)):
            parent, child = ctx.Pipe()
            proc = ctx.Process(
                target=_rank,
                args=(rank, n, port, t, a.seed, a.batch_size, a.image_size,
                      a.num_classes, a.lr, child),
                daemon=True,
            )
            proc.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(proc)
        for conn in self.conns:
            if conn.recv() != "ready":
                raise RuntimeError("a rank failed to start")

    def step(self):
        for conn in self.conns:
            conn.send("step")
        losses = [conn.recv() for conn in self.conns]
        return sum(losses) / len(losses)

    def close(self):
        for conn in self.conns:
            try:
                conn.send("stop")
            except OSError:
                pass
        for proc in self.procs:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.terminate()


def build(a):
    return ConvNetDistributed(a)
