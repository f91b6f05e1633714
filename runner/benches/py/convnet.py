"""convnet (runner/src/models/convnet.rs): ResNet-18 (torchvision's and tch::vision's
layout) on a fresh batch every step, made in the main thread as the tch model's loader does
with 0 workers (random bytes, ToTensor's / 255, ImageNet's normalisation; random labels);
cross-entropy; conv_simple.py's SGD(parameters, lr 0.1)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def add_arguments(p):
    p.add_argument("--arch", "-a", default="resnet18", choices=["resnet18"])
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--num-classes", type=int, default=1000)


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


MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
SD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


class ConvNet:
    """ResNet-18 on a fresh fake ImageNet batch a step; cross-entropy; SGD 0.1 (no momentum,
    no wd)."""

    def __init__(self, batch_size, image_size, classes):
        self.net = ResNet18(classes)
        self.net.train()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.shape = (batch_size, 3, image_size, image_size)
        self.classes = classes

    def step(self):
        pixels = torch.randint(0, 256, self.shape, dtype=torch.uint8)
        images = (pixels.float() / 255.0 - MEAN) / SD
        labels = torch.randint(self.classes, (self.shape[0],))
        loss = F.cross_entropy(self.net(images).float(), labels)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def build(a):
    return ConvNet(a.batch_size, a.image_size, a.num_classes)
