# Names computed from the caller's tensors that the code rebinds from themselves, or unpacks
# from a method of an argument: shapes from pyro's autocorrelation (d52e215af9) and
# torch_sparse's get_diag (bfdca11e4c), with hard negatives.
import torch

from .common import load_signal


def autocorrelation(input, dim=0):
    n = input.size(dim)
    input = input.transpose(dim, -1)
    centered = input - input.mean(dim=-1, keepdim=True)
    pad = torch.zeros(input.shape[:-1] + (n,), dtype=input.dtype)  # expect: TDL003  cat with a signal rebound from itself
    centered = torch.cat([centered, pad], dim=-1)
    power = torch.fft.rfft(centered).abs()
    power = power.pow(2).sum(-1, keepdim=True)
    power = torch.cat([power, torch.zeros(power.shape, dtype=input.dtype)], dim=-1)  # expect: TDL003
    return power


def autocorrelation_fixed(input, dim=0):
    n = input.size(dim)
    centered = input - input.mean(dim=-1, keepdim=True)
    pad = torch.zeros(input.shape[:-1] + (n,), dtype=input.dtype, device=input.device)  # ok: TDL003
    centered = torch.cat([centered, pad], dim=-1)
    return centered


def accumulated(values: torch.Tensor, n: int):
    total = torch.zeros(n)  # ok: TDL003  only ever added to itself: the rebinding never reads the argument
    for _ in range(3):
        total = total + total
    return values.sum() + total.sum()


def get_diag(src):
    row, col, value = src.coo()
    if value is None:
        value = torch.ones(row.size(0))  # expect: TDL003  indexed by the caller's rows
    out = value.new_zeros(min(src.size(0), src.size(1)))
    mask = row == col
    out[row[mask]] = value[mask]
    return out


def diag_from_helper(path, n: int):
    row, col = load_signal(path)
    out = torch.zeros(n)  # ok: TDL003  the parts of another file's helper may stay on the CPU (TDL013's question)
    out[row] = 1.0
    return out


def filter_banks(all_freqs: torch.Tensor, f_central: torch.Tensor, band: torch.Tensor):
    slope = (all_freqs - f_central) / band
    left_side = slope + 1.0
    right_side = -slope + 1.0
    zero = torch.zeros(1)  # expect: TDL003  torch.max of two tensors is elementwise: one device (speechbrain 3cbbcf1191)
    return torch.max(zero, torch.min(left_side, right_side)).transpose(0, 1)


def best_rows(scores: torch.Tensor, n: int):
    counts = torch.zeros(n)  # ok: TDL003  torch.max over a dimension meets nothing
    values, rows = torch.max(scores, 1)
    return values, rows, torch.max(counts, 0)


def clipped(scores: torch.Tensor):
    return torch.max(scores, torch.tensor(0.0))  # ok: TDL003  a 0-dim tensor may meet any device


def observed_classes(target: torch.Tensor, num_classes: int):
    # torchmetrics auroc (c519402693): the argument is rebound further down, after the meeting.
    target_bool_mat = torch.zeros((len(target), num_classes), dtype=torch.bool)  # expect: TDL003
    target_bool_mat[:, target.long()] = True
    observed = target_bool_mat.sum(dim=0) > 0
    target = target_bool_mat[:, observed]
    return torch.where(target)[1]


def relabelled(target: torch.Tensor, path, num_classes: int):
    target = load_signal(path)
    table = torch.zeros(num_classes, dtype=torch.bool)  # ok: TDL003  met after the argument was rebound to another file's helper
    table[target] = True
    return table
