"""Lines a fix made longer than the project's line length, laid out over several lines as Black
and Ruff's formatter lay them out.

A fix that writes ``dtype=torch.get_default_dtype()`` or ``.to(device)`` into a line that was
close to the limit would otherwise leave a new E501 (and a formatter's diff) behind it. Only
lines the fix changed and made too long are touched, and only where every line the fix
replaced fitted: a project that tolerates a long line there keeps it. The split follows the
formatter's rules for one logical line: inside brackets, at the delimiters of the highest
priority (one element per line at commas, with a trailing comma; else before comprehension
clauses, ternaries, ``and``/``or``, comparisons, operators, or the dots of a method chain);
otherwise at the last bracket whose opening line fits, the contents one level in and on one
line when they fit, else split again; the value of a ``return`` or an assignment in
parentheses where the formatter adds them. A layout that still leaves a line too long, or
that would change the syntax tree, is not written: the line stays as the fix wrote it.
"""

from __future__ import annotations

import ast
import difflib
import io
import keyword
import tokenize
import unicodedata
from dataclasses import dataclass, replace
from typing import Iterator, Optional, Sequence

from torchdevice_lint.parsing import LINE

_OPENING, _CLOSING = "([{", ")]}"
_SKIPPED_TOKENS = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER})
#: Split priorities, highest first, as the formatters rank them.
_COMPREHENSION_PRIORITY, _COMMA_PRIORITY, _TERNARY_PRIORITY, _LOGIC_PRIORITY, _STRING_PRIORITY, _COMPARATOR_PRIORITY = 20, 18, 16, 14, 12, 10
_MATH_PRIORITIES = {
    "|": 9, "^": 8, "&": 7, "<<": 6, ">>": 6, "+": 5, "-": 5, "*": 4, "/": 4, "//": 4, "%": 4, "@": 4, "**": 2,
}
_DOT_PRIORITY = 1
_COMPARATORS = frozenset({"<", ">", "==", "!=", "<=", ">=", "is"})
_ASSIGNMENTS = frozenset({"=", *(operator + "=" for operator in _MATH_PRIORITIES)})
#: How deep a layout may recurse before it gives up on a line (beyond any real statement).
_MAX_SPLITS = 30


def wrap_lengthened_lines(before: str, after: str, limit: Optional[int], indent_unit: str) -> str:
    """``after`` (``before`` with fixes applied) with each line the fixes pushed past ``limit``
    laid out over several lines; ``after`` itself where there is none, or no limit."""
    if limit is None:
        return after
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
        if line is None:
            continue
        parts = _split(line, limit, indent_unit, 0)
        if len(parts) > 1 and all(_width(part) <= limit for part in parts):
            ending = lines[index][len(lines[index].rstrip("\r\n")) :] or _newline_of(after)
            laid_out[index] = "".join(part + ending for part in parts)
    if not laid_out:
        return after
    wrapped = "".join(laid_out.get(index, line) for index, line in enumerate(lines))
    return wrapped if _same_tree(after, wrapped) else after


def _lengthened_lines(before: Sequence[str], after: Sequence[str], limit: int) -> list[int]:
    """Indices of the lines of ``after`` a fix changed past ``limit`` where every line it
    replaced fitted."""
    found: list[int] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag == "equal" or any(_width(line.rstrip("\r\n")) > limit for line in before[old_start:old_end]):
            continue
        found.extend(index for index in range(new_start, new_end) if _width(after[index].rstrip("\r\n")) > limit)
    return found


def _width(text: str) -> int:
    """Columns ``text`` takes, wide East Asian characters counting two (as Ruff and Black count)."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(character) in "WF" else 1 for character in text)


def _newline_of(text: str) -> str:
    first = LINE.match(text)
    ending = first.group(0)[len(first.group(0).rstrip("\r\n")) :] if first else ""
    return ending or "\n"


# ------------------------------------------------------------------------ tokens
@dataclass(frozen=True)
class _Leaf:
    """One token of a line and the whitespace written before it."""

    text: str
    space: str
    kind: int

    @property
    def is_name(self) -> bool:
        """A name, not a keyword: an opening bracket after it is a call or a subscript."""
        return self.kind == tokenize.NAME and not keyword.iskeyword(self.text)


@dataclass(frozen=True)
class _Line:
    """A line to lay out: its indentation, tokens and trailing comment."""

    indent: str
    leaves: tuple[_Leaf, ...]
    comment: str = ""
    #: Inside brackets, the line may be split at its commas.
    inside_brackets: bool = False
    #: The line is a whole bracket's contents, so a trailing comma may be added when it is split.
    may_add_comma: bool = False
    #: One element per line even if it fits (a display's elements, a trailing comma already written).
    explode: bool = False
    #: A whole statement: the value of its ``return`` or assignment may take parentheses.
    statement: bool = False

    def render(self) -> str:
        if not self.leaves:
            return self.indent + self.comment.lstrip()
        return self.indent + self.leaves[0].text + "".join(leaf.space + leaf.text for leaf in self.leaves[1:]) + self.comment


@dataclass
class _Row:
    tokens: list[tokenize.TokenInfo]
    #: Brackets open when the row starts.
    depth: int
    #: A token that starts here ends on a later row (a string over several lines, a backslash).
    spans_rows: bool = False


def _token_rows(text: str) -> Optional[dict[int, _Row]]:
    """The tokens of ``text`` by the row they start on, with the bracket depth at each row."""
    rows: dict[int, _Row] = {}
    depth = 0
    try:
        for token in _merged_tokens(tokenize.generate_tokens(io.StringIO(text).readline)):
            row = rows.setdefault(token.start[0], _Row([], depth))
            if token.type in _SKIPPED_TOKENS:
                continue
            row.tokens.append(token)
            if token.end[0] != token.start[0] or (len(row.tokens) > 1 and row.tokens[-2].end[0] != token.start[0]):
                row.spans_rows = True
            if token.type == tokenize.OP and token.string in _OPENING:
                depth += 1
            elif token.type == tokenize.OP and token.string in _CLOSING:
                depth -= 1
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


def _logical_line(rows: dict[int, _Row], row_number: int, lines: Sequence[str]) -> Optional[_Line]:
    """Line ``row_number`` as a `_Line`, or None where it cannot be split on its own: a token
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
        if token.type == tokenize.OP and token.string in _OPENING:
            depth += 1
        elif token.type == tokenize.OP and token.string in _CLOSING:
            depth -= 1
            if depth < 0:
                return None
        leaves.append(_Leaf(token.string, text[previous_end : token.start[1]], token.type))
        previous_end = token.end[1]
    if depth:
        return None
    return _Line(
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
    if before is None or not before.tokens or before.tokens[-1].string not in _OPENING:
        return False
    for later in sorted(number for number in rows if number > row_number):
        tokens = [token for token in rows[later].tokens if token.type != tokenize.COMMENT]
        if tokens:
            return tokens[0].string in _CLOSING
    return False


# ------------------------------------------------------------------------ layout
def _split(line: _Line, limit: int, unit: str, splits: int) -> list[str]:
    """``line`` laid out in lines that fit where the formatter can make them fit."""
    text = line.render()
    if (_width(text) <= limit and not line.explode) or splits > _MAX_SPLITS:
        return [text]
    pieces = _delimiter_split(line) if line.inside_brackets else None
    if pieces is not None and len(pieces) > 1:
        return _split_all(pieces, limit, unit, splits)
    pieces = _right_hand_split(line, limit, unit)
    if pieces is None or len(pieces) < 2:
        return [text]
    parts = _split_all(pieces, limit, unit, splits)
    value = _value_start(line)
    if value is not None and _width(parts[0]) > limit:
        # The formatter's second opinion: the value in parentheses, taken when every line fits.
        parenthesized = _split_all(_parenthesized(line, value, unit), limit, unit, splits)
        if all(_width(part) <= limit for part in parenthesized):
            return parenthesized
    return parts


def _split_all(pieces: Sequence[_Line], limit: int, unit: str, splits: int) -> list[str]:
    return [part for piece in pieces for part in _split(piece, limit, unit, splits + 1)]


def _depth_zero(leaves: Sequence[_Leaf]) -> Iterator[tuple[int, _Leaf]]:
    """The leaves outside any bracket of ``leaves``, with their indices; as for the formatter,
    a comprehension's target (``for a, b in``) and a lambda's parameters count as inside."""
    depth = 0
    awaiting: list[tuple[str, int]] = []  # (the word that ends a target or parameters, its depth)
    for index, leaf in enumerate(leaves):
        if leaf.text in _CLOSING:
            depth -= 1
        elif awaiting and (leaf.text, depth - 1) == awaiting[-1]:
            awaiting.pop()
            depth -= 1
        if depth == 0:
            yield index, leaf
        if leaf.text in _OPENING:
            depth += 1
        elif leaf.kind == tokenize.NAME and leaf.text in ("for", "lambda"):
            awaiting.append(("in" if leaf.text == "for" else ":", depth))
            depth += 1


def _delimiters(leaves: Sequence[_Leaf]) -> dict[int, int]:
    """The formatter's split points outside brackets: {index of the leaf a line ends with:
    priority}. A comma ends its line; an operator, ``and``/``or``, a comparison, a ternary's
    ``if``/``else`` or a method call's dot after a bracket starts the next one."""
    found: dict[int, int] = {}
    previous: Optional[_Leaf] = None
    in_comprehension = False
    for index, leaf in _depth_zero(leaves):
        # A binary operator follows an operand (else ``-``, ``*`` and ``**`` are unary or unpacking).
        operand_before = previous is not None and (
            previous.is_name or previous.kind in (tokenize.NUMBER, tokenize.STRING) or previous.text in _CLOSING
            or previous.text in ("True", "False", "None")
        )
        priority = 0
        if leaf.text == ",":
            found[index] = _COMMA_PRIORITY
        elif leaf.kind == tokenize.OP and leaf.text in _MATH_PRIORITIES and operand_before:
            priority = _MATH_PRIORITIES[leaf.text]
        elif leaf.text in _COMPARATORS or (leaf.text == "not" and previous is not None and previous.text != "is" and operand_before):
            priority = _COMPARATOR_PRIORITY
        elif leaf.text in ("for", "async") and leaf.kind == tokenize.NAME and (previous is None or previous.text != "async"):
            priority, in_comprehension = _COMPREHENSION_PRIORITY, True
        elif leaf.text == "if" and in_comprehension:
            priority = _COMPREHENSION_PRIORITY
        elif leaf.text == "in" and previous is not None and previous.text != "not" and not _ends_target(leaves, index):
            priority = _COMPARATOR_PRIORITY
        elif leaf.text in ("and", "or"):
            priority = _LOGIC_PRIORITY
        elif leaf.text in ("if", "else"):
            priority = _TERNARY_PRIORITY
        elif leaf.kind == tokenize.STRING and previous is not None and previous.kind == tokenize.STRING:
            priority = _STRING_PRIORITY
        elif leaf.text == "." and previous is not None and previous.text in _CLOSING:
            priority = _DOT_PRIORITY
        if priority and index > 0:
            found[index - 1] = priority
        previous = leaf
    return found


def _ends_target(leaves: Sequence[_Leaf], index: int) -> bool:
    """The ``in`` at ``index`` ends a comprehension's ``for`` target rather than compares."""
    depth = 0
    for leaf in reversed(leaves[:index]):
        if leaf.text in _CLOSING:
            depth += 1
        elif leaf.text in _OPENING:
            depth -= 1
        elif depth == 0 and leaf.kind == tokenize.NAME and leaf.text in ("for", "in"):
            return leaf.text == "for"
    return False


def _delimiter_split(line: _Line) -> Optional[list[_Line]]:
    """The line split at its delimiters of the highest priority (the last leaf aside): one
    element per line at commas, the last with a trailing comma where the line is a whole
    bracket's contents; None where there is nothing to split at."""
    delimiters = _delimiters(line.leaves)
    delimiters.pop(len(line.leaves) - 1, None)
    if not delimiters:
        return None
    priority = max(delimiters.values())
    ends = [index for index, found in sorted(delimiters.items()) if found == priority]
    if priority == _DOT_PRIORITY and len(ends) == 1:
        return None  # one method call taken from its receiver reads wrong
    bounds = [0, *(index + 1 for index in ends), len(line.leaves)]
    pieces = [line.leaves[start:end] for start, end in zip(bounds, bounds[1:]) if end > start]
    if priority == _COMMA_PRIORITY and line.may_add_comma and pieces[-1][-1].text != ",":
        pieces[-1] = (*pieces[-1], _Leaf(",", "", tokenize.OP))
    element = replace(line, comment="", may_add_comma=False, explode=False)
    split = [replace(element, leaves=(replace(piece[0], space=""), *piece[1:])) for piece in pieces]
    split[-1] = replace(split[-1], comment=line.comment)
    return split


def _right_hand_split(line: _Line, limit: int, unit: str) -> Optional[list[_Line]]:
    """The line split at a bracket, as the formatter's right-hand split: from the last bracket
    leftwards while what is left of the line after it fits, the first whose opening line fits
    (else the last bracket): ``head(``, the contents one level in, ``)tail``. The value of a
    ``return`` or an assignment gets parentheses where the formatter adds them: when it has
    more than one delimiter of the highest priority, or no bracket of its own to split at."""
    value = _value_start(line)
    if value is not None:
        delimiters = _delimiters(line.leaves[value:])
        counts = sorted(delimiters.values(), reverse=True)
        pairs = [pair for pair in _bracket_pairs(line.leaves) if pair[0] >= value and pair[1] - pair[0] > 1]
        several = bool(counts) and counts.count(counts[0]) > 1
        if several or not pairs or (counts and counts[0] != _DOT_PRIORITY and not _ends_in_bracket(line, value, unit, limit)):
            return _parenthesized(line, value, unit)
    pairs = _bracket_pairs(line.leaves)
    chosen = None
    for opening, closing in pairs:
        tail = line.leaves[closing:]
        if _width(line.indent) + len(line.comment) + sum(len(leaf.space) + len(leaf.text) for leaf in tail) > limit:
            break
        if closing - opening > 1 and _width(replace(line, leaves=line.leaves[: opening + 1], comment="").render()) <= limit:
            chosen = (opening, closing)
            break
    if chosen is None:
        chosen = next(((opening, closing) for opening, closing in pairs if closing - opening > 1), None)
        if chosen is None:
            return None
    opening, closing = chosen
    head, body, tail = line.leaves[: opening + 1], line.leaves[opening + 1 : closing], line.leaves[closing:]
    commas = [index for index, leaf in _depth_zero(body) if leaf.text == ","]
    separates = any(index < len(body) - 1 for index in commas)
    # A display (list, dict, set, tuple) rather than a call's or subscript's brackets.
    is_display = opening == 0 or not (head[-2].is_name or head[-2].text in _CLOSING)
    return [
        _Line(line.indent, head),
        _Line(
            line.indent + unit,
            (replace(body[0], space=""), *body[1:]),
            inside_brackets=True,
            may_add_comma=True,
            explode=separates and (is_display or body[-1].text == ","),
        ),
        _Line(line.indent, (replace(tail[0], space=""), *tail[1:]), line.comment),
    ]


def _value_start(line: _Line) -> Optional[int]:
    """Where the value of a ``return`` or of an assignment (``=``, ``+=``, ...) begins on a
    statement's line; None for other lines."""
    if not line.statement:
        return None
    if line.leaves[0].text == "return" and len(line.leaves) > 1:
        return 1
    for index, leaf in _depth_zero(line.leaves):
        if leaf.kind == tokenize.OP and leaf.text in _ASSIGNMENTS:
            return index + 1 if index + 1 < len(line.leaves) else None
    return None


def _ends_in_bracket(line: _Line, value: int, unit: str, limit: int) -> bool:
    """The value ends with a call's, display's or parenthesis' closing bracket (not a
    subscript's) and another bracket comes before its opening one, or the value fits up to
    it: the formatter then splits at that bracket rather than add parentheses."""
    leaves = line.leaves[value:]
    if len(leaves) < 2 or leaves[-1].text not in ")}]" or leaves[-2].text in _OPENING:
        return False
    opening = _bracket_pairs(leaves)[0][0]
    if leaves[-1].text == "]" and opening > 0 and (leaves[opening - 1].is_name or leaves[opening - 1].text in _CLOSING):
        return False
    if any(leaf.text in _OPENING for leaf in leaves[:opening]):
        return True
    start = _Line(line.indent + unit, (replace(leaves[0], space=""), *leaves[1 : opening + 1]))
    return _width(start.render()) <= limit


def _parenthesized(line: _Line, value: int, unit: str) -> list[_Line]:
    """``head = (``, the value one level in, ``)``: the formatter's optional parentheses."""
    body = line.leaves[value:]
    return [
        _Line(line.indent, (*line.leaves[:value], _Leaf("(", " ", tokenize.OP))),
        _Line(line.indent + unit, (replace(body[0], space=""), *body[1:]), inside_brackets=True, may_add_comma=True),
        _Line(line.indent, (_Leaf(")", "", tokenize.OP),), line.comment),
    ]


def _bracket_pairs(leaves: Sequence[_Leaf]) -> list[tuple[int, int]]:
    """(opening, closing) indices of the brackets outside any other bracket, last first."""
    pairs = []
    opening = 0
    depth = 0
    for index, leaf in enumerate(leaves):
        if leaf.text in _OPENING:
            if depth == 0:
                opening = index
            depth += 1
        elif leaf.text in _CLOSING:
            depth -= 1
            if depth == 0:
                pairs.append((opening, index))
    return pairs[::-1]


def _same_tree(before: str, after: str) -> bool:
    """The layout changed no syntax: both texts parse to the same tree."""
    try:
        return ast.dump(ast.parse(before)) == ast.dump(ast.parse(after))
    except (SyntaxError, ValueError):
        return False
