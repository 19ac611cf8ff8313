"""Causal and padding masks for attention."""

import math

import torch
import torch.nn.functional as F
from torch import nn


def causal_mask(size: int) -> torch.Tensor:
    return torch.triu(torch.ones(size, size, dtype=torch.bool), diagonal=1)  # expect: TDL003  used by DecoderSelfAttention.forward


def padding_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    positions = torch.arange(max_len, device=lengths.device)  # ok: TDL003
    return positions[None, :] >= lengths[:, None]


def square_subsequent_mask(sz: int) -> torch.Tensor:
    """Never called in this file: the caller decides where the mask goes."""
    mask = torch.triu(torch.full((sz, sz), float("-inf")), diagonal=1)  # ok: TDL003
    return mask


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head, block_size):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.register_buffer(
            "bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size)  # ok: TDL003
        )

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class DecoderSelfAttention(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        q = self.q_proj(x)
        k = self.k_proj(x)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        mask = causal_mask(x.size(1))
        scores = scores.masked_fill(mask, float("-inf"))
        return torch.matmul(scores.softmax(-1), self.v_proj(x))


class MaskedDecoder(nn.Module):
    """Builds the mask on the right device."""

    def __init__(self, d_model, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, heads, batch_first=True)

    def forward(self, x, key_padding_mask=None):
        T = x.size(1)
        mask = torch.triu(torch.full((T, T), float("-inf"), device=x.device), diagonal=1)  # ok: TDL003
        out, _ = self.attn(x, x, x, attn_mask=mask, key_padding_mask=key_padding_mask)
        return out


class LocalWindowAttention(nn.Module):
    """A band mask made on the CPU and moved before use."""

    def __init__(self, d_model, window):
        super().__init__()
        self.window = window
        self.score = nn.Linear(d_model, d_model)

    def forward(self, x):
        n = x.size(1)
        idx = torch.arange(n)  # ok: TDL003  only builds the band, which is moved
        band = (idx[None, :] - idx[:, None]).abs() > self.window
        band = band.to(x.device)
        scores = self.score(x) @ x.transpose(1, 2)
        return scores.masked_fill(band, float("-inf")).softmax(-1) @ x


class PrefixLMMask(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x, prefix_len: int):
        T = x.size(1)
        allowed = torch.ones(T, T, dtype=torch.bool).tril()  # expect: TDL003  meets device scores in where()
        allowed[:, :prefix_len] = True
        scores = self.out(x) @ x.transpose(1, 2)
        scores = torch.where(allowed, scores, torch.full_like(scores, float("-inf")))  # ok: TDL003
        return scores.softmax(-1) @ x


def lengths_to_mask(lengths, max_len=None):
    """Lengths of unknown origin: nothing says they live on the device (TDL003), but the
    helper fails as soon as a caller passes device lengths (TDL013)."""
    max_len = max_len or int(lengths.max())
    steps = torch.arange(max_len)  # expect: TDL003
    return steps.unsqueeze(0) < lengths.unsqueeze(1)


def extended_attention_mask(attention_mask: torch.Tensor, dtype=torch.float32):
    ext = attention_mask[:, None, None, :].to(dtype)
    return (1.0 - ext) * torch.finfo(dtype).min


def window_partition(x: torch.Tensor, size: int) -> torch.Tensor:
    b, h, w, c = x.shape
    x = x.view(b, h // size, size, w // size, size, c)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(-1, size * size, c)


class ShiftedWindowBlock(nn.Module):
    """The shift mask is built once in __init__ through the helper forward also uses, then kept
    as a buffer: it follows the module. The helper's result in forward is a device tensor."""

    def __init__(self, dim: int, resolution: int, size: int, shift: int):
        super().__init__()
        self.size = size
        self.qkv = nn.Linear(dim, dim * 3)
        img_mask = torch.zeros((1, resolution, resolution, 1))  # ok: TDL003
        for index, band in enumerate((slice(0, -size), slice(-size, -shift), slice(-shift, None))):
            img_mask[:, band, :, :] = index
        windows = window_partition(img_mask, size).squeeze(-1)
        attn_mask = windows.unsqueeze(1) - windows.unsqueeze(2)
        self.register_buffer("attn_mask", attn_mask.masked_fill(attn_mask != 0, -100.0), persistent=False)

    def forward(self, x):
        windows = window_partition(x, self.size)
        qkv = self.qkv(windows)  # the helper returns x's device, not __init__'s CPU mask
        return qkv + self.attn_mask.sum()
