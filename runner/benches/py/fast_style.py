"""fast_style (runner/src/models/fast_style.rs): pytorch/examples' fast neural style
(neural_style.py `train`, with its transformer_net.py, vgg.py and utils.py) as the suite's
run.sh runs it. TransformerNet (reflection-padded convs 9x9 3->32, 3x3/2 32->64, 3x3/2
64->128 with affine instance norm and ReLU; five residual blocks of 128; nearest x2 upsample
convs 128->64->32 with instance norm and ReLU; 9x9 32->3) trained through the perceptual
loss of VGG-16's features[:23] cut at relu1_2, relu2_2, relu3_3, relu4_3: content MSE on
relu2_2 x content weight + sum of the MSEs of the Gram matrices against the style image's x
style weight, both batches ImageNet-normalised; Adam lr 1e-3.

One step() is one batch of `batch_size` content images (the item the suite counts).

As fast_style.rs (and unlike the script, which cannot run here): torchvision's vgg16 is
built without weights (its own init: Kaiming normal, fan out, zero biases) in place of the
ImageNet-trained one, and frozen; the content batch is one fixed batch of random 8-bit
pixels (0..255) made once and reused every step, the style image a random one whose Gram
matrices are taken once at build (of the style image repeated batch_size times, as the
script does).

Deliberate difference from the script: normalize_batch divides by 255 out of place (the
script's `div_` would rescale the reused content batch every step); fast_style.rs does the
same.
"""

from collections import namedtuple

import torch
import torch.nn.functional as F
from torch.optim import Adam
from torchvision import models


def add_arguments(p):
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--style-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--content-weight", type=float, default=1e5)
    p.add_argument("--style-weight", type=float, default=1e10)


# transformer_net.py


class TransformerNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # Initial convolution layers
        self.conv1 = ConvLayer(3, 32, kernel_size=9, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(32, affine=True)
        self.conv2 = ConvLayer(32, 64, kernel_size=3, stride=2)
        self.in2 = torch.nn.InstanceNorm2d(64, affine=True)
        self.conv3 = ConvLayer(64, 128, kernel_size=3, stride=2)
        self.in3 = torch.nn.InstanceNorm2d(128, affine=True)
        # Residual layers
        self.res1 = ResidualBlock(128)
        self.res2 = ResidualBlock(128)
        self.res3 = ResidualBlock(128)
        self.res4 = ResidualBlock(128)
        self.res5 = ResidualBlock(128)
        # Upsampling Layers
        self.deconv1 = UpsampleConvLayer(128, 64, kernel_size=3, stride=1, upsample=2)
        self.in4 = torch.nn.InstanceNorm2d(64, affine=True)
        self.deconv2 = UpsampleConvLayer(64, 32, kernel_size=3, stride=1, upsample=2)
        self.in5 = torch.nn.InstanceNorm2d(32, affine=True)
        self.deconv3 = ConvLayer(32, 3, kernel_size=9, stride=1)
        # Non-linearities
        self.relu = torch.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.relu(self.in3(self.conv3(y)))
        y = self.res1(y)
        y = self.res2(y)
        y = self.res3(y)
        y = self.res4(y)
        y = self.res5(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.relu(self.in5(self.deconv2(y)))
        y = self.deconv3(y)
        return y


class ConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        out = self.reflection_pad(x)
        out = self.conv2d(out)
        return out


class ResidualBlock(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        out = out + residual
        return out


class UpsampleConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super().__init__()
        self.upsample = upsample
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        x_in = x
        if self.upsample:
            x_in = F.interpolate(x_in, mode="nearest", scale_factor=self.upsample)
        out = self.reflection_pad(x_in)
        out = self.conv2d(out)
        return out


# vgg.py


class Vgg16(torch.nn.Module):
    def __init__(self, requires_grad=False):
        super().__init__()
        # The script: models.vgg16(pretrained=True); no weights can be downloaded here.
        vgg_features = models.vgg16(weights=None).features
        self.slice1 = torch.nn.Sequential()
        self.slice2 = torch.nn.Sequential()
        self.slice3 = torch.nn.Sequential()
        self.slice4 = torch.nn.Sequential()
        for x in range(4):
            self.slice1.add_module(str(x), vgg_features[x])
        for x in range(4, 9):
            self.slice2.add_module(str(x), vgg_features[x])
        for x in range(9, 16):
            self.slice3.add_module(str(x), vgg_features[x])
        for x in range(16, 23):
            self.slice4.add_module(str(x), vgg_features[x])
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, X):
        h = self.slice1(X)
        h_relu1_2 = h
        h = self.slice2(h)
        h_relu2_2 = h
        h = self.slice3(h)
        h_relu3_3 = h
        h = self.slice4(h)
        h_relu4_3 = h
        vgg_outputs = namedtuple("VggOutputs", ["relu1_2", "relu2_2", "relu3_3", "relu4_3"])
        return vgg_outputs(h_relu1_2, h_relu2_2, h_relu3_3, h_relu4_3)


# utils.py


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def normalize_batch(batch):
    # normalize using imagenet mean and std
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch / 255.0  # the script: batch.div_(255.0)
    return (batch - mean) / std


# neural_style.py's train


class FastStyle:
    def __init__(self, a):
        if a.image_size % 4 != 0 or a.image_size < 8:
            raise SystemExit(f"--image-size {a.image_size}: must be a multiple of 4, at least 8")
        if a.style_size < 8:
            raise SystemExit(f"--style-size {a.style_size}: VGG-16's three pools need at least 8")
        self.transformer = TransformerNet()
        self.optimizer = Adam(self.transformer.parameters(), a.lr)
        self.mse_loss = torch.nn.MSELoss()
        self.vgg = Vgg16(requires_grad=False)
        self.content_weight = a.content_weight
        self.style_weight = a.style_weight
        # ToTensor().mul(255): 8-bit pixels as floats 0..255.
        self.x = torch.randint(256, (a.batch_size, 3, a.image_size, a.image_size)).float()
        style = torch.randint(256, (1, 3, a.style_size, a.style_size)).float()
        style = style.repeat(a.batch_size, 1, 1, 1)
        features_style = self.vgg(normalize_batch(style))
        self.gram_style = [gram_matrix(y) for y in features_style]

    def step(self):
        x = self.x
        n_batch = len(x)
        self.optimizer.zero_grad()
        y = self.transformer(x)
        y = normalize_batch(y)
        x = normalize_batch(x)
        features_y = self.vgg(y)
        features_x = self.vgg(x)
        content_loss = self.content_weight * self.mse_loss(features_y.relu2_2, features_x.relu2_2)
        style_loss = 0.0
        for ft_y, gm_s in zip(features_y, self.gram_style):
            gm_y = gram_matrix(ft_y)
            style_loss += self.mse_loss(gm_y, gm_s[:n_batch, :, :])
        style_loss *= self.style_weight
        total_loss = content_loss + style_loss
        total_loss.backward()
        self.optimizer.step()
        return total_loss.item()


def build(a):
    return FastStyle(a)
