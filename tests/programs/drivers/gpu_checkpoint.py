"""Write a checkpoint as a GPU machine writes it, on any machine.

torch.save records where each storage lived; a checkpoint saved on a GPU says ``cuda:0``, and
``torch.load`` without ``map_location`` then needs CUDA. A location tagger registered for the
duration of the save (and removed after) makes this machine write that tag."""
import torch
from torch.serialization import _package_registry, register_package


def _gpu_tag(storage):
    return "cuda:0"


def _not_ours(storage, location):
    return None


def save_as_on_gpu(state, path):
    register_package(-1, _gpu_tag, _not_ours)
    try:
        torch.save(state, path)
    finally:
        _package_registry[:] = [entry for entry in _package_registry if entry[1] is not _gpu_tag]
