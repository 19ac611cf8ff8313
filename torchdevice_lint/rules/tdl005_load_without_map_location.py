from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from torchdevice_lint.analysis import guards
from torchdevice_lint.analysis.guards import in_test_code
from torchdevice_lint.analysis.imports import dotted_name
from torchdevice_lint.analysis.loads import computes_with_result, feeds_load_state_dict
from torchdevice_lint.analysis.tree import keyword_argument, positional_arguments, walk
from torchdevice_lint.findings import Fix, Safety
from torchdevice_lint.rule import Invalid, Rule
from torchdevice_lint.rules._edits import append_argument, argument, expression

#: Sources written by the running process itself: nothing in them comes from another machine.
_TEMPORARY = re.compile(r"BytesIO|tmp|temp", re.IGNORECASE)

#: Words that say a file holds a model's tensors: a checkpoint, weights, an optimizer's state.
_MODEL_STATE = re.compile(
    r"ckpt|checkpoint|state|model|weight|pretrain|resume|snapshot|optim|net|encoder|decoder"
    r"|generator|discriminator|vocoder|params|\.pth\b|\.bin\b",
    re.IGNORECASE,
)


class LoadWithoutMapLocation(Rule):
    """
    ## What it does
    Flags `torch.load(...)` of a model's state without `map_location` (neither the keyword nor
    a second positional argument). A load counts as a model's state when its result goes into
    `load_state_dict(...)`, or when the path, the variable it is assigned to or the function
    it is in names a checkpoint, a model, weights or an optimizer (`ckpt`, `checkpoint`,
    `state`, `model`, `weights`, `pretrained`, `resume`, `optim`, `.pth`, `.bin`, ...). Other
    files (datasets, caches, plain numbers) rarely hold device tensors and are left alone.

    So is what the running process wrote itself, or reads where it knows the device: an
    in-memory buffer (`io.BytesIO`), a temporary file (a source that mentions `tmp` or
    `temp`), what the same function has just `torch.save`d to the same expression, test code
    (a function or class named for tests, a module that imports `pytest`, `unittest` or test
    utilities), a `Dataset` subclass (it reads what its own preprocessing wrote), and a load
    under a device check (`if torch.cuda.is_available():`, `if args.gpu ...:`, a conditional
    expression, or after `if not torch.cuda.is_available(): return`).

    ## Why is this bad?
    A checkpoint remembers the device each tensor was saved from. Without `map_location`,
    `torch.load` puts every tensor back on that device: a checkpoint saved on a GPU fails on a
    laptop or a CPU-only CI runner with `RuntimeError: Attempting to deserialize object on a
    CUDA device but torch.cuda.is_available() is False`, and one saved on `cuda:1` fails on a
    machine with one GPU (or fills the wrong GPU's memory).

    ## Example
    ```python
    state = torch.load("checkpoint.pt", weights_only=True)
    model.load_state_dict(state)
    ```

    ## Use instead
    ```python
    state = torch.load("checkpoint.pt", weights_only=True, map_location="cpu")
    model.load_state_dict(state)
    ```

    ## Fix safety
    Adds `map_location="cpu"`: `load_state_dict(...)` copies every tensor onto the parameters'
    own device anyway, and a checkpoint that is only read or saved again keeps CPU storages
    (with the device, `torch.save` would write GPU storages into the new file). Only where the
    same function computes with what it loaded (calls it, `model = torch.load(p); model(x)`, does
    arithmetic with it, passes it to a `torch` function or returns it) does the fix use the
    device already in scope (a `device` variable, `x.device`, `self.device`), and still
    `"cpu"` where none is bound rather than a new module-level device. Safe when the loaded object goes straight into
    `load_state_dict(...)`. Unsafe otherwise: on a GPU machine the loaded tensors may land
    elsewhere than before (a GPU-saved checkpoint now loads onto the CPU), and code that uses
    them directly may rely on where they were.
    """

    code = "TDL005"
    name = "load-without-map-location"
    message = "`torch.load()` without `map_location` restores tensors to the device they were saved from"
    needles = ("load(",)

    valid = (
        'import torch\nstate = torch.load("ckpt.pt", map_location="cpu")\n',
        "import torch\n\ndef restore(path, device):\n    return torch.load(path, map_location=device, weights_only=True)\n",
        'import torch\nstate = torch.load("ckpt.pt", "cpu")\n',
        "import torch\n\ndef load(path, **kwargs):\n    return torch.load(path, **kwargs)\n",
        "import io\nimport torch\n\ndef roundtrip(obj):\n    buffer = io.BytesIO()\n    torch.save(obj, buffer)\n"
        "    buffer.seek(0)\n    return torch.load(buffer)\n",
        "import json\nconfig = json.load(open('config.json'))\n",
        "import torch\n\ndef test_resume(tmp_path):\n    trainer.fit(model)\n"
        "    checkpoint = torch.load(trainer.checkpoint_callback.best_model_path)\n",
        "import torch\nstate = torch.load(os.path.join(tmpdir, 'last.ckpt'))\n",
        "import pytest\nimport torch\n\ndef _assert_checkpoint(path, model):\n"
        "    model.load_state_dict(torch.load(path))\n",
        "import torch\nfrom torch.utils.data import Dataset\n\nclass Shards(Dataset):\n"
        "    def __getitem__(self, index):\n        return torch.load(self.files[index])\n",
        "import pickle\nstate = pickle.load(handle)\n",
        "import torch\nif torch.cuda.is_available():\n    state = torch.load(ckpt)\n"
        "else:\n    state = torch.load(ckpt, map_location='cpu')\n",
        "import torch\n\ndef load(self, path):\n    data = torch.load(path)\n    self.n_steps = data['n_steps']\n",
        "import torch\nscripted = torch.jit.load('model.pt', map_location='cpu')\n",
    )
    invalid = (
        Invalid(  # a checkpoint is read to the host, never to a tensor argument's device
            "import torch\n\n\ndef load(path, x):\n    y = torch.mean(x)\n    state = torch.load(path)\n"
            "    state['w'] = state['w'] * y\n    return state\n",
            "import torch\n\n\ndef load(path, x):\n    y = torch.mean(x)\n    state = torch.load(path, map_location='cpu')\n"
            "    state['w'] = state['w'] * y\n    return state\n",
        ),
        Invalid(
            'import torch\nmodel.load_state_dict(torch.load("ckpt.pt"))\n',
            'import torch\nmodel.load_state_dict(torch.load("ckpt.pt", map_location="cpu"))\n',
        ),
        Invalid(  # in the file's quotes
            "import torch\nmodel.load_state_dict(torch.load('ckpt.pt'))\n",
            "import torch\nmodel.load_state_dict(torch.load('ckpt.pt', map_location='cpu'))\n",
        ),
        Invalid(  # load_state_dict copies onto the parameters' device: "cpu" even with a device in scope
            "import torch\n\ndef restore(model, path, device):\n    state = torch.load(path, weights_only=True)\n"
            "    model.load_state_dict(state)\n",
            "import torch\n\ndef restore(model, path, device):\n"
            '    state = torch.load(path, weights_only=True, map_location="cpu")\n    model.load_state_dict(state)\n',
        ),
        Invalid(  # only saved again: the device would write GPU storages into the new file
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n"
            "def strip(path, out):\n    checkpoint = torch.load(path)\n    torch.save(checkpoint['model'], out)\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n"
            "def strip(path, out):\n    checkpoint = torch.load(path, map_location='cpu')\n    torch.save(checkpoint['model'], out)\n",
        ),
        Invalid(  # computed with right away: the device in scope
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n"
            "def predict(x):\n    model = torch.load('model.pt')\n    return model(x.to(device))\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n"
            "def predict(x):\n    model = torch.load('model.pt', map_location=device)\n    return model(x.to(device))\n",
        ),
        Invalid(
            "import torch\n\ndef embed(ids, device):\n    weights = torch.load('embedding_weights.pt')\n"
            "    return torch.embedding(weights, ids)\n",
            "import torch\n\ndef embed(ids, device):\n    weights = torch.load('embedding_weights.pt', map_location=device)\n"
            "    return torch.embedding(weights, ids)\n",
        ),
        Invalid(
            "from torch import load\nstate = load('weights.pth')\n",
            "from torch import load\nstate = load('weights.pth', map_location='cpu')\n",
        ),
        Invalid(
            "import torch as t\n\nclass Runner:\n    def __init__(self, device):\n        self.device = device\n\n"
            "    def resume(self, path):\n        return t.load(\n            path,\n        )\n",
            "import torch as t\n\nclass Runner:\n    def __init__(self, device):\n        self.device = device\n\n"
            "    def resume(self, path):\n        return t.load(\n            path,\n            map_location=self.device,\n        )\n",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.analysis.qualified_name(node.func) != "torch.load":
            return
        if keyword_argument(node, "map_location") is not None or len(positional_arguments(node)) >= 2:
            return
        if any(arg.star for arg in node.args) or not node.args:
            return
        source = positional_arguments(node)[0] if positional_arguments(node) else keyword_argument(node, "f")
        if source is None or self._in_a_test_or_dataset() or self._made_by_this_process(source):
            return
        if guards.under_device_check(self.analysis.module, self.context.ancestors):
            return  # ``if torch.cuda.is_available(): torch.load(p)`` knows where it runs
        if not (self._feeds_load_state_dict() or self._names_model_state(node)):
            return
        self.report(node, fix=self._fix(node))

    def _fix(self, node: cst.Call) -> Fix:
        quote = self.analysis.binder.quote
        location = f"{quote}cpu{quote}"
        if self._computes_with_result():
            device = self.context.device_for(computing=False)
            location = location if device.inserts_binding else device.expression
        replacement = append_argument(node, argument(expression(location), "map_location"))
        safety = Safety.SAFE if self._feeds_load_state_dict(directly=True) else Safety.UNSAFE
        return Fix(safety, ((node, replacement),))

    def _feeds_load_state_dict(self, directly: bool = False) -> bool:
        """``m.load_state_dict(torch.load(p))``, ``m.load_state_dict(torch.load(p)["model"])``;
        unless ``directly``, also ``state = torch.load(p)`` with ``state`` (or ``state[...]``)
        passed to a ``load_state_dict`` later in the same function."""
        fed = feeds_load_state_dict(self.context.ancestors)
        return fed is True or (fed is False and not directly)

    def _computes_with_result(self) -> bool:
        return computes_with_result(self.analysis.imports, self.context.ancestors)

    def _names_model_state(self, node: cst.Call) -> bool:
        """The path, or what the result is assigned to, names a checkpoint, a model or its weights."""
        texts = [self.analysis.module.code_for_node(arg.value) for arg in node.args if arg.keyword is None]
        functions = self.context.enclosing_functions()
        if functions:
            texts.append(functions[0].name.value)
        for depth in (1, 2):
            parent = self.context.parent(depth)
            if isinstance(parent, cst.Assign):
                texts += [self.analysis.module.code_for_node(t.target) for t in parent.targets]
            elif isinstance(parent, cst.AnnAssign):
                texts.append(self.analysis.module.code_for_node(parent.target))
        return any(_MODEL_STATE.search(text) for text in texts)

    def _in_a_test_or_dataset(self) -> bool:
        """Tests read back what they saved a moment before, on the same machine; datasets read
        the files their own preprocessing wrote."""
        if in_test_code(self.analysis.imports, self.context.ancestors):
            return True
        return any(
            isinstance(node, cst.ClassDef)
            and any((dotted_name(base.value) or "").endswith("Dataset") for base in node.bases)
            for node in self.context.ancestors
        )

    def _made_by_this_process(self, source: cst.BaseExpression) -> bool:
        """An in-memory buffer, a temporary file, or what the same function ``torch.save``d."""
        text = self.analysis.module.code_for_node(source)
        if _TEMPORARY.search(text):
            return True
        functions = self.context.enclosing_functions()
        scope: cst.CSTNode = functions[0] if functions else self.analysis.module
        for node in walk(scope):
            if isinstance(node, cst.Call) and self.analysis.qualified_name(node.func) == "torch.save":
                target = _save_target(node)
                if target is not None and self.analysis.module.code_for_node(target) == text:
                    return True
            elif isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
                made = self.analysis.module.code_for_node(node.value.func)
                if _TEMPORARY.search(made) and any(
                    self.analysis.module.code_for_node(target.target) == text for target in node.targets
                ):
                    return True
        return False


def _save_target(call: cst.Call) -> Optional[cst.BaseExpression]:
    positional = positional_arguments(call)
    if len(positional) >= 2:
        return positional[1]
    return keyword_argument(call, "f")
