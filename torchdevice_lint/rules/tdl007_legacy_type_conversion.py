from __future__ import annotations

from typing import Optional

import libcst as cst

from torchdevice_lint.analysis import Kind, Place, torch_api
from torchdevice_lint.analysis.tree import positional_arguments, string_value
from torchdevice_lint.findings import Fix, Safety
from torchdevice_lint.rule import Invalid, Rule
from torchdevice_lint.rules._edits import argument, expression, without_trailing_comma


class LegacyTypeConversion(Rule):
    """
    ## What it does
    Flags `.type(...)` given a legacy tensor type, as a name or a string:
    `x.type(torch.cuda.FloatTensor)`, `x.type("torch.cuda.LongTensor")`,
    `x.type(torch.FloatTensor)`. `.type(torch.float32)` (a dtype) and `.type()` (which returns
    the type's name) are not flagged.

    ## Why is this bad?
    A legacy type names a device as well as a dtype. `x.type(torch.cuda.FloatTensor)` needs a
    CUDA build and a GPU (elsewhere it raises `Cannot initialize CUDA` or `Torch not compiled
    with CUDA enabled`), and `x.type(torch.FloatTensor)`, which looks like a dtype change,
    silently copies a GPU tensor to the CPU, where it then meets device tensors: `Expected all
    tensors to be on the same device`.

    ## Example
    ```python
    mask = mask.type(torch.cuda.FloatTensor)
    labels = labels.type(torch.LongTensor)
    ```

    ## Use instead
    ```python
    mask = mask.to(device=device, dtype=torch.float32)
    labels = labels.to(device="cpu", dtype=torch.int64)  # or .to(torch.int64) to keep the device
    ```

    ## Fix safety
    A CUDA type becomes `.to(device=<device in scope>, dtype=...)` (or a new module-level
    `device`); a CPU type becomes `.to(device="cpu", dtype=...)`, which keeps the move to the
    CPU that the old call made (drop `device=` if only the dtype was meant), or `.to(dtype)`
    on a tensor known to be on the CPU already (`torch.from_numpy(a)`) or placed by the next
    call (`.type(torch.FloatTensor).cuda()`, `.to(device)`, `.cpu()`: the trip through the host
    only cost a copy). Other keywords
    (`non_blocking`) are kept. Safe on a receiver known to be a tensor. Unsafe otherwise: on a
    module, `.type()` converts every parameter and buffer, integer ones included, while
    `.to(dtype=...)` converts only the floating-point ones.
    """

    code = "TDL007"
    name = "legacy-type-conversion"
    message = "`.type({name})` converts to a legacy {kind} type; use `.to(device=..., dtype=...)`"
    needles = ("Tensor",)

    valid = (
        "import torch\n\n\ndef f(x: torch.Tensor, label: torch.Tensor):\n    return (x > 0).to(torch.float32).to(label.device)\n",
        "import torch\ny = x.type(torch.float32)\n",
        "import torch\nname = x.type()\n",
        "import torch\ny = x.type(other.type())\n",
        "import torch\ny = x.type(Tensor)\n",
        "import torch\nis_tensor = type(x) is torch.Tensor\n",
        "import pandas as pd\ncolumn = frame['label'].astype('category').type('FloatTensor')\n",
        "import torch\ny = x.to(device=device, dtype=torch.float32)\n",
        "import torch\ny = x.type('torch.float16')\n",
    )
    invalid = (
        Invalid(  # placed by the next call: only the dtype changes (face.evoLVe's NPCFace)
            "import torch\n\n\ndef f(x: torch.Tensor, y: torch.Tensor, label: torch.Tensor):\n"
            "    mask = (x > y).type(torch.FloatTensor).cuda()\n"
            "    return mask, (x > y).type(torch.FloatTensor).to(label.device)\n",
            "import torch\n\n\ndef f(x: torch.Tensor, y: torch.Tensor, label: torch.Tensor):\n"
            "    mask = (x > y).to(torch.float32).cuda()\n"
            "    return mask, (x > y).to(torch.float32).to(label.device)\n",
            count=2,
        ),
        Invalid(  # a dtype next keeps the move to the host
            "import torch\n\n\ndef f(x: torch.Tensor):\n    return x.type(torch.FloatTensor).to(torch.float64)\n",
            'import torch\n\n\ndef f(x: torch.Tensor):\n    return x.to(device="cpu", dtype=torch.float32).to(torch.float64)\n',
        ),
        Invalid(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "mask = torch.ones(3).type(torch.cuda.FloatTensor)\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "mask = torch.ones(3).to(device=device, dtype=torch.float32)\n",
        ),
        Invalid(
            "import torch\n\ndef f(x: torch.Tensor):\n    return x.type('torch.cuda.LongTensor')\n",
            "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
            "def f(x: torch.Tensor):\n    return x.to(device=device, dtype=torch.int64)\n",
        ),
        Invalid(
            "import torch\n\ndef f(x: torch.Tensor):\n    return x.type(torch.LongTensor)\n",
            "import torch\n\ndef f(x: torch.Tensor):\n    return x.to(device=\"cpu\", dtype=torch.int64)\n",
        ),
        Invalid(
            "import torch\nmodel = model.type(torch.cuda.HalfTensor)\n",
            "import torch\n\n"
            'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'
            "model = model.to(device=device, dtype=torch.float16)\n",
        ),
        Invalid(
            "import torch\n\ndef f(x: torch.Tensor, device):\n"
            "    return x.type(torch.cuda.FloatTensor, non_blocking=True)\n",
            "import torch\n\ndef f(x: torch.Tensor, device):\n"
            "    return x.to(device=device, dtype=torch.float32, non_blocking=True)\n",
        ),
        Invalid("from torch import cuda\ny = x.type(cuda.BoolTensor)\n"),
        Invalid(  # a tensor known to be on the CPU only changes its dtype (Coqui TTS synthesis.py)
            "import numpy as np\nimport torch\n\ndef embed(v):\n"
            "    return torch.from_numpy(np.asarray(v)).type(torch.FloatTensor)\n",
            "import numpy as np\nimport torch\n\ndef embed(v):\n"
            "    return torch.from_numpy(np.asarray(v)).to(torch.float32)\n",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "type"):
            return
        if self.analysis.qualified_name(func) is not None:  # a module's own ``type``, not the method
            return
        positional = positional_arguments(node)
        target = positional[0] if len(positional) == 1 else None
        legacy = self._legacy_type(target) if target is not None else None
        if legacy is None or target is None:
            return
        cuda = legacy.startswith("torch.cuda.")
        message = self.message.format(
            name=self.analysis.module.code_for_node(target), kind="CUDA" if cuda else "CPU"
        )
        self.report(node, message, self._fix(node, legacy, cuda))

    def _moved_at_once(self, node: cst.Call) -> bool:
        """The converted tensor is placed right away: ``.cuda()``, ``.cpu()``, or ``.to()`` given
        a device or a tensor (face.evoLVe's ``(a > b).type(torch.FloatTensor).cuda()``, whose
        trip through the host only cost a copy); not ``.to(torch.float64)``, which would leave it
        where the receiver is."""
        chained = self.context.chained_call(node)
        if chained is None:
            return False
        method, move = chained
        if method in ("cuda", "cpu"):
            return True
        if method != "to":
            return False
        positional = positional_arguments(move)
        if positional:
            return self.analysis.qualified_name(positional[0]) not in torch_api.DTYPES
        return any(arg.keyword is not None and arg.keyword.value == "device" for arg in move.args)

    def _legacy_type(self, node: cst.BaseExpression) -> Optional[str]:
        name = string_value(node)
        if name is None:
            name = self.analysis.qualified_name(node)
        if name == "torch.Tensor" or torch_api.LEGACY_TENSOR_TYPES.get(name or "") is None:
            return None
        return name

    def _fix(self, node: cst.Call, legacy: str, cuda: bool) -> Optional[Fix]:
        torch_name = self.analysis.imports.torch_alias
        if torch_name is None or any(arg.star for arg in node.args):
            return None
        dtype = (torch_api.LEGACY_TENSOR_TYPES[legacy] or "").replace("torch.", f"{torch_name}.", 1)
        receiver_node = cst.ensure_type(node.func, cst.Attribute).value
        moving = receiver_node.value if isinstance(receiver_node, cst.Name) else None
        device = self.context.device_for(moving=moving) if cuda else None
        quote = self.analysis.binder.quote
        location = device.expression if device is not None else f"{quote}cpu{quote}"
        kept = [arg for arg in node.args if arg.keyword is not None and arg.keyword.value != "dtype"]
        receiver = self.analysis.value_of(cst.ensure_type(node.func, cst.Attribute).value)
        if not cuda and (receiver.kind is Kind.TENSOR and receiver.place is Place.CPU or self._moved_at_once(node)):
            # already on the CPU (``torch.from_numpy(a)``), or placed by the next call
            # (``.type(torch.FloatTensor).cuda()``): only the dtype changes
            moved = [argument(expression(dtype)), *kept]
        else:
            moved = [argument(expression(location), "device"), argument(expression(dtype), "dtype"), *kept]
        replacement = node.with_changes(
            func=cst.ensure_type(node.func, cst.Attribute).with_changes(attr=cst.Name("to")),
            args=without_trailing_comma(moved),
        )
        is_tensor = receiver.kind is Kind.TENSOR
        safety = Safety.SAFE if is_tensor else Safety.UNSAFE
        if device is None:
            return Fix(safety, ((node, replacement),))
        return self.device_fix([(node, replacement)], device, safety)
