"""toy_reg (runner/src/models/toy_reg.rs): Linear(4->1) fitting a random degree-4
polynomial on fresh batches drawn on the CPU; smooth-L1; SGD at the suite's script's lr 0.01
(regression/polynome main.py:78-79)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def add_arguments(p):
    p.add_argument("--lr", type=float, default=0.01)


class ToyReg:
    def __init__(self, batch_size, lr):
        self.batch_size = batch_size
        self.w_target = torch.randn(4, 1) * 5.0
        self.b_target = torch.randn(1) * 5.0
        self.fc = nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.fc.parameters(), lr=lr)

    def step(self):
        x = torch.randn(self.batch_size, 1)
        features = torch.cat([x**i for i in range(1, 5)], 1)
        target = features.matmul(self.w_target) + self.b_target
        loss = F.smooth_l1_loss(self.fc(features), target)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def build(a):
    return ToyReg(a.batch_size, a.lr)
