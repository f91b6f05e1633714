//! toy_reg (regression/polynome main.py): Linear(4→1) fitting a random degree-4 polynomial
//! on fresh synthetic batches of the features x, x², x³, x⁴ (x ~ N(0, 1)); smooth-L1 loss (as
//! the suite's script; MSE diverges on the x⁴ tail at lr 0.1), plain SGD with lr 0.1.
//! Args: `batch_size` (fast.json: 256), `lr` (0.1).

use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError};
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Reduction, Tensor};

pub(super) const SOURCE: &str = include_str!("toy_reg.rs");

const POLY_DEGREE: i64 = 4;

struct ToyReg {
    fc: nn::Linear,
    opt: nn::Optimizer,
    w_target: Tensor,
    b_target: Tensor,
    batch_size: i64,
    ctx_opts: (tch::Kind, tch::Device),
    _vs: nn::VarStore,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    let batch_size = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let lr = ctx.float(args, &["lr"], 0.1)?;
    let w_target = Tensor::randn([POLY_DEGREE, 1], ctx.opts()) * 5.0;
    let b_target = Tensor::randn([1], ctx.opts()) * 5.0;
    let mut vs = nn::VarStore::new(ctx.device);
    let fc = nn::linear(vs.root() / "fc", POLY_DEGREE, 1, Default::default());
    vs.set_kind(ctx.kind);
    let opt = nn::Sgd::default()
        .build(&vs, lr)
        .map_err(|e| ctx.failed(e.to_string()))?;
    Ok(Box::new(ToyReg {
        fc,
        opt,
        w_target,
        b_target,
        batch_size,
        ctx_opts: ctx.opts(),
        _vs: vs,
    }))
}

impl Train for ToyReg {
    fn train_step(&mut self) -> Tensor {
        // make_features: [x, x², x³, x⁴] per row.
        let x = Tensor::randn([self.batch_size, 1], self.ctx_opts);
        let features = Tensor::cat(
            &(1..=POLY_DEGREE)
                .map(|i| x.pow_tensor_scalar(i))
                .collect::<Vec<_>>(),
            1,
        );
        let target = features.matmul(&self.w_target) + &self.b_target;
        let loss = self
            .fc
            .forward(&features)
            .smooth_l1_loss(&target, Reduction::Mean, 1.0);
        self.opt.backward_step(&loss);
        loss
    }
}
