"""How the suite spends its two cores: the package compiled once for every interpreter the
tests start, and how pytest-xdist shares the tests among its workers (`-n auto` in pyproject.toml).

Each test goes alone to whichever worker is free, except the tests of a module whose module
fixture costs seconds: those run together on one worker, so that the fixture is built once.
(xdist's own ``--dist loadgroup`` does this with ``xdist_group`` marks, but pytest 9.2 no longer
lets xdist 3.8 put the group in the test's id, so the marks are silently ignored.)
"""

from __future__ import annotations

import compileall
import signal
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "torchdevice_lint"


def pytest_configure(config):
    """Write the package's bytecode before the workers start. Where PYTHONDONTWRITEBYTECODE is set
    (it is on the team's machines), each of the hundreds of CLI, flake8 and worker processes the
    tests start would otherwise compile the package from source again: 0.17 s of CPU each."""
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(PACKAGE, quiet=1)

#: Modules (or folders) whose tests share an expensive module fixture, each with the name of the
#: worker's batch it joins: the verifier's fork server (it imports torch) and the verdicts on
#: the bundled fixtures, the programs corpus run, a language server, pre-commit's hook environment.
ONE_WORKER = {
    "tests/verify/test_bundled_fixtures.py": "verifier",
    "tests/verify/test_runner.py": "verifier",
    "tests/programs/test_program_corpus.py": "programs",
    "tests/test_lsp.py": "lsp",
    "tests/test_pre_commit.py": "pre-commit",
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "load":  # another mode (--dist loadfile, worksteal...) is xdist's
        return None
    from xdist.scheduler import LoadScopeScheduling

    class OneWorkerModulesScheduling(LoadScopeScheduling):
        """xdist's scope scheduling (largest batches first), with a batch per `ONE_WORKER`
        name and a batch of one for every other test."""

        def _split_scope(self, nodeid: str) -> str:
            return ONE_WORKER.get(nodeid.split("::", 1)[0], nodeid)

    return OneWorkerModulesScheduling(config, log)


@pytest.fixture
def ctrl_c_as_a_terminal_sends_it():
    """SIGINT raising KeyboardInterrupt, as in an interactive shell. A shell that starts the tests
    in the background (``pytest &``, a CI step run so) hands them SIGINT ignored, which the Ctrl-C
    tests and the CLI processes they start would inherit: nothing would be interrupted."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
