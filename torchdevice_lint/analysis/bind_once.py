"""One device line per function for a switch device written at several sites.

A fix that reads the repository's own switch in a function writes the device inline,
``.to(torch.device("cuda" if use_cuda else "cpu"))`` (`DeviceBinder.choose`). Where a function
gets that same expression at two or more sites (TimeCycle's ``train(..., use_cuda)`` moves four
batches), the engine binds it once, right before the first statement of the function that reads it,
and the sites use the name::

    def train(loader, model, use_cuda):
        model.train()
        device = torch.device("cuda" if use_cuda else "cpu")
        for imgs, target in loader:
            imgs = Variable(imgs.to(device))

Only where the top of the function can read the switch and it stays the same through the body:
every name the test reads is a parameter of the function (``self`` outside ``__init__``), the
function never rebinds it nor assigns or changes the switch in place, and the function (nested
functions included) does not use the name the line binds.
"""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from torchdevice_lint.analysis.imports import dotted_name
from torchdevice_lint.analysis.tree import bound_targets, walk

#: Names a switch test may call besides the switch (``len(gpu_ids) > 0``).
_BUILTINS = frozenset({"len", "bool", "int"})


def switch_device_test(call: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The test of ``torch.device("cuda" if <test> else "cpu")``, or None for any other node."""
    if not isinstance(call, cst.Call) or len(call.args) != 1 or call.args[0].keyword is not None:
        return None
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "device":
        return None
    chosen = call.args[0].value
    if not isinstance(chosen, cst.IfExp):
        return None
    body, orelse = chosen.body, chosen.orelse
    if not (isinstance(body, cst.SimpleString) and isinstance(orelse, cst.SimpleString)):
        return None
    if body.evaluated_value != "cuda" or orelse.evaluated_value != "cpu":
        return None
    return chosen.test


def can_bind_once(function: cst.FunctionDef, test: cst.BaseExpression, name: str) -> bool:
    """Whether ``name = torch.device("cuda" if <test> else "cpu")`` may open ``function``."""
    if not isinstance(function.body, cst.IndentedBlock):
        return False
    params = {
        param.name.value
        for param in (
            *function.params.posonly_params,
            *function.params.params,
            *function.params.kwonly_params,
        )
    }
    for extra in (function.params.star_arg, function.params.star_kwarg):
        if isinstance(extra, cst.Param):
            params.add(extra.name.value)
    if name in params:
        return False
    roots = _names_in(test) - _BUILTINS
    if not roots or not roots <= params:
        return False
    if "self" in roots and function.name.value == "__init__":
        return False
    switches = {dotted for node in walk(test) if (dotted := _dotted(node)) is not None and "." in dotted}
    nodes = list(walk(function.body))  # nested functions included
    if name in _names_among(nodes):
        return False  # the name is taken (a local, a global it reads, a nested function's)
    for node in nodes:
        if isinstance(node, cst.Global) and any(item.name.value in roots for item in node.names):
            return False
        if any(isinstance(target, cst.Name) and target.value in roots for target in bound_targets(node)):
            return False
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = node.targets if isinstance(node, cst.Assign) else [node]
            for target in targets:
                value = target.target
                if any(_dotted(part) in switches for part in walk(value)):
                    return False
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            changed = _dotted(node.func.value)
            if changed is not None and (changed in switches or (changed in roots and changed != "self")):
                return False  # ``gpu_ids.append(i)``, ``self.gpu_ids.append(i)`` (a method of ``self`` is no change)
    return True


def _names_in(node: cst.CSTNode) -> set[str]:
    """The variable names ``node`` reads or binds: not attribute names (``torch.device``) nor
    keywords (``device=...``)."""
    return _names_among(list(walk(node)))


def _names_among(nodes: list[cst.CSTNode]) -> set[str]:
    """`_names_in` of the tree whose every node ``nodes`` lists."""
    skipped = {id(n.attr) for n in nodes if isinstance(n, cst.Attribute)}
    skipped |= {id(n.keyword) for n in nodes if isinstance(n, cst.Arg) and n.keyword is not None}
    return {n.value for n in nodes if isinstance(n, cst.Name) and id(n) not in skipped}


def _dotted(node: cst.CSTNode) -> Optional[str]:
    return dotted_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None


class BindOnce(cst.CSTTransformer):
    """Binds each switch device that a function got at two or more of the ``created`` sites
    (ids of the ``torch.device(...)`` calls the fixes wrote) once, right before the function's
    first statement that holds one of them (the switch never changes in the function)."""

    def __init__(self, created: Iterable[int], name: str) -> None:
        super().__init__()
        self.created = set(created)
        self.name = name
        self._stack: list[list[cst.Call]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._stack.append([])

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if self._stack and id(original) in self.created:
            self._stack[-1].append(updated)
        return updated

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        sites = self._stack.pop()
        if len(sites) < 2 or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        module = cst.Module([])
        texts = {module.code_for_node(site) for site in sites}
        if len(texts) != 1:
            return updated  # two switches in one function: left inline
        test = switch_device_test(sites[0])
        if test is None or not can_bind_once(original, test, self.name):
            return updated
        ids = {id(site) for site in sites}
        holding = [i for i, statement in enumerate(updated.body.body) for node in walk(statement) if id(node) in ids]
        if len(holding) != len(ids):
            return updated  # a site outside the body (a parameter's default): read before any line of it
        at = min(holding)
        text = texts.pop()
        replaced = updated.visit(_Named(ids, self.name))
        assert isinstance(replaced, cst.FunctionDef) and isinstance(replaced.body, cst.IndentedBlock)
        body = list(replaced.body.body)
        # right before the first statement that reads it: the blank lines above that statement stay
        # above the device line, the comment lines directly on it stay on it (written for it), but
        # those right under the ``def`` line describe the function, as a docstring would: they stay first
        leading: list[cst.EmptyLine] = list(getattr(body[at], "leading_lines", ()))
        above = max((i + 1 for i, line in enumerate(leading) if line.comment is None), default=0)
        if at == 0:
            above = max(above, next((i for i, line in enumerate(leading) if line.comment is None), len(leading)))
        line = cst.parse_statement(f"{self.name} = {text}\n")
        body[at] = body[at].with_changes(leading_lines=leading[above:])
        body.insert(at, line.with_changes(leading_lines=leading[:above]))
        return replaced.with_changes(body=replaced.body.with_changes(body=body))


class _Named(cst.CSTTransformer):
    def __init__(self, sites: set[int], name: str) -> None:
        super().__init__()
        self.sites = sites
        self.name = name

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        return cst.Name(self.name) if id(original) in self.sites else updated

