"""One step of NeMo's Flux data pipeline: the batch gains its loss mask."""
import torch

from nemo_flux_data_step import flux_data_step


def run():
    batch = {"latents": torch.ones(1, 4, 2, 2)}
    step = flux_data_step(iter([(batch, None, None)]))
    return step
