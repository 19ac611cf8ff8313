"""Turn each rule's VALID and INVALID examples into test cases."""

from __future__ import annotations

from typing import Iterator

from torchdevice_lint.api import fix_source, lint_source
from torchdevice_lint.rule import Invalid, Rule
from torchdevice_lint.settings import Settings


def example_cases(rules) -> Iterator[tuple[str, type[Rule], object]]:
    """(test id, rule, example) for every example of every rule."""
    for rule in rules:
        for index, source in enumerate(rule.valid):
            yield f"{rule.code}-valid-{index}", rule, source
        for index, example in enumerate(rule.invalid):
            yield f"{rule.code}-invalid-{index}", rule, example


def check_example(rule: type[Rule], example: object) -> None:
    """Assert what an example promises: silence, or N findings and the exact fixed text."""
    only_this_rule = Settings(select=(rule.code,))
    if isinstance(example, str):
        findings = lint_source(example, only_this_rule)
        assert findings == [], f"{rule.code} flagged a valid example:\n{example}\n{findings}"
        return
    assert isinstance(example, Invalid)
    findings = lint_source(example.source, only_this_rule)
    assert len(findings) == example.count, (
        f"{rule.code} expected {example.count} finding(s), got {len(findings)}:\n{example.source}\n{findings}"
    )
    assert all(finding.code == rule.code for finding in findings)
    if example.fixed is not None:
        fixed = fix_source(example.source, unsafe=True, settings=only_this_rule)
        assert fixed == example.fixed, f"fix of\n{example.source}\ngave\n{fixed}\nexpected\n{example.fixed}"
        assert fix_source(fixed, unsafe=True, settings=only_this_rule) == fixed, "fix is not idempotent"
