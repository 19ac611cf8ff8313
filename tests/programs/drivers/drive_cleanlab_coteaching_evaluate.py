"""Co-teaching's evaluation of two small classifiers over two batches of 2x2 images."""
import torch
from torch import nn

from cleanlab_coteaching_evaluate import evaluate


def run():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model1 = nn.Sequential(nn.Flatten(), nn.Linear(4, 3)).to(device)
    model2 = nn.Sequential(nn.Flatten(), nn.Linear(4, 3)).to(device)
    loader = [(torch.rand(4, 1, 2, 2), torch.tensor([0, 1, 2, 1])), (torch.rand(3, 1, 2, 2), torch.tensor([2, 0, 1]))]
    return list(evaluate(loader, model1, model2))
