# `.to(x.dtype)` converts the dtype and leaves the tensor where it is: a factory converted so
# still lives on the CPU when it meets the input.
import torch
import torch.nn.functional as F
from torch import Tensor


def block_mask(x: Tensor, block: int) -> Tensor:
    height, width = x.shape[-2:]
    rows, cols = torch.meshgrid(torch.arange(height), torch.arange(width), indexing="ij")  # expect: TDL003
    inside = ((rows >= block // 2) & (cols >= block // 2)).reshape(1, 1, height, width)
    inside = inside.to(x.dtype)
    noise = torch.rand_like(x)
    return F.max_pool2d(inside * noise, block, stride=1, padding=block // 2)


def scaled(x: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    weights = torch.linspace(0, 1, x.size(-1)).to(dtype)  # expect: TDL003
    return x * weights


def scaled_on_its_device(x: Tensor) -> Tensor:
    weights = torch.linspace(0, 1, x.size(-1)).to(x)  # ok: TDL003 .to(tensor) moves it to x's device too
    return x * weights


def host_weights(x: Tensor) -> Tensor:
    weights = torch.linspace(0, 1, x.size(-1)).to(x.dtype)  # ok: TDL003 meets the input only once moved
    return x * weights.to(x.device)
