"""A host-only sequence model with a JSON report; nothing here names a GPU."""

import json
import time

import torch
from torch import nn


class SequenceScorer(nn.Module):
    def __init__(self, vocab=100, dim=16, max_len=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.head = nn.Linear(dim, 1)

    def forward(self, ids):
        positions = torch.arange(ids.size(1))  # ok: TDL003  nothing here ever leaves the host
        h = self.tok(ids) + self.pos(positions)
        return self.head(h).squeeze(-1)


scorer = SequenceScorer()
batch = torch.randint(0, 100, (8, 20))  # ok: TDL003
started = time.time()
scores = scorer(batch)
weights = torch.linspace(1.0, 0.5, 20)  # ok: TDL003
report = {"score": float((scores * weights).sum()), "seconds": time.time() - started}
print(json.dumps(report))
