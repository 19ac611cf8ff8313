# An attribute set to ``None`` in ``__init__`` and to a tensor in another method holds a tensor
# (a plain attribute, no buffer, so ``self.to(device)`` does not move it either): its bare
# ``.to(device)`` does nothing. Shape from a held-out read (a contrastive loss's alias-method
# sampler tables). An attribute given a module or an unknown object after its ``None`` stays
# a module.
import torch
from torch import nn


class ContrastLoss(nn.Module):
    def __init__(self, k, cfg):
        super().__init__()
        self.probs, self.alias = None, None
        self.head = None
        self.encoder = None
        self.init_tables(torch.ones(k))
        self.build(cfg)

    def init_tables(self, probs):
        k = len(probs)
        self.probs = torch.zeros(k)  # ok: TDL003
        self.alias = torch.zeros(k, dtype=torch.int64)  # ok: TDL003

    def build(self, cfg):
        self.head = nn.Linear(cfg.dim, cfg.dim)
        self.encoder = make_encoder(cfg)

    def forward(self, x):
        device = x.device
        if device != self.probs.device:
            self.probs.to(device)  # expect: TDL004
            self.alias.to(device)  # expect: TDL004
            self.head.to(device)  # ok: TDL004
            self.encoder.to(device)  # ok: TDL004
            self.to(device)  # ok: TDL004
        return self.head(x)

    def reset(self):
        self.probs = None


def make_encoder(cfg):
    return cfg.encoder
