//! WMT16 English–German (translator): the three files translator's train.py reads from
//! `--dataset-dir` (`$DATA_DIRECTORY/wmt16`): `vocab.bpe.32000` (one BPE token a line)
//! and `train.tok.clean.bpe.32000.en` / `.de` (one tokenized sentence a line, pairs line
//! by line); a maker of seeded BPE-like text in that layout; and the script's Tokenizer
//! and ParallelDataset (`seq2seq/data/tokenizer.py`, `dataset.py`).

use crate::make::{self, Rng, Weighted};
use crate::wikitext::{lines, python_split, python_strip};
use crate::{DataError, Scale};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The folder under the data root.
pub const FOLDER: &str = "wmt16";
/// The BPE vocabulary.
pub const VOCAB: &str = "vocab.bpe.32000";
/// The source sentences (English).
pub const TRAIN_SRC: &str = "train.tok.clean.bpe.32000.en";
/// The target sentences (German).
pub const TRAIN_TGT: &str = "train.tok.clean.bpe.32000.de";
/// The Tokenizer's first four tokens (`config.py`: `<pad>`, `<unk>`, `<s>`, `<\s>`).
pub const SPECIALS: [&str; 4] = ["<pad>", "<unk>", "<s>", "<\\s>"];
/// Ids of the specials.
pub const PAD: u32 = 0;
/// Unknown tokens.
pub const UNK: u32 = 1;
/// Begin of sentence.
pub const BOS: u32 = 2;
/// End of sentence.
pub const EOS: u32 = 3;
/// The BPE separator of a token continued by the next.
pub const SEPARATOR: &str = "@@";

/// BPE tokens in the vocabulary file and sentence pairs: MLPerf's 32,313 tokens (32,317
/// with the specials, `mlbench run`'s translator's `vocab_size`) and 4,500,000 pairs (the
/// real file has about 4.5 million; a size of ours), or the smoke size.
pub fn shape(scale: Scale) -> (usize, usize) {
    match scale {
        Scale::Full => (32_313, 4_500_000),
        Scale::Smoke => (500, 200),
    }
}

/// The Tokenizer: the specials, then the file's lines stripped; a token seen twice keeps
/// its last id, as the script's dict does.
#[derive(Debug, Clone, PartialEq)]
pub struct Tokenizer {
    /// Tokens by id (`len()` is the script's `vocab_size`).
    pub tokens: Vec<String>,
    index: HashMap<String, u32>,
}

impl Tokenizer {
    /// Reads a vocabulary file.
    pub fn read(path: &Path) -> Result<Tokenizer, DataError> {
        let text = read_text(path)?;
        // `line.strip()`: a token is the line without its outer whitespace.
        let tokens: Vec<String> = SPECIALS
            .iter()
            .map(|s| (*s).to_owned())
            .chain(lines(&text).map(|l| python_strip(l).to_owned()))
            .collect();
        let index = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        Ok(Tokenizer { tokens, index })
    }

    /// The script's `vocab_size`.
    pub fn vocab_size(&self) -> usize {
        self.tokens.len()
    }

    /// `segment(line)`: `<s>`, each whitespace-separated token's id (`<unk>` when not in
    /// the vocabulary), `<\s>`.
    pub fn segment(&self, line: &str, out: &mut Vec<u32>) {
        out.push(BOS);
        out.extend(python_split(line).map(|t| self.index.get(t).copied().unwrap_or(UNK)));
        out.push(EOS);
    }
}

/// Sentences of ids, stored one after another.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sentences {
    /// Every sentence's ids, in order (32 bits: WMT's 4.5 million pairs hold about 280
    /// million ids).
    pub ids: Vec<u32>,
    /// Where each sentence starts in `ids`, and one past the last.
    pub starts: Vec<usize>,
}

impl Sentences {
    /// How many sentences.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sentence `i`.
    pub fn get(&self, i: usize) -> &[u32] {
        &self.ids[self.starts[i]..self.starts[i + 1]]
    }

    /// Sentence `i`'s length in ids.
    pub fn len_of(&self, i: usize) -> usize {
        self.starts[i + 1] - self.starts[i]
    }

    /// Keeps the sentences `keep` says yes to, in order, in place.
    fn retain(&mut self, keep: &[bool]) {
        let (mut ids, mut starts) = (0, vec![0]);
        for (i, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
            let (from, to) = (self.starts[i], self.starts[i + 1]);
            self.ids.copy_within(from..to, ids);
            ids += to - from;
            starts.push(ids);
        }
        self.ids.truncate(ids);
        self.ids.shrink_to_fit();
        self.starts = starts;
    }
}

/// The training pairs as `ParallelDataset` keeps them, and the vocabulary's size.
#[derive(Debug, Clone, PartialEq)]
pub struct Parallel {
    /// The Tokenizer's `vocab_size`.
    pub vocab_size: usize,
    /// Source sentences (English), `<s>` … `<\s>`.
    pub src: Sentences,
    /// Target sentences (German), `<s>` … `<\s>`.
    pub tgt: Sentences,
}

/// Reads `dir`'s vocabulary and training pairs as train.py does: the first `max_size`
/// lines of each file (all without), then only the pairs whose two sentences both have
/// `min_len..=max_len` ids (`--min-length-train` 0, `--max-length-train` 50 by default).
pub fn read_train(
    dir: &Path,
    min_len: usize,
    max_len: usize,
    max_size: Option<usize>,
) -> Result<Parallel, DataError> {
    let tokenizer = Tokenizer::read(&dir.join(VOCAB))?;
    // One file's text at a time, segmented straight into one buffer per side.
    let read = |name: &str| -> Result<Sentences, DataError> {
        let text = read_text(&dir.join(name))?;
        let mut out = Sentences {
            ids: Vec::with_capacity(text.len() / 4),
            starts: vec![0],
        };
        for line in lines(&text).take(max_size.unwrap_or(usize::MAX)) {
            tokenizer.segment(line, &mut out.ids);
            out.starts.push(out.ids.len());
        }
        Ok(out)
    };
    let (mut src, mut tgt) = (read(TRAIN_SRC)?, read(TRAIN_TGT)?);
    if src.len() != tgt.len() {
        return Err(DataError::Format {
            path: dir.join(TRAIN_TGT),
            place: format!("line {}", src.len().min(tgt.len()) + 1),
            what: format!("{} sentences; {TRAIN_SRC} has {}", tgt.len(), src.len()),
        });
    }
    let fits = |s: &Sentences, i: usize| (min_len..=max_len).contains(&s.len_of(i));
    let keep: Vec<bool> = (0..src.len())
        .map(|i| fits(&src, i) && fits(&tgt, i))
        .collect();
    src.retain(&keep);
    tgt.retain(&keep);
    Ok(Parallel {
        vocab_size: tokenizer.vocab_size(),
        src,
        tgt,
    })
}

fn read_text(path: &Path) -> Result<String, DataError> {
    String::from_utf8(make::read(path)?).map_err(|e| DataError::Format {
        path: path.to_path_buf(),
        place: format!("byte {}", e.utf8_error().valid_up_to()),
        what: "not UTF-8".into(),
    })
}

/// Writes `wmt16/{vocab.bpe.32000, train.tok.clean.bpe.32000.en, .de}` under `root`: a
/// vocabulary of BPE-like tokens (a quarter pieces ending in `@@`), and sentence pairs
/// of Zipf-like tokens, a piece always followed by a whole token; source lengths of
/// 1–86 tokens (mostly under 50), each target within about a fifth of its source.
pub fn prepare(root: &Path, seed: u64, scale: Scale) -> Result<Vec<PathBuf>, DataError> {
    let (tokens, pairs) = shape(scale);
    let vocab: Vec<String> = (0..tokens).map(token).collect();
    let (pieces, whole): (Vec<usize>, Vec<usize>) = (0..tokens).partition(|&i| i % 4 == 3);
    let zipf = |n: usize| Weighted::new((0..n).map(|r| 1.0 / (r as f64 + 2.0)));
    let (piece_of, whole_of) = (zipf(pieces.len()), zipf(whole.len()));
    let relative = |name: &str| format!("{FOLDER}/{name}");
    let mut text = vocab.join("\n");
    text.push('\n');
    let mut written = vec![make::write(root, &relative(VOCAB), text.as_bytes())?];
    let mut rng = Rng::new(seed, 0x574D_5431_3600);
    let mut files = [
        make::create(root, &relative(TRAIN_SRC))?,
        make::create(root, &relative(TRAIN_TGT))?,
    ];
    let mut line = String::new();
    for _ in 0..pairs {
        let source = 1 + (rng.unit() * rng.unit() * 79.0) as usize + rng.below(8) as usize;
        let target = (source as f64 * (0.8 + 0.4 * rng.unit())).round().max(1.0) as usize;
        for ((file, name), length) in files
            .iter_mut()
            .zip([TRAIN_SRC, TRAIN_TGT])
            .zip([source, target])
        {
            line.clear();
            for k in 0..length {
                if k + 1 < length && rng.below(4) == 0 {
                    line.push_str(&vocab[pieces[piece_of.draw(&mut rng)]]);
                    line.push(' ');
                }
                line.push_str(&vocab[whole[whole_of.draw(&mut rng)]]);
                line.push(if k + 1 < length { ' ' } else { '\n' });
            }
            let io = DataError::io(root.join(relative(name)));
            file.write_all(line.as_bytes()).map_err(io)?;
        }
    }
    for (file, name) in files.into_iter().zip([TRAIN_SRC, TRAIN_TGT]) {
        file.into_inner()
            .map_err(|e| DataError::io(root.join(relative(name)))(e.into_error()))?;
        written.push(PathBuf::from(relative(name)));
    }
    Ok(written)
}

/// The vocabulary's token `i`: syllables, every fourth a piece (`…@@`).
fn token(i: usize) -> String {
    const CONSONANTS: &[u8] = b"bcdfghklmnprstw";
    const VOWELS: &[u8] = b"aeiouy";
    let base = CONSONANTS.len() * VOWELS.len();
    let mut n = i + 1;
    let mut word = String::new();
    while n > 0 {
        let s = (n - 1) % base;
        word.push(char::from(CONSONANTS[s / VOWELS.len()]));
        word.push(char::from(VOWELS[s % VOWELS.len()]));
        n = (n - 1) / base;
    }
    if i % 4 == 3 {
        word.push_str(SEPARATOR);
    }
    word
}
