//! toy_lstm (time_sequence_prediction/lstm train.py): two LSTMCells (1→51→51) and a
//! Linear(51→1) predicting the next value of N noisy-phase sine waves, full batch, MSE.
//! L-BFGS (lr 0.8) as the suite's script, PyTorch's algorithm ported in `lbfgs.rs`: one step
//! runs up to 20 full-batch forward/backward passes over the whole sequence.
//! Args: `samples` (100 waves, of which 97 train), `length` (1000), `hidden` (51),
//! `dtype` (float32; float64/bfloat16 on any device, float16 on CUDA).

use super::lbfgs::Lbfgs;
use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError};
use tch::nn::{self, Module};
use tch::{Kind, Reduction, Tensor};

pub(super) const SOURCE: &str = include_str!("toy_lstm.rs");

struct Cell {
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor,
    b_hh: Tensor,
}

impl Cell {
    fn new(p: &nn::Path, input: i64, hidden: i64) -> Cell {
        let k = 1.0 / (hidden as f64).sqrt();
        let init = nn::Init::Uniform { lo: -k, up: k };
        Cell {
            w_ih: p.var("w_ih", &[4 * hidden, input], init),
            w_hh: p.var("w_hh", &[4 * hidden, hidden], init),
            b_ih: p.var("b_ih", &[4 * hidden], init),
            b_hh: p.var("b_hh", &[4 * hidden], init),
        }
    }

    fn step(&self, x: &Tensor, h: &Tensor, c: &Tensor) -> (Tensor, Tensor) {
        x.lstm_cell(
            &[h, c],
            &self.w_ih,
            &self.w_hh,
            Some(&self.b_ih),
            Some(&self.b_hh),
        )
    }
}

/// The model and its data (train.py's `Sequence`, `input`, `target`).
struct Sequence {
    lstm1: Cell,
    lstm2: Cell,
    linear: nn::Linear,
    input: Tensor,
    target: Tensor,
    hidden: i64,
}

struct ToyLstm {
    seq: Sequence,
    opt: Lbfgs,
    _vs: nn::VarStore,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    let samples = ctx.size(args, &["samples"], 100)?;
    let length = ctx.size(args, &["length"], 1000)?;
    let hidden = ctx.size(args, &["hidden"], 51)?;
    let lr = ctx.float(args, &["lr"], 0.8)?;
    if samples < 4 || length < 2 {
        return Err(ctx.arg_error("toy_lstm needs --samples ≥ 4 and --length ≥ 2"));
    }
    // generate_sine_wave.py: x = arange(L) + randint(-4T, 4T, N); data = sin(x / T), T = 20.
    let t = 20.0;
    let x = Tensor::arange(length, (Kind::Double, ctx.device)).unsqueeze(0)
        + Tensor::randint_low(-4 * 20, 4 * 20, [samples, 1], ctx.int_opts()).to_kind(Kind::Double);
    let data = (x / t).sin().to_kind(ctx.kind);
    let input = data.narrow(0, 3, samples - 3).narrow(1, 0, length - 1);
    let target = data.narrow(0, 3, samples - 3).narrow(1, 1, length - 1);

    let mut vs = nn::VarStore::new(ctx.device);
    let root = vs.root();
    let lstm1 = Cell::new(&(&root / "lstm1"), 1, hidden);
    let lstm2 = Cell::new(&(&root / "lstm2"), hidden, hidden);
    let linear = nn::linear(&root / "linear", hidden, 1, Default::default());
    vs.set_kind(ctx.kind);
    let opt = Lbfgs::new(vs.trainable_variables(), lr);
    Ok(Box::new(ToyLstm {
        seq: Sequence {
            lstm1,
            lstm2,
            linear,
            input,
            target,
            hidden,
        },
        opt,
        _vs: vs,
    }))
}

impl Sequence {
    /// The sequence model's MSE on the whole batch (the suite's closure, less the
    /// zero_grad and backward that [`Lbfgs`] does).
    fn loss(&self) -> Tensor {
        let (n, steps) = (self.input.size()[0], self.input.size()[1]);
        let zeros = || Tensor::zeros([n, self.hidden], (self.input.kind(), self.input.device()));
        let (mut h1, mut c1, mut h2, mut c2) = (zeros(), zeros(), zeros(), zeros());
        let mut outputs = Vec::with_capacity(steps as usize);
        for i in 0..steps {
            let x = self.input.narrow(1, i, 1);
            (h1, c1) = self.lstm1.step(&x, &h1, &c1);
            (h2, c2) = self.lstm2.step(&h1, &h2, &c2);
            outputs.push(self.linear.forward(&h2));
        }
        Tensor::cat(&outputs, 1).mse_loss(&self.target, Reduction::Mean)
    }
}

impl Train for ToyLstm {
    fn train_step(&mut self) -> Tensor {
        let seq = &self.seq;
        self.opt.step(&mut || seq.loss())
    }
}
