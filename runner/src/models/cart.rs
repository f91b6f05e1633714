//! cart (reinforcement/cart_pole reinforce.py): REINFORCE on CartPole-v0. The policy is
//! Linear 4→128, ReLU, Linear 128→2, softmax; an action is sampled from it at every
//! environment step; after the observation's `number` steps the discounted returns of all
//! those steps are normalised ((R − mean) ÷ (sd + ε), ε the float32 epsilon) and
//! `Σ −log π(a) · R` is minimised by one Adam step (lr 0.01), inside the timer
//! (`finish_episode()`, reinforce.py:110).
//! Args: `gamma` (fast.json: 0.99), `number` (500 steps per update), `batch_size` (not
//! passed: 1, so an item is one environment step, as the suite counted them).
//!
//! As the script: the policy is on the CPU whatever the copy's device (it is never moved,
//! reinforce.py:47; the job passes `--no-cuda`, so the entry records `cuda: false` and no
//! `gpu`, and nothing waits for a GPU); the environment is reset at the start of every
//! observation (reinforce.py:94) and whenever an episode ends in the middle of the `number`
//! steps, and the returns run over all of them regardless of those ends (the script's "we
//! actually do not care about solving the thing"); the per-step "loss" the suite logs
//! (`log_batch_loss(reward)`) is the reward, 1.0. CartPole-v0 is gym's, written here: Euler
//! steps of 0.02 s, force ±10 N, the episode over past 12° or 2.4 m or after 200 steps, the
//! start state uniform in ±0.05 (from the copy's seed, not gym's seeding).

use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use mlbench_schema::rng::{GAMMA, SplitMix64};
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Kind, Tensor};

pub(super) const SOURCE: &str = include_str!("cart.rs");

const GRAVITY: f64 = 9.8;
const MASS_CART: f64 = 1.0;
const MASS_POLE: f64 = 0.1;
const TOTAL_MASS: f64 = MASS_CART + MASS_POLE;
/// Half the pole's length, as gym names it.
const LENGTH: f64 = 0.5;
const POLE_MASS_LENGTH: f64 = MASS_POLE * LENGTH;
const FORCE: f64 = 10.0;
const TAU: f64 = 0.02;
const THETA_LIMIT: f64 = 12.0 * 2.0 * std::f64::consts::PI / 360.0;
const X_LIMIT: f64 = 2.4;
/// CartPole-v0's TimeLimit.
const MAX_STEPS: u32 = 200;

/// CartPole-v0: (x, ẋ, θ, θ̇).
#[derive(Debug, Clone, PartialEq)]
struct CartPole {
    state: [f64; 4],
    steps: u32,
    rng: SplitMix64,
}

impl CartPole {
    fn new(seed: u64) -> CartPole {
        let mut env = CartPole {
            state: [0.0; 4],
            steps: 0,
            rng: SplitMix64::new(seed ^ GAMMA),
        };
        env.reset();
        env
    }

    /// Uniform in [0, 1).
    fn uniform(&mut self) -> f64 {
        self.rng.unit_f64()
    }

    fn reset(&mut self) {
        for i in 0..4 {
            self.state[i] = self.uniform() * 0.1 - 0.05;
        }
        self.steps = 0;
    }

    /// One step pushing right (`action` 1) or left (0): the reward (1) and whether the
    /// episode is over.
    fn step(&mut self, action: i64) -> (f64, bool) {
        let [x, x_dot, theta, theta_dot] = self.state;
        let force = if action == 1 { FORCE } else { -FORCE };
        let (sin, cos) = theta.sin_cos();
        let temp = (force + POLE_MASS_LENGTH * theta_dot * theta_dot * sin) / TOTAL_MASS;
        let theta_acc = (GRAVITY * sin - cos * temp)
            / (LENGTH * (4.0 / 3.0 - MASS_POLE * cos * cos / TOTAL_MASS));
        let x_acc = temp - POLE_MASS_LENGTH * theta_acc * cos / TOTAL_MASS;
        self.state = [
            x + TAU * x_dot,
            x_dot + TAU * x_acc,
            theta + TAU * theta_dot,
            theta_dot + TAU * theta_acc,
        ];
        self.steps += 1;
        let [x, _, theta, _] = self.state;
        let done = x.abs() > X_LIMIT || theta.abs() > THETA_LIMIT || self.steps >= MAX_STEPS;
        (1.0, done)
    }
}

/// The discounted returns of `rewards` (one sequence), normalised by their mean and
/// sample sd (torch's `std`, n − 1) plus float32's epsilon.
fn normalized_returns(rewards: &[f64], gamma: f64) -> Vec<f64> {
    let mut returns = vec![0.0; rewards.len()];
    let mut r = 0.0;
    for (i, reward) in rewards.iter().enumerate().rev() {
        r = reward + gamma * r;
        returns[i] = r;
    }
    let n = returns.len() as f64;
    let mean = returns.iter().sum::<f64>() / n;
    let var = returns.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    let sd = if var.is_finite() { var.sqrt() } else { 0.0 };
    let eps = f64::from(f32::EPSILON);
    returns.iter().map(|v| (v - mean) / (sd + eps)).collect()
}

struct Reinforce {
    env: CartPole,
    policy: nn::Sequential,
    opt: nn::Optimizer,
    gamma: f64,
    log_probs: Vec<Tensor>,
    rewards: Vec<f64>,
    _vs: nn::VarStore,
}

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    Ok(Box::new(new_model(ctx, args)?))
}

fn new_model(ctx: &Ctx, args: &BenchArgs) -> Result<Reinforce, BenchError> {
    let gamma = ctx.float(args, &["gamma"], 0.99)?;
    if !(0.0..=1.0).contains(&gamma) {
        return Err(ctx.arg_error(format!("--gamma {gamma}: a discount in [0, 1]")));
    }
    let number = usize::try_from(args.number.max(1)).unwrap_or(1);
    // reinforce.py:47: `policy = Policy()`, never moved to the device.
    let vs = nn::VarStore::new(tch::Device::Cpu);
    let root = vs.root();
    let policy = nn::seq()
        .add(super::torch_linear(&root / "affine1", 4, 128, true))
        .add_fn(|x| x.relu())
        .add(super::torch_linear(&root / "affine2", 128, 2, true));
    let opt = nn::Adam::default()
        .build(&vs, 1e-2)
        .map_err(|e| ctx.failed(e.to_string()))?;
    Ok(Reinforce {
        env: CartPole::new(args.seed as u64),
        policy,
        opt,
        gamma,
        log_probs: Vec::with_capacity(number),
        rewards: Vec::with_capacity(number),
        _vs: vs,
    })
}

impl Reinforce {
    /// The update of `finish_episode` over the steps gathered.
    fn finish(&mut self) {
        if self.rewards.is_empty() {
            return;
        }
        let returns = normalized_returns(&self.rewards, self.gamma);
        let returns = Tensor::from_slice(&returns).to_kind(Kind::Float);
        let log_probs = Tensor::stack(&self.log_probs, 0);
        let loss = (-log_probs * returns).sum(Kind::Float);
        self.opt.backward_step(&loss);
        self.log_probs.clear();
        self.rewards.clear();
    }
}

impl Train for Reinforce {
    fn begin_observation(&mut self, _observation: u64) {
        // `state, ep_reward = env.reset(), 0`.
        self.env.reset();
    }

    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        let state: Vec<f32> = self.env.state.iter().map(|v| *v as f32).collect();
        let x = Tensor::from_slice(&state).view([1, 4]);
        let probs = self.policy.forward(&x).softmax(-1, Kind::Float);
        let action = probs.multinomial(1, true).int64_value(&[0, 0]);
        self.log_probs.push(probs.get(0).get(action).log());
        let (reward, done) = self.env.step(action);
        self.rewards.push(reward);
        if done {
            self.env.reset();
        }
        Ok(Tensor::from(reward))
    }

    fn end_observation(&mut self, _observation: u64) -> Logs {
        self.finish();
        Logs::none()
    }

    fn syncs_device(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn one_push_right_from_rest_by_hand() {
        // From rest, force +10: temp = 10 / 1.1 = 9.0909…; θ̈ = −temp ÷ (0.5·(4/3 −
        // 0.1/1.1)) = −9.0909 ÷ 0.621212 = −14.634146; ẍ = temp − 0.05·θ̈ / 1.1 = 9.756098.
        let mut env = CartPole::new(0);
        env.state = [0.0; 4];
        let (reward, done) = env.step(1);
        assert_eq!((reward, done), (1.0, false));
        let temp = 10.0 / 1.1;
        let theta_acc = -temp / (0.5 * (4.0 / 3.0 - 0.1 / 1.1));
        let x_acc = temp - 0.05 * theta_acc / 1.1;
        assert!(close(theta_acc, -14.634_146_341_463_415));
        assert!(close(x_acc, 9.756_097_560_975_61));
        // Euler: positions move with the old velocities (0), velocities with the accelerations.
        assert_eq!(env.state[0], 0.0);
        assert!(close(env.state[1], 0.02 * x_acc));
        assert_eq!(env.state[2], 0.0);
        assert!(close(env.state[3], 0.02 * theta_acc));
        // The second step moves x and θ by 0.02 × the velocities of the first.
        env.step(0);
        assert!(close(env.state[0], 0.02 * 0.02 * x_acc));
        assert!(close(env.state[2], 0.02 * 0.02 * theta_acc));
    }

    #[test]
    fn episodes_end_past_the_limits_or_after_200_steps() {
        let mut env = CartPole::new(1);
        env.state = [0.0, 0.0, 0.21, 0.0];
        assert!(env.step(1).1, "0.21 rad is past 12° (0.2094 rad)");
        env.state = [0.0, 0.0, 0.2, 0.0];
        env.steps = 0;
        assert!(!env.step(1).1, "0.2 rad is within 12°");
        env.state = [2.39, 1.0, 0.0, 0.0];
        assert!(env.step(1).1, "x passes 2.4 m");
        env.reset();
        assert!(env.state.iter().all(|v| v.abs() <= 0.05));
        env.steps = MAX_STEPS - 1;
        env.state = [0.0; 4];
        assert!(env.step(1).1, "the 200th step ends it");
    }

    #[test]
    fn the_start_state_follows_the_seed() {
        assert_eq!(CartPole::new(7), CartPole::new(7));
        assert_ne!(CartPole::new(7).state, CartPole::new(8).state);
    }

    #[test]
    fn returns_discounted_and_normalised_by_hand() {
        // γ = 0.5 over [1, 1, 1]: returns 1.75, 1.5, 1; mean 1.416667; sample sd
        // √((0.333333² + 0.083333² + 0.416667²) / 2) = 0.381881.
        let got = normalized_returns(&[1.0, 1.0, 1.0], 0.5);
        let sd = ((1.0f64 / 9.0 + 1.0 / 144.0 + 25.0 / 144.0) / 2.0).sqrt();
        let eps = f64::from(f32::EPSILON);
        let want = [1.75, 1.5, 1.0].map(|r| (r - 4.25 / 3.0) / (sd + eps));
        for (g, w) in got.iter().zip(want) {
            assert!(close(*g, w), "{got:?}");
        }
        // The same numbers written out: 0.872871, 0.218218, −1.091089.
        assert!((want[0] - 0.872_871_3).abs() < 1e-6, "{}", want[0]);
        assert!((want[2] + 1.091_089_1).abs() < 1e-6, "{}", want[2]);
    }

    #[test]
    fn the_policy_changes_once_per_observation() {
        let args = BenchArgs {
            batch_size: 1,
            number: 4,
            repeat: 1,
            seed: 3,
            extra: Default::default(),
        };
        let spec = crate::bench::DeviceSpec::Cpu {
            index: 0,
            threads: 1,
        };
        let ctx = Ctx::new("cart", &args, spec).unwrap();
        let mut model = new_model(&ctx, &args).unwrap();
        let weights = |m: &Reinforce| -> Vec<f64> {
            m._vs
                .trainable_variables()
                .iter()
                .map(|t| t.abs().sum(Kind::Double).double_value(&[]))
                .collect()
        };
        let before = weights(&model);
        // The observation starts from a fresh environment; its steps gather (reward 1
        // each, the suite's logged "loss"); its end takes the Adam step.
        model.env.state = [1.0; 4];
        model.env.steps = 7;
        model.begin_observation(0);
        assert!(model.env.state.iter().all(|v| v.abs() <= 0.05) && model.env.steps == 0);
        for _ in 0..4 {
            assert_eq!(model.train_step().unwrap().double_value(&[]), 1.0);
        }
        assert_eq!(weights(&model), before);
        assert_eq!(model.rewards.len(), 4);
        assert_eq!(model.end_observation(0), Logs::none());
        assert!(model.rewards.is_empty() && model.log_probs.is_empty());
        assert_ne!(weights(&model), before);
        // On a GPU copy too, the policy is the CPU's and the timer waits for no device.
        assert_eq!(model._vs.device(), tch::Device::Cpu);
        assert!(!model.syncs_device());
    }
}
