"""A reference formula that tests call on the device with a mask and on the host without one:
the mask one call gives never reaches the call that leaves it at its default. A call that
gives both a host tensor and a device mask still meets them."""

import pytest
import torch


def rank_formula(predictions, labels, mask=None):
    if mask is not None:
        predictions = predictions * mask
        labels = labels * mask
    return ((predictions.argsort() - labels.argsort()) ** 2).sum()


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_masked(device):
    predictions = torch.randn(10, device=device)
    labels = torch.randn(10, device=device)
    mask = torch.randint(0, 2, (10,), device=device).bool()
    assert rank_formula(predictions, labels, mask=mask) >= 0


def test_on_the_host():
    predictions = torch.randn(10)  # ok: TDL003 no mask here; the device mask is another call's
    labels = 0.5 * predictions + torch.randn(10)  # ok: TDL003 the same
    assert rank_formula(predictions, labels) >= 0


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_mixed(device):
    mask = torch.ones(10, device=device).bool()
    predictions = torch.randn(10)  # expect: TDL003 meets the device mask in rank_formula
    assert rank_formula(predictions, predictions, mask=mask) >= 0
