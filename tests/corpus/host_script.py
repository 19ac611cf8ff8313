# A script that names no device and runs its own helpers on host tensors: the file pins
# them to the CPU, so the device-agnostic contract does not apply.
import torch


def normalise(features):
    scale = torch.ones(features.size(1))  # ok: TDL003  this file runs it on the host only
    return features.view(-1, features.size(1)) / scale


def offsets(batch):
    row, col = batch
    return row + torch.arange(row.size(0))  # ok: TDL003  called below with host tensors


print(normalise(torch.randn(4, 3)))
print(offsets(torch.randint(0, 4, (2, 5))))
