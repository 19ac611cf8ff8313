from __future__ import annotations

import libcst as cst

from torchdevice_lint.analysis import Kind, torch_api
from torchdevice_lint.findings import Fix, Safety
from torchdevice_lint.rule import Invalid, Rule


class DiscardedConversion(Rule):
    """
    ## What it does
    Flags a statement that converts a tensor and throws the result away: `x.to(device)`,
    `x.cuda()`, `x.cpu()`, `x.float()`, `x.half()`, `x.double()`, `x.type(...)` on its own line.

    ## Why is this bad?
    `Tensor.to()` and its relatives return a new tensor; the tensor they are called on does not
    change. The line does nothing, and the tensor stays where it was, which surfaces later as
    `Expected all tensors to be on the same device`. It is easy to write because
    `nn.Module.to()` does work in place, so `model.to(device)` is correct.

    Only receivers known to be tensors are flagged: modules (`model`, `self`, `self.encoder`,
    classes derived from `nn.Module`), Hugging Face `BatchEncoding`, PyTorch Geometric `Data`
    and `Batch`, classes of the file with their own `to`, and anything of unknown kind are not.
    Nor is a conversion of a fresh tensor (`torch.ones(1).to(device)`): no variable was meant
    to move, and such a line is written for its side effect, such as creating the CUDA context.

    ## Example
    ```python
    for inputs, targets in loader:
        inputs.to(device)
        loss = criterion(model(inputs), targets)
    ```

    ## Use instead
    ```python
    for inputs, targets in loader:
        inputs = inputs.to(device)
        loss = criterion(model(inputs), targets)
    ```

    ## Fix safety
    Safe: assigns the result back to the name or attribute it was called on
    (`x = x.to(device)`). Other receivers (`batch[0].to(device)`) are reported without a fix.
    """

    code = "TDL004"
    name = "discarded-conversion"
    message = "`{receiver}.{method}()` returns a new tensor and the result is discarded; assign it"
    needles = ("torch",)

    valid = (
        "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.to(device)\n",
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def move(self, device):\n        self.to(device)\n",
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.encoder = nn.Linear(2, 2)\n        self.encoder.to('cpu')\n",
        "import torch\nx = torch.zeros(3)\nx = x.to(device)\n",
        "import torch\nbatch = tokenizer(texts, return_tensors='pt')\nbatch.to(device)\n",
        "import torch\nfrom transformers import BatchEncoding\nbatch = BatchEncoding(data)\nbatch.to(device)\n",
        "import torch\n\nclass Storage:\n    def to(self, device):\n        self.obs = self.obs.to(device)\n\n"
        "storage = Storage()\nstorage.to(device)\n",
        "import torch\nfrom torch_geometric.data import Data\ndata = Data(x=x)\ndata.to(device)\n",
        "import torch\nthing.to(device)\n",
        "import torch\n\ndef check(device):\n    torch.ones(1).to(device)\n",
    )
    invalid = (
        Invalid(
            "import torch\nx = torch.zeros(3)\nx.to(device)\n",
            "import torch\nx = torch.zeros(3)\nx = x.to(device)\n",
        ),
        Invalid(
            "import torch\n\ndef f(x: torch.Tensor):\n    x.float()\n    return x\n",
            "import torch\n\ndef f(x: torch.Tensor):\n    x = x.float()\n    return x\n",
        ),
        Invalid(
            "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds)\n"
            "for inputs, targets in loader:\n    inputs.to(device)\n    targets.to(device, non_blocking=True)\n",
            "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds)\n"
            "for inputs, targets in loader:\n    inputs = inputs.to(device)\n"
            "    targets = targets.to(device, non_blocking=True)\n",
            count=2,
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.scale = nn.Parameter(torch.ones(3))\n\n"
            "    def half_scale(self):\n        self.scale.half()\n",
            "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.scale = nn.Parameter(torch.ones(3))\n\n"
            "    def half_scale(self):\n        self.scale = self.scale.half()\n",
        ),
        Invalid("import torch\nbatch = [torch.zeros(2)]\nrows = torch.stack(batch)\nrows.cpu()\nrows[0].cpu()\n", count=2),
    )

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
            return
        method = call.func.attr.value
        if method not in torch_api.CONVERSION_METHODS or (method == "type" and not call.args):
            return
        receiver = call.func.value
        if isinstance(receiver, cst.Call) and self.analysis.qualified_name(receiver.func) is not None:
            # `torch.ones(1).to(device)` on its own line: no variable was meant to move; the
            # statement is run for its side effect (creating the CUDA context, a device check).
            return
        if self.analysis.value_of(receiver).kind is not Kind.TENSOR:
            return
        receiver_text = self.analysis.module.code_for_node(receiver)
        message = self.message.format(receiver=receiver_text, method=method)
        fix = None
        if isinstance(receiver, (cst.Name, cst.Attribute)):
            assignment = cst.Assign(targets=[cst.AssignTarget(target=receiver)], value=call)
            fix = Fix(Safety.SAFE, ((node, assignment),))
        self.report(call, message, fix)
