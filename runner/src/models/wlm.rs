//! wlm / wlmfp16 (word_language_model main.py, main_fp16_optimizer.py): embedding → dropout
//! → 2-layer GRU or LSTM → dropout → linear decoder, sequence-first as the script, on
//! wikitext-2's token ids (vocabulary 33 278; wlmfp16's padded to a multiple of 8, 33 280,
//! main_fp16_optimizer.py:65); cross-entropy, manual SGD lr 20 after
//! gradient-norm clipping 0.25.
//!
//! As the script (main.py:138-164,190-210), per observation (`for epoch in range(1, repeat)`,
//! `repeat − 1` of them):
//! - inside the `train` timer, the hidden state starts at zeros and the `number` batches
//!   are the same every observation: rows `0, bptt, …, (number − 1)·bptt` of one
//!   batchified token set made once (`[number·bptt + 1, batch_size]`, the only rows the
//!   script's loop ever reads of its training set), the hidden state carried (detached)
//!   from batch to batch;
//! - after it, untimed by `train`, `evaluate(val_data)`: the whole validation set in
//!   evaluation mode (no dropout, no gradient), batch 10, bptt-long chunks, one `.item()`
//!   per chunk, its token-weighted mean loss logged as the metric `val_loss`; its time is the
//!   stage `eval`, and `all` (the script's block around both) is `train` + `eval`;
//! - wlm's learning rate is divided by 4 after any observation whose `val_loss` does not
//!   improve on the best so far. wlmfp16's script divides a variable its optimizer never
//!   reads (main_fp16_optimizer.py:117,248): its lr stays 20, which mlbench keeps.
//!
//! The data are the wikitext-2 files the job names (`data`) or `$DATA_DIRECTORY/wikitext-2`
//! (`mlbench data prepare`'s), read as the script's Corpus reads them
//! (`mlbench_datasets::wikitext`): the vocabulary is the dictionary's, the training rows
//! `batchify(train)`'s, and the validation set is what valid.txt holds (the real one's
//! 217 646 tokens: 21 764 rows of 10, 622 chunks of bptt 35). Without the files the ids are
//! synthetic, `val_tokens` of them (default 217 646; `--smoke` makes it small), and the
//! entries say `synthetic_data`.
//! Args: `batch_size` (fast.json: 64), `emsize` (656), `nhid` (656), `nlayers` (2), `dropout`
//! (0.5), `model` (GRU|LSTM; jobs pass GRU), `bptt` (35), `ntokens`, `lr` (20), `clip`
//! (0.25), `tied`, `fp16`, `val_tokens`.
//!
//! wlmfp16 in float16 (`--fp16`, on a GPU) steps as its script's apex
//! `FP16_Optimizer(SGD(lr 20), static_loss_scale=128)` (`half::StaticHalfSgd`): the loss × 128
//! before its backward, float32 master weights, their gradients unscaled and clipped to 0.25
//! (`clip_master_grads`), no overflow check (a static scaler reports none).

use super::half::StaticHalfSgd;
use super::{Ctx, Train, sync};
use crate::bench::{BenchArgs, BenchError, Logs};
use crate::timing::timed;
use std::path::PathBuf;
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Device, Kind, Tensor};

pub(super) const SOURCE: &str = concat!(include_str!("wlm.rs"), include_str!("half.rs"));

/// main.py:80: `eval_batch_size = 10`.
const EVAL_BATCH: i64 = 10;
/// wikitext-2's valid.txt, in tokens (with the `<eos>` of every line).
const VAL_TOKENS: i64 = 217_646;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cell {
    Gru,
    Lstm,
}

/// The recurrent state: h (GRU) or (h, c) (LSTM).
enum Hidden {
    Gru(Tensor),
    Lstm(Tensor, Tensor),
}

impl Hidden {
    fn detach(&self) -> Hidden {
        match self {
            Hidden::Gru(h) => Hidden::Gru(h.detach()),
            Hidden::Lstm(h, c) => Hidden::Lstm(h.detach(), c.detach()),
        }
    }
}

/// main_fp16_optimizer.py:123-128: `static_loss_scale` 128.
const STATIC_LOSS_SCALE: f64 = 128.0;

/// The update: wlm's `p.data.add_(-lr, grad)` after `clip_grad_norm_`, or wlmfp16's
/// FP16_Optimizer when the model is half.
enum Optimizer {
    Sgd(nn::Optimizer),
    Fp16(StaticHalfSgd),
}

struct Wlm {
    encoder: nn::Embedding,
    cell: Cell,
    /// The RNN's weights in cuDNN's flat order (w_ih, w_hh, b_ih, b_hh per layer).
    flat: Vec<Tensor>,
    nlayers: i64,
    nhid: i64,
    decoder: nn::Linear,
    opt: Optimizer,
    dropout: f64,
    clip: f64,
    lr: f64,
    /// wlm anneals its lr; wlmfp16's script does not reach its optimizer.
    anneals: bool,
    best_val_loss: Option<f64>,
    bptt: i64,
    ntokens: i64,
    /// `[number·bptt + 1, batch_size]` token ids: the script's training rows.
    train_data: Tensor,
    /// `[val_tokens / 10, 10]`.
    val_data: Tensor,
    /// The observation's next batch.
    batch: i64,
    hidden: Hidden,
    kind: Kind,
    device: Device,
    _vs: nn::VarStore,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    Ok(Box::new(new_model(ctx, args)?))
}

fn new_model(ctx: &Ctx, args: &BenchArgs) -> Result<Wlm, BenchError> {
    let batch_size = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let emsize = ctx.size(args, &["emsize"], 656)?;
    let nhid = ctx.size(args, &["nhid"], 656)?;
    let nlayers = ctx.size(args, &["nlayers"], 2)?;
    let bptt = ctx.size(args, &["bptt"], 35)?;
    let rows = args.number.max(1) * bptt + 1;
    let tokens = TokenSets::make(ctx, args, rows, batch_size)?;
    let ntokens = tokens.ntokens;
    let dropout = ctx.float(args, &["dropout"], 0.5)?;
    let lr = ctx.float(args, &["lr"], 20.0)?;
    let clip = ctx.float(args, &["clip"], 0.25)?;
    let tied = ctx.flag(args, &["tied"]);
    let model = ctx
        .string(args, &["model"])?
        .unwrap_or_else(|| "GRU".to_owned());
    if tied && emsize != nhid {
        return Err(ctx.arg_error("--tied needs --emsize equal to --nhid"));
    }
    let mut vs = nn::VarStore::new(ctx.device);
    let root = vs.root();
    let uniform = nn::Init::Uniform { lo: -0.1, up: 0.1 };
    let encoder = nn::embedding(
        &root / "encoder",
        ntokens,
        emsize,
        nn::EmbeddingConfig {
            ws_init: uniform,
            ..Default::default()
        },
    );
    let cfg = nn::RNNConfig {
        num_layers: nlayers,
        dropout,
        batch_first: false,
        ..Default::default()
    };
    let cell = rnn(ctx, &root, &model, (emsize, nhid), cfg)?;
    let mut decoder = nn::linear(
        &root / "decoder",
        nhid,
        ntokens,
        nn::LinearConfig {
            ws_init: uniform,
            bs_init: Some(nn::Init::Const(0.0)),
            bias: true,
        },
    );
    if tied {
        decoder.ws = encoder.ws.shallow_clone();
    }
    vs.set_kind(ctx.kind);
    let flat = flat_weights(ctx, &vs, nlayers)?;
    let opt = optimizer(ctx, args, &vs, lr)?;
    let mut wlm = Wlm {
        encoder,
        cell,
        flat,
        nlayers,
        nhid,
        decoder,
        opt,
        dropout,
        clip,
        lr,
        anneals: ctx.name != "wlmfp16",
        best_val_loss: None,
        bptt,
        ntokens,
        train_data: tokens.train,
        val_data: tokens.valid,
        batch: 0,
        hidden: Hidden::Gru(Tensor::zeros([1], ctx.opts())),
        kind: ctx.kind,
        device: ctx.device,
        _vs: vs,
    };
    wlm.hidden = wlm.init_hidden(batch_size);
    Ok(wlm)
}

/// The token ids a copy trains and evaluates on, and the vocabulary they index.
struct TokenSets {
    /// The vocabulary: the corpus's dictionary, or `ntokens` for synthetic ids.
    ntokens: i64,
    /// `[rows, batch]`.
    train: Tensor,
    /// `[val_tokens / 10, 10]`.
    valid: Tensor,
}

impl TokenSets {
    /// The corpus the job reads ([`corpus_folder`]), batchified as the script does, or,
    /// without it, synthetic ids of the real corpus's sizes (`ntokens`, `val_tokens`).
    fn make(ctx: &Ctx, args: &BenchArgs, rows: i64, batch: i64) -> Result<TokenSets, BenchError> {
        let corpus = match corpus_folder(ctx, ctx.string(args, &["data"])?.as_deref())? {
            Some(dir) => Some(
                mlbench_datasets::wikitext::Corpus::read(&dir)
                    .map_err(|e| ctx.failed(e.to_string()))?,
            ),
            None => None,
        };
        let device = ctx.device;
        if let Some(c) = corpus {
            // The script's `ntokens = len(corpus.dictionary)`, padded to 8 by wlmfp16's
            // Corpus; the evaluation is what valid.txt holds.
            let ntokens = match ctx.name {
                "wlmfp16" => c.padded_vocabulary(8),
                _ => c.vocabulary(),
            } as i64;
            let val_rows = c.valid.len() as i64 / EVAL_BATCH;
            check_val_rows(ctx, c.valid.len() as i64)?;
            let train = batchify(&c.train, rows, batch, ctx)?.to_device(device);
            let valid = batchify(&c.valid, val_rows, EVAL_BATCH, ctx)?.to_device(device);
            return Ok(TokenSets {
                ntokens,
                train,
                valid,
            });
        }
        let real = if ctx.name == "wlmfp16" {
            33_280
        } else {
            33_278
        };
        // `ntokens` and `val_tokens` (mlbench's, not the script's) size synthetic ids only.
        let ntokens = ctx.size(args, &["ntokens"], real)?;
        let val_tokens = ctx.size(args, &["val_tokens"], VAL_TOKENS)?;
        check_val_rows(ctx, val_tokens)?;
        let ids = (Kind::Int64, device);
        Ok(TokenSets {
            ntokens,
            train: Tensor::randint(ntokens, [rows, batch], ids),
            valid: Tensor::randint(ntokens, [val_tokens / EVAL_BATCH, EVAL_BATCH], ids),
        })
    }
}

/// A validation set of `tokens` makes 2 rows of [`EVAL_BATCH`] at least.
fn check_val_rows(ctx: &Ctx, tokens: i64) -> Result<(), BenchError> {
    match tokens < 2 * EVAL_BATCH {
        true => Err(ctx.arg_error(format!(
            "--val_tokens {tokens}: the validation set needs 2 rows of {EVAL_BATCH}"
        ))),
        false => Ok(()),
    }
}

/// The wikitext folder the job reads: its `data` argument (`given`) where that folder
/// holds the corpus, else `$DATA_DIRECTORY/wikitext-2` (where `mlbench data prepare`
/// writes it: the script's default is a folder of the suite's checkout); `None` with
/// `--synthetic-data`; an error naming the folders tried when neither holds it.
fn corpus_folder(ctx: &Ctx, given: Option<&str>) -> Result<Option<PathBuf>, BenchError> {
    if ctx.synthetic {
        return Ok(None);
    }
    let prepared = std::env::var_os("DATA_DIRECTORY")
        .map(|d| PathBuf::from(d).join(mlbench_datasets::wikitext::FOLDER));
    let tried: Vec<PathBuf> = given
        .map(PathBuf::from)
        .into_iter()
        .chain(prepared)
        .collect();
    let holds =
        |dir: &&PathBuf| (mlbench_datasets::wikitext::FILES.iter()).all(|f| dir.join(f).is_file());
    if let Some(dir) = tried.iter().find(holds) {
        return Ok(Some(dir.clone()));
    }
    let names: Vec<String> = tried.iter().map(|d| d.display().to_string()).collect();
    let tried = match names.is_empty() {
        true => "no --data and no $DATA_DIRECTORY".to_owned(),
        false => format!(
            "no {} in {}",
            mlbench_datasets::wikitext::FILES.join(", "),
            names.join(" or ")
        ),
    };
    Err(ctx.arg_error(format!("{tried}; {}", ctx.prepare_hint())))
}

/// The script's `batchify(ids, batch)`: the first `rows × batch` ids as `[rows, batch]`,
/// column k the k-th consecutive stretch (`view(batch, -1).t()`).
fn batchify(ids: &[i64], rows: i64, batch: i64, ctx: &Ctx) -> Result<Tensor, BenchError> {
    let per_column = ids.len() as i64 / batch.max(1);
    if per_column < rows {
        return Err(ctx.arg_error(format!(
            "the corpus has {} tokens: {rows} rows of {batch} need {}",
            ids.len(),
            rows * batch
        )));
    }
    let used = &ids[..(per_column * batch) as usize];
    let columns = Tensor::from_slice(used).view([batch, per_column]).t_();
    Ok(columns.narrow(0, 0, rows).contiguous())
}

/// The script's `--model` (GRU or LSTM) of `emsize` inputs and `nhid` units, its weights
/// made under `rnn`.
fn rnn(
    ctx: &Ctx,
    root: &nn::Path,
    model: &str,
    (emsize, nhid): (i64, i64),
    cfg: nn::RNNConfig,
) -> Result<Cell, BenchError> {
    match model {
        "GRU" => {
            nn::gru(root / "rnn", emsize, nhid, cfg);
            Ok(Cell::Gru)
        }
        "LSTM" => {
            nn::lstm(root / "rnn", emsize, nhid, cfg);
            Ok(Cell::Lstm)
        }
        other => Err(ctx.arg_error(format!("--model `{other}` is not available (GRU, LSTM)"))),
    }
}

/// The RNN's weights in the order the fused kernel takes them, layer by layer.
fn flat_weights(ctx: &Ctx, vs: &nn::VarStore, nlayers: i64) -> Result<Vec<Tensor>, BenchError> {
    let variables = vs.variables();
    let mut flat = Vec::with_capacity(4 * nlayers as usize);
    for layer in 0..nlayers {
        for part in ["weight_ih", "weight_hh", "bias_ih", "bias_hh"] {
            let name = format!("rnn.{part}_l{layer}");
            let var = variables
                .get(&name)
                .ok_or_else(|| ctx.failed(format!("no variable {name}")))?;
            flat.push(var.shallow_clone());
        }
    }
    Ok(flat)
}

/// Plain SGD at `lr`, or in float16 the script's apex optimizer: a static loss scale and
/// float32 master weights.
fn optimizer(
    ctx: &Ctx,
    args: &BenchArgs,
    vs: &nn::VarStore,
    lr: f64,
) -> Result<Optimizer, BenchError> {
    Ok(if ctx.kind == Kind::Half {
        let scale = ctx.float(args, &["static_loss_scale"], STATIC_LOSS_SCALE)?;
        Optimizer::Fp16(StaticHalfSgd::new(vs.trainable_variables(), lr, scale))
    } else {
        let sgd = nn::Sgd::default()
            .build(vs, lr)
            .map_err(|e| ctx.failed(e.to_string()))?;
        Optimizer::Sgd(sgd)
    })
}

impl Wlm {
    /// `model.init_hidden(bsz)`: zeros.
    fn init_hidden(&self, batch_size: i64) -> Hidden {
        let zeros = || {
            Tensor::zeros(
                [self.nlayers, batch_size, self.nhid],
                (self.kind, self.device),
            )
        };
        match self.cell {
            Cell::Gru => Hidden::Gru(zeros()),
            Cell::Lstm => Hidden::Lstm(zeros(), zeros()),
        }
    }

    /// `model(data, hidden)`: the logits `[seq·batch, ntokens]` and the new state.
    fn forward(&self, data: &Tensor, hidden: &Hidden, train: bool) -> (Tensor, Hidden) {
        let emb = self.encoder.forward(data).dropout(self.dropout, train);
        let (output, hidden) = match hidden {
            Hidden::Gru(h) => {
                let (out, h) = emb.gru(
                    h,
                    &self.flat,
                    true,
                    self.nlayers,
                    self.dropout,
                    train,
                    false,
                    false,
                );
                (out, Hidden::Gru(h))
            }
            Hidden::Lstm(h, c) => {
                let flat: Vec<&Tensor> = self.flat.iter().collect();
                let (out, h, c) = emb.lstm(
                    &[h, c],
                    &flat,
                    true,
                    self.nlayers,
                    self.dropout,
                    train,
                    false,
                    false,
                );
                (out, Hidden::Lstm(h, c))
            }
        };
        let logits = self.decoder.forward(&output.dropout(self.dropout, train));
        (logits.to_kind(Kind::Float).view([-1, self.ntokens]), hidden)
    }

    /// `get_batch(source, i)`: rows `i … i + seq_len − 1` and their successors, flattened.
    fn get_batch(&self, source: &Tensor, i: i64) -> (Tensor, Tensor) {
        let seq_len = self.bptt.min(source.size()[0] - 1 - i);
        let data = source.narrow(0, i, seq_len);
        let target = source.narrow(0, i + 1, seq_len).reshape([-1]);
        (data, target)
    }

    /// `evaluate(val_data)`: the token-weighted mean loss over the validation set.
    fn evaluate(&self) -> f64 {
        tch::no_grad(|| {
            let rows = self.val_data.size()[0];
            let mut hidden = self.init_hidden(EVAL_BATCH);
            let mut total = 0.0;
            let mut i = 0;
            while i < rows - 1 {
                let (data, targets) = self.get_batch(&self.val_data, i);
                let (logits, next) = self.forward(&data, &hidden, false);
                let seq_len = data.size()[0] as f64;
                total += seq_len * logits.cross_entropy_for_logits(&targets).double_value(&[]);
                hidden = next.detach();
                i += self.bptt;
            }
            total / (rows - 1) as f64
        })
    }
}

impl Train for Wlm {
    fn begin_observation(&mut self, _observation: u64) {
        // train(): `hidden = model.init_hidden(args.batch_size)`, the loop from row 0.
        self.hidden = self.init_hidden(self.train_data.size()[1]);
        self.batch = 0;
    }

    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        // The observation's batch `batch`; past its `number` (a caller stepping on without
        // a new observation) the rows start over.
        let batches = (self.train_data.size()[0] - 1) / self.bptt;
        let row = (self.batch % batches) * self.bptt;
        let (data, targets) = self.get_batch(&self.train_data, row);
        self.batch += 1;
        let hidden = self.hidden.detach();
        let (logits, hidden) = self.forward(&data, &hidden, true);
        self.hidden = hidden;
        let loss = logits.cross_entropy_for_logits(&targets);
        match &mut self.opt {
            Optimizer::Sgd(opt) => {
                opt.zero_grad();
                loss.backward();
                opt.clip_grad_norm(self.clip);
                opt.step();
            }
            Optimizer::Fp16(opt) => {
                opt.zero_grad();
                opt.backward(&loss);
                opt.step_clipped(self.clip);
            }
        }
        Ok(loss)
    }

    fn after_observation(&mut self, _observation: u64, train_seconds: f64) -> Logs {
        let device = self.device;
        let (val_loss, eval) = timed(&|| sync(device), || self.evaluate());
        let improved = self.best_val_loss.is_none_or(|best| val_loss < best);
        if improved {
            self.best_val_loss = Some(val_loss);
        } else if self.anneals {
            self.lr /= 4.0;
            if let Optimizer::Sgd(opt) = &mut self.opt {
                opt.set_lr(self.lr);
            }
        }
        Logs::none()
            .metric("val_loss", val_loss)
            .stage("eval", eval)
            .stage("all", train_seconds + eval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::DeviceSpec;
    use mlbench_schema::value::Value;

    fn tiny(name: &'static str, number: i64) -> Wlm {
        let i = Value::Int;
        let args = BenchArgs {
            batch_size: 3,
            number,
            repeat: 12,
            seed: 4,
            extra: [
                ("emsize", i(6)),
                ("nhid", i(6)),
                ("bptt", i(4)),
                ("ntokens", i(20)),
                ("val_tokens", i(95)),
                ("dropout", Value::Float(0.0)),
                ("synthetic_data", Value::Bool(true)),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        };
        let spec = DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        let ctx = Ctx::new(name, &args, spec).unwrap();
        new_model(&ctx, &args).unwrap()
    }

    /// With the corpus on disk, the sizes are the corpus's: the dictionary's words, the
    /// validation set as valid.txt holds it (in rows of 10), and the training rows the
    /// script's `batchify` makes (column k the k-th stretch of train.txt's ids).
    #[test]
    fn a_corpus_on_disk_gives_the_vocabulary_and_the_evaluation_size() {
        use mlbench_datasets::wikitext;
        let tmp = tempfile::tempdir().unwrap();
        wikitext::prepare(tmp.path(), 1, mlbench_datasets::Scale::Smoke).unwrap();
        let dir = tmp.path().join(wikitext::FOLDER);
        let corpus = wikitext::Corpus::read(&dir).unwrap();
        let i = Value::Int;
        let args = BenchArgs {
            batch_size: 3,
            number: 2,
            repeat: 3,
            seed: 4,
            extra: [
                ("emsize", i(6)),
                ("nhid", i(6)),
                ("bptt", i(4)),
                ("data", Value::Str(dir.display().to_string())),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        };
        let spec = DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        let ctx = Ctx::new("wlm", &args, spec).unwrap();
        let m = new_model(&ctx, &args).unwrap();
        assert_eq!(m.ntokens, corpus.vocabulary() as i64);
        let valid = corpus.valid.len() as i64;
        assert_eq!(valid, wikitext::valid_tokens(&dir).unwrap() as i64);
        assert_eq!(m.val_data.size(), [valid / 10, 10]);
        // 2 batches of bptt 4, and the row after: 9 rows of 3 columns.
        let per_column = corpus.train.len() / 3;
        let column = |k: usize| corpus.train[k * per_column..k * per_column + 9].to_vec();
        let got = |k: i64| Vec::<i64>::try_from(m.train_data.select(1, k)).unwrap();
        assert_eq!((got(0), got(2)), (column(0), column(2)));
        // `ntokens` sizes synthetic ids only: the corpus's words stay the vocabulary.
        let mut small = args.clone();
        small.extra.insert("ntokens".into(), i(5));
        let ctx = Ctx::new("wlm", &small, spec).unwrap();
        let m = new_model(&ctx, &small).unwrap();
        assert_eq!(m.ntokens, corpus.vocabulary() as i64);
    }

    #[test]
    fn the_same_batches_every_observation_from_a_zero_state() {
        let mut m = tiny("wlm", 2);
        // 2 batches of bptt 4 read rows 0…8 of 9.
        assert_eq!(m.train_data.size(), [9, 3]);
        assert_eq!(m.val_data.size(), [9, 10], "95 tokens: 9 rows of 10");
        let before = m.train_data.copy();
        m.begin_observation(0);
        let _ = m.train_step().unwrap();
        let _ = m.train_step().unwrap();
        assert_eq!(m.batch, 2);
        m.begin_observation(1);
        assert_eq!(m.batch, 0);
        let Hidden::Gru(h) = &m.hidden else {
            panic!("a GRU")
        };
        assert_eq!(h.size(), [2, 3, 6]);
        assert_eq!(h.abs().sum(Kind::Double).double_value(&[]), 0.0);
        assert!(m.train_data.equal(&before), "the token set is made once");
        // get_batch: the target rows are the data rows shifted by one.
        let (data, target) = m.get_batch(&m.train_data, 4);
        assert!(data.equal(&m.train_data.narrow(0, 4, 4)));
        assert!(target.equal(&m.train_data.narrow(0, 5, 4).reshape([-1])));
        // The last chunk of the validation set is short: 9 rows → chunks at 0 and 4, the
        // second of min(4, 9 − 1 − 4) = 4 rows; a set of 7 rows ends with 2.
        let seven = Tensor::arange(70, (Kind::Int64, Device::Cpu)).view([7, 10]);
        assert_eq!(m.get_batch(&seven, 4).0.size(), [2, 10]);
    }

    #[test]
    fn evaluate_is_the_token_weighted_mean_of_the_chunks_losses() {
        let m = tiny("wlm", 1);
        // By hand: chunks of rows [0, 4) and [4, 8) (targets 1…8), the state carried.
        let mut hidden = m.init_hidden(EVAL_BATCH);
        let mut total = 0.0;
        for i in [0, 4] {
            let data = m.val_data.narrow(0, i, 4);
            let target = m.val_data.narrow(0, i + 1, 4).reshape([-1]);
            let (logits, next) = tch::no_grad(|| m.forward(&data, &hidden, false));
            total += 4.0 * logits.cross_entropy_for_logits(&target).double_value(&[]);
            hidden = next;
        }
        let want = total / 8.0;
        let got = m.evaluate();
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        // With 20 tokens and random weights near 0, close to ln 20.
        assert!((got - 20f64.ln()).abs() < 0.2, "{got}");
    }

    #[test]
    fn wlm_divides_its_lr_by_4_after_a_val_loss_that_does_not_improve() {
        for (name, anneals) in [("wlm", true), ("wlmfp16", false)] {
            let mut m = tiny(name, 1);
            let logs = m.after_observation(0, 1.5);
            let val = logs.metrics[0];
            assert_eq!(val.0, "val_loss");
            assert_eq!(m.best_val_loss, Some(val.1));
            let stages: Vec<&str> = logs.stages.iter().map(|s| s.0).collect();
            assert_eq!(stages, ["eval", "all"]);
            assert_eq!(logs.stages[1].1, 1.5 + logs.stages[0].1);
            assert_eq!(m.lr, 20.0);
            // No training in between: the same val_loss, not an improvement.
            m.after_observation(1, 1.0);
            let want = if anneals { 5.0 } else { 20.0 };
            assert_eq!(m.lr, want, "{name}");
            m.after_observation(2, 1.0);
            assert_eq!(m.lr, if anneals { 1.25 } else { 20.0 }, "{name}");
        }
    }

    #[test]
    fn a_step_is_clipped_sgd_with_the_current_lr() {
        let mut m = tiny("wlm", 1);
        m.begin_observation(0);
        let params = m._vs.trainable_variables();
        let before: Vec<Tensor> = params.iter().map(|p| p.detach().copy()).collect();
        // The gradient of the first batch from a zero state (dropout 0: deterministic).
        let (data, targets) = m.get_batch(&m.train_data, 0);
        let (logits, _) = m.forward(&data, &m.init_hidden(3), true);
        let loss0 = logits.cross_entropy_for_logits(&targets);
        let grads = Tensor::run_backward(&[&loss0], &params, false, false);
        let norm = grads
            .iter()
            .map(|g| g.pow_tensor_scalar(2).sum(Kind::Double).double_value(&[]))
            .sum::<f64>()
            .sqrt();
        // clip_grad_norm_(0.25): scale min(1, 0.25 / (norm + 1e-6)).
        let scale = (0.25 / (norm + 1e-6)).min(1.0);
        let _ = m.train_step().unwrap();
        for ((p, b), g) in params.iter().zip(&before).zip(&grads) {
            let want = b - g * (20.0 * scale);
            let diff = (p - &want).abs().max().double_value(&[]);
            assert!(diff < 1e-5, "{diff}");
        }
    }

    #[test]
    fn wlmfp16s_vocabulary_is_padded_to_a_multiple_of_8() {
        let args = BenchArgs {
            batch_size: 1,
            number: 1,
            repeat: 12,
            seed: 0,
            extra: [
                ("emsize", Value::Int(2)),
                ("nhid", Value::Int(2)),
                ("val_tokens", Value::Int(20)),
                ("synthetic_data", Value::Bool(true)),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        };
        let spec = DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        for (name, vocabulary) in [("wlm", 33_278), ("wlmfp16", 33_280)] {
            let ctx = Ctx::new(name, &args, spec).unwrap();
            assert_eq!(new_model(&ctx, &args).unwrap().ntokens, vocabulary);
        }
    }

    /// wlmfp16 in float16 steps through the static FP16_Optimizer: float32 masters that
    /// the half parameters round. (libtorch runs float16 on the CPU too, slowly; the runner
    /// refuses it there, so the context is made by hand.)
    #[test]
    fn wlmfp16_in_float16_steps_float32_masters() {
        let args = BenchArgs {
            batch_size: 2,
            number: 1,
            repeat: 12,
            seed: 1,
            extra: [
                ("emsize", Value::Int(4)),
                ("nhid", Value::Int(4)),
                ("bptt", Value::Int(3)),
                ("ntokens", Value::Int(16)),
                ("val_tokens", Value::Int(40)),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        };
        let ctx = Ctx {
            name: "wlmfp16",
            device: Device::Cpu,
            kind: Kind::Half,
            synthetic: true,
        };
        let mut m = new_model(&ctx, &args).unwrap();
        let Optimizer::Fp16(_) = &m.opt else {
            panic!("a half model steps through FP16_Optimizer")
        };
        let before: Vec<Tensor> = m
            ._vs
            .trainable_variables()
            .iter()
            .map(|p| p.copy())
            .collect();
        m.begin_observation(0);
        let loss = m.train_step().unwrap().double_value(&[]);
        assert!(loss.is_finite(), "{loss}");
        let Optimizer::Fp16(opt) = &m.opt else {
            unreachable!()
        };
        let params = m._vs.trainable_variables();
        let moved = params.iter().zip(&before).any(|(p, b)| !p.equal(b));
        assert!(moved, "the step changed the weights");
        for (i, p) in params.iter().enumerate() {
            assert_eq!(p.kind(), Kind::Half);
            assert!(p.equal(&opt.master(i).to_kind(Kind::Half)), "parameter {i}");
        }
    }
}
