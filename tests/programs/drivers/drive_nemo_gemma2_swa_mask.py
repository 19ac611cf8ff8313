"""Gemma 2's sliding-window attention mask for a short query and key sequence."""
from nemo_gemma2_swa_mask import get_swa


def run():
    return get_swa(6, 8, (2, 0))
