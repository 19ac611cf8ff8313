# Tensors computed from the caller's tensors by torch functions and methods the analysis has no
# table entry for (torch.acos, torch.bincount, .bincount(), .logsumexp()): still tensors, still
# on the caller's device. And full reductions written as functions, which give 0-dim scalars.
import torch


def angular_margin(cosines, margin: float):
    angles = torch.acos(cosines.clamp(-1 + 1e-7, 1 - 1e-7))
    offsets = torch.full((cosines.size(0), 1), margin)  # expect: TDL003  meets angles computed from the caller's cosines
    return torch.cos(angles + offsets)


def class_histogram(labels, num_classes: int):
    counts = labels.view(-1).bincount(minlength=num_classes)
    smoothing = torch.ones(num_classes)  # expect: TDL003  meets counts of the caller's labels
    return counts + smoothing


def normalised_scores(scores):
    total = torch.sum(torch.ones(scores.size(1)))  # ok: TDL003  a full reduction: a 0-dim scalar meets any device
    return scores.logsumexp(-1) / total


def weighted_rows(rows, weights=None):
    if weights is None:
        weights = torch.ones(rows.size(0))  # expect: TDL003  reaches torch.einsum with the caller's rows
    return torch.einsum("i,ij->ij", weights, rows)


def add_jitter(X: torch.Tensor, jitter: float):
    eye = torch.eye(X.size(-1)).expand(X.shape)  # expect: TDL003  meets X, which the loop rebinds from itself
    for i in range(3):
        X = X + jitter * (10**i) * eye
    return X
