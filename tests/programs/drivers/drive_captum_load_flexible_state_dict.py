"""Captum's influence helpers load a model trained elsewhere: here a checkpoint saved on a GPU
with its learning rate, and one saved from a DataParallel model (keys prefixed ``module.``)."""
import os
import tempfile

import torch
from gpu_checkpoint import save_as_on_gpu
from torch import nn

from captum_load_flexible_state_dict import _load_flexible_state_dict


def run():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    trained = nn.Linear(3, 2)
    model, parallel = nn.Linear(3, 2).to(device), nn.Linear(3, 2).to(device)
    with tempfile.TemporaryDirectory() as folder:
        plain, wrapped = os.path.join(folder, "plain.pt"), os.path.join(folder, "wrapped.pt")
        save_as_on_gpu({**trained.state_dict(), "learning_rate": 0.25}, plain)
        save_as_on_gpu({f"module.{k}": v for k, v in trained.state_dict().items()}, wrapped)
        model.load_state_dict = _strict_false(model.load_state_dict)  # the saved dict carries the rate too
        rate = _load_flexible_state_dict(model, plain)
        _load_flexible_state_dict(parallel, wrapped)
    x = torch.ones(1, 3, device=device)
    return [rate, model(x), parallel(x)]


def _strict_false(load):
    return lambda state: load({k: v for k, v in state.items() if k != "learning_rate"})
