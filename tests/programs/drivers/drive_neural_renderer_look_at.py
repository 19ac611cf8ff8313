"""The "look at" camera transform of a triangle, with the target and up vectors given as tensors."""
import torch

from neural_renderer_look_at import look_at


def run():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    vertices = torch.tensor([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.5]]], device=device)
    eye = torch.tensor([0.0, 0.0, -2.5])
    return look_at(vertices, eye, at=torch.tensor([0.0, 0.0, 0.0]), up=torch.tensor([0.0, 1.0, 0.0]))
