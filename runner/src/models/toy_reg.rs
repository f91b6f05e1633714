//! toy_reg (regression/polynome main.py): Linear(4→1) fitting a random degree-4 polynomial
//! on fresh synthetic batches of the features x, x², x³, x⁴ (x ~ N(0, 1)); smooth-L1 loss,
//! plain SGD with the script's hard-coded lr 0.01 (`param.data.add_(-0.01 * grad)`,
//! main.py:78-79). As the script (main.py:35-40,60-63): each step's batch is drawn and its
//! features and target computed on the CPU, then copied to the device.
//! Args: `batch_size` (fast.json: 256). The target polynomial is drawn from the copy's seed
//! (the script draws it at import, before seeding: not reproducible, its bug).

use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError};
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Device, Reduction, Tensor};

pub(super) const SOURCE: &str = include_str!("toy_reg.rs");

const POLY_DEGREE: i64 = 4;

/// main.py:79: `param.data.add_(-0.01 * param.grad.data)`.
pub(super) const LR: f64 = 0.01;

struct ToyReg {
    fc: nn::Linear,
    opt: nn::Optimizer,
    /// On the CPU, as the script's `W_target` and `b_target`.
    w_target: Tensor,
    b_target: Tensor,
    batch_size: i64,
    kind: tch::Kind,
    device: Device,
    _vs: nn::VarStore,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    Ok(Box::new(new_model(ctx, args)?))
}

fn new_model(ctx: &Ctx, args: &BenchArgs) -> Result<ToyReg, BenchError> {
    let batch_size = ctx.size(args, &["batch_size"], args.batch_size.max(1))?;
    let cpu = (ctx.kind, Device::Cpu);
    let w_target = Tensor::randn([POLY_DEGREE, 1], cpu) * 5.0;
    let b_target = Tensor::randn([1], cpu) * 5.0;
    let mut vs = nn::VarStore::new(ctx.device);
    let fc = super::torch_linear(vs.root() / "fc", POLY_DEGREE, 1, true);
    vs.set_kind(ctx.kind);
    let opt = nn::Sgd::default()
        .build(&vs, LR)
        .map_err(|e| ctx.failed(e.to_string()))?;
    Ok(ToyReg {
        fc,
        opt,
        w_target,
        b_target,
        batch_size,
        kind: ctx.kind,
        device: ctx.device,
        _vs: vs,
    })
}

impl ToyReg {
    /// One update on a batch already on the device.
    fn step_on(&mut self, features: &Tensor, target: &Tensor) -> Tensor {
        let loss = self
            .fc
            .forward(features)
            .smooth_l1_loss(target, Reduction::Mean, 1.0);
        self.opt.backward_step(&loss);
        loss
    }
}

impl Train for ToyReg {
    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        // get_batch on the CPU: make_features ([x, x², x³, x⁴] per row) and f(x).
        let x = Tensor::randn([self.batch_size, 1], (self.kind, Device::Cpu));
        let features = Tensor::cat(
            &(1..=POLY_DEGREE)
                .map(|i| x.pow_tensor_scalar(i))
                .collect::<Vec<_>>(),
            1,
        );
        let target = features.matmul(&self.w_target) + &self.b_target;
        // `.to(device)` of both, each step.
        let features = features.to_device(self.device);
        let target = target.to_device(self.device);
        Ok(self.step_on(&features, &target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::DeviceSpec;

    fn model() -> ToyReg {
        let args = BenchArgs {
            batch_size: 2,
            number: 1,
            repeat: 1,
            seed: 1,
            extra: Default::default(),
        };
        let spec = DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        let ctx = Ctx::new("toy_reg", &args, spec).unwrap();
        let mut model = new_model(&ctx, &args).unwrap();
        tch::no_grad(|| {
            let _ = model.fc.ws.zero_();
            let _ = model.fc.bs.as_mut().unwrap().zero_();
        });
        model
    }

    fn values(t: &Tensor) -> Vec<f64> {
        Vec::<f64>::try_from(t.to_kind(tch::Kind::Double).reshape([-1])).unwrap()
    }

    #[test]
    fn one_sgd_step_of_lr_0_01_on_the_smooth_l1_loss_by_hand() {
        let mut m = model();
        // Zero weights predict 0. Rows x = (1, 2, 0, −1) and (0, 0, 0, 0), targets 3 and
        // −0.5: residuals −3 (|d| > 1: slope −1) and 0.5 (slope 0.5), mean over 2 rows:
        // ∂/∂pred = (−0.5, 0.25); ∂W = −0.5·(1, 2, 0, −1) + 0.25·0 = (−0.5, −1, 0, 0.5),
        // ∂b = −0.25. Loss: (3 − 0.5 + 0.5·0.25) / 2 = 1.3125.
        let features =
            Tensor::from_slice(&[1.0f32, 2.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0]).view([2, 4]);
        let target = Tensor::from_slice(&[3.0f32, -0.5]).view([2, 1]);
        let loss = m.step_on(&features, &target).double_value(&[]);
        assert!((loss - 1.3125).abs() < 1e-7, "{loss}");
        let want_w = [0.005, 0.01, 0.0, -0.005];
        for (got, want) in values(&m.fc.ws).iter().zip(want_w) {
            assert!((got - want).abs() < 1e-9, "{got} vs {want}");
        }
        let b = values(m.fc.bs.as_ref().unwrap())[0];
        assert!((b - 0.0025).abs() < 1e-9, "{b}");
    }
}
