"""Line and column of the nodes findings point at, computed only for those nodes.

LibCST's ``PositionProvider`` converts every token of a file into a position; a file with one
finding needs two. This records token spans during code generation and converts only the ones
asked for. It builds on LibCST's ``CodegenState``, which is private: tests/test_positions.py
checks it against ``PositionProvider`` on every node of real files, so a LibCST upgrade that
changes it fails there.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Iterator, Optional, Sequence

import libcst as cst
from libcst._nodes.internal import CodegenState

#: Line breaks as LibCST counts them for positions (``str.splitlines`` also splits at form feeds).
_NEWLINE = re.compile(r"\r\n?|\n")


class _SpanState(CodegenState):
    """Code generation that notes which generated tokens each node spans.

    It records the same syntactic extents as LibCST's ``PositionProvider`` (which this replaces)
    but as token indices, without turning every token into a line and column: only the nodes a
    finding needs are converted, and only files with findings pay for this at all.
    """

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.spans: dict[int, tuple[int, int]] = {}
        self._starts: list[int] = []

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        self.spans.setdefault(id(node), (start, len(self.tokens)))

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> Iterator[None]:
        start = len(self.tokens)
        try:
            yield
        finally:
            end = len(self.tokens)
            if start_node is not None:
                start = self.spans[id(start_node)][0]
            if end_node is not None:
                end = self.spans[id(end_node)][1]
            self.spans[id(node)] = (start, end)


Position = tuple[int, int]


def node_positions(module: cst.Module, nodes: Sequence[cst.CSTNode]) -> tuple[str, dict[int, tuple[Position, Position]]]:
    """The module's code and, by node id, each node's (line, column) start and end.

    Lines are 1-based and columns 0-based, exactly as LibCST's ``PositionProvider`` gives them.
    """
    state = _SpanState(module)
    module._codegen(state)
    positions = _positions(state, nodes, first_line=1)
    assert positions is not None  # every node of the module has its span
    return "".join(state.tokens), positions


def positions_in_statement(
    module: cst.Module, statement: cst.CSTNode, first_line: int, nodes: Sequence[cst.CSTNode]
) -> Optional[dict[int, tuple[Position, Position]]]:
    """`node_positions` of nodes inside one top-level statement of ``module`` whose text starts
    on ``first_line``, generating that statement's code alone; None if a node is not inside it."""
    state = _SpanState(module)
    statement._codegen(state)
    return _positions(state, nodes, first_line)


def _positions(state: _SpanState, nodes: Sequence[cst.CSTNode], first_line: int) -> Optional[dict[int, tuple[Position, Position]]]:
    if any(id(node) not in state.spans for node in nodes):
        return None
    tokens = state.tokens
    spans = {id(node): state.spans[id(node)] for node in nodes}
    wanted = sorted({index for span in spans.values() for index in span})
    at: dict[int, Position] = {}
    line, column, next_wanted = first_line, 0, 0
    for index, token in enumerate(tokens):
        while next_wanted < len(wanted) and wanted[next_wanted] == index:
            at[index] = (line, column)
            next_wanted += 1
        if next_wanted == len(wanted):
            break
        if "\n" in token or "\r" in token:
            segments = _NEWLINE.split(token)
            line += len(segments) - 1
            column = len(segments[-1])
        else:
            column += len(token)
    for index in wanted[next_wanted:]:
        at[index] = (line, column)
    return {key: (at[start], at[end]) for key, (start, end) in spans.items()}
