# A torch function writes its results where its inputs live: tensors given as ``out=`` (one, or
# a tuple built on one path) meet its tensor inputs (gpytorch's psd_safe_cholesky, 101d3729b3).
# Hard negatives: ``out=`` tensors made on the input's device, a host computation.
import torch


def safe_cholesky(A: torch.Tensor, out=None):
    if out is not None:
        out = (out, torch.empty(A.shape[:-2], dtype=torch.int32))  # expect: TDL003  written next to A
    L, info = torch.linalg.cholesky_ex(A, out=out)
    return L


def safe_cholesky_fixed(A: torch.Tensor, out=None):
    if out is not None:
        out = (out, torch.empty(A.shape[:-2], dtype=torch.int32, device=A.device))  # ok: TDL003
    L, info = torch.linalg.cholesky_ex(A, out=out)
    return L


def host_cumsum(n: int):
    values = torch.arange(n)
    total = torch.empty(n, dtype=torch.long)  # ok: TDL003  the input is a host tensor too
    torch.cumsum(values, 0, out=total)
    return total
