"""pytest plugin: a ``torchdevice_verify`` fixture that verifies fixture cases.

pytest loads this module in every run of anyone who installs torchdevice-lint,
so it imports nothing heavy: torch and the runner load only when a test asks
for the fixture.

    def test_my_fixtures(torchdevice_verify):
        torchdevice_verify("fixtures/")          # a folder of cases, or one case

The call fails the test with the verdict table when a case fails, skips it when
torch is not installed, and returns the list of ``CaseResult``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Union

import pytest


@pytest.fixture
def torchdevice_verify() -> Callable:
    """Verify fixture cases in subprocesses; fail the test on any difference."""
    pytest.importorskip("torch")
    from torchdevice_lint.verify.report import format_table
    from torchdevice_lint.verify.runner import discover_cases, verify_cases

    def verify(path: Union[str, Path], *, timeout: float = 60.0, jobs: int = 0) -> list:
        cases = discover_cases(Path(path))
        if not cases:
            pytest.fail(f"no fixture cases under {path}", pytrace=False)
        results = verify_cases(cases, timeout=timeout, jobs=jobs)
        if not all(result.passed for result in results):
            pytest.fail(format_table(results, details=True), pytrace=False)
        return results

    return verify
