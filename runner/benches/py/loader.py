"""loader (runner/src/models/loader.rs): the ImageNet input pipeline as a Python user runs
it. `torchvision.datasets.ImageFolder(--data)` with RandomResizedCrop(224),
RandomHorizontalFlip(), ToTensor() and Normalize(ImageNet mean/sd); a
`torch.utils.data.DataLoader` with `--batch-size`, shuffle, `--workers` worker processes,
no pinned memory and persistent workers. A step takes the next batch (a new epoch's
iterator when one runs out, as an epoch loop does) and returns the batch's mean, the tch
side's "loss". An item is an image.

The folder is the tch side's: on its first run loader.rs makes synthetic JPEGs in `--data`
(ImageFolder layout, 8 classes); this module only reads it.

Deliberate differences from loader.rs (each the Python user's way, not the tch model's):
- PIL's resize antialiases when it shrinks (loader.rs: plain bilinear);
- the workers are processes (loader.rs: threads), each building whole batches, so
  `--workers` batches are in flight at once (loader.rs: the workers share one batch);
  they start once (persistent workers), on the first step, which falls in the first 10
  observations the suite drops;
- `drop_last=True`, so every step is a full batch as on the tch side (no effect when the
  image count is a multiple of the batch: 256 images, batch 32);
- `--workers 0` loads in the main process (loader.rs: one thread).
"""

import os
import tempfile

import torch
import torch.utils.data
from torchvision import datasets, transforms

MEAN = [0.485, 0.456, 0.406]
SD = [0.229, 0.224, 0.225]


def add_arguments(p):
    p.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "mlbench-loader"))
    p.add_argument("--workers", "-j", type=int, default=0)
    p.add_argument("--crop-size", type=int, default=224)


class Loader:
    def __init__(self, data, batch_size, workers, crop):
        transform = transforms.Compose(
            [
                transforms.RandomResizedCrop(crop),
                transforms.RandomHorizontalFlip(),
                transforms.ToTensor(),
                transforms.Normalize(MEAN, SD),
            ]
        )
        self.dataset = datasets.ImageFolder(data, transform)
        if len(self.dataset) < batch_size:
            raise SystemExit(f"{data}: {len(self.dataset)} images, fewer than a batch")
        self.loader = torch.utils.data.DataLoader(
            self.dataset,
            batch_size=batch_size,
            shuffle=True,
            num_workers=workers,
            pin_memory=False,
            drop_last=True,
            persistent_workers=workers > 0,
        )
        self.it = None

    def step(self):
        if self.it is None:
            self.it = iter(self.loader)
        try:
            images, _labels = next(self.it)
        except StopIteration:
            # The next epoch (persistent workers: the same processes resume).
            self.it = iter(self.loader)
            images, _labels = next(self.it)
        return images.mean().item()

    def close(self):
        # Ends the persistent workers.
        self.it = None
        del self.loader


def build(a):
    return Loader(a.data, a.batch_size, max(a.workers, 0), a.crop_size)
