#!/usr/bin/env python3
"""The runner's toy_reg and convnet models in PyTorch for Python, timed as the suite times
them, for runner/benches/throughput.rs to compare the tch runner with.

    python3 runner/benches/throughput.py toy_reg --batch-size 256 --number 100 --repeat 30
    python3 runner/benches/throughput.py convnet --batch-size 32 --image-size 64 --number 2 --repeat 14

Prints one line: `items_per_s cv observations`: train_item's avg (spec 5.4: items/s =
batch_size * number / mean observation time, the first 10 observations dropped) and the
coefficient of variation of the kept observation times (population sd / mean, as StatStream).
Exits 3 when PyTorch for Python is not installed, so the caller can skip the comparison.

The models mirror runner/src/models/toy_reg.rs and convnet.rs step for step: the same
shapes, loss, optimizer and per-step `loss.item()` (the suite's scripts read every loss).
"""

import argparse
import math
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    print("PyTorch for Python is not installed", file=sys.stderr)
    sys.exit(3)

SKIP_OBS = 10


class ToyReg:
    """Linear(4->1) fitting a random degree-4 polynomial on fresh batches; smooth-L1; SGD 0.1."""

    def __init__(self, batch_size):
        self.batch_size = batch_size
        self.w_target = torch.randn(4, 1) * 5.0
        self.b_target = torch.randn(1) * 5.0
        self.fc = nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.fc.parameters(), lr=0.1)

    def step(self):
        x = torch.randn(self.batch_size, 1)
        features = torch.cat([x**i for i in range(1, 5)], 1)
        target = features.matmul(self.w_target) + self.b_target
        loss = F.smooth_l1_loss(self.fc(features), target)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        shortcut = x if self.downsample is None else self.downsample(x)
        return F.relu(out + shortcut)


class ResNet18(nn.Module):
    """torchvision's resnet18 (and tch::vision::resnet::resnet18): [2, 2, 2, 2] basic blocks."""

    def __init__(self, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        layers = []
        cin = 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        x = self.layers(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class ConvNet:
    """ResNet-18 on one fake ImageNet batch; cross-entropy; SGD 0.1, momentum 0.9, wd 1e-4."""

    def __init__(self, batch_size, image_size, classes):
        self.net = ResNet18(classes)
        self.net.train()
        self.opt = torch.optim.SGD(
            self.net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4
        )
        self.images = torch.randn(batch_size, 3, image_size, image_size)
        self.labels = torch.randint(classes, (batch_size,))

    def step(self):
        loss = F.cross_entropy(self.net(self.images).float(), self.labels)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", choices=["toy_reg", "convnet"])
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--number", type=int, required=True)
    p.add_argument("--repeat", type=int, required=True)
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--threads", type=int, default=0, help="intra-op threads (0: torch's default)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    if a.repeat <= SKIP_OBS:
        p.error(f"--repeat must exceed the {SKIP_OBS} dropped observations")
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    if a.model == "toy_reg":
        model = ToyReg(a.batch_size)
    else:
        model = ConvNet(a.batch_size, a.image_size, a.classes)

    durations = []
    for _ in range(a.repeat):
        start = time.perf_counter()
        for _ in range(a.number):
            loss = model.step()
            if not math.isfinite(loss):
                print(f"non-finite loss {loss}", file=sys.stderr)
                sys.exit(1)
        durations.append(time.perf_counter() - start)
    kept = durations[SKIP_OBS:]
    n = len(kept)
    avg = sum(kept) / n
    sd = math.sqrt(sum((d - avg) ** 2 for d in kept) / n)
    print(f"{a.batch_size * a.number / avg:.6g} {sd / avg:.6g} {n}")


if __name__ == "__main__":
    main()
