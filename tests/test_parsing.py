"""The parser entry point: a parse skips LibCST's checks of the nodes its parser builds, and only those."""

from pathlib import Path

import libcst as cst
import pytest

from torchdevice_lint.parsing import SourceError, parse, parse_module

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures").rglob("*.py"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.name)
def test_the_tree_is_the_one_libcst_builds_with_its_checks(path):
    source = path.read_bytes()
    ours, checked = parse_module(source), cst.parse_module(source)
    assert ours.deep_equals(checked)
    assert ours.bytes == source


def test_nodes_built_outside_a_parse_are_still_checked():
    parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")


def test_checks_come_back_after_a_parse_that_fails():
    with pytest.raises(SourceError):
        parse("def f(:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")


def test_a_parse_does_not_check_what_the_parser_built(monkeypatch):
    checked: list[str] = []
    monkeypatch.setattr(cst.Name, "_validate", lambda node: checked.append(node.value))
    parse_module("first = second\n")
    assert checked == []
    cst.Name("third")
    assert checked == ["third"]
