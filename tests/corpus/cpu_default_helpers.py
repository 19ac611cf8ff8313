"""Sampling helpers that place what they return with a device parameter defaulting to the
CPU: a call that leaves it out gets CPU tensors, and the functions it hands them to compute
on the CPU."""

import math

import torch


def uniform_sample(size, low, high, device="cpu"):
    return torch.empty(size, device=device).uniform_(low, high)


def normal_sample(size, std=1.0, device=None):
    return torch.randn(size, device=device) * std


def category_sample(size, categories, device="cpu"):
    category = torch.tensor(categories, device=device)
    sample = torch.randint(high=len(categories), size=(size,), device=device)
    return category[sample]


def flip_mat(axis, flip):
    eye = torch.eye(4).unsqueeze(0)  # ok: TDL003 flip comes from category_sample without a device
    axis = torch.tensor(axis + (0,))
    return eye - 2 * torch.outer(axis, axis) * flip.view(-1, 1, 1)


def rotate_mat(theta):
    eye = torch.eye(3).unsqueeze(0)  # ok: TDL003 theta comes from uniform_sample without a device
    return torch.cos(theta).view(-1, 1, 1) * eye


def shift_mat(amount):
    eye = torch.eye(3).unsqueeze(0)  # ok: TDL003 amount comes from normal_sample without a device
    return eye + amount.view(-1, 1, 1)


def sample_transform(size):
    angle = uniform_sample(size, -math.pi, math.pi)
    shift = normal_sample(size, std=0.2)
    flip = category_sample(size, (0, 1))
    return rotate_mat(angle) @ shift_mat(shift) @ flip_mat((1, 1, 1), flip)[:, :3, :3]


def scale_mat(factor):
    eye = torch.eye(3).unsqueeze(0)  # expect: TDL003 one call gives a device tensor
    return eye * factor.view(-1, 1, 1)


def sample_scale(size, device):
    return scale_mat(uniform_sample(size, 0.5, 2.0, device=device))
