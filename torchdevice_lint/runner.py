"""Check or fix one file at a time and say what happened; the CLI decides what to print."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from torchdevice_lint.engine import Linter, SourceError
from torchdevice_lint.files import STDIN
from torchdevice_lint.findings import Finding
from torchdevice_lint.notebook import fix_notebook, is_notebook, lint_notebook


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    original: bytes = b""
    #: The fixed bytes in fix or diff mode (equal to ``original`` when nothing applies).
    fixed: Optional[bytes] = None
    applied: int = 0
    #: A one-line reason the file could not be checked or written.
    error: Optional[str] = None

    @property
    def changed(self) -> bool:
        return self.fixed is not None and self.fixed != self.original


def process_file(path: str, linter: Linter, fix: bool, unsafe: bool, name: Optional[str] = None) -> FileResult:
    """Read, then lint (or fix in memory) one file; never raises for bad input.

    A path (or, for stdin, a ``name``) ending in ``.ipynb`` is checked as a Jupyter notebook.
    """
    result = FileResult(path)
    try:
        result.original = sys.stdin.buffer.read() if path == STDIN else Path(path).read_bytes()
    except OSError as error:
        result.error = error.strerror or str(error)
        return result
    try:
        if is_notebook(name or path):
            if fix:
                fixed = fix_notebook(result.original, linter, unsafe=unsafe)
                result.fixed, result.findings, result.applied = fixed.data, fixed.remaining, fixed.applied
            else:
                result.findings = lint_notebook(result.original, linter)
        elif fix:
            outcome = linter.fix(result.original, unsafe=unsafe)
            assert isinstance(outcome.source, bytes)
            result.fixed, result.findings, result.applied = outcome.source, outcome.remaining, outcome.applied
        else:
            result.findings = linter.lint(result.original)
    except SourceError as error:
        result.error = str(error)
    except RecursionError:
        result.error = "too deeply nested to analyse"
    return result


def write_atomically(path: str, data: bytes) -> None:
    """Write through a temporary file and a rename: a file is always wholly old or new."""
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if not os.access(path, os.W_OK):
        raise PermissionError(13, "file is read-only")
    folder = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(prefix=".torchdevice-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
