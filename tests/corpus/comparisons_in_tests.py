"""Tests that put their inputs on a device fixture and compare the results with expected
values: torch's comparisons, and the suites' wrappers of them, refuse two devices."""

import numpy as np
import torch
from torch.testing import assert_close

from mylib.filters import blur, jpeg
from mylib.testing import assert_allclose


class TestJpeg:
    def test_gradient(self, device):
        image = torch.zeros(1, 3, 8, 8, device=device, requires_grad=True)
        jpeg(image).sum().backward()
        reference = torch.tensor([0.1919, 0.25])  # expect: TDL003 compared with the device gradient
        self.assert_close(image.grad.mean(dim=(0, 2, 3))[:2], reference, rtol=0.01, atol=0.01)

    def test_blur(self, device):
        image = torch.rand(1, 1, 4, 4, device=device)
        blurred = blur(image)  # a function of the library, given the device image: computes there
        expected = torch.ones(1, 1, 4, 4)  # expect: TDL003 compared with what blur computed
        assert_allclose(blurred, expected)

    def test_equal(self, device):
        image = torch.rand(2, 2, device=device)
        assert torch.equal(image.round(), torch.ones(2, 2))  # expect: TDL003
        assert torch.allclose(image * 0, torch.zeros(2, 2))  # expect: TDL003

    def test_with_numpy(self, device):
        image = torch.rand(2, 2, device=device)
        values = torch.zeros(2, 2)  # ok: TDL003 NumPy compares host copies
        np.testing.assert_allclose(image.cpu().numpy(), values.numpy())

    def test_moved(self, device):
        image = torch.rand(2, 2, device=device)
        expected = torch.ones(2, 2).to(device)  # ok: TDL003 moved before the comparison
        assert_close(image * 0 + 1, expected)

    def test_on_the_host(self):
        image = torch.rand(1, 1, 4, 4)  # ok: TDL003 the whole test runs on the CPU
        expected = torch.ones(1, 1, 4, 4)  # ok: TDL003
        assert_allclose(blur(image), expected)
