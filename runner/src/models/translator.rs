//! translator (natural_language_processing/rnn_translator train.py): GNMT as the script's
//! default `--model-config` builds it (hidden 1024, 4 layers, dropout 0.2, one embedding
//! shared by encoder and decoder, padding index 0). Encoder: a bidirectional LSTM, an LSTM
//! 2H→H, then residual LSTMs H→H. Decoder: an LSTM H→H whose outputs query normalised
//! Bahdanau attention over the encoder's outputs (pads masked at −65504), then LSTMs of
//! [x ‖ attention] 2H→H (residual from the second on), a classifier H→vocab. Loss: label
//! smoothing 0.1 over the non-pad targets (0.9·NLL + 0.1·mean −log p), summed and ÷ batch;
//! Adam 5e-4 with the gradient norm clipped to 5. Items: sentences (`batch_size` a step).
//!
//! Data are synthetic sentence pairs of token ids in [4, vocab) (0–3 are pad, unk, bos,
//! eos), lengths uniform in 1..=`max_length_train` (50), made once on the device; the
//! vocabulary is WMT16's BPE 32000 as the suite's tokenizer pads it (32320). Differences:
//! no packed sequences (tch has none), so the encoder's backward direction reads the pads
//! of the shorter sentences first (attention still masks them); no bucketing.
//! Args: `batch_size` (fast.json: 64), `hidden_size` (1024), `num_layers` (4, at least 2),
//! `vocab_size` (32320), `max_length_train` (50), `smoothing` (0.1), `dropout` (0.2),
//! `lr` (5e-4), `grad_clip` (5) — all but `batch_size` are the script's defaults, which
//! fast.json does not change.

use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError};
use tch::nn::{self, Module, OptimizerConfig, RNN};
use tch::{Kind, Tensor};

pub(super) const SOURCE: &str = include_str!("translator.rs");

/// The padding token.
const PAD: i64 = 0;

/// Normalised Bahdanau attention (`BahdanauAttention(normalize=True)`).
struct Attention {
    linear_q: nn::Linear,
    linear_k: nn::Linear,
    linear_att: Tensor,
    normalize_scalar: Tensor,
    normalize_bias: Tensor,
}

impl Attention {
    fn new(p: &nn::Path, h: i64) -> Attention {
        let no_bias = nn::LinearConfig {
            bias: false,
            ..Default::default()
        };
        let stdv = 1.0 / (h as f64).sqrt();
        Attention {
            linear_q: nn::linear(p / "linear_q", h, h, no_bias),
            linear_k: nn::linear(p / "linear_k", h, h, no_bias),
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
        let scores = scores.masked_fill(&mask.unsqueeze(1), -65504.0);
        let weights = scores.softmax(-1, Kind::Float);
        (weights.bmm(keys), weights)
    }
}

/// Label smoothing over the non-pad targets, summed: `logits` [N, V], `target` [N].
fn smoothed_loss(logits: &Tensor, target: &Tensor, smoothing: f64) -> Tensor {
    let logprobs = logits.log_softmax(-1, Kind::Float);
    let keep = target.ne(PAD).to_kind(Kind::Float);
    let nll = -logprobs
        .gather(-1, &target.unsqueeze(1), false)
        .squeeze_dim(1);
    let smooth = -logprobs.mean_dim(-1, false, Kind::Float);
    ((nll * (1.0 - smoothing) + smooth * smoothing) * keep).sum(Kind::Float)
}

struct Gnmt {
    embedding: nn::Embedding,
    encoder: Vec<nn::LSTM>,
    att_rnn: nn::LSTM,
    attention: Attention,
    decoder: Vec<nn::LSTM>,
    classifier: nn::Linear,
    dropout: f64,
    smoothing: f64,
    grad_clip: f64,
    opt: nn::Optimizer,
    /// [Ts, B], [Tt, B] token ids, time first; the source's pad mask [B, Ts].
    src: Tensor,
    tgt: Tensor,
    src_mask: Tensor,
    batch: i64,
    _vs: nn::VarStore,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    let batch = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let h = ctx.size(args, &["hidden_size"], 1024)?;
    let layers = ctx.size(args, &["num_layers"], 4)?;
    let vocab = ctx.size(args, &["vocab_size"], 32_320)?;
    let max_len = ctx.size(args, &["max_length_train"], 50)?;
    let smoothing = ctx.float(args, &["smoothing"], 0.1)?;
    let dropout = ctx.float(args, &["dropout"], 0.2)?;
    let lr = ctx.float(args, &["lr"], 5e-4)?;
    let grad_clip = ctx.float(args, &["grad_clip"], 5.0)?;
    if layers < 2 {
        return Err(ctx.arg_error("--num-layers: GNMT needs at least 2"));
    }
    if vocab < 5 {
        return Err(ctx.arg_error("--vocab-size: at least the 4 special tokens and one word"));
    }
    let vs = nn::VarStore::new(ctx.device);
    let root = vs.root();
    let embedding = nn::embedding(
        &root / "embedder",
        vocab,
        h,
        nn::EmbeddingConfig {
            padding_idx: PAD,
            ..Default::default()
        },
    );
    let lstm = |name: String, input, bidirectional| {
        let cfg = nn::RNNConfig {
            bidirectional,
            ..Default::default()
        };
        nn::lstm(&root / name, input, h, cfg)
    };
    let mut encoder = vec![
        lstm("encoder0".into(), h, true),
        lstm("encoder1".into(), 2 * h, false),
    ];
    encoder.extend((2..layers).map(|i| lstm(format!("encoder{i}"), h, false)));
    let att_rnn = lstm("att_rnn".into(), h, false);
    let attention = Attention::new(&(&root / "attn"), h);
    let decoder = (0..layers - 1)
        .map(|i| lstm(format!("decoder{i}"), 2 * h, false))
        .collect();
    let classifier = nn::linear(&root / "classifier", h, vocab, Default::default());
    let opt = nn::Adam::default()
        .build(&vs, lr)
        .map_err(|e| ctx.failed(e.to_string()))?;
    let (src, src_mask) = sentences(batch, max_len, vocab, ctx.device);
    // Targets carry one more token: the decoder reads tgt[:-1] and predicts tgt[1:].
    let (tgt, _) = sentences(batch, max_len + 1, vocab, ctx.device);
    Ok(Box::new(Gnmt {
        embedding,
        encoder,
        att_rnn,
        attention,
        decoder,
        classifier,
        dropout,
        smoothing,
        grad_clip,
        opt,
        src,
        tgt,
        src_mask,
        batch,
        _vs: vs,
    }))
}

/// `batch` sentences of random lengths in 1..=`max_len`, padded: ids [T, B] (time first)
/// and the pad mask [B, T].
fn sentences(batch: i64, max_len: i64, vocab: i64, device: tch::Device) -> (Tensor, Tensor) {
    let opts = (Kind::Int64, device);
    let lengths = Tensor::randint_low(1, max_len + 1, [batch], opts);
    let positions = Tensor::arange(max_len, opts).unsqueeze(0);
    let mask = positions.ge_tensor(&lengths.unsqueeze(1));
    let tokens = Tensor::randint_low(4, vocab, [batch, max_len], opts).masked_fill(&mask, PAD);
    (tokens.transpose(0, 1).contiguous(), mask)
}

impl Train for Gnmt {
    fn train_step(&mut self) -> Tensor {
        let drop = |x: Tensor| x.dropout(self.dropout, true);
        // Encoder.
        let x = self.embedding.forward(&self.src);
        let (x, _) = self.encoder[0].seq(&x);
        let (mut x, _) = self.encoder[1].seq(&drop(x));
        for layer in &self.encoder[2..] {
            let (y, _) = layer.seq(&drop(x.shallow_clone()));
            x = y + x;
        }
        let context = x.transpose(0, 1); // [B, Ts, H]
        // Decoder over tgt[:-1].
        let steps = self.tgt.size()[0] - 1;
        let input = self.tgt.narrow(0, 0, steps);
        let labels = self.tgt.narrow(0, 1, steps);
        let y = self.embedding.forward(&input);
        let (y, _) = self.att_rnn.seq(&y);
        let (attn, _) = self
            .attention
            .forward(&y.transpose(0, 1), &context, &self.src_mask);
        let attn = attn.transpose(0, 1); // [Tt, B, H]
        let (mut y, _) = self.decoder[0].seq(&Tensor::cat(&[drop(y), attn.shallow_clone()], 2));
        for layer in &self.decoder[1..] {
            let input = Tensor::cat(&[drop(y.shallow_clone()), attn.shallow_clone()], 2);
            let (z, _) = layer.seq(&input);
            y = z + y;
        }
        let logits = self.classifier.forward(&y);
        let vocab = logits.size()[2];
        let loss = smoothed_loss(
            &logits.view([-1, vocab]).to_kind(Kind::Float),
            &labels.contiguous().view([-1]),
            self.smoothing,
        ) / self.batch as f64;
        self.opt.backward_step_clip_norm(&loss, self.grad_clip);
        loss.detach()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlbench_schema::value::Value;

    #[test]
    fn label_smoothing_by_hand() {
        // Logits [0, ln 2, ln 3]: p = 1/6, 2/6, 3/6. Target 2: NLL = ln 2 = 0.693147;
        // mean −log p = (ln 6 + ln 3 + ln 2) / 3 = 1.194506. With smoothing 0.1:
        // 0.9·0.693147 + 0.1·1.194506 = 0.743283. The second row's target is the pad: 0.
        let l = |x: f64| x.ln();
        let logits =
            Tensor::from_slice(&[0.0f32, l(2.0) as f32, l(3.0) as f32, 5.0, 1.0, 2.0]).view([2, 3]);
        let target = Tensor::from_slice(&[2i64, PAD]);
        let got = smoothed_loss(&logits, &target, 0.1).double_value(&[]);
        let want = 0.9 * l(2.0) + 0.1 * (l(6.0) + l(3.0) + l(2.0)) / 3.0;
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        assert!((want - 0.743_283).abs() < 1e-6);
        // Without smoothing it is the NLL alone.
        let plain = smoothed_loss(&logits, &target, 0.0).double_value(&[]);
        assert!((plain - l(2.0)).abs() < 1e-6);
    }

    #[test]
    fn attention_weights_sum_to_one_over_the_words_and_skip_the_pads() {
        tch::manual_seed(1);
        let vs = nn::VarStore::new(tch::Device::Cpu);
        let att = Attention::new(&vs.root(), 4);
        let query = Tensor::randn([2, 3, 4], (Kind::Float, tch::Device::Cpu));
        let keys = Tensor::randn([2, 5, 4], (Kind::Float, tch::Device::Cpu));
        // Sentence 0 has 5 words, sentence 1 has 2.
        let mask = Tensor::from_slice(&[
            false, false, false, false, false, false, false, true, true, true,
        ])
        .view([2, 5]);
        let (context, weights) = att.forward(&query, &keys, &mask);
        assert_eq!(context.size(), [2, 3, 4]);
        let sums = weights.sum_dim_intlist(-1, false, Kind::Double);
        assert!(
            (sums - 1.0).abs().max().double_value(&[]) < 1e-6,
            "every query's weights sum to 1"
        );
        let pads = weights.get(1).narrow(1, 2, 3);
        assert!(
            pads.abs().max().double_value(&[]) < 1e-12,
            "pads get no weight"
        );
        assert!(weights.get(0).narrow(1, 2, 3).min().double_value(&[]) > 0.0);
    }

    #[test]
    fn sentences_are_padded_after_their_length() {
        tch::manual_seed(2);
        let (ids, mask) = sentences(6, 7, 20, tch::Device::Cpu);
        assert_eq!(ids.size(), [7, 6]);
        let ids = ids.transpose(0, 1);
        for b in 0..6 {
            for t in 0..7 {
                let id = ids.int64_value(&[b, t]);
                let pad = mask.int64_value(&[b, t]) != 0;
                assert_eq!(id == PAD, pad, "({b}, {t})");
                assert!(pad || (4..20).contains(&id));
            }
            assert!(mask.int64_value(&[b, 0]) == 0, "every sentence has a word");
        }
    }

    #[test]
    fn it_learns_its_fixed_batch() {
        let i = Value::Int;
        let args = BenchArgs {
            batch_size: 4,
            number: 1,
            repeat: 1,
            seed: 5,
            extra: [
                ("hidden_size", i(16)),
                ("num_layers", i(2)),
                ("vocab_size", i(12)),
                ("max_length_train", i(5)),
                ("dropout", Value::Float(0.0)),
                ("lr", Value::Float(0.01)),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        };
        let spec = crate::bench::DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        let ctx = Ctx::new("translator", &args, spec).unwrap();
        let mut model = build(&ctx, &args).unwrap();
        let losses: Vec<f64> = (0..40)
            .map(|_| model.train_step().double_value(&[]))
            .collect();
        assert!(losses.iter().all(|l| l.is_finite()), "{losses:?}");
        assert!(losses[39] < losses[0] * 0.7, "{losses:?}");
    }
}
