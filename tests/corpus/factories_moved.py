"""Factories that are moved (or placed) before they meet anything on the device."""

import numpy as np
import torch
from torch import nn


def sample_noise(batch_size, dim, device):
    return torch.randn(batch_size, dim).to(device)  # ok: TDL003


def make_targets(n, device):
    return torch.arange(n).to(device)  # ok: TDL003


class Sampler(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.lin(x)
        eps = torch.randn(h.shape).to(h.device)  # ok: TDL003
        mask = torch.rand(h.size(0), 1).to(h)  # ok: TDL003
        idx = torch.randint(0, h.size(1), (h.size(0),)).cuda()  # ok: TDL003
        ramp = torch.from_numpy(np.linspace(0, 1, h.size(1))).float().to(h.device)  # ok: TDL003
        half = torch.zeros(h.size(0), 1).type_as(h)  # ok: TDL003
        band = torch.ones(h.size(1), h.size(1))  # ok: TDL003  moved on the next line
        band = band.to(h.device)
        return (h * mask + eps + ramp + half) @ band, idx


class BlockDefaultDevice(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        with torch.device(x.device):
            grid = torch.arange(x.size(1))  # ok: TDL003  the block sets the default device
            noise = torch.randn(x.shape)  # ok: TDL003
        return self.lin(x + grid + noise)


def noisy_copy(x: torch.Tensor, sigma: float, device):
    x = x.to(device)
    noise = torch.randn(x.shape, device=device) * sigma  # ok: TDL003
    gate = torch.ones(x.shape[0], 1, device=x.device)  # ok: TDL003
    return x + noise * gate


def batch_from_numpy(arrays, device):
    stacked = np.stack(arrays)
    batch = torch.from_numpy(stacked).float().to(device, non_blocking=True)  # ok: TDL003
    weights = torch.as_tensor(np.ones(len(arrays)), dtype=torch.float32, device=device)  # ok: TDL003
    return batch * weights[:, None]


def to_device_dict(sample: dict, device):
    return {k: (v.to(device) if torch.is_tensor(v) else v) for k, v in sample.items()}


class Interpolator(nn.Module):
    def __init__(self, steps):
        super().__init__()
        self.steps = steps
        self.mix = nn.Linear(2, 1)

    def forward(self, a, b):
        alphas = torch.linspace(0, 1, self.steps, device=a.device).view(-1, 1, 1)  # ok: TDL003
        pairs = torch.stack([a.expand(self.steps, *a.shape[1:]), b.expand(self.steps, *b.shape[1:])], dim=-1)
        return self.mix(pairs).squeeze(-1) * alphas


def gaussian_kernel(size: int, sigma: float, device):
    coords = torch.arange(size, dtype=torch.float32) - size // 2  # ok: TDL003  moved below
    g = torch.exp(-(coords**2) / (2 * sigma**2))
    g = (g / g.sum()).to(device)
    return g[:, None] * g[None, :]
