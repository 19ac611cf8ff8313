"""ASP's 1-d reshape of a 3x6 weight into groups of 4: the width is padded with zeros to 8."""
import torch

from apex_reshape_1d import reshape_1d


def run():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    weight = torch.randn(3, 6).to(device)
    groups, shape = reshape_1d(weight, 4)
    return [groups, tuple(shape)]
