"""The flake8 adapter: flake8 hands over the parsed file, we re-read its lines with LibCST."""

from __future__ import annotations

import ast
from typing import Iterator, Sequence

from torchdevice_lint import __version__
from torchdevice_lint.engine import Linter, Settings, SourceError


class TorchDevicePlugin:
    name = "torchdevice-lint"
    version = __version__

    def __init__(self, tree: ast.AST, lines: Sequence[str]) -> None:
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        # flake8 decides which codes to show (--select/--ignore/noqa); we report them all.
        try:
            findings = _LINTER.lint("".join(self.lines))
        except SourceError:
            return  # flake8 reports syntax errors itself (E999)
        for finding in findings:
            yield finding.line, finding.column, f"{finding.code} {finding.message}", type(self)


_LINTER = Linter(Settings(select=("TDL",)))
