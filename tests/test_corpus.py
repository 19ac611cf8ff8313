"""The labelled regression corpus (tests/corpus): precision of TDL003, TDL004 and TDL013 on real shapes.

Each corpus file labels its sites on the line where they start:
``# expect: TDL003`` must be reported there, ``# ok: TDL004`` must not. ``# miss: TDL003``
marks a real bug the analysis cannot see yet: it must not be reported either (so that a
better analysis turns it into an ``expect`` deliberately), and misses are kept few.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from torchdevice_lint import Settings, lint_source

CORPUS = Path(__file__).resolve().parent / "corpus"
FILES = sorted(CORPUS.glob("*.py"))
CODES = ("TDL003", "TDL004", "TDL013")
SETTINGS = Settings(select=CODES)
LABEL = re.compile(r"#\s*(expect|ok|miss):\s*(TDL\d{3}(?:\s*,\s*TDL\d{3})*)")


def labels(source: str) -> tuple[set[tuple[int, str]], set[tuple[int, str]], set[tuple[int, str]]]:
    """The (line, code) pairs labelled ``expect``, ``ok`` and ``miss`` in one file."""
    found: dict[str, set[tuple[int, str]]] = {"expect": set(), "ok": set(), "miss": set()}
    for number, line in enumerate(source.splitlines(), start=1):
        for kind, codes in LABEL.findall(line):
            for code in re.split(r"\s*,\s*", codes):
                assert code in CODES, f"line {number}: unknown code {code}"
                found[kind].add((number, code))
    expect, ok, miss = found["expect"], found["ok"], found["miss"]
    assert not (expect & ok or expect & miss or ok & miss), "a site has two labels"
    return expect, ok, miss


def findings(source: str) -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in lint_source(source, SETTINGS)}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_findings_are_exactly_the_expect_labels(path):
    source = path.read_text()
    expect, ok, miss = labels(source)
    found = findings(source)
    false_positives = sorted(found & (ok | miss))
    missed = sorted(expect - found)
    unlabelled = sorted(found - expect - ok)
    assert (false_positives, missed, unlabelled) == ([], [], []), (
        f"{path.name}: reported on ok lines {false_positives}; "
        f"missed expected {missed}; reported on unlabelled lines {unlabelled}"
    )


def test_corpus_size_and_balance():
    expect_total = ok_total = miss_total = 0
    per_code = {code: 0 for code in CODES}
    for path in FILES:
        expect, ok, miss = labels(path.read_text())
        expect_total += len(expect)
        ok_total += len(ok)
        miss_total += len(miss)
        for _, code in expect | ok:
            per_code[code] += 1
    assert miss_total * 10 <= expect_total + miss_total  # known misses stay under a tenth of the bugs
    assert len(FILES) >= 15
    assert expect_total + ok_total >= 150
    assert ok_total > expect_total
    assert per_code["TDL003"] >= 30 and per_code["TDL004"] >= 30, per_code
    assert per_code["TDL013"] >= 5, per_code  # the preview rule's few weaker cases
