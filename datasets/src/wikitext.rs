//! wikitext-2 (wlm, wlmfp16): the three files the script's `data.Corpus(path)` reads
//! (`train.txt`, `valid.txt`, `test.txt` in the folder `--data` names; the suite's
//! run.sh passes the copy shipped beside the script, mlbench's data root has
//! `wikitext-2/`), a maker of seeded text with the real vocabulary and token counts, and
//! the Corpus's own tokenization.
//!
//! The Corpus reads each file in text mode (universal newlines: `\n`, `\r\n` and `\r` end
//! a line), splits each line on whitespace (`str.split()`), appends `<eos>`, and numbers
//! the words in the order first seen over train, then valid, then test.

use crate::make::{self, Rng, Weighted};
use crate::{DataError, Scale};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The folder under the data root.
pub const FOLDER: &str = "wikitext-2";
/// The three files, in the order the Corpus reads them.
pub const FILES: [&str; 3] = ["train.txt", "valid.txt", "test.txt"];
/// The end-of-line word the Corpus appends.
pub const EOS: &str = "<eos>";
/// The real wikitext-2's vocabulary, `<eos>` and `<unk>` included.
pub const VOCABULARY: usize = 33_278;
/// The real files' tokens (`<eos>` included), train, valid, test.
pub const TOKENS: [usize; 3] = [2_088_628, 217_646, 245_569];
/// The real files' lines.
pub const LINES: [usize; 3] = [36_718, 3_760, 4_358];

/// The shape a made corpus has: vocabulary (with `<eos>`), tokens and lines per file.
pub fn shape(scale: Scale) -> (usize, [usize; 3], [usize; 3]) {
    match scale {
        Scale::Full => (VOCABULARY, TOKENS, LINES),
        Scale::Smoke => (300, [3_000, 400, 450], [60, 10, 12]),
    }
}

/// A tokenized corpus: the dictionary (`words[id]`) and each file's ids.
#[derive(Debug, Clone, PartialEq)]
pub struct Corpus {
    /// The words by id, in the order first seen.
    pub words: Vec<String>,
    /// train.txt's ids.
    pub train: Vec<i64>,
    /// valid.txt's ids: its length is the number of tokens the script evaluates on.
    pub valid: Vec<i64>,
    /// test.txt's ids.
    pub test: Vec<i64>,
}

impl Corpus {
    /// Reads and tokenizes `dir/{train,valid,test}.txt` as `data.Corpus(dir)` does.
    pub fn read(dir: &Path) -> Result<Corpus, DataError> {
        let mut words = Vec::new();
        let mut index: HashMap<String, i64> = HashMap::new();
        let mut splits = Vec::with_capacity(3);
        for file in FILES {
            let path = dir.join(file);
            let text = read_text(&path)?;
            let mut ids = Vec::new();
            for line in lines(&text) {
                for word in python_split(line).chain([EOS]) {
                    let id = match index.get(word) {
                        Some(&id) => id,
                        None => {
                            let id = words.len() as i64;
                            index.insert(word.to_owned(), id);
                            words.push(word.to_owned());
                            id
                        }
                    };
                    ids.push(id);
                }
            }
            splits.push(ids);
        }
        let [train, valid, test] = <[Vec<i64>; 3]>::try_from(splits).expect("three files");
        Ok(Corpus {
            words,
            train,
            valid,
            test,
        })
    }

    /// The dictionary's size (`len(corpus.dictionary)`).
    pub fn vocabulary(&self) -> usize {
        self.words.len()
    }

    /// The dictionary's size after `Corpus(path, pad_to_multiple_of=multiple)` pads it
    /// with synthetic words: rounded up to a multiple of `multiple` (≥ 1).
    pub fn padded_vocabulary(&self, multiple: usize) -> usize {
        self.vocabulary().div_ceil(multiple.max(1)) * multiple.max(1)
    }
}

/// The tokens of `dir/valid.txt` (`<eos>` included): what the script evaluates, without
/// building the dictionary.
pub fn valid_tokens(dir: &Path) -> Result<usize, DataError> {
    let text = read_text(&dir.join(FILES[1]))?;
    Ok(lines(&text)
        .map(|line| python_split(line).count() + 1)
        .sum())
}

/// A file as UTF-8 text (Python's `open(path, 'r')` in a UTF-8 locale).
fn read_text(path: &Path) -> Result<String, DataError> {
    String::from_utf8(make::read(path)?).map_err(|e| DataError::Format {
        path: path.to_path_buf(),
        place: format!("byte {}", e.utf8_error().valid_up_to()),
        what: "not UTF-8 (the script reads its text as UTF-8)".into(),
    })
}

/// The lines of `text` as Python's text mode iterates them: ended by `\n`, `\r\n` or `\r`;
/// a last line without an end counts, an empty text has none.
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let line = &rest[..end];
        let skip = match rest.as_bytes().get(end) {
            Some(b'\r') if rest.as_bytes().get(end + 1) == Some(&b'\n') => 2,
            Some(_) => 1,
            None => 0,
        };
        rest = &rest[end + skip..];
        Some(line)
    })
}

/// `str.split()`: the words between runs of whitespace, as Python counts whitespace
/// (Unicode's, and the separators U+001C–U+001F).
pub fn python_split(line: &str) -> impl Iterator<Item = &str> {
    line.split(python_space).filter(|w| !w.is_empty())
}

/// Python's `str.strip()`: `line` without the whitespace `str.split()` splits on at
/// either end.
pub fn python_strip(line: &str) -> &str {
    line.trim_matches(python_space)
}

/// `str.isspace()`'s characters: Unicode's whitespace and the separators U+001C–U+001F.
fn python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Writes `wikitext-2/{train,valid,test}.txt` under `root`: wikitext's layout (a blank
/// line, a ` = heading = `, a blank line, two paragraphs, over and over; words spaced
/// as wikitext's are), Zipf-like word frequencies over the vocabulary, and exactly the
/// shape's tokens and lines per file; every word appears in train.
pub fn prepare(root: &Path, seed: u64, scale: Scale) -> Result<Vec<PathBuf>, DataError> {
    let (vocabulary, tokens, line_counts) = shape(scale);
    // The file holds every word but `<eos>`; "=" only in headings, the rest ranked.
    let ranked: Vec<String> = (0..vocabulary - 2).map(ranked_word).collect();
    let zipf = Weighted::new((0..ranked.len()).map(|r| 1.0 / (r as f64 + 1.5)));
    let mut written = Vec::new();
    for (i, file) in FILES.iter().enumerate() {
        let mut rng = Rng::new(seed, 0x5749_4B49_0000 + i as u64);
        let layout = layout(line_counts[i], tokens[i] - line_counts[i], &mut rng);
        let headings = layout.iter().filter(|l| l.heading).count();
        let plain = tokens[i] - line_counts[i] - 2 * headings;
        let stream = if i == 0 {
            covering(&zipf, plain, &mut rng)
        } else {
            (0..plain).map(|_| zipf.draw(&mut rng)).collect()
        };
        let relative = format!("{FOLDER}/{file}");
        let mut out = make::create(root, &relative)?;
        let path = root.join(&relative);
        write_lines(&mut out, &layout, &stream, &ranked).map_err(DataError::io(&path))?;
        out.flush().map_err(DataError::io(&path))?;
        written.push(PathBuf::from(relative));
    }
    Ok(written)
}

/// The word of rank `rank`: `<unk>` second (wikitext's is among its most frequent),
/// the others made of syllables, shorter for the more frequent.
fn ranked_word(rank: usize) -> String {
    const CONSONANTS: &[u8] = b"bdfgklmnprstvz";
    const VOWELS: &[u8] = b"aeiou";
    let mut n = match rank {
        1 => return "<unk>".into(),
        0 => 1,
        r => r,
    };
    let base = CONSONANTS.len() * VOWELS.len();
    let mut word = Vec::new();
    while n > 0 {
        let s = (n - 1) % base;
        word.push(CONSONANTS[s / VOWELS.len()]);
        word.push(VOWELS[s % VOWELS.len()]);
        n = (n - 1) / base;
    }
    String::from_utf8(word).expect("ASCII")
}

/// One line of a made file.
struct Line {
    heading: bool,
    /// Words besides a heading's two `=`.
    words: usize,
}

/// The lines of a file of `lines` lines holding `words` words (no `<eos>`): blank,
/// heading (1–3 words between `=`), blank, paragraph, paragraph, …; the paragraphs share
/// what the headings leave, in random proportions, at least one word each.
fn layout(lines: usize, words: usize, rng: &mut Rng) -> Vec<Line> {
    let mut out: Vec<Line> = (0..lines)
        .map(|i| Line {
            heading: i % 5 == 1,
            words: if i % 5 == 1 {
                1 + rng.below(3) as usize
            } else {
                0
            },
        })
        .collect();
    let in_headings: usize = out
        .iter()
        .map(|l| l.words + 2 * usize::from(l.heading))
        .sum();
    let paragraphs: Vec<usize> = (0..lines).filter(|i| i % 5 >= 3).collect();
    let left = words.saturating_sub(in_headings);
    let weights: Vec<f64> = paragraphs.iter().map(|_| 0.2 + rng.unit()).collect();
    let total: f64 = weights.iter().sum();
    let spare = left.saturating_sub(paragraphs.len());
    let mut given = 0;
    for (&at, w) in paragraphs.iter().zip(&weights) {
        out[at].words = 1 + (spare as f64 * w / total) as usize;
        given += out[at].words;
    }
    for k in 0..left.saturating_sub(given) {
        out[paragraphs[k % paragraphs.len()]].words += 1;
    }
    out
}

/// `n` ranks in random order, every rank at least once, each about as often as `zipf`
/// makes it.
fn covering(zipf: &Weighted, n: usize, rng: &mut Rng) -> Vec<usize> {
    let ranks = zipf.len();
    let mut counts: Vec<usize> = (0..ranks)
        .map(|r| ((n as f64 * zipf.probability(r)) as usize).max(1))
        .collect();
    let mut sum: usize = counts.iter().sum();
    let mut r = 0;
    while sum != n {
        if sum < n {
            counts[r % ranks] += 1;
            sum += 1;
        } else if counts[r % ranks] > 1 {
            counts[r % ranks] -= 1;
            sum -= 1;
        }
        r += 1;
    }
    let mut stream: Vec<usize> = counts
        .iter()
        .enumerate()
        .flat_map(|(rank, &c)| std::iter::repeat_n(rank, c))
        .collect();
    rng.shuffle(&mut stream);
    stream
}

/// Writes the lines: ` \n` for a blank one, ` w w … \n` otherwise (a heading
/// ` = w … = \n`), the words taken from `stream` in order.
fn write_lines(
    out: &mut impl Write,
    layout: &[Line],
    stream: &[usize],
    ranked: &[String],
) -> std::io::Result<()> {
    let mut next = stream.iter();
    for line in layout {
        out.write_all(b" ")?;
        if line.heading {
            out.write_all(b"= ")?;
        }
        for _ in 0..line.words {
            let rank = *next.next().expect("the stream holds the layout's words");
            out.write_all(ranked[rank].as_bytes())?;
            out.write_all(b" ")?;
        }
        if line.heading {
            out.write_all(b"= ")?;
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}
