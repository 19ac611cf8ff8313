"""Padding masks for a batch of three sequences, as Tacotron 2's decoder builds them."""
import torch

from tacotron2_mask_from_lengths import get_mask_from_lengths


def run():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    lengths = torch.tensor([5, 3, 1], device=device)
    return get_mask_from_lengths(lengths)
