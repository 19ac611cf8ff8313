# Metric accumulators that keep their state on the CPU until the first batch arrives, then
# follow the predictions' device; derived tensors are made on the state's own device.
from typing import Union

import torch


class AssociationGap:
    def __init__(self, num_groups: int, num_classes: int) -> None:
        self._num_groups = num_groups
        self._num_classes = num_classes
        self._joint = torch.zeros(num_groups, num_classes)  # ok: TDL003
        self._class_counts = torch.zeros(num_classes)  # ok: TDL003

    def __call__(self, predicted: torch.Tensor, groups: torch.Tensor) -> None:
        device = predicted.device
        self._joint = self._joint.to(device)
        self._class_counts = self._class_counts.to(device)
        self._class_counts += torch.bincount(predicted.flatten(), minlength=self._num_classes)
        for group in range(self._num_groups):
            mask = groups == group
            self._joint[group] += torch.bincount(predicted[mask], minlength=self._num_classes)

    def reset(self) -> None:
        self._joint = torch.zeros(self._num_groups, self._num_classes)  # ok: TDL003
        self._class_counts = torch.zeros(self._num_classes)  # ok: TDL003
        self._total = torch.tensor(0)  # ok: TDL003

    def probabilities(self) -> torch.Tensor:
        device = self._class_counts.device
        prob = torch.zeros(self._num_classes).to(device)  # ok: TDL003 same device as the state
        torch.div(self._class_counts, self._class_counts.sum(), out=prob)
        joint = torch.zeros(self._num_groups, self._num_classes).to(device)  # ok: TDL003
        torch.div(self._joint, self._class_counts.sum(), out=joint)
        return joint / prob


class RunningMean:
    def __init__(self) -> None:
        self.total = torch.zeros(1)  # ok: TDL003
        self.count = 0

    def update(self, values: torch.Tensor) -> None:
        self.total = self.total.to(values.device) + values.sum()
        self.count += values.numel()

    def compute(self) -> torch.Tensor:
        scale = torch.ones(1, device=self.total.device)  # ok: TDL003
        return self.total * scale / max(self.count, 1)



class EarlyStopping:
    """State kept on the CPU and moved to the metric's device at each use (``.to(val.device)``),
    with the metric a CPU tensor on one path (a float given) and the caller's on the other
    (torchtnt's EarlyStopChecker): what is moved there meets ``val`` beside it, on each path."""

    def __init__(self, minimize: bool = True):
        self.minimize = minimize
        self.reset()

    def reset(self) -> None:
        inf = torch.tensor([float("inf")])  # ok: TDL003
        self.best = inf if self.minimize else -inf

    def check(self, val: Union[torch.Tensor, float]) -> bool:
        if isinstance(val, float):
            val = torch.tensor([val])  # ok: TDL003
        if val.numel() != 1:
            raise ValueError("expected one value")
        if torch.lt(val, self.best.to(val.device)):
            print(self._improvement(val))
            return False
        return True

    def _improvement(self, val: torch.Tensor) -> torch.Tensor:
        return torch.abs(self.best.to(val.device) - val)
