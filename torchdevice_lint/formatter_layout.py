"""The layout Black and Ruff's formatter give one logical line that is too long: split at the
delimiters of the highest priority inside brackets (one element per line at commas, with a
trailing comma; else before comprehension clauses, ternaries, ``and``/``or``, comparisons,
operators, or the dots of a method chain); otherwise at the last bracket whose opening line
fits, the contents one level in and on one line when they fit, else split again; the value of
a ``return`` or an assignment in parentheses where the formatter adds them.
`torchdevice_lint.wrapping` decides which lines a fix needs laid out."""

from __future__ import annotations

import keyword
import tokenize
import unicodedata
from dataclasses import dataclass, replace
from typing import Iterator, Optional, Sequence

OPENING, CLOSING = "([{", ")]}"
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




def width(text: str) -> int:
    """Columns ``text`` takes, wide East Asian characters counting two (as Ruff and Black count)."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(character) in "WF" else 1 for character in text)


@dataclass(frozen=True)
class Leaf:
    """One token of a line and the whitespace written before it."""

    text: str
    space: str
    kind: int

    @property
    def is_name(self) -> bool:
        """A name, not a keyword: an opening bracket after it is a call or a subscript."""
        return self.kind == tokenize.NAME and not keyword.iskeyword(self.text)


@dataclass(frozen=True)
class Line:
    """A line to lay out: its indentation, tokens and trailing comment."""

    indent: str
    leaves: tuple[Leaf, ...]
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


def lay_out(line: Line, limit: int, unit: str, splits: int = 0) -> list[str]:
    """``line`` laid out in lines that fit where the formatter can make them fit."""
    text = line.render()
    if (width(text) <= limit and not line.explode) or splits > _MAX_SPLITS:
        return [text]
    pieces = _delimiter_split(line) if line.inside_brackets else None
    if pieces is not None and len(pieces) > 1:
        return _split_all(pieces, limit, unit, splits)
    pieces = _right_hand_split(line, limit, unit)
    if pieces is None or len(pieces) < 2:
        return [text]
    parts = _split_all(pieces, limit, unit, splits)
    value = _value_start(line)
    if value is not None and width(parts[0]) > limit:
        # The formatter's second opinion: the value in parentheses, taken when every line fits.
        parenthesized = _split_all(_parenthesized(line, value, unit), limit, unit, splits)
        if all(width(part) <= limit for part in parenthesized):
            return parenthesized
    return parts


def _split_all(pieces: Sequence[Line], limit: int, unit: str, splits: int) -> list[str]:
    return [part for piece in pieces for part in lay_out(piece, limit, unit, splits + 1)]


def _depth_zero(leaves: Sequence[Leaf]) -> Iterator[tuple[int, Leaf]]:
    """The leaves outside any bracket of ``leaves``, with their indices; as for the formatter,
    a comprehension's target (``for a, b in``) and a lambda's parameters count as inside."""
    depth = 0
    awaiting: list[tuple[str, int]] = []  # (the word that ends a target or parameters, its depth)
    for index, leaf in enumerate(leaves):
        if leaf.text in CLOSING:
            depth -= 1
        elif awaiting and (leaf.text, depth - 1) == awaiting[-1]:
            awaiting.pop()
            depth -= 1
        if depth == 0:
            yield index, leaf
        if leaf.text in OPENING:
            depth += 1
        elif leaf.kind == tokenize.NAME and leaf.text in ("for", "lambda"):
            awaiting.append(("in" if leaf.text == "for" else ":", depth))
            depth += 1


def _delimiters(leaves: Sequence[Leaf]) -> dict[int, int]:
    """The formatter's split points outside brackets: {index of the leaf a line ends with:
    priority}. A comma ends its line; an operator, ``and``/``or``, a comparison, a ternary's
    ``if``/``else`` or a method call's dot after a bracket starts the next one."""
    found: dict[int, int] = {}
    previous: Optional[Leaf] = None
    in_comprehension = False
    for index, leaf in _depth_zero(leaves):
        # A binary operator follows an operand (else ``-``, ``*`` and ``**`` are unary or unpacking).
        operand_before = previous is not None and (
            previous.is_name or previous.kind in (tokenize.NUMBER, tokenize.STRING) or previous.text in CLOSING
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
        elif leaf.text == "." and previous is not None and previous.text in CLOSING:
            priority = _DOT_PRIORITY
        if priority and index > 0:
            found[index - 1] = priority
        previous = leaf
    return found


def _ends_target(leaves: Sequence[Leaf], index: int) -> bool:
    """The ``in`` at ``index`` ends a comprehension's ``for`` target rather than compares."""
    depth = 0
    for leaf in reversed(leaves[:index]):
        if leaf.text in CLOSING:
            depth += 1
        elif leaf.text in OPENING:
            depth -= 1
        elif depth == 0 and leaf.kind == tokenize.NAME and leaf.text in ("for", "in"):
            return leaf.text == "for"
    return False


def _delimiter_split(line: Line) -> Optional[list[Line]]:
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
        pieces[-1] = (*pieces[-1], Leaf(",", "", tokenize.OP))
    element = replace(line, comment="", may_add_comma=False, explode=False)
    split = [replace(element, leaves=(replace(piece[0], space=""), *piece[1:])) for piece in pieces]
    split[-1] = replace(split[-1], comment=line.comment)
    return split


def _right_hand_split(line: Line, limit: int, unit: str) -> Optional[list[Line]]:
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
        if width(line.indent) + len(line.comment) + sum(len(leaf.space) + len(leaf.text) for leaf in tail) > limit:
            break
        if closing - opening > 1 and width(replace(line, leaves=line.leaves[: opening + 1], comment="").render()) <= limit:
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
    is_display = opening == 0 or not (head[-2].is_name or head[-2].text in CLOSING)
    return [
        Line(line.indent, head),
        Line(
            line.indent + unit,
            (replace(body[0], space=""), *body[1:]),
            inside_brackets=True,
            may_add_comma=True,
            explode=separates and (is_display or body[-1].text == ","),
        ),
        Line(line.indent, (replace(tail[0], space=""), *tail[1:]), line.comment),
    ]


def _value_start(line: Line) -> Optional[int]:
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


def _ends_in_bracket(line: Line, value: int, unit: str, limit: int) -> bool:
    """The value ends with a call's, display's or parenthesis' closing bracket (not a
    subscript's) and another bracket comes before its opening one, or the value fits up to
    it: the formatter then splits at that bracket rather than add parentheses."""
    leaves = line.leaves[value:]
    if len(leaves) < 2 or leaves[-1].text not in ")}]" or leaves[-2].text in OPENING:
        return False
    opening = _bracket_pairs(leaves)[0][0]
    if leaves[-1].text == "]" and opening > 0 and (leaves[opening - 1].is_name or leaves[opening - 1].text in CLOSING):
        return False
    if any(leaf.text in OPENING for leaf in leaves[:opening]):
        return True
    start = Line(line.indent + unit, (replace(leaves[0], space=""), *leaves[1 : opening + 1]))
    return width(start.render()) <= limit


def _parenthesized(line: Line, value: int, unit: str) -> list[Line]:
    """``head = (``, the value one level in, ``)``: the formatter's optional parentheses."""
    body = line.leaves[value:]
    return [
        Line(line.indent, (*line.leaves[:value], Leaf("(", " ", tokenize.OP))),
        Line(line.indent + unit, (replace(body[0], space=""), *body[1:]), inside_brackets=True, may_add_comma=True),
        Line(line.indent, (Leaf(")", "", tokenize.OP),), line.comment),
    ]


def _bracket_pairs(leaves: Sequence[Leaf]) -> list[tuple[int, int]]:
    """(opening, closing) indices of the brackets outside any other bracket, last first."""
    pairs = []
    opening = 0
    depth = 0
    for index, leaf in enumerate(leaves):
        if leaf.text in OPENING:
            if depth == 0:
                opening = index
            depth += 1
        elif leaf.text in CLOSING:
            depth -= 1
            if depth == 0:
                pairs.append((opening, index))
    return pairs[::-1]


def lay_out_as_yapf(line: Line, limit: int, layout: str) -> Optional[list[str]]:
    """``line`` laid out as yapf splits a call (`config.project_layout`), where it is a statement
    that ends with the call's closing bracket and whose arguments fit in the shape that layout
    gives them; None otherwise (yapf's choice among other splits is not known here)::

        x = torch.empty(a,               x = torch.empty(              x = torch.empty(
                        dtype=t)             a, dtype=t)                   a, dtype=t
        (yapf-aligned)                   (yapf-hanging)                )  (yapf-dedent)
    """
    leaves = line.leaves
    if not line.statement or line.comment or layout not in ("yapf-aligned", "yapf-hanging", "yapf-dedent"):
        return None
    opening = next((index for index, leaf in _depth_zero(leaves) if leaf.text in OPENING), None)
    if opening is None or opening == 0 or leaves[opening].text != "(" or not leaves[opening - 1].is_name:
        return None
    if _bracket_pairs(leaves)[-1] != (opening, len(leaves) - 1) or len(leaves) - opening < 3:
        return None
    head = replace(line, leaves=leaves[: opening + 1], comment="").render()
    contents = leaves[opening + 1 : -1]
    if not any(leaf.text == "=" for _, leaf in _depth_zero(contents)):
        return None  # without a keyword argument yapf fills the lines with arguments
    starts = [0, *(index + 1 for index, leaf in _depth_zero(contents) if leaf.text == ",")]
    if layout != "yapf-dedent" and any(index < len(contents) and contents[index].text in OPENING for index in starts):
        return None  # a display among the arguments: yapf weighs other splits
    inner = line.indent + " " * 4
    if layout == "yapf-aligned":
        commas = [index for index, leaf in _depth_zero(contents) if leaf.text == ","]
        if not commas or commas[-1] == len(contents) - 1:
            return None
        bounds = [0, *(index + 1 for index in commas), len(contents)]
        arguments = [contents[start:end] for start, end in zip(bounds, bounds[1:])]
        column = " " * width(head)
        parts = [
            (head if number == 0 else column) + _joined_leaves(argument) + (")" if number == len(arguments) - 1 else "")
            for number, argument in enumerate(arguments)
        ]
    elif layout == "yapf-hanging":
        parts = [head, inner + _joined_leaves(contents) + ")"]
    else:
        # yapf keeps that line one column short of its limit (checked against yapf 0.32)
        parts = [head, inner + _joined_leaves(contents), line.indent + ")"]
        limit -= width(parts[1]) == limit
    return parts if all(width(part) <= limit for part in parts) else None


def _joined_leaves(leaves: Sequence[Leaf]) -> str:
    """The leaves as one line's text, without the space before the first."""
    return leaves[0].text + "".join(leaf.space + leaf.text for leaf in leaves[1:])
