"""reparse.Reparser against a parse of the whole text, over random edits of real files.

An editor's document is parsed again after each change by re-parsing only the statements the
change reached; whatever the edit, the result must be the tree a parse of the whole text gives
(or the same error), and the engine's findings on it the findings of a plain lint.
"""

import ast
import itertools
import random
from pathlib import Path

import libcst as cst
import pytest

from torchdevice_lint import lint_source
from torchdevice_lint.engine import Linter
from torchdevice_lint.parsing import SourceError
from torchdevice_lint.reparse import Layout, Reparser

CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.py"))
#: Files of several top-level statements, where an edit leaves some of them untouched to reuse
#: (a file of one class has nothing else to keep when the class is edited).
EDITED = [path for path in CORPUS if len(ast.parse(path.read_text()).body) >= 4][::4]
FIXTURES = sorted((Path(__file__).parents[1] / "fixtures").rglob("original.py"))


def edits(text: str, rng: random.Random, count: int):
    """Versions of ``text``, each one keystroke-sized or line-sized edit away from it (so two
    away from the version before), of the kinds typing makes: text inserted or deleted inside a
    line, lines added, removed or cut in half (often a syntax error), comments and blank lines,
    indentation."""
    original = text.splitlines(keepends=True)
    for _ in range(count):
        lines = list(original)
        index = rng.randrange(len(lines))
        line = lines[index]
        kind = rng.randrange(8)
        if kind == 0:
            lines[index] = line.replace("(", "( ", 1)
        elif kind == 1:
            lines.insert(index, rng.choice(lines))
        elif kind == 2:
            del lines[index]
        elif kind == 3:
            lines[index] = "# a comment\n" + line
        elif kind == 4:
            lines[index] = line[: len(line) // 2] + "\n"
        elif kind == 5:
            lines.insert(index, "    \n")
        elif kind == 6:
            lines[index] = "x = torch.zeros(3).cuda()\n"
        else:
            lines[index] = "    " + line
        yield "".join(lines)


def parsed_whole(text: str):
    try:
        return cst.parse_module(text)
    except Exception:  # any failure: the reparser must fail too
        return None


@pytest.mark.parametrize("path", EDITED, ids=lambda p: p.name)
def test_every_edit_gives_the_tree_of_a_whole_parse(path):
    text = path.read_text()
    reparser = Reparser()
    previous, _ = reparser.parse(text)
    rng = random.Random(path.name)
    reused = 0
    for version in edits(text, rng, 15):
        whole = parsed_whole(version)
        if whole is None:
            with pytest.raises(SourceError):
                reparser.parse(version)
            continue
        module, layout = reparser.parse(version)
        assert module.deep_equals(whole)
        assert layout is not None and layout.module is module
        line_starts = [0, *itertools.accumulate(len(line) for line in version.splitlines(keepends=True))]
        for first_line, statement in zip(layout.first_lines, layout.statements):
            assert version.startswith(statement, line_starts[first_line - 1])
        reused += bool({id(node) for node in module.body} & {id(node) for node in previous.body})
        previous = module
    assert reused  # not a whole parse every time


def test_statements_the_edit_did_not_reach_keep_their_nodes():
    text = "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(20))
    reparser = Reparser()
    before, _ = reparser.parse(text)
    after, layout = reparser.parse(text.replace("x + 7", "x * 7"))
    assert layout is not None
    kept = [index for index, (old, new) in enumerate(zip(before.body, after.body)) if old is new]
    assert kept == [n for n in range(20) if n not in (6, 7, 8)]  # the edited one and its neighbours
    assert layout.first_lines[:3] == (1, 3, 7)  # a statement's text starts with the blank lines before it


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: "# a new first line\n" + text,  # the module's header
        lambda text: text + "# a new last line\n",  # its footer
        lambda text: text.rstrip("\n"),  # no final newline
        lambda text: text.replace("\n\n\ndef f5", "\n\n\n    def f5"),  # an indented def: a syntax error
    ],
    ids=["header", "footer", "no-final-newline", "syntax-error"],
)
def test_edits_at_the_edges_fall_back_to_the_whole_text(edit):
    text = "import torch\n\n" + "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(8))
    reparser = Reparser()
    reparser.parse(text)
    version = edit(text)
    whole = parsed_whole(version)
    if whole is None:
        with pytest.raises(SourceError):
            reparser.parse(version)
        assert reparser.parse(text)[0].deep_equals(cst.parse_module(text))  # and it recovers
        return
    module, layout = reparser.parse(version)
    assert module.deep_equals(whole)
    assert (layout is None) == (not version.endswith("\n"))


def test_a_file_without_a_final_newline_has_no_layout():
    module = cst.parse_module("x = 1\ny = 2")
    assert Layout.of(module, "x = 1\ny = 2") is None


@pytest.mark.parametrize("path", FIXTURES[::5], ids=lambda p: p.parent.name)
def test_findings_on_a_reparsed_text_are_those_of_a_plain_lint(path):
    """Positions and noqa come from the statements that hold the findings alone: the same as
    from the whole module's code."""
    text = path.read_text()
    linter, reparser = Linter(), Reparser()
    for version in [text, *edits(text, random.Random(str(path)), 8)]:
        try:
            expected = lint_source(version)
        except SourceError:
            continue
        got = sorted(linter.lint(version, reparser=reparser), key=lambda f: (f.line, f.column, f.code))
        assert got == expected


def test_a_noqa_on_any_line_of_a_multiline_statement_holds_after_an_edit():
    text = (
        "import torch\n\n\ndef f(x):\n    return x\n\n\n"
        "y = torch.zeros(\n    3,\n).cuda()  # noqa: TDL001\n\n\nz = torch.ones(2).cuda()\n"
    )
    linter, reparser = Linter(), Reparser()
    assert [f.line for f in linter.lint(text, reparser=reparser)] == [13]
    edited = text.replace("return x", "return x + 1")
    assert [f.line for f in linter.lint(edited, reparser=reparser)] == [13]
