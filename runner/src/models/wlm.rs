//! wlm / wlmfp16 (word_language_model main.py): embedding → dropout → 2-layer GRU or LSTM →
//! dropout → linear decoder over the wikitext-2 vocabulary (33 278 tokens), on random token
//! sequences of bptt 35; the hidden state is carried across batches (detached); cross-entropy,
//! plain SGD lr 20 with gradient-norm clipping 0.25, as the script.
//! Args: `batch_size` (fast.json: 64), `emsize` (656), `nhid` (656), `nlayers` (2), `dropout` (0.5),
//! `model` (GRU|LSTM; jobs pass GRU), `bptt` (35), `ntokens` (33278), `lr` (20), `clip`
//! (0.25), `tied`, `fp16`.

use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError};
use tch::nn::{self, Module, OptimizerConfig, RNN};
use tch::{Kind, Tensor};

pub(super) const SOURCE: &str = include_str!("wlm.rs");

enum Rnn {
    Gru(nn::GRU, Option<Tensor>),
    Lstm(nn::LSTM, Option<(Tensor, Tensor)>),
}

struct Wlm {
    encoder: nn::Embedding,
    rnn: Rnn,
    decoder: nn::Linear,
    opt: nn::Optimizer,
    dropout: f64,
    clip: f64,
    batch_size: i64,
    bptt: i64,
    ntokens: i64,
    device: tch::Device,
    _vs: nn::VarStore,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    let batch_size = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let emsize = ctx.size(args, &["emsize"], 656)?;
    let nhid = ctx.size(args, &["nhid"], 656)?;
    let nlayers = ctx.size(args, &["nlayers"], 2)?;
    let bptt = ctx.size(args, &["bptt"], 35)?;
    let ntokens = ctx.size(args, &["ntokens"], 33278)?;
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
        batch_first: true,
        ..Default::default()
    };
    let rnn = match model.as_str() {
        "GRU" => Rnn::Gru(nn::gru(&root / "rnn", emsize, nhid, cfg), None),
        "LSTM" => Rnn::Lstm(nn::lstm(&root / "rnn", emsize, nhid, cfg), None),
        other => {
            return Err(ctx.arg_error(format!("--model `{other}` is not available (GRU, LSTM)")));
        }
    };
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
    let opt = nn::Sgd::default()
        .build(&vs, lr)
        .map_err(|e| ctx.failed(e.to_string()))?;
    Ok(Box::new(Wlm {
        encoder,
        rnn,
        decoder,
        opt,
        dropout,
        clip,
        batch_size,
        bptt,
        ntokens,
        device: ctx.device,
        _vs: vs,
    }))
}

impl Train for Wlm {
    fn train_step(&mut self) -> Tensor {
        let tokens = Tensor::randint(
            self.ntokens,
            [self.batch_size, self.bptt + 1],
            (Kind::Int64, self.device),
        );
        let input = tokens.narrow(1, 0, self.bptt);
        let target = tokens.narrow(1, 1, self.bptt);
        let emb = self.encoder.forward(&input).dropout(self.dropout, true);
        let output = match &mut self.rnn {
            Rnn::Gru(gru, hidden) => {
                let state = match hidden {
                    Some(h) => nn::GRUState(h.detach()),
                    None => gru.zero_state(self.batch_size),
                };
                let (out, nn::GRUState(h)) = gru.seq_init(&emb, &state);
                *hidden = Some(h);
                out
            }
            Rnn::Lstm(lstm, hidden) => {
                let state = match hidden {
                    Some((h, c)) => nn::LSTMState((h.detach(), c.detach())),
                    None => lstm.zero_state(self.batch_size),
                };
                let (out, nn::LSTMState(hc)) = lstm.seq_init(&emb, &state);
                *hidden = Some(hc);
                out
            }
        };
        let logits = self.decoder.forward(&output.dropout(self.dropout, true));
        let loss = logits
            .to_kind(Kind::Float)
            .view([-1, self.ntokens])
            .cross_entropy_for_logits(&target.reshape([-1]));
        self.opt.zero_grad();
        loss.backward();
        self.opt.clip_grad_norm(self.clip);
        self.opt.step();
        loss
    }
}
