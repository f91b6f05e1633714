//! COCO 2017 as ssd reads it (`train.py --data $DATA_DIRECTORY/coco`, `utils.py`'s
//! `COCODetection` and pycocotools' `COCO`): `annotations/instances_{train,val}2017.json`
//! (`images`, `annotations`, `categories`; `info` and `licenses` too, as the real files
//! have them) and the JPEGs `{train,val}2017/<id as 12 digits>.jpg`. fast_style reads the
//! fake ImageNet, not COCO (its `run.sh` passes `--dataset $DATA_DIRECTORY/ImageNet/train`).
//!
//! The maker writes COCO's 80 categories (their ids 1–90 with COCO's gaps), images of
//! 640 pixels on the long side and 360–480 on the other (three in four landscape; 160 and
//! 90–120 at smoke size), each
//! with 1–7 boxes (one image in a hundred with none, which `COCODetection` drops, as COCO
//! has ~1%), drawn as flat rectangles over a soft gradient with noise. Full size is 12 800
//! training and 500 validation images, not COCO's 118 287 and 5 000: the ssd job
//! (15 repeats of 5 + 1 batches of 128) reads 11 520 training images a run and no
//! validation image (train.py opens the validation annotations only); the real count would
//! be ~19 GB that no run reads. [`Scale::Smoke`] is 8 and 4 images.

use super::jpeg::{self, Rgb};
use super::keyed::{Purpose, Stream};
use crate::{DataError, Scale};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// COCO's categories: (id, name, supercategory).
#[rustfmt::skip]
pub const CATEGORIES: [(u32, &str, &str); 80] = [
    (1, "person", "person"), (2, "bicycle", "vehicle"), (3, "car", "vehicle"),
    (4, "motorcycle", "vehicle"), (5, "airplane", "vehicle"), (6, "bus", "vehicle"),
    (7, "train", "vehicle"), (8, "truck", "vehicle"), (9, "boat", "vehicle"),
    (10, "traffic light", "outdoor"), (11, "fire hydrant", "outdoor"),
    (13, "stop sign", "outdoor"), (14, "parking meter", "outdoor"), (15, "bench", "outdoor"),
    (16, "bird", "animal"), (17, "cat", "animal"), (18, "dog", "animal"),
    (19, "horse", "animal"), (20, "sheep", "animal"), (21, "cow", "animal"),
    (22, "elephant", "animal"), (23, "bear", "animal"), (24, "zebra", "animal"),
    (25, "giraffe", "animal"), (27, "backpack", "accessory"), (28, "umbrella", "accessory"),
    (31, "handbag", "accessory"), (32, "tie", "accessory"), (33, "suitcase", "accessory"),
    (34, "frisbee", "sports"), (35, "skis", "sports"), (36, "snowboard", "sports"),
    (37, "sports ball", "sports"), (38, "kite", "sports"), (39, "baseball bat", "sports"),
    (40, "baseball glove", "sports"), (41, "skateboard", "sports"),
    (42, "surfboard", "sports"), (43, "tennis racket", "sports"), (44, "bottle", "kitchen"),
    (46, "wine glass", "kitchen"), (47, "cup", "kitchen"), (48, "fork", "kitchen"),
    (49, "knife", "kitchen"), (50, "spoon", "kitchen"), (51, "bowl", "kitchen"),
    (52, "banana", "food"), (53, "apple", "food"), (54, "sandwich", "food"),
    (55, "orange", "food"), (56, "broccoli", "food"), (57, "carrot", "food"),
    (58, "hot dog", "food"), (59, "pizza", "food"), (60, "donut", "food"),
    (61, "cake", "food"), (62, "chair", "furniture"), (63, "couch", "furniture"),
    (64, "potted plant", "furniture"), (65, "bed", "furniture"),
    (67, "dining table", "furniture"), (70, "toilet", "furniture"), (72, "tv", "electronic"),
    (73, "laptop", "electronic"), (74, "mouse", "electronic"), (75, "remote", "electronic"),
    (76, "keyboard", "electronic"), (77, "cell phone", "electronic"),
    (78, "microwave", "appliance"), (79, "oven", "appliance"), (80, "toaster", "appliance"),
    (81, "sink", "appliance"), (82, "refrigerator", "appliance"), (84, "book", "indoor"),
    (85, "clock", "indoor"), (86, "vase", "indoor"), (87, "scissors", "indoor"),
    (88, "teddy bear", "indoor"), (89, "hair drier", "indoor"), (90, "toothbrush", "indoor"),
];

/// The data directory's COCO folder.
pub const COCO: &str = "coco";

/// A split: its annotation file and image folder, under [`COCO`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// `train2017`.
    Train,
    /// `val2017`.
    Val,
}

impl Split {
    /// `train2017` or `val2017`.
    pub fn name(self) -> &'static str {
        match self {
            Split::Train => "train2017",
            Split::Val => "val2017",
        }
    }

    /// The annotation file, relative to the data directory.
    pub fn annotations(self) -> PathBuf {
        Path::new(COCO)
            .join("annotations")
            .join(format!("instances_{}.json", self.name()))
    }

    /// The image folder, relative to the data directory.
    pub fn images(self) -> PathBuf {
        Path::new(COCO).join(self.name())
    }

    /// Images made at `scale`.
    pub fn count(self, scale: Scale) -> usize {
        match (self, scale) {
            (Split::Train, Scale::Full) => 12_800,
            (Split::Val, Scale::Full) => 500,
            (Split::Train, Scale::Smoke) => 8,
            (Split::Val, Scale::Smoke) => 4,
        }
    }

    /// The long side of the images made at `scale` (the short one is 9/16–3/4 of it):
    /// COCO's 640, or 160 for smoke.
    pub fn long_side(scale: Scale) -> usize {
        match scale {
            Scale::Full => 640,
            Scale::Smoke => 160,
        }
    }

    /// The first image id (the two splits' ids are disjoint, as COCO's are).
    fn first_id(self) -> u64 {
        match self {
            Split::Train => 1,
            Split::Val => 600_000,
        }
    }
}

/// An `images` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageEntry {
    /// Always 1 when made here.
    #[serde(default)]
    pub license: u32,
    /// `<id as 12 digits>.jpg`.
    pub file_name: String,
    /// Rows.
    pub height: usize,
    /// Columns.
    pub width: usize,
    /// The id annotations refer to.
    pub id: u64,
}

/// An `annotations` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Annotation {
    /// The box's outline, a polygon (x, y, x, y, …).
    #[serde(default)]
    pub segmentation: serde_json::Value,
    /// The outline's area.
    #[serde(default)]
    pub area: f64,
    /// 0 or 1.
    #[serde(default)]
    pub iscrowd: u8,
    /// The image's id.
    pub image_id: u64,
    /// Left, top, width, height, pixels.
    pub bbox: [f64; 4],
    /// A category's id.
    pub category_id: u32,
    /// Its own id.
    pub id: u64,
}

/// A `categories` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Category {
    /// Its group.
    #[serde(default)]
    pub supercategory: String,
    /// Its id (1–90).
    pub id: u32,
    /// Its name.
    pub name: String,
}

/// An annotation file (`instances_*.json`): the parts the readers use, and `info` and
/// `licenses` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Instances {
    /// What the file is.
    #[serde(default)]
    pub info: serde_json::Value,
    /// The images' licences.
    #[serde(default)]
    pub licenses: serde_json::Value,
    /// The images.
    pub images: Vec<ImageEntry>,
    /// The boxes.
    pub annotations: Vec<Annotation>,
    /// The categories.
    pub categories: Vec<Category>,
}

/// Image `index` of `split`: its entry, its boxes (left, top, width, height, category
/// id) and its stream for the pixels.
fn draw_image(
    seed: u64,
    split: Split,
    scale: Scale,
    index: usize,
) -> (ImageEntry, Vec<[f64; 5]>, Stream) {
    let id = split.first_id() + index as u64;
    let mut rng = Stream::keyed(seed, Purpose::Coco, &[split as u64, index as u64]);
    let long = Split::long_side(scale);
    let short = long * 9 / 16 + rng.below(long as u64 * 3 / 16 + 1) as usize;
    let (width, height) = if rng.below(4) < 3 {
        (long, short)
    } else {
        (short, long)
    };
    let boxes = if rng.below(100) == 0 {
        0
    } else {
        1 + rng.below(7)
    };
    // COCO's boxes have two decimals.
    let cents = |v: f64| (v * 100.0).round() / 100.0;
    let boxes = (0..boxes)
        .map(|_| {
            let w = cents(rng.uniform(0.05, 0.6) * width as f64);
            let h = cents(rng.uniform(0.05, 0.6) * height as f64);
            let x = cents(rng.uniform(0.0, width as f64 - w));
            let y = cents(rng.uniform(0.0, height as f64 - h));
            let category = CATEGORIES[rng.below(80) as usize].0;
            [x, y, w, h, f64::from(category)]
        })
        .collect();
    let entry = ImageEntry {
        license: 1,
        file_name: format!("{id:012}.jpg"),
        height,
        width,
        id,
    };
    (entry, boxes, rng)
}

/// The pixels of an image: a gradient between two colours, noise of ±8, and each box a
/// flat colour of its category.
fn paint(entry: &ImageEntry, boxes: &[[f64; 5]], rng: &mut Stream) -> Rgb {
    let (w, h) = (entry.width, entry.height);
    let colour = |rng: &mut Stream| [0; 3].map(|_| rng.below(256) as f64);
    let (from, to) = (colour(rng), colour(rng));
    let mut pixels = Vec::with_capacity(3 * w * h);
    for y in 0..h {
        let t = y as f64 / h as f64;
        for _ in 0..w {
            let noise = rng.next_u64();
            for c in 0..3 {
                let n = ((noise >> (8 * c)) & 15) as f64 - 8.0;
                pixels.push((from[c] + (to[c] - from[c]) * t + n).clamp(0.0, 255.0) as u8);
            }
        }
    }
    for b in boxes {
        let category = b[4] as u64;
        let fill = [
            category * 37 % 256,
            category * 91 % 256,
            category * 173 % 256,
        ];
        let (x0, y0) = (b[0] as usize, b[1] as usize);
        let (x1, y1) = (
            ((b[0] + b[2]) as usize).min(w),
            ((b[1] + b[3]) as usize).min(h),
        );
        for y in y0..y1 {
            for x in x0..x1 {
                let i = 3 * (y * w + x);
                pixels[i..i + 3].copy_from_slice(&fill.map(|v| v as u8));
            }
        }
    }
    Rgb::new(w, h, pixels)
}

/// The annotation file of `split` at `scale`.
pub fn instances(seed: u64, split: Split, scale: Scale) -> Instances {
    let mut images = Vec::new();
    let mut annotations = Vec::new();
    for index in 0..split.count(scale) {
        let (entry, boxes, _) = draw_image(seed, split, scale, index);
        for b in boxes {
            let [x, y, w, h, category] = b;
            annotations.push(Annotation {
                segmentation: serde_json::json!([[x, y, x + w, y, x + w, y + h, x, y + h]]),
                area: w * h,
                iscrowd: 0,
                image_id: entry.id,
                bbox: [x, y, w, h],
                category_id: category as u32,
                id: annotations.len() as u64 + 1 + split.first_id() * 100,
            });
        }
        images.push(entry);
    }
    let categories = CATEGORIES
        .iter()
        .map(|&(id, name, supercategory)| Category {
            supercategory: supercategory.into(),
            id,
            name: name.into(),
        })
        .collect();
    Instances {
        info: serde_json::json!({
            "description": "mlbench synthetic data in the COCO 2017 layout",
            "version": "1.0",
            "year": 2017,
            "contributor": "mlbench data prepare",
            "date_created": "2017/09/01",
        }),
        licenses: serde_json::json!([{"url": "", "id": 1, "name": "synthetic"}]),
        images,
        annotations,
        categories,
    }
}

/// Writes COCO's layout under the data directory `root` (`root/coco/…`): both splits'
/// annotation files and images. Returns the files written, relative to `root` (the
/// annotation files first). A file already there is an error, before anything is
/// written, unless `force`.
pub fn prepare(
    root: &Path,
    seed: u64,
    scale: Scale,
    force: bool,
) -> Result<Vec<PathBuf>, DataError> {
    let splits = [Split::Train, Split::Val];
    let images: Vec<(Split, usize)> = splits
        .iter()
        .flat_map(|&s| (0..s.count(scale)).map(move |i| (s, i)))
        .collect();
    let image_path = |&(split, index): &(Split, usize)| {
        split
            .images()
            .join(draw_image(seed, split, scale, index).0.file_name)
    };
    let mut files: Vec<PathBuf> = splits.iter().map(|s| s.annotations()).collect();
    files.extend(images.iter().map(image_path));
    if !force {
        super::refuse_existing(root, files.iter().cloned())?;
    }
    for dir in [
        Path::new(COCO).join("annotations"),
        Split::Train.images(),
        Split::Val.images(),
    ] {
        let dir = root.join(dir);
        std::fs::create_dir_all(&dir).map_err(DataError::io(&dir))?;
    }
    for split in splits {
        let path = root.join(split.annotations());
        let json =
            serde_json::to_vec(&instances(seed, split, scale)).map_err(|e| DataError::Format {
                path: path.clone(),
                place: "annotations".into(),
                what: e.to_string(),
            })?;
        jpeg::write_new(&path, &json, force)?;
    }
    super::write_parallel(&images, |&(split, index)| {
        let (entry, boxes, mut rng) = draw_image(seed, split, scale, index);
        let path = root.join(split.images()).join(&entry.file_name);
        let bytes = jpeg::encode(&paint(&entry, &boxes, &mut rng), &path)?;
        jpeg::write_new(&path, &bytes, force)
    })?;
    Ok(files)
}

/// One image of [`Detection`]: its file, size and boxes.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectionItem {
    /// The JPEG.
    pub path: PathBuf,
    /// (height, width), from the annotation file.
    pub size: (usize, usize),
    /// Each box as (left, top, right, bottom) ÷ the image's (width, height), float32.
    pub boxes: Vec<[f32; 4]>,
    /// Each box's label: 1 + the category's position in `categories` (0 is background).
    pub labels: Vec<i64>,
}

/// ssd's `COCODetection(img_folder, annotate_file)`: labels 1.. in the order of
/// `categories`, the images in the file's order less those without a box.
#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    /// The images with at least one box.
    pub items: Vec<DetectionItem>,
    /// 1 + the number of categories (`labelnum`, background included).
    pub label_count: usize,
}

impl Detection {
    /// Reads `split` of the COCO folder under the data directory `root`. A missing
    /// annotation file is [`DataError::Missing`]; an id twice, or a box whose image or
    /// category is not listed, is [`DataError::Format`].
    pub fn open(root: &Path, split: Split) -> Result<Detection, DataError> {
        Detection::open_folder(&root.join(COCO), split)
    }

    /// [`Detection::open`] of a COCO folder named as ssd's `--data` names it (`folder`
    /// holds `annotations/` and the image folders).
    pub fn open_folder(folder: &Path, split: Split) -> Result<Detection, DataError> {
        let path = folder
            .join("annotations")
            .join(format!("instances_{}.json", split.name()));
        let bytes = std::fs::read(&path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => DataError::Missing {
                path: path.clone(),
                what: "COCO's annotations".into(),
                command: "mlbench data prepare".into(),
            },
            _ => DataError::Io {
                path: path.clone(),
                source,
            },
        })?;
        let format = |place: String, what: String| DataError::Format {
            path: path.clone(),
            place,
            what,
        };
        let file: Instances = serde_json::from_slice(&bytes)
            .map_err(|e| format(format!("line {}", e.line()), e.to_string()))?;
        let labels: std::collections::HashMap<u32, i64> = (file.categories.iter())
            .enumerate()
            .map(|(i, c)| (c.id, i as i64 + 1))
            .collect();
        let mut position = std::collections::HashMap::new();
        let folder = folder.join(split.name());
        let mut items = Vec::with_capacity(file.images.len());
        for (i, img) in file.images.iter().enumerate() {
            if position.insert(img.id, i).is_some() {
                return Err(format(format!("image {i}"), format!("id {} twice", img.id)));
            }
            items.push(DetectionItem {
                path: folder.join(&img.file_name),
                size: (img.height, img.width),
                boxes: Vec::new(),
                labels: Vec::new(),
            });
        }
        for (i, a) in file.annotations.iter().enumerate() {
            let place = || format!("annotation {i}");
            let &at = (position.get(&a.image_id))
                .ok_or_else(|| format(place(), format!("no image {}", a.image_id)))?;
            let &label = (labels.get(&a.category_id))
                .ok_or_else(|| format(place(), format!("no category {}", a.category_id)))?;
            let item = &mut items[at];
            let (h, w) = (item.size.0 as f64, item.size.1 as f64);
            let [l, t, bw, bh] = a.bbox;
            let ltrb = [l / w, t / h, (l + bw) / w, (t + bh) / h];
            item.boxes.push(ltrb.map(|v| v as f32));
            item.labels.push(label);
        }
        items.retain(|item| !item.boxes.is_empty());
        Ok(Detection {
            items,
            label_count: file.categories.len() + 1,
        })
    }
}
