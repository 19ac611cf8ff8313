"""Qualified names through the file's imports, without a type checker.

``import torch as t`` makes ``t.zeros`` mean ``torch.zeros``; ``from torch import nn`` makes
``nn.Linear`` mean ``torch.nn.Linear``. Imports anywhere in the file count (function-level
imports are common in scripts); relative imports name the project's own code and are skipped.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` as a string, or None for anything that is not a plain dotted name."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


class ImportTable:
    """Maps the local names bound by imports to the dotted names they stand for."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        #: The local name under which ``torch`` itself is reachable, if any.
        self.torch_alias: Optional[str] = None

    def add(self, node: cst.Import | cst.ImportFrom) -> None:
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

    def _bind(self, local: str, full: str) -> None:
        self.aliases[local] = full
        if full == "torch" and (self.torch_alias is None or local == "torch"):
            self.torch_alias = local

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
