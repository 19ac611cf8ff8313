"""The verdict table, and its JSON form."""

from __future__ import annotations

import json
from typing import Optional

from torchdevice_lint.verify.runner import CaseResult

HEADERS = ("case", "devices run", "max abs diff", "max rel diff", "result")


def _number(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.3g}"


def _result_text(result: CaseResult) -> str:
    text = result.result.upper() if not result.passed else result.result
    if result.bugs_removed:
        text += " (bug the fix removed)"
    return text


def format_table(results: list[CaseResult], *, details: bool = False) -> str:
    """One row per case; with ``details``, the reasons under the table."""
    rows = [
        (r.case.name, r.devices_run, _number(r.max_diff("max_abs")),
         _number(r.max_diff("max_rel")), _result_text(r))
        for r in results
    ]
    widths = [max(len(row[i]) for row in [HEADERS, *rows]) for i in range(len(HEADERS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
             for row in [HEADERS, *rows]]
    lines.insert(1, "  ".join("-" * width for width in widths))
    failed = sum(not r.passed for r in results)
    lines.append(f"\n{len(results)} case(s), {failed} failed")
    if details:
        for r in results:
            reasons = [f"bug the fix removed: {bug}" for bug in r.bugs_removed] + r.notes
            if r.case.codemod_diff and not r.passed:
                diff = r.case.codemod_diff.rstrip()
                reasons.append(f"codemod output differs from the stored fixed.py:\n{diff}")
            if reasons:
                lines.append(f"\n{r.case.name}:")
                lines.extend(f"  - {reason}" for reason in reasons)
    return "\n".join(lines)


def format_json(results: list[CaseResult]) -> str:
    return json.dumps(
        {"passed": all(r.passed for r in results), "cases": [r.to_json() for r in results]},
        indent=2,
    )
