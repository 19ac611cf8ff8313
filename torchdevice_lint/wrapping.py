"""Lines and statements a fix changed, laid out as Black and Ruff's formatter lay them out
(`torchdevice_lint.formatter_layout`) at the project's line length.

A fix that writes ``dtype=torch.get_default_dtype()`` or ``.to(device)`` into a line that was
close to the limit would otherwise leave a new E501 (and a formatter's diff) behind it. Only
lines the fix changed and made too long are touched, and only where every line the fix
replaced fitted: a project that tolerates a long line there keeps it. A statement over several
lines is laid out again where the formatter's layout of it before the fix is the one it had
and the fix changes that layout. A layout that still leaves a line too long, or that would
change the syntax tree, is not written: the text stays as the fix wrote it, and where the
project configures a line length, `Linter.fix` then leaves the findings on the lines it replaced
unfixed (`rows_pushed_past`). Where the project states no line length, the limit is 88 columns
(Black's and Ruff's default).
"""

from __future__ import annotations

import ast
import difflib
import io
import tokenize
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence

from torchdevice_lint.formatter_layout import CLOSING, OPENING, Leaf, Line, lay_out, lay_out_as_yapf, width
from torchdevice_lint.parsing import LINE

#: The line length a fix keeps to where the project states none (Black's and Ruff's default).
UNCONFIGURED_LINE_LENGTH = 88
_SKIPPED_TOKENS = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER})


def wrap_lengthened_lines(before: str, after: str, limit: Optional[int], indent_unit: str, layout: Optional[str] = None) -> str:
    """``after`` (``before`` with fixes applied) with each line the fixes pushed past ``limit``
    laid out over several lines; ``after`` itself where there is none. Without a configured
    limit, `UNCONFIGURED_LINE_LENGTH` is the limit (ctranslate2's ``device="cuda"`` becoming the
    guarded idiom went to 117 columns), a line already longer stays as the fix writes it (the
    file tolerates long lines there: laid out within its old length it would stay long, over
    three lines), nor is a line with a trailing comment or an argument aligned under its bracket's
    first one (a visual indent, which Black's hanging layout does not continue), and statements
    are not laid out again (no formatter is known to own them). Where the project's formatter is yapf (``layout``),
    a line is laid out only in the shapes `lay_out_as_yapf` knows, and statements are not laid
    out again: NAFNet's setup.cfg asks for yapf's pep8 style, which keeps the closing bracket on
    the arguments' line where Black gives it a line of its own."""
    configured = limit is not None
    after = _realigned(before, after)
    yapf = layout is not None and layout.startswith("yapf")
    if limit is not None and not yapf:
        after = _relaid_statements(before, after, limit, indent_unit)
    limit = UNCONFIGURED_LINE_LENGTH if limit is None else limit
    lines = LINE.findall(after)
    lengthened = _lengthened_lines(LINE.findall(before), lines, limit)
    if not lengthened:
        return after
    rows = _token_rows(after)
    if rows is None:
        return after
    laid_out = {}
    for index in lengthened:
        line = _logical_line(rows, index + 1, lines)
        if line is None or (not configured and line.comment):
            continue  # unconfigured: a trailing comment is the author's layout (``) # six parts``)
        if not configured and rows[index + 1].aligned:
            # unconfigured: an argument aligned under its bracket's first one would be split as
            # Black splits a hanging line (``.to(\n    out.device\n)``), which no one writes there
            continue
        if yapf and layout is not None:
            parts = lay_out_as_yapf(line, limit, layout) or []
        else:
            parts = lay_out(line, limit, indent_unit)
        if len(parts) > 1 and all(width(part) <= limit for part in parts):
            ending = lines[index][len(lines[index].rstrip("\r\n")) :] or _newline_of(after)
            laid_out[index] = "".join(part + ending for part in parts)
    if not laid_out:
        return after
    wrapped = "".join(laid_out.get(index, line) for index, line in enumerate(lines))
    return wrapped if _same_tree(after, wrapped) else after


def _relaid_statements(before: str, after: str, limit: int, unit: str) -> str:
    """``after`` with each statement over several lines that a fix changed laid out again,
    where the formatter's layout of the statement before the fix is the one it had: an edit
    that changes the layout the formatter picks (``.cuda()`` becoming ``.to(device)`` gives it
    a bracket to split at) leaves the file as the formatter would."""
    old_lines, new_lines = LINE.findall(before), LINE.findall(after)
    changed = _changed_rows(old_lines, new_lines)
    if not changed:
        return after
    old_statements, new_statements = _statements(before), _statements(after)
    if old_statements is None or new_statements is None:
        return after
    old_by_row = {row: statement for statement in old_statements for row in range(statement[0], statement[1] + 1)}
    laid_out: dict[int, tuple[int, list[str]]] = {}
    for first, last, tokens in new_statements:
        rows = [row for row in range(first, last + 1) if row in changed]
        if last == first or not rows:
            continue
        old = old_by_row.get(changed[rows[0]])
        if old is None or old[1] == old[0]:
            continue
        new_line, old_line = _joined(tokens, new_lines), _joined(old[2], old_lines)
        if new_line is None or old_line is None:
            continue
        if lay_out(old_line, limit, unit) != [line.rstrip("\r\n") for line in old_lines[old[0] - 1 : old[1]]]:
            continue  # not laid out as the formatter lays it out: leave its layout to its author
        parts = lay_out(new_line, limit, unit)
        if parts != [line.rstrip("\r\n") for line in new_lines[first - 1 : last]] and all(width(part) <= limit for part in parts):
            laid_out[first] = (last, parts)
    if not laid_out:
        return after
    ending = _newline_of(after)
    result: list[str] = []
    row = 1
    while row <= len(new_lines):
        if row in laid_out:
            last, parts = laid_out[row]
            result.extend(part + ending for part in parts)
            row = last + 1
        else:
            result.append(new_lines[row - 1])
            row += 1
    wrapped = "".join(result)
    return wrapped if _same_tree(after, wrapped) else after


def _realigned(before: str, after: str) -> str:
    """``after`` with the continuation lines aligned with a bracket that a fix moved (a shorter
    or longer name before it) moved with it: GraphGym's ``Parameter(torch.Tensor(in_channels,``
    over ``heads * out_channels))`` aligned with its bracket becomes ``torch.empty(`` one column
    to the left, and the second line follows (pycodestyle's E127/E128 otherwise)."""
    old_lines, new_lines = LINE.findall(before), LINE.findall(after)
    changed = _changed_rows(old_lines, new_lines)
    firsts = [(row, changed[row]) for row in sorted(changed) if changed.get(row - 1) != changed[row]]
    if not firsts:
        return after
    old_rows, new_rows = _token_rows(before), _token_rows(after)
    if old_rows is None or new_rows is None:
        return after
    shifts: dict[int, int] = {}
    for row, old_row in firsts:
        old_open, new_open = _open_at_end(old_rows, old_row), _open_at_end(new_rows, row)
        if len(old_open) != len(new_open):
            continue
        for (old_column, old_close), (new_column, new_close) in zip(old_open, new_open):
            delta = new_column - old_column
            old_indents = [_indent(old_lines[number - 1]) for number in range(old_row + 1, old_close + 1)]
            rows = range(row + 1, new_close + 1)
            if (
                not delta
                or not old_indents
                or old_indents[0] != old_column + 1
                or any(indent < old_column + 1 for indent in old_indents)
                or any(new_rows[number].spans_rows or _indent(new_lines[number - 1]) < old_column + 1 for number in rows)
            ):
                continue
            shifts.update({number: delta for number in rows})
    if not shifts:
        return after
    lines = list(new_lines)
    for number, delta in shifts.items():
        line = lines[number - 1]
        indent = _indent(line)
        if indent + delta < 0 or line[:indent].strip(" "):
            return after
        lines[number - 1] = " " * (indent + delta) + line[indent:]
    realigned = "".join(lines)
    return realigned if _same_tree(after, realigned) else after


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _open_at_end(rows: dict[int, _Row], number: int) -> list[tuple[int, int]]:
    """(column, row it closes on) of each bracket opened on row ``number`` that is still open
    at its end and has a token after it on the row (continuation lines may be aligned with it),
    but not one whose first token is the next such bracket (``([``: the rows align with that)."""
    row = rows.get(number)
    if row is None or row.spans_rows:
        return []
    stack: list[tuple[int, int]] = []  # (index of the token, column)
    tokens = row.tokens
    for index, token in enumerate(tokens):
        if token.type == tokenize.OP and token.string in OPENING:
            stack.append((index, token.start[1]))
        elif token.type == tokenize.OP and token.string in CLOSING and stack:
            stack.pop()
    found = []
    for depth, (index, column) in enumerate(stack):
        following = [token for token in tokens[index + 1 :] if token.type != tokenize.COMMENT]
        if not following:
            return []
        if following[0].string in OPENING and depth + 1 < len(stack) and stack[depth + 1][0] == index + 1:
            # ``FloatTensor([[0, 1],`` over ``[1, 0]])``: rows align with the bracket it holds
            continue
        close = _closing_row(rows, number, row.depth + depth + 1)
        if close is None:
            return []
        found.append((column, close))
    return found


def _closing_row(rows: dict[int, _Row], number: int, depth: int) -> Optional[int]:
    """The first row after ``number`` whose bracket depth drops below ``depth`` on it."""
    for later in range(number + 1, max(rows) + 1):
        row = rows.get(later)
        if row is None:
            continue
        level = row.depth
        for token in row.tokens:
            if token.type == tokenize.OP and token.string in OPENING:
                level += 1
            elif token.type == tokenize.OP and token.string in CLOSING:
                level -= 1
                if level < depth:
                    return later
    return None


def _changed_rows(before: Sequence[str], after: Sequence[str]) -> dict[int, int]:
    """{row of ``after`` a fix changed: the first row of ``before`` it replaced}, from 1."""
    changed = {}
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, old_start, _, new_start, new_end in matcher.get_opcodes():
        if tag != "equal":
            changed.update({row + 1: old_start + 1 for row in range(new_start, new_end)})
    return changed


def _statements(text: str) -> Optional[list[tuple[int, int, list[tokenize.TokenInfo]]]]:
    """(first row, last row, tokens) of each logical line of ``text``."""
    statements = []
    tokens: list[tokenize.TokenInfo] = []
    try:
        for token in _merged_tokens(tokenize.generate_tokens(io.StringIO(text).readline)):
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                if tokens:
                    statements.append((tokens[0].start[0], token.start[0], tokens))
                tokens = []
            elif token.type not in _SKIPPED_TOKENS:
                tokens.append(token)
    except (tokenize.TokenError, SyntaxError):
        return None
    return statements


def _joined(tokens: Sequence[tokenize.TokenInfo], lines: Sequence[str]) -> Optional[Line]:
    """A statement over several lines as one line, spaced as the formatter spaces the joins;
    None where a comment, a string over several lines or a magic trailing comma holds it."""
    leaves: list[Leaf] = []
    for index, token in enumerate(tokens):
        if token.type == tokenize.COMMENT or token.start[0] != token.end[0]:
            return None
        previous = tokens[index - 1] if index else None
        if previous is None:
            space = ""
        elif previous.end[0] == token.start[0]:
            space = lines[token.start[0] - 1][previous.end[1] : token.start[1]]
        else:
            if previous.string == "," and token.string in CLOSING:
                return None
            space = "" if previous.string in OPENING or token.string in CLOSING or token.string in (",", ".") else " "
        leaves.append(Leaf(token.string, space, token.type))
    first = lines[tokens[0].start[0] - 1]
    return Line(first[: tokens[0].start[1]], tuple(leaves), statement=True)


def rows_pushed_past(before: str, after: str, limit: int) -> list[tuple[int, int]]:
    """(first, last) rows of ``before``, from 1, that the fixes replaced with a line past
    ``limit`` where every line they replaced fitted: what laying out could not keep within it."""
    runs = _pushed_past(LINE.findall(before), LINE.findall(after), limit)
    return [(old_start + 1, max(old_end, old_start + 1)) for old_start, old_end, _ in runs]


def _lengthened_lines(before: Sequence[str], after: Sequence[str], limit: int) -> list[int]:
    """Indices of the lines of ``after`` a fix changed past ``limit`` where every line it
    replaced fitted."""
    return [index for _, _, indices in _pushed_past(before, after, limit) for index in indices]


def _pushed_past(before: Sequence[str], after: Sequence[str], limit: int) -> list[tuple[int, int, list[int]]]:
    """(start, end) of each run of ``before`` lines a fix replaced, all of which fitted within
    ``limit`` or which it joined into fewer lines, with the indices of the lines of ``after``
    replacing them that do not fit: pytracking's ``torch.Tensor([...]).to(\n    self.params.device)``,
    its first line already long, became one line of 170 columns when the move went into ``device=``."""
    found: list[tuple[int, int, list[int]]] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag == "equal":
            continue
        joined = new_end - new_start < old_end - old_start
        if not joined and any(width(line.rstrip("\r\n")) > limit for line in before[old_start:old_end]):
            continue
        indices = [index for index in range(new_start, new_end) if width(after[index].rstrip("\r\n")) > limit]
        if indices:
            found.append((old_start, old_end, indices))
    return found


def _newline_of(text: str) -> str:
    first = LINE.match(text)
    ending = first.group(0)[len(first.group(0).rstrip("\r\n")) :] if first else ""
    return ending or "\n"


# ------------------------------------------------------------------------ tokens
@dataclass
class _Row:
    tokens: list[tokenize.TokenInfo]
    #: Brackets open when the row starts.
    depth: int
    #: A token that starts here ends on a later row (a string over several lines, a backslash).
    spans_rows: bool = False
    #: The row starts under the token after an open bracket of an earlier row (a visual indent:
    #: ``grad(outputs=out,`` then ``grad_outputs=...`` aligned under ``outputs``).
    aligned: bool = False


def _token_rows(text: str) -> Optional[dict[int, _Row]]:
    """The tokens of ``text`` by the row they start on, with the bracket depth at each row."""
    rows: dict[int, _Row] = {}
    depth = 0
    opened: list[tuple[int, int]] = []  # the open brackets: (row, column just after)
    try:
        for token in _merged_tokens(tokenize.generate_tokens(io.StringIO(text).readline)):
            row = rows.setdefault(token.start[0], _Row([], depth))
            if token.type in _SKIPPED_TOKENS:
                continue
            if not row.tokens and opened and opened[-1][0] < token.start[0] and opened[-1][1] == token.start[1]:
                row.aligned = True
            row.tokens.append(token)
            if token.end[0] != token.start[0] or (len(row.tokens) > 1 and row.tokens[-2].end[0] != token.start[0]):
                row.spans_rows = True
            if token.type == tokenize.OP and token.string in OPENING:
                depth += 1
                opened.append(token.end)
            elif token.type == tokenize.OP and token.string in CLOSING:
                depth -= 1
                if opened:
                    opened.pop()
            for later in range(token.start[0] + 1, token.end[0] + 1):
                rows.setdefault(later, _Row([], depth, spans_rows=True)).spans_rows = True
    except (tokenize.TokenError, SyntaxError):
        return None
    return rows


def _merged_tokens(tokens: Iterator[tokenize.TokenInfo]) -> Iterator[tokenize.TokenInfo]:
    """Tokens, with an f-string of Python 3.12+ (FSTRING_START ... FSTRING_END) as one."""
    start_type, end_type = getattr(tokenize, "FSTRING_START", None), getattr(tokenize, "FSTRING_END", None)
    pending: list[tokenize.TokenInfo] = []
    nesting = 0
    for token in tokens:
        if start_type is not None and token.type == start_type:
            nesting += 1
        if nesting:
            pending.append(token)
            if token.type == end_type:
                nesting -= 1
                if not nesting:
                    first, last = pending[0], pending[-1]
                    source = first.line if first.start[0] == last.end[0] else ""
                    text = source[first.start[1] : last.end[1]] if source else "".join(t.string for t in pending)
                    yield tokenize.TokenInfo(tokenize.STRING, text, first.start, last.end, first.line)
                    pending = []
            continue
        yield token


def _logical_line(rows: dict[int, _Row], row_number: int, lines: Sequence[str]) -> Optional[Line]:
    """Line ``row_number`` as a `Line`, or None where it cannot be split on its own: a token
    over several rows, brackets it does not close, nothing but a comment."""
    row = rows.get(row_number)
    if row is None or row.spans_rows or not row.tokens:
        return None
    text = lines[row_number - 1].rstrip("\r\n")
    tokens = row.tokens
    comment = ""
    if tokens[-1].type == tokenize.COMMENT:
        comment = text[tokens[-2].end[1] :] if len(tokens) > 1 else ""
        tokens = tokens[:-1]
    if not tokens or text.rstrip().endswith("\\"):
        return None
    indent = text[: tokens[0].start[1]]
    if indent.strip():
        return None
    leaves = []
    depth = 0
    previous_end = tokens[0].start[1]
    for token in tokens:
        if token.type == tokenize.OP and token.string in OPENING:
            depth += 1
        elif token.type == tokenize.OP and token.string in CLOSING:
            depth -= 1
            if depth < 0:
                return None
        leaves.append(Leaf(token.string, text[previous_end : token.start[1]], token.type))
        previous_end = token.end[1]
    if depth:
        return None
    return Line(
        indent=indent,
        leaves=tuple(leaves),
        comment=comment,
        inside_brackets=row.depth > 0,
        may_add_comma=row.depth > 0 and _closes_after(rows, row_number),
        statement=row.depth == 0,
    )


def _closes_after(rows: dict[int, _Row], row_number: int) -> bool:
    """The first token after row ``row_number`` closes a bracket: the row holds a whole
    bracket's contents (the line before opened it)."""
    before = rows.get(row_number - 1)
    if before is None or not before.tokens or before.tokens[-1].string not in OPENING:
        return False
    for later in sorted(number for number in rows if number > row_number):
        tokens = [token for token in rows[later].tokens if token.type != tokenize.COMMENT]
        if tokens:
            return tokens[0].string in CLOSING
    return False


def _same_tree(before: str, after: str) -> bool:
    """The layout changed no syntax: both texts parse to the same tree."""
    try:
        return ast.dump(ast.parse(before)) == ast.dump(ast.parse(after))
    except (SyntaxError, ValueError):
        return False
