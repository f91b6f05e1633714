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
//! The environment is not Pong: no emulator or ROM can ship, so [`Pong`] is a small
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

use super::{Ctx, Train};
use crate::bench::{BenchArgs, BenchError, Logs};
use mlbench_schema::rng::SplitMix64;
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Device, Kind, Tensor};

pub(super) const SOURCE: &str = include_str!("atari.rs");

/// WarpFrame's 84×84 grayscale; the conv trunk's `32·7·7` depends on it.
const FRAME: usize = 84;
const FRAME_LEN: usize = FRAME * FRAME;
/// VecPyTorchFrameStack's 4 frames.
const STACK: usize = 4;
const STACK_LEN: usize = STACK * FRAME_LEN;
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
// The synthetic game.

/// Points that end an episode, as Pong's 21.
const POINTS: u32 = 21;
/// Emulator ticks per agent step (MaxAndSkipEnv's skip 4); the last two are max-pooled.
const SKIP: usize = 4;
/// NoopResetEnv's noop_max: 1…30 no-op ticks after a reset.
const NOOP_MAX: u64 = 30;
/// The playfield's rows: walls above TOP and from BOTTOM on.
const TOP: f32 = 4.0;
const BOTTOM: f32 = 80.0;
const PADDLE_H: f32 = 8.0;
const PADDLE_W: f32 = 2.0;
const BALL: f32 = 2.0;
/// Columns of the paddles' left edges: the agent on the right, as in Pong.
const AGENT_X: f32 = 74.0;
const OPPONENT_X: f32 = 8.0;
/// Pixels per tick. The opponent is slower than the steepest ball, so it can miss; the
/// agent can reach any ball.
const AGENT_SPEED: f32 = 2.0;
const OPPONENT_SPEED: f32 = 1.0;
const BALL_VX: f32 = 1.0;
const MAX_VY: f32 = 1.5;
/// Gray levels (roughly Pong's after the grayscale conversion).
const BACKGROUND: u8 = 87;
const WALL: u8 = 236;
const AGENT: u8 = 147;
const OPPONENT: u8 = 123;
const BALL_GRAY: u8 = 236;

/// The game's generator (serves, no-ops): SplitMix64.
type Rng = SplitMix64;

/// Where things are, for drawing.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Snapshot {
    ball: (f32, f32),
    agent_y: f32,
    opponent_y: f32,
}

/// A Pong-like game drawn directly at 84×84 in gray: walls above and below, the agent's
/// paddle on the right (up with actions 2 and 4, down with 3 and 5; 0 and 1 do nothing),
/// an opponent paddle on the left that follows the ball when it comes its way, a 2×2 ball
/// bouncing off walls and paddles (its vertical speed set by where it hits a paddle). A ball
/// past the agent is −1, past the opponent +1; the episode ends when a side has `points`.
#[derive(Debug, Clone, PartialEq)]
struct Pong {
    ball: (f32, f32),
    velocity: (f32, f32),
    agent_y: f32,
    opponent_y: f32,
    /// (agent, opponent).
    score: (u32, u32),
    points: u32,
    rng: Rng,
    /// The last observation (84×84).
    frame: Vec<u8>,
}

impl Pong {
    fn new(seed: u64, points: u32) -> Pong {
        let mut game = Pong {
            ball: (0.0, 0.0),
            velocity: (0.0, 0.0),
            agent_y: 0.0,
            opponent_y: 0.0,
            score: (0, 0),
            points,
            rng: Rng::new(seed),
            frame: vec![0; FRAME_LEN],
        };
        game.reset();
        game
    }

    fn reset(&mut self) {
        let middle = (TOP + BOTTOM - PADDLE_H) / 2.0;
        self.agent_y = middle;
        self.opponent_y = middle;
        self.score = (0, 0);
        self.serve();
        // NoopResetEnv: 1…30 no-op ticks. From the centre at 1 px/tick the ball cannot
        // reach a paddle in 30 ticks, so no point is scored here.
        let noops = 1 + self.rng.next_u64() % NOOP_MAX;
        for _ in 0..noops {
            self.tick(0);
        }
        let snapshot = self.snapshot();
        self.draw(&[snapshot]);
    }

    /// The ball from the centre, towards a random side, at a random height and slope.
    fn serve(&mut self) {
        let y = TOP + 16.0 + self.rng.unit_f32() * (BOTTOM - TOP - 32.0 - BALL);
        self.ball = ((FRAME as f32 - BALL) / 2.0, y.floor());
        let vx = if self.rng.next_u64() & 1 == 0 {
            BALL_VX
        } else {
            -BALL_VX
        };
        self.velocity = (vx, (self.rng.unit_f32() * 2.0 - 1.0) * MAX_VY * 0.5);
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            ball: self.ball,
            agent_y: self.agent_y,
            opponent_y: self.opponent_y,
        }
    }

    fn done(&self) -> bool {
        self.score.0 >= self.points || self.score.1 >= self.points
    }

    /// One emulator tick; returns the point scored (+1, −1 or 0).
    fn tick(&mut self, action: i64) -> i32 {
        let dy = match action {
            2 | 4 => -AGENT_SPEED,
            3 | 5 => AGENT_SPEED,
            _ => 0.0,
        };
        self.agent_y = (self.agent_y + dy).clamp(TOP, BOTTOM - PADDLE_H);
        let (vx, _) = self.velocity;
        if vx < 0.0 {
            let target = self.ball.1 + BALL / 2.0 - PADDLE_H / 2.0;
            let step = (target - self.opponent_y).clamp(-OPPONENT_SPEED, OPPONENT_SPEED);
            self.opponent_y = (self.opponent_y + step).clamp(TOP, BOTTOM - PADDLE_H);
        }
        let (mut x, mut y) = (self.ball.0 + self.velocity.0, self.ball.1 + self.velocity.1);
        if y < TOP {
            y = 2.0 * TOP - y;
            self.velocity.1 = -self.velocity.1;
        } else if y + BALL > BOTTOM {
            y = 2.0 * (BOTTOM - BALL) - y;
            self.velocity.1 = -self.velocity.1;
        }
        let overlaps = |paddle_y: f32| y + BALL > paddle_y && y < paddle_y + PADDLE_H;
        // The slope depends on where the ball meets the paddle, as in Pong.
        let slope = |paddle_y: f32| {
            let offset = (y + BALL / 2.0) - (paddle_y + PADDLE_H / 2.0);
            (MAX_VY * offset / (PADDLE_H / 2.0 + BALL / 2.0)).clamp(-MAX_VY, MAX_VY)
        };
        if self.velocity.0 > 0.0
            && x + BALL >= AGENT_X
            && x < AGENT_X + PADDLE_W
            && overlaps(self.agent_y)
        {
            x = AGENT_X - BALL;
            self.velocity = (-self.velocity.0, slope(self.agent_y));
        } else if self.velocity.0 < 0.0
            && x <= OPPONENT_X + PADDLE_W
            && x + BALL > OPPONENT_X
            && overlaps(self.opponent_y)
        {
            x = OPPONENT_X + PADDLE_W;
            self.velocity = (-self.velocity.0, slope(self.opponent_y));
        }
        self.ball = (x, y);
        let point = if x >= FRAME as f32 {
            self.score.1 += 1;
            -1
        } else if x + BALL <= 0.0 {
            self.score.0 += 1;
            1
        } else {
            0
        };
        if point != 0 && !self.done() {
            self.serve();
        }
        point
    }

    /// One agent step (MaxAndSkipEnv + ClipRewardEnv): `SKIP` ticks with the same action,
    /// stopping at the episode's end; the frame is the max of the last two ticks' pictures;
    /// the reward is the sign of the ticks' sum. Returns (reward, done).
    fn step(&mut self, action: i64) -> (f32, bool) {
        let mut total = 0;
        let mut last = [self.snapshot(); 2];
        for _ in 0..SKIP {
            total += self.tick(action);
            last = [last[1], self.snapshot()];
            if self.done() {
                break;
            }
        }
        self.draw(&last);
        (total.signum() as f32, self.done())
    }

    /// Draws the snapshots over one background, the brighter pixel winning: the max of
    /// their pictures, since every object is brighter than the background.
    fn draw(&mut self, snapshots: &[Snapshot]) {
        let frame = &mut self.frame;
        frame.fill(BACKGROUND);
        let mut rect = |x: f32, y: f32, w: f32, h: f32, gray: u8| {
            let clip = |v: f32| (v.floor().max(0.0) as usize).min(FRAME);
            for row in clip(y)..clip(y + h) {
                for px in &mut frame[row * FRAME + clip(x)..row * FRAME + clip(x + w)] {
                    *px = (*px).max(gray);
                }
            }
        };
        rect(0.0, 0.0, FRAME as f32, TOP, WALL);
        rect(0.0, BOTTOM, FRAME as f32, FRAME as f32 - BOTTOM, WALL);
        for s in snapshots {
            rect(AGENT_X, s.agent_y, PADDLE_W, PADDLE_H, AGENT);
            rect(OPPONENT_X, s.opponent_y, PADDLE_W, PADDLE_H, OPPONENT);
            rect(s.ball.0, s.ball.1, BALL, BALL, BALL_GRAY);
        }
    }
}

/// `num_processes` games as make_vec_envs gives them: game `rank` seeded with
/// `seed + rank`, reset when its episode ends, and VecPyTorchFrameStack's stack of 4 frames
/// (shifted one frame per step; an environment's stack zeroed when its episode ended,
/// before the new episode's first frame goes in last).
struct VecGame {
    games: Vec<Pong>,
    /// [N, 4, 84, 84] uint8.
    stack: Vec<u8>,
}

impl VecGame {
    fn new(n: usize, seed: i64, points: u32) -> VecGame {
        let games: Vec<Pong> = (0..n)
            .map(|rank| Pong::new((seed as u64).wrapping_add(rank as u64), points))
            .collect();
        let mut stack = vec![0; n * STACK_LEN];
        for (slot, game) in stack.chunks_exact_mut(STACK_LEN).zip(&games) {
            slot[(STACK - 1) * FRAME_LEN..].copy_from_slice(&game.frame);
        }
        VecGame { games, stack }
    }

    /// Steps every game with its action; returns the rewards and the episode ends.
    fn step(&mut self, actions: &[i64]) -> (Vec<f32>, Vec<bool>) {
        assert_eq!(
            actions.len(),
            self.games.len(),
            "one action per environment"
        );
        let mut rewards = Vec::with_capacity(actions.len());
        let mut dones = Vec::with_capacity(actions.len());
        for ((game, slot), &action) in self
            .games
            .iter_mut()
            .zip(self.stack.chunks_exact_mut(STACK_LEN))
            .zip(actions)
        {
            let (reward, done) = game.step(action);
            if done {
                // The vectorised env resets at once and returns the new episode's frame.
                game.reset();
            }
            slot.copy_within(FRAME_LEN.., 0);
            if done {
                slot.fill(0);
            }
            slot[(STACK - 1) * FRAME_LEN..].copy_from_slice(&game.frame);
            rewards.push(reward);
            dones.push(done);
        }
        (rewards, dones)
    }

    #[cfg(test)]
    fn obs(&self) -> &[u8] {
        &self.stack
    }

    /// The stack as [N, 4, 84, 84] float32 on `device` (VecPyTorch's `.float().to(device)`).
    fn obs_tensor(&self, device: Device) -> Tensor {
        let f = FRAME as i64;
        Tensor::from_slice(&self.stack)
            .view([self.games.len() as i64, STACK as i64, f, f])
            .to_device(device)
            .to_kind(Kind::Float)
    }
}

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

    fn channel(obs: &[u8], env: usize, c: usize) -> &[u8] {
        let start = env * STACK_LEN + c * FRAME_LEN;
        &obs[start..start + FRAME_LEN]
    }

    #[test]
    fn frames_are_84_by_84_stacked_4_and_drawn() {
        let envs = VecGame::new(3, 7, POINTS);
        assert_eq!(envs.obs().len(), 3 * 4 * 84 * 84);
        assert_eq!(envs.obs_tensor(Device::Cpu).size(), [3, 4, 84, 84]);
        for env in 0..3 {
            // After a reset only the newest frame is there.
            for c in 0..3 {
                assert!(channel(envs.obs(), env, c).iter().all(|&p| p == 0));
            }
            let frame = channel(envs.obs(), env, 3);
            assert_eq!(frame[0], WALL, "top wall");
            assert_eq!(frame[83 * 84 + 40], WALL, "bottom wall");
            let count = |gray| frame.iter().filter(|&&p| p == gray).count();
            assert_eq!(count(AGENT), 16, "a 2×8 paddle");
            assert_eq!(count(OPPONENT), 16, "a 2×8 paddle");
            // Walls (84·4 each) plus a whole 2×2 ball inside the field.
            assert_eq!(count(WALL), 2 * 84 * 4 + 4);
        }
    }

    #[test]
    fn each_step_shifts_the_stack_by_one_frame() {
        let mut envs = VecGame::new(2, 11, POINTS);
        for i in 0..6 {
            let before = envs.obs().to_vec();
            let (_, dones) = envs.step(&[2, (i % 6) as i64]);
            assert_eq!(dones, [false, false]);
            for env in 0..2 {
                for c in 0..3 {
                    assert_eq!(channel(envs.obs(), env, c), channel(&before, env, c + 1));
                }
                assert_eq!(
                    channel(envs.obs(), env, 3),
                    envs.games[env].frame.as_slice()
                );
            }
            assert_ne!(
                channel(envs.obs(), 0, 3),
                channel(&before, 0, 3),
                "the ball moves"
            );
        }
        let tensor = Vec::<f32>::try_from(envs.obs_tensor(Device::Cpu).reshape([-1])).unwrap();
        assert!(
            tensor
                .iter()
                .zip(envs.obs())
                .all(|(&f, &b)| f == f32::from(b))
        );
    }

    /// Random actions from a fixed stream for `steps` steps: every observation, reward
    /// and episode end.
    fn play(seed: i64, steps: usize) -> (Vec<u8>, Vec<f32>, Vec<bool>) {
        let mut envs = VecGame::new(4, seed, 3);
        let mut actions = Rng::new(99);
        let (mut frames, mut rewards, mut dones) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..steps {
            let a: Vec<i64> = (0..4).map(|_| (actions.next_u64() % 6) as i64).collect();
            let (r, d) = envs.step(&a);
            frames.extend_from_slice(envs.obs());
            rewards.extend(r);
            dones.extend(d);
        }
        (frames, rewards, dones)
    }

    #[test]
    fn the_game_is_deterministic_for_a_seed_and_scores_both_ways() {
        let a = play(5, 600);
        assert!(a == play(5, 600), "same seed, same actions: same game");
        assert!(a.0 != play(6, 600).0, "another seed serves differently");
        // Random play to 3 points: both sides score and episodes end.
        assert!(
            a.1.contains(&1.0) && a.1.contains(&-1.0),
            "rewards {:?}",
            a.1
        );
        assert!(a.2.contains(&true));
        assert!(a.1.iter().all(|r| [-1.0, 0.0, 1.0].contains(r)));
    }

    #[test]
    fn a_scripted_miss_loses_a_point_and_ends_a_one_point_episode() {
        let mut envs = VecGame::new(1, 3, 1);
        let game = &mut envs.games[0];
        // Ball at x 70, rows 10–11, moving right; the paddle far below (rows 60–67).
        game.ball = (70.0, 10.0);
        game.velocity = (1.0, 0.0);
        game.agent_y = 60.0;
        let before = envs.obs().to_vec();
        // It passes the paddle's face (x 74) at tick 4 and leaves the frame (x ≥ 84) at
        // tick 14, in the 4th step of 4 ticks.
        for _ in 0..3 {
            assert_eq!(envs.step(&[0]), (vec![0.0], vec![false]));
        }
        assert_eq!(envs.step(&[0]), (vec![-1.0], vec![true]));
        // Reset: a fresh score and a stack holding only the new episode's first frame.
        assert_eq!(envs.games[0].score, (0, 0));
        for c in 0..3 {
            assert!(channel(envs.obs(), 0, c).iter().all(|&p| p == 0));
        }
        assert_ne!(channel(envs.obs(), 0, 3), channel(&before, 0, 3));
    }

    #[test]
    fn a_scripted_return_and_an_opponent_miss() {
        let mut game = Pong::new(3, POINTS);
        // The paddle covers the ball's rows: it comes back, sloped by the hit's offset
        // (ball centre 11, paddle centre 10: 1.5·1/5 = 0.3).
        game.ball = (70.0, 10.0);
        game.velocity = (1.0, 0.0);
        game.agent_y = 6.0;
        assert_eq!(game.step(0), (0.0, false));
        assert_eq!(game.velocity.0, -1.0);
        assert!((game.velocity.1 - 0.3).abs() < 1e-6, "{:?}", game.velocity);
        // A ball low on the left with the opponent high up: it cannot get there in time.
        game.ball = (12.0, 70.0);
        game.velocity = (-1.0, 0.0);
        game.opponent_y = 10.0;
        game.score = (0, 0);
        let rewards: Vec<f32> = (0..4).map(|_| game.step(1).0).collect();
        assert_eq!(rewards, [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(game.score, (1, 0));
        assert!(!game.done());
    }

    #[test]
    fn actions_move_the_agent_paddle_within_the_walls() {
        let mut game = Pong::new(1, POINTS);
        let start = game.agent_y;
        game.step(2);
        assert_eq!(game.agent_y, start - 8.0, "up 2 px per tick, 4 ticks");
        game.step(5);
        assert_eq!(game.agent_y, start);
        for _ in 0..20 {
            game.step(3);
        }
        assert_eq!(game.agent_y, BOTTOM - PADDLE_H);
    }
}
