"""FRESCO's conversion of an 8-bit HxWxC image into a 1xCxHxW tensor in [-1, 1]."""
import numpy as np

from diffusers_fresco_numpy2tensor import numpy2tensor


def run():
    image = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3) * 14
    return numpy2tensor(image)
