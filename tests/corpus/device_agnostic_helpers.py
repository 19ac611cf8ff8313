# Helpers that run on whatever device their inputs are on: graph utilities, metrics,
# augmentations, decoding. Nothing in the file says where the inputs live (TDL003 stays
# silent); TDL013 (preview) reports factories that meet the function's own tensor arguments.
import numpy as np
import torch
from torch.nn.utils.rnn import pack_padded_sequence

from .utils import buffered_arange  # a helper of another file: its contract is unknown here


def subgraph_relabel(subset: torch.Tensor, edge_index: torch.Tensor, num_nodes: int):
    mapping = torch.full((num_nodes,), -1, dtype=torch.long, device=edge_index.device)
    mapping[subset] = torch.arange(subset.size(0))  # expect: TDL003  into mapping, made on an argument's device
    return mapping[edge_index]


def subgraph_relabel_fixed(subset: torch.Tensor, edge_index: torch.Tensor, num_nodes: int):
    mapping = torch.full((num_nodes,), -1, dtype=torch.long, device=edge_index.device)
    mapping[subset] = torch.arange(subset.size(0), device=subset.device)  # ok: TDL003
    return mapping[edge_index]


def masked_mean(values: torch.Tensor, mask=None):
    if mask is None:
        mask = torch.ones(values.shape[:-1])  # expect: TDL003
    return (values * mask.unsqueeze(-1)).sum(0) / mask.sum()


def add_white_noise(waveform: torch.Tensor, snr_db: float):
    noise = torch.randn(waveform.shape)  # expect: TDL003
    return waveform + noise * waveform.std() / (10 ** (snr_db / 20))


def beam_offsets(scores: torch.Tensor, beam_size: int):
    batch_size = scores.size(0) // beam_size
    offsets = torch.arange(batch_size) * beam_size  # expect: TDL003
    return scores.view(batch_size, beam_size, -1) + offsets.view(-1, 1, 1)


def class_weights_from_counts(logits: torch.Tensor, counts):
    weights = torch.from_numpy(1.0 / np.asarray(counts, dtype=np.float32))  # expect: TDL003
    return logits * weights


def negatives(features: torch.Tensor, num_negatives: int):
    """The offsets come from a helper of another file, which keeps them on the CPU."""
    offsets = buffered_arange(features.size(0)).unsqueeze(-1).expand(-1, num_negatives).flatten()
    draws = torch.randint(0, features.size(0) - 1, (offsets.numel(),))  # ok: TDL003  # expect: TDL013  meets offsets from a helper of another file, not an argument
    draws[draws >= offsets] += 1
    return features[draws]


def rows(features: torch.Tensor, count: int):
    return features[torch.arange(count)]  # ok: TDL003  a CPU index may index a device tensor


def scaled(features: torch.Tensor):
    return features * torch.tensor(0.5)  # ok: TDL003  0-dim


def like(features: torch.Tensor):
    return features + torch.zeros_like(features)  # ok: TDL003


def moved(features: torch.Tensor):
    return features + torch.ones(features.shape[-1]).to(features.device)  # ok: TDL003


def own_cpu_copy(features: torch.Tensor):
    features = features.cpu()
    return features + torch.ones(features.shape[-1])  # ok: TDL003  both on the CPU


def pack(embedded: torch.Tensor, lengths):
    lengths = torch.as_tensor(lengths)  # ok: TDL003  lengths must be on the CPU
    return pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)


def accumulate(total, batch: torch.Tensor, device):
    total = torch.zeros(batch.shape[-1]) if total is None else total  # ok: TDL003  meets nothing here
    return total.to(device) + batch.sum(0)


def positions_for(tokens: torch.Tensor):
    positions = torch.arange(tokens.size(1))  # expect: TDL003
    return positions.unsqueeze(0).expand_as(tokens) + tokens * 0


def causal_scores(scores: torch.Tensor):
    n = scores.size(-1)
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)  # expect: TDL003
    return scores.masked_fill(future, float("-inf"))


def pairwise_margin(anchor: torch.Tensor, positive: torch.Tensor, margin: float = 1.0):
    distance = (anchor - positive).pow(2).sum(-1)
    return torch.maximum(distance - margin, torch.zeros(distance.shape))  # expect: TDL003


def one_hot_targets(labels: torch.Tensor, num_classes: int):
    targets = torch.zeros(labels.size(0), num_classes)  # expect: TDL003  meets labels in scatter_, a method call
    return targets.scatter_(1, labels.unsqueeze(1), 1.0)


def smooth_labels(labels: torch.Tensor, num_classes: int, eps: float = 0.1):
    targets = torch.zeros(labels.size(0), num_classes, device=labels.device)  # ok: TDL003
    return targets.scatter_(1, labels.unsqueeze(1), 1.0) * (1 - eps) + eps / num_classes


def to_numpy_boxes(boxes: torch.Tensor):
    boxes = boxes.detach().cpu()
    scale = torch.tensor([640.0, 480.0, 640.0, 480.0])  # ok: TDL003  boxes were brought to the CPU
    return (boxes * scale).numpy()


def cumulative_lengths(lengths: torch.Tensor):
    starts = torch.zeros(lengths.numel() + 1, dtype=torch.long)  # ok: TDL003  filled by slicing, which copies
    starts[1:] = lengths.cumsum(0)
    return starts


def pad_to(sequence: torch.Tensor, length: int):
    padding = sequence.new_zeros(length - sequence.size(0), *sequence.shape[1:])  # ok: TDL003
    return torch.cat([sequence, padding])


def gaussian_kernel(size: int, sigma: float, device=None):
    coords = torch.arange(size, dtype=torch.float32) - size // 2  # ok: TDL003  meets no tensor argument
    kernel = torch.exp(-(coords**2) / (2 * sigma**2))
    return (kernel / kernel.sum()).to(device)


def interpolate_steps(start: torch.Tensor, end: torch.Tensor, steps: int):
    weights = torch.linspace(0, 1, steps).view(-1, *([1] * start.dim()))  # expect: TDL003
    return start + weights * (end - start)


def random_crop(images: torch.Tensor, size: int):
    top = torch.randint(0, images.size(-2) - size + 1, (1,)).item()  # ok: TDL003  a Python number
    left = torch.randint(0, images.size(-1) - size + 1, (1,)).item()  # ok: TDL003
    return images[..., top : top + size, left : left + size]


def jitter(points: torch.Tensor, scale: float = 0.01):
    return points + scale * torch.randn(points.shape)  # expect: TDL003


def in_range(values: torch.Tensor, low: float, high: float):
    bounds = torch.tensor([low, high])  # ok: TDL003  compared element by element as numbers below
    return (values >= bounds[0].item()) & (values <= bounds[1].item())


def select_rows(features: torch.Tensor, keep):
    keep = torch.as_tensor(keep, dtype=torch.bool)  # ok: TDL003  a CPU mask may index a device tensor
    return features[keep] + features[keep].mean()


class GuidedPipeline:
    """The helper is only ever called here, with a CPU tensor; its result is moved after."""

    def guidance_embedding(self, w: torch.Tensor, dim: int = 8, dtype=torch.float32):
        freqs = torch.exp(torch.arange(dim // 2, dtype=dtype) * -0.5)  # ok: TDL003  every caller passes CPU
        angles = w.to(dtype)[:, None] * freqs[None, :]
        return torch.cat([angles.sin(), angles.cos()], dim=1)

    def __call__(self, scale: float, batch: int, device):
        w = torch.tensor(scale - 1).repeat(batch)
        return self.guidance_embedding(w).to(device)


def mask_from_lengths(lengths: torch.Tensor):
    max_len = int(torch.max(lengths).item())
    ids = torch.arange(0, max_len, out=torch.empty(max_len, dtype=torch.long, device=lengths.device))  # ok: TDL003  out= decides
    return ids < lengths.unsqueeze(1)


def graph_slices(batch: torch.Tensor):
    """NumPy reads the batch vector: the helper works on CPU tensors only, by contract."""
    counts = torch.from_numpy(np.bincount(batch))  # ok: TDL003
    return torch.cat([torch.tensor([0]), torch.cumsum(counts, 0)]) + batch[:1] * 0  # ok: TDL003


def eye_batch(batch_size: int, size: int, device=None, dtype=None):
    return torch.eye(size, device=device, dtype=dtype).expand(batch_size, -1, -1)


def rectified_fundamental(batch_size: int):
    """The eye is made with device=None, the default: both sides are on the CPU."""
    flip = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # ok: TDL003
    return eye_batch(batch_size, 3) @ flip
