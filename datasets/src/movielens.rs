//! MovieLens 20M (recom). The suite downloads `ml-20m.zip` into `$DATA_DIRECTORY`
//! (`ml-20m/ratings.csv`: `userId,movieId,rating,timestamp`, sorted by user then movie);
//! run.sh converts it once with convert.py (users with 20 ratings or more; ids renumbered
//! from 0 in the order first seen; each user's latest rating held out) into the three
//! tab-separated files ncf.py reads from its positional `data` (`$DATA_DIRECTORY/ml-20m`):
//! `train-ratings.csv` (`user item 1`), `test-ratings.csv` (`user item 1`, one a user) and
//! `test-negative.csv` (999 items a user). run.sh converts only when test-negative.csv is
//! missing, so the maker writes all four and both runtimes read the same bytes.

use crate::make::{self, Rng, Weighted};
use crate::{DataError, Scale};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The folder under the data root.
pub const FOLDER: &str = "ml-20m";
/// The download's ratings.
pub const RATINGS: &str = "ratings.csv";
/// convert.py's training pairs.
pub const TRAIN: &str = "train-ratings.csv";
/// convert.py's held-out pair per user.
pub const TEST: &str = "test-ratings.csv";
/// convert.py's negatives per user.
pub const NEGATIVES: &str = "test-negative.csv";
/// ratings.csv's header.
pub const HEADER: &str = "userId,movieId,rating,timestamp";
/// Negatives per user (run.sh's `--negatives 999`).
pub const NEGATIVES_PER_USER: usize = 999;
/// convert.py's `MIN_RATINGS`: every made user has at least this many.
pub const MIN_RATINGS: usize = 20;

/// The shape of a made set: users, movies (ids drawn from `1..=max_id`), ratings, the most
/// ratings a user has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Users, numbered from 1.
    pub users: usize,
    /// Distinct movie ids that may be rated.
    pub movies: usize,
    /// The largest movie id.
    pub max_id: u32,
    /// Ratings in all.
    pub ratings: usize,
    /// The most ratings one user has.
    pub most: usize,
}

/// ml-20m's 138,493 users, 26,744 movies (ids up to 131,262) and 20,000,263 ratings; the
/// most one user has is capped at 2,000 (the real one has 9,254); or the smoke size.
pub fn shape(scale: Scale) -> Shape {
    match scale {
        Scale::Full => Shape {
            users: 138_493,
            movies: 26_744,
            max_id: 131_262,
            ratings: 20_000_263,
            most: 2_000,
        },
        Scale::Smoke => Shape {
            users: 40,
            movies: 150,
            max_id: 400,
            ratings: 1_600,
            most: 100,
        },
    }
}

/// ml-20m's first and last timestamps (seconds since 1970).
const TIME: (i64, i64) = (789_652_009, 1_427_784_002);
/// The share of each rating 0.5, 1.0, … 5.0 (about ml-20m's).
const STARS: [f64; 10] = [1.1, 3.3, 1.4, 7.2, 4.4, 21.3, 10.5, 27.7, 7.7, 14.5];

/// ratings.csv's columns, row by row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ratings {
    /// `userId`.
    pub users: Vec<u32>,
    /// `movieId`.
    pub movies: Vec<u32>,
    /// `rating` (0.5 to 5.0).
    pub ratings: Vec<f32>,
    /// `timestamp` (seconds since 1970).
    pub timestamps: Vec<i64>,
}

/// Pairs of user and item (convert.py's ids, from 0).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pairs {
    /// Users.
    pub users: Vec<i64>,
    /// Items.
    pub items: Vec<i64>,
}

impl Pairs {
    /// `max(user) + 1` and `max(item) + 1`: ncf.py's `nb_users` and `nb_items` (of the
    /// training file).
    pub fn counts(&self) -> (usize, usize) {
        let most = |v: &[i64]| v.iter().max().map_or(0, |&m| m as usize + 1);
        (most(&self.users), most(&self.items))
    }
}

/// test-negative.csv: `per_user` items on each line, line after line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Negatives {
    /// Items on a line.
    pub per_user: usize,
    /// The items, row-major.
    pub items: Vec<i64>,
}

/// Reads ratings.csv (its header checked).
pub fn read_ratings(path: &Path) -> Result<Ratings, DataError> {
    let text = read_text(path)?;
    let mut rows = text.lines().enumerate();
    if rows.next().map(|(_, h)| h.trim_end()) != Some(HEADER) {
        return Err(bad(path, 1, format!("expected the header `{HEADER}`")));
    }
    let mut out = Ratings::default();
    for (at, row) in rows {
        let f = fields(path, at + 1, row, ',', 4)?;
        out.users.push(number(path, at + 1, f[0])?);
        out.movies.push(number(path, at + 1, f[1])?);
        out.ratings.push(number(path, at + 1, f[2])?);
        out.timestamps.push(number(path, at + 1, f[3])?);
    }
    Ok(out)
}

/// Reads train-ratings.csv or test-ratings.csv as ncf.py does: `user\titem\trating`;
/// a training row counts when its rating is above 0 (all of convert.py's are 1).
pub fn read_pairs(path: &Path) -> Result<Pairs, DataError> {
    let text = read_text(path)?;
    let mut out = Pairs::default();
    for (at, row) in text.lines().enumerate() {
        let f = fields(path, at + 1, row, '\t', 3)?;
        let rating: f64 = number(path, at + 1, f[2])?;
        if rating > 0.0 {
            out.users.push(number(path, at + 1, f[0])?);
            out.items.push(number(path, at + 1, f[1])?);
        }
    }
    Ok(out)
}

/// Reads test-negative.csv: every line the same number of tab-separated items.
pub fn read_negatives(path: &Path) -> Result<Negatives, DataError> {
    let text = read_text(path)?;
    let mut out = Negatives::default();
    for (at, row) in text.lines().enumerate() {
        let before = out.items.len();
        for field in row.split('\t') {
            out.items.push(number(path, at + 1, field)?);
        }
        let width = out.items.len() - before;
        if at == 0 {
            out.per_user = width;
        } else if width != out.per_user {
            let what = format!("{width} items; line 1 has {}", out.per_user);
            return Err(bad(path, at + 1, what));
        }
    }
    Ok(out)
}

fn read_text(path: &Path) -> Result<String, DataError> {
    String::from_utf8(make::read(path)?).map_err(|e| DataError::Format {
        path: path.to_path_buf(),
        place: format!("byte {}", e.utf8_error().valid_up_to()),
        what: "not UTF-8".into(),
    })
}

fn bad(path: &Path, line: usize, what: String) -> DataError {
    DataError::Format {
        path: path.to_path_buf(),
        place: format!("line {line}"),
        what,
    }
}

fn fields<'a>(
    path: &Path,
    line: usize,
    row: &'a str,
    sep: char,
    n: usize,
) -> Result<Vec<&'a str>, DataError> {
    let f: Vec<&str> = row.split(sep).collect();
    if f.len() == n {
        Ok(f)
    } else {
        Err(bad(path, line, format!("{} fields, expected {n}", f.len())))
    }
}

fn number<T: std::str::FromStr>(path: &Path, line: usize, field: &str) -> Result<T, DataError> {
    field.trim().parse().map_err(|_| {
        bad(
            path,
            line,
            format!("`{field}` is not a number of this column"),
        )
    })
}

/// Writes `ml-20m/{ratings,train-ratings,test-ratings,test-negative}.csv` under `root`.
pub fn prepare(root: &Path, seed: u64, scale: Scale) -> Result<Vec<PathBuf>, DataError> {
    let shape = shape(scale);
    let mut rng = Rng::new(seed, 0x4D4C_3230_4D00);
    let ids = movie_ids(&shape, &mut rng);
    // Popularity: Zipf-like over the movies in a random order.
    let mut order: Vec<usize> = (0..ids.len()).collect();
    rng.shuffle(&mut order);
    let popularity = Weighted::new((0..ids.len()).map(|r| 1.0 / (r as f64 + 50.0)));
    let counts = per_user(&shape, &mut rng);
    let relative = |name: &str| format!("{FOLDER}/{name}");
    let mut csv = make::create(root, &relative(RATINGS))?;
    let io = |name: &str| DataError::io(root.join(relative(name)));
    writeln!(csv, "{HEADER}").map_err(io(RATINGS))?;
    let mut train = make::create(root, &relative(TRAIN))?;
    let mut test = make::create(root, &relative(TEST))?;
    let mut item_of = vec![u32::MAX; ids.len()]; // convert.py's ids, first seen first
    let mut known = 0u32;
    let mut rated: Vec<Vec<u32>> = Vec::with_capacity(shape.users);
    let mut taken = vec![false; ids.len()];
    let stars = Weighted::new(STARS);
    for (user, &count) in counts.iter().enumerate() {
        let mut movies = Vec::with_capacity(count);
        while movies.len() < count {
            let m = order[popularity.draw(&mut rng)];
            if !std::mem::replace(&mut taken[m], true) {
                movies.push(m);
            }
        }
        movies.sort_unstable();
        let span = (rng.unit() * 3.0e7) as i64 + count as i64;
        let start = TIME.0 + rng.below((TIME.1 - TIME.0 - span) as u64) as i64;
        let mut latest = (i64::MIN, 0u32);
        let mut items = Vec::with_capacity(count);
        for &m in &movies {
            taken[m] = false;
            let stamp = start + rng.below(span as u64 + 1) as i64;
            let star = (stars.draw(&mut rng) + 1) as f64 / 2.0;
            writeln!(csv, "{},{},{star:.1},{stamp}", user + 1, ids[m]).map_err(io(RATINGS))?;
            if item_of[m] == u32::MAX {
                item_of[m] = known;
                known += 1;
            }
            if stamp >= latest.0 {
                latest = (stamp, item_of[m]);
            }
            items.push(item_of[m]);
        }
        writeln!(test, "{user}\t{}\t1", latest.1).map_err(io(TEST))?;
        items.retain(|&i| i != latest.1);
        items.sort_unstable();
        for i in &items {
            writeln!(train, "{user}\t{i}\t1").map_err(io(TRAIN))?;
        }
        rated.push(items);
    }
    for (file, name) in [(csv, RATINGS), (train, TRAIN), (test, TEST)] {
        file.into_inner().map_err(|e| io(name)(e.into_error()))?;
    }
    negatives(root, &relative(NEGATIVES), &rated, known, &mut rng)?;
    Ok([RATINGS, TRAIN, TEST, NEGATIVES]
        .map(|n| PathBuf::from(relative(n)))
        .to_vec())
}

/// `shape.movies` distinct ids in `1..=max_id`, ascending (selection sampling).
fn movie_ids(shape: &Shape, rng: &mut Rng) -> Vec<u32> {
    let mut ids = Vec::with_capacity(shape.movies);
    for id in 1..=shape.max_id {
        let (left, pool) = (shape.movies - ids.len(), (shape.max_id - id + 1) as u64);
        if rng.below(pool) < left as u64 {
            ids.push(id);
        }
    }
    ids
}

/// Each user's number of ratings: at least [`MIN_RATINGS`], at most `shape.most`, a
/// heavy tail, `shape.ratings` in all.
fn per_user(shape: &Shape, rng: &mut Rng) -> Vec<usize> {
    let weights: Vec<f64> = (0..shape.users)
        .map(|_| (1.0 - rng.unit()).powf(-0.9) - 1.0)
        .collect();
    let total: f64 = weights.iter().sum();
    let spare = (shape.ratings - MIN_RATINGS * shape.users) as f64;
    let mut counts: Vec<usize> = weights
        .iter()
        .map(|w| (MIN_RATINGS + (spare * w / total) as usize).min(shape.most))
        .collect();
    // What the cap cut off goes to the others in proportion again; the last few one by one.
    let mut left = shape.ratings - counts.iter().sum::<usize>();
    for _ in 0..32 {
        let open: f64 = (0..shape.users)
            .filter(|&u| counts[u] < shape.most)
            .map(|u| weights[u])
            .sum();
        if left < shape.users || open <= 0.0 {
            break;
        }
        let spare = left as f64;
        for (count, w) in counts.iter_mut().zip(&weights) {
            if *count < shape.most {
                let more = ((spare * w / open) as usize).min(shape.most - *count);
                *count += more;
                left -= more;
            }
        }
    }
    let mut at = 0;
    while left > 0 {
        if counts[at % shape.users] < shape.most {
            counts[at % shape.users] += 1;
            left -= 1;
        }
        at += 1;
    }
    counts
}

/// test-negative.csv: for each user, 999 items drawn with replacement from the items the
/// user has no training row for (convert.py's `all_items - set(user_to_items[user])`,
/// taken after the held-out item was popped: that item may be drawn).
fn negatives(
    root: &Path,
    relative: &str,
    rated: &[Vec<u32>],
    items: u32,
    rng: &mut Rng,
) -> Result<(), DataError> {
    use std::fmt::Write as _;
    let mut out = make::create(root, relative)?;
    let path = root.join(relative);
    let io = |source| DataError::Io {
        path: path.clone(),
        source,
    };
    let mut line = String::new();
    for user_items in rated {
        line.clear();
        for k in 0..NEGATIVES_PER_USER {
            let item = loop {
                let i = rng.below(u64::from(items)) as u32;
                if user_items.binary_search(&i).is_err() {
                    break i;
                }
            };
            let sep = if k == 0 { "" } else { "\t" };
            let _ = write!(line, "{sep}{item}"); // a String: cannot fail
        }
        line.push('\n');
        out.write_all(line.as_bytes()).map_err(io)?;
    }
    out.flush().map_err(io)
}
