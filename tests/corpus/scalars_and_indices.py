"""0-dim CPU scalars and CPU index tensors may meet device tensors; *_like and new_* follow their source."""

import math

import torch
import torch.nn.functional as F
from torch import nn


class ScaledDotProduct(nn.Module):
    def __init__(self, d_k, temperature=None):
        super().__init__()
        self.temperature = temperature or math.sqrt(d_k)

    def forward(self, q, k, v, mask=None):
        scale = torch.tensor(self.temperature)  # ok: TDL003  0-dim
        attn = torch.matmul(q, k.transpose(-2, -1)) / scale
        neg = torch.full((), float("-inf"))  # ok: TDL003  0-dim
        if mask is not None:
            attn = torch.where(mask, attn, neg)
        eps = torch.tensor(1e-6)  # ok: TDL003  0-dim
        return torch.matmul(attn.softmax(-1) + eps, v)


class Picker(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, y):
        x = self.proj(x)
        b = x.size(0)
        rows = torch.arange(b)  # ok: TDL003  CPU index into a device tensor
        picked = x[rows, y]
        keep = torch.tensor([0, 2, 3])  # ok: TDL003  CPU index
        subset = x[:, keep]
        first = x[torch.arange(b), 0]  # ok: TDL003
        return picked, subset, first


class LikeAndNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.lin(x)
        zeros = torch.zeros_like(h)  # ok: TDL003
        ones = h.new_ones(h.shape)  # ok: TDL003
        noise = torch.randn_like(h) * 0.1  # ok: TDL003
        table = h.new_tensor([1.0, 2.0, 3.0])  # ok: TDL003
        fill = torch.full_like(h, 0.5)  # ok: TDL003
        empty = torch.empty_like(h).uniform_()  # ok: TDL003
        return (h + zeros + ones + noise + fill + empty) * table[0]


class OneElementIsNotAScalar(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.lin(x)
        gain = torch.ones(1)  # expect: TDL003  shape (1,), not 0-dim
        shift = torch.tensor([0.5])  # expect: TDL003  shape (1,)
        return h * gain + shift


class DropPath(nn.Module):
    def __init__(self, p=0.1):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        keep = 1 - self.p
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        random_tensor = keep + torch.rand(shape, dtype=x.dtype)  # expect: TDL003  multiplies the device input
        random_tensor.floor_()
        return x.div(keep) * random_tensor


class DropPathOnDevice(DropPath):
    def forward(self, x):
        keep = 1 - self.p
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        random_tensor = x.new_empty(shape).bernoulli_(keep)  # ok: TDL003
        return x / keep * random_tensor


class StageScaledBlock(nn.Module):
    def __init__(self, dim, stages=4, drop_path_rate=0.2):
        super().__init__()
        self.stages = stages
        self.drop_rates = torch.linspace(0, drop_path_rate, stages).tolist()  # ok: TDL003
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, stage: int):
        gain = torch.linspace(0.1, 1.0, steps=self.stages)[stage]  # ok: TDL003  indexed down to 0-dim
        return x + gain * self.fc(x)


class GumbelSoftmax(nn.Module):
    def __init__(self, tau=1.0):
        super().__init__()
        self.tau = tau

    def forward(self, logits):
        u = torch.rand(logits.shape)  # expect: TDL003  noise added to device logits
        gumbel = -torch.log(-torch.log(u + 1e-9) + 1e-9)
        return F.softmax((logits + gumbel) / self.tau, dim=-1)


class CoordConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin + 2, cout, 3, padding=1)

    def forward(self, x):
        b, _, h, w = x.shape
        xx = torch.linspace(-1, 1, w).view(1, 1, 1, w).expand(b, 1, h, w)  # expect: TDL003
        yy = torch.linspace(-1, 1, h).view(1, 1, h, 1).expand(b, 1, h, w)  # expect: TDL003
        return self.conv(torch.cat([x, xx, yy], dim=1))


class Standardize(nn.Module):
    def forward(self, x):
        mean = x.mean(dim=0, keepdim=True)
        std = x.std(dim=0, keepdim=True)
        eps = torch.tensor(1e-5, device=x.device)  # ok: TDL003
        return (x - mean) / (std + eps)
