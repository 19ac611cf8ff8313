# What another object computes from a device tensor, and what the code shows to be a tensor
# without a plain annotation. Shapes from ART's attacks (PGD momentum, 478d9a7b71; feature
# adversaries, edccfbfdfb; DETR box rescaling, 3a97e666d1), with hard negatives.
import numpy as np
import torch


class MomentumAttack:
    def __init__(self, estimator, decay=0.9):
        self.estimator = estimator
        self.decay = decay

    def generate_batch(self, x, targets):
        inputs = x.to(self.estimator.device)
        adv_x = torch.clone(inputs)
        momentum = torch.zeros(inputs.shape)  # expect: TDL003  meets the gradient computed on the device
        for _ in range(10):
            adv_x = self.step(adv_x, targets, momentum)
        return adv_x.cpu().numpy()

    def step(self, x, y, momentum):
        grad = self.estimator.loss_gradient(x=x, y=y) * 2
        if torch.any(grad.isnan()):
            grad[grad.isnan()] = 0.0
        grad = self.decay * momentum + grad
        momentum += grad
        return x + grad.sign()


class MomentumAttackFixed:
    def __init__(self, estimator, decay=0.9):
        self.estimator = estimator
        self.decay = decay

    def generate_batch(self, x, targets):
        inputs = x.to(self.estimator.device)
        adv_x = torch.clone(inputs)
        momentum = torch.zeros(inputs.shape).to(self.estimator.device)  # ok: TDL003
        for _ in range(10):
            adv_x = self.step(adv_x, targets, momentum)
        return adv_x.cpu().numpy()

    def step(self, x, y, momentum):
        grad = self.estimator.loss_gradient(x=x, y=y) * 2
        if torch.any(grad.isnan()):
            grad[grad.isnan()] = 0.0
        grad = self.decay * momentum + grad
        momentum += grad
        return x + grad.sign()


class PredictionsCounted:
    """The estimator's predictions come back as NumPy arrays: nothing here uses them as tensors."""

    def __init__(self, estimator):
        self.estimator = estimator

    def score(self, x, labels):
        inputs = x.to(self.estimator.device)
        preds = self.estimator.predict(inputs)
        counts = torch.zeros(10)  # ok: TDL003  preds is what predict returns: an array
        counts += np.bincount(preds.argmax(axis=1), minlength=10)
        return counts


class FeatureAdversaries:
    def __init__(self, estimator):
        self.estimator = estimator

    def generate(self, x: np.ndarray, batch_size: int):
        out = []
        for begin in range(0, len(x), batch_size):
            batch = torch.tensor(x[begin : begin + batch_size])  # expect: TDL003  a slice: rank 1 or more
            out.append(self.attack(batch).numpy())
        return np.concatenate(out)

    def attack(self, x):
        adv = x.clone().detach().to(self.estimator.device)
        perturbation = torch.clamp(adv.detach() - x.detach(), -0.1, 0.1)
        return (x.detach() + perturbation).cpu()


class ElementGiven:
    def __init__(self, estimator):
        self.estimator = estimator

    def run(self, x: np.ndarray, i: int):
        value = torch.tensor(x[i])  # ok: TDL003  one element may be 0-dim: it meets any device
        return self.shift(value)

    def shift(self, x):
        adv = torch.ones(3).to(self.estimator.device)
        return adv * x


def revert_rescale_bboxes(out_bbox: "torch.Tensor", size):
    img_w, img_h = size
    return out_bbox / torch.tensor([img_w, img_h, img_w, img_h], dtype=torch.float32)  # expect: TDL003


def revert_rescale_bboxes_fixed(out_bbox: "torch.Tensor", size):
    img_w, img_h = size
    scale = torch.tensor([img_w, img_h, img_w, img_h], dtype=torch.float32, device=out_bbox.device)  # ok: TDL003
    return out_bbox / scale


def rescale_numpy(out_bbox: "np.ndarray", size):
    img_w, img_h = size
    return out_bbox / torch.tensor([img_w, img_h, img_w, img_h], dtype=torch.float32)  # ok: TDL003  not a tensor
