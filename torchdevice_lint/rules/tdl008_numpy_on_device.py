from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from torchdevice_lint.analysis import Kind, Place, torch_api
from torchdevice_lint.analysis.flow import device_argument_place
from torchdevice_lint.analysis.tree import keyword_argument, positional_arguments, string_value
from torchdevice_lint.findings import Fix, Safety
from torchdevice_lint.rule import Invalid, Rule
from torchdevice_lint.rules._edits import method_call

#: An ``if`` test about NumPy input: the branch converts back to what came in.
_NUMPY_INPUT = re.compile(r"\bnp\b|numpy|ndarray|_np\b|\bis_np", re.IGNORECASE)

#: Calls in a receiver chain that keep the tensor where it is (``x.float().squeeze().numpy()``).
_KEEPS_PLACE = torch_api.TENSOR_RETURNING_METHODS


class NumpyOnDevice(Rule):
    """
    ## What it does
    Flags `.numpy()` on a tensor that lives on the device: one moved with `.to(device)` or
    `.cuda()` or made with a device `device=`, an input of `forward`, a parameter or buffer, or
    the output of a model that was moved, without a `.cpu()` (or `.to("cpu")`, or `.to(d)` with
    `d` bound to `"cpu"` or `torch.device("cpu")`) before it.
    Methods that keep the place (`.detach()`, `.float()`, `.argmax()`, indexing, `.data`) are
    looked through. Tensors whose place is unknown are not flagged, nor is a `.numpy()` under
    a test about NumPy input (`if isinstance(x, np.ndarray):`, `if arg_is_np:`), which gives
    back the array type the caller passed in, nor one in the body of a test that the device
    is the CPU (`if self.device == torch.device("cpu"):`, `if x.device.type == "cpu":`).

    ## Why is this bad?
    NumPy arrays live in host memory. On a GPU, `.numpy()` raises `TypeError: can't convert
    cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory
    first.`, and on a tensor that requires grad a `RuntimeError` asking for `.detach()`. The
    code runs on a CPU-only machine, so the bug shows up only on the GPU.

    ## Example
    ```python
    logits = model(images.to(device))
    predictions = logits.argmax(dim=1).numpy()
    ```

    ## Use instead
    ```python
    logits = model(images.to(device))
    predictions = logits.argmax(dim=1).detach().cpu().numpy()
    ```

    ## Fix safety
    Safe: inserts `.detach().cpu()` before `.numpy()` (only `.cpu()` when the chain already
    has `.detach()` or `.data`). `Tensor.cpu()` returns the tensor itself when it is on the CPU
    already and `.detach()` shares its storage, so the array is the same where the code ran
    before; on a device it is a host copy instead of an error.
    """

    code = "TDL008"
    name = "numpy-on-device"
    message = "`.numpy()` on a tensor that may live on the device fails there; use `.detach().cpu().numpy()`"
    needles = (".numpy(",)

    valid = (
        "import torch\nx = torch.randn(3)\ny = x.numpy()\n",
        "import torch\nx = torch.randn(3).to(device)\ny = x.cpu().numpy()\n",
        "import torch\nx = torch.randn(3).to(device)\ny = x.detach().cpu().numpy()\n",
        "import torch\nx = torch.randn(3).to(device)\ny = x.to('cpu').numpy()\n",
        "import torch\nx = torch.randn(3).to(device)\ny = x.data.cpu().float().numpy()\n",
        # moved to a variable naming the CPU (deep_sort's nms)
        "import torch\n\n\ndef nms(boxes):\n    cpu_device = torch.device('cpu')\n"
        "    boxes = boxes.cuda()\n    return boxes.to(cpu_device).numpy()\n",
        "import torch\nx = torch.randn(3).to(device)\ny = x.numpy(force=True)\n",
        "import torch\nnet = Net()\nprint(net(batch).numpy())\n",
        "import numpy as np\nimport torch\n\ndef scale(image):\n    is_np = isinstance(image, np.ndarray)\n"
        "    x = torch.as_tensor(image)\n    out = x * torch.ones(3, device=x.device)\n"
        "    if is_np:\n        out = out.numpy()\n    return out\n",
        "import numpy as np\nimport torch\narray = frame.to_numpy()\nvalues = series.numpy()\n",
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n"
        "    def summary(self, x):\n        return x.numpy()\n",
        # under a test that the device is the CPU (dinov2's eval/log_regression.py)
        'import torch\n\n_CPU_DEVICE = torch.device("cpu")\n\n\nclass LogReg:\n    def fit(self, x):\n'
        "        x = x.to(dtype=self.dtype, device=self.device)\n        if self.device == _CPU_DEVICE:\n"
        "            x = x.numpy()\n        self.estimator.fit(x)\n",
        "import torch\n\ndef to_array(x, device):\n    x = x.to(device)\n"
        '    if x.device.type == "cpu":\n        return x.numpy()\n    return x\n',
    )
    invalid = (
        Invalid(  # the other branch of a CPU test is on the device
            "import torch\n\ndef to_array(x, device):\n    x = x.to(device)\n"
            '    if x.device.type == "cpu":\n        return x\n    else:\n        return x.numpy()\n',
            "import torch\n\ndef to_array(x, device):\n    x = x.to(device)\n"
            '    if x.device.type == "cpu":\n        return x\n    else:\n        return x.detach().cpu().numpy()\n',
        ),
        Invalid(
            "import torch\nmodel = torch.nn.Linear(4, 2).to(device)\nlogits = model(images.to(device))\n"
            "predictions = logits.argmax(dim=1).numpy()\n",
            "import torch\nmodel = torch.nn.Linear(4, 2).to(device)\nlogits = model(images.to(device))\n"
            "predictions = logits.argmax(dim=1).detach().cpu().numpy()\n",
        ),
        Invalid(
            "import torch\nx = torch.randn(3).cuda()\ny = x.detach().numpy()\n",
            "import torch\nx = torch.randn(3).cuda()\ny = x.detach().cpu().numpy()\n",
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Probe(nn.Module):\n"
            "    def forward(self, x: torch.Tensor):\n        self.last = x.numpy()\n        return x\n",
            "import torch\nfrom torch import nn\n\nclass Probe(nn.Module):\n"
            "    def forward(self, x: torch.Tensor):\n        self.last = x.detach().cpu().numpy()\n        return x\n",
        ),
        Invalid(
            "import torch\n\ndef evaluate(model: torch.nn.Module, loader, device):\n    model.to(device)\n"
            "    for images, labels in loader:\n        images = images.to(device)\n"
            "        scores = model(images)\n        yield scores.data.numpy(), labels.numpy()\n",
            "import torch\n\ndef evaluate(model: torch.nn.Module, loader, device):\n    model.to(device)\n"
            "    for images, labels in loader:\n        images = images.to(device)\n"
            "        scores = model(images)\n        yield scores.data.cpu().numpy(), labels.numpy()\n",
        ),
        Invalid(
            "import torch\nnet = Net().to(device)\nprint(net(batch).numpy())\n",
            "import torch\nnet = Net().to(device)\nprint(net(batch).detach().cpu().numpy())\n",
        ),
        Invalid(
            "import torch\nx = torch.ones(3, device='cuda')\nrows = [x[0].float().numpy(), x.to(torch.int64).numpy()]\n",
            "import torch\nx = torch.ones(3, device='cuda')\n"
            "rows = [x[0].float().detach().cpu().numpy(), x.to(torch.int64).detach().cpu().numpy()]\n",
            count=2,
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "numpy") or node.args:
            return
        chain = self._chain(func.value)
        if chain is None or self._returns_the_input_type() or self._under_cpu_test():
            return
        links, detached = chain
        place = next((p for p in map(self._place, links) if p is not Place.UNKNOWN), Place.UNKNOWN)
        if place is not Place.DEVICE:
            return
        receiver = func.value
        if not detached:
            receiver = method_call(receiver, "detach", [])
        receiver = method_call(receiver, "cpu", [])
        replacement = node.with_changes(func=func.with_changes(value=receiver))
        self.report(node, fix=Fix(Safety.SAFE, ((node, replacement),)))

    def _returns_the_input_type(self) -> bool:
        """``if isinstance(image, np.ndarray): out = out.numpy()``: giving back the type the caller
        passed in; the tensor was made from that array, on the CPU."""
        return any(
            isinstance(node, (cst.If, cst.IfExp)) and _NUMPY_INPUT.search(self.analysis.module.code_for_node(node.test))
            for node in self.context.ancestors
        )

    def _under_cpu_test(self) -> bool:
        """In the body of ``if self.device == torch.device("cpu"):`` (or ``== "cpu"``, a module
        constant bound to the CPU, ``x.device.type == "cpu"``, ``x.is_cpu``): the device is the
        CPU there, and what was moved to it is on the CPU (dinov2's log_regression.py hands
        NumPy arrays to scikit-learn only when its device is the CPU)."""
        ancestors = self.context.ancestors
        for index, node in enumerate(ancestors[:-1]):
            if isinstance(node, cst.If) and ancestors[index + 1] is node.body and self._tests_for_cpu(node.test):
                return True
        return False

    def _tests_for_cpu(self, test: cst.BaseExpression) -> bool:
        if isinstance(test, cst.Attribute):
            return test.attr.value == "is_cpu"
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._tests_for_cpu(test.left) or self._tests_for_cpu(test.right)
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
            return False
        comparison = test.comparisons[0]
        if not isinstance(comparison.operator, (cst.Equal, cst.Is)):
            return False
        return any(self._names_cpu(side) for side in (test.left, comparison.comparator))

    def _names_cpu(self, node: cst.BaseExpression, resolve: bool = True) -> bool:
        """``"cpu"``, ``torch.device("cpu")``, or a module-level name bound once to one of them."""
        if isinstance(node, cst.Call) and self.analysis.qualified_name(node.func) == "torch.device" and node.args:
            node = node.args[0].value
        text = string_value(node)
        if text is not None:
            return text == "cpu"
        if resolve and isinstance(node, cst.Name):
            values = [
                statement.body[0].value
                for statement in self.analysis.module.body
                if isinstance(statement, cst.SimpleStatementLine)
                and isinstance(statement.body[0], cst.Assign)
                and any(isinstance(t.target, cst.Name) and t.target.value == node.value for t in statement.body[0].targets)
            ]
            return len(values) == 1 and self._names_cpu(values[0], resolve=False)
        return False

    def _place(self, link: cst.BaseExpression) -> Place:
        """Where the analysis puts ``link``; a call of something moved to the device (a model
        after ``model.to(device)``) gives its output there."""
        value = self.analysis.value_of(link)
        if value.kind is Kind.MODULE:
            return Place.UNKNOWN
        if value.place is Place.UNKNOWN and isinstance(link, cst.Call):
            callee = self.analysis.value_of(link.func)
            if callee.kind in (Kind.MODULE, Kind.UNKNOWN) and callee.place is Place.DEVICE:
                return Place.DEVICE
        return value.place

    def _chain(self, receiver: cst.BaseExpression) -> Optional[tuple[list[cst.BaseExpression], bool]]:
        """The expressions from the receiver inwards while the place stays the same, and whether
        one of them detaches; None when the chain moves to the CPU already."""
        links: list[cst.BaseExpression] = []
        detached = False
        current = receiver
        while True:
            links.append(current)
            if isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute):
                method = current.func.attr.value
                if method == "cpu":
                    return None
                if method == "to":
                    target = keyword_argument(current, "device") or next(iter(positional_arguments(current)), None)
                    if target is None:
                        return links, detached
                    if self.analysis.qualified_name(target) not in torch_api.DTYPES:
                        if device_argument_place(target, self.analysis.flow.values) is Place.CPU:
                            return None
                        return links, detached
                elif method == "detach":
                    detached = True
                elif method not in _KEEPS_PLACE:
                    return links, detached
                current = current.func.value
            elif isinstance(current, cst.Attribute) and current.attr.value in ("data", "T", "mT"):
                detached = detached or current.attr.value == "data"
                current = current.value
            elif isinstance(current, cst.Subscript):
                current = current.value
            else:
                return links, detached
