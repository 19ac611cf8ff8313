# A function that tests whether its argument is a tensor takes tensors on the caller's device in
# that branch: NumPy reading the argument in the other branch says nothing of the tensor branch
# (whisper's pad_or_trim, f680570016). Hard negatives: NumPy reads it with no test, or only
# what the other branch holds.
import numpy as np
import torch
import torch.nn.functional as F


def pad_or_trim(array, length: int = 480000, *, axis: int = -1):
    if torch.is_tensor(array):
        if array.shape[axis] > length:
            array = array.index_select(dim=axis, index=torch.arange(length))  # expect: TDL003
        if array.shape[axis] < length:
            array = F.pad(array, [0, length - array.shape[axis]])
    else:
        if array.shape[axis] > length:
            array = array.take(indices=range(length), axis=axis)
        if array.shape[axis] < length:
            array = np.pad(array, [(0, length - array.shape[axis])])
    return array


def pad_or_trim_fixed(array, length: int = 480000, *, axis: int = -1):
    if torch.is_tensor(array):
        if array.shape[axis] > length:
            array = array.index_select(dim=axis, index=torch.arange(length, device=array.device))  # ok: TDL003
    else:
        array = np.pad(array, [(0, 1)])
    return array


def trim_host(array, length: int):
    kept = np.asarray(array)[:length]
    index = torch.arange(length)  # ok: TDL003  NumPy reads the argument: a host array
    return torch.from_numpy(kept).index_select(0, index)
