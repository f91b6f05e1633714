//! recom (neural_collaborative_filtering ncf.py): NeuMF, a GMF branch (user·item embeddings
//! of `factors`) beside an MLP branch (user‖item embeddings of layers[0]/2 each, then the
//! `layers` with ReLU), a final Linear to one logit; BCE on random (user, item, label)
//! batches with one positive in five (the script's 4 negatives per positive); Adam.
//! Args: `batch_size` (fast.json: 2048), `factors`/`f` (64), `layers` ("256 256 128 64"),
//! `learning_rate`/`l` (0.0005), `users` (138493) and `items` (26744), ml-20m's counts.

use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Kind, Reduction, Tensor};

pub(super) const SOURCE: &str = include_str!("recom.rs");

struct NeuMf {
    mf_user: nn::Embedding,
    mf_item: nn::Embedding,
    mlp_user: nn::Embedding,
    mlp_item: nn::Embedding,
    mlp: Vec<nn::Linear>,
    last: nn::Linear,
    opt: nn::Optimizer,
    batch_size: i64,
    users: i64,
    items: i64,
    kind: Kind,
    device: tch::Device,
    /// `losses.sum`: the observation's losses × their batch sizes.
    losses_sum: f64,
    _vs: nn::VarStore,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    let batch_size = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let factors = ctx.size(args, &["factors", "f"], 64)?;
    let layers = ctx.int_list(args, &["layers"], &[256, 256, 128, 64])?;
    let lr = ctx.float(args, &["learning_rate", "l", "lr"], 0.0005)?;
    let users = ctx.size(args, &["users"], 138_493)?;
    let items = ctx.size(args, &["items"], 26_744)?;
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
    let mlp = layers
        .windows(2)
        .enumerate()
        .map(|(i, w)| nn::linear(&root / format!("mlp{i}"), w[0], w[1], Default::default()))
        .collect();
    let last = nn::linear(
        &root / "final",
        factors + layers[layers.len() - 1],
        1,
        Default::default(),
    );
    vs.set_kind(ctx.kind);
    let opt = nn::Adam::default()
        .build(&vs, lr)
        .map_err(|e| ctx.failed(e.to_string()))?;
    Ok(Box::new(NeuMf {
        mf_user,
        mf_item,
        mlp_user,
        mlp_item,
        mlp,
        last,
        opt,
        batch_size,
        users,
        items,
        kind: ctx.kind,
        device: ctx.device,
        losses_sum: 0.0,
        _vs: vs,
    }))
}

impl Train for NeuMf {
    fn train_step(&mut self) -> Tensor {
        let user = Tensor::randint(self.users, [self.batch_size], (Kind::Int64, self.device));
        let item = Tensor::randint(self.items, [self.batch_size], (Kind::Int64, self.device));
        let label = Tensor::rand([self.batch_size, 1], (self.kind, self.device))
            .lt(0.2)
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
        loss
    }

    fn begin_observation(&mut self, _observation: u64) {
        self.losses_sum = 0.0;
    }

    fn step(&mut self) -> Logs {
        let loss = self.train_step().to_kind(Kind::Double).double_value(&[]);
        // `losses.update(loss.item(), user.size(0))`.
        self.losses_sum += loss * self.batch_size as f64;
        Logs::loss(loss)
    }

    fn after_observation(&mut self, _observation: u64, _train_seconds: f64) -> Logs {
        // ncf.py:192: `exp.log_epoch_loss(losses.sum)`, after the timer.
        Logs::none().epoch_loss(self.losses_sum)
    }
}
