from __future__ import annotations

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.guards import in_test_code
from torchdevice_lint.analysis.tree import walk
from torchdevice_lint.findings import Fix, Safety
from torchdevice_lint.rule import Invalid, Rule
from torchdevice_lint.rules._edits import factory_on_device


class FactoryMeetsArgument(Rule):
    """
    ## What it does
    Flags a tensor factory called without `device=` whose result meets a tensor whose place
    nothing in the file shows: the result of a helper of another file, reshaped
    (`feats = encode(batch).unsqueeze(0)`). Factories that meet a tensor on the device, or one
    that came in from the caller (an argument, what is computed from one), are TDL003's: this
    rule keeps the weaker cases, where the helper may return a CPU tensor by its own contract.

    In preview: off unless turned on with `--preview` or selected (`--select TDL013`), until
    its precision on real code is measured.

    ## Why is this bad?
    When the helper returns a tensor on the device, the operation fails with `Expected all
    tensors to be on the same device`.

    Not flagged, as for TDL003: `*_like(x)`, `x.new_*()`, factories moved before use,
    0-dim scalars, CPU index tensors used to index, test code, data loading (Datasets,
    collators, `collate_fn` and its helpers), and files that never name a device.

    ## Example
    ```python
    from .features import encode

    def score(batch, device=None):
        feats = encode(batch).unsqueeze(0)
        return feats * torch.ones(feats.shape[-1])
    ```

    ## Use instead
    ```python
    from .features import encode

    def score(batch, device=None):
        feats = encode(batch).unsqueeze(0)
        return feats * torch.ones(feats.shape[-1], device=feats.device)
    ```

    ## Fix safety
    Adds `device=<tensor>.device` naming the tensor the factory meets (`.to(<tensor>.device)`
    for `torch.from_numpy`). Always unsafe: the helper may mean its result to stay on the CPU.
    """

    code = "TDL013"
    name = "factory-meets-unplaced-tensor"
    message = "`{factory}()` creates a CPU tensor that meets `{partner}`, whose device is not known here; pass `device={partner}.device`"
    needles = ("torch",)
    preview = True

    valid = (
        "import torch\nfrom .features import encode\n\ndef score(batch, device=None):\n"
        "    feats = encode(batch).unsqueeze(0)\n    return feats * torch.ones(feats.shape[-1], device=feats.device)\n",
        "import torch\nfrom .features import encode\n\ndef score(batch, device=None):\n"
        "    feats = encode(batch).unsqueeze(0)\n    return feats * torch.tensor(2.0)\n",
        "import torch\n\ndef add_bias(x: torch.Tensor, device=None):\n    return x + torch.ones(x.shape[-1])\n",
        "import torch\nfrom .features import encode\n\ndef test_score(batch, device=None):\n"
        "    feats = encode(batch).unsqueeze(0)\n    assert (feats * torch.ones(3)).sum() > 0\n",
    )
    invalid = (
        Invalid(
            "import torch\nfrom .features import encode\n\ndef score(batch, device=None):\n"
            "    feats = encode(batch).unsqueeze(0)\n    return feats * torch.ones(feats.shape[-1])\n",
            "import torch\nfrom .features import encode\n\ndef score(batch, device=None):\n"
            "    feats = encode(batch).unsqueeze(0)\n    return feats * torch.ones(feats.shape[-1], device=feats.device)\n",
        ),
        Invalid(
            "import torch\nfrom .audio import load_wave\n\ndef noisy(path, device=None):\n"
            "    wave = load_wave(path).unsqueeze(0)\n    return wave + torch.randn(wave.shape)\n",
            "import torch\nfrom .audio import load_wave\n\ndef noisy(path, device=None):\n"
            "    wave = load_wave(path).unsqueeze(0)\n    return wave + torch.randn(wave.shape, device=wave.device)\n",
        ),
        Invalid(
            "import torch\nfrom .text import embed\n\ndef with_cls(tokens, device=None):\n"
            "    hidden = embed(tokens).detach()\n    return torch.cat([torch.zeros(1, hidden.size(1)), hidden])\n",
            "import torch\nfrom .text import embed\n\ndef with_cls(tokens, device=None):\n"
            "    hidden = embed(tokens).detach()\n"
            "    return torch.cat([torch.zeros(1, hidden.size(1), device=hidden.device), hidden])\n",
        ),
        Invalid(
            "import numpy as np\nimport torch\nfrom .graph import degrees\n\ndef normalised(graph, weights, device=None):\n"
            "    degree = degrees(graph).unsqueeze(-1)\n    return degree * torch.from_numpy(np.asarray(weights))\n",
            "import numpy as np\nimport torch\nfrom .graph import degrees\n\ndef normalised(graph, weights, device=None):\n"
            "    degree = degrees(graph).unsqueeze(-1)\n    return degree * torch.from_numpy(np.asarray(weights)).to(degree.device)\n",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.analysis.qualified_name(node.func) in torch_api.LEGACY_TENSOR_TYPES:
            return  # TDL006's
        meetings = self.analysis.unplaced_meetings_for_origin(node)
        functions = self.context.enclosing_functions()
        if not meetings or not functions or in_test_code(self.analysis.imports, self.context.ancestors):
            return
        if self.analysis.works_on_the_cpu(functions[-1], self.context.ancestors):
            return  # data loading, or callers that give it CPU tensors
        if self.analysis.caller_device_meeting(node, self.context.ancestors, self.context.statement()) is not None:
            return  # the caller's device: TDL003's
        # A tensor of this function whose place nothing shows: from a helper of another file,
        # an attribute. It may be on the CPU by that helper's contract: still measured.
        parameters = {param.name.value for param in walk(functions[0].params) if isinstance(param, cst.Param)}
        # A parameter TDL003 left alone is on the CPU by the function's contract (NumPy reads it).
        partner = next((m.partner for m in meetings if m.partner and m.partner not in parameters), None)
        if partner is None or not self.analysis.bound_before(partner, self.context.statement(), functions[0]):
            return
        factory = self.analysis.qualified_name(node.func) or "torch.tensor"
        replacement = factory_on_device(node, factory, f"{partner}.device")
        message = self.message.format(factory=factory, partner=partner)
        self.report(node, message, Fix(Safety.UNSAFE, ((node, replacement),)))
