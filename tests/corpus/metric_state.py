# Metric accumulators that keep their state on the CPU until the first batch arrives, then
# follow the predictions' device; derived tensors are made on the state's own device.
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
