"""Mixed precision, gradient accumulation, mixup, an EMA copy and per-class statistics."""

import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def mixup(images: torch.Tensor, targets: torch.Tensor, alpha: float, num_classes: int):
    lam = float(np.random.beta(alpha, alpha))
    index = torch.randperm(images.size(0))  # ok: TDL003  a CPU index into device tensors
    mixed = lam * images + (1 - lam) * images[index]
    onehot = F.one_hot(targets, num_classes).float()
    return mixed, lam * onehot + (1 - lam) * onehot[index]


class ModelEMA:
    def __init__(self, model: nn.Module, decay=0.999):
        self.module = copy.deepcopy(model).eval()
        self.decay = decay

    def to(self, device):
        self.module.to(device)  # ok: TDL004
        return self

    @torch.no_grad()
    def update(self, model):
        for ema_p, p in zip(self.module.parameters(), model.parameters()):
            ema_p.mul_(self.decay).add_(p.detach(), alpha=1 - self.decay)


def train_one_epoch(model: nn.Module, loader, optimizer, scaler, device, ema=None, accum_steps=4):
    model.train()
    optimizer.zero_grad(set_to_none=True)
    for step, (images, targets) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        images, soft_targets = mixup(images, targets, 0.2, 10)
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            logits = model(images)
            loss = torch.sum(-soft_targets * F.log_softmax(logits, dim=-1), dim=-1).mean() / accum_steps
        scaler.scale(loss).backward()
        if (step + 1) % accum_steps == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            if ema is not None:
                ema.update(model)


@torch.no_grad()
def class_statistics(model: nn.Module, loader, device, num_classes: int):
    model.eval()
    class_counts = torch.zeros(num_classes, dtype=torch.long)  # expect: TDL003  accumulates device one-hots
    confusion = torch.zeros(num_classes, num_classes, dtype=torch.long)  # ok: TDL003  filled from Python ints
    for images, targets in loader:
        images = images.to(device)
        targets = targets.to(device)
        preds = model(images).argmax(dim=1)
        class_counts += F.one_hot(targets, num_classes).sum(0)
        for t, p in zip(targets.cpu().tolist(), preds.cpu().tolist()):
            confusion[t, p] += 1
    return class_counts, confusion


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 512), nn.ReLU(), nn.Linear(512, 10))
    model.to(device)  # ok: TDL004
    ema = ModelEMA(model)
    ema.to(device)  # ok: TDL004
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scaler = torch.cuda.amp.GradScaler()
    fake_images = torch.randn(256, 3, 32, 32)  # ok: TDL003
    fake_targets = torch.randint(0, 10, (256,))  # ok: TDL003
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(fake_images, fake_targets), batch_size=32)
    for epoch in range(3):
        train_one_epoch(model, loader, optimizer, scaler, device, ema)
    counts, confusion = class_statistics(model, loader, device, 10)
    print(counts, confusion)
    model.half()  # ok: TDL004
    warmup = torch.randn(1, 3, 32, 32, dtype=torch.float16)  # expect: TDL003  fed to the moved model
    model(warmup)


if __name__ == "__main__":
    main()
