//! torchvision's `ImageFolder` listing (the suite's torchvision, 0.4): the classes are the
//! root's sub-folders (links to folders count, hidden ones too), sorted; each class's
//! files are found by walking its folder (`os.walk`, not into linked sub-folders), the
//! folders in sorted order of their paths, each folder's files sorted, and kept when the
//! lower-cased name ends with one of [`EXTENSIONS`]. Sorting is Python's: by code point,
//! a name that is not UTF-8 by its bytes read as Python does (each undecodable byte b as
//! the code point U+DC00 + b).

use crate::DataError;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// torchvision 0.4's `IMG_EXTENSIONS`, verbatim: `webp` has no dot there, so any name
/// ending in `webp` is an image.
pub const EXTENSIONS: [&str; 9] = [
    ".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", "webp",
];

/// An ImageFolder: its classes and its samples (path, class index), in torchvision's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageFolder {
    /// The root folder.
    pub root: PathBuf,
    /// The class names (the folders' names), sorted; a sample's class indexes this.
    pub classes: Vec<String>,
    /// Every image: its path and class index.
    pub samples: Vec<(PathBuf, usize)>,
}

/// The order Python's `sorted` gives a name: its code points, undecodable bytes as
/// U+DC00 + byte (the `surrogateescape` decoding of file names).
pub fn python_order_key(name: &OsStr) -> Vec<u32> {
    let bytes = name.as_encoded_bytes();
    let mut key = Vec::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        key.extend(chunk.valid().chars().map(u32::from));
        key.extend(chunk.invalid().iter().map(|&b| 0xdc00 + u32::from(b)));
    }
    key
}

fn is_image(name: &OsStr) -> bool {
    let lower = name.to_string_lossy().to_lowercase();
    EXTENSIONS.iter().any(|ext| lower.ends_with(ext))
}

fn list(dir: &Path) -> Result<Vec<std::fs::DirEntry>, DataError> {
    std::fs::read_dir(dir)
        .map_err(DataError::io(dir))?
        .map(|e| e.map_err(DataError::io(dir)))
        .collect()
}

/// A folder `os.walk` yields: its path, its sort key, its non-folder entries' names.
struct Walked {
    key: Vec<u32>,
    folder: PathBuf,
    files: Vec<std::ffi::OsString>,
}

/// `os.walk(dir)` sorted by folder path (Python's order of the paths). Links to folders
/// are listed as folders (so not as files) and not entered.
fn walk(dir: &Path) -> Result<Vec<Walked>, DataError> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let mut files = Vec::new();
        for entry in list(&folder)? {
            let path = entry.path();
            // `is_dir` follows links, as os.walk's classification does.
            if path.is_dir() {
                let is_link = entry
                    .file_type()
                    .map_err(DataError::io(&path))?
                    .is_symlink();
                if !is_link {
                    pending.push(path);
                }
            } else {
                files.push(entry.file_name());
            }
        }
        let key = python_order_key(folder.as_os_str());
        out.push(Walked { key, folder, files });
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(out)
}

impl ImageFolder {
    /// Lists `root` as torchvision's `ImageFolder(root)` does. An image folder without
    /// images is [`DataError::Missing`] (torchvision raises "Found 0 files").
    pub fn open(root: &Path) -> Result<ImageFolder, DataError> {
        let mut classes: Vec<std::ffi::OsString> = list(root)?
            .into_iter()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name())
            .collect();
        classes.sort_by_key(|c| python_order_key(c));
        let mut samples = Vec::new();
        for (index, class) in classes.iter().enumerate() {
            for Walked {
                folder, mut files, ..
            } in walk(&root.join(class))?
            {
                files.sort_by_key(|f| python_order_key(f));
                samples.extend(
                    files
                        .into_iter()
                        .filter(|f| is_image(f))
                        .map(|f| (folder.join(f), index)),
                );
            }
        }
        if samples.is_empty() {
            return Err(DataError::Missing {
                path: root.to_path_buf(),
                what: format!(
                    "no images in class folders (extensions {})",
                    EXTENSIONS.join(", ")
                ),
                command: "mlbench data prepare".into(),
            });
        }
        Ok(ImageFolder {
            root: root.to_path_buf(),
            classes: classes
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect(),
            samples,
        })
    }

    /// The number of images.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether there are none (never, for an opened folder).
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }
}
