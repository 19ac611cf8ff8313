"""The Python API: `lint_source` and `fix_source`, and the one place a notebook is told from a Python file."""

from __future__ import annotations

from typing import Optional, overload

from torchdevice_lint.analysis import ProjectIndex
from torchdevice_lint.engine import Linter
from torchdevice_lint.findings import Finding
from torchdevice_lint.notebook import fix_notebook, is_notebook, lint_notebook
from torchdevice_lint.parsing import Source
from torchdevice_lint.settings import Settings


def lint_source(
    source: Source,
    settings: Settings = Settings(),
    *,
    filename: Optional[str] = None,
    noqa: bool = True,
    project: Optional[ProjectIndex] = None,
) -> list[Finding]:
    """The findings in one file's source text, sorted by position.

    ``source`` is the text (``str``) or the raw bytes of a file (bytes honour a PEP 263 coding
    line and a BOM). ``settings`` chooses the rules (`Settings`). With a ``filename`` ending in
    ``.ipynb`` the source is a notebook's JSON and each finding's ``cell`` names its code cell.
    ``noqa=False`` ignores ``# noqa`` and skip-file comments. ``project`` (a `ProjectIndex` of
    the project ``filename`` belongs to) lets the rules see the classes its imports name.
    Raises `SourceError` (one line) for a file that cannot be parsed.

    >>> [f.code for f in lint_source("import torch\\nmodel = Net().cuda()\\n")]
    ['TDL001']
    """
    linter = Linter(settings, noqa=noqa)
    if filename is not None and is_notebook(filename):
        return lint_notebook(source.encode("utf-8") if isinstance(source, str) else source, linter)
    return sorted(linter.lint(source, project, filename), key=lambda f: (f.line, f.column, f.code))


@overload
def fix_source(
    source: str, *, unsafe: bool = False, settings: Settings = Settings(), filename: Optional[str] = None
) -> str: ...


@overload
def fix_source(
    source: bytes, *, unsafe: bool = False, settings: Settings = Settings(), filename: Optional[str] = None
) -> bytes: ...


def fix_source(
    source: Source, *, unsafe: bool = False, settings: Settings = Settings(), filename: Optional[str] = None
) -> Source:
    """The source with every applicable fix applied: the safe ones, plus the unsafe ones if asked.

    Returns the same type it is given; bytes come back byte for byte identical outside the
    fixed expressions (line endings, encoding, BOM). Findings silenced by ``# noqa`` are not
    fixed. A ``filename`` ending in ``.ipynb`` fixes a notebook's JSON cell by cell.

    >>> print(fix_source("import torch\\nmodel = Net().cuda()\\n"), end="")
    import torch
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    """
    linter = Linter(settings)
    if filename is not None and is_notebook(filename):
        data = source.encode("utf-8") if isinstance(source, str) else source
        fixed = fix_notebook(data, linter, unsafe=unsafe).data
        return fixed.decode("utf-8") if isinstance(source, str) else fixed
    return linter.fix(source, unsafe=unsafe).source