"""ssd (runner/src/models/ssd.rs): MLPerf's SSD300
(object_detection/single_stage_detector/ssd train.py), in the script's own style
(`ssd300.py`, `base_model.py`, `utils.py`).

- Backbone (`base_model.ResNet34`): ResNet-34 cut after layer3, layer3's first block at
  stride 1 (`_ModifyBlock`), so 300 x 300 gives 256 x 38 x 38; torchvision's BasicBlock,
  taken from py/convnet.py (the same block).
- Five extra blocks (1x1 then 3x3 convs with ReLU; strides 2, 2, 2, 1, 1: 19, 10, 5, 3, 1),
  3x3 location and class heads with 4, 6, 6, 6, 4, 4 boxes per cell (8732 default boxes,
  `dboxes300_coco`), 81 classes.
- Loss (`Loss`): smooth-L1 on the encoded offsets of the positive boxes plus the
  cross-entropy over the positives and the 3x as many hardest negatives, per image / its
  positives, mean over the batch. SGD lr 1e-3, momentum 0.9, weight decay 5e-4.

Items are images (`batch_size` a step), observations `repeat`.

Differences from the script, all shared with the tch model: the backbone is randomly
initialised (the script loads ImageNet weights) and every layer keeps PyTorch's default
initialisation (the script's xavier_uniform for the heads; no effect on cost); one fixed
batch of synthetic images (randn) with 1-4 random ground-truth boxes each, matched to the
default boxes once at build time by the script's `Encoder.encode` (IoU > 0.5, every ground
truth keeping its best box) instead of per sample in the data loader with its crops and
flips. `--image-size` (300; at least 257) and `--label-num` (81) are not flags of the
script.
"""

import itertools
from math import sqrt

import torch
import torch.nn as nn
import torch.nn.functional as F

from convnet import BasicBlock

DEFAULTS_PER_CELL = [4, 6, 6, 6, 4, 4]
OUT_CHANNELS = [256, 512, 512, 256, 256, 256]
# dboxes300_coco
STEPS = [8, 16, 32, 64, 100, 300]
SCALES = [21, 45, 99, 153, 207, 261, 315]
ASPECT_RATIOS = [[2], [2, 3], [2, 3], [2, 3], [2], [2]]
SCALE_XY = 0.1
SCALE_WH = 0.2


def add_arguments(p):
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--image-size", type=int, default=300)
    p.add_argument("--label-num", type=int, default=81)


def items(a):
    return a.batch_size


def observations(a):
    return a.repeat


class ResNet34(nn.Module):
    """base_model.ResNet34: conv1 .. layer3 of ResNet-34, layer3 at stride 1."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(*[BasicBlock(64, 64, 1) for _ in range(3)])
        self.layer2 = nn.Sequential(BasicBlock(64, 128, 2), *[BasicBlock(128, 128, 1) for _ in range(3)])
        # _ModifyBlock(layer3, stride=(1, 1)): its first block (and downsample) at stride 1.
        self.layer3 = nn.Sequential(BasicBlock(128, 256, 1), *[BasicBlock(256, 256, 1) for _ in range(5)])

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        return self.layer3(self.layer2(self.layer1(x)))


class SSD300(nn.Module):
    def __init__(self, label_num):
        super().__init__()
        self.label_num = label_num
        self.model = ResNet34()
        mids = [256, 256, 128, 128, 128]
        blocks = []
        for k, mid in enumerate(mids):
            stride, padding = (2, 1) if k < 3 else (1, 0)
            blocks.append(nn.Sequential(
                nn.Conv2d(OUT_CHANNELS[k], mid, kernel_size=1),
                nn.ReLU(inplace=True),
                nn.Conv2d(mid, OUT_CHANNELS[k + 1], kernel_size=3, padding=padding, stride=stride),
                nn.ReLU(inplace=True),
            ))
        self.additional_blocks = nn.ModuleList(blocks)
        self.loc = nn.ModuleList(
            nn.Conv2d(oc, nd * 4, kernel_size=3, padding=1)
            for nd, oc in zip(DEFAULTS_PER_CELL, OUT_CHANNELS))
        self.conf = nn.ModuleList(
            nn.Conv2d(oc, nd * label_num, kernel_size=3, padding=1)
            for nd, oc in zip(DEFAULTS_PER_CELL, OUT_CHANNELS))

    def feature_maps(self, data):
        layers = self.model(data)
        src = [layers]
        for block in self.additional_blocks:
            layers = block(layers)
            src.append(layers)
        return src

    def forward(self, data):
        src = self.feature_maps(data)
        locs, confs = [], []
        for s, l, c in zip(src, self.loc, self.conf):
            locs.append(l(s).view(s.size(0), 4, -1))
            confs.append(c(s).view(s.size(0), self.label_num, -1))
        return torch.cat(locs, 2).contiguous(), torch.cat(confs, 2).contiguous()


def default_boxes(feat_size, fig_size=300):
    """utils.DefaultBoxes (cx, cy, w, h), clamped to [0, 1]: [n, 4]."""
    fk = fig_size / torch.tensor(STEPS, dtype=torch.float64)
    boxes = []
    for idx, sfeat in enumerate(feat_size):
        sk1 = SCALES[idx] / fig_size
        sk2 = SCALES[idx + 1] / fig_size
        sk3 = sqrt(sk1 * sk2)
        all_sizes = [(sk1, sk1), (sk3, sk3)]
        for alpha in ASPECT_RATIOS[idx]:
            w, h = sk1 * sqrt(alpha), sk1 / sqrt(alpha)
            all_sizes.append((w, h))
            all_sizes.append((h, w))
        for w, h in all_sizes:
            for i, j in itertools.product(range(sfeat), repeat=2):
                cx, cy = (j + 0.5) / fk[idx].item(), (i + 0.5) / fk[idx].item()
                boxes.append((cx, cy, w, h))
    return torch.tensor(boxes, dtype=torch.float32).clamp_(min=0, max=1)


def calc_iou_tensor(box1, box2):
    """utils.calc_iou_tensor: box1 [N, 4], box2 [M, 4] (ltrb) -> [N, M]."""
    n, m = box1.size(0), box2.size(0)
    be1 = box1.unsqueeze(1).expand(-1, m, -1)
    be2 = box2.unsqueeze(0).expand(n, -1, -1)
    lt = torch.max(be1[:, :, :2], be2[:, :, :2])
    rb = torch.min(be1[:, :, 2:], be2[:, :, 2:])
    delta = (rb - lt).clamp(min=0)
    intersect = delta[:, :, 0] * delta[:, :, 1]
    d1 = be1[:, :, 2:] - be1[:, :, :2]
    d2 = be2[:, :, 2:] - be2[:, :, :2]
    return intersect / (d1[:, :, 0] * d1[:, :, 1] + d2[:, :, 0] * d2[:, :, 1] - intersect)


def encode(dboxes_xywh, bboxes_in, labels_in, criteria=0.5):
    """utils.Encoder.encode: boxes (cx, cy, w, h) [n, 4] and labels [n] (0: background)."""
    dboxes = torch.cat((dboxes_xywh[:, :2] - dboxes_xywh[:, 2:] / 2,
                        dboxes_xywh[:, :2] + dboxes_xywh[:, 2:] / 2), 1)
    ious = calc_iou_tensor(bboxes_in, dboxes)
    best_dbox_ious, best_dbox_idx = ious.max(dim=0)
    best_bbox_ious, best_bbox_idx = ious.max(dim=1)
    best_dbox_ious.index_fill_(0, best_bbox_idx, 2.0)
    idx = torch.arange(0, best_bbox_idx.size(0), dtype=torch.int64)
    best_dbox_idx[best_bbox_idx[idx]] = idx
    masks = best_dbox_ious > criteria
    labels_out = torch.zeros(dboxes.size(0), dtype=torch.long)
    labels_out[masks] = labels_in[best_dbox_idx[masks]]
    bboxes_out = dboxes.clone()
    bboxes_out[masks, :] = bboxes_in[best_dbox_idx[masks], :]
    xy = 0.5 * (bboxes_out[:, :2] + bboxes_out[:, 2:])
    wh = bboxes_out[:, 2:] - bboxes_out[:, :2]
    # Unmatched: the default box's own (cx, cy, w, h), exactly (as the tch model), rather
    # than its round trip through ltrb.
    bboxes_out = torch.where(masks.unsqueeze(1), torch.cat((xy, wh), 1), dboxes_xywh)
    return bboxes_out, labels_out


class Loss(nn.Module):
    """ssd300's Loss."""

    def __init__(self, dboxes_xywh):
        super().__init__()
        self.scale_xy = 1.0 / SCALE_XY
        self.scale_wh = 1.0 / SCALE_WH
        self.sl1_loss = nn.SmoothL1Loss(reduction="none")
        self.register_buffer("dboxes", dboxes_xywh.transpose(0, 1).unsqueeze(dim=0))
        self.con_loss = nn.CrossEntropyLoss(reduction="none")

    def _loc_vec(self, loc):
        gxy = self.scale_xy * (loc[:, :2, :] - self.dboxes[:, :2, :]) / self.dboxes[:, 2:, :]
        gwh = self.scale_wh * (loc[:, 2:, :] / self.dboxes[:, 2:, :]).log()
        return torch.cat((gxy, gwh), dim=1).contiguous()

    def forward(self, ploc, plabel, gloc, glabel):
        mask = glabel > 0
        pos_num = mask.sum(dim=1)
        vec_gd = self._loc_vec(gloc)
        sl1 = self.sl1_loss(ploc, vec_gd).sum(dim=1)
        sl1 = (mask.float() * sl1).sum(dim=1)
        # hard negative mining
        con = self.con_loss(plabel, glabel)
        con_neg = con.clone()
        con_neg[mask] = 0
        _, con_idx = con_neg.sort(dim=1, descending=True)
        _, con_rank = con_idx.sort(dim=1)
        neg_num = torch.clamp(3 * pos_num, max=mask.size(1)).unsqueeze(-1)
        neg_mask = con_rank < neg_num
        closs = (con * (mask.float() + neg_mask.float())).sum(dim=1)
        total_loss = sl1 + closs
        num_mask = (pos_num > 0).float()
        pos_num = pos_num.float().clamp(min=1e-6)
        return (total_loss * num_mask / pos_num).mean(dim=0)


class SSD:
    def __init__(self, a):
        if a.image_size < 257:
            raise SystemExit(f"--image-size {a.image_size}: SSD300's last feature map needs at least 257")
        if a.label_num < 2:
            raise SystemExit("--label-num: the background and at least one class")
        self.net = SSD300(a.label_num)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=a.lr, momentum=0.9, weight_decay=5e-4)
        self.images = torch.randn(a.batch_size, 3, a.image_size, a.image_size)
        # The feature sizes this input gives (38, 19, 10, 5, 3, 1 at 300), for the boxes.
        self.net.eval()
        with torch.no_grad():
            probe = torch.zeros(1, 3, a.image_size, a.image_size)
            sizes = [m.size(2) for m in self.net.feature_maps(probe)]
        self.net.train()
        dboxes = default_boxes(sizes)
        glocs, glabels = [], []
        for _ in range(a.batch_size):
            n = torch.randint(1, 5, (1,)).item()
            lt = torch.rand(n, 2) * 0.6
            wh = torch.rand(n, 2) * 0.35 + 0.05
            gt = torch.cat((lt, lt + wh), 1)
            gt_labels = torch.randint(1, a.label_num, (n,))
            bbox, label = encode(dboxes, gt, gt_labels)
            glocs.append(bbox)
            glabels.append(label)
        # train.py: `trans_bbox = bbox.transpose(1, 2).contiguous()`.
        self.gloc = torch.stack(glocs).transpose(1, 2).contiguous()
        self.glabel = torch.stack(glabels)
        self.loss_func = Loss(dboxes)

    def step(self):
        ploc, plabel = self.net(self.images)
        ploc, plabel = ploc.float(), plabel.float()
        loss = self.loss_func(ploc, plabel, self.gloc, self.glabel)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def build(a):
    return SSD(a)
