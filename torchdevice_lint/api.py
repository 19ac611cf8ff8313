"""The Python API: `lint_source` and `fix_source`, and the one place a notebook is told from a Python file."""

from __future__ import annotations

from typing import Callable, Optional, overload

from torchdevice_lint.analysis import ProjectIndex
from torchdevice_lint.engine import FixResult, Linter
from torchdevice_lint.findings import Finding
from torchdevice_lint.guard import Budget, within_budget
from torchdevice_lint.notebook import fix_notebook, is_notebook, lint_notebook
from torchdevice_lint.parsing import Source
from torchdevice_lint.reparse import Reparser
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
    Raises `SourceError` (one line) for a file that cannot be parsed, or that is past the
    default per-file budget (`Budget`: generated code nested thousands of levels deep).

    >>> [f.code for f in lint_source("import torch\\nmodel = Net().cuda()\\n")]
    ['TDL001']
    """
    notebook = filename is not None and is_notebook(filename)
    linter = Linter(settings, noqa=noqa)
    findings = within_budget(
        source, lambda: lint_file(source, linter, notebook=notebook, project=project, path=filename), Budget()
    )
    return findings if notebook else sorted(findings, key=lambda f: (f.line, f.column, f.code))


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
    fixed. A ``filename`` ending in ``.ipynb`` fixes a notebook's JSON cell by cell. Raises
    `SourceError` as `lint_source` does.

    >>> print(fix_source("import torch\\nmodel = Net().cuda()\\n"), end="")
    import torch
    <BLANKLINE>
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    <BLANKLINE>
    model = Net().to(device)
    """
    notebook = filename is not None and is_notebook(filename)
    linter = Linter(settings)
    return within_budget(source, lambda: fix_file(source, linter, unsafe=unsafe, notebook=notebook), Budget()).source


def lint_file(
    source: Source,
    linter: Linter,
    *,
    notebook: bool,
    project: Optional[ProjectIndex] = None,
    path: Optional[str] = None,
    cell_errors: Optional[list[str]] = None,
    reparser: Optional[Reparser] = None,
) -> list[Finding]:
    """The findings of a Python file, or (``notebook``) of a notebook's JSON cell by cell: the one
    place the API and the CLI tell the two apart. ``cell_errors`` collects the notebook cells that
    do not parse (the others are still checked); without it such a cell fails the notebook.
    ``reparser``: the parser of the file's previous version (see `Linter.lint`)."""
    if notebook:
        return lint_notebook(_as_bytes(source), linter, cell_errors)
    return linter.lint(source, project, path, reparser)


def fix_file(
    source: Source,
    linter: Linter,
    *,
    unsafe: bool,
    notebook: bool,
    project: Optional[ProjectIndex] = None,
    path: Optional[str] = None,
    cell_errors: Optional[list[str]] = None,
    only: Optional[Callable[[Finding], bool]] = None,
) -> FixResult:
    """`Linter.fix` of a Python file, or of a notebook's JSON cell by cell; the source comes back
    in the type it was given. ``only``: fix just the findings it accepts (as `lint_file` reports them)."""
    if not notebook:
        return linter.fix(source, unsafe=unsafe, project=project, path=path, only=only)
    fixed = fix_notebook(_as_bytes(source), linter, unsafe=unsafe, cell_errors=cell_errors, only=only)
    return FixResult(fixed.data.decode("utf-8") if isinstance(source, str) else fixed.data, fixed.remaining, fixed.applied)


def _as_bytes(source: Source) -> bytes:
    return source.encode("utf-8") if isinstance(source, str) else source