"""Device strings and device-like names, as every rule and the flow analysis read them."""

import libcst as cst
import pytest

from torchdevice_lint.analysis.devices import DeviceString, looks_like_device_name, names_a_device, names_cuda, parse_device


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cuda", DeviceString("cuda")),
        ("cuda:1", DeviceString("cuda", 1)),
        ("cpu", DeviceString("cpu")),
        ("mps", DeviceString("mps")),
        ("npu:3", DeviceString("npu", 3)),
        ("cuda:", DeviceString("cuda")),
        ("cuda:x", None),
        ("cuda_graphs", None),
        ("gpu", None),
        ("", None),
    ],
)
def test_parse_device(text, expected):
    assert parse_device(text) == expected


def test_names_cuda():
    assert names_cuda("cuda") and names_cuda("cuda:0")
    assert not names_cuda("cpu") and not names_cuda("cudnn")


def test_device_like_names():
    assert looks_like_device_name("device") and looks_like_device_name("Dev") and looks_like_device_name("train_device")
    assert not looks_like_device_name("devices") and not looks_like_device_name("developer")
    assert names_a_device(cst.parse_expression("self.device")) and names_a_device(cst.parse_expression("dev"))
    assert not names_a_device(cst.parse_expression("a[0]"))
