"""Learned position embeddings: GPT-, BERT- and ViT-style."""

import torch
from torch import nn


class GPTEmbeddings(nn.Module):
    def __init__(self, vocab_size, d_model, block_size, dropout=0.1):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(block_size, d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)  # ok: TDL003
        return self.drop(self.wte(idx) + self.wpe(pos))


class GPTEmbeddingsNoDevice(nn.Module):
    def __init__(self, vocab_size, d_model, block_size):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(block_size, d_model)

    def forward(self, idx):
        positions = torch.arange(idx.size(1))  # expect: TDL003  indexes a device embedding
        return self.tok(idx) + self.pos(positions)


class BertStyleEmbeddings(nn.Module):
    def __init__(self, vocab_size, hidden, max_positions=512, type_vocab=2):
        super().__init__()
        self.word = nn.Embedding(vocab_size, hidden)
        self.position = nn.Embedding(max_positions, hidden)
        self.token_type = nn.Embedding(type_vocab, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.register_buffer("position_ids", torch.arange(max_positions).expand((1, -1)), persistent=False)  # ok: TDL003
        self.register_buffer("token_type_ids", torch.zeros(1, max_positions, dtype=torch.long), persistent=False)  # ok: TDL003

    def forward(self, input_ids, token_type_ids=None):
        seq_length = input_ids.size(1)
        position_ids = self.position_ids[:, :seq_length]
        if token_type_ids is None:
            token_type_ids = torch.zeros(input_ids.shape, dtype=torch.long)  # expect: TDL003  the default path meets a device embedding
        embeddings = self.word(input_ids) + self.position(position_ids) + self.token_type(token_type_ids)
        return self.norm(embeddings)


class ViTEmbeddings(nn.Module):
    def __init__(self, image_size=224, patch_size=16, dim=768, channels=3):
        super().__init__()
        num_patches = (image_size // patch_size) ** 2
        self.proj = nn.Conv2d(channels, dim, kernel_size=patch_size, stride=patch_size)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))  # ok: TDL003
        self.pos_embed = nn.Parameter(torch.randn(1, num_patches + 1, dim) * 0.02)  # ok: TDL003
        self.dist_token = nn.Parameter(torch.zeros(1, 1, dim))  # ok: TDL003

    def forward(self, x):
        x = self.proj(x).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat((cls, x), dim=1)
        return x + self.pos_embed


class RelativePositionBias(nn.Module):
    """Swin-style table of relative offsets, indexes precomputed into a buffer."""

    def __init__(self, window, heads):
        super().__init__()
        self.window = window
        self.table = nn.Parameter(torch.zeros((2 * window - 1) ** 2, heads))  # ok: TDL003
        coords_h = torch.arange(window)  # ok: TDL003
        coords_w = torch.arange(window)  # ok: TDL003
        coords = torch.stack(torch.meshgrid(coords_h, coords_w, indexing="ij")).flatten(1)
        relative = coords[:, :, None] - coords[:, None, :]
        relative = relative.permute(1, 2, 0).contiguous()
        relative[:, :, 0] += window - 1
        relative[:, :, 1] += window - 1
        relative[:, :, 0] *= 2 * window - 1
        self.register_buffer("index", relative.sum(-1))

    def forward(self, attn):
        n = self.window * self.window
        bias = self.table[self.index.view(-1)].view(n, n, -1).permute(2, 0, 1)
        return attn + bias.unsqueeze(0).to(attn.device)


class TimestepEmbedding(nn.Module):
    """Sinusoidal embedding of diffusion timesteps, frequencies built per call."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 4), nn.SiLU(), nn.Linear(dim * 4, dim))

    def forward(self, t):
        half = self.dim // 2
        freqs = torch.exp(-9.21 * torch.arange(half, dtype=torch.float32) / half)  # expect: TDL003  t arrives on the device
        args = t.float()[:, None] * freqs[None]
        return self.mlp(torch.cat([args.sin(), args.cos()], dim=-1))
