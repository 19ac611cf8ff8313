from __future__ import annotations

import libcst as cst

from torchdevice_lint.analysis.guards import in_test_code
from torchdevice_lint.findings import Fix, Safety
from torchdevice_lint.rule import Invalid, Rule
from torchdevice_lint.rules._edits import factory_on_device


class FactoryMeetsArgument(Rule):
    """
    ## What it does
    Flags a tensor factory called without `device=` whose result meets a tensor the caller
    chose: an argument of the function (`edge_index`, `logits`, `lengths`) or a tensor computed
    from one. TDL003 reports factories that meet a tensor known to live on the device; this
    rule covers code that works on whatever device its inputs are on, such as utility
    functions, metrics and losses, where nothing in the file says where the inputs live.

    In preview: off unless turned on with `--preview` or selected (`--select TDL013`).

    ## Why is this bad?
    The function works while every caller passes CPU tensors, and fails with `Expected all
    tensors to be on the same device` the first time it is called with GPU tensors: the index
    built with `torch.arange(n)`, the mask built with `torch.ones(n)`. Real projects fix these
    one bug report at a time by passing `device=edge_index.device`.

    Not flagged, as for TDL003: `*_like(x)`, `x.new_*()`, factories moved before use,
    0-dim scalars, CPU index tensors used to index, test code, and files that never name a
    device.

    ## Example
    ```python
    def subgraph_index(subset: torch.Tensor, edge_index: torch.Tensor, num_nodes: int):
        index = torch.zeros(num_nodes, dtype=torch.long, device=edge_index.device)
        index[subset] = torch.arange(subset.size(0))
        return index[edge_index]
    ```

    ## Use instead
    ```python
    def subgraph_index(subset: torch.Tensor, edge_index: torch.Tensor, num_nodes: int):
        index = torch.zeros(num_nodes, dtype=torch.long, device=edge_index.device)
        index[subset] = torch.arange(subset.size(0), device=subset.device)
        return index[edge_index]
    ```

    ## Fix safety
    Adds `device=<tensor>.device` naming the tensor the factory meets, or the argument that
    tensor is computed from when it is bound only after the call (`.to(<tensor>.device)` for
    `torch.from_numpy`). Always unsafe: the rule cannot see the callers, and a caller may
    rely on the tensor staying on the CPU.
    """

    code = "TDL013"
    name = "factory-meets-argument"
    message = "`{factory}()` creates a CPU tensor that meets `{partner}`, whose device the caller chooses; pass `device={source}.device`"
    needles = ("torch",)
    preview = True

    valid = (
        "import torch\n\ndef mask(lengths: torch.Tensor, device=None):\n"
        "    steps = torch.arange(int(lengths.max()), device=lengths.device)\n    return steps[None] < lengths[:, None]\n",
        "import torch\n\ndef scale(x: torch.Tensor, device=None):\n    return x * torch.tensor(2.0)\n",
        "import torch\n\ndef first_rows(x: torch.Tensor, n: int, device=None):\n    return x[torch.arange(n)]\n",
        "import torch\n\ndef shift(x: torch.Tensor, device=None):\n    return x + x.new_ones(x.shape)\n",
        "import torch\n\ndef test_mask(device):\n    x = torch.randn(3).to(device)\n"
        "    assert helper(x + torch.ones(3))\n",
        "import torch\n\ndef add_bias(x: torch.Tensor):\n    return x + torch.ones(x.shape[-1])\n",
        "import torch\n\ndef centre(x: torch.Tensor, device=None):\n    x = torch.randn(3)\n    return x - torch.ones(3)\n",
    )
    invalid = (
        Invalid(
            "import torch\n\ndef subgraph_index(subset: torch.Tensor, edge_index: torch.Tensor, n: int):\n"
            "    index = torch.zeros(n, dtype=torch.long, device=edge_index.device)\n"
            "    offsets = torch.arange(subset.size(0))\n    return index[edge_index] + offsets[subset]\n",
            "import torch\n\ndef subgraph_index(subset: torch.Tensor, edge_index: torch.Tensor, n: int):\n"
            "    index = torch.zeros(n, dtype=torch.long, device=edge_index.device)\n"
            "    offsets = torch.arange(subset.size(0), device=subset.device)\n"
            "    return index[edge_index] + offsets[subset]\n",
        ),
        Invalid(
            "import torch\n\ndef masked_accuracy(logits: torch.Tensor, labels: torch.Tensor, device=None):\n"
            "    weights = torch.ones(labels.size(0))\n"
            "    correct = (logits.argmax(-1) == labels).float() * weights\n    return correct.sum() / weights.sum()\n",
            "import torch\n\ndef masked_accuracy(logits: torch.Tensor, labels: torch.Tensor, device=None):\n"
            "    weights = torch.ones(labels.size(0), device=labels.device)\n"
            "    correct = (logits.argmax(-1) == labels).float() * weights\n    return correct.sum() / weights.sum()\n",
        ),
        Invalid(
            "import numpy as np\nimport torch\n\ndef weighted(x: torch.Tensor, w, device=None):\n"
            "    return x * torch.from_numpy(np.asarray(w, dtype=np.float32))\n",
            "import numpy as np\nimport torch\n\ndef weighted(x: torch.Tensor, w, device=None):\n"
            "    return x * torch.from_numpy(np.asarray(w, dtype=np.float32)).to(x.device)\n",
        ),
        Invalid(
            "import torch\n\ndef pairs(labels: torch.Tensor, device=None):\n"
            "    eye = torch.eye(labels.size(0), dtype=torch.bool)\n"
            "    same = labels.unsqueeze(0) == labels.unsqueeze(1)\n    return same & ~eye\n",
            "import torch\n\ndef pairs(labels: torch.Tensor, device=None):\n"
            "    eye = torch.eye(labels.size(0), dtype=torch.bool, device=labels.device)\n"
            "    same = labels.unsqueeze(0) == labels.unsqueeze(1)\n    return same & ~eye\n",
        ),
        Invalid(
            "import torch\n\ndef add_noise(signal: torch.Tensor, snr_db: float, device=None):\n"
            "    noise = torch.randn(signal.shape)\n    return signal + noise * 10 ** (-snr_db / 20)\n",
            "import torch\n\ndef add_noise(signal: torch.Tensor, snr_db: float, device=None):\n"
            "    noise = torch.randn(signal.shape, device=signal.device)\n    return signal + noise * 10 ** (-snr_db / 20)\n",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        meetings = self.analysis.unplaced_meetings_for_origin(node)
        functions = self.context.enclosing_functions()
        if not meetings or not functions or in_test_code(self.analysis.imports, self.context.ancestors):
            return
        # Only the function's arguments and what is computed from them: a tensor from a helper
        # of another file may be on the CPU by that helper's contract.
        from_arguments = self.analysis.argument_derived_names(functions[0])
        partner = next((m.partner for m in meetings if m.partner in from_arguments), None)
        if partner is None:
            return
        # The fix reads the device of a tensor bound before the call: the partner, or else the
        # argument it is computed from (`same = labels == ...` comes after `eye = torch.eye(n)`).
        source = partner if self.analysis.bound_before(partner, self.context.statement(), functions[0]) else from_arguments[partner]
        factory = self.analysis.qualified_name(node.func) or "torch.tensor"
        replacement = factory_on_device(node, factory, f"{source}.device")
        message = self.message.format(factory=factory, partner=partner, source=source)
        self.report(node, message, Fix(Safety.UNSAFE, ((node, replacement),)))
