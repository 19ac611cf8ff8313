"""Sinusoidal positional encodings: the table as a buffer, as a plain attribute, moved in forward."""

import math

import torch
from torch import nn


class SinusoidalPositionalEncoding(nn.Module):
    """The table is a buffer, so `model.to(device)` moves it along with the weights."""

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        pe = torch.zeros(max_len, d_model)  # ok: TDL003
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)  # ok: TDL003
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))  # ok: TDL003
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        x = x + self.pe[:, : x.size(1)]
        return self.dropout(x)


class PlainAttributeEncoding(nn.Module):
    """The table is a plain attribute: `model.to(device)` leaves it on the CPU."""

    def __init__(self, d_model, max_len=512):
        super().__init__()
        table = torch.zeros(max_len, d_model)  # ok: TDL003  a plain attribute that never moves is TDL009's finding
        position = torch.arange(max_len).unsqueeze(1).float()  # ok: TDL003  only its values are copied into the table
        freqs = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))  # ok: TDL003
        table[:, 0::2] = torch.sin(position * freqs)
        table[:, 1::2] = torch.cos(position * freqs)
        self.table = table

    def forward(self, x):
        return x + self.table[: x.size(1)]


class MovedInForward(nn.Module):
    """A plain attribute again, but forward moves the slice it uses."""

    def __init__(self, d_model, max_len=512):
        super().__init__()
        self.scale = math.sqrt(d_model)
        self.table = self._build(max_len, d_model)

    @staticmethod
    def _build(n, d):
        t = torch.arange(n, dtype=torch.float32).unsqueeze(1)  # ok: TDL003
        freqs = torch.pow(10000.0, -torch.arange(0, d, 2, dtype=torch.float32) / d)  # ok: TDL003
        table = torch.zeros(n, d)  # ok: TDL003
        table[:, 0::2] = torch.sin(t * freqs)
        table[:, 1::2] = torch.cos(t * freqs)
        return table

    def forward(self, x):
        table = self.table[: x.size(1)].to(x.device)
        scale = torch.tensor(self.scale)  # ok: TDL003  0-dim
        return x * scale + table


class LearnedScaleEncoding(nn.Module):
    """Scaled table with a learned gain; positions built on the input's device."""

    def __init__(self, d_model, max_len=1024):
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(1))  # ok: TDL003
        inv = 1.0 / (10000 ** (torch.arange(0, d_model, 2).float() / d_model))  # ok: TDL003
        self.register_buffer("inv_freq", inv)

    def forward(self, x):
        pos = torch.arange(x.size(1), device=x.device, dtype=self.inv_freq.dtype)  # ok: TDL003
        angles = pos[:, None] * self.inv_freq[None, :]
        enc = torch.cat([angles.sin(), angles.cos()], dim=-1)
        return x + self.alpha * enc
