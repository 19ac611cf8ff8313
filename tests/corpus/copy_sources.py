# ``dst.copy_(src)`` copies across devices (CPU to CUDA and back; on the installed torch,
# ``torch.empty(3, device="meta").copy_(torch.zeros(3))`` runs) and returns ``dst``: its source
# meets nothing. Shape from a held-out read (a vision transformer's sine-cosine positional
# embedding filled from NumPy into a Parameter); the source also met in an operation stays a finding.
import numpy as np
import torch
from torch.nn import Parameter


def init_embedding(pos_embedding: Parameter) -> None:
    _, n, d = pos_embedding.shape
    table = np.zeros((n, d))
    pos_embedding.data.copy_(torch.from_numpy(table).float().unsqueeze(0))  # ok: TDL003
    pos_embedding.requires_grad = False


def refill(x: torch.Tensor):
    buffer = torch.empty(x.shape, device=x.device)
    buffer.copy_(torch.zeros(x.shape))  # ok: TDL003
    return buffer + x


def overwrite(x: torch.Tensor):
    y = x.clone()
    y[:] = torch.ones(x.shape)  # ok: TDL003  basic slicing copies too
    return y


def shifted_copy(x: torch.Tensor):
    table = np.zeros(3)
    return x.data.copy_(x + torch.from_numpy(table))  # expect: TDL003  the sum meets x first
