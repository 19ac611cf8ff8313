# ``torch.tensor`` of a range is a 1-dim tensor, however long: it meets a caller's tensor as a
# CPU tensor (pyro's autocorrelation, d52e215af9), and a name computed with ``range`` or ``len``
# from the caller's tensor stays the caller's tensor. Hard negatives: a 0-dim element, the host.
import torch


def normalize_lags(input: torch.Tensor, dim: int = -1):
    n = input.size(dim)
    autocorr = input.transpose(dim, -1)[..., :n]
    autocorr = autocorr / torch.tensor(range(n, 0, -1), dtype=input.dtype)  # expect: TDL003
    return autocorr / autocorr[..., :1]


def normalize_lags_fixed(input: torch.Tensor, dim: int = -1):
    n = input.size(dim)
    autocorr = input.transpose(dim, -1)[..., :n]
    autocorr = autocorr / torch.tensor(range(n, 0, -1), dtype=input.dtype, device=input.device)  # ok: TDL003
    return autocorr / autocorr[..., :1]


def first_lag(input: torch.Tensor, values):
    return input / torch.tensor(values[0])  # ok: TDL003  one element: may be 0-dim


def host_lags(n: int):
    lags = torch.tensor(range(n))  # ok: TDL003  nothing from a caller's device meets it
    return lags * 2
