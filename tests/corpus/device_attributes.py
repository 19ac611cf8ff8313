# A tensor moved to a device attribute of the object (``self._device``, ``self.estimator.device``)
# set in a base class of another file: it is on the object's device, as a tensor moved to a
# ``device`` name is. Shape from ART's randomized smoothing (d9ac0427c7: noise made with
# ``torch.empty(shape).normal_()`` added to inputs moved with ``.to(self._device)``), with hard
# negatives.
import numpy as np
import torch

from .estimators import Estimator


class SmoothedClassifier(Estimator):
    def loss_gradient(self, x: np.ndarray, scale: float):
        inputs = torch.from_numpy(x).to(self._device)
        repeated = inputs.repeat_interleave(8, 0)
        noise = torch.empty(repeated.shape).normal_(mean=0, std=scale)  # expect: TDL003  meets inputs moved to self._device
        return self._model(repeated + noise)

    def loss_gradient_fixed(self, x: np.ndarray, scale: float):
        inputs = torch.from_numpy(x).to(self._device)
        noise = torch.empty(inputs.shape).normal_(mean=0, std=scale).to(self._device)  # ok: TDL003
        return self._model(inputs + noise)

    def offsets(self, x: np.ndarray):
        inputs = torch.from_numpy(x).to(self.device)
        return inputs + torch.tensor(0.5)  # ok: TDL003  a 0-dim tensor may meet any device


class HostSmoother(Estimator):
    def __init__(self):
        super().__init__()
        self._device = torch.device("cpu")

    def loss_gradient(self, x: np.ndarray, scale: float):
        inputs = torch.from_numpy(x).to(self._device)
        noise = torch.empty(inputs.shape).normal_(mean=0, std=scale)  # ok: TDL003  the object's device is the CPU
        return inputs + noise


class Tokens(Estimator):
    def encode(self, x: np.ndarray):
        ids = torch.from_numpy(x).to(self.dtype_for_ids)
        return ids + torch.arange(ids.shape[-1])  # ok: TDL003  # expect: TDL013  a dtype attribute: the device stays unknown
