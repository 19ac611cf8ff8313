"""The labelled regression corpus (tests/corpus): precision of TDL003 and TDL004 on real shapes.

Each corpus file labels its sites on the line where they start:
``# expect: TDL003`` must be reported there, ``# ok: TDL004`` must not.
"""

from __future__ import annotations

import re
from pathlib import Path

import libcst as cst
import pytest

from torchdevice_lint import Settings, fix_source, lint_source

CORPUS = Path(__file__).resolve().parent / "corpus"
FILES = sorted(CORPUS.glob("*.py"))
CODES = ("TDL003", "TDL004")
SETTINGS = Settings(select=CODES)
LABEL = re.compile(r"#\s*(expect|ok):\s*(TDL\d{3}(?:\s*,\s*TDL\d{3})*)")


def labels(source: str) -> tuple[set[tuple[int, str]], set[tuple[int, str]]]:
    """The (line, code) pairs labelled ``expect`` and ``ok`` in one file."""
    expect: set[tuple[int, str]] = set()
    ok: set[tuple[int, str]] = set()
    for number, line in enumerate(source.splitlines(), start=1):
        for kind, codes in LABEL.findall(line):
            for code in re.split(r"\s*,\s*", codes):
                assert code in CODES, f"line {number}: unknown code {code}"
                (expect if kind == "expect" else ok).add((number, code))
    assert not expect & ok, f"labelled both expect and ok: {sorted(expect & ok)}"
    return expect, ok


def findings(source: str) -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in lint_source(source, SETTINGS)}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_findings_are_exactly_the_expect_labels(path):
    source = path.read_text()
    expect, ok = labels(source)
    found = findings(source)
    false_positives = sorted(found & ok)
    missed = sorted(expect - found)
    unlabelled = sorted(found - expect - ok)
    assert (false_positives, missed, unlabelled) == ([], [], []), (
        f"{path.name}: reported on ok lines {false_positives}; "
        f"missed expected {missed}; reported on unlabelled lines {unlabelled}"
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_unsafe_fix_parses_and_is_idempotent(path):
    source = path.read_text()
    once = fix_source(source, unsafe=True, settings=SETTINGS)
    cst.parse_module(once)
    assert fix_source(once, unsafe=True, settings=SETTINGS) == once
    assert fix_source(source, unsafe=True) == fix_source(fix_source(source, unsafe=True), unsafe=True)


def test_corpus_size_and_balance():
    expect_total = ok_total = 0
    per_code = {code: 0 for code in CODES}
    for path in FILES:
        expect, ok = labels(path.read_text())
        expect_total += len(expect)
        ok_total += len(ok)
        for _, code in expect | ok:
            per_code[code] += 1
    assert len(FILES) >= 15
    assert expect_total + ok_total >= 150
    assert ok_total > expect_total
    assert all(count >= 30 for count in per_code.values()), per_code
