# A helper of the file returns a CPU factory tensor to its caller, which meets the caller's own
# tensors with it: the helper was handed one of those tensors, so a fix reads that parameter's
# device. Shape from speechbrain's data_utils (736d2a4125: ``length_range(feats, len_dim)``
# returning ``torch.arange(max_len)`` repeated, compared with the caller's ``start``), with hard
# negatives.
import torch


def unsqueeze_1d(value, dim: int, value_dim: int):
    unsqueeze_dim = [None] * dim
    unsqueeze_dim[value_dim] = ...
    return value[unsqueeze_dim]


def length_range(feats: torch.Tensor, len_dim: int):
    max_len = feats.size(len_dim)
    feats_range = torch.arange(max_len)  # expect: TDL003  returned to mask_range, meets start
    out = unsqueeze_1d(feats_range, feats.dim(), len_dim)
    return out.repeat(2, 1)


def mask_range(target, start: torch.Tensor, end: torch.Tensor, len_dim: int):
    out_range = length_range(target, len_dim)
    return (start.unsqueeze(-1) <= out_range) & (out_range < end.unsqueeze(-1))


def length_range_fixed(feats: torch.Tensor, len_dim: int):
    return torch.arange(feats.size(len_dim), device=feats.device)  # ok: TDL003


def mask_range_fixed(target, start: torch.Tensor, len_dim: int):
    return start.unsqueeze(-1) <= length_range_fixed(target, len_dim)


def positions(n: int):
    return torch.arange(n)  # ok: TDL003  the helper is handed no tensor: its caller decides


def shift(x: torch.Tensor):
    return x + positions(x.size(-1)).to(x.device)


def row_of(table, i: int):
    return table[i]


def scaled(x: torch.Tensor, n: int):
    weights = torch.linspace(0, 1, n)  # ok: TDL003  one element of it: a 0-dim tensor
    return x * row_of(weights, 0)


def move(batch, device):
    return batch.to(device)
