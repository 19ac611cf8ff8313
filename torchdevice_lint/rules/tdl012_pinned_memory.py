from __future__ import annotations

import re
from typing import Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis import Place, guards, torch_api
from torchdevice_lint.analysis.flow import device_argument_place
from torchdevice_lint.analysis.guards import in_test_code
from torchdevice_lint.analysis.tree import (
    called_name,
    is_compared,
    iter_child_nodes,
    keyword_argument,
    positional_arguments,
    walk,
)
from torchdevice_lint.findings import Fix, Safety
from torchdevice_lint.rule import Invalid, Rule
from torchdevice_lint.rules._edits import expression

#: Methods whose call copies a tensor's values to Python or NumPy: they read host memory.
_READING_METHODS = frozenset({"numpy", "item", "tolist"})

#: Builtins that read a tensor's values.
_READING_BUILTINS = frozenset({"print", "float", "int", "bool", "str", "repr", "list"})

#: Code that only runs with an accelerator: it asserts one, sets up one process per GPU, places
#: everything on a GPU index, or measures GPU memory.
_ACCELERATOR_ONLY = re.compile(
    r"assert\s+torch\.(cuda|accelerator)\.is_available\(\)"
    r"|nccl|xccl|\bLOCAL_RANK\b|device_ids\s*=|\.to\((self\.)?(gpu_id|gpu|local_rank|rank)\)"
    r"|torch\.(cuda|xpu)\.(set_device|reset_peak_memory_stats|max_memory_allocated)\("
)

#: A program that may run without an accelerator says so somewhere.
_CPU_FALLBACK = re.compile(r"is_available\(|[\"']cpu[\"']|accelerator[\"']?\s*[=:]\s*[\"']auto")

#: What the accelerator checks look like in each ``--device-style``.
_AVAILABILITY = {"cuda": "{torch}.cuda.is_available()", "accelerator": "{torch}.accelerator.is_available()"}


class PinnedMemory(Rule):
    """
    ## What it does
    Flags two misuses of pinned (page-locked) host memory:

    - `pin_memory=True` written as a constant (a keyword of a loader such as `DataLoader` or
      `NeighborLoader`, of a `torch` factory or of `dict(...)`, or a `"pin_memory": True`
      entry of a dict literal) outside a device check (an `if` on the device or its
      availability, also through a flag such as `use_accel = torch.accelerator.is_available()`,
      or a conditional expression) and outside test code, in a file that shows it runs
      without an accelerator too (an availability check, a `"cpu"` device,
      `accelerator="auto"`, or the CPU fallback another finding's fix writes) and does not require an accelerator (`assert
      torch.cuda.is_available()`, NCCL, `LOCAL_RANK`, `device_ids=`, `.to(gpu_id)`,
      `torch.cuda.set_device`, GPU memory statistics); a loader helper that
      never says where it runs is left to its callers;
    - `non_blocking=True` on a copy from the device to the host (`.to("cpu", non_blocking=True)`,
      `.to(device="cpu", non_blocking=True)`; `Tensor.cpu()` takes no `non_blocking`) whose
      result is read (`.numpy()`, `.item()`,
      `.tolist()`, `print`, `float`, a comparison, an `if`) in the same block before anything
      synchronizes (`torch.cuda.synchronize()`, `stream.synchronize()`, `event.wait()`, or a
      blocking copy such as `.item()` or `.cpu()` of another tensor).

    ## Why is this bad?
    Pinning needs an accelerator: without one, `DataLoader(..., pin_memory=True)` warns on
    every run ("pin_memory argument is set as true but no accelerator is found") and
    `torch.empty(..., pin_memory=True)` raises. A non-blocking copy to the host only queues the
    copy and returns at once: until the device has run it, the CPU tensor holds whatever the
    pinned buffer held before, so the values read can be zeros or stale. The code works on a
    CPU and reads wrong numbers on a GPU, without an error.

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=64, pin_memory=True)
    scores = logits.to("cpu", non_blocking=True)
    print(scores.tolist())
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_size=64, pin_memory=torch.cuda.is_available())
    scores = logits.to("cpu", non_blocking=True)
    torch.cuda.synchronize()
    print(scores.tolist())
    ```

    ## Fix safety
    Safe: `pin_memory=True` becomes `pin_memory=torch.cuda.is_available()` (with
    `--device-style accelerator`, `torch.accelerator.is_available()`, which also covers Apple
    MPS and Intel XPU), so memory is pinned exactly where it was pinned before and nowhere it
    would only warn. A file that imports only torch's submodules (`from torch.utils.data import
    DataLoader`) gets `import torch` with the fix; one that imports torch only inside other
    functions (often because torch is optional there), or not at all, is reported without a fix. A
    non-blocking read is reported without a fix: synchronize before the read, or drop
    `non_blocking=True`.
    """

    code = "TDL012"
    name = "pinned-memory"
    message = "`pin_memory=True` without an accelerator only warns; use `pin_memory={check}`"
    read_message = "the result of a non-blocking copy to the host is read before synchronizing; it may not be there yet"
    needles = ("pin_memory", "non_blocking")
    reads_coming_cpu_fallback = True

    valid = (
        "import torch\nloader = DataLoader(ds, pin_memory=torch.cuda.is_available())\n",
        "import torch\nuse_cuda = torch.cuda.is_available()\n"
        "kwargs = {'num_workers': 1, 'pin_memory': True} if use_cuda else {}\n",
        "import torch\nif torch.cuda.is_available():\n    loader = DataLoader(ds, pin_memory=True)\n",
        "import torch\n\ndef make_loader(ds, pin_memory=True):\n    return DataLoader(ds, pin_memory=pin_memory)\n",
        "import torch\nloader = DataLoader(ds, pin_memory=False)\n",
        "import torch\nuse_accel = torch.accelerator.is_available()\nif use_accel:\n"
        "    loader_kwargs = {'num_workers': 1, 'pin_memory': True}\n",
        "import torch\nmodel = GeminiDDP(model, placement_policy='auto', pin_memory=True)\n",
        "import torch\n\ndef make_loader(ds, workers):\n    return DataLoader(ds, num_workers=workers, pin_memory=True)\n",
        "import torch\nassert torch.cuda.is_available()\nloader = DataLoader(ds, pin_memory=True)\n",
        "import torch\nimport torch.distributed as dist\ndist.init_process_group('nccl')\n"
        "loader = DataLoader(ds, pin_memory=True, sampler=DistributedSampler(ds))\n",
        "from unittest import mock\nimport torch\n\ndef test_loader(dl_mock):\n"
        "    dl_mock.assert_called_once_with(ds, batch_size=4, pin_memory=True)\n",
        "import torch\nscores = logits.to('cpu', non_blocking=True)\ntorch.cuda.synchronize()\nprint(scores.tolist())\n",
        "import torch\nhost = x.to('cpu', non_blocking=True)\nbatch = y.to(device, non_blocking=True)\nreturn_value = host\n",
        "import torch\nhost = x.to('cpu', non_blocking=True)\nlengths = sizes.cpu()\nprint(host.sum().item())\n",
        "import torch\nbatch = batch.to(device, non_blocking=True)\nprint(batch.shape)\n",
    )
    invalid = (
        Invalid(
            "import torch\nfrom torch.utils.data import DataLoader\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "loader = DataLoader(ds, batch_size=64, pin_memory=True)\n",
            "import torch\nfrom torch.utils.data import DataLoader\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "loader = DataLoader(ds, batch_size=64, pin_memory=torch.cuda.is_available())\n",
        ),
        Invalid(
            "import torch\nloader_kwargs = {'num_workers': 4, 'pin_memory': True}\nmodel.to('cpu')\n",
            "import torch\nloader_kwargs = {'num_workers': 4, 'pin_memory': torch.cuda.is_available()}\n"
            "model.to('cpu')\n",
        ),
        Invalid(  # a file that imports only from torch's submodules gets ``import torch`` with the fix
            "from torch.utils.data import DataLoader\nfrom lightning import Trainer\n"
            "loader = DataLoader(ds, pin_memory=True)\ntrainer = Trainer(accelerator='auto')\n",
            "import torch\nfrom torch.utils.data import DataLoader\nfrom lightning import Trainer\n"
            "loader = DataLoader(ds, pin_memory=torch.cuda.is_available())\ntrainer = Trainer(accelerator='auto')\n",
        ),
        Invalid("import torch\nscores = logits.to('cpu', non_blocking=True)\nprint(scores.tolist())\n"),
        Invalid("import torch\ntotal = loss.to(device='cpu', non_blocking=True).item()\n"),
        Invalid(
            "import torch\n\ndef check(x):\n    host = x.to(torch.device('cpu'), non_blocking=True)\n"
            "    if host.max() > 1:\n        raise ValueError(host)\n",
        ),
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self._flags: Optional[set[str]] = None
        self._cpu_fallback: Optional[bool] = None

    # ------------------------------------------------------------------ pin_memory
    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value == "pin_memory" and _is_true(node.value):
            call = self.context.parent()
            if isinstance(call, cst.Call) and self._pins_host_memory(call):
                self._pin_memory(node.value)

    def _pins_host_memory(self, call: cst.Call) -> bool:
        """A loader (``DataLoader``, ``NeighborLoader``, ``auto_dataloader``), a ``torch``
        factory, or ``dict(...)`` configuration; not other APIs that reuse the name."""
        qualified = self.analysis.qualified_name(call.func)
        if qualified is not None and qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1][:1].islower():
            return True
        name = called_name(call) or ""
        return "loader" in name.lower() or name == "dict"

    def visit_DictElement(self, node: cst.DictElement) -> None:
        key = node.key
        if isinstance(key, cst.SimpleString) and key.evaluated_value == "pin_memory" and _is_true(node.value):
            self._pin_memory(node.value)

    def _pin_memory(self, value: cst.BaseExpression) -> None:
        if self._guarded() or in_test_code(self.analysis.imports, self.context.ancestors) or not self._runs_without_an_accelerator():
            return
        torch_name, adds_import = self.analysis.imports.torch_for_fix(self.context.enclosing_functions())
        style = self.analysis.binder.style if self.analysis.binder.style in _AVAILABILITY else "cuda"
        check = _AVAILABILITY[style].format(torch=torch_name or "torch")
        fix = None
        if torch_name is not None:
            fix = Fix(Safety.SAFE, ((value, expression(check)),), needs_torch_import=adds_import)
        self.report(value, self.message.format(check=check), fix)

    def _guarded(self) -> bool:
        """Under a device check, also one through a flag: ``use_accel = torch.accelerator.is_available()``
        and later ``if use_accel:``."""
        module = self.analysis.module
        if guards.under_device_check(module, self.context.ancestors):
            return True
        for node in self.context.ancestors:
            if isinstance(node, cst.If):
                flags = {n.value for n in walk(node.test) if isinstance(n, cst.Name)}
                if flags & self._device_flags():
                    return True
        return False

    def _runs_without_an_accelerator(self) -> bool:
        """The file shows a CPU fallback (an availability check, a ``"cpu"`` device,
        ``accelerator="auto"``) and does not require one (``assert torch.cuda.is_available()``,
        NCCL, ``LOCAL_RANK``, ``device_ids=``, ``.to(gpu_id)``, ``torch.cuda.set_device``, GPU
        memory statistics):
        only then does the program run where pinning warns. Code that never says where it
        runs (a library's loader helper) is left to its callers."""
        if self._cpu_fallback is None:
            code = self.analysis.module.code
            fallback = self.analysis.cpu_fallback_coming or _CPU_FALLBACK.search(code) is not None
            self._cpu_fallback = fallback and _ACCELERATOR_ONLY.search(code) is None
        return self._cpu_fallback

    def _device_flags(self) -> set[str]:
        """Names assigned from an expression that mentions the device or its availability."""
        if self._flags is None:
            self._flags = set()
            for node in walk(self.analysis.module):
                if isinstance(node, cst.Assign) and guards.mentions_device(self.analysis.module, node.value):
                    self._flags.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
        return self._flags

    # ---------------------------------------------------------------- non_blocking
    def visit_Call(self, node: cst.Call) -> None:
        if not self._is_non_blocking_copy_to_host(node):
            return
        if self._read_at_once(node) or self._read_later(node):
            self.report(node, self.read_message)

    def _is_non_blocking_copy_to_host(self, node: cst.Call) -> bool:
        func = node.func
        if not isinstance(func, cst.Attribute) or self.analysis.qualified_name(func) is not None:
            return False
        if func.attr.value != "to" or not _is_true(keyword_argument(node, "non_blocking")):
            return False
        target = keyword_argument(node, "device") or next(iter(positional_arguments(node)), None)
        return target is not None and device_argument_place(target, self.analysis.flow.values) is Place.CPU

    def _read_at_once(self, node: cst.Call) -> bool:
        """``x.to("cpu", non_blocking=True).item()``, ``float(...)`` of it, a comparison."""
        parent, grandparent = self.context.parent(), self.context.parent(2)
        if isinstance(parent, cst.Attribute) and parent.attr.value in _READING_METHODS:
            return True
        if is_compared(parent):
            return True
        return isinstance(parent, cst.Arg) and _calls_builtin(grandparent, _READING_BUILTINS)

    def _read_later(self, node: cst.Call) -> bool:
        """``host = x.to("cpu", non_blocking=True)`` and a read of ``host`` in the same block first."""
        assign = self.context.parent()
        line = self.context.parent(2)
        block = self.context.parent(3)
        if not (
            isinstance(assign, cst.Assign)
            and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
            and isinstance(line, cst.SimpleStatementLine)
        ):
            return False
        name = assign.targets[0].target.value
        statements: Sequence[cst.CSTNode] = block.body if isinstance(block, (cst.IndentedBlock, cst.Module)) else ()
        if line not in statements:
            return False
        for statement in statements[list(statements).index(line) + 1 :]:
            verdict = self._statement_verdict(statement, name)
            if verdict is not None:
                return verdict
        return False

    def _statement_verdict(self, statement: cst.CSTNode, name: str) -> Optional[bool]:
        """True: reads ``name``; False: synchronizes or rebinds it first; None: neither."""
        for node in _in_evaluation_order(statement):
            if isinstance(node, cst.Call) and self._synchronizes(node, name):
                return False
            if isinstance(node, cst.Name) and node.value == name and self._is_read(node, statement):
                return True
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and any(
                    isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets
                ):
                    return False
        return None

    def _synchronizes(self, call: cst.Call, name: str) -> bool:
        func = call.func
        if not isinstance(func, cst.Attribute):
            return False
        method = func.attr.value
        if method in torch_api.SYNCHRONIZING_METHODS:
            return True
        mentions_name = any(isinstance(n, cst.Name) and n.value == name for n in walk(func.value))
        if mentions_name:
            return False
        if method in _READING_METHODS:
            return True  # a blocking copy of another tensor waits for the queued work
        return method in ("cpu", "to") and not _is_true(keyword_argument(call, "non_blocking")) and (
            method == "cpu" or self._is_copy_to_host(call)
        )

    def _is_copy_to_host(self, call: cst.Call) -> bool:
        target = keyword_argument(call, "device") or next(iter(positional_arguments(call)), None)
        return target is not None and device_argument_place(target, self.analysis.flow.values) is Place.CPU

    def _is_read(self, use: cst.Name, statement: cst.CSTNode) -> bool:
        """``use`` (``host``) is read: a reading method on it, a reading builtin, a comparison, a test."""
        path = _path_to(statement, use)
        if path is None:
            return False
        for child, parent in zip(reversed(path[1:]), reversed(path[:-1])):
            if isinstance(parent, cst.Attribute) and parent.value is child:
                if parent.attr.value in _READING_METHODS:
                    return True
                continue
            if isinstance(parent, (cst.Call, cst.Subscript, cst.SubscriptElement, cst.Index, cst.Slice)):
                if isinstance(parent, cst.Call) and parent.func is not child:
                    return False
                continue
            if isinstance(parent, cst.Arg):
                call = path[path.index(parent) - 1]
                return _calls_builtin(call, _READING_BUILTINS)
            if is_compared(parent):
                return True
            if isinstance(parent, (cst.If, cst.While, cst.IfExp)) and parent.test is child:
                return True
            if isinstance(parent, cst.BinaryOperation):
                continue
            return False
        return False


def _is_true(node: Optional[cst.BaseExpression]) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _calls_builtin(node: Optional[cst.CSTNode], names: frozenset[str]) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in names


def _in_evaluation_order(statement: cst.CSTNode):
    """The nodes of a statement roughly in the order they run: arguments before their call."""
    order: list[cst.CSTNode] = []

    def visit(node: cst.CSTNode) -> None:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return
        children = list(iter_child_nodes(node))
        if isinstance(node, cst.Call):
            children = [*(c for c in children if c is not node.func), node.func]
        for child in children:
            visit(child)
        order.append(node)

    visit(statement)
    return order


def _path_to(root: cst.CSTNode, target: cst.CSTNode) -> Optional[list[cst.CSTNode]]:
    """The nodes from ``root`` down to ``target``, both included."""
    stack: list[tuple[cst.CSTNode, list[cst.CSTNode]]] = [(root, [root])]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        for child in iter_child_nodes(node):
            stack.append((child, [*path, child]))
    return None
