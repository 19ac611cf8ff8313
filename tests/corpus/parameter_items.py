# An item or attribute of a parameter that the body uses as a tensor (a member only tensors
# have) is the caller's tensor, on the caller's device, as the parameter itself would be.
# Shapes from gpytorch's Hadamard likelihood (``*params``, a6ffc953d0) and PyG's SamplePoints
# (``data.pos``, 9bda1eb5bb), with hard negatives.
import numpy as np
import torch
from torch.utils.data import Dataset


class TaskNoise:
    def __init__(self, num_tasks: int):
        self.num_tasks = num_tasks

    def noise(self, base_shape, *params, **kwargs):
        task_idcs = params[0] if torch.is_tensor(params[0]) else params[0][0]
        task_idcs = task_idcs.long()
        all_tasks = torch.arange(self.num_tasks).unsqueeze(-1)  # expect: TDL003  meets task_idcs
        return torch.eq(all_tasks, task_idcs.mT)

    def noise_fixed(self, base_shape, *params, **kwargs):
        task_idcs = params[0] if torch.is_tensor(params[0]) else params[0][0]
        task_idcs = task_idcs.long()
        all_tasks = torch.arange(self.num_tasks, device=task_idcs.device).unsqueeze(-1)  # ok: TDL003
        return torch.eq(all_tasks, task_idcs.mT)

    def count(self, *params):
        sizes = params[0]
        counts = torch.zeros(self.num_tasks)  # ok: TDL003  sizes is never used as a tensor
        return counts + sizes


class SamplePoints:
    def __init__(self, num: int):
        self.num = num

    def __call__(self, data):
        pos, face = data.pos, data.face
        assert pos.size(1) == 3
        frac = torch.rand(self.num, 2)  # expect: TDL003  meets the points read off data
        vec = pos[face[1]] - pos[face[0]]
        return pos[face[0]] + frac[:, :1] * vec


class HostNumbers:
    def __call__(self, data):
        pos = data.pos
        scale = np.abs(pos).max()  # a NumPy array: no tensor-only member
        return torch.ones(3) * scale  # ok: TDL003


class PointsDataset(Dataset):
    def __init__(self, samples):
        self.samples = samples

    def __getitem__(self, index):
        points = self.samples[index]["pos"]
        noise = torch.randn(points.size(0), 3)  # ok: TDL003  data loading runs on the CPU
        return points.unsqueeze(0) + noise


class FlowScheduler:
    def __init__(self, steps: int):
        self.timesteps = torch.linspace(1000, 0, steps)  # ok: TDL003  add_noise moves timestep to the CPU first
        self.sigmas = torch.linspace(1, 0, steps)

    def add_noise(self, original_samples, noise, timestep):
        if isinstance(timestep, torch.Tensor):
            timestep = timestep.cpu()
        timestep = timestep[None]
        timestep_id = torch.argmin((self.timesteps[:, None] - timestep).abs(), dim=0)
        sigma = self.sigmas[timestep_id].to(original_samples)
        return (1 - sigma) * original_samples + sigma * noise


class AttentionReport:
    """Items of a dict the caller passes (a model's output) are the caller's tensors, on each
    path that reads them; another path that builds the name with a factory does not make it
    a helper's result (pytorch-forecasting's TFT ``interpret_output``, dc0de12cca)."""

    def __init__(self, max_length: int):
        self.max_length = max_length

    def interpret(self, out: dict):
        if isinstance(out["attention"], (list, tuple)):
            first = out["attention"][0]
            attention = torch.full((len(out["attention"]), self.max_length), float("nan"), device=first.device)  # ok: TDL003
        else:
            attention = out["attention"]
            shifts = attention.size(-1) - out["lengths"]
            index = (torch.arange(attention.size(-1))[None].expand_as(attention) - shifts[:, None]) % attention.size(-1)  # expect: TDL003
            attention = torch.gather(attention, dim=-1, index=index)
            if attention.size(-1) < self.max_length:
                pad = self.max_length - out["lengths"].max()
                attention = torch.cat([attention.new_zeros(attention.size(0), pad), attention], dim=-1)
        return attention
