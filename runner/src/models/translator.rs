//! translator (natural_language_processing/rnn_translator/pytorch train.py, MLPerf's GNMT) as
//! its default `--model-config` builds it: hidden 1024, 4 layers, dropout 0.2, one embedding
//! shared by encoder and decoder (padding index 0), time-first tensors.
//!
//! - Encoder (`ResidualRecurrentEncoder`): a bidirectional LSTM H→2H run on packed sequences
//!   (each sentence's backward pass starts at its own last token), an LSTM 2H→H, then LSTMs
//!   H→H with residual connections; dropout before every layer but the first.
//! - Decoder (`ResidualRecurrentDecoder`, gnmt_v2 attention): an LSTM H→H whose outputs query
//!   normalised Bahdanau attention over the encoder's outputs (pads masked at −65504 before
//!   the softmax), then `num_layers − 1` LSTMs over [dropout(x) ‖ attention] 2H→H, residual
//!   from the second, and a classifier H→vocab. It reads `tgt[:-1]` and predicts `tgt[1:]`.
//! - Loss (`LabelSmoothing`): 0.9·NLL + 0.1·mean(−log p) over the non-pad targets, summed,
//!   then ÷ the batch's sentences; Adam (lr 5e-4, `--optimization-config`), gradient norm
//!   clipped to 5 (`--grad-clip`), gradients zeroed after the step (`Fp32Optimizer`).
//!
//! Items are sentences: milabench's report counts `batch_size × number` per observation (the
//! trainer's token counts only reach its log). One observation is `Seq2SeqTrainer.optimize`:
//! a `preallocate` pass at its start, inside the timer (a full-length batch of token 4,
//! `max_length_train` × batch, forward and backward without an update), then the batches,
//! the same ones every observation (the script's sampler is seeded by an epoch that stays
//! 0), one `.item()` each. No batch loss is logged (the script logs none); the observation's
//! `epoch_loss` is the trainer's `losses_per_token.avg`: the summed losses of its batches
//! over their target tokens, the first batch left out (`AverageMeter(skip_first=True)`),
//! logged inside the timer.
//! Not as the script, its bugs: the script's trainer hard-codes `self.number = 10` whatever
//! `--number` says and its loop (`if count > self.number: break`) runs 11 batches while the
//! report counts 10; mlbench runs `number` batches.
//!
//! Data: the files train.py reads from `--dataset-dir` (`$DATA_DIRECTORY/wmt16`;
//! `mlbench data prepare --bench translator` writes them): `vocab.bpe.32000` gives the
//! vocabulary (the 4 specials, then one token a line), and the pairs of
//! `train.tok.clean.bpe.32000.{en,de}` are segmented by it (`<s>`, ids, `<\s>`), cut to
//! `--max-size` lines, and kept where both sides have `min_length_train..=max_length_train`
//! ids (`ParallelDataset`, through `mlbench_datasets::wmt`). The order is
//! `BucketingSampler`'s, drawn with torch's own `randperm` and `sort`: a permutation of the
//! pairs cut to whole batches, each shard of 80 batches sorted by source + target length,
//! the batches shuffled; its generator is seeded with an epoch that stays 0, so every
//! observation reads the same first `number` batches (all of them, round again, when the
//! epoch holds fewer). Each batch is collated as the collate function does (sorted by
//! source length, longest first, stable; each side padded to its longest) once on the
//! host, as the script's loader workers do ahead of the step, and copied to the device in
//! the step (`src.cuda()`). With `--synthetic-data`: one shard of random pairs made on the
//! device, lengths uniform in max(2, `min_length_train`)..=`max_length_train`, words
//! random ids in [4, `vocab_size`) (default 32317, MLPerf's vocabulary with the specials),
//! bucketed and shuffled the same way.
//!
//! Args (argparse destinations): `batch_size` (fast.json: 64), `model_config` (a Python
//! dict: `hidden_size`, `num_layers`, `dropout`, `share_embedding`, `bias`, `batch_first`,
//! which changes only the layout and is ignored), `optimization_config` (`{'optimizer':
//! 'Adam', 'lr': …}`; only Adam), `smoothing` (0.1), `grad_clip` (5), `max_length_train`
//! (50), `min_length_train` (0), `max_size`, `no_bucketing`, `math` (fp32 only). The
//! script has no flags for these, so `hidden_size` (1024), `num_layers` (4, at least 2),
//! `dropout` (0.2) and `lr` (5e-4) are also read bare, for test sizes, and `vocab_size`
//! (32317) for synthetic pairs; a bare one wins over the dict. fast.json changes none but
//! `batch_size`.
//!
//! Differences: no `torch.cuda.empty_cache()` at the start and end of each observation (tch
//! has no binding), no validation/BLEU (`--target-bleu`, `--epochs` are recorded only: the
//! timed loop never evaluates); the batches of an observation are collated once, not by
//! `--workers` loader processes at every epoch (the collation is a few thousand integers a
//! batch).

use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use mlbench_datasets::wmt;
use mlbench_schema::pyrepr::py_str;
use mlbench_schema::value::Value;
use std::path::PathBuf;
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Device, Kind, Tensor};

pub(super) const SOURCE: &str = include_str!("translator.rs");

/// seq2seq/data/config.py: `PAD, UNK, BOS, EOS = [0, 1, 2, 3]`; words start at 4.
const PAD: i64 = 0;
const BOS: i64 = 2;
const EOS: i64 = 3;
const FIRST_WORD: i64 = 4;

/// `BucketingSampler`'s `batches_in_shard`: the pairs sorted together by length.
const SHARD_BATCHES: i64 = 80;

/// The sizes and settings, from the arguments.
#[derive(Debug, Clone, PartialEq)]
struct Config {
    batch: i64,
    hidden: i64,
    layers: i64,
    dropout: f64,
    share_embedding: bool,
    bias: bool,
    vocab: i64,
    min_len: i64,
    max_len: i64,
    smoothing: f64,
    lr: f64,
    grad_clip: f64,
    bucketing: bool,
    /// `--max-size`: the first lines of each training file only.
    max_size: Option<usize>,
}

/// The `key: value` pairs of a Python dict literal such as `--model-config`'s default
/// `"{'hidden_size': 1024,'num_layers': 4, 'dropout': 0.2, 'share_embedding': True}"`
/// (the jobs file's shell splitting may already have removed the quotes). `None` if it is
/// not one.
fn py_dict(text: &str) -> Option<Vec<(String, String)>> {
    let inner = text.trim().strip_prefix('{')?.strip_suffix('}')?;
    let unquote = |s: &str| s.trim().trim_matches(['\'', '"']).trim().to_owned();
    inner
        .split(',')
        .filter(|item| !item.trim().is_empty())
        .map(|item| {
            let (key, value) = item.split_once(':')?;
            Some((unquote(key), unquote(value)))
        })
        .collect()
}

/// A dict argument's text: a string, or the words the jobs file's splitting made of it,
/// each as Python's `str` writes it.
fn dict_text(args: &BenchArgs, key: &str) -> Option<String> {
    match args.extra.get(key)? {
        Value::List(words) => Some(words.iter().map(py_str).collect::<Vec<_>>().join(" ")),
        one => Some(py_str(one)),
    }
}

fn config(ctx: &Ctx, args: &BenchArgs) -> Result<Config, BenchError> {
    let mut c = Config {
        batch: ctx.size(args, &["batch_size"], args.batch_size.max(1))?,
        hidden: 1024,
        layers: 4,
        dropout: 0.2,
        share_embedding: true,
        bias: true,
        vocab: 32_317,
        min_len: ctx.int(args, &["min_length_train"], 0)?,
        max_len: ctx.size(args, &["max_length_train"], 50)?,
        smoothing: ctx.float(args, &["smoothing"], 0.1)?,
        lr: 5e-4,
        grad_clip: ctx.float(args, &["grad_clip"], 5.0)?,
        bucketing: !ctx.flag(args, &["no_bucketing"]),
        // argparse's default is None: the whole files.
        max_size: match args.extra.get("max_size") {
            None | Some(Value::Null) => None,
            Some(_) => match ctx.int(args, &["max_size"], 0)? {
                n if n > 0 => Some(n as usize),
                _ => None,
            },
        },
    };
    if let Some(text) = dict_text(args, "model_config") {
        let bad = |what: &str| ctx.arg_error(format!("--model-config `{text}`: {what}"));
        let pairs = py_dict(&text).ok_or_else(|| bad("not a dict"))?;
        for (key, value) in pairs {
            let int = || {
                value
                    .parse::<i64>()
                    .map_err(|_| bad(&format!("{key} {value}")))
            };
            let float = || {
                value
                    .parse::<f64>()
                    .map_err(|_| bad(&format!("{key} {value}")))
            };
            let boolean = || match value.as_str() {
                "True" | "1" => Ok(true),
                "False" | "0" => Ok(false),
                _ => Err(bad(&format!("{key} {value}"))),
            };
            match key.as_str() {
                "hidden_size" => c.hidden = int()?,
                "num_layers" => c.layers = int()?,
                "dropout" => c.dropout = float()?,
                "share_embedding" => c.share_embedding = boolean()?,
                "bias" => c.bias = boolean()?,
                // Time-first or batch-first: the same computation.
                "batch_first" => {
                    boolean()?;
                }
                _ => return Err(bad(&format!("GNMT takes no `{key}`"))),
            }
        }
    }
    if let Some(text) = dict_text(args, "optimization_config") {
        let bad = |what: &str| ctx.arg_error(format!("--optimization-config `{text}`: {what}"));
        for (key, value) in py_dict(&text).ok_or_else(|| bad("not a dict"))? {
            match key.as_str() {
                "optimizer" if value == "Adam" => {}
                "optimizer" => return Err(bad("only Adam is implemented")),
                "lr" => c.lr = value.parse().map_err(|_| bad(&format!("lr {value}")))?,
                _ => return Err(bad(&format!("unknown key `{key}`"))),
            }
        }
    }
    c.hidden = ctx.size(args, &["hidden_size"], c.hidden)?;
    c.layers = ctx.size(args, &["num_layers"], c.layers)?;
    c.dropout = ctx.float(args, &["dropout"], c.dropout)?;
    c.lr = ctx.float(args, &["lr"], c.lr)?;
    c.vocab = ctx.size(args, &["vocab_size"], c.vocab)?;
    if let Some(math) = ctx.string(args, &["math"])? {
        if math != "fp32" {
            return Err(ctx.arg_error(format!("--math {math}: only fp32 is implemented")));
        }
    }
    if ctx.kind != Kind::Float {
        return Err(ctx.arg_error("the script's precision flag is --math (fp32 here)"));
    }
    if c.hidden < 1 || c.layers < 2 {
        return Err(ctx.arg_error("hidden_size at least 1, num_layers at least 2"));
    }
    if c.vocab <= FIRST_WORD {
        return Err(ctx.arg_error("--vocab-size: the 4 special tokens and at least one word"));
    }
    if c.max_len < 2 || c.max_len < c.min_len {
        return Err(ctx.arg_error(
            "--max-length-train: a sentence is at least BOS and EOS (2), and at least \
             --min-length-train",
        ));
    }
    if !(0.0..1.0).contains(&c.dropout) || !(0.0..=1.0).contains(&c.smoothing) {
        return Err(ctx.arg_error("dropout in [0, 1), smoothing in [0, 1]"));
    }
    Ok(c)
}

/// One `nn.LSTM(input, hidden, num_layers=1, bias)`, time first, from a zero state. Its own
/// parameters (tch's `nn::LSTM` keeps its private) so that the bidirectional layer can run
/// on packed sequences (`lstm_data`), as the encoder does.
struct Lstm {
    params: Vec<Tensor>,
    hidden: i64,
    bias: bool,
    bidirectional: bool,
}

impl Lstm {
    fn new(p: &nn::Path, input: i64, hidden: i64, bias: bool, bidirectional: bool) -> Lstm {
        // nn.LSTM.reset_parameters: every weight and bias uniform in ±1/√hidden.
        let stdv = 1.0 / (hidden as f64).sqrt();
        let init = nn::Init::Uniform {
            lo: -stdv,
            up: stdv,
        };
        let suffixes: &[&str] = if bidirectional {
            &["", "_reverse"]
        } else {
            &[""]
        };
        let mut params = Vec::new();
        for suffix in suffixes {
            let g = 4 * hidden;
            params.push(p.var(&format!("weight_ih_l0{suffix}"), &[g, input], init));
            params.push(p.var(&format!("weight_hh_l0{suffix}"), &[g, hidden], init));
            if bias {
                params.push(p.var(&format!("bias_ih_l0{suffix}"), &[g], init));
                params.push(p.var(&format!("bias_hh_l0{suffix}"), &[g], init));
            }
        }
        if p.device().is_cuda() && tch::Cuda::cudnn_is_available() {
            // flatten_parameters: the weights become views of the one buffer cuDNN reads,
            // instead of being copied into one at every call.
            tch::no_grad(|| {
                let stride = if bias { 4 } else { 2 };
                let lstm_mode = 2;
                let _ = Tensor::internal_cudnn_rnn_flatten_weight(
                    &params,
                    stride,
                    input,
                    lstm_mode,
                    hidden,
                    0,
                    1,
                    false,
                    bidirectional,
                );
            });
        }
        Lstm {
            params,
            hidden,
            bias,
            bidirectional,
        }
    }

    fn zero_state(&self, batch: i64, like: &Tensor) -> [Tensor; 2] {
        let dirs = if self.bidirectional { 2 } else { 1 };
        let zeros = Tensor::zeros([dirs, batch, self.hidden], (like.kind(), like.device()));
        [zeros.shallow_clone(), zeros]
    }

    /// `x` [T, B, in] → [T, B, directions·H].
    fn forward(&self, x: &Tensor) -> Tensor {
        let hx = self.zero_state(x.size()[1], x);
        let (out, _, _) = x.lstm(
            &hx,
            &self.params,
            self.bias,
            1,
            0.0,
            true,
            self.bidirectional,
            false,
        );
        out
    }

    /// As `forward` over the first `lengths[b]` steps of each sentence only
    /// (`pack_padded_sequence` → LSTM → `pad_packed_sequence`, zeros after): `lengths` on
    /// the CPU, longest first, the first equal to T.
    fn forward_packed(&self, x: &Tensor, lengths: &Tensor) -> Tensor {
        let (data, batch_sizes) = x.internal_pack_padded_sequence(lengths, false);
        let hx = self.zero_state(x.size()[1], x);
        let (out, _, _) = Tensor::lstm_data(
            &data,
            &batch_sizes,
            &hx,
            &self.params,
            self.bias,
            1,
            0.0,
            true,
            self.bidirectional,
        );
        let (padded, _) =
            Tensor::internal_pad_packed_sequence(&out, &batch_sizes, false, 0.0, x.size()[0]);
        padded
    }
}

/// Normalised Bahdanau attention (`BahdanauAttention(normalize=True)`, no dropout).
struct Attention {
    linear_q: nn::Linear,
    linear_k: nn::Linear,
    linear_att: Tensor,
    normalize_scalar: Tensor,
    normalize_bias: Tensor,
}

impl Attention {
    fn new(p: &nn::Path, h: i64) -> Attention {
        let stdv = 1.0 / (h as f64).sqrt();
        Attention {
            linear_q: super::torch_linear(p / "linear_q", h, h, false),
            linear_k: super::torch_linear(p / "linear_k", h, h, false),
            linear_att: p.var(
                "linear_att",
                &[h],
                nn::Init::Uniform {
                    lo: -stdv,
                    up: stdv,
                },
            ),
            normalize_scalar: p.var("normalize_scalar", &[1], nn::Init::Const(stdv)),
            normalize_bias: p.var("normalize_bias", &[h], nn::Init::Const(0.0)),
        }
    }

    /// `query` [B, Tq, H], `keys` [B, Tk, H], `mask` [B, Tk] (true at pads): the context
    /// [B, Tq, H] and the weights [B, Tq, Tk].
    fn forward(&self, query: &Tensor, keys: &Tensor, mask: &Tensor) -> (Tensor, Tensor) {
        let q = self.linear_q.forward(query).unsqueeze(2);
        let k = self.linear_k.forward(keys).unsqueeze(1);
        let att = &self.linear_att / self.linear_att.norm() * &self.normalize_scalar;
        let scores = (q + k + &self.normalize_bias).tanh().matmul(&att);
        // The script's "can't use -INF because of overflow check": the largest fp16 value.
        let scores = scores.masked_fill(&mask.unsqueeze(1), -65504.0);
        let weights = scores.softmax(-1, Kind::Float);
        (weights.bmm(keys), weights)
    }
}

/// `LabelSmoothing(PAD, smoothing)`, summed over the non-pad targets: `logits` [N, V],
/// `target` [N]. With smoothing 0 it is the script's other criterion, a summed
/// cross-entropy that weighs the pad 0.
fn smoothed_loss(logits: &Tensor, target: &Tensor, smoothing: f64) -> Tensor {
    let logprobs = logits.log_softmax(-1, Kind::Float);
    let keep = target.ne(PAD).to_kind(Kind::Float);
    let nll = -logprobs
        .gather(-1, &target.unsqueeze(1), false)
        .squeeze_dim(1);
    let smooth = -logprobs.mean_dim(-1, false, Kind::Float);
    ((nll * (1.0 - smoothing) + smooth * smoothing) * keep).sum(Kind::Float)
}

/// A collated batch, pairs sorted by source length, longest first: on the host when read
/// from the data set (the step copies it, as the trainer's `src.cuda()`), on the device
/// when made there.
struct Batch {
    /// [Ls, B] token ids.
    src: Tensor,
    /// [B] source lengths on the CPU (`pack_padded_sequence` takes host lengths).
    src_len: Tensor,
    /// [Lt, B] token ids.
    tgt: Tensor,
    /// The target tokens the loss is over, `Σ (tgt_length − 1)` (`num_toks['tgt']`).
    tgt_tokens: i64,
}

impl Batch {
    fn new(src: Tensor, src_len: &[i64], tgt: Tensor, tgt_len: &[i64]) -> Batch {
        Batch {
            src,
            src_len: Tensor::from_slice(src_len),
            tgt,
            tgt_tokens: tgt_len.iter().map(|l| l - 1).sum(),
        }
    }
}

/// Sentences of `lengths` (BOS, random words, EOS, then PAD), time first: [max, n].
fn sentences(lengths: &[i64], vocab: i64, device: Device) -> Tensor {
    let opts = (Kind::Int64, device);
    let longest = lengths.iter().copied().max().unwrap_or(0);
    let len = Tensor::from_slice(lengths).to_device(device).unsqueeze(0);
    let pos = Tensor::arange(longest, opts).unsqueeze(1);
    Tensor::randint_low(FIRST_WORD, vocab, [longest, lengths.len() as i64], opts)
        .masked_fill(&pos.eq(0), BOS)
        .masked_fill(&pos.eq_tensor(&(&len - 1)), EOS)
        .masked_fill(&pos.ge_tensor(&len), PAD)
}

/// The collate function over pairs of lengths, for random words: sorted by source
/// length, longest first (stable, as Python's `sorted`), each side padded to its longest.
fn collate(mut pairs: Vec<(i64, i64)>, vocab: i64, device: Device) -> Batch {
    pairs.sort_by_key(|&(src, _)| std::cmp::Reverse(src));
    let (src_len, tgt_len): (Vec<i64>, Vec<i64>) = pairs.into_iter().unzip();
    let (src, tgt) = (
        sentences(&src_len, vocab, device),
        sentences(&tgt_len, vocab, device),
    );
    Batch::new(src, &src_len, tgt, &tgt_len)
}

/// The collate function over the data set's pairs `indices`: sorted by source length,
/// longest first (stable), each side padded with PAD to its longest, time first.
fn collate_pairs(data: &wmt::Parallel, indices: &[i64]) -> Batch {
    let mut pairs: Vec<usize> = indices.iter().map(|&i| i as usize).collect();
    pairs.sort_by_key(|&i| std::cmp::Reverse(data.src.len_of(i)));
    let side = |s: &wmt::Sentences| {
        let lengths: Vec<i64> = pairs.iter().map(|&i| s.len_of(i) as i64).collect();
        let (longest, n) = (lengths.iter().copied().max().unwrap_or(0), pairs.len());
        let mut ids = vec![PAD; longest as usize * n];
        for (col, &i) in pairs.iter().enumerate() {
            for (t, &id) in s.get(i).iter().enumerate() {
                ids[t * n + col] = i64::from(id);
            }
        }
        (Tensor::from_slice(&ids).view([longest, n as i64]), lengths)
    };
    let ((src, src_len), (tgt, tgt_len)) = (side(&data.src), side(&data.tgt));
    Batch::new(src, &src_len, tgt, &tgt_len)
}

/// One shard of `BucketingSampler` made on the device (`--synthetic-data`): `SHARD_BATCHES`
/// batches of random pairs, with bucketing sorted by source + target length before being
/// cut into batches, the batches shuffled.
fn shard(c: &Config, device: Device) -> Vec<Batch> {
    let n = SHARD_BATCHES * c.batch;
    let lengths = || {
        let t = Tensor::randint_low(
            c.min_len.max(2),
            c.max_len + 1,
            [n],
            (Kind::Int64, Device::Cpu),
        );
        Vec::<i64>::try_from(&t).expect("int64 lengths")
    };
    let (src, tgt) = (lengths(), lengths());
    let mut pairs: Vec<(i64, i64)> = src.into_iter().zip(tgt).collect();
    if c.bucketing {
        pairs.sort_by_key(|&(s, t)| s + t);
    }
    let order = Tensor::randperm(SHARD_BATCHES, (Kind::Int64, Device::Cpu));
    let order = Vec::<i64>::try_from(&order).expect("int64 permutation");
    let chunks: Vec<&[(i64, i64)]> = pairs.chunks(c.batch as usize).collect();
    order
        .into_iter()
        .map(|i| collate(chunks[i as usize].to_vec(), c.vocab, device))
        .collect()
}

/// `BucketingSampler.__iter__` for one process (world size 1): the pairs' indices, in the
/// order the loader batches them, `batch` at a time. Its generator is seeded with the
/// epoch, which train.py never sets (`set_epoch` is for distributed runs only), so every
/// observation reads the same order. The draws are torch's own (`randperm`, and `sort` of
/// each shard's lengths on the CPU), from the global generator seeded 0: tch has no
/// generator objects, and `torch.Generator().manual_seed(0)` draws the same numbers. The
/// caller seeds the global generator again afterwards.
fn sampler_order(lengths: &[i64], batch: i64, bucket: bool) -> Vec<i64> {
    let cpu = (Kind::Int64, Device::Cpu);
    tch::manual_seed(0);
    let n = lengths.len() as i64;
    let samples = n / batch * batch;
    let indices = Tensor::randperm(n, cpu).narrow(0, 0, samples);
    let indices = if bucket {
        let shard_size = batch * SHARD_BATCHES;
        let lengths = Tensor::from_slice(lengths).index_select(0, &indices);
        let shards: Vec<Tensor> = (0..samples)
            .step_by(shard_size as usize)
            .map(|start| {
                let len = shard_size.min(samples - start);
                let (_, by_length) = lengths.narrow(0, start, len).sort(-1, false);
                indices.narrow(0, start, len).index_select(0, &by_length)
            })
            .collect();
        let batches = Tensor::cat(&shards, 0).view([-1, batch]);
        let order = Tensor::randperm(batches.size()[0], cpu);
        batches.index_select(0, &order).view([-1])
    } else {
        indices
    };
    Vec::<i64>::try_from(&indices).expect("int64 indices")
}

/// The folder train.py reads (`--dataset-dir`; without it `$DATA_DIRECTORY/wmt16`, where
/// `mlbench data prepare` writes it).
fn dataset_dir(ctx: &Ctx, args: &BenchArgs) -> Result<PathBuf, BenchError> {
    match ctx.string(args, &["dataset_dir"])? {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => Ok(ctx.data_directory("WMT16")?.join(wmt::FOLDER)),
    }
}

/// The batches an observation reads from the data set: the sampler's first `number`
/// (all of them if the epoch holds fewer: the steps then go round again), collated on
/// the host once, as the script's loader workers collate ahead of the step.
fn read_batches(ctx: &Ctx, args: &BenchArgs, c: &Config) -> Result<(Vec<Batch>, i64), BenchError> {
    let dir = dataset_dir(ctx, args)?;
    let data = wmt::read_train(&dir, c.min_len as usize, c.max_len as usize, c.max_size)
        .map_err(|e| ctx.arg_error(format!("{e}; {}", ctx.prepare_hint())))?;
    if (data.src.len() as i64) < c.batch {
        return Err(ctx.arg_error(format!(
            "{}: {} sentence pairs of {}..={} ids (--min-length-train, --max-length-train), \
             fewer than one batch of {}",
            dir.display(),
            data.src.len(),
            c.min_len,
            c.max_len,
            c.batch
        )));
    }
    let lengths: Vec<i64> = (0..data.src.len())
        .map(|i| (data.src.len_of(i) + data.tgt.len_of(i)) as i64)
        .collect();
    let order = sampler_order(&lengths, c.batch, c.bucketing);
    tch::manual_seed(args.seed);
    let wanted = args.number.max(1) as usize;
    let batches = order
        .chunks(c.batch as usize)
        .take(wanted)
        .map(|indices| collate_pairs(&data, indices))
        .collect();
    Ok((batches, data.vocab_size as i64))
}

/// Seq2SeqTrainer.preallocate's batch: every sentence `max_len` tokens of id 4.
fn preallocation(c: &Config, device: Device) -> Batch {
    let full = Tensor::full([c.max_len, c.batch], FIRST_WORD, (Kind::Int64, device));
    Batch {
        src: full.shallow_clone(),
        src_len: Tensor::full([c.batch], c.max_len, (Kind::Int64, Device::Cpu)),
        tgt: full,
        tgt_tokens: c.batch * (c.max_len - 1),
    }
}

/// `losses_per_token` of `feed_data`: an `AverageMeter` that skips its first update.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct PerToken {
    updates: u64,
    sum: f64,
    tokens: i64,
}

impl PerToken {
    /// `update(loss_per_batch / tokens, tokens)`.
    fn update(&mut self, loss_per_batch: f64, tokens: i64) {
        if self.updates > 0 {
            self.sum += loss_per_batch;
            self.tokens += tokens;
        }
        self.updates += 1;
    }

    /// `avg`: 0 until a second update.
    fn avg(&self) -> f64 {
        if self.tokens == 0 {
            0.0
        } else {
            self.sum / self.tokens as f64
        }
    }
}

/// An embedding table, N(0, 1) as `nn.Embedding` draws it, the pad's row zeroed.
fn embedding(p: &nn::Path, vocab: i64, h: i64) -> Tensor {
    let w = p.var(
        "weight",
        &[vocab, h],
        nn::Init::Randn {
            mean: 0.0,
            stdev: 1.0,
        },
    );
    tch::no_grad(|| {
        let _ = w.get(PAD).zero_();
    });
    w
}

struct Gnmt {
    enc_embedding: Tensor,
    dec_embedding: Tensor,
    encoder: Vec<Lstm>,
    att_rnn: Lstm,
    attention: Attention,
    decoder: Vec<Lstm>,
    classifier: nn::Linear,
    opt: nn::Optimizer,
    config: Config,
    device: Device,
    /// The observation's batches: the data set's, on the host, or with `--synthetic-data`
    /// a shard made on the device.
    shard: Vec<Batch>,
    preallocation: Batch,
    /// The observation's batches used (the next is `cursor % shard.len()`).
    cursor: usize,
    per_token: PerToken,
    _vs: nn::VarStore,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    Ok(Box::new(gnmt(ctx, args)?))
}

fn gnmt(ctx: &Ctx, args: &BenchArgs) -> Result<Gnmt, BenchError> {
    let mut c = config(ctx, args)?;
    // The data set first: its sampler's draws seed the global generator anew.
    let read = match ctx.synthetic {
        true => None,
        false => Some(read_batches(ctx, args, &c)?),
    };
    if let Some((_, vocab)) = &read {
        c.vocab = *vocab;
    }
    let h = c.hidden;
    let vs = nn::VarStore::new(ctx.device);
    let root = vs.root();
    let enc_embedding = embedding(&(&root / "encoder" / "embedder"), c.vocab, h);
    let dec_embedding = if c.share_embedding {
        enc_embedding.shallow_clone()
    } else {
        embedding(&(&root / "decoder" / "embedder"), c.vocab, h)
    };
    let lstm = |name: String, input, bidirectional| {
        Lstm::new(&(&root / name), input, h, c.bias, bidirectional)
    };
    let mut encoder = vec![
        lstm("encoder0".into(), h, true),
        lstm("encoder1".into(), 2 * h, false),
    ];
    encoder.extend((2..c.layers).map(|i| lstm(format!("encoder{i}"), h, false)));
    let att_rnn = lstm("att_rnn".into(), h, false);
    let attention = Attention::new(&(&root / "attn"), h);
    let decoder = (0..c.layers - 1)
        .map(|i| lstm(format!("decoder{i}"), 2 * h, false))
        .collect();
    let classifier = super::torch_linear(&root / "classifier", h, c.vocab, true);
    let opt = nn::Adam::default()
        .build(&vs, c.lr)
        .map_err(|e| ctx.failed(e.to_string()))?;
    let shard = match read {
        Some((batches, _)) => batches,
        None => shard(&c, ctx.device),
    };
    let preallocation = preallocation(&c, ctx.device);
    Ok(Gnmt {
        enc_embedding,
        dec_embedding,
        encoder,
        att_rnn,
        attention,
        decoder,
        classifier,
        opt,
        config: c,
        device: ctx.device,
        shard,
        preallocation,
        cursor: 0,
        per_token: PerToken::default(),
        _vs: vs,
    })
}

impl Gnmt {
    fn dropout(&self, x: &Tensor) -> Tensor {
        x.dropout(self.config.dropout, true)
    }

    /// The encoder's outputs [Ls, B, H].
    fn encode(&self, b: &Batch) -> Tensor {
        let x = Tensor::embedding(&self.enc_embedding, &b.src, PAD, false, false);
        let x = self.encoder[0].forward_packed(&x, &b.src_len);
        let mut x = self.encoder[1].forward(&self.dropout(&x));
        for layer in &self.encoder[2..] {
            x = layer.forward(&self.dropout(&x)) + x;
        }
        x
    }

    /// The classifier's logits [Lt − 1, B, V] for `tgt[:-1]`.
    fn logits(&self, b: &Batch) -> Tensor {
        let context = self.encode(b).transpose(0, 1); // [B, Ls, H]
        // The attention's mask, true past each source's length (`set_mask`).
        let mask = Tensor::arange(context.size()[1], (Kind::Int64, self.device))
            .unsqueeze(0)
            .ge_tensor(&b.src_len.to_device(self.device).unsqueeze(1));
        let steps = b.tgt.size()[0] - 1;
        let input = b.tgt.narrow(0, 0, steps);
        let y = Tensor::embedding(&self.dec_embedding, &input, PAD, false, false);
        let y = self.att_rnn.forward(&y);
        let (attn, _) = self.attention.forward(&y.transpose(0, 1), &context, &mask);
        let attn = attn.transpose(0, 1); // [Lt − 1, B, H]
        let mut y =
            self.decoder[0].forward(&Tensor::cat(&[self.dropout(&y), attn.shallow_clone()], 2));
        for layer in &self.decoder[1..] {
            let input = Tensor::cat(&[self.dropout(&y), attn.shallow_clone()], 2);
            y = layer.forward(&input) + y;
        }
        self.classifier.forward(&y)
    }

    /// `Seq2SeqTrainer.iterate` on a shard batch (`Some(i)`) or the preallocation (`None`):
    /// the loss ÷ sentences, backward, clipping, the update if `update`.
    fn iterate(&mut self, which: Option<usize>, update: bool) -> Tensor {
        let b = which.map_or(&self.preallocation, |i| &self.shard[i]);
        // `src.cuda()`, `tgt.cuda()`: the host's batch to the device (a no-op there).
        let b = Batch {
            src: b.src.to_device(self.device),
            src_len: b.src_len.shallow_clone(),
            tgt: b.tgt.to_device(self.device),
            tgt_tokens: b.tgt_tokens,
        };
        let logits = self.logits(&b);
        let (t, n, v) = logits.size3().expect("[T, B, V] logits");
        let labels = b.tgt.narrow(0, 1, t).contiguous().view([-1]);
        let loss = smoothed_loss(
            &logits.view([t * n, v]).to_kind(Kind::Float),
            &labels,
            self.config.smoothing,
        ) / n as f64;
        self.opt.zero_grad();
        loss.backward();
        if self.config.grad_clip.is_finite() {
            self.opt.clip_grad_norm(self.config.grad_clip);
        }
        if update {
            self.opt.step();
        }
        loss.detach()
    }

    fn next_batch(&mut self) -> Tensor {
        let i = self.cursor % self.shard.len();
        self.cursor += 1;
        self.iterate(Some(i), true)
    }
}

impl Train for Gnmt {
    fn begin_observation(&mut self, _observation: u64) {
        // optimize(): preallocate, then the sampler's batches from the first.
        let _ = self.iterate(None, false);
        self.cursor = 0;
        self.per_token = PerToken::default();
    }

    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        Ok(self.next_batch())
    }

    fn step(&mut self) -> Result<Logs, BenchError> {
        let b = &self.shard[self.cursor % self.shard.len()];
        let (tokens, sentences) = (b.tgt_tokens, b.tgt.size()[1]);
        let loss = self.next_batch();
        // iterate(): `loss_per_batch = loss.item()`, before the division by the batch.
        let per_batch = loss.to_kind(Kind::Double).double_value(&[]) * sentences as f64;
        self.per_token.update(per_batch, tokens);
        Ok(Logs::none())
    }

    fn end_observation(&mut self, _observation: u64) -> Logs {
        Logs::none().epoch_loss(self.per_token.avg())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::DeviceSpec;
    use crate::models::own_process;

    const CPU: DeviceSpec = DeviceSpec::Cpu {
        index: 0,
        threads: 1,
    };

    fn tiny(extra: &[(&str, Value)]) -> BenchArgs {
        let i = Value::Int;
        let mut args = BenchArgs {
            batch_size: 4,
            number: 3,
            repeat: 1,
            seed: 5,
            extra: [
                ("hidden_size", i(16)),
                ("num_layers", i(3)),
                ("vocab_size", i(12)),
                ("max_length_train", i(7)),
                ("dropout", Value::Float(0.0)),
                (crate::bench::SYNTHETIC_DATA, Value::Bool(true)),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        };
        for (k, v) in extra {
            args.extra.insert((*k).to_owned(), v.clone());
        }
        args
    }

    fn model(args: &BenchArgs) -> Gnmt {
        let ctx = Ctx::new("translator", args, CPU).unwrap();
        gnmt(&ctx, args).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn label_smoothing_by_hand() {
        // Vocabulary 3 (0 is the pad), smoothing 0.1, three rows, the last one padding.
        // Row 1: logits [0, ln 2, ln 3] → p = 1/6, 2/6, 3/6; target 2: NLL = −ln(3/6) =
        //   ln 2 = 0.693147; mean −log p = (ln 6 + ln 3 + ln 2)/3 = 3.583519/3 = 1.194506;
        //   0.9·0.693147 + 0.1·1.194506 = 0.623832 + 0.119451 = 0.743283.
        // Row 2: logits [0, 0, 0] → p = 1/3 each; target 1: NLL = ln 3 = 1.098612, mean
        //   −log p = ln 3: 0.9·1.098612 + 0.1·1.098612 = 1.098612.
        // Row 3: target PAD: left out whatever its logits.
        // Sum: 0.743283 + 1.098612 = 1.841895.
        let (l2, l3) = (2f32.ln(), 3f32.ln());
        let logits = Tensor::from_slice(&[0.0, l2, l3, 0.0, 0.0, 0.0, 5.0, 1.0, 2.0]).view([3, 3]);
        let target = Tensor::from_slice(&[2i64, 1, PAD]);
        let got = smoothed_loss(&logits, &target, 0.1).double_value(&[]);
        assert!((got - 1.841_895).abs() < 1e-5, "{got}");
        // Without smoothing: the NLLs alone, ln 2 + ln 3 = ln 6 = 1.791759.
        let plain = smoothed_loss(&logits, &target, 0.0).double_value(&[]);
        assert!((plain - 1.791_759).abs() < 1e-5, "{plain}");
        // The pad row counts if its target is a word (target 1 there: NLL 5.0 + ln(e⁵ + e + e²)
        // − 5 > 0), which shows it was left out above.
        let unpadded = smoothed_loss(&logits, &Tensor::from_slice(&[2i64, 1, 1]), 0.1);
        assert!(unpadded.double_value(&[]) > got + 1.0);
    }

    #[test]
    fn attention_weights_sum_to_one_over_the_words_and_skip_the_pads() {
        tch::manual_seed(1);
        let vs = nn::VarStore::new(Device::Cpu);
        let att = Attention::new(&vs.root(), 4);
        let query = Tensor::randn([2, 3, 4], (Kind::Float, Device::Cpu));
        let keys = Tensor::randn([2, 5, 4], (Kind::Float, Device::Cpu));
        // Sentence 0 has 5 tokens, sentence 1 has 2.
        let mask = Tensor::from_slice(&[
            false, false, false, false, false, false, false, true, true, true,
        ])
        .view([2, 5]);
        let (context, weights) = att.forward(&query, &keys, &mask);
        assert_eq!(context.size(), [2, 3, 4]);
        assert_eq!(weights.size(), [2, 3, 5]);
        let sums = weights.sum_dim_intlist(-1, false, Kind::Double);
        let worst = (sums - 1.0).abs().max().double_value(&[]);
        assert!(
            worst < 1e-6,
            "every query's weights sum to 1 (off by {worst})"
        );
        let pads = weights.get(1).narrow(1, 2, 3);
        assert_eq!(
            pads.abs().max().double_value(&[]),
            0.0,
            "pads get no weight"
        );
        assert!(weights.get(1).narrow(1, 0, 2).min().double_value(&[]) > 0.0);
        assert!(weights.get(0).min().double_value(&[]) > 0.0);
        // The context is the weighted mean of the words' keys alone.
        let by_hand = weights
            .get(1)
            .narrow(1, 0, 2)
            .matmul(&keys.get(1).narrow(0, 0, 2));
        assert!(context.get(1).allclose(&by_hand, 1e-5, 1e-6, false));
    }

    #[test]
    fn the_encoder_reads_each_sentence_without_its_pads() {
        // Packed sequences: a sentence's outputs in a padded batch are those it has alone.
        tch::manual_seed(3);
        let m = model(&tiny(&[]));
        let b = collate(vec![(3, 4), (7, 2), (5, 5)], 12, Device::Cpu);
        assert_eq!(Vec::<i64>::try_from(&b.src_len).unwrap(), [7, 5, 3]);
        let out = m.encode(&b);
        assert_eq!(out.size(), [7, 3, 16]);
        for (col, len) in [(0, 7), (1, 5), (2, 3)] {
            let alone = Batch {
                src: b.src.narrow(0, 0, len).narrow(1, col, 1),
                src_len: Tensor::from_slice(&[len]),
                tgt: b.tgt.narrow(1, col, 1),
                tgt_tokens: 0,
            };
            let single = m.encode(&alone).squeeze_dim(1);
            let batched = out.narrow(0, 0, len).select(1, col);
            assert!(
                batched.allclose(&single, 1e-5, 1e-6, false),
                "sentence {col}: {batched} vs {single}"
            );
        }
    }

    #[test]
    fn batches_are_bucketed_sorted_and_padded_like_the_collate_function() {
        tch::manual_seed(2);
        let m = model(&tiny(&[("min_length_train", Value::Int(3))]));
        assert_eq!(m.shard.len() as i64, SHARD_BATCHES);
        let mut sums = Vec::new();
        for b in &m.shard {
            let src_len = Vec::<i64>::try_from(&b.src_len).unwrap();
            assert!(src_len.windows(2).all(|w| w[0] >= w[1]), "{src_len:?}");
            assert_eq!(b.src.size(), [src_len[0], 4]);
            let mut tgt_len = Vec::new();
            for (ids, lens) in [(&b.src, Some(&src_len)), (&b.tgt, None)] {
                for col in 0..4 {
                    let s = Vec::<i64>::try_from(&ids.select(1, col)).unwrap();
                    let len = s.iter().take_while(|&&t| t != PAD).count();
                    if let Some(lens) = lens {
                        assert_eq!(len as i64, lens[col as usize]);
                    } else {
                        tgt_len.push(len as i64);
                    }
                    assert!((3..=7).contains(&len), "{s:?}");
                    assert!(s[len..].iter().all(|&t| t == PAD), "{s:?}");
                    assert_eq!((s[0], s[len - 1]), (BOS, EOS), "{s:?}");
                    assert!(s[1..len - 1].iter().all(|t| (FIRST_WORD..12).contains(t)));
                }
            }
            assert_eq!(b.tgt.size()[0], *tgt_len.iter().max().unwrap());
            let pair: Vec<i64> = src_len.iter().zip(&tgt_len).map(|(s, t)| s + t).collect();
            sums.push((*pair.iter().min().unwrap(), *pair.iter().max().unwrap()));
        }
        // Bucketing: the batches hold disjoint runs of the shard's sorted lengths…
        let in_order = sums.clone();
        sums.sort();
        assert!(sums.windows(2).all(|w| w[0].1 <= w[1].0), "{sums:?}");
        // …in shuffled order.
        assert_ne!(in_order, sums);
    }

    // scripts/sampler-golden.py's output (torch 2.13.0): 500 pairs, batch 3, bucketing on
    // and off; 7 pairs, batch 2 (its whole order).
    const GOLDEN_BUCKET_FIRST: [i64; 24] = [
        331, 9, 124, 107, 153, 48, 388, 296, 319, 475, 199, 383, 16, 62, 499, 454, 178, 224, 144,
        420, 328, 375, 444, 7,
    ];
    const GOLDEN_BUCKET_LAST: [i64; 6] = [129, 428, 267, 52, 351, 305];
    const GOLDEN_BUCKET_SUM: i64 = 30_849_168;
    const GOLDEN_PLAIN_FIRST: [i64; 24] = [
        44, 441, 139, 152, 279, 74, 87, 221, 225, 169, 271, 334, 80, 263, 24, 296, 208, 446, 132,
        143, 346, 154, 397, 79,
    ];
    const GOLDEN_PLAIN_LAST: [i64; 6] = [419, 65, 222, 23, 250, 303];
    const GOLDEN_PLAIN_SUM: i64 = 31_581_577;
    const GOLDEN_SMALL: [i64; 6] = [5, 2, 6, 3, 0, 4];
    const GOLDEN_SMALL_SUM: i64 = 43;

    /// The pair lengths of scripts/sampler-golden.py's cases: many ties, as real pairs have.
    fn golden_lengths(n: i64) -> Vec<i64> {
        (0..n).map(|i| (i * 7919) % 23 + 4).collect()
    }

    /// Against the suite's own sampler run by torch 2.13.0 (scripts/sampler-golden.py
    /// prints these figures): the first 24 indices, the last 6, and Σ k·order[k].
    #[test]
    fn the_sampler_orders_as_the_scripts_does() {
        /// (pairs, batch, bucketing, first indices, last indices, Σ k·order[k]).
        type Case<'a> = (i64, i64, bool, &'a [i64], &'a [i64], i64);
        let cases: [Case; 3] = [
            (
                500,
                3,
                true,
                &GOLDEN_BUCKET_FIRST,
                &GOLDEN_BUCKET_LAST,
                GOLDEN_BUCKET_SUM,
            ),
            (
                500,
                3,
                false,
                &GOLDEN_PLAIN_FIRST,
                &GOLDEN_PLAIN_LAST,
                GOLDEN_PLAIN_SUM,
            ),
            (
                7,
                2,
                true,
                &GOLDEN_SMALL,
                &GOLDEN_SMALL[GOLDEN_SMALL.len() - 6..],
                GOLDEN_SMALL_SUM,
            ),
        ];
        for (n, batch, bucket, first, last, weighted) in cases {
            let order = sampler_order(&golden_lengths(n), batch, bucket);
            assert_eq!(order.len() as i64, n / batch * batch);
            assert_eq!(
                &order[..first.len()],
                first,
                "n {n} batch {batch} bucket {bucket}"
            );
            assert_eq!(&order[order.len() - last.len()..], last);
            let sum: i64 = order.iter().enumerate().map(|(k, &i)| k as i64 * i).sum();
            assert_eq!(sum, weighted);
            let mut seen = order.clone();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), order.len(), "each pair once");
        }
    }

    #[test]
    fn with_bucketing_each_batch_is_a_run_of_one_shards_sorted_lengths() {
        let lengths = golden_lengths(500);
        let order = sampler_order(&lengths, 3, true);
        for batch in order.chunks(3) {
            let l: Vec<i64> = batch.iter().map(|&i| lengths[i as usize]).collect();
            assert!(l.windows(2).all(|w| w[0] <= w[1]), "{l:?}");
        }
    }

    /// Sentences of the data set, by hand: pair k has a source of `src[k]` ids and a
    /// target of `tgt[k]`, its ids `100·k + position`.
    fn pairs(src: &[usize], tgt: &[usize]) -> wmt::Parallel {
        let side = |lens: &[usize]| {
            let mut s = wmt::Sentences {
                ids: Vec::new(),
                starts: vec![0],
            };
            for (k, &len) in lens.iter().enumerate() {
                s.ids.extend((0..len).map(|t| (100 * k + t) as u32));
                s.starts.push(s.ids.len());
            }
            s
        };
        wmt::Parallel {
            vocab_size: 1000,
            src: side(src),
            tgt: side(tgt),
        }
    }

    #[test]
    fn read_pairs_are_collated_longest_source_first_and_padded() {
        let data = pairs(&[3, 5, 3, 4], &[4, 2, 6, 3]);
        // Pairs 0, 2 and 1: sources of 3, 3 and 5 ids; sorted 1, 0, 2 (ties in order).
        let b = collate_pairs(&data, &[0, 2, 1]);
        assert_eq!(Vec::<i64>::try_from(&b.src_len).unwrap(), [5, 3, 3]);
        assert_eq!(b.src.size(), [5, 3]);
        assert_eq!(b.tgt.size(), [6, 3]);
        let col = |t: &Tensor, c: i64| Vec::<i64>::try_from(&t.select(1, c)).unwrap();
        assert_eq!(col(&b.src, 0), [100, 101, 102, 103, 104]);
        assert_eq!(col(&b.src, 1), [0, 1, 2, PAD, PAD]);
        assert_eq!(col(&b.src, 2), [200, 201, 202, PAD, PAD]);
        assert_eq!(col(&b.tgt, 0), [100, 101, PAD, PAD, PAD, PAD]);
        assert_eq!(col(&b.tgt, 2), [200, 201, 202, 203, 204, 205]);
        // Σ (target length − 1): 1 + 3 + 5.
        assert_eq!(b.tgt_tokens, 9);
    }

    fn wmt_args(dir: &std::path::Path, extra: &[(&str, Value)]) -> BenchArgs {
        let mut args = tiny(extra);
        args.extra.remove(crate::bench::SYNTHETIC_DATA);
        args.extra.remove("vocab_size");
        args.extra.insert(
            "dataset_dir".into(),
            Value::Str(dir.join(wmt::FOLDER).display().to_string()),
        );
        args.extra.insert("max_length_train".into(), Value::Int(12));
        args
    }

    #[test]
    fn it_reads_the_prepared_wmt16_as_train_py_does() {
        let tmp = tempfile::tempdir().unwrap();
        wmt::prepare(tmp.path(), 4, mlbench_datasets::Scale::Smoke).unwrap();
        let args = wmt_args(tmp.path(), &[]);
        let m = model(&args);
        // The file's 500 tokens and the 4 specials, whatever `vocab_size` said.
        assert_eq!(m.config.vocab, 504);
        let data = wmt::read_train(&tmp.path().join(wmt::FOLDER), 0, 12, None).unwrap();
        let lengths: Vec<i64> = (0..data.src.len())
            .map(|i| (data.src.len_of(i) + data.tgt.len_of(i)) as i64)
            .collect();
        let order = sampler_order(&lengths, 4, true);
        // The observation's `number` (3) batches, the sampler's first, as collated.
        assert_eq!(m.shard.len(), 3);
        for (b, indices) in m.shard.iter().zip(order.chunks(4)) {
            let want = collate_pairs(&data, indices);
            assert!(b.src.equal(&want.src) && b.tgt.equal(&want.tgt));
            assert_eq!(b.tgt_tokens, want.tgt_tokens);
        }
        // Every id is a word of the file or a special: no unknown token in prepared data.
        let max = m.shard.iter().map(|b| b.src.max().int64_value(&[])).max();
        assert!(max.unwrap() < 504);
        let mut m = m;
        m.begin_observation(0);
        for _ in 0..3 {
            m.step().unwrap();
        }
        assert!(m.end_observation(0).epoch_loss.unwrap().is_finite());
        // --max-size None (argparse's default, as the jobs' plan fills it in): every line.
        let whole = wmt_args(tmp.path(), &[("max_size", Value::Null)]);
        let ctx = Ctx::new("translator", &whole, CPU).unwrap();
        assert_eq!(config(&ctx, &whole).unwrap().max_size, None);
        // --max-size 20: the first 20 lines only, fewer pairs than a batch of 64.
        let few = wmt_args(tmp.path(), &[("max_size", Value::Int(20))]);
        let mut few_batch = few.clone();
        few_batch.batch_size = 64;
        let ctx = Ctx::new("translator", &few_batch, CPU).unwrap();
        let err = gnmt(&ctx, &few_batch).err().unwrap().to_string();
        assert!(err.contains("fewer than one batch of 64"), "{err}");
    }

    #[test]
    fn a_missing_data_set_names_the_file_and_the_command() {
        let tmp = tempfile::tempdir().unwrap();
        let args = wmt_args(tmp.path(), &[]);
        let ctx = Ctx::new("translator", &args, CPU).unwrap();
        let err = gnmt(&ctx, &args).err().unwrap().to_string();
        assert!(err.contains("vocab.bpe.32000"), "{err}");
        assert!(err.contains("mlbench data prepare"), "{err}");
    }

    #[test]
    fn the_epoch_loss_is_per_token_over_all_batches_but_the_first() {
        let mut meter = PerToken::default();
        assert_eq!(meter.avg(), 0.0);
        meter.update(100.0, 10);
        assert_eq!(meter.avg(), 0.0, "the first update is skipped");
        meter.update(30.0, 6);
        meter.update(12.0, 4);
        assert_eq!(meter.avg(), 42.0 / 10.0);
    }

    #[test]
    fn an_observation_is_a_preallocation_and_the_same_number_batches() {
        let mut m = model(&tiny(&[]));
        let mut epochs = Vec::new();
        for r in 0..2 {
            m.begin_observation(r);
            let mut by_hand = (0.0, 0);
            for k in 0..3 {
                let b = &m.shard[k];
                let (tokens, n) = (b.tgt_tokens, b.tgt.size()[1]);
                // tgt_tokens: the non-pad labels of tgt[1:].
                let labels = b.tgt.narrow(0, 1, b.tgt.size()[0] - 1).ne(PAD);
                assert_eq!(labels.sum(Kind::Int64).int64_value(&[]), tokens);
                let weights_before = m.iterate(Some(k), false).double_value(&[]);
                assert!(weights_before.is_finite());
                assert_eq!(m.step().unwrap(), Logs::none(), "no batch loss");
                if k > 0 {
                    by_hand.0 += weights_before * n as f64;
                    by_hand.1 += tokens;
                }
            }
            assert_eq!(m.cursor, 3);
            let logged = m.end_observation(r).epoch_loss.unwrap();
            let want = by_hand.0 / by_hand.1 as f64;
            assert!((logged - want).abs() < 1e-4 * want, "{logged} vs {want}");
            epochs.push(logged);
        }
        // The same batches again: trained on, their loss falls.
        assert!(epochs[1] < epochs[0], "{epochs:?}");
        let p = &m.preallocation;
        assert_eq!(p.src.size(), [7, 4]);
        assert_eq!(p.src.max().int64_value(&[]), FIRST_WORD);
        assert_eq!(p.src.min().int64_value(&[]), FIRST_WORD);
    }

    #[test]
    fn the_config_dicts_are_read_and_bare_sizes_win() {
        let i = Value::Int;
        let args = BenchArgs {
            batch_size: 64,
            number: 10,
            repeat: 1,
            seed: 0,
            extra: Default::default(),
        };
        let ctx = Ctx::new("translator", &args, CPU).unwrap();
        let defaults = config(&ctx, &args).unwrap();
        assert_eq!(
            (
                defaults.hidden,
                defaults.layers,
                defaults.vocab,
                defaults.max_len
            ),
            (1024, 4, 32_317, 50)
        );
        assert_eq!(
            (defaults.dropout, defaults.lr, defaults.smoothing),
            (0.2, 5e-4, 0.1)
        );
        assert!(defaults.share_embedding && defaults.bucketing);
        let mut a = args.clone();
        // As the jobs file's splitting leaves `"{'hidden_size': 256, 'num_layers': 3, …}"`.
        a.extra.insert(
            "model_config".into(),
            Value::List(vec![
                "{hidden_size:".into(),
                "256,".into(),
                "num_layers:".into(),
                "3,".into(),
                "share_embedding:".into(),
                "False}".into(),
            ]),
        );
        a.extra.insert(
            "optimization_config".into(),
            "{'optimizer': 'Adam', 'lr': 1e-3}".into(),
        );
        a.extra.insert("num_layers".into(), i(5));
        let c = config(&ctx, &a).unwrap();
        assert_eq!((c.hidden, c.layers, c.lr), (256, 5, 1e-3));
        assert!(!c.share_embedding);
        a.extra.insert(
            "optimization_config".into(),
            "{'optimizer': 'SGD', 'lr': 1}".into(),
        );
        assert!(config(&ctx, &a).is_err());
        let mut b = args.clone();
        b.extra
            .insert("model_config".into(), "{'hidden': 3}".into());
        assert!(config(&ctx, &b).is_err());
        b.extra.insert("model_config".into(), "{}".into());
        b.extra.insert("math".into(), "fp16".into());
        assert!(config(&ctx, &b).is_err());
    }

    #[test]
    fn it_learns_a_batch() {
        let args = tiny(&[("lr", Value::Float(0.01))]);
        let mut m = model(&args);
        let losses: Vec<f64> = (0..40)
            .map(|_| m.iterate(Some(0), true).double_value(&[]))
            .collect();
        assert!(losses.iter().all(|l| l.is_finite()), "{losses:?}");
        assert!(losses[39] < losses[0] * 0.7, "{losses:?}");
    }

    /// Dropout on, the same seed: the same losses; another seed: others. Each run in a
    /// process of its own (libtorch's generator is global; `own_process`).
    #[test]
    fn a_seed_repeats_its_losses() {
        let losses = |seed| {
            let mut args = tiny(&[("dropout", Value::Float(0.2))]);
            args.seed = seed;
            let mut m = model(&args);
            (0..4)
                .map(|_| m.train_step().unwrap().double_value(&[]))
                .collect::<Vec<_>>()
        };
        let Some(run) = own_process::runner(
            "models::translator::tests::a_seed_repeats_its_losses",
            losses,
        ) else {
            return;
        };
        let a = run(7);
        assert!(a.iter().all(|l| l.is_finite()), "{a:?}");
        assert_eq!(a, run(7));
        assert_ne!(a, run(8));
    }
}
