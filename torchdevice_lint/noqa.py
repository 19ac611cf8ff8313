"""``# noqa`` comments and whole-file opt-outs, read as flake8 reads them."""

from __future__ import annotations

import io
import re
import tokenize
from typing import Optional, Sequence

from torchdevice_lint.parsing import LINE, Source

#: flake8's inline suppression syntax, character for character (``flake8.defaults.NOQA_INLINE_REGEXP``):
#: ``# noqa`` silences everything on the line, ``# noqa: TDL001,TDL003`` the listed codes and prefixes.
NOQA = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)

#: A whole-file opt-out on a line of its own: ours, or flake8's ``# flake8: noqa`` (so both front ends agree).
_SKIP_FILE = r"^[ \t\f]*#[ \t]*torchdevice:[ \t]*skip-file\b|^[ \t\f]*# flake8[:=][ \t]*noqa"
SKIP_FILE = re.compile(_SKIP_FILE, re.IGNORECASE | re.MULTILINE)
SKIP_FILE_BYTES = re.compile(_SKIP_FILE.encode(), re.IGNORECASE | re.MULTILINE)


def skips_file(source: Source) -> bool:
    """True when the file opts out with ``# torchdevice: skip-file`` (or ``# flake8: noqa``)."""
    if isinstance(source, bytes):
        return SKIP_FILE_BYTES.search(source) is not None
    return SKIP_FILE.search(source) is not None

class NoqaLines:
    """The physical lines whose ``# noqa`` covers a finding on a given line.

    Those are all the lines of the finding's logical line: a comment on any line of a bracketed
    multi-line statement, a multi-line string, a backslash continuation or a multi-line
    compound-statement header covers the whole of it. (flake8 itself joins only strings and
    continuations; the flake8 plugin applies this wider reach before flake8 filters, so both
    front ends suppress the same findings.)
    """

    def __init__(self, code: str) -> None:
        self.lines = LINE.findall(code)
        self._ranges: Optional[dict[int, tuple[int, int]]] = None
        #: Most files have no ``# noqa`` at all: they need no tokenizing to find logical lines.
        self._has_noqa = "noqa" in code.lower()

    def for_line(self, line: int) -> list[str]:
        if not self._has_noqa:
            return []
        first, last = self.logical_line(line)
        return self.lines[max(first, 1) - 1 : last]

    def logical_line(self, line: int) -> tuple[int, int]:
        """The first and last physical line of the logical line that holds ``line`` (1-based)."""
        if self._ranges is None:
            self._ranges = self._logical_lines()
        return self._ranges.get(line, (line, line))

    def _logical_lines(self) -> dict[int, tuple[int, int]]:
        ranges: dict[int, tuple[int, int]] = {}
        first, last, depth = len(self.lines) + 2, -1, 0
        try:
            for token in tokenize.generate_tokens(io.StringIO("".join(self.lines)).readline):
                if token.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                    continue
                first, last = min(first, token.start[0]), max(last, token.end[0])
                if token.type == tokenize.OP and token.string in "([{":
                    depth += 1
                elif token.type == tokenize.OP and token.string in ")]}":
                    depth = max(depth - 1, 0)
                elif token.type == tokenize.NEWLINE or (token.type == tokenize.NL and depth == 0):
                    ranges.update(dict.fromkeys(range(first, last + 1), (first, last)))
                    first, last = len(self.lines) + 2, -1
        except (tokenize.TokenError, SyntaxError):
            return {}  # physical lines only
        return ranges


def is_suppressed(code: str, lines: Sequence[str]) -> bool:
    """flake8's test on each line: a blanket ``# noqa``, or one listing ``code`` or a prefix of it.

    As in flake8 the codes are matched case-sensitively (``# noqa: tdl001`` suppresses nothing).
    """
    for line in lines:
        if "noqa" not in line.lower():
            continue
        match = NOQA.search(line)
        if match is None:
            continue
        codes = match.group("codes")
        if codes is None:
            return True
        listed = tuple(listed for listed in re.split(r"[,\s]+", codes) if listed)
        if code in listed or code.startswith(listed):
            return True
    return False
