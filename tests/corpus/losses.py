"""Loss helpers: label smoothing, focal, contrastive, center, margin losses."""

import torch
import torch.nn.functional as F
from torch import nn


class LabelSmoothingLoss(nn.Module):
    def __init__(self, smoothing=0.1):
        super().__init__()
        self.smoothing = smoothing
        self.confidence = 1.0 - smoothing

    def forward(self, logits, target):
        log_probs = F.log_softmax(logits, dim=-1)
        n_classes = logits.size(-1)
        true_dist = torch.zeros_like(log_probs)  # ok: TDL003
        true_dist.fill_(self.smoothing / (n_classes - 1))
        true_dist.scatter_(1, target.unsqueeze(1), self.confidence)
        return torch.mean(torch.sum(-true_dist * log_probs, dim=-1))


class LabelSmoothingLossCPU(nn.Module):
    def __init__(self, smoothing=0.1):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits, target):
        log_probs = F.log_softmax(logits, dim=-1)
        n_classes = logits.size(-1)
        uniform = torch.full((logits.size(0), n_classes), self.smoothing / n_classes)  # expect: TDL003  multiplied with device log-probs
        smooth_loss = -(uniform * log_probs).sum(dim=-1)
        nll = F.nll_loss(log_probs, target, reduction="none")
        return ((1.0 - self.smoothing) * nll + smooth_loss).mean()


class FocalLoss(nn.Module):
    def __init__(self, alpha=0.25, gamma=2.0):
        super().__init__()
        self.alpha = alpha
        self.gamma = gamma

    def forward(self, logits, targets):
        p = torch.sigmoid(logits)
        ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
        p_t = p * targets + (1 - p) * (1 - targets)
        gamma = torch.tensor(self.gamma)  # ok: TDL003  0-dim
        alpha_t = self.alpha * targets + (1 - self.alpha) * (1 - targets)
        return (alpha_t * ce * (1 - p_t) ** gamma).mean()


class BalancedFocalLoss(nn.Module):
    def __init__(self, alpha=0.25, gamma=2.0):
        super().__init__()
        self.alpha = alpha
        self.gamma = gamma

    def forward(self, logits, targets):
        ce = F.cross_entropy(logits, targets, reduction="none")
        pt = torch.exp(-ce)
        alpha_t = torch.tensor([self.alpha, 1 - self.alpha])[targets]  # expect: TDL003  a CPU table indexed by device targets
        return (alpha_t * (1 - pt) ** self.gamma * ce).mean()


class NTXentLoss(nn.Module):
    def __init__(self, temperature=0.5):
        super().__init__()
        self.temperature = temperature

    def forward(self, z_i, z_j):
        batch_size = z_i.size(0)
        z = torch.cat([z_i, z_j], dim=0)
        sim = F.cosine_similarity(z.unsqueeze(1), z.unsqueeze(0), dim=2) / self.temperature
        mask = torch.eye(2 * batch_size, dtype=torch.bool)  # expect: TDL003
        sim = sim.masked_fill(mask, -9e15)
        targets = torch.arange(2 * batch_size)  # expect: TDL003
        targets = (targets + batch_size) % (2 * batch_size)
        return F.cross_entropy(sim, targets)


class NTXentLossOnDevice(nn.Module):
    def __init__(self, temperature=0.5):
        super().__init__()
        self.temperature = temperature

    def forward(self, z_i, z_j):
        n = z_i.size(0)
        z = F.normalize(torch.cat([z_i, z_j]), dim=1)
        sim = z @ z.t() / self.temperature
        sim.fill_diagonal_(-9e15)
        targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)  # ok: TDL003
        return F.cross_entropy(sim, targets)


def supcon_mask(labels: torch.Tensor) -> torch.Tensor:
    """Labels of unknown place: nothing for TDL003, but GPU labels meet a CPU eye (TDL013)."""
    eye = torch.eye(labels.size(0), dtype=torch.bool)  # expect: TDL003
    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    return same & ~eye


class CenterLoss(nn.Module):
    def __init__(self, num_classes=10, feat_dim=2):
        super().__init__()
        self.num_classes = num_classes
        self.centers = nn.Parameter(torch.randn(num_classes, feat_dim))  # ok: TDL003

    def forward(self, x, labels):
        batch_size = x.size(0)
        distmat = torch.cdist(x, self.centers).pow(2)
        classes = torch.arange(self.num_classes).long()  # expect: TDL003  compared with device labels
        mask = labels.unsqueeze(1).expand(batch_size, self.num_classes).eq(classes.expand(batch_size, self.num_classes))
        dist = distmat * mask.float()
        return dist.clamp(min=1e-12, max=1e12).sum() / batch_size


class TripletHardLoss(nn.Module):
    def __init__(self, margin=0.3):
        super().__init__()
        self.margin = margin

    def forward(self, embeddings, labels):
        n = embeddings.size(0)
        dist = torch.cdist(embeddings, embeddings)
        same = labels.unsqueeze(0) == labels.unsqueeze(1)
        eye = torch.eye(n, dtype=torch.bool)  # expect: TDL003  masks device distances
        hardest_pos = dist.masked_fill(~same | eye, 0.0).max(dim=1).values
        hardest_neg = dist.masked_fill(same, float("inf")).min(dim=1).values
        margin = torch.tensor(self.margin)  # ok: TDL003  0-dim
        return F.relu(hardest_pos - hardest_neg + margin).mean()


class ArcMarginProduct(nn.Module):
    def __init__(self, in_features, out_features, s=30.0, m=0.5):
        super().__init__()
        self.s, self.m = s, m
        self.weight = nn.Parameter(torch.empty(out_features, in_features))  # ok: TDL003
        nn.init.xavier_uniform_(self.weight)

    def forward(self, x, label):
        cosine = F.linear(F.normalize(x), F.normalize(self.weight))
        sine = torch.sqrt((1.0 - cosine.pow(2)).clamp(0, 1))
        phi = cosine * 0.8776 - sine * 0.4794
        one_hot = torch.zeros(cosine.size())  # expect: TDL003  mixed with device logits
        one_hot.scatter_(1, label.view(-1, 1).long(), 1)
        return ((one_hot * phi) + ((1.0 - one_hot) * cosine)) * self.s


class DiceLoss(nn.Module):
    def forward(self, probs, target):
        dims = tuple(range(1, probs.dim()))
        smooth = torch.tensor(1.0)  # ok: TDL003  0-dim
        inter = (probs * target).sum(dims)
        union = probs.sum(dims) + target.sum(dims)
        return (1 - (2 * inter + smooth) / (union + smooth)).mean()


class WeightedBCE(nn.Module):
    def __init__(self, pos_weight: float):
        super().__init__()
        self.register_buffer("pos_weight", torch.tensor([pos_weight]))  # ok: TDL003

    def forward(self, logits, target):
        return F.binary_cross_entropy_with_logits(logits, target, pos_weight=self.pos_weight)


class ReciprocalRankLoss(nn.Module):
    """Only a 0-dim normaliser leaves the CPU here."""

    def __init__(self, k: int = 10):
        super().__init__()
        self.k = k

    def forward(self, scores, relevance):
        k = min(self.k, scores.size(-1))
        normaliser = (1.0 / torch.arange(1, k + 1, dtype=torch.float32)).sum()  # ok: TDL003  reduced to 0-dim
        top = scores.softmax(dim=-1).topk(k, dim=-1)
        gains = relevance.gather(-1, top.indices).float() * top.values
        return -(gains.sum(-1) / normaliser).mean() + 0.01 * scores.pow(2).mean() * normaliser
