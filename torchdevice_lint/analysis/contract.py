"""Where the code itself shows a place is the CPU, so the device-agnostic contract does not hold.

The contract says tensors from the caller live on the caller's device. Data loading runs on
the CPU by design (a ``Dataset.__getitem__``, a collate function, DataLoader workers), and a
branch taken when CUDA is missing is the CPU by construction.
"""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.imports import ImportTable, dotted_name
from torchdevice_lint.analysis.semantics import device_argument_place
from torchdevice_lint.analysis.tree import walk
from torchdevice_lint.analysis.values import Place, Value

#: Functions that build batches on the CPU, before anything moves them.
DATA_LOADING_FUNCTIONS = ("__getitem__", "__iter__", "__next__", "collate")
#: Words in an ``if`` test that make its branches a choice between CPU and device.
_AVAILABILITY_WORDS = ("is_available", "cpu")
#: Words in an ``if`` test whose body runs only while a model is traced or exported
#: (``torch.jit.is_tracing()``, icefall's ``is_jit_tracing()``, ``torch.onnx.is_in_onnx_export()``).
_EXPORT_WORDS = ("is_tracing", "is_jit_tracing", "is_scripting", "is_in_onnx_export")


def is_data_loading(function: cst.FunctionDef) -> bool:
    """``__getitem__``, ``collate_fn``: functions that build batches on the CPU."""
    return any(word in function.name.value for word in DATA_LOADING_FUNCTIONS)


def runs_on_cpu(module: cst.Module, ancestors: Sequence[cst.CSTNode]) -> bool:
    """Inside data loading (a Dataset, a collate function), a branch of an availability test,
    or the body of a test for tracing or export: an exported graph records the device of what
    it makes as a constant, and export scripts trace on the CPU (icefall's ``rel_shift``)."""
    for node in ancestors:
        if isinstance(node, cst.FunctionDef) and is_data_loading(node):
            return True
        if isinstance(node, cst.ClassDef) and _builds_batches(node):
            return True
        if isinstance(node, (cst.If, cst.IfExp)):
            test = module.code_for_node(node.test)
            if any(word in test for word in _AVAILABILITY_WORDS):
                return True
    return _in_an_export_branch(ancestors)


def _builds_batches(node: cst.ClassDef) -> bool:
    """A Dataset, or a collator (``DataCollatorForLanguageModeling``, a ``collate_fn`` object):
    what it makes is a batch, moved to the device by the loop that takes it."""
    return builds_batches_by_bases([dotted_name(base.value) or "" for base in node.bases], node.name.value)


def builds_batches_by_bases(bases: list[str], name: str = "") -> bool:
    """`_builds_batches` from a class's name and its bases as written."""
    return any(base.endswith("Dataset") for base in bases) or any("Collat" in part for part in (name, *bases))


def asserts_cpu_tensor(function: cst.FunctionDef, imports: ImportTable) -> bool:
    """The function asserts that an argument is a CPU tensor type (``assert isinstance(edge_index,
    (torch.LongTensor, SparseTensor))``: ``torch.LongTensor`` is only the CPU's): it runs on the CPU."""
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        statement = stack.pop()
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue  # a nested definition asserts for itself
        if not isinstance(statement, cst.Assert):
            stack.extend(statement.children)
            continue
        for node in walk(statement.test):
            if (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Name)
                and node.func.value == "isinstance"
                and len(node.args) == 2
                and any(_is_cpu_tensor_type(imports, kind) for kind in _types_of(node.args[1].value))
            ):
                return True
    return False


def _types_of(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.Tuple):
        return [element.value for element in node.elements]
    return [node]


def _is_cpu_tensor_type(imports: ImportTable, node: cst.BaseExpression) -> bool:
    name = imports.qualified_name(node) or ""
    return name in torch_api.LEGACY_TENSOR_TYPES and name != "torch.Tensor" and not name.startswith("torch.cuda.")


def only_test_code_uses(module: cst.Module, function: cst.FunctionDef) -> bool:
    """A module-level helper that only test code of the file uses (``_fake_probs`` called by
    ``_batch_fake_probs``, called by ``test_subsequence_loss``): test code, as the tests are.
    The helper is private (``_name``) or the module is a pytest module (it defines ``test_*``
    functions at its top level), so it is no library's API used from other files."""
    top = {statement.name.value: statement for statement in module.body if isinstance(statement, cst.FunctionDef)}
    name = function.name.value
    if top.get(name) is not function:
        return False
    pytest_module = any(other.startswith("test_") for other in top)
    if not (name.startswith("_") or pytest_module):
        return False
    users = _users_by_name(module)
    tested: dict[str, bool] = {}

    def test_only(current: str, seen: frozenset[str]) -> bool:
        if current in tested:
            return tested[current]
        owners = users.get(current, set()) - {current}
        result = bool(owners) and all(
            owner is not None
            and ("test" in owner.lower() or (owner in top and owner not in seen and test_only(owner, seen | {owner})))
            for owner in owners
        )
        tested[current] = result
        return result

    return test_only(name, frozenset({name}))


def _users_by_name(module: cst.Module) -> dict[str, set[Optional[str]]]:
    """For each name read in the module, the top-level functions and classes that read it (None:
    the module's own top-level code)."""
    users: dict[str, set[Optional[str]]] = {}
    for statement in module.body:
        owner = statement.name.value if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) else None
        for node in walk(statement):
            if isinstance(node, cst.Name):
                users.setdefault(node.value, set()).add(owner)
    return users


def cpu_chosen(ancestors: Sequence[cst.CSTNode], values: dict[cst.CSTNode, Value]) -> bool:
    """The code chose the CPU for the tensor a factory call makes (``ancestors``: the call's,
    its parent last): moved to the host at once, or made in the CPU branch of an ``is_cuda``
    test. TDL003 asks no ``device=`` there, and TDL006 gives its replacement of a legacy
    constructor no caller's device."""
    return _placed_on_the_host(ancestors, values) or _in_a_cpu_branch(ancestors) or _in_an_export_branch(ancestors)


def _in_an_export_branch(ancestors: Sequence[cst.CSTNode]) -> bool:
    """In the body of ``if torch.jit.is_tracing():`` (or ``is_scripting()``, icefall's
    ``is_jit_tracing()``, ``torch.onnx.is_in_onnx_export()``, alone or joined by ``or``): code
    that runs only while a model is exported, which records the device of what it makes as a
    constant; export scripts trace on the CPU (icefall's and wenet's ``rel_shift``)."""
    for index, ancestor in enumerate(ancestors[:-1]):
        if isinstance(ancestor, (cst.If, cst.IfExp)) and ancestors[index + 1] is ancestor.body:
            if _tests_export(ancestor.test):
                return True
    return False


def _tests_export(test: cst.BaseExpression) -> bool:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return _tests_export(test.left) and _tests_export(test.right)
    if not (isinstance(test, cst.Call) and not test.args):
        return False
    func = test.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name in _EXPORT_WORDS


def _placed_on_the_host(ancestors: Sequence[cst.CSTNode], values: dict[cst.CSTNode, Value]) -> bool:
    """``torch.zeros(n).cpu()``, ``.to("cpu")``: the code states the CPU for this tensor
    (the branch of an availability test without CUDA); ``device=`` would be moved back."""
    if len(ancestors) < 2:
        return False
    attribute, call = ancestors[-1], ancestors[-2]
    if not (isinstance(attribute, cst.Attribute) and isinstance(call, cst.Call) and call.func is attribute):
        return False
    if attribute.attr.value == "cpu":
        return True
    target = call.args[0].value if attribute.attr.value == "to" and call.args else None
    return target is not None and device_argument_place(target, values) is Place.CPU


def _asks_for_cuda(test: cst.BaseExpression) -> bool:
    """``torch.cuda.is_available()`` (or ``cuda.is_available()``), nothing more."""
    return (
        isinstance(test, cst.Call)
        and not test.args
        and isinstance(test.func, cst.Attribute)
        and test.func.attr.value == "is_available"
        and isinstance(test.func.value, (cst.Attribute, cst.Name))
        and (test.func.value.attr.value if isinstance(test.func.value, cst.Attribute) else test.func.value.value) == "cuda"
    )


def _in_a_cpu_branch(ancestors: Sequence[cst.CSTNode]) -> bool:
    """In the branch an ``is_cuda`` test takes for a CPU tensor: the ``else`` of ``if
    x.is_cuda:`` (or of ``... if x.is_cuda else ...``), the body of ``if not x.is_cuda:``
    (few-shot-vid2vid's ``torch.cuda.ByteTensor`` / ``torch.ByteTensor`` pair, whose CPU
    half TDL006 rewrites to ``torch.empty``), or the same of ``torch.cuda.is_available()``
    (pytorch-retinanet's focal loss: ``.cuda()`` on one side, the CPU on the other): the code
    already chose the CPU there."""
    for index, ancestor in enumerate(ancestors[:-1]):
        if not isinstance(ancestor, (cst.If, cst.IfExp)):
            continue
        test, negated = ancestor.test, False
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, negated = test.expression, True
        if not (isinstance(test, cst.Attribute) and test.attr.value == "is_cuda") and not _asks_for_cuda(test):
            continue
        child = ancestors[index + 1]
        if (child is ancestor.orelse) != negated and child is not ancestor.test:
            return True
    return False
