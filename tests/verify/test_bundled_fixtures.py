"""Every bundled fixture through the runtime verifier, on the CPU and the simulated CUDA device.

This is the slowest test of the suite (each case runs its original and fixed programs in
several subprocesses); it is what proves that the fixes keep outputs and remove the bugs.
"""

from pathlib import Path

import pytest

pytest.importorskip("torch")

from torchdevice_lint.verify.runner import discover_cases, verify_cases  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures"


@pytest.fixture(scope="module")
def results():
    cases = discover_cases(FIXTURES)
    assert len(cases) >= 20
    return {r.case.name: r for r in verify_cases(cases, timeout=120)}


def test_every_case_passes(results):
    failing = {name: (r.result, r.notes) for name, r in results.items() if r.result != "ok"}
    assert failing == {}


def test_device_bugs_are_caught_in_the_originals(results):
    """A TDL003/TDL004 original fails where a GPU would fail; its fixed form does not."""
    for name, result in results.items():
        rule, case = name.split("/")
        if rule in ("tdl003", "tdl004") and not case.startswith("hard_negatives"):
            assert any("Expected all tensors to be on the same device" in bug for bug in result.bugs_removed), name


def test_cuda_only_originals_fail_without_cuda(results):
    for name, result in results.items():
        if name.startswith(("tdl001/", "tdl002/")) and name != "tdl001/guarded_cuda_calls":
            assert result.bugs_removed, name


def test_a_hardcoded_second_gpu_fails_on_a_one_gpu_machine(results):
    for name, result in results.items():
        if name.startswith("tdl010/"):
            assert result.case.report_only, name
            assert any("invalid device ordinal" in bug for bug in result.bugs_removed), name
