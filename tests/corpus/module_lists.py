# Modules kept in a container and run in a loop: ``for block in self.blocks:`` gives modules,
# whether the container is an ``nn.ModuleList``, an ``nn.Sequential`` or a plain list built
# from module classes (darts' N-BEATS, cc70f34ae4: ``[_Block(...) for _ in range(n)]``,
# ``[block] * n`` to share weights, ``[trend, seasonality]``). What they give back is on the
# device of their input; an accumulator made without a device meets it there.
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.linear = nn.Linear(width, width)

    def forward(self, x):
        return self.linear(x), x


class Stack(nn.Module):
    def __init__(self, width: int, depth: int, shared: bool = False):
        super().__init__()
        self.width = width
        if shared:
            block = Block(width)
            self.blocks_list = [block] * depth
        else:
            self.blocks_list = [Block(width) for _ in range(depth)]
        self.blocks = nn.ModuleList(self.blocks_list)

    def forward(self, x):
        forecast = torch.zeros(x.shape[0], self.width)  # expect: TDL003
        for block in self.blocks_list:
            y_hat, backcast = block(x)
            forecast = forecast + y_hat
            x = x - backcast
        return x, forecast


class TwoStacks(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.width = width
        trend, season = Stack(width, 2), Stack(width, 2, shared=True)
        self.stacks_list = [trend, season]
        self.stacks = nn.ModuleList(self.stacks_list)

    def forward(self, x):
        total = torch.zeros(x.shape[0], self.width)  # expect: TDL003
        for stack in self.stacks_list:
            x, forecast = stack(x)
            total = total + forecast
        return total


class Layers(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.width = width
        self.layers = nn.Sequential(nn.Linear(width, width), nn.ReLU())

    def forward(self, x):
        outputs = [torch.zeros(x.shape[0], self.width, device=x.device)]  # ok: TDL003
        for layer in self.layers:
            x = layer(x)
            outputs.append(x)
        return torch.stack(outputs)
