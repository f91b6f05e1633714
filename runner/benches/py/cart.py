"""cart (runner/src/models/cart.rs): REINFORCE on CartPole-v0 as the suite's reinforce.py
(pytorch/examples' REINFORCE) runs it. Policy Linear(4->128), ReLU, Linear(128->2),
softmax; one action sampled (Categorical) per environment step; after `number` steps (one
observation) the discounted returns of all those steps are normalised ((R - mean) / (sd +
float32 eps)) and sum(-log pi(a) * R) takes one Adam step (lr 1e-2). The environment is reset
whenever an episode ends, mid-observation, and the returns run over all the steps
regardless ("we actually do not care about solving the thing").

One step() is one environment step (an item; the batch is 1, as the suite counted), and
returns the reward (1.0), what the script logs as its batch loss.

CartPole-v0 is gym's CartPoleEnv written out in plain Python floats as gym writes it
(Euler steps of 0.02 s, force +-10 N, the episode over past 12 degrees or 2.4 m, or after
200 steps: the TimeLimit wrapper), returning the state as a float32 numpy array.

Deliberate differences from the tch model: finish_episode() is reinforce.py's (returns
built in a Python list and normalised in float32 by torch, the loss as torch.cat of one
-log_prob * R per step, then .sum()), where cart.rs normalises in f64 and multiplies the
stacked log-probabilities once: the same loss; the start states come from gym's way of
drawing them (numpy's generator seeded with the seed, uniform in +-0.05), not cart.rs's
splitmix64, so the episodes differ but not the work. As cart.rs (and unlike the script,
which also resets at the start of each observation) the environment carries on across
observations.
"""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical


def add_arguments(p):
    p.add_argument("--gamma", type=float, default=0.99)


class CartPoleEnv:
    """gym's CartPoleEnv (classic_control/cartpole.py) under CartPole-v0's TimeLimit(200)."""

    def __init__(self, seed=None):
        self.gravity = 9.8
        self.masscart = 1.0
        self.masspole = 0.1
        self.total_mass = self.masspole + self.masscart
        self.length = 0.5  # actually half the pole's length
        self.polemass_length = self.masspole * self.length
        self.force_mag = 10.0
        self.tau = 0.02  # seconds between state updates
        self.theta_threshold_radians = 12 * 2 * math.pi / 360
        self.x_threshold = 2.4
        self._max_episode_steps = 200
        self._elapsed_steps = 0
        self.np_random = np.random.default_rng(seed)
        self.state = None

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        costheta = math.cos(theta)
        sintheta = math.sin(theta)
        temp = (force + self.polemass_length * theta_dot * theta_dot * sintheta) / self.total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta * costheta / self.total_mass)
        )
        xacc = temp - self.polemass_length * thetaacc * costheta / self.total_mass
        # Euler
        x = x + self.tau * x_dot
        x_dot = x_dot + self.tau * xacc
        theta = theta + self.tau * theta_dot
        theta_dot = theta_dot + self.tau * thetaacc
        self.state = (x, x_dot, theta, theta_dot)
        done = bool(
            x < -self.x_threshold
            or x > self.x_threshold
            or theta < -self.theta_threshold_radians
            or theta > self.theta_threshold_radians
        )
        self._elapsed_steps += 1
        if self._elapsed_steps >= self._max_episode_steps:
            done = True
        return np.array(self.state, dtype=np.float32), 1.0, done, {}

    def reset(self):
        self.state = tuple(float(v) for v in self.np_random.uniform(low=-0.05, high=0.05, size=(4,)))
        self._elapsed_steps = 0
        return np.array(self.state, dtype=np.float32)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 128)
        self.affine2 = nn.Linear(128, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


class Reinforce:
    def __init__(self, a):
        if not 0.0 <= a.gamma <= 1.0:
            raise SystemExit(f"--gamma {a.gamma}: a discount in [0, 1]")
        self.gamma = a.gamma
        self.number = max(a.number, 1)
        self.env = CartPoleEnv(a.seed)
        self.policy = Policy()
        self.optimizer = optim.Adam(self.policy.parameters(), lr=1e-2)
        self.eps = np.finfo(np.float32).eps.item()
        self.state = self.env.reset()

    def select_action(self, state):
        state = torch.from_numpy(state).float().unsqueeze(0)
        probs = self.policy(state)
        m = Categorical(probs)
        action = m.sample()
        self.policy.saved_log_probs.append(m.log_prob(action))
        return action.item()

    def finish_episode(self):
        policy = self.policy
        R = 0
        policy_loss = []
        returns = []
        for r in policy.rewards[::-1]:
            R = r + self.gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + self.eps)
        for log_prob, R in zip(policy.saved_log_probs, returns):
            policy_loss.append(-log_prob * R)
        self.optimizer.zero_grad()
        policy_loss = torch.cat(policy_loss).sum()
        policy_loss.backward()
        self.optimizer.step()
        del policy.rewards[:]
        del policy.saved_log_probs[:]

    def step(self):
        action = self.select_action(self.state)
        self.state, reward, done, _ = self.env.step(action)
        self.policy.rewards.append(reward)
        if done:
            self.state = self.env.reset()
        if len(self.policy.rewards) >= self.number:
            self.finish_episode()
        return reward


def build(a):
    return Reinforce(a)
