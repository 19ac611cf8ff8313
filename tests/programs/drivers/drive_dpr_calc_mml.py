"""DPR's reader loss: the marginal likelihood over answer spans, zero losses masked out."""
import torch

from dpr_calc_mml import _calc_mml


def run():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loss = torch.tensor([[0.5, 0.0, 1.5], [0.0, 0.0, 0.0], [2.0, 0.25, 0.0]], device=device)
    return _calc_mml(loss)
