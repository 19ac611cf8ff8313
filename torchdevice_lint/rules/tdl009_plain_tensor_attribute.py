from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Optional

import libcst as cst

from torchdevice_lint.analysis import Kind, Place, torch_api
from torchdevice_lint.analysis.flow import ClassInfo
from torchdevice_lint.analysis.tree import assignment_targets, is_compared, iter_child_nodes, method_named, walk
from torchdevice_lint.findings import Fix, Safety
from torchdevice_lint.rule import Invalid, Rule
from torchdevice_lint.rules._edits import expression

if TYPE_CHECKING:  # typing has it from Python 3.10
    from typing_extensions import TypeGuard

#: What may follow ``self.<name>`` without the tensor's place mattering: moves, metadata.
_HARMLESS_ATTRIBUTES = frozenset(
    {"to", "cuda", "cpu", "type_as", "shape", "size", "dtype", "device", "ndim", "dim", "numel", "item", "tolist"}
)

#: Methods of a class that show it moves its own tensors: nothing to register then.
_DEVICE_HOOKS = ("_apply", "to", "cuda")


class PlainTensorAttribute(Rule):
    """
    ## What it does
    Flags a tensor of one or more dimensions created in an `nn.Module`'s `__init__` and stored
    as a plain attribute (`self.mask = torch.ones(n, n)`: not an `nn.Parameter`, not a
    registered buffer) that `forward`, or a method `forward` calls, combines with other
    tensors as it is: in an operator (`x * self.scale`), a `torch` function, a combining
    method (`x.masked_fill(self.mask, ...)`) or a layer of the module, also after methods that
    keep its place (`self.mask[:n].unsqueeze(0)`). Uses that do not care where it is (`.to(...)`
    or `.type_as(...)` anywhere in the chain, `.shape`, `.size()`, an index into another
    tensor, an element `self.strides[i]`, which may be 0-dim) and uses this cannot judge
    (passed to a helper) are not counted, nor are attributes
    the class reassigns outside `__init__`, names of sequence lengths, and classes that override
    `_apply`, `to` or `cuda`.

    ## Why is this bad?
    `model.to(device)`, `.cuda()` and `.half()` convert parameters and buffers only. A plain
    tensor attribute stays on the CPU, and the first `forward` on a GPU fails with `Expected
    all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!`.
    It is also missing from `state_dict()` and is not copied to the replicas of
    `DataParallel`.

    ## Example
    ```python
    class CausalAttention(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.mask = torch.triu(torch.ones(n, n), diagonal=1).bool()

        def forward(self, scores):
            return scores.masked_fill(self.mask, float("-inf"))
    ```

    ## Use instead
    ```python
    class CausalAttention(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.register_buffer("mask", torch.triu(torch.ones(n, n), diagonal=1).bool(), persistent=False)

        def forward(self, scores):
            return scores.masked_fill(self.mask, float("-inf"))
    ```

    ## Fix safety
    Unsafe. The assignment becomes `self.register_buffer(name, value, persistent=False)`, only
    where the class assigns the attribute once and after `super().__init__()`. A non-persistent
    buffer keeps the `state_dict` as it was, so existing checkpoints still load with
    `strict=True` (drop `persistent=False` if the tensor is state worth saving). Behaviour still
    changes: the tensor now follows `model.to()`, and also `model.half()` / `.double()`
    (floating-point buffers are converted), it appears in `model.buffers()` (DDP broadcasts
    buffers, EMA helpers copy them), and assigning a non-tensor to the name later raises
    `TypeError`.
    """

    code = "TDL009"
    name = "plain-tensor-attribute"
    message = "`self.{attribute}` is a plain tensor attribute that `model.to()` does not move; register it as a buffer"
    needles = ("__init__",)

    valid = (
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.register_buffer('mask', torch.ones(n, n))\n\n"
        "    def forward(self, x):\n        return x * self.mask\n",
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.scale = nn.Parameter(torch.ones(n))\n\n"
        "    def forward(self, x):\n        return x * self.scale\n",
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.scale = torch.ones(n)\n\n"
        "    def forward(self, x):\n        return x * self.scale.to(x.device)\n",
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.temperature = torch.tensor(0.07)\n\n"
        "    def forward(self, x):\n        return x / self.temperature\n",
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.order = torch.randperm(n)\n\n"
        "    def forward(self, x):\n        return x[:, self.order]\n",
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.cache = torch.zeros(n)\n\n"
        "    def forward(self, x):\n        if self.cache.device != x.device:\n"
        "            self.cache = self.cache.to(x.device)\n        return x + self.cache\n",
        "import torch\nfrom torch import nn\n\nclass Prompt(nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.prefix = torch.arange(n)\n\n"
        "    def forward(self, x):\n        return x + self.prefix.unsqueeze(0).expand(x.size(0), -1).to(x.device)\n",
        "import torch\nfrom torch import nn\n\nclass Normalize(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.mean = torch.zeros(3)\n\n"
        "    def forward(self, x):\n        return normalize(x, self.mean)\n",
        "import torch\nfrom torch import nn\n\nclass Head(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.stride = torch.tensor([8.0, 16.0, 32.0])\n\n"
        "    def forward(self, xs):\n        return [x * self.stride[i] for i, x in enumerate(xs)]\n",
        "import torch\n\nclass Buffer:\n    def __init__(self, n):\n        self.data = torch.zeros(n)\n\n"
        "    def forward(self, x):\n        return x + self.data\n",
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.table = torch.arange(n)\n\n"
        "    def describe(self):\n        return self.table.sum()\n",
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.scale = torch.ones(n)\n\n"
        "    def _apply(self, fn, recurse=True):\n        self.scale = fn(self.scale)\n"
        "        return super()._apply(fn, recurse)\n\n"
        "    def forward(self, x):\n        return x * self.scale\n",
    )
    invalid = (
        Invalid(
            "import torch\nfrom torch import nn\n\nclass CausalAttention(nn.Module):\n    def __init__(self, n):\n"
            "        super().__init__()\n        self.mask = torch.triu(torch.ones(n, n), diagonal=1).bool()\n\n"
            "    def forward(self, scores):\n        n = scores.size(-1)\n"
            "        return scores.masked_fill(self.mask[:n, :n].unsqueeze(0), float('-inf'))\n",
            "import torch\nfrom torch import nn\n\nclass CausalAttention(nn.Module):\n    def __init__(self, n):\n"
            "        super().__init__()\n"
            "        self.register_buffer(\n            'mask', torch.triu(torch.ones(n, n), diagonal=1).bool(), persistent=False\n        )\n\n"
            "    def forward(self, scores):\n        n = scores.size(-1)\n"
            "        return scores.masked_fill(self.mask[:n, :n].unsqueeze(0), float('-inf'))\n",
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Normalize(nn.Module):\n    def __init__(self):\n"
            "        super(Normalize, self).__init__()\n"
            "        self.mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)\n\n"
            "    def forward(self, x):\n        return self.center(x)\n\n"
            "    def center(self, x):\n        return x - self.mean\n",
            "import torch\nfrom torch import nn\n\nclass Normalize(nn.Module):\n    def __init__(self):\n"
            "        super(Normalize, self).__init__()\n"
            "        self.register_buffer(\n            \"mean\",\n            torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1),\n"
            "            persistent=False,\n        )\n"
            "\n"
            "    def forward(self, x):\n        return self.center(x)\n\n"
            "    def center(self, x):\n        return x - self.mean\n",
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self, n):\n"
            "        self.scale = torch.ones(n)\n        super().__init__()\n\n"
            "    def forward(self, x):\n        return x * self.scale\n",
        ),
        Invalid(
            "import torch\nimport torch.nn as nn\n\nclass Net(nn.Module):\n    def __init__(self, n, wide):\n"
            "        super().__init__()\n        if wide:\n            self.weights = torch.ones(n, 2 * n)\n"
            "        else:\n            self.weights = torch.ones(n, n)\n\n"
            "    def forward(self, x):\n        return x @ self.weights\n",
            count=2,
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self, n):\n"
            "        super().__init__()\n        self.offset = torch.linspace(0, 1, n)\n\n"
            "    def forward(self, x):\n        y = x + self.offset\n        return y, self.offset.shape\n",
            "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self, n):\n"
            "        super().__init__()\n"
            "        self.register_buffer(\"offset\", torch.linspace(0, 1, n), persistent=False)\n\n"
            "    def forward(self, x):\n        y = x + self.offset\n        return y, self.offset.shape\n",
        ),
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        info = self._module_class_of_init()
        if info is None or not _is_self_attribute(target):
            return
        attribute = target.attr.value
        value = self.analysis.value_of(node.value)
        if value.place is not Place.CPU or not value.origins or self._is_parameter(node.value):
            return
        if "len" in attribute.lower() or any(method_named(info.node, hook) for hook in _DEVICE_HOOKS):
            return
        assignments = list(_assignments(info.node, attribute))
        if any(function.name.value != "__init__" for function, _ in assignments) or _registered(info.node, attribute):
            return
        if not self._used_unmoved(info, attribute):
            return
        fix = None
        if len(assignments) == 1 and self._after_super_init(node):
            quote = self.analysis.binder.quote
            call = expression(f"self.register_buffer({quote}{attribute}{quote}, __value__, persistent=False)")
            assert isinstance(call, cst.Call)
            args = list(call.args)
            args[1] = args[1].with_changes(value=node.value)
            fix = Fix(Safety.UNSAFE, ((node, cst.Expr(call.with_changes(args=args))),))
        self.report(target, self.message.format(attribute=attribute), fix)

    def _module_class_of_init(self) -> Optional[ClassInfo]:
        functions = self.context.enclosing_functions()
        if not functions or functions[0].name.value != "__init__":
            return None
        for ancestor in reversed(self.context.ancestors):
            if isinstance(ancestor, cst.ClassDef):
                info = self.analysis.flow.classes.get(ancestor.name.value)
                return info if info is not None and info.node is ancestor and info.is_module else None
            if isinstance(ancestor, cst.FunctionDef) and ancestor is not functions[0]:
                return None
        return None

    def _is_parameter(self, value: cst.BaseExpression) -> bool:
        return isinstance(value, cst.Call) and self.analysis.qualified_name(value.func) in torch_api.NN_TENSOR_CLASSES

    def _used_unmoved(self, info: ClassInfo, attribute: str) -> bool:
        """A running method combines ``self.<attribute>`` (as it is) with other tensors."""
        for name in info.running_methods:
            method = method_named(info.node, name)
            if method is None or name == "__init__":
                continue
            for path in _reads(method, attribute):
                if self._meets_tensors(path):
                    return True
        return False

    def _meets_tensors(self, path: list[cst.CSTNode]) -> bool:
        """Follow the read up through methods that keep its place (``.unsqueeze(0)``, ``[0]``);
        True where it then meets other tensors: an operator, a ``torch`` function, a combining
        method, a layer of the module. A move (``.to``, ``.type_as``) or metadata is harmless,
        and so is anything this cannot judge (a helper of unknown behaviour, a plain name)."""
        index = len(path) - 1
        while index > 0:
            node, parent = path[index], path[index - 1]
            if isinstance(parent, cst.Attribute) and parent.value is node:
                method = parent.attr.value
                call = path[index - 2] if index >= 2 else None
                if method in _HARMLESS_ATTRIBUTES:
                    return False
                if isinstance(call, cst.Call) and call.func is parent:
                    if method in torch_api.COMBINING_METHODS:
                        return True
                    if method in torch_api.TENSOR_RETURNING_METHODS:
                        index -= 2
                        continue
                return False
            if isinstance(parent, cst.Subscript) and parent.value is node:
                if not any(isinstance(element.slice, cst.Slice) for element in parent.slice):
                    return False  # ``self.strides[i]`` may be a 0-dim element, which mixes freely
                index -= 1
                continue
            if isinstance(parent, cst.BinaryOperation) or is_compared(parent):
                return True
            if isinstance(parent, cst.AugAssign) and parent.value is node:
                return True
            call = path[index - 2] if index >= 2 else None
            if isinstance(parent, cst.Arg) and isinstance(call, cst.Call):
                return self._combining_call(call)
            return False
        return False

    def _combining_call(self, call: cst.Call) -> bool:
        """A call that combines its tensor arguments: ``torch.*`` functions, combining tensor
        methods (``x.masked_fill(mask, v)``), and the module's own layers (``self.conv(x)``)."""
        qualified = self.analysis.qualified_name(call.func)
        if qualified is not None:
            return qualified.startswith("torch.") and qualified not in torch_api.NN_TENSOR_CLASSES
        if isinstance(call.func, cst.Attribute):
            if call.func.attr.value in torch_api.COMBINING_METHODS:
                return True
            return _is_self_attribute(call.func) and self.analysis.value_of(call.func).kind is Kind.MODULE
        return False

    def _after_super_init(self, assignment: cst.Assign) -> bool:
        """``super().__init__()`` (or ``Base.__init__(self)``) runs before the assignment."""
        init = self.context.enclosing_functions()[0]
        for statement in init.body.body if isinstance(init.body, cst.IndentedBlock) else ():
            for node in walk(statement):
                if node is assignment:
                    return False
                if (
                    isinstance(node, cst.Call)
                    and isinstance(node.func, cst.Attribute)
                    and node.func.attr.value == "__init__"
                ):
                    return True
        return False


def _is_self_attribute(target: cst.CSTNode) -> TypeGuard[cst.Attribute]:
    return isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"


def _assignments(klass: cst.ClassDef, attribute: str) -> Iterator[tuple[cst.FunctionDef, cst.CSTNode]]:
    """Every ``self.<attribute> = ...`` (or ``+=``, annotated) in the class's methods."""
    for method in klass.body.body if isinstance(klass.body, cst.IndentedBlock) else ():
        if not isinstance(method, cst.FunctionDef):
            continue
        for node in walk(method):
            for target in assignment_targets(node):
                for element in walk(target):
                    if _is_self_attribute(element) and element.attr.value == attribute:
                        yield method, node


def _registered(klass: cst.ClassDef, attribute: str) -> bool:
    """``self.register_buffer("<attribute>", ...)`` or ``register_parameter`` anywhere in the class."""
    for node in walk(klass):
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in ("register_buffer", "register_parameter")
            and node.args
            and isinstance(node.args[0].value, cst.SimpleString)
            and node.args[0].value.evaluated_value == attribute
        ):
            return True
    return False


def _reads(method: cst.FunctionDef, attribute: str) -> Iterator[list[cst.CSTNode]]:
    """The path from the method body down to each ``self.<attribute>`` that is read, not assigned."""
    stack: list[list[cst.CSTNode]] = [[method.body]]
    while stack:
        path = stack.pop()
        node = path[-1]
        if _is_self_attribute(node) and node.attr.value == attribute:
            parent = path[-2] if len(path) > 1 else None
            assigned = isinstance(parent, cst.AssignTarget) or (
                isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node
            )
            if not assigned:
                yield path
            continue
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and len(path) > 1:
            continue
        for child in iter_child_nodes(node):
            stack.append([*path, child])
