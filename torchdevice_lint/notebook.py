"""Jupyter notebooks: lint and fix the code cells of an ``.ipynb`` file.

The code cells are analysed together, as the kernel runs them top to bottom, so an
``import torch`` or a ``device`` bound in one cell is known in the next. Findings name the
cell (1-based, counting every cell as Jupyter shows them) and the line within it.

* IPython syntax is masked before parsing and restored untouched afterwards: lines starting
  with ``%`` (line magics), ``!`` (shell escapes) or ``?`` / ending with ``?`` (help), and
  ``x = !cmd`` / ``x = %magic`` assignments. A cell whose first line is a ``%%`` cell magic
  is skipped whole: its body may not be Python at all.
* A cell runs as IPython's clean-up leaves it: a cell copied from inside a function loses the
  first non-blank line's indentation on every line that starts with it, and a cell pasted from
  a doctest (its first non-blank line starts with ``>>> ``) loses its ``>>> `` / ``... ``
  prompts. Findings and syntax errors still give the columns of the cell as written, and a fix
  writes the lines it changes or adds with their indentation and prompt; the cell's other
  lines stay byte for byte.
* Markdown and raw cells, outputs, metadata, key order, indentation, escaping and the final
  newline are kept byte for byte: only the ``source`` values of the cells a fix changed are
  rewritten, in the layout the file already uses.
* When a fix needs a new module-level ``device`` binding, it is inserted at the top of the
  first cell that needs it (after that cell's own imports), not in an earlier set-up cell:
  a fix then only touches cells holding a finding, the cell still runs on its own after the
  cells above it, and a reviewer sees the binding next to its use.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
import warnings
from dataclasses import dataclass, field, replace
from json.decoder import scanstring  # type: ignore[attr-defined]  # public, missing from typeshed
from typing import TYPE_CHECKING, Callable, Mapping, Optional

from torchdevice_lint.analysis.binding import CELL_MARKER
from torchdevice_lint.findings import Finding
from torchdevice_lint.parsing import SourceError, parse

if TYPE_CHECKING:
    from torchdevice_lint.engine import Linter

#: A line that starts each cell in the combined program; an import, so that a new device
#: binding is always inserted after it, inside the cell that needs it (the binder lays the
#: binding out as at the top of a file there: see ``CELL_MARKER``).
_MARKER = CELL_MARKER + "{index}\n"
_MARKER_LINE = re.compile(r"import _tdl_cell_(\d+)\r?\n?")
_MASK = "pass  # _tdl_masked_{index}"
_MASKED_LINE = re.compile(r"[ \t]*pass  # _tdl_masked_(\d+)(\r?\n)?")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_SHELL_ASSIGNMENT = re.compile(r"[ \t]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*[!%]")


#: The most code a file may hold (a notebook: its code cells together, outputs not counted).
MAX_CODE_BYTES = 2_000_000


class NotebookError(SourceError):
    """A notebook that cannot be read as nbformat 4 JSON, or a cell that does not parse."""


@dataclass
class Cell:
    #: 1-based position among all the notebook's cells.
    index: int
    source: str
    #: Where the ``source`` value lies in the document text, and how it is written.
    start: int
    end: int
    #: Offsets of the strings of a list-valued source (one for a string-valued one).
    items: list[int] = field(default_factory=list)
    is_list: bool = True
    #: A ``%%`` cell magic: not Python, never linted.
    skipped: bool = False


@dataclass
class Notebook:
    text: str
    #: The code cells, in order.
    cells: list[Cell]
    #: False for notebooks whose kernel language is not Python (nothing is checked).
    is_python: bool = True
    prefix: bytes = b""

    @classmethod
    def parse(cls, data: bytes) -> "Notebook":
        prefix = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
        try:
            text = data[len(prefix) :].decode("utf-8")
        except UnicodeDecodeError as error:
            raise NotebookError(f"notebook is not UTF-8: {error}") from None
        if not text.strip():
            raise NotebookError("not a valid notebook (JSON): the file is empty")
        try:
            return _scan(text, prefix)
        except (ValueError, IndexError, KeyError, TypeError, AttributeError) as error:
            message = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise NotebookError(f"not a valid notebook (JSON): {message}") from None

    def cell(self, index: int) -> Optional[Cell]:
        return next((cell for cell in self.cells if cell.index == index), None)

    def line_of(self, cell_index: int, line: int) -> tuple[str, int]:
        """The text of a cell's 1-based line, and the line of the ``.ipynb`` file it is written on."""
        cell = self.cell(cell_index)
        if cell is None:
            return "", 1
        lines = cell.source.splitlines()
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        if cell.is_list and cell.items:
            offset = cell.items[min(line, len(cell.items)) - 1]
        else:
            offset = cell.items[0] if cell.items else cell.start
        return text, self.text.count("\n", 0, offset) + 1

    # ----------------------------------------------------------------- write
    def with_sources(self, sources: dict[int, str]) -> bytes:
        """The document with the given cells' sources replaced and every other byte kept."""
        text = self.text
        ensure_ascii = text.isascii() and "\\u" in text
        for cell in sorted(self.cells, key=lambda c: c.start, reverse=True):
            new = sources.get(cell.index)
            if new is None or new == cell.source:
                continue
            text = text[: cell.start] + self._render(cell, new, ensure_ascii) + text[cell.end :]
        return self.prefix + text.encode("utf-8")

    def _render(self, cell: Cell, source: str, ensure_ascii: bool) -> str:
        def dump(value: str) -> str:
            return json.dumps(value, ensure_ascii=ensure_ascii)

        if not cell.is_list:
            return dump(source)
        lines = source.splitlines(keepends=True)
        original = self.text
        if not cell.items:
            return json.dumps(lines, ensure_ascii=ensure_ascii)
        first_end = _value_end(original, cell.items[0])
        opening = original[cell.start + 1 : cell.items[0]]
        last_end = _value_end(original, cell.items[-1])
        closing = original[last_end : cell.end - 1]
        if len(cell.items) > 1:
            separator = original[first_end : cell.items[1]]
        else:
            separator = "," + (opening if "\n" in opening else " ")
        # A line the fix left alone keeps its exact JSON spelling (a literal é stays one, a
        # \u00e9 escape stays one); only new or changed lines are written afresh.
        written: dict[str, str] = {}
        for start in cell.items:
            raw = original[start : _value_end(original, start)]
            written.setdefault(json.loads(raw), raw)
        return "[" + opening + separator.join(written.get(line) or dump(line) for line in lines) + closing + "]"


# ------------------------------------------------------------------ JSON scan
def _skip(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]


_DECODER = json.JSONDecoder()


def _value_end(text: str, index: int) -> int:
    return _DECODER.raw_decode(text, index)[1]


def _members(text: str, index: int):
    """(key, value start, value end) of the JSON object at ``index``."""
    if text[index] != "{":
        raise ValueError(f"expected an object at offset {index}")
    index = _skip(text, index + 1)
    if text[index] == "}":
        return
    while True:
        if text[index] != '"':
            raise ValueError(f"expected a key at offset {index}")
        key, index = scanstring(text, index + 1)
        index = _skip(text, index)
        if text[index] != ":":
            raise ValueError(f"expected ':' at offset {index}")
        start = _skip(text, index + 1)
        end = _value_end(text, start)
        yield key, start, end
        index = _skip(text, end)
        if text[index] == ",":
            index = _skip(text, index + 1)
        elif text[index] == "}":
            return
        else:
            raise ValueError(f"expected ',' or '}}' at offset {index}")


def _items(text: str, index: int) -> list[int]:
    """Start offsets of the items of the JSON array at ``index``."""
    if text[index] != "[":
        raise ValueError(f"expected an array at offset {index}")
    starts: list[int] = []
    index = _skip(text, index + 1)
    if text[index] == "]":
        return starts
    while True:
        starts.append(index)
        index = _skip(text, _value_end(text, index))
        if text[index] == ",":
            index = _skip(text, index + 1)
        elif text[index] == "]":
            return starts
        else:
            raise ValueError(f"expected ',' or ']' at offset {index}")


def _scan(text: str, prefix: bytes) -> Notebook:
    start = _skip(text, 0)
    cells: list[Optional[Cell]] = []
    is_python = True
    for key, value_start, value_end in _members(text, start):
        if key == "metadata":
            metadata = json.loads(text[value_start:value_end])
            language = (metadata.get("kernelspec") or {}).get("language") or (
                metadata.get("language_info") or {}
            ).get("name")
            is_python = language is None or str(language).lower() in ("python", "python3")
        elif key == "cells":
            cells.extend(_scan_cells(text, value_start, len(cells)))
        elif key == "worksheets":  # nbformat 3: the cells lie in worksheets
            for worksheet in _items(text, value_start):
                for inner_key, inner_start, _ in _members(text, worksheet):
                    if inner_key == "cells":
                        cells.extend(_scan_cells(text, inner_start, len(cells)))
    return Notebook(text, [cell for cell in cells if cell is not None], is_python, prefix)


def _scan_cells(text: str, index: int, before: int) -> list[Optional[Cell]]:
    """The cells of the JSON array at ``index`` (None for those that are not code), numbered
    after the ``before`` cells already seen."""
    return [_scan_cell(text, start, position) for position, start in enumerate(_items(text, index), start=before + 1)]


def _scan_cell(text: str, index: int, position: int) -> Optional[Cell]:
    cell_type = None
    source: Optional[tuple[int, int]] = None
    for key, value_start, value_end in _members(text, index):
        if key == "cell_type":
            cell_type = json.loads(text[value_start:value_end])
        elif key in ("source", "input"):  # nbformat 3 calls a code cell's source "input"
            source = (value_start, value_end)
    if cell_type != "code" or source is None:
        return None
    value = json.loads(text[source[0] : source[1]])
    if isinstance(value, list):
        joined = "".join(value)
        items = _items(text, source[0])
        is_list = True
    else:
        joined, items, is_list = str(value), [source[0]], False
    skipped = joined.lstrip().startswith("%%")
    return Cell(position, joined, source[0], source[1], items, is_list, skipped)


# -------------------------------------------------------------- the program
@dataclass
class Program:
    """The code cells joined into one module, with IPython syntax masked."""

    source: str
    #: cell index -> (first line in the program, number of lines)
    cells: dict[int, tuple[int, int]]
    #: masked id -> the original line (without its newline)
    masked: dict[int, str]
    #: cell index -> what IPython's clean-up removes from the cell's lines (see `strip_margin`)
    margins: dict[int, "Margin"] = field(default_factory=dict)


def build_program(notebook: Notebook) -> Program:
    parts: list[str] = []
    cells: dict[int, tuple[int, int]] = {}
    masked: dict[int, str] = {}
    margins: dict[int, Margin] = {}
    line = 1
    for cell in notebook.cells:
        if cell.skipped:
            continue
        parts.append(_MARKER.format(index=cell.index))
        line += 1
        margin = strip_margin(cell.source)
        if margin.removed:
            margins[cell.index] = margin
        text = mask(margin.source, masked)
        if text and not text.endswith(("\n", "\r")):
            text += "\n"
        count = len(text.splitlines())
        cells[cell.index] = (line, count)
        parts.append(text)
        line += count
    source = "".join(parts)
    if len(source) > MAX_CODE_BYTES:
        raise NotebookError(
            f"notebook code too large to check ({len(source) / 1e6:.1f} MB; the limit is {MAX_CODE_BYTES / 1e6:.1f} MB)"
        )
    return Program(source, cells, masked, margins)


@dataclass(frozen=True)
class Margin:
    """A cell as IPython runs it: ``source`` without what IPython's clean-up removes from the
    start of its lines, first the ``indentation`` of the first non-blank line (from the lines
    that start with it), then, in a cell of ``prompts``, a ``>>> `` or ``... `` prompt.
    ``removed`` maps each 1-based line that lost something to what it lost."""

    source: str
    indentation: str = ""
    prompts: bool = False
    removed: Mapping[int, str] = field(default_factory=dict)

    def columns(self, line: int) -> int:
        """How far a column of the cleaned cell's ``line`` lies from the written cell's."""
        return len(self.removed.get(line, ""))

    def for_new_line(self, line: str, continues: bool) -> str:
        """What a line a fix writes afresh starts with: the indentation (not on a blank line),
        and in a cell of prompts ``>>> `` where a statement starts at the margin, else ``... ``
        (bare on a blank line), as doctest writes them."""
        blank = not line.strip()
        if not self.prompts:
            return "" if blank else self.indentation
        prompt = "... " if continues or line.startswith((" ", "\t")) else ">>> "
        return self.indentation + (prompt.rstrip() if blank else prompt)


_LEADING_INDENT = re.compile(r"[ \t]+")
#: IPython's classic prompts: a cell whose first line starts with the first is a pasted doctest.
#: In such a cell IPython 9 also removes a prompt that follows spaces (`` >>> x`` pasted one
#: column in); IPython 8 rejects that line, so removing it there too only lints more cells.
_FIRST_PROMPT = re.compile(r">>>(?: |(?=[\r\n])|$)")
_PROMPT = re.compile(r"[ \t]*(?:>>>|\.\.\.)(?: |(?=[\r\n])|$)")


def strip_margin(source: str) -> Margin:
    """IPython's clean-up of a cell's leading indentation and doctest prompts (its
    ``leading_indent`` and ``classic_prompt``): a cell copied from inside a function or
    pasted from a docstring runs."""
    lines = source.splitlines(keepends=True)
    first = next((line for line in lines if not line.isspace()), "")
    leading = _LEADING_INDENT.match(first)
    indentation = leading.group() if leading else ""
    prompts = _FIRST_PROMPT.match(first, len(indentation)) is not None
    removed: dict[int, str] = {}
    cleaned: list[str] = []
    for number, line in enumerate(lines, start=1):
        cut = len(indentation) if indentation and line.startswith(indentation) else 0
        prompt = _PROMPT.match(line, cut) if prompts else None
        if prompt is not None:
            cut = prompt.end()
        if cut:
            removed[number] = line[:cut]
        cleaned.append(line[cut:])
    if not removed:
        return Margin(source)
    return Margin("".join(cleaned), indentation, prompts, removed)


def restore_margin(margin: Margin, fixed: str) -> tuple[str, Margin]:
    """The fixed cleaned cell written back with the cell's margin: a line the fix left alone
    or changed in place gets back what it lost (so an untouched line is as it was written), a
    new line `Margin.for_new_line`; and the margin of the result."""
    before = margin.source.splitlines(keepends=True)
    after = fixed.splitlines(keepends=True)
    continued = _continuation_lines(fixed)
    out: list[str] = []
    removed: dict[int, str] = {}
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        in_place = tag == "equal" or (tag == "replace" and old_end - old_start == new_end - new_start)
        for offset, line in enumerate(after[new_start:new_end]):
            if in_place:
                prefix = margin.removed.get(old_start + offset + 1, "")
            else:
                prefix = margin.for_new_line(line, new_start + offset in continued)
            out.append(prefix + line)
            if prefix:
                removed[len(out)] = prefix
    return "".join(out), replace(margin, source=fixed, removed=removed)


def mask(source: str, masked: dict[int, str]) -> str:
    """Replace each IPython-only line by a numbered ``pass`` placeholder (indentation kept)."""
    lines = source.splitlines(keepends=True)
    continued = _continuation_lines(source)
    out: list[str] = []
    continuing = False
    indent = ""
    for number, line in enumerate(lines):
        body = line.rstrip("\r\n")
        stripped = body.strip()
        ends_logical_line = number + 1 not in continued
        if continuing or (number not in continued and _is_ipython(stripped, body, ends_logical_line)):
            index = len(masked)
            masked[index] = body
            if not continuing:  # a continuation line keeps its placeholder at the magic's indentation
                indent = body[: len(body) - len(body.lstrip())]
            out.append(indent + _MASK.format(index=index) + line[len(body) :])
            continuing = body.endswith("\\")
        else:
            out.append(line)
    return "".join(out)


def _is_ipython(stripped: str, body: str, ends_logical_line: bool) -> bool:
    """``ends_logical_line``: a final ``?`` asks for help only there, not where it opens a
    string or a bracket that goes on below (``text = '''Can I train a model?``)."""
    if stripped.startswith(("%", "!", "?")):
        return True
    if stripped.endswith("?") and "#" not in stripped and ends_logical_line:
        return True
    if _SHELL_ASSIGNMENT.match(body) is not None:
        return True
    return _is_automagic(stripped)


#: Magics and shell aliases IPython runs without their ``%`` (automagic): ``pip install x``, ``ls data/``.
_AUTOMAGICS = frozenset({
    "pip", "conda", "mamba", "cd", "ls", "ll", "pwd", "cat", "cp", "mv", "rm", "mkdir", "rmdir", "clear",
    "less", "more", "man", "env", "set_env", "load_ext", "reload_ext", "matplotlib", "time", "timeit",
    "pdb", "debug", "who", "whos", "reset", "run", "config", "alias", "history", "bookmark", "pylab",
})


#: What follows a name in Python, also on a line that goes on below (``config = {``, ``time (``).
_PYTHON_AFTER_NAME = re.compile(r"\s*(?:=|[-+*/%&|^@]=|//=|\*\*=|>>=|<<=|[(\[{,:;]|\.[A-Za-z_])")


def _is_automagic(stripped: str) -> bool:
    """``pip install x``: a known magic's name, then words; never a line that is Python already
    (``ls = []``, ``time.sleep(1)``, ``run(x)``)."""
    name, _, rest = stripped.partition(" ")
    if name not in _AUTOMAGICS or not rest.strip() or _PYTHON_AFTER_NAME.match(rest):
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(stripped, "<cell>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError):
        return True
    return False


def _continuation_lines(source: str) -> set[int]:
    """Indices of lines that continue a logical line (never masked): lines that begin inside a
    triple-quoted string or an open bracket, or after a backslash. IPython only transforms
    magics at the start of a logical line: a line ``% (epoch, loss))`` that continues a
    ``print("epoch %d, loss %.3f"`` above it is Python."""
    inside: set[int] = set()
    quote: Optional[str] = None
    depth = 0
    line = 0
    index = 0
    length = len(source)
    while index < length:
        char = source[index]
        if char == "\n":
            line += 1
            if quote is not None and len(quote) == 1:  # an unterminated one-line string ends here
                quote = None
            if quote is not None or depth > 0:
                inside.add(line)
            index += 1
            continue
        if quote is None:
            if char == "#":
                newline = source.find("\n", index)
                index = length if newline < 0 else newline
                continue
            if char in "\"'":
                quote = source[index : index + 3] if source[index : index + 3] == char * 3 else char
                index += len(quote)
                continue
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth = max(depth - 1, 0)
            elif char == "\\" and source.startswith("\n", index + 1):
                inside.add(line + 1)
        else:
            if char == "\\":
                index += 2
                continue
            if source.startswith(quote, index):
                index += len(quote)
                quote = None
                continue
        index += 1
    return inside


def split_program(program_source: str, masked: dict[int, str]) -> tuple[dict[int, str], dict[int, int]]:
    """Cell sources (masks restored) from a program, and the first program line of each cell."""
    sources: dict[int, list[str]] = {}
    starts: dict[int, int] = {}
    current: Optional[int] = None
    preamble: list[str] = []
    for number, line in enumerate(program_source.splitlines(keepends=True), start=1):
        marker = _MARKER_LINE.fullmatch(line)
        if marker is not None:
            current = int(marker.group(1))
            sources[current] = []
            starts[current] = number + 1
            continue
        placeholder = _MASKED_LINE.fullmatch(line)
        if placeholder is not None:
            line = masked[int(placeholder.group(1))] + (placeholder.group(2) or "")
        (sources[current] if current is not None else preamble).append(line)
    if preamble and sources:  # never expected: the binding goes after a marker
        first = min(sources)
        sources[first][:0] = preamble
    return {index: "".join(lines) for index, lines in sources.items()}, starts


def _locate(findings: list[Finding], starts: dict[int, int], margins: dict[int, Margin]) -> list[Finding]:
    """Program findings as cell findings (``cell`` set, ``line`` and ``column`` as the cell is written)."""
    ordered = sorted(starts.items(), key=lambda item: item[1])
    located = []
    for finding in findings:
        cell, first = None, 1
        for index, start in ordered:
            if start <= finding.line:
                cell, first = index, start
        if cell is None:
            continue
        offset = first - 1
        line, end_line = finding.line - offset, finding.end_line - offset
        margin = margins.get(cell, Margin(""))
        located.append(
            replace(
                finding,
                cell=cell,
                line=line,
                end_line=end_line,
                column=finding.column + margin.columns(line),
                end_column=finding.end_column + margin.columns(end_line),
            )
        )
    return sorted(located, key=lambda f: (f.cell, f.line, f.column, f.code))


# ------------------------------------------------------------------ checks
def cell_message(index: int, message: str, margin: Optional[Margin] = None) -> str:
    """``cell_2:1:7: syntax error: ...`` for a located message, as findings name a cell (the
    column of the cell as written, given the ``margin`` its message was measured without);
    else ``cell 2: ...``."""
    located = _LINE_COLUMN.match(message)
    if located is None:
        return f"cell {index}: {message}"
    line, column = int(located.group(1)), int(located.group(2))
    if margin is not None:
        column += margin.columns(line)
    return f"cell_{index}:{line}:{column}: {message[located.end():]}"


_LINE_COLUMN = re.compile(r"(\d+):(\d+): ")


def _skip_bad_cells(notebook: Notebook, error: SourceError, cell_errors: Optional[list[str]]) -> None:
    """Set aside the cells that do not parse on their own, each named in ``cell_errors``, so
    that the other cells are still checked; without ``cell_errors``, raise for the first one."""
    found = False
    for cell in notebook.cells:
        if cell.skipped:
            continue
        margin = strip_margin(cell.source)
        try:
            parse(mask(margin.source, {}))
        except SourceError as cell_error:
            message = cell_message(cell.index, str(cell_error), margin)
            if cell_errors is None:
                raise NotebookError(message) from None
            cell_errors.append(message)
            cell.skipped = found = True
    if not found:
        raise NotebookError(str(error)) from None


def _program_outcome(notebook: Notebook, run, cell_errors: Optional[list[str]]):
    """``run(program)``'s outcome for the notebook's program, once more without the cells that
    do not parse if the whole does not."""
    program = build_program(notebook)
    try:
        return program, run(program)
    except SourceError as error:
        _skip_bad_cells(notebook, error, cell_errors)
    program = build_program(notebook)
    return program, run(program)


def _in_cells(only: Optional[Callable[[Finding], bool]], program: Program) -> Optional[Callable[[Finding], bool]]:
    """``only``, which judges findings as a cell places them, for the findings of the joined program."""
    if only is None:
        return None
    starts = {index: start for index, (start, _) in program.cells.items()}
    return lambda finding: any(only(located) for located in _locate([finding], starts, program.margins))


def lint_notebook(data: bytes, linter: "Linter", cell_errors: Optional[list[str]] = None) -> list[Finding]:
    """The findings of a notebook's code cells, each naming its cell.

    A cell that does not parse raises `NotebookError`; given a ``cell_errors`` list, it is named
    there instead and the other cells are checked."""
    notebook = Notebook.parse(data)
    if not notebook.is_python or not notebook.cells:
        return []
    program, findings = _program_outcome(notebook, lambda program: linter.lint(program.source), cell_errors)
    return _locate(findings, {index: start for index, (start, _) in program.cells.items()}, program.margins)


@dataclass
class NotebookFix:
    data: bytes
    remaining: list[Finding]
    applied: int


def fix_notebook(
    data: bytes,
    linter: "Linter",
    unsafe: bool = False,
    cell_errors: Optional[list[str]] = None,
    only: Optional[Callable[[Finding], bool]] = None,
) -> NotebookFix:
    """The notebook with fixes applied to its code cells; everything else kept byte for byte.
    Cells that do not parse are handled as by `lint_notebook`, and left as they are. ``only``:
    fix just the findings it accepts, judged as `lint_notebook` reports them (cell, line, column)."""
    notebook = Notebook.parse(data)
    if not notebook.is_python or not notebook.cells:
        return NotebookFix(data, [], 0)
    program, outcome = _program_outcome(
        notebook, lambda program: linter.fix(program.source, unsafe=unsafe, only=_in_cells(only, program)), cell_errors
    )
    assert isinstance(outcome.source, str)
    fixed_sources, starts = split_program(outcome.source, program.masked)
    if not outcome.applied:
        return NotebookFix(data, _locate(outcome.remaining, starts, program.margins), 0)
    sources: dict[int, str] = {}
    margins: dict[int, Margin] = {}
    for cell in notebook.cells:
        new = fixed_sources.get(cell.index)
        if new is None:
            continue
        if cell.index in program.margins:
            new, margins[cell.index] = restore_margin(program.margins[cell.index], new)
        if not cell.source.endswith(("\n", "\r")) and new.endswith("\n"):
            new = new[:-1]
            if new.endswith("\r"):
                new = new[:-1]
        sources[cell.index] = new
    remaining = _locate(outcome.remaining, starts, margins)
    return NotebookFix(notebook.with_sources(sources), remaining, outcome.applied)


def is_notebook(path: str) -> bool:
    return path.endswith(".ipynb")
