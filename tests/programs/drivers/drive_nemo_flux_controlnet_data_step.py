"""One step of NeMo's Flux ControlNet data pipeline: the batch gains its loss mask."""
import torch

from nemo_flux_controlnet_data_step import flux_controlnet_data_step


def run():
    batch = {"latents": torch.ones(1, 4, 2, 2)}
    return flux_controlnet_data_step(iter([batch]))
