"""Loading EfficientNet weights from a checkpoint file that was saved on a GPU."""
import os
import tempfile

import torch
from gpu_checkpoint import save_as_on_gpu
from torch import nn

from efficientnet_load_pretrained import load_pretrained_weights


def run():
    torch.manual_seed(0)
    trained = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "efficientnet-b0.pth")
        save_as_on_gpu(trained.state_dict(), path)
        load_pretrained_weights(model, "efficientnet-b0", weights_path=path, verbose=False)
    return model(torch.ones(2, 4))
