//! recom (neural_collaborative_filtering ncf.py): NeuMF, a GMF branch (user·item embeddings
//! of `factors`) beside an MLP branch (user‖item embeddings of layers[0]/2 each, then the
//! `layers` with ReLU), a final Linear to one logit; BCE on (user, item, label) batches;
//! Adam.
//!
//! Data as the script's (ncf.py:124-141,175; dataset.py): a synthetic training set in
//! ml-20m's shape, made once at build time and timed as the script's `loading_data` stage
//! (skip_obs 0: one observation), then `CFTrainDataset`'s samples: of every
//! `negative_samples + 1` (5) consecutive ones, the first is a positive pair of the set
//! (label 1), the others the same user with an item drawn uniformly until it is not one of
//! theirs (label 0). Each step a fresh batch of samples at random indices, made on the host
//! by a loader of `workers` threads whose iterator each observation starts inside its
//! timer and stops at its end, and copied to the device. The set: `ratings` positive pairs
//! spread evenly over the `users` (at most `items − 1` each, so every user has a negative),
//! each user's items drawn uniformly without repeats.
//! Not as the script: the indices are drawn with replacement (its shuffle draws a
//! permutation of the ~99 M samples at each iterator), the workers are threads making whole
//! batches (its make one sample a call in Python), and the set is random, not ml-20m's.
//! Args: `batch_size` (fast.json: 2048), `factors`/`f` (64), `layers` ("256 256 128 64"),
//! `learning_rate`/`l` (0.0005), `negative_samples` (4), `workers` (fast.json: 8), `users`
//! (138493), `items` (26744) and `ratings` (19,861,770), ml-20m's training counts; with
//! other `users` or `items` and no `ratings`, ml-20m's density of pairs.

use super::host_loader::{EpochLoader, Maker, Order, stream};
use super::loader::Rng;
use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs, SKIP_OBS};
use std::time::Instant;
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Kind, Reduction, Tensor};

pub(super) const SOURCE: &str = concat!(
    include_str!("recom.rs"),
    include_str!("loader.rs"),
    include_str!("host_loader.rs")
);

/// Mixed into the seed for the training set's draws.
const SET_STREAMS: u64 = 0x5241_5449_4e47_5321;

/// The positive (user, item) pairs, by user: user u's items are
/// `items[offsets[u]..offsets[u + 1]]`, sorted.
struct Ratings {
    offsets: Vec<u32>,
    items: Vec<u32>,
    /// Items there are (the embeddings' rows).
    nb_items: u32,
}

impl Ratings {
    /// `ratings` pairs (at most `items − 1` a user) over `users`, drawn from `seed`.
    fn new(users: u32, items: u32, ratings: u64, seed: u64) -> Ratings {
        let (users64, items64) = (u64::from(users), u64::from(items));
        let mut offsets = Vec::with_capacity(users as usize + 1);
        let mut all: Vec<u32> = Vec::with_capacity(ratings.min(users64 * (items64 - 1)) as usize);
        offsets.push(0);
        for u in 0..users {
            let even = ratings / users64 + u64::from(u64::from(u) < ratings % users64);
            let want = even.min(items64 - 1) as usize;
            // Streams of their own, not the batches'.
            let mut rng = stream(seed ^ SET_STREAMS, u64::from(u));
            // More than half the items: draw the ones left out instead, so that drawing
            // until distinct stays a few passes however dense the set.
            let dense = want as u64 * 2 > items64;
            let draw = if dense { items as usize - want } else { want };
            let mut mine: Vec<u32> = Vec::with_capacity(draw);
            // Repeats go and are drawn again.
            while mine.len() < draw {
                let missing = draw - mine.len();
                mine.extend((0..missing).map(|_| (rng.next() % items64) as u32));
                mine.sort_unstable();
                mine.dedup();
            }
            if dense {
                all.extend((0..items).filter(|j| mine.binary_search(j).is_err()));
            } else {
                all.extend(mine);
            }
            offsets.push(all.len() as u32);
        }
        Ratings {
            offsets,
            items: all,
            nb_items: items,
        }
    }

    /// The training file's positive pairs, by user (the script's `self.data` and
    /// `self.mat`): `nb_users` and `nb_items` one more than the largest ids, each user's
    /// items sorted and once.
    fn from_pairs(pairs: &mlbench_datasets::movielens::Pairs) -> Ratings {
        let (users, items) = pairs.counts();
        let mut by_user: Vec<Vec<u32>> = vec![Vec::new(); users];
        for (&u, &j) in pairs.users.iter().zip(&pairs.items) {
            by_user[u as usize].push(j as u32);
        }
        let mut offsets = Vec::with_capacity(users + 1);
        let mut all = Vec::with_capacity(pairs.items.len());
        offsets.push(0);
        for mut mine in by_user {
            mine.sort_unstable();
            mine.dedup();
            all.extend(mine);
            offsets.push(all.len() as u32);
        }
        Ratings {
            offsets,
            items: all,
            nb_items: items as u32,
        }
    }

    /// The positive pairs (`len(self.data)`).
    fn len(&self) -> u64 {
        self.items.len() as u64
    }

    /// Pair `i`: (user, item).
    fn pair(&self, i: u64) -> (u32, u32) {
        let user = self.offsets.partition_point(|&o| u64::from(o) <= i) - 1;
        (user as u32, self.items[i as usize])
    }

    /// Whether `user` rated `item` (`(u, j) in self.mat`).
    fn has(&self, user: u32, item: u32) -> bool {
        let (a, b) = (self.offsets[user as usize], self.offsets[user as usize + 1]);
        self.items[a as usize..b as usize]
            .binary_search(&item)
            .is_ok()
    }
}

/// `CFTrainDataset` batched: `count` samples at random indices.
struct Samples {
    ratings: Ratings,
    negatives: u64,
    count: usize,
}

/// One batch on the host: users, items, labels.
type Batch = (Vec<i64>, Vec<i64>, Vec<f32>);

impl Samples {
    /// `__getitem__(idx)`.
    fn sample(&self, idx: u64, rng: &mut Rng) -> (u32, u32, f32) {
        let (user, item) = self.ratings.pair(idx / (self.negatives + 1));
        if idx % (self.negatives + 1) == 0 {
            return (user, item, 1.0);
        }
        let nb_items = u64::from(self.ratings.nb_items);
        loop {
            let j = (rng.next() % nb_items) as u32;
            if !self.ratings.has(user, j) {
                return (user, j, 0.0);
            }
        }
    }
}

impl Maker for Samples {
    type Batch = Batch;

    fn make(&self, seed: u64, index: u64) -> Batch {
        let mut rng = stream(seed, index);
        let len = self.ratings.len() * (self.negatives + 1);
        let mut batch = (
            Vec::with_capacity(self.count),
            Vec::with_capacity(self.count),
            Vec::with_capacity(self.count),
        );
        for _ in 0..self.count {
            let (user, item, label) = self.sample(rng.next() % len, &mut rng);
            batch.0.push(i64::from(user));
            batch.1.push(i64::from(item));
            batch.2.push(label);
        }
        batch
    }
}

struct NeuMf {
    mf_user: nn::Embedding,
    mf_item: nn::Embedding,
    mlp_user: nn::Embedding,
    mlp_item: nn::Embedding,
    mlp: Vec<nn::Linear>,
    last: nn::Linear,
    opt: nn::Optimizer,
    batch_size: i64,
    /// `train_dataloader`.
    loader: EpochLoader<Samples>,
    /// The `loading_data` stage's one observation (s), until it is logged.
    loading_data: Option<f64>,
    kind: Kind,
    device: tch::Device,
    /// `losses.sum`: the observation's losses × their batch sizes.
    losses_sum: f64,
    _vs: nn::VarStore,
}

/// `with chrono.time('loading_data', skip_obs=0)`: the training set and its loader.
fn loading_data(
    ctx: &Ctx,
    args: &BenchArgs,
    batch_size: i64,
) -> Result<(EpochLoader<Samples>, f64), BenchError> {
    let start = Instant::now();
    let negatives = ctx.int(args, &["negative_samples"], 4)?;
    let workers = ctx.int(args, &["workers"], 0)?.max(0) as usize;
    let seed = args.seed as u64;
    let ratings = match ctx.synthetic {
        true => synthetic_ratings(ctx, args, seed)?,
        false => file_ratings(ctx, args)?,
    };
    if negatives < 0 {
        return Err(ctx.arg_error("--negative-samples: at least 0"));
    }
    let samples = Samples {
        ratings,
        negatives: negatives as u64,
        count: batch_size as usize,
    };
    let loader = EpochLoader::new(samples, seed, workers, Order::Continue);
    Ok((loader, start.elapsed().as_secs_f64()))
}

/// ncf.py:124: `CFTrainDataset(os.path.join(args.data, 'train-ratings.csv'))`, the job's
/// data folder (`$DATA_DIRECTORY/ml-20m`, convert.py's output).
fn file_ratings(ctx: &Ctx, args: &BenchArgs) -> Result<Ratings, BenchError> {
    use mlbench_datasets::movielens;
    let Some(folder) = ctx.string(args, &["data"])?.filter(|d| !d.is_empty()) else {
        let why = format!("the job names no data folder; {}", ctx.prepare_hint());
        return Err(ctx.arg_error(why));
    };
    let path = std::path::Path::new(&folder).join(movielens::TRAIN);
    let pairs = movielens::read_pairs(&path)
        .map_err(|e| ctx.arg_error(format!("{e}; {}", ctx.prepare_hint())))?;
    let ratings = Ratings::from_pairs(&pairs);
    let most = u64::from(u32::MAX);
    if ratings.nb_items < 2 || ratings.len() == 0 || ratings.len() > most {
        let why = "the training pairs need 2 items at least, 1 to 2³² pairs";
        return Err(ctx.arg_error(format!("{}: {why}", path.display())));
    }
    Ok(ratings)
}

/// With `--synthetic-data`: a random set in ml-20m's shape.
fn synthetic_ratings(ctx: &Ctx, args: &BenchArgs, seed: u64) -> Result<Ratings, BenchError> {
    let users = ctx.size(args, &["users"], 138_493)?;
    let items = ctx.size(args, &["items"], 26_744)?;
    // Without --ratings, ml-20m's density (19,861,770 of 138,493 × 26,744 pairs), so that
    // a smaller --users or --items keeps a sparse set, as the real one is.
    let density = 19_861_770.0 / (138_493.0 * 26_744.0);
    let sparse = ((users.max(1) as f64) * (items.max(1) as f64) * density).round() as i64;
    let ratings = ctx.size(args, &["ratings"], sparse.max(users.max(1)))?;
    let most = i64::from(u32::MAX);
    if items < 2 || users > most || items > most || ratings > most {
        return Err(ctx.arg_error(
            "--items at least 2 (a rated item and another), --users, --items and --ratings \
             below 2³²",
        ));
    }
    Ok(Ratings::new(
        users as u32,
        items as u32,
        ratings as u64,
        seed,
    ))
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    Ok(Box::new(new_model(ctx, args)?))
}

fn new_model(ctx: &Ctx, args: &BenchArgs) -> Result<NeuMf, BenchError> {
    let batch_size = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let factors = ctx.size(args, &["factors", "f"], 64)?;
    let layers = ctx.int_list(args, &["layers"], &[256, 256, 128, 64])?;
    let lr = ctx.float(args, &["learning_rate", "l", "lr"], 0.0005)?;
    let (loader, loading_data) = loading_data(ctx, args, batch_size)?;
    let users = i64::from(loader.maker().ratings.offsets.len() as u32 - 1);
    let items = i64::from(loader.maker().ratings.nb_items);
    if layers[0] % 2 != 0 {
        return Err(ctx.arg_error("--layers: the first layer must be even (user and item halves)"));
    }
    let mut vs = nn::VarStore::new(ctx.device);
    let root = vs.root();
    let emb = |name: &str, n, d| {
        let cfg = nn::EmbeddingConfig {
            ws_init: nn::Init::Randn {
                mean: 0.0,
                stdev: 0.01,
            },
            ..Default::default()
        };
        nn::embedding(&root / name, n, d, cfg)
    };
    let mf_user = emb("mf_user_embed", users, factors);
    let mf_item = emb("mf_item_embed", items, factors);
    let mlp_user = emb("mlp_user_embed", users, layers[0] / 2);
    let mlp_item = emb("mlp_item_embed", items, layers[0] / 2);
    // neumf.py:39-52: Glorot-uniform weights for the MLP, LeCun-uniform for the last
    // layer; the biases as nn.Linear leaves them.
    let mlp = layers
        .windows(2)
        .enumerate()
        .map(|(i, w)| {
            let glorot = (6.0 / (w[0] + w[1]) as f64).sqrt();
            super::linear_uniform(&root / format!("mlp{i}"), w[0], w[1], glorot, true)
        })
        .collect();
    let last_in = factors + layers[layers.len() - 1];
    let lecun = (3.0 / last_in as f64).sqrt();
    let last = super::linear_uniform(&root / "final", last_in, 1, lecun, true);
    vs.set_kind(ctx.kind);
    let opt = nn::Adam::default()
        .build(&vs, lr)
        .map_err(|e| ctx.failed(e.to_string()))?;
    Ok(NeuMf {
        mf_user,
        mf_item,
        mlp_user,
        mlp_item,
        mlp,
        last,
        opt,
        batch_size,
        loader,
        loading_data: Some(loading_data),
        kind: ctx.kind,
        device: ctx.device,
        losses_sum: 0.0,
        _vs: vs,
    })
}

impl Train for NeuMf {
    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        let (user, item, label) = self.loader.next_batch();
        let user = Tensor::from_slice(&user).to_device(self.device);
        let item = Tensor::from_slice(&item).to_device(self.device);
        let label = Tensor::from_slice(&label)
            .view([self.batch_size, 1])
            .to_device(self.device)
            .to_kind(self.kind);
        let gmf = self.mf_user.forward(&user) * self.mf_item.forward(&item);
        let mut mlp = Tensor::cat(
            &[self.mlp_user.forward(&user), self.mlp_item.forward(&item)],
            1,
        );
        for layer in &self.mlp {
            mlp = layer.forward(&mlp).relu();
        }
        let logits = self.last.forward(&Tensor::cat(&[gmf, mlp], 1));
        let loss =
            logits.binary_cross_entropy_with_logits::<Tensor>(&label, None, None, Reduction::Mean);
        self.opt.backward_step(&loss);
        Ok(loss)
    }

    fn begin_observation(&mut self, _observation: u64) {
        self.losses_sum = 0.0;
        // `for batch_index, (user, item, label) in enumerate(train_dataloader)`.
        self.loader.begin();
    }

    fn step(&mut self) -> Result<Logs, BenchError> {
        let loss = self.train_step()?.to_kind(Kind::Double).double_value(&[]);
        // `losses.update(loss.item(), user.size(0))`.
        self.losses_sum += loss * self.batch_size as f64;
        let logs = Logs::loss(loss);
        // Filed with the first step: the stage was timed before the loop, at build.
        Ok(match self.loading_data.take() {
            Some(seconds) => logs.stage("loading_data", seconds),
            None => logs,
        })
    }

    fn end_observation(&mut self, _observation: u64) -> Logs {
        self.loader.end();
        Logs::none()
    }

    fn after_observation(&mut self, _observation: u64, _train_seconds: f64) -> Logs {
        // ncf.py:192: `exp.log_epoch_loss(losses.sum)`, after the timer.
        Logs::none().epoch_loss(self.losses_sum)
    }

    fn skip_obs(&self, stage: &str) -> u64 {
        if stage == "loading_data" { 0 } else { SKIP_OBS }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sparse and dense users alike: distinct sorted items, as many as asked (a dense one,
    /// 499 of 500 items, is drawn as its one item left out, not by rejection).
    #[test]
    fn sparse_and_dense_sets_are_drawn_exactly() {
        for (users, items, ratings) in [(2u32, 100u32, 10u64), (40, 500, 40 * 499)] {
            let r = Ratings::new(users, items, ratings, 3);
            assert_eq!(r.len(), ratings);
            for u in 0..users as usize {
                let mine = &r.items[r.offsets[u] as usize..r.offsets[u + 1] as usize];
                assert_eq!(mine.len() as u64, ratings / u64::from(users));
                assert!(mine.windows(2).all(|w| w[0] < w[1]) && mine.iter().all(|&i| i < items));
            }
        }
    }

    /// Pairs spread evenly (10 over 3 users: 4, 3, 3), no repeats, sorted; each user
    /// keeps at least one item unrated (5 items: at most 4 each).
    #[test]
    fn the_ratings_are_spread_over_the_users_without_repeats() {
        let r = Ratings::new(3, 5, 10, 7);
        assert_eq!(r.offsets, [0, 4, 7, 10]);
        for u in 0..3 {
            let mine = &r.items[r.offsets[u] as usize..r.offsets[u + 1] as usize];
            assert!(mine.windows(2).all(|w| w[0] < w[1]), "{mine:?}");
            assert!(mine.iter().all(|&i| i < 5 && r.has(u as u32, i)));
        }
        assert_eq!(r.pair(0).0, 0);
        assert_eq!(r.pair(4).0, 1);
        assert_eq!(r.pair(9), (2, r.items[9]));
        let capped = Ratings::new(2, 3, 100, 7);
        assert_eq!(capped.offsets, [0, 2, 4]);
    }

    /// The training file's pairs as the script's `data` and `mat`: ids counted from the
    /// largest (user 3 unrated still counts: `nb_users` is 4), each user's items sorted,
    /// a repeated pair once; item 7 the largest, so 8 items.
    #[test]
    fn the_training_file_gives_the_users_items_and_their_pairs() {
        let pairs = mlbench_datasets::movielens::Pairs {
            users: vec![2, 0, 0, 2, 0, 2, 3],
            items: vec![5, 7, 1, 0, 1, 5, 4],
        };
        let r = Ratings::from_pairs(&pairs);
        assert_eq!(r.nb_items, 8);
        assert_eq!(r.offsets, [0, 2, 2, 4, 5]);
        assert_eq!(r.items, [1, 7, 0, 5, 4]);
        assert!(r.has(0, 7) && r.has(2, 0) && !r.has(1, 1) && !r.has(0, 5));
        assert_eq!(r.pair(3), (2, 5));
    }

    /// `__getitem__`: index 5k is pair k, label 1; 5k + 1 … 5k + 4 pair k's user with an
    /// item they did not rate, label 0. A batch depends on the seed and its index alone.
    #[test]
    fn samples_are_the_scripts_positives_and_negatives() {
        let samples = Samples {
            ratings: Ratings::new(4, 6, 12, 1),
            negatives: 4,
            count: 50,
        };
        let mut rng = stream(3, 0);
        for k in 0..samples.ratings.len() {
            let (user, item) = samples.ratings.pair(k);
            assert_eq!(samples.sample(5 * k, &mut rng), (user, item, 1.0));
            for i in 1..5 {
                let (u, j, label) = samples.sample(5 * k + i, &mut rng);
                assert_eq!((u, label), (user, 0.0));
                assert!(!samples.ratings.has(u, j));
            }
        }
        let (users, items, labels) = samples.make(3, 0);
        assert_eq!((users.len(), items.len(), labels.len()), (50, 50, 50));
        assert!(labels.contains(&1.0) && labels.contains(&0.0));
        assert_eq!(
            samples.make(3, 0),
            (users.clone(), items.clone(), labels.clone())
        );
        assert_ne!(samples.make(3, 1), (users, items, labels));
    }

    /// Each step takes the loader's next batch, observation after observation; the first
    /// step alone files `loading_data`.
    #[test]
    fn each_step_takes_the_next_batch() {
        let int = mlbench_schema::value::Value::Int;
        let extra = [
            ("users", int(5)),
            ("items", int(7)),
            ("layers", "8 4".into()),
            ("synthetic_data", mlbench_schema::value::Value::Bool(true)),
        ];
        let args = BenchArgs {
            batch_size: 4,
            number: 1,
            repeat: 1,
            seed: 1,
            extra: extra.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        };
        let spec = crate::bench::DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        let ctx = Ctx::new("recom", &args, spec).unwrap();
        let mut model = new_model(&ctx, &args).unwrap();
        let mut stages = Vec::new();
        for r in 0..2 {
            model.begin_observation(r);
            for _ in 0..3 {
                let logs = model.step().unwrap();
                assert!(logs.loss.unwrap().is_finite());
                stages.extend(logs.stages.iter().map(|s| s.0));
            }
            let _ = model.end_observation(r);
        }
        assert_eq!(model.loader.position(), 6);
        assert_eq!(stages, ["loading_data"]);
        assert_eq!(
            (model.skip_obs("loading_data"), model.skip_obs("x")),
            (0, SKIP_OBS)
        );
    }
}
