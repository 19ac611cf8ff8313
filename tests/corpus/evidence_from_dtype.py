# A parameter whose dtype or device a torch call reads is a tensor, and a number plus a tensor is
# that tensor: EfficientNet-PyTorch's drop_connect (939d4abdee), with hard negatives.
import numpy as np
import torch


def drop_connect(inputs, p, training):
    if not training:
        return inputs
    batch_size = inputs.shape[0]
    keep_prob = 1 - p
    random_tensor = keep_prob
    random_tensor += torch.rand([batch_size, 1, 1, 1], dtype=inputs.dtype)  # expect: TDL003  floor of it scales the caller's inputs
    binary_tensor = torch.floor(random_tensor)
    return inputs / keep_prob * binary_tensor


def drop_connect_fixed(inputs, p):
    keep_prob = 1 - p
    random_tensor = keep_prob
    random_tensor += torch.rand([inputs.shape[0], 1, 1, 1], dtype=inputs.dtype, device=inputs.device)  # ok: TDL003
    return inputs / keep_prob * torch.floor(random_tensor)


def jitter(values, scale: float):
    noise = torch.randn(len(values))  # ok: TDL003  nothing shows values is a tensor (a list, an array)
    return torch.as_tensor(values) + noise * scale


def standardise(array, eps: float = 1e-6):
    table = torch.from_numpy(np.asarray(array))
    offsets = torch.ones(table.shape[-1], dtype=table.dtype)  # ok: TDL003  the table is made here, on the CPU, from NumPy
    return (table - offsets) / (table.std() + eps)


def count_with(labels, n: int):
    counts = 0
    counts += torch.zeros(n, dtype=labels.dtype)  # ok: TDL003  never meets labels
    return counts.sum()


def fetch_rows(indices, tensor, feature_shape, device, pin_memory):
    # dgl storages/pytorch_tensor.py: a host buffer, pinned so that the caller copies it to the GPU.
    result = torch.empty(indices.shape[0], *feature_shape, dtype=tensor.dtype, pin_memory=pin_memory)  # ok: TDL003
    torch.index_select(tensor, 0, indices, out=result)
    return result


def staged(batch: torch.Tensor):
    buffer = torch.zeros(batch.shape).pin_memory()  # ok: TDL003  pinned: on the CPU on purpose
    buffer.copy_(batch)
    return buffer


def unpinned(indices, tensor, feature_shape, device):
    result = torch.empty(indices.shape[0], *feature_shape, dtype=tensor.dtype, pin_memory=False)  # expect: TDL003
    torch.index_select(tensor, 0, indices, out=result)
    return result
