"""A script that sets the default device: factories land there without device=."""

import torch
from torch import nn

torch.set_default_device("cuda" if torch.cuda.is_available() else "cpu")


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        pos = torch.arange(x.size(-1))  # ok: TDL003
        return self.lin(x) + pos


model = Model(8)
x = torch.randn(2, 8)  # ok: TDL003
y = model(x) * torch.ones(2, 8)  # ok: TDL003
