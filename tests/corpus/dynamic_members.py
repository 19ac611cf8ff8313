# Modules that reach their layers by a computed name (``getattr(self, f"conv_{i}")``) or
# call a callable member of unknown type (an activation from a registry): what they give
# back is on the device of the input they are given, as a layer's output is. A mask made
# on the CPU on the path where the caller passes none meets it there (allennlp's
# CnnEncoder, b89320cda5). Rewritten from the shape, not copied.
import torch
from torch import nn

from .registry import activation_by_name


class ConvPool(nn.Module):
    def __init__(self, dim: int, sizes=(2, 3)):
        super().__init__()
        self.sizes = sizes
        for i, size in enumerate(sizes):
            self.add_module(f"conv_{i}", nn.Conv1d(dim, 8, size))
        self.activation = activation_by_name("relu")

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor = None):
        if mask is not None:
            tokens = tokens * mask.unsqueeze(-1)
        else:
            mask = torch.ones(tokens.shape[0], tokens.shape[1]).bool()  # expect: TDL003  meets the conv output
        tokens = tokens.transpose(1, 2)
        last = mask.sum(dim=1).unsqueeze(-1)
        pooled = []
        for i, size in enumerate(self.sizes):
            conv = getattr(self, f"conv_{i}")
            out = self.activation(conv(tokens))
            steps = torch.arange(out.size(2)).unsqueeze(0)  # expect: TDL003
            masked = steps.ge(last - size + 1).unsqueeze(1).expand_as(out)
            pooled.append((out + masked * -1e4).max(dim=2)[0])
        return torch.cat(pooled, dim=1)


class ConvPoolFixed(ConvPool):
    def forward(self, tokens: torch.Tensor, mask: torch.Tensor = None):
        if mask is None:
            mask = torch.ones(tokens.shape[0], tokens.shape[1], device=tokens.device).bool()  # ok: TDL003
        tokens = tokens.transpose(1, 2)
        last = mask.sum(dim=1).unsqueeze(-1)
        pooled = []
        for i, size in enumerate(self.sizes):
            out = self.activation(getattr(self, f"conv_{i}")(tokens))
            steps = torch.arange(out.size(2), device=out.device).unsqueeze(0)  # ok: TDL003
            pooled.append((out + steps.ge(last - size + 1).unsqueeze(1) * -1e4).max(dim=2)[0])
        return torch.cat(pooled, dim=1)
