# Code that runs only while a model is traced or exported: the exported graph records the
# device of what a factory makes as a constant, and export scripts trace on the CPU, so a
# device= there changes nothing (icefall's and wenet's rel_shift under is_jit_tracing()).
# The other branch is the model's own path, on the caller's device.
import torch
from torch import nn


class RelShift(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, heads, t1, n = x.shape
        if torch.jit.is_scripting() or torch.jit.is_tracing():
            rows = torch.arange(start=t1 - 1, end=-1, step=-1)  # ok: TDL003
            cols = torch.arange(t1)  # ok: TDL003
            index = rows.unsqueeze(-1) + cols
            return torch.gather(x, dim=-1, index=index.expand(batch, heads, t1, t1))
        mask = torch.ones(t1, t1).triu(1)  # expect: TDL003
        return x[..., :t1] * mask


class Pad(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.onnx.is_in_onnx_export():
            return torch.cat([torch.zeros(x.shape[0], 1), x], dim=1)  # ok: TDL003
        return torch.cat([torch.zeros(x.shape[0], 1), x], dim=1)  # expect: TDL003
