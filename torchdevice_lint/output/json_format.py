"""``--output-format json``: one JSON array, one object per finding.

Lines and columns are 1-based (the column as flake8 prints it); ``end_column`` is just past
the expression. ``cell`` is the notebook cell (null for ``.py`` files).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TextIO

from torchdevice_lint.rules import rule_for

if TYPE_CHECKING:
    from torchdevice_lint.output import Entry


def as_dict(entry: "Entry") -> dict:
    finding = entry.finding
    rule = rule_for(finding.code)
    return {
        "path": entry.path,
        "cell": finding.cell,
        "line": finding.line,
        "column": finding.column + 1,
        "end_line": finding.end_line,
        "end_column": finding.end_column + 1,
        "code": finding.code,
        "name": rule.name if rule is not None else None,
        "message": finding.message,
        "fix": {
            "available": finding.fixable,
            "safety": finding.fix_safety.value if finding.fix_safety is not None else None,
        },
    }


def write(entries: list["Entry"], stream: TextIO) -> None:
    json.dump([as_dict(entry) for entry in entries], stream, indent=2)
    stream.write("\n")
