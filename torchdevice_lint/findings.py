"""What a check produces: findings, and the fixes they may carry."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional, Union

import libcst as cst


class Safety(enum.Enum):
    """Whether a fix keeps what the program computes (`SAFE`) or may change it (`UNSAFE`)."""

    #: Keeps what the program computes wherever it already ran; applied by ``--fix``.
    SAFE = "safe"
    #: May change behaviour (a dropped device index, other random numbers); ``--unsafe-fixes``.
    UNSAFE = "unsafe"


#: What a fix puts in a node's place: a node, or (for a statement) several, or none.
Replacement = Union[cst.CSTNode, cst.FlattenSentinel, cst.RemovalSentinel]


@dataclass(frozen=True)
class Fix:
    safety: Safety
    #: Pairs of (original node, replacement node), applied by node identity.
    replacements: tuple[tuple[cst.CSTNode, Replacement], ...]
    #: The replacement refers to the module-level device binding the engine inserts.
    needs_device_binding: bool = False
    #: The replacement names ``torch``, which the file imports only through its submodules
    #: (``from torch.utils.data import DataLoader``): the engine adds ``import torch``.
    needs_torch_import: bool = False


@dataclass(frozen=True)
class Finding:
    """One problem at one place: what the CLI prints and the flake8 plugin yields.

    Returned by `torchdevice_lint.lint_source`. Positions follow flake8 and LibCST: ``line``
    and ``end_line`` are 1-based, ``column`` and ``end_column`` 0-based character offsets
    (the CLI prints ``column + 1``, as flake8 does). ``end_*`` is just past the expression.
    """

    #: The rule code, e.g. ``"TDL001"``.
    code: str
    #: One line saying what is wrong and what to use instead.
    message: str
    #: 1-based line and 0-based column of the start of the offending expression.
    line: int
    column: int
    #: 1-based line and 0-based column just past its end.
    end_line: int
    end_column: int
    #: `Safety.SAFE` (``--fix`` applies it), `Safety.UNSAFE` (``--unsafe-fixes``), None: no fix.
    fix_safety: Optional[Safety] = None
    #: In a notebook, the 1-based cell (``line`` then counts from the cell's first line).
    cell: Optional[int] = None
    #: Why ``--fix`` left the rule's fix undone in this run (``fix_safety`` is then None), for
    #: the user who saw it offered in check mode; empty otherwise.
    fix_withheld: str = ""

    @property
    def fixable(self) -> bool:
        """True when a fix exists, safe or unsafe."""
        return self.fix_safety is not None


@dataclass
class Report:
    """A finding before positions are known; the engine turns it into a `Finding`."""

    code: str
    message: str
    node: cst.CSTNode
    fix: Optional[Fix] = None
    top_level_index: int = 0
