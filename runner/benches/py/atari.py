"""atari (runner/src/models/atari.rs): PPO (ikostrikov's pytorch-a2c-ppo-acktr as the suite's
main.py runs it with `--algo ppo`) with CNNBase (conv 8x8/4 4->32, 4x4/2 32->64, 3x3/1
64->32, Linear 32*7*7->512; critic Linear 512->1, categorical Linear 512->6; orthogonal
init with gains sqrt(2), 1, 0.01, zero biases) on `num_processes` copies of atari.rs's
synthetic Pong-like game, 84x84 gray frames stacked 4.

One step() is one iteration of main.py's `number` loop: the linear lr decay, `num_steps`
rollout steps of all environments, the bootstrap value, GAE returns, then `ppo_epoch` passes
of `num_mini_batch` random mini-batches (clipped surrogate, clipped value loss x 0.5,
entropy bonus, clip_grad_norm_, Adam with eps); returns the mean action loss. An item is
one environment's rollout and update (main.py: `args.batch_size = args.num_processes`), as
the Rust harness counts it.

The game is atari.rs's, vectorised over the environments with numpy (float32 positions as
the Rust f32; splitmix64 per environment seeded `seed + rank`, so a seed gives the same
serves and no-ops as the tch side; 4 ticks a step with the last two pictures max-pooled,
1-30 no-op ticks at reset, the reward's sign, auto-reset), wrapped as make_vec_envs wraps it
(VecPyTorch's `from_numpy(obs).float()`, VecPyTorchFrameStack's float stack, zeroed for an
environment whose episode ended). Policy, RolloutStorage and PPO.update are written as in
a2c_ppo_acktr (model.py, distributions.py's FixedCategorical, storage.py's
feed_forward_generator with SubsetRandomSampler/BatchSampler, algo/ppo.py).

Deliberate differences from the tch model: ppo.py reads `value_loss`, `action_loss` and
`dist_entropy` back with `.item()` every mini-batch (kept here, as the script; tch sums the
action loss on the device and reads it once, which changes nothing on a CPU); the frame
stack is kept in float32 as VecPyTorchFrameStack keeps it (tch stacks uint8 on the host and
converts the stack each step); torch.distributions.Categorical is used as
distributions.py uses it (argument validation on, torch's default).
"""

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical
from torch.utils.data.sampler import BatchSampler, SubsetRandomSampler


def add_arguments(p):
    p.add_argument("--algo", default="a2c")
    p.add_argument("--env-name", default="PongNoFrameskip-v4")
    p.add_argument("--num-processes", type=int, default=16)
    p.add_argument("--num-steps", type=int, default=5)
    p.add_argument("--ppo-epoch", type=int, default=4)
    p.add_argument("--num-mini-batch", type=int, default=32)
    p.add_argument("--clip-param", type=float, default=0.2)
    p.add_argument("--value-loss-coef", type=float, default=0.5)
    p.add_argument("--entropy-coef", type=float, default=0.01)
    p.add_argument("--lr", type=float, default=7e-4)
    p.add_argument("--eps", type=float, default=1e-5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--use-gae", action="store_true", default=False)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--use-linear-lr-decay", action="store_true", default=False)
    p.add_argument("--num-env-steps", type=int, default=10e6)


def items(a):
    # main.py: `args.batch_size = args.num_processes`.
    return a.num_processes


# ---------------------------------------------------------------------------------------
# The synthetic game (atari.rs's Pong), vectorised over the environments.

FRAME = 84
STACK = 4
ACTIONS = 6
POINTS = 21
SKIP = 4
NOOP_MAX = 30
f32 = np.float32
TOP, BOTTOM = f32(4.0), f32(80.0)
PADDLE_H, PADDLE_W, BALL = f32(8.0), f32(2.0), f32(2.0)
AGENT_X, OPPONENT_X = f32(74.0), f32(8.0)
AGENT_SPEED, OPPONENT_SPEED = f32(2.0), f32(1.0)
BALL_VX, MAX_VY = f32(1.0), f32(1.5)
BACKGROUND, WALL, AGENT, OPPONENT, BALL_GRAY = 87, 236, 147, 123, 236

U64 = np.uint64
GOLDEN = U64(0x9E3779B97F4A7C15)
MIX1, MIX2 = U64(0xBF58476D1CE4E5B9), U64(0x94D049BB133111EB)


def splitmix64(state, mask):
    """Advances the generators selected by `mask`; returns their next outputs (garbage
    elsewhere)."""
    state += np.where(mask, GOLDEN, U64(0))
    z = state.copy()
    z = (z ^ (z >> U64(30))) * MIX1
    z = (z ^ (z >> U64(27))) * MIX2
    return z ^ (z >> U64(31))


def uniform(state, mask):
    """Uniform float32 in [0, 1): the top 24 bits."""
    return (splitmix64(state, mask) >> U64(40)).astype(f32) / f32(1 << 24)


class Pong:
    """`n` games (atari.rs's `Pong`), each with its own state in the arrays' row."""

    def __init__(self, seeds, points=POINTS):
        n = len(seeds)
        self.n = n
        self.points = points
        self.rng = np.array([s % (1 << 64) for s in seeds], dtype=np.uint64)
        self.ball_x = np.zeros(n, f32)
        self.ball_y = np.zeros(n, f32)
        self.vx = np.zeros(n, f32)
        self.vy = np.zeros(n, f32)
        self.agent_y = np.zeros(n, f32)
        self.opponent_y = np.zeros(n, f32)
        self.score = np.zeros((n, 2), np.int64)  # (agent, opponent)
        self.frames = np.zeros((n, FRAME, FRAME), np.uint8)
        self.rows = np.arange(FRAME)
        self.reset(np.ones(n, bool))

    def done(self):
        return (self.score >= self.points).any(axis=1)

    def reset(self, mask):
        middle = (TOP + BOTTOM - PADDLE_H) / f32(2.0)
        self.agent_y[mask] = middle
        self.opponent_y[mask] = middle
        self.score[mask] = 0
        self.serve(mask)
        # NoopResetEnv: 1..30 no-op ticks.
        noops = U64(1) + splitmix64(self.rng, mask) % U64(NOOP_MAX)
        noops = np.where(mask, noops, U64(0)).astype(np.int64)
        actions = np.zeros(self.n, np.int64)
        for i in range(int(noops.max(initial=0))):
            self.tick(actions, noops > i)
        self.draw(mask, [self.snapshot()])

    def serve(self, mask):
        y = TOP + f32(16.0) + uniform(self.rng, mask) * (BOTTOM - TOP - f32(32.0) - BALL)
        right = (splitmix64(self.rng, mask) & U64(1)) == U64(0)
        vy = (uniform(self.rng, mask) * f32(2.0) - f32(1.0)) * MAX_VY * f32(0.5)
        self.ball_x[mask] = (f32(FRAME) - BALL) / f32(2.0)
        self.ball_y[mask] = np.floor(y)[mask]
        self.vx[mask] = np.where(right, BALL_VX, -BALL_VX)[mask]
        self.vy[mask] = vy[mask]

    def snapshot(self):
        return (self.ball_x.copy(), self.ball_y.copy(), self.agent_y.copy(), self.opponent_y.copy())

    def tick(self, actions, active):
        """One emulator tick of the `active` games; returns the points scored (+1/-1/0)."""
        dy = np.where((actions == 2) | (actions == 4), -AGENT_SPEED,
                      np.where((actions == 3) | (actions == 5), AGENT_SPEED, f32(0.0)))
        agent_y = np.clip(self.agent_y + dy, TOP, BOTTOM - PADDLE_H)
        self.agent_y = np.where(active, agent_y, self.agent_y)
        chasing = active & (self.vx < 0)
        target = self.ball_y + BALL / f32(2.0) - PADDLE_H / f32(2.0)
        step = np.clip(target - self.opponent_y, -OPPONENT_SPEED, OPPONENT_SPEED)
        opponent_y = np.clip(self.opponent_y + step, TOP, BOTTOM - PADDLE_H)
        self.opponent_y = np.where(chasing, opponent_y, self.opponent_y)

        x = self.ball_x + self.vx
        y = self.ball_y + self.vy
        vy = self.vy
        above, below = y < TOP, y + BALL > BOTTOM
        y = np.where(above, f32(2.0) * TOP - y,
                     np.where(below, f32(2.0) * (BOTTOM - BALL) - y, y))
        vy = np.where(above | below, -vy, vy)

        def overlaps(paddle_y):
            return (y + BALL > paddle_y) & (y < paddle_y + PADDLE_H)

        def slope(paddle_y):
            offset = (y + BALL / f32(2.0)) - (paddle_y + PADDLE_H / f32(2.0))
            return np.clip(MAX_VY * offset / (PADDLE_H / f32(2.0) + BALL / f32(2.0)), -MAX_VY, MAX_VY)

        vx = self.vx
        hit_agent = (vx > 0) & (x + BALL >= AGENT_X) & (x < AGENT_X + PADDLE_W) & overlaps(self.agent_y)
        hit_opponent = ((vx < 0) & (x <= OPPONENT_X + PADDLE_W) & (x + BALL > OPPONENT_X)
                        & overlaps(self.opponent_y) & ~hit_agent)
        x = np.where(hit_agent, AGENT_X - BALL, np.where(hit_opponent, OPPONENT_X + PADDLE_W, x))
        vy = np.where(hit_agent, slope(self.agent_y), np.where(hit_opponent, slope(self.opponent_y), vy))
        vx = np.where(hit_agent | hit_opponent, -vx, vx)

        self.ball_x = np.where(active, x, self.ball_x)
        self.ball_y = np.where(active, y, self.ball_y)
        self.vx = np.where(active, vx, self.vx)
        self.vy = np.where(active, vy, self.vy)

        lost = active & (x >= f32(FRAME))
        won = active & ~lost & (x + BALL <= f32(0.0))
        self.score[:, 1] += lost
        self.score[:, 0] += won
        point = won.astype(np.int64) - lost.astype(np.int64)
        serve = (point != 0) & ~self.done()
        if serve.any():
            self.serve(serve)
        return point

    def step(self, actions):
        """One agent step of every game (MaxAndSkipEnv + ClipRewardEnv): up to 4 ticks with
        the same action, stopping at the episode's end; the frame is the max of the last two
        ticks' pictures. Returns (rewards float32, dones)."""
        actions = np.asarray(actions, np.int64)
        total = np.zeros(self.n, np.int64)
        active = np.ones(self.n, bool)
        last = [self.snapshot(), self.snapshot()]
        for _ in range(SKIP):
            total += self.tick(actions, active)
            now = self.snapshot()
            last = [
                tuple(np.where(active, b, a) for a, b in zip(last[0], last[1])),
                tuple(np.where(active, b, a) for a, b in zip(last[1], now)),
            ]
            active &= ~self.done()
            if not active.any():
                break
        self.draw(np.ones(self.n, bool), last)
        return np.sign(total).astype(f32), self.done()

    def draw(self, mask, snapshots):
        """Redraws the frames of the `mask` games: the snapshots over one background, the
        brighter pixel winning."""
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            return
        rows = self.rows

        def span(lo, hi):
            # Rust's clip: floor, at least 0, at most 84.
            lo = np.minimum(np.maximum(np.floor(lo), 0), FRAME)[:, None]
            hi = np.minimum(np.maximum(np.floor(hi), 0), FRAME)[:, None]
            return (rows >= lo) & (rows < hi)

        frame = np.full((idx.size, FRAME, FRAME), BACKGROUND, np.uint8)
        frame[:, : int(TOP)] = WALL
        frame[:, int(BOTTOM):] = WALL
        for ball_x, ball_y, agent_y, opponent_y in snapshots:
            ball_x, ball_y, agent_y, opponent_y = ball_x[idx], ball_y[idx], agent_y[idx], opponent_y[idx]
            for x, y, w, h, gray in (
                (np.full_like(agent_y, AGENT_X), agent_y, PADDLE_W, PADDLE_H, AGENT),
                (np.full_like(opponent_y, OPPONENT_X), opponent_y, PADDLE_W, PADDLE_H, OPPONENT),
                (ball_x, ball_y, BALL, BALL, BALL_GRAY),
            ):
                inside = span(y, y + h)[:, :, None] & span(x, x + w)[:, None, :]
                np.maximum(frame, np.where(inside, np.uint8(gray), np.uint8(0)), out=frame)
        self.frames[idx] = frame


class VecPong:
    """make_vec_envs over `n` games: game `rank` seeded `seed + rank`, reset when its episode
    ends (as the vectorised env's workers do), VecPyTorch's float tensors and
    VecPyTorchFrameStack's stack of 4 frames."""

    def __init__(self, n, seed, points=POINTS, device="cpu"):
        self.games = Pong([seed + rank for rank in range(n)], points)
        self.stacked_obs = torch.zeros(n, STACK, FRAME, FRAME, device=device)
        self.device = device

    def reset(self):
        self.stacked_obs.zero_()
        self.stacked_obs[:, -1:] = torch.from_numpy(self.games.frames).float().unsqueeze(1)
        return self.stacked_obs

    def step(self, actions):
        actions = actions.squeeze(1).cpu().numpy()
        reward, done = self.games.step(actions)
        if done.any():
            self.games.reset(done)
        obs = torch.from_numpy(self.games.frames).float().to(self.device).unsqueeze(1)
        reward = torch.from_numpy(reward).unsqueeze(dim=1).float()
        self.stacked_obs[:, :-1] = self.stacked_obs[:, 1:].clone()
        for i, new in enumerate(done):
            if new:
                self.stacked_obs[i] = 0
        self.stacked_obs[:, -1:] = obs
        return self.stacked_obs, reward, done


# ---------------------------------------------------------------------------------------
# a2c_ppo_acktr: model.py, distributions.py, storage.py, algo/ppo.py.


def init(module, weight_init, bias_init, gain=1):
    weight_init(module.weight.data, gain=gain)
    bias_init(module.bias.data)
    return module


class Flatten(nn.Module):
    def forward(self, x):
        return x.view(x.size(0), -1)


class FixedCategorical(Categorical):
    def sample(self):
        return super().sample().unsqueeze(-1)

    def log_probs(self, actions):
        return super().log_prob(actions.squeeze(-1)).view(actions.size(0), -1).sum(-1).unsqueeze(-1)


class CategoricalHead(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super().__init__()
        init_ = lambda m: init(m, nn.init.orthogonal_, lambda x: nn.init.constant_(x, 0), gain=0.01)
        self.linear = init_(nn.Linear(num_inputs, num_outputs))

    def forward(self, x):
        return FixedCategorical(logits=self.linear(x))


class CNNBase(nn.Module):
    def __init__(self, num_inputs, hidden_size=512):
        super().__init__()
        init_ = lambda m: init(m, nn.init.orthogonal_, lambda x: nn.init.constant_(x, 0),
                               nn.init.calculate_gain("relu"))
        self.main = nn.Sequential(
            init_(nn.Conv2d(num_inputs, 32, 8, stride=4)), nn.ReLU(),
            init_(nn.Conv2d(32, 64, 4, stride=2)), nn.ReLU(),
            init_(nn.Conv2d(64, 32, 3, stride=1)), nn.ReLU(), Flatten(),
            init_(nn.Linear(32 * 7 * 7, hidden_size)), nn.ReLU())
        init_ = lambda m: init(m, nn.init.orthogonal_, lambda x: nn.init.constant_(x, 0))
        self.critic_linear = init_(nn.Linear(hidden_size, 1))
        self.train()

    def forward(self, inputs):
        x = self.main(inputs / 255.0)
        return self.critic_linear(x), x


class Policy(nn.Module):
    def __init__(self, obs_shape, num_actions):
        super().__init__()
        self.base = CNNBase(obs_shape[0])
        self.dist = CategoricalHead(512, num_actions)

    def act(self, inputs):
        value, actor_features = self.base(inputs)
        dist = self.dist(actor_features)
        action = dist.sample()
        action_log_probs = dist.log_probs(action)
        return value, action, action_log_probs

    def get_value(self, inputs):
        value, _ = self.base(inputs)
        return value

    def evaluate_actions(self, inputs, action):
        value, actor_features = self.base(inputs)
        dist = self.dist(actor_features)
        action_log_probs = dist.log_probs(action)
        dist_entropy = dist.entropy().mean()
        return value, action_log_probs, dist_entropy


class RolloutStorage:
    def __init__(self, num_steps, num_processes, obs_shape):
        self.obs = torch.zeros(num_steps + 1, num_processes, *obs_shape)
        self.rewards = torch.zeros(num_steps, num_processes, 1)
        self.value_preds = torch.zeros(num_steps + 1, num_processes, 1)
        self.returns = torch.zeros(num_steps + 1, num_processes, 1)
        self.action_log_probs = torch.zeros(num_steps, num_processes, 1)
        self.actions = torch.zeros(num_steps, num_processes, 1).long()
        self.masks = torch.ones(num_steps + 1, num_processes, 1)
        self.num_steps = num_steps
        self.step = 0

    def insert(self, obs, actions, action_log_probs, value_preds, rewards, masks):
        self.obs[self.step + 1].copy_(obs)
        self.actions[self.step].copy_(actions)
        self.action_log_probs[self.step].copy_(action_log_probs)
        self.value_preds[self.step].copy_(value_preds)
        self.rewards[self.step].copy_(rewards)
        self.masks[self.step + 1].copy_(masks)
        self.step = (self.step + 1) % self.num_steps

    def after_update(self):
        self.obs[0].copy_(self.obs[-1])
        self.masks[0].copy_(self.masks[-1])

    def compute_returns(self, next_value, use_gae, gamma, gae_lambda):
        # use_proper_time_limits False (main.py's default).
        if use_gae:
            self.value_preds[-1] = next_value
            gae = 0
            for step in reversed(range(self.rewards.size(0))):
                delta = (self.rewards[step] + gamma * self.value_preds[step + 1] * self.masks[step + 1]
                         - self.value_preds[step])
                gae = delta + gamma * gae_lambda * self.masks[step + 1] * gae
                self.returns[step] = gae + self.value_preds[step]
        else:
            self.returns[-1] = next_value
            for step in reversed(range(self.rewards.size(0))):
                self.returns[step] = self.returns[step + 1] * gamma * self.masks[step + 1] + self.rewards[step]

    def feed_forward_generator(self, advantages, num_mini_batch):
        num_steps, num_processes = self.rewards.size()[0:2]
        batch_size = num_processes * num_steps
        mini_batch_size = batch_size // num_mini_batch
        sampler = BatchSampler(SubsetRandomSampler(range(batch_size)), mini_batch_size, drop_last=True)
        for indices in sampler:
            obs_batch = self.obs[:-1].view(-1, *self.obs.size()[2:])[indices]
            actions_batch = self.actions.view(-1, self.actions.size(-1))[indices]
            value_preds_batch = self.value_preds[:-1].view(-1, 1)[indices]
            return_batch = self.returns[:-1].view(-1, 1)[indices]
            old_action_log_probs_batch = self.action_log_probs.view(-1, 1)[indices]
            adv_targ = advantages.view(-1, 1)[indices]
            yield obs_batch, actions_batch, value_preds_batch, return_batch, old_action_log_probs_batch, adv_targ


class PPO:
    def __init__(self, actor_critic, clip_param, ppo_epoch, num_mini_batch, value_loss_coef,
                 entropy_coef, lr, eps, max_grad_norm):
        self.actor_critic = actor_critic
        self.clip_param = clip_param
        self.ppo_epoch = ppo_epoch
        self.num_mini_batch = num_mini_batch
        self.value_loss_coef = value_loss_coef
        self.entropy_coef = entropy_coef
        self.max_grad_norm = max_grad_norm
        self.optimizer = torch.optim.Adam(actor_critic.parameters(), lr=lr, eps=eps)

    def update(self, rollouts):
        advantages = rollouts.returns[:-1] - rollouts.value_preds[:-1]
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-5)
        value_loss_epoch = 0
        action_loss_epoch = 0
        dist_entropy_epoch = 0
        for _ in range(self.ppo_epoch):
            for sample in rollouts.feed_forward_generator(advantages, self.num_mini_batch):
                (obs_batch, actions_batch, value_preds_batch, return_batch,
                 old_action_log_probs_batch, adv_targ) = sample
                values, action_log_probs, dist_entropy = self.actor_critic.evaluate_actions(
                    obs_batch, actions_batch)
                ratio = torch.exp(action_log_probs - old_action_log_probs_batch)
                surr1 = ratio * adv_targ
                surr2 = torch.clamp(ratio, 1.0 - self.clip_param, 1.0 + self.clip_param) * adv_targ
                action_loss = -torch.min(surr1, surr2).mean()
                value_pred_clipped = value_preds_batch + (values - value_preds_batch).clamp(
                    -self.clip_param, self.clip_param)
                value_losses = (values - return_batch).pow(2)
                value_losses_clipped = (value_pred_clipped - return_batch).pow(2)
                value_loss = 0.5 * torch.max(value_losses, value_losses_clipped).mean()
                self.optimizer.zero_grad()
                (value_loss * self.value_loss_coef + action_loss - dist_entropy * self.entropy_coef).backward()
                nn.utils.clip_grad_norm_(self.actor_critic.parameters(), self.max_grad_norm)
                self.optimizer.step()
                value_loss_epoch += value_loss.item()
                action_loss_epoch += action_loss.item()
                dist_entropy_epoch += dist_entropy.item()
        num_updates = self.ppo_epoch * self.num_mini_batch
        return (value_loss_epoch / num_updates, action_loss_epoch / num_updates,
                dist_entropy_epoch / num_updates)


def update_linear_schedule(optimizer, epoch, total_num_epochs, initial_lr):
    lr = initial_lr - (initial_lr * (epoch / float(total_num_epochs)))
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr


class Atari:
    def __init__(self, a):
        if a.algo != "ppo":
            raise SystemExit(f"--algo {a.algo}: only ppo is implemented")
        if a.num_processes * a.num_steps < a.num_mini_batch:
            raise SystemExit("PPO needs num_processes*num_steps >= num_mini_batch")
        self.a = a
        self.num_updates = int(a.num_env_steps) // a.num_steps // a.num_processes
        self.number = max(a.number, 1)
        self.steps = 0
        self.envs = VecPong(a.num_processes, a.seed)
        obs_shape = (STACK, FRAME, FRAME)
        self.actor_critic = Policy(obs_shape, ACTIONS)
        self.agent = PPO(self.actor_critic, a.clip_param, a.ppo_epoch, a.num_mini_batch,
                         a.value_loss_coef, a.entropy_coef, lr=a.lr, eps=a.eps,
                         max_grad_norm=a.max_grad_norm)
        self.rollouts = RolloutStorage(a.num_steps, a.num_processes, obs_shape)
        self.rollouts.obs[0].copy_(self.envs.reset())

    def step(self):
        a, rollouts, actor_critic = self.a, self.rollouts, self.actor_critic
        if a.use_linear_lr_decay:
            # main.py passes j, its observation (`repeat`) index.
            update_linear_schedule(self.agent.optimizer, self.steps // self.number,
                                   self.num_updates, a.lr)
        self.steps += 1
        for step in range(a.num_steps):
            with torch.no_grad():
                value, action, action_log_prob = actor_critic.act(rollouts.obs[step])
            obs, reward, done = self.envs.step(action)
            masks = torch.FloatTensor([[0.0] if done_ else [1.0] for done_ in done])
            rollouts.insert(obs, action, action_log_prob, value, reward, masks)
        with torch.no_grad():
            next_value = actor_critic.get_value(rollouts.obs[-1]).detach()
        rollouts.compute_returns(next_value, a.use_gae, a.gamma, a.gae_lambda)
        value_loss, action_loss, dist_entropy = self.agent.update(rollouts)
        rollouts.after_update()
        return action_loss


def build(a):
    return Atari(a)
