# Accumulators that keep tensors on `self` between calls: made in `reset` or `__init__`, met in
# `update` with what the caller passes. On a GPU the caller's batches live on the device.
import numpy as np
import torch
from torch import Tensor


class ConfusionCounts:
    def __init__(self, num_classes: int) -> None:
        self.num_classes = num_classes
        self.reset()

    def reset(self) -> None:
        self.true_positives = torch.zeros(self.num_classes)  # expect: TDL003 meets the targets in update()
        self.support = torch.zeros(self.num_classes)  # expect: TDL003
        self.batches = 0

    def update(self, predictions: Tensor, targets: Tensor) -> None:
        hits = predictions.argmax(-1) == targets
        self.true_positives += torch.bincount(targets[hits], minlength=self.num_classes)
        self.support += torch.bincount(targets, minlength=self.num_classes)
        self.batches += 1

    def recall(self) -> Tensor:
        return self.true_positives / self.support.clamp(min=1)


class HostCounts:
    def __init__(self, num_classes: int) -> None:
        self.num_classes = num_classes
        self.counts = torch.zeros(num_classes)  # ok: TDL003 the labels are copied to the host first

    def update(self, labels: Tensor) -> None:
        self.counts += torch.bincount(labels.cpu(), minlength=self.num_classes)


class FollowingCounts:
    def __init__(self, num_classes: int) -> None:
        self.num_classes = num_classes
        self.counts = torch.zeros(num_classes)  # ok: TDL003 moved to the labels' device before they meet

    def update(self, labels: Tensor) -> None:
        self.counts = self.counts.to(labels.device)
        self.counts += torch.bincount(labels, minlength=self.num_classes)


class NumpyHistogram:
    def __init__(self, bins: int) -> None:
        self.hist = torch.zeros(bins)  # ok: TDL003 the values are read by NumPy: on the host by contract

    def update(self, values: Tensor) -> None:
        counts, _ = np.histogram(values, bins=self.hist.numel())
        self.hist += values[: self.hist.numel()]


class RunningTotal:
    def __init__(self) -> None:
        self.total = torch.tensor(0.0)  # ok: TDL003 a 0-dim CPU tensor may meet any device

    def update(self, values: Tensor) -> None:
        self.total = self.total + values.sum()


class MarginTerms:
    def __init__(self, margin: int) -> None:
        self.powers = torch.tensor([margin - 2 * n for n in range(margin // 2 + 1)])  # ok: TDL003 moved by name below

    def expand(self, cosine: Tensor) -> Tensor:
        for name in ["powers"]:
            setattr(self, name, getattr(self, name).to(cosine.device))
        return cosine.unsqueeze(1) ** self.powers
