"""Padding masks for a batch of three sequences, with fairseq's copy of the Tacotron 2 helper."""
import torch

from fairseq_tacotron2_mask_from_lengths import get_mask_from_lengths


def run():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return get_mask_from_lengths(torch.tensor([2, 4, 3], device=device))
