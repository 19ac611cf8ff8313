# A factory given ``device=k.device`` where ``k`` is itself a CPU factory tensor is as device-less
# as ``k``: both are on the CPU, and fixing ``k``'s factory fixes both. Shape from gpytorch's
# polynomial kernel (710d1b16a6), with hard negatives.
import torch
from torch import nn


class PolynomialGrad(nn.Module):
    def forward(self, x1, x2, power: int):
        n1, d = x1.shape[-2:]
        n2 = x2.shape[-2]
        k12 = torch.zeros(n1, n2 * d)  # expect: TDL003  its device is handed on to ones_
        ones_ = torch.ones(d, 1, n2, dtype=k12.dtype, device=k12.device)
        outer = torch.matmul(x1.transpose(-2, -1).unsqueeze(-1), ones_)
        return outer.pow(power)


class PolynomialGradFixed(nn.Module):
    def forward(self, x1, x2, power: int):
        n1, d = x1.shape[-2:]
        n2 = x2.shape[-2]
        k12 = torch.zeros(n1, n2 * d, device=x1.device)  # ok: TDL003
        ones_ = torch.ones(d, 1, n2, dtype=k12.dtype, device=k12.device)  # ok: TDL003
        outer = torch.matmul(x1.transpose(-2, -1).unsqueeze(-1), ones_)
        return outer.pow(power)


def host_table(n: int):
    counts = torch.zeros(n)  # ok: TDL003  both stay on the CPU: nothing device meets them
    weights = torch.ones(n, device=counts.device)
    return counts + weights

