# Tensors returned by helpers of other files: their place is the helper's contract, which this
# file cannot see. TDL013 (preview) reports factories that meet them; TDL003 stays silent.
import numpy as np
import torch

from .features import encode, load_wave, to_numpy_batch


def score(batch, scale: float):
    feats = encode(batch).unsqueeze(0)
    weights = torch.ones(feats.shape[-1])  # ok: TDL003  # expect: TDL013
    return feats * weights * scale


def score_fixed(batch):
    feats = encode(batch).unsqueeze(0)
    return feats * torch.ones(feats.shape[-1], device=feats.device)  # ok: TDL003, TDL013


def augment(path):
    wave = load_wave(path).unsqueeze(0)
    return wave + torch.randn(wave.shape) * 0.01  # ok: TDL003  # expect: TDL013


def augment_scalar(path):
    wave = load_wave(path).unsqueeze(0)
    return wave * torch.tensor(0.5)  # ok: TDL003, TDL013  a 0-dim factory meets any device


def augment_like(path):
    wave = load_wave(path).unsqueeze(0)
    return wave + torch.randn_like(wave)


def as_array(batch):
    array = to_numpy_batch(batch)
    return np.concatenate([array, np.zeros_like(array)])


def pad_front(tokens):
    hidden = encode(tokens).detach()
    start = torch.zeros(1, hidden.size(1))  # ok: TDL003  # expect: TDL013
    return torch.cat([start, hidden])
