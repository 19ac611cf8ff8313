"""Separating a mixture of two sources with speechbrain's NMF, on tiny spectra."""
import torch

from speechbrain_nmf_separate_spectra import NMF_separate_spectra


def run():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    w1, w2 = torch.rand(5, 2), torch.rand(5, 2)
    mixture = torch.rand(2, 3, 5)
    return NMF_separate_spectra([w1.to(device), w2.to(device)], mixture.to(device))
