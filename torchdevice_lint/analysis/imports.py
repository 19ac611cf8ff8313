"""Qualified names through the file's imports, without a type checker.

``import torch as t`` makes ``t.zeros`` mean ``torch.zeros``; ``from torch import nn`` makes
``nn.Linear`` mean ``torch.nn.Linear``. Imports anywhere in the file count (function-level
imports are common in scripts); relative imports name the project's own code and are skipped.
"""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` as a string, or None for anything that is not a plain dotted name."""
    # ``type(...) is``: asked for nearly every call of a file, and ``isinstance`` on LibCST's
    # abstract-base-class instances is slow (neither class has subclasses).
    parts = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


class ImportTable:
    """Maps the local names bound by imports to the dotted names they stand for."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        #: The local name under which ``torch`` itself is reachable, if any.
        self.torch_alias: Optional[str] = None
        #: Where each local name of ``torch`` is bound: None for the module level, else the
        #: function whose body imports it (a class body's import reaches no method).
        self._torch_bound_in: dict[str, set[Optional[cst.CSTNode]]] = {}
        self._scope: Optional[cst.CSTNode] = None
        #: The module level imports from ``torch`` (``from torch.utils.data import DataLoader``):
        #: a module-level ``import torch`` adds no dependency the file lacks.
        self.torch_package_at_module_level = False

    def add(self, node: cst.Import | cst.ImportFrom, scope: Optional[cst.CSTNode] = None) -> None:
        """Record ``node``, found in ``scope``: None at the module level (also under a
        module-level ``if``/``try``), else the function or class whose body holds it."""
        self._scope = scope
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name)
                if full is None:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self._bind(alias.asname.name.value, full)
                else:
                    head = full.split(".", 1)[0]
                    self._bind(head, head)
            return
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = dotted_name(node.module)
        if module is None:
            return
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            local = alias.name.value
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self._bind(local, f"{module}.{alias.name.value}")

    def add_star_import(self, names: dict[str, str]) -> None:
        """Names a module-level ``from M import *`` brings (see `ProjectView.torch_names_of_star_import`):
        they qualify what the file reads, but a fix that writes ``torch`` still imports it."""
        for local, full in names.items():
            self.aliases.setdefault(local, full)

    def _bind(self, local: str, full: str) -> None:
        self.aliases[local] = full
        if self._scope is None and (full == "torch" or full.startswith("torch.")):
            self.torch_package_at_module_level = True
        if full == "torch":
            self._torch_bound_in.setdefault(local, set()).add(self._scope)
            if self.torch_alias is None or local == "torch":
                self.torch_alias = local

    def torch_at_module_level(self) -> Optional[str]:
        """The name ``torch`` has at the module level (``"torch"`` preferred), or None when the
        file imports it only inside functions (scripts that import lazily) or not at all."""
        names = [local for local, scopes in self._torch_bound_in.items() if None in scopes]
        return "torch" if "torch" in names else min(names, default=None)

    def torch_for_fix(self, functions: Sequence[cst.CSTNode]) -> tuple[Optional[str], bool]:
        """The name of ``torch`` a fix nested in ``functions`` writes, and whether the fix must
        add ``import torch`` for it (the file imports only torch's submodules); None where the
        file imports torch lazily, inside other functions, or not at all."""
        reachable = self.torch_reachable(functions)
        if reachable is None and self.torch_package_at_module_level and not self._torch_bound_in:
            return "torch", True
        return reachable, False

    def torch_reachable(self, functions: Sequence[cst.CSTNode]) -> Optional[str]:
        """The name of ``torch`` that code nested in ``functions`` (innermost first) can read:
        imported at the module level or in one of those functions; None if neither."""
        module_level = self.torch_at_module_level()
        if module_level is not None:
            return module_level
        names = [local for local, scopes in self._torch_bound_in.items() if scopes & set(functions)]
        return "torch" if "torch" in names else min(names, default=None)

    def qualified_name(self, node: cst.BaseExpression) -> Optional[str]:
        """The imported name an expression refers to, e.g. ``torch.nn.Linear``."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        full = self.aliases.get(head)
        if full is None:
            return None
        return f"{full}.{rest}" if rest else full
