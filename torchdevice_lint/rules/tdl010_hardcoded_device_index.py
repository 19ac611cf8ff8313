from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from torchdevice_lint.analysis.devices import parse_device
from torchdevice_lint.analysis.guards import in_test_code
from torchdevice_lint.analysis.tree import is_compared, keyword_argument, positional_arguments, string_value
from torchdevice_lint.rule import Invalid, Rule

#: Device types of machines with several devices, where an index names one of them.
_INDEXED_TYPES = ("cuda", "xpu", "npu")

#: An ``if`` test that counts devices: code under it knows there are enough.
_COUNT_TEST = re.compile(r"device_count|n_?gpus?\b|num_gpus?|world_size|gpu_count", re.IGNORECASE)


class HardcodedDeviceIndex(Rule):
    """
    ## What it does
    Flags a device index of 1 or more written as a literal: `.cuda(1)`, `.to(1)`,
    `"cuda:1"`, `torch.device("cuda", 1)`, `torch.device("cuda:2")`,
    `torch.cuda.set_device(1)`. Index 0 is not flagged: every machine with a GPU has a
    `cuda:0`, and TDL001 / TDL002 already cover a CUDA device without a CPU fallback. An index
    held in a variable (`torch.device("cuda", local_rank)`, `.cuda(args.gpu)`) is
    configurable and never flagged, nor is code under a device-count check (`if
    torch.cuda.device_count() > 1:`), test code, docstrings and comparisons.

    ## Why is this bad?
    The program then needs a machine with at least two GPUs. On one GPU it fails with
    `RuntimeError: CUDA error: invalid device ordinal`; under `torchrun` every process lands on
    the same GPU instead of its own, and on a shared machine it takes a GPU that someone else
    may be using.

    ## Example
    ```python
    model = Net().cuda(1)
    batch = batch.to("cuda:1")
    ```

    ## Use instead
    ```python
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("cuda", local_rank) if torch.cuda.is_available() else torch.device("cpu")
    model = Net().to(device)
    batch = batch.to(device)
    ```

    ## Fix safety
    No fix: which device the program should use (the process's rank, a command-line option,
    `CUDA_VISIBLE_DEVICES`) is a decision the code does not show.
    """

    code = "TDL010"
    name = "hardcoded-device-index"
    message = (
        "hardcoded device index {index} ({literal}) needs a machine with {count} GPUs; "
        "use the per-process or a configurable device"
    )
    needles = ("cuda", ".to(")

    valid = (
        'import torch\nx = x.cuda(0)\ny = y.to("cuda:0")\n',
        "import os\nimport torch\nlocal_rank = int(os.environ['LOCAL_RANK'])\n"
        "device = torch.device('cuda', local_rank)\ntorch.cuda.set_device(local_rank)\n",
        "import torch\nmodel = model.cuda(args.gpu)\n",
        'import torch\nif torch.cuda.device_count() > 1:\n    second = torch.device("cuda:1")\n',
        'import torch\nif x.device == torch.device("cuda", 1):\n    pass\n',
        'def place(x):\n    """Move x, e.g. to "cuda:1"."""\n    return x\n',
        'import pytest\nimport torch\n\ndef test_second_gpu():\n    assert torch.ones(1).cuda(1).device.index == 1\n',
        "import torch\ny = x.to(torch.float16)\nz = x.to(0)\n",
        "import torch\nhelp_text = 'the device, e.g. cuda:1 or cpu'\n",
    )
    invalid = (
        Invalid("import torch\nmodel = Net().cuda(1)\n"),
        Invalid('import torch\nbatch = batch.to("cuda:1", non_blocking=True)\n'),
        Invalid('import torch\ndevice = torch.device("cuda", 2)\nother = torch.device("cuda:3")\n', count=2),
        Invalid("import torch\ntorch.cuda.set_device(1)\n"),
        Invalid('import torch\nif torch.cuda.is_available():\n    DEVICE = "cuda:1"\n'),
        Invalid("import torch\nx = torch.zeros(3, device=1)\ny = x.cuda(device=2)\n", count=2),
    )

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.analysis.qualified_name(node.func)
        index: Optional[cst.BaseExpression] = None
        if qualified == "torch.device":
            positional = positional_arguments(node)
            if len(positional) == 2 and string_value(positional[0]) == "cuda":
                index = positional[1]
            elif len(positional) == 1:
                return  # a string argument is checked as a string
        elif qualified == "torch.cuda.set_device":
            index = next(iter(positional_arguments(node)), None)
        elif qualified is None and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("cuda", "to"):
            index = keyword_argument(node, "device") or next(iter(positional_arguments(node)), None)
        elif qualified is not None and keyword_argument(node, "device") is not None:
            index = keyword_argument(node, "device")  # torch.zeros(3, device=1)
        number = _integer(index)
        if number is None or number < 1 or is_compared(self.context.parent()):
            return
        self._report(node, number, self.analysis.module.code_for_node(node))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        device = parse_device(string_value(node) or "")
        if device is None or device.type not in _INDEXED_TYPES or device.index is None or device.index < 1:
            return
        parent = self.context.parent()
        if is_compared(parent):
            return
        if isinstance(parent, cst.Expr):
            return  # a docstring
        self._report(node, device.index, node.value)

    def _report(self, node: cst.CSTNode, index: int, literal: str) -> None:
        if self._counted() or in_test_code(self.analysis.imports, self.context.ancestors):
            return
        if len(literal) > 40:
            literal = literal[:37] + "..."
        self.report(node, self.message.format(index=index, literal=f"`{literal}`", count=index + 1))

    def _counted(self) -> bool:
        """Under ``if torch.cuda.device_count() > 1:`` (or a check of the GPU count)."""
        for node in self.context.ancestors:
            test = node.test if isinstance(node, (cst.If, cst.IfExp, cst.While)) else None
            if test is not None and _COUNT_TEST.search(self.analysis.module.code_for_node(test)):
                return True
        return False


def _integer(node: Optional[cst.BaseExpression]) -> Optional[int]:
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    return None
