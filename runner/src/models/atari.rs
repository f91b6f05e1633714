//! atari (reinforcement/atari/pytorch main.py, `--algo ppo`, on ikostrikov's
//! pytorch-a2c-ppo-acktr as the suite installs it): PPO with the CNN policy (CNNBase: conv
//! 8×8/4 4→32, 4×4/2 32→64, 3×3/1 64→32, Linear 32·7·7→512, ReLUs; a critic Linear 512→1
//! and a categorical actor Linear 512→6; orthogonal weights with gains √2, 1 and 0.01, zero
//! biases) on `num_processes` environments of 84×84 grayscale frames stacked 4 (uint8,
//! divided by 255 in the forward pass).
//!
//! One step is one iteration of the script's `number` loop: `num_steps` rollout steps of all
//! environments (sample an action, step, store), the value of the last observation, the
//! returns (GAE when `--use-gae`), then `ppo_epoch` passes over the `num_steps·num_processes`
//! samples in `num_mini_batch` random mini-batches: clipped surrogate, clipped value loss,
//! entropy bonus, gradient norm clipped, Adam. The loss is the mean action (surrogate) loss
//! over those updates, what the script logs. main.py sets `batch_size = num_processes`: an
//! item is one environment's rollout-and-update per step (not a frame). The runner's
//! `train_item` counts the jobs file's `batch_size`, which the atari job does not pass, so
//! it counts 1 a step until the planner sets `batch_size` to `num_processes` for atari.
//!
//! The environment is not Pong: no emulator or ROM can ship, so `pong.rs` is a small
//! deterministic game drawn straight at 84×84 (see its doc), with Pong's six actions,
//! rewards ±1 per point and an episode to 21 points, wrapped as the script's wrappers do
//! (4 ticks per step with the last two frames max-pooled, 1–30 no-op ticks at reset, the
//! reward's sign, auto-reset, frame stack zeroed at an episode's end).
//!
//! Args (the script's defaults; fast.json in brackets): `algo` (a2c; only ppo is
//! implemented) [ppo], `num_processes` (16) [16], `num_steps` (5) [128], `ppo_epoch` (4),
//! `num_mini_batch` (32) [4], `clip_param` (0.2) [0.1], `value_loss_coef` (0.5) [0.5],
//! `entropy_coef` (0.01) [0.01], `lr` (7e-4), `eps` (1e-5, Adam's), `max_grad_norm` (0.5),
//! `gamma` (0.99), `use_gae` [set], `gae_lambda` (0.95), `use_linear_lr_decay` [set],
//! `num_env_steps` (10e6, for the decay's horizon). `env_name` is recorded, not used.

use super::pong::{FRAME, POINTS, STACK, VecGame};
use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Device, Kind, Tensor};

/// The agent's file and its game's.
pub(super) const SOURCE: &str = concat!(include_str!("atari.rs"), include_str!("pong.rs"));

/// Pong's action set: NOOP, FIRE, RIGHT (up), LEFT (down), RIGHTFIRE, LEFTFIRE.
const ACTIONS: i64 = 6;
/// CNNBase's hidden size.
const HIDDEN: i64 = 512;

pub(super) fn build(ctx: &Ctx, args: &BenchArgs) -> Result<Box<dyn Train>, BenchError> {
    // main.py's default is a2c; the jobs pass ppo, the only algorithm written here.
    let algo = ctx
        .string(args, &["algo"])?
        .unwrap_or_else(|| "a2c".to_owned());
    if algo != "ppo" {
        return Err(ctx.arg_error(format!(
            "--algo {algo}: only ppo is implemented (a2c and acktr are not)"
        )));
    }
    if ctx.flag(args, &["recurrent_policy"]) {
        return Err(ctx.arg_error("--recurrent-policy is not implemented (the jobs do not use it)"));
    }
    let num_processes = ctx.size(args, &["num_processes"], 16)?;
    let num_steps = ctx.size(args, &["num_steps"], 5)?;
    let ppo_epoch = ctx.size(args, &["ppo_epoch"], 4)?;
    let num_mini_batch = ctx.size(args, &["num_mini_batch"], 32)?;
    if num_processes * num_steps < num_mini_batch {
        // storage.py's feed_forward_generator asserts the same.
        return Err(ctx.arg_error(format!(
            "PPO needs num_processes·num_steps ({}) ≥ num_mini_batch ({num_mini_batch})",
            num_processes * num_steps
        )));
    }
    let lr = ctx.float(args, &["lr"], 7e-4)?;
    let eps = ctx.float(args, &["eps"], 1e-5)?;
    let num_env_steps = ctx.float(args, &["num_env_steps"], 10e6)? as i64;
    // main.py: `int(args.num_env_steps) // args.num_steps // args.num_processes`.
    let num_updates = num_env_steps / num_steps / num_processes;
    let decay = ctx.flag(args, &["use_linear_lr_decay"]);
    if decay && num_updates < 1 {
        return Err(
            ctx.arg_error("--use-linear-lr-decay needs num_env_steps ≥ num_steps·num_processes")
        );
    }
    let hyper = Hyper {
        clip: ctx.float(args, &["clip_param"], 0.2)?,
        ppo_epoch,
        num_mini_batch,
        value_loss_coef: ctx.float(args, &["value_loss_coef"], 0.5)?,
        entropy_coef: ctx.float(args, &["entropy_coef"], 0.01)?,
        max_grad_norm: ctx.float(args, &["max_grad_norm"], 0.5)?,
        gamma: ctx.float(args, &["gamma"], 0.99)?,
        gae_lambda: ctx.float(args, &["gae_lambda"], 0.95)?,
        use_gae: ctx.flag(args, &["use_gae"]),
    };

    let mut vs = nn::VarStore::new(ctx.device);
    let net = Policy::new(&vs.root());
    vs.set_kind(ctx.kind);
    let opt = nn::Adam {
        eps,
        ..Default::default()
    }
    .build(&vs, lr)
    .map_err(|e| ctx.failed(e.to_string()))?;

    // make_vec_envs seeds environment `rank` with `seed + rank`.
    let envs = VecGame::new(num_processes as usize, args.seed, POINTS);
    let (t, n) = (num_steps, num_processes);
    let f = FRAME as i64;
    let float = (Kind::Float, ctx.device);
    // RolloutStorage, on the device; the observations in the model's kind.
    let obs = Tensor::zeros([t + 1, n, STACK as i64, f, f], ctx.opts());
    obs.get(0).copy_(&envs.obs_tensor(ctx.device));
    Ok(Box::new(Ppo {
        net,
        opt,
        envs,
        hyper,
        obs,
        actions: Tensor::zeros([t, n, 1], ctx.int_opts()),
        action_log_probs: Tensor::zeros([t, n, 1], float),
        value_preds: Tensor::zeros([t + 1, n, 1], float),
        rewards: Tensor::zeros([t, n, 1], float),
        masks: Tensor::ones([t + 1, n, 1], float),
        lr,
        decay: decay.then_some(num_updates),
        number: args.number.max(1),
        steps: 0,
        device: ctx.device,
        _vs: vs,
    }))
}

/// PPO's hyper-parameters (algo/ppo.py and storage.py's compute_returns).
#[derive(Debug, Clone, Copy)]
struct Hyper {
    clip: f64,
    ppo_epoch: i64,
    num_mini_batch: i64,
    value_loss_coef: f64,
    entropy_coef: f64,
    max_grad_norm: f64,
    gamma: f64,
    gae_lambda: f64,
    use_gae: bool,
}

/// model.py's Policy over CNNBase, with the Categorical head of distributions.py.
struct Policy {
    trunk: nn::Sequential,
    critic: nn::Linear,
    actor: nn::Linear,
}

/// `init(m, nn.init.orthogonal_, constant 0, gain)`: tch's `Init::Orthogonal` returns the
/// flattened rows × cols matrix, so it is drawn 2-D here and copied in the weight's shape.
fn orthogonal(ws: &mut Tensor, gain: f64) {
    let size = ws.size();
    let cols: i64 = size[1..].iter().product();
    let q = nn::init(nn::Init::Orthogonal { gain }, &[size[0], cols], ws.device());
    tch::no_grad(|| ws.copy_(&q.view(size.as_slice())));
}

impl Policy {
    fn new(p: &nn::Path) -> Policy {
        // nn.init.calculate_gain('relu') for the trunk.
        let relu_gain = 2f64.sqrt();
        let conv = |name: &str, i, o, k, stride| {
            let cfg = nn::ConvConfig {
                stride,
                bs_init: nn::Init::Const(0.0),
                ..Default::default()
            };
            let mut c = nn::conv2d(p / name, i, o, k, cfg);
            orthogonal(&mut c.ws, relu_gain);
            c
        };
        let linear = |name: &str, i, o, gain| {
            let cfg = nn::LinearConfig {
                bs_init: Some(nn::Init::Const(0.0)),
                ..Default::default()
            };
            let mut l = nn::linear(p / name, i, o, cfg);
            orthogonal(&mut l.ws, gain);
            l
        };
        // 84 → 20 → 9 → 7.
        let trunk = nn::seq()
            .add(conv("conv1", STACK as i64, 32, 8, 4))
            .add_fn(|x| x.relu())
            .add(conv("conv2", 32, 64, 4, 2))
            .add_fn(|x| x.relu())
            .add(conv("conv3", 64, 32, 3, 1))
            .add_fn(|x| x.relu())
            .add_fn(|x| x.flatten(1, -1))
            .add(linear("fc", 32 * 7 * 7, HIDDEN, relu_gain))
            .add_fn(|x| x.relu());
        Policy {
            trunk,
            critic: linear("critic_linear", HIDDEN, 1, 1.0),
            actor: linear("dist_linear", HIDDEN, ACTIONS, 0.01),
        }
    }

    /// (value [B, 1], action log-probabilities [B, 6]), both float32 whatever the model's
    /// kind: the returns, ratios and losses are computed in float32 as the script's.
    fn forward(&self, obs: &Tensor) -> (Tensor, Tensor) {
        let x = self.trunk.forward(&(obs / 255.0));
        let value = self.critic.forward(&x).to_kind(Kind::Float);
        let log_probs = self
            .actor
            .forward(&x)
            .to_kind(Kind::Float)
            .log_softmax(-1, None);
        (value, log_probs)
    }
}

struct Ppo {
    net: Policy,
    opt: nn::Optimizer,
    envs: VecGame,
    hyper: Hyper,
    /// [T+1, N, 4, 84, 84] in the model's kind, values 0…255.
    obs: Tensor,
    /// [T, N, 1] int64.
    actions: Tensor,
    action_log_probs: Tensor,
    /// [T+1, N, 1]; the last row is the bootstrap value.
    value_preds: Tensor,
    rewards: Tensor,
    /// [T+1, N, 1]: 0 where the step before ended an episode.
    masks: Tensor,
    lr: f64,
    /// The decay's horizon (num_updates) under `--use-linear-lr-decay`.
    decay: Option<i64>,
    number: i64,
    /// Steps taken so far: the observation index is `steps / number`.
    steps: i64,
    device: Device,
    _vs: nn::VarStore,
}

impl Ppo {
    /// The script's `for step in range(args.num_steps)` loop.
    fn rollout(&mut self) {
        let num_steps = self.rewards.size()[0];
        for step in 0..num_steps {
            let (value, log_probs) = tch::no_grad(|| self.net.forward(&self.obs.get(step)));
            // Categorical(logits).sample(): multinomial over the softmax.
            let action = log_probs.exp().multinomial(1, true);
            let action_log_prob = log_probs.gather(1, &action, false);
            // VecPyTorch.step_async: the actions go to the host for the environments.
            let host = Vec::<i64>::try_from(action.reshape([-1])).expect("int64 actions");
            let (rewards, dones) = self.envs.step(&host);
            let masks: Vec<f32> = dones.iter().map(|&d| if d { 0.0 } else { 1.0 }).collect();
            let n = host.len() as i64;
            self.obs
                .get(step + 1)
                .copy_(&self.envs.obs_tensor(self.device));
            self.actions.get(step).copy_(&action);
            self.action_log_probs.get(step).copy_(&action_log_prob);
            self.value_preds.get(step).copy_(&value);
            self.rewards
                .get(step)
                .copy_(&Tensor::from_slice(&rewards).view([n, 1]));
            self.masks
                .get(step + 1)
                .copy_(&Tensor::from_slice(&masks).view([n, 1]));
        }
    }

    /// algo/ppo.py's `update`: returns the mean value loss and the mean action loss over
    /// its mini-batch updates.
    fn update(&mut self, returns: &Tensor) -> (Tensor, Tensor) {
        let h = self.hyper;
        let size = self.rewards.size();
        let batch = size[0] * size[1];
        let mini = batch / h.num_mini_batch;
        let t = size[0];
        let value_preds = self.value_preds.narrow(0, 0, t).reshape([batch, 1]);
        let advantages = returns.reshape([batch, 1]) - &value_preds;
        let advantages = (&advantages - advantages.mean(None)) / (advantages.std(true) + 1e-5);
        let obs_shape: Vec<i64> = [batch]
            .into_iter()
            .chain(self.obs.size()[2..].iter().copied())
            .collect();
        let obs = self.obs.narrow(0, 0, t).reshape(obs_shape.as_slice());
        let actions = self.actions.reshape([batch, 1]);
        let old_log_probs = self.action_log_probs.reshape([batch, 1]);
        let returns = returns.reshape([batch, 1]);
        let mut action_loss_sum = Tensor::zeros([], (Kind::Float, self.device));
        let mut value_loss_sum = Tensor::zeros([], (Kind::Float, self.device));
        for _ in 0..h.ppo_epoch {
            // SubsetRandomSampler + BatchSampler(drop_last): a fresh permutation, cut in
            // num_mini_batch mini-batches of batch // num_mini_batch.
            let perm = Tensor::randperm(batch, (Kind::Int64, Device::Cpu)).to_device(self.device);
            for k in 0..h.num_mini_batch {
                let idx = perm.narrow(0, k * mini, mini);
                let (values, log_probs) = self.net.forward(&obs.index_select(0, &idx));
                let action_log_probs = log_probs.gather(1, &actions.index_select(0, &idx), false);
                let entropy = -(log_probs.exp() * &log_probs)
                    .sum_dim_intlist(-1, false, None)
                    .mean(None);
                let action_loss = ppo_action_loss(
                    &action_log_probs,
                    &old_log_probs.index_select(0, &idx),
                    &advantages.index_select(0, &idx),
                    h.clip,
                );
                let value_loss = clipped_value_loss(
                    &values,
                    &value_preds.index_select(0, &idx),
                    &returns.index_select(0, &idx),
                    h.clip,
                );
                let loss =
                    &value_loss * h.value_loss_coef + &action_loss - entropy * h.entropy_coef;
                // zero_grad, backward, clip_grad_norm_(max_grad_norm), step.
                self.opt.backward_step_clip_norm(&loss, h.max_grad_norm);
                action_loss_sum += action_loss.detach();
                value_loss_sum += value_loss.detach();
            }
        }
        // The script averages `.item()`s; summing on the device reads back once, at the end.
        let updates = (h.ppo_epoch * h.num_mini_batch) as f64;
        (value_loss_sum / updates, action_loss_sum / updates)
    }
}

impl Train for Ppo {
    fn train_step(&mut self) -> Result<Tensor, BenchError> {
        Ok(self.ppo_step().1)
    }

    fn step(&mut self) -> Result<Logs, BenchError> {
        // main.py:257-258: `log_batch_loss(action_loss)`, `log_metric('value_loss', …)`.
        let (value_loss, action_loss) = self.ppo_step();
        let read = |t: Tensor| t.to_kind(Kind::Double).double_value(&[]);
        Ok(Logs::loss(read(action_loss)).metric("value_loss", read(value_loss)))
    }
}

impl Ppo {
    /// One of main.py's updates: the rollout, the returns, PPO's update; (value loss,
    /// action loss).
    fn ppo_step(&mut self) -> (Tensor, Tensor) {
        if let Some(num_updates) = self.decay {
            // update_linear_schedule(optimizer, j, num_updates, args.lr), j being main.py's
            // observation index (its `repeat` loop), the same for the `number` steps in it.
            let j = self.steps / self.number;
            self.opt
                .set_lr(self.lr - self.lr * (j as f64 / num_updates as f64));
        }
        self.steps += 1;
        self.rollout();
        let t = self.rewards.size()[0];
        let (next_value, _) = tch::no_grad(|| self.net.forward(&self.obs.get(t)));
        self.value_preds.get(t).copy_(&next_value);
        let h = self.hyper;
        let returns = compute_returns(
            &self.rewards,
            &self.value_preds,
            &self.masks,
            h.use_gae,
            h.gamma,
            h.gae_lambda,
        );
        let losses = self.update(&returns);
        // RolloutStorage.after_update: the last observation starts the next rollout.
        self.obs.get(0).copy_(&self.obs.get(t));
        self.masks.get(0).copy_(&self.masks.get(t));
        losses
    }
}

/// storage.py's compute_returns without proper time limits (the script's default; the
/// synthetic game has no time limit anyway). `rewards` [T, N, 1], `values` [T+1, N, 1] whose
/// last row is the bootstrap value, `masks` [T+1, N, 1] (`masks[t+1]` = 0 when step t ended
/// an episode). Returns [T, N, 1]; the advantages are `returns − values[..T]`.
fn compute_returns(
    rewards: &Tensor,
    values: &Tensor,
    masks: &Tensor,
    use_gae: bool,
    gamma: f64,
    gae_lambda: f64,
) -> Tensor {
    let t = rewards.size()[0];
    let mut out = Vec::with_capacity(t as usize);
    if use_gae {
        // δ_t = r_t + γ·V_{t+1}·m_{t+1} − V_t; A_t = δ_t + γλ·m_{t+1}·A_{t+1}; R_t = A_t + V_t.
        let mut gae = values.get(0).zeros_like();
        for step in (0..t).rev() {
            let next = masks.get(step + 1);
            let delta = rewards.get(step) + values.get(step + 1) * &next * gamma - values.get(step);
            gae = delta + next * &gae * (gamma * gae_lambda);
            out.push(&gae + values.get(step));
        }
    } else {
        // R_t = r_t + γ·m_{t+1}·R_{t+1}, from R_T = V_T.
        let mut ret = values.get(t);
        for step in (0..t).rev() {
            ret = ret * masks.get(step + 1) * gamma + rewards.get(step);
            out.push(ret.shallow_clone());
        }
    }
    out.reverse();
    Tensor::stack(&out, 0)
}

/// PPO's clipped surrogate: `−mean(min(ρ·A, clamp(ρ, 1−ε, 1+ε)·A))`, ρ = exp(log π − log π_old).
fn ppo_action_loss(
    log_probs: &Tensor,
    old_log_probs: &Tensor,
    advantages: &Tensor,
    clip: f64,
) -> Tensor {
    let ratio = (log_probs - old_log_probs).exp();
    let surr1 = &ratio * advantages;
    let surr2 = ratio.clamp(1.0 - clip, 1.0 + clip) * advantages;
    -surr1.minimum(&surr2).mean(None)
}

/// ppo.py's clipped value loss (`use_clipped_value_loss`, its default): the value may move
/// at most ε from the rollout's prediction, and the worse of the two squared errors counts.
fn clipped_value_loss(values: &Tensor, old_values: &Tensor, returns: &Tensor, clip: f64) -> Tensor {
    let clipped = old_values + (values - old_values).clamp(-clip, clip);
    let unclipped_loss = (values - returns).square();
    let clipped_loss = (clipped - returns).square();
    unclipped_loss.maximum(&clipped_loss).mean(None) * 0.5
}

// ---------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    fn t(values: &[f32], shape: &[i64]) -> Tensor {
        Tensor::from_slice(values).view(shape)
    }

    fn close(a: &Tensor, expected: &[f32]) {
        let got = Vec::<f32>::try_from(a.reshape([-1])).unwrap();
        assert_eq!(got.len(), expected.len(), "{got:?} vs {expected:?}");
        for (g, e) in got.iter().zip(expected) {
            assert!((g - e).abs() < 1e-5, "{got:?} vs {expected:?}");
        }
    }

    /// γ = λ = 0.5 (γλ = 0.25), one environment, 4 steps, rewards [1, 0, 2, 1], values
    /// [0.5, 1, 0, 2] and bootstrap V₄ = 4; step 1 ends an episode, so masks[2] = 0.
    fn example() -> (Tensor, Tensor, Tensor) {
        let rewards = t(&[1.0, 0.0, 2.0, 1.0], &[4, 1, 1]);
        let values = t(&[0.5, 1.0, 0.0, 2.0, 4.0], &[5, 1, 1]);
        let masks = t(&[1.0, 1.0, 0.0, 1.0, 1.0], &[5, 1, 1]);
        (rewards, values, masks)
    }

    #[test]
    fn gae_on_a_hand_worked_rollout_with_an_episode_end() {
        let (rewards, values, masks) = example();
        let returns = compute_returns(&rewards, &values, &masks, true, 0.5, 0.5);
        assert_eq!(returns.size(), [4, 1, 1]);
        // t=3: δ = 1 + 0.5·4·1 − 2 = 1;        A₃ = 1;                    R₃ = 1 + 2 = 3
        // t=2: δ = 2 + 0.5·2·1 − 0 = 3;        A₂ = 3 + 0.25·1·1 = 3.25;  R₂ = 3.25 + 0 = 3.25
        // t=1: δ = 0 + 0.5·0·0 − 1 = −1;       A₁ = −1 + 0.25·0·3.25 = −1; R₁ = −1 + 1 = 0
        // t=0: δ = 1 + 0.5·1·1 − 0.5 = 1;      A₀ = 1 + 0.25·1·(−1) = 0.75; R₀ = 0.75 + 0.5 = 1.25
        close(&returns, &[1.25, 0.0, 3.25, 3.0]);
        let advantages = &returns - values.narrow(0, 0, 4);
        close(&advantages, &[0.75, -1.0, 3.25, 1.0]);
    }

    #[test]
    fn discounted_returns_without_gae_stop_at_the_episode_end() {
        let (rewards, values, masks) = example();
        let returns = compute_returns(&rewards, &values, &masks, false, 0.5, 0.5);
        // R₄ = V₄ = 4; R₃ = 1 + 0.5·1·4 = 3; R₂ = 2 + 0.5·1·3 = 3.5; R₁ = 0 + 0.5·0·3.5 = 0;
        // R₀ = 1 + 0.5·1·0 = 1.
        close(&returns, &[1.0, 0.0, 3.5, 3.0]);
    }

    #[test]
    fn gae_keeps_environments_apart() {
        // Two environments, one step: column 1 ended its episode (mask 0), column 0 not.
        let rewards = t(&[1.0, 1.0], &[1, 2, 1]);
        let values = t(&[0.0, 0.0, 2.0, 2.0], &[2, 2, 1]);
        let masks = t(&[1.0, 1.0, 1.0, 0.0], &[2, 2, 1]);
        let returns = compute_returns(&rewards, &values, &masks, true, 0.5, 0.9);
        // Column 0: 1 + 0.5·2 = 2; column 1: 1 (no bootstrap past the end).
        close(&returns, &[2.0, 1.0]);
    }

    #[test]
    fn clipped_surrogate_on_hand_worked_ratios() {
        // ε = 0.2; old log-probs 0, so ρ = exp(new).
        //   ρ 1.1 (inside),  A +2: min(2.2, 2.2)   =  2.2
        //   ρ 1.5 (above),   A +1: min(1.5, 1.2)   =  1.2   clipped
        //   ρ 1.5 (above),   A −1: min(−1.5, −1.2) = −1.5   not clipped (pessimistic)
        //   ρ 0.5 (below),   A +1: min(0.5, 0.8)   =  0.5   not clipped
        //   ρ 0.5 (below),   A −2: min(−1.0, −1.6) = −1.6   clipped
        // loss = −(2.2 + 1.2 − 1.5 + 0.5 − 1.6)/5 = −0.16
        let ratios = [1.1f32, 1.5, 1.5, 0.5, 0.5];
        let logs: Vec<f32> = ratios.iter().map(|r| r.ln()).collect();
        let new = t(&logs, &[5, 1]).set_requires_grad(true);
        let old = Tensor::zeros([5, 1], (Kind::Float, Device::Cpu));
        let adv = t(&[2.0, 1.0, -1.0, 1.0, -2.0], &[5, 1]);
        let loss = ppo_action_loss(&new, &old, &adv, 0.2);
        close(&loss, &[-0.16]);
        // ∂loss/∂log π = −ρ·A/5 where the unclipped term is the min, 0 where clipped.
        loss.backward();
        close(&new.grad(), &[-0.44, 0.0, 0.3, -0.1, 0.0]);
    }

    #[test]
    fn clipped_value_loss_on_hand_worked_values() {
        // ε = 0.2, old values 1.0.
        //   V 1.5 → clipped 1.2, R 2:   max(0.5², 0.8²) = 0.64
        //   V 0.9 (inside),      R 0:   max(0.9², 0.9²) = 0.81
        //   V 0.5 → clipped 0.8, R 0.7: max(0.2², 0.1²) = 0.04
        // 0.5 · mean = 0.5 · 1.49 / 3
        let values = t(&[1.5, 0.9, 0.5], &[3, 1]);
        let old = t(&[1.0, 1.0, 1.0], &[3, 1]);
        let returns = t(&[2.0, 0.0, 0.7], &[3, 1]);
        close(
            &clipped_value_loss(&values, &old, &returns, 0.2),
            &[0.5 * 1.49 / 3.0],
        );
    }
}
