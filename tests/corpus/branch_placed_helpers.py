# A value that is a CPU factory on one path and a tensor on the device on another, handed to a
# helper: on the device path, what the helper makes without a device meets it there.
import torch
from torch import Tensor


class Smoother:
    def __init__(self, kernel, reference: Tensor, eps: float) -> None:
        self.kernel = kernel
        self.reference = reference
        self.eps = eps

    def _stabilise(self, matrix: Tensor) -> Tensor:
        identity = torch.eye(matrix.size(-1)).expand(matrix.shape)  # expect: TDL003
        for attempt in range(3):
            matrix = matrix + self.eps * (10 ** attempt) * identity
        return matrix

    def _stabilise_on_its_device(self, matrix: Tensor) -> Tensor:
        identity = torch.eye(matrix.size(-1), device=matrix.device)  # ok: TDL003
        return matrix + self.eps * identity

    def covariance(self, points: Tensor) -> Tensor:
        covar = self.kernel(points, points)
        if self.reference is None:
            jitter = torch.eye(covar.size(-1))  # ok: TDL003 meets what the kernel returns, of unknown kind
        else:
            jitter = torch.eye(covar.size(-1), device=self.reference.device)  # ok: TDL003
        covar = covar + jitter * self.eps
        try:
            return torch.linalg.cholesky(covar)
        except RuntimeError:
            covar = self._stabilise(covar)
            return self._stabilise_on_its_device(covar)


def pad_rows(rows: Tensor, width: int) -> Tensor:
    filler = torch.zeros(rows.size(0), width)  # expect: TDL003
    return torch.cat([rows, filler], dim=-1)


def features(values: Tensor, on_host: bool) -> Tensor:
    if on_host:
        table = torch.ones(4, 3)  # ok: TDL003 on this path it meets the CPU filler
    else:
        table = torch.ones(4, 3, device=values.device)  # ok: TDL003
    return pad_rows(table, 2)


def pad_host_rows(rows, width: int):
    filler = torch.zeros(rows.size(0), width)  # ok: TDL003 every caller passes a CPU tensor
    return torch.cat([rows, filler], dim=-1)


def host_features() -> Tensor:
    return pad_host_rows(torch.ones(4, 3), 2)  # ok: TDL003


def shifted(values: Tensor, use_gpu: bool) -> Tensor:
    base = torch.arange(8) if not use_gpu else torch.arange(8).cuda()  # ok: TDL003 moved on the other path
    return base + torch.ones(8)  # expect: TDL003 on the use_gpu path it meets the moved arange


def affine_parameters(bounds=None, size: int = 3) -> Tensor:
    if bounds is None:
        scale = torch.ones(1, size)  # ok: TDL003 on this path the offset is a CPU factory too
        offset = torch.zeros(1, size)  # ok: TDL003
    else:
        offset = bounds[0:1]
        scale = bounds[1:2] - offset
    return offset + 0.5 * scale
