"""positions.node_positions against LibCST's own PositionProvider, on every node of real files."""

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from torchdevice_lint.analysis.tree import walk
from torchdevice_lint.positions import node_positions

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
