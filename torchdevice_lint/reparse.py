"""Parse an edited text again by re-parsing only the top-level statements the edit reached.

An editor sends the whole document after every keystroke, and LibCST takes about 150 µs a line:
a 2,000-line file costs some 300 ms to parse from scratch, the whole of a language server's
latency budget. Statements the edit did not reach keep their syntax trees (nodes are immutable,
so the new module shares them), and the `Layout` keeps each statement's text, from which the
engine places findings and reads ``# noqa`` without generating the whole module's code again.

The region parsed again is the statements the edit touched plus one unchanged statement on each
side, so that comments and blank lines at its edges attach to the same nodes as in a parse of
the whole file. Anything unusual (the region does not parse alone, it infers another indentation
or newline, the pieces do not add up to the text) falls back to parsing the whole text.
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass
from typing import Callable, Optional

import libcst as cst

from torchdevice_lint.noqa import NoqaLines
from torchdevice_lint.parsing import parse, parse_module

#: Line breaks as LibCST counts them (``str.splitlines`` also splits at form feeds).
_NEWLINE = re.compile(r"\r\n?|\n")


@dataclass(frozen=True)
class Layout:
    """A parsed text cut at its top-level statements: each statement's text and first line."""

    text: str
    module: cst.Module
    header: str
    #: The code of each statement of ``module.body``, its leading comments and blank lines included.
    statements: tuple[str, ...]
    footer: str
    #: The 1-based line each statement's text starts on.
    first_lines: tuple[int, ...]

    @classmethod
    def of(cls, module: cst.Module, text: str) -> Optional[Layout]:
        """The layout of ``module`` parsed from ``text``; None where the pieces do not add up to
        ``text`` (a file without a final newline, whose last statement's code would carry one)."""
        header = "".join(module.code_for_node(line) for line in module.header)
        statements = tuple(module.code_for_node(statement) for statement in module.body)
        footer = "".join(module.code_for_node(line) for line in module.footer)
        return cls.assembled(text, module, header, statements, footer)

    @classmethod
    def assembled(
        cls, text: str, module: cst.Module, header: str, statements: tuple[str, ...], footer: str
    ) -> Optional[Layout]:
        if not module.has_trailing_newline or header + "".join(statements) + footer != text:
            return None
        counts = [_line_count(statement) for statement in statements]
        first_lines = tuple(itertools.accumulate(counts[:-1], initial=1 + _line_count(header)))
        return cls(text, module, header, statements, footer, first_lines[: len(statements)])

    def noqa_lines(self) -> Callable[[int], list[str]]:
        """`NoqaLines.for_line` for the whole text that tokenizes only the statement holding the
        line: a logical line never spans two top-level statements."""
        readers: dict[int, NoqaLines] = {}

        def for_line(line: int) -> list[str]:
            index = max(bisect.bisect_right(self.first_lines, line) - 1, 0)
            reader = readers.get(index)
            if reader is None:
                reader = readers[index] = NoqaLines(self.statements[index])
            return reader.for_line(line - self.first_lines[index] + 1)

        return for_line

    def statement_starts(self) -> list[int]:
        """The offset in ``text`` where each statement's text starts."""
        return list(itertools.accumulate((len(s) for s in self.statements[:-1]), initial=len(self.header)))


class Reparser:
    """Parses successive versions of one document, each from the one before."""

    def __init__(self) -> None:
        self._last: Optional[Layout] = None

    def parse(self, text: str) -> tuple[cst.Module, Optional[Layout]]:
        """The module of ``text`` and, where it could be cut at its statements, its layout.
        Raises `SourceError` as `parse` does (the text is then forgotten)."""
        last, self._last = self._last, None
        layout = _reparsed(last, text) if last is not None else None
        if layout is not None:
            self._last = layout
            return layout.module, layout
        module = parse(text)
        self._last = Layout.of(module, text)
        return module, self._last


def _reparsed(last: Layout, text: str) -> Optional[Layout]:
    if text == last.text:
        return last
    count = len(last.statements)
    if count < 3:
        return None
    old = last.text
    prefix = _common_prefix_length(old, text)
    suffix = _common_suffix_length(old, text, limit=min(len(old), len(text)) - prefix)
    starts = last.statement_starts()
    body_end = len(old) - len(last.footer)
    if prefix < len(last.header) or len(old) - suffix > body_end:
        return None  # the edit reached the header or the footer
    first = max(bisect.bisect_right(starts, prefix) - 1 - 1, 0)
    last_touched = bisect.bisect_right(starts, max(len(old) - suffix - 1, prefix)) - 1
    end = min(last_touched + 1, count - 1)
    if first == 0 and end == count - 1:
        return None  # nothing left to keep
    region_start = starts[first]
    region_end = (starts[end + 1] if end + 1 < count else body_end) + len(text) - len(old)
    try:
        region = parse_module(text[region_start:region_end])
    except (cst.ParserSyntaxError, RecursionError, SyntaxError, ValueError):
        return None  # the whole text decides: a real syntax error is reported from there
    if (
        not region.body
        or region.footer
        or not region.has_trailing_newline
        or (region.default_indent, region.default_newline, region.encoding)
        != (last.module.default_indent, last.module.default_newline, last.module.encoding)
    ):
        return None
    opening = region.body[0]
    if region.header and first == 0:
        return None  # lines the whole file's parse would give to the module's header
    if region.header:  # lines before a statement that is not the file's first are its own
        opening = opening.with_changes(leading_lines=(*region.header, *opening.leading_lines))
    body = (*last.module.body[:first], opening, *region.body[1:], *last.module.body[end + 1 :])
    texts = (region.code_for_node(opening), *(region.code_for_node(s) for s in region.body[1:]))
    statements = (*last.statements[:first], *texts, *last.statements[end + 1 :])
    return Layout.assembled(text, last.module.with_changes(body=body), last.header, statements, last.footer)


def _line_count(text: str) -> int:
    return text.count("\n") if "\r" not in text else len(_NEWLINE.findall(text))


def _common_prefix_length(a: str, b: str) -> int:
    """Binary search on slices: string comparison runs in C, a character loop would not."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix_length(a: str, b: str, limit: int) -> int:
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low
