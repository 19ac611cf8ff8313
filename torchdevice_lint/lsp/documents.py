"""What the language server asks of the engine, in the editor's terms; no pygls here.

A document is checked as the CLI checks a file: the settings of its nearest ``pyproject.toml``
(``per-file-ignores`` included), ``# noqa`` honoured, within the configured per-file budget. A
notebook is checked as one program, as ``torchdevice-fix`` checks an ``.ipynb``: its code cells
are written into notebook JSON and handed to the engine's notebook front end.
"""

from __future__ import annotations

import bisect
import difflib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

from torchdevice_lint.analysis.project import ProjectIndex, project_files, project_root, scan
from torchdevice_lint.api import fix_file, lint_file
from torchdevice_lint.config import Config, ConfigError, find_config, load_config
from torchdevice_lint.engine import Linter
from torchdevice_lint.files import walk_files
from torchdevice_lint.findings import Finding
from torchdevice_lint.guard import TooComplex, within_budget
from torchdevice_lint.noqa import NOQA, NoqaLines
from torchdevice_lint.parsing import LINE, SourceError
from torchdevice_lint.patterns import PatternSet, relative_to_root
from torchdevice_lint.reparse import Reparser
from torchdevice_lint.settings import Settings

#: Where a rule's documentation lives: docs/rules.md of a source checkout, else the project's page.
_RULES_DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
PROJECT_PAGE = "https://pypi.org/project/torchdevice-lint/"


def rule_docs_url(code: str, name: str) -> str:
    """The link a diagnostic carries to its rule's documentation (a heading anchor of docs/rules.md)."""
    if _RULES_DOC.is_file():
        return f"{_RULES_DOC.as_uri()}#{code.lower()}-{name}"
    return PROJECT_PAGE


@dataclass(frozen=True)
class Checked:
    """A document's findings, or (``error``, one line) why it could not be checked."""

    findings: list[Finding]
    error: Optional[str] = None


class Engine:
    """The engine as the server uses it: each document's configuration, one `Linter` per `Settings`."""

    def __init__(self) -> None:
        self._configs: dict[Path, tuple[int, Config]] = {}
        self._linters: dict[Settings, Linter] = {}
        #: Project root -> the index of its files as on disk.
        self._projects: dict[str, ProjectIndex] = {}
        #: Configuration files that could not be used, with the reason (the server logs each once).
        self.config_errors: dict[Path, str] = {}
        #: Each open document's parser, which re-parses only what an edit changed.
        self._reparsers: dict[str, Reparser] = {}

    def config_for(self, path: str) -> Config:
        """The configuration of the file at ``path`` (read again when its pyproject.toml changes)."""
        found = find_config(path)
        if found is None:
            return Config()
        try:
            stamp = found.stat().st_mtime_ns
            cached = self._configs.get(found)
            if cached is not None and cached[0] == stamp:
                return cached[1]
            config = load_config(found)
        except (OSError, ConfigError) as error:
            self.config_errors[found] = f"{error}; using the default settings"
            return Config()
        self.config_errors.pop(found, None)
        self._configs[found] = (stamp, config)
        return config

    def _linter(self, settings: Settings) -> Linter:
        linter = self._linters.get(settings)
        if linter is None:
            linter = self._linters[settings] = Linter(settings)
        return linter

    def project_of(self, path: str) -> Optional[ProjectIndex]:
        """The index of the project a file on disk belongs to, as the CLI and flake8 build it for a
        file named alone (the classes its imports name); an unsaved document is judged alone."""
        if not os.path.isfile(path):
            return None
        root = project_root(path)
        index = self._projects.get(root)
        if index is None:
            index = self._projects[root] = ProjectIndex.build(project_files(root, walk_files))
        return index

    def closed(self, document: str) -> None:
        self._reparsers.pop(document, None)

    def saved(self, path: str, text: str) -> list[str]:
        """Take a file just written to disk into the index of its project; the roots of the projects
        whose index changed (their open documents may read differently now)."""
        real = os.path.realpath(path)
        changed = []
        for root, index in self._projects.items():
            if real.endswith(".py") and real.startswith(os.path.join(root, "")):
                facts = scan(text)
                if index.files.get(real) != facts:
                    self._projects[root] = ProjectIndex({**index.files, real: facts})
                    changed.append(root)
        return changed

    def lint(self, source: str, path: str, notebook: bool = False, document: Optional[str] = None) -> Checked:
        """The findings of a Python file or (``notebook``) of notebook JSON, or why there are none.
        A file the configuration's ``exclude`` matches has none, as when named to the CLI.
        ``document``: the editor's name for a Python file checked again as it is edited."""
        config = self.config_for(path)
        if PatternSet(config.exclude_patterns).matches(relative_to_root(path, config.root)):
            return Checked([])
        linter = self._linter(config.settings_for(path))

        def work() -> list[Finding]:
            project = None if notebook else self.project_of(path)
            reparser = None if notebook or document is None else self._reparsers.setdefault(document, Reparser())
            return lint_file(source, linter, notebook=notebook, path=path, project=project, reparser=reparser)

        try:
            findings = within_budget(source, work, config.budget())
        except (SourceError, RecursionError) as error:
            reason = str(error) if isinstance(error, SourceError) else str(TooComplex("nested too deeply to analyse"))
            return Checked([], reason)
        return Checked(findings)

    def fix(
        self,
        source: str,
        path: str,
        *,
        unsafe: bool = False,
        notebook: bool = False,
        only: Optional[Callable[[Finding], bool]] = None,
    ) -> str:
        """The source with its fixes applied (only those of the findings ``only`` accepts, if
        given): `torchdevice-fix`'s output for the same text. Raises `SourceError`."""
        config = self.config_for(path)
        linter = self._linter(config.settings_for(path))

        def work() -> str:
            project = None if notebook else self.project_of(path)
            fixed = fix_file(source, linter, unsafe=unsafe, notebook=notebook, path=path, only=only, project=project).source
            assert isinstance(fixed, str)
            return fixed

        return within_budget(source, work, config.budget())


# ------------------------------------------------------------------ notebooks
def notebook_json(cells: Sequence[str]) -> str:
    """Notebook JSON holding ``cells`` as its code cells, in order (cell ``i + 1`` of the findings is ``cells[i]``)."""
    return json.dumps(
        {
            "cells": [
                {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
                for source in cells
            ],
            "metadata": {"language_info": {"name": "python"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def notebook_cells(data: str) -> list[str]:
    """The code cells' sources of notebook JSON that `notebook_json` wrote (and the engine fixed)."""
    cells = json.loads(data)["cells"]
    return ["".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"] for cell in cells]


# ------------------------------------------------------------------ positions
@dataclass(frozen=True)
class Position:
    """An LSP position: 0-based line, column in the client's code units."""

    line: int
    character: int


class Lines:
    """A text's lines as the engine counts them (``\\n``, ``\\r\\n`` or ``\\r``), and columns
    in the position encoding the client and server agreed on (UTF-16 unless told otherwise)."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self.lines = LINE.findall(text)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.encoding = encoding

    def units(self, text: str) -> int:
        if self.encoding == "utf-32" or text.isascii():
            return len(text)
        if self.encoding == "utf-8":
            return len(text.encode("utf-8"))
        return len(text.encode("utf-16-le")) // 2

    def position(self, line: int, column: int) -> Position:
        """The LSP position of the engine's 1-based ``line`` and 0-based character ``column``."""
        index = line - 1
        if index >= len(self.lines):
            return self.end()
        return Position(index, self.units(_content(self.lines[index])[:column]))

    def at_offset(self, offset: int) -> Position:
        """The LSP position of a character offset into the text."""
        index = max(bisect.bisect_right(self.starts, offset) - 1, 0)
        if index >= len(self.lines):
            return self.end()
        return Position(index, self.units(self.lines[index][: offset - self.starts[index]]))

    def end(self) -> Position:
        if not self.lines or self.lines[-1].endswith(("\n", "\r")):
            return Position(len(self.lines), 0)
        return Position(len(self.lines) - 1, self.units(self.lines[-1]))


def _content(line: str) -> str:
    return line.rstrip("\r\n")


# ---------------------------------------------------------------------- edits
@dataclass(frozen=True)
class Edit:
    """Replace the text from ``start`` to ``end`` (LSP positions of the old text) by ``text``."""

    start: Position
    end: Position
    text: str


def minimal_edits(old: str, new: str, encoding: str = "utf-16") -> list[Edit]:
    """Edits turning ``old`` into ``new``: one per changed run of lines, trimmed to the characters
    that differ, so that the editor keeps its cursor and marks everywhere else."""
    if old == new:
        return []
    before, after = Lines(old, encoding), Lines(new, encoding)
    edits = []
    matcher = difflib.SequenceMatcher(None, before.lines, after.lines, autojunk=False)
    for tag, old_first, old_last, new_first, new_last in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = before.starts[old_first], before.starts[old_last]
        new_start, new_end = after.starts[new_first], after.starts[new_last]
        prefix = _common_prefix(old[start:end], new[new_start:new_end])
        start, new_start = start + prefix, new_start + prefix
        suffix = _common_prefix(old[start:end][::-1], new[new_start:new_end][::-1])
        end, new_end = end - suffix, new_end - suffix
        edits.append(Edit(before.at_offset(start), before.at_offset(end), new[new_start:new_end]))
    return edits


def _common_prefix(first: str, second: str) -> int:
    return len(os.path.commonprefix([first, second]))


def noqa_edit(text: str, finding: Finding, encoding: str = "utf-16") -> Edit:
    """Silence ``finding`` with a comment on the last line of its logical line (a comment there
    never lands inside a string or a bracket): ``# noqa: CODE``, or its code added to one there."""
    noqa_lines = NoqaLines(text)
    _, last = noqa_lines.logical_line(finding.end_line)
    line = noqa_lines.lines[last - 1] if last <= len(noqa_lines.lines) else ""
    body = _content(line)
    lines = Lines(text, encoding)
    existing = NOQA.search(body)
    if existing is not None and existing.group("codes"):
        codes_end = existing.end("codes")
        trailing = len(re.search(r"[,\s]*$", existing.group("codes")).group())  # type: ignore[union-attr]
        column = codes_end - trailing
        return Edit(lines.position(last, column), lines.position(last, column), f",{finding.code}")
    column = len(body)
    separator = "  " if body.strip() else ""
    return Edit(lines.position(last, column), lines.position(last, column), f"{separator}# noqa: {finding.code}")
