//! The convnet scripts' `--half` (milabench.perf.fp16utils, through apex): the model made
//! half but for its BatchNorm layers (`network_to_half`), and the SGD wrapped by
//! `FP16_Optimizer(…, dynamic_loss_scale=True)`:
//!
//! - float32 master copies of the half parameters, which the SGD steps (the float32
//!   parameters, BatchNorm's, are stepped themselves);
//! - the loss (in float32) multiplied by the loss scale before its backward;
//! - before a step, the half gradients checked for inf and NaN: on overflow the step is
//!   skipped and the scale halved (never under 1); otherwise the gradients are unscaled
//!   into the masters', the SGD steps the masters and they are copied back into the model;
//! - after 1000 steps without overflow the scale doubles (apex's `DynamicLossScaler`:
//!   initial scale 2³², factor 2, window 1000).
//!
//! The first steps of a run overflow until the scale fits the gradients (about 17 at
//! ResNet's sizes): skipped, as in the suite, and counted in its time as there.

use tch::nn::{self, OptimizerConfig};
use tch::{Kind, Tensor};

/// apex's `DynamicLossScaler`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct LossScale {
    pub scale: f64,
    /// Steps taken (skipped ones included): `cur_iter`.
    iteration: u64,
    /// The step of the last overflow (`last_overflow_iter`), -1 before any.
    last_overflow: i64,
}

impl Default for LossScale {
    fn default() -> LossScale {
        LossScale {
            scale: 4_294_967_296.0,
            iteration: 0,
            last_overflow: -1,
        }
    }
}

impl LossScale {
    /// Steps without overflow before the scale doubles.
    const WINDOW: i64 = 1000;

    /// `update_scale(overflow)`.
    pub(super) fn update(&mut self, overflow: bool) {
        let iteration = self.iteration as i64;
        if overflow {
            self.scale = (self.scale / 2.0).max(1.0);
            self.last_overflow = iteration;
        } else if (iteration - self.last_overflow) % Self::WINDOW == 0 {
            self.scale *= 2.0;
        }
        self.iteration += 1;
    }
}

/// apex's `network_to_half` after `vs.set_kind(Half)`: the variables of the BatchNorm layers
/// (tch's ResNet: `bn*`, and `downsample.1`) back to float32.
pub(super) fn batch_norm_to_float(vs: &nn::VarStore) {
    tch::no_grad(|| {
        for (name, mut var) in vs.variables() {
            if is_batch_norm(&name) {
                var.set_data(&var.to_kind(Kind::Float));
            }
        }
    });
}

/// Whether `name` is a variable of a BatchNorm layer of tch's ResNet.
fn is_batch_norm(name: &str) -> bool {
    let mut parts = name.rsplit('.').skip(1);
    match (parts.next(), parts.next()) {
        (Some(layer), _) if layer.starts_with("bn") => true,
        (Some("1"), Some("downsample")) => true,
        _ => false,
    }
}

/// The scripts' `torch.optim.SGD(model.parameters(), lr)` (no momentum, no weight decay),
/// plain for float32 models and through FP16_Optimizer for half ones.
pub(super) enum Sgd {
    Plain(nn::Optimizer),
    Half(HalfSgd),
}

impl Sgd {
    /// For the model in `vs`: `Half` when its parameters are half.
    pub(super) fn new(vs: &nn::VarStore, lr: f64) -> Result<Sgd, tch::TchError> {
        let params = vs.trainable_variables();
        if params.iter().any(|p| p.kind() == Kind::Half) {
            Ok(Sgd::Half(HalfSgd::new(params, lr)))
        } else {
            Ok(Sgd::Plain(nn::Sgd::default().build(vs, lr)?))
        }
    }

    pub(super) fn zero_grad(&mut self) {
        match self {
            Sgd::Plain(opt) => opt.zero_grad(),
            Sgd::Half(opt) => opt.zero_grad(),
        }
    }

    /// The loss's backward (scaled when half).
    pub(super) fn backward(&self, loss: &Tensor) {
        match self {
            Sgd::Plain(_) => loss.backward(),
            Sgd::Half(opt) => opt.backward(loss),
        }
    }

    pub(super) fn step(&mut self) {
        match self {
            Sgd::Plain(opt) => opt.step(),
            Sgd::Half(opt) => {
                opt.step();
            }
        }
    }

    /// Zero, backward and step, as the scripts' loop.
    pub(super) fn backward_step(&mut self, loss: &Tensor) {
        self.zero_grad();
        self.backward(loss);
        self.step();
    }
}

/// Zeroes the gradients the parameters have (`optimizer.zero_grad()`).
fn zero_grads(params: &[Tensor]) {
    tch::no_grad(|| {
        for p in params {
            let mut g = p.grad();
            if g.defined() {
                let _ = g.zero_();
            }
        }
    });
}

/// SGD through FP16_Optimizer (see the module).
pub(super) struct HalfSgd {
    /// The model's trainable parameters.
    params: Vec<Tensor>,
    /// Float32 masters of the half parameters (`None`: a float32 parameter, its own).
    masters: Vec<Option<Tensor>>,
    lr: f64,
    pub(super) loss_scale: LossScale,
}

impl HalfSgd {
    pub(super) fn new(params: Vec<Tensor>, lr: f64) -> HalfSgd {
        let masters = tch::no_grad(|| {
            params
                .iter()
                .map(|p| (p.kind() != Kind::Float).then(|| p.detach().to_kind(Kind::Float)))
                .collect()
        });
        HalfSgd {
            params,
            masters,
            lr,
            loss_scale: LossScale::default(),
        }
    }

    pub(super) fn zero_grad(&self) {
        zero_grads(&self.params);
    }

    /// `loss.float() × scale`, backward.
    pub(super) fn backward(&self, loss: &Tensor) {
        (loss.to_kind(Kind::Float) * self.loss_scale.scale).backward();
    }

    /// Whether any gradient holds inf or NaN (one synchronisation: the gradients' sums in
    /// float32, which finite half values cannot overflow, summed).
    fn overflow(&self) -> bool {
        let sums: Vec<Tensor> = self
            .params
            .iter()
            .map(Tensor::grad)
            .filter(Tensor::defined)
            .map(|g| g.sum(Kind::Float))
            .collect();
        if sums.is_empty() {
            return false;
        }
        !Tensor::stack(&sums, 0)
            .sum(Kind::Float)
            .double_value(&[])
            .is_finite()
    }

    /// The step; `false` when it was skipped for an overflow.
    pub(super) fn step(&mut self) -> bool {
        let overflow = self.overflow();
        self.loss_scale_step(overflow)
    }

    fn loss_scale_step(&mut self, overflow: bool) -> bool {
        let unscale = 1.0 / self.loss_scale.scale;
        self.loss_scale.update(overflow);
        if overflow {
            return false;
        }
        tch::no_grad(|| {
            for (p, master) in self.params.iter().zip(&self.masters) {
                let g = p.grad();
                if !g.defined() {
                    continue;
                }
                let update = g.to_kind(Kind::Float) * (-self.lr * unscale);
                match master {
                    Some(m) => {
                        let _ = m.shallow_clone().g_add_(&update);
                        p.shallow_clone().copy_(m);
                    }
                    None => {
                        let _ = p.shallow_clone().g_add_(&update);
                    }
                }
            }
        });
        true
    }
}

/// main_fp16_optimizer.py's optimizer (wlmfp16): `FP16_Optimizer(SGD(lr),
/// static_loss_scale=128, dynamic_loss_scale=False)` over a model made wholly half before
/// the optimizer was built, so every parameter has a float32 master:
/// - `backward`: `(loss.float() × scale).backward()`;
/// - `step_clipped(max_norm)`: `update_master_grads` (each half gradient to float32, ÷ the
///   scale; a static scaler never reports an overflow, so nothing is skipped), then
///   `clip_master_grads(max_norm)` (`clip_grad_norm_` over the masters: × max_norm ÷
///   (norm + 1e-6) when that is under 1), the SGD step on the masters and their copy back
///   into the half parameters.
pub(super) struct StaticHalfSgd {
    params: Vec<Tensor>,
    masters: Vec<Tensor>,
    lr: f64,
    scale: f64,
}

impl StaticHalfSgd {
    pub(super) fn new(params: Vec<Tensor>, lr: f64, scale: f64) -> StaticHalfSgd {
        let masters = tch::no_grad(|| {
            params
                .iter()
                .map(|p| p.detach().to_kind(Kind::Float))
                .collect()
        });
        StaticHalfSgd {
            params,
            masters,
            lr,
            scale,
        }
    }

    pub(super) fn zero_grad(&self) {
        zero_grads(&self.params);
    }

    /// `optimizer.backward(loss)`: the loss in float32 × the scale, backward.
    pub(super) fn backward(&self, loss: &Tensor) {
        (loss.to_kind(Kind::Float) * self.scale).backward();
    }

    /// The master gradients, clipped to `max_norm`; the SGD step; the copy back. Returns
    /// the masters' gradient norm before clipping.
    pub(super) fn step_clipped(&mut self, max_norm: f64) -> f64 {
        tch::no_grad(|| {
            let grads: Vec<Option<Tensor>> = self
                .params
                .iter()
                .map(|p| {
                    let g = p.grad();
                    g.defined().then(|| g.to_kind(Kind::Float) / self.scale)
                })
                .collect();
            let norms: Vec<Tensor> = grads.iter().flatten().map(|g| g.norm()).collect();
            if norms.is_empty() {
                return 0.0;
            }
            let norm = Tensor::stack(&norms, 0).norm().double_value(&[]);
            let coef = max_norm / (norm + 1e-6);
            let factor = -self.lr * if coef < 1.0 { coef } else { 1.0 };
            for ((p, m), g) in self.params.iter().zip(&self.masters).zip(&grads) {
                if let Some(g) = g {
                    let _ = m.shallow_clone().g_add_(&(g * factor));
                    p.shallow_clone().copy_(m);
                }
            }
            norm
        })
    }

    /// The float32 master of parameter `i` (in the order of the parameters given).
    #[cfg(test)]
    pub(super) fn master(&self, i: usize) -> &Tensor {
        &self.masters[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Device;

    /// apex's rule by hand: halve on overflow (never under 1), double after every 1000
    /// steps since the last overflow (or since the start: step 0 counts as one).
    #[test]
    fn the_loss_scale_halves_on_overflow_and_doubles_after_1000_clean_steps() {
        let mut s = LossScale::default();
        // Step 0 without overflow: (0 − (−1)) % 1000 ≠ 0, kept.
        s.update(false);
        assert_eq!(s.scale, 2f64.powi(32));
        s.update(true);
        s.update(true);
        assert_eq!(s.scale, 2f64.powi(30));
        // The last overflow at step 2: steps 3..=1001 are clean, the scale doubles at step
        // 1002 (1002 − 2 = 1000).
        for _ in 3..1002 {
            s.update(false);
        }
        assert_eq!(s.scale, 2f64.powi(30));
        s.update(false);
        assert_eq!(s.scale, 2f64.powi(31));
        let mut low = LossScale {
            scale: 1.0,
            ..LossScale::default()
        };
        low.update(true);
        assert_eq!(low.scale, 1.0);
    }

    #[test]
    fn batch_norm_variables_are_told_apart_by_their_layer() {
        for name in [
            "bn1.weight",
            "layer1.0.bn2.running_var",
            "layer2.0.downsample.1.bias",
            "layer4.2.bn3.running_mean",
        ] {
            assert!(is_batch_norm(name), "{name}");
        }
        for name in [
            "conv1.weight",
            "fc.bias",
            "layer2.0.downsample.0.weight",
            "layer1.1.weight",
            "weight",
        ] {
            assert!(!is_batch_norm(name), "{name}");
        }
    }

    /// loss = Σ c·p over a half parameter p = [1, 2] and a float one q = [3] (c = 0.5, −1, 2):
    /// at the initial scale 2³² the half gradients (c × 2³²) overflow: the step is skipped
    /// and the scale halved. At scale 1024: gradients 512, −1024 (half, exact) and 2048;
    /// unscaled 0.5, −1, 2; lr 0.1: p = [0.95, 2.1] in the float32 masters, the model's
    /// half copy of them, q = 2.8.
    #[test]
    fn an_overflow_skips_the_step_and_a_clean_step_unscales_into_the_masters() {
        let p = Tensor::from_slice(&[1.0f32, 2.0])
            .to_kind(Kind::Half)
            .set_requires_grad(true);
        let q = Tensor::from_slice(&[3.0f32]).set_requires_grad(true);
        let c = Tensor::from_slice(&[0.5f32, -1.0]).to_kind(Kind::Half);
        let mut opt = HalfSgd::new(vec![p.shallow_clone(), q.shallow_clone()], 0.1);
        let loss = || (&p * &c).sum(Kind::Float) + (&q * 2.0).sum(Kind::Float);
        opt.zero_grad();
        opt.backward(&loss());
        assert!(!opt.step(), "2³² × 0.5 overflows a half");
        assert_eq!(opt.loss_scale.scale, 2f64.powi(31));
        let values = |t: &Tensor| Vec::<f32>::try_from(t.to_kind(Kind::Float)).unwrap();
        assert_eq!(values(&p), [1.0, 2.0]);
        assert_eq!(values(&q), [3.0]);

        opt.loss_scale.scale = 1024.0;
        opt.zero_grad();
        opt.backward(&loss());
        assert_eq!(values(&p.grad()), [512.0, -1024.0]);
        assert!(opt.step());
        let master = opt.masters[0].as_ref().unwrap();
        assert_eq!(master.kind(), Kind::Float);
        let want = [1.0f32 - 0.1 * 0.5, 2.0 + 0.1];
        let got = values(master);
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{got:?}");
        }
        assert_eq!(p.kind(), Kind::Half);
        assert_eq!(values(&p), values(&master.to_kind(Kind::Half)));
        assert!((values(&q)[0] - 2.8).abs() < 1e-6);
        assert_eq!(p.device(), Device::Cpu);
    }

    /// network_to_half on tch's ResNet-18: convolutions and the classifier half, every
    /// BatchNorm variable (weights, biases, running statistics, in blocks and in
    /// downsampling) float32, and the SGD for it the FP16_Optimizer one.
    #[test]
    fn network_to_half_keeps_the_batch_norm_layers_in_float32() {
        let mut vs = nn::VarStore::new(Device::Cpu);
        let _net = tch::vision::resnet::resnet18(&vs.root(), 10);
        vs.set_kind(Kind::Half);
        batch_norm_to_float(&vs);
        let vars = vs.variables();
        let kind = |name: &str| vars[name].kind();
        for name in [
            "bn1.weight",
            "bn1.running_mean",
            "layer1.0.bn2.running_var",
            "layer2.0.downsample.1.weight",
            "layer4.1.bn1.bias",
        ] {
            assert_eq!(kind(name), Kind::Float, "{name}");
        }
        for name in [
            "conv1.weight",
            "fc.weight",
            "fc.bias",
            "layer2.0.downsample.0.weight",
        ] {
            assert_eq!(kind(name), Kind::Half, "{name}");
        }
        let floats = vars.values().filter(|v| v.kind() == Kind::Float).count();
        // 20 BatchNorm layers (1 + 2 × 8 blocks + 3 downsamplings) × 4 variables.
        assert_eq!(floats, 80);
        assert!(matches!(Sgd::new(&vs, 0.1).unwrap(), Sgd::Half(_)));
    }

    #[test]
    fn the_static_fp16_optimizer_unscales_clips_and_steps_float32_masters() {
        // Two half parameters; loss = Σ p·c in float32, so ∂loss/∂p = c: (3, 4) and (0, 12)
        // have the norm 13. The backward scales by 128 (half gradients 384, 512, 0, 1536,
        // exact in float16); unscaled, clipped to 0.5: × 0.5 / (13 + 1e-6); lr 2.
        let p1 = Tensor::from_slice(&[1.0f32, 2.0])
            .to_kind(Kind::Half)
            .set_requires_grad(true);
        let p2 = Tensor::from_slice(&[0.5f32, -1.0])
            .to_kind(Kind::Half)
            .set_requires_grad(true);
        let mut opt = StaticHalfSgd::new(vec![p1.shallow_clone(), p2.shallow_clone()], 2.0, 128.0);
        let c1 = Tensor::from_slice(&[3.0f32, 4.0]);
        let c2 = Tensor::from_slice(&[0.0f32, 12.0]);
        let loss = (p1.to_kind(Kind::Float) * &c1).sum(Kind::Float)
            + (p2.to_kind(Kind::Float) * &c2).sum(Kind::Float);
        opt.zero_grad();
        opt.backward(&loss);
        assert_eq!(
            Vec::<f32>::try_from(p1.grad().to_kind(Kind::Float)).unwrap(),
            [384.0, 512.0]
        );
        let norm = opt.step_clipped(0.5);
        assert!((norm - 13.0).abs() < 1e-9, "{norm}");
        let step = 2.0 * 0.5 / (13.0 + 1e-6);
        let want1 = [1.0 - step * 3.0, 2.0 - step * 4.0];
        let want2 = [0.5, -1.0 - step * 12.0];
        let m1 = Vec::<f64>::try_from(opt.master(0).to_kind(Kind::Double)).unwrap();
        let m2 = Vec::<f64>::try_from(opt.master(1).to_kind(Kind::Double)).unwrap();
        for (got, want) in m1.iter().chain(&m2).zip(want1.iter().chain(&want2)) {
            assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        }
        // The half parameters are the masters rounded to float16.
        let half1 = Vec::<f32>::try_from(p1.to_kind(Kind::Float)).unwrap();
        let rounded =
            Vec::<f32>::try_from(opt.master(0).to_kind(Kind::Half).to_kind(Kind::Float)).unwrap();
        assert_eq!(half1, rounded);
        // Under the threshold nothing is clipped: norm 13 against 20.
        opt.zero_grad();
        let before = opt.master(0).copy();
        let loss = (p1.to_kind(Kind::Float) * &c1).sum(Kind::Float);
        opt.backward(&loss);
        opt.step_clipped(20.0);
        let moved = Vec::<f64>::try_from((opt.master(0) - &before).to_kind(Kind::Double)).unwrap();
        assert!(
            (moved[0] + 6.0).abs() < 1e-5 && (moved[1] + 8.0).abs() < 1e-5,
            "{moved:?}"
        );
    }
}
