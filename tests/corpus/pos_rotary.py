"""Rotary position embeddings: frequencies as a buffer, positions built per call."""

import torch
from torch import nn


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q, k, cos, sin):
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))  # ok: TDL003
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x, seq_dim=1):
        seq_len = x.shape[seq_dim]
        t = torch.arange(seq_len, device=x.device).type_as(self.inv_freq)  # ok: TDL003
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos()[None, :, None, :], emb.sin()[None, :, None, :]


class RotaryEmbeddingNoDevice(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)))  # ok: TDL003

    def forward(self, x):
        t = torch.arange(x.shape[1]).float()  # expect: TDL003  meets the buffer in outer()
        freqs = torch.outer(t, self.inv_freq)
        return torch.polar(torch.ones_like(freqs), freqs)  # ok: TDL003


class CachedRotary(nn.Module):
    """Tables precomputed in __init__ and kept as buffers."""

    def __init__(self, dim, max_positions=2048):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))  # ok: TDL003
        t = torch.arange(max_positions, dtype=torch.float32)  # ok: TDL003
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, q, k, position_ids):
        cos = self.cos_cached[position_ids].unsqueeze(1)
        sin = self.sin_cached[position_ids].unsqueeze(1)
        return apply_rotary(q, k, cos, sin)


class RotaryAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.rotary = CachedRotary(dim // heads)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        position_ids = torch.arange(n).unsqueeze(0).expand(b, n)  # ok: TDL003  CPU index into the cached buffers
        q, k = self.rotary(q, k, position_ids)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def alibi_bias(slopes: torch.Tensor, seq_len: int, device: torch.device) -> torch.Tensor:
    positions = torch.arange(seq_len, device=device)  # ok: TDL003
    relative = positions[None, :] - positions[:, None]
    return slopes[:, None, None] * relative[None, :, :]


class AlibiAttention(nn.Module):
    def __init__(self, heads):
        super().__init__()
        slopes = torch.tensor([2 ** (-8 * (i + 1) / heads) for i in range(heads)])  # ok: TDL003
        self.register_buffer("slopes", slopes)

    def forward(self, scores):
        n = scores.size(-1)
        distance = torch.arange(n)[None, None, :]  # expect: TDL003  meets the slopes buffer
        return scores - self.slopes[:, None, None] * distance
