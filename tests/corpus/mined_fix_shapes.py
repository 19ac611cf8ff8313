# Shapes that real device-fix commits repaired (or that real code gets right), rewritten for
# this corpus: box utilities, label bookkeeping in metric code, helper-moved accumulators.
import torch

from .common import move_to_device
from .losses import MarginLoss


def boxes_from_masks(masks):
    if masks.numel() == 0:
        return torch.zeros((0, 4), device=masks.device)
    h, w = masks.shape[-2:]
    ys = torch.arange(0, h, dtype=torch.float)  # expect: TDL003  meshgrid of CPU ranges times the caller's masks
    xs = torch.arange(0, w, dtype=torch.float)  # expect: TDL003
    ys, xs = torch.meshgrid(ys, xs, indexing="ij")
    x_mask = masks * xs.unsqueeze(0)
    y_mask = masks * ys.unsqueeze(0)
    return torch.stack([x_mask.flatten(1).max(-1)[0], y_mask.flatten(1).max(-1)[0]], 1)


def boxes_from_masks_fixed(masks):
    h, w = masks.shape[-2:]
    ys = torch.arange(0, h, dtype=torch.float, device=masks.device)  # ok: TDL003
    xs = torch.arange(0, w, dtype=torch.float, device=masks.device)  # ok: TDL003
    ys, xs = torch.meshgrid(ys, xs, indexing="ij")
    return masks * xs.unsqueeze(0) + masks * ys.unsqueeze(0)


def relevance_rows(gt_labels, label: int, width: int):
    mask = torch.zeros((gt_labels.size(0), width), dtype=torch.bool)  # expect: TDL003  indexed by rows found on the caller's device
    rows = torch.where(gt_labels == label)[0]
    mask[rows] = True
    return mask


def accumulated_loss(embeddings):
    total = torch.zeros(1)  # ok: TDL003  moved by a helper of the project before use
    total = move_to_device(total, embeddings)
    return total + embeddings.sum()


def library_loss(embeddings, device):
    loss_fn = MarginLoss(margin=0.2)
    embeddings = embeddings.to(device)
    labels = torch.randint(0, 10, (embeddings.size(0),))  # ok: TDL003  the library's loss moves labels to the embeddings
    return loss_fn(embeddings, labels)


def one_hot_rows(index, classes: int):
    table = torch.eye(classes)  # expect: TDL003  a CPU table indexed by the caller's index
    return table[index.view(-1)]
