"""Deliberate device mismatches inside raises-blocks; CPU tensors through modules without parameters."""

import pytest
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def test_mismatch_is_reported():
    model = nn.Linear(3, 4).to(device)
    with pytest.raises(RuntimeError):
        model(torch.randn(2, 3))  # ok: TDL003  the test provokes the error on purpose


class FeatureDropout(nn.Module):
    """The mask goes through a module without parameters and is moved before use."""

    def __init__(self, p=0.1):
        super().__init__()
        self.drop = nn.Dropout(p)

    def forward(self, x):
        mask = self.drop(torch.ones(x.size(-1)))  # ok: TDL003  Dropout has no parameters; the mask is moved next
        return x * mask.to(x.device)


class SoftLabels(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.soft = nn.Softmax(dim=-1)

    def forward(self, logits):
        prior = self.soft(torch.linspace(0.0, 1.0, self.n))  # ok: TDL003  moved before it meets the logits
        return logits.log_softmax(-1) + prior.log().to(logits.device)
