#!/usr/bin/env python3
"""The runner's models in PyTorch for Python, timed as the suite times them, for
runner/benches/throughput.rs to compare the tch runner with.

    python3 runner/benches/throughput.py MODEL [--threads N] JOBS-FILE ARGUMENTS...
    python3 runner/benches/throughput.py toy_reg --batch-size 256 --number 100 --repeat 30
    python3 runner/benches/throughput.py convnet --batch-size 32 --arch resnet18 --image-size 64 --number 2 --repeat 14

MODEL is a module of py/ beside this file, one per bench, each mirroring its tch model in
runner/src/models/ step for step (the same shapes, loss, optimizer, and the loss read back
every step as the suite's scripts read it). A module defines:

- `add_arguments(parser)`: the flags of the model's script that the case passes;
- `build(args)`: an object whose `step()` trains once and returns the loss (a float), and
  may have `close()`;
- optionally `items(args)`: the items one step counts (the batch the report records:
  `args.batch_size` by default) and `observations(args)`: the observations the script
  times (`args.repeat` by default).

Prints one line: `items_per_s cv observations`: train_item's avg (docs/suite.md#throughput: items/s =
batch * number / mean observation time, the first 10 observations dropped) and the
coefficient of variation of the kept observation times (population sd / mean, as
StatStream). Exits 3 when PyTorch for Python is not installed, so the caller can skip the
comparison; 1 on a non-finite loss.
"""

import argparse
import importlib
import math
import os
import sys
import time

try:
    import torch
except ImportError:
    print("PyTorch for Python is not installed", file=sys.stderr)
    sys.exit(3)

SKIP_OBS = 10


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    name = sys.argv[1]
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "py"))
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name == name:
            print(f"no Python model `{name}` in py/", file=sys.stderr)
            sys.exit(2)
        raise
    p = argparse.ArgumentParser(prog=f"throughput.py {name}")
    p.add_argument("--threads", type=int, default=0, help="intra-op threads (0: torch's default)")
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--number", type=int, required=True)
    p.add_argument("--repeat", type=int, required=True)
    p.add_argument("--seed", type=int, default=0)
    module.add_arguments(p)
    a = p.parse_args(sys.argv[2:])
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    observations = module.observations(a) if hasattr(module, "observations") else a.repeat
    if observations <= SKIP_OBS:
        p.error(f"{observations} observations: the suite drops the first {SKIP_OBS}")
    items = module.items(a) if hasattr(module, "items") else a.batch_size
    model = module.build(a)

    durations = []
    try:
        for _ in range(observations):
            start = time.perf_counter()
            for _ in range(a.number):
                loss = model.step()
                if not math.isfinite(loss):
                    print(f"non-finite loss {loss}", file=sys.stderr)
                    sys.exit(1)
            durations.append(time.perf_counter() - start)
    finally:
        if hasattr(model, "close"):
            model.close()
    kept = durations[SKIP_OBS:]
    n = len(kept)
    avg = sum(kept) / n
    sd = math.sqrt(sum((d - avg) ** 2 for d in kept) / n)
    print(f"{items * a.number / avg:.6g} {sd / avg:.6g} {n}")


if __name__ == "__main__":
    main()
