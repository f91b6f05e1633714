//! toy_lstm (time_sequence_prediction/lstm train.py): two LSTMCells (1→51→51) and a
//! Linear(51→1) predicting the next value of N noisy-phase sine waves, full batch, MSE.
//! As the suite's script (train.py:85,91-103): `optim.SGD(lr=0.01)` stepped through a
//! closure, which SGD calls once: one full-batch forward and backward over the whole
//! sequence per step, its loss logged. (An earlier mlbench trained with L-BFGS, which the
//! suite never used.)
//! Data as the script's (train.py:71-75): the waves of
//! `$DATA_DIRECTORY/time_series_prediction` (`mlbench data prepare` writes them as
//! `traindata.npy`: the script's values, recomputed from its seed), rows 3… the training
//! set, each row's samples but the last the input and but the first the target. With
//! `--synthetic-data`, waves made on the device the script's way (`samples` × `length`).
//! Args: `samples` (100 waves, of which 97 train) and `length` (1000), for synthetic waves
//! only; `hidden` (51), `dtype` (float32; float64/bfloat16 on any device, float16 on
//! CUDA). The learning rate is the script's constant, not an argument.

use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError};
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Kind, Reduction, Tensor};

pub(super) const SOURCE: &str = include_str!("toy_lstm.rs");

/// The waves the script trains on: the data set's, or with `--synthetic-data` made as
/// generate_sine_wave.py makes them (`samples` × `length`), float64 on the device.
fn waves(ctx: &Ctx, args: &BenchArgs) -> Result<Tensor, BenchError> {
    let (rows, cols, data) = if ctx.synthetic {
        let samples = ctx.size(args, &["samples"], 100)?;
        let length = ctx.size(args, &["length"], 1000)?;
        // generate_sine_wave.py: x = arange(L) + randint(-4T, 4T, N); data = sin(x / T).
        let x = Tensor::arange(length, (Kind::Double, ctx.device)).unsqueeze(0)
            + Tensor::randint_low(-4 * 20, 4 * 20, [samples, 1], ctx.int_opts())
                .to_kind(Kind::Double);
        (samples, length, (x / mlbench_datasets::sine::T).sin())
    } else {
        let root = ctx.data_directory("the sine waves")?;
        let read = mlbench_datasets::sine::read(&root)
            .map_err(|e| ctx.arg_error(format!("{e}; {}", ctx.prepare_hint())))?;
        let data = Tensor::from_slice(&read.data)
            .view([read.rows as i64, read.cols as i64])
            .to_device(ctx.device);
        (read.rows as i64, read.cols as i64, data)
    };
    if rows < 4 || cols < 2 {
        let why = format!("{rows} waves of {cols} samples: toy_lstm needs 4 waves of 2 at least");
        return Err(ctx.arg_error(why));
    }
    Ok(data)
}

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

/// train.py:85: `optim.SGD(seq.parameters(), lr=0.01)`.
pub(super) const LR: f64 = 0.01;

struct ToyLstm {
    seq: Sequence,
    opt: nn::Optimizer,
    _vs: nn::VarStore,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    Ok(Box::new(new_model(ctx, args)?))
}

fn new_model(ctx: &Ctx, args: &BenchArgs) -> Result<ToyLstm, BenchError> {
    let hidden = ctx.size(args, &["hidden"], 51)?;
    let data = waves(ctx, args)?.to_kind(ctx.kind);
    let (samples, length) = (data.size()[0], data.size()[1]);
    let input = data.narrow(0, 3, samples - 3).narrow(1, 0, length - 1);
    let target = data.narrow(0, 3, samples - 3).narrow(1, 1, length - 1);

    let mut vs = nn::VarStore::new(ctx.device);
    let root = vs.root();
    let lstm1 = Cell::new(&(&root / "lstm1"), 1, hidden);
    let lstm2 = Cell::new(&(&root / "lstm2"), hidden, hidden);
    let linear = super::torch_linear(&root / "linear", hidden, 1, true);
    vs.set_kind(ctx.kind);
    let opt = nn::Sgd::default()
        .build(&vs, LR)
        .map_err(|e| ctx.failed(e.to_string()))?;
    Ok(ToyLstm {
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
    })
}

impl Sequence {
    /// The sequence model's MSE on the whole batch (the suite's closure's forward).
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
    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        // The closure: zero_grad, forward, loss, backward; then SGD's update.
        let loss = self.seq.loss();
        self.opt.backward_step(&loss);
        Ok(loss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::DeviceSpec;
    use mlbench_schema::value::Value;

    #[test]
    fn a_step_is_one_forward_backward_and_an_sgd_update_of_lr_0_01() {
        let args = BenchArgs {
            batch_size: 1,
            number: 1,
            repeat: 1,
            seed: 5,
            extra: [
                ("samples".to_owned(), Value::Int(6)),
                ("length".to_owned(), Value::Int(9)),
                ("hidden".to_owned(), Value::Int(4)),
                ("dtype".to_owned(), Value::from("float64")),
                ("synthetic_data".to_owned(), Value::Bool(true)),
            ]
            .into(),
        };
        let spec = DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        let ctx = Ctx::new("toy_lstm", &args, spec).unwrap();
        let mut m = new_model(&ctx, &args).unwrap();
        let params = m._vs.trainable_variables();
        let before: Vec<Tensor> = params.iter().map(|p| p.detach().copy()).collect();
        // The gradient at the starting point, by one backward of the model's loss.
        let loss0 = m.seq.loss();
        let grads = Tensor::run_backward(&[&loss0], &params, false, false);
        let loss = m.train_step().unwrap().double_value(&[]);
        // The loss of the step is the loss at the starting point: one evaluation, before
        // the update (L-BFGS would return it too, but move by other amounts).
        assert_eq!(loss, loss0.double_value(&[]));
        for ((p, b), g) in params.iter().zip(&before).zip(&grads) {
            let want = b - g * LR;
            let diff = (p - &want).abs().max().double_value(&[]);
            assert!(
                diff < 1e-12,
                "a parameter moved by other than −0.01·grad: {diff}"
            );
            assert!(g.abs().max().double_value(&[]) > 0.0);
        }
    }
}
