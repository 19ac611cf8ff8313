# What a module's forward returns goes back to a caller whose input is on the device: a CPU
# factory the forward filled with values computed from its input meets that device there
# (placeholders for edge cases are left alone: read by hand, they were rarely bugs). Shapes from gpytorch's kernels (a0ad6c03bd: the
# gradient kernel matrix made with torch.zeros and filled from the inputs), with hard negatives.
import torch
from torch import nn


class GradKernel(nn.Module):
    def forward(self, x1, x2):
        b, n1, d = x1.size()
        n2 = x2.size(1)
        k = torch.zeros(b, n1 * (d + 1), n2 * (d + 1))  # expect: TDL003  filled from the inputs, returned to their caller
        k[..., :n1, :n2] = x1 @ x2.transpose(-1, -2)
        return k


class PairHead(nn.Module):
    def forward(self, x):
        if x.numel() == 0:
            return x, torch.zeros((0, 4))  # ok: TDL003  a placeholder for the empty case: nothing computed into it
        return x, x[:, :4]


class PerceptualChannels(nn.Module):
    # MONAI losses/perceptual.py (channel_wise): per-channel results written into a CPU tensor.
    def forward(self, input: torch.Tensor):
        diff: torch.Tensor = input.pow(2)
        results = torch.zeros(diff.shape[0], input.shape[1])  # expect: TDL003
        for i in range(input.shape[1]):
            results[:, i] = diff[:, i].sum(dim=1)
        return results


class GradKernelFixed(nn.Module):
    def forward(self, x1, x2):
        b, n1, d = x1.size()
        k = torch.zeros(b, n1 * (d + 1), n1 * (d + 1), device=x1.device, dtype=x1.dtype)  # ok: TDL003
        k[..., :n1, :n1] = x1 @ x1.transpose(-1, -2)
        return k


class Constant(nn.Module):
    def forward(self, x, scale: float):
        return torch.arange(4) * scale  # ok: TDL003  never reads its input: nothing comes from the caller's device


class Count(nn.Module):
    def forward(self, x):
        return x.sum(), torch.tensor(0.0)  # ok: TDL003  a 0-dim tensor may go anywhere


class ShuffledGradKernel(nn.Module):
    # gpytorch rbf_kernel_grad.py (a0ad6c03bd): the filled matrix is reordered by a CPU
    # permutation before it is returned; rows picked with a ``:`` kept are still the CPU tensor.
    def forward(self, x1, x2):
        n1, d = x1.size()
        k = torch.zeros(n1 * (d + 1), n1 * (d + 1))  # expect: TDL003
        k[:n1, :n1] = x1 @ x2.t()
        pi = torch.arange(n1 * (d + 1)).view(d + 1, n1).t().reshape(-1)
        k = k[..., pi, :][..., :, pi]
        return k


class PickedEntries(nn.Module):
    def forward(self, x, i: int):
        table = torch.arange(10)
        return x * table[i]  # ok: TDL003  one element: a 0-dim tensor may meet any device


class BaseKernel(nn.Module):
    def forward(self, x1, x2):
        return (x1 * x2).sum(-1)


class KernelWithGrad(BaseKernel):
    """``super().forward(...)`` of a module on the device gives its output there (gpytorch's
    RBFKernelGrad diagonal, a0ad6c03bd)."""

    def forward(self, x1, x2):
        n, d = x1.shape[-2:]
        kernel_diag = super().forward(x1, x2)
        grad_diag = torch.ones(1, n * d)  # expect: TDL003  cat with the base forward's output
        return torch.cat((kernel_diag, grad_diag), dim=-1)


class KernelWithGradFixed(BaseKernel):
    def forward(self, x1, x2):
        n, d = x1.shape[-2:]
        kernel_diag = super().forward(x1, x2)
        grad_diag = torch.ones(1, n * d, device=x1.device)  # ok: TDL003
        return torch.cat((kernel_diag, grad_diag), dim=-1)


class HostTable:
    def forward(self, rows):
        return rows


class CountingTable(HostTable):
    def forward(self, rows):
        kept = super().forward(rows)
        extra = torch.zeros(1, 3)  # ok: TDL003  not a module: nothing says where its rows live
        return torch.cat((kept, extra))
