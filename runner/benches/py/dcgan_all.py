"""dcgan_all (runner/src/models/dcgan_all.rs + dcgan.rs): dcgan main.py with `--ngpu N`.
The 64×64 DCGAN generator (nz→ngf·8→…→3: transposed convolutions, batch norm, ReLU, tanh)
and discriminator (3→ndf→…→1: convolutions, batch norm, leaky ReLU 0.2), convolution
weights N(0, 0.02) and batch-norm weights N(1, 0.02) (main.py's `weights_init`); one step
trains D on the real (random, fixed) batch and on a fake one, then G through the updated
D; BCE on D's logits; Adam lr 2e-4, β₁ 0.5 for each. Returns errD_real + errD_fake + errG.

main.py multiplies `--batch-size` by `--ngpu` and runs its networks through
`nn.parallel.data_parallel` only when the input is on CUDA (`if input.is_cuda and
self.ngpu > 1`); on a CPU a Python user's run is the two networks on the whole batch
(`batch_size × ngpu`) in one process with torch's intra-op threads, which is what this
module does. The tch model instead splits the batch over `ngpu` simulated devices, one
replica per thread with its share of the cores (nn.DataParallel's arithmetic). An item is
an image: `batch_size × ngpu` a step, as both count. `--vcd` is accepted (the devices of
the whole-machine job; `--ngpu` defaults to their count) and otherwise unused.

Difference from main.py, as the tch model: D ends with its logit and the loss is
`binary_cross_entropy_with_logits` (main.py: Sigmoid then BCELoss; the same value, and a
sigmoid over batch × 1 numbers costs nothing).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

NC = 3


def add_arguments(p):
    p.add_argument("--vcd", default=None, help="the devices, CUDA_VISIBLE_DEVICES style")
    p.add_argument("--ngpu", type=int, default=None)
    p.add_argument("--imageSize", "--image-size", dest="imageSize", type=int, default=64)
    p.add_argument("--nz", type=int, default=100)
    p.add_argument("--ngf", type=int, default=64)
    p.add_argument("--ndf", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--beta1", type=float, default=0.5)


def ngpu(a):
    if a.ngpu is not None:
        n = a.ngpu
    elif a.vcd is None:
        n = 1
    else:
        n = len(str(a.vcd).split(","))
    if n < 1:
        raise SystemExit(f"--ngpu {n}: not a count")
    visible = None if a.vcd is None else len(str(a.vcd).split(","))
    if visible is not None and n > visible:
        raise SystemExit(f"--ngpu {n}: the copy has {visible} device(s) (vcd)")
    return n


def items(a):
    return a.batch_size * ngpu(a)


def weights_init(m):
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


def generator(nz, ngf):
    return nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False),
        nn.BatchNorm2d(ngf * 8),
        nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False),
        nn.BatchNorm2d(ngf * 4),
        nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
        nn.BatchNorm2d(ngf * 2),
        nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
        nn.BatchNorm2d(ngf),
        nn.ReLU(True),
        nn.ConvTranspose2d(ngf, NC, 4, 2, 1, bias=False),
        nn.Tanh(),
    )


def discriminator(ndf):
    """main.py's netD without its final Sigmoid (folded into the loss)."""
    return nn.Sequential(
        nn.Conv2d(NC, ndf, 4, 2, 1, bias=False),
        nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
        nn.BatchNorm2d(ndf * 2),
        nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False),
        nn.BatchNorm2d(ndf * 4),
        nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False),
        nn.BatchNorm2d(ndf * 8),
        nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False),
    )


def bce(logits, label):
    return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, label))


class DcganAll:
    def __init__(self, a):
        if a.imageSize != 64:
            raise SystemExit(f"--imageSize {a.imageSize}: the DCGAN nets are for 64×64")
        self.nz = a.nz
        self.net_g = generator(a.nz, a.ngf)
        self.net_d = discriminator(a.ndf)
        self.net_g.apply(weights_init)
        self.net_d.apply(weights_init)
        betas = (a.beta1, 0.999)
        self.opt_g = torch.optim.Adam(self.net_g.parameters(), lr=a.lr, betas=betas)
        self.opt_d = torch.optim.Adam(self.net_d.parameters(), lr=a.lr, betas=betas)
        batch = a.batch_size * ngpu(a)
        self.real = torch.rand(batch, NC, 64, 64) * 2.0 - 1.0

    def step(self):
        batch = self.real.size(0)
        # (1) D: maximise log D(x) + log(1 - D(G(z))).
        self.net_d.zero_grad()
        err_d_real = bce(self.net_d(self.real), 1.0)
        err_d_real.backward()
        noise = torch.randn(batch, self.nz, 1, 1)
        fake = self.net_g(noise)
        err_d_fake = bce(self.net_d(fake.detach()), 0.0)
        err_d_fake.backward()
        self.opt_d.step()
        # (2) G: maximise log D(G(z)).
        self.net_g.zero_grad()
        err_g = bce(self.net_d(fake), 1.0)
        err_g.backward()
        self.opt_g.step()
        return (err_d_real + err_d_fake + err_g).item()


def build(a):
    return DcganAll(a)
