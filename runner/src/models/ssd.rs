//! ssd (object_detection/single_stage_detector train.py): MLPerf's SSD300. Backbone:
//! ResNet-34 cut after layer3 with layer3's first block at stride 1 (`base_model.py`), so a
//! 300 × 300 image gives 256 × 38 × 38; five extra blocks (1×1 then 3×3, strides 2, 2, 2,
//! 1, 1: 19, 10, 5, 3, 1); 3×3 location and class heads with 4, 6, 6, 6, 4, 4 boxes per
//! cell (8732 default boxes, `dboxes300_coco`), 81 classes. Loss (`Loss`): smooth-L1 on
//! the encoded offsets of the positive boxes plus cross-entropy over the positives and the
//! 3 × as many hardest negatives, per image ÷ its positives, mean over the batch. SGD lr
//! 1e-3, momentum 0.9, weight decay 5e-4. Items: images (`batch_size` a step).
//!
//! Data as the script's (train.py:151-165,209-213, utils.py:280-613): a fresh batch every
//! step, made on the host by a loader of 4 worker threads (the script's `num_workers=4`,
//! which ignores `--workers`) whose iterator each observation starts inside its timer and
//! stops at its end, and copied to the device. The batches are `--data`'s COCO folder
//! (`$DATA_DIRECTORY/coco`) as the script's `COCODetection(train2017)` reads it, shuffled
//! (an epoch's last batch short, as a `DataLoader` without `drop_last`); each image
//! through `SSDTransformer(val=False)` (`mlbench_datasets::images::ssd`): `SSDCropping`'s
//! random IoU-constrained crop, the random horizontal flip of image and boxes, Resize to
//! `image_size` × `image_size` (Pillow's bilinear), ColorJitter(0.125, 0.5, 0.5, 0.05) as
//! torchvision 0.4 on Pillow 6.2, ToTensor, ImageNet's Normalize; then, in the workers as
//! the script does, its boxes matched to the default boxes by `Encoder.encode` (IoU > 0.5,
//! every ground truth keeping its best box). The classes are the annotation file's
//! (`SSD300(train_coco.labelnum)`: 81 for COCO). The validation annotations are opened
//! too, as train.py opens them, and not used. With `--synthetic-data`: ImageNet-normalised
//! random bytes, each image with 1–4 random ground-truth boxes, `label_num` classes, and
//! the entries say `synthetic_data`. The transforms' random draws come from a stream keyed
//! by (seed, batch, slot), not Python's generator: the same kind of draws, not the same.
//! Differences: the backbone is randomly initialised (the script loads ImageNet weights).
//! `image_size` (300; at least 257, the smallest whose last feature map is 1 × 1) and
//! `label_num` (81; with files, if given, it must be the annotations') are not flags of
//! the script.
//! Args: `batch_size` (fast.json: 128), `lr` (1e-3), `image_size`, `label_num`.
//!
//! As the script (train.py:209-213,256): cuDNN's benchmark mode on, and the input batch a
//! leaf that requires its gradient (`Variable(img, requires_grad=True)`), so every backward
//! also computes the gradient of the images. Its loop (`if nbatch > number: break`) trains
//! `number + 1` batches while counting `number`: its bug; mlbench trains `number`.

use super::convnet::{IMAGENET_MEAN, IMAGENET_SD};
use super::host_loader::{EpochLoader, Maker, Order, Recipe, make_batch, on_device, stream};
use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use mlbench_datasets::DataError;
use mlbench_datasets::images::Sampling;
use mlbench_datasets::images::coco::{Detection, Split};
use mlbench_datasets::images::ssd::SsdTrain;
use tch::nn::{self, ModuleT, OptimizerConfig};
use tch::{Device, Kind, Tensor};

pub(super) const SOURCE: &str = concat!(
    include_str!("ssd.rs"),
    include_str!("loader.rs"),
    include_str!("host_loader.rs"),
    include_str!("convnet.rs"),
    include_str!("image_data.rs"),
    include_str!("half.rs")
);

/// train.py:165: `num_workers=4`.
const WORKERS: usize = 4;

const DEFAULTS_PER_CELL: [i64; 6] = [4, 6, 6, 6, 4, 4];
const CHANNELS: [i64; 6] = [256, 512, 512, 256, 256, 256];
/// `dboxes300_coco`: 300 ÷ steps, the box scales (pixels of 300), the aspect ratios.
const FK: [f64; 6] = [
    300.0 / 8.0,
    300.0 / 16.0,
    300.0 / 32.0,
    300.0 / 64.0,
    3.0,
    1.0,
];
const SCALES: [f64; 7] = [21.0, 45.0, 99.0, 153.0, 207.0, 261.0, 315.0];
const SCALE_XY: f64 = 0.1;
const SCALE_WH: f64 = 0.2;

fn conv(p: nn::Path, i: i64, o: i64, k: i64, stride: i64, padding: i64, bias: bool) -> nn::Conv2D {
    let cfg = nn::ConvConfig {
        stride,
        padding,
        bias,
        ..Default::default()
    };
    nn::conv2d(p, i, o, k, cfg)
}

/// torchvision's BasicBlock.
fn basic_block(p: nn::Path, i: i64, o: i64, stride: i64) -> impl ModuleT + use<> {
    let c1 = conv(&p / "conv1", i, o, 3, stride, 1, false);
    let b1 = nn::batch_norm2d(&p / "bn1", o, Default::default());
    let c2 = conv(&p / "conv2", o, o, 3, 1, 1, false);
    let b2 = nn::batch_norm2d(&p / "bn2", o, Default::default());
    let down = (stride != 1 || i != o).then(|| {
        nn::seq_t()
            .add(conv(&p / "downsample" / "0", i, o, 1, stride, 0, false))
            .add(nn::batch_norm2d(
                &p / "downsample" / "1",
                o,
                Default::default(),
            ))
    });
    nn::func_t(move |x, train| {
        let y = x
            .apply(&c1)
            .apply_t(&b1, train)
            .relu()
            .apply(&c2)
            .apply_t(&b2, train);
        let skip = match &down {
            Some(d) => x.apply_t(d, train),
            None => x.shallow_clone(),
        };
        (y + skip).relu()
    })
}

/// ResNet-34 through layer3, layer3's first block at stride 1.
fn backbone(p: &nn::Path) -> nn::SequentialT {
    let mut s = nn::seq_t()
        .add(conv(p / "conv1", 3, 64, 7, 2, 3, false))
        .add(nn::batch_norm2d(p / "bn1", 64, Default::default()))
        .add_fn(|x| x.relu().max_pool2d([3, 3], [2, 2], [1, 1], [1, 1], false));
    for (layer, (blocks, i, o, stride)) in [(3, 64, 64, 1), (4, 64, 128, 2), (6, 128, 256, 1)]
        .into_iter()
        .enumerate()
    {
        for b in 0..blocks {
            let (i, stride) = if b == 0 { (i, stride) } else { (o, 1) };
            s = s.add(basic_block(
                p / format!("layer{}", layer + 1) / b,
                i,
                o,
                stride,
            ));
        }
    }
    s
}

/// The default boxes (cx, cy, w, h) of feature maps of `sizes`, in the script's order
/// (per map: per box shape, per cell row by row), clamped to [0, 1]: [n, 4].
fn default_boxes(sizes: &[i64]) -> Vec<[f64; 4]> {
    let mut out = Vec::new();
    for (k, &size) in sizes.iter().enumerate() {
        let sk1 = SCALES[k] / 300.0;
        let sk2 = SCALES[k + 1] / 300.0;
        let sk3 = (sk1 * sk2).sqrt();
        let mut shapes = vec![(sk1, sk1), (sk3, sk3)];
        let ratios: &[f64] = if matches!(k, 0 | 4 | 5) {
            &[2.0]
        } else {
            &[2.0, 3.0]
        };
        for alpha in ratios {
            let (w, h) = (sk1 * alpha.sqrt(), sk1 / alpha.sqrt());
            shapes.push((w, h));
            shapes.push((h, w));
        }
        for (w, h) in shapes {
            for i in 0..size {
                for j in 0..size {
                    let cx = (j as f64 + 0.5) / FK[k];
                    let cy = (i as f64 + 0.5) / FK[k];
                    out.push([cx, cy, w, h].map(|v| v.clamp(0.0, 1.0)));
                }
            }
        }
    }
    out
}

/// IoU of every box of `a` [N, 4] with every box of `b` [M, 4], both left-top-right-bottom.
fn iou(a: &Tensor, b: &Tensor) -> Tensor {
    let a = a.unsqueeze(1);
    let b = b.unsqueeze(0);
    let lt = a.narrow(2, 0, 2).maximum(&b.narrow(2, 0, 2));
    let rb = a.narrow(2, 2, 2).minimum(&b.narrow(2, 2, 2));
    let wh = (rb - lt).clamp_min(0.0);
    let inter = wh.select(2, 0) * wh.select(2, 1);
    let area = |t: &Tensor| {
        let d = t.narrow(2, 2, 2) - t.narrow(2, 0, 2);
        d.select(2, 0) * d.select(2, 1)
    };
    &inter / (area(&a) + area(&b) - &inter)
}

fn ltrb(xywh: &Tensor) -> Tensor {
    let c = xywh.narrow(1, 0, 2);
    let half = xywh.narrow(1, 2, 2) / 2.0;
    Tensor::cat(&[&c - &half, &c + &half], 1)
}

/// `Encoder.encode`: each default box takes the ground truth it overlaps most when the
/// IoU passes 0.5, and every ground truth keeps its best default box; returns the boxes
/// (cx, cy, w, h; the default box itself where unmatched) [n, 4] and labels [n] (0:
/// background).
fn encode(dboxes: &Tensor, boxes: &Tensor, labels: &Tensor) -> (Tensor, Tensor) {
    let ious = iou(boxes, &ltrb(dboxes));
    let (mut best_ious, mut best_idx) = ious.max_dim(0, false);
    let (_, best_dbox) = ious.max_dim(1, false);
    let _ = best_ious.index_fill_(0, &best_dbox, 2.0);
    let n = best_dbox.size()[0];
    let _ = best_idx.index_put_(
        &[Some(best_dbox.shallow_clone())],
        &Tensor::arange(n, (Kind::Int64, best_idx.device())),
        false,
    );
    let mask = best_ious.gt(0.5);
    let matched = labels.index_select(0, &best_idx);
    let labels_out = matched.where_self(&mask, &matched.zeros_like());
    let gt_xywh = {
        let b = boxes.index_select(0, &best_idx);
        let lt = b.narrow(1, 0, 2);
        let rb = b.narrow(1, 2, 2);
        Tensor::cat(&[(&lt + &rb) / 2.0, &rb - &lt], 1)
    };
    let boxes_out = gt_xywh.where_self(&mask.unsqueeze(1), dboxes);
    (boxes_out, labels_out)
}

/// `Loss.forward`: `ploc` [B, 4, n], `plabel` [B, C, n], `gloc` [B, 4, n] (cx, cy, w, h),
/// `glabel` [B, n], `dboxes` [1, 4, n].
fn multibox_loss(
    ploc: &Tensor,
    plabel: &Tensor,
    gloc: &Tensor,
    glabel: &Tensor,
    dboxes: &Tensor,
) -> Tensor {
    let mask = glabel.gt(0);
    let pos_num = mask.sum_dim_intlist(1, false, Kind::Int64);
    let dxy = dboxes.narrow(1, 0, 2);
    let dwh = dboxes.narrow(1, 2, 2);
    let gxy = (gloc.narrow(1, 0, 2) - &dxy) / &dwh / SCALE_XY;
    let gwh = (gloc.narrow(1, 2, 2) / &dwh).log() / SCALE_WH;
    let vec_gd = Tensor::cat(&[gxy, gwh], 1);
    let sl1 = ploc
        .smooth_l1_loss(&vec_gd, tch::Reduction::None, 1.0)
        .sum_dim_intlist(1, false, Kind::Float);
    let maskf = mask.to_kind(Kind::Float);
    let sl1 = (&maskf * sl1).sum_dim_intlist(1, false, Kind::Float);
    // Cross-entropy per box: −log softmax over the classes at the true class.
    let con = -plabel
        .log_softmax(1, Kind::Float)
        .gather(1, &glabel.unsqueeze(1), false)
        .squeeze_dim(1);
    let neg_mask = hard_negatives(&con, &mask, &pos_num);
    let closs =
        (&con * (&maskf + neg_mask.to_kind(Kind::Float))).sum_dim_intlist(1, false, Kind::Float);
    let total = sl1 + closs;
    let num_mask = pos_num.gt(0).to_kind(Kind::Float);
    let pos = pos_num.to_kind(Kind::Float).clamp_min(1e-6);
    (total * num_mask / pos).mean(Kind::Float)
}

/// The 3 × positives hardest negatives of each row (largest loss among the non-positive
/// boxes), at most all of them.
fn hard_negatives(con: &Tensor, positive: &Tensor, pos_num: &Tensor) -> Tensor {
    let con_neg = con.detach().masked_fill(positive, 0.0);
    let (_, idx) = con_neg.sort(1, true);
    let (_, rank) = idx.sort(1, false);
    let n = positive.size()[1];
    let neg_num = (pos_num * 3).clamp_max(n).unsqueeze(-1);
    rank.lt_tensor(&neg_num)
}

/// Where the training images and boxes come from.
enum Source {
    /// `--synthetic-data`: noise images, 1–4 random boxes each, labels below `labels`.
    Memory {
        /// The images: 3 channels of `size` × `size` bytes, ImageNet-normalised.
        images: Recipe,
        /// Classes, the background included.
        labels: i64,
    },
    /// `COCODetection(train2017)` through `SSDTransformer(val=False)` up to the encoding,
    /// shuffled by the `DataLoader` (`mlbench_datasets::images::ssd`).
    Files {
        set: Detection,
        sampling: Sampling,
        transform: SsdTrain,
    },
}

/// The training samples: `COCODetection` through `SSDTransformer`, batched.
struct Samples {
    source: Source,
    /// The default boxes (cx, cy, w, h), n × 4 values.
    dboxes: Vec<f32>,
}

/// One batch on the host: images `[B, 3, size, size]`, encoded boxes `[B, 4, n]` (cx, cy,
/// w, h), labels `[B, n]` (B: the images in it; an epoch's last batch of files may be
/// short).
struct Sample {
    images: Vec<f32>,
    gloc: Vec<f32>,
    glabel: Vec<i64>,
    count: usize,
}

/// 1 to 4 random ground truths (left, top, right, bottom in [0, 1]; labels 1 … C − 1).
fn random_targets(labels: i64, rng: &mut super::loader::Rng) -> (Vec<f32>, Vec<i64>) {
    // Uniform in [0, 1).
    let mut uniform = || (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    let n = 1 + (uniform() * 4.0) as i64;
    let mut boxes = Vec::with_capacity(4 * n as usize);
    for _ in 0..n {
        let (left, top) = (uniform() * 0.6, uniform() * 0.6);
        let (w, h) = (uniform() * 0.35 + 0.05, uniform() * 0.35 + 0.05);
        boxes.extend([left, top, left + w, top + h].map(|v| v as f32));
    }
    let classes = (0..n)
        .map(|_| 1 + (uniform() * (labels - 1) as f64) as i64)
        .collect();
    (boxes, classes)
}

/// Ground truths (left, top, right, bottom, flat; at least one) encoded against the
/// default boxes `dboxes` ([n, 4]), appended to the batch's (boxes [4, n], labels [n]).
fn encode_into(dboxes: &Tensor, boxes: &[f32], labels: &[i64], sample: &mut Sample) {
    let gt = Tensor::from_slice(boxes).view([-1, 4]);
    let (l, c) = encode(dboxes, &gt, &Tensor::from_slice(labels));
    let l = l.transpose(0, 1).contiguous().view([-1]);
    sample.gloc.extend(Vec::<f32>::try_from(l).expect("floats"));
    sample
        .glabel
        .extend(Vec::<i64>::try_from(c).expect("labels"));
}

impl Maker for Samples {
    /// A file that cannot be read or decoded is the step's error.
    type Batch = Result<Sample, DataError>;

    fn make(&self, seed: u64, index: u64) -> Self::Batch {
        let dboxes = Tensor::from_slice(&self.dboxes).view([-1, 4]);
        match &self.source {
            Source::Memory {
                images: recipe,
                labels,
            } => {
                let mut sample = Sample {
                    images: make_batch(recipe, seed, index).images,
                    gloc: Vec::new(),
                    glabel: Vec::new(),
                    count: recipe.count,
                };
                // The boxes' own stream: another seed's.
                let mut rng = stream(!seed, index);
                for _ in 0..recipe.count {
                    let (boxes, classes) = random_targets(*labels, &mut rng);
                    encode_into(&dboxes, &boxes, &classes, &mut sample);
                }
                Ok(sample)
            }
            Source::Files {
                set,
                sampling,
                transform,
            } => {
                let batch = sampling.detection_batch(set, transform, index)?;
                let mut sample = Sample {
                    images: batch.images,
                    gloc: Vec::new(),
                    glabel: Vec::new(),
                    count: batch.shape[0],
                };
                for (boxes, labels) in batch.boxes.iter().zip(&batch.labels) {
                    encode_into(&dboxes, boxes.as_flattened(), labels, &mut sample);
                }
                Ok(sample)
            }
        }
    }
}

struct Ssd {
    backbone: nn::SequentialT,
    extras: Vec<nn::SequentialT>,
    loc: Vec<nn::Conv2D>,
    conf: Vec<nn::Conv2D>,
    labels: i64,
    opt: nn::Optimizer,
    /// `train_dataloader` (made once the default boxes are known).
    loader: Option<EpochLoader<Samples>>,
    /// The batch's images' shape.
    shape: [i64; 4],
    name: &'static str,
    kind: Kind,
    device: Device,
    /// The default boxes, [1, 4, n] on the device.
    dboxes: Tensor,
    _vs: nn::VarStore,
}

impl Ssd {
    fn forward(&self, x: &Tensor, train: bool) -> (Tensor, Tensor) {
        let mut maps = vec![x.apply_t(&self.backbone, train)];
        for block in &self.extras {
            let next = maps[maps.len() - 1].apply_t(block, train);
            maps.push(next);
        }
        let b = x.size()[0];
        let mut locs = Vec::new();
        let mut confs = Vec::new();
        for ((m, l), c) in maps.iter().zip(&self.loc).zip(&self.conf) {
            locs.push(m.apply(l).view([b, 4, -1]));
            confs.push(m.apply(c).view([b, self.labels, -1]));
        }
        (Tensor::cat(&locs, 2), Tensor::cat(&confs, 2))
    }
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    Ok(Box::new(new_model(ctx, args)?))
}

fn new_model(ctx: &Ctx, args: &BenchArgs) -> Result<Ssd, BenchError> {
    if ctx.is_cuda() {
        // train.py:256: `torch.backends.cudnn.benchmark = True`.
        tch::Cuda::cudnn_set_benchmark(true);
    }
    let batch = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let size = ctx.size(args, &["image_size"], 300)?;
    let lr = ctx.float(args, &["lr"], 1e-3)?;
    if size < 257 {
        return Err(ctx.arg_error(format!(
            "--image-size {size}: SSD300's last feature map needs at least 257"
        )));
    }
    let data = open_data(ctx, args, size as usize)?;
    let labels = classes(ctx, args, data.as_ref().map(|(set, _)| set))?;
    let vs = nn::VarStore::new(ctx.device);
    let root = vs.root();
    let backbone = backbone(&(&root / "model"));
    let mids = [256, 256, 128, 128, 128];
    let extras: Vec<nn::SequentialT> = (0..5)
        .map(|k| {
            let p = &root / "additional_blocks" / k;
            let (stride, pad) = if k < 3 { (2, 1) } else { (1, 0) };
            nn::seq_t()
                .add(conv(&p / "0", CHANNELS[k], mids[k], 1, 1, 0, true))
                .add_fn(|x| x.relu())
                .add(conv(
                    &p / "2",
                    mids[k],
                    CHANNELS[k + 1],
                    3,
                    stride,
                    pad,
                    true,
                ))
                .add_fn(|x| x.relu())
        })
        .collect();
    let loc = (0..6)
        .map(|k| {
            conv(
                &root / "loc" / k,
                CHANNELS[k],
                DEFAULTS_PER_CELL[k] * 4,
                3,
                1,
                1,
                true,
            )
        })
        .collect();
    let conf = (0..6)
        .map(|k| {
            conv(
                &root / "conf" / k,
                CHANNELS[k],
                DEFAULTS_PER_CELL[k] * labels,
                3,
                1,
                1,
                true,
            )
        })
        .collect();
    let opt = nn::Sgd {
        momentum: 0.9,
        wd: 5e-4,
        ..Default::default()
    }
    .build(&vs, lr)
    .map_err(|e| ctx.failed(e.to_string()))?;
    let mut model = Ssd {
        backbone,
        extras,
        loc,
        conf,
        labels,
        opt,
        loader: None,
        shape: [batch, 3, size, size],
        name: ctx.name,
        kind: ctx.kind,
        device: ctx.device,
        dboxes: Tensor::zeros([1], ctx.opts()),
        _vs: vs,
    };
    model.set_loader(ctx, args.seed as u64, data);
    Ok(model)
}

/// The classes, the background included: `SSD300(train_coco.labelnum)`, the annotation
/// file's, where the bench reads files (a `label_num` given must be that); `label_num`
/// (81) with `--synthetic-data`.
fn classes(ctx: &Ctx, args: &BenchArgs, set: Option<&Detection>) -> Result<i64, BenchError> {
    let labels = ctx.size(args, &["label_num"], 81)?;
    if labels < 2 {
        return Err(ctx.arg_error("--label-num: the background and at least one class"));
    }
    match set {
        Some(set) if args.extra.contains_key("label_num") && labels != set.label_count as i64 => {
            Err(ctx.arg_error(format!(
                "--label-num {labels}: the annotations have {} classes with the background",
                set.label_count
            )))
        }
        Some(set) => Ok(set.label_count as i64),
        None => Ok(labels),
    }
}

/// `--data`'s COCO folder as train.py opens it: `COCODetection` of `train2017` (the
/// images it trains on, through the training transform at `size`) and the validation
/// annotations it also reads (`COCO(annotation_file=val_annotate)`); `None` with
/// `--synthetic-data`. Without them, an error naming the path and what makes them.
fn open_data(
    ctx: &Ctx,
    args: &BenchArgs,
    size: usize,
) -> Result<Option<(Detection, SsdTrain)>, BenchError> {
    if ctx.synthetic {
        return Ok(None);
    }
    let missing = |why: String| ctx.arg_error(format!("--data: {why}; {}", ctx.prepare_hint()));
    let Some(folder) = ctx.string(args, &["data"])?.filter(|p| !p.is_empty()) else {
        return Err(missing("the job names no COCO folder".to_owned()));
    };
    let folder = std::path::Path::new(&folder);
    let open = |split| Detection::open_folder(folder, split).map_err(|e| missing(e.to_string()));
    open(Split::Val)?;
    let set = open(Split::Train)?;
    if set.items.is_empty() {
        return Err(missing(format!(
            "{}: no training image has a box",
            folder.display()
        )));
    }
    let transform = SsdTrain {
        size,
        ..SsdTrain::SSD300
    };
    Ok(Some((set, transform)))
}

impl Ssd {
    /// The default boxes of the feature maps an image of the batch's size gives (38, 19,
    /// 10, 5, 3, 1 at 300), and the loader of the samples encoded against them.
    fn set_loader(&mut self, ctx: &Ctx, seed: u64, data: Option<(Detection, SsdTrain)>) {
        let [batch, _, size, _] = self.shape;
        let sizes: Vec<i64> = tch::no_grad(|| {
            let probe = Tensor::zeros([1, 3, size, size], ctx.opts());
            let mut maps = vec![probe.apply_t(&self.backbone, false)];
            for block in &self.extras {
                let next = maps[maps.len() - 1].apply_t(block, false);
                maps.push(next);
            }
            maps.iter().map(|m| m.size()[2]).collect()
        });
        let boxes = default_boxes(&sizes);
        let flat: Vec<f32> = boxes.iter().flatten().map(|v| *v as f32).collect();
        self.dboxes = Tensor::from_slice(&flat)
            .view([-1, 4])
            .transpose(0, 1)
            .unsqueeze(0)
            .to_device(ctx.device)
            .to_kind(ctx.kind);
        let source = match data {
            Some((set, transform)) => Source::Files {
                set,
                sampling: Sampling {
                    seed,
                    batch_size: batch as usize,
                    shuffle: true,
                },
                transform,
            },
            None => Source::Memory {
                images: Recipe::normalized(
                    batch as usize,
                    (size * size) as usize,
                    0,
                    &IMAGENET_MEAN,
                    &IMAGENET_SD,
                ),
                labels: self.labels,
            },
        };
        let samples = Samples {
            source,
            dboxes: flat,
        };
        self.loader = Some(EpochLoader::new(samples, seed, WORKERS, Order::Continue));
    }

    /// The next batch on the device: images, encoded boxes, labels (a file that cannot
    /// be read is the step's failure).
    fn next_on_device(&mut self) -> Result<(Tensor, Tensor, Tensor), BenchError> {
        let loader = self.loader.as_mut().expect("the loader is made at build");
        let sample = loader.next_batch().map_err(|e| BenchError::Failed {
            bench: self.name.to_owned(),
            message: e.to_string(),
        })?;
        let [_, c, h, w] = self.shape;
        let batch = sample.count as i64;
        let n = self.dboxes.size()[2];
        let images = on_device(&sample.images, &[batch, c, h, w], self.device, self.kind);
        let gloc = on_device(&sample.gloc, &[batch, 4, n], self.device, self.kind);
        let glabel = Tensor::from_slice(&sample.glabel)
            .view([batch, n])
            .to_device(self.device);
        Ok((images, gloc, glabel))
    }
}

impl Train for Ssd {
    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        let (images, gloc, glabel) = self.next_on_device()?;
        // `Variable(img, requires_grad=True)`: a leaf whose gradient the backward computes.
        let images = images.detach().set_requires_grad(true);
        let (ploc, plabel) = self.forward(&images, true);
        let loss = multibox_loss(
            &ploc.to_kind(Kind::Float),
            &plabel.to_kind(Kind::Float),
            &gloc.to_kind(Kind::Float),
            &glabel,
            &self.dboxes.to_kind(Kind::Float),
        );
        self.opt.backward_step(&loss);
        Ok(loss.detach())
    }

    fn begin_observation(&mut self, _observation: u64) {
        // `for nbatch, (img, img_size, bbox, label) in enumerate(train_dataloader)`.
        if let Some(loader) = &mut self.loader {
            loader.begin();
        }
    }

    fn end_observation(&mut self, _observation: u64) -> Logs {
        if let Some(loader) = &mut self.loader {
            loader.end();
        }
        Logs::none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssd300_has_8732_default_boxes_as_the_script_lays_them() {
        let boxes = default_boxes(&[38, 19, 10, 5, 3, 1]);
        // 38²·4 + 19²·6 + 10²·6 + 5²·6 + 3²·4 + 1²·4.
        assert_eq!(
            boxes.len(),
            38 * 38 * 4 + 19 * 19 * 6 + 10 * 10 * 6 + 5 * 5 * 6 + 9 * 4 + 4
        );
        assert_eq!(boxes.len(), 8732);
        // The first: cell (0, 0) of the 38 map, cx = cy = 0.5 ÷ 37.5, w = h = 21 ÷ 300.
        let first = boxes[0];
        assert!((first[0] - 0.5 / 37.5).abs() < 1e-12 && (first[1] - 0.5 / 37.5).abs() < 1e-12);
        assert!((first[2] - 0.07).abs() < 1e-12 && (first[3] - 0.07).abs() < 1e-12);
        // The second shape of the 38 map: √(21·45) ÷ 300 = 0.102470.
        let second = boxes[38 * 38];
        assert!((second[2] - (21.0f64 * 45.0).sqrt() / 300.0).abs() < 1e-12);
        // The third: ratio 2, w = 0.07·√2, h = 0.07 ÷ √2.
        let third = boxes[2 * 38 * 38];
        assert!((third[2] - 0.07 * 2f64.sqrt()).abs() < 1e-12);
        assert!((third[3] - 0.07 / 2f64.sqrt()).abs() < 1e-12);
        // The last box: the 1 × 1 map's, centred, its largest shape clamped to 1.
        let last = boxes[8731];
        assert_eq!((last[0], last[1]), (0.5, 0.5));
        assert!(boxes.iter().flatten().all(|v| (0.0..=1.0).contains(v)));
    }

    #[test]
    fn iou_by_hand() {
        // [0, 0, 2, 2] and [1, 1, 3, 3]: intersection 1, union 4 + 4 − 1 = 7.
        let a = Tensor::from_slice(&[0.0f32, 0.0, 2.0, 2.0]).view([1, 4]);
        let b = Tensor::from_slice(&[1.0f32, 1.0, 3.0, 3.0, 5.0, 5.0, 6.0, 6.0]).view([2, 4]);
        let got = iou(&a, &b);
        assert!((got.double_value(&[0, 0]) - 1.0 / 7.0).abs() < 1e-6);
        assert_eq!(got.double_value(&[0, 1]), 0.0);
    }

    #[test]
    fn encoding_matches_a_ground_truth_to_its_box_and_leaves_the_rest_background() {
        let dboxes = Tensor::from_slice(&[
            0.25f32, 0.25, 0.5, 0.5, // box 0
            0.75, 0.75, 0.5, 0.5, // box 1
            0.3, 0.3, 0.5, 0.5, // box 2: overlaps box 0 by IoU 0.68
        ])
        .view([3, 4]);
        // One ground truth exactly on box 0, label 7.
        let gt = Tensor::from_slice(&[0.0f32, 0.0, 0.5, 0.5]).view([1, 4]);
        let (boxes, labels) = encode(&dboxes, &gt, &Tensor::from_slice(&[7i64]));
        assert_eq!(Vec::<i64>::try_from(&labels).unwrap(), [7, 0, 7]);
        let b: Vec<f32> = Vec::try_from(boxes.view([-1])).unwrap();
        assert_eq!(&b[0..4], &[0.25, 0.25, 0.5, 0.5]);
        assert_eq!(
            &b[4..8],
            &[0.75, 0.75, 0.5, 0.5],
            "unmatched: the default box"
        );
    }

    #[test]
    fn hard_negative_mining_takes_three_per_positive() {
        // One positive (box 0) and five negatives with losses 5, 1, 4, 2, 3: the three
        // hardest are boxes 1 (5), 3 (4) and 5 (3).
        let con = Tensor::from_slice(&[9.0f32, 5.0, 1.0, 4.0, 2.0, 3.0]).view([1, 6]);
        let positive = Tensor::from_slice(&[true, false, false, false, false, false]).view([1, 6]);
        let pos_num = positive.sum_dim_intlist(1, false, Kind::Int64);
        let neg: Vec<bool> =
            Vec::try_from(hard_negatives(&con, &positive, &pos_num).view([-1])).unwrap();
        assert_eq!(neg, [false, true, false, true, false, true]);
        // Two positives want six: the count clamps at the six boxes, so every box is
        // taken, positives included (their loss is zeroed, so they rank last), as the
        // script's `con_rank < neg_num` does.
        let positive = Tensor::from_slice(&[true, true, false, false, false, false]).view([1, 6]);
        let pos_num = positive.sum_dim_intlist(1, false, Kind::Int64);
        let neg: Vec<bool> =
            Vec::try_from(hard_negatives(&con, &positive, &pos_num).view([-1])).unwrap();
        assert_eq!(neg, [true; 6]);
    }

    #[test]
    fn at_300_the_feature_maps_give_the_8732_boxes_and_a_step_trains() {
        let args = BenchArgs {
            batch_size: 1,
            number: 1,
            repeat: 1,
            seed: 4,
            extra: [("synthetic_data".to_owned(), true.into())].into(),
        };
        let spec = crate::bench::DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        let ctx = Ctx::new("ssd", &args, spec).unwrap();
        let mut model = new_model(&ctx, &args).unwrap();
        assert_eq!(model.dboxes.size(), [1, 4, 8732]);
        let (images, gloc, glabel) = model.next_on_device().unwrap();
        assert_eq!(images.size(), [1, 3, 300, 300]);
        assert_eq!(gloc.size(), [1, 4, 8732]);
        assert_eq!(glabel.size(), [1, 8732]);
        let positives = glabel.gt(0).sum(Kind::Int64).int64_value(&[]);
        assert!(positives >= 1, "every ground truth keeps a box");
        let loss = model.train_step().unwrap().double_value(&[]);
        assert!(loss.is_finite() && loss > 0.0, "{loss}");
        // A batch a step, the next observation's iterator going on from there.
        model.begin_observation(1);
        let _ = model.train_step().unwrap();
        let _ = model.end_observation(1);
        assert_eq!(model.loader.as_ref().unwrap().position(), 3);
    }

    /// Each batch its own images and boxes, from the seed and its index alone: the same
    /// index, the same batch; the next, another; labels among the classes, 1–4 ground
    /// truths an image, each keeping a default box.
    #[test]
    fn each_batch_has_fresh_images_and_boxes() {
        let dboxes = default_boxes(&[38, 19, 10, 5, 3, 1]);
        let flat: Vec<f32> = dboxes.iter().flatten().map(|v| *v as f32).collect();
        let samples = Samples {
            source: Source::Memory {
                images: Recipe::normalized(3, 16, 0, &IMAGENET_MEAN, &IMAGENET_SD),
                labels: 5,
            },
            dboxes: flat,
        };
        let a = samples.make(9, 0).unwrap();
        assert_eq!(
            (a.images.len(), a.gloc.len(), a.glabel.len()),
            (3 * 48, 3 * 4 * 8732, 3 * 8732)
        );
        assert!(a.glabel.iter().all(|l| (0..5).contains(l)));
        for image in a.glabel.chunks(8732) {
            let positives = image.iter().filter(|l| **l > 0).count();
            assert!(positives >= 1, "{positives}");
        }
        let again = samples.make(9, 0).unwrap();
        assert_eq!(
            (&a.images, &a.gloc, &a.glabel),
            (&again.images, &again.gloc, &again.glabel)
        );
        let b = samples.make(9, 1).unwrap();
        assert_ne!(a.images, b.images);
        assert_ne!(a.gloc, b.gloc);
    }
}
