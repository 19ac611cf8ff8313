"""RL rollout storage with its own .to(), a policy network and the collection loop."""

import random

import torch
import torch.nn.functional as F
from torch import nn
from torch.distributions import Categorical


class RolloutStorage:
    def __init__(self, num_steps, num_envs, obs_shape):
        self.obs = torch.zeros(num_steps + 1, num_envs, *obs_shape)  # ok: TDL003
        self.rewards = torch.zeros(num_steps, num_envs, 1)  # ok: TDL003
        self.value_preds = torch.zeros(num_steps + 1, num_envs, 1)  # ok: TDL003
        self.returns = torch.zeros(num_steps + 1, num_envs, 1)  # ok: TDL003
        self.actions = torch.zeros(num_steps, num_envs, 1, dtype=torch.long)  # ok: TDL003
        self.masks = torch.ones(num_steps + 1, num_envs, 1)  # ok: TDL003
        self.num_steps = num_steps
        self.step = 0

    def to(self, device):
        self.obs = self.obs.to(device)
        self.rewards = self.rewards.to(device)
        self.value_preds = self.value_preds.to(device)
        self.returns = self.returns.to(device)
        self.actions = self.actions.to(device)
        self.masks.to(device)  # expect: TDL004

    def insert(self, obs, actions, value_preds, rewards, masks):
        self.obs[self.step + 1].copy_(obs)
        self.actions[self.step].copy_(actions)
        self.value_preds[self.step].copy_(value_preds)
        self.rewards[self.step].copy_(rewards)
        self.masks[self.step + 1].copy_(masks)
        self.step = (self.step + 1) % self.num_steps

    def after_update(self):
        self.obs[0].copy_(self.obs[-1])
        self.masks[0].copy_(self.masks[-1])

    def compute_returns(self, next_value, gamma):
        self.returns[-1] = next_value
        for step in reversed(range(self.rewards.size(0))):
            self.returns[step] = self.returns[step + 1] * gamma * self.masks[step + 1] + self.rewards[step]


class Policy(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())
        self.pi = nn.Linear(64, n_actions)
        self.v = nn.Linear(64, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h)

    def act(self, obs):
        logits, value = self(obs)
        dist = Categorical(logits=logits)
        action = dist.sample()
        return value, action.unsqueeze(-1), dist.log_prob(action)


class ReplayBuffer:
    def __init__(self, capacity, obs_dim):
        self.states = torch.zeros(capacity, obs_dim)  # ok: TDL003
        self.actions = torch.zeros(capacity, dtype=torch.long)  # ok: TDL003
        self.rewards = torch.zeros(capacity)  # ok: TDL003
        self.capacity = capacity
        self.size = 0

    def to(self, device):
        for name in ("states", "actions", "rewards"):
            setattr(self, name, getattr(self, name).to(device))
        return self

    def sample(self, batch_size):
        idx = torch.randint(0, self.size, (batch_size,))  # ok: TDL003  CPU index into the stored tensors
        return self.states[idx], self.actions[idx], self.rewards[idx]


def collect(envs, policy: Policy, storage: RolloutStorage, num_steps: int):
    for step in range(num_steps):
        with torch.no_grad():
            value, action, log_prob = policy.act(storage.obs[step])
        next_obs, reward, done, info = envs.step(action.cpu().numpy())
        obs = torch.from_numpy(next_obs).float()  # ok: TDL003  copied into the storage
        reward = torch.from_numpy(reward).unsqueeze(1).float()  # ok: TDL003
        masks = torch.tensor([[0.0] if d else [1.0] for d in done])  # ok: TDL003
        storage.insert(obs, action, value, reward, masks)


def select_action(policy_net: nn.Module, state: torch.Tensor, n_actions: int, eps: float, device):
    if random.random() > eps:
        with torch.no_grad():
            return policy_net(state).argmax(dim=1).view(1, 1)
    return torch.tensor([[random.randrange(n_actions)]], device=device, dtype=torch.long)  # ok: TDL003


device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
policy = Policy(8, 4)
policy.to(device)  # ok: TDL004
storage = RolloutStorage(128, 16, (8,))
storage.to(device)  # ok: TDL004
replay = ReplayBuffer(10000, 8).to(device)
replay.to(device)  # ok: TDL004
first_obs = torch.zeros(16, 8)  # ok: TDL003  copied into the storage
storage.obs[0].copy_(first_obs)
state = torch.as_tensor([0.0] * 8, dtype=torch.float32)  # ok: TDL003
state.to(device)  # expect: TDL004
with torch.no_grad():
    logits, value = policy(torch.zeros(1, 8, device=device))  # ok: TDL003
    greedy = policy(torch.zeros(1, 8))  # expect: TDL003  the policy was moved
advantages = storage.returns[:-1] - storage.value_preds[:-1]
advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-5)
