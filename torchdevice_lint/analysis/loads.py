"""What the result of a ``torch.load(...)`` is used for, read from the call's ancestors: does
it only fill a module's parameters (``load_state_dict`` copies onto their device, so the CPU
serves as ``map_location``), or does the code compute with it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import libcst as cst

from torchdevice_lint.analysis.imports import ImportTable
from torchdevice_lint.analysis.tree import functions_holding, walk

if TYPE_CHECKING:  # typing has it from Python 3.10
    from typing_extensions import TypeGuard


def feeds_load_state_dict(ancestors: Sequence[cst.CSTNode]) -> Optional[bool]:
    """How what a ``torch.load(...)`` call (``ancestors``: its own, its parent last) loads reaches
    a ``load_state_dict``: True directly (``m.load_state_dict(torch.load(p))``, also through
    ``torch.load(p)["model"]``), False through the name it is assigned to (``state =
    torch.load(p)``, ``state`` or ``state[...]`` passed to a ``load_state_dict`` in the same
    function), None not at all."""
    parents = [ancestors[-depth] if len(ancestors) >= depth else None for depth in (1, 2, 3, 4)]
    if isinstance(parents[0], cst.Subscript):
        parents = parents[1:]
    arg, call = parents[0], parents[1]
    if isinstance(arg, cst.Arg) and _is_load_state_dict(call):
        return True
    target = _assigned_name(ancestors)
    if target is None:
        return None
    for node in walk(_scope(ancestors)):
        if _is_load_state_dict(node) and any(
            isinstance(name, cst.Name) and name.value == target for arg in node.args for name in walk(arg.value)
        ):
            return False
    return None


def computes_with_result(imports: ImportTable, ancestors: Sequence[cst.CSTNode]) -> bool:
    """The function computes with what ``name = torch.load(p)`` (``ancestors``: the call's)
    loaded: calls it (``name(x)``, ``name.forward(x)``), does arithmetic with it or passes it
    (or an item of it) to a ``torch`` function other than ``torch.save``; or returns it, and
    its caller may."""
    if ancestors and isinstance(ancestors[-1], cst.Return):
        return True
    target = _assigned_name(ancestors)
    if target is None:
        return False

    def is_target(value: cst.BaseExpression) -> bool:
        while isinstance(value, cst.Subscript):
            value = value.value
        return isinstance(value, cst.Name) and value.value == target

    for found in walk(_scope(ancestors)):
        if isinstance(found, cst.Call):
            func = found.func
            if is_target(func) or (isinstance(func, cst.Attribute) and func.attr.value == "forward" and is_target(func.value)):
                return True
            callee = imports.qualified_name(func) or ""
            if callee.startswith("torch.") and callee != "torch.save" and any(is_target(arg.value) for arg in found.args):
                return True
        if isinstance(found, cst.BinaryOperation) and (is_target(found.left) or is_target(found.right)):
            return True
        if isinstance(found, cst.Return) and found.value is not None and is_target(found.value):
            return True
    return False


def _assigned_name(ancestors: Sequence[cst.CSTNode]) -> Optional[str]:
    """``state`` in ``state = torch.load(p)`` (or ``state = torch.load(p)[key]``)."""
    for depth in (1, 2):
        parent = ancestors[-depth] if len(ancestors) >= depth else None
        if isinstance(parent, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            names = [t for t in targets if isinstance(t, cst.Name)]
            return names[0].value if names else None
        if not isinstance(parent, cst.Subscript):
            return None
    return None


def _is_load_state_dict(node: Optional[cst.CSTNode]) -> TypeGuard[cst.Call]:
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "load_state_dict"
    )


def _scope(ancestors: Sequence[cst.CSTNode]) -> cst.CSTNode:
    """The innermost function whose body holds the node of ``ancestors``, or the module."""
    functions = functions_holding(ancestors)
    return functions[0] if functions else ancestors[0]
