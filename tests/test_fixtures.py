"""The bundled fixtures: the codemod's exact output and findings, stored beside each original."""

from pathlib import Path

import libcst as cst
import pytest

from torchdevice_lint import Linter, Settings, fix_source, lint_source
from torchdevice_lint.verify.runner import fixture_settings as settings

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CASES = sorted(p.parent for p in FIXTURES.glob("*/*/original.py"))
#: Cases of rules that report without fixing: a hand-made ``suggested.py`` instead of ``fixed.py``.
REPORT_ONLY = [case for case in CASES if (case / "suggested.py").exists()]
FIXED = [case for case in CASES if case not in REPORT_ONLY]


def test_the_headline_rules_have_at_least_five_cases_each():
    per_rule = {}
    for case in CASES:
        per_rule.setdefault(case.parent.name, []).append(case)
    assert {code: len(per_rule.get(code, ())) >= 5 for code in ("tdl001", "tdl002", "tdl003", "tdl004")} == {
        code: True for code in ("tdl001", "tdl002", "tdl003", "tdl004")
    }
    assert len(CASES) >= 20


@pytest.mark.parametrize("case", FIXED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_codemod_output_is_the_stored_fixed_form(case):
    original = (case / "original.py").read_bytes()
    assert fix_source(original, unsafe=True, settings=settings(case)) == (case / "fixed.py").read_bytes()


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_findings_are_the_stored_ones(case):
    findings = lint_source((case / "original.py").read_bytes(), settings(case))
    printed = "".join(f"{f.line}:{f.column + 1} {f.code}\n" for f in findings)
    assert printed == (case / "findings.txt").read_text()
    code = case.parent.name.upper()
    if case.name.startswith("hard_negatives"):
        assert findings == []
    else:
        assert code in {f.code for f in findings}


@pytest.mark.parametrize("case", REPORT_ONLY, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_report_only_case_is_left_alone_and_its_suggestion_is_clean(case):
    original = (case / "original.py").read_bytes()
    assert not (case / "fixed.py").exists()
    assert fix_source(original, unsafe=True) == original
    code = case.parent.name.upper()
    assert code not in {f.code for f in lint_source((case / "suggested.py").read_bytes(), Settings(select=("TDL",)))}


def test_every_report_only_rule_has_a_case():
    # tdl001: `.cuda()` under a CUDA check is reported without a fix (guarded_cuda_calls)
    assert {case.parent.name for case in REPORT_ONLY} == {"tdl001", "tdl010", "tdl011"}


@pytest.mark.parametrize("case", FIXED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixed_form_parses_is_stable_and_clean(case):
    fixed = (case / "fixed.py").read_bytes()
    cst.parse_module(fixed)
    assert fix_source(fixed, unsafe=True, settings=settings(case)) == fixed
    remaining = Linter(settings(case)).fix(fixed, unsafe=True).remaining
    assert [f for f in remaining if f.fixable] == []
