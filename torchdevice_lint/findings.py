"""What a check produces: findings, and the fixes they may carry."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst


class Safety(enum.Enum):
    #: Keeps what the program computes wherever it already ran; applied by ``--fix``.
    SAFE = "safe"
    #: May change behaviour (a dropped device index, other random numbers); ``--unsafe-fixes``.
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Fix:
    safety: Safety
    #: Pairs of (original node, replacement node), applied by node identity.
    replacements: tuple[tuple[cst.CSTNode, cst.CSTNode], ...]
    #: The replacement refers to the module-level device binding the engine inserts.
    needs_device_binding: bool = False


@dataclass(frozen=True)
class Finding:
    """One problem at one place: what the CLI prints and the flake8 plugin yields."""

    code: str
    message: str
    #: 1-based line and 0-based column of the start of the offending expression.
    line: int
    column: int
    end_line: int
    end_column: int
    fix_safety: Optional[Safety] = None

    @property
    def fixable(self) -> bool:
        return self.fix_safety is not None


@dataclass
class Report:
    """A finding before positions are known; the engine turns it into a `Finding`."""

    code: str
    message: str
    node: cst.CSTNode
    #: The statements that enclose the node, outermost first (for noqa on any of their lines).
    statement: Optional[cst.CSTNode]
    fix: Optional[Fix] = None
    top_level_index: int = 0
    extra: dict = field(default_factory=dict)
