"""Reshaping helpers that a training loop calls with device tensors and a sanity check calls
with a tensor it makes itself: what comes back to the check is its own tensor, wherever the
loop's went, however many helpers it passes through."""

import torch


def flatten01(arr):
    return arr.reshape((-1, *arr.shape[2:]))


def unflatten01(arr, targetshape):
    return arr.reshape((*targetshape, *arr.shape[1:]))


def flatten_unflatten_test():
    a = torch.rand(4, 3, 2)  # ok: TDL003 it meets only what the helpers give back of it
    b = flatten01(a)
    c = unflatten01(b, a.shape[:2])
    assert torch.equal(a, c)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    flatten_unflatten_test()
    obs = torch.zeros((8, 4, 3)).to(device)
    flat = flatten01(obs)
    noise = torch.rand(32, 3)  # expect: TDL003 meets the device tensor the helper gives back
    restored = unflatten01(flat + noise, obs.shape[:2])
