"""Evaluation loops: metrics gathered on the CPU, metrics kept on the device."""

import torch
import torch.nn.functional as F
from torch import nn


@torch.no_grad()
def evaluate(model, loader, device, n_bins=15):
    model.eval()
    total_loss = 0.0
    all_logits, all_targets = [], []
    for batch in loader:
        inputs, targets = batch
        inputs, targets = inputs.to(device), targets.to(device)
        logits = model(inputs)
        total_loss += F.cross_entropy(logits, targets, reduction="sum").item()
        all_logits.append(logits.cpu())
        all_targets.append(targets.cpu())
    logits = torch.cat(all_logits)
    targets = torch.cat(all_targets)
    probs = logits.softmax(dim=1)
    confidences, predictions = probs.max(dim=1)
    accuracies = predictions.eq(targets)
    bin_edges = torch.linspace(0, 1, n_bins + 1)  # ok: TDL003  everything here is on the CPU
    ece = torch.zeros(1)  # ok: TDL003
    for lo, hi in zip(bin_edges[:-1], bin_edges[1:]):
        in_bin = confidences.gt(lo) * confidences.le(hi)
        if in_bin.any():
            gap = confidences[in_bin].mean() - accuracies[in_bin].float().mean()
            ece += gap.abs() * in_bin.float().mean()
    return total_loss / len(targets), accuracies.float().mean().item(), ece.item()


@torch.no_grad()
def evaluate_on_device(model: nn.Module, loader, device, num_classes):
    model.to(device)  # ok: TDL004
    model.eval()
    confusion = torch.zeros(num_classes, num_classes, dtype=torch.long, device=device)  # ok: TDL003
    for inputs, targets in loader:
        inputs = inputs.to(device)
        targets = targets.to(device)
        preds = model(inputs).argmax(dim=1)
        idx = targets * num_classes + preds
        confusion += torch.bincount(idx, minlength=num_classes**2).view(num_classes, num_classes)
    support = confusion.sum(dim=1).float()
    weights = torch.ones(num_classes) / num_classes  # expect: TDL003  multiplied with a device tensor
    return (support * weights).sum().item()


def topk_accuracy(output, target, topk=(1, 5)):
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    return [correct[:k].reshape(-1).float().sum(0) * (100.0 / batch_size) for k in topk]


@torch.no_grad()
def extract_features(encoder: nn.Module, loader, device, dim: int, size: int):
    encoder.to(device)  # ok: TDL004
    encoder.eval()
    bank = torch.zeros(size, dim)  # ok: TDL003  slices of it are assigned, a copy across devices
    labels = torch.empty(size, dtype=torch.long)  # ok: TDL003
    start = 0
    for images, targets in loader:
        feats = F.normalize(encoder(images.to(device)), dim=1)
        bank[start : start + feats.size(0)] = feats
        labels[start : start + feats.size(0)] = targets
        start += feats.size(0)
    return bank, labels


@torch.no_grad()
def knn_predict(feature: torch.Tensor, bank: torch.Tensor, bank_labels: torch.Tensor, classes: int, k: int = 20):
    """Inputs on the caller's device: the one-hot table made on the CPU meets their index in scatter_."""
    sim = feature @ bank.t()
    weights, idx = sim.topk(k, dim=-1)
    neighbours = bank_labels[idx]
    one_hot = torch.zeros(feature.size(0) * k, classes)  # expect: TDL003
    one_hot.scatter_(1, neighbours.view(-1, 1), 1.0)
    return (one_hot.view(feature.size(0), k, classes) * weights.unsqueeze(-1)).sum(1).argmax(-1)


def distributed_mean(value: float, count: int, device):
    t = torch.tensor([value, count], dtype=torch.float64, device=device)  # ok: TDL003
    torch.distributed.all_reduce(t)
    return (t[0] / t[1]).item()
