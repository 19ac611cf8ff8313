"""positions.node_positions against LibCST's own PositionProvider, on every node of real files."""

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from torchdevice_lint.analysis.tree import walk
from torchdevice_lint.positions import node_positions, positions_in_statement
from torchdevice_lint.reparse import Layout

FILES = sorted((Path(__file__).parent / "corpus").glob("*.py"))[:8]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_positions_match_libcst_position_provider(path):
    wrapper = MetadataWrapper(cst.parse_module(path.read_text()), unsafe_skip_copy=True)
    expected = wrapper.resolve(PositionProvider)
    nodes = list(walk(wrapper.module))
    code, positions = node_positions(wrapper.module, nodes)
    assert code == wrapper.module.code
    for node in nodes:
        span = expected[node]
        assert positions[id(node)] == ((span.start.line, span.start.column), (span.end.line, span.end.column)), node


@pytest.mark.parametrize("path", FILES[:4], ids=lambda p: p.name)
def test_positions_in_one_statement_match_libcst_position_provider(path):
    """What an editor's re-check uses: one top-level statement's code alone, from its first line."""
    text = path.read_text()
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    expected = wrapper.resolve(PositionProvider)
    layout = Layout.of(wrapper.module, text)
    assert layout is not None
    for statement, first_line in zip(wrapper.module.body, layout.first_lines):
        nodes = list(walk(statement))
        positions = positions_in_statement(wrapper.module, statement, first_line, nodes)
        assert positions is not None
        for node in nodes:
            span = expected[node]
            assert positions[id(node)] == ((span.start.line, span.start.column), (span.end.line, span.end.column)), node
    assert positions_in_statement(wrapper.module, wrapper.module.body[0], 1, [wrapper.module.body[-1]]) is None
